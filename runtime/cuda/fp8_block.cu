//===- fp8_block.cu - FP8 block scaling 1x128: the stream kernels ----------===//
//
// Rowwise FP8 with one f32 decode scale per 1x128 group of a row (the
// DeepSeek-V3 / vLLM per-token-group recipe, docs/numerics.md §4b) from a
// 16-bit input, plain or SwiGLU forward (vLLM's silu_and_mul + group
// quantization) -- the requests FP8 serving runs most. Every other FP8 block
// request (f32 input, other widths, other activations, backward, strided
// inputs) runs formats.cu's general kernels; both give the same bytes.
//
// Layout of the work: the 128-value group stream of group_stream.cuh (16
// lanes a group, 8 values a lane, each warp loading its next step before
// it codes the current one); the 16 lanes of a group join their amax with
// four xor shuffles.
//
// Numerics (bit-exact with the CPU backend, common/quantize_block.h):
//   amax   |x| of the 16-bit patterns (SwiGLU: of the values rounded to the
//          intermediate type), NaN kept under PROPAGATE, dropped under IGNORE
//          (row_stream.cuh vec_key);
//   scale  fp8_block_scales_of, the CPU's function;
//   codes  cvt.rn.satfinite(x / s), the quotient correctly rounded from
//          r = RN(1/s) and one correction per element (common/quotient.h);
//          scales outside [2^-80, 2^100] (subnormal, Inf, NaN) take the IEEE
//          division itself. The MULTIPLY recipe (TE's Float8BlockScaling,
//          torchao's blockwise training): cvt.rn.satfinite(x * enc), s =
//          1 / enc written.
//
//===----------------------------------------------------------------------===//
#include "common/fp8_plan.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_status.h"
#include "cuda/dispatch.cuh"
#include "cuda/group_stream.cuh"
#include "cuda/launch.cuh"
#include "cuda/row_stream.cuh"

#include "common/quantize_block.h"
#include "common/quotient.h"
#include "src/backend.h"

#include <type_traits>

namespace fusion_rt {
namespace cuda {
namespace {

using gstream::GPos;

/// What the stream kernels read, by value. Strides in elements.
struct BParams {
  const char *x, *up; ///< 16-bit inputs (up: SwiGLU only)
  int64_t x_rs, up_rs;
  uint8_t *rd;
  int64_t rd_rs;
  float *sc;
  int64_t sc_rs, sc_cs;
  gstream::Geometry geo; ///< the 1x128 groups (group_stream.cuh)
  fusion_rt_quant_scheme s;
  int32_t inter;
  ActParams act;
  // FP8 per tensor (the same stream over 128-value groups): the tensor amax
  // word (NaN-ignoring max of f32 bits; read for current scaling, written by
  // the amax pass, or by the cast itself under delayed scaling), the
  // delayed scale, the scale_inv output.
  uint32_t *amax;
  const float *scale_in;
  float *scale_inv;
  int32_t mode; ///< kCodes (FP8 block), kTensorAmax, kTensorCast
};

/// What a stream kernel does with each group: FP8 block codes and scales;
/// the tensor amax of the values (first pass of current scaling); FP8
/// per-tensor codes x * scale (with the amax under delayed scaling when
/// asked).
enum StreamMode : int32_t { kCodes = 0, kTensorAmax = 1, kTensorCast = 2 };
static_assert(int(kCodes) == int(fp8_plan::kPassCodes) &&
                  int(kTensorAmax) == int(fp8_plan::kPassAmax) &&
                  int(kTensorCast) == int(fp8_plan::kPassCast),
              "the kernel report names the passes (common/fp8_plan.h)");

/// Max of k over the 16 lanes of a group.
__device__ __forceinline__ uint32_t group_max16(uint32_t k) {
#pragma unroll
  for (int o = 1; o < 16; o <<= 1)
    k = max(k, __shfl_xor_sync(0xffffffffu, k, o));
  return k;
}

/// The 8 codes of v under decode scale s: cvt(x / s), the quotient
/// correctly rounded from r = RN(1 / s), or the division itself where r = 0
/// (s outside quotient_by_reciprocal_ok, NaN included).
template <bool E4M3>
__device__ __forceinline__ uint2 quotient_codes8(const float (&v)[8], float s,
                                                 float r) {
  float q[8];
  if (r != 0.f) {
#pragma unroll
    for (int j = 0; j < 8; ++j)
      q[j] = quotient_by_reciprocal(v[j], s, r);
  } else {
#pragma unroll
    for (int j = 0; j < 8; ++j)
      q[j] = __fdiv_rn(v[j], s);
  }
  uint32_t c[4];
#pragma unroll
  for (int j = 0; j < 4; ++j)
    c[j] = E4M3 ? cvt_e4m3x2(q[2 * j], q[2 * j + 1])
                : cvt_e5m2x2(q[2 * j], q[2 * j + 1]);
  return make_uint2(c[0] | (c[1] << 16), c[2] | (c[3] << 16));
}

/// r of quotient_codes8 for the decode scale s.
__device__ __forceinline__ float quotient_rcp(float s) {
  return quotient_by_reciprocal_ok(s) ? __frcp_rn(s) : 0.f; // NaN: 0
}

/// The 8 codes of v under decode scale s.
template <bool E4M3>
__device__ __forceinline__ uint2 codes8(const float (&v)[8], float s) {
  return quotient_codes8<E4M3>(v, s, quotient_rcp(s));
}

/// fp8_block_scales_of (common/quantize_block.h) with the default recipe's
/// amax / max taken by the Markstein correction from r = RN(1 / max): it
/// equals RN(a / max) for every a >= 2^-112 (checked over every f32 for
/// 448 and 57344; below, the quotient is subnormal and the correction may
/// miss), so the division (FCHK, MUFU and a slow-path call on every lane)
/// runs only below that bound, for NaN and for Inf.
template <bool E4M3>
__device__ __forceinline__ Fp8BlockScales block_scales(const fusion_rt_quant_scheme &s,
                                                       float amax, bool nan) {
  if (s.nvfp4_recipe == FUSION_RT_NVFP4_RECIPE_MULTIPLY ||
      s.nvfp4_recipe == FUSION_RT_NVFP4_RECIPE_MULTIPLIER)
    return fp8_block_scales_of(s, amax, nan);
  constexpr float kMax = E4M3 ? 448.0f : 57344.0f;
  constexpr float kRcp = 1.0f / kMax; // RN(1 / kMax)
  float a = fp8_block_amax(s, amax, nan);
  a = a < s.amax_epsilon ? s.amax_epsilon : a;
  const float q = a >= 0x1p-112f && a <= 0x1.fffffep127f
                      ? quotient_by_reciprocal(a, kMax, kRcp)
                      : x86_div(a, kMax);
  return {s.force_pow2_scale != 0 ? pow2_roundup(q) : q, 0.f};
}

/// The scales of the 2U groups of a step, computed once each: lane l < U of
/// a lane half takes the half's group u = l (its key is the half's key[l]),
/// and U shuffles of each value hand group u's scales to all its lanes. A
/// warp thus runs the scale arithmetic (the division or its correction,
/// the reciprocal, the recipe's branches) once a step instead of once a
/// group. `own` is this lane's own result (the scale it stores, lane l of
/// group u = l).
struct GScale {
  float dec; ///< the decode scale written
  float r;   ///< RN(1 / dec) where the corrected quotient applies, else 0
  float enc; ///< MULTIPLY recipes: the encode scale (codes x * enc), else 0
};

template <bool E4M3, int U>
__device__ __forceinline__ void group_scales(const fusion_rt_quant_scheme &sch,
                                             int l, const uint32_t (&key)[U],
                                             GScale (&gs)[U], GScale &own) {
  uint32_t k = key[0];
#pragma unroll
  for (int u = 1; u < U; ++u)
    k = l == u ? key[u] : k;
  const bool nan = k > 0x7f800000u;
  const Fp8BlockScales s = block_scales<E4M3>(sch, nan ? 0.f : __uint_as_float(k), nan);
  own.dec = s.dec;
  own.enc = s.enc;
  own.r = quotient_rcp(s.dec);
  const bool multiply = sch.nvfp4_recipe == FUSION_RT_NVFP4_RECIPE_MULTIPLY ||
                        sch.nvfp4_recipe == FUSION_RT_NVFP4_RECIPE_MULTIPLIER;
  const int half = threadIdx.x & 16;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    gs[u].dec = __shfl_sync(0xffffffffu, own.dec, half | u);
    gs[u].r = __shfl_sync(0xffffffffu, own.r, half | u);
    gs[u].enc = multiply ? __shfl_sync(0xffffffffu, own.enc, half | u) : 0.f;
  }
}

/// The 8 codes of v in a group of scales g: x * enc (MULTIPLY recipes),
/// else x / dec (quotient_codes8).
template <bool E4M3>
__device__ __forceinline__ uint2 block_codes8(const float (&v)[8], const GScale &g) {
  return g.enc != 0.f ? stream::codes8<E4M3>(v, g.enc)
                      : quotient_codes8<E4M3>(v, g.dec, g.r);
}

/// Codes and scales of one step: the lane's 8 values v[u] of its half's
/// groups pos, pos + 2, .. with their group amax keys (f32 bits of |x|,
/// NaN patterns above Inf) key[u]. FP8 per tensor (MODE != kCodes): the
/// tensor amax of the keys (NaN-free there, an Inf included) and, for a
/// cast, the codes x * tensor_scale; groups past the end hold zeros.
template <bool E4M3, int U, int MODE>
__device__ __forceinline__ void
emit_step(const BParams &p, GPos pos, int l, const float (&v)[U][8],
          const uint32_t (&key)[U], float tensor_scale, uint32_t &tmax) {
  if constexpr (MODE != kCodes) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      tmax = max(tmax, key[u]);
      if (MODE == kTensorCast && pos.g < p.geo.groups)
        *reinterpret_cast<uint2 *>(p.rd + int64_t(pos.row) * p.rd_rs +
                                   int64_t(pos.gc) * 128 + l * 8) =
            stream::codes8<E4M3>(v[u], tensor_scale);
      pos = gstream::next2(p.geo, pos);
    }
  } else {
    GScale gs[U], own;
    group_scales<E4M3, U>(p.s, l, key, gs, own);
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const uint2 code = block_codes8<E4M3>(v[u], gs[u]);
    if (pos.g < p.geo.groups) {
      const int64_t col = int64_t(pos.gc) * 128 + l * 8;
      *reinterpret_cast<uint2 *>(p.rd + int64_t(pos.row) * p.rd_rs + col) = code;
      if (l == u)
        p.sc[int64_t(pos.row) * p.sc_rs + int64_t(pos.gc) * p.sc_cs] = own.dec;
    }
    pos = gstream::next2(p.geo, pos);
  }
  }
}

/// Codes one step of the plain quantizer from its raw vectors.
template <typename T, bool E4M3, bool PROPAGATE, int U, int MODE>
__device__ __forceinline__ void step_plain(const BParams &p, GPos pos, int l,
                                           const uint4 (&w)[U], float ts,
                                           uint32_t &tmax) {
  float v[U][8];
  uint32_t key[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    key[u] = group_max16(stream::key_f32_bits<T>(stream::vec_key<T, PROPAGATE>(w[u])));
    v[u][0] = T::lo(w[u].x), v[u][1] = T::hi(w[u].x);
    v[u][2] = T::lo(w[u].y), v[u][3] = T::hi(w[u].y);
    v[u][4] = T::lo(w[u].z), v[u][5] = T::hi(w[u].z);
    v[u][6] = T::lo(w[u].w), v[u][7] = T::hi(w[u].w);
  }
  emit_step<E4M3, U, MODE>(p, pos, l, v, key, ts, tmax);
}

/// Codes one SwiGLU step: values of row_stream.cuh swiglu8 (the formula of
/// gated_forward(kActSwiGLU), rounded to the intermediate type).
template <typename T, bool E4M3, bool PROPAGATE, int INTER, int U, int MODE>
__device__ __forceinline__ void
step_swiglu(const BParams &p, GPos pos, int l, const uint4 (&g)[U],
            const uint4 (&up)[U], float ts, uint32_t &tmax) {
  float v[U][8];
  uint32_t key[U];
#pragma unroll
  for (int u = 0; u < U; ++u)
    key[u] = group_max16(stream::swiglu8<T, PROPAGATE, INTER>(p.act, g[u], up[u], v[u]));
  emit_step<E4M3, U, MODE>(p, pos, l, v, key, ts, tmax);
}

/// The tensor amax of a per-tensor stream (the amax pass, or a delayed
/// cast asked for it): the block's max, at most one atomicMax a block.
template <int MODE>
__device__ __forceinline__ void finish_amax(const BParams &p, uint32_t tmax) {
  if (MODE == kCodes || !p.amax ||
      (MODE == kTensorCast &&
       p.s.tensor_scaling == FUSION_RT_TENSOR_SCALING_CURRENT))
    return;
  gstream::block_amax(p.amax, tmax);
}

/// The FP8 per-tensor scale of a cast (1 otherwise); block 0's thread 0
/// also writes scale_inv.
template <int MODE>
__device__ __forceinline__ float tensor_scale_of(const BParams &p) {
  if (MODE != kTensorCast)
    return 1.f;
  const bool current = p.s.tensor_scaling == FUSION_RT_TENSOR_SCALING_CURRENT;
  const TensorGlobals g =
      tensor_globals(p.s, current ? __uint_as_float(*p.amax) : 0.f, p.scale_in);
  if (p.scale_inv && blockIdx.x == 0 && threadIdx.x == 0)
    *p.scale_inv = tensor_scale_inv(p.s, g);
  return g.fp8_scale;
}

/// The stream over the groups (file comment): each warp loads its next
/// step before it codes the current one. SWIGLU reads gate and up.
template <typename T, bool E4M3, bool PROPAGATE, int INTER, int U, bool SWIGLU,
          int MODE>
__device__ __forceinline__ void stream_body(const BParams &p) {
  const float ts = tensor_scale_of<MODE>(p);
  uint32_t tmax = 0;
  gstream::run<U, SWIGLU>(
      p.geo, p.x, p.x_rs, p.up, p.up_rs,
      [&](GPos pos, int l, const uint4(&g)[U], const uint4(&up)[U]) {
        if constexpr (SWIGLU)
          step_swiglu<T, E4M3, PROPAGATE, INTER, U, MODE>(p, pos, l, g, up, ts,
                                                          tmax);
        else
          step_plain<T, E4M3, PROPAGATE, U, MODE>(p, pos, l, g, ts, tmax);
      });
  finish_amax<MODE>(p, tmax);
}

/// The stream kernels; MODE (StreamMode) is a template parameter so that
/// each pass carries only its own code: the per-tensor amax and cast passes
/// hold none of the block-scale arithmetic (fewer registers, more resident
/// warps; docs/kernels.md).
template <typename T, bool E4M3, bool PROPAGATE, int U, int MODE>
__global__ void __launch_bounds__(128) fp8_block_plain_kernel(const BParams p) {
  stream_body<T, E4M3, PROPAGATE, kInterF32, U, false, MODE>(p);
}

/// SwiGLU forward; the intermediate type is dispatched once (uniform).
template <typename T, bool E4M3, bool PROPAGATE, int U, int MODE>
__global__ void __launch_bounds__(128)
    fp8_block_swiglu_kernel(const BParams p) {
  if (p.inter == kInterBF16)
    stream_body<T, E4M3, PROPAGATE, kInterBF16, U, true, MODE>(p);
  else if (p.inter == kInterF16)
    stream_body<T, E4M3, PROPAGATE, kInterF16, U, true, MODE>(p);
  else
    stream_body<T, E4M3, PROPAGATE, kInterF32, U, true, MODE>(p);
}

/// Resident blocks a SM of each stream kernel instance (gstream::launch
/// reads it off the device once).
template <typename T, bool E4M3, bool PROPAGATE, bool SWIGLU, int MODE>
int &stream_per_sm() {
  static int n = 0;
  return n;
}

/// Groups a step (fp8_plan::stream_units): plain 2 x 2 on the covering grid
/// (FP8 block codes 4 x 2 on a persistent one, the knob's: more bytes in
/// flight a warp beat more resident warps there, an H200 A/B in
/// docs/kernels.md); SwiGLU 1 x 2 (its 2 x 2 form spills on sm_120a), on a
/// persistent grid (fp8_plan::stream_covers). The per-tensor passes take
/// IGNORE keys only (launch_format): no PROPAGATE instance of them.
template <typename T, bool E4M3, bool PROPAGATE>
cudaError_t launch_typed(const BParams &p, bool swiglu, cudaStream_t st) {
  auto go = [&](auto mode) -> cudaError_t {
    constexpr int M = decltype(mode)::value;
    const gstream::Grid shape = gstream::grid_of(
        fp8_plan::stream_covers(swiglu) ? gstream::Grid::kCover
                                        : gstream::Grid::kPersistent);
    if (swiglu)
      return gstream::launch<1>(
          fp8_block_swiglu_kernel<T, E4M3, PROPAGATE, 1, M>, p,
          stream_per_sm<T, E4M3, PROPAGATE, true, M>(), shape, st);
    // On a covering grid 2 x 2 groups a step, the probe's 16 values a
    // thread (docs/benchmarks/formats.md).
    if constexpr (M == kCodes)
      if (shape == gstream::Grid::kPersistent)
        return gstream::launch<4>(
            fp8_block_plain_kernel<T, E4M3, PROPAGATE, 4, M>, p,
            stream_per_sm<T, E4M3, PROPAGATE, false, M>(), shape, st);
    return gstream::launch<2>(fp8_block_plain_kernel<T, E4M3, PROPAGATE, 2, M>,
                              p, stream_per_sm<T, E4M3, PROPAGATE, false, M>(),
                              shape, st);
  };
  if (p.mode == kCodes)
    return go(std::integral_constant<int, kCodes>());
  if constexpr (!PROPAGATE) {
    if (p.mode == kTensorAmax)
      return go(std::integral_constant<int, kTensorAmax>());
    return go(std::integral_constant<int, kTensorCast>());
  }
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t launch_format(const BParams &p, bool swiglu, cudaStream_t st) {
  const bool e4 = p.s.format == kFP8BlockE4M3 || p.s.format == kFP8E4M3;
  // The per-tensor amax ignores NaN (BlockAmax): IGNORE keys.
  const bool prop = p.mode == kCodes && p.s.nan_policy == FUSION_RT_NAN_PROPAGATE;
  return with_e4m3_propagate(e4, prop, [&](auto e4m3, auto propagate) {
    constexpr bool E = decltype(e4m3)::value, P = decltype(propagate)::value;
    return launch_typed<T, E, P>(p, swiglu, st);
  });
}

//===--- 2D blocks (block_rows > 1: 128x128 weight tiles) --------------------===//

/// What the tile kernels read: the plain quantizer's input [M, N] (any
/// strides) or, to dequantize, the codes; strides in elements.
struct TParams {
  const char *x;
  int64_t x_rs, x_cs;
  uint8_t *rd;
  int64_t rd_rs, rd_cs;
  float *sc;
  int64_t sc_rs, sc_cs;
  char *out; ///< dequantize: output of dtype out_dt
  int32_t out_dt;
  int64_t o_rs, o_cs;
  int64_t M, N, br, bc, nbc, tiles;
  fusion_rt_quant_scheme s;
  uint32_t *amax; ///< tensor amax bits (NaN ignored), or NULL
};

constexpr int kTileThreads = 256;

/// One block of threads per br x bc block (grid-stride over blocks): the
/// block amax (NaN-ignoring max and a NaN flag, as BlockAmax) by warp
/// shuffles and shared memory, then the codes from a second read of the
/// block (from L2). Warp w takes rows w, w + 8, ..; lanes take columns.
template <typename T>
__global__ void __launch_bounds__(kTileThreads) fp8_tile_kernel(const TParams p) {
  __shared__ float s_amax[kTileThreads / 32];
  __shared__ int s_nan[kTileThreads / 32];
  __shared__ float s_scale, s_enc;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const bool e4 = p.s.format == kFP8BlockE4M3;
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    const int64_t tr = t / p.nbc, tc = t - tr * p.nbc;
    const int64_t r0 = tr * p.br, c0 = tc * p.bc;
    const int64_t r1 = min(p.M, r0 + p.br), c1 = min(p.N, c0 + p.bc);
    BlockAmax a;
    for (int64_t r = r0 + warp; r < r1; r += kTileThreads / 32)
      for (int64_t c = c0 + lane; c < c1; c += 32)
        a.add(T::at(p.x + (r * p.x_rs + c * p.x_cs) * T::kBytes));
    uint32_t bits = __float_as_uint(a.amax);
    int nan = a.nan;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      bits = max(bits, __shfl_xor_sync(0xffffffffu, bits, o));
      nan |= __shfl_xor_sync(0xffffffffu, nan, o);
    }
    if (lane == 0) {
      s_amax[warp] = __uint_as_float(bits);
      s_nan[warp] = nan;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      BlockAmax b;
      for (int w = 0; w < kTileThreads / 32; ++w) {
        b.amax = s_amax[w] > b.amax ? s_amax[w] : b.amax;
        b.nan = b.nan || s_nan[w];
      }
      const Fp8BlockScales sc = fp8_block_scales_of(p.s, b.amax, b.nan);
      s_scale = sc.dec;
      s_enc = sc.enc;
      p.sc[tr * p.sc_rs + tc * p.sc_cs] = sc.dec;
      if (p.amax)
        atomicMax(p.amax, __float_as_uint(b.amax));
    }
    __syncthreads();
    const float sc = s_scale, enc = s_enc;
    const bool fast = quotient_by_reciprocal_ok(sc);
    const float rcp = fast ? __frcp_rn(sc) : 0.f;
    for (int64_t r = r0 + warp; r < r1; r += kTileThreads / 32)
      for (int64_t c = c0 + lane; c < c1; c += 32) {
        const float x = T::at(p.x + (r * p.x_rs + c * p.x_cs) * T::kBytes);
        const float q = enc != 0.f ? __fmul_rn(x, enc)
                        : fast     ? quotient_by_reciprocal(x, sc, rcp)
                                   : __fdiv_rn(x, sc);
        p.rd[r * p.rd_rs + c * p.rd_cs] =
            uint8_t(e4 ? cvt_e4m3x2(q, 0.f) : cvt_e5m2x2(q, 0.f));
      }
    __syncthreads(); // s_scale / s_amax are rewritten by the next block
  }
}

/// The scales of a block of data held by the kTileThreads threads of a
/// block, from each thread's amax key (f32 bits of |x|, NaN patterns above
/// Inf): the block's max by shuffles and the shared words `s_key` (one a
/// warp; the caller synchronizes before it reuses them).
__device__ __forceinline__ Fp8BlockScales
block_scales_of_keys(const fusion_rt_quant_scheme &s, uint32_t key,
                     uint32_t (&s_key)[kTileThreads / 32]) {
  key = gstream::warp_max_key(key);
  if ((threadIdx.x & 31) == 0)
    s_key[threadIdx.x >> 5] = key;
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kTileThreads / 32; ++i)
    key = max(key, s_key[i]);
  const bool nan = key > 0x7f800000u;
  return fp8_block_scales_of(s, nan ? 0.f : __uint_as_float(key), nan);
}

/// 128x128 tiles of 16-bit rows (x_cs == 1, rows 16-byte aligned, N a
/// multiple of 128, no amax output): the tile held in registers, one read.
/// Warp w takes rows w * 16 .. w * 16 + 15 of the tile, two rows a load
/// (lanes 0-15 the even one, 16-31 the odd one, 8 values a lane); the tile
/// amax of the 16-bit keys (row_stream.cuh vec_key, the stream kernels'
/// NaN rules) by shuffles and shared memory; codes as codes8.
template <typename T, bool E4M3, bool PROPAGATE>
__global__ void __launch_bounds__(kTileThreads)
    fp8_tile128_kernel(const TParams p) {
  __shared__ uint32_t s_key[kTileThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, l = lane & 15;
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    const int64_t tr = t / p.nbc, tc = t - tr * p.nbc;
    const int64_t r0 = tr * 128 + warp * 16 + (lane >> 4), c = tc * 128 + l * 8;
    uint4 w[8];
    uint32_t key = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int64_t r = r0 + 2 * k;
      w[k] = r < p.M ? ldg_stream16(p.x + (r * p.x_rs + c) * 2)
                     : make_uint4(0, 0, 0, 0);
      key = max(key, stream::key_f32_bits<T>(stream::vec_key<T, PROPAGATE>(w[k])));
    }
    const Fp8BlockScales sc = block_scales_of_keys(p.s, key, s_key);
    if (threadIdx.x == 0)
      p.sc[tr * p.sc_rs + tc * p.sc_cs] = sc.dec;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int64_t r = r0 + 2 * k;
      const float v[8] = {T::lo(w[k].x), T::hi(w[k].x), T::lo(w[k].y),
                          T::hi(w[k].y), T::lo(w[k].z), T::hi(w[k].z),
                          T::lo(w[k].w), T::hi(w[k].w)};
      const uint2 code = sc.enc != 0.f ? stream::codes8<E4M3>(v, sc.enc)
                                       : codes8<E4M3>(v, sc.dec);
      if (r < p.M)
        *reinterpret_cast<uint2 *>(p.rd + r * p.rd_rs + c) = code;
    }
    __syncthreads(); // s_key is rewritten by the next tile
  }
}

/// Wide rowwise blocks (1 x bc, 1024 <= bc <= 2048 * C, bc % 8 == 0: per-row
/// scaling, bc = N) of 16-bit rows: a block of 256 threads per scale block,
/// thread t holding chunks t, t + 256, .. (8 values each, C at most) in
/// registers, all loads in flight before the amax: one read of the input
/// (fp8_block_row_warp_kernel reads it twice). The amax of the 16-bit keys
/// by shuffles and shared memory, codes as codes8.
template <typename T, bool E4M3, int C>
__global__ void __launch_bounds__(kTileThreads) fp8_wide_row_kernel(const TParams p) {
  __shared__ uint32_t s_key[kTileThreads / 32];
  const bool prop = p.s.nan_policy == FUSION_RT_NAN_PROPAGATE;
  const int64_t t = blockIdx.x, r = t / p.nbc, b = t - r * p.nbc;
  const int64_t c0 = b * p.bc, c1 = min(p.N, c0 + p.bc);
  const char *row = p.x + r * p.x_rs * 2;
  uint4 w[C];
  uint32_t key = 0;
#pragma unroll
  for (int k = 0; k < C; ++k) {
    const int64_t c = c0 + 8 * (threadIdx.x + k * kTileThreads);
    w[k] = c < c1 ? ldg_stream16(row + c * 2) : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (int k = 0; k < C; ++k)
    key = max(key, stream::key_f32_bits<T>(prop ? stream::vec_key<T, true>(w[k])
                                                : stream::vec_key<T, false>(w[k])));
  const Fp8BlockScales sc = block_scales_of_keys(p.s, key, s_key);
  if (threadIdx.x == 0)
    p.sc[r * p.sc_rs + b * p.sc_cs] = sc.dec;
#pragma unroll
  for (int k = 0; k < C; ++k) {
    const int64_t c = c0 + 8 * (threadIdx.x + k * kTileThreads);
    const float v[8] = {T::lo(w[k].x), T::hi(w[k].x), T::lo(w[k].y), T::hi(w[k].y),
                        T::lo(w[k].z), T::hi(w[k].z), T::lo(w[k].w), T::hi(w[k].w)};
    const uint2 code = sc.enc != 0.f ? stream::codes8<E4M3>(v, sc.enc)
                                     : codes8<E4M3>(v, sc.dec);
    if (c < c1)
      *reinterpret_cast<uint2 *>(p.rd + r * p.rd_rs + c) = code;
  }
}

/// Dequantize of 2D blocks: one element a thread (grid-stride).
__global__ void fp8_tile_dequantize_kernel(const TParams p) {
  const int64_t total = p.M * p.N;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = e / p.N, c = e - r * p.N;
    const float v = decode_code(p.rd[r * p.rd_rs + c * p.rd_cs],
                                p.s.format == kFP8BlockE4M3 ? FUSION_RT_F8E4M3
                                                            : FUSION_RT_F8E5M2);
    const float x = dequantize_value(
        p.s, v, 0, p.sc[(r / p.br) * p.sc_rs + (c / p.bc) * p.sc_cs]);
    const int64_t off = r * p.o_rs + c * p.o_cs;
    if (p.out_dt == FUSION_RT_BF16)
      reinterpret_cast<uint16_t *>(p.out)[off] = f32_to_bf16(x);
    else if (p.out_dt == FUSION_RT_F16)
      reinterpret_cast<uint16_t *>(p.out)[off] = f32_to_f16(x);
    else
      reinterpret_cast<float *>(p.out)[off] = x;
  }
}

int tile_grid(int64_t work) {
  const int64_t cap = int64_t(device_sm_count()) * 8;
  return int(work < 1 ? 1 : work < cap ? work : cap);
}

using gstream::aligned;
using gstream::vec16_rows;

} // namespace

/// The plan request of a call (common/fp8_plan.h): the request's fields
/// and its alignment facts.
static fp8_plan::Request plan_request(const Request &q) {
  fp8_plan::Request r;
  r.format = q.scheme.format;
  r.op = q.op == Op::Quantize           ? 0
         : q.op == Op::ActQuantize      ? 1
         : q.op == Op::GatedActQuantize ? 2
         : q.op == Op::Dequantize       ? 3
                                        : -1;
  r.backward = q.backward;
  r.kind = q.act_kind;
  r.block_rows = q.scheme.block_rows;
  r.block_cols = q.scheme.block_cols;
  r.nan_propagate = q.scheme.nan_policy == FUSION_RT_NAN_PROPAGATE;
  r.amax = q.amax != nullptr;
  r.scale_inv = q.scale_inv != nullptr;
  r.rowwise = q.row_wise;
  r.colwise = q.col_wise;
  r.dbias = q.dbias != nullptr;
  r.rows = q.rows;
  r.cols = q.cols;
  r.seg_cols = q.seg_cols;
  r.input16 = q.x.dtype == FUSION_RT_BF16 || q.x.dtype == FUSION_RT_F16;
  r.views_ok = vec16_rows(q.x) &&
               (q.op != Op::GatedActQuantize ||
                (vec16_rows(q.up) && q.up.dtype == q.x.dtype)) &&
               q.row_data.cs == 1 && aligned(q.row_data.data, 8) &&
               q.row_data.rs % 8 == 0;
  return r;
}

bool fp8_block_stream_applies(const Request &q) {
  return fp8_plan::stream_applies(plan_request(q));
}

bool fp8_block_tiles_apply(const Request &q) {
  const fp8_plan::Request r = plan_request(q);
  return fp8_plan::tiles_apply(r) || fp8_plan::wide_row_applies(r);
}

fusion_rt_status fp8_block_tiles_execute(const Request &q, cudaStream_t st) {
  TParams p{};
  p.s = q.scheme;
  p.M = q.rows;
  p.N = q.cols;
  p.br = q.scheme.block_rows;
  p.bc = q.scheme.block_cols;
  p.nbc = ceil_div(p.N, p.bc);
  p.tiles = ceil_div(p.M, p.br) * p.nbc;
  p.rd = reinterpret_cast<uint8_t *>(q.row_data.data);
  p.rd_rs = q.row_data.rs;
  p.rd_cs = q.row_data.cs;
  p.sc = reinterpret_cast<float *>(q.row_scales.data);
  p.sc_rs = q.row_scales.rs;
  p.sc_cs = q.row_scales.cs;
  cudaError_t e = cudaSuccess;
  if (q.op == Op::Dequantize) {
    p.out = q.deq_out.data;
    p.out_dt = q.deq_out.dtype;
    p.o_rs = q.deq_out.rs;
    p.o_cs = q.deq_out.cs;
    if (p.M > 0 && p.N > 0)
      fp8_tile_dequantize_kernel<<<tile_grid(ceil_div(p.M * p.N, 256)), 256, 0,
                                   st>>>(p);
    e = cudaGetLastError();
    return e == cudaSuccess ? FUSION_RT_STATUS_SUCCESS
                            : cuda_fail(e, "the FP8 2D block dequantize kernel launch");
  }
  p.x = q.x.data;
  p.x_rs = q.x.rs;
  p.x_cs = q.x.cs;
  p.amax = reinterpret_cast<uint32_t *>(q.amax);
  if (p.amax) // NaN-ignoring tensor amax: the max of the blocks' amaxes
    e = cudaMemsetAsync(p.amax, 0, sizeof(uint32_t), st);
  const fp8_plan::Request plan = plan_request(q);
  if (fp8_plan::wide_row_applies(plan)) { // 1 x bc, one thread block each
    const int g = int(p.M * p.nbc);
    const bool e4 = p.s.format == kFP8BlockE4M3, bf = q.x.dtype == FUSION_RT_BF16;
    const int c = fp8_plan::wide_row_chunks(plan);
#define FRT_WIDE(T, E)                                                           \
  (c == 8   ? fp8_wide_row_kernel<T, E, 8><<<g, kTileThreads, 0, st>>>(p)        \
   : c == 4 ? fp8_wide_row_kernel<T, E, 4><<<g, kTileThreads, 0, st>>>(p)        \
            : fp8_wide_row_kernel<T, E, 2><<<g, kTileThreads, 0, st>>>(p))
    if (bf)
      e4 ? FRT_WIDE(BF16T, true) : FRT_WIDE(BF16T, false);
    else
      e4 ? FRT_WIDE(F16T, true) : FRT_WIDE(F16T, false);
#undef FRT_WIDE
    e = cudaGetLastError();
    return e == cudaSuccess ? FUSION_RT_STATUS_SUCCESS
                            : cuda_fail(e, "the FP8 wide-row block kernel launch");
  }
  const bool t128 = fp8_plan::tile128_applies(plan);
  if (e == cudaSuccess && p.M > 0 && p.N > 0 && t128) {
    const int g = tile_grid(p.tiles);
    const bool e4 = p.s.format == kFP8BlockE4M3;
    const bool prop = p.s.nan_policy == FUSION_RT_NAN_PROPAGATE;
    const bool bf = q.x.dtype == FUSION_RT_BF16;
    with_e4m3_propagate(e4, prop, [&](auto e4m3, auto propagate) {
      constexpr bool E = decltype(e4m3)::value, P = decltype(propagate)::value;
      if (bf)
        fp8_tile128_kernel<BF16T, E, P><<<g, kTileThreads, 0, st>>>(p);
      else
        fp8_tile128_kernel<F16T, E, P><<<g, kTileThreads, 0, st>>>(p);
    });
    e = cudaGetLastError();
  } else if (e == cudaSuccess && p.M > 0 && p.N > 0) {
    const int g = tile_grid(p.tiles);
    switch (q.x.dtype) {
    case FUSION_RT_BF16:
      fp8_tile_kernel<BF16T><<<g, kTileThreads, 0, st>>>(p);
      break;
    case FUSION_RT_F16:
      fp8_tile_kernel<F16T><<<g, kTileThreads, 0, st>>>(p);
      break;
    default:
      fp8_tile_kernel<F32T><<<g, kTileThreads, 0, st>>>(p);
      break;
    }
    e = cudaGetLastError();
  }
  return e == cudaSuccess ? FUSION_RT_STATUS_SUCCESS
                          : cuda_fail(e, "the FP8 2D block kernel launch");
}

fusion_rt_status fp8_block_stream_execute(const Request &q, cudaStream_t st) {
  BParams p{};
  const bool swiglu = q.op == Op::GatedActQuantize;
  p.x = q.x.data;
  p.x_rs = q.x.rs;
  p.up = swiglu ? q.up.data : nullptr;
  p.up_rs = swiglu ? q.up.rs : 0;
  p.rd = reinterpret_cast<uint8_t *>(q.row_data.data);
  p.rd_rs = q.row_data.rs;
  p.sc = reinterpret_cast<float *>(q.row_scales.data);
  p.sc_rs = q.row_scales.rs;
  p.sc_cs = q.row_scales.cs;
  p.geo.gpr = uint32_t(q.cols / 128);
  p.geo.groups = uint32_t(q.rows) * p.geo.gpr;
  p.s = q.scheme;
  p.inter = q.inter;
  p.act = q.params;
  auto run = [&](const BParams &bp) {
    return q.x.dtype == FUSION_RT_BF16 ? launch_format<BF16T>(bp, swiglu, st)
                                       : launch_format<F16T>(bp, swiglu, st);
  };
  if (q.scheme.format == kFP8BlockE4M3 || q.scheme.format == kFP8BlockE5M2) {
    const cudaError_t e = run(p);
    return e == cudaSuccess ? FUSION_RT_STATUS_SUCCESS
                            : cuda_fail(e, "the FP8 block stream kernel launch");
  }
  // FP8 per tensor: current scaling reads the whole tensor's amax before any
  // code (a pass of its own: the least the semantics allow without a
  // grid-wide barrier); delayed scaling takes the given scale and, when the
  // amax is asked for (TE's amax history), finds it during the cast.
  const bool current = q.scheme.tensor_scaling == FUSION_RT_TENSOR_SCALING_CURRENT;
  void *scratch = nullptr;
  cudaError_t e = cudaSuccess;
  if (current || q.amax)
    e = gstream::amax_word(q.amax, st, p.amax, scratch);
  p.scale_in = q.scale_in;
  p.scale_inv = q.scale_inv;
  if (e == cudaSuccess && current) {
    p.mode = kTensorAmax;
    e = run(p);
  }
  if (e == cudaSuccess) {
    p.mode = kTensorCast;
    // After the amax pass: from the end, which is still in L2.
    p.geo.reverse = current && tuning().l2_reverse != 0;
    e = run(p);
  }
  if (scratch)
    cudaFreeAsync(scratch, st);
  return e == cudaSuccess ? FUSION_RT_STATUS_SUCCESS
                          : cuda_fail(e, "the FP8 per-tensor stream kernel launch");
}

} // namespace cuda
} // namespace fusion_rt
