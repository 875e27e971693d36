// Llama-style FFN gate/up projections with SwiGLU computed in f32, as an
// XLA/StableHLO-style frontend lowers
//
//     g = dot(x, w_gate.T, preferred_element_type=f32)
//     u = dot(x, w_up.T, preferred_element_type=f32)
//     h = convert<bf16>(silu(g) * u)             # one rounding, at the end
//     h_q, h_s = to_mxfp8(h)                     # input of the down proj.
//
// for Llama-3-8B sizes (hidden 4096, intermediate 14336) and 16 tokens
// (speculative decode). Unlike examples/llama_ffn_front.mlir (torch bf16
// semantics: gate and up rounded to bf16 before SwiGLU), nothing is rounded
// between the f32 accumulators and the SwiGLU result, so the whole front is
// what one gated fusion.paired_projection computes.
//
//     fusion-opt examples/llama_gate_up.mlir --pass-pipeline='builtin.module(func.func(fusion-normalize-elementwise,canonicalize,cse,fusion-fuse-paired-projections,fusion-fuse-act-quantize))' --remarks-filter=fusion
//
// gives one fusion.paired_projection gated(#fusion.act<swiglu>) that reads x
// once and writes h in bf16, followed by the fusion.quantize (act-quantize
// finds no activation left to fuse). test/Transforms/fuse-paired-projections-examples.mlir
// checks this.

#x_map = affine_map<(t, i, h) -> (t, h)>
#w_map = affine_map<(t, i, h) -> (i, h)>
#o_map = affine_map<(t, i, h) -> (t, i)>
#id = affine_map<(d0, d1) -> (d0, d1)>

func.func @llama_gate_up(%x: tensor<16x4096xbf16>,
                         %w_gate: tensor<14336x4096xbf16>,
                         %w_up: tensor<14336x4096xbf16>)
    -> (tensor<16x14336xf8E4M3FN>, tensor<16x448xf8E8M0FNU>) {
  %zero = arith.constant 0.0 : f32
  %acc_init = tensor.empty() : tensor<16x14336xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc_init : tensor<16x14336xf32>) -> tensor<16x14336xf32>

  // Projections: x @ w.T, f32 accumulation.
  %g = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_gate : tensor<16x4096xbf16>, tensor<14336x4096xbf16>)
      outs(%acc : tensor<16x14336xf32>) -> tensor<16x14336xf32>
  %u = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w_up : tensor<16x4096xbf16>, tensor<14336x4096xbf16>)
      outs(%acc : tensor<16x14336xf32>) -> tensor<16x14336xf32>

  // SwiGLU in f32: silu(g) * u = g * logistic(g) * u, rounded once.
  %one = arith.constant dense<1.0> : tensor<16x14336xf32>
  %neg = arith.negf %g : tensor<16x14336xf32>
  %exp = math.exp %neg : tensor<16x14336xf32>
  %den = arith.addf %one, %exp : tensor<16x14336xf32>
  %logistic = arith.divf %one, %den : tensor<16x14336xf32>
  %silu = arith.mulf %g, %logistic : tensor<16x14336xf32>
  %hf = arith.mulf %silu, %u : tensor<16x14336xf32>
  %h = arith.truncf %hf : tensor<16x14336xf32> to tensor<16x14336xbf16>

  // MXFP8 for the down projection (E8M0 scales over blocks of 32).
  %dst0 = tensor.empty() : tensor<16x14336xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<16x448xf8E8M0FNU>
  %h_q, %h_s = fusion.quantize %h as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<16x14336xbf16>, tensor<16x14336xf8E4M3FN>, tensor<16x448xf8E8M0FNU>) -> (tensor<16x14336xf8E4M3FN>, tensor<16x448xf8E8M0FNU>)
  return %h_q, %h_s : tensor<16x14336xf8E4M3FN>, tensor<16x448xf8E8M0FNU>
}
