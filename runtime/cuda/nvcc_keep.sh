#!/usr/bin/env bash
# nvcc_keep.sh - the CUDA compiler launcher of fusion_rt_cuda (CMake's
# CUDA_COMPILER_LAUNCHER): runs the compile command unchanged, plus --keep and
# ptxas -v, and leaves next to the object OBJ, in OBJ.keep/:
#   <file>.compute_<arch>.ptx   the PTX of every architecture built;
#   ptxas.txt                   ptxas -v of every kernel and architecture.
# The kernel checks (check_ptx.sh) and the kernel inventory
# (tools/fusion-inspect/kernel_inventory.py) read these files instead of
# compiling every kernel file again. Other intermediates are deleted; ptxas -v
# lines are not echoed, every other diagnostic is.
# Usage: nvcc_keep.sh NVCC ARGS...   (as CMake calls a launcher)
set -u
out=""
prev=""
for a in "$@"; do
  [ "$prev" = "-o" ] && out=$a
  prev=$a
done
if [ -z "$out" ]; then
  exec "$@"
fi
keep="$out.keep"
rm -rf "$keep"
mkdir -p "$keep"
"$@" --keep --keep-dir "$keep" -Xptxas=-v 2>"$keep/stderr.txt"
rc=$?
grep -E '^ptxas info|^ +[0-9]+ bytes stack frame' "$keep/stderr.txt" >"$keep/ptxas.txt"
grep -vE '^ptxas info|^ +[0-9]+ bytes stack frame' "$keep/stderr.txt" >&2
find "$keep" -type f ! -name '*.ptx' ! -name 'ptxas.txt' -delete
# With one -gencode nvcc names the PTX <file>.ptx: give it its architecture.
archs=$(printf '%s\n' "$@" | grep -oE 'arch=compute_[0-9a-z]+' | sort -u)
if [ "$(printf '%s\n' "$archs" | grep -c .)" -eq 1 ]; then
  arch=${archs#arch=compute_}
  for f in "$keep"/*.ptx; do
    case $f in *.compute_*.ptx) ;; *) [ -f "$f" ] && mv "$f" "${f%.ptx}.compute_$arch.ptx" ;; esac
  done
fi
exit $rc
