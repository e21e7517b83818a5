// f32 matmuls on the tensor cores where the target opts in (`+tf32`): operands rounded to
// TF32 as they leave shared memory (cvt.rna), m16n8k8 mma.sync steps; A and B slices by
// cp.async into padded shared memory, stages ahead.
// RUN: strata-compile %s --target nvvm:sm_80+tf32 --emit ptx -o - | FileCheck %s
// RUN: strata-compile %s --target nvvm:sm_80 --emit ptx -o - | FileCheck %s --check-prefix=FMA

// CHECK: .target sm_80
// CHECK-NOT: .local
// CHECK-LABEL: .entry linear_kernel(
// CHECK: cp.async.cg.shared.global
// CHECK: cp.async.wait_group
// CHECK: ld.shared.b32
// CHECK: cvt.rna.tf32.f32
// CHECK: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK: st.global.v4.b32
// FMA-LABEL: .entry linear_kernel(
// FMA-NOT: mma.sync
// FMA: fma.rn.f32
func.func @linear(%x: tensor<512x768xf32>, %w: tensor<768x3072xf32>, %b: tensor<3072xf32>) -> tensor<512x3072xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<512x768xf32>, tensor<768x3072xf32>) -> tensor<512x3072xf32>
  %1 = "graph.add"(%0, %b) : (tensor<512x3072xf32>, tensor<3072xf32>) -> tensor<512x3072xf32>
  return %1 : tensor<512x3072xf32>
}
