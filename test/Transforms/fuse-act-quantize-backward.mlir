// RUN: fusion-opt %s --fusion-act-quantize-pipeline | FileCheck %s
// RUN: fusion-opt %s --fusion-act-quantize-pipeline --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --fusion-act-quantize-pipeline -o %t.once.mlir
// RUN: fusion-opt %t.once.mlir --fusion-fuse-act-quantize -o %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// Backward activations grad * act'(x), as the autograd decompositions write
// them, and the dbias reduction (column sums of the quantized value).

#id = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>
!x = tensor<4x64xbf16>
!xf = tensor<4x64xf32>
!d = tensor<4x64xf8E4M3FN>
!s = tensor<4x2xf8E8M0FNU>

/// torch's threshold_backward: select(x <= 0, 0, grad) is +0 where x <= 0,
/// where TE's grad * drelu(x) gives -0 for a negative grad: `mask = select`.
// CHECK-LABEL: func.func @drelu_threshold_backward
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>, %[[DY:.*]]: tensor<4x64xbf16>)
//       CHECK: fusion.act_quantize #fusion.act<drelu, mask = select> %[[X]] grad %[[DY]] as quant<mxfp8_e4m3, rowwise> via bf16
func.func @drelu_threshold_backward(%x: !x, %dy: !x) -> (!d, !s) {
  %z = arith.constant dense<0.0> : !x
  %p = arith.cmpf ole, %x, %z : !x
  %y = arith.select %p, %z, %dy : tensor<4x64xi1>, !x
  %dst0 = tensor.empty() : !d
  %dst1 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused drelu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// torch's gelu_backward (exact): grad * (cdf + x * pdf).
// CHECK-LABEL: func.func @dgelu_erf
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>, %[[DY:.*]]: tensor<4x64xbf16>)
//       CHECK: fusion.act_quantize #fusion.act<dgelu> %[[X]] grad %[[DY]] as quant<mxfp8_e4m3, rowwise> via bf16
func.func @dgelu_erf(%x: !x, %dy: !x) -> (!d, !s) {
  %init = tensor.empty() : !x
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %dy : !x, !x) outs(%init : !x) {
  ^bb0(%xi: bf16, %gi: bf16, %out: bf16):
    %f = arith.extf %xi : bf16 to f32
    %g = arith.extf %gi : bf16 to f32
    %ka = arith.constant 0.70710678118654757 : f32
    %kb = arith.constant 0.3989422804014327 : f32
    %c1 = arith.constant 1.0 : f32
    %ch = arith.constant 0.5 : f32
    %cmh = arith.constant -0.5 : f32
    %xa = arith.mulf %f, %ka : f32
    %er = math.erf %xa : f32
    %a = arith.addf %c1, %er : f32
    %cdf = arith.mulf %ch, %a : f32
    %xx = arith.mulf %f, %f : f32
    %xxh = arith.mulf %xx, %cmh : f32
    %ex = math.exp %xxh : f32
    %pdf = arith.mulf %kb, %ex : f32
    %xpdf = arith.mulf %f, %pdf : f32
    %sum = arith.addf %cdf, %xpdf : f32
    %r = arith.mulf %g, %sum : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> !x
  %dst2 = tensor.empty() : !d
  %dst3 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused dgelu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst2, %dst3)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// torch's gelu_backward (tanh), on tensors.
// CHECK-LABEL: func.func @dgelu_tanh_torch
//       CHECK: fusion.act_quantize #fusion.act<dgelu_tanh> %{{.*}} grad %{{.*}} as
func.func @dgelu_tanh_torch(%x: !xf, %dy: !xf) -> (!d, !s) {
  %kb = arith.constant dense<0.7978845608028654> : !xf
  %kk = arith.constant dense<0.044715> : !xf
  %k3 = arith.constant dense<3.0> : !xf
  %one = arith.constant dense<1.0> : !xf
  %h = arith.constant dense<0.5> : !xf
  %x2 = arith.mulf %x, %x : !xf
  %x3 = arith.mulf %x2, %x : !xf
  %a = arith.mulf %kk, %x3 : !xf
  %b = arith.addf %x, %a : !xf
  %inner = arith.mulf %kb, %b : !xf
  %t = math.tanh %inner : !xf
  %left = arith.mulf %h, %x : !xf
  %right = arith.addf %one, %t : !xf
  %ld = arith.mulf %h, %right : !xf
  %tt = arith.mulf %t, %t : !xf
  %rd = arith.subf %one, %tt : !xf
  %k3k = arith.mulf %k3, %kk : !xf
  %k3kx2 = arith.mulf %k3k, %x2 : !xf
  %id0 = arith.addf %one, %k3kx2 : !xf
  %id = arith.mulf %kb, %id0 : !xf
  %p0 = arith.mulf %left, %rd : !xf
  %p1 = arith.mulf %p0, %id : !xf
  %sum = arith.addf %ld, %p1 : !xf
  %y = arith.mulf %dy, %sum : !xf
  %dst4 = tensor.empty() : !d
  %dst5 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused dgelu_tanh and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst4, %dst5)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// torch's silu_backward: grad * sigmoid * (1 + x * (1 - sigmoid)), with
/// dynamic shapes.
// CHECK-LABEL: func.func @dsilu_dynamic
//  CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[DY:.*]]: tensor<?x64xf32>)
//       CHECK: fusion.act_quantize #fusion.act<dsilu> %[[X]] grad %[[DY]] as quant<mxfp8_e4m3, rowwise> via f32 outs({{.*}}) : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>) -> (tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>)
func.func @dsilu_dynamic(%x: tensor<?x64xf32>, %dy: tensor<?x64xf32>) -> (tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x64xf32>
  %init = tensor.empty(%m) : tensor<?x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %dy : tensor<?x64xf32>, tensor<?x64xf32>) outs(%init : tensor<?x64xf32>) {
  ^bb0(%xi: f32, %g: f32, %out: f32):
    %c1 = arith.constant 1.0 : f32
    %n = arith.negf %xi : f32
    %e = math.exp %n : f32
    %den = arith.addf %c1, %e : f32
    %sig = arith.divf %c1, %den : f32
    %oms = arith.subf %c1, %sig : f32
    %xo = arith.mulf %xi, %oms : f32
    %a = arith.addf %c1, %xo : f32
    %gs = arith.mulf %g, %sig : f32
    %r = arith.mulf %gs, %a : f32
    linalg.yield %r : f32
  } -> tensor<?x64xf32>
  %dst_c0 = arith.constant 0 : index
  %dst_m = tensor.dim %y, %dst_c0 : tensor<?x64xf32>
  %dst6 = tensor.empty(%dst_m) : tensor<?x64xf8E4M3FN>
  %dst7 = tensor.empty(%dst_m) : tensor<?x2xf8E8M0FNU>
  // expected-remark @below {{Remark="fused dsilu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst6, %dst7)
      : (tensor<?x64xf32>, tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>) -> (tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>
}

/// Squared relu backward: grad * 2 * relu(x) (a product: -0 for a negative
/// grad where x <= 0, as the runtime's default mask).
// CHECK-LABEL: func.func @dsrelu
//       CHECK: fusion.act_quantize #fusion.act<dsrelu> %
func.func @dsrelu(%x: !xf, %dy: !xf) -> (!d, !s) {
  %z = arith.constant dense<0.0> : !xf
  %two = arith.constant dense<2.0> : !xf
  %r = arith.maximumf %x, %z : !xf
  %r2 = arith.mulf %two, %r : !xf
  %y = arith.mulf %r2, %dy : !xf
  %dst8 = tensor.empty() : !d
  %dst9 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused dsrelu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst8, %dst9)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// TransformerEngine's dqgelu: grad * (alpha x s (1 - s) + s), s = sigmoid(alpha x).
// CHECK-LABEL: func.func @dqgelu
//       CHECK: fusion.act_quantize #fusion.act<dqgelu>
func.func @dqgelu(%x: !xf, %dy: !xf) -> (!d, !s) {
  %al = arith.constant dense<1.702> : !xf
  %one = arith.constant dense<1.0> : !xf
  %ax = arith.mulf %al, %x : !xf
  %n = arith.negf %ax : !xf
  %e = math.exp %n : !xf
  %den = arith.addf %one, %e : !xf
  %s = arith.divf %one, %den : !xf
  %oms = arith.subf %one, %s : !xf
  %t0 = arith.mulf %ax, %s : !xf
  %t1 = arith.mulf %t0, %oms : !xf
  %dact = arith.addf %t1, %s : !xf
  %y = arith.mulf %dy, %dact : !xf
  %dst10 = tensor.empty() : !d
  %dst11 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused dqgelu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst10, %dst11)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

//===----------------------------------------------------------------------===//
// dbias
//===----------------------------------------------------------------------===//

/// dgelu_tanh (TransformerEngine's form) whose result is quantized and
/// summed over rows by a linalg.reduce in f32.
// CHECK-LABEL: func.func @dgelu_tanh_dbias_reduce
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>, %[[DY:.*]]: tensor<4x64xbf16>)
//       CHECK: %[[Q:.*]]:3 = fusion.act_quantize #fusion.act<dgelu_tanh> %[[X]] grad %[[DY]] as quant<mxfp8_e4m3, rowwise> via bf16 dbias outs({{.*}}) : (tensor<4x64xbf16>, tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>, tensor<64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>, tensor<64xf32>)
//   CHECK-NOT: linalg.reduce
//       CHECK: return %[[Q]]#0, %[[Q]]#1, %[[Q]]#2
func.func @dgelu_tanh_dbias_reduce(%x: !x, %dy: !x) -> (!d, !s, tensor<64xf32>) {
  %init = tensor.empty() : !x
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %dy : !x, !x) outs(%init : !x) {
  ^bb0(%xi: bf16, %gi: bf16, %out: bf16):
    %c = arith.extf %xi : bf16 to f32
    %g = arith.extf %gi : bf16 to f32
    %k0 = arith.constant 0.79788456 : f32
    %k1 = arith.constant 0.044715 : f32
    %k2 = arith.constant 0.1070322243 : f32
    %c1 = arith.constant 1.0 : f32
    %ch = arith.constant 0.5 : f32
    %cc = arith.mulf %c, %c : f32
    %a = arith.mulf %k1, %cc : f32
    %b = arith.addf %c1, %a : f32
    %kc = arith.mulf %k0, %c : f32
    %arg = arith.mulf %kc, %b : f32
    %t = math.tanh %arg : f32
    %tt = arith.mulf %t, %t : f32
    %sech = arith.subf %c1, %tt : f32
    %p = arith.mulf %k2, %cc : f32
    %q0 = arith.addf %k0, %p : f32
    %q1 = arith.mulf %sech, %q0 : f32
    %hc = arith.mulf %ch, %c : f32
    %l = arith.mulf %hc, %q1 : f32
    %opt = arith.addf %c1, %t : f32
    %r0 = arith.mulf %ch, %opt : f32
    %dact = arith.addf %l, %r0 : f32
    %r = arith.mulf %g, %dact : f32
    %tr = arith.truncf %r : f32 to bf16
    linalg.yield %tr : bf16
  } -> !x
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %db = linalg.reduce ins(%y : !x) outs(%acc : tensor<64xf32>) dimensions = [0]
    (%in: bf16, %sum: f32) {
      %inf = arith.extf %in : bf16 to f32
      %n = arith.addf %sum, %inf : f32
      linalg.yield %n : f32
    }
  %dst12 = tensor.empty() : !d
  %dst13 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused dgelu_tanh and quantize into fusion.act_quantize with dbias"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst12, %dst13)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1, %db : !d, !s, tensor<64xf32>
}

/// quantize + dbias of a gradient that no activation produced: identity
/// with dbias (TransformerEngine's quantize_dbias); the reduction is a
/// linalg.generic written before the quantizer.
// CHECK-LABEL: func.func @identity_dbias_generic
//  CHECK-SAME: (%[[DY:.*]]: tensor<4x64xbf16>)
//       CHECK: %[[Q:.*]]:3 = fusion.act_quantize #fusion.act<identity> %[[DY]] as quant<mxfp8_e4m3, rowwise> via bf16 dbias
//       CHECK: return %[[Q]]#0, %[[Q]]#1, %[[Q]]#2
func.func @identity_dbias_generic(%dy: !x) -> (!d, !s, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %db = linalg.generic {indexing_maps = [#id, #cols], iterator_types = ["reduction", "parallel"]}
      ins(%dy : !x) outs(%acc : tensor<64xf32>) {
  ^bb0(%in: bf16, %sum: f32):
    %inf = arith.extf %in : bf16 to f32
    %n = arith.addf %inf, %sum : f32
    linalg.yield %n : f32
  } -> tensor<64xf32>
  %dst14 = tensor.empty() : !d
  %dst15 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused identity and quantize into fusion.act_quantize with dbias"}}
  %q:2 = fusion.quantize %dy as quant<mxfp8_e4m3, rowwise> outs(%dst14, %dst15)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1, %db : !d, !s, tensor<64xf32>
}

/// A forward activation's column sums are no dbias: the op takes dbias only
/// with backward or identity activations, so the reduction is another user.
// CHECK-LABEL: func.func @negative_forward_with_column_sum
//   CHECK-DAG: linalg.reduce
//   CHECK-DAG: fusion.quantize
//   CHECK-NOT: fusion.act_quantize
func.func @negative_forward_with_column_sum(%x: !xf) -> (!d, !s, tensor<64xf32>) {
  %z = arith.constant dense<0.0> : !xf
  %y = arith.maximumf %x, %z : !xf
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %db = linalg.reduce ins(%y : !xf) outs(%acc : tensor<64xf32>) dimensions = [0]
    (%in: f32, %sum: f32) {
      %n = arith.addf %in, %sum : f32
      linalg.yield %n : f32
    }
  %dst16 = tensor.empty() : !d
  %dst17 = tensor.empty() : !s
  // expected-remark @below {{Reason="activation has another user", Remark="a dbias reduction fuses only with a backward or identity activation, not relu"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst16, %dst17)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1, %db : !d, !s, tensor<64xf32>
}

/// The column sums accumulate in bf16, not f32 as the fused dbias does.
// CHECK-LABEL: func.func @negative_dbias_bf16_accumulator
//   CHECK-DAG: linalg.reduce
//   CHECK-DAG: fusion.quantize
//   CHECK-NOT: fusion.act_quantize
func.func @negative_dbias_bf16_accumulator(%x: !x, %dy: !x) -> (!d, !s, tensor<64xbf16>) {
  %z = arith.constant dense<0.0> : !x
  %p = arith.cmpf ogt, %x, %z : !x
  %y = arith.select %p, %dy, %z : tensor<4x64xi1>, !x
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<64xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%e : tensor<64xbf16>) -> tensor<64xbf16>
  %db = linalg.reduce ins(%y : !x) outs(%acc : tensor<64xbf16>) dimensions = [0]
    (%in: bf16, %sum: bf16) {
      %n = arith.addf %in, %sum : bf16
      linalg.yield %n : bf16
    }
  %dst18 = tensor.empty() : !d
  %dst19 = tensor.empty() : !s
  // expected-remark @below {{Reason="activation has another user", Remark="the reduction is not a dbias: the reduction does not accumulate in f32"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst18, %dst19)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1, %db : !d, !s, tensor<64xbf16>
}

//===----------------------------------------------------------------------===//
// Gated backward
//===----------------------------------------------------------------------===//

/// SwiGLU backward as autograd writes it for a packed [gate | up] input:
/// dgate = grad * up * dsilu(gate), dup = grad * silu(gate), concatenated.
// CHECK-LABEL: func.func @dswiglu_packed
//  CHECK-SAME: (%[[P:.*]]: tensor<4x128xbf16>, %[[DY:.*]]: tensor<4x64xbf16>)
//       CHECK: %[[Q:.*]]:2 = fusion.gated_act_quantize #fusion.act<dswiglu> %[[P]] grad %[[DY]] as quant<mxfp8_e4m3, rowwise> via bf16 outs({{.*}}) : (tensor<4x128xbf16>, tensor<4x64xbf16>, tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>)
//   CHECK-NOT: tensor.concat
//       CHECK: return %[[Q]]#0, %[[Q]]#1
func.func @dswiglu_packed(%gu: tensor<4x128xbf16>, %dy: !x) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) {
  %gate = tensor.extract_slice %gu[0, 0] [4, 64] [1, 1] : tensor<4x128xbf16> to !x
  %up = tensor.extract_slice %gu[0, 64] [4, 64] [1, 1] : tensor<4x128xbf16> to !x
  %init = tensor.empty() : !x
  %dgate = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up, %dy : !x, !x, !x) outs(%init : !x) {
  ^bb0(%gi: bf16, %ui: bf16, %di: bf16, %out: bf16):
    %g = arith.extf %gi : bf16 to f32
    %u = arith.extf %ui : bf16 to f32
    %d = arith.extf %di : bf16 to f32
    %c1 = arith.constant 1.0 : f32
    %n = arith.negf %g : f32
    %e = math.exp %n : f32
    %den = arith.addf %c1, %e : f32
    %s = arith.divf %c1, %den : f32
    %oms = arith.subf %c1, %s : f32
    %go = arith.mulf %g, %oms : f32
    %a = arith.addf %c1, %go : f32
    %ds = arith.mulf %s, %a : f32
    %du = arith.mulf %d, %u : f32
    %r = arith.mulf %du, %ds : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> !x
  %dup = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %dy : !x, !x) outs(%init : !x) {
  ^bb0(%gi: bf16, %di: bf16, %out: bf16):
    %g = arith.extf %gi : bf16 to f32
    %d = arith.extf %di : bf16 to f32
    %c1 = arith.constant 1.0 : f32
    %n = arith.negf %g : f32
    %e = math.exp %n : f32
    %den = arith.addf %c1, %e : f32
    %silu = arith.divf %g, %den : f32
    %r = arith.mulf %silu, %d : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> !x
  %cat = tensor.concat dim(1) %dgate, %dup : (!x, !x) -> tensor<4x128xbf16>
  %dst20 = tensor.empty() : tensor<4x128xf8E4M3FN>
  %dst21 = tensor.empty() : tensor<4x4xf8E8M0FNU>
  // expected-remark @below {{Remark="fused dswiglu and quantize into fusion.gated_act_quantize from a packed [gate | up] tensor"}}
  %q:2 = fusion.quantize %cat as quant<mxfp8_e4m3, rowwise> outs(%dst20, %dst21)
      : (tensor<4x128xbf16>, tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>
}

/// ReGLU backward from two tensors, on tensors, both directions.
// CHECK-LABEL: func.func @dreglu_two_tensors
//  CHECK-SAME: (%[[G:.*]]: tensor<64x64xf32>, %[[U:.*]]: tensor<64x64xf32>, %[[DY:.*]]: tensor<64x64xf32>)
//       CHECK: fusion.gated_act_quantize #fusion.act<dreglu, mask = select> %[[G]], %[[U]] grad %[[DY]] as quant<mxfp8_e4m3, both> via f32
func.func @dreglu_two_tensors(%gate: tensor<64x64xf32>, %up: tensor<64x64xf32>, %dy: tensor<64x64xf32>)
    -> (tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>, tensor<64x128xf8E4M3FN>, tensor<2x128xf8E8M0FNU>) {
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %p = arith.cmpf ogt, %gate, %z : tensor<64x64xf32>
  %du0 = arith.mulf %dy, %up : tensor<64x64xf32>
  %dgate = arith.select %p, %du0, %z : tensor<64x64xi1>, tensor<64x64xf32>
  %r = arith.maximumf %gate, %z : tensor<64x64xf32>
  %dup = arith.mulf %r, %dy : tensor<64x64xf32>
  %cat = tensor.concat dim(1) %dgate, %dup : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x128xf32>
  %dst22 = tensor.empty() : tensor<64x128xf8E4M3FN>
  %dst23 = tensor.empty() : tensor<64x4xf8E8M0FNU>
  %dst24 = tensor.empty() : tensor<64x128xf8E4M3FN>
  %dst25 = tensor.empty() : tensor<2x128xf8E8M0FNU>
  // expected-remark @below {{Remark="fused dreglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:4 = fusion.quantize %cat as quant<mxfp8_e4m3, both> outs(%dst22, %dst23, %dst24, %dst25)
      : (tensor<64x128xf32>, tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>, tensor<64x128xf8E4M3FN>, tensor<2x128xf8E8M0FNU>) -> (tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>, tensor<64x128xf8E4M3FN>, tensor<2x128xf8E8M0FNU>)
  return %q#0, %q#1, %q#2, %q#3 : tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>, tensor<64x128xf8E4M3FN>, tensor<2x128xf8E8M0FNU>
}

/// Halves of 48 columns: a rowwise block of 32 of the concatenation would
/// straddle dgate and dup, which the runtime scales separately.
// CHECK-LABEL: func.func @negative_dreglu_block_straddles_halves
//       CHECK: tensor.concat
//       CHECK: fusion.quantize
func.func @negative_dreglu_block_straddles_halves(%gate: tensor<4x48xf32>, %up: tensor<4x48xf32>, %dy: tensor<4x48xf32>)
    -> (tensor<4x96xf8E4M3FN>, tensor<4x3xf8E8M0FNU>) {
  %z = arith.constant dense<0.0> : tensor<4x48xf32>
  %p = arith.cmpf ogt, %gate, %z : tensor<4x48xf32>
  %du0 = arith.mulf %dy, %up : tensor<4x48xf32>
  %dgate = arith.select %p, %du0, %z : tensor<4x48xi1>, tensor<4x48xf32>
  %r = arith.maximumf %gate, %z : tensor<4x48xf32>
  %dup = arith.mulf %r, %dy : tensor<4x48xf32>
  %cat = tensor.concat dim(1) %dgate, %dup : (tensor<4x48xf32>, tensor<4x48xf32>) -> tensor<4x96xf32>
  %dst26 = tensor.empty() : tensor<4x96xf8E4M3FN>
  %dst27 = tensor.empty() : tensor<4x3xf8E8M0FNU>
  // expected-remark @below {{Reason="unsupported shape", Remark="rowwise blocks of 32 would straddle the [dgate | dup] halves}}
  %q:2 = fusion.quantize %cat as quant<mxfp8_e4m3, rowwise> outs(%dst26, %dst27)
      : (tensor<4x96xf32>, tensor<4x96xf8E4M3FN>, tensor<4x3xf8E8M0FNU>) -> (tensor<4x96xf8E4M3FN>, tensor<4x3xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<4x96xf8E4M3FN>, tensor<4x3xf8E8M0FNU>
}

/// Rank 3 ([batch, seq, hidden]): the bias gradient sums over batch and
/// sequence, which is the runtime's dbias of the collapsed [batch*seq,
/// hidden] matrix.
// CHECK-LABEL: func.func @dsilu_dbias_rank3
//  CHECK-SAME: (%[[X:.*]]: tensor<2x4x64xf32>, %[[DY:.*]]: tensor<2x4x64xf32>)
//       CHECK: %[[Q:.*]]:3 = fusion.act_quantize #fusion.act<dsilu> %[[X]] grad %[[DY]] as quant<mxfp8_e4m3, rowwise> via f32 dbias outs({{.*}}) : (tensor<2x4x64xf32>, tensor<2x4x64xf32>, tensor<2x4x64xf8E4M3FN>, tensor<2x4x2xf8E8M0FNU>, tensor<64xf32>) -> (tensor<2x4x64xf8E4M3FN>, tensor<2x4x2xf8E8M0FNU>, tensor<64xf32>)
//       CHECK: return %[[Q]]#0, %[[Q]]#1, %[[Q]]#2
func.func @dsilu_dbias_rank3(%x: tensor<2x4x64xf32>, %dy: tensor<2x4x64xf32>) -> (tensor<2x4x64xf8E4M3FN>, tensor<2x4x2xf8E8M0FNU>, tensor<64xf32>) {
  %one = arith.constant dense<1.0> : tensor<2x4x64xf32>
  %n = arith.negf %x : tensor<2x4x64xf32>
  %e = math.exp %n : tensor<2x4x64xf32>
  %den = arith.addf %one, %e : tensor<2x4x64xf32>
  %sig = arith.divf %one, %den : tensor<2x4x64xf32>
  %oms = arith.subf %one, %sig : tensor<2x4x64xf32>
  %xo = arith.mulf %x, %oms : tensor<2x4x64xf32>
  %a = arith.addf %one, %xo : tensor<2x4x64xf32>
  %gs = arith.mulf %dy, %sig : tensor<2x4x64xf32>
  %y = arith.mulf %gs, %a : tensor<2x4x64xf32>
  %zero = arith.constant 0.0 : f32
  %ee = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ee : tensor<64xf32>) -> tensor<64xf32>
  %db = linalg.reduce ins(%y : tensor<2x4x64xf32>) outs(%acc : tensor<64xf32>) dimensions = [0, 1]
    (%in: f32, %sum: f32) {
      %s = arith.addf %in, %sum : f32
      linalg.yield %s : f32
    }
  %dst28 = tensor.empty() : tensor<2x4x64xf8E4M3FN>
  %dst29 = tensor.empty() : tensor<2x4x2xf8E8M0FNU>
  // expected-remark @below {{Remark="fused dsilu and quantize into fusion.act_quantize with dbias"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst28, %dst29)
      : (tensor<2x4x64xf32>, tensor<2x4x64xf8E4M3FN>, tensor<2x4x2xf8E8M0FNU>) -> (tensor<2x4x64xf8E4M3FN>, tensor<2x4x2xf8E8M0FNU>)
  return %q#0, %q#1, %db : tensor<2x4x64xf8E4M3FN>, tensor<2x4x2xf8E8M0FNU>, tensor<64xf32>
}

/// ReGLU backward whose [dgate | dup] is written by two tensor.insert_slice
/// into one [M, 2K] tensor instead of a tensor.concat; dup is written first.
// CHECK-LABEL: func.func @dreglu_insert_slice
//  CHECK-SAME: (%[[G:.*]]: tensor<4x64xf32>, %[[U:.*]]: tensor<4x64xf32>, %[[DY:.*]]: tensor<4x64xf32>)
//       CHECK: %[[Q:.*]]:2 = fusion.gated_act_quantize #fusion.act<dreglu, mask = select> %[[G]], %[[U]] grad %[[DY]] as quant<mxfp8_e4m3, rowwise> via f32
//   CHECK-NOT: tensor.insert_slice
//       CHECK: return %[[Q]]#0, %[[Q]]#1
func.func @dreglu_insert_slice(%gate: !xf, %up: !xf, %dy: !xf) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) {
  %z = arith.constant dense<0.0> : !xf
  %p = arith.cmpf ogt, %gate, %z : !xf
  %du0 = arith.mulf %dy, %up : !xf
  %dgate = arith.select %p, %du0, %z : tensor<4x64xi1>, !xf
  %r = arith.maximumf %gate, %z : !xf
  %dup = arith.mulf %r, %dy : !xf
  %e = tensor.empty() : tensor<4x128xf32>
  %w = tensor.insert_slice %dup into %e[0, 64] [4, 64] [1, 1] : !xf into tensor<4x128xf32>
  %cat = tensor.insert_slice %dgate into %w[0, 0] [4, 64] [1, 1] : !xf into tensor<4x128xf32>
  %dst0 = tensor.empty() : tensor<4x128xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<4x4xf8E8M0FNU>
  // expected-remark @below {{Remark="fused dreglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %cat as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<4x128xf32>, tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>
}

/// Near miss: the halves are written the other way round ([dup | dgate]),
/// which is not the layout the fused op writes.
// CHECK-LABEL: func.func @negative_dreglu_insert_slice_swapped
//       CHECK: tensor.insert_slice
//       CHECK: fusion.quantize
//   CHECK-NOT: fusion.gated_act_quantize
func.func @negative_dreglu_insert_slice_swapped(%gate: !xf, %up: !xf, %dy: !xf) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) {
  %z = arith.constant dense<0.0> : !xf
  %p = arith.cmpf ogt, %gate, %z : !xf
  %du0 = arith.mulf %dy, %up : !xf
  %dgate = arith.select %p, %du0, %z : tensor<4x64xi1>, !xf
  %r = arith.maximumf %gate, %z : !xf
  %dup = arith.mulf %r, %dy : !xf
  %e = tensor.empty() : tensor<4x128xf32>
  %w = tensor.insert_slice %dup into %e[0, 0] [4, 64] [1, 1] : !xf into tensor<4x128xf32>
  %cat = tensor.insert_slice %dgate into %w[0, 64] [4, 64] [1, 1] : !xf into tensor<4x128xf32>
  %dst2 = tensor.empty() : tensor<4x128xf8E4M3FN>
  %dst3 = tensor.empty() : tensor<4x4xf8E8M0FNU>
  // expected-remark @below {{Reason="unsupported activation", Remark="the halves match no supported gated backward form (the second half, dup, is no supported activation of a gate times a gradient)"}}
  %q:2 = fusion.quantize %cat as quant<mxfp8_e4m3, rowwise> outs(%dst2, %dst3)
      : (tensor<4x128xf32>, tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>
}

/// Near miss: the second write starts at column 32, so the halves overlap
/// and the tensor is not [dgate | dup].
// CHECK-LABEL: func.func @negative_dreglu_insert_slice_overlap
//       CHECK: fusion.quantize
//   CHECK-NOT: fusion.gated_act_quantize
func.func @negative_dreglu_insert_slice_overlap(%gate: !xf, %up: !xf, %dy: !xf) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) {
  %z = arith.constant dense<0.0> : !xf
  %p = arith.cmpf ogt, %gate, %z : !xf
  %du0 = arith.mulf %dy, %up : !xf
  %dgate = arith.select %p, %du0, %z : tensor<4x64xi1>, !xf
  %r = arith.maximumf %gate, %z : !xf
  %dup = arith.mulf %r, %dy : !xf
  %e = tensor.empty() : tensor<4x128xf32>
  %w = tensor.insert_slice %dgate into %e[0, 0] [4, 64] [1, 1] : !xf into tensor<4x128xf32>
  %cat = tensor.insert_slice %dup into %w[0, 32] [4, 64] [1, 1] : !xf into tensor<4x128xf32>
  %dst4 = tensor.empty() : tensor<4x128xf8E4M3FN>
  %dst5 = tensor.empty() : tensor<4x4xf8E8M0FNU>
  // expected-remark @below {{Reason="no activation to fuse"}}
  %q:2 = fusion.quantize %cat as quant<mxfp8_e4m3, rowwise> outs(%dst4, %dst5)
      : (tensor<4x128xf32>, tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>
}

/// GPT-OSS's clamped SwiGLU backward as autograd writes it (clamp backward
/// masks the gradient where the input was clamped), L = 7, alpha = 1.702,
/// offset 1: dgate = [g <= 7] dqgelu(min(g, 7)) grad (clamp(u, -7, 7) + 1),
/// dup = [-7 <= u <= 7] qgelu(min(g, 7)) grad. The runtime's
/// gated_backward for kActClampedSwiGLU computes the same.
// CHECK-LABEL: func.func @dclamped_swiglu
//  CHECK-SAME: (%[[G:.*]]: tensor<4x64xf32>, %[[U:.*]]: tensor<4x64xf32>, %[[DY:.*]]: tensor<4x64xf32>)
//       CHECK: fusion.gated_act_quantize #fusion.act<dclamped_swiglu> %[[G]], %[[U]] grad %[[DY]] as quant<mxfp8_e4m3, rowwise> via f32
//   CHECK-NOT: tensor.concat
func.func @dclamped_swiglu(%gate: !xf, %up: !xf, %dy: !xf) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) {
  %init = tensor.empty() : !xf
  %dgate = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up, %dy : !xf, !xf, !xf) outs(%init : !xf) {
  ^bb0(%g: f32, %u: f32, %d: f32, %out: f32):
    %lim = arith.constant 7.0 : f32
    %nlim = arith.constant -7.0 : f32
    %alpha = arith.constant 1.702 : f32
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %x = arith.minimumf %g, %lim : f32
    %ax = arith.mulf %alpha, %x : f32
    %n = arith.negf %ax : f32
    %e = math.exp %n : f32
    %den = arith.addf %c1, %e : f32
    %s = arith.divf %c1, %den : f32
    %oms = arith.subf %c1, %s : f32
    %t0 = arith.mulf %ax, %oms : f32
    %t1 = arith.addf %c1, %t0 : f32
    %dq = arith.mulf %s, %t1 : f32
    %in = arith.cmpf ole, %g, %lim : f32
    %dqm = arith.select %in, %dq, %c0 : f32
    %uc0 = arith.minimumf %u, %lim : f32
    %uc = arith.maximumf %uc0, %nlim : f32
    %u1 = arith.addf %uc, %c1 : f32
    %p = arith.mulf %d, %u1 : f32
    %r = arith.mulf %p, %dqm : f32
    linalg.yield %r : f32
  } -> !xf
  %dup = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up, %dy : !xf, !xf, !xf) outs(%init : !xf) {
  ^bb0(%g: f32, %u: f32, %d: f32, %out: f32):
    %lim = arith.constant 7.0 : f32
    %nlim = arith.constant -7.0 : f32
    %alpha = arith.constant 1.702 : f32
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %x = arith.minimumf %g, %lim : f32
    %ax = arith.mulf %alpha, %x : f32
    %n = arith.negf %ax : f32
    %e = math.exp %n : f32
    %den = arith.addf %c1, %e : f32
    %act = arith.divf %x, %den : f32
    %hi = arith.cmpf ole, %u, %lim : f32
    %lo = arith.cmpf oge, %u, %nlim : f32
    %gd = arith.mulf %act, %d : f32
    %m0 = arith.select %hi, %gd, %c0 : f32
    %r = arith.select %lo, %m0, %c0 : f32
    linalg.yield %r : f32
  } -> !xf
  %cat = tensor.concat dim(1) %dgate, %dup : (!xf, !xf) -> tensor<4x128xf32>
  %dst6 = tensor.empty() : tensor<4x128xf8E4M3FN>
  %dst7 = tensor.empty() : tensor<4x4xf8E8M0FNU>
  // expected-remark @below {{Remark="fused dclamped_swiglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %cat as quant<mxfp8_e4m3, rowwise> outs(%dst6, %dst7)
      : (tensor<4x128xf32>, tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>
}

/// The same with dgate's clamp mask applied by a select after the product
/// (autograd's clamp backward on the gate): +0 above the limit whatever the
/// sign of grad * up, the runtime's `mask = select`.
// CHECK-LABEL: func.func @dclamped_swiglu_select
//       CHECK: fusion.gated_act_quantize #fusion.act<dclamped_swiglu, mask = select> %
func.func @dclamped_swiglu_select(%gate: !xf, %up: !xf, %dy: !xf) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) {
  %init = tensor.empty() : !xf
  %dgate = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up, %dy : !xf, !xf, !xf) outs(%init : !xf) {
  ^bb0(%g: f32, %u: f32, %d: f32, %out: f32):
    %lim = arith.constant 7.0 : f32
    %nlim = arith.constant -7.0 : f32
    %alpha = arith.constant 1.702 : f32
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %x = arith.minimumf %g, %lim : f32
    %ax = arith.mulf %alpha, %x : f32
    %n = arith.negf %ax : f32
    %e = math.exp %n : f32
    %den = arith.addf %c1, %e : f32
    %s = arith.divf %c1, %den : f32
    %oms = arith.subf %c1, %s : f32
    %t0 = arith.mulf %ax, %oms : f32
    %t1 = arith.addf %c1, %t0 : f32
    %dq = arith.mulf %s, %t1 : f32
    %in = arith.cmpf ole, %g, %lim : f32
    %uc0 = arith.minimumf %u, %lim : f32
    %uc = arith.maximumf %uc0, %nlim : f32
    %u1 = arith.addf %uc, %c1 : f32
    %p = arith.mulf %d, %u1 : f32
    %pq = arith.mulf %p, %dq : f32
    %r = arith.select %in, %pq, %c0 : f32
    linalg.yield %r : f32
  } -> !xf
  %dup = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up, %dy : !xf, !xf, !xf) outs(%init : !xf) {
  ^bb0(%g: f32, %u: f32, %d: f32, %out: f32):
    %lim = arith.constant 7.0 : f32
    %nlim = arith.constant -7.0 : f32
    %alpha = arith.constant 1.702 : f32
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %x = arith.minimumf %g, %lim : f32
    %ax = arith.mulf %alpha, %x : f32
    %n = arith.negf %ax : f32
    %e = math.exp %n : f32
    %den = arith.addf %c1, %e : f32
    %act = arith.divf %x, %den : f32
    %hi = arith.cmpf ole, %u, %lim : f32
    %lo = arith.cmpf oge, %u, %nlim : f32
    %gd = arith.mulf %act, %d : f32
    %m0 = arith.select %hi, %gd, %c0 : f32
    %r = arith.select %lo, %m0, %c0 : f32
    linalg.yield %r : f32
  } -> !xf
  %cat = tensor.concat dim(1) %dgate, %dup : (!xf, !xf) -> tensor<4x128xf32>
  %dst8 = tensor.empty() : tensor<4x128xf8E4M3FN>
  %dst9 = tensor.empty() : tensor<4x4xf8E8M0FNU>
  // expected-remark @below {{Remark="fused dclamped_swiglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %cat as quant<mxfp8_e4m3, rowwise> outs(%dst8, %dst9)
      : (tensor<4x128xf32>, tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>
}

/// Near miss: dup does not mask the gradient where up was clamped (the
/// clamp's backward is missing), which is not the runtime's dclamped_swiglu.
// CHECK-LABEL: func.func @negative_dclamped_swiglu_unmasked_dup
//       CHECK: tensor.concat
//       CHECK: fusion.quantize
//   CHECK-NOT: fusion.gated_act_quantize
func.func @negative_dclamped_swiglu_unmasked_dup(%gate: !xf, %up: !xf, %dy: !xf) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) {
  %init = tensor.empty() : !xf
  %dgate = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up, %dy : !xf, !xf, !xf) outs(%init : !xf) {
  ^bb0(%g: f32, %u: f32, %d: f32, %out: f32):
    %lim = arith.constant 7.0 : f32
    %nlim = arith.constant -7.0 : f32
    %alpha = arith.constant 1.702 : f32
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %x = arith.minimumf %g, %lim : f32
    %ax = arith.mulf %alpha, %x : f32
    %n = arith.negf %ax : f32
    %e = math.exp %n : f32
    %den = arith.addf %c1, %e : f32
    %s = arith.divf %c1, %den : f32
    %oms = arith.subf %c1, %s : f32
    %t0 = arith.mulf %ax, %oms : f32
    %t1 = arith.addf %c1, %t0 : f32
    %dq = arith.mulf %s, %t1 : f32
    %in = arith.cmpf ole, %g, %lim : f32
    %dqm = arith.select %in, %dq, %c0 : f32
    %uc0 = arith.minimumf %u, %lim : f32
    %uc = arith.maximumf %uc0, %nlim : f32
    %u1 = arith.addf %uc, %c1 : f32
    %p = arith.mulf %d, %u1 : f32
    %r = arith.mulf %p, %dqm : f32
    linalg.yield %r : f32
  } -> !xf
  %dup = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %dy : !xf, !xf) outs(%init : !xf) {
  ^bb0(%g: f32, %d: f32, %out: f32):
    %lim = arith.constant 7.0 : f32
    %alpha = arith.constant 1.702 : f32
    %c1 = arith.constant 1.0 : f32
    %x = arith.minimumf %g, %lim : f32
    %ax = arith.mulf %alpha, %x : f32
    %n = arith.negf %ax : f32
    %e = math.exp %n : f32
    %den = arith.addf %c1, %e : f32
    %act = arith.divf %x, %den : f32
    %r = arith.mulf %act, %d : f32
    linalg.yield %r : f32
  } -> !xf
  %cat = tensor.concat dim(1) %dgate, %dup : (!xf, !xf) -> tensor<4x128xf32>
  %dst8 = tensor.empty() : tensor<4x128xf8E4M3FN>
  %dst9 = tensor.empty() : tensor<4x4xf8E8M0FNU>
  // expected-remark @below {{Reason="unsupported activation", Remark="the halves match no supported gated backward form (the second half, dup, is no supported activation of a gate times a gradient)"}}
  %q:2 = fusion.quantize %cat as quant<mxfp8_e4m3, rowwise> outs(%dst8, %dst9)
      : (tensor<4x128xf32>, tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>
}

/// ReLU backward with its dbias, quantized to FP8 with a delayed scale that
/// is computed after the dbias reduction: the fused op would go where the
/// reduction is, before its scale operand exists.
// CHECK-LABEL: func.func @negative_delayed_scale_after_dbias
//       CHECK: linalg.reduce
//       CHECK: fusion.quantize
func.func @negative_delayed_scale_after_dbias(%x: tensor<32x64xf32>, %dy: tensor<32x64xf32>, %s0: tensor<1xf32>)
    -> (tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>, tensor<64xf32>) {
  %z = arith.constant dense<0.0> : tensor<32x64xf32>
  %p = arith.cmpf ogt, %x, %z : tensor<32x64xf32>
  %y = arith.select %p, %dy, %z : tensor<32x64xi1>, tensor<32x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %db = linalg.reduce ins(%y : tensor<32x64xf32>) outs(%acc : tensor<64xf32>) dimensions = [0]
    (%in: f32, %sum: f32) {
      %n = arith.addf %sum, %in : f32
      linalg.yield %n : f32
    }
  %scale = arith.addf %s0, %s0 : tensor<1xf32>
  %d0 = tensor.empty() : tensor<32x64xf8E4M3FN>
  %d1 = tensor.empty() : tensor<1xf32>
  %d2 = tensor.empty() : tensor<1xf32>
  // expected-remark @below {{Reason="operand defined after the fusion point"}}
  %q:3 = fusion.quantize %y scale %scale as quant<fp8_e4m3, rowwise, block = tensor, scaling = delayed> outs(%d0, %d1, %d2)
      : (tensor<32x64xf32>, tensor<1xf32>, tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return %q#0, %q#1, %q#2, %db : tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>, tensor<64xf32>
}

/// ReGLU backward as autograd writes it: threshold_backward masks grad * up
/// by relu(gate) <= 0 (a select on the activation's value: +0 where the gate
/// is not positive, grad * up where relu(gate) is NaN), the runtime's
/// `mask = select`; relu(gate) <= 0 is read as gate <= 0.
// CHECK-LABEL: func.func @dreglu_threshold_backward
//  CHECK-SAME: (%[[G:.*]]: tensor<4x64xf32>, %[[U:.*]]: tensor<4x64xf32>, %[[DY:.*]]: tensor<4x64xf32>)
//       CHECK: fusion.gated_act_quantize #fusion.act<dreglu, mask = select> %[[G]], %[[U]] grad %[[DY]]
//   CHECK-NOT: fusion.quantize
func.func @dreglu_threshold_backward(%gate: !xf, %up: !xf, %dy: !xf) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) {
  %z = arith.constant dense<0.0> : !xf
  %pos = arith.cmpf ugt, %gate, %z : !xf
  %r = arith.select %pos, %gate, %z : tensor<4x64xi1>, !xf
  %dup = arith.mulf %dy, %r : !xf
  %du0 = arith.mulf %dy, %up : !xf
  %le = arith.cmpf ole, %r, %z : !xf
  %dgate = arith.select %le, %z, %du0 : tensor<4x64xi1>, !xf
  %cat = tensor.concat dim(1) %dgate, %dup : (!xf, !xf) -> tensor<4x128xf32>
  %dst0 = tensor.empty() : tensor<4x128xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<4x4xf8E8M0FNU>
  // expected-remark @below {{Remark="fused dreglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %cat as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<4x128xf32>, tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>) -> (tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<4x128xf8E4M3FN>, tensor<4x4xf8E8M0FNU>
}

/// relu written as x * (x > 0): -0 for a negative x, where the runtime's
/// relu gives +0 (the quantized code 0x80 against 0x00): declined.
// CHECK-LABEL: func.func @negative_relu_times_step
//       CHECK: fusion.quantize
//   CHECK-NOT: fusion.act_quantize
func.func @negative_relu_times_step(%x: !xf) -> (!d, !s) {
  %z = arith.constant dense<0.0> : !xf
  %one = arith.constant dense<1.0> : !xf
  %p = arith.cmpf ogt, %x, %z : !xf
  %m = arith.select %p, %one, %z : tensor<4x64xi1>, !xf
  %y = arith.mulf %x, %m : !xf
  %dst0 = tensor.empty() : !d
  %dst1 = tensor.empty() : !s
  // expected-remark @below {{Reason="unsupported activation", Remark="the body is relu but for the sign of a zero (at x = -6, the body gives -0 where the runtime gives +0; the quantized codes would differ)"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// ReLU backward written as grad * (x > 0) (TransformerEngine's product):
/// -0 for a negative grad where x <= 0, the runtime's default mask.
// CHECK-LABEL: func.func @drelu_product
//       CHECK: fusion.act_quantize #fusion.act<drelu> %
func.func @drelu_product(%x: !xf, %dy: !xf) -> (!d, !s) {
  %z = arith.constant dense<0.0> : !xf
  %one = arith.constant dense<1.0> : !xf
  %p = arith.cmpf ogt, %x, %z : !xf
  %m = arith.select %p, %one, %z : tensor<4x64xi1>, !xf
  %y = arith.mulf %dy, %m : !xf
  %dst0 = tensor.empty() : !d
  %dst1 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused drelu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// A masked derivative that is -0 whatever the grad's sign (a select of
/// -0.0) is neither of the runtime's masks (grad * 0, or +0): declined.
// CHECK-LABEL: func.func @negative_drelu_negative_zero
//       CHECK: fusion.quantize
//   CHECK-NOT: fusion.act_quantize
func.func @negative_drelu_negative_zero(%x: !xf, %dy: !xf) -> (!d, !s) {
  %z = arith.constant dense<0.0> : !xf
  %nz = arith.constant dense<-0.0> : !xf
  %p = arith.cmpf ogt, %x, %z : !xf
  %y = arith.select %p, %dy, %nz : tensor<4x64xi1>, !xf
  %dst0 = tensor.empty() : !d
  %dst1 = tensor.empty() : !s
  // expected-remark @below {{Reason="unsupported activation", Remark="the body is drelu but for the sign of a zero (at x = -6, grad = 0.7, the body gives -0 where the runtime gives +0; the quantized codes would differ)"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (!xf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}
