#!/usr/bin/env bash
# colt_variants.sh - one short device call for the colwise transposed and
# both-directions kernels (ab.sh with these defaults): bit-exact quick GPU
# tests of each arm (FUSION_RT_CUDA_COL_T=0|s|sp|sph, FUSION_RT_CUDA_BOTH=0|c),
# the colwise transposed, both and both-transposed shapes twice per arm, and
# (if ncu works) a profile of the colT kernel at 16384^2 for the arms in
# NCU_ARMS (default "s"). Files: colt_tests.log colt.csv ncu_colt_<arm>.txt.
# Expects .devbin/ as device_run.sh does.
export ARMS=${ARMS:-"prev:FUSION_RT_CUDA_COL_T=0,FUSION_RT_CUDA_BOTH=0 s:FUSION_RT_CUDA_COL_T=s,FUSION_RT_CUDA_BOTH=c sph:FUSION_RT_CUDA_COL_T=sph,FUSION_RT_CUDA_BOTH=c"}
export TAG=colt ONLY="mxfp8_colwise_transposed,=mxfp8_both,mxfp8_both_transposed" \
  NCU_REGEX=colT NCU_ONLY=mxfp8_colwise_transposed NCU_ARMS=${NCU_ARMS-s} REPS=2
exec bash "$(dirname "$0")/ab.sh"
