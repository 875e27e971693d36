"""The torch.library custom ops over the runtime's entry points.

Each op allocates its outputs with torch.empty on the input's device, builds
the C ABI's views over them (ctypes, no torch headers) and calls the runtime
on the current CUDA stream (CUDA tensors) or the CPU backend (CPU tensors).
Each has a fake (meta) implementation that computes the same output shapes
and dtypes from the same Python function (`quant_outputs_spec` and friends),
so torch.compile(fullgraph=True) and CUDA-graph capture see exact metadata.

The ops take the scheme and activation as int lists (the header's enum
values, see SCHEME_FIELDS); the readable keyword API is in __init__.py.
Outputs the scheme does not produce are returned as empty tensors (shape
[0]); the wrappers turn them into None.
"""
import ctypes
from typing import List, Optional, Tuple

import torch

from . import _abi
from ._abi import check, library

# Order of the fields of a scheme in the ops' `scheme: int[]` argument.
SCHEME_FIELDS = ("format", "scale_rounding", "nan_policy", "direction",
                 "colwise_layout", "scale_layout", "nvfp4_block", "elem_rounding",
                 "tensor_scaling", "force_pow2_scale", "zero_scale", "seed", "offset",
                 "nvfp4_recipe", "block_cols", "block_rows")
MX_FORMATS = (0, 1, 2)
NVFP4 = 3
FP8_TENSOR_FORMATS = (4, 5)
FP8_BLOCK_FORMATS = (6, 7)
FP4_FORMATS = (2, 3)

TORCH_DTYPE_CODE = {torch.bfloat16: 0, torch.float16: 1, torch.float32: 2,
                    torch.float8_e4m3fn: 3, torch.float8_e5m2: 4,
                    torch.float8_e8m0fnu: 6}
CODE_TORCH_DTYPE = {0: torch.bfloat16, 1: torch.float16, 2: torch.float32}

U64 = (1 << 64) - 1

# ------------------------------------------------------------------ shapes ----


def _cdiv(a, b):
    return (a + b - 1) // b


def _rup(a, b):
    return _cdiv(a, b) * b


def quant_shapes(s, m, n, gated_backward):
    """Python mirror of fusion_rt_quant_shapes_for (runtime/src/api.cpp
    shapes_of): {rowwise_data, rowwise_scales, colwise_data, colwise_scales}
    -> (dim0, dim1), (0, 0) for a buffer the scheme does not produce. Works
    on SymInts (torch.compile with dynamic shapes)."""
    fmt, direction, tr, swz = s[0], s[3], s[4] == 1, s[5] == 1
    row, col = direction != 1, direction != 0
    blocks = fmt <= NVFP4 or fmt in FP8_BLOCK_FORMATS
    bs = s[14] if fmt in FP8_BLOCK_FORMATS else 16 if fmt == NVFP4 else 32
    out = {"rowwise_data": (0, 0), "rowwise_scales": (0, 0),
           "colwise_data": (0, 0), "colwise_scales": (0, 0)}
    if row:
        out["rowwise_data"] = (m, n)
        if blocks:
            c = 2 * _cdiv(n // 2, bs) if gated_backward else _cdiv(n, bs)
            # FP8 block formats: one scale row per block_rows rows (2D blocks).
            r = _cdiv(m, s[15]) if fmt in FP8_BLOCK_FORMATS and len(s) > 15 else m
            out["rowwise_scales"] = (_rup(m, 128), _rup(c, 4)) if swz else (r, c)
    if col:
        out["colwise_data"] = (n, m) if tr else (m, n)
        if blocks:
            rb = _cdiv(m, bs)
            if swz:
                out["colwise_scales"] = (_rup(n, 128), _rup(rb, 4))
            else:
                out["colwise_scales"] = (n, rb) if tr else (rb, n)
    return out


def data_dtype(fmt):
    """torch dtype of a format's data: e4m3 / e5m2, or uint8 (packed e2m1)."""
    if fmt in (0, 4, 6):
        return torch.float8_e4m3fn
    if fmt in (1, 5, 7):
        return torch.float8_e5m2
    return torch.uint8


def scale_dtype(fmt):
    if fmt in FP8_BLOCK_FORMATS:
        return torch.float32
    return torch.float8_e4m3fn if fmt == NVFP4 else torch.float8_e8m0fnu


def has_block_scales(fmt):
    return fmt <= NVFP4 or fmt in FP8_BLOCK_FORMATS


def has_scale_inv(fmt):
    return fmt == NVFP4 or fmt in FP8_TENSOR_FORMATS


OUTPUT_NAMES = ("rowwise_data", "rowwise_scales", "colwise_data", "colwise_scales",
                "amax", "scale_inv", "dbias")


def quant_outputs_spec(s, m, n, gated_backward, want_amax, want_dbias):
    """[(name, logical shape, dtype, present)] of the 7 outputs of a
    quantizing op, for the [m, n] matrix it quantizes. FP4 data is allocated
    packed: uint8 [r, ceil(c/2)] for a logical [r, c] (see _new)."""
    fmt, direction = s[0], s[3]
    sh = quant_shapes(s, m, n, gated_backward)
    row, col, blocks = direction != 1, direction != 0, has_block_scales(fmt)
    return [("rowwise_data", sh["rowwise_data"], data_dtype(fmt), row),
            ("rowwise_scales", sh["rowwise_scales"], scale_dtype(fmt), row and blocks),
            ("colwise_data", sh["colwise_data"], data_dtype(fmt), col),
            ("colwise_scales", sh["colwise_scales"], scale_dtype(fmt), col and blocks),
            ("amax", (1,), torch.float32, fmt == NVFP4 or bool(want_amax)),
            ("scale_inv", (1,), torch.float32, has_scale_inv(fmt)),
            ("dbias", (n,), torch.float32, bool(want_dbias))]


def _storage_shape(name, shape, dtype):
    if dtype == torch.uint8 and name.endswith("data"):
        return (shape[0], _cdiv(shape[1], 2))
    return shape


def _new(spec, device):
    """The output tensors of a spec; an absent output is an empty [0] tensor."""
    return [torch.empty(_storage_shape(name, shape, dt) if present else (0,), dtype=dt,
                        device=device)
            for (name, shape, dt, present) in spec]


def _rows_cols(t):
    """[M, N] of the matrix a view of `t` collapses onto (rank 1: [1, N])."""
    if t.dim() == 0:
        return 1, 1
    m = 1
    for d in t.shape[:-1]:
        m = m * d
    return m, t.shape[-1]


# ------------------------------------------------------------------- views ----

_cpu_placeholder = (ctypes.c_double * 2)()
_dev_placeholders = {}


def _nonnull_ptr(t):
    """data_ptr(), or for a tensor without elements (data_ptr 0, which the
    runtime rejects as NULL even where it reads nothing) an aligned address
    on the same device."""
    p = t.data_ptr()
    if p or t.numel():
        return p
    if t.device.type == "cpu":
        return ctypes.addressof(_cpu_placeholder)
    key = str(t.device)
    if key not in _dev_placeholders:
        _dev_placeholders[key] = torch.empty(16, dtype=torch.float32, device=t.device)
    return _dev_placeholders[key].data_ptr()


def view(t, name, code=None, fp4_cols=None):
    """A fusion_rt_tensor over `t` (all zero, i.e. absent, for None). `code`
    overrides the dtype code; with fp4_cols the uint8 tensor holds packed
    e2m1 of that many logical columns (sizes and strides count elements, so
    the byte strides of the leading dimensions double)."""
    v = _abi.Tensor()
    if t is None:
        return v
    if code is None:
        code = TORCH_DTYPE_CODE.get(t.dtype)
        if code is None:
            raise TypeError("fusion_rt: %s has dtype %s, which no fusion_rt_dtype "
                            "describes" % (name, t.dtype))
    v.data = _nonnull_ptr(t)
    v.dtype = code
    v.rank = t.dim()  # a rank outside 1..4 reaches the runtime, which names it
    for i in range(min(t.dim(), _abi.MAX_RANK)):
        v.sizes[i] = t.shape[i]
        v.strides[i] = t.stride(i)
    if fp4_cols is not None and 1 <= t.dim() <= _abi.MAX_RANK:
        v.sizes[t.dim() - 1] = fp4_cols
        for i in range(t.dim() - 1):
            v.strides[i] = 2 * t.stride(i)
    return v


def make_scheme(s, amax_epsilon):
    q = _abi.QuantScheme()
    q.block_rows, q.block_cols = 1, 128  # fusion_rt_quant_scheme_init
    for name, val in zip(SCHEME_FIELDS, s):
        setattr(q, name, (val & U64) if name in ("seed", "offset") else val)
    q.amax_epsilon = amax_epsilon
    return q


def make_activation(act, act_params, backward):
    """act = [kind, intermediate dtype code, mask] (mask 1: masked
    derivatives selected as +0, FUSION_RT_BACKWARD_MASK_SELECT)."""
    a = _abi.Activation()
    a.kind, a.intermediate_dtype = act[0], act[1]
    a.backward = (2 if len(act) > 2 and act[2] else 1) if backward else 0
    a.limit, a.offset, a.alpha = act_params
    return a


def bind_outputs(spec, outs, scale=None):
    """fusion_rt_quant_outputs over the output tensors of `spec` (absent
    outputs stay NULL views) and the delayed-scaling input `scale`."""
    o = _abi.QuantOutputs()
    for (name, shape, dt, present), t in zip(spec, outs):
        if not present:
            continue
        packed = dt == torch.uint8 and name.endswith("data")
        setattr(o, name, view(t, "outputs->" + name, 5 if packed else None,
                              shape[1] if packed else None))
    if scale is not None:
        o.scale = view(scale, "outputs->scale")
    return o


def stream_of(t):
    """The current CUDA stream of t's device as a void*, None for CPU."""
    if t.device.type == "cuda":
        return ctypes.c_void_p(torch.cuda.current_stream(t.device).cuda_stream)
    return None


class _on_device:
    """Makes t's CUDA device current for the call (the runtime launches on
    the current device)."""

    def __init__(self, t):
        self.ctx = torch.cuda.device(t.device) if t.device.type == "cuda" else None

    def __enter__(self):
        if self.ctx is not None:
            self.ctx.__enter__()

    def __exit__(self, *a):
        if self.ctx is not None:
            self.ctx.__exit__(*a)


def _validate_scheme(s, amax_epsilon):
    """The runtime's scheme checks, for the fake implementations (errors at
    trace time). Skipped when the library cannot be loaded (tracing only)."""
    try:
        lib = library()
    except _abi.LibraryNotFound:
        return
    sh = _abi.QuantShapes()
    q = make_scheme(s, amax_epsilon)
    check(lib.fusion_rt_quant_shapes_for(ctypes.byref(q), 0, 0, 0, ctypes.byref(sh)),
          "fusion_rt_quant_shapes_for")


# --------------------------------------------------------- quantize family ----
# run_* write into given output tensors (the ops allocate them); on a failing
# call the runtime has written nothing and FusionRtError is raised.


def _ref(v, present):
    return ctypes.byref(v) if present else None


def run_quantize(x, scheme, amax_epsilon, scale, spec, outs):
    q = make_scheme(scheme, amax_epsilon)
    o = bind_outputs(spec, outs, scale)
    xv = view(x, "input")
    lib = library()
    with _on_device(x):
        check(lib.fusion_rt_quantize(ctypes.byref(xv), ctypes.byref(q), ctypes.byref(o),
                                     None, stream_of(x)), "fusion_rt_quantize")


def run_act_quantize(x, grad, act, act_params, scheme, amax_epsilon, scale, spec, outs):
    q = make_scheme(scheme, amax_epsilon)
    a = make_activation(act, act_params, grad is not None)
    o = bind_outputs(spec, outs, scale)
    xv, gv = view(x, "input"), view(grad, "grad")
    lib = library()
    with _on_device(x):
        check(lib.fusion_rt_act_quantize(ctypes.byref(xv), _ref(gv, grad is not None),
                                         ctypes.byref(a), ctypes.byref(q), ctypes.byref(o),
                                         None, stream_of(x)), "fusion_rt_act_quantize")


def run_gated_act_quantize(x, up, grad, act, act_params, scheme, amax_epsilon, scale,
                           spec, outs):
    q = make_scheme(scheme, amax_epsilon)
    a = make_activation(act, act_params, grad is not None)
    o = bind_outputs(spec, outs, scale)
    xv, uv, gv = view(x, "input"), view(up, "up"), view(grad, "grad")
    lib = library()
    with _on_device(x):
        check(lib.fusion_rt_gated_act_quantize(
            ctypes.byref(xv), _ref(uv, up is not None), _ref(gv, grad is not None),
            ctypes.byref(a), ctypes.byref(q), ctypes.byref(o), None, stream_of(x)),
            "fusion_rt_gated_act_quantize")


def _gated_cols(x, up, backward):
    """(M, cols of the quantized matrix) of a gated op: K forward, 2K backward."""
    m, c = _rows_cols(x)
    k = c if up is not None else c // 2
    return m, (2 * k if backward else k)


QTuple = Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor,
               torch.Tensor, torch.Tensor]


@torch.library.custom_op("fusion_rt::quantize", mutates_args=())
def quantize_op(x: torch.Tensor, scheme: List[int], amax_epsilon: float,
                scale: Optional[torch.Tensor], amax: bool, dbias: bool) -> QTuple:
    m, n = _rows_cols(x)
    spec = quant_outputs_spec(scheme, m, n, False, amax, dbias)
    outs = _new(spec, x.device)
    run_quantize(x, scheme, amax_epsilon, scale, spec, outs)
    return tuple(outs)


@quantize_op.register_fake
def _(x, scheme, amax_epsilon, scale, amax, dbias):
    _validate_scheme(scheme, amax_epsilon)
    m, n = _rows_cols(x)
    return tuple(_new(quant_outputs_spec(scheme, m, n, False, amax, dbias), x.device))


@torch.library.custom_op("fusion_rt::act_quantize", mutates_args=())
def act_quantize_op(x: torch.Tensor, grad: Optional[torch.Tensor], act: List[int],
                    act_params: List[float], scheme: List[int], amax_epsilon: float,
                    scale: Optional[torch.Tensor], amax: bool, dbias: bool) -> QTuple:
    m, n = _rows_cols(x)
    spec = quant_outputs_spec(scheme, m, n, False, amax, dbias)
    outs = _new(spec, x.device)
    run_act_quantize(x, grad, act, act_params, scheme, amax_epsilon, scale, spec, outs)
    return tuple(outs)


@act_quantize_op.register_fake
def _(x, grad, act, act_params, scheme, amax_epsilon, scale, amax, dbias):
    _validate_scheme(scheme, amax_epsilon)
    m, n = _rows_cols(x)
    return tuple(_new(quant_outputs_spec(scheme, m, n, False, amax, dbias), x.device))


@torch.library.custom_op("fusion_rt::gated_act_quantize", mutates_args=())
def gated_act_quantize_op(x: torch.Tensor, up: Optional[torch.Tensor],
                          grad: Optional[torch.Tensor], act: List[int],
                          act_params: List[float], scheme: List[int],
                          amax_epsilon: float, scale: Optional[torch.Tensor],
                          amax: bool, dbias: bool) -> QTuple:
    bwd = grad is not None
    m, n = _gated_cols(x, up, bwd)
    spec = quant_outputs_spec(scheme, m, n, bwd, amax, dbias)
    outs = _new(spec, x.device)
    run_gated_act_quantize(x, up, grad, act, act_params, scheme, amax_epsilon, scale,
                           spec, outs)
    return tuple(outs)


@gated_act_quantize_op.register_fake
def _(x, up, grad, act, act_params, scheme, amax_epsilon, scale, amax, dbias):
    _validate_scheme(scheme, amax_epsilon)
    bwd = grad is not None
    m, n = _gated_cols(x, up, bwd)
    return tuple(_new(quant_outputs_spec(scheme, m, n, bwd, amax, dbias), x.device))


# -------------------------------------------------------------- activation ----


def _act_out_shape(x, up, act, backward):
    gated = act[0] >= _abi.ACT["swiglu"]
    lead = tuple(x.shape[:-1]) if x.dim() else ()
    c = x.shape[-1] if x.dim() else 1
    if not gated:
        return lead + (c,), c
    k = c if up is not None else c // 2
    cols = 2 * k if backward else k
    return lead + (cols,), cols


@torch.library.custom_op("fusion_rt::activation", mutates_args=())
def activation_op(x: torch.Tensor, up: Optional[torch.Tensor], grad: Optional[torch.Tensor],
                  act: List[int], act_params: List[float], dbias: bool
                  ) -> Tuple[torch.Tensor, torch.Tensor]:
    bwd = grad is not None
    shape, cols = _act_out_shape(x, up, act, bwd)
    out = torch.empty(shape, dtype=CODE_TORCH_DTYPE.get(act[1], torch.float32),
                      device=x.device)
    db = torch.empty((cols,) if dbias else (0,), dtype=torch.float32, device=x.device)
    lib = library()
    a = make_activation(act, act_params, bwd)
    xv, uv, gv = view(x, "input"), view(up, "up"), view(grad, "grad")
    ov = view(out, "output", code=act[1])
    dv = view(db, "dbias")
    with _on_device(x):
        check(lib.fusion_rt_activation_apply(
            ctypes.byref(xv), ctypes.byref(uv) if up is not None else None,
            ctypes.byref(gv) if bwd else None, ctypes.byref(a), ctypes.byref(ov),
            ctypes.byref(dv) if dbias else None, None, stream_of(x)),
            "fusion_rt_activation_apply")
    return out, db


@activation_op.register_fake
def _(x, up, grad, act, act_params, dbias):
    shape, cols = _act_out_shape(x, up, act, grad is not None)
    return (x.new_empty(shape, dtype=CODE_TORCH_DTYPE.get(act[1], torch.float32)),
            x.new_empty((cols,) if dbias else (0,), dtype=torch.float32))


# -------------------------------------------------------------- dequantize ----


def _deq_shape(data, scheme, cols):
    lead = tuple(data.shape[:-1]) if data.dim() else ()
    if cols < 0:
        last = data.shape[-1] if data.dim() else 1
        cols = 2 * last if scheme[0] in FP4_FORMATS else last
    return lead + (cols,), cols


@torch.library.custom_op("fusion_rt::dequantize", mutates_args=())
def dequantize_op(data: torch.Tensor, scales: Optional[torch.Tensor],
                  amax: Optional[torch.Tensor], scale_inv: Optional[torch.Tensor],
                  scheme: List[int], direction: int, cols: int,
                  dtype: torch.dtype) -> torch.Tensor:
    shape, c = _deq_shape(data, scheme, cols)
    out = torch.empty(shape, dtype=dtype, device=data.device)
    lib = library()
    q = make_scheme(scheme, 0.0)
    o = _abi.QuantOutputs()
    fp4 = scheme[0] in FP4_FORMATS
    copy = "rowwise" if direction == 0 else "colwise"
    setattr(o, copy + "_data", view(data, "quantized->%s_data" % copy,
                                    5 if fp4 else None, c if fp4 else None))
    if scales is not None:
        setattr(o, copy + "_scales", view(scales, "quantized->%s_scales" % copy))
    if amax is not None:
        o.amax = view(amax, "quantized->amax")
    if scale_inv is not None:
        o.scale_inv = view(scale_inv, "quantized->scale_inv")
    ov = view(out, "output")
    with _on_device(data):
        check(lib.fusion_rt_dequantize(ctypes.byref(q), ctypes.byref(o), direction,
                                       ctypes.byref(ov), None, stream_of(data)),
              "fusion_rt_dequantize")
    return out


@dequantize_op.register_fake
def _(data, scales, amax, scale_inv, scheme, direction, cols, dtype):
    _validate_scheme(scheme, 0.0)
    shape, _ = _deq_shape(data, scheme, cols)
    return data.new_empty(shape, dtype=dtype)


# ------------------------------------------------------- paired projection ----


def _paired_shapes(lhs, w0, w1, gated):
    """out_i = [..., H_i]: lhs's leading dimensions, H_i the rows a weight
    view collapses onto (as the runtime collapses it)."""
    lead = tuple(lhs.shape[:-1]) if lhs.dim() else ()
    h0, h1 = _rows_cols(w0)[0], _rows_cols(w1)[0]
    return lead + (h0,), ((0,) if gated else lead + (h1,))


@torch.library.custom_op("fusion_rt::paired_projection", mutates_args=())
def paired_projection_op(lhs: torch.Tensor, w0: torch.Tensor, w1: torch.Tensor,
                         epilogues: List[int], bias0: Optional[torch.Tensor],
                         scale0: Optional[torch.Tensor], bias1: Optional[torch.Tensor],
                         scale1: Optional[torch.Tensor], gated_kind: int,
                         out_dtype0: torch.dtype, out_dtype1: torch.dtype
                         ) -> Tuple[torch.Tensor, torch.Tensor]:
    s0, s1 = _paired_shapes(lhs, w0, w1, gated_kind >= 0)
    out0 = torch.empty(s0, dtype=out_dtype0, device=lhs.device)
    out1 = torch.empty(s1, dtype=out_dtype1, device=lhs.device)
    d = _paired_desc(lhs, w0, w1, epilogues, bias0, scale0, bias1, scale1, gated_kind)
    d.out0 = view(out0, "desc->out0")
    if gated_kind < 0:
        d.out1 = view(out1, "desc->out1")
    lib = library()
    with _on_device(lhs):
        check(lib.fusion_rt_paired_projection_run(ctypes.byref(d), None, stream_of(lhs)),
              "fusion_rt_paired_projection_run")
    return out0, out1


@paired_projection_op.register_fake
def _(lhs, w0, w1, epilogues, bias0, scale0, bias1, scale1, gated_kind, out_dtype0,
      out_dtype1):
    s0, s1 = _paired_shapes(lhs, w0, w1, gated_kind >= 0)
    return lhs.new_empty(s0, dtype=out_dtype0), lhs.new_empty(s1, dtype=out_dtype1)


def _paired_desc(lhs, w0, w1, epilogues, bias0, scale0, bias1, scale1, gated_kind):
    """A fusion_rt_paired_projection over the inputs, outputs absent."""
    d = _abi.PairedProjection()
    d.lhs, d.weight0, d.weight1 = view(lhs, "desc->lhs"), view(w0, "desc->weight0"), \
        view(w1, "desc->weight1")
    d.epilogue0.kind, d.epilogue0.accumulator_round = epilogues[0], epilogues[1]
    d.epilogue1.kind, d.epilogue1.accumulator_round = epilogues[2], epilogues[3]
    d.epilogue0.bias, d.epilogue0.scale = view(bias0, "bias0"), view(scale0, "scale0")
    d.epilogue1.bias, d.epilogue1.scale = view(bias1, "bias1"), view(scale1, "scale1")
    d.gated_kind = gated_kind
    d.accumulate_dtype = 2
    return d


def _front_rows_cols(lhs, w0):
    """[M, H] of the gated value a quantizing pair quantizes."""
    return _rows_cols(lhs)[0] if lhs.dim() > 1 else 1, _rows_cols(w0)[0]


@torch.library.custom_op("fusion_rt::paired_projection_quantize", mutates_args=())
def paired_projection_quantize_op(lhs: torch.Tensor, w0: torch.Tensor, w1: torch.Tensor,
                                  epilogues: List[int], bias0: Optional[torch.Tensor],
                                  bias1: Optional[torch.Tensor], gated_kind: int,
                                  intermediate: torch.dtype, scheme: List[int],
                                  amax_epsilon: float, scale: Optional[torch.Tensor],
                                  amax: bool) -> QTuple:
    m, n = _front_rows_cols(lhs, w0)
    spec = quant_outputs_spec(scheme, m, n, False, amax, False)
    outs = _new(spec, lhs.device)
    d = _paired_desc(lhs, w0, w1, epilogues, bias0, None, bias1, None, gated_kind)
    q = make_scheme(scheme, amax_epsilon)
    o = bind_outputs(spec, outs, scale)
    lib = library()
    with _on_device(lhs):
        check(lib.fusion_rt_paired_projection_quantize(
            ctypes.byref(d), TORCH_DTYPE_CODE.get(intermediate, -1),
            ctypes.byref(q), ctypes.byref(o), None, stream_of(lhs)),
            "fusion_rt_paired_projection_quantize")
    return tuple(outs)


@paired_projection_quantize_op.register_fake
def _(lhs, w0, w1, epilogues, bias0, bias1, gated_kind, intermediate, scheme, amax_epsilon,
      scale, amax):
    _validate_scheme(scheme, amax_epsilon)
    m, n = _front_rows_cols(lhs, w0)
    return tuple(_new(quant_outputs_spec(scheme, m, n, False, amax, False), lhs.device))
