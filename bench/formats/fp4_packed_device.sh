#!/usr/bin/env bash
# fp4_packed_device.sh - the A/B of tuning.def's fp4_packed (the plain MXFP4
# stream kernel converting two elements an instruction in the input's type)
# by knob_ab_device.sh: the format GPU tests (make_sweep's MXFP4 cases among
# them) and formats_bench.py --only $ONLY (default mxfp4_rowwise,
# nvfp4_rowwise) with FUSION_RT_CUDA_FP4_PACKED=1 and =0. Writes
# $OUT/packed_{1,0}.csv and the tests' logs.
KNOB=FUSION_RT_CUDA_FP4_PACKED TAG=packed ONLY=${ONLY:-mxfp4_rowwise,nvfp4_rowwise} \
  exec bash "$(dirname "$0")/knob_ab_device.sh"
