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

// -----

// Vector loads and stores of i1 lanes move bytes: loads narrow the vector after reading it,
// stores widen it first; a transfer_read's padding becomes a byte too.
// CHECK-LABEL: func.func @vectors
// CHECK-SAME: (%[[A:.*]]: memref<64xi8>, %[[B:.*]]: memref<64xi8>)
// CHECK: %[[BYTES:.*]] = vector.load %[[A]][%{{.*}}] : memref<64xi8>, vector<32xi8>
// CHECK: %[[BITS:.*]] = arith.trunci %[[BYTES]] : vector<32xi8> to vector<32xi1>
// CHECK: %[[PAD:.*]] = arith.extui %{{.*}} : i1 to i8
// CHECK: %[[READ:.*]] = vector.transfer_read %[[A]][%{{.*}}], %[[PAD]] : memref<64xi8>, vector<32xi8>
// CHECK: %[[READ_BITS:.*]] = arith.trunci %[[READ]] : vector<32xi8> to vector<32xi1>
// CHECK: %[[AND:.*]] = arith.andi %[[BITS]], %[[READ_BITS]] : vector<32xi1>
// CHECK: %[[WIDE:.*]] = arith.extui %[[AND]] : vector<32xi1> to vector<32xi8>
// CHECK: vector.store %[[WIDE]], %[[B]][%{{.*}}] : memref<64xi8>, vector<32xi8>
// CHECK: %[[WIDE2:.*]] = arith.extui %[[AND]] : vector<32xi1> to vector<32xi8>
// CHECK: vector.transfer_write %[[WIDE2]], %[[B]][%{{.*}}] : vector<32xi8>, memref<64xi8>
func.func @vectors(%a: memref<64xi1>, %b: memref<64xi1>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %false = arith.constant false
  %v = vector.load %a[%c0] : memref<64xi1>, vector<32xi1>
  %w = vector.transfer_read %a[%c32], %false : memref<64xi1>, vector<32xi1>
  %x = arith.andi %v, %w : vector<32xi1>
  vector.store %x, %b[%c0] : memref<64xi1>, vector<32xi1>
  vector.transfer_write %x, %b[%c32] : vector<32xi1>, memref<64xi1>
  return
}
