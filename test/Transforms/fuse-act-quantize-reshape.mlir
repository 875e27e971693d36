// RUN: fusion-opt %s --fusion-act-quantize-pipeline | FileCheck %s
// RUN: fusion-opt %s --fusion-act-quantize-pipeline --remarks-filter=fusion -verify-diagnostics -o /dev/null

// A quantizer that reads the activation through reshapes (torchao's
// to_blocked reads a 3-D activation as [B*T, N]; to_mx with blocks of 16
// reads [T, N] as [T, N/16, 16]): the reshapes move onto the activation's
// input, and the activation, rebuilt on the quantized shape, fuses. An
// elementwise activation commutes with any reshape, and the blocks are the
// quantizer's on its own shape either way.

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @silu_3d_rows
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x64xbf16>)
//       CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x64xbf16> into tensor<6x64xbf16>
//       CHECK: fusion.act_quantize #fusion.act<silu> %[[C]] as quant<mxfp8_e4m3, rowwise> via bf16
//   CHECK-NOT: fusion.quantize
func.func @silu_3d_rows(%x: tensor<2x3x64xbf16>) -> (tensor<6x64xf8E4M3FN>, tensor<6x2xf8E8M0FNU>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<2x3x64xbf16>
  %t = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x3x64xbf16>) outs(%e : tensor<2x3x64xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %f = arith.extf %in : bf16 to f32
    %n = arith.negf %f : f32
    %ex = math.exp %n : f32
    %d = arith.addf %ex, %one : f32
    %y = arith.divf %f, %d : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<2x3x64xbf16>
  %c = tensor.collapse_shape %t [[0, 1, 2]] : tensor<2x3x64xbf16> into tensor<384xbf16>
  %v = tensor.expand_shape %c [[0, 1]] output_shape [6, 64] : tensor<384xbf16> into tensor<6x64xbf16>
  %d0 = tensor.empty() : tensor<6x64xf8E4M3FN>
  %d1 = tensor.empty() : tensor<6x2xf8E8M0FNU>
  // expected-remark @below {{[Passed] FuseActQuantize | Category:fusion | Function=silu_3d_rows | Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %v as quant<mxfp8_e4m3, rowwise> outs(%d0, %d1)
      : (tensor<6x64xbf16>, tensor<6x64xf8E4M3FN>, tensor<6x2xf8E8M0FNU>) -> (tensor<6x64xf8E4M3FN>, tensor<6x2xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<6x64xf8E4M3FN>, tensor<6x2xf8E8M0FNU>
}

// The reshape regroups the last dimension (64 -> 2 x 32 read as rows of
// 32): the activation is rebuilt on [12, 32] and fuses; its blocks are the
// quantizer's rows of 32.
// CHECK-LABEL: func.func @last_dim_reshaped
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x64xbf16>)
//       CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x3x64xbf16> into tensor<384xbf16>
//       CHECK: %[[E:.*]] = tensor.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [12, 32] : tensor<384xbf16> into tensor<12x32xbf16>
//       CHECK: fusion.act_quantize #fusion.act<silu> %[[E]] as quant<mxfp8_e4m3, rowwise> via bf16
//   CHECK-NOT: fusion.quantize
func.func @last_dim_reshaped(%x: tensor<2x3x64xbf16>) -> (tensor<12x32xf8E4M3FN>, tensor<12x1xf8E8M0FNU>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<2x3x64xbf16>
  %t = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x3x64xbf16>) outs(%e : tensor<2x3x64xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %f = arith.extf %in : bf16 to f32
    %n = arith.negf %f : f32
    %ex = math.exp %n : f32
    %d = arith.addf %ex, %one : f32
    %y = arith.divf %f, %d : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<2x3x64xbf16>
  %c = tensor.collapse_shape %t [[0, 1, 2]] : tensor<2x3x64xbf16> into tensor<384xbf16>
  %v = tensor.expand_shape %c [[0, 1]] output_shape [12, 32] : tensor<384xbf16> into tensor<12x32xbf16>
  %d0 = tensor.empty() : tensor<12x32xf8E4M3FN>
  %d1 = tensor.empty() : tensor<12x1xf8E8M0FNU>
  // expected-remark @below {{[Passed] FuseActQuantize | Category:fusion | Function=last_dim_reshaped | Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %v as quant<mxfp8_e4m3, rowwise> outs(%d0, %d1)
      : (tensor<12x32xbf16>, tensor<12x32xf8E4M3FN>, tensor<12x1xf8E8M0FNU>) -> (tensor<12x32xf8E4M3FN>, tensor<12x1xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<12x32xf8E4M3FN>, tensor<12x1xf8E8M0FNU>
}
