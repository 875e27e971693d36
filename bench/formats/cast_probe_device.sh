#!/usr/bin/env bash
# cast_probe_device.sh - one device call (repository root; .devbin/ with
# libfusion_rt.so and cast_variants, .te/ as for te_device.sh): the launch
# shapes of the FP8 cast (bench/formats/cast_variants.cu) at 16384^2 and
# 4096x7168, then ncu of ours and TransformerEngine's FP8 casts at 16384^2
# (bench/formats/ncu_te.py). Writes $OUT/cast_variants.txt, $OUT/ncu_te.txt.
cd "$(dirname "$0")/../.." || exit 2
export OUT=${OUT:-$PWD/formats-out}
mkdir -p "$OUT"
. bench/mxfp8/device_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
echo "=== cast_variants"
for shape in "16384 16384" "4096 7168"; do
  timeout 60 .devbin/cast_variants $shape 21 2>&1 | tee -a "$OUT/cast_variants.txt"
done
[ "${NCU:-1}" = 1 ] || exit 0
. bench/formats/te_env.sh
te_env || exit 3
export FUSION_RT_LIBRARY=$PWD/.devbin/libfusion_rt.so
echo "=== ncu"
timeout ${NCU_T:-300} ncu --kernel-name regex:'fp8|cast|quantize|amax|block_scaled|scale' \
  --launch-skip 0 --launch-count 24 --section SpeedOfLight --section MemoryWorkloadAnalysis \
  --section LaunchStats --section Occupancy --section WarpStateStats \
  python3 bench/formats/ncu_te.py .te/libte_shim.so > "$OUT/ncu_te.txt" 2>&1
echo "ncu exit $?"
grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|Waves Per SM|Warp Cycles Per Issued|L2 Hit|Mem Busy|Max Bandwidth" "$OUT/ncu_te.txt" | head -200
