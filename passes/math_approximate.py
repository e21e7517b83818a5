"""`--math-approximate`: f32 `math.exp` and `math.erf` as polynomials in arith ops.

libm's expf is a call per element: it keeps vectorized kernels scalar and stops LLVM from
vectorizing loops. Written out (Cephes' expf: range reduction by ln 2, a degree-6 polynomial,
scaling by 2^k through the exponent bits), exp vectorizes like any arithmetic and stays within
about 2 ulp. exp(x) is +inf above 88.72, 0 below -87.34 (where f32 turns subnormal), NaN for NaN.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith
from mlir.dialects import math as mmath
from mlir.rewrite import RewritePatternSet, apply_patterns_and_fold_greedily

from .registry import register_pass

_LOG2E = 1.44269504088896341
_LN2_HI = 0.693359375
_LN2_LO = -2.12194440e-4
_COEFFICIENTS = (  # x^6 .. x^2 of Cephes' expf polynomial; then + r + 1
    1.9875691500e-4,
    1.3981999507e-3,
    8.3334519073e-3,
    4.1665795894e-2,
    1.6666665459e-1,
    5.0000001201e-1,
)
_OVERFLOW = 88.72283905206835
_UNDERFLOW = -87.33654475055310898657  # log of the smallest normal f32


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


def _power_of_two(n: ir.Value) -> ir.Value:
    """2^n as f32, for -126 <= n <= 127."""
    t = n.type
    bits = arith.shli(arith.addi(n, _const(t, 127)), _const(t, 23))
    return arith.bitcast(_like(t, ir.F32Type.get()), bits)


def exp_f32(x: ir.Value) -> ir.Value:
    t = x.type
    i32 = _like(t, ir.IntegerType.get_signless(32))
    clamped = arith.minimumf(arith.maximumf(x, _const(t, _UNDERFLOW)), _const(t, _OVERFLOW))
    k = mmath.floor(arith.addf(arith.mulf(clamped, _const(t, _LOG2E)), _const(t, 0.5)))
    r = arith.subf(clamped, arith.mulf(k, _const(t, _LN2_HI)))
    r = arith.subf(r, arith.mulf(k, _const(t, _LN2_LO)))
    p = _const(t, _COEFFICIENTS[0])
    for c in _COEFFICIENTS[1:]:
        p = arith.addf(arith.mulf(p, r), _const(t, c))
    p = arith.addf(arith.addf(arith.mulf(arith.mulf(p, r), r), r), _const(t, 1.0))
    # 2^k as 2^h * 2^(k-h), h = k >> 1, each a normal float built from its exponent bits:
    # k spans -127..128 over the range, one factor alone would leave the normal exponents.
    ki = arith.fptosi(i32, k)
    half = arith.shrsi(ki, _const(i32, 1))
    y = arith.mulf(arith.mulf(p, _power_of_two(half)), _power_of_two(arith.subi(ki, half)))
    over = arith.cmpf(arith.CmpFPredicate.OGT, x, _const(t, _OVERFLOW))
    under = arith.cmpf(arith.CmpFPredicate.OLT, x, _const(t, _UNDERFLOW))
    y = arith.select(over, _const(t, float("inf")), y)
    y = arith.select(under, _const(t, 0.0), y)
    nan = arith.cmpf(arith.CmpFPredicate.UNO, x, x)
    return arith.select(nan, x, y)


# erf: an odd Taylor series below 0.5 (relative error < 1e-7 there), above it Abramowitz and
# Stegun 7.1.26, 1 - t (a1 + t (a2 + ...)) exp(-x^2) with t = 1 / (1 + p x) (absolute error
# 1.5e-7, and erf > 0.52 there).
_ERF_TAYLOR = tuple(  # 2/sqrt(pi) * (-1)^n / (n! (2n+1)), n = 0..6
    2.0 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(7)
)
_ERF_P = 0.3275911
_ERF_A = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)


def erf_f32(x: ir.Value) -> ir.Value:
    t = x.type
    x2 = arith.mulf(x, x)
    series = _const(t, _ERF_TAYLOR[-1])
    for c in reversed(_ERF_TAYLOR[:-1]):
        series = arith.addf(arith.mulf(series, x2), _const(t, c))
    small = arith.mulf(series, x)
    ax = mmath.absf(x)
    u = arith.divf(_const(t, 1.0), arith.addf(_const(t, 1.0), arith.mulf(ax, _const(t, _ERF_P))))
    poly = _const(t, _ERF_A[0])
    for c in _ERF_A[1:]:
        poly = arith.addf(arith.mulf(poly, u), _const(t, c))
    tail = arith.mulf(arith.mulf(poly, u), exp_f32(arith.negf(x2)))
    magnitude = arith.subf(_const(t, 1.0), tail)
    negative = arith.cmpf(arith.CmpFPredicate.OLT, x, _const(t, 0.0))
    large = arith.select(negative, arith.negf(magnitude), magnitude)
    is_small = arith.cmpf(arith.CmpFPredicate.OLT, ax, _const(t, 0.5))
    return arith.select(is_small, small, large)


def _approximation(build):
    def rewrite(op, rewriter):
        x = op.operands[0]
        if str(_element(x.type)) != "f32":
            return True  # not matched: other widths keep the math op
        with rewriter.ip, op.location:
            value = build(x)
        rewriter.replace_op(op, [value])
        return None

    return rewrite


@register_pass("math-approximate", "Write f32 math.exp and math.erf as vectorizable polynomials")
def math_approximate(module: ir.Operation) -> None:
    patterns = RewritePatternSet(module.context)
    patterns.add("math.exp", _approximation(exp_f32))
    patterns.add("math.erf", _approximation(erf_f32))
    apply_patterns_and_fold_greedily(module, patterns.freeze())
