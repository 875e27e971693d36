// RUN: fusion-opt %s --one-shot-bufferize=bufferize-function-boundaries -split-input-file | FileCheck %s --check-prefix=BUF
// RUN: fusion-opt %s --one-shot-bufferize=bufferize-function-boundaries --fusion-lower-to-runtime -split-input-file | FileCheck %s
// RUN: fusion-opt %s --one-shot-bufferize=bufferize-function-boundaries --canonicalize --cse --canonicalize -split-input-file | FileCheck %s --check-prefix=INPLACE
// RUN: fusion-opt %s --one-shot-bufferize=bufferize-function-boundaries --fusion-lower-to-runtime --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=NULLROW

// Bufferization keeps each fusion op, now on memrefs, writing its
// destinations' buffers (destination style). fusion-lower-to-runtime then
// turns it into one call to its runtime entry point, with a table row per
// buffer (inputs, then destinations) and an assert on the returned status.

// BUF-LABEL: func.func @quantize
// BUF-SAME:    (%[[X:.*]]: memref<128x256xbf16, strided<[?, ?], offset: ?>>)
// BUF-DAG:     %[[D:.*]] = memref.alloc() {{.*}} : memref<128x256xf8E4M3FN>
// BUF-DAG:     %[[S:.*]] = memref.alloc() {{.*}} : memref<128x8xf8E8M0FNU>
// BUF:         fusion.quantize %[[X]] as quant<mxfp8_e4m3, rowwise> outs(%[[D]], %[[S]]) : (memref<128x256xbf16, strided<[?, ?], offset: ?>>, memref<128x256xf8E4M3FN>, memref<128x8xf8E8M0FNU>) -> ()
// BUF:         return %[[D]], %[[S]]

// CHECK-LABEL: func.func private @fusion_rt_mlir_quantize(i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, f32, memref<?x12xi64>) -> i32 attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @quantize
// CHECK-SAME:    (%[[X:.*]]: memref<128x256xbf16, strided<[?, ?], offset: ?>>)
// CHECK-DAG:     %[[D:.*]] = memref.alloc() {{.*}} : memref<128x256xf8E4M3FN>
// CHECK-DAG:     %[[S:.*]] = memref.alloc() {{.*}} : memref<128x8xf8E8M0FNU>
// CHECK:         %[[T:.*]] = memref.alloca() : memref<3x12xi64>
// CHECK:         memref.extract_aligned_pointer_as_index %[[X]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[D]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[S]]
// CHECK:         %[[TC:.*]] = memref.cast %[[T]] : memref<3x12xi64> to memref<?x12xi64>
// CHECK:         %[[ST:.*]] = call @fusion_rt_mlir_quantize({{.*}}, %[[TC]])
// CHECK:         %[[OK:.*]] = arith.cmpi eq, %[[ST]]
// CHECK:         cf.assert %[[OK]], "fusion runtime call fusion_rt_mlir_quantize failed (its message is on stderr)"
// CHECK:         return %[[D]], %[[S]]
func.func @quantize(%x: tensor<128x256xbf16>) -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>) {
  %dst0 = tensor.empty() : tensor<128x256xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<128x8xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<128x256xbf16>, tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>) -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
  return %d, %s : tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>
}

// -----

// Dynamic result sizes come from the same shape rules as the verifier:
// scale columns = ceil(N / 32).
// CHECK-DAG: #[[$CEIL:.*]] = affine_map<()[s0] -> (s0 ceildiv 32)>
// CHECK-LABEL: func.func @quantize_dynamic
// CHECK-SAME:    (%[[X:.*]]: memref<?x?xbf16
// CHECK-DAG:     %[[M:.*]] = memref.dim %[[X]], %c0
// CHECK-DAG:     %[[N:.*]] = memref.dim %[[X]], %c1
// CHECK-DAG:     %[[NB:.*]] = affine.apply #[[$CEIL]]()[%[[N]]]
// CHECK-DAG:     memref.alloc(%[[M]], %[[N]]) {{.*}} : memref<?x?xf8E4M3FN>
// CHECK-DAG:     memref.alloc(%[[M]], %[[NB]]) {{.*}} : memref<?x?xf8E8M0FNU>
// CHECK:         call @fusion_rt_mlir_quantize
func.func @quantize_dynamic(%x: tensor<?x?xbf16>) -> (tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>) {
  %dst_c0 = arith.constant 0 : index
  %dst_c1 = arith.constant 1 : index
  %dst_m = tensor.dim %x, %dst_c0 : tensor<?x?xbf16>
  %dst_k = tensor.dim %x, %dst_c1 : tensor<?x?xbf16>
  %dst_kb = affine.apply affine_map<()[s0] -> (s0 ceildiv 32)>()[%dst_k]
  %dst2 = tensor.empty(%dst_m, %dst_k) : tensor<?x?xf8E4M3FN>
  %dst3 = tensor.empty(%dst_m, %dst_kb) : tensor<?x?xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%dst2, %dst3)
      : (tensor<?x?xbf16>, tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>) -> (tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>)
  return %d, %s : tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func private @fusion_rt_mlir_act_quantize(i32, i32, i32, f32, f32, f32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, f32, memref<?x12xi64>) -> i32
// CHECK-LABEL: func.func @act_quantize_dbias
// CHECK:         memref.alloc() {{.*}} : memref<256xf32>
// CHECK:         memref.alloca() : memref<5x12xi64>
// CHECK:         call @fusion_rt_mlir_act_quantize
func.func @act_quantize_dbias(%x: tensor<64x256xbf16>, %dy: tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<256xf32>) {
  %dst4 = tensor.empty() : tensor<64x256xf8E4M3FN>
  %dst5 = tensor.empty() : tensor<64x8xf8E8M0FNU>
  %dst6 = tensor.empty() : tensor<256xf32>
  %d, %s, %b = fusion.act_quantize #fusion.act<dgelu> %x grad %dy as quant<mxfp8_e4m3, rowwise> via bf16 dbias outs(%dst4, %dst5, %dst6)
      : (tensor<64x256xbf16>, tensor<64x256xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<256xf32>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<256xf32>)
  return %d, %s, %b : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<256xf32>
}

// -----

// A packed [M, ?] gated input: the output width is half the input's.
// CHECK-DAG: #[[$HALF:.*]] = affine_map<()[s0] -> (s0 floordiv 2)>
// CHECK-LABEL: func.func @gated_dynamic
// CHECK:         %[[W:.*]] = memref.dim %{{.*}}, %c1
// CHECK:         %[[K:.*]] = affine.apply #[[$HALF]]()[%[[W]]]
// CHECK:         memref.alloc(%[[K]]) {{.*}} : memref<64x?xf8E4M3FN>
// CHECK:         call @fusion_rt_mlir_gated_act_quantize
func.func @gated_dynamic(%x: tensor<64x?xbf16>) -> (tensor<64x?xf8E4M3FN>, tensor<64x?xf8E8M0FNU>) {
  %dst_g1 = arith.constant 1 : index
  %dst_w = tensor.dim %x, %dst_g1 : tensor<64x?xbf16>
  %dst_k2 = affine.apply affine_map<()[s0] -> (s0 floordiv 2)>()[%dst_w]
  %dst_kb2 = affine.apply affine_map<()[s0] -> ((s0 floordiv 2) ceildiv 32)>()[%dst_w]
  %dst7 = tensor.empty(%dst_k2) : tensor<64x?xf8E4M3FN>
  %dst8 = tensor.empty(%dst_kb2) : tensor<64x?xf8E8M0FNU>
  %d, %s = fusion.gated_act_quantize #fusion.act<swiglu> %x as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst7, %dst8)
      : (tensor<64x?xbf16>, tensor<64x?xf8E4M3FN>, tensor<64x?xf8E8M0FNU>) -> (tensor<64x?xf8E4M3FN>, tensor<64x?xf8E8M0FNU>)
  return %d, %s : tensor<64x?xf8E4M3FN>, tensor<64x?xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func private @fusion_rt_mlir_paired_projection(i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, memref<?x12xi64>) -> i32
// CHECK-LABEL: func.func @paired
// CHECK:         memref.alloca() : memref<7x12xi64>
// CHECK:         call @fusion_rt_mlir_paired_projection
func.func @paired(%x: tensor<1x2048xbf16>, %wa: tensor<32x2048xbf16>, %wb: tensor<32x2048xbf16>, %dt: tensor<32xf32>, %s: tensor<32xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>) {
  %dst9 = tensor.empty() : tensor<1x32xf32>
  %dst10 = tensor.empty() : tensor<1x32xf32>
  %g, %b = fusion.paired_projection %x, %wa, %wb epilogues(softplus_bias_scale bias %dt scale %s, sigmoid) outs(%dst9, %dst10)
      : (tensor<1x2048xbf16>, tensor<32x2048xbf16>, tensor<32x2048xbf16>, tensor<32xf32>, tensor<32xf32>, tensor<1x32xf32>, tensor<1x32xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>)
  return %g, %b : tensor<1x32xf32>, tensor<1x32xf32>
}

// -----

// round(bf16) / round(f16) pass fusion_rt_accumulator_round (1 / 2) after
// the epilogue kinds, the gated kind and kn.
// CHECK-LABEL: func.func @paired_rounded
// CHECK:        %[[EPI0:.*]] = arith.constant 4 : i32
// CHECK-NEXT:    %[[EPI1:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    %[[GATED:.*]] = arith.constant -1 : i32
// CHECK-NEXT:    %[[KN:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[R0:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[R1:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    %[[HB0:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[HS0:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[HB1:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[HS1:.*]] = arith.constant 0 : i32
// CHECK:         call @fusion_rt_mlir_paired_projection(%[[EPI0]], %[[EPI1]], %[[GATED]], %[[KN]], %[[R0]], %[[R1]], %[[HB0]], %[[HS0]], %[[HB1]], %[[HS1]], %{{.*}})
func.func @paired_rounded(%x: tensor<1x2048xbf16>, %wa: tensor<32x2048xbf16>, %wb: tensor<32x2048xbf16>, %dt: tensor<32xf32>, %s: tensor<32xf32>) -> (tensor<1x32xf32>, tensor<1x32xbf16>) {
  %dst9 = tensor.empty() : tensor<1x32xf32>
  %dst10 = tensor.empty() : tensor<1x32xbf16>
  %g, %b = fusion.paired_projection %x, %wa, %wb epilogues(round(bf16) softplus_bias_scale bias %dt scale %s, round(f16) sigmoid) outs(%dst9, %dst10)
      : (tensor<1x2048xbf16>, tensor<32x2048xbf16>, tensor<32x2048xbf16>, tensor<32xf32>, tensor<32xf32>, tensor<1x32xf32>, tensor<1x32xbf16>) -> (tensor<1x32xf32>, tensor<1x32xbf16>)
  return %g, %b : tensor<1x32xf32>, tensor<1x32xbf16>
}

// -----

// softplus_log_bias_scale passes fusion_rt_epilogue_kind 5, with its bias
// and scale.
// CHECK-LABEL: func.func @paired_softplus_log
// CHECK:        %[[EPI0:.*]] = arith.constant 5 : i32
// CHECK-NEXT:    %[[EPI1:.*]] = arith.constant 2 : i32
// CHECK:         %[[HB0:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[HS0:.*]] = arith.constant 1 : i32
// CHECK:         call @fusion_rt_mlir_paired_projection(%[[EPI0]], %[[EPI1]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[HB0]], %[[HS0]],
func.func @paired_softplus_log(%x: tensor<1x2048xbf16>, %wa: tensor<32x2048xbf16>, %wb: tensor<32x2048xbf16>, %dt: tensor<32xf32>, %s: tensor<32xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>) {
  %dst9 = tensor.empty() : tensor<1x32xf32>
  %dst10 = tensor.empty() : tensor<1x32xf32>
  %g, %b = fusion.paired_projection %x, %wa, %wb epilogues(softplus_log_bias_scale bias %dt scale %s, sigmoid) outs(%dst9, %dst10)
      : (tensor<1x2048xbf16>, tensor<32x2048xbf16>, tensor<32x2048xbf16>, tensor<32xf32>, tensor<32xf32>, tensor<1x32xf32>, tensor<1x32xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>)
  return %g, %b : tensor<1x32xf32>, tensor<1x32xf32>
}

// -----

// softplus_stable_bias_scale passes fusion_rt_epilogue_kind 6.
// CHECK-LABEL: func.func @paired_softplus_stable
// CHECK:        %[[EPI0:.*]] = arith.constant 6 : i32
// CHECK-NEXT:    %[[EPI1:.*]] = arith.constant 0 : i32
// CHECK:         call @fusion_rt_mlir_paired_projection(%[[EPI0]], %[[EPI1]],
func.func @paired_softplus_stable(%x: tensor<4x64xf32>, %wa: tensor<32x64xf32>, %wb: tensor<32x64xf32>, %dt: tensor<32xf32>, %s: tensor<32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %dst9 = tensor.empty() : tensor<4x32xf32>
  %dst10 = tensor.empty() : tensor<4x32xf32>
  %g, %b = fusion.paired_projection %x, %wa, %wb epilogues(softplus_stable_bias_scale bias %dt scale %s, none) outs(%dst9, %dst10)
      : (tensor<4x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<32xf32>, tensor<32xf32>, tensor<4x32xf32>, tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>)
  return %g, %b : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// round(bf16, with_bias) / round(f16, with_bias) pass 3 / 4 (the bias added
// before the rounding: a Linear with bias=True).
// CHECK-LABEL: func.func @paired_rounded_with_bias
// CHECK:        %[[KN:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[R0:.*]] = arith.constant 3 : i32
// CHECK-NEXT:    %[[R1:.*]] = arith.constant 4 : i32
// CHECK:         call @fusion_rt_mlir_paired_projection(%{{.*}}, %{{.*}}, %{{.*}}, %[[KN]], %[[R0]], %[[R1]],
func.func @paired_rounded_with_bias(%x: tensor<4x64xbf16>, %w0: tensor<32x64xbf16>, %w1: tensor<32x64xbf16>, %b0: tensor<32xbf16>, %b1: tensor<32xf32>) -> (tensor<4x32xbf16>, tensor<4x32xf32>) {
  %d0 = tensor.empty() : tensor<4x32xbf16>
  %d1 = tensor.empty() : tensor<4x32xf32>
  %a, %b = fusion.paired_projection %x, %w0, %w1 epilogues(round(bf16, with_bias) bias bias %b0, round(f16, with_bias) sigmoid bias %b1) outs(%d0, %d1)
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<32xbf16>, tensor<32xf32>, tensor<4x32xbf16>, tensor<4x32xf32>) -> (tensor<4x32xbf16>, tensor<4x32xf32>)
  return %a, %b : tensor<4x32xbf16>, tensor<4x32xf32>
}

// -----

// The quantizing gated pair (the FFN front) calls its own entry point: the
// pair's scalars (swiglu = 7, both accumulators rounded to bf16), then the
// intermediate dtype (f32 = 2) and the scheme's (format e5m2 = 1 first).
// CHECK-LABEL: func.func private @fusion_rt_mlir_paired_projection_quantize(i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, f32, memref<?x12xi64>) -> i32
// CHECK-LABEL: func.func @paired_quantize
// CHECK:        %[[EPI0:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[EPI1:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[GATED:.*]] = arith.constant 7 : i32
// CHECK-NEXT:    %[[KN:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[R0:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[R1:.*]] = arith.constant 1 : i32
// CHECK-COUNT-4: arith.constant 0 : i32
// CHECK-NEXT:    %[[INTER:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    %[[FMT:.*]] = arith.constant 1 : i32
// CHECK:         call @fusion_rt_mlir_paired_projection_quantize(%[[EPI0]], %[[EPI1]], %[[GATED]], %[[KN]], %[[R0]], %[[R1]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[INTER]], %[[FMT]],
// CHECK-NOT:     fusion.paired_projection
func.func @paired_quantize(%x: tensor<4x64xbf16>, %wg: tensor<32x64xbf16>, %wu: tensor<32x64xbf16>) -> (tensor<4x32xf8E5M2>, tensor<4x1xf8E8M0FNU>) {
  %d0 = tensor.empty() : tensor<4x32xf8E5M2>
  %d1 = tensor.empty() : tensor<4x1xf8E8M0FNU>
  %q:2 = fusion.paired_projection %x, %wg, %wu epilogues(round(bf16) none, round(bf16) none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<mxfp8_e5m2, rowwise> via f32) outs(%d0, %d1)
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<4x32xf8E5M2>, tensor<4x1xf8E8M0FNU>) -> (tensor<4x32xf8E5M2>, tensor<4x1xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<4x32xf8E5M2>, tensor<4x1xf8E8M0FNU>
}

// -----

// FP8 delayed scaling: the quantizer's scale is read like fusion.quantize's,
// its table row after the pair's operands and before the destinations (x,
// wg, wu, scale, codes, scale_inv, amax: 7 rows).
// BUF-LABEL: func.func @paired_quantize_delayed
// BUF-SAME:    %[[S:[a-z0-9]+]]: memref<1xf32{{.*}}>)
// BUF:         fusion.paired_projection {{.*}} quantize(#fusion.quant<fp8_e4m3, rowwise, scaling = delayed> via bf16 scale %[[S]])
// CHECK-LABEL: func.func @paired_quantize_delayed
// CHECK:         memref.alloca() : memref<7x12xi64>
// CHECK:         call @fusion_rt_mlir_paired_projection_quantize(
// CHECK-NOT:     fusion.paired_projection
func.func @paired_quantize_delayed(%x: tensor<4x64xbf16>, %wg: tensor<32x64xbf16>, %wu: tensor<32x64xbf16>, %s: tensor<1xf32>)
    -> (tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) {
  %d0 = tensor.empty() : tensor<4x32xf8E4M3FN>
  %d1 = tensor.empty() : tensor<1xf32>
  %d2 = tensor.empty() : tensor<1xf32>
  %q:3 = fusion.paired_projection %x, %wg, %wu epilogues(round(bf16) none, round(bf16) none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<fp8_e4m3, rowwise, scaling = delayed> via bf16 scale %s) outs(%d0, %d1, %d2)
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<1xf32>, tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return %q#0, %q#1, %q#2 : tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>
}

// -----

// In place: the quantized rows land in a slice of the caller's buffers (the
// destinations are subviews of the function arguments, nothing is
// allocated). tensor.insert_slice leaves a copy of each subview onto itself,
// which canonicalization removes (INPLACE).
// BUF-LABEL: func.func @into_slice
// BUF-SAME:    (%[[X:.*]]: memref<16x64xbf16{{.*}}>, %[[BD:.*]]: memref<64x64xf8E4M3FN{{.*}}>, %[[BS:.*]]: memref<64x2xf8E8M0FNU{{.*}}>)
// BUF-NOT:     memref.alloc
// BUF-DAG:     %[[VD:.*]] = memref.subview %[[BD]][16, 0] [16, 64] [1, 1]
// BUF-DAG:     %[[VS:.*]] = memref.subview %[[BS]][16, 0] [16, 2] [1, 1]
// BUF:         fusion.quantize %[[X]] as quant<mxfp8_e4m3, rowwise> outs(%[[VD]], %[[VS]])
// BUF:         return
// INPLACE-LABEL: func.func @into_slice
// INPLACE-NOT:     memref.alloc
// INPLACE:         fusion.quantize
// INPLACE-NOT:     memref.copy
// INPLACE:         return
// CHECK-LABEL: func.func @into_slice
// CHECK:         memref.alloca() : memref<3x12xi64>
// CHECK:         call @fusion_rt_mlir_quantize
func.func @into_slice(%x: tensor<16x64xbf16>, %bd: tensor<64x64xf8E4M3FN> {bufferization.writable = true},
                      %bs: tensor<64x2xf8E8M0FNU> {bufferization.writable = true})
    -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) {
  %d0 = tensor.extract_slice %bd[16, 0] [16, 64] [1, 1] : tensor<64x64xf8E4M3FN> to tensor<16x64xf8E4M3FN>
  %s0 = tensor.extract_slice %bs[16, 0] [16, 2] [1, 1] : tensor<64x2xf8E8M0FNU> to tensor<16x2xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%d0, %s0)
      : (tensor<16x64xbf16>, tensor<16x64xf8E4M3FN>, tensor<16x2xf8E8M0FNU>) -> (tensor<16x64xf8E4M3FN>, tensor<16x2xf8E8M0FNU>)
  %rd = tensor.insert_slice %d into %bd[16, 0] [16, 64] [1, 1] : tensor<16x64xf8E4M3FN> into tensor<64x64xf8E4M3FN>
  %rs = tensor.insert_slice %s into %bs[16, 0] [16, 2] [1, 1] : tensor<16x2xf8E8M0FNU> into tensor<64x2xf8E8M0FNU>
  return %rd, %rs : tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
}

// -----

// FP4 data typed i8 (two per byte) is passed to the runtime as it is:
// its table row has dtype 8 (packed e2m1), not 5 (one e2m1 per byte).
// CHECK-LABEL: func.func @mxfp4_packed
// CHECK:         %[[D:.*]] = memref.alloc() {{.*}} : memref<8x32xi8>
// CHECK:         memref.extract_aligned_pointer_as_index %[[D]]
// CHECK:         %[[C8:.*]] = arith.constant 8 : i64
// CHECK:         memref.store %[[C8]], %{{.*}}[%c1{{(_[0-9]+)?}}, %c3{{(_[0-9]+)?}}]
// CHECK:         call @fusion_rt_mlir_quantize
func.func @mxfp4_packed(%x: tensor<8x64xbf16>) -> (tensor<8x32xi8>, tensor<8x2xf8E8M0FNU>) {
  %e0 = tensor.empty() : tensor<8x32xi8>
  %e1 = tensor.empty() : tensor<8x2xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp4, rowwise> outs(%e0, %e1)
      : (tensor<8x64xbf16>, tensor<8x32xi8>, tensor<8x2xf8E8M0FNU>) -> (tensor<8x32xi8>, tensor<8x2xf8E8M0FNU>)
  return %d, %s : tensor<8x32xi8>, tensor<8x2xf8E8M0FNU>
}

// -----

// Past the runtime's rank limit of 4, contiguous operands are collapsed onto
// rows [prod(leading), N] (a view), as the runtime would collapse them.
// CHECK-LABEL: func.func @rank5_collapsed
// CHECK-DAG:     memref.collapse_shape %{{.*}} {{\[\[}}0, 1, 2, 3], [4]] : memref<1x1x2x4x64xf32> into memref<8x64xf32>
// CHECK-DAG:     memref.collapse_shape %{{.*}} {{\[\[}}0, 1, 2, 3], [4]] : memref<1x1x2x4x2xf8E8M0FNU> into memref<8x2xf8E8M0FNU>
// CHECK:         call @fusion_rt_mlir_quantize
func.func @rank5_collapsed(%x: tensor<1x1x2x4x64xf32>) -> (tensor<1x1x2x4x64xf8E4M3FN>, tensor<1x1x2x4x2xf8E8M0FNU>) {
  %e0 = tensor.empty() : tensor<1x1x2x4x64xf8E4M3FN>
  %e1 = tensor.empty() : tensor<1x1x2x4x2xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%e0, %e1)
      : (tensor<1x1x2x4x64xf32>, tensor<1x1x2x4x64xf8E4M3FN>, tensor<1x1x2x4x2xf8E8M0FNU>) -> (tensor<1x1x2x4x64xf8E4M3FN>, tensor<1x1x2x4x2xf8E8M0FNU>)
  return %d, %s : tensor<1x1x2x4x64xf8E4M3FN>, tensor<1x1x2x4x2xf8E8M0FNU>
}

// -----

// Rank 5 with strides that may not collapse: the input is copied into a
// contiguous buffer, the results are written into contiguous buffers and
// copied out after the call (the deallocation pipeline frees the staging
// buffers).
// CHECK-LABEL: func.func @rank5_strided
// CHECK:         %[[IN:.*]] = memref.alloc() : memref<1x1x2x4x64xf32>
// CHECK:         memref.copy %{{.*}}, %[[IN]]
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<1x1x2x4x64xf8E4M3FN>
// CHECK:         call @fusion_rt_mlir_quantize
// CHECK:         memref.copy %[[OUT]], %{{.*}}
func.func @rank5_strided(%x: memref<1x1x2x4x64xf32, strided<[4000, 2000, 1000, 128, 1]>>,
                         %d: memref<1x1x2x4x64xf8E4M3FN, strided<[4000, 2000, 1000, 128, 1]>>,
                         %s: memref<1x1x2x4x2xf8E8M0FNU>) {
  fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%d, %s)
      : (memref<1x1x2x4x64xf32, strided<[4000, 2000, 1000, 128, 1]>>, memref<1x1x2x4x64xf8E4M3FN, strided<[4000, 2000, 1000, 128, 1]>>, memref<1x1x2x4x2xf8E8M0FNU>) -> ()
  return
}

// -----

// The amax epsilon of an FP8 per-tensor scheme is the call's f32 argument
// after the scheme's integers.
// CHECK-LABEL: func.func @quantize_fp8_epsilon
// CHECK:         %[[EPS:.*]] = arith.constant 9.99999996E-13 : f32
// CHECK:         call @fusion_rt_mlir_quantize({{.*}}, %[[EPS]], %{{.*}}) : ({{.*}}, f32, memref<?x12xi64>) -> i32
func.func @quantize_fp8_epsilon(%x: tensor<16x64xbf16>) -> (tensor<16x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) {
  %e0 = tensor.empty() : tensor<16x64xf8E4M3FN>
  %e1 = tensor.empty() : tensor<1xf32>
  %e2 = tensor.empty() : tensor<1xf32>
  %d, %s, %a = fusion.quantize %x as quant<fp8_e4m3, rowwise, epsilon = 1.0e-12> outs(%e0, %e1, %e2)
      : (tensor<16x64xbf16>, tensor<16x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<16x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return %d, %s, %a : tensor<16x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>
}

// -----

// FP8 delayed scaling whose amax nothing reads (a static scale, no amax
// history): the amax destination's table row gets a null pointer, so the
// runtime computes no amax (on the general path a pass of its own), and
// the allocation folds away.
// NULLROW-LABEL: func.func @delayed_amax_unread
//       NULLROW: %[[Z:.*]] = arith.constant 0 : i64
// NULLROW-COUNT-2: memref.alloc()
//   NULLROW-NOT: memref.alloc()
//       NULLROW: memref.store %[[Z]], %{{.*}}[%c4, %c0] : memref<5x12xi64>
// CHECK-LABEL: func.func @delayed_amax_unread
// CHECK:         call @fusion_rt_mlir_quantize
func.func @delayed_amax_unread(%x: tensor<4x64xbf16>, %s: tensor<1xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<1xf32>) {
  %d0 = tensor.empty() : tensor<4x64xf8E4M3FN>
  %d1 = tensor.empty() : tensor<1xf32>
  %d2 = tensor.empty() : tensor<1xf32>
  %q:3 = fusion.quantize %x scale %s as quant<fp8_e4m3, rowwise, scaling = delayed> outs(%d0, %d1, %d2)
      : (tensor<4x64xbf16>, tensor<1xf32>, tensor<4x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return %q#0, %q#1 : tensor<4x64xf8E4M3FN>, tensor<1xf32>
}

// -----

// The amax returned (TE's history): its row keeps the buffer's pointer.
// NULLROW-LABEL: func.func @delayed_amax_read
//       NULLROW: %[[Z:.*]] = arith.constant 0 : i64
//   NULLROW-NOT: memref.store %[[Z]], %{{.*}}[%c4, %c0]
//       NULLROW: call @fusion_rt_mlir_quantize
func.func @delayed_amax_read(%x: tensor<4x64xbf16>, %s: tensor<1xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<1xf32>) {
  %d0 = tensor.empty() : tensor<4x64xf8E4M3FN>
  %d1 = tensor.empty() : tensor<1xf32>
  %d2 = tensor.empty() : tensor<1xf32>
  %q:3 = fusion.quantize %x scale %s as quant<fp8_e4m3, rowwise, scaling = delayed> outs(%d0, %d1, %d2)
      : (tensor<4x64xbf16>, tensor<1xf32>, tensor<4x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return %q#0, %q#2 : tensor<4x64xf8E4M3FN>, tensor<1xf32>
}
