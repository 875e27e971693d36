#!/usr/bin/env bash
# ncu_probe.sh - ncu of the format kernels on the device (from the repository
# root, .devbin/ and .whl/ as for device_run.sh): SpeedOfLight, occupancy and
# warp-state sections of amax_kernel, fp4_row_kernel and fp8_tensor_kernel
# under bench/formats/formats_bench.py --quick; writes $OUT/ncu.txt.
export OUT=${OUT:-$PWD/formats-out}
. bench/mxfp8/device_env.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/torchao*.whl
export PYTHONPATH=/tmp/site:$PWD/python FUSION_RT_LIBRARY=$PWD/.devbin/libfusion_rt.so
timeout 250 ncu --kernel-name regex:'fp4_row_kernel|fp8_tensor|amax_kernel' --launch-count 3 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis python3 bench/formats/formats_bench.py --quick --no-peers --only mxfp4_rowwise,fp8_delayed_rowwise,nvfp4_rowwise > $OUT/ncu.txt 2>&1
grep -E "fp4_row|fp8_tensor|amax_kernel|Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Compute \(SM\)|Stall|Warp Cycles Per Issued|Block Limit|Grid Size|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|One or More" $OUT/ncu.txt | head -120
