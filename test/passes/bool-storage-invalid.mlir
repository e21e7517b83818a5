// RUN: strata-opt %s --bool-storage --verify-diagnostics --split-input-file

// Element accesses other than loads and stores (scalar or vector) must be lowered first.
func.func @linalg_on_bools(%m: memref<4xi1>) {
  %true = arith.constant true
  // expected-error @+1 {{'linalg.fill' on an i1 buffer must be lowered before bool-storage}}
  linalg.fill ins(%true : i1) outs(%m : memref<4xi1>)
  return
}
