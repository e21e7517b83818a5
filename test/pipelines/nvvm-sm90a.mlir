// f16 and bf16 matmuls on sm_90a's tensor cores: TMA copies into swizzled dynamic shared
// memory (PTX's .extern .shared, 1024-byte aligned, not a static variable over the
// mbarriers), mbarrier waits, wgmma, and the epilogue's bias added to C's rows.
// RUN: strata-compile %s --target nvvm:sm_90a --emit ptx -o - | FileCheck %s

// CHECK: .target sm_90a
// CHECK: .extern .shared .align 1024 .b8 __dynamic_shmem__0[];
// CHECK-NOT: .local
// CHECK-LABEL: .entry linear_kernel(
// CHECK: mbarrier.init.shared.b64
// CHECK: prefetch.tensormap
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: wgmma.commit_group.sync.aligned
// CHECK: ld.global.v4.b32
// CHECK: st.global.v4.b32
func.func @linear(%x: tensor<1024x768xf16>, %w: tensor<768x3072xf16>, %b: tensor<3072xf32>) -> tensor<1024x3072xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<1024x768xf16>, tensor<768x3072xf16>) -> tensor<1024x3072xf32>
  %1 = "graph.add"(%0, %b) : (tensor<1024x3072xf32>, tensor<3072xf32>) -> tensor<1024x3072xf32>
  return %1 : tensor<1024x3072xf32>
}

// CHECK-LABEL: .entry bf16_kernel(
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
func.func @bf16(%x: tensor<512x1024xbf16>, %w: tensor<1024x512xbf16>) -> tensor<512x512xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<512x1024xbf16>, tensor<1024x512xbf16>) -> tensor<512x512xf32>
  return %0 : tensor<512x512xf32>
}

// Batches of matmuls (wgmma's TMA tiles are 2-D) take mma.sync.
// CHECK-LABEL: .entry batched_kernel(
// CHECK-NOT: wgmma
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @batched(%q: tensor<12x128x64xf16>, %k: tensor<12x64x128xf16>) -> tensor<12x128x128xf32> {
  %0 = "graph.matmul"(%q, %k) : (tensor<12x128x64xf16>, tensor<12x64x128xf16>) -> tensor<12x128x128xf32>
  return %0 : tensor<12x128x128xf32>
}
