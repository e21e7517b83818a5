"""The accuracy of the vectorized transcendental ops, in f32 ulps against float64 numpy.

Every op runs through the whole CPU pipeline (vectorized, with a scalar remainder) on a
sweep that includes 0, -0, +-inf, NaN, subnormals, large and tiny magnitudes and the
thresholds where each approximation switches method. The bounds are the ones that
`passes/math_approximate.py` states.
"""

import math

import numpy as np
import pytest
import strata
from strata.dialects import target
from support import tensor_type

erf64 = np.vectorize(math.erf, otypes=[np.float64])
erfc64 = np.vectorize(math.erfc, otypes=[np.float64])


def sweep(rng, low=-1e38, high=1e38) -> np.ndarray:
    """Specials, subnormals, powers of ten, thresholds and uniform samples, within [low, high]
    for the finite ones."""
    tiny = [2.0**-149, 3 * 2.0**-149, 1e-42, 1e-40, 2.0**-127, 2.0**-126, 1.5 * 2.0**-126]
    decades = [10.0**e for e in range(-38, 39)]
    thresholds = [0.5, 0.625, 0.7071, 1.0, 2.0, 9.0, 10.0, 87.3, 88.7, 88.72, 89.0, 103.9, 104.0]
    thresholds += [math.pi / 4, math.pi / 2, math.pi, 2**20 - 1, 2.0**20, 2.0**24, 1e6, 1e10]
    magnitudes = np.array(tiny + decades + thresholds)
    finite = np.concatenate(
        [
            magnitudes,
            -magnitudes,
            [0.0],
            rng.uniform(-10, 10, 3000),
            rng.uniform(-1, 1, 1000),
            np.exp(rng.uniform(-80, 80, 1000)) * rng.choice([-1, 1], 1000),
        ]
    )
    finite = finite[(finite >= low) & (finite <= high)]
    specials = [-0.0, math.inf, -math.inf, math.nan]
    return np.concatenate([finite, specials]).astype(np.float32)


def ulp_errors(actual: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|actual - exact| in ulps of exact as an f32 (subnormal ulps below 2^-126); inf where a
    NaN, an infinity or the sign of a zero differs."""
    actual = actual.astype(np.float64)
    rounded = exact.astype(np.float32).astype(np.float64)
    _, exponent = np.frexp(np.abs(exact))
    ulp = np.maximum(np.ldexp(1.0, exponent - 24), 2.0**-149)
    with np.errstate(invalid="ignore"):
        errors = np.abs(actual - exact) / ulp
    nan = np.isnan(exact) | np.isnan(actual)
    errors[nan] = np.where(np.isnan(exact) & np.isnan(actual), 0.0, np.inf)[nan]
    infinite = np.isinf(rounded) | np.isinf(actual)
    errors[infinite & ~nan] = np.where(actual == rounded, 0.0, np.inf)[infinite & ~nan]
    zeros = (exact == 0) & (actual == 0)
    errors[zeros] = np.where(np.signbit(actual) == np.signbit(exact), 0.0, np.inf)[zeros]
    return errors


def compile_unary(body: str, size: int):
    """`body` computes %y from %x (tensor<size x f32>); returns the compiled function."""
    t = tensor_type([size])
    text = f"func.func @main(%x: {t}) -> {t} {{\n{body.format(t=t)}\n  return %y : {t}\n}}\n"
    return strata.compile(text)


def one_op(name, attrs=""):
    attr_text = f" {{{{{attrs}}}}}" if attrs else ""
    return f'  %y = "graph.{name}"(%x){attr_text} : ({{t}}) -> {{t}}'


ONE_PLUS = (
    '  %one = "graph.constant"() {{value = dense<1.0> : tensor<f32>}} : () -> tensor<f32>\n'
    '  %s = "graph.add"(%x, %one) : ({t}, tensor<f32>) -> {t}\n'
)


def sigmoid64(x):
    return 1.0 / (1.0 + np.exp(-x))


def gelu_tanh_argument(x):
    return 2.0 * math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)


def gelu_tanh_bound(x):
    # x sigmoid(v) inherits the rounding of v in f32 (any f32 evaluation of this form does):
    # for v < 0 about |v| ulps of v's two ulps; 6 ulps where |v| is small.
    v = gelu_tanh_argument(x)
    return np.where(v < -3.0, 6.0 + 2.5 * np.abs(v), 6.0)


def gelu64(x):
    return x * 0.5 * erfc64(-x / 2**0.5)


def gelu_tanh64(x):
    # 0.5 x (1 + tanh(u)) as x sigmoid(2u): the tanh form cancels in float64 too.
    return x * sigmoid64(gelu_tanh_argument(x))


# name: (graph body, float64 reference, ulp bound, finite domain)
UNARY = {
    "exp": (one_op("exp"), np.exp, 2, None),
    "log": (one_op("log"), np.log, 1, None),
    "log1p": (ONE_PLUS + '  %y = "graph.log"(%s) : ({t}) -> {t}', np.log1p, 3, None),
    "tanh": (one_op("tanh"), np.tanh, 5, None),
    "sigmoid": (one_op("sigmoid"), sigmoid64, 4, None),
    # Below -88, x e^x is subnormal while e^x underflows: silu's bound holds above.
    "silu": (one_op("silu"), lambda x: x * sigmoid64(x), 4, (-88, np.inf)),
    "erf": (one_op("erf"), erf64, 3, None),
    # Likewise the GELUs below -13 (erf form) and -9.9 (tanh form), where their normal-range
    # results come from a subnormal factor.
    "gelu": (one_op("gelu", 'approximate = "none"'), gelu64, 6, (-13, np.inf)),
    "gelu_tanh": (
        one_op("gelu", 'approximate = "tanh"'),
        gelu_tanh64,
        gelu_tanh_bound,
        (-9.9, 1e12),
    ),
    "sin": (one_op("sin"), np.sin, 2, None),
    "cos": (one_op("cos"), np.cos, 2, None),
    "sqrt": (one_op("sqrt"), np.sqrt, 0.5, None),
    "rsqrt": (one_op("rsqrt"), lambda x: 1.0 / np.sqrt(x), 1.5, None),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_accuracy(name, rng):
    body, reference, bound, domain = UNARY[name]
    x = sweep(rng, *(domain or (-np.inf, np.inf)))
    # Sorted as well: vectors of one kind of value take the fast paths that skip special
    # cases (log's, sin's, cos's); the mixed ones take the general paths.
    x = np.concatenate([x, np.sort(x)])
    fn = compile_unary(body, x.size)
    with np.errstate(all="ignore"):
        exact = reference(x.astype(np.float64))
    actual = fn(x)
    errors = ulp_errors(actual, exact)
    with np.errstate(all="ignore"):
        bounds = bound(x.astype(np.float64)) if callable(bound) else np.full(x.shape, bound)
    worst = int(np.argmax(errors - bounds))
    assert errors[worst] <= bounds[worst], (
        f"{name}({x[worst]!r}) = {actual[worst]!r}, exact {exact[worst]!r}: "
        f"{errors[worst]:.2f} ulp > {bounds[worst]}"
    )


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_reduced_in_f32(name, rng):
    """Below 2^13 every lane of a vector is reduced in f32 (the sweep's vectors mix in larger
    magnitudes and take f64): uniform samples, and the floats nearest k pi/2 and their
    neighbours, where the reduced argument is smallest."""
    k = np.arange(1, 5215, dtype=np.float64)
    nearest = (k * (np.pi / 2)).astype(np.float32)
    neighbours = np.concatenate([np.nextafter(nearest, 0), nearest, np.nextafter(nearest, 9e3)])
    x = np.concatenate([rng.uniform(-8191.9, 8191.9, 1 << 16), neighbours, -neighbours])
    x = x.astype(np.float32)
    x = x[np.abs(x) < 2.0**13]
    actual = compile_unary(one_op(name), x.size)(x)
    errors = ulp_errors(actual, getattr(np, name)(x.astype(np.float64)))
    worst = int(np.argmax(errors))
    assert errors[worst] <= 2, f"{name}({x[worst]!r}) = {actual[worst]!r}: {errors[worst]:.2f} ulp"


def check_pow(x: np.ndarray, y: np.ndarray, bound: float) -> None:
    """graph.pow of each pair (x, y), compiled for the host, within `bound` ulps."""
    t = tensor_type([x.size])
    text = (
        f"func.func @main(%x: {t}, %e: {t}) -> {t} {{\n"
        f'  %y = "graph.pow"(%x, %e) : ({t}, {t}) -> {t}\n'
        f"  return %y : {t}\n}}\n"
    )
    actual = strata.compile(text)(x, y)
    with np.errstate(all="ignore"):
        exact = np.power(x.astype(np.float64), y.astype(np.float64))
    errors = ulp_errors(actual, exact)
    worst = int(np.argmax(errors))
    assert errors[worst] <= bound, (
        f"pow({x[worst]!r}, {y[worst]!r}) = {actual[worst]!r}, exact {exact[worst]!r}: "
        f"{errors[worst]:.2f} ulp"
    )


def test_pow_accuracy(rng):
    bases = sweep(rng)
    exponents = np.concatenate(
        [
            [0.0, -0.0, 1.0, -1.0, 2.0, 3.0, -3.0, 0.5, -0.5, 1e-8, 7.0, 40.0, -40.0],
            [math.inf, -math.inf, math.nan, 2.0**24, 2.0**24 + 2, 1e30],
            rng.uniform(-30, 30, 300),
        ]
    ).astype(np.float32)
    x = np.repeat(bases, exponents.size)
    y = np.tile(exponents, bases.size)
    check_pow(x, y, bound=1)


@pytest.mark.parametrize("form", ["tables", "polynomials"])
def test_pow_accuracy_on_random_pairs(form, rng, monkeypatch):
    """The arithmetic that vectors of ordinary lanes take, both forms (AVX-512's f32 tables,
    the f64 polynomials of other targets) on 2^18 pairs of each of six ranges: bases near 1
    to large powers, bases over the whole range, huge exponents of bases within 0.1% and
    within 1e-6 of 1, bases in the tables' 16ths beside the one that holds 1 to the powers
    that still give a finite result, results that overflow and underflow."""
    from strata.passes import math_approximate

    if form == "polynomials":
        monkeypatch.setattr(math_approximate, "_has_avx512", lambda desc: False)
    elif not math_approximate._has_avx512(target.host_cpu()):
        pytest.skip("the host has no AVX-512")
    n = 1 << 18
    ranges = [
        (rng.uniform(0.5, 2.0, n), rng.uniform(-100, 100, n)),
        (np.exp(rng.uniform(-87, 88, n)), rng.uniform(-1.5, 1.5, n)),
        (1 + rng.uniform(-1e-3, 1e-3, n), rng.uniform(-1e5, 1e5, n)),
        (np.exp(rng.uniform(-87, 88, n)), rng.uniform(-40, 40, n)),
        (1 + rng.uniform(-1e-6, 1e-6, n), rng.uniform(-1e7, 1e7, n)),
        (rng.uniform(0.95, 1.1, n), rng.uniform(-5000, 5000, n)),
    ]
    x = np.concatenate([r[0] for r in ranges]).astype(np.float32)
    y = np.concatenate([r[1] for r in ranges]).astype(np.float32)
    check_pow(x, y, bound=0.6)


@pytest.mark.parametrize("exponent", [*range(-8, 9), 0.5, math.inf, -math.inf, math.nan])
def test_pow_by_constant(exponent, rng):
    """A constant exponent of 0, 0.5 or an integer up to 8 in magnitude takes a square root
    or products in f64: correctly rounded (but for double rounding), IEEE cases included.
    Infinite and NaN constants take the general form (exact: 0, 1, inf or NaN)."""
    x = sweep(rng)
    t = tensor_type([x.size])
    bits = np.array(exponent, np.float32).view(np.uint32)
    text = (
        f"func.func @main(%x: {t}) -> {t} {{\n"
        f'  %e = "graph.constant"() {{value = dense<0x{int(bits):08X}> : tensor<f32>}}'
        " : () -> tensor<f32>\n"
        f'  %y = "graph.pow"(%x, %e) : ({t}, tensor<f32>) -> {t}\n'
        f"  return %y : {t}\n}}\n"
    )
    actual = strata.compile(text)(x)
    with np.errstate(all="ignore"):
        # An array of exponents: numpy takes a scalar 0.5 as sqrt, which keeps -0 (pow gives +0).
        exact = np.power(x.astype(np.float64), np.full(x.shape, float(exponent)))
    errors = ulp_errors(actual, exact)
    worst = int(np.argmax(errors))
    assert errors[worst] <= 0.501, (
        f"pow({x[worst]!r}, {exponent}) = {actual[worst]!r}, exact {exact[worst]!r}: "
        f"{errors[worst]:.3f} ulp"
    )


@pytest.mark.parametrize(
    "op,reference", [("floor", np.floor), ("ceil", np.ceil), ("round", np.rint)]
)
def test_rounding_without_sse41(op, reference, rng, monkeypatch):
    """x86 CPUs before SSE4.1 have no rounding instruction (LLVM would call libm an element):
    floor, ceil and round-half-even are written with adds there. Forced on this host, they
    are exact over the sweep (halves, -0, 2^23 and beyond, inf, NaN), and sin's reduction of
    large arguments (a round to even in f64) keeps its 2 ulp."""
    from strata.passes import math_approximate

    monkeypatch.setattr(math_approximate, "_lacks_rounding_instructions", lambda desc: True)
    x = np.concatenate([sweep(rng), np.arange(-8, 8, 0.25), 2.0**23 + np.arange(-3, 3)])
    x = np.concatenate([x, -x]).astype(np.float32)
    actual = compile_unary(one_op(op), x.size)(x)
    expected = reference(x)
    same = (actual == expected) & (np.signbit(actual) == np.signbit(expected))
    both_nan = np.isnan(actual) & np.isnan(expected)
    assert np.all(same | both_nan), x[~(same | both_nan)][:5]
    if op == "round":
        wide = sweep(rng, low=-1e30, high=1e30)
        errors = ulp_errors(
            compile_unary(one_op("sin"), wide.size)(wide), np.sin(wide.astype(np.float64))
        )
        assert errors.max() <= 2
