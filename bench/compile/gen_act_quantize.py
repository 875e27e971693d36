#!/usr/bin/env python3
"""Generates a module with N fusion-fuse-act-quantize candidate sites.

Each site is one function holding an activation written the way frontends
write it, followed by a fusion.quantize of its result. The forms cycle
through: silu on tensors (arith/math), gelu_tanh in one linalg.generic
(torch-mlir's constants), swiglu from a packed [gate | up] tensor, dgelu
with a dbias reduction, relu via select, and a declined candidate (tanh).

    python3 bench/compile/gen_act_quantize.py 10000 > /tmp/sites10k.mlir
    time build/bin/fusion-opt /tmp/sites10k.mlir \
        --fusion-act-quantize-pipeline -o /dev/null

docs/passes.md records the figures.
"""
import sys

SILU = """func.func @silu_{i}(%x: tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {{
  %xf = arith.extf %x : tensor<64x256xbf16> to tensor<64x256xf32>
  %n = arith.negf %xf : tensor<64x256xf32>
  %e = math.exp %n : tensor<64x256xf32>
  %one = arith.constant dense<1.0> : tensor<64x256xf32>
  %den = arith.addf %one, %e : tensor<64x256xf32>
  %y = arith.divf %xf, %den : tensor<64x256xf32>
  %t = arith.truncf %y : tensor<64x256xf32> to tensor<64x256xbf16>
  %qd = tensor.empty() : tensor<64x256xf8E4M3FN>
  %qs = tensor.empty() : tensor<64x8xf8E8M0FNU>
  %q:2 = fusion.quantize %t as quant<mxfp8_e4m3, rowwise> outs(%qd, %qs) : (tensor<64x256xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}}
"""

GELU_TANH = """func.func @gelu_tanh_{i}(%x: tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {{
  %init = tensor.empty() : tensor<64x256xbf16>
  %y = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}}
      ins(%x : tensor<64x256xbf16>) outs(%init : tensor<64x256xbf16>) {{
  ^bb0(%in: bf16, %out: bf16):
    %f = arith.extf %in : bf16 to f32
    %c3 = arith.constant 3 : i32
    %cube = math.fpowi %f, %c3 : f32, i32
    %kk = arith.constant 0.044715 : f32
    %kb = arith.constant 0.7977240352174656 : f32
    %c1 = arith.constant 1.0 : f32
    %ch = arith.constant 0.5 : f32
    %t1 = arith.mulf %cube, %kk : f32
    %inner = arith.addf %f, %t1 : f32
    %arg = arith.mulf %kb, %inner : f32
    %th = math.tanh %arg : f32
    %a = arith.addf %th, %c1 : f32
    %hx = arith.mulf %f, %ch : f32
    %r = arith.mulf %hx, %a : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  }} -> tensor<64x256xbf16>
  %qd = tensor.empty() : tensor<64x256xf8E4M3FN>
  %qs = tensor.empty() : tensor<64x8xf8E8M0FNU>
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%qd, %qs) : (tensor<64x256xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}}
"""

SWIGLU_PACKED = """func.func @swiglu_{i}(%gu: tensor<64x512xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {{
  %gate = tensor.extract_slice %gu[0, 0] [64, 256] [1, 1] : tensor<64x512xbf16> to tensor<64x256xbf16>
  %up = tensor.extract_slice %gu[0, 256] [64, 256] [1, 1] : tensor<64x512xbf16> to tensor<64x256xbf16>
  %n = arith.negf %gate : tensor<64x256xbf16>
  %e = math.exp %n : tensor<64x256xbf16>
  %one = arith.constant dense<1.0> : tensor<64x256xbf16>
  %den = arith.addf %one, %e : tensor<64x256xbf16>
  %silu = arith.divf %gate, %den : tensor<64x256xbf16>
  %y = arith.mulf %silu, %up : tensor<64x256xbf16>
  %qd = tensor.empty() : tensor<64x256xf8E4M3FN>
  %qs = tensor.empty() : tensor<64x8xf8E8M0FNU>
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%qd, %qs) : (tensor<64x256xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}}
"""

DGELU_DBIAS = """func.func @dgelu_dbias_{i}(%x: tensor<64x256xf32>, %dy: tensor<64x256xf32>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<256xf32>) {{
  %ka = arith.constant dense<0.70710678> : tensor<64x256xf32>
  %kb = arith.constant dense<0.39894228> : tensor<64x256xf32>
  %h = arith.constant dense<0.5> : tensor<64x256xf32>
  %mh = arith.constant dense<-0.5> : tensor<64x256xf32>
  %one = arith.constant dense<1.0> : tensor<64x256xf32>
  %xa = arith.mulf %x, %ka : tensor<64x256xf32>
  %er = math.erf %xa : tensor<64x256xf32>
  %a = arith.addf %one, %er : tensor<64x256xf32>
  %cdf = arith.mulf %h, %a : tensor<64x256xf32>
  %xx = arith.mulf %x, %x : tensor<64x256xf32>
  %xxh = arith.mulf %xx, %mh : tensor<64x256xf32>
  %ex = math.exp %xxh : tensor<64x256xf32>
  %pdf = arith.mulf %kb, %ex : tensor<64x256xf32>
  %xpdf = arith.mulf %x, %pdf : tensor<64x256xf32>
  %s = arith.addf %cdf, %xpdf : tensor<64x256xf32>
  %y = arith.mulf %dy, %s : tensor<64x256xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %db = linalg.reduce ins(%y : tensor<64x256xf32>) outs(%acc : tensor<256xf32>) dimensions = [0]
    (%in: f32, %sum: f32) {{
      %n = arith.addf %in, %sum : f32
      linalg.yield %n : f32
    }}
  %qd = tensor.empty() : tensor<64x256xf8E4M3FN>
  %qs = tensor.empty() : tensor<64x8xf8E8M0FNU>
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%qd, %qs) : (tensor<64x256xf32>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>)
  return %q#0, %q#1, %db : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<256xf32>
}}
"""

RELU_SELECT = """func.func @relu_{i}(%x: tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {{
  %z = arith.constant dense<0.0> : tensor<64x256xbf16>
  %p = arith.cmpf ogt, %x, %z : tensor<64x256xbf16>
  %y = arith.select %p, %x, %z : tensor<64x256xi1>, tensor<64x256xbf16>
  %qd = tensor.empty() : tensor<64x256xf8E4M3FN>
  %qs = tensor.empty() : tensor<64x8xf8E8M0FNU>
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%qd, %qs) : (tensor<64x256xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}}
"""

TANH_DECLINED = """func.func @tanh_{i}(%x: tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {{
  %y = math.tanh %x : tensor<64x256xbf16>
  %qd = tensor.empty() : tensor<64x256xf8E4M3FN>
  %qs = tensor.empty() : tensor<64x8xf8E8M0FNU>
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%qd, %qs) : (tensor<64x256xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}}
"""

FORMS = [SILU, GELU_TANH, SWIGLU_PACKED, DGELU_DBIAS, RELU_SELECT, TANH_DECLINED]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    out = sys.stdout
    for i in range(n):
        out.write(FORMS[i % len(FORMS)].format(i=i))


if __name__ == "__main__":
    main()
