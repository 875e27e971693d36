//===- mxfp8_quantize.cu - plain MXFP8 quantize kernels -----------*- CUDA -*-===//
//
// bf16 / f16 / f32 [M, N] -> MXFP8 (e4m3 or e5m2) rowwise, colwise (same or
// transposed layout) or both in one pass. 16-bit inputs travel as raw 16-byte
// vectors (8 elements a lane); f32 as 16-byte vectors of 4.
//
// Bytes that must move: M*N*in_bytes read, M*N (+ M*N/32 scales) written per
// direction. Launch: see launch.cuh.
//
// The v2 kernels: 16-bit quantize without `amax` (rowwise, colwise same or
// transposed, both) uses the v2 kernels: leaner fast tiles (packed 16-bit
// abs-max, one scale computation per block shared by shuffles instead of one
// per lane, compile-time element format and NaN policy, per-tile base
// pointers); their slow tiles are the engine's. Bit-exact on every GPU test
// case and faster than the engine on every shape in the H200 run of
// docs/benchmarks/mxfp8_results.md.
//
// Within v2, the colwise transposed layout (colwise only, and both
// directions) runs the colT kernel (shared-memory transpose, 128 x 64 CTA
// tiles) and both directions with the same layout the both CTA kernel
// (rowwise scales staged in shared memory). Which kernel runs is decided by
// common/mx_plan.h (plan_mx), whose knobs (common/tuning.def: quant_v2,
// col_t, both, row_stream, gated_bwd) select the baselines for A/B runs.
//
//===----------------------------------------------------------------------===//
#include "cuda/dispatch.cuh"
#include "cuda/launch.cuh"
#include "cuda/row_stream.cuh"

namespace fusion_rt {
namespace cuda {

int plain_vec(int dtype) { return dtype == FUSION_RT_F32 ? 4 : 8; }

namespace {

// The 16-bit amax helpers are the stream kernels' (row_stream.cuh).
using stream::key_f32_bits;
using stream::max16x2;
using stream::vec_key;

/// Zeroes a 16-bit NaN key under IGNORE (maxNum of an all-NaN chain is NaN).
template <typename T, bool PROPAGATE>
__device__ __forceinline__ uint32_t fix_key(uint32_t k) {
  if constexpr (PROPAGATE)
    return k;
  const uint32_t inf = std::is_same<T, BF16T>::value ? 0x7f80u : 0x7c00u;
  return k > inf ? 0u : k;
}

/// The colwise scales of a lane's 8 columns in the 8 x 8 lane block layout
/// (4 row groups of 8 lanes, 8 rows each): column keys are packed 16-bit
/// maxima over the lane's rows, joined across the row groups with shuffles;
/// row group g computes the scales of column pair g and shares them.
template <typename T, bool PROPAGATE>
__device__ __forceinline__ void col_scales8(const uint4 (&w)[8], int group, int lane,
                                            int fmt, int32_t rounding, uint8_t (&sb)[8],
                                            float (&crcp)[8]) {
  constexpr int RPL = 8;
  const uint32_t m = 0x7fff7fffu;
  uint32_t ck[4] = {w[0].x & m, w[0].y & m, w[0].z & m, w[0].w & m};
#pragma unroll
  for (int i = 1; i < RPL; ++i) {
    ck[0] = max16x2<T, PROPAGATE>(ck[0], w[i].x & m);
    ck[1] = max16x2<T, PROPAGATE>(ck[1], w[i].y & m);
    ck[2] = max16x2<T, PROPAGATE>(ck[2], w[i].z & m);
    ck[3] = max16x2<T, PROPAGATE>(ck[3], w[i].w & m);
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    ck[j] = max16x2<T, PROPAGATE>(ck[j], __shfl_xor_sync(0xffffffffu, ck[j], 8));
    ck[j] = max16x2<T, PROPAGATE>(ck[j], __shfl_xor_sync(0xffffffffu, ck[j], 16));
  }
  const uint32_t kk = group == 0 ? ck[0] : group == 1 ? ck[1] : group == 2 ? ck[2] : ck[3];
  const uint32_t sb_lo = block_scale_byte(
      key_f32_bits<T>(fix_key<T, PROPAGATE>(kk & 0xffffu)), fmt, rounding, PROPAGATE);
  const uint32_t sb_hi = block_scale_byte(
      key_f32_bits<T>(fix_key<T, PROPAGATE>(kk >> 16)), fmt, rounding, PROPAGATE);
  const uint32_t mine = sb_lo | (sb_hi << 8);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint32_t pr = __shfl_sync(0xffffffffu, mine, j * 8 + (lane & 7));
    sb[2 * j] = uint8_t(pr & 0xffu);
    sb[2 * j + 1] = uint8_t(pr >> 8);
  }
#pragma unroll
  for (int j = 0; j < 8; ++j)
    crcp[j] = mx_reciprocal(sb[j]);
}

/// The rowwise half of a lane's 8 x 8 block (rows rb .. rb + 7, columns
/// c .. c + 7): per row, the 32-column block scale joined over the block's
/// 4 lanes (lane q of a block computes the scales of rows q and q + 4 and
/// shares them), the codes to p.rd, and the scale byte from lane q == 0 to
/// the scale buffer or, with RS_SMEM (the both-directions CTA kernel), to
/// shared memory (`rs`: [32 rows][8 blocks] bytes of the CTA tile, this
/// warp's blocks 2 * warp, 2 * warp + 1).
template <typename T, bool E4M3, bool PROPAGATE, bool RS_SMEM>
__device__ __forceinline__ void
row_part8(const KParams &p, const uint4 (&w)[8], int64_t rb, int64_t c,
          int group, int lane, uint32_t rs, int warp, int64_t rows = 8) {
  constexpr int RPL = 8;
  const int fmt = E4M3 ? kMXFP8E4M3 : kMXFP8E5M2;
  uint32_t key[RPL];
#pragma unroll
  for (int i = 0; i < RPL; ++i)
    key[i] = stream::block_max4(vec_key<T, PROPAGATE>(w[i]));
  const int q = lane & 3;
  uint32_t sb_row[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const uint32_t k = q == 0 ? key[4 * h] : q == 1 ? key[4 * h + 1]
                       : q == 2 ? key[4 * h + 2] : key[4 * h + 3];
    sb_row[h] = block_scale_byte(key_f32_bits<T>(k), fmt, p.rounding, PROPAGATE);
  }
  uint8_t *dp = p.rd + rb * p.rd_rs + c;
  const int64_t sc = c / 32;
  uint8_t *sp = p.swz ? p.rsc + swizzled_scale_offset(rb, sc, p.rsc_pc)
                      : p.rsc + rb * p.rsc_rs + sc * p.rsc_cs;
  const int64_t sstep = p.swz ? 16 : p.rsc_rs;
#pragma unroll
  for (int i = 0; i < RPL; ++i) {
    const uint8_t b =
        uint8_t(__shfl_sync(0xffffffffu, sb_row[i / 4], (lane & ~3) | (i % 4)));
    const float r = mx_reciprocal(b);
    const uint32_t ws[4] = {w[i].x, w[i].y, w[i].z, w[i].w};
    uint32_t code[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float lo = T::lo(ws[j]) * r, hi = T::hi(ws[j]) * r;
      code[j] = E4M3 ? cvt_e4m3x2(lo, hi) : cvt_e5m2x2(lo, hi);
    }
    if (i >= rows) // past M (rows < 8 only in the masked row tile)
      continue;
    *reinterpret_cast<uint2 *>(dp + i * p.rd_rs) =
        make_uint2(code[0] | (code[1] << 16), code[2] | (code[3] << 16));
    if constexpr (RS_SMEM) {
      if (q == 0)
        sts8(rs + (group * RPL + i) * 8 + warp * 2 + ((lane & 7) >> 2), b);
    } else {
      if (q == 0)
        sp[i * sstep] = b;
    }
  }
}

/// The 8 rows x 8 columns of a lane (16-byte loads, all in flight at once);
/// rows from `rows` on read as zeros.
__device__ __forceinline__ void load8(const KParams &p, int64_t rb, int64_t c,
                                      uint4 (&w)[8], int64_t rows = 8) {
  const char *xp = p.x + (rb * p.x_rs + c) * 2;
  const int64_t xstep = p.x_rs * 2;
#pragma unroll
  for (int i = 0; i < 8; ++i)
    w[i] = i < rows ? ldg_stream16(xp + i * xstep) : make_uint4(0, 0, 0, 0);
}

/// Fast rowwise tile of mx_rowwise16_v2_kernel: same lane layout as the
/// engine (4 row groups of 8 lanes, 8 rows and 8 columns a lane).
/// Rows past M are masked (zeros in, nothing out): a band of fewer than 32
/// rows takes this tile too.
template <typename T, bool E4M3, bool PROPAGATE>
__device__ __forceinline__ void row16_tile(const KParams &p, int64_t rb,
                                           int64_t c, int lane) {
  const int64_t rows = p.M - rb;
  uint4 w[8];
  load8(p, rb, c, w, rows);
  row_part8<T, E4M3, PROPAGATE, false>(p, w, rb, c, 0, lane, 0, 0, rows);
}

/// Fast colwise (and, with DO_ROW, rowwise) tile: the 8 x 8 lane block of
/// the engine's layout (col_scales8, then row_part8; RS_SMEM: see there).
template <typename T, bool E4M3, bool PROPAGATE, bool DO_ROW, bool RS_SMEM = false>
__device__ __forceinline__ void col16_body(const KParams &p, int64_t band,
                                           int64_t rb, int64_t c, int group,
                                           int lane, const uint4 (&w)[8],
                                           uint32_t rs = 0, int warp = 0) {
  constexpr int RPL = 8;
  const int fmt = E4M3 ? kMXFP8E4M3 : kMXFP8E5M2;

  uint8_t sb[8];
  float crcp[8];
  col_scales8<T, PROPAGATE>(w, group, lane, fmt, p.rounding, sb, crcp);
  if (group == 0)
#pragma unroll
    for (int j = 0; j < 8; ++j)
      put_col_scale(p, c + j, band, sb[j]);
  if (!p.col_t) {
    uint8_t *dp = p.cd + rb * p.cd_rs + c;
#pragma unroll
    for (int i = 0; i < RPL; ++i) {
      const uint32_t ws[4] = {w[i].x, w[i].y, w[i].z, w[i].w};
      uint32_t code[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float lo = T::lo(ws[j]) * crcp[2 * j], hi = T::hi(ws[j]) * crcp[2 * j + 1];
        code[j] = E4M3 ? cvt_e4m3x2(lo, hi) : cvt_e5m2x2(lo, hi);
      }
      *reinterpret_cast<uint2 *>(dp + i * p.cd_rs) =
          make_uint2(code[0] | (code[1] << 16), code[2] | (code[3] << 16));
    }
  } else {
    // Transposed: column c + j is 8 contiguous codes of output row c + j.
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      uint32_t code[4];
#pragma unroll
      for (int i = 0; i < RPL; i += 2) {
        const uint32_t a = (&w[i].x)[j / 2], b = (&w[i + 1].x)[j / 2];
        const float va = ((j & 1) ? T::hi(a) : T::lo(a)) * crcp[j];
        const float vb = ((j & 1) ? T::hi(b) : T::lo(b)) * crcp[j];
        code[i / 2] = E4M3 ? cvt_e4m3x2(va, vb) : cvt_e5m2x2(va, vb);
      }
      *reinterpret_cast<uint2 *>(p.cd + (c + j) * p.cd_rs + rb) =
          make_uint2(code[0] | (code[1] << 16), code[2] | (code[3] << 16));
    }
  }
  if constexpr (DO_ROW)
    row_part8<T, E4M3, PROPAGATE, RS_SMEM>(p, w, rb, c, group, lane, rs, warp);
}

/// load8 with an L2 evict-first policy.
__device__ __forceinline__ void load8_pol(const KParams &p, int64_t rb, int64_t c,
                                          uint4 (&w)[8], uint64_t pol) {
  const char *xp = p.x + (rb * p.x_rs + c) * 2;
  const int64_t xstep = p.x_rs * 2;
#pragma unroll
  for (int i = 0; i < 8; ++i)
    w[i] = ldg_pol16(xp + i * xstep, pol);
}

template <typename T, bool E4M3, bool PROPAGATE, bool DO_ROW>
__device__ __forceinline__ void col16_tile(const KParams &p, int64_t band,
                                           int64_t rb, int64_t c, int group,
                                           int lane) {
  uint4 w[8];
  load8(p, rb, c, w);
  col16_body<T, E4M3, PROPAGATE, DO_ROW>(p, band, rb, c, group, lane, w);
}

//===--- colwise transposed through shared memory (the "colT" kernels) -----===//
//
// The transposed colwise output is [N, M] (row n = column n of the input),
// its compact scales [N, ceil(M/32)]. The v2 tile above stores, per warp
// tile of 32 rows x 64 columns, 8 bytes a lane to 8 output rows (32-byte
// pieces) and one scale byte per column: every scale byte lands in a
// different 32-byte sector whose other 31 bytes come from the other row
// bands, far apart in time.
//
// The colT kernel: a CTA (4 warps) owns a 128-row x 64-column tile; warp w
// quantizes rows 32w..32w+31 exactly like col16_tile (same loads, packed
// abs-max, shuffles, scale, reciprocal, cvt), but writes its codes
// transposed into shared memory (64 rows of 128 bytes, the 16-byte chunks of
// row n XOR-swizzled by (n / 8) % 8: the 8-byte writes and the 16-byte reads
// are bank-conflict free) and its scale bytes into a [64][4] array. After
// one barrier the CTA stores the 64 x 128-byte transposed block as full
// 128-byte lines (16 bytes a lane, 8 lanes a line) and each column's 4 scale
// bytes as one 4-byte word where aligned. Tiles are visited in column
// strips of 8 row tiles (1024 rows = 32 bands), so the 32 scale bytes of a
// sector and the 1 KB pieces of an output row are written by CTAs running
// at the same time. Double-buffered shared memory: one barrier per tile.
// Edge tiles (not all 128 rows or 64 columns inside, or no vector path) run
// the v2 tile / slow tile per warp.

/// Tile t of a G x S grid of tiles (G tile rows, S column strips), visited
/// in super-rows of H tile rows: strip by strip, the H tile rows of a strip
/// one after the other (the last super-row may hold fewer).
__device__ __forceinline__ void strip_order(uint32_t t, uint32_t G, uint32_t S,
                                            uint32_t H, uint32_t &row,
                                            uint32_t &strip) {
  const uint32_t full = G / H;
  const uint32_t per = H * S;
  if (t < full * per) {
    const uint32_t sr = t / per, l = t - sr * per;
    strip = l / H;
    row = sr * H + (l - strip * H);
  } else {
    const uint32_t h = G - full * H, l = t - full * per;
    strip = l / h;
    row = full * H + (l - strip * h);
  }
}

/// One warp's 32 x 64 part of a colT tile: col16_tile with the transposed
/// codes and the scale bytes going to shared memory (`cs`: this buffer's
/// 64 x 128-byte code block, `ss`: its [64][4] scale bytes).
template <typename T, bool E4M3, bool PROPAGATE, bool DO_ROW>
__device__ __forceinline__ void colT16_tile(const KParams &p, int64_t rb,
                                            int64_t c, int group, int lane,
                                            int warp, uint32_t cs, uint32_t ss,
                                            const uint4 (&w)[8]) {
  constexpr int RPL = 8;
  const int fmt = E4M3 ? kMXFP8E4M3 : kMXFP8E5M2;

  const int cl = lane & 7; // this lane's 8 columns: cl * 8 .. + 8 of the tile
  uint8_t sb[8];
  float crcp[8];
  col_scales8<T, PROPAGATE>(w, group, lane, fmt, p.rounding, sb, crcp);
  if (group == 0)
#pragma unroll
    for (int j = 0; j < 8; ++j)
      sts8(ss + (cl * 8 + j) * 4 + warp, sb[j]);
  // Column cl*8 + j, rows 32*warp + 8*group .. + 8: 8 bytes at byte
  // 32*warp + 8*group of smem row cl*8 + j, chunk XOR-swizzled by cl.
  const uint32_t chunk = uint32_t(warp * 2 + (group >> 1)) ^ uint32_t(cl);
  const uint32_t a0 = cs + uint32_t(cl * 8) * 128 + (chunk << 4) + ((group & 1) << 3);
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    uint32_t code[4];
#pragma unroll
    for (int i = 0; i < RPL; i += 2) {
      const uint32_t a = (&w[i].x)[j / 2], b = (&w[i + 1].x)[j / 2];
      const float va = ((j & 1) ? T::hi(a) : T::lo(a)) * crcp[j];
      const float vb = ((j & 1) ? T::hi(b) : T::lo(b)) * crcp[j];
      code[i / 2] = E4M3 ? cvt_e4m3x2(va, vb) : cvt_e5m2x2(va, vb);
    }
    sts64(a0 + j * 128, code[0] | (code[1] << 16), code[2] | (code[3] << 16));
  }
  if constexpr (DO_ROW)
    row_part8<T, E4M3, PROPAGATE, false>(p, w, rb, c, group, lane, 0, warp);
}

/// The colT kernel (col_t only; DIR = kCol or kBoth). Grid: persistent,
/// CTA tiles of 128 rows x 64 columns in strip order (strip_order, H = 8).
/// PF: the loads of the CTA's next tile (when it is a full tile) are issued
/// right after this tile's codes are computed, before the barrier and the
/// stores, into the registers the computation just freed.
/// (Compiled for 5 or 6 resident CTAs an SM instead of 4 (96 / 80 registers,
/// no spills for the colwise-only forms) it was no faster on the H200:
/// docs/kernels.md.)
/// HINT (the sph form): input loads with an L2 evict-first policy and
/// streaming (.cs) code stores; scale words stay default (they must meet in
/// the L2).
template <typename T, bool E4M3, bool PROPAGATE, int DIR, bool PF = false,
          bool HINT = false>
__global__ void __launch_bounds__(128, 4) mx_colT16_kernel(const KParams p) {
  using Src = SrcPlain<T>;
  __shared__ __align__(16) uint8_t codes_sh[2][64 * 128];
  __shared__ __align__(16) uint8_t scales_sh[2][64 * 4];
  const uint32_t cs0 = smem_addr(&codes_sh[0][0]);
  const uint32_t ss0 = smem_addr(&scales_sh[0][0]);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int group = lane >> 3;
  const uint32_t G = uint32_t((p.M + 127) / 128);
  const uint32_t S = uint32_t(p.tiles_x);
  const uint32_t ntiles = uint32_t(p.tiles);
  uint32_t unused_amax = 0;
  uint32_t buf = 0;
  uint4 w[8];
  bool have = false; // w holds this tile's rows (PF)
  const uint64_t pol = HINT ? l2_evict_first() : 0;
  for (uint32_t t = blockIdx.x; t < ntiles; t += gridDim.x, buf ^= 1u) {
    uint32_t trow, strip;
    strip_order(t, G, S, 8, trow, strip);
    const int64_t R0 = int64_t(trow) * 128, C0 = int64_t(strip) * 64;
    const int64_t band = R0 / 32 + warp;
    const int64_t rb = band * 32 + group * 8;
    const int64_t c = C0 + (lane & 7) * 8;
    // Uniform over the CTA: the whole 128 x 64 tile inside, vector views.
    const bool cta_fast = p.vec_all && R0 + 128 <= p.M && C0 + 64 <= p.K;
    if (cta_fast) {
      const uint32_t cs = cs0 + buf * (64 * 128), ss = ss0 + buf * (64 * 4);
      if (!PF || !have) {
        if constexpr (HINT)
          load8_pol(p, rb, c, w, pol);
        else
          load8(p, rb, c, w);
      }
      colT16_tile<T, E4M3, PROPAGATE, DIR == kBoth>(p, rb, c, group, lane, warp,
                                                     cs, ss, w);
      if constexpr (PF) {
        have = false;
        const uint32_t tn = t + gridDim.x;
        if (tn < ntiles) {
          uint32_t trn, stn;
          strip_order(tn, G, S, 8, trn, stn);
          const int64_t R0n = int64_t(trn) * 128, C0n = int64_t(stn) * 64;
          if (R0n + 128 <= p.M && C0n + 64 <= p.K) {
            if constexpr (HINT)
              load8_pol(p, R0n + warp * 32 + group * 8, C0n + (lane & 7) * 8, w, pol);
            else
              load8(p, R0n + warp * 32 + group * 8, C0n + (lane & 7) * 8, w);
            have = true;
          }
        }
      }
      __syncthreads();
      // 64 output rows of 128 bytes: 8 lanes a row, 16 bytes a lane.
      uint8_t *const out = p.cd + C0 * p.cd_rs + R0;
#pragma unroll
      for (int it = 0; it < 4; ++it) {
        const uint32_t v = uint32_t(it * 128) + threadIdx.x;
        const uint32_t n = v >> 3, k = v & 7u;
        const uint4 val = lds128(cs + n * 128 + ((k ^ ((n >> 3) & 7u)) << 4));
        if constexpr (HINT)
          stg128_cs(out + int64_t(n) * p.cd_rs + k * 16, val);
        else
          stg128(out + int64_t(n) * p.cd_rs + k * 16, val);
      }
      if (threadIdx.x < 64) {
        const int64_t n = C0 + threadIdx.x;
        const int64_t band0 = R0 / 32;
        const uint32_t word = lds32(ss + threadIdx.x * 4);
        int64_t off;
        bool contiguous;
        if (p.swz) {
          off = swizzled_scale_offset(n, band0, p.csc_pc); // band0 % 4 == 0
          contiguous = true;
        } else {
          off = n * p.csc_rs + band0 * p.csc_cs;
          contiguous = p.csc_cs == 1;
        }
        uint8_t *const q = p.csc + off;
        if (contiguous && (reinterpret_cast<uintptr_t>(q) & 3u) == 0) {
          stg32(q, word);
        } else {
#pragma unroll
          for (int b = 0; b < 4; ++b)
            put_col_scale(p, n, band0 + b, uint8_t(word >> (8 * b)));
        }
      }
    } else if (band * 32 < p.M) {
      have = false;
      // Edge tile: this warp's band through the v2 tile or the slow tile.
      const bool lane_fast = p.vec_all && band * 32 + 32 <= p.M && c + 8 <= p.K;
      if (__all_sync(0xffffffffu, lane_fast))
        col16_tile<T, E4M3, PROPAGATE, DIR == kBoth>(p, band, rb, c, group, lane);
      else
        tile_slow<Src, DIR>(p, band, rb, c, group, lane, unused_amax);
    }
    // Every path passes one barrier per tile: with two buffers, a buffer is
    // written again only after every thread has read it (two barriers on).
    if (!cta_fast)
      __syncthreads();
  }
}

/// Both directions, same colwise layout, through a CTA tile (the "c" variant
/// of FUSION_RT_CUDA_BOTH): 4 warps side by side own 32 rows x 256 columns;
/// each warp runs col16_tile on its 32 x 64 part, but its rowwise scale bytes
/// (2 a row) go to shared memory, and after one barrier each of the 32 rows'
/// 8 scale bytes leaves as one 8-byte store (two 4-byte stores when
/// swizzled; bytes where misaligned): 32 store requests per CTA tile instead
/// of 256 single bytes. Codes and colwise scales are stored as in the v2
/// tile. Double-buffered, one barrier per tile; edge tiles per warp.
template <typename T, bool E4M3, bool PROPAGATE>
__global__ void __launch_bounds__(128, 4) mx_both16_cta_kernel(const KParams p) {
  using Src = SrcPlain<T>;
  __shared__ __align__(16) uint8_t rs_sh[2][32 * 8];
  const uint32_t rs0 = smem_addr(&rs_sh[0][0]);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int group = lane >> 3;
  const int64_t S = p.tiles_x;
  uint32_t unused_amax = 0;
  uint32_t buf = 0;
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x, buf ^= 1u) {
    const int64_t band = t / S;
    const int64_t C0 = (t - band * S) * 256;
    const int64_t rb = band * 32 + group * 8;
    const int64_t c = C0 + warp * 64 + (lane & 7) * 8;
    const bool cta_fast = p.vec_all && band * 32 + 32 <= p.M && C0 + 256 <= p.K;
    if (cta_fast) {
      const uint32_t rs = rs0 + buf * (32 * 8);
      uint4 w[8];
      load8(p, rb, c, w);
      col16_body<T, E4M3, PROPAGATE, true, true>(p, band, rb, c, group, lane, w, rs,
                                                 warp);
      __syncthreads();
      if (threadIdx.x < 32) {
        const int64_t r = band * 32 + threadIdx.x;
        const int64_t sc = C0 / 32; // multiple of 8
        const uint32_t a = rs + threadIdx.x * 8;
        const uint32_t lo = lds32(a), hi = lds32(a + 4);
        if (p.swz) {
          uint8_t *q0 = p.rsc + swizzled_scale_offset(r, sc, p.rsc_pc);
          uint8_t *q1 = p.rsc + swizzled_scale_offset(r, sc + 4, p.rsc_pc);
          if ((reinterpret_cast<uintptr_t>(p.rsc) & 3u) == 0) {
            stg32(q0, lo);
            stg32(q1, hi);
          } else {
#pragma unroll
            for (int b = 0; b < 4; ++b) {
              q0[b] = uint8_t(lo >> (8 * b));
              q1[b] = uint8_t(hi >> (8 * b));
            }
          }
        } else {
          uint8_t *q = p.rsc + r * p.rsc_rs + sc * p.rsc_cs;
          const uintptr_t al = reinterpret_cast<uintptr_t>(q);
          if (p.rsc_cs == 1 && (al & 7u) == 0) {
            stg64(q, lo, hi);
          } else if (p.rsc_cs == 1 && (al & 3u) == 0) {
            stg32(q, lo);
            stg32(q + 4, hi);
          } else {
#pragma unroll
            for (int b = 0; b < 4; ++b) {
              q[b * p.rsc_cs] = uint8_t(lo >> (8 * b));
              q[(b + 4) * p.rsc_cs] = uint8_t(hi >> (8 * b));
            }
          }
        }
      }
    } else if (C0 + warp * 64 < p.K) {
      // Edge tile: this warp's 32 x 64 part through the v2 tile or the slow tile.
      const bool lane_fast = p.vec_all && band * 32 + 32 <= p.M && c + 8 <= p.K;
      if (__all_sync(0xffffffffu, lane_fast))
        col16_tile<T, E4M3, PROPAGATE, true>(p, band, rb, c, group, lane);
      else
        tile_slow<Src, kBoth>(p, band, rb, c, group, lane, unused_amax);
    }
    // One barrier per tile on every path (two buffers, see mx_colT16_kernel).
    if (!cta_fast)
      __syncthreads();
  }
}

template <typename T, bool E4M3, bool PROPAGATE, int DIR>
__global__ void __launch_bounds__(128, 4) mx_col16_v2_kernel(const KParams p) {
  uint32_t unused_amax = 0;
  v2_tiles(
      p, p.vec_all,
      [&](int64_t band, int64_t rb, int64_t c, int group, int lane) {
        col16_tile<T, E4M3, PROPAGATE, DIR == kBoth>(p, band, rb, c, group, lane);
      },
      [&](int64_t band, int64_t rb, int64_t c, int group, int lane) {
        tile_slow<SrcPlain<T>, DIR>(p, band, rb, c, group, lane, unused_amax);
      });
}

template <typename T, bool E4M3, bool PROPAGATE>
__global__ void __launch_bounds__(128, 4) mx_rowwise16_v2_kernel(const KParams p) {
  uint32_t unused_amax = 0;
  v2_tiles<true>(
      p, p.vec_all,
      [&](int64_t, int64_t rb, int64_t c, int, int lane) {
        row16_tile<T, E4M3, PROPAGATE>(p, rb, c, lane);
      },
      [&](int64_t band, int64_t rb, int64_t c, int group, int lane) {
        tile_slow<SrcPlain<T>, kRow>(p, band, rb, c, group, lane, unused_amax);
      });
}

/// The 16-bit plain kernels of plan_mx (common/mx_plan.h): the v2 warp-tile
/// kernels, the both-directions CTA kernel and the transposed colT kernel
/// (colwise: the prefetching form with L2 hints, "sph"; both: the plain
/// form, whose prefetch would spill under 128 registers). The variants that
/// lost their A/B runs (colT s and sp colwise; docs/kernels.md) are retired.
template <typename T, bool E4M3, bool PROPAGATE>
cudaError_t launch_v2(const KParams &p, const mx_plan::Plan &plan, cudaStream_t s) {
  static int per_sm[6] = {0, 0, 0, 0, 0, 0};
  switch (plan.family) {
  case mx_plan::Family::BothCta:
    return launch_planned(mx_both16_cta_kernel<T, E4M3, PROPAGATE>, p, plan,
                          per_sm[5], s);
  case mx_plan::Family::ColT:
    return plan.dir == kCol
               ? launch_planned(
                     mx_colT16_kernel<T, E4M3, PROPAGATE, kCol, true, true>, p,
                     plan, per_sm[3], s)
               : launch_planned(mx_colT16_kernel<T, E4M3, PROPAGATE, kBoth>, p,
                                plan, per_sm[4], s);
  default:
    break;
  }
  if (plan.dir == kRow)
    return launch_planned(mx_rowwise16_v2_kernel<T, E4M3, PROPAGATE>, p, plan,
                          per_sm[0], s);
  if (plan.dir == kCol)
    return launch_planned(mx_col16_v2_kernel<T, E4M3, PROPAGATE, kCol>, p, plan,
                          per_sm[1], s);
  return launch_planned(mx_col16_v2_kernel<T, E4M3, PROPAGATE, kBoth>, p, plan,
                        per_sm[2], s);
}

template <typename T>
cudaError_t launch_v2_typed(const KParams &p, const mx_plan::Plan &plan,
                            cudaStream_t s) {
  return with_e4m3_propagate(
      p.format == kMXFP8E4M3, p.propagate, [&](auto e4m3, auto prop) {
        constexpr bool E = decltype(e4m3)::value, P = decltype(prop)::value;
        return launch_v2<T, E, P>(p, plan, s);
      });
}

//===--- gated backward (SwiGLU) ---------------------------------------------===//

/// dact and dgate of 8 (gate, up, grad) values (gated_backward of
/// common/activation.h, TE's shared-sigmoid form) rounded to bf16 and packed
/// in pairs (cvt.rn.bf16x2.f32: the rounding of round_inter).
template <typename T>
__device__ __forceinline__ void swiglu_bwd8(const KParams &p, const uint4 &gv,
                                            const uint4 &uv, const uint4 &dv,
                                            uint4 &wa, uint4 &wg) {
  const uint32_t gw[4] = {gv.x, gv.y, gv.z, gv.w};
  const uint32_t uw[4] = {uv.x, uv.y, uv.z, uv.w};
  const uint32_t dw[4] = {dv.x, dv.y, dv.z, dv.w};
  uint32_t pa[4], pg[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float da[2], dg[2];
#pragma unroll
    for (int h = 0; h < 2; ++h)
      gated_backward(kActSwiGLU, h ? T::hi(gw[j]) : T::lo(gw[j]),
                     h ? T::hi(uw[j]) : T::lo(uw[j]), h ? T::hi(dw[j]) : T::lo(dw[j]),
                     p.act(), da[h], dg[h]);
    pa[j] = cvt_rn_bf16x2(da[1], da[0]);
    pg[j] = cvt_rn_bf16x2(dg[1], dg[0]);
  }
  wa = make_uint4(pa[0], pa[1], pa[2], pa[3]);
  wg = make_uint4(pg[0], pg[1], pg[2], pg[3]);
}

/// SwiGLU backward -> MXFP8 (DIR) with a bf16 intermediate, 16-bit inputs,
/// M % 32 == 0 and K % 64 == 0 (every tile full; the host checks): per lane
/// the 8 rows x 8 columns of gate, up and grad, dact and dgate rounded to
/// bf16, then the plain 16-bit quantize of the two halves of the [M, 2K]
/// value matrix (dgate at column K: its rowwise scales at nb(K) + c / 32),
/// which is exactly what the unfused graph (activation into bf16, then
/// quantize) computes.
template <typename T, bool E4M3, bool PROPAGATE, int DIR>
__global__ void __launch_bounds__(128, DIR == kBoth ? 3 : 4) swiglu_bwd16_kernel(const KParams p) {
  v2_tiles(
      p, true,
      [&](int64_t band, int64_t rb, int64_t c, int group, int lane) {
        constexpr int RPL = 8;
        uint4 wa[RPL], wg[RPL];
        {
          uint4 gv[RPL], uv[RPL], dv[RPL];
#pragma unroll
          for (int i = 0; i < RPL; ++i) { // row by row, the three inputs interleaved
            gv[i] = ldg_stream16(p.x + ((rb + i) * p.x_rs + c) * 2);
            uv[i] = ldg_stream16(p.up + ((rb + i) * p.up_rs + c) * 2);
            dv[i] = ldg_stream16(p.grad + ((rb + i) * p.g_rs + c) * 2);
          }
#pragma unroll
          for (int i = 0; i < RPL; ++i)
            swiglu_bwd8<T>(p, gv[i], uv[i], dv[i], wa[i], wg[i]);
        }
        if constexpr (DIR == kRow) {
          row_part8<BF16T, E4M3, PROPAGATE, false>(p, wa, rb, c, group, lane, 0, 0);
          row_part8<BF16T, E4M3, PROPAGATE, false>(p, wg, rb, c + p.K, group, lane, 0, 0);
        } else {
          col16_body<BF16T, E4M3, PROPAGATE, DIR == kBoth>(p, band, rb, c, group, lane, wa);
          col16_body<BF16T, E4M3, PROPAGATE, DIR == kBoth>(p, band, rb, c + p.K, group,
                                                          lane, wg);
        }
      },
      [&](int64_t, int64_t, int64_t, int, int) {}); // no partial tiles (host)
}

template <typename T, bool E4M3, bool PROPAGATE>
cudaError_t launch_swiglu_bwd(const KParams &p, const mx_plan::Plan &plan,
                              cudaStream_t s) {
  static int per_sm[3] = {0, 0, 0};
  if (plan.dir == kRow)
    return launch_planned(swiglu_bwd16_kernel<T, E4M3, PROPAGATE, kRow>, p, plan,
                          per_sm[0], s);
  if (plan.dir == kCol)
    return launch_planned(swiglu_bwd16_kernel<T, E4M3, PROPAGATE, kCol>, p, plan,
                          per_sm[1], s);
  return launch_planned(swiglu_bwd16_kernel<T, E4M3, PROPAGATE, kBoth>, p, plan,
                        per_sm[2], s);
}

template <typename T>
cudaError_t launch_swiglu_bwd_typed(const KParams &p, const mx_plan::Plan &plan,
                                    cudaStream_t s) {
  return with_e4m3_propagate(
      p.format == kMXFP8E4M3, p.propagate, [&](auto e4m3, auto prop) {
        constexpr bool E = decltype(e4m3)::value, P = decltype(prop)::value;
        return launch_swiglu_bwd<T, E, P>(p, plan, s);
      });
}

} // namespace

cudaError_t launch_swiglu_bwd_v2(const KParams &p, const mx_plan::Plan &plan,
                                 int dtype, cudaStream_t s) {
  return dtype == FUSION_RT_BF16 ? launch_swiglu_bwd_typed<BF16T>(p, plan, s)
                                 : launch_swiglu_bwd_typed<F16T>(p, plan, s);
}

cudaError_t launch_quantize(const KParams &p, const mx_plan::Plan &plan, int dtype,
                            cudaStream_t s) {
  const bool bf16 = dtype == FUSION_RT_BF16;
  switch (plan.family) {
  case mx_plan::Family::RowStream:
    return bf16 ? launch_stream_typed<false, BF16T>(p, plan, s)
                : launch_stream_typed<false, F16T>(p, plan, s);
  case mx_plan::Family::V2:
  case mx_plan::Family::BothCta:
  case mx_plan::Family::ColT:
    return bf16 ? launch_v2_typed<BF16T>(p, plan, s) : launch_v2_typed<F16T>(p, plan, s);
  case mx_plan::Family::Tiles:
    return launch_typed<SrcPlain>(p, plan, dtype, s);
  default:
    return cudaErrorInvalidConfiguration; // not a plain quantizer's family
  }
}

} // namespace cuda
} // namespace fusion_rt
