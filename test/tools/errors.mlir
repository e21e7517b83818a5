// Bad input gives `FILE:LINE:COL: error:` (or a one-line error), exit code 1, no traceback.
// RUN: printf 'func.func @f() {\n  "graph.bogus"() : () -> ()\n  return\n}\n' > %t.unknown.mlir
// RUN: not strata-opt %t.unknown.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: unknown.mlir:2:3: error: unregistered operation 'graph.bogus' found in dialect ('graph')
// UNKNOWN-NOT: Traceback

// RUN: printf 'func.func @f( {\n' > %t.syntax.mlir
// RUN: not strata-opt %t.syntax.mlir 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: syntax.mlir:1:14: error: expected non-function type
// SYNTAX-NOT: Traceback

// RUN: printf 'func.func @f(%%%%a: tensor<4xf32>) -> tensor<5xf32> {\n  %%%%0 = "graph.relu"(%%%%a) : (tensor<4xf32>) -> tensor<5xf32>\n  return %%%%0 : tensor<5xf32>\n}\n' > %t.verify.mlir
// RUN: not strata-opt %t.verify.mlir 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: verify.mlir:2:8: error: 'graph.relu' op result type tensor<5xf32> does not match the inferred type tensor<4xf32>
// VERIFY-NOT: Traceback

// RUN: not strata-opt %t.missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: {{.*}}missing.mlir: no such file
// MISSING-NOT: Traceback

// RUN: printf '\x00\x01binary' > %t.binary.mlir
// RUN: not strata-opt %t.binary.mlir 2>&1 | FileCheck %s --check-prefix=BINARY
// BINARY: error: {{.*}}binary.mlir: not a text file
// BINARY-NOT: Traceback

// RUN: not strata-opt %s --no-such-pass 2>&1 | FileCheck %s --check-prefix=PASS
// PASS: error: unknown pass or option '--no-such-pass'

// RUN: not strata-opt %s --canonicalize="bogus=1" 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: error: invalid options for pass '--canonicalize': no such option bogus

// The same errors from strata-compile and strata-run.
// RUN: not strata-compile %t.verify.mlir --emit obj -o %t.o 2>&1 | FileCheck %s --check-prefix=VERIFY
// RUN: not strata-run %t.unknown.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not strata-compile %s --target gpu:nothing 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: {{.*}}unknown target 'gpu:nothing'
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
