//===- row_stream.cuh - rowwise MXFP8 "stream" kernels ------------*- CUDA -*-===//
//
// Rowwise quantize (plain 16-bit input, and the SwiGLU / clamped SwiGLU
// forward) of an [M, K] value matrix, seen as chunks of 256 values in
// row-major order (plain: K % 256 == 0, M*K/256 chunks; gated: K % 8 == 0,
// ceil(K/256) chunks a row, the lanes past K of a row's last chunk
// masked). A warp takes U consecutive chunks per step; lane l holds
// values l*8 .. l*8+7 of every chunk, so each chunk is one contiguous
// 512-byte read per input (16 bytes a lane) and one contiguous 256-byte
// write of codes (8 bytes a lane); the 4 lanes of a 32-value block join
// their amax with two xor shuffles. Consecutive warps take consecutive
// steps: the grid streams through memory front to back like a copy.
//
// Memory-level parallelism: all U (plain) or 2U (SwiGLU) 16-byte loads of a
// step are issued before the first use, and with PF the loads of the warp's
// next step are issued before the current step is computed (software
// prefetch into registers), so a warp always has a step's bytes in flight.
//
// FLAT form (plain input with contiguous rows and compact contiguous
// scales): chunk c is simply elements [256 c, 256 c + 256) of input and
// codes and scale bytes [8 c, 8 c + 8); the scale bytes of 4 chunks are
// gathered by xor shuffles into 4-byte stores. Other layouts (strided rows,
// swizzled scales, the SwiGLU [gate | up] input) track (row, chunk-in-row).
// Selection and measured variants: docs/kernels.md ("Rowwise stream
// kernels"); bytes moved are those of the plain and gated families.
//
// The numerics are those of the v2 tile kernels (vec_key / block_scale_byte /
// the exact reciprocal / cvt.rn.satfinite), bit-exact to the CPU backend.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_CUDA_ROW_STREAM_CUH
#define FUSION_RT_CUDA_ROW_STREAM_CUH

#include "cuda/launch.cuh"

namespace fusion_rt {
namespace cuda {
namespace stream {

/// Packed max of two pairs of 16-bit |x| patterns. PROPAGATE: unsigned max
/// (a NaN pattern exceeds Inf exceeds every number). IGNORE: the IEEE maxNum
/// of the type (a NaN operand yields the other one).
template <typename T, bool PROPAGATE>
__device__ __forceinline__ uint32_t max16x2(uint32_t a, uint32_t b) {
  if constexpr (PROPAGATE)
    return max_u16x2(a, b);
  else if constexpr (std::is_same<T, BF16T>::value)
    return max_bf16x2(a, b);
  else
    return max_f16x2(a, b);
}

/// The block-amax key (|x| bits of the 16-bit type, NaN patterns kept under
/// PROPAGATE, dropped under IGNORE) of one 8-element vector.
template <typename T, bool PROPAGATE>
__device__ __forceinline__ uint32_t vec_key(const uint4 &w) {
  const uint32_t m = 0x7fff7fffu;
  uint32_t k = max16x2<T, PROPAGATE>(max16x2<T, PROPAGATE>(w.x & m, w.y & m),
                                     max16x2<T, PROPAGATE>(w.z & m, w.w & m));
  uint32_t lo = k & 0xffffu, hi = k >> 16;
  if constexpr (!PROPAGATE) {
    // maxNum of an all-NaN chain is NaN: those elements are ignored (0).
    const uint32_t inf = std::is_same<T, BF16T>::value ? 0x7f80u : 0x7c00u;
    lo = lo > inf ? 0u : lo;
    hi = hi > inf ? 0u : hi;
  }
  return max(lo, hi);
}

/// Max of k over the 4 lanes of a 32-value block (lanes 4b .. 4b + 3): every
/// lane of the block ends with it.
__device__ __forceinline__ uint32_t block_max4(uint32_t k) {
  k = max(k, __shfl_xor_sync(0xffffffffu, k, 1));
  return max(k, __shfl_xor_sync(0xffffffffu, k, 2));
}

/// fp32 bits of a 16-bit |x| pattern (exact; NaN stays NaN, Inf stays Inf).
template <typename T>
__device__ __forceinline__ uint32_t key_f32_bits(uint32_t k) {
  if constexpr (std::is_same<T, BF16T>::value)
    return k << 16;
  else
    return __float_as_uint(__half2float(__ushort_as_half(uint16_t(k))));
}

/// mx_reciprocal (common/scale.h) without branches: 2^(127-b) exactly,
/// b = 254 -> 2^-127 (subnormal), b = 255 -> NaN.
__device__ __forceinline__ float rcp_of(uint32_t b) {
  uint32_t r = (254u - b) << 23;
  r = b == 254u ? 0x00400000u : r;
  r = b == 255u ? 0x7fffffffu : r;
  return __uint_as_float(r);
}

/// Advances (row, chunk-in-row) by one chunk.
__device__ __forceinline__ void next_chunk(uint32_t &row, uint32_t &cc,
                                           uint32_t cpr) {
  if (++cc == cpr) {
    cc = 0;
    ++row;
  }
}

/// 8 codes of 8 fp32 values scaled by r.
template <bool E4M3>
__device__ __forceinline__ uint2 codes8(const float (&v)[8], float r) {
  uint32_t c[4];
#pragma unroll
  for (int j = 0; j < 4; ++j)
    c[j] = E4M3 ? cvt_e4m3x2(v[2 * j] * r, v[2 * j + 1] * r)
                : cvt_e5m2x2(v[2 * j] * r, v[2 * j + 1] * r);
  return make_uint2(c[0] | (c[1] << 16), c[2] | (c[3] << 16));
}

/// Stores the code vector and (lane q == 0 of the block) the scale byte of
/// the lane's 8 values of chunk (row, cc).
__device__ __forceinline__ void put_row(const KParams &p, uint32_t row,
                                        uint32_t cc, int lane, uint2 code,
                                        uint32_t sb) {
  const int64_t col = int64_t(cc) * 256 + lane * 8;
  *reinterpret_cast<uint2 *>(p.rd + int64_t(row) * p.rd_rs + col) = code;
  if ((lane & 3) == 0) {
    const int64_t sc = col >> 5;
    const int64_t off = p.swz ? swizzled_scale_offset(row, sc, p.rsc_pc)
                              : int64_t(row) * p.rsc_rs + sc * p.rsc_cs;
    p.rsc[off] = uint8_t(sb);
  }
}

/// The U raw 16-byte vectors of step s of a plain input (zeros past the
/// end). FLAT: the input rows are contiguous (x_rs == K), so chunk c starts
/// at element c * 256.
template <int U, bool FLAT, bool HINT = false>
__device__ __forceinline__ void load_plain(const KParams &p, uint32_t s,
                                           int lane, uint4 (&w)[U],
                                           uint64_t pol = 0) {
  const uint32_t nch = uint32_t(p.tiles), cpr = uint32_t(p.tiles_x);
  const uint32_t c0 = s * U;
  if constexpr (FLAT) {
    const char *xp = p.x + (int64_t(c0) * 256 + lane * 8) * 2;
#pragma unroll
    for (int u = 0; u < U; ++u)
      w[u] = c0 + u >= nch ? make_uint4(0, 0, 0, 0)
             : HINT        ? ldg_hint16(xp + u * 512, pol)
                           : ldg_stream16(xp + u * 512);
  } else {
    uint32_t row = c0 / cpr, cc = c0 - row * cpr;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (c0 + u < nch)
        w[u] = ldg_stream16(p.x + (int64_t(row) * p.x_rs + int64_t(cc) * 256 +
                                   lane * 8) * 2);
      else
        w[u] = make_uint4(0, 0, 0, 0);
      next_chunk(row, cc, cpr);
    }
  }
}

/// Quantizes step s of a plain input from its raw vectors.
template <typename T, bool E4M3, bool PROPAGATE, int U, bool FLAT, bool HINT>
__device__ __forceinline__ void step_plain(const KParams &p, uint32_t s,
                                           int lane, const uint4 (&w)[U]) {
  static_assert(U % 4 == 0, "U is a multiple of 4");
  const int fmt = E4M3 ? kMXFP8E4M3 : kMXFP8E5M2;
  uint32_t key[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    key[u] = block_max4(vec_key<T, PROPAGATE>(w[u]));
  }
  // Lane q of a block computes the scales of chunks q, q + 4, ..; shuffles
  // hand them to the other three lanes.
  const int q = lane & 3;
  uint32_t sbm[U / 4];
#pragma unroll
  for (int h = 0; h < U / 4; ++h) {
    const uint32_t k = q == 0 ? key[4 * h] : q == 1 ? key[4 * h + 1]
                       : q == 2 ? key[4 * h + 2] : key[4 * h + 3];
    sbm[h] = block_scale_byte(key_f32_bits<T>(k), fmt, p.rounding, PROPAGATE);
  }
  const uint32_t nch = uint32_t(p.tiles), cpr = uint32_t(p.tiles_x);
  const uint32_t c0 = s * U;
  uint32_t row = 0, cc = 0;
  if constexpr (!FLAT) {
    row = c0 / cpr;
    cc = c0 - row * cpr;
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const uint32_t sb =
        __shfl_sync(0xffffffffu, sbm[u / 4], (lane & ~3) | (u % 4)) & 0xffu;
    if (c0 + u < nch) {
      const float r = rcp_of(sb);
      const float v[8] = {T::lo(w[u].x), T::hi(w[u].x), T::lo(w[u].y),
                          T::hi(w[u].y), T::lo(w[u].z), T::hi(w[u].z),
                          T::lo(w[u].w), T::hi(w[u].w)};
      const uint2 code = codes8<E4M3>(v, r);
      if constexpr (FLAT && HINT)
        stg_cs8(p.rd + (int64_t(c0) + u) * 256 + lane * 8, code);
      else if constexpr (FLAT)
        *reinterpret_cast<uint2 *>(p.rd + (int64_t(c0) + u) * 256 + lane * 8) = code;
      else
        put_row(p, row, cc, lane, code, sb);
    }
    if constexpr (!FLAT)
      next_chunk(row, cc, cpr);
  }
  if constexpr (FLAT) {
    // The 8 scale bytes of a chunk are contiguous (compact scales of
    // contiguous rows): lane (block b, q) holds byte b of chunk 4h + q in
    // sbm[h]; two xor shuffles gather bytes 4 (b / 4) .. + 3 in the lanes of
    // b % 4 == 0, which store them as one word (one 32-byte request per 4
    // chunks instead of one request per chunk).
    const int b = lane >> 2;
#pragma unroll
    for (int h = 0; h < U / 4; ++h) {
      uint32_t word = (sbm[h] & 0xffu) << (8 * (b & 3));
      word |= __shfl_xor_sync(0xffffffffu, word, 4);
      word |= __shfl_xor_sync(0xffffffffu, word, 8);
      const uint32_t c = c0 + 4 * h + q;
      if ((b & 3) == 0 && c < nch) {
        uint8_t *sp = p.rsc + int64_t(c) * 8 + (b >> 2) * 4;
        if constexpr (HINT)
          stg_cs4(sp, word);
        else
          *reinterpret_cast<uint32_t *>(sp) = word;
      }
    }
  }
}

/// Plain rowwise stream kernel (see the file comment). p.tiles = chunks,
/// p.tiles_x = chunks per row.
template <typename T, bool E4M3, bool PROPAGATE, int U, bool PF, bool FLAT,
          bool HINT = false>
__global__ void __launch_bounds__(128, U >= 16 ? 3 : 4) row_stream_kernel(const KParams p) {
  const int lane = threadIdx.x & 31;
  const uint64_t pol = HINT ? l2_evict_first() : 0;
  const uint32_t nsteps = (uint32_t(p.tiles) + U - 1) / U;
  const uint32_t stride = (gridDim.x * blockDim.x) >> 5;
  uint32_t s = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  uint4 w[U];
  if constexpr (PF) {
    if (s < nsteps)
      load_plain<U, FLAT, HINT>(p, s, lane, w, pol);
  }
  for (; s < nsteps; s += stride) {
    if constexpr (PF) {
      uint4 nx[U];
      if (s + stride < nsteps)
        load_plain<U, FLAT, HINT>(p, s + stride, lane, nx, pol);
      else
#pragma unroll
        for (int u = 0; u < U; ++u)
          nx[u] = make_uint4(0, 0, 0, 0);
      step_plain<T, E4M3, PROPAGATE, U, FLAT, HINT>(p, s, lane, w);
#pragma unroll
      for (int u = 0; u < U; ++u)
        w[u] = nx[u];
    } else {
      load_plain<U, FLAT, HINT>(p, s, lane, w, pol);
      step_plain<T, E4M3, PROPAGATE, U, FLAT, HINT>(p, s, lane, w);
    }
  }
}

//===--- Gated forward (SwiGLU, clamped SwiGLU) --------------------------===//

/// Position of a gated step: its first chunk c0 and that chunk's (row,
/// chunk-in-row). A warp advances its position by a fixed number of chunks
/// each step (no division in the loop).
struct ChunkPos {
  uint32_t c0, row, cc;
};
__device__ __forceinline__ ChunkPos chunk_pos(uint32_t c0, uint32_t cpr) {
  const uint32_t row = c0 / cpr;
  return {c0, row, c0 - row * cpr};
}
/// `pos` moved by d = d_row * cpr + d_cc chunks (d_cc < cpr).
__device__ __forceinline__ ChunkPos advance(ChunkPos pos, uint32_t d,
                                            uint32_t d_row, uint32_t d_cc,
                                            uint32_t cpr) {
  pos.c0 += d;
  pos.row += d_row;
  pos.cc += d_cc;
  if (pos.cc >= cpr) {
    pos.cc -= cpr;
    ++pos.row;
  }
  return pos;
}

/// Gate and up of 8 columns from one row where they interleave (16-bit
/// elements g0 u0 g1 u1 ..., two 16-byte loads).
__device__ __forceinline__ void load_pairs16(const char *row, uint4 &g,
                                             uint4 &u) {
  const uint4 a = ldg_stream16(row), b = ldg_stream16(row + 16);
  g = make_uint4(__byte_perm(a.x, a.y, 0x5410), __byte_perm(a.z, a.w, 0x5410),
                 __byte_perm(b.x, b.y, 0x5410), __byte_perm(b.z, b.w, 0x5410));
  u = make_uint4(__byte_perm(a.x, a.y, 0x7632), __byte_perm(a.z, a.w, 0x7632),
                 __byte_perm(b.x, b.y, 0x7632), __byte_perm(b.z, b.w, 0x7632));
}

/// The U gate and up vectors of the step at `pos` (zeros past the end and
/// in the lanes past K of a row's last, partial chunk). ILV: gate and up
/// interleaved in one row (p.x; p.up unused).
template <int U, bool ILV>
__device__ __forceinline__ void load_gated(const KParams &p, ChunkPos pos,
                                           int lane, uint4 (&g)[U],
                                           uint4 (&up)[U]) {
  const uint32_t nch = uint32_t(p.tiles), cpr = uint32_t(p.tiles_x);
  uint32_t row = pos.row, cc = pos.cc;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int64_t col = int64_t(cc) * 256 + lane * 8;
    if (pos.c0 + u < nch && col < p.K) {
      if constexpr (ILV) {
        load_pairs16(p.x + (int64_t(row) * p.x_rs + 2 * col) * 2, g[u], up[u]);
      } else {
        g[u] = ldg_stream16(p.x + (int64_t(row) * p.x_rs + col) * 2);
        up[u] = ldg_stream16(p.up + (int64_t(row) * p.up_rs + col) * 2);
      }
    } else {
      g[u] = make_uint4(0, 0, 0, 0);
      up[u] = make_uint4(0, 0, 0, 0);
    }
    next_chunk(row, cc, cpr);
  }
}

/// Rounds 8 activation values to the intermediate type INTER in place and
/// returns their amax key (f32 bits of the largest |v|; NaN patterns kept
/// under PROPAGATE, dropped under IGNORE). 16-bit types: pairs are rounded
/// into one packed word (cvt.rn.{bf16,f16}x2.f32, the same rounding as one
/// element at a time), the key taken on the packed 16-bit patterns
/// (vec_key, as the plain kernels do), the values widened back.
template <bool PROPAGATE, int INTER>
__device__ __forceinline__ uint32_t round_key8(float (&v)[8]) {
  if constexpr (INTER == kInterBF16 || INTER == kInterF16) {
    using IT = typename std::conditional<INTER == kInterBF16, BF16T, F16T>::type;
    uint32_t w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if constexpr (INTER == kInterBF16)
        w[j] = cvt_rn_bf16x2(v[2 * j + 1], v[2 * j]);
      else
        w[j] = cvt_rn_f16x2(v[2 * j + 1], v[2 * j]);
      v[2 * j] = IT::lo(w[j]);
      v[2 * j + 1] = IT::hi(w[j]);
    }
    return key_f32_bits<IT>(vec_key<IT, PROPAGATE>(make_uint4(w[0], w[1], w[2], w[3])));
  } else {
    uint32_t k = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j)
      k = max(k, amax_key(v[j], PROPAGATE));
    return k;
  }
}

/// silu(gate) * up of 8 values, rounded to the intermediate type, and their
/// amax key: the formula of gated_forward(kActSwiGLU) (common/activation.h),
/// (a * (1 / (1 + expf(-a)))) * g. When every gate of the 8 is above -87,
/// 1 + expf(-a) < 2^126 and the reciprocal takes rcp_rn_1_2p126 (the same
/// bits as 1.f / y without the divide's range test and slow-path branch);
/// otherwise (NaN, -Inf, large negative gates) the expression as written.
template <typename T, bool PROPAGATE, int INTER>
__device__ __forceinline__ uint32_t swiglu8(const ActParams &act, const uint4 &gv,
                                            const uint4 &uv, float (&v)[8]) {
  const uint32_t gw[4] = {gv.x, gv.y, gv.z, gv.w};
  const uint32_t uw[4] = {uv.x, uv.y, uv.z, uv.w};
  float a[8], g[8];
  bool in_range = true;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    a[j] = (j & 1) ? T::hi(gw[j / 2]) : T::lo(gw[j / 2]);
    g[j] = (j & 1) ? T::hi(uw[j / 2]) : T::lo(uw[j / 2]);
    in_range = in_range && a[j] > -87.f;
  }
  if (in_range) {
#pragma unroll
    for (int j = 0; j < 8; ++j)
      v[j] = (a[j] * rcp_rn_1_2p126(1.f + expf(-a[j]))) * g[j];
  } else {
#pragma unroll
    for (int j = 0; j < 8; ++j)
      v[j] = gated_forward(kActSwiGLU, a[j], g[j], act);
  }
  return round_key8<PROPAGATE, INTER>(v);
}

/// The 8 gated values of a lane's row segment (rounded to INTER) and their
/// block key: SwiGLU through swiglu8, the clamped SwiGLU (GPT-OSS) through
/// gated_forward (the formulas of common/activation.h either way).
template <typename T, bool PROPAGATE, int INTER, int KIND>
__device__ __forceinline__ uint32_t gated8(const ActParams &act,
                                           const uint4 &gv, const uint4 &uv,
                                           float (&v)[8]) {
  if constexpr (KIND == kActSwiGLU) {
    return swiglu8<T, PROPAGATE, INTER>(act, gv, uv, v);
  } else {
    const uint32_t gw[4] = {gv.x, gv.y, gv.z, gv.w};
    const uint32_t uw[4] = {uv.x, uv.y, uv.z, uv.w};
#pragma unroll
    for (int j = 0; j < 8; ++j)
      v[j] = gated_forward(KIND, (j & 1) ? T::hi(gw[j / 2]) : T::lo(gw[j / 2]),
                           (j & 1) ? T::hi(uw[j / 2]) : T::lo(uw[j / 2]), act);
    return round_key8<PROPAGATE, INTER>(v);
  }
}

/// Quantizes the gated step at `pos`, one chunk at a time (8 values live):
/// each lane of a block computes the block's scale itself. (The U = 4 form,
/// lane q of a block computing the scales of chunks q, q + 4, .., lost its
/// A/B run and is retired: docs/kernels.md.) Lanes past K (a row's last
/// chunk when K % 256 != 0; K % 8 == 0) join the block's shuffles with key
/// 0 and store nothing; a block's scale-storing lane (q == 0) is past K
/// only when the whole block is.
template <typename T, bool E4M3, bool PROPAGATE, int INTER, int KIND, int U>
__device__ __forceinline__ void step_gated(const KParams &p, ChunkPos pos,
                                           int lane, const uint4 (&g)[U],
                                           const uint4 (&up)[U]) {
  static_assert(U == 1 || U == 2, "1 or 2 chunks a step");
  const int fmt = E4M3 ? kMXFP8E4M3 : kMXFP8E5M2;
  const uint32_t nch = uint32_t(p.tiles), cpr = uint32_t(p.tiles_x);
  uint32_t row = pos.row, cc = pos.cc;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    float v[8];
    const bool in = int64_t(cc) * 256 + lane * 8 < p.K;
    const uint32_t k8 = gated8<T, PROPAGATE, INTER, KIND>(p.act(), g[u], up[u], v);
    const uint32_t k = block_max4(in ? k8 : 0u);
    const uint32_t sb = block_scale_byte(k, fmt, p.rounding, PROPAGATE);
    if (pos.c0 + u < nch && in)
      put_row(p, row, cc, lane, codes8<E4M3>(v, rcp_of(sb)), sb);
    next_chunk(row, cc, cpr);
  }
}

template <typename T, bool E4M3, bool PROPAGATE, int INTER, int KIND, bool ILV,
          int U, bool PF>
__device__ __forceinline__ void gated_stream_body(const KParams &p) {
  const int lane = threadIdx.x & 31;
  const uint32_t nsteps = (uint32_t(p.tiles) + U - 1) / U;
  const uint32_t stride = (gridDim.x * blockDim.x) >> 5;
  const uint32_t cpr = uint32_t(p.tiles_x);
  const uint32_t d = stride * U, d_row = d / cpr, d_cc = d - d_row * cpr;
  uint32_t s = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  ChunkPos pos = chunk_pos(s * U, cpr);
  uint4 g[U], up[U];
  if constexpr (PF) {
    if (s < nsteps)
      load_gated<U, ILV>(p, pos, lane, g, up);
  }
  for (; s < nsteps; s += stride) {
    const ChunkPos next = advance(pos, d, d_row, d_cc, cpr);
    if constexpr (PF) {
      uint4 ng[U], nu[U];
      if (s + stride < nsteps) {
        load_gated<U, ILV>(p, next, lane, ng, nu);
      } else {
#pragma unroll
        for (int u = 0; u < U; ++u)
          ng[u] = nu[u] = make_uint4(0, 0, 0, 0);
      }
      step_gated<T, E4M3, PROPAGATE, INTER, KIND, U>(p, pos, lane, g, up);
#pragma unroll
      for (int u = 0; u < U; ++u)
        g[u] = ng[u], up[u] = nu[u];
    } else {
      load_gated<U, ILV>(p, pos, lane, g, up);
      step_gated<T, E4M3, PROPAGATE, INTER, KIND, U>(p, pos, lane, g, up);
    }
    pos = next;
  }
}

/// Gated (SwiGLU, clamped SwiGLU) forward rowwise stream kernel; the
/// intermediate type is dispatched once per launch (uniform branch).
template <typename T, bool E4M3, bool PROPAGATE, int KIND, bool ILV, int U, bool PF>
__global__ void __launch_bounds__(128, 8) swiglu_stream_kernel(const KParams p) {
  if (p.inter == kInterBF16)
    gated_stream_body<T, E4M3, PROPAGATE, kInterBF16, KIND, ILV, U, PF>(p);
  else if (p.inter == kInterF16)
    gated_stream_body<T, E4M3, PROPAGATE, kInterF16, KIND, ILV, U, PF>(p);
  else
    gated_stream_body<T, E4M3, PROPAGATE, kInterF32, KIND, ILV, U, PF>(p);
}

} // namespace stream

/// One instance of the gated stream kernel (its occupancy cached apart).
template <typename T, bool E4M3, bool PROPAGATE, int KIND, bool ILV, int U>
cudaError_t launch_gated_stream(const KParams &p, const mx_plan::Plan &plan,
                                cudaStream_t s) {
  static int per_sm = 0;
  return launch_planned(
      stream::swiglu_stream_kernel<T, E4M3, PROPAGATE, KIND, ILV, U, true>, p,
      plan, per_sm, s);
}

/// Runs the plain (GATED false) or gated (GATED true) stream kernel of
/// `plan` (mx_plan::Family::RowStream / SwigluStream): plain FLAT rows take
/// 4 chunks a step with prefetch and L2 hints ("4ph"), other layouts the
/// general form of 8 chunks a step; the gated kernel 2 chunks a step with
/// prefetch at 8 CTAs an SM ("2p"), or 1 (plan.step) when the chunks are
/// too few to fill the GPU, its activation kind and interleaved layout from
/// the plan. The variants that lost their A/B runs (4p, 8p, 8, 16, 8h;
/// SwiGLU 4p) are retired (docs/kernels.md keeps their numbers).
template <bool GATED, typename T, bool E4M3, bool PROPAGATE>
cudaError_t launch_stream_variant(const KParams &p, const mx_plan::Plan &plan,
                                  cudaStream_t s) {
  static int per_sm[2] = {0, 0};
  if constexpr (GATED) {
    auto with_step = [&](auto kind, auto ilv) {
      constexpr int KD = decltype(kind)::value;
      constexpr bool IL = decltype(ilv)::value;
      return plan.step == 1
                 ? launch_gated_stream<T, E4M3, PROPAGATE, KD, IL, 1>(p, plan, s)
                 : launch_gated_stream<T, E4M3, PROPAGATE, KD, IL, 2>(p, plan, s);
    };
    using Swi = std::integral_constant<int, kActSwiGLU>;
    using Clamped = std::integral_constant<int, kActClampedSwiGLU>;
    using Ilv = std::true_type;
    using Two = std::false_type;
    if (plan.kind == mx_plan::kClampedSwiGLU)
      return plan.ilv ? with_step(Clamped{}, Ilv{}) : with_step(Clamped{}, Two{});
    return plan.ilv ? with_step(Swi{}, Ilv{}) : with_step(Swi{}, Two{});
  } else {
    if (!plan.flat)
      return launch_planned(
          stream::row_stream_kernel<T, E4M3, PROPAGATE, 8, false, false>, p, plan,
          per_sm[0], s);
    return launch_planned(
        stream::row_stream_kernel<T, E4M3, PROPAGATE, 4, true, true, true>, p, plan,
        per_sm[1], s);
  }
}

/// Dispatches the stream kernels on format and NaN policy.
template <bool GATED, typename T>
cudaError_t launch_stream_typed(const KParams &p, const mx_plan::Plan &plan,
                                cudaStream_t s) {
  if (p.format == kMXFP8E4M3)
    return p.propagate ? launch_stream_variant<GATED, T, true, true>(p, plan, s)
                       : launch_stream_variant<GATED, T, true, false>(p, plan, s);
  return p.propagate ? launch_stream_variant<GATED, T, false, true>(p, plan, s)
                     : launch_stream_variant<GATED, T, false, false>(p, plan, s);
}

} // namespace cuda
} // namespace fusion_rt

#endif // FUSION_RT_CUDA_ROW_STREAM_CUH
