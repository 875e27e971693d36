#!/usr/bin/env bash
# build_cast_variants.sh - builds bench/formats/cast_variants.cu for sm_90a into
# .devbin/cast_variants, linked against libfusion_rt.so of .devbin or .devbuild (run from the
# repository root; no GPU needed).
set -e
cd "$(dirname "$0")/../.."
/usr/local/cuda/bin/nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
  -Iruntime/include bench/formats/cast_variants.cu -o .devbin/cast_variants \
  -L.devbin -L.devbuild/lib -lfusion_rt -Xlinker -rpath -Xlinker '$ORIGIN'
