// RUN: fusion-opt %s --one-shot-bufferize=bufferize-function-boundaries -split-input-file -verify-diagnostics

// IR the lowering cannot hand to the runtime gets a diagnostic naming the op
// and the reason, and bufferization stops (no partial lowering).

func.func @rank5(%x: tensor<2x2x2x4x64xbf16>) -> (tensor<2x2x2x4x64xf8E4M3FN>, tensor<2x2x2x4x2xf8E8M0FNU>) {
  // expected-error @+2 {{'fusion.quantize' op result of rank 5 exceeds the runtime's rank limit of 4}}
  // expected-error @+1 {{failed to bufferize op}}
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> : (tensor<2x2x2x4x64xbf16>) -> (tensor<2x2x2x4x64xf8E4M3FN>, tensor<2x2x2x4x2xf8E8M0FNU>)
  return %d, %s : tensor<2x2x2x4x64xf8E4M3FN>, tensor<2x2x2x4x2xf8E8M0FNU>
}

// -----

func.func @f64_bias(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>, %b: tensor<8xf64>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // expected-error @+2 {{'fusion.paired_projection' op cannot pass an operand of type 'tensor<8xf64>' to the runtime}}
  // expected-error @+1 {{failed to bufferize op}}
  %y0, %y1 = fusion.paired_projection %x, %w, %w epilogues(bias bias %b, none) : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8xf64>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %y0, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}
