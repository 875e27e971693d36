// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-act-quantize))' | FileCheck %s --check-prefixes=CHECK,ANY
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-act-quantize{finite-inputs=true}))' | FileCheck %s --check-prefixes=CHECK,FIN
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-act-quantize))' --remarks-filter=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=R-ANY
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-act-quantize{finite-inputs=true}))' --remarks-filter=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=R-FIN
// RUN: fusion-opt %s --fusion-pipeline=frontend=torch -o /dev/null

// Checks that torch-mlir writes on values computed from the activation
// (cf.assert "unimplemented: tensor with zero element" on the amax of the
// quantizer that fusion-raise-quantize replaced; after normalisation they
// sit in result-less linalg.generics): the fusion drops them where
// FloatRangeAnalysis proves that they never fail (for every input, or with
// finite-inputs for finite function arguments), and otherwise declines,
// naming the check.

#id = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
#v = affine_map<(d0) -> (d0)>
!x = tensor<4x64xbf16>
!xf = tensor<4x64xf32>
!d = tensor<4x64xf8E4M3FN>
!s = tensor<4x2xf8E8M0FNU>

// The amax clamped to [1e-12, inf] (NaN to 1e-12) is not zero, whatever the
// input.
// CHECK-LABEL: func.func @clamp_nonzero
//       CHECK: fusion.act_quantize #fusion.act<silu>
//   CHECK-NOT: cf.assert
//   CHECK-NOT: fusion.quantize
//       CHECK: return
// R-ANY: [Passed] FuseActQuantize | Category:fusion | Function=clamp_nonzero | Remark="fused silu and quantize into fusion.act_quantize; 1 check(s) (cf.assert) on values computed from the activation proven to hold for every input and dropped"
// R-FIN: [Passed] FuseActQuantize | Category:fusion | Function=clamp_nonzero | Remark="fused silu and quantize into fusion.act_quantize; 1 check(s) (cf.assert) on values computed from the activation proven to hold for every finite input and dropped"
func.func @clamp_nonzero(%x: !x) -> (!d, !s) {
  // silu(x) in f32, rounded to bf16: the quantizer's input.
  %xf = arith.extf %x : !x to !xf
  %n = arith.negf %xf : !xf
  %ex = math.exp %n : !xf
  %one = arith.constant dense<1.0> : !xf
  %den = arith.addf %one, %ex : !xf
  %y = arith.divf %xf, %den : !xf
  %t = arith.truncf %y : !xf to !x
  // Row amax from -inf (torch's amax), widened to f64.
  %ninf = arith.constant 0xFF80 : bf16
  %e0 = tensor.empty() : tensor<4xbf16>
  %init = linalg.fill ins(%ninf : bf16) outs(%e0 : tensor<4xbf16>) -> tensor<4xbf16>
  %m = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%t : !x) outs(%init : tensor<4xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %abs = math.absf %in : bf16
    %mx = arith.maximumf %abs, %out : bf16
    linalg.yield %mx : bf16
  } -> tensor<4xbf16>
  %e1 = tensor.empty() : tensor<4xf64>
  %a = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%m : tensor<4xbf16>) outs(%e1 : tensor<4xf64>) {
  ^bb0(%in: bf16, %out: f64):
    %w = arith.extf %in : bf16 to f64
    linalg.yield %w : f64
  } -> tensor<4xf64>
  %eps = arith.constant 1.0e-12 : f64
  %inf = arith.constant 0x7FF0000000000000 : f64
  %zero = arith.constant 0.0 : f64
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf64>) {
  ^bb0(%in: f64):
    %lt = arith.cmpf ult, %in, %eps : f64
    %lo = arith.select %lt, %eps, %in : f64
    %gt = arith.cmpf ugt, %lo, %inf : f64
    %c = arith.select %gt, %inf, %lo : f64
    %ne = arith.cmpf one, %c, %zero : f64
    cf.assert %ne, "unimplemented: tensor with zero element"
    linalg.yield
  }
  %dst0 = tensor.empty() : !d
  %dst1 = tensor.empty() : !s
  %q:2 = fusion.quantize %t as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

// 448 / clamp(amax) rounded to f32 is zero when the amax is +Inf: proven
// only for finite inputs (the amax of silu of finite bf16 values is at most
// bf16's largest value). Normalisation fuses the two check generics into
// one, which repeats the first assert: three asserts go.
// CHECK-LABEL: func.func @scale_nonzero
//     ANY-NOT: fusion.act_quantize
//         ANY: cf.assert
//         ANY: fusion.quantize
//         FIN: fusion.act_quantize #fusion.act<silu>
//     FIN-NOT: cf.assert
//       CHECK: return
// R-ANY: [Missed] FuseActQuantize | Category:fusion | Function=scale_nonzero | Reason="activation has another user", Remark="{{.*}} for checks only {{.*}}; the check "scale is zero" is not proven to hold for every input (it is for finite inputs: finite-inputs, frontend=torch)"
// R-FIN: [Passed] FuseActQuantize | Category:fusion | Function=scale_nonzero | Remark="fused silu and quantize into fusion.act_quantize; 3 check(s) (cf.assert) on values computed from the activation proven to hold for every finite input and dropped"
func.func @scale_nonzero(%x: !x) -> (!d, !s) {
  // silu(x) in f32, rounded to bf16: the quantizer's input.
  %xf = arith.extf %x : !x to !xf
  %n = arith.negf %xf : !xf
  %ex = math.exp %n : !xf
  %one = arith.constant dense<1.0> : !xf
  %den = arith.addf %one, %ex : !xf
  %y = arith.divf %xf, %den : !xf
  %t = arith.truncf %y : !xf to !x
  // The amax reads a reshaped view of the activation, as torch-mlir's does.
  %flat = tensor.collapse_shape %t [[0, 1]] : !x into tensor<256xbf16>
  %v = tensor.expand_shape %flat [[0, 1]] output_shape [4, 64] : tensor<256xbf16> into !x
  // Row amax from -inf (torch's amax), widened to f64.
  %ninf = arith.constant 0xFF80 : bf16
  %e0 = tensor.empty() : tensor<4xbf16>
  %init = linalg.fill ins(%ninf : bf16) outs(%e0 : tensor<4xbf16>) -> tensor<4xbf16>
  %m = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%v : !x) outs(%init : tensor<4xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %abs = math.absf %in : bf16
    %mx = arith.maximumf %abs, %out : bf16
    linalg.yield %mx : bf16
  } -> tensor<4xbf16>
  %e1 = tensor.empty() : tensor<4xf64>
  %a = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%m : tensor<4xbf16>) outs(%e1 : tensor<4xf64>) {
  ^bb0(%in: bf16, %out: f64):
    %w = arith.extf %in : bf16 to f64
    linalg.yield %w : f64
  } -> tensor<4xf64>
  %eps = arith.constant 1.0e-12 : f64
  %k = arith.constant 448.0 : f64
  %zero = arith.constant 0.0 : f64
  %zerof = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf64>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%in: f64, %out: f32):
    %lt = arith.cmpf ult, %in, %eps : f64
    %c = arith.select %lt, %eps, %in : f64
    %ne = arith.cmpf one, %c, %zero : f64
    cf.assert %ne, "clamped amax is zero"
    %r = arith.divf %k, %c : f64
    %f = arith.truncf %r : f64 to f32
    linalg.yield %f : f32
  } -> tensor<4xf32>
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]}
      ins(%s : tensor<4xf32>) {
  ^bb0(%in: f32):
    %ne = arith.cmpf one, %in, %zerof : f32
    cf.assert %ne, "scale is zero"
    linalg.yield
  }
  %dst0 = tensor.empty() : !d
  %dst1 = tensor.empty() : !s
  %q:2 = fusion.quantize %t as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

// A check that can fail (a row amax of 1 or less): kept, and the fusion
// declined, naming it.
// CHECK-LABEL: func.func @negative_can_fail
//   CHECK-NOT: fusion.act_quantize
//       CHECK: cf.assert
//       CHECK: fusion.quantize
// R-ANY: [Missed] FuseActQuantize | Category:fusion | Function=negative_can_fail | Reason="activation has another user", Remark="{{.*}} for checks only {{.*}}; the check "amax above one" is not proven to hold for every input"
// R-FIN: [Missed] FuseActQuantize | Category:fusion | Function=negative_can_fail | Reason="activation has another user", Remark="{{.*}} for checks only {{.*}}; the check "amax above one" is not proven to hold for every finite input"
func.func @negative_can_fail(%x: !x) -> (!d, !s) {
  // silu(x) in f32, rounded to bf16: the quantizer's input.
  %xf = arith.extf %x : !x to !xf
  %n = arith.negf %xf : !xf
  %ex = math.exp %n : !xf
  %one = arith.constant dense<1.0> : !xf
  %den = arith.addf %one, %ex : !xf
  %y = arith.divf %xf, %den : !xf
  %t = arith.truncf %y : !xf to !x
  // Row amax from -inf (torch's amax), widened to f64.
  %ninf = arith.constant 0xFF80 : bf16
  %e0 = tensor.empty() : tensor<4xbf16>
  %init = linalg.fill ins(%ninf : bf16) outs(%e0 : tensor<4xbf16>) -> tensor<4xbf16>
  %m = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%t : !x) outs(%init : tensor<4xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %abs = math.absf %in : bf16
    %mx = arith.maximumf %abs, %out : bf16
    linalg.yield %mx : bf16
  } -> tensor<4xbf16>
  %e1 = tensor.empty() : tensor<4xf64>
  %a = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%m : tensor<4xbf16>) outs(%e1 : tensor<4xf64>) {
  ^bb0(%in: bf16, %out: f64):
    %w = arith.extf %in : bf16 to f64
    linalg.yield %w : f64
  } -> tensor<4xf64>
  %c1 = arith.constant 1.0 : f64
  linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf64>) {
  ^bb0(%in: f64):
    %gt = arith.cmpf ogt, %in, %c1 : f64
    cf.assert %gt, "amax above one"
    linalg.yield
  }
  %dst0 = tensor.empty() : !d
  %dst1 = tensor.empty() : !s
  %q:2 = fusion.quantize %t as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}

// A reader that ends in something other than a check (a call without
// results may write memory): declined, named.
// CHECK-LABEL: func.func @negative_call
//       CHECK: call @observe
//       CHECK: fusion.quantize
// R-ANY: [Missed] FuseActQuantize | Category:fusion | Function=negative_call | Reason="activation has another user", Remark="{{.*}}; 'func.call' among them has effects other than cf.assert"
func.func private @observe(tensor<4xf64>)
func.func @negative_call(%x: !x) -> (!d, !s) {
  // silu(x) in f32, rounded to bf16: the quantizer's input.
  %xf = arith.extf %x : !x to !xf
  %n = arith.negf %xf : !xf
  %ex = math.exp %n : !xf
  %one = arith.constant dense<1.0> : !xf
  %den = arith.addf %one, %ex : !xf
  %y = arith.divf %xf, %den : !xf
  %t = arith.truncf %y : !xf to !x
  // Row amax from -inf (torch's amax), widened to f64.
  %ninf = arith.constant 0xFF80 : bf16
  %e0 = tensor.empty() : tensor<4xbf16>
  %init = linalg.fill ins(%ninf : bf16) outs(%e0 : tensor<4xbf16>) -> tensor<4xbf16>
  %m = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%t : !x) outs(%init : tensor<4xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %abs = math.absf %in : bf16
    %mx = arith.maximumf %abs, %out : bf16
    linalg.yield %mx : bf16
  } -> tensor<4xbf16>
  %e1 = tensor.empty() : tensor<4xf64>
  %a = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%m : tensor<4xbf16>) outs(%e1 : tensor<4xf64>) {
  ^bb0(%in: bf16, %out: f64):
    %w = arith.extf %in : bf16 to f64
    linalg.yield %w : f64
  } -> tensor<4xf64>
  call @observe(%a) : (tensor<4xf64>) -> ()
  %dst0 = tensor.empty() : !d
  %dst1 = tensor.empty() : !s
  %q:2 = fusion.quantize %t as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (!x, !d, !s) -> (!d, !s)
  return %q#0, %q#1 : !d, !s
}
