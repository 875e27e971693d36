#!/usr/bin/env bash
# device_run.sh - the fusion_rt PyTorch package on the GPU machine, in one
# command from the repository root: the GPU tests (python/tests/gpu_tests.py:
# CUDA op = direct C-ABI call on device pointers = CPU backend, unsupported
# formats, side stream, CUDA-graph capture, torch.compile(fullgraph=True)),
# the CPU tests (python/tests/test_*_cpu.py) on that machine's torch, and the
# binding-cost benchmark (bench/pytorch/binding_bench.py). No pip, no
# network: the package is used from the source tree (PYTHONPATH=python).
#
# Expects .devbin/libfusion_rt.so (the runtime built for sm_90a, README of
# bench/mxfp8), optionally .devbin/fusion_rt_mxfp8_bench (adds the C++ arm
# to the benchmark) and .whl/torchao*.whl (the torchao tests run).
# Environment: OUT (default ./pytorch-out), QUICK=1 (fewer cases and sizes).
# Prints PASS / FAIL per test and a last line "DEVICE RUN: PASS|FAIL";
# exits non-zero on any failure.
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
export OUT=${OUT:-$PWD/pytorch-out}
# $OUT (created), B=.devbin, LD_LIBRARY_PATH (libfusion_rt and its cuBLAS)
. bench/mxfp8/device_env.sh
if [ ! -f "$B/libfusion_rt.so" ]; then
  echo "FAIL: $B/libfusion_rt.so is missing"
  echo "DEVICE RUN: FAIL"
  exit 2
fi
if ls .whl/torchao*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/torchao*.whl && export PYTHONPATH=/tmp/site
fi
export FUSION_RT_LIBRARY=$PWD/$B/libfusion_rt.so
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
Q=""
[ "${QUICK:-0}" = 1 ] && Q="--quick"
rc=0
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  python3 -c "import torchao; print('torchao', torchao.__version__)" 2>/dev/null || echo "torchao: not installed"
  git log -1 --format='commit %h %s' 2>/dev/null
} 2>&1 | tee "$OUT/env.txt"

echo "=== GPU tests"
timeout 330 python3 python/tests/gpu_tests.py $Q 2>&1 | tee "$OUT/gpu_tests.log"
r=$?; echo "gpu_tests.py exit $r"; [ $r -eq 0 ] || rc=1

echo "=== CPU tests (this machine's torch)"
timeout 240 python3 -m unittest discover -v -s python/tests -p 'test_*_cpu.py' \
  > "$OUT/cpu_tests.log" 2>&1
r=$?
grep -E "\.\.\. (ok|FAIL|ERROR|skipped)" "$OUT/cpu_tests.log" | sed -E 's/^(.*) \.\.\. ok$/PASS \1/; s/^(.*) \.\.\. (FAIL|ERROR)$/FAIL \1/; s/^(.*) \.\.\. skipped (.*)$/SKIP \1 \2/'
tail -n 3 "$OUT/cpu_tests.log"; echo "CPU tests exit $r"; [ $r -eq 0 ] || rc=1

echo "=== binding cost"
CXX=""
[ -x "$B/fusion_rt_mxfp8_bench" ] && CXX="--cxx-bench $B/fusion_rt_mxfp8_bench"
timeout 300 python3 bench/pytorch/binding_bench.py --out "$OUT" $Q $CXX 2>&1 | tee "$OUT/bench.log"
r=$?; echo "binding_bench.py exit $r"; [ $r -eq 0 ] || rc=1

echo "DEVICE RUN: $([ $rc -eq 0 ] && echo PASS || echo FAIL)"
exit $rc
