"""`--bool-storage`: stores i1 buffers as i8 (one byte per element, 0 or 1).

memref-to-llvm cannot load or store i1 elements (it asserts), and numpy keeps bools as one
byte each, so after bufferization every `memref<...xi1>` becomes `memref<...xi8>`: loads are
followed by `arith.trunci`, stored values are widened with `arith.extui`, globals and function
signatures change with them. Scalar and vector loads and stores (`vector.load`/`store` and
unmasked or masked `vector.transfer_read`/`transfer_write`) are widened; run it once linalg is
lowered to loops, when no other op reads or writes elements.
"""

import numpy as np
from mlir import ir
from mlir.dialects import arith

from .registry import register_pass, reject


def _is_bool_buffer(t: ir.Type) -> bool:
    return isinstance(t, ir.MemRefType) and str(t.element_type) == "i1"


def _widened(t: ir.Type) -> ir.Type | None:
    if not _is_bool_buffer(t):
        return None
    return ir.MemRefType.get(t.shape, ir.IntegerType.get_signless(8), t.layout, t.memory_space)


def _retype_values(op: ir.Operation) -> None:
    for result in op.results:
        if (wide := _widened(result.type)) is not None:
            result.set_type(wide)
    for region in op.regions:
        for block in region.blocks:
            for arg in block.arguments:
                if (wide := _widened(arg.type)) is not None:
                    arg.set_type(wide)


def _retype_function(op: ir.Operation) -> None:
    function_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
    inputs = [_widened(t) or t for t in function_type.inputs]
    results = [_widened(t) or t for t in function_type.results]
    op.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))


def _retype_global(op: ir.Operation) -> None:
    wide = _widened(ir.TypeAttr(op.attributes["type"]).value)
    if wide is None:
        return
    op.attributes["type"] = ir.TypeAttr.get(wide)
    if "initial_value" not in op.attributes:
        return
    initial = op.attributes["initial_value"]
    if isinstance(initial, ir.DenseElementsAttr):
        bits = np.array([bool(b) for b in ir.DenseIntElementsAttr(initial)], dtype=np.int8).reshape(
            wide.shape
        )
        tensor_type = ir.RankedTensorType.get(wide.shape, wide.element_type)
        op.attributes["initial_value"] = ir.DenseElementsAttr.get(bits, type=tensor_type)


def _as_bytes(t: ir.Type) -> ir.Type | None:
    """i8 for i1, and vectors of i8 for vectors of i1; None for any other type."""
    i8 = ir.IntegerType.get_signless(8)
    if str(t) == "i1":
        return i8
    if isinstance(t, ir.VectorType) and str(t.element_type) == "i1":
        return ir.VectorType.get(t.shape, i8, scalable=t.scalable_dims)
    return None


def _fix_load(op: ir.Operation) -> None:
    result = op.results[0]
    wide = _as_bytes(result.type)
    if wide is None:
        return
    narrow_type = result.type
    if op.name == "vector.transfer_read":  # its padding value is an element too
        position = 1 + ir.MemRefType(op.operands[0].type).rank
        with ir.InsertionPoint(op), op.location:
            op.operands[position] = arith.extui(
                _as_bytes(op.operands[position].type), op.operands[position]
            )
    result.set_type(wide)
    with ir.InsertionPoint(op), op.location:
        narrow = arith.trunci(narrow_type, result)
    narrow.owner.move_after(op)
    result.replace_all_uses_except(narrow, narrow.owner.operation)


def _fix_store(op: ir.Operation) -> None:
    value = op.operands[0]
    wide = _as_bytes(value.type)
    if wide is None:
        return
    with ir.InsertionPoint(op), op.location:
        op.operands[0] = arith.extui(wide, value)


_FIXES = {
    "func.func": _retype_function,
    "memref.global": _retype_global,
    "memref.load": _fix_load,
    "memref.store": _fix_store,
    "vector.load": _fix_load,
    "vector.store": _fix_store,
    "vector.transfer_read": _fix_load,
    "vector.transfer_write": _fix_store,
}

_ELEMENT_ACCESS = ("vector.", "affine.load", "affine.store", "linalg.")


def _reads_or_writes_elements(op: ir.Operation) -> bool:
    """An op that touches the elements of an i1 buffer and that this pass cannot widen."""
    return (
        op.name not in _FIXES
        and op.name.startswith(_ELEMENT_ACCESS)
        and any(_is_bool_buffer(v.type) for v in [*op.operands, *op.results])
    )


@register_pass("bool-storage", "Store i1 buffers as i8: widen memrefs, loads and stores")
def bool_storage(module: ir.Operation) -> None:
    reject(
        module,
        _reads_or_writes_elements,
        lambda op: f"'{op.name}' on an i1 buffer must be lowered before bool-storage",
        "bool-storage",
    )

    def rewrite(op):
        op = op.operation
        with op.location:
            _retype_values(op)
            fix = _FIXES.get(op.name)
            if fix is not None:
                fix(op)
        return ir.WalkResult.ADVANCE

    module.walk(rewrite, ir.WalkOrder.PRE_ORDER)
