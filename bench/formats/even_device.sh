#!/usr/bin/env bash
# even_device.sh - one device call for torchao's EVEN scale rounding
# (FUSION_RT_SCALE_EVEN) and the MXFP4 packed conversion's memory check:
#  1. fusion_rt_formats_gpu_tests (MXFP4 sweep with RCEIL / FLOOR / EVEN,
#     every format against the CPU backend) and fusion_rt_gpu_tests (the
#     MXFP8 / fused-activation bit-exact set, EVEN cases appended);
#  2. compute-sanitizer memcheck over fusion_rt_formats_gpu_tests --quick
#     (the packed 16-bit MXFP4 kernel of fp4_stream.cu included, knob on);
#  3. the EVEN corpus programs (and $CORPUS_EXTRA) AOT-built by
#     tools/frontend-corpus/device_corpus.py into .devbin/corpus, run on
#     the CPU and the CUDA backend: GPU bytes = CPU bytes, compared with
#     torch eager.
# Expects .devbin/ (libfusion_rt.so and the two test binaries for sm_90a,
# .devbin/corpus from `device_corpus.py build`). Logs under $OUT.
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
export OUT=${OUT:-$PWD/even-out}
. bench/mxfp8/device_env.sh
rc=0
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/env.txt"
for t in fusion_rt_formats_gpu_tests fusion_rt_gpu_tests; do
  echo "=== $t"
  timeout ${TEST_TIMEOUT:-240} "$B/$t" > "$OUT/$t.log" 2>&1
  r=$?; grep -aE "^FAIL" "$OUT/$t.log" | head -20; tail -n 2 "$OUT/$t.log"
  echo "$t rc=$r"; [ $r -eq 0 ] || rc=1
done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
echo "=== compute-sanitizer memcheck, fusion_rt_formats_gpu_tests --quick"
timeout ${SAN_TIMEOUT:-240} "$CS" --tool memcheck --error-exitcode 9 \
  "$B/fusion_rt_formats_gpu_tests" --quick > "$OUT/sanitizer_formats.log" 2>&1
r=$?; echo "memcheck rc=$r; $(grep -a 'ERROR SUMMARY' "$OUT/sanitizer_formats.log" | tail -1)"
tail -n 2 "$OUT/sanitizer_formats.log"; [ $r -eq 0 ] || rc=1
if [ -d "$B/corpus" ]; then
  cp "$B/libfusion_rt.so" "$B/corpus/"
  echo "=== device corpus"
  timeout ${CORPUS_TIMEOUT:-200} python3 tools/frontend-corpus/device_corpus.py run "$B/corpus" \
    > "$OUT/device_corpus.log" 2>&1
  r=$?; tail -n 12 "$OUT/device_corpus.log"; echo "device corpus rc=$r"; [ $r -eq 0 ] || rc=1
fi
echo "EVEN DEVICE: $([ $rc -eq 0 ] && echo PASS || echo FAIL)"
exit $rc
