// Upstream-only IR for the mlir-opt parity test: folding, a loop, a large constant.
func.func @fold(%a: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %s = arith.addi %c1, %c2 : i32
  %0 = arith.addi %a, %s : i32
  %1 = arith.addi %a, %s : i32
  %2 = arith.muli %0, %1 : i32
  return %2 : i32
}

func.func @loop(%n: index, %t: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %w = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0]> : tensor<20xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %t) -> tensor<64xf32> {
    %x = tensor.extract %w[%c1] : tensor<20xf32>
    %y = tensor.insert %x into %acc[%i] : tensor<64xf32>
    scf.yield %y : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

#map = affine_map<(d0) -> (d0 * 2)>
func.func @affine(%m: memref<16xf32>) {
  affine.for %i = 0 to 8 {
    %v = affine.load %m[%i * 2] : memref<16xf32>
    affine.store %v, %m[%i] : memref<16xf32>
  }
  return
}
