// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections))' | FileCheck %s
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections))' --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections))' -o %t.once.mlir
// RUN: fusion-opt %t.once.mlir --fusion-fuse-paired-projections -o %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// Positive forms of fusion-fuse-paired-projections (GDN gates as torch-like
// IR at N = 1 and N = 16, both weight layouts, matvec / vecmat, contraction
// generics, bias, silu, gate/up SwiGLU / GeGLU) and the candidates it must
// decline, one per admission rule. Composition with fusion-fuse-act-quantize:
// fuse-paired-projections-act-quantize.mlir.

#x_map = affine_map<(n, h, k) -> (n, k)>
#w_map = affine_map<(n, h, k) -> (h, k)>
#o_map = affine_map<(n, h, k) -> (n, h)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#vec = affine_map<(d0) -> (d0)>

//===----------------------------------------------------------------------===//
// GDN alpha / beta gates
//===----------------------------------------------------------------------===//

/// One decode token, torch-like: one generic per torch op, softplus as
/// log1p(exp(t)) with torch's threshold-20 select, scale -exp(A_log) computed
/// in the IR (materialised as an [H] generic in front of the fused op).
// CHECK-LABEL: func.func @gdn_torch_n1
//  CHECK-SAME: (%[[X:.*]]: tensor<1x256xbf16>, %[[WA:.*]]: tensor<8x256xbf16>, %[[WB:.*]]: tensor<8x256xbf16>, %[[DT:.*]]: tensor<8xbf16>, %[[ALOG:.*]]: tensor<8xf32>)
//       CHECK: %[[S:.*]] = linalg.generic
//  CHECK-SAME: ins(%[[ALOG]] : tensor<8xf32>)
//       CHECK:   math.exp
//       CHECK:   arith.negf
//       CHECK: %[[R:.*]]:2 = fusion.paired_projection %[[X]], %[[WB]], %[[WA]] epilogues(sigmoid, softplus_bias_scale bias %[[DT]] scale %[[S]])
//   CHECK-NOT: linalg.matmul
//       CHECK: return %[[R]]#1, %[[R]]#0
func.func @gdn_torch_n1(%x: tensor<1x256xbf16>, %w_a: tensor<8x256xbf16>,
                        %w_b: tensor<8x256xbf16>, %dt_bias: tensor<8xbf16>,
                        %a_log: tensor<8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x8xf32>) -> tensor<1x8xf32>
  // expected-remark @below {{[Passed] FusePairedProjections | Category:fusion | Function=gdn_torch_n1 | Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues sigmoid, softplus_bias_scale"}}
  %b = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_b : tensor<1x256xbf16>, tensor<8x256xbf16>)
      outs(%acc : tensor<1x8xf32>) -> tensor<1x8xf32>
  %a = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_a : tensor<1x256xbf16>, tensor<8x256xbf16>)
      outs(%acc : tensor<1x8xf32>) -> tensor<1x8xf32>
  %beta = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<1x8xf32>) outs(%empty : tensor<1x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %in : f32
    %e = math.exp %neg : f32
    %den = arith.addf %e, %one : f32
    %s = arith.divf %one, %den : f32
    linalg.yield %s : f32
  } -> tensor<1x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %dt_bias : tensor<1x8xf32>, tensor<8xbf16>) outs(%empty : tensor<1x8xf32>) {
  ^bb0(%in: f32, %bias: bf16, %out: f32):
    %bf = arith.extf %bias : bf16 to f32
    %r = arith.addf %in, %bf : f32
    linalg.yield %r : f32
  } -> tensor<1x8xf32>
  %sp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<1x8xf32>) outs(%empty : tensor<1x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %thr = arith.constant 20.0 : f32
    %e = math.exp %in : f32
    %l = math.log1p %e : f32
    %big = arith.cmpf ogt, %in, %thr : f32
    %r = arith.select %big, %in, %l : f32
    linalg.yield %r : f32
  } -> tensor<1x8xf32>
  %hempty = tensor.empty() : tensor<8xf32>
  %neg_a = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%a_log : tensor<8xf32>) outs(%hempty : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    %n = arith.negf %e : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %g = linalg.generic {indexing_maps = [#col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%neg_a, %sp : tensor<8xf32>, tensor<1x8xf32>) outs(%empty : tensor<1x8xf32>) {
  ^bb0(%s: f32, %in: f32, %out: f32):
    %r = arith.mulf %s, %in : f32
    linalg.yield %r : f32
  } -> tensor<1x8xf32>
  return %g, %beta : tensor<1x8xf32>, tensor<1x8xf32>
}

/// Sixteen tokens, written with arith/math on tensors: dt_bias broadcast by
/// linalg.broadcast, softplus as log(1 + exp(t)) under a `t <= 20` select
/// with the branches swapped (the f32 formula is log's, not log1p's: the
/// op records softplus_log_bias_scale), the scale A given as a tensor
/// (llama.cpp's ssm_a = -exp(A_log) from the checkpoint), sigmoid as
/// exp(b) / (exp(b) + 1), beta rounded to bf16 at the end (HF keeps beta in
/// the model dtype).
// CHECK-LABEL: func.func @gdn_arith_n16
//  CHECK-SAME: (%[[X:.*]]: tensor<16x256xbf16>, %[[WA:.*]]: tensor<8x256xbf16>, %[[WB:.*]]: tensor<8x256xbf16>, %[[DT:.*]]: tensor<8xf32>, %[[A:.*]]: tensor<8xf32>)
//   CHECK-NOT: linalg.generic
//       CHECK: %[[R:.*]]:2 = fusion.paired_projection %[[X]], %[[WA]], %[[WB]] epilogues(softplus_log_bias_scale bias %[[DT]] scale %[[A]], sigmoid)
//  CHECK-SAME: -> (tensor<16x8xf32>, tensor<16x8xbf16>)
//       CHECK: return %[[R]]#0, %[[R]]#1
func.func @gdn_arith_n16(%x: tensor<16x256xbf16>, %w_a: tensor<8x256xbf16>,
                         %w_b: tensor<8x256xbf16>, %dt_bias: tensor<8xf32>,
                         %A: tensor<8xf32>) -> (tensor<16x8xf32>, tensor<16x8xbf16>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x8xf32>) -> tensor<16x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues softplus_log_bias_scale, sigmoid"}}
  %a = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_a : tensor<16x256xbf16>, tensor<8x256xbf16>)
      outs(%acc : tensor<16x8xf32>) -> tensor<16x8xf32>
  %b = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_b : tensor<16x256xbf16>, tensor<8x256xbf16>)
      outs(%acc : tensor<16x8xf32>) -> tensor<16x8xf32>
  %dt = linalg.broadcast ins(%dt_bias : tensor<8xf32>) outs(%empty : tensor<16x8xf32>) dimensions = [0]
  %Ab = linalg.broadcast ins(%A : tensor<8xf32>) outs(%empty : tensor<16x8xf32>) dimensions = [0]
  %t = arith.addf %dt, %a : tensor<16x8xf32>
  %e = math.exp %t : tensor<16x8xf32>
  %one = arith.constant dense<1.0> : tensor<16x8xf32>
  %p = arith.addf %one, %e : tensor<16x8xf32>
  %l = math.log %p : tensor<16x8xf32>
  %thr = arith.constant dense<20.0> : tensor<16x8xf32>
  %small = arith.cmpf ole, %t, %thr : tensor<16x8xf32>
  %sp = arith.select %small, %l, %t : tensor<16x8xi1>, tensor<16x8xf32>
  %g = arith.mulf %sp, %Ab : tensor<16x8xf32>
  %eb = math.exp %b : tensor<16x8xf32>
  %den = arith.addf %eb, %one : tensor<16x8xf32>
  %sig = arith.divf %eb, %den : tensor<16x8xf32>
  %beta = arith.truncf %sig : tensor<16x8xf32> to tensor<16x8xbf16>
  return %g, %beta : tensor<16x8xf32>, tensor<16x8xbf16>
}

/// [K, H] weights (plain linalg.matmul): the fused op takes them with `kn`.
/// softplus without a threshold and without a bias (bias 0 materialised),
/// scale -A folded into the same body.
// CHECK-LABEL: func.func @gdn_kn
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[WA:.*]]: tensor<64x8xf32>, %[[WB:.*]]: tensor<64x8xf32>, %[[A:.*]]: tensor<8xf32>)
//   CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
//   CHECK-DAG: %[[S:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<8xf32>)
//       CHECK: fusion.paired_projection %[[X]], %[[WA]], %[[WB]] epilogues(softplus_bias_scale bias %[[ZERO]] scale %[[S]], sigmoid) kn
func.func @gdn_kn(%x: tensor<4x64xf32>, %w_a: tensor<64x8xf32>, %w_b: tensor<64x8xf32>,
                  %A: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues softplus_bias_scale, sigmoid"}}
  %a = linalg.matmul ins(%x, %w_a : tensor<4x64xf32>, tensor<64x8xf32>)
      outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = linalg.matmul ins(%x, %w_b : tensor<4x64xf32>, tensor<64x8xf32>)
      outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %A : tensor<4x8xf32>, tensor<8xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %e = math.exp %in : f32
    %l = math.log1p %e : f32
    %m = arith.mulf %l, %s : f32
    %r = arith.negf %m : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %beta = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<4x8xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %in : f32
    %e = math.exp %neg : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %g, %beta : tensor<4x8xf32>, tensor<4x8xf32>
}

/// A single token as a vector: linalg.matvec (weight [H, K] times x [K]).
// CHECK-LABEL: func.func @gdn_matvec
//  CHECK-SAME: (%[[X:.*]]: tensor<64xf32>, %[[WA:.*]]: tensor<8x64xf32>, %[[WB:.*]]: tensor<8x64xf32>, %[[DT:.*]]: tensor<8xf32>, %[[A:.*]]: tensor<8xf32>)
//       CHECK: %[[R:.*]]:2 = fusion.paired_projection %[[X]], %[[WA]], %[[WB]] epilogues(softplus_bias_scale bias %[[DT]] scale %[[A]], sigmoid)
//  CHECK-SAME: -> (tensor<8xf32>, tensor<8xf32>)
func.func @gdn_matvec(%x: tensor<64xf32>, %w_a: tensor<8x64xf32>, %w_b: tensor<8x64xf32>,
                      %dt_bias: tensor<8xf32>, %A: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<8xf32>) -> tensor<8xf32>
  // expected-remark @below {{Remark="paired linalg.matvec and linalg.matvec into fusion.paired_projection with epilogues softplus_bias_scale, sigmoid"}}
  %a = linalg.matvec ins(%w_a, %x : tensor<8x64xf32>, tensor<64xf32>)
      outs(%acc : tensor<8xf32>) -> tensor<8xf32>
  %b = linalg.matvec ins(%w_b, %x : tensor<8x64xf32>, tensor<64xf32>)
      outs(%acc : tensor<8xf32>) -> tensor<8xf32>
  %g = linalg.generic {indexing_maps = [#vec, #vec, #vec, #vec], iterator_types = ["parallel"]}
      ins(%a, %dt_bias, %A : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%in: f32, %bias: f32, %s: f32, %out: f32):
    %thr = arith.constant 20.0 : f32
    %t = arith.addf %bias, %in : f32
    %e = math.exp %t : f32
    %l = math.log1p %e : f32
    %big = arith.cmpf ugt, %t, %thr : f32
    %sp = arith.select %big, %t, %l : f32
    %r = arith.mulf %s, %sp : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %beta = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%b : tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %in : f32
    %e = math.exp %neg : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %g, %beta : tensor<8xf32>, tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// bias, silu, none; contraction generics and vecmat
//===----------------------------------------------------------------------===//

/// y0 + bias (a [1, H] bias broadcast the torch-mlir way, map (0, d1)) and
/// silu(y1), projections written as contraction generics.
// CHECK-LABEL: func.func @bias_silu_generic
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>, %[[W0:.*]]: tensor<8x64xbf16>, %[[W1:.*]]: tensor<8x64xbf16>, %[[B:.*]]: tensor<1x8xf32>)
//       CHECK: %[[BIAS:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<1x8xf32>)
//       CHECK: %[[R:.*]]:2 = fusion.paired_projection %[[X]], %[[W0]], %[[W1]] epilogues(bias bias %[[BIAS]], silu)
//  CHECK-SAME: -> (tensor<4x8xf32>, tensor<4x8xbf16>)
func.func @bias_silu_generic(%x: tensor<4x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<8x64xbf16>,
                             %bias: tensor<1x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xbf16>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Remark="paired linalg.generic and linalg.generic into fusion.paired_projection with epilogues bias, silu"}}
  %y0 = linalg.generic {indexing_maps = [#x_map, #w_map, #o_map], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w0 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %y1 = linalg.generic {indexing_maps = [#x_map, #w_map, #o_map], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w1 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %r0 = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (0, d1)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y0, %bias : tensor<4x8xf32>, tensor<1x8xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %r = arith.addf %in, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %bempty = tensor.empty() : tensor<4x8xbf16>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y1 : tensor<4x8xf32>) outs(%bempty : tensor<4x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %in : f32
    %e = math.exp %neg : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %in, %den : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  return %r0, %r1 : tensor<4x8xf32>, tensor<4x8xbf16>
}

/// Two projections without epilogues (their results feed non-elementwise
/// ops): the `none` epilogue; linalg.vecmat reads [K, H] weights.
// CHECK-LABEL: func.func @none_vecmat
//  CHECK-SAME: (%[[X:.*]]: tensor<64xf32>, %[[W0:.*]]: tensor<64x8xf32>, %[[W1:.*]]: tensor<64x16xf32>)
//       CHECK: %[[R:.*]]:2 = fusion.paired_projection %[[X]], %[[W0]], %[[W1]] epilogues(none, none) kn
//       CHECK: tensor.expand_shape %[[R]]#0
//       CHECK: return {{.*}}, %[[R]]#1
func.func @none_vecmat(%x: tensor<64xf32>, %w0: tensor<64x8xf32>, %w1: tensor<64x16xf32>)
    -> (tensor<2x4xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8xf32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  // expected-remark @below {{Remark="paired linalg.vecmat and linalg.vecmat into fusion.paired_projection with epilogues none, none"}}
  %y0 = linalg.vecmat ins(%x, %w0 : tensor<64xf32>, tensor<64x8xf32>)
      outs(%acc0 : tensor<8xf32>) -> tensor<8xf32>
  %y1 = linalg.vecmat ins(%x, %w1 : tensor<64xf32>, tensor<64x16xf32>)
      outs(%acc1 : tensor<16xf32>) -> tensor<16xf32>
  %r0 = tensor.expand_shape %y0 [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  return %r0, %y1 : tensor<2x4xf32>, tensor<16xf32>
}

//===----------------------------------------------------------------------===//
// Gated pairs
//===----------------------------------------------------------------------===//

/// gate/up feeding SwiGLU silu(g) * u computed in f32 and rounded once to
/// bf16: one gated op. The up projection comes first in the IR; the fused op
/// takes the gate first.
// CHECK-LABEL: func.func @gate_up_swiglu
//  CHECK-SAME: (%[[X:.*]]: tensor<16x64xbf16>, %[[WG:.*]]: tensor<32x64xbf16>, %[[WU:.*]]: tensor<32x64xbf16>)
//       CHECK: %[[R:.*]] = fusion.paired_projection %[[X]], %[[WG]], %[[WU]] epilogues(none, none) gated(#fusion.act<swiglu>)
//  CHECK-SAME: -> tensor<16x32xbf16>
//       CHECK: return %[[R]]
func.func @gate_up_swiglu(%x: tensor<16x64xbf16>, %w_gate: tensor<32x64xbf16>,
                          %w_up: tensor<32x64xbf16>) -> tensor<16x32xbf16> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x32xf32>) -> tensor<16x32xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu"}}
  %up = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_up : tensor<16x64xbf16>, tensor<32x64xbf16>)
      outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  %gate = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_gate : tensor<16x64xbf16>, tensor<32x64xbf16>)
      outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  %bempty = tensor.empty() : tensor<16x32xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : tensor<16x32xf32>, tensor<16x32xf32>) outs(%bempty : tensor<16x32xbf16>) {
  ^bb0(%g: f32, %u: f32, %out: bf16):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %g : f32
    %e = math.exp %neg : f32
    %den = arith.addf %one, %e : f32
    %sig = arith.divf %one, %den : f32
    %silu = arith.mulf %g, %sig : f32
    %p = arith.mulf %silu, %u : f32
    %t = arith.truncf %p : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x32xbf16>
  return %h : tensor<16x32xbf16>
}

/// GeGLU (tanh GELU of the gate) as separate tensor ops on f32.
// CHECK-LABEL: func.func @gate_up_geglu
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[WG:.*]]: tensor<32x64xf32>, %[[WU:.*]]: tensor<32x64xf32>)
//       CHECK: fusion.paired_projection %[[X]], %[[WG]], %[[WU]] epilogues(none, none) gated(#fusion.act<geglu>)
func.func @gate_up_geglu(%x: tensor<4x64xf32>, %w_gate: tensor<32x64xf32>,
                         %w_up: tensor<32x64xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x32xf32>) -> tensor<4x32xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated geglu"}}
  %gate = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_gate : tensor<4x64xf32>, tensor<32x64xf32>)
      outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %up = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_up : tensor<4x64xf32>, tensor<32x64xf32>)
      outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %half = arith.constant dense<0.5> : tensor<4x32xf32>
  %one = arith.constant dense<1.0> : tensor<4x32xf32>
  %c = arith.constant dense<0.044715> : tensor<4x32xf32>
  %k = arith.constant dense<0.7978845608028654> : tensor<4x32xf32>
  %g2 = arith.mulf %gate, %gate : tensor<4x32xf32>
  %g3 = arith.mulf %g2, %gate : tensor<4x32xf32>
  %cg3 = arith.mulf %c, %g3 : tensor<4x32xf32>
  %in = arith.addf %gate, %cg3 : tensor<4x32xf32>
  %kin = arith.mulf %k, %in : tensor<4x32xf32>
  %th = math.tanh %kin : tensor<4x32xf32>
  %onep = arith.addf %one, %th : tensor<4x32xf32>
  %hg = arith.mulf %half, %gate : tensor<4x32xf32>
  %gelu = arith.mulf %hg, %onep : tensor<4x32xf32>
  %h = arith.mulf %gelu, %up : tensor<4x32xf32>
  return %h : tensor<4x32xf32>
}

/// Three projections of one input (in_proj_qkv feeding a reshape, and the
/// GDN gates): the gate pair is chosen (two non-trivial epilogues beat one
/// `none`), the third projection is left alone.
// CHECK-LABEL: func.func @three_projections
//       CHECK: linalg.matmul
//       CHECK: fusion.paired_projection {{.*}} epilogues(sigmoid, softplus_bias_scale
func.func @three_projections(%x: tensor<1x64xf32>, %w_qkv: tensor<96x64xf32>,
                             %w_b: tensor<8x64xf32>, %w_a: tensor<8x64xf32>,
                             %dt: tensor<8xf32>, %A: tensor<8xf32>)
    -> (tensor<1x3x32xf32>, tensor<1x8xf32>, tensor<1x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e96 = tensor.empty() : tensor<1x96xf32>
  %acc96 = linalg.fill ins(%zero : f32) outs(%e96 : tensor<1x96xf32>) -> tensor<1x96xf32>
  %empty = tensor.empty() : tensor<1x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x8xf32>) -> tensor<1x8xf32>
  // expected-remark @below {{[Missed] FusePairedProjections | Category:fusion | Function=three_projections | Reason="no partner left", Remark="every projection it could pair with was paired with another one"}}
  %qkv = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_qkv : tensor<1x64xf32>, tensor<96x64xf32>)
      outs(%acc96 : tensor<1x96xf32>) -> tensor<1x96xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues sigmoid, softplus_bias_scale"}}
  %b = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_b : tensor<1x64xf32>, tensor<8x64xf32>)
      outs(%acc : tensor<1x8xf32>) -> tensor<1x8xf32>
  %a = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_a : tensor<1x64xf32>, tensor<8x64xf32>)
      outs(%acc : tensor<1x8xf32>) -> tensor<1x8xf32>
  %q = tensor.expand_shape %qkv [[0], [1, 2]] output_shape [1, 3, 32] : tensor<1x96xf32> into tensor<1x3x32xf32>
  %beta = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<1x8xf32>) outs(%empty : tensor<1x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %in : f32
    %e = math.exp %neg : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    linalg.yield %s : f32
  } -> tensor<1x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %dt, %A : tensor<1x8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%empty : tensor<1x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %s: f32, %out: f32):
    %t = arith.addf %in, %bias : f32
    %e = math.exp %t : f32
    %l = math.log1p %e : f32
    %r = arith.mulf %l, %s : f32
    linalg.yield %r : f32
  } -> tensor<1x8xf32>
  return %q, %beta, %g : tensor<1x3x32xf32>, tensor<1x8xf32>, tensor<1x8xf32>
}

/// The same with the projection left alone last in program order: it still
/// gets its remark (before 2026-12-07 none: its partners were earlier ones,
/// which were fused with each other).
// CHECK-LABEL: func.func @three_projections_leftover_last
//       CHECK: linalg.matmul
//       CHECK: fusion.paired_projection {{.*}} epilogues(sigmoid, softplus_bias_scale
func.func @three_projections_leftover_last(%x: tensor<1x64xf32>, %w_qkv: tensor<96x64xf32>,
                             %w_b: tensor<8x64xf32>, %w_a: tensor<8x64xf32>,
                             %dt: tensor<8xf32>, %A: tensor<8xf32>)
    -> (tensor<1x3x32xf32>, tensor<1x8xf32>, tensor<1x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e96 = tensor.empty() : tensor<1x96xf32>
  %acc96 = linalg.fill ins(%zero : f32) outs(%e96 : tensor<1x96xf32>) -> tensor<1x96xf32>
  %empty = tensor.empty() : tensor<1x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x8xf32>) -> tensor<1x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues sigmoid, softplus_bias_scale"}}
  %b = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_b : tensor<1x64xf32>, tensor<8x64xf32>)
      outs(%acc : tensor<1x8xf32>) -> tensor<1x8xf32>
  %a = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_a : tensor<1x64xf32>, tensor<8x64xf32>)
      outs(%acc : tensor<1x8xf32>) -> tensor<1x8xf32>
  // expected-remark @below {{[Missed] FusePairedProjections | Category:fusion | Function=three_projections_leftover_last | Reason="no partner left", Remark="every projection it could pair with was paired with another one"}}
  %qkv = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_qkv : tensor<1x64xf32>, tensor<96x64xf32>)
      outs(%acc96 : tensor<1x96xf32>) -> tensor<1x96xf32>
  %q = tensor.expand_shape %qkv [[0], [1, 2]] output_shape [1, 3, 32] : tensor<1x96xf32> into tensor<1x3x32xf32>
  %beta = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<1x8xf32>) outs(%empty : tensor<1x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %in : f32
    %e = math.exp %neg : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    linalg.yield %s : f32
  } -> tensor<1x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %dt, %A : tensor<1x8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%empty : tensor<1x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %s: f32, %out: f32):
    %t = arith.addf %in, %bias : f32
    %e = math.exp %t : f32
    %l = math.log1p %e : f32
    %r = arith.mulf %l, %s : f32
    linalg.yield %r : f32
  } -> tensor<1x8xf32>
  return %q, %beta, %g : tensor<1x3x32xf32>, tensor<1x8xf32>, tensor<1x8xf32>
}


//===----------------------------------------------------------------------===//
// Declines, one per admission rule
//===----------------------------------------------------------------------===//

/// The gated activation multiplies projections of two different inputs.
// CHECK-LABEL: func.func @negative_different_lhs
//   CHECK-NOT: fusion.paired_projection
func.func @negative_different_lhs(%x: tensor<4x64xf32>, %y: tensor<4x64xf32>,
                                  %wg: tensor<32x64xf32>, %wu: tensor<32x64xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x32xf32>) -> tensor<4x32xf32>
  // expected-remark @below {{[Missed] FusePairedProjections | Category:fusion | Function=negative_different_lhs | Reason="different LHS", Remark="the gated activation multiplies projections of two different inputs"}}
  %g = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %wg : tensor<4x64xf32>, tensor<32x64xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %u = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%y, %wu : tensor<4x64xf32>, tensor<32x64xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %n = arith.negf %g : tensor<4x32xf32>
  %e = math.exp %n : tensor<4x32xf32>
  %one = arith.constant dense<1.0> : tensor<4x32xf32>
  %d = arith.addf %one, %e : tensor<4x32xf32>
  %s = arith.divf %g, %d : tensor<4x32xf32>
  %h = arith.mulf %s, %u : tensor<4x32xf32>
  return %h : tensor<4x32xf32>
}

/// One projection contracts dimension 1 of x, the other dimension 0.
// CHECK-LABEL: func.func @negative_different_k
//   CHECK-NOT: fusion.paired_projection
func.func @negative_different_k(%x: tensor<16x64xf32>, %w0: tensor<8x64xf32>,
                                %w1: tensor<8x16xf32>) -> (tensor<16x8xf32>, tensor<64x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<16x8xf32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %e1 = tensor.empty() : tensor<64x8xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x8xf32>) -> tensor<64x8xf32>
  // expected-remark @below {{Reason="different K or element types", Remark="the projections contract dimensions 1 and 0 of the LHS"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<16x64xf32>, tensor<8x64xf32>) outs(%acc0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %y1 = linalg.matmul indexing_maps = [affine_map<(n, h, k) -> (k, n)>, #w_map, #o_map]
      ins(%x, %w1 : tensor<16x64xf32>, tensor<8x16xf32>) outs(%acc1 : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %y0, %y1 : tensor<16x8xf32>, tensor<64x8xf32>
}

/// The weights have different element types (f32 and bf16).
// CHECK-LABEL: func.func @negative_different_types
//   CHECK-NOT: fusion.paired_projection
func.func @negative_different_types(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>,
                                    %w1: tensor<8x64xbf16>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Reason="different K or element types", Remark="weight element types f32 and bf16"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y0, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// One weight is [H, K], the other [K, H]: the fused op has one layout flag.
// CHECK-LABEL: func.func @negative_weight_layouts
//   CHECK-NOT: fusion.paired_projection
func.func @negative_weight_layouts(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>,
                                   %w1: tensor<64x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Reason="different weight layouts", Remark="one weight is [H, K] and the other [K, H]"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul ins(%x, %w1 : tensor<4x64xf32>, tensor<64x8xf32>)
      outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y0, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// The second weight is computed from the first projection's result.
// CHECK-LABEL: func.func @negative_dependency
//   CHECK-NOT: fusion.paired_projection
func.func @negative_dependency(%x: tensor<8x8xf32>, %w0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-remark @below {{Reason="dependency between the projections", Remark="one projection's operands are computed from the other's result"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  %w1 = linalg.transpose ins(%y0 : tensor<8x8xf32>) outs(%empty : tensor<8x8xf32>) permutation = [1, 0]
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y1 : tensor<8x8xf32>
}

/// The scale of one epilogue is computed from the other projection.
// CHECK-LABEL: func.func @negative_epilogue_dependency
//   CHECK-NOT: fusion.paired_projection
func.func @negative_epilogue_dependency(%x: tensor<1x64xf32>, %w0: tensor<8x64xf32>,
                                        %w1: tensor<8x64xf32>) -> tensor<1x8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x8xf32>) -> tensor<1x8xf32>
  // expected-remark @below {{Reason="dependency between the projections", Remark="one epilogue reads a value computed from the other projection"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<1x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<1x8xf32>) -> tensor<1x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<1x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<1x8xf32>) -> tensor<1x8xf32>
  %s = tensor.collapse_shape %y0 [[0, 1]] : tensor<1x8xf32> into tensor<8xf32>
  %g = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y1, %s : tensor<1x8xf32>, tensor<8xf32>) outs(%empty : tensor<1x8xf32>) {
  ^bb0(%in: f32, %sc: f32, %out: f32):
    %e = math.exp %in : f32
    %l = math.log1p %e : f32
    %r = arith.mulf %l, %sc : f32
    linalg.yield %r : f32
  } -> tensor<1x8xf32>
  return %g : tensor<1x8xf32>
}

/// bf16 accumulators: linalg.matmul accumulates in its output type, so the
/// IR rounds every partial sum to bf16; the fused op accumulates in f32.
// CHECK-LABEL: func.func @negative_bf16_accumulation
//   CHECK-NOT: fusion.paired_projection
func.func @negative_bf16_accumulation(%x: tensor<4x64xbf16>, %w0: tensor<8x64xbf16>,
                                      %w1: tensor<8x64xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %empty = tensor.empty() : tensor<4x8xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%empty : tensor<4x8xbf16>) -> tensor<4x8xbf16>
  // expected-remark @below {{Reason="accumulation narrower than f32", Remark="the contraction accumulates in bf16; the paired op accumulates in f32"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xbf16>) -> tensor<4x8xbf16>
  return %y0, %y1 : tensor<4x8xbf16>, tensor<4x8xbf16>
}

/// The accumulator starts from a tensor argument, not from zero.
// CHECK-LABEL: func.func @negative_nonzero_init
//   CHECK-NOT: fusion.paired_projection
func.func @negative_nonzero_init(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>,
                                 %c: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // expected-remark @below {{Reason="unsupported projection", Remark="the accumulator does not start from zero or from a broadcast [H] bias"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y0, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// Batched weights (linalg.batch_matmul): a projection has one weight matrix.
// CHECK-LABEL: func.func @negative_batched_weights
//   CHECK-NOT: fusion.paired_projection
func.func @negative_batched_weights(%x: tensor<2x4x64xf32>, %w0: tensor<2x64x8xf32>,
                                    %w1: tensor<2x64x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @below {{Reason="unsupported projection", Remark="the weight has rank 3 (batched weights); the paired op takes one [H, K] or [K, H] matrix per projection"}}
  %y0 = linalg.batch_matmul ins(%x, %w0 : tensor<2x4x64xf32>, tensor<2x64x8xf32>)
      outs(%acc : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %y1 = linalg.batch_matmul ins(%x, %w1 : tensor<2x4x64xf32>, tensor<2x64x8xf32>)
      outs(%acc : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %y0, %y1 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

/// The first projection feeds its sigmoid and is also returned raw.
// CHECK-LABEL: func.func @negative_extra_consumer
//   CHECK-NOT: fusion.paired_projection
func.func @negative_extra_consumer(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Reason="extra consumer of a projection result", Remark="the projection feeds an elementwise epilogue and 1 other op(s)"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = arith.negf %y0 : tensor<4x8xf32>
  %e = math.exp %n : tensor<4x8xf32>
  %one = arith.constant dense<1.0> : tensor<4x8xf32>
  %d = arith.addf %one, %e : tensor<4x8xf32>
  %s = arith.divf %one, %d : tensor<4x8xf32>
  return %s, %y0, %y1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

/// tanh is not an epilogue of the paired op.
// CHECK-LABEL: func.func @negative_unsupported_epilogue
//   CHECK-NOT: fusion.paired_projection
func.func @negative_unsupported_epilogue(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Reason="unsupported epilogue", Remark="the epilogue matches none of: y + bias, sigmoid(y [+ bias]), silu(y [+ bias]), softplus(y + bias) * scale"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = math.tanh %y0 : tensor<4x8xf32>
  return %t, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// sigmoid(y + b) in one body, the bias an [H] tensor read through the
/// column map: the op's sigmoid epilogue with a bias.
// CHECK-LABEL: func.func @sigmoid_bias
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[W0:.*]]: tensor<8x64xf32>, %[[W1:.*]]: tensor<8x64xf32>, %[[B:.*]]: tensor<8xf32>)
//       CHECK: fusion.paired_projection %[[X]], %[[W0]], %[[W1]] epilogues(sigmoid bias %[[B]], none)
//   CHECK-NOT: linalg.generic
func.func @sigmoid_bias(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>,
                        %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues sigmoid, none"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y0, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %t = arith.addf %in, %bias : f32
    %n = arith.negf %t : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %s = arith.divf %one, %d : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// softplus with threshold 10 differs from torch's (threshold 20) by up to
/// 4.5e-5 just above 10.
// CHECK-LABEL: func.func @negative_softplus_threshold
//   CHECK-NOT: fusion.paired_projection
func.func @negative_softplus_threshold(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Reason="unsupported epilogue", Remark="the epilogue matches none of: y + bias, sigmoid(y [+ bias]), silu(y [+ bias]), softplus(y + bias) * scale"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y0 : tensor<4x8xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %thr = arith.constant 10.0 : f32
    %e = math.exp %in : f32
    %l = math.log1p %e : f32
    %big = arith.cmpf ogt, %in, %thr : f32
    %s = arith.select %big, %in, %l : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// softplus in the overflow-safe form max(t, 0) + log1p(exp(-|t|)) (JAX's
/// softplus; torch.logaddexp(t, 0) adds an Inf guard, corpus
/// gdn_logaddexp_f32): the same function as torch's, but not the same f32
/// values for 0 < t < 20, so the op records the stable form, which the
/// kernels compute as written.
// CHECK-LABEL: func.func @softplus_stable_form
//       CHECK: fusion.paired_projection %{{.*}} epilogues(softplus_stable_bias_scale bias %{{.*}} scale %{{.*}}, none)
func.func @softplus_stable_form(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>,
                                %dt: tensor<8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues softplus_stable_bias_scale, none"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%y0, %dt : tensor<4x8xf32>, tensor<8xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %t = arith.addf %in, %b : f32
    %c0 = arith.constant 0.0 : f32
    %pos = arith.maximumf %t, %c0 : f32
    %abs = math.absf %t : f32
    %nabs = arith.negf %abs : f32
    %e = math.exp %nabs : f32
    %l = math.log1p %e : f32
    %s = arith.addf %pos, %l : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// The overflow-safe form with log(1 + exp(-|t|)) instead of log1p: a
/// softplus, but its f32 result is none of the three formulas the kernels
/// compute bit for bit (log1p form below 0, log form above), so fusing it
/// would change the program's values.
// CHECK-LABEL: func.func @negative_softplus_stable_log_form
//   CHECK-NOT: fusion.paired_projection
func.func @negative_softplus_stable_log_form(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>,
                                             %dt: tensor<8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Reason="unsupported epilogue", Remark="softplus(y + bias) is written in a form whose f32 result is none of log1p(exp(t)), log(1 + exp(t)) and max(t, 0) + log1p(exp(-|t|)) bit for bit (the fused kernels compute one of the three)"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%y0, %dt : tensor<4x8xf32>, tensor<8xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %t = arith.addf %in, %b : f32
    %c0 = arith.constant 0.0 : f32
    %c1 = arith.constant 1.0 : f32
    %pos = arith.maximumf %t, %c0 : f32
    %abs = math.absf %t : f32
    %nabs = arith.negf %abs : f32
    %e = math.exp %nabs : f32
    %p = arith.addf %e, %c1 : f32
    %l = math.log %p : f32
    %s = arith.addf %pos, %l : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// The projection is rounded to bf16 before its sigmoid (a bf16 Linear, HF
/// keeps the pre-activation in bf16): the pair records the rounding.
// CHECK-LABEL: func.func @rounded_epilogue
//       CHECK: fusion.paired_projection %{{.*}} epilogues(round(bf16) sigmoid, none)
//  CHECK-SAME: -> (tensor<4x8xbf16>, tensor<4x8xf32>)
func.func @rounded_epilogue(%x: tensor<4x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<8x64xbf16>)
    -> (tensor<4x8xbf16>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues round(bf16) sigmoid, none"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %yb = arith.truncf %y0 : tensor<4x8xf32> to tensor<4x8xbf16>
  %yf = arith.extf %yb : tensor<4x8xbf16> to tensor<4x8xf32>
  %n = arith.negf %yf : tensor<4x8xf32>
  %e = math.exp %n : tensor<4x8xf32>
  %one = arith.constant dense<1.0> : tensor<4x8xf32>
  %d = arith.addf %one, %e : tensor<4x8xf32>
  %s = arith.divf %one, %d : tensor<4x8xf32>
  %sb = arith.truncf %s : tensor<4x8xf32> to tensor<4x8xbf16>
  return %sb, %y1 : tensor<4x8xbf16>, tensor<4x8xf32>
}

/// FLA's GatedDeltaNet with allow_neg_eigval: beta = b.sigmoid() * 2 of a
/// bf16 Linear, as torch-mlir writes it (the sigmoid op by op in bf16, then
/// a bf16 multiply): a sigmoid epilogue with a scale (a constant 2 per
/// column, materialised).
// CHECK-LABEL: func.func @sigmoid_scaled_bf16
//       CHECK: %[[S:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8xf32>)
//       CHECK: arith.extf %{{.*}} : bf16 to f32
//       CHECK: fusion.paired_projection %{{.*}} epilogues(round(bf16) sigmoid scale %[[S]], none)
//  CHECK-SAME: -> (tensor<4x8xbf16>, tensor<4x8xf32>)
func.func @sigmoid_scaled_bf16(%x: tensor<4x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<8x64xbf16>)
    -> (tensor<4x8xbf16>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues round(bf16) sigmoid, none"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %yb = arith.truncf %y0 : tensor<4x8xf32> to tensor<4x8xbf16>
  %n = arith.negf %yb : tensor<4x8xbf16>
  %e = math.exp %n : tensor<4x8xbf16>
  %one = arith.constant dense<1.0> : tensor<4x8xbf16>
  %d = arith.addf %e, %one : tensor<4x8xbf16>
  %s = arith.divf %one, %d : tensor<4x8xbf16>
  %two = arith.constant dense<2.0> : tensor<4x8xbf16>
  %beta = arith.mulf %s, %two : tensor<4x8xbf16>
  return %beta, %y1 : tensor<4x8xbf16>, tensor<4x8xf32>
}

/// beta = b.sigmoid().float() of a bf16 Linear: the sigmoid is computed in
/// bf16 and widened. The fused op stores it as bf16 (one rounding, torch's)
/// and a widening generic gives the f32 value; before, the fused op stored
/// the unrounded f32 sigmoid, not the program's value.
// CHECK-LABEL: func.func @sigmoid_widened
//       CHECK: %[[R:.*]]:2 = fusion.paired_projection %{{.*}} epilogues(round(bf16) sigmoid, none)
//  CHECK-SAME: -> (tensor<4x8xbf16>, tensor<4x8xf32>)
//       CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%[[R]]#0 : tensor<4x8xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
//       CHECK: arith.extf %{{.*}} : bf16 to f32
//       CHECK: return %[[W]], %[[R]]#1
func.func @sigmoid_widened(%x: tensor<4x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<8x64xbf16>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues round(bf16) sigmoid, none"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %yb = arith.truncf %y0 : tensor<4x8xf32> to tensor<4x8xbf16>
  %n = arith.negf %yb : tensor<4x8xbf16>
  %e = math.exp %n : tensor<4x8xbf16>
  %one = arith.constant dense<1.0> : tensor<4x8xbf16>
  %d = arith.addf %e, %one : tensor<4x8xbf16>
  %s = arith.divf %one, %d : tensor<4x8xbf16>
  %beta = arith.extf %s : tensor<4x8xbf16> to tensor<4x8xf32>
  return %beta, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// beta = b.sigmoid().float() * 3: the sigmoid is rounded to bf16 before
/// the f32 multiply; the fused op would scale the unrounded sigmoid, so the
/// pair is declined.
// CHECK-LABEL: func.func @negative_sigmoid_rounded_before_scale
//   CHECK-NOT: fusion.paired_projection
func.func @negative_sigmoid_rounded_before_scale(%x: tensor<4x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<8x64xbf16>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Reason="unsupported epilogue", Remark="the epilogue rounds sigmoid(y) to bf16 before multiplying it by its scale in f32 (the fused op scales the unrounded value)"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %yb = arith.truncf %y0 : tensor<4x8xf32> to tensor<4x8xbf16>
  %n = arith.negf %yb : tensor<4x8xbf16>
  %e = math.exp %n : tensor<4x8xbf16>
  %one = arith.constant dense<1.0> : tensor<4x8xbf16>
  %d = arith.addf %e, %one : tensor<4x8xbf16>
  %s = arith.divf %one, %d : tensor<4x8xbf16>
  %sf = arith.extf %s : tensor<4x8xbf16> to tensor<4x8xf32>
  %three = arith.constant dense<3.0> : tensor<4x8xf32>
  %beta = arith.mulf %sf, %three : tensor<4x8xf32>
  return %beta, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// (y + b) * s: no fused epilogue scales a bias epilogue.
// CHECK-LABEL: func.func @negative_scaled_bias
//   CHECK-NOT: fusion.paired_projection
func.func @negative_scaled_bias(%x: tensor<4x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<8x64xbf16>,
                                %b: tensor<8xf32>, %sc: tensor<8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Reason="unsupported epilogue", Remark="a scale on a bias epilogue ((y + b) * s): no fused epilogue scales y + b"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y0, %b, %sc : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%in: f32, %bb: f32, %ss: f32, %out: f32):
    %t = arith.addf %in, %bb : f32
    %u = arith.mulf %t, %ss : f32
    linalg.yield %u : f32
  } -> tensor<4x8xf32>
  return %r, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// The epilogue reads the projection rounded to bf16 and unrounded: the
/// fused op reads it one way, so the pair is declined.
// CHECK-LABEL: func.func @negative_rounded_and_unrounded
//   CHECK-NOT: fusion.paired_projection
func.func @negative_rounded_and_unrounded(%x: tensor<4x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<8x64xbf16>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Reason="unsupported epilogue", Remark="the epilogue reads the projection both rounded to bf16 and unrounded (the fused op reads it one way)"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %yb = arith.truncf %y0 : tensor<4x8xf32> to tensor<4x8xbf16>
  %yf = arith.extf %yb : tensor<4x8xbf16> to tensor<4x8xf32>
  %r = arith.addf %yf, %y0 : tensor<4x8xf32>
  return %r, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// torch-mlir's bf16 addmm: the accumulator starts from the bias and the sum
/// is rounded to bf16: the bias is added before the rounding (with_bias).
// CHECK-LABEL: func.func @rounded_init_bias
//       CHECK: fusion.paired_projection %{{.*}} epilogues(round(bf16, with_bias) sigmoid bias %{{.*}}, none)
func.func @rounded_init_bias(%x: tensor<4x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<8x64xbf16>,
                             %b0: tensor<8xf32>) -> (tensor<4x8xbf16>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  %binit = linalg.broadcast ins(%b0 : tensor<8xf32>) outs(%empty : tensor<4x8xf32>) dimensions = [0]
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues round(bf16, with_bias) sigmoid, none"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%binit : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %yb = arith.truncf %y0 : tensor<4x8xf32> to tensor<4x8xbf16>
  %yf = arith.extf %yb : tensor<4x8xbf16> to tensor<4x8xf32>
  %n = arith.negf %yf : tensor<4x8xf32>
  %e = math.exp %n : tensor<4x8xf32>
  %one = arith.constant dense<1.0> : tensor<4x8xf32>
  %d = arith.addf %one, %e : tensor<4x8xf32>
  %s = arith.divf %one, %d : tensor<4x8xf32>
  %sb = arith.truncf %s : tensor<4x8xf32> to tensor<4x8xbf16>
  return %sb, %y1 : tensor<4x8xbf16>, tensor<4x8xf32>
}

/// GeGLU with the exact (erf) GELU (torch's F.gelu(gate) * up): geglu_erf.
// CHECK-LABEL: func.func @gate_up_geglu_erf
//       CHECK: fusion.paired_projection {{.*}} gated(#fusion.act<geglu_erf>)
func.func @gate_up_geglu_erf(%x: tensor<4x64xf32>, %wg: tensor<32x64xf32>, %wu: tensor<32x64xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x32xf32>) -> tensor<4x32xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated geglu_erf"}}
  %g = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %wg : tensor<4x64xf32>, tensor<32x64xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %u = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %wu : tensor<4x64xf32>, tensor<32x64xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : tensor<4x32xf32>, tensor<4x32xf32>) outs(%empty : tensor<4x32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %r2 = arith.constant 0.70710678118654752 : f32
    %s = arith.mulf %a, %r2 : f32
    %er = math.erf %s : f32
    %p = arith.addf %one, %er : f32
    %hx = arith.mulf %half, %a : f32
    %gelu = arith.mulf %hx, %p : f32
    %r = arith.mulf %gelu, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x32xf32>
  return %h : tensor<4x32xf32>
}

/// SwiGLU written with torch bf16 semantics inside the epilogue (the sigmoid
/// and silu rounded to bf16) but on the f32 projections: fused like
/// fusion-fuse-act-quantize fuses such bodies; the fused op rounds once (the
/// more accurate result, docs/passes.md).
// CHECK-LABEL: func.func @gate_up_swiglu_bf16_body
//       CHECK: fusion.paired_projection {{.*}} gated(#fusion.act<swiglu>)
func.func @gate_up_swiglu_bf16_body(%x: tensor<16x64xbf16>, %w_gate: tensor<32x64xbf16>,
                                    %w_up: tensor<32x64xbf16>) -> tensor<16x32xbf16> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x32xf32>) -> tensor<16x32xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu"}}
  %gate = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_gate : tensor<16x64xbf16>, tensor<32x64xbf16>)
      outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  %up = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_up : tensor<16x64xbf16>, tensor<32x64xbf16>)
      outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  %bempty = tensor.empty() : tensor<16x32xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : tensor<16x32xf32>, tensor<16x32xf32>) outs(%bempty : tensor<16x32xbf16>) {
  ^bb0(%g: f32, %u: f32, %out: bf16):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %g : f32
    %e = math.exp %neg : f32
    %den = arith.addf %one, %e : f32
    %sig = arith.divf %one, %den : f32
    %sigb = arith.truncf %sig : f32 to bf16
    %sigf = arith.extf %sigb : bf16 to f32
    %silu = arith.mulf %g, %sigf : f32
    %silub = arith.truncf %silu : f32 to bf16
    %siluf = arith.extf %silub : bf16 to f32
    %p = arith.mulf %siluf, %u : f32
    %t = arith.truncf %p : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x32xbf16>
  return %h : tensor<16x32xbf16>
}

/// A bf16 bias on f32 projections: the runtime reads bias and scale as f32
/// or as the input's type, so the bias is widened over H first.
// CHECK-LABEL: func.func @bias_widened
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[W0:.*]]: tensor<8x64xf32>, %[[W1:.*]]: tensor<8x64xf32>, %[[B:.*]]: tensor<8xbf16>)
//       CHECK: %[[BF:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<8xbf16>) outs(%{{.*}} : tensor<8xf32>)
//       CHECK:   arith.extf
//       CHECK: fusion.paired_projection %[[X]], %[[W0]], %[[W1]] epilogues(bias bias %[[BF]], none)
func.func @bias_widened(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>,
                        %b: tensor<8xbf16>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues bias, none"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y0, %b : tensor<4x8xf32>, tensor<8xbf16>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%in: f32, %bb: bf16, %out: f32):
    %bf = arith.extf %bb : bf16 to f32
    %t = arith.addf %in, %bf : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %r, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// Two token dimensions ([B, T, K] against [H, K] weights, as torch-mlir
/// writes F.linear on a 3-D input): x is collapsed to [B*T, K] and the
/// results expanded back around the fused op.
// CHECK-LABEL: func.func @gdn_batch_tokens
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x64xbf16>, %[[WA:.*]]: tensor<8x64xbf16>, %[[WB:.*]]: tensor<8x64xbf16>, %[[DT:.*]]: tensor<8xf32>, %[[A:.*]]: tensor<8xf32>)
//       CHECK: %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<2x3x64xbf16> into tensor<6x64xbf16>
//       CHECK: %[[R:.*]]:2 = fusion.paired_projection %[[X2]], %[[WA]], %[[WB]] epilogues(softplus_bias_scale bias %[[DT]] scale %[[A]], sigmoid)
//  CHECK-SAME: -> (tensor<6x8xf32>, tensor<6x8xf32>)
//   CHECK-DAG: %[[G:.*]] = tensor.expand_shape %[[R]]#0 {{\[\[}}0, 1], [2]] output_shape [2, 3, 8]
//   CHECK-DAG: %[[B:.*]] = tensor.expand_shape %[[R]]#1 {{\[\[}}0, 1], [2]] output_shape [2, 3, 8]
//       CHECK: return %[[G]], %[[B]]
func.func @gdn_batch_tokens(%x: tensor<2x3x64xbf16>, %w_a: tensor<8x64xbf16>, %w_b: tensor<8x64xbf16>,
                            %dt_bias: tensor<8xf32>, %A: tensor<8xf32>)
    -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x3x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  // expected-remark @below {{Remark="paired linalg.generic and linalg.generic into fusion.paired_projection with epilogues softplus_bias_scale, sigmoid"}}
  %a = linalg.generic {indexing_maps = [affine_map<(b, t, h, k) -> (b, t, k)>, affine_map<(b, t, h, k) -> (h, k)>, affine_map<(b, t, h, k) -> (b, t, h)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w_a : tensor<2x3x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<2x3x8xf32>) {
  ^bb0(%in: bf16, %w: bf16, %c: f32):
    %i = arith.extf %in : bf16 to f32
    %wf = arith.extf %w : bf16 to f32
    %m = arith.mulf %i, %wf : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x3x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(b, t, h, k) -> (b, t, k)>, affine_map<(b, t, h, k) -> (h, k)>, affine_map<(b, t, h, k) -> (b, t, h)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w_b : tensor<2x3x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<2x3x8xf32>) {
  ^bb0(%in: bf16, %w: bf16, %c: f32):
    %i = arith.extf %in : bf16 to f32
    %wf = arith.extf %w : bf16 to f32
    %m = arith.mulf %i, %wf : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x3x8xf32>
  %dt = linalg.broadcast ins(%dt_bias : tensor<8xf32>) outs(%empty : tensor<2x3x8xf32>) dimensions = [0, 1]
  %Ab = linalg.broadcast ins(%A : tensor<8xf32>) outs(%empty : tensor<2x3x8xf32>) dimensions = [0, 1]
  %t = arith.addf %a, %dt : tensor<2x3x8xf32>
  %e = math.exp %t : tensor<2x3x8xf32>
  %l = math.log1p %e : tensor<2x3x8xf32>
  %g = arith.mulf %Ab, %l : tensor<2x3x8xf32>
  %one = arith.constant dense<1.0> : tensor<2x3x8xf32>
  %nb = arith.negf %b : tensor<2x3x8xf32>
  %eb = math.exp %nb : tensor<2x3x8xf32>
  %den = arith.addf %one, %eb : tensor<2x3x8xf32>
  %beta = arith.divf %one, %den : tensor<2x3x8xf32>
  return %g, %beta : tensor<2x3x8xf32>, tensor<2x3x8xf32>
}

/// Dynamic N and H: the materialised parameters take H from the weight.
// CHECK-LABEL: func.func @gdn_dynamic
//  CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[WA:.*]]: tensor<?x64xf32>, %[[WB:.*]]: tensor<?x64xf32>, %[[ALOG:.*]]: tensor<?xf32>)
//       CHECK: %[[H:.*]] = tensor.dim %[[WA]], %{{.*}} : tensor<?x64xf32>
//       CHECK: %[[E:.*]] = tensor.empty(%[[H]]) : tensor<?xf32>
//       CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?xf32>)
//       CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[ALOG]] : tensor<?xf32>)
//       CHECK: fusion.paired_projection %[[X]], %[[WA]], %[[WB]] epilogues(softplus_bias_scale bias %[[ZERO]] scale %[[S]], sigmoid)
//  CHECK-SAME: -> (tensor<?x?xf32>, tensor<?x?xf32>)
func.func @gdn_dynamic(%x: tensor<?x64xf32>, %w_a: tensor<?x64xf32>, %w_b: tensor<?x64xf32>,
                       %a_log: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %h = tensor.dim %w_a, %c0 : tensor<?x64xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%n, %h) : tensor<?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues softplus_bias_scale, sigmoid"}}
  %a = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_a : tensor<?x64xf32>, tensor<?x64xf32>) outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
  %b = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_b : tensor<?x64xf32>, tensor<?x64xf32>) outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
  %g = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %a_log : tensor<?x?xf32>, tensor<?xf32>) outs(%empty : tensor<?x?xf32>) {
  ^bb0(%in: f32, %al: f32, %out: f32):
    %e = math.exp %in : f32
    %l = math.log1p %e : f32
    %ea = math.exp %al : f32
    %m = arith.mulf %ea, %l : f32
    %r = arith.negf %m : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %beta = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<?x?xf32>) outs(%empty : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %in : f32
    %e = math.exp %neg : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %g, %beta : tensor<?x?xf32>, tensor<?x?xf32>
}

/// Gate/up with biases on both projections, silu(g + b_g) * (u + b_u), in
/// one body (the ActivationMatcher takes gated products of tensors only;
/// the biases are located structurally and the product compared on probes).
// CHECK-LABEL: func.func @gate_up_swiglu_biases
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[WG:.*]]: tensor<32x64xf32>, %[[WU:.*]]: tensor<32x64xf32>, %[[BG:.*]]: tensor<32xf32>, %[[BU:.*]]: tensor<32xf32>)
//       CHECK: fusion.paired_projection %[[X]], %[[WG]], %[[WU]] epilogues(bias bias %[[BG]], bias bias %[[BU]]) gated(#fusion.act<swiglu>)
func.func @gate_up_swiglu_biases(%x: tensor<4x64xf32>, %w_gate: tensor<32x64xf32>, %w_up: tensor<32x64xf32>,
                                 %b_gate: tensor<32xf32>, %b_up: tensor<32xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x32xf32>) -> tensor<4x32xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu with a gate bias with an up bias"}}
  %up = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_up : tensor<4x64xf32>, tensor<32x64xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %gate = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_gate : tensor<4x64xf32>, tensor<32x64xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %h = linalg.generic {indexing_maps = [#id, #id, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up, %b_gate, %b_up : tensor<4x32xf32>, tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>)
      outs(%empty : tensor<4x32xf32>) {
  ^bb0(%g: f32, %u: f32, %bg: f32, %bu: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %gb = arith.addf %g, %bg : f32
    %ub = arith.addf %bu, %u : f32
    %neg = arith.negf %gb : f32
    %e = math.exp %neg : f32
    %den = arith.addf %one, %e : f32
    %silu = arith.divf %gb, %den : f32
    %r = arith.mulf %ub, %silu : f32
    linalg.yield %r : f32
  } -> tensor<4x32xf32>
  return %h : tensor<4x32xf32>
}

/// torch-mlir's F.linear: linalg.transpose of the [H, K] weight, then a plain
/// matmul. The fused op reads the weights before the transposes (no `kn`),
/// and the transposes die with the projections.
// CHECK-LABEL: func.func @linear_transposed_weights
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[W0:.*]]: tensor<8x64xf32>, %[[W1:.*]]: tensor<8x64xf32>)
//   CHECK-NOT: linalg.transpose
//       CHECK: fusion.paired_projection %[[X]], %[[W0]], %[[W1]] epilogues(sigmoid, silu) outs(
//   CHECK-NOT: linalg.transpose
func.func @linear_transposed_weights(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  %te = tensor.empty() : tensor<64x8xf32>
  %w0t = linalg.transpose ins(%w0 : tensor<8x64xf32>) outs(%te : tensor<64x8xf32>) permutation = [1, 0]
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues sigmoid, silu"}}
  %y0 = linalg.matmul ins(%x, %w0t : tensor<4x64xf32>, tensor<64x8xf32>)
      outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %w1t = linalg.transpose ins(%w1 : tensor<8x64xf32>) outs(%te : tensor<64x8xf32>) permutation = [1, 0]
  %y1 = linalg.matmul ins(%x, %w1t : tensor<4x64xf32>, tensor<64x8xf32>)
      outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %one = arith.constant dense<1.0> : tensor<4x8xf32>
  %n0 = arith.negf %y0 : tensor<4x8xf32>
  %e0 = math.exp %n0 : tensor<4x8xf32>
  %d0 = arith.addf %one, %e0 : tensor<4x8xf32>
  %s0 = arith.divf %one, %d0 : tensor<4x8xf32>
  %n1 = arith.negf %y1 : tensor<4x8xf32>
  %e1 = math.exp %n1 : tensor<4x8xf32>
  %d1 = arith.addf %one, %e1 : tensor<4x8xf32>
  %s1 = arith.divf %y1, %d1 : tensor<4x8xf32>
  return %s0, %s1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// torch-mlir's addmm: the accumulator starts from the bias broadcast over
/// the tokens; with no epilogue that is the `bias` epilogue (the fused op
/// adds it after the sum; f32 summation order is not specified anyway).
// CHECK-LABEL: func.func @addmm_bias_init
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[W0:.*]]: tensor<8x64xf32>, %[[W1:.*]]: tensor<8x64xf32>, %[[B0:.*]]: tensor<8xf32>)
//       CHECK: fusion.paired_projection %[[X]], %[[W0]], %[[W1]] epilogues(bias bias %[[B0]], sigmoid)
//   CHECK-NOT: linalg.broadcast
func.func @addmm_bias_init(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>,
                           %b0: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  %bias = linalg.broadcast ins(%b0 : tensor<8xf32>) outs(%empty : tensor<4x8xf32>) dimensions = [0]
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues bias, sigmoid"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%bias : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %one = arith.constant dense<1.0> : tensor<4x8xf32>
  %n = arith.negf %y1 : tensor<4x8xf32>
  %e = math.exp %n : tensor<4x8xf32>
  %d = arith.addf %one, %e : tensor<4x8xf32>
  %s = arith.divf %one, %d : tensor<4x8xf32>
  return %y0, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

/// A bias in the accumulator under a silu (torch-mlir's addmm followed by
/// F.silu): silu(y + b), the bias taken from the accumulator's init.
// CHECK-LABEL: func.func @addmm_silu
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[W0:.*]]: tensor<8x64xf32>, %[[W1:.*]]: tensor<8x64xf32>, %[[B0:.*]]: tensor<8xf32>)
//       CHECK: fusion.paired_projection %[[X]], %[[W0]], %[[W1]] epilogues(silu bias %[[B0]], none)
//   CHECK-NOT: linalg.broadcast
func.func @addmm_silu(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>,
                      %b0: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  %bias = linalg.broadcast ins(%b0 : tensor<8xf32>) outs(%empty : tensor<4x8xf32>) dimensions = [0]
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues silu, none"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%bias : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %one = arith.constant dense<1.0> : tensor<4x8xf32>
  %n = arith.negf %y0 : tensor<4x8xf32>
  %e = math.exp %n : tensor<4x8xf32>
  %d = arith.addf %one, %e : tensor<4x8xf32>
  %s = arith.divf %y0, %d : tensor<4x8xf32>
  return %s, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// A bias in the accumulator and another inside the sigmoid: the fused op
/// adds one bias per projection.
// CHECK-LABEL: func.func @negative_addmm_sigmoid_bias
//   CHECK-NOT: fusion.paired_projection
func.func @negative_addmm_sigmoid_bias(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>,
                                       %b0: tensor<8xf32>, %b1: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  %bias = linalg.broadcast ins(%b0 : tensor<8xf32>) outs(%empty : tensor<4x8xf32>) dimensions = [0]
  // expected-remark @below {{Reason="unsupported epilogue", Remark="the accumulator starts from a bias and the epilogue is sigmoid with a bias of its own (the fused op adds one bias, to y, before a sigmoid or silu)"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%bias : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y0, %b1 : tensor<4x8xf32>, tensor<8xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%in: f32, %bb: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %t = arith.addf %in, %bb : f32
    %n = arith.negf %t : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %s = arith.divf %one, %d : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// sigmoid(y + bias) and silu(y + bias)
//===----------------------------------------------------------------------===//

/// Torch-style bf16: bf16 x, weights and biases, f32 accumulation, the
/// outputs rounded to bf16. The sigmoid's bias add is its own op (a
/// linalg.broadcast of the [H] bias and a tensor addf), merged into the
/// sigmoid's body by fusion-normalize-elementwise; the silu adds its bias
/// the other way round (b + y) inside one generic.
// CHECK-LABEL: func.func @sigmoid_silu_bias_bf16
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>, %[[W0:.*]]: tensor<8x64xbf16>, %[[W1:.*]]: tensor<16x64xbf16>, %[[B0:.*]]: tensor<8xbf16>, %[[B1:.*]]: tensor<16xbf16>)
//       CHECK: %[[R:.*]]:2 = fusion.paired_projection %[[X]], %[[W0]], %[[W1]] epilogues(sigmoid bias %[[B0]], silu bias %[[B1]])
//  CHECK-SAME: -> (tensor<4x8xbf16>, tensor<4x16xbf16>)
//   CHECK-NOT: linalg.generic
//       CHECK: return %[[R]]#0, %[[R]]#1
func.func @sigmoid_silu_bias_bf16(%x: tensor<4x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<16x64xbf16>,
                                  %b0: tensor<8xbf16>, %b1: tensor<16xbf16>) -> (tensor<4x8xbf16>, tensor<4x16xbf16>) {
  %zero = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<4x8xf32>
  %e16 = tensor.empty() : tensor<4x16xf32>
  %acc8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<4x16xf32>) -> tensor<4x16xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues sigmoid, silu"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xbf16>, tensor<16x64xbf16>) outs(%acc16 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %eb = tensor.empty() : tensor<4x8xbf16>
  %b0b = linalg.broadcast ins(%b0 : tensor<8xbf16>) outs(%eb : tensor<4x8xbf16>) dimensions = [0]
  %b0f = arith.extf %b0b : tensor<4x8xbf16> to tensor<4x8xf32>
  %t0 = arith.addf %y0, %b0f : tensor<4x8xf32>
  %one = arith.constant dense<1.0> : tensor<4x8xf32>
  %n0 = arith.negf %t0 : tensor<4x8xf32>
  %x0 = math.exp %n0 : tensor<4x8xf32>
  %d0 = arith.addf %one, %x0 : tensor<4x8xf32>
  %s0 = arith.divf %one, %d0 : tensor<4x8xf32>
  %r0 = arith.truncf %s0 : tensor<4x8xf32> to tensor<4x8xbf16>
  %eo = tensor.empty() : tensor<4x16xbf16>
  %r1 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y1, %b1 : tensor<4x16xf32>, tensor<16xbf16>) outs(%eo : tensor<4x16xbf16>) {
  ^bb0(%in: f32, %bb: bf16, %out: bf16):
    %c1 = arith.constant 1.0 : f32
    %bf = arith.extf %bb : bf16 to f32
    %t = arith.addf %bf, %in : f32
    %n = arith.negf %t : f32
    %e = math.exp %n : f32
    %d = arith.addf %c1, %e : f32
    %sg = arith.divf %c1, %d : f32
    %sl = arith.mulf %t, %sg : f32
    %r = arith.truncf %sl : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<4x16xbf16>
  return %r0, %r1 : tensor<4x8xbf16>, tensor<4x16xbf16>
}

/// f32, [K, H] weights: silu(b + y) as x * sigmoid(x) on tensors and
/// sigmoid(y + b) spelled exp(t) / (exp(t) + 1), each bias an [H] tensor.
// CHECK-LABEL: func.func @silu_sigmoid_bias_kn
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[W0:.*]]: tensor<64x8xf32>, %[[W1:.*]]: tensor<64x8xf32>, %[[B0:.*]]: tensor<8xf32>, %[[B1:.*]]: tensor<8xf32>)
//       CHECK: fusion.paired_projection %[[X]], %[[W0]], %[[W1]] epilogues(silu bias %[[B0]], sigmoid bias %[[B1]]) kn
func.func @silu_sigmoid_bias_kn(%x: tensor<4x64xf32>, %w0: tensor<64x8xf32>, %w1: tensor<64x8xf32>,
                                %b0: tensor<8xf32>, %b1: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues silu, sigmoid"}}
  %y0 = linalg.matmul ins(%x, %w0 : tensor<4x64xf32>, tensor<64x8xf32>)
      outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul ins(%x, %w1 : tensor<4x64xf32>, tensor<64x8xf32>)
      outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %bb0 = linalg.broadcast ins(%b0 : tensor<8xf32>) outs(%empty : tensor<4x8xf32>) dimensions = [0]
  %bb1 = linalg.broadcast ins(%b1 : tensor<8xf32>) outs(%empty : tensor<4x8xf32>) dimensions = [0]
  %one = arith.constant dense<1.0> : tensor<4x8xf32>
  %t0 = arith.addf %bb0, %y0 : tensor<4x8xf32>
  %n0 = arith.negf %t0 : tensor<4x8xf32>
  %x0 = math.exp %n0 : tensor<4x8xf32>
  %d0 = arith.addf %one, %x0 : tensor<4x8xf32>
  %s0 = arith.divf %one, %d0 : tensor<4x8xf32>
  %r0 = arith.mulf %t0, %s0 : tensor<4x8xf32>
  %t1 = arith.addf %y1, %bb1 : tensor<4x8xf32>
  %x1 = math.exp %t1 : tensor<4x8xf32>
  %d1 = arith.addf %x1, %one : tensor<4x8xf32>
  %r1 = arith.divf %x1, %d1 : tensor<4x8xf32>
  return %r0, %r1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// Near miss: the bias is indexed by the token dimension (an [N] vector
/// broadcast along the columns), not by H; the op's bias is per column.
// CHECK-LABEL: func.func @negative_sigmoid_bias_rows
//   CHECK-NOT: fusion.paired_projection
func.func @negative_sigmoid_bias_rows(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>,
                                      %b: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Reason="unsupported epilogue", Remark="the epilogue reads a tensor indexed by the token dimension other than the projection"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y0, %b : tensor<4x8xf32>, tensor<4xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %t = arith.addf %in, %bias : f32
    %n = arith.negf %t : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %s = arith.divf %one, %d : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// Near miss: sigmoid(y) + b adds the bias after the activation; the op's
/// sigmoid adds it before.
// CHECK-LABEL: func.func @negative_sigmoid_plus_bias
//   CHECK-NOT: fusion.paired_projection
func.func @negative_sigmoid_plus_bias(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>,
                                      %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Reason="unsupported epilogue", Remark="the epilogue matches none of: y + bias, sigmoid(y [+ bias]), silu(y [+ bias]), softplus(y + bias) * scale"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y0, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %in : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %s = arith.divf %one, %d : f32
    %t = arith.addf %s, %bias : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %r, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// Batched projections of one broadcast weight
//===----------------------------------------------------------------------===//

/// linalg.batch_matmul of x [B, T, K] with a [B, H, K] weight that is one
/// [H, K] matrix broadcast across the batch (linalg.broadcast): the
/// projection of the matrix, x collapsed to [B*T, K] and the results
/// expanded back; the broadcasts die with the projections.
// CHECK-LABEL: func.func @batch_broadcast_hk
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x64xf32>, %[[W0:.*]]: tensor<8x64xf32>, %[[W1:.*]]: tensor<16x64xf32>)
//       CHECK: %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<2x3x64xf32> into tensor<6x64xf32>
//       CHECK: %[[R:.*]]:2 = fusion.paired_projection %[[X2]], %[[W0]], %[[W1]] epilogues(sigmoid, none)
//  CHECK-SAME: -> (tensor<6x8xf32>, tensor<6x16xf32>)
//   CHECK-DAG: %[[S:.*]] = tensor.expand_shape %[[R]]#0 {{\[\[}}0, 1], [2]] output_shape [2, 3, 8]
//   CHECK-DAG: %[[Y:.*]] = tensor.expand_shape %[[R]]#1 {{\[\[}}0, 1], [2]] output_shape [2, 3, 16]
//   CHECK-NOT: linalg.broadcast
//   CHECK-NOT: linalg.generic
//       CHECK: return %[[S]], %[[Y]]
func.func @batch_broadcast_hk(%x: tensor<2x3x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<16x64xf32>)
    -> (tensor<2x3x8xf32>, tensor<2x3x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<2x3x8xf32>
  %e16 = tensor.empty() : tensor<2x3x16xf32>
  %acc8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %acc16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %we0 = tensor.empty() : tensor<2x8x64xf32>
  %we1 = tensor.empty() : tensor<2x16x64xf32>
  %wb0 = linalg.broadcast ins(%w0 : tensor<8x64xf32>) outs(%we0 : tensor<2x8x64xf32>) dimensions = [0]
  %wb1 = linalg.broadcast ins(%w1 : tensor<16x64xf32>) outs(%we1 : tensor<2x16x64xf32>) dimensions = [0]
  // expected-remark @below {{Remark="paired linalg.batch_matmul and linalg.batch_matmul into fusion.paired_projection with epilogues sigmoid, none"}}
  %y0 = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wb0 : tensor<2x3x64xf32>, tensor<2x8x64xf32>) outs(%acc8 : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %y1 = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wb1 : tensor<2x3x64xf32>, tensor<2x16x64xf32>) outs(%acc16 : tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %one = arith.constant dense<1.0> : tensor<2x3x8xf32>
  %n = arith.negf %y0 : tensor<2x3x8xf32>
  %e = math.exp %n : tensor<2x3x8xf32>
  %d = arith.addf %one, %e : tensor<2x3x8xf32>
  %s = arith.divf %one, %d : tensor<2x3x8xf32>
  return %s, %y1 : tensor<2x3x8xf32>, tensor<2x3x16xf32>
}

/// [K, H] weights broadcast by a linalg.generic to [B, K, H] and a plain
/// linalg.batch_matmul: the `kn` layout.
// CHECK-LABEL: func.func @batch_broadcast_kn
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x64xf32>, %[[W0:.*]]: tensor<64x8xf32>, %[[W1:.*]]: tensor<64x8xf32>)
//       CHECK: %[[X2:.*]] = tensor.collapse_shape %[[X]]
//       CHECK: fusion.paired_projection %[[X2]], %[[W0]], %[[W1]] epilogues(none, none) kn
//  CHECK-SAME: -> (tensor<6x8xf32>, tensor<6x8xf32>)
func.func @batch_broadcast_kn(%x: tensor<2x3x64xf32>, %w0: tensor<64x8xf32>, %w1: tensor<64x8xf32>)
    -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x3x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %we = tensor.empty() : tensor<2x64x8xf32>
  %wb0 = linalg.generic {indexing_maps = [affine_map<(b, k, h) -> (k, h)>, affine_map<(b, k, h) -> (b, k, h)>],
                         iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w0 : tensor<64x8xf32>) outs(%we : tensor<2x64x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x64x8xf32>
  %wb1 = linalg.generic {indexing_maps = [affine_map<(b, k, h) -> (k, h)>, affine_map<(b, k, h) -> (b, k, h)>],
                         iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w1 : tensor<64x8xf32>) outs(%we : tensor<2x64x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x64x8xf32>
  // expected-remark @below {{Remark="paired linalg.batch_matmul and linalg.batch_matmul into fusion.paired_projection with epilogues none, none"}}
  %y0 = linalg.batch_matmul ins(%x, %wb0 : tensor<2x3x64xf32>, tensor<2x64x8xf32>)
      outs(%acc : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %y1 = linalg.batch_matmul ins(%x, %wb1 : tensor<2x3x64xf32>, tensor<2x64x8xf32>)
      outs(%acc : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  return %y0, %y1 : tensor<2x3x8xf32>, tensor<2x3x8xf32>
}

/// torch-mlir's F.linear on a [B, T, K] bf16 input with bias, then silu and
/// sigmoid: the [H, K] weight transposed to [K, H], broadcast to [B, K, H]
/// (fusion-normalize-elementwise merges the two into one generic) and a plain
/// linalg.batch_matmul; the biases [H] broadcast over [B, T]. The fused op
/// reads the [H, K] weights themselves.
// CHECK-LABEL: func.func @batch_linear_torch
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x64xbf16>, %[[W0:.*]]: tensor<8x64xbf16>, %[[W1:.*]]: tensor<8x64xbf16>, %[[B0:.*]]: tensor<8xbf16>, %[[B1:.*]]: tensor<8xbf16>)
//       CHECK: %[[X2:.*]] = tensor.collapse_shape %[[X]]
//       CHECK: fusion.paired_projection %[[X2]], %[[W0]], %[[W1]] epilogues(silu bias %[[B0]], sigmoid bias %[[B1]])
//  CHECK-SAME: -> (tensor<6x8xbf16>, tensor<6x8xbf16>)
//   CHECK-NOT: linalg.transpose
//   CHECK-NOT: linalg.generic
func.func @batch_linear_torch(%x: tensor<2x3x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<8x64xbf16>,
                              %b0: tensor<8xbf16>, %b1: tensor<8xbf16>) -> (tensor<2x3x8xbf16>, tensor<2x3x8xbf16>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x3x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %te = tensor.empty() : tensor<64x8xbf16>
  %be = tensor.empty() : tensor<2x64x8xbf16>
  %w0t = linalg.transpose ins(%w0 : tensor<8x64xbf16>) outs(%te : tensor<64x8xbf16>) permutation = [1, 0]
  %w0b = linalg.broadcast ins(%w0t : tensor<64x8xbf16>) outs(%be : tensor<2x64x8xbf16>) dimensions = [0]
  %w1t = linalg.transpose ins(%w1 : tensor<8x64xbf16>) outs(%te : tensor<64x8xbf16>) permutation = [1, 0]
  %w1b = linalg.broadcast ins(%w1t : tensor<64x8xbf16>) outs(%be : tensor<2x64x8xbf16>) dimensions = [0]
  // expected-remark @below {{Remark="paired linalg.batch_matmul and linalg.batch_matmul into fusion.paired_projection with epilogues silu, sigmoid"}}
  %y0 = linalg.batch_matmul ins(%x, %w0b : tensor<2x3x64xbf16>, tensor<2x64x8xbf16>)
      outs(%acc : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %y1 = linalg.batch_matmul ins(%x, %w1b : tensor<2x3x64xbf16>, tensor<2x64x8xbf16>)
      outs(%acc : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %bbe = tensor.empty() : tensor<2x3x8xbf16>
  %bb0 = linalg.broadcast ins(%b0 : tensor<8xbf16>) outs(%bbe : tensor<2x3x8xbf16>) dimensions = [0, 1]
  %bb1 = linalg.broadcast ins(%b1 : tensor<8xbf16>) outs(%bbe : tensor<2x3x8xbf16>) dimensions = [0, 1]
  %bf0 = arith.extf %bb0 : tensor<2x3x8xbf16> to tensor<2x3x8xf32>
  %bf1 = arith.extf %bb1 : tensor<2x3x8xbf16> to tensor<2x3x8xf32>
  %one = arith.constant dense<1.0> : tensor<2x3x8xf32>
  %t0 = arith.addf %y0, %bf0 : tensor<2x3x8xf32>
  %n0 = arith.negf %t0 : tensor<2x3x8xf32>
  %x0 = math.exp %n0 : tensor<2x3x8xf32>
  %d0 = arith.addf %one, %x0 : tensor<2x3x8xf32>
  %s0 = arith.divf %t0, %d0 : tensor<2x3x8xf32>
  %r0 = arith.truncf %s0 : tensor<2x3x8xf32> to tensor<2x3x8xbf16>
  %t1 = arith.addf %bf1, %y1 : tensor<2x3x8xf32>
  %n1 = arith.negf %t1 : tensor<2x3x8xf32>
  %x1 = math.exp %n1 : tensor<2x3x8xf32>
  %d1 = arith.addf %one, %x1 : tensor<2x3x8xf32>
  %s1 = arith.divf %one, %d1 : tensor<2x3x8xf32>
  %r1 = arith.truncf %s1 : tensor<2x3x8xf32> to tensor<2x3x8xbf16>
  return %r0, %r1 : tensor<2x3x8xbf16>, tensor<2x3x8xbf16>
}

/// One weight is a broadcast matrix, the other a genuinely batched [B, K, H]
/// weight (one matrix per batch): the paired op takes one matrix each.
// CHECK-LABEL: func.func @negative_batched_and_broadcast_weights
//   CHECK-NOT: fusion.paired_projection
func.func @negative_batched_and_broadcast_weights(%x: tensor<2x3x64xf32>, %w0: tensor<64x8xf32>,
                                                  %w1: tensor<2x64x8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x3x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %we = tensor.empty() : tensor<2x64x8xf32>
  %wb0 = linalg.broadcast ins(%w0 : tensor<64x8xf32>) outs(%we : tensor<2x64x8xf32>) dimensions = [0]
  // expected-remark @below {{Reason="unsupported projection", Remark="the weight has rank 3 (batched weights); the paired op takes one [H, K] or [K, H] matrix per projection"}}
  %y0 = linalg.batch_matmul ins(%x, %wb0 : tensor<2x3x64xf32>, tensor<2x64x8xf32>)
      outs(%acc : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %y1 = linalg.batch_matmul ins(%x, %w1 : tensor<2x3x64xf32>, tensor<2x64x8xf32>)
      outs(%acc : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  return %y0, %y1 : tensor<2x3x8xf32>, tensor<2x3x8xf32>
}

/// Dynamic B and T, one projection a batch contraction generic and the other
/// a linalg.batch_matmul, both against [H, K] matrices broadcast across B.
// CHECK-LABEL: func.func @batch_broadcast_generic_dynamic
//  CHECK-SAME: (%[[X:.*]]: tensor<?x?x64xf32>, %[[W0:.*]]: tensor<8x64xf32>, %[[W1:.*]]: tensor<8x64xf32>)
//       CHECK: %[[X2:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<?x?x64xf32> into tensor<?x64xf32>
//       CHECK: %[[R:.*]]:2 = fusion.paired_projection %[[X2]], %[[W0]], %[[W1]] epilogues(none, none) outs
//  CHECK-SAME: -> (tensor<?x8xf32>, tensor<?x8xf32>)
//       CHECK: tensor.expand_shape %[[R]]#0 {{\[\[}}0, 1], [2]] output_shape [%{{.*}}, %{{.*}}, 8]
//   CHECK-NOT: linalg.broadcast
func.func @batch_broadcast_generic_dynamic(%x: tensor<?x?x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x64xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x64xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%b, %t) : tensor<?x?x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %we = tensor.empty(%b) : tensor<?x8x64xf32>
  %wb0 = linalg.broadcast ins(%w0 : tensor<8x64xf32>) outs(%we : tensor<?x8x64xf32>) dimensions = [0]
  %wb1 = linalg.broadcast ins(%w1 : tensor<8x64xf32>) outs(%we : tensor<?x8x64xf32>) dimensions = [0]
  // expected-remark @below {{Remark="paired linalg.generic and linalg.batch_matmul into fusion.paired_projection with epilogues none, none"}}
  %y0 = linalg.generic {indexing_maps = [affine_map<(b, t, h, k) -> (b, t, k)>, affine_map<(b, t, h, k) -> (b, h, k)>, affine_map<(b, t, h, k) -> (b, t, h)>],
                        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wb0 : tensor<?x?x64xf32>, tensor<?x8x64xf32>) outs(%acc : tensor<?x?x8xf32>) {
  ^bb0(%in: f32, %w: f32, %c: f32):
    %m = arith.mulf %in, %w : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x?x8xf32>
  %y1 = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wb1 : tensor<?x?x64xf32>, tensor<?x8x64xf32>) outs(%acc : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %y0, %y1 : tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

/// bf16 Linears with bias=True as torch-mlir writes them: y + b (the bf16
/// bias widened) rounded to bf16, then the epilogue in f32. The bias is the
/// epilogue's, added before the rounding (with_bias): a sigmoid of one, the
/// bias-only epilogue of the other (its rounding is the result's type).
// CHECK-LABEL: func.func @biased_linear_bf16
//       CHECK: fusion.paired_projection %{{.*}} epilogues(round(bf16, with_bias) sigmoid bias %{{.*}}, bias bias %{{[a-z0-9]+}})
//  CHECK-SAME: -> (tensor<4x8xbf16>, tensor<4x8xbf16>)
func.func @biased_linear_bf16(%x: tensor<4x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<8x64xbf16>,
                              %b0: tensor<8xbf16>, %b1: tensor<8xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues round(bf16, with_bias) sigmoid, bias"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %eb = tensor.empty() : tensor<4x8xbf16>
  %bb0 = linalg.broadcast ins(%b0 : tensor<8xbf16>) outs(%eb : tensor<4x8xbf16>) dimensions = [0]
  %bb1 = linalg.broadcast ins(%b1 : tensor<8xbf16>) outs(%eb : tensor<4x8xbf16>) dimensions = [0]
  %bf0 = arith.extf %bb0 : tensor<4x8xbf16> to tensor<4x8xf32>
  %bf1 = arith.extf %bb1 : tensor<4x8xbf16> to tensor<4x8xf32>
  %t0 = arith.addf %y0, %bf0 : tensor<4x8xf32>
  %t1 = arith.addf %y1, %bf1 : tensor<4x8xf32>
  %r0 = arith.truncf %t0 : tensor<4x8xf32> to tensor<4x8xbf16>
  %r1 = arith.truncf %t1 : tensor<4x8xf32> to tensor<4x8xbf16>
  %yf = arith.extf %r0 : tensor<4x8xbf16> to tensor<4x8xf32>
  %n = arith.negf %yf : tensor<4x8xf32>
  %e = math.exp %n : tensor<4x8xf32>
  %one = arith.constant dense<1.0> : tensor<4x8xf32>
  %d = arith.addf %one, %e : tensor<4x8xf32>
  %s = arith.divf %one, %d : tensor<4x8xf32>
  %sb = arith.truncf %s : tensor<4x8xf32> to tensor<4x8xbf16>
  return %sb, %r1 : tensor<4x8xbf16>, tensor<4x8xbf16>
}

/// Gate and up bf16 Linears with bias=True feeding SwiGLU in bf16 (torch's
/// F.silu(gate(x)) * up(x)): both biases before their roundings.
// CHECK-LABEL: func.func @gate_up_swiglu_biased_bf16
//       CHECK: fusion.paired_projection %{{.*}} epilogues(round(bf16, with_bias) bias bias %{{.*}}, round(bf16, with_bias) bias bias %{{.*}}) gated(#fusion.act<swiglu>)
func.func @gate_up_swiglu_biased_bf16(%x: tensor<4x64xbf16>, %wg: tensor<32x64xbf16>, %wu: tensor<32x64xbf16>,
                                      %bg: tensor<32xbf16>, %bu: tensor<32xbf16>) -> tensor<4x32xbf16> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x32xf32>) -> tensor<4x32xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu of the accumulators rounded to bf16 with a gate bias rounded with it with an up bias rounded with it"}}
  %g = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %wg : tensor<4x64xbf16>, tensor<32x64xbf16>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %u = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %wu : tensor<4x64xbf16>, tensor<32x64xbf16>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %eb = tensor.empty() : tensor<4x32xbf16>
  %bbg = linalg.broadcast ins(%bg : tensor<32xbf16>) outs(%eb : tensor<4x32xbf16>) dimensions = [0]
  %bbu = linalg.broadcast ins(%bu : tensor<32xbf16>) outs(%eb : tensor<4x32xbf16>) dimensions = [0]
  %bfg = arith.extf %bbg : tensor<4x32xbf16> to tensor<4x32xf32>
  %bfu = arith.extf %bbu : tensor<4x32xbf16> to tensor<4x32xf32>
  %tg = arith.addf %g, %bfg : tensor<4x32xf32>
  %tu = arith.addf %u, %bfu : tensor<4x32xf32>
  %rg = arith.truncf %tg : tensor<4x32xf32> to tensor<4x32xbf16>
  %ru = arith.truncf %tu : tensor<4x32xf32> to tensor<4x32xbf16>
  %gf = arith.extf %rg : tensor<4x32xbf16> to tensor<4x32xf32>
  %uf = arith.extf %ru : tensor<4x32xbf16> to tensor<4x32xf32>
  %n = arith.negf %gf : tensor<4x32xf32>
  %e = math.exp %n : tensor<4x32xf32>
  %one = arith.constant dense<1.0> : tensor<4x32xf32>
  %d = arith.addf %one, %e : tensor<4x32xf32>
  %sg = arith.divf %gf, %d : tensor<4x32xf32>
  %sgb = arith.truncf %sg : tensor<4x32xf32> to tensor<4x32xbf16>
  %sgf = arith.extf %sgb : tensor<4x32xbf16> to tensor<4x32xf32>
  %h = arith.mulf %sgf, %uf : tensor<4x32xf32>
  %hb = arith.truncf %h : tensor<4x32xf32> to tensor<4x32xbf16>
  return %hb : tensor<4x32xbf16>
}

/// torch-mlir's bf16 Linear with bias=True contracts f32-widened operands
/// (extf of x, extf of the transposed weight) where the Linear without bias
/// beside it contracts bf16: every product is exact in f32, so the biased
/// projection reads x and its weight as they are (one input for the pair,
/// no f32 copy of the weight).
// CHECK-LABEL: func.func @gate_bias_only_widened_bf16
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>, %[[WG:.*]]: tensor<32x64xbf16>, %[[WU:.*]]: tensor<32x64xbf16>, %[[BG:.*]]: tensor<32xbf16>)
//       CHECK: fusion.paired_projection %[[X]], %[[WG]], %[[WU]] epilogues(round(bf16, with_bias) bias bias %[[BG]], round(bf16) none) gated(#fusion.act<swiglu>) outs
//  CHECK-SAME: (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<32xbf16>, tensor<4x32xbf16>)
func.func @gate_bias_only_widened_bf16(%x: tensor<4x64xbf16>, %wg: tensor<32x64xbf16>, %wu: tensor<32x64xbf16>,
                                       %bg: tensor<32xbf16>) -> tensor<4x32xbf16> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<64x32xbf16>
  %wgt = linalg.transpose ins(%wg : tensor<32x64xbf16>) outs(%et : tensor<64x32xbf16>) permutation = [1, 0]
  %wut = linalg.transpose ins(%wu : tensor<32x64xbf16>) outs(%et : tensor<64x32xbf16>) permutation = [1, 0]
  %xf = arith.extf %x : tensor<4x64xbf16> to tensor<4x64xf32>
  %wgf = arith.extf %wgt : tensor<64x32xbf16> to tensor<64x32xf32>
  %empty = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x32xf32>) -> tensor<4x32xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection gated swiglu of the accumulators rounded to bf16 with a gate bias rounded with it"}}
  %g = linalg.matmul ins(%xf, %wgf : tensor<4x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %u = linalg.matmul ins(%x, %wut : tensor<4x64xbf16>, tensor<64x32xbf16>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %eb = tensor.empty() : tensor<4x32xbf16>
  %bbg = linalg.broadcast ins(%bg : tensor<32xbf16>) outs(%eb : tensor<4x32xbf16>) dimensions = [0]
  %bfg = arith.extf %bbg : tensor<4x32xbf16> to tensor<4x32xf32>
  %tg = arith.addf %g, %bfg : tensor<4x32xf32>
  %rg = arith.truncf %tg : tensor<4x32xf32> to tensor<4x32xbf16>
  %ru = arith.truncf %u : tensor<4x32xf32> to tensor<4x32xbf16>
  %gf = arith.extf %rg : tensor<4x32xbf16> to tensor<4x32xf32>
  %uf = arith.extf %ru : tensor<4x32xbf16> to tensor<4x32xf32>
  %n = arith.negf %gf : tensor<4x32xf32>
  %e = math.exp %n : tensor<4x32xf32>
  %one = arith.constant dense<1.0> : tensor<4x32xf32>
  %d = arith.addf %one, %e : tensor<4x32xf32>
  %sg = arith.divf %gf, %d : tensor<4x32xf32>
  %h = arith.mulf %sg, %uf : tensor<4x32xf32>
  %hb = arith.truncf %h : tensor<4x32xf32> to tensor<4x32xbf16>
  return %hb : tensor<4x32xbf16>
}

/// x widened from bf16 but the weight from f16: the products of the narrow
/// values are not one contraction type, so the projection keeps its f32
/// operands (the pair reads the widened tensors).
// CHECK-LABEL: func.func @widened_mixed_sources_kept
//       CHECK: fusion.paired_projection {{.*}} : (tensor<4x64xf32>, tensor<64x8xf32>, tensor<64x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
func.func @widened_mixed_sources_kept(%xb: tensor<4x64xbf16>, %w0: tensor<64x8xf16>, %w1: tensor<64x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %x = arith.extf %xb : tensor<4x64xbf16> to tensor<4x64xf32>
  %w0f = arith.extf %w0 : tensor<64x8xf16> to tensor<64x8xf32>
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues none, none"}}
  %a = linalg.matmul ins(%x, %w0f : tensor<4x64xf32>, tensor<64x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = linalg.matmul ins(%x, %w1 : tensor<4x64xf32>, tensor<64x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

/// A biased bf16 Linear whose rounded output gets another bias in f32 before
/// the softplus: two biases, the fused op adds one.
// CHECK-LABEL: func.func @negative_bias_before_and_after_rounding
//   CHECK-NOT: fusion.paired_projection
func.func @negative_bias_before_and_after_rounding(%x: tensor<4x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<8x64xbf16>,
                                                   %b0: tensor<8xbf16>, %dt: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Reason="unsupported epilogue", Remark="the epilogue adds a bias both before and after rounding the projection to bf16 (the fused op adds one)"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %eb = tensor.empty() : tensor<4x8xbf16>
  %bb0 = linalg.broadcast ins(%b0 : tensor<8xbf16>) outs(%eb : tensor<4x8xbf16>) dimensions = [0]
  %bf0 = arith.extf %bb0 : tensor<4x8xbf16> to tensor<4x8xf32>
  %t0 = arith.addf %y0, %bf0 : tensor<4x8xf32>
  %r0 = arith.truncf %t0 : tensor<4x8xf32> to tensor<4x8xbf16>
  %yf = arith.extf %r0 : tensor<4x8xbf16> to tensor<4x8xf32>
  %dtb = linalg.broadcast ins(%dt : tensor<8xf32>) outs(%empty : tensor<4x8xf32>) dimensions = [0]
  %t = arith.addf %yf, %dtb : tensor<4x8xf32>
  %ex = math.exp %t : tensor<4x8xf32>
  %sp = math.log1p %ex : tensor<4x8xf32>
  return %sp, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// Gate and up bf16 Linears with bias=True feeding ReGLU: the biased gated
/// bodies are matched on probes as swiglu, geglu or geglu_erf only. The
/// projections still pair (x read once), their f32 accumulators the fused
/// op's results, and the generic that reads both stays as it is.
// CHECK-LABEL: func.func @negative_gate_up_reglu_biased_bf16
//       CHECK: %[[P:.*]]:2 = fusion.paired_projection %arg0, %arg1, %arg2 epilogues(none, none) outs(
//       CHECK: linalg.generic {{.*}} ins(%[[P]]#0, %arg3, %[[P]]#1, %arg4 :
func.func @negative_gate_up_reglu_biased_bf16(%x: tensor<4x64xbf16>, %wg: tensor<32x64xbf16>, %wu: tensor<32x64xbf16>,
                                              %bg: tensor<32xf32>, %bu: tensor<32xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x32xf32>) -> tensor<4x32xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues none, none; the generic that reads both stays as it is (the body is not swiglu, geglu, geglu_erf or clamped_swiglu (default parameters) of the projections rounded with their biases (the forms matched for biased bf16 / f16 Linears))"}}
  %g = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %wg : tensor<4x64xbf16>, tensor<32x64xbf16>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %u = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %wu : tensor<4x64xbf16>, tensor<32x64xbf16>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  %bbg = linalg.broadcast ins(%bg : tensor<32xf32>) outs(%empty : tensor<4x32xf32>) dimensions = [0]
  %bbu = linalg.broadcast ins(%bu : tensor<32xf32>) outs(%empty : tensor<4x32xf32>) dimensions = [0]
  %tg = arith.addf %g, %bbg : tensor<4x32xf32>
  %tu = arith.addf %u, %bbu : tensor<4x32xf32>
  %rg = arith.truncf %tg : tensor<4x32xf32> to tensor<4x32xbf16>
  %ru = arith.truncf %tu : tensor<4x32xf32> to tensor<4x32xbf16>
  %gf = arith.extf %rg : tensor<4x32xbf16> to tensor<4x32xf32>
  %uf = arith.extf %ru : tensor<4x32xbf16> to tensor<4x32xf32>
  %zeros = arith.constant dense<0.0> : tensor<4x32xf32>
  %r = arith.maximumf %gf, %zeros : tensor<4x32xf32>
  %h = arith.mulf %r, %uf : tensor<4x32xf32>
  return %h : tensor<4x32xf32>
}

/// The epilogue reads the biased rounding of the projection and the
/// projection itself: the fused op reads it one way.
// CHECK-LABEL: func.func @negative_biased_rounding_and_unrounded
//   CHECK-NOT: fusion.paired_projection
func.func @negative_biased_rounding_and_unrounded(%x: tensor<4x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<8x64xbf16>,
                                                  %b0: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Reason="unsupported epilogue", Remark="the epilogue reads the projection both with a bias before its rounding and without (the fused op reads it one way)"}}
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %bb0 = linalg.broadcast ins(%b0 : tensor<8xf32>) outs(%empty : tensor<4x8xf32>) dimensions = [0]
  %t0 = arith.addf %y0, %bb0 : tensor<4x8xf32>
  %r0 = arith.truncf %t0 : tensor<4x8xf32> to tensor<4x8xbf16>
  %f0 = arith.extf %r0 : tensor<4x8xbf16> to tensor<4x8xf32>
  %s = arith.mulf %f0, %y0 : tensor<4x8xf32>
  return %s, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}

/// A decode-shaped [1, 1, K] input as torch-mlir writes it: x viewed as
/// [1, K] by grouping the unit T with K, each projection expanded back the
/// same way ([[0], [1, 2]]), the epilogue reading a per-column bias and scale
/// (`(d0, d1, d2) -> (d2)`). fusion-normalize-elementwise moves the unit
/// dimension to the group before it, the expand_shape then moves past the
/// epilogue, and the softplus epilogue is fused (before: `none`).
// CHECK-LABEL: func.func @gdn_decode_unit_t
//       CHECK: fusion.paired_projection {{.*}} epilogues(softplus_bias_scale bias
//       CHECK: tensor.expand_shape {{.*}} {{\[\[}}0, 1], [2]] output_shape [1, 1, 8]
#d_col = affine_map<(d0, d1, d2) -> (d2)>
#d_id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @gdn_decode_unit_t(%x: tensor<1x1x64xf32>, %w0: tensor<64x8xf32>, %w1: tensor<64x8xf32>,
                             %bias: tensor<8xf32>, %scale: tensor<8xf32>) -> (tensor<1x1x8xf32>, tensor<1x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %thr = arith.constant 20.0 : f32
  %xv = tensor.collapse_shape %x [[0], [1, 2]] : tensor<1x1x64xf32> into tensor<1x64xf32>
  %empty = tensor.empty() : tensor<1x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x8xf32>) -> tensor<1x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues softplus_bias_scale, none"}}
  %y0 = linalg.matmul ins(%xv, %w0 : tensor<1x64xf32>, tensor<64x8xf32>) outs(%acc : tensor<1x8xf32>) -> tensor<1x8xf32>
  %y1 = linalg.matmul ins(%xv, %w1 : tensor<1x64xf32>, tensor<64x8xf32>) outs(%acc : tensor<1x8xf32>) -> tensor<1x8xf32>
  %v0 = tensor.expand_shape %y0 [[0], [1, 2]] output_shape [1, 1, 8] : tensor<1x8xf32> into tensor<1x1x8xf32>
  %e3 = tensor.empty() : tensor<1x1x8xf32>
  %g = linalg.generic {indexing_maps = [#d_id3, #d_col, #d_col, #d_id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v0, %bias, %scale : tensor<1x1x8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e3 : tensor<1x1x8xf32>) {
  ^bb0(%in: f32, %b: f32, %s: f32, %o: f32):
    %t = arith.addf %in, %b : f32
    %e = math.exp %t : f32
    %l = math.log1p %e : f32
    %c = arith.cmpf ogt, %t, %thr : f32
    %sp = arith.select %c, %t, %l : f32
    %r = arith.mulf %sp, %s : f32
    linalg.yield %r : f32
  } -> tensor<1x1x8xf32>
  return %g, %y1 : tensor<1x1x8xf32>, tensor<1x8xf32>
}

/// A view that splits the columns ([4, 8] -> [4, 2, 4], head groups) read by
/// an operand per column of the view: the expand_shape is not moved, the
/// projection pairs with epilogue `none`, and the remark names what stays
/// unfused.
// CHECK-LABEL: func.func @epilogue_after_column_split
//       CHECK: fusion.paired_projection {{.*}} epilogues(none, none)
//       CHECK: tensor.expand_shape
//       CHECK: linalg.generic
func.func @epilogue_after_column_split(%x: tensor<4x64xf32>, %w0: tensor<64x8xf32>, %w1: tensor<64x8xf32>,
                                       %b: tensor<4xf32>) -> (tensor<4x2x4xf32>, tensor<4x8xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{Remark="paired linalg.matmul and linalg.matmul into fusion.paired_projection with epilogues none (the elementwise op after its tensor.expand_shape stays unfused: the reshape is not moved past it), none"}}
  %y0 = linalg.matmul ins(%x, %w0 : tensor<4x64xf32>, tensor<64x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul ins(%x, %w1 : tensor<4x64xf32>, tensor<64x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = tensor.expand_shape %y0 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %e3 = tensor.empty() : tensor<4x2x4xf32>
  %r = linalg.generic {indexing_maps = [#d_id3, #d_col, #d_id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v, %b : tensor<4x2x4xf32>, tensor<4xf32>) outs(%e3 : tensor<4x2x4xf32>) {
  ^bb0(%in: f32, %bb: f32, %o: f32):
    %s = arith.addf %in, %bb : f32
    linalg.yield %s : f32
  } -> tensor<4x2x4xf32>
  return %r, %y1 : tensor<4x2x4xf32>, tensor<4x8xf32>
}
