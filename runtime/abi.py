"""The calling convention of compiled functions, shared by the JIT and shared libraries.

A compiled function `f(inputs) -> results` is called as `_mlir_ciface_f(in..., out...[, ws])`
where every argument is a pointer to a memref descriptor `{allocated, aligned, offset, sizes[r],
strides[r]}`; the caller allocates the results. A function whose signature has `workspace > 0`
takes one more argument, a 1-D i8 buffer of that many bytes, 64-byte aligned, for its
temporaries: the caller keeps it between calls (one per thread) so that they are not allocated
on every call. This module needs only numpy and ctypes.
"""

from __future__ import annotations

import ctypes
import functools
import json
import math
import threading
from dataclasses import asdict, dataclass

import numpy as np

# MLIR element type -> numpy dtype of the same bytes.
_NUMPY_TYPES = {
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
}


def dtype_of(element: str) -> np.dtype | None:
    """The numpy dtype of an MLIR element type name; None if it has none. bf16 is
    ml_dtypes' bfloat16 (numpy has none; JAX, ONNX and torch's numpy bridge use that one),
    imported only when asked for: importing ml_dtypes takes over a second, most of a tool's
    start."""
    if element == "bf16":
        try:
            from ml_dtypes import bfloat16
        except ImportError:  # pragma: no cover - bf16 inputs and results need ml_dtypes
            return None
        return np.dtype(bfloat16)
    kind = _NUMPY_TYPES.get(element)
    return None if kind is None else np.dtype(kind)


class InvocationError(ValueError):
    """The arguments of a call do not match the compiled function's signature."""


@dataclass(frozen=True)
class TensorSpec:
    shape: tuple[int, ...]
    element: str  # an MLIR element type name that dtype_of knows

    @functools.cached_property
    def dtype(self) -> np.dtype:
        return dtype_of(self.element)

    def __str__(self) -> str:
        return f"tensor<{''.join(f'{d}x' for d in self.shape)}{self.element}>"


@dataclass(frozen=True)
class Signature:
    name: str
    inputs: tuple[TensorSpec, ...]
    results: tuple[TensorSpec, ...]
    workspace: int = 0  # bytes of scratch memory the function takes after its results

    @property
    def arity(self) -> int:
        """Descriptors passed to the C entry point."""
        return len(self.inputs) + len(self.results) + (1 if self.workspace else 0)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Signature:
        data = json.loads(text)
        return cls(
            data["name"],
            tuple(TensorSpec(tuple(t["shape"]), t["element"]) for t in data["inputs"]),
            tuple(TensorSpec(tuple(t["shape"]), t["element"]) for t in data["results"]),
            data.get("workspace", 0),
        )


_DESCRIPTORS: dict[int, type] = {}


def descriptor_type(rank: int) -> type[ctypes.Structure]:
    """The ctypes struct of a ranked memref descriptor."""
    if rank not in _DESCRIPTORS:
        fields = [
            ("allocated", ctypes.c_void_p),
            ("aligned", ctypes.c_void_p),
            ("offset", ctypes.c_int64),
        ]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        _DESCRIPTORS[rank] = type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})
    return _DESCRIPTORS[rank]


def describe(array: np.ndarray) -> ctypes.Structure:
    """A descriptor viewing a C-contiguous numpy array (the array must outlive the call)."""
    desc = descriptor_type(array.ndim)()
    desc.allocated = desc.aligned = array.ctypes.data
    desc.offset = 0
    if array.ndim:
        desc.sizes[:] = array.shape
        desc.strides[:] = [s // array.itemsize for s in array.strides]
    return desc


def prepare_inputs(signature: Signature, args: tuple) -> list[np.ndarray]:
    """Checks the arguments against the signature; returns contiguous arrays to pass."""
    if len(args) != len(signature.inputs):
        raise InvocationError(
            f"'{signature.name}' takes {len(signature.inputs)} input(s), got {len(args)}"
        )
    arrays = []
    for i, (arg, spec) in enumerate(zip(args, signature.inputs, strict=True)):
        array = np.asarray(arg)
        if array.dtype != spec.dtype:
            raise InvocationError(
                f"input {i} of '{signature.name}' must have dtype {spec.dtype} ({spec}), "
                f"got {array.dtype}"
            )
        if tuple(array.shape) != spec.shape:
            raise InvocationError(
                f"input {i} of '{signature.name}' must have shape {list(spec.shape)} ({spec}), "
                f"got {list(array.shape)}"
            )
        arrays.append(np.ascontiguousarray(array))
    return arrays


def _passes_as_is(value, spec: TensorSpec) -> bool:
    """The common call, arrays exactly as compiled, checked in a few attribute reads: the
    general checks cost microseconds, as much as a small kernel."""
    return (
        type(value) is np.ndarray
        and value.dtype == spec.dtype
        and value.shape == spec.shape
        and value.flags.c_contiguous
    )


def address(array: np.ndarray) -> int:
    """The data address of `array`: through ctypes' buffer view where the array is writable
    and not empty, which takes a third of the time of `array.ctypes.data`; a dtype that the
    buffer protocol does not carry (ml_dtypes' bfloat16) takes `array.ctypes.data`."""
    if array.flags.writeable and array.size and array.dtype.isbuiltin == 1:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    return array.ctypes.data


ALIGNMENT = 64  # bytes: a cache line, and one AVX-512 vector


_ALIGN_FROM_BYTES = 1 << 16  # below this, aligning costs more than it saves


def empty_aligned(shape, dtype, always: bool = False, alignment: int = ALIGNMENT) -> np.ndarray:
    """np.empty whose data starts on a 64-byte boundary (numpy only promises 16), or on
    `alignment`, when it is large enough to matter (or `always`): vector accesses that
    straddle cache lines are slower."""
    dtype = np.dtype(dtype)
    count = math.prod(shape) if isinstance(shape, (tuple, list)) else int(shape)
    if not always and count * dtype.itemsize < _ALIGN_FROM_BYTES:
        return np.empty(shape, dtype)
    raw = np.empty(count * dtype.itemsize + alignment, np.uint8)
    start = -address(raw) % alignment
    return raw[start : start + count * dtype.itemsize].view(dtype).reshape(shape)


class _Frame:
    """The descriptors of one call: shapes and strides are fixed by the signature, so only the
    data pointers change between calls. One frame per thread (calls release the GIL), which
    also owns that thread's workspace."""

    def __init__(self, signature: Signature, invoker):
        specs = [*signature.inputs, *signature.results]
        self.descriptors = [describe(np.empty(spec.shape, spec.dtype)) for spec in specs]
        addresses = [ctypes.addressof(d) for d in self.descriptors]
        if signature.workspace:
            self.workspace = empty_aligned(signature.workspace, np.uint8, always=True)
            self.workspace_descriptor = describe(self.workspace)
            addresses.append(ctypes.addressof(self.workspace_descriptor))
        self.call = invoker(addresses)
        self.bound: list[np.ndarray | None] = [None] * len(specs)

    def run(self, arrays: list[np.ndarray]) -> None:
        # Reading an array's address costs about a microsecond; a loop that passes the same
        # arrays again skips it. Holding the arrays also keeps every address valid.
        bound = self.bound
        for i, array in enumerate(arrays):
            if bound[i] is not array:
                desc = self.descriptors[i]
                desc.allocated = desc.aligned = address(array)
                bound[i] = array
        self.call()


class Function:
    """A compiled function callable with numpy arrays.

    `invoker(addresses)` prepares a call of the code with one descriptor address per input
    and output, in order, and returns it as a function of no arguments. The object keeps
    whatever owns the code (engine or library) alive.
    """

    def __init__(self, signature: Signature, invoker, owner=None):
        self.signature = signature
        self._invoker = invoker
        self._owner = owner
        self._frames = threading.local()

    def __call__(self, *args, out=None):
        """Runs the function; results go to new arrays, or into `out` (an array, or a tuple
        with one array per result) so that a loop does not allocate on every call."""
        signature = self.signature
        if len(args) == len(signature.inputs) and all(map(_passes_as_is, args, signature.inputs)):
            inputs = list(args)
        else:
            inputs = prepare_inputs(signature, args)
        results = signature.results
        if len(results) == 1 and _passes_as_is(out, results[0]) and out.flags.writeable:
            outputs = [out]
        else:
            outputs = host_outputs(signature.name, results, out)
        frame = getattr(self._frames, "frame", None)
        if frame is None:
            frame = self._frames.frame = _Frame(self.signature, self._invoker)
        frame.run(inputs + outputs)
        if len(outputs) == 1:
            return outputs[0]
        return tuple(outputs)

    def __repr__(self) -> str:
        ins = ", ".join(map(str, self.signature.inputs))
        outs = ", ".join(map(str, self.signature.results))
        return f"<strata function {self.signature.name}({ins}) -> ({outs})>"


def as_list(out, count: int, name: str) -> list:
    """`out=` as one entry per result."""
    given = list(out) if isinstance(out, (tuple, list)) else [out]
    if len(given) != count:
        raise InvocationError(f"'{name}' has {count} result(s), out= gives {len(given)}")
    return given


def host_outputs(name: str, specs: tuple[TensorSpec, ...], out) -> list[np.ndarray]:
    """The numpy arrays a call's results go to: new ones, or those of `out=`, checked."""
    if out is None:
        return [empty_aligned(spec.shape, spec.dtype) for spec in specs]
    given = as_list(out, len(specs), name)
    for i, (array, spec) in enumerate(zip(given, specs, strict=True)):
        if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
            raise InvocationError(f"out[{i}] must be a C-contiguous numpy array")
        if array.dtype != spec.dtype or tuple(array.shape) != spec.shape:
            raise InvocationError(
                f"out[{i}] must be {spec} ({spec.dtype}{list(spec.shape)}), "
                f"got {array.dtype}{list(array.shape)}"
            )
        if not array.flags.writeable:
            raise InvocationError(f"out[{i}] is read-only")
    return given


def direct_invoker(address: int, count: int):
    """Calls `_mlir_ciface_<f>(desc*...)` at `address` (a shared library's symbol)."""
    fn = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * count))(address)

    def prepare(addresses: list[int]):
        return functools.partial(fn, *addresses)

    return prepare


def packed_invoker(address: int, count: int):
    """Calls MLIR's packed wrapper `void(void** args)` (the ExecutionEngine's entry points):
    each argument slot holds a pointer to a descriptor pointer."""
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)

    def prepare(addresses: list[int]):
        slots = (ctypes.c_void_p * count)(*addresses)
        packed = (ctypes.c_void_p * count)(
            *[ctypes.addressof(slots) + i * ctypes.sizeof(ctypes.c_void_p) for i in range(count)]
        )

        def call():
            fn(packed)

        call.keepalive = (slots, packed)
        return call

    return prepare
