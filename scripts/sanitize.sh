#!/usr/bin/env bash
# sanitize.sh - the runtime under AddressSanitizer + UndefinedBehaviorSanitizer.
# Builds the runtime (its own CMake project, CPU backend only: the sanitizers
# do not see into CUDA kernels, compute-sanitizer does, bench/mxfp8/
# gpu_tests.sh) with -fsanitize=address,undefined into $SAN_BUILD_DIR
# (default build-asan) and runs every runtime test (GoogleTest numerics,
# ABI edges, the ABI fuzzer with FUSION_RT_ABI_FUZZ_CALLS calls) with
# errors fatal. With --compiler it also builds fusion-opt, the plugin and
# the MLIR runtime wrappers with the same flags into $SAN_BUILD_DIR/compiler
# and runs the lit suite with them (about 20 minutes on two cores the first
# time; see the notes below on the uninstrumented LLVM).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${SAN_BUILD_DIR:-$root/build-asan}
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cmake -S "$root/runtime" -B "$dir/runtime" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFUSION_RT_ENABLE_CUDA=OFF -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
ninja -C "$dir/runtime"
# The OOM test limits the address space, which ASan's shadow memory cannot
# live with: it runs in the plain build only.
"$dir/runtime/test/fusion_rt_tests" --gtest_filter='-AbiEdges.PairedProjectionOutOfMemoryIsAStatus'
if [ "${1:-}" = "--compiler" ]; then
  cmake -S "$root" -B "$dir/compiler" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DFUSION_RT_ENABLE_CUDA=OFF \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
  ninja -C "$dir/compiler"
  lit=/usr/lib/llvm-22/bin/lit
  # The Debian LLVM is not built with ASan, but its headers are: when
  # compiled under -fsanitize=address, llvm/Support/Allocator.h poisons the
  # slabs of a BumpPtrAllocator, and the uninstrumented allocator code in
  # libMLIR.so then writes into them (every report of the first run was this
  # use-after-poison, in StorageUniquer or DenseArrayAttr storage).
  # allow_user_poisoning=0 turns that manual poisoning off; ASan's own
  # checks of our code stay on.
  poison=allow_user_poisoning=0
  # 1. Every test whose sanitized binaries are executables linked with ASan
  #    (fusion-opt, the plugin through mlir-opt is not: run in 2), with leak
  #    detection. Install/ is left out: it links a consumer project, built
  #    without the sanitizer flags, against the sanitized static libraries.
  ASAN_OPTIONS="$poison:detect_leaks=1:abort_on_error=1" \
    "$lit" -q "$dir/compiler/test" --filter-out 'Install/|Integration/|Plugin/|corpus.test|jit'
  # 2. Tests that load the sanitized runtime or plugin into uninstrumented
  #    LLVM tools (mlir-runner, mlir-opt): the ASan runtime must come first,
  #    so it is preloaded; leaks are not checked there (the uninstrumented
  #    tools and Python report their own at exit).
  LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" \
    ASAN_OPTIONS="$poison:detect_leaks=0:abort_on_error=1" \
    "$lit" -q "$dir/compiler/test" --filter 'Integration/|Plugin/|corpus.test|jit'
fi
echo "sanitize: clean"
