// RUN: fusion-opt %s --fusion-act-quantize-pipeline | FileCheck %s
// RUN: fusion-opt %s --fusion-act-quantize-pipeline --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --fusion-act-quantize-pipeline -o %t.once.mlir
// RUN: fusion-opt %t.once.mlir --fusion-fuse-act-quantize -o %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// Gated activations act(gate) * up, from two tensors and from the two
// halves of one packed [M, 2K] tensor.

#id = affine_map<(d0, d1) -> (d0, d1)>
!h = tensor<4x64xbf16>
!hf = tensor<4x64xf32>
!p = tensor<4x128xbf16>
!d = tensor<4x64xf8E4M3FN>
!s = tensor<4x2xf8E8M0FNU>

/// SwiGLU from two tensors, as torch-mlir lowers silu(gate) * up: a sigmoid
/// generic, a mul generic, a mul generic.
// CHECK-LABEL: func.func @swiglu_two_tensors
//  CHECK-SAME: (%[[G:.*]]: tensor<4x64xbf16>, %[[U:.*]]: tensor<4x64xbf16>)
//       CHECK: %[[Q:.*]]:2 = fusion.gated_act_quantize #fusion.act<swiglu> %[[G]], %[[U]] as quant<mxfp8_e4m3, rowwise> via bf16 outs({{.*}}) : (tensor<4x64xbf16>, tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
//       CHECK: return %[[Q]]#0, %[[Q]]#1
func.func @swiglu_two_tensors(%gate: !h, %up: !h) -> (!d, !s) {
  %init = tensor.empty() : !h
  %sig = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate : !h) outs(%init : !h) {
  ^bb0(%in: bf16, %out: bf16):
    %f = arith.extf %in : bf16 to f32
    %n = arith.negf %f : f32
    %e = math.exp %n : f32
    %c1 = arith.constant 1.0 : f32
    %den = arith.addf %e, %c1 : f32
    %r = arith.divf %c1, %den : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> !h
  %silu = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %sig : !h, !h) outs(%init : !h) {
  ^bb0(%a: bf16, %b: bf16, %out: bf16):
    %m = arith.mulf %a, %b : bf16
    linalg.yield %m : bf16
  } -> !h
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%silu, %up : !h, !h) outs(%init : !h) {
  ^bb0(%a: bf16, %b: bf16, %out: bf16):
    %m = arith.mulf %b, %a : bf16
    linalg.yield %m : bf16
  } -> !h
  %dst0 = tensor.empty() : !d
  %dst1 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused swiglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (!h, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// SwiGLU from one packed [gate | up] tensor split with tensor.extract_slice
/// (torch.chunk), arith on tensors.
// CHECK-LABEL: func.func @swiglu_packed
//  CHECK-SAME: (%[[P:.*]]: tensor<4x128xbf16>)
//   CHECK-NOT: tensor.extract_slice
//       CHECK: fusion.gated_act_quantize #fusion.act<swiglu> %[[P]] as quant<mxfp8_e4m3, rowwise> via bf16 outs({{.*}}) : (tensor<4x128xbf16>, tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
func.func @swiglu_packed(%gu: !p) -> (!d, !s) {
  %gate = tensor.extract_slice %gu[0, 0] [4, 64] [1, 1] : !p to !h
  %up = tensor.extract_slice %gu[0, 64] [4, 64] [1, 1] : !p to !h
  %g = arith.extf %gate : !h to !hf
  %u = arith.extf %up : !h to !hf
  %n = arith.negf %g : !hf
  %e = math.exp %n : !hf
  %one = arith.constant dense<1.0> : !hf
  %den = arith.addf %one, %e : !hf
  %silu = arith.divf %g, %den : !hf
  %y = arith.mulf %silu, %u : !hf
  %t = arith.truncf %y : !hf to !h
  %dst2 = tensor.empty() : !d
  %dst3 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused swiglu and quantize into fusion.gated_act_quantize from a packed [gate | up] tensor"}}
  %q:2 = fusion.quantize %t as quant<mxfp8_e4m3, rowwise> outs(%dst2, %dst3)
      : (!h, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// [up | gate] order: the halves are swapped, so the packed form does not
/// apply; the two slices become the two inputs.
// CHECK-LABEL: func.func @swiglu_packed_up_first
//  CHECK-SAME: (%[[P:.*]]: tensor<4x128xbf16>)
//   CHECK-DAG: %[[U:.*]] = tensor.extract_slice %[[P]][0, 0] [4, 64] [1, 1]
//   CHECK-DAG: %[[G:.*]] = tensor.extract_slice %[[P]][0, 64] [4, 64] [1, 1]
//       CHECK: fusion.gated_act_quantize #fusion.act<swiglu> %[[G]], %[[U]] as
func.func @swiglu_packed_up_first(%ug: !p) -> (!d, !s) {
  %up = tensor.extract_slice %ug[0, 0] [4, 64] [1, 1] : !p to !h
  %gate = tensor.extract_slice %ug[0, 64] [4, 64] [1, 1] : !p to !h
  %n = arith.negf %gate : !h
  %e = math.exp %n : !h
  %one = arith.constant dense<1.0> : !h
  %den = arith.addf %one, %e : !h
  %sig = arith.divf %one, %den : !h
  %gs = arith.mulf %gate, %sig : !h
  %y = arith.mulf %up, %gs : !h
  %dst4 = tensor.empty() : !d
  %dst5 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused swiglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst4, %dst5)
      : (!h, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// Packed and dynamic: the halves are [0, K) and [K, 2K) with K = dim / 2.
// CHECK-LABEL: func.func @swiglu_packed_dynamic
//  CHECK-SAME: (%[[P:.*]]: tensor<?x?xbf16>)
//       CHECK: fusion.gated_act_quantize #fusion.act<swiglu> %[[P]] as quant<mxfp8_e4m3, rowwise> via bf16 outs({{.*}}) : (tensor<?x?xbf16>, tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>) -> (tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>)
func.func @swiglu_packed_dynamic(%gu: tensor<?x?xbf16>) -> (tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %m = tensor.dim %gu, %c0 : tensor<?x?xbf16>
  %w = tensor.dim %gu, %c1 : tensor<?x?xbf16>
  %k = arith.divui %w, %c2 : index
  %gate = tensor.extract_slice %gu[0, 0] [%m, %k] [1, 1] : tensor<?x?xbf16> to tensor<?x?xbf16>
  %up = tensor.extract_slice %gu[0, %k] [%m, %k] [1, 1] : tensor<?x?xbf16> to tensor<?x?xbf16>
  %init = tensor.empty(%m, %k) : tensor<?x?xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : tensor<?x?xbf16>, tensor<?x?xbf16>) outs(%init : tensor<?x?xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %out: bf16):
    %f = arith.extf %a : bf16 to f32
    %g = arith.extf %b : bf16 to f32
    %n = arith.negf %f : f32
    %e = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %den = arith.addf %e, %one : f32
    %s = arith.divf %f, %den : f32
    %r = arith.mulf %s, %g : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<?x?xbf16>
  %dst_c0 = arith.constant 0 : index
  %dst_c1 = arith.constant 1 : index
  %dst_m = tensor.dim %y, %dst_c0 : tensor<?x?xbf16>
  %dst_k = tensor.dim %y, %dst_c1 : tensor<?x?xbf16>
  %dst_kb = affine.apply affine_map<()[s0] -> (s0 ceildiv 32)>()[%dst_k]
  %dst6 = tensor.empty(%dst_m, %dst_k) : tensor<?x?xf8E4M3FN>
  %dst7 = tensor.empty(%dst_m, %dst_kb) : tensor<?x?xf8E8M0FNU>
  // expected-remark @below {{Remark="fused swiglu and quantize into fusion.gated_act_quantize from a packed [gate | up] tensor"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst6, %dst7)
      : (tensor<?x?xbf16>, tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>) -> (tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>
}

/// GeGLU with the tanh GELU (the runtime's and TransformerEngine's geglu).
// CHECK-LABEL: func.func @geglu_tanh
//       CHECK: fusion.gated_act_quantize #fusion.act<geglu>
func.func @geglu_tanh(%gate: !hf, %up: !hf) -> (!d, !s) {
  %k0 = arith.constant dense<0.7978845608> : !hf
  %k1 = arith.constant dense<0.044715> : !hf
  %h = arith.constant dense<0.5> : !hf
  %one = arith.constant dense<1.0> : !hf
  %x2 = arith.mulf %gate, %gate : !hf
  %x3 = arith.mulf %x2, %gate : !hf
  %a = arith.mulf %k1, %x3 : !hf
  %b = arith.addf %gate, %a : !hf
  %c = arith.mulf %k0, %b : !hf
  %t = math.tanh %c : !hf
  %s = arith.addf %one, %t : !hf
  %hx = arith.mulf %h, %gate : !hf
  %gelu = arith.mulf %hx, %s : !hf
  %y = arith.mulf %gelu, %up : !hf
  %dst8 = tensor.empty() : !d
  %dst9 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused geglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst8, %dst9)
      : (!hf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// ReGLU: relu(gate) * up.
// CHECK-LABEL: func.func @reglu
//       CHECK: fusion.gated_act_quantize #fusion.act<reglu>
func.func @reglu(%gate: !hf, %up: !hf) -> (!d, !s) {
  %z = arith.constant dense<0.0> : !hf
  %r = arith.maximumf %gate, %z : !hf
  %y = arith.mulf %up, %r : !hf
  %dst10 = tensor.empty() : !d
  %dst11 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused reglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst10, %dst11)
      : (!hf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// SReGLU: relu(gate)^2 * up.
// CHECK-LABEL: func.func @sreglu
//       CHECK: fusion.gated_act_quantize #fusion.act<sreglu>
func.func @sreglu(%gate: !hf, %up: !hf) -> (!d, !s) {
  %z = arith.constant dense<0.0> : !hf
  %r = arith.maximumf %gate, %z : !hf
  %r2 = arith.mulf %r, %r : !hf
  %y = arith.mulf %r2, %up : !hf
  %dst12 = tensor.empty() : !d
  %dst13 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused sreglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst12, %dst13)
      : (!hf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// QGeGLU: gate * sigmoid(1.702 gate) * up.
// CHECK-LABEL: func.func @qgeglu
//       CHECK: fusion.gated_act_quantize #fusion.act<qgeglu> %{{.*}}, %{{.*}} as
func.func @qgeglu(%gate: !hf, %up: !hf) -> (!d, !s) {
  %a = arith.constant dense<-1.702> : !hf
  %one = arith.constant dense<1.0> : !hf
  %ax = arith.mulf %gate, %a : !hf
  %e = math.exp %ax : !hf
  %den = arith.addf %e, %one : !hf
  %gu = arith.mulf %gate, %up : !hf
  %y = arith.divf %gu, %den : !hf
  %dst14 = tensor.empty() : !d
  %dst15 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused qgeglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst14, %dst15)
      : (!hf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// The gate uses the exact (erf) GELU (torch's F.gelu(gate) * up, diffusers'
/// GEGLU): geglu_erf, not the tanh geglu of TransformerEngine.
// CHECK-LABEL: func.func @geglu_erf
//       CHECK: fusion.gated_act_quantize #fusion.act<geglu_erf> %{{.*}}, %{{.*}} as quant<mxfp8_e4m3, rowwise>
//   CHECK-NOT: fusion.quantize
func.func @geglu_erf(%gate: !hf, %up: !hf) -> (!d, !s) {
  %k = arith.constant dense<0.70710678> : !hf
  %half = arith.constant dense<0.5> : !hf
  %one = arith.constant dense<1.0> : !hf
  %xs = arith.mulf %gate, %k : !hf
  %er = math.erf %xs : !hf
  %a = arith.addf %er, %one : !hf
  %hx = arith.mulf %half, %gate : !hf
  %gelu = arith.mulf %hx, %a : !hf
  %y = arith.mulf %gelu, %up : !hf
  %dst16 = tensor.empty() : !d
  %dst17 = tensor.empty() : !s
  // expected-remark @below {{[Passed] FuseActQuantize | Category:fusion | Function=geglu_erf | Remark="fused geglu_erf and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst16, %dst17)
      : (!hf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// Gate and up of different element types: the runtime takes one type.
// CHECK-LABEL: func.func @negative_gate_up_types_differ
//       CHECK: fusion.quantize
func.func @negative_gate_up_types_differ(%gate: !hf, %up: !h) -> (!d, !s) {
  %z = arith.constant dense<0.0> : !hf
  %r = arith.maximumf %gate, %z : !hf
  %u = arith.extf %up : !h to !hf
  %y = arith.mulf %u, %r : !hf
  %dst18 = tensor.empty() : !d
  %dst19 = tensor.empty() : !s
  // expected-remark @below {{Reason="unsupported input element type", Remark="gate and up have different types"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst18, %dst19)
      : (!hf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// The SwiGLU value is also returned.
// CHECK-LABEL: func.func @negative_swiglu_extra_consumer
//       CHECK: fusion.quantize
func.func @negative_swiglu_extra_consumer(%gate: !hf, %up: !hf) -> (!d, !s, !hf) {
  %one = arith.constant dense<1.0> : !hf
  %n = arith.negf %gate : !hf
  %e = math.exp %n : !hf
  %den = arith.addf %one, %e : !hf
  %silu = arith.divf %gate, %den : !hf
  %y = arith.mulf %silu, %up : !hf
  %dst20 = tensor.empty() : !d
  %dst21 = tensor.empty() : !s
  // expected-remark @below {{Reason="activation has another user"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst20, %dst21)
      : (!hf, !d, !s) -> (!d, !s)
  return %q#0, %q#1, %y : !d, !s, !hf
}

/// GPT-OSS's clamped SwiGLU as torch writes it: glu = gate.clamp(max=7),
/// lin = up.clamp(-7, 7), glu * sigmoid(1.702 glu) * (lin + 1). The gate and
/// up halves are interleaved (x[..., ::2], x[..., 1::2]), so they reach the
/// fused op as two strided slices.
// CHECK-LABEL: func.func @clamped_swiglu_gpt_oss
//  CHECK-SAME: (%[[P:.*]]: tensor<4x128xbf16>)
//   CHECK-DAG: %[[G:.*]] = tensor.extract_slice %[[P]][0, 0] [4, 64] [1, 2]
//   CHECK-DAG: %[[U:.*]] = tensor.extract_slice %[[P]][0, 1] [4, 64] [1, 2]
//       CHECK: fusion.gated_act_quantize #fusion.act<clamped_swiglu> %[[G]], %[[U]] as quant<mxfp8_e4m3, rowwise> via bf16
func.func @clamped_swiglu_gpt_oss(%x: !p) -> (!d, !s) {
  %gate = tensor.extract_slice %x[0, 0] [4, 64] [1, 2] : !p to !h
  %up = tensor.extract_slice %x[0, 1] [4, 64] [1, 2] : !p to !h
  %g = arith.extf %gate : !h to !hf
  %u = arith.extf %up : !h to !hf
  %lim = arith.constant dense<7.0> : !hf
  %nlim = arith.constant dense<-7.0> : !hf
  %alpha = arith.constant dense<1.702> : !hf
  %one = arith.constant dense<1.0> : !hf
  %glu = arith.minimumf %g, %lim : !hf
  %l0 = arith.minimumf %u, %lim : !hf
  %lin = arith.maximumf %l0, %nlim : !hf
  %ag = arith.mulf %alpha, %glu : !hf
  %n = arith.negf %ag : !hf
  %e = math.exp %n : !hf
  %den = arith.addf %one, %e : !hf
  %sig = arith.divf %one, %den : !hf
  %out_glu = arith.mulf %glu, %sig : !hf
  %lin1 = arith.addf %lin, %one : !hf
  %y = arith.mulf %out_glu, %lin1 : !hf
  %t = arith.truncf %y : !hf to !h
  %dst22 = tensor.empty() : !d
  %dst23 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused clamped_swiglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %t as quant<mxfp8_e4m3, rowwise> outs(%dst22, %dst23)
      : (!h, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// The same with select-based clamps, limit 10, offset 0.5, slope 1.5: the
/// parameters are read off the body.
// CHECK-LABEL: func.func @clamped_swiglu_params
//       CHECK: fusion.gated_act_quantize #fusion.act<clamped_swiglu, limit = 1.0{{0*}}e+01, offset = 5.0{{0*}}e-01, alpha = 1.5{{0*}}e+00>
func.func @clamped_swiglu_params(%gate: !hf, %up: !hf) -> (!d, !s) {
  %init = tensor.empty() : !hf
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : !hf, !hf) outs(%init : !hf) {
  ^bb0(%g: f32, %u: f32, %out: f32):
    %lim = arith.constant 10.0 : f32
    %nlim = arith.constant -10.0 : f32
    %alpha = arith.constant 1.5 : f32
    %off = arith.constant 0.5 : f32
    %c1 = arith.constant 1.0 : f32
    %pg = arith.cmpf ogt, %g, %lim : f32
    %glu = arith.select %pg, %lim, %g : f32
    %pu = arith.cmpf olt, %u, %nlim : f32
    %u0 = arith.select %pu, %nlim, %u : f32
    %lin = arith.minimumf %u0, %lim : f32
    %ag = arith.mulf %glu, %alpha : f32
    %n = arith.negf %ag : f32
    %e = math.exp %n : f32
    %den = arith.addf %e, %c1 : f32
    %act = arith.divf %glu, %den : f32
    %lo = arith.addf %off, %lin : f32
    %r = arith.mulf %act, %lo : f32
    linalg.yield %r : f32
  } -> !hf
  %dst24 = tensor.empty() : !d
  %dst25 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused clamped_swiglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst24, %dst25)
      : (!hf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// Like the clamped SwiGLU but the up half is only clamped from above: not
/// the runtime's function (which clamps both sides), so it is declined.
// CHECK-LABEL: func.func @negative_clamped_swiglu_one_sided
//       CHECK: fusion.quantize
func.func @negative_clamped_swiglu_one_sided(%gate: !hf, %up: !hf) -> (!d, !s) {
  %lim = arith.constant dense<7.0> : !hf
  %alpha = arith.constant dense<1.702> : !hf
  %one = arith.constant dense<1.0> : !hf
  %glu = arith.minimumf %gate, %lim : !hf
  %lin = arith.minimumf %up, %lim : !hf
  %ag = arith.mulf %alpha, %glu : !hf
  %n = arith.negf %ag : !hf
  %e = math.exp %n : !hf
  %den = arith.addf %one, %e : !hf
  %act = arith.divf %glu, %den : !hf
  %lin1 = arith.addf %lin, %one : !hf
  %y = arith.mulf %act, %lin1 : !hf
  %dst26 = tensor.empty() : !d
  %dst27 = tensor.empty() : !s
  // expected-remark @below {{Reason="unsupported activation"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst26, %dst27)
      : (!hf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// SwiGLU whose sigmoid is written as 1 - sigmoid(-gate), in one generic.
// CHECK-LABEL: func.func @swiglu_one_minus_sigmoid_of_neg
//  CHECK-SAME: (%[[G:.*]]: tensor<4x64xbf16>, %[[U:.*]]: tensor<4x64xbf16>)
//       CHECK: fusion.gated_act_quantize #fusion.act<swiglu> %[[G]], %[[U]] as quant<mxfp8_e4m3, rowwise> via bf16
//   CHECK-NOT: fusion.quantize
func.func @swiglu_one_minus_sigmoid_of_neg(%gate: !h, %up: !h) -> (!d, !s) {
  %init = tensor.empty() : !h
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : !h, !h) outs(%init : !h) {
  ^bb0(%gi: bf16, %ui: bf16, %out: bf16):
    %g = arith.extf %gi : bf16 to f32
    %u = arith.extf %ui : bf16 to f32
    %c1 = arith.constant 1.0 : f32
    %e = math.exp %g : f32
    %den = arith.addf %e, %c1 : f32
    %sn = arith.divf %c1, %den : f32
    %sig = arith.subf %c1, %sn : f32
    %silu = arith.mulf %g, %sig : f32
    %r = arith.mulf %silu, %u : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> !h
  %dst0 = tensor.empty() : !d
  %dst1 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused swiglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (!h, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// SwiGLU whose sigmoid is exp(gate) / (1 + exp(gate)), on tensors.
// CHECK-LABEL: func.func @swiglu_exp_ratio
//  CHECK-SAME: (%[[G:.*]]: tensor<4x64xf32>, %[[U:.*]]: tensor<4x64xf32>)
//       CHECK: fusion.gated_act_quantize #fusion.act<swiglu> %[[G]], %[[U]] as quant<mxfp8_e4m3, rowwise> via f32
func.func @swiglu_exp_ratio(%gate: !hf, %up: !hf) -> (!d, !s) {
  %one = arith.constant dense<1.0> : !hf
  %e = math.exp %gate : !hf
  %den = arith.addf %one, %e : !hf
  %sig = arith.divf %e, %den : !hf
  %silu = arith.mulf %gate, %sig : !hf
  %y = arith.mulf %up, %silu : !hf
  %dst2 = tensor.empty() : !d
  %dst3 = tensor.empty() : !s
  // expected-remark @below {{Remark="fused swiglu and quantize into fusion.gated_act_quantize from gate and up tensors"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst2, %dst3)
      : (!hf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

/// Near miss: gate * (1 - sigmoid(gate)) * up is not a gated kind.
// CHECK-LABEL: func.func @negative_swiglu_one_minus_sigmoid
//       CHECK: fusion.quantize
//   CHECK-NOT: fusion.gated_act_quantize
func.func @negative_swiglu_one_minus_sigmoid(%gate: !hf, %up: !hf) -> (!d, !s) {
  %one = arith.constant dense<1.0> : !hf
  %n = arith.negf %gate : !hf
  %e = math.exp %n : !hf
  %den = arith.addf %one, %e : !hf
  %sp = arith.divf %one, %den : !hf
  %sig = arith.subf %one, %sp : !hf
  %act = arith.mulf %gate, %sig : !hf
  %y = arith.mulf %act, %up : !hf
  %dst4 = tensor.empty() : !d
  %dst5 = tensor.empty() : !s
  // expected-remark @below {{Reason="unsupported activation", Remark="the body matches no supported activation form"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst4, %dst5)
      : (!hf, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}
