"""CPU tests of the fusion_rt torch ops (CPU tensors run the runtime's CPU
backend): output shapes against the C ABI's fusion_rt_quant_shapes_for, the
fake implementations against the real ones (torch.library.opcheck and fake
mode), the ops' bytes against direct C-ABI calls, errors, and
torch.compile(fullgraph=True). Bit-exactness with torchao is in
test_torchao_cpu.py."""
import ctypes
import itertools
import os
import subprocess
import sys
import unittest

import common
from common import LIB, CBuffers, scheme_ints, tensor_bytes, host_view
import torch
import fusion_rt
from fusion_rt import _abi, _ops

FORMATS = list(_abi.FORMAT)
SHAPES = [(1, 1), (5, 7), (37, 70), (64, 96), (130, 33)]


def valid_schemes():
    """Every scheme combination the runtime accepts (one per layout choice)."""
    out = []
    for fmt, direction, cl, sl in itertools.product(
            FORMATS, ("rowwise", "colwise", "both"), ("same", "transposed"),
            ("compact", "swizzled")):
        kw = dict(format=fmt, direction=direction, colwise_layout=cl, scale_layout=sl)
        if common.c_shapes(scheme_ints(**kw), 4, 4) is not None:
            out.append(kw)
    return out


VARIANTS = [  # policies on top of a layout, each valid for the formats named
    (("mxfp8_e4m3", "mxfp8_e5m2", "mxfp4"), dict(scale_rounding="floor")),
    (("mxfp8_e4m3", "mxfp8_e5m2", "mxfp4"), dict(nan_policy="ignore")),
    (("mxfp8_e4m3", "mxfp8_e5m2", "mxfp4"), dict(zero_scale="one")),
    (("mxfp8_e4m3", "mxfp4"), dict(scale_rounding="floor", zero_scale="min_normal")),
    (("mxfp8_e4m3", "mxfp8_e5m2", "mxfp4"), dict(scale_rounding="ceil", zero_scale="min_normal")),
    (("nvfp4",), dict(nvfp4_block="2d")),
    (("nvfp4", "mxfp4"), dict(elem_rounding="stochastic", seed=12345, offset=7)),
    (("fp8_e4m3", "fp8_e5m2"), dict(force_pow2_scale=True, amax_epsilon=1e-3)),
    (("fp8_e4m3",), dict(delayed=True)),
]


def make_input(rows, cols, dtype=torch.bfloat16, seed=0, wide=True):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=g)
    if wide:  # per-32-block magnitudes over 2^-20..2^20, as runtime/test's inputs
        e = torch.randint(-20, 21, (rows, (cols + 31) // 32), generator=g).float()
        x = x * torch.exp2(e).repeat_interleave(32, dim=1)[:, :cols]
    return x.to(dtype)


def op_quantize(x, kw, amax=False, dbias=False):
    kw = dict(kw)
    delayed = kw.pop("delayed", False)
    scale = torch.tensor([3.5]) if delayed else None
    return fusion_rt.quantize(x, amax=amax, dbias=dbias, scale=scale, **kw)


def c_quantize(x, kw, amax=False, dbias=False):
    """The same call made directly on the C ABI (host buffers)."""
    kw = dict(kw)
    eps = kw.pop("amax_epsilon", 0.0)
    s = scheme_ints(**kw)
    rows, cols = _ops._rows_cols(x)
    cb = CBuffers(s, rows, cols, amax=amax, dbias=dbias,
                  scale=3.5 if kw.get("delayed") else None)
    xv = host_view(x)
    st = LIB.fusion_rt_quantize(ctypes.byref(xv), ctypes.byref(_ops.make_scheme(s, eps)),
                                ctypes.byref(cb.o), None, None)
    return st, cb


def assert_same_bytes(tc, q, cb, what):
    for name in _ops.OUTPUT_NAMES:
        t = getattr(q, name)
        if name in cb.bufs:
            tc.assertIsNotNone(t, "%s: %s missing" % (what, name))
            tc.assertEqual(tensor_bytes(t), cb.bytes(name), "%s: %s differs" % (what, name))
        else:
            tc.assertIsNone(t, "%s: %s should be None" % (what, name))


class ShapesTest(unittest.TestCase):
    def test_python_shapes_equal_c_shapes(self):
        n = 0
        for kw in valid_schemes():
            s = scheme_ints(**kw)
            for (r, c), gb in itertools.product(SHAPES + [(0, 64), (300, 0), (129, 1000)],
                                                (False, True)):
                if gb and c % 2:
                    continue
                want = common.c_shapes(s, r, c, gb)
                self.assertEqual(_ops.quant_shapes(s, r, c, gb), want, (kw, r, c, gb))
                self.assertEqual(fusion_rt.quant_shapes(r, c, gated_backward=gb, **kw), want)
                n += 1
        self.assertGreater(n, 400)

    def test_output_tensors_have_the_documented_shapes_and_dtypes(self):
        x = make_input(37, 70)
        q = fusion_rt.quantize(x, "mxfp4", direction="both", colwise_layout="transposed")
        self.assertEqual((q.rowwise_data.shape, q.rowwise_data.dtype), ((37, 35), torch.uint8))
        self.assertEqual((q.colwise_data.shape, q.colwise_data.dtype), ((70, 19), torch.uint8))
        self.assertEqual((q.rowwise_scales.shape, q.rowwise_scales.dtype),
                         ((37, 3), torch.float8_e8m0fnu))
        self.assertEqual(q.colwise_scales.shape, (70, 2))
        q = fusion_rt.quantize(x, "nvfp4", scale_layout="swizzled")
        self.assertEqual((q.rowwise_scales.shape, q.rowwise_scales.dtype),
                         ((128, 8), torch.float8_e4m3fn))
        self.assertEqual((q.amax.shape, q.scale_inv.shape), ((1,), (1,)))
        q = fusion_rt.quantize(x, "fp8_e5m2", direction="both", colwise_layout="transposed")
        self.assertEqual((q.colwise_data.shape, q.colwise_data.dtype), ((70, 37), torch.float8_e5m2))
        self.assertIsNone(q.rowwise_scales)
        self.assertIsNone(q.amax)


class BytesTest(unittest.TestCase):
    """The ops write the bytes a direct C-ABI call writes (padding included)."""

    def test_quantize_every_scheme(self):
        n = 0
        for kw in valid_schemes():
            for (r, c), dt in zip(SHAPES[1:], (torch.bfloat16, torch.float32, torch.float16,
                                              torch.bfloat16)):
                x = make_input(r, c, dt, seed=r * c)
                q = op_quantize(x, kw, amax=True, dbias=True)
                st, cb = c_quantize(x, kw, amax=True, dbias=True)
                self.assertEqual(st, 0, LIB.fusion_rt_last_error_message())
                assert_same_bytes(self, q, cb, "%s %dx%d %s" % (kw, r, c, dt))
                n += 1
        self.assertGreater(n, 100)

    def test_quantize_policy_variants(self):
        x = make_input(37, 70, seed=3)
        x[0, :32] = 0.0
        x[1, :32] = 1e-30
        for formats, extra in VARIANTS:
            for fmt in formats:
                for direction in ("rowwise", "both"):
                    kw = dict(format=fmt, direction=direction, colwise_layout="transposed",
                              **extra)
                    st, cb = c_quantize(x, kw)
                    self.assertEqual(st, 0, (kw, LIB.fusion_rt_last_error_message()))
                    assert_same_bytes(self, op_quantize(x, kw), cb, str(kw))

    def test_rank3_and_strided_inputs(self):
        x3 = make_input(4 * 9, 64).reshape(4, 9, 64)
        base = make_input(40, 128)
        strided = base[:, ::2]                      # column stride 2
        pitched = base[3:35, :96]                   # row pitch 128
        for x in (x3, strided, pitched):
            for kw in (dict(format="mxfp8_e4m3", direction="both"),
                       dict(format="mxfp4", direction="both", colwise_layout="transposed")):
                st, cb = c_quantize(x, kw)
                self.assertEqual(st, 0)
                assert_same_bytes(self, op_quantize(x, kw), cb, "%s %s" % (kw, x.stride()))

    def test_empty_input(self):
        for shape in ((0, 64), (16, 0)):
            x = torch.empty(shape, dtype=torch.bfloat16)
            q = fusion_rt.quantize(x, "mxfp8_e4m3", direction="both")
            self.assertEqual(q.rowwise_data.shape, shape)
            self.assertEqual(q.colwise_scales.shape, ((shape[0] + 31) // 32, shape[1]))

    def _c_act(self, entry, x, up, grad, act, scheme, rows, cols, gated_backward, dbias):
        s = scheme_ints(**scheme)
        cb = CBuffers(s, rows, cols, gated_backward, dbias=dbias)
        a = _ops.make_activation(act, [7.0, 1.0, 1.702], grad is not None)
        views = [host_view(t) if t is not None else None for t in (x, up, grad)]
        refs = [ctypes.byref(v) if v is not None else None for v in views]
        q = _ops.make_scheme(s, 0.0)
        if entry == "act":
            st = LIB.fusion_rt_act_quantize(refs[0], refs[2], ctypes.byref(a), ctypes.byref(q),
                                            ctypes.byref(cb.o), None, None)
        else:
            st = LIB.fusion_rt_gated_act_quantize(refs[0], refs[1], refs[2], ctypes.byref(a),
                                                  ctypes.byref(q), ctypes.byref(cb.o), None,
                                                  None)
        self.assertEqual(st, 0, LIB.fusion_rt_last_error_message())
        return cb

    def test_act_quantize_every_kind(self):
        x = make_input(40, 96, wide=False, seed=5)
        g = make_input(40, 96, wide=False, seed=6)
        for name in _abi.ACT:
            if name in _abi.GATED_ACTS:
                continue
            for grad, scheme in itertools.product(
                    (None, g), (dict(format="mxfp8_e4m3", direction="both"),
                                dict(format="nvfp4", direction="both",
                                     colwise_layout="transposed"),
                                dict(format="fp8_e4m3", direction="both"))):
                q = fusion_rt.act_quantize(x, name, grad=grad, intermediate_dtype=torch.bfloat16,
                                           dbias=True, **scheme)
                cb = self._c_act("act", x, None, grad, [_abi.ACT[name], 0], scheme, 40, 96,
                                 False, True)
                assert_same_bytes(self, q, cb, "%s %s bwd=%s" % (name, scheme, grad is not None))

    def test_gated_act_quantize_packed_split_forward_backward(self):
        k = 80
        xu = make_input(33, 2 * k, wide=False, seed=8)
        gate, up = xu[:, :k].contiguous(), xu[:, k:].contiguous()
        g = make_input(33, k, wide=False, seed=9)
        for name in _abi.GATED_ACTS:
            for grad, scheme in itertools.product(
                    (None, g), (dict(format="mxfp8_e4m3", direction="both"),
                                dict(format="mxfp4", direction="both",
                                     colwise_layout="transposed", scale_layout="swizzled"))):
                bwd = grad is not None
                cols = 2 * k if bwd else k
                packed = fusion_rt.gated_act_quantize(xu, name, grad=grad, **scheme)
                split = fusion_rt.gated_act_quantize(gate, name, up=up, grad=grad, **scheme)
                cb = self._c_act("gated", xu, None, grad, [_abi.ACT[name], 2], scheme, 33, cols,
                                 bwd, False)
                what = "%s %s bwd=%s" % (name, scheme, bwd)
                assert_same_bytes(self, packed, cb, what + " packed")
                assert_same_bytes(self, split, cb, what + " split")

    def test_fused_equals_activation_then_quantize(self):
        x = make_input(64, 128, wide=False, seed=11)
        g = make_input(64, 64, wide=False, seed=12)
        for name, grad in (("gelu", None), ("silu", g[:, :32].repeat(1, 4)), ("swiglu", None),
                           ("swiglu", g)):
            gated = name in _abi.GATED_ACTS
            f = fusion_rt.gated_act_quantize if gated else fusion_rt.act_quantize
            q = f(x, name, grad=grad, intermediate_dtype=torch.bfloat16, direction="both")
            a = fusion_rt.activation(x, name, grad=grad, intermediate_dtype=torch.bfloat16)
            if gated and grad is not None:
                # the gated backward's rowwise blocks stop at column K: quantize
                # the halves separately for the unfused rowwise copy
                halves = [fusion_rt.quantize(a[:, :64].contiguous()),
                          fusion_rt.quantize(a[:, 64:].contiguous())]
                self.assertEqual(tensor_bytes(q.rowwise_data),
                                 tensor_bytes(torch.cat([h.rowwise_data for h in halves], 1)))
                self.assertEqual(tensor_bytes(q.rowwise_scales),
                                 tensor_bytes(torch.cat([h.rowwise_scales for h in halves], 1)))
                u = fusion_rt.quantize(a, direction="colwise")
                self.assertEqual(tensor_bytes(q.colwise_data), tensor_bytes(u.colwise_data))
                continue
            u = fusion_rt.quantize(a, direction="both")
            for n in ("rowwise_data", "rowwise_scales", "colwise_data", "colwise_scales"):
                self.assertEqual(tensor_bytes(getattr(q, n)), tensor_bytes(getattr(u, n)),
                                 "%s %s" % (name, n))

    def test_dequantize_equals_c_abi(self):
        x = make_input(37, 70, torch.float32, seed=13)
        for fmt, direction, cl in (("mxfp8_e4m3", "rowwise", "same"),
                                   ("mxfp8_e5m2", "colwise", "same"),
                                   ("mxfp4", "colwise", "transposed"),
                                   ("nvfp4", "rowwise", "transposed"),
                                   ("nvfp4", "colwise", "transposed"),
                                   ("fp8_e4m3", "colwise", "transposed")):
            q = fusion_rt.quantize(x, fmt, direction="both", colwise_layout=cl)
            data = q.rowwise_data if direction == "rowwise" else q.colwise_data
            scales = q.rowwise_scales if direction == "rowwise" else q.colwise_scales
            logical = 70 if direction == "rowwise" or cl == "same" else 37
            y = fusion_rt.dequantize(data, scales, fmt, direction=direction, colwise_layout=cl,
                                     amax=q.amax, scale_inv=q.scale_inv, cols=logical)
            self.assertEqual(y.shape, (37, 70) if logical == 70 else (70, 37))
            # the C ABI directly, over the same quantized buffers
            s = scheme_ints(format=fmt, direction="both", colwise_layout=cl)
            o = _abi.QuantOutputs()
            fp4 = fmt in ("mxfp4", "nvfp4")
            setattr(o, direction + "_data", _ops.view(data, "d", 5 if fp4 else None,
                                                      logical if fp4 else None))
            if scales is not None:
                setattr(o, direction + "_scales", host_view(scales))
            if q.amax is not None:
                o.amax = host_view(q.amax)
            if q.scale_inv is not None:
                o.scale_inv = host_view(q.scale_inv)
            ref = torch.full(y.shape, 1234.5)
            st = LIB.fusion_rt_dequantize(ctypes.byref(_ops.make_scheme(s, 0.0)),
                                          ctypes.byref(o), _abi.DIRECTION[direction],
                                          ctypes.byref(host_view(ref)), None, None)
            self.assertEqual(st, 0, LIB.fusion_rt_last_error_message())
            self.assertEqual(tensor_bytes(y), tensor_bytes(ref), (fmt, direction))
            rel = ((y.t() if logical == 37 else y) - x).norm() / x.norm()
            self.assertLess(rel.item(), 0.2 if fp4 else 0.08, (fmt, direction))

    def test_paired_projection_equals_c_abi(self):
        g = torch.Generator().manual_seed(21)
        x = torch.randn(2, 5, 64, generator=g).bfloat16()
        w0 = (torch.randn(24, 64, generator=g) / 8).bfloat16()
        w1t = (torch.randn(64, 16, generator=g) / 8).bfloat16()   # [K, H] storage
        bias, scale = torch.randn(16, generator=g), -torch.rand(16, generator=g)
        b0 = torch.randn(24, generator=g)
        cases = [dict(epilogue0="sigmoid", epilogue1="softplus_bias_scale", bias1=bias,
                      scale1=scale, out_dtype0=torch.float32, out_dtype1=torch.float32),
                 dict(epilogue0="bias", bias0=b0, epilogue1="silu", round0="bf16",
                      round1="bf16"),
                 dict(epilogue0="softplus_bias_scale", bias0=b0,
                      epilogue1="softplus_log_bias_scale", bias1=bias, scale1=scale,
                      round0="bf16", round1="bf16", out_dtype1=torch.float32),
                 dict(epilogue0="bias", bias0=b0, epilogue1="silu", bias1=bias,
                      round0="bf16_with_bias", round1="bf16_with_bias"),
                 dict(epilogue0="softplus_stable_bias_scale", bias0=b0,
                      epilogue1="softplus_stable_bias_scale", bias1=bias, scale1=scale,
                      out_dtype0=torch.float32, out_dtype1=torch.float32)]
        for kw in cases:
            o0, o1 = fusion_rt.paired_projection(x, w0, w1t.t(), **kw)
            self.assertEqual(o0.shape, (2, 5, 24))
            self.assertEqual(o1.shape, (2, 5, 16))
            r0, r1 = torch.full_like(o0, 7.0), torch.full_like(o1, 7.0)
            d = _abi.PairedProjection()
            d.lhs, d.weight0, d.weight1 = host_view(x), host_view(w0), host_view(w1t.t())
            d.epilogue0.kind = _abi.EPILOGUE[kw["epilogue0"]]
            d.epilogue1.kind = _abi.EPILOGUE[kw["epilogue1"]]
            d.epilogue0.accumulator_round = _abi.ACC_ROUND[kw.get("round0", "none")]
            d.epilogue1.accumulator_round = _abi.ACC_ROUND[kw.get("round1", "none")]
            for i in (0, 1):
                ep = getattr(d, "epilogue%d" % i)
                if kw.get("bias%d" % i) is not None:
                    ep.bias = host_view(kw["bias%d" % i])
                if kw.get("scale%d" % i) is not None:
                    ep.scale = host_view(kw["scale%d" % i])
            d.gated_kind, d.accumulate_dtype = -1, 2
            d.out0, d.out1 = host_view(r0), host_view(r1)
            self.assertEqual(LIB.fusion_rt_paired_projection_run(ctypes.byref(d), None, None), 0)
            self.assertEqual(tensor_bytes(o0), tensor_bytes(r0))
            self.assertEqual(tensor_bytes(o1), tensor_bytes(r1))
        # bf16_with_bias: the f32 accumulator plus the bias, rounded once (a
        # bf16 nn.Linear with bias=True), on one backend bit for bit
        y0, _ = fusion_rt.paired_projection(x, w0, w1t.t(), out_dtype0=torch.float32,
                                            out_dtype1=torch.float32)
        o0, _ = fusion_rt.paired_projection(x, w0, w1t.t(), **cases[3])
        self.assertEqual(tensor_bytes(o0), tensor_bytes((y0 + b0).bfloat16()))
        # against torch (f32 sums in another order: close, not bit-exact)
        beta, gg = fusion_rt.paired_projection(x, w0, w1t.t(), **cases[0])
        xf = x.float()
        tb = torch.sigmoid(xf @ w0.float().t())
        tg = scale * torch.nn.functional.softplus(xf @ w1t.float() + bias)
        self.assertLess((beta - tb).abs().max().item(), 1e-5)
        self.assertLess((gg - tg).abs().max().item(), 1e-4 * tg.abs().max().item())

    def test_paired_projection_gated(self):
        g = torch.Generator().manual_seed(22)
        x = torch.randn(9, 64, generator=g)
        wg, wu = torch.randn(32, 64, generator=g) / 8, torch.randn(32, 64, generator=g) / 8
        h, none = fusion_rt.paired_projection(x, wg, wu, gated="swiglu")
        self.assertIsNone(none)
        ref = torch.nn.functional.silu(x @ wg.t()) * (x @ wu.t())
        self.assertEqual(h.shape, (9, 32))
        self.assertLess((h - ref).abs().max().item(), 1e-5 * ref.abs().max().item() * 64)


class PairedQuantizeTest(unittest.TestCase):
    """paired_projection_quantize (the FFN front in one call) equals the
    gated pair followed by quantize byte for byte, for the formats, roundings
    and 3-D inputs; errors come back as FusionRtError."""

    def test_equals_pair_then_quantize(self):
        g = torch.Generator().manual_seed(31)
        for fmt, rnd, inter, shape in (("mxfp8_e4m3", "bf16", torch.bfloat16, (5, 64)),
                                       ("mxfp8_e5m2", "none", torch.float32, (2, 3, 64)),
                                       ("mxfp4", "bf16", torch.bfloat16, (7, 64)),
                                       ("nvfp4", "none", torch.bfloat16, (4, 64))):
            x = torch.randn(*shape, generator=g).bfloat16()
            wg = (torch.randn(96, 64, generator=g) / 8).bfloat16()
            wu = (torch.randn(96, 64, generator=g) / 8).bfloat16()
            q = fusion_rt.paired_projection_quantize(x, wg, wu, "swiglu", fmt, round0=rnd,
                                                     round1=rnd, intermediate_dtype=inter)
            h, _ = fusion_rt.paired_projection(x, wg, wu, gated="swiglu", round0=rnd,
                                               round1=rnd, out_dtype0=inter)
            r = fusion_rt.quantize(h.reshape(-1, 96), fmt)
            for name in ("rowwise_data", "rowwise_scales", "amax"):
                a, b = getattr(q, name), getattr(r, name)
                self.assertEqual(a is None, b is None, (fmt, name))
                if a is not None:
                    self.assertEqual(tensor_bytes(a), tensor_bytes(b), (fmt, name))

    def test_errors(self):
        x = torch.randn(4, 64).bfloat16()
        w = torch.randn(32, 64).bfloat16()
        with self.assertRaisesRegex(fusion_rt.FusionRtError, "intermediate_dtype"):
            fusion_rt.paired_projection_quantize(x, w, w, intermediate_dtype=torch.float64)
        with self.assertRaisesRegex(fusion_rt.FusionRtError, "gated pair needs as many"):
            fusion_rt.paired_projection_quantize(x, w, w[:16])
        with self.assertRaisesRegex(ValueError, "gated"):
            fusion_rt.paired_projection_quantize(x, w, w, gated="gelu")


class Fp8BlockTest(unittest.TestCase):
    """FP8 block scaling against its formula written in torch on the CPU
    (torch's CPU divides, as the runtime does): 1x128 token groups and 2D
    128x128 weight tiles (block_rows), and their dequantize."""

    @staticmethod
    def ref(x, br, bc, eps):
        m, n = x.shape
        xb = x.float().reshape(m // br, br, n // bc, bc)
        s = xb.abs().amax(dim=(1, 3), keepdim=True).clamp(min=eps) / 448.0
        q = (xb / s).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
        return q.reshape(m, n), s.reshape(m // br, n // bc)

    def test_token_groups_and_weight_tiles(self):
        torch.manual_seed(0)
        m, n = 256, 384
        x = (torch.randn(m, n) * 3).to(torch.bfloat16)
        x[130:, 256:] = 0.0  # a zero tile: the floor sets its scale
        for br in (1, 128):
            q = fusion_rt.quantize(x, "fp8_block_e4m3", block_cols=128, block_rows=br,
                                   amax_epsilon=1e-10)
            rq, rs = self.ref(x, br, 128, 1e-10)
            self.assertEqual(tuple(q.rowwise_scales.shape), tuple(rs.shape))
            self.assertEqual(tuple(q.rowwise_scales.shape),
                             fusion_rt.quant_shapes(m, n, "fp8_block_e4m3",
                                                    block_rows=br)["rowwise_scales"])
            self.assertTrue(torch.equal(q.rowwise_data.view(torch.uint8),
                                        rq.view(torch.uint8)), "codes, block_rows %d" % br)
            self.assertTrue(torch.equal(q.rowwise_scales.view(torch.int32),
                                        rs.view(torch.int32)), "scales, block_rows %d" % br)
            back = fusion_rt.dequantize(q.rowwise_data, q.rowwise_scales, "fp8_block_e4m3",
                                        block_cols=128, block_rows=br)
            want = (rq.float().reshape(m // br, br, n // 128, 128) *
                    rs.reshape(m // br, 1, n // 128, 1)).reshape(m, n)
            self.assertTrue(torch.equal(back, want), "dequantize, block_rows %d" % br)


class FakeTest(unittest.TestCase):
    """The fake implementations give the real outputs' shapes, dtypes and
    strides (torch.library.opcheck, and fake mode over every scheme)."""

    def test_opcheck_every_op(self):
        x = make_input(40, 96)
        g = make_input(40, 96, seed=1)
        ops = torch.ops.fusion_rt
        s = scheme_ints(format="mxfp8_e4m3", direction="both", colwise_layout="transposed")
        s4 = scheme_ints(format="mxfp4", direction="both", scale_layout="swizzled")
        snv = scheme_ints(format="nvfp4", direction="both", colwise_layout="transposed")
        act, gated = [_abi.ACT["gelu"], 0], [_abi.ACT["swiglu"], 0]
        p = [7.0, 1.0, 1.702]
        q = fusion_rt.quantize(x, "mxfp8_e4m3")
        qn = fusion_rt.quantize(x, "nvfp4")
        w = torch.randn(8, 96).bfloat16()
        cases = [
            (ops.quantize, (x, s, 0.0, None, True, True)),
            (ops.quantize, (x, s4, 0.0, None, False, False)),
            (ops.quantize, (x, snv, 0.0, None, False, False)),
            (ops.act_quantize, (x, g, act, p, s, 0.0, None, False, True)),
            (ops.gated_act_quantize, (x, None, None, gated, p, s4, 0.0, None, False, False)),
            (ops.gated_act_quantize, (x[:, :48], x[:, 48:], g[:, :48], gated, p, s, 0.0, None,
                                      True, False)),
            (ops.activation, (x, None, g, act, p, True)),
            (ops.dequantize, (q.rowwise_data, q.rowwise_scales, None, None, scheme_ints(), 0, -1,
                              torch.bfloat16)),
            (ops.dequantize, (qn.rowwise_data, qn.rowwise_scales, qn.amax, qn.scale_inv,
                              scheme_ints(format="nvfp4"), 0, 96, torch.float32)),
            (ops.paired_projection, (x, w, w[:4], [2, 0, 3, 1], None, None, None, None, -1,
                                     torch.float32, torch.bfloat16)),
            (ops.paired_projection, (x, w, w, [0, 0, 0, 0], None, None, None, None, 7,
                                     torch.bfloat16, torch.bfloat16)),
            (ops.paired_projection_quantize, (x, w.repeat(4, 1), w.repeat(4, 1), [0, 1, 0, 1],
                                              None, None, 7, torch.bfloat16, s, 0.0, None,
                                              False)),
        ]
        fp8 = (torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e8m0fnu)
        for op, args in cases:
            # test_schema compares inputs with allclose, which torch does not
            # implement for float8: left out where an input is float8
            skip = any(isinstance(a, torch.Tensor) and a.dtype in fp8 for a in args)
            utils = [u for u in getattr(torch.library, "_OPCHECK_DEFAULT_UTILS", (
                "test_schema", "test_autograd_registration", "test_faketensor",
                "test_aot_dispatch_dynamic")) if not (skip and u == "test_schema")]
            torch.library.opcheck(op, args, test_utils=utils)

    def test_fake_equals_real_every_scheme(self):
        from torch._subclasses.fake_tensor import FakeTensorMode
        x = make_input(37, 70)
        for kw in valid_schemes():
            for gb in (False, True):
                s = scheme_ints(**kw)
                if gb:
                    real = torch.ops.fusion_rt.gated_act_quantize(
                        x[:, :35], x[:, 35:], x[:, 1:36], [7, 2], [7.0, 1.0, 1.702], s, 0.0,
                        None, True, False)
                else:
                    real = torch.ops.fusion_rt.quantize(x, s, 0.0, None, True, True)
                with FakeTensorMode() as mode:
                    fx = mode.from_tensor(x)
                    if gb:
                        fake = torch.ops.fusion_rt.gated_act_quantize(
                            fx[:, :35], fx[:, 35:], fx[:, 1:36], [7, 2], [7.0, 1.0, 1.702], s,
                            0.0, None, True, False)
                    else:
                        fake = torch.ops.fusion_rt.quantize(fx, s, 0.0, None, True, True)
                for r, f in zip(real, fake):
                    self.assertEqual((r.shape, r.dtype, r.stride()), (f.shape, f.dtype, f.stride()),
                                     (kw, gb))

    def test_fake_rejects_invalid_scheme(self):
        from torch._subclasses.fake_tensor import FakeTensorMode
        s = scheme_ints(format="fp8_e4m3", scale_rounding="floor")
        with FakeTensorMode() as mode:
            fx = mode.from_tensor(make_input(4, 32))
            with self.assertRaisesRegex(fusion_rt.FusionRtError, "FLOOR applies to MX formats"):
                torch.ops.fusion_rt.quantize(fx, s, 0.0, None, False, False)


class ErrorTest(unittest.TestCase):
    def test_runtime_messages(self):
        x = make_input(8, 64)
        cases = [
            (lambda: fusion_rt.quantize(x, "fp8_e4m3", scale_rounding="floor"),
             "FLOOR applies to MX formats only", "UNSUPPORTED"),
            (lambda: fusion_rt.act_quantize(x, "gelu", grad=make_input(8, 32)),
             r"grad has shape \[8, 32\], expected \[8, 64\]", "BAD_SHAPE"),
            (lambda: fusion_rt.act_quantize(x, "swiglu"), "is gated: use the gated entry point",
             "BAD_VALUE"),
            (lambda: fusion_rt.gated_act_quantize(make_input(8, 63)), "even column count",
             "BAD_SHAPE"),
            (lambda: fusion_rt.gated_act_quantize(x, dbias=True) if False else
             torch.ops.fusion_rt.gated_act_quantize(x, None, None, [7, 2], [7.0, 1.0, 1.702],
                                                    scheme_ints(), 0.0, None, False, True),
             "gated activations have no bias gradient", "UNSUPPORTED"),
            (lambda: fusion_rt.quantize(x.to(torch.float8_e4m3fn)),
             "input has dtype F8E4M3, expected BF16, F16 or F32", "BAD_DTYPE"),
            (lambda: fusion_rt.quantize(x.reshape(1, 1, 2, 4, 64)), r"rank = 5 is not in 1\.\.4",
             "BAD_SHAPE"),
            (lambda: fusion_rt.quantize(x, "fp8_e4m3", scale=torch.ones(2)),
             r"outputs->scale has shape \[1, 2\], expected \[1, 1\]", "BAD_SHAPE"),
            (lambda: fusion_rt.paired_projection(x, torch.randn(4, 64), torch.randn(4, 64)),
             "desc->weight0 has dtype F32 but desc->lhs has BF16", "BAD_DTYPE"),
            (lambda: fusion_rt.paired_projection(x, x[:4], x[:4], epilogue0="bias"),
             "epilogue0.bias.data is NULL but epilogue0.kind is BIAS", "NULL_POINTER"),
            (lambda: fusion_rt.dequantize(fusion_rt.quantize(x).rowwise_data, None),
             "rowwise_scales.data is NULL", "NULL_POINTER"),
        ]
        for fn, msg, status in cases:
            with self.assertRaisesRegex(fusion_rt.FusionRtError, msg) as cm:
                fn()
            self.assertEqual(cm.exception.status_name, "FUSION_RT_STATUS_" + status)

    def test_python_side_errors(self):
        x = make_input(8, 64)
        with self.assertRaisesRegex(ValueError, "format = 'mxfp9' is not one of"):
            fusion_rt.quantize(x, "mxfp9")
        with self.assertRaisesRegex(ValueError, "act = 'tanh' is not one of"):
            fusion_rt.act_quantize(x, "tanh")
        with self.assertRaisesRegex(TypeError, "torch.float64"):
            fusion_rt.quantize(x.double())

    def test_a_failing_call_writes_nothing(self):
        """run_quantize (what the ops call) on sentinel-filled outputs with
        one bad argument: every output byte and the input stay as they were."""
        x = make_input(40, 96)
        x_before = x.clone()
        for kw, bad in ((dict(format="mxfp8_e4m3", direction="both"), "dtype"),
                        (dict(format="nvfp4", direction="both", colwise_layout="transposed"),
                         "shape"),
                        (dict(format="fp8_e4m3", direction="both", delayed=True), "scale")):
            s = scheme_ints(**kw)
            spec = _ops.quant_outputs_spec(s, 40, 96, False, True, True)
            outs = _ops._new(spec, "cpu")
            for t in outs:
                t.view(torch.uint8).fill_(common.SENTINEL)
            before = [tensor_bytes(t) for t in outs]
            if bad == "dtype":
                outs[0] = outs[0].view(torch.float8_e5m2)
            elif bad == "shape":
                spec[2] = (spec[2][0], (96, 38), spec[2][2], True)  # packed view 38 wide
            scale = torch.ones(2) if bad == "scale" else None
            with self.assertRaises(fusion_rt.FusionRtError):
                _ops.run_quantize(x, s, 0.0, scale, spec, outs)
            self.assertEqual([tensor_bytes(t) for t in outs], before, kw)
            self.assertTrue(torch.equal(x.view(torch.int16), x_before.view(torch.int16)))

    def test_library_not_found_message(self):
        code = ("import sys; sys.path.insert(0, %r); import torch, fusion_rt\n"
                "try:\n    fusion_rt.library_path()\nexcept fusion_rt.LibraryNotFound as e:\n"
                "    print('NOTFOUND', e)\n" % os.path.join(common.REPO, "python"))
        env = dict(os.environ, FUSION_RT_LIBRARY="/nonexistent/libfusion_rt.so")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True).stdout
        self.assertIn("NOTFOUND", out)
        self.assertIn("/nonexistent/libfusion_rt.so: no such file", out)


    def test_tuning_knobs(self):
        before = fusion_rt.get_tuning("FUSION_RT_PAIRED_PATH")
        fusion_rt.set_tuning("FUSION_RT_PAIRED_PATH", "blas")
        self.assertEqual(fusion_rt.get_tuning("paired_path"), 3)
        fusion_rt.set_tuning("paired_mt", 4)
        self.assertEqual(fusion_rt.get_tuning("FUSION_RT_PAIRED_MT"), 4)
        fusion_rt.set_tuning("paired_mt")
        fusion_rt.set_tuning("FUSION_RT_PAIRED_PATH", None)
        self.assertEqual(fusion_rt.get_tuning("FUSION_RT_PAIRED_PATH"), before)
        with self.assertRaisesRegex(fusion_rt.FusionRtError, "takes 0[|]1"):
            fusion_rt.set_tuning("FUSION_RT_CUDA_COL_T", "sph")
        with self.assertRaisesRegex(fusion_rt.FusionRtError, "not a tuning knob"):
            fusion_rt.get_tuning("FUSION_RT_NOPE")

class CompileTest(unittest.TestCase):
    """torch.compile(fullgraph=True) traces the ops and gives eager's bytes."""

    @staticmethod
    def model(x, gu, w0, w1):
        a = fusion_rt.act_quantize(x, "gelu", direction="both", intermediate_dtype=torch.bfloat16)
        b = fusion_rt.gated_act_quantize(gu, "swiglu", "mxfp4", direction="both",
                                         colwise_layout="transposed")
        c = fusion_rt.quantize(x * 2, "nvfp4")
        beta, g = fusion_rt.paired_projection(x, w0, w1, epilogue0="sigmoid",
                                              epilogue1="silu", out_dtype0=torch.float32)
        d = fusion_rt.dequantize(a.rowwise_data, a.rowwise_scales, dtype=torch.bfloat16)
        return (a.rowwise_data, a.colwise_scales, b.colwise_data, b.rowwise_scales,
                c.rowwise_data, c.scale_inv, beta, g, d)

    def _check(self, backend, dynamic=False):
        torch._dynamo.reset()
        f = torch.compile(self.model, fullgraph=True, backend=backend, dynamic=dynamic)
        for m in ((64, 96) if dynamic else (64,)):
            x = make_input(m, 128, seed=m)
            gu = make_input(m, 96, seed=m + 1)
            w0, w1 = make_input(16, 128, seed=2, wide=False), make_input(8, 128, seed=3,
                                                                          wide=False)
            got, want = f(x, gu, w0, w1), self.model(x, gu, w0, w1)
            for gt, wt in zip(got, want):
                self.assertEqual((gt.shape, gt.dtype), (wt.shape, wt.dtype))
                self.assertEqual(tensor_bytes(gt), tensor_bytes(wt))

    def test_compile_fullgraph_aot_eager(self):
        self._check("aot_eager")

    def test_compile_fullgraph_aot_eager_dynamic(self):
        self._check("aot_eager", dynamic=True)

    @unittest.skipIf(os.environ.get("FUSION_RT_SKIP_INDUCTOR") == "1",
                     "FUSION_RT_SKIP_INDUCTOR=1")
    def test_compile_fullgraph_inductor(self):
        self._check("inductor")


if __name__ == "__main__":
    unittest.main()
