// SwiGLU on a packed [gate | up] activation followed by an MXFP8 quantizer,
// as a frontend writes it. fusion-pipeline fuses it into one
// fusion.gated_act_quantize, so the compiled function is one runtime call:
// given host buffers it runs on the CPU backend, given device buffers the
// CUDA kernels (examples/aot/aot_driver.cpp runs both and compares).
#id = affine_map<(d0, d1) -> (d0, d1)>

func.func @forward(%x: tensor<256x2048xbf16>)
    -> (tensor<256x1024xf8E4M3FN>, tensor<256x32xf8E8M0FNU>) {
  %g = tensor.extract_slice %x[0, 0] [256, 1024] [1, 1] : tensor<256x2048xbf16> to tensor<256x1024xbf16>
  %u = tensor.extract_slice %x[0, 1024] [256, 1024] [1, 1] : tensor<256x2048xbf16> to tensor<256x1024xbf16>
  %e = tensor.empty() : tensor<256x1024xbf16>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : tensor<256x1024xbf16>, tensor<256x1024xbf16>) outs(%e : tensor<256x1024xbf16>) {
  ^bb0(%gv: bf16, %uv: bf16, %o: bf16):
    %gf = arith.extf %gv : bf16 to f32
    %uf = arith.extf %uv : bf16 to f32
    %one = arith.constant 1.0 : f32
    %n = arith.negf %gf : f32
    %ex = math.exp %n : f32
    %den = arith.addf %one, %ex : f32
    %s = arith.divf %gf, %den : f32
    %p = arith.mulf %s, %uf : f32
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<256x1024xbf16>
  %dst0 = tensor.empty() : tensor<256x1024xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<256x32xf8E8M0FNU>
  %d, %sc = fusion.quantize %a as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<256x1024xbf16>, tensor<256x1024xf8E4M3FN>, tensor<256x32xf8E8M0FNU>) -> (tensor<256x1024xf8E4M3FN>, tensor<256x32xf8E8M0FNU>)
  return %d, %sc : tensor<256x1024xf8E4M3FN>, tensor<256x32xf8E8M0FNU>
}
