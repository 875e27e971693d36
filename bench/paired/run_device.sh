#!/usr/bin/env bash
# One call on the H200 (the device tool's `run`): the paired projection GPU
# tests, then the benchmark with its peers, the selector measurement and the
# launch variants. Expects the runtime built (sm_90a) in $1 (default
# .paired-build, carried) and writes everything under $OUT:
#   env.txt gpu_test.log bench.log paired_bench.{csv,md,png}
#   paired_selector.csv paired_chain.csv (--variants: paired_variants.csv)
#   (BENCH_ARGS=--sweep: ours only, the gemv launch shapes, paired_sweep.csv)
# Environment: BUDGET (s, torch.compile arms start only before it),
# BENCH_TIMEOUT (s, hard limit of the benchmark).
set -uo pipefail
B=${1:-.paired-build}
OUT=${OUT:-/tmp/paired-out}
source "$(dirname "$0")/device_env.sh"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
  ldd "$B/lib/libfusion_rt.so" | grep -E "cublas|not found"
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
paired_gpu_tests
PYTHONUNBUFFERED=1 timeout "${BENCH_TIMEOUT:-200}" python3 bench/paired/paired_bench.py \
  --lib "$B/lib/libfusion_rt.so" --out "$OUT" --budget "${BUDGET:-150}" ${BENCH_ARGS:-} \
  > "$OUT/bench.log" 2>&1
echo "bench rc=$?"
grep -E "device:|graph-launched|budget|failed|Error|error" "$OUT/bench.log" | head -20
grep -E "^K=|sweep total|^  K=.*PDL|chain" "$OUT/bench.log"
sed -n '/^Machine:/,$p' "$OUT/bench.log" | tail -30
