// RUN: strata-opt %s --bf16-moves --split-input-file | FileCheck %s

// A bf16 vector loaded only to be stored (a row copy of a 7x7 map) moves as i16, to each of
// its stores.
// CHECK-LABEL: llvm.func @copy
// CHECK: %[[V:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<49xi16>
// CHECK: llvm.store %[[V]], %{{.*}} {alignment = 2 : i64} : vector<49xi16>, !llvm.ptr
// CHECK: llvm.store %[[V]], %{{.*}} {alignment = 2 : i64} : vector<49xi16>, !llvm.ptr
// CHECK-NOT: bf16
llvm.func @copy(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr) {
  %0 = llvm.load %a {alignment = 2 : i64} : !llvm.ptr -> vector<49xbf16>
  llvm.store %0, %b {alignment = 2 : i64} : vector<49xbf16>, !llvm.ptr
  llvm.store %0, %c {alignment = 2 : i64} : vector<49xbf16>, !llvm.ptr
  llvm.return
}

// -----

// A load with another use keeps its type; so do f16 copies and scalar bf16 ones.
// CHECK-LABEL: llvm.func @widen
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> vector<49xbf16>
// CHECK: llvm.fpext
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> vector<49xf16>
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> bf16
llvm.func @widen(%a: !llvm.ptr, %b: !llvm.ptr) {
  %0 = llvm.load %a : !llvm.ptr -> vector<49xbf16>
  llvm.store %0, %b : vector<49xbf16>, !llvm.ptr
  %1 = llvm.fpext %0 : vector<49xbf16> to vector<49xf32>
  llvm.store %1, %b : vector<49xf32>, !llvm.ptr
  %2 = llvm.load %a : !llvm.ptr -> vector<49xf16>
  llvm.store %2, %b : vector<49xf16>, !llvm.ptr
  %3 = llvm.load %a : !llvm.ptr -> bf16
  llvm.store %3, %b : bf16, !llvm.ptr
  llvm.return
}
