"""The PyTorch arms of the MXFP8 and paired-projection benchmarks: each
kernel of bench/mxfp8/mxfp8_bench.cu and the GDN gate pair of
bench/paired/paired_bench.py called as a fusion_rt torch op
(python/fusion_rt), and, for the binding-cost comparison, the same call made
from Python straight through ctypes with descriptors built beforehand.
Imported by run_mxfp8_bench.py, paired_bench.py and binding_bench.py."""
import ctypes
import os
import sys

import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if os.path.join(REPO, "python") not in sys.path:
    sys.path.insert(0, os.path.join(REPO, "python"))
import fusion_rt  # noqa: E402
from fusion_rt import _abi, _ops  # noqa: E402


def available():
    """(True, library path) when the package loads the runtime, else (False, why)."""
    try:
        return True, fusion_rt.library_path()
    except Exception as e:  # noqa
        return False, repr(e)


# The MXFP8 kernels of mxfp8_bench.cu: (entry, keywords); rounding FLOOR as
# there, except the _rceil row; activations with a bf16 intermediate.
MXFP8 = {
    "mxfp8_rowwise": ("quantize", dict(direction="rowwise", scale_rounding="floor")),
    "mxfp8_colwise_same": ("quantize", dict(direction="colwise", scale_rounding="floor")),
    "mxfp8_colwise_transposed": ("quantize", dict(direction="colwise", colwise_layout="transposed",
                                                  scale_rounding="floor")),
    "mxfp8_both": ("quantize", dict(direction="both", scale_rounding="floor")),
    "mxfp8_both_transposed": ("quantize", dict(direction="both", colwise_layout="transposed",
                                               scale_rounding="floor")),
    "mxfp8_rowwise_rceil": ("quantize", dict(direction="rowwise")),
    "swiglu_mxfp8_rowwise": ("gated", dict(direction="rowwise", scale_rounding="floor")),
    "dswiglu_mxfp8_both": ("gated_bwd", dict(direction="both", scale_rounding="floor")),
    "dgelu_dbias_mxfp8_both": ("act_bwd", dict(direction="both", scale_rounding="floor")),
}


def mxfp8_input_shapes(kernel, m, n):
    """Input shapes as mxfp8_bench.cu: quantize x [m, n]; swiglu x [m, 2n];
    dswiglu x [m, 2n] + grad [m, n]; dgelu x [m, n] + grad [m, n]."""
    entry = MXFP8[kernel][0]
    return {"quantize": [(m, n)], "gated": [(m, 2 * n)], "gated_bwd": [(m, 2 * n), (m, n)],
            "act_bwd": [(m, n), (m, n)]}[entry]


def mxfp8_op(kernel):
    """fn(*inputs) calling the torch op of `kernel`."""
    entry, kw = MXFP8[kernel]
    bf16 = torch.bfloat16
    if entry == "quantize":
        return lambda x: fusion_rt.quantize(x, **kw)
    if entry == "gated":
        return lambda x: fusion_rt.gated_act_quantize(x, "swiglu", intermediate_dtype=bf16, **kw)
    if entry == "gated_bwd":
        return lambda x, g: fusion_rt.gated_act_quantize(x, "swiglu", grad=g,
                                                         intermediate_dtype=bf16, **kw)
    return lambda x, g: fusion_rt.act_quantize(x, "gelu_tanh", grad=g, intermediate_dtype=bf16,
                                               dbias=True, **kw)


def mxfp8_cabi(kernel, sets):
    """fn(*inputs) making the same call through ctypes, the descriptors and
    outputs of every input set built beforehand (the C-ABI arm from Python:
    what is left is ctypes' call cost and the stream lookup)."""
    entry, kw = MXFP8[kernel]
    s = fusion_rt._scheme(format="mxfp8_e4m3", colwise_layout=kw.get("colwise_layout", "same"),
                          scale_layout="compact", scale_rounding=kw.get("scale_rounding", "rceil"),
                          nan_policy="propagate", zero_scale="exact", nvfp4_block="1d",
                          elem_rounding="rne", force_pow2_scale=False, seed=0, offset=0,
                          delayed=False, direction=kw["direction"])
    lib = _abi.library()
    act = _abi.Activation()
    lib.fusion_rt_activation_init(ctypes.byref(act))
    act.intermediate_dtype = 0
    act.kind = _abi.ACT["gelu_tanh" if entry == "act_bwd" else "swiglu"]
    act.backward = 1 if entry in ("gated_bwd", "act_bwd") else 0
    scheme = _ops.make_scheme(s, 0.0)
    prepared = {}
    keep = []
    for st in sets:
        x = st[0]
        g = st[1] if len(st) > 1 else None
        m, c = x.shape
        cols = {"quantize": c, "gated": c // 2, "gated_bwd": c, "act_bwd": c}[entry]
        spec = _ops.quant_outputs_spec(s, m, cols, entry == "gated_bwd", False,
                                       entry == "act_bwd")
        outs = _ops._new(spec, x.device)
        o = _ops.bind_outputs(spec, outs)
        xv, gv = _ops.view(x, "input"), _ops.view(g, "grad")
        keep.append((outs, o, xv, gv))
        prepared[x.data_ptr()] = (ctypes.byref(xv), ctypes.byref(gv) if g is not None else None,
                                  ctypes.byref(o))
    sch, ac = ctypes.byref(scheme), ctypes.byref(act)
    stream_of = _ops.stream_of

    if entry == "quantize":
        def call(x):
            xv, _, o = prepared[x.data_ptr()]
            st = lib.fusion_rt_quantize(xv, sch, o, None, stream_of(x))
            assert st == 0, lib.fusion_rt_last_error_message()
    elif entry in ("gated", "gated_bwd"):
        def call(x, g=None):
            xv, gv, o = prepared[x.data_ptr()]
            st = lib.fusion_rt_gated_act_quantize(xv, None, gv, ac, sch, o, None, stream_of(x))
            assert st == 0, lib.fusion_rt_last_error_message()
    else:
        def call(x, g):
            xv, gv, o = prepared[x.data_ptr()]
            st = lib.fusion_rt_act_quantize(xv, gv, ac, sch, o, None, stream_of(x))
            assert st == 0, lib.fusion_rt_last_error_message()
    call.keep = keep  # the outputs and views live as long as the closure
    return call


def gdn_op(su, i, hot=False):
    """The GDN gate pair of paired_bench.py (beta = sigmoid(x Wb^T), g = A *
    softplus(x Wa^T + dt_bias), f32 outputs) on weight copy i, as the torch op."""
    j = 0 if hot else i
    rnd = {"0": "none", "1": "bf16", "2": "f16"}[os.environ.get("FUSION_BENCH_ROUND", "0")]

    def call():
        return fusion_rt.paired_projection(su.x, su.wb(j), su.wa(j), epilogue0="sigmoid",
                                           epilogue1="softplus_bias_scale", bias1=su.dt_bias,
                                           scale1=su.A, round0=rnd, round1=rnd,
                                           out_dtype0=torch.float32, out_dtype1=torch.float32)
    return call
