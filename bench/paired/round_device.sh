#!/usr/bin/env bash
# One device call for the accumulator rounding (round(bf16)) of the paired
# projection: the paired GPU tests (every path, rounding cases included),
# an A/B of ours with and without FUSION_BENCH_ROUND=1 (alternating, N <= 16
# of every shape; rows in $OUT/paired_ab.csv), then the benchmark with its
# peers (paired_bench.py, BUDGET seconds of torch.compile arms).
# Usage: OUT=dir bash bench/paired/round_device.sh BUILD_DIR
set -uo pipefail
B=${1:?build dir with lib/libfusion_rt.so and cuda/fusion_rt_paired_gpu_tests}
OUT=${OUT:-/tmp/paired-round}
source "$(dirname "$0")/device_env.sh"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > "$OUT/env.txt"
cat "$OUT/env.txt"
paired_gpu_tests
for arm in none round_bf16 none_2 round_bf16_2; do
  r=0; [[ $arm == round* ]] && r=1
  FUSION_BENCH_ROUND=$r timeout 120 python3 bench/paired/paired_bench.py \
    --lib "$B/lib/libfusion_rt.so" --out "$OUT" --ab-ours "$arm" >> "$OUT/ab.log" 2>&1
  echo "ab $arm rc=$?"
done
grep -E "floor|total" "$OUT/ab.log" | head
PYTHONUNBUFFERED=1 timeout "${BENCH_TIMEOUT:-240}" python3 bench/paired/paired_bench.py \
  --lib "$B/lib/libfusion_rt.so" --out "$OUT" --budget "${BUDGET:-120}" > "$OUT/bench.log" 2>&1
echo "bench rc=$?"
sed -n '/^Machine:/,$p' "$OUT/bench.log" | tail -30
