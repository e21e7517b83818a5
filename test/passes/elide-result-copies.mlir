// RUN: strata-opt %s --elide-result-copies --split-input-file | FileCheck %s

// The callee writes straight into the caller's out-parameter.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: memref.alloc
// CHECK: call @kernel(%arg0, %arg1)
// CHECK-NOT: memref.copy
// CHECK: return
func.func private @kernel(%x: memref<8xf32>, %out: memref<8xf32>)
func.func @forward(%x: memref<8xf32>, %out: memref<8xf32>) {
  %buf = memref.alloc() : memref<8xf32>
  call @kernel(%x, %buf) : (memref<8xf32>, memref<8xf32>) -> ()
  memref.copy %buf, %out : memref<8xf32> to memref<8xf32>
  return
}

// -----

// Kept: the buffer is written again after the copy, so it is not the out-parameter.
// CHECK-LABEL: func.func @kept
// CHECK: memref.alloc
// CHECK: memref.copy
func.func private @kernel(%x: memref<8xf32>, %out: memref<8xf32>)
func.func @kept(%x: memref<8xf32>, %out: memref<8xf32>) {
  %buf = memref.alloc() : memref<8xf32>
  call @kernel(%x, %buf) : (memref<8xf32>, memref<8xf32>) -> ()
  memref.copy %buf, %out : memref<8xf32> to memref<8xf32>
  call @kernel(%out, %buf) : (memref<8xf32>, memref<8xf32>) -> ()
  return
}

// -----

// Kept: the out-parameter has another use.
// CHECK-LABEL: func.func @read_out
// CHECK: memref.alloc
// CHECK: memref.copy
func.func private @kernel(%x: memref<8xf32>, %out: memref<8xf32>)
func.func @read_out(%x: memref<8xf32>, %out: memref<8xf32>) {
  %buf = memref.alloc() : memref<8xf32>
  call @kernel(%out, %buf) : (memref<8xf32>, memref<8xf32>) -> ()
  memref.copy %buf, %out : memref<8xf32> to memref<8xf32>
  return
}

// -----

// A row computed into a buffer and copied into a view of the out-parameter is computed in
// the view; views of the buffer take the view's (dynamic) offset.
// CHECK-LABEL: func.func @row
// CHECK-NOT: memref.alloc
// CHECK: %[[ROW:.*]] = memref.subview %{{.*}}[%{{.*}}, 0] [1, 64] [1, 1]
// CHECK: memref.subview %[[ROW]][0, 16] [1, 16] [1, 1] : memref<1x64xf32, strided<[64, 1], offset: ?>> to memref<1x16xf32, strided<[64, 1], offset: ?>>
// CHECK-NOT: memref.copy
func.func @row(%in: memref<8x64xf32>, %out: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %cst = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %buf = memref.alloc() : memref<1x64xf32>
    linalg.fill ins(%cst : f32) outs(%buf : memref<1x64xf32>)
    %part = memref.subview %buf[0, 16] [1, 16] [1, 1] : memref<1x64xf32> to memref<1x16xf32, strided<[64, 1], offset: 16>>
    linalg.fill ins(%cst : f32) outs(%part : memref<1x16xf32, strided<[64, 1], offset: 16>>)
    %view = memref.subview %out[%i, 0] [1, 64] [1, 1] : memref<8x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    memref.copy %buf, %view : memref<1x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
  }
  return
}

// -----

// The view may be of a view made outside the loop (a thread's chunk of rows): what it is
// built from exists where the buffer is allocated, and the row is computed in place.
// CHECK-LABEL: func.func @row_of_chunk
// CHECK: %[[CHUNK:.*]] = memref.subview %{{.*}}[4, 0] [4, 64] [1, 1]
// CHECK: scf.for %[[I:.*]] =
// CHECK-NOT: memref.alloc
// CHECK: %[[ROW:.*]] = memref.subview %[[CHUNK]][%[[I]], 0] [1, 64] [1, 1]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[ROW]]
// CHECK-NOT: memref.copy
func.func @row_of_chunk(%out: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 1.0 : f32
  %chunk = memref.subview %out[4, 0] [4, 64] [1, 1] : memref<8x64xf32> to memref<4x64xf32, strided<[64, 1], offset: 256>>
  scf.for %i = %c0 to %c4 step %c1 {
    %buf = memref.alloc() : memref<1x64xf32>
    linalg.fill ins(%cst : f32) outs(%buf : memref<1x64xf32>)
    %view = memref.subview %chunk[%i, 0] [1, 64] [1, 1] : memref<4x64xf32, strided<[64, 1], offset: 256>> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    memref.copy %buf, %view : memref<1x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
  }
  return
}

// -----

// A conv's product [O, OH*OW] copied into its NCHW out-parameter through an expand_shape: the
// product is computed in the out-parameter collapsed back.
// CHECK-LABEL: func.func @reshaped
// CHECK-NOT: memref.alloc
// CHECK: %[[PRODUCT:.*]] = memref.collapse_shape %arg1 {{\[}}[0, 1], [2, 3]] : memref<1x8x4x4xf32> into memref<8x16xf32>
// CHECK: linalg.fill ins(%{{.*}}) outs(%[[PRODUCT]] : memref<8x16xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
func.func @reshaped(%x: f32, %out: memref<1x8x4x4xf32>) {
  %buf = memref.alloc() : memref<8x16xf32>
  linalg.fill ins(%x : f32) outs(%buf : memref<8x16xf32>)
  %nchw = memref.expand_shape %buf [[0, 1], [2, 3]] output_shape [1, 8, 4, 4] : memref<8x16xf32> into memref<1x8x4x4xf32>
  memref.copy %nchw, %out : memref<1x8x4x4xf32> to memref<1x8x4x4xf32>
  return
}

// -----

// Kept: the product is read after the copy.
// CHECK-LABEL: func.func @reshaped_read_after
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @reshaped_read_after(%x: f32, %out: memref<1x8x4x4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %buf = memref.alloc() : memref<8x16xf32>
  linalg.fill ins(%x : f32) outs(%buf : memref<8x16xf32>)
  %nchw = memref.expand_shape %buf [[0, 1], [2, 3]] output_shape [1, 8, 4, 4] : memref<8x16xf32> into memref<1x8x4x4xf32>
  memref.copy %nchw, %out : memref<1x8x4x4xf32> to memref<1x8x4x4xf32>
  %v = memref.load %buf[%c0, %c0] : memref<8x16xf32>
  return %v : f32
}
