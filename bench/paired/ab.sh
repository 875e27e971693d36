#!/usr/bin/env bash
# A/B of runtime builds on the H200 (one device call): the GPU tests of the
# build tree B (default and FUSION_RT_PAIRED_PDL=1), then
# `paired_bench.py --ab-ours` for every labelled library, in the order given
# and then reversed (ours only, N <= 16 of every shape, weights from HBM and
# L2-resident; rows in paired_ab.csv), then bench/paired/floor_micro (when
# built into $MICRO) and, with NCU=1, ncu of the gemv kernel at (2048, 32)
# N = 1 for each library.
# Usage: OUT=dir bash bench/paired/ab.sh BUILD_B LABEL=LIB [LABEL=LIB ...]
set -uo pipefail
B=${1:?build dir B}
shift
OUT=${OUT:-/tmp/paired-ab}
source "$(dirname "$0")/device_env.sh"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > "$OUT/env.txt"
paired_gpu_tests
# LIB may be xz-compressed (NAME.so.xz: unpacked here, so that several
# builds fit in one device call's carry).
ARMS=()
for arm in "$@"; do
  lib=${arm#*=}
  if [[ $lib == *.xz ]]; then
    mkdir -p /tmp/ab-libs
    xz -dc "$lib" > "/tmp/ab-libs/${arm%%=*}.so" && lib=/tmp/ab-libs/${arm%%=*}.so
  fi
  ARMS+=("${arm%%=*}=$lib")
done
REV=()
for ((i = ${#ARMS[@]} - 1; i >= 0; i--)); do REV+=("${ARMS[i]}"); done
for arm in "${ARMS[@]}" "${REV[@]}"; do
  timeout 150 python3 bench/paired/paired_bench.py --lib "${arm#*=}" --out "$OUT" \
    --ab-ours "${arm%%=*}" 2>&1 | tee -a "$OUT/ab.log" | grep -E "N=1 |floor|Error|error"
done
if [ -n "${MICRO:-}" ] && [ -x "$MICRO" ]; then
  timeout 120 "$MICRO" | tee "$OUT/floor_micro.txt"
fi
if [ "${NCU:-0}" = 1 ]; then
  for arm in "${ARMS[@]}"; do
    lab=${arm%%=*}
    timeout 120 ncu --kernel-name regex:paired_gemv --launch-skip 2 --launch-count 1 \
      --cache-control none --clock-control none --section WarpStateStats \
      --section SourceCounters --section SpeedOfLight \
      --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
      -o "$OUT/ncu_$lab" \
      python3 bench/paired/paired_bench.py --lib "${arm#*=}" --out "$OUT" \
      --ncu-point 2048,32,1 > "$OUT/ncu_$lab.log" 2>&1
    echo "ncu $lab rc=$?"
    ncu -i "$OUT/ncu_$lab.ncu-rep" --page details --print-details all > "$OUT/ncu_$lab.txt" 2>&1
    rm -f "$OUT/ncu_$lab.ncu-rep" "$OUT/ncu_$lab.log"
    grep -E "Duration|issue_stalled.*ratio" "$OUT/ncu_$lab.txt" | sort -k3 -n -r | head -8
  done
fi
