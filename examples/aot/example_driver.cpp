//===- example_driver.cpp - run an AOT-compiled example on CPU and GPU -----===//
//
// Links with the object fusion-aot made from examples/gdn_gates.mlir
// (FUSION_EXAMPLE_GDN) or examples/llama_ffn_front.mlir (FUSION_EXAMPLE_FFN).
// Calls the compiled function twice on the same inputs: with host memory (the
// runtime's CPU backend) and, where a GPU exists, with CUDA managed memory
// (the runtime sees device-accessible pointers and runs its CUDA kernels; the
// parts of the program that stay unfused — the GDN scale -exp(A_log), the
// FFN projections — run on the CPU, which managed memory allows). Compares
// the results: quantizer outputs bit for bit, f32 projections within 1e-5
// relative.
//
//===----------------------------------------------------------------------===//
#include "aot_runtime.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static void *bufferAlloc(size_t bytes) { return _mlir_memref_to_llvm_alloc(bytes); }

static uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

/// Deterministic values in [-scale, scale).
static void fillBf16(uint16_t *p, size_t n, uint64_t seed, float scale) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = toBf16(((seed >> 40) % 20000 / 10000.0f - 1.0f) * scale);
  }
}

template <int N> static MemRef<N> view(void *p, const int64_t (&sizes)[N]) {
  MemRef<N> m{p, p, 0, {}, {}};
  int64_t stride = 1;
  for (int d = N - 1; d >= 0; --d) {
    m.sizes[d] = sizes[d];
    m.strides[d] = stride;
    stride *= sizes[d];
  }
  return m;
}

template <int N> static size_t numel(const MemRef<N> &m) {
  size_t n = 1;
  for (int d = 0; d < N; ++d)
    n *= size_t(m.sizes[d]);
  return n;
}

template <int N>
static std::vector<uint8_t> bytesOf(const MemRef<N> &m, size_t esize) {
  std::vector<uint8_t> out(numel(m) * esize);
  std::memcpy(out.data(),
              static_cast<const uint8_t *>(m.aligned) + m.offset * esize,
              out.size());
  return out;
}

#if defined(FUSION_EXAMPLE_GDN)
struct Results {
  MemRef<2> g, beta;
};
extern "C" void _mlir_ciface_gdn_gates(Results *, MemRef<2> *, MemRef<2> *,
                                       MemRef<2> *, MemRef<1> *, MemRef<1> *);
static const char *kName = "gdn_gates (examples/gdn_gates.mlir)";

static std::vector<std::vector<uint8_t>> run() {
  const int64_t K = 2048, H = 32;
  auto *x = static_cast<uint16_t *>(bufferAlloc(K * 2));
  auto *wa = static_cast<uint16_t *>(bufferAlloc(H * K * 2));
  auto *wb = static_cast<uint16_t *>(bufferAlloc(H * K * 2));
  auto *dt = static_cast<uint16_t *>(bufferAlloc(H * 2));
  auto *alog = static_cast<float *>(bufferAlloc(H * 4));
  fillBf16(x, K, 1, 1.0f);
  fillBf16(wa, H * K, 2, 0.05f);
  fillBf16(wb, H * K, 3, 0.05f);
  fillBf16(dt, H, 4, 1.0f);
  for (int64_t i = 0; i < H; ++i)
    alog[i] = std::log(1.0f + float(i) / 4.0f);
  MemRef<2> mx = view<2>(x, {1, K}), ma = view<2>(wa, {H, K}),
            mb = view<2>(wb, {H, K});
  MemRef<1> mdt = view<1>(dt, {H}), mal = view<1>(alog, {H});
  Results r{};
  _mlir_ciface_gdn_gates(&r, &mx, &ma, &mb, &mdt, &mal);
  cudaDeviceSynchronize();
  std::vector<std::vector<uint8_t>> out = {bytesOf(r.g, 4),
                                           bytesOf(r.beta, 4)};
  for (void *p : {(void *)x, (void *)wa, (void *)wb, (void *)dt,
                  (void *)alog, r.g.allocated, r.beta.allocated})
    _mlir_memref_to_llvm_free(p);
  return out;
}
/// f32 outputs: relative tolerance (f32 accumulation in another order).
static const bool kBitExact[] = {false, false};
static const char *kOutNames[] = {"g (f32)", "beta (f32)"};
#elif defined(FUSION_EXAMPLE_FFN)
struct Results {
  MemRef<2> data, scales;
};
extern "C" void _mlir_ciface_llama_ffn_front(Results *, MemRef<2> *,
                                             MemRef<2> *, MemRef<2> *);
static const char *kName = "llama_ffn_front (examples/llama_ffn_front.mlir)";

static std::vector<std::vector<uint8_t>> run() {
  const int64_t T = 128, Hd = 4096, I = 14336;
  auto *x = static_cast<uint16_t *>(bufferAlloc(T * Hd * 2));
  auto *wg = static_cast<uint16_t *>(bufferAlloc(I * Hd * 2));
  auto *wu = static_cast<uint16_t *>(bufferAlloc(I * Hd * 2));
  fillBf16(x, T * Hd, 11, 2.0f);
  fillBf16(wg, I * Hd, 12, 0.03f);
  fillBf16(wu, I * Hd, 13, 0.03f);
  MemRef<2> mx = view<2>(x, {T, Hd}), mg = view<2>(wg, {I, Hd}),
            mu = view<2>(wu, {I, Hd});
  Results r{};
  _mlir_ciface_llama_ffn_front(&r, &mx, &mg, &mu);
  cudaDeviceSynchronize();
  std::vector<std::vector<uint8_t>> out = {bytesOf(r.data, 1),
                                           bytesOf(r.scales, 1)};
  for (void *p : {(void *)x, (void *)wg, (void *)wu, r.data.allocated,
                  r.scales.allocated})
    _mlir_memref_to_llvm_free(p);
  return out;
}
static const bool kBitExact[] = {true, true};
static const char *kOutNames[] = {"MXFP8 data", "MXFP8 swizzled scales"};
#else
#error "define FUSION_EXAMPLE_GDN or FUSION_EXAMPLE_FFN"
#endif

static uint64_t fnv(const std::vector<uint8_t> &v) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : v)
    h = (h ^ b) * 1099511628211ull;
  return h;
}

static void printChecksums(const char *who,
                           const std::vector<std::vector<uint8_t>> &outs) {
  std::printf("%s checksums:", who);
  for (const auto &o : outs)
    std::printf(" %016llx", (unsigned long long)fnv(o));
  std::printf("\n");
}

int main() {
  std::printf("%s\n", kName);
  // FUSION_AOT_GPU_ONLY=1 skips the CPU half (its checksums, printed by a
  // CPU-only run of this same binary, are compared by the caller).
  const char *gpuOnly = std::getenv("FUSION_AOT_GPU_ONLY");
  bool skipCpu = gpuOnly && gpuOnly[0] == '1';
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::vector<uint8_t>> host;
  if (!skipCpu) {
    host = run();
    printChecksums("cpu", host);
  }
  auto t1 = std::chrono::steady_clock::now();
  if (!skipCpu)
    std::printf("cpu : %.1f ms\n",
                std::chrono::duration<double, std::milli>(t1 - t0).count());
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("gpu : SKIPPED (no CUDA device)\n");
    return 0;
  }
  gAllocMode = AllocMode::Managed;
  auto dev = run();
  auto t2 = std::chrono::steady_clock::now();
  std::printf("gpu : %.1f ms (managed memory; unfused parts on the CPU)\n",
              std::chrono::duration<double, std::milli>(t2 - t1).count());
  printChecksums("gpu", dev);
  if (skipCpu)
    return 0;
  int bad = 0;
  for (size_t i = 0; i < host.size(); ++i) {
    if (kBitExact[i]) {
      size_t diff = 0;
      for (size_t j = 0; j < host[i].size(); ++j)
        diff += host[i][j] != dev[i][j];
      std::printf("%s: %zu of %zu bytes differ (bit-exact required)\n",
                  kOutNames[i], diff, host[i].size());
      bad += diff != 0;
    } else {
      const float *a = reinterpret_cast<const float *>(host[i].data());
      const float *b = reinterpret_cast<const float *>(dev[i].data());
      size_t n = host[i].size() / 4;
      double worst = 0;
      for (size_t j = 0; j < n; ++j)
        worst = std::fmax(worst, std::fabs(double(a[j]) - b[j]) /
                                     std::fmax(1e-30, std::fabs(double(a[j]))));
      std::printf("%s: max relative difference %.3g over %zu values "
                  "(tolerance 1e-5)\n",
                  kOutNames[i], worst, n);
      bad += !(worst <= 1e-5);
    }
  }
  return bad == 0 ? 0 : 1;
}
