//===- paired_mma.cu - the mma path of the paired projection -----*- CUDA -*-===//
//
// The mma path (paired_projection.cu has the overview): paired_mma_kernel on
// the tensor cores and its launch from the plan (runtime/common/
// paired_plan.h plan_mma).
//
//===----------------------------------------------------------------------===//
#include "cuda/paired_kernels.cuh"

namespace fusion_rt {
namespace paired {
namespace {

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
    wrow[j] = ok ? w_row_ptr<T>(p, wi, r) : nullptr;
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
        wv[b][j] = ok && wrow[j] ? ldg_nc16(wrow[j] + off) : make_uint4(0, 0, 0, 0);
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

} // namespace

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

} // namespace paired
} // namespace fusion_rt
