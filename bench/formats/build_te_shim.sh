#!/usr/bin/env bash
# Builds bench/formats/te_shim.cpp against TransformerEngine's wheel (here,
# not on the device: the device has no TE headers). TE_ROOT is the
# transformer_engine folder of the unpacked transformer-engine-cu13 wheel
# (common/include and wheel_lib/libtransformer_engine.so under it).
# Usage: TE_ROOT=... bash bench/formats/build_te_shim.sh OUT_DIR
set -euo pipefail
out=${1:?usage: build_te_shim.sh OUT_DIR}
: "${TE_ROOT:?set TE_ROOT to the transformer_engine folder of the wheel}"
cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out"
g++ -std=c++17 -O2 -fPIC -shared -Wall -Wextra \
  -isystem "$TE_ROOT/common/include" -isystem "$cuda/include" \
  "$(dirname "$0")/te_shim.cpp" -o "$out/libte_shim.so" \
  -L"$TE_ROOT/wheel_lib" -ltransformer_engine -L"$cuda/lib64" -lcudart \
  -Wl,--allow-shlib-undefined -Wl,--version-script="$(dirname "$0")/te_shim.map"
echo "built $out/libte_shim.so"
