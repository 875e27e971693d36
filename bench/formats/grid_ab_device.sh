#!/usr/bin/env bash
# grid_ab_device.sh - one device call (repository root): the A/B of the
# group stream kernels' grid (tuning knob FUSION_RT_CUDA_STREAM_GRID,
# runtime/common/tuning.def: auto | persistent | cover), most telling
# first (the call may be cut short): the launch-shape probe's runtime rows
# (bench/formats/cast_variants.cu) at 16384^2 under auto and persistent;
# the format GPU tests (bit-exact against the CPU backend; GRIDS_TEST,
# default auto and cover --quick; the benchmarks check ours at their sizes
# too); the FP8 and FP4 stream benchmarks under auto with the peers
# (torch.compile of the reference functions; with AUTOTUNE=1 also
# max-autotune-no-cudagraphs; TransformerEngine where .te/ came, as
# te_device.sh; PEERS=0: none), then under persistent and cover (fusion_rt
# arms). Expects .devbin/libfusion_rt.so.xz,
# .devbin/fusion_rt_formats_gpu_tests, .devbin/cast_variants,
# .whl/torchao*.whl, optionally .te/. Writes $OUT/grid_*.
cd "$(dirname "$0")/../.." || exit 2
export OUT=${OUT:-$PWD/formats-out}
mkdir -p "$OUT"
python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
  .devbin/libfusion_rt.so.xz .devbin/libfusion_rt.so || exit 3
. bench/mxfp8/device_env.sh
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/env.txt"
for shape in ${SHAPES:-16384x16384}; do
  for k in auto persistent; do
    echo "=== cast_variants $shape, stream grid $k" | tee -a "$OUT/grid_cast_$k.txt"
    FUSION_RT_CUDA_STREAM_GRID=$k timeout 60 .devbin/cast_variants ${shape/x/ } 21 2>&1 \
      | grep -E "fusion_rt|memcpy|TE's shape" | tee -a "$OUT/grid_cast_$k.txt"
  done
done
rc=0
for g in ${GRIDS_TEST:-auto:--quick cover:--quick}; do
  k=${g%%:*}; q=${g#*:}; [ "$q" = full ] && q=""
  echo "=== format GPU tests, stream grid $k ${q}"
  s=$SECONDS
  FUSION_RT_CUDA_STREAM_GRID=$k timeout ${TEST_T:-200} .devbin/fusion_rt_formats_gpu_tests $q \
    > "$OUT/grid_tests_$k.log" 2>&1
  r=$?; grep -E "^FAIL" "$OUT/grid_tests_$k.log" | head -10; tail -n 1 "$OUT/grid_tests_$k.log"
  echo "rc=$r ($((SECONDS - s)) s)"; [ $r -eq 0 ] || rc=1
done
use_torchao_wheel
export FUSION_RT_LIBRARY=$PWD/.devbin/libfusion_rt.so
export PYTHONPATH=$PWD/python:$PWD/bench/formats${PYTHONPATH:+:$PYTHONPATH}
BLOCK=fp8_block_1x128_mul,swiglu_fp8_block_1x128,swiglu_fp8_block_1x128_mul
FORMATS=fp8_delayed_rowwise,fp8_current_rowwise,swiglu_fp8_delayed,nvfp4_rowwise,swiglu_nvfp4_rowwise
# The peers (torch.compile; max-autotune-no-cudagraphs with AUTOTUNE=1;
# TE where .te/ came and its smoke test runs) beside the default grid only.
PEER_ARGS="--no-autotune"; [ "${AUTOTUNE:-0}" = 1 ] && PEER_ARGS=""
if [ "${PEERS:-1}" = 1 ] && [ -f .te/libtransformer_engine.so.xz ]; then
  . bench/formats/te_env.sh
  te_env && te_smoke && PEER_ARGS="$PEER_ARGS $TE_ARG"
fi
for k in ${GRIDS_BENCH:-auto persistent cover}; do
  args="--no-peers" t=${BENCH_T:-100}
  [ $k = auto ] && [ "${PEERS:-1}" = 1 ] && args=$PEER_ARGS t=${PEER_T:-200}
  echo "=== benchmarks, stream grid $k ($args)"
  FUSION_RT_CUDA_STREAM_GRID=$k timeout $t python3 bench/formats/fp8_block_bench.py \
    $args --only $BLOCK --csv "$OUT/grid_block_$k.csv" 2>&1 | grep -v "triton_\|AUTOTUNE\|compile+time" | tail -40
  FUSION_RT_CUDA_STREAM_GRID=$k timeout $t python3 bench/formats/formats_bench.py \
    $args --only $FORMATS --csv "$OUT/grid_formats_$k.csv" 2>&1 | grep -v "triton_\|AUTOTUNE\|compile+time" | tail -50
done
echo "GRID A/B: $([ $rc -eq 0 ] && echo tests PASS || echo tests FAIL)"
