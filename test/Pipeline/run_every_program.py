#!/usr/bin/env python3
"""Runs the pipeline a user runs on every test program of the lit suite.

Every `.mlir` file under test/ and examples/ that is valid IR (no
`expected-error`, not a deliberately malformed input) goes through
`fusion-opt --fusion-pipeline` down to LLVM, and again with
`frontend=torch`; a file split by `// -----` is run with
`-split-input-file`. New test files are picked up without editing this
script. Prints one line per failure (the file, the pipeline and the first
lines of fusion-opt's output) and exits 1 if there is any.

usage: run_every_program.py FUSION_OPT SRC_ROOT
"""
import os
import subprocess
import sys

PIPELINES = ["--fusion-pipeline", "--fusion-pipeline=frontend=torch"]
# Inputs that are not programs: malformed on purpose, or already lowered
# past the fusion ops' level.
SKIP_MARKERS = ("expected-error", "// NOT-A-PROGRAM")


def programs(root):
    for top in ("test", "examples"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(".mlir"):
                    yield os.path.join(d, f)


def main():
    fusion_opt, root = sys.argv[1], sys.argv[2]
    failures, count = [], 0
    for path in programs(root):
        with open(path) as f:
            text = f.read()
        if any(m in text for m in SKIP_MARKERS):
            continue
        split = ["-split-input-file"] if "\n// -----" in text else []
        for p in PIPELINES:
            count += 1
            try:
                r = subprocess.run([fusion_opt, path, p, "-o", os.devnull] + split,
                                   capture_output=True, text=True, timeout=300)
                out = (r.stdout + r.stderr).strip().splitlines()
                rc = r.returncode
            except subprocess.TimeoutExpired:
                out, rc = ["timed out after 300 s"], "timeout"
            if rc != 0:
                rel = os.path.relpath(path, root)
                failures.append(f"FAIL {rel} {p} (exit {rc}): " +
                                " | ".join(out[:4]))
    for f in failures:
        print(f)
    print(f"{count - len(failures)} of {count} pipeline runs succeeded")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
