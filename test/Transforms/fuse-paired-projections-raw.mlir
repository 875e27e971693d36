// RUN: fusion-opt %s --fusion-fuse-paired-projections --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --fusion-fuse-paired-projections | FileCheck %s

// fusion-fuse-paired-projections on IR that was not normalised (no cse):
// the cases that cse or elementwise fusion would hide.

#x_map = affine_map<(n, h, k) -> (n, k)>
#w_map = affine_map<(n, h, k) -> (h, k)>
#o_map = affine_map<(n, h, k) -> (n, h)>
#id = affine_map<(d0, d1) -> (d0, d1)>

/// The two inputs are the same computation under two SSA names (no cse ran
/// before the pass); the pass compares SSA values, not contents.
// CHECK-LABEL: func.func @negative_different_lhs_names
//   CHECK-NOT: fusion.paired_projection
func.func @negative_different_lhs_names(%x: tensor<4x64xbf16>, %w0: tensor<8x64xf32>,
                                        %w1: tensor<8x64xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  %xa = arith.extf %x : tensor<4x64xbf16> to tensor<4x64xf32>
  %xb = arith.extf %x : tensor<4x64xbf16> to tensor<4x64xf32>
  // expected-remark @below {{Reason="different LHS", Remark="the inputs are equal computations under two SSA names (run cse first)"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%xa, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%xb, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y0, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}


/// The epilogue is a chain of two generics (not normalised): the pass sees
/// the first one, y + b, as the epilogue and its consumer as a later op.
// CHECK-LABEL: func.func @bias_then_more
//       CHECK: %[[R:.*]]:2 = fusion.paired_projection {{.*}} epilogues(bias bias %{{.*}}, none)
//       CHECK: math.tanh
func.func @bias_then_more(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>,
                          %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues bias, none"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y0, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %r = arith.addf %bias, %in : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %th = math.tanh %t : tensor<4x8xf32>
  return %th, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// torch-mlir's F.linear on a [B, T, K] input as it comes out of torch-mlir
/// (no elementwise fusion): linalg.transpose of the [H, K] weight, then
/// linalg.broadcast across the batch, then linalg.batch_matmul. The fused op
/// reads the [H, K] weights; the transposes and broadcasts die.
// CHECK-LABEL: func.func @batch_linear_transpose_broadcast
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x64xf32>, %[[W0:.*]]: tensor<8x64xf32>, %[[W1:.*]]: tensor<8x64xf32>)
//       CHECK: %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]]
//       CHECK: fusion.paired_projection %[[X2]], %[[W0]], %[[W1]] epilogues(none, none) outs
//   CHECK-NOT: linalg.transpose
//   CHECK-NOT: linalg.broadcast
func.func @batch_linear_transpose_broadcast(%x: tensor<2x3x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>)
    -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x3x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %te = tensor.empty() : tensor<64x8xf32>
  %be = tensor.empty() : tensor<2x64x8xf32>
  %w0t = linalg.transpose ins(%w0 : tensor<8x64xf32>) outs(%te : tensor<64x8xf32>) permutation = [1, 0]
  %w0b = linalg.broadcast ins(%w0t : tensor<64x8xf32>) outs(%be : tensor<2x64x8xf32>) dimensions = [0]
  %w1t = linalg.transpose ins(%w1 : tensor<8x64xf32>) outs(%te : tensor<64x8xf32>) permutation = [1, 0]
  %w1b = linalg.broadcast ins(%w1t : tensor<64x8xf32>) outs(%be : tensor<2x64x8xf32>) dimensions = [0]
  // expected-remark @below {{Remark="paired linalg.batch_matmul and linalg.batch_matmul into fusion.paired_projection with epilogues none, none"}}
  %y0 = linalg.batch_matmul ins(%x, %w0b : tensor<2x3x64xf32>, tensor<2x64x8xf32>)
      outs(%acc : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %y1 = linalg.batch_matmul ins(%x, %w1b : tensor<2x3x64xf32>, tensor<2x64x8xf32>)
      outs(%acc : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  return %y0, %y1 : tensor<2x3x8xf32>, tensor<2x3x8xf32>
}
