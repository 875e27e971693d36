#!/usr/bin/env bash
# check_ptx.sh - kernel inspection without a GPU (registered as the ctest
# fusion_rt_cuda_check_ptx). For every kernel file of runtime/cuda and every
# architecture:
#   1. shared memory is reached only through the shared state space: the PTX
#      must not convert a shared address to a generic one (cvta.shared /
#      cvta.shared.u64 feeding generic ld/st: the integer round trip that
#      loses the window); every shared access is ld.shared / st.shared;
#   2. no local-memory depot in the PTX (arrays indexed at run time);
#   3. ptxas -v: 0 bytes stack frame, 0 bytes spill stores and loads for
#      every function.
# Usage: check_ptx.sh NVCC ARCHS_CSV WORKDIR   (ARCHS e.g. 90a,100a,120a)
set -u
NVCC=${1:-nvcc}
ARCHS=${2:-90a,100a,120a}
WORK=${3:-/tmp/fusion_rt_ptx_check}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
PTXAS=$(dirname "$NVCC")/ptxas
[ -x "$PTXAS" ] || PTXAS=ptxas
mkdir -p "$WORK"
fail=0
for arch in ${ARCHS//,/ }; do
  for src in "$HERE"/*.cu; do
    name=$(basename "$src" .cu)
    ptx="$WORK/$name.sm_$arch.ptx"
    if ! "$NVCC" -std=c++17 -O3 -fmad=false --expt-relaxed-constexpr \
        -DFUSION_RT_HAVE_CUDA -I"$ROOT" -I"$ROOT/include" -ptx \
        -gencode=arch=compute_$arch,code=compute_$arch "$src" -o "$ptx"; then
      echo "FAIL $name sm_$arch: nvcc -ptx failed"; fail=1; continue
    fi
    ld_sh=$(grep -cE '\b(ld|st|atom|red)\.shared' "$ptx")
    generic=$(grep -cE '^\s*(@%p[0-9]+ )?(ld|st)\.(v[248]\.)?[busf][0-9]+\b' "$ptx")
    if grep -qE 'cvta\.shared' "$ptx"; then
      echo "FAIL $name sm_$arch: cvta.shared (a shared address made generic)"
      grep -nE 'cvta\.shared' "$ptx" | head -5
      fail=1
    fi
    if grep -q '__local_depot' "$ptx"; then
      echo "FAIL $name sm_$arch: local memory depot in the PTX"
      fail=1
    fi
    if grep -qE '\.shared' "$ptx" && [ "$generic" -gt 0 ]; then
      echo "FAIL $name sm_$arch: shared memory declared and $generic generic ld/st"
      fail=1
    fi
    log="$WORK/$name.sm_$arch.ptxas.txt"
    if ! "$PTXAS" -arch=sm_$arch -v "$ptx" -o "$WORK/$name.sm_$arch.cubin" >"$log" 2>&1; then
      echo "FAIL $name sm_$arch: ptxas failed"; cat "$log"; fail=1; continue
    fi
    bad=$(grep -E 'bytes stack frame' "$log" | grep -vE '^\s*0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads' || true)
    if [ -n "$bad" ]; then
      echo "FAIL $name sm_$arch: stack frame or spills:"
      echo "$bad"
      fail=1
    fi
    maxreg=$(grep -oE 'Used [0-9]+ registers' "$log" | awk '{print $2}' | sort -n | tail -1)
    entries=$(grep -cE '^(\.visible )?\.entry' "$ptx")
    echo "ok   $name sm_$arch: $entries kernels, shared memory $(grep -qE '\.shared' "$ptx" && echo used || echo unused), ld/st.shared $ld_sh, generic ld/st $generic, 0 spills, 0 stack, max ${maxreg:-0} registers"
  done
done
if [ $fail -ne 0 ]; then
  echo "check_ptx: FAILED"
  exit 1
fi
echo "check_ptx: PASSED"
