#!/usr/bin/env bash
# Quick start: installs what is missing, builds fusion-opt, and runs the
# activation->quantize fusion on the shipped Llama FFN example, printing the
# fused IR and one remark per fusion decision.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/bootstrap.sh"
ninja -C "$build" fusion-opt
"$build/bin/fusion-opt" "$root/examples/llama_ffn_front.mlir" \
  --fusion-pipeline=lower-to-llvm=false --remarks-filter=fusion
