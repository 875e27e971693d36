// cast_variants.cu - launch-shape probe of the FP8 per-tensor cast (bf16 ->
// e4m3 codes of x * scale, rowwise) at large sizes, beside the runtime's own
// call (fusion_rt_quantize, delayed scaling) in the same process: which shape
// of a bandwidth-bound cast reaches the most of the copy bandwidth on the
// device (docs/benchmarks/formats.md, "TransformerEngine 2.20 beside ours").
// Every variant's codes are compared with the runtime's byte for byte.
//
// Build (here, no GPU needed): bench/formats/build_cast_variants.sh
// Run (device): .devbin/cast_variants [M N]   (default 16384 16384)
#include "fusion_rt.h"

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__,                   \
                   cudaGetErrorString(e_));                                    \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

namespace {

// Load flavours: plain (the compiler's ld.global), non-coherent no-L1
// (the runtime's ldg_stream16), and an L2 evict-first policy.
enum Ld { kPlain = 0, kNc = 1, kEvictFirst = 2 };

template <int LD>
__device__ __forceinline__ uint4 load16(const uint4 *p, uint64_t pol) {
  uint4 v;
  if constexpr (LD == kPlain) {
    v = *p;
  } else if constexpr (LD == kNc) {
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  } else {
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 "
                 "{%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(pol));
  }
  return v;
}

__device__ __forceinline__ uint32_t cvt4(uint32_t a, uint32_t b, float s) {
  // bf16 pairs -> f32, times s, two e4m3 pairs (cvt.rn.satfinite).
  const float f0 = __uint_as_float(a << 16) * s,
              f1 = __uint_as_float(a & 0xffff0000u) * s;
  const float f2 = __uint_as_float(b << 16) * s,
              f3 = __uint_as_float(b & 0xffff0000u) * s;
  uint16_t lo, hi;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;" : "=h"(lo) : "f"(f0), "f"(f1));
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;" : "=h"(hi) : "f"(f2), "f"(f3));
  return uint32_t(lo) | (uint32_t(hi) << 16);
}

/// E elements a thread (E / 8 16-byte loads, one E-byte store), one chunk
/// of E a thread per iteration; PERSIST: grid-stride over chunks, else one
/// chunk a thread (the grid covers the tensor).
template <int E, int LD, bool PERSIST>
__global__ void cast_kernel(const uint4 *__restrict__ x,
                            uint8_t *__restrict__ q, int64_t n, float s) {
  constexpr int V = E / 8;
  uint64_t pol = 0;
  if constexpr (LD == kEvictFirst)
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;"
                 : "=l"(pol));
  const int64_t chunks = n / E;
  int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = PERSIST ? int64_t(gridDim.x) * blockDim.x : chunks;
  for (; c < chunks; c += stride) {
    uint4 w[V];
#pragma unroll
    for (int v = 0; v < V; ++v)
      w[v] = load16<LD>(x + c * V + v, pol);
    uint32_t o[V * 2];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      o[2 * v] = cvt4(w[v].x, w[v].y, s);
      o[2 * v + 1] = cvt4(w[v].z, w[v].w, s);
    }
    if constexpr (E == 8) {
      *reinterpret_cast<uint2 *>(q + c * E) = make_uint2(o[0], o[1]);
    } else {
#pragma unroll
      for (int k = 0; k < V * 2; k += 4)
        *reinterpret_cast<uint4 *>(q + c * E + 4 * k) =
            make_uint4(o[k], o[k + 1], o[k + 2], o[k + 3]);
    }
  }
}

struct Variant {
  std::string name;
  std::function<void(cudaStream_t)> run;
  bool check = true;
};

float time_ms(const Variant &v, cudaStream_t st, int reps) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  v.run(st); // warm
  CK(cudaStreamSynchronize(st));
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a, st));
    v.run(st);
    CK(cudaEventRecord(b, st));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return t[t.size() / 2];
}

template <int E, int LD, bool PERSIST>
Variant make(const char *name, const uint4 *x, uint8_t *q, int64_t n, float s,
             int threads, int blocks_per_sm, int sms) {
  Variant v;
  v.name = name;
  v.run = [=](cudaStream_t st) {
    const int64_t chunks = n / E;
    int64_t grid = (chunks + threads - 1) / threads;
    if (PERSIST)
      grid = std::min<int64_t>(grid, int64_t(sms) * blocks_per_sm);
    cast_kernel<E, LD, PERSIST><<<unsigned(grid), threads, 0, st>>>(x, q, n, s);
  };
  return v;
}

} // namespace

int main(int argc, char **argv) {
  const int64_t M = argc > 2 ? std::atoll(argv[1]) : 16384;
  const int64_t N = argc > 2 ? std::atoll(argv[2]) : 16384;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 21;
  const int64_t n = M * N;
  if (n % 64 != 0) {
    std::fprintf(stderr, "M * N must be a multiple of 64\n");
    return 2;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::printf("device %s, %d SMs, L2 %d MiB; M=%lld N=%lld, median of %d\n",
              prop.name, sms, prop.l2CacheSize >> 20, (long long)M,
              (long long)N, reps);
  uint16_t *x;
  uint8_t *q, *ref;
  float *scale, *scale_inv;
  void *cpy;
  CK(cudaMalloc(&x, n * 2));
  CK(cudaMalloc(&q, n));
  CK(cudaMalloc(&ref, n));
  CK(cudaMalloc(&cpy, n * 2));
  CK(cudaMalloc(&scale, 4));
  CK(cudaMalloc(&scale_inv, 4));
  {
    std::vector<uint16_t> h(n);
    uint32_t r = 12345;
    for (int64_t i = 0; i < n; ++i) {
      r = r * 1664525u + 1013904223u;
      // bf16 of a value in about [-8, 8) with a random mantissa.
      h[i] = uint16_t(((r >> 16) & 0x80ffu) |
                      (uint32_t(0x3c + ((r >> 9) & 7)) << 7));
    }
    CK(cudaMemcpy(x, h.data(), n * 2, cudaMemcpyHostToDevice));
  }
  const float s = 2.0f;
  CK(cudaMemcpy(scale, &s, 4, cudaMemcpyHostToDevice));
  cudaStream_t st;
  CK(cudaStreamCreate(&st));

  std::vector<Variant> vs;
  {
    Variant c;
    c.name = "memcpy (2 B read + 2 B write an element)";
    c.run = [=](cudaStream_t st) {
      CK(cudaMemcpyAsync(cpy, x, n * 2, cudaMemcpyDeviceToDevice, st));
    };
    c.check = false;
    vs.push_back(c);
  }
  {
    fusion_rt_quant_scheme sch;
    fusion_rt_quant_scheme_init(&sch);
    sch.format = FUSION_RT_FORMAT_FP8_E4M3;
    sch.tensor_scaling = FUSION_RT_TENSOR_SCALING_DELAYED;
    auto view = [](void *d, int32_t dt, int rank, int64_t a, int64_t b) {
      fusion_rt_tensor t;
      std::memset(&t, 0, sizeof t);
      t.data = d, t.dtype = dt, t.rank = rank;
      t.sizes[0] = a, t.strides[0] = rank == 2 ? b : 1;
      if (rank == 2)
        t.sizes[1] = b, t.strides[1] = 1;
      return t;
    };
    // The runtime's call with `scheme` into `codes` (the delayed scale
    // given when `delayed`).
    auto ours = [=](const char *name, fusion_rt_quant_scheme scheme,
                    uint8_t *codes, bool delayed) {
      Variant v;
      v.name = name;
      v.check = false;
      v.run = [=](cudaStream_t st) {
        fusion_rt_tensor in = view(x, FUSION_RT_BF16, 2, M, N);
        fusion_rt_quant_outputs out;
        fusion_rt_quant_outputs_init(&out);
        out.rowwise_data = view(codes, FUSION_RT_F8E4M3, 2, M, N);
        out.scale_inv = view(scale_inv, FUSION_RT_F32, 1, 1, 0);
        if (delayed)
          out.scale = view(scale, FUSION_RT_F32, 1, 1, 0);
        fusion_rt_status e =
            fusion_rt_quantize(&in, &scheme, &out, nullptr, st);
        if (e != 0) {
          std::fprintf(stderr, "fusion_rt_quantize: status %d %s\n", int(e),
                       fusion_rt_last_error_message());
          std::exit(3);
        }
      };
      return v;
    };
    vs.push_back(ours("fusion_rt_quantize (delayed, rowwise)", sch, ref, true));
    // Current scaling: the amax pass, then the cast (scale from the amax).
    fusion_rt_quant_scheme cur = sch;
    cur.tensor_scaling = FUSION_RT_TENSOR_SCALING_CURRENT;
    vs.push_back(ours("fusion_rt_quantize (current scaling: amax + cast)", cur,
                      q, false));
  }
  const uint4 *xv = reinterpret_cast<const uint4 *>(x);
  vs.push_back(make<16, kPlain, false>(
      "E16 plain, 512 thr, one chunk a thread (TE's shape)", xv, q, n, s, 512,
      0, sms));
  vs.push_back(make<16, kPlain, false>("E16 plain, 256 thr, one chunk a thread",
                                       xv, q, n, s, 256, 0, sms));
  vs.push_back(make<16, kNc, false>("E16 nc, 512 thr, one chunk a thread", xv,
                                    q, n, s, 512, 0, sms));
  vs.push_back(make<16, kEvictFirst, false>(
      "E16 nc+evict_first, 512 thr, one chunk", xv, q, n, s, 512, 0, sms));
  vs.push_back(make<8, kPlain, false>("E8 plain, 256 thr, one chunk a thread",
                                      xv, q, n, s, 256, 0, sms));
  vs.push_back(make<32, kPlain, false>("E32 plain, 256 thr, one chunk a thread",
                                       xv, q, n, s, 256, 0, sms));
  vs.push_back(make<32, kNc, false>("E32 nc, 128 thr, one chunk a thread", xv,
                                    q, n, s, 128, 0, sms));
  vs.push_back(make<16, kPlain, true>(
      "E16 plain, 512 thr, persistent 4 blocks/SM", xv, q, n, s, 512, 4, sms));
  vs.push_back(make<16, kNc, true>("E16 nc, 128 thr, persistent 16 blocks/SM",
                                   xv, q, n, s, 128, 16, sms));
  vs.push_back(make<32, kNc, true>("E32 nc, 128 thr, persistent 16 blocks/SM",
                                   xv, q, n, s, 128, 16, sms));
  vs.push_back(make<16, kPlain, true>(
      "E16 plain, 256 thr, persistent 8 blocks/SM", xv, q, n, s, 256, 8, sms));
  // The occupancy of the runtime's stream kernels (128-thread blocks, 9 or
  // 12 resident a SM) against a full SM (16).
  vs.push_back(make<16, kNc, true>("E16 nc, 128 thr, persistent 9 blocks/SM",
                                   xv, q, n, s, 128, 9, sms));
  vs.push_back(make<16, kNc, true>("E16 nc, 128 thr, persistent 12 blocks/SM",
                                   xv, q, n, s, 128, 12, sms));
  vs.push_back(make<32, kNc, true>("E32 nc, 128 thr, persistent 9 blocks/SM",
                                   xv, q, n, s, 128, 9, sms));

  // Reference codes from the runtime (delayed scaling, scale 2).
  vs[1].run(st);
  CK(cudaStreamSynchronize(st));
  std::vector<uint8_t> hr(n), hq(n);
  CK(cudaMemcpy(hr.data(), ref, n, cudaMemcpyDeviceToHost));
  const double bytes = double(n) * 3; // 2 B read + 1 B written an element
  double copy_gbs = 0;
  std::printf("%-58s %10s %9s %8s %s\n", "variant", "us", "GB/s", "of copy",
              "codes");
  for (size_t i = 0; i < vs.size(); ++i) {
    const float ms = time_ms(vs[i], st, reps);
    double gbs = (i == 0 ? double(n) * 4 : bytes) / (ms * 1e-3) / 1e9;
    if (i == 0)
      copy_gbs = gbs;
    std::string chk = "-";
    if (vs[i].check) {
      CK(cudaMemset(q, 0, n));
      vs[i].run(st);
      CK(cudaStreamSynchronize(st));
      CK(cudaMemcpy(hq.data(), q, n, cudaMemcpyDeviceToHost));
      int64_t bad = 0;
      for (int64_t k = 0; k < n; ++k)
        bad += hq[k] != hr[k];
      chk = bad == 0 ? "equal" : std::to_string(bad) + " differ";
    }
    std::printf("%-58s %10.1f %9.0f %7.1f%% %s\n", vs[i].name.c_str(), ms * 1e3,
                gbs, 100.0 * gbs / copy_gbs, chk.c_str());
  }
  return 0;
}
