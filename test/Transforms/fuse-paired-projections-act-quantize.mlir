// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections,fusion-fuse-act-quantize))' | FileCheck %s
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections,fusion-fuse-act-quantize))' --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-act-quantize,fusion-fuse-paired-projections))' | FileCheck %s
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-act-quantize,fusion-fuse-paired-projections))' --remarks-filter=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=REVERSED
// RUN: fusion-opt %s --fusion-pipeline -o /dev/null

// Composition of fusion-fuse-paired-projections with fusion-fuse-act-quantize
// on gate/up -> SwiGLU -> MXFP8 (the Llama FFN front): in either order the
// result is one quantizing fusion.paired_projection (gated swiglu, then the
// quantizer of its value; fusion_rt_paired_projection_quantize). Pairing
// first (the pipeline's order): the pair takes SwiGLU, then act-quantize
// folds the fusion.quantize of its value into it. Act-quantize first: SwiGLU
// + quantize become fusion.gated_act_quantize(gate, up), and the pairing
// pass pairs the two projections feeding it into the same op. The first two
// RUN lines and the third check one set of CHECK lines.

#x_map = affine_map<(n, h, k) -> (n, k)>
#w_map = affine_map<(n, h, k) -> (h, k)>
#o_map = affine_map<(n, h, k) -> (n, h)>
#id = affine_map<(d0, d1) -> (d0, d1)>

/// SwiGLU computed in f32 from the f32 accumulators, rounded once to bf16,
/// then quantized to MXFP8.
// CHECK-LABEL: func.func @swiglu_mxfp8
//  CHECK-SAME: (%[[X:.*]]: tensor<32x128xbf16>, %[[WG:.*]]: tensor<64x128xbf16>, %[[WU:.*]]: tensor<64x128xbf16>)
//       CHECK: %[[Q:.*]]:2 = fusion.paired_projection %[[X]], %[[WG]], %[[WU]] epilogues(none, none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<mxfp8_e4m3, rowwise> via bf16)
//  CHECK-SAME: -> (tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>)
//   CHECK-NOT: fusion.quantize
//   CHECK-NOT: linalg.
//       CHECK: return %[[Q]]#0, %[[Q]]#1

// REVERSED: remark: [Passed] FuseActQuantize | Category:fusion | Function=swiglu_mxfp8 | Remark="fused swiglu and quantize into fusion.gated_act_quantize from gate and up tensors"
// REVERSED: remark: [Passed] FusePairedProjections | Category:fusion | Function=swiglu_mxfp8 | Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu, quantized mxfp8_e4m3 via bf16 (the fusion.gated_act_quantize it fed)"
func.func @swiglu_mxfp8(%x: tensor<32x128xbf16>, %w_gate: tensor<64x128xbf16>, %w_up: tensor<64x128xbf16>)
    -> (tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x64xf32>) -> tensor<32x64xf32>
  // expected-remark @below {{[Passed] FusePairedProjections | Category:fusion | Function=swiglu_mxfp8 | Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu"}}
  %gate = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_gate : tensor<32x128xbf16>, tensor<64x128xbf16>)
      outs(%acc : tensor<32x64xf32>) -> tensor<32x64xf32>
  %up = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_up : tensor<32x128xbf16>, tensor<64x128xbf16>)
      outs(%acc : tensor<32x64xf32>) -> tensor<32x64xf32>
  %n = arith.negf %gate : tensor<32x64xf32>
  %e = math.exp %n : tensor<32x64xf32>
  %one = arith.constant dense<1.0> : tensor<32x64xf32>
  %d = arith.addf %one, %e : tensor<32x64xf32>
  %silu = arith.divf %gate, %d : tensor<32x64xf32>
  %hf = arith.mulf %silu, %up : tensor<32x64xf32>
  %h = arith.truncf %hf : tensor<32x64xf32> to tensor<32x64xbf16>
  %dst0 = tensor.empty() : tensor<32x64xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<32x2xf8E8M0FNU>
  // expected-remark @below {{[Passed] FuseActQuantize | Category:fusion | Function=swiglu_mxfp8 | Remark="fused quantize into the gated fusion.paired_projection (swiglu, mxfp8_e4m3, via bf16): projections, gated activation and quantizer in one op"}}
  %q:2 = fusion.quantize %h as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<32x64xbf16>, tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>) -> (tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
}

/// gate and up rounded to bf16 before SwiGLU (a bf16 Linear's outputs, as
/// in examples/llama_ffn_front.mlir): the op records the roundings
/// (round(bf16) on both accumulators) in either order: in the reversed one
/// the gated quantizer reads the bf16 results of the two rounding generics.
// CHECK-LABEL: func.func @rounded_swiglu_mxfp8
//       CHECK: %[[Q:.*]]:2 = fusion.paired_projection %{{.*}} epilogues(round(bf16) none, round(bf16) none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<mxfp8_e4m3, rowwise> via bf16)
//   CHECK-NOT: fusion.quantize
//   CHECK-NOT: linalg.
//       CHECK: return %[[Q]]#0, %[[Q]]#1

// REVERSED: remark: [Passed] FusePairedProjections | Category:fusion | Function=rounded_swiglu_mxfp8 | Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu of the accumulators rounded to bf16, quantized mxfp8_e4m3 via bf16 (the fusion.gated_act_quantize it fed)"
func.func @rounded_swiglu_mxfp8(%x: tensor<32x128xbf16>, %w_gate: tensor<64x128xbf16>,
                                         %w_up: tensor<64x128xbf16>)
    -> (tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x64xf32>) -> tensor<32x64xf32>
  // expected-remark @below {{[Passed] FusePairedProjections | Category:fusion | Function=rounded_swiglu_mxfp8 | Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu of the accumulators rounded to bf16"}}
  %gate = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_gate : tensor<32x128xbf16>, tensor<64x128xbf16>)
      outs(%acc : tensor<32x64xf32>) -> tensor<32x64xf32>
  %up = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_up : tensor<32x128xbf16>, tensor<64x128xbf16>)
      outs(%acc : tensor<32x64xf32>) -> tensor<32x64xf32>
  %g = arith.truncf %gate : tensor<32x64xf32> to tensor<32x64xbf16>
  %u = arith.truncf %up : tensor<32x64xf32> to tensor<32x64xbf16>
  %gf = arith.extf %g : tensor<32x64xbf16> to tensor<32x64xf32>
  %uf = arith.extf %u : tensor<32x64xbf16> to tensor<32x64xf32>
  %n = arith.negf %gf : tensor<32x64xf32>
  %e = math.exp %n : tensor<32x64xf32>
  %one = arith.constant dense<1.0> : tensor<32x64xf32>
  %d = arith.addf %one, %e : tensor<32x64xf32>
  %silu = arith.divf %gf, %d : tensor<32x64xf32>
  %hf = arith.mulf %silu, %uf : tensor<32x64xf32>
  %h = arith.truncf %hf : tensor<32x64xf32> to tensor<32x64xbf16>
  %dst2 = tensor.empty() : tensor<32x64xf8E4M3FN>
  %dst3 = tensor.empty() : tensor<32x2xf8E8M0FNU>
  // expected-remark @below {{[Passed] FuseActQuantize | Category:fusion | Function=rounded_swiglu_mxfp8 | Remark="fused quantize into the gated fusion.paired_projection (swiglu, mxfp8_e4m3, via bf16): projections, gated activation and quantizer in one op"}}
  %q:2 = fusion.quantize %h as quant<mxfp8_e4m3, rowwise> outs(%dst2, %dst3)
      : (tensor<32x64xbf16>, tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>) -> (tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
}

/// [B, T, K] tokens (a 3-D Linear's input): the op quantizes the collapsed
/// [N, H] value, and its results are expanded back to [B, T, ...].
// CHECK-LABEL: func.func @tokens_3d
//       CHECK: %[[X2:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x16x128xbf16> into tensor<32x128xbf16>
//       CHECK: %[[Q:.*]]:2 = fusion.paired_projection %[[X2]], {{.*}} gated(#fusion.act<swiglu>) quantize(#fusion.quant<mxfp8_e4m3, rowwise> via bf16)
//  CHECK-SAME: -> (tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>)
//   CHECK-DAG: tensor.expand_shape %[[Q]]#0 {{\[\[}}0, 1], [2]] output_shape [2, 16, 64]
//   CHECK-DAG: tensor.expand_shape %[[Q]]#1 {{\[\[}}0, 1], [2]] output_shape [2, 16, 2]
//   CHECK-NOT: fusion.quantize
#x3_map = affine_map<(b, t, h, k) -> (b, t, k)>
#w3_map = affine_map<(b, t, h, k) -> (h, k)>
#o3_map = affine_map<(b, t, h, k) -> (b, t, h)>
func.func @tokens_3d(%x: tensor<2x16x128xbf16>, %w_gate: tensor<64x128xbf16>, %w_up: tensor<64x128xbf16>)
    -> (tensor<2x16x64xf8E4M3FN>, tensor<2x16x2xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x16x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  // expected-remark @below {{[Passed] FusePairedProjections | Category:fusion | Function=tokens_3d | Remark="paired linalg.generic and linalg.generic into fusion.paired_projection gated swiglu"}}
  %gate = linalg.generic {indexing_maps = [#x3_map, #w3_map, #o3_map],
                          iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w_gate : tensor<2x16x128xbf16>, tensor<64x128xbf16>) outs(%acc : tensor<2x16x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x16x64xf32>
  %up = linalg.generic {indexing_maps = [#x3_map, #w3_map, #o3_map],
                        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w_up : tensor<2x16x128xbf16>, tensor<64x128xbf16>) outs(%acc : tensor<2x16x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x16x64xf32>
  %n = arith.negf %gate : tensor<2x16x64xf32>
  %e = math.exp %n : tensor<2x16x64xf32>
  %one = arith.constant dense<1.0> : tensor<2x16x64xf32>
  %d = arith.addf %one, %e : tensor<2x16x64xf32>
  %silu = arith.divf %gate, %d : tensor<2x16x64xf32>
  %hf = arith.mulf %silu, %up : tensor<2x16x64xf32>
  %h = arith.truncf %hf : tensor<2x16x64xf32> to tensor<2x16x64xbf16>
  %dst0 = tensor.empty() : tensor<2x16x64xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<2x16x2xf8E8M0FNU>
  // expected-remark @below {{[Passed] FuseActQuantize | Category:fusion | Function=tokens_3d | Remark="fused quantize into the gated fusion.paired_projection (swiglu, mxfp8_e4m3, via bf16): projections, gated activation and quantizer in one op"}}
  %q:2 = fusion.quantize %h as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<2x16x64xbf16>, tensor<2x16x64xf8E4M3FN>, tensor<2x16x2xf8E8M0FNU>) -> (tensor<2x16x64xf8E4M3FN>, tensor<2x16x2xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<2x16x64xf8E4M3FN>, tensor<2x16x2xf8E8M0FNU>
}

/// The gated value is also returned: the quantizing form does not return
/// it, so the quantizer stays (pairing first: the gated pair; act-quantize
/// first: act-quantize declines too, and the pairing takes SwiGLU).
// CHECK-LABEL: func.func @negative_value_also_returned
//       CHECK: %[[H:.*]] = fusion.paired_projection {{.*}} gated(#fusion.act<swiglu>) outs(
//       CHECK: %[[Q:.*]]:2 = fusion.quantize %[[H]]
//       CHECK: return %[[Q]]#0, %[[Q]]#1, %[[H]]
func.func @negative_value_also_returned(%x: tensor<32x128xbf16>, %w_gate: tensor<64x128xbf16>, %w_up: tensor<64x128xbf16>)
    -> (tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>, tensor<32x64xbf16>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x64xf32>) -> tensor<32x64xf32>
  // expected-remark @below {{[Passed] FusePairedProjections | Category:fusion | Function=negative_value_also_returned | Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu"}}
  %gate = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_gate : tensor<32x128xbf16>, tensor<64x128xbf16>)
      outs(%acc : tensor<32x64xf32>) -> tensor<32x64xf32>
  %up = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_up : tensor<32x128xbf16>, tensor<64x128xbf16>)
      outs(%acc : tensor<32x64xf32>) -> tensor<32x64xf32>
  %n = arith.negf %gate : tensor<32x64xf32>
  %e = math.exp %n : tensor<32x64xf32>
  %one = arith.constant dense<1.0> : tensor<32x64xf32>
  %d = arith.addf %one, %e : tensor<32x64xf32>
  %silu = arith.divf %gate, %d : tensor<32x64xf32>
  %hf = arith.mulf %silu, %up : tensor<32x64xf32>
  %h = arith.truncf %hf : tensor<32x64xf32> to tensor<32x64xbf16>
  %dst0 = tensor.empty() : tensor<32x64xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<32x2xf8E8M0FNU>
  // expected-remark @below {{[Missed] FuseActQuantize | Category:fusion | Function=negative_value_also_returned | Reason="activation has another user", Remark="the gated fusion.paired_projection's result is also used by 'func.return'; the quantizing form does not return it"}}
  %q:2 = fusion.quantize %h as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<32x64xbf16>, tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>) -> (tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>)
  return %q#0, %q#1, %h : tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>, tensor<32x64xbf16>
}

/// FP8 delayed scaling (TransformerEngine's recipe): the scale is the
/// quantizing op's operand, in either pass order (act-quantize first: the
/// gated_act_quantize with the scale, which the pairing takes).
// CHECK-LABEL: func.func @delayed_scale
//  CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<1xf32>)
//       CHECK: %[[Q:.*]]:3 = fusion.paired_projection {{.*}} gated(#fusion.act<swiglu>) quantize(#fusion.quant<fp8_e4m3, rowwise, scaling = delayed> via bf16 scale %[[S]])
//  CHECK-SAME: -> (tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
//   CHECK-NOT: fusion.quantize
//       CHECK: return %[[Q]]#0, %[[Q]]#1, %[[Q]]#2
// REVERSED: remark: [Passed] FuseActQuantize | Category:fusion | Function=delayed_scale | Remark="fused swiglu and quantize into fusion.gated_act_quantize from gate and up tensors"
// REVERSED: remark: [Passed] FusePairedProjections | Category:fusion | Function=delayed_scale | Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu, quantized fp8_e4m3 via bf16 (the fusion.gated_act_quantize it fed)"
func.func @delayed_scale(%x: tensor<32x128xbf16>, %w_gate: tensor<64x128xbf16>, %w_up: tensor<64x128xbf16>,
                         %scale: tensor<1xf32>)
    -> (tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x64xf32>) -> tensor<32x64xf32>
  // expected-remark @below {{[Passed] FusePairedProjections | Category:fusion | Function=delayed_scale | Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu"}}
  %gate = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_gate : tensor<32x128xbf16>, tensor<64x128xbf16>)
      outs(%acc : tensor<32x64xf32>) -> tensor<32x64xf32>
  %up = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_up : tensor<32x128xbf16>, tensor<64x128xbf16>)
      outs(%acc : tensor<32x64xf32>) -> tensor<32x64xf32>
  %n = arith.negf %gate : tensor<32x64xf32>
  %e = math.exp %n : tensor<32x64xf32>
  %one = arith.constant dense<1.0> : tensor<32x64xf32>
  %d = arith.addf %one, %e : tensor<32x64xf32>
  %silu = arith.divf %gate, %d : tensor<32x64xf32>
  %hf = arith.mulf %silu, %up : tensor<32x64xf32>
  %h = arith.truncf %hf : tensor<32x64xf32> to tensor<32x64xbf16>
  %d0 = tensor.empty() : tensor<32x64xf8E4M3FN>
  %d1 = tensor.empty() : tensor<1xf32>
  %d2 = tensor.empty() : tensor<1xf32>
  // expected-remark @below {{[Passed] FuseActQuantize | Category:fusion | Function=delayed_scale | Remark="fused quantize into the gated fusion.paired_projection (swiglu, fp8_e4m3, via bf16): projections, gated activation and quantizer in one op"}}
  %q:3 = fusion.quantize %h scale %scale as quant<fp8_e4m3, rowwise, block = tensor, scaling = delayed> outs(%d0, %d1, %d2)
      : (tensor<32x64xbf16>, tensor<1xf32>, tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return %q#0, %q#1, %q#2 : tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>
}

/// The same on [B, T, K] tokens: the codes are collapsed to [N, H] around
/// the op and expanded back; the per-tensor scale_inv and amax stay [1].
// REVERSED: remark: [Passed] FusePairedProjections | Category:fusion | Function=delayed_scale_3d | Remark="paired linalg.generic and linalg.generic into fusion.paired_projection gated swiglu, quantized fp8_e4m3 via bf16 (the fusion.gated_act_quantize it fed)"
// CHECK-LABEL: func.func @delayed_scale_3d
//       CHECK: %[[Q:.*]]:3 = fusion.paired_projection {{.*}} quantize(#fusion.quant<fp8_e4m3, rowwise, scaling = delayed> via bf16 scale %arg3)
//  CHECK-SAME: -> (tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
//       CHECK: %[[C:.*]] = tensor.expand_shape %[[Q]]#0 {{\[\[}}0, 1], [2]] output_shape [2, 16, 64]
//       CHECK: return %[[C]], %[[Q]]#1, %[[Q]]#2
func.func @delayed_scale_3d(%x: tensor<2x16x128xbf16>, %w_gate: tensor<64x128xbf16>, %w_up: tensor<64x128xbf16>,
                            %scale: tensor<1xf32>)
    -> (tensor<2x16x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x16x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  // expected-remark @below {{[Passed] FusePairedProjections | Category:fusion | Function=delayed_scale_3d | Remark="paired linalg.generic and linalg.generic into fusion.paired_projection gated swiglu"}}
  %gate = linalg.generic {indexing_maps = [#x3_map, #w3_map, #o3_map],
                          iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w_gate : tensor<2x16x128xbf16>, tensor<64x128xbf16>) outs(%acc : tensor<2x16x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x16x64xf32>
  %up = linalg.generic {indexing_maps = [#x3_map, #w3_map, #o3_map],
                        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w_up : tensor<2x16x128xbf16>, tensor<64x128xbf16>) outs(%acc : tensor<2x16x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x16x64xf32>
  %n = arith.negf %gate : tensor<2x16x64xf32>
  %e = math.exp %n : tensor<2x16x64xf32>
  %one = arith.constant dense<1.0> : tensor<2x16x64xf32>
  %d = arith.addf %one, %e : tensor<2x16x64xf32>
  %silu = arith.divf %gate, %d : tensor<2x16x64xf32>
  %hf = arith.mulf %silu, %up : tensor<2x16x64xf32>
  %h = arith.truncf %hf : tensor<2x16x64xf32> to tensor<2x16x64xbf16>
  %d0 = tensor.empty() : tensor<2x16x64xf8E4M3FN>
  %d1 = tensor.empty() : tensor<1xf32>
  %d2 = tensor.empty() : tensor<1xf32>
  // expected-remark @below {{[Passed] FuseActQuantize | Category:fusion | Function=delayed_scale_3d | Remark="fused quantize into the gated fusion.paired_projection (swiglu, fp8_e4m3, via bf16): projections, gated activation and quantizer in one op"}}
  %q:3 = fusion.quantize %h scale %scale as quant<fp8_e4m3, rowwise, block = tensor, scaling = delayed> outs(%d0, %d1, %d2)
      : (tensor<2x16x64xbf16>, tensor<1xf32>, tensor<2x16x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<2x16x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return %q#0, %q#1, %q#2 : tensor<2x16x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>
}

/// NVFP4 with stochastic rounding (an `rng` operand): the quantizing paired
/// op takes none. Pairing first: the pair takes SwiGLU, act-quantize
/// declines with "unsupported scheme". Act-quantize first: it fuses a
/// gated_act_quantize with the rng, and the pairing declines it
/// ("unsupported epilogue"): the gated_act_quantize stays.
// REVERSED: remark: [Missed] FusePairedProjections | Category:fusion | Function=negative_stochastic_rounding | Reason="unsupported epilogue", Remark="the gated quantizer takes an rng operand (stochastic rounding), which the quantizing paired op does not"
// CHECK-LABEL: func.func @negative_stochastic_rounding
//       CHECK: rng %arg3 as quant<nvfp4, rowwise, elem = stochastic>
func.func @negative_stochastic_rounding(%x: tensor<32x128xbf16>, %w_gate: tensor<64x128xbf16>, %w_up: tensor<64x128xbf16>,
                                        %rng: tensor<2xi64>)
    -> (tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>, tensor<1xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x64xf32>) -> tensor<32x64xf32>
  // expected-remark @below {{[Passed] FusePairedProjections | Category:fusion | Function=negative_stochastic_rounding | Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu"}}
  %gate = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_gate : tensor<32x128xbf16>, tensor<64x128xbf16>)
      outs(%acc : tensor<32x64xf32>) -> tensor<32x64xf32>
  %up = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_up : tensor<32x128xbf16>, tensor<64x128xbf16>)
      outs(%acc : tensor<32x64xf32>) -> tensor<32x64xf32>
  %n = arith.negf %gate : tensor<32x64xf32>
  %e = math.exp %n : tensor<32x64xf32>
  %one = arith.constant dense<1.0> : tensor<32x64xf32>
  %d = arith.addf %one, %e : tensor<32x64xf32>
  %silu = arith.divf %gate, %d : tensor<32x64xf32>
  %hf = arith.mulf %silu, %up : tensor<32x64xf32>
  %h = arith.truncf %hf : tensor<32x64xf32> to tensor<32x64xbf16>
  %d0 = tensor.empty() : tensor<32x64xf4E2M1FN>
  %d1 = tensor.empty() : tensor<32x4xf8E4M3FN>
  %d2 = tensor.empty() : tensor<1xf32>
  // expected-remark @below {{[Missed] FuseActQuantize | Category:fusion | Function=negative_stochastic_rounding | Reason="unsupported scheme", Remark="a quantizing fusion.paired_projection takes no rng operand (stochastic rounding)"}}
  %q:3 = fusion.quantize %h rng %rng as quant<nvfp4, rowwise, elem = stochastic> outs(%d0, %d1, %d2)
      : (tensor<32x64xbf16>, tensor<2xi64>, tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>, tensor<1xf32>) -> (tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>, tensor<1xf32>)
  return %q#0, %q#1, %q#2 : tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>, tensor<1xf32>
}
