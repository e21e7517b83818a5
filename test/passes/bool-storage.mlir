// RUN: strata-opt %s --bool-storage --split-input-file | FileCheck %s
// RUN: strata-opt %s --bool-storage --finalize-memref-to-llvm --split-input-file | FileCheck %s --check-prefix=LLVM

// Loads read a byte and narrow it; stores widen the bit; the signature changes with the buffer.
// CHECK-LABEL: func.func @load_store
// CHECK-SAME: (%[[M:.*]]: memref<4xi8>, %[[OUT:.*]]: memref<4xi8>)
// CHECK: %[[BYTE:.*]] = memref.load %[[M]][%{{.*}}] : memref<4xi8>
// CHECK: %[[BIT:.*]] = arith.trunci %[[BYTE]] : i8 to i1
// CHECK: %[[NOT:.*]] = arith.xori %[[BIT]], %{{.*}} : i1
// CHECK: %[[WIDE:.*]] = arith.extui %[[NOT]] : i1 to i8
// CHECK: memref.store %[[WIDE]], %[[OUT]][%{{.*}}] : memref<4xi8>
// LLVM-LABEL: func.func @load_store
// LLVM: llvm.load %{{.*}} : !llvm.ptr -> i8
func.func @load_store(%m: memref<4xi1>, %out: memref<4xi1>) {
  %c0 = arith.constant 0 : index
  %true = arith.constant true
  %v = memref.load %m[%c0] : memref<4xi1>
  %n = arith.xori %v, %true : i1
  memref.store %n, %out[%c0] : memref<4xi1>
  return
}

// -----

// Globals keep their values, one byte each; buffers of other types are left alone.
// CHECK-LABEL: memref.global "private" constant @mask : memref<3xi8> = dense<[1, 0, 1]>
// CHECK-LABEL: func.func @global_and_alloc
// CHECK: memref.get_global @mask : memref<3xi8>
// CHECK: memref.alloc() : memref<3xi8>
// CHECK: memref.alloc() : memref<3xf32>
memref.global "private" constant @mask : memref<3xi1> = dense<[true, false, true]>
func.func @global_and_alloc() {
  %g = memref.get_global @mask : memref<3xi1>
  %a = memref.alloc() : memref<3xi1>
  %f = memref.alloc() : memref<3xf32>
  memref.copy %g, %a : memref<3xi1> to memref<3xi1>
  memref.dealloc %a : memref<3xi1>
  memref.dealloc %f : memref<3xf32>
  return
}
