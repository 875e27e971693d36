// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections,fusion-fuse-act-quantize))' | FileCheck %s
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections,fusion-fuse-act-quantize))' --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-act-quantize,fusion-fuse-paired-projections))' | FileCheck %s --check-prefix=REVERSED

// Composition of fusion-fuse-paired-projections with fusion-fuse-act-quantize
// on gate/up -> SwiGLU -> MXFP8 (the Llama FFN front). The documented order
// is paired projections first: the gated fusion.paired_projection writes
// the SwiGLU output once (in the type the graph rounds it to) and the
// quantizer stays a fusion.quantize of it (act-quantize finds no activation
// left to fuse). In the other order act-quantize takes SwiGLU + quantize and
// the pass pairs the two bare projections (epilogues none, none) feeding the
// fusion.gated_act_quantize; both are valid, the first moves less data
// (one [N, I] bf16 intermediate instead of two [N, I] f32 ones).

#x_map = affine_map<(n, h, k) -> (n, k)>
#w_map = affine_map<(n, h, k) -> (h, k)>
#o_map = affine_map<(n, h, k) -> (n, h)>
#id = affine_map<(d0, d1) -> (d0, d1)>

/// SwiGLU computed in f32 from the f32 accumulators, rounded once to bf16,
/// then quantized to MXFP8.
// CHECK-LABEL: func.func @swiglu_mxfp8
//  CHECK-SAME: (%[[X:.*]]: tensor<32x128xbf16>, %[[WG:.*]]: tensor<64x128xbf16>, %[[WU:.*]]: tensor<64x128xbf16>)
//       CHECK: %[[H:.*]] = fusion.paired_projection %[[X]], %[[WG]], %[[WU]] epilogues(none, none) gated(#fusion.act<swiglu>)
//  CHECK-SAME: -> tensor<32x64xbf16>
//       CHECK: %[[Q:.*]]:2 = fusion.quantize %[[H]] as quant<mxfp8_e4m3, rowwise>
//       CHECK: return %[[Q]]#0, %[[Q]]#1

// REVERSED-LABEL: func.func @swiglu_mxfp8
//       REVERSED: %[[P:.*]]:2 = fusion.paired_projection {{.*}} epilogues(none, none) outs(
//       REVERSED: fusion.gated_act_quantize #fusion.act<swiglu> %[[P]]#0, %[[P]]#1 as quant<mxfp8_e4m3, rowwise> via bf16
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
  // expected-remark @below {{[Missed] FuseActQuantize | Category:fusion | Function=swiglu_mxfp8 | Reason="no activation to fuse"}}
  %q:2 = fusion.quantize %h as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<32x64xbf16>, tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>) -> (tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
}

/// gate and up rounded to bf16 before SwiGLU (a bf16 Linear's outputs, as
/// in examples/llama_ffn_front.mlir): the pair records the roundings
/// (round(bf16) on both accumulators) and the quantizer stays a
/// fusion.quantize of the gated result. In the other order act-quantize
/// takes SwiGLU + quantize and the bare projections pair with `none`
/// epilogues whose results are the bf16-rounded accumulators.
// CHECK-LABEL: func.func @rounded_swiglu_mxfp8
//       CHECK: %[[H:.*]] = fusion.paired_projection %{{.*}} epilogues(round(bf16) none, round(bf16) none) gated(#fusion.act<swiglu>)
//  CHECK-SAME: -> tensor<32x64xbf16>
//       CHECK: fusion.quantize %[[H]] as quant<mxfp8_e4m3, rowwise>
//   CHECK-NOT: linalg.matmul

// REVERSED-LABEL: func.func @rounded_swiglu_mxfp8
//       REVERSED: %[[P:.*]]:2 = fusion.paired_projection {{.*}} epilogues(none, none) outs(
//  REVERSED-SAME: -> (tensor<32x64xbf16>, tensor<32x64xbf16>)
//       REVERSED: fusion.gated_act_quantize #fusion.act<swiglu> %[[P]]#0, %[[P]]#1 as quant<mxfp8_e4m3, rowwise> via bf16
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
  // expected-remark @below {{[Missed] FuseActQuantize | Category:fusion | Function=rounded_swiglu_mxfp8 | Reason="no activation to fuse"}}
  %q:2 = fusion.quantize %h as quant<mxfp8_e4m3, rowwise> outs(%dst2, %dst3)
      : (tensor<32x64xbf16>, tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>) -> (tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
}
