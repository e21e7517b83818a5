"""The GPU artifact: kernels and launch plans in one file, readable without MLIR.

A zip archive (stored, not compressed) holding
- `plan.json`: the format version, the target, and per public function its signature
  (inputs and results as tensor specs), its buffers, its launches in order, and the TMA
  descriptors it needs encoded;
- `kernels.ptx`, and `kernels.<chip>.cubin` where `ptxas` was found at compile time;
- `constants/<n>.bin`: the raw bytes of each constant buffer (weights).

Buffers are bound by index: an input or result of the call (`kind` "input"/"result", with
`index` into the signature), a constant (uploaded once), or a temporary at `offset` bytes
into one device workspace of `workspace_bytes`, reused by every call. A launch names its
kernel, grid and block sizes, dynamic shared memory, and its arguments: a buffer's base
address, or a scalar of an MLIR scalar type. A kernel's memref parameters are bare pointers;
the views they take (offsets, strides) are static in the kernel's code.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .abi import TensorSpec

FORMAT = "strata-gpu-artifact-1"
PTX_NAME = "kernels.ptx"


def cubin_name(chip: str) -> str:
    return f"kernels.{chip}.cubin"


@dataclass(frozen=True)
class Buffer:
    kind: str  # "input", "result", "constant" or "temporary"
    bytes: int
    index: int = 0  # the input's or result's position; the constant's number
    offset: int = 0  # temporaries: bytes into the workspace


@dataclass(frozen=True)
class Argument:
    buffer: int | None = None  # an index into the function's buffers
    scalar: float | int | None = None
    type: str = ""  # the scalar's MLIR type: index, i32, i64, f32, ...


@dataclass(frozen=True)
class Launch:
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    arguments: tuple[Argument, ...]
    shared_bytes: int = 0


@dataclass(frozen=True)
class TensorMap:
    """A TMA descriptor the runtime encodes (`cuTensorMapEncodeTiled`) into the 128-byte
    buffer `slot` before the launches, for the tensor in buffer `source` (at `offset` bytes
    into it) of `shape` and `strides` (elements, row-major), copied in boxes of `box`
    (row-major) with `swizzle`-byte swizzling. Re-encoded when `source` moves."""

    slot: int
    source: int
    element: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    box: tuple[int, ...]
    swizzle: int
    offset: int = 0


@dataclass
class FunctionPlan:
    name: str
    inputs: tuple[TensorSpec, ...]
    results: tuple[TensorSpec, ...]
    buffers: list[Buffer] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    workspace_bytes: int = 0
    tensormaps: list[TensorMap] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> FunctionPlan:
        def spec(t):
            return TensorSpec(tuple(t["shape"]), t["element"])

        return cls(
            data["name"],
            tuple(spec(t) for t in data["inputs"]),
            tuple(spec(t) for t in data["results"]),
            [Buffer(**b) for b in data["buffers"]],
            [
                Launch(
                    launch["kernel"],
                    tuple(launch["grid"]),
                    tuple(launch["block"]),
                    tuple(Argument(**a) for a in launch["arguments"]),
                    launch["shared_bytes"],
                )
                for launch in data["launches"]
            ],
            data["workspace_bytes"],
            [
                TensorMap(**{k: tuple(v) if isinstance(v, list) else v for k, v in entry.items()})
                for entry in data.get("tensormaps", [])
            ],
        )


@dataclass
class Artifact:
    target: str
    chip: str
    functions: dict[str, FunctionPlan]
    ptx: str
    cubins: dict[str, bytes] = field(default_factory=dict)  # by chip
    constants: list[bytes] = field(default_factory=list)

    def to_bytes(self) -> bytes:
        plan = {
            "format": FORMAT,
            "target": self.target,
            "chip": self.chip,
            "functions": [f.to_dict() for f in self.functions.values()],
            "constants": len(self.constants),
        }
        stream = io.BytesIO()
        with zipfile.ZipFile(stream, "w", zipfile.ZIP_STORED) as archive:
            archive.writestr("plan.json", json.dumps(plan, indent=1))
            archive.writestr(PTX_NAME, self.ptx)
            for chip, cubin in self.cubins.items():
                archive.writestr(cubin_name(chip), cubin)
            for number, data in enumerate(self.constants):
                archive.writestr(f"constants/{number}.bin", data)
        return stream.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> Artifact:
        return cls.read(io.BytesIO(data), "<artifact>")

    @classmethod
    def read(cls, file: str | Path | io.BytesIO, path: str | None = None) -> Artifact:
        path = path or str(file)
        try:
            archive = zipfile.ZipFile(file)
        except (zipfile.BadZipFile, OSError) as error:
            raise ValueError(f"{path}: not a strata GPU artifact ({error})") from None
        with archive:
            names = set(archive.namelist())
            if "plan.json" not in names:
                raise ValueError(f"{path}: not a strata GPU artifact (no plan.json)")
            plan = json.loads(archive.read("plan.json"))
            if plan.get("format") != FORMAT:
                raise ValueError(f"{path}: artifact format {plan.get('format')!r}, not {FORMAT}")
            cubins = {
                name[len("kernels.") : -len(".cubin")]: archive.read(name)
                for name in names
                if name.endswith(".cubin")
            }
            return cls(
                plan["target"],
                plan["chip"],
                {f["name"]: FunctionPlan.from_dict(f) for f in plan["functions"]},
                archive.read(PTX_NAME).decode(),
                cubins,
                [archive.read(f"constants/{n}.bin") for n in range(plan["constants"])],
            )


def is_artifact(path: str | Path) -> bool:
    return zipfile.is_zipfile(path)
