#!/usr/bin/env bash
# knob_ab_device.sh - the A/B of one tuning knob (runtime/common/tuning.def,
# its environment variable $KNOB, values 1 and 0) on the device machine, in
# one call from the repository root: the format GPU tests (bit-exact
# against the CPU backend) with $KNOB=1 and =0, then
# bench/formats/formats_bench.py --only $ONLY with the knob at 1 (with the
# torch.compile peers of torchao's functions; PEERS=0 leaves them out) and
# at 0 (--no-peers), in the same call. Expects .devbin/ (libfusion_rt.so,
# fusion_rt_formats_gpu_tests built for sm_90a) and .whl/torchao*.whl.
# Writes $OUT/{env.txt, formats_gpu_tests_{1,0}.log, $TAG_{1,0}.csv}.
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
: "${KNOB:?KNOB: the environment variable of the knob}"
: "${ONLY:?ONLY: the list of formats_bench.py --only}"
TAG=${TAG:-ab}
export OUT=${OUT:-$PWD/formats-out}
. bench/mxfp8/device_env.sh
rc=0
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/env.txt"
for k in 1 0; do
  echo "=== format GPU tests, $KNOB=$k"
  env "$KNOB=$k" timeout ${TEST_TIMEOUT:-200} "$B/fusion_rt_formats_gpu_tests" \
    > "$OUT/formats_gpu_tests_$k.log" 2>&1
  r=$?; grep -E "^FAIL" "$OUT/formats_gpu_tests_$k.log" | head -20
  grep -E "sweep" "$OUT/formats_gpu_tests_$k.log" | head -4; tail -n 2 "$OUT/formats_gpu_tests_$k.log"
  [ $r -eq 0 ] || rc=1
done
use_torchao_wheel
export FUSION_RT_LIBRARY=$PWD/$B/libfusion_rt.so
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
for k in 1 0; do
  extra=""; { [ $k = 0 ] || [ "${PEERS:-1}" = 0 ]; } && extra="--no-peers"
  echo "=== formats_bench.py, $KNOB=$k"
  env "$KNOB=$k" timeout ${BENCH_TIMEOUT:-240} python3 bench/formats/formats_bench.py \
    --only "$ONLY" $extra --csv "$OUT/${TAG}_$k.csv" 2>&1 \
    | grep -v "^# .*compile+time" | grep -v "triton_\|AUTOTUNE" | tail -${BENCH_LINES:-12}
  r=$?; [ $r -eq 0 ] || rc=1
done
echo "KNOB A/B $KNOB: $([ $rc -eq 0 ] && echo PASS || echo FAIL)"
exit $rc
