// RUN: strata-opt %s --math-to-ptx --split-input-file | FileCheck %s

// sqrt, floor, ceil and abs in a kernel become one PTX instruction each; rsqrt is a division
// by the rounded square root.
// CHECK-LABEL: gpu.func @kernel
// CHECK: llvm.inline_asm "sqrt.rn.f32 $0, $1;", "=f,f"
// CHECK: llvm.inline_asm "cvt.rmi.f32.f32 $0, $1;", "=f,f"
// CHECK: llvm.inline_asm "cvt.rpi.f32.f32 $0, $1;", "=f,f"
// CHECK: llvm.inline_asm "abs.f64 $0, $1;", "=d,d"
// CHECK: llvm.inline_asm "sqrt.rn.f32 $0, $1;"
// CHECK: arith.divf
// CHECK-NOT: math.
gpu.module @kernels {
  gpu.func @kernel(%x: f32, %d: f64, %out: memref<5xf32>, %dout: memref<f64>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %0 = math.sqrt %x : f32
    %1 = math.floor %x : f32
    %2 = math.ceil %x : f32
    %3 = math.absf %d : f64
    %4 = math.rsqrt %x : f32
    memref.store %0, %out[%c0] : memref<5xf32>
    memref.store %1, %out[%c1] : memref<5xf32>
    memref.store %2, %out[%c2] : memref<5xf32>
    memref.store %4, %out[%c3] : memref<5xf32>
    memref.store %3, %dout[] : memref<f64>
    gpu.return
  }
}

// -----

// Half precision computes in f32; outside a gpu.module nothing changes.
// CHECK-LABEL: gpu.func @half
// CHECK: arith.extf
// CHECK: llvm.inline_asm "sqrt.rn.f32
// CHECK: arith.truncf
// CHECK-LABEL: func.func @host
// CHECK: math.sqrt
gpu.module @halves {
  gpu.func @half(%x: f16, %out: memref<f16>) kernel {
    %0 = math.sqrt %x : f16
    memref.store %0, %out[] : memref<f16>
    gpu.return
  }
}
func.func @host(%x: f32) -> f32 {
  %0 = math.sqrt %x : f32
  return %0 : f32
}

// -----

// bf16 tanh is the SFU's tanh.approx.f32 on the f32 extension, lane by lane (its error is an
// eighth of a bf16 ulp); f32 and f16 tanh need more accuracy and stay for --math-approximate.
// CHECK-LABEL: gpu.func @tanh
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: llvm.inline_asm "tanh.approx.f32 $0, $1;", "=f,f"
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: vector.insert
// CHECK: math.tanh {{.*}} : f32
// CHECK: math.tanh {{.*}} : vector<2xf16>
gpu.module @kernels {
  gpu.func @tanh(%x: vector<2xbf16>, %y: f32, %z: vector<2xf16>, %out: memref<2xbf16>, %fout: memref<f32>, %hout: memref<2xf16>) kernel {
    %c0 = arith.constant 0 : index
    %0 = math.tanh %x : vector<2xbf16>
    %1 = math.tanh %y : f32
    %2 = math.tanh %z : vector<2xf16>
    vector.store %0, %out[%c0] : memref<2xbf16>, vector<2xbf16>
    memref.store %1, %fout[] : memref<f32>
    vector.store %2, %hout[%c0] : memref<2xf16>, vector<2xf16>
    gpu.return
  }
}

// -----

// An f32 tanh whose every use rounds it to bf16 (bf16 tanh computed in f32) is of bf16
// precision: tanh.approx.f32. One with another use keeps f32 accuracy.
// CHECK-LABEL: gpu.func @tanh_rounded_to_bf16
// CHECK: llvm.inline_asm "tanh.approx.f32 $0, $1;", "=f,f"
// CHECK: arith.truncf {{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: math.tanh {{.*}} : vector<2xf32>
// CHECK: arith.truncf {{.*}} : vector<2xf32> to vector<2xbf16>
gpu.module @kernels {
  gpu.func @tanh_rounded_to_bf16(%x: vector<2xbf16>, %out: memref<2xbf16>, %fout: memref<2xf32>) kernel {
    %c0 = arith.constant 0 : index
    %wide = arith.extf %x : vector<2xbf16> to vector<2xf32>
    %0 = math.tanh %wide : vector<2xf32>
    %1 = arith.truncf %0 : vector<2xf32> to vector<2xbf16>
    %2 = math.tanh %wide : vector<2xf32>
    %3 = arith.truncf %2 : vector<2xf32> to vector<2xbf16>
    vector.store %1, %out[%c0] : memref<2xbf16>, vector<2xbf16>
    vector.store %3, %out[%c0] : memref<2xbf16>, vector<2xbf16>
    vector.store %2, %fout[%c0] : memref<2xf32>, vector<2xf32>
    gpu.return
  }
}

// -----

// f32 exp with fastmath afn (softmax's and attention's exponentials of x - max) is the SFU's
// ex2.approx.ftz.f32 of x log2(e), exp2 the instruction alone; an exp without afn, or of f16,
// stays for --math-approximate.
// CHECK-LABEL: gpu.func @exp
// CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[SCALED:.*]] = arith.mulf %{{.*}}, %[[LOG2E]] : f32
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;", "=f,f" %[[SCALED]]
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;", "=f,f"
// CHECK: math.exp {{.*}} : f32
// CHECK: math.exp {{.*}} fastmath<afn> : f16
// CHECK: llvm.inline_asm "ex2.approx.ftz.f32 $0, $1;", "=f,f" %arg0
gpu.module @kernels {
  gpu.func @exp(%x: f32, %v: vector<2xf32>, %h: f16, %out: memref<3xf32>, %vout: memref<2xf32>, %hout: memref<f16>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %0 = math.exp %x fastmath<ninf,afn> : f32
    %1 = math.exp %v fastmath<afn> : vector<2xf32>
    %2 = math.exp %x : f32
    %3 = math.exp %h fastmath<afn> : f16
    %4 = math.exp2 %x fastmath<afn> : f32
    memref.store %0, %out[%c0] : memref<3xf32>
    memref.store %4, %out[%c1] : memref<3xf32>
    memref.store %2, %out[%c1] : memref<3xf32>
    vector.store %1, %vout[%c0] : memref<2xf32>, vector<2xf32>
    memref.store %3, %hout[] : memref<f16>
    gpu.return
  }
}
