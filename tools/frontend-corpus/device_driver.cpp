//===- device_driver.cpp - run an AOT-built corpus program on CPU or GPU --===//
//
// Linked with one frontend-corpus program that tools/frontend-corpus/
// device_corpus.py lowered with `fusion-pipeline{frontend=torch
// generic-alloc=true}` (its harness `corpus_main` copies the inputs into
// allocated buffers, runs the program and prints every output through
// printMemrefI32). `device_driver host` allocates with malloc, so the
// runtime runs its CPU backend; `device_driver managed` allocates CUDA
// managed memory, so every fusion op runs on the CUDA backend while the
// program's unfused loops still read and write the same buffers. The
// outputs are printed as mlir-runner's printMemrefI32 prints them (without
// needing libmlir_c_runner_utils, which needs LLVM).
//
//===----------------------------------------------------------------------===//
// The allocation hooks of generic-alloc code (host or managed memory).
#include "../../examples/aot/aot_runtime.h"

#include <cstdint>
#include <cstdio>
#include <cstring>

extern "C" void corpus_main();

/// printMemrefI32(memref<*xi32>) as the lowered code calls it: rank and a
/// pointer to the ranked descriptor {allocated, aligned, offset, sizes,
/// strides}.
extern "C" void printMemrefI32(int64_t rank, void *desc) {
  auto *d = static_cast<int64_t *>(desc);
  const int32_t *data = reinterpret_cast<const int32_t *>(d[1]) + d[2];
  const int64_t *sizes = d + 3, *strides = d + 3 + rank;
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i)
    count *= sizes[i];
  std::printf("Unranked Memref rank = %lld sizes = [", (long long)rank);
  for (int64_t i = 0; i < rank; ++i)
    std::printf("%s%lld", i ? ", " : "", (long long)sizes[i]);
  std::printf("] data = \n[");
  for (int64_t n = 0; n < count; ++n) {
    int64_t rest = n, off = 0;
    for (int64_t i = rank - 1; i >= 0; --i) {
      off += (rest % sizes[i]) * strides[i];
      rest /= sizes[i];
    }
    std::printf("%s%d", n ? ", " : "", data[off]);
  }
  std::printf("]\n");
}

/// memrefCopy as libmlir_c_runner_utils defines it (memref.copy of
/// non-contiguous views): element size, then unranked source and target
/// ({rank, descriptor}).
struct Unranked {
  int64_t rank;
  void *desc;
};
extern "C" void memrefCopy(int64_t elemSize, Unranked *src, Unranked *dst) {
  const int64_t rank = src->rank;
  auto *s = static_cast<int64_t *>(src->desc);
  auto *d = static_cast<int64_t *>(dst->desc);
  const char *sp = reinterpret_cast<const char *>(s[1]) + s[2] * elemSize;
  char *dp = reinterpret_cast<char *>(d[1]) + d[2] * elemSize;
  const int64_t *sizes = s + 3, *ss = s + 3 + rank, *ds = d + 3 + rank;
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i)
    count *= sizes[i];
  for (int64_t n = 0; n < count; ++n) {
    int64_t rest = n, so = 0, dof = 0;
    for (int64_t i = rank - 1; i >= 0; --i) {
      const int64_t k = rest % sizes[i];
      rest /= sizes[i];
      so += k * ss[i];
      dof += k * ds[i];
    }
    std::memcpy(dp + dof * elemSize, sp + so * elemSize, size_t(elemSize));
  }
}

int main(int argc, char **argv) {
  if (argc != 2 || (std::strcmp(argv[1], "host") && std::strcmp(argv[1], "managed"))) {
    std::fprintf(stderr, "usage: %s host|managed\n", argv[0]);
    return 2;
  }
  const bool managed = !std::strcmp(argv[1], "managed");
  gAllocMode = managed ? AllocMode::Managed : AllocMode::Host;
  corpus_main();
  if (managed && cudaDeviceSynchronize() != cudaSuccess) {
    std::fprintf(stderr, "device_driver: the device reported an error\n");
    return 4;
  }
  std::fflush(stdout);
  return 0;
}
