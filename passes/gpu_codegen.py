"""IR building shared by the GPU kernel generators (`gpu_row_kernels`, `gpu_matmul_kernels`,
`gpu_attention_kernels`): linalg bodies cloned onto vectors, scalars broadcast once, code
behind a condition, vector accesses to global and shared memory, warp shuffles, and the
linalg ops a launch replaces erased."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf, vector

from .gpu_map_loops import index_constant, vector_alignment
from .tile_lower import TransformFailure


def splat(value: float, vector_type: ir.VectorType) -> ir.Value:
    element = vector_type.element_type
    return arith.ConstantOp(
        vector_type, ir.DenseElementsAttr.get_splat(vector_type, ir.FloatAttr.get(element, value))
    ).result


def attributes_of(op: ir.Operation) -> dict[str, ir.Attribute]:
    return {name: op.attributes[name] for name in op.attributes}


def iterator_kinds(generic: ir.Operation) -> list[str]:
    """A linalg.generic's iterator types: "parallel" or "reduction" per dim."""
    return [
        "reduction" if "reduction" in str(a) else "parallel"
        for a in ir.ArrayAttr(generic.attributes["iterator_types"])
    ]


def erase_linalg(ops: list[ir.Operation]) -> None:
    """Erases a kernel body's linalg ops once a launch replaces them, then the allocations
    nothing uses any more (the buffers between them)."""
    allocations = [op for op in ops if op.name == "memref.alloc"]
    for op in ops:
        if op.name == "linalg.generic":
            op.erase()
    for op in allocations:
        if not list(op.result.uses):
            op.erase()


def map_dims(generic: ir.Operation) -> list[list]:
    """Each operand's indexing map as a list of dim positions (or 0 for a constant 0)."""
    positions = []
    for attr in ir.ArrayAttr(generic.attributes["indexing_maps"]):
        dims = []
        for expr in ir.AffineMapAttr(attr).value.results:
            if isinstance(expr, ir.AffineDimExpr):
                dims.append(expr.position)
            elif isinstance(expr, ir.AffineConstantExpr) and expr.value == 0:
                dims.append(None)
            else:
                raise TransformFailure("an operand is read through a non-trivial indexing map")
        positions.append(dims)
    return positions


def clone_body(
    generic: ir.Operation,
    arguments: list,
    lanes: int | None,
    broadcast,
    stop=None,
    fastmath: ir.Attribute | None = None,
):
    """A linalg body on `arguments` (vectors of `lanes` elements, or scalars for None);
    returns the yielded values, the value map and the lookup it used. Values from outside
    the body go through `broadcast(value, lanes)` where vectors use them. Ops from `stop`
    on are not cloned; ops with fastmath flags take `fastmath` where given."""
    block = generic.regions[0].blocks[0]
    mapping = dict(zip(block.arguments, arguments, strict=True))

    def lookup(value):
        if value in mapping:
            return mapping[value]
        return broadcast(value, lanes) if lanes is not None else value

    for view in block.operations:
        op = view.operation
        if stop is not None and op == stop:
            return None, mapping, lookup
        if op.name == "linalg.yield":
            return [lookup(v) for v in op.operands], mapping, lookup
        if len(op.regions) or op.name == "linalg.index":
            raise TransformFailure(f"'{op.name}' in a kernel body")
        if not op.operands:  # a constant: as a scalar, broadcast where vectors use it
            scalar = ir.Operation.create(
                op.name, results=[op.results[0].type], attributes=attributes_of(op)
            ).results[0]
            mapping[op.results[0]] = broadcast(scalar, lanes) if lanes else scalar
            continue
        types = [
            ir.VectorType.get([lanes], r.type) if lanes is not None else r.type for r in op.results
        ]
        attributes = attributes_of(op)
        if fastmath is not None and "fastmath" in attributes:
            attributes["fastmath"] = fastmath
        clone = ir.Operation.create(
            op.name,
            results=types,
            operands=[lookup(v) for v in op.operands],
            attributes=attributes,
            loc=op.location,
        )
        for old, new in zip(op.results, clone.results, strict=True):
            mapping[old] = new
    raise TransformFailure("a linalg body without a yield")


class Broadcasts:
    """`vector.broadcast`s of scalars, each made once per kernel and reused."""

    def __init__(self):
        self._made: dict = {}

    def __call__(self, value: ir.Value, lanes: int) -> ir.Value:
        key = (value, lanes)
        if key not in self._made:
            self._made[key] = vector.BroadcastOp(
                ir.VectorType.get([lanes], value.type), value
            ).result
        return self._made[key]


def shuffle_xor(value: ir.Value, offset: int) -> ir.Value:
    """`value` of the lane whose id differs from this one's in the bits of `offset`."""
    i32 = ir.IntegerType.get_signless(32)
    width = arith.ConstantOp(i32, 32).result  # the whole warp
    offset_value = arith.ConstantOp(i32, offset).result
    return gpu.ShuffleOp(value, offset_value, width, gpu.ShuffleMode.XOR).results[0]


def when(condition: ir.Value | None, build) -> None:
    """`build()` behind `scf.if condition` (directly where the condition is None: always)."""
    if condition is None:
        build()
        return
    branch = scf.IfOp(condition)
    with ir.InsertionPoint(branch.then_block):
        build()
        scf.YieldOp([])


def _align(op: ir.Operation, buffer: ir.Value, vector_type: ir.VectorType) -> None:
    alignment = vector_alignment(ir.MemRefType(buffer.type), vector_type)
    if alignment:
        op.attributes["alignment"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), alignment)


def aligned_load(vector_type: ir.VectorType, buffer: ir.Value, indices) -> ir.Value:
    """A vector load at whole-vector indices, carrying the alignment that makes it one
    16-byte access (the NVPTX backend splits accesses it cannot prove aligned)."""
    load = vector.LoadOp(vector_type, buffer, indices)
    _align(load.operation, buffer, vector_type)
    return load.result


def aligned_store(value: ir.Value, buffer: ir.Value, indices) -> None:
    store = vector.StoreOp(value, buffer, indices)
    _align(store.operation, buffer, ir.VectorType(value.type))


def guarded_load(vector_type, buffer, indices, condition: ir.Value | None) -> ir.Value:
    """`aligned_load` where `condition` holds (always where it is None), else zeros."""
    if condition is None:
        return aligned_load(vector_type, buffer, indices)
    branch = scf.IfOp(condition, [vector_type], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([aligned_load(vector_type, buffer, indices)])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([splat(0.0, vector_type)])
    return branch.results[0]


# Shared memory takes scalar accesses: the vector dialect's lowering to LLVM knows no GPU
# address spaces, and the NVPTX backend merges neighbouring scalars into vector accesses.


def _shifted(indices: list, axis: int, j: int) -> list:
    moved = list(indices)
    moved[axis] = arith.addi(moved[axis], index_constant(j))
    return moved


def shared_load(vector_type: ir.VectorType, shared: ir.Value, indices, axis: int = -1):
    """A vector of the neighbours along `axis` of a workgroup buffer, from `indices` on."""
    elements = [
        memref.LoadOp(shared, _shifted(indices, axis, j)).result
        for j in range(vector_type.shape[0])
    ]
    return vector.FromElementsOp(vector_type, elements).result


def shared_store(value: ir.Value, shared: ir.Value, indices, axis: int = -1) -> None:
    """A vector into the neighbours along `axis` of a workgroup buffer, from `indices` on."""
    for j in range(ir.VectorType(value.type).shape[0]):
        element = vector.ExtractOp(value, [], [j]).result
        memref.StoreOp(element, shared, _shifted(indices, axis, j))
