"""The numerics contract in torch terms: on the CPU backend, each op's bytes
equal the torchao (0.18) function named in docs/pytorch.md, or, where
torchao has no equal (NVFP4, the activations), the documented formula
written with torch ops. Skips without torchao."""
import unittest

import common  # noqa: F401  (torch or a skip, the package, the library)
import torch
import torch.nn.functional as F
import fusion_rt

try:
    from torchao.prototype.mx_formats.mx_tensor import to_mx, to_dtype
    from torchao.prototype.mx_formats.config import ScaleCalculationMode
    from torchao.prototype.mx_formats.kernels import f32_to_f4_unpacked, pack_uint4
    from torchao.float8.float8_utils import tensor_to_scale, to_fp8_saturated
except ImportError as e:  # noqa
    raise unittest.SkipTest("torchao is not installed (%s): skipped" % e)

RCEIL, FLOOR = ScaleCalculationMode.RCEIL, ScaleCalculationMode.FLOOR
CEIL = ScaleCalculationMode.CEIL
ELEM = {"mxfp8_e4m3": torch.float8_e4m3fn, "mxfp8_e5m2": torch.float8_e5m2,
        "mxfp4": torch.float4_e2m1fn_x2}
# torchao's to_mx policies -> the runtime's scheme (docs/numerics.md §2, §7)
POLICY = {RCEIL: dict(scale_rounding="rceil", zero_scale="one"),
          FLOOR: dict(scale_rounding="floor", zero_scale="min_normal"),
          CEIL: dict(scale_rounding="ceil", zero_scale="min_normal")}


def special_input(rows, cols, dtype, seed):
    """Random blocks over 2^-20..2^20 plus edge blocks: zeros, -0.0, blocks of
    scale byte 0 (tiny values), the largest finite values, exact powers of two."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=g)
    e = torch.randint(-20, 21, (rows, cols // 32), generator=g).float()
    x = x * torch.exp2(e).repeat_interleave(32, dim=1)
    x[0, :32] = 0.0
    x[1, :32] = -0.0
    x[2, :32] = torch.randn(32, generator=g) * 2.0 ** -126
    x[3, :32] = torch.randn(32, generator=g) * 1e38
    x[4, :32] = torch.exp2(torch.arange(32.0) - 16)
    x[5, :32] = 448.0 * torch.sign(torch.randn(32, generator=g))
    x[6, :32] = 480.0
    return x.to(dtype)


def u8(t):
    return t.contiguous().view(torch.uint8)


class MxToTorchaoTest(unittest.TestCase):
    """quantize(format, rceil, zero_scale=one) == to_mx(..., RCEIL);
    quantize(format, floor, zero_scale=min_normal) == to_mx(..., FLOOR);
    quantize(format, ceil, zero_scale=min_normal) == to_mx(..., CEIL)."""

    def test_rowwise_equals_to_mx(self):
        n = 0
        for fmt, elem in ELEM.items():
            for mode, pol in POLICY.items():
                for dtype in (torch.bfloat16, torch.float32):
                    x = special_input(64, 256, dtype, seed=n)
                    scale, data = to_mx(x, elem, 32, mode)
                    q = fusion_rt.quantize(x, fmt, **pol)
                    what = "%s %s %s" % (fmt, mode, dtype)
                    self.assertTrue(torch.equal(u8(q.rowwise_scales), u8(scale)), what)
                    self.assertTrue(torch.equal(u8(q.rowwise_data), u8(data)), what)
                    n += 1
        self.assertEqual(n, 18)

    def test_colwise_equals_to_mx_of_the_transpose(self):
        x = special_input(96, 128, torch.bfloat16, seed=7).t().contiguous()  # [128, 96]
        for fmt in ("mxfp8_e4m3", "mxfp8_e5m2"):
            for mode, pol in POLICY.items():
                scale, data = to_mx(x.t().contiguous(), ELEM[fmt], 32, mode)
                qt = fusion_rt.quantize(x, fmt, direction="colwise", colwise_layout="transposed",
                                        **pol)
                qs = fusion_rt.quantize(x, fmt, direction="both", **pol)
                self.assertTrue(torch.equal(u8(qt.colwise_data), u8(data)))
                self.assertTrue(torch.equal(u8(qt.colwise_scales), u8(scale)))
                self.assertTrue(torch.equal(u8(qs.colwise_data), u8(data.t())))
                self.assertTrue(torch.equal(u8(qs.colwise_scales), u8(scale.t())))

    def test_swizzled_scales_equal_to_mx_swizzled(self):
        for rows, cols in ((128, 128), (200, 384), (64, 96)):
            x = special_input(rows, cols, torch.bfloat16, seed=rows)
            scale, _ = to_mx(x, torch.float8_e4m3fn, 32, RCEIL, is_swizzled_scales=True)
            q = fusion_rt.quantize(x, scale_layout="swizzled", **POLICY[RCEIL])
            self.assertEqual(q.rowwise_scales.numel(), scale.numel())
            self.assertTrue(torch.equal(u8(q.rowwise_scales).flatten(), u8(scale).flatten()))

    def test_dequantize_equals_to_dtype(self):
        x = special_input(64, 256, torch.float32, seed=3)
        for fmt, elem in ELEM.items():
            q = fusion_rt.quantize(x, fmt)  # zero_scale exact: torchao's 2^(s-127) factor
            for dtype in (torch.float32, torch.bfloat16):
                y = fusion_rt.dequantize(q.rowwise_data, q.rowwise_scales, fmt, dtype=dtype)
                data = q.rowwise_data  # packed FP4 stays uint8 (unpack_uint4 reads bytes)
                ref = to_dtype(data, q.rowwise_scales, elem, 32, dtype)
                self.assertTrue(torch.equal(u8(y), u8(ref)), (fmt, dtype))


class Fp8TensorwiseTest(unittest.TestCase):
    """quantize("fp8_e4m3" / "fp8_e5m2") == torchao.float8 tensorwise dynamic
    scaling: scale = tensor_to_scale(x), data = to_fp8_saturated(x.float() *
    scale), scale_inv = 1 / scale (for amax >= 1e-12, torchao's clamp)."""

    def test_equals_torchao_float8(self):
        for fmt, dt in (("fp8_e4m3", torch.float8_e4m3fn), ("fp8_e5m2", torch.float8_e5m2)):
            for pow2 in (False, True):
                for dtype in (torch.bfloat16, torch.float32):
                    x = special_input(64, 128, dtype, seed=11)[8:]  # no 1e38 / tiny rows
                    scale = tensor_to_scale(x, dt, round_scales_to_power_of_2=pow2)
                    ref = to_fp8_saturated(x.to(torch.float32) * scale, dt)
                    q = fusion_rt.quantize(x, fmt, force_pow2_scale=pow2, amax=True)
                    what = (fmt, pow2, dtype)
                    self.assertTrue(torch.equal(u8(q.rowwise_data), u8(ref)), what)
                    self.assertTrue(torch.equal(u8(q.scale_inv), u8(scale.reciprocal().reshape(1))),
                                    what)
                    self.assertEqual(q.amax.item(), x.float().abs().max().item())


class Fp8BlockwiseTrainingTest(unittest.TestCase):
    """quantize("fp8_block_e4m3", nvfp4_recipe="multiply", amax_epsilon=1e-12)
    == torchao's blockwise FP8 training quantizers
    (prototype.blockwise_fp8_training.kernels): 128x128 weight tiles
    (torch_blockwise_scale_weight_quant, block_rows=128) and 1x128 groups
    (torch_blockwise_scale_act_quant_lhs); both return 1 / scale."""

    def test_equals_torch_blockwise_quant(self):
        try:
            from torchao.prototype.blockwise_fp8_training.kernels import (
                torch_blockwise_scale_act_quant_lhs, torch_blockwise_scale_weight_quant)
        except ImportError as e:  # noqa
            self.skipTest("torchao without blockwise_fp8_training (%s)" % e)
        differing = 0
        for dtype in (torch.bfloat16, torch.float32):
            x = special_input(256, 384, dtype, seed=5)[:256]
            x[128:, 256:] = 0.0  # a zero tile: the 1e-12 floor sets its scale
            for br, ref in ((128, torch_blockwise_scale_weight_quant),
                            (1, torch_blockwise_scale_act_quant_lhs)):
                rq, rs = ref(x, 128)
                q = fusion_rt.quantize(x, "fp8_block_e4m3", block_cols=128, block_rows=br,
                                       amax_epsilon=1e-12, nvfp4_recipe="multiply")
                what = (dtype, br)
                self.assertTrue(torch.equal(u8(q.rowwise_data), u8(rq)), what)
                self.assertTrue(torch.equal(q.rowwise_scales.contiguous().view(torch.int32),
                                            rs.contiguous().view(torch.int32)), what)
            # The default recipe (x / (amax / 448)) is not torchao's: on this
            # input its bf16 tiles differ in a few codes (its f32 tiles
            # happen to agree), counted over both.
            q = fusion_rt.quantize(x, "fp8_block_e4m3", block_cols=128, block_rows=128,
                                   amax_epsilon=1e-12)
            differing += int((u8(q.rowwise_data)
                              != u8(torch_blockwise_scale_weight_quant(x, 128)[0])).sum())
        self.assertGreater(differing, 0)


class Fp8RowwiseTest(unittest.TestCase):
    """quantize("fp8_block_e4m3", block_cols=N, nvfp4_recipe="multiplier",
    amax_epsilon=1e-12) == torchao.float8's rowwise (axiswise) dynamic
    scaling: scale = tensor_to_scale(x, AXISWISE, axiswise_dim=-1), the
    multiplier max / amax that a Float8Tensor holds (written as it is), and
    data = to_fp8_saturated(x.float() * scale); with and without
    round_scales_to_power_of_2."""

    def test_equals_torchao_float8_rowwise(self):
        from torchao.float8.config import ScalingGranularity
        for fmt, dt in (("fp8_block_e4m3", torch.float8_e4m3fn),
                        ("fp8_block_e5m2", torch.float8_e5m2)):
            for pow2 in (False, True):
                for dtype in (torch.bfloat16, torch.float32):
                    x = special_input(64, 256, dtype, seed=13)[7:]  # no 1e38 row
                    x[0] = 0.0  # a zero row: the 1e-12 floor sets its scale
                    scale = tensor_to_scale(x, dt, scaling_granularity=ScalingGranularity.AXISWISE,
                                            axiswise_dim=-1, round_scales_to_power_of_2=pow2)
                    ref = to_fp8_saturated(x.to(torch.float32) * scale, dt)
                    q = fusion_rt.quantize(x, fmt, block_cols=x.shape[1], amax_epsilon=1e-12,
                                           force_pow2_scale=pow2, nvfp4_recipe="multiplier")
                    what = (fmt, pow2, dtype)
                    self.assertTrue(torch.equal(u8(q.rowwise_data), u8(ref)), what)
                    self.assertTrue(torch.equal(q.rowwise_scales.contiguous().view(torch.int32),
                                                scale.contiguous().view(torch.int32)), what)
                    # "multiply" writes 1 / scale: not the multiplier (not
                    # even its reciprocal's bytes, without pow2, everywhere).
                    m = fusion_rt.quantize(x, fmt, block_cols=x.shape[1], amax_epsilon=1e-12,
                                           force_pow2_scale=pow2, nvfp4_recipe="multiply")
                    self.assertTrue(torch.equal(u8(m.rowwise_data), u8(ref)), what)
                    self.assertFalse(torch.equal(m.rowwise_scales, scale), what)


class Nvfp4FormulaTest(unittest.TestCase):
    """NVFP4 is TE's recipe, not torchao's nvfp4_quantize (docs/numerics.md
    §3): written here with torch ops and torchao's e2m1 cast."""

    @staticmethod
    def reference(x):
        xf = x.float()
        m, n = xf.shape
        amax = xf.abs().max()
        fmax = torch.tensor(torch.finfo(torch.float32).max)
        s_enc = torch.minimum(torch.tensor(2688.0) / amax, fmax)
        s_dec = (1.0 / s_enc.double()).float()
        factor = s_enc * torch.tensor(1.0 / 6.0, dtype=torch.float32)
        blk = xf.reshape(m, n // 16, 16)
        bamax = blk.abs().amax(-1, keepdim=True)
        s = (bamax * factor).clamp(max=448.0).to(torch.float8_e4m3fn)
        enc = torch.minimum(1.0 / (s.float() * s_dec), fmax)
        q = pack_uint4(f32_to_f4_unpacked((blk * enc).reshape(m, n)))
        return q, s.reshape(m, n // 16), amax.reshape(1), s_dec.reshape(1)

    def test_equals_te_recipe(self):
        for dtype in (torch.bfloat16, torch.float32):
            x = special_input(64, 256, dtype, seed=5)[8:]
            q = fusion_rt.quantize(x, "nvfp4")
            data, scales, amax, s_dec = self.reference(x)
            self.assertTrue(torch.equal(u8(q.rowwise_data), u8(data)))
            self.assertTrue(torch.equal(u8(q.rowwise_scales), u8(scales)))
            self.assertTrue(torch.equal(u8(q.amax), u8(amax)))
            self.assertTrue(torch.equal(u8(q.scale_inv), u8(s_dec)))


class Nvfp4TorchaoTest(unittest.TestCase):
    """nvfp4_recipe="torchao" == torchao's nvfp4_quantize(x, 16,
    per_tensor_amax_to_scale(amax)); "torchao_block" == nvfp4_quantize(x, 16)
    without a per-tensor scale (docs/numerics.md §3). scale_inv is torchao's
    per-tensor scale (amax / 2688), or 1."""

    def test_equals_nvfp4_quantize(self):
        try:
            from torchao.prototype.mx_formats.nvfp4_tensor import (
                nvfp4_quantize, per_tensor_amax_to_scale)
        except ImportError as e:
            self.skipTest("torchao without nvfp4_quantize (%s)" % e)
        n = 0
        for dtype in (torch.bfloat16, torch.float32):
            x = special_input(64, 256, dtype, seed=9)[8:]  # no 1e38 / tiny rows
            for recipe, nan in (("torchao", "propagate"), ("torchao_block", "propagate"),
                                ("torchao", "ignore")):
                pts = per_tensor_amax_to_scale(x.float().abs().max()) \
                    if recipe == "torchao" else None
                scales, data = nvfp4_quantize(x, block_size=16, per_tensor_scale=pts)
                q = fusion_rt.quantize(x, "nvfp4", nvfp4_recipe=recipe, nan_policy=nan)
                what = (dtype, recipe, nan)
                self.assertTrue(torch.equal(u8(q.rowwise_data), u8(data)), what)
                self.assertTrue(torch.equal(u8(q.rowwise_scales).flatten(),
                                            u8(scales).flatten()), what)
                want = pts.reshape(1).float() if pts is not None else torch.ones(1)
                self.assertTrue(torch.equal(u8(q.scale_inv), u8(want)), what)
                n += 1
        self.assertEqual(n, 6)
        with self.assertRaises(RuntimeError):  # the torchao recipes are 1x16 only
            fusion_rt.quantize(special_input(32, 64, torch.float32, seed=1), "nvfp4",
                               nvfp4_recipe="torchao", nvfp4_block="2d")


def bf16_ulps(a, b):
    """Largest distance in bf16 codes between two bf16 tensors (same sign)."""
    ai = a.view(torch.int16).int()
    bi = b.view(torch.int16).int()
    return (ai - bi).abs().max().item()


class ActivationTest(unittest.TestCase):
    """act_quantize(act, intermediate bf16) == to_mx(torch_act(x).bfloat16())
    where the activation is exact in torch (identity, relu, srelu, reglu);
    the transcendental ones are within one bf16 ulp of torch's (the
    contract's libm allowance), and their fused quantizer equals
    activation() + quantize() bit for bit (test_ops_cpu)."""

    EXACT = {"identity": lambda x: x, "relu": F.relu, "srelu": lambda x: F.relu(x) ** 2}
    CLOSE = {"gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
             "silu": F.silu, "qgelu": lambda x: x * torch.sigmoid(1.702 * x)}

    def test_exact_activations_equal_to_mx(self):
        x = torch.randn(64, 256, generator=torch.Generator().manual_seed(1)).bfloat16()
        for name, f in self.EXACT.items():
            a = f(x.float()).bfloat16()
            scale, data = to_mx(a, torch.float8_e4m3fn, 32, RCEIL)
            q = fusion_rt.act_quantize(x, name, intermediate_dtype=torch.bfloat16,
                                       **POLICY[RCEIL])
            self.assertTrue(torch.equal(u8(q.rowwise_data), u8(data)), name)
            self.assertTrue(torch.equal(u8(q.rowwise_scales), u8(scale)), name)
        gu = torch.randn(64, 512, generator=torch.Generator().manual_seed(2)).bfloat16()
        a = (F.relu(gu[:, :256].float()) * gu[:, 256:].float()).bfloat16()
        scale, data = to_mx(a, torch.float8_e4m3fn, 32, RCEIL)
        q = fusion_rt.gated_act_quantize(gu, "reglu", intermediate_dtype=torch.bfloat16,
                                         **POLICY[RCEIL])
        self.assertTrue(torch.equal(u8(q.rowwise_data), u8(data)))

    def test_relu_backward_mask_select_equals_autograd(self):
        # autograd's ReLU / ReGLU backward (threshold_backward: +0 where the
        # input is <= 0) quantized by to_mx equals mask="select" byte for
        # byte; the default mask (TE's grad * 0) gives -0 codes there.
        g = torch.Generator().manual_seed(5)
        x, dy = torch.randn(64, 256, generator=g), torch.randn(64, 256, generator=g)
        xr = x.clone().requires_grad_()
        dx = torch.autograd.grad(F.relu(xr), xr, dy)[0]
        scale, data = to_mx(dx, torch.float8_e4m3fn, 32, RCEIL)
        q = fusion_rt.act_quantize(x, "relu", grad=dy, mask="select", **POLICY[RCEIL])
        self.assertTrue(torch.equal(u8(q.rowwise_data), u8(data)))
        self.assertTrue(torch.equal(u8(q.rowwise_scales), u8(scale)))
        te = fusion_rt.act_quantize(x, "relu", grad=dy, **POLICY[RCEIL])
        self.assertFalse(torch.equal(u8(te.rowwise_data), u8(data)))
        gate, up = torch.randn(64, 256, generator=g), torch.randn(64, 256, generator=g)
        gr, ur = gate.clone().requires_grad_(), up.clone().requires_grad_()
        dgate, dup = torch.autograd.grad(F.relu(gr) * ur, (gr, ur), dy)
        scale, data = to_mx(torch.cat([dgate, dup], -1), torch.float8_e4m3fn, 32, RCEIL)
        q = fusion_rt.gated_act_quantize(gate, "reglu", up=up, grad=dy, mask="select",
                                         **POLICY[RCEIL])
        self.assertTrue(torch.equal(u8(q.rowwise_data), u8(data)))
        with self.assertRaises(ValueError):
            fusion_rt.act_quantize(x, "relu", grad=dy, mask="zero")

    def test_transcendental_activations_within_one_ulp_of_torch(self):
        x = torch.randn(256, 256, generator=torch.Generator().manual_seed(3)).bfloat16()
        for name, f in self.CLOSE.items():
            got = fusion_rt.activation(x, name, intermediate_dtype=torch.bfloat16)
            ref = f(x.float()).bfloat16()
            self.assertLessEqual(bf16_ulps(got, ref), 1, name)
        gu = torch.randn(128, 512, generator=torch.Generator().manual_seed(4)).bfloat16()
        got = fusion_rt.activation(gu, "swiglu", intermediate_dtype=torch.bfloat16)
        ref = (F.silu(gu[:, :256].float()) * gu[:, 256:].float()).bfloat16()
        self.assertLessEqual(bf16_ulps(got, ref), 1)


if __name__ == "__main__":
    unittest.main()
