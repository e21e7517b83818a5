"""`--bf16-truncation`: f32 <-> bf16 conversions as integer arithmetic on x86 CPUs without an
instruction for them.

LLVM lowers `fptrunc` to bf16 on x86 targets without AVX-512 BF16 (or AVX-NE-CONVERT) to
calls of `__truncsfbf2`, which only libgcc 13 and compiler-rt define: a bf16 kernel for such a
CPU then fails to load or to JIT-link against an older libgcc (Debian 12's), and each element
costs a call. Written out it is a few vector integer ops: round to nearest even by adding
0x7FFF plus the lowest kept bit to the f32 bits, keep the top 16; a NaN keeps its top bits
and gets the quiet bit (the carry could otherwise turn a NaN into infinity). bf16 -> f32
widenings become shifts too, and arithmetic left in bf16 is done in f32 (upstream
arith-emulate-unsupported-floats): LLVM's instcombine narrows float ops on widened bf16 back
to bf16 (comparisons, selects), and the backend promotes those through the same call. Other
targets keep their conversions: AVX-512 BF16 has vcvtneps2bf16, AArch64 lowers them inline.
"""

from mlir import ir
from mlir.dialects import arith
from mlir.passmanager import PassManager
from mlir.rewrite import RewritePatternSet, apply_patterns_and_fold_greedily

from ..dialects import target
from .math_approximate import _const, _element, _like
from .registry import register_pass

_NATIVE_FEATURES = ("avx512bf16", "avxneconvert")
_QUIET_BIT = 0x00400000  # of an f32 NaN: bf16's after the shift
_IN_F32 = "builtin.module(arith-emulate-unsupported-floats{source-types=bf16 target-type=f32})"


def _rounded_to_bf16(x: ir.Value, result_type: ir.Type) -> ir.Value:
    """x (f32) rounded to bf16, to nearest even, by its bits. A NaN is not rounded (the carry
    could make it infinite) and gets the quiet bit (its payload may lie in the dropped bits).
    The selects stay on i32: one on the bf16 result is what LLVM legalizes through the call."""
    i32 = _like(x.type, ir.IntegerType.get_signless(32))
    i16 = _like(x.type, ir.IntegerType.get_signless(16))
    bits = arith.bitcast(i32, x)
    sixteen = _const(i32, 16)
    lowest_kept = arith.andi(arith.shrui(bits, sixteen), _const(i32, 1))
    nan = arith.cmpf(arith.CmpFPredicate.UNO, x, x)
    zero = _const(i32, 0)
    bias = arith.select(nan, zero, arith.addi(lowest_kept, _const(i32, 0x7FFF)))
    quiet = arith.select(nan, _const(i32, _QUIET_BIT), zero)
    rounded = arith.ori(arith.addi(bits, bias), quiet)
    return arith.bitcast(result_type, arith.trunci(i16, arith.shrui(rounded, sixteen)))


def _truncation(op, rewriter):
    source, result = op.operands[0].type, op.results[0].type
    if str(_element(source)) != "f32" or str(_element(result)) != "bf16":
        return True  # not matched
    with rewriter.ip, op.location:
        value = _rounded_to_bf16(op.operands[0], result)
    rewriter.replace_op(op, [value])
    return None


def _widening(op, rewriter):
    source, result = op.operands[0].type, op.results[0].type
    if str(_element(source)) != "bf16" or str(_element(result)) != "f32":
        return True  # not matched
    with rewriter.ip, op.location:
        i16 = _like(source, ir.IntegerType.get_signless(16))
        i32 = _like(source, ir.IntegerType.get_signless(32))
        wide = arith.extui(i32, arith.bitcast(i16, op.operands[0]))
        value = arith.bitcast(result, arith.shli(wide, _const(i32, 16)))
    rewriter.replace_op(op, [value])
    return None


def needs_expansion(desc) -> bool:
    """Whether `desc` is an x86 CPU that has no f32 -> bf16 conversion instruction."""
    return (
        desc is not None
        and desc.is_x86_cpu
        and not any(desc.has_feature(name) for name in _NATIVE_FEATURES)
    )


@register_pass(
    "bf16-truncation",
    "f32 -> bf16 roundings as integer arithmetic on x86 CPUs without a conversion instruction",
)
def bf16_truncation(module: ir.Operation) -> None:
    if not needs_expansion(target.of(module)):
        return
    # Arithmetic left in bf16 (the exact ops: max, min, negation, selects of computed values)
    # is promoted by LLVM, which rounds it back through the same call: in f32 here, with the
    # roundings made explicit.
    PassManager.parse(_IN_F32, module.context).run(module)
    patterns = RewritePatternSet(module.context)
    patterns.add("arith.truncf", _truncation)
    patterns.add("arith.extf", _widening)
    apply_patterns_and_fold_greedily(module, patterns.freeze())
