#!/usr/bin/env python3
"""Generates the frontend-IR corpus: PyTorch + torchao programs exported by
torch-mlir's FX importer to linalg-on-tensors, with small inputs and torch's
eager output bytes.

Run by hand (never in CI), in a venv with torch 2.15, torchao 0.18 and
torch-mlir 20261001 from PyPI (ml_dtypes: bf16 parameters become constants):

    python3 -m venv /tmp/tvenv
    /tmp/tvenv/bin/pip install torch==2.15.* torchao==0.18.* torch-mlir==20261001 ml_dtypes
    /tmp/tvenv/bin/python tools/frontend-corpus/generate.py test/Frontend/corpus

For each program NAME it writes NAME.mlir (the function @main exactly as
torch-mlir emits it, with a header line saying how it was made) and
NAME.io.json (inputs and torch's output bytes, hex, little-endian).

Two workarounds for gaps of this torch-mlir (both keep the frontend's ops):
* `aten.view.dtype` (torchao's bitcasts) has no linalg lowering: the program
  is imported to the torch dialect, each view.dtype is replaced by
  torch_c.to_builtin_tensor + tensor.bitcast + torch_c.from_builtin_tensor,
  and torch-mlir-opt's linalg backend pipeline lowers the rest;
* `bitwise_{left,right}_shift.Tensor_Scalar` has no lowering: the shifts are
  called with a 0-d tensor amount (the `.Tensor` overload).
"""
import json
import os
import re
import subprocess
import sys

import torch
import torch.nn.functional as F
from torch_mlir import fx
from torch_mlir.compiler_utils import OutputType
from torchao.prototype.mx_formats.config import ScaleCalculationMode as Mode
from torchao.prototype.mx_formats.mx_tensor import to_mx
from torchao.prototype.mx_formats.utils import to_blocked
from torchao.prototype.mx_formats.nvfp4_tensor import (nvfp4_quantize,
                                                       per_tensor_amax_to_scale)
from torchao.float8.float8_utils import tensor_to_scale, to_fp8_saturated
from torchao.float8.config import ScalingGranularity
from torchao.prototype.blockwise_fp8_training.kernels import (
    torch_blockwise_scale_act_quant_lhs, torch_blockwise_scale_weight_quant)
from torch._decomp import core_aten_decompositions
from torch.fx.experimental.proxy_tensor import make_fx

_shift_r, _shift_l = torch.bitwise_right_shift, torch.bitwise_left_shift


def _tensor_amount(f):
    def g(a, b):
        if isinstance(b, int):
            b = torch.full((), b, dtype=a.dtype)
        return f(a, b)
    return g


torch.bitwise_right_shift = _tensor_amount(_shift_r)
torch.bitwise_left_shift = _tensor_amount(_shift_l)

_BUILTIN = {"f32": "f32", "bf16": "bf16", "f16": "f16", "si32": "i32",
            "ui8": "i8", "si8": "i8", "si16": "i16", "si64": "i64",
            "f8E8M0FNU": "f8E8M0FNU", "f8E4M3FN": "f8E4M3FN",
            "f8E5M2": "f8E5M2"}
_VIEW = re.compile(
    r"^(\s*)(%[\w.]+) = torch\.aten\.view\.dtype (%[\w.]+), (%[\w.]+) : "
    r"(!torch\.vtensor<\[([\d,?]*)\],(\w+)>), !torch\.int -> "
    r"(!torch\.vtensor<\[([\d,?]*)\],(\w+)>)(.*)$", re.M)


def _builtin(shape, dtype):
    dims = "x".join(shape.split(",")) if shape else ""
    return f"tensor<{dims + 'x' if dims else ''}{_BUILTIN[dtype]}>"


def _view_dtype_to_bitcast(text):
    def rep(m):
        ind, r, x, _, st, ss, sd, dt, ds, dd, _rest = m.groups()
        n = r.strip("%").replace(".", "_")
        a, b = _builtin(ss, sd), _builtin(ds, dd)
        return (f"{ind}%vdb_{n} = torch_c.to_builtin_tensor {x} : {st} -> {a}\n"
                f"{ind}%vdc_{n} = tensor.bitcast %vdb_{n} : {a} to {b}\n"
                f"{ind}{r} = torch_c.from_builtin_tensor %vdc_{n} : {b} -> {dt}")
    return _VIEW.sub(rep, text)


def export(module, args, dynamic=None):
    m = fx.export_and_import(module, *args, output_type=OutputType.TORCH,
                             dynamic_shapes=dynamic)
    text = _view_dtype_to_bitcast(str(m))
    opt = os.path.join(os.path.dirname(fx.__file__), "_mlir_libs",
                       "torch-mlir-opt")
    r = subprocess.run(
        [opt, "--torch-backend-to-linalg-on-tensors-backend-pipeline",
         "--mlir-print-debuginfo=false"],
        input=text, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr)
    return r.stdout


# ---- the programs ----------------------------------------------------------


class ActMx(torch.nn.Module):
    """act(x) quantized by torchao's to_mx (returns data, scales)."""

    def __init__(self, act, elem=torch.float8_e4m3fn, mode=Mode.RCEIL,
                 block=32):
        super().__init__()
        self.act, self.elem, self.mode, self.block = act, elem, mode, block

    def forward(self, x):
        scale, data = to_mx(self.act(x), self.elem, self.block, self.mode)
        return data, scale


class ActMx4(torch.nn.Module):
    """act(x) quantized to MXFP4 by torchao's to_mx; the packed codes
    (float4_e2m1fn_x2) returned as uint8."""

    def __init__(self, act, mode=Mode.RCEIL):
        super().__init__()
        self.act, self.mode = act, mode

    def forward(self, x):
        scale, data = to_mx(self.act(x), torch.float4_e2m1fn_x2, 32, self.mode)
        return data.view(torch.uint8), scale


class ActFp8Tensorwise(torch.nn.Module):
    """act(x) quantized to FP8 with one scale per tensor, as torchao.float8
    does it (tensor_to_scale, then to_fp8_saturated(x * scale))."""

    # tensor_to_scale's granularity arguments (none: one scale per tensor).
    granularity = {}

    def __init__(self, act, pow2=False, elem=torch.float8_e4m3fn):
        super().__init__()
        self.act, self.pow2, self.elem = act, pow2, elem

    def forward(self, x):
        y = self.act(x)
        scale = tensor_to_scale(y, self.elem,
                                round_scales_to_power_of_2=self.pow2,
                                **self.granularity)
        data = to_fp8_saturated(y.to(torch.float32) * scale, self.elem)
        return data, scale


class ActFp8Rowwise(ActFp8Tensorwise):
    """act(x) quantized to FP8 with one scale per row, as torchao.float8's
    rowwise recipe does it (tensor_to_scale with AXISWISE granularity along
    the last dim: max / clamp(amax, 1e-12) in f64, optionally rounded down to
    a power of two; then to_fp8_saturated(x * scale))."""

    granularity = {"scaling_granularity": ScalingGranularity.AXISWISE,
                   "axiswise_dim": -1}


class ActNvfp4(torch.nn.Module):
    """act(x) quantized by torchao's nvfp4_quantize with a per-tensor scale
    (block 16, e4m3 block scales); the packed codes returned as uint8."""

    def __init__(self, act, per_tensor=True, return_scale=False):
        super().__init__()
        self.act = act
        self.per_tensor = per_tensor
        self.return_scale = return_scale

    def forward(self, x):
        y = self.act(x)
        pts = per_tensor_amax_to_scale(torch.max(torch.abs(y))) \
            if self.per_tensor else None
        scales, data = nvfp4_quantize(y, block_size=16, per_tensor_scale=pts)
        if self.return_scale:  # as NVFP4Tensor keeps it
            return data.view(torch.uint8), scales, pts
        return data.view(torch.uint8), scales


class ActMxBlocked(torch.nn.Module):
    """act(x) by torchao's to_mx, its scales swizzled by to_blocked (the
    128x4-tile layout torch._scaled_mm and cuBLAS read, padded with 0);
    N-d inputs as [rows, N] scales. nvfp4: nvfp4_quantize with a per-tensor
    scale instead, its e4m3 scales swizzled the same way."""

    def __init__(self, act, mode=Mode.RCEIL, nvfp4=False):
        super().__init__()
        self.act, self.mode, self.nvfp4 = act, mode, nvfp4

    def forward(self, x):
        y = self.act(x)
        if self.nvfp4:
            pts = per_tensor_amax_to_scale(torch.max(torch.abs(y)))
            scale, data = nvfp4_quantize(y, block_size=16, per_tensor_scale=pts)
            return data.view(torch.uint8), to_blocked(scale.view(-1, x.shape[-1] // 16))
        scale, data = to_mx(y, torch.float8_e4m3fn, 32, self.mode)
        return data, to_blocked(scale.view(-1, x.shape[-1] // 32))


class ActColwise(torch.nn.Module):
    """act(x) quantized along dim 0 as torchao's MX training does it
    (`to_mx(y.t().contiguous())`: codes [N, T], scales [N, T/32]), or by
    nvfp4_quantize with a per-tensor scale; `both`: the rowwise copy too
    (data, scales, colwise data, colwise scales)."""

    def __init__(self, act, elem=torch.float8_e4m3fn, mode=Mode.RCEIL,
                 both=False, nvfp4=False):
        super().__init__()
        self.act, self.elem, self.mode = act, elem, mode
        self.both, self.nvfp4 = both, nvfp4

    def quantize(self, y):
        if self.nvfp4:
            pts = per_tensor_amax_to_scale(torch.max(torch.abs(y)))
            scale, data = nvfp4_quantize(y, block_size=16, per_tensor_scale=pts)
            return data.view(torch.uint8), scale
        scale, data = to_mx(y, self.elem, 32, self.mode)
        if self.elem == torch.float4_e2m1fn_x2:
            data = data.view(torch.uint8)
        return data, scale

    def forward(self, x):
        y = self.act(x)
        col = self.quantize(y.t().contiguous())
        return (*self.quantize(y), *col) if self.both else col


class Fp8CastTranspose(ActFp8Tensorwise):
    """torchao.float8 tensorwise codes of act(x) and their transposed copy
    (`data.t().contiguous()`, what the weight-gradient GEMM reads; TE's
    cast + transpose)."""

    def forward(self, x):
        data, scale = super().forward(x)
        return data, data.t().contiguous(), scale


class ActColwiseBlocked(torch.nn.Module):
    """act(x) quantized along dim 0 by to_mx on the transpose, its scales
    swizzled by to_blocked (MXFP8 RCEIL)."""

    def __init__(self, act):
        super().__init__()
        self.act = act

    def forward(self, x):
        yt = self.act(x).t().contiguous()
        scale, data = to_mx(yt, torch.float8_e4m3fn, 32, Mode.RCEIL)
        return data, to_blocked(scale.view(-1, yt.shape[-1] // 32))


class SwigluColwise(torch.nn.Module):
    """silu(gate) * up quantized along dim 0 by torchao's to_mx on the
    transpose (MXFP8 RCEIL); `both`: the rowwise copy first."""

    def __init__(self, both=False):
        super().__init__()
        self.both = both

    def forward(self, gate, up):
        y = F.silu(gate) * up
        scale, data = to_mx(y.t().contiguous(), torch.float8_e4m3fn, 32,
                            Mode.RCEIL)
        if not self.both:
            return data, scale
        rscale, rdata = to_mx(y, torch.float8_e4m3fn, 32, Mode.RCEIL)
        return rdata, rscale, data, scale


class Fp8Grouped(torch.nn.Module):
    """FP8 with f32 scales per row (torchao.float8's rowwise / axiswise
    recipe, group = N) or per 1x128 token group (DeepSeek-V3, vLLM's
    per_token_group_quant_fp8 after SiLU·mul): the FP8 block formats.
    `ue8m0`: the scale rounded up to a power of two as vLLM's scale_ue8m0
    writes it (exp2(ceil(log2(s)))); `act`: the activation (default SiLU);
    N-d inputs are grouped along the last dimension."""

    def __init__(self, group=None, gated=False, ue8m0=False, act=F.silu):
        super().__init__()
        self.group, self.gated, self.ue8m0, self.act = group, gated, ue8m0, act

    def forward(self, x):
        n = x.shape[-1]
        if self.gated:
            y = F.silu(x[..., : n // 2]) * x[..., n // 2:]
        else:
            y = self.act(x)
        y = y.float()
        g = self.group or y.shape[-1]
        blocks = y.reshape(*y.shape[:-1], y.shape[-1] // g, g)
        amax = blocks.abs().amax(dim=-1, keepdim=True).clamp(min=1e-10)
        scale = amax / 448.0
        if self.ue8m0:
            scale = torch.exp2(torch.ceil(torch.log2(scale)))
        q = (blocks / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
        return q.reshape(*y.shape), scale.reshape(*y.shape[:-1], -1)


class Fp8WeightTiles(torch.nn.Module):
    """FP8 with one f32 scale per 2D tile of a weight. `ao=False`: DeepSeek-
    V3's 128x128 weight quantizer written in torch (amax over dims 1 and 3
    of [M/T, T, N/T, T], clamp(min=1e-4), s = amax / 448, x / s); `ao=True`:
    torchao's blockwise FP8 training quantizer
    (torch_blockwise_scale_weight_quant: scale = 448 / amax in f64, x * scale,
    1 / scale returned)."""

    def __init__(self, tile=128, ao=False):
        super().__init__()
        self.tile, self.ao = tile, ao

    def forward(self, w):
        if self.ao:
            return torch_blockwise_scale_weight_quant(w, self.tile)
        m, n = w.shape
        t = self.tile
        tiles = w.float().reshape(m // t, t, n // t, t)
        amax = tiles.abs().amax(dim=(1, 3), keepdim=True).clamp(min=1e-4)
        s = amax / 448.0
        q = (tiles / s).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
        return q.reshape(m, n), s.reshape(m // t, n // t)


class ActAoGroups(torch.nn.Module):
    """act(x) quantized by torchao's blockwise FP8 training quantizer of
    activations (torch_blockwise_scale_act_quant_lhs: 1x128 groups, scale =
    448 / amax in f64, x * scale, 1 / scale returned in column-major
    storage)."""

    def __init__(self, act, gated=False):
        super().__init__()
        self.act, self.gated = act, gated

    def forward(self, x):
        if self.gated:
            gate, up = x.chunk(2, dim=-1)
            return torch_blockwise_scale_act_quant_lhs(self.act(gate) * up, 128)
        return torch_blockwise_scale_act_quant_lhs(self.act(x), 128)


class HandFp8Tensor(torch.nn.Module):
    """A plain-torch FP8 per-tensor quantizer: torch.amax of the whole
    tensor (torch-mlir reduces rows first, then the row maxima), scale =
    max / amax with a 1e-12 floor, or (where_guard) torch.where(amax > 0,
    max / amax, 1) as people write it, without TE's clamp of an infinite
    scale to FLT_MAX."""

    def __init__(self, act, elem=torch.float8_e4m3fn, where_guard=False):
        super().__init__()
        self.act, self.elem, self.where_guard = act, elem, where_guard

    def forward(self, x):
        y = self.act(x).float()
        top = torch.finfo(self.elem).max
        amax = torch.amax(torch.abs(y))
        if self.where_guard:
            scale = torch.where(amax > 0, top / amax, torch.ones_like(amax))
        else:
            scale = top / amax.clamp(min=1e-12)
        return (y * scale).clamp(-top, top).to(self.elem), scale.reciprocal()


class SwigluMx(torch.nn.Module):
    """act(gate) * up quantized by torchao's to_mx (SwiGLU by default; GeGLU
    with F.gelu, the exact GELU, as diffusers' GEGLU writes it)."""

    def __init__(self, mode=Mode.RCEIL, act=F.silu):
        super().__init__()
        self.mode, self.act = mode, act

    def forward(self, gate, up):
        scale, data = to_mx(self.act(gate) * up, torch.float8_e4m3fn, 32,
                            self.mode)
        return data, scale


class HandMx(torch.nn.Module):
    """A plain-torch MXFP8 quantizer: FLOOR scale by log2/floor/exp2."""

    def __init__(self, act):
        super().__init__()
        self.act = act

    def forward(self, x):
        y = self.act(x).float()
        t, n = y.shape
        blocks = y.reshape(t, n // 32, 32)
        amax = blocks.abs().amax(dim=-1, keepdim=True)
        e = torch.floor(torch.log2(amax)) - 8
        e = torch.clamp(e, -127, 127)
        scale = torch.exp2(e)
        q = torch.clamp(blocks / scale, -448.0, 448.0).to(torch.float8_e4m3fn)
        byte = (e + 127).to(torch.uint8)
        return q.reshape(t, n), byte.reshape(t, n // 32)


class GdnGates(torch.nn.Module):
    """Qwen3-Next's Gated-DeltaNet gates from separate in_proj_a / in_proj_b
    Linears (bias-free, the model's dtype) and f32 A_log / dt_bias."""

    def __init__(self, hidden, heads, dtype):
        super().__init__()
        self.in_proj_a = torch.nn.Linear(hidden, heads, bias=False, dtype=dtype)
        self.in_proj_b = torch.nn.Linear(hidden, heads, bias=False, dtype=dtype)
        self.A_log = torch.nn.Parameter(torch.randn(heads))
        self.dt_bias = torch.nn.Parameter(torch.randn(heads))

    def gates(self, a, b):
        beta = b.sigmoid()
        g = -self.A_log.float().exp() * F.softplus(a.float() + self.dt_bias)
        return g, beta

    def forward(self, x):
        return self.gates(self.in_proj_a(x), self.in_proj_b(x))


class GdnGatesEinsum(GdnGates):
    """The gates with the projections as torch.einsum over the weight
    arguments ([H, K], "bsk,hk->bsh")."""

    def forward(self, x, wa, wb):
        return self.gates(torch.einsum("bsk,hk->bsh", x, wa),
                          torch.einsum("bsk,hk->bsh", x, wb))


class GdnGatesBA(GdnGates):
    """The gates from Qwen3-Next's one in_proj_ba Linear. interleaved=True:
    its output viewed as [..., num_k_heads, 2 * r] and split into b and a
    inside each key-head group (fix_query_key_value_ordering); False: the
    b rows stacked above the a rows, then split in two."""

    def __init__(self, hidden, k_heads, v_heads, dtype, interleaved):
        super().__init__(hidden, v_heads, dtype)
        del self.in_proj_a, self.in_proj_b
        self.in_proj_ba = torch.nn.Linear(hidden, 2 * v_heads, bias=False,
                                          dtype=dtype)
        self.k, self.v, self.interleaved = k_heads, v_heads, interleaved

    def forward(self, x):
        ba = self.in_proj_ba(x)
        lead = x.shape[:-1]
        if self.interleaved:
            r = self.v // self.k
            ba = ba.view(*lead, self.k, 2 * r)
            b, a = torch.split(ba, [r, r], dim=-1)
            b, a = b.reshape(*lead, self.v), a.reshape(*lead, self.v)
        else:
            b, a = torch.split(ba, [self.v, self.v], dim=-1)
        return self.gates(a, b)


class GdnGatesBAArg(GdnGatesBA):
    """The interleaved in_proj_ba with its weight passed in (a served model's
    weights are inputs of the compiled function, not constants): the split
    parts read the weight in place."""

    def __init__(self, hidden, k_heads, v_heads, dtype):
        super().__init__(hidden, k_heads, v_heads, dtype, True)
        del self.in_proj_ba

    def forward(self, x, w):
        ba = F.linear(x, w)
        lead = x.shape[:-1]
        r = self.v // self.k
        ba = ba.view(*lead, self.k, 2 * r)
        b, a = torch.split(ba, [r, r], dim=-1)
        b, a = b.reshape(*lead, self.v), a.reshape(*lead, self.v)
        return self.gates(a, b)


class GdnGatesVllm(GdnGates):
    """The gates as vLLM's torch reference of fused_gdn_gating writes them:
    softplus spelled out with torch.where (beta 1, threshold 20), the
    A_log exponential first, beta from b.float()."""

    def gates(self, a, b):
        x = a.float() + self.dt_bias.float()
        sp = torch.where(1.0 * x <= 20.0,
                         (1.0 / 1.0) * torch.log(1 + torch.exp(1.0 * x)), x)
        g = -torch.exp(self.A_log.float()) * sp
        return g, b.float().sigmoid()


class GdnGatesFla(GdnGates):
    """The gates as flash-linear-attention's GatedDeltaNet writes them:
    beta = b.sigmoid() * 2 with allow_neg_eigval (else as returned),
    or (widen=True) beta = b.sigmoid().float(); softplus as torch.logaddexp(t, 0)
    when logaddexp is set (the overflow-safe form)."""

    def __init__(self, hidden, heads, dtype, neg_eigval=True, widen=False,
                 logaddexp=False):
        super().__init__(hidden, heads, dtype)
        self.neg, self.widen, self.lae = neg_eigval, widen, logaddexp

    def gates(self, a, b):
        beta = b.sigmoid()
        if self.widen:
            beta = beta.float()
        if self.neg:
            beta = beta * 2.0
        t = a.float() + self.dt_bias
        sp = torch.logaddexp(t, torch.zeros_like(t)) if self.lae else F.softplus(t)
        return -self.A_log.float().exp() * sp, beta


class FfnArg(torch.nn.Module):
    """A Llama FFN front whose weights are arguments (a served model's), as
    F.linear over separate w1 / w3 or one stacked w13 chunked in two, or
    (matmul=True) x @ w.t() with SiLU spelled g * sigmoid(g), or (einsum:
    the equation of one projection, e.g. "...k,hk->...h") torch.einsum,
    which torch-mlir writes as a batch-1 linalg.batch_matmul; quantized to
    MXFP8 (to_mx, RCEIL)."""

    def __init__(self, stacked=False, matmul=False, einsum=None):
        super().__init__()
        self.stacked, self.matmul, self.einsum = stacked, matmul, einsum

    def forward(self, x, w1, w3=None):
        if self.einsum:
            h = F.silu(torch.einsum(self.einsum, x, w1)) * \
                torch.einsum(self.einsum, x, w3)
        elif self.stacked:
            g, u = F.linear(x, w1).chunk(2, dim=-1)
            h = F.silu(g) * u
        elif self.matmul:
            g, u = torch.matmul(x, w1.t()), torch.matmul(x, w3.t())
            h = g * torch.sigmoid(g) * u
        else:
            h = F.silu(F.linear(x, w1)) * F.linear(x, w3)
        scale, data = to_mx(h, torch.float8_e4m3fn, 32, Mode.RCEIL)
        return data, scale


def oss_swiglu(x, alpha=1.702, limit=7.0):
    """GPT-OSS's SwiGLU on its interleaved [gate, up, gate, up, ...] tensor:
    gate clamped from above, up clamped both ways and offset by one."""
    x_glu, x_linear = x[..., ::2], x[..., 1::2]
    x_glu = x_glu.clamp(min=None, max=limit)
    x_linear = x_linear.clamp(min=-limit, max=limit)
    out_glu = x_glu * torch.sigmoid(alpha * x_glu)
    return out_glu * (x_linear + 1)


class GptOssMlp(torch.nn.Module):
    """GPT-OSS's MLP front for one expert as a dense call (after routing):
    one biased Linear(K, 2H) whose output columns interleave gate and up,
    the clamped SwiGLU (oss_swiglu), then `quant` (a quantizer module whose
    activation is oss_swiglu)."""

    def __init__(self, hidden, inter, dtype, quant):
        super().__init__()
        self.mlp1 = torch.nn.Linear(hidden, 2 * inter, bias=True, dtype=dtype)
        self.quant = quant

    def forward(self, x):
        return self.quant(self.mlp1(x))


class GptOssExpertHf(torch.nn.Module):
    """transformers' GptOssExperts for one expert as a dense call: x @
    gate_up_proj ([K, 2H], the columns interleaving gate and up) +
    gate_up_proj_bias, gate / up as every other column, HF's spelling of
    the clamped SwiGLU ((up + 1) * gate * sigmoid(gate * alpha)), MXFP8."""

    def __init__(self, hidden, inter, dtype):
        super().__init__()
        self.gate_up_proj = torch.nn.Parameter(
            (torch.randn(hidden, 2 * inter) / hidden ** 0.5).to(dtype))
        self.gate_up_proj_bias = torch.nn.Parameter(
            (torch.randn(2 * inter) * 0.1).to(dtype))
        self.alpha, self.limit = 1.702, 7.0

    def forward(self, x):
        gate_up = x @ self.gate_up_proj + self.gate_up_proj_bias
        gate, up = gate_up[..., ::2], gate_up[..., 1::2]
        gate = gate.clamp(min=None, max=self.limit)
        up = up.clamp(min=-self.limit, max=self.limit)
        glu = gate * torch.sigmoid(gate * self.alpha)
        scale, data = to_mx((up + 1) * glu, torch.float8_e4m3fn, 32, Mode.RCEIL)
        return data, scale


class Ffn(torch.nn.Module):
    """A Llama FFN front: silu(w1 x) * w3 x, from separate w1 / w3 Linears
    or one stacked w13 Linear chunked in two, with biases when bias is set
    (bias="gate": on the separate gate Linear only);
    quantized to MXFP8 (torchao's to_mx, RCEIL; FLOOR for another `act`,
    such as Gemma's tanh GELU) when mx is set."""

    def __init__(self, hidden, inter, dtype, stacked=False, mx=False, bias=False,
                 act=F.silu):
        super().__init__()
        self.stacked, self.mx, self.act = stacked, mx, act
        if stacked:
            self.w13 = torch.nn.Linear(hidden, 2 * inter, bias=bias, dtype=dtype)
        else:
            self.w1 = torch.nn.Linear(hidden, inter, bias=bool(bias), dtype=dtype)
            self.w3 = torch.nn.Linear(hidden, inter, bias=bias is True, dtype=dtype)

    def forward(self, x):
        if self.stacked:
            g, u = self.w13(x).chunk(2, dim=-1)
        else:
            g, u = self.w1(x), self.w3(x)
        h = self.act(g) * u
        if not self.mx:
            return h
        scale, data = to_mx(h, torch.float8_e4m3fn, 32,
                            Mode.RCEIL if self.act is F.silu else Mode.FLOOR)
        return data, scale


class FfnQuant(torch.nn.Module):
    """A Llama FFN front over one stacked w13 Linear feeding a quantizer
    module `q`: packed=True hands q the [gate | up] result (q computes the
    SiLU·mul itself, as vLLM's and DeepSeek's per-token-group references
    do); otherwise q gets silu(gate) * up of its chunks."""

    def __init__(self, q, hidden, inter, dtype, packed=False):
        super().__init__()
        self.q, self.packed = q, packed
        self.w13 = torch.nn.Linear(hidden, 2 * inter, bias=False, dtype=dtype)

    def forward(self, x):
        y = self.w13(x)
        if self.packed:
            return self.q(y)
        g, u = y.chunk(2, dim=-1)
        return self.q(F.silu(g) * u)


class FfnCat(torch.nn.Module):
    """Separate w1 / w3 Linears concatenated into one [gate | up] tensor
    (torch.cat) for a quantizer module that splits it again."""

    def __init__(self, q, hidden, inter, dtype):
        super().__init__()
        self.q = q
        self.w1 = torch.nn.Linear(hidden, inter, bias=False, dtype=dtype)
        self.w3 = torch.nn.Linear(hidden, inter, bias=False, dtype=dtype)

    def forward(self, x):
        return self.q(torch.cat([self.w1(x), self.w3(x)], dim=-1))


def _identity(t):
    return t


def _gated_grads(act):
    def grads(gate, up, grad):
        gate = gate.detach().requires_grad_()
        up = up.detach().requires_grad_()
        return torch.autograd.grad(act(gate) * up, (gate, up), grad)
    return grads


def _act_grad(act):
    def grad_x(x, grad):
        x = x.detach().requires_grad_()
        return torch.autograd.grad(act(x), (x,), grad)[0]
    return grad_x


class ActBwdMx(torch.nn.Module):
    """An activation's backward as autograd computes it (make_fx with torch's
    core decompositions: gelu_backward / silu_backward become arithmetic),
    quantized by torchao's to_mx; with `dbias`, also the column sum of the
    gradient (the bias gradient of the Linear before the activation)."""

    def __init__(self, act, args, dbias=False):
        super().__init__()
        self.grad = make_fx(_act_grad(act),
                            decomposition_table=core_aten_decompositions())(*args)
        self.dbias = dbias

    def forward(self, x, grad):
        dx = self.grad(x, grad)
        scale, data = to_mx(dx, torch.float8_e4m3fn, 32, Mode.RCEIL)
        return (data, scale, dx.sum(0)) if self.dbias else (data, scale)


class SwigluBwdMx(torch.nn.Module):
    """SwiGLU backward as autograd computes it (make_fx of autograd.grad of
    silu(gate) * up with torch's core decompositions: silu_backward becomes
    sigmoid arithmetic, and torch-mlir's CSE leaves one sigmoid shared by
    the dgate and dup halves), [dgate | dup] quantized by torchao's to_mx."""

    def __init__(self, args, act=F.silu):
        super().__init__()
        self.grads = make_fx(_gated_grads(act),
                             decomposition_table=core_aten_decompositions())(*args)

    def forward(self, gate, up, grad):
        dgate, dup = self.grads(gate, up, grad)
        scale, data = to_mx(torch.cat([dgate, dup], dim=-1),
                            torch.float8_e4m3fn, 32, Mode.RCEIL)
        return data, scale


class DSwigluHand(torch.nn.Module):
    """SwiGLU backward written by hand as TransformerEngine's references
    write it: x = [gate | up] widened first (`x.float().chunk(2, -1)`),
    [dgate | dup] = [grad·up·silu'(gate) | grad·silu(gate)], then FP8:
    `tensor` = current scaling per tensor with its transposed copy (TE's
    dswiglu + cast-transpose), `group` = 1x128 groups (DeepSeek-V3)."""

    def __init__(self, quant):
        super().__init__()
        self.quant = quant

    def forward(self, grad, x):
        g, u = x.float().chunk(2, -1)
        sg = torch.sigmoid(g)
        d = torch.cat([grad.float() * u * (sg * (1 + g * (1 - sg))),
                       grad.float() * (g * sg)], -1)
        if self.quant == "tensor":
            scale = 448.0 / torch.clamp(d.abs().max(), min=1e-12)
            q = (d * scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
            return q, q.t().contiguous(), 1.0 / scale
        b = d.view(d.shape[0], -1, 128)
        sc = b.abs().amax(-1, keepdim=True).clamp(min=1e-10) / 448.0
        q = (b / sc).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
        return q.flatten(-2), sc.squeeze(-1)


class Fp8PerToken(torch.nn.Module):
    """Plain-torch FP8 with one f32 scale per row (vLLM's dynamic per-token
    quantization written in torch): amax by torch.max(abs, dim=-1), scale
    amax / 448 floored at 1e-12, data x / scale (or x * (1 / scale))."""

    def __init__(self, act, recip=False):
        super().__init__()
        self.act, self.recip = act, recip

    def forward(self, v):
        h = self.act(v)
        amax = torch.max(torch.abs(h), dim=-1, keepdim=True).values.float()
        scale = amax.clamp(min=1e-12) / 448.0
        hq = h.float() * (1.0 / scale) if self.recip else h.float() / scale
        return hq.clamp(-448, 448).to(torch.float8_e4m3fn), scale


class SwigluChunkMx(torch.nn.Module):
    """SwiGLU on one [gate | up] tensor split by chunk (a fused gate/up
    projection's output), quantized by torchao's to_mx."""

    def forward(self, gu):
        gate, up = gu.chunk(2, dim=-1)
        scale, data = to_mx(F.silu(gate) * up, torch.float8_e4m3fn, 32,
                            Mode.RCEIL)
        return data, scale


class OtherSpellings(torch.nn.Module):
    """Quantizers spelled as a user might, not as the libraries do.
    kind "maxdim_group": per-token-group FP8 after SiLU with torch.max(dim)
    .values, a view to [M, N/128, 128], torch.finfo(...).max and
    torch.clamp(min=, max=); "split_swiglu_group": SwiGLU on x.split(...)
    into per-token-group FP8; "max_tensorwise": FP8 per tensor after tanh
    GELU with torch.max() of |y| (no dim), scale = 448 / amax multiplied in,
    its reciprocal returned."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    def forward(self, x):
        if self.kind == "max_tensorwise":
            y = F.gelu(x, approximate="tanh").float()
            amax = torch.max(torch.abs(y))
            scale = 448.0 / torch.clamp(amax, min=1e-12)
            q = torch.clamp(y * scale, -448.0, 448.0).to(torch.float8_e4m3fn)
            return q, scale.reciprocal()
        if self.kind == "split_swiglu_group":
            gate, up = x.split(x.shape[-1] // 2, dim=-1)
            y = (F.silu(gate) * up).float()
            b = y.reshape(y.shape[0], y.shape[1] // 128, 128)
            amax = b.abs().amax(-1, keepdim=True).clamp(min=1e-10)
        else:
            y = F.silu(x).float()
            b = y.view(y.shape[0], -1, 128)
            amax = torch.clamp(torch.max(b.abs(), dim=-1, keepdim=True).values, min=1e-10)
        s = amax / torch.finfo(torch.float8_e4m3fn).max
        q = torch.clamp(b / s, min=-448.0, max=448.0).to(torch.float8_e4m3fn)
        return q.reshape(y.shape), s.reshape(y.shape[0], -1)


class VllmGroup(torch.nn.Module):
    """act(x) quantized by the torch reference of vLLM's
    per_token_group_quant_fp8: the tensor flattened to [numel / 128, 128]
    groups, amax clamped at 1e-10 in the input's type (so 1e-10 rounded to
    bf16 for a bf16 input), .float() / 448, x / s, clamp, cast. `gated`:
    silu(gate) * up of a [gate | up] input; `col_major`: the scales returned
    transposed ([groups, tokens], DeepGEMM's layout, as SGLang's
    column_major_scales)."""

    def __init__(self, act, gated=False, col_major=False):
        super().__init__()
        self.act, self.gated, self.col_major = act, gated, col_major

    def forward(self, x):
        if self.gated:
            d = x.shape[-1] // 2
            x = self.act(x[..., :d]) * x[..., d:]
        else:
            x = self.act(x)
        g = x.reshape(x.numel() // 128, 128)
        amax = g.abs().max(dim=-1, keepdim=True)[0].clamp(min=1e-10).to(torch.float32)
        s = amax / 448.0
        q = (g / s).clamp(min=-448.0, max=448.0).to(torch.float8_e4m3fn)
        s = s.reshape(x.shape[:-1] + (x.shape[-1] // 128,))
        return q.reshape(x.shape), (s.t().contiguous() if self.col_major else s)


class Fp8Delayed(torch.nn.Module):
    """FP8 per tensor with delayed scaling as a TransformerEngine user
    writes it in torch: the scale is an argument (TE keeps it from its amax
    history), codes `(y * scale).clamp(-max, max).to(fp8)` (`clamp=False`:
    the cast alone, which saturates in torch >= 2.12), and TE's amax for the
    history `y.abs().amax()` returned beside them (`amax=False`: none).
    `gated`: silu(gate) * up of two inputs; `f32`: the activation computed
    on y.float(); `scale_inv`: scale.reciprocal() returned too (TE's
    scale_inv)."""

    def __init__(self, act, elem=torch.float8_e4m3fn, amax=True, clamp=True,
                 gated=False, f32=False, scale_inv=False):
        super().__init__()
        self.act, self.elem, self.amax, self.clamp = act, elem, amax, clamp
        self.gated, self.f32, self.scale_inv = gated, f32, scale_inv

    def forward(self, *args):
        scale = args[-1]
        if self.gated:
            y = self.act(args[0]) * args[1]
        else:
            y = self.act(args[0].float() if self.f32 else args[0])
        m = torch.finfo(self.elem).max
        z = y.float() * scale
        q = (z.clamp(-m, m) if self.clamp else z).to(self.elem)
        outs = (q,)
        if self.scale_inv:
            outs += (scale.reciprocal(),)
        if self.amax:
            outs += (y.abs().amax().float(),)
        return outs if len(outs) > 1 else q


class Fp8DelayedX(Fp8Delayed):
    """Fp8Delayed of one input with named arguments (dynamic shapes)."""

    def forward(self, x, scale):
        return super().forward(x, scale)


class TeCurrentHand(torch.nn.Module):
    """TransformerEngine's current scaling written by hand in torch: amax of
    the f32 activation, scale = where(amax > 0, 448 / amax, 1), codes
    (y * scale).clamp(-448, 448), scale_inv = 1 / scale, amax returned."""

    def __init__(self, act):
        super().__init__()
        self.act = act

    def forward(self, x):
        y = self.act(x).float()
        amax = y.abs().max()
        scale = torch.where(amax > 0, 448.0 / amax, torch.ones_like(amax))
        q = (y * scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
        return q, scale.reciprocal(), amax


class FfnDelayed(torch.nn.Module):
    """A Llama FFN front quantized to FP8 with delayed scaling, as a
    TransformerEngine user writes it in torch: gate/up Linears (separate, or
    one stacked w13 chunked in two), silu(g) * u, then
    `(h.float() * scale).clamp(-max, max).to(fp8)` with the scale an
    argument, and TE's amax for the history `h.abs().amax()` beside the
    codes (`amax=False`: none)."""

    def __init__(self, hidden, inter, dtype, stacked=False, elem=torch.float8_e4m3fn,
                 amax=True):
        super().__init__()
        self.stacked, self.elem, self.amax = stacked, elem, amax
        if stacked:
            self.w13 = torch.nn.Linear(hidden, 2 * inter, bias=False, dtype=dtype)
        else:
            self.w1 = torch.nn.Linear(hidden, inter, bias=False, dtype=dtype)
            self.w3 = torch.nn.Linear(hidden, inter, bias=False, dtype=dtype)

    def forward(self, x, scale):
        if self.stacked:
            g, u = self.w13(x).chunk(2, dim=-1)
        else:
            g, u = self.w1(x), self.w3(x)
        h = F.silu(g) * u
        m = torch.finfo(self.elem).max
        q = (h.float() * scale).clamp(-m, m).to(self.elem)
        if not self.amax:
            return q
        return q, h.abs().amax().float()


class Fp8Static(torch.nn.Module):
    """FP8 per tensor with a static scale, a registered buffer (torch-mlir
    exports it as a constant): `(act(x).float() * scale)` as a
    TransformerEngine-exported model writes it, or `/ scale` (divide=True)
    as vLLM's static FP8 activation quantizer does; clamped, cast."""

    def __init__(self, act, scale, divide=False):
        super().__init__()
        self.act, self.divide = act, divide
        self.register_buffer("scale", torch.tensor([scale]))

    def forward(self, x):
        y = self.act(x).float()
        y = y / self.scale if self.divide else y * self.scale
        return y.clamp(-448.0, 448.0).to(torch.float8_e4m3fn)


class FfnStatic(torch.nn.Module):
    """The Llama FFN front quantized to FP8 with a static scale buffer
    (multiplied), scale_inv returned beside the codes."""

    def __init__(self, hidden, inter, dtype, scale):
        super().__init__()
        self.w1 = torch.nn.Linear(hidden, inter, bias=False, dtype=dtype)
        self.w3 = torch.nn.Linear(hidden, inter, bias=False, dtype=dtype)
        self.register_buffer("scale", torch.tensor(scale))

    def forward(self, x):
        h = F.silu(self.w1(x)) * self.w3(x)
        q = (h.float() * self.scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
        return q, self.scale.reciprocal()


class FfnQdq(torch.nn.Module):
    """A Llama MLP simulated in FP8 (quantize-dequantize, as a model
    exported for FP8 inference without a scaled GEMM writes it): gate/up
    Linears, SwiGLU, `(h.float() / s).clamp().to(fp8)`, dequantized back to
    bf16 (`q.float() * s`), then the down Linear."""

    def __init__(self, hidden, inter, dtype, scale):
        super().__init__()
        self.w1 = torch.nn.Linear(hidden, inter, bias=False, dtype=dtype)
        self.w3 = torch.nn.Linear(hidden, inter, bias=False, dtype=dtype)
        self.w2 = torch.nn.Linear(inter, hidden, bias=False, dtype=dtype)
        self.register_buffer("scale", torch.tensor(scale))

    def forward(self, x):
        h = F.silu(self.w1(x)) * self.w3(x)
        q = (h.float() / self.scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
        return self.w2((q.float() * self.scale).to(x.dtype))


def gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


def programs():
    torch.manual_seed(0)

    def x(shape, dtype, scale=4.0):
        return (torch.randn(*shape) * scale).to(dtype)

    bf, f32 = torch.bfloat16, torch.float32
    yield "silu_mxfp8_rceil_bf16", ActMx(F.silu), (x((4, 64), bf),)
    yield "silu_mxfp8_rceil_f32", ActMx(F.silu), (x((4, 64), f32),)
    yield "silu_mxfp8_floor_f32", ActMx(F.silu, mode=Mode.FLOOR), (x((4, 64), f32),)
    yield "silu_mxfp8_floor_bf16", ActMx(F.silu, mode=Mode.FLOOR), (x((4, 64), bf),)
    yield "gelu_mxfp8_rceil_bf16", ActMx(F.gelu), (x((4, 64), bf),)
    yield "gelu_tanh_mxfp8_rceil_f32", ActMx(gelu_tanh), (x((4, 64), f32),)
    yield "gelu_tanh_mxfp8_rceil_bf16", ActMx(gelu_tanh), (x((4, 64), bf),)
    yield "relu_mxfp8_rceil_f32", ActMx(F.relu), (x((4, 64), f32),)
    yield "silu_mxfp8e5m2_rceil_bf16", ActMx(F.silu, torch.float8_e5m2), (x((4, 64), bf),)
    yield "silu_mxfp8_rceil_bf16_3d", ActMx(F.silu), (x((2, 4, 64), bf),)
    yield "swiglu_mxfp8_rceil_bf16", SwigluMx(), (x((4, 64), bf), x((4, 64), bf))
    yield "swiglu_mxfp8_rceil_f32", SwigluMx(), (x((4, 64), f32), x((4, 64), f32))
    yield "hand_silu_mxfp8_floor_f32", HandMx(F.silu), (x((4, 64), f32),)
    # Paired projections (GDN gates, the FFN front): hidden 64, 8 heads /
    # intermediate 32, the models' Linear weights as parameters.
    yield "gdn_bf16_n1", GdnGates(64, 8, bf), (x((1, 64), bf, 1.0),)
    yield "gdn_bf16_3d_n4", GdnGates(64, 8, bf), (x((1, 4, 64), bf, 1.0),)
    yield "gdn_f32_n1", GdnGates(64, 8, f32), (x((1, 64), f32, 1.0),)
    yield "gdn_f32_n24", GdnGates(64, 8, f32), (x((24, 64), f32, 1.0),)
    yield "gdn_ba_stacked_bf16", GdnGatesBA(64, 4, 8, bf, False), (x((2, 64), bf, 1.0),)
    yield "gdn_ba_interleaved_bf16", GdnGatesBA(64, 4, 8, bf, True), (x((1, 2, 64), bf, 1.0),)
    yield "ffn_bf16", Ffn(64, 32, bf), (x((4, 64), bf, 1.0),)
    yield "ffn_f32", Ffn(64, 32, f32), (x((4, 64), f32, 1.0),)
    yield "ffn13_bf16_3d", Ffn(64, 32, bf, stacked=True), (x((2, 3, 64), bf, 1.0),)
    yield "ffn_mxfp8_bf16", Ffn(64, 32, bf, mx=True), (x((4, 64), bf, 1.0),)
    yield "ffn_mxfp8_f32", Ffn(64, 32, f32, mx=True), (x((4, 64), f32, 1.0),)
    yield "ffn13_mxfp8_bf16_n32", Ffn(64, 32, bf, stacked=True, mx=True), (x((32, 64), bf, 1.0),)
    # Other torchao formats: MXFP4 (raised), FP8 tensorwise and NVFP4
    # (declined with their reasons; lowered unfused).
    yield "silu_mxfp4_rceil_bf16", ActMx4(F.silu), (x((4, 64), bf),)
    yield "gelu_mxfp4_floor_f32", ActMx4(F.gelu, Mode.FLOOR), (x((4, 64), f32),)
    yield "silu_fp8_tensorwise_bf16", ActFp8Tensorwise(F.silu), (x((4, 64), bf),)
    yield "silu_nvfp4_bf16", ActNvfp4(F.silu), (x((4, 64), bf),)
    # Gated backward from autograd (one sigmoid shared by both halves).
    for name, dt in (("swiglu_bwd_mxfp8_rceil_bf16", bf),
                     ("swiglu_bwd_mxfp8_rceil_f32", f32)):
        a = (x((4, 64), dt), x((4, 64), dt), x((4, 64), dt, 1.0))
        yield name, SwigluBwdMx(a), a
    # FP8 tensorwise on a 3-D activation and in f32.
    yield "silu_fp8_tensorwise_bf16_3d", ActFp8Tensorwise(F.silu), (x((2, 4, 64), bf),)
    yield "gelu_fp8_tensorwise_f32", ActFp8Tensorwise(F.gelu), (x((4, 64), f32),)
    # NVFP4 without a per-tensor scale, and on a 3-D f32 activation.
    yield "silu_nvfp4_block_bf16", ActNvfp4(F.silu, per_tensor=False), (x((4, 64), bf),)
    yield "gelu_nvfp4_f32_3d", ActNvfp4(F.gelu), (x((2, 4, 64), f32),)
    yield "relu_nvfp4_scale_bf16", ActNvfp4(F.relu, return_scale=True), \
        (x((8, 48), bf),)
    # Dynamic leading sizes (torch.export Dim): tensor<?x..>, tensor.dim.
    rows = {"x": {0: torch.export.Dim("T", min=2, max=1 << 20)}}
    yield "silu_mxfp8_rceil_bf16_dyn", ActMx(F.silu), (x((6, 64), bf),), rows
    yield "gelu_fp8_tensorwise_f32_dyn", ActFp8Tensorwise(F.gelu), \
        (x((5, 64), f32),), rows
    yield "silu_nvfp4_bf16_dyn", ActNvfp4(F.silu), (x((3, 32), bf),), rows
    yield "relu_mxfp4_floor_f32_dyn3d", ActMx4(F.relu, Mode.FLOOR), \
        (x((2, 3, 64), f32),), {"x": {0: torch.export.Dim("B", min=2, max=64)}}
    # (New programs go last: the inputs of the others stay as drawn.)
    # Swizzled scales (torchao's to_blocked), padded and not; a 3-D input;
    # NVFP4. Squared ReLU. FP8 with f32 per-row / 1x128-group scales.
    yield "silu_mxfp8_rceil_bf16_blocked", ActMxBlocked(F.silu), (x((4, 64), bf),)
    yield "silu_mxfp8_rceil_bf16_blocked_128", ActMxBlocked(F.silu), \
        (x((128, 128), bf),)
    yield "gelu_mxfp8_floor_f32_blocked_3d", ActMxBlocked(F.gelu, Mode.FLOOR), \
        (x((2, 3, 64), f32),)
    yield "silu_nvfp4_bf16_blocked", ActMxBlocked(F.silu, nvfp4=True), \
        (x((4, 64), bf),)
    yield "relu2_mxfp8_rceil_bf16", ActMx(lambda v: F.relu(v) ** 2), (x((4, 64), bf),)
    yield "silu_fp8_rowwise_bf16", Fp8Grouped(), (x((4, 64), bf),)
    yield "swiglu_fp8_group128_bf16", Fp8Grouped(128, gated=True), (x((4, 512), bf),)
    # Plain-torch FP8 per tensor: a staged amax (raised), a where guard
    # without TE's FLT_MAX clamp (declined for it), f16.
    yield "silu_fp8_hand_amax_bf16", HandFp8Tensor(F.silu), (x((4, 64), bf),)
    yield "silu_fp8e5m2_hand_where_f16", \
        HandFp8Tensor(F.silu, torch.float8_e5m2, where_guard=True), \
        (x((4, 64), torch.float16),)
    # FP8 1x128 groups: UE8M0 scales as vLLM writes them (exact for bf16
    # values: raised), the same on f32 values (log2 rounds to the integer
    # one ulp above a power of two: declined), GELU on a 3-d f32 input.
    yield "swiglu_fp8_group128_ue8m0_bf16", Fp8Grouped(128, gated=True, ue8m0=True), \
        (x((4, 512), bf),)
    yield "silu_fp8_group128_ue8m0_f32", Fp8Grouped(128, ue8m0=True), (x((4, 256), f32),)
    yield "gelu_fp8_group128_f32_3d", Fp8Grouped(128, act=F.gelu), (x((2, 3, 256), f32),)
    # 2D tiles of a weight (no activation): DeepSeek-V3's x / s in torch
    # (raised, block = 128x128) and torchao's blockwise training quantizers
    # (x * (448 / amax)), for 128x128 weight tiles and 1x128 groups after SiLU.
    yield "fp8_weight_tiles_f32", Fp8WeightTiles(), (x((256, 256), f32),)
    yield "ao_fp8_weight_tiles_bf16", Fp8WeightTiles(ao=True), (x((256, 256), bf),)
    yield "silu_ao_fp8_groups_bf16", ActAoGroups(F.silu), (x((4, 256), bf),)
    # torchao's blockwise act quantizer after SwiGLU (bf16), GELU (f32) and
    # SiLU on a 3-D input (its scales reshaped to [B, T * N / 128]).
    yield "swiglu_ao_fp8_groups_bf16", ActAoGroups(F.silu, gated=True), \
        (x((4, 512), bf),)
    yield "gelu_ao_fp8_groups_f32", ActAoGroups(F.gelu), (x((4, 256), f32),)
    yield "silu_ao_fp8_groups_bf16_3d", ActAoGroups(F.silu), (x((2, 2, 256), bf),)
    # NVFP4 with swizzled scales past the check's 2^18 elements: checked on
    # a copy of two 128-row tiles by two tiles of 64 columns.
    yield "silu_nvfp4_bf16_blocked_256x1088", ActMxBlocked(F.silu, nvfp4=True), \
        (x((256, 1088), bf),)
    # torchao.float8's rowwise scaling (multiplier scale returned), with and
    # without scales rounded down to powers of two (its "rowwise" recipe).
    yield "silu_ao_fp8_rowwise_bf16", ActFp8Rowwise(F.silu), (x((4, 256), bf),)
    yield "silu_ao_fp8_rowwise_pow2_bf16", ActFp8Rowwise(F.silu, pow2=True), \
        (x((4, 256), bf),)
    # A 3-D activation whose quantizer reads it as [B*T, N] (to_blocked):
    # the reshape moves onto the activation's input, which then fuses.
    yield "silu_nvfp4_bf16_blocked_3d", ActMxBlocked(F.silu, nvfp4=True), \
        (x((2, 2, 64), bf),)
    # torchao.float8 tensorwise with power-of-two scales (exp2(floor(log2
    # (s)))): exact for bf16 values (raised); on f32 values log2f rounds a
    # scale just below 2^k to k (declined, probe 13).
    yield "silu_fp8_tensorwise_pow2_bf16", ActFp8Tensorwise(F.silu, pow2=True), \
        (x((4, 64), bf),)
    yield "silu_fp8_tensorwise_pow2_f32", ActFp8Tensorwise(F.silu, pow2=True), \
        (x((4, 64), f32),)
    # GeGLU with the exact GELU (F.gelu(gate) * up, diffusers' GEGLU) and its
    # autograd backward (geglu_erf); SwiGLU on one [gate | up] tensor split
    # by chunk; GELU and SiLU backward from autograd, with the bias gradient
    # (f32: fused with dbias; bf16: torch-mlir sums in bf16, declined).
    yield "geglu_mxfp8_rceil_bf16", SwigluMx(act=F.gelu), \
        (x((4, 64), bf), x((4, 64), bf))
    a = (x((4, 64), f32), x((4, 64), f32), x((4, 64), f32, 1.0))
    yield "geglu_bwd_mxfp8_rceil_f32", SwigluBwdMx(a, act=F.gelu), a
    yield "swiglu_chunk_mxfp8_rceil_bf16", \
        SwigluChunkMx(), (x((4, 128), bf),)
    a = (x((4, 64), f32), x((4, 64), f32, 1.0))
    yield "gelu_bwd_dbias_mxfp8_rceil_f32", ActBwdMx(F.gelu, a, dbias=True), a
    a = (x((4, 64), bf), x((4, 64), bf, 1.0))
    yield "silu_bwd_mxfp8_rceil_bf16", ActBwdMx(F.silu, a), a
    yield "silu_bwd_dbias_mxfp8_rceil_bf16", ActBwdMx(F.silu, a, dbias=True), a
    # to_mx with blocks of 16: the quantizer reads [T, N] as [T, N/16, 16]
    # (raised as MX blocks of 32 over a last dimension of 16); the activation
    # moves onto that shape and fuses.
    yield "silu_mxfp8_block16_bf16", ActMx(F.silu, block=16), (x((4, 64), bf),)
    # Gated backward from autograd: GeGLU-tanh in bf16 stays unfused
    # (bf16-rounded constants); ReGLU (dgate masks grad * up by
    # relu(gate) <= 0: threshold_backward) fuses with mask = select.
    a = (x((4, 64), bf), x((4, 64), bf), x((4, 64), bf, 1.0))
    yield "geglu_tanh_bwd_mxfp8_rceil_bf16", SwigluBwdMx(a, act=gelu_tanh), a
    a = (x((4, 64), f32), x((4, 64), f32), x((4, 64), f32, 1.0))
    yield "reglu_bwd_mxfp8_rceil_f32", SwigluBwdMx(a, act=F.relu), a
    # Per-token FP8 in plain torch: f16 input; x * (1 / scale) on bf16.
    yield "silu_fp8_pertoken_f16", Fp8PerToken(F.silu), \
        (x((4, 64), torch.float16),)
    yield "gelu_fp8_pertoken_recip_bf16", Fp8PerToken(F.gelu, recip=True), \
        (x((4, 64), bf),)
    # torchao's CEIL scale mode (the OCP rule on the amax rounded up to a
    # power of two): the runtime's ceil rounding, MXFP8 and MXFP4.
    yield "silu_mxfp8_ceil_f32", ActMx(F.silu, mode=Mode.CEIL), (x((4, 64), f32),)
    yield "silu_mxfp8_ceil_bf16", ActMx(F.silu, mode=Mode.CEIL), (x((4, 64), bf),)
    yield "relu_mxfp4_ceil_f32", ActMx4(F.relu, Mode.CEIL), (x((4, 64), f32),)
    # ReLU backward from autograd (threshold_backward: select(relu(x) <= 0,
    # 0, grad)), f32 and bf16.
    a = (x((4, 64), f32), x((4, 64), f32, 1.0))
    yield "relu_bwd_mxfp8_rceil_f32", ActBwdMx(F.relu, a), a
    a = (x((4, 64), bf), x((4, 64), bf, 1.0))
    yield "relu_bwd_mxfp8_rceil_bf16", ActBwdMx(F.relu, a), a
    # Squared ReLU backward from autograd (pow_backward, then
    # threshold_backward on relu(x)), f32.
    a = (x((4, 64), f32), x((4, 64), f32, 1.0))
    yield "relu2_bwd_mxfp8_rceil_f32", ActBwdMx(lambda v: F.relu(v) ** 2, a), a
    # NVFP4 on a 3-D activation with dynamic batch and sequence (Dims on
    # both): its scales [B, T * N / 16] have two dynamic sizes.
    bt = {"x": {0: torch.export.Dim("B", min=2, max=64),
                1: torch.export.Dim("T", min=2, max=4096)}}
    yield "silu_nvfp4_bf16_dyn_bt", ActNvfp4(F.silu), (x((2, 3, 64), bf),), bt
    # A dynamic last dimension (a Dim on the hidden size, a multiple of 32):
    # MX blocks do not follow it (raised); torchao.float8's per-row scale
    # does (its block is the whole row: declined, lowered unfused).
    n32 = {"x": {1: torch.export.Dim("nb", min=2, max=4096) * 32}}
    yield "silu_mxfp8_rceil_bf16_dyn_n", ActMx(F.silu), (x((4, 96), bf),), n32
    yield "silu_ao_fp8_rowwise_bf16_dyn_n", ActFp8Rowwise(F.silu), (x((4, 96), bf),), n32
    # torchao.float8 rowwise in e5m2 (bf16) and with pow2 scales on f16;
    # NVFP4 with swizzled scales on 200 rows (a partial 128-row tile).
    yield "silu_ao_fp8e5m2_rowwise_bf16", \
        ActFp8Rowwise(F.silu, elem=torch.float8_e5m2), (x((5, 96), bf),)
    yield "relu_ao_fp8_rowwise_pow2_f16", ActFp8Rowwise(F.relu, pow2=True), \
        (x((3, 64), torch.float16),)
    yield "silu_nvfp4_bf16_blocked_200", ActMxBlocked(F.silu, nvfp4=True), \
        (x((200, 64), bf),)
    # Quantized along dim 0 (torchao's MX training: to_mx(y.t().contiguous())),
    # alone and beside the rowwise copy: the colwise copy, data transposed.
    yield "col_silu_mxfp8_rceil_bf16", ActColwise(F.silu), (x((64, 96), bf),)
    yield "both_silu_mxfp8_rceil_bf16", ActColwise(F.silu, both=True), \
        (x((64, 128), bf),)
    yield "both_gelu_mxfp8_floor_f32", \
        ActColwise(F.gelu, mode=Mode.FLOOR, both=True), (x((96, 64), f32),)
    yield "col_relu_mxfp4_rceil_bf16", \
        ActColwise(F.relu, elem=torch.float4_e2m1fn_x2), (x((64, 64), bf),)
    yield "col_silu_nvfp4_bf16", ActColwise(F.silu, nvfp4=True), \
        (x((32, 64), bf),)
    yield "col_swiglu_mxfp8_rceil_bf16", SwigluColwise(), \
        (x((64, 64), bf), x((64, 64), bf))
    yield "castT_silu_fp8_tensorwise_bf16", Fp8CastTranspose(F.silu), \
        (x((48, 64), bf),)
    yield "castT_fp8e5m2_tensorwise_f32", \
        Fp8CastTranspose(lambda t: t, elem=torch.float8_e5m2), (x((64, 32), f32),)
    yield "both_swiglu_mxfp8_rceil_f32", SwigluColwise(both=True), \
        (x((64, 64), f32), x((64, 64), f32))
    yield "both_silu_nvfp4_bf16", ActColwise(F.silu, nvfp4=True, both=True), \
        (x((32, 64), bf),)
    yield "col_silu_mxfp8_rceil_bf16_blocked", ActColwiseBlocked(F.silu), \
        (x((96, 160), bf),)
    # Dynamic rows quantized both ways: the rows become the transposed
    # quantizer's blocked dimension, which the raising does not check.
    yield "both_silu_mxfp8_rceil_bf16_dyn", ActColwise(F.silu, both=True), \
        (x((64, 64), bf),), \
        {"x": {0: 32 * torch.export.Dim("tb", min=1, max=1 << 15)}}
    # vLLM's per-token-group reference written in torch: the floor rounded
    # to bf16, the scales column-major, SwiGLU from one [gate | up] input.
    yield "silu_vllm_group_bf16", VllmGroup(F.silu), (x((4, 256), bf),)
    yield "silu_vllm_group_colmajor_bf16", VllmGroup(F.silu, col_major=True), \
        (x((6, 384), bf),)
    yield "swiglu_vllm_group_bf16", VllmGroup(F.silu, gated=True), \
        (x((4, 512), bf),)
    yield "silu_vllm_group_colmajor_bf16_dyn", VllmGroup(F.silu, col_major=True), \
        (x((6, 256), bf),), {"x": {0: torch.export.Dim("T", min=2, max=1 << 20)}}
    # FFN fronts of Linears with bias=True: torch-mlir adds the bias to the
    # f32 accumulator and rounds the sum to bf16 once.
    yield "ffn_bias_bf16", Ffn(64, 32, bf, bias=True), (x((4, 64), bf, 1.0),)
    yield "ffn_bias_mxfp8_bf16", Ffn(64, 32, bf, mx=True, bias=True), \
        (x((4, 64), bf, 1.0),)
    yield "ffn_bias_mxfp8_f32", Ffn(64, 32, f32, mx=True, bias=True), \
        (x((4, 64), f32, 1.0),)
    yield "ffn13_bias_mxfp8_bf16_3d", Ffn(64, 32, bf, stacked=True, mx=True, bias=True), \
        (x((2, 3, 64), bf, 1.0),)
    # Dynamic rows quantized along dim 0: the rows are the transposed
    # quantizer's blocked dimension (checked on copies with 256 and 384).
    tb = 32 * torch.export.Dim("tb", min=1, max=1 << 15)
    yield "col_relu_mxfp4_rceil_bf16_dyn", \
        ActColwise(F.relu, elem=torch.float4_e2m1fn_x2), (x((64, 64), bf),), \
        {"x": {0: tb}}
    yield "both_silu_nvfp4_bf16_dyn", ActColwise(F.silu, nvfp4=True, both=True), \
        (x((64, 64), bf),), {"x": {0: tb}}
    yield "both_gelu_mxfp8_floor_f32_dyn", \
        ActColwise(F.gelu, mode=Mode.FLOOR, both=True), (x((96, 64), f32),), \
        {"x": {0: tb}}
    yield "col_swiglu_mxfp8_rceil_bf16_dyn", SwigluColwise(), \
        (x((64, 64), bf), x((64, 64), bf)), {"gate": {0: tb}, "up": {0: tb}}
    yield "castT_silu_fp8_tensorwise_bf16_dyn", Fp8CastTranspose(F.silu), \
        (x((48, 64), bf),), {"x": {0: torch.export.Dim("T", min=2, max=1 << 20)}}
    # Paired projections with a dynamic token count (serving): the GDN gates
    # (separate and stacked in_proj_ba), the FFN front quantized to MXFP8
    # (separate w1 / w3; stacked w13 with bias), and f32.
    tok = {"x": {0: torch.export.Dim("T", min=2, max=1 << 16)}}
    yield "gdn_bf16_dyn", GdnGates(64, 8, bf), (x((5, 64), bf, 1.0),), tok
    yield "gdn_ba_stacked_bf16_dyn", GdnGatesBA(64, 4, 8, bf, False), \
        (x((3, 64), bf, 1.0),), tok
    yield "ffn_mxfp8_bf16_dyn", Ffn(64, 32, bf, mx=True), (x((4, 64), bf, 1.0),), tok
    yield "ffn13_bias_mxfp8_bf16_dyn", Ffn(64, 32, bf, stacked=True, mx=True, bias=True), \
        (x((6, 64), bf, 1.0),), tok
    yield "ffn_f32_dyn", Ffn(64, 32, f32), (x((4, 64), f32, 1.0),), tok
    # Dynamic rows for per-token-group FP8 written in torch (a view with -1,
    # which torch-mlir writes as a tensor.reshape to a computed shape), the
    # packed [gate | up] SwiGLU, and a 3-D input with dynamic batch and
    # sequence.
    yield "silu_fp8_group128_bf16_dyn", Fp8Grouped(128), (x((4, 256), bf),), tok
    yield "swiglu_fp8_group128_bf16_dyn", Fp8Grouped(128, gated=True), \
        (x((4, 512), bf),), tok
    yield "swiglu_chunk_mxfp8_rceil_bf16_dyn", SwigluChunkMx(), (x((4, 128), bf),), \
        {"gu": {0: torch.export.Dim("T", min=2, max=1 << 16)}}
    yield "silu_mxfp8_rceil_bf16_3d_bt", ActMx(F.silu), (x((2, 4, 64), bf),), \
        {"x": {0: torch.export.Dim("B", min=2, max=64),
               1: torch.export.Dim("S", min=2, max=1 << 12)}}
    # Paired projections of a 3-D input with a dynamic sequence length
    # ([B, T, K], T a Dim): the GDN gates (separate, stacked in_proj_ba) and
    # the FFN front over a stacked w13 (without and with bias) to MXFP8.
    seq = {"x": {1: torch.export.Dim("T", min=2, max=1 << 12)}}
    yield "gdn_bf16_3d_dyn", GdnGates(64, 8, bf), (x((2, 5, 64), bf, 1.0),), seq
    yield "gdn_ba_stacked_bf16_3d_dyn", GdnGatesBA(64, 4, 8, bf, False), \
        (x((2, 3, 64), bf, 1.0),), seq
    yield "ffn13_mxfp8_bf16_3d_dyn", Ffn(64, 32, bf, stacked=True, mx=True), \
        (x((2, 5, 64), bf, 1.0),), seq
    yield "ffn13_bias_mxfp8_bf16_3d_dyn", \
        Ffn(64, 32, bf, stacked=True, mx=True, bias=True), \
        (x((2, 3, 64), bf, 1.0),), seq
    yield "gdn_ba_interleaved_bf16_3d_dyn", GdnGatesBA(64, 4, 8, bf, True), \
        (x((2, 3, 64), bf, 1.0),), seq
    # torchao's EVEN scale mode: `max_abs[nan_mask] = nan`, an index_put with
    # a boolean mask, which torch-mlir writes with tm_tensor.scan / scatter
    # (fusion-lower-tm-tensor); a NaN element makes one NaN block.
    xe = x((4, 64), bf)
    xe[1, 5] = float("nan")
    yield "silu_mxfp8_even_bf16", ActMx(F.silu, mode=Mode.EVEN), (xe,)
    yield "relu_mxfp4_even_f32", ActMx4(F.relu, mode=Mode.EVEN), (x((4, 64), f32),)
    # ... with a dynamic row count (finite: frontend=torch's contract).
    xd = x((6, 64), bf)
    yield "silu_mxfp8_even_bf16_dyn", ActMx(F.silu, mode=Mode.EVEN), (xd,), \
        {"x": {0: torch.export.Dim("T", min=2, max=1 << 20)}}
    # 3-D inputs with two dynamic token dimensions ([B, T, K], B and T both
    # Dims). torch-mlir 20261001 lowers the Linear's view(-1, K) to a
    # tensor.cast of x to [?, 1, K] and the result's view back by a
    # tensor.reshape to a computed shape: its IR is valid for T = 1 only
    # (that cast), so it is exported with T = 2 (torch
    # specializes a size of 1) and run with T = 1 (the fifth element: the
    # inputs of the check).
    bt = {"x": {0: torch.export.Dim("B", min=2, max=64),
                1: torch.export.Dim("T", min=2, max=1 << 12)}}
    for name, module in (
            ("gdn_bf16_3d_bt", GdnGates(64, 8, bf)),
            ("gdn_ba_stacked_bf16_3d_bt", GdnGatesBA(64, 4, 8, bf, False)),
            ("ffn_mxfp8_bf16_3d_bt", Ffn(64, 32, bf, mx=True)),
            ("ffn13_mxfp8_bf16_3d_bt", Ffn(64, 32, bf, stacked=True, mx=True))):
        xb = x((3, 2, 64), bf, 1.0)
        yield name, module, (xb,), bt, (xb[:, :1].contiguous(),)
    # The FFN front quantized to each runtime format the serving recipes
    # use (one stacked w13): per-token-group FP8 by the DeepSeek-V3 formula
    # and by vLLM's torch reference, MXFP4 and NVFP4 (torchao), FP8 per
    # tensor (torchao.float8); a GeGLU front (tanh GELU, Gemma) to MXFP8
    # FLOOR; and f16 GDN gates.
    yield "ffn13_fp8group_bf16", \
        FfnQuant(Fp8Grouped(128, gated=True), 64, 128, bf, packed=True), \
        (x((4, 64), bf, 1.0),)
    yield "ffn13_vllm_group_bf16", \
        FfnQuant(VllmGroup(F.silu, gated=True), 64, 128, bf, packed=True), \
        (x((4, 64), bf, 1.0),)
    yield "ffn13_mxfp4_bf16", FfnQuant(ActMx4(_identity), 64, 32, bf), \
        (x((4, 64), bf, 1.0),)
    yield "ffn13_nvfp4_bf16", FfnQuant(ActNvfp4(_identity), 64, 32, bf), \
        (x((4, 64), bf, 1.0),)
    yield "ffn13_fp8_tensorwise_bf16", \
        FfnQuant(ActFp8Tensorwise(_identity), 64, 32, bf), (x((4, 64), bf, 1.0),)
    yield "ffn_geglu_tanh_mxfp8_bf16", Ffn(64, 32, bf, mx=True, act=gelu_tanh), \
        (x((4, 64), bf, 1.0),)
    yield "gdn_f16", GdnGates(64, 8, torch.float16), (x((4, 64), torch.float16, 1.0),)
    # A bias on the gate Linear only: torch-mlir contracts that bf16 Linear
    # on f32-widened x and weight, the other on bf16 (read as one input).
    yield "ffn_gate_bias_mxfp8_bf16", Ffn(64, 32, bf, mx=True, bias="gate"), \
        (x((4, 64), bf, 1.0),)
    # Gate and up concatenated, then vLLM's per-token-group reference on
    # the packed tensor.
    yield "ffn_cat_vllm_group_bf16", FfnCat(VllmGroup(F.silu, gated=True), 64, 128, bf), \
        (x((4, 64), bf, 1.0),)
    # Quantizers in other spellings (OtherSpellings).
    yield "silu_fp8_group_maxdim_bf16", OtherSpellings("maxdim_group"), (x((4, 256), bf),)
    yield "swiglu_split_fp8_group_bf16", OtherSpellings("split_swiglu_group"), \
        (x((4, 512), bf),)
    yield "gelu_tanh_fp8_max_tensorwise_bf16", OtherSpellings("max_tensorwise"), \
        (x((4, 64), bf),)
    # The interleaved in_proj_ba over a weight argument: read in place.
    yield "gdn_ba_interleaved_warg_bf16", GdnGatesBAArg(64, 4, 8, bf), \
        (x((1, 2, 64), bf, 1.0), x((16, 64), bf, 0.125))
    yield "gdn_ba_interleaved_warg_f32_n24", GdnGatesBAArg(64, 4, 8, f32), \
        (x((24, 64), f32, 1.0), x((16, 64), f32, 0.125))
    # Other spellings: vLLM's gating reference (softplus by where), and FFN
    # fronts over weight arguments (F.linear, stacked, x @ w.t()).
    yield "gdn_vllm_gating_bf16", GdnGatesVllm(64, 8, bf), (x((4, 64), bf, 1.0),)
    yield "gdn_vllm_gating_bf16_3d", GdnGatesVllm(64, 8, bf), (x((2, 3, 64), bf, 1.0),)
    yield "ffn_warg_mxfp8_bf16", FfnArg(), \
        (x((4, 64), bf, 1.0), x((64, 64), bf, 0.125), x((64, 64), bf, 0.125))
    yield "ffn13_warg_mxfp8_bf16", FfnArg(stacked=True), \
        (x((4, 64), bf, 1.0), x((128, 64), bf, 0.125))
    yield "ffn_matmul_t_mxfp8_bf16", FfnArg(matmul=True), \
        (x((4, 64), bf, 1.0), x((64, 64), bf, 0.125), x((64, 64), bf, 0.125))
    # flash-linear-attention's GatedDeltaNet: beta * 2 (allow_neg_eigval),
    # beta widened by .float(), softplus as torch.logaddexp(t, 0).
    yield "gdn_fla_negeig_bf16", GdnGatesFla(64, 8, bf), (x((4, 64), bf, 1.0),)
    yield "gdn_fla_negeig_bf16_3d", GdnGatesFla(64, 8, bf), (x((2, 3, 64), bf, 1.0),)
    yield "gdn_beta_float_bf16", GdnGatesFla(64, 8, bf, neg_eigval=False, widen=True), \
        (x((4, 64), bf, 1.0),)
    yield "gdn_logaddexp_f32", GdnGatesFla(64, 8, f32, neg_eigval=False, logaddexp=True), \
        (x((4, 64), f32, 1.0),)
    yield "gdn_logaddexp_bf16", GdnGatesFla(64, 8, bf, neg_eigval=False, logaddexp=True), \
        (x((4, 64), bf, 1.0),)
    # FP8 delayed scaling as a TransformerEngine user writes it in torch
    # (the scale an argument, TE's amax for the history beside the codes):
    # bf16 SiLU with the scale saturating some codes; tanh GELU without an
    # amax; SiLU on an f32 3-D input to e5m2 with scale_inv; SwiGLU whose
    # codes come from the saturating cast alone.
    yield "delayed_silu_fp8_bf16", Fp8Delayed(F.silu), \
        (x((4, 64), bf), torch.tensor(40.0))
    yield "delayed_gelu_tanh_fp8_bf16", Fp8Delayed(gelu_tanh, amax=False), \
        (x((4, 64), bf), torch.tensor(2.0))
    yield "delayed_silu_e5m2_f32_3d", \
        Fp8Delayed(F.silu, elem=torch.float8_e5m2, f32=True, scale_inv=True), \
        (x((2, 4, 64), f32), torch.tensor([0.5]))
    yield "delayed_swiglu_fp8_bf16", Fp8Delayed(F.silu, gated=True, clamp=False), \
        (x((4, 64), bf), x((4, 64), bf), torch.tensor(3.0))
    yield "delayed_silu_fp8_bf16_dyn", Fp8DelayedX(F.silu), \
        (x((6, 64), bf), torch.tensor(40.0)), \
        {"x": {0: torch.export.Dim("T", min=2, max=1 << 20)}, "scale": None}
    # Decode-shaped inputs [B, 1, K] (hidden states of one new token):
    # torch-mlir views them as [B, K] by grouping the unit T with K.
    yield "gdn_bf16_decode_3d", GdnGates(64, 8, bf), (x((1, 1, 64), bf, 1.0),)
    yield "gdn_bf16_b2t1", GdnGates(64, 8, bf), (x((2, 1, 64), bf, 1.0),)
    yield "ffn_mxfp8_bf16_decode_3d", Ffn(64, 64, bf, mx=True), (x((1, 1, 64), bf, 1.0),)
    # TE's current scaling by hand (an infinite scale for an amax below
    # 448 / FLT_MAX, outside the finite-inputs contract).
    yield "te_current_silu_bf16", TeCurrentHand(F.silu), (x((4, 64), bf),)
    # The FFN front quantized to FP8 with delayed scaling (TE's recipe
    # written in torch): separate and stacked weights, bf16 and f32, 2-D and
    # 3-D inputs, a scale that saturates some codes.
    yield "ffn_delayed_fp8_bf16", FfnDelayed(64, 32, bf), \
        (x((4, 64), bf, 1.0), torch.tensor(8.0))
    yield "ffn_delayed_fp8_bf16_w13_3d", FfnDelayed(64, 32, bf, stacked=True), \
        (x((2, 3, 64), bf, 1.0), torch.tensor([30.0]))
    yield "ffn_delayed_e5m2_f32", FfnDelayed(64, 32, f32, elem=torch.float8_e5m2, amax=False), \
        (x((4, 64), f32, 1.0), torch.tensor(1000.0))
    # FP8 with a static scale (a buffer, exported as a constant): multiplied
    # (TE-exported), divided by a scale whose quotient equals the runtime's
    # product for every bf16 input (/ 3) and by one where it does not (/ 7:
    # declined), and the FFN front with a static scale.
    yield "static_silu_fp8_bf16", Fp8Static(F.silu, 24.0), (x((4, 64), bf),)
    yield "static_div3_silu_fp8_bf16", Fp8Static(F.silu, 3.0, divide=True), (x((4, 64), bf),)
    yield "static_div7_silu_fp8_bf16", Fp8Static(F.silu, 7.0, divide=True), (x((4, 64), bf),)
    yield "ffn_static_fp8_bf16", FfnStatic(64, 32, bf, 12.0), (x((4, 64), bf, 1.0),)
    # The MLP simulated in FP8 (quantize-dequantize before the down Linear):
    # the gated body with the QDQ is no gated activation; the gate/up pair
    # still forms (x read once) and the body stays.
    yield "ffn_qdq_fp8_bf16", FfnQdq(64, 32, bf, 0.0625), (x((4, 64), bf, 1.0),)
    # Projections as torch.einsum (a batch-1 batch_matmul with unit
    # dimensions moved around by transposes): [N, K] x [H, K], [B, T, K] x
    # [H, K], [N, K] x [K, H] in f32, and the GDN gates of a [B, T, K] input.
    yield "ffn_einsum_mxfp8_bf16", FfnArg(einsum="nk,hk->nh"), \
        (x((4, 64), bf, 1.0), x((64, 64), bf, 0.125), x((64, 64), bf, 0.125))
    yield "ffn_einsum_mxfp8_bf16_3d", FfnArg(einsum="bsk,hk->bsh"), \
        (x((2, 3, 64), bf, 1.0), x((64, 64), bf, 0.125), x((64, 64), bf, 0.125))
    yield "ffn_einsum_kh_mxfp8_f32", FfnArg(einsum="nk,kh->nh"), \
        (x((8, 64), f32, 1.0), x((64, 64), f32, 0.125), x((64, 64), f32, 0.125))
    yield "gdn_einsum_bf16_3d", GdnGatesEinsum(64, 8, bf), \
        (x((1, 4, 64), bf, 1.0), x((8, 64), bf, 0.125), x((8, 64), bf, 0.125))
    # GPT-OSS: the clamped SwiGLU on its interleaved tensor to MXFP8, and
    # the MLP front (one biased Linear whose output interleaves gate and up
    # columns) to MXFP8 and to 1x128 FP8 groups, 2-D and 3-D.
    yield "oss_swiglu_mxfp8_bf16", ActMx(oss_swiglu), (x((32, 128), bf),)
    yield "oss_mlp_mxfp8_bf16", GptOssMlp(64, 64, bf, ActMx(oss_swiglu)), \
        (x((4, 64), bf, 1.0),)
    yield "oss_mlp_fp8group_bf16_3d", \
        GptOssMlp(64, 128, bf, Fp8Grouped(128, act=oss_swiglu)), \
        (x((1, 4, 64), bf, 1.0),)
    yield "oss_mlp_mxfp8_f32", GptOssMlp(64, 64, f32, ActMx(oss_swiglu)), \
        (x((8, 64), f32, 1.0),)
    # transformers' GptOssExperts spelling: x @ [K, 2H] + bias (the weight's
    # columns interleave), bf16 and f32.
    yield "oss_expert_hf_mxfp8_bf16", GptOssExpertHf(64, 64, bf), (x((4, 64), bf, 1.0),)
    yield "oss_expert_hf_mxfp8_f32", GptOssExpertHf(64, 64, f32), (x((8, 64), f32, 1.0),)
    # SwiGLU backward by hand with x widened before the chunk (TE's
    # reference spelling) to FP8 per tensor + transpose and to 1x128 groups.
    yield "dswiglu_hand_fp8_castT_bf16", DSwigluHand("tensor"), \
        (x((8, 128), bf, 1.0), x((8, 256), bf, 2.0))
    yield "dswiglu_hand_fp8group_bf16", DSwigluHand("group"), \
        (x((8, 128), bf, 1.0), x((8, 256), bf, 2.0))


def large_programs():
    """Programs at model sizes, IR only (test/Frontend/large, no io.json):
    the raising's exactness check of a quantizer that reads the whole
    tensor runs on a copy with fewer rows."""
    torch.manual_seed(0)

    def x(shape, dtype):
        return (torch.randn(*shape) * 4).to(dtype)

    bf, f32 = torch.bfloat16, torch.float32
    yield "silu_nvfp4_bf16_1024x4096", ActNvfp4(F.silu), (x((1024, 4096), bf),)
    yield "gelu_nvfp4_bf16_4096x4096", ActNvfp4(F.gelu), (x((4096, 4096), bf),)
    yield "relu_nvfp4_scale_bf16_2048x7168", \
        ActNvfp4(F.relu, return_scale=True), (x((2048, 7168), bf),)
    yield "silu_nvfp4_block_bf16_1024x4096", ActNvfp4(F.silu, per_tensor=False), \
        (x((1024, 4096), bf),)
    yield "gelu_nvfp4_f32_4x512x2048", ActNvfp4(F.gelu), (x((4, 512, 2048), f32),)
    yield "silu_mxfp8_rceil_bf16_1024x4096", ActMx(F.silu), (x((1024, 4096), bf),)
    yield "silu_fp8_tensorwise_bf16_1024x4096", ActFp8Tensorwise(F.silu), \
        (x((1024, 4096), bf),)
    # Swizzled scales: MX (rows sampled) raised; NVFP4 raised on a copy of
    # two 128-row tiles (to_blocked splits the rows by 128).
    yield "silu_mxfp8_rceil_bf16_blocked_1024x4096", ActMxBlocked(F.silu), \
        (x((1024, 4096), bf),)
    yield "silu_nvfp4_bf16_blocked_1024x4096", \
        ActMxBlocked(F.silu, nvfp4=True), (x((1024, 4096), bf),)
    # Rows that are not a whole number of 128-row tiles (to_blocked pads the
    # scales with zero rows): a copy of one whole tile and the partial one;
    # fewer rows than a tile: a copy of two tiles of 4 scale blocks.
    yield "silu_nvfp4_bf16_blocked_1000x1024", \
        ActMxBlocked(F.silu, nvfp4=True), (x((1000, 1024), bf),)
    yield "gelu_nvfp4_bf16_blocked_100x4096", \
        ActMxBlocked(F.gelu, nvfp4=True), (x((100, 4096), bf),)
    # 3-D inputs: to_blocked pads the scale rows of all batches together
    # (2 x 200 = 400 rows to 512); the copy on fewer rows keeps the batches.
    yield "silu_nvfp4_bf16_blocked_2x200x1024", \
        ActMxBlocked(F.silu, nvfp4=True), (x((2, 200, 1024), bf),)
    # 1000 rows a batch: the copy keeps the 3 batches and 232 rows of each,
    # 3 * 232 = 696 rows as many past whole tiles (56) as 3000.
    yield "silu_nvfp4_bf16_blocked_3x1000x256", \
        ActMxBlocked(F.silu, nvfp4=True), (x((3, 1000, 256), bf),)
    # torchao's EVEN mode at model sizes: the NaN restore's mask has one
    # element a block (1024 x 128).
    yield "silu_mxfp8_even_bf16_1024x4096", ActMx(F.silu, mode=Mode.EVEN), \
        (x((1024, 4096), bf),)


_DT = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16",
       torch.float8_e4m3fn: "f8E4M3FN", torch.float8_e5m2: "f8E5M2",
       torch.float8_e8m0fnu: "f8E8M0FNU", torch.uint8: "ui8", torch.int8: "i8"}


def tensor_record(t):
    t = t.contiguous()
    raw = t.view(torch.uint8).numpy().tobytes() if t.element_size() == 1 else \
        t.view({2: torch.int16, 4: torch.int32}[t.element_size()]).numpy().tobytes()
    return {"dtype": _DT[t.dtype], "shape": list(t.shape), "hex": raw.hex()}


def main(out_dir, only=None):
    os.makedirs(out_dir, exist_ok=True)
    for name, module, args, *rest in programs():
        if only and name not in only:
            continue
        # rest: the dynamic shapes, then the inputs of the check when they
        # differ from the export's example inputs.
        dynamic = rest[0] if rest else None
        ir = export(module, args, dynamic)
        args = rest[1] if len(rest) > 1 else args
        outs = module(*args)
        outs = outs if isinstance(outs, tuple) else (outs,)
        header = (f"// Generated by tools/frontend-corpus/generate.py ({name}): "
                  f"torch {torch.__version__}, torch-mlir FX importer, "
                  "linalg-on-tensors. Do not edit.\n")
        with open(os.path.join(out_dir, name + ".mlir"), "w") as f:
            f.write(header + ir)
        with open(os.path.join(out_dir, name + ".io.json"), "w") as f:
            json.dump({"inputs": [tensor_record(a) for a in args],
                       "outputs": [tensor_record(o) for o in outs]}, f,
                      indent=1)
        print("wrote", name)
    large_dir = os.path.join(os.path.dirname(os.path.abspath(out_dir)), "large")
    for name, module, args in large_programs():
        if only and name not in only:
            continue
        os.makedirs(large_dir, exist_ok=True)
        header = (f"// Generated by tools/frontend-corpus/generate.py ({name}): "
                  f"torch {torch.__version__}, torch-mlir FX importer, "
                  "linalg-on-tensors. Do not edit.\n")
        with open(os.path.join(large_dir, name + ".mlir"), "w") as f:
            f.write(header + export(module, args))
        print("wrote", name)


if __name__ == "__main__":
    # generate.py [OUT_DIR [NAME ...]]: the corpus into OUT_DIR, the large
    # programs (IR only) into OUT_DIR/../large. NAMEs regenerate only those
    # programs (the inputs of every program stay the same: the generator
    # draws them in one fixed order).
    main(sys.argv[1] if len(sys.argv) > 1 else "test/Frontend/corpus",
         set(sys.argv[2:]))
