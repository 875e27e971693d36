#!/usr/bin/env bash
# gpu_tests.sh - the MXFP8 GPU tests on the device machine: the full
# bit-exact set (CUDA vs the CPU backend, zero_scale = ONE cases included)
# and compute-sanitizer memcheck / racecheck over the quick set. Expects
# .devbin/ (libfusion_rt.so and fusion_rt_gpu_tests built here for sm_90a,
# e.g. `cmake -S runtime -B build-dev -DFUSION_RT_CUDA_ARCHS=90a`). Logs go
# under $OUT (or ./mxfp8-out).
set -o pipefail
. "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/nvsmi.txt"
rc=0
timeout 300 $B/fusion_rt_gpu_tests 2>&1 | tee "$OUT/gpu_tests.log" | grep -E "^FAIL|error path|cases \+|GPU TESTS" || rc=1
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  timeout 240 "$CS" --tool $tool --error-exitcode 9 $B/fusion_rt_gpu_tests --quick \
    > "$OUT/sanitizer_$tool.log" 2>&1
  r=$?
  echo "compute-sanitizer $tool (quick set): exit $r; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer_$tool.log" | tail -1)"
  [ $r -eq 0 ] || rc=1
done
exit $rc
