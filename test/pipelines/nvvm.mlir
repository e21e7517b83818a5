// Each kernel class of the NVVM pipeline in PTX: 16-byte global accesses, warp shuffles and
// shared memory where a strategy takes them, and no local-memory spills.
// RUN: strata-compile %s --target nvvm:sm_90 --emit ptx -o - | FileCheck %s
// RUN: strata-compile %s --target nvvm:sm_80 --emit ptx -o - | FileCheck %s --check-prefix=SM80

// SM80: .target sm_80
// CHECK: .target sm_90
// CHECK: .extern .shared .align 1024 .b8 __dynamic_shmem__0[];
// CHECK-NOT: .local

// An elementwise chain: one 16-byte vector a thread (4 f32 or 8 bf16).
// CHECK-LABEL: .entry chain_kernel(
// CHECK: ld.global.v4.b32
// CHECK: st.global.v4.b32
// CHECK-LABEL: .entry chain_kernel_0(
// CHECK: ld.global.v4.b32
// CHECK: st.global.v4.b32
func.func @chain(%x: tensor<1024x1024xf32>, %b: tensor<1024xf32>, %h: tensor<512x1024xbf16>) -> (tensor<1024x1024xf32>, tensor<512x1024xbf16>) {
  %0 = "graph.add"(%x, %b) : (tensor<1024x1024xf32>, tensor<1024xf32>) -> tensor<1024x1024xf32>
  %1 = "graph.tanh"(%0) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %2 = "graph.sigmoid"(%h) : (tensor<512x1024xbf16>) -> tensor<512x1024xbf16>
  return %1, %2 : tensor<1024x1024xf32>, tensor<512x1024xbf16>
}

// Softmax of 1000-wide rows, a warp a row: vector loads, butterfly shuffles (max, then sum),
// exponentials on the SFU.
// CHECK-LABEL: .entry softmax_kernel(
// CHECK: ld.global.v4.b32
// CHECK-COUNT-5: shfl.sync.bfly.b32
// CHECK: ex2.approx.ftz.f32
// CHECK-COUNT-5: shfl.sync.bfly.b32
// CHECK: st.global.v4.b32
func.func @softmax(%x: tensor<512x1000xf32>) -> tensor<512x1000xf32> {
  %0 = "graph.softmax"(%x) {axis = -1 : i64} : (tensor<512x1000xf32>) -> tensor<512x1000xf32>
  return %0 : tensor<512x1000xf32>
}

// layer_norm of 8192-wide bf16 rows, a block a row: the warps' sums meet in shared memory.
// CHECK-LABEL: .entry layer_norm_kernel(
// CHECK: .shared .align 16
// CHECK: ld.global.v4.b32
// CHECK: shfl.sync.bfly.b32
// CHECK: bar.sync
// CHECK: st.global.v4.b32
func.func @layer_norm(%x: tensor<64x8192xbf16>, %g: tensor<8192xbf16>, %b: tensor<8192xbf16>) -> tensor<64x8192xbf16> {
  %0 = "graph.layer_norm"(%x, %g, %b) {axis = -1 : i64, epsilon = 1.0e-5 : f32} : (tensor<64x8192xbf16>, tensor<8192xbf16>, tensor<8192xbf16>) -> tensor<64x8192xbf16>
  return %0 : tensor<64x8192xbf16>
}

// A linear layer with its bias and GELU: tiles of A and B in shared memory, FMAs, the
// epilogue applied before one 16-byte store a row of a thread's tile.
// CHECK-LABEL: .entry linear_kernel(
// CHECK: .shared .align 16
// CHECK: ld.global.v4.b32
// CHECK: bar.sync
// CHECK: ld.shared.v4.b32
// CHECK: fma.rn.f32
// CHECK: st.global.v4.b32
func.func @linear(%x: tensor<128x768xf32>, %w: tensor<768x3072xf32>, %b: tensor<3072xf32>) -> tensor<128x3072xf32> {
  %0 = "graph.matmul"(%x, %w) : (tensor<128x768xf32>, tensor<768x3072xf32>) -> tensor<128x3072xf32>
  %1 = "graph.add"(%0, %b) : (tensor<128x3072xf32>, tensor<3072xf32>) -> tensor<128x3072xf32>
  %2 = "graph.gelu"(%1) {approximate = "tanh"} : (tensor<128x3072xf32>) -> tensor<128x3072xf32>
  return %2 : tensor<128x3072xf32>
}

// f16 and bf16 matmuls with f32 accumulators before sm_90a: tensor cores through mma.sync
// (m16n8k16). A and B slices come into padded shared memory by cp.async, stages ahead
// (16-byte chunks, bypassing L1), fragments by ldmatrix (B's transposed); C goes through
// shared memory to the epilogue. Rows that are not whole 16-byte chunks (B's 127 halves in
// the third product) are staged through registers instead.
// CHECK-LABEL: .entry half_kernel(
// CHECK: cp.async.cg.shared.global
// CHECK: cp.async.commit_group
// CHECK: cp.async.wait_group 1
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK: st.global.v4.b32
// CHECK-LABEL: .entry half_kernel_1(
// CHECK: cp.async.cg.shared.global
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-LABEL: .entry half_kernel_2(
// CHECK-NOT: cp.async
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// SM80-LABEL: .entry half_kernel(
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// SM80-LABEL: .entry half_kernel_1(
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
func.func @half(%x: tensor<256x512xf16>, %w: tensor<512x384xf16>, %y: tensor<100x64xbf16>, %v: tensor<64x72xbf16>, %p: tensor<7x1000xf16>, %q: tensor<1000x127xf16>) -> (tensor<256x384xf32>, tensor<100x72xf32>, tensor<7x127xf32>) {
  %0 = "graph.matmul"(%x, %w) : (tensor<256x512xf16>, tensor<512x384xf16>) -> tensor<256x384xf32>
  %1 = "graph.matmul"(%y, %v) : (tensor<100x64xbf16>, tensor<64x72xbf16>) -> tensor<100x72xf32>
  %2 = "graph.matmul"(%p, %q) : (tensor<7x1000xf16>, tensor<1000x127xf16>) -> tensor<7x127xf32>
  return %0, %1, %2 : tensor<256x384xf32>, tensor<100x72xf32>, tensor<7x127xf32>
}
