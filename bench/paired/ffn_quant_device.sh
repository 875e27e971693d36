#!/usr/bin/env bash
# One call on the H200 (the device tool's `run`) for the quantizing FFN
# front (fusion_rt_paired_projection_quantize): the paired GPU tests (every
# path, the quantizing_front checks included), then
# `paired_bench.py --ffn-quant` (ours one call / two calls / cuBLAS + ours'
# gated quantizer against eager and torch.compile default and
# max-autotune-no-cudagraphs). Expects the sm_90a runtime in $1 (default
# .devbin: libfusion_rt.so and fusion_rt_paired_gpu_tests, stripped, e.g.
# from `cmake -S runtime -B build-dev -DFUSION_RT_CUDA_ARCHS=90a`).
# Writes $OUT/{env.txt,gpu_test.log,bench.log,paired_ffn_quant.csv}.
# Environment: BUDGET (s: torch.compile arms start only before it),
# BENCH_TIMEOUT (s).
set -uo pipefail
B=${1:-.devbin}
OUT=${OUT:-/tmp/ffnq-out}
mkdir -p "$OUT"
CUBLAS_DIR=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null || true)
export LD_LIBRARY_PATH=$PWD/$B:/usr/local/cuda/lib64:${CUBLAS_DIR}:${LD_LIBRARY_PATH:-}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
  ldd "$B/libfusion_rt.so" | grep -E "cublas|not found"
  git log -1 --format='commit %H' 2>/dev/null
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
timeout 200 "$B/fusion_rt_paired_gpu_tests" > "$OUT/gpu_test.log" 2>&1
echo "paired gpu tests rc=$?"
grep -E "^FAIL|worst|checks" "$OUT/gpu_test.log" | head -20
PYTHONUNBUFFERED=1 timeout "${BENCH_TIMEOUT:-360}" python3 bench/paired/paired_bench.py \
  --lib "$B/libfusion_rt.so" --out "$OUT" --budget "${BUDGET:-300}" --ffn-quant \
  > "$OUT/bench.log" 2>&1
echo "bench rc=$?"
grep -E "device:|ffnq|budget|Error|error" "$OUT/bench.log" | head -40
