#!/usr/bin/env bash
# One device call for the decode FFN front in one kernel (the gemv path's
# quantizing epilogue, paired_gemv.cu quant_epilogue): the paired GPU tests
# (every path; on the gemv path the call must be one kernel where the plan
# has the quantizing form), then `paired_bench.py --ffn-quant` at the decode
# sizes (ours = one call, ours-epi = the same with FUSION_RT_PAIRED_QUANT_EPI=1,
# the one-kernel form; ours-2call = the pair into a bf16 value, then
# fusion_rt_quantize; cuBLAS + ours; eager; torch.compile default and
# max-autotune-no-cudagraphs). Expects the sm_90a runtime in .devbin.
# Environment: OUT, NS (default 1,2,4,8,16), BUDGET (s), BENCH_TIMEOUT (s),
# SAN=1 (compute-sanitizer memcheck and racecheck of the gemv path's tests).
set -uo pipefail
B=.devbin
OUT=${OUT:-/tmp/ffnd-out}
mkdir -p "$OUT"
CUBLAS_DIR=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null || true)
export LD_LIBRARY_PATH=$PWD/$B:/usr/local/cuda/lib64:${CUBLAS_DIR}:${LD_LIBRARY_PATH:-}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  git log -1 --format='commit %h %s' 2>/dev/null; } | tee "$OUT/env.txt"
timeout 200 "$B/fusion_rt_paired_gpu_tests" > "$OUT/gpu_test.log" 2>&1
echo "paired gpu tests rc=$?"
grep -E "^FAIL|worst|checks" "$OUT/gpu_test.log" | head -20
if [ "${SAN:-0}" = 1 ]; then
  for tool in memcheck racecheck; do
    timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 \
      "$B/fusion_rt_paired_gpu_tests" --quick --paths=gemv > "$OUT/san_$tool.log" 2>&1
    echo "compute-sanitizer $tool (gemv path) rc=$?"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|checks" "$OUT/san_$tool.log" | head -3
  done
fi
PYTHONUNBUFFERED=1 timeout "${BENCH_TIMEOUT:-330}" python3 bench/paired/paired_bench.py \
  --lib "$B/libfusion_rt.so" --out "$OUT" --budget "${BUDGET:-250}" --ffn-quant \
  --ffn-ns "${NS:-1,2,4,8,16}" > "$OUT/bench.log" 2>&1
echo "bench rc=$?"
grep -E "device:|ffnq|budget|Error|error" "$OUT/bench.log" | head -60
