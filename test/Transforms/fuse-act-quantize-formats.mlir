// RUN: fusion-opt %s --fusion-act-quantize-pipeline | FileCheck %s --check-prefix=ALL
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-act-quantize{formats=mxfp8_e4m3,mxfp8_e5m2}))' --remarks-filter=fusion -verify-diagnostics | FileCheck %s --check-prefix=MX
// RUN: not fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-fuse-act-quantize{formats=mxfp9}))' 2>&1 | FileCheck %s --check-prefix=BAD

// The `formats` option restricts fusion to the listed formats, e.g. to
// MXFP8 for a deployment on the CUDA kernels of issue 4. By default every
// format that fusion_rt_act_quantize / fusion_rt_gated_act_quantize take is
// fused (all of them: fusion_rt.h puts no format limit on the fused entry
// points; only dbias with a gated activation is refused, see
// fuse-act-quantize-gated.mlir and fuse-act-quantize-backward.mlir).

// BAD: unknown format 'mxfp9' in 'formats'

!x = tensor<32x64xf32>

/// MXFP8 is in the list: fused.
// ALL-LABEL: func.func @silu_mxfp8
//       ALL: fusion.act_quantize #fusion.act<silu>
// MX-LABEL: func.func @silu_mxfp8
//       MX: fusion.act_quantize #fusion.act<silu>
func.func @silu_mxfp8(%x: !x) -> (tensor<32x64xf8E5M2>, tensor<32x2xf8E8M0FNU>) {
  %one = arith.constant dense<1.0> : !x
  %n = arith.negf %x : !x
  %e = math.exp %n : !x
  %den = arith.addf %one, %e : !x
  %y = arith.divf %x, %den : !x
  %dst0 = tensor.empty() : tensor<32x64xf8E5M2>
  %dst1 = tensor.empty() : tensor<32x2xf8E8M0FNU>
  // expected-remark @below {{Remark="fused silu and quantize into fusion.act_quantize"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e5m2, rowwise> outs(%dst0, %dst1)
      : (!x, tensor<32x64xf8E5M2>, tensor<32x2xf8E8M0FNU>) -> (tensor<32x64xf8E5M2>, tensor<32x2xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<32x64xf8E5M2>, tensor<32x2xf8E8M0FNU>
}

/// NVFP4 is not in the list: declined, the IR is left as it was.
// ALL-LABEL: func.func @negative_silu_nvfp4_not_listed
//       ALL: fusion.act_quantize #fusion.act<silu> %{{.*}} as quant<nvfp4, rowwise>
// MX-LABEL: func.func @negative_silu_nvfp4_not_listed
//       MX: linalg.generic
//       MX: fusion.quantize %{{.*}} as quant<nvfp4, rowwise>
func.func @negative_silu_nvfp4_not_listed(%x: !x) -> (tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>, tensor<1xf32>) {
  %one = arith.constant dense<1.0> : !x
  %n = arith.negf %x : !x
  %e = math.exp %n : !x
  %den = arith.addf %one, %e : !x
  %y = arith.divf %x, %den : !x
  %dst2 = tensor.empty() : tensor<32x64xf4E2M1FN>
  %dst3 = tensor.empty() : tensor<32x4xf8E4M3FN>
  %dst4 = tensor.empty() : tensor<1xf32>
  // expected-remark @below {{[Missed] FuseActQuantize | Category:fusion | Function=negative_silu_nvfp4_not_listed | Reason="unsupported quantization format for fused activation", Remark="format nvfp4 is not in 'formats'"}}
  %q:3 = fusion.quantize %y as quant<nvfp4, rowwise> outs(%dst2, %dst3, %dst4)
      : (!x, tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>, tensor<1xf32>) -> (tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>, tensor<1xf32>)
  return %q#0, %q#1, %q#2 : tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>, tensor<1xf32>
}

/// FP8 delayed scaling: the quantizer's scale operand moves to the fused op.
// ALL-LABEL: func.func @gelu_fp8_delayed
//  ALL-SAME: %[[SCALE:[a-z0-9]+]]: tensor<1xf32>
//       ALL: fusion.act_quantize #fusion.act<gelu> %{{.*}} scale %[[SCALE]] as quant<fp8_e4m3
// MX-LABEL: func.func @gelu_fp8_delayed
//       MX: fusion.quantize
func.func @gelu_fp8_delayed(%x: !x, %scale: tensor<1xf32>) -> (tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) {
  %k = arith.constant dense<0.70710678> : !x
  %half = arith.constant dense<0.5> : !x
  %one = arith.constant dense<1.0> : !x
  %xs = arith.mulf %x, %k : !x
  %er = math.erf %xs : !x
  %a = arith.addf %er, %one : !x
  %hx = arith.mulf %half, %x : !x
  %y = arith.mulf %hx, %a : !x
  %dst5 = tensor.empty() : tensor<32x64xf8E4M3FN>
  %dst6 = tensor.empty() : tensor<1xf32>
  %dst7 = tensor.empty() : tensor<1xf32>
  // expected-remark @below {{Reason="unsupported quantization format for fused activation", Remark="format fp8_e4m3 is not in 'formats'"}}
  %q:3 = fusion.quantize %y scale %scale as quant<fp8_e4m3, rowwise, block = tensor, scaling = delayed> outs(%dst5, %dst6, %dst7)
      : (!x, tensor<1xf32>, tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return %q#0, %q#1, %q#2 : tensor<32x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>
}
