// RUN: fusion-opt %s -split-input-file -verify-diagnostics

// One test per diagnostic of the fusion dialect: attribute verifiers and
// parsers, then the op verifiers.

// expected-error @+1 {{format 'mxfp8_e4m3' uses blocks of 1x32, not 1x16}}
func.func private @f() attributes {q = #fusion.quant<mxfp8_e4m3, rowwise, block = 1x16>}

// -----

// expected-error @+1 {{format 'nvfp4' uses blocks of 1x16 or 16x16, not 1x32}}
func.func private @f() attributes {q = #fusion.quant<nvfp4, rowwise, block = 1x32>}

// -----

// expected-error @+1 {{format 'fp8_e4m3' has one scale per tensor; its block must be 'tensor'}}
func.func private @f() attributes {q = #fusion.quant<fp8_e4m3, rowwise, block = 1x32>}

// -----

// expected-error @+1 {{scale rounding 'floor' applies only to MX formats, not 'nvfp4'}}
func.func private @f() attributes {q = #fusion.quant<nvfp4, rowwise, rounding = floor>}

// -----

// expected-error @+1 {{scale rounding 'ceil' applies only to MX formats, not 'fp8_e4m3'}}
func.func private @f() attributes {q = #fusion.quant<fp8_e4m3, rowwise, rounding = ceil>}

// -----

// expected-error @+1 {{scale rounding 'even' applies only to MX formats, not 'nvfp4'}}
func.func private @f() attributes {q = #fusion.quant<nvfp4, rowwise, rounding = even>}

// -----

// expected-error @+1 {{stochastic rounding is only supported for 'nvfp4', not 'mxfp4'}}
func.func private @f() attributes {q = #fusion.quant<mxfp4, rowwise, elem = stochastic>}

// -----

// expected-error @+1 {{delayed scaling applies only to FP8 per-tensor formats, not 'mxfp8_e4m3'}}
func.func private @f() attributes {q = #fusion.quant<mxfp8_e4m3, rowwise, scaling = delayed>}

// -----

// expected-error @+1 {{format 'fp8_e5m2' has no block scales to swizzle}}
func.func private @f() attributes {q = #fusion.quant<fp8_e5m2, rowwise, scales = swizzled>}

// -----

// expected-error @+1 {{the colwise copy of 'nvfp4' is always transposed}}
func.func private @f() attributes {q = #fusion.quant<nvfp4, both, colwise = same>}

// -----

// expected-error @+1 {{unknown value 'mxfp9' for 'format'}}
func.func private @f() attributes {q = #fusion.quant<mxfp9, rowwise>}

// -----

// expected-error @+1 {{unknown value 'diagonal' for 'direction'}}
func.func private @f() attributes {q = #fusion.quant<mxfp8_e4m3, diagonal>}

// -----

// expected-error @+1 {{option 'nan' given twice}}
func.func private @f() attributes {q = #fusion.quant<mxfp8_e4m3, rowwise, nan = ignore, nan = propagate>}

// -----

// expected-error @+1 {{block must be RxC or 'tensor'}}
func.func private @f() attributes {q = #fusion.quant<mxfp8_e4m3, rowwise, block = 1x32x2>}

// -----

// expected-error @+1 {{unknown quantization option 'blocksize' (expected block, rounding, nan, colwise, scales, elem, scaling, zero_scale, epsilon, pow2_scale or recipe)}}
func.func private @f() attributes {q = #fusion.quant<mxfp8_e4m3, rowwise, blocksize = 1x32>}

// -----

// expected-error @+1 {{'limit' and 'offset' apply only to 'clamped_swiglu', not 'swiglu'}}
func.func private @f() attributes {a = #fusion.act<swiglu, limit = 3.0>}

// -----

// expected-error @+1 {{'alpha' applies only to 'qgelu', 'qgeglu' and 'clamped_swiglu', not 'silu'}}
func.func private @f() attributes {a = #fusion.act<silu, alpha = 2.0>}

// -----

// expected-error @+1 {{'limit' of 'clamped_swiglu' must be positive}}
func.func private @f() attributes {a = #fusion.act<clamped_swiglu, limit = -1.0>}

// -----

// expected-error @+1 {{activation parameters must be finite}}
func.func private @f() attributes {a = #fusion.act<qgelu, alpha = 0x7FF0000000000000>}

// -----

// expected-error @+1 {{unknown activation 'mish'}}
func.func private @f() attributes {a = #fusion.act<mish>}

// -----

// expected-error @+1 {{parameter 'alpha' given twice}}
func.func private @f() attributes {a = #fusion.act<qgelu, alpha = 1.0, alpha = 2.0>}

// -----

// expected-error @+1 {{unknown activation parameter 'beta' (expected limit, offset, alpha or mask)}}
func.func private @f() attributes {a = #fusion.act<qgelu, beta = 1.0>}

// -----

// expected-error @+1 {{'mask' applies only to a backward activation}}
func.func private @f() attributes {a = #fusion.act<relu, mask = select>}

// -----

// expected-error @+1 {{'mask = select' applies only to relu, srelu, reglu, sreglu and clamped_swiglu, whose derivatives have a mask, not 'gelu'}}
func.func private @f() attributes {a = #fusion.act<dgelu, mask = select>}

// -----

// expected-error @+1 {{unknown mask 'zero' (expected multiply or select)}}
func.func private @f() attributes {a = #fusion.act<dreglu, mask = zero>}

// -----

func.func @f(%x: tensor<f32>) {
  %dst0 = tensor.empty() : tensor<f8E4M3FN>
  %dst1 = tensor.empty() : tensor<1xf32>
  %dst2 = tensor.empty() : tensor<1xf32>
  // expected-error @+1 {{a quantizer needs an input of rank >= 1}}
  %r:3 = fusion.quantize %x as quant<fp8_e4m3, rowwise> outs(%dst0, %dst1, %dst2)
      : (tensor<f32>, tensor<f8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<f8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return
}

// -----

func.func @f(%x: tensor<2x64x64xbf16>) {
  %dst3 = tensor.empty() : tensor<2x64x64xf8E4M3FN>
  %dst4 = tensor.empty() : tensor<2x64xf8E8M0FNU>
  // expected-error @+1 {{this scheme needs a rank-2 input, got rank 3}}
  %r:2 = fusion.quantize %x as quant<mxfp8_e4m3, colwise> outs(%dst3, %dst4)
      : (tensor<2x64x64xbf16>, tensor<2x64x64xf8E4M3FN>, tensor<2x64xf8E8M0FNU>) -> (tensor<2x64x64xf8E4M3FN>, tensor<2x64xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>) {
  %dst5 = tensor.empty() : tensor<64x64xf8E4M3FN>
  // expected-error @+1 {{has 1 destinations but the scheme implies 2 (rowwise data, rowwise scales)}}
  %r = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%dst5)
      : (tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>) -> (tensor<64x64xf8E4M3FN>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>) {
  %dst6 = tensor.empty() : tensor<64x64xf8E5M2>
  %dst7 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  // expected-error @+1 {{result #0 (rowwise data) has element type 'f8E5M2' but the scheme implies 'f8E4M3FN'}}
  %r:2 = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%dst6, %dst7)
      : (tensor<64x64xbf16>, tensor<64x64xf8E5M2>, tensor<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E5M2>, tensor<64x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>) {
  %dst8 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst9 = tensor.empty() : tensor<64x4xf8E8M0FNU>
  // expected-error @+1 {{result #1 (rowwise scales) has shape 64x4 but the scheme implies 64x2}}
  %r:2 = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%dst8, %dst9)
      : (tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x4xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x4xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>) {
  %dst10 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst11 = tensor.empty() : tensor<1xf32>
  %dst12 = tensor.empty() : tensor<1xf32>
  // expected-error @+1 {{delayed scaling needs a 'scale' operand}}
  %r:3 = fusion.quantize %x as quant<fp8_e4m3, rowwise, scaling = delayed> outs(%dst10, %dst11, %dst12)
      : (tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<64x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>, %s: tensor<1xf32>) {
  %dst13 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst14 = tensor.empty() : tensor<1xf32>
  %dst15 = tensor.empty() : tensor<1xf32>
  // expected-error @+1 {{'scale' operand is only used by FP8 delayed scaling}}
  %r:3 = fusion.quantize %x scale %s as quant<fp8_e4m3, rowwise> outs(%dst13, %dst14, %dst15)
      : (tensor<64x64xbf16>, tensor<1xf32>, tensor<64x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<64x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>, %s: tensor<f32>) {
  %dst16 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst17 = tensor.empty() : tensor<1xf32>
  %dst18 = tensor.empty() : tensor<1xf32>
  // expected-error @+1 {{'scale' operand must be tensor<1xf32>}}
  %r:3 = fusion.quantize %x scale %s as quant<fp8_e4m3, rowwise, scaling = delayed> outs(%dst16, %dst17, %dst18)
      : (tensor<64x64xbf16>, tensor<f32>, tensor<64x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<64x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>) {
  %dst19 = tensor.empty() : tensor<64x64xf4E2M1FN>
  %dst20 = tensor.empty() : tensor<64x4xf8E4M3FN>
  %dst21 = tensor.empty() : tensor<1xf32>
  // expected-error @+1 {{stochastic rounding needs an 'rng' operand (seed, offset)}}
  %r:3 = fusion.quantize %x as quant<nvfp4, rowwise, elem = stochastic> outs(%dst19, %dst20, %dst21)
      : (tensor<64x64xbf16>, tensor<64x64xf4E2M1FN>, tensor<64x4xf8E4M3FN>, tensor<1xf32>) -> (tensor<64x64xf4E2M1FN>, tensor<64x4xf8E4M3FN>, tensor<1xf32>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>, %rng: tensor<2xi64>) {
  %dst22 = tensor.empty() : tensor<64x64xf4E2M1FN>
  %dst23 = tensor.empty() : tensor<64x4xf8E4M3FN>
  %dst24 = tensor.empty() : tensor<1xf32>
  // expected-error @+1 {{'rng' operand is only used by stochastic rounding}}
  %r:3 = fusion.quantize %x rng %rng as quant<nvfp4, rowwise> outs(%dst22, %dst23, %dst24)
      : (tensor<64x64xbf16>, tensor<2xi64>, tensor<64x64xf4E2M1FN>, tensor<64x4xf8E4M3FN>, tensor<1xf32>) -> (tensor<64x64xf4E2M1FN>, tensor<64x4xf8E4M3FN>, tensor<1xf32>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>, %rng: tensor<2xi32>) {
  %dst25 = tensor.empty() : tensor<64x64xf4E2M1FN>
  %dst26 = tensor.empty() : tensor<64x4xf8E4M3FN>
  %dst27 = tensor.empty() : tensor<1xf32>
  // expected-error @+1 {{'rng' operand must be tensor<2xi64>}}
  %r:3 = fusion.quantize %x rng %rng as quant<nvfp4, rowwise, elem = stochastic> outs(%dst25, %dst26, %dst27)
      : (tensor<64x64xbf16>, tensor<2xi32>, tensor<64x64xf4E2M1FN>, tensor<64x4xf8E4M3FN>, tensor<1xf32>) -> (tensor<64x64xf4E2M1FN>, tensor<64x4xf8E4M3FN>, tensor<1xf32>)
  return
}

// -----

func.func @f(%x: tensor<64x64xf64>) {
  %dst28 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst29 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  // expected-error @+1 {{input element type must be bf16, f16 or f32, got 'f64'}}
  %r:2 = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%dst28, %dst29)
      : (tensor<64x64xf64>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>) {
  %dst30 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst31 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  // expected-error @+1 {{gated activation 'swiglu' needs fusion.gated_act_quantize}}
  %r:2 = fusion.act_quantize #fusion.act<swiglu> %x as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst30, %dst31)
      : (tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>) {
  %dst32 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst33 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  // expected-error @+1 {{backward activation 'dsilu' needs a 'grad' operand}}
  %r:2 = fusion.act_quantize #fusion.act<dsilu> %x as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst32, %dst33)
      : (tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>, %g: tensor<64x64xbf16>) {
  %dst34 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst35 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  // expected-error @+1 {{forward activation 'silu' takes no 'grad' operand}}
  %r:2 = fusion.act_quantize #fusion.act<silu> %x grad %g as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst34, %dst35)
      : (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>, %g: tensor<64x32xbf16>) {
  %dst36 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst37 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  // expected-error @+1 {{'grad' shape 64x32 differs from input shape 64x64}}
  %r:2 = fusion.act_quantize #fusion.act<dsilu> %x grad %g as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst36, %dst37)
      : (tensor<64x64xbf16>, tensor<64x32xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>, %g: tensor<64x64xi8>) {
  %dst38 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst39 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  // expected-error @+1 {{grad element type must be bf16, f16 or f32, got 'i8'}}
  %r:2 = fusion.act_quantize #fusion.act<dsilu> %x grad %g as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst38, %dst39)
      : (tensor<64x64xbf16>, tensor<64x64xi8>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>) {
  %dst40 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst41 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  // expected-error @+1 {{intermediate element type must be bf16, f16 or f32, got 'f8E4M3FN'}}
  %r:2 = fusion.act_quantize #fusion.act<silu> %x as quant<mxfp8_e4m3, rowwise> via f8E4M3FN outs(%dst40, %dst41)
      : (tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>) {
  %dst42 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst43 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  %dst44 = tensor.empty() : tensor<64xf32>
  // expected-error @+1 {{dbias needs a backward activation or identity, not 'gelu'}}
  %r:3 = fusion.act_quantize #fusion.act<gelu> %x as quant<mxfp8_e4m3, rowwise> via bf16 dbias outs(%dst42, %dst43, %dst44)
      : (tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<64xf32>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<64xf32>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>, %g: tensor<64x64xbf16>) {
  %dst45 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst46 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  %dst47 = tensor.empty() : tensor<32xf32>
  // expected-error @+1 {{result #2 (dbias) has shape 32 but the scheme implies 64}}
  %r:3 = fusion.act_quantize #fusion.act<dgelu> %x grad %g as quant<mxfp8_e4m3, rowwise> via bf16 dbias outs(%dst45, %dst46, %dst47)
      : (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<32xf32>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<32xf32>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>) {
  %dst48 = tensor.empty() : tensor<64x32xf8E4M3FN>
  %dst49 = tensor.empty() : tensor<64x1xf8E8M0FNU>
  // expected-error @+1 {{activation 'gelu' is not gated; use fusion.act_quantize}}
  %r:2 = fusion.gated_act_quantize #fusion.act<gelu> %x as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst48, %dst49)
      : (tensor<64x64xbf16>, tensor<64x32xf8E4M3FN>, tensor<64x1xf8E8M0FNU>) -> (tensor<64x32xf8E4M3FN>, tensor<64x1xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>) {
  %dst50 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst51 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  // expected-error @+1 {{backward activation 'dswiglu' needs a 'grad' operand}}
  %r:2 = fusion.gated_act_quantize #fusion.act<dswiglu> %x as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst50, %dst51)
      : (tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>, %g: tensor<64x32xbf16>) {
  %dst52 = tensor.empty() : tensor<64x32xf8E4M3FN>
  %dst53 = tensor.empty() : tensor<64x1xf8E8M0FNU>
  // expected-error @+1 {{forward activation 'swiglu' takes no 'grad' operand}}
  %r:2 = fusion.gated_act_quantize #fusion.act<swiglu> %x grad %g as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst52, %dst53)
      : (tensor<64x64xbf16>, tensor<64x32xbf16>, tensor<64x32xf8E4M3FN>, tensor<64x1xf8E8M0FNU>) -> (tensor<64x32xf8E4M3FN>, tensor<64x1xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>) {
  %dst54 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst55 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  // expected-error @+1 {{takes one packed [gate | up] input or two inputs (gate, up), got 3}}
  %r:2 = fusion.gated_act_quantize #fusion.act<swiglu> %x, %x, %x as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst54, %dst55)
      : (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>, %y: tensor<64x32xbf16>) {
  %dst56 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst57 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  // expected-error @+1 {{gate and up inputs must have the same shape and element type, got 'tensor<64x64xbf16>' and 'tensor<64x32xbf16>'}}
  %r:2 = fusion.gated_act_quantize #fusion.act<swiglu> %x, %y as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst56, %dst57)
      : (tensor<64x64xbf16>, tensor<64x32xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x63xbf16>) {
  %dst58 = tensor.empty() : tensor<64x31xf8E4M3FN>
  %dst59 = tensor.empty() : tensor<64x1xf8E8M0FNU>
  // expected-error @+1 {{packed gated input width 63 is odd; it must hold [gate | up]}}
  %r:2 = fusion.gated_act_quantize #fusion.act<swiglu> %x as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst58, %dst59)
      : (tensor<64x63xbf16>, tensor<64x31xf8E4M3FN>, tensor<64x1xf8E8M0FNU>) -> (tensor<64x31xf8E4M3FN>, tensor<64x1xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>, %g: tensor<64x64xbf16>) {
  %dst60 = tensor.empty() : tensor<64x64xf8E4M3FN>
  %dst61 = tensor.empty() : tensor<64x2xf8E8M0FNU>
  // expected-error @+1 {{'grad' shape 64x64 must equal one half of the gated input, 64x32}}
  %r:2 = fusion.gated_act_quantize #fusion.act<dswiglu> %x grad %g as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst60, %dst61)
      : (tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x96xbf16>, %g: tensor<64x48xbf16>) {
  %dst62 = tensor.empty() : tensor<64x96xf8E4M3FN>
  %dst63 = tensor.empty() : tensor<64x3xf8E8M0FNU>
  // expected-error @+1 {{result #1 (rowwise scales) has shape 64x3 but the scheme implies 64x4}}
  %r:2 = fusion.gated_act_quantize #fusion.act<dswiglu> %x grad %g as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst62, %dst63)
      : (tensor<64x96xbf16>, tensor<64x48xbf16>, tensor<64x96xf8E4M3FN>, tensor<64x3xf8E8M0FNU>) -> (tensor<64x96xf8E4M3FN>, tensor<64x3xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) {
  %dst0 = tensor.empty() : tensor<4x8xf32>
  %dst1 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{round('f32') of epilogue 1: the accumulator rounds to bf16 or f16}}
  %a, %b = fusion.paired_projection %x, %w, %w epilogues(none, round(f32) sigmoid) outs(%dst0, %dst1)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) {
  %dst0 = tensor.empty() : tensor<4x8xf32>
  %dst1 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{round('bf16', with_bias) of epilogue 0 needs a bias operand}}
  %a, %b = fusion.paired_projection %x, %w, %w epilogues(round(bf16, with_bias) sigmoid, none) outs(%dst0, %dst1)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) {
  %dst0 = tensor.empty() : tensor<4x8xf32>
  %dst1 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{expected 'with_bias'}}
  %a, %b = fusion.paired_projection %x, %w, %w epilogues(round(bf16, after) sigmoid, none) outs(%dst0, %dst1)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %b: tensor<8xf32>) {
  %dst0 = tensor.empty() : tensor<4x8xf32>
  %dst1 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{epilogue 0: 'with_bias' needs a round(type)}}
  %a, %c = "fusion.paired_projection"(%x, %w, %w, %b, %dst0, %dst1) <{epilogue0 = #fusion<epilogue bias>, epilogue1 = #fusion<epilogue none>, round_with_bias0, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 2>}>
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) {
  %dst0 = tensor.empty() : tensor<4x8xf32>
  %dst1 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{expected non-function type}}
  %a, %b = fusion.paired_projection %x, %w, %w epilogues(round() none, none) outs(%dst0, %dst1)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<2x4x64xbf16>, %w: tensor<8x64xbf16>) {
  %dst64 = tensor.empty() : tensor<4x8xf32>
  %dst65 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{lhs must be [K] or [N, K], got rank 3}}
  %a, %b = fusion.paired_projection %x, %w, %w epilogues(none, none) outs(%dst64, %dst65)
      : (tensor<2x4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xi8>, %w: tensor<8x64xi8>) {
  %dst66 = tensor.empty() : tensor<4x8xf32>
  %dst67 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{lhs must have a float element type}}
  %a, %b = fusion.paired_projection %x, %w, %w epilogues(none, none) outs(%dst66, %dst67)
      : (tensor<4x64xi8>, tensor<8x64xi8>, tensor<8x64xi8>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %v: tensor<64xbf16>) {
  %dst68 = tensor.empty() : tensor<4x8xf32>
  %dst69 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{rhs1 must be a rank-2 weight or rank-3 head groups of rows, got rank 1}}
  %a, %b = fusion.paired_projection %x, %w, %v epilogues(none, none) outs(%dst68, %dst69)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<64xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

// Head groups [G, w, K] of rows: H = G * w rows (here 4 * 3 = 12, not 8).
func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %v: tensor<4x3x64xbf16>) {
  %dst = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{result #1 has shape 4x8 but expected 4x12}}
  %a, %b = fusion.paired_projection %x, %w, %v epilogues(none, none) outs(%dst, %dst)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<4x3x64xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %v: tensor<4x2x32xbf16>) {
  %dst = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{rhs1 has K = 32 but lhs has K = 64}}
  %a, %b = fusion.paired_projection %x, %w, %v epilogues(none, none) outs(%dst, %dst)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<4x2x32xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %v: tensor<8x64xf16>) {
  %dst70 = tensor.empty() : tensor<4x8xf32>
  %dst71 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{rhs1 element type 'f16' differs from lhs element type 'bf16'}}
  %a, %b = fusion.paired_projection %x, %w, %v epilogues(none, none) outs(%dst70, %dst71)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x32xbf16>) {
  %dst72 = tensor.empty() : tensor<4x8xf32>
  %dst73 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{rhs0 has K = 32 but lhs has K = 64}}
  %a, %b = fusion.paired_projection %x, %w, %w epilogues(none, none) outs(%dst72, %dst73)
      : (tensor<4x64xbf16>, tensor<8x32xbf16>, tensor<8x32xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) {
  %dst74 = tensor.empty() : tensor<4x8xf32>
  %dst75 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{epilogue 0 ('bias') needs a bias operand}}
  %a, %b = fusion.paired_projection %x, %w, %w epilogues(bias, none) outs(%dst74, %dst75)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %b: tensor<8xf32>) {
  %dst76 = tensor.empty() : tensor<4x8xf32>
  %dst77 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{epilogue 1 ('none') takes no scale operand}}
  %a, %c = fusion.paired_projection %x, %w, %w epilogues(none, none scale %b) outs(%dst76, %dst77)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %b: tensor<16xf32>) {
  %dst200 = tensor.empty() : tensor<4x8xf32>
  %dst201 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{bias of epilogue 0 must have shape [8], got 16}}
  %a, %c = fusion.paired_projection %x, %w, %w epilogues(silu bias %b, none) outs(%dst200, %dst201)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<16xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %b: tensor<8xf32>) {
  %dst202 = tensor.empty() : tensor<4x8xf32>
  %dst203 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{epilogue 1 ('none') takes no bias operand}}
  %a, %c = fusion.paired_projection %x, %w, %w epilogues(silu bias %b, none bias %b) outs(%dst202, %dst203)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %b: tensor<8xf32>) {
  %dst78 = tensor.empty() : tensor<4x8xf32>
  %dst79 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{epilogue 0 ('softplus_bias_scale') needs a scale operand}}
  %a, %c = fusion.paired_projection %x, %w, %w epilogues(softplus_bias_scale bias %b, none) outs(%dst78, %dst79)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %s: tensor<8xf32>) {
  %dst78 = tensor.empty() : tensor<4x8xf32>
  %dst79 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{epilogue 1 ('softplus_log_bias_scale') needs a bias operand}}
  %a, %c = fusion.paired_projection %x, %w, %w epilogues(none, softplus_log_bias_scale scale %s) outs(%dst78, %dst79)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %b: tensor<8xf32>) {
  %dst78 = tensor.empty() : tensor<4x8xf32>
  %dst79 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{epilogue 0 ('softplus_stable_bias_scale') needs a scale operand}}
  %a, %c = fusion.paired_projection %x, %w, %w epilogues(softplus_stable_bias_scale bias %b, none) outs(%dst78, %dst79)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %b: tensor<8xf32>) {
  %dst80 = tensor.empty() : tensor<4x8xf32>
  %dst81 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{epilogue 0 ('bias') takes no scale operand}}
  %a, %c = fusion.paired_projection %x, %w, %w epilogues(bias bias %b scale %b, none) outs(%dst80, %dst81)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %b: tensor<16xf32>) {
  %dst82 = tensor.empty() : tensor<4x8xf32>
  %dst83 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{bias of epilogue 0 must have shape [8], got 16}}
  %a, %c = fusion.paired_projection %x, %w, %w epilogues(bias bias %b, none) outs(%dst82, %dst83)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<16xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %b: tensor<8xi32>) {
  %dst84 = tensor.empty() : tensor<4x8xf32>
  %dst85 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{bias of epilogue 0 must have a float element type}}
  %a, %c = fusion.paired_projection %x, %w, %w epilogues(bias bias %b, none) outs(%dst84, %dst85)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8xi32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) {
  %dst86 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{'gated' must be a forward gated activation, got 'dswiglu'}}
  %a = fusion.paired_projection %x, %w, %w epilogues(none, none) gated(#fusion.act<dswiglu>) outs(%dst86)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) {
  %dst87 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{a gated paired projection takes only 'none' or 'bias' epilogues, got 'sigmoid'}}
  %a = fusion.paired_projection %x, %w, %w epilogues(sigmoid, none) gated(#fusion.act<swiglu>) outs(%dst87)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %v: tensor<16x64xbf16>) {
  %dst88 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{gate and up projections must have the same width, got 8 and 16}}
  %a = fusion.paired_projection %x, %w, %v epilogues(none, none) gated(#fusion.act<swiglu>) outs(%dst88)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<16x64xbf16>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) {
  %dst89 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{has 1 destinations but two projections return 2}}
  %a = fusion.paired_projection %x, %w, %w epilogues(none, none) outs(%dst89)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) {
  %dst90 = tensor.empty() : tensor<4x8xf32>
  %dst91 = tensor.empty() : tensor<4x8xi32>
  // expected-error @+1 {{result #1 must have a float element type}}
  %a, %b = fusion.paired_projection %x, %w, %w epilogues(none, none) outs(%dst90, %dst91)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<4x8xf32>, tensor<4x8xi32>) -> (tensor<4x8xf32>, tensor<4x8xi32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) {
  %dst92 = tensor.empty() : tensor<8x4xf32>
  %dst93 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{result #0 has shape 8x4 but expected 4x8}}
  %a, %b = fusion.paired_projection %x, %w, %w epilogues(none, none) outs(%dst92, %dst93)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8x4xf32>, tensor<4x8xf32>) -> (tensor<8x4xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) {
  %dst94 = tensor.empty() : tensor<4x8xf32>
  %dst95 = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{unknown epilogue 'tanh' (expected none, bias, sigmoid, silu, softplus_bias_scale, softplus_log_bias_scale or softplus_stable_bias_scale)}}
  %a, %b = fusion.paired_projection %x, %w, %w epilogues(tanh, none) outs(%dst94, %dst95)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

// Destination style: a result has its destination's type.
func.func @f(%x: tensor<64x64xbf16>, %d: tensor<64x64xf8E4M3FN>, %s: tensor<64x2xf8E8M0FNU>) {
  // expected-error @+1 {{result #1 has type 'tensor<64x3xf8E8M0FNU>' but its destination has type 'tensor<64x2xf8E8M0FNU>'}}
  %r:2 = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%d, %s)
      : (tensor<64x64xbf16>, tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>, tensor<64x3xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<64x64xbf16>, %d: memref<64x64xf8E4M3FN>, %s: memref<64x2xf8E8M0FNU>) {
  // expected-error @+1 {{operands must be all tensors or all memrefs}}
  fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%d, %s)
      : (tensor<64x64xbf16>, memref<64x64xf8E4M3FN>, memref<64x2xf8E8M0FNU>) -> ()
  return
}

// -----

func.func @f(%x: memref<64x64xbf16>, %d: memref<64x64xf8E4M3FN>, %s: memref<64x2xf8E8M0FNU>) {
  // expected-error @+1 {{result #0 has type 'tensor<64x64xf8E4M3FN>' but its destination has type 'memref<64x64xf8E4M3FN>'}}
  %r = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%d, %s)
      : (memref<64x64xbf16>, memref<64x64xf8E4M3FN>, memref<64x2xf8E8M0FNU>) -> (tensor<64x64xf8E4M3FN>)
  return
}

// -----

func.func @f(%x: memref<64x64xbf16>, %d: memref<64x64xf8E5M2>, %s: memref<64x2xf8E8M0FNU>) {
  // expected-error @+1 {{result #0 (rowwise data) has element type 'f8E5M2' but the scheme implies 'f8E4M3FN'}}
  fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%d, %s)
      : (memref<64x64xbf16>, memref<64x64xf8E5M2>, memref<64x2xf8E8M0FNU>) -> ()
  return
}

// -----

// FP4 data packed two per byte (i8, last dimension halved).
func.func @f(%x: tensor<8x64xbf16>, %d: tensor<8x64xi8>, %s: tensor<8x2xf8E8M0FNU>) {
  // expected-error @+1 {{result #0 (rowwise data) has shape 8x64 but the scheme implies 8x32}}
  %r:2 = fusion.quantize %x as quant<mxfp4, rowwise> outs(%d, %s)
      : (tensor<8x64xbf16>, tensor<8x64xi8>, tensor<8x2xf8E8M0FNU>) -> (tensor<8x64xi8>, tensor<8x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<8x33xbf16>, %d: tensor<8x16xi8>, %s: tensor<8x2xf8E8M0FNU>) {
  // expected-error @+1 {{result #0 (rowwise data) packs FP4 two per byte but has an odd number (33) of elements per row}}
  %r:2 = fusion.quantize %x as quant<mxfp4, rowwise> outs(%d, %s)
      : (tensor<8x33xbf16>, tensor<8x16xi8>, tensor<8x2xf8E8M0FNU>) -> (tensor<8x16xi8>, tensor<8x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<8x64xbf16>, %d: tensor<8x64xf8E4M3FN>, %s: tensor<8x2xf8E8M0FNU>) {
  // expected-error @+1 {{result #0 (rowwise data) has element type 'f8E4M3FN' but the scheme implies 'f4E2M1FN' (or i8, packed two per byte)}}
  %r:2 = fusion.quantize %x as quant<mxfp4, rowwise> outs(%d, %s)
      : (tensor<8x64xbf16>, tensor<8x64xf8E4M3FN>, tensor<8x2xf8E8M0FNU>) -> (tensor<8x64xf8E4M3FN>, tensor<8x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<8x64xbf16>) {
  // expected-error @+2 {{expected 'outs'}}
  %r:2 = fusion.quantize %x as quant<mxfp8_e4m3, rowwise>
      : (tensor<8x64xbf16>) -> (tensor<8x64xf8E4M3FN>, tensor<8x2xf8E8M0FNU>)
  return
}

// -----

// expected-error @+1 {{zero_scale applies only to MX formats, not 'nvfp4'}}
func.func private @f() attributes {q = #fusion.quant<nvfp4, rowwise, zero_scale = one>}

// -----

// expected-error @+1 {{epsilon applies only to FP8 per-tensor formats with current scaling and FP8 block formats, not 'mxfp8_e4m3'}}
func.func private @f() attributes {q = #fusion.quant<mxfp8_e4m3, rowwise, epsilon = 1.0e-12>}

// -----

// expected-error @+1 {{epsilon must be a finite f32 value >= 0}}
func.func private @f() attributes {q = #fusion.quant<fp8_e4m3, rowwise, epsilon = -1.0>}

// -----

// expected-error @+1 {{pow2_scale applies only to FP8 per-tensor formats with current scaling and FP8 block formats, not 'fp8_e4m3' with delayed scaling}}
func.func private @f() attributes {q = #fusion.quant<fp8_e4m3, rowwise, scaling = delayed, pow2_scale = true>}

// -----

// expected-error @+1 {{pow2_scale is true or false, not 'yes'}}
func.func private @f() attributes {q = #fusion.quant<fp8_e4m3, rowwise, pow2_scale = yes>}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<32x64xbf16>) {
  %d0 = tensor.empty() : tensor<4x32xf8E4M3FN>
  %d1 = tensor.empty() : tensor<4x1xf8E8M0FNU>
  // expected-error @+1 {{'quantize' needs a gated pair (it quantizes act(y0) * y1)}}
  %q:2 = fusion.paired_projection %x, %w, %w epilogues(none, none) quantize(#fusion.quant<mxfp8_e4m3, rowwise> via bf16) outs(%d0, %d1)
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<4x32xf8E4M3FN>, tensor<4x1xf8E8M0FNU>) -> (tensor<4x32xf8E4M3FN>, tensor<4x1xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<32x64xbf16>) {
  %d0 = tensor.empty() : tensor<4x32xf8E4M3FN>
  %d1 = tensor.empty() : tensor<4x1xf8E8M0FNU>
  // expected-error @+1 {{intermediate element type must be bf16, f16 or f32, got 'f8E4M3FN'}}
  %q:2 = fusion.paired_projection %x, %w, %w epilogues(none, none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<mxfp8_e4m3, rowwise> via f8E4M3FN) outs(%d0, %d1)
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<4x32xf8E4M3FN>, tensor<4x1xf8E8M0FNU>) -> (tensor<4x32xf8E4M3FN>, tensor<4x1xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<32x64xbf16>) {
  %d0 = tensor.empty() : tensor<4x32xf8E4M3FN>
  %d1 = tensor.empty() : tensor<1xf32>
  %d2 = tensor.empty() : tensor<1xf32>
  // expected-error @+1 {{delayed scaling needs a 'scale' operand}}
  %q:3 = fusion.paired_projection %x, %w, %w epilogues(none, none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<fp8_e4m3, rowwise, block = tensor, scaling = delayed> via bf16) outs(%d0, %d1, %d2)
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<32x64xbf16>, %s: tensor<1xf32>) {
  %d0 = tensor.empty() : tensor<4x32xf8E4M3FN>
  %d1 = tensor.empty() : tensor<1xf32>
  %d2 = tensor.empty() : tensor<1xf32>
  // expected-error @+1 {{'scale' operand is only used by FP8 delayed scaling}}
  %q:3 = fusion.paired_projection %x, %w, %w epilogues(none, none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<fp8_e4m3, rowwise, block = tensor> via bf16 scale %s) outs(%d0, %d1, %d2)
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<1xf32>, tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<32x64xbf16>, %s: tensor<2xf32>) {
  %d0 = tensor.empty() : tensor<4x32xf8E4M3FN>
  %d1 = tensor.empty() : tensor<1xf32>
  %d2 = tensor.empty() : tensor<1xf32>
  // expected-error @+1 {{'scale' operand must be tensor<1xf32>}}
  %q:3 = fusion.paired_projection %x, %w, %w epilogues(none, none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<fp8_e4m3, rowwise, block = tensor, scaling = delayed> via bf16 scale %s) outs(%d0, %d1, %d2)
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<2xf32>, tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<4x32xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<32x64xbf16>) {
  %d0 = tensor.empty() : tensor<4x32xf4E2M1FN>
  %d1 = tensor.empty() : tensor<4x2xf8E4M3FN>
  %d2 = tensor.empty() : tensor<1xf32>
  // expected-error @+1 {{'quantize' takes no stochastic rounding (a scheme with an rng operand)}}
  %q:3 = fusion.paired_projection %x, %w, %w epilogues(none, none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<nvfp4, rowwise, elem = stochastic> via bf16) outs(%d0, %d1, %d2)
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<4x32xf4E2M1FN>, tensor<4x2xf8E4M3FN>, tensor<1xf32>) -> (tensor<4x32xf4E2M1FN>, tensor<4x2xf8E4M3FN>, tensor<1xf32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<32x64xbf16>, %s: tensor<1xf32>) {
  %d0 = tensor.empty() : tensor<4x32xf32>
  // expected-error @+1 {{a quantizer 'scale' operand is only used with 'quantize'}}
  %y = "fusion.paired_projection"(%x, %w, %w, %s, %d0) <{epilogue0 = #fusion<epilogue none>, epilogue1 = #fusion<epilogue none>, gated = #fusion.act<swiglu>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 1, 1>}>
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<1xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<32x64xbf16>) {
  %d0 = tensor.empty() : tensor<4x32xf8E4M3FN>
  %d1 = tensor.empty() : tensor<4x2xf8E8M0FNU>
  // expected-error @+1 {{result #1 (rowwise scales) has shape 4x2 but the scheme implies 4x1}}
  %q:2 = fusion.paired_projection %x, %w, %w epilogues(none, none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<mxfp8_e4m3, rowwise> via bf16) outs(%d0, %d1)
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<4x32xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) -> (tensor<4x32xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<32x64xbf16>) {
  %d0 = tensor.empty() : tensor<4x32xbf16>
  // expected-error @+1 {{an intermediate type is only used with 'quantize'}}
  %q = "fusion.paired_projection"(%x, %w, %w, %d0) <{epilogue0 = #fusion<epilogue none>, epilogue1 = #fusion<epilogue none>, gated = #fusion.act<swiglu>, intermediate = bf16, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1>}>
      : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<4x32xbf16>) -> tensor<4x32xbf16>
  return
}

// -----

func.func @f(%x: tensor<256x256xbf16>) {
  %d = tensor.empty() : tensor<256x256xf8E4M3FN>
  %s = tensor.empty() : tensor<2x2xf32>
  // expected-error @+1 {{quantizes with 2D FP8 blocks (block = 128x128), which apply to fusion.quantize only (weight tiles)}}
  %a, %b = fusion.act_quantize #fusion.act<silu> %x as quant<fp8_block_e4m3, rowwise, block = 128x128> via bf16 outs(%d, %s)
      : (tensor<256x256xbf16>, tensor<256x256xf8E4M3FN>, tensor<2x2xf32>) -> (tensor<256x256xf8E4M3FN>, tensor<2x2xf32>)
  return
}

// -----

func.func @f(%x: tensor<256x256xbf16>) {
  %d = tensor.empty() : tensor<256x256xf8E4M3FN>
  %s = tensor.empty() : tensor<256x2xf32>
  // expected-error @+1 {{result #1 (rowwise scales) has shape 256x2 but the scheme implies 2x2}}
  %a, %b = fusion.quantize %x as quant<fp8_block_e4m3, rowwise, block = 128x128> outs(%d, %s)
      : (tensor<256x256xbf16>, tensor<256x256xf8E4M3FN>, tensor<256x2xf32>) -> (tensor<256x256xf8E4M3FN>, tensor<256x2xf32>)
  return
}

// -----

// expected-error @+1 {{format 'fp8_block_e5m2' is rowwise only}}
func.func private @f() attributes {q = #fusion.quant<fp8_block_e5m2, both>}

// -----

// expected-error @+1 {{format 'fp8_block_e4m3' keeps f32 scales; they are not swizzled}}
func.func private @f() attributes {q = #fusion.quant<fp8_block_e4m3, rowwise, scales = swizzled>}

// -----

// expected-error @+1 {{delayed scaling applies only to FP8 per-tensor formats, not 'fp8_block_e4m3'}}
func.func private @f() attributes {q = #fusion.quant<fp8_block_e4m3, rowwise, scaling = delayed>}

// -----

func.func @f(%x: tensor<4x256xbf16>) {
  %d = tensor.empty() : tensor<4x256xf8E4M3FN>
  %s = tensor.empty() : tensor<4x2xf8E8M0FNU>
  // expected-error @+1 {{result #1 (rowwise scales) has element type 'f8E8M0FNU' but the scheme implies 'f32'}}
  %a, %b = fusion.quantize %x as quant<fp8_block_e4m3, rowwise> outs(%d, %s)
      : (tensor<4x256xbf16>, tensor<4x256xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) -> (tensor<4x256xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return
}

// -----

// expected-error @+1 {{recipe 'multiply' applies only to the FP8 block formats, not 'nvfp4'}}
func.func private @f() attributes {q = #fusion.quant<nvfp4, rowwise, recipe = multiply>}

// -----

// expected-error @+1 {{recipe 'multiplier' applies only to the FP8 block formats, not 'fp8_e4m3'}}
func.func private @f() attributes {q = #fusion.quant<fp8_e4m3, rowwise, block = tensor, recipe = multiplier>}

// -----

// expected-error @+1 {{recipe 'reciprocal' applies only to FP8 per-tensor formats with current scaling, not 'fp8_e4m3' with delayed scaling}}
func.func private @f() attributes {q = #fusion.quant<fp8_e4m3, rowwise, scaling = delayed, recipe = reciprocal>}

// -----

// expected-error @+1 {{recipe 'reciprocal' applies only to FP8 per-tensor formats with current scaling, not 'fp8_block_e4m3'}}
func.func private @f() attributes {q = #fusion.quant<fp8_block_e4m3, rowwise, recipe = reciprocal>}

// -----

// expected-error @+1 {{recipe applies only to 'nvfp4', not 'fp8_block_e4m3'}}
func.func private @f() attributes {q = #fusion.quant<fp8_block_e4m3, rowwise, recipe = torchao>}
