#!/usr/bin/env python3
"""Cost of the PyTorch binding (python/fusion_rt) on the GPU: the same
runtime call made three ways, at several sizes.

Arms:
  cxx      (MXFP8 only, with --cxx-bench) bench/mxfp8's C++ program
           fusion_rt_mxfp8_bench calling the C ABI (--only =KERNEL --shape MxN)
  ctypes   the C ABI called from Python through ctypes, descriptors and
           outputs built beforehand (paired: paired_bench.py's "ours" arm)
  torch_op the fusion_rt torch op (torch.library custom op: output
           allocation, views, the call), as a user calls it
Two measures per arm:
  graph    per-call µs of a CUDA graph replaying R calls (the benchmarks'
           method: bench/mxfp8/run_mxfp8_bench.time_graph, inputs rotated
           through >= 240 MiB; bench/paired/paired_bench.time_calls, weights
           rotated through >= 128 MiB): host costs vanish, only GPU time left
  eager    200 calls back to back without a graph: host µs per call (the
           Python + dispatch + ctypes cost of submitting one call) and stream
           µs per call (CUDA events; equals the GPU time when the GPU is the
           bottleneck, the host cost when the host is)
Writes OUT/binding_bench.{md,csv}. Usage:
  binding_bench.py --out DIR [--quick] [--cxx-bench .devbin/fusion_rt_mxfp8_bench]
"""
import argparse
import csv
import datetime
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "bench", "mxfp8"))
sys.path.insert(0, os.path.join(REPO, "bench", "paired"))

import torch  # noqa: E402
import torch_arms  # noqa: E402
import run_mxfp8_bench as mx  # noqa: E402
import paired_bench as pb  # noqa: E402


def time_eager(fn, arg_sets, n=200, reps=5):
    """(host µs per call, stream µs per call), medians over reps runs of n calls."""
    for i in range(5):
        fn(*arg_sets[i % len(arg_sets)])
    torch.cuda.synchronize()
    host, stream = [], []
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(reps):
        torch.cuda.synchronize()
        e0.record()
        t0 = time.perf_counter()
        for i in range(n):
            fn(*arg_sets[i % len(arg_sets)])
        host.append((time.perf_counter() - t0) * 1e6 / n)
        e1.record()
        e1.synchronize()
        stream.append(e0.elapsed_time(e1) * 1e3 / n)
    return statistics.median(host), statistics.median(stream)


def graph_us(timer, *a):
    """timer(*a) (a CUDA-graph timing), None with a message if it fails."""
    try:
        return timer(*a)
    except Exception as e:  # noqa
        print("graph timing failed: %r" % (e,), flush=True)
        torch.cuda.synchronize()
        return None


def cxx_us(exe, kernel, m, n):
    """µs of fusion_rt_mxfp8_bench for one kernel and shape (None if not run)."""
    if not exe:
        return None
    p = subprocess.run([exe, "--only", "=" + kernel, "--shape", "%dx%d" % (m, n)],
                       capture_output=True, text=True, timeout=120)
    for line in p.stdout.splitlines():
        f = line.split(",")
        if len(f) == 8 and f[0] == "fusion_rt" and f[1] == kernel:
            return float(f[6])
    print("cxx bench: no row for %s %dx%d: %s" % (kernel, m, n, p.stderr[-300:]), flush=True)
    return None


def mxfp8_rows(args):
    rows = []
    shapes = [(256, 1024), (4096, 7168)] if args.quick else [(256, 1024), (4096, 7168),
                                                             (16384, 16384)]
    plan = [("mxfp8_rowwise", shapes), ("mxfp8_both_transposed", shapes),
            ("swiglu_mxfp8_rowwise", shapes[:2]), ("dgelu_dbias_mxfp8_both", shapes[:2])]
    for kernel, shs in plan:
        for m, n in shs:
            in_shapes = torch_arms.mxfp8_input_shapes(kernel, m, n)
            in_bytes = sum(a * b * 2 for a, b in in_shapes)
            sets = mx.make_sets(in_shapes, in_bytes)
            est = in_bytes * 1.6 / 3.0e12 * 1e6
            op = torch_arms.mxfp8_op(kernel)
            cab = torch_arms.mxfp8_cabi(kernel, sets)
            # same bytes both ways (first set)
            got = op(*sets[0])
            cab(*sets[0])
            torch.cuda.synchronize()
            ref = [t for t in cab.keep[0][0] if t.numel()]
            same = all(torch.equal(a.view(torch.uint8), b.view(torch.uint8))
                       for a, b in zip([t for t in got if t is not None], ref))
            r = dict(kernel=kernel, shape="%dx%d" % (m, n), same_bytes=same,
                     cxx_graph_us=cxx_us(args.cxx_bench, kernel, m, n),
                     ctypes_graph_us=graph_us(mx.time_graph, cab, sets, est),
                     torch_op_graph_us=graph_us(mx.time_graph, op, sets, est))
            r["ctypes_host_us"], r["ctypes_stream_us"] = time_eager(cab, sets)
            r["torch_op_host_us"], r["torch_op_stream_us"] = time_eager(op, sets)
            rows.append(r)
            print(fmt_row(r), flush=True)
            del sets, cab, got, ref
            torch.cuda.empty_cache()
    return rows


def paired_rows(args):
    lib = pb.load_lib(torch_arms.fusion_rt.library_path())
    rows = []
    for K, H in pb.SHAPES[:1]:
        for N in ((1, 16) if args.quick else (1, 16, 128, 2048)):
            su = pb.Setup(K, H, N)
            cab, outs = pb.ours_calls(lib, su)
            ops = [torch_arms.gdn_op(su, i) for i in range(su.R)]
            cab[0]()
            got = ops[0]()
            torch.cuda.synchronize()
            same = all(torch.equal(a, b) for a, b in zip(got, outs))
            r = dict(kernel="paired_gdn K=%d H=%d" % (K, H), shape="N=%d" % N,
                     same_bytes=same, cxx_graph_us=None,
                     ctypes_graph_us=graph_us(pb.time_calls, cab),
                     torch_op_graph_us=graph_us(pb.time_calls, ops))
            r["ctypes_host_us"], r["ctypes_stream_us"] = time_eager(
                lambda i: cab[i](), [(i,) for i in range(su.R)])
            r["torch_op_host_us"], r["torch_op_stream_us"] = time_eager(
                lambda i: ops[i](), [(i,) for i in range(su.R)])
            rows.append(r)
            print(fmt_row(r), flush=True)
            su = cab = ops = outs = None  # free the weight copies
            torch.cuda.empty_cache()
    return rows


COLS = ["kernel", "shape", "same_bytes", "cxx_graph_us", "ctypes_graph_us", "torch_op_graph_us",
        "ctypes_host_us", "torch_op_host_us", "ctypes_stream_us", "torch_op_stream_us"]


def f(v):
    return "—" if v is None else ("%.2f" % v if isinstance(v, float) else str(v))


def fmt_row(r):
    return "| " + " | ".join(f(r[c]) for c in COLS) + " |"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cxx-bench", help="fusion_rt_mxfp8_bench (C++ C-ABI arm), if built")
    ap.add_argument("--no-paired", action="store_true")
    args = ap.parse_args()
    if args.cxx_bench and not os.path.exists(args.cxx_bench):
        print("no %s: the C++ arm is left out" % args.cxx_bench)
        args.cxx_bench = None
    os.makedirs(args.out, exist_ok=True)
    ok, lib = torch_arms.available()
    if not ok:
        print("fusion_rt does not load: %s" % lib)
        return 2
    dev = torch.cuda.get_device_name(0)
    head = ["# Binding cost of the fusion_rt torch ops",
            "",
            "- command: `python3 bench/pytorch/binding_bench.py %s`" % " ".join(sys.argv[1:]),
            "- machine: %s, torch %s, library %s; date %s" % (
                dev, torch.__version__, lib,
                datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
            "- µs per call. graph: CUDA-graph replay (the benchmarks' method); eager: 200 "
            "calls without a graph, host = submission time per call, stream = CUDA-event "
            "time per call. cxx = fusion_rt_mxfp8_bench (C++), ctypes = the C ABI from "
            "Python with prebuilt descriptors, torch_op = the fusion_rt op. same_bytes: "
            "torch op output = ctypes output.",
            "",
            "| " + " | ".join(COLS) + " |",
            "|" + "---|" * len(COLS)]
    print("\n".join(head), flush=True)
    rows = mxfp8_rows(args)
    if not args.no_paired:
        rows += paired_rows(args)
    with open(os.path.join(args.out, "binding_bench.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLS)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    md = head + [fmt_row(r) for r in rows]
    with open(os.path.join(args.out, "binding_bench.md"), "w") as fh:
        fh.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 0 if all(r["same_bytes"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
