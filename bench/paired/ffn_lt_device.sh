#!/usr/bin/env bash
# One device call for the prefill FFN front on cuBLASLt: the paired GPU tests
# in both PDL modes (the quantizing front on the blas path, biased, gate-bias
# only, and bias-free with FUSION_RT_PAIRED_LT=1), compute-sanitizer memcheck
# of the blas path's cases, then paired_bench.py --ffn-quant at prefill
# sizes with the ours-lt arm beside ours and the peers (one process).
# Expects the sm_90a runtime and tests in .devbin (with lib and cuda links to
# itself). Writes $OUT/{gpu_test.log,memcheck.log,bench.log,csv}.
set -u
B=.devbin
source bench/paired/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== paired GPU tests"
paired_gpu_tests
grep -E "FAIL" "$OUT/gpu_test.log" | head -20
echo "== compute-sanitizer memcheck, blas path"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$B/cuda/fusion_rt_paired_gpu_tests" --paths=blas > "$OUT/memcheck.log" 2>&1
echo "memcheck rc=$?"; tail -4 "$OUT/memcheck.log"
echo "== benchmark (bias-free, ours-lt beside ours)"
timeout "${BENCH_TIMEOUT:-300}" python3 bench/paired/paired_bench.py --lib $B/libfusion_rt.so \
  --out "$OUT" --budget "${BENCH_BUDGET:-200}" --ffn-quant --ffn-ns "${FFN_NS:-128,2048,8192}" \
  > "$OUT/bench.log" 2>&1
echo "bench rc=$?"; tail -12 "$OUT/bench.log"
