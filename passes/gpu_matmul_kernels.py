"""Matmul kernels on the GPU: the `gpu_matmul` strategy of `--gpu-tile` on FMA units (`simt`).

A matmul kernel after bufferization is an optional fill of C, one contraction (linalg's
matmul, batch_matmul or a generic of the same form, operands of any float type accumulating
as its body says), and elementwise epilogue ops over C's shape (bias, activation, residual).
This module writes it as one launch: a block per `block_tile` (BM x BN) of C and per batch,
each thread owning a TM x TN sub-tile of accumulators in registers (TN consecutive columns:
16-byte loads and stores); the K loop stages BK-deep slices of A (transposed) and B in shared
memory, and the epilogue's linalg bodies run on the accumulators before C is stored once.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf, vector

from .gpu_map_loops import VIEWS, index_constant, vector_alignment
from .gpu_row_kernels import clone_body, map_dims, splat
from .tile_lower import TransformFailure

THREAD_TILE = 4  # TM = TN: 16 accumulators a thread, 4-element (16-byte f32) accesses


def _space() -> ir.Attribute:
    return ir.Attribute.parse("#gpu.address_space<workgroup>")


def _iterators(op: ir.Operation) -> list[str]:
    return [
        "reduction" if "reduction" in str(a) else "parallel"
        for a in ir.ArrayAttr(op.attributes["iterator_types"])
    ]


def _less(index: ir.Value, bound: int) -> ir.Value:
    return arith.cmpi(arith.CmpIPredicate.ult, index, index_constant(bound))


class MatmulKernel:
    """Generates the launch of one matmul kernel; `TransformFailure` when it is not one."""

    def __init__(self, kernel: ir.Operation, config: dict):
        self.kernel = kernel
        self.body = kernel.regions[0].blocks[0]
        self.ops = [op.operation for op in self.body.operations]
        allowed = {"arith.constant", "memref.alloc", "linalg.generic", "func.return", *VIEWS}
        for op in self.ops:
            if op.name not in allowed:
                raise TransformFailure(f"'{op.name}' in a matmul kernel")
        generics = [op for op in self.ops if op.name == "linalg.generic"]
        contractions = [op for op in generics if "reduction" in _iterators(op)]
        if len(contractions) != 1:
            raise TransformFailure(f"{len(contractions)} contractions in a matmul kernel")
        self.contraction = contractions[0]
        position = generics.index(self.contraction)
        self.prologue, self.epilogue = generics[:position], generics[position + 1 :]
        self._analyze()
        self.bm, self.bn, self.bk = config.get("block_tile", [64, 64, 16])
        if self.bm % THREAD_TILE or self.bn % THREAD_TILE:
            raise TransformFailure(f"block tile {self.bm}x{self.bn} is not whole thread tiles")
        self.threads_n = self.bn // THREAD_TILE
        self.threads = (self.bm // THREAD_TILE) * self.threads_n
        if self.threads > 1024 or self.threads % 32:
            raise TransformFailure(f"{self.threads} threads a block")
        self.state: dict = {}
        self.written: list = []
        self._broadcasts: dict = {}

    # -- analysis --------------------------------------------------------------------------

    def _analyze(self) -> None:
        op = self.contraction
        iterators = _iterators(op)
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

    # -- code ------------------------------------------------------------------------------

    def generate(self) -> None:
        with ir.InsertionPoint(self.ops[-1]):
            grid = [
                index_constant(math.ceil(self.n / self.bn)),
                index_constant(math.ceil(self.m / self.bm)),
                index_constant(max(1, math.prod(self.batch))),
            ]
            one = index_constant(1)
            launch = gpu.LaunchOp(grid, (index_constant(self.threads), one, one))
        body = launch.regions[0].blocks[0]
        self.a_shared = body.add_argument(
            ir.MemRefType.get([self.bk, self.bm], self.element_a, memory_space=_space()),
            launch.location,
        )
        self.b_shared = body.add_argument(
            ir.MemRefType.get([self.bk, self.bn], self.element_b, memory_space=_space()),
            launch.location,
        )
        launch.attributes["workgroup_attributions"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), 2
        )
        with ir.InsertionPoint(body):
            thread = body.arguments[3]
            self.tx = arith.remui(thread, index_constant(self.threads_n))
            self.ty = arith.divui(thread, index_constant(self.threads_n))
            self.m0 = arith.muli(body.arguments[1], index_constant(self.bm))
            self.n0 = arith.muli(body.arguments[0], index_constant(self.bn))
            self.batch_index = []
            rest = body.arguments[2]
            for extent in reversed(self.batch):
                self.batch_index.insert(0, arith.remui(rest, index_constant(extent)))
                rest = arith.divui(rest, index_constant(extent))
            self.thread = thread
            self.row0 = arith.addi(self.m0, arith.muli(self.ty, index_constant(THREAD_TILE)))
            self.col0 = arith.addi(self.n0, arith.muli(self.tx, index_constant(THREAD_TILE)))
            accumulators = self._main_loop(self._initial())
            self.state[self.c] = accumulators
            self.written.append(self.c)
            for op in self.epilogue:
                self._elementwise(op)
            self._store_results()
            gpu.TerminatorOp()
        allocations = [op for op in self.ops if op.name == "memref.alloc"]
        for op in self.prologue + [self.contraction] + self.epilogue:
            op.erase()
        for op in allocations:
            if not list(op.result.uses):
                op.erase()

    def _tile_vector(self) -> ir.VectorType:
        return ir.VectorType.get([THREAD_TILE], self.element_c)

    def _initial(self) -> list[ir.Value]:
        if self.prologue:
            fill = self.prologue[-1]
            value = fill.operands[0]
            return [vector.BroadcastOp(self._tile_vector(), value).result] * THREAD_TILE
        return [self._load_tile_row(self.c, "full", i) for i in range(THREAD_TILE)]

    def _main_loop(self, accumulators: list[ir.Value]) -> list[ir.Value]:
        steps = math.ceil(self.k / self.bk)
        loop = scf.ForOp(index_constant(0), index_constant(steps), index_constant(1), accumulators)
        with ir.InsertionPoint(loop.body):
            k0 = arith.muli(loop.induction_variable, index_constant(self.bk))
            self._stage_a(k0)
            self._stage_b(k0)
            gpu.BarrierOp()
            values = list(loop.inner_iter_args)
            for kk in range(min(self.bk, self.k)):
                values = self._multiply(kk, values)
            gpu.BarrierOp()
            scf.YieldOp(values)
        return list(loop.results)

    def _guarded_load(self, vector_type, buffer, indices, inside) -> ir.Value:
        if inside is None:
            return self._vector_load(vector_type, buffer, indices)
        branch = scf.IfOp(inside, [vector_type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([self._vector_load(vector_type, buffer, indices)])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([splat(0.0, vector_type)])
        return branch.results[0]

    def _vector_load(self, vector_type, buffer, indices) -> ir.Value:
        load = vector.LoadOp(vector_type, buffer, indices)
        alignment = vector_alignment(ir.MemRefType(buffer.type), vector_type)
        if alignment and vector_type.shape[0] > 1:
            load.attributes["alignment"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(64), alignment
            )
        return load.result

    @staticmethod
    def _below(index: ir.Value, bound: int, extent: int) -> ir.Value | None:
        """`index < bound`, or None where tiles of `extent` cover `bound` exactly."""
        return None if bound % extent == 0 else _less(index, bound)

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
                _less(linear, count) if partial_step else None,
            )
            indices = [self.batch_index[p] for p in batch_positions] + [row, col]
            value = self._guarded_load(vector_type, source, indices, inside)
            store_guard = _less(linear, count) if partial_step else None
            self._store_shared(value, shared, r, c, lanes, transpose, store_guard)

    def _store_shared(self, value, shared, r, c, lanes, transpose, guard) -> None:
        # Shared memory takes scalar accesses: the vector dialect's lowering knows no GPU
        # address spaces, and the backend merges neighbouring scalars into vector accesses.
        def store():
            for j in range(lanes):
                element = vector.ExtractOp(value, [], [j]).result
                offset = arith.addi(c, index_constant(j))
                memref.StoreOp(element, shared, [offset, r] if transpose else [r, offset])

        if guard is None:
            store()
            return
        branch = scf.IfOp(guard)
        with ir.InsertionPoint(branch.then_block):
            store()
            scf.YieldOp([])

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
        a = self._shared_vector(a_type, self.a_shared, kk_index, self.ty)
        b = self._shared_vector(b_type, self.b_shared, kk_index, self.tx)
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

    @staticmethod
    def _shared_vector(vector_type, shared, row, thread) -> ir.Value:
        """THREAD_TILE neighbours of a shared row, from scalar loads (see _store_shared)."""
        start = arith.muli(thread, index_constant(THREAD_TILE))
        elements = [
            memref.LoadOp(shared, [row, arith.addi(start, index_constant(j))]).result
            for j in range(THREAD_TILE)
        ]
        return vector.FromElementsOp(vector_type, elements).result

    def _broadcast(self, value: ir.Value, lanes: int) -> ir.Value:
        key = (value, lanes)
        if key not in self._broadcasts:
            self._broadcasts[key] = vector.BroadcastOp(
                ir.VectorType.get([lanes], value.type), value
            ).result
        return self._broadcasts[key]

    # -- epilogue --------------------------------------------------------------------------

    def _row(self, i: int) -> ir.Value:
        return arith.addi(self.row0, index_constant(i))

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
            return self._guarded_load(vector_type, buffer, indices, inside)
        # Rows of C are not whole vectors: element by element, each behind its bound.
        elements = []
        for j in range(THREAD_TILE):
            column = arith.addi(self.col0, index_constant(j))
            inside = self._and(row_inside, _less(column, self.n))
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
                pieces.append((value, column, _less(column, self.n)))
        for value, column, column_inside in pieces:
            inside = self._and(self._row_inside(i), column_inside)
            indices = self._tile_indices(buffer, "full", i, column)

            def store(value=value, indices=indices):
                if isinstance(value.type, ir.VectorType):
                    self._vector_store(value, buffer, indices)
                else:
                    memref.StoreOp(value, buffer, indices)

            if inside is None:
                store()
                continue
            branch = scf.IfOp(inside)
            with ir.InsertionPoint(branch.then_block):
                store()
                scf.YieldOp([])

    def _elementwise(self, op: ir.Operation) -> None:
        if "reduction" in _iterators(op):
            raise TransformFailure("a reduction in a matmul's epilogue")
        dims = map_dims(op)
        rank = len(self.batch) + 2
        segments = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])
        n_inputs = segments[0]
        block = op.regions[0].blocks[0]
        operands = list(op.operands)
        results = [[] for _ in operands[n_inputs:]]
        for i in range(THREAD_TILE):
            arguments = []
            for position, (value, value_dims) in enumerate(zip(operands, dims, strict=True)):
                if position >= n_inputs and not list(block.arguments[position].uses):
                    arguments.append(None)
                    continue
                if not isinstance(value.type, ir.ShapedType):
                    arguments.append(self._broadcast(value, THREAD_TILE))
                elif value_dims[-2:] == [rank - 2, rank - 1] and len(value_dims) >= 2:
                    if value not in self.state:
                        self.state[value] = [
                            self._load_tile_row(value, "full", r) for r in range(THREAD_TILE)
                        ]
                    arguments.append(self.state[value][i])
                elif value_dims == [rank - 1]:
                    key = ("col", value)
                    if key not in self.state:
                        self.state[key] = self._load_tile_row(value, "col", 0)
                    arguments.append(self.state[key])
                else:
                    raise TransformFailure(f"an epilogue operand indexed as {value_dims}")
            yielded, _, _ = clone_body(op, arguments, THREAD_TILE, self._broadcast)
            for chunks, value in zip(results, yielded, strict=True):
                chunks.append(value)
        for buffer, chunks, value_dims in zip(
            operands[n_inputs:], results, dims[n_inputs:], strict=True
        ):
            if value_dims != list(range(rank)):
                raise TransformFailure("an epilogue writes other than C's shape")
            self.state[buffer] = chunks
            if buffer not in self.written:
                self.written.append(buffer)

    def _store_results(self) -> None:
        arguments = list(self.body.arguments)
        for buffer in self.written:
            if buffer not in arguments:
                continue  # a temporary: it lived in registers
            for i, chunk in enumerate(self.state[buffer]):
                self._store_tile_row(chunk, buffer, i)

    @staticmethod
    def _vector_store(chunk, buffer, indices) -> None:
        store = vector.StoreOp(chunk, buffer, indices)
        alignment = vector_alignment(ir.MemRefType(buffer.type), ir.VectorType(chunk.type))
        if alignment:
            store.attributes["alignment"] = ir.IntegerAttr.get(
                ir.IntegerType.get_signless(64), alignment
            )


def realize_matmul(kernel: ir.Operation, config: dict) -> None:
    MatmulKernel(kernel, config).generate()
