#!/usr/bin/env bash
# colt_variants.sh - one short device call for the colwise transposed and
# both-directions kernels (ab.sh with these defaults): bit-exact quick GPU
# tests of each arm (FUSION_RT_CUDA_COL_T=0|1, FUSION_RT_CUDA_BOTH=0|1: the
# v2 tile kernels or the colT (sph colwise, s both) and CTA kernels),
# the colwise transposed, both and both-transposed shapes twice per arm, and
# (if ncu works) a profile of the colT kernel at 16384^2 for the arms in
# NCU_ARMS (default "cta"). Files: colt_tests.log colt.csv ncu_colt_<arm>.txt.
# Expects .devbin/ as device_run.sh does.
export ARMS=${ARMS:-"prev:FUSION_RT_CUDA_COL_T=0,FUSION_RT_CUDA_BOTH=0 cta:FUSION_RT_CUDA_COL_T=1,FUSION_RT_CUDA_BOTH=1"}
export TAG=colt ONLY="mxfp8_colwise_transposed,=mxfp8_both,mxfp8_both_transposed" \
  NCU_REGEX=colT NCU_ONLY=mxfp8_colwise_transposed NCU_ARMS=${NCU_ARMS-cta} REPS=2
exec bash "$(dirname "$0")/ab.sh"
