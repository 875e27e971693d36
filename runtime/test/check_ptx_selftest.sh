#!/usr/bin/env bash
# check_ptx_selftest.sh - the kernel check (runtime/cuda/check_ptx.sh) fails
# on each defect it exists for, and passes a clean file: fixtures of a kept
# PTX and ptxas -v report (as nvcc_keep.sh leaves them) with one defect each.
# Usage: check_ptx_selftest.sh CHECK_PTX_SH WORKDIR
set -u
CHECK=$1
WORK=$2
rm -rf "$WORK"
fail=0

# make_case NAME PTX_BODY PTXAS_STACK_LINE
make_case() {
  local dir="$WORK/$1"
  mkdir -p "$dir/src" "$dir/obj/k.cu.o.keep"
  : >"$dir/src/k.cu"
  printf '.version 8.8\n.target sm_90a\n.visible .entry k(\n)\n{\n%s\n\tret;\n}\n' "$2" \
    >"$dir/obj/k.cu.o.keep/k.compute_90a.ptx"
  printf "ptxas info    : Compiling entry function 'k' for 'sm_90a'\nptxas info    : Function properties for k\n%s\nptxas info    : Used 12 registers, used 0 barriers\n" "$3" \
    >"$dir/obj/k.cu.o.keep/ptxas.txt"
}
clean='    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads'

# expect NAME RC PATTERN
expect() {
  local out rc
  out=$("$CHECK" 90a "$WORK/$1/obj" "$WORK/$1/src" 2>&1)
  rc=$?
  if [ "$rc" -ne "$2" ] || ! grep -qE "$3" <<<"$out"; then
    echo "selftest FAIL $1: rc $rc (want $2), output:"; echo "$out"; fail=1
  else
    echo "selftest ok   $1"
  fi
}

make_case clean $'\tld.global.f32 %f1, [%rd1];' "$clean"
expect clean 0 'ok   k sm_90a: 1 kernels'
make_case spills $'\tld.global.f32 %f1, [%rd1];' '    0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads'
expect spills 1 'FAIL k: stack frame or spills'
make_case stack $'\tld.global.f32 %f1, [%rd1];' '    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads'
expect stack 1 'FAIL k: stack frame or spills'
make_case depot $'\t.local .align 4 .b8 __local_depot0[16];' "$clean"
expect depot 1 'local memory depot'
make_case cvta $'\t.shared .align 4 .b8 buf[64];\n\tcvta.shared.u64 %rd2, %rd1;' "$clean"
expect cvta 1 'cvta.shared'
make_case generic $'\t.shared .align 4 .b8 buf[64];\n\tld.f32 %f1, [%rd1];' "$clean"
expect generic 1 'shared memory declared and 1 generic'
make_case blackwell_cvt $'\tcvt.rn.satfinite.e2m1x2.f32 %rs1, %f1, %f2;' "$clean"
expect blackwell_cvt 1 'FAIL k sm_90a: 1 Blackwell conversions in a pre-Blackwell PTX'
# The FP4 kernels' Blackwell PTX without the e2m1 conversion.
mkdir -p "$WORK/fp4/src" "$WORK/fp4/obj/fp4_stream.cu.o.keep"; : >"$WORK/fp4/src/fp4_stream.cu"
printf '.version 8.8\n.target sm_100a\n.visible .entry k(\n)\n{\n\tret;\n}\n' \
  >"$WORK/fp4/obj/fp4_stream.cu.o.keep/fp4_stream.compute_100a.ptx"
printf "ptxas info    : Compiling entry function 'k' for 'sm_100a'\nptxas info    : Function properties for k\n%s\n" "$clean" \
  >"$WORK/fp4/obj/fp4_stream.cu.o.keep/ptxas.txt"
out=$("$CHECK" 100a "$WORK/fp4/obj" "$WORK/fp4/src" 2>&1)
if [ $? -ne 1 ] || ! grep -q 'FAIL fp4_stream sm_100a: no cvt.rn.satfinite.e2m1x2.f32' <<<"$out"; then
  echo "selftest FAIL fp4-no-e2m1x2:"; echo "$out"; fail=1
else echo "selftest ok   fp4-no-e2m1x2"; fi
# An architecture the build did not keep, and a file the build did not compile.
expect clean 0 'check_ptx: PASSED'
out=$("$CHECK" 90a,100a "$WORK/clean/obj" "$WORK/clean/src" 2>&1)
if [ $? -ne 1 ] || ! grep -q 'FAIL k sm_100a: no PTX' <<<"$out"; then
  echo "selftest FAIL missing-arch:"; echo "$out"; fail=1
else echo "selftest ok   missing-arch"; fi
mkdir -p "$WORK/unbuilt/src" "$WORK/unbuilt/obj"; : >"$WORK/unbuilt/src/k.cu"
expect unbuilt 1 'FAIL k: no .*ptxas.txt'
exit $fail
