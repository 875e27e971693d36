//===- large_shape_gpu_test.cpp - past 2^31 elements on the GPU ------------===//
//
// One MXFP8 quantize (both directions, bf16 [65600, 32768]: 2^31 + 2^21
// elements) and one paired projection (bf16 lhs [524544, 4096]: 2^31 + 2^20
// elements) on device memory, compared with the CPU backend on sampled rows:
// the first band, the band that starts at element 2^31, and the last band.
// 64-bit indexing is what is under test: a 32-bit offset anywhere would
// wrap past element 2^31 and put those rows' results elsewhere. The
// quantizer must give the CPU's bytes; the projection's fp32 sums may
// differ by their summation order, within K * 2^-24 * sum |x w| (checked
// from an fp64 sum). Prints SKIP and passes where no GPU exists.
//
//===----------------------------------------------------------------------===//
#include "fusion_rt.h"
#include "test/test_util.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

int gFailures = 0;

#define CHECK_CUDA(e)                                                          \
  do {                                                                         \
    cudaError_t err_ = (e);                                                    \
    if (err_ != cudaSuccess) {                                                 \
      std::printf("FAIL %s: %s\n", #e, cudaGetErrorString(err_));              \
      return 1;                                                                \
    }                                                                          \
  } while (0)

/// A row-major view with row pitch `rs` (test_util's view2d).
fusion_rt_tensor view2(void *data, int32_t dtype, int64_t rows, int64_t cols,
                       int64_t rs) {
  return fusion_rt_test::view2d(data, dtype, rows, cols, rs);
}

/// A bf16 value of element i (normal values over a few binades, some
/// negative), deterministic.
uint16_t valueAt(uint64_t i) {
  uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  const uint16_t sign = uint16_t((h & 1) << 15);
  const uint16_t exp = uint16_t(120 + (h >> 1) % 12); // 2^-7 .. 2^4
  const uint16_t man = uint16_t((h >> 8) & 0x7F);
  return uint16_t(sign | (exp << 7) | man);
}

float bf16ToF32(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void fill(std::vector<uint16_t> &host, uint64_t first) {
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = valueAt(first + i);
}

/// Upload [rows, cols] bf16 in slices of `chunkRows` (host memory stays
/// small).
int upload(uint16_t *dev, int64_t rows, int64_t cols) {
  const int64_t chunkRows = 1024;
  std::vector<uint16_t> host(size_t(chunkRows * cols));
  for (int64_t r0 = 0; r0 < rows; r0 += chunkRows) {
    const int64_t n = std::min(chunkRows, rows - r0);
    host.resize(size_t(n * cols));
    fill(host, uint64_t(r0 * cols));
    CHECK_CUDA(cudaMemcpy(dev + r0 * cols, host.data(), host.size() * 2,
                          cudaMemcpyHostToDevice));
  }
  return 0;
}

int quantizeCase() {
  const int64_t M = 65600, N = 32768, nb = N / 32, mb = M / 32;
  std::printf("quantize bf16 [%lld, %lld] (%lld elements), MXFP8 both\n",
              (long long)M, (long long)N, (long long)(M * N));
  uint16_t *x;
  uint8_t *rd, *rs, *cd, *cs;
  CHECK_CUDA(cudaMalloc(&x, size_t(M * N) * 2));
  CHECK_CUDA(cudaMalloc(&rd, size_t(M * N)));
  CHECK_CUDA(cudaMalloc(&cd, size_t(M * N)));
  CHECK_CUDA(cudaMalloc(&rs, size_t(M * nb)));
  CHECK_CUDA(cudaMalloc(&cs, size_t(mb * N)));
  if (upload(x, M, N))
    return 1;
  fusion_rt_quant_scheme s;
  fusion_rt_quant_scheme_init(&s);
  s.direction = FUSION_RT_BOTH;
  fusion_rt_tensor in = view2(x, FUSION_RT_BF16, M, N, N);
  fusion_rt_quant_outputs o;
  fusion_rt_quant_outputs_init(&o);
  o.rowwise_data = view2(rd, FUSION_RT_F8E4M3, M, N, N);
  o.rowwise_scales = view2(rs, FUSION_RT_E8M0, M, nb, nb);
  o.colwise_data = view2(cd, FUSION_RT_F8E4M3, M, N, N);
  o.colwise_scales = view2(cs, FUSION_RT_E8M0, mb, N, N);
  fusion_rt_status st = fusion_rt_quantize(&in, &s, &o, nullptr, nullptr);
  CHECK_CUDA(cudaDeviceSynchronize());
  if (st != FUSION_RT_STATUS_SUCCESS) {
    std::printf("FAIL quantize: %s\n", fusion_rt_last_error_message());
    ++gFailures;
    return 1;
  }
  // Bands: first, the one starting at element 2^31 (row 65536), last.
  for (int64_t band : {int64_t(0), int64_t(2048), mb - 1}) {
    const int64_t r0 = band * 32;
    std::vector<uint16_t> hx(size_t(32 * N));
    fill(hx, uint64_t(r0 * N));
    std::vector<uint8_t> wantRd(32 * N), wantRs(32 * nb), wantCd(32 * N),
        wantCs(N);
    fusion_rt_tensor hin = view2(hx.data(), FUSION_RT_BF16, 32, N, N);
    fusion_rt_quant_outputs ho;
    fusion_rt_quant_outputs_init(&ho);
    ho.rowwise_data = view2(wantRd.data(), FUSION_RT_F8E4M3, 32, N, N);
    ho.rowwise_scales = view2(wantRs.data(), FUSION_RT_E8M0, 32, nb, nb);
    ho.colwise_data = view2(wantCd.data(), FUSION_RT_F8E4M3, 32, N, N);
    ho.colwise_scales = view2(wantCs.data(), FUSION_RT_E8M0, 1, N, N);
    if (fusion_rt_quantize(&hin, &s, &ho, nullptr, nullptr) != FUSION_RT_STATUS_SUCCESS) {
      std::printf("FAIL CPU reference: %s\n", fusion_rt_last_error_message());
      ++gFailures;
      continue;
    }
    std::vector<uint8_t> gotRd(32 * N), gotRs(32 * nb), gotCd(32 * N), gotCs(N);
    CHECK_CUDA(cudaMemcpy(gotRd.data(), rd + r0 * N, gotRd.size(), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(gotRs.data(), rs + r0 * nb, gotRs.size(), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(gotCd.data(), cd + r0 * N, gotCd.size(), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(gotCs.data(), cs + band * N, gotCs.size(), cudaMemcpyDeviceToHost));
    const bool ok = gotRd == wantRd && gotRs == wantRs && gotCd == wantCd &&
                    gotCs == wantCs;
    std::printf("%s rows %lld..%lld (elements from %lld): rowwise and colwise "
                "codes and scales %s the CPU backend's\n",
                ok ? "ok  " : "FAIL", (long long)r0, (long long)(r0 + 31),
                (long long)(r0 * N), ok ? "equal" : "DIFFER FROM");
    gFailures += !ok;
  }
  cudaFree(x);
  cudaFree(rd);
  cudaFree(rs);
  cudaFree(cd);
  cudaFree(cs);
  return 0;
}

int pairedCase() {
  const int64_t M = 524544, K = 4096, H = 8;
  std::printf("paired projection bf16 lhs [%lld, %lld] (%lld elements), "
              "weights [%lld, %lld] x 2\n",
              (long long)M, (long long)K, (long long)(M * K), (long long)H,
              (long long)K);
  uint16_t *x, *w;
  float *y0, *y1;
  CHECK_CUDA(cudaMalloc(&x, size_t(M * K) * 2));
  CHECK_CUDA(cudaMalloc(&w, size_t(2 * H * K) * 2));
  CHECK_CUDA(cudaMalloc(&y0, size_t(M * H) * 4));
  CHECK_CUDA(cudaMalloc(&y1, size_t(M * H) * 4));
  if (upload(x, M, K))
    return 1;
  std::vector<uint16_t> hw(size_t(2 * H * K));
  fill(hw, 12345);
  CHECK_CUDA(cudaMemcpy(w, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
  fusion_rt_paired_projection d{};
  d.lhs = view2(x, FUSION_RT_BF16, M, K, K);
  d.weight0 = view2(w, FUSION_RT_BF16, H, K, K);
  d.weight1 = view2(w + H * K, FUSION_RT_BF16, H, K, K);
  d.gated_kind = -1;
  d.accumulate_dtype = FUSION_RT_F32;
  d.out0 = view2(y0, FUSION_RT_F32, M, H, H);
  d.out1 = view2(y1, FUSION_RT_F32, M, H, H);
  fusion_rt_status st = fusion_rt_paired_projection_run(&d, nullptr, nullptr);
  CHECK_CUDA(cudaDeviceSynchronize());
  if (st != FUSION_RT_STATUS_SUCCESS) {
    std::printf("FAIL paired projection: %s\n", fusion_rt_last_error_message());
    ++gFailures;
    return 1;
  }
  const int64_t past = (int64_t(1) << 31) / K; // first row past 2^31 elements
  for (int64_t r : {int64_t(0), past, M - 1}) {
    std::vector<uint16_t> hx(static_cast<size_t>(K));
    fill(hx, uint64_t(r * K));
    float got[2][8];
    CHECK_CUDA(cudaMemcpy(got[0], y0 + r * H, H * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(got[1], y1 + r * H, H * 4, cudaMemcpyDeviceToHost));
    bool ok = true;
    double worst = 0;
    for (int i = 0; i < 2; ++i)
      for (int64_t n = 0; n < H; ++n) {
        double sum = 0, mag = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double p = double(bf16ToF32(hx[size_t(k)])) *
                           double(bf16ToF32(hw[size_t((i * H + n) * K + k)]));
          sum += p;
          mag += std::fabs(p);
        }
        const double bound = double(K) * std::ldexp(1.0, -24) * mag;
        const double err = std::fabs(double(got[i][n]) - sum);
        worst = std::max(worst, bound > 0 ? err / bound : err);
        ok = ok && err <= bound;
      }
    std::printf("%s row %lld (elements from %lld): both outputs within the "
                "summation-order bound of the fp64 sum (worst %.3f of it)\n",
                ok ? "ok  " : "FAIL", (long long)r, (long long)(r * K), worst);
    gFailures += !ok;
  }
  cudaFree(x);
  cudaFree(w);
  cudaFree(y0);
  cudaFree(y1);
  return 0;
}

} // namespace

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 0;
  }
  size_t freeB = 0, totalB = 0;
  cudaMemGetInfo(&freeB, &totalB);
  if (freeB < (size_t(12) << 30)) {
    std::printf("SKIP: %zu MiB free on the device, 12 GiB needed\n", freeB >> 20);
    return 0;
  }
  if (quantizeCase() || pairedCase())
    ++gFailures;
  std::printf(gFailures ? "LARGE SHAPE GPU TESTS FAILED\n"
                        : "LARGE SHAPE GPU TESTS PASSED\n");
  return gFailures ? 1 : 0;
}
