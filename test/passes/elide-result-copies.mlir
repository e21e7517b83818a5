// RUN: strata-opt %s --elide-result-copies --split-input-file | FileCheck %s
// RUN: strata-opt %s --elide-result-copies="slices=false" --split-input-file | FileCheck %s --check-prefix=NOSLICES

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

// -----

// A concat along channels of one image: each kernel writes its slice of the concat's buffer,
// a view of the same bytes of its own type (the calls keep their signatures). Without
// `slices` (the NVVM pipeline's), the copies stay.
// CHECK-LABEL: func.func @concat
// NOSLICES-LABEL: func.func @concat
// NOSLICES-COUNT-2: memref.copy
// CHECK: %[[BYTES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<384xi8>
// CHECK: %[[A:.*]] = memref.view %[[BYTES]][%{{.*}}][] : memref<384xi8> to memref<1x2x4x4xf32>
// CHECK: call @kernel(%arg0, %[[A]])
// CHECK: %[[B:.*]] = memref.view %[[BYTES]][%c128{{.*}}][] : memref<384xi8> to memref<1x4x4x4xf32>
// CHECK: call @wide(%arg0, %[[B]])
// CHECK: %[[WHOLE:.*]] = memref.view %[[BYTES]][%{{.*}}][] : memref<384xi8> to memref<1x6x4x4xf32>
// CHECK-NOT: memref.copy
// CHECK: call @reduce(%[[WHOLE]], %arg1)
func.func private @kernel(%x: memref<1x2x4x4xf32>, %out: memref<1x2x4x4xf32>)
func.func private @wide(%x: memref<1x2x4x4xf32>, %out: memref<1x4x4x4xf32>)
func.func private @reduce(%x: memref<1x6x4x4xf32>, %out: memref<1x2x4x4xf32>)
func.func @concat(%x: memref<1x2x4x4xf32>, %out: memref<1x2x4x4xf32>) {
  %a = memref.alloc() : memref<1x2x4x4xf32>
  call @kernel(%x, %a) : (memref<1x2x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  %b = memref.alloc() : memref<1x4x4x4xf32>
  call @wide(%x, %b) : (memref<1x2x4x4xf32>, memref<1x4x4x4xf32>) -> ()
  %joined = memref.alloc() {alignment = 64 : i64} : memref<1x6x4x4xf32>
  %first = memref.subview %joined[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x6x4x4xf32> to memref<1x2x4x4xf32, strided<[96, 16, 4, 1]>>
  memref.copy %a, %first : memref<1x2x4x4xf32> to memref<1x2x4x4xf32, strided<[96, 16, 4, 1]>>
  %second = memref.subview %joined[0, 2, 0, 0] [1, 4, 4, 4] [1, 1, 1, 1] : memref<1x6x4x4xf32> to memref<1x4x4x4xf32, strided<[96, 16, 4, 1], offset: 32>>
  memref.copy %b, %second : memref<1x4x4x4xf32> to memref<1x4x4x4xf32, strided<[96, 16, 4, 1], offset: 32>>
  call @reduce(%joined, %out) : (memref<1x6x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  return
}

// -----

// A concat of a concat (DenseNet's blocks): the first concat's bytes move into the second's.
// CHECK-LABEL: func.func @concat_of_concat
// CHECK: %[[BYTES:.*]] = memref.alloc() : memref<384xi8>
// CHECK: %[[INNER:.*]] = memref.view %[[BYTES]][%{{.*}}][] : memref<384xi8> to memref<256xi8>
// CHECK: memref.view %[[INNER]][%{{.*}}][] : memref<256xi8> to memref<1x2x4x4xf32>
// CHECK: memref.view %[[INNER]][%c128{{.*}}][] : memref<256xi8> to memref<1x2x4x4xf32>
// CHECK: memref.view %[[BYTES]][%c256{{.*}}][] : memref<384xi8> to memref<1x2x4x4xf32>
// CHECK-NOT: memref.copy
// CHECK: call @reduce
func.func private @kernel(%x: memref<1x2x4x4xf32>, %out: memref<1x2x4x4xf32>)
func.func private @reduce(%x: memref<1x6x4x4xf32>, %out: memref<1x2x4x4xf32>)
func.func @concat_of_concat(%x: memref<1x2x4x4xf32>, %out: memref<1x2x4x4xf32>) {
  %a = memref.alloc() : memref<1x2x4x4xf32>
  call @kernel(%x, %a) : (memref<1x2x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  %b = memref.alloc() : memref<1x2x4x4xf32>
  call @kernel(%x, %b) : (memref<1x2x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  %ab = memref.alloc() : memref<1x4x4x4xf32>
  %ab0 = memref.subview %ab[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x4x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>>
  memref.copy %a, %ab0 : memref<1x2x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>>
  %ab1 = memref.subview %ab[0, 2, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x4x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1], offset: 32>>
  memref.copy %b, %ab1 : memref<1x2x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1], offset: 32>>
  %c = memref.alloc() : memref<1x2x4x4xf32>
  call @kernel(%x, %c) : (memref<1x2x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  %abc = memref.alloc() : memref<1x6x4x4xf32>
  %abc0 = memref.subview %abc[0, 0, 0, 0] [1, 4, 4, 4] [1, 1, 1, 1] : memref<1x6x4x4xf32> to memref<1x4x4x4xf32, strided<[96, 16, 4, 1]>>
  memref.copy %ab, %abc0 : memref<1x4x4x4xf32> to memref<1x4x4x4xf32, strided<[96, 16, 4, 1]>>
  %abc1 = memref.subview %abc[0, 4, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x6x4x4xf32> to memref<1x2x4x4xf32, strided<[96, 16, 4, 1], offset: 64>>
  memref.copy %c, %abc1 : memref<1x2x4x4xf32> to memref<1x2x4x4xf32, strided<[96, 16, 4, 1], offset: 64>>
  call @reduce(%abc, %out) : (memref<1x6x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  return
}

// -----

// Kept: the concat's buffer is read between the kernel that writes the slice's buffer and
// the copy (the slice still holds what an earlier concat put there).
// CHECK-LABEL: func.func @slice_read_before_copy
// CHECK: call @kernel(%arg0, %[[A:.*]]) :
// CHECK: call @reduce
// CHECK: memref.copy %[[A]]
func.func private @kernel(%x: memref<1x2x4x4xf32>, %out: memref<1x2x4x4xf32>)
func.func private @reduce(%x: memref<1x4x4x4xf32>, %out: memref<1x2x4x4xf32>)
func.func @slice_read_before_copy(%x: memref<1x2x4x4xf32>, %out: memref<1x2x4x4xf32>) {
  %whole = memref.alloc() : memref<1x4x4x4xf32>
  %first = memref.subview %whole[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x4x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>>
  memref.copy %x, %first : memref<1x2x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>>
  %a = memref.alloc() : memref<1x2x4x4xf32>
  call @kernel(%x, %a) : (memref<1x2x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  call @reduce(%whole, %out) : (memref<1x4x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  memref.copy %a, %first : memref<1x2x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>>
  call @reduce(%whole, %out) : (memref<1x4x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  return
}

// -----

// Kept: the buffer is read after the copy, when the concat's slice may have changed.
// CHECK-LABEL: func.func @read_after_copy
// CHECK: %[[A:.*]] = memref.alloc() : memref<1x2x4x4xf32>
// CHECK: memref.copy %[[A]]
func.func private @kernel(%x: memref<1x2x4x4xf32>, %out: memref<1x2x4x4xf32>)
func.func private @reduce(%x: memref<1x4x4x4xf32>, %out: memref<1x2x4x4xf32>)
func.func @read_after_copy(%x: memref<1x2x4x4xf32>, %out: memref<1x2x4x4xf32>) {
  %a = memref.alloc() : memref<1x2x4x4xf32>
  call @kernel(%x, %a) : (memref<1x2x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  %whole = memref.alloc() : memref<1x4x4x4xf32>
  %first = memref.subview %whole[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x4x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>>
  memref.copy %a, %first : memref<1x2x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>>
  call @reduce(%whole, %out) : (memref<1x4x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  call @kernel(%a, %out) : (memref<1x2x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  return
}

// -----

// A contiguous slice of a buffer (one group of a grouped conv's channels) copied whole into a
// buffer that the next kernel only reads is that slice: the buffer becomes a view of the
// larger buffer's bytes at the slice's offset, and the copy goes.
// CHECK-LABEL: func.func @group_slices
// CHECK: %[[BYTES:.*]] = memref.alloc() : memref<256xi8>
// CHECK: %[[WHOLE:.*]] = memref.view %[[BYTES]][%c0{{.*}}][] : memref<256xi8> to memref<1x4x4x4xf32>
// CHECK: call @produce(%arg0, %[[WHOLE]])
// CHECK: %[[FIRST:.*]] = memref.view %[[BYTES]][%c0{{.*}}][] : memref<256xi8> to memref<1x2x4x4xf32>
// CHECK: call @consume(%[[FIRST]], %arg1)
// CHECK: %[[SECOND:.*]] = memref.view %[[BYTES]][%c128{{.*}}][] : memref<256xi8> to memref<1x2x4x4xf32>
// CHECK: call @consume(%[[SECOND]], %arg2)
// CHECK-NOT: memref.copy
// CHECK: return
func.func private @produce(%x: memref<1x4x4x4xf32>, %out: memref<1x4x4x4xf32>) {
  memref.copy %x, %out : memref<1x4x4x4xf32> to memref<1x4x4x4xf32>
  return
}
func.func private @consume(%x: memref<1x2x4x4xf32>, %out: memref<1x2x4x4xf32>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %x[%c0, %c0, %c0, %c0], %pad : memref<1x2x4x4xf32>, vector<4xf32>
  vector.transfer_write %v, %out[%c0, %c0, %c0, %c0] : vector<4xf32>, memref<1x2x4x4xf32>
  return
}
func.func @group_slices(%x: memref<1x4x4x4xf32>, %out: memref<1x2x4x4xf32>, %out2: memref<1x2x4x4xf32>) {
  %whole = memref.alloc() : memref<1x4x4x4xf32>
  call @produce(%x, %whole) : (memref<1x4x4x4xf32>, memref<1x4x4x4xf32>) -> ()
  %s0 = memref.subview %whole[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x4x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>>
  %a = memref.alloc() : memref<1x2x4x4xf32>
  memref.copy %s0, %a : memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>> to memref<1x2x4x4xf32>
  call @consume(%a, %out) : (memref<1x2x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  %s1 = memref.subview %whole[0, 2, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x4x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1], offset: 32>>
  %b = memref.alloc() : memref<1x2x4x4xf32>
  memref.copy %s1, %b : memref<1x2x4x4xf32, strided<[64, 16, 4, 1], offset: 32>> to memref<1x2x4x4xf32>
  call @consume(%b, %out2) : (memref<1x2x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  return
}

// -----

// Kept: a kernel that writes the copied buffer (its input) would write the slice; the
// slice is written again (by @produce) before the copy's last reader; the last reader
// writes the slice itself (through the larger buffer) while it reads the copy.
// CHECK-LABEL: func.func @slices_written
// CHECK: %[[A:.*]] = memref.alloc() : memref<1x2x4x4xf32>
// CHECK: memref.copy %{{.*}}, %[[A]]
// CHECK: call @scribble(%[[A]], %arg1)
// CHECK: %[[B:.*]] = memref.alloc() : memref<1x2x4x4xf32>
// CHECK: memref.copy %{{.*}}, %[[B]]
// CHECK: call @produce
// CHECK: call @consume(%[[B]], %arg2)
// CHECK: %[[C:.*]] = memref.alloc() : memref<1x2x4x4xf32>
// CHECK: memref.copy %{{.*}}, %[[C]]
// CHECK: call @consume_into(%[[C]], %{{.*}})
func.func private @produce(%x: memref<1x4x4x4xf32>, %out: memref<1x4x4x4xf32>) {
  memref.copy %x, %out : memref<1x4x4x4xf32> to memref<1x4x4x4xf32>
  return
}
func.func private @consume(%x: memref<1x2x4x4xf32>, %out: memref<1x2x4x4xf32>) {
  memref.copy %x, %out : memref<1x2x4x4xf32> to memref<1x2x4x4xf32>
  return
}
func.func private @scribble(%x: memref<1x2x4x4xf32>, %out: memref<1x2x4x4xf32>) {
  memref.copy %out, %x : memref<1x2x4x4xf32> to memref<1x2x4x4xf32>
  return
}
func.func private @consume_into(%x: memref<1x2x4x4xf32>, %out: memref<1x4x4x4xf32>) {
  %first = memref.subview %out[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x4x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>>
  memref.copy %x, %first : memref<1x2x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>>
  return
}
func.func @slices_written(%x: memref<1x4x4x4xf32>, %out: memref<1x2x4x4xf32>, %out2: memref<1x2x4x4xf32>) {
  %whole = memref.alloc() : memref<1x4x4x4xf32>
  call @produce(%x, %whole) : (memref<1x4x4x4xf32>, memref<1x4x4x4xf32>) -> ()
  %s0 = memref.subview %whole[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x4x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>>
  %a = memref.alloc() : memref<1x2x4x4xf32>
  memref.copy %s0, %a : memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>> to memref<1x2x4x4xf32>
  call @scribble(%a, %out) : (memref<1x2x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  %s1 = memref.subview %whole[0, 2, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x4x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1], offset: 32>>
  %b = memref.alloc() : memref<1x2x4x4xf32>
  memref.copy %s1, %b : memref<1x2x4x4xf32, strided<[64, 16, 4, 1], offset: 32>> to memref<1x2x4x4xf32>
  call @produce(%x, %whole) : (memref<1x4x4x4xf32>, memref<1x4x4x4xf32>) -> ()
  call @consume(%b, %out2) : (memref<1x2x4x4xf32>, memref<1x2x4x4xf32>) -> ()
  %s2 = memref.subview %whole[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x4x4x4xf32> to memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>>
  %c = memref.alloc() : memref<1x2x4x4xf32>
  memref.copy %s2, %c : memref<1x2x4x4xf32, strided<[64, 16, 4, 1]>> to memref<1x2x4x4xf32>
  call @consume_into(%c, %whole) : (memref<1x2x4x4xf32>, memref<1x4x4x4xf32>) -> ()
  return
}

// -----

// Kept: a callee that passes the buffer on to itself is not known to only read it.
// CHECK-LABEL: func.func @recursive_reader
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %{{.*}}, %[[A]]
// CHECK: call @loop(%[[A]], %arg1)
func.func private @loop(%x: memref<4xf32>, %out: memref<4xf32>) {
  call @loop(%x, %out) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}
func.func @recursive_reader(%x: memref<2x4xf32>, %out: memref<4xf32>) {
  %whole = memref.alloc() : memref<2x4xf32>
  memref.copy %x, %whole : memref<2x4xf32> to memref<2x4xf32>
  %t = memref.subview %whole[1, 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<4xf32, strided<[1], offset: 4>>
  %a = memref.alloc() : memref<4xf32>
  memref.copy %t, %a : memref<4xf32, strided<[1], offset: 4>> to memref<4xf32>
  call @loop(%a, %out) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}
