"""The launch plan of a module the NVVM pipeline lowered: what a public function does, as
buffers and kernel launches the runtime replays (`runtime/gpu_artifact.py`).

After the pipeline, a public function holds only host ops: buffer allocations, views of
buffers, constants (`memref.get_global`), scalar constants and `gpu.launch_func`. Views take
their base buffer's address (a kernel's memref parameters are bare pointers with the view's
offset and strides in their type); temporaries get offsets into one workspace.
"""

from __future__ import annotations

import math
import re

import numpy as np
from mlir import ir
from mlir.dialects import gpu

from .diagnostics import CompileError, Diagnostic, source_pos
from .passes.gpu_map_loops import VIEWS
from .passes.gpu_matmul_kernels import TENSORMAP_ATTR
from .runtime.abi import Signature
from .runtime.gpu_artifact import Argument, Buffer, FunctionPlan, Launch, TensorMap

WORKSPACE_ALIGNMENT = 256  # bytes: what cudaMalloc gives, and more than any vector access

_IGNORED = frozenset({"memref.dealloc", "func.return"})


def _error(op: ir.Operation, message: str) -> CompileError:
    return CompileError([Diagnostic("error", message, source_pos(op.location))])


def buffer_bytes(memref: ir.MemRefType) -> int:
    element = memref.element_type
    width = element.width if hasattr(element, "width") else 64
    return math.prod(memref.shape) * max(1, width // 8)


def _scalar(op: ir.Operation) -> tuple[float | int, str]:
    attr = op.attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value, str(attr.type)
    return ir.IntegerAttr(attr).value, str(attr.type)


class _Constants:
    """The module's constant buffers (`memref.global`s read by `memref.get_global`), each
    once, as raw bytes in the artifact."""

    def __init__(self, module: ir.Module):
        self.globals = {
            ir.StringAttr(op.attributes["sym_name"]).value: op
            for op in module.body.operations
            if op.operation.name == "memref.global"
        }
        self.numbers: dict[str, int] = {}
        self.data: list[bytes] = []
        self._module = module
        self._resources: dict[str, bytes] | None = None

    def number(self, name: str, at: ir.Operation) -> int:
        if name not in self.numbers:
            glob = self.globals.get(name)
            if glob is None or "initial_value" not in glob.attributes:
                raise _error(at, f"constant '{name}' has no initial value")
            self.numbers[name] = len(self.data)
            self.data.append(self._bytes(glob.attributes["initial_value"], glob))
        return self.numbers[name]

    def _bytes(self, attr: ir.Attribute, glob: ir.Operation) -> bytes:
        memref = ir.MemRefType(ir.TypeAttr(glob.attributes["type"]).value)
        if isinstance(attr, ir.DenseElementsAttr):
            dense = ir.DenseElementsAttr(attr)
            if dense.is_splat:
                value = np.array(dense.get_splat_value().value)
                return np.full(memref.shape, value, _dtype(memref)).tobytes()
            return np.ascontiguousarray(np.array(dense), _dtype(memref)).tobytes()
        text = str(attr)
        found = re.fullmatch(r"dense_resource<([^>]+)>.*", text)
        if not found:
            raise _error(glob, f"constant of unsupported contents: {text[:80]}")
        return self._resource(found.group(1), glob)

    def _resource(self, key: str, glob: ir.Operation) -> bytes:
        """A `dense_resource` blob's bytes, read from the module's printed resources: the
        bindings expose no reader of the blob itself."""
        if self._resources is None:
            text = str(self._module)
            self._resources = {
                name: bytes.fromhex(blob)[4:]  # the first 4 bytes give the blob's alignment
                for name, blob in re.findall(r'^\s*([\w.$-]+): "0x([0-9A-Fa-f]*)"', text, re.M)
            }
        if key not in self._resources:
            raise _error(glob, f"dense_resource '{key}' has no data in the module")
        return self._resources[key]


def _dtype(memref: ir.MemRefType) -> np.dtype:
    from .runtime.abi import dtype_of

    element = str(memref.element_type)
    dtype = dtype_of(element)
    if dtype is None:
        raise ValueError(f"no numpy type for {element}")
    return dtype


def _constant_index(value: ir.Value, at: ir.Operation) -> int:
    op = value.owner
    op = getattr(op, "operation", op)
    if not isinstance(op, ir.Operation) or op.name != "arith.constant":
        raise _error(at, "launch sizes must be constants")
    return ir.IntegerAttr(op.attributes["value"]).value


def _callee(call: ir.Operation) -> str:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def _tensormap_calls(module: ir.Module) -> dict:
    """Declared functions whose calls request TMA descriptors, by name."""
    return {
        ir.StringAttr(op.attributes["sym_name"]).value: op
        for op in module.body.operations
        if op.operation.name == "func.func" and TENSORMAP_ATTR in op.attributes
    }


def _tensormap(call: ir.Operation, declarations: dict, buffer_of: dict) -> TensorMap:
    declaration = declarations[_callee(call)]
    request = ir.DictAttr(declaration.attributes[TENSORMAP_ATTR])
    slot, source = call.operands[0], call.operands[1]
    if slot not in buffer_of or source not in buffer_of:
        raise _error(call, "a TMA descriptor request names no buffer of the plan")
    memref_type = ir.MemRefType(source.type)
    strides, offset = memref_type.get_strides_and_offset()
    element_bytes = max(1, ir.FloatType(memref_type.element_type).width // 8)
    return TensorMap(
        slot=buffer_of[slot],
        source=buffer_of[source],
        element=str(memref_type.element_type),
        shape=tuple(memref_type.shape),
        strides=tuple(strides),
        box=tuple(ir.DenseI64ArrayAttr(request["box"])),
        swizzle=ir.IntegerAttr(request["swizzle"]).value,
        offset=offset * element_bytes,
    )


def function_plan(
    fn: ir.Operation, signature: Signature, constants: _Constants, tensormap_calls: dict
) -> FunctionPlan:
    plan = FunctionPlan(signature.name, signature.inputs, signature.results)
    block = fn.regions[0].blocks[0]
    arguments = list(block.arguments)
    expected = len(signature.inputs) + len(signature.results)
    if len(arguments) != expected:
        raise _error(fn, f"expected {expected} buffer arguments, found {len(arguments)}")
    buffer_of: dict[ir.Value, int] = {}
    for position, argument in enumerate(arguments):
        n_in = len(signature.inputs)
        kind, index = ("input", position) if position < n_in else ("result", position - n_in)
        buffer_of[argument] = len(plan.buffers)
        plan.buffers.append(Buffer(kind, buffer_bytes(ir.MemRefType(argument.type)), index))
    scalars: dict[ir.Value, tuple] = {}
    for view in block.operations:
        op = view.operation
        if op.name == "arith.constant":
            if not isinstance(op.result.type, (ir.ShapedType,)):
                scalars[op.result] = _scalar(op)
        elif op.name in ("memref.alloc", "memref.alloca"):
            size = buffer_bytes(ir.MemRefType(op.result.type))
            plan.workspace_bytes = -(-plan.workspace_bytes // WORKSPACE_ALIGNMENT) * (
                WORKSPACE_ALIGNMENT
            )
            buffer_of[op.result] = len(plan.buffers)
            plan.buffers.append(Buffer("temporary", size, offset=plan.workspace_bytes))
            plan.workspace_bytes += size
        elif op.name == "memref.get_global":
            name = ir.FlatSymbolRefAttr(op.attributes["name"]).value
            number = constants.number(name, op)
            buffer_of[op.result] = len(plan.buffers)
            size = buffer_bytes(ir.MemRefType(op.result.type))
            plan.buffers.append(Buffer("constant", size, number))
        elif op.name in VIEWS:
            buffer_of[op.result] = buffer_of[op.operands[0]]
        elif op.name == "gpu.launch_func":
            plan.launches.append(_launch(op, buffer_of, scalars))
        elif op.name == "func.call" and _callee(op) in tensormap_calls:
            plan.tensormaps.append(_tensormap(op, tensormap_calls, buffer_of))
        elif op.name not in _IGNORED:
            raise _error(op, f"'{op.name}' cannot run in a GPU launch plan (host code)")
    return plan


def _launch(op: ir.Operation, buffer_of: dict, scalars: dict) -> Launch:
    launch = op.opview
    grid = tuple(
        _constant_index(v, op) for v in (launch.gridSizeX, launch.gridSizeY, launch.gridSizeZ)
    )
    block = tuple(
        _constant_index(v, op) for v in (launch.blockSizeX, launch.blockSizeY, launch.blockSizeZ)
    )
    shared = launch.dynamicSharedMemorySize
    arguments = []
    for value in launch.kernelOperands:
        if value in buffer_of:
            arguments.append(Argument(buffer=buffer_of[value]))
        elif value in scalars:
            number, kind = scalars[value]
            arguments.append(Argument(scalar=number, type=kind))
        else:
            raise _error(op, "a kernel argument is neither a buffer nor a constant")
    kernel = str(op.attributes["kernel"]).split("::")[-1].lstrip("@")
    return Launch(
        kernel,
        grid,
        block,
        tuple(arguments),
        _constant_index(shared, op) if shared is not None else 0,
    )


def extract(module: ir.Module, signatures: list[Signature]) -> tuple[dict, str, list[bytes]]:
    """The plans of the public functions, the PTX of the kernels and the constants' bytes."""
    with module.context:
        return _extract(module, signatures)


def _extract(module: ir.Module, signatures: list[Signature]) -> tuple[dict, str, list[bytes]]:
    constants = _Constants(module)
    by_name = {
        ir.StringAttr(op.attributes["sym_name"]).value: op
        for op in module.body.operations
        if op.operation.name == "func.func"
    }
    calls = _tensormap_calls(module)
    plans = {
        sig.name: function_plan(by_name[sig.name], sig, constants, calls) for sig in signatures
    }
    return plans, kernel_ptx(module), constants.data


def kernel_ptx(module: ir.Module) -> str:
    binaries = [op for op in module.body.operations if op.operation.name == "gpu.binary"]
    if not binaries:
        return ""
    objects = ir.ArrayAttr(binaries[0].attributes["objects"])
    return gpu.ObjectAttr(objects[0]).object.decode()
