// RUN: strata-opt %s --streaming-stores --split-input-file | FileCheck %s

// A kernel whose buffers take half the last-level cache or more (2 x 512 KiB of a 1 MiB L3
// here) gets a streaming copy of its body, run when the output's base is 16-byte aligned:
// non-temporal stores, a fence at the end of each parallel task and of the kernel.
// CHECK-LABEL: func.func private @negate
// CHECK-SAME: (%[[X:.*]]: memref<131072xf32>, %[[Y:.*]]: memref<131072xf32>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[MASK:.*]] = arith.constant 15 : index
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK: %[[LOW:.*]] = arith.andi %[[BASE]], %[[MASK]]
// CHECK: %[[ALIGNED:.*]] = arith.cmpi eq, %[[LOW]], %[[ZERO]]
// CHECK: scf.if %[[ALIGNED]] {
// CHECK:   scf.forall
// CHECK:     scf.for
// CHECK:       vector.store %{{.*}}, %[[Y]][%{{.*}}] {alignment = 16 : i64, nontemporal = true}
// CHECK:     }
// CHECK-NEXT: llvm.fence seq_cst
// CHECK:   }
// CHECK-NEXT: llvm.fence seq_cst
// CHECK: } else {
// CHECK:   scf.forall
// CHECK:       vector.store %{{.*}}, %[[Y]][%{{.*}}] : memref<131072xf32>, vector<32xf32>
// CHECK-NOT: llvm.fence
// CHECK: return
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", l3_bytes = 1048576 : i64}} {
  func.func private @negate(%x: memref<131072xf32>, %y: memref<131072xf32>) attributes {tile.kernel = "elementwise"} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c65536 = arith.constant 65536 : index
    scf.forall (%t) in (2) {
      scf.for %i = %c0 to %c65536 step %c32 {
        %at = affine.apply affine_map<(d0)[s0] -> (d0 * 65536 + s0)>(%t)[%i]
        %v = vector.load %x[%at] : memref<131072xf32>, vector<32xf32>
        %n = arith.negf %v : vector<32xf32>
        vector.store %n, %y[%at] : memref<131072xf32>, vector<32xf32>
      }
    }
    return
  }
}

// -----

// Rows of 1000 f32 start at multiples of 16 bytes: an in-bounds transfer_write of a
// vector<1x32xf32> becomes a flat streaming store. Without a parallel loop, the kernel's
// streaming branch alone ends with the fence.
// CHECK-LABEL: func.func private @add_rows
// CHECK: scf.if
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK:       %[[FLAT:.*]] = vector.shape_cast %{{.*}} : vector<1x32xf32> to vector<32xf32>
// CHECK:       vector.store %[[FLAT]], %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 16 : i64, nontemporal = true} : memref<256x1000xf32>, vector<32xf32>
// CHECK:   llvm.fence seq_cst
// CHECK: } else {
// CHECK:   vector.transfer_write
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", l3_bytes = 1048576 : i64}} {
  func.func private @add_rows(%a: memref<256x1000xf32>, %b: memref<256x1000xf32>) attributes {tile.kernel = "elementwise"} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c256 = arith.constant 256 : index
    %c992 = arith.constant 992 : index
    %pad = ub.poison : f32
    scf.for %r = %c0 to %c256 step %c1 {
      scf.for %j = %c0 to %c992 step %c32 {
        %v = vector.transfer_read %a[%r, %j], %pad {in_bounds = [true, true]} : memref<256x1000xf32>, vector<1x32xf32>
        %w = arith.addf %v, %v : vector<1x32xf32>
        vector.transfer_write %w, %b[%r, %j] {in_bounds = [true, true]} : vector<1x32xf32>, memref<256x1000xf32>
      }
    }
    return
  }
}

// -----

// On a target with 512-bit vectors the streaming copy has a copy of its own, for outputs
// whose base is 64-byte aligned (strata's result buffers): whole-vector streaming stores, no
// 16-byte pieces. Rows of 1000 f32 start at multiples of 32 bytes: 32 is the widest there.
// CHECK-LABEL: func.func private @negate_wide
// CHECK-SAME: (%{{.*}}: memref<131072xf32>, %[[Y:.*]]: memref<131072xf32>)
// CHECK-DAG: %[[MASK16:.*]] = arith.constant 15 : index
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK: arith.andi %[[BASE]], %[[MASK16]]
// CHECK: scf.if %{{.*}} {
// CHECK-DAG: %[[MASK64:.*]] = arith.constant 63 : index
// CHECK: %[[BASE64:.*]] = memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK: arith.andi %[[BASE64]], %[[MASK64]]
// CHECK:   scf.if %{{.*}} {
// CHECK:     scf.for
// CHECK:       vector.store %{{.*}}, %[[Y]][%{{.*}}] {alignment = 64 : i64, nontemporal = true}
// CHECK:     llvm.fence seq_cst
// CHECK:   } else {
// CHECK:     scf.for
// CHECK:       vector.store %{{.*}}, %[[Y]][%{{.*}}] {alignment = 16 : i64, nontemporal = true}
// CHECK:     llvm.fence seq_cst
// CHECK:   }
// CHECK: } else {
// CHECK:   scf.for
// CHECK:     vector.store %{{.*}}, %[[Y]][%{{.*}}] : memref<131072xf32>, vector<16xf32>
// CHECK-NOT: llvm.fence
// CHECK-LABEL: func.func private @rows_of_1000
// CHECK: scf.if
// CHECK:   scf.if
// CHECK:       vector.store %{{.*}} {alignment = 32 : i64, nontemporal = true}
// CHECK:   } else {
// CHECK:       vector.store %{{.*}} {alignment = 16 : i64, nontemporal = true}
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", vector_bits = 512 : i64, l3_bytes = 1048576 : i64}} {
  func.func private @negate_wide(%x: memref<131072xf32>, %y: memref<131072xf32>) attributes {tile.kernel = "elementwise"} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c131072 = arith.constant 131072 : index
    scf.for %i = %c0 to %c131072 step %c16 {
      %v = vector.load %x[%i] : memref<131072xf32>, vector<16xf32>
      %n = arith.negf %v : vector<16xf32>
      vector.store %n, %y[%i] : memref<131072xf32>, vector<16xf32>
    }
    return
  }
  func.func private @rows_of_1000(%a: memref<256x1000xf32>, %b: memref<256x1000xf32>) attributes {tile.kernel = "elementwise"} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c256 = arith.constant 256 : index
    %c992 = arith.constant 992 : index
    scf.for %r = %c0 to %c256 step %c1 {
      scf.for %j = %c0 to %c992 step %c16 {
        %v = vector.load %a[%r, %j] : memref<256x1000xf32>, vector<16xf32>
        vector.store %v, %b[%r, %j] : memref<256x1000xf32>, vector<16xf32>
      }
    }
    return
  }
}

// -----

// Left alone: buffers that fit in half the cache; an output the kernel also reads (a store
// would have to keep its line); rows of 1001 f32, whose starts are not all 16-byte aligned;
// a store that may run out of bounds; a contraction's epilogue (its output is written last
// and stays in the cache for the next kernel).
// CHECK-LABEL: func.func private @small
// CHECK-NOT: nontemporal
// CHECK-LABEL: func.func private @accumulate
// CHECK-NOT: nontemporal
// CHECK-LABEL: func.func private @odd_rows
// CHECK-NOT: nontemporal
// CHECK-LABEL: func.func private @masked
// CHECK-NOT: nontemporal
// CHECK-LABEL: func.func private @two_rows
// CHECK-NOT: nontemporal
// CHECK-LABEL: func.func private @epilogue
// CHECK-NOT: nontemporal
// CHECK: return
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", l3_bytes = 1048576 : i64}} {
  func.func private @small(%x: memref<1024xf32>, %y: memref<1024xf32>) attributes {tile.kernel = "elementwise"} {
    %c0 = arith.constant 0 : index
    %v = vector.load %x[%c0] : memref<1024xf32>, vector<32xf32>
    vector.store %v, %y[%c0] : memref<1024xf32>, vector<32xf32>
    return
  }
  func.func private @accumulate(%x: memref<131072xf32>, %y: memref<131072xf32>) attributes {tile.kernel = "elementwise"} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c131072 = arith.constant 131072 : index
    scf.for %i = %c0 to %c131072 step %c32 {
      %v = vector.load %x[%i] : memref<131072xf32>, vector<32xf32>
      %w = vector.load %y[%i] : memref<131072xf32>, vector<32xf32>
      %s = arith.addf %v, %w : vector<32xf32>
      vector.store %s, %y[%i] : memref<131072xf32>, vector<32xf32>
    }
    return
  }
  func.func private @odd_rows(%a: memref<256x1001xf32>, %b: memref<256x1001xf32>) attributes {tile.kernel = "elementwise"} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %pad = ub.poison : f32
    scf.for %r = %c0 to %c256 step %c1 {
      %v = vector.transfer_read %a[%r, %c0], %pad {in_bounds = [true, true]} : memref<256x1001xf32>, vector<1x32xf32>
      vector.transfer_write %v, %b[%r, %c0] {in_bounds = [true, true]} : vector<1x32xf32>, memref<256x1001xf32>
    }
    return
  }
  func.func private @masked(%x: memref<131072xf32>, %y: memref<131072xf32>) attributes {tile.kernel = "elementwise"} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c131072 = arith.constant 131072 : index
    %pad = ub.poison : f32
    scf.for %i = %c0 to %c131072 step %c32 {
      %v = vector.transfer_read %x[%i], %pad : memref<131072xf32>, vector<32xf32>
      vector.transfer_write %v, %y[%i] : vector<32xf32>, memref<131072xf32>
    }
    return
  }
  func.func private @two_rows(%x: memref<512x256xf32>, %y: memref<512x256xf32>) attributes {tile.kernel = "elementwise"} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c512 = arith.constant 512 : index
    scf.for %r = %c0 to %c512 step %c2 {
      %v = vector.load %x[%r, %c0] : memref<512x256xf32>, vector<2x32xf32>
      vector.store %v, %y[%r, %c0] : memref<512x256xf32>, vector<2x32xf32>
    }
    return
  }
  func.func private @epilogue(%x: memref<131072xf32>, %y: memref<131072xf32>) attributes {tile.kernel = "contraction"} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c131072 = arith.constant 131072 : index
    scf.for %i = %c0 to %c131072 step %c32 {
      %v = vector.load %x[%i] : memref<131072xf32>, vector<32xf32>
      %n = arith.negf %v : vector<32xf32>
      vector.store %n, %y[%i] : memref<131072xf32>, vector<32xf32>
    }
    return
  }
}
