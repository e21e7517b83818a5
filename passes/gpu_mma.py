"""Tensor-core building blocks shared by the mma.sync kernels (`gpu_matmul_kernels`,
`gpu_attention_mma`): dynamic shared memory and views into it, 16-byte cp.async copies of a
tile, ldmatrix fragment loads and NVVM's mma.sync.

The fragments are those of PTX's m16n8k16 (f16/bf16 in, f32 accumulators) and m16n8k8 (TF32)
steps: lane (g, t) = (lane / 4, lane % 4) holds accumulators (g, 2t), (g, 2t + 1), (g + 8,
2t) and (g + 8, 2t + 1) of each 16 x 8 tile, as a vector<2x2xf32> (a row per 8 rows).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, gpu, llvm, memref, nvgpu, nvvm, vector

from .gpu_map_loops import index_constant

MMA_SHAPE = (16, 8, 16)  # mma.sync's m16n8k16 (f16/bf16 in, f32 accumulators)
TF32_SHAPE = (16, 8, 8)  # and m16n8k8 for f32 operands rounded to TF32
ACCESS_BYTES = 16  # a cp.async copy, and the padding of a staged half-precision row
_SHARED = 3  # NVVM's shared address space: the vector lowering knows no GPU address spaces


def _shared_space() -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), _SHARED)


def less(index: ir.Value, bound: int) -> ir.Value:
    return arith.cmpi(arith.CmpIPredicate.ult, index, index_constant(bound))


def dynamic_shared() -> ir.Value:
    """The block's dynamic shared memory as an i8 memref (sized by the launch)."""
    dynamic = ir.ShapedType.get_dynamic_size()
    i8 = ir.IntegerType.get_signless(8)
    workgroup = ir.Attribute.parse("#gpu.address_space<workgroup>")
    raw = gpu.DynamicSharedMemoryOp(ir.MemRefType.get([dynamic], i8, memory_space=workgroup))
    shared = ir.MemRefType.get([dynamic], i8, memory_space=_shared_space())
    return memref.MemorySpaceCastOp(shared, raw.result).result


def shared_view(dynamic: ir.Value, byte_offset: ir.Value, shape: list[int], element) -> ir.Value:
    """A `shape` array of `element` at `byte_offset` of `dynamic_shared()`."""
    view_type = ir.MemRefType.get(shape, element, memory_space=_shared_space())
    return memref.ViewOp(view_type, dynamic, byte_offset, []).result


def copy_tile_async(
    view, source, prefix: list, size, origin, extent, thread, threads: int, chunk: int
) -> list:
    """16-byte cp.async copies (`chunk` elements) of the `extent` tile of `source` at
    `origin` (indices after `prefix`, rows of `size`) into `view`, the same number a thread
    (`threads` divides the tile's chunks); a chunk outside the matrix copies nothing and
    leaves zeros. Returns the copies' tokens."""
    per_row = extent[1] // chunk
    tokens = []
    for index in range(0, extent[0] * per_row, threads):
        linear = arith.addi(thread, index_constant(index))
        r = arith.divui(linear, index_constant(per_row))
        col = arith.muli(arith.remui(linear, index_constant(per_row)), index_constant(chunk))
        row, column = arith.addi(origin[0], r), arith.addi(origin[1], col)
        inside = arith.andi(less(row, size[0]), less(column, size[1]))
        zero = index_constant(0)
        row = arith.select(inside, row, zero)
        column = arith.select(inside, column, zero)
        elements = arith.select(inside, index_constant(chunk), zero)
        token = nvgpu.DeviceAsyncCopyOp(
            view,
            [r, col],
            source,
            [*prefix, row, column],
            ir.IntegerAttr.get(ir.IndexType.get(), chunk),
            srcElements=elements,
            bypassL1=ir.UnitAttr.get(),
        ).result
        tokens.append(token)
    return tokens


class LdMatrix:
    """ldmatrix.x4 loads of m16n8k16 operands from shared memory. Lanes 8i..8i+7 name the
    rows of 8x8 matrix i: an A operand's are its (m, k) blocks (0, 0), (8, 0), (0, 8), (8, 8)
    (one m16 x k16 fragment), a B operand's its (k, n) blocks in the same order (two k16 x n8
    fragments). A lane's row runs along k in a k-major tile (loaded transposed), else along
    m or n. `operands` names each tile: (\"a\" or \"b\", k-major)."""

    def __init__(self, lane: ir.Value, operands: dict[str, tuple[str, bool]]):
        c = index_constant
        eighth, matrix = arith.remui(lane, c(8)), arith.divui(lane, c(8))
        low = arith.muli(arith.remui(matrix, c(2)), c(8))
        high = arith.muli(arith.divui(matrix, c(2)), c(8))
        self._k_major, self._offsets = {}, {}
        for name, (kind, k_major) in operands.items():
            x_block, k_block = (low, high) if kind == "a" else (high, low)
            self._k_major[name] = k_major
            self._offsets[name] = (
                (arith.addi(k_block, eighth), x_block)
                if k_major
                else (k_block, arith.addi(x_block, eighth))
            )

    def __call__(self, view: ir.Value, name: str, k: ir.Value, x: ir.Value) -> ir.Value:
        """The 4 matrices at (k, x) of tile `name` in `view`: a vector<4x2x(element)>."""
        k_offset, x_offset = self._offsets[name]
        k, x = arith.addi(k_offset, k), arith.addi(x_offset, x)
        k_major = self._k_major[name]
        element = ir.MemRefType(view.type).element_type
        fragment_type = ir.VectorType.get([4, 2], element)
        indices = [k, x] if k_major else [x, k]
        return nvgpu.LdMatrixOp(fragment_type, view, indices, k_major, 4).result


def registers(fragment: ir.Value) -> list[ir.Value]:
    """A fragment's 32-bit registers (`half_register` of each row of two halves)."""
    fragment_type = ir.VectorType(fragment.type)
    rows = [vector.ExtractOp(fragment, [], [r]).result for r in range(fragment_type.shape[0])]
    return [half_register(row) for row in rows]


def half_register(pair: ir.Value) -> ir.Value:
    """Two halves as NVVM's mma.sync takes them in a 32-bit register: a vector<2xf16> for
    f16, an i32 for bf16."""
    if str(ir.VectorType(pair.type).element_type) == "f16":
        return pair
    as_i32 = ir.VectorType.get([1], ir.IntegerType.get_signless(32))
    return vector.ExtractOp(vector.BitCastOp(as_i32, pair).result, [], [0]).result


def b_pair(loaded: ir.Value) -> list[list[ir.Value]]:
    """The registers of the two n8 fragments of a B operand's ldmatrix.x4 load."""
    pair_type = ir.VectorType.get([2, 2], ir.VectorType(loaded.type).element_type)
    return [
        registers(vector.extract_strided_slice(pair_type, loaded, [2 * h], [2], [1]))
        for h in range(2)
    ]


def tf32(value: ir.Value) -> ir.Value:
    """An f32 rounded to TF32 (to nearest, ties away), as mma.sync takes it: an i32."""
    i32 = ir.IntegerType.get_signless(32)
    return llvm.inline_asm(i32, [value], "cvt.rna.tf32.f32 $0, $1;", "=r,f")


def mma_sync(a: list, b: list, c: ir.Value, element: str) -> ir.Value:
    """C + A B for one mma.sync step: A's 4 and B's 2 registers (`registers` of f16/bf16
    fragments, m16n8k16; `tf32` values, m16n8k8), C a vector<2x2xf32>."""
    f32 = ir.F32Type.get()
    m, n, k = TF32_SHAPE if element == "tf32" else MMA_SHAPE
    accumulators = [vector.ExtractOp(c, [], [r, col]).result for r in range(2) for col in range(2)]
    result = nvvm.MmaOp(
        ir.Type.parse("!llvm.struct<(f32, f32, f32, f32)>"),
        ir.Attribute.parse(f"#nvvm.shape<m = {m}, n = {n}, k = {k}>"),
        ir.Attribute.parse("#nvvm.mma_layout<row>"),
        ir.Attribute.parse("#nvvm.mma_layout<col>"),
        a,
        b,
        accumulators,
        multiplicandAPtxType=ir.Attribute.parse(f"#nvvm.mma_type<{element}>"),
        multiplicandBPtxType=ir.Attribute.parse(f"#nvvm.mma_type<{element}>"),
    ).result
    values = [llvm.extractvalue(f32, result, [i]) for i in range(4)]
    return vector.FromElementsOp(ir.VectorType.get([2, 2], f32), values).result
