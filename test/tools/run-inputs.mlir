// strata-run checks its inputs against the entry's signature.
// RUN: %python -c "import numpy as np; np.save('%t.a.npy', np.ones((2, 3), np.float32)); np.save('%t.b.npy', np.ones(3, np.float32)); np.save('%t.c.npy', np.ones(4, np.float32)); np.save('%t.d.npy', np.ones(3, np.float64))"
// RUN: strata-run %s --input %t.a.npy --input %t.b.npy --output %t.out.npz
// RUN: %python -c "import numpy as np; r = np.load('%t.out.npz'); assert sorted(r) == ['result0', 'result1']; assert (r['result0'] == 2).all(); assert (r['result1'] == 6).all()"

// RUN: not strata-run %s --input %t.a.npy 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: run-inputs.mlir:[[#@LINE+9]]:1: error: 'main' takes 2 input(s), got 1
// RUN: not strata-run %s --input %t.a.npy --input %t.c.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: input 1 of 'main' must have shape [3] (tensor<3xf32>), got [4]
// RUN: not strata-run %s --input %t.a.npy --input %t.d.npy 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: input 1 of 'main' must have dtype float32 (tensor<3xf32>), got float64
// RUN: not strata-run %s --input %t.a.npy --input %s 2>&1 | FileCheck %s --check-prefix=NPY
// NPY: error: {{.*}}run-inputs.mlir: not a .npy array file
// NPY-NOT: Traceback

func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2xf32>) {
  %0 = "graph.add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "graph.reduce_sum"(%0) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2xf32>
}
