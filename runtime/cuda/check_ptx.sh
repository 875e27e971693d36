#!/usr/bin/env bash
# check_ptx.sh - kernel inspection without a GPU (registered as the ctest
# fusion_rt_cuda_check_ptx). For every kernel file of runtime/cuda and every
# architecture of the build:
#   1. shared memory is reached only through the shared state space: the PTX
#      must not convert a shared address to a generic one (cvta.shared /
#      cvta.shared.u64 feeding generic ld/st: the integer round trip that
#      loses the window); every shared access is ld.shared / st.shared;
#   2. no local-memory depot in the PTX (arrays indexed at run time);
#   3. ptxas -v: 0 bytes stack frame, 0 bytes spill stores and loads for
#      every function;
#   4. Blackwell's conversions (cvt ... e2m1x2 / ue8m0x2) only in the PTX of
#      the Blackwell architectures (sm_100a and later), and there the FP4
#      kernels of fp4_stream.cu and formats.cu convert with e2m1x2.
# It reads what the build left: fusion_rt_cuda compiles through nvcc_keep.sh,
# which keeps each object's PTX and ptxas -v report in OBJ.keep/, so the
# shipped code itself is checked and nothing is compiled twice.
# Usage: check_ptx.sh ARCHS_CSV OBJECT_DIR [SOURCE_DIR]
#        ARCHS e.g. 90a,100a,120a; OBJECT_DIR the fusion_rt_cuda.dir holding
#        <file>.cu.o.keep/; SOURCE_DIR the kernel files (default: this
#        script's directory; check_ptx_selftest.sh passes its fixtures)
set -u
ARCHS=${1:?usage: check_ptx.sh ARCHS_CSV OBJECT_DIR}
OBJS=${2:?usage: check_ptx.sh ARCHS_CSV OBJECT_DIR}
SRCS=${3:-$(cd "$(dirname "$0")" && pwd)}
fail=0
for src in "$SRCS"/*.cu; do
  name=$(basename "$src" .cu)
  keep="$OBJS/$name.cu.o.keep"
  log="$keep/ptxas.txt"
  if [ ! -f "$log" ]; then
    echo "FAIL $name: no $log (build fusion_rt_cuda first; it compiles through nvcc_keep.sh)"
    fail=1; continue
  fi
  # Every function of every architecture: stack frame and spills.
  bad=$(awk '/Compiling entry function|Function properties for/ {fn=$0}
             /bytes stack frame/ && !/^ *0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads/ {print fn; print $0}' "$log")
  if [ -n "$bad" ]; then
    echo "FAIL $name: stack frame or spills:"
    echo "$bad"
    fail=1
  fi
  for arch in ${ARCHS//,/ }; do
    ptx="$keep/$name.compute_$arch.ptx"
    if [ ! -f "$ptx" ]; then
      echo "FAIL $name sm_$arch: no PTX $ptx (architecture not built?)"
      fail=1; continue
    fi
    compiled=$(grep -c "for 'sm_$arch'" "$log")
    entries=$(grep -cE '^(\.visible )?\.entry' "$ptx")
    if [ "$compiled" -ne "$entries" ]; then
      echo "FAIL $name sm_$arch: $entries kernels in the PTX, $compiled in the ptxas report"
      fail=1
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
    bw=$(grep -cE 'cvt\.r[np]\.satfinite\.(e2m1x2|ue8m0x2)' "$ptx")
    if [ "${arch%a}" -lt 100 ] && [ "$bw" -gt 0 ]; then
      echo "FAIL $name sm_$arch: $bw Blackwell conversions in a pre-Blackwell PTX"
      fail=1
    fi
    if [ "${arch%a}" -ge 100 ] && { [ "$name" = fp4_stream ] || [ "$name" = formats ]; } &&
       ! grep -qE 'cvt\.rn\.satfinite\.e2m1x2\.f32' "$ptx"; then
      echo "FAIL $name sm_$arch: no cvt.rn.satfinite.e2m1x2.f32 in the FP4 kernels' PTX"
      fail=1
    fi
    maxreg=$(awk -v a="for 'sm_$arch'" 'index($0, a) {on=1; next}
                /Compiling entry function/ {on=0}
                on && match($0, /Used [0-9]+ registers/) {split(substr($0, RSTART, RLENGTH), w, " "); if (w[2] > m) m = w[2]}
                END {print m + 0}' "$log")
    echo "ok   $name sm_$arch: $entries kernels, shared memory $(grep -qE '\.shared' "$ptx" && echo used || echo unused), ld/st.shared $ld_sh, generic ld/st $generic, 0 spills, 0 stack, max $maxreg registers"
  done
done
if [ $fail -ne 0 ]; then
  echo "check_ptx: FAILED"
  exit 1
fi
echo "check_ptx: PASSED"
