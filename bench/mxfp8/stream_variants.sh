#!/usr/bin/env bash
# stream_variants.sh - one short device call comparing the rowwise stream
# kernels (FUSION_RT_CUDA_ROW_STREAM=1, the default: 4ph plain, 2p SwiGLU)
# with the v2 tile kernels (=0; VARIANTS picks them; the other variants were
# retired, docs/kernels.md) on the rowwise and SwiGLU rowwise shapes (ab.sh
# with these defaults): bit-exact quick GPU tests of every variant and (if
# ncu works) a profile of the rowwise kernel at 16384^2 for the variants in
# NCU_VARIANTS (default "1"). Files: stream_tests.log
# stream.csv ncu_stream_rs<v>.txt. Expects .devbin/ as device_run.sh does.
ARMS=""
for v in ${VARIANTS:-0 1}; do ARMS="$ARMS rs$v:FUSION_RT_CUDA_ROW_STREAM=$v"; done
NA=""
for v in ${NCU_VARIANTS-1}; do NA="$NA rs$v"; done
export ARMS NCU_ARMS="$NA" TAG=stream ONLY="mxfp8_rowwise,swiglu_mxfp8_rowwise" \
  NCU_REGEX=row NCU_ONLY=mxfp8_rowwise REPS=1
exec bash "$(dirname "$0")/ab.sh"
