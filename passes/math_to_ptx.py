"""`--math-to-ptx`: the math ops that NVVM would call libdevice for, as PTX instructions.

`convert-gpu-to-nvvm` turns `math.sqrt`, `math.floor`, `math.absf`, ... into calls of libdevice's
`__nv_sqrtf`, ..., which only a machine with the CUDA toolkit can link, and marks the LLVM
intrinsics for them illegal. Each of these ops is one PTX instruction: written as inline
PTX, kernels compile to self-contained PTX anywhere. Results are exact (IEEE round to
nearest for sqrt, the division of rsqrt; floor and ceil are exact). f16 and bf16 compute in
f32; vectors lane by lane. Runs on the kernels inside `gpu.module`s.

Two ops become the SFU's approximate instructions where their type or flags allow it:
- `math.tanh` of bf16 precision is `tanh.approx.f32`: a bf16 tanh, or an f32 tanh whose every
  use rounds it to bf16 (`--graph-to-linalg` computes bf16 tanh in f32 between conversions).
  Its relative error, under 2^-10.98, is an eighth of a bf16 ulp, so the rounded result is the
  correctly rounded one or its neighbour, and it takes one instruction where
  `--math-approximate`'s f32 form takes a division and a dozen FMAs (which made bf16 chains
  with tanh compute-bound on an H200). An f32 tanh with any other use keeps f32 accuracy.
- f32 `math.exp` with fastmath `afn` (the exponentials of softmax and attention, of x - max
  <= 0) is `ex2.approx.ftz.f32` of x log2(e): within 2 + 1.2 |x| ulp (CUDA's bound for its
  `__expf`, the same two instructions; 1e-6 relative at x = -10), results under 2^-126 are
  0 as `--math-approximate` makes them under `afn`, -inf gives 0 and NaN stays NaN. Two
  instructions where the polynomial takes about fifteen: attention's inner loop is bound by
  its exponentials once the products run on tensor cores. f32 `math.exp2` with `afn` is
  the one instruction (2 ulp).
The NVVM pipeline runs `--math-approximate` with `keep=takes` so that it leaves these ops here.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, llvm, vector
from mlir.rewrite import RewritePatternSet, apply_patterns_and_fold_greedily

from .ir_query import find_ops
from .registry import register_pass

# op -> PTX template for f32 / f64 (`{t}` is the type suffix).
_INSTRUCTIONS = {
    "math.sqrt": "sqrt.rn.{t} $0, $1;",
    "math.floor": "cvt.rmi.{t}.{t} $0, $1;",
    "math.ceil": "cvt.rpi.{t}.{t} $0, $1;",
    "math.absf": "abs.{t} $0, $1;",
}
_NARROW = ("f16", "bf16")
_LOG2E = 1.4426950408889634


def _element_of(value: ir.Value) -> str:
    t = value.type
    return str(ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t)


def _rounded_to_bf16(result: ir.Value) -> bool:
    uses = [use.owner for use in result.uses]
    return bool(uses) and all(
        user.name == "arith.truncf" and _element_of(user.results[0]) == "bf16" for user in uses
    )


def _of_bf16_precision(op: ir.Operation) -> bool:
    element = _element_of(op.operands[0])
    return element == "bf16" or (element == "f32" and _rounded_to_bf16(op.results[0]))


def _allows_approximation(op: ir.Operation) -> bool:
    return "fastmath" in op.attributes and "afn" in str(op.attributes["fastmath"])


# Ops written as an approximate f32 instruction (of the argument scaled by a constant), and
# whether an op tolerates it.
_APPROXIMATE = {
    "math.tanh": ("tanh.approx.f32 $0, $1;", 1.0, _of_bf16_precision),
    "math.exp": (
        "ex2.approx.ftz.f32 $0, $1;",
        _LOG2E,
        lambda op: _element_of(op.operands[0]) == "f32" and _allows_approximation(op),
    ),
    "math.exp2": (
        "ex2.approx.ftz.f32 $0, $1;",
        1.0,
        lambda op: _element_of(op.operands[0]) == "f32" and _allows_approximation(op),
    ),
}


def takes(op: ir.Operation) -> bool:
    """Whether math-to-ptx writes `op` as an approximate PTX instruction (see above)."""
    entry = _APPROXIMATE.get(op.name)
    return entry is not None and entry[2](op)


def _scalar(name: str, x: ir.Value) -> ir.Value:
    kind = str(x.type)
    if kind in _NARROW:
        return arith.truncf(x.type, _scalar(name, arith.extf(ir.F32Type.get(), x)))
    if name in _APPROXIMATE:
        text, scale, _ = _APPROXIMATE[name]
        if scale != 1.0:
            x = arith.mulf(x, arith.ConstantOp(x.type, scale).result)
        return llvm.inline_asm(x.type, [x], text, "=f,f")
    if name == "math.rsqrt":
        one = arith.ConstantOp(x.type, ir.FloatAttr.get(x.type, 1.0)).result
        return arith.divf(one, _scalar("math.sqrt", x))
    register = "f" if kind == "f32" else "d"
    text = _INSTRUCTIONS[name].format(t=kind)
    return llvm.inline_asm(x.type, [x], text, f"={register},{register}")


def _rewrite(op, rewriter):
    x = op.operands[0]
    element = ir.VectorType(x.type).element_type if isinstance(x.type, ir.VectorType) else x.type
    if str(element) not in ("f32", "f64", *_NARROW):
        return True
    if op.name in _APPROXIMATE and not takes(op):
        return True
    with rewriter.ip, op.location:
        if not isinstance(x.type, ir.VectorType):
            value = _scalar(op.name, x)
        else:
            shape = ir.VectorType(x.type).shape
            if len(shape) != 1:
                return True  # rank > 1: left to vector unrolling first
            value = arith.ConstantOp(
                x.type, ir.DenseElementsAttr.get_splat(x.type, ir.FloatAttr.get(element, 0.0))
            ).result
            for lane in range(shape[0]):
                scalar = _scalar(op.name, vector.extract(x, [], [lane]))
                value = vector.insert(scalar, value, [], [lane])
    rewriter.replace_op(op, [value])
    return None


@register_pass(
    "math-to-ptx",
    "sqrt, rsqrt, floor, ceil, abs (and bf16 tanh, approximate f32 exp) in kernels as PTX"
    " instructions",
)
def math_to_ptx(module: ir.Operation) -> None:
    patterns = RewritePatternSet(module.context)
    for name in (*_INSTRUCTIONS, "math.rsqrt", *_APPROXIMATE):
        patterns.add(name, _rewrite)
    frozen = patterns.freeze()
    for gpu_module in find_ops(module, lambda op: op.name == "gpu.module"):
        apply_patterns_and_fold_greedily(gpu_module, frozen)
