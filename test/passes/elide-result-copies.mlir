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
