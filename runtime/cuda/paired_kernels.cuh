//===- paired_kernels.cuh - shared part of the paired projection paths -*- CUDA -*-===//
//
// What the paths of the CUDA paired projection share (paired_projection.cu
// has the overview and the entry point; paired_gemv.cu and paired_mma.cu
// the two one-launch paths): the kernel parameters, element access and
// epilogues, 16-byte vectors, the warp reduction, the PDL prologue and the
// host-side launch helper. The PTX they issue is in ptx.cuh.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_CUDA_PAIRED_KERNELS_CUH
#define FUSION_RT_CUDA_PAIRED_KERNELS_CUH

#include "common/convert.h"
#include "common/epilogue.h"
#include "common/paired_plan.h"
#include "common/tuning.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_status.h"
#include "cuda/ptx.cuh"
#include "src/backend.h"

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace cg = cooperative_groups;

namespace fusion_rt {
namespace paired {

using cuda::cuda_fail;
using cuda::fail;
using cuda::where;
// The PTX the paths issue (cuda/ptx.cuh, "paired projection").
using cuda::cluster_arrive_relaxed;
using cuda::cluster_arrive_release;
using cuda::cluster_wait;
using cuda::cp_async16;
using cuda::cp_async_wait_all;
using cuda::ldg_nc16;
using cuda::mma16816;
using cuda::pdl_launch_dependents;
using cuda::pdl_wait;
using cuda::prefetch_l2;
using cuda::smem_addr;
using cuda::st_dsmem;

//===--- parameters ---------------------------------------------------------===//

/// One output's epilogue and destination.
struct OutParams {
  void *ptr = nullptr;
  int64_t rs = 0, cs = 0;
  int32_t dtype = FUSION_RT_F32;
  int32_t kind = 0;
  int32_t round = 0; ///< fusion_rt_accumulator_round of y before the epilogue
  const void *bias = nullptr;
  int64_t bias_cs = 0;
  int32_t bias_dtype = FUSION_RT_F32;
  const void *scale = nullptr;
  int64_t scale_cs = 0;
  int32_t scale_dtype = FUSION_RT_F32;
};

/// The quantizing epilogue of the gemv path (paired_gemv.cu,
/// quant_epilogue): fusion_rt_paired_projection_quantize at decode sizes in
/// one kernel. The gated value is rounded to `inter` (as the two-step call
/// stores it) and kept in shared memory; a cluster of cy = 32 / WR CTAs
/// along y holds the 32 columns of one MXFP8 block, whose rowwise codes and
/// scale it writes as the MX kernels compute them. cy = 0: no quantizing
/// epilogue (the value goes to out[0]).
struct QuantEpi {
  int32_t cy = 0;
  int32_t format = 0, rounding = 0,
          inter = 0;      ///< QuantFormat (MXFP8), scale rounding
  bool propagate = false; ///< NaN policy PROPAGATE
  uint8_t *rd = nullptr;  ///< codes [M, H]
  int64_t rd_rs = 0, rd_cs = 0;
  uint8_t *rsc = nullptr; ///< compact E8M0 scales [M, ceil(H / 32)]
  int64_t rsc_rs = 0, rsc_cs = 0;
};

struct Params {
  const char *x = nullptr; ///< lhs [M, K]
  int64_t x_rs = 0, x_cs = 0;
  const char *w[2] = {nullptr, nullptr}; ///< weights [H_i, K]
  int64_t w_rs[2] = {0, 0}, w_cs[2] = {0, 0};
  /// Row groups of a weight (Mat::grp, gs): row g * w_grp + r at g * w_gs
  /// + r * w_rs; w_grp = 0: rows evenly spaced. w_row_ptr reads them.
  int64_t w_grp[2] = {0, 0}, w_gs[2] = {0, 0};
  int64_t M = 0, K = 0;
  int64_t H[2] = {0, 0};
  int32_t gated_kind = -1;
  OutParams out[2];
  // gemv path
  int64_t chunks = 0;         ///< K / VEC
  int64_t chunks_per_cta = 0; ///< of one cluster rank
  int64_t chunks_per_warp = 0; ///< of one warp (K split WK ways in a CTA)
  int64_t units = 0;          ///< warp units (rows / RPW, or gated H0)
  int32_t split = 1;          ///< S: cluster size (K split across CTAs)
  int32_t wr = 4, wk = 1;     ///< warps of a CTA along rows and along K
  int32_t pdl = 0;            ///< launched with programmatic serialization
  /// gemv: byte w of warp_map = (w % wr) | (w / wr) << 4 for warp w < 8
  uint64_t warp_map = 0;
  // blas path: fp32 y_i [M, H_i], row stride y_ld[i]
  const float *y[2] = {nullptr, nullptr};
  int64_t y_ld[2] = {0, 0};
  QuantEpi quant; ///< gemv path, gated: the quantizing epilogue (cy > 0)
};


namespace {

/// Reads fp32 at shared address `addr` of cluster rank `rank` (mapa +
/// ld.shared::cluster; st_dsmem's counterpart).
__device__ __forceinline__ float ld_dsmem(uint32_t addr, uint32_t rank) {
  uint32_t remote;
  float v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"(addr), "r"(rank));
  asm volatile("ld.shared::cluster.f32 %0, [%1];"
               : "=f"(v)
               : "r"(remote)
               : "memory");
  return v;
}

//===--- element access ------------------------------------------------------===//

__device__ __forceinline__ float load_elem(const void *p, int32_t dtype, int64_t i) {
  if (dtype == FUSION_RT_F32)
    return static_cast<const float *>(p)[i];
  const uint16_t h = static_cast<const uint16_t *>(p)[i];
  // cvt.f32.f16: exact, as the bit-level f16_to_f32, in one instruction.
  return dtype == FUSION_RT_BF16 ? bf16_to_f32(h) : __half2float(__ushort_as_half(h));
}

/// Epilogue of output `o`, column n, applied to fp32 `y`, stored at (m, n).
__device__ __forceinline__ void finish(const OutParams &o, int64_t m, int64_t n,
                                       float v) {
  const int64_t off = m * o.rs + n * o.cs;
  if (o.dtype == FUSION_RT_F32)
    static_cast<float *>(o.ptr)[off] = v;
  else if (o.dtype == FUSION_RT_BF16)
    static_cast<uint16_t *>(o.ptr)[off] = f32_to_bf16(v);
  else
    static_cast<uint16_t *>(o.ptr)[off] = f32_to_f16(v);
}

__device__ __forceinline__ float epilogue_of(const OutParams &o, int64_t n, float y) {
  const bool hb = o.bias != nullptr, hs = o.scale != nullptr;
  const float b = hb ? load_elem(o.bias, o.bias_dtype, n * o.bias_cs) : 0.f;
  const float s = hs ? load_elem(o.scale, o.scale_dtype, n * o.scale_cs) : 1.f;
  return apply_epilogue(o.kind, biased_accumulator(o.round, y, hb, b), hs, s);
}

/// Gated output n of token m from y0 (gate) and y1 (up).
__device__ __forceinline__ float gated_of(const Params &p, int64_t n, float a,
                                          float g) {
  const OutParams &o0 = p.out[0], &o1 = p.out[1];
  const float b0 = o0.bias ? load_elem(o0.bias, o0.bias_dtype, n * o0.bias_cs) : 0.f;
  const float b1 = o1.bias ? load_elem(o1.bias, o1.bias_dtype, n * o1.bias_cs) : 0.f;
  return gated_forward(p.gated_kind, biased_accumulator(o0.round, a, o0.bias, b0),
                       biased_accumulator(o1.round, g, o1.bias, b1), ActParams{});
}

//===--- 16-byte vectors ------------------------------------------------------===//

/// 16-byte read-only load through L1 (lhs: re-read by the 4 warps of a CTA).
__device__ __forceinline__ uint4 ld_cached(const void *ptr) {
  return __ldg(static_cast<const uint4 *>(ptr));
}

template <typename T> struct Vec;
template <> struct Vec<__nv_bfloat16> {
  static constexpr int N = 8;
  static __device__ __forceinline__ void to_f32(const uint4 &u, float (&f)[8]) {
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      f[2 * i] = __uint_as_float(w[i] << 16);
      f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
  }
};
template <> struct Vec<__half> {
  static constexpr int N = 8;
  static __device__ __forceinline__ void to_f32(const uint4 &u, float (&f)[8]) {
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      __half2 h;
      memcpy(&h, &w[i], 4);
      const float2 t = __half22float2(h);
      f[2 * i] = t.x;
      f[2 * i + 1] = t.y;
    }
  }
};
template <> struct Vec<float> {
  static constexpr int N = 4;
  static __device__ __forceinline__ void to_f32(const uint4 &u, float (&f)[4]) {
    f[0] = __uint_as_float(u.x);
    f[1] = __uint_as_float(u.y);
    f[2] = __uint_as_float(u.z);
    f[3] = __uint_as_float(u.w);
  }
};

/// Dot product of one 16-byte chunk: fma over its VEC elements in k order,
/// from 0. The gemv kernels add these per-chunk sums to the lane's
/// accumulator in k order, so each chunk's fma chain can run as soon as its
/// loads arrive, whatever order the loads were issued in.
template <int VEC>
__device__ __forceinline__ float chunk_dot(const float (&x)[VEC], const float (&w)[VEC]) {
  float q = 0.f;
#pragma unroll
  for (int e = 0; e < VEC; ++e)
    q = __fmaf_rn(x[e], w[e], q);
  return q;
}

/// The PDL prologue of both paths: `leader` bulk-prefetches the 16-byte
/// chunks [cw0, cw1) of each of its N weight rows (nullptr: none) into L2,
/// then every thread waits for the preceding grids and lets the next kernel
/// start launching (see the gemv kernel's comment).
template <int N>
__device__ __forceinline__ void pdl_prologue(const char *const (&wrow)[N], bool leader,
                                             int64_t cw0, int64_t cw1) {
  if (leader && cw1 > cw0) {
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (wrow[i])
        prefetch_l2(wrow[i] + cw0 * 16, uint32_t((cw1 - cw0) * 16));
  }
  pdl_wait();
  pdl_launch_dependents();
}

constexpr int ilog2(int v) { return v <= 1 ? 0 : 1 + ilog2(v / 2); }

/// Warp reduce-scatter of V <= 32 values per lane: returns the sum over the
/// 32 lanes of value index (lane >> (5 - log2 V)). Butterfly: stage s
/// exchanges half of the remaining values with lane ^ (16 >> s); the last
/// 5 - log2 V stages add whole values. V + 4 shuffles instead of 5 V.
/// Stage of warp_reduce_scatter with C values left: lanes with bit `O` set
/// keep the upper half, the others the lower half; each adds the half its
/// partner lane (lane ^ O) sends. Recursion keeps every index compile-time.
template <int V, int C, int O>
__device__ __forceinline__ void reduce_stage(float (&v)[V], int lane) {
  if constexpr (C > 1) {
    const bool upper = (lane & O) != 0;
#pragma unroll
    for (int j = 0; j < C / 2; ++j) {
      const float send = upper ? v[j] : v[j + C / 2];
      const float keep = upper ? v[j + C / 2] : v[j];
      v[j] = keep + __shfl_xor_sync(0xffffffffu, send, O);
    }
    reduce_stage<V, C / 2, O / 2>(v, lane);
  }
}

/// Warp reduce-scatter of V <= 32 values per lane: returns the sum over the
/// 32 lanes of value index (lane >> (5 - log2 V)). Butterfly: stage s
/// exchanges half of the remaining values with lane ^ (16 >> s); the last
/// 5 - log2 V stages add whole values. V + 4 shuffles instead of 5 V.
template <int V>
__device__ __forceinline__ float warp_reduce_scatter(float (&v)[V], int lane) {
  constexpr int L = ilog2(V);
  static_assert((1 << L) == V && V <= 32, "V must be a power of two <= 32");
  reduce_stage<V, V, 16>(v, lane);
  float r = v[0];
#pragma unroll
  for (int o = 16 >> L; o >= 1; o >>= 1)
    r += __shfl_xor_sync(0xffffffffu, r, o);
  return r;
}

/// Address of row r of weight wi (Params::w_grp). Both weights' fields are
/// read and one selected: no indexed parameter load waits on wi.
template <typename T>
__device__ __forceinline__ const char *w_row_ptr(const Params &p, int wi,
                                                 int64_t r) {
  const char *base = wi == 0 ? p.w[0] : p.w[1];
  const int64_t rs = wi == 0 ? p.w_rs[0] : p.w_rs[1];
  const int64_t grp = wi == 0 ? p.w_grp[0] : p.w_grp[1];
  const int64_t gs = wi == 0 ? p.w_gs[0] : p.w_gs[1];
  return base + grouped_row_offset(r, rs, grp, gs) * int64_t(sizeof(T));
}

//===--- host side ----------------------------------------------------------------===//

inline int64_t esize_of(int32_t dt) { return dt == FUSION_RT_F32 ? 4 : 2; }

inline bool aligned16(const void *ptr) {
  return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0;
}

/// 16-byte loads along the rows of a [rows, K] view.
inline bool vec_rows(const Mat &a, int64_t es) {
  return (a.cs == 1 || a.cols <= 1) && aligned16(a.data) &&
         ((a.rs * es) % 16 == 0 || a.rows <= 1) && (a.gs * es) % 16 == 0;
}

/// Launches `kernel(p)`: a cluster of (p.split, 1, 1) when p.split > 1, of
/// (1, p.quant.cy, 1) when the gemv path quantizes (split is then 1), and
/// programmatic stream serialization when p.pdl.
template <typename Kernel>
cudaError_t launch_ex(Kernel kernel, const Params &p, dim3 grid, unsigned threads,
                      size_t smem, cudaStream_t stream) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (p.split > 1 || p.quant.cy > 1) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n].val.clusterDim.x = unsigned(p.split);
    attr[n].val.clusterDim.y = p.quant.cy > 1 ? unsigned(p.quant.cy) : 1u;
    attr[n].val.clusterDim.z = 1;
    ++n;
  }
  if (p.pdl) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n].val.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  cfg.attrs = attr;
  cfg.numAttrs = n;
  return cudaLaunchKernelEx(&cfg, kernel, p);
}

} // namespace

/// The gemv path (paired_gemv.cu) and the mma path (paired_mma.cu).
/// cudaErrorNotSupported when the plan does not fit (nothing launched; the
/// caller then takes another path).
cudaError_t launch_gemv(Params p, int32_t dt, cudaStream_t stream);
cudaError_t launch_mma(Params p, int32_t dt, cudaStream_t stream);

} // namespace paired
} // namespace fusion_rt

#endif // FUSION_RT_CUDA_PAIRED_KERNELS_CUH
