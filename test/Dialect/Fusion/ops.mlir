// RUN: fusion-opt %s | fusion-opt | FileCheck %s
// RUN: fusion-opt %s --mlir-print-op-generic | fusion-opt | FileCheck %s
// RUN: fusion-opt %s --verify-roundtrip

// Round trip of every fusion op and every attribute form.

// CHECK-LABEL: func @quantize_mxfp8_rowwise
// CHECK: fusion.quantize %{{.*}} as quant<mxfp8_e4m3, rowwise> outs({{.*}}) : (tensor<128x256xbf16>, tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>) -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
func.func @quantize_mxfp8_rowwise(%x: tensor<128x256xbf16>) -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>) {
  %dst0 = tensor.empty() : tensor<128x256xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<128x8xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<128x256xbf16>, tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>) -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
  return %d, %s : tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>
}

// Options at their defaults are dropped by the printer.
// CHECK-LABEL: func @quantize_defaults_elided
// CHECK: as quant<mxfp8_e5m2, rowwise> outs(
func.func @quantize_defaults_elided(%x: tensor<4x64xf32>) -> (tensor<4x64xf8E5M2>, tensor<4x2xf8E8M0FNU>) {
  %dst2 = tensor.empty() : tensor<4x64xf8E5M2>
  %dst3 = tensor.empty() : tensor<4x2xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp8_e5m2, rowwise, block = 1x32, rounding = rceil, nan = propagate, colwise = same, scales = compact, elem = rne, scaling = current> outs(%dst2, %dst3)
      : (tensor<4x64xf32>, tensor<4x64xf8E5M2>, tensor<4x2xf8E8M0FNU>) -> (tensor<4x64xf8E5M2>, tensor<4x2xf8E8M0FNU>)
  return %d, %s : tensor<4x64xf8E5M2>, tensor<4x2xf8E8M0FNU>
}

// CHECK-LABEL: func @quantize_ceil_mxfp4
// CHECK: as quant<mxfp4, rowwise, rounding = ceil, zero_scale = min_normal> outs
func.func @quantize_ceil_mxfp4(%x: tensor<2x64xbf16>) -> (tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>) {
  %dst4 = tensor.empty() : tensor<2x64xf4E2M1FN>
  %dst5 = tensor.empty() : tensor<2x2xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp4, rowwise, zero_scale = min_normal, rounding = ceil> outs(%dst4, %dst5)
      : (tensor<2x64xbf16>, tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>) -> (tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>)
  return %d, %s : tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>
}

// CHECK-LABEL: func @quantize_even_mxfp8
// CHECK: as quant<mxfp8_e4m3, rowwise, rounding = even, zero_scale = min_normal> outs
func.func @quantize_even_mxfp8(%x: tensor<2x64xbf16>) -> (tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU>) {
  %dst4 = tensor.empty() : tensor<2x64xf8E4M3FN>
  %dst5 = tensor.empty() : tensor<2x2xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise, rounding = even, zero_scale = min_normal> outs(%dst4, %dst5)
      : (tensor<2x64xbf16>, tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU>) -> (tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU>)
  return %d, %s : tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU>
}

// CHECK-LABEL: func @quantize_floor_ignore_partial
// CHECK: as quant<mxfp8_e4m3, rowwise, rounding = floor, nan = ignore> outs({{.*}}) : (tensor<3x33xf16>, tensor<3x33xf8E4M3FN>, tensor<3x2xf8E8M0FNU>) -> (tensor<3x33xf8E4M3FN>, tensor<3x2xf8E8M0FNU>)
func.func @quantize_floor_ignore_partial(%x: tensor<3x33xf16>) -> (tensor<3x33xf8E4M3FN>, tensor<3x2xf8E8M0FNU>) {
  %dst4 = tensor.empty() : tensor<3x33xf8E4M3FN>
  %dst5 = tensor.empty() : tensor<3x2xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise, nan = ignore, rounding = floor> outs(%dst4, %dst5)
      : (tensor<3x33xf16>, tensor<3x33xf8E4M3FN>, tensor<3x2xf8E8M0FNU>) -> (tensor<3x33xf8E4M3FN>, tensor<3x2xf8E8M0FNU>)
  return %d, %s : tensor<3x33xf8E4M3FN>, tensor<3x2xf8E8M0FNU>
}

// Rowwise compact schemes take any rank: blocks run along the last dimension.
// CHECK-LABEL: func @quantize_rank3
// CHECK: (tensor<2x16x96xbf16>, tensor<2x16x96xf8E4M3FN>, tensor<2x16x3xf8E8M0FNU>) -> (tensor<2x16x96xf8E4M3FN>, tensor<2x16x3xf8E8M0FNU>)
func.func @quantize_rank3(%x: tensor<2x16x96xbf16>) -> (tensor<2x16x96xf8E4M3FN>, tensor<2x16x3xf8E8M0FNU>) {
  %dst6 = tensor.empty() : tensor<2x16x96xf8E4M3FN>
  %dst7 = tensor.empty() : tensor<2x16x3xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%dst6, %dst7)
      : (tensor<2x16x96xbf16>, tensor<2x16x96xf8E4M3FN>, tensor<2x16x3xf8E8M0FNU>) -> (tensor<2x16x96xf8E4M3FN>, tensor<2x16x3xf8E8M0FNU>)
  return %d, %s : tensor<2x16x96xf8E4M3FN>, tensor<2x16x3xf8E8M0FNU>
}

// CHECK-LABEL: func @quantize_dynamic
// CHECK: (tensor<?x?xbf16>, tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>) -> (tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>)
func.func @quantize_dynamic(%x: tensor<?x?xbf16>) -> (tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>) {
  %dst8_size = arith.constant 8 : index
  %dst8 = tensor.empty(%dst8_size, %dst8_size) : tensor<?x?xf8E4M3FN>
  %dst9_size = arith.constant 8 : index
  %dst9 = tensor.empty(%dst9_size, %dst9_size) : tensor<?x?xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%dst8, %dst9)
      : (tensor<?x?xbf16>, tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>) -> (tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>)
  return %d, %s : tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>
}

// CHECK-LABEL: func @quantize_colwise_same
// CHECK: as quant<mxfp8_e4m3, colwise> outs({{.*}}) : (tensor<64x128xbf16>, tensor<64x128xf8E4M3FN>, tensor<2x128xf8E8M0FNU>) -> (tensor<64x128xf8E4M3FN>, tensor<2x128xf8E8M0FNU>)
func.func @quantize_colwise_same(%x: tensor<64x128xbf16>) -> (tensor<64x128xf8E4M3FN>, tensor<2x128xf8E8M0FNU>) {
  %dst10 = tensor.empty() : tensor<64x128xf8E4M3FN>
  %dst11 = tensor.empty() : tensor<2x128xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, colwise> outs(%dst10, %dst11)
      : (tensor<64x128xbf16>, tensor<64x128xf8E4M3FN>, tensor<2x128xf8E8M0FNU>) -> (tensor<64x128xf8E4M3FN>, tensor<2x128xf8E8M0FNU>)
  return %d, %s : tensor<64x128xf8E4M3FN>, tensor<2x128xf8E8M0FNU>
}

// CHECK-LABEL: func @quantize_both_transposed_swizzled
// CHECK: as quant<mxfp8_e4m3, both, colwise = transposed, scales = swizzled> outs({{.*}}) : (tensor<64x96xbf16>, tensor<64x96xf8E4M3FN>, tensor<128x4xf8E8M0FNU>, tensor<96x64xf8E4M3FN>, tensor<128x4xf8E8M0FNU>) -> (tensor<64x96xf8E4M3FN>, tensor<128x4xf8E8M0FNU>, tensor<96x64xf8E4M3FN>, tensor<128x4xf8E8M0FNU>)
func.func @quantize_both_transposed_swizzled(%x: tensor<64x96xbf16>) -> (tensor<64x96xf8E4M3FN>, tensor<128x4xf8E8M0FNU>, tensor<96x64xf8E4M3FN>, tensor<128x4xf8E8M0FNU>) {
  %dst12 = tensor.empty() : tensor<64x96xf8E4M3FN>
  %dst13 = tensor.empty() : tensor<128x4xf8E8M0FNU>
  %dst14 = tensor.empty() : tensor<96x64xf8E4M3FN>
  %dst15 = tensor.empty() : tensor<128x4xf8E8M0FNU>
  %r, %rs, %c, %cs = fusion.quantize %x as quant<mxfp8_e4m3, both, colwise = transposed, scales = swizzled> outs(%dst12, %dst13, %dst14, %dst15)
      : (tensor<64x96xbf16>, tensor<64x96xf8E4M3FN>, tensor<128x4xf8E8M0FNU>, tensor<96x64xf8E4M3FN>, tensor<128x4xf8E8M0FNU>) -> (tensor<64x96xf8E4M3FN>, tensor<128x4xf8E8M0FNU>, tensor<96x64xf8E4M3FN>, tensor<128x4xf8E8M0FNU>)
  return %r, %rs, %c, %cs : tensor<64x96xf8E4M3FN>, tensor<128x4xf8E8M0FNU>, tensor<96x64xf8E4M3FN>, tensor<128x4xf8E8M0FNU>
}

// CHECK-LABEL: func @quantize_mxfp4
// CHECK: as quant<mxfp4, rowwise> outs({{.*}}) : (tensor<8x64xbf16>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>) -> (tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>)
func.func @quantize_mxfp4(%x: tensor<8x64xbf16>) -> (tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>) {
  %dst16 = tensor.empty() : tensor<8x64xf4E2M1FN>
  %dst17 = tensor.empty() : tensor<8x2xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp4, rowwise> outs(%dst16, %dst17)
      : (tensor<8x64xbf16>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>) -> (tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>)
  return %d, %s : tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>
}

// NVFP4: e4m3 block scales of 16, the tensor amax; the colwise copy is transposed by default.
// CHECK-LABEL: func @quantize_nvfp4_both_2d
// CHECK: as quant<nvfp4, both, block = 16x16> outs({{.*}}) : (tensor<32x64xbf16>, tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>, tensor<64x32xf4E2M1FN>, tensor<64x2xf8E4M3FN>, tensor<1xf32>) -> (tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>, tensor<64x32xf4E2M1FN>, tensor<64x2xf8E4M3FN>, tensor<1xf32>)
func.func @quantize_nvfp4_both_2d(%x: tensor<32x64xbf16>) -> (tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>, tensor<64x32xf4E2M1FN>, tensor<64x2xf8E4M3FN>, tensor<1xf32>) {
  %dst18 = tensor.empty() : tensor<32x64xf4E2M1FN>
  %dst19 = tensor.empty() : tensor<32x4xf8E4M3FN>
  %dst20 = tensor.empty() : tensor<64x32xf4E2M1FN>
  %dst21 = tensor.empty() : tensor<64x2xf8E4M3FN>
  %dst22 = tensor.empty() : tensor<1xf32>
  %r, %rs, %c, %cs, %amax = fusion.quantize %x as quant<nvfp4, both, block = 16x16, colwise = transposed> outs(%dst18, %dst19, %dst20, %dst21, %dst22)
      : (tensor<32x64xbf16>, tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>, tensor<64x32xf4E2M1FN>, tensor<64x2xf8E4M3FN>, tensor<1xf32>) -> (tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>, tensor<64x32xf4E2M1FN>, tensor<64x2xf8E4M3FN>, tensor<1xf32>)
  return %r, %rs, %c, %cs, %amax : tensor<32x64xf4E2M1FN>, tensor<32x4xf8E4M3FN>, tensor<64x32xf4E2M1FN>, tensor<64x2xf8E4M3FN>, tensor<1xf32>
}

// CHECK-LABEL: func @quantize_nvfp4_stochastic
// CHECK: fusion.quantize %{{.*}} rng %{{.*}} as quant<nvfp4, rowwise, elem = stochastic> outs({{.*}}) : (tensor<16x32xf32>, tensor<2xi64>, tensor<16x32xf4E2M1FN>, tensor<16x2xf8E4M3FN>, tensor<1xf32>) -> (tensor<16x32xf4E2M1FN>, tensor<16x2xf8E4M3FN>, tensor<1xf32>)
func.func @quantize_nvfp4_stochastic(%x: tensor<16x32xf32>, %rng: tensor<2xi64>) -> (tensor<16x32xf4E2M1FN>, tensor<16x2xf8E4M3FN>, tensor<1xf32>) {
  %dst23 = tensor.empty() : tensor<16x32xf4E2M1FN>
  %dst24 = tensor.empty() : tensor<16x2xf8E4M3FN>
  %dst25 = tensor.empty() : tensor<1xf32>
  %d, %s, %a = fusion.quantize %x rng %rng as quant<nvfp4, rowwise, elem = stochastic> outs(%dst23, %dst24, %dst25)
      : (tensor<16x32xf32>, tensor<2xi64>, tensor<16x32xf4E2M1FN>, tensor<16x2xf8E4M3FN>, tensor<1xf32>) -> (tensor<16x32xf4E2M1FN>, tensor<16x2xf8E4M3FN>, tensor<1xf32>)
  return %d, %s, %a : tensor<16x32xf4E2M1FN>, tensor<16x2xf8E4M3FN>, tensor<1xf32>
}

// CHECK-LABEL: func @quantize_fp8_current
// CHECK: as quant<fp8_e4m3, rowwise> outs({{.*}}) : (tensor<4x5x6xbf16>, tensor<4x5x6xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<4x5x6xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
func.func @quantize_fp8_current(%x: tensor<4x5x6xbf16>) -> (tensor<4x5x6xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) {
  %dst26 = tensor.empty() : tensor<4x5x6xf8E4M3FN>
  %dst27 = tensor.empty() : tensor<1xf32>
  %dst28 = tensor.empty() : tensor<1xf32>
  %d, %si, %a = fusion.quantize %x as quant<fp8_e4m3, rowwise, block = tensor> outs(%dst26, %dst27, %dst28)
      : (tensor<4x5x6xbf16>, tensor<4x5x6xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<4x5x6xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return %d, %si, %a : tensor<4x5x6xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>
}

// CHECK-LABEL: func @quantize_fp8_delayed_both
// CHECK: fusion.quantize %{{.*}} scale %{{.*}} as quant<fp8_e5m2, both, colwise = transposed, scaling = delayed> outs({{.*}}) : (tensor<16x8xbf16>, tensor<1xf32>, tensor<16x8xf8E5M2>, tensor<8x16xf8E5M2>, tensor<1xf32>, tensor<1xf32>) -> (tensor<16x8xf8E5M2>, tensor<8x16xf8E5M2>, tensor<1xf32>, tensor<1xf32>)
func.func @quantize_fp8_delayed_both(%x: tensor<16x8xbf16>, %scale: tensor<1xf32>) -> (tensor<16x8xf8E5M2>, tensor<8x16xf8E5M2>, tensor<1xf32>, tensor<1xf32>) {
  %dst29 = tensor.empty() : tensor<16x8xf8E5M2>
  %dst30 = tensor.empty() : tensor<8x16xf8E5M2>
  %dst31 = tensor.empty() : tensor<1xf32>
  %dst32 = tensor.empty() : tensor<1xf32>
  %r, %c, %si, %a = fusion.quantize %x scale %scale as quant<fp8_e5m2, both, colwise = transposed, scaling = delayed> outs(%dst29, %dst30, %dst31, %dst32)
      : (tensor<16x8xbf16>, tensor<1xf32>, tensor<16x8xf8E5M2>, tensor<8x16xf8E5M2>, tensor<1xf32>, tensor<1xf32>) -> (tensor<16x8xf8E5M2>, tensor<8x16xf8E5M2>, tensor<1xf32>, tensor<1xf32>)
  return %r, %c, %si, %a : tensor<16x8xf8E5M2>, tensor<8x16xf8E5M2>, tensor<1xf32>, tensor<1xf32>
}

// CHECK-LABEL: func @act_quantize_forward
// CHECK: fusion.act_quantize #fusion.act<gelu_tanh> %{{.*}} as quant<mxfp8_e4m3, rowwise> via bf16 outs({{.*}}) : (tensor<128x256xbf16>, tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>) -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
func.func @act_quantize_forward(%x: tensor<128x256xbf16>) -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>) {
  %dst33 = tensor.empty() : tensor<128x256xf8E4M3FN>
  %dst34 = tensor.empty() : tensor<128x8xf8E8M0FNU>
  %d, %s = fusion.act_quantize #fusion.act<gelu_tanh> %x as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst33, %dst34)
      : (tensor<128x256xbf16>, tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>) -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
  return %d, %s : tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>
}

// CHECK-LABEL: func @act_quantize_qgelu_alpha
// CHECK: #fusion.act<qgelu, alpha = 1.500000e+00>
func.func @act_quantize_qgelu_alpha(%x: tensor<32x32xf32>) -> (tensor<32x32xf8E4M3FN>, tensor<32x1xf8E8M0FNU>) {
  %dst35 = tensor.empty() : tensor<32x32xf8E4M3FN>
  %dst36 = tensor.empty() : tensor<32x1xf8E8M0FNU>
  %d, %s = fusion.act_quantize #fusion.act<qgelu, alpha = 1.5> %x as quant<mxfp8_e4m3, rowwise> via f32 outs(%dst35, %dst36)
      : (tensor<32x32xf32>, tensor<32x32xf8E4M3FN>, tensor<32x1xf8E8M0FNU>) -> (tensor<32x32xf8E4M3FN>, tensor<32x1xf8E8M0FNU>)
  return %d, %s : tensor<32x32xf8E4M3FN>, tensor<32x1xf8E8M0FNU>
}

// `mask = select` (torch's threshold_backward); `mask = multiply`, the
// default, is not printed.
// CHECK-LABEL: func @act_quantize_drelu_mask
// CHECK: #fusion.act<drelu, mask = select>
// CHECK: #fusion.act<dsrelu> %
func.func @act_quantize_drelu_mask(%x: tensor<32x32xf32>, %dy: tensor<32x32xf32>) -> (tensor<32x32xf8E4M3FN>, tensor<32x1xf8E8M0FNU>, tensor<32x32xf8E4M3FN>, tensor<32x1xf8E8M0FNU>) {
  %e0 = tensor.empty() : tensor<32x32xf8E4M3FN>
  %e1 = tensor.empty() : tensor<32x1xf8E8M0FNU>
  %d, %s = fusion.act_quantize #fusion.act<drelu, mask = select> %x grad %dy as quant<mxfp8_e4m3, rowwise> via f32 outs(%e0, %e1)
      : (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf8E4M3FN>, tensor<32x1xf8E8M0FNU>) -> (tensor<32x32xf8E4M3FN>, tensor<32x1xf8E8M0FNU>)
  %d2, %s2 = fusion.act_quantize #fusion.act<dsrelu, mask = multiply> %x grad %dy as quant<mxfp8_e4m3, rowwise> via f32 outs(%e0, %e1)
      : (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf8E4M3FN>, tensor<32x1xf8E8M0FNU>) -> (tensor<32x32xf8E4M3FN>, tensor<32x1xf8E8M0FNU>)
  return %d, %s, %d2, %s2 : tensor<32x32xf8E4M3FN>, tensor<32x1xf8E8M0FNU>, tensor<32x32xf8E4M3FN>, tensor<32x1xf8E8M0FNU>
}

// CHECK-LABEL: func @act_quantize_backward_dbias
// CHECK: fusion.act_quantize #fusion.act<dgelu> %{{.*}} grad %{{.*}} as quant<mxfp8_e4m3, both> via bf16 dbias outs({{.*}}) : (tensor<64x256xbf16>, tensor<64x256xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E4M3FN>, tensor<2x256xf8E8M0FNU>, tensor<256xf32>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E4M3FN>, tensor<2x256xf8E8M0FNU>, tensor<256xf32>)
func.func @act_quantize_backward_dbias(%x: tensor<64x256xbf16>, %dy: tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E4M3FN>, tensor<2x256xf8E8M0FNU>, tensor<256xf32>) {
  %dst37 = tensor.empty() : tensor<64x256xf8E4M3FN>
  %dst38 = tensor.empty() : tensor<64x8xf8E8M0FNU>
  %dst39 = tensor.empty() : tensor<64x256xf8E4M3FN>
  %dst40 = tensor.empty() : tensor<2x256xf8E8M0FNU>
  %dst41 = tensor.empty() : tensor<256xf32>
  %r, %rs, %c, %cs, %db = fusion.act_quantize #fusion.act<dgelu> %x grad %dy as quant<mxfp8_e4m3, both> via bf16 dbias outs(%dst37, %dst38, %dst39, %dst40, %dst41)
      : (tensor<64x256xbf16>, tensor<64x256xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E4M3FN>, tensor<2x256xf8E8M0FNU>, tensor<256xf32>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E4M3FN>, tensor<2x256xf8E8M0FNU>, tensor<256xf32>)
  return %r, %rs, %c, %cs, %db : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E4M3FN>, tensor<2x256xf8E8M0FNU>, tensor<256xf32>
}

// Identity + dbias is TE's quantize_dbias.
// CHECK-LABEL: func @act_quantize_identity_dbias
// CHECK: fusion.act_quantize #fusion.act<identity> %{{.*}} as quant<fp8_e4m3, rowwise> via bf16 dbias
func.func @act_quantize_identity_dbias(%x: tensor<?x64xbf16>) -> (tensor<?x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>, tensor<64xf32>) {
  %dst42_size = arith.constant 8 : index
  %dst42 = tensor.empty(%dst42_size) : tensor<?x64xf8E4M3FN>
  %dst43 = tensor.empty() : tensor<1xf32>
  %dst44 = tensor.empty() : tensor<1xf32>
  %dst45 = tensor.empty() : tensor<64xf32>
  %d, %si, %a, %db = fusion.act_quantize #fusion.act<identity> %x as quant<fp8_e4m3, rowwise> via bf16 dbias outs(%dst42, %dst43, %dst44, %dst45)
      : (tensor<?x64xbf16>, tensor<?x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>, tensor<64xf32>) -> (tensor<?x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>, tensor<64xf32>)
  return %d, %si, %a, %db : tensor<?x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>, tensor<64xf32>
}

// CHECK-LABEL: func @gated_packed
// CHECK: fusion.gated_act_quantize #fusion.act<swiglu> %{{.*}} as quant<mxfp8_e4m3, rowwise> via bf16 outs({{.*}}) : (tensor<64x512xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>)
func.func @gated_packed(%x: tensor<64x512xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  %dst46 = tensor.empty() : tensor<64x256xf8E4M3FN>
  %dst47 = tensor.empty() : tensor<64x8xf8E8M0FNU>
  %d, %s = fusion.gated_act_quantize #fusion.act<swiglu> %x as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst46, %dst47)
      : (tensor<64x512xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>)
  return %d, %s : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}

// CHECK-LABEL: func @gated_two_inputs_clamped
// CHECK: fusion.gated_act_quantize #fusion.act<clamped_swiglu, limit = 5.000000e+00, offset = 5.000000e-01> %{{.*}}, %{{.*}} as quant<mxfp8_e5m2, colwise> via f32
func.func @gated_two_inputs_clamped(%g: tensor<64x96xf32>, %u: tensor<64x96xf32>) -> (tensor<64x96xf8E5M2>, tensor<2x96xf8E8M0FNU>) {
  %dst48 = tensor.empty() : tensor<64x96xf8E5M2>
  %dst49 = tensor.empty() : tensor<2x96xf8E8M0FNU>
  %d, %s = fusion.gated_act_quantize #fusion.act<clamped_swiglu, offset = 0.5, limit = 5.0> %g, %u as quant<mxfp8_e5m2, colwise> via f32 outs(%dst48, %dst49)
      : (tensor<64x96xf32>, tensor<64x96xf32>, tensor<64x96xf8E5M2>, tensor<2x96xf8E8M0FNU>) -> (tensor<64x96xf8E5M2>, tensor<2x96xf8E8M0FNU>)
  return %d, %s : tensor<64x96xf8E5M2>, tensor<2x96xf8E8M0FNU>
}

// Gated backward: [dgate | dup] with separate scales per half (K = 48: 2 blocks per half).
// CHECK-LABEL: func @gated_backward
// CHECK: fusion.gated_act_quantize #fusion.act<dswiglu> %{{.*}} grad %{{.*}} as quant<mxfp8_e4m3, both> via bf16 outs({{.*}}) : (tensor<32x96xbf16>, tensor<32x48xbf16>, tensor<32x96xf8E4M3FN>, tensor<32x4xf8E8M0FNU>, tensor<32x96xf8E4M3FN>, tensor<1x96xf8E8M0FNU>) -> (tensor<32x96xf8E4M3FN>, tensor<32x4xf8E8M0FNU>, tensor<32x96xf8E4M3FN>, tensor<1x96xf8E8M0FNU>)
func.func @gated_backward(%x: tensor<32x96xbf16>, %dy: tensor<32x48xbf16>) -> (tensor<32x96xf8E4M3FN>, tensor<32x4xf8E8M0FNU>, tensor<32x96xf8E4M3FN>, tensor<1x96xf8E8M0FNU>) {
  %dst50 = tensor.empty() : tensor<32x96xf8E4M3FN>
  %dst51 = tensor.empty() : tensor<32x4xf8E8M0FNU>
  %dst52 = tensor.empty() : tensor<32x96xf8E4M3FN>
  %dst53 = tensor.empty() : tensor<1x96xf8E8M0FNU>
  %r, %rs, %c, %cs = fusion.gated_act_quantize #fusion.act<dswiglu> %x grad %dy as quant<mxfp8_e4m3, both> via bf16 outs(%dst50, %dst51, %dst52, %dst53)
      : (tensor<32x96xbf16>, tensor<32x48xbf16>, tensor<32x96xf8E4M3FN>, tensor<32x4xf8E8M0FNU>, tensor<32x96xf8E4M3FN>, tensor<1x96xf8E8M0FNU>) -> (tensor<32x96xf8E4M3FN>, tensor<32x4xf8E8M0FNU>, tensor<32x96xf8E4M3FN>, tensor<1x96xf8E8M0FNU>)
  return %r, %rs, %c, %cs : tensor<32x96xf8E4M3FN>, tensor<32x4xf8E8M0FNU>, tensor<32x96xf8E4M3FN>, tensor<1x96xf8E8M0FNU>
}

// CHECK-LABEL: func @paired_gdn
// CHECK: fusion.paired_projection %{{.*}}, %{{.*}}, %{{.*}} epilogues(softplus_bias_scale bias %{{.*}} scale %{{.*}}, sigmoid) outs({{.*}}) : (tensor<1x2048xbf16>, tensor<32x2048xbf16>, tensor<32x2048xbf16>, tensor<32xf32>, tensor<32xf32>, tensor<1x32xf32>, tensor<1x32xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>)
func.func @paired_gdn(%x: tensor<1x2048xbf16>, %wa: tensor<32x2048xbf16>, %wb: tensor<32x2048xbf16>, %dt: tensor<32xf32>, %s: tensor<32xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>) {
  %dst54 = tensor.empty() : tensor<1x32xf32>
  %dst55 = tensor.empty() : tensor<1x32xf32>
  %g, %b = fusion.paired_projection %x, %wa, %wb epilogues(softplus_bias_scale bias %dt scale %s, sigmoid) outs(%dst54, %dst55)
      : (tensor<1x2048xbf16>, tensor<32x2048xbf16>, tensor<32x2048xbf16>, tensor<32xf32>, tensor<32xf32>, tensor<1x32xf32>, tensor<1x32xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>)
  return %g, %b : tensor<1x32xf32>, tensor<1x32xf32>
}

// CHECK-LABEL: func @paired_rounded
// CHECK: fusion.paired_projection %{{.*}}, %{{.*}}, %{{.*}} epilogues(round(bf16) softplus_bias_scale bias %{{.*}} scale %{{.*}}, round(f16) sigmoid) outs(
func.func @paired_rounded(%x: tensor<1x2048xbf16>, %wa: tensor<32x2048xbf16>, %wb: tensor<32x2048xbf16>, %dt: tensor<32xf32>, %s: tensor<32xf32>) -> (tensor<1x32xf32>, tensor<1x32xbf16>) {
  %dst54 = tensor.empty() : tensor<1x32xf32>
  %dst55 = tensor.empty() : tensor<1x32xbf16>
  %g, %b = fusion.paired_projection %x, %wa, %wb epilogues(round(bf16) softplus_bias_scale bias %dt scale %s, round(f16) sigmoid) outs(%dst54, %dst55)
      : (tensor<1x2048xbf16>, tensor<32x2048xbf16>, tensor<32x2048xbf16>, tensor<32xf32>, tensor<32xf32>, tensor<1x32xf32>, tensor<1x32xbf16>) -> (tensor<1x32xf32>, tensor<1x32xbf16>)
  return %g, %b : tensor<1x32xf32>, tensor<1x32xbf16>
}

// softplus written log(1 + exp(t)) (vLLM's gating reference).
// CHECK-LABEL: func @paired_softplus_log
// CHECK: epilogues(round(bf16) softplus_log_bias_scale bias %{{.*}} scale %{{.*}}, round(bf16) sigmoid) outs(
func.func @paired_softplus_log(%x: tensor<1x2048xbf16>, %wa: tensor<32x2048xbf16>, %wb: tensor<32x2048xbf16>, %dt: tensor<32xf32>, %s: tensor<32xf32>) -> (tensor<1x32xf32>, tensor<1x32xbf16>) {
  %dst54 = tensor.empty() : tensor<1x32xf32>
  %dst55 = tensor.empty() : tensor<1x32xbf16>
  %g, %b = fusion.paired_projection %x, %wa, %wb epilogues(round(bf16) softplus_log_bias_scale bias %dt scale %s, round(bf16) sigmoid) outs(%dst54, %dst55)
      : (tensor<1x2048xbf16>, tensor<32x2048xbf16>, tensor<32x2048xbf16>, tensor<32xf32>, tensor<32xf32>, tensor<1x32xf32>, tensor<1x32xbf16>) -> (tensor<1x32xf32>, tensor<1x32xbf16>)
  return %g, %b : tensor<1x32xf32>, tensor<1x32xbf16>
}

// A scaled sigmoid (FLA's beta = sigmoid(b) * 2) and a scaled silu.
// CHECK-LABEL: func @paired_sigmoid_scale
// CHECK: epilogues(round(bf16) sigmoid scale %{{.*}}, silu bias %{{.*}} scale %{{.*}}) outs(
func.func @paired_sigmoid_scale(%x: tensor<1x2048xbf16>, %wa: tensor<32x2048xbf16>, %wb: tensor<32x2048xbf16>, %b: tensor<32xf32>, %s: tensor<32xf32>) -> (tensor<1x32xbf16>, tensor<1x32xf32>) {
  %dst58 = tensor.empty() : tensor<1x32xbf16>
  %dst59 = tensor.empty() : tensor<1x32xf32>
  %g, %h = fusion.paired_projection %x, %wa, %wb epilogues(round(bf16) sigmoid scale %s, silu bias %b scale %s) outs(%dst58, %dst59)
      : (tensor<1x2048xbf16>, tensor<32x2048xbf16>, tensor<32x2048xbf16>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<1x32xbf16>, tensor<1x32xf32>) -> (tensor<1x32xbf16>, tensor<1x32xf32>)
  return %g, %h : tensor<1x32xbf16>, tensor<1x32xf32>
}

// softplus in the overflow-safe form (torch.logaddexp(t, 0)).
// CHECK-LABEL: func @paired_softplus_stable
// CHECK: epilogues(softplus_stable_bias_scale bias %{{.*}} scale %{{.*}}, sigmoid) outs(
func.func @paired_softplus_stable(%x: tensor<1x2048xf32>, %wa: tensor<32x2048xf32>, %wb: tensor<32x2048xf32>, %dt: tensor<32xf32>, %s: tensor<32xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>) {
  %dst56 = tensor.empty() : tensor<1x32xf32>
  %dst57 = tensor.empty() : tensor<1x32xf32>
  %g, %b = fusion.paired_projection %x, %wa, %wb epilogues(softplus_stable_bias_scale bias %dt scale %s, sigmoid) outs(%dst56, %dst57)
      : (tensor<1x2048xf32>, tensor<32x2048xf32>, tensor<32x2048xf32>, tensor<32xf32>, tensor<32xf32>, tensor<1x32xf32>, tensor<1x32xf32>) -> (tensor<1x32xf32>, tensor<1x32xf32>)
  return %g, %b : tensor<1x32xf32>, tensor<1x32xf32>
}

// A bias added before the rounding (bf16 Linears with bias=True feeding a
// SwiGLU; a sigmoid of one).
// CHECK-LABEL: func @paired_rounded_with_bias
// CHECK: epilogues(round(bf16, with_bias) bias bias %{{.*}}, round(f16, with_bias) sigmoid bias %{{.*}}) outs(
// CHECK: epilogues(round(bf16, with_bias) bias bias %{{.*}}, round(bf16) bias bias %{{.*}}) gated(#fusion.act<swiglu>) outs(
func.func @paired_rounded_with_bias(%x: tensor<4x64xbf16>, %w0: tensor<32x64xbf16>, %w1: tensor<32x64xbf16>, %b0: tensor<32xbf16>, %b1: tensor<32xf32>) -> (tensor<4x32xbf16>, tensor<4x32xf32>, tensor<4x32xbf16>) {
  %d0 = tensor.empty() : tensor<4x32xbf16>
  %d1 = tensor.empty() : tensor<4x32xf32>
  %a, %b = fusion.paired_projection %x, %w0, %w1 epilogues(round(bf16, with_bias) bias bias %b0, round(f16, with_bias) sigmoid bias %b1) outs(%d0, %d1)
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<32xbf16>, tensor<32xf32>, tensor<4x32xbf16>, tensor<4x32xf32>) -> (tensor<4x32xbf16>, tensor<4x32xf32>)
  %g = fusion.paired_projection %x, %w0, %w1 epilogues(round(bf16, with_bias) bias bias %b0, round(bf16) bias bias %b1) gated(#fusion.act<swiglu>) outs(%d0)
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<32xbf16>, tensor<32xf32>, tensor<4x32xbf16>) -> tensor<4x32xbf16>
  return %a, %b, %g : tensor<4x32xbf16>, tensor<4x32xf32>, tensor<4x32xbf16>
}

// CHECK-LABEL: func @paired_bias_silu_kn
// CHECK: epilogues(bias bias %{{.*}}, silu) kn outs({{.*}}) : (tensor<?x64xf16>, tensor<64x16xf16>, tensor<64x8xf16>, tensor<16xf16>, tensor<?x16xf16>, tensor<?x8xf16>) -> (tensor<?x16xf16>, tensor<?x8xf16>)
func.func @paired_bias_silu_kn(%x: tensor<?x64xf16>, %w0: tensor<64x16xf16>, %w1: tensor<64x8xf16>, %b: tensor<16xf16>) -> (tensor<?x16xf16>, tensor<?x8xf16>) {
  %dst56_size = arith.constant 8 : index
  %dst56 = tensor.empty(%dst56_size) : tensor<?x16xf16>
  %dst57_size = arith.constant 8 : index
  %dst57 = tensor.empty(%dst57_size) : tensor<?x8xf16>
  %y0, %y1 = fusion.paired_projection %x, %w0, %w1 epilogues(bias bias %b, silu) kn outs(%dst56, %dst57)
      : (tensor<?x64xf16>, tensor<64x16xf16>, tensor<64x8xf16>, tensor<16xf16>, tensor<?x16xf16>, tensor<?x8xf16>) -> (tensor<?x16xf16>, tensor<?x8xf16>)
  return %y0, %y1 : tensor<?x16xf16>, tensor<?x8xf16>
}

// CHECK-LABEL: func @paired_sigmoid_silu_bias
// CHECK: epilogues(sigmoid bias %{{.*}}, silu bias %{{.*}}) outs({{.*}}) : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<16x64xbf16>, tensor<8xf32>, tensor<16xbf16>, tensor<4x8xf32>, tensor<4x16xbf16>) -> (tensor<4x8xf32>, tensor<4x16xbf16>)
func.func @paired_sigmoid_silu_bias(%x: tensor<4x64xbf16>, %w0: tensor<8x64xbf16>, %w1: tensor<16x64xbf16>, %b0: tensor<8xf32>, %b1: tensor<16xbf16>) -> (tensor<4x8xf32>, tensor<4x16xbf16>) {
  %dst200 = tensor.empty() : tensor<4x8xf32>
  %dst201 = tensor.empty() : tensor<4x16xbf16>
  %y0, %y1 = fusion.paired_projection %x, %w0, %w1 epilogues(sigmoid bias %b0, silu bias %b1) outs(%dst200, %dst201)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<16x64xbf16>, tensor<8xf32>, tensor<16xbf16>, tensor<4x8xf32>, tensor<4x16xbf16>) -> (tensor<4x8xf32>, tensor<4x16xbf16>)
  return %y0, %y1 : tensor<4x8xf32>, tensor<4x16xbf16>
}

// CHECK-LABEL: func @paired_matvec
// CHECK: epilogues(none, none) outs({{.*}}) : (tensor<128xf32>, tensor<4x128xf32>, tensor<6x128xf32>, tensor<4xf32>, tensor<6xf32>) -> (tensor<4xf32>, tensor<6xf32>)
func.func @paired_matvec(%x: tensor<128xf32>, %w0: tensor<4x128xf32>, %w1: tensor<6x128xf32>) -> (tensor<4xf32>, tensor<6xf32>) {
  %dst58 = tensor.empty() : tensor<4xf32>
  %dst59 = tensor.empty() : tensor<6xf32>
  %y0, %y1 = fusion.paired_projection %x, %w0, %w1 epilogues(none, none) outs(%dst58, %dst59)
      : (tensor<128xf32>, tensor<4x128xf32>, tensor<6x128xf32>, tensor<4xf32>, tensor<6xf32>) -> (tensor<4xf32>, tensor<6xf32>)
  return %y0, %y1 : tensor<4xf32>, tensor<6xf32>
}

// CHECK-LABEL: func @paired_gated_swiglu
// CHECK: epilogues(none, none) gated(#fusion.act<swiglu>) outs({{.*}}) : (tensor<16x256xbf16>, tensor<512x256xbf16>, tensor<512x256xbf16>, tensor<16x512xbf16>) -> tensor<16x512xbf16>
func.func @paired_gated_swiglu(%x: tensor<16x256xbf16>, %wg: tensor<512x256xbf16>, %wu: tensor<512x256xbf16>) -> tensor<16x512xbf16> {
  %dst60 = tensor.empty() : tensor<16x512xbf16>
  %y = fusion.paired_projection %x, %wg, %wu epilogues(none, none) gated(#fusion.act<swiglu>) outs(%dst60)
      : (tensor<16x256xbf16>, tensor<512x256xbf16>, tensor<512x256xbf16>, tensor<16x512xbf16>) -> tensor<16x512xbf16>
  return %y : tensor<16x512xbf16>
}

// Destination style on memrefs (after bufferization): no results.
// CHECK-LABEL: func @quantize_memref
// CHECK: fusion.quantize %{{.*}} as quant<mxfp8_e4m3, both> outs(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<64x64xbf16>, memref<64x64xf8E4M3FN>, memref<64x2xf8E8M0FNU>, memref<64x64xf8E4M3FN>, memref<2x64xf8E8M0FNU>) -> ()
func.func @quantize_memref(%x: memref<64x64xbf16>, %d: memref<64x64xf8E4M3FN>, %s: memref<64x2xf8E8M0FNU>, %cd: memref<64x64xf8E4M3FN>, %cs: memref<2x64xf8E8M0FNU>) {
  fusion.quantize %x as quant<mxfp8_e4m3, both> outs(%d, %s, %cd, %cs)
      : (memref<64x64xbf16>, memref<64x64xf8E4M3FN>, memref<64x2xf8E8M0FNU>, memref<64x64xf8E4M3FN>, memref<2x64xf8E8M0FNU>) -> ()
  return
}

// CHECK-LABEL: func @paired_memref_strided
// CHECK: fusion.paired_projection %{{.*}}, %{{.*}}, %{{.*}} epilogues(none, sigmoid) outs(%{{.*}}, %{{.*}}) : (memref<4x64xf32>, memref<8x64xf32>, memref<8x64xf32>, memref<4x8xf32, strided<[16, 1]>>, memref<4x8xf32, strided<[16, 1], offset: 8>>) -> ()
func.func @paired_memref_strided(%x: memref<4x64xf32>, %w0: memref<8x64xf32>, %w1: memref<8x64xf32>, %y0: memref<4x8xf32, strided<[16, 1]>>, %y1: memref<4x8xf32, strided<[16, 1], offset: 8>>) {
  fusion.paired_projection %x, %w0, %w1 epilogues(none, sigmoid) outs(%y0, %y1)
      : (memref<4x64xf32>, memref<8x64xf32>, memref<8x64xf32>, memref<4x8xf32, strided<[16, 1]>>, memref<4x8xf32, strided<[16, 1], offset: 8>>) -> ()
  return
}

// FP4 data packed two per byte: i8 with the last dimension halved.
// CHECK-LABEL: func @quantize_mxfp4_packed
// CHECK: fusion.quantize %{{.*}} as quant<mxfp4, rowwise> outs(%{{.*}}, %{{.*}}) : (tensor<8x64xbf16>, tensor<8x32xi8>, tensor<8x2xf8E8M0FNU>) -> (tensor<8x32xi8>, tensor<8x2xf8E8M0FNU>)
func.func @quantize_mxfp4_packed(%x: tensor<8x64xbf16>) -> (tensor<8x32xi8>, tensor<8x2xf8E8M0FNU>) {
  %e0 = tensor.empty() : tensor<8x32xi8>
  %e1 = tensor.empty() : tensor<8x2xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp4, rowwise> outs(%e0, %e1)
      : (tensor<8x64xbf16>, tensor<8x32xi8>, tensor<8x2xf8E8M0FNU>) -> (tensor<8x32xi8>, tensor<8x2xf8E8M0FNU>)
  return %d, %s : tensor<8x32xi8>, tensor<8x2xf8E8M0FNU>
}

/// FP8 per tensor, current scaling with an amax epsilon (printed as the
/// shortest form of its f32 value) and power-of-two scales.
// CHECK-LABEL: func @quantize_fp8_epsilon_pow2
// CHECK: as quant<fp8_e4m3, rowwise, epsilon = 1.0e-12, pow2_scale = true>
func.func @quantize_fp8_epsilon_pow2(%x: tensor<16x64xbf16>) -> (tensor<16x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) {
  %e0 = tensor.empty() : tensor<16x64xf8E4M3FN>
  %e1 = tensor.empty() : tensor<1xf32>
  %e2 = tensor.empty() : tensor<1xf32>
  %d, %s, %a = fusion.quantize %x as quant<fp8_e4m3, rowwise, epsilon = 9.99999996e-13, pow2_scale = true> outs(%e0, %e1, %e2)
      : (tensor<16x64xbf16>, tensor<16x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<16x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return %d, %s, %a : tensor<16x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>
}

// The FFN front in one op: a gated pair whose value is quantized.
// CHECK-LABEL: func @paired_quantize
// CHECK: %{{.*}}:2 = fusion.paired_projection %{{.*}}, %{{.*}}, %{{.*}} epilogues(round(bf16) none, round(bf16) none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<mxfp8_e4m3, rowwise> via bf16) outs(%{{.*}}, %{{.*}}) : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<4x32xf8E4M3FN>, tensor<4x1xf8E8M0FNU>) -> (tensor<4x32xf8E4M3FN>, tensor<4x1xf8E8M0FNU>)
func.func @paired_quantize(%x: tensor<4x64xbf16>, %wg: tensor<32x64xbf16>, %wu: tensor<32x64xbf16>) -> (tensor<4x32xf8E4M3FN>, tensor<4x1xf8E8M0FNU>) {
  %d0 = tensor.empty() : tensor<4x32xf8E4M3FN>
  %d1 = tensor.empty() : tensor<4x1xf8E8M0FNU>
  %q:2 = fusion.paired_projection %x, %wg, %wu epilogues(round(bf16) none, round(bf16) none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<mxfp8_e4m3, rowwise> via bf16) outs(%d0, %d1)
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<4x32xf8E4M3FN>, tensor<4x1xf8E8M0FNU>) -> (tensor<4x32xf8E4M3FN>, tensor<4x1xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<4x32xf8E4M3FN>, tensor<4x1xf8E8M0FNU>
}

// FP8 delayed scaling: the quantizer's scale inside the clause.
// CHECK-LABEL: func @paired_quantize_delayed
// CHECK: %{{.*}}:3 = fusion.paired_projection %{{.*}}, %{{.*}}, %{{.*}} epilogues(round(bf16) none, round(bf16) none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<fp8_e4m3, rowwise, scaling = delayed> via bf16 scale %{{.*}}) outs(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<1xf32>, tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
func.func @paired_quantize_delayed(%x: tensor<4x64xbf16>, %wg: tensor<32x64xbf16>, %wu: tensor<32x64xbf16>, %s: tensor<1xf32>)
    -> (tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) {
  %d0 = tensor.empty() : tensor<4x32xf8E4M3FN>
  %d1 = tensor.empty() : tensor<1xf32>
  %d2 = tensor.empty() : tensor<1xf32>
  %q:3 = fusion.paired_projection %x, %wg, %wu epilogues(round(bf16) none, round(bf16) none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<fp8_e4m3, rowwise, scaling = delayed> via bf16 scale %s) outs(%d0, %d1, %d2)
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<1xf32>, tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return %q#0, %q#1, %q#2 : tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>
}

// NVFP4 of an f32 value, codes packed two per byte (i8), with the tensor
// amax; on memrefs after bufferization.
// CHECK-LABEL: func @paired_quantize_nvfp4_memref
// CHECK: fusion.paired_projection %{{.*}} gated(#fusion.act<geglu>) quantize(#fusion.quant<nvfp4, rowwise> via f32) outs(
func.func @paired_quantize_nvfp4_memref(%x: memref<2x64xf32>, %wg: memref<32x64xf32>, %wu: memref<32x64xf32>,
                                        %d: memref<2x16xi8>, %s: memref<2x2xf8E4M3FN>, %a: memref<1xf32>) {
  fusion.paired_projection %x, %wg, %wu epilogues(none, none) gated(#fusion.act<geglu>) quantize(#fusion.quant<nvfp4, rowwise> via f32) outs(%d, %s, %a)
      : (memref<2x64xf32>, memref<32x64xf32>, memref<32x64xf32>, memref<2x16xi8>, memref<2x2xf8E4M3FN>, memref<1xf32>) -> ()
  return
}

// FP8 block scaling: one f32 decode scale per 1x128 group (the default
// block, not printed), per row (1x64 here), an amax floor and UE8M0 scales;
// a 3-d input keeps its leading dimensions in the scales; the multiplier
// max / amax written as the scale (torchao.float8's rowwise scaling).
// CHECK-LABEL: func @fp8_block
// CHECK: fusion.quantize %{{.*}} as quant<fp8_block_e4m3, rowwise, epsilon = 1.0e-10> outs({{.*}}) : (tensor<4x300xbf16>, tensor<4x300xf8E4M3FN>, tensor<4x3xf32>)
// CHECK: fusion.quantize %{{.*}} as quant<fp8_block_e5m2, rowwise, block = 1x64, pow2_scale = true> outs({{.*}}) : (tensor<2x3x64xf32>, tensor<2x3x64xf8E5M2>, tensor<2x3x1xf32>)
// CHECK: fusion.gated_act_quantize #fusion.act<swiglu> %{{.*}} as quant<fp8_block_e4m3, rowwise, recipe = multiplier> via bf16
func.func @fp8_block(%x: tensor<4x300xbf16>, %y: tensor<2x3x64xf32>, %gu: tensor<4x512xbf16>)
    -> (tensor<4x300xf8E4M3FN>, tensor<4x3xf32>, tensor<2x3x64xf8E5M2>, tensor<2x3x1xf32>,
        tensor<4x256xf8E4M3FN>, tensor<4x2xf32>) {
  %d0 = tensor.empty() : tensor<4x300xf8E4M3FN>
  %s0 = tensor.empty() : tensor<4x3xf32>
  %a, %b = fusion.quantize %x as quant<fp8_block_e4m3, rowwise, block = 1x128, epsilon = 1.0e-10> outs(%d0, %s0)
      : (tensor<4x300xbf16>, tensor<4x300xf8E4M3FN>, tensor<4x3xf32>) -> (tensor<4x300xf8E4M3FN>, tensor<4x3xf32>)
  %d1 = tensor.empty() : tensor<2x3x64xf8E5M2>
  %s1 = tensor.empty() : tensor<2x3x1xf32>
  %c, %d = fusion.quantize %y as quant<fp8_block_e5m2, rowwise, block = 1x64, pow2_scale = true> outs(%d1, %s1)
      : (tensor<2x3x64xf32>, tensor<2x3x64xf8E5M2>, tensor<2x3x1xf32>) -> (tensor<2x3x64xf8E5M2>, tensor<2x3x1xf32>)
  %d2 = tensor.empty() : tensor<4x256xf8E4M3FN>
  %s2 = tensor.empty() : tensor<4x2xf32>
  %e, %f = fusion.gated_act_quantize #fusion.act<swiglu> %gu as quant<fp8_block_e4m3, rowwise, recipe = multiplier> via bf16 outs(%d2, %s2)
      : (tensor<4x512xbf16>, tensor<4x256xf8E4M3FN>, tensor<4x2xf32>) -> (tensor<4x256xf8E4M3FN>, tensor<4x2xf32>)
  return %a, %b, %c, %d, %e, %f : tensor<4x300xf8E4M3FN>, tensor<4x3xf32>, tensor<2x3x64xf8E5M2>, tensor<2x3x1xf32>, tensor<4x256xf8E4M3FN>, tensor<4x2xf32>
}

// 2D FP8 blocks (DeepSeek-V3 128x128 weight tiles): scales
// [ceil(M / 128), ceil(N / 128)], partial tiles at both edges.
// CHECK-LABEL: func @fp8_block_2d
// CHECK: fusion.quantize %{{.*}} as quant<fp8_block_e4m3, rowwise, block = 128x128> outs({{.*}}) : (tensor<300x260xbf16>, tensor<300x260xf8E4M3FN>, tensor<3x3xf32>)
func.func @fp8_block_2d(%w: tensor<300x260xbf16>) -> (tensor<300x260xf8E4M3FN>, tensor<3x3xf32>) {
  %d = tensor.empty() : tensor<300x260xf8E4M3FN>
  %s = tensor.empty() : tensor<3x3xf32>
  %a, %b = fusion.quantize %w as quant<fp8_block_e4m3, rowwise, block = 128x128> outs(%d, %s)
      : (tensor<300x260xbf16>, tensor<300x260xf8E4M3FN>, tensor<3x3xf32>) -> (tensor<300x260xf8E4M3FN>, tensor<3x3xf32>)
  return %a, %b : tensor<300x260xf8E4M3FN>, tensor<3x3xf32>
}
