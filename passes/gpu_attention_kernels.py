"""Attention kernels on the GPU: the `gpu_attention` strategy of `--gpu-tile`.

`graph.attention` lowers to linalg as scores = Q K^T (a contraction over the head dim), a
scale and an optional causal mask on the scores, a softmax over the keys and the weighted sum
of V (a second contraction); half-precision inputs are read through `arith.extf` and computed
in f32, the result rounded by an epilogue. As linalg, the [B, H, S, KV] scores live in
memory. This module writes the kernel as one flash-style launch that never stores them:

- a block owns `BM` query rows of one (batch, head) (`block_tile[0]`); each thread holds
  `register_tile[0]` rows a block's stride apart, and `tpr` adjacent threads share each
  row: a thread keeps an interleaved share of the row's q (pre-scaled) and of its f32
  output accumulators in registers (thread t of a row has the 4-element chunks t, t + tpr,
  ...); every K or V chunk read from shared memory serves all of the thread's rows;
- the keys go by in tiles of `BN` rows of K and V, staged in shared memory as f32 through
  16-byte global loads; a causal block stops at the last key its rows see, and the grid
  starts with the blocks of the last rows (the longest);
- a tile's scores are dot products with K's rows from shared memory (a warp's rows read the
  same key: one broadcast), folded into an online softmax 8 to 16 keys at a time (fewer as
  a thread holds more rows): the running maximum rescales the sum and the accumulators by
  exp(m_old - m_new), as FlashAttention does;
- at the end each row is divided by its sum, goes through the epilogue's linalg bodies (the
  rounding to f16/bf16, a residual) and is stored once.

A kernel of any other form (a prologue computing q, k or v, a mask other than causal, ...)
raises `TransformFailure` and stays loops.
"""

from __future__ import annotations

import functools
import math

from mlir import ir
from mlir.dialects import arith, gpu, scf, vector
from mlir.dialects import math as mmath

from .gpu_codegen import (
    Broadcasts,
    aligned_store,
    clone_body,
    erase_linalg,
    guarded_load,
    iterator_kinds,
    map_dims,
    shared_load,
    shared_store,
    shuffle_xor,
    splat,
    when,
)
from .gpu_map_loops import VIEWS, index_constant
from .ir_query import constant_value, defining_op
from .tile_lower import TransformFailure

LANES = 4  # f32 accumulators and shared-memory reads: 16 bytes
CHUNK = 16  # keys between two rescalings of one row's accumulators (8 at least per thread)
_ACCESS_BYTES = 16
# Exponentials of x - max <= 0: no overflow, and results under 2^-126 may flush (softmax's).
_EXP_FLAGS = "#arith.fastmath<ninf,afn>"

# Indexing maps (dim positions) of the two contractions: (b, h, i, j, d) and (b, h, i, e, j).
_SCORES = ([0, 1, 2, 4], [0, 1, 3, 4], [0, 1, 2, 3])
_ROWS = [0, 1, 2, 3]
_CONTRACTION_BODY = {"arith.extf", "arith.mulf", "arith.addf", "linalg.yield"}
_SOFTMAX_BODY = {
    "arith.maxnumf",
    "arith.maximumf",
    "arith.subf",
    "arith.addf",
    "arith.mulf",
    "arith.divf",
    "arith.constant",
    "math.exp",
    "linalg.yield",
}


def _body_ops(op: ir.Operation) -> list[ir.Operation]:
    return [view.operation for view in op.regions[0].blocks[0].operations]


def _index_dim(value: ir.Value) -> int | None:
    """d where `value` is `linalg.index d`, possibly through an index_cast."""
    op = defining_op(value)
    if op is not None and op.name == "arith.index_cast":
        op = defining_op(op.operands[0])
    if op is None or op.name != "linalg.index":
        return None
    return ir.IntegerAttr(op.attributes["dim"]).value


def _is_fill(op: ir.Operation) -> bool:
    return len(op.operands) == 2 and not isinstance(op.operands[0].type, ir.ShapedType)


def _is_copy(op: ir.Operation) -> bool:
    """A generalized linalg.copy (bufferization copies a zero fill that two inits share)."""
    names = [o.name for o in _body_ops(op)]
    return len(op.operands) == 2 and names == ["linalg.yield"] and not _is_fill(op)


def _zero_before(buffer: ir.Value, generics: list) -> bool:
    """Whether the last of `generics` to write `buffer` leaves it zero: a fill with 0, or a
    copy of a buffer that is zero by then."""
    for position in range(len(generics) - 1, -1, -1):
        op = generics[position]
        if op.operands[-1] != buffer:
            continue
        if _is_fill(op):
            return constant_value(op.operands[0]) == 0.0
        return _is_copy(op) and _zero_before(op.operands[0], generics[:position])
    return False


def score_transform(generic: ir.Operation) -> tuple[float, int | None]:
    """(scale, causal offset) of the elementwise op on the scores: `s * scale`, and for a
    causal mask `-inf where j > i + offset`. `TransformFailure` for any other body."""
    block = generic.regions[0].blocks[0]
    result = _body_ops(generic)[-1].operands[0]
    offset = None
    select = defining_op(result)
    if select is not None and select.name == "arith.select":
        condition, masked, result = select.operands
        compare = defining_op(condition)
        if constant_value(masked) != -math.inf or compare is None or compare.name != "arith.cmpi":
            raise TransformFailure("a score mask other than a causal one")
        if ir.IntegerAttr(compare.attributes["predicate"]).value != 4:  # sgt
            raise TransformFailure("a score mask other than a causal one")
        key, bound = compare.operands
        offset = 0
        add = defining_op(bound)
        if add is not None and add.name == "arith.addi":
            bound, offset = add.operands[0], constant_value(add.operands[1])
        if _index_dim(key) != 3 or _index_dim(bound) != 2 or offset is None:
            raise TransformFailure("a score mask other than a causal one")
    if result == block.arguments[0]:
        return 1.0, offset
    multiply = defining_op(result)
    if (
        multiply is None
        or multiply.name != "arith.mulf"
        or multiply.operands[0] != block.arguments[0]
        or constant_value(multiply.operands[1]) is None
    ):
        raise TransformFailure("scores transformed other than scaled and masked")
    return constant_value(multiply.operands[1]), offset


class AttentionKernel:
    """Generates the launch of one attention kernel; `TransformFailure` when it is not one."""

    def __init__(self, kernel: ir.Operation, config: dict):
        self.body = kernel.regions[0].blocks[0]
        self.ops = [op.operation for op in self.body.operations]
        allowed = {"arith.constant", "memref.alloc", "memref.get_global", "linalg.generic"}
        allowed |= {"func.return", *VIEWS}
        for op in self.ops:
            if op.name not in allowed:
                raise TransformFailure(f"'{op.name}' in an attention kernel")
        self.generics = [op for op in self.ops if op.name == "linalg.generic"]
        self._analyze()
        self._configure(config)
        self._broadcast = Broadcasts()

    def _configure(self, config: dict) -> None:
        self.bm, self.bn = config.get("block_tile", [64, 64])
        self.threads = config.get("block_threads", self.bm)
        self.rows = (config.get("register_tile") or [1])[0]  # rows a thread
        self.tpr, remainder = divmod(self.threads * self.rows, self.bm)  # threads a row
        if remainder or not self.tpr or self.bm % self.rows or self.threads > 1024:
            raise TransformFailure(
                f"{self.threads} threads of {self.rows} rows for blocks of {self.bm} rows"
            )
        share = LANES * self.tpr
        if self.d % share or self.dv % share or self.tpr & (self.tpr - 1) or self.tpr > 32:
            raise TransformFailure(
                f"head dims {self.d} and {self.dv} in {self.tpr} threads' 4-element chunks"
            )
        self.chunk = min(self.bn, max(CHUNK // self.rows, 8))
        if self.bn % self.chunk:
            raise TransformFailure(f"key tiles of {self.bn} are not whole {self.chunk}-key steps")

    # -- analysis --------------------------------------------------------------------------

    def _analyze(self) -> None:
        contractions = [op for op in self.generics if "reduction" in iterator_kinds(op)]
        contractions = [op for op in contractions if len(iterator_kinds(op)) == 5]
        if len(contractions) != 2:
            raise TransformFailure("not two contractions (scores and values)")
        scores_op, values_op = contractions
        if tuple(map_dims(scores_op)) != _SCORES:
            raise TransformFailure("scores that are not Q K^T per batch and head")
        self.q, self.k, self.scores = scores_op.operands
        values_dims = map_dims(values_op)
        inputs = list(zip(values_op.operands[:-1], values_dims[:-1], strict=True))
        vs = [value for value, dims in inputs if dims == [0, 1, 4, 3]]
        others = [dims for value, dims in inputs if dims != [0, 1, 4, 3]]
        if len(vs) != 1 or values_dims[-1] != _ROWS or not others or others[0] != [0, 1, 2, 4]:
            raise TransformFailure("weighted values that are not P V per batch and head")
        if any(dims not in ([0, 1, 2, 4], [0, 1, 2]) for dims in others):
            raise TransformFailure("weighted values read other than the weights and row sums")
        self.v, self.out = vs[0], values_op.operands[-1]
        arguments = list(self.body.arguments)
        if any(value not in arguments for value in (self.q, self.k, self.v)):
            raise TransformFailure("q, k or v computed in the kernel (a prologue)")
        for op in (scores_op, values_op):
            if {o.name for o in _body_ops(op)} - _CONTRACTION_BODY:
                raise TransformFailure("a contraction body other than a multiply-add")
        first, last = self.generics.index(scores_op), self.generics.index(values_op)
        if not all(_is_fill(op) or _is_copy(op) for op in self.generics[:first]):
            raise TransformFailure("ops before the scores other than their zero fill")
        if not _zero_before(self.scores, self.generics[:first]):
            raise TransformFailure("scores not summed from zero")
        between = [op for op in self.generics[first + 1 : last] if not _is_fill(op)]
        if not between or list(between[0].operands)[:-1] != [self.scores]:
            raise TransformFailure("no scale or mask on the scores")
        self.scale, self.causal_offset = score_transform(between[0])
        for op in between[1:]:
            if {o.name for o in _body_ops(op)} - _SOFTMAX_BODY:
                raise TransformFailure("ops between the contractions other than a softmax")
        if not _zero_before(self.out, self.generics[:last]):
            raise TransformFailure("weighted values not summed from zero")
        self.epilogue = self.generics[last + 1 :]
        self.b, self.h, self.s, self.d = ir.MemRefType(self.q.type).shape
        self.kv, self.dv = ir.MemRefType(self.v.type).shape[2:]

    # -- code ------------------------------------------------------------------------------

    def generate(self) -> None:
        self.row_tiles = math.ceil(self.s / self.bm)
        with ir.InsertionPoint(self.ops[-1]):
            one = index_constant(1)
            grid = (index_constant(self.b * self.h), index_constant(self.row_tiles), one)
            launch = gpu.LaunchOp(grid, (index_constant(self.threads), one, one))
        body = launch.regions[0].blocks[0]
        space = ir.Attribute.parse("#gpu.address_space<workgroup>")
        f32 = ir.F32Type.get()
        for dim in (self.d, self.dv):
            tile_type = ir.MemRefType.get([self.bn, dim], f32, memory_space=space)
            body.add_argument(tile_type, launch.location)
        self.k_tile, self.v_tile = body.arguments[-2:]
        launch.attributes["workgroup_attributions"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), 2
        )
        with ir.InsertionPoint(body):
            self._block(body.arguments)
            gpu.TerminatorOp()
        erase_linalg(self.ops)

    def _block(self, ids) -> None:
        self.thread = ids[3]
        head = ids[0]
        self.batch_index = [
            arith.divui(head, index_constant(self.h)),
            arith.remui(head, index_constant(self.h)),
        ]
        # The last rows' blocks first: under a causal mask they see the most keys.
        tile = arith.subi(index_constant(self.row_tiles - 1), ids[1])
        self.m0 = arith.muli(tile, index_constant(self.bm))
        tpr = index_constant(self.tpr)
        group = arith.divui(self.thread, tpr)
        part = arith.remui(self.thread, tpr)
        # A thread's rows are a block's stride apart: a warp's loads of one row index are
        # neighbouring rows.
        stride = self.bm // self.rows
        self.row_ids = [
            arith.addi(self.m0, arith.addi(group, index_constant(r * stride)))
            for r in range(self.rows)
        ]
        self.q_columns, self.v_columns = (
            [
                arith.muli(arith.addi(index_constant(c * self.tpr), part), index_constant(LANES))
                for c in range(dim // (LANES * self.tpr))
            ]
            for dim in (self.d, self.dv)
        )
        self.row_inside = [
            arith.cmpi(arith.CmpIPredicate.ult, row, index_constant(self.s))
            if self.s % self.bm
            else None
            for row in self.row_ids
        ]
        f32 = ir.F32Type.get()
        scale = splat(self.scale, ir.VectorType.get([LANES], f32))
        q = []
        for r in range(self.rows):
            chunks = [self._load_row(self.q, r, column) for column in self.q_columns]
            q.append([arith.mulf(c, scale) for c in chunks] if self.scale != 1.0 else chunks)
        zero = splat(0.0, ir.VectorType.get([LANES], f32))
        initial = [arith.ConstantOp(f32, -math.inf).result, arith.ConstantOp(f32, 0.0).result]
        state = (initial + [zero] * len(self.v_columns)) * self.rows
        step = index_constant(self.bn)
        loop = scf.ForOp(index_constant(0), self._keys_end(), step, state)
        with ir.InsertionPoint(loop.body):
            gpu.BarrierOp()  # the tiles' last readers are done
            self._stage_tile(self.k, self.k_tile, loop.induction_variable)
            self._stage_tile(self.v, self.v_tile, loop.induction_variable)
            gpu.BarrierOp()
            scf.YieldOp(self._tile(q, loop.induction_variable, list(loop.inner_iter_args)))
        for r, (_, total, *accumulators) in enumerate(self._per_row(list(loop.results))):
            one = arith.ConstantOp(f32, 1.0).result
            inverse = self._broadcast(arith.divf(one, total), LANES)
            self._store(r, [arith.mulf(chunk, inverse) for chunk in accumulators])

    def _per_row(self, state: list) -> list[list]:
        """The loop state split per row: [maximum, sum, accumulators...] each."""
        width = 2 + len(self.v_columns)
        return [state[r * width : (r + 1) * width] for r in range(self.rows)]

    def _keys_end(self) -> ir.Value:
        """Where this block's key loop ends: every key, or (causal) one past the last key
        its last row sees."""
        if self.causal_offset is None:
            return index_constant(self.kv)
        seen = arith.addi(self.m0, index_constant(self.bm + self.causal_offset))
        seen = arith.maxsi(seen, index_constant(0))
        return arith.minsi(seen, index_constant(self.kv))

    def _load_row(self, buffer: ir.Value, r: int, column: ir.Value) -> ir.Value:
        """LANES elements of this thread's row r, as f32 (zeros past the last row)."""
        element = ir.MemRefType(buffer.type).element_type
        indices = [*self.batch_index, self.row_ids[r], column]
        vector_type = ir.VectorType.get([LANES], element)
        return self._to_f32(guarded_load(vector_type, buffer, indices, self.row_inside[r]))

    @staticmethod
    def _to_f32(chunk: ir.Value) -> ir.Value:
        vector_type = ir.VectorType(chunk.type)
        if str(vector_type.element_type) == "f32":
            return chunk
        return arith.extf(ir.VectorType.get(vector_type.shape, ir.F32Type.get()), chunk)

    def _stage_tile(self, source: ir.Value, tile: ir.Value, start: ir.Value) -> None:
        """Rows start..start+BN of K or V into shared memory as f32, 16 bytes a load;
        rows past the last key are zeros."""
        element = ir.MemRefType(source.type).element_type
        dim = ir.MemRefType(source.type).shape[-1]
        width = ir.FloatType(element).width
        lanes = math.gcd(_ACCESS_BYTES * 8 // width, dim)
        per_row = dim // lanes
        total = self.bn * per_row
        for step in range(math.ceil(total / self.threads)):
            index = arith.addi(self.thread, index_constant(step * self.threads))
            row = arith.divui(index, index_constant(per_row))
            column = arith.muli(arith.remui(index, index_constant(per_row)), index_constant(lanes))
            key = arith.addi(start, row)
            inside = None
            if self.kv % self.bn:
                inside = arith.cmpi(arith.CmpIPredicate.ult, key, index_constant(self.kv))
            indices = [*self.batch_index, key, column]

            def stage(row=row, column=column, inside=inside, indices=indices):
                loaded = guarded_load(ir.VectorType.get([lanes], element), source, indices, inside)
                shared_store(self._to_f32(loaded), tile, [row, column])

            partial = (step + 1) * self.threads > total
            when(
                arith.cmpi(arith.CmpIPredicate.ult, index, index_constant(total))
                if partial
                else None,
                stage,
            )

    def _tile(self, q: list, start: ir.Value, state: list) -> list:
        """The online softmax over one staged tile of keys, `chunk` keys a step."""
        keys, step = index_constant(self.bn), index_constant(self.chunk)
        loop = scf.ForOp(index_constant(0), keys, step, state)
        with ir.InsertionPoint(loop.body):
            offset = loop.induction_variable
            scores = [self._scores(q, offset, start, j) for j in range(self.chunk)]
            by_row = [[key[r] for key in scores] for r in range(self.rows)]
            scf.YieldOp(self._fold(by_row, offset, list(loop.inner_iter_args)))
        return list(loop.results)

    def _scores(self, q: list, offset: ir.Value, start: ir.Value, j: int) -> list:
        """Each row's (scaled) score of key start + offset + j, -inf where it is masked: K's
        chunks are loaded once for all of the thread's rows."""
        f32 = ir.F32Type.get()
        vector_type = ir.VectorType.get([LANES], f32)
        key_row = arith.addi(offset, index_constant(j))
        totals = [splat(0.0, vector_type)] * self.rows
        for c, column in enumerate(self.q_columns):
            key = shared_load(vector_type, self.k_tile, [key_row, column])
            totals = [vector.FMAOp(q[r][c], key, t).result for r, t in enumerate(totals)]
        key = arith.addi(start, key_row)
        scores = []
        for r, total in enumerate(totals):
            score = vector.ReductionOp(f32, vector.CombiningKind.ADD, total).result
            width = self.tpr // 2
            while width:
                score = arith.addf(score, shuffle_xor(score, width))
                width //= 2
            masked = self._masked(key, r)
            if masked is not None:
                score = arith.select(masked, arith.ConstantOp(f32, -math.inf).result, score)
            scores.append(score)
        return scores

    def _masked(self, key: ir.Value, r: int) -> ir.Value | None:
        """Whether row r does not see `key` (None: it sees every key it is given)."""
        if self.causal_offset is not None:
            limit = arith.addi(self.row_ids[r], index_constant(self.causal_offset))
            return arith.cmpi(arith.CmpIPredicate.sgt, key, limit)
        if self.kv % self.bn:
            return arith.cmpi(arith.CmpIPredicate.uge, key, index_constant(self.kv))
        return None

    def _fold(self, scores: list, offset: ir.Value, state: list) -> list:
        """Each row's running maximum, sum and accumulators after its `scores` (keys
        offset... of the tile): m' = max(m, s), l' = l e^(m - m') + sum e^(s - m'),
        o' = o e^(m - m') + sum e^(s - m') v. While every key so far is masked, m' = -inf and
        counts as 0. V's chunks are loaded once for all of the thread's rows."""
        f32 = ir.F32Type.get()
        vector_type = ir.VectorType.get([LANES], f32)
        flags = ir.Attribute.parse(_EXP_FLAGS)
        rows, weights, rescales = [], [], []
        for row_scores, (maximum, total, *accumulators) in zip(
            scores, self._per_row(state), strict=True
        ):
            new_maximum = maximum
            for score in row_scores:
                new_maximum = arith.maxnumf(new_maximum, score)
            negative_infinity = arith.ConstantOp(f32, -math.inf).result
            unseen = arith.cmpf(arith.CmpFPredicate.OEQ, new_maximum, negative_infinity)
            shift = arith.select(unseen, arith.ConstantOp(f32, 0.0).result, new_maximum)
            rescale = mmath.exp(arith.subf(maximum, shift), fastmath=flags)
            row_weights = [mmath.exp(arith.subf(s, shift), fastmath=flags) for s in row_scores]
            total = arith.mulf(total, rescale)
            for weight in row_weights:
                total = arith.addf(total, weight)
            rows.append([new_maximum, total])
            weights.append([vector.BroadcastOp(vector_type, w).result for w in row_weights])
            rescale = vector.BroadcastOp(vector_type, rescale).result
            rescales.append([arith.mulf(chunk, rescale) for chunk in accumulators])
        for c, column in enumerate(self.v_columns):
            for j in range(self.chunk):
                key_row = arith.addi(offset, index_constant(j))
                value = shared_load(vector_type, self.v_tile, [key_row, column])
                for r in range(self.rows):
                    rescales[r][c] = vector.FMAOp(weights[r][j], value, rescales[r][c]).result
        return [value for r in range(self.rows) for value in rows[r] + rescales[r]]

    def _store(self, r: int, chunks: list) -> None:
        """The epilogue on this thread's chunks of its row r, each result stored once."""
        for chunk, column in zip(chunks, self.v_columns, strict=True):
            self._store_chunk(chunk, self.row_ids[r], column, self.row_inside[r])

    def _store_chunk(self, chunk, row: ir.Value, column: ir.Value, inside) -> None:
        """The epilogue on LANES output elements at (row, column), stored where `inside`."""
        arguments = list(self.body.arguments)
        indices = [*self.batch_index, row, column]
        values, written = {self.out: chunk}, [self.out]
        for op in self.epilogue:
            self._epilogue_op(op, inside, indices, values, written)
        for buffer in written:
            if buffer in arguments:  # temporaries lived in registers
                when(inside, functools.partial(aligned_store, values[buffer], buffer, indices))

    def _epilogue_op(self, op, inside, indices: list, values: dict, written: list) -> None:
        if "reduction" in iterator_kinds(op):
            raise TransformFailure("a reduction in attention's epilogue")
        dims = map_dims(op)
        n_inputs = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[0]
        block = op.regions[0].blocks[0]
        arguments = []
        for position, (value, value_dims) in enumerate(zip(op.operands, dims, strict=True)):
            if position >= n_inputs and not list(block.arguments[position].uses):
                arguments.append(None)  # an output only written
            elif not isinstance(value.type, ir.ShapedType):
                arguments.append(self._broadcast(value, LANES))
            elif value_dims == _ROWS:
                if value not in values:
                    element = ir.MemRefType(value.type).element_type
                    vector_type = ir.VectorType.get([LANES], element)
                    values[value] = guarded_load(vector_type, value, indices, inside)
                arguments.append(values[value])
            else:
                raise TransformFailure(f"an epilogue operand indexed as {value_dims}")
        yielded, _, _ = clone_body(op, arguments, LANES, self._broadcast)
        for buffer, value, value_dims in zip(
            list(op.operands)[n_inputs:], yielded, dims[n_inputs:], strict=True
        ):
            if value_dims != _ROWS:
                raise TransformFailure("an epilogue writes other than the output's shape")
            values[buffer] = value
            if buffer not in written:
                written.append(buffer)
