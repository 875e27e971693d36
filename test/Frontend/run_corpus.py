#!/usr/bin/env python3
"""End-to-end check of a frontend-corpus program: lowers it with
fusion-opt's --fusion-pipeline (to LLVM), runs it under mlir-runner on the
CPU runtime with the inputs the generator saved, and compares every output
byte with torch's eager output (NAME.io.json, tools/frontend-corpus/).

Float outputs compare as equal when both are NaN (the IR leaves a NaN's sign
open); everything else byte for byte.

  run_corpus.py --fusion-opt F --mlir-runner R --shared-libs L1,L2,...
                --pipeline OPTIONS PROGRAM.mlir [PROGRAM.mlir ...]
"""
import argparse
import json
import math
import struct
import re
import subprocess
import sys

WIDTH = {"f32": 32, "bf16": 16, "f16": 16, "f8E4M3FN": 8, "f8E5M2": 8,
         "f8E8M0FNU": 8, "ui8": 8, "i8": 8,
         # Sub-byte elements: one element a byte in the .io files (as MLIR's
         # hex literals and the lowered memrefs hold them).
         "f6E2M3FN": 6, "f6E3M2FN": 6, "f4E2M1FN": 4}
MLIR = {"ui8": "i8"}


def is_nan(dtype, b):
    """Whether the bits `b` of a float output element are a NaN."""
    if dtype == "f32":
        return (b & 0x7F800000) == 0x7F800000 and (b & 0x7FFFFF) != 0
    if dtype == "bf16":
        return (b & 0x7F80) == 0x7F80 and (b & 0x7F) != 0
    if dtype == "f16":
        return (b & 0x7C00) == 0x7C00 and (b & 0x3FF) != 0
    if dtype == "f8E4M3FN":
        return (b & 0x7F) == 0x7F
    if dtype == "f8E5M2":
        return (b & 0x7F) > 0x7C
    if dtype == "f8E8M0FNU":
        return b == 0xFF
    return False


def harness(program, io):
    text = open(program).read()
    # Parameters come as dense_resource blobs after the module: kept as is.
    resources = ""
    if "{-#" in text:
        text, resources = text[:text.index("{-#")], text[text.index("{-#"):]
    body = text[text.index("module {") + len("module {"):text.rindex("}")]
    body = body.replace("func.func @main(", "func.func @forward(", 1)
    maps = "\n".join(l for l in text.splitlines() if l.startswith("#"))
    sig = re.search(r"func\.func @forward\(([^)]*)\) -> \(?([^{]*?)\)? \{",
                    body)
    in_types = [a.split(":", 1)[1].strip() for a in sig.group(1).split(", ")]
    out_types = [t.strip() for t in re.findall(r"tensor<[^>]*>", sig.group(2))]
    lines = ["func.func private @printMemrefI32(memref<*xi32>)",
             "func.func @main() {"]
    args = []
    for i, (t, rec) in enumerate(zip(in_types, io["inputs"])):
        if "?" in t:  # dynamic sizes: the recorded input's, cast
            elem = t[len("tensor<"):-1].rsplit("x", 1)[1]
            st = "tensor<" + "".join(f"{d}x" for d in rec["shape"]) + elem + ">"
            lines.append(f'  %s{i} = arith.constant dense<"0x{rec["hex"]}"> : {st}')
            lines.append(f"  %in{i} = tensor.cast %s{i} : {st} to {t}")
        else:
            lines.append(f'  %in{i} = arith.constant dense<"0x{rec["hex"]}"> : {t}')
        args.append(f"%in{i}")
    res = ", ".join(f"%r{i}" for i in range(len(out_types)))
    lines.append(f"  {res} = call @forward({', '.join(args)}) : "
                 f"({', '.join(in_types)}) -> ({', '.join(out_types)})")
    for i, t in enumerate(out_types):
        inner = t[len("tensor<"):-1]
        # A 0-d tensor (a per-tensor scale) has no "x": tensor<f32>.
        shape, elem = inner.rsplit("x", 1) if "x" in inner else ("", inner)
        dims = shape + "x" if shape else ""
        w = WIDTH[io["outputs"][i]["dtype"]]
        it = f"tensor<{dims}i{w}>"
        i32 = f"tensor<{dims}i32>"
        v = f"%r{i}"
        if elem != f"i{w}":
            lines.append(f"  %b{i} = arith.bitcast {v} : {t} to {it}")
            v = f"%b{i}"
        if w != 32:
            lines.append(f"  %w{i} = arith.extui {v} : {it} to {i32}")
            v = f"%w{i}"
        mt = f"memref<{dims}i32>"
        lines.append(f"  %m{i} = bufferization.to_buffer {v} : {i32} to {mt}")
        lines.append(f"  %u{i} = memref.cast %m{i} : {mt} to memref<*xi32>")
        lines.append(f"  call @printMemrefI32(%u{i}) : (memref<*xi32>) -> ()")
    lines += ["  return", "}"]
    return maps + "\nmodule {\n" + body + "\n" + "\n".join(lines) + "\n}\n" + resources


def expected(rec):
    raw = bytes.fromhex(rec["hex"])
    w = max(1, WIDTH[rec["dtype"]] // 8)
    return [int.from_bytes(raw[i:i + w], "little") for i in range(0, len(raw), w)]


def run_program(args, src, pipeline, io):
    """The program's output elements (one list per output), or an error."""
    lower = subprocess.run([args.fusion_opt, "-", f"--fusion-pipeline={pipeline}"],
                           input=src, capture_output=True, text=True)
    if lower.returncode:
        return f"fusion-opt failed: {lower.stderr.strip()[:400]}"
    run = subprocess.run([args.mlir_runner, "-e", "main",
                          "-entry-point-result=void",
                          f"-shared-libs={args.shared_libs}"],
                         input=lower.stdout, capture_output=True, text=True)
    if run.returncode:
        return f"mlir-runner failed: {run.stderr.strip()[:400]}"
    outs = parse_outputs(run.stdout, io)
    if outs is None:
        return (f"{run.stdout.count('Unranked Memref')} outputs printed, "
                f"{len(io['outputs'])} expected")
    return outs


def parse_outputs(stdout, io):
    """The elements of every printMemrefI32 block of `stdout` (as unsigned
    values of each output's width), or None if their number is not the
    program's output count."""
    blocks = stdout.split("Unranked Memref")[1:]
    if len(blocks) != len(io["outputs"]):
        return None
    outs = []
    for blk, rec in zip(blocks, io["outputs"]):
        data = blk[blk.index("data =") + 6:]
        outs.append([int(x) % (1 << WIDTH[rec["dtype"]])
                     for x in re.findall(r"-?\d+", data)])
    return outs


def ordered(dtype, b):
    """A float's bits as an integer that orders like the value (-0 = +0)."""
    sign = 1 << (WIDTH[dtype] - 1)
    return -(b & (sign - 1)) if b & sign else b


def value(dtype, b):
    """The float a bf16 / f16 / f32 output element's bits stand for."""
    if dtype == "f32":
        return struct.unpack("<f", struct.pack("<I", b))[0]
    if dtype == "bf16":
        return struct.unpack("<f", struct.pack("<I", b << 16))[0]
    return struct.unpack("<e", struct.pack("<H", b))[0]


def close(dtype, g, e, steps, ulps=0, atol=0.0):
    """Equal bytes, both NaN, (steps) FP8 codes of one sign at most `steps`
    apart, or (ulps) bf16 / f16 / f32 values at most `ulps` units in the last
    place apart."""
    if g == e or (is_nan(dtype, g) and is_nan(dtype, e)):
        return True
    if dtype in ("f32", "bf16", "f16"):
        if ulps > 0 and abs(ordered(dtype, g) - ordered(dtype, e)) <= ulps:
            return True
        return atol > 0 and abs(value(dtype, g) - value(dtype, e)) <= atol
    return (steps > 0 and WIDTH[dtype] == 8 and dtype != "f8E8M0FNU" and
            (g ^ e) & 0x80 == 0 and abs(g - e) <= steps)


def e4m3_value(b):
    """The value of an e4m3 (f8E4M3FN) code (NaN for 0x7F / 0xFF)."""
    sign = -1.0 if b & 0x80 else 1.0
    e, m = (b >> 3) & 0xF, b & 0x7
    if e == 0xF and m == 0x7:
        return math.nan
    return sign * (m / 8.0 * 2.0 ** -6 if e == 0 else (1 + m / 8.0) * 2.0 ** (e - 7))


def mx_pairs(outs):
    """(data, scale) output index pairs of rowwise MXFP8 e4m3 results in
    compact layout: an f8E4M3FN output followed by an f8E8M0FNU one with
    1/32 of its elements and the same leading shape."""
    pairs = {}
    for k in range(len(outs) - 1):
        d, sc = outs[k], outs[k + 1]
        if (d["dtype"] == "f8E4M3FN" and sc["dtype"] == "f8E8M0FNU" and
                d["shape"][:-1] == sc["shape"][:-1] and
                d["shape"][-1] == 32 * sc["shape"][-1]):
            pairs[k] = k + 1
    return pairs


def mx_block_close(g_code, e_code, g_scale, e_scale, steps):
    """An element of an MXFP8 block whose scale byte differs between the two
    results: the dequantized values agree within `steps` e4m3 steps of the
    larger one's binade, or of the subnormal step under the larger scale."""
    vg = e4m3_value(g_code) * 2.0 ** (g_scale - 127)
    ve = e4m3_value(e_code) * 2.0 ** (e_scale - 127)
    if math.isnan(vg) or math.isnan(ve):
        return math.isnan(vg) and math.isnan(ve)
    big = max(abs(vg), abs(ve))
    step = 2.0 ** (math.floor(math.log2(big)) - 3) if big > 0 else 0.0
    step = max(step, 2.0 ** (-9 + max(g_scale, e_scale) - 127))
    return abs(vg - ve) <= steps * step


def check(args, program):
    io = json.load(open(program[:-len(".mlir")] + ".io.json"))
    src = harness(program, io)
    got = run_program(args, src, args.pipeline, io)
    if isinstance(got, str):
        return got
    what = "torch"
    if args.reference is None:
        want = [expected(rec) for rec in io["outputs"]]
    else:
        what = "reference pipeline"
        want = run_program(args, src, args.reference, io)
        if isinstance(want, str):
            return "reference: " + want
    differ = 0
    first = None
    # MX blocks whose scale byte is at most scale_steps away: their data is
    # compared by value (a block amax one rounding either side of a power of
    # two moves the whole block one binade).
    moved = {}
    if args.scale_steps > 0:
        for dk, sk in mx_pairs(io["outputs"]).items():
            for b, (gs, ws) in enumerate(zip(got[sk], want[sk])):
                if gs != ws and abs(gs - ws) <= args.scale_steps and \
                        0xFF not in (gs, ws):
                    moved[(dk, b)] = (gs, ws)
    for k, (g_out, w_out, rec) in enumerate(zip(got, want, io["outputs"])):
        if len(g_out) != len(w_out):
            return f"output {k}: {len(g_out)} elements, {len(w_out)} expected"
        atol = 0.0
        if args.float_rtol > 0 and rec["dtype"] in ("f32", "bf16", "f16"):
            vals = [abs(value(rec["dtype"], e)) for e in w_out]
            atol = args.float_rtol * max([v for v in vals if math.isfinite(v)] or [0.0])
        for j, (g, e) in enumerate(zip(g_out, w_out)):
            if (k, j // 32) in moved and rec["dtype"] == "f8E4M3FN":
                gs, ws = moved[(k, j // 32)]
                if not mx_block_close(g, e, gs, ws, max(args.data_steps, 1)):
                    return (f"output {k} ({rec['dtype']}) element {j}: 0x{g:x} "
                            f"at scale 0x{gs:x}, {what} 0x{e:x} at scale 0x{ws:x}")
                differ += g != e
                continue
            # A scale byte of such a block (the data output comes before
            # its scales).
            if rec["dtype"] == "f8E8M0FNU" and moved.get((k - 1, j)) == (g, e):
                differ += 1
                continue
            if not close(rec["dtype"], g, e, args.data_steps, args.float_ulps, atol):
                return (f"output {k} ({rec['dtype']}) element {j}: 0x{g:x}, "
                        f"{what} 0x{e:x}")
            if g != e and not (is_nan(rec["dtype"], g) and is_nan(rec["dtype"], e)):
                differ += 1
    return None if not differ else f"ok within the tolerance ({differ} elements differ)"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fusion-opt", required=True)
    p.add_argument("--mlir-runner", required=True)
    p.add_argument("--shared-libs", required=True)
    p.add_argument("--pipeline", default="")
    p.add_argument("--reference", default=None,
                   help="compare with the program lowered with these "
                        "fusion-pipeline options instead of torch's bytes")
    p.add_argument("--data-steps", type=int, default=0,
                   help="accept FP8 data codes this many steps from the "
                        "reference (transcendental activations: libm vs "
                        "torch's own erf/tanh/exp)")
    p.add_argument("--float-ulps", type=int, default=0,
                   help="accept bf16 / f16 / f32 outputs this many ulps from "
                        "the reference (projections: torch sums K in another "
                        "order than the runtime's sequential fp32)")
    p.add_argument("--float-rtol", type=float, default=0.0,
                   help="accept bf16 / f16 / f32 outputs within this fraction "
                        "of the output's largest magnitude of the reference")
    p.add_argument("--scale-steps", type=int, default=0,
                   help="accept rowwise MXFP8 (e4m3) scale bytes this many "
                        "steps from the reference, comparing that block's "
                        "codes by their dequantized values (within "
                        "--data-steps e4m3 steps, at least one): a block "
                        "amax that rounds across a power of two moves the "
                        "block one binade")
    p.add_argument("programs", nargs="+")
    args = p.parse_args()
    failed = 0
    for prog in args.programs:
        err = check(args, prog)
        ok = err is None or err.startswith("ok within")
        name = prog.rsplit("/", 1)[-1]
        print(f"{'PASS' if ok else 'FAIL'} {name} [{args.pipeline}]"
              + (f": {err}" if err else ""))
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
