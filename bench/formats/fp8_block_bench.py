#!/usr/bin/env python3
"""Device benchmark of FP8 block scaling (runtime/cuda/fp8_block.cu and
formats.cu): per-token-group FP8 (1 x 128, f32 decode scales,
DeepSeek-V3 / vLLM's per_token_group_quant_fp8 formula), per-row FP8,
DeepSeek-V3's 128x128 weight tiles,
plain and after SwiGLU (vLLM's silu_and_mul -> per-token-group FP8, the
act->quant fusion of FP8 serving), with its peers in the same process:
  - torch.compile (default and max-autotune-no-cudagraphs) of the same
    functions written in torch (the reference formula below);
  - the copy ceiling: a 2 GiB device-to-device copy.
Before timing, each arm's result is compared with the torch reference in
eager mode on the CPU: codes and scales byte for byte (plain quantizers),
and the number of differing codes and scales for SwiGLU (the reference
rounds silu(g)*u once to bf16 as the fused op does, but torch's CPU expf and
CUDA's may differ by an ulp). (torch on CUDA divides by a Python scalar as a
multiplication by its reciprocal, so its scales differ from the IR's
division in about half the groups; the CPU divides.)
Method as bench/formats/formats_bench.py (timing helpers of
bench/mxfp8/run_mxfp8_bench.py): inputs rotated through >= 240 MiB, R calls
in one CUDA graph, median over 21 replays. Bytes per call = input read once
+ codes + f32 scales.

Usage (device): python3 bench/formats/fp8_block_bench.py [--quick] [--csv F]
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
import run_mxfp8_bench as mb  # noqa: E402
import fusion_rt  # noqa: E402
import te_peer  # noqa: E402  (TransformerEngine as a peer: --te)

EPS = 1e-10


def group_quant(y, group):
    """vLLM / DeepSeek per-token-group FP8 in torch: s = max(amax, eps)/448,
    q = clamp(y / s, -448, 448) -> e4m3; y f32 [M, N]."""
    m, n = y.shape
    blocks = y.reshape(m, n // group, group)
    s = blocks.abs().amax(dim=-1, keepdim=True).clamp(min=EPS) / 448.0
    q = (blocks / s).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q.reshape(m, n), s.reshape(m, n // group)


def tile_quant(y, tile=128):
    """DeepSeek-V3's 128x128 weight quantizer in torch: one scale per tile,
    s = max(amax, eps)/448, q = clamp(y / s) -> e4m3; y f32 [M, N]."""
    m, n = y.shape
    t = y.reshape(m // tile, tile, n // tile, tile)
    s = t.abs().amax(dim=(1, 3), keepdim=True).clamp(min=EPS) / 448.0
    q = (t / s).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q.reshape(m, n), s.reshape(m // tile, n // tile)


def ref_tiles(x):
    return tile_quant(x.float())


def mul_quant(x, br, bc, eps=1e-12):
    """The multiply recipe as torchao's blockwise FP8 training writes it
    (torch_blockwise_scale_act_quant_lhs / _weight_quant): scale = 448 /
    amax in f64, q = clamp(x * scale) -> e4m3, 1 / scale returned."""
    m, n = x.shape
    t = x.reshape(m // br, br, n // bc, bc)
    amax = t.abs().amax(dim=(1, 3), keepdim=True).to(torch.float64).clamp(min=eps)
    s = (448.0 / amax).to(torch.float32)
    q = (t * s).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q.reshape(m, n), (1.0 / s).reshape(m // br, n // bc)


def torchao_triton(br):
    """torchao's Triton kernels of the same recipe (their scales are stored
    column-major; compared as values)."""
    try:
        from torchao.prototype.blockwise_fp8_training import kernels as k
    except Exception as e:  # noqa
        print("# torchao blockwise kernels unavailable: %s" % str(e)[:200], flush=True)
        return None
    if br == 1:
        return lambda x: k.triton_fp8_blockwise_act_quant_lhs(x, 128)
    return lambda x: k.triton_fp8_blockwise_weight_quant_rhs(x, 128)


def ref_plain(group):
    return lambda x: group_quant(x.float(), group)


def ref_swiglu(group):
    def f(x):
        g, u = x.chunk(2, dim=-1)
        h = (F.silu(g.float()) * u.float()).to(torch.bfloat16)
        return group_quant(h.float(), group)
    return f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--no-autotune", action="store_true")
    ap.add_argument("--no-peers", action="store_true",
                    help="time fusion_rt only (an A/B of two builds)")
    ap.add_argument("--only", default=None,
                    help="comma-separated kernel names: time only these")
    te_peer.add_argument(ap)
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    te = te_peer.from_args(args)
    print("# device: %s, torch %s" % (torch.cuda.get_device_name(0), torch.__version__),
          flush=True)
    csv = open(args.csv, "w") if args.csv else None

    def emit(arm, kernel, m, n, nbytes, us):
        line = "%s,%s,%dx%d,%d,%d,%.0f,%.3f,%.1f" % (arm, kernel, m, n, m, n, nbytes, us,
                                                     nbytes / (us * 1e-6) / 1e9)
        print(line, flush=True)
        if csv:
            csv.write(line + "\n")
            csv.flush()

    copy_us, copy_gbps = mb.torch_copy_ceiling()
    emit("copy", "copy_2GiB", 1, 1 << 30, 2.0 * (1 << 31), copy_us)
    modes = [] if args.no_peers else [("torch_compile", "default")]
    if not args.no_autotune and not args.no_peers:
        modes.append(("torch_compile_maxautotune", "max-autotune-no-cudagraphs"))

    def check(kernel, ours, ref, x, exact):
        # The reference runs on the CPU: torch's CUDA division by a Python
        # scalar multiplies by its reciprocal (ATen's div_true_kernel), its
        # CPU division (and the IR's arith.divf, and the runtime) divides.
        qo, so = [t.contiguous().cpu() for t in ours(x)]
        qr, sr = ref(x.cpu())
        dq = (qo.view(torch.uint8) != qr.view(torch.uint8)).sum().item()
        ds = (so.view(torch.int32) != sr.view(torch.int32)).sum().item()
        print("# check %s %s: %d of %d codes, %d of %d scales differ from torch eager (CPU)"
              % (kernel, "x".join(map(str, x.shape)), dq, qo.numel(), ds, so.numel()),
              flush=True)
        return not exact or (dq == 0 and ds == 0)

    ok = True

    def arms(kernel, ours, ref, m, n, in_shape, nbytes, exact, extra=()):
        nonlocal ok
        if only is not None and kernel not in only:
            return
        x0 = torch.randn(*in_shape, device="cuda").mul(3).to(torch.bfloat16)
        ok = check(kernel, ours, ref, x0, exact) and ok
        sets = mb.make_sets([in_shape], in_shape[0] * in_shape[1] * 2)
        emit("fusion_rt", kernel, m, n, nbytes, mb.time_graph(ours, sets, 50.0))
        for arm, f in ([] if args.no_peers else extra):
            if f is None:
                continue
            try:
                # A peer's differences are reported, not failed: only ours
                # is held to the reference.
                same = check(kernel + "/" + arm, f, ref, x0, exact)
                ok = (same or arm.startswith("te")) and ok
                emit(arm, kernel, m, n, nbytes, mb.time_graph(f, sets, 50.0))
            except Exception as e:  # noqa
                print("# %s %s failed: %s" % (arm, kernel, str(e).splitlines()[0][:200]),
                      flush=True)
        for arm, mode in modes:
            t0 = time.time()
            try:
                f = torch.compile(ref, mode=mode, dynamic=False)
                emit(arm, kernel, m, n, nbytes, mb.time_graph(f, sets, 50.0))
            except Exception as e:  # noqa
                print("# %s %s failed: %s" % (arm, kernel, str(e).splitlines()[0][:200]),
                      flush=True)
            print("# %s %s compile+time %.1f s" % (arm, kernel, time.time() - t0),
                  flush=True)
        torch._dynamo.reset()

    shapes = [(4096, 7168)] if args.quick else [(4096, 7168), (16384, 16384)]
    for (m, n) in shapes:
        for g in (128, n):
            name = "fp8_block_1x128" if g == 128 else "fp8_per_row"

            def ours(x, g=g):
                q = fusion_rt.quantize(x, "fp8_block_e4m3", block_cols=g, amax_epsilon=EPS)
                return q.rowwise_data, q.rowwise_scales
            arms(name, ours, ref_plain(g), m, n, (m, n), m * n * 3 + m * (n // g) * 4, True)

        def ours_tiles(x):
            q = fusion_rt.quantize(x, "fp8_block_e4m3", block_cols=128, block_rows=128,
                                   amax_epsilon=EPS)
            return q.rowwise_data, q.rowwise_scales
        arms("fp8_block_128x128", ours_tiles, ref_tiles, m, n, (m, n),
             m * n * 3 + (m // 128) * (n // 128) * 4, True)
        # The multiply recipe (TE's Float8BlockScaling, torchao's blockwise
        # FP8 training), 1x128 and 128x128, with torchao's Triton kernels.
        for br in (1, 128):
            def ours_mul(x, br=br):
                q = fusion_rt.quantize(x, "fp8_block_e4m3", block_cols=128, block_rows=br,
                                       amax_epsilon=1e-12, nvfp4_recipe="multiply")
                return q.rowwise_data, q.rowwise_scales
            arms("fp8_block_%dx128_mul" % br, ours_mul,
                 lambda x, br=br: mul_quant(x.float(), br, 128), m, n, (m, n),
                 m * n * 3 + (m // br) * (n // 128) * 4, True,
                 extra=(("torchao_triton", torchao_triton(br)),
                        ("te", te and (lambda x, br=br: te.fp8_block(x, 1 if br == 1 else 2)))))
        k = n // 2

        def ours_sw(x):
            q = fusion_rt.gated_act_quantize(x, "swiglu", "fp8_block_e4m3",
                                             intermediate_dtype=torch.bfloat16,
                                             block_cols=128, amax_epsilon=EPS)
            return q.rowwise_data, q.rowwise_scales
        arms("swiglu_fp8_block_1x128", ours_sw, ref_swiglu(128), m, k, (m, n),
             m * n * 2 + m * k + m * (k // 128) * 4, False)

        # The same with the multiply recipe (TE's Float8BlockScaling): TE's
        # nvte_swiglu into the block-scaled output, and its two-kernel form.
        def ours_sw_mul(x):
            q = fusion_rt.gated_act_quantize(x, "swiglu", "fp8_block_e4m3",
                                             intermediate_dtype=torch.bfloat16,
                                             block_cols=128, amax_epsilon=1e-12,
                                             nvfp4_recipe="multiply")
            return q.rowwise_data, q.rowwise_scales

        def ref_sw_mul(x):
            g, u = x.chunk(2, dim=-1)
            h = (F.silu(g.float()) * u.float()).to(torch.bfloat16)
            return mul_quant(h.float(), 1, 128)
        arms("swiglu_fp8_block_1x128_mul", ours_sw_mul, ref_sw_mul, m, k, (m, n),
             m * n * 2 + m * k + m * (k // 128) * 4, False,
             extra=(("te_fused", te and (lambda x: te.swiglu_fp8_block(x, True))),
                    ("te_2kernel", te and (lambda x: te.swiglu_fp8_block(x, False)))))
    print("# copy ceiling %.1f GB/s" % copy_gbps, flush=True)
    print("FP8 BLOCK BENCH: %s" % ("CHECKS PASSED" if ok else "CHECK FAILED"), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
