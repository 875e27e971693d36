// RUN: fusion-opt %s --fusion-fuse-act-quantize | FileCheck %s --check-prefix=DEFAULT
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-fuse-act-quantize{strict-rounding=true}))' | FileCheck %s --check-prefix=STRICT
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-fuse-act-quantize{strict-rounding=true}))' --remarks-filter=fusion -verify-diagnostics -o /dev/null

// The `strict-rounding` option: activations whose body rounds an
// intermediate value to a float narrower than f32 are declined, so that the
// fused op (f32 arithmetic, one rounding to the `via` type) and the unfused
// graph round the same values. Rounding the inputs and the result is
// allowed. By default all of these fuse (DEFAULT).

#id = affine_map<(d0, d1) -> (d0, d1)>
!x = tensor<4x64xbf16>
!xf = tensor<4x64xf32>
!d = tensor<4x64xf8E4M3FN>
!s = tensor<4x2xf8E8M0FNU>

/// bf16 input widened to f32, silu in f32, result rounded to bf16: only the
/// input and the result are rounded, so it fuses under strict-rounding.
// DEFAULT-LABEL: func.func @silu_rounds_input_and_result
//       DEFAULT: fusion.act_quantize #fusion.act<silu>
// STRICT-LABEL: func.func @silu_rounds_input_and_result
//  STRICT-SAME: (%[[X:.*]]: tensor<4x64xbf16>)
//       STRICT: fusion.act_quantize #fusion.act<silu> %[[X]] as quant<mxfp8_e4m3, rowwise> via bf16
//   STRICT-NOT: fusion.quantize
func.func @silu_rounds_input_and_result(%x: !x) -> (!d, !s) {
  %init = tensor.empty() : !x
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%init : !x) {
  ^bb0(%in: bf16, %out: bf16):
    %f = arith.extf %in : bf16 to f32
    %n = arith.negf %f : f32
    %e = math.exp %n : f32
    %c1 = arith.constant 1.0 : f32
    %den = arith.addf %e, %c1 : f32
    %r = arith.divf %f, %den : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> !x
  %dst0 = tensor.empty() : !d
  %dst1 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// An f32 input rounded to bf16 at the start of the body (a projection's
/// result rounded as torch does): the fused op reads the rounded tensor, so
/// this is an input rounding and fuses under strict-rounding.
// STRICT-LABEL: func.func @silu_rounded_f32_input
//       STRICT: linalg.generic
//       STRICT: fusion.act_quantize #fusion.act<silu> %{{.*}} as quant<mxfp8_e4m3, rowwise> via f32
func.func @silu_rounded_f32_input(%x: !xf) -> (!d, !s) {
  %init = tensor.empty() : !xf
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !xf) outs(%init : !xf) {
  ^bb0(%in: f32, %out: f32):
    %b = arith.truncf %in : f32 to bf16
    %f = arith.extf %b : bf16 to f32
    %n = arith.negf %f : f32
    %e = math.exp %n : f32
    %c1 = arith.constant 1.0 : f32
    %den = arith.addf %e, %c1 : f32
    %r = arith.divf %f, %den : f32
    linalg.yield %r : f32
  } -> !xf
  %dst2 = tensor.empty() : !d
  %dst3 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst2, %dst3)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// The sigmoid is rounded to bf16 before the multiply (torch-mlir's bf16
/// silu as two generics, fused): an internal rounding. Declined under
/// strict-rounding, the IR left as it was; fused by default.
// DEFAULT-LABEL: func.func @negative_silu_rounds_sigmoid
//       DEFAULT: fusion.act_quantize #fusion.act<silu>
// STRICT-LABEL: func.func @negative_silu_rounds_sigmoid
//       STRICT: linalg.generic
//       STRICT: fusion.quantize
//   STRICT-NOT: fusion.act_quantize
func.func @negative_silu_rounds_sigmoid(%x: !x) -> (!d, !s) {
  %init = tensor.empty() : !x
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%init : !x) {
  ^bb0(%in: bf16, %out: bf16):
    %f = arith.extf %in : bf16 to f32
    %n = arith.negf %f : f32
    %e = math.exp %n : f32
    %c1 = arith.constant 1.0 : f32
    %den = arith.addf %e, %c1 : f32
    %sig = arith.divf %c1, %den : f32
    %sb = arith.truncf %sig : f32 to bf16
    %sf = arith.extf %sb : bf16 to f32
    %r = arith.mulf %f, %sf : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> !x
  %dst4 = tensor.empty() : !d
  %dst5 = tensor.empty() : !s
  // expected-remark @below {{[Missed] FuseActQuantize | Category:fusion | Function=negative_silu_rounds_sigmoid | Reason="activation body rounds internally", Remark="'arith.truncf' rounds an intermediate value to bf16 (strict-rounding: the fused op computes in f32 and rounds once)"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst4, %dst5)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// SwiGLU whose final product is computed in bf16 (torch-mlir's bf16
/// mul generic fused into the body): each bf16 operation rounds.
// DEFAULT-LABEL: func.func @negative_swiglu_bf16_multiply
//       DEFAULT: fusion.gated_act_quantize #fusion.act<swiglu>
// STRICT-LABEL: func.func @negative_swiglu_bf16_multiply
//       STRICT: fusion.quantize
//   STRICT-NOT: fusion.gated_act_quantize
func.func @negative_swiglu_bf16_multiply(%gate: !x, %up: !x) -> (!d, !s) {
  %init = tensor.empty() : !x
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : !x, !x) outs(%init : !x) {
  ^bb0(%g: bf16, %u: bf16, %out: bf16):
    %f = arith.extf %g : bf16 to f32
    %n = arith.negf %f : f32
    %e = math.exp %n : f32
    %c1 = arith.constant 1.0 : f32
    %den = arith.addf %e, %c1 : f32
    %silu = arith.divf %f, %den : f32
    %sb = arith.truncf %silu : f32 to bf16
    %r = arith.mulf %sb, %u : bf16
    linalg.yield %r : bf16
  } -> !x
  %dst6 = tensor.empty() : !d
  %dst7 = tensor.empty() : !s
  // expected-remark @below {{Reason="activation body rounds internally", Remark="'arith.truncf' rounds an intermediate value to bf16 (strict-rounding: the fused op computes in f32 and rounds once)"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst6, %dst7)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// silu computed entirely in bf16 (a frontend without upcasts): every
/// operation that is not exact in bf16 rounds; the first one (the exp;
/// the negation is exact) is named in the remark.
// DEFAULT-LABEL: func.func @negative_silu_bf16_arithmetic
//       DEFAULT: fusion.act_quantize #fusion.act<silu>
// STRICT-LABEL: func.func @negative_silu_bf16_arithmetic
//       STRICT: fusion.quantize
//   STRICT-NOT: fusion.act_quantize
func.func @negative_silu_bf16_arithmetic(%x: !x) -> (!d, !s) {
  %init = tensor.empty() : !x
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%init : !x) {
  ^bb0(%c: bf16, %out: bf16):
    %one = arith.constant 1.0 : bf16
    %n = arith.negf %c : bf16
    %e = math.exp %n : bf16
    %den = arith.addf %e, %one : bf16
    %r = arith.divf %c, %den : bf16
    linalg.yield %r : bf16
  } -> !x
  %dst8 = tensor.empty() : !d
  %dst9 = tensor.empty() : !s
  // expected-remark @below {{Reason="activation body rounds internally", Remark="'math.exp' computes in bf16 (strict-rounding: the fused op computes in f32 and rounds once)"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst8, %dst9)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// GELU-tanh computed in bf16 as torch-mlir writes it: bf16 constants
/// captured from outside the body, rounded to bf16 (0.796875 for sqrt(2/pi),
/// 0.044677734 for 0.044715), and x^3 as math.fpowi. The constants are
/// within their rounding to bf16 of the runtime's, so by default it fuses
/// like any body that computes in bf16 (the fused op: f32 and the exact
/// constants); strict-rounding declines it, naming the first rounding op.
// DEFAULT-LABEL: func.func @negative_gelu_tanh_bf16
//       DEFAULT: fusion.act_quantize #fusion.act<gelu_tanh>
// STRICT-LABEL: func.func @negative_gelu_tanh_bf16
//       STRICT: fusion.quantize
//   STRICT-NOT: fusion.act_quantize
func.func @negative_gelu_tanh_bf16(%x: !x) -> (!d, !s) {
  %c = arith.constant 4.467770e-02 : bf16
  %k = arith.constant 7.968750e-01 : bf16
  %one = arith.constant 1.000000e+00 : bf16
  %half = arith.constant 5.000000e-01 : bf16
  %c3 = arith.constant 3 : i64
  %init = tensor.empty() : !x
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%init : !x) {
  ^bb0(%in: bf16, %out: bf16):
    %x3 = math.fpowi %in, %c3 : bf16, i64
    %cx3 = arith.mulf %x3, %c : bf16
    %inner = arith.addf %in, %cx3 : bf16
    %arg = arith.mulf %inner, %k : bf16
    %t = math.tanh %arg : bf16
    %onet = arith.addf %t, %one : bf16
    %h = arith.mulf %onet, %half : bf16
    %r = arith.mulf %in, %h : bf16
    linalg.yield %r : bf16
  } -> !x
  %dst8 = tensor.empty() : !d
  %dst9 = tensor.empty() : !s
  // expected-remark @below {{Reason="activation body rounds internally", Remark="'math.fpowi' computes in bf16}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst8, %dst9)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}
