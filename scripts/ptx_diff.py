#!/usr/bin/env python3
"""ptx_diff.py OLD NEW: compares two PTX files (or two directories of them,
by file name) kernel by kernel.

Each `.entry` (with the functions it calls inlined in the same file) is
compared after normalising what changes with nothing but the build: the
file-name hash in global names, and the function's position in the file in
block labels ($L__BB<n>_) and local depots. Nothing else is normalised, so a
difference is a real one. Prints the kernels only
in OLD (retired), only in NEW (added) and in both but different; exits 1
when any kept kernel differs. Used to show that a host-side change leaves
the kept kernels' code byte-identical (docs/kernels.md)."""
import os
import re
import sys

ENTRY = re.compile(r"^(?:\.visible |\.weak )?\.entry (\S+)\(", re.M)
HASH = re.compile(r"_[0-9a-f]{8}_\d+_[A-Za-z0-9_]+?_cu_[0-9a-f]{8}")
# Block labels and local depots are numbered by the function's position in
# the file, which changes when other kernels come or go.
LABEL = re.compile(r"(\$L__BB|__local_depot)\d+")


def entries(path):
    text = open(path).read()
    text = HASH.sub("_HASH_", text)
    text = LABEL.sub(r"\1N", text)
    out = {}
    starts = [(m.start(), m.group(1)) for m in ENTRY.finditer(text)]
    for i, (pos, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        body = text[pos:end]
        # The entry ends at its closing brace on a line of its own.
        close = body.find("\n}\n")
        out[name] = body[: close + 3] if close >= 0 else body
    return out


def compare(old, new, label):
    a, b = entries(old), entries(new)
    gone = sorted(set(a) - set(b))
    added = sorted(set(b) - set(a))
    changed = sorted(k for k in set(a) & set(b) if a[k] != b[k])
    print(f"{label}: {len(a)} -> {len(b)} kernels; kept {len(set(a) & set(b))}, "
          f"retired {len(gone)}, added {len(added)}, changed {len(changed)}")
    for k in changed:
        print("  CHANGED", k)
    for k in added:
        print("  ADDED", k)
    return len(changed) == 0, gone


def main():
    old, new = sys.argv[1], sys.argv[2]
    verbose = "-v" in sys.argv[3:]
    ok = True
    pairs = []
    if os.path.isdir(old):
        for f in sorted(os.listdir(old)):
            if f.endswith(".ptx") and os.path.exists(os.path.join(new, f)):
                pairs.append((os.path.join(old, f), os.path.join(new, f), f))
    else:
        pairs.append((old, new, os.path.basename(old)))
    for o, n, label in pairs:
        same, gone = compare(o, n, label)
        ok = ok and same
        if verbose:
            for k in gone:
                print("  RETIRED", k)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
