// RUN: strata-opt %s --fuse-vector-loops --split-input-file | FileCheck %s

// softmax's exponentials and their sum: one loop; the sum takes the stored vector, and the
// ops between the loops (the sum's initial value) run before it.
// CHECK-LABEL: func.func private @exp_then_sum
// CHECK: %[[INIT:.*]] = vector.transfer_read %[[ACC:.*]][%c0, %c0]
// CHECK: %[[SUM:.*]] = scf.for %[[I:.*]] = %c0 to %c1024 step %c64 iter_args(%[[A:.*]] = %[[INIT]])
// CHECK: %[[E:.*]] = math.exp
// CHECK: vector.transfer_write %[[E]], %arg1[%c0, %[[I]]]
// CHECK-NOT: vector.transfer_read %arg1
// CHECK: %[[S:.*]] = arith.addf %[[E]], %[[A]]
// CHECK: scf.yield %[[S]]
// CHECK-NOT: scf.for
// CHECK: return %[[SUM]]
func.func private @exp_then_sum(%x: memref<8x1024xf32>, %t: memref<1x1024xf32>, %r: index, %m: vector<1x64xf32>) -> vector<1x64xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %pad = ub.poison : f32
  %zero = arith.constant dense<0.0> : vector<1x64xf32>
  scf.for %i = %c0 to %c1024 step %c64 {
    %v = vector.transfer_read %x[%r, %i], %pad {in_bounds = [true, true]} : memref<8x1024xf32>, vector<1x64xf32>
    %d = arith.subf %v, %m : vector<1x64xf32>
    %e = math.exp %d : vector<1x64xf32>
    vector.transfer_write %e, %t[%c0, %i] {in_bounds = [true, true]} : vector<1x64xf32>, memref<1x1024xf32>
  }
  %acc = memref.alloc() : memref<1x64xf32>
  vector.transfer_write %zero, %acc[%c0, %c0] {in_bounds = [true, true]} : vector<1x64xf32>, memref<1x64xf32>
  %init = vector.transfer_read %acc[%c0, %c0], %pad {in_bounds = [true, true]} : memref<1x64xf32>, vector<1x64xf32>
  %sum = scf.for %j = %c0 to %c1024 step %c64 iter_args(%a = %init) -> (vector<1x64xf32>) {
    %e = vector.transfer_read %t[%c0, %j], %pad {in_bounds = [true, true]} : memref<1x1024xf32>, vector<1x64xf32>
    %s = arith.addf %e, %a : vector<1x64xf32>
    scf.yield %s : vector<1x64xf32>
  }
  return %sum : vector<1x64xf32>
}

// -----

// A row of 1000: the first loop's remainder stores past the loop's columns and moves above
// it; a store into the first loop's input (it reads those columns) moves below the second.
// CHECK-LABEL: func.func private @remainder_between
// CHECK: vector.store %{{.*}}, %arg1[%c0, %c960] : memref<1x1000xf32>, vector<40xf32>
// CHECK: %[[SUM:.*]] = scf.for
// CHECK: vector.store %[[V:.*]], %arg1[%c0, %{{.*}}] : memref<1x1000xf32>, vector<64xf32>
// CHECK: arith.addf %[[V]]
// CHECK: }
// CHECK-NEXT: vector.store %{{.*}}, %arg0[%c0, %c0]
// CHECK-NOT: scf.for
func.func private @remainder_between(%x: memref<1x1000xf32>, %t: memref<1x1000xf32>, %z: vector<64xf32>) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c960 = arith.constant 960 : index
  scf.for %i = %c0 to %c960 step %c64 {
    %v = vector.load %x[%c0, %i] : memref<1x1000xf32>, vector<64xf32>
    %e = math.exp %v : vector<64xf32>
    vector.store %e, %t[%c0, %i] : memref<1x1000xf32>, vector<64xf32>
  }
  %w = vector.load %x[%c0, %c960] : memref<1x1000xf32>, vector<40xf32>
  vector.store %w, %t[%c0, %c960] : memref<1x1000xf32>, vector<40xf32>
  vector.store %z, %x[%c0, %c0] : memref<1x1000xf32>, vector<64xf32>
  %sum = scf.for %j = %c0 to %c960 step %c64 iter_args(%a = %z) -> (vector<64xf32>) {
    %e = vector.load %t[%c0, %j] : memref<1x1000xf32>, vector<64xf32>
    %s = arith.addf %e, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  return %sum : vector<64xf32>
}

// -----

// Left alone: other bounds; an op between that needs the first loop's result and that the
// second loop needs; the second starts from the first's result; the second reads the next
// vector (another iteration's); loops that share nothing (no reason to fuse).
// CHECK-LABEL: func.func private @other_bounds
// CHECK-COUNT-2: scf.for
// CHECK-LABEL: func.func private @dependent_between
// CHECK-COUNT-2: scf.for
// CHECK-LABEL: func.func private @starts_from_first
// CHECK-COUNT-2: scf.for
// CHECK-LABEL: func.func private @next_vector
// CHECK-COUNT-2: scf.for
// CHECK-LABEL: func.func private @independent
// CHECK-COUNT-2: scf.for
func.func private @other_bounds(%x: memref<1024xf32>, %t: memref<1024xf32>, %z: vector<64xf32>) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  scf.for %i = %c0 to %c1024 step %c64 {
    %v = vector.load %x[%i] : memref<1024xf32>, vector<64xf32>
    vector.store %v, %t[%i] : memref<1024xf32>, vector<64xf32>
  }
  %sum = scf.for %j = %c0 to %c512 step %c64 iter_args(%a = %z) -> (vector<64xf32>) {
    %e = vector.load %t[%j] : memref<1024xf32>, vector<64xf32>
    %s = arith.addf %e, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  return %sum : vector<64xf32>
}
func.func private @dependent_between(%x: memref<1024xf32>, %t: memref<1024xf32>, %z: vector<64xf32>) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %m = scf.for %i = %c0 to %c1024 step %c64 iter_args(%b = %z) -> (vector<64xf32>) {
    %v = vector.load %x[%i] : memref<1024xf32>, vector<64xf32>
    vector.store %v, %t[%i] : memref<1024xf32>, vector<64xf32>
    %n = arith.maximumf %v, %b : vector<64xf32>
    scf.yield %n : vector<64xf32>
  }
  %init = arith.addf %m, %z : vector<64xf32>
  %sum = scf.for %j = %c0 to %c1024 step %c64 iter_args(%a = %init) -> (vector<64xf32>) {
    %e = vector.load %t[%j] : memref<1024xf32>, vector<64xf32>
    %s = arith.addf %e, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  return %sum : vector<64xf32>
}
func.func private @starts_from_first(%x: memref<1024xf32>, %t: memref<1024xf32>, %z: vector<64xf32>) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %m = scf.for %i = %c0 to %c1024 step %c64 iter_args(%b = %z) -> (vector<64xf32>) {
    %v = vector.load %x[%i] : memref<1024xf32>, vector<64xf32>
    vector.store %v, %t[%i] : memref<1024xf32>, vector<64xf32>
    %n = arith.maximumf %v, %b : vector<64xf32>
    scf.yield %n : vector<64xf32>
  }
  %sum = scf.for %j = %c0 to %c1024 step %c64 iter_args(%a = %m) -> (vector<64xf32>) {
    %e = vector.load %t[%j] : memref<1024xf32>, vector<64xf32>
    %s = arith.addf %e, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  return %sum : vector<64xf32>
}
func.func private @next_vector(%x: memref<1088xf32>, %t: memref<1088xf32>, %z: vector<64xf32>) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  scf.for %i = %c0 to %c1024 step %c64 {
    %v = vector.load %x[%i] : memref<1088xf32>, vector<64xf32>
    vector.store %v, %t[%i] : memref<1088xf32>, vector<64xf32>
  }
  %sum = scf.for %j = %c0 to %c1024 step %c64 iter_args(%a = %z) -> (vector<64xf32>) {
    %next = arith.addi %j, %c64 : index
    %e = vector.load %t[%next] : memref<1088xf32>, vector<64xf32>
    %s = arith.addf %e, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  return %sum : vector<64xf32>
}
func.func private @independent(%x: memref<1024xf32>, %y: memref<1024xf32>, %t: memref<1024xf32>, %z: vector<64xf32>) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  scf.for %i = %c0 to %c1024 step %c64 {
    %v = vector.load %x[%i] : memref<1024xf32>, vector<64xf32>
    vector.store %v, %t[%i] : memref<1024xf32>, vector<64xf32>
  }
  %sum = scf.for %j = %c0 to %c1024 step %c64 iter_args(%a = %z) -> (vector<64xf32>) {
    %e = vector.load %y[%j] : memref<1024xf32>, vector<64xf32>
    %s = arith.addf %e, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  return %sum : vector<64xf32>
}

// -----

// With 16 vector registers (AVX2), a loop computing a transcendental keeps its loop: the
// polynomial's constants fill the registers, and the sum's partial vectors would spill. The
// centring and its squares (plain arithmetic) still fuse.
// CHECK-LABEL: func.func private @exp_then_sum_in_16_registers
// CHECK: scf.for
// CHECK:   math.exp
// CHECK:   vector.transfer_write
// CHECK: scf.for
// CHECK:   vector.transfer_read %arg1
// CHECK:   arith.addf
// CHECK-LABEL: func.func private @centre_then_square_in_16_registers
// CHECK: scf.for
// CHECK:   arith.subf
// CHECK-NOT: vector.transfer_read %arg1
// CHECK:   arith.mulf
// CHECK-NOT: scf.for
// CHECK: return
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", vector_registers = 16 : i64}} {
  func.func private @exp_then_sum_in_16_registers(%x: memref<8x1024xf32>, %t: memref<1x1024xf32>, %r: index, %m: vector<1x32xf32>) -> vector<1x32xf32> {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c1024 = arith.constant 1024 : index
    %pad = ub.poison : f32
    %zero = arith.constant dense<0.0> : vector<1x32xf32>
    scf.for %i = %c0 to %c1024 step %c32 {
      %v = vector.transfer_read %x[%r, %i], %pad {in_bounds = [true, true]} : memref<8x1024xf32>, vector<1x32xf32>
      %d = arith.subf %v, %m : vector<1x32xf32>
      %e = math.exp %d : vector<1x32xf32>
      vector.transfer_write %e, %t[%c0, %i] {in_bounds = [true, true]} : vector<1x32xf32>, memref<1x1024xf32>
    }
    %sum = scf.for %j = %c0 to %c1024 step %c32 iter_args(%a = %zero) -> (vector<1x32xf32>) {
      %e = vector.transfer_read %t[%c0, %j], %pad {in_bounds = [true, true]} : memref<1x1024xf32>, vector<1x32xf32>
      %s = arith.addf %e, %a : vector<1x32xf32>
      scf.yield %s : vector<1x32xf32>
    }
    return %sum : vector<1x32xf32>
  }
  func.func private @centre_then_square_in_16_registers(%x: memref<8x1024xf32>, %t: memref<1x1024xf32>, %r: index, %m: vector<1x32xf32>) -> vector<1x32xf32> {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c1024 = arith.constant 1024 : index
    %pad = ub.poison : f32
    %zero = arith.constant dense<0.0> : vector<1x32xf32>
    scf.for %i = %c0 to %c1024 step %c32 {
      %v = vector.transfer_read %x[%r, %i], %pad {in_bounds = [true, true]} : memref<8x1024xf32>, vector<1x32xf32>
      %d = arith.subf %v, %m : vector<1x32xf32>
      vector.transfer_write %d, %t[%c0, %i] {in_bounds = [true, true]} : vector<1x32xf32>, memref<1x1024xf32>
    }
    %sum = scf.for %j = %c0 to %c1024 step %c32 iter_args(%a = %zero) -> (vector<1x32xf32>) {
      %d = vector.transfer_read %t[%c0, %j], %pad {in_bounds = [true, true]} : memref<1x1024xf32>, vector<1x32xf32>
      %s = arith.mulf %d, %d : vector<1x32xf32>
      %u = arith.addf %s, %a : vector<1x32xf32>
      scf.yield %u : vector<1x32xf32>
    }
    return %sum : vector<1x32xf32>
  }
}
