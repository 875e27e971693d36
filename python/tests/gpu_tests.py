#!/usr/bin/env python3
"""GPU tests of the fusion_rt torch ops (device machine; python/tests/device_run.sh).

For every case the op runs on CUDA tensors and is compared byte for byte
with (a) a direct C-ABI call (ctypes) on device buffers sized by
fusion_rt_quant_shapes_for, on the same stream, and (b) the op on the CPU
backend over the same input. As in runtime/test/gpu/gpu_bitexact_test.cpp,
activations with transcendental functions may differ from the CPU in under
1e-3 of the bytes (libm vs CUDA's expf/tanhf/erff); everything else is
identical. Then: the formats the CUDA backend does not implement raise the
runtime's status message and write nothing; the ops on a side stream;
capture in a CUDA graph and replay on new data; torch.compile(fullgraph=True)
(inductor, and mode="reduce-overhead") against eager.

Prints PASS / FAIL per test and a summary; exits 1 if any test failed, 0
otherwise (77 without a CUDA device).
Usage: PYTHONPATH=python FUSION_RT_LIBRARY=.devbin/libfusion_rt.so \
         python3 python/tests/gpu_tests.py [--quick]
"""
import ctypes
import itertools
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402  (torch, the package, the library)
from common import LIB, scheme_ints  # noqa: E402
import torch  # noqa: E402
import fusion_rt  # noqa: E402
from fusion_rt import _abi, _ops  # noqa: E402

QUICK = "--quick" in sys.argv
# --dry-run-cpu: the same comparisons with "device" tensors on the CPU (no
# GPU needed; checks this script's own logic; stream, graph and compile
# tests are left out)
DEV = "cpu" if "--dry-run-cpu" in sys.argv else "cuda"


def sync():
    if DEV == "cuda":
        torch.cuda.synchronize()


def cur_stream():
    return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream) if DEV == "cuda" else None
TRANSCENDENTAL = {"gelu", "gelu_tanh", "silu", "qgelu", "swiglu", "geglu", "geglu_erf", "qgeglu",
                  "clamped_swiglu"}
RESULTS = []


def run_test(name, fn):
    t0 = time.time()
    try:
        detail = fn() or ""
        RESULTS.append((name, True))
        print("PASS %s (%.1f s) %s" % (name, time.time() - t0, detail), flush=True)
    except Exception as e:  # noqa
        RESULTS.append((name, False))
        print("FAIL %s: %s" % (name, e), flush=True)
        traceback.print_exc(limit=4)


def gen_input(rows, cols, dtype, seed, special=True):
    """Random blocks over 2^-20..2^20 with special blocks (NaN, +-Inf, -0,
    zeros, subnormals, huge), built on the CPU (same bytes on both backends)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=g)
    e = torch.randint(-20, 21, (rows, (cols + 31) // 32), generator=g).float()
    x = x * torch.exp2(e).repeat_interleave(32, dim=1)[:, :cols]
    if special and rows >= 8 and cols >= 8:
        x[0, 0] = float("nan")
        x[1, 3] = float("inf")
        x[2, 5] = -float("inf")
        x[3, :] = -0.0
        x[4, :] = 1e-40
        x[5, :7] = 3e38
    return x.to(dtype)


def bytes_of(t):
    return t.detach().contiguous().view(torch.uint8).cpu()


def diff_count(a, b):
    a, b = bytes_of(a), bytes_of(b)
    if a.shape != b.shape:
        raise AssertionError("shape %s vs %s" % (tuple(a.shape), tuple(b.shape)))
    return int((a != b).sum())


# ------------------------------------------------------- direct C-ABI calls ----


class DeviceBuffers:
    """Device outputs of one direct C-ABI call (uint8 tensors, sentinel-filled),
    sized from fusion_rt_quant_shapes_for, views built here (not by the
    package)."""

    def __init__(self, s, rows, cols, gated_backward=False, amax=False, dbias=False):
        sh = common.c_shapes(s, rows, cols, gated_backward)
        self.o = _abi.QuantOutputs()
        self.t = {}
        fmt, direction = s[0], s[3]
        dcode = 3 if fmt in (0, 4) else 4

        def put(name, code, d0, d1, elem):
            buf = torch.full((max(1, d0 * d1 * elem),), common.SENTINEL, dtype=torch.uint8,
                             device=DEV)
            v = _abi.Tensor()
            v.data, v.dtype, v.rank = buf.data_ptr(), code, 2
            v.sizes[0], v.sizes[1], v.strides[0], v.strides[1] = d0, d1, d1, 1
            setattr(self.o, name, v)
            self.t[name] = buf[:d0 * d1 * elem]

        for copy, on in (("rowwise", direction != 1), ("colwise", direction != 0)):
            if on:
                put(copy + "_data", dcode, *sh[copy + "_data"], 1)
                put(copy + "_scales", 6, *sh[copy + "_scales"], 1)
        if amax:
            put("amax", 2, 1, 1, 4)
            self.o.amax.rank, self.o.amax.sizes[0] = 1, 1
        if dbias:
            put("dbias", 2, 1, cols, 4)


def c_call(entry, x, up, grad, act, s, rows, cols, gb, amax, dbias):
    """entry in quantize / act / gated, on device pointers, current stream."""
    db = DeviceBuffers(s, rows, cols, gb, amax, dbias)
    q = _ops.make_scheme(s, 0.0)
    views = [_ops.view(t, "in") if t is not None else None for t in (x, up, grad)]
    refs = [ctypes.byref(v) if v is not None else None for v in views]
    stream = cur_stream()
    if entry == "quantize":
        st = LIB.fusion_rt_quantize(refs[0], ctypes.byref(q), ctypes.byref(db.o), None, stream)
    else:
        a = _ops.make_activation(act, [7.0, 1.0, 1.702], grad is not None)
        if entry == "act":
            st = LIB.fusion_rt_act_quantize(refs[0], refs[2], ctypes.byref(a), ctypes.byref(q),
                                            ctypes.byref(db.o), None, stream)
        else:
            st = LIB.fusion_rt_gated_act_quantize(refs[0], refs[1], refs[2], ctypes.byref(a),
                                                  ctypes.byref(q), ctypes.byref(db.o), None,
                                                  stream)
    if st != 0:
        raise AssertionError("C ABI: %s" % LIB.fusion_rt_last_error_message())
    sync()
    return db.t


def compare(what, gpu, cabi, cpu, tolerant):
    """gpu (Quantized on CUDA) == cabi (bytes) exactly; == cpu exactly, or
    within 1e-3 of the bytes when tolerant. Returns the CPU mismatches."""
    mism, total = 0, 0
    for name in _ops.OUTPUT_NAMES:
        g, c = getattr(gpu, name), getattr(cpu, name)
        if (g is None) != (c is None):
            raise AssertionError("%s: %s present on one backend only" % (what, name))
        if g is None:
            continue
        if name in cabi and not torch.equal(bytes_of(g).flatten(), cabi[name].cpu()):
            raise AssertionError("%s: %s differs from the direct C-ABI call" % (what, name))
        d = diff_count(g, c)
        if name == "dbias" and tolerant:
            # dbias sums the pre-rounding activation: ulp-level differences
            d = int(((g.cpu() - c).abs() > 1e-5 * (c.abs() + 1e-30)).sum())
        mism += d
        total += g.numel() * g.element_size()
    if mism and (not tolerant or mism > 1e-3 * total):
        raise AssertionError("%s: %d of %d bytes differ from the CPU backend"
                             % (what, mism, total))
    return mism


# ---------------------------------------------------------------- the tests ----

MX = ("mxfp8_e4m3", "mxfp8_e5m2")


def test_quantize_mxfp8():
    n = ran = 0
    shapes = [(70, 203), (256, 512), (33, 64)] if not QUICK else [(70, 203)]
    for fmt, (direction, cl), sl, (rnd, zs), nan, dt in itertools.product(
            MX, (("rowwise", "same"), ("colwise", "same"), ("colwise", "transposed"),
                 ("both", "same"), ("both", "transposed")),
            ("compact", "swizzled"),
            (("rceil", "exact"), ("floor", "exact"), ("rceil", "one"), ("floor", "min_normal"),
             ("ceil", "min_normal")),
            ("propagate", "ignore"), (torch.bfloat16, torch.float32, torch.float16)):
        n += 1
        if QUICK and (n % 5):
            continue
        r, c = shapes[n % len(shapes)]
        kw = dict(format=fmt, direction=direction, colwise_layout=cl, scale_layout=sl,
                  scale_rounding=rnd, zero_scale=zs, nan_policy=nan)
        x = gen_input(r, c, dt, seed=n)
        xg = x.to(DEV)
        g = fusion_rt.quantize(xg, amax=True, **kw)
        sync()
        cab = c_call("quantize", xg, None, None, None, scheme_ints(**kw), r, c, False, True,
                     False)
        compare(str(kw), g, cab, fusion_rt.quantize(x, amax=True, **kw), False)
        ran += 1
    return "%d cases" % ran


def test_act_quantize():
    n, mism = 0, 0
    for name in ("identity", "relu", "gelu", "gelu_tanh", "silu", "qgelu", "srelu"):
        for bwd, direction in itertools.product((False, True), ("rowwise", "both")):
            dt = (torch.bfloat16, torch.float16, torch.float32)[n % 3]
            r, c = (96, 256) if n % 2 else (70, 203)
            x = gen_input(r, c, dt, seed=100 + n, special=False)
            grad = gen_input(r, c, dt, seed=200 + n, special=False) if bwd else None
            kw = dict(direction=direction, colwise_layout="transposed" if n % 2 else "same")
            inter = torch.bfloat16 if n % 3 else torch.float32
            g = fusion_rt.act_quantize(x.to(DEV), name, grad=None if grad is None else grad.to(DEV),
                                       intermediate_dtype=inter, dbias=bwd, amax=True, **kw)
            sync()
            cab = c_call("act", x.to(DEV), None, None if grad is None else grad.to(DEV),
                         [_abi.ACT[name], _abi.DTYPE["bf16" if inter == torch.bfloat16 else "f32"]],
                         scheme_ints(**kw), r, c, False, True, bwd)
            cpu = fusion_rt.act_quantize(x, name, grad=grad, intermediate_dtype=inter,
                                         dbias=bwd, amax=True, **kw)
            mism += compare("%s bwd=%s %s" % (name, bwd, kw), g, cab, cpu,
                            name in TRANSCENDENTAL)
            n += 1
    return "%d cases, %d bytes differ from the CPU (transcendental kinds)" % (n, mism)


def test_gated_act_quantize():
    n, mism = 0, 0
    for name in _abi.GATED_ACTS:
        for bwd, packed in itertools.product((False, True), (True, False)):
            dt = (torch.bfloat16, torch.float16, torch.float32)[n % 3]
            r, k = 64 + n, 96 if n % 2 else 160
            xu = gen_input(r, 2 * k, dt, seed=300 + n, special=False)
            grad = gen_input(r, k, dt, seed=400 + n, special=False) if bwd else None
            kw = dict(direction="both" if n % 2 else "rowwise",
                      colwise_layout="transposed" if n % 3 == 1 else "same",
                      scale_layout="swizzled" if n % 4 == 3 else "compact")
            inter = torch.bfloat16 if n % 2 else torch.float32

            def call(t, gr):
                if packed:
                    return fusion_rt.gated_act_quantize(t, name, grad=gr, intermediate_dtype=inter,
                                                        **kw)
                return fusion_rt.gated_act_quantize(t[:, :k], name, up=t[:, k:], grad=gr,
                                                    intermediate_dtype=inter, **kw)
            xg, gg = xu.to(DEV), None if grad is None else grad.to(DEV)
            g = call(xg, gg)
            sync()
            cab = c_call("gated", xg if packed else xg[:, :k], None if packed else xg[:, k:], gg,
                         [_abi.ACT[name], 0 if inter == torch.bfloat16 else 2],
                         scheme_ints(**kw), r, 2 * k if bwd else k, bwd, False, False)
            mism += compare("%s bwd=%s packed=%s %s" % (name, bwd, packed, kw), g, cab,
                            call(xu, grad), name in TRANSCENDENTAL)
            n += 1
    return "%d cases, %d bytes differ from the CPU (transcendental kinds)" % (n, mism)


def test_paired_projection():
    n = 0
    worst = 0.0
    for dt, N, K, H0, H1, gated in ((torch.bfloat16, 1, 2048, 32, 32, None),
                                    (torch.bfloat16, 16, 2048, 32, 32, None),
                                    (torch.bfloat16, 300, 1024, 48, 40, None),
                                    (torch.float16, 7, 512, 64, 64, "swiglu"),
                                    (torch.float32, 33, 256, 16, 24, None),
                                    (torch.bfloat16, 2048, 2048, 256, 256, "swiglu")):
        g = torch.Generator().manual_seed(n)
        x = torch.randn(N, K, generator=g).to(dt)
        w0 = (torch.randn(H0, K, generator=g) / K ** 0.5).to(dt)
        w1t = (torch.randn(K, H1, generator=g) / K ** 0.5).to(dt)  # [K, H] storage
        bias, scale = torch.randn(H1, generator=g), -torch.rand(H1, generator=g)
        if gated:
            kw = dict(gated=gated, round0="bf16" if dt == torch.bfloat16 else "none")
        else:
            kw = dict(epilogue0="sigmoid", epilogue1="softplus_bias_scale", bias1=bias,
                      scale1=scale, out_dtype0=torch.float32, out_dtype1=torch.float32)
        kwg = {k: (v.to(DEV) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        o0, o1 = fusion_rt.paired_projection(x.to(DEV), w0.to(DEV), w1t.to(DEV).t(), **kwg)
        sync()
        # direct C ABI on device
        r0 = torch.full_like(o0, 7.0)
        r1 = torch.full_like(o1, 7.0) if o1 is not None else None
        d = _abi.PairedProjection()
        xs, w0s, w1s = x.to(DEV), w0.to(DEV), w1t.to(DEV).t()
        d.lhs, d.weight0, d.weight1 = _ops.view(xs, "x"), _ops.view(w0s, "w0"), _ops.view(w1s, "w1")
        if gated:
            d.gated_kind = _abi.ACT[gated]
            d.epilogue0.accumulator_round = _abi.ACC_ROUND[kw["round0"]]
        else:
            d.gated_kind = -1
            d.epilogue0.kind, d.epilogue1.kind = 2, 4
            d.epilogue1.bias, d.epilogue1.scale = _ops.view(kwg["bias1"], "b"), \
                _ops.view(kwg["scale1"], "s")
            d.out1 = _ops.view(r1, "out1")
        d.accumulate_dtype = 2
        d.out0 = _ops.view(r0, "out0")
        st = LIB.fusion_rt_paired_projection_run(
            ctypes.byref(d), None, cur_stream())
        assert st == 0, LIB.fusion_rt_last_error_message()
        sync()
        assert torch.equal(bytes_of(o0), bytes_of(r0)), "out0 differs from the C ABI (%d)" % n
        if o1 is not None:
            assert torch.equal(bytes_of(o1), bytes_of(r1)), "out1 differs from the C ABI"
        # CPU backend: same op, another summation order (paired-projections.md)
        c0, c1 = fusion_rt.paired_projection(x, w0, w1t.t(), **kw)
        for gt, ct in ((o0, c0), (o1, c1)):
            if gt is None:
                continue
            err = ((gt.cpu().double() - ct.double()).norm() / ct.double().norm()).item()
            bound = 1e-5 if gt.dtype == torch.float32 else 2 ** -7
            assert err <= bound, "case %d: GPU vs CPU norm-wise %.2e > %.0e" % (n, err, bound)
            worst = max(worst, err)
        n += 1
    return "%d cases; worst norm-wise GPU vs CPU %.1e" % (n, worst)


def test_paired_projection_quantize():
    """The FFN front in one call on device tensors: equal to the gated pair +
    quantize on the device where the pair runs its own kernels (gemv, mma),
    and to the CPU backend's call within the summation bound everywhere
    (>= 99 % of codes and scales equal; the cuBLAS prefill form included)."""
    n = 0
    worst = 1.0
    for dt, N, K, H, rnd, inter in ((torch.bfloat16, 1, 2048, 64, "bf16", torch.bfloat16),
                                    (torch.bfloat16, 300, 1024, 96, "bf16", torch.bfloat16),
                                    (torch.float32, 5, 512, 64, "none", torch.float32),
                                    (torch.bfloat16, 16, 4096, 2048, "bf16", torch.bfloat16)):
        g = torch.Generator().manual_seed(40 + n)
        x = torch.randn(N, K, generator=g).to(dt)
        wg = (torch.randn(H, K, generator=g) / K ** 0.5).to(dt)
        wu = (torch.randn(H, K, generator=g) / K ** 0.5).to(dt)
        kw = dict(round0=rnd, round1=rnd, intermediate_dtype=inter)
        q = fusion_rt.paired_projection_quantize(x.to(DEV), wg.to(DEV), wu.to(DEV), "swiglu",
                                                 "mxfp8_e4m3", **kw)
        sync()
        c = fusion_rt.paired_projection_quantize(x, wg, wu, "swiglu", "mxfp8_e4m3", **kw)
        codes = (bytes_of(q.rowwise_data).cpu() == bytes_of(c.rowwise_data)).float().mean().item()
        scales = (bytes_of(q.rowwise_scales).cpu() == bytes_of(c.rowwise_scales)).float().mean().item()
        assert codes >= 0.99 and scales >= 0.99, \
            "case %d: GPU vs CPU codes %.4f scales %.4f equal" % (n, codes, scales)
        worst = min(worst, codes)
        if N * K * 2 * H <= 3 * 2 ** 26:  # the pair's own kernels: the two calls' bytes
            h, _ = fusion_rt.paired_projection(x.to(DEV), wg.to(DEV), wu.to(DEV), gated="swiglu",
                                               round0=rnd, round1=rnd, out_dtype0=inter)
            r = fusion_rt.quantize(h, "mxfp8_e4m3")
            sync()
            assert torch.equal(bytes_of(q.rowwise_data), bytes_of(r.rowwise_data)) and \
                torch.equal(bytes_of(q.rowwise_scales), bytes_of(r.rowwise_scales)), \
                "case %d: fused differs from pair + quantize on the device" % n
        n += 1
    return "%d cases; worst share of codes equal to the CPU's %.4f" % (n, worst)


def test_formats_on_cuda_and_errors():
    """Every format, dequantize and activation on CUDA tensors equal the CPU
    backend byte for byte (runtime/cuda/formats.cu); argument errors on the
    device write nothing."""
    x = gen_input(64, 128, torch.bfloat16, seed=5).to(DEV)
    msgs = []
    for fmt in ("mxfp4", "nvfp4", "fp8_e4m3", "fp8_e5m2"):
        g = fusion_rt.quantize(x, fmt)
        c = fusion_rt.quantize(x.cpu(), fmt)
        sync()
        for name in ("rowwise_data", "rowwise_scales", "scale_inv", "amax"):
            a, b = getattr(g, name, None), getattr(c, name, None)
            if a is None or b is None:
                continue
            assert torch.equal(bytes_of(a).cpu(), bytes_of(b)), "%s %s: GPU != CPU" % (fmt, name)
        msgs.append(fmt)
    q = fusion_rt.quantize(x)
    dg = fusion_rt.dequantize(q.rowwise_data, q.rowwise_scales)
    dc = fusion_rt.dequantize(q.rowwise_data.cpu(), q.rowwise_scales.cpu())
    ag = fusion_rt.activation(x, "relu", intermediate_dtype=torch.bfloat16)
    ac = fusion_rt.activation(x.cpu(), "relu", intermediate_dtype=torch.bfloat16)
    sync()
    assert torch.equal(bytes_of(dg).cpu(), bytes_of(dc)), "dequantize: GPU != CPU"
    assert torch.equal(bytes_of(ag).cpu(), bytes_of(ac)), "activation: GPU != CPU"
    msgs += ["dequantize", "activation"]
    if torch.device(DEV).type != "cuda":  # --dry-run-cpu: no device errors
        return "GPU = CPU: " + ", ".join(msgs)
    # an argument error on device: the preallocated outputs stay as they were
    s = scheme_ints(direction="both")
    spec = _ops.quant_outputs_spec(s, 64, 128, False, True, False)
    outs = _ops._new(spec, x.device)
    for t in outs:
        t.view(torch.uint8).fill_(common.SENTINEL)
    before = [bytes_of(t) for t in outs]
    outs[3] = outs[3].view(torch.float8_e4m3fn)  # colwise scales of the wrong dtype
    try:
        _ops.run_quantize(x, s, 0.0, None, spec, outs)
        raise AssertionError("no error for a wrong scale dtype")
    except fusion_rt.FusionRtError:
        pass
    sync()
    assert all(torch.equal(b, bytes_of(t)) for b, t in zip(before, outs)), "an output was written"
    # a host tensor beside device tensors: the runtime's message
    try:
        fusion_rt.paired_projection(x, x[:8], x[:8].cpu())
        raise AssertionError("no error for a host weight")
    except fusion_rt.FusionRtError as e:
        assert "host memory" in str(e) or "device" in str(e), e
    return "GPU = CPU: " + ", ".join(msgs)


def test_side_stream():
    """The op runs on the current stream: a side stream whose input is
    written right before the call (no sync) gives the right bytes."""
    x = gen_input(4096, 4096, torch.bfloat16, seed=9, special=False)
    want = fusion_rt.quantize(x.to(DEV), direction="both")
    s = torch.cuda.Stream()
    src = x.to(DEV)
    sync()
    with torch.cuda.stream(s):
        xs = torch.empty_like(src)
        for _ in range(4):  # queue work ahead of the op on s
            xs.copy_(src)
        got = fusion_rt.quantize(xs, direction="both")
    s.synchronize()
    for a, b in zip(got, want):
        if a is not None:
            assert torch.equal(bytes_of(a), bytes_of(b)), "side-stream result differs"


def graph_fn(x, gu, grad, w0, w1):
    a = fusion_rt.quantize(x, direction="both", colwise_layout="transposed",
                           scale_layout="swizzled")
    b = fusion_rt.gated_act_quantize(gu, "swiglu", direction="both",
                                     intermediate_dtype=torch.bfloat16)
    c = fusion_rt.act_quantize(x, "gelu_tanh", grad=grad, direction="both", dbias=True)
    beta, g = fusion_rt.paired_projection(x[:16], w0, w1, epilogue0="sigmoid", epilogue1="silu",
                                          out_dtype0=torch.float32)
    return [a.rowwise_data, a.colwise_data, a.colwise_scales, b.rowwise_data, b.colwise_scales,
            c.colwise_data, c.dbias, beta, g]


def graph_inputs(seed):
    x = gen_input(512, 1024, torch.bfloat16, seed, special=False).to(DEV)
    gu = gen_input(512, 2048, torch.bfloat16, seed + 1, special=False).to(DEV)
    grad = gen_input(512, 1024, torch.bfloat16, seed + 2, special=False).to(DEV)
    w0 = (torch.randn(64, 1024, generator=torch.Generator().manual_seed(seed)) / 32).bfloat16().to(DEV)
    w1 = (torch.randn(48, 1024, generator=torch.Generator().manual_seed(seed + 1)) / 32).bfloat16().to(DEV)
    return [x, gu, grad, w0, w1]


def test_cuda_graph():
    static = graph_inputs(1)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up (cuBLAS handles, workspaces) off the graph
        for _ in range(2):
            graph_fn(*static)
    torch.cuda.current_stream().wait_stream(s)
    sync()
    g = torch.cuda.CUDAGraph()
    try:  # torch's default capture mode ("global")
        with torch.cuda.graph(g):
            outs = graph_fn(*static)
    except Exception as e:  # noqa
        # say whether a laxer capture mode works, then fail
        sync()
        g2 = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(g2, capture_error_mode="relaxed"):
                graph_fn(*static)
            lax = "capture_error_mode='relaxed' captures"
        except Exception as e2:  # noqa
            lax = "relaxed fails too: %r" % (e2,)
        raise AssertionError("capture in the default mode failed: %r; %s" % (e, lax))
    for seed in (11, 21):
        new = graph_inputs(seed)
        for dst, src in zip(static, new):
            dst.copy_(src)
        g.replay()
        sync()
        want = graph_fn(*new)
        for i, (a, b) in enumerate(zip(outs, want)):
            assert torch.equal(bytes_of(a), bytes_of(b)), "graph replay output %d differs" % i
    return "2 replays on new inputs"


def compiled_fn(x, gu, grad, w0, w1):
    # torch ops around the fusion ops, so that inductor has kernels to fuse
    y = torch.nn.functional.silu(x) * 2.0
    a = fusion_rt.quantize(y, direction="both")
    b = fusion_rt.gated_act_quantize(gu, "swiglu", grad=grad, direction="both")
    beta, g = fusion_rt.paired_projection(x[:16], w0, w1, epilogue0="sigmoid",
                                          epilogue1="silu", out_dtype0=torch.float32)
    return [y, a.rowwise_data, a.colwise_scales, b.rowwise_scales, b.colwise_data, beta + 1.0,
            g * 3]


def check_compiled(mode):
    """The compiled function's outputs equal eager's. The quantized y is
    compared with the op applied to the compiled y (inductor's silu may
    round differently from eager's; the op must not)."""
    torch._dynamo.reset()
    f = torch.compile(compiled_fn, fullgraph=True, mode=mode)
    for seed in (31, 41, 51):
        ins = graph_inputs(seed)
        got = [t.clone() for t in f(*ins)]
        want = compiled_fn(*ins)
        for i, (a, b) in enumerate(zip(got, want)):
            assert (a.shape, a.dtype) == (b.shape, b.dtype), (i, a.shape, b.shape)
        for i in (3, 4, 5, 6):
            assert torch.equal(bytes_of(got[i]), bytes_of(want[i])), "output %d differs" % i
        q = fusion_rt.quantize(got[0], direction="both")
        assert torch.equal(bytes_of(got[1]), bytes_of(q.rowwise_data)), "quantize differs"
        assert torch.equal(bytes_of(got[2]), bytes_of(q.colwise_scales)), "scales differ"
    return "3 calls, eager bytes"


def test_compile_fullgraph():
    return check_compiled(None)


def test_compile_fullgraph_reduce_overhead():
    return check_compiled("reduce-overhead")


def main():
    if DEV == "cuda" and not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 77
    print("device: %s; torch %s; library %s (CUDA backend: %s)"
          % (torch.cuda.get_device_name(0) if DEV == "cuda" else "CPU (dry run)",
             torch.__version__, fusion_rt.library_path(), fusion_rt.has_cuda()), flush=True)
    assert fusion_rt.has_cuda(), "the library has no CUDA backend"
    cuda_only = ("unsupported_on_cuda_writes_nothing", "side_stream", "cuda_graph_capture_replay",
                 "compile_fullgraph_inductor", "compile_fullgraph_reduce_overhead")
    for name, fn in [("quantize_mxfp8_vs_c_abi_and_cpu", test_quantize_mxfp8),
                     ("act_quantize_vs_c_abi_and_cpu", test_act_quantize),
                     ("gated_act_quantize_vs_c_abi_and_cpu", test_gated_act_quantize),
                     ("paired_projection_vs_c_abi_and_cpu", test_paired_projection),
                     ("paired_projection_quantize_vs_device_and_cpu",
                      test_paired_projection_quantize),
                     ("formats_on_cuda_and_errors", test_formats_on_cuda_and_errors),
                     ("side_stream", test_side_stream),
                     ("cuda_graph_capture_replay", test_cuda_graph),
                     ("compile_fullgraph_inductor", test_compile_fullgraph),
                     ("compile_fullgraph_reduce_overhead", test_compile_fullgraph_reduce_overhead)]:
        if DEV == "cpu" and name in cuda_only:
            continue
        run_test(name, fn)
    failed = [n for n, ok in RESULTS if not ok]
    print("GPU TESTS: %d passed, %d failed%s" % (len(RESULTS) - len(failed), len(failed),
                                                 (": " + ", ".join(failed)) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
