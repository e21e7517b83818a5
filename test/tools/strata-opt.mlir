// mlir-opt conventions: pass flags in order, --pass-pipeline, -o, --list-passes, round trip.
// RUN: strata-opt %s --graph-to-linalg --canonicalize --cse | FileCheck %s --check-prefix=FLAGS
// RUN: strata-opt %s --pass-pipeline="builtin.module(graph-to-linalg, func.func(canonicalize), cse)" | FileCheck %s --check-prefix=FLAGS
// RUN: strata-opt %s --graph-to-linalg -o %t.mlir && strata-opt %t.mlir -o %t.again.mlir && diff %t.mlir %t.again.mlir
// RUN: strata-opt --list-passes | FileCheck %s --check-prefix=LIST
// RUN: cat %s | strata-opt - | FileCheck %s --check-prefix=STDIN
// RUN: cat %s | strata-opt --graph-to-linalg --canonicalize --cse | FileCheck %s --check-prefix=FLAGS
// RUN: strata-opt --graph-to-linalg %s --canonicalize --cse | FileCheck %s --check-prefix=FLAGS
// RUN: strata-opt %s --graph-to-linalg --mlir-print-ir-after-all --mlir-print-ir-before-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT

// FLAGS-LABEL: func.func @main
// FLAGS: linalg.generic
// FLAGS: math.exp
// FLAGS-NOT: graph.

// LIST: strata passes:
// LIST: --graph-to-linalg
// LIST: --graph-verify
// LIST: upstream MLIR passes:
// LIST: --canonicalize
// LIST: --one-shot-bufferize

// STDIN: "graph.exp"

// PRINT: IR Dump Before graph-to-linalg
// PRINT: "graph.exp"
// PRINT: IR Dump After graph-to-linalg
// PRINT: math.exp
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "graph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
