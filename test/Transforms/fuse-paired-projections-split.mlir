// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections))' | FileCheck %s
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections))' --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections))' --remarks-filter=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: fusion-opt %s --fusion-pipeline -o /dev/null

// One projection over stacked weights, cut in parts (torch's chunk / split
// of a fused w13 or [b | a] Linear): split into one projection per part over
// a row range of the weight (an extract_slice, no copy), then paired; and the
// cuts the pass declines, each with its reason.

#x_map = affine_map<(n, h, k) -> (n, k)>
#w_map = affine_map<(n, h, k) -> (h, k)>
#o_map = affine_map<(n, h, k) -> (n, h)>

/// Llama's w13, chunked: silu(gate) * up of the two halves, in f32.
// REMARK: split linalg.matmul into 2 projections over rows [0, 32), [32, 64) of its weight
// CHECK-LABEL: func.func @w13_chunk
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[W:.*]]: tensor<64x64xf32>)
//   CHECK-DAG: %[[WG:.*]] = tensor.extract_slice %[[W]][0, 0] [32, 64] [1, 1]
//   CHECK-DAG: %[[WU:.*]] = tensor.extract_slice %[[W]][32, 0] [32, 64] [1, 1]
//       CHECK: fusion.paired_projection %[[X]], %[[WG]], %[[WU]] epilogues(none, none) gated(#fusion.act<swiglu>)
//   CHECK-NOT: linalg.matmul
func.func @w13_chunk(%x: tensor<4x64xf32>, %w: tensor<64x64xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x64xf32>) -> tensor<4x64xf32>
  // expected-remark @+2 {{Remark="split linalg.matmul into 2 projections over rows}}
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu"}}
  %y = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w : tensor<4x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<4x64xf32>) -> tensor<4x64xf32>
  %g = tensor.extract_slice %y[0, 0] [4, 32] [1, 1] : tensor<4x64xf32> to tensor<4x32xf32>
  %u = tensor.extract_slice %y[0, 32] [4, 32] [1, 1] : tensor<4x64xf32> to tensor<4x32xf32>
  %n = arith.negf %g : tensor<4x32xf32>
  %e = math.exp %n : tensor<4x32xf32>
  %one = arith.constant dense<1.0> : tensor<4x32xf32>
  %d = arith.addf %one, %e : tensor<4x32xf32>
  %s = arith.divf %g, %d : tensor<4x32xf32>
  %h = arith.mulf %s, %u : tensor<4x32xf32>
  return %h : tensor<4x32xf32>
}

/// Overlapping parts: no split.
// CHECK-LABEL: func.func @negative_overlap
//   CHECK-NOT: fusion.paired_projection
func.func @negative_overlap(%x: tensor<4x64xf32>, %w: tensor<64x64xf32>) -> (tensor<4x32xf32>, tensor<4x40xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x64xf32>) -> tensor<4x64xf32>
  // expected-remark @below {{Reason="unsupported split", Remark="the slices of the result overlap"}}
  %y = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w : tensor<4x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<4x64xf32>) -> tensor<4x64xf32>
  %a = tensor.extract_slice %y[0, 0] [4, 32] [1, 1] : tensor<4x64xf32> to tensor<4x32xf32>
  %b = tensor.extract_slice %y[0, 24] [4, 40] [1, 1] : tensor<4x64xf32> to tensor<4x40xf32>
  return %a, %b : tensor<4x32xf32>, tensor<4x40xf32>
}

/// A slice that cuts the token dimension: no split.
// CHECK-LABEL: func.func @negative_token_cut
//   CHECK-NOT: fusion.paired_projection
func.func @negative_token_cut(%x: tensor<4x64xf32>, %w: tensor<64x64xf32>) -> (tensor<2x32xf32>, tensor<4x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x64xf32>) -> tensor<4x64xf32>
  // expected-remark @below {{Reason="unsupported split", Remark="a slice cuts a token dimension"}}
  %y = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w : tensor<4x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<4x64xf32>) -> tensor<4x64xf32>
  %a = tensor.extract_slice %y[0, 0] [2, 32] [1, 1] : tensor<4x64xf32> to tensor<2x32xf32>
  %b = tensor.extract_slice %y[0, 32] [4, 32] [1, 1] : tensor<4x64xf32> to tensor<4x32xf32>
  return %a, %b : tensor<2x32xf32>, tensor<4x32xf32>
}

/// Qwen3-Next's in_proj_ba: [N, 16] viewed as [N, 4 groups, 4] and split
/// 2 + 2 inside each group (the parts' columns interleave), the parts kept
/// as [N, 4, 2]: declined (the parts must be collapsed back to [N, 8]).
// CHECK-LABEL: func.func @negative_head_groups
//   CHECK-NOT: fusion.paired_projection
func.func @negative_head_groups(%x: tensor<1x64xf32>, %w: tensor<16x64xf32>) -> (tensor<1x4x2xf32>, tensor<1x4x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x16xf32>) -> tensor<1x16xf32>
  // expected-remark @below {{Reason="unsupported split", Remark="the result is reshaped into head groups and split inside each group (the parts' columns interleave); a part is not collapsed back to [tokens..., groups x width]"}}
  %y = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w : tensor<1x64xf32>, tensor<16x64xf32>) outs(%acc : tensor<1x16xf32>) -> tensor<1x16xf32>
  %g = tensor.expand_shape %y [[0], [1, 2]] output_shape [1, 4, 4] : tensor<1x16xf32> into tensor<1x4x4xf32>
  %b = tensor.extract_slice %g[0, 0, 0] [1, 4, 2] [1, 1, 1] : tensor<1x4x4xf32> to tensor<1x4x2xf32>
  %a = tensor.extract_slice %g[0, 0, 2] [1, 4, 2] [1, 1, 1] : tensor<1x4x4xf32> to tensor<1x4x2xf32>
  return %b, %a : tensor<1x4x2xf32>, tensor<1x4x2xf32>
}

/// The same split, each part collapsed back to [N, 8] as Qwen3-Next writes
/// it, over a constant weight: the weight's rows are de-interleaved at
/// compile time into one constant per part (rows 0, 1, 4, 5, 8, 9, 12, 13
/// and 2, 3, 6, 7, ...), which then pair: sigmoid(b), softplus(a + 1).
// CHECK-LABEL: func.func @head_groups_constant
//   CHECK-DAG: %[[WB:.*]] = arith.constant dense<{{\[\[}}0.000000e+00, 0.000000e+00], [1.000000e+00, 1.000000e+00], [4.000000e+00, 4.000000e+00], [5.000000e+00, 5.000000e+00], [8.000000e+00, 8.000000e+00], [9.000000e+00, 9.000000e+00], [1.200000e+01, 1.200000e+01], [1.300000e+01, 1.300000e+01]]> : tensor<8x2xf32>
//   CHECK-DAG: %[[WA:.*]] = arith.constant dense<{{\[\[}}2.000000e+00, 2.000000e+00], [3.000000e+00, 3.000000e+00], [6.000000e+00, 6.000000e+00], [7.000000e+00, 7.000000e+00], [1.000000e+01, 1.000000e+01], [1.100000e+01, 1.100000e+01], [1.400000e+01, 1.400000e+01], [1.500000e+01, 1.500000e+01]]> : tensor<8x2xf32>
//       CHECK: fusion.paired_projection %{{.*}}, %[[WB]], %[[WA]] epilogues(sigmoid, softplus_bias_scale
//   CHECK-NOT: tensor.extract_slice
func.func @head_groups_constant(%x: tensor<3x2xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  %w = arith.constant dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0], [5.0, 5.0], [6.0, 6.0], [7.0, 7.0],
                             [8.0, 8.0], [9.0, 9.0], [10.0, 10.0], [11.0, 11.0], [12.0, 12.0], [13.0, 13.0], [14.0, 14.0], [15.0, 15.0]]> : tensor<16x2xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %empty = tensor.empty() : tensor<3x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<3x16xf32>) -> tensor<3x16xf32>
  // expected-remark @below {{Remark="split linalg.matmul into 2 projections over rows [0, 2), [2, 4) of each of the 4 head groups of 4 rows of its constant weight (de-interleaved into one constant per part)"}}
  // expected-remark @+1 {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues sigmoid, softplus_bias_scale"}}
  %y = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w : tensor<3x2xf32>, tensor<16x2xf32>) outs(%acc : tensor<3x16xf32>) -> tensor<3x16xf32>
  %g = tensor.expand_shape %y [[0], [1, 2]] output_shape [3, 4, 4] : tensor<3x16xf32> into tensor<3x4x4xf32>
  %bs = tensor.extract_slice %g[0, 0, 0] [3, 4, 2] [1, 1, 1] : tensor<3x4x4xf32> to tensor<3x4x2xf32>
  %as = tensor.extract_slice %g[0, 0, 2] [3, 4, 2] [1, 1, 1] : tensor<3x4x4xf32> to tensor<3x4x2xf32>
  %b = tensor.collapse_shape %bs [[0], [1, 2]] : tensor<3x4x2xf32> into tensor<3x8xf32>
  %a = tensor.collapse_shape %as [[0], [1, 2]] : tensor<3x4x2xf32> into tensor<3x8xf32>
  %e = tensor.empty() : tensor<3x8xf32>
  %beta = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<3x8xf32>) outs(%e : tensor<3x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %x1, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<3x8xf32>
  %gate = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<3x8xf32>) outs(%e : tensor<3x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.addf %v, %one : f32
    %x1 = math.exp %t : f32
    %l = math.log1p %x1 : f32
    linalg.yield %l : f32
  } -> tensor<3x8xf32>
  return %beta, %gate : tensor<3x8xf32>, tensor<3x8xf32>
}

/// A [K, H] constant weight (kn): its columns are de-interleaved.
// CHECK-LABEL: func.func @head_groups_constant_kn
//   CHECK-DAG: %[[WA:.*]] = arith.constant dense<{{\[\[}}2.000000e+00, 3.000000e+00, 6.000000e+00, 7.000000e+00, 1.000000e+01, 1.100000e+01, 1.400000e+01, 1.500000e+01], [1.020000e+02, 1.030000e+02, 1.060000e+02, 1.070000e+02, 1.100000e+02, 1.110000e+02, 1.140000e+02, 1.150000e+02]]> : tensor<2x8xf32>
//   CHECK-DAG: %[[WB:.*]] = arith.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 4.000000e+00, 5.000000e+00, 8.000000e+00, 9.000000e+00, 1.200000e+01, 1.300000e+01], [1.000000e+02, 1.010000e+02, 1.040000e+02, 1.050000e+02, 1.080000e+02, 1.090000e+02, 1.120000e+02, 1.130000e+02]]> : tensor<2x8xf32>
//       CHECK: fusion.paired_projection %{{.*}}, %[[WB]], %[[WA]] epilogues(none, none) kn
func.func @head_groups_constant_kn(%x: tensor<3x2xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0],
                             [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0]]> : tensor<2x16xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<3x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<3x16xf32>) -> tensor<3x16xf32>
  // expected-remark @below {{Remark="split linalg.matmul into 2 projections over rows [0, 2), [2, 4) of each of the 4 head groups of 4 rows of its constant weight (de-interleaved into one constant per part)"}}
  // expected-remark @+1 {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues none, none"}}
  %y = linalg.matmul ins(%x, %w : tensor<3x2xf32>, tensor<2x16xf32>) outs(%acc : tensor<3x16xf32>) -> tensor<3x16xf32>
  %g = tensor.expand_shape %y [[0], [1, 2]] output_shape [3, 4, 4] : tensor<3x16xf32> into tensor<3x4x4xf32>
  %bs = tensor.extract_slice %g[0, 0, 0] [3, 4, 2] [1, 1, 1] : tensor<3x4x4xf32> to tensor<3x4x2xf32>
  %as = tensor.extract_slice %g[0, 0, 2] [3, 4, 2] [1, 1, 1] : tensor<3x4x4xf32> to tensor<3x4x2xf32>
  %b = tensor.collapse_shape %bs [[0], [1, 2]] : tensor<3x4x2xf32> into tensor<3x8xf32>
  %a = tensor.collapse_shape %as [[0], [1, 2]] : tensor<3x4x2xf32> into tensor<3x8xf32>
  return %b, %a : tensor<3x8xf32>, tensor<3x8xf32>
}

/// The same over a weight that is a function argument (not a constant):
/// read in place, each part a [G, w, K] slice of the weight expanded into
/// its head groups, which the paired op takes as a row-grouped weight (no
/// copy; the runtime reads row g * w + r at its place in the weight).
// REMARK: split linalg.matmul into 2 projections over rows [0, 2), [2, 4) of each of the 4 head groups of 4 rows of its weight (read in place: each part a row-grouped view of the weight)
// CHECK-LABEL: func.func @head_groups_argument
//  CHECK-SAME: (%[[X:.*]]: tensor<3x2xf32>, %[[W:.*]]: tensor<16x2xf32>
//       CHECK: %[[E:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1], [2]] output_shape [4, 4, 2] : tensor<16x2xf32> into tensor<4x4x2xf32>
//   CHECK-DAG: %[[WB:.*]] = tensor.extract_slice %[[E]][0, 0, 0] [4, 2, 2] [1, 1, 1] : tensor<4x4x2xf32> to tensor<4x2x2xf32>
//   CHECK-DAG: %[[WA:.*]] = tensor.extract_slice %[[E]][0, 2, 0] [4, 2, 2] [1, 1, 1] : tensor<4x4x2xf32> to tensor<4x2x2xf32>
//       CHECK: fusion.paired_projection %[[X]], %[[WB]], %[[WA]] epilogues(sigmoid, softplus_bias_scale
//  CHECK-SAME: tensor<4x2x2xf32>, tensor<4x2x2xf32>
//   CHECK-NOT: tensor.collapse_shape
//   CHECK-NOT: linalg.matmul
func.func @head_groups_argument(%x: tensor<3x2xf32>, %w: tensor<16x2xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %empty = tensor.empty() : tensor<3x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<3x16xf32>) -> tensor<3x16xf32>
  // expected-remark @below {{Remark="split linalg.matmul into 2 projections over rows [0, 2), [2, 4) of each of the 4 head groups of 4 rows of its weight (read in place: each part a row-grouped view of the weight)"}}
  // expected-remark @+1 {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues sigmoid, softplus_bias_scale"}}
  %y = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w : tensor<3x2xf32>, tensor<16x2xf32>) outs(%acc : tensor<3x16xf32>) -> tensor<3x16xf32>
  %g = tensor.expand_shape %y [[0], [1, 2]] output_shape [3, 4, 4] : tensor<3x16xf32> into tensor<3x4x4xf32>
  %bs = tensor.extract_slice %g[0, 0, 0] [3, 4, 2] [1, 1, 1] : tensor<3x4x4xf32> to tensor<3x4x2xf32>
  %as = tensor.extract_slice %g[0, 0, 2] [3, 4, 2] [1, 1, 1] : tensor<3x4x4xf32> to tensor<3x4x2xf32>
  %b = tensor.collapse_shape %bs [[0], [1, 2]] : tensor<3x4x2xf32> into tensor<3x8xf32>
  %a = tensor.collapse_shape %as [[0], [1, 2]] : tensor<3x4x2xf32> into tensor<3x8xf32>
  %e = tensor.empty() : tensor<3x8xf32>
  %beta = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<3x8xf32>) outs(%e : tensor<3x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %x1, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<3x8xf32>
  %gate = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<3x8xf32>) outs(%e : tensor<3x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.addf %v, %one : f32
    %x1 = math.exp %t : f32
    %l = math.log1p %x1 : f32
    linalg.yield %l : f32
  } -> tensor<3x8xf32>
  return %beta, %gate : tensor<3x8xf32>, tensor<3x8xf32>
}

/// A [K, H] weight argument (kn): [K, G, w] column slices, read in place.
// CHECK-LABEL: func.func @head_groups_argument_kn
//  CHECK-SAME: (%[[X:.*]]: tensor<3x2xf32>, %[[W:.*]]: tensor<2x16xf32>
//       CHECK: %[[E:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0], [1, 2]] output_shape [2, 4, 4] : tensor<2x16xf32> into tensor<2x4x4xf32>
//   CHECK-DAG: %[[WB:.*]] = tensor.extract_slice %[[E]][0, 0, 0] [2, 4, 2] [1, 1, 1] : tensor<2x4x4xf32> to tensor<2x4x2xf32>
//   CHECK-DAG: %[[WA:.*]] = tensor.extract_slice %[[E]][0, 0, 2] [2, 4, 2] [1, 1, 1] : tensor<2x4x4xf32> to tensor<2x4x2xf32>
//       CHECK: fusion.paired_projection %[[X]], %[[WB]], %[[WA]] epilogues(none, none) kn
func.func @head_groups_argument_kn(%x: tensor<3x2xf32>, %w: tensor<2x16xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<3x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<3x16xf32>) -> tensor<3x16xf32>
  // expected-remark @below {{Remark="split linalg.matmul into 2 projections over rows [0, 2), [2, 4) of each of the 4 head groups of 4 rows of its weight (read in place: each part a row-grouped view of the weight)"}}
  // expected-remark @+1 {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues none, none"}}
  %y = linalg.matmul ins(%x, %w : tensor<3x2xf32>, tensor<2x16xf32>) outs(%acc : tensor<3x16xf32>) -> tensor<3x16xf32>
  %g = tensor.expand_shape %y [[0], [1, 2]] output_shape [3, 4, 4] : tensor<3x16xf32> into tensor<3x4x4xf32>
  %bs = tensor.extract_slice %g[0, 0, 0] [3, 4, 2] [1, 1, 1] : tensor<3x4x4xf32> to tensor<3x4x2xf32>
  %as = tensor.extract_slice %g[0, 0, 2] [3, 4, 2] [1, 1, 1] : tensor<3x4x4xf32> to tensor<3x4x2xf32>
  %b = tensor.collapse_shape %bs [[0], [1, 2]] : tensor<3x4x2xf32> into tensor<3x8xf32>
  %a = tensor.collapse_shape %as [[0], [1, 2]] : tensor<3x4x2xf32> into tensor<3x8xf32>
  return %b, %a : tensor<3x8xf32>, tensor<3x8xf32>
}

/// torch-mlir's head-group view when both token dimensions are dynamic: a
/// tensor.reshape to a shape built from sizes that cuts the columns too
/// (16 into 4 x 4), then slices. Not an expand_shape: declined with the
/// reason.
// CHECK-LABEL: func.func @negative_head_groups_reshape
//   CHECK-NOT: fusion.paired_projection
func.func @negative_head_groups_reshape(%x: tensor<?x2xf32>, %b: i64, %t: i64) -> (tensor<?x?x4x2xf32>, tensor<?x?x4x2xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : i64
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<1.0> : tensor<16x2xf32>
  %n = tensor.dim %x, %c0 : tensor<?x2xf32>
  %empty = tensor.empty(%n) : tensor<?x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x16xf32>) -> tensor<?x16xf32>
  // expected-remark @below {{Reason="unsupported split", Remark="the result is reshaped by a tensor.reshape to a shape built from sizes that also cuts its columns (a head-group view with two dynamic token dimensions) before it is split; only an expand_shape is split"}}
  %y = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w : tensor<?x2xf32>, tensor<16x2xf32>) outs(%acc : tensor<?x16xf32>) -> tensor<?x16xf32>
  %shape = tensor.from_elements %b, %t, %c4, %c4 : tensor<4xi64>
  %g = tensor.reshape %y(%shape) : (tensor<?x16xf32>, tensor<4xi64>) -> tensor<?x?x4x4xf32>
  %bi = arith.index_cast %b : i64 to index
  %ti = arith.index_cast %t : i64 to index
  %bs = tensor.extract_slice %g[0, 0, 0, 0] [%bi, %ti, 4, 2] [1, 1, 1, 1] : tensor<?x?x4x4xf32> to tensor<?x?x4x2xf32>
  %as = tensor.extract_slice %g[0, 0, 0, 2] [%bi, %ti, 4, 2] [1, 1, 1, 1] : tensor<?x?x4x4xf32> to tensor<?x?x4x2xf32>
  return %bs, %as : tensor<?x?x4x2xf32>, tensor<?x?x4x2xf32>
}

/// A stacked Linear with a bias in the accumulator (torch-mlir's addmm): the
/// parts would need slices of the bias; declined.
// CHECK-LABEL: func.func @negative_init_bias
//   CHECK-NOT: fusion.paired_projection
func.func @negative_init_bias(%x: tensor<4x64xf32>, %w: tensor<64x64xf32>, %bias: tensor<64xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %empty = tensor.empty() : tensor<4x64xf32>
  %acc = linalg.broadcast ins(%bias : tensor<64xf32>) outs(%empty : tensor<4x64xf32>) dimensions = [0]
  // expected-remark @below {{Reason="unsupported split", Remark="the accumulator starts from a bias (addmm); the parts would need slices of it, which the split does not make"}}
  %y = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w : tensor<4x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<4x64xf32>) -> tensor<4x64xf32>
  %a = tensor.extract_slice %y[0, 0] [4, 32] [1, 1] : tensor<4x64xf32> to tensor<4x32xf32>
  %b = tensor.extract_slice %y[0, 32] [4, 32] [1, 1] : tensor<4x64xf32> to tensor<4x32xf32>
  return %a, %b : tensor<4x32xf32>, tensor<4x32xf32>
}

/// A bf16 w13 Linear with bias=True, chunked (torch-mlir: y + b rounded to
/// bf16 once, then the chunks): each part gets its rows of the weight and
/// the same columns of the bias, added before its rounding (with_bias).
// REMARK: split linalg.matmul into 2 projections over rows [0, 32), [32, 64) of its weight and those columns of its bias
// CHECK-LABEL: func.func @w13_bias_chunk_bf16
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>, %[[W:.*]]: tensor<64x64xbf16>, %[[B:.*]]: tensor<64xbf16>)
//   CHECK-DAG: %[[BG:.*]] = tensor.extract_slice %[[B]][0] [32] [1]
//   CHECK-DAG: %[[BU:.*]] = tensor.extract_slice %[[B]][32] [32] [1]
//       CHECK: fusion.paired_projection %[[X]], %{{.*}}, %{{.*}} epilogues(round(bf16, with_bias) bias bias %[[BG]], round(bf16, with_bias) bias bias %[[BU]]) gated(#fusion.act<swiglu>)
func.func @w13_bias_chunk_bf16(%x: tensor<4x64xbf16>, %w: tensor<64x64xbf16>, %b: tensor<64xbf16>) -> tensor<4x32xbf16> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x64xf32>) -> tensor<4x64xf32>
  // expected-remark @+2 {{Remark="split linalg.matmul into 2 projections over rows [0, 32), [32, 64) of its weight and those columns of its bias"}}
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu of the accumulators rounded to bf16 with a gate bias rounded with it with an up bias rounded with it"}}
  %y = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w : tensor<4x64xbf16>, tensor<64x64xbf16>) outs(%acc : tensor<4x64xf32>) -> tensor<4x64xf32>
  %eb = tensor.empty() : tensor<4x64xbf16>
  %yb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%y, %b : tensor<4x64xf32>, tensor<64xbf16>) outs(%eb : tensor<4x64xbf16>) {
  ^bb0(%v: f32, %bv: bf16, %o: bf16):
    %bf = arith.extf %bv : bf16 to f32
    %t = arith.addf %v, %bf : f32
    %r = arith.truncf %t : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<4x64xbf16>
  %gb = tensor.extract_slice %yb[0, 0] [4, 32] [1, 1] : tensor<4x64xbf16> to tensor<4x32xbf16>
  %ub = tensor.extract_slice %yb[0, 32] [4, 32] [1, 1] : tensor<4x64xbf16> to tensor<4x32xbf16>
  %g = arith.extf %gb : tensor<4x32xbf16> to tensor<4x32xf32>
  %u = arith.extf %ub : tensor<4x32xbf16> to tensor<4x32xf32>
  %n = arith.negf %g : tensor<4x32xf32>
  %e = math.exp %n : tensor<4x32xf32>
  %one = arith.constant dense<1.0> : tensor<4x32xf32>
  %d = arith.addf %one, %e : tensor<4x32xf32>
  %s = arith.divf %g, %d : tensor<4x32xf32>
  %h = arith.mulf %s, %u : tensor<4x32xf32>
  %hb = arith.truncf %h : tensor<4x32xf32> to tensor<4x32xbf16>
  return %hb : tensor<4x32xbf16>
}

/// A biased result split inside head groups: the parts' biases would need
/// de-interleaving, which the split does not do.
// CHECK-LABEL: func.func @negative_head_groups_biased
//   CHECK-NOT: fusion.paired_projection
func.func @negative_head_groups_biased(%x: tensor<3x2xf32>, %w: tensor<16x2xf32>, %bias: tensor<16xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<3x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<3x16xf32>) -> tensor<3x16xf32>
  // expected-remark @below {{Reason="unsupported split", Remark="the result is biased before a split into head groups; the parts' biases would need de-interleaving, which the split does not do"}}
  %y = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w : tensor<3x2xf32>, tensor<16x2xf32>) outs(%acc : tensor<3x16xf32>) -> tensor<3x16xf32>
  %yb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%y, %bias : tensor<3x16xf32>, tensor<16xf32>) outs(%empty : tensor<3x16xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %t = arith.addf %v, %bv : f32
    linalg.yield %t : f32
  } -> tensor<3x16xf32>
  %g = tensor.expand_shape %yb [[0], [1, 2]] output_shape [3, 4, 4] : tensor<3x16xf32> into tensor<3x4x4xf32>
  %bs = tensor.extract_slice %g[0, 0, 0] [3, 4, 2] [1, 1, 1] : tensor<3x4x4xf32> to tensor<3x4x2xf32>
  %as = tensor.extract_slice %g[0, 0, 2] [3, 4, 2] [1, 1, 1] : tensor<3x4x4xf32> to tensor<3x4x2xf32>
  %b = tensor.collapse_shape %bs [[0], [1, 2]] : tensor<3x4x2xf32> into tensor<3x8xf32>
  %a = tensor.collapse_shape %as [[0], [1, 2]] : tensor<3x4x2xf32> into tensor<3x8xf32>
  return %b, %a : tensor<3x8xf32>, tensor<3x8xf32>
}

/// A dynamic token count: the chunks' token size is read off the result
/// (tensor.dim), which is the whole dimension, and the sizes read off the
/// projection are resolved to its input's first (no extra consumer).
// REMARK: split linalg.matmul into 2 projections over rows [0, 32), [32, 64) of its weight
// CHECK-LABEL: func.func @w13_chunk_dynamic_tokens
//  CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[W:.*]]: tensor<64x64xf32>)
//       CHECK: fusion.paired_projection %[[X]], %{{.*}}, %{{.*}} epilogues(none, none) gated(#fusion.act<swiglu>)
//   CHECK-NOT: linalg.matmul
func.func @w13_chunk_dynamic_tokens(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %empty = tensor.empty(%n) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  // expected-remark @+2 {{Remark="split linalg.matmul into 2 projections over rows}}
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu"}}
  %y = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %t = tensor.dim %y, %c0 : tensor<?x64xf32>
  %g = tensor.extract_slice %y[0, 0] [%t, 32] [1, 1] : tensor<?x64xf32> to tensor<?x32xf32>
  %u = tensor.extract_slice %y[0, 32] [%t, 32] [1, 1] : tensor<?x64xf32> to tensor<?x32xf32>
  %e0 = tensor.empty(%t) : tensor<?x32xf32>
  %h = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%g, %u : tensor<?x32xf32>, tensor<?x32xf32>) outs(%e0 : tensor<?x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %ng = arith.negf %a : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %one, %ex : f32
    %s = arith.divf %a, %den : f32
    %r = arith.mulf %s, %b : f32
    linalg.yield %r : f32
  } -> tensor<?x32xf32>
  return %h : tensor<?x32xf32>
}

/// A dynamic token size that is not the result's (an argument): it may cut
/// the tokens, so no split.
// CHECK-LABEL: func.func @negative_dynamic_token_cut
//   CHECK-NOT: fusion.paired_projection
func.func @negative_dynamic_token_cut(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %m: index) -> (tensor<?x32xf32>, tensor<?x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %empty = tensor.empty(%n) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  // expected-remark @below {{Reason="unsupported split", Remark="a slice cuts a token dimension"}}
  %y = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %a = tensor.extract_slice %y[0, 0] [%m, 32] [1, 1] : tensor<?x64xf32> to tensor<?x32xf32>
  %b = tensor.extract_slice %y[0, 32] [%n, 32] [1, 1] : tensor<?x64xf32> to tensor<?x32xf32>
  return %a, %b : tensor<?x32xf32>, tensor<?x32xf32>
}

/// GPT-OSS's MLP front: one bf16 Linear with bias=True whose output columns
/// interleave gate and up (x[..., ::2], x[..., 1::2]), then the clamped
/// SwiGLU (limit 7, alpha 1.702, up + 1). Each part reads every other row
/// of the weight from its offset (a view with stride 2 on the rows, no
/// copy) and every other column of the bias; they pair gated by the clamped
/// SwiGLU with both biases added before the rounding.
// REMARK: split linalg.matmul into 2 projections over rows 0 + 2r, 1 + 2r for r < 32 (interleaved columns, period 2: each part a view of the weight with 2 times its row pitch) of its weight and those columns of its bias
// CHECK-LABEL: func.func @gpt_oss_interleaved_bias_bf16
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>, %[[W:.*]]: tensor<64x64xbf16>, %[[B:.*]]: tensor<64xbf16>)
//   CHECK-DAG: %[[WG:.*]] = tensor.extract_slice %[[W]][0, 0] [32, 64] [2, 1]
//   CHECK-DAG: %[[WU:.*]] = tensor.extract_slice %[[W]][1, 0] [32, 64] [2, 1]
//   CHECK-DAG: %[[BG:.*]] = tensor.extract_slice %[[B]][0] [32] [2]
//   CHECK-DAG: %[[BU:.*]] = tensor.extract_slice %[[B]][1] [32] [2]
//       CHECK: fusion.paired_projection %[[X]], %[[WG]], %[[WU]] epilogues(round(bf16, with_bias) bias bias %[[BG]], round(bf16, with_bias) bias bias %[[BU]]) gated(#fusion.act<clamped_swiglu>)
//   CHECK-NOT: linalg.matmul
func.func @gpt_oss_interleaved_bias_bf16(%x: tensor<4x64xbf16>, %w: tensor<64x64xbf16>, %b: tensor<64xbf16>) -> tensor<4x32xbf16> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x64xf32>) -> tensor<4x64xf32>
  // expected-remark @+2 {{Remark="split linalg.matmul into 2 projections over rows 0 + 2r, 1 + 2r for r < 32 (interleaved columns, period 2: each part a view of the weight with 2 times its row pitch) of its weight and those columns of its bias"}}
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated clamped_swiglu of the accumulators rounded to bf16 with a gate bias rounded with it with an up bias rounded with it"}}
  %y = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w : tensor<4x64xbf16>, tensor<64x64xbf16>) outs(%acc : tensor<4x64xf32>) -> tensor<4x64xf32>
  %eb = tensor.empty() : tensor<4x64xbf16>
  %yb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%y, %b : tensor<4x64xf32>, tensor<64xbf16>) outs(%eb : tensor<4x64xbf16>) {
  ^bb0(%v: f32, %bv: bf16, %o: bf16):
    %bf = arith.extf %bv : bf16 to f32
    %t = arith.addf %v, %bf : f32
    %r = arith.truncf %t : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<4x64xbf16>
  %gb = tensor.extract_slice %yb[0, 0] [4, 32] [1, 2] : tensor<4x64xbf16> to tensor<4x32xbf16>
  %ub = tensor.extract_slice %yb[0, 1] [4, 32] [1, 2] : tensor<4x64xbf16> to tensor<4x32xbf16>
  %g = arith.extf %gb : tensor<4x32xbf16> to tensor<4x32xf32>
  %u = arith.extf %ub : tensor<4x32xbf16> to tensor<4x32xf32>
  %lim = arith.constant dense<7.0> : tensor<4x32xf32>
  %nlim = arith.constant dense<-7.0> : tensor<4x32xf32>
  %alpha = arith.constant dense<1.702> : tensor<4x32xf32>
  %one = arith.constant dense<1.0> : tensor<4x32xf32>
  %glu = arith.minimumf %g, %lim : tensor<4x32xf32>
  %l0 = arith.minimumf %u, %lim : tensor<4x32xf32>
  %lin = arith.maximumf %l0, %nlim : tensor<4x32xf32>
  %ag = arith.mulf %alpha, %glu : tensor<4x32xf32>
  %n = arith.negf %ag : tensor<4x32xf32>
  %e = math.exp %n : tensor<4x32xf32>
  %den = arith.addf %one, %e : tensor<4x32xf32>
  %sig = arith.divf %one, %den : tensor<4x32xf32>
  %out_glu = arith.mulf %glu, %sig : tensor<4x32xf32>
  %lin1 = arith.addf %lin, %one : tensor<4x32xf32>
  %h = arith.mulf %out_glu, %lin1 : tensor<4x32xf32>
  %hb = arith.truncf %h : tensor<4x32xf32> to tensor<4x32xbf16>
  return %hb : tensor<4x32xbf16>
}

/// A [K, H] weight (x @ w), three parts interleaved with period 3: each
/// part reads every third column of the weight (a view with stride 3); the
/// first two pair, the third stays a matmul of its view (no partner left).
// CHECK-LABEL: func.func @interleaved_period3_kn
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x12xf32>)
//   CHECK-DAG: %[[W0:.*]] = tensor.extract_slice %[[W]][0, 0] [8, 4] [1, 3]
//   CHECK-DAG: %[[W1:.*]] = tensor.extract_slice %[[W]][0, 1] [8, 4] [1, 3]
//       CHECK: fusion.paired_projection %[[X]], %[[W0]], %[[W1]] epilogues(sigmoid, none) kn
//       CHECK: %[[W2:.*]] = tensor.extract_slice %[[W]][0, 2] [8, 4] [1, 3]
//       CHECK: linalg.matmul ins(%[[X]], %[[W2]]
func.func @interleaved_period3_kn(%x: tensor<4x8xf32>, %w: tensor<8x12xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x12xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x12xf32>) -> tensor<4x12xf32>
  // expected-remark @+3 {{Reason="no partner left", Remark="every projection it could pair with was paired with another one"}}
  // expected-remark @+2 {{Remark="split linalg.matmul into 3 projections over rows 0 + 3r, 1 + 3r, 2 + 3r for r < 4 (interleaved columns, period 3: each part a view of the weight with 3 times its row pitch) of its weight"}}
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues sigmoid, none"}}
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x12xf32>) outs(%acc : tensor<4x12xf32>) -> tensor<4x12xf32>
  %a = tensor.extract_slice %y[0, 0] [4, 4] [1, 3] : tensor<4x12xf32> to tensor<4x4xf32>
  %b = tensor.extract_slice %y[0, 1] [4, 4] [1, 3] : tensor<4x12xf32> to tensor<4x4xf32>
  %c = tensor.extract_slice %y[0, 2] [4, 4] [1, 3] : tensor<4x12xf32> to tensor<4x4xf32>
  %n = arith.negf %a : tensor<4x4xf32>
  %e = math.exp %n : tensor<4x4xf32>
  %one = arith.constant dense<1.0> : tensor<4x4xf32>
  %d = arith.addf %one, %e : tensor<4x4xf32>
  %s = arith.divf %one, %d : tensor<4x4xf32>
  return %s, %b, %c : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

/// Strided parts that collide (offsets 0 and 2 with stride 2) or run past
/// the result, and different strides: no split, each with its reason (the
/// two whole projections of x then pair, and the slices read their results).
// CHECK-LABEL: func.func @negative_strided
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[W:.*]]: tensor<64x64xf32>, %[[W2:.*]]: tensor<64x64xf32>)
//       CHECK: %[[P:.*]]:2 = fusion.paired_projection %[[X]], %[[W]], %[[W2]] epilogues(none, none)
//       CHECK: tensor.extract_slice %[[P]]#0[0, 0] [4, 32] [1, 2]
func.func @negative_strided(%x: tensor<4x64xf32>, %w: tensor<64x64xf32>, %w2: tensor<64x64xf32>) -> (tensor<4x32xf32>, tensor<4x31xf32>, tensor<4x32xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x64xf32>) -> tensor<4x64xf32>
  // expected-remark @+2 {{Reason="unsupported split", Remark="the strided slices of the result overlap (offsets not distinct below the stride 2) or run past its 64 columns"}}
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues none, none"}}
  %y = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w : tensor<4x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<4x64xf32>) -> tensor<4x64xf32>
  %a = tensor.extract_slice %y[0, 0] [4, 32] [1, 2] : tensor<4x64xf32> to tensor<4x32xf32>
  %b = tensor.extract_slice %y[0, 2] [4, 31] [1, 2] : tensor<4x64xf32> to tensor<4x31xf32>
  // expected-remark @below {{Reason="unsupported split", Remark="the result is sliced with strides along its tokens, dynamic or different column strides, a rank change or dynamic sizes; only column ranges or every k-th column of a static width split"}}
  %z = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w2 : tensor<4x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<4x64xf32>) -> tensor<4x64xf32>
  %c = tensor.extract_slice %z[0, 0] [4, 32] [1, 2] : tensor<4x64xf32> to tensor<4x32xf32>
  %d = tensor.extract_slice %z[0, 1] [4, 16] [1, 4] : tensor<4x64xf32> to tensor<4x16xf32>
  return %a, %b, %c, %d : tensor<4x32xf32>, tensor<4x31xf32>, tensor<4x32xf32>, tensor<4x16xf32>
}
