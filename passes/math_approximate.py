"""`--math-approximate`: transcendental math ops as vectorizable arithmetic.

A libm call is a call per element: it keeps vectorized kernels scalar and stops LLVM from
vectorizing loops. Written out as range reduction plus a polynomial in arith ops, each op
vectorizes like any arithmetic. f32 ops are rewritten; f16 and bf16 ops compute in f32 and
round once at the end.

Accuracy against the exact result (float64), in f32 ulps, as checked on a sweep with 0, -0,
+-inf, NaN, subnormals and large and tiny magnitudes (test/e2e/test_math_accuracy.py):

- exp, 2 ulp: reduction by ln 2 (Cephes' two-part constant), a degree-6 minimax polynomial
  in Horner form (six FMAs; 0.88 ulp at most over 2^24 x in [-87.3, 88]); 2^k from exponent
  bits, one factor in vectors whose results are all normal, else two, so subnormal results
  round correctly (one any-lane branch); inf above 88.72, 0 below -103.97. On AVX-512
  targets, vectors whose results are all normal reduce by sixteenths of ln 2 instead, with
  2^(j/16) and its rounding error from tables (vpermps) and a quadratic: 8 FMA-pipe ops for
  16 lanes where the polynomial takes 10, 0.59 ulp at most over the same x.
  With fastmath `afn` (softmax's exponentials), x where a result may be under 2^-126
  (below -86.99 with the polynomial, -87.31 with the table) gives 0, so that no subnormal
  reaches the products after it, and 2^k is one factor: an absolute error under 1.7e-38,
  2 ulp elsewhere; with `ninf` (no result overflows, as for softmax's x - max), x is not
  clamped from above.
- log, 1 ulp (0.95 at most over every positive normal f32): mantissa in [sqrt(1/2), sqrt(2))
  by integer arithmetic alone, f + f^2 Q(f) with Q a degree-8 minimax polynomial;
  subnormals are scaled by 2^23 first; log(+-0) = -inf, log(x < 0) = NaN, log(inf) = inf;
  a vector of normal positive finite x only skips these cases (one any-lane branch).
- log1p, 3 ulp: log(1 + x) times x / ((1 + x) - 1). `log(1 + x)`, as importers write
  softplus, is rewritten to log1p first.
- tanh, 5 ulp (4.94 at most over every f32 in [-10.5, 10.5]): x P(x^2) / Q(x^2), a [12/6]
  rational fit on [-9, 9] (one division, no exp: twice the speed of 1 - 2 / (exp(2|x|) + 1));
  +-(1 - 2^-24) from |x| = 9 on (1 ulp from +-1, where tanh rounds a little beyond 9); -0
  stays -0. Targets without FMA round each Horner step twice and reach 6 ulp.
- erf, 3 ulp: an odd Taylor series below 0.5, 1 - erfc above.
- erfc, 6 ulp (as GELU's normal CDF): Numerical Recipes' erfcc, t exp(-z^2 + P(t)) with
  t = 1 / (1 + z/2) (fractional error 1.2e-7), z^2 split exactly over two exps; 2 - erfc(-z)
  for z < 0. erfc(x * 1/sqrt(2)) takes z^2 = x^2 / 2 exactly.
- sin, cos, 2 ulp for every finite f32 (1.58 at most over every f32 in [pi/4, 2^13)):
  reduction by pi/2 in f32 below 2^13 (three FMAs with pi/2 in three f32 pieces; 16 lanes
  where f64 takes 8: 1.6x the speed), a vector with any lane beyond in f64 (a 33 + 53-bit
  pi/2, exact below 2^20), and beyond that a Payne-Hanek reduction (exact products with
  eight 28-bit pieces of 2/pi, each reduced mod 4, compensated sums); Cephes' polynomials on
  [-pi/4, pi/4]; NaN for +-inf.
- pow, 1 ulp (0.58 at most over 8 x 2^20 random pairs, huge powers of bases near 1 too):
  2^(y log2|x|), with log2 x to a relative 2^-35 (y multiplies its error). On AVX-512
  targets, 16 lanes at a time in f32 by tables: log2 x = k + log2 c + log2(z/c) for
  x = 2^k z, with 1/c and log2 c (in two parts) from 16-entry tables (vpermps), z/c - 1
  exact as two f32, its first two log terms as f32 sums with their exact rounding errors
  (FMAs), a cubic for the rest (2^-40); then 2^(j/16) and its rounding error from tables,
  a quadratic in the remaining 1/32 (2^-28.7) and vscalefps; a vector with a result that
  may be subnormal takes the f64 form below (one rounding where the f32 form rounds twice).
  Elsewhere in f64: log's division is an f32 reciprocal and one f64 Newton step, exp a
  degree-6 minimax polynomial (2^-29) scaled by exponent bits. The IEEE special cases
  (pow(x, 0) = pow(1, y) = 1 even for NaN, odd integer powers keep the sign, negative x to
  a non-integer power is NaN, infinite x and y) are selected only in vectors with a lane
  that is not a normal positive x with |y| < 2^24. Constant exponents: 0 gives 1; 0.5 a
  square root; integers up to 8 in magnitude products in f64 (0.5 ulp but for double
  rounding), 2 and -1 a product and a division in f32 (correctly rounded).

On x86 CPUs before SSE4.1 (no roundps), floor, ceil and round-half-even are written with
adds (exact; LLVM would call libm for each element).

sqrt stays `math.sqrt` (a hardware instruction). `--graph-to-linalg` writes the composite
graph ops in forms without cancellation: sigmoid (4 ulp) from exp(-|x|), silu (4 ulp where
its result is normal, x > -88), GELU as x Phi(x) with Phi = erfc(-x / sqrt 2) / 2 (6 ulp for
x > -13) and the tanh GELU as x sigmoid(2u) (6 ulp while |2u| < 3, then growing as |2u| ulps
from the rounding of u, as in any f32 evaluation of this form).
"""

from __future__ import annotations

import functools
import math
import struct
from fractions import Fraction

from mlir import ir
from mlir.dialects import arith, llvm, scf, vector
from mlir.dialects import math as mmath
from mlir.rewrite import RewritePatternSet, apply_patterns_and_fold_greedily

from ..dialects import target
from .ir_query import constant_value, defining_op
from .registry import register_pass

# ----------------------------------------------------------------------------------------------
# Building blocks on scalars and vectors alike.

Cmp = arith.CmpFPredicate


def _element(t: ir.Type) -> ir.Type:
    return ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t


def _like(t: ir.Type, element: ir.Type) -> ir.Type:
    return (
        ir.VectorType.get(ir.VectorType(t).shape, element)
        if isinstance(t, ir.VectorType)
        else element
    )


def _const(t: ir.Type, value) -> ir.Value:
    element = _element(t)
    attr = (
        ir.FloatAttr.get(element, value)
        if isinstance(element, ir.FloatType)
        else ir.IntegerAttr.get(element, value)
    )
    if isinstance(t, ir.VectorType):
        attr = ir.DenseElementsAttr.get_splat(t, attr)
    return arith.ConstantOp(t, attr).result


def _i32(t: ir.Type) -> ir.Type:
    return _like(t, ir.IntegerType.get_signless(32))


def _i64(t: ir.Type) -> ir.Type:
    return _like(t, ir.IntegerType.get_signless(64))


def _f32(t: ir.Type) -> ir.Type:
    return _like(t, ir.F32Type.get())


def _f64(t: ir.Type) -> ir.Type:
    return _like(t, ir.F64Type.get())


def _contract() -> ir.Attribute:
    return ir.Attribute.parse("#arith.fastmath<contract>")


def _horner(x: ir.Value, coefficients) -> ir.Value:
    """c0 x^n + c1 x^(n-1) + ... + cn; each step may become one FMA where the target has it
    (`contract`: the product is then not rounded, which only makes the step more accurate)."""
    p = _const(x.type, coefficients[0])
    for c in coefficients[1:]:
        p = arith.addf(
            arith.mulf(p, x, fastmath=_contract()), _const(x.type, c), fastmath=_contract()
        )
    return p


def _round(x: ir.Value) -> ir.Value:
    """x rounded to the nearest integer (ties to even), for |x| < 2^22 (f32) or 2^51 (f64):
    adding and subtracting 1.5 * 2^mantissa-bits leaves the integer part, with no rounding
    instruction that a baseline target would turn into a libm call."""
    bits = 23 if str(_element(x.type)) == "f32" else 52
    magic = _const(x.type, 1.5 * 2.0**bits)
    return arith.subf(arith.addf(x, magic), magic)


def _is_nan(x: ir.Value) -> ir.Value:
    return arith.cmpf(Cmp.UNO, x, x)


def _select_nan(x: ir.Value, y: ir.Value) -> ir.Value:
    """y, or x's NaN where x is NaN."""
    return arith.select(_is_nan(x), x, y)


def _copysign(magnitude: ir.Value, sign_of: ir.Value) -> ir.Value:
    """|magnitude| with the sign bit of `sign_of`, in integer bits (f32)."""
    i32 = _i32(magnitude.type)
    bits = arith.andi(arith.bitcast(i32, magnitude), _const(i32, 0x7FFFFFFF))
    sign = arith.andi(arith.bitcast(i32, sign_of), _const(i32, -0x80000000))
    return arith.bitcast(magnitude.type, arith.ori(bits, sign))


def _keep_zero(x: ir.Value, y: ir.Value) -> ir.Value:
    """y, or x where x is +-0: odd functions keep the sign of zero, which the final addition
    of their polynomial forms (-0 + +0) would lose."""
    return arith.select(arith.cmpf(Cmp.OEQ, x, _const(x.type, 0.0)), x, y)


# ----------------------------------------------------------------------------------------------
# exp

_LOG2E = 1.44269504088896341
_LN2_HI = 0.693359375
_LN2_LO = -2.12194440e-4
_EXP_COEFFICIENTS = (  # x^6 .. x^0: a minimax fit of exp on [-ln2/2, ln2/2], in f32
    1.3814734e-3,
    8.3687100e-3,
    4.1668385e-2,
    1.6666521e-1,
    4.9999994e-1,
    1.0,
    1.0,
)
_EXP_UNDERFLOW = -104.0  # below, exp(x) rounds to 0 even as a subnormal


def _power_of_two(n: ir.Value, element: ir.Type) -> ir.Value:
    """2^n as a float of `element` (f32 or f64), for n within its normal exponents."""
    t = n.type
    mantissa_bits, bias = (23, 127) if str(element) == "f32" else (52, 1023)
    bits = arith.shli(arith.addi(n, _const(t, bias)), _const(t, mantissa_bits))
    return arith.bitcast(_like(t, element), bits)


def _scale(p: ir.Value, k: ir.Value) -> ir.Value:
    """p * 2^k for integer k (i32) over -150..128: as 2^h * 2^(k-h), h = k >> 1, each factor
    a normal float, so that the one rounding happens in the last product (subnormal results
    round correctly)."""
    half = arith.shrsi(k, _const(k.type, 1))
    f32 = _element(p.type)
    return arith.mulf(
        arith.mulf(p, _power_of_two(half, f32)), _power_of_two(arith.subi(k, half), f32)
    )


def _fma(a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
    """a * b + c, one FMA where the target has it."""
    return arith.addf(arith.mulf(a, b, fastmath=_contract()), c, fastmath=_contract())


_ROUNDING = 1.5 * 2.0**23  # added to |v| < 2^22, leaves round(v) in the low mantissa bits
_SMALLEST_NORMAL_EXP = -87.33654  # exp of this is 2^-126
_LARGEST_NORMAL_EXP = 88.0  # round(x / ln2) is at most 127 up to here


def exp_f32(
    x: ir.Value, *, flush_tiny: bool = False, finite: bool = False, avx512: Avx512 | None = None
) -> ir.Value:
    """exp(x). A vector whose lanes all have a normal, finite result (x in [-87.3, 88], the
    common case) is p * 2^k with 2^k made from the bits of the rounding sum, and no clamps;
    one with any other lane takes the general form (one any-lane branch): 2^k in two
    factors, so that subnormal results round once. On 1 thread of the AVX-512 Xeon the fast
    form made sigmoid 18%, silu 22% and sigmoid/silu(x*a+b) 24% faster. With `avx512` (and
    16-lane vectors), the fast form reduces x by sixteenths of ln2 and a table instead
    (_exp_by_table).

    `flush_tiny`: x whose result may be under 2^-126 gives 0 (below -86.99 with the
    polynomial, whose 2^k then is 2^-126: results under 2^-125.5; below -87.31 with the
    table: results under 2^-125.97; an absolute error under 1.7e-38; softmax's
    exponentials, whose sum is at least 1), with one factor throughout. The test is on the
    rounding sum, which the scale takes anyway: a test on x kept x live to the end, and
    softmax's exponentials with their row sum then spilled on a 16-register AVX2 target
    (1024x1024 on 1 thread of a znver3, best of 150 calls: 504-530 -> 477-481 us). Flushed
    to 0, not kept at 2^-126: normalized by the sum, 2^-126 became a subnormal (every masked
    score of causal attention), and each product with a subnormal takes a microcode assist
    on x86 (a GPT-2 block's attention ran 30x slower). `finite`: the result is known not to
    overflow (x <= 88.7, as fastmath `ninf` promises), so x needs no upper clamp."""
    t = x.type
    if flush_tiny:
        clamped = x if finite else arith.minimumf(x, _const(t, 89.0))
        shifted, result, tiny_below = _exp_with_normal_scale(clamped, avx512)
        return arith.select(arith.cmpf(Cmp.OLT, shifted, tiny_below), _const(t, 0.0), result)
    normal = arith.andi(
        arith.cmpf(Cmp.OGE, x, _const(t, _SMALLEST_NORMAL_EXP)),
        arith.cmpf(Cmp.OLE, x, _const(t, _LARGEST_NORMAL_EXP)),
    )
    return _branch_on_any_lane(
        arith.xori(normal, _true(t)),
        [t],
        lambda: [_exp_any(x, finite=finite)],
        lambda: [_exp_with_normal_scale(x, avx512)[1]],
    )[0]


def _exp_reduced(x: ir.Value, rounding: float) -> tuple[ir.Value, ir.Value, ir.Value]:
    """x = k ln2 + r: the rounding sum (round(x / ln2) in its low bits), k, and exp(r)."""
    t = x.type
    shifted = _fma(x, _const(t, _LOG2E), _const(t, rounding))
    k = arith.subf(shifted, _const(t, rounding))
    r = _fma(k, _const(t, -_LN2_HI), x)
    r = _fma(k, _const(t, -_LN2_LO), r)
    return shifted, k, _horner(r, _EXP_COEFFICIENTS)


def _exp_with_normal_scale(
    x: ir.Value, avx512: Avx512 | None
) -> tuple[ir.Value, ir.Value, ir.Value]:
    """exp(x) as p * 2^k with 2^k from the bits of the rounding sum: a normal float for k in
    [-126, 127], bits that wrap beyond. Returns the sum, exp(x), and the value below which
    the sum stands for results that may be under 2^-126 (or wrap)."""
    t = x.type
    if avx512 is not None and avx512.fits(t):
        shifted, p = _exp_by_table(x, avx512)
        # The sum's low bits hold 16 (k + 127) + j: at most 16 where 2^k 2^(j/16) e^r may be
        # under 2^-126 (k <= -127, or k = -126 with j = 0 and r < 0).
        bits = arith.shrui(arith.bitcast(_i32(t), shifted), _const(_i32(t), 4))
        tiny_below = _EXP_TABLE_ROUNDING - 16 * 127 + 17
    else:
        shifted, _, p = _exp_reduced(x, _ROUNDING + 127)
        # The sum is 1.5 * 2^23 + k + 127 (less where x is -inf or far below).
        bits = arith.bitcast(_i32(t), shifted)
        tiny_below = _ROUNDING + 2
    scale = arith.bitcast(t, arith.shli(bits, _const(_i32(t), 23)))
    return shifted, arith.mulf(p, scale), _const(t, tiny_below)


# exp by sixteenths of ln2 (AVX-512): x = (16 k + j) ln2 / 16 + r, |r| <= ln2 / 32, and
# exp(x) = 2^k 2^(j / 16) e^r, 2^(j / 16) as an f32 and its rounding error (two vpermps
# lookups), e^r = 1 + r Q(r) with Q of degree 2 (2^-23.2 relative, 2^-28.7 of the result).
# 8 FMA-pipe ops for 16 lanes where the degree-6 polynomial takes 10; 0.59 ulp at most.
def _hex32(value: float) -> str:
    return f"0x{struct.unpack('<I', struct.pack('<f', value))[0]:08X}"


def _as_f32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


_EXP_TABLE_HIGH = [_hex32(2.0 ** (j / 16)) for j in range(16)]
_EXP_TABLE_LOW = [_hex32(2.0 ** (j / 16) - _as_f32(2.0 ** (j / 16))) for j in range(16)]
_EXP_TABLE_COEFFICIENTS = (0.1666666716337204, 0.5000146627426147, 1.0)
_EXP_TABLE_ROUNDING = _ROUNDING + 16 * 127  # its sum's low bits: 16 (k + 127) + j


def _exp_by_table(x: ir.Value, avx512: Avx512) -> tuple[ir.Value, ir.Value]:
    """The rounding sum of x * 16 / ln2 (16 (k + 127) + j in its low bits) and exp(x) / 2^k."""
    t = x.type
    shifted = _fma(x, _const(t, 16 * _LOG2E), _const(t, _EXP_TABLE_ROUNDING))
    sixteenths = arith.subf(shifted, _const(t, _EXP_TABLE_ROUNDING))
    r = _fma(sixteenths, _const(t, -_LN2_HI / 16), x)
    r = _fma(sixteenths, _const(t, -_LN2_LO / 16), r)
    index = arith.bitcast(_i32(t), shifted)
    entry = avx512.lookup(_EXP_TABLE_HIGH, index)
    error = avx512.lookup(_EXP_TABLE_LOW, index)
    e_r_less_one = arith.mulf(r, _horner(r, _EXP_TABLE_COEFFICIENTS))
    return shifted, arith.addf(entry, _fma(entry, e_r_less_one, error))


def _exp_any(x: ir.Value, *, finite: bool) -> ir.Value:
    """exp(x) for every f32: clamped to where the result is inf (2^128) or rounds to 0 (2^-150
    times at most 1.5), the scaling then overflows and underflows by itself, and NaN stays
    NaN throughout."""
    t = x.type
    clamped = x if finite else arith.minimumf(x, _const(t, 89.0))
    clamped = arith.maximumf(clamped, _const(t, _EXP_UNDERFLOW))
    _, k, p = _exp_reduced(clamped, _ROUNDING)
    return _scale(p, arith.fptosi(_i32(t), k))


def _exp(x: ir.Value, *, op: ir.Operation, avx512: Avx512 | None = None) -> ir.Value:
    """math.exp; with fastmath `afn` (approximate functions allowed), tiny results flush;
    with `ninf` (no infinities), large ones are not clamped."""
    flags = str(op.attributes["fastmath"]) if "fastmath" in op.attributes else ""
    return exp_f32(x, flush_tiny="afn" in flags, finite="ninf" in flags, avx512=avx512)


# ----------------------------------------------------------------------------------------------
# log, log1p

_SQRT_HALF_BITS = 0x3F3504F3  # sqrt(1/2) as f32
# log(1 + f) = f + f^2 Q(f) for f in [sqrt(1/2) - 1, sqrt(2) - 1), Q(f) = f P(f) - 1/2: Q's
# coefficients f^8 .. f^0, P a degree-7 minimax fit of (log(1 + f) - f + f^2 / 2) / f^3
# weighted by the relative error it makes in log (2^-25.1).
_LOG_COEFFICIENTS = (
    -0.07859673351049423,
    0.1275896281003952,
    -0.1307319551706314,
    0.1419782042503357,
    -0.16632233560085297,
    0.2000161111354828,
    -0.2500056028366089,
    0.33333325386047363,
    -0.5,
)
_SMALLEST_NORMAL = 2.0**-126


def log_f32(x: ir.Value) -> ir.Value:
    """A vector whose lanes are all normal, positive and finite skips the subnormal scaling
    and the special-case selects (one any-lane branch, as in sin and cos)."""
    t = x.type
    i32 = _i32(t)
    # Normal positive finite x has bits in [2^23, 0x7F800000): shifted down by 2^23, below
    # 0x7F000000 as an unsigned number; 0, subnormals, negatives, inf and NaN are not.
    shifted = arith.subi(arith.bitcast(i32, x), _const(i32, 0x00800000))
    special = arith.cmpi(arith.CmpIPredicate.uge, shifted, _const(i32, 0x7F000000))
    return _branch_on_any_lane(special, [t], lambda: [_log_any(x)], lambda: [_log_normal(x)])[0]


def _split_at_sqrt_half(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(e, m) with x = 2^e m, m in [sqrt(1/2), sqrt(2)), for normal positive finite f32 x, by
    integer arithmetic alone: x's bits less sqrt(1/2)'s hold e above the mantissa field and
    m's offset from sqrt(1/2) in it."""
    i32 = _i32(x.type)
    offset = arith.subi(arith.bitcast(i32, x), _const(i32, _SQRT_HALF_BITS))
    exponent = arith.shrsi(offset, _const(i32, 23))
    bits = arith.addi(arith.andi(offset, _const(i32, 0x007FFFFF)), _const(i32, _SQRT_HALF_BITS))
    return exponent, arith.bitcast(x.type, bits)


def _log_normal(x: ir.Value, exponent_offset: ir.Value | None = None) -> ir.Value:
    """log(2^exponent_offset x) for normal, positive, finite x: x = 2^e m with m in
    [sqrt(1/2), sqrt(2)) by integer arithmetic alone (x's bits less sqrt(1/2)'s: e in the
    bits above the mantissa, m's offset from sqrt(1/2) below), no compare or select; then
    f = m - 1 (exact) and log = e ln2 + f + f^2 Q(f), ln2 in two parts."""
    t = x.type
    exponent, mantissa = _split_at_sqrt_half(x)
    if exponent_offset is not None:
        exponent = arith.addi(exponent, exponent_offset)
    e = arith.sitofp(t, exponent)
    f = arith.subf(mantissa, _const(t, 1.0))
    small = arith.mulf(arith.mulf(f, f), _horner(f, _LOG_COEFFICIENTS))
    small = _fma(e, _const(t, _LN2_LO), small)
    return _fma(e, _const(t, _LN2_HI), arith.addf(f, small))


def _log_any(x: ir.Value) -> ir.Value:
    t = x.type
    i32 = _i32(t)
    # Subnormals carry fewer mantissa bits: scale them into the normal range first.
    subnormal = arith.cmpf(Cmp.OLT, x, _const(t, _SMALLEST_NORMAL))
    scaled = arith.select(subnormal, arith.mulf(x, _const(t, 2.0**23)), x)
    offset = arith.select(subnormal, _const(i32, -23), _const(i32, 0))
    y = _log_normal(scaled, offset)
    y = arith.select(arith.cmpf(Cmp.OEQ, x, _const(t, math.inf)), x, y)
    y = arith.select(arith.cmpf(Cmp.OEQ, x, _const(t, 0.0)), _const(t, -math.inf), y)
    return arith.select(arith.cmpf(Cmp.ULT, x, _const(t, 0.0)), _const(t, math.nan), y)


def log1p_f32(x: ir.Value) -> ir.Value:
    t = x.type
    u = arith.addf(x, _const(t, 1.0))
    d = arith.subf(u, _const(t, 1.0))
    # log(u) is exact for u; u differs from 1 + x by (d - x), a relative correction x / d.
    corrected = arith.mulf(log_f32(u), arith.divf(x, d))
    y = arith.select(arith.cmpf(Cmp.OEQ, d, _const(t, 0.0)), x, corrected)
    y = arith.select(arith.cmpf(Cmp.OEQ, x, _const(t, math.inf)), x, y)
    return _select_nan(x, y)


# ----------------------------------------------------------------------------------------------
# tanh


# tanh(x) = x P(x^2) / Q(x^2) on [-9, 9], a rational fit to the relative error (max 7.4e-9 in
# float64) from Lambert's continued fraction [7/6] as the start, the f32 coefficients then
# adjusted by a few ulps for the f32 evaluation; beyond 9, tanh rounds to +-1 in f32.
_TANH_P = (  # x^12 .. x^0 in z = x^2
    -8.519851084397637e-14,
    5.290241508748572e-11,
    -2.0251096799484003e-08,
    1.1160760550410487e-05,
    0.0031045780051499605,
    0.13084568083286285,
    1.0,
)
_TANH_Q = (0.00025470476248301566, 0.024497659876942635, 0.4641789495944977, 1.0)
_TANH_SATURATION = 9.0


def tanh_f32(x: ir.Value) -> ir.Value:
    # On |x|, one min clamps the argument and one the result (the fit rounds above 1 near 9),
    # and x's sign comes back in bits: on znver3 the two bounds took the FMA pipes that the
    # polynomials need, where bit operations run on all four (llvm-mca: tanh(x*a+b) then
    # relu 12% fewer cycles). P(0) = Q(0) = 1: tiny and subnormal x (and -0) come back as
    # they are; NaN propagates through the min and keeps its bits through the sign.
    t = x.type
    c = arith.minimumf(mmath.absf(x), _const(t, _TANH_SATURATION))
    z = arith.mulf(c, c)
    y = arith.mulf(c, arith.divf(_horner(z, _TANH_P), _horner(z, _TANH_Q)))
    return _copysign(arith.minimumf(y, _const(t, 1.0)), x)


# ----------------------------------------------------------------------------------------------
# erf, erfc

_ERF_TAYLOR = tuple(  # 2/sqrt(pi) * (-1)^n / (n! (2n+1)), n = 6..0
    2.0 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1))
    for n in reversed(range(7))
)
_ERFC_COEFFICIENTS = (  # Numerical Recipes' erfcc: t^9 .. t^0, fractional error < 1.2e-7
    0.17087277,
    -0.82215223,
    1.48851587,
    -1.13520398,
    0.27886807,
    -0.18628806,
    0.09678418,
    0.37409196,
    1.00002368,
    -1.26551223,
)


def _split_square(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """x^2 as hi + lo, hi = (x's top 12 bits)^2 exactly, lo = the rest (itself rounded): in
    exp(-x^2) a rounded x^2 would cost 2 x^2 ulps (64 at x = 9)."""
    i32 = _i32(x.type)
    top = arith.bitcast(x.type, arith.andi(arith.bitcast(i32, x), _const(i32, -4096)))
    return arith.mulf(top, top), arith.mulf(arith.subf(x, top), arith.addf(x, top))


def _erfc_nonnegative(z: ir.Value, square=None) -> ir.Value:
    """erfc(z) for z >= 0; `square` is z^2 as (hi, lo) where the caller knows it better."""
    t_ = z.type
    z = arith.minimumf(z, _const(t_, 11.0))  # erfc(11) rounds to 0; inf would give NaN
    t = arith.divf(_const(t_, 1.0), arith.addf(_const(t_, 1.0), arith.mulf(z, _const(t_, 0.5))))
    hi, lo = square or _split_square(z)
    big = exp_f32(arith.negf(hi))
    small = exp_f32(arith.subf(_horner(t, _ERFC_COEFFICIENTS), lo))
    return arith.mulf(arith.mulf(t, big), small)


_INV_SQRT2_F32 = 0.70710677  # 1/sqrt(2) rounded to f32


def erfc_f32(x: ir.Value) -> ir.Value:
    t = x.type
    square = None
    scaled = _scaled_by_inverse_sqrt2(x)
    if scaled is not None:
        # erfc(x / sqrt 2) (the normal CDF in GELU): (x / sqrt 2)^2 = x^2 / 2 exactly, where
        # the rounded product would cost x^2 ulps in the tail.
        clamped = arith.minimumf(mmath.absf(scaled), _const(t, 16.0))
        hi, lo = _split_square(clamped)
        half = _const(t, 0.5)
        square = (arith.mulf(hi, half), arith.mulf(lo, half))
    tail = _erfc_nonnegative(mmath.absf(x), square)
    negative = arith.cmpf(Cmp.OLT, x, _const(t, 0.0))
    return _select_nan(x, arith.select(negative, arith.subf(_const(t, 2.0), tail), tail))


def _scaled_by_inverse_sqrt2(v: ir.Value) -> ir.Value | None:
    """x where v = x * (+-1/sqrt 2), else None."""
    owner = defining_op(v)
    if owner is None or owner.name != "arith.mulf":
        return None
    a, b = owner.operands
    for x, c in ((a, b), (b, a)):
        value = constant_value(c)
        if value is not None and abs(abs(value) - _INV_SQRT2_F32) < 1e-7:
            return x
    return None


def erf_f32(x: ir.Value) -> ir.Value:
    t = x.type
    series = arith.mulf(_horner(arith.mulf(x, x), _ERF_TAYLOR), x)
    ax = mmath.absf(x)
    large = _copysign(arith.subf(_const(t, 1.0), _erfc_nonnegative(ax)), x)
    y = arith.select(arith.cmpf(Cmp.OLT, ax, _const(t, 0.5)), series, large)
    return _select_nan(x, y)


# ----------------------------------------------------------------------------------------------
# sin, cos

# pi/2 as 33 + 53 bits (fdlibm's pio2_1, pio2_1t): k * the first part is exact for k < 2^20.
_PIO2_1 = 1.57079632673412561417e00
_PIO2_1T = 6.07710050650619224932e-11
_FAST_REDUCTION_LIMIT = 2.0**20
_F32_REDUCTION_LIMIT = 2.0**13  # below: the reduction in f32 (checked on every f32)
_SIN_COEFFICIENTS = (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)  # Cephes' sinf
_COS_COEFFICIENTS = (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)


def _pi_scaled(bits: int) -> int:
    """floor(pi * 2^bits), from Machin's formula in integers."""

    def arctan_inverse(n: int, scale: int) -> int:
        total, term, k, sign = 0, scale // n, 1, 1
        while term:
            total += sign * (term // k)
            term //= n * n
            k, sign = k + 2, -sign
        return total

    guard = 32
    scale = 1 << (bits + guard)
    return (16 * arctan_inverse(5, scale) - 4 * arctan_inverse(239, scale)) >> guard


def _two_over_pi_pieces(count: int = 8, width: int = 28) -> tuple[float, ...]:
    """2/pi as `count` floats of `width` significant bits each, largest first: an f32 (24
    bits) times a piece is exact in f64."""
    bits = count * width + 8
    two_over_pi = Fraction(2 << (2 * bits), _pi_scaled(bits)) / (1 << bits)
    pieces, rest, position = [], two_over_pi, 0  # 2/pi < 1: its bits start at 2^-1
    for _ in range(count):
        scale = Fraction(1 << (position + width))
        piece = Fraction(math.floor(rest * scale)) / scale
        pieces.append(float(piece))
        rest -= piece
        position += width
    return tuple(pieces)


_TWO_OVER_PI = _two_over_pi_pieces()


def _half_pi_f32_pieces(count: int = 3) -> tuple[float, ...]:
    """pi/2 as `count` f32 values, largest first, each an f32 next to the rest."""
    rest = Fraction(_pi_scaled(200), 1 << 201)
    pieces = []
    for _ in range(count):
        piece = struct.unpack("f", struct.pack("f", float(rest)))[0]
        pieces.append(piece)
        rest -= Fraction(piece)
    return tuple(pieces)


_HALF_PI_F32 = _half_pi_f32_pieces()


def _two_sum(a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
    """s + e == a + b exactly, s = fl(a + b) (Knuth)."""
    s = arith.addf(a, b)
    bb = arith.subf(s, a)
    e = arith.addf(arith.subf(a, arith.subf(s, bb)), arith.subf(b, bb))
    return s, e


def _two_product(a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
    """a * b and its exact rounding error: math.fma, which no rewrite may split (an FMA
    instruction on the targets that take this form)."""
    product = arith.mulf(a, b)
    return product, mmath.fma(a, b, arith.negf(product))


def _fast_two_sum(a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
    """a + b and its exact rounding error, for |a| >= |b| (or a = 0): three ops where
    `_two_sum` takes six (Dekker)."""
    total = arith.addf(a, b)
    return total, arith.subf(b, arith.subf(total, a))


def _reduce_fast(x64: ir.Value) -> tuple[ir.Value, ir.Value]:
    t = x64.type
    k = _round(arith.mulf(x64, _const(t, 2.0 / math.pi)))
    r = arith.subf(
        arith.subf(x64, arith.mulf(k, _const(t, _PIO2_1))), arith.mulf(k, _const(t, _PIO2_1T))
    )
    return r, k


def _reduce_general(x64: ir.Value) -> tuple[ir.Value, ir.Value]:
    """x * 2/pi modulo 4 as k + f, from exact products with the pieces of 2/pi, each reduced
    modulo 4 exactly, summed with their rounding errors kept; r = f * pi/2. Valid for every
    finite f32."""
    t = x64.type
    four, quarter = _const(t, 4.0), _const(t, 0.25)
    total = error = None
    for piece in _TWO_OVER_PI:
        product = arith.mulf(x64, _const(t, piece))
        # product - 4 round(product / 4) is exact and in [-2, 2]: small products stay whole.
        nearest = mmath.roundeven(arith.mulf(product, quarter))
        term = arith.subf(product, arith.mulf(four, nearest))
        if total is None:
            total, error = term, _const(t, 0.0)
            continue
        total, e = _two_sum(total, term)
        error = arith.addf(error, e)
    k = _round(total)
    f = arith.addf(arith.subf(total, k), error)
    return arith.mulf(f, _const(t, math.pi / 2)), k


def _any_lane(condition: ir.Value) -> ir.Value:
    """Whether `condition` holds in any lane (an i1)."""
    t = condition.type
    if not isinstance(t, ir.VectorType):
        return condition
    if ir.VectorType(t).rank != 1:
        flat = [math.prod(ir.VectorType(t).shape)]
        condition = vector.shape_cast(
            ir.VectorType.get(flat, ir.IntegerType.get_signless(1)), condition
        )
    return vector.ReductionOp(
        ir.IntegerType.get_signless(1), vector.CombiningKind.OR, condition
    ).result


def _branch_on_any_lane(condition: ir.Value, result_types: list, if_any, otherwise) -> list:
    """The results of `if_any()` where `condition` holds in some lane, else of `otherwise()`
    (an scf.if: the whole vector takes one branch)."""
    branch = scf.IfOp(_any_lane(condition), result_types, has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp(list(if_any()))
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp(list(otherwise()))
    return list(branch.results)


def _reduce_f32(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """x - k pi/2 in f32 by three FMAs with pi/2 in three f32 pieces (Cody and Waite): the
    first is exact, so r carries two roundings; k fits 2^(24 - 11) steps of pi/2."""
    t = x.type
    k = _round(arith.mulf(x, _const(t, 2.0 / math.pi)))
    minus_k = arith.negf(k)
    r = x
    for piece in _HALF_PI_F32:
        r = _fma(minus_k, _const(t, piece), r)
    return r, arith.fptosi(_i32(t), k)


def _reduce_f64(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """x - k pi/2 in f64, by pi/2 in 33 + 53 bits below 2^20 or, where any lane is beyond,
    Payne and Hanek's reduction; r rounded to f32 once."""
    t = x.type
    f64 = _f64(t)
    x64 = arith.extf(f64, x)
    large = arith.cmpf(Cmp.OGE, mmath.absf(x), _const(t, _FAST_REDUCTION_LIMIT))
    r64, k64 = _branch_on_any_lane(
        large, [f64, f64], lambda: _reduce_general(x64), lambda: _reduce_fast(x64)
    )
    return arith.truncf(t, r64), arith.fptosi(_i32(f64), k64)


def _sin_cos(x: ir.Value, quadrant_shift: int) -> ir.Value:
    """sin(x) (shift 0) or cos(x) = sin(x + pi/2) (shift 1)."""
    t = x.type
    i32 = _i32(t)
    beyond = arith.cmpf(Cmp.OGE, mmath.absf(x), _const(t, _F32_REDUCTION_LIMIT))
    r, k = _branch_on_any_lane(beyond, [t, i32], lambda: _reduce_f64(x), lambda: _reduce_f32(x))
    quadrant = arith.addi(k, _const(i32, quadrant_shift))
    z = arith.mulf(r, r)
    sin_r = arith.addf(arith.mulf(arith.mulf(_horner(z, _SIN_COEFFICIENTS), z), r), r)
    cos_r = arith.addf(
        arith.subf(_const(t, 1.0), arith.mulf(z, _const(t, 0.5))),
        arith.mulf(arith.mulf(_horner(z, _COS_COEFFICIENTS), z), z),
    )
    one = _const(i32, 1)
    odd = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(quadrant, one), _const(i32, 0))
    negate = arith.cmpi(
        arith.CmpIPredicate.ne, arith.andi(quadrant, _const(i32, 2)), _const(i32, 0)
    )
    y = arith.select(odd, cos_r, sin_r)
    y = arith.select(negate, arith.negf(y), y)
    infinite = arith.cmpf(Cmp.OEQ, mmath.absf(x), _const(t, math.inf))
    y = _keep_zero(x, y) if quadrant_shift == 0 else y
    return _select_nan(x, arith.select(infinite, _const(t, math.nan), y))


def sin_f32(x: ir.Value) -> ir.Value:
    return _sin_cos(x, 0)


def cos_f32(x: ir.Value) -> ir.Value:
    return _sin_cos(x, 1)


# ----------------------------------------------------------------------------------------------
# pow, in f64: the error of log(x) is multiplied by y, so f32 alone would lose up to 7 bits.

_LOG_F64_TERMS = 6  # 2 atanh(s) = 2 (s + s^3/3 + ... + s^11/11), |s| < 0.172: 2^-34
_EXP_F64_COEFFICIENTS = (  # r^6 .. r^0: a minimax fit of exp on [-ln2/2, ln2/2], error 2^-29
    0.001383684599792852,
    0.008374815805629003,
    0.04166822556951643,
    0.16666420169828577,
    0.49999992079815403,
    1.0000000363232053,
    1.000000000554167,
)
# In f64 a product k ln2 (|k| < 256) errs by under 2^-44: no two-part constant is needed
# for an f32 result.
_LN2_F64 = math.log(2.0)
_EXP_F64_ROUNDING = 1.5 * 2.0**52 + 1023  # its sum's low bits: round(v) + the exponent bias


def _log_f64(x: ir.Value, *, subnormal_x: bool = True) -> ir.Value:
    """log(x) as f64 for positive, finite f32 x (subnormals too unless `subnormal_x` is
    False): x = 2^e m with m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s), s = (m - 1) /
    (m + 1). The division is an f32 reciprocal (16 lanes a 512-bit division where f64 takes
    8, at twice the cost each) refined by one f64 Newton step: s's error goes from 2^-24 to
    2^-47."""
    t = x.type
    i32 = _i32(t)
    f64 = _f64(t)
    scaled = x
    if subnormal_x:
        subnormal = arith.cmpf(Cmp.OLT, x, _const(t, _SMALLEST_NORMAL))
        scaled = arith.select(subnormal, arith.mulf(x, _const(t, 2.0**23)), x)
    exponent, mantissa = _split_at_sqrt_half(scaled)
    if subnormal_x:
        exponent = arith.select(subnormal, arith.subi(exponent, _const(i32, 23)), exponent)
    one32 = _const(t, 1.0)
    reciprocal = arith.extf(f64, arith.divf(one32, arith.addf(mantissa, one32)))
    m = arith.extf(f64, mantissa)
    one = _const(f64, 1.0)
    numerator, denominator = arith.subf(m, one), arith.addf(m, one)  # exact in f64
    s = arith.mulf(numerator, reciprocal)
    residual = _fma(arith.negf(s), denominator, numerator)
    s = _fma(reciprocal, residual, s)
    s2 = arith.mulf(s, s)
    series = _horner(s2, [2.0 / (2 * n + 1) for n in reversed(range(_LOG_F64_TERMS))])
    return _fma(arith.sitofp(f64, exponent), _const(f64, _LN2_F64), arith.mulf(series, s))


def _exp_f64(x: ir.Value) -> ir.Value:
    """exp(x) for x in [-110, 100] (beyond the f32 range), as f64: x = k ln2 + r, and 2^k
    from the low bits of the sum that rounds x / ln2 (k + 1023 there, shifted into the
    exponent field)."""
    t = x.type
    i64 = _i64(t)
    shifted = _fma(x, _const(t, 1.0 / _LN2_F64), _const(t, _EXP_F64_ROUNDING))
    k = arith.subf(shifted, _const(t, _EXP_F64_ROUNDING))
    r = _fma(k, _const(t, -_LN2_F64), x)
    series = _horner(r, _EXP_F64_COEFFICIENTS)
    scale = arith.bitcast(t, arith.shli(arith.bitcast(i64, shifted), _const(i64, 52)))
    return arith.mulf(series, scale)


def _is_integer(y: ir.Value) -> ir.Value:
    return arith.cmpf(Cmp.OEQ, mmath.floor(y), y)


def _pow_magnitude(ax: ir.Value, y: ir.Value, *, subnormal_x: bool = True) -> ir.Value:
    """|x|^y for positive, finite |x| and finite y: exp(y log|x|) in f64, the exponent
    clamped to where the f32 result is 0 or inf."""
    f64 = _f64(ax.type)
    exponent = arith.mulf(arith.extf(f64, y), _log_f64(ax, subnormal_x=subnormal_x))
    clamped = arith.minimumf(arith.maximumf(exponent, _const(f64, -110.0)), _const(f64, 100.0))
    return arith.truncf(ax.type, _exp_f64(clamped))


# pow by tables in f32, on targets with AVX-512: 16 lanes an op where f64 takes 8, with
# log2 x carried as an unevaluated sum of two f32 (hi + lo) wherever its rounding would be
# multiplied by y. log2 and exp2 each reduce their argument by an entry of a 16-entry table
# (vpermps looks up 16 lanes at once), so that their polynomials are short; vscalefps scales
# by 2^e with IEEE overflow and underflow (no clamps). The FMA pipes bound it. On 1 thread of
# a znver4, 2^22 pairs, alternated calls: 0.93-0.96 ns an element by f64 tables (8-lane
# halves, conversions and permutes: 46 instructions for 8 lanes), 0.71-0.73 in f32 (about 80
# for 16 lanes); numpy's SVML 0.68-0.85 between runs.


class Avx512:
    """The AVX-512 instructions of pow's and exp's table forms, on f32 vectors of any multiple
    of 16 lanes (LLVM intrinsics a 512-bit register at a time)."""

    def fits(self, t: ir.Type) -> bool:
        """Whether vectors of type `t` split into whole 512-bit registers of f32."""
        return isinstance(t, ir.VectorType) and math.prod(ir.VectorType(t).shape) % 16 == 0

    def lookup(self, table: list[str], index: ir.Value) -> ir.Value:
        """The entries (f32 bit patterns in hex) of a 16-entry `table` at the i32 `index`:
        vpermps reads the index's low 4 bits."""
        register = ir.VectorType.get([16], ir.F32Type.get())
        entries = arith.ConstantOp(
            register, ir.Attribute.parse(f"dense<[{', '.join(table)}]> : {register}")
        ).result
        return self._by_registers(
            [index],
            lambda i: llvm.call_intrinsic(
                register, "llvm.x86.avx512.permvar.sf.512", [entries, i], [], []
            ),
        )

    def round_to_fraction(self, x: ir.Value, fraction_bits: int) -> ir.Value:
        """x rounded to the nearest multiple of 2^-fraction_bits (ties to even), any x
        (vrndscaleps)."""
        register = ir.VectorType.get([16], ir.F32Type.get())
        immediate = _const(ir.IntegerType.get_signless(32), fraction_bits << 4 | 0x8)
        every_lane = _const(ir.IntegerType.get_signless(16), -1)
        current_rounding = _const(ir.IntegerType.get_signless(32), 4)
        return self._by_registers(
            [x],
            lambda v: llvm.call_intrinsic(
                register,
                "llvm.x86.avx512.mask.rndscale.ps.512",
                [v, immediate, v, every_lane, current_rounding],
                [],
                [],
            ),
        )

    def scale(self, x: ir.Value, exponent: ir.Value) -> ir.Value:
        """x * 2^floor(exponent), overflowing to inf and underflowing to 0 (vscalefps)."""
        register = ir.VectorType.get([16], ir.F32Type.get())
        every_lane = _const(ir.IntegerType.get_signless(16), -1)
        current_rounding = _const(ir.IntegerType.get_signless(32), 4)
        return self._by_registers(
            [x, exponent],
            lambda a, b: llvm.call_intrinsic(
                register,
                "llvm.x86.avx512.mask.scalef.ps.512",
                [a, b, a, every_lane, current_rounding],
                [],
                [],
            ),
        )

    @staticmethod
    def _by_registers(operands: list[ir.Value], build) -> ir.Value:
        """`build` on each 16 lanes of the (same-shaped) operands, joined into one f32 vector
        of their shape."""
        t = operands[0].type
        flat = math.prod(ir.VectorType(t).shape)
        flattened = [
            vector.shape_cast(ir.VectorType.get([flat], _element(v.type)), v) for v in operands
        ]
        f32 = ir.F32Type.get()
        result = _const(ir.VectorType.get([flat], f32), 0.0)
        for start in range(0, flat, 16):
            pieces = [
                vector.extract_strided_slice(
                    ir.VectorType.get([16], _element(v.type)), v, [start], [16], [1]
                )
                for v in flattened
            ]
            result = vector.insert_strided_slice(build(*pieces), result, [start], [1])
        return vector.shape_cast(_like(t, f32), result)


def _f32_bits(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


# log2 x = k + log2 c + log2(1 + R), x = 2^k z with z in [0.7031, 1.4063) (x's bits less the
# offset's split k from z), c the centre of the 16th of z's range that holds z (its top 4
# mantissa bits), R = z / c - 1, |R| <= 2^-5. The 16th that holds 1 ([0.9844, 1.0313)) has
# c = 1: log2 of z near 1 keeps its relative accuracy; elsewhere |log2 z| > 0.022 exceeds
# |log2(1 + R)|. log2 c is split at 2^-16 so that k + its high part is exact.
_POW_LOG_OFFSET = 0x3F340000


def _pow_log_tables() -> tuple[list[str], list[str], list[str]]:
    reciprocals, high, low = [], [], []
    for i in range(16):
        start = _f32_bits(_POW_LOG_OFFSET + i * 2**19)
        end = _f32_bits(_POW_LOG_OFFSET + (i + 1) * 2**19)
        reciprocal = 1.0 if start <= 1.0 < end else _as_f32(2.0 / (start + end))
        log_c = -math.log2(reciprocal) + 0.0
        log_c_high = round(log_c * 2**16) / 2**16
        reciprocals.append(_hex32(reciprocal))
        high.append(_hex32(log_c_high))
        low.append(_hex32(log_c - log_c_high))
    return reciprocals, high, low


_POW_RECIPROCALS, _POW_LOG_HIGH, _POW_LOG_LOW = _pow_log_tables()
# 1/ln2 in two f32 pieces; -1/(2 ln2) is minus half of each.
_INV_LN2_HIGH = float.fromhex("0x1.715476p+0")
_INV_LN2_LOW = float.fromhex("0x1.4ae0cp-26")
# log2(1 + R) = R / ln2 - R^2 / (2 ln2) + R^3 P(R), |R| <= 2^-5: P a cubic fitted to the
# series, 2^-40.1 absolute.
_POW_LOG_COEFFICIENTS = tuple(
    float.fromhex(c) for c in ("-0x1.ece48p-3", "0x1.27abbcp-2", "-0x1.715472p-2", "0x1.ec709cp-2")
)
# 2^w = 2^e 2^(j / 16) 2^f with e + j / 16 = w rounded to 16ths, |f| <= 1/32: 2^(j / 16) an f32
# and its relative rounding error from tables, 2^f = 1 + f Q(f), Q a quadratic (2^-28.7).
_POW_EXP2_HIGH = [_hex32(2.0 ** (j / 16)) for j in range(16)]
_POW_EXP2_ERROR = [
    _hex32((2.0 ** (j / 16) - _as_f32(2.0 ** (j / 16))) / _as_f32(2.0 ** (j / 16)))
    for j in range(16)
]
_POW_EXP2_COEFFICIENTS = tuple(
    float.fromhex(c) for c in ("0x1.c6b348p-5", "0x1.ebff92p-3", "0x1.62e430p-1")
)
# 2^19 + 2^18 plus a multiple of 1/16 below 2^18 in magnitude holds 16 times it in its low
# mantissa bits (beyond, 2^n overflows or underflows whatever the entry).
_SIXTEENTHS_ROUNDING = 1.5 * 2.0**19
# Below this n (the exponent rounded to 16ths), 2^n 2^f may be under 2^-126.
_POW_SUBNORMAL_BELOW = -125.5
# Beyond |y| = 2^24, pow takes the special-case form. In f32 bits: 2^-126, 2^24, and the span
# of the normal finite bit patterns (2^-126 up to inf).
_F32_SMALLEST_NORMAL_BITS = 0x00800000
_LARGEST_ORDINARY_EXPONENT_BITS = 0x4B800000
_F32_ORDINARY_LIMIT = 0x7F800000 - 0x00800000


def _pow_by_tables(x: ir.Value, y: ir.Value, avx512: Avx512) -> tuple[ir.Value, ir.Value]:
    """|x|^y for normal positive finite x and |y| < 2^24, as 2^(y log2 x) by tables in f32:
    log2 x as hi + lo with a relative error under 2^-35 (so that y times it errs by under
    2^-27 wherever the result is finite and nonzero), then exp2 of y hi + y lo. Returns the
    power and y log2 x rounded to 16ths."""
    t = x.type
    i32 = _i32(t)
    one = _const(t, 1.0)
    bits = arith.bitcast(i32, x)
    offset = arith.subi(bits, _const(i32, _POW_LOG_OFFSET))
    k = arith.sitofp(t, arith.shrsi(offset, _const(i32, 23)))
    z = arith.bitcast(t, arith.subi(bits, arith.andi(offset, _const(i32, -0x800000))))
    index = arith.shrsi(offset, _const(i32, 19))
    reciprocal = avx512.lookup(_POW_RECIPROCALS, index)
    # R = z / c - 1 = r + r_low exactly: z / c rounds to within 2^-5 of 1, minus 1 exactly.
    quotient, r_low = _two_product(z, reciprocal)
    r = arith.subf(quotient, one)
    # log2(1 + R) = R / ln2 - R^2 / (2 ln2) + R^3 P(R): the first two terms as f32 sums with
    # their exact rounding errors, which go into the sum of corrections (smallest first,
    # each product an FMA on the sum so far) with the cubic and log2 c's low part.
    inv_ln2 = _const(t, _INV_LN2_HIGH)
    linear, linear_error = _two_product(r, inv_ln2)
    square, square_error = _two_product(r, r)
    quadratic, quadratic_error = _two_product(square, _const(t, -_INV_LN2_HIGH / 2))
    tail, tail_error = _fast_two_sum(linear, quadratic)
    low = arith.addf(quadratic_error, linear_error)
    low = _fma(square_error, _const(t, -_INV_LN2_HIGH / 2), low)
    # 1/ln2's low part times R - R^2/2 (= tail / ln2's high part, to 2^-24).
    low = _fma(tail, _const(t, _INV_LN2_LOW / _INV_LN2_HIGH), low)
    # r_low's share of both terms: r_low (1 - r) / ln2 (1/ln2 - linear, to 2^-24).
    low = _fma(r_low, arith.subf(inv_ln2, linear), low)
    head = arith.addf(k, avx512.lookup(_POW_LOG_HIGH, index))  # exact
    high, high_error = _fast_two_sum(head, tail)
    low = arith.addf(arith.addf(low, tail_error), high_error)
    rounded = arith.addf(r, r_low)
    cube = arith.mulf(arith.mulf(rounded, rounded), rounded)
    low = _fma(cube, _horner(rounded, _POW_LOG_COEFFICIENTS), low)
    low = arith.addf(low, avx512.lookup(_POW_LOG_LOW, index))
    # y log2 x = w + w_low (w_low is not small: low holds the cubic and log2 c below 2^-16);
    # 2^(w + w_low) = 2^floor(n) 2^(n - floor(n)) 2^f, n = w + w_low in 16ths, |f| <= 1/32.
    w, w_error = _two_product(y, high)
    w_low = _fma(y, low, w_error)
    n = avx512.round_to_fraction(arith.addf(w, w_low), 4)
    f = arith.addf(arith.subf(w, n), w_low)
    entry_index = arith.bitcast(i32, arith.addf(n, _const(t, _SIXTEENTHS_ROUNDING)))
    entry = avx512.lookup(_POW_EXP2_HIGH, entry_index)
    entry_error = avx512.lookup(_POW_EXP2_ERROR, entry_index)
    fraction = _fma(f, _horner(f, _POW_EXP2_COEFFICIENTS), entry_error)
    return avx512.scale(_fma(entry, fraction, entry), n), n


def pow_f32(x: ir.Value, y: ir.Value, avx512: Avx512 | None = None) -> ir.Value:
    """A vector whose lanes all have a normal positive x and |y| < 2^24 (the common case)
    takes the arithmetic alone (by tables where `avx512` is given and fits the vector, then
    only where no result may be subnormal); one with any other lane also selects the
    special cases."""
    t = x.type
    i32 = _i32(t)
    # In the bits, as unsigned integers: x is normal, positive and finite where x - 2^-126
    # is below 0x7F000000, and |y| < 2^24 where |y| + (0x7F000000 - 2^24) is; one
    # comparison of their maximum tests both.
    x_from_normal = arith.subi(arith.bitcast(i32, x), _const(i32, _F32_SMALLEST_NORMAL_BITS))
    y_magnitude = arith.andi(arith.bitcast(i32, y), _const(i32, 0x7FFFFFFF))
    y_shifted = arith.addi(
        y_magnitude, _const(i32, _F32_ORDINARY_LIMIT - _LARGEST_ORDINARY_EXPONENT_BITS)
    )
    special = arith.cmpi(
        arith.CmpIPredicate.uge,
        arith.maxui(x_from_normal, y_shifted),
        _const(i32, _F32_ORDINARY_LIMIT),
    )
    if avx512 is None or not avx512.fits(t):
        return _branch_on_any_lane(
            special,
            [t],
            lambda: [_pow_special(x, y)],
            lambda: [_pow_magnitude(x, y, subnormal_x=False)],
        )[0]
    # The tables' arithmetic is harmless on special lanes (no traps): a vector with one, or
    # with a result that may be subnormal (which the f32 form would round twice: the FMA,
    # then the scaling), takes the special cases' f64 form instead, in one branch.
    power, n = _pow_by_tables(x, y, avx512)
    tiny = arith.cmpf(Cmp.OLT, n, _const(t, _POW_SUBNORMAL_BELOW))
    return _branch_on_any_lane(
        arith.ori(special, tiny), [t], lambda: [_pow_special(x, y)], lambda: [power]
    )[0]


def _pow_special(x: ir.Value, y: ir.Value) -> ir.Value:
    """pow with the IEEE special cases selected lane by lane."""
    t = x.type
    ax = mmath.absf(x)
    zero, one = _const(t, 0.0), _const(t, 1.0)
    # |x| is 0 or inf or not normal in f64 only where the special cases below decide.
    safe = arith.select(arith.cmpf(Cmp.ONE, ax, zero), ax, one)
    safe = arith.select(arith.cmpf(Cmp.OEQ, safe, _const(t, math.inf)), one, safe)
    magnitude = _pow_magnitude(safe, y)
    # |x| = 0 or inf: 0 or inf by the sign of y.
    y_positive = arith.cmpf(Cmp.OGT, y, zero)
    inf = _const(t, math.inf)
    at_zero = arith.select(y_positive, zero, inf)
    at_inf = arith.select(y_positive, inf, zero)
    magnitude = arith.select(arith.cmpf(Cmp.OEQ, ax, zero), at_zero, magnitude)
    magnitude = arith.select(arith.cmpf(Cmp.OEQ, ax, inf), at_inf, magnitude)
    # y = +-inf: 1 for |x| = 1, else 0 or inf by whether |x| < 1 and y's sign.
    y_infinite = arith.cmpf(Cmp.OEQ, mmath.absf(y), inf)
    shrinks = arith.xori(arith.cmpf(Cmp.OLT, ax, one), y_positive)
    at_inf_power = arith.select(shrinks, inf, zero)
    at_inf_power = arith.select(arith.cmpf(Cmp.OEQ, ax, one), one, at_inf_power)
    magnitude = arith.select(y_infinite, at_inf_power, magnitude)
    # x < 0 (or -0): odd integer powers are negative; non-integer powers are NaN.
    integer = _is_integer(y)
    odd = arith.andi(integer, arith.xori(_is_integer(arith.mulf(y, _const(t, 0.5))), _true(t)))
    odd = arith.andi(odd, arith.xori(y_infinite, _true(t)))
    negative_x = arith.cmpf(Cmp.OLT, _copysign(one, x), zero)
    result = arith.select(arith.andi(negative_x, odd), arith.negf(magnitude), magnitude)
    not_integer = arith.xori(arith.ori(integer, y_infinite), _true(t))
    finite_negative = arith.andi(arith.cmpf(Cmp.OLT, x, zero), arith.cmpf(Cmp.ONE, ax, inf))
    result = arith.select(arith.andi(finite_negative, not_integer), _const(t, math.nan), result)
    result = _select_nan(y, _select_nan(x, result))
    # pow(x, 0) = 1 and pow(1, y) = 1, NaNs included.
    unit = arith.ori(arith.cmpf(Cmp.OEQ, y, zero), arith.cmpf(Cmp.OEQ, x, one))
    return arith.select(unit, one, result)


def _true(t: ir.Type) -> ir.Value:
    return _const(_like(t, ir.IntegerType.get_signless(1)), 1)


# x^n for constant integers up to this magnitude are products: |x|^8 < 2^1024 stays finite
# in f64, and x^-8 of the smallest f32 is inf either way.
_LARGEST_PRODUCT_POWER = 8


def _pow(x: ir.Value, y: ir.Value, avx512: Avx512 | None = None) -> ir.Value:
    exponent = constant_value(y)
    if exponent is None:
        return pow_f32(x, y, avx512)
    if exponent == 0.0:
        return _const(x.type, 1.0)  # pow(x, 0) = 1, NaN x too
    if exponent == 1.0:
        return x
    if exponent == 2.0:
        return arith.mulf(x, x)
    if exponent == -1.0:
        return arith.divf(_const(x.type, 1.0), x)
    if exponent == 0.5:
        return _square_root_power(x)
    if abs(exponent) <= _LARGEST_PRODUCT_POWER and exponent == int(exponent):
        return _integer_power(x, int(exponent))
    return pow_f32(x, y, avx512)


def _integer_power(x: ir.Value, n: int) -> ir.Value:
    """x^n by squaring in f64, then 1 / x^|n| for n < 0 and one rounding to f32: x^2 is
    exact, every later product and the division round at 2^-53, so the result is the correctly
    rounded one but for a double rounding (0.5 ulp + 2^-28). IEEE pow's cases for an integer
    power follow from the arithmetic: (-0)^3 = -0, (-0)^-3 = -inf, (-inf)^3 = -inf, NaN."""
    f64 = _f64(x.type)
    base = arith.extf(f64, x)
    result, power, remaining = None, base, abs(n)
    while remaining:
        if remaining & 1:
            result = power if result is None else arith.mulf(result, power)
        remaining >>= 1
        if remaining:
            power = arith.mulf(power, power)
    if n < 0:
        result = arith.divf(_const(f64, 1.0), result)
    return arith.truncf(x.type, result)


def _square_root_power(x: ir.Value) -> ir.Value:
    """pow(x, 0.5) is sqrt(x) (correctly rounded) but for pow(-0, 0.5) = +0 and
    pow(-inf, 0.5) = +inf: -0 + 0 is +0."""
    t = x.type
    root = mmath.sqrt(arith.addf(x, _const(t, 0.0)))
    inf = _const(t, math.inf)
    return arith.select(arith.cmpf(Cmp.OEQ, x, arith.negf(inf)), inf, root)


# ----------------------------------------------------------------------------------------------
# Patterns

_UNARY = {
    "math.log": log_f32,
    "math.log1p": log1p_f32,
    "math.tanh": tanh_f32,
    "math.erf": erf_f32,
    "math.erfc": erfc_f32,
    "math.sin": sin_f32,
    "math.cos": cos_f32,
}
# The ops that become range reductions and polynomials: a dozen constants each, and the
# registers to hold them.
APPROXIMATED = ("math.exp", "math.powf", *_UNARY)
_NARROW = ("f16", "bf16")


def _in_f32(op, build) -> ir.Value:
    """Builds `build` on op's operands, in f32 for f16/bf16 operands."""
    t = op.operands[0].type
    if str(_element(t)) == "f32":
        return build(*op.operands)
    wide = [arith.extf(_f32(v.type), v) for v in op.operands]
    return arith.truncf(t, build(*wide))


def _approximation(build, keep, *, reads_op: bool = False):
    """A pattern replacing an op by `build` of its operands (`build(..., op=op)` with
    `reads_op`, for builders that read the op's flags), unless `keep(op)`."""

    def rewrite(op, rewriter):
        if str(_element(op.operands[0].type)) not in ("f32", *_NARROW):
            return True  # not matched: f64 keeps the math op
        if keep(op):
            return True
        with rewriter.ip, op.location:
            value = _in_f32(op, functools.partial(build, op=op) if reads_op else build)
        rewriter.replace_op(op, [value])
        return None

    return rewrite


def _has_avx512(desc) -> bool:
    """Whether the target is an x86 CPU with AVX-512 (avx512f)."""
    return desc is not None and desc.is_x86_cpu and desc.has_feature("avx512f")


# ----------------------------------------------------------------------------------------------
# Rounding to integers on x86 CPUs before SSE4.1 (no roundps/roundpd): LLVM lowers vector
# floor, ceil and roundeven there to a libm call an element.


def _lacks_rounding_instructions(desc) -> bool:
    return desc is not None and desc.is_x86_cpu and not desc.has_feature("sse4.1")


def _round_to_integer(x: ir.Value, direction: str) -> ir.Value:
    """x rounded to an integer (`direction`: "even" to nearest even, "down", "up") with adds
    alone: below 2^23 (f32) or 2^52 (f64) in magnitude, x + c - c with c = 2^23 (2^52) of
    x's sign rounds to nearest even; floor and ceil step from there where it went the other
    way; larger x, infinities and NaN are integral already. The sign of x is kept (-0 stays
    -0, ceil(-0.5) is -0)."""
    t = x.type
    bits = 23 if str(_element(t)) == "f32" else 52
    ax = mmath.absf(x)
    magic = mmath.copysign(_const(t, 2.0**bits), x)
    nearest = arith.subf(arith.addf(x, magic), magic)
    one = _const(t, 1.0)
    if direction == "down":
        nearest = arith.select(arith.cmpf(Cmp.OGT, nearest, x), arith.subf(nearest, one), nearest)
    elif direction == "up":
        nearest = arith.select(arith.cmpf(Cmp.OLT, nearest, x), arith.addf(nearest, one), nearest)
    integral = arith.cmpf(Cmp.UGE, ax, _const(t, 2.0**bits))  # or NaN
    return arith.select(integral, x, mmath.copysign(nearest, x))


_ROUNDINGS = {"math.roundeven": "even", "math.floor": "down", "math.ceil": "up"}


def _rounding(op, rewriter):
    if str(_element(op.operands[0].type)) not in ("f32", "f64"):
        return True  # not matched
    with rewriter.ip, op.location:
        value = _round_to_integer(op.operands[0], _ROUNDINGS[op.name])
    rewriter.replace_op(op, [value])
    return None


def _log_of_one_plus(op, rewriter):
    """log(1 + x) -> log1p(x): accurate where x is small (softplus of negative inputs)."""
    owner = defining_op(op.operands[0])
    if owner is None or owner.name != "arith.addf":
        return True
    a, b = owner.operands
    x = b if constant_value(a) == 1.0 else a if constant_value(b) == 1.0 else None
    if x is None:
        return True
    with rewriter.ip, op.location:
        value = mmath.log1p(x)
    rewriter.replace_op(op, [value])
    return None


@register_pass(
    "math-approximate",
    "Write exp, log, log1p, tanh, erf, erfc, sin, cos and pow (f32, f16, bf16) as "
    "vectorizable arithmetic",
)
def math_approximate(module: ir.Operation, keep=lambda op: False) -> None:
    """`keep(op)`: ops a target lowers itself (the NVVM pipeline's math-to-ptx takes bf16
    tanh), left as they are."""
    first = RewritePatternSet(module.context)
    first.add("math.log", _log_of_one_plus)
    apply_patterns_and_fold_greedily(module, first.freeze())
    desc = target.of(module)
    avx512 = Avx512() if _has_avx512(desc) else None
    patterns = RewritePatternSet(module.context)
    for name, build in _UNARY.items():
        patterns.add(name, _approximation(build, keep))
    patterns.add(
        "math.exp", _approximation(functools.partial(_exp, avx512=avx512), keep, reads_op=True)
    )
    patterns.add("math.powf", _approximation(functools.partial(_pow, avx512=avx512), keep))
    apply_patterns_and_fold_greedily(module, patterns.freeze())
    if _lacks_rounding_instructions(desc):
        roundings = RewritePatternSet(module.context)
        for name in _ROUNDINGS:
            roundings.add(name, _rounding)
        apply_patterns_and_fold_greedily(module, roundings.freeze())
