#!/usr/bin/env bash
# stream_variants.sh - one device call comparing the rowwise stream-kernel
# variants (FUSION_RT_CUDA_ROW_STREAM=0|4p|8p|8|16; 0 = the v2 tile kernels)
# on the rowwise and SwiGLU rowwise shapes, with the bit-exact GPU tests of
# every variant and (if ncu works) a short profile of the old and new
# rowwise kernels at 16384^2. Expects .devbin/ as device_run.sh does.
set -o pipefail
. "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
{
  echo "== tests default (full)"; $B/fusion_rt_gpu_tests | grep -E "^FAIL|cases|PASSED|FAILED"
  for v in ${VARIANTS:-0 4p 8p 8}; do
    echo "== tests ROW_STREAM=$v (quick)"
    FUSION_RT_CUDA_ROW_STREAM=$v $B/fusion_rt_gpu_tests --quick | grep -E "^FAIL|cases|PASSED|FAILED"
  done
} 2>&1 | tee "$OUT/variant_tests.log"
for v in ${VARIANTS:-0 4p 8p 8}; do
  FUSION_RT_CUDA_ROW_STREAM=$v timeout 40 $B/fusion_rt_mxfp8_bench \
    --only mxfp8_rowwise,swiglu_mxfp8_rowwise 2>/dev/null | sed "s/^fusion_rt,/rs$v,/" \
    | tee -a "$OUT/variants.csv"
done
if command -v ncu >/dev/null; then
  for v in ${NCU_VARIANTS-8}; do
    FUSION_RT_CUDA_ROW_STREAM=$v timeout 50 ncu --clock-control none -k regex:'row' -c 1 \
      --section SpeedOfLight --section Occupancy --section WarpStateStats \
      --section MemoryWorkloadAnalysis --section LaunchStats \
      --section InstructionStats --section ComputeWorkloadAnalysis \
      $B/fusion_rt_mxfp8_bench --only mxfp8_rowwise > "$OUT/ncu_row_$v.txt" 2>&1
    grep -E "Throughput|Duration|Occupancy|Registers|Warp Cycles|Eligible|Issued|Executed Ipc|Busy|Bandwidth|Hit Rate" "$OUT/ncu_row_$v.txt" | head -40
  done
fi
echo "== summary (us per call)"
python3 - "$OUT/variants.csv" <<'PY'
import csv, sys, collections, os
t = collections.defaultdict(dict)
for r in csv.reader(open(sys.argv[1])):
    if len(r) < 8 or r[0] in ("arm", "copy"): continue
    t[(r[1], r[2])][r[0]] = float(r[6])
arms = ["rs" + a for a in os.environ.get("VARIANTS", "0 4p 8p 8").split()]
print("kernel shape " + " ".join(arms))
for k, v in t.items():
    print(k[0], k[1], " ".join(f"{v.get(a, float('nan')):.1f}" for a in arms))
PY
