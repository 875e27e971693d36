// RUN: fusion-opt %s --fusion-lower-to-runtime -split-input-file -verify-diagnostics

// IR that fusion-lower-to-runtime cannot hand to the runtime gets a
// diagnostic naming the op and the reason, and the pass fails (no partial
// lowering is left behind as success).

func.func @f64_bias(%x: memref<4x64xbf16>, %w: memref<8x64xbf16>, %b: memref<8xf64>, %y0: memref<4x8xf32>, %y1: memref<4x8xf32>) {
  // expected-error @+1 {{'fusion.paired_projection' op cannot pass an operand of type 'memref<8xf64>' to the runtime}}
  fusion.paired_projection %x, %w, %w epilogues(bias bias %b, none) outs(%y0, %y1)
      : (memref<4x64xbf16>, memref<8x64xbf16>, memref<8x64xbf16>, memref<8xf64>, memref<4x8xf32>, memref<4x8xf32>) -> ()
  return
}

// -----

// The pass works on memrefs: a fusion op still on tensors is named.
func.func @not_bufferized(%x: tensor<4x64xbf16>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) {
  %e0 = tensor.empty() : tensor<4x64xf8E4M3FN>
  %e1 = tensor.empty() : tensor<4x2xf8E8M0FNU>
  // expected-error @+1 {{'fusion.quantize' op works on tensors; bufferize it (one-shot-bufferize) before fusion-lower-to-runtime}}
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%e0, %e1)
      : (tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return %d, %s : tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>
}

// -----

// Half-bufferized IR (tensor inputs, memref destinations) is refused by the
// verifier before the pass runs.
func.func @mixed(%x: tensor<4x64xbf16>, %d: memref<4x64xf8E4M3FN>, %s: memref<4x2xf8E8M0FNU>) {
  // expected-error @+1 {{'fusion.quantize' op operands must be all tensors or all memrefs}}
  fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%d, %s)
      : (tensor<4x64xbf16>, memref<4x64xf8E4M3FN>, memref<4x2xf8E8M0FNU>) -> ()
  return
}
