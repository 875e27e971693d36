// RUN: fusion-opt %fusion_src/examples/llama_ffn_front.mlir --fusion-act-quantize-pipeline | FileCheck %s
// RUN: fusion-opt %fusion_src/examples/llama_ffn_front.mlir --fusion-act-quantize-pipeline --remarks-filter=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// The Llama FFN front of examples/llama_ffn_front.mlir: the SwiGLU and the
// MXFP8 quantizer become one fusion.gated_act_quantize reading the bf16
// projections; the projections stay linalg.matmul. The bf16 rounding of the
// projections, which elementwise fusion merged into the SwiGLU body, is
// materialised again so that the fused op reads exactly what the unfused
// graph computed with.

// CHECK-LABEL: func.func @llama_ffn_front
//  CHECK-SAME: (%[[X:.*]]: tensor<128x4096xbf16>, %[[WG:.*]]: tensor<14336x4096xbf16>, %[[WU:.*]]: tensor<14336x4096xbf16>)
//       CHECK: %[[G32:.*]] = linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[X]], %[[WG]] :
//       CHECK: %[[U32:.*]] = linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[X]], %[[WU]] :
//       CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[G32]] : tensor<128x14336xf32>) outs(%{{.*}} : tensor<128x14336xbf16>)
//  CHECK-NEXT: ^bb0
//  CHECK-NEXT:   arith.truncf
//  CHECK-NEXT:   linalg.yield
//       CHECK: %[[U:.*]] = linalg.generic {{.*}} ins(%[[U32]] : tensor<128x14336xf32>) outs(%{{.*}} : tensor<128x14336xbf16>)
//  CHECK-NEXT: ^bb0
//  CHECK-NEXT:   arith.truncf
//  CHECK-NEXT:   linalg.yield
//       CHECK: %[[Q:.*]]:2 = fusion.gated_act_quantize #fusion.act<swiglu> %[[G]], %[[U]] as quant<mxfp8_e4m3, rowwise, scales = swizzled> via bf16 outs({{.*}}) : (tensor<128x14336xbf16>, tensor<128x14336xbf16>, tensor<128x14336xf8E4M3FN>, tensor<128x448xf8E8M0FNU>) -> (tensor<128x14336xf8E4M3FN>, tensor<128x448xf8E8M0FNU>)
//   CHECK-NOT: fusion.quantize
//   CHECK-NOT: math.exp
//       CHECK: return %[[Q]]#0, %[[Q]]#1

// REMARK: remark: [Passed] FuseActQuantize | Category:fusion | Function=llama_ffn_front | Remark="fused swiglu and quantize into fusion.gated_act_quantize from gate and up tensors"
