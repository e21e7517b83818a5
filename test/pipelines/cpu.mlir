// RUN: strata-compile %s --target cpu --emit mlir | FileCheck %s --check-prefix=MLIR
// RUN: strata-compile %s --target cpu --emit llvm | FileCheck %s --check-prefix=LLVM
// RUN: strata-compile %s --target cpu:aarch64 --emit asm | FileCheck %s --check-prefix=ARM
// RUN: strata-compile %s --target cpu:x86-64-v3 --emit asm | FileCheck %s --check-prefix=X86
// RUN: strata-compile %s --mlir-print-ir-after-all --mlir-timing -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES

// Results become out-parameters; the C wrapper is what the runtime calls.
// MLIR: module attributes {target.desc = {{{.*}}kind = "cpu"
// MLIR: llvm.func @main(
// MLIR-SAME: attributes {llvm.emit_c_interface}
// MLIR: llvm.func @_mlir_ciface_main(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// MLIR-NOT: graph.
// MLIR-NOT: linalg.

// Kernels stay functions: main calls its one elementwise kernel, vectorized (a row of 8).
// LLVM: define void @main_kernel_0(
// LLVM: fadd <8 x float>
// LLVM: define void @main(
// LLVM: call void @main_kernel_0(
// LLVM: define void @_mlir_ciface_main(ptr %{{.*}}, ptr %{{.*}}, ptr %{{.*}})

// The elementwise kernel is vectorized for each target's vector width.
// ARM: main_kernel_0:
// ARM: fadd v{{[0-9]+}}.4s
// ARM: fmax v{{[0-9]+}}.4s
// ARM: _mlir_ciface_main:

// X86: main_kernel_0:
// X86: vaddps {{.*}}%ymm
// X86: vmaxps {{.*}}%ymm
// X86: _mlir_ciface_main:

// STAGES: IR Dump After graph-verify
// STAGES: IR Dump After graph-to-linalg
// STAGES: linalg.generic
// STAGES: IR Dump After bufferize
// STAGES: memref
// STAGES: IR Dump After to-llvm
// STAGES: strata pipeline timing
// STAGES: graph-to-linalg
// STAGES: total
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "graph.relu"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
