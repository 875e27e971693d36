// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,fusion-test-float-range))' --remarks-filter=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=ANY
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,fusion-test-float-range{finite-inputs=true}))' --remarks-filter=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIN

// FloatRangeAnalysis (lib/Analysis/FloatRange.cpp), the proof behind
// fusion-fuse-act-quantize's dropping of torch-mlir's checks. Each function
// returns the value under test; the test pass prints its range and then
// evaluates the function on random inputs (zeros, infinities, NaN, extremes,
// random bits; finite only with finite-inputs) and fails if a result falls
// outside its range: "N values checked" says the check ran.

#v = affine_map<(d0) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// ANY-LABEL: Function=sigmoid
// ANY-SAME: result 0: [0, 1] or NaN; 2048 values checked
// FIN-LABEL: Function=sigmoid
// FIN-SAME: result 0: [0, 1]; 2048 values checked
func.func @sigmoid(%x: tensor<32xf32>) -> tensor<32xf32> {
  %e = tensor.empty() : tensor<32xf32>
  %one = arith.constant 1.0 : f32
  %r = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<32xf32>) outs(%e : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %ex = math.exp %n : f32
    %d = arith.addf %ex, %one : f32
    %s = arith.divf %one, %d : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// A clamp by cmpf + select: NaN goes to the floor (ult), so no NaN, and the
// cap is never taken for finite inputs.
// ANY-LABEL: Function=clamp
// ANY-SAME: result 0: [9.99999996e-13, inf]; 2048 values checked
// ANY: Function=clamp | Remark="assert "positive": holds"
// FIN-LABEL: Function=clamp
// FIN-SAME: result 0: [9.99999996e-13, 3.40282347e+38]; 2048 values checked
func.func @clamp(%x: tensor<32xf32>) -> tensor<32xf32> {
  %e = tensor.empty() : tensor<32xf32>
  %eps = arith.constant 1.0e-12 : f32
  %inf = arith.constant 0x7F800000 : f32
  %zero = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<32xf32>) outs(%e : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %lt = arith.cmpf ult, %in, %eps : f32
    %lo = arith.select %lt, %eps, %in : f32
    %gt = arith.cmpf ugt, %lo, %inf : f32
    %c = arith.select %gt, %inf, %lo : f32
    %ok = arith.cmpf ogt, %c, %zero : f32
    cf.assert %ok, "positive"
    linalg.yield %c : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// Row amax of |x| from -inf over a static extent: never the init; NaN only
// from a NaN input (maximumf propagates it).
// ANY-LABEL: Function=amax
// ANY-SAME: result 0: [0, inf] or NaN; 512 values checked
// FIN-LABEL: Function=amax
// FIN-SAME: result 0: [0, 3.38953139e+38]; 512 values checked
func.func @amax(%x: tensor<8x16xbf16>) -> tensor<8xbf16> {
  %ninf = arith.constant 0xFF80 : bf16
  %e = tensor.empty() : tensor<8xbf16>
  %init = linalg.fill ins(%ninf : bf16) outs(%e : tensor<8xbf16>) -> tensor<8xbf16>
  %m = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xbf16>) outs(%init : tensor<8xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %a = math.absf %in : bf16
    %mx = arith.maximumf %a, %out : bf16
    linalg.yield %mx : bf16
  } -> tensor<8xbf16>
  return %m : tensor<8xbf16>
}

// maxnumf ignores NaN when the other side is a number: the init (0) is one.
// ANY-LABEL: Function=amax_maxnum
// ANY-SAME: result 0: [0, inf]; 512 values checked
func.func @amax_maxnum(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%z : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %out: f32) {
      %a = math.absf %in : f32
      %mx = arith.maxnumf %a, %out : f32
      linalg.yield %mx : f32
    }
  return %m : tensor<8xf32>
}

// 448 / clamp(amax) in f64, rounded to f32: zero for an infinite amax, and
// at least 448 / 3.4e38 for finite bf16 inputs; sum of a sum: a reduction
// that keeps growing is the whole line.
// ANY-LABEL: Function=scale
// ANY-SAME: result 0: [0, 4.47999986e+14]; 512 values checked
// ANY: assert "scale": may fail
// FIN-LABEL: Function=scale
// FIN-SAME: result 0: [1.32171664e-36, 4.47999986e+14]; 512 values checked
// FIN: assert "scale": holds
func.func @scale(%x: tensor<8x16xbf16>) -> tensor<8xf32> {
  %ninf = arith.constant 0xFF80 : bf16
  %eps = arith.constant 1.0e-12 : f64
  %k = arith.constant 448.0 : f64
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xbf16>
  %init = linalg.fill ins(%ninf : bf16) outs(%e : tensor<8xbf16>) -> tensor<8xbf16>
  %m = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xbf16>) outs(%init : tensor<8xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %a = math.absf %in : bf16
    %mx = arith.maximumf %a, %out : bf16
    linalg.yield %mx : bf16
  } -> tensor<8xbf16>
  %e2 = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%m : tensor<8xbf16>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %w = arith.extf %in : bf16 to f64
    %lt = arith.cmpf ult, %w, %eps : f64
    %c = arith.select %lt, %eps, %w : f64
    %r = arith.divf %k, %c : f64
    %f = arith.truncf %r : f64 to f32
    %ok = arith.cmpf one, %f, %zero : f32
    cf.assert %ok, "scale"
    linalg.yield %f : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// x / y with y's range holding zero: anything, NaN included; x * x of
// finite f32: overflow to inf is possible; a sum reduction diverges.
// ANY-LABEL: Function=div_mul_sum
// ANY-SAME: result 0: [-inf, inf] or NaN; 2048 values checked
// ANY: result 1: [0, inf] or NaN; 2048 values checked
// ANY: result 2: [-inf, inf] or NaN; 256 values checked
// FIN-LABEL: Function=div_mul_sum
// FIN: result 1: [0, inf]; 2048 values checked
// FIN: result 2: [-inf, inf]; 256 values checked
func.func @div_mul_sum(%x: tensor<32xf32>, %y: tensor<32xf32>, %z: tensor<4x8xf32>) -> (tensor<32xf32>, tensor<32xf32>, tensor<4xf32>) {
  %q = arith.divf %x, %y : tensor<32xf32>
  %sq = arith.mulf %x, %x : tensor<32xf32>
  %a = math.absf %sq : tensor<32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%z : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %q, %a, %sum : tensor<32xf32>, tensor<32xf32>, tensor<4xf32>
}

// torch's exp2 as powf(2, x) of a clamped exponent, and integers converted.
// ANY-LABEL: Function=pow2_and_ints
// ANY-SAME: result 0: [5.87746615e-39, 1.70141265e+38]; 2048 values checked
// ANY: result 1: [0, 255]; 2048 values checked
func.func @pow2_and_ints(%x: tensor<32xf32>, %b: tensor<32xi8>) -> (tensor<32xf32>, tensor<32xf32>) {
  %e = tensor.empty() : tensor<32xf32>
  %two = arith.constant 2.0 : f32
  %lo = arith.constant -127.0 : f32
  %hi = arith.constant 127.0 : f32
  %p = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<32xf32>) outs(%e : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c1 = arith.cmpf olt, %in, %lo : f32
    %s1 = arith.select %c1, %lo, %in : f32
    %c2 = arith.cmpf ogt, %s1, %hi : f32
    %s2 = arith.select %c2, %hi, %s1 : f32
    %n = arith.cmpf uno, %s2, %s2 : f32
    %s3 = arith.select %n, %lo, %s2 : f32
    %f = math.floor %s3 : f32
    %r = math.powf %two, %f : f32
    linalg.yield %r : f32
  } -> tensor<32xf32>
  %u = arith.uitofp %b : tensor<32xi8> to tensor<32xf32>
  return %p, %u : tensor<32xf32>, tensor<32xf32>
}
