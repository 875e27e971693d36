//===- device_numerics_check.cu - runtime/common/ on the GPU ----------------===//
//
// Runs the shared numerics headers in device code and checks them against
//  (1) the hardware conversions (cvt.rn.satfinite.{e4m3,e5m2}x2.f32 through
//      cuda_fp8.h, cvt.rn.{bf16,f16}.f32), bit for bit;
//  (2) the same headers compiled for the host, bit for bit (conversions,
//      scales, the MX element step, the NVFP4 chain);
//  (3) the host activations: the rate of bf16 results that differ and the
//      largest difference in bf16 ulps (the contract allows 1);
//  (4) the kernels' range-limited reciprocal (cuda/ptx.cuh rcp_rn_1_2p126)
//      against 1.f / y on every fp32 y in [1, 2^126), bit for bit.
// Inputs: all 65536 bf16 patterns and 2^22 random fp32 patterns.
// Exit status: 0 pass, 1 mismatch, 77 no GPU (ctest SKIP_RETURN_CODE).
//
//===----------------------------------------------------------------------===//
#include "common/activation.h"
#include "common/convert.h"
#include "common/scale.h"
#include "cuda/ptx.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace fusion_rt;

namespace {

constexpr int kConvOutputs = 14;

/// The header functions under test for input `i` (bits `u`), written to the
/// even columns and 8..13 of `o`; the same code runs on device and host.
FUSION_RT_HD void header_columns(uint32_t u, int64_t i, uint32_t *o) {
  const float x = bits_f32(u);
  o[0] = f32_to_e4m3(x);
  o[2] = f32_to_e5m2(x);
  o[4] = f32_to_bf16(x);
  o[6] = f32_to_f16(x);
  o[8] = f32_to_e2m1(x);
  // MX element step with a scale byte derived from the input's own bits.
  const uint8_t b = uint8_t(u >> 7);
  o[9] = mx_encode(x, mx_reciprocal(b), kMXFP8E4M3) |
         (uint32_t(mx_scale_byte(f32_abs(x), f32_is_nan(x), kMXFP8E4M3,
                                 int32_t(i & 1), (i & 2) != 0))
          << 8);
  const float s_enc = nvfp4_global_encode_scale(f32_abs(x));
  o[10] = f32_bits(s_enc);
  o[11] = nvfp4_block_scale(f32_abs(x) * 0.75f, nvfp4_block_scale_factor(s_enc)) |
          (uint32_t(f32_to_e2m1(x, true, u * 2654435761u)) << 8);
  o[12] = f32_bits(fp8_scale_from_amax(f32_abs(x), 448.f, (i & 4) ? 1e-30f : 0.f,
                                       (i & 8) != 0));
  o[13] = f32_bits(nvfp4_encode_factor(uint8_t(u), nvfp4_global_decode_scale(s_enc)));
}

/// Per input: the header functions, and the hardware conversions in the odd
/// columns 1, 3, 5, 7.
__global__ void conversions_kernel(const uint32_t *in, int64_t n, uint32_t *out) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n)
    return;
  const float x = __uint_as_float(in[i]);
  uint32_t *o = out + i * kConvOutputs;
  header_columns(in[i], i, o);
  o[1] = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  o[3] = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
  o[5] = __bfloat16_as_ushort(__float2bfloat16_rn(x));
  o[7] = __half_as_ushort(__float2half_rn(x));
}

/// Counts the y = bits b in [1, 2^126) where rcp_rn_1_2p126(y) != 1.f / y.
__global__ void rcp_range_kernel(unsigned long long *bad) {
  unsigned long long n = 0;
  for (uint32_t b = 0x3f800000u + blockIdx.x * blockDim.x + threadIdx.x; b < 0x7e800000u;
       b += gridDim.x * blockDim.x) {
    const float y = __uint_as_float(b);
    n += __float_as_uint(fusion_rt::cuda::rcp_rn_1_2p126(y)) != __float_as_uint(1.f / y);
  }
  atomicAdd(bad, n);
}

void conversions_host(const uint32_t *in, int64_t n, uint32_t *out) {
  for (int64_t i = 0; i < n; ++i)
    header_columns(in[i], i, out + i * kConvOutputs);
}

constexpr int kGated = kActGeGLUErf - kActSwiGLU + 1;
constexpr int kActs = 7 + 2 * kGated; // non-gated fwd+bwd kinds 0..6, gated fwd/bwd

/// Every activation of bf16 input pattern h, rounded to bf16 (gated: up =
/// 0.75, grad = -1.25); the same code runs on device and host.
FUSION_RT_HD void activation_columns(uint16_t h, uint16_t *o) {
  const float x = bf16_to_f32(h);
  ActParams p;
  for (int k = 0; k <= kActSRelu; ++k) {
    o[k] = f32_to_bf16(act_forward(k, x, p));
    o[kActs + k] = f32_to_bf16(act_backward(k, x, -1.25f, p));
  }
  for (int g = 0; g < kGated; ++g) {
    float da, dg;
    o[7 + 2 * g] = f32_to_bf16(gated_forward(kActSwiGLU + g, x, 0.75f, p));
    gated_backward(kActSwiGLU + g, x, 0.75f, -1.25f, p, da, dg);
    o[8 + 2 * g] = f32_to_bf16(da);
  }
}

__global__ void activations_kernel(int64_t n, uint16_t *out) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n)
    activation_columns(uint16_t(i), out + i * (kActs + 7));
}

void activations_host(int64_t n, uint16_t *out) {
  for (int64_t i = 0; i < n; ++i)
    activation_columns(uint16_t(i), out + i * (kActs + 7));
}

/// Distance in bf16 ulps between two bf16 patterns (same sign assumed
/// otherwise large); NaN vs NaN is 0.
int ulp_distance(uint16_t a, uint16_t b) {
  const bool na = (a & 0x7fff) > 0x7f80, nb = (b & 0x7fff) > 0x7f80;
  if (na || nb)
    return na == nb ? 0 : 1 << 20;
  auto key = [](uint16_t v) {
    return (v & 0x8000) ? -int(v & 0x7fff) : int(v & 0x7fff);
  };
  return std::abs(key(a) - key(b));
}

#define CHECK_CUDA(expr)                                                       \
  do {                                                                         \
    cudaError_t e_ = (expr);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, \
                  __LINE__);                                                   \
      return 1;                                                                \
    }                                                                          \
  } while (0)

} // namespace

int main() {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  std::vector<uint32_t> in;
  for (uint32_t h = 0; h < 65536; ++h)
    in.push_back(h << 16);
  std::mt19937 rng(7);
  for (int i = 0; i < (1 << 22); ++i)
    in.push_back(rng());
  const int64_t n = int64_t(in.size());
  std::vector<uint32_t> dev_out(size_t(n) * kConvOutputs), host_out(dev_out.size());
  uint32_t *d_in, *d_out;
  CHECK_CUDA(cudaMalloc(&d_in, in.size() * 4));
  CHECK_CUDA(cudaMalloc(&d_out, dev_out.size() * 4));
  CHECK_CUDA(cudaMemcpy(d_in, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
  conversions_kernel<<<unsigned((n + 255) / 256), 256>>>(d_in, n, d_out);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(dev_out.data(), d_out, dev_out.size() * 4,
                        cudaMemcpyDeviceToHost));
  conversions_host(in.data(), n, host_out.data());

  const char *names[] = {"e4m3 vs cvt.e4m3x2", "e5m2 vs cvt.e5m2x2",
                         "bf16 vs cvt.rn.bf16", "f16 vs cvt.rn.f16"};
  int failures = 0;
  for (int c = 0; c < 4; ++c) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t *o = dev_out.data() + i * kConvOutputs;
      if (o[2 * c] != o[2 * c + 1] && bad++ < 3)
        std::printf("  %s: input 0x%08x ours 0x%x hw 0x%x\n", names[c], in[size_t(i)],
                    o[2 * c], o[2 * c + 1]);
    }
    std::printf("%-22s %lld mismatches of %lld\n", names[c], (long long)bad,
                (long long)n);
    failures += bad != 0;
  }
  for (int col = 0; col < kConvOutputs; ++col) {
    if (col == 1 || col == 3 || col == 5 || col == 7)
      continue; // hardware columns have no host counterpart
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = size_t(i * kConvOutputs + col);
      // fp32 columns: any NaN equals any NaN (payloads are not part of the
      // contract; the quantized codes derived from them are).
      const bool float_col = col == 10 || col == 12 || col == 13;
      if (float_col && (dev_out[k] & 0x7fffffffu) > 0x7f800000u &&
          (host_out[k] & 0x7fffffffu) > 0x7f800000u)
        continue;
      if (dev_out[k] != host_out[k] && bad++ < 3)
        std::printf("  device vs host: input 0x%08x column %d: 0x%x vs 0x%x\n",
                    in[size_t(i)], col, dev_out[k], host_out[k]);
    }
    std::printf("headers device==host, column %2d: %lld mismatches\n", col,
                (long long)bad);
    failures += bad != 0;
  }

  // Activations over every bf16 input.
  const int64_t na = 65536, per = kActs + 7;
  std::vector<uint16_t> dact(size_t(na * per)), hact(dact.size());
  uint16_t *d_act;
  CHECK_CUDA(cudaMalloc(&d_act, dact.size() * 2));
  activations_kernel<<<unsigned(na / 256), 256>>>(na, d_act);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(dact.data(), d_act, dact.size() * 2, cudaMemcpyDeviceToHost));
  activations_host(na, hact.data());
  const char *act_names[per] = {
      "identity", "relu", "gelu", "gelu_tanh", "silu", "qgelu", "srelu",
      "swiglu", "dswiglu.dact", "geglu", "dgeglu.dact", "reglu", "dreglu.dact",
      "qgeglu", "dqgeglu.dact", "sreglu", "dsreglu.dact", "clamped_swiglu",
      "dclamped_swiglu.dact", "geglu_erf", "dgeglu_erf.dact", "d:identity", "d:relu", "d:gelu", "d:gelu_tanh",
      "d:silu", "d:qgelu", "d:srelu"};
  for (int k = 0; k < per; ++k) {
    int64_t diff = 0;
    int worst = 0;
    for (int64_t i = 0; i < na; ++i) {
      int d = ulp_distance(dact[size_t(i * per + k)], hact[size_t(i * per + k)]);
      diff += d != 0;
      worst = d > worst ? d : worst;
    }
    std::printf("act %-22s bf16 results differing: %6lld / %lld (%.4f%%), max %d ulp\n",
                act_names[k], (long long)diff, (long long)na, 100.0 * diff / na,
                worst);
    for (int64_t i = 0, shown = 0; i < na && shown < 4; ++i) {
      const uint16_t a = dact[size_t(i * per + k)], b = hact[size_t(i * per + k)];
      if (ulp_distance(a, b) > 1 && ++shown)
        std::printf("    x=%g: device %g host %g\n", bf16_to_f32(uint16_t(i)),
                    bf16_to_f32(a), bf16_to_f32(b));
    }
    failures += worst > 1;
  }
  // The range-limited reciprocal of the SwiGLU kernels, exhaustively.
  unsigned long long *d_bad, rcp_bad = 0;
  CHECK_CUDA(cudaMalloc(&d_bad, sizeof rcp_bad));
  CHECK_CUDA(cudaMemset(d_bad, 0, sizeof rcp_bad));
  rcp_range_kernel<<<132 * 16, 256>>>(d_bad);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(&rcp_bad, d_bad, sizeof rcp_bad, cudaMemcpyDeviceToHost));
  std::printf("rcp_rn_1_2p126 vs 1.f/y, all %u y in [1, 2^126): %llu mismatches\n",
              0x7e800000u - 0x3f800000u, rcp_bad);
  failures += rcp_bad != 0;
  cudaFree(d_bad);
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_act);
  std::printf(failures ? "FAILED\n" : "PASSED\n");
  return failures ? 1 : 0;
}
