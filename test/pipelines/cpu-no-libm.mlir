// Transcendental ops are written as arithmetic and ops with an LLVM intrinsic stay
// instructions: the lowered example models and ONNX model-zoo architectures declare no libm
// function (a call per element would keep their kernels scalar).
// REQUIRES: onnx
// RUN: strata-compile %S/../../examples/mlp.mlir --emit llvm -o - | FileCheck %s
// RUN: strata-compile %S/../../examples/conv_block.mlir --emit llvm -o - | FileCheck %s
// RUN: strata-compile %S/../../examples/transformer_block.mlir --emit llvm -o - | FileCheck %s
// LRN (pow), softmax (exp), batch norm (sqrt), pooling, concat:
// RUN: strata-import %onnx_light/light_bvlc_alexnet.onnx -o %t.alexnet.mlir
// RUN: strata-compile %t.alexnet.mlir --emit llvm -o - | FileCheck %s
// RUN: strata-import %onnx_light/light_inception_v1.onnx -o %t.inception.mlir
// RUN: strata-compile %t.inception.mlir --emit llvm -o - | FileCheck %s
// RUN: strata-import %onnx_light/light_shufflenet.onnx -o %t.shufflenet.mlir
// RUN: strata-compile %t.shufflenet.mlir --emit llvm -o - | FileCheck %s
// RUN: strata-import %onnx_light/light_squeezenet.onnx -o %t.squeezenet.mlir
// RUN: strata-compile %t.squeezenet.mlir --emit llvm -o - | FileCheck %s
// Every function and model above lowers to LLVM IR at all:
// CHECK: define
// CHECK-NOT: declare {{.*}} @{{(exp|expm1|log|log1p|log2|log10|tanh|erf|erfc|sin|cos|tan|pow|sqrt|fabs|floor|ceil|round|roundeven|trunc|fma)f?}}(
// Nor an intrinsic that LLVM itself lowers to a libm call:
// CHECK-NOT: declare {{.*}} @llvm.{{(exp|exp2|exp10|log|log2|log10|tanh|sin|cos|tan|pow|sinh|cosh|asin|acos|atan)}}.
