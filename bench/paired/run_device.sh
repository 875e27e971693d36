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
mkdir -p "$OUT"
CUBLAS_DIR=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null || true)
export LD_LIBRARY_PATH=$PWD/$B/lib:/usr/local/cuda/lib64:${CUBLAS_DIR}:${LD_LIBRARY_PATH:-}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
  ldd "$B/lib/libfusion_rt.so" | grep -E "cublas|not found"
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
timeout 90 "$B/cuda/fusion_rt_paired_gpu_tests" > "$OUT/gpu_test.log" 2>&1
echo "gpu tests rc=$?" | tee -a "$OUT/gpu_test.log"
grep -E "^FAIL|worst|checks" "$OUT/gpu_test.log" | head -30
# The same tests with programmatic dependent launch on.
# (Appended to gpu_test.log: the device tool brings back at most 8 files.)
echo "=== FUSION_RT_PAIRED_PDL=1 ===" >> "$OUT/gpu_test.log"
FUSION_RT_PAIRED_PDL=1 timeout 90 "$B/cuda/fusion_rt_paired_gpu_tests" > "$OUT/gpu_test_pdl.log" 2>&1
echo "gpu tests (FUSION_RT_PAIRED_PDL=1) rc=$?" | tee -a "$OUT/gpu_test_pdl.log"
grep -E "^FAIL|worst|checks" "$OUT/gpu_test_pdl.log" | head -10
cat "$OUT/gpu_test_pdl.log" >> "$OUT/gpu_test.log" && rm "$OUT/gpu_test_pdl.log"
PYTHONUNBUFFERED=1 timeout "${BENCH_TIMEOUT:-200}" python3 bench/paired/paired_bench.py \
  --lib "$B/lib/libfusion_rt.so" --out "$OUT" --budget "${BUDGET:-150}" ${BENCH_ARGS:-} \
  > "$OUT/bench.log" 2>&1
echo "bench rc=$?"
grep -E "device:|graph-launched|budget|failed|Error|error" "$OUT/bench.log" | head -20
grep -E "^K=|sweep total|^  K=.*PDL|chain" "$OUT/bench.log"
sed -n '/^Machine:/,$p' "$OUT/bench.log" | tail -30
