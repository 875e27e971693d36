//===- mx_kernel.cuh - the MXFP8 tile engine shared by all kernels -*- CUDA -*-===//
//
// One kernel body, parametrised by a value source (plain input, activation,
// activation backward, gated forward, gated backward), the input element type
// and the direction. Each warp owns a 32-row x (32*VEC)-column tile of the
// value matrix (32 rows = one colwise MX block), grid-strides over tiles and
// needs no shared memory and no barrier:
//
//   lane l holds columns [c0 + l*VEC, c0 + l*VEC + VEC) of every tile row;
//   rowwise : the 32/VEC lanes of one 32-column block reduce the block amax
//             with xor shuffles, then each lane scales and stores its VEC codes;
//   colwise : every lane owns whole 32x1 blocks (its VEC columns x 32 rows),
//             kept in registers, so the column amax needs no communication;
//             same layout stores VEC codes per row, the transposed layout 32
//             contiguous codes (2 x 16 B) per column;
//   dbias   : every lane sums its columns over the tile's rows in row order
//             (the CPU backend's band order), into a [bands, N] workspace.
//
// Loads are 16 bytes per lane (8 bytes for 16-bit inputs of the activation
// sources, whose tile holds fp32 values), coalesced across the warp; a
// misaligned or strided view takes a per-element path through the same code.
//
// Bytes moved (the floor): inputs once, outputs once: M*N*in_bytes*(inputs)
// + codes (M*N per direction) + scales (M*N/32 per direction); the launch is
// a persistent grid of (SMs x resident blocks) blocks of 128 threads.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_CUDA_MX_KERNEL_CUH
#define FUSION_RT_CUDA_MX_KERNEL_CUH

#include "cuda/dispatch.cuh"
#include "cuda/ptx.cuh"

#include "common/activation.h"
#include "common/layout.h"

#include <type_traits>

namespace fusion_rt {
namespace cuda {

/// Everything a launch needs, by value. Sizes and strides in elements.
struct KParams {
  // Inputs: x (gate half for gated kinds), up (gated), grad (backward).
  const char *x, *up, *grad;
  int64_t x_rs, x_cs, up_rs, up_cs, g_rs, g_cs;
  bool vec_all; ///< every view allows the fast tile's vector accesses
  bool vec16;   ///< inputs allow 16-byte loads of 8 x 16-bit elements and the
                ///< outputs 8-byte stores (experimental v2 gated kernel)
  /// ActParams::mask_select, kept in the padding before M and the three
  /// floats below in ActParams' old 12 bytes: with a 16-byte ActParams
  /// member the plain both-directions kernel (mx_both16_cta_kernel, at its
  /// 128-register bound) spills.
  bool act_mask_select;
  /// Gated forward, gate and up interleaved in one row (x column stride 2,
  /// up = x + 1 element, the same row pitch: GPT-OSS's [M, 2K] layout): the
  /// fast tile loads 2 * VEC consecutive elements and splits the pairs. In
  /// the padding before M like the flag above.
  bool ilv;
  int64_t M, K;              ///< input matrix [M, K]; value cols = NV * K
  int32_t kind, inter;
  float act_limit, act_offset, act_alpha;
  int32_t format, rounding;
  bool propagate;
  // Rowwise outputs.
  uint8_t *rd;
  int64_t rd_rs, rd_cs;
  uint8_t *rsc;
  int64_t rsc_rs, rsc_cs, rsc_pc; ///< pc: padded cols of the swizzled buffer
  int64_t row_nb;                 ///< rowwise scale blocks per segment
  // Colwise outputs.
  uint8_t *cd;
  int64_t cd_rs, cd_cs;
  bool col_t;
  uint8_t *csc;
  int64_t csc_rs, csc_cs, csc_pc;
  bool swz;
  // Optional outputs.
  uint32_t *amax_bits;  ///< tensor amax (NaN ignored) as fp32 bits
  float *dbias_ws;      ///< [ceil(M/32), K] partial column sums
  int64_t tiles_x, tiles;

  __host__ __device__ ActParams act() const {
    ActParams a;
    a.limit = act_limit;
    a.offset = act_offset;
    a.alpha = act_alpha;
    a.mask_select = act_mask_select;
    return a;
  }
  void set_act(const ActParams &a) {
    act_limit = a.limit;
    act_offset = a.offset;
    act_alpha = a.alpha;
    act_mask_select = a.mask_select;
  }
};

enum Dir : int { kRow = 1, kCol = 2, kBoth = 3 };

//===--- input element types ------------------------------------------------===//

struct BF16T {
  static constexpr int kBytes = 2;
  __device__ static float at(const char *p) {
    return __uint_as_float(uint32_t(*reinterpret_cast<const uint16_t *>(p)) << 16);
  }
  __device__ static float lo(uint32_t w) { return bf16_lo(w); }
  __device__ static float hi(uint32_t w) { return bf16_hi(w); }
};
struct F16T {
  static constexpr int kBytes = 2;
  __device__ static float at(const char *p) {
    return __half2float(__ushort_as_half(*reinterpret_cast<const uint16_t *>(p)));
  }
  __device__ static float lo(uint32_t w) { return f16_lo(w); }
  __device__ static float hi(uint32_t w) { return f16_hi(w); }
};
struct F32T {
  static constexpr int kBytes = 4;
  __device__ static float at(const char *p) {
    return *reinterpret_cast<const float *>(p);
  }
  __device__ static float lo(uint32_t w) { return reread(__uint_as_float(w)); }
};

/// Fast path: VEC elements at `p` (aligned, in bounds) as fp32.
template <typename T, int VEC>
__device__ __forceinline__ void load_vec(const char *p, float (&v)[VEC]) {
  constexpr int kB = VEC * T::kBytes;
  if constexpr (kB == 16) {
    uint4 w = ldg_stream16(p);
    if constexpr (T::kBytes == 4) {
      v[0] = T::lo(w.x), v[1] = T::lo(w.y), v[2] = T::lo(w.z), v[3] = T::lo(w.w);
    } else {
      v[0] = T::lo(w.x), v[1] = T::hi(w.x), v[2] = T::lo(w.y), v[3] = T::hi(w.y);
      v[4] = T::lo(w.z), v[5] = T::hi(w.z), v[6] = T::lo(w.w), v[7] = T::hi(w.w);
    }
  } else if constexpr (kB == 8) {
    uint2 w = ldg_stream8(p);
    if constexpr (T::kBytes == 4) {
      v[0] = T::lo(w.x), v[1] = T::lo(w.y);
    } else {
      v[0] = T::lo(w.x), v[1] = T::hi(w.x), v[2] = T::lo(w.y), v[3] = T::hi(w.y);
    }
  } else {
    static_assert(kB == 4, "vectors of 4, 8 or 16 bytes");
    uint32_t w = ldg_stream4(p);
    v[0] = T::lo(w), v[1] = T::hi(w);
  }
}

/// Slow path: element (r, col) of a view, 0 outside [0, M) x [0, K).
template <typename T>
__device__ __forceinline__ float load_one(const char *base, int64_t rs, int64_t cs,
                                          int64_t r, int64_t col, int64_t M,
                                          int64_t K) {
  return (r < M && col < K) ? T::at(base + (r * rs + col * cs) * T::kBytes) : 0.f;
}

//===--- value sources --------------------------------------------------------===//
//
// A source has two ways to produce the value matrix:
//   load(p, r, c, Store&)   fast path: VEC input columns of row r with
//                            vector loads (caller checked bounds/alignment);
//   values(p, Store, v)     the NV x VEC values (rounded to the intermediate
//                            type) of a stored row;
//   scalar(p, r, col, v, pre) slow path: the NV values of one input position
//                            (0 outside the matrix) and their unrounded form.
// Plain sources keep raw 16-byte vectors; activation sources keep the
// UNROUNDED fp32 values (the bias gradient sums them) and round on use.

/// Plain quantize: the input itself.
template <typename T> struct SrcPlain {
  static constexpr int VEC = 16 / T::kBytes, NV = 1, G = 4;
  struct Store {
    uint4 w;
  };
  __device__ static void load(const KParams &p, int64_t r, int64_t c, Store &s) {
    s.w = ldg_stream16(p.x + (r * p.x_rs + c) * T::kBytes);
  }
  __device__ static void values(const KParams &, const Store &s,
                                float (&v)[NV][VEC]) {
    if constexpr (T::kBytes == 2) {
      v[0][0] = T::lo(s.w.x), v[0][1] = T::hi(s.w.x);
      v[0][2] = T::lo(s.w.y), v[0][3] = T::hi(s.w.y);
      v[0][4] = T::lo(s.w.z), v[0][5] = T::hi(s.w.z);
      v[0][6] = T::lo(s.w.w), v[0][7] = T::hi(s.w.w);
    } else {
      v[0][0] = T::lo(s.w.x), v[0][1] = T::lo(s.w.y);
      v[0][2] = T::lo(s.w.z), v[0][3] = T::lo(s.w.w);
    }
  }
  __device__ static void scalar(const KParams &p, int64_t r, int64_t col,
                                float (&v)[NV], float (&pre)[NV]) {
    v[0] = pre[0] = load_one<T>(p.x, p.x_rs, p.x_cs, r, col, p.M, p.K);
  }
};

template <int VEC, int NV> struct ComputedStore {
  float f[NV][VEC];
};
template <int VEC, int NV>
__device__ __forceinline__ void computed_values(const KParams &p,
                                                const ComputedStore<VEC, NV> &s,
                                                float (&v)[NV][VEC]) {
#pragma unroll
  for (int k = 0; k < NV; ++k)
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      v[k][j] = round_inter(reread(s.f[k][j]), p.inter);
}

/// Non-gated forward / backward activation. The kind is a run-time value,
/// dispatched once per row segment onto a compile-time copy of the math.
template <typename T, bool BWD> struct SrcAct {
  static constexpr int VEC = 4, NV = 1, G = 4;
  using Store = ComputedStore<VEC, NV>;
  template <int KIND>
  __device__ static void math(const KParams &p, const float (&x)[VEC],
                              const float (&g)[VEC], Store &s) {
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      s.f[0][j] = BWD ? act_backward(KIND, x[j], g[j], p.act())
                      : act_forward(KIND, x[j], p.act());
  }
  __device__ static void load(const KParams &p, int64_t r, int64_t c, Store &s) {
    float x[VEC], g[VEC];
    load_vec<T, VEC>(p.x + (r * p.x_rs + c) * T::kBytes, x);
    if (BWD)
      load_vec<T, VEC>(p.grad + (r * p.g_rs + c) * T::kBytes, g);
    else
#pragma unroll
      for (int j = 0; j < VEC; ++j)
        g[j] = 0.f;
    with_act_kind<false, kActIdentity>(
        p.kind, [&](auto k) { math<decltype(k)::value>(p, x, g, s); });
  }
  __device__ static void values(const KParams &p, const Store &s,
                                float (&v)[NV][VEC]) {
    computed_values(p, s, v);
  }
  __device__ static void scalar(const KParams &p, int64_t r, int64_t col,
                                float (&v)[NV], float (&pre)[NV]) {
    if (r >= p.M || col >= p.K) {
      v[0] = pre[0] = 0.f;
      return;
    }
    const float x = load_one<T>(p.x, p.x_rs, p.x_cs, r, col, p.M, p.K);
    pre[0] = BWD ? act_backward(p.kind, x,
                                load_one<T>(p.grad, p.g_rs, p.g_cs, r, col, p.M, p.K),
                                p.act())
                 : act_forward(p.kind, x, p.act());
    v[0] = round_inter(pre[0], p.inter);
  }
};

/// Gated forward: act(gate) * up, [M, K] values.
template <typename T> struct SrcGatedFwd {
  static constexpr int VEC = 4, NV = 1, G = 4;
  using Store = ComputedStore<VEC, NV>;
  template <int KIND>
  __device__ static void math(const KParams &p, const float (&a)[VEC],
                              const float (&b)[VEC], Store &s) {
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      s.f[0][j] = gated_forward(KIND, a[j], b[j], p.act());
  }
  __device__ static void load(const KParams &p, int64_t r, int64_t c, Store &s) {
    float a[VEC], b[VEC];
    if (p.ilv) {
      // Columns 2c .. 2c + 2 VEC of the one row: gate, up, gate, up, ...
      float e[2][VEC];
      const char *row = p.x + (r * p.x_rs + 2 * c) * T::kBytes;
      load_vec<T, VEC>(row, e[0]);
      load_vec<T, VEC>(row + VEC * T::kBytes, e[1]);
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        a[j] = e[(2 * j) / VEC][(2 * j) % VEC];
        b[j] = e[(2 * j + 1) / VEC][(2 * j + 1) % VEC];
      }
    } else {
      load_vec<T, VEC>(p.x + (r * p.x_rs + c) * T::kBytes, a);
      load_vec<T, VEC>(p.up + (r * p.up_rs + c) * T::kBytes, b);
    }
    with_act_kind<true, kActClampedSwiGLU>(
        p.kind, [&](auto k) { math<decltype(k)::value>(p, a, b, s); });
  }
  __device__ static void values(const KParams &p, const Store &s,
                                float (&v)[NV][VEC]) {
    computed_values(p, s, v);
  }
  __device__ static void scalar(const KParams &p, int64_t r, int64_t col,
                                float (&v)[NV], float (&pre)[NV]) {
    if (r >= p.M || col >= p.K) {
      v[0] = pre[0] = 0.f;
      return;
    }
    pre[0] = gated_forward(p.kind, load_one<T>(p.x, p.x_rs, p.x_cs, r, col, p.M, p.K),
                           load_one<T>(p.up, p.up_rs, p.up_cs, r, col, p.M, p.K),
                           p.act());
    v[0] = round_inter(pre[0], p.inter);
  }
};

/// Gated backward: [dact | dgate], [M, 2K] values from gate, up and grad.
template <typename T> struct SrcGatedBwd {
  static constexpr int VEC = 2, NV = 2, G = 2;
  using Store = ComputedStore<VEC, NV>;
  template <int KIND>
  __device__ static void math(const KParams &p, const float (&a)[VEC],
                              const float (&b)[VEC], const float (&g)[VEC],
                              Store &s) {
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      gated_backward(KIND, a[j], b[j], g[j], p.act(), s.f[0][j], s.f[1][j]);
  }
  __device__ static void load(const KParams &p, int64_t r, int64_t c, Store &s) {
    float a[VEC], b[VEC], g[VEC];
    load_vec<T, VEC>(p.x + (r * p.x_rs + c) * T::kBytes, a);
    load_vec<T, VEC>(p.up + (r * p.up_rs + c) * T::kBytes, b);
    load_vec<T, VEC>(p.grad + (r * p.g_rs + c) * T::kBytes, g);
    with_act_kind<true, kActClampedSwiGLU>(
        p.kind, [&](auto k) { math<decltype(k)::value>(p, a, b, g, s); });
  }
  __device__ static void values(const KParams &p, const Store &s,
                                float (&v)[NV][VEC]) {
    computed_values(p, s, v);
  }
  __device__ static void scalar(const KParams &p, int64_t r, int64_t col,
                                float (&v)[NV], float (&pre)[NV]) {
    if (r >= p.M || col >= p.K) {
      v[0] = v[1] = pre[0] = pre[1] = 0.f;
      return;
    }
    gated_backward(p.kind, load_one<T>(p.x, p.x_rs, p.x_cs, r, col, p.M, p.K),
                   load_one<T>(p.up, p.up_rs, p.up_cs, r, col, p.M, p.K),
                   load_one<T>(p.grad, p.g_rs, p.g_cs, r, col, p.M, p.K), p.act(),
                   pre[0], pre[1]);
    v[0] = round_inter(pre[0], p.inter);
    v[1] = round_inter(pre[1], p.inter);
  }
};

template <typename S> struct IsPlain : std::false_type {};
template <typename T> struct IsPlain<SrcPlain<T>> : std::true_type {};

//===--- block helpers ----------------------------------------------------------===//

/// |x| bits for the amax reduction: NaN patterns are dropped (0) under the
/// IGNORE policy and kept (they exceed every number) under PROPAGATE.
__device__ __forceinline__ uint32_t amax_key(float x, bool propagate) {
  uint32_t a = __float_as_uint(x) & 0x7fffffffu;
  return (!propagate && a > 0x7f800000u) ? 0u : a;
}

/// Two fp32 -> two codes of the run-time MX format.
__device__ __forceinline__ uint32_t cvt_pair(bool e4m3, float lo, float hi) {
  return e4m3 ? cvt_e4m3x2(lo, hi) : cvt_e5m2x2(lo, hi);
}

/// Max of `v` over the lanes l ^ o for o = FIRST, 2 FIRST, .. < LIMIT.
template <int FIRST, int LIMIT>
__device__ __forceinline__ uint32_t xor_max(uint32_t v) {
#pragma unroll
  for (int o = FIRST; o < LIMIT; o <<= 1)
    v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ void put_row_scale(const KParams &p, int64_t r,
                                              int64_t c, uint8_t b) {
  if (p.swz)
    p.rsc[swizzled_scale_offset(r, c, p.rsc_pc)] = b;
  else
    p.rsc[r * p.rsc_rs + c * p.rsc_cs] = b;
}
/// Colwise scale of value column n, row block `band`.
__device__ __forceinline__ void put_col_scale(const KParams &p, int64_t n,
                                              int64_t band, uint8_t b) {
  if (p.swz)
    p.csc[swizzled_scale_offset(n, band, p.csc_pc)] = b;
  else if (p.col_t)
    p.csc[n * p.csc_rs + band * p.csc_cs] = b;
  else
    p.csc[band * p.csc_rs + n * p.csc_cs] = b;
}
__device__ __forceinline__ void put_col_code(const KParams &p, int64_t r,
                                             int64_t n, uint8_t code) {
  if (p.col_t)
    p.cd[n * p.cd_rs + r * p.cd_cs] = code;
  else
    p.cd[r * p.cd_rs + n * p.cd_cs] = code;
}

/// The MX scale byte of a rowwise block from a lane's VEC values v(j) (the
/// block's LPB lanes joined by shuffles).
template <int LPB, int VEC, typename V>
__device__ __forceinline__ uint8_t row_block_scale(const KParams &p, V v) {
  uint32_t am = 0;
#pragma unroll
  for (int j = 0; j < VEC; ++j)
    am = max(am, amax_key(v(j), p.propagate));
  am = xor_max<1, LPB>(am);
  return block_scale_byte(am, p.format, p.rounding, p.propagate);
}

//===--- fast tile ----------------------------------------------------------------===//
//
// A warp is G row groups of LG = 32/G lanes. Lane l holds columns
// c + (l % LG) * VEC .. + VEC of rows rb = r0 + (l / LG) * RPL .. + RPL
// (RPL = 32/G) of a 32-row tile: the G groups hold the G parts of every
// 32x1 colwise block (xor shuffles by LG, 2 LG, .. join their amax), and the
// 32/VEC lanes of a 32-column rowwise block sit in one group (xor shuffles
// below LG join theirs). The fast tile is taken when the whole warp tile is
// in bounds and every view allows vector accesses: no checks inside.

template <typename Src, int DIR>
__device__ __forceinline__ void tile_fast(const KParams &p, int64_t band,
                                          int64_t rb, int64_t c, int group,
                                          int lane, uint32_t &tensor_amax) {
  constexpr int VEC = Src::VEC, NV = Src::NV, G = Src::G;
  constexpr int LG = 32 / G, RPL = 32 / G, LPB = 32 / VEC;
  constexpr bool kDoRow = (DIR & kRow) != 0, kDoCol = (DIR & kCol) != 0;
  constexpr int W = (VEC + 3) / 4; // code words per row segment
  const bool e4m3 = p.format == kMXFP8E4M3;
  typename Src::Store st[RPL];
#pragma unroll
  for (int i = 0; i < RPL; ++i)
    Src::load(p, rb + i, c, st[i]);

  if (p.amax_bits) {
#pragma unroll
    for (int i = 0; i < RPL; ++i) {
      float v[NV][VEC];
      Src::values(p, st[i], v);
#pragma unroll
      for (int k = 0; k < NV; ++k)
#pragma unroll
        for (int j = 0; j < VEC; ++j)
          tensor_amax = max(tensor_amax, amax_key(v[k][j], false));
    }
  }

  if constexpr (kDoCol) {
    uint32_t cam[NV][VEC];
#pragma unroll
    for (int k = 0; k < NV; ++k)
#pragma unroll
      for (int j = 0; j < VEC; ++j)
        cam[k][j] = 0;
#pragma unroll
    for (int i = 0; i < RPL; ++i) {
      float v[NV][VEC];
      Src::values(p, st[i], v);
#pragma unroll
      for (int k = 0; k < NV; ++k)
#pragma unroll
        for (int j = 0; j < VEC; ++j)
          cam[k][j] = max(cam[k][j], amax_key(v[k][j], p.propagate));
    }
    float crcp[NV][VEC];
#pragma unroll
    for (int k = 0; k < NV; ++k)
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const uint32_t am = xor_max<LG, 32>(cam[k][j]);
        const uint8_t sb = block_scale_byte(am, p.format, p.rounding, p.propagate);
        crcp[k][j] = mx_reciprocal(sb);
        if (group == 0)
          put_col_scale(p, k * p.K + c + j, band, sb);
      }
    if (!p.col_t) {
#pragma unroll
      for (int i = 0; i < RPL; ++i) {
        float v[NV][VEC];
        Src::values(p, st[i], v);
#pragma unroll
        for (int k = 0; k < NV; ++k) {
          uint32_t w[W] = {};
#pragma unroll
          for (int j = 0; j < VEC; j += 2)
            w[j / 4] |= cvt_pair(e4m3, v[k][j] * crcp[k][j],
                                 v[k][j + 1] * crcp[k][j + 1])
                        << (16 * ((j / 2) & 1));
          uint8_t *q = p.cd + (rb + i) * p.cd_rs + k * p.K + c;
          if constexpr (VEC == 8)
            *reinterpret_cast<uint2 *>(q) = make_uint2(w[0], w[1]);
          else if constexpr (VEC == 4)
            *reinterpret_cast<uint32_t *>(q) = w[0];
          else
            *reinterpret_cast<uint16_t *>(q) = uint16_t(w[0]);
        }
      }
    } else {
      // Transposed: column n is 32 contiguous codes of output row n; this
      // lane writes its RPL of them with one store.
#pragma unroll
      for (int k = 0; k < NV; ++k)
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
          uint32_t w[RPL / 4] = {};
#pragma unroll
          for (int i = 0; i < RPL; i += 2) {
            float va[NV][VEC], vb[NV][VEC];
            Src::values(p, st[i], va);
            Src::values(p, st[i + 1], vb);
            w[i / 4] |= cvt_pair(e4m3, va[k][j] * crcp[k][j], vb[k][j] * crcp[k][j])
                        << (16 * ((i / 2) & 1));
          }
          uint8_t *q = p.cd + (k * p.K + c + j) * p.cd_rs + rb;
          if constexpr (RPL == 16)
            *reinterpret_cast<uint4 *>(q) = make_uint4(w[0], w[1], w[2], w[3]);
          else
            *reinterpret_cast<uint2 *>(q) = make_uint2(w[0], w[1]);
        }
    }
  }

  if constexpr (kDoRow) {
#pragma unroll
    for (int i = 0; i < RPL; ++i) {
      float v[NV][VEC];
      Src::values(p, st[i], v);
#pragma unroll
      for (int k = 0; k < NV; ++k) {
        const uint8_t sb =
            row_block_scale<LPB, VEC>(p, [&](int j) { return v[k][j]; });
        const float rcp = mx_reciprocal(sb);
        uint32_t w[W] = {};
#pragma unroll
        for (int j = 0; j < VEC; j += 2)
          w[j / 4] |= cvt_pair(e4m3, v[k][j] * rcp, v[k][j + 1] * rcp)
                      << (16 * ((j / 2) & 1));
        if ((lane % LPB) == 0)
          put_row_scale(p, rb + i, k * p.row_nb + c / 32, sb);
        uint8_t *q = p.rd + (rb + i) * p.rd_rs + k * p.K + c;
        if constexpr (VEC == 8)
          *reinterpret_cast<uint2 *>(q) = make_uint2(w[0], w[1]);
        else if constexpr (VEC == 4)
          *reinterpret_cast<uint32_t *>(q) = w[0];
        else
          *reinterpret_cast<uint16_t *>(q) = uint16_t(w[0]);
      }
    }
  }

  if constexpr (!IsPlain<Src>::value && NV == 1) {
    if (p.dbias_ws) {
      // Column sums in row order from +0 (the CPU backend's band order):
      // group 0 sums its rows, each next group continues from that sum.
      float acc[VEC];
#pragma unroll
      for (int j = 0; j < VEC; ++j)
        acc[j] = 0.f;
#pragma unroll
      for (int gi = 0; gi < G; ++gi) {
        if (group == gi)
#pragma unroll
          for (int i = 0; i < RPL; ++i)
#pragma unroll
            for (int j = 0; j < VEC; ++j)
              acc[j] += st[i].f[0][j];
        if (gi + 1 < G)
#pragma unroll
          for (int j = 0; j < VEC; ++j) {
            const float from = __shfl_up_sync(0xffffffffu, acc[j], LG);
            if (group == gi + 1)
              acc[j] = from;
          }
      }
      if (group == G - 1)
#pragma unroll
        for (int j = 0; j < VEC; ++j)
          p.dbias_ws[band * p.K + c + j] = acc[j];
    }
  }
}

//===--- slow tile ----------------------------------------------------------------===//
//
// Same lane layout and the same numerics, for tiles at the matrix edge or
// views without vector alignment: nothing is kept in registers; every pass
// recomputes its values from memory (the L1/L2 serve the re-reads), masked
// elements are 0, stores are single bytes.

/// The grid loop of the v2 tile kernels: persistent warps over warp tiles of
/// 32 rows x 64 columns (4 row groups of 8 lanes, 8 rows x 8 columns a lane,
/// the engine's layout). fast(band, rb, c, group, lane) when the warp's
/// whole tile is in bounds and `vec` allows 16-byte loads, else slow(..).
/// ROWS_MASKED: the fast tile masks rows past M itself (rowwise kernels:
/// a band of fewer than 32 rows, a decode-sized input, is fast too).
template <bool ROWS_MASKED = false, typename Fast, typename Slow>
__device__ __forceinline__ void v2_tiles(const KParams &p, bool vec, Fast fast,
                                         Slow slow) {
  constexpr int VEC = 8, LG = 8, RPL = 8;
  const int lane = threadIdx.x & 31;
  const int group = lane / LG;
  const int64_t warp0 = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int64_t nwarps = (int64_t(gridDim.x) * blockDim.x) >> 5;
  for (int64_t t = warp0; t < p.tiles; t += nwarps) {
    const int64_t band = t / p.tiles_x;
    const int64_t rb = band * 32 + group * RPL;
    const int64_t c = (t - band * p.tiles_x) * (LG * VEC) + (lane % LG) * VEC;
    const bool lane_fast =
        vec && (ROWS_MASKED || band * 32 + 32 <= p.M) && c + VEC <= p.K;
    if (__all_sync(0xffffffffu, lane_fast))
      fast(band, rb, c, group, lane);
    else
      slow(band, rb, c, group, lane);
  }
}

template <typename Src, int DIR>
__device__ __forceinline__ void tile_slow(const KParams &p, int64_t band,
                                       int64_t rb, int64_t c, int group,
                                       int lane, uint32_t &tensor_amax) {
  constexpr int VEC = Src::VEC, NV = Src::NV, G = Src::G;
  constexpr int LG = 32 / G, RPL = 32 / G, LPB = 32 / VEC;
  constexpr bool kDoRow = (DIR & kRow) != 0, kDoCol = (DIR & kCol) != 0;
  const bool e4m3 = p.format == kMXFP8E4M3;

  if constexpr (kDoCol) {
#pragma unroll 1
    for (int j = 0; j < VEC; ++j) {
      const int64_t col = c + j;
      uint32_t cam[NV] = {};
#pragma unroll 1
      for (int i = 0; i < RPL; ++i) {
        float v[NV], pre[NV];
        Src::scalar(p, rb + i, col, v, pre);
#pragma unroll
        for (int k = 0; k < NV; ++k) {
          cam[k] = max(cam[k], amax_key(v[k], p.propagate));
          if (p.amax_bits)
            tensor_amax = max(tensor_amax, amax_key(v[k], false));
        }
      }
#pragma unroll
      for (int k = 0; k < NV; ++k) {
        const uint32_t am = xor_max<LG, 32>(cam[k]);
        const uint8_t sb = block_scale_byte(am, p.format, p.rounding, p.propagate);
        const float rcp = mx_reciprocal(sb);
        if (group == 0 && col < p.K)
          put_col_scale(p, k * p.K + col, band, sb);
        if (col < p.K) {
#pragma unroll 1
          for (int i = 0; i < RPL && rb + i < p.M; ++i) {
            float v[NV], pre[NV];
            Src::scalar(p, rb + i, col, v, pre);
            put_col_code(p, rb + i, k * p.K + col,
                         uint8_t(cvt_pair(e4m3, v[k] * rcp, 0.f)));
          }
        }
      }
    }
  } else if (p.amax_bits) {
#pragma unroll 1
    for (int i = 0; i < RPL; ++i)
#pragma unroll 1
      for (int j = 0; j < VEC; ++j) {
        float v[NV], pre[NV];
        Src::scalar(p, rb + i, c + j, v, pre);
#pragma unroll
        for (int k = 0; k < NV; ++k)
          tensor_amax = max(tensor_amax, amax_key(v[k], false));
      }
  }

  if constexpr (DIR == kRow) {
    // Rowwise only: a row's VEC values are read once, all loads issued
    // together (the edge tiles of decode-sized inputs, M < 32, are all slow
    // tiles: one round of load latency a row instead of two per value).
    // Rows outside the matrix read nothing (scalar() gives 0) but join the
    // shuffles. (Both directions keep the sequential form below: the
    // both-directions CTA kernel is at its register bound.)
#pragma unroll 1
    for (int i = 0; i < RPL; ++i) {
      const int64_t r = rb + i;
      float v[VEC][NV];
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        float pre[NV];
        Src::scalar(p, r, c + j, v[j], pre);
      }
#pragma unroll
      for (int k = 0; k < NV; ++k) {
        const uint8_t sb =
            row_block_scale<LPB, VEC>(p, [&](int j) { return v[j][k]; });
        const float rcp = mx_reciprocal(sb);
        if (r < p.M && c < p.K) {
          if ((lane % LPB) == 0)
            put_row_scale(p, r, k * p.row_nb + c / 32, sb);
#pragma unroll
          for (int j = 0; j < VEC; ++j)
            if (c + j < p.K)
              p.rd[r * p.rd_rs + (k * p.K + c + j) * p.rd_cs] =
                  uint8_t(cvt_pair(e4m3, v[j][k] * rcp, 0.f));
        }
      }
    }
  } else if constexpr (kDoRow) {
#pragma unroll 1
    for (int i = 0; i < RPL; ++i) {
      const int64_t r = rb + i;
#pragma unroll
      for (int k = 0; k < NV; ++k) {
        uint32_t am = 0;
#pragma unroll 1
        for (int j = 0; j < VEC; ++j) {
          float v[NV], pre[NV];
          Src::scalar(p, r, c + j, v, pre);
          am = max(am, amax_key(v[k], p.propagate));
        }
        am = xor_max<1, LPB>(am);
        const uint8_t sb = block_scale_byte(am, p.format, p.rounding, p.propagate);
        const float rcp = mx_reciprocal(sb);
        if (r < p.M && c < p.K) {
          if ((lane % LPB) == 0)
            put_row_scale(p, r, k * p.row_nb + c / 32, sb);
#pragma unroll 1
          for (int j = 0; j < VEC && c + j < p.K; ++j) {
            float v[NV], pre[NV];
            Src::scalar(p, r, c + j, v, pre);
            p.rd[r * p.rd_rs + (k * p.K + c + j) * p.rd_cs] =
                uint8_t(cvt_pair(e4m3, v[k] * rcp, 0.f));
          }
        }
      }
    }
  }

  if constexpr (!IsPlain<Src>::value && NV == 1) {
    if (p.dbias_ws) {
#pragma unroll 1
      for (int j = 0; j < VEC; ++j) {
        float acc = 0.f;
#pragma unroll 1
        for (int gi = 0; gi < G; ++gi) {
          if (group == gi)
#pragma unroll 1
            for (int i = 0; i < RPL; ++i) {
              float v[NV], pre[NV];
              Src::scalar(p, rb + i, c + j, v, pre);
              acc += pre[0];
            }
          if (gi + 1 < G) {
            const float from = __shfl_up_sync(0xffffffffu, acc, LG);
            if (group == gi + 1)
              acc = from;
          }
        }
        if (group == G - 1 && c + j < p.K)
          p.dbias_ws[band * p.K + c + j] = acc;
      }
    }
  }
}

//===--- the kernel -------------------------------------------------------------===//

template <typename Src, int DIR>
__global__ void __launch_bounds__(128, 4)
    mx_quantize_kernel(const KParams p) {
  constexpr int VEC = Src::VEC, G = Src::G, LG = 32 / G, RPL = 32 / G;
  const int lane = threadIdx.x & 31;
  const int group = lane / LG;
  const int64_t warp0 = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int64_t nwarps = (int64_t(gridDim.x) * blockDim.x) >> 5;
  uint32_t tensor_amax = 0;

  for (int64_t t = warp0; t < p.tiles; t += nwarps) {
    const int64_t band = t / p.tiles_x;
    const int64_t rb = band * 32 + group * RPL; // first row of this lane
    const int64_t c = (t - band * p.tiles_x) * (LG * VEC) + (lane % LG) * VEC;
    // p.vec_all: every view allows vector accesses (checked on the host).
    const bool lane_fast = p.vec_all && band * 32 + 32 <= p.M && c + VEC <= p.K;
    if (__all_sync(0xffffffffu, lane_fast))
      tile_fast<Src, DIR>(p, band, rb, c, group, lane, tensor_amax);
    else
      tile_slow<Src, DIR>(p, band, rb, c, group, lane, tensor_amax);
  }

  if (p.amax_bits) {
    tensor_amax = xor_max<1, 32>(tensor_amax);
    if (lane == 0 && tensor_amax != 0)
      atomicMax(p.amax_bits, tensor_amax);
  }
}

} // namespace cuda
} // namespace fusion_rt

#endif // FUSION_RT_CUDA_MX_KERNEL_CUH
