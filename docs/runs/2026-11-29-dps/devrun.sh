set -o pipefail
mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/env.txt
date -u | tee -a $OUT/env.txt
CB=$(python3 -c "import nvidia.cublas as m; print(list(m.__path__)[0] + '/lib')" 2>/dev/null)
( cd .aotrun && export LD_LIBRARY_PATH=$PWD:/usr/local/cuda/lib64:$CB
  echo "== swiglu"; timeout 120 ./fusion-aot-swiglu
  echo "== gdn"; timeout 120 ./fusion-aot-gdn ) 2>&1 | tee $OUT/aot.log
export LD_LIBRARY_PATH=$PWD/.aotrun:/usr/local/cuda/lib64:$CB
timeout 150 .aotrun/fusion_rt_paired_gpu_tests > $OUT/paired_gpu_test.log 2>&1; echo "paired rc=$?" | tee -a $OUT/paired_gpu_test.log
grep -E "^FAIL|worst|checks|passed|failed" $OUT/paired_gpu_test.log | tail -8
timeout 200 .aotrun/fusion_rt_gpu_tests > $OUT/mxfp8_gpu_test.log 2>&1; echo "mxfp8 rc=$?" | tee -a $OUT/mxfp8_gpu_test.log
tail -4 $OUT/mxfp8_gpu_test.log
