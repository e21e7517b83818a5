// RUN: strata-opt %s --rows-in-place --split-input-file | FileCheck %s

// softmax's row: exponentials stored into a temporary, summed, then scaled into the result.
// The temporary becomes the result's row; the last loop reads and overwrites it in place.
// CHECK-LABEL: func.func private @softmax_row
// CHECK-NOT: memref.alloc() {{.*}} : memref<1x1024xf32>
// CHECK: %[[ROW:.*]] = memref.subview %arg1[%[[R:.*]], 0] [1, 1024] [1, 1]
// CHECK: scf.for %[[I:.*]] = {{.*}} {
// CHECK: vector.transfer_write %{{.*}}, %[[ROW]][%c0, %[[I]]]
// CHECK: scf.for %[[J:.*]] = {{.*}} iter_args
// CHECK: vector.transfer_read %[[ROW]][%c0, %[[J]]]
// CHECK: scf.for %[[K:.*]] = {{.*}} {
// CHECK: %[[V:.*]] = vector.transfer_read %[[ROW]][%c0, %[[K]]]
// CHECK: %[[S:.*]] = arith.mulf %[[V]]
// CHECK: vector.transfer_write %[[S]], %[[ROW]][%c0, %[[K]]]
func.func private @softmax_row(%x: memref<8x1024xf32>, %y: memref<8x1024xf32>, %r: index, %m: vector<1x64xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %pad = ub.poison : f32
  %zero = arith.constant dense<0.0> : vector<1x64xf32>
  %t = memref.alloc() {alignment = 64 : i64} : memref<1x1024xf32>
  scf.for %i = %c0 to %c1024 step %c64 {
    %v = vector.transfer_read %x[%r, %i], %pad {in_bounds = [true, true]} : memref<8x1024xf32>, vector<1x64xf32>
    %d = arith.subf %v, %m : vector<1x64xf32>
    %e = math.exp %d : vector<1x64xf32>
    vector.transfer_write %e, %t[%c0, %i] {in_bounds = [true, true]} : vector<1x64xf32>, memref<1x1024xf32>
  }
  %sum = scf.for %j = %c0 to %c1024 step %c64 iter_args(%acc = %zero) -> (vector<1x64xf32>) {
    %e = vector.transfer_read %t[%c0, %j], %pad {in_bounds = [true, true]} : memref<1x1024xf32>, vector<1x64xf32>
    %a = arith.addf %e, %acc : vector<1x64xf32>
    scf.yield %a : vector<1x64xf32>
  }
  %row = affine.apply affine_map<()[s0] -> (s0)>()[%r]
  scf.for %k = %c0 to %c1024 step %c64 {
    %e = vector.transfer_read %t[%c0, %k], %pad {in_bounds = [true, true]} : memref<1x1024xf32>, vector<1x64xf32>
    %s = arith.mulf %e, %sum : vector<1x64xf32>
    vector.transfer_write %s, %y[%row, %k] {in_bounds = [true, true]} : vector<1x64xf32>, memref<8x1024xf32>
  }
  return
}

// -----

// A row of 1000: a loop over 960 columns and a remainder of 40 after it, in the last stretch
// as well; the result row's index, computed twice, is one offset.
// CHECK-LABEL: func.func private @with_remainder
// CHECK-NOT: memref.alloc
// CHECK: %[[ROW:.*]] = memref.subview %arg1[%{{.*}}, 0] [1, 1000] [1, 1]
// CHECK: scf.for
// CHECK: vector.store %{{.*}}, %[[ROW]][%c0, %{{.*}}] : {{.*}}, vector<64xf32>
// CHECK: }
// CHECK: vector.store %{{.*}}, %[[ROW]][%c0, %c960] : {{.*}}, vector<40xf32>
func.func private @with_remainder(%x: memref<8x1000xf32>, %y: memref<8x1000xf32>, %r: index) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c960 = arith.constant 960 : index
  %t = memref.alloc() : memref<1x1000xf32>
  scf.for %i = %c0 to %c960 step %c64 {
    %v = vector.load %x[%r, %i] : memref<8x1000xf32>, vector<64xf32>
    vector.store %v, %t[%c0, %i] : memref<1x1000xf32>, vector<64xf32>
  }
  %w = vector.load %x[%r, %c960] : memref<8x1000xf32>, vector<40xf32>
  vector.store %w, %t[%c0, %c960] : memref<1x1000xf32>, vector<40xf32>
  %row = arith.addi %r, %c0 : index
  scf.for %k = %c0 to %c960 step %c64 {
    %e = vector.load %t[%c0, %k] : memref<1x1000xf32>, vector<64xf32>
    %s = arith.mulf %e, %e : vector<64xf32>
    vector.store %s, %y[%row, %k] : memref<8x1000xf32>, vector<64xf32>
  }
  %row2 = arith.addi %r, %c0 : index
  %e = vector.load %t[%c0, %c960] : memref<1x1000xf32>, vector<40xf32>
  %s = arith.mulf %e, %e : vector<40xf32>
  vector.store %s, %y[%row2, %c960] : memref<8x1000xf32>, vector<40xf32>
  return
}

// -----

// Left alone: the last loop writes half the row (the view would hand the other half's
// temporaries to the result); the result is read before the last loop; the temporary is read
// after an overwriting store; the store shifts the columns; the temporary has another rank
// than the result (a pool's input split into phases).
// CHECK-LABEL: func.func private @half_row
// CHECK: memref.alloc
// CHECK-LABEL: func.func private @result_read_before
// CHECK: memref.alloc
// CHECK-LABEL: func.func private @read_after_overwrite
// CHECK: memref.alloc
// CHECK-LABEL: func.func private @shifted
// CHECK: memref.alloc
// CHECK-LABEL: func.func private @other_rank
// CHECK: memref.alloc
func.func private @half_row(%x: memref<8x1024xf32>, %y: memref<8x1024xf32>, %r: index) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  %t = memref.alloc() : memref<1x1024xf32>
  scf.for %i = %c0 to %c1024 step %c64 {
    %v = vector.load %x[%r, %i] : memref<8x1024xf32>, vector<64xf32>
    vector.store %v, %t[%c0, %i] : memref<1x1024xf32>, vector<64xf32>
  }
  scf.for %k = %c0 to %c512 step %c64 {
    %e = vector.load %t[%c0, %k] : memref<1x1024xf32>, vector<64xf32>
    vector.store %e, %y[%r, %k] : memref<8x1024xf32>, vector<64xf32>
  }
  return
}
func.func private @result_read_before(%x: memref<8x1024xf32>, %y: memref<8x1024xf32>, %r: index) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %t = memref.alloc() : memref<1x1024xf32>
  scf.for %i = %c0 to %c1024 step %c64 {
    %v = vector.load %x[%r, %i] : memref<8x1024xf32>, vector<64xf32>
    vector.store %v, %t[%c0, %i] : memref<1x1024xf32>, vector<64xf32>
  }
  %old = vector.load %y[%r, %c0] : memref<8x1024xf32>, vector<64xf32>
  scf.for %k = %c0 to %c1024 step %c64 {
    %e = vector.load %t[%c0, %k] : memref<1x1024xf32>, vector<64xf32>
    vector.store %e, %y[%r, %k] : memref<8x1024xf32>, vector<64xf32>
  }
  return %old : vector<64xf32>
}
func.func private @read_after_overwrite(%x: memref<8x1024xf32>, %y: memref<8x1024xf32>, %r: index) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %t = memref.alloc() : memref<1x1024xf32>
  scf.for %i = %c0 to %c1024 step %c64 {
    %v = vector.load %x[%r, %i] : memref<8x1024xf32>, vector<64xf32>
    vector.store %v, %t[%c0, %i] : memref<1x1024xf32>, vector<64xf32>
  }
  scf.for %k = %c0 to %c1024 step %c64 {
    %e = vector.load %t[%c0, %k] : memref<1x1024xf32>, vector<64xf32>
    %s = arith.mulf %e, %e : vector<64xf32>
    vector.store %s, %y[%r, %k] : memref<8x1024xf32>, vector<64xf32>
  }
  %again = vector.load %t[%c0, %c0] : memref<1x1024xf32>, vector<64xf32>
  return %again : vector<64xf32>
}
func.func private @shifted(%x: memref<8x1088xf32>, %y: memref<8x1088xf32>, %r: index) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %t = memref.alloc() : memref<1x1024xf32>
  scf.for %i = %c0 to %c1024 step %c64 {
    %v = vector.load %x[%r, %i] : memref<8x1088xf32>, vector<64xf32>
    vector.store %v, %t[%c0, %i] : memref<1x1024xf32>, vector<64xf32>
  }
  scf.for %k = %c0 to %c1024 step %c64 {
    %e = vector.load %t[%c0, %k] : memref<1x1024xf32>, vector<64xf32>
    %k1 = arith.addi %k, %c64 : index
    vector.store %e, %y[%r, %k1] : memref<8x1088xf32>, vector<64xf32>
  }
  return
}
func.func private @other_rank(%x: memref<1x1x2x2xf32>, %y: memref<1x1x1x1xf32>) {
  %c0 = arith.constant 0 : index
  %t = memref.alloc() : memref<1x1x2x2x1xf32>
  %v = vector.load %x[%c0, %c0, %c0, %c0] : memref<1x1x2x2xf32>, vector<1xf32>
  vector.store %v, %t[%c0, %c0, %c0, %c0, %c0] : memref<1x1x2x2x1xf32>, vector<1xf32>
  %e = vector.load %t[%c0, %c0, %c0, %c0, %c0] : memref<1x1x2x2x1xf32>, vector<1xf32>
  vector.store %e, %y[%c0, %c0, %c0, %c0] : memref<1x1x1x1xf32>, vector<1xf32>
  return
}
