//===- paired_projection.cu - CUDA paired projection (GDN gates, gate/up) -*- CUDA -*-===//
//
// fusion_rt_paired_projection_run on device memory. Four paths, chosen per
// call (docs/paired-projections.md has the measurements behind the choice;
// the selector is runtime/common/paired_plan.h):
//
//  gemv     M <= 16 tokens or M*K*(H0+H1) <= 2^23 (f32: 2^24) multiply-adds, with
//           16-byte-loadable views. ONE launch of paired_gemv_kernel, by
//           default without a cluster: one CTA per (row group, token),
//           K split over the CTA's warps so that every lane issues all its
//           16-byte weight loads before its first FMA, the warps' partials
//           added through shared memory, both epilogues in the same launch
//           (their bias / scale loaded before the weights arrive). A cluster
//           split of K (S <= 8, DSMEM push reduction) remains available as
//           an override. No workspace, no atomics: deterministic.
//  mma      16-bit operands, past the gemv path up to kMmaMaxMacs: ONE
//           launch of paired_mma_kernel, tensor cores (mma.sync m16n8k16,
//           fp32 accumulation) on fragments loaded straight from global
//           memory with 16-byte loads, K split over the CTA's warps and a
//           cluster (DSMEM reduction), both epilogues in the same launch.
//  blas     larger M: cuBLAS into an fp32 workspace (stream-ordered
//           allocation) — one GemmEx of H0 + H1 rows when the weights are
//           stacked in one buffer, one strided-batched GemmEx when they share
//           shape and layout, else two GemmEx — then paired_epilogue_kernel.
//  generic  any strides (views cuBLAS cannot take, K not a multiple of the
//           vector width): one thread per output, sequential fp32 over K
//           with separate multiply and add — bit-identical to the CPU
//           reference's accumulation.
//
// Bytes the gemv path must move: (H0 + H1) * K * esize weights + M * K * esize
// lhs (L2 serves the re-reads by other row groups) + outputs. At the GDN
// shapes that is 0.25-1 MiB, under 0.3 us of HBM time: the kernel is latency
// bound, which is why one launch and a full machine matter more than bytes.
//
// Everything is stream-ordered and capturable in CUDA graphs, except that the
// first call on a device creates the cuBLAS handle (do it before capturing).
//
// Debug / benchmark overrides (runtime/common/tuning.def: the environment,
// read once per process, or fusion_rt_set_tuning):
//   FUSION_RT_PAIRED_PATH        auto | gemv | mma | blas | generic
//   FUSION_RT_PAIRED_GEMV_MAX_M  largest M that takes the gemv path
//   FUSION_RT_PAIRED_SPLIT       cluster size S (1..8) of the gemv and mma paths
//   FUSION_RT_PAIRED_WR          row warps per CTA of the gemv path
//   FUSION_RT_PAIRED_WK          K-split warps per CTA of the gemv and mma paths
//   FUSION_RT_PAIRED_MT          gemv: largest token tile (1..16); mma: tokens
//                                per tile (16, 32)
//   FUSION_RT_PAIRED_RPW         gemv: weight rows per warp (1, 2); mma: rows
//                                per tile (8, 16)
//   FUSION_RT_PAIRED_LEAN        0: never the lean gemv instance (default 1)
//   FUSION_RT_PAIRED_DECODE      0: never the decode gemv instance (default 1)
//   FUSION_RT_PAIRED_PDL         1: programmatic dependent launch (default 0):
//                                the gemv and mma kernels prefetch their
//                                weights into L2 while the kernel before
//                                them finishes; every kernel lets the next
//                                one start once it is past its wait
//
//===----------------------------------------------------------------------===//
#include "common/convert.h"
#include "common/epilogue.h"
#include "common/paired_plan.h"
#include "common/tuning.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_status.h"
#include "src/backend.h"

#include <cooperative_groups.h>
#include <cublas_v2.h>
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
namespace {

using cuda::cuda_fail;
using cuda::fail;
using cuda::where;

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

struct Params {
  const char *x = nullptr; ///< lhs [M, K]
  int64_t x_rs = 0, x_cs = 0;
  const char *w[2] = {nullptr, nullptr}; ///< weights [H_i, K]
  int64_t w_rs[2] = {0, 0}, w_cs[2] = {0, 0};
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
};

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
  return apply_epilogue(o.kind, round_accumulator(o.round, y), hb, b, hs, s);
}

/// Gated output n of token m from y0 (gate) and y1 (up).
__device__ __forceinline__ float gated_of(const Params &p, int64_t n, float a,
                                          float g) {
  const OutParams &o0 = p.out[0], &o1 = p.out[1];
  a = round_accumulator(o0.round, a);
  g = round_accumulator(o1.round, g);
  if (o0.bias)
    a = a + load_elem(o0.bias, o0.bias_dtype, n * o0.bias_cs);
  if (o1.bias)
    g = g + load_elem(o1.bias, o1.bias_dtype, n * o1.bias_cs);
  return gated_forward(p.gated_kind, a, g, ActParams{});
}

//===--- 16-byte vectors ------------------------------------------------------===//

/// 16-byte read-only load that does not allocate in L1 (weights: read once).
__device__ __forceinline__ uint4 ld_stream(const void *ptr) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(ptr));
  return v;
}
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

/// Shared-state-space address of `ptr` (a __shared__ object of this CTA).
__device__ __forceinline__ uint32_t smem_addr(const void *ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

/// Stores fp32 `v` at shared address `addr` of cluster rank `rank`
/// (distributed shared memory: mapa + st.shared::cluster, never a generic
/// address).
__device__ __forceinline__ void st_dsmem(uint32_t addr, uint32_t rank, float v) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"(addr), "r"(rank));
  asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(remote), "f"(v) : "memory");
}

/// Cluster barrier halves (PTX barrier.cluster): arrive without ordering,
/// arrive with release, wait with acquire.
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
}
__device__ __forceinline__ void cluster_arrive_release() {
  asm volatile("barrier.cluster.arrive.release;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
}

/// Programmatic dependent launch (PTX griddepcontrol, sm_90+). `wait`
/// blocks until the grids this one depends on have completed and their
/// memory is visible (a no-op when launched without the PDL attribute);
/// `launch_dependents` lets the next kernel of the stream start launching.
__device__ __forceinline__ void pdl_wait() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
}
__device__ __forceinline__ void pdl_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
/// Bulk prefetch of [ptr, ptr + bytes) into L2 (bytes a multiple of 16,
/// ptr 16-byte aligned). A prefetch into L2 cannot return stale data: L2 is
/// where every write of the preceding kernels lands, so it may run before
/// pdl_wait().
__device__ __forceinline__ void prefetch_l2(const void *ptr, uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(ptr), "r"(bytes)
               : "memory");
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

//===--- gemv path --------------------------------------------------------------===//

/// 16-byte asynchronous global -> shared copy (cp.async, L2 only).
__device__ __forceinline__ void cp_async16(uint32_t saddr, const void *gptr) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(saddr), "l"(gptr)
               : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;" ::: "memory");
}

/// Grid (S, G, Z), cluster (S, 1, 1) when S > 1, 32 * WR * WK threads.
///
/// Work split: warp (wr, wk) = (warp % WR, warp / WR) of CTA (rank, y, z)
/// owns warp unit u = y * WR + wr (RPW weight rows: non-gated rows
/// u*RPW .. of [w0; w1]; gated w0[u] and w1[u]), tokens z * MT .. + MT, and
/// of K the chunks (VEC elements each) [c0 + wk * cpw, + cpw) of the rank's
/// slice [c0, c0 + cpc), c0 = rank * cpc; lane l takes the chunks l, l + 32,
/// ... of the warp's range. All weight loads of a lane (up to kBatch chunks,
/// the host keeps it there) are issued before its first FMA. For MT >= 4 the
/// CTA stages its lhs slice [MT, cpc] in shared memory with cp.async (issued
/// right after the weight loads), so the lhs is read once per CTA, not once
/// per warp.
///
/// Reduction, all in a fixed order: per lane, each chunk's fma chain over
/// its elements (k order, from 0: chunk_dot) added to the accumulator in
/// chunk (k) order; the butterfly over the 32 lanes
/// (warp_reduce_scatter); the WK warps of a row group added in wk order
/// through shared memory (one __syncthreads); if S > 1, each rank pushes
/// its partial of output o into slot [rank][o] of o's owner rank's shared
/// memory (st.shared::cluster), one cluster barrier (release / acquire)
/// later the owner adds the S slots in rank order and applies the epilogue.
/// A relaxed cluster arrive at the start, waited on just before the remote
/// stores, guarantees every CTA of the cluster is running before anyone
/// writes into it; after the exchange barrier nobody touches another CTA's
/// shared memory, so CTAs exit without a third barrier. With S = 1 there is
/// no cluster and no cluster barrier.
template <typename T, int MT, int RPW, bool GATED, bool LEAN>
__global__ void __launch_bounds__(kMaxThreads, 1)
    paired_gemv_kernel(const __grid_constant__ Params p) {
  using VT = Vec<T>;
  constexpr int VEC = VT::N;
  constexpr int V = RPW * MT;   // partial sums per lane
  constexpr bool XS = MT >= 4;  // lhs staged in shared memory
  constexpr int XB = XS ? 1 : kBatch;
  __shared__ float part[kMaxCluster][kMaxWarps * V];
  __shared__ float red[kMaxWarps * V];
  extern __shared__ uint4 xs[]; // [MT][cpc] when XS
  // LEAN: no cluster and one batch of loads per lane (the decode shapes),
  // compiled without the cluster exchange and the batch loop: less code to
  // fetch into a cold instruction cache on every call.
  const int S = LEAN ? 1 : p.split;
  if (S > 1)
    cluster_arrive_relaxed(); // "this CTA has started" (waited on below)

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int WR = p.wr, WK = p.wk;
  // (warp % WR, warp / WR) from the host's table: no integer division
  // ahead of the first weight load.
  const int wmap = int(p.warp_map >> (8 * warp));
  const int wr = wmap & 15, wk = (wmap >> 4) & 15;
  const int64_t unit = int64_t(blockIdx.y) * WR + wr;
  constexpr bool gated = GATED; // gated_forward is compiled into gated instances only
  const int64_t m0 = int64_t(blockIdx.z) * MT;
  const int rank = S > 1 ? int(cg::this_cluster().block_rank()) : 0;

  // Rows of this warp (nullptr: no row).
  const char *wrow[RPW];
#pragma unroll
  for (int i = 0; i < RPW; ++i) {
    wrow[i] = nullptr;
    if (unit < p.units) {
      int64_t r;
      int wi;
      if (gated) {
        wi = i;
        r = unit;
      } else {
        r = unit * RPW + i;
        wi = r < p.H[0] ? 0 : 1;
        r = wi == 0 ? r : r - p.H[0];
        if (r >= p.H[1] && wi == 1)
          r = -1;
      }
      // Both bases read, one selected: no indexed constant load (whose
      // address waits on wi) ahead of the first weight load.
      const char *base = wi == 0 ? p.w[0] : p.w[1];
      const int64_t rs = wi == 0 ? p.w_rs[0] : p.w_rs[1];
      if (r >= 0)
        wrow[i] = base + r * rs * int64_t(sizeof(T));
    }
  }
  const char *xrow[MT];
#pragma unroll
  for (int t = 0; t < MT; ++t)
    xrow[t] = m0 + t < p.M ? p.x + (m0 + t) * p.x_rs * int64_t(sizeof(T)) : nullptr;

  // Chunk indices in 32 bits (plan_gemv keeps K / VEC below 2^30).
  const int cpc = int(p.chunks_per_cta);
  const int c0 = rank * cpc;
  const int c1 = min(c0 + cpc, int(p.chunks));
  const int cw0 = c0 + wk * int(p.chunks_per_warp);
  const int cw1 = min(cw0 + int(p.chunks_per_warp), c1);

  // Programmatic dependent launch: this kernel may be running while the
  // kernel before it in the stream finishes. The weights' bytes are put
  // into L2 now (one bulk prefetch per warp row; the first token tile
  // only), everything else is read after pdl_wait(). The next kernel may
  // start launching once this one no longer waits, so that at most two
  // calls overlap.
  if (p.pdl)
    pdl_prologue(wrow, lane == 0 && blockIdx.z == 0, cw0, cw1);

  float acc[V];
#pragma unroll
  for (int v = 0; v < V; ++v)
    acc[v] = 0.f;

  uint4 wv[kBatch][RPW];
  uint4 xv[XB][XS ? 1 : MT];
  // Lane l takes the chunks cl, cl + 32, ... of [cw0, cw1): nl of them.
  // Its row and lhs pointers are advanced to chunk cl once, so that every
  // load below is base + a constant (lean) or base + 512 * batch index.
  const int cl = cw0 + lane;
  const int nl = cl < cw1 ? (cw1 - cl + 31) >> 5 : 0;
  const int64_t lbytes = cl * VEC * int64_t(sizeof(T));
  const char *wl[RPW];
#pragma unroll
  for (int i = 0; i < RPW; ++i)
    wl[i] = wrow[i] ? wrow[i] + lbytes : nullptr;
  const char *xl[MT];
#pragma unroll
  for (int t = 0; t < MT; ++t)
    xl[t] = xrow[t] ? xrow[t] + lbytes : nullptr;
  // Issues the loads of chunks cl + 32 * (jb + j), j < kBatch.
  auto load = [&](int jb) {
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const bool ok = jb + j < nl;
      const int64_t boff = int64_t(jb + j) * 32 * 16;
#pragma unroll
      for (int i = 0; i < RPW; ++i)
        wv[j][i] = ok && wl[i] ? ld_stream(wl[i] + boff) : make_uint4(0, 0, 0, 0);
      if constexpr (!XS) {
#pragma unroll
        for (int t = 0; t < MT; ++t)
          xv[j][t] = ok && xl[t] ? ld_cached(xl[t] + boff) : make_uint4(0, 0, 0, 0);
      }
    }
  };
  auto compute = [&](int jb) {
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int c = cl + 32 * (jb + j);
      if (jb + j < nl) {
        float wf[RPW][VEC];
#pragma unroll
        for (int i = 0; i < RPW; ++i)
          VT::to_f32(wv[j][i], wf[i]);
#pragma unroll
        for (int t = 0; t < MT; ++t) {
          float xf[VEC];
          if constexpr (XS)
            VT::to_f32(xs[int64_t(t) * cpc + (c - c0)], xf);
          else
            VT::to_f32(xv[j][t], xf);
#pragma unroll
          for (int i = 0; i < RPW; ++i)
            acc[i * MT + t] += chunk_dot<VEC>(xf, wf[i]);
        }
      }
    }
  };

  load(0);
  if constexpr (XS) {
    // Stage lhs [m0, m0 + MT) x chunks [c0, c0 + cpc) (zeros outside).
    const int n = c1 - c0;
    for (int e = threadIdx.x; e < MT * cpc; e += blockDim.x) {
      const int t = e / cpc;
      const int c = e - t * cpc;
      if (m0 + t < p.M && c < n)
        cp_async16(smem_addr(&xs[e]),
                   p.x + (m0 + t) * p.x_rs * int64_t(sizeof(T)) +
                       (c0 + c) * VEC * int64_t(sizeof(T)));
      else
        xs[e] = make_uint4(0, 0, 0, 0);
    }
  }
  // The output of this thread and its epilogue operands, loaded while the
  // weight loads are in flight (after them: nothing delays the first one).
  // Output (w, v) = (row warp, i * MT + t). With one warp per row group
  // (S = 1, WK = 1: `direct`) the warp's reduce-scatter leaves it in lane
  // v << kShift of warp w, which applies the epilogue itself; otherwise
  // thread o = w * V + v does, after the partials meet in shared memory.
  constexpr int kShift = 5 - ilog2(V);
  const bool direct = S == 1 && WK == 1;
  bool mine = false;
  int64_t om = 0, ou = 0, orow = 0;
  int ooi = 0;
  float pb = 0.f, ps = 1.f, pb1 = 0.f;
  {
    const int o = threadIdx.x;
    const int w = direct ? warp : o / V;
    const int v = direct ? lane >> kShift : o % V;
    const int i = v / MT, t = v % MT;
    ou = int64_t(blockIdx.y) * WR + w;
    om = m0 + t;
    mine = (direct ? (lane & ((1 << kShift) - 1)) == 0 : o < WR * V) && ou < p.units &&
           om < p.M && !(gated && i != 0);
    if (mine && gated) {
      const OutParams &o0 = p.out[0], &o1 = p.out[1];
      if (o0.bias)
        pb = load_elem(o0.bias, o0.bias_dtype, ou * o0.bias_cs);
      if (o1.bias)
        pb1 = load_elem(o1.bias, o1.bias_dtype, ou * o1.bias_cs);
    } else if (mine) {
      orow = ou * RPW + i;
      ooi = orow < p.H[0] ? 0 : 1;
      orow = ooi == 0 ? orow : orow - p.H[0];
      if (ooi == 1 && orow >= p.H[1])
        mine = false;
      const OutParams &oo = p.out[ooi];
      if (mine && oo.bias)
        pb = load_elem(oo.bias, oo.bias_dtype, orow * oo.bias_cs);
      if (mine && oo.scale)
        ps = load_elem(oo.scale, oo.scale_dtype, orow * oo.scale_cs);
    }
  }

  if constexpr (XS) {
    cp_async_wait_all();
    __syncthreads();
  }
  compute(0);
  if constexpr (!LEAN) {
    for (int jb = kBatch; cw0 + 32 * jb < cw1; jb += kBatch) {
      load(jb);
      compute(jb);
    }
  }

  const float r = warp_reduce_scatter<V>(acc, lane);
  // Epilogue of output (w, v) given its full sums (y1: the up half if
  // gated), with the bias / scale loaded above.
  auto emit = [&](float y, float y1) {
    if (!mine)
      return;
    if (gated) {
      const float ry = round_accumulator(p.out[0].round, y);
      const float ry1 = round_accumulator(p.out[1].round, y1);
      finish(p.out[0], om, ou,
             gated_forward(p.gated_kind, p.out[0].bias ? ry + pb : ry,
                           p.out[1].bias ? ry1 + pb1 : ry1, ActParams{}));
    } else {
      const OutParams &oo = p.out[ooi];
      finish(oo, om, orow, apply_epilogue(oo.kind, round_accumulator(oo.round, y),
                                          oo.bias != nullptr, pb,
                                          oo.scale != nullptr, ps));
    }
  };
  // The sums of this thread's output (y1: the up half if gated), then one
  // emit: the epilogue's code is in the kernel once.
  float y0 = 0.f, y1 = 0.f;
  if (direct) {
    // Gated: the up half of output v (v < MT) is value v + MT, MT << kShift
    // (= 16) lanes up.
    y0 = r;
    y1 = gated ? __shfl_down_sync(0xffffffffu, r, MT << kShift) : 0.f;
  } else {
    const int nout = WR * V; // partial outputs of this CTA: o = wr * V + i * MT + t
    if ((lane & ((1 << kShift) - 1)) == 0)
      red[wk * nout + wr * V + (lane >> kShift)] = r;
    __syncthreads();
    // Sum of the WK warps of output o, in wk order.
    auto sum_wk = [&](int o) {
      float y = red[o];
      for (int w = 1; w < WK; ++w)
        y += red[w * nout + o];
      return y;
    };
    const int o = threadIdx.x; // nout <= blockDim.x: one output per thread at most
    if (S == 1) {
      if (mine) {
        y0 = sum_wk(o);
        y1 = gated ? sum_wk(o + MT) : 0.f;
      }
    } else {
      // Owner rank of output o = wr * V + i * MT + t: by (wr, token) only, so
      // that the gate and up partials of a gated output meet at one owner.
      auto owner = [&](int q) { return ((q / V) * MT + (q % MT)) % S; };
      const float y = o < nout ? sum_wk(o) : 0.f;
      cluster_wait(); // every CTA of the cluster has started
      if (o < nout)
        st_dsmem(smem_addr(&part[rank][o]), uint32_t(owner(o)), y);
      cluster_arrive_release();
      cluster_wait();
      // mine: o < nout, and not the up half of a gated output.
      mine = mine && owner(o) == rank;
      if (mine) {
        float pv[kMaxCluster], pu[kMaxCluster];
#pragma unroll
        for (int s = 0; s < kMaxCluster; ++s) {
          pv[s] = s < S ? part[s][o] : 0.f;
          pu[s] = s < S && gated ? part[s][o + MT] : 0.f;
        }
#pragma unroll
        for (int s = 0; s < kMaxCluster; ++s)
          if (s < S) {
            y0 += pv[s];
            y1 += pu[s];
          }
      }
    }
  }
  emit(y0, y1);
}

/// The decode instance of the gemv path: the lean, one-token (MT = 1),
/// one-row-per-warp, non-gated, no-cluster, no-PDL plan whose present bias
/// and scale are f32 (the GDN gates at N <= 16), whose K split is even
/// (every lane of a row has exactly NB chunks: chunks == WK * cpw), with
/// WR = max(1, 4 / WK) row warps (decode_nb in paired_plan.h). It computes
/// exactly what paired_gemv_kernel computes for that plan, in the same
/// order (lane: chunk_dot of its chunks added in k order; the xor butterfly
/// over the warp; the WK warps added in wk order through shared memory), so
/// the two are bit-identical (FUSION_RT_PAIRED_DECODE=0 takes the general
/// instance; the GPU tests compare them).
/// Why it exists: on these shapes the call is latency bound and every
/// instruction on the path costs about 0.5-0.7 ns (instruction fetch;
/// docs/paired-projections.md, "Decode instance"), so this instance carries
/// only what its plans need; and its loads are not predicated (a warp past
/// the last row reads row 0 and writes nothing), which keeps them issued in
/// k order: predicated, ptxas issued the first chunk last, and the fma chain
/// that starts with it waited for every load.
template <typename T, int NB>
__global__ void __launch_bounds__(kMaxThreads, 1)
    paired_decode_kernel(const __grid_constant__ Params p) {
  using VT = Vec<T>;
  constexpr int VEC = VT::N;
  __shared__ float red[kMaxWarps];
  const int WK = p.wk, WR = p.wr; // WR * WK <= 8 warps, powers of two
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wr = warp & (WR - 1), wk = warp >> (WR >> 1); // WR: 1, 2 or 4
  const int m = blockIdx.z;
  const int units = int(p.units), h0 = int(p.H[0]);
  // Weight row of this warp: row u of [w0; w1] (row 0 past the last row).
  const int u0 = int(blockIdx.y) * WR + wr;
  const int u = u0 < units ? u0 : 0;
  const bool second = u >= h0;
  const int r = second ? u - h0 : u;
  const int64_t lbytes = int64_t(wk * int(p.chunks_per_warp) + lane) * 16;
  const char *wl = (second ? p.w[1] : p.w[0]) +
                   int64_t(r) * (second ? p.w_rs[1] : p.w_rs[0]) * int64_t(sizeof(T)) +
                   lbytes;
  const char *xl = p.x + int64_t(m) * p.x_rs * int64_t(sizeof(T)) + lbytes;
  uint4 wv[NB], xv[NB];
#pragma unroll
  for (int j = 0; j < NB; ++j) {
    wv[j] = ld_stream(wl + j * 512);
    xv[j] = ld_cached(xl + j * 512);
  }
  // The output of this thread: lane 0 of its warp (WK = 1), else thread
  // o < WR of warp 0, row blockIdx.y * WR + o; its bias / scale (f32).
  const int ou = int(blockIdx.y) * WR + (WK == 1 ? wr : int(threadIdx.x));
  const bool mine = (WK == 1 ? lane == 0 : int(threadIdx.x) < WR) && ou < units;
  const bool osecond = ou >= h0;
  const int orow = osecond ? ou - h0 : ou;
  const OutParams &oo = p.out[osecond ? 1 : 0];
  const float *bias = static_cast<const float *>(oo.bias);
  const float *scale = static_cast<const float *>(oo.scale);
  const float pb = mine && bias ? bias[int64_t(orow) * oo.bias_cs] : 0.f;
  const float ps = mine && scale ? scale[int64_t(orow) * oo.scale_cs] : 1.f;

  float acc = 0.f;
#pragma unroll
  for (int j = 0; j < NB; ++j) {
    float wf[VEC], xf[VEC];
    VT::to_f32(wv[j], wf);
    VT::to_f32(xv[j], xf);
    acc += chunk_dot<VEC>(xf, wf);
  }
#pragma unroll
  for (int o = 16; o >= 1; o >>= 1)
    acc += __shfl_xor_sync(0xffffffffu, acc, o);
  float y = acc;
  if (WK > 1) {
    if (lane == 0)
      red[wk * WR + wr] = acc;
    __syncthreads();
    if (int(threadIdx.x) < WR) {
      y = red[threadIdx.x];
      for (int w = 1; w < WK; ++w)
        y += red[w * WR + threadIdx.x];
    }
  }
  if (mine)
    finish(oo, m, orow, apply_epilogue(oo.kind, round_accumulator(oo.round, y),
                                       bias != nullptr, pb, scale != nullptr, ps));
}

//===--- mma path ---------------------------------------------------------------===//

/// D += A * B on the tensor cores (mma.sync m16n8k16, fp32 accumulation):
/// A 16 x 16 (a0..a3: 2 elements each), B 16 x 8 (b0, b1), D 16 x 8.
template <typename T>
__device__ __forceinline__ void mma16816(float (&d)[4], uint32_t a0, uint32_t a1,
                                         uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
  if constexpr (std::is_same<T, __nv_bfloat16>::value)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

constexpr int kMmaBatch = 4; ///< 32-K blocks whose loads a lane issues together

/// The mma path: Y = X * W^T for a CTA tile of TM * 16 tokens x NT * 8
/// weight rows (non-gated: rows y*NT*8 .. of [w0; w1]; gated, NT = 2: gate
/// rows y*8 .. of w0 and the same up rows of w1, so that both halves of an
/// output meet in one tile), K split over S cluster ranks and WK warps.
///
/// Fragments straight from global memory with 16-byte loads: the dot
/// product does not care in which order K is visited, so lane (g, q) =
/// (lane / 4, lane % 4) loads chunk 4b + q (8 consecutive K) of its rows
/// (weight row g of each n-tile; tokens g and g + 8 of each m-tile) and
/// feeds words 0, 1 of it to the block's first mma and words 2, 3 to the
/// second: A and B see the same permutation of K, so D is the exact product.
///
/// Reduction in a fixed order: mma accumulation over the warp's blocks;
/// the WK warps' tiles added in wk order through shared memory; with S > 1,
/// each rank pushes output e of the tile to rank owner(e) (DSMEM, as in the
/// gemv kernel), which adds the S partials in rank order and applies the
/// epilogue. Deterministic; no workspace, no atomics.
template <typename T, int TM, int NT, bool GATED>
__global__ void __launch_bounds__(kMaxThreads, 1)
    paired_mma_kernel(const __grid_constant__ Params p) {
  constexpr int NR = NT * 8;          // weight rows of the tile
  constexpr int TILE = TM * 16 * NR;  // e = token * NR + row
  __shared__ float red[kMaxWarps][TILE];
  __shared__ float part[kMaxCluster][TILE];
  const int S = p.split;
  if (S > 1)
    cluster_arrive_relaxed();
  const int lane = threadIdx.x & 31, wk = threadIdx.x >> 5;
  const int g = lane >> 2, q = lane & 3;
  constexpr bool gated = GATED;
  static_assert(!GATED || NT == 2, "a gated tile holds 8 gate and 8 up rows");
  const int rank = S > 1 ? int(cg::this_cluster().block_rank()) : 0;
  const int64_t m0 = int64_t(blockIdx.z) * TM * 16;

  const char *wrow[NT];
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    int wi;
    int64_t r;
    bool ok;
    if (gated) {
      wi = j;
      r = int64_t(blockIdx.y) * 8 + g;
      ok = r < p.H[0];
    } else {
      const int64_t rr = int64_t(blockIdx.y) * NR + 8 * j + g;
      wi = rr < p.H[0] ? 0 : 1;
      r = wi == 0 ? rr : rr - p.H[0];
      ok = wi == 0 || r < p.H[1];
    }
    wrow[j] = ok ? p.w[wi] + r * p.w_rs[wi] * int64_t(sizeof(T)) : nullptr;
  }
  const char *xrow[TM][2];
#pragma unroll
  for (int t = 0; t < TM; ++t)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t m = m0 + 16 * t + 8 * h + g;
      xrow[t][h] = m < p.M ? p.x + m * p.x_rs * int64_t(sizeof(T)) : nullptr;
    }

  const int64_t c0 = int64_t(rank) * p.chunks_per_cta;
  int64_t c1 = c0 + p.chunks_per_cta;
  c1 = c1 < p.chunks ? c1 : p.chunks;
  const int64_t cw0 = c0 + int64_t(wk) * p.chunks_per_warp;
  int64_t cw1 = cw0 + p.chunks_per_warp;
  cw1 = cw1 < c1 ? cw1 : c1;

  if (p.pdl)
    pdl_prologue(wrow, q == 0 && blockIdx.z == 0, cw0, cw1);

  float acc[TM][NT][4];
#pragma unroll
  for (int t = 0; t < TM; ++t)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        acc[t][j][e] = 0.f;

  for (int64_t cb = cw0; cb < cw1; cb += 4 * kMmaBatch) {
    uint4 wv[kMmaBatch][NT], xv[kMmaBatch][TM][2];
#pragma unroll
    for (int b = 0; b < kMmaBatch; ++b) {
      const int64_t c = cb + 4 * b + q;
      const bool ok = c < cw1;
      const int64_t off = c * 16;
#pragma unroll
      for (int j = 0; j < NT; ++j)
        wv[b][j] = ok && wrow[j] ? ld_stream(wrow[j] + off) : make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int t = 0; t < TM; ++t)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          xv[b][t][h] =
              ok && xrow[t][h] ? ld_cached(xrow[t][h] + off) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int b = 0; b < kMmaBatch; ++b)
#pragma unroll
      for (int t = 0; t < TM; ++t)
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          const uint4 &a = xv[b][t][0], &a8 = xv[b][t][1], &w = wv[b][j];
          mma16816<T>(acc[t][j], a.x, a8.x, a.y, a8.y, w.x, w.y);
          mma16816<T>(acc[t][j], a.z, a8.z, a.w, a8.w, w.z, w.w);
        }
  }

  // D fragment: acc[t][j][0..3] = (token g, row 2q), (g, 2q + 1),
  // (g + 8, 2q), (g + 8, 2q + 1) of m-tile t, n-tile j.
#pragma unroll
  for (int t = 0; t < TM; ++t)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int tok = 16 * t + g + 8 * (e >> 1), row = 8 * j + 2 * q + (e & 1);
        red[wk][tok * NR + row] = acc[t][j][e];
      }
  __syncthreads();
  const int WK = int(blockDim.x >> 5);
  auto sum_wk = [&](int e) {
    float y = red[0][e];
    for (int w = 1; w < WK; ++w)
      y += red[w][e];
    return y;
  };
  // Epilogue of tile output e (gated: e is a gate row, e + 8 its up row).
  auto emit = [&](int e, float y, float y1) {
    const int64_t m = m0 + e / NR;
    const int row = e % NR;
    if (m >= p.M)
      return;
    if (gated) {
      const int64_t n = int64_t(blockIdx.y) * 8 + row;
      if (row < 8 && n < p.H[0])
        finish(p.out[0], m, n, gated_of(p, n, y, y1));
      return;
    }
    const int64_t rr = int64_t(blockIdx.y) * NR + row;
    const int oi = rr < p.H[0] ? 0 : 1;
    const int64_t n = oi == 0 ? rr : rr - p.H[0];
    if (oi == 1 && n >= p.H[1])
      return;
    finish(p.out[oi], m, n, epilogue_of(p.out[oi], n, y));
  };
  auto mine = [&](int e) { return !gated || e % NR < 8; };

  if (S == 1) {
    for (int e = threadIdx.x; e < TILE; e += blockDim.x)
      if (mine(e))
        emit(e, sum_wk(e), gated ? sum_wk(e + 8) : 0.f);
    return;
  }
  // Owner rank of output e: gate row e and up row e + 8 share it.
  auto owner = [&](int e) { return ((e / NR) * 8 + e % 8) % S; };
  cluster_wait(); // every CTA of the cluster has started
  for (int e = threadIdx.x; e < TILE; e += blockDim.x)
    st_dsmem(smem_addr(&part[rank][e]), uint32_t(owner(e)), sum_wk(e));
  cluster_arrive_release();
  cluster_wait();
  for (int e = threadIdx.x; e < TILE; e += blockDim.x) {
    if (owner(e) != rank || !mine(e))
      continue;
    float y = 0.f, y1 = 0.f;
    for (int s = 0; s < S; ++s) {
      y += part[s][e];
      if (gated)
        y1 += part[s][e + 8];
    }
    emit(e, y, y1);
  }
}

//===--- blas and generic paths -------------------------------------------------===//

/// One thread per output element of the blas path: reads the fp32 GEMM
/// results y_i [M, H_i] and applies the epilogues.
__global__ void paired_epilogue_kernel(const __grid_constant__ Params p) {
  if (p.pdl) { // launched while the GEMM may still run: wait for its y
    pdl_wait();
    pdl_launch_dependents();
  }
  const bool gated = p.gated_kind >= 0;
  const int64_t n0 = p.M * p.H[0];
  const int64_t total = gated ? n0 : n0 + p.M * p.H[1];
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int oi = e < n0 ? 0 : 1;
    const int64_t le = oi == 0 ? e : e - n0;
    const int64_t m = le / p.H[oi], n = le % p.H[oi];
    if (gated)
      finish(p.out[0], m, n,
             gated_of(p, n, p.y[0][m * p.y_ld[0] + n], p.y[1][m * p.y_ld[1] + n]));
    else
      finish(p.out[oi], m, n, epilogue_of(p.out[oi], n, p.y[oi][m * p.y_ld[oi] + n]));
  }
}

/// One thread per output element, any strides, sequential fp32 over K with
/// separate multiply and add (the CPU reference's order, bit for bit).
template <typename T>
__global__ void paired_generic_kernel(const __grid_constant__ Params p) {
  const bool gated = p.gated_kind >= 0;
  const int64_t n0 = p.M * p.H[0];
  const int64_t total = gated ? n0 : n0 + p.M * p.H[1];
  constexpr int32_t kDt = sizeof(T) == 4 ? FUSION_RT_F32
                          : std::is_same<T, __nv_bfloat16>::value ? FUSION_RT_BF16
                                                                  : FUSION_RT_F16;
  auto dot = [&](int wi, int64_t m, int64_t n) {
    float acc = 0.f;
    const T *x = reinterpret_cast<const T *>(p.x) + m * p.x_rs;
    const T *w = reinterpret_cast<const T *>(p.w[wi]) + n * p.w_rs[wi];
    for (int64_t k = 0; k < p.K; ++k)
      acc = __fadd_rn(acc, __fmul_rn(load_elem(x, kDt, k * p.x_cs),
                                     load_elem(w, kDt, k * p.w_cs[wi])));
    return acc;
  };
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int oi = e < n0 ? 0 : 1;
    const int64_t le = oi == 0 ? e : e - n0;
    const int64_t m = le / p.H[oi], n = le % p.H[oi];
    if (gated)
      finish(p.out[0], m, n, gated_of(p, n, dot(0, m, n), dot(1, m, n)));
    else
      finish(p.out[oi], m, n, epilogue_of(p.out[oi], n, dot(oi, m, n)));
  }
}

//===--- host side ----------------------------------------------------------------===//

int64_t esize_of(int32_t dt) { return dt == FUSION_RT_F32 ? 4 : 2; }

bool aligned16(const void *ptr) {
  return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0;
}

/// 16-byte loads along the rows of a [rows, K] view.
bool vec_rows(const Mat &a, int64_t es) {
  return (a.cs == 1 || a.cols <= 1) && aligned16(a.data) &&
         ((a.rs * es) % 16 == 0 || a.rows <= 1);
}

/// Launches `kernel(p)`: a cluster of (p.split, 1, 1) when p.split > 1, and
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
  if (p.split > 1) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n].val.clusterDim.x = unsigned(p.split);
    attr[n].val.clusterDim.y = 1;
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

template <typename T, int MT, bool LEAN>
cudaError_t launch_gemv_lean(const Params &p, int rpw, dim3 grid, size_t smem,
                             cudaStream_t stream) {
  const unsigned threads = unsigned(32 * p.wr * p.wk);
  if (p.gated_kind >= 0) // gated warps always own two rows (w0[n], w1[n])
    return launch_ex(paired_gemv_kernel<T, MT, 2, true, LEAN>, p, grid, threads, smem,
                     stream);
  if (rpw == 2)
    return launch_ex(paired_gemv_kernel<T, MT, 2, false, LEAN>, p, grid, threads, smem,
                     stream);
  return launch_ex(paired_gemv_kernel<T, MT, 1, false, LEAN>, p, grid, threads, smem,
                   stream);
}

/// paired_decode_kernel<T, NB> for NB = decode_nb(plan) (1..kBatch).
template <typename T, int NB = kBatch>
cudaError_t launch_decode(const Params &p, int64_t nb, dim3 grid, cudaStream_t stream) {
  if constexpr (NB > 1) {
    if (nb < NB)
      return launch_decode<T, NB - 1>(p, nb, grid, stream);
  }
  return launch_ex(paired_decode_kernel<T, NB>, p, grid, unsigned(32 * p.wr * p.wk), 0,
                   stream);
}

template <typename T, int MT>
cudaError_t launch_gemv_mt(const Params &p, int rpw, dim3 grid, size_t smem,
                           cudaStream_t stream) {
  // The lean instance: token tiles of 1-2 (lhs in registers), no cluster,
  // every lane's chunks in one batch (gemv_is_lean in paired_plan.h).
  if constexpr (MT <= 2) {
    if (gemv_is_lean(p.split, MT, p.chunks_per_warp) &&
        tuning().paired_lean != 0)
      return launch_gemv_lean<T, MT, true>(p, rpw, grid, smem, stream);
  }
  return launch_gemv_lean<T, MT, false>(p, rpw, grid, smem, stream);
}

/// The gemv kernel instance for T: the decode instance when nb > 0
/// (decode_nb), else the instance of token tile mt and rpw rows per warp.
template <typename T>
cudaError_t launch_gemv_t(const Params &p, int64_t nb, int mt, int rpw, dim3 grid,
                          size_t smem, cudaStream_t stream) {
  if (nb > 0)
    return launch_decode<T>(p, nb, grid, stream);
  switch (mt) {
  case 1:
    return launch_gemv_mt<T, 1>(p, rpw, grid, smem, stream);
  case 2:
    return launch_gemv_mt<T, 2>(p, rpw, grid, smem, stream);
  case 4:
    return launch_gemv_mt<T, 4>(p, rpw, grid, smem, stream);
  case 8:
    return launch_gemv_mt<T, 8>(p, rpw, grid, smem, stream);
  default:
    return launch_gemv_mt<T, 16>(p, rpw, grid, smem, stream);
  }
}

/// The gemv path. Returns cudaErrorNotSupported when the launch shape does
/// not fit (the caller then takes another path).
cudaError_t launch_gemv(Params p, int32_t dt, cudaStream_t stream) {
  GemvOverrides o;
  o.rpw = tuning().paired_rpw;
  o.mt = tuning().paired_mt;
  o.S = tuning().paired_split;
  o.wr = tuning().paired_wr;
  o.wk = tuning().paired_wk;
  const GemvPlan plan = plan_gemv(p.M, p.K, p.H[0], p.H[1],
                                  p.gated_kind >= 0, esize_of(dt), o);
  if (!plan.ok)
    return cudaErrorNotSupported;
  p.chunks = plan.chunks;
  p.units = plan.units;
  p.split = int32_t(plan.S);
  p.wr = int32_t(plan.wr);
  p.wk = int32_t(plan.wk);
  p.warp_map = 0;
  for (int64_t w = 0; w < plan.wr * plan.wk; ++w)
    p.warp_map |= uint64_t((w % plan.wr) | (w / plan.wr) << 4) << (8 * w);
  p.chunks_per_cta = plan.cpc;
  p.chunks_per_warp = plan.cpw;
  const int rpw = int(plan.rpw), mt = int(plan.mt);
  const size_t smem = plan.smem;
  const dim3 grid{unsigned(plan.S), unsigned(plan.g), unsigned(plan.z)};
  bool f32_operands = true;
  for (const OutParams &o : p.out)
    f32_operands = f32_operands && (!o.bias || o.bias_dtype == FUSION_RT_F32) &&
                   (!o.scale || o.scale_dtype == FUSION_RT_F32);
  const int64_t nb = tuning().paired_decode != 0
                         ? decode_nb(plan, p.gated_kind >= 0, f32_operands, p.pdl != 0)
                         : 0;
  switch (dt) {
  case FUSION_RT_BF16:
    return launch_gemv_t<__nv_bfloat16>(p, nb, int(mt), rpw, grid, smem, stream);
  case FUSION_RT_F16:
    return launch_gemv_t<__half>(p, nb, int(mt), rpw, grid, smem, stream);
  default:
    return launch_gemv_t<float>(p, nb, int(mt), rpw, grid, smem, stream);
  }
}

template <typename T, int TM, int NT>
cudaError_t launch_mma_t(const Params &p, dim3 grid, unsigned threads,
                         cudaStream_t stream) {
  if constexpr (NT == 2) {
    if (p.gated_kind >= 0)
      return launch_ex(paired_mma_kernel<T, TM, 2, true>, p, grid, threads, 0, stream);
  }
  return launch_ex(paired_mma_kernel<T, TM, NT, false>, p, grid, threads, 0, stream);
}

template <typename T>
cudaError_t launch_mma_tiles(const Params &p, const MmaPlan &plan, dim3 grid,
                             unsigned threads, cudaStream_t stream) {
  if (plan.tm == 1)
    return plan.nt == 1 ? launch_mma_t<T, 1, 1>(p, grid, threads, stream)
                        : launch_mma_t<T, 1, 2>(p, grid, threads, stream);
  return plan.nt == 1 ? launch_mma_t<T, 2, 1>(p, grid, threads, stream)
                      : launch_mma_t<T, 2, 2>(p, grid, threads, stream);
}

/// The mma path (16-bit lhs and weights). cudaErrorNotSupported when the
/// grid does not fit (the caller then takes another path).
cudaError_t launch_mma(Params p, int32_t dt, cudaStream_t stream) {
  MmaOverrides o;
  o.S = tuning().paired_split;
  o.tokens = tuning().paired_mt;
  o.rows = tuning().paired_rpw;
  o.wk = tuning().paired_wk;
  const MmaPlan plan = plan_mma(p.M, p.K, p.H[0], p.H[1], p.gated_kind >= 0, o);
  if (!plan.ok || dt == FUSION_RT_F32)
    return cudaErrorNotSupported;
  p.chunks = plan.chunks;
  p.split = int32_t(plan.S);
  p.chunks_per_cta = plan.cpc;
  p.chunks_per_warp = plan.cpw;
  const dim3 grid{unsigned(plan.S), unsigned(plan.g), unsigned(plan.z)};
  const unsigned threads = unsigned(plan.threads());
  if (dt == FUSION_RT_BF16)
    return launch_mma_tiles<__nv_bfloat16>(p, plan, grid, threads, stream);
  return launch_mma_tiles<__half>(p, plan, grid, threads, stream);
}

cudaError_t launch_generic(const Params &p, int32_t dt, cudaStream_t stream) {
  const int64_t total = p.M * (p.H[0] + (p.gated_kind >= 0 ? 0 : p.H[1]));
  if (total == 0)
    return cudaSuccess;
  int64_t blocks = (total + 127) / 128;
  const int64_t cap = int64_t(cuda::device_sm_count()) * 16;
  blocks = blocks < cap ? blocks : cap;
  switch (dt) {
  case FUSION_RT_BF16:
    paired_generic_kernel<__nv_bfloat16><<<unsigned(blocks), 128, 0, stream>>>(p);
    break;
  case FUSION_RT_F16:
    paired_generic_kernel<__half><<<unsigned(blocks), 128, 0, stream>>>(p);
    break;
  default:
    paired_generic_kernel<float><<<unsigned(blocks), 128, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

//===--- cuBLAS -------------------------------------------------------------------===//

/// cuBLAS workspace of each handle: allocated once with the handle, so that
/// a call captured in a CUDA graph allocates nothing inside cuBLAS.
constexpr size_t kBlasWorkspace = size_t(32) << 20;

/// One cuBLAS handle (and workspace) per (thread, device): handles are not
/// safe to share between threads that set different streams. Created by the
/// first blas-path call on the device, which must not be inside a capture.
cublasHandle_t blas_handle(cublasStatus_t &st, void *&workspace) {
  static thread_local cublasHandle_t handles[64] = {};
  static thread_local void *spaces[64] = {};
  int dev = 0;
  cudaGetDevice(&dev);
  if (dev < 0 || dev >= 64)
    dev = 0;
  st = CUBLAS_STATUS_SUCCESS;
  if (!handles[dev]) {
    st = cublasCreate(&handles[dev]);
    if (st != CUBLAS_STATUS_SUCCESS) {
      handles[dev] = nullptr;
      return nullptr;
    }
    if (cudaMalloc(&spaces[dev], kBlasWorkspace) != cudaSuccess) {
      cudaGetLastError();
      spaces[dev] = nullptr;
    }
  }
  workspace = spaces[dev];
  return handles[dev];
}

cudaDataType_t blas_type(int32_t dt) {
  return dt == FUSION_RT_BF16 ? CUDA_R_16BF : dt == FUSION_RT_F16 ? CUDA_R_16F
                                                                  : CUDA_R_32F;
}

/// How one [rows, K] operand is handed to cuBLAS (column-major): op and
/// leading dimension. `ok` false when neither stride is 1 (or ld too small).
struct BlasOperand {
  bool ok = false;
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 0;
};

/// For y^T = A * B with A the weight (H x K after op) and B = lhs^T (K x M
/// after op): a row-major [rows, K] view with unit column stride is a
/// column-major K x rows matrix, used transposed for A and as-is for B.
BlasOperand blas_operand(const Mat &a, bool is_weight) {
  BlasOperand o;
  const int64_t lim = int64_t(1) << 31;
  if ((a.cs == 1 || a.cols <= 1) && (a.rs >= a.cols || a.rows <= 1)) {
    o.ok = true;
    o.op = is_weight ? CUBLAS_OP_T : CUBLAS_OP_N;
    o.ld = a.rows <= 1 ? (a.cols > 1 ? a.cols : 1) : a.rs;
  } else if ((a.rs == 1 || a.rows <= 1) && (a.cs >= a.rows || a.cols <= 1)) {
    o.ok = true;
    o.op = is_weight ? CUBLAS_OP_N : CUBLAS_OP_T;
    o.ld = a.cols <= 1 ? (a.rows > 1 ? a.rows : 1) : a.cs;
  }
  if (o.ld >= lim)
    o.ok = false;
  return o;
}

cudaError_t launch_epilogue(const Params &p, cudaStream_t stream) {
  const int64_t total = p.M * (p.H[0] + (p.gated_kind >= 0 ? 0 : p.H[1]));
  if (total == 0)
    return cudaSuccess;
  int64_t blocks = (total + 255) / 256;
  const int64_t cap = int64_t(cuda::device_sm_count()) * 8;
  blocks = blocks < cap ? blocks : cap;
  return launch_ex(paired_epilogue_kernel, p, dim3(unsigned(blocks)), 256, 0, stream);
}

/// The blas path. Returns UNSUPPORTED (nothing launched) when cuBLAS cannot
/// take the views.
/// This thread's cuBLAS handle on `stream`, with the runtime's workspace.
fusion_rt_status blas_on_stream(cudaStream_t stream, cublasHandle_t &h) {
  cublasStatus_t bst;
  void *blas_ws = nullptr;
  h = blas_handle(bst, blas_ws);
  if (!h)
    return fail(FUSION_RT_STATUS_BACKEND_ERROR,
                "CUDA backend: cublasCreate failed (status %d)", int(bst));
  // cublasSetStream resets the workspace to cuBLAS's own: set ours after it.
  if ((bst = cublasSetStream(h, stream)) != CUBLAS_STATUS_SUCCESS ||
      (blas_ws && (bst = cublasSetWorkspace(h, blas_ws, kBlasWorkspace)) !=
                      CUBLAS_STATUS_SUCCESS))
    return fail(FUSION_RT_STATUS_BACKEND_ERROR,
                "CUDA backend: cublasSetStream / cublasSetWorkspace failed "
                "(status %d)",
                int(bst));
  return FUSION_RT_STATUS_SUCCESS;
}

fusion_rt_status run_blas(Params p, const PairedRequest &q, cudaStream_t stream) {
  const int32_t dt = q.lhs.dtype;
  const int64_t lim = int64_t(1) << 31;
  if (p.K < 1 || p.M >= lim || p.K >= lim || p.H[0] >= lim || p.H[1] >= lim)
    return FUSION_RT_STATUS_UNSUPPORTED;
  const BlasOperand bx = blas_operand(q.lhs, false);
  const BlasOperand bw0 = blas_operand(q.w[0], true);
  const BlasOperand bw1 = blas_operand(q.w[1], true);
  if (!bx.ok || !bw0.ok || !bw1.ok)
    return FUSION_RT_STATUS_UNSUPPORTED;
  cublasStatus_t bst;
  cublasHandle_t h = nullptr;
  if (fusion_rt_status st = blas_on_stream(stream, h))
    return st;
  const int64_t n0 = p.M * p.H[0], n1 = p.M * p.H[1];
  float *ws = nullptr;
  cudaError_t e = cudaMallocAsync(reinterpret_cast<void **>(&ws),
                                  size_t(n0 + n1 > 0 ? n0 + n1 : 1) * sizeof(float),
                                  stream);
  if (e != cudaSuccess)
    return cuda_fail(e, "cudaMallocAsync(paired projection workspace)");
  const float alpha = 1.f, beta = 0.f;
  const cudaDataType_t ct = blas_type(dt);
  const int64_t es = esize_of(dt);
  float *y[2] = {ws, ws + n0};
  p.y_ld[0] = p.H[0];
  p.y_ld[1] = p.H[1];
  const ptrdiff_t dist = (q.w[1].data - q.w[0].data) / es;
  const bool exact = (q.w[1].data - q.w[0].data) % es == 0;
  // Weight 1 directly below weight 0 in one row-major buffer ([w0; w1], as a
  // loader or the compiler may place them): one GEMM of H0 + H1 rows.
  const bool stacked = exact && bw0.op == CUBLAS_OP_T && bw1.op == CUBLAS_OP_T &&
                       bw0.ld == bw1.ld && q.w[0].rows > 1 &&
                       dist == p.H[0] * q.w[0].rs && p.H[1] > 0;
  // Otherwise one strided-batched call when both weights have the same shape
  // and layout: batch stride = the distance between the two weight pointers.
  const bool same = p.H[0] == p.H[1] && bw0.op == bw1.op && bw0.ld == bw1.ld &&
                    p.H[0] > 0 && p.M > 0;
  if (stacked) {
    const int64_t hh = p.H[0] + p.H[1];
    p.y[0] = ws;
    p.y[1] = ws + p.H[0];
    p.y_ld[0] = p.y_ld[1] = hh;
    bst = cublasGemmEx(h, CUBLAS_OP_T, bx.op, int(hh), int(p.M), int(p.K), &alpha,
                       q.w[0].data, ct, int(bw0.ld), q.lhs.data, ct, int(bx.ld), &beta,
                       ws, CUDA_R_32F, int(hh), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  } else if (same && exact && dist != 0) {
    const int lo = dist > 0 ? 0 : 1; // batch 0 = the lower weight pointer
    p.y[lo] = ws;
    p.y[1 - lo] = ws + n0;
    bst = cublasGemmStridedBatchedEx(
        h, bw0.op, bx.op, int(p.H[0]), int(p.M), int(p.K), &alpha, q.w[lo].data, ct,
        int(bw0.ld), (long long)(dist > 0 ? dist : -dist), q.lhs.data, ct, int(bx.ld),
        0LL, &beta, ws, CUDA_R_32F, int(p.H[0]), (long long)n0, 2,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  } else {
    bst = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < 2 && bst == CUBLAS_STATUS_SUCCESS; ++i) {
      p.y[i] = y[i];
      if (p.H[i] == 0 || p.M == 0)
        continue;
      const BlasOperand &bw = i == 0 ? bw0 : bw1;
      bst = cublasGemmEx(h, bw.op, bx.op, int(p.H[i]), int(p.M), int(p.K), &alpha,
                         q.w[i].data, ct, int(bw.ld), q.lhs.data, ct, int(bx.ld),
                         &beta, y[i], CUDA_R_32F, int(p.H[i]), CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT);
    }
  }
  if (bst != CUBLAS_STATUS_SUCCESS) {
    cudaFreeAsync(ws, stream);
    return fail(FUSION_RT_STATUS_BACKEND_ERROR,
                "CUDA backend: cuBLAS GEMM failed (status %d)", int(bst));
  }
  e = launch_epilogue(p, stream);
  cudaFreeAsync(ws, stream);
  if (e != cudaSuccess)
    return cuda_fail(e, "the paired epilogue kernel launch");
  return FUSION_RT_STATUS_SUCCESS;
}

OutParams out_params(const PairedRequest &q, int i) {
  OutParams o;
  o.ptr = q.out[i].data;
  o.rs = q.out[i].rs;
  o.cs = q.out[i].cs;
  o.dtype = q.out[i].dtype;
  o.kind = q.epi_kind[i];
  o.round = q.round[i];
  if (q.bias[i].present()) {
    o.bias = q.bias[i].data;
    o.bias_cs = q.bias[i].cs;
    o.bias_dtype = q.bias[i].dtype;
  }
  if (q.scale[i].present()) {
    o.scale = q.scale[i].data;
    o.scale_cs = q.scale[i].cs;
    o.scale_dtype = q.scale[i].dtype;
  }
  return o;
}

} // namespace
} // namespace paired

using namespace paired;

namespace {
/// The path cuda_paired_execute starts on: the measured selector
/// (docs/paired-projections.md; runtime/common/paired_plan.h: the gemv path
/// while M <= 16 or the multiply-adds M * K * (H0 + H1) stay within 2^23
/// (2^24 for f32), then for 16-bit operands the mma path up to 3 * 2^26
/// multiply-adds, then cuBLAS), or the FUSION_RT_PAIRED_PATH override;
/// `generic` when the override forces the generic kernel.
Path start_path(const PairedRequest &q, bool &generic) {
  const int64_t es = esize_of(q.lhs.dtype), vec = 16 / es;
  const int64_t K = q.lhs.cols;
  // tuning.def's paired_path: 0 auto, 1 gemv, 2 mma, 3 blas, 4 generic.
  const int64_t path = tuning().paired_path;
  auto forced = [&](int64_t which) { return path == which; };
  generic = forced(4);
  const bool vec_ok = K > 0 && K % vec == 0 && vec_rows(q.lhs, es) &&
                      vec_rows(q.w[0], es) && vec_rows(q.w[1], es);
  Path sel = select_path(q.lhs.rows, K, q.w[0].rows, q.w[1].rows, es, vec_ok,
                         tuning().paired_gemv_max_m);
  if (forced(1) && vec_ok)
    sel = Path::Gemv;
  if (forced(2) && vec_ok && es == 2)
    sel = Path::Mma;
  if (forced(3))
    sel = Path::Blas;
  return sel;
}
} // namespace

// Declared in src/backend.h under FUSION_RT_HAVE_CUDA, which the kernels'
// object library does not define; defined in cuda_backend.cu.
bool cuda_is_device_pointer(const void *ptr);
fusion_rt_status cuda_execute(const Request &req, void *stream);

bool cuda_paired_touches_device(const PairedRequest &q) {
  const void *ptrs[] = {q.lhs.data,     q.w[0].data,     q.w[1].data,
                        q.bias[0].data, q.bias[1].data,  q.scale[0].data,
                        q.scale[1].data, q.out[0].data,  q.out[1].data};
  for (const void *ptr : ptrs)
    if (ptr && cuda_is_device_pointer(ptr))
      return true;
  return false;
}

const char *cuda_paired_error_detail() { return cuda::error_detail(); }

fusion_rt_status cuda_paired_execute(const PairedRequest &q, void *stream_ptr) {
  cuda::clear_error_detail();
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess)
    return cuda_fail(e, "cudaGetDevice");
  struct Named {
    const void *ptr;
    const char *name;
  } ptrs[] = {{q.lhs.data, "desc->lhs"},
              {q.w[0].data, "desc->weight0"},
              {q.w[1].data, "desc->weight1"},
              {q.bias[0].data, "desc->epilogue0.bias"},
              {q.scale[0].data, "desc->epilogue0.scale"},
              {q.bias[1].data, "desc->epilogue1.bias"},
              {q.scale[1].data, "desc->epilogue1.scale"},
              {q.out0_is_scratch ? nullptr : q.out[0].data, "desc->out0"},
              {q.out[1].data, "desc->out1"}};
  for (const Named &n : ptrs) {
    if (!n.ptr)
      continue;
    const int w = where(n.ptr, dev);
    if (w == 1)
      return fail(FUSION_RT_STATUS_BAD_VALUE,
                  "%s is host memory but the call runs on the CUDA backend: "
                  "all pointers of one call must be device memory (or all "
                  "host memory for the CPU backend)",
                  n.name);
    if (w == 2)
      return fail(FUSION_RT_STATUS_BAD_VALUE,
                  "%s is memory of another device than the current one (%d)",
                  n.name, dev);
  }
  if (q.lhs.rows == 0)
    return FUSION_RT_STATUS_SUCCESS;

  Params p;
  const int32_t dt = q.lhs.dtype;
  p.x = q.lhs.data;
  p.x_rs = q.lhs.rs;
  p.x_cs = q.lhs.cs;
  for (int i = 0; i < 2; ++i) {
    p.w[i] = q.w[i].data;
    p.w_rs[i] = q.w[i].rs;
    p.w_cs[i] = q.w[i].cs;
    p.H[i] = q.w[i].rows;
  }
  p.M = q.lhs.rows;
  p.K = q.lhs.cols;
  p.gated_kind = q.gated_kind;
  p.out[0] = out_params(q, 0);
  if (q.gated_kind >= 0) // bias of the up half rides on out[1]
    p.out[1].bias = q.bias[1].data, p.out[1].bias_cs = q.bias[1].cs,
    p.out[1].bias_dtype = q.bias[1].dtype, p.out[1].round = q.round[1];
  else
    p.out[1] = out_params(q, 1);

  // Programmatic dependent launch of the gemv, mma and epilogue kernels,
  // opt in with FUSION_RT_PAIRED_PDL=1 (docs/paired-projections.md,
  // "Overlap"): measured about 1 us faster per call when the kernel before
  // is ours (or any kernel that triggers its dependents), 0.25-0.6 us slower
  // behind one that does not, so it is off by default.
  p.pdl = tuning().paired_pdl != 0 ? 1 : 0;

  bool force_generic = false;
  const Path sel = start_path(q, force_generic);

  if (!force_generic && sel == Path::Gemv) {
    e = launch_gemv(p, dt, stream);
    if (e == cudaSuccess)
      return FUSION_RT_STATUS_SUCCESS;
    if (e != cudaErrorNotSupported)
      return cuda_fail(e, "the paired gemv kernel launch");
    cudaGetLastError();
  }
  if (!force_generic && sel == Path::Mma) {
    e = launch_mma(p, dt, stream);
    if (e == cudaSuccess)
      return FUSION_RT_STATUS_SUCCESS;
    if (e != cudaErrorNotSupported)
      return cuda_fail(e, "the paired mma kernel launch");
    cudaGetLastError();
  }
  if (!force_generic) {
    const fusion_rt_status st = run_blas(p, q, stream);
    if (st != FUSION_RT_STATUS_UNSUPPORTED)
      return st;
  }
  e = launch_generic(p, dt, stream);
  if (e != cudaSuccess)
    return cuda_fail(e, "the paired generic kernel launch");
  return FUSION_RT_STATUS_SUCCESS;
}

fusion_rt_status cuda_paired_quantize_execute(const PairedRequest &q,
                                              const Request &quant,
                                              int32_t inter, void *stream_ptr,
                                              bool &taken) {
  taken = false;
  cuda::clear_error_detail();
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const int32_t dt = q.lhs.dtype;
  const int64_t es = esize_of(dt);
  const int64_t M = q.lhs.rows, K = q.lhs.cols, H = q.w[0].rows;
  if (q.gated_kind < 0 || q.epi_kind[0] != FUSION_RT_EPILOGUE_NONE ||
      q.epi_kind[1] != FUSION_RT_EPILOGUE_NONE || q.round[0] != q.round[1] ||
      M == 0 || H == 0 || K == 0)
    return FUSION_RT_STATUS_SUCCESS;
  // cuBLAS's int dimensions (as run_blas): larger calls take the two steps.
  const int64_t lim = int64_t(1) << 31;
  if (M >= lim || K >= lim || 2 * H >= lim)
    return FUSION_RT_STATUS_SUCCESS;
  // Only where cuda_paired_execute would start on cuBLAS.
  bool generic = false;
  if (start_path(q, generic) != Path::Blas || generic)
    return FUSION_RT_STATUS_SUCCESS;
  const BlasOperand bx = blas_operand(q.lhs, false);
  const BlasOperand bw0 = blas_operand(q.w[0], true);
  const BlasOperand bw1 = blas_operand(q.w[1], true);
  if (!bx.ok || !bw0.ok || !bw1.ok)
    return FUSION_RT_STATUS_SUCCESS;
  taken = true;
  cublasStatus_t bst;
  cublasHandle_t h = nullptr;
  if (fusion_rt_status st = blas_on_stream(stream, h))
    return st;
  // [gate | up] as one [M, 2H] matrix of the rounding's type: cuBLAS rounds
  // its f32 accumulator once to it, which is round(bf16 / f16) of the pair.
  const int32_t gu_dt = q.round[0] == FUSION_RT_ROUND_BF16   ? FUSION_RT_BF16
                        : q.round[0] == FUSION_RT_ROUND_F16 ? FUSION_RT_F16
                                                            : FUSION_RT_F32;
  const cudaDataType_t gu_ct = gu_dt == FUSION_RT_BF16  ? CUDA_R_16BF
                               : gu_dt == FUSION_RT_F16 ? CUDA_R_16F
                                                        : CUDA_R_32F;
  const int64_t gu_es = gu_dt == FUSION_RT_F32 ? 4 : 2;
  char *gu = nullptr;
  cudaError_t e = cudaMallocAsync(reinterpret_cast<void **>(&gu),
                                  size_t(M * 2 * H * gu_es), stream);
  if (e != cudaSuccess)
    return cuda_fail(e, "cudaMallocAsync(gate and up values)");
  const float alpha = 1.f, beta = 0.f;
  const cudaDataType_t ct = blas_type(dt);
  const ptrdiff_t dist = (q.w[1].data - q.w[0].data) / es;
  const bool stacked = (q.w[1].data - q.w[0].data) % es == 0 &&
                       bw0.op == CUBLAS_OP_T && bw1.op == CUBLAS_OP_T &&
                       bw0.ld == bw1.ld && H > 1 && dist == H * q.w[0].rs;
  if (stacked) {
    bst = cublasGemmEx(h, CUBLAS_OP_T, bx.op, int(2 * H), int(M), int(K), &alpha,
                       q.w[0].data, ct, int(bw0.ld), q.lhs.data, ct, int(bx.ld),
                       &beta, gu, gu_ct, int(2 * H), CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT);
  } else {
    bst = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < 2 && bst == CUBLAS_STATUS_SUCCESS; ++i) {
      const BlasOperand &bw = i == 0 ? bw0 : bw1;
      bst = cublasGemmEx(h, bw.op, bx.op, int(H), int(M), int(K), &alpha,
                         q.w[i].data, ct, int(bw.ld), q.lhs.data, ct, int(bx.ld),
                         &beta, gu + i * H * gu_es, gu_ct, int(2 * H),
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
  }
  if (bst != CUBLAS_STATUS_SUCCESS) {
    cudaFreeAsync(gu, stream);
    return fail(FUSION_RT_STATUS_BACKEND_ERROR,
                "CUDA backend: cuBLAS GEMM failed (status %d)", int(bst));
  }
  Request g = quant;
  g.op = Op::GatedActQuantize;
  g.gated = true;
  g.act_kind = q.gated_kind;
  g.backward = false;
  g.inter = inter;
  g.params = ActParams();
  g.x = Mat{gu, gu_dt, M, H, 2 * H, 1};
  g.up = Mat{gu + H * gu_es, gu_dt, M, H, 2 * H, 1};
  g.x_is_scratch = true;
  const fusion_rt_status st = cuda_execute(g, stream);
  cudaFreeAsync(gu, stream);
  return st;
}

} // namespace fusion_rt
