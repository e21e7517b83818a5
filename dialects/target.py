"""The `target` dialect: the hardware a module is compiled for, as IR.

A target description is a dictionary attribute on the module, `target.desc`, that every pass
reads its hardware facts from: kind, triple, chip, features, vector width and registers, cache
sizes, cores; for GPUs also warp/wave size, shared memory, SM (CU) count and matrix
instructions. `--target` on the tools resolves a name to one of the presets below; a module may
also carry its own description, written in the IR:

    module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu",
                                      chip = "znver4", vector_bits = 512 : i64, ...}} { ... }
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from mlir import ir

from ..diagnostics import CompileError, Diagnostic, source_pos

ATTR_NAME = "target.desc"

KiB, MiB = 1 << 10, 1 << 20


@dataclass(frozen=True)
class TargetDesc:
    """Hardware facts the compiler's decisions are read from. Sizes are in bytes."""

    kind: str  # "cpu", "nvvm" or "rocdl"
    triple: str
    chip: str = ""  # LLVM cpu name, or the GPU architecture (sm_90a, gfx942, ...)
    features: str = ""
    vector_bits: int = 128
    vector_registers: int = 16
    l1_bytes: int = 32 * KiB
    l2_bytes: int = 1 * MiB
    l3_bytes: int = 0
    cores: int = 1
    warp_size: int = 0
    shared_memory_bytes: int = 0
    sm_count: int = 0
    matrix_instructions: str = ""  # comma-separated: mma.sync, wgmma, mfma, wmma, amx, sme

    @property
    def is_host(self) -> bool:
        host = host_cpu()
        return (self.kind, self.triple, self.chip, self.features) == (
            host.kind,
            host.triple,
            host.chip,
            host.features,
        )

    @property
    def vector_lanes_f32(self) -> int:
        return self.vector_bits // 32

    @property
    def is_x86_cpu(self) -> bool:
        return self.kind == "cpu" and self.triple.startswith("x86_64")

    @property
    def bf16_dot_products(self) -> bool:
        """Whether a sum of two bf16 products added to f32 is one vector instruction
        (AVX-512 BF16's vdpbf16ps, on vectors of 128, 256 or 512 bits)."""
        return self.is_x86_cpu and self.has_feature("avx512bf16") and self.vector_bits >= 128

    def has_feature(self, name: str) -> bool:
        """Whether LLVM feature `name` (avx512f, sse4.1, ...) is on in `features`."""
        return f"+{name}" in self.features.split(",")

    def to_attr(self) -> ir.DictAttr:
        values = {}
        for key, value in asdict(self).items():
            if isinstance(value, int):
                values[key] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
            else:
                values[key] = ir.StringAttr.get(value)
        return ir.DictAttr.get(values)

    @classmethod
    def from_attr(cls, attr: ir.Attribute) -> TargetDesc:
        """Reads a `target.desc` dictionary; unknown keys and wrong kinds are errors."""
        d = ir.DictAttr(attr)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        values = {}
        for index in range(len(d)):
            named = d[index]
            field = fields.get(named.name)
            if field is None:
                raise ValueError(f"target.desc has an unknown key '{named.name}'")
            if field.type == "int":
                if not isinstance(named.attr, ir.IntegerAttr):
                    raise ValueError(f"target.desc key '{named.name}' must be an integer")
                values[named.name] = ir.IntegerAttr(named.attr).value
            else:
                if not isinstance(named.attr, ir.StringAttr):
                    raise ValueError(f"target.desc key '{named.name}' must be a string")
                values[named.name] = ir.StringAttr(named.attr).value
        for required in ("kind", "triple"):
            if required not in values:
                raise ValueError(f"target.desc needs '{required}'")
        return cls(**values)


def _vector_registers_and_bits(triple: str, features: str) -> tuple[int, int]:
    flags = set(features.split(","))
    if triple.startswith("x86_64"):
        if "+avx512f" in flags:
            return 32, 512
        if "+avx2" in flags or "+avx" in flags:
            return 16, 256
        return 16, 128
    return 32, 128  # AArch64 NEON (SVE width is chosen at run time)


def _cache_sizes() -> tuple[int, int, int]:
    """L1d, L2, L3 of this machine from sysfs (Linux); common defaults elsewhere."""
    sizes = {1: 32 * KiB, 2: 1 * MiB, 3: 0}
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(root.glob("index*")) if root.is_dir() else []:
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            text = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or not text:
            continue
        scale = {"K": KiB, "M": MiB}.get(text[-1], 1)
        sizes[level] = int(text.rstrip("KM")) * scale
    return sizes[1], sizes[2], sizes[3]


_HOST: TargetDesc | None = None


def host_cpu() -> TargetDesc:
    """The machine this process runs on: LLVM's view of the CPU, caches and usable cores."""
    global _HOST
    if _HOST is None:
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        triple = llvm.get_process_triple()
        features = llvm.get_host_cpu_features().flatten()
        registers, bits = _vector_registers_and_bits(triple, features)
        l1, l2, l3 = _cache_sizes()
        _HOST = TargetDesc(
            "cpu",
            triple,
            llvm.get_host_cpu_name(),
            features,
            vector_bits=bits,
            vector_registers=registers,
            l1_bytes=l1,
            l2_bytes=l2,
            l3_bytes=l3,
            cores=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1,
        )
    return _HOST


_X86 = "x86_64-unknown-linux-gnu"
_AVX2 = "+avx,+avx2,+fma,+f16c,+bmi,+bmi2,+lzcnt,+movbe,+popcnt,+sse4.2"
_AVX512 = _AVX2 + ",+avx512f,+avx512bw,+avx512cd,+avx512dq,+avx512vl"


def _gpu(kind: str, chip: str, units: int, l1: int, l2: int, shared: int, matrix: str, **more):
    """A GPU: `units` SMs (NVIDIA) or CUs (AMD), `l1` per unit, `shared` memory per block."""
    nvidia = kind == "nvvm"
    return TargetDesc(
        kind,
        "nvptx64-nvidia-cuda" if nvidia else "amdgcn-amd-amdhsa",
        chip,
        "+ptx80" if nvidia else "",
        l1_bytes=l1,
        l2_bytes=l2,
        cores=units,
        vector_registers=0,
        warp_size=32 if nvidia else 64,
        shared_memory_bytes=shared,
        sm_count=units,
        matrix_instructions=matrix,
        **more,
    )


_SM90 = _gpu("nvvm", "sm_90", 132, 256 * KiB, 50 * MiB, 228 * KiB, "mma.sync")

PRESETS: dict[str, TargetDesc] = {
    "cpu:x86-64": TargetDesc("cpu", _X86, "x86-64", "", 128, 16, 32 * KiB, 1 * MiB, 0, 1),
    "cpu:x86-64-v3": TargetDesc("cpu", _X86, "x86-64-v3", _AVX2, 256, 16, 32 * KiB, 1 * MiB),
    "cpu:x86-64-v4": TargetDesc("cpu", _X86, "x86-64-v4", _AVX512, 512, 32, 48 * KiB, 1 * MiB),
    "cpu:aarch64": TargetDesc(
        "cpu",
        "aarch64-unknown-linux-gnu",
        "neoverse-v2",
        "+neon,+sve,+sve2",
        vector_bits=128,
        vector_registers=32,
        l1_bytes=64 * KiB,
        l2_bytes=1 * MiB,
        matrix_instructions="sve",
    ),
    "nvvm:sm_80": _gpu("nvvm", "sm_80", 108, 192 * KiB, 40 * MiB, 164 * KiB, "mma.sync"),
    "nvvm:sm_90": _SM90,
    "nvvm:sm_90a": dataclasses.replace(_SM90, chip="sm_90a", matrix_instructions="mma.sync,wgmma"),
    "rocdl:gfx90a": _gpu("rocdl", "gfx90a", 104, 16 * KiB, 8 * MiB, 64 * KiB, "mfma"),
    "rocdl:gfx942": _gpu(
        "rocdl", "gfx942", 304, 32 * KiB, 4 * MiB, 64 * KiB, "mfma", l3_bytes=256 * MiB
    ),
    "rocdl:gfx1100": dataclasses.replace(
        _gpu("rocdl", "gfx1100", 96, 32 * KiB, 6 * MiB, 64 * KiB, "wmma", l3_bytes=96 * MiB),
        warp_size=32,
    ),
}
PRESETS["nvvm:h100"] = PRESETS["nvvm:h200"] = PRESETS["nvvm:sm_90a"]
PRESETS["rocdl:mi300x"] = PRESETS["rocdl:gfx942"]


def names() -> list[str]:
    return ["cpu", *sorted(PRESETS)]


# Opt-in numerics of GPU targets, as `+name` after the preset.
GPU_OPTIONS = {"tf32": "f32 matmuls on tensor cores with operands rounded to TF32 (10 bits)"}


def resolve(name: str) -> TargetDesc:
    """`cpu` (the host), a preset (`cpu:x86-64-v3`, `nvvm:sm_90a`, `rocdl:gfx942`, ...), a
    CPU preset with another LLVM cpu name (`cpu:x86-64:znver4`, `cpu:aarch64:neoverse-n1`),
    or an NVIDIA preset with opt-ins: `nvvm:sm_90a+tf32` (GPU_OPTIONS)."""
    if name == "cpu":
        return host_cpu()
    if name in PRESETS:
        return PRESETS[name]
    base, _, options = name.partition("+")
    if options and base in PRESETS and PRESETS[base].kind == "nvvm":
        unknown = [o for o in options.split("+") if o not in GPU_OPTIONS]
        if unknown:
            raise ValueError(
                f"unknown option '+{unknown[0]}' of target '{base}' (known: "
                + ", ".join(f"+{o}" for o in GPU_OPTIONS)
                + ")"
            )
        units = [u for u in PRESETS[base].matrix_instructions.split(",") if u]
        units += [o for o in dict.fromkeys(options.split("+")) if o not in units]
        return dataclasses.replace(PRESETS[base], matrix_instructions=",".join(units))
    base, _, chip = name.rpartition(":")
    if base in PRESETS and PRESETS[base].kind == "cpu" and chip:
        return dataclasses.replace(PRESETS[base], chip=chip)
    raise ValueError(f"unknown target '{name}' (known: {', '.join(names())})")


def attach(module: ir.Module | ir.Operation, target: TargetDesc) -> None:
    op = getattr(module, "operation", module)
    op.attributes[ATTR_NAME] = target.to_attr()


class TargetDescError(CompileError, ValueError):
    """A malformed `target.desc`: an error at the module for the tools, a ValueError (as
    `TargetDesc.from_attr` raises) for Python callers."""


def of(module: ir.Module | ir.Operation) -> TargetDesc | None:
    """The module's target description, None without one; a malformed one is a
    `TargetDescError` at the module."""
    op = getattr(module, "operation", module)
    if ATTR_NAME not in op.attributes:
        return None
    try:
        return TargetDesc.from_attr(op.attributes[ATTR_NAME])
    except ValueError as error:
        diagnostic = Diagnostic("error", str(error), source_pos(op.location))
        raise TargetDescError([diagnostic]) from None
