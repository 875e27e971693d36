#!/usr/bin/env bash
# One device call for a change of the paired projection's numerics: the
# paired GPU tests (every path and accumulator rounding, with and without
# FUSION_RT_PAIRED_PDL=1) and the paired corpus programs (GDN gates, FFN
# fronts) AOT-compiled by device_corpus.py, each run on the CPU and the CUDA
# backend and compared with each other and with torch eager.
# Usage: OUT=dir bash bench/paired/corpus_device.sh BIN_DIR CORPUS_DIR
#   BIN_DIR: libfusion_rt.so (sm_90a) and fusion_rt_paired_gpu_tests;
#   CORPUS_DIR: device_corpus.py build output (libfusion_rt.so is linked in).
set -uo pipefail
BIN=${1:?dir with libfusion_rt.so and fusion_rt_paired_gpu_tests}
CORPUS=${2:?device_corpus.py build dir}
OUT=${OUT:-/tmp/paired-corpus}
mkdir -p "$OUT" "$BIN/cuda" "$BIN/lib"
# device_env.sh expects B/cuda/<tests> and B/lib/libfusion_rt.so.
ln -sf ../fusion_rt_paired_gpu_tests "$BIN/cuda/fusion_rt_paired_gpu_tests"
ln -sf ../libfusion_rt.so "$BIN/lib/libfusion_rt.so"
B=$BIN
source "$(dirname "$0")/device_env.sh"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > "$OUT/env.txt"
cat "$OUT/env.txt"
paired_gpu_tests
cp "$BIN/libfusion_rt.so" "$CORPUS/"
OUT=$OUT timeout 400 python3 tools/frontend-corpus/device_corpus.py run "$CORPUS" \
  > "$OUT/device_corpus.log" 2>&1
echo "device corpus rc=$?"
tail -20 "$OUT/device_corpus.log"
