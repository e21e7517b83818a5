"""The `target` dialect: the hardware a module is compiled for, as IR.

A target description is a dictionary attribute on the module, `target.desc`, that every pass
reads its hardware facts from (kind, triple, cpu, features, vector width, ...). `--target` on
the tools resolves a name (`cpu`, `cpu:x86-64:znver4`, `cpu:aarch64`, ...) to a description;
a user may also write one in the IR.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from mlir import ir

ATTR_NAME = "target.desc"


@dataclass(frozen=True)
class TargetDesc:
    kind: str  # "cpu", "nvvm" or "rocdl"
    triple: str
    cpu: str = ""
    features: str = ""
    vector_bits: int = 128

    @property
    def is_host(self) -> bool:
        return self == host_cpu()

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
        d = ir.DictAttr(attr)
        fields = {}
        for name in cls.__dataclass_fields__:
            if name in d:
                value = d[name]
                fields[name] = (
                    ir.IntegerAttr(value).value
                    if isinstance(value, ir.IntegerAttr)
                    else ir.StringAttr(value).value
                )
        return cls(**fields)


def _vector_bits(features: str) -> int:
    if "+avx512f" in features.split(","):
        return 512
    if "+avx2" in features.split(",") or "+avx" in features.split(","):
        return 256
    return 128


_HOST: TargetDesc | None = None


def host_cpu() -> TargetDesc:
    """The machine this process runs on, as LLVM sees it."""
    global _HOST
    if _HOST is None:
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        triple = llvm.get_process_triple()
        cpu = llvm.get_host_cpu_name()
        features = llvm.get_host_cpu_features().flatten()
        _HOST = TargetDesc("cpu", triple, cpu, features, _vector_bits(features))
    return _HOST


_CPU_PRESETS = {
    "x86-64": ("x86_64-unknown-linux-gnu", "x86-64-v3", "", 256),
    "aarch64": ("aarch64-unknown-linux-gnu", "neoverse-v2", "", 128),
}


def resolve(name: str) -> TargetDesc:
    """`cpu` (the host), `cpu:x86-64[:<llvm cpu>]`, `cpu:aarch64[:<llvm cpu>]`."""
    parts = name.split(":")
    if parts == ["cpu"]:
        return host_cpu()
    if parts[0] == "cpu" and len(parts) in (2, 3) and parts[1] in _CPU_PRESETS:
        triple, cpu, features, bits = _CPU_PRESETS[parts[1]]
        if len(parts) == 3:
            cpu = parts[2]
        return TargetDesc("cpu", triple, cpu, features, bits)
    known = "cpu, cpu:x86-64[:<llvm cpu>], cpu:aarch64[:<llvm cpu>]"
    raise ValueError(f"unknown target '{name}' (known: {known})")


def attach(module: ir.Module | ir.Operation, target: TargetDesc) -> None:
    op = getattr(module, "operation", module)
    op.attributes[ATTR_NAME] = target.to_attr()


def of(module: ir.Module | ir.Operation) -> TargetDesc | None:
    op = getattr(module, "operation", module)
    if ATTR_NAME not in op.attributes:
        return None
    return TargetDesc.from_attr(op.attributes[ATTR_NAME])
