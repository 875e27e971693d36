// The same program run with and without fusion-fuse-paired-projections (the
// fused ops on the CPU runtime) gives the same bits. The inputs are small
// multiples of powers of two, so every dot product is exact in f32 whatever
// the summation order, and the epilogues are written in the form the runtime
// evaluates (runtime/common/epilogue.h, activation.h: 1 / (1 + exp(-t)),
// t > 20 ? t : log1p(exp(t)), silu(t) = t * sigmoid(t)), so that the only
// difference left would be a wrong rewrite. Other spellings are matched too
// but may differ in the last f32 bit (docs/passes.md).
//
// RUN: fusion-opt %s --fusion-pipeline=lower-to-llvm=false | FileCheck %s --check-prefix=IR
// RUN: fusion-opt %s --fusion-pipeline | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%fusion_rt_mlir,%mlir_runner_utils,%mlir_c_runner_utils \
// RUN:   | sed -e "s/base@ = 0x[0-9a-f]*//" > %t.fused
// RUN: fusion-opt %s --fusion-pipeline=fuse-paired-projections=false | mlir-runner -e main \
// RUN:   -entry-point-result=void \
// RUN:   -shared-libs=%fusion_rt_mlir,%mlir_runner_utils,%mlir_c_runner_utils \
// RUN:   | sed -e "s/base@ = 0x[0-9a-f]*//" > %t.unfused
// RUN: diff %t.fused %t.unfused
// RUN: FileCheck %s --input-file=%t.fused

// IR-LABEL: func.func @gdn
// IR: fusion.paired_projection {{.*}} epilogues(sigmoid, softplus_bias_scale bias
// IR-LABEL: func.func @swiglu_biases
// IR: fusion.paired_projection {{.*}} epilogues(bias bias {{.*}}, bias bias {{.*}}) gated(#fusion.act<swiglu>)
// IR-LABEL: func.func @sigmoid_silu_biases
// IR: fusion.paired_projection {{.*}} epilogues(sigmoid bias {{.*}}, silu bias {{.*}})
// IR-LABEL: func.func @batch_linear
// IR: fusion.paired_projection {{.*}} epilogues(silu bias {{.*}}, none) kn

// Seven printed tensors (f32 bits as i32); their values are whatever the
// unfused program computes (compared by `diff`), spot-checked so that an
// empty or all-zero output cannot pass: beta[0][2] = sigmoid(0) = 0.5
// (0x3F000000).
// CHECK: sizes = [2, 8]
// CHECK-NEXT: {{\[\[}}{{-?[0-9]+}}, {{-?[0-9]+}}, 1056964608,
// CHECK: sizes = [2, 8]
// CHECK: sizes = [2, 16]
// CHECK: sizes = [2, 8]
// CHECK: sizes = [2, 16]
// CHECK: sizes = [6, 8]
// CHECK: sizes = [6, 16]

#x_map = affine_map<(n, h, k) -> (n, k)>
#w_map = affine_map<(n, h, k) -> (h, k)>
#o_map = affine_map<(n, h, k) -> (n, h)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

/// GDN gates: beta = sigmoid(x Wbᵀ), g = -exp(A_log) * softplus(x Waᵀ + dt).
func.func @gdn(%x: tensor<2x64xbf16>, %w_a: tensor<8x64xbf16>, %w_b: tensor<8x64xbf16>,
               %dt: tensor<8xbf16>, %a_log: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x8xf32>) -> tensor<2x8xf32>
  %b = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_b : tensor<2x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<2x8xf32>) -> tensor<2x8xf32>
  %a = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_a : tensor<2x64xbf16>, tensor<8x64xbf16>) outs(%acc : tensor<2x8xf32>) -> tensor<2x8xf32>
  %beta = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<2x8xf32>) outs(%empty : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %in : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %s = arith.divf %one, %d : f32
    linalg.yield %s : f32
  } -> tensor<2x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %dt, %a_log : tensor<2x8xf32>, tensor<8xbf16>, tensor<8xf32>) outs(%empty : tensor<2x8xf32>) {
  ^bb0(%in: f32, %bias: bf16, %al: f32, %out: f32):
    %thr = arith.constant 20.0 : f32
    %bf = arith.extf %bias : bf16 to f32
    %t = arith.addf %in, %bf : f32
    %e = math.exp %t : f32
    %l = math.log1p %e : f32
    %big = arith.cmpf ogt, %t, %thr : f32
    %sp = arith.select %big, %t, %l : f32
    %ea = math.exp %al : f32
    %na = arith.negf %ea : f32
    %r = arith.mulf %sp, %na : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  return %beta, %g : tensor<2x8xf32>, tensor<2x8xf32>
}

/// SwiGLU with biases on gate and up, f32.
func.func @swiglu_biases(%x: tensor<2x64xf32>, %w_g: tensor<16x64xf32>, %w_u: tensor<16x64xf32>,
                         %b_g: tensor<16xf32>, %b_u: tensor<16xf32>) -> tensor<2x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x16xf32>) -> tensor<2x16xf32>
  %g = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_g : tensor<2x64xf32>, tensor<16x64xf32>) outs(%acc : tensor<2x16xf32>) -> tensor<2x16xf32>
  %u = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_u : tensor<2x64xf32>, tensor<16x64xf32>) outs(%acc : tensor<2x16xf32>) -> tensor<2x16xf32>
  %h = linalg.generic {indexing_maps = [#id, #id, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %u, %b_g, %b_u : tensor<2x16xf32>, tensor<2x16xf32>, tensor<16xf32>, tensor<16xf32>)
      outs(%empty : tensor<2x16xf32>) {
  ^bb0(%gv: f32, %uv: f32, %bg: f32, %bu: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %gb = arith.addf %gv, %bg : f32
    %ub = arith.addf %uv, %bu : f32
    %n = arith.negf %gb : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %sig = arith.divf %one, %d : f32
    %silu = arith.mulf %gb, %sig : f32
    %r = arith.mulf %silu, %ub : f32
    linalg.yield %r : f32
  } -> tensor<2x16xf32>
  return %h : tensor<2x16xf32>
}

/// sigmoid(y + b) with a bf16 bias and silu(b + y) with an f32 bias (the
/// add written the other way round) on bf16 projections.
func.func @sigmoid_silu_biases(%x: tensor<2x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<16x64xbf16>,
                               %b0: tensor<8xbf16>, %b1: tensor<16xf32>) -> (tensor<2x8xf32>, tensor<2x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<2x8xf32>
  %e16 = tensor.empty() : tensor<2x16xf32>
  %acc8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %acc16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<2x64xbf16>, tensor<8x64xbf16>) outs(%acc8 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<2x64xbf16>, tensor<16x64xbf16>) outs(%acc16 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %s = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y0, %b0 : tensor<2x8xf32>, tensor<8xbf16>) outs(%e8 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %bias: bf16, %out: f32):
    %one = arith.constant 1.0 : f32
    %bf = arith.extf %bias : bf16 to f32
    %t = arith.addf %in, %bf : f32
    %n = arith.negf %t : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %u = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y1, %b1 : tensor<2x16xf32>, tensor<16xf32>) outs(%e16 : tensor<2x16xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %t = arith.addf %bias, %in : f32
    %n = arith.negf %t : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %sg = arith.divf %one, %d : f32
    %r = arith.mulf %t, %sg : f32
    linalg.yield %r : f32
  } -> tensor<2x16xf32>
  return %s, %u : tensor<2x8xf32>, tensor<2x16xf32>
}

/// torch-mlir's matmul of a [B, T, K] input by [K, H] weights broadcast
/// across the batch (linalg.batch_matmul), silu(y + b) on the first.
func.func @batch_linear(%x: tensor<2x3x64xf32>, %w0: tensor<64x8xf32>, %w1: tensor<64x16xf32>,
                        %b0: tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<2x3x8xf32>
  %e16 = tensor.empty() : tensor<2x3x16xf32>
  %acc8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %acc16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %we0 = tensor.empty() : tensor<2x64x8xf32>
  %we1 = tensor.empty() : tensor<2x64x16xf32>
  %wb0 = linalg.broadcast ins(%w0 : tensor<64x8xf32>) outs(%we0 : tensor<2x64x8xf32>) dimensions = [0]
  %wb1 = linalg.broadcast ins(%w1 : tensor<64x16xf32>) outs(%we1 : tensor<2x64x16xf32>) dimensions = [0]
  %y0 = linalg.batch_matmul ins(%x, %wb0 : tensor<2x3x64xf32>, tensor<2x64x8xf32>)
      outs(%acc8 : tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %y1 = linalg.batch_matmul ins(%x, %wb1 : tensor<2x3x64xf32>, tensor<2x64x16xf32>)
      outs(%acc16 : tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, t, h) -> (b, t, h)>, affine_map<(b, t, h) -> (h)>, affine_map<(b, t, h) -> (b, t, h)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y0, %b0 : tensor<2x3x8xf32>, tensor<8xf32>) outs(%e8 : tensor<2x3x8xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %t = arith.addf %in, %bias : f32
    %n = arith.negf %t : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %sg = arith.divf %one, %d : f32
    %r = arith.mulf %t, %sg : f32
    linalg.yield %r : f32
  } -> tensor<2x3x8xf32>
  return %s, %y1 : tensor<2x3x8xf32>, tensor<2x3x16xf32>
}

/// value(i, j) = ((i * cols + j) * mul mod 7 - 3) * step: small multiples
/// of a power of two, exact in bf16 and in every partial sum.
func.func @input(%rows: index, %cols: index, %mul: index, %step: f32) -> tensor<?x?xf32> {
  %e = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %t = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k0 = arith.muli %i, %cols : index
    %k1 = arith.addi %k0, %j : index
    %k = arith.muli %k1, %mul : index
    %c7 = arith.constant 7 : index
    %m = arith.remui %k, %c7 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    %three = arith.constant 3.0 : f32
    %c = arith.subf %mf, %three : f32
    %v = arith.mulf %c, %step : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %t : tensor<?x?xf32>
}

func.func private @printMemrefI32(memref<*xi32>)

/// Prints the bits of `t` (printMemrefF32 would round to six digits).
func.func @print(%t: tensor<?x?xf32>) {
  %i = arith.bitcast %t : tensor<?x?xf32> to tensor<?x?xi32>
  %m = bufferization.to_buffer %i : tensor<?x?xi32> to memref<?x?xi32>
  %u = memref.cast %m : memref<?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %quarter = arith.constant 0.25 : f32
  %eighth = arith.constant 0.125 : f32
  %one = arith.constant 1.0 : f32

  %x = call @input(%c2, %c64, %c1, %quarter) : (index, index, index, f32) -> tensor<?x?xf32>
  %xs = tensor.cast %x : tensor<?x?xf32> to tensor<2x64xf32>
  %xb = arith.truncf %xs : tensor<2x64xf32> to tensor<2x64xbf16>
  %wa = call @input(%c8, %c64, %c3, %eighth) : (index, index, index, f32) -> tensor<?x?xf32>
  %was = tensor.cast %wa : tensor<?x?xf32> to tensor<8x64xf32>
  %wab = arith.truncf %was : tensor<8x64xf32> to tensor<8x64xbf16>
  %wb = call @input(%c8, %c64, %c5, %eighth) : (index, index, index, f32) -> tensor<?x?xf32>
  %wbs = tensor.cast %wb : tensor<?x?xf32> to tensor<8x64xf32>
  %wbb = arith.truncf %wbs : tensor<8x64xf32> to tensor<8x64xbf16>
  %v = call @input(%c1, %c8, %c2, %one) : (index, index, index, f32) -> tensor<?x?xf32>
  %v1 = tensor.collapse_shape %v [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %vs = tensor.cast %v1 : tensor<?xf32> to tensor<8xf32>
  %vb = arith.truncf %vs : tensor<8xf32> to tensor<8xbf16>
  %beta, %g = call @gdn(%xb, %wab, %wbb, %vb, %vs)
      : (tensor<2x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8xbf16>, tensor<8xf32>)
        -> (tensor<2x8xf32>, tensor<2x8xf32>)
  %betac = tensor.cast %beta : tensor<2x8xf32> to tensor<?x?xf32>
  %gc = tensor.cast %g : tensor<2x8xf32> to tensor<?x?xf32>
  call @print(%betac) : (tensor<?x?xf32>) -> ()
  call @print(%gc) : (tensor<?x?xf32>) -> ()

  %wg = call @input(%c16, %c64, %c3, %eighth) : (index, index, index, f32) -> tensor<?x?xf32>
  %wgs = tensor.cast %wg : tensor<?x?xf32> to tensor<16x64xf32>
  %wu = call @input(%c16, %c64, %c5, %eighth) : (index, index, index, f32) -> tensor<?x?xf32>
  %wus = tensor.cast %wu : tensor<?x?xf32> to tensor<16x64xf32>
  %bb = call @input(%c1, %c16, %c2, %quarter) : (index, index, index, f32) -> tensor<?x?xf32>
  %bb1 = tensor.collapse_shape %bb [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %bbs = tensor.cast %bb1 : tensor<?xf32> to tensor<16xf32>
  %h = call @swiglu_biases(%xs, %wgs, %wus, %bbs, %bbs)
      : (tensor<2x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  %hc = tensor.cast %h : tensor<2x16xf32> to tensor<?x?xf32>
  call @print(%hc) : (tensor<?x?xf32>) -> ()

  %wgb = arith.truncf %wgs : tensor<16x64xf32> to tensor<16x64xbf16>
  %s, %u = call @sigmoid_silu_biases(%xb, %wbb, %wgb, %vb, %bbs)
      : (tensor<2x64xbf16>, tensor<8x64xbf16>, tensor<16x64xbf16>, tensor<8xbf16>, tensor<16xf32>)
        -> (tensor<2x8xf32>, tensor<2x16xf32>)
  %sc = tensor.cast %s : tensor<2x8xf32> to tensor<?x?xf32>
  %uc = tensor.cast %u : tensor<2x16xf32> to tensor<?x?xf32>
  call @print(%sc) : (tensor<?x?xf32>) -> ()
  call @print(%uc) : (tensor<?x?xf32>) -> ()

  %c6 = arith.constant 6 : index
  %x6 = call @input(%c6, %c64, %c1, %quarter) : (index, index, index, f32) -> tensor<?x?xf32>
  %x6s = tensor.cast %x6 : tensor<?x?xf32> to tensor<6x64xf32>
  %x3 = tensor.expand_shape %x6s [[0, 1], [2]] output_shape [2, 3, 64] : tensor<6x64xf32> into tensor<2x3x64xf32>
  %k0 = call @input(%c64, %c8, %c3, %eighth) : (index, index, index, f32) -> tensor<?x?xf32>
  %k0s = tensor.cast %k0 : tensor<?x?xf32> to tensor<64x8xf32>
  %k1 = call @input(%c64, %c16, %c5, %eighth) : (index, index, index, f32) -> tensor<?x?xf32>
  %k1s = tensor.cast %k1 : tensor<?x?xf32> to tensor<64x16xf32>
  %p, %q = call @batch_linear(%x3, %k0s, %k1s, %vs)
      : (tensor<2x3x64xf32>, tensor<64x8xf32>, tensor<64x16xf32>, tensor<8xf32>)
        -> (tensor<2x3x8xf32>, tensor<2x3x16xf32>)
  %p2 = tensor.collapse_shape %p [[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
  %q2 = tensor.collapse_shape %q [[0, 1], [2]] : tensor<2x3x16xf32> into tensor<6x16xf32>
  %pc = tensor.cast %p2 : tensor<6x8xf32> to tensor<?x?xf32>
  %qc = tensor.cast %q2 : tensor<6x16xf32> to tensor<?x?xf32>
  call @print(%pc) : (tensor<?x?xf32>) -> ()
  call @print(%qc) : (tensor<?x?xf32>) -> ()
  return
}
