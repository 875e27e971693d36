#!/usr/bin/env bash
# fp4_packed_device.sh - the A/B of tuning.def's fp4_packed (the plain MXFP4
# stream kernel converting two elements an instruction in the input's type)
# on the device machine, in one call from the repository root: the format
# GPU tests (bit-exact against the CPU backend, make_sweep's MXFP4 cases
# among them) with FUSION_RT_CUDA_FP4_PACKED=1 and =0, then
# bench/formats/formats_bench.py --only $ONLY with the knob at 1 (with the
# torch.compile peers of torchao's functions) and at 0 (--no-peers), in the
# same call. Expects .devbin/ (libfusion_rt.so, fusion_rt_formats_gpu_tests
# built for sm_90a) and .whl/torchao*.whl. Writes $OUT/{env.txt,
# formats_gpu_tests_{1,0}.log,packed_{1,0}.csv}.
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
export OUT=${OUT:-$PWD/formats-out}
. bench/mxfp8/device_env.sh
rc=0
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/env.txt"
for k in 1 0; do
  echo "=== format GPU tests, FUSION_RT_CUDA_FP4_PACKED=$k"
  FUSION_RT_CUDA_FP4_PACKED=$k timeout ${TEST_TIMEOUT:-200} "$B/fusion_rt_formats_gpu_tests" \
    > "$OUT/formats_gpu_tests_$k.log" 2>&1
  r=$?; grep -E "^FAIL" "$OUT/formats_gpu_tests_$k.log" | head -20
  grep -E "sweep" "$OUT/formats_gpu_tests_$k.log" | head -4; tail -n 2 "$OUT/formats_gpu_tests_$k.log"
  [ $r -eq 0 ] || rc=1
done
use_torchao_wheel
export FUSION_RT_LIBRARY=$PWD/$B/libfusion_rt.so
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
for k in 1 0; do
  extra=""; [ $k = 0 ] && extra="--no-peers"
  echo "=== formats_bench.py, FUSION_RT_CUDA_FP4_PACKED=$k"
  FUSION_RT_CUDA_FP4_PACKED=$k timeout ${BENCH_TIMEOUT:-240} python3 bench/formats/formats_bench.py \
    --only "${ONLY:-mxfp4_rowwise,nvfp4_rowwise}" $extra --csv "$OUT/packed_$k.csv" 2>&1 \
    | grep -v "^# .*compile+time" | grep -v "triton_\|AUTOTUNE" | tail -12
  r=$?; [ $r -eq 0 ] || rc=1
done
echo "FP4 PACKED A/B: $([ $rc -eq 0 ] && echo PASS || echo FAIL)"
exit $rc
