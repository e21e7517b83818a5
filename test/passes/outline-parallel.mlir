// RUN: strata-opt %s --outline-parallel --split-input-file | FileCheck %s

// A top-level parallel loop becomes a task over a range of its iterations and a fork call;
// captured buffers become arguments, constants are cloned into the task.
// CHECK-LABEL: func.func private @__strata_fork_copy_task_0(index, memref<8x16xf32>, memref<8x16xf32>)
// CHECK-LABEL: func.func private @copy_task_0
// CHECK-SAME: (%[[BEGIN:.*]]: index, %[[END:.*]]: index, %[[X:.*]]: memref<8x16xf32>, %[[Y:.*]]: memref<8x16xf32>)
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[I:.*]] = %[[BEGIN]] to %[[END]] step %{{.*}} {
// CHECK:   %[[ROW:.*]] = arith.muli %[[I]], %[[C4]] : index
// CHECK:   memref.subview %[[X]][%[[ROW]], 0] [4, 16] [1, 1]
// CHECK:   memref.subview %[[Y]][%[[ROW]], 0] [4, 16] [1, 1]
// CHECK:   memref.copy
// CHECK-LABEL: func.func private @copy(
// CHECK-SAME: %[[A:.*]]: memref<8x16xf32>, %[[B:.*]]: memref<8x16xf32>)
// CHECK-NOT: scf.forall
// CHECK: %[[N:.*]] = arith.constant 2 : index
// CHECK: call @__strata_fork_copy_task_0(%[[N]], %[[A]], %[[B]])
func.func private @copy(%x: memref<8x16xf32>, %y: memref<8x16xf32>) {
  %c4 = arith.constant 4 : index
  scf.forall (%i) in (2) {
    %row = arith.muli %i, %c4 : index
    %src = memref.subview %x[%row, 0] [4, 16] [1, 1] : memref<8x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
    %dst = memref.subview %y[%row, 0] [4, 16] [1, 1] : memref<8x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
    memref.copy %src, %dst : memref<4x16xf32, strided<[16, 1], offset: ?>> to memref<4x16xf32, strided<[16, 1], offset: ?>>
  }
  return
}

// -----

// A parallel loop in a branch of an `scf.if` runs once per call too: each branch's loop forks.
// CHECK-LABEL: func.func private @__strata_fork_choose_task_1(index, memref<4xf32>)
// CHECK-LABEL: func.func private @__strata_fork_choose_task_0(index, memref<4xf32>)
// CHECK-LABEL: func.func @choose
// CHECK: scf.if %{{.*}} {
// CHECK:   call @__strata_fork_choose_task_0
// CHECK: } else {
// CHECK:   call @__strata_fork_choose_task_1
// CHECK-NOT: scf.forall
func.func @choose(%x: memref<4xf32>, %flag: i1) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  scf.if %flag {
    scf.forall (%i) in (2) {
      memref.store %one, %x[%i] : memref<4xf32>
    }
  } else {
    scf.forall (%i) in (2) {
      memref.store %two, %x[%i] : memref<4xf32>
    }
  }
  return
}

// -----

// Two-dimensional and nested parallel loops stay as they are (lowered serially later).
// CHECK-LABEL: func.func @kept
// CHECK-NOT: __strata_fork
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 2)
// CHECK: scf.for
// CHECK: scf.forall (%{{.*}}) in (2)
func.func @kept(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %v = arith.constant 1.0 : f32
  scf.forall (%i, %j) in (2, 2) {
    memref.store %v, %x[%i] : memref<4xf32>
  }
  scf.for %k = %c0 to %c2 step %c1 {
    scf.forall (%i) in (2) {
      memref.store %v, %x[%i] : memref<4xf32>
    }
  }
  return
}

// -----

// A poison value used in the loop (a transfer's padding, a vector being built) is cloned into
// the task like a constant, not passed as an argument.
// CHECK-LABEL: func.func private @__strata_fork_poison_task_0(index, memref<2x16xbf16>)
// CHECK-LABEL: func.func private @poison_task_0
// CHECK-SAME: (%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<2x16xbf16>)
// CHECK: ub.poison : vector<16xbf16>
// CHECK: vector.insert
func.func private @poison(%y: memref<2x16xbf16>) {
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : bf16
  %p = ub.poison : vector<16xbf16>
  scf.forall (%i) in (2) {
    %row = vector.insert %v, %p [0] : bf16 into vector<16xbf16>
    vector.transfer_write %row, %y[%i, %c0] {in_bounds = [true]} : vector<16xbf16>, memref<2x16xbf16>
  }
  return
}
