#!/usr/bin/env bash
# cast_ab_device.sh - one device call (repository root): the FP8 per-tensor
# stream passes of two runtime builds side by side, then the tests and the
# TransformerEngine comparison of the new one. Expects
#   .devbin/libfusion_rt.so.xz       the build under test (xz: the carry limit)
#   .devbin/old/libfusion_rt.so.xz   the build before the change
#   .devbin/cast_variants            bench/formats/build_cast_variants.sh
#   .devbin/fusion_rt_*_gpu_tests, .devbin/corpus_grouped, .te/ (te_device.sh)
# Writes $OUT/cast_{new,old}.txt, the test logs and te_formats.csv.
cd "$(dirname "$0")/../.." || exit 2
export OUT=${OUT:-$PWD/formats-out}
mkdir -p "$OUT" /tmp/old
unxz() { python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" "$1" "$2"; }
unxz .devbin/libfusion_rt.so.xz .devbin/libfusion_rt.so || exit 3
unxz .devbin/old/libfusion_rt.so.xz /tmp/old/libfusion_rt.so || exit 3
cp .devbin/cast_variants /tmp/old/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
. bench/mxfp8/device_env.sh
SHAPES=${SHAPES:-"16384x16384 4096x7168"}
for shape in $SHAPES; do
  shape=${shape/x/ }
  for v in new old; do
    d=$PWD/.devbin; [ $v = old ] && d=/tmp/old
    echo "=== cast_variants $v $shape" | tee -a "$OUT/cast_$v.txt"
    LD_LIBRARY_PATH=$d:$LD_LIBRARY_PATH timeout 60 $d/cast_variants $shape 21 2>&1 | tee -a "$OUT/cast_$v.txt"
  done
done
echo "=== format GPU tests"
timeout 240 .devbin/fusion_rt_formats_gpu_tests ${FQUICK:+--quick} > "$OUT/formats_gpu.log" 2>&1
echo "rc=$?"; grep -E "^FAIL|checks" "$OUT/formats_gpu.log" | head -10
echo "=== paired GPU tests"
timeout 200 .devbin/fusion_rt_paired_gpu_tests > "$OUT/paired_gpu.log" 2>&1
echo "rc=$?"; grep -E "^FAIL|checks" "$OUT/paired_gpu.log" | head -10; grep -c head-grouped "$OUT/paired_gpu.log"
echo "=== corpus (grouped)"
timeout 100 python3 tools/frontend-corpus/device_corpus.py run .devbin/corpus_grouped 2>&1 | tail -5
[ "${TE:-1}" = 1 ] || exit 0
TESTS=0 PAIRED=0 CORPUS=0 T2=${T2:-1} bash bench/formats/te_device.sh 2>&1 | grep -v "^  " | tail -40
