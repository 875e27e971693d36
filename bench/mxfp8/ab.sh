#!/usr/bin/env bash
# ab.sh - one short device call comparing arms of our kernels, each arm an
# environment (ARMS="name:ENV=V,ENV=V name2:..."): the bit-exact quick GPU
# tests of every arm, the benchmark rows matching ONLY (fusion_rt_mxfp8_bench
# --only) REPS times per arm, and (if ncu works) a profile of the first
# kernel matching NCU_REGEX in the rows of NCU_ONLY for each arm named in
# NCU_ARMS. Files under $OUT: ${TAG}_tests.log ${TAG}.csv ncu_${TAG}_<arm>.txt.
# Expects .devbin/ as device_run.sh does.
set -o pipefail
. "$(dirname "$0")/device_env.sh"
TAG=${TAG:-ab}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
{
  for a in $ARMS; do
    echo "== tests ${a%%:*} (${a#*:}, quick)"
    env $(echo "${a#*:}" | tr , ' ') $B/fusion_rt_gpu_tests --quick | grep -E "^FAIL|cases|PASSED|FAILED"
  done
} 2>&1 | tee "$OUT/${TAG}_tests.log"
for rep in $(seq 1 "${REPS:-2}"); do
  for a in $ARMS; do
    env $(echo "${a#*:}" | tr , ' ') timeout 60 $B/fusion_rt_mxfp8_bench --only "$ONLY" 2>/dev/null \
      | sed "s/^fusion_rt,/${a%%:*}$rep,/" | tee -a "$OUT/${TAG}.csv"
  done
done
if command -v ncu >/dev/null; then
  for a in $ARMS; do
    case " ${NCU_ARMS-} " in *" ${a%%:*} "*) ;; *) continue ;; esac
    env $(echo "${a#*:}" | tr , ' ') timeout 60 ncu --clock-control none -k "regex:$NCU_REGEX" -c 1 \
      --section SpeedOfLight --section Occupancy --section WarpStateStats \
      --section MemoryWorkloadAnalysis --section LaunchStats --section InstructionStats \
      --section ComputeWorkloadAnalysis --section SchedulerStats \
      $B/fusion_rt_mxfp8_bench --only "${NCU_ONLY:-$ONLY}" > "$OUT/ncu_${TAG}_${a%%:*}.txt" 2>&1
    echo "== ncu ${a%%:*}"
    grep -E "Throughput|Duration|Occupancy|Registers|Warp Cycles|Eligible|Issued|Executed Ipc|Executed Instructions|Busy|Bandwidth|No Eligible" "$OUT/ncu_${TAG}_${a%%:*}.txt" | head -40
  done
fi
echo "== summary (us per call, min of the repeats; all repeats in ${TAG}.csv)"
python3 - "$OUT/${TAG}.csv" <<'PY'
import csv, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
arms = []
for r in csv.reader(open(sys.argv[1])):
    if len(r) < 8 or r[0] in ("arm", "copy"): continue
    a = r[0].rstrip("0123456789")
    if a not in arms: arms.append(a)
    t[(r[1], r[2])][a].append(float(r[6]))
print("kernel shape " + " ".join(arms))
for k, v in t.items():
    print(k[0], k[1], " ".join(f"{min(v[a]) if v[a] else float('nan'):.1f}" for a in arms))
PY
