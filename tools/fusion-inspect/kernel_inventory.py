#!/usr/bin/env python3
"""Kernel inventory of the runtime's CUDA kernels, read off the compiler.

For every kernel (.entry) of runtime/cuda/*.cu compiled for one architecture:
registers, static shared memory, stack frame, spill stores/loads (ptxas -v),
and the count of shared-state-space vs generic memory instructions in its PTX
(ld/st/atom/red .shared versus plain ld/st, which on a shared address would
mean the pointer lost its shared window). Writes a TSV that
`fusion-opt --fusion-kernel-report` reads.

usage: kernel_inventory.py NVCC ARCH RUNTIME_DIR OUT.tsv WORKDIR
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
    nvcc, arch, rtdir, out, work = sys.argv[1:6]
    os.makedirs(work, exist_ok=True)
    ptxas = os.path.join(os.path.dirname(nvcc), "ptxas")
    rows = []
    for src in sorted(os.listdir(os.path.join(rtdir, "cuda"))):
        if not src.endswith(".cu"):
            continue
        base = src[:-3]
        ptx_path = os.path.join(work, f"{base}.sm_{arch}.ptx")
        subprocess.run([nvcc, "-std=c++17", "-O3", "-fmad=false",
                        "--expt-relaxed-constexpr", "-DFUSION_RT_HAVE_CUDA",
                        "-I" + rtdir, "-I" + os.path.join(rtdir, "include"),
                        "-ptx", f"-gencode=arch=compute_{arch},code=compute_{arch}",
                        os.path.join(rtdir, "cuda", src), "-o", ptx_path],
                       check=True)
        log = subprocess.run([ptxas, f"-arch=sm_{arch}", "-v", ptx_path, "-o",
                              os.devnull], capture_output=True, text=True,
                             check=True).stderr
        res = {}
        current = None
        for line in log.splitlines():
            m = re.search(r"Compiling entry function '(\S+)'", line)
            if m:
                current = m.group(1)
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
