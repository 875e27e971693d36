#!/usr/bin/env python3
"""Paired projection benchmark on the H200: the fused GDN gate pair
(beta = sigmoid(x Wb^T), g = A * softplus(x Wa^T + dt_bias), f32 outputs, bf16
x and weights) through the runtime's C ABI, against its peers, in one run.

Arms (every one captured in a CUDA graph of R back-to-back calls; each call
reads a different copy of the weights, R copies >= 128 MiB, so the weights
come from HBM as they do in a model where other layers evict them):
  ours            fusion_rt_paired_projection_run (the selector's choice)
  ours-gemv       FUSION_RT_PAIRED_PATH=gemv  (selector measurement)
  ours-blas       FUSION_RT_PAIRED_PATH=blas  (selector measurement)
  eager           F.linear x2 + sigmoid / add / softplus / mul (HF-style)
  concat+triton   one F.linear with the concatenated [2H, K] weight + a fused
                  Triton gating kernel (vLLM's fused_gdn_gating, ported)
  compile         torch.compile(eager) default mode (static shapes)
  compile-maxat   torch.compile(eager, mode="max-autotune-no-cudagraphs")
Per-call time = median over 15 replays of (replay time / R).

Also: accuracy of every arm against an fp64 reference (norm-wise relative
error, max over the two outputs), the graph-launch floor (one tiny kernel),
the copy ceiling, the gemv launch variants (cluster size S, rows per warp).

Usage: paired_bench.py --lib path/to/libfusion_rt.so --out DIR [--budget S]
Writes DIR/paired_bench.{csv,md,png}, DIR/paired_selector.csv,
DIR/paired_variants.csv. --budget: seconds after which the remaining
torch.compile arms are skipped (reported as not run).
"""
import argparse
import ctypes
import datetime
import math
import os
import statistics
import subprocess
import sys
import time

try:
    import torch
    import torch.nn.functional as F
    import triton
    import triton.language as tl
    TORCH_VERSION, TRITON_VERSION = torch.__version__, triton.__version__
except ImportError:  # --replot needs neither
    torch = F = triton = tl = None
    TORCH_VERSION, TRITON_VERSION = "2.11.0+cu130", "3.6.0"

T0 = time.time()

# The "ours-torch" arm: ours called as the python/fusion_rt torch op.
try:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pytorch"))
    import torch_arms
except Exception:  # no torch, or the package does not import
    torch_arms = None

# ---------------------------------------------------------------- C ABI ----


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32),
                ("rank", ctypes.c_int32), ("sizes", ctypes.c_int64 * 4),
                ("strides", ctypes.c_int64 * 4)]


class Epilogue(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("accumulator_round", ctypes.c_int32),
                ("bias", Tensor), ("scale", Tensor)]


class Paired(ctypes.Structure):
    _fields_ = [("lhs", Tensor), ("weight0", Tensor), ("weight1", Tensor),
                ("epilogue0", Epilogue), ("epilogue1", Epilogue),
                ("gated_kind", ctypes.c_int32), ("accumulate_dtype", ctypes.c_int32),
                ("out0", Tensor), ("out1", Tensor)]


DT = {torch.bfloat16: 0, torch.float16: 1, torch.float32: 2} if torch else {}
EPI_SIGMOID, EPI_SOFTPLUS_BIAS_SCALE = 2, 4


def tview(t):
    v = Tensor()
    v.data = t.data_ptr()
    v.dtype = DT[t.dtype]
    v.rank = t.dim()
    for i in range(t.dim()):
        v.sizes[i] = t.shape[i]
        v.strides[i] = t.stride(i)
    return v


def load_lib(path):
    lib = ctypes.CDLL(path)
    lib.fusion_rt_paired_projection_run.argtypes = [
        ctypes.POINTER(Paired), ctypes.c_void_p, ctypes.c_void_p]
    lib.fusion_rt_paired_projection_run.restype = ctypes.c_int
    lib.fusion_rt_last_error_message.restype = ctypes.c_char_p
    lib.fusion_rt_set_tuning.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    lib.fusion_rt_get_tuning.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64)]
    assert lib.fusion_rt_has_cuda() == 1, "libfusion_rt built without CUDA"
    global _LIB
    _LIB = lib
    return lib


_LIB = None  # the runtime load_lib loaded: with_env sets its tuning knobs
# Values of the knobs that take names (runtime/common/tuning.def), by position.
_KNOB_NAMES = {"FUSION_RT_PAIRED_PATH": ["auto", "gemv", "mma", "blas", "generic"]}


def set_knob(name, value):
    """fusion_rt_set_tuning: the runtime reads the environment only once."""
    st = _LIB.fusion_rt_set_tuning(name.encode(), None if value is None else str(value).encode())
    if st != 0:
        raise RuntimeError("fusion_rt_set_tuning(%s, %s): %s"
                           % (name, value, _LIB.fusion_rt_last_error_message().decode()))


def get_knob(name):
    v = ctypes.c_int64()
    if _LIB.fusion_rt_get_tuning(name.encode(), ctypes.byref(v)) != 0:
        raise RuntimeError(_LIB.fusion_rt_last_error_message().decode())
    names = _KNOB_NAMES.get(name)
    return names[v.value] if names else str(v.value)


def gdn_desc(x, wb, wa, dt_bias, A, beta, g):
    d = Paired()
    d.lhs = tview(x)
    d.weight0 = tview(wb)
    d.weight1 = tview(wa)
    d.epilogue0.kind = EPI_SIGMOID
    d.epilogue1.kind = EPI_SOFTPLUS_BIAS_SCALE
    d.epilogue1.bias = tview(dt_bias)
    d.epilogue1.scale = tview(A)
    # FUSION_BENCH_ROUND=1 (bf16) / 2 (f16): both accumulators rounded
    # before the epilogues, as for a bf16 model's gates (round(bf16)).
    d.epilogue0.accumulator_round = int(os.environ.get("FUSION_BENCH_ROUND", "0"))
    d.epilogue1.accumulator_round = d.epilogue0.accumulator_round
    d.gated_kind = -1
    d.accumulate_dtype = 2
    d.out0 = tview(beta)
    d.out1 = tview(g)
    return d


# ---------------------------------------------------------------- peers ----


def eager(x, wb, wa, dt_bias, A):
    b = F.linear(x, wb)
    a = F.linear(x, wa)
    beta = torch.sigmoid(b.float())
    g = A * F.softplus(a.float() + dt_bias)
    return beta, g


if triton is not None:
    @triton.jit
    def gdn_gating_kernel(ba_ptr, A_ptr, dt_ptr, g_ptr, beta_ptr, H, stride_row,
                          BLK: tl.constexpr):
        # vLLM's fused_gdn_gating (beta=1, threshold=20), with A = -exp(A_log)
        # precomputed and b / a the two halves of one [N, 2H] GEMM output.
        t = tl.program_id(0)
        offs = tl.program_id(1) * BLK + tl.arange(0, BLK)
        mask = offs < H
        b = tl.load(ba_ptr + t * stride_row + offs, mask=mask).to(tl.float32)
        a = tl.load(ba_ptr + t * stride_row + H + offs, mask=mask).to(tl.float32)
        A = tl.load(A_ptr + offs, mask=mask)
        dt = tl.load(dt_ptr + offs, mask=mask)
        xx = a + dt
        sp = tl.where(xx <= 20.0, tl.log(1.0 + tl.exp(xx)), xx)
        tl.store(g_ptr + t * H + offs, A * sp, mask=mask)
        tl.store(beta_ptr + t * H + offs, tl.sigmoid(b), mask=mask)


def concat_triton(x, wba, dt_bias, A):
    n, h = x.shape[0], wba.shape[0] // 2
    ba = F.linear(x, wba)
    beta = torch.empty(n, h, device=x.device, dtype=torch.float32)
    g = torch.empty(n, h, device=x.device, dtype=torch.float32)
    gdn_gating_kernel[(n, triton.cdiv(h, 8))](ba, A, dt_bias, g, beta, h,
                                              ba.stride(0), BLK=8, num_warps=1)
    return beta, g


# --------------------------------------------------------------- timing ----


def time_calls(calls, reps=15, warm=3):
    """Median per-call µs of a CUDA graph replaying `calls` (closures)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for c in calls[:3]:
            c()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, capture_error_mode="relaxed"):
        for c in calls:
            c()
    for _ in range(warm):
        g.replay()
    torch.cuda.synchronize()
    ts = []
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(reps):
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) * 1000.0 / len(calls))
    del g
    return statistics.median(ts)


def write_csv(args, name, header, fmt, rows):
    """rows (tuples) under args.out/name, one `fmt` line each."""
    with open(os.path.join(args.out, name), "w") as f:
        f.write(header + "\n")
        for r in rows:
            f.write(fmt % tuple(r) + "\n")


def rel_err(got, ref):
    got, ref = got.double(), ref.double()
    if torch.isnan(got).any():
        return float("inf")
    return (torch.linalg.norm(got - ref) / torch.linalg.norm(ref)).item()


# ------------------------------------------------------------------ main ----


SHAPES = [(2048, 32), (5120, 48), (4096, 64)]  # (K, H)
NS = [1, 2, 4, 8, 16, 128, 2048]
SEL_NS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
TARGET = {1: 2.5, 2: 3.5, 4: 3.5, 8: 3.5, 16: 3.5}  # µs at (2048, 32)


class Setup:
    """Rotated weight copies and the inputs of one (K, H, N) point."""

    def __init__(self, K, H, N, seed=0):
        gen = torch.Generator(device="cuda").manual_seed(seed)
        pair_bytes = 2 * H * K * 2
        self.R = max(64, math.ceil((128 << 20) / pair_bytes))
        self.K, self.H, self.N = K, H, N
        # Wall[i] = [Wb; Wa] ([2H, K]): Wb / Wa are views, the concat arm
        # reads Wall[i] itself (same bytes, same values).
        self.Wall = (torch.randn(self.R, 2 * H, K, device="cuda", generator=gen) /
                     math.sqrt(K)).to(torch.bfloat16)
        self.x = torch.randn(N, K, device="cuda", generator=gen).to(torch.bfloat16)
        self.dt_bias = torch.randn(H, device="cuda", generator=gen)
        self.A = -torch.exp(torch.randn(H, device="cuda", generator=gen))

    def wb(self, i):
        return self.Wall[i, :self.H]

    def wa(self, i):
        return self.Wall[i, self.H:]

    def reference(self):
        """fp64 outputs of weight set 0."""
        x = self.x.double()
        b = x @ self.wb(0).double().T
        a = x @ self.wa(0).double().T
        beta = torch.sigmoid(b)
        t = a + self.dt_bias.double()
        g = self.A.double() * torch.where(t > 20, t, torch.log1p(torch.exp(t)))
        return beta, g


def ours_calls(lib, su, path=None, env=None, hot=False):
    """Closures calling the runtime on each weight copy (hot: R calls on
    copy 0, weights L2-resident); env applied at capture."""
    beta = torch.empty(su.N, su.H, device="cuda")
    g = torch.empty(su.N, su.H, device="cuda")
    descs = [gdn_desc(su.x, su.wb(0 if hot else i), su.wa(0 if hot else i), su.dt_bias,
                      su.A, beta, g)
             for i in range(su.R)]

    return [runtime_call(lib, d) for d in descs], (beta, g)


def runtime_call(lib, d):
    """A closure running fusion_rt_paired_projection_run(d) on the current stream."""
    def call():
        st = lib.fusion_rt_paired_projection_run(
            ctypes.byref(d), None, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        if st != 0:
            raise RuntimeError("fusion_rt: %d %s" % (st, lib.fusion_rt_last_error_message()))
    return call


def with_env(env, fn):
    """Runs fn with the runtime's tuning knobs set as `env` says, then puts
    back the values they had."""
    old = {k: get_knob(k) for k in env}
    for k, v in env.items():
        set_knob(k, v)
    try:
        return fn()
    finally:
        for k, v in old.items():
            set_knob(k, v)


def bench_ours(lib, su, env, hot=False):
    def run():
        calls, outs = ours_calls(lib, su, hot=hot)
        calls[0]()
        torch.cuda.synchronize()
        ref = su.reference()
        err = max(rel_err(outs[0], ref[0]), rel_err(outs[1], ref[1]))
        return time_calls(calls), err
    return with_env(env, run)


def bench_torch(fn, su, concat=False):
    if concat:
        calls = [(lambda i=i: fn(su.x, su.Wall[i], su.dt_bias, su.A)) for i in range(su.R)]
    else:
        calls = [(lambda i=i: fn(su.x, su.wb(i), su.wa(i), su.dt_bias, su.A))
                 for i in range(su.R)]
    out = calls[0]()
    torch.cuda.synchronize()
    ref = su.reference()
    err = max(rel_err(out[0], ref[0]), rel_err(out[1], ref[1]))
    return time_calls(calls), err


def bench_ours_torch(su):
    """ours through the fusion_rt torch op (bench/pytorch/torch_arms.py), same method."""
    calls = [torch_arms.gdn_op(su, i) for i in range(su.R)]
    out = calls[0]()
    torch.cuda.synchronize()
    ref = su.reference()
    err = max(rel_err(out[0], ref[0]), rel_err(out[1], ref[1]))
    return time_calls(calls), err


def floors():
    t = torch.zeros(1, device="cuda")
    launch = time_calls([(lambda: t.add_(1.0))] * 200)
    a = torch.empty(1 << 30, dtype=torch.int16, device="cuda")
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(10):
        e0.record()
        b.copy_(a)
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) / 1000.0)
    bw = 2 * a.numel() * 2 / statistics.median(ts) / 1e9
    del a, b
    torch.cuda.empty_cache()
    return launch, bw


class _Dev:
    """Device description for --replot (from the CSV's run)."""

    def __init__(self, name, sms):
        self.name, self.multi_processor_count = name, sms


def replot(args):
    """Table and plot again from a paired_bench.csv of an earlier run."""
    rows = []
    with open(args.replot) as f:
        next(f)
        for line in f:
            K, H, N, a, t, e = line.strip().split(",")
            rows.append((int(K), int(H), int(N), a, float(t), float(e)))
    write_outputs(args, rows, args.launch_us, args.copy_gbs, _Dev(args.device, 132),
                  date=args.date)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--replot", help="paired_bench.csv to turn into md + png again")
    ap.add_argument("--launch-us", type=float, default=float("nan"))
    ap.add_argument("--copy-gbs", type=float, default=float("nan"))
    ap.add_argument("--device", default="NVIDIA H200")
    ap.add_argument("--date", default=None)
    ap.add_argument("--lib")
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=1e9)
    ap.add_argument("--quick-variants", action="store_true",
                    help="launch variants: S in {auto, 4, 8}, one row per warp")
    ap.add_argument("--variants", action="store_true",
                    help="also the gemv launch variants (paired_variants.csv)")
    ap.add_argument("--pdl-check", action="store_true",
                    help="ours only, with and without programmatic dependent launch, "
                         "alone and behind a producer kernel; no compile arms")
    ap.add_argument("--mma-sweep", action="store_true",
                    help="ours only: the mma path's launch shapes (S, tokens, rows, WK) "
                         "at N = 32..1024, beside blas and the default, to "
                         "paired_mma_sweep.csv; no peers")
    ap.add_argument("--ab-ours", metavar="LABEL",
                    help="ours only at N <= 16 of every shape, HBM (rotated) and "
                         "L2-resident weights, appended to paired_ab.csv under LABEL "
                         "(run once per library build for an A/B)")
    ap.add_argument("--ffn", action="store_true",
                    help="FFN gate/up pairs (gated SwiGLU, bf16 out) at FFN_SHAPES x FFN_NS: "
                         "ours, eager, concat GEMM + silu*mul, torch.compile; paired_ffn.csv")
    ap.add_argument("--ffn-quant", action="store_true",
                    help="the whole FFN front (gate/up, SwiGLU, MXFP8 rowwise) at "
                         "FFNQ_SHAPES x FFNQ_NS: ours (one call), ours in two calls, "
                         "cuBLAS + ours' gated quantizer, eager, torch.compile default and "
                         "max-autotune-no-cudagraphs; paired_ffn_quant.csv")
    ap.add_argument("--ffn-bias", action="store_true",
                    help="with --ffn-quant: Linears with bias=True (bf16 biases added to "
                         "the f32 accumulator and rounded with it: round(bf16, with_bias)); "
                         "paired_ffn_bias_quant.csv")
    ap.add_argument("--ffn-delayed", action="store_true",
                    help="with --ffn-quant: FP8 e4m3 per tensor with delayed scaling (TE's "
                         "recipe: the scale given, the amax for the history returned) "
                         "instead of MXFP8; paired_ffn_delayed_quant.csv")
    ap.add_argument("--ffn-oss", action="store_true",
                    help="with --ffn-quant: GPT-OSS's MLP front (K = H = 2880): one "
                         "biased Linear whose rows interleave gate and up, the clamped "
                         "SwiGLU (limit 7, alpha 1.702, up + 1), MXFP8; ours reads the "
                         "weight in place (views with twice its row pitch); "
                         "paired_ffn_oss_quant.csv")
    ap.add_argument("--ffn-shape", metavar="K,H",
                    help="with --ffn-quant: this (K, H) instead of FFNQ_SHAPES "
                         "(OSS_SHAPES with --ffn-oss)")
    ap.add_argument("--ffn-ns", metavar="N1,N2,...",
                    help="with --ffn-quant: these token counts instead of FFNQ_NS")
    ap.add_argument("--ffn-gemv-shapes", metavar="S/WR/WK;...",
                    help="with --ffn-quant: at N <= 16 also time ours on the gemv path "
                         "with these launch shapes (FUSION_RT_PAIRED_SPLIT / _WR / _WK)")
    ap.add_argument("--ffn-kernels", action="store_true",
                    help="with --ffn-quant: also print each arm's kernels and their "
                         "mean device time (torch.profiler) at every N")
    ap.add_argument("--ncu-point", metavar="K,H,N",
                    help="6 calls of ours at one point (weights 0..5), for ncu")
    ap.add_argument("--sweep-points", metavar="K,H,N;...",
                    help="with --sweep: these points instead of SWEEP_POINTS")
    ap.add_argument("--sweep", action="store_true",
                    help="ours only: the gemv launch shapes (S, WR, WK) at N <= 16, "
                         "written to paired_sweep.csv; no peers")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.replot:
        return replot(args)
    lib = load_lib(args.lib)
    # the torch arm's package loads this same library
    os.environ.setdefault("FUSION_RT_LIBRARY", os.path.abspath(args.lib))
    torch.backends.cuda.matmul.allow_tf32 = False
    for name in ("cache_size_limit", "recompile_limit"):  # renamed across versions
        try:
            setattr(torch._dynamo.config, name, 256)
        except Exception:
            pass
    torch._dynamo.config.automatic_dynamic_shapes = False  # static, per-N kernels
    dev = torch.cuda.get_device_properties(0)
    print("device: %s, %d SMs, torch %s, triton %s" %
          (dev.name, dev.multi_processor_count, torch.__version__, triton.__version__))

    if args.ncu_point:
        K, H, N = (int(v) for v in args.ncu_point.split(","))
        su = Setup(K, H, N)
        calls, _ = ours_calls(lib, su)
        for c in calls[:6]:
            c()
        torch.cuda.synchronize()
        return
    if args.ab_ours:
        return ab_ours(lib, args)
    if args.ffn:
        return ffn(lib, args)
    if args.ffn_quant:
        return ffn_quant(lib, args)
    if args.sweep:
        return sweep(lib, args)
    if args.mma_sweep:
        return mma_sweep(lib, args)
    if args.pdl_check:
        for K, H in SHAPES:
            for N in SEL_NS:
                su = Setup(K, H, N)
                r = [bench_ours(lib, su, {"FUSION_RT_PAIRED_PATH": p})
                     for p in ("gemv", "mma", "blas")]
                print("  selector K=%d H=%d N=%d gemv %.2f mma %.2f blas %.2f us "
                      "(err %.1e %.1e %.1e)" % (K, H, N, *[x[0] for x in r],
                                                *[x[1] for x in r]), flush=True)
                del su
                torch.cuda.empty_cache()
        for K, H in SHAPES:
            for N in NS:
                su = Setup(K, H, N)
                t, e = bench_ours(lib, su, {})
                t0, e0 = bench_ours(lib, su, {"FUSION_RT_PAIRED_PDL": 1})
                print("  K=%d H=%d N=%d ours %.2f us (err %.1e)  PDL %.2f us (err %.1e)"
                      % (K, H, N, t, e, t0, e0), flush=True)
                del su
                torch.cuda.empty_cache()
        chain(lib, args)
        return

    launch, copy_bw = floors()
    print("graph-launched tiny kernel: %.2f us/call; copy ceiling %.0f GB/s" % (launch, copy_bw))

    rows = []  # (K, H, N, arm, us, err)

    def add(K, H, N, arm, us, err):
        rows.append((K, H, N, arm, us, err))
        print("  K=%5d H=%3d N=%5d %-14s %9.2f us  err %.2e" % (K, H, N, arm, us, err),
              flush=True)

    # 1. ours (selector), the selector measurement, eager, concat+triton.
    sel = []
    for K, H in SHAPES:
        for N in sorted(set(NS) | set(SEL_NS)):
            su = Setup(K, H, N)
            tg, eg = bench_ours(lib, su, {"FUSION_RT_PAIRED_PATH": "gemv"})
            tm, em = bench_ours(lib, su, {"FUSION_RT_PAIRED_PATH": "mma"})
            tb, eb = bench_ours(lib, su, {"FUSION_RT_PAIRED_PATH": "blas"})
            sel.append((K, H, N, tg, tm, tb, eg, em, eb))
            print("  selector K=%d H=%d N=%d gemv %.2f us (err %.1e) mma %.2f us (err %.1e) "
                  "blas %.2f us (err %.1e)" % (K, H, N, tg, eg, tm, em, tb, eb), flush=True)
            if N in NS:
                t, e = bench_ours(lib, su, {})
                add(K, H, N, "ours", t, e)
                if torch_arms is not None and torch_arms.available()[0]:
                    add(K, H, N, "ours-torch", *bench_ours_torch(su))
                add(K, H, N, "ours-pdl", *bench_ours(lib, su, {"FUSION_RT_PAIRED_PDL": 1}))
                add(K, H, N, "eager", *bench_torch(eager, su))
                add(K, H, N, "concat+triton", *bench_torch(concat_triton, su, concat=True))
            del su
            torch.cuda.empty_cache()
    write_csv(args, "paired_selector.csv",
              "K,H,N,gemv_us,mma_us,blas_us,gemv_err,mma_err,blas_err",
              "%d,%d,%d,%.3f,%.3f,%.3f,%.3g,%.3g,%.3g", sel)

    # 2. behind a producer kernel (the overlap a model sees), then the gemv
    # launch variants: cluster size S and rows per warp (--variants).
    chain(lib, args)
    var = []
    for K, H in SHAPES if args.variants else ():
        for N in (1, 16):
            su = Setup(K, H, N)
            for rpw in (1,) if args.quick_variants else (1, 2):
                for S in (0, 4, 8) if args.quick_variants else (0, 1, 2, 4, 8):
                    env = {"FUSION_RT_PAIRED_PATH": "gemv", "FUSION_RT_PAIRED_RPW": rpw}
                    if S:
                        env["FUSION_RT_PAIRED_SPLIT"] = S
                    t, e = bench_ours(lib, su, env)
                    var.append((K, H, N, rpw, S, t, e))
            del su
            torch.cuda.empty_cache()
    if var:
        write_csv(args, "paired_variants.csv", "K,H,N,rows_per_warp,split(0=auto),us,err",
                  "%d,%d,%d,%d,%d,%.3f,%.3g", var)
    print("variants (K,H,N,rpw,S,us):", " ".join("%d/%d/%d/%d/%d:%.2f" % r[:6] for r in var))

    write_outputs(args, rows, launch, copy_bw, dev)  # in case the compile arms time out

    # 3. torch.compile arms (static shapes, one compile per N): both modes at
    # the main shape first, then the other shapes; skipped past the budget.
    # max-autotune first: it is the strongest compiled peer (N = 1).
    modes = (("max-autotune-no-cudagraphs", "compile-maxat"), (None, "compile"))
    order = [(m, a, sh) for sh in SHAPES[:1] for m, a in modes]
    order += [(m, a, sh) for m, a in modes for sh in SHAPES[1:]]
    for mode, arm, (K, H) in order:
        if True:
            fn = torch.compile(eager, mode=mode) if mode else torch.compile(eager)
            for N in NS:
                if time.time() - T0 > args.budget:
                    print("  budget reached: %s K=%d H=%d N=%d not run" % (arm, K, H, N))
                    add(K, H, N, arm, float("nan"), float("nan"))
                    continue
                su = Setup(K, H, N)
                try:
                    add(K, H, N, arm, *bench_torch(fn, su))
                except Exception as ex:  # report, keep going
                    print("  %s failed at K=%d H=%d N=%d: %r" % (arm, K, H, N, ex))
                    add(K, H, N, arm, float("nan"), float("nan"))
                del su
                torch.cuda.empty_cache()
            write_outputs(args, rows, launch, copy_bw, dev)  # partial results early
    write_outputs(args, rows, launch, copy_bw, dev)
    print("total %.0f s" % (time.time() - T0))


MMA_SWEEP_NS = [17, 32, 64, 128, 256, 512, 1024]


def mma_sweep(lib, args):
    """Every mma launch shape at MMA_SWEEP_NS of each shape, beside blas and
    the default selector (written as arm names)."""
    rows = []
    for K, H in SHAPES:
        for N in MMA_SWEEP_NS:
            su = Setup(K, H, N)
            res = [("auto", *bench_ours(lib, su, {})),
                   ("blas", *bench_ours(lib, su, {"FUSION_RT_PAIRED_PATH": "blas"})),
                   ("gemv", *bench_ours(lib, su, {"FUSION_RT_PAIRED_PATH": "gemv"}))]
            for S in (1, 2, 4):
                for tok in (16, 32):
                    for rws in (8, 16):
                        for wk in (4, 8):
                            env = {"FUSION_RT_PAIRED_PATH": "mma", "FUSION_RT_PAIRED_SPLIT": S,
                                   "FUSION_RT_PAIRED_MT": tok, "FUSION_RT_PAIRED_RPW": rws,
                                   "FUSION_RT_PAIRED_WK": wk}
                            res.append(("mma/S%d/t%d/r%d/wk%d" % (S, tok, rws, wk),
                                        *bench_ours(lib, su, env)))
            for a, t, e in res:
                rows.append((K, H, N, a, t, e))
            best = sorted(res, key=lambda r: r[1])[:4]
            print("K=%d H=%d N=%d auto %.2f blas %.2f gemv %.2f | best: %s | worst err %.1e" % (
                K, H, N, res[0][1], res[1][1], res[2][1],
                "  ".join("%s %.2f" % (a, t) for a, t, _ in best),
                max(r[2] for r in res)), flush=True)
            del su
            torch.cuda.empty_cache()
    write_csv(args, "paired_mma_sweep.csv", "K,H,N,arm,us,err", "%d,%d,%d,%s,%.3f,%.3g", rows)
    print("sweep total %.0f s" % (time.time() - T0))


CHAIN_POINTS = [(2048, 32, 1), (2048, 32, 16), (4096, 64, 1)]


def chain(lib, args):
    """Each call behind a producer kernel that writes its lhs (x.mul_(1),
    one torch elementwise kernel, as an RMSNorm would be in a model), all in
    one graph: time per (producer + op) minus the producer alone. The
    producer does not trigger programmatic launch: this is what PDL does to
    a call whose predecessor is not ours (in the back-to-back graph of the
    main table the predecessor is ours, which triggers)."""
    rows = []
    for K, H, N in CHAIN_POINTS:
        su = Setup(K, H, N)
        prod = lambda: su.x.mul_(1.0)
        t_prod = time_calls([prod] * su.R)
        res = {}
        for arm, env in (("ours", {}), ("ours-pdl", {"FUSION_RT_PAIRED_PDL": 1})):
            def run(env=env):
                calls, _ = ours_calls(lib, su)
                seq = [c for call in calls for c in (prod, call)]
                return time_calls(seq) * 2 - t_prod
            res[arm] = with_env(env, run)
        calls = [(lambda i=i: concat_triton(su.x, su.Wall[i], su.dt_bias, su.A))
                 for i in range(su.R)]
        calls[0]()
        seq = [c for call in calls for c in (prod, call)]
        res["concat+triton"] = time_calls(seq) * 2 - t_prod
        for arm, t in res.items():
            rows.append((K, H, N, arm, t_prod, t))
        print("  chain K=%d H=%d N=%d producer %.2f us | op after it: %s" % (
            K, H, N, t_prod, "  ".join("%s %.2f" % kv for kv in res.items())), flush=True)
        del su
        torch.cuda.empty_cache()
    write_csv(args, "paired_chain.csv", "K,H,N,arm,producer_us,op_us_after_producer",
              "%d,%d,%d,%s,%.3f,%.3f", rows)


FFN_SHAPES = [(4096, 14336), (2048, 5632)]  # (K, H): Llama-3-8B, TinyLlama-1.1B
FFN_NS = [1, 2, 4, 16, 128, 2048]
ACT_SWIGLU = 7
ACT_CLAMPED_SWIGLU = 12


def ffn_weights(K, H):
    """R rotated bf16 copies of a stacked [Wg; Wu] pair ([R, 2H, K], >= 128
    MiB and at least 2, so the weights come from HBM) and the generator that
    made them (the inputs are drawn from it next)."""
    R = max(2, math.ceil((128 << 20) / (2 * H * K * 2)))
    gen = torch.Generator(device="cuda").manual_seed(0)
    Wall = (torch.randn(R, 2 * H, K, device="cuda", generator=gen) /
            math.sqrt(K)).to(torch.bfloat16)
    return R, Wall, gen


def ffn_desc(x, Wall, i, H, rnd, out0=None, biases=None):
    """The gated SwiGLU pair of x with copy i of [Wg; Wu], both accumulators
    rounded as `rnd` (fusion_rt_accumulator_round), out0 given or absent;
    `biases` (bg, bu): Linears with bias=True (bias epilogues)."""
    d = Paired()
    d.lhs = tview(x)
    d.weight0 = tview(Wall[i, :H])
    d.weight1 = tview(Wall[i, H:])
    d.gated_kind = ACT_SWIGLU
    d.accumulate_dtype = 2
    d.epilogue0.accumulator_round = d.epilogue1.accumulator_round = rnd
    if biases is not None:
        d.epilogue0.kind = d.epilogue1.kind = 1  # FUSION_RT_EPILOGUE_BIAS
        d.epilogue0.bias, d.epilogue1.bias = tview(biases[0]), tview(biases[1])
    if out0 is not None:
        d.out0 = tview(out0)
    return d


def ffn(lib, args):
    """The gate/up pair of an FFN feeding SwiGLU: out = silu(x Wg^T) * (x Wu^T),
    bf16 x, weights and output, Wg / Wu the halves of one [2H, K] buffer
    (rotated copies >= 128 MiB, at least 2). Ours (the selector's path) against
    eager, one concatenated GEMM + silu * mul, and torch.compile (default)."""
    def eager_ffn(x, wg, wu):
        return F.silu(F.linear(x, wg)) * F.linear(x, wu)

    def concat_ffn(x, wall):
        y = F.linear(x, wall)
        h = wall.shape[0] // 2
        return F.silu(y[:, :h]) * y[:, h:]

    comp = torch.compile(eager_ffn)
    rows = []
    for K, H in FFN_SHAPES:
        R, Wall, gen = ffn_weights(K, H)
        for N in FFN_NS:
            x = torch.randn(N, K, device="cuda", generator=gen).to(torch.bfloat16)
            xd = x.double()
            ref = F.silu(xd @ Wall[0, :H].double().T) * (xd @ Wall[0, H:].double().T)
            out = torch.empty(N, H, device="cuda", dtype=torch.bfloat16)
            # FUSION_BENCH_ROUND=1: gate and up rounded to bf16 before
            # SwiGLU (a bf16 model's Linears, round(bf16) in the IR).
            rnd = int(os.environ.get("FUSION_BENCH_ROUND", "0"))
            descs = [ffn_desc(x, Wall, i, H, rnd, out) for i in range(R)]

            calls = [runtime_call(lib, d) for d in descs]
            calls[0]()
            torch.cuda.synchronize()
            err = rel_err(out, ref)  # before timing: the timed calls overwrite out
            res = [("ours", time_calls(calls), err)]
            # The selector's alternatives at decode sizes.
            for path in ("gemv", "blas") if N <= 16 else ():
                def forced(path=path):
                    calls[0]()
                    torch.cuda.synchronize()
                    e = rel_err(out, ref)
                    return time_calls(calls), e
                res.append(("ours-" + path, *with_env({"FUSION_RT_PAIRED_PATH": path}, forced)))
            for arm, fn, concat in (("eager", eager_ffn, False), ("concat", concat_ffn, True),
                                    ("compile", comp, False)):
                if concat:
                    cs = [(lambda i=i: fn(x, Wall[i])) for i in range(R)]
                else:
                    cs = [(lambda i=i: fn(x, Wall[i, :H], Wall[i, H:])) for i in range(R)]
                o = cs[0]()
                torch.cuda.synchronize()
                res.append((arm, time_calls(cs), rel_err(o, ref)))
            for arm, t, e in res:
                rows.append((K, H, N, arm, t, e))
            print("ffn K=%d H=%d N=%d %s" % (K, H, N, "  ".join(
                "%s %.2f us (err %.1e)" % r for r in res)), flush=True)
            del x, out, ref, xd
            torch.cuda.empty_cache()
        del Wall
        torch.cuda.empty_cache()
    write_csv(args, "paired_ffn.csv", "K,H,N,arm,us,err", "%d,%d,%d,%s,%.3f,%.3g", rows)
    print("ffn total %.0f s" % (time.time() - T0))


FFNQ_SHAPES = [(4096, 14336)]  # (K, H): Llama-3-8B
FFNQ_NS = [1, 2, 4, 8, 16, 128, 2048, 8192]
OSS_SHAPES = [(2880, 2880)]  # (K, H): GPT-OSS (20b / 120b), one expert's MLP front


def mx_floor_rowwise(v):
    """MXFP8 e4m3 rowwise, OCP FLOOR scales (bench/mxfp8's q_rowwise)."""
    m, n = v.shape
    vb = v.reshape(m, n // 32, 32).float()
    e = (vb.abs().amax(dim=-1, keepdim=True).view(torch.int32) >> 23) & 0xFF
    b = torch.clamp(e - 8, min=0)
    b = torch.where(e == 255, torch.full_like(b, 255), b)
    rcp = (torch.clamp(254 - b, min=1) << 23).view(torch.float32)
    q = (vb * rcp).clamp(-448.0, 448.0).to(torch.float8_e4m3fn).reshape(m, n)
    return q, b.to(torch.uint8).reshape(m, n // 32)


def ffn_quant(lib, args):
    """The FFN front of a bf16 model, as torch-mlir's IR of it computes:
    g = bf16(x Wg^T), u = bf16(x Wu^T) (bf16 Linears), h = bf16(silu(g) * u)
    in f32, then MXFP8 e4m3 rowwise (FLOOR scales) codes and scales of h.
    Arms (graphs of R calls over rotated weight copies >= 128 MiB):
      ours          fusion_rt_paired_projection_quantize (one call)
      ours-2call    fusion_rt_paired_projection_run (gated) + fusion_rt_quantize
      cublas+ours   one F.linear over [Wg; Wu] + fusion_rt_gated_act_quantize
      eager         F.linear x2, silu * mul, the torch quantizer above
      compile       torch.compile(eager) default
      compile-maxat torch.compile(eager, mode="max-autotune-no-cudagraphs")
    `codes` = fraction of codes equal to ours' (scales likewise), per arm."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "python"))
    from fusion_rt import _abi
    vp = ctypes.c_void_p
    lib.fusion_rt_paired_projection_quantize.argtypes = [vp, ctypes.c_int32, vp, vp, vp, vp]
    lib.fusion_rt_quantize.argtypes = [vp, vp, vp, vp, vp]
    lib.fusion_rt_gated_act_quantize.argtypes = [vp] * 8

    delayed = getattr(args, "ffn_delayed", False)
    oss = getattr(args, "ffn_oss", False)
    dscale = torch.ones(1, device="cuda", dtype=torch.float32)

    def front(x, wg, wu, bg=None, bu=None):
        if oss:
            # GPT-OSS: one Linear over the interleaved [2H, K] weight (wg
            # is that weight, wu its bias), then the clamped SwiGLU of the
            # even (gate) and odd (up) columns in f32, rounded once.
            t = F.linear(x, wg, wu)
            g = t[:, 0::2].float().clamp(max=7.0)
            u = t[:, 1::2].float().clamp(-7.0, 7.0)
            return mx_floor_rowwise((g * torch.sigmoid(1.702 * g) * (u + 1)).bfloat16())
        g = F.linear(x, wg, bg)
        u = F.linear(x, wu, bu)
        h = (F.silu(g.float()) * u.float()).bfloat16()
        if delayed:
            # TE's delayed scaling written in torch: codes of h * scale
            # (saturated), the amax of h for the history.
            q = (h.float() * dscale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
            return q, h.abs().amax().float().reshape(1)
        return mx_floor_rowwise(h)

    comp = torch.compile(front)
    compmax = torch.compile(front, mode="max-autotune-no-cudagraphs")
    scheme = _abi.QuantScheme()
    lib.fusion_rt_quant_scheme_init(ctypes.byref(scheme))
    scheme.format, scheme.direction, scheme.scale_rounding = 0, 0, 1  # e4m3 rowwise FLOOR
    if delayed:
        lib.fusion_rt_quant_scheme_init(ctypes.byref(scheme))
        scheme.format, scheme.tensor_scaling = 4, 1  # FP8 e4m3 per tensor, delayed
    act = _abi.Activation()
    lib.fusion_rt_activation_init(ctypes.byref(act))
    act.kind, act.intermediate_dtype = (ACT_CLAMPED_SWIGLU if oss else ACT_SWIGLU), 0

    def av(t, dtype=None):
        v = _abi.Tensor()
        v.data = t.data_ptr()
        v.dtype = DT[t.dtype] if dtype is None else dtype
        v.rank = t.dim()
        for i in range(t.dim()):
            v.sizes[i] = t.shape[i]
            v.strides[i] = t.stride(i)
        return v

    def stream():
        return vp(torch.cuda.current_stream().cuda_stream)

    def checked(st, what):
        if st != 0:
            raise RuntimeError("%s: %d %s" % (what, st, lib.fusion_rt_last_error_message()))

    rows = []
    with_bias = getattr(args, "ffn_bias", False) or oss
    shapes = OSS_SHAPES if oss else FFNQ_SHAPES
    if getattr(args, "ffn_shape", None):
        shapes = [tuple(int(v) for v in args.ffn_shape.split(","))]
    for K, H in shapes:
        R, Wall, gen = ffn_weights(K, H)
        # bias=True Linears: bf16 [H] biases, added to the f32 accumulator
        # and rounded with it (FUSION_RT_ROUND_BF16_AFTER_BIAS), as torch.
        biases = ((torch.randn(H, device="cuda", generator=gen) * 0.1).bfloat16(),
                  (torch.randn(H, device="cuda", generator=gen) * 0.1).bfloat16()) \
            if with_bias else None
        # GPT-OSS: the one interleaved [2H] bias (gate even, up odd).
        boss = torch.stack(biases, 1).reshape(2 * H).contiguous() if oss else None
        ns = [int(n) for n in args.ffn_ns.split(",")] if args.ffn_ns else FFNQ_NS
        for N in ns:
            x = torch.randn(N, K, device="cuda", generator=gen).to(torch.bfloat16)
            codes = torch.empty(N, H, device="cuda", dtype=torch.uint8)
            hbuf = torch.empty(N, H, device="cuda", dtype=torch.bfloat16)
            gu = torch.empty(N, 2 * H, device="cuda", dtype=torch.bfloat16)
            outs = _abi.QuantOutputs()
            outs.rowwise_data = av(codes, 3)
            if delayed:
                # "scales" = the amax for the history (compared like scales);
                # the scale: 448 / amax of this input's h, times 2 (some
                # codes saturate), as a history would give it.
                scales = torch.empty(1, device="cuda", dtype=torch.float32)
                scale_inv = torch.empty(1, device="cuda", dtype=torch.float32)
                _, a = front(x, Wall[0, :H], Wall[0, H:], *(biases or (None, None)))
                dscale.copy_(2 * 448.0 / a)
                outs.amax, outs.scale_inv, outs.scale = av(scales), av(scale_inv), av(dscale)
            else:
                scales = torch.empty(N, H // 32, device="cuda", dtype=torch.uint8)
                outs.rowwise_scales = av(scales, 6)
            keep = []

            def desc(i, out0=None):
                # round(bf16), as the IR (with biases: of y + b)
                d = ffn_desc(x, Wall, i, H, 3 if biases else 1, out0, biases)
                if oss:
                    # the interleaved weight and bias read in place
                    d.weight0, d.weight1 = tview(Wall[i, 0::2]), tview(Wall[i, 1::2])
                    d.epilogue0.bias, d.epilogue1.bias = tview(boss[0::2]), tview(boss[1::2])
                    d.gated_kind = ACT_CLAMPED_SWIGLU
                keep.append(d)
                return d

            def ours(i):
                d = desc(i)
                def call():
                    checked(lib.fusion_rt_paired_projection_quantize(
                        ctypes.addressof(d), 0, ctypes.addressof(scheme),
                        ctypes.addressof(outs), None, stream()),
                        "fusion_rt_paired_projection_quantize")
                return call

            def two_calls(i):
                d = desc(i, hbuf)
                hv = av(hbuf)
                keep.append(hv)
                def call():
                    checked(lib.fusion_rt_paired_projection_run(ctypes.byref(d), None, stream()),
                            "fusion_rt_paired_projection_run")
                    checked(lib.fusion_rt_quantize(ctypes.addressof(hv), ctypes.addressof(scheme),
                                                   ctypes.addressof(outs), None, stream()),
                            "fusion_rt_quantize")
                return call

            gv, uv = av(gu[:, :H]), av(gu[:, H:])
            if oss:
                gv, uv = av(gu[:, 0::2]), av(gu[:, 1::2])

            bgu = boss if oss else torch.cat(biases) if biases else None

            def cublas_ours(i):
                def call():
                    if bgu is not None:
                        torch.addmm(bgu, x, Wall[i].t(), out=gu)
                    else:
                        torch.mm(x, Wall[i].t(), out=gu)
                    checked(lib.fusion_rt_gated_act_quantize(
                        ctypes.addressof(gv), ctypes.addressof(uv), None, ctypes.addressof(act),
                        ctypes.addressof(scheme), ctypes.addressof(outs), None, stream()),
                        "fusion_rt_gated_act_quantize")
                return call

            res = []
            ref_codes = ref_scales = None
            # ours-lt: the bias-free GEMM on cuBLASLt (tuning.def's paired_lt;
            # the biased form always runs there).
            arms = [("ours", ours, {}), ("ours-2call", two_calls, {}),
                    ("cublas+ours", cublas_ours, {})]
            if not biases:
                arms.insert(1, ("ours-lt", ours, {"FUSION_RT_PAIRED_LT": 1}))
            if oss or getattr(args, "ffn_shape", None):
                # Each path forced (where it applies), to see the selector's
                # choice against the others at this shape.
                for path in ("gemv", "mma", "blas"):
                    arms.append(("ours-" + path, ours, {"FUSION_RT_PAIRED_PATH": path}))
            if N <= 16 and getattr(args, "ffn_gemv_shapes", None):
                for shp in args.ffn_gemv_shapes.split(";"):
                    S, wr, wk = shp.split("/")
                    arms.append(("ours-gemv-S%s-wr%s-wk%s" % (S, wr, wk), ours,
                                 {"FUSION_RT_PAIRED_PATH": "gemv", "FUSION_RT_PAIRED_SPLIT": S,
                                  "FUSION_RT_PAIRED_WR": wr, "FUSION_RT_PAIRED_WK": wk}))
            if N <= 16 and not delayed and not oss:
                # The one-kernel form of the gemv path (the quantizing
                # epilogue, FUSION_RT_PAIRED_QUANT_EPI=1) where it applies.
                arms.insert(1, ("ours-epi", ours, {"FUSION_RT_PAIRED_QUANT_EPI": 1}))
            for arm, make, env in arms:
                def timed():
                    # Agreement of the first call's outputs (weight copy 0,
                    # as the peers' below), then the timing.
                    nonlocal ref_codes, ref_scales
                    cs = [make(i) for i in range(R)]
                    cs[0]()
                    torch.cuda.synchronize()
                    if ref_codes is None:
                        ref_codes, ref_scales = codes.clone(), scales.clone()
                    agree = ((codes == ref_codes).float().mean().item(),
                             (scales == ref_scales).float().mean().item())
                    return (time_calls(cs),) + agree
                try:
                    res.append((arm,) + with_env(env, timed))
                    if getattr(args, "ffn_kernels", False):
                        with_env(env, lambda: kernel_table(
                            "%s N=%d" % (arm, N), [make(i) for i in range(R)]))
                except RuntimeError as e:  # an arm the runtime declines
                    print("  %s at N=%d: %s" % (arm, N, e), flush=True)
            for arm, fn in (("eager", front), ("compile", comp), ("compile-maxat", compmax)):
                if arm != "eager" and time.time() - T0 > args.budget:
                    print("  budget: %s skipped at N=%d" % (arm, N), flush=True)
                    continue
                bb = biases or (None, None)
                if oss:
                    cs = [(lambda i=i, fn=fn: fn(x, Wall[i], boss)) for i in range(R)]
                else:
                    cs = [(lambda i=i, fn=fn: fn(x, Wall[i, :H], Wall[i, H:], *bb))
                          for i in range(R)]
                q, s = cs[0]()
                torch.cuda.synchronize()
                agree = ((q.view(torch.uint8) == ref_codes).float().mean().item(),
                         (s == ref_scales).float().mean().item())
                res.append((arm, time_calls(cs), *agree))
            for r in res:
                rows.append((K, H, N) + r)
            print("ffnq K=%d H=%d N=%d %s" % (K, H, N, "  ".join(
                "%s %.2f us (codes %.4f scales %.4f)" % r for r in res)), flush=True)
            del x, codes, scales, hbuf, gu
            torch.cuda.empty_cache()
        del Wall
        torch.cuda.empty_cache()
    write_csv(args, "paired_ffn_oss_quant.csv" if oss
              else "paired_ffn_delayed_quant.csv" if delayed
              else "paired_ffn_bias_quant.csv" if with_bias else "paired_ffn_quant.csv",
              "K,H,N,arm,us,codes_equal,scales_equal",
              "%d,%d,%d,%s,%.3f,%.6f,%.6f", rows)
    print("ffnq total %.0f s" % (time.time() - T0))


def kernel_table(what, calls, reps=10):
    """The kernels `calls` launch and their mean device time per call
    (torch.profiler over `reps` rounds), printed."""
    from torch.profiler import profile, ProfilerActivity
    for c in calls:
        c()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            for c in calls:
                c()
        torch.cuda.synchronize()
    n = reps * len(calls)
    print("kernels %s (per call):" % what, flush=True)
    for e in sorted(prof.key_averages(), key=lambda e: -e.self_device_time_total):
        if e.self_device_time_total <= 0:
            continue
        print("  %8.2f us  x%.1f  %s" % (e.self_device_time_total / n, e.count / n,
                                       e.key[:110]), flush=True)


AB_NS = [1, 2, 4, 8, 16]


def ab_ours(lib, args):
    """Ours (default settings) at AB_NS of every shape, weights from HBM
    (rotated copies) and L2-resident (every call on copy 0), plus the
    graph-launch floor; rows appended to paired_ab.csv with args.ab_ours."""
    launch = time_calls([(lambda t=torch.zeros(1, device="cuda"): t.add_(1.0))] * 200)
    rows = [(args.ab_ours, 0, 0, 0, "floor", launch)]
    for K, H in SHAPES:
        for N in AB_NS:
            su = Setup(K, H, N)
            t, e = bench_ours(lib, su, {})
            th, _ = bench_ours(lib, su, {}, hot=True)
            rows += [(args.ab_ours, K, H, N, "hbm", t), (args.ab_ours, K, H, N, "l2", th)]
            print("%s K=%d H=%d N=%d ours %.2f us (L2-resident %.2f; err %.1e)" % (
                args.ab_ours, K, H, N, t, th, e), flush=True)
            del su
            torch.cuda.empty_cache()
    path = os.path.join(args.out, "paired_ab.csv")
    new = not os.path.exists(path)
    with open(path, "a") as f:
        if new:
            f.write("label,K,H,N,weights,us\n")
        for r in rows:
            f.write("%s,%d,%d,%d,%s,%.3f\n" % r)
    print("%s floor %.2f us, total %.0f s" % (args.ab_ours, launch, time.time() - T0))


SWEEP_SHAPES = [  # (S, WR, WK, MT cap, rows per warp)
    (1, 4, 1, 16, 1), (1, 2, 2, 16, 1), (1, 1, 4, 16, 1), (1, 2, 4, 16, 1), (1, 1, 8, 16, 1),
    (1, 4, 1, 2, 1), (1, 2, 2, 2, 1), (1, 1, 4, 2, 1), (1, 2, 4, 2, 1), (1, 1, 8, 2, 1),
    (1, 4, 1, 1, 1), (1, 2, 2, 1, 1), (1, 1, 4, 1, 1),
    (1, 2, 2, 2, 2), (1, 1, 4, 2, 2), (1, 4, 1, 2, 2),
    (8, 8, 1, 16, 1), (8, 4, 1, 16, 1), (8, 8, 1, 2, 1)]
SWEEP_POINTS = [(2048, 32, n) for n in (1, 2, 4, 8, 16)] + \
               [(5120, 48, n) for n in (1, 4, 16)] + [(4096, 64, n) for n in (1, 4, 16)]


def sweep(lib, args):
    """Ours only: every launch shape of SWEEP_SHAPES at SWEEP_POINTS, plus
    the default (auto) shape (written as zeros); prints the best per point."""
    rows = []
    points = SWEEP_POINTS
    if getattr(args, "sweep_points", None):
        points = [tuple(int(v) for v in p.split(",")) for p in args.sweep_points.split(";")]
    for K, H, N in points:
        su = Setup(K, H, N)
        res = []
        t, e = bench_ours(lib, su, {"FUSION_RT_PAIRED_PATH": "gemv"})
        res.append(((0, 0, 0, 0, 0), t, e))
        for S, wr, wk, mt, rpw in SWEEP_SHAPES:
            if mt < 16 and N <= mt:
                continue
            env = {"FUSION_RT_PAIRED_PATH": "gemv", "FUSION_RT_PAIRED_SPLIT": S,
                   "FUSION_RT_PAIRED_WR": wr, "FUSION_RT_PAIRED_WK": wk,
                   "FUSION_RT_PAIRED_MT": mt, "FUSION_RT_PAIRED_RPW": rpw}
            t, e = bench_ours(lib, su, env)
            res.append(((S, wr, wk, mt, rpw), t, e))
        for c, t, e in res:
            rows.append((K, H, N, *c, t, e))
        best = sorted(res, key=lambda r: r[1])[:4]
        print("K=%d H=%d N=%d auto %.2f | best: %s | worst err %.1e" % (
            K, H, N, res[0][1],
            "  ".join("S%d/wr%d/wk%d/mt%d/rpw%d %.2f" % (*c, t) for c, t, _ in best),
            max(r[2] for r in res)), flush=True)
        del su
        torch.cuda.empty_cache()
    write_csv(args, "paired_sweep.csv", "K,H,N,S,WR,WK,MT,RPW,us,err",
              "%d,%d,%d,%d,%d,%d,%d,%d,%.3f,%.3g", rows)
    print("sweep total %.0f s" % (time.time() - T0))


def write_outputs(args, rows, launch, copy_bw, dev, date=None):
    arms = ["ours", "ours-pdl", "eager", "concat+triton", "compile", "compile-maxat"]
    peers = arms[2:]
    by = {(K, H, N, a): (t, e) for K, H, N, a, t, e in rows}
    write_csv(args, "paired_bench.csv", "K,H,N,arm,us_per_call,rel_err_vs_fp64",
              "%d,%d,%d,%s,%.3f,%.3g", rows)
    date = date or datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC")
    lines = []
    lines.append("Machine: %s (%d SMs), torch %s, triton %s, %s. Graph-launched tiny "
                 "kernel %.2f us; copy ceiling %.0f GB/s."
                 % (dev.name, dev.multi_processor_count, TORCH_VERSION, TRITON_VERSION,
                    date, launch, copy_bw))
    lines.append("")
    lines.append("| K, H | N | ours | ours, PDL | eager | concat+triton | compile | "
                 "compile max-autotune | best peer | ours / best | PDL / best | target | "
                 "err ours | err best peer |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for K, H in SHAPES:
        for N in NS:
            if (K, H, N, "ours") not in by:
                continue
            vals = {a: by.get((K, H, N, a), (float("nan"), float("nan"))) for a in arms}
            pv = [(vals[a][0], a) for a in peers if not math.isnan(vals[a][0])]
            best_t, best_a = min(pv) if pv else (float("nan"), "-")
            ours = vals["ours"][0]
            tgt = TARGET.get(N) if (K, H) == (2048, 32) else None
            tgt_s = ("%.1f" % tgt) if tgt else "≤ best peer"
            pdl = vals["ours-pdl"][0]
            lines.append("| %d, %d | %d | **%.2f** | %s | %s | %s | %s | %s | %.2f (%s) | %.2f | %.2f | %s | %.1e | %.1e |" % (
                K, H, N, ours,
                *["%.2f" % vals[a][0] if not math.isnan(vals[a][0]) else "not run"
                  for a in ["ours-pdl"] + peers],
                best_t, best_a, ours / best_t if best_t == best_t else float("nan"),
                pdl / best_t if best_t == best_t else float("nan"), tgt_s,
                vals["ours"][1], vals[best_a][1] if best_a in vals else float("nan")))
    torch_rows = [(K, H, N) for K, H in SHAPES for N in NS if (K, H, N, "ours-torch") in by]
    if torch_rows:
        lines += ["", "ours through the PyTorch op (python/fusion_rt), same method:", "",
                  "| K, H | N | ours µs | ours-torch µs | ours-torch / ours |",
                  "|---|---:|---:|---:|---:|"]
        for K, H, N in torch_rows:
            a, b = by[(K, H, N, "ours")][0], by[(K, H, N, "ours-torch")][0]
            lines.append("| %d, %d | %d | %.2f | %.2f | %.3f |" % (K, H, N, a, b, b / a))
    with open(os.path.join(args.out, "paired_bench.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axs = plt.subplots(1, 3, figsize=(16, 4.8))
        for ax, (K, H) in zip(axs, SHAPES):
            colors = {"ours": "C0", "ours-pdl": "C5", "eager": "C1", "concat+triton": "C2",
                      "compile": "C3", "compile-maxat": "C4"}
            for a in arms:
                pts = [(N, by[(K, H, N, a)][0]) for N in NS
                       if (K, H, N, a) in by and not math.isnan(by[(K, H, N, a)][0])]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=a,
                            color=colors[a], linewidth=2.5 if a == "ours" else 1.2)
            ax.legend(fontsize=8)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("tokens N")
            ax.set_ylabel("us per call (CUDA graph, weights cold)")
            ax.set_title("GDN gates K=%d, H=%d (bf16 in, f32 out)" % (K, H))
            ax.grid(True, which="both", alpha=0.3)
        fig.suptitle("fusion_rt_paired_projection_run vs peers, %s, %s" % (dev.name, date))
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, "paired_bench.png"), dpi=110)
    except Exception as ex:
        print("plot failed: %r" % ex)


if __name__ == "__main__":
    main()
