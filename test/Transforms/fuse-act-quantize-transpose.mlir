// RUN: fusion-opt %s --fusion-act-quantize-pipeline | FileCheck %s
// RUN: fusion-opt %s --fusion-act-quantize-pipeline --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --fusion-pipeline -o /dev/null

// A rowwise quantizer of a transposed activation (torchao's MX training
// quantizes along dim 0 as to_mx(y.t().contiguous())) is the colwise copy
// of the activation with its data transposed: codes [N, M], scales
// [N, M/32]. fusion-fuse-act-quantize takes it as that and fuses it with the
// activation, and with a rowwise quantizer of the same activation as one op
// with direction both. Spellings: act(x.t()) in one generic (the normalised
// form), a linalg.transpose after the activation, a generic that only
// transposes.

#id = affine_map<(d0, d1) -> (d0, d1)>
#sw = affine_map<(d0, d1) -> (d1, d0)>

// CHECK-LABEL: func.func @silu_of_transpose
//  CHECK-SAME: (%[[X:.*]]: tensor<64x96xbf16>)
//       CHECK: fusion.act_quantize #fusion.act<silu> %[[X]] as quant<mxfp8_e4m3, colwise, colwise = transposed> via bf16 {{.*}} -> (tensor<96x64xf8E4M3FN>, tensor<96x2xf8E8M0FNU>)
//   CHECK-NOT: fusion.quantize
func.func @silu_of_transpose(%x: tensor<64x96xbf16>) -> (tensor<96x64xf8E4M3FN>, tensor<96x2xf8E8M0FNU>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<96x64xbf16>
  %t = linalg.generic {indexing_maps = [#sw, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x96xbf16>) outs(%e : tensor<96x64xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %f = arith.extf %in : bf16 to f32
    %n = arith.negf %f : f32
    %ex = math.exp %n : f32
    %d = arith.addf %ex, %one : f32
    %y = arith.divf %f, %d : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<96x64xbf16>
  %d0 = tensor.empty() : tensor<96x64xf8E4M3FN>
  %s0 = tensor.empty() : tensor<96x2xf8E8M0FNU>
  // expected-remark @below {{Remark="fused silu and quantize into fusion.act_quantize (a rowwise quantizer of the transposed activation as its colwise copy, data transposed)"}}
  %q:2 = fusion.quantize %t as quant<mxfp8_e4m3, rowwise> outs(%d0, %s0) : (tensor<96x64xbf16>, tensor<96x64xf8E4M3FN>, tensor<96x2xf8E8M0FNU>) -> (tensor<96x64xf8E4M3FN>, tensor<96x2xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<96x64xf8E4M3FN>, tensor<96x2xf8E8M0FNU>
}

// CHECK-LABEL: func.func @relu_then_transpose_both
//  CHECK-SAME: (%[[X:.*]]: tensor<64x128xf32>)
//       CHECK: %[[F:.*]]:4 = fusion.act_quantize #fusion.act<relu> %[[X]] as quant<mxfp4, both, colwise = transposed>
//   CHECK-NOT: fusion.quantize
//   CHECK-NOT: linalg.transpose
//       CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#2, %[[F]]#3
func.func @relu_then_transpose_both(%x: tensor<64x128xf32>) -> (tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>, tensor<128x64xf4E2M1FN>, tensor<128x2xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<64x128xf32>
  %d0 = tensor.empty() : tensor<64x128xf4E2M1FN>
  %s0 = tensor.empty() : tensor<64x4xf8E8M0FNU>
  // expected-remark @below {{Remark="fused relu and quantize into fusion.act_quantize (rowwise and colwise quantizers as direction both) (a rowwise quantizer of the transposed activation as its colwise copy, data transposed)"}}
  %q:2 = fusion.quantize %a as quant<mxfp4, rowwise> outs(%d0, %s0) : (tensor<64x128xf32>, tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>) -> (tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>)
  %et = tensor.empty() : tensor<128x64xf32>
  %t = linalg.transpose ins(%a : tensor<64x128xf32>) outs(%et : tensor<128x64xf32>) permutation = [1, 0]
  %d1 = tensor.empty() : tensor<128x64xf4E2M1FN>
  %s1 = tensor.empty() : tensor<128x2xf8E8M0FNU>
  // expected-remark @below {{Remark="fused relu and quantize into fusion.act_quantize (rowwise and colwise quantizers as direction both) (a rowwise quantizer of the transposed activation as its colwise copy, data transposed)"}}
  %c:2 = fusion.quantize %t as quant<mxfp4, rowwise> outs(%d1, %s1) : (tensor<128x64xf32>, tensor<128x64xf4E2M1FN>, tensor<128x2xf8E8M0FNU>) -> (tensor<128x64xf4E2M1FN>, tensor<128x2xf8E8M0FNU>)
  return %q#0, %q#1, %c#0, %c#1 : tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>, tensor<128x64xf4E2M1FN>, tensor<128x2xf8E8M0FNU>
}

// A generic that only transposes (what torch-mlir's .t().contiguous() of
// an activation used twice becomes).
// CHECK-LABEL: func.func @gelu_generic_transpose
//       CHECK: fusion.act_quantize #fusion.act<gelu> %{{.*}} as quant<nvfp4, colwise, nan = ignore, recipe = torchao>
//   CHECK-NOT: fusion.quantize
func.func @gelu_generic_transpose(%x: tensor<32x64xf32>) -> (tensor<64x16xi8>, tensor<64x2xf8E4M3FN>) {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rs2 = arith.constant 0.707106769 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<32x64xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %rs2 : f32
    %er = math.erf %s : f32
    %p = arith.addf %er, %one : f32
    %h = arith.mulf %in, %half : f32
    %y = arith.mulf %h, %p : f32
    linalg.yield %y : f32
  } -> tensor<32x64xf32>
  %et = tensor.empty() : tensor<64x32xf32>
  %t = linalg.generic {indexing_maps = [#sw, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<32x64xf32>) outs(%et : tensor<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<64x32xf32>
  %d0 = tensor.empty() : tensor<64x16xi8>
  %s0 = tensor.empty() : tensor<64x2xf8E4M3FN>
  %a0 = tensor.empty() : tensor<1xf32>
  // expected-remark @below {{Remark="fused gelu and quantize into fusion.act_quantize (a rowwise quantizer of the transposed activation as its colwise copy, data transposed)"}}
  %q:3 = fusion.quantize %t as quant<nvfp4, rowwise, nan = ignore, recipe = torchao> outs(%d0, %s0, %a0) : (tensor<64x32xf32>, tensor<64x16xi8>, tensor<64x2xf8E4M3FN>, tensor<1xf32>) -> (tensor<64x16xi8>, tensor<64x2xf8E4M3FN>, tensor<1xf32>)
  return %q#0, %q#1 : tensor<64x16xi8>, tensor<64x2xf8E4M3FN>
}

// The transpose is also returned (normalised into relu(x.t())): left as it
// is, named.
// CHECK-LABEL: func.func @negative_transpose_used_twice
//       CHECK: %[[T:.*]] = linalg.generic
//       CHECK: fusion.quantize %[[T]] as quant<mxfp8_e4m3, rowwise>
func.func @negative_transpose_used_twice(%x: tensor<64x128xf32>) -> (tensor<128x64xf8E4M3FN>, tensor<128x2xf8E8M0FNU>, tensor<128x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<64x128xf32>
  %et = tensor.empty() : tensor<128x64xf32>
  %t = linalg.transpose ins(%a : tensor<64x128xf32>) outs(%et : tensor<128x64xf32>) permutation = [1, 0]
  %d1 = tensor.empty() : tensor<128x64xf8E4M3FN>
  %s1 = tensor.empty() : tensor<128x2xf8E8M0FNU>
  // expected-remark @below {{Reason="unsupported activation", Remark="the quantizer reads a transpose, not taken as the colwise copy of what it transposes: the transposed value is also used elsewhere"}}
  %c:2 = fusion.quantize %t as quant<mxfp8_e4m3, rowwise> outs(%d1, %s1) : (tensor<128x64xf32>, tensor<128x64xf8E4M3FN>, tensor<128x2xf8E8M0FNU>) -> (tensor<128x64xf8E4M3FN>, tensor<128x2xf8E8M0FNU>)
  return %c#0, %c#1, %t : tensor<128x64xf8E4M3FN>, tensor<128x2xf8E8M0FNU>, tensor<128x64xf32>
}

// FP8 1x128 groups are rowwise only: a quantizer of a transposed activation
// stays on the transpose, named.
// CHECK-LABEL: func.func @negative_fp8_block_transposed
//       CHECK: fusion.quantize %{{.*}} as quant<fp8_block_e4m3, rowwise>
func.func @negative_fp8_block_transposed(%x: tensor<128x256xbf16>) -> (tensor<256x128xf8E4M3FN>, tensor<256x1xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<256x128xbf16>
  %t = linalg.generic {indexing_maps = [#sw, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<128x256xbf16>) outs(%e : tensor<256x128xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %f = arith.extf %in : bf16 to f32
    %n = arith.negf %f : f32
    %ex = math.exp %n : f32
    %d = arith.addf %ex, %one : f32
    %y = arith.divf %f, %d : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<256x128xbf16>
  %d0 = tensor.empty() : tensor<256x128xf8E4M3FN>
  %s0 = tensor.empty() : tensor<256x1xf32>
  // expected-remark @below {{Reason="unsupported activation", Remark="the quantizer reads a transpose, not taken as the colwise copy of what it transposes: the scheme has no colwise copy that equals it (FP8 block formats are rowwise only; NVFP4 with 2D blocks or stochastic rounding)"}}
  %q:2 = fusion.quantize %t as quant<fp8_block_e4m3, rowwise> outs(%d0, %s0) : (tensor<256x128xbf16>, tensor<256x128xf8E4M3FN>, tensor<256x1xf32>) -> (tensor<256x128xf8E4M3FN>, tensor<256x1xf32>)
  return %q#0, %q#1 : tensor<256x128xf8E4M3FN>, tensor<256x1xf32>
}

// FP8 per tensor: the transposed copy of the codes is the op's colwise copy
// (one scale for the tensor), written by the same op with direction both.
// CHECK-LABEL: func.func @fp8_codes_transposed
//       CHECK: %[[F:.*]]:4 = fusion.act_quantize #fusion.act<relu> %{{.*}} as quant<fp8_e4m3, both, colwise = transposed>
//   CHECK-NOT: linalg.transpose
//       CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#2
func.func @fp8_codes_transposed(%x: tensor<32x64xf32>) -> (tensor<32x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>, tensor<1xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<32x64xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<32x64xf32>
  %d0 = tensor.empty() : tensor<32x64xf8E4M3FN>
  %s0 = tensor.empty() : tensor<1xf32>
  %m0 = tensor.empty() : tensor<1xf32>
  // expected-remark @+2 {{Remark="fused relu and quantize into fusion.act_quantize"}}
  // expected-remark @below {{Remark="the transpose of this fusion.act_quantize's FP8 codes is its colwise copy (one scale per tensor): written by the same op, direction both"}}
  %q:3 = fusion.quantize %a as quant<fp8_e4m3, rowwise> outs(%d0, %s0, %m0) : (tensor<32x64xf32>, tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  %et = tensor.empty() : tensor<64x32xf8E4M3FN>
  %t = linalg.transpose ins(%q#0 : tensor<32x64xf8E4M3FN>) outs(%et : tensor<64x32xf8E4M3FN>) permutation = [1, 0]
  return %q#0, %t, %q#1 : tensor<32x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>, tensor<1xf32>
}

// MX codes transposed are not the colwise copy (its blocks run down the
// columns): the transpose (a generic once normalised) stays.
// CHECK-LABEL: func.func @negative_mx_codes_transposed
//       CHECK: %[[F:.*]]:2 = fusion.act_quantize #fusion.act<relu> %{{.*}} as quant<mxfp8_e4m3, rowwise>
//       CHECK: linalg.generic {{.*}} ins(%[[F]]#0
func.func @negative_mx_codes_transposed(%x: tensor<32x64xf32>) -> (tensor<64x32xf8E4M3FN>, tensor<32x2xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<32x64xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<32x64xf32>
  %d0 = tensor.empty() : tensor<32x64xf8E4M3FN>
  %s0 = tensor.empty() : tensor<32x2xf8E8M0FNU>
  // expected-remark @below {{Remark="fused relu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %a as quant<mxfp8_e4m3, rowwise> outs(%d0, %s0) : (tensor<32x64xf32>, tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>) -> (tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>)
  %et = tensor.empty() : tensor<64x32xf8E4M3FN>
  %t = linalg.transpose ins(%q#0 : tensor<32x64xf8E4M3FN>) outs(%et : tensor<64x32xf8E4M3FN>) permutation = [1, 0]
  return %t, %q#1 : tensor<64x32xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
}
