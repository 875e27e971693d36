"""fusion_rt: the fusion-opt runtime's kernels as PyTorch custom ops.

    import torch, fusion_rt
    q = fusion_rt.quantize(x, "mxfp8_e4m3", direction="both")
    q.rowwise_data, q.rowwise_scales        # float8_e4m3fn, float8_e8m0fnu

Every function here calls one torch.library custom op (torch.ops.fusion_rt.*)
that runs the runtime's kernel on the tensors' device: CUDA tensors on the
current CUDA stream (capturable in CUDA graphs), CPU tensors on the CPU
reference backend. The ops have fake implementations, so
torch.compile(fullgraph=True) traces them. libfusion_rt.so is loaded through
ctypes on first use (see fusion_rt.library_path()); the package compiles
nothing against torch. Numerics: docs/numerics.md; usage: docs/pytorch.md.
"""
from typing import NamedTuple, Optional

import torch

from . import _abi, _ops
from ._abi import FusionRtError, LibraryNotFound

__all__ = ["quantize", "act_quantize", "gated_act_quantize", "activation", "dequantize",
           "paired_projection", "paired_projection_quantize", "quant_shapes", "Quantized",
           "FusionRtError",
           "LibraryNotFound", "library_path", "has_cuda", "set_tuning", "get_tuning", "FORMATS", "ACTIVATIONS",
           "EPILOGUES"]

FORMATS = tuple(_abi.FORMAT)
ACTIVATIONS = tuple(_abi.ACT)
EPILOGUES = tuple(_abi.EPILOGUE)

_INTERMEDIATE = {torch.bfloat16: 0, torch.float16: 1, torch.float32: 2}


class Quantized(NamedTuple):
    """Outputs of a quantizer; None where the scheme writes nothing.

    rowwise_data    [M, N] e4m3 / e5m2, or uint8 [M, ceil(N/2)] packed e2m1
    rowwise_scales  e8m0 (MX) or e4m3 (NVFP4): compact [M, ceil(N/B)],
                    swizzled [rup(M,128), rup(ceil(N/B),4)]
    colwise_data    [M, N] (same) or [N, M] (transposed)
    colwise_scales  compact [ceil(M/B), N] / [N, ceil(M/B)], swizzled
                    [rup(N,128), rup(ceil(M/B),4)]
    amax, scale_inv float32 [1] (NVFP4: both; FP8 per tensor: scale_inv,
                    amax if asked; MX: amax if asked)
    dbias           float32 [N] if asked (column sums before rounding)
    """
    rowwise_data: Optional[torch.Tensor]
    rowwise_scales: Optional[torch.Tensor]
    colwise_data: Optional[torch.Tensor]
    colwise_scales: Optional[torch.Tensor]
    amax: Optional[torch.Tensor]
    scale_inv: Optional[torch.Tensor]
    dbias: Optional[torch.Tensor]


def set_tuning(name, value=None):
    """Sets a runtime tuning knob (runtime/common/tuning.def; docs/kernels.md,
    "tuning knobs") for the later calls of this process: `name` is its
    environment variable (e.g. "FUSION_RT_CUDA_COL_T") or field name, `value`
    one of its values ("0", "gemv", an integer) or None for the default.
    Every value gives the same results; for benchmarks and tests. Raises
    FusionRtError (BAD_VALUE) for an unknown knob or value."""
    lib = _abi.library()
    _abi.check(lib.fusion_rt_set_tuning(name.encode(),
                                        None if value is None else str(value).encode()),
               "fusion_rt_set_tuning")


def get_tuning(name):
    """The current value of a tuning knob: the position of its value in the
    knob's list ("0|1": 0 or 1), or the integer."""
    import ctypes
    v = ctypes.c_int64()
    _abi.check(_abi.library().fusion_rt_get_tuning(name.encode(), ctypes.byref(v)),
               "fusion_rt_get_tuning")
    return v.value


def library_path():
    """Path of the loaded libfusion_rt.so (loads it)."""
    return _abi.library().fusion_rt_path


def has_cuda():
    """Whether the loaded runtime has its CUDA backend."""
    return bool(_abi.library().fusion_rt_has_cuda())


def _u64_as_i64(v):
    v = int(v) & _ops.U64
    return v - (1 << 64) if v >= (1 << 63) else v


def _scheme(format, direction, colwise_layout, scale_layout, scale_rounding, nan_policy,
            zero_scale, nvfp4_block, elem_rounding, force_pow2_scale, seed, offset,
            delayed, nvfp4_recipe="te", block_cols=128, block_rows=1):
    E = _abi.enum_value
    return [E(_abi.FORMAT, format, "format"),
            E(_abi.SCALE_ROUNDING, scale_rounding, "scale_rounding"),
            E(_abi.NAN_POLICY, nan_policy, "nan_policy"),
            E(_abi.DIRECTION, direction, "direction"),
            E(_abi.COLWISE_LAYOUT, colwise_layout, "colwise_layout"),
            E(_abi.SCALE_LAYOUT, scale_layout, "scale_layout"),
            E(_abi.NVFP4_BLOCK, nvfp4_block, "nvfp4_block"),
            E(_abi.ELEM_ROUNDING, elem_rounding, "elem_rounding"),
            1 if delayed else 0, 1 if force_pow2_scale else 0,
            E(_abi.ZERO_SCALE, zero_scale, "zero_scale"),
            _u64_as_i64(seed), _u64_as_i64(offset),
            E(_abi.NVFP4_RECIPE, nvfp4_recipe, "nvfp4_recipe"), int(block_cols),
            int(block_rows)]


def _present(scheme, outs, amax, dbias):
    """The 7 op outputs as a Quantized, None where the scheme writes nothing
    (decided from the scheme, never from the data, so it traces)."""
    fmt, direction = scheme[0], scheme[3]
    blocks = _ops.has_block_scales(fmt)
    keep = (direction != 1, direction != 1 and blocks, direction != 0,
            direction != 0 and blocks, fmt == _ops.NVFP4 or amax,
            _ops.has_scale_inv(fmt), dbias)
    return Quantized(*[t if k else None for t, k in zip(outs, keep)])


def _scalar(t):
    """A delayed-scaling scale as the ABI's f32 [1] view (0-d accepted)."""
    return t.reshape(1) if t is not None and t.dim() == 0 else t


def quantize(x, format="mxfp8_e4m3", *, direction="rowwise", colwise_layout="same",
             scale_layout="compact", scale_rounding="rceil", nan_policy="propagate",
             zero_scale="exact", nvfp4_block="1d", elem_rounding="rne", amax_epsilon=0.0,
             force_pow2_scale=False, seed=0, offset=0, scale=None, amax=False,
             dbias=False, nvfp4_recipe="te", block_cols=128, block_rows=1):
    """fusion_rt_quantize of x (bf16 / f16 / f32, rank 1-4, collapsed onto
    [M, N] = [prod(leading), last]). The keywords are the fields of
    fusion_rt_quant_scheme, by name (defaults: fusion_rt_quant_scheme_init).
    `scale` (f32 [1]) selects FP8 delayed scaling; amax / dbias request the
    optional outputs; block_cols / block_rows are the FP8 block formats'
    block (fp8_block_e4m3 / _e5m2: f32 scales [ceil(M/block_rows),
    ceil(N/block_cols)]; block_rows=128, block_cols=128: DeepSeek-V3's weight
    tiles). Returns a Quantized."""
    s = _scheme(format, direction, colwise_layout, scale_layout, scale_rounding,
                nan_policy, zero_scale, nvfp4_block, elem_rounding, force_pow2_scale,
                seed, offset, scale is not None, nvfp4_recipe, block_cols, block_rows)
    outs = torch.ops.fusion_rt.quantize(x, s, float(amax_epsilon), _scalar(scale),
                                        bool(amax), bool(dbias))
    return _present(s, outs, amax, dbias)


def _act(act, intermediate_dtype, limit, up_offset, alpha, mask="multiply"):
    kind = _abi.enum_value(_abi.ACT, act, "act")
    if intermediate_dtype not in _INTERMEDIATE:
        raise ValueError("fusion_rt: intermediate_dtype = %s is not torch.bfloat16, "
                         "torch.float16 or torch.float32" % (intermediate_dtype,))
    if mask not in ("multiply", "select"):
        raise ValueError("fusion_rt: mask = %r is not 'multiply' or 'select'" % (mask,))
    return [kind, _INTERMEDIATE[intermediate_dtype], int(mask == "select")], \
        [float(limit), float(up_offset), float(alpha)]


def act_quantize(x, act="identity", format="mxfp8_e4m3", *, grad=None,
                 intermediate_dtype=torch.float32, limit=7.0, up_offset=1.0, alpha=1.702,
                 direction="rowwise", colwise_layout="same", scale_layout="compact",
                 scale_rounding="rceil", nan_policy="propagate", zero_scale="exact",
                 nvfp4_block="1d", elem_rounding="rne", amax_epsilon=0.0,
                 force_pow2_scale=False, seed=0, offset=0, scale=None, amax=False,
                 dbias=False, nvfp4_recipe="te", block_cols=128, mask="multiply"):
    """fusion_rt_act_quantize: quantizes round(act(x)) (forward) or, with
    `grad`, round(grad * act'(x)) (backward), rounded to intermediate_dtype
    first, as the unfused graph stores it. Non-gated kinds: identity, relu,
    gelu, gelu_tanh, silu, qgelu, srelu. limit / up_offset / alpha are the
    fusion_rt_activation parameters; mask="select" gives a masked
    derivative (relu, srelu: x <= 0) as autograd's +0 instead of TE's
    grad * 0. Scheme keywords as in quantize()."""
    a, p = _act(act, intermediate_dtype, limit, up_offset, alpha, mask)
    s = _scheme(format, direction, colwise_layout, scale_layout, scale_rounding,
                nan_policy, zero_scale, nvfp4_block, elem_rounding, force_pow2_scale,
                seed, offset, scale is not None, nvfp4_recipe, block_cols)
    outs = torch.ops.fusion_rt.act_quantize(x, grad, a, p, s, float(amax_epsilon),
                                            _scalar(scale), bool(amax), bool(dbias))
    return _present(s, outs, amax, dbias)


def gated_act_quantize(x, act="swiglu", format="mxfp8_e4m3", *, up=None, grad=None,
                       intermediate_dtype=torch.float32, limit=7.0, up_offset=1.0,
                       alpha=1.702, direction="rowwise", colwise_layout="same",
                       scale_layout="compact", scale_rounding="rceil",
                       nan_policy="propagate", zero_scale="exact", nvfp4_block="1d",
                       elem_rounding="rne", amax_epsilon=0.0, force_pow2_scale=False,
                       seed=0, offset=0, scale=None, amax=False, nvfp4_recipe="te",
                       block_cols=128, mask="multiply"):
    """fusion_rt_gated_act_quantize. Input: x = [gate | up] packed [M, 2K]
    (up=None) or x = gate [M, K] with `up` [M, K]. Forward quantizes
    act(gate) * up [M, K]; backward (`grad` [M, K]) quantizes [dact | dgate]
    [M, 2K] with separate scales for the two halves. Gated kinds: swiglu,
    geglu (tanh GELU gate), geglu_erf, reglu, qgeglu, sreglu, clamped_swiglu.
    mask="select": as act_quantize (reglu, sreglu, clamped_swiglu)."""
    a, p = _act(act, intermediate_dtype, limit, up_offset, alpha, mask)
    s = _scheme(format, direction, colwise_layout, scale_layout, scale_rounding,
                nan_policy, zero_scale, nvfp4_block, elem_rounding, force_pow2_scale,
                seed, offset, scale is not None, nvfp4_recipe, block_cols)
    outs = torch.ops.fusion_rt.gated_act_quantize(x, up, grad, a, p, s, float(amax_epsilon),
                                                  _scalar(scale), bool(amax), False)
    return _present(s, outs, amax, False)


def activation(x, act="identity", *, up=None, grad=None, intermediate_dtype=torch.float32,
               limit=7.0, up_offset=1.0, alpha=1.702, dbias=False, mask="multiply"):
    """fusion_rt_activation_apply: the unfused activation (what the fused
    quantizers equal when followed by quantize()), rounded to
    intermediate_dtype. Gated kinds take `up` as gated_act_quantize. Returns
    the activation, or (activation, dbias) with dbias=True."""
    a, p = _act(act, intermediate_dtype, limit, up_offset, alpha, mask)
    out, db = torch.ops.fusion_rt.activation(x, up, grad, a, p, bool(dbias))
    return (out, db) if dbias else out


def dequantize(data, scales=None, format="mxfp8_e4m3", *, direction="rowwise",
               colwise_layout="same", scale_layout="compact", zero_scale="exact",
               amax=None, scale_inv=None, cols=None, dtype=torch.float32,
               block_cols=128, block_rows=1):
    """fusion_rt_dequantize of one copy (direction "rowwise" or "colwise") of
    a quantized tensor: data and scales as quantize() returned them (NVFP4
    also amax and scale_inv, FP8 per tensor scale_inv). The result has the
    data's logical shape (a transposed colwise copy gives [N, M]); `cols`
    gives the logical width of packed FP4 data with an odd column count
    (default 2 x bytes per row)."""
    s = _scheme(format, direction, colwise_layout, scale_layout, "rceil", "propagate",
                zero_scale, "1d", "rne", False, 0, 0, False, block_cols=block_cols,
                block_rows=block_rows)
    return torch.ops.fusion_rt.dequantize(data, scales, _scalar(amax), _scalar(scale_inv), s,
                                          s[3], -1 if cols is None else int(cols), dtype)


def paired_projection(x, w0, w1, *, epilogue0="none", epilogue1="none", bias0=None,
                      scale0=None, bias1=None, scale1=None, round0="none", round1="none",
                      gated=None, out_dtype0=None, out_dtype1=None):
    """fusion_rt_paired_projection_run: out_i = epilogue_i(x @ w_i.T) for
    x [..., K], w_i [H_i, K] (any strides: a [K, H] weight is passed as
    w.t()), both from one read of x, accumulated in f32. Epilogues: none,
    bias (bias_i), sigmoid / silu (optional bias_i), softplus_bias_scale
    (softplus(y + bias_i) * scale_i, torch's log1p(exp(t)) below 20),
    softplus_log_bias_scale (the same with log(1 + exp(t))),
    softplus_stable_bias_scale (max(t, 0) + log1p(exp(-|t|)), no threshold:
    torch.logaddexp(t, 0)). round_i = "bf16" / "f16" rounds the
    accumulator first (a bf16 / f16 nn.Linear), then adds bias_i;
    "bf16_with_bias" / "f16_with_bias" round y + bias_i once (an nn.Linear
    with bias=True) and add no bias after. gated = a gated activation
    name: returns (act(x @ w0.T + b0) * (x @ w1.T + b1), None). Output dtypes
    default to x's. Returns (out0, out1)."""
    E = _abi.enum_value
    epi = [E(_abi.EPILOGUE, epilogue0, "epilogue0"), E(_abi.ACC_ROUND, round0, "round0"),
           E(_abi.EPILOGUE, epilogue1, "epilogue1"), E(_abi.ACC_ROUND, round1, "round1")]
    if gated is None:
        gk = -1
    elif gated in _abi.GATED_ACTS:
        gk = _abi.ACT[gated]
    else:
        raise ValueError("fusion_rt: gated = %r is not one of %s"
                         % (gated, ", ".join(_abi.GATED_ACTS)))
    d0 = x.dtype if out_dtype0 is None else out_dtype0
    d1 = x.dtype if out_dtype1 is None else out_dtype1
    out0, out1 = torch.ops.fusion_rt.paired_projection(x, w0, w1, epi, bias0, scale0,
                                                       bias1, scale1, gk, d0, d1)
    return out0, (None if gated is not None else out1)


def paired_projection_quantize(x, w0, w1, gated="swiglu", format="mxfp8_e4m3", *,
                               bias0=None, bias1=None, round0="none", round1="none",
                               intermediate_dtype=None, direction="rowwise",
                               colwise_layout="same", scale_layout="compact",
                               scale_rounding="rceil", nan_policy="propagate",
                               zero_scale="exact", nvfp4_block="1d", elem_rounding="rne",
                               amax_epsilon=0.0, force_pow2_scale=False, seed=0, offset=0,
                               scale=None, amax=False, nvfp4_recipe="te",
                               block_cols=128):
    """fusion_rt_paired_projection_quantize, the FFN front in one call:
    v = act(x @ w0.T + b0) * (x @ w1.T + b1) (a gated pair, round_i as in
    paired_projection), rounded to intermediate_dtype (default x's dtype),
    then quantized like quantize(v, format, ...) of the [M, H] value; v
    itself is not returned. Returns a Quantized; equals
    quantize(paired_projection(..., gated=gated, out_dtype0=intermediate)[0])
    byte for byte on the same backend (and its gemv / mma paths on CUDA)."""
    E = _abi.enum_value
    if gated not in _abi.GATED_ACTS:
        raise ValueError("fusion_rt: gated = %r is not one of %s"
                         % (gated, ", ".join(_abi.GATED_ACTS)))
    epi = [_abi.EPILOGUE["bias" if bias0 is not None else "none"],
           E(_abi.ACC_ROUND, round0, "round0"),
           _abi.EPILOGUE["bias" if bias1 is not None else "none"],
           E(_abi.ACC_ROUND, round1, "round1")]
    s = _scheme(format, direction, colwise_layout, scale_layout, scale_rounding,
                nan_policy, zero_scale, nvfp4_block, elem_rounding, force_pow2_scale,
                seed, offset, scale is not None, nvfp4_recipe, block_cols)
    inter = x.dtype if intermediate_dtype is None else intermediate_dtype
    outs = torch.ops.fusion_rt.paired_projection_quantize(
        x, w0, w1, epi, bias0, bias1, _abi.ACT[gated], inter, s, float(amax_epsilon),
        _scalar(scale), bool(amax))
    return _present(s, outs, amax, False)


def quant_shapes(rows, cols, format="mxfp8_e4m3", *, direction="rowwise",
                 colwise_layout="same", scale_layout="compact", gated_backward=False,
                 block_cols=128, block_rows=1):
    """The logical output shapes of a quantizer of a [rows, cols] matrix
    (fusion_rt_quant_shapes_for, computed in Python): a dict of
    rowwise_data / rowwise_scales / colwise_data / colwise_scales -> (d0, d1),
    (0, 0) where the scheme writes nothing."""
    s = _scheme(format, direction, colwise_layout, scale_layout, "rceil", "propagate",
                "exact", "1d", "rne", False, 0, 0, False, block_cols=block_cols,
                block_rows=block_rows)
    return _ops.quant_shapes(s, rows, cols, gated_backward)
