// RUN: strata-opt %s --lower-fork-join --split-input-file | FileCheck %s

// The fork stores its captures in a stack struct and hands a thunk over it to the module's
// parallel-for. That publishes the ranges as a job of a persistent pool (workers started on
// first use), runs ranges itself and waits; ranges are claimed by compare-and-swap, and a
// global destructor stops and joins the workers when the module is unloaded.
// A poll of a spin loop yields the core every 64th time; with no target, no spin hint.
// CHECK-LABEL: llvm.func internal @__strata_pool_poll(%{{.*}}: i64)
// CHECK-NOT: llvm.call_intrinsic
// CHECK: llvm.mlir.constant(63 : i64)
// CHECK: llvm.call @sched_yield()
// CHECK-LABEL: llvm.func internal @__strata_pool_run(
// CHECK: llvm.cmpxchg %{{.*}} acq_rel acquire
// CHECK: llvm.call %{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, i64, i64) -> ()
// CHECK: llvm.atomicrmw sub
// A worker that finishes polls for the next job and takes it without the pool's lock.
// CHECK-LABEL: llvm.func internal @__strata_pool_worker(
// CHECK: llvm.call @pthread_cond_wait
// CHECK: llvm.call @__strata_pool_run
// CHECK: llvm.load %{{.*}} atomic acquire
// CHECK: llvm.call @__strata_pool_poll
// CHECK-NOT: pthread_mutex_lock
// CHECK: llvm.call @__strata_pool_run
// CHECK-LABEL: llvm.func internal @__strata_pool_shutdown(
// CHECK: llvm.call @pthread_join
// CHECK: llvm.mlir.global_dtors dtors = [@__strata_pool_shutdown]
// CHECK-LABEL: llvm.func internal @__strata_parallel_for(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64)
// CHECK: llvm.call @pthread_mutex_trylock
// Without a target description, up to 64 threads (the caller and 63 workers).
// CHECK: %[[CORES:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK: llvm.icmp "slt" %{{.*}}, %[[CORES]]
// CHECK: llvm.call @pthread_create
// CHECK: llvm.call @pthread_cond_broadcast
// CHECK: llvm.call @__strata_pool_run
// CHECK: llvm.call @__strata_pool_poll
// CHECK-LABEL: llvm.func internal @__strata_thunk_task(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64)
// CHECK: %[[S:.*]] = llvm.load %[[CTX]] : !llvm.ptr -> !llvm.struct<(ptr, f32)>
// CHECK: %[[P:.*]] = llvm.extractvalue %[[S]][0]
// CHECK: %[[X:.*]] = llvm.extractvalue %[[S]][1]
// CHECK: llvm.call @task(%[[BEGIN]], %[[END]], %[[P]], %[[X]]) : (i64, i64, !llvm.ptr, f32) -> ()
// CHECK-LABEL: llvm.func internal @__strata_fork_task(
// CHECK-SAME: %[[N:.*]]: i64, %{{.*}}: !llvm.ptr, %{{.*}}: f32)
// CHECK: %[[CAPTURES:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, f32)>
// CHECK: %[[THUNK:.*]] = llvm.mlir.addressof @__strata_thunk_task
// CHECK: llvm.call @__strata_parallel_for(%[[THUNK]], %[[CAPTURES]], %[[N]])
llvm.func @__strata_fork_task(i64, !llvm.ptr, f32)
llvm.func @task(%begin: i64, %end: i64, %p: !llvm.ptr, %x: f32) {
  llvm.return
}
llvm.func @main(%p: !llvm.ptr, %x: f32) {
  %n = llvm.mlir.constant(4 : i64) : i64
  llvm.call @__strata_fork_task(%n, %p, %x) : (i64, !llvm.ptr, f32) -> ()
  llvm.return
}

// -----

// The target's cores bound the pool: a fork into more ranges than that shares them out. Polls
// carry the architecture's spin hint: x86's pause.
// CHECK-LABEL: llvm.func internal @__strata_pool_poll(
// CHECK: llvm.call_intrinsic "llvm.x86.sse2.pause"() : () -> ()
// CHECK-LABEL: llvm.func internal @__strata_parallel_for(
// CHECK: %[[CORES:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK: llvm.icmp "slt" %{{.*}}, %[[CORES]]
// CHECK: llvm.call @pthread_create
module attributes {target.desc = {kind = "cpu", triple = "x86_64-unknown-linux-gnu", cores = 3 : i64}} {
  llvm.func @__strata_fork_task(i64)
  llvm.func @task(%begin: i64, %end: i64) {
    llvm.return
  }
  llvm.func @main() {
    %n = llvm.mlir.constant(12 : i64) : i64
    llvm.call @__strata_fork_task(%n) : (i64) -> ()
    llvm.return
  }
}

// -----

// AArch64's spin hint is `yield` (hint #1).
// CHECK-LABEL: llvm.func internal @__strata_pool_poll(
// CHECK: %[[YIELD:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.call_intrinsic "llvm.aarch64.hint"(%[[YIELD]]) : (i32) -> ()
module attributes {target.desc = {kind = "cpu", triple = "aarch64-unknown-linux-gnu", cores = 4 : i64}} {
  llvm.func @__strata_fork_task(i64)
  llvm.func @task(%begin: i64, %end: i64) {
    llvm.return
  }
  llvm.func @main() {
    %n = llvm.mlir.constant(8 : i64) : i64
    llvm.call @__strata_fork_task(%n) : (i64) -> ()
    llvm.return
  }
}
