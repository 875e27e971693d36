//===- fp4_stream.cu - NVFP4 / MXFP4 rowwise: the stream kernels -----------===//
//
// Rowwise FP4 (NVFP4 1x16 blocks with e4m3 scales, MXFP4 1x32 blocks with
// e8m0 scales) of a 16-bit input whose rows are a multiple of 128 values,
// plain or after a forward activation (every non-gated and gated kind, the
// value rounded to the input's type or kept in f32): the requests that
// inference and FP4 checkpoint preparation run most. Everything else (f32
// input, other widths, strided columns, colwise copies, 16x16 blocks,
// stochastic rounding, backward, dbias) runs formats.cu's general kernels;
// both give the same bytes.
//
// Layout of the work: the 128-value group stream of group_stream.cuh (16
// lanes a group, 8 values a lane, each warp loading its next step before it
// computes the current one). The 2 (NVFP4) or 4 (MXFP4) lanes of a block
// join their amax with xor shuffles; each lane stores its 8 codes as one
// 4-byte word, and the scale bytes of 4 blocks are gathered by shuffles into
// one 4-byte store (compact rows or the 128x4 swizzled tiles, where 4
// consecutive blocks of a row are 4 consecutive bytes).
//
// Passes, each one kernel on the caller's stream: NVFP4 (and any request
// for the amax output) first runs this kernel in amax mode, the NaN-ignoring
// tensor amax of the values by one atomicMax a warp; then the codes pass
// reads the word and takes the tensor globals from it on the device.
//
// Numerics: every scale byte and code comes from common/quantize_block.h's
// functions (tensor_globals, block_scale, the e2m1 conversion of x * mul,
// torchao's code for its NVFP4 recipes), as in the CPU backend; the values
// of an activation are those of formats.cu (act_forward / gated_forward
// with a compile-time kind; SiLU and SwiGLU take the reciprocal without the
// divide's slow-path branch where it gives the same bits, as
// row_stream.cuh's swiglu8 does).
//
//===----------------------------------------------------------------------===//
#include "common/fp4_plan.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_status.h"
#include "cuda/group_stream.cuh"
#include "cuda/launch.cuh"
#include "cuda/row_stream.cuh"

#include "common/layout.h"
#include "common/quantize_block.h"
#include "src/backend.h"

namespace fusion_rt {
namespace cuda {
namespace {

using gstream::GPos;

/// What a kernel launch does: the tensor amax of the values, or the codes
/// and scales.
enum Fp4Pass : int32_t { kAmaxPass = 0, kCodesPass = 1 };

/// What the stream kernels read, by value. Strides in elements.
struct SParams {
  const char *x, *up; ///< 16-bit inputs (up: gated kinds only)
  int64_t x_rs, up_rs;
  uint8_t *rd;    ///< packed codes: row r starts at byte r * rd_rb
  int64_t rd_rb;
  uint8_t *sc;    ///< scale bytes: compact rows of stride sc_rs, or swizzled
  int64_t sc_rs, sc_pc;
  bool swz;
  gstream::Geometry geo;
  fusion_rt_quant_scheme s;
  ActParams act;
  uint32_t *amax; ///< tensor amax bits (NaN ignored), or NULL (none needed)
  float *scale_inv;
  int32_t pass;
  bool packed; ///< tuning.def's fp4_packed: mx4_codes8_16 for plain MXFP4
};

constexpr uint32_t kInfBits = 0x7f800000u;

/// The NaN-ignoring amax key of 8 values (the slow path of a vector that
/// holds a NaN).
__device__ __forceinline__ uint32_t ignore_key(const float (&v)[8]) {
  uint32_t k = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j)
    k = max(k, amax_key(v[j], false));
  return k;
}

/// The 8 values of a lane: the input (KIND = kActIdentity) or the forward
/// activation KIND of it (gated kinds: of gate x and up u), rounded to the
/// intermediate type INTER. Returns their amax key with NaN patterns kept
/// (above Inf).
template <typename T, int KIND, int INTER>
__device__ __forceinline__ uint32_t values8(const ActParams &act, const uint4 &x,
                                            const uint4 &u, float (&v)[8]) {
  if constexpr (KIND == kActIdentity) {
    v[0] = T::lo(x.x), v[1] = T::hi(x.x), v[2] = T::lo(x.y), v[3] = T::hi(x.y);
    v[4] = T::lo(x.z), v[5] = T::hi(x.z), v[6] = T::lo(x.w), v[7] = T::hi(x.w);
    return stream::key_f32_bits<T>(stream::vec_key<T, true>(x));
  } else if constexpr (KIND == kActSwiGLU) {
    return stream::swiglu8<T, true, INTER>(act, x, u, v);
  } else {
    const uint32_t xw[4] = {x.x, x.y, x.z, x.w};
    const uint32_t uw[4] = {u.x, u.y, u.z, u.w};
    float a[8];
#pragma unroll
    for (int j = 0; j < 8; ++j)
      a[j] = (j & 1) ? T::hi(xw[j / 2]) : T::lo(xw[j / 2]);
    if constexpr (KIND == kActSilu) {
      // Every a > -87: 1 + expf(-a) < 2^126, and the reciprocal's bits come
      // without the divide's range test and slow-path branch.
      bool in_range = true;
#pragma unroll
      for (int j = 0; j < 8; ++j)
        in_range = in_range && a[j] > -87.f;
      if (in_range) {
#pragma unroll
        for (int j = 0; j < 8; ++j)
          v[j] = a[j] * rcp_rn_1_2p126(1.f + expf(-a[j]));
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j)
          v[j] = act_forward(kActSilu, a[j], act);
      }
    } else if constexpr (KIND >= kActSwiGLU) {
#pragma unroll
      for (int j = 0; j < 8; ++j)
        v[j] = gated_forward(KIND, a[j], (j & 1) ? T::hi(uw[j / 2]) : T::lo(uw[j / 2]),
                             act);
    } else {
#pragma unroll
      for (int j = 0; j < 8; ++j)
        v[j] = act_forward(KIND, a[j], act);
    }
    return stream::round_key8<true, INTER>(v);
  }
}

/// The 8 packed e2m1 codes (element j in nibble j) of v under factor `mul`:
/// f32_to_e2m1_rne(v * mul) (TE's NVFP4 and MXFP4), or torchao's code for
/// its NVFP4 recipes. `finite`: no NaN among v (the lane's amax key). Where
/// no product can be NaN (v not NaN, 0 < mul <= FLT_MAX: the sign of v *
/// mul is v's), the one-addition form e2m1_rne_of_magnitude.
__device__ __forceinline__ uint32_t codes8(const fusion_rt_quant_scheme &s,
                                           const float (&v)[8], float mul,
                                           bool finite) {
  uint32_t w = 0;
  if (s.nvfp4_recipe != FUSION_RT_NVFP4_RECIPE_TE) {
    const bool ignore = s.nan_policy == FUSION_RT_NAN_IGNORE;
#pragma unroll
    for (int j = 0; j < 8; ++j)
      w |= uint32_t(nvfp4_torchao_code(v[j], mul, ignore)) << (4 * j);
  } else if (finite && mul > 0.f && mul <= kF32Max) {
#if FUSION_RT_HAVE_E2M1_CVT
    // Blackwell: the conversion instruction, a pair at a time (no NaN
    // among v, and none among the products).
    float q[8];
#pragma unroll
    for (int j = 0; j < 8; ++j)
      q[j] = v[j] * mul;
    w = e2m1x8_cvt(q);
#else
    // The magnitude codes, then v's sign bit (bit 31) into bit 3 of each
    // nibble.
    // (fabsf folds into the multiply; the nibbles do not overlap, so they
    // are added, which folds the shift into the add.)
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      w += uint32_t(e2m1_rne_of_magnitude(fabsf(v[j]) * mul, 0)) << (4 * j);
      w |= (__float_as_uint(v[j]) >> (28 - 4 * j)) & (8u << (4 * j));
    }
#endif
  } else {
#pragma unroll
    for (int j = 0; j < 8; ++j)
      w |= uint32_t(f32_to_e2m1_rne(v[j] * mul)) << (4 * j);
  }
  return w;
}

/// Two MXFP4 codes (bits 0-3 and 16-19) of the 16-bit values of word `w`
/// (T's type) under the block factor whose 16-bit pattern is in both halves
/// of `mul2`, by packed 16-bit arithmetic: the magnitude times the factor (a
/// power of two, so exact where it is normal, and below 2^-14 (f16) or
/// 2^-126 (bf16) far under the first e2m1 midpoint 0.25), clamped to 8, then
/// e2m1_rne_of_magnitude's one rounding addition in the 16-bit type: C =
/// 1.5 * 2^(P+k) (P = 6 bf16, 9 f16: the mantissa width less one), k =
/// max(exponent, 0), whose ulp is the e2m1 step of the binade; code = the
/// ulps above C plus 2k, saturated at 7; the sign bit last. Each half's
/// value stays in [0, 2^16) after every step taken as a whole, so the 32-bit
/// integer arithmetic never carries across halves.
template <typename T>
__device__ __forceinline__ uint32_t mx4_pair16(uint32_t w, uint32_t mul2) {
  constexpr bool bf = std::is_same<T, BF16T>::value;
  constexpr uint32_t kExp = bf ? 0x7f807f80u : 0x7c007c00u;
  constexpr uint32_t kOne = bf ? 0x3f803f80u : 0x3c003c00u;
  constexpr uint32_t kEight = bf ? 0x41004100u : 0x48004800u;
  constexpr uint32_t kC = bf ? 0x03400340u : 0x26002600u; // 2^k -> C
  constexpr uint32_t kShift = bf ? 6 : 9;                 // 2k + 2 bias
  constexpr uint32_t kMask = bf ? 0x01ff01ffu : 0x003f003fu;
  constexpr uint32_t kBias2 = bf ? 0x00fe00feu : 0x001e001eu; // 2 * bias
  const uint32_t m = w & 0x7fff7fffu;
  uint32_t y, sum, e;
  if constexpr (bf) {
    asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(y) : "r"(m), "r"(mul2));
    asm("min.bf16x2 %0, %1, %2;" : "=r"(y) : "r"(y), "r"(kEight));
  } else {
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(y) : "r"(m), "r"(mul2));
    asm("min.f16x2 %0, %1, %2;" : "=r"(y) : "r"(y), "r"(kEight));
  }
  asm("max.u16x2 %0, %1, %2;" : "=r"(e) : "r"(y & kExp), "r"(kOne));
  const uint32_t c = e + kC;
  if constexpr (bf)
    asm("add.rn.bf16x2 %0, %1, %2;" : "=r"(sum) : "r"(y), "r"(c));
  else
    asm("add.rn.f16x2 %0, %1, %2;" : "=r"(sum) : "r"(y), "r"(c));
  uint32_t t = sum + ((e >> kShift) & kMask) - c - kBias2;
  asm("min.u16x2 %0, %1, %2;" : "=r"(t) : "r"(t), "r"(0x00070007u));
  return t | ((w >> 12) & 0x00080008u);
}

/// codes8 of MXFP4 on 16-bit inputs `x` (the values v of the plain
/// quantizer): by mx4_pair16 where no value is NaN and the block factor is a
/// power of two that is normal in T (every factor but those of the extreme
/// scale bytes), else codes8. Equal to codes8 for every input
/// (fusion_rt_formats_gpu_tests compares it with the CPU backend).
template <typename T>
__device__ __forceinline__ uint32_t
mx4_codes8_16(const fusion_rt_quant_scheme &s, const uint4 &x,
              const float (&v)[8], float mul, bool finite) {
  constexpr bool bf = std::is_same<T, BF16T>::value;
  const uint32_t mb = __float_as_uint(mul);
  const uint32_t me = mb >> 23;
  const bool normal16 =
      bf ? (me >= 1 && me <= 254) : (me >= 127 - 14 && me <= 127 + 15);
  // Blackwell converts a pair an instruction in codes8 (fewer than the
  // 16-bit rounding's).
  if (FUSION_RT_HAVE_E2M1_CVT || !finite || (mb & 0x807fffffu) != 0 || !normal16)
    return codes8(s, v, mul, finite);
  const uint32_t m16 = bf ? (mb >> 16) : ((me - 127 + 15) << 10);
  const uint32_t mul2 = m16 | (m16 << 16);
  uint32_t b[4];
  const uint32_t w[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint32_t t = mx4_pair16<T>(w[j], mul2);
    b[j] = t | (t >> 12); // codes 2j, 2j + 1 in byte 0
  }
  return __byte_perm(__byte_perm(b[0], b[1], 0x0040),
                     __byte_perm(b[2], b[3], 0x0040), 0x5410);
}

/// One step of U groups of this lane half: the amax pass folds the values'
/// NaN-ignoring key into tmax; the codes pass writes codes and scales. BS:
/// the block width, 16 (NVFP4) or 32 (MXFP4); `s` the scheme with its
/// format made a constant (so that block_scale's format tests fold away).
template <typename T, int KIND, int INTER, int U, int BS>
__device__ __forceinline__ void step(const SParams &p,
                                     const fusion_rt_quant_scheme &s,
                                     const TensorGlobals &g, GPos pos, int l,
                                     const uint4 (&x)[U], const uint4 (&u)[U],
                                     uint32_t &tmax) {
  constexpr int LPB = BS / 8; // lanes a block
  const bool prop = s.nan_policy == FUSION_RT_NAN_PROPAGATE;
#pragma unroll
  for (int i = 0; i < U; ++i) {
    float v[8];
    uint32_t key = values8<T, KIND, INTER>(p.act, x[i], u[i], v);
    const bool finite = key <= kInfBits; // no NaN among this lane's values
    if (p.pass == kAmaxPass) {
      // Groups past the end hold zeros (their values too: act(0) * 0, and
      // every non-gated kind maps 0 to 0).
      tmax = max(tmax, finite ? key : ignore_key(v));
    } else {
      // The block's amax: under PROPAGATE a NaN key marks a NaN block (its
      // amax is then unused by every format); under IGNORE NaN is dropped.
      if (!prop && !finite)
        key = ignore_key(v);
#pragma unroll
      for (int o = 1; o < LPB; o <<= 1)
        key = max(key, __shfl_xor_sync(0xffffffffu, key, o));
      BlockAmax a;
      a.nan = key > kInfBits;
      a.amax = a.nan ? 0.f : __uint_as_float(key);
      float mul;
      const uint8_t sb = block_scale(s, g, a, mul);
      uint32_t codes;
      if constexpr (KIND == kActIdentity && BS == 32 &&
                    (std::is_same<T, BF16T>::value ||
                     std::is_same<T, F16T>::value))
        codes = p.packed ? mx4_codes8_16<T>(s, x[i], v, mul, finite)
                         : codes8(s, v, mul, finite);
      else
        codes = codes8(s, v, mul, finite);
      // Scale bytes of 4 consecutive blocks into one word, held by the
      // first lane of the 4.
      uint32_t w = uint32_t(sb) << (8 * ((l / LPB) & 3));
#pragma unroll
      for (int o = LPB; o < 4 * LPB; o <<= 1)
        w |= __shfl_xor_sync(0xffffffffu, w, o);
      if (pos.g < p.geo.groups) {
        *reinterpret_cast<uint32_t *>(p.rd + int64_t(pos.row) * p.rd_rb +
                                      int64_t(pos.gc) * 64 + l * 4) = codes;
        if (l % (4 * LPB) == 0) {
          const int64_t col = int64_t(pos.gc) * (16 / LPB) + l / LPB;
          const int64_t off = p.swz ? swizzled_scale_offset(pos.row, col, p.sc_pc)
                                    : int64_t(pos.row) * p.sc_rs + col;
          *reinterpret_cast<uint32_t *>(p.sc + off) = w;
        }
      }
    }
    pos = gstream::next2(p.geo, pos);
  }
}

template <typename T, int KIND, int INTER, int U, int BS>
__global__ void __launch_bounds__(128) fp4_stream_kernel(const SParams p) {
  fusion_rt_quant_scheme s = p.s;
  s.format = BS == 16 ? kNVFP4 : kMXFP4;
  const bool codes = p.pass == kCodesPass;
  const TensorGlobals g = tensor_globals(
      s, codes && p.amax ? __uint_as_float(*p.amax) : 0.f, nullptr);
  if (codes && p.scale_inv && blockIdx.x == 0 && threadIdx.x == 0)
    *p.scale_inv = tensor_scale_inv(s, g);
  uint32_t tmax = 0;
  gstream::run<U, (KIND >= kActSwiGLU)>(
      p.geo, p.x, p.x_rs, p.up, p.up_rs,
      [&](GPos pos, int l, const uint4(&x)[U], const uint4(&u)[U]) {
        step<T, KIND, INTER, U, BS>(p, s, g, pos, l, x, u, tmax);
      });
  if (!codes) // uniform: every thread of the block
    gstream::block_amax(p.amax, tmax);
}

/// Groups a step (plain: 2 x 2 groups; an activation: 1 x 2 groups, its
/// arithmetic (and a gated kind's second input) filling the time between
/// loads).
constexpr int kPlainU = 2, kActU = 1;

template <typename T, int KIND, int INTER>
cudaError_t launch_kind(const SParams &p, cudaStream_t st) {
  constexpr int U = KIND == kActIdentity ? kPlainU : kActU;
  static int per_sm[2] = {0, 0};
  // Persistent unless the knob stream_grid says otherwise: covering the
  // tensor was 15-22 % slower (H100, docs/benchmarks/formats.md).
  const gstream::Grid shape = gstream::grid_of(gstream::Grid::kPersistent);
  if (p.s.format == kNVFP4)
    return gstream::launch<U>(fp4_stream_kernel<T, KIND, INTER, U, 16>, p,
                              per_sm[0], shape, st);
  return gstream::launch<U>(fp4_stream_kernel<T, KIND, INTER, U, 32>, p,
                            per_sm[1], shape, st);
}

/// The intermediate type: the input's own, or f32.
template <typename T, int KIND>
cudaError_t launch_inter(const SParams &p, int32_t inter, cudaStream_t st) {
  constexpr int kOwn = std::is_same<T, BF16T>::value ? kInterBF16 : kInterF16;
  return inter == kInterF32 ? launch_kind<T, KIND, kInterF32>(p, st)
                            : launch_kind<T, KIND, kOwn>(p, st);
}

template <typename T>
cudaError_t launch_typed(const SParams &p, int32_t kind, int32_t inter,
                         cudaStream_t st) {
  // One case a kind of the registry (fusion_rt_kinds.def); a plain
  // quantizer is the identity with an f32 intermediate.
  switch (kind) {
#define FUSION_RT_ACTIVATION(U, name, value, gated, mask)                      \
  case value:                                                                  \
    if constexpr ((value) != kActIdentity)                                     \
      return launch_inter<T, (value)>(p, inter, st);                           \
    else                                                                       \
      return launch_kind<T, kActIdentity, kInterF32>(p, st);
#include "fusion_rt_kinds.def"
  default:
    return launch_kind<T, kActIdentity, kInterF32>(p, st);
  }
}

using gstream::aligned;
using gstream::vec16_rows;

} // namespace

bool fp4_stream_applies(const Request &q) {
  // The scope is common/fp4_plan.h's, which the kernel report reads too;
  // here the request's alignment facts.
  const fusion_rt_quant_scheme &s = q.scheme;
  const bool gated = q.op == Op::GatedActQuantize;
  fp4_plan::Request r;
  r.format = s.format;
  r.elem_rounding = s.elem_rounding;
  r.nvfp4_block = s.nvfp4_block;
  r.op = q.op == Op::Quantize            ? 0
         : q.op == Op::ActQuantize       ? 1
         : q.op == Op::GatedActQuantize ? 2
                                         : -1;
  r.backward = q.backward;
  r.kind = q.act_kind;
  r.kind_gated = act_is_gated(q.act_kind);
  r.inter = q.inter;
  r.own_inter = q.x.dtype == FUSION_RT_BF16 ? kInterBF16 : kInterF16;
  r.input16 = q.x.dtype == FUSION_RT_BF16 || q.x.dtype == FUSION_RT_F16;
  r.rowwise = q.row_wise;
  r.colwise = q.col_wise;
  r.dbias = q.dbias != nullptr;
  r.rows = q.rows;
  r.cols = q.cols;
  r.seg_cols = q.seg_cols;
  const bool scales_ok =
      q.swizzled ? aligned(q.row_scales_swz, 4)
                 : q.row_scales.cs == 1 && aligned(q.row_scales.data, 4) &&
                       q.row_scales.rs % 4 == 0;
  r.views_ok = vec16_rows(q.x) &&
               (!gated || (vec16_rows(q.up) && q.up.dtype == q.x.dtype)) &&
               q.row_data.cs == 1 && aligned(q.row_data.data, 4) &&
               q.row_data.rs % 8 == 0 && scales_ok;
  return fp4_plan::applies(r);
}

fusion_rt_status fp4_stream_execute(const Request &q, cudaStream_t st) {
  SParams p{};
  const bool gated = q.op == Op::GatedActQuantize;
  p.x = q.x.data;
  p.x_rs = q.x.rs;
  p.up = gated ? q.up.data : nullptr;
  p.up_rs = gated ? q.up.rs : 0;
  p.rd = reinterpret_cast<uint8_t *>(q.row_data.data);
  p.rd_rb = q.row_data.rs / 2; // nibbles -> bytes (rs is even)
  p.swz = q.swizzled;
  p.sc = reinterpret_cast<uint8_t *>(q.swizzled ? q.row_scales_swz
                                                : q.row_scales.data);
  p.sc_rs = q.row_scales.rs;
  p.sc_pc = q.row_scales_padded_cols;
  p.geo.gpr = uint32_t(q.cols / 128);
  p.geo.groups = uint32_t(q.rows) * p.geo.gpr;
  p.s = q.scheme;
  p.act = q.params;
  p.scale_inv = q.scale_inv;
  p.packed = tuning().fp4_packed != 0;
  const int32_t kind = q.op == Op::Quantize ? int32_t(kActIdentity) : q.act_kind;
  auto run = [&](const SParams &sp) {
    return q.x.dtype == FUSION_RT_BF16 ? launch_typed<BF16T>(sp, kind, q.inter, st)
                                       : launch_typed<F16T>(sp, kind, q.inter, st);
  };
  cudaError_t e = cudaSuccess;
  // Swizzled scales: the padding rows of the last 128-row tile are zero
  // (the columns are whole: N / 16 and N / 32 are multiples of 4 here).
  if (q.swizzled && q.rows % 128 != 0)
    e = cudaMemsetAsync(q.row_scales_swz, 0,
                        size_t(q.row_scales_padded_rows * q.row_scales_padded_cols),
                        st);
  // The tensor amax: NVFP4's globals depend on it (not the torchao block
  // recipe's, whose per-tensor scale is 1), and the amax output asks for it.
  const bool need_amax =
      q.amax || (q.scheme.format == kNVFP4 &&
                 q.scheme.nvfp4_recipe != FUSION_RT_NVFP4_RECIPE_TORCHAO_BLOCK);
  void *scratch = nullptr;
  if (e == cudaSuccess && need_amax) {
    e = gstream::amax_word(q.amax, st, p.amax, scratch);
    if (e == cudaSuccess) {
      p.pass = kAmaxPass;
      e = run(p);
    }
  }
  if (e == cudaSuccess) {
    p.pass = kCodesPass;
    // After the amax pass: from the end, which is still in L2.
    p.geo.reverse = need_amax && tuning().l2_reverse != 0;
    e = run(p);
  }
  if (scratch)
    cudaFreeAsync(scratch, st);
  return e == cudaSuccess ? FUSION_RT_STATUS_SUCCESS
                          : cuda_fail(e, "the FP4 stream kernel launch");
}

} // namespace cuda
} // namespace fusion_rt
