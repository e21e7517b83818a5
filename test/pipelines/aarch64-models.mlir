// The example models compile to AArch64 objects, with the kernels vectorized for NEON.
// RUN: strata-compile %S/../../examples/mlp.mlir --target cpu:aarch64 --emit obj -o %t.mlp.o
// RUN: llvm-readelf -h %t.mlp.o | FileCheck %s --check-prefix=ELF
// RUN: strata-compile %S/../../examples/conv_block.mlir --target cpu:aarch64 --emit obj -o %t.conv.o
// RUN: llvm-readelf -h %t.conv.o | FileCheck %s --check-prefix=ELF
// RUN: strata-compile %S/../../examples/transformer_block.mlir --target cpu:aarch64 --emit asm | FileCheck %s --check-prefix=ASM

// ELF: Class: ELF64
// ELF: Machine: AArch64

// The matmul micro-kernels: NEON FMAs on 4-lane vectors, in the kernels (not inlined into
// main).
// ASM: main_kernel_{{[0-9]+}}:
// ASM: fmla v{{[0-9]+}}.4s, v{{[0-9]+}}.4s, v{{[0-9]+}}.s[{{[0-3]}}]
