// Gated-DeltaNet alpha/beta gates (Qwen3.5, one decode token), as a frontend
// (torch-mlir style, one op per torch op) lowers
//
//     b = F.linear(x, W_b)                    # in_proj_b, [H, K] weight
//     a = F.linear(x, W_a)                    # in_proj_a, [H, K] weight
//     beta = b.sigmoid()
//     g = -A_log.float().exp() * F.softplus(a.float() + dt_bias)
//
// for Qwen3.5-35B-A3B sizes (hidden K = 2048, H = 32 value heads). The
// projections are linalg.matmul with transposed-weight indexing maps over a
// zero-filled f32 accumulator (bf16 x and weights, f32 accumulation, as the
// fused op computes); dt_bias and A_log are [H] vectors broadcast along the
// tokens by their indexing maps; softplus is torch's, threshold 20; g and
// beta are f32 (what the recurrent GDN kernel reads).
//
//     fusion-opt examples/gdn_gates.mlir --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections))' --remarks-filter=fusion
//
// turns the two projections and their epilogues into one
// fusion.paired_projection (epilogues softplus_bias_scale, sigmoid) that
// reads x once; the scale -exp(A_log) is computed by a one-loop generic over
// H in front of it. test/Transforms/fuse-paired-projections-examples.mlir
// checks this.

#x_map = affine_map<(n, h, k) -> (n, k)>
#w_map = affine_map<(n, h, k) -> (h, k)>
#o_map = affine_map<(n, h, k) -> (n, h)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#vec = affine_map<(d0) -> (d0)>

func.func @gdn_gates(%x: tensor<1x2048xbf16>,
                     %w_a: tensor<32x2048xbf16>, %w_b: tensor<32x2048xbf16>,
                     %dt_bias: tensor<32xbf16>, %a_log: tensor<32xf32>)
    -> (tensor<1x32xf32>, tensor<1x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x32xf32>) -> tensor<1x32xf32>

  // b = x @ W_b.T ; a = x @ W_a.T
  %b = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_b : tensor<1x2048xbf16>, tensor<32x2048xbf16>)
      outs(%acc : tensor<1x32xf32>) -> tensor<1x32xf32>
  %a = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_a : tensor<1x2048xbf16>, tensor<32x2048xbf16>)
      outs(%acc : tensor<1x32xf32>) -> tensor<1x32xf32>

  // beta = sigmoid(b) = 1 / (1 + exp(-b))
  %beta = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<1x32xf32>) outs(%empty : tensor<1x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %in : f32
    %e = math.exp %neg : f32
    %den = arith.addf %e, %one : f32
    %s = arith.divf %one, %den : f32
    linalg.yield %s : f32
  } -> tensor<1x32xf32>

  // t = a + dt_bias (dt_bias broadcast along the tokens)
  %t = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %dt_bias : tensor<1x32xf32>, tensor<32xbf16>) outs(%empty : tensor<1x32xf32>) {
  ^bb0(%in: f32, %bias: bf16, %out: f32):
    %bf = arith.extf %bias : bf16 to f32
    %r = arith.addf %in, %bf : f32
    linalg.yield %r : f32
  } -> tensor<1x32xf32>

  // softplus(t) = t > 20 ? t : log1p(exp(t))
  %sp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<1x32xf32>) outs(%empty : tensor<1x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %thr = arith.constant 20.0 : f32
    %e = math.exp %in : f32
    %l = math.log1p %e : f32
    %big = arith.cmpf ogt, %in, %thr : f32
    %r = arith.select %big, %in, %l : f32
    linalg.yield %r : f32
  } -> tensor<1x32xf32>

  // A = -exp(A_log)
  %hempty = tensor.empty() : tensor<32xf32>
  %neg_a = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%a_log : tensor<32xf32>) outs(%hempty : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    %n = arith.negf %e : f32
    linalg.yield %n : f32
  } -> tensor<32xf32>

  // g = A * softplus(a + dt_bias)
  %g = linalg.generic {indexing_maps = [#col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%neg_a, %sp : tensor<32xf32>, tensor<1x32xf32>) outs(%empty : tensor<1x32xf32>) {
  ^bb0(%s: f32, %in: f32, %out: f32):
    %r = arith.mulf %s, %in : f32
    linalg.yield %r : f32
  } -> tensor<1x32xf32>

  return %g, %beta : tensor<1x32xf32>, tensor<1x32xf32>
}
