// RUN: fusion-opt %s --fusion-fuse-paired-projections | FileCheck %s
// RUN: fusion-opt %s --fusion-fuse-paired-projections --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --fusion-pipeline -o /dev/null

// fusion-fuse-paired-projections alone (no canonicalization first, which
// would merge the duplicated operand): an epilogue generic that takes the
// same projection twice and adds a different bias to each read before
// rounding it to bf16. The fused op reads a projection with one bias: the
// body stays a generic of its own, reading the paired projections' f32
// accumulators (x read once).

#x_map = affine_map<(n, h, k) -> (n, k)>
#w_map = affine_map<(n, h, k) -> (h, k)>
#o_map = affine_map<(n, h, k) -> (n, h)>
#id = affine_map<(n, h) -> (n, h)>
#col = affine_map<(n, h) -> (h)>

// CHECK-LABEL: func.func @negative_two_biases_before_rounding
//       CHECK: %[[P:.*]]:2 = fusion.paired_projection %arg0, %arg1, %arg2 epilogues(none, none) outs(
//       CHECK: linalg.generic {{.*}} ins(%[[P]]#0, %[[P]]#0, %[[P]]#1,
func.func @negative_two_biases_before_rounding(%x: tensor<4x64xbf16>, %wg: tensor<32x64xbf16>, %wu: tensor<32x64xbf16>,
                                              %b1: tensor<32xf32>, %b2: tensor<32xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x32xf32>) -> tensor<4x32xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues none, none; the generic that reads both stays as it is (the projection is read with two biases before its rounding)"}}
  %g = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %wg : tensor<4x64xbf16>, tensor<32x64xbf16>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %u = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %wu : tensor<4x64xbf16>, tensor<32x64xbf16>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %h = linalg.generic {indexing_maps = [#id, #id, #id, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %g, %u, %b1, %b2 : tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>)
      outs(%empty : tensor<4x32xf32>) {
  ^bb0(%ga: f32, %gb: f32, %uu: f32, %c1: f32, %c2: f32, %o: f32):
    %s1 = arith.addf %ga, %c1 : f32
    %r1 = arith.truncf %s1 : f32 to bf16
    %s2 = arith.addf %gb, %c2 : f32
    %r2 = arith.truncf %s2 : f32 to bf16
    %ru = arith.truncf %uu : f32 to bf16
    %e1 = arith.extf %r1 : bf16 to f32
    %e2 = arith.extf %r2 : bf16 to f32
    %eu = arith.extf %ru : bf16 to f32
    %p = arith.mulf %e1, %e2 : f32
    %q = arith.mulf %p, %eu : f32
    linalg.yield %q : f32
  } -> tensor<4x32xf32>
  return %h : tensor<4x32xf32>
}
