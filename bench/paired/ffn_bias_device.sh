#!/usr/bin/env bash
# One device call for the biased FFN front (cuBLASLt bias epilogue in the
# prefill form): the paired GPU tests in both PDL modes, the 3-D dynamic
# corpus programs on the GPU (.devbin/corpus_3d, device_corpus.py build),
# then paired_bench.py --ffn-quant --ffn-bias (peers in the same call).
# Expects the sm_90a runtime and tests in .devbin (with lib and cuda links
# to itself). Writes $OUT/{gpu_test.log,corpus_3d.log,bench.log,csv}.
set -u
B=.devbin
source bench/paired/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== paired GPU tests"
paired_gpu_tests
echo "== 3-D dynamic corpus on the GPU"
cp .devbin/libfusion_rt.so .devbin/corpus_3d/ 2>/dev/null
timeout 120 python3 tools/frontend-corpus/device_corpus.py run .devbin/corpus_3d > $OUT/corpus_3d.log 2>&1; echo "corpus rc=$?"; tail -8 $OUT/corpus_3d.log
echo "== benchmark"
timeout 330 python3 bench/paired/paired_bench.py --lib .devbin/libfusion_rt.so --out $OUT --budget 150 --ffn-quant --ffn-bias > $OUT/bench.log 2>&1; echo "bench rc=$?"; tail -30 $OUT/bench.log
