// RUN: fusion-opt %s --fusion-normalize-elementwise --canonicalize --cse --fusion-raise-quantize | FileCheck %s
// RUN: fusion-opt %s --fusion-normalize-elementwise --canonicalize --cse --fusion-raise-quantize --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --fusion-pipeline -o /dev/null
// RUN: fusion-opt %s --fusion-pipeline=frontend=torch -o /dev/null

// fusion-raise-quantize on MX quantizers written with upstream MLIR's own MX
// op, arith.scaling_truncf (x / 2^(scale - 127), then truncf), on tensors, as
// a compiler that targets MLIR's MX types emits it: block amax, an E8M0
// scale computed with integer bit operations, the scale broadcast over its
// block. fusion-normalize-elementwise (first in every pipeline) puts the
// elementwise ops on tensors into generics, which seed the raising; the
// interpreter models scaling_truncf as arith-expand lowers it (the E8M0 NaN
// scale 0xFF included).

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
!x = tensor<4x64xf32>
!b = tensor<4x2x32xf32>
!d = tensor<4x64xf8E4M3FN>
!s = tensor<4x2xf8E8M0FNU>

/// RCEIL (NVIDIA's rule): byte = E(r), plus one where r is not a power of
/// two (a subnormal r <= 2^-127 rounds up to 2^-127, byte 0), for
/// r = amax * fp32(1/448); NaN / Inf blocks get the NaN scale 0xFF, and
/// scaling_truncf turns them into NaN (NaN propagate).
// CHECK-LABEL: func.func @rceil_scaling_truncf
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
//       CHECK: %[[Q:.*]]:2 = fusion.quantize %[[X]] as quant<mxfp8_e4m3, rowwise>
//   CHECK-NOT: arith.scaling_truncf
//       CHECK: return %[[Q]]#0, %[[Q]]#1
func.func @rceil_scaling_truncf(%x: !x) -> (!d, !s) {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.00223214285 : f32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c23 = arith.constant 23 : i32
  %c255 = arith.constant 255 : i32
  %cm = arith.constant 8388607 : i32
  %half = arith.constant 4194304 : i32
  %true = arith.constant true
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 32] : !x into !b
  %i0 = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%i0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e : !b) outs(%f : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4x2xf32>
  %i1 = tensor.empty() : tensor<4x2xi8>
  %byte = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%amax : tensor<4x2xf32>) outs(%i1 : tensor<4x2xi8>) {
  ^bb0(%a: f32, %o: i8):
    %r = arith.mulf %a, %inv : f32
    %bits = arith.bitcast %r : f32 to i32
    %sh = arith.shrui %bits, %c23 : i32
    %ex = arith.andi %sh, %c255 : i32
    %man = arith.andi %bits, %cm : i32
    %nz = arith.cmpi ne, %man, %c0 : i32
    %sub = arith.cmpi eq, %ex, %c0 : i32
    %low = arith.cmpi ule, %man, %half : i32
    %tiny = arith.andi %sub, %low : i1
    %keep = arith.xori %tiny, %true : i1
    %inc = arith.andi %nz, %keep : i1
    %up = arith.addi %ex, %c1 : i32
    %rc = arith.select %inc, %up, %ex : i32
    %special = arith.cmpi eq, %ex, %c255 : i32
    %bb = arith.select %special, %c255, %rc : i32
    %t = arith.trunci %bb : i32 to i8
    linalg.yield %t : i8
  } -> tensor<4x2xi8>
  %scale = arith.bitcast %byte : tensor<4x2xi8> to !s
  %i2 = tensor.empty() : tensor<4x2x32xf8E8M0FNU>
  %sb = linalg.broadcast ins(%scale : !s) outs(%i2 : tensor<4x2x32xf8E8M0FNU>) dimensions = [2]
  // expected-remark @below {{raised to fusion.quantize #fusion.quant<mxfp8_e4m3, rowwise>}}
  %q = arith.scaling_truncf %e, %sb : !b, tensor<4x2x32xf8E8M0FNU> to tensor<4x2x32xf8E4M3FN>
  %d = tensor.collapse_shape %q [[0], [1, 2]] : tensor<4x2x32xf8E4M3FN> into !d
  return %d, %scale : !d, !s
}

/// JAX's spelling of the scale, floor(log2(amax)) - 8 (OCP FLOOR) through
/// math.log2 in f32 and a float-to-byte cast: declined, with the first
/// difference (a NaN / Inf block makes its fptoui poison; with finite
/// inputs, log2 rounds amaxes just below a power of two up to the power).
// CHECK-LABEL: func.func @negative_log2_floor_scaling_truncf
//   CHECK-NOT: fusion.quantize
//       CHECK: arith.scaling_truncf
func.func @negative_log2_floor_scaling_truncf(%x: !x) -> (!d, !s) {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %lo = arith.constant -127.0 : f32
  %hi = arith.constant 127.0 : f32
  %c127 = arith.constant 127.0 : f32
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 32] : !x into !b
  %i0 = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%i0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e : !b) outs(%f : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4x2xf32>
  %i1 = tensor.empty() : tensor<4x2xi8>
  %byte = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%amax : tensor<4x2xf32>) outs(%i1 : tensor<4x2xi8>) {
  ^bb0(%a: f32, %o: i8):
    %l = math.log2 %a : f32
    %fl = math.floor %l : f32
    %s = arith.subf %fl, %c8 : f32
    %c = arith.maximumf %s, %lo : f32
    %c2 = arith.minimumf %c, %hi : f32
    %b = arith.addf %c2, %c127 : f32
    %t = arith.fptoui %b : f32 to i8
    linalg.yield %t : i8
  } -> tensor<4x2xi8>
  %scale = arith.bitcast %byte : tensor<4x2xi8> to !s
  %i2 = tensor.empty() : tensor<4x2x32xf8E8M0FNU>
  %sb = linalg.broadcast ins(%scale : !s) outs(%i2 : tensor<4x2x32xf8E8M0FNU>) dimensions = [2]
  // expected-remark @below {{Reason="differs from every runtime quantizer"}}
  %q = arith.scaling_truncf %e, %sb : !b, tensor<4x2x32xf8E8M0FNU> to tensor<4x2x32xf8E4M3FN>
  %d = tensor.collapse_shape %q [[0], [1, 2]] : tensor<4x2x32xf8E4M3FN> into !d
  return %d, %scale : !d, !s
}
