#!/usr/bin/env bash
# colt_variants.sh - one short device call for the colwise transposed and
# both-directions kernels: bit-exact quick GPU tests of each variant
# (FUSION_RT_CUDA_COL_T=0|s|sp|sph, FUSION_RT_CUDA_BOTH=0|c), the colwise
# transposed, both and both-transposed shapes of each, and (if ncu works)
# a short profile of the colT kernels at 16384^2 (NCU_VARIANTS, default
# "s"). Expects .devbin/ as device_run.sh does.
set -o pipefail
. "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
# arm name : environment
ARMS=${ARMS:-"prev:FUSION_RT_CUDA_COL_T=0,FUSION_RT_CUDA_BOTH=0 s:FUSION_RT_CUDA_COL_T=s,FUSION_RT_CUDA_BOTH=c sph:FUSION_RT_CUDA_COL_T=sph,FUSION_RT_CUDA_BOTH=c"}
{
  for a in $ARMS; do
    echo "== tests ${a%%:*} (${a#*:}, quick)"
    env $(echo "${a#*:}" | tr , ' ') $B/fusion_rt_gpu_tests --quick | grep -E "^FAIL|cases|PASSED|FAILED"
  done
} 2>&1 | tee "$OUT/colt_tests.log"
for rep in 1 2; do
  for a in $ARMS; do
    env $(echo "${a#*:}" | tr , ' ') timeout 60 $B/fusion_rt_mxfp8_bench \
      --only mxfp8_colwise_transposed,=mxfp8_both,mxfp8_both_transposed 2>/dev/null \
      | sed "s/^fusion_rt,/${a%%:*}$rep,/" | tee -a "$OUT/colt_variants.csv"
  done
done
if command -v ncu >/dev/null; then
  for v in ${NCU_VARIANTS-s}; do
    FUSION_RT_CUDA_COL_T=$v timeout 40 ncu --clock-control none -k regex:'colT' -c 1 \
      --section SpeedOfLight --section Occupancy --section WarpStateStats \
      --section MemoryWorkloadAnalysis --section LaunchStats \
      $B/fusion_rt_mxfp8_bench --only mxfp8_colwise_transposed > "$OUT/ncu_colT_$v.txt" 2>&1
    grep -E "Throughput|Duration|Occupancy|Registers|Warp Cycles|Eligible|Issued|Busy|Bandwidth|Hit Rate" "$OUT/ncu_colT_$v.txt" | head -30
  done
fi
echo "== summary (us per call)"
python3 - "$OUT/colt_variants.csv" <<'PY'
import csv, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
arms = []
for r in csv.reader(open(sys.argv[1])):
    if len(r) < 8 or r[0] in ("arm", "copy"): continue
    a = r[0][:-1]
    if a not in arms: arms.append(a)
    t[(r[1], r[2])][a].append(float(r[6]))
print("kernel shape " + " ".join(arms) + "   (min of the repeats; both repeats in the csv)")
for k, v in t.items():
    print(k[0], k[1], " ".join(f"{min(v[a]) if v[a] else float('nan'):.1f}" for a in arms))
PY
