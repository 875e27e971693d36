// RUN: fusion-opt %s --fusion-fuse-act-quantize | FileCheck %s
// RUN: fusion-opt %s --fusion-fuse-act-quantize --remarks-filter=fusion -verify-diagnostics -o /dev/null

// More than two quantizers of one activation, and a dbias reduction that is
// not the only other user. The pass runs alone (no cse), so quantizers that
// cse would merge reach it. Forms with one or two quantizers:
// fuse-act-quantize.mlir (`gelu_tanh_rowwise_and_colwise`) and
// fuse-act-quantize-backward.mlir (dbias).

#id = affine_map<(d0, d1) -> (d0, d1)>
!x = tensor<64x64xf32>
!d = tensor<64x64xf8E4M3FN>
!rs = tensor<64x2xf8E8M0FNU>
!cs = tensor<2x64xf8E8M0FNU>

/// Rowwise, colwise and a second, identical rowwise quantizer: one fused op
/// with direction both; the identical quantizer reads its rowwise results.
// CHECK-LABEL: func.func @relu_three_quantizers_one_duplicate
//  CHECK-SAME: (%[[X:.*]]: tensor<64x64xf32>)
//       CHECK: %[[Q:.*]]:4 = fusion.act_quantize #fusion.act<relu> %[[X]] as quant<mxfp8_e4m3, both> via f32
//   CHECK-NOT: fusion.quantize
//   CHECK-NOT: linalg.generic
//       CHECK: return %[[Q]]#0, %[[Q]]#1, %[[Q]]#2, %[[Q]]#3, %[[Q]]#0, %[[Q]]#1
func.func @relu_three_quantizers_one_duplicate(%x: !x) -> (!d, !rs, !d, !cs, !d, !rs) {
  %init = tensor.empty() : !x
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%init : !x) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %in, %z : f32
    linalg.yield %r : f32
  } -> !x
  %dst0 = tensor.empty() : !d
  %dst1 = tensor.empty() : !rs
  // expected-remark @below {{Remark="fused relu and quantize into fusion.act_quantize (rowwise and colwise quantizers as direction both)"}}
  %row:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (!x, !d, !rs) -> (!d, !rs)
  %dst2 = tensor.empty() : !d
  %dst3 = tensor.empty() : !cs
  // expected-remark @below {{Remark="fused relu and quantize into fusion.act_quantize (rowwise and colwise quantizers as direction both)"}}
  %col:2 = fusion.quantize %y as quant<mxfp8_e4m3, colwise> outs(%dst2, %dst3)
      : (!x, !d, !cs) -> (!d, !cs)
  %dst4 = tensor.empty() : !d
  %dst5 = tensor.empty() : !rs
  // expected-remark @below {{Remark="fused relu and quantize into fusion.act_quantize (rowwise and colwise quantizers as direction both); this quantizer is identical to a fused one and reads its results"}}
  %row2:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst4, %dst5)
      : (!x, !d, !rs) -> (!d, !rs)
  return %row#0, %row#1, %col#0, %col#1, %row2#0, %row2#1 : !d, !rs, !d, !cs, !d, !rs
}

/// Rowwise and colwise MXFP8 plus a rowwise MXFP8 E5M2 copy: the first two
/// fuse into one op; the third is more than one fused op writes, so it is
/// declined and keeps reading the activation, which therefore stays.
// CHECK-LABEL: func.func @relu_three_quantizers_two_schemes
//  CHECK-SAME: (%[[X:.*]]: tensor<64x64xf32>)
//       CHECK: %[[Y:.*]] = linalg.generic
//       CHECK: %[[Q:.*]]:4 = fusion.act_quantize #fusion.act<relu> %[[X]] as quant<mxfp8_e4m3, both> via f32
//       CHECK: %[[E:.*]]:2 = fusion.quantize %[[Y]] as quant<mxfp8_e5m2, rowwise>
//       CHECK: return %[[Q]]#0, %[[Q]]#1, %[[Q]]#2, %[[Q]]#3, %[[E]]#0, %[[E]]#1
func.func @relu_three_quantizers_two_schemes(%x: !x) -> (!d, !rs, !d, !cs, tensor<64x64xf8E5M2>, !rs) {
  %init = tensor.empty() : !x
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%init : !x) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %in, %z : f32
    linalg.yield %r : f32
  } -> !x
  %dst6 = tensor.empty() : !d
  %dst7 = tensor.empty() : !rs
  // expected-remark @below {{Remark="fused relu and quantize into fusion.act_quantize (rowwise and colwise quantizers as direction both)"}}
  %row:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst6, %dst7)
      : (!x, !d, !rs) -> (!d, !rs)
  %dst8 = tensor.empty() : !d
  %dst9 = tensor.empty() : !cs
  // expected-remark @below {{Remark="fused relu and quantize into fusion.act_quantize (rowwise and colwise quantizers as direction both)"}}
  %col:2 = fusion.quantize %y as quant<mxfp8_e4m3, colwise> outs(%dst8, %dst9)
      : (!x, !d, !cs) -> (!d, !cs)
  %dst10 = tensor.empty() : tensor<64x64xf8E5M2>
  %dst11 = tensor.empty() : !rs
  // expected-remark @below {{[Missed] FuseActQuantize | Category:fusion | Function=relu_three_quantizers_two_schemes | Reason="more quantizers than one fused op writes", Remark="this activation also feeds a fused fusion.act_quantize with mxfp8_e4m3, both; one fused op writes one rowwise and one colwise copy of one scheme, so this quantizer reads the activation"}}
  %e5:2 = fusion.quantize %y as quant<mxfp8_e5m2, rowwise> outs(%dst10, %dst11)
      : (!x, tensor<64x64xf8E5M2>, !rs) -> (tensor<64x64xf8E5M2>, !rs)
  return %row#0, %row#1, %col#0, %col#1, %e5#0, %e5#1 : !d, !rs, !d, !cs, tensor<64x64xf8E5M2>, !rs
}

/// Near miss of the first case: the third quantizer is identical but the
/// activation is also returned, so nothing fuses and the IR is untouched.
// CHECK-LABEL: func.func @negative_three_quantizers_and_return
//       CHECK: linalg.generic
//       CHECK: fusion.quantize
//       CHECK: fusion.quantize
//       CHECK: fusion.quantize
//   CHECK-NOT: fusion.act_quantize
func.func @negative_three_quantizers_and_return(%x: !x) -> (!d, !rs, !d, !cs, !d, !rs, !x) {
  %init = tensor.empty() : !x
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : !x) outs(%init : !x) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %in, %z : f32
    linalg.yield %r : f32
  } -> !x
  %dst12 = tensor.empty() : !d
  %dst13 = tensor.empty() : !rs
  // expected-remark @below {{Reason="activation has another user", Remark="'func.return' also uses it"}}
  %row:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst12, %dst13)
      : (!x, !d, !rs) -> (!d, !rs)
  %dst14 = tensor.empty() : !d
  %dst15 = tensor.empty() : !cs
  // expected-remark @below {{Reason="activation has another user", Remark="'func.return' also uses it"}}
  %col:2 = fusion.quantize %y as quant<mxfp8_e4m3, colwise> outs(%dst14, %dst15)
      : (!x, !d, !cs) -> (!d, !cs)
  %dst16 = tensor.empty() : !d
  %dst17 = tensor.empty() : !rs
  // expected-remark @below {{Reason="activation has another user", Remark="'func.return' also uses it"}}
  %row2:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst16, %dst17)
      : (!x, !d, !rs) -> (!d, !rs)
  return %row#0, %row#1, %col#0, %col#1, %row2#0, %row2#1, %y : !d, !rs, !d, !cs, !d, !rs, !x
}

/// dgelu-free backward: drelu whose result is quantized, summed by a dbias
/// reduction and also returned. The reduction is not the only other user,
/// so the candidate is declined and the IR left as it was.
// CHECK-LABEL: func.func @negative_dbias_not_only_other_user
//       CHECK: linalg.generic
//       CHECK: linalg.reduce
//       CHECK: fusion.quantize
//   CHECK-NOT: fusion.act_quantize
func.func @negative_dbias_not_only_other_user(%x: !x, %dy: !x) -> (!d, !rs, tensor<64xf32>, !x) {
  %init = tensor.empty() : !x
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %dy : !x, !x) outs(%init : !x) {
  ^bb0(%in: f32, %g: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %p = arith.cmpf ogt, %in, %z : f32
    %r = arith.select %p, %g, %z : f32
    linalg.yield %r : f32
  } -> !x
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %db = linalg.reduce ins(%y : !x) outs(%acc : tensor<64xf32>) dimensions = [0]
    (%in: f32, %sum: f32) {
      %n = arith.addf %in, %sum : f32
      linalg.yield %n : f32
    }
  %dst18 = tensor.empty() : !d
  %dst19 = tensor.empty() : !rs
  // expected-remark @below {{Reason="activation has another user", Remark="the dbias reduction is not the only other user: 'func.return' also uses it"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst18, %dst19)
      : (!x, !d, !rs) -> (!d, !rs)
  return %q#0, %q#1, %db, %y : !d, !rs, tensor<64xf32>, !x
}

/// The same drelu with the dbias reduction as the only other user fuses
/// (the positive twin of the case above).
// CHECK-LABEL: func.func @drelu_dbias_only_other_user
//       CHECK: fusion.act_quantize #fusion.act<drelu, mask = select> %{{.*}} grad %{{.*}} as quant<mxfp8_e4m3, rowwise> via f32 dbias
//   CHECK-NOT: linalg.reduce
func.func @drelu_dbias_only_other_user(%x: !x, %dy: !x) -> (!d, !rs, tensor<64xf32>) {
  %init = tensor.empty() : !x
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %dy : !x, !x) outs(%init : !x) {
  ^bb0(%in: f32, %g: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %p = arith.cmpf ogt, %in, %z : f32
    %r = arith.select %p, %g, %z : f32
    linalg.yield %r : f32
  } -> !x
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %db = linalg.reduce ins(%y : !x) outs(%acc : tensor<64xf32>) dimensions = [0]
    (%in: f32, %sum: f32) {
      %n = arith.addf %in, %sum : f32
      linalg.yield %n : f32
    }
  %dst20 = tensor.empty() : !d
  %dst21 = tensor.empty() : !rs
  // expected-remark @below {{Remark="fused drelu and quantize into fusion.act_quantize with dbias"}}
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst20, %dst21)
      : (!x, !d, !rs) -> (!d, !rs)
  return %q#0, %q#1, %db : !d, !rs, tensor<64xf32>
}
