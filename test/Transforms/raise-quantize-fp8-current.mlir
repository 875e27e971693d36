// RUN: fusion-opt %s --fusion-raise-quantize=finite-inputs=true | FileCheck %s
// RUN: fusion-opt %s --fusion-raise-quantize=finite-inputs=true --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --fusion-pipeline=frontend=torch -o /dev/null
// RUN: fusion-opt %s --fusion-pipeline -o /dev/null

// fusion-raise-quantize: FP8 per tensor with current scaling (the scale
// max / max(amax, eps) of the tensor's own amax, torch-mlir's spelling).
// The probes give the region 17 tensor amaxes; the amax sweep then makes
// the amax a leaf and compares the codes of inputs next to FP8 rounding
// midpoints for 256 more, where a scale one f32 ulp off the runtime's
// changes a code (finite inputs: torch.amax propagates NaN, the runtime
// ignores it). torch's `448.0 / amax` on an f32 tensor is
// `reciprocal(amax) * 448` (Tensor.__rtruediv__), which rounds differently
// from the runtime's quotient for about a quarter of all amaxes: the
// runtime's `reciprocal` recipe. Any other rule is declined with the amax
// and input that show it.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#to0 = affine_map<(d0, d1) -> ()>
#id0 = affine_map<() -> ()>
!x = tensor<4x64xf32>
!d = tensor<4x64xf8E4M3FN>

// The quotient 448 / max(amax, 1.1920929e-07), as the runtime computes it.
// CHECK-LABEL: func.func @current_scaling
//       CHECK: fusion.quantize %arg0 as quant<fp8_e4m3, rowwise, epsilon = 1.1920929e-07>
func.func @current_scaling(%x: !x) -> (!d, tensor<f32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %eps = arith.constant 1.1920929E-7 : f32
  %max = arith.constant 4.480000e+02 : f32
  %min = arith.constant -4.480000e+02 : f32
  %e32 = tensor.empty() : !x
  %abs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : !x) outs(%e32 : !x) {
  ^bb0(%in: f32, %out: f32):
    %a = math.absf %in : f32
    linalg.yield %a : f32
  } -> !x
  %e0 = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %amax = linalg.generic {indexing_maps = [#id2, #to0], iterator_types = ["reduction", "reduction"]} ins(%abs : !x) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %scale = linalg.generic {indexing_maps = [#id0, #id0], iterator_types = []} ins(%amax : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %lt = arith.cmpf ult, %in, %eps : f32
    %c = arith.select %lt, %eps, %in : f32
    %s = arith.divf %max, %c : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %y = linalg.generic {indexing_maps = [#id2, #to0, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : !x, tensor<f32>) outs(%e32 : !x) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %p = arith.mulf %in, %s : f32
    %lo = arith.cmpf ult, %p, %min : f32
    %p1 = arith.select %lo, %min, %p : f32
    %hi = arith.cmpf ugt, %p1, %max : f32
    %p2 = arith.select %hi, %max, %p1 : f32
    linalg.yield %p2 : f32
  } -> !x
  %e8 = tensor.empty() : !d
  // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.1920929e-07>}}
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%y : !x) outs(%e8 : !d) {
  ^bb0(%in: f32, %out: f8E4M3FN):
    %t = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %q, %amax : !d, tensor<f32>
}

// torch's `448.0 / amax.clamp(min=eps)`: reciprocal, then times 448, the
// runtime's `reciprocal` recipe (declined as `448 / amax` before the
// recipe, by the sweep: amax 3.96830106, x = 2.59506269e-05 gives 0x02 in
// the IR, 0x01 under the quotient; torch eager agrees with the IR).
// CHECK-LABEL: func.func @reciprocal_times_max
//       CHECK: fusion.quantize %arg0 as quant<fp8_e4m3, rowwise, epsilon = 1.1920929e-07, recipe = reciprocal>
func.func @reciprocal_times_max(%x: !x) -> (!d, tensor<f32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %eps = arith.constant 1.1920929E-7 : f32
  %one = arith.constant 1.000000e+00 : f32
  %max = arith.constant 4.480000e+02 : f32
  %min = arith.constant -4.480000e+02 : f32
  %e32 = tensor.empty() : !x
  %abs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : !x) outs(%e32 : !x) {
  ^bb0(%in: f32, %out: f32):
    %a = math.absf %in : f32
    linalg.yield %a : f32
  } -> !x
  %e0 = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %amax = linalg.generic {indexing_maps = [#id2, #to0], iterator_types = ["reduction", "reduction"]} ins(%abs : !x) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %scale = linalg.generic {indexing_maps = [#id0, #id0], iterator_types = []} ins(%amax : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %lt = arith.cmpf ult, %in, %eps : f32
    %c = arith.select %lt, %eps, %in : f32
    %r = arith.divf %one, %c : f32
    %s = arith.mulf %r, %max : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %y = linalg.generic {indexing_maps = [#id2, #to0, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : !x, tensor<f32>) outs(%e32 : !x) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %p = arith.mulf %in, %s : f32
    %lo = arith.cmpf ult, %p, %min : f32
    %p1 = arith.select %lo, %min, %p : f32
    %hi = arith.cmpf ugt, %p1, %max : f32
    %p2 = arith.select %hi, %max, %p1 : f32
    linalg.yield %p2 : f32
  } -> !x
  %e8 = tensor.empty() : !d
  // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.1920929e-07, recipe = reciprocal>}}
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%y : !x) outs(%e8 : !d) {
  ^bb0(%in: f32, %out: f8E4M3FN):
    %t = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %q, %amax : !d, tensor<f32>
}

// A rule of neither kind, (3 / amax) * fl(448 / 3): equal to the quotient
// on the probes' 17 amaxes, not on the sweep's.
// CHECK-LABEL: func.func @negative_three_over_amax
//   CHECK-NOT: fusion.quantize
func.func @negative_three_over_amax(%x: !x) -> (!d, tensor<f32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %eps = arith.constant 1.1920929E-7 : f32
  %three = arith.constant 3.000000e+00 : f32
  %third = arith.constant 149.333328 : f32
  %max = arith.constant 4.480000e+02 : f32
  %min = arith.constant -4.480000e+02 : f32
  %e32 = tensor.empty() : !x
  %abs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : !x) outs(%e32 : !x) {
  ^bb0(%in: f32, %out: f32):
    %a = math.absf %in : f32
    linalg.yield %a : f32
  } -> !x
  %e0 = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %amax = linalg.generic {indexing_maps = [#id2, #to0], iterator_types = ["reduction", "reduction"]} ins(%abs : !x) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %scale = linalg.generic {indexing_maps = [#id0, #id0], iterator_types = []} ins(%amax : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %lt = arith.cmpf ult, %in, %eps : f32
    %c = arith.select %lt, %eps, %in : f32
    %r = arith.divf %three, %c : f32
    %s = arith.mulf %r, %third : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %y = linalg.generic {indexing_maps = [#id2, #to0, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : !x, tensor<f32>) outs(%e32 : !x) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %p = arith.mulf %in, %s : f32
    %lo = arith.cmpf ult, %p, %min : f32
    %p1 = arith.select %lo, %min, %p : f32
    %hi = arith.cmpf ugt, %p1, %max : f32
    %p2 = arith.select %hi, %max, %p1 : f32
    linalg.yield %p2 : f32
  } -> !x
  %e8 = tensor.empty() : !d
  // expected-remark @below {{Reason="differs from every runtime quantizer", Remark="closest is #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.1920929e-07> (1 differing elements in the probes); first: amax sweep: tensor amax}}
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%y : !x) outs(%e8 : !d) {
  ^bb0(%in: f32, %out: f8E4M3FN):
    %t = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %q, %amax : !d, tensor<f32>
}

// Per tensor as DeepSeek writes its blocks: s = max(amax, eps) / 448, codes
// of x / s. The runtime's per-tensor codes are x * (448 / amax); the two
// agree on the probes, not on the sweep's amaxes (the FP8 block formats
// have this recipe, per block).
// CHECK-LABEL: func.func @negative_divide_by_decode_scale
//   CHECK-NOT: fusion.quantize
func.func @negative_divide_by_decode_scale(%x: !x) -> (!d, tensor<f32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %eps = arith.constant 1.1920929E-7 : f32
  %max = arith.constant 4.480000e+02 : f32
  %min = arith.constant -4.480000e+02 : f32
  %e32 = tensor.empty() : !x
  %abs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : !x) outs(%e32 : !x) {
  ^bb0(%in: f32, %out: f32):
    %a = math.absf %in : f32
    linalg.yield %a : f32
  } -> !x
  %e0 = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %amax = linalg.generic {indexing_maps = [#id2, #to0], iterator_types = ["reduction", "reduction"]} ins(%abs : !x) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %scale = linalg.generic {indexing_maps = [#id0, #id0], iterator_types = []} ins(%amax : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %lt = arith.cmpf ult, %in, %eps : f32
    %c = arith.select %lt, %eps, %in : f32
    %s = arith.divf %c, %max : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %y = linalg.generic {indexing_maps = [#id2, #to0, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : !x, tensor<f32>) outs(%e32 : !x) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %p = arith.divf %in, %s : f32
    %lo = arith.cmpf ult, %p, %min : f32
    %p1 = arith.select %lo, %min, %p : f32
    %hi = arith.cmpf ugt, %p1, %max : f32
    %p2 = arith.select %hi, %max, %p1 : f32
    linalg.yield %p2 : f32
  } -> !x
  %e8 = tensor.empty() : !d
  // expected-remark @below {{Reason="differs from every runtime quantizer", Remark="closest is #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.1920929e-07> (1 differing elements in the probes); first: amax sweep: tensor amax}}
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%y : !x) outs(%e8 : !d) {
  ^bb0(%in: f32, %out: f8E4M3FN):
    %t = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> !d
  return %q, %amax : !d, tensor<f32>
}
