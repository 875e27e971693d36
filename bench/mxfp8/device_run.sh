#!/usr/bin/env bash
# device_run.sh - the one command run on the GPU machine (see README.md).
# Expects, in the repository root: .devbin/ (libfusion_rt.so,
# fusion_rt_gpu_tests, fusion_rt_mxfp8_bench built here for sm_90a) and .whl/
# (the torchao wheel). Writes everything under $OUT (or ./mxfp8-out).
# Extra arguments go to run_mxfp8_bench.py (e.g. --quick, --budget-s 300).
set -o pipefail
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 3
fi
# $OUT, B=.devbin, and the library path (libfusion_rt links cuBLAS).
. "$(dirname "$0")/device_env.sh"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu \
  --format=csv | tee "$OUT/nvsmi.txt"
ldd $B/fusion_rt_gpu_tests | grep -i "not found"
timeout ${PY_TIMEOUT:-540} python3 bench/mxfp8/run_mxfp8_bench.py --bin $B --out "$OUT" "$@" \
  2>&1 | tee "$OUT/run.log"
