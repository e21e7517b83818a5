"""`--lower-fork-join`: defines the forks --outline-parallel declared, on POSIX threads.

Runs on the LLVM dialect. For every declared `@__strata_fork_<task>(n, captures...)` it adds

- `@__strata_fork_<task>`: stores the captures in a stack struct and calls
  `@__strata_parallel_for(@__strata_thunk_<task>, &struct, n)`;
- `@__strata_thunk_<task>(ctx, begin, end)`: loads the captures and calls `@<task>`;

and, once per module, `@__strata_parallel_for`: splits [0, n) into min(n, 64) contiguous
ranges, starts a thread (pthread_create) for every range but the first, runs the first on the
calling thread and joins the others. A range whose thread cannot be started runs on the caller.
Everything is internal to the module: a compiled artifact needs only the C library, no
threading runtime beside it. Threads are started per fork (tens of microseconds), which is why
--tile-configure only splits kernels with enough work.
"""

from __future__ import annotations

from mlir import ir

from .ir_query import find_ops, symbol_name
from .outline_parallel import FORK_PREFIX
from .registry import register_pass

_JOB = "!llvm.struct<(ptr, ptr, i64, i64)>"  # task, captures, begin, end
MAX_THREADS = 64

_RUNTIME = f"""
llvm.func @pthread_create(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
llvm.func @pthread_join(i64, !llvm.ptr) -> i32
llvm.func internal @__strata_worker(%job: !llvm.ptr) -> !llvm.ptr {{
  %j = llvm.load %job : !llvm.ptr -> {_JOB}
  %fn = llvm.extractvalue %j[0] : {_JOB}
  %ctx = llvm.extractvalue %j[1] : {_JOB}
  %begin = llvm.extractvalue %j[2] : {_JOB}
  %end = llvm.extractvalue %j[3] : {_JOB}
  llvm.call %fn(%ctx, %begin, %end) : !llvm.ptr, (!llvm.ptr, i64, i64) -> ()
  %null = llvm.mlir.zero : !llvm.ptr
  llvm.return %null : !llvm.ptr
}}
llvm.func internal @__strata_parallel_for(%fn: !llvm.ptr, %ctx: !llvm.ptr, %n: i64) {{
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %zero32 = llvm.mlir.constant(0 : i32) : i32
  %most = llvm.mlir.constant({MAX_THREADS} : i64) : i64
  %few = llvm.icmp "slt" %n, %most : i64
  %ranges = llvm.select %few, %n, %most : i1, i64
  %jobs = llvm.alloca %most x {_JOB} : (i64) -> !llvm.ptr
  %threads = llvm.alloca %most x i64 : (i64) -> !llvm.ptr
  %started = llvm.alloca %most x i32 : (i64) -> !llvm.ptr
  %worker = llvm.mlir.addressof @__strata_worker : !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  %undef = llvm.mlir.undef : {_JOB}
  llvm.br ^spawn(%c1 : i64)
^spawn(%t: i64):
  %more = llvm.icmp "slt" %t, %ranges : i64
  llvm.cond_br %more, ^start, ^run_first
^start:
  %tn = llvm.mul %t, %n : i64
  %begin = llvm.sdiv %tn, %ranges : i64
  %t1 = llvm.add %t, %c1 : i64
  %t1n = llvm.mul %t1, %n : i64
  %end = llvm.sdiv %t1n, %ranges : i64
  %j0 = llvm.insertvalue %fn, %undef[0] : {_JOB}
  %j1 = llvm.insertvalue %ctx, %j0[1] : {_JOB}
  %j2 = llvm.insertvalue %begin, %j1[2] : {_JOB}
  %j3 = llvm.insertvalue %end, %j2[3] : {_JOB}
  %job = llvm.getelementptr %jobs[%t] : (!llvm.ptr, i64) -> !llvm.ptr, {_JOB}
  llvm.store %j3, %job : {_JOB}, !llvm.ptr
  %thread = llvm.getelementptr %threads[%t] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  %rc = llvm.call @pthread_create(%thread, %null, %worker, %job)
      : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
  %flag = llvm.getelementptr %started[%t] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  llvm.store %rc, %flag : i32, !llvm.ptr
  %failed = llvm.icmp "ne" %rc, %zero32 : i32
  llvm.cond_br %failed, ^inline, ^spawn(%t1 : i64)
^inline:
  llvm.call %fn(%ctx, %begin, %end) : !llvm.ptr, (!llvm.ptr, i64, i64) -> ()
  llvm.br ^spawn(%t1 : i64)
^run_first:
  %first_end = llvm.sdiv %n, %ranges : i64
  %any = llvm.icmp "sgt" %ranges, %c0 : i64
  llvm.cond_br %any, ^first, ^join(%c1 : i64)
^first:
  llvm.call %fn(%ctx, %c0, %first_end) : !llvm.ptr, (!llvm.ptr, i64, i64) -> ()
  llvm.br ^join(%c1 : i64)
^join(%u: i64):
  %waiting = llvm.icmp "slt" %u, %ranges : i64
  llvm.cond_br %waiting, ^check, ^done
^check:
  %uflag = llvm.getelementptr %started[%u] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %urc = llvm.load %uflag : !llvm.ptr -> i32
  %u1 = llvm.add %u, %c1 : i64
  %running = llvm.icmp "eq" %urc, %zero32 : i32
  llvm.cond_br %running, ^wait, ^join(%u1 : i64)
^wait:
  %uthread = llvm.getelementptr %threads[%u] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  %id = llvm.load %uthread : !llvm.ptr -> i64
  %jrc = llvm.call @pthread_join(%id, %null) : (i64, !llvm.ptr) -> i32
  llvm.br ^join(%u1 : i64)
^done:
  llvm.return
}}
"""


def _fork_and_thunk(task: str, captures: list[str]) -> str:
    """The text of `@__strata_fork_<task>` and `@__strata_thunk_<task>`."""
    struct = f"!llvm.struct<({', '.join(captures)})>" if captures else "!llvm.struct<(i8)>"
    params = "".join(f", %a{i}: {t}" for i, t in enumerate(captures))
    inserts, last = [], "%s"
    for i in range(len(captures)):
        inserts.append(f"  %s{i} = llvm.insertvalue %a{i}, {last}[{i}] : {struct}")
        last = f"%s{i}"
    extracts = [f"  %v{i} = llvm.extractvalue %s[{i}] : {struct}" for i in range(len(captures))]
    args = "".join(f", %v{i}" for i in range(len(captures)))
    types = "".join(f", {t}" for t in captures)
    nl = "\n"
    return f"""
llvm.func @{task}(i64, i64{types})
llvm.func internal @__strata_thunk_{task}(%ctx: !llvm.ptr, %begin: i64, %end: i64) {{
  %s = llvm.load %ctx : !llvm.ptr -> {struct}
{nl.join(extracts)}
  llvm.call @{task}(%begin, %end{args}) : (i64, i64{types}) -> ()
  llvm.return
}}
llvm.func internal @{FORK_PREFIX}{task}(%n: i64{params}) {{
  %one = llvm.mlir.constant(1 : i64) : i64
  %ctx = llvm.alloca %one x {struct} : (i64) -> !llvm.ptr
  %s = llvm.mlir.undef : {struct}
{nl.join(inserts)}
  llvm.store {last}, %ctx : {struct}, !llvm.ptr
  %thunk = llvm.mlir.addressof @__strata_thunk_{task} : !llvm.ptr
  llvm.call @__strata_parallel_for(%thunk, %ctx, %n) : (!llvm.ptr, !llvm.ptr, i64) -> ()
  llvm.return
}}
"""


@register_pass("lower-fork-join", "Define the parallel forks on POSIX threads (LLVM dialect)")
def lower_fork_join(module: ir.Operation) -> None:
    declarations = [
        op
        for op in find_ops(module, lambda op: op.name == "llvm.func")
        if symbol_name(op).startswith(FORK_PREFIX) and not op.regions[0].blocks
    ]
    if not declarations:
        return
    calls = find_ops(module, lambda op: op.name == "llvm.call" and "callee" in op.attributes)
    body = module.regions[0].blocks[0]
    texts = [_RUNTIME]
    for decl in declarations:
        name = symbol_name(decl)
        uses = [c for c in calls if ir.FlatSymbolRefAttr(c.attributes["callee"]).value == name]
        if not uses:
            decl.erase()
            continue
        captures = [str(v.type) for v in list(uses[0].operands)[1:]]
        texts.append(_fork_and_thunk(name[len(FORK_PREFIX) :], captures))
        decl.erase()
    with module.context, module.location:
        # Declarations of the tasks let the text verify on its own; they exist already.
        defined = {symbol_name(op) for op in body.operations if "sym_name" in op.attributes}
        parsed = ir.Module.parse("\n".join(texts))
        for op in list(parsed.body.operations):
            if symbol_name(op) not in defined:
                body.append(op.detach_from_parent())
