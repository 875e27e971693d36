// Llama-style FFN front, as a frontend (torch-mlir) lowers
//
//     h = F.silu(x @ w_gate.T) * (x @ w_up.T)      # SwiGLU
//     h_q, h_s = to_mxfp8(h)                       # input of the down proj.
//
// for Llama-3-8B sizes (hidden 4096, intermediate 14336) and 128 tokens:
// the gate and up projections are linalg.matmul with transposed-weight
// indexing maps (torch.nn.Linear weights are [out, in]), accumulating in f32
// and rounded to bf16; SwiGLU is a sigmoid generic and two multiplications;
// the result is quantized to MXFP8 with swizzled scales for the
// block-scaled down-projection GEMM.
//
//     fusion-opt examples/llama_ffn_front.mlir --fusion-act-quantize-pipeline \
//         --remarks-filter=fusion
//
// fuses the SwiGLU and the quantizer into one fusion.gated_act_quantize that
// reads the two projections' bf16 outputs (the activation is never written
// to memory) and leaves the projections alone (their pairing is
// fusion-fuse-paired-projections' job). test/Transforms/llama-ffn-front.mlir
// checks this.

#x_map = affine_map<(t, i, h) -> (t, h)>
#w_map = affine_map<(t, i, h) -> (i, h)>
#o_map = affine_map<(t, i, h) -> (t, i)>
#id = affine_map<(d0, d1) -> (d0, d1)>

func.func @llama_ffn_front(%x: tensor<128x4096xbf16>,
                           %w_gate: tensor<14336x4096xbf16>,
                           %w_up: tensor<14336x4096xbf16>)
    -> (tensor<128x14336xf8E4M3FN>, tensor<128x448xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %acc_init = tensor.empty() : tensor<128x14336xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc_init : tensor<128x14336xf32>) -> tensor<128x14336xf32>

  // Projections: x @ w.T, f32 accumulation.
  %gate_acc = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_gate : tensor<128x4096xbf16>, tensor<14336x4096xbf16>)
      outs(%acc : tensor<128x14336xf32>) -> tensor<128x14336xf32>
  %up_acc = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_up : tensor<128x4096xbf16>, tensor<14336x4096xbf16>)
      outs(%acc : tensor<128x14336xf32>) -> tensor<128x14336xf32>
  %gate = arith.truncf %gate_acc : tensor<128x14336xf32> to tensor<128x14336xbf16>
  %up = arith.truncf %up_acc : tensor<128x14336xf32> to tensor<128x14336xbf16>

  // SwiGLU: silu(gate) * up, silu = gate * sigmoid(gate).
  %init = tensor.empty() : tensor<128x14336xbf16>
  %sigmoid = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate : tensor<128x14336xbf16>) outs(%init : tensor<128x14336xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %f = arith.extf %in : bf16 to f32
    %neg = arith.negf %f : f32
    %exp = math.exp %neg : f32
    %one = arith.constant 1.0 : f32
    %den = arith.addf %exp, %one : f32
    %sig = arith.divf %one, %den : f32
    %r = arith.truncf %sig : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<128x14336xbf16>
  %silu = linalg.mul ins(%gate, %sigmoid : tensor<128x14336xbf16>, tensor<128x14336xbf16>)
      outs(%init : tensor<128x14336xbf16>) -> tensor<128x14336xbf16>
  %h = linalg.mul ins(%silu, %up : tensor<128x14336xbf16>, tensor<128x14336xbf16>)
      outs(%init : tensor<128x14336xbf16>) -> tensor<128x14336xbf16>

  // MXFP8 for the down projection (E8M0 scales over blocks of 32, swizzled).
  %dst0 = tensor.empty() : tensor<128x14336xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<128x448xf8E8M0FNU>
  %h_q, %h_s = fusion.quantize %h as quant<mxfp8_e4m3, rowwise, scales = swizzled> outs(%dst0, %dst1)
      : (tensor<128x14336xbf16>, tensor<128x14336xf8E4M3FN>, tensor<128x448xf8E8M0FNU>) -> (tensor<128x14336xf8E4M3FN>, tensor<128x448xf8E8M0FNU>)
  return %h_q, %h_s : tensor<128x14336xf8E4M3FN>, tensor<128x448xf8E8M0FNU>
}
