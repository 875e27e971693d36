// RUN: mlir-opt %s --load-dialect-plugin=%fusion_libs/FusionPlugin%shlibext \
// RUN:   --load-pass-plugin=%fusion_libs/FusionPlugin%shlibext \
// RUN:   --pass-pipeline="builtin.module(func.func(fusion-normalize-elementwise,canonicalize,fusion-fuse-act-quantize))" \
// RUN: | FileCheck %s
// RUN: mlir-opt %s --load-dialect-plugin=%fusion_libs/FusionPlugin%shlibext \
// RUN:   --load-pass-plugin=%fusion_libs/FusionPlugin%shlibext \
// RUN:   --pass-pipeline="builtin.module(fusion-pipeline{lower-to-llvm=false})" \
// RUN: | FileCheck %s
// RUN: mlir-opt %s --load-dialect-plugin=%fusion_libs/FusionPlugin%shlibext \
// RUN:   --load-pass-plugin=%fusion_libs/FusionPlugin%shlibext \
// RUN:   --pass-pipeline="builtin.module(convert-elementwise-to-linalg,one-shot-bufferize{bufferize-function-boundaries},fusion-lower-to-runtime)" \
// RUN: | FileCheck %s --check-prefix=BUF

// The Debian mlir-opt, with FusionPlugin loaded, parses the fusion dialect,
// runs the fusion passes and pipelines, bufferizes fusion ops and lowers
// them to runtime calls.

// CHECK-LABEL: func.func @relu_quantize
// CHECK: fusion.act_quantize #fusion.act<relu> %{{.*}} as quant<mxfp8_e4m3, rowwise> via bf16
// BUF-LABEL: func.func @relu_quantize
// BUF: call @fusion_rt_mlir_quantize
func.func @relu_quantize(%x: tensor<4x64xbf16>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) {
  %zero = arith.constant dense<0.0> : tensor<4x64xbf16>
  %a = arith.maximumf %x, %zero : tensor<4x64xbf16>
  %dst0 = tensor.empty() : tensor<4x64xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<4x2xf8E8M0FNU>
  %d, %s = fusion.quantize %a as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return %d, %s : tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>
}
