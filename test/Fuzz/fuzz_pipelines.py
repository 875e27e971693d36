#!/usr/bin/env python3
"""A mutation fuzzer for fusion-opt's pipelines over the lit corpus.

Seeds are the valid `.mlir` programs of test/ and examples/ (the ones
test/Pipeline/run_every_program.py runs). Each mutant is a seed with a few
mutations that keep it mostly parseable (change an integer or a float, swap
an element type, drop / duplicate / swap a line, change a shape dimension),
run through one pipeline or pass picked at random with a time limit. A run
that ends on a signal, prints LLVM's crash banner, or outlives the limit is
a finding: its signature (the first frame or message line) and the mutant
are written to --out. Diagnostics and non-zero exits are the expected
outcome for broken input and are not findings.

  fuzz_pipelines.py --fusion-opt BIN --root SRC [--seed N] [--runs N |
                    --seconds S] [--out DIR] [--timeout S]

Exit status 1 when anything was found. The lit suite runs a short
fixed-seed campaign (test/Fuzz/pipelines.test); docs/hardening.md has the
long command.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Pipeline"))
import run_every_program  # noqa: E402

PIPELINES = [
    ["--fusion-pipeline"],
    ["--fusion-pipeline=frontend=torch"],
    ["--fusion-pipeline=lower-to-llvm=false"],
    ["--fusion-act-quantize-pipeline"],
    ["--fusion-fuse-paired-projections"],
    ["--fusion-raise-quantize=saturating-casts=1 wrapping-int-casts=1 finite-inputs=1"],
    ["--fusion-normalize-elementwise", "--canonicalize", "--fusion-fuse-act-quantize"],
    ["--one-shot-bufferize=bufferize-function-boundaries", "--fusion-lower-to-runtime"],
    ["--fusion-kernel-report", "-o", os.devnull],
]
TYPES = ["bf16", "f16", "f32", "f64", "i8", "i32", "f8E4M3FN", "f8E5M2",
         "f8E8M0FNU", "f4E2M1FN", "index"]
CRASH = re.compile(r"PLEASE submit a bug report|Stack dump:|Assertion .* failed")


def mutate(text, rng):
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(7)
        i = rng.randrange(len(lines))
        line = lines[i]
        if kind == 0:  # an integer literal (dims, indices, constants)
            nums = list(re.finditer(r"(?<![\w.])\d+(?![\w.])", line))
            if nums:
                m = rng.choice(nums)
                v = rng.choice([0, 1, 2, 3, 7, 31, 32, 33, 64, 127, 128, 255,
                                256, 4096, 65536, int(m.group()) + 1,
                                max(0, int(m.group()) - 1)])
                lines[i] = line[:m.start()] + str(v) + line[m.end():]
        elif kind == 1:  # an element type
            found = [t for t in TYPES if t in line]
            if found:
                lines[i] = line.replace(rng.choice(found), rng.choice(TYPES), 1)
        elif kind == 2:  # drop a line
            del lines[i]
        elif kind == 3:  # duplicate a line
            lines.insert(i, line)
        elif kind == 4:  # swap two lines
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == 5:  # a dimension of a shaped type becomes dynamic
            dims = list(re.finditer(r"(?<=[<x])\d+(?=x)", line))
            if dims:
                m = rng.choice(dims)
                lines[i] = line[:m.start()] + "?" + line[m.end():]
        else:  # a float literal
            fl = list(re.finditer(r"-?\d+\.\d+(e[+-]?\d+)?", line))
            if fl:
                m = rng.choice(fl)
                v = rng.choice(["0.0", "-0.0", "1.0e+38", "448.0", "0x7FC00000",
                                "1.0e-40", "-3.5"])
                lines[i] = line[:m.start()] + v + line[m.end():]
    return "\n".join(lines)


def signature(out):
    for line in out.splitlines():
        m = re.search(r"#\d+ 0x[0-9a-f]+ (.*)", line)
        if m and "llvm::sys::" not in m.group(1) and "libc.so" not in m.group(1) \
                and "SignalHandler" not in m.group(1) and m.group(1).strip() != "":
            frame = re.sub(r"\(/[^)]*\)", "", m.group(1)).strip()
            if frame and not frame.startswith("0x"):
                return frame[:160]
    m = re.search(r"Assertion .* failed", out)
    return m.group(0)[:160] if m else "crash (no frame)"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fusion-opt", required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--runs", type=int, default=0)
    p.add_argument("--seconds", type=float, default=0)
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--out", default="")
    p.add_argument("--exclude", action="append", default=[],
                   help="skip seeds under this folder (relative to --root)")
    a = p.parse_args()
    seeds = []
    excluded = [os.path.join(os.path.abspath(a.root), d) + os.sep for d in a.exclude]
    for path in run_every_program.programs(a.root):
        if any(os.path.abspath(path).startswith(d) for d in excluded):
            continue
        text = open(path).read()
        if not any(m in text for m in run_every_program.SKIP_MARKERS):
            seeds.append((path, text))
    rng = random.Random(a.seed)
    start, runs, findings = time.time(), 0, {}
    while True:
        if a.runs and runs >= a.runs:
            break
        if a.seconds and time.time() - start >= a.seconds:
            break
        if not a.runs and not a.seconds:
            break
        path, text = rng.choice(seeds)
        chunks = text.split("\n// -----")
        mutant = mutate(rng.choice(chunks), rng)
        args = rng.choice(PIPELINES)
        runs += 1
        try:
            r = subprocess.run([a.fusion_opt, "-"] + args, input=mutant,
                               capture_output=True, text=True, timeout=a.timeout)
            out = r.stdout[-4000:] + r.stderr
            crashed = r.returncode < 0 or CRASH.search(r.stderr) is not None
            sig = signature(r.stderr) if crashed else None
        except subprocess.TimeoutExpired:
            sig = f"hang (over {a.timeout:.0f} s)"
        if sig:
            key = (sig, " ".join(args))
            if key not in findings:
                findings[key] = (os.path.relpath(path, a.root), mutant)
                print(f"FINDING {sig} | {' '.join(args)} | from {os.path.relpath(path, a.root)}",
                      flush=True)
                if a.out:
                    os.makedirs(a.out, exist_ok=True)
                    with open(os.path.join(a.out, f"finding{len(findings)}.mlir"), "w") as f:
                        f.write(f"// {sig}\n// RUN: fusion-opt %s {' '.join(args)}\n" + mutant)
    print(f"{runs} mutants of {len(seeds)} seeds through {len(PIPELINES)} "
          f"pipelines in {time.time() - start:.0f} s: {len(findings)} distinct "
          f"crash/hang signatures")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
