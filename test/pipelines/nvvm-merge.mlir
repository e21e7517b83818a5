// Kernels that launch the same code are one kernel in the PTX: the two identical chains here
// are one function after dedup-kernels, outlined at each of its two launches, and the merge
// of the outlined modules keeps one (an LSTM's 128 time steps launch a few kernels each).
// RUN: strata-compile %s --target nvvm:sm_90 --emit ptx -o - | FileCheck %s
// RUN: strata-compile %s --target nvvm:sm_90 --emit mlir -o - | FileCheck %s --check-prefix=LAUNCH

// CHECK: .entry
// CHECK-NOT: .entry

// LAUNCH-COUNT-2: gpu.launch_func @kernels::@main_kernel blocks
// LAUNCH-NOT: gpu.launch_func
func.func @main(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %0 = "graph.tanh"(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = "graph.tanh"(%y) : (tensor<1024xf32>) -> tensor<1024xf32>
  return %0, %1 : tensor<1024xf32>, tensor<1024xf32>
}
