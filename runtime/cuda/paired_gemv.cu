//===- paired_gemv.cu - the gemv path of the paired projection ---*- CUDA -*-===//
//
// The gemv path (paired_projection.cu has the overview): paired_gemv_kernel,
// its decode instance paired_decode_kernel, and their launch from the plan
// (runtime/common/paired_plan.h plan_gemv, decode_nb).
//
//===----------------------------------------------------------------------===//
#include "cuda/mx_kernel.cuh"
#include "cuda/paired_kernels.cuh"

namespace fusion_rt {
namespace paired {
namespace {

/// The quantizing epilogue (QuantEpi; QUANT instances of the gated
/// paired_gemv_kernel, S = 1, cluster (1, cy, 1), cy * WR = 32). On entry
/// every CTA has put its gated values, rounded to the intermediate type,
/// into hq[t * WR + w] (token m0 + t, column blockIdx.y * WR + w). After a
/// cluster barrier, warp t (and t + warps, ...) of every CTA takes token
/// m0 + t: lane c reads column c of the cluster's 32 from the shared memory
/// of rank c / WR, the warp's amax gives the block's scale byte, and each
/// CTA stores the codes of its own columns, rank 0 the scale: the
/// computation of the MX kernels' rowwise blocks (amax_key with the NaN
/// policy, block_scale_byte, mx_reciprocal, one conversion a code), so the
/// bytes equal the two-step call's (the value stored in `inter`, then
/// fusion_rt_quantize). Columns past H count as 0 and are not stored. A
/// second cluster barrier keeps every CTA's hq alive until all have read
/// it.
template <int MT>
__device__ __forceinline__ void quant_epilogue(const Params &p, const float *hq,
                                               int64_t m0, int WR, int warp,
                                               int lane) {
  const QuantEpi &q = p.quant;
  cluster_arrive_release();
  cluster_wait();
  const int cy = q.cy;
  const int rank = int(blockIdx.y) % cy; // cluster (1, cy, 1): rank along y
  const int64_t c0 = int64_t(blockIdx.y / cy) * 32;
  const int64_t col = c0 + lane;
  const int owner = lane / WR;
  const bool in = col < p.units;
  const bool e4m3 = q.format == kMXFP8E4M3;
  const int nw = int(blockDim.x) >> 5;
  for (int t = warp; t < MT && m0 + t < p.M; t += nw) {
    const int64_t m = m0 + t;
    const float v = in ? ld_dsmem(smem_addr(&hq[t * WR + (lane - owner * WR)]),
                                  uint32_t(owner))
                       : 0.f;
    const uint32_t am = cuda::xor_max<1, 32>(cuda::amax_key(v, q.propagate));
    const uint8_t sb =
        cuda::block_scale_byte(am, q.format, q.rounding, q.propagate);
    const float rcp = mx_reciprocal(sb);
    if (in && owner == rank)
      q.rd[m * q.rd_rs + col * q.rd_cs] =
          uint8_t(cuda::cvt_pair(e4m3, v * rcp, 0.f));
    if (rank == 0 && lane == 0)
      q.rsc[m * q.rsc_rs + (c0 / 32) * q.rsc_cs] = sb;
  }
  cluster_arrive_release();
  cluster_wait();
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
///
/// QUANT (gated, S = 1): the gated value goes to shared memory instead of
/// out[0], and quant_epilogue quantizes it (cluster (1, cy, 1)).
template <typename T, int MT, int RPW, bool GATED, bool LEAN,
          bool QUANT = false>
__global__ void __launch_bounds__(kMaxThreads, 1)
    paired_gemv_kernel(const __grid_constant__ Params p) {
  static_assert(!QUANT || GATED, "the quantizing epilogue takes a gated pair");
  using VT = Vec<T>;
  constexpr int VEC = VT::N;
  constexpr int V = RPW * MT;   // partial sums per lane
  constexpr bool XS = MT >= 4;  // lhs staged in shared memory
  constexpr int XB = XS ? 1 : kBatch;
  __shared__ float part[kMaxCluster][kMaxWarps * V];
  __shared__ float red[kMaxWarps * V];
  __shared__ float hq[QUANT ? MT * kMaxWarps : 1]; // [MT][WR] gated values
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
      if (r >= 0)
        wrow[i] = w_row_ptr<T>(p, wi, r);
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
        wv[j][i] = ok && wl[i] ? ldg_nc16(wl[i] + boff) : make_uint4(0, 0, 0, 0);
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
      const float g = gated_forward(
          p.gated_kind,
          biased_accumulator(p.out[0].round, y, p.out[0].bias != nullptr, pb),
          biased_accumulator(p.out[1].round, y1, p.out[1].bias != nullptr, pb1),
          ActParams{});
      if constexpr (QUANT)
        hq[(om - m0) * WR + (ou - int64_t(blockIdx.y) * WR)] =
            round_to_intermediate(g, p.quant.inter);
      else
        finish(p.out[0], om, ou, g);
    } else {
      const OutParams &oo = p.out[ooi];
      finish(oo, om, orow,
             apply_epilogue(oo.kind,
                            biased_accumulator(oo.round, y, oo.bias != nullptr, pb),
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
  if constexpr (QUANT)
    quant_epilogue<MT>(p, hq, m0, WR, warp, lane);
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
  const char *wl = w_row_ptr<T>(p, second ? 1 : 0, r) + lbytes;
  const char *xl = p.x + int64_t(m) * p.x_rs * int64_t(sizeof(T)) + lbytes;
  uint4 wv[NB], xv[NB];
#pragma unroll
  for (int j = 0; j < NB; ++j) {
    wv[j] = ldg_nc16(wl + j * 512);
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
    finish(oo, m, orow,
           apply_epilogue(oo.kind, biased_accumulator(oo.round, y, bias != nullptr, pb),
                          scale != nullptr, ps));
}

template <typename T, int MT, bool LEAN>
cudaError_t launch_gemv_lean(const Params &p, int rpw, dim3 grid, size_t smem,
                             cudaStream_t stream) {
  const unsigned threads = unsigned(32 * p.wr * p.wk);
  if (p.gated_kind >= 0 && p.quant.cy > 0)
    return launch_ex(paired_gemv_kernel<T, MT, 2, true, LEAN, true>, p, grid,
                     threads, smem, stream);
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

} // namespace

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
  dim3 grid{unsigned(plan.S), unsigned(plan.g), unsigned(plan.z)};
  if (p.quant.cy > 0) {
    // The quantizing epilogue (paired_plan.h quant_epilogue_cy); the grid's
    // y rounded up to whole clusters. Else NotSupported (the caller takes
    // the two steps).
    const int64_t cy = quant_epilogue_cy(plan, p.gated_kind >= 0);
    if (cy == 0)
      return cudaErrorNotSupported;
    p.quant.cy = int32_t(cy);
    const int64_t gy = (plan.g + p.quant.cy - 1) / p.quant.cy * p.quant.cy;
    if (gy > 65535)
      return cudaErrorNotSupported;
    grid.y = unsigned(gy);
  }
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

} // namespace paired
} // namespace fusion_rt
