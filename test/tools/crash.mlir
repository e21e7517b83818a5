// An assertion inside MLIR (here: memref-to-llvm on i1 elements) becomes an error line and
// exit code 1; the tool's earlier output is kept.
// RUN: not strata-opt %s --finalize-memref-to-llvm 2>&1 | FileCheck %s
// CHECK: Assertion
// CHECK: error: strata-opt crashed (SIGABRT) inside MLIR; the messages above say where
func.func @load_i1(%m: memref<4xi1>) -> i1 {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<4xi1>
  return %v : i1
}
