// RUN: fusion-opt %s --split-input-file --fusion-lower-float8-casts | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-lower-float8-casts=saturate=true | FileCheck %s --check-prefix=SAT
// RUN: fusion-opt %S/Inputs/lower-float8-casts-invalid.mlir --split-input-file --fusion-lower-float8-casts -verify-diagnostics -o /dev/null
// RUN: fusion-opt %S/Inputs/verify-lowered-invalid.mlir --fusion-verify-lowered-to-llvm -verify-diagnostics -o /dev/null

// Scalar casts with an 8-bit float side become _mlir_apfloat_convert calls;
// f32 arithmetic stays native.
// CHECK: func.func private @_mlir_apfloat_convert(i32, i32, i64) -> i64
// CHECK-LABEL: func.func @casts
//       CHECK: arith.addf
//       CHECK: call @_mlir_apfloat_convert
//       CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
//       CHECK: call @_mlir_apfloat_convert
//   CHECK-NOT: arith.truncf
//   CHECK-NOT: arith.extf
// SAT-LABEL: func.func @casts
//       SAT: math.copysign
//       SAT: arith.select
//       SAT: call @_mlir_apfloat_convert
func.func @casts(%a: f32, %b: f32, %c: f8E8M0FNU) -> (f32, f8E4M3FN, f32) {
  %0 = arith.addf %a, %b : f32
  %1 = arith.truncf %a : f32 to f8E4M3FN
  %2 = arith.extf %c : f8E8M0FNU to f32
  return %0, %1, %2 : f32, f8E4M3FN, f32
}
