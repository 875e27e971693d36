// RUN: fusion-opt %s --one-shot-bufferize=bufferize-function-boundaries -split-input-file | FileCheck %s

// Each fusion op bufferizes to fresh result buffers and one call to its
// runtime entry point, with a table row per buffer and an assert on the
// returned status.

// CHECK-LABEL: func.func private @fusion_rt_mlir_quantize(i32, i32, i32, i32, i32, i32, i32, i32, i32, memref<?x12xi64>) -> i32 attributes {llvm.emit_c_interface}
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
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> : (tensor<128x256xbf16>) -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
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
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> : (tensor<?x?xbf16>) -> (tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>)
  return %d, %s : tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func private @fusion_rt_mlir_act_quantize(i32, i32, i32, f32, f32, f32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, memref<?x12xi64>) -> i32
// CHECK-LABEL: func.func @act_quantize_dbias
// CHECK:         memref.alloc() {{.*}} : memref<256xf32>
// CHECK:         memref.alloca() : memref<5x12xi64>
// CHECK:         call @fusion_rt_mlir_act_quantize
func.func @act_quantize_dbias(%x: tensor<64x256xbf16>, %dy: tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<256xf32>) {
  %d, %s, %b = fusion.act_quantize #fusion.act<dgelu> %x grad %dy as quant<mxfp8_e4m3, rowwise> via bf16 dbias : (tensor<64x256xbf16>, tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<256xf32>)
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
  %d, %s = fusion.gated_act_quantize #fusion.act<swiglu> %x as quant<mxfp8_e4m3, rowwise> via bf16 : (tensor<64x?xbf16>) -> (tensor<64x?xf8E4M3FN>, tensor<64x?xf8E8M0FNU>)
  return %d, %s : tensor<64x?xf8E4M3FN>, tensor<64x?xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func private @fusion_rt_mlir_paired_projection(i32, i32, i32, i32, i32, i32, i32, i32, memref<?x12xi64>) -> i32
// CHECK-LABEL: func.func @paired
// CHECK:         memref.alloca() : memref<7x12xi64>
// CHECK:         call @fusion_rt_mlir_paired_projection
func.func @paired(%x: tensor<1x2048xbf16>, %wa: tensor<32x2048xbf16>, %wb: tensor<32x2048xbf16>, %dt: tensor<32xf32>, %s: tensor<32xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>) {
  %g, %b = fusion.paired_projection %x, %wa, %wb epilogues(softplus_bias_scale bias %dt scale %s, sigmoid) : (tensor<1x2048xbf16>, tensor<32x2048xbf16>, tensor<32x2048xbf16>, tensor<32xf32>, tensor<32xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>)
  return %g, %b : tensor<1x32xf32>, tensor<1x32xf32>
}
