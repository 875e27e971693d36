// RUN: fusion-opt %s --fusion-raise-quantize | FileCheck %s
// RUN: fusion-opt %s --fusion-raise-quantize --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --fusion-raise-quantize=finite-inputs=true | FileCheck %s --check-prefix=FINITE
// RUN: fusion-opt %s --fusion-act-quantize-pipeline | FileCheck %s --check-prefix=FUSED
// RUN: fusion-opt %s --fusion-pipeline | FileCheck %s --check-prefix=LLVM

// fusion-raise-quantize: FP8 per tensor with a given scale (TransformerEngine's
// delayed scaling written in torch: `(x * scale).clamp(-448, 448).to(fp8)`,
// the scale an argument, TE's amax for the history `x.abs().amax()` beside
// it) becomes fusion.quantize with `scaling = delayed` and its scale operand
// when, on every probe and every scale tried, the codes equal the runtime's
// `cvt_rn_satfinite(x * scale)`. The tensor amax beside it becomes the raised
// op's amax where it equals the runtime's (which ignores NaN).

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#bc0 = affine_map<(d0, d1) -> ()>
#bc1 = affine_map<(d0, d1) -> (0)>
#all = affine_map<(d0, d1) -> ()>
#one = affine_map<() -> ()>
!xb = tensor<4x64xbf16>
!x = tensor<4x64xf32>
!d = tensor<4x64xf8E4M3FN>
!e = tensor<4x64xf8E5M2>

/// bf16 input, a 0-d f32 scale, a NaN-propagating clamp (minimumf /
/// maximumf: NaN stays NaN, 0x7F as in the runtime) and the tensor amax in
/// f32. Without finite inputs the amax (maximumf: NaN propagates) differs
/// from the runtime's NaN-ignoring one and stays; with them it is taken.
// CHECK-LABEL: func.func @delayed_bf16
//       CHECK: %[[S:.*]] = tensor.expand_shape %arg1 [] output_shape [1] : tensor<f32> into tensor<1xf32>
//       CHECK: fusion.quantize %arg0 scale %[[S]] as quant<fp8_e4m3, rowwise, scaling = delayed>
//       CHECK: linalg.generic
//  CHECK-SAME: iterator_types = ["reduction", "reduction"]
// FINITE-LABEL: func.func @delayed_bf16
//       FINITE: %[[Q:.*]]:3 = fusion.quantize %arg0 scale
//       FINITE: %[[A:.*]] = tensor.collapse_shape %[[Q]]#2 [] : tensor<1xf32> into tensor<f32>
//   FINITE-NOT: linalg.generic
//       FINITE: return %[[Q]]#0, %[[A]]
// FUSED-LABEL: func.func @delayed_bf16
//       FUSED: fusion.quantize %arg0 scale
// LLVM-LABEL: llvm.func @delayed_bf16
//       LLVM: llvm.call @fusion_rt_mlir_quantize
func.func @delayed_bf16(%x: !xb, %s: tensor<f32>) -> (!d, tensor<f32>) {
  %lo = arith.constant -4.480000e+02 : f32
  %hi = arith.constant 4.480000e+02 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %i = tensor.empty() : !d
  // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, scaling = delayed>; the program's tensor amax of its input stays a reduction of its own: probe 11: it is nan in the IR, 2.859375e+00 in the runtime (whose amax ignores NaN)"}}
  %q = linalg.generic {indexing_maps = [#id2, #bc0, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : !xb, tensor<f32>) outs(%i : !d) {
  ^bb0(%in: bf16, %sc: f32, %o: f8E4M3FN):
    %f = arith.extf %in : bf16 to f32
    %m = arith.mulf %f, %sc : f32
    %c0 = arith.maximumf %m, %lo : f32
    %c1 = arith.minimumf %c0, %hi : f32
    %t = arith.truncf %c1 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  %ai = tensor.empty() : tensor<f32>
  %af = linalg.fill ins(%ninf : f32) outs(%ai : tensor<f32>) -> tensor<f32>
  %amax = linalg.generic {indexing_maps = [#id2, #all], iterator_types = ["reduction", "reduction"]}
      ins(%x : !xb) outs(%af : tensor<f32>) {
  ^bb0(%in: bf16, %acc: f32):
    %f = arith.extf %in : bf16 to f32
    %a = math.absf %f : f32
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %q, %amax : !d, tensor<f32>
}

/// The activation before it (SiLU in bf16), the scale a tensor<1xf32> read
/// by tensor.extract inside the body, e5m2: the activation and the quantizer
/// fuse into one act_quantize with the scale.
// CHECK-LABEL: func.func @delayed_silu_extract_e5m2
//       CHECK: fusion.quantize %{{.*}} scale %arg1 as quant<fp8_e5m2, rowwise, scaling = delayed>
// FUSED-LABEL: func.func @delayed_silu_extract_e5m2
//       FUSED: fusion.act_quantize #fusion.act<silu> %arg0 scale %arg1 as quant<fp8_e5m2, rowwise, scaling = delayed> via bf16
// LLVM-LABEL: llvm.func @delayed_silu_extract_e5m2
//       LLVM: llvm.call @fusion_rt_mlir_act_quantize
func.func @delayed_silu_extract_e5m2(%x: !xb, %s: tensor<1xf32>) -> !e {
  %one = arith.constant 1.000000e+00 : f32
  %lo = arith.constant -5.734400e+04 : f32
  %hi = arith.constant 5.734400e+04 : f32
  %c0 = arith.constant 0 : index
  %yi = tensor.empty() : !xb
  %y = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : !xb) outs(%yi : !xb) {
  ^bb0(%in: bf16, %o: bf16):
    %f = arith.extf %in : bf16 to f32
    %n = arith.negf %f : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %r = arith.divf %f, %d : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> !xb
  %sc = tensor.extract %s[%c0] : tensor<1xf32>
  %i = tensor.empty() : !e
  // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e5m2, rowwise, scaling = delayed>"}}
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y : !xb) outs(%i : !e) {
  ^bb0(%in: bf16, %o: f8E5M2):
    %f = arith.extf %in : bf16 to f32
    %m = arith.mulf %f, %sc : f32
    %c = arith.maximumf %m, %lo : f32
    %c1 = arith.minimumf %c, %hi : f32
    %t = arith.truncf %c1 : f32 to f8E5M2
    linalg.yield %t : f8E5M2
  } -> !e
  return %q : !e
}

/// The amax is read (widened to f64 for a history kept in f64) before the
/// scale is computed (1 / scale_inv): the raised op goes after the scale,
/// so the amax stays a reduction of its own.
// FINITE-LABEL: func.func @delayed_amax_read_before_scale
//       FINITE: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
//       FINITE: fusion.quantize
func.func @delayed_amax_read_before_scale(%x: !x, %sinv: tensor<f32>) -> (!d, tensor<f64>) {
  %one = arith.constant 1.000000e+00 : f32
  %lo = arith.constant -4.480000e+02 : f32
  %hi = arith.constant 4.480000e+02 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ai = tensor.empty() : tensor<f32>
  %af = linalg.fill ins(%ninf : f32) outs(%ai : tensor<f32>) -> tensor<f32>
  %amax = linalg.generic {indexing_maps = [#id2, #all], iterator_types = ["reduction", "reduction"]}
      ins(%x : !x) outs(%af : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %wi = tensor.empty() : tensor<f64>
  %wide = linalg.generic {indexing_maps = [#one, #one], iterator_types = []}
      ins(%amax : tensor<f32>) outs(%wi : tensor<f64>) {
  ^bb0(%in: f32, %o: f64):
    %w = arith.extf %in : f32 to f64
    linalg.yield %w : f64
  } -> tensor<f64>
  %si = tensor.empty() : tensor<f32>
  %s = linalg.generic {indexing_maps = [#one, #one], iterator_types = []}
      ins(%sinv : tensor<f32>) outs(%si : tensor<f32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.divf %one, %in : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %i = tensor.empty() : !d
  // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, scaling = delayed>; the program's tensor amax of its input stays a reduction of its own: it is read before the scale is defined"}}
  %q = linalg.generic {indexing_maps = [#id2, #bc0, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : !x, tensor<f32>) outs(%i : !d) {
  ^bb0(%in: f32, %sc: f32, %o: f8E4M3FN):
    %m = arith.mulf %in, %sc : f32
    %c0 = arith.maximumf %m, %lo : f32
    %c1 = arith.minimumf %c0, %hi : f32
    %t = arith.truncf %c1 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %q, %wide : !d, tensor<f64>
}

/// vLLM's static FP8 (`x / scale`, the scale a dequantization scale):
/// a quotient, not the runtime's product; declined.
// CHECK-LABEL: func.func @negative_divide_by_scale
//       CHECK: arith.divf
func.func @negative_divide_by_scale(%x: !x, %s: tensor<1xf32>) -> !d {
  %lo = arith.constant -4.480000e+02 : f32
  %hi = arith.constant 4.480000e+02 : f32
  %i = tensor.empty() : !d
  // expected-remark @below {{first: probe 0, element 0: x = -2.506494e-01, scale 1.875000e-01 gives 0xbb in the IR, 0x94 in the runtime (x * scale, saturated)}}
  %q = linalg.generic {indexing_maps = [#id2, #bc1, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : !x, tensor<1xf32>) outs(%i : !d) {
  ^bb0(%in: f32, %sc: f32, %o: f8E4M3FN):
    %m = arith.divf %in, %sc : f32
    %c0 = arith.maximumf %m, %lo : f32
    %c1 = arith.minimumf %c0, %hi : f32
    %t = arith.truncf %c1 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %q : !d
}

/// A scale of type bf16: the runtime's delayed scaling takes an f32 scale.
// CHECK-LABEL: func.func @negative_bf16_scale
//       CHECK: arith.truncf
func.func @negative_bf16_scale(%x: !xb, %s: tensor<bf16>) -> !d {
  %i = tensor.empty() : !d
  // expected-remark @below {{Remark="this cast to f8E4M3FN multiplies by a one-element tensor of type tensor<bf16> that it does not compute (a delayed scale?): the runtime's FP8 delayed scaling takes an f32 scale"}}
  %q = linalg.generic {indexing_maps = [#id2, #bc0, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : !xb, tensor<bf16>) outs(%i : !d) {
  ^bb0(%in: bf16, %sc: bf16, %o: f8E4M3FN):
    %m = arith.mulf %in, %sc : bf16
    %t = arith.truncf %m : bf16 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %q : !d
}

/// Without a clamp the IR's cast overflows to NaN where the runtime
/// saturates: declined (torch >= 2.12 casts saturate: `saturating-casts`,
/// which frontend=torch sets).
// CHECK-LABEL: func.func @negative_no_clamp
//       CHECK: arith.truncf
func.func @negative_no_clamp(%x: !x, %s: tensor<f32>) -> !d {
  %i = tensor.empty() : !d
  // expected-remark @below {{Reason="differs from every runtime quantizer"}}
  %q = linalg.generic {indexing_maps = [#id2, #bc0, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : !x, tensor<f32>) outs(%i : !d) {
  ^bb0(%in: f32, %sc: f32, %o: f8E4M3FN):
    %m = arith.mulf %in, %sc : f32
    %t = arith.truncf %m : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %q : !d
}

/// A static scale: the scale a constant of the program (a buffer that
/// torch-mlir exports as a one-element constant tensor, or a literal
/// folded into the body). Raised with that constant as the scale operand,
/// checked at its value (the IR as written).
// CHECK-LABEL: func.func @static_scale_buffer
//       CHECK: %[[S:.*]] = arith.constant dense<2.400000e+01> : tensor<1xf32>
//       CHECK: fusion.quantize %arg0 scale %[[S]] as quant<fp8_e4m3, rowwise, scaling = delayed>
//   CHECK-NOT: linalg.generic
func.func @static_scale_buffer(%x: !xb) -> !d {
  %lo = arith.constant -4.480000e+02 : f32
  %hi = arith.constant 4.480000e+02 : f32
  %s = arith.constant dense<2.400000e+01> : tensor<1xf32>
  %i = tensor.empty() : !d
  // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, scaling = delayed> with the program's constant scale 2.400000e+01 (a static scale)"}}
  %q = linalg.generic {indexing_maps = [#id2, #bc1, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : !xb, tensor<1xf32>) outs(%i : !d) {
  ^bb0(%in: bf16, %sc: f32, %o: f8E4M3FN):
    %f = arith.extf %in : bf16 to f32
    %m = arith.mulf %f, %sc : f32
    %c0 = arith.maximumf %m, %lo : f32
    %c1 = arith.minimumf %c0, %hi : f32
    %t = arith.truncf %c1 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %q : !d
}

/// The literal form (`(y * 0.75).clamp(..)`, e5m2), and a division by a
/// power of two (x / 4 is x * 0.25 for every x): both raised.
// CHECK-LABEL: func.func @static_scale_literal_and_pow2_divisor
//   CHECK-DAG: %[[S0:.*]] = arith.constant dense<7.500000e-01> : tensor<1xf32>
//   CHECK-DAG: %[[S1:.*]] = arith.constant dense<2.500000e-01> : tensor<1xf32>
//   CHECK-DAG: fusion.quantize %arg0 scale %[[S0]] as quant<fp8_e5m2, rowwise, scaling = delayed>
//   CHECK-DAG: fusion.quantize %arg0 scale %[[S1]] as quant<fp8_e4m3, rowwise, scaling = delayed>
func.func @static_scale_literal_and_pow2_divisor(%x: !x) -> (!e, !d) {
  %lo = arith.constant -5.734400e+04 : f32
  %hi = arith.constant 5.734400e+04 : f32
  %lo8 = arith.constant -4.480000e+02 : f32
  %hi8 = arith.constant 4.480000e+02 : f32
  %k = arith.constant 7.500000e-01 : f32
  %four = arith.constant 4.000000e+00 : f32
  %i = tensor.empty() : !e
  // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e5m2, rowwise, scaling = delayed> with the program's constant scale 7.500000e-01 (a static scale)"}}
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%i : !e) {
  ^bb0(%in: f32, %o: f8E5M2):
    %m = arith.mulf %in, %k : f32
    %c0 = arith.maximumf %m, %lo : f32
    %c1 = arith.minimumf %c0, %hi : f32
    %t = arith.truncf %c1 : f32 to f8E5M2
    linalg.yield %t : f8E5M2
  } -> !e
  %j = tensor.empty() : !d
  // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, scaling = delayed> with the program's constant scale 2.500000e-01 (a static scale)"}}
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%j : !d) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %m = arith.divf %in, %four : f32
    %c0 = arith.maximumf %m, %lo8 : f32
    %c1 = arith.minimumf %c0, %hi8 : f32
    %t = arith.truncf %c1 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %q, %r : !e, !d
}

/// vLLM's static FP8, `(x / input_scale).clamp(..)` with a calibrated scale
/// that is not a power of two: the runtime multiplies by s = fl(1 / d), and
/// x / d and x * s round to different FP8 codes where x / d is a tie of the
/// FP8 rounding that the rounded product misses. A 16-bit input is checked
/// on every one of its 65536 values: bf16 / 3 is equal everywhere (raised,
/// scale fl(1/3)); bf16 / 7 is not (x = 0.0888671875: 0x06 divided, 0x07
/// multiplied, an e4m3 subnormal). An f32 input cannot be enumerated and
/// is declined.
// CHECK-LABEL: func.func @static_divide_bf16
//   CHECK-DAG: %[[S:.*]] = arith.constant dense<0.333333343> : tensor<1xf32>
//       CHECK: fusion.quantize %arg0 scale %[[S]] as quant<fp8_e4m3, rowwise, scaling = delayed>
//       CHECK: arith.divf
func.func @static_divide_bf16(%x: !xb) -> (!d, !d) {
  %lo = arith.constant -4.480000e+02 : f32
  %hi = arith.constant 4.480000e+02 : f32
  %three = arith.constant 3.000000e+00 : f32
  %seven = arith.constant 7.000000e+00 : f32
  %i = tensor.empty() : !d
  // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, scaling = delayed> with the program's constant scale 3.333333e-01 (a static scale)"}}
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : !xb) outs(%i : !d) {
  ^bb0(%in: bf16, %o: f8E4M3FN):
    %f = arith.extf %in : bf16 to f32
    %m = arith.divf %f, %three : f32
    %c0 = arith.maximumf %m, %lo : f32
    %c1 = arith.minimumf %c0, %hi : f32
    %t = arith.truncf %c1 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  %j = tensor.empty() : !d
  // expected-remark @below {{Remark="this cast to f8E4M3FN divides by the program's constant 7.000000e+00 (a static scale), where the runtime multiplies by 1.428571e-01: x = 8.886719e-02 gives 0x06 divided, 0x07 multiplied"}}
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : !xb) outs(%j : !d) {
  ^bb0(%in: bf16, %o: f8E4M3FN):
    %f = arith.extf %in : bf16 to f32
    %m = arith.divf %f, %seven : f32
    %c0 = arith.maximumf %m, %lo : f32
    %c1 = arith.minimumf %c0, %hi : f32
    %t = arith.truncf %c1 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %q, %r : !d, !d
}

// f32 input: every finite f32 x is decided on the f32 values around m * d
// for each FP8 rounding midpoint m (where the quotient and the product can
// round to different codes at all): 5 gives the runtime's codes for every
// input (raised, the scale fl(1 / 5)).
// CHECK-LABEL: func.func @static_divide_f32
//   CHECK-DAG: %[[S:.*]] = arith.constant dense<2.000000e-01> : tensor<1xf32>
//       CHECK: fusion.quantize %arg0 scale %[[S]] as quant<fp8_e4m3, rowwise, scaling = delayed>
func.func @static_divide_f32(%x: !x) -> !d {
  %lo = arith.constant -4.480000e+02 : f32
  %hi = arith.constant 4.480000e+02 : f32
  %five = arith.constant 5.000000e+00 : f32
  %i = tensor.empty() : !d
  // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, scaling = delayed> with the program's constant scale 2.000000e-01 (a static scale)"}}
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%i : !d) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %m = arith.divf %in, %five : f32
    %c0 = arith.maximumf %m, %lo : f32
    %c1 = arith.minimumf %c0, %hi : f32
    %t = arith.truncf %c1 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %q : !d
}

// 3 does not: declined, the input that differs named.
// CHECK-LABEL: func.func @negative_static_divide_f32
//   CHECK-NOT: fusion.quantize
//       CHECK: arith.divf
func.func @negative_static_divide_f32(%x: !x) -> !d {
  %lo = arith.constant -4.480000e+02 : f32
  %hi = arith.constant 4.480000e+02 : f32
  %three = arith.constant 3.000000e+00 : f32
  %j = tensor.empty() : !d
  // expected-remark @below {{Remark="this cast to f8E4M3FN divides by the program's constant 3.000000e+00 (a static scale), where the runtime multiplies by 3.333333e-01: x = 5.566406e-02 gives 0x09 divided, 0x0a multiplied"}}
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%j : !d) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %m = arith.divf %in, %three : f32
    %c0 = arith.maximumf %m, %lo : f32
    %c1 = arith.minimumf %c0, %hi : f32
    %t = arith.truncf %c1 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %r : !d
}

// A divisor whose reciprocal is subnormal (1e38: 1e-38 < 2^-126): the two
// quotients are not within one rounding of each other, so no finite set of
// inputs decides it; declined.
// CHECK-LABEL: func.func @negative_static_divide_f32_subnormal_reciprocal
//   CHECK-NOT: fusion.quantize
//       CHECK: arith.divf
func.func @negative_static_divide_f32_subnormal_reciprocal(%x: !x) -> !d {
  %lo = arith.constant -4.480000e+02 : f32
  %hi = arith.constant 4.480000e+02 : f32
  %big = arith.constant 1.000000e+38 : f32
  %i = tensor.empty() : !d
  // expected-remark @below {{Remark="this cast to f8E4M3FN divides by the program's constant 1.000000e+38 (a static scale), where the runtime multiplies by 1.000000e-38: the divisor or its reciprocal is not a normal f32, so the two quotients are not within one rounding of each other and cannot be compared on a finite set of inputs"}}
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%i : !d) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %m = arith.divf %in, %big : f32
    %c0 = arith.maximumf %m, %lo : f32
    %c1 = arith.minimumf %c0, %hi : f32
    %t = arith.truncf %c1 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %q : !d
}
