// RUN: strata-opt %s --target=nvvm:sm_90a | FileCheck %s --check-prefix=SM90A
// RUN: strata-opt %s --target=nvvm:sm_90a | strata-opt | FileCheck %s --check-prefix=SM90A
// RUN: strata-opt %s --target=rocdl:gfx942 | FileCheck %s --check-prefix=GFX942
// RUN: strata-opt %s --target=cpu:x86-64-v4 | FileCheck %s --check-prefix=V4
// RUN: strata-opt %s --target=cpu:aarch64 | FileCheck %s --check-prefix=ARM
// RUN: strata-opt %s --target=cpu | FileCheck %s --check-prefix=HOST
// RUN: not strata-opt %s --target=tpu 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// The presets are dictionaries on the module; every pass reads its hardware facts there.
// SM90A: module attributes {target.desc = {
// SM90A-SAME: chip = "sm_90a"
// SM90A-SAME: kind = "nvvm"
// SM90A-SAME: matrix_instructions = "mma.sync,wgmma"
// SM90A-SAME: shared_memory_bytes = 233472 : i64
// SM90A-SAME: sm_count = 132 : i64
// SM90A-SAME: triple = "nvptx64-nvidia-cuda"
// SM90A-SAME: warp_size = 32 : i64

// GFX942: chip = "gfx942"
// GFX942-SAME: matrix_instructions = "mfma"
// GFX942-SAME: sm_count = 304 : i64
// GFX942-SAME: warp_size = 64 : i64

// V4: chip = "x86-64-v4"
// V4-SAME: features = "{{.*}}+avx512f
// V4-SAME: vector_bits = 512 : i64, vector_registers = 32 : i64

// ARM: chip = "neoverse-v2"
// ARM-SAME: triple = "aarch64-unknown-linux-gnu"

// HOST: cores = {{[1-9][0-9]*}} : i64
// HOST-SAME: kind = "cpu"

// UNKNOWN: error: unknown target 'tpu' (known: cpu, cpu:aarch64,

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
