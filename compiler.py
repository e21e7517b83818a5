"""Compiling graph-dialect modules: lowering, JIT execution and artifact emission."""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from mlir import ir
from mlir.execution_engine import ExecutionEngine

from . import mlir_capi, pipelines, source
from .diagnostics import CompileError, Diagnostic, SourcePos, collecting_errors, source_pos
from .dialects import target as targets
from .passes import constant_data
from .passes.workspace_buffers import WORKSPACE_ATTR
from .runtime.abi import (
    Function,
    Signature,
    TensorSpec,
    dtype_of,
    empty_aligned,
    packed_invoker,
)
from .runtime.native import SIGNATURES_SYMBOL

EMIT_KINDS = ("mlir", "llvm", "asm", "obj", "so", "ptx", "cubin", "artifact")

# What each target kind can emit.
TARGET_EMITS = {
    "cpu": ("mlir", "llvm", "asm", "obj", "so"),
    "nvvm": ("mlir", "ptx", "cubin", "artifact"),
}

_RUNTIME_LIBS = Path(ir.__file__).parent / "lib"


def load(module_or_text, context: ir.Context | None = None, name: str = "<input>") -> ir.Module:
    """A module from text (parsed, verified) or an existing `ir.Module` (used as is)."""
    if isinstance(module_or_text, ir.Module):
        return module_or_text
    return source.parse(str(module_or_text), context or source.make_context(), name)


def copy(module: ir.Module) -> ir.Module:
    """A deep copy, so that lowering leaves the caller's module as it was."""
    with module.context:
        return source.as_module(module.operation.clone())


def signatures(module: ir.Module) -> list[Signature]:
    """The tensor signatures of the module's public functions, before lowering."""
    result = []
    for op in module.body.operations:
        if op.operation.name != "func.func" or "sym_visibility" in op.attributes:
            continue
        if not op.regions[0].blocks:
            continue
        fn_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        name = ir.StringAttr(op.attributes["sym_name"]).value
        try:
            ins = tuple(_spec(t) for t in fn_type.inputs)
            outs = tuple(_spec(t) for t in fn_type.results)
        except ValueError as error:
            message = f"function '{name}' cannot be called from the runtime: {error}"
            raise CompileError([Diagnostic("error", message, source_pos(op.location))]) from None
        result.append(Signature(name, ins, outs))
    return result


def function_positions(module: ir.Module) -> dict[str, SourcePos | None]:
    """Where each function of the module is defined, for errors about calling it."""
    return {
        ir.StringAttr(op.attributes["sym_name"]).value: source_pos(op.location)
        for op in module.body.operations
        if op.operation.name == "func.func"
    }


def _spec(t: ir.Type) -> TensorSpec:
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
        raise ValueError(f"argument and result types must be static tensors, got {t}")
    element = str(t.element_type)
    if dtype_of(element) is None:
        raise ValueError(f"element type {element} has no numpy equivalent")
    return TensorSpec(tuple(t.shape), element)


def with_workspaces(module: ir.Module, sigs: list[Signature]) -> list[Signature]:
    """The signatures with the workspace sizes that lowering chose (--workspace-buffers)."""
    sizes = {}
    for op in module.body.operations:
        if WORKSPACE_ATTR in op.attributes and "sym_name" in op.attributes:
            name = ir.StringAttr(op.attributes["sym_name"]).value
            sizes[name] = ir.IntegerAttr(op.attributes[WORKSPACE_ATTR]).value
    return [dataclasses.replace(s, workspace=sizes.get(s.name, 0)) for s in sigs]


def resolve_target(target: str | targets.TargetDesc) -> targets.TargetDesc:
    if isinstance(target, targets.TargetDesc):
        return target
    try:
        return targets.resolve(target)
    except ValueError as error:
        raise CompileError(str(error)) from None


def lower(module: ir.Module, target: str | targets.TargetDesc = "cpu", **run_options) -> None:
    """Runs the target's pipeline on `module` in place (down to the LLVM dialect for CPUs)."""
    desc = resolve_target(target)
    try:
        pipeline = pipelines.for_target(desc)
    except KeyError:
        raise CompileError(
            f"no compilation pipeline for {desc.kind} targets ({desc.chip}) yet"
        ) from None
    with module.context:
        targets.attach(module, desc)
    pipeline.run(module, **run_options)


def jit(module: ir.Module, sigs: list[Signature]) -> dict[str, Function]:
    """JIT-compiles an LLVM-dialect module for the host; returns its functions."""
    # Large constants stay in numpy arrays whose addresses the engine is given: with their
    # values in the IR, LLVM folded loads of ResNet-50's weights into its code (O3 took 70 s
    # of a 77 s compile; 15 s without).
    sigs = with_workspaces(module, sigs)
    constants = _declare_large_constants(module, hidden=False)
    with collecting_errors(module.context, "JIT compilation"):
        engine = ExecutionEngine(
            module, opt_level=3, shared_libs=[str(_RUNTIME_LIBS / "libmlir_c_runner_utils.so")]
        )
    for constant in constants:
        engine.raw_register_runtime(constant.name, ctypes.c_void_p(constant.data.ctypes.data))
    owner = (engine, constants)
    functions = {}
    for sig in sigs:
        address = engine.raw_lookup(f"_mlir_ciface_{sig.name}")
        functions[sig.name] = Function(sig, packed_invoker(address, sig.arity), owner)
    return functions


def pick_entry(sigs: list[Signature], entry: str | None) -> Signature:
    names = [s.name for s in sigs]
    if entry is not None:
        if entry not in names:
            raise CompileError(f"no public function '{entry}' (functions: {', '.join(names)})")
        return sigs[names.index(entry)]
    if len(sigs) == 1:
        return sigs[0]
    if "main" in names:
        return sigs[names.index("main")]
    if not sigs:
        raise CompileError("the module has no public function to run")
    raise CompileError(f"several functions ({', '.join(names)}): choose one as the entry")


def compile_module(module_or_text, target: str = "cpu", entry: str | None = None) -> Function:
    """`strata.compile`: a callable over numpy arrays for the entry function."""
    desc = resolve_target(target)
    if desc.kind == "nvvm":
        cuda = _cuda_runtime(target)  # before compiling: say at once that there is no GPU
    elif desc.kind != "cpu" or not desc.is_host:
        raise CompileError(
            f"target '{target}' cannot run in this process (the host CPU and CUDA GPUs can)"
        )
    module = load(module_or_text)
    if module is module_or_text:
        module = copy(module)
    sigs = signatures(module)
    chosen = pick_entry(sigs, entry)
    if desc.kind == "nvvm":
        from .runtime.gpu_artifact import Artifact

        artifact = Artifact.from_bytes(emit(module, "artifact", target))
        return cuda.Module(artifact, f"<{target}>")[chosen.name]
    lower(module, desc)
    return jit(module, [chosen])[chosen.name]


def _cuda_runtime(target: str):
    """The CUDA runtime module, once it has found a GPU to run `target` on."""
    from .runtime import cuda

    try:
        cuda.Device.get()
    except cuda.CudaError as error:
        raise CompileError(f"target '{target}' runs on a CUDA GPU, and here: {error}") from None
    return cuda


# ----------------------------------------------------------------------------------------------
# Emission.


@functools.cache
def _capi() -> ctypes.CDLL:
    lib = mlir_capi.library()
    lib.mlirTranslateModuleToLLVMIRToString.restype = ctypes.c_void_p
    lib.mlirTranslateModuleToLLVMIRToString.argtypes = [ctypes.c_void_p]
    return lib


def translate_to_llvm_ir(module: ir.Module) -> str:
    """LLVM IR text of an LLVM-dialect module."""
    lib = _capi()
    with collecting_errors(module.context, "translation to LLVM IR"):
        raw = lib.mlirTranslateModuleToLLVMIRToString(mlir_capi.pointer(module.operation))
    if not raw:
        raise CompileError("translation to LLVM IR failed")
    try:
        return ctypes.string_at(raw).decode()
    finally:
        ctypes.CDLL(None).free(ctypes.c_void_p(raw))


def embed_signatures(module: ir.Module, sigs: list[Signature]) -> None:
    """Adds the `strata_signatures` JSON string the native runtime reads."""
    text = json.dumps([json.loads(s.to_json()) for s in sigs])
    data = text.encode() + b"\0"
    escaped = "".join(f"\\{b:02X}" for b in data)
    with module.context, ir.Location.unknown():
        glob = ir.Operation.parse(
            f'llvm.mlir.global external constant @{SIGNATURES_SYMBOL}("{escaped}")'
            f" {{addr_space = 0 : i32}} : !llvm.array<{len(data)} x i8>"
        )
        module.body.append(glob)


def _target_machine(desc: targets.TargetDesc):
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    llvm.initialize_native_asmparser()  # module asm: constants_out_of_line
    target = llvm.Target.from_triple(desc.triple)
    return target.create_target_machine(
        cpu=desc.chip, features=desc.features, opt=3, reloc="pic", codemodel="default"
    )


def _llvm_module(ir_text: str, desc: targets.TargetDesc):
    import llvmlite.binding as llvm

    machine = _target_machine(desc)
    mod = llvm.parse_assembly(ir_text)
    mod.triple = desc.triple
    mod.data_layout = str(machine.target_data)
    mod.verify()
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    builder = llvm.create_pass_builder(machine, options)
    builder.getModulePassManager().run(mod, builder)
    return mod, machine


def emit(module: ir.Module, kind: str, target: str = "cpu", **run_options) -> bytes:
    """Lowers `module` for `target` and returns the artifact `kind` (see EMIT_KINDS).

    `run_options` go to the pipeline driver (print_after, timing, dump_dir).
    """
    if kind not in EMIT_KINDS:
        raise CompileError(f"unknown --emit kind '{kind}' (known: {', '.join(EMIT_KINDS)})")
    desc = resolve_target(target)
    allowed = TARGET_EMITS.get(desc.kind, ("mlir",))
    if kind not in allowed:
        raise CompileError(
            f"--emit {kind} is not for {desc.kind} targets (they emit {', '.join(allowed)})"
        )
    sigs = signatures(module)
    lower(module, desc, **run_options)
    if kind == "mlir":
        return str(module).encode()
    if desc.kind == "nvvm":
        return _emit_nvvm(module, kind, desc, sigs)
    if kind == "so":
        embed_signatures(module, with_workspaces(module, sigs))
    with tempfile.TemporaryDirectory() as blobs:
        if kind in ("obj", "so"):
            constants_out_of_line(module, desc, Path(blobs))
        ir_text = translate_to_llvm_ir(module)
        if kind == "llvm":
            return ir_text.encode()
        mod, machine = _llvm_module(ir_text, desc)
        if kind == "asm":
            return machine.emit_assembly(mod).encode()
        obj = machine.emit_object(mod)
    if kind == "obj":
        return obj
    if not desc.is_host:
        raise CompileError(f"--emit so is for the host only; use --emit obj for '{target}'")
    return link_shared(obj)


# Constants of at least this size skip the LLVM IR text (see constants_out_of_line).
_OUT_OF_LINE_BYTES = 1 << 16
_ASM_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclasses.dataclass
class _LargeConstant:
    name: str
    data: np.ndarray
    alignment: int


def _declare_large_constants(module: ir.Module, *, hidden: bool) -> list[_LargeConstant]:
    """Replaces each constant global of `_OUT_OF_LINE_BYTES` or more by a declaration (of
    hidden visibility or not) and returns their names and bytes (copied: the module's blobs go
    with it). LLVM then sees no weight's value: it neither prints them as IR text nor
    folds loads of them into code."""
    taken = []
    for op in list(module.body.operations):
        op = op.operation
        if op.name != "llvm.mlir.global" or "constant" not in op.attributes:
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        value = op.attributes["value"] if "value" in op.attributes else None
        data = None if value is None else constant_data.elements_of(value)
        if data is None or data.nbytes < _OUT_OF_LINE_BYTES or not _ASM_SYMBOL.fullmatch(name):
            continue
        alignment = 64
        if "alignment" in op.attributes:
            alignment = ir.IntegerAttr(op.attributes["alignment"]).value
        copy = empty_aligned(data.shape, data.dtype, always=True, alignment=max(alignment, 64))
        copy[...] = data
        taken.append(_LargeConstant(name, copy, alignment))
        with module.context, op.location:
            declaration = ir.Operation.parse(
                f"llvm.mlir.global external {'hidden ' if hidden else ''}constant @{name}() "
                f"{{addr_space = 0 : i32, alignment = {alignment} : i64}} : "
                f"{ir.TypeAttr(op.attributes['global_type']).value}"
            )
        ir.InsertionPoint(op).insert(declaration)
        op.erase()
    return taken


def constants_out_of_line(module: ir.Module, desc: targets.TargetDesc, folder: Path) -> None:
    """Takes the large constant globals of an LLVM-dialect module out of its IR: each one's
    bytes go to a file in `folder`, which the module's inline assembly includes (`.incbin`)
    where the global is defined; the IR only declares it. Printed as IR, ResNet-50's 100 MB of
    weights made 692 MiB of text that took 79 s to print and 36 s to parse; included, they are
    copied into the object as they are. Each stays a local symbol, as a private global is,
    so that objects linked together do not clash. For the host, on ELF (the directives are
    ELF's): the LLVM that emits objects parses assembly for the host only. The files must
    last until the object is emitted."""
    if not desc.is_host or "-linux" not in desc.triple:
        return
    asm = []
    for constant in _declare_large_constants(module, hidden=True):
        path = folder / f"{constant.name}.bin"
        constant.data.tofile(path)
        asm += [
            f'.section .rodata.{constant.name},"a"',
            f".balign {constant.alignment}",
            f"{constant.name}:",
            f'.incbin "{path}"',
            f".size {constant.name}, {constant.data.nbytes}",
        ]
    if asm:
        with module.context:
            lines = [ir.StringAttr.get(line) for line in asm]
            module.operation.attributes["llvm.module_asm"] = ir.ArrayAttr.get(lines)


def _emit_nvvm(module: ir.Module, kind: str, desc: targets.TargetDesc, sigs) -> bytes:
    from . import launch_plan
    from .runtime.gpu_artifact import Artifact

    plans, ptx, constants = launch_plan.extract(module, sigs)
    if kind == "ptx":
        return ptx.encode()
    if kind == "cubin":
        return assemble_cubin(ptx, desc.chip)
    cubins = {desc.chip: assemble_cubin(ptx, desc.chip)} if shutil.which("ptxas") else {}
    target = f"{desc.kind}:{desc.chip}"
    return Artifact(target, desc.chip, plans, ptx, cubins, constants).to_bytes()


def assemble_cubin(ptx: str, chip: str) -> bytes:
    """PTX to a cubin for `chip` with the CUDA toolkit's `ptxas`."""
    ptxas = shutil.which("ptxas")
    if not ptxas:
        raise CompileError(
            "--emit cubin needs ptxas (from the CUDA toolkit), which is not on PATH; "
            "--emit ptx and --emit artifact need no CUDA toolkit (the driver compiles PTX)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        source_path, cubin_path = Path(tmp, "kernels.ptx"), Path(tmp, "kernels.cubin")
        source_path.write_text(ptx)
        command = [ptxas, f"-arch={chip}", "-O3", str(source_path), "-o", str(cubin_path)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise CompileError(f"ptxas failed: {' '.join(command)}\n{done.stderr.strip()}")
        return cubin_path.read_bytes()


def link_shared(obj: bytes) -> bytes:
    """Links an object into a shared library with the system C compiler (libm for math,
    POSIX threads for parallel kernels)."""
    linker = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not linker:
        raise CompileError("no C compiler found to link the shared library (set CC)")
    with tempfile.TemporaryDirectory() as tmp:
        obj_path, so_path = Path(tmp, "module.o"), Path(tmp, "module.so")
        obj_path.write_bytes(obj)
        command = [linker, "-shared", "-pthread", "-o", str(so_path), str(obj_path), "-lm"]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise CompileError(f"linking failed: {' '.join(command)}\n{done.stderr.strip()}")
        return so_path.read_bytes()
