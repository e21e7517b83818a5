"""Attention on tensor cores: the `gpu_attention` strategy of `--gpu-tile` with `mma =
"mma.sync"` (f16/bf16 q, k and v on sm_80 and later), FlashAttention-2's form on PTX's
m16n8k16 steps.

- A block owns `BM` query rows of one (batch, head), its warps `BM / warps` each: one or
  more m16 tiles (`block_threads` = 32 x the warps). cp.async copies the block's Q tile and
  then each `BN`-key tile of K and V into padded dynamic shared memory (rows 16 bytes
  longer, so that ldmatrix's eight row reads fall in different banks), the next tile while
  the warps compute on this one (two slots).
- A warp's Q fragments are loaded once (ldmatrix). Per key tile, S = Q K^T is mma.sync with
  K's rows as B's columns (ldmatrix as they lie; each fragment serves all of the warp's m16
  tiles); on the tiles a causal mask or the end of the keys cuts, masked scores are -inf.
  A lane holds 2 rows' scores of each m16 tile (g and g + 8, lane = 4 g + t): their running
  maxima take 2 shuffles across the 4 lanes of a row. The scores are kept in base 2
  (scale log2(e) folded into one FMA with the maximum), so P = 2^(s - m) is one
  `ex2.approx`. P stays in registers, where the accumulator layout of two n8 score tiles is
  the A operand of a k16 step: rounded to the input type, P feeds O += P V (V's rows
  transposed by ldmatrix). The running sums stay per lane (every lane of a row rescales by
  the same 2^(m_old - m_new)) and are summed across the row at the end.
- The normalized O goes through shared memory (f32, the staging space reused) to the
  attention epilogue, 4 columns a thread, stored once.
- A causal block stops at its last key and the grid starts with the last rows' blocks, as
  in `gpu_attention_kernels`. P rounded to f16/bf16 before the second product is what
  FlashAttention and PyTorch's SDPA kernels do.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, gpu, nvgpu, scf, vector
from mlir.dialects import math as mmath

from .gpu_attention_kernels import LANES, AttentionKernel
from .gpu_codegen import erase_linalg, shared_load, shuffle_xor, when
from .gpu_map_loops import index_constant
from .gpu_mma import (
    ACCESS_BYTES,
    MMA_SHAPE,
    LdMatrix,
    b_pair,
    copy_tile_async,
    dynamic_shared,
    half_register,
    mma_sync,
    registers,
    shared_view,
)
from .tile_lower import TransformFailure

WARP_ROWS = 16  # query rows of one m16 tile
_SLOTS = 2  # key tiles in shared memory: the one being read, the next being copied
_F32_PAD = 8  # words of padding per row of the f32 output tile: a warp's 8-byte stores
_HALF = ("f16", "bf16")
_EXP2_FLAGS = "#arith.fastmath<afn>"  # ex2.approx (math-to-ptx)


class MmaAttentionKernel(AttentionKernel):
    """Generates the tensor-core launch of one attention kernel; `TransformFailure` when it
    is not one or its configuration does not fit."""

    def _configure(self, config: dict) -> None:
        self.bm, self.bn = config["block_tile"]
        self.threads = config["block_threads"]
        elements = {str(ir.MemRefType(v.type).element_type) for v in (self.q, self.k, self.v)}
        if len(elements) != 1 or not elements <= set(_HALF):
            raise TransformFailure(f"mma.sync attention of {', '.join(sorted(elements))} q, k, v")
        self.element = ir.MemRefType(self.q.type).element_type
        warps, left = divmod(self.threads, 32)
        if left or not warps or self.bm % (warps * WARP_ROWS) or self.bn % 16:
            raise TransformFailure(
                f"mma.sync attention: {self.threads} threads for blocks of {self.bm} rows (whole"
                f" {WARP_ROWS}-row tiles a warp) and key tiles of {self.bn} (whole 16s)"
            )
        self.m_tiles = self.bm // (warps * WARP_ROWS)  # a warp's m16 tiles
        if self.d % MMA_SHAPE[2] or self.dv % 16:
            raise TransformFailure(f"mma.sync attention of head dims {self.d} and {self.dv}")
        chunk = self._chunk()
        copies = [self.bm * self.d, self.bn * self.d, self.bn * self.dv]
        if any(count // chunk % self.threads for count in copies):
            raise TransformFailure(f"tiles that {self.threads} threads do not copy evenly")

    def _chunk(self) -> int:
        return ACCESS_BYTES // self._bytes()

    # -- shared memory ---------------------------------------------------------------------

    def _rows(self, dim: int) -> int:
        """A staged row's elements: 16 bytes of padding."""
        return dim + self._chunk()

    def _bytes(self) -> int:
        return ir.FloatType(self.element).width // 8

    def _q_bytes(self) -> int:
        return self.bm * self._rows(self.d) * self._bytes()

    def _slot_bytes(self) -> int:
        return self.bn * (self._rows(self.d) + self._rows(self.dv)) * self._bytes()

    def shared_bytes(self) -> int:
        staged = self._q_bytes() + _SLOTS * self._slot_bytes()
        return max(staged, self.bm * (self.dv + _F32_PAD) * 4)  # O's f32 tile reuses it

    def _slot_views(self, slot: ir.Value) -> tuple[ir.Value, ir.Value]:
        base = arith.addi(
            index_constant(self._q_bytes()), arith.muli(slot, index_constant(self._slot_bytes()))
        )
        k_view = shared_view(self.dynamic, base, [self.bn, self._rows(self.d)], self.element)
        v_base = arith.addi(base, index_constant(self.bn * self._rows(self.d) * self._bytes()))
        v_view = shared_view(self.dynamic, v_base, [self.bn, self._rows(self.dv)], self.element)
        return k_view, v_view

    # -- code ------------------------------------------------------------------------------

    def generate(self) -> None:
        self.row_tiles = math.ceil(self.s / self.bm)
        with ir.InsertionPoint(self.ops[-1]):
            one = index_constant(1)
            grid = (index_constant(self.b * self.h), index_constant(self.row_tiles), one)
            size = arith.ConstantOp(ir.IntegerType.get_signless(32), self.shared_bytes()).result
            launch = gpu.LaunchOp(
                grid, (index_constant(self.threads), one, one), dynamic_shared_memory_size=size
            )
        body = launch.regions[0].blocks[0]
        with ir.InsertionPoint(body):
            self._mma_block(body.arguments)
            gpu.TerminatorOp()
        erase_linalg(self.ops)

    def _mma_block(self, ids) -> None:
        c = index_constant
        self.thread = ids[3]
        self.batch_index = [arith.divui(ids[0], c(self.h)), arith.remui(ids[0], c(self.h))]
        # The last rows' blocks first: under a causal mask they see the most keys.
        self.m0 = arith.muli(arith.subi(c(self.row_tiles - 1), ids[1]), c(self.bm))
        self.dynamic = dynamic_shared()
        warp, lane = arith.divui(self.thread, c(32)), arith.remui(self.thread, c(32))
        self.warp_row = arith.muli(warp, c(self.m_tiles * WARP_ROWS))
        self.group, self.pair = arith.divui(lane, c(4)), arith.muli(arith.remui(lane, c(4)), c(2))
        self.ldmatrix = LdMatrix(lane, {"q": ("a", False), "k": ("b", False), "v": ("b", True)})
        q_view = shared_view(self.dynamic, c(0), [self.bm, self._rows(self.d)], self.element)
        tokens = self._copy(q_view, self.q, self.m0, self.s, self.bm, self.d)
        group = self._copy_keys(c(0), c(0), tokens)
        nvgpu.DeviceAsyncWaitOp(group, numGroups=0)
        gpu.BarrierOp()
        q = [
            [
                registers(self.ldmatrix(q_view, "q", c(kk), self._tile_row(i)))
                for kk in range(0, self.d, MMA_SHAPE[2])
            ]
            for i in range(self.m_tiles)
        ]
        f32 = ir.F32Type.get()
        rows = 2 * self.m_tiles  # a lane's rows
        initial = [arith.ConstantOp(f32, -math.inf).result] * rows
        initial += [arith.ConstantOp(f32, 0.0).result] * rows
        initial += [self._zero_fragment()] * (self.m_tiles * self.dv // MMA_SHAPE[1])
        keys_end = self._keys_end()
        loop = scf.ForOp(c(0), keys_end, c(self.bn), initial)
        with ir.InsertionPoint(loop.body):
            start = loop.induction_variable
            tile = arith.divui(start, c(self.bn))
            nvgpu.DeviceAsyncWaitOp(group, numGroups=0)
            gpu.BarrierOp()  # this tile has landed, and the other slot's readers are done
            following = arith.addi(start, c(self.bn))
            after = arith.addi(tile, c(1))

            def prefetch():
                self._copy_keys(following, arith.remui(after, c(_SLOTS)), [])

            when(arith.cmpi(arith.CmpIPredicate.ult, following, keys_end), prefetch)
            views = self._slot_views(arith.remui(tile, c(_SLOTS)))
            scf.YieldOp(self._tile(q, views, start, list(loop.inner_iter_args)))
        self._finish(list(loop.results))

    def _tile_row(self, i: int) -> ir.Value:
        """The first row (in the block) of the warp's m16 tile i."""
        return arith.addi(self.warp_row, index_constant(i * WARP_ROWS))

    def _row(self, i: int, h: int) -> ir.Value:
        """The block row of this lane's accumulators h (0: row g, 1: g + 8) of m16 tile i."""
        return arith.addi(self._tile_row(i), arith.addi(self.group, index_constant(8 * h)))

    @staticmethod
    def _rows_fragment(first: ir.Value, second: ir.Value) -> ir.Value:
        """A vector<2x2xf32> with `first` along the lane's row g and `second` along g + 8:
        a per-row factor in an accumulator fragment's layout."""
        fragment_type = ir.VectorType.get([2, 2], ir.F32Type.get())
        return vector.FromElementsOp(fragment_type, [first] * 2 + [second] * 2).result

    @staticmethod
    def _zero_fragment() -> ir.Value:
        f32 = ir.F32Type.get()
        fragment_type = ir.VectorType.get([2, 2], f32)
        return vector.BroadcastOp(fragment_type, arith.ConstantOp(f32, 0.0).result).result

    def _copy(self, view, source, origin: ir.Value, rows: int, count: int, dim: int) -> list:
        return copy_tile_async(
            view,
            source,
            self.batch_index,
            (rows, dim),
            (origin, index_constant(0)),
            (count, dim),
            self.thread,
            self.threads,
            self._chunk(),
        )

    def _copy_keys(self, start: ir.Value, slot: ir.Value, tokens: list) -> ir.Value:
        """cp.async of keys start..start+BN of K and V into `slot`, committed as one group
        with `tokens`; keys past the last are zeros."""
        k_view, v_view = self._slot_views(slot)
        tokens = tokens + self._copy(k_view, self.k, start, self.kv, self.bn, self.d)
        tokens += self._copy(v_view, self.v, start, self.kv, self.bn, self.dv)
        return nvgpu.DeviceAsyncCreateGroupOp(tokens).result

    def _tile(self, q: list, views, start: ir.Value, state: list) -> list:
        """The online softmax over one key tile: the state is each row's maximum (base 2),
        each row's sum (this lane's share), then O's fragments, m16 tile by m16 tile."""
        k_view, v_view = views
        c = index_constant
        element = str(self.element)
        n_step, k_step = MMA_SHAPE[1], MMA_SHAPE[2]
        rows = 2 * self.m_tiles
        maxima, totals, outputs = state[:rows], state[rows : 2 * rows], state[2 * rows :]
        per_tile = self.dv // n_step
        scores = [[self._zero_fragment()] * (self.bn // n_step) for _ in range(self.m_tiles)]
        for step in range(self.d // k_step):
            for j in range(0, self.bn // n_step, 2):
                loaded = self.ldmatrix(k_view, "k", c(step * k_step), c(j * n_step))
                for h, b in enumerate(b_pair(loaded)):
                    for i in range(self.m_tiles):
                        scores[i][j + h] = mma_sync(q[i][step], b, scores[i][j + h], element)
        weights = []
        for i in range(self.m_tiles):
            tile_scores = self._mask(scores[i], start, i)
            rescales, tile_weights = [], [[None, None] for _ in tile_scores]
            for h in range(2):
                r = 2 * i + h
                maxima[r], totals[r], rescale, row_weights = self._softmax_row(
                    [vector.ExtractOp(s, [], [h]).result for s in tile_scores], maxima[r], totals[r]
                )
                rescales.append(rescale)
                for j, weight in enumerate(row_weights):
                    tile_weights[j][h] = weight
            rescale = self._rows_fragment(*rescales)
            for e in range(per_tile):
                outputs[i * per_tile + e] = arith.mulf(outputs[i * per_tile + e], rescale)
            half_pair = ir.VectorType.get([2], self.element)
            weights.append(
                [[half_register(arith.truncf(half_pair, w)) for w in pair] for pair in tile_weights]
            )
        for step in range(self.bn // k_step):
            for e in range(0, per_tile, 2):
                loaded = self.ldmatrix(v_view, "v", c(step * k_step), c(e * n_step))
                for h, b in enumerate(b_pair(loaded)):
                    for i in range(self.m_tiles):
                        a = weights[i][2 * step] + weights[i][2 * step + 1]
                        index = i * per_tile + e + h
                        outputs[index] = mma_sync(a, b, outputs[index], element)
        return maxima + totals + outputs

    def _softmax_row(self, pairs: list, maximum: ir.Value, total: ir.Value):
        """One row's step of the online softmax over its score pairs (raw Q K^T, -inf where
        masked): the new maximum of scale log2(e) s, the rescaled sum with this lane's new
        weights, the rescale factor 2^(m_old - m_new) and the weights (vector<2xf32> each).
        While every key so far is masked the maximum stays -inf and shifts by 0."""
        f32 = ir.F32Type.get()
        flags = ir.Attribute.parse(_EXP2_FLAGS)
        scale = self.scale * math.log2(math.e)
        # max(scale s) is scale max(s) for a scale >= 0, scale min(s) below.
        kind = vector.CombiningKind.MAXNUMF if scale >= 0 else vector.CombiningKind.MINNUMF
        fold = arith.maxnumf if scale >= 0 else arith.minnumf
        extreme = None
        for pair in pairs:
            value = vector.ReductionOp(f32, kind, pair).result
            extreme = value if extreme is None else fold(extreme, value)
        for width in (1, 2):
            extreme = fold(extreme, shuffle_xor(extreme, width))
        scale_value = arith.ConstantOp(f32, scale).result
        new_maximum = arith.maxnumf(maximum, arith.mulf(extreme, scale_value))
        negative_infinity = arith.ConstantOp(f32, -math.inf).result
        unseen = arith.cmpf(arith.CmpFPredicate.OEQ, new_maximum, negative_infinity)
        shift = arith.select(unseen, arith.ConstantOp(f32, 0.0).result, new_maximum)
        rescale = mmath.exp2(arith.subf(maximum, shift), fastmath=flags)
        pair_type = ir.VectorType.get([2], f32)
        scale_pair = vector.BroadcastOp(pair_type, scale_value).result
        shift_pair = vector.BroadcastOp(pair_type, arith.negf(shift)).result
        total = arith.mulf(total, rescale)
        weights = []
        for pair in pairs:
            weight = mmath.exp2(mmath.fma(pair, scale_pair, shift_pair), fastmath=flags)
            weights.append(weight)
            total = arith.addf(total, vector.ReductionOp(f32, vector.CombiningKind.ADD, weight))
        return new_maximum, total, rescale, weights

    def _mask(self, scores: list, start: ir.Value, i: int) -> list:
        """m16 tile i's scores with -inf where a causal mask or the end of the keys cuts, on
        the key tiles where one does (an scf.if: most tiles need none)."""
        c = index_constant
        end = arith.addi(start, c(self.bn))
        cuts = []
        if self.causal_offset is not None:  # the tile's first row sees keys <= row + offset
            first = arith.addi(self.m0, self._tile_row(i))
            limit = arith.addi(first, c(self.causal_offset + 1))
            cuts.append(arith.cmpi(arith.CmpIPredicate.sgt, end, limit))
        if self.kv % self.bn:
            cuts.append(arith.cmpi(arith.CmpIPredicate.sgt, end, c(self.kv)))
        if not cuts:
            return scores
        cut = cuts[0] if len(cuts) == 1 else arith.ori(*cuts)
        branch = scf.IfOp(cut, [s.type for s in scores], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([self._masked_tile(s, i, j, start) for j, s in enumerate(scores)])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp(scores)
        return list(branch.results)

    def _masked_tile(self, fragment: ir.Value, i: int, j: int, start: ir.Value) -> ir.Value:
        c = index_constant
        f32 = ir.F32Type.get()
        negative_infinity = arith.ConstantOp(f32, -math.inf).result
        values = []
        for h in range(2):
            row = arith.addi(self.m0, self._row(i, h))
            for column in range(2):
                key = arith.addi(start, arith.addi(self.pair, c(j * MMA_SHAPE[1] + column)))
                masked = []
                if self.causal_offset is not None:
                    limit = arith.addi(row, c(self.causal_offset))
                    masked.append(arith.cmpi(arith.CmpIPredicate.sgt, key, limit))
                if self.kv % self.bn:
                    masked.append(arith.cmpi(arith.CmpIPredicate.uge, key, c(self.kv)))
                cut = masked[0] if len(masked) == 1 else arith.ori(*masked)
                value = vector.ExtractOp(fragment, [], [h, column]).result
                values.append(arith.select(cut, negative_infinity, value))
        return vector.FromElementsOp(ir.VectorType(fragment.type), values).result

    def _finish(self, state: list) -> None:
        """O divided by the row sums into shared memory (f32), then the epilogue 4 columns a
        thread."""
        c = index_constant
        f32 = ir.F32Type.get()
        rows = 2 * self.m_tiles
        totals, outputs = state[rows : 2 * rows], state[2 * rows :]
        inverses = []
        for total in totals:
            for width in (1, 2):
                total = arith.addf(total, shuffle_xor(total, width))
            inverses.append(arith.divf(arith.ConstantOp(f32, 1.0).result, total))
        gpu.BarrierOp()  # every warp is done with the staged tiles
        o_tile = shared_view(self.dynamic, c(0), [self.bm, self.dv + _F32_PAD], f32)
        per_tile = self.dv // MMA_SHAPE[1]
        for index, fragment in enumerate(outputs):
            i, e = divmod(index, per_tile)
            inverse = self._rows_fragment(inverses[2 * i], inverses[2 * i + 1])
            fragment = arith.mulf(fragment, inverse)
            column = arith.addi(self.pair, c(e * MMA_SHAPE[1]))
            for h in range(2):
                values = vector.ExtractOp(fragment, [], [h]).result
                vector.StoreOp(values, o_tile, [self._row(i, h), column])
        gpu.BarrierOp()
        per_row = self.dv // LANES
        chunk_type = ir.VectorType.get([LANES], f32)
        for first in range(0, self.bm * per_row, self.threads):
            index = arith.addi(self.thread, c(first))
            row = arith.divui(index, c(per_row))
            column = arith.muli(arith.remui(index, c(per_row)), c(LANES))
            chunk = shared_load(chunk_type, o_tile, [row, column])
            query = arith.addi(self.m0, row)
            inside = (
                arith.cmpi(arith.CmpIPredicate.ult, query, c(self.s)) if self.s % self.bm else None
            )
            self._store_chunk(chunk, query, column, inside)
