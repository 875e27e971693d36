#!/usr/bin/env bash
# Runs every RUN line of test/Transforms that checks remarks N times (default
# 100), threaded as lit runs it, and prints "failures/N file :: command".
# Catches remarks that a threaded run loses now and then (docs/passes.md,
# "Remarks and threads").
#   BUILD_DIR   build directory (default: build)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
n=${1:-100}
export PATH=$build/bin:/usr/lib/llvm-22/bin:$PATH
cd "$root"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for f in test/Transforms/*.mlir; do
  grep -h '^// RUN:' "$f" | sed 's|^// RUN: ||' | grep -e '--remarks-filter' |
    grep -v '^not ' | while read -r cmd; do
      c=${cmd//%s/$f}
      c=${c//%fusion_src/$root}
      fails=0
      for _ in $(seq 1 "$n"); do
        bash -c "set -o pipefail; $c" >"$out" 2>&1 || fails=$((fails + 1))
      done
      echo "$fails/$n $f :: ${cmd:0:100}"
    done
done
