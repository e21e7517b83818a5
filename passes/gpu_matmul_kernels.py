"""Matmul kernels on the GPU: the `gpu_matmul` strategy of `--gpu-tile`.

A matmul kernel after bufferization is an optional fill of C, one contraction (linalg's
matmul, batch_matmul or a generic of the same form, operands of any float type accumulating
as its body says), and elementwise epilogue ops over C's shape (bias, activation, residual).
This module writes it as one launch, a block per `block_tile` (BM x BN) of C and per batch:

- `simt` (FMA units): each thread owns a 4 x 4 sub-tile of accumulators in registers; the K
  loop stages BK-deep slices of A (transposed) and B in shared memory.
- `wgmma` (sm_90a tensor cores, f16/bf16 in, f32 accumulators): one warpgroup a 128 x 128
  tile; the tensor memory accelerator (TMA) copies 128 x 64 slices of A and 64 x 128 of B
  into a ring of `stages` buffers in dynamic shared memory (128-byte swizzle), an mbarrier
  per buffer says when a copy has landed, and `nvgpu.warpgroup.mma` multiplies them. The
  TMA needs a descriptor of each operand, which the runtime encodes: the kernel reads it
  from a 128-byte workspace buffer that a call of a `strata.tensormap` function names
  (`launch_plan.py` turns those calls into requests in the artifact's plan). Kernels it does
  not fit (batches, a transposed B, rows not 16-byte multiples) take `mma.sync`.
- `mma.sync` (sm_80 and later tensor cores, f16/bf16 in, f32 accumulators): warps of
  `warp_tile` accumulators as m16n8k16 fragments. Slices of A and B sit in dynamic shared
  memory, rows padded by 16 bytes so that ldmatrix's eight row reads fall in different
  banks: `cp.async` copies them as they lie in memory into a ring of `stages` slots,
  `stages - 1` K steps ahead (rows that are not whole 16-byte chunks are staged through
  registers, A transposed, one step at a time); `ldmatrix` loads the fragments (transposed
  from k-major slices) and NVVM's mma.sync multiplies them. C goes through shared memory
  (reusing the ring) to the row epilogue. Other types take `simt`.

Either way the epilogue's linalg bodies run on C's rows (4 columns a thread) before each is
stored once.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, builtin, func, gpu, llvm, memref, nvgpu, nvvm, scf, vector

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
    when,
)
from .gpu_map_loops import VIEWS, index_constant
from .gpu_mma import (
    ACCESS_BYTES,
    MMA_SHAPE,
    TF32_SHAPE,
    LdMatrix,
    b_pair,
    copy_tile_async,
    dynamic_shared,
    less,
    mma_sync,
    registers,
    shared_view,
    tf32,
)
from .tile_lower import TransformFailure

THREAD_TILE = 4  # simt: 4 x 4 accumulators a thread; every path: 4-column (16-byte) accesses
SIMT_TILE = [64, 64, 16]
WARPGROUP = 128
WGMMA_TILE = (128, 128, 64)
TMA_BOX = 64  # elements of a 128-byte swizzled row: B's 128 columns are two boxes
TENSORMAP_BYTES = 128
MMA_FALLBACK_TILE = ([128, 128, 32], [64, 64])  # kernels wgmma does not take
TENSORMAP_ATTR = "strata.tensormap"
_HALF = ("f16", "bf16")


def _space() -> ir.Attribute:
    return ir.Attribute.parse("#gpu.address_space<workgroup>")


def _is_zero(value: ir.Value) -> bool:
    owner = value.owner
    op = getattr(owner, "operation", owner)
    if not isinstance(op, ir.Operation) or op.name != "arith.constant":
        return False
    attr = op.attributes["value"]
    return isinstance(attr, ir.FloatAttr) and ir.FloatAttr(attr).value == 0.0


def _i64(value: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


class MatmulKernel:
    """Generates the launch of one matmul kernel; `TransformFailure` when it is not one."""

    def __init__(self, kernel: ir.Operation, config: dict):
        self.kernel = kernel
        self.body = kernel.regions[0].blocks[0]
        self.ops = [op.operation for op in self.body.operations]
        allowed = {"arith.constant", "memref.alloc", "memref.get_global", "linalg.generic"}
        allowed |= {"func.return", *VIEWS}
        for op in self.ops:
            if op.name not in allowed:
                raise TransformFailure(f"'{op.name}' in a matmul kernel")
        generics = [op for op in self.ops if op.name == "linalg.generic"]
        contractions = [op for op in generics if "reduction" in iterator_kinds(op)]
        if len(contractions) != 1:
            raise TransformFailure(f"{len(contractions)} contractions in a matmul kernel")
        self.contraction = contractions[0]
        position = generics.index(self.contraction)
        self.prologue, self.epilogue = generics[:position], generics[position + 1 :]
        self._analyze()
        unit = config.get("mma", "simt")
        self.wgmma = unit == "wgmma" and self._wgmma_problem() is None
        tile = list(WGMMA_TILE) if self.wgmma else config.get("block_tile", SIMT_TILE)
        warp_tile = config.get("warp_tile")
        if unit == "wgmma" and not self.wgmma:
            tile, warp_tile = MMA_FALLBACK_TILE  # batches, a transposed B: mma.sync
        self.mma_sync = (
            unit != "simt" and not self.wgmma and self._mma_sync_problem(tile, warp_tile) is None
        )
        if unit != "simt" and not self.wgmma and not self.mma_sync:
            tile = SIMT_TILE  # tensor-core tiles are too large for FMA threads
        self.bm, self.bn, self.bk = tile
        self.stages = max(1, config.get("stages", 1))
        if self.bm % THREAD_TILE or self.bn % THREAD_TILE:
            raise TransformFailure(f"block tile {self.bm}x{self.bn} is not whole thread tiles")
        self.threads_n = self.bn // THREAD_TILE
        self.threads = (self.bm // THREAD_TILE) * self.threads_n
        if self.wgmma:
            self.threads = WARPGROUP
        elif self.mma_sync:
            self.wm, self.wn = warp_tile
            self.warps_n = self.bn // self.wn
            self.threads = (self.bm // self.wm) * self.warps_n * 32
        if self.threads > 1024 or self.threads % 32:
            raise TransformFailure(f"{self.threads} threads a block")
        self._broadcast = Broadcasts()
        self._columns: dict = {}

    # -- analysis --------------------------------------------------------------------------

    def _analyze(self) -> None:
        op = self.contraction
        iterators = iterator_kinds(op)
        if iterators.count("reduction") != 1:
            raise TransformFailure("a contraction over several dims")
        a_dims, b_dims, c_dims = map_dims(op)
        self.k_dim = iterators.index("reduction")
        if len(c_dims) < 2 or c_dims != sorted(c_dims) or None in c_dims:
            raise TransformFailure("C is not written in iteration order")
        self.m_dim, self.n_dim = c_dims[-2], c_dims[-1]
        self.batch_dims = c_dims[:-2]
        self.a, self.b, self.c = op.operands[0], op.operands[1], op.operands[2]
        c_shape = ir.MemRefType(self.c.type).shape
        self.batch = list(c_shape[:-2])
        self.m, self.n = c_shape[-2], c_shape[-1]
        a_shape = ir.MemRefType(self.a.type).shape
        self.k = a_shape[a_dims.index(self.k_dim)] if self.k_dim in a_dims else None
        if self.k is None or a_dims[-2:] != [self.m_dim, self.k_dim]:
            raise TransformFailure("A is not [..., M, K]")
        if b_dims[-2:] == [self.k_dim, self.n_dim]:
            self.b_transposed = False
        elif b_dims[-2:] == [self.n_dim, self.k_dim]:
            self.b_transposed = True
        else:
            raise TransformFailure("B is not [..., K, N] or [..., N, K]")
        self.a_batch = [self.batch_dims.index(d) for d in a_dims[:-2]]
        self.b_batch = [self.batch_dims.index(d) for d in b_dims[:-2]]
        for fill in self.prologue:
            if fill.operands[-1] != self.c or isinstance(fill.operands[0].type, ir.ShapedType):
                raise TransformFailure("a prologue other than a fill of C")
        self.element_a = ir.MemRefType(self.a.type).element_type
        self.element_b = ir.MemRefType(self.b.type).element_type
        self.element_c = ir.MemRefType(self.c.type).element_type

    def _tensor_core_problem(self, tf32: bool = False) -> str | None:
        """Why the kernel cannot run on f16/bf16 (with `tf32`, f32 too) tensor cores with f32
        accumulators, or None."""
        element = str(self.element_a)
        takes = (*_HALF, "f32") if tf32 else _HALF
        if element not in takes or str(self.element_b) != element:
            return f"{self.element_a} x {self.element_b} operands"
        if str(self.element_c) != "f32":
            return f"{self.element_c} accumulators"
        if not self.prologue:
            return "a C that is not filled first (the accumulators start from the fill)"
        body = [op.operation.name for op in self.contraction.regions[0].blocks[0].operations]
        if body[-1] != "linalg.yield" or set(body[:-1]) - {
            "arith.extf",
            "arith.mulf",
            "arith.addf",
        }:
            return "a contraction body other than a multiply-add"
        return None

    def _wgmma_problem(self) -> str | None:
        """Why the kernel cannot take the wgmma path, or None."""
        if self.batch or self.b_transposed:
            return "a batched matmul or a transposed B"
        if self.k % 8 or self.n % 8:
            return "rows of A or B that are not 16-byte multiples (the TMA's strides)"
        if self.prologue and not _is_zero(self.prologue[-1].operands[0]):
            return "a C that is not zero-filled first (the accumulators start at zero)"
        return self._tensor_core_problem()

    def _mma_sync_problem(self, tile: list, warp_tile: list | None) -> str | None:
        """Why the kernel cannot take the mma.sync path with these tiles, or None."""
        if not warp_tile:
            return "no warp tile"
        (bm, bn, bk), (wm, wn) = tile, warp_tile
        m, n, k = MMA_SHAPE
        if bm % wm or bn % wn or wm % m or wn % (2 * n) or bk % k:
            return f"tiles {tile} / {warp_tile} that are not whole m16n8k16 steps"
        return self._tensor_core_problem(tf32=True)

    # -- code ------------------------------------------------------------------------------

    def generate(self) -> None:
        shared_bytes = None
        if self.wgmma:
            shared_bytes = self._wgmma_shared_bytes()
        elif self.mma_sync:
            shared_bytes = self._mma_sync_shared_bytes()
        with ir.InsertionPoint(self.ops[-1]):
            if self.wgmma:
                self.tensormaps = [
                    self._tensormap_request(self.a, [self.bm, TMA_BOX]),
                    self._tensormap_request(self.b, [TMA_BOX, TMA_BOX]),
                ]
            grid = [
                index_constant(math.ceil(self.n / self.bn)),
                index_constant(math.ceil(self.m / self.bm)),
                index_constant(max(1, math.prod(self.batch))),
            ]
            one = index_constant(1)
            dynamic = (
                arith.ConstantOp(ir.IntegerType.get_signless(32), shared_bytes).result
                if shared_bytes
                else None
            )
            launch = gpu.LaunchOp(
                grid, (index_constant(self.threads), one, one), dynamic_shared_memory_size=dynamic
            )
        body = launch.regions[0].blocks[0]
        if not self.wgmma and not self.mma_sync:
            self._add_shared(launch)
        with ir.InsertionPoint(body):
            self.thread = body.arguments[3]
            self.m0 = arith.muli(body.arguments[1], index_constant(self.bm))
            self.n0 = arith.muli(body.arguments[0], index_constant(self.bn))
            self.batch_index = []
            rest = body.arguments[2]
            for extent in reversed(self.batch):
                self.batch_index.insert(0, arith.remui(rest, index_constant(extent)))
                rest = arith.divui(rest, index_constant(extent))
            if self.wgmma:
                self._wgmma()
            elif self.mma_sync:
                self._mma()
            else:
                self._simt()
            gpu.TerminatorOp()
        erase_linalg(self.ops)

    # -- simt ------------------------------------------------------------------------------

    def _add_shared(self, launch) -> None:
        body = launch.regions[0].blocks[0]
        self.a_shared = body.add_argument(
            ir.MemRefType.get([self.bk, self.bm], self.element_a, memory_space=_space()),
            launch.location,
        )
        self.b_shared = body.add_argument(
            ir.MemRefType.get([self.bk, self.bn], self.element_b, memory_space=_space()),
            launch.location,
        )
        launch.attributes["workgroup_attributions"] = _i64(2)

    def _simt(self) -> None:
        self.tx = arith.remui(self.thread, index_constant(self.threads_n))
        self.ty = arith.divui(self.thread, index_constant(self.threads_n))
        self.row_base = arith.addi(self.m0, arith.muli(self.ty, index_constant(THREAD_TILE)))
        self.row_step = 1
        self.col0 = arith.addi(self.n0, arith.muli(self.tx, index_constant(THREAD_TILE)))

        def multiply(values):
            for kk in range(min(self.bk, self.k)):
                values = self._multiply(kk, values)
            return values

        accumulators = self._staged_loop(self._initial(), multiply)
        self._epilogue(lambda i: accumulators[i], THREAD_TILE)

    def _tile_vector(self) -> ir.VectorType:
        return ir.VectorType.get([THREAD_TILE], self.element_c)

    def _initial(self) -> list[ir.Value]:
        if self.prologue:
            fill = self.prologue[-1]
            value = fill.operands[0]
            return [vector.BroadcastOp(self._tile_vector(), value).result] * THREAD_TILE
        return [self._load_tile_row(self.c, "full", i) for i in range(THREAD_TILE)]

    def _staged_loop(self, state: list[ir.Value], multiply) -> list[ir.Value]:
        """The K loop with each step's A and B slices staged through registers into
        `a_shared` and `b_shared`; `multiply(values)` folds a staged step into the loop
        state."""
        steps = math.ceil(self.k / self.bk)
        loop = scf.ForOp(index_constant(0), index_constant(steps), index_constant(1), state)
        with ir.InsertionPoint(loop.body):
            k0 = arith.muli(loop.induction_variable, index_constant(self.bk))
            self._stage_a(k0)
            self._stage_b(k0)
            gpu.BarrierOp()
            values = multiply(list(loop.inner_iter_args))
            gpu.BarrierOp()
            scf.YieldOp(values)
        return list(loop.results)

    @staticmethod
    def _below(index: ir.Value, bound: int, extent: int) -> ir.Value | None:
        """`index < bound`, or None where tiles of `extent` cover `bound` exactly."""
        return None if bound % extent == 0 else less(index, bound)

    @staticmethod
    def _and(*conditions):
        present = [c for c in conditions if c is not None]
        if not present:
            return None
        result = present[0]
        for c in present[1:]:
            result = arith.andi(result, c)
        return result

    def _stage(
        self,
        source,
        batch_positions,
        rows,
        cols,
        row_extent,
        col_extent,
        row0,
        col0,
        shared,
        transpose,
    ):
        """Copies a `row_extent` x `col_extent` tile of the 2-D slice `source[..., rows, cols]`
        at (row0, col0) into `shared` ([col][row] when `transpose`), zeros outside."""
        lanes = 4 if cols % 4 == 0 else 2 if cols % 2 == 0 else 1
        vector_type = ir.VectorType.get([lanes], ir.MemRefType(source.type).element_type)
        per_row = col_extent // lanes
        count = row_extent * per_row
        for step in range(math.ceil(count / self.threads)):
            linear = arith.addi(self.thread, index_constant(step * self.threads))
            r = arith.divui(linear, index_constant(per_row))
            c = arith.muli(arith.remui(linear, index_constant(per_row)), index_constant(lanes))
            row, col = arith.addi(row0, r), arith.addi(col0, c)
            partial_step = (step + 1) * self.threads > count
            inside = self._and(
                self._below(row, rows, row_extent),
                self._below(col, cols, col_extent),
                less(linear, count) if partial_step else None,
            )
            indices = [self.batch_index[p] for p in batch_positions] + [row, col]
            value = guarded_load(vector_type, source, indices, inside)
            store_guard = less(linear, count) if partial_step else None
            self._store_shared(value, shared, r, c, transpose, store_guard)

    @staticmethod
    def _store_shared(value, shared, r, c, transpose, guard) -> None:
        indices = [c, r] if transpose else [r, c]
        when(guard, lambda: shared_store(value, shared, indices, axis=0 if transpose else 1))

    def _stage_a(self, k0) -> None:
        self._stage(
            self.a,
            self.a_batch,
            self.m,
            self.k,
            self.bm,
            self.bk,
            self.m0,
            k0,
            self.a_shared,
            transpose=True,
        )

    def _stage_b(self, k0) -> None:
        if self.b_transposed:
            self._stage(
                self.b,
                self.b_batch,
                self.n,
                self.k,
                self.bn,
                self.bk,
                self.n0,
                k0,
                self.b_shared,
                transpose=True,
            )
        else:
            self._stage(
                self.b,
                self.b_batch,
                self.k,
                self.n,
                self.bk,
                self.bn,
                k0,
                self.n0,
                self.b_shared,
                transpose=False,
            )

    def _multiply(self, kk: int, accumulators: list[ir.Value]) -> list[ir.Value]:
        kk_index = index_constant(kk)
        a_type = ir.VectorType.get([THREAD_TILE], self.element_a)
        b_type = ir.VectorType.get([THREAD_TILE], self.element_b)
        tile = index_constant(THREAD_TILE)
        a = shared_load(a_type, self.a_shared, [kk_index, arith.muli(self.ty, tile)])
        b = shared_load(b_type, self.b_shared, [kk_index, arith.muli(self.tx, tile)])
        updated = []
        for i, accumulator in enumerate(accumulators):
            a_i = vector.BroadcastOp(a_type, vector.ExtractOp(a, [], [i]).result).result
            # Multiply-adds fuse into FMAs (one rounding, as every GPU BLAS computes them).
            results, _, _ = clone_body(
                self.contraction,
                [a_i, b, accumulator],
                THREAD_TILE,
                self._broadcast,
                fastmath=ir.Attribute.parse("#arith.fastmath<contract>"),
            )
            updated.append(results[0])
        return updated

    # -- epilogue --------------------------------------------------------------------------

    def _row(self, i: int) -> ir.Value:
        """Row i of this thread's part of the tile: `row_base + i * row_step`."""
        return arith.addi(self.row_base, index_constant(i * self.row_step))

    def _row_inside(self, i: int) -> ir.Value | None:
        return self._below(self._row(i), self.m, self.bm)

    def _tile_indices(self, buffer: ir.Value, kind: str, i: int, column: ir.Value) -> list:
        if kind == "col":
            return [column]
        rank = ir.MemRefType(buffer.type).rank
        return self.batch_index[len(self.batch_index) - (rank - 2) :] + [self._row(i), column]

    def _load_tile_row(self, buffer: ir.Value, kind: str, i: int) -> ir.Value:
        """Row i of this thread's tile of a C-shaped buffer ("full"), or of a column vector
        ("col"), zeros outside C."""
        element = ir.MemRefType(buffer.type).element_type
        vector_type = ir.VectorType.get([THREAD_TILE], element)
        row_inside = self._row_inside(i) if kind == "full" else None
        if self.n % THREAD_TILE == 0:
            inside = self._and(row_inside, self._below(self.col0, self.n, self.bn))
            indices = self._tile_indices(buffer, kind, i, self.col0)
            return guarded_load(vector_type, buffer, indices, inside)
        # Rows of C are not whole vectors: element by element, each behind its bound.
        elements = []
        for j in range(THREAD_TILE):
            column = arith.addi(self.col0, index_constant(j))
            inside = self._and(row_inside, less(column, self.n))
            indices = self._tile_indices(buffer, kind, i, column)
            branch = scf.IfOp(inside, [element], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.YieldOp([memref.LoadOp(buffer, indices).result])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([arith.ConstantOp(element, 0.0).result])
            elements.append(branch.results[0])
        return vector.FromElementsOp(vector_type, elements).result

    def _store_tile_row(self, chunk: ir.Value, buffer: ir.Value, i: int) -> None:
        if self.n % THREAD_TILE == 0:
            pieces = [(chunk, self.col0, self._below(self.col0, self.n, self.bn))]
        else:
            pieces = []
            for j in range(THREAD_TILE):
                column = arith.addi(self.col0, index_constant(j))
                value = vector.ExtractOp(chunk, [], [j]).result
                pieces.append((value, column, less(column, self.n)))
        for value, column, column_inside in pieces:
            inside = self._and(self._row_inside(i), column_inside)
            indices = self._tile_indices(buffer, "full", i, column)

            def store(value=value, indices=indices):
                if isinstance(value.type, ir.VectorType):
                    aligned_store(value, buffer, indices)
                else:
                    memref.StoreOp(value, buffer, indices)

            when(inside, store)

    def _epilogue(self, c_row, rows: int) -> None:
        """The epilogue ops on each of this thread's `rows` rows of C (`c_row(i)`: C's value
        there, 4 columns); each row's results are stored as soon as they are computed."""
        kernel_arguments = list(self.body.arguments)
        for i in range(rows):
            values, written = {self.c: c_row(i)}, [self.c]
            for op in self.epilogue:
                self._epilogue_op(op, i, values, written)
            for buffer in written:
                if buffer in kernel_arguments:  # temporaries lived in registers
                    self._store_tile_row(values[buffer], buffer, i)

    def _epilogue_op(self, op: ir.Operation, i: int, values: dict, written: list) -> None:
        if "reduction" in iterator_kinds(op):
            raise TransformFailure("a reduction in a matmul's epilogue")
        dims = map_dims(op)
        rank = len(self.batch) + 2
        n_inputs = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[0]
        block = op.regions[0].blocks[0]
        operands = list(op.operands)
        arguments = []
        for position, (value, value_dims) in enumerate(zip(operands, dims, strict=True)):
            if position >= n_inputs and not list(block.arguments[position].uses):
                arguments.append(None)  # an output only written
            elif not isinstance(value.type, ir.ShapedType):
                arguments.append(self._broadcast(value, THREAD_TILE))
            elif len(value_dims) >= 2 and value_dims[-2:] == [rank - 2, rank - 1]:
                if value not in values:
                    values[value] = self._load_tile_row(value, "full", i)
                arguments.append(values[value])
            elif value_dims == [rank - 1]:
                if value not in self._columns:
                    self._columns[value] = self._load_tile_row(value, "col", 0)
                arguments.append(self._columns[value])
            else:
                raise TransformFailure(f"an epilogue operand indexed as {value_dims}")
        yielded, _, _ = clone_body(op, arguments, THREAD_TILE, self._broadcast)
        for buffer, value, value_dims in zip(
            operands[n_inputs:], yielded, dims[n_inputs:], strict=True
        ):
            if value_dims != list(range(rank)):
                raise TransformFailure("an epilogue writes other than C's shape")
            values[buffer] = value
            if buffer not in written:
                written.append(buffer)

    # -- wgmma -----------------------------------------------------------------------------

    def _stage_bytes(self) -> int:
        return (self.bm * self.bk + self.bk * self.bn) * 2

    def _wgmma_shared_bytes(self) -> int:
        # The ring of A and B slices; after the K loop, C's f32 tile reuses it.
        return max(self.stages * self._stage_bytes(), self.bm * self.bn * 4)

    def _tensormap_request(self, source: ir.Value, box: list[int]) -> ir.Value:
        """A 128-byte buffer that the runtime fills with the TMA descriptor of `source`
        (box `box`, 128-byte swizzle), requested by a call the launch plan reads."""
        slot_type = ir.MemRefType.get([TENSORMAP_BYTES], ir.IntegerType.get_signless(8))
        slot = memref.AllocOp(slot_type, [], [], alignment=_i64(64)).result
        module = self.kernel.parent
        while module.name != "builtin.module":
            module = module.parent
        kernel_name = ir.StringAttr(self.kernel.attributes["sym_name"]).value
        name = f"{kernel_name}_tensormap_{'a' if source == self.a else 'b'}"
        function_type = ir.FunctionType.get([slot_type, source.type], [])
        with ir.InsertionPoint(module.regions[0].blocks[0]):
            declaration = func.FuncOp(name, function_type, visibility="private")
        declaration.attributes[TENSORMAP_ATTR] = ir.DictAttr.get(
            {"box": ir.DenseI64ArrayAttr.get(box), "swizzle": _i64(128)}
        )
        func.CallOp([], ir.FlatSymbolRefAttr.get(name), [slot, source])
        return slot

    def _descriptor(self, slot: ir.Value, box: list[int]) -> ir.Value:
        """The TMA descriptor in `slot`, as the type nvgpu's ops take."""
        element = self.element_a
        descriptor_type = ir.Type.parse(
            f"!nvgpu.tensormap.descriptor<tensor = memref<{box[0]}x{box[1]}x{element}, 3>, "
            "swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>"
        )
        address = memref.ExtractAlignedPointerAsIndexOp(slot).result
        integer = arith.index_cast(ir.IntegerType.get_signless(64), address)
        pointer = llvm.inttoptr(ir.Type.parse("!llvm.ptr"), integer)
        return builtin.UnrealizedConversionCastOp([descriptor_type], [pointer]).result

    def _dynamic_shared(self) -> None:
        self.dynamic = dynamic_shared()

    def _shared_view(self, byte_offset: ir.Value, shape: list[int], element) -> ir.Value:
        return shared_view(self.dynamic, byte_offset, shape, element)

    def _wgmma(self) -> None:
        element = self.element_a
        stages = self.stages
        barrier_type = ir.Type.parse(
            "!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, "
            f"num_barriers = {stages}>"
        )
        descriptor_a = self._descriptor(self.tensormaps[0], [self.bm, TMA_BOX])
        descriptor_b = self._descriptor(self.tensormaps[1], [TMA_BOX, TMA_BOX])
        self._dynamic_shared()
        barriers = nvgpu.MBarrierCreateOp(barrier_type).result
        first = arith.cmpi(arith.CmpIPredicate.eq, self.thread, index_constant(0))
        branch = scf.IfOp(first)
        with ir.InsertionPoint(branch.then_block):
            for stage in range(stages):
                nvgpu.MBarrierInitOp(barriers, index_constant(1), index_constant(stage))
            nvgpu.TmaPrefetchOp(descriptor_a)
            nvgpu.TmaPrefetchOp(descriptor_b)
            scf.YieldOp([])
        gpu.BarrierOp()
        k_steps = math.ceil(self.k / self.bk)
        branch = scf.IfOp(first)
        with ir.InsertionPoint(branch.then_block):
            for stage in range(min(stages, k_steps)):
                self._tma_load(
                    barriers,
                    descriptor_a,
                    descriptor_b,
                    index_constant(stage),
                    index_constant(stage),
                )
            scf.YieldOp([])
        accumulator_type = ir.Type.parse(
            f"!nvgpu.warpgroup.accumulator<fragmented = vector<{self.bm}x{self.bn}xf32>>"
        )
        initial = nvgpu.WarpgroupMmaInitAccumulatorOp(accumulator_type).result
        loop = scf.ForOp(index_constant(0), index_constant(k_steps), index_constant(1), [initial])
        with ir.InsertionPoint(loop.body):
            step = loop.induction_variable
            slot = arith.remui(step, index_constant(stages))
            round_ = arith.divui(step, index_constant(stages))
            parity = arith.trunci(
                ir.IntegerType.get_signless(1),
                arith.index_cast(
                    ir.IntegerType.get_signless(64), arith.remui(round_, index_constant(2))
                ),
            )
            nvgpu.MBarrierTryWaitParityOp(barriers, parity, index_constant(10_000_000), slot)
            a_slice, b_slice = self._stage_views(slot, element)
            a_type = ir.Type.parse(
                f"!nvgpu.warpgroup.descriptor<tensor = memref<{self.bm}x{self.bk}x{element}, 3>>"
            )
            b_type = ir.Type.parse(
                f"!nvgpu.warpgroup.descriptor<tensor = memref<{self.bk}x{self.bn}x{element}, 3>>"
            )
            a_matrix = nvgpu.WarpgroupGenerateDescriptorOp(a_type, a_slice, descriptor_a).result
            b_matrix = nvgpu.WarpgroupGenerateDescriptorOp(b_type, b_slice, descriptor_b).result
            product = nvgpu.WarpgroupMmaOp(
                accumulator_type,
                a_matrix,
                b_matrix,
                loop.inner_iter_args[0],
                transposeB=ir.UnitAttr.get(),
            ).result
            # The slot is refilled for step + stages once every warp's wgmma has read it.
            nvvm.WgmmaWaitGroupSyncOp(0)
            gpu.BarrierOp()
            following = arith.addi(step, index_constant(stages))
            refill = arith.andi(first, less(following, k_steps))
            branch = scf.IfOp(refill)
            with ir.InsertionPoint(branch.then_block):
                self._tma_load(barriers, descriptor_a, descriptor_b, slot, following)
                scf.YieldOp([])
            scf.YieldOp([product])
        nvvm.WgmmaWaitGroupSyncOp(0)
        gpu.BarrierOp()
        c_tile = self._shared_view(index_constant(0), [self.bm, self.bn], ir.F32Type.get())
        nvgpu.WarpgroupMmaStoreOp(loop.results[0], c_tile)
        gpu.BarrierOp()
        self._epilogue_from_shared(c_tile)

    def _epilogue_from_shared(self, c_tile: ir.Value) -> None:
        """The epilogue over the f32 C tile the block left in shared memory: the threads
        take whole rows, 4 columns each (a warp covers 512 bytes of a 128-column row), and
        rows a pass apart."""
        row_threads = self.bn // THREAD_TILE
        passes = self.threads // row_threads
        if self.threads % row_threads or self.bm % passes:
            raise TransformFailure(f"{self.threads} threads over {self.bm}x{self.bn} C tiles")
        tile_row = arith.divui(self.thread, index_constant(row_threads))
        self.row_base = arith.addi(self.m0, tile_row)
        self.row_step = passes
        lane_column = arith.muli(
            arith.remui(self.thread, index_constant(row_threads)), index_constant(THREAD_TILE)
        )
        self.col0 = arith.addi(self.n0, lane_column)
        tile_vector = ir.VectorType.get([THREAD_TILE], ir.F32Type.get())

        def c_row(i: int) -> ir.Value:
            row = arith.addi(tile_row, index_constant(i * passes))
            return shared_load(tile_vector, c_tile, [row, lane_column])

        self._epilogue(c_row, self.bm // passes)

    # -- mma.sync --------------------------------------------------------------------------

    def _chunk(self) -> int:
        """Elements of one 16-byte cp.async copy."""
        return ACCESS_BYTES // self._bytes()

    def _bytes(self) -> int:
        return ir.FloatType(self.element_a).width // 8

    def _copies_async(self) -> bool:
        """Whether A's and B's rows are whole 16-byte copies (cp.async), K and N multiples
        of the copy, and the block's threads split each slice evenly; else the K loop
        stages them through registers."""
        chunk = self._chunk()
        counts = [self.bm * self.bk // chunk, self.bk * self.bn // chunk]
        aligned = self.k % chunk == 0 and (self.b_transposed or self.n % chunk == 0)
        return aligned and all(count % self.threads == 0 for count in counts)

    def _padded(self, rows: int, cols: int, k_major: bool) -> tuple[list[int], bool]:
        """A staged slice's shape, its rows padded so that a warp's fragment reads hit
        different banks: ldmatrix's 8 rows of 16 bytes (16 bytes of padding); TF32's scalar
        reads, lane (g, t) at row t, column g of a k-major slice (8 words: t * 8 + g) or at
        row g, column t of the other kind (4 words: g * 4 + t)."""
        pad = ACCESS_BYTES // self._bytes()
        if self._bytes() == 4 and k_major:
            pad = 8
        return [rows, cols + pad], k_major

    def _mma_layouts(self) -> dict:
        """Each operand's staged slice: (shape, k-major): A and B as cp.async copies them
        (their rows in memory: A [m][k], B [k][n] or, transposed, [n][k]), else k-major
        both (the register staging transposes A)."""
        if not self._copies_async():
            return {
                "a": self._padded(self.bk, self.bm, True),
                "b": self._padded(self.bk, self.bn, True),
            }
        b = (
            self._padded(self.bn, self.bk, False)
            if self.b_transposed
            else self._padded(self.bk, self.bn, True)
        )
        return {"a": self._padded(self.bm, self.bk, False), "b": b}

    def _mma_stage_bytes(self) -> int:
        return sum(math.prod(shape) * self._bytes() for shape, _ in self._mma_layouts().values())

    def _ring_slots(self) -> int:
        """The cp.async ring's slots: `stages`, and at least 2 (one being read, one filled)."""
        return max(2, self.stages)

    def _mma_sync_shared_bytes(self) -> int:
        stages = self._ring_slots() if self._copies_async() else 1
        staged = stages * self._mma_stage_bytes()
        return max(staged, self.bm * self.bn * 4)  # C's f32 tile reuses the staging space

    def _mma_views(self, slot: ir.Value) -> dict:
        layouts = self._mma_layouts()
        base = arith.muli(slot, index_constant(self._mma_stage_bytes()))
        a_shape, b_shape = layouts["a"][0], layouts["b"][0]
        b_base = arith.addi(base, index_constant(math.prod(a_shape) * self._bytes()))
        return {
            "a": self._shared_view(base, a_shape, self.element_a),
            "b": self._shared_view(b_base, b_shape, self.element_b),
        }

    def _mma(self) -> None:
        """Warps of `wm` x `wn` accumulators as mma.sync fragments. Each K step's slices of
        A and B sit in padded dynamic shared memory: copied with cp.async `stages` steps
        ahead where rows are whole 16-byte chunks, else staged through registers. f16/bf16
        fragments come by ldmatrix (transposed from k-major slices) for m16n8k16 steps;
        f32 ones, rounded to TF32, by scalar reads for m16n8k8 steps. C goes through shared
        memory to the row epilogue."""
        tf32 = str(self.element_a) == "f32"
        m_step, n_step, k_step = TF32_SHAPE if tf32 else MMA_SHAPE
        self._dynamic_shared()
        c = index_constant
        warp, lane = arith.divui(self.thread, c(32)), arith.remui(self.thread, c(32))
        self.warp_m0 = arith.muli(arith.divui(warp, c(self.warps_n)), c(self.wm))
        self.warp_n0 = arith.muli(arith.remui(warp, c(self.warps_n)), c(self.wn))
        load = self._tf32_fragments(lane) if tf32 else self._half_fragments(lane)
        element = "tf32" if tf32 else str(self.element_a)

        def multiply(views, accumulators):
            for kk in range(0, self.bk, k_step):
                a, b = load(views, kk)
                for i, a_i in enumerate(a):
                    for j, b_j in enumerate(b):
                        index = i * len(b) + j
                        accumulators[index] = mma_sync(a_i, b_j, accumulators[index], element)
            return accumulators

        fill = self.prologue[-1].operands[0]
        accumulator_type = ir.VectorType.get([2, 2], ir.F32Type.get())
        initial = vector.BroadcastOp(accumulator_type, fill).result
        state = [initial] * ((self.wm // m_step) * (self.wn // n_step))
        if self._copies_async():
            results = self._mma_pipelined(state, multiply)
        else:
            views = self._mma_views(index_constant(0))
            self.a_shared, self.b_shared = views["a"], views["b"]
            results = self._staged_loop(state, lambda values: multiply(views, values))
        c_tile = self._shared_view(c(0), [self.bm, self.bn], ir.F32Type.get())
        # Fragment rows: lane / 4 and 8 below it; columns 2 (lane % 4) and the next.
        group = arith.divui(lane, c(4))
        pair_column = arith.muli(arith.remui(lane, c(4)), c(2))
        tiles_n = self.wn // n_step
        for index, fragment in enumerate(results):
            i, j = divmod(index, tiles_n)
            column = arith.addi(self.warp_n0, arith.addi(pair_column, c(j * n_step)))
            for half in range(2):
                row = arith.addi(self.warp_m0, arith.addi(group, c(i * m_step + 8 * half)))
                values = vector.ExtractOp(fragment, [], [half]).result
                shared_store(values, c_tile, [row, column])
        gpu.BarrierOp()
        self._epilogue_from_shared(c_tile)

    def _half_fragments(self, lane: ir.Value):
        """A loader of one k16 step's f16/bf16 registers: A's per m16 tile, B's per n8 tile,
        by ldmatrix.x4 (transposed from k-major slices)."""
        c = index_constant
        m_step, n_step, _ = MMA_SHAPE
        layouts = self._mma_layouts()
        matrices = LdMatrix(lane, {name: (name, layouts[name][1]) for name in ("a", "b")})

        def load(views, kk):
            a = [
                registers(matrices(views["a"], "a", c(kk), arith.addi(self.warp_m0, c(i * m_step))))
                for i in range(self.wm // m_step)
            ]
            b = []
            for j in range(0, self.wn // n_step, 2):
                b += b_pair(
                    matrices(views["b"], "b", c(kk), arith.addi(self.warp_n0, c(j * n_step)))
                )
            return a, b

        return load

    def _tf32_fragments(self, lane: ir.Value):
        """A loader of one k8 step's TF32 registers: lane (g, t) = (lane / 4, lane % 4)
        holds A at (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4) of each m16 x k8 tile and
        B at (t, g), (t + 4, g) of each k8 x n8 tile, read from shared memory one by one."""
        c = index_constant
        m_step, n_step, _ = TF32_SHAPE
        g, t = arith.divui(lane, c(4)), arith.remui(lane, c(4))
        layouts = self._mma_layouts()

        def read(views, name, k, x):
            indices = [k, x] if layouts[name][1] else [x, k]
            return tf32(memref.LoadOp(views[name], indices).result)

        def load(views, kk):
            a, b = [], []
            for i in range(self.wm // m_step):
                m = arith.addi(self.warp_m0, arith.addi(g, c(i * m_step)))
                a.append(
                    [
                        read(views, "a", arith.addi(t, c(kk + dk)), arith.addi(m, c(dm)))
                        for dk, dm in ((0, 0), (0, 8), (4, 0), (4, 8))
                    ]
                )
            for j in range(self.wn // n_step):
                n = arith.addi(self.warp_n0, arith.addi(g, c(j * n_step)))
                b.append([read(views, "b", arith.addi(t, c(kk + dk)), n) for dk in (0, 4)])
            return a, b

        return load

    def _mma_pipelined(self, state: list, multiply) -> list:
        """The K loop over a ring of `stages` slices that cp.async fills `stages - 1` steps
        ahead: every step commits one group of copies (steps past K copy nothing and
        zero-fill), so waiting for all but the newest `stages - 2` groups means this step's
        slice has landed."""
        stages = self._ring_slots()
        steps = math.ceil(self.k / self.bk)
        group = None
        for step in range(stages - 1):
            group = self._copy_step(index_constant(step), index_constant(step))
        loop = scf.ForOp(index_constant(0), index_constant(steps), index_constant(1), state)
        with ir.InsertionPoint(loop.body):
            step = loop.induction_variable
            nvgpu.DeviceAsyncWaitOp(group, numGroups=stages - 2)
            gpu.BarrierOp()  # every thread's copies of this step, and no reader of the slot below
            slot = arith.remui(step, index_constant(stages))
            accumulators = multiply(self._mma_views(slot), list(loop.inner_iter_args))
            ahead = arith.addi(step, index_constant(stages - 1))
            self._copy_step(ahead, arith.remui(ahead, index_constant(stages)))
            scf.YieldOp(accumulators)
        nvgpu.DeviceAsyncWaitOp(group, numGroups=0)
        gpu.BarrierOp()
        return list(loop.results)

    def _copy_step(self, step: ir.Value, slot: ir.Value) -> ir.Value:
        """cp.async of K step `step`'s slices of A and B into ring slot `slot`, committed as
        one group; chunks outside the matrices are zero-filled."""
        views = self._mma_views(slot)
        k0 = arith.muli(step, index_constant(self.bk))
        tokens = self._copy_tile(
            self.a, self.a_batch, views["a"], (self.m, self.k), (self.m0, k0), (self.bm, self.bk)
        )
        if self.b_transposed:
            origin, extent, size = (self.n0, k0), (self.bn, self.bk), (self.n, self.k)
        else:
            origin, extent, size = (k0, self.n0), (self.bk, self.bn), (self.k, self.n)
        tokens += self._copy_tile(self.b, self.b_batch, views["b"], size, origin, extent)
        return nvgpu.DeviceAsyncCreateGroupOp(tokens).result

    def _copy_tile(self, source, batch_positions, view, size, origin, extent) -> list:
        prefix = [self.batch_index[p] for p in batch_positions]
        return copy_tile_async(
            view, source, prefix, size, origin, extent, self.thread, self.threads, self._chunk()
        )

    def _stage_views(self, slot: ir.Value, element) -> tuple[ir.Value, ir.Value]:
        base = arith.muli(slot, index_constant(self._stage_bytes()))
        a_view = self._shared_view(base, [self.bm, self.bk], element)
        b_base = arith.addi(base, index_constant(self.bm * self.bk * 2))
        b_view = self._shared_view(b_base, [self.bk, self.bn], element)
        return a_view, b_view

    def _tma_load(self, barriers, descriptor_a, descriptor_b, slot, step) -> None:
        """Thread 0: the TMA copies of K step `step` into ring slot `slot`."""
        element = self.element_a
        base = arith.muli(slot, index_constant(self._stage_bytes()))
        a_view = self._shared_view(base, [self.bm, self.bk], element)
        nvgpu.MBarrierArriveExpectTxOp(barriers, index_constant(self._stage_bytes()), slot)
        k = arith.muli(step, index_constant(self.bk))
        # Coordinates innermost first: (k, m) into A, (n, k) into B.
        nvgpu.TmaAsyncLoadOp(a_view, barriers, descriptor_a, [k, self.m0], slot)
        for half in range(self.bn // TMA_BOX):
            offset = self.bm * self.bk * 2 + half * self.bk * TMA_BOX * 2
            b_view = self._shared_view(
                arith.addi(base, index_constant(offset)), [self.bk, TMA_BOX], element
            )
            n = arith.addi(self.n0, index_constant(half * TMA_BOX))
            nvgpu.TmaAsyncLoadOp(b_view, barriers, descriptor_b, [n, k], slot)


def realize_matmul(kernel: ir.Operation, config: dict) -> None:
    MatmulKernel(kernel, config).generate()
