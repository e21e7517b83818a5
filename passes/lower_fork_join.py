"""`--lower-fork-join`: defines the forks --outline-parallel declared, on a thread pool.

Runs on the LLVM dialect. For every declared `@__strata_fork_<task>(n, captures...)` it adds

- `@__strata_fork_<task>`: stores the captures in a stack struct and calls
  `@__strata_parallel_for(@__strata_thunk_<task>, &struct, n)`;
- `@__strata_thunk_<task>(ctx, begin, end)`: loads the captures and calls `@<task>`;

and, once per module, `@__strata_parallel_for` over a persistent pool of POSIX threads: it
splits [0, n) into min(n, 64) contiguous ranges, publishes them as one job and runs ranges
itself until none is left, then waits for the ones that workers took. Workers are started on
first use (one per range of the largest fork but the caller's, up to the target's cores: more
ranges are claimed as threads free up) and live until the module is unloaded (a global
destructor stops and joins them), so a fork costs a wake-up, not a thread start. Between
jobs a worker polls the job counter for about 2-5 ms before it sleeps on a condition
variable, and takes a job it sees there without the pool's lock: back-to-back forks (one per
kernel of a model, or a late range of the last one) find it awake, where a sleep and a wake-up
cost 30-100 us each on a virtual machine. Polls (the worker's, and the caller's while it waits
for the last range) carry the CPU's spin hint and yield the core every few microseconds, so a
thread that waits never holds up, for a time slice, the one it waits for on the same core.

Safety: ranges are claimed by compare-and-swap on one word that holds the job's generation
and the next range, so a late worker can never take a range of a newer job. One host thread
at a time owns the pool; another host thread that forks meanwhile (or a task that forks) runs
its ranges itself, which is correct and only slower. A forked child process starts with no
workers: the pool records its process id and resets itself in a new one. Everything is
internal to the module: a compiled
artifact needs only the C library (pthreads, zero-initialized mutexes and condition variables
as on Linux), no threading runtime beside it.
"""

from __future__ import annotations

from mlir import ir

from ..dialects import target
from .ir_query import callee_name, find_ops, symbol_name
from .outline_parallel import FORK_PREFIX
from .registry import register_pass

MAX_THREADS = 64
# Polls before a worker or the caller sleeps: about 2-5 ms of one core after the last fork (OpenBLAS
# spins up to 2^28 cycles, OpenMP runtimes 0.2-200 ms). A worker that slept is woken onto
# whatever core the scheduler picks, often the caller's, which then runs every range itself:
# polling 0.2-0.5 ms, the median 2-thread call of 64x1024 @ 1024x4096 took 6.5-7.4 ms, of
# 1024^3 21.6-22.3 ms; polling 2-5 ms, 5.4 ms and 18.6-18.8 ms. A poll is a spin hint (x86's
# pause: about 25 ns on a znver4) and a sched_yield every _POLLS_PER_YIELD polls: 2^17 polls
# are about 4 ms there.
_SPINS = 1 << 17
# A thread that waits for another on its own core (the scheduler put both on one, or another
# process holds the other) must give the core up: spinning out its time slice, SqueezeNet's
# 2-thread call took 16 ms with both threads held on one core of a znver4 (12-13 ms in
# minutes-long stretches of a virtual machine, unpinned), 5 ms on two, 8.2 on one thread.
# Yielding every 64 polls (a sched_yield costs about 0.5 us): 8.5 ms on the one core, and the
# same 5 ms on two.
_POLLS_PER_YIELD = 64
# The CPU's hint that a loop spins (it frees the core's resources for its other hardware
# thread and, in a virtual machine, lets the hypervisor run another virtual CPU), by the
# target triple's architecture.
_SPIN_HINTS = {
    "x86_64": 'llvm.call_intrinsic "llvm.x86.sse2.pause"() : () -> ()',
    "aarch64": "%yield = llvm.mlir.constant(1 : i32) : i32\n"
    '  llvm.call_intrinsic "llvm.aarch64.hint"(%yield) : (i32) -> ()',
}

_MUTEXES = ("lock", "busy", "wake", "done")  # pthread_mutex_t / pthread_cond_t storage
_WORDS = ("workers", "generation", "stop", "pid", "n", "ranges", "next", "remaining")


def _globals() -> str:
    lines = [
        f"llvm.mlir.global internal @__strata_pool_{name}(dense<0> : tensor<64xi8>)"
        " {alignment = 64 : i64} : !llvm.array<64 x i8>"
        for name in _MUTEXES
    ]
    lines += [
        f"llvm.mlir.global internal @__strata_pool_{name}(0 : i64) {{alignment = 8 : i64}} : i64"
        for name in _WORDS
    ]
    lines += [
        f"llvm.mlir.global internal @__strata_pool_{name}() {{alignment = 8 : i64}} : !llvm.ptr {{"
        "\n  %z = llvm.mlir.zero : !llvm.ptr\n  llvm.return %z : !llvm.ptr\n}"
        for name in ("fn", "ctx")
    ]
    lines.append(
        f"llvm.mlir.global internal @__strata_pool_threads(dense<0> : tensor<{MAX_THREADS}xi64>)"
        f" {{alignment = 8 : i64}} : !llvm.array<{MAX_THREADS} x i64>"
    )
    return "\n".join(lines)


_ADDRESSES = "\n".join(
    f"  %{name}_p = llvm.mlir.addressof @__strata_pool_{name} : !llvm.ptr"
    for name in (*_MUTEXES, *_WORDS, "fn", "ctx", "threads")
)


def _runtime(most_threads: int, spin_hint: str) -> str:
    """The pool; it starts at most `most_threads` - 1 workers (the target's cores, with the
    caller): a fork into more ranges than that has its ranges claimed as threads get free."""
    return f"""
llvm.func @pthread_create(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
llvm.func @pthread_join(i64, !llvm.ptr) -> i32
llvm.func @pthread_mutex_lock(!llvm.ptr) -> i32
llvm.func @pthread_mutex_trylock(!llvm.ptr) -> i32
llvm.func @pthread_mutex_unlock(!llvm.ptr) -> i32
llvm.func @pthread_cond_wait(!llvm.ptr, !llvm.ptr) -> i32
llvm.func @pthread_cond_broadcast(!llvm.ptr) -> i32
llvm.func @getpid() -> i32
llvm.func @sched_yield() -> i32
{_globals()}

// Poll `k` of a spin loop: the spin hint, and every {_POLLS_PER_YIELD}th a yield of the core.
llvm.func internal @__strata_pool_poll(%k: i64) {{
  {spin_hint}
  %mask = llvm.mlir.constant({_POLLS_PER_YIELD - 1} : i64) : i64
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %phase = llvm.and %k, %mask : i64
  %due = llvm.icmp "eq" %phase, %c0 : i64
  llvm.cond_br %due, ^yield, ^done
^yield:
  %r = llvm.call @sched_yield() : () -> i32
  llvm.br ^done
^done:
  llvm.return
}}

// Claims and runs ranges of job `gen` until none is left; the one that finishes the last
// range wakes the caller.
llvm.func internal @__strata_pool_run(%gen: i64, %fn: !llvm.ptr, %ctx: !llvm.ptr, %n: i64,
                                      %ranges: i64) {{
{_ADDRESSES}
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c32 = llvm.mlir.constant(32 : i64) : i64
  %mask = llvm.mlir.constant(4294967295 : i64) : i64
  llvm.br ^claim
^claim:
  %word = llvm.load %next_p atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
  %word_gen = llvm.lshr %word, %c32 : i64
  %same = llvm.icmp "eq" %word_gen, %gen : i64
  %i = llvm.and %word, %mask : i64
  %left = llvm.icmp "slt" %i, %ranges : i64
  %open = llvm.and %same, %left : i1
  llvm.cond_br %open, ^take, ^exit
^take:
  %word1 = llvm.add %word, %c1 : i64
  %pair = llvm.cmpxchg %next_p, %word, %word1 acq_rel acquire : !llvm.ptr, i64
  %won = llvm.extractvalue %pair[1] : !llvm.struct<(i64, i1)>
  llvm.cond_br %won, ^run, ^claim
^run:
  %in = llvm.mul %i, %n : i64
  %begin = llvm.sdiv %in, %ranges : i64
  %i1 = llvm.add %i, %c1 : i64
  %i1n = llvm.mul %i1, %n : i64
  %end = llvm.sdiv %i1n, %ranges : i64
  llvm.call %fn(%ctx, %begin, %end) : !llvm.ptr, (!llvm.ptr, i64, i64) -> ()
  %before = llvm.atomicrmw sub %remaining_p, %c1 acq_rel : !llvm.ptr, i64
  %last = llvm.icmp "eq" %before, %c1 : i64
  llvm.cond_br %last, ^signal, ^claim
^signal:
  %l0 = llvm.call @pthread_mutex_lock(%lock_p) : (!llvm.ptr) -> i32
  %b0 = llvm.call @pthread_cond_broadcast(%done_p) : (!llvm.ptr) -> i32
  %u0 = llvm.call @pthread_mutex_unlock(%lock_p) : (!llvm.ptr) -> i32
  llvm.br ^claim
^exit:
  llvm.return
}}

llvm.func internal @__strata_pool_worker(%unused: !llvm.ptr) -> !llvm.ptr {{
{_ADDRESSES}
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %spins = llvm.mlir.constant({_SPINS} : i64) : i64
  %null = llvm.mlir.zero : !llvm.ptr
  %l0 = llvm.call @pthread_mutex_lock(%lock_p) : (!llvm.ptr) -> i32
  llvm.br ^wait(%c0 : i64)
^wait(%seen: i64):  // holding the lock
  %stop = llvm.load %stop_p : !llvm.ptr -> i64
  %stopping = llvm.icmp "ne" %stop, %c0 : i64
  llvm.cond_br %stopping, ^exit, ^check
^check:
  %gen = llvm.load %generation_p : !llvm.ptr -> i64
  %idle = llvm.icmp "eq" %gen, %seen : i64
  llvm.cond_br %idle, ^sleep, ^work
^sleep:
  %w0 = llvm.call @pthread_cond_wait(%wake_p, %lock_p) : (!llvm.ptr, !llvm.ptr) -> i32
  llvm.br ^wait(%seen : i64)
^work:
  %fn = llvm.load %fn_p : !llvm.ptr -> !llvm.ptr
  %ctx = llvm.load %ctx_p : !llvm.ptr -> !llvm.ptr
  %n = llvm.load %n_p : !llvm.ptr -> i64
  %ranges = llvm.load %ranges_p : !llvm.ptr -> i64
  %u0 = llvm.call @pthread_mutex_unlock(%lock_p) : (!llvm.ptr) -> i32
  llvm.call @__strata_pool_run(%gen, %fn, %ctx, %n, %ranges)
      : (i64, !llvm.ptr, !llvm.ptr, i64, i64) -> ()
  llvm.br ^spin(%c0, %gen : i64, i64)
^spin(%k: i64, %done_gen: i64):  // a next job soon after this one finds the worker awake
  %now = llvm.load %generation_p atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
  %moved = llvm.icmp "ne" %now, %done_gen : i64
  %k1 = llvm.add %k, %c1 : i64
  %tired = llvm.icmp "sge" %k1, %spins : i64
  llvm.cond_br %moved, ^next, ^idle
^idle:
  llvm.call @__strata_pool_poll(%k1) : (i64) -> ()
  llvm.cond_br %tired, ^relock(%done_gen : i64), ^spin(%k1, %done_gen : i64, i64)
^next:  // the job was published before its generation (release): no lock needed to read it;
  // taking the lock here would put the worker to sleep while the caller still holds it.
  %stop_now = llvm.load %stop_p : !llvm.ptr -> i64
  %stopping_now = llvm.icmp "ne" %stop_now, %c0 : i64
  llvm.cond_br %stopping_now, ^relock(%now : i64), ^take
^take:
  %next_fn = llvm.load %fn_p : !llvm.ptr -> !llvm.ptr
  %next_ctx = llvm.load %ctx_p : !llvm.ptr -> !llvm.ptr
  %next_n = llvm.load %n_p : !llvm.ptr -> i64
  %next_ranges = llvm.load %ranges_p : !llvm.ptr -> i64
  llvm.call @__strata_pool_run(%now, %next_fn, %next_ctx, %next_n, %next_ranges)
      : (i64, !llvm.ptr, !llvm.ptr, i64, i64) -> ()
  llvm.br ^spin(%c0, %now : i64, i64)
^relock(%seen_gen: i64):
  %l1 = llvm.call @pthread_mutex_lock(%lock_p) : (!llvm.ptr) -> i32
  llvm.br ^wait(%seen_gen : i64)
^exit:
  %u1 = llvm.call @pthread_mutex_unlock(%lock_p) : (!llvm.ptr) -> i32
  llvm.return %null : !llvm.ptr
}}

// In a child process after fork(): no worker exists there, and the locks may be held by
// threads that do not. (pthread_atfork is not a dynamic symbol of glibc: the pool notices
// the new process id instead.)
llvm.func internal @__strata_pool_after_fork() {{
{_ADDRESSES}
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %zero8 = llvm.mlir.constant(0 : i8) : i8
  %size = llvm.mlir.constant(64 : i64) : i64
  "llvm.intr.memset"(%lock_p, %zero8, %size) <{{isVolatile = false}}> : (!llvm.ptr, i8, i64) -> ()
  "llvm.intr.memset"(%busy_p, %zero8, %size) <{{isVolatile = false}}> : (!llvm.ptr, i8, i64) -> ()
  "llvm.intr.memset"(%wake_p, %zero8, %size) <{{isVolatile = false}}> : (!llvm.ptr, i8, i64) -> ()
  "llvm.intr.memset"(%done_p, %zero8, %size) <{{isVolatile = false}}> : (!llvm.ptr, i8, i64) -> ()
  llvm.store %c0, %workers_p : i64, !llvm.ptr
  llvm.return
}}

// Unloading the module: wake every worker with the stop flag set and join it, so that no
// thread is left running code that is about to be unmapped.
llvm.func internal @__strata_pool_shutdown() {{
{_ADDRESSES}
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %null = llvm.mlir.zero : !llvm.ptr
  %l0 = llvm.call @pthread_mutex_lock(%lock_p) : (!llvm.ptr) -> i32
  llvm.store %c1, %stop_p : i64, !llvm.ptr
  %gen = llvm.load %generation_p : !llvm.ptr -> i64
  %gen1 = llvm.add %gen, %c1 : i64
  llvm.store %gen1, %generation_p atomic release {{alignment = 8 : i64}} : i64, !llvm.ptr
  %b0 = llvm.call @pthread_cond_broadcast(%wake_p) : (!llvm.ptr) -> i32
  %count = llvm.load %workers_p : !llvm.ptr -> i64
  llvm.store %c0, %workers_p : i64, !llvm.ptr
  %u0 = llvm.call @pthread_mutex_unlock(%lock_p) : (!llvm.ptr) -> i32
  llvm.br ^join(%c0 : i64)
^join(%t: i64):
  %more = llvm.icmp "slt" %t, %count : i64
  llvm.cond_br %more, ^one, ^done
^one:
  %slot = llvm.getelementptr %threads_p[%t] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  %id = llvm.load %slot : !llvm.ptr -> i64
  %j0 = llvm.call @pthread_join(%id, %null) : (i64, !llvm.ptr) -> i32
  %t1 = llvm.add %t, %c1 : i64
  llvm.br ^join(%t1 : i64)
^done:
  llvm.return
}}
llvm.mlir.global_dtors dtors = [@__strata_pool_shutdown], priorities = [65535 : i32],
                       data = [#llvm.zero]

llvm.func internal @__strata_parallel_for(%fn: !llvm.ptr, %ctx: !llvm.ptr, %n: i64) {{
{_ADDRESSES}
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c32 = llvm.mlir.constant(32 : i64) : i64
  %zero32 = llvm.mlir.constant(0 : i32) : i32
  %most = llvm.mlir.constant({MAX_THREADS} : i64) : i64
  %spins = llvm.mlir.constant({_SPINS} : i64) : i64
  %null = llvm.mlir.zero : !llvm.ptr
  %worker = llvm.mlir.addressof @__strata_pool_worker : !llvm.ptr
  %few = llvm.icmp "slt" %n, %most : i64
  %ranges = llvm.select %few, %n, %most : i1, i64
  %parallel = llvm.icmp "sgt" %ranges, %c1 : i64
  llvm.cond_br %parallel, ^process, ^alone
^process:
  %pid32 = llvm.call @getpid() : () -> i32
  %pid = llvm.sext %pid32 : i32 to i64
  %owner = llvm.load %pid_p atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
  %here = llvm.icmp "eq" %owner, %pid : i64
  llvm.cond_br %here, ^own, ^adopt
^adopt:  // first use (owner 0), or a forked child (another owner)
  %swap = llvm.cmpxchg %pid_p, %owner, %pid acq_rel acquire : !llvm.ptr, i64
  %adopted = llvm.extractvalue %swap[1] : !llvm.struct<(i64, i1)>
  %inherited = llvm.icmp "ne" %owner, %c0 : i64
  %reset = llvm.and %adopted, %inherited : i1
  llvm.cond_br %reset, ^forget, ^own
^forget:
  llvm.call @__strata_pool_after_fork() : () -> ()
  llvm.br ^own
^own:
  %busy = llvm.call @pthread_mutex_trylock(%busy_p) : (!llvm.ptr) -> i32
  %mine = llvm.icmp "eq" %busy, %zero32 : i32
  llvm.cond_br %mine, ^publish, ^alone
^alone:  // one range, or the pool is another host thread's (or this task's own) right now
  %any = llvm.icmp "sgt" %n, %c0 : i64
  llvm.cond_br %any, ^serial, ^return
^serial:
  llvm.call %fn(%ctx, %c0, %n) : !llvm.ptr, (!llvm.ptr, i64, i64) -> ()
  llvm.br ^return
^publish:
  %l0 = llvm.call @pthread_mutex_lock(%lock_p) : (!llvm.ptr) -> i32
  llvm.br ^grow
^grow:  // workers for all ranges but the caller's, up to the cores
  %have = llvm.load %workers_p : !llvm.ptr -> i64
  %cores = llvm.mlir.constant({most_threads} : i64) : i64
  %fewer = llvm.icmp "slt" %ranges, %cores : i64
  %threads = llvm.select %fewer, %ranges, %cores : i1, i64
  %need = llvm.sub %threads, %c1 : i64
  %short = llvm.icmp "slt" %have, %need : i64
  llvm.cond_br %short, ^start, ^job
^start:
  %slot = llvm.getelementptr %threads_p[%have] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  %rc = llvm.call @pthread_create(%slot, %null, %worker, %null)
      : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
  %failed = llvm.icmp "ne" %rc, %zero32 : i32
  %have1 = llvm.add %have, %c1 : i64
  llvm.cond_br %failed, ^job, ^started
^started:
  llvm.store %have1, %workers_p : i64, !llvm.ptr
  llvm.br ^grow
^job:  // ranges nobody takes (too few workers could start) run on the caller
  %gen0 = llvm.load %generation_p : !llvm.ptr -> i64
  %gen = llvm.add %gen0, %c1 : i64
  %gen_mask = llvm.mlir.constant(4294967295 : i64) : i64
  %gen32 = llvm.and %gen, %gen_mask : i64
  llvm.store %fn, %fn_p : !llvm.ptr, !llvm.ptr
  llvm.store %ctx, %ctx_p : !llvm.ptr, !llvm.ptr
  llvm.store %n, %n_p : i64, !llvm.ptr
  llvm.store %ranges, %ranges_p : i64, !llvm.ptr
  llvm.store %ranges, %remaining_p atomic release {{alignment = 8 : i64}} : i64, !llvm.ptr
  %word = llvm.shl %gen32, %c32 : i64
  llvm.store %word, %next_p atomic release {{alignment = 8 : i64}} : i64, !llvm.ptr
  llvm.store %gen32, %generation_p atomic release {{alignment = 8 : i64}} : i64, !llvm.ptr
  %b0 = llvm.call @pthread_cond_broadcast(%wake_p) : (!llvm.ptr) -> i32
  %u0 = llvm.call @pthread_mutex_unlock(%lock_p) : (!llvm.ptr) -> i32
  llvm.call @__strata_pool_run(%gen32, %fn, %ctx, %n, %ranges)
      : (i64, !llvm.ptr, !llvm.ptr, i64, i64) -> ()
  llvm.br ^spin(%c0 : i64)
^spin(%k: i64):
  %left = llvm.load %remaining_p atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
  %finished = llvm.icmp "eq" %left, %c0 : i64
  llvm.cond_br %finished, ^release, ^count
^count:
  %k1 = llvm.add %k, %c1 : i64
  llvm.call @__strata_pool_poll(%k1) : (i64) -> ()
  %tired = llvm.icmp "sge" %k1, %spins : i64
  llvm.cond_br %tired, ^sleep, ^spin(%k1 : i64)
^sleep:
  %l1 = llvm.call @pthread_mutex_lock(%lock_p) : (!llvm.ptr) -> i32
  llvm.br ^recheck
^recheck:
  %left1 = llvm.load %remaining_p atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
  %finished1 = llvm.icmp "eq" %left1, %c0 : i64
  llvm.cond_br %finished1, ^woken, ^block
^block:
  %w0 = llvm.call @pthread_cond_wait(%done_p, %lock_p) : (!llvm.ptr, !llvm.ptr) -> i32
  llvm.br ^recheck
^woken:
  %u1 = llvm.call @pthread_mutex_unlock(%lock_p) : (!llvm.ptr) -> i32
  llvm.br ^release
^release:
  %u2 = llvm.call @pthread_mutex_unlock(%busy_p) : (!llvm.ptr) -> i32
  llvm.br ^return
^return:
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
    desc = target.of(module)
    most_threads = min(desc.cores, MAX_THREADS) if desc is not None else MAX_THREADS
    architecture = desc.triple.split("-")[0] if desc is not None else ""
    texts = [_runtime(most_threads, _SPIN_HINTS.get(architecture, ""))]
    for decl in declarations:
        name = symbol_name(decl)
        uses = [c for c in calls if callee_name(c) == name]
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
            if "sym_name" not in op.attributes or symbol_name(op) not in defined:
                body.append(op.detach_from_parent())
