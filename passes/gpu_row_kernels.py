"""Row kernels on the GPU: the `gpu_rows` strategy of `--gpu-tile` (softmax, layer_norm,
rms_norm, and any kernel whose ops work row by row over the same rows).

A row kernel after bufferization is a sequence of linalg ops over `[rows..., cols]`: row
reductions (`[rows..., cols] -> [rows...]`), elementwise ops over whole rows that may read
row values (a max, a mean) and column vectors (gamma, beta), and ops on row values alone.
This module writes it as one launch in which `threads_per_row` threads (a warp, or a block)
own a row: each lane holds its share of the row in registers as `vector_size`-element chunks
(lane l has vectors l, l + threads, ...), loaded from global memory once with 16-byte
accesses; elementwise ops are the linalg bodies applied to the chunks; a reduction folds a
lane's chunks, then the warp's lanes through butterfly shuffles, then (a block per row) the
warps through shared memory. Only the buffers the kernel returns are stored, once: the
intermediate rows the linalg form wrote to memory stay in registers.
"""

from __future__ import annotations

import functools
import math

from mlir import ir
from mlir.dialects import arith, gpu, memref, vector

from .gpu_codegen import (
    Broadcasts,
    aligned_store,
    attributes_of,
    clone_body,
    erase_linalg,
    guarded_load,
    map_dims,
    shuffle_xor,
    splat,
    when,
)
from .gpu_map_loops import VIEWS, index_constant, launch
from .tile_lower import TransformFailure

WARP = 32
MAX_CHUNKS = 16  # vectors a lane keeps in registers; longer rows take the loop form

# A reduction body's last op, as (vector.reduction kind, identity).
_COMBINERS = {
    "arith.addf": (vector.CombiningKind.ADD, 0.0),
    "arith.mulf": (vector.CombiningKind.MUL, 1.0),
    "arith.maxnumf": (vector.CombiningKind.MAXNUMF, -math.inf),
    "arith.maximumf": (vector.CombiningKind.MAXIMUMF, -math.inf),
    "arith.minnumf": (vector.CombiningKind.MINNUMF, math.inf),
    "arith.minimumf": (vector.CombiningKind.MINIMUMF, math.inf),
}


class RowKernel:
    """Generates the launch of one row kernel; `TransformFailure` when it is not one."""

    def __init__(self, kernel: ir.Operation, config: dict):
        self.kernel = kernel
        self.body = kernel.regions[0].blocks[0]
        self.ops = [op.operation for op in self.body.operations]
        self.generics = [op for op in self.ops if op.name == "linalg.generic"]
        allowed = {"arith.constant", "memref.alloc", "memref.get_global", "linalg.generic"}
        allowed |= {"func.return", *VIEWS}
        for op in self.ops:
            if op.name not in allowed:
                raise TransformFailure(f"'{op.name}' in a row kernel")
        self._find_rows()
        self.lanes = config.get("vector_size", 1)
        while self.cols % self.lanes:
            self.lanes //= 2
        rows_per_block = config.get("rows_per_block", 1)
        self.block_threads = config.get("block_threads", WARP * rows_per_block)
        self.threads = self.block_threads // rows_per_block  # a row's threads
        if self.threads % WARP and self.threads > WARP:
            raise TransformFailure(f"{self.threads} threads a row is not whole warps")
        self.vectors = self.cols // self.lanes
        self.chunks = math.ceil(self.vectors / self.threads)
        if self.chunks > MAX_CHUNKS:
            raise TransformFailure(f"rows of {self.cols} take {self.chunks} vectors a lane")
        self.reductions = sum(1 for op in self.generics if self._is_reduction(op))
        self.state: dict = {}  # buffer -> ("full", [chunks]) or ("row", scalar)
        self.access: dict = {}  # buffer -> its indexing map's dims
        self.written: list = []
        self._broadcast = Broadcasts()

    # -- analysis --------------------------------------------------------------------------

    @staticmethod
    def _is_reduction(op: ir.Operation) -> bool:
        return any("reduction" in str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"]))

    def _find_rows(self) -> None:
        shapes = set()
        for op in self.generics:
            iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
            if self._is_reduction(op):
                if [("reduction" in it) for it in iterators] != [False] * (len(iterators) - 1) + [
                    True
                ]:
                    raise TransformFailure("a reduction over other than the innermost dim")
                shapes.add(tuple(self._domain(op)))
        if len(shapes) != 1:
            raise TransformFailure("not one row shape for the kernel's reductions")
        self.shape = list(shapes.pop())
        self.lead = self.shape[:-1]
        self.cols = self.shape[-1]
        self.rows = math.prod(self.lead)

    @staticmethod
    def _domain(op: ir.Operation) -> list[int]:
        """The iteration space's static extents, read off the operands."""
        extents: dict[int, int] = {}
        for value, dims in zip(op.operands, map_dims(op), strict=True):
            if not isinstance(value.type, ir.ShapedType):
                continue
            for extent, dim in zip(ir.ShapedType(value.type).shape, dims, strict=True):
                if dim is not None:
                    extents[dim] = extent
        return [extents[d] for d in range(len(extents))]

    def _kind(self, buffer: ir.Value, dims: list, full: bool) -> str:
        """How `buffer` is read or written through an indexing map of `dims` (positions in
        the rows' dims, None for a broadcast): "full" (a value per element of the row),
        "col" (the same row vector for every row: gamma), "row" (a value per row)."""
        lead = len(self.lead)
        if self.access.setdefault(buffer, dims) != dims:
            raise TransformFailure("a buffer accessed through two indexing maps")
        row_dims = dims[:-1] if full and dims and dims[-1] == lead else dims
        if any(d is not None and d >= lead for d in row_dims):
            raise TransformFailure(f"an operand indexed as {dims} in a row kernel")
        if row_dims is dims:
            return "row"
        return "full" if any(d is not None for d in row_dims) else "col"

    # -- code ------------------------------------------------------------------------------

    def generate(self) -> None:
        with ir.InsertionPoint(self.ops[-1]):
            self.launch, linear, work = launch(self.rows * self.threads, self.block_threads)
        if self.threads > WARP and self.reductions:
            self._shared = self._workgroup_buffer()
        with ir.InsertionPoint(work):
            threads = index_constant(self.threads)
            self.lane = arith.remui(linear, threads)
            row = arith.divui(linear, threads)
            self.row_index = []
            for extent in reversed(self.lead):
                self.row_index.insert(0, arith.remui(row, index_constant(extent)))
                row = arith.divui(row, index_constant(extent))
            self.vector_index = [
                arith.addi(index_constant(k * self.threads), self.lane) for k in range(self.chunks)
            ]
            self.reduction_slot = 0
            for op in self.generics:
                if self._is_reduction(op):
                    self._reduce(op)
                else:
                    self._elementwise(op)
            self._store_results()
        erase_linalg(self.ops)

    def _workgroup_buffer(self) -> ir.Value:
        warps = self.threads // WARP
        space = ir.Attribute.parse("#gpu.address_space<workgroup>")
        element = ir.F32Type.get()
        buffer_type = ir.MemRefType.get([self.reductions * warps], element, memory_space=space)
        body = self.launch.regions[0].blocks[0]
        argument = body.add_argument(buffer_type, self.launch.location)
        self.launch.attributes["workgroup_attributions"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), 1
        )
        return argument

    def _valid(self, k: int) -> ir.Value | None:
        """Whether this lane's chunk k lies in the row (None: always)."""
        if (k + 1) * self.threads <= self.vectors:
            return None
        return arith.cmpi(
            arith.CmpIPredicate.ult, self.vector_index[k], index_constant(self.vectors)
        )

    def _vector_type(self, element: ir.Type) -> ir.VectorType:
        return ir.VectorType.get([self.lanes], element)

    def _column(self, k: int) -> ir.Value:
        return arith.muli(self.vector_index[k], index_constant(self.lanes))

    def _load_chunks(self, buffer: ir.Value) -> list[ir.Value]:
        memref_type = ir.MemRefType(buffer.type)
        vector_type = self._vector_type(memref_type.element_type)
        chunks = []
        for k in range(self.chunks):
            indices = self._indices(buffer, self._column(k))
            chunks.append(guarded_load(vector_type, buffer, indices, self._valid(k)))
        return chunks

    def _indices(self, buffer: ir.Value, column: ir.Value | None = None) -> list[ir.Value]:
        """This row's indices into `buffer` (and `column`'s, for a row's elements), through
        the indexing map it was read or written with."""
        dims = self.access[buffer]
        if column is not None:
            dims = dims[:-1]
        zero = index_constant(0)
        indices = [zero if d is None else self.row_index[d] for d in dims]
        return indices if column is None else [*indices, column]

    def _read(self, buffer: ir.Value, kind: str):
        """A buffer's value for this row: registers, or loaded once from memory."""
        if kind == "col":
            if buffer not in self.state:
                self.state[buffer] = ("col", self._load_chunks(buffer))
            return self.state[buffer][1]
        if buffer in self.state:
            state_kind, value = self.state[buffer]
            if state_kind != kind:
                raise TransformFailure("a buffer read both as rows and as row values")
            return value
        if kind == "full":
            value = self._load_chunks(buffer)
        else:
            value = memref.LoadOp(buffer, self._indices(buffer)).result
        self.state[buffer] = (kind, value)
        return value

    def _write(self, buffer: ir.Value, kind: str, value) -> None:
        if kind == "col":
            raise TransformFailure("a row kernel writes a column vector")
        self.state[buffer] = (kind, value)
        if buffer not in self.written:
            self.written.append(buffer)

    def _elementwise(self, op: ir.Operation) -> None:
        dims = map_dims(op)
        domain = self._domain(op)
        full = domain == self.shape
        if not full and domain != self.lead:
            raise TransformFailure(f"an op over {domain} in a kernel of rows {self.shape}")
        block = op.regions[0].blocks[0]
        outputs = self._outputs(op)
        n_inputs = len(op.operands) - len(outputs)
        kinds = self._kinds(op, dims, full)
        # Outputs the body only writes have no value to read.
        read = [i < n_inputs or bool(list(arg.uses)) for i, arg in enumerate(block.arguments)]
        if not full:
            arguments = [
                (v if k == "scalar" else self._read(v, k)) if r else None
                for v, k, r in zip(op.operands, kinds, read, strict=True)
            ]
            results, _, _ = clone_body(op, arguments, None, self._broadcast)
            for buffer, result in zip(outputs, results, strict=True):
                self._write(buffer, "row", result)
            return
        new_chunks = [[] for _ in outputs]
        for k in range(self.chunks):
            arguments = [
                self._chunk_argument(v, kind, k) if r else None
                for v, kind, r in zip(op.operands, kinds, read, strict=True)
            ]
            results, _, _ = clone_body(op, arguments, self.lanes, self._broadcast)
            for chunks, result in zip(new_chunks, results, strict=True):
                chunks.append(result)
        for buffer, kind, chunks in zip(outputs, kinds[n_inputs:], new_chunks, strict=True):
            if kind != "full":
                raise TransformFailure("an elementwise op over rows writes a partial buffer")
            self._write(buffer, "full", chunks)

    def _kinds(self, op: ir.Operation, dims: list, full: bool) -> list[str]:
        return [
            self._kind(v, d, full) if isinstance(v.type, ir.ShapedType) else "scalar"
            for v, d in zip(op.operands, dims, strict=True)
        ]

    def _chunk_argument(self, value: ir.Value, kind: str, k: int) -> ir.Value:
        """An operand's value in this lane's chunk k: its vector, or a broadcast scalar."""
        if kind in ("full", "col"):
            return self._read(value, kind)[k]
        if kind == "row":
            return self._broadcast(self._read(value, "row"), self.lanes)
        return self._broadcast(value, self.lanes)

    @staticmethod
    def _outputs(op: ir.Operation) -> list[ir.Value]:
        segments = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])
        return list(op.operands)[segments[0] :]

    def _reduce(self, op: ir.Operation) -> None:
        outputs = self._outputs(op)
        if len(outputs) != 1:
            raise TransformFailure("a reduction with several results")
        block = op.regions[0].blocks[0]
        yield_op = list(block.operations)[-1].operation
        combiner = yield_op.operands[0].owner
        combiner = getattr(combiner, "operation", combiner)
        accumulator = block.arguments[-1]
        if (
            not isinstance(combiner, ir.Operation)
            or combiner.name not in _COMBINERS
            or accumulator not in list(combiner.operands)
            or len(list(accumulator.uses)) != 1
        ):
            raise TransformFailure("a reduction whose body is not a map and a known combiner")
        kind, identity = _COMBINERS[combiner.name]
        mapped_operand = [v for v in combiner.operands if v != accumulator][0]
        kinds = self._kinds(op, map_dims(op), True)
        partial = None
        for k in range(self.chunks):
            arguments = [
                self._chunk_argument(v, kind, k)
                for v, kind in zip(list(op.operands)[:-1], kinds[:-1], strict=True)
            ]
            _, _, lookup = clone_body(op, [*arguments, None], self.lanes, self._broadcast, combiner)
            mapped = lookup(mapped_operand)
            valid = self._valid(k)
            if valid is not None:
                mask = vector.BroadcastOp(
                    ir.VectorType.get([self.lanes], ir.IntegerType.get_signless(1)), valid
                ).result
                mapped = arith.select(mask, mapped, splat(identity, ir.VectorType(mapped.type)))
            partial = mapped if partial is None else self._combine(combiner, mapped, partial)
        element = ir.VectorType(partial.type).element_type
        total = vector.ReductionOp(element, kind, partial).result
        total = self._across_lanes(combiner, total)
        initial = self._read(outputs[0], "row")
        self._write(outputs[0], "row", self._combine(combiner, total, initial))

    @staticmethod
    def _combine(combiner: ir.Operation, a: ir.Value, b: ir.Value) -> ir.Value:
        attributes = attributes_of(combiner)
        return ir.Operation.create(
            combiner.name, results=[a.type], operands=[a, b], attributes=attributes
        ).results[0]

    def _across_lanes(self, combiner: ir.Operation, value: ir.Value) -> ir.Value:
        """The combination of `value` over a row's threads, in every thread. Shuffles and
        shared memory carry 32-bit values: narrower floats are combined as f32."""
        element = value.type
        f32 = ir.F32Type.get()
        if element != f32:
            value = arith.extf(f32, value)
        width = min(self.threads, WARP)
        offset = width // 2
        while offset:
            value = self._combine(combiner, value, shuffle_xor(value, offset))
            offset //= 2
        if self.threads > WARP:
            value = self._across_warps(combiner, value)
        return value if element == f32 else arith.truncf(element, value)

    def _across_warps(self, combiner: ir.Operation, value: ir.Value) -> ir.Value:
        """Each warp's lane 0 leaves its partial in shared memory (a slot per reduction, so
        no reduction waits for the readers of the one before); after a barrier every thread
        combines them."""
        warps = self.threads // WARP
        base = self.reduction_slot * warps
        self.reduction_slot += 1
        warp = arith.divui(self.lane, index_constant(WARP))
        first_lane = arith.cmpi(
            arith.CmpIPredicate.eq,
            arith.remui(self.lane, index_constant(WARP)),
            index_constant(0),
        )
        when(
            first_lane,
            lambda: memref.StoreOp(value, self._shared, [arith.addi(warp, index_constant(base))]),
        )
        gpu.BarrierOp()
        total = None
        for w in range(warps):
            part = memref.LoadOp(self._shared, [index_constant(base + w)]).result
            total = part if total is None else self._combine(combiner, total, part)
        return total

    def _store_results(self) -> None:
        arguments = list(self.body.arguments)
        for buffer in self.written:
            if buffer not in arguments:
                continue  # a temporary: it lived in registers
            kind, value = self.state[buffer]
            if kind == "full":
                for k, chunk in enumerate(value):
                    indices = self._indices(buffer, self._column(k))
                    store = functools.partial(aligned_store, chunk, buffer, indices)
                    when(self._valid(k), store)
            else:
                first = arith.cmpi(arith.CmpIPredicate.eq, self.lane, index_constant(0))
                indices = self._indices(buffer)
                when(first, functools.partial(memref.StoreOp, value, buffer, indices))


def realize_rows(kernel: ir.Operation, config: dict) -> None:
    RowKernel(kernel, config).generate()
