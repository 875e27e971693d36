"""Shared setup of the fusion_rt Python tests: torch (or a clean skip),
the package from this source tree, the runtime library, and a direct C-ABI
caller (ctypes over host buffers sized by fusion_rt_quant_shapes_for, filled
with a sentinel) that the ops' bytes are compared with."""
import ctypes
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

try:
    import torch
except ImportError:
    raise unittest.SkipTest("torch is not installed: the fusion_rt PyTorch tests need "
                            "it (pip install torch); skipped")

sys.path.insert(0, os.path.join(REPO, "python"))
if "FUSION_RT_LIBRARY" not in os.environ:
    built = os.path.join(REPO, "build", "runtime", "lib", "libfusion_rt.so")
    if os.path.exists(built):
        os.environ["FUSION_RT_LIBRARY"] = built

import fusion_rt  # noqa: E402
from fusion_rt import _abi, _ops  # noqa: E402

try:
    LIB = _abi.library()
except _abi.LibraryNotFound as e:
    raise unittest.SkipTest("libfusion_rt.so not found (build it, or set "
                            "FUSION_RT_LIBRARY): %s" % e)

SENTINEL = 0xAB


def scheme_ints(**kw):
    """The int[] scheme of the ops from quantize()'s keywords."""
    d = dict(format="mxfp8_e4m3", direction="rowwise", colwise_layout="same",
             scale_layout="compact", scale_rounding="rceil", nan_policy="propagate",
             zero_scale="exact", nvfp4_block="1d", elem_rounding="rne",
             force_pow2_scale=False, seed=0, offset=0, delayed=False)
    d.update(kw)
    return fusion_rt._scheme(**d)


def c_shapes(s, rows, cols, gated_backward=False):
    """fusion_rt_quant_shapes_for, or None where the scheme is invalid."""
    q = _ops.make_scheme(s, 0.0)
    sh = _abi.QuantShapes()
    st = LIB.fusion_rt_quant_shapes_for(ctypes.byref(q), rows, cols,
                                        1 if gated_backward else 0, ctypes.byref(sh))
    if st != 0:
        return None
    return {n: tuple(getattr(sh, n)) for n in ("rowwise_data", "rowwise_scales",
                                               "colwise_data", "colwise_scales")}


class CBuffers:
    """Host output buffers of one direct C-ABI call, sized from the C
    function fusion_rt_quant_shapes_for (not from the package's Python
    shapes), filled with SENTINEL; data rows pitched as runtime/test's
    QuantBuffers (packed FP4: an even element pitch)."""

    def __init__(self, s, rows, cols, gated_backward=False, amax=False, dbias=False,
                 scale=None):
        self.s, self.sh = s, c_shapes(s, rows, cols, gated_backward)
        fmt, direction = s[0], s[3]
        fp4 = fmt in (2, 3)
        self.o = _abi.QuantOutputs()
        self.bufs = {}

        def buf(name, nbytes):
            b = (ctypes.c_uint8 * max(1, nbytes))()
            ctypes.memset(b, SENTINEL, max(1, nbytes))
            self.bufs[name] = (b, nbytes)
            return ctypes.addressof(b)

        def view2(name, code, d0, d1, pitch, nbytes):
            v = _abi.Tensor()
            v.data, v.dtype, v.rank = buf(name, nbytes), code, 2
            v.sizes[0], v.sizes[1] = d0, d1
            v.strides[0], v.strides[1] = pitch, 1
            setattr(self.o, name, v)

        dcode = 5 if fp4 else (3 if fmt in (0, 4, 6) else 4)
        # e8m0 bytes (MX), e4m3 (NVFP4), f32 decode scales (FP8 blocks).
        scode = 3 if fmt == 3 else 2 if fmt in _ops.FP8_BLOCK_FORMATS else 6
        swidth = 4 if scode == 2 else 1
        for copy, on in (("rowwise", direction != 1), ("colwise", direction != 0)):
            if not on:
                continue
            d0, d1 = self.sh[copy + "_data"]
            pitch = d1 + (d1 & 1) if fp4 else d1
            view2(copy + "_data", dcode, d0, d1, pitch, d0 * pitch // 2 if fp4 else d0 * pitch)
            if _ops.has_block_scales(fmt):
                r, c = self.sh[copy + "_scales"]
                view2(copy + "_scales", scode, r, c, c, r * c * swidth)

        def vec(name, n):
            v = _abi.Tensor()
            v.data, v.dtype, v.rank = buf(name, 4 * n), 2, 1
            v.sizes[0], v.strides[0] = n, 1
            setattr(self.o, name, v)

        if fmt == 3 or amax:
            vec("amax", 1)
        if _ops.has_scale_inv(fmt):
            vec("scale_inv", 1)
        if dbias:
            vec("dbias", cols)
        if scale is not None:
            self.scale = (ctypes.c_float * 1)(scale)
            v = _abi.Tensor()
            v.data, v.dtype, v.rank = ctypes.addressof(self.scale), 2, 1
            v.sizes[0], v.strides[0] = 1, 1
            self.o.scale = v

    def bytes(self, name):
        """The buffer of `name` as bytes (whole buffer, padding included)."""
        b, n = self.bufs[name]
        return bytes(b)[:n]


def tensor_bytes(t):
    """The bytes of a contiguous tensor."""
    return t.contiguous().view(torch.uint8).numpy().tobytes() if t.numel() else b""


def host_view(t, name="input"):
    """A view of a CPU tensor (the same one the package builds; inputs only)."""
    return _ops.view(t, name)
