#!/usr/bin/env python3
"""Kernel inventory of the runtime's CUDA kernels, read off the compiler.

For every kernel (.entry) of runtime/cuda/*.cu compiled for one architecture:
registers, static shared memory, stack frame, spill stores/loads (ptxas -v),
and the count of shared-state-space vs generic memory instructions in its PTX
(ld/st/atom/red .shared versus plain ld/st, which on a shared address would
mean the pointer lost its shared window). Writes a TSV that
`fusion-opt --fusion-kernel-report` reads.

It compiles nothing: the build of fusion_rt_cuda goes through
runtime/cuda/nvcc_keep.sh, which leaves each object's PTX
(<file>.compute_<arch>.ptx) and ptxas -v report (ptxas.txt) in
OBJECT_DIR/<file>.cu.o.keep/.

usage: kernel_inventory.py ARCH RUNTIME_DIR OBJECT_DIR OUT.tsv
"""
import os
import re
import subprocess
import sys


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), text=True,
                             capture_output=True, check=True).stdout
        return out.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return names


def ptx_functions(ptx):
    """Yields (mangled name, body text) of every .entry in a PTX file."""
    for m in re.finditer(r"\.entry\s+(\S+?)\s*\(", ptx):
        start = m.end()
        depth, i = 0, ptx.index("{", start)
        j = i
        while True:
            if ptx[j] == "{":
                depth += 1
            elif ptx[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        yield m.group(1), ptx[i:j]


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: kernel_inventory.py ARCH RUNTIME_DIR OBJECT_DIR OUT.tsv")
    arch, rtdir, objdir, out = sys.argv[1:5]
    rows = []
    for src in sorted(os.listdir(os.path.join(rtdir, "cuda"))):
        if not src.endswith(".cu"):
            continue
        base = src[:-3]
        keep = os.path.join(objdir, src + ".o.keep")
        ptx_path = os.path.join(keep, f"{base}.compute_{arch}.ptx")
        try:
            with open(os.path.join(keep, "ptxas.txt")) as f:
                log = f.read()
        except OSError as e:
            sys.exit(f"kernel_inventory: {e} (fusion_rt_cuda builds through "
                     "runtime/cuda/nvcc_keep.sh)")
        res = {}
        current = None
        for line in log.splitlines():
            # The report holds every architecture built; keep this one's.
            m = re.search(r"Compiling entry function '(\S+)' for '(\S+)'", line)
            if m:
                current = m.group(1) if m.group(2) == f"sm_{arch}" else None
                if current is None:
                    continue
                res[current] = {"regs": 0, "smem": 0, "stack": 0,
                                "spill_st": 0, "spill_ld": 0}
                continue
            if current is None:
                continue
            m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                          r"(\d+) bytes spill loads", line)
            if m:
                res[current]["stack"] = int(m.group(1))
                res[current]["spill_st"] = int(m.group(2))
                res[current]["spill_ld"] = int(m.group(3))
            m = re.search(r"Used (\d+) registers", line)
            if m:
                res[current]["regs"] = int(m.group(1))
            m = re.search(r"(\d+) bytes smem", line)
            if m:
                res[current]["smem"] = int(m.group(1))
        with open(ptx_path) as f:
            ptx = f.read()
        funcs = list(ptx_functions(ptx))
        names = demangle([n for n, _ in funcs])
        for (mangled, body), name in zip(funcs, names):
            shared = len(re.findall(r"\b(?:ld|st|atom|red)\.shared", body))
            generic = len(re.findall(
                r"^\s*(?:@!?%p\d+\s+)?(?:ld|st)\.(?:v[248]\.)?[busf]\d+\b",
                body, re.M))
            r = res.get(mangled, {})
            rows.append([base, name, str(r.get("regs", 0)),
                         str(r.get("smem", 0)), str(r.get("stack", 0)),
                         str(r.get("spill_st", 0)), str(r.get("spill_ld", 0)),
                         str(shared), str(generic)])
    with open(out, "w") as f:
        f.write("# arch sm_%s\n" % arch)
        f.write("file\tkernel\tregisters\tsmem_bytes\tstack_bytes\t"
                "spill_store_bytes\tspill_load_bytes\tshared_insts\t"
                "generic_insts\n")
        for r in rows:
            f.write("\t".join(r) + "\n")


if __name__ == "__main__":
    main()
