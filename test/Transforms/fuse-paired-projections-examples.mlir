// RUN: fusion-opt %fusion_src/examples/gdn_gates.mlir --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections))' | FileCheck %s --check-prefix=GDN
// RUN: fusion-opt %fusion_src/examples/gdn_gates.mlir --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections))' --remarks-filter=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=GDN-REMARK
// RUN: fusion-opt %fusion_src/examples/llama_gate_up.mlir --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections,fusion-fuse-act-quantize))' | FileCheck %s --check-prefix=LLAMA
// RUN: fusion-opt %fusion_src/examples/llama_ffn_front.mlir --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections,fusion-fuse-act-quantize))' --remarks-filter=fusion 2>&1 | FileCheck %s --check-prefix=FRONT

// The examples through fusion-fuse-paired-projections.

// examples/gdn_gates.mlir: the two gate projections and their epilogues
// become one op; -exp(A_log) is computed over H in front of it.
// GDN-LABEL: func.func @gdn_gates
//  GDN-SAME: (%[[X:.*]]: tensor<1x2048xbf16>, %[[WA:.*]]: tensor<32x2048xbf16>, %[[WB:.*]]: tensor<32x2048xbf16>, %[[DT:.*]]: tensor<32xbf16>, %[[ALOG:.*]]: tensor<32xf32>)
//       GDN: %[[S:.*]] = linalg.generic {{.*}} ins(%[[ALOG]] : tensor<32xf32>)
//       GDN: %[[R:.*]]:2 = fusion.paired_projection %[[X]], %[[WB]], %[[WA]] epilogues(sigmoid, softplus_bias_scale bias %[[DT]] scale %[[S]])
//  GDN-SAME: -> (tensor<1x32xf32>, tensor<1x32xf32>)
//   GDN-NOT: linalg.matmul
//       GDN: return %[[R]]#1, %[[R]]#0
// GDN-REMARK: remark: [Passed] FusePairedProjections | Category:fusion | Function=gdn_gates | Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues sigmoid, softplus_bias_scale"

// examples/llama_gate_up.mlir: gate/up + SwiGLU in f32 and the MXFP8
// quantizer of its bf16 result become one quantizing gated op.
// LLAMA-LABEL: func.func @llama_gate_up
//  LLAMA-SAME: (%[[X:.*]]: tensor<16x4096xbf16>, %[[WG:.*]]: tensor<14336x4096xbf16>, %[[WU:.*]]: tensor<14336x4096xbf16>)
//       LLAMA: %[[Q:.*]]:2 = fusion.paired_projection %[[X]], %[[WG]], %[[WU]] epilogues(none, none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<mxfp8_e4m3, rowwise> via bf16)
//  LLAMA-SAME: -> (tensor<16x14336xf8E4M3FN>, tensor<16x448xf8E8M0FNU>)
//   LLAMA-NOT: fusion.quantize
//   LLAMA-NOT: linalg

// examples/llama_ffn_front.mlir (torch bf16 semantics): gate and up are
// rounded to bf16 before SwiGLU; the pair records those roundings, and
// act-quantize folds the quantizer of its bf16 value into it: the whole
// front is one quantizing fusion.paired_projection.
// FRONT: remark: [Passed] FusePairedProjections | Category:fusion | Function=llama_ffn_front | Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu of the accumulators rounded to bf16"
// FRONT: remark: [Passed] FuseActQuantize | Category:fusion | Function=llama_ffn_front | Remark="fused quantize into the gated fusion.paired_projection (swiglu, mxfp8_e4m3, via bf16): projections, gated activation and quantizer in one op"
// FRONT-LABEL: func.func @llama_ffn_front
//       FRONT: %[[Q:.*]]:2 = fusion.paired_projection %{{.*}} epilogues(round(bf16) none, round(bf16) none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<mxfp8_e4m3, rowwise, scales = swizzled> via bf16)
//   FRONT-NOT: fusion.quantize
//       FRONT: return %[[Q]]#0, %[[Q]]#1
//   FRONT-NOT: linalg.matmul
