// RUN: strata-opt %s --workspace-buffers --split-input-file | FileCheck %s

// Buffers whose live ranges overlap get disjoint 64-byte-aligned ranges; a buffer allocated
// after another one's last use reuses its bytes. The public function takes the workspace last
// and records its size.
// CHECK-LABEL: func.func @lifetimes
// CHECK-SAME: (%[[X:.*]]: memref<16xf32>, %[[WS:.*]]: memref<128xi8>) attributes {tile.workspace = 128 : i64}
// CHECK-NOT: memref.alloc
// CHECK-DAG: %[[A:.*]] = memref.view %[[WS]][%{{.*}}][] : memref<128xi8> to memref<16xf32>
// CHECK-DAG: %[[B:.*]] = memref.view %[[WS]][%{{.*}}][] : memref<128xi8> to memref<4x4xf32>
// CHECK: memref.copy %[[X]], %[[A]]
// CHECK: memref.copy %[[A]], %[[X]]
// CHECK: %[[C:.*]] = memref.view %[[WS]][%c0{{.*}}][] : memref<128xi8> to memref<8xf32>
// CHECK: memref.copy %[[C]], %[[C]]
func.func @lifetimes(%x: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  %b = memref.alloc() : memref<4x4xf32>
  memref.copy %x, %a : memref<16xf32> to memref<16xf32>
  %flat = memref.collapse_shape %b [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  memref.copy %flat, %flat : memref<16xf32> to memref<16xf32>
  memref.copy %a, %x : memref<16xf32> to memref<16xf32>
  %c = memref.alloc() : memref<8xf32>
  memref.copy %c, %c : memref<8xf32> to memref<8xf32>
  return
}

// -----

// A callee's workspace is a range of its caller's, passed as a view at the call.
// CHECK-LABEL: func.func private @kernel
// CHECK-SAME: (%[[OUT:.*]]: memref<4xf32>, %[[WS:.*]]: memref<256xi8>)
// CHECK: memref.view %[[WS]]
// CHECK-NOT: tile.workspace
// CHECK-LABEL: func.func @caller
// CHECK-SAME: %{{.*}}: memref<320xi8>) attributes {tile.workspace = 320 : i64}
// CHECK: %[[T:.*]] = memref.view %{{.*}} : memref<320xi8> to memref<4xf32>
// CHECK: %[[SUB:.*]] = memref.view %{{.*}} : memref<320xi8> to memref<256xi8>
// CHECK: call @kernel(%[[T]], %[[SUB]]) : (memref<4xf32>, memref<256xi8>) -> ()
func.func private @kernel(%out: memref<4xf32>) {
  %scratch = memref.alloc() : memref<64xf32>
  %head = memref.subview %scratch[0] [4] [1] : memref<64xf32> to memref<4xf32, strided<[1]>>
  memref.copy %head, %out : memref<4xf32, strided<[1]>> to memref<4xf32>
  return
}
func.func @caller(%out: memref<4xf32>) {
  %t = memref.alloc() : memref<4xf32>
  call @kernel(%t) : (memref<4xf32>) -> ()
  memref.copy %t, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Buffers that leave the function, have dynamic sizes or are allocated deeper in parallel
// iterations than the top of a task stay allocations; a function without temporaries keeps
// its signature.
// CHECK-LABEL: func.func @kept
// CHECK-SAME: (%{{.*}}: index) -> memref<4xf32> {
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: memref.alloc() : memref<8xf32>
func.func @kept(%n: index) -> memref<4xf32> {
  %r = memref.alloc() : memref<4xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  memref.copy %d, %d : memref<?xf32> to memref<?xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.forall (%i) in (2) {
    scf.for %j = %c0 to %n step %c1 {
      %p = memref.alloc() : memref<8xf32>
      memref.copy %p, %p : memref<8xf32> to memref<8xf32>
    }
  }
  return %r : memref<4xf32>
}

// -----

// A static buffer at the top of a parallel task (a thread's own block of packed B) gets one
// 64-byte-aligned slot of the workspace per iteration: 3 x 64 bytes, the slot at i * 64.
// CHECK-LABEL: func.func @per_task
// CHECK-SAME: (%[[WS:.*]]: memref<192xi8>) attributes {tile.workspace = 192 : i64}
// CHECK: scf.forall (%[[I:.*]]) in (3) {
// CHECK: %[[STRIDE:.*]] = arith.muli %[[I]], %c64
// CHECK: %[[AT:.*]] = arith.addi %c0{{.*}}, %[[STRIDE]]
// CHECK: %[[SLOT:.*]] = memref.view %[[WS]][%[[AT]]][] : memref<192xi8> to memref<10xf32>
// CHECK: memref.copy %[[SLOT]], %[[SLOT]]
// CHECK-NOT: memref.alloc
func.func @per_task() {
  scf.forall (%i) in (3) {
    %p = memref.alloc() : memref<10xf32>
    memref.copy %p, %p : memref<10xf32> to memref<10xf32>
    memref.dealloc %p : memref<10xf32>
  }
  return
}
