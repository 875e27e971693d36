#!/usr/bin/env bash
# One device call that decides the gated stream kernel's extended scope
# (tuning knob gated_stream, runtime/common/tuning.def; off by default until
# this has run): the MXFP8 GPU tests (their gated_stream = 1 cases: K % 256
# != 0, the clamped SwiGLU, interleaved gate / up, one and two chunks a
# step), compute-sanitizer memcheck on the quick set, the paired GPU tests,
# then GPT-OSS's MLP front (paired_bench.py --ffn-quant --ffn-oss, peers in
# the same call) with the knob off and on, and the Llama front's prefill
# sizes with it off and on (step 1 below 8192 chunks there too).
# Expects in .devbin the sm_90a libfusion_rt.so, fusion_rt_gpu_tests and
# fusion_rt_paired_gpu_tests (or their .xz). Writes $OUT/*.log, the CSVs.
set -u
B=.devbin
OUT=${OUT:-$PWD/gated-stream-out}
mkdir -p "$OUT"
for f in libfusion_rt.so fusion_rt_gpu_tests fusion_rt_paired_gpu_tests; do
  [ -f "$B/$f.xz" ] && xz -dkf "$B/$f.xz"
  chmod +x "$B/$f" 2>/dev/null
done
CUBLAS_DIR=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null || true)
export LD_LIBRARY_PATH=$PWD/$B:/usr/local/cuda/lib64:${CUBLAS_DIR}:${LD_LIBRARY_PATH:-}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/env.txt"
T0=$(date +%s)
el() { echo "($(( $(date +%s) - T0 )) s)"; }
timeout 90 $B/fusion_rt_gpu_tests > "$OUT/gpu_tests.log" 2>&1; echo "gpu_tests rc=$? $(el)"
grep -E "^FAIL|GPU TESTS" "$OUT/gpu_tests.log" | head -20
echo "gated_stream=1 cases ok: $(grep -cE '^ok .*\[FUSION_RT_CUDA_GATED_STREAM=1\]' $OUT/gpu_tests.log)"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 100 $CS --tool memcheck --error-exitcode 9 $B/fusion_rt_gpu_tests --quick > "$OUT/memcheck_mx.log" 2>&1
echo "memcheck rc=$? $(el) $(grep 'ERROR SUMMARY' $OUT/memcheck_mx.log | tail -1)"
timeout 100 $B/fusion_rt_paired_gpu_tests --quick > "$OUT/paired.log" 2>&1; echo "paired rc=$? $(el)"
grep -E "^FAIL|checks" "$OUT/paired.log" | head -8
for on in 0 1; do
  mkdir -p "$OUT/oss$on"
  FUSION_RT_CUDA_GATED_STREAM=$on PYTHONUNBUFFERED=1 timeout 120 python3 bench/paired/paired_bench.py \
    --lib $B/libfusion_rt.so --out "$OUT/oss$on" --budget 70 --ffn-quant --ffn-oss \
    --ffn-ns 1,16,128,2048 --ffn-kernels > "$OUT/bench_oss_$on.log" 2>&1
  echo "GPT-OSS front, gated_stream=$on rc=$? $(el)"; grep -E "^ffnq" "$OUT/bench_oss_$on.log" | cut -c1-500
done
for on in 0 1; do
  mkdir -p "$OUT/llama$on"
  FUSION_RT_CUDA_GATED_STREAM=$on PYTHONUNBUFFERED=1 timeout 100 python3 bench/paired/paired_bench.py \
    --lib $B/libfusion_rt.so --out "$OUT/llama$on" --budget 50 --ffn-quant --ffn-ns 128,2048 \
    > "$OUT/bench_llama_$on.log" 2>&1
  echo "Llama front, gated_stream=$on rc=$? $(el)"; grep -E "^ffnq" "$OUT/bench_llama_$on.log" | cut -c1-300
done
# The selector at decode-to-prefill sizes of the Llama front (every path
# forced beside the selector's), where time is left in the call.
if [ $(( $(date +%s) - T0 )) -lt 430 ]; then
  mkdir -p "$OUT/llama_paths"
  FUSION_RT_CUDA_GATED_STREAM=1 PYTHONUNBUFFERED=1 timeout 100 python3 bench/paired/paired_bench.py \
    --lib $B/libfusion_rt.so --out "$OUT/llama_paths" --budget 60 --ffn-quant \
    --ffn-shape 4096,14336 --ffn-ns 4,16,64 > "$OUT/bench_llama_paths.log" 2>&1
  echo "Llama front, paths forced rc=$? $(el)"; grep -E "^ffnq" "$OUT/bench_llama_paths.log" | cut -c1-700
fi
