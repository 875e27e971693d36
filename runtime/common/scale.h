//===- scale.h - block and tensor scale computation (CPU + CUDA) --*- C++ -*-===//
//
// The scale formulas of the numerics contract (docs/numerics.md,
// research/kernels.md §0, §1.2, §1.7, §1.8):
//   MX RCEIL  byte = roundup_e8m0(fp32(amax * fp32(1/max_elem)))
//   MX FLOOR  byte = max(E(amax) - P, 0),  P = 8 (e4m3), 15 (e5m2), 2 (e2m1)
//   MX element  q = cvt_rn_satfinite(x * r(byte)),  r(b) = 2^(127-b) exactly
//   NVFP4     TransformerEngine's global-scale chain
//   FP8       per-tensor current scaling with TransformerEngine's edge rules
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_SCALE_H
#define FUSION_RT_COMMON_SCALE_H

#include "common/convert.h"

namespace fusion_rt {

/// Element formats of the quantized data; values equal fusion_rt_format of
/// fusion_rt.h.
enum QuantFormat : int32_t {
  kMXFP8E4M3 = 0,
  kMXFP8E5M2 = 1,
  kMXFP4 = 2,
  kNVFP4 = 3,
  kFP8E4M3 = 4,
  kFP8E5M2 = 5,
  kFP8BlockE4M3 = 6,
  kFP8BlockE5M2 = 7
};

/// Largest finite element of each data type.
constexpr float kE4M3Max = 448.0f;
constexpr float kE5M2Max = 57344.0f;
constexpr float kE2M1Max = 6.0f;

/// fp32(1/max) bit patterns (TE Quantized_Limits::max_norm_rcp).
constexpr uint32_t kE4M3MaxRcpBits = 0x3b124925u; // fp32(1/448)
constexpr uint32_t kE5M2MaxRcpBits = 0x37924925u; // fp32(1/57344)
constexpr uint32_t kE2M1MaxRcpBits = 0x3e2aaaabu; // fp32(1/6)

/// fp32(1/max) of the element type of an MX format.
FUSION_RT_HDI float mx_max_rcp(int32_t format) {
  return bits_f32(format == kMXFP8E4M3   ? kE4M3MaxRcpBits
                  : format == kMXFP8E5M2 ? kE5M2MaxRcpBits
                                         : kE2M1MaxRcpBits);
}

/// The FLOOR exponent offset P (emax of the element type).
FUSION_RT_HDI int mx_floor_p(int32_t format) {
  return format == kMXFP8E4M3 ? 8 : format == kMXFP8E5M2 ? 15 : 2;
}

/// roundup_e8m0(v) for v >= 0 (sign ignored): normal v -> E(v) + (mant != 0);
/// subnormal v -> (v > 2^-127) ? 1 : 0; 0 -> 0; NaN -> 255. A result above
/// 254 (v > 2^127 or Inf) is 255 without `saturate` (torchao's cvt.rp.ue8m0)
/// and 254 with it (TE's cvt.rp.satfinite.ue8m0).
FUSION_RT_HDI uint8_t e8m0_roundup(float v, bool saturate) {
  uint32_t a = f32_bits(v) & 0x7fffffffu;
  if (a > 0x7f800000u)
    return 255;
  if (a == 0x7f800000u)
    return saturate ? 254 : 255;
  uint32_t e = a >> 23, mant = a & 0x7fffffu;
  if (e == 0)
    return a > 0x00400000u ? 1 : 0;
  uint32_t b = e + (mant != 0 ? 1u : 0u);
  if (b > 254)
    return saturate ? 254 : 255;
  return uint8_t(b);
}

/// The mantissa width of an MX format's element type (e4m3 3, e5m2 2, e2m1 1).
FUSION_RT_HDI int mx_mbits(int32_t format) {
  return format == kMXFP8E4M3 ? 3 : format == kMXFP8E5M2 ? 2 : 1;
}

/// The MX scale byte of a block. `amax` is the largest |x| over the block's
/// valid non-NaN elements (0 if none); `has_nan` says whether any valid
/// element was NaN. `rounding`: 0 RCEIL, 1 FLOOR, 2 CEIL (FLOOR of amax
/// rounded up to a power of two), 3 EVEN (FLOOR of amax with its mantissa
/// rounded half up to the element's width: torchao's
/// `(bits + (1 << (23 - mbits - 1))) & 0xff800000`, which carries into the
/// exponent, up to Inf's 255). `propagate`: NaN policy.
///  - propagate: a NaN or Inf in the block gives 255 (torchao);
///  - ignore: NaN is dropped, an Inf amax saturates to 254 (TE).
FUSION_RT_HDI uint8_t mx_scale_byte(float amax, bool has_nan, int32_t format,
                                    int32_t rounding, bool propagate) {
  if (propagate && (has_nan || f32_is_inf(amax)))
    return 255;
  if (rounding == 0)
    return e8m0_roundup(amax * mx_max_rcp(format), /*saturate=*/true);
  if (f32_is_inf(amax))
    return 254;
  uint32_t bits = f32_bits(amax) & 0x7fffffffu;
  if (rounding == 3)
    bits = (bits + (1u << (22 - mx_mbits(format)))) & 0xff800000u;
  int e = int(bits >> 23) & 0xff;
  if (rounding == 2 && (bits & 0x7fffffu) != 0)
    ++e; // at most 255 (amax below 2^128): the byte stays below 254
  int p = mx_floor_p(format);
  return uint8_t(e > p ? e - p : 0);
}

/// r(b) = 2^(127-b) exactly: fp32 bits (254-b) << 23; b = 254 gives the fp32
/// subnormal 0x00400000 (2^-127); b = 255 gives NaN (kernels.md §0 item 2).
FUSION_RT_HDI float mx_reciprocal(uint8_t b) {
  if (b == 255)
    return bits_f32(0x7fffffffu);
  if (b == 254)
    return bits_f32(0x00400000u);
  return bits_f32(uint32_t(254 - b) << 23);
}

/// The quantized element of an MX format: cvt_rn_satfinite(x * r).
/// e2m1 results are nibbles.
FUSION_RT_HDI uint8_t mx_encode(float x, float r, int32_t format,
                                bool stochastic = false, uint32_t rbits = 0) {
  float v = x * r;
  if (format == kMXFP8E4M3)
    return f32_to_e4m3(v);
  if (format == kMXFP8E5M2)
    return f32_to_e5m2(v);
  return f32_to_e2m1(v, stochastic, rbits);
}

//===--- NVFP4 (TransformerEngine recipe, kernels.md §1.7) ----------------===//

/// Global encode scale S_enc = min(448*6/amax, FLT_MAX); 1 when amax == 0 or
/// S_enc == 0 (amax = Inf). `amax` is the NaN-ignoring tensor amax.
/// The special cases are decided on the bits: GCC 13 at -O2 folds the
/// float-compare form of this function wrongly for subnormal amax.
FUSION_RT_HDI float nvfp4_global_encode_scale(float amax) {
  const uint32_t a = f32_bits(amax) & 0x7fffffffu;
  if (a == 0 || a == 0x7f800000u) // amax == 0, or 2688/Inf == 0
    return 1.0f;
  const float s = 2688.0f / amax;
  if ((f32_bits(s) & 0x7fffffffu) >= 0x7f800000u) // Inf (or NaN amax)
    return kF32Max;
  return s;
}

/// Global decode scale S_dec = 1 / S_enc (double division, stored as fp32).
FUSION_RT_HDI float nvfp4_global_decode_scale(float s_enc) {
  return float(1.0 / double(s_enc));
}

/// Block scale factor S_enc * fp32(1/6), computed once per tensor.
FUSION_RT_HDI float nvfp4_block_scale_factor(float s_enc) {
  return s_enc * bits_f32(kE2M1MaxRcpBits);
}

/// e4m3 block scale: e4m3_satfinite_rn(block_amax * factor); no lower clamp.
FUSION_RT_HDI uint8_t nvfp4_block_scale(float block_amax, float factor) {
  return f32_to_e4m3(block_amax * factor);
}

/// Element encode factor min(1 / (float(s) * S_dec), FLT_MAX) (IEEE divide).
FUSION_RT_HDI float nvfp4_encode_factor(uint8_t s, float s_dec) {
  float enc = 1.0f / (e4m3_to_f32(s) * s_dec);
  return enc > kF32Max ? kF32Max : enc;
}

//===--- NVFP4, torchao 0.18's nvfp4_quantize (docs/numerics.md) ----------===//
//
// torchao computes in fp32 tensor ops: pts = amax / 2688, block scale
// e4m3(clamp(block_amax / 6 / pts, 2^-6, 448)), codes of
// clamp(x * ((1 / pts) / fp32(scale)), -6, 6) by an RNE bit trick. A zero
// (or tiny) tensor makes NaN scales and codes there (0 / 0, 0 * Inf), whose
// bits follow x86's rules; the functions below compute those NaN bits
// explicitly, so that both backends write what torch (x86) and the IR's CPU
// evaluation write: an operand NaN is returned quieted (the first one), an
// invalid operation gives the default NaN 0xFFC00000.

/// `r` = a (op) b with x86's NaN result.
FUSION_RT_HDI float x86_nan_rule(float a, float b, float r) {
  if (!f32_is_nan(r))
    return r;
  if (f32_is_nan(a))
    return bits_f32(f32_bits(a) | 0x400000u);
  if (f32_is_nan(b))
    return bits_f32(f32_bits(b) | 0x400000u);
  return bits_f32(0xffc00000u);
}
FUSION_RT_HDI float x86_div(float a, float b) { return x86_nan_rule(a, b, a / b); }
FUSION_RT_HDI float x86_mul(float a, float b) { return x86_nan_rule(a, b, a * b); }

/// torchao's per-tensor scale amax / (448 * 6).
FUSION_RT_HDI float nvfp4_torchao_tensor_scale(float amax) {
  return x86_div(amax, 2688.0f);
}

/// The fp32 value of an e4m3 scale byte as torch widens it: a NaN byte
/// keeps its sign and its mantissa bits (0x7F -> 0x7FF00000).
FUSION_RT_HDI float nvfp4_torchao_scale_value(uint8_t s) {
  if ((s & 0x7fu) == 0x7fu)
    return bits_f32((uint32_t(s & 0x80u) << 24) | 0x7ff00000u);
  return e4m3_to_f32(s);
}

/// The e4m3 block scale e4m3(clamp(block_amax / 6 / pts, 2^-6, 448)) (pts =
/// 1 without a per-tensor scale: x / 1 == x). A NaN quotient (0 / 0) keeps
/// its sign through torch.clamp (0xFF), or with `nan_to_min` becomes the
/// lower bound, as torch-mlir's clamp (`cmpf ult` + `select`) makes it.
FUSION_RT_HDI uint8_t nvfp4_torchao_block_scale(float block_amax, float pts,
                                                bool nan_to_min) {
  float s = x86_div(x86_div(block_amax, 6.0f), pts);
  if (f32_is_nan(s) && !nan_to_min)
    return uint8_t(((f32_bits(s) >> 24) & 0x80u) | 0x7fu);
  if (f32_is_nan(s))
    s = 0x1p-6f;
  s = s < 0x1p-6f ? 0x1p-6f : s;
  s = s > kE4M3Max ? kE4M3Max : s;
  return f32_to_e4m3(s);
}

/// The element factor (1 / pts) / fp32(scale).
FUSION_RT_HDI float nvfp4_torchao_encode_factor(uint8_t s, float pts) {
  return x86_div(x86_div(1.0f, pts), nvfp4_torchao_scale_value(s));
}

/// The e2m1 code of clamp(x * factor, -6, 6) as torchao's bit trick makes
/// it: RNE for numbers; a NaN product (quiet, bits q) gives its sign and
/// 4 if (q & 0x7fffffff) >= 0x7FE00000, else 3 (torch.clamp passes NaN on),
/// or with `nan_to_min` the code of -6 (torch-mlir's clamp).
FUSION_RT_HDI uint8_t nvfp4_torchao_code(float x, float factor,
                                         bool nan_to_min) {
  const float v = x86_mul(x, factor);
  if (!f32_is_nan(v))
    return f32_to_e2m1_rne(v);
  if (nan_to_min)
    return 0xf;
  const uint32_t q = f32_bits(v);
  return uint8_t(((q >> 28) & 0x8u) |
                 ((q & 0x7fffffffu) >= 0x7fe00000u ? 4u : 3u));
}

//===--- FP8 per tensor (TransformerEngine recipe, kernels.md §1.8) -------===//

/// Current scaling: amax < eps -> eps; amax in {Inf, 0, NaN} -> 1;
/// scale = max/amax (IEEE divide); Inf -> FLT_MAX; optional power-of-two
/// truncation (bits &= 0xFF800000).
FUSION_RT_HDI float fp8_scale_from_amax(float amax, float max_elem, float eps,
                                        bool force_pow2, bool reciprocal = false) {
  float a = amax < eps ? eps : amax;
  if (f32_is_inf(a) || f32_is_nan(a) || a == 0.0f)
    return 1.0f;
  // reciprocal: torch's `max / amax` on an f32 tensor, (1 / a) * max.
  float scale = reciprocal ? x86_mul(x86_div(1.0f, a), max_elem) : max_elem / a;
  if (f32_is_inf(scale))
    scale = kF32Max;
  if (force_pow2)
    scale = bits_f32(f32_bits(scale) & 0xff800000u);
  return scale;
}

/// scale_inv written beside FP8 data: the correctly rounded 1/scale.
FUSION_RT_HDI float fp8_scale_inv(float scale) { return 1.0f / scale; }

//===--- FP8 block scaling (DeepSeek-V3, vLLM per-token-group) -------------===//
// s = max(amax, eps) / max_elem, optionally rounded up to a power of two
// (UE8M0); q = cvt_rn_satfinite(x / s); both divisions correctly rounded
// f32, with x86's NaN results (x86_div), as torch computes
// `amax.clamp(min=eps) / 448` and `(x / s).clamp(-448, 448).to(fp8)`.

/// The smallest power of two >= v for v >= 0 (exact, subnormals included):
/// 2^ceil(log2(v)) of real arithmetic; 0, Inf and NaN are returned as is,
/// and a v above 2^127 gives Inf.
FUSION_RT_HDI float pow2_roundup(float v) {
  const uint32_t u = f32_bits(v);
  const uint32_t e = (u >> 23) & 0xffu, m = u & 0x7fffffu;
  if (e == 0xffu || m == 0)
    return v; // Inf, NaN, zero, or a power of two already
  if (e != 0)
    return bits_f32((u & 0x80000000u) | ((e + 1u) << 23)); // 2^128 -> Inf
  // Subnormal: the next power of two of the mantissa (it may become
  // 0x00800000, the smallest normal).
  uint32_t p = 1u;
  while (p < m)
    p <<= 1;
  return bits_f32((u & 0x80000000u) | p);
}

/// The decode scale of one FP8 block from its amax (a NaN amax stays NaN).
FUSION_RT_HDI float fp8_block_scale(float amax, float max_elem, float eps,
                                    bool pow2) {
  const float a = amax < eps ? eps : amax;
  const float s = x86_div(a, max_elem);
  return pow2 ? pow2_roundup(s) : s;
}

} // namespace fusion_rt

#endif // FUSION_RT_COMMON_SCALE_H
