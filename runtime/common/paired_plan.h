//===- paired_plan.h - launch plan of the paired projection on CUDA -*- C++ -*-===//
//
// The one description of how runtime/cuda/paired_projection.cu launches a
// paired projection: the path selector and the gemv path's launch shape.
// Plain C++ (no CUDA types): the CUDA backend launches from it, and
// `fusion-opt --fusion-kernel-report` (lib/Conversion/FusionToRuntime/
// KernelReport.cpp) prints it, so the report cannot drift from the launch.
// The measurements behind the numbers: docs/paired-projections.md.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_PAIRED_PLAN_H
#define FUSION_RT_COMMON_PAIRED_PLAN_H

#include "fusion_rt.h"

#include <cstddef>
#include <cstdint>

namespace fusion_rt {
namespace paired {

/// The selector (select_path below): the gemv path takes M <= kGemvMaxM
/// tokens when the weights fit in kGemvMaxWeightBytes (its token tiles
/// re-read them from L2), M <= kGemvTileM whatever their size (one pass over
/// them; at M = 2 cuBLAS was faster on a 235 MB pair), or any M whose M * K * (H0 + H1) multiply-adds stay within
/// kGemvMaxMacs (16-bit operands) / kGemvMaxMacsF32; past that, 16-bit
/// operands take the tensor-core mma path up to kMmaMaxMacs multiply-adds,
/// and everything else cuBLAS. Measured on the H200
/// (docs/paired-projections.md, "selector"; docs/benchmarks/
/// paired-mma-sweep.csv, paired-selector.csv, archived at commit c58705aa4eb4:
/// git show c58705aa4eb4:docs/benchmarks/paired-selector.csv).
constexpr int64_t kGemvMaxM = 16;
constexpr int64_t kGemvTileM = 1;
constexpr int64_t kGemvMaxWeightBytes = int64_t(8) << 20;
constexpr int64_t kGemvMaxMacs = int64_t(1) << 23;
constexpr int64_t kGemvMaxMacsF32 = int64_t(1) << 24;
constexpr int64_t kMmaMaxMacs = int64_t(3) << 26;
constexpr int kMaxWarps = 8; ///< gemv CTA: WR * WK <= 8 warps
constexpr int kMaxThreads = 32 * kMaxWarps;
constexpr int kMaxCluster = 8; ///< portable cluster size
constexpr int kBatch = 8;      ///< chunks per lane whose loads are issued together
constexpr int64_t kXsBytes = 32 << 10; ///< staged lhs slice, dynamic shared memory
/// More warps than this is more than one wave, or more L2 -> SM traffic than
/// the latency hides (docs/paired-projections.md, "gemv launch shape").
constexpr int64_t kMaxGemvWarps = 1024;

/// The largest M the gemv path takes for this problem (before overrides).
inline int64_t gemv_max_m(int64_t M, int64_t K, int64_t H0, int64_t H1,
                          int64_t esize) {
  const int64_t lim = esize == 2 ? kGemvMaxMacs : kGemvMaxMacsF32;
  if (M * K * (H0 + H1) <= lim)
    return M;
  return K * (H0 + H1) * esize <= kGemvMaxWeightBytes ? kGemvMaxM : kGemvTileM;
}

/// Launch shape of the gemv path: S (cluster size, K split across CTAs),
/// WR x WK warps per CTA (rows x K split inside the CTA), MT tokens per CTA,
/// RPW weight rows per warp.
struct GemvShape {
  int64_t S = 1, wr = 4, wk = 1, mt = 1, rpw = 1;
};

/// Default launch shape (docs/paired-projections.md, "gemv launch shape";
/// measured in docs/benchmarks/paired-sweep.csv, archived at commit
/// c58705aa4eb4). No cluster: a cluster
/// launch cost ~0.7 us more than the same work without one at N <= 16.
/// 1. K split inside the CTA (wk warps) until a lane has <= kBatch chunks,
///    so all its weight loads are in flight at once; wr = 4 / wk row warps.
/// 2. Token tile mt = 1, one CTA per token and row group, lhs straight into
///    registers (staging it in shared memory measured slower).
/// 3. While that gives more than kMaxGemvWarps warps: mt = 2, then two
///    rows per warp, then fewer K-split warps (wk / 2, wr * 2), then larger
///    token tiles (mt >= 4 stages the lhs in shared memory).
inline GemvShape default_shape(int64_t chunks, int64_t rows, int64_t M,
                               bool gated) {
  GemvShape s;
  while (s.wk < kMaxWarps && chunks > int64_t(32) * kBatch * s.wk)
    s.wk *= 2;
  s.wr = s.wk >= 4 ? 1 : 4 / s.wk;
  s.rpw = gated ? 2 : 1;
  auto warps = [&] {
    const int64_t units = gated ? rows : (rows + s.rpw - 1) / s.rpw;
    return units * s.wk * ((M + s.mt - 1) / s.mt);
  };
  if (M > 1 && warps() > kMaxGemvWarps)
    s.mt = 2;
  if (warps() > kMaxGemvWarps)
    s.rpw = 2;
  while (warps() > kMaxGemvWarps && s.wk > 1) {
    s.wk /= 2;
    s.wr = s.wr * 2 > kMaxWarps ? kMaxWarps : s.wr * 2;
  }
  while (warps() > kMaxGemvWarps && s.mt < 16)
    s.mt *= 2;
  return s;
}

/// The gemv kernel's lean instance (LEAN = true: compiled without the
/// cluster exchange and without the loop over load batches) serves plans
/// with no cluster, token tiles of 1-2 and every lane's chunks (one per 32
/// of the warp's chunks) in one batch of kBatch.
inline bool gemv_is_lean(int64_t S, int64_t mt, int64_t cpw) {
  return S == 1 && mt <= 2 && cpw <= int64_t(32) * kBatch;
}

/// Overrides of the default shape (the FUSION_RT_PAIRED_* environment
/// variables of the CUDA backend); -1 keeps the default.
struct GemvOverrides {
  int64_t S = -1, wr = -1, wk = -1, mt = -1, rpw = -1;
};

/// Everything launch_gemv needs: the kernel instance (MT, RPW), the grid
/// (S, G, Z), the block (32 * wr * wk threads), dynamic shared memory, and
/// the per-CTA / per-warp split of K in 16-byte chunks.
struct GemvPlan {
  bool ok = false; ///< false: the grid does not fit, take another path
  int64_t S = 1, wr = 1, wk = 1, mt = 1, rpw = 1;
  int64_t units = 0, chunks = 0, cpw = 0, cpc = 0, g = 0, z = 0;
  size_t smem = 0;
  int64_t threads() const { return 32 * wr * wk; }
};

/// The gemv plan for M tokens of K, weights of H0 and H1 rows (H0 only
/// when gated), elements of `esize` bytes (K a multiple of 16 / esize).
inline GemvPlan plan_gemv(int64_t M, int64_t K, int64_t H0, int64_t H1,
                          bool gated, int64_t esize,
                          const GemvOverrides &o = GemvOverrides()) {
  GemvPlan p;
  const int64_t vec = 16 / esize;
  const int64_t rows = H0 + (gated ? 0 : H1);
  p.chunks = K / vec;
  GemvShape sh = default_shape(p.chunks, rows, M, gated);
  int64_t rpw = gated ? 2 : (o.rpw >= 0 ? o.rpw : sh.rpw);
  if (rpw != 2)
    rpw = 1;
  p.rpw = rpw;
  p.units = gated ? H0 : (rows + rpw - 1) / rpw;
  const int64_t mt_max = o.mt >= 0 ? o.mt : sh.mt;
  int64_t mt = 1;
  while (mt < M && mt < 16 && mt < mt_max)
    mt *= 2;
  sh.S = o.S >= 0 ? o.S : sh.S;
  sh.wr = o.wr >= 0 ? o.wr : sh.wr;
  sh.wk = o.wk >= 0 ? o.wk : sh.wk;
  sh.S = sh.S < 1 ? 1 : (sh.S > kMaxCluster ? kMaxCluster : sh.S);
  sh.wr = sh.wr < 1 ? 1 : (sh.wr > kMaxWarps ? kMaxWarps : sh.wr);
  sh.wk = sh.wk < 1 ? 1 : sh.wk;
  if (sh.wr * sh.wk > kMaxWarps)
    sh.wk = kMaxWarps / sh.wr;
  // Chunks per rank and per warp: whole multiples of 32 (one per lane).
  int64_t cpw = (p.chunks + sh.S * sh.wk - 1) / (sh.S * sh.wk);
  cpw = cpw < 1 ? 32 : (cpw + 31) / 32 * 32;
  const int64_t cpc = cpw * sh.wk;
  // The staged lhs slice (MT >= 4) must fit: halve the token tile if not.
  while (mt >= 4 && mt * cpc * 16 > kXsBytes)
    mt /= 2;
  p.smem = mt >= 4 ? size_t(mt * cpc * 16) : 0;
  p.z = (M + mt - 1) / mt;
  p.g = (p.units + sh.wr - 1) / sh.wr;
  p.S = sh.S;
  p.wr = sh.wr;
  p.wk = sh.wk;
  p.mt = mt;
  p.cpw = cpw;
  p.cpc = cpc;
  // The kernel indexes chunks in 32 bits.
  p.ok = !(p.z > 65535 || p.g > 65535 || p.g == 0 || p.chunks >= (int64_t(1) << 30));
  return p;
}

/// The gemv path's decode instance (paired_decode_kernel<T, NB>) serves
/// plans of one token and one weight row per warp, no cluster, the default
/// warp layout (WR = max(1, 4 / WK), WK a power of two), every lane with
/// the same NB <= kBatch chunks (chunks == WK * cpw), not gated, without
/// PDL, and with every present bias and scale in f32. Returns NB, or 0 when
/// the general instance takes the plan.
inline int64_t decode_nb(const GemvPlan &g, bool gated, bool f32_operands, bool pdl) {
  const int64_t wr = g.wk >= 4 ? 1 : 4 / g.wk;
  const bool ok = g.ok && !gated && !pdl && f32_operands && g.mt == 1 && g.rpw == 1 &&
                  g.S == 1 && g.wr == wr &&
                  (g.wk == 1 || g.wk == 2 || g.wk == 4 || g.wk == 8) &&
                  gemv_is_lean(g.S, g.mt, g.cpw) && g.cpw % 32 == 0 &&
                  g.chunks == g.wk * g.cpw && g.units < (int64_t(1) << 30);
  return ok ? g.cpw / 32 : 0;
}

/// The quantizing epilogue of the gated gemv (paired_gemv_kernel with
/// QUANT, FUSION_RT_PAIRED_QUANT_EPI): the plan of the two-step call (the
/// same sums) where its CTAs tile one 32-column MXFP8 block in a cluster
/// along y: one CTA of K (S = 1) and WR = 4 or 8 row warps. Returns the
/// cluster's CTAs along y (32 / WR), or 0 where the plan has no such form
/// (the call then takes the two steps).
inline int64_t quant_epilogue_cy(const GemvPlan &g, bool gated) {
  return g.ok && gated && g.S == 1 && (g.wr == 4 || g.wr == 8) ? 32 / g.wr : 0;
}

//===--- tensor-core path ----------------------------------------------------===//

/// The mma path (paired_mma_kernel): CTA tiles of 16 tokens x 8 or 16
/// weight rows, the K split across a cluster of up to kMmaMaxCluster CTAs
/// while the grid stays within kMmaTargetCtas (measured best in
/// docs/benchmarks/paired-mma-sweep.csv, archived at commit c58705aa4eb4:
/// 16-token tiles at every point,
/// 8-row tiles while they give <= kMmaNarrowTiles tiles, 1-4 CTAs of K).
constexpr int64_t kMmaTargetCtas = 192;
constexpr int64_t kMmaNarrowTiles = 128;
constexpr int64_t kMmaMaxCluster = 4;

/// Launch plan of the mma path: grid (S, G, Z), cluster (S, 1, 1) when
/// S > 1, WK warps per CTA splitting the rank's K slice; chunks are 16-byte
/// (8-element) pieces of K, and the K split is in blocks of 4 chunks (32 K).
struct MmaPlan {
  bool ok = false;
  /// tm m-tiles of 16 tokens x nt n-tiles of 8 weight rows per CTA (gated:
  /// nt = 2, the gate and up rows of 8 outputs).
  int64_t S = 1, wk = 8, tm = 2, nt = 2, g = 0, z = 0, chunks = 0, cpc = 0,
          cpw = 0;
  int64_t threads() const { return 32 * wk; }
};

/// Overrides of the mma plan (FUSION_RT_PAIRED_SPLIT / _MT (tokens, 16 or
/// 32) / _RPW (rows, 8 or 16) / _WK); -1 keeps the default.
struct MmaOverrides {
  int64_t S = -1, tokens = -1, rows = -1, wk = -1;
};

inline MmaPlan plan_mma(int64_t M, int64_t K, int64_t H0, int64_t H1,
                        bool gated, const MmaOverrides &o = MmaOverrides()) {
  MmaPlan p;
  p.chunks = K / 8;
  const int64_t blocks = (p.chunks + 3) / 4;
  const int64_t rows = gated ? 2 * H0 : H0 + H1;
  p.tm = o.tokens == 32 ? 2 : 1;
  const int64_t z1 = (M + 15) / 16;
  p.nt = gated ? 2
         : o.rows == 8 ? 1
         : o.rows == 16 ? 2
                        : ((rows + 7) / 8 * z1 <= kMmaNarrowTiles ? 1 : 2);
  p.g = (rows + 8 * p.nt - 1) / (8 * p.nt);
  p.z = (M + 16 * p.tm - 1) / (16 * p.tm);
  // K split across a cluster while the grid stays within kMmaTargetCtas and
  // each rank keeps >= 8 blocks of 32 K.
  int64_t S = o.S >= 1 ? o.S : 1;
  if (o.S < 1)
    while (S < kMmaMaxCluster && p.g * p.z * S * 2 <= kMmaTargetCtas &&
           blocks / (S * 2) >= 8)
      S *= 2;
  p.S = S > kMaxCluster ? kMaxCluster : S;
  const int64_t bpc = (blocks + p.S - 1) / p.S;
  // Warps split the rank's slice while each keeps >= 2 blocks.
  p.wk = 1;
  while (p.wk < kMaxWarps && bpc / (p.wk * 2) >= 2)
    p.wk *= 2;
  if (o.wk >= 1)
    p.wk = o.wk > kMaxWarps ? kMaxWarps : o.wk;
  const int64_t bpw = (bpc + p.wk - 1) / p.wk;
  p.cpw = bpw * 4;
  p.cpc = p.cpw * p.wk;
  p.ok = K > 0 && p.g > 0 && p.g <= 65535 && p.z <= 65535;
  return p;
}

/// Which path the CUDA backend takes for a paired projection of M tokens
/// (esize: element bytes of lhs and weights; vec: 16-byte loadable views;
/// gemv_max >= 0 replaces the gemv path's rule by M <= gemv_max).
enum class Path { Gemv, Mma, Blas };
inline Path select_path(int64_t M, int64_t K, int64_t H0, int64_t H1,
                        int64_t esize, bool vec, int64_t gemv_max = -1) {
  if (vec && M <= (gemv_max >= 0 ? gemv_max : gemv_max_m(M, K, H0, H1, esize)))
    return Path::Gemv;
  if (vec && esize == 2 && M * K * (H0 + H1) <= kMmaMaxMacs)
    return Path::Mma;
  return Path::Blas;
}

/// The dtype a projection's accumulator rounding (fusion_rt_accumulator_round)
/// writes: bf16 / f16 for the roundings, f32 for none.
inline int32_t rounded_dtype(int32_t round) {
  return round == FUSION_RT_ROUND_BF16 || round == FUSION_RT_ROUND_BF16_AFTER_BIAS
             ? FUSION_RT_BF16
         : round == FUSION_RT_ROUND_F16 || round == FUSION_RT_ROUND_F16_AFTER_BIAS
             ? FUSION_RT_F16
             : FUSION_RT_F32;
}

/// One projection of a quantizing pair, as the prefill form sees it: its
/// epilogue (fusion_rt_epilogue), accumulator rounding, whether a bias and a
/// scale are given, and the bias's dtype.
struct QuantHalf {
  int32_t epi_kind = FUSION_RT_EPILOGUE_NONE;
  int32_t round = FUSION_RT_ROUND_NONE;
  bool bias = false, scale = false;
  int32_t bias_dtype = FUSION_RT_F32;
};

/// Whether a quantizing pair on the cuBLAS path may take the prefill form
/// (cuda_paired_quantize_execute: the GEMMs write [gate | up] of the
/// rounding's type, then the gated quantizer reads it), as far as the op
/// decides it: gated, both halves rounded to one type (or neither), each with
/// no epilogue or a bias added before its rounding (cuBLASLt's bias epilogue
/// adds it to the accumulator; no scale; the bias f32 or of the rounded
/// type), and a biased pair's H a multiple of 8 (cuBLASLt's bias epilogue
/// measured wrong at H = 66: stacked [2H] = 132 bf16 rows, M = 64, K = 512,
/// 5 % of the codes off on the H100 and the H200, with the leading
/// dimensions' alignment given and split-K reductions in f32 only; with H a
/// multiple of 8 every tested shape is exact, and other biased fronts take
/// the two steps, exact as on the gemv and mma paths). `biased`: whether a
/// bias is added. The launch also needs its operands' layout (contiguous
/// biases, cuBLAS's int dimensions); the kernel report names this form where
/// the predicate holds.
inline bool prefill_form(bool gated, const QuantHalf (&h)[2], int64_t H,
                         bool &biased) {
  biased = false;
  if (!gated || rounded_dtype(h[0].round) != rounded_dtype(h[1].round))
    return false;
  for (const QuantHalf &q : h) {
    if (q.epi_kind == FUSION_RT_EPILOGUE_NONE)
      continue;
    if (q.epi_kind != FUSION_RT_EPILOGUE_BIAS || q.scale || !q.bias ||
        !(q.round == FUSION_RT_ROUND_NONE ||
          q.round == FUSION_RT_ROUND_BF16_AFTER_BIAS ||
          q.round == FUSION_RT_ROUND_F16_AFTER_BIAS) ||
        !(q.bias_dtype == FUSION_RT_F32 ||
          q.bias_dtype == rounded_dtype(q.round)))
      return false;
    biased = true;
  }
  return !biased || H % 8 == 0;
}

} // namespace paired
} // namespace fusion_rt

#endif // FUSION_RT_COMMON_PAIRED_PLAN_H
