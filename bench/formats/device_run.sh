#!/usr/bin/env bash
# device_run.sh - the format kernels (runtime/cuda/formats.cu) on the GPU
# machine, in one call from the repository root: the bit-exact GPU tests of
# the format kernels, the MXFP8 GPU tests (--quick: the dispatch they share
# changed), compute-sanitizer memcheck and racecheck over the quick format
# tests, and the benchmark with its peers (bench/formats/formats_bench.py).
# Expects .devbin/ (libfusion_rt.so, fusion_rt_formats_gpu_tests,
# fusion_rt_gpu_tests built for sm_90a) and .whl/torchao*.whl.
# Environment: OUT (default ./formats-out), QUICK=1 (benchmark 4096x7168 only),
# NO_BENCH=1, NO_SAN=1, BENCH (default bench/formats/formats_bench.py; also
# bench/formats/fp8_block_bench.py). Last line: "FORMATS DEVICE RUN: PASS|FAIL".
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
export OUT=${OUT:-$PWD/formats-out}
. bench/mxfp8/device_env.sh
rc=0
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  git log -1 --format='commit %h %s' 2>/dev/null; } | tee "$OUT/env.txt"
echo "=== format GPU tests"
timeout 300 "$B/fusion_rt_formats_gpu_tests" > "$OUT/formats_gpu_tests.log" 2>&1
r=$?; grep -E "^FAIL" "$OUT/formats_gpu_tests.log" | head -40; tail -n 3 "$OUT/formats_gpu_tests.log"
[ $r -eq 0 ] || rc=1
echo "=== MXFP8 GPU tests (--quick)"
timeout 200 "$B/fusion_rt_gpu_tests" --quick > "$OUT/mxfp8_gpu_tests.log" 2>&1
r=$?; grep -E "^FAIL" "$OUT/mxfp8_gpu_tests.log" | head -20; tail -n 2 "$OUT/mxfp8_gpu_tests.log"
[ $r -eq 0 ] || rc=1
if [ "${NO_SAN:-0}" != 1 ]; then
  for tool in memcheck racecheck; do
    echo "=== compute-sanitizer $tool (format tests --quick)"
    timeout 400 compute-sanitizer --tool $tool --error-exitcode 9 \
      "$B/fusion_rt_formats_gpu_tests" --quick > "$OUT/san_$tool.log" 2>&1
    r=$?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^FAIL" "$OUT/san_$tool.log" | head -5
    tail -n 1 "$OUT/san_$tool.log"; echo "$tool exit $r"; [ $r -eq 0 ] || rc=1
  done
fi
if [ "${NO_BENCH:-0}" != 1 ]; then
  use_torchao_wheel
  export FUSION_RT_LIBRARY=$PWD/$B/libfusion_rt.so
  export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
  Q=""; [ "${QUICK:-0}" = 1 ] && Q="--quick"
  echo "=== benchmark"
  BENCH=${BENCH:-bench/formats/formats_bench.py}
  name=$(basename "$BENCH" .py)
  timeout ${BENCH_TIMEOUT:-400} python3 "$BENCH" $Q ${BENCH_ARGS:-} \
    --csv "$OUT/$name.csv" 2>&1 | tee "$OUT/$name.log"
  r=$?; echo "$name.py exit $r"; [ $r -eq 0 ] || rc=1
fi
[ $rc -eq 0 ] && echo "FORMATS DEVICE RUN: PASS" || echo "FORMATS DEVICE RUN: FAIL"
exit $rc
