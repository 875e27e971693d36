#!/usr/bin/env bash
# device_check.sh - after an activation kind is added or changed: the GPU
# bit-exactness tests of every kernel family that computes activations, the
# activation columns of the device numerics check, and the frontend corpus on
# device buffers, in one call on the GPU machine from the repository root.
# Expects .devbin/ built for sm_90a: libfusion_rt.so, fusion_rt_gpu_tests,
# fusion_rt_formats_gpu_tests, fusion_rt_paired_gpu_tests,
# fusion_rt_device_numerics_check, and corpus/ (tools/frontend-corpus/
# device_corpus.py build .devbin/corpus test/Frontend/corpus/*.mlir).
# Output in $OUT (default ./activations-out); last line
# "ACTIVATIONS DEVICE CHECK: PASS|FAIL".
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
export OUT=${OUT:-$PWD/activations-out}
. bench/mxfp8/device_env.sh
rc=0
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  git log -1 --format='commit %h %s' 2>/dev/null; } | tee "$OUT/env.txt"
run() { # name timeout command...
  local name=$1 t=$2; shift 2
  echo "=== $name"
  timeout "$t" "$@" > "$OUT/$name.log" 2>&1
  local r=$?
  grep -E "^FAIL|FAILED|mismatch(es)? [1-9]" "$OUT/$name.log" | head -20
  tail -n 2 "$OUT/$name.log"; echo "$name exit $r"
  [ $r -eq 0 ] || rc=1
}
run gpu_tests 300 "$B/fusion_rt_gpu_tests"
run formats_gpu_tests 300 "$B/fusion_rt_formats_gpu_tests"
run paired_gpu_tests 200 "$B/fusion_rt_paired_gpu_tests"
run device_numerics_check 200 "$B/fusion_rt_device_numerics_check"
grep -E "^act " "$OUT/device_numerics_check.log"
run corpus 400 python3 tools/frontend-corpus/device_corpus.py run "$B/corpus"
[ $rc -eq 0 ] && echo "ACTIVATIONS DEVICE CHECK: PASS" || echo "ACTIVATIONS DEVICE CHECK: FAIL"
exit $rc
