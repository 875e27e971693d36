#!/usr/bin/env bash
# lib_ab_device.sh - an A/B of two runtime libraries built from trees that
# differ in one kernel choice (a form not worth a tuning knob until it has
# won), in one device call from the repository root, fusion_rt only
# (--no-peers), the arms alternated A B A B so that drift shows:
#   A = .devbin/$A_DIR/libfusion_rt.so.xz (default base),
#   B = .devbin/$B_DIR/libfusion_rt.so.xz (default u2),
# each unpacked beside its .xz. First the format GPU tests --quick on B
# (bit-exact against the CPU backend). ONLY_BLOCK / ONLY_FORMATS: the
# --only lists of fp8_block_bench.py / formats_bench.py (default the FP8
# SwiGLU arms). Writes $OUT/ab_{A,B}{1,2}_{block,formats}.csv.
# The A/B it was written for (run 15, H100, 2026-12-07: U 2 kept out, docs/benchmarks/fp8_block.md): the
# FP8 SwiGLU stream kernel with 2 x 2 groups a step. B is built from a tree
# where launch_typed (runtime/cuda/fp8_block.cu) launches
# gstream::launch<2>(fp8_block_swiglu_kernel<T, E4M3, PROPAGATE, 2, M>, ...)
# instead of <1>; `ninja -C .devbuild fusion_rt`, then the stripped library
# xz-compressed into .devbin/u2/ and the baseline's into .devbin/base/.
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
export OUT=${OUT:-$PWD/formats-out}
. bench/mxfp8/device_env.sh
A_DIR=${A_DIR:-base} B_DIR=${B_DIR:-u2}
for d in $A_DIR $B_DIR; do
  python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
    .devbin/$d/libfusion_rt.so.xz .devbin/$d/libfusion_rt.so || exit 3
done
echo "=== format GPU tests --quick ($B_DIR)"
FUSION_RT_LIBRARY=$PWD/.devbin/$B_DIR/libfusion_rt.so LD_LIBRARY_PATH=$PWD/.devbin/$B_DIR:$LD_LIBRARY_PATH \
  timeout ${TEST_T:-150} .devbin/fusion_rt_formats_gpu_tests --quick > "$OUT/ab_tests_$B_DIR.log" 2>&1
echo "rc=$?"; grep -E "^FAIL" "$OUT/ab_tests_$B_DIR.log" | head; tail -n 1 "$OUT/ab_tests_$B_DIR.log"
export PYTHONPATH=$PWD/python:$PWD/bench/formats${PYTHONPATH:+:$PYTHONPATH}
ONLY_BLOCK=${ONLY_BLOCK:-swiglu_fp8_block_1x128,swiglu_fp8_block_1x128_mul}
ONLY_FORMATS=${ONLY_FORMATS:-swiglu_fp8_delayed}
for round in 1 2; do
  for d in $A_DIR $B_DIR; do
    echo "=== $d (round $round)"
    export FUSION_RT_LIBRARY=$PWD/.devbin/$d/libfusion_rt.so
    timeout ${BENCH_T:-100} python3 bench/formats/fp8_block_bench.py --no-peers --only "$ONLY_BLOCK" \
      --csv "$OUT/ab_${d}${round}_block.csv" 2>&1 | tail -12
    timeout ${BENCH_T:-100} python3 bench/formats/formats_bench.py --no-peers --only "$ONLY_FORMATS" \
      --csv "$OUT/ab_${d}${round}_formats.csv" 2>&1 | tail -12
  done
done
