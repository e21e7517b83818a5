// RUN: strata-opt %s --lower-copies --split-input-file | FileCheck %s

// Copies between contiguous buffers stay memref.copy (memref-to-llvm makes them a memcpy):
// identity layouts, and static views whose elements are one run in memory (a concat's part
// along channels, whole rows of a matrix, at any offset).
// CHECK-LABEL: func.func @contiguous
// CHECK-COUNT-3: memref.copy
// CHECK-NOT: linalg.copy
func.func @contiguous(%a: memref<64x55x55xf32>, %b: memref<2x128x55x55xf32>, %r: memref<8x3072xf32>, %at: index) {
  %part = memref.subview %b[0, 64, 0, 0] [1, 64, 55, 55] [1, 1, 1, 1] : memref<2x128x55x55xf32> to memref<64x55x55xf32, strided<[3025, 55, 1], offset: 193600>>
  memref.copy %a, %part : memref<64x55x55xf32> to memref<64x55x55xf32, strided<[3025, 55, 1], offset: 193600>>
  %rows = memref.subview %r[%at, 0] [2, 3072] [1, 1] : memref<8x3072xf32> to memref<2x3072xf32, strided<[3072, 1], offset: ?>>
  %copy = memref.alloc() : memref<2x3072xf32>
  memref.copy %rows, %copy : memref<2x3072xf32, strided<[3072, 1], offset: ?>> to memref<2x3072xf32>
  %one = memref.subview %b[1, 0, 0, 0] [1, 64, 55, 55] [1, 1, 1, 1] : memref<2x128x55x55xf32> to memref<1x64x55x55xf32, strided<[387200, 3025, 55, 1], offset: 387200>>
  %whole = memref.expand_shape %a [[0, 1], [2], [3]] output_shape [1, 64, 55, 55] : memref<64x55x55xf32> into memref<1x64x55x55xf32>
  memref.copy %whole, %one : memref<1x64x55x55xf32> to memref<1x64x55x55xf32, strided<[387200, 3025, 55, 1], offset: 387200>>
  return
}

// -----

// A view with gaps between its rows (a column block, an interior of a padded image) becomes
// linalg.copy, lowered to loops later: a memcpy cannot copy it, and memref-to-llvm would call
// a runtime library function instead.
// CHECK-LABEL: func.func @strided
// CHECK: linalg.copy {{.*}}ins(%{{.*}} : memref<8x1024xf32, strided<[3072, 1], offset: 1024>>) outs(%arg1 : memref<8x1024xf32>)
// CHECK: linalg.copy {{.*}}ins(%arg2 : memref<64x56x56xf32>) outs(%{{.*}} : memref<64x56x56xf32, strided<[3364, 58, 1], offset: 59>>)
// CHECK-NOT: memref.copy
func.func @strided(%r: memref<8x3072xf32>, %out: memref<8x1024xf32>, %x: memref<64x56x56xf32>, %padded: memref<64x58x58xf32>) {
  %block = memref.subview %r[0, 1024] [8, 1024] [1, 1] : memref<8x3072xf32> to memref<8x1024xf32, strided<[3072, 1], offset: 1024>>
  memref.copy %block, %out : memref<8x1024xf32, strided<[3072, 1], offset: 1024>> to memref<8x1024xf32>
  %inner = memref.subview %padded[0, 1, 1] [64, 56, 56] [1, 1, 1] : memref<64x58x58xf32> to memref<64x56x56xf32, strided<[3364, 58, 1], offset: 59>>
  memref.copy %x, %inner : memref<64x56x56xf32> to memref<64x56x56xf32, strided<[3364, 58, 1], offset: 59>>
  return
}
