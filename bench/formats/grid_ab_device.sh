#!/usr/bin/env bash
# grid_ab_device.sh - one device call (repository root): the A/B of the
# group stream kernels' grid (tuning knob FUSION_RT_CUDA_STREAM_GRID,
# runtime/common/tuning.def: auto | persistent | cover). The format GPU
# tests (bit-exact against the CPU backend) under auto (full) and under
# cover (full: every stream kernel at benchmark sizes on a covering grid)
# and persistent (--quick); the launch-shape probe's runtime rows
# (bench/formats/cast_variants.cu) under auto and persistent; the FP8 and
# FP4 stream benchmarks, fusion_rt arms only, under persistent and cover.
# Expects .devbin/libfusion_rt.so.xz, .devbin/fusion_rt_formats_gpu_tests,
# .devbin/cast_variants, .whl/torchao*.whl. Writes $OUT/grid_*.
cd "$(dirname "$0")/../.." || exit 2
export OUT=${OUT:-$PWD/formats-out}
mkdir -p "$OUT"
python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
  .devbin/libfusion_rt.so.xz .devbin/libfusion_rt.so || exit 3
. bench/mxfp8/device_env.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/env.txt"
rc=0
for g in ${GRIDS_TEST:-auto:full cover:full persistent:--quick}; do
  k=${g%%:*}; q=${g#*:}; [ "$q" = full ] && q=""
  echo "=== format GPU tests, stream grid $k ${q}"
  s=$SECONDS
  FUSION_RT_CUDA_STREAM_GRID=$k timeout ${TEST_T:-200} .devbin/fusion_rt_formats_gpu_tests $q \
    > "$OUT/grid_tests_$k.log" 2>&1
  r=$?; grep -E "^FAIL" "$OUT/grid_tests_$k.log" | head -10; tail -n 1 "$OUT/grid_tests_$k.log"
  echo "rc=$r ($((SECONDS - s)) s)"; [ $r -eq 0 ] || rc=1
done
for shape in ${SHAPES:-16384x16384 4096x7168}; do
  for k in auto persistent; do
    echo "=== cast_variants $shape, stream grid $k" | tee -a "$OUT/grid_cast_$k.txt"
    FUSION_RT_CUDA_STREAM_GRID=$k timeout 60 .devbin/cast_variants ${shape/x/ } 21 2>&1 \
      | grep -E "fusion_rt|memcpy|TE's shape" | tee -a "$OUT/grid_cast_$k.txt"
  done
done
use_torchao_wheel
export FUSION_RT_LIBRARY=$PWD/.devbin/libfusion_rt.so
export PYTHONPATH=$PWD/python:$PWD/bench/formats${PYTHONPATH:+:$PYTHONPATH}
for k in persistent cover auto; do
  echo "=== benchmarks (fusion_rt arms), stream grid $k"
  FUSION_RT_CUDA_STREAM_GRID=$k timeout ${BENCH_T:-100} python3 bench/formats/fp8_block_bench.py \
    --no-peers --only fp8_block_1x128_mul,swiglu_fp8_block_1x128 \
    --csv "$OUT/grid_block_$k.csv" 2>&1 | grep -v "^#" | tail -8
  FUSION_RT_CUDA_STREAM_GRID=$k timeout ${BENCH_T:-100} python3 bench/formats/formats_bench.py \
    --no-peers --only fp8_delayed_rowwise,fp8_current_rowwise,swiglu_fp8_delayed,nvfp4_rowwise,swiglu_nvfp4_rowwise \
    --csv "$OUT/grid_formats_$k.csv" 2>&1 | grep -v "^#" | tail -12
done
echo "GRID A/B: $([ $rc -eq 0 ] && echo tests PASS || echo tests FAIL)"
