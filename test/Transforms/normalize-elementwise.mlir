// RUN: fusion-opt %s --fusion-normalize-elementwise --canonicalize --cse | FileCheck %s

// Elementwise code, however written, ends up as one linalg.generic per
// expression tree; contractions and fills keep their named form.

!x = tensor<4x64xf32>

/// arith/math on tensors after a matmul with a transposed weight: the matmul
/// stays, the sigmoid and the product become one generic.
// CHECK-LABEL: func.func @matmul_then_silu
//       CHECK: linalg.fill
//       CHECK: %[[MM:.*]] = linalg.matmul indexing_maps
//       CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[MM]] : tensor<4x64xf32>)
//  CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
//  CHECK-NEXT:   %[[N:.*]] = arith.negf %[[IN]]
//  CHECK-NEXT:   %[[E:.*]] = math.exp %[[N]]
//  CHECK-NEXT:   %[[D:.*]] = arith.addf %[[E]]
//  CHECK-NEXT:   %[[S:.*]] = arith.divf %[[IN]], %[[D]]
//  CHECK-NEXT:   linalg.yield %[[S]]
//   CHECK-NOT: linalg.generic
//       CHECK: return %[[G]]
func.func @matmul_then_silu(%a: tensor<4x32xf32>, %w: tensor<64x32xf32>) -> !x {
  %e = tensor.empty() : !x
  %c0 = arith.constant 0.0 : f32
  %z = linalg.fill ins(%c0 : f32) outs(%e : !x) -> !x
  %mm = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %w : tensor<4x32xf32>, tensor<64x32xf32>) outs(%z : !x) -> !x
  %n = arith.negf %mm : !x
  %ex = math.exp %n : !x
  %one = arith.constant dense<1.0> : !x
  %den = arith.addf %ex, %one : !x
  %y = arith.divf %mm, %den : !x
  return %y : !x
}

/// Named elementwise ops (linalg.exp, linalg.elementwise) are generalized
/// and fused.
// CHECK-LABEL: func.func @named_elementwise
//       CHECK: linalg.generic
//   CHECK-DAG:   math.exp
//   CHECK-DAG:   arith.mulf
//   CHECK-NOT: linalg.generic
//   CHECK-NOT: linalg.exp
func.func @named_elementwise(%x: !x) -> !x {
  %e = tensor.empty() : !x
  %ex = linalg.exp ins(%x : !x) outs(%e : !x) -> !x
  %y = linalg.elementwise kind=#linalg.elementwise_kind<mul> ins(%ex, %x : !x, !x) outs(%e : !x) -> !x
  return %y : !x
}

/// A producer with a second user keeps its own generic.
// CHECK-LABEL: func.func @shared_producer_not_fused
//       CHECK: %[[R:.*]] = linalg.generic
//       CHECK:   arith.maximumf
//       CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[R]]
//       CHECK:   arith.mulf
//       CHECK: return %[[R]], %[[S]]
func.func @shared_producer_not_fused(%x: !x) -> (!x, !x) {
  %z = arith.constant dense<0.0> : !x
  %r = arith.maximumf %x, %z : !x
  %s = arith.mulf %r, %r : !x
  return %r, %s : !x, !x
}

/// Dynamic shapes: the tensor.dim ops that fusion creates do not block it.
// CHECK-LABEL: func.func @dynamic_chain
//       CHECK: linalg.generic
//       CHECK:   arith.extf
//       CHECK:   math.tanh
//       CHECK:   arith.truncf
//   CHECK-NOT: linalg.generic
func.func @dynamic_chain(%x: tensor<?x?xbf16>) -> tensor<?x?xbf16> {
  %f = arith.extf %x : tensor<?x?xbf16> to tensor<?x?xf32>
  %t = math.tanh %f : tensor<?x?xf32>
  %y = arith.truncf %t : tensor<?x?xf32> to tensor<?x?xbf16>
  return %y : tensor<?x?xbf16>
}

/// A sigmoid shared by the two halves of one concatenation (what CSE leaves
/// of a gated backward, [dgate | dup]) is computed again in each half: the
/// two halves read the inputs, and the shared generic is gone.
// CHECK-LABEL: func.func @shared_by_concat_halves
//       CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x64xf32>, tensor<4x64xf32>)
//       CHECK:   math.exp
//       CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x64xf32>, tensor<4x64xf32>)
//       CHECK:   math.exp
//       CHECK: tensor.concat dim(1) %[[A]], %[[B]]
func.func @shared_by_concat_halves(%g: !x, %d: !x) -> tensor<4x128xf32> {
  %one = arith.constant dense<1.0> : !x
  %n = arith.negf %g : !x
  %e = math.exp %n : !x
  %den = arith.addf %one, %e : !x
  %s = arith.divf %one, %den : !x
  %a = arith.mulf %d, %s : !x
  %gs = arith.mulf %g, %s : !x
  %b = arith.mulf %d, %gs : !x
  %cat = tensor.concat dim(1) %a, %b : (!x, !x) -> tensor<4x128xf32>
  return %cat : tensor<4x128xf32>
}

/// The same sigmoid also read by a reduction (a dbias, an amax): it keeps its
/// own op, and the halves read it.
// CHECK-LABEL: func.func @negative_shared_with_a_reduction
//       CHECK: %[[S:.*]] = linalg.generic
//       CHECK:   math.exp
//   CHECK-NOT:   math.exp
//       CHECK: linalg.reduce ins(%[[S]]
func.func @negative_shared_with_a_reduction(%g: !x, %d: !x) -> (tensor<4x128xf32>, tensor<64xf32>) {
  %one = arith.constant dense<1.0> : !x
  %n = arith.negf %g : !x
  %e = math.exp %n : !x
  %den = arith.addf %one, %e : !x
  %s = arith.divf %one, %den : !x
  %a = arith.mulf %d, %s : !x
  %b = arith.mulf %g, %s : !x
  %cat = tensor.concat dim(1) %a, %b : (!x, !x) -> tensor<4x128xf32>
  %zero = arith.constant 0.0 : f32
  %ei = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ei : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.reduce ins(%s : !x) outs(%acc : tensor<64xf32>) dimensions = [0]
    (%in: f32, %sum: f32) {
      %t = arith.addf %in, %sum : f32
      linalg.yield %t : f32
    }
  return %cat, %r : tensor<4x128xf32>, tensor<64xf32>
}

/// torch-mlir's Linear of a [B, T, K] input with a dynamic T: the rounded
/// [B*T, H] result is expanded to [B, T, H] for the epilogue. The epilogue
/// is collapsed onto [B*T, H]; the expand_shape the collapse sizes its
/// result from (tensor.dim of the old one) folds to the output_shape it
/// names, so the old expand_shape dies and the rounding fuses into the
/// epilogue: one generic reads the matmul.
// CHECK-LABEL: func.func @rounding_through_dynamic_expand
//  CHECK-SAME: (%[[A:.*]]: tensor<?x64xbf16>, %[[W:.*]]: tensor<64x8xbf16>, %[[T:.*]]: index)
//       CHECK: %[[M:.*]] = linalg.matmul
//       CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<?x8xf32>)
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:   arith.truncf
//  CHECK-NEXT:   arith.negf
//       CHECK: tensor.expand_shape %[[G]] {{\[\[}}0, 1], [2]] output_shape [2, %[[T]], 8]
//   CHECK-NOT: tensor.dim
//   CHECK-NOT: linalg.generic
func.func @rounding_through_dynamic_expand(%a: tensor<?x64xbf16>, %w: tensor<64x8xbf16>, %t: index)
    -> tensor<2x?x8xbf16> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %a, %c0 : tensor<?x64xbf16>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %y = linalg.matmul ins(%a, %w : tensor<?x64xbf16>, tensor<64x8xbf16>) outs(%acc : tensor<?x8xf32>) -> tensor<?x8xf32>
  %eb = tensor.empty(%n) : tensor<?x8xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<?x8xf32>) outs(%eb : tensor<?x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  } -> tensor<?x8xbf16>
  %x = tensor.expand_shape %r [[0, 1], [2]] output_shape [2, %t, 8] : tensor<?x8xbf16> into tensor<2x?x8xbf16>
  %e3 = tensor.empty(%t) : tensor<2x?x8xbf16>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x?x8xbf16>) outs(%e3 : tensor<2x?x8xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %v = arith.negf %in : bf16
    linalg.yield %v : bf16
  } -> tensor<2x?x8xbf16>
  return %s : tensor<2x?x8xbf16>
}

/// With both token dimensions dynamic torch-mlir views the result back by a
/// tensor.reshape to a shape built from sizes. It keeps the trailing size
/// (8) and splits only the first: an expand_shape, which then moves past
/// the epilogue as above (the rounding fuses into it).
// CHECK-LABEL: func.func @rounding_through_dynamic_reshape
//  CHECK-SAME: %[[B:[a-z0-9]+]]: i64, %[[T:[a-z0-9]+]]: i64
//   CHECK-DAG: %[[BI:.*]] = arith.index_cast %[[B]] : i64 to index
//   CHECK-DAG: %[[TI:.*]] = arith.index_cast %[[T]] : i64 to index
//       CHECK: %[[G:.*]] = linalg.generic
//  CHECK-NEXT:   ^bb0
//  CHECK-NEXT:   arith.truncf
//  CHECK-NEXT:   arith.negf
//       CHECK: tensor.expand_shape %[[G]] {{\[\[}}0, 1], [2]] output_shape [%[[BI]], %[[TI]], 8]
//   CHECK-NOT: tensor.reshape
//   CHECK-NOT: linalg.generic
func.func @rounding_through_dynamic_reshape(%a: tensor<?x64xbf16>, %w: tensor<64x8xbf16>, %b: i64, %t: i64)
    -> tensor<?x?x8xbf16> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : i64
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %a, %c0 : tensor<?x64xbf16>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %y = linalg.matmul ins(%a, %w : tensor<?x64xbf16>, tensor<64x8xbf16>) outs(%acc : tensor<?x8xf32>) -> tensor<?x8xf32>
  %eb = tensor.empty(%n) : tensor<?x8xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<?x8xf32>) outs(%eb : tensor<?x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  } -> tensor<?x8xbf16>
  %shape = tensor.from_elements %b, %t, %c8 : tensor<3xi64>
  %x = tensor.reshape %r(%shape) : (tensor<?x8xbf16>, tensor<3xi64>) -> tensor<?x?x8xbf16>
  %bi = arith.index_cast %b : i64 to index
  %ti = arith.index_cast %t : i64 to index
  %e3 = tensor.empty(%bi, %ti) : tensor<?x?x8xbf16>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x?x8xbf16>) outs(%e3 : tensor<?x?x8xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %v = arith.negf %in : bf16
    linalg.yield %v : bf16
  } -> tensor<?x?x8xbf16>
  return %s : tensor<?x?x8xbf16>
}

/// The other way: leading dimensions merged into one, the trailing kept: a
/// collapse_shape. A static source whose leading sizes cannot multiply to
/// the shape's, a trailing size that changes, and a shape that is not built
/// from sizes stay reshapes.
// CHECK-LABEL: func.func @reshapes
//       CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<?x?x64xbf16> into tensor<?x64xbf16>
//       CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] output_shape [%{{.*}}, 2, 3, 8] : tensor<?x8xf32> into tensor<?x2x3x8xf32>
//       CHECK: tensor.reshape %{{.*}} : (tensor<6x8xf32>, tensor<3xi64>) -> tensor<?x4x8xf32>
//       CHECK: tensor.reshape %{{.*}} : (tensor<?x8xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
//       CHECK: tensor.reshape %{{.*}} : (tensor<?x8xf32>, tensor<2xi64>) -> tensor<?x8xf32>
//       CHECK: return %[[C]]
func.func @reshapes(%x: tensor<?x?x64xbf16>, %y: tensor<?x8xf32>, %z: tensor<6x8xf32>, %m: i64, %s: tensor<2xi64>)
    -> (tensor<?x64xbf16>, tensor<?x2x3x8xf32>, tensor<?x4x8xf32>, tensor<?x2x4xf32>, tensor<?x8xf32>) {
  %c2 = arith.constant 2 : i64
  %c3 = arith.constant 3 : i64
  %c4 = arith.constant 4 : i64
  %c8 = arith.constant 8 : i64
  %c64 = arith.constant 64 : i64
  %s1 = tensor.from_elements %m, %c64 : tensor<2xi64>
  %r1 = tensor.reshape %x(%s1) : (tensor<?x?x64xbf16>, tensor<2xi64>) -> tensor<?x64xbf16>
  %s2 = tensor.from_elements %m, %c2, %c3, %c8 : tensor<4xi64>
  %r2 = tensor.reshape %y(%s2) : (tensor<?x8xf32>, tensor<4xi64>) -> tensor<?x2x3x8xf32>
  %s3 = tensor.from_elements %m, %c4, %c8 : tensor<3xi64>
  %r3 = tensor.reshape %z(%s3) : (tensor<6x8xf32>, tensor<3xi64>) -> tensor<?x4x8xf32>
  %s4 = tensor.from_elements %m, %c2, %c4 : tensor<3xi64>
  %r4 = tensor.reshape %y(%s4) : (tensor<?x8xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
  %r5 = tensor.reshape %y(%s) : (tensor<?x8xf32>, tensor<2xi64>) -> tensor<?x8xf32>
  return %r1, %r2, %r3, %r4, %r5 : tensor<?x64xbf16>, tensor<?x2x3x8xf32>, tensor<?x4x8xf32>, tensor<?x2x4xf32>, tensor<?x8xf32>
}

/// A static result size over merged dynamic sizes: a collapse to the
/// dynamic size, then a cast; static merged sizes collapse straight to it.
// CHECK-LABEL: func.func @reshapes_static_merge
//       CHECK: %[[M:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<?x3x8xf32> into tensor<?x8xf32>
//       CHECK: tensor.cast %[[M]] : tensor<?x8xf32> to tensor<6x8xf32>
//       CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
func.func @reshapes_static_merge(%x: tensor<?x3x8xf32>, %y: tensor<2x3x8xf32>) -> (tensor<6x8xf32>, tensor<6x8xf32>) {
  %c6 = arith.constant 6 : i64
  %c8 = arith.constant 8 : i64
  %s = tensor.from_elements %c6, %c8 : tensor<2xi64>
  %r1 = tensor.reshape %x(%s) : (tensor<?x3x8xf32>, tensor<2xi64>) -> tensor<6x8xf32>
  %r2 = tensor.reshape %y(%s) : (tensor<2x3x8xf32>, tensor<2xi64>) -> tensor<6x8xf32>
  return %r1, %r2 : tensor<6x8xf32>, tensor<6x8xf32>
}

/// A slice of a tensor.concat that is exactly one operand is that operand
/// (static, and with a dynamic token count read by tensor.dim); a slice
/// across the operands' border, a part of one operand, or a strided slice
/// stays.
// CHECK-LABEL: func.func @slices_of_concat
//  CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>, %[[C:.*]]: tensor<?x8xf32>, %[[D:.*]]: tensor<?x8xf32>)
//       CHECK: %[[K:.*]] = tensor.concat dim(1) %[[A]], %[[B]]
//   CHECK-DAG: tensor.extract_slice %[[K]][0, 4] [4, 8] [1, 1]
//   CHECK-DAG: tensor.extract_slice %[[K]][0, 0] [4, 4] [1, 1]
//   CHECK-DAG: tensor.extract_slice %[[K]][0, 0] [4, 8] [1, 2]
//       CHECK: return %[[A]], %[[B]], %{{.*}}, %{{.*}}, %{{.*}}, %[[D]]
func.func @slices_of_concat(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<?x8xf32>, %d: tensor<?x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %k = tensor.concat dim(1) %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  %s0 = tensor.extract_slice %k[0, 0] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %s1 = tensor.extract_slice %k[0, 8] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %s2 = tensor.extract_slice %k[0, 4] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %s3 = tensor.extract_slice %k[0, 0] [4, 4] [1, 1] : tensor<4x16xf32> to tensor<4x4xf32>
  %s4 = tensor.extract_slice %k[0, 0] [4, 8] [1, 2] : tensor<4x16xf32> to tensor<4x8xf32>
  %kd = tensor.concat dim(1) %c, %d : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x16xf32>
  %n = tensor.dim %kd, %c0 : tensor<?x16xf32>
  %s5 = tensor.extract_slice %kd[0, 8] [%n, 8] [1, 1] : tensor<?x16xf32> to tensor<?x8xf32>
  return %s0, %s1, %s2, %s3, %s4, %s5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<?x8xf32>
}

// FP8 delayed scaling written out (the activation, then `x * scale` with the
// scale an argument, a clamp, the cast): producers are not fused into the
// generics on the way to that cast (the multiply and the cast still fuse:
// the cast itself reads no scale), so the activation's value stays a tensor
// (fusion-raise-quantize takes it as the quantizer's input).
// CHECK-LABEL: func.func @delayed_fp8_cast_keeps_input
//       CHECK: %[[A:.*]] = linalg.generic
//       CHECK:   math.exp
//       CHECK: linalg.generic {{.*}} ins(%[[A]], %arg1 : tensor<4x64xf32>, tensor<f32>)
//   CHECK-NOT:   math.exp
//       CHECK:   arith.mulf
//  CHECK-NEXT:   arith.truncf {{.*}} to f8E4M3FN
#map_d2 = affine_map<(d0, d1) -> (d0, d1)>
#map_d0 = affine_map<(d0, d1) -> ()>
func.func @delayed_fp8_cast_keeps_input(%x: tensor<4x64xf32>, %s: tensor<f32>) -> tensor<4x64xf8E4M3FN> {
  %one = arith.constant 1.000000e+00 : f32
  %e0 = tensor.empty() : tensor<4x64xf32>
  %a = linalg.generic {indexing_maps = [#map_d2, #map_d2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x64xf32>) outs(%e0 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.negf %in : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %r = arith.divf %in, %d : f32
    linalg.yield %r : f32
  } -> tensor<4x64xf32>
  %e1 = tensor.empty() : tensor<4x64xf32>
  %m = linalg.generic {indexing_maps = [#map_d2, #map_d0, #map_d2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %s : tensor<4x64xf32>, tensor<f32>) outs(%e1 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %sc: f32, %o: f32):
    %p = arith.mulf %in, %sc : f32
    linalg.yield %p : f32
  } -> tensor<4x64xf32>
  %e2 = tensor.empty() : tensor<4x64xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#map_d2, #map_d2], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<4x64xf32>) outs(%e2 : tensor<4x64xf8E4M3FN>) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %t = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x64xf8E4M3FN>
  return %q : tensor<4x64xf8E4M3FN>
}

// The same chain with a constant scale (a static scale: a buffer exported
// as a constant, which fusion-raise-quantize raises with that constant):
// the activation's value stays a tensor too; the multiply (the splat folded
// into it) and the cast fuse.
// CHECK-LABEL: func.func @constant_scale_fp8_cast_keeps_input
//       CHECK: %[[A:.*]] = linalg.generic
//       CHECK:   math.exp
//       CHECK: linalg.generic {{.*}} ins(%[[A]] : tensor<4x64xf32>)
//   CHECK-NOT:   math.exp
//       CHECK:   arith.mulf
//  CHECK-NEXT:   arith.truncf {{.*}} to f8E4M3FN
func.func @constant_scale_fp8_cast_keeps_input(%x: tensor<4x64xf32>) -> tensor<4x64xf8E4M3FN> {
  %one = arith.constant 1.000000e+00 : f32
  %s = arith.constant dense<2.0> : tensor<f32>
  %e0 = tensor.empty() : tensor<4x64xf32>
  %a = linalg.generic {indexing_maps = [#map_d2, #map_d2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x64xf32>) outs(%e0 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.negf %in : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %r = arith.divf %in, %d : f32
    linalg.yield %r : f32
  } -> tensor<4x64xf32>
  %e1 = tensor.empty() : tensor<4x64xf32>
  %m = linalg.generic {indexing_maps = [#map_d2, #map_d0, #map_d2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %s : tensor<4x64xf32>, tensor<f32>) outs(%e1 : tensor<4x64xf32>) {
  ^bb0(%in: f32, %sc: f32, %o: f32):
    %p = arith.mulf %in, %sc : f32
    linalg.yield %p : f32
  } -> tensor<4x64xf32>
  %e2 = tensor.empty() : tensor<4x64xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#map_d2, #map_d2], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<4x64xf32>) outs(%e2 : tensor<4x64xf8E4M3FN>) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %t = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x64xf8E4M3FN>
  return %q : tensor<4x64xf8E4M3FN>
}

// A decode-shaped Linear ([1, 1, K] viewed as [1, K]): the result expanded
// back with the unit T grouped with H ([[0], [1, 2]]). The unit dimension
// moves to the group before it, and the expand_shape then moves past the
// epilogue, whose per-column operand reads H alone: the epilogue reads the
// projection directly.
// CHECK-LABEL: func.func @decode_unit_t_regrouped
//       CHECK: %[[Y:.*]] = linalg.matmul
//       CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[Y]], %arg2 : tensor<1x8xf32>, tensor<8xf32>)
//       CHECK: tensor.expand_shape %[[G]] {{\[\[}}0, 1], [2]] output_shape [1, 1, 8]
#map_c3 = affine_map<(d0, d1, d2) -> (d2)>
#map_i3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @decode_unit_t_regrouped(%x: tensor<1x64xf32>, %w: tensor<64x8xf32>, %b: tensor<8xf32>) -> tensor<1x1x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8xf32>) -> tensor<1x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<1x64xf32>, tensor<64x8xf32>) outs(%f : tensor<1x8xf32>) -> tensor<1x8xf32>
  %v = tensor.expand_shape %y [[0], [1, 2]] output_shape [1, 1, 8] : tensor<1x8xf32> into tensor<1x1x8xf32>
  %e3 = tensor.empty() : tensor<1x1x8xf32>
  %r = linalg.generic {indexing_maps = [#map_i3, #map_c3, #map_i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v, %b : tensor<1x1x8xf32>, tensor<8xf32>) outs(%e3 : tensor<1x1x8xf32>) {
  ^bb0(%in: f32, %bb: f32, %o: f32):
    %s = arith.addf %in, %bb : f32
    linalg.yield %s : f32
  } -> tensor<1x1x8xf32>
  return %r : tensor<1x1x8xf32>
}

/// torch.einsum("nk,hk->nh", x, w) as torch-mlir writes it: a batch-1
/// batch_matmul whose weight is w moved through a unit dimension
/// (expand, transpose [1, 0, 2], collapse) and expanded again. The
/// batch_matmul becomes the matmul of the collapsed operands, the weight
/// chain the transpose of w (which the projection matcher reads through),
/// and the unit-dimension reshapes fold away.
// CHECK-LABEL: func.func @einsum_unit_batch
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>, %[[W:.*]]: tensor<32x64xbf16>)
//       CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<32x64xbf16>) outs(%{{.*}} : tensor<64x32xbf16>)
//       CHECK: %[[MM:.*]] = linalg.matmul ins(%[[X]], %[[T]] : tensor<4x64xbf16>, tensor<64x32xbf16>)
//   CHECK-NOT: batch_matmul
//       CHECK: return %[[MM]]
func.func @einsum_unit_batch(%x: tensor<4x64xbf16>, %w: tensor<32x64xbf16>) -> tensor<4x32xf32> {
  %e = tensor.expand_shape %w [[0], [1, 2]] output_shape [32, 64, 1] : tensor<32x64xbf16> into tensor<32x64x1xbf16>
  %x3 = tensor.expand_shape %x [[0, 1], [2]] output_shape [1, 4, 64] : tensor<4x64xbf16> into tensor<1x4x64xbf16>
  %i = tensor.empty() : tensor<64x32x1xbf16>
  %t = linalg.transpose ins(%e : tensor<32x64x1xbf16>) outs(%i : tensor<64x32x1xbf16>) permutation = [1, 0, 2]
  %c = tensor.collapse_shape %t [[0], [1, 2]] : tensor<64x32x1xbf16> into tensor<64x32xbf16>
  %w3 = tensor.expand_shape %c [[0, 1], [2]] output_shape [1, 64, 32] : tensor<64x32xbf16> into tensor<1x64x32xbf16>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x4x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
  %mm = linalg.batch_matmul ins(%x3, %w3 : tensor<1x4x64xbf16>, tensor<1x64x32xbf16>) outs(%f : tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
  %r = tensor.collapse_shape %mm [[0, 1], [2]] : tensor<1x4x32xf32> into tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}

/// The result of a 3-D einsum ("bsk,hk->bsh") moved back through unit
/// dimensions: [6, 64] expanded to [2, 3, 1, 64], transposed to
/// [2, 3, 64, 1] (only the unit dimension moves), collapsed to [2, 3, 64]:
/// the one expand_shape [6, 64] -> [2, 3, 64].
// CHECK-LABEL: func.func @unit_dims_moved_only
//  CHECK-SAME: (%[[Y:.*]]: tensor<6x64xbf16>)
//  CHECK-NEXT: %[[E:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 3, 64]
//  CHECK-NEXT: return %[[E]]
func.func @unit_dims_moved_only(%y: tensor<6x64xbf16>) -> tensor<2x3x64xbf16> {
  %e = tensor.expand_shape %y [[0, 1, 2], [3]] output_shape [2, 3, 1, 64] : tensor<6x64xbf16> into tensor<2x3x1x64xbf16>
  %i = tensor.empty() : tensor<2x3x64x1xbf16>
  %t = linalg.transpose ins(%e : tensor<2x3x1x64xbf16>) outs(%i : tensor<2x3x64x1xbf16>) permutation = [0, 1, 3, 2]
  %c = tensor.collapse_shape %t [[0], [1], [2, 3]] : tensor<2x3x64x1xbf16> into tensor<2x3x64xbf16>
  return %c : tensor<2x3x64xbf16>
}

/// Dynamic tokens: [?, 16] -> [?, 1, 1, 16] -> [1, ?, 16, 1] -> [1, ?, 16]
/// inserts one leading unit dimension.
// CHECK-LABEL: func.func @unit_dims_dynamic
//  CHECK-SAME: (%[[Y:.*]]: tensor<?x16xf32>)
//       CHECK: %[[N:.*]] = tensor.dim %[[Y]], %c0
//       CHECK: %[[E:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [1, %[[N]], 16]
//  CHECK-NEXT: return %[[E]]
func.func @unit_dims_dynamic(%y: tensor<?x16xf32>) -> tensor<1x?x16xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %y, %c0 : tensor<?x16xf32>
  %e = tensor.expand_shape %y [[0], [1, 2, 3]] output_shape [%n, 1, 1, 16] : tensor<?x16xf32> into tensor<?x1x1x16xf32>
  %i = tensor.empty(%n) : tensor<1x?x16x1xf32>
  %t = linalg.transpose ins(%e : tensor<?x1x1x16xf32>) outs(%i : tensor<1x?x16x1xf32>) permutation = [2, 0, 3, 1]
  %c = tensor.collapse_shape %t [[0], [1], [2, 3]] : tensor<1x?x16x1xf32> into tensor<1x?x16xf32>
  return %c : tensor<1x?x16xf32>
}

/// Not a unit batch (2 batches), and a transpose of dimensions that are not
/// 1 after a reshape that splits one: both stay.
// CHECK-LABEL: func.func @negative_batch_and_real_transpose
//       CHECK: linalg.batch_matmul
//       CHECK: tensor.expand_shape
//       CHECK: linalg.generic
//       CHECK: tensor.collapse_shape
func.func @negative_batch_and_real_transpose(%x: tensor<2x4x8xf32>, %w: tensor<2x8x16xf32>, %y: tensor<6x4xf32>) -> (tensor<2x4x16xf32>, tensor<3x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %mm = linalg.batch_matmul ins(%x, %w : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%f : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %e = tensor.expand_shape %y [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
  %i = tensor.empty() : tensor<3x2x4xf32>
  %t = linalg.transpose ins(%e : tensor<2x3x4xf32>) outs(%i : tensor<3x2x4xf32>) permutation = [1, 0, 2]
  %c = tensor.collapse_shape %t [[0], [1, 2]] : tensor<3x2x4xf32> into tensor<3x8xf32>
  return %mm, %c : tensor<2x4x16xf32>, tensor<3x8xf32>
}

/// A unit batch with the unsigned cast (integers read as unsigned): the
/// matmul this pass would create casts signed, so it stays.
// CHECK-LABEL: func.func @negative_unit_batch_unsigned
//       CHECK: linalg.batch_matmul
func.func @negative_unit_batch_unsigned(%x: tensor<1x4x8xi8>, %w: tensor<1x8x16xi8>) -> tensor<1x4x16xi32> {
  %zero = arith.constant 0 : i32
  %o = tensor.empty() : tensor<1x4x16xi32>
  %f = linalg.fill ins(%zero : i32) outs(%o : tensor<1x4x16xi32>) -> tensor<1x4x16xi32>
  %mm = linalg.batch_matmul {cast = #linalg.type_fn<cast_unsigned>} ins(%x, %w : tensor<1x4x8xi8>, tensor<1x8x16xi8>) outs(%f : tensor<1x4x16xi32>) -> tensor<1x4x16xi32>
  return %mm : tensor<1x4x16xi32>
}

/// x.float().chunk(2, -1): each half widens its own slice of x (the
/// widening commutes with the slice), so the widening fuses into the
/// generic that reads the halves and x stays bf16 there.
// CHECK-LABEL: func.func @slices_of_widening
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>)
//   CHECK-DAG: %[[G:.*]] = tensor.extract_slice %[[X]][0, 0] [4, 32] [1, 1]
//   CHECK-DAG: %[[U:.*]] = tensor.extract_slice %[[X]][0, 32] [4, 32] [1, 1]
//       CHECK: linalg.generic {{.*}} ins(%[[G]], %[[U]] : tensor<4x32xbf16>, tensor<4x32xbf16>)
//   CHECK-NOT: linalg.generic
func.func @slices_of_widening(%x: tensor<4x64xbf16>) -> tensor<4x32xf32> {
  %w = arith.extf %x : tensor<4x64xbf16> to tensor<4x64xf32>
  %g = tensor.extract_slice %w[0, 0] [4, 32] [1, 1] : tensor<4x64xf32> to tensor<4x32xf32>
  %u = tensor.extract_slice %w[0, 32] [4, 32] [1, 1] : tensor<4x64xf32> to tensor<4x32xf32>
  %p = arith.mulf %g, %u : tensor<4x32xf32>
  return %p : tensor<4x32xf32>
}

/// The widened tensor also read whole: it stays, and so do its slices.
// CHECK-LABEL: func.func @negative_widening_also_whole
//       CHECK: %[[W:.*]] = linalg.generic
//       CHECK: tensor.extract_slice %[[W]]
func.func @negative_widening_also_whole(%x: tensor<4x64xbf16>) -> (tensor<4x32xf32>, tensor<4x64xf32>) {
  %w = arith.extf %x : tensor<4x64xbf16> to tensor<4x64xf32>
  %g = tensor.extract_slice %w[0, 0] [4, 32] [1, 1] : tensor<4x64xf32> to tensor<4x32xf32>
  %u = tensor.extract_slice %w[0, 32] [4, 32] [1, 1] : tensor<4x64xf32> to tensor<4x32xf32>
  %p = arith.mulf %g, %u : tensor<4x32xf32>
  return %p, %w : tensor<4x32xf32>, tensor<4x64xf32>
}
