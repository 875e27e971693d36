#!/usr/bin/env bash
# ab_run.sh - an A/B of two runtime builds on the device machine, in one call
# from the repository root: the format GPU tests on build B, then BENCH
# (default bench/formats/fp8_block_bench.py) with BENCH_ARGS for B with its
# torch.compile peers, and for A (fusion_rt only, --no-peers) in the same
# call. Expects .devbin/libfusion_rt.so (B, the change), .devbin/base/
# libfusion_rt.so (A, the baseline) and .devbin/fusion_rt_formats_gpu_tests;
# .whl/torchao*.whl, where present, is installed for the FP4 peers.
# Writes $OUT/{env.txt,formats_gpu_tests.log,b.csv,a.csv}; last line
# "AB RUN: PASS|FAIL".
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
export OUT=${OUT:-$PWD/formats-out}
. bench/mxfp8/device_env.sh
rc=0
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/env.txt"
echo "=== format GPU tests (B)"
timeout 300 "$B/fusion_rt_formats_gpu_tests" > "$OUT/formats_gpu_tests.log" 2>&1
r=$?; grep -E "^FAIL" "$OUT/formats_gpu_tests.log" | head -20; tail -n 2 "$OUT/formats_gpu_tests.log"
[ $r -eq 0 ] || rc=1
BENCH=${BENCH:-bench/formats/fp8_block_bench.py}
use_torchao_wheel # the FP4 peers (torchao's functions)
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
for arm in b a; do
  lib=$PWD/$B/libfusion_rt.so; extra=""
  [ $arm = a ] && lib=$PWD/$B/base/libfusion_rt.so && extra="--no-peers"
  echo "=== $BENCH ($arm: $lib)"
  FUSION_RT_LIBRARY=$lib LD_LIBRARY_PATH=$(dirname "$lib"):$LD_LIBRARY_PATH \
    timeout ${BENCH_TIMEOUT:-400} python3 "$BENCH" ${BENCH_ARGS:-} $extra \
    --csv "$OUT/$arm.csv" 2>&1 | grep -v "^# .*compile+time"
  r=$?; [ $r -eq 0 ] || rc=1
done
echo "AB RUN: $([ $rc -eq 0 ] && echo PASS || echo FAIL)"
exit $rc
