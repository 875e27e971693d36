//===- aot_driver.cpp - run an AOT-compiled fusion program on CPU and GPU -===//
//
// Links with the object fusion-aot made from examples/aot/swiglu_mxfp8.mlir.
// Calls the compiled `forward` twice: once with host buffers (the runtime
// runs its CPU backend) and, where a GPU exists, once with device buffers
// (the same compiled code; the runtime sees device pointers and runs its CUDA
// kernels). Buffers the compiled code allocates go through
// _mlir_memref_to_llvm_alloc, defined here to follow the current mode.
// Prints both results' checksums and whether they are identical bit for bit.
//
//===----------------------------------------------------------------------===//
#include "aot_runtime.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct Results {
  MemRef<2> data;
  MemRef<2> scales;
};

extern "C" void _mlir_ciface_forward(Results *results, MemRef<2> *x);

static uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

static uint64_t fnv(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

struct Output {
  std::vector<uint8_t> data, scales;
};

static Output run(uint16_t *x, int64_t m, int64_t k2, bool device) {
  gAllocMode = device ? AllocMode::Device : AllocMode::Host;
  MemRef<2> in{x, x, 0, {m, k2}, {k2, 1}};
  Results r{};
  _mlir_ciface_forward(&r, &in);
  Output o;
  size_t dn = r.data.sizes[0] * r.data.sizes[1];
  size_t sn = r.scales.sizes[0] * r.scales.sizes[1];
  o.data.resize(dn);
  o.scales.resize(sn);
  auto copy = [&](std::vector<uint8_t> &dst, const MemRef<2> &src) {
    const uint8_t *p = static_cast<const uint8_t *>(src.aligned) + src.offset;
    if (device)
      cudaMemcpy(dst.data(), p, dst.size(), cudaMemcpyDeviceToHost);
    else
      std::memcpy(dst.data(), p, dst.size());
  };
  copy(o.data, r.data);
  copy(o.scales, r.scales);
  _mlir_memref_to_llvm_free(r.data.allocated);
  _mlir_memref_to_llvm_free(r.scales.allocated);
  return o;
}

int main() {
  const int64_t m = 256, k2 = 2048;
  std::vector<uint16_t> x(m * k2);
  uint64_t s = 12345;
  for (auto &v : x) { // uniform in [-6, 6), some exact zeros and large values
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    float f = (static_cast<int64_t>(s >> 40) % 12000) / 1000.0f - 6.0f;
    v = toBf16(f);
  }
  Output host = run(x.data(), m, k2, false);
  std::printf("cpu : data fnv %016llx scales fnv %016llx\n",
              (unsigned long long)fnv(host.data.data(), host.data.size()),
              (unsigned long long)fnv(host.scales.data(), host.scales.size()));

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("gpu : SKIPPED (no CUDA device)\n");
    return 0;
  }
  uint16_t *dx = nullptr;
  cudaMalloc(&dx, x.size() * 2);
  cudaMemcpy(dx, x.data(), x.size() * 2, cudaMemcpyHostToDevice);
  Output dev = run(dx, m, k2, true);
  auto t0 = std::chrono::steady_clock::now();
  const int iters = 20;
  for (int i = 0; i < iters; ++i)
    run(dx, m, k2, true);
  auto t1 = std::chrono::steady_clock::now();
  cudaFree(dx);
  size_t diffs = 0;
  for (size_t i = 0; i < host.data.size(); ++i)
    diffs += host.data[i] != dev.data[i];
  for (size_t i = 0; i < host.scales.size(); ++i)
    diffs += host.scales[i] != dev.scales[i];
  std::printf("gpu : data fnv %016llx scales fnv %016llx\n",
              (unsigned long long)fnv(dev.data.data(), dev.data.size()),
              (unsigned long long)fnv(dev.scales.data(), dev.scales.size()));
  std::printf("cpu vs gpu: %zu of %zu bytes differ; %.1f us per call "
              "(compiled forward incl. result cudaMalloc/copy-back)\n",
              diffs, host.data.size() + host.scales.size(),
              std::chrono::duration<double, std::micro>(t1 - t0).count() /
                  iters);
  return diffs == 0 ? 0 : 1;
}
