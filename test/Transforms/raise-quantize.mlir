// RUN: fusion-opt %s --fusion-raise-quantize | FileCheck %s
// RUN: fusion-opt %s --fusion-raise-quantize --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --fusion-act-quantize-pipeline | FileCheck %s --check-prefix=FUSED
// RUN: fusion-opt %s --fusion-pipeline | FileCheck %s --check-prefix=LLVM

// fusion-raise-quantize: quantizers written out in upstream ops become
// fusion.quantize when, on every probe, the region's bytes equal the
// runtime's. Each function is a quantizer of [4, 64] in blocks of 32.
// (The torch-mlir spellings are in test/Frontend.)

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
#bc = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
!x = tensor<4x64xf32>
!d = tensor<4x64xf8E4M3FN>
!s = tensor<4x2xi8>

/// MX FLOOR with the NaN policy propagate written with integer bit tricks:
/// byte = max(E(amax) - 8, 0), 255 for NaN/Inf; elements times the exact
/// reciprocal (254 - byte) << 23, clamped with NaN-propagating min/max.
// CHECK-LABEL: func.func @floor_bits
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
//       CHECK: %[[Q:.*]]:2 = fusion.quantize %[[X]] as quant<mxfp8_e4m3, rowwise, rounding = floor>
//       CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%[[Q]]#1 : tensor<4x2xf8E8M0FNU>)
//       CHECK:   arith.bitcast %{{.*}} : f8E8M0FNU to i8
//       CHECK: return %[[Q]]#0, %[[B]]
//   CHECK-NOT: arith.truncf
// FUSED-LABEL: func.func @floor_bits
//       FUSED: fusion.quantize
// LLVM-LABEL: llvm.func @floor_bits
//       LLVM: llvm.call @fusion_rt_mlir_quantize
func.func @floor_bits(%x: !x) -> (!d, !s) {
  %c0 = arith.constant 0 : i32
  %c8 = arith.constant 8 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c255 = arith.constant 255 : i32
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %max = arith.constant 448.0 : f32
  %min = arith.constant -448.0 : f32
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 32] : !x into tensor<4x2x32xf32>
  %i0 = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%i0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e : tensor<4x2x32xf32>) outs(%f : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4x2xf32>
  %i1 = tensor.empty() : !s
  %byte = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%amax : tensor<4x2xf32>) outs(%i1 : !s) {
  ^bb0(%a: f32, %o: i8):
    %bits = arith.bitcast %a : f32 to i32
    %sh = arith.shrui %bits, %c23 : i32
    %ex = arith.andi %sh, %c255 : i32
    %b = arith.subi %ex, %c8 : i32
    %b0 = arith.maxsi %b, %c0 : i32
    %special = arith.cmpi eq, %ex, %c255 : i32
    %bb = arith.select %special, %c255, %b0 : i32
    %t = arith.trunci %bb : i32 to i8
    linalg.yield %t : i8
  } -> !s
  %byte3 = tensor.expand_shape %byte [[0], [1, 2]] output_shape [4, 2, 1] : !s into tensor<4x2x1xi8>
  %i2 = tensor.empty() : tensor<4x2x32xf8E4M3FN>
  // expected-remark @below {{raised to fusion.quantize #fusion.quant<mxfp8_e4m3, rowwise, rounding = floor>}}
  %q = linalg.generic {indexing_maps = [#id3, #bc, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %byte3 : tensor<4x2x32xf32>, tensor<4x2x1xi8>) outs(%i2 : tensor<4x2x32xf8E4M3FN>) {
  ^bb0(%in: f32, %b: i8, %o: f8E4M3FN):
    %bw = arith.extui %b : i8 to i32
    %k = arith.subi %c254, %bw : i32
    %rb = arith.shli %k, %c23 : i32
    %r = arith.bitcast %rb : i32 to f32
    %isnan = arith.cmpi eq, %bw, %c255 : i32
    %rr = arith.select %isnan, %nan, %r : f32
    %y = arith.mulf %in, %rr : f32
    %y1 = arith.minimumf %y, %max : f32
    %y2 = arith.maximumf %y1, %min : f32
    %t = arith.truncf %y2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x32xf8E4M3FN>
  %d = tensor.collapse_shape %q [[0], [1, 2]] : tensor<4x2x32xf8E4M3FN> into !d
  return %d, %byte : !d, !s
}

/// The same quantizer after a SiLU: raised, then fused with the activation.
// FUSED-LABEL: func.func @silu_floor_bits
//       FUSED: fusion.act_quantize #fusion.act<silu> %{{.*}} as quant<mxfp8_e4m3, rowwise, rounding = floor>
//   FUSED-NOT: fusion.quantize
func.func @silu_floor_bits(%x: !x) -> (!d, !s) {
  %one = arith.constant 1.0 : f32
  %ix = tensor.empty() : !x
  %sx = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%ix : !x) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.negf %in : f32
    %ex = math.exp %n : f32
    %den = arith.addf %ex, %one : f32
    %y = arith.divf %in, %den : f32
    linalg.yield %y : f32
  } -> !x
  %c0 = arith.constant 0 : i32
  %c8 = arith.constant 8 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c255 = arith.constant 255 : i32
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %max = arith.constant 448.0 : f32
  %min = arith.constant -448.0 : f32
  %e = tensor.expand_shape %sx [[0], [1, 2]] output_shape [4, 2, 32] : !x into tensor<4x2x32xf32>
  %i0 = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%i0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e : tensor<4x2x32xf32>) outs(%f : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4x2xf32>
  %i1 = tensor.empty() : !s
  %byte = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%amax : tensor<4x2xf32>) outs(%i1 : !s) {
  ^bb0(%a: f32, %o: i8):
    %bits = arith.bitcast %a : f32 to i32
    %sh = arith.shrui %bits, %c23 : i32
    %ex = arith.andi %sh, %c255 : i32
    %b = arith.subi %ex, %c8 : i32
    %b0 = arith.maxsi %b, %c0 : i32
    %special = arith.cmpi eq, %ex, %c255 : i32
    %bb = arith.select %special, %c255, %b0 : i32
    %t = arith.trunci %bb : i32 to i8
    linalg.yield %t : i8
  } -> !s
  %byte3 = tensor.expand_shape %byte [[0], [1, 2]] output_shape [4, 2, 1] : !s into tensor<4x2x1xi8>
  %i2 = tensor.empty() : tensor<4x2x32xf8E4M3FN>
  // expected-remark @below {{raised to fusion.quantize #fusion.quant<mxfp8_e4m3, rowwise, rounding = floor>}}
  %q = linalg.generic {indexing_maps = [#id3, #bc, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %byte3 : tensor<4x2x32xf32>, tensor<4x2x1xi8>) outs(%i2 : tensor<4x2x32xf8E4M3FN>) {
  ^bb0(%in: f32, %b: i8, %o: f8E4M3FN):
    %bw = arith.extui %b : i8 to i32
    %k = arith.subi %c254, %bw : i32
    %rb = arith.shli %k, %c23 : i32
    %r = arith.bitcast %rb : i32 to f32
    %isnan = arith.cmpi eq, %bw, %c255 : i32
    %rr = arith.select %isnan, %nan, %r : f32
    %y = arith.mulf %in, %rr : f32
    %y1 = arith.minimumf %y, %max : f32
    %y2 = arith.maximumf %y1, %min : f32
    %t = arith.truncf %y2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x32xf8E4M3FN>
  %d = tensor.collapse_shape %q [[0], [1, 2]] : tensor<4x2x32xf8E4M3FN> into !d
  return %d, %byte : !d, !s
}


/// Without the clamp the cast does not saturate: 460 < |x·r| becomes NaN
/// where the runtime writes 448.
// CHECK-LABEL: func.func @negative_no_clamp
//   CHECK-NOT: fusion.quantize
func.func @negative_no_clamp(%x: !x) -> (!d, !s) {
  %c0 = arith.constant 0 : i32
  %c8 = arith.constant 8 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c255 = arith.constant 255 : i32
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %max = arith.constant 448.0 : f32
  %min = arith.constant -448.0 : f32
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 32] : !x into tensor<4x2x32xf32>
  %i0 = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%i0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e : tensor<4x2x32xf32>) outs(%f : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4x2xf32>
  %i1 = tensor.empty() : !s
  %byte = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%amax : tensor<4x2xf32>) outs(%i1 : !s) {
  ^bb0(%a: f32, %o: i8):
    %bits = arith.bitcast %a : f32 to i32
    %sh = arith.shrui %bits, %c23 : i32
    %ex = arith.andi %sh, %c255 : i32
    %b = arith.subi %ex, %c8 : i32
    %b0 = arith.maxsi %b, %c0 : i32
    %special = arith.cmpi eq, %ex, %c255 : i32
    %bb = arith.select %special, %c255, %b0 : i32
    %t = arith.trunci %bb : i32 to i8
    linalg.yield %t : i8
  } -> !s
  %byte3 = tensor.expand_shape %byte [[0], [1, 2]] output_shape [4, 2, 1] : !s into tensor<4x2x1xi8>
  %i2 = tensor.empty() : tensor<4x2x32xf8E4M3FN>
  // expected-remark @below {{Reason="differs from every runtime quantizer", Remark="closest is #fusion.quant<mxfp8_e4m3, rowwise, rounding = floor>}}
  %q = linalg.generic {indexing_maps = [#id3, #bc, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %byte3 : tensor<4x2x32xf32>, tensor<4x2x1xi8>) outs(%i2 : tensor<4x2x32xf8E4M3FN>) {
  ^bb0(%in: f32, %b: i8, %o: f8E4M3FN):
    %bw = arith.extui %b : i8 to i32
    %k = arith.subi %c254, %bw : i32
    %rb = arith.shli %k, %c23 : i32
    %r = arith.bitcast %rb : i32 to f32
    %isnan = arith.cmpi eq, %bw, %c255 : i32
    %rr = arith.select %isnan, %nan, %r : f32
    %y = arith.mulf %in, %rr : f32
    %y1 = arith.minimumf %y, %max : f32
    %y2 = arith.maximumf %y1, %min : f32
    %t = arith.truncf %y : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x32xf8E4M3FN>
  %d = tensor.collapse_shape %q [[0], [1, 2]] : tensor<4x2x32xf8E4M3FN> into !d
  return %d, %byte : !d, !s
}


/// The block amax is also returned: the region has a third output.
// CHECK-LABEL: func.func @negative_amax_escapes
//   CHECK-NOT: fusion.quantize
func.func @negative_amax_escapes(%x: !x) -> (!d, !s, tensor<4x2xf32>) {
  %c0 = arith.constant 0 : i32
  %c8 = arith.constant 8 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c255 = arith.constant 255 : i32
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %max = arith.constant 448.0 : f32
  %min = arith.constant -448.0 : f32
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 32] : !x into tensor<4x2x32xf32>
  %i0 = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%i0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e : tensor<4x2x32xf32>) outs(%f : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4x2xf32>
  %i1 = tensor.empty() : !s
  %byte = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%amax : tensor<4x2xf32>) outs(%i1 : !s) {
  ^bb0(%a: f32, %o: i8):
    %bits = arith.bitcast %a : f32 to i32
    %sh = arith.shrui %bits, %c23 : i32
    %ex = arith.andi %sh, %c255 : i32
    %b = arith.subi %ex, %c8 : i32
    %b0 = arith.maxsi %b, %c0 : i32
    %special = arith.cmpi eq, %ex, %c255 : i32
    %bb = arith.select %special, %c255, %b0 : i32
    %t = arith.trunci %bb : i32 to i8
    linalg.yield %t : i8
  } -> !s
  %byte3 = tensor.expand_shape %byte [[0], [1, 2]] output_shape [4, 2, 1] : !s into tensor<4x2x1xi8>
  %i2 = tensor.empty() : tensor<4x2x32xf8E4M3FN>
  // expected-remark @below {{Reason="intermediate value has another user"}}
  %q = linalg.generic {indexing_maps = [#id3, #bc, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %byte3 : tensor<4x2x32xf32>, tensor<4x2x1xi8>) outs(%i2 : tensor<4x2x32xf8E4M3FN>) {
  ^bb0(%in: f32, %b: i8, %o: f8E4M3FN):
    %bw = arith.extui %b : i8 to i32
    %k = arith.subi %c254, %bw : i32
    %rb = arith.shli %k, %c23 : i32
    %r = arith.bitcast %rb : i32 to f32
    %isnan = arith.cmpi eq, %bw, %c255 : i32
    %rr = arith.select %isnan, %nan, %r : f32
    %y = arith.mulf %in, %rr : f32
    %y1 = arith.minimumf %y, %max : f32
    %y2 = arith.maximumf %y1, %min : f32
    %t = arith.truncf %y2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x32xf8E4M3FN>
  %d = tensor.collapse_shape %q [[0], [1, 2]] : tensor<4x2x32xf8E4M3FN> into !d
  return %d, %byte, %amax : !d, !s, tensor<4x2xf32>
}


/// An op the interpreter does not model (math.atan) in the scale path.
// CHECK-LABEL: func.func @negative_not_evaluable
//   CHECK-NOT: fusion.quantize
func.func @negative_not_evaluable(%x: !x) -> (!d, !s) {
  %c0 = arith.constant 0 : i32
  %c8 = arith.constant 8 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c255 = arith.constant 255 : i32
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %max = arith.constant 448.0 : f32
  %min = arith.constant -448.0 : f32
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 32] : !x into tensor<4x2x32xf32>
  %i0 = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%i0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e : tensor<4x2x32xf32>) outs(%f : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %at = math.atan %a : f32
    %m = arith.maximumf %at, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4x2xf32>
  %i1 = tensor.empty() : !s
  %byte = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%amax : tensor<4x2xf32>) outs(%i1 : !s) {
  ^bb0(%a: f32, %o: i8):
    %bits = arith.bitcast %a : f32 to i32
    %sh = arith.shrui %bits, %c23 : i32
    %ex = arith.andi %sh, %c255 : i32
    %b = arith.subi %ex, %c8 : i32
    %b0 = arith.maxsi %b, %c0 : i32
    %special = arith.cmpi eq, %ex, %c255 : i32
    %bb = arith.select %special, %c255, %b0 : i32
    %t = arith.trunci %bb : i32 to i8
    linalg.yield %t : i8
  } -> !s
  %byte3 = tensor.expand_shape %byte [[0], [1, 2]] output_shape [4, 2, 1] : !s into tensor<4x2x1xi8>
  %i2 = tensor.empty() : tensor<4x2x32xf8E4M3FN>
  // expected-remark @below {{Reason="not evaluable", Remark="the exactness check cannot evaluate the data: an op the evaluator does not model ('math.atan')"}}
  %q = linalg.generic {indexing_maps = [#id3, #bc, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %byte3 : tensor<4x2x32xf32>, tensor<4x2x1xi8>) outs(%i2 : tensor<4x2x32xf8E4M3FN>) {
  ^bb0(%in: f32, %b: i8, %o: f8E4M3FN):
    %bw = arith.extui %b : i8 to i32
    %k = arith.subi %c254, %bw : i32
    %rb = arith.shli %k, %c23 : i32
    %r = arith.bitcast %rb : i32 to f32
    %isnan = arith.cmpi eq, %bw, %c255 : i32
    %rr = arith.select %isnan, %nan, %r : f32
    %y = arith.mulf %in, %rr : f32
    %y1 = arith.minimumf %y, %max : f32
    %y2 = arith.maximumf %y1, %min : f32
    %t = arith.truncf %y2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x32xf8E4M3FN>
  %d = tensor.collapse_shape %q [[0], [1, 2]] : tensor<4x2x32xf8E4M3FN> into !d
  return %d, %byte : !d, !s
}


/// A plain cast to FP8: no amax reduction, not a scaled quantizer.
// CHECK-LABEL: func.func @negative_plain_cast
//       CHECK: arith.truncf
func.func @negative_plain_cast(%x: !x) -> !d {
  %i = tensor.empty() : !d
  // expected-remark @below {{Reason="no amax reduction"}}
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%i : !d) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %t = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %q : !d
}

/// A dynamic number of rows is checked on a copy with 4 rows
/// (raise-quantize-dynamic.mlir); this one returns its f32 row amax as the
/// scale and codes x / amax: FP8 with per-row f32 scales, but not the FP8
/// block formats' s = amax / 448 (raise-quantize-fp8-block.mlir).
// CHECK-LABEL: func.func @negative_dynamic
//   CHECK-NOT: fusion.quantize
func.func @negative_dynamic(%x: tensor<?x32xf32>) -> (tensor<?x32xf8E4M3FN>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x32xf32>
  %i0 = tensor.empty(%n) : tensor<?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%i0 : tensor<?xf32>) -> tensor<?xf32>
  %amax = linalg.reduce ins(%x : tensor<?x32xf32>) outs(%f : tensor<?xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = math.absf %in : f32
      %m = arith.maximumf %a, %acc : f32
      linalg.yield %m : f32
    }
  %i1 = tensor.empty(%n) : tensor<?x32xf8E4M3FN>
  // expected-remark @below {{Reason="differs from every runtime quantizer", Remark="closest is #fusion.quant<fp8_block_e4m3, rowwise, block = 1x32>}}
  %q = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> (d0)>, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %amax : tensor<?x32xf32>, tensor<?xf32>) outs(%i1 : tensor<?x32xf8E4M3FN>) {
  ^bb0(%in: f32, %a: f32, %o: f8E4M3FN):
    %y = arith.divf %in, %a : f32
    %t = arith.truncf %y : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<?x32xf8E4M3FN>
  return %q, %amax : tensor<?x32xf8E4M3FN>, tensor<?xf32>
}

/// @floor_bits with its scales unused: the codes alone are not an MX
/// quantizer's results the runtime can return.
// CHECK-LABEL: func.func @negative_no_scale_output
//   CHECK-NOT: fusion.quantize
//       CHECK: return
func.func @negative_no_scale_output(%x: !x) -> !d {
  %c0 = arith.constant 0 : i32
  %c8 = arith.constant 8 : i32
  %c23 = arith.constant 23 : i32
  %c254 = arith.constant 254 : i32
  %c255 = arith.constant 255 : i32
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %max = arith.constant 448.0 : f32
  %min = arith.constant -448.0 : f32
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 32] : !x into tensor<4x2x32xf32>
  %i0 = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%i0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e : tensor<4x2x32xf32>) outs(%f : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4x2xf32>
  %i1 = tensor.empty() : !s
  %byte = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%amax : tensor<4x2xf32>) outs(%i1 : !s) {
  ^bb0(%a: f32, %o: i8):
    %bits = arith.bitcast %a : f32 to i32
    %sh = arith.shrui %bits, %c23 : i32
    %ex = arith.andi %sh, %c255 : i32
    %b = arith.subi %ex, %c8 : i32
    %b0 = arith.maxsi %b, %c0 : i32
    %special = arith.cmpi eq, %ex, %c255 : i32
    %bb = arith.select %special, %c255, %b0 : i32
    %t = arith.trunci %bb : i32 to i8
    linalg.yield %t : i8
  } -> !s
  %byte3 = tensor.expand_shape %byte [[0], [1, 2]] output_shape [4, 2, 1] : !s into tensor<4x2x1xi8>
  %i2 = tensor.empty() : tensor<4x2x32xf8E4M3FN>
  // expected-remark @below {{Reason="no scale output", Remark="no 8-bit tensor of 8 block scales computed from the input is used"}}
  %q = linalg.generic {indexing_maps = [#id3, #bc, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %byte3 : tensor<4x2x32xf32>, tensor<4x2x1xi8>) outs(%i2 : tensor<4x2x32xf8E4M3FN>) {
  ^bb0(%in: f32, %b: i8, %o: f8E4M3FN):
    %bw = arith.extui %b : i8 to i32
    %k = arith.subi %c254, %bw : i32
    %rb = arith.shli %k, %c23 : i32
    %r = arith.bitcast %rb : i32 to f32
    %isnan = arith.cmpi eq, %bw, %c255 : i32
    %rr = arith.select %isnan, %nan, %r : f32
    %y = arith.mulf %in, %rr : f32
    %y1 = arith.minimumf %y, %max : f32
    %y2 = arith.maximumf %y1, %min : f32
    %t = arith.truncf %y2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x32xf8E4M3FN>
  %d = tensor.collapse_shape %q [[0], [1, 2]] : tensor<4x2x32xf8E4M3FN> into !d
  return %d : !d
}
