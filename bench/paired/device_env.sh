# device_env.sh - sourced by the device scripts of this folder (run_device.sh,
# ab.sh) with B (the runtime build tree) set: creates $OUT, sets a library
# path that finds B's libfusion_rt and the cuBLAS it links (toolkit or the
# nvidia-cublas wheel beside torch), and defines paired_gpu_tests, which runs
# the paired GPU tests by default and with FUSION_RT_PAIRED_PDL=1 into
# $OUT/gpu_test.log (one file: the device tool brings back at most 8).
mkdir -p "$OUT"
CUBLAS_DIR=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null || true)
export LD_LIBRARY_PATH=$PWD/$B/lib:/usr/local/cuda/lib64:${CUBLAS_DIR}:${LD_LIBRARY_PATH:-}

paired_gpu_tests() {
  timeout 90 "$B/cuda/fusion_rt_paired_gpu_tests" > "$OUT/gpu_test.log" 2>&1
  echo "gpu tests rc=$?" | tee -a "$OUT/gpu_test.log"
  FUSION_RT_PAIRED_PDL=1 timeout 90 "$B/cuda/fusion_rt_paired_gpu_tests" \
    > "$OUT/gpu_test_pdl.log" 2>&1
  echo "gpu tests (FUSION_RT_PAIRED_PDL=1) rc=$?" | tee -a "$OUT/gpu_test_pdl.log"
  grep -E "^FAIL|worst|checks" "$OUT/gpu_test.log" "$OUT/gpu_test_pdl.log" | head -30
  echo "=== FUSION_RT_PAIRED_PDL=1 ===" >> "$OUT/gpu_test.log"
  cat "$OUT/gpu_test_pdl.log" >> "$OUT/gpu_test.log" && rm "$OUT/gpu_test_pdl.log"
}
