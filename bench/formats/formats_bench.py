#!/usr/bin/env python3
"""Device benchmark of the CUDA format kernels (runtime/cuda/formats.cu):
NVFP4, MXFP4 and FP8 per tensor, plain and fused with SiLU / SwiGLU, with
the peers in the same process:
  - torch.compile (default and max-autotune-no-cudagraphs) of torchao 0.18's
    own quantizers (`nvfp4_quantize` with its per-tensor scale from the
    tensor amax, `to_mx` to float4_e2m1fn_x2 with RCEIL) and, for FP8 per
    tensor, of the TransformerEngine-style torch function (amax, scale =
    448/amax, x*scale, clamp, cast, and .t().contiguous() for the
    transposed copy);
  - the copy ceiling: a 2 GiB device-to-device copy.
Method (research/peers.md, as bench/mxfp8/run_mxfp8_bench.py, whose timing
helpers it imports): inputs rotated through >= 240 MiB, R calls captured in
one CUDA graph, median over 21 replays; ours is the python/fusion_rt torch
op (a C-ABI call on the current stream) timed the same way.
Bytes per call = inputs read once + packed codes + scales written once
(the amax pass's second read of the input is not counted: the rate is the
useful-bytes rate, comparable with the copy ceiling).

Usage (device): python3 bench/formats/formats_bench.py [--quick] [--csv F]
Prints one CSV line per arm: arm,kernel,shape,M,N,bytes,us,GBps
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "mxfp8"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import run_mxfp8_bench as mb  # noqa: E402  (time_graph, copy ceiling)
import fusion_rt  # noqa: E402
import te_peer  # noqa: E402  (TransformerEngine as a peer: --te)


def load_torchao():
    real = torch.cuda.get_device_capability
    try:  # the prototype modules check for sm_100 at import
        torch.cuda.get_device_capability = lambda *a, **k: (10, 0)
        from torchao.prototype.mx_formats import nvfp4_tensor as nv  # noqa
        from torchao.prototype.mx_formats import mx_tensor as mx  # noqa
        from torchao.prototype.mx_formats.config import ScaleCalculationMode  # noqa
    finally:
        torch.cuda.get_device_capability = real
    return nv, mx, ScaleCalculationMode


def fp8_ref(x, transpose, rowwise=True, scale=None):
    """TransformerEngine-style FP8 per-tensor cast in torch."""
    xf = x.float()
    if scale is None:
        amax = xf.abs().amax()
        scale = torch.where(amax > 0, 448.0 / amax, torch.ones_like(amax))
    q = (xf * scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    outs = [q] if rowwise else []
    if transpose:
        outs.append(q.t().contiguous())
    return outs, 1.0 / scale


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="4096x7168 only")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--no-autotune", action="store_true")
    ap.add_argument("--only", default=None,
                    help="comma-separated kernel names: time only these")
    ap.add_argument("--no-peers", action="store_true", help="fusion_rt arms only")
    te_peer.add_argument(ap)
    args = ap.parse_args()
    te = te_peer.from_args(args)
    dev = torch.cuda.get_device_name(0)
    print("# device: %s, torch %s" % (dev, torch.__version__), flush=True)
    csv = open(args.csv, "w") if args.csv else None
    lines = []

    def emit(arm, kernel, m, n, nbytes, us):
        line = "%s,%s,%dx%d,%d,%d,%.0f,%.3f,%.1f" % (arm, kernel, m, n, m, n, nbytes, us,
                                                     nbytes / (us * 1e-6) / 1e9)
        print(line, flush=True)
        lines.append(line)
        if csv:
            csv.write(line + "\n")
            csv.flush()

    copy_us, copy_gbps = mb.torch_copy_ceiling()
    emit("copy", "copy_2GiB", 1, 1 << 30, 2.0 * (1 << 31), copy_us)
    try:
        nv, mx, SCM = load_torchao()
        has_ao = True
    except Exception as e:  # noqa
        print("# torchao not importable (%s): torchao arms skipped" % e, flush=True)
        has_ao = False

    shapes = [(4096, 7168)] if args.quick else [(4096, 7168), (16384, 16384)]
    modes = [("torch_compile", "default")]
    if not args.no_autotune:
        modes.append(("torch_compile_maxautotune", "max-autotune-no-cudagraphs"))

    only = set(args.only.split(",")) if args.only else None

    def codes(out):
        """The first FP8 tensor of an output (ours: a Quantized, a peer's: a
        tuple), as bytes."""
        ts = [out.rowwise_data, out.colwise_data] if hasattr(out, "rowwise_data") else out
        for t in ts:
            if t is not None and t.dtype == torch.float8_e4m3fn:
                return t.view(torch.uint8)
        return None

    def arms(kernel, ours, peer, m, n, in_shapes, nbytes, extra=()):
        if only is not None and kernel not in only:
            return
        if args.no_peers:
            peer = None
            extra = ()
        in_bytes = sum(a * b for a, b in in_shapes) * 2
        sets = mb.make_sets(in_shapes, in_bytes)
        try:
            us = mb.time_graph(ours, sets, 50.0)
            emit("fusion_rt", kernel, m, n, nbytes, us)
        except Exception as e:  # noqa
            print("# fusion_rt %s %dx%d failed: %s" % (kernel, m, n, e), flush=True)
        for arm, f in extra:
            if f is None:
                continue
            try:
                a, b = codes(ours(*sets[0])), codes(f(*sets[0]))
                if a is not None and b is not None and a.shape == b.shape:
                    print("# check %s %s %dx%d: %d of %d codes differ from ours"
                          % (arm, kernel, m, n, (a != b).sum().item(), a.numel()), flush=True)
                emit(arm, kernel, m, n, nbytes, mb.time_graph(f, sets, 50.0))
            except Exception as e:  # noqa
                print("# %s %s %dx%d failed: %s" % (arm, kernel, m, n,
                                                   str(e).splitlines()[0][:300]), flush=True)
        if peer is None:
            return
        for arm, mode in modes:
            t0 = time.time()
            try:
                f = torch.compile(peer, mode=mode, dynamic=False)
                us = mb.time_graph(f, sets, 50.0)
                emit(arm, kernel, m, n, nbytes, us)
            except Exception as e:  # noqa
                print("# %s %s %dx%d failed: %s" % (arm, kernel, m, n,
                                                    str(e).splitlines()[0][:200]),
                      flush=True)
            print("# %s %s compile+time %.1f s" % (arm, kernel, time.time() - t0),
                  flush=True)
        torch._dynamo.reset()

    for (m, n) in shapes:
        fp4 = m * n * 2 + m * n // 2  # input + packed codes
        # NVFP4 1D rowwise (amax pass included on both sides).
        ao_nv = (lambda x: nv.nvfp4_quantize(
            x, 16, nv.per_tensor_amax_to_scale(x.abs().amax().float()))) if has_ao else None
        arms("nvfp4_rowwise", lambda x: fusion_rt.quantize(x, "nvfp4"), ao_nv, m, n,
             [(m, n)], fp4 + m * n // 16)
        ao_mx = (lambda x: mx.to_mx(x, torch.float4_e2m1fn_x2, 32, SCM.RCEIL)) \
            if has_ao else None
        arms("mxfp4_rowwise", lambda x: fusion_rt.quantize(x, "mxfp4"), ao_mx, m, n,
             [(m, n)], fp4 + m * n // 32)
        arms("nvfp4_both_T",
             lambda x: fusion_rt.quantize(x, "nvfp4", direction="both",
                                          colwise_layout="transposed"),
             None, m, n, [(m, n)], m * n * 2 + m * n + 2 * m * n // 16)
        ao_silu = (lambda x: nv.nvfp4_quantize(
            F.silu(x), 16, nv.per_tensor_amax_to_scale(F.silu(x).abs().amax().float()))) \
            if has_ao else None
        arms("silu_nvfp4_rowwise",
             lambda x: fusion_rt.act_quantize(x, "silu", "nvfp4",
                                              intermediate_dtype=torch.bfloat16),
             ao_silu, m, n, [(m, n)], fp4 + m * n // 16)

        def ao_swiglu(x):
            g, u = x.chunk(2, dim=-1)
            h = F.silu(g) * u
            return nv.nvfp4_quantize(h, 16, nv.per_tensor_amax_to_scale(h.abs().amax().float()))
        arms("swiglu_nvfp4_rowwise",
             lambda x: fusion_rt.gated_act_quantize(x, "swiglu", "nvfp4",
                                                    intermediate_dtype=torch.bfloat16),
             ao_swiglu if has_ao else None, m, n // 2, [(m, n)],
             m * n * 2 + m * (n // 2) // 2 + m * (n // 2) // 16)
        # MXFP4 after SiLU / SwiGLU (no amax pass: one pass on our side).
        ao_silu_mx = (lambda x: mx.to_mx(F.silu(x), torch.float4_e2m1fn_x2, 32,
                                         SCM.RCEIL)) if has_ao else None
        arms("silu_mxfp4_rowwise",
             lambda x: fusion_rt.act_quantize(x, "silu", "mxfp4",
                                              intermediate_dtype=torch.bfloat16),
             ao_silu_mx, m, n, [(m, n)], fp4 + m * n // 32)

        def ao_swiglu_mx(x):
            g, u = x.chunk(2, dim=-1)
            return mx.to_mx(F.silu(g) * u, torch.float4_e2m1fn_x2, 32, SCM.RCEIL)
        arms("swiglu_mxfp4_rowwise",
             lambda x: fusion_rt.gated_act_quantize(x, "swiglu", "mxfp4",
                                                    intermediate_dtype=torch.bfloat16),
             ao_swiglu_mx if has_ao else None, m, n // 2, [(m, n)],
             m * n * 2 + m * (n // 2) // 2 + m * (n // 2) // 32)
        # FP8 per tensor: delayed (given scale: one pass) and current scaling.
        sc = torch.tensor([2.0], device="cuda")
        fp8 = m * n * 2 + m * n
        def te_arm(**kw):
            return (("te", lambda x: te.fp8_tensor(x, **kw)),) if te else ()
        arms("fp8_delayed_rowwise",
             lambda x: fusion_rt.quantize(x, "fp8_e4m3", scale=sc),
             lambda x: fp8_ref(x, False, scale=sc[0]), m, n, [(m, n)], fp8,
             te_arm(scale=sc))
        arms("fp8_delayed_colT",
             lambda x: fusion_rt.quantize(x, "fp8_e4m3", scale=sc, direction="colwise",
                                          colwise_layout="transposed"),
             lambda x: fp8_ref(x, True, rowwise=False, scale=sc[0]), m, n, [(m, n)], fp8,
             te_arm(scale=sc, rowwise=False, transpose=True))
        arms("fp8_delayed_both_T",
             lambda x: fusion_rt.quantize(x, "fp8_e4m3", scale=sc, direction="both",
                                          colwise_layout="transposed"),
             lambda x: fp8_ref(x, True, scale=sc[0]), m, n, [(m, n)], fp8 + m * n,
             te_arm(scale=sc, transpose=True))
        arms("fp8_current_rowwise", lambda x: fusion_rt.quantize(x, "fp8_e4m3"),
             lambda x: fp8_ref(x, False), m, n, [(m, n)], fp8, te_arm())
        arms("fp8_current_both_T",
             lambda x: fusion_rt.quantize(x, "fp8_e4m3", direction="both",
                                          colwise_layout="transposed"),
             lambda x: fp8_ref(x, True), m, n, [(m, n)], fp8 + m * n,
             te_arm(transpose=True))
        # SwiGLU -> FP8 per tensor with a given scale (delayed scaling: TE's
        # fused activation-cast kernel, which casts the f32 product: ours
        # with an f32 intermediate computes the same function).
        k = n // 2

        def swiglu_ref(x):
            g, u = x.chunk(2, dim=-1)
            return fp8_ref(F.silu(g.float()) * u.float(), False, scale=sc[0])
        arms("swiglu_fp8_delayed",
             lambda x: fusion_rt.gated_act_quantize(x, "swiglu", "fp8_e4m3", scale=sc,
                                                    intermediate_dtype=torch.float32),
             swiglu_ref, m, k, [(m, n)], m * n * 2 + m * k,
             (("te", lambda x: te.swiglu_fp8_tensor(x, sc)),) if te else ())
    print("# copy ceiling %.1f GB/s" % copy_gbps, flush=True)


if __name__ == "__main__":
    main()
