// RUN: fusion-opt %s --fusion-act-quantize-pipeline | FileCheck %s
// RUN: fusion-opt %s --fusion-act-quantize-pipeline --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-act-quantize,fusion-fuse-act-quantize))' | FileCheck %s
// RUN: fusion-opt %s --fusion-act-quantize-pipeline -o %t.once.mlir
// RUN: fusion-opt %t.once.mlir --fusion-fuse-act-quantize -o %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// Forward, non-gated activations, each in several spellings (arith/math on
// tensors, named linalg ops, linalg.generic bodies as torch-mlir writes
// them), and the candidates the pass must decline. Gated forms:
// fuse-act-quantize-gated.mlir; backward and dbias:
// fuse-act-quantize-backward.mlir; the `formats` option:
// fuse-act-quantize-formats.mlir.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
!x = tensor<4x64xbf16>
!xf = tensor<4x64xf32>
!d = tensor<4x64xf8E4M3FN>
!s = tensor<4x2xf8E8M0FNU>

//===----------------------------------------------------------------------===//
// silu
//===----------------------------------------------------------------------===//

/// x / (1 + exp(-x)) written with arith/math on tensors, computed in f32.
// CHECK-LABEL: func.func @silu_arith_div
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>)
//       CHECK: %[[Q:.*]]:2 = fusion.act_quantize #fusion.act<silu> %[[X]] as quant<mxfp8_e4m3, rowwise> via bf16
//   CHECK-NOT: fusion.quantize
//       CHECK: return %[[Q]]#0, %[[Q]]#1
func.func @silu_arith_div(%x: !x) -> (!d, !s) {
  %xf = arith.extf %x : !x to !xf
  %n = arith.negf %xf : !xf
  %e = math.exp %n : !xf
  %one = arith.constant dense<1.0> : !xf
  %den = arith.addf %one, %e : !xf
  %y = arith.divf %xf, %den : !xf
  %t = arith.truncf %y : !xf to !x
  %dst0 = tensor.empty() : !d
  %dst1 = tensor.empty() : !s
  // expected-remark @below {{[Passed] FuseActQuantize | Category:fusion | Function=silu_arith_div | Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %t as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// x * sigmoid(x), sigmoid = 1 / (exp(-x) + 1) with a scalar constant, in
/// one linalg.generic.
// CHECK-LABEL: func.func @silu_generic_mul_sigmoid
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>)
//       CHECK: fusion.act_quantize #fusion.act<silu> %[[X]] as quant<mxfp8_e4m3, rowwise> via bf16
func.func @silu_generic_mul_sigmoid(%x: !x) -> (!d, !s) {
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
    %m = arith.mulf %sig, %f : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  } -> !x
  %dst2 = tensor.empty() : !d
  %dst3 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst2, %dst3)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// torch-mlir's decomposition: a sigmoid generic (negf, exp, addf, divf)
/// then a mul generic, each rounding to bf16; computed in bf16 tensors.
// CHECK-LABEL: func.func @silu_torch_two_generics
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>)
//       CHECK: fusion.act_quantize #fusion.act<silu> %[[X]] as quant<mxfp8_e4m3, rowwise> via bf16
func.func @silu_torch_two_generics(%x: !x) -> (!d, !s) {
  %init = tensor.empty() : !x
  %sig = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%init : !x) {
  ^bb0(%in: bf16, %out: bf16):
    %n = arith.negf %in : bf16
    %e = math.exp %n : bf16
    %c1 = arith.constant 1.0 : bf16
    %den = arith.addf %e, %c1 : bf16
    %r = arith.divf %c1, %den : bf16
    linalg.yield %r : bf16
  } -> !x
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sig : !x, !x) outs(%init : !x) {
  ^bb0(%a: bf16, %b: bf16, %out: bf16):
    %m = arith.mulf %a, %b : bf16
    linalg.yield %m : bf16
  } -> !x
  %dst4 = tensor.empty() : !d
  %dst5 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst4, %dst5)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// Named linalg ops: linalg.negf, linalg.exp, linalg.add with a filled
/// tensor of ones, linalg.div, linalg.elementwise mul.
// CHECK-LABEL: func.func @silu_named_linalg
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
//       CHECK: fusion.act_quantize #fusion.act<silu> %[[X]] as quant<mxfp8_e4m3, rowwise> via f32
func.func @silu_named_linalg(%x: !xf) -> (!d, !s) {
  %init = tensor.empty() : !xf
  %c1 = arith.constant 1.0 : f32
  %ones = linalg.fill ins(%c1 : f32) outs(%init : !xf) -> !xf
  %n = linalg.negf ins(%x : !xf) outs(%init : !xf) -> !xf
  %e = linalg.exp ins(%n : !xf) outs(%init : !xf) -> !xf
  %den = linalg.add ins(%ones, %e : !xf, !xf) outs(%init : !xf) -> !xf
  %sig = linalg.div ins(%ones, %den : !xf, !xf) outs(%init : !xf) -> !xf
  %y = linalg.elementwise kind=#linalg.elementwise_kind<mul> ins(%x, %sig : !xf, !xf) outs(%init : !xf) -> !xf
  %dst6 = tensor.empty() : !d
  %dst7 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst6, %dst7)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// sigmoid written as exp(x) / (1 + exp(x)).
// CHECK-LABEL: func.func @silu_exp_over_one_plus_exp
//       CHECK: fusion.act_quantize #fusion.act<silu>
func.func @silu_exp_over_one_plus_exp(%x: !xf) -> (!d, !s) {
  %e = math.exp %x : !xf
  %one = arith.constant dense<1.0> : !xf
  %den = arith.addf %e, %one : !xf
  %sig = arith.divf %e, %den : !xf
  %y = arith.mulf %x, %sig : !xf
  %dst8 = tensor.empty() : !d
  %dst9 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst8, %dst9)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// sigmoid written through tanh: x * (0.5 + 0.5 * tanh(x / 2)).
// CHECK-LABEL: func.func @silu_tanh_sigmoid
//       CHECK: fusion.act_quantize #fusion.act<silu>
func.func @silu_tanh_sigmoid(%x: !xf) -> (!d, !s) {
  %h = arith.constant dense<0.5> : !xf
  %hx = arith.mulf %x, %h : !xf
  %t = math.tanh %hx : !xf
  %ht = arith.mulf %h, %t : !xf
  %sig = arith.addf %ht, %h : !xf
  %y = arith.mulf %sig, %x : !xf
  %dst10 = tensor.empty() : !d
  %dst11 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst10, %dst11)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// Dynamic shapes.
// CHECK-LABEL: func.func @silu_dynamic
//  CHECK-SAME: (%[[X:.*]]: tensor<?x?xbf16>)
//       CHECK: fusion.act_quantize #fusion.act<silu> %[[X]] as quant<mxfp8_e4m3, rowwise> via bf16 outs({{.*}}) : (tensor<?x?xbf16>, tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>) -> (tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>)
func.func @silu_dynamic(%x: tensor<?x?xbf16>) -> (tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>) {
  %xf = arith.extf %x : tensor<?x?xbf16> to tensor<?x?xf32>
  %n = arith.negf %xf : tensor<?x?xf32>
  %e = math.exp %n : tensor<?x?xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xbf16>
  %k = tensor.dim %x, %c1 : tensor<?x?xbf16>
  %init = tensor.empty(%m, %k) : tensor<?x?xf32>
  %one = arith.constant 1.0 : f32
  %ones = linalg.fill ins(%one : f32) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %den = arith.addf %ones, %e : tensor<?x?xf32>
  %y = arith.divf %xf, %den : tensor<?x?xf32>
  %t = arith.truncf %y : tensor<?x?xf32> to tensor<?x?xbf16>
  %dst_c0 = arith.constant 0 : index
  %dst_c1 = arith.constant 1 : index
  %dst_m = tensor.dim %t, %dst_c0 : tensor<?x?xbf16>
  %dst_k = tensor.dim %t, %dst_c1 : tensor<?x?xbf16>
  %dst_kb = affine.apply affine_map<()[s0] -> (s0 ceildiv 32)>()[%dst_k]
  %dst12 = tensor.empty(%dst_m, %dst_k) : tensor<?x?xf8E4M3FN>
  %dst13 = tensor.empty(%dst_m, %dst_kb) : tensor<?x?xf8E8M0FNU>
  // expected-remark @below {{Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %t as quant<mxfp8_e4m3, rowwise> outs(%dst12, %dst13)
      : (tensor<?x?xbf16>, tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>) -> (tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>
}

//===----------------------------------------------------------------------===//
// gelu (erf)
//===----------------------------------------------------------------------===//

/// torch-mlir's exact GELU: x * (0.5 * (1 + erf((x - 0) / sqrt(2)))), with
/// sqrt(2) computed in IR, after a bias add that elementwise fusion merges
/// into the same body: the bias add is materialised on its own.
// CHECK-LABEL: func.func @gelu_torch_with_bias
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[B:.*]]: tensor<64xf32>)
//       CHECK: %[[XB:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[B]] : tensor<4x64xf32>, tensor<64xf32>)
//       CHECK:   arith.addf
//   CHECK-NOT:   math.erf
//       CHECK: fusion.act_quantize #fusion.act<gelu> %[[XB]] as quant<mxfp8_e4m3, rowwise> via bf16 outs({{.*}}) : (tensor<4x64xf32>,
func.func @gelu_torch_with_bias(%x: !xf, %b: tensor<64xf32>) -> (!d, !s) {
  %init = tensor.empty() : !xf
  %xb = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : !xf, tensor<64xf32>) outs(%init : !xf) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> !xf
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xb : !xf) outs(%init : !xf) {
  ^bb0(%in: f32, %out: f32):
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %c2 = arith.constant 2.0 : f32
    %ch = arith.constant 0.5 : f32
    %s2 = math.sqrt %c2 : f32
    %xm = arith.subf %in, %c0 : f32
    %xd = arith.divf %xm, %s2 : f32
    %er = math.erf %xd : f32
    %a = arith.addf %c1, %er : f32
    %h = arith.mulf %ch, %a : f32
    %r = arith.mulf %in, %h : f32
    linalg.yield %r : f32
  } -> !xf
  %t = arith.truncf %y : !xf to !x
  %dst14 = tensor.empty() : !d
  %dst15 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused gelu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %t as quant<mxfp8_e4m3, rowwise> outs(%dst14, %dst15)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// 0.5 * x * (1 + erf(x * 0.70710678)) on tensors, splat constants.
// CHECK-LABEL: func.func @gelu_arith
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
//       CHECK: fusion.act_quantize #fusion.act<gelu> %[[X]]
func.func @gelu_arith(%x: !xf) -> (!d, !s) {
  %k = arith.constant dense<0.70710678> : !xf
  %half = arith.constant dense<0.5> : !xf
  %one = arith.constant dense<1.0> : !xf
  %xs = arith.mulf %x, %k : !xf
  %er = math.erf %xs : !xf
  %a = arith.addf %er, %one : !xf
  %hx = arith.mulf %half, %x : !xf
  %y = arith.mulf %hx, %a : !xf
  %dst16 = tensor.empty() : !d
  %dst17 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused gelu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst16, %dst17)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// Named linalg ops, distributed: x*0.5 + (x*0.5) * erf(x / sqrt2).
// CHECK-LABEL: func.func @gelu_named_linalg_distributed
//       CHECK: fusion.act_quantize #fusion.act<gelu>
func.func @gelu_named_linalg_distributed(%x: !xf) -> (!d, !s) {
  %init = tensor.empty() : !xf
  %c = arith.constant 1.41421356 : f32
  %ch = arith.constant 0.5 : f32
  %sq = linalg.fill ins(%c : f32) outs(%init : !xf) -> !xf
  %hf = linalg.fill ins(%ch : f32) outs(%init : !xf) -> !xf
  %xd = linalg.div ins(%x, %sq : !xf, !xf) outs(%init : !xf) -> !xf
  %er = linalg.erf ins(%xd : !xf) outs(%init : !xf) -> !xf
  %hx = linalg.mul ins(%x, %hf : !xf, !xf) outs(%init : !xf) -> !xf
  %p = linalg.mul ins(%hx, %er : !xf, !xf) outs(%init : !xf) -> !xf
  %y = linalg.add ins(%hx, %p : !xf, !xf) outs(%init : !xf) -> !xf
  %dst18 = tensor.empty() : !d
  %dst19 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused gelu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst18, %dst19)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// JAX's exact GELU: x * erfc(-x / sqrt(2)) / 2.
// CHECK-LABEL: func.func @gelu_jax_erfc
//       CHECK: fusion.act_quantize #fusion.act<gelu>
func.func @gelu_jax_erfc(%x: !xf) -> (!d, !s) {
  %k = arith.constant dense<-0.70710678> : !xf
  %two = arith.constant dense<2.0> : !xf
  %xs = arith.mulf %x, %k : !xf
  %ec = math.erfc %xs : !xf
  %p = arith.mulf %x, %ec : !xf
  %y = arith.divf %p, %two : !xf
  %dst20 = tensor.empty() : !d
  %dst21 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused gelu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst20, %dst21)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

//===----------------------------------------------------------------------===//
// gelu_tanh
//===----------------------------------------------------------------------===//

/// torch-mlir's tanh GELU: fpowi x^3 and its constant 0.7977240352174656
/// (not sqrt(2/pi) = 0.79788456...; accepted within the tolerance).
// CHECK-LABEL: func.func @gelu_tanh_torch
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>)
//       CHECK: fusion.act_quantize #fusion.act<gelu_tanh> %[[X]] as quant<mxfp8_e4m3, rowwise> via bf16
func.func @gelu_tanh_torch(%x: !x) -> (!d, !s) {
  %init = tensor.empty() : !x
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%init : !x) {
  ^bb0(%in: bf16, %out: bf16):
    %f = arith.extf %in : bf16 to f32
    %c3 = arith.constant 3 : i32
    %cube = math.fpowi %f, %c3 : f32, i32
    %kk = arith.constant 0.044715 : f32
    %kb = arith.constant 0.7977240352174656 : f32
    %c1 = arith.constant 1.0 : f32
    %ch = arith.constant 0.5 : f32
    %t1 = arith.mulf %cube, %kk : f32
    %inner = arith.addf %f, %t1 : f32
    %arg = arith.mulf %kb, %inner : f32
    %th = math.tanh %arg : f32
    %a = arith.addf %th, %c1 : f32
    %hx = arith.mulf %f, %ch : f32
    %r = arith.mulf %hx, %a : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> !x
  %dst22 = tensor.empty() : !d
  %dst23 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused gelu_tanh and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst22, %dst23)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// TransformerEngine's form: c * (0.5 + 0.5 * tanh(c * (0.79788456 +
/// 0.03567741 * c * c))), on tensors.
// CHECK-LABEL: func.func @gelu_tanh_te
//       CHECK: fusion.act_quantize #fusion.act<gelu_tanh>
func.func @gelu_tanh_te(%x: !xf) -> (!d, !s) {
  %k0 = arith.constant dense<0.79788456> : !xf
  %k1 = arith.constant dense<0.03567741> : !xf
  %h = arith.constant dense<0.5> : !xf
  %xx = arith.mulf %x, %x : !xf
  %a = arith.mulf %k1, %xx : !xf
  %b = arith.addf %k0, %a : !xf
  %c = arith.mulf %x, %b : !xf
  %t = math.tanh %c : !xf
  %ht = arith.mulf %h, %t : !xf
  %s = arith.addf %h, %ht : !xf
  %y = arith.mulf %x, %s : !xf
  %dst24 = tensor.empty() : !d
  %dst25 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused gelu_tanh and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst24, %dst25)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// The sigmoid form x * sigmoid(1.5957691 * (x + 0.044715 * x^3)).
// CHECK-LABEL: func.func @gelu_tanh_sigmoid_form
//       CHECK: fusion.act_quantize #fusion.act<gelu_tanh>
func.func @gelu_tanh_sigmoid_form(%x: !xf) -> (!d, !s) {
  %init = tensor.empty() : !xf
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !xf) outs(%init : !xf) {
  ^bb0(%in: f32, %out: f32):
    %c3 = arith.constant 3.0 : f32
    %cube = math.powf %in, %c3 : f32
    %kk = arith.constant 0.044715 : f32
    %k2 = arith.constant -1.5957691 : f32
    %c1 = arith.constant 1.0 : f32
    %t1 = arith.mulf %kk, %cube : f32
    %inner = arith.addf %t1, %in : f32
    %arg = arith.mulf %inner, %k2 : f32
    %e = math.exp %arg : f32
    %den = arith.addf %c1, %e : f32
    %r = arith.divf %in, %den : f32
    linalg.yield %r : f32
  } -> !xf
  %dst26 = tensor.empty() : !d
  %dst27 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused gelu_tanh and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst26, %dst27)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

//===----------------------------------------------------------------------===//
// relu, srelu, qgelu, identity
//===----------------------------------------------------------------------===//

/// arith.maximumf(x, 0) on tensors.
// CHECK-LABEL: func.func @relu_maximumf
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>)
//       CHECK: fusion.act_quantize #fusion.act<relu> %[[X]] as quant<mxfp8_e4m3, rowwise> via bf16
func.func @relu_maximumf(%x: !x) -> (!d, !s) {
  %z = arith.constant dense<0.0> : !x
  %y = arith.maximumf %z, %x : !x
  %dst28 = tensor.empty() : !d
  %dst29 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused relu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst28, %dst29)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// select(x > 0, x, 0) in a generic.
// CHECK-LABEL: func.func @relu_select
//       CHECK: fusion.act_quantize #fusion.act<relu>
func.func @relu_select(%x: !xf) -> (!d, !s) {
  %init = tensor.empty() : !xf
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !xf) outs(%init : !xf) {
  ^bb0(%in: f32, %out: f32):
    %c0 = arith.constant 0.0 : f32
    %p = arith.cmpf ugt, %in, %c0 : f32
    %r = arith.select %p, %in, %c0 : f32
    linalg.yield %r : f32
  } -> !xf
  %dst30 = tensor.empty() : !d
  %dst31 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused relu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst30, %dst31)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// select(x < 0, 0, x) (the other orientation, >= at zero) with linalg.max
/// left for a different spelling below.
// CHECK-LABEL: func.func @relu_select_lt
//       CHECK: fusion.act_quantize #fusion.act<relu>
func.func @relu_select_lt(%x: !xf) -> (!d, !s) {
  %z = arith.constant dense<0.0> : !xf
  %p = arith.cmpf olt, %x, %z : !xf
  %y = arith.select %p, %z, %x : tensor<4x64xi1>, !xf
  %dst32 = tensor.empty() : !d
  %dst33 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused relu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst32, %dst33)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// linalg.max with a zero fill.
// CHECK-LABEL: func.func @relu_linalg_max
//       CHECK: fusion.act_quantize #fusion.act<relu>
func.func @relu_linalg_max(%x: !xf) -> (!d, !s) {
  %init = tensor.empty() : !xf
  %c0 = arith.constant 0.0 : f32
  %z = linalg.fill ins(%c0 : f32) outs(%init : !xf) -> !xf
  %y = linalg.max ins(%x, %z : !xf, !xf) outs(%init : !xf) -> !xf
  %dst34 = tensor.empty() : !d
  %dst35 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused relu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst34, %dst35)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// relu(x) * relu(x).
// CHECK-LABEL: func.func @srelu_square_of_relu
//       CHECK: fusion.act_quantize #fusion.act<srelu>
func.func @srelu_square_of_relu(%x: !xf) -> (!d, !s) {
  %z = arith.constant dense<0.0> : !xf
  %r = arith.maximumf %x, %z : !xf
  %y = arith.mulf %r, %r : !xf
  %dst36 = tensor.empty() : !d
  %dst37 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused srelu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst36, %dst37)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// select(x > 0, x * x, 0).
// CHECK-LABEL: func.func @srelu_select
//       CHECK: fusion.act_quantize #fusion.act<srelu>
func.func @srelu_select(%x: !xf) -> (!d, !s) {
  %init = tensor.empty() : !xf
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !xf) outs(%init : !xf) {
  ^bb0(%in: f32, %out: f32):
    %c0 = arith.constant 0.0 : f32
    %p = arith.cmpf ogt, %in, %c0 : f32
    %sq = arith.mulf %in, %in : f32
    %r = arith.select %p, %sq, %c0 : f32
    linalg.yield %r : f32
  } -> !xf
  %dst38 = tensor.empty() : !d
  %dst39 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused srelu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst38, %dst39)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// x * sigmoid(1.702 * x).
// CHECK-LABEL: func.func @qgelu
//       CHECK: fusion.act_quantize #fusion.act<qgelu> %{{.*}} as
func.func @qgelu(%x: !xf) -> (!d, !s) {
  %a = arith.constant dense<1.702> : !xf
  %one = arith.constant dense<1.0> : !xf
  %ax = arith.mulf %a, %x : !xf
  %n = arith.negf %ax : !xf
  %e = math.exp %n : !xf
  %den = arith.addf %e, %one : !xf
  %sig = arith.divf %one, %den : !xf
  %y = arith.mulf %x, %sig : !xf
  %dst40 = tensor.empty() : !d
  %dst41 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused qgelu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst40, %dst41)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// x * sigmoid(2x) looks like silu but is not: it is the quick-GELU family
/// with slope 2, which the runtime computes exactly (alpha = 2).
// CHECK-LABEL: func.func @silu_lookalike_sigmoid_2x_is_qgelu
//   CHECK-NOT: #fusion.act<silu>
//       CHECK: fusion.act_quantize #fusion.act<qgelu, alpha = 2.0{{0*}}{{(e\+00)?}}>
func.func @silu_lookalike_sigmoid_2x_is_qgelu(%x: !xf) -> (!d, !s) {
  %two = arith.constant dense<2.0> : !xf
  %one = arith.constant dense<1.0> : !xf
  %ax = arith.mulf %x, %two : !xf
  %n = arith.negf %ax : !xf
  %e = math.exp %n : !xf
  %den = arith.addf %e, %one : !xf
  %y = arith.divf %x, %den : !xf
  %dst42 = tensor.empty() : !d
  %dst43 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused qgelu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst42, %dst43)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// A cast to bf16 before the quantizer: identity, rounded via bf16.
// CHECK-LABEL: func.func @identity_cast
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
//       CHECK: fusion.act_quantize #fusion.act<identity> %[[X]] as quant<mxfp8_e4m3, rowwise> via bf16 outs({{.*}}) : (tensor<4x64xf32>,
func.func @identity_cast(%x: !xf) -> (!d, !s) {
  %t = arith.truncf %x : !xf to !x
  %dst44 = tensor.empty() : !d
  %dst45 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused identity and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %t as quant<mxfp8_e4m3, rowwise> outs(%dst44, %dst45)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// Rank 3 (collapsed onto rows by the runtime) with FP8 per-tensor scaling.
// CHECK-LABEL: func.func @gelu_tanh_rank3_fp8
//       CHECK: fusion.act_quantize #fusion.act<gelu_tanh> %{{.*}} as quant<fp8_e4m3, rowwise
func.func @gelu_tanh_rank3_fp8(%x: tensor<2x4x64xf32>) -> (tensor<2x4x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) {
  %k0 = arith.constant dense<0.7978845608> : tensor<2x4x64xf32>
  %k1 = arith.constant dense<0.044715> : tensor<2x4x64xf32>
  %h = arith.constant dense<0.5> : tensor<2x4x64xf32>
  %one = arith.constant dense<1.0> : tensor<2x4x64xf32>
  %x2 = arith.mulf %x, %x : tensor<2x4x64xf32>
  %x3 = arith.mulf %x2, %x : tensor<2x4x64xf32>
  %a = arith.mulf %k1, %x3 : tensor<2x4x64xf32>
  %b = arith.addf %x, %a : tensor<2x4x64xf32>
  %c = arith.mulf %k0, %b : tensor<2x4x64xf32>
  %t = math.tanh %c : tensor<2x4x64xf32>
  %s = arith.addf %one, %t : tensor<2x4x64xf32>
  %hx = arith.mulf %h, %x : tensor<2x4x64xf32>
  %y = arith.mulf %hx, %s : tensor<2x4x64xf32>
  %dst46 = tensor.empty() : tensor<2x4x64xf8E4M3FN>
  %dst47 = tensor.empty() : tensor<1xf32>
  %dst48 = tensor.empty() : tensor<1xf32>
  // expected-remark @below {{Remark="fused gelu_tanh and quantize into fusion.act_quantize"}}
  %q:3 = fusion.quantize %y as quant<fp8_e4m3, rowwise, block = tensor> outs(%dst46, %dst47, %dst48)
      : (tensor<2x4x64xf32>, tensor<2x4x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<2x4x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return %q#0, %q#1, %q#2 : tensor<2x4x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>
}

/// A rowwise and a colwise quantizer of one activation (the copies the
/// forward and the backward GEMMs read) become one fused op with direction
/// both: the activation is computed once and both copies written in one pass.
// CHECK-LABEL: func.func @gelu_tanh_rowwise_and_colwise
//  CHECK-SAME: (%[[X:.*]]: tensor<64x64xbf16>)
//       CHECK: %[[Q:.*]]:4 = fusion.act_quantize #fusion.act<gelu_tanh> %[[X]] as quant<mxfp8_e4m3, both> via bf16 outs({{.*}}) : (tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<64x64xf8E4M3FN>, tensor<2x64xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<64x64xf8E4M3FN>, tensor<2x64xf8E8M0FNU>)
//   CHECK-NOT: fusion.quantize
//       CHECK: return %[[Q]]#2, %[[Q]]#3, %[[Q]]#0, %[[Q]]#1
func.func @gelu_tanh_rowwise_and_colwise(%x: tensor<64x64xbf16>) -> (tensor<64x64xf8E4M3FN>, tensor<2x64xf8E8M0FNU>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) {
  %xf = arith.extf %x : tensor<64x64xbf16> to tensor<64x64xf32>
  %k0 = arith.constant dense<0.7978845608> : tensor<64x64xf32>
  %k1 = arith.constant dense<0.044715> : tensor<64x64xf32>
  %h = arith.constant dense<0.5> : tensor<64x64xf32>
  %one = arith.constant dense<1.0> : tensor<64x64xf32>
  %x2 = arith.mulf %xf, %xf : tensor<64x64xf32>
  %x3 = arith.mulf %x2, %xf : tensor<64x64xf32>
  %a = arith.mulf %k1, %x3 : tensor<64x64xf32>
  %b = arith.addf %xf, %a : tensor<64x64xf32>
  %c = arith.mulf %k0, %b : tensor<64x64xf32>
  %t = math.tanh %c : tensor<64x64xf32>
  %s = arith.addf %one, %t : tensor<64x64xf32>
  %hx = arith.mulf %h, %xf : tensor<64x64xf32>
  %y = arith.mulf %hx, %s : tensor<64x64xf32>
  %yb = arith.truncf %y : tensor<64x64xf32> to tensor<64x64xbf16>
  %dst49 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst50 = tensor.empty() : tensor<2x64xf8E8M0FNU>
  // expected-remark @below {{Remark="fused gelu_tanh and quantize into fusion.act_quantize (rowwise and colwise quantizers as direction both)"}}
  %col:2 = fusion.quantize %yb as quant<mxfp8_e4m3, colwise> outs(%dst49, %dst50)
      : (tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<2x64xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<2x64xf8E8M0FNU>)
  %dst51 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst52 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  // expected-remark @below {{Remark="fused gelu_tanh and quantize into fusion.act_quantize (rowwise and colwise quantizers as direction both)"}}
  %row:2 = fusion.quantize %yb as quant<mxfp8_e4m3, rowwise> outs(%dst51, %dst52)
      : (tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>)
  return %col#0, %col#1, %row#0, %row#1 : tensor<64x64xf8E4M3FN>, tensor<2x64xf8E8M0FNU>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
}

//===----------------------------------------------------------------------===//
// Declined candidates
//===----------------------------------------------------------------------===//

/// The activation value is also returned: fusing would lose it.
// CHECK-LABEL: func.func @negative_extra_consumer
//       CHECK: linalg.generic
//       CHECK: fusion.quantize
//   CHECK-NOT: fusion.act_quantize
func.func @negative_extra_consumer(%x: !xf) -> (!d, !s, !xf) {
  %z = arith.constant dense<0.0> : !xf
  %y = arith.maximumf %x, %z : !xf
  %dst53 = tensor.empty() : !d
  %dst54 = tensor.empty() : !s
  // expected-remark @below {{[Missed] FuseActQuantize | Category:fusion | Function=negative_extra_consumer | Reason="activation has another user"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst53, %dst54)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1, %y : !d, !s, !xf
}

/// tanh(x) is not an activation the runtime fuses.
// CHECK-LABEL: func.func @negative_unsupported_tanh
//       CHECK: fusion.quantize
func.func @negative_unsupported_tanh(%x: !xf) -> (!d, !s) {
  %y = math.tanh %x : !xf
  %dst55 = tensor.empty() : !d
  %dst56 = tensor.empty() : !s
  // expected-remark @below {{Reason="unsupported activation"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst55, %dst56)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// x * sigmoid(x + 1) looks like silu but shifts the sigmoid.
// CHECK-LABEL: func.func @negative_silu_lookalike_shifted_sigmoid
//       CHECK: fusion.quantize
func.func @negative_silu_lookalike_shifted_sigmoid(%x: !xf) -> (!d, !s) {
  %one = arith.constant dense<1.0> : !xf
  %x1 = arith.addf %x, %one : !xf
  %n = arith.negf %x1 : !xf
  %e = math.exp %n : !xf
  %den = arith.addf %e, %one : !xf
  %y = arith.divf %x, %den : !xf
  %dst57 = tensor.empty() : !d
  %dst58 = tensor.empty() : !s
  // expected-remark @below {{Reason="unsupported activation"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst57, %dst58)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// x * sigmoid(y) with two different tensors is GLU (sigmoid gate), which
/// the runtime does not have.
// CHECK-LABEL: func.func @negative_glu_sigmoid_gate
//       CHECK: fusion.quantize
func.func @negative_glu_sigmoid_gate(%x: !xf, %g: !xf) -> (!d, !s) {
  %one = arith.constant dense<1.0> : !xf
  %n = arith.negf %g : !xf
  %e = math.exp %n : !xf
  %den = arith.addf %e, %one : !xf
  %y = arith.divf %x, %den : !xf
  %dst59 = tensor.empty() : !d
  %dst60 = tensor.empty() : !s
  // expected-remark @below {{Reason="unsupported activation"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst59, %dst60)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// The activation input is f64: the runtime reads bf16, f16 or f32 only.
// CHECK-LABEL: func.func @negative_f64_input
//       CHECK: fusion.quantize
func.func @negative_f64_input(%x: tensor<4x64xf64>) -> (!d, !s) {
  %z = arith.constant dense<0.0> : tensor<4x64xf64>
  %r = arith.maximumf %x, %z : tensor<4x64xf64>
  %y = arith.truncf %r : tensor<4x64xf64> to !xf
  %dst61 = tensor.empty() : !d
  %dst62 = tensor.empty() : !s
  // expected-remark @below {{Reason="unsupported input element type"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst61, %dst62)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// Rank 5: the runtime's tensor views have rank 4 at most.
// CHECK-LABEL: func.func @negative_rank5
//       CHECK: fusion.quantize
func.func @negative_rank5(%x: tensor<1x1x2x4x64xf32>) -> (tensor<1x1x2x4x64xf8E4M3FN>, tensor<1x1x2x4x2xf8E8M0FNU>) {
  %z = arith.constant dense<0.0> : tensor<1x1x2x4x64xf32>
  %y = arith.maximumf %x, %z : tensor<1x1x2x4x64xf32>
  %dst63 = tensor.empty() : tensor<1x1x2x4x64xf8E4M3FN>
  %dst64 = tensor.empty() : tensor<1x1x2x4x2xf8E8M0FNU>
  // expected-remark @below {{Reason="unsupported shape"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst63, %dst64)
      : (tensor<1x1x2x4x64xf32>, tensor<1x1x2x4x64xf8E4M3FN>, tensor<1x1x2x4x2xf8E8M0FNU>) -> (tensor<1x1x2x4x64xf8E4M3FN>, tensor<1x1x2x4x2xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<1x1x2x4x64xf8E4M3FN>, tensor<1x1x2x4x2xf8E8M0FNU>
}

/// A quantizer of a function argument has nothing to fuse.
// CHECK-LABEL: func.func @negative_no_activation
//       CHECK: fusion.quantize
func.func @negative_no_activation(%x: !x) -> (!d, !s) {
  %dst65 = tensor.empty() : !d
  %dst66 = tensor.empty() : !s
  // expected-remark @below {{Reason="no activation to fuse"}}
  %q:2 = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%dst65, %dst66)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// The graph rounds the activation to bf16 and widens it again before the
/// quantizer: the fused op rounds via bf16 (the narrowest type on the way).
// CHECK-LABEL: func.func @silu_rounded_then_widened
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
//       CHECK: fusion.act_quantize #fusion.act<silu> %[[X]] as quant<mxfp8_e4m3, rowwise> via bf16 outs({{.*}}) : (tensor<4x64xf32>,
func.func @silu_rounded_then_widened(%x: !xf) -> (!d, !s) {
  %one = arith.constant dense<1.0> : !xf
  %n = arith.negf %x : !xf
  %e = math.exp %n : !xf
  %den = arith.addf %one, %e : !xf
  %y = arith.divf %x, %den : !xf
  %t = arith.truncf %y : !xf to !x
  %w = arith.extf %t : !x to !xf
  %dst67 = tensor.empty() : !d
  %dst68 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %w as quant<mxfp8_e4m3, rowwise> outs(%dst67, %dst68)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// x * sigmoid(1.7 x): the slope is kept exactly (qgelu's default is 1.702).
// CHECK-LABEL: func.func @qgelu_slope_kept_exactly
//       CHECK: fusion.act_quantize #fusion.act<qgelu, alpha = 1.7{{0*}}{{.*}}>
func.func @qgelu_slope_kept_exactly(%x: !xf) -> (!d, !s) {
  %a = arith.constant dense<-1.7> : !xf
  %one = arith.constant dense<1.0> : !xf
  %ax = arith.mulf %a, %x : !xf
  %e = math.exp %ax : !xf
  %den = arith.addf %e, %one : !xf
  %y = arith.divf %x, %den : !xf
  %dst69 = tensor.empty() : !d
  %dst70 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused qgelu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst69, %dst70)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// linalg.elementwise exp and a linalg.map body x * e / (e + 1).
// CHECK-LABEL: func.func @silu_linalg_map
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
//       CHECK: fusion.act_quantize #fusion.act<silu> %[[X]]
func.func @silu_linalg_map(%x: !xf) -> (!d, !s) {
  %init = tensor.empty() : !xf
  %e = linalg.elementwise kind=#linalg.elementwise_kind<exp> ins(%x : !xf) outs(%init : !xf) -> !xf
  %y = linalg.map ins(%x, %e : !xf, !xf) outs(%init : !xf)
    (%a: f32, %b: f32, %o: f32) {
      %c1 = arith.constant 1.0 : f32
      %d = arith.addf %b, %c1 : f32
      %s = arith.divf %b, %d : f32
      %r = arith.mulf %a, %s : f32
      linalg.yield %r : f32
    }
  %dst71 = tensor.empty() : !d
  %dst72 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst71, %dst72)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

//===----------------------------------------------------------------------===//
// sigmoid written through its reflection
//===----------------------------------------------------------------------===//

/// sigmoid(x) written as 1 - sigmoid(-x) = 1 - 1 / (1 + exp(x)) inside silu.
// CHECK-LABEL: func.func @silu_one_minus_sigmoid_of_neg
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
//       CHECK: fusion.act_quantize #fusion.act<silu> %[[X]] as quant<mxfp8_e4m3, rowwise> via f32
//   CHECK-NOT: fusion.quantize
func.func @silu_one_minus_sigmoid_of_neg(%x: !xf) -> (!d, !s) {
  %one = arith.constant dense<1.0> : !xf
  %e = math.exp %x : !xf
  %den = arith.addf %one, %e : !xf
  %sn = arith.divf %one, %den : !xf
  %sig = arith.subf %one, %sn : !xf
  %y = arith.mulf %x, %sig : !xf
  %dst0 = tensor.empty() : !d
  %dst1 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// Near miss: x * (1 - sigmoid(x)) is x * sigmoid(-x), not silu.
// CHECK-LABEL: func.func @negative_silu_one_minus_sigmoid
//       CHECK: fusion.quantize
//   CHECK-NOT: fusion.act_quantize
func.func @negative_silu_one_minus_sigmoid(%x: !xf) -> (!d, !s) {
  %one = arith.constant dense<1.0> : !xf
  %n = arith.negf %x : !xf
  %e = math.exp %n : !xf
  %den = arith.addf %one, %e : !xf
  %sp = arith.divf %one, %den : !xf
  %sig = arith.subf %one, %sp : !xf
  %y = arith.mulf %x, %sig : !xf
  %dst2 = tensor.empty() : !d
  %dst3 = tensor.empty() : !s
  // expected-remark @below {{Reason="unsupported activation", Remark="the body matches no supported activation form"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst2, %dst3)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}
