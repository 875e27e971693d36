#!/usr/bin/env bash
# fp8_probe.sh - on the device machine, from the repository root (.devbin/
# and .whl/ as for device_run.sh): the FP8 block benchmark of per-row and
# 1x128 blocks with its peers, ncu of the FP8 kernels at 16384^2
# (ncu_fp8.py), and compute-sanitizer memcheck over the quick format tests.
# Output in $OUT (default ./formats-out): fp8_block_bench.{csv,log},
# ncu_fp8.txt, san.log.
export OUT=${OUT:-$PWD/formats-out}
. bench/mxfp8/device_env.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
  --target /tmp/site .whl/torchao*.whl
export PYTHONPATH=/tmp/site:$PWD/python FUSION_RT_LIBRARY=$PWD/$B/libfusion_rt.so
timeout ${BENCH_TIMEOUT:-200} python3 bench/formats/fp8_block_bench.py \
  --only ${BENCH_ONLY:-fp8_per_row,fp8_block_1x128} --csv "$OUT/fp8_block_bench.csv" \
  > "$OUT/fp8_block_bench.log" 2>&1
grep -v "^# .*compile+time" "$OUT/fp8_block_bench.log" | grep -v Warning | grep -v '"""'
timeout 150 ncu --kernel-name regex:'fp8_transpose|fp8_wide_row|fp8_block_plain' \
  --launch-skip 5 --launch-count 5 --section SpeedOfLight --section Occupancy \
  --section WarpStateStats --metrics \
  smsp__thread_inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__bytes.sum \
  python3 bench/formats/ncu_fp8.py > "$OUT/ncu_fp8.txt" 2>&1
grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|issue_active|thread_inst|dram__bytes|Achieved Occupancy|Registers Per|Stall" "$OUT/ncu_fp8.txt" | head -80
timeout ${SAN_TIMEOUT:-150} compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$B/fusion_rt_formats_gpu_tests" --quick > "$OUT/san.log" 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY|checks" "$OUT/san.log" | tail -2
