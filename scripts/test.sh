#!/usr/bin/env bash
# Builds everything and runs every test: the lit suite (check-fusion) and the
# runtime's unit tests and kernel checks (check-runtime).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/bootstrap.sh"
ninja -C "$build"
ninja -C "$build" check
