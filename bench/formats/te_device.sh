#!/usr/bin/env bash
# te_device.sh - the FP8 benchmarks with TransformerEngine 2.20 as a peer, in
# one device call from the repository root. Expects, besides .devbin/ and
# .whl/ (bench/formats/device_run.sh):
#   .te/libtransformer_engine.so.xz  TE's library from the transformer-engine-cu13
#       2.20.2 wheel with the device code of every architecture but sm_90 zeroed
#       (bench/formats/te_strip.py; 343 MB -> 23 MB compressed), and
#   .te/libte_shim.so  (bench/formats/build_te_shim.sh).
# TE's other dependencies (cuDNN 9, NCCL, cuBLAS 13) come from the nvidia
# wheels beside the device's torch. Runs the format GPU tests, then
# formats_bench.py and fp8_block_bench.py on the FP8 kernels with TE's arms.
# Environment: OUT, AUTOTUNE=1 (also torch.compile max-autotune), TESTS=0 (skip
# the format GPU tests), PAIRED=1 (then the paired GPU tests), CORPUS=0 (skip
# the GPU run of the frontend corpus built in .devbin/corpus_bias), PARTS
# (default "formats block": which of the two benchmarks run; one of them
# alone where a call's 10 minutes cannot hold both with AUTOTUNE=1).
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
export OUT=${OUT:-$PWD/formats-out}
mkdir -p "$OUT"
. bench/formats/te_env.sh
te_env || exit 3
echo "=== TE library dependencies not found:"
ldd /tmp/te_lib/libtransformer_engine.so | grep "not found"
[ "${TESTS:-1}" = 1 ] && { NO_BENCH=1 NO_SAN=1 bash bench/formats/device_run.sh || true; }
. bench/mxfp8/device_env.sh
use_torchao_wheel
export FUSION_RT_LIBRARY=$PWD/.devbin/libfusion_rt.so
export PYTHONPATH=$PWD/python:$PWD/bench/formats${PYTHONPATH:+:$PYTHONPATH}
te_smoke
AT="--no-autotune"; [ "${AUTOTUNE:-0}" = 1 ] && AT=""
PARTS=${PARTS:-formats block}
if [[ " $PARTS " == *" formats "* ]]; then
echo "=== formats_bench (FP8 per tensor)"
timeout ${T1:-250} python3 bench/formats/formats_bench.py $AT $TE_ARG \
  --only fp8_delayed_rowwise,fp8_delayed_colT,fp8_delayed_both_T,fp8_current_rowwise,fp8_current_both_T,swiglu_fp8_delayed \
  --csv "$OUT/te_formats.csv" 2>&1 | tee "$OUT/te_formats.log"
echo "formats_bench exit $?"
fi
if [[ " $PARTS " == *" block "* ]]; then
echo "=== fp8_block_bench"
timeout ${T2:-250} python3 bench/formats/fp8_block_bench.py $AT $TE_ARG \
  --only fp8_block_1x128_mul,fp8_block_128x128_mul,swiglu_fp8_block_1x128,swiglu_fp8_block_1x128_mul \
  --csv "$OUT/te_fp8_block.csv" 2>&1 | tee "$OUT/te_fp8_block.log"
echo "fp8_block_bench exit $?"
fi
if [ -d .devbin/corpus_bias ] && [ "${CORPUS:-1}" = 1 ]; then
  echo "=== frontend corpus on the GPU (.devbin/corpus_bias)"
  LD_LIBRARY_PATH=$PWD/.devbin:$LD_LIBRARY_PATH timeout 120 \
    python3 tools/frontend-corpus/device_corpus.py run .devbin/corpus_bias 2>&1 | tail -15
fi
if [ "${PAIRED:-0}" = 1 ]; then
  echo "=== paired GPU tests"
  LD_LIBRARY_PATH=$PWD/.devbin:$LD_LIBRARY_PATH timeout 150 .devbin/fusion_rt_paired_gpu_tests \
    > "$OUT/paired_gpu_tests.log" 2>&1
  echo "paired gpu tests rc=$?"; grep -E "^FAIL|checks" "$OUT/paired_gpu_tests.log" | head -20
fi
