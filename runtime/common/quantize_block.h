//===- quantize_block.h - one block's scale and codes (CPU + CUDA) -*- C++ -*-===//
//
// The per-block decisions of every format, shared by the CPU backend and
// the CUDA backend's format-general kernels (runtime/cuda/formats.cu), so
// that both compute each scale byte and each code with the same function:
//   tensor_globals   NVFP4 global scales / FP8 per-tensor scale from the
//                    tensor amax (or the given delayed scale);
//   block_scale      MX scale byte and element multiplier, NVFP4 e4m3 scale
//                    and encode factor, from a block's NaN-ignoring amax;
//   encode_element   the code (byte, or e2m1 nibble) of one element, with the
//                    keyed stochastic rounding of the FP4 formats.
// The hot MXFP8 kernels (mx_kernel.cuh) restate the MXFP8 part with PTX
// conversions and are checked against this code by the GPU tests.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_QUANTIZE_BLOCK_H
#define FUSION_RT_COMMON_QUANTIZE_BLOCK_H

#include "common/rng.h"
#include "common/scale.h"
#include "fusion_rt.h"

namespace fusion_rt {

FUSION_RT_HDI bool is_mx_format(int32_t f) { return f <= kMXFP4; }
FUSION_RT_HDI bool is_fp8_tensor_format(int32_t f) {
  return f == kFP8E4M3 || f == kFP8E5M2;
}
/// FP8 with one f32 scale per block (fusion_rt_quant_scheme.block_cols).
FUSION_RT_HDI bool is_fp8_block_format(int32_t f) {
  return f == kFP8BlockE4M3 || f == kFP8BlockE5M2;
}
FUSION_RT_HDI bool is_fp4_format(int32_t f) { return f == kMXFP4 || f == kNVFP4; }
/// Elements per scale block along the quantized dimension (MX, NVFP4; the
/// FP8 block formats take theirs from the scheme: scheme_block).
FUSION_RT_HDI int64_t format_block(int32_t f) { return f == kNVFP4 ? 16 : 32; }
FUSION_RT_HDI int64_t scheme_block(const fusion_rt_quant_scheme &s) {
  return is_fp8_block_format(s.format) ? int64_t(s.block_cols)
                                       : format_block(s.format);
}

/// A block amax that keeps a NaN under PROPAGATE (torch's amax): the FP8
/// block formats' amax is a value of the formula, not a NaN-ignoring one.
FUSION_RT_HDI float fp8_block_amax(const fusion_rt_quant_scheme &s,
                                   float amax, bool has_nan) {
  return has_nan && s.nan_policy == FUSION_RT_NAN_PROPAGATE
             ? bits_f32(0x7fc00000u)
             : amax;
}

/// The decode scale of an FP8 block of `s` from its NaN-ignoring amax.
FUSION_RT_HDI float fp8_block_scale_of(const fusion_rt_quant_scheme &s,
                                       float amax, bool has_nan) {
  return fp8_block_scale(fp8_block_amax(s, amax, has_nan),
                         s.format == kFP8BlockE4M3 ? kE4M3Max : kE5M2Max,
                         s.amax_epsilon, s.force_pow2_scale != 0);
}

/// The scales of one FP8 block: `dec`, the f32 scale written (the decode
/// scale, x ~ code * dec; under the MULTIPLIER recipe the multiplier enc
/// itself, x ~ code / dec), and under the MULTIPLY and MULTIPLIER recipes
/// `enc`, the factor the codes are taken of (codes of x * enc; MULTIPLY
/// writes dec = 1 / enc); enc = 0 under the default recipe (codes of
/// x / dec). TE's scale is never 0, a NaN one is not 0.
struct Fp8BlockScales {
  float dec, enc;
};

FUSION_RT_HDI Fp8BlockScales fp8_block_scales_of(const fusion_rt_quant_scheme &s,
                                                 float amax, bool has_nan) {
  const bool multiplier = s.nvfp4_recipe == FUSION_RT_NVFP4_RECIPE_MULTIPLIER;
  if (s.nvfp4_recipe != FUSION_RT_NVFP4_RECIPE_MULTIPLY && !multiplier)
    return {fp8_block_scale_of(s, amax, has_nan), 0.f};
  const float a = fp8_block_amax(s, amax, has_nan);
  const float enc =
      f32_is_nan(a) ? a
                    : fp8_scale_from_amax(
                          a, s.format == kFP8BlockE4M3 ? kE4M3Max : kE5M2Max,
                          s.amax_epsilon, s.force_pow2_scale != 0);
  return {multiplier ? enc : x86_div(1.0f, enc), enc};
}

/// The code of x in an FP8 block of scales `sc`.
FUSION_RT_HDI uint8_t fp8_block_code(int32_t f, float x, Fp8BlockScales sc) {
  const float v = sc.enc != 0.f ? x86_mul(x, sc.enc) : x86_div(x, sc.dec);
  return f == kFP8BlockE4M3 ? f32_to_e4m3(v) : f32_to_e5m2(v);
}

/// A NaN-ignoring amax that records NaNs.
struct BlockAmax {
  float amax = 0.f;
  bool nan = false;
  FUSION_RT_HDI void add(float x) {
    float a = f32_abs(x);
    amax = a > amax ? a : amax; // NaN compares false: dropped
    nan = nan || a != a;
  }
  /// Non-finite content that the PROPAGATE policy turns into a NaN block.
  FUSION_RT_HDI bool nonfinite() const { return nan || f32_is_inf(amax); }
};

/// Tensor-wide quantities fixed before the quantize pass.
struct TensorGlobals {
  float nv_s_enc = 1.f, nv_s_dec = 1.f, nv_factor = 0.f; ///< NVFP4 (TE)
  float ao_pts = 1.f; ///< NVFP4 torchao recipes: the per-tensor scale
  float fp8_scale = 1.f;                                 ///< FP8 per tensor
};

/// The globals of `s` from the NaN-ignoring tensor amax; `delayed_scale` is
/// the given scale of FP8 delayed scaling (read only then).
FUSION_RT_HDI TensorGlobals tensor_globals(const fusion_rt_quant_scheme &s,
                                           float tensor_amax,
                                           const float *delayed_scale) {
  TensorGlobals g;
  if (s.format == kNVFP4 && s.nvfp4_recipe != FUSION_RT_NVFP4_RECIPE_TE) {
    g.ao_pts = s.nvfp4_recipe == FUSION_RT_NVFP4_RECIPE_TORCHAO
                   ? nvfp4_torchao_tensor_scale(tensor_amax)
                   : 1.0f;
  } else if (s.format == kNVFP4) {
    g.nv_s_enc = nvfp4_global_encode_scale(tensor_amax);
    g.nv_s_dec = nvfp4_global_decode_scale(g.nv_s_enc);
    g.nv_factor = nvfp4_block_scale_factor(g.nv_s_enc);
  } else if (is_fp8_tensor_format(s.format)) {
    const float mx = s.format == kFP8E4M3 ? kE4M3Max : kE5M2Max;
    g.fp8_scale = s.tensor_scaling == FUSION_RT_TENSOR_SCALING_CURRENT
                      ? fp8_scale_from_amax(
                            tensor_amax, mx, s.amax_epsilon,
                            s.force_pow2_scale != 0,
                            s.nvfp4_recipe == FUSION_RT_NVFP4_RECIPE_RECIPROCAL)
                      : *delayed_scale;
  }
  return g;
}

/// The scale_inv output of the NVFP4 / FP8 per-tensor formats.
FUSION_RT_HDI float tensor_scale_inv(const fusion_rt_quant_scheme &s,
                                     const TensorGlobals &g) {
  if (s.format == kNVFP4)
    return s.nvfp4_recipe != FUSION_RT_NVFP4_RECIPE_TE ? g.ao_pts : g.nv_s_dec;
  return fp8_scale_inv(g.fp8_scale);
}

/// Scale of one block (MX, NVFP4) from its amax: returns the scale byte and
/// sets `mul`, the factor every element is multiplied by before encoding
/// (MX: r(b), or the zero_scale policy's factor for b = 0; NVFP4: the encode
/// factor).
FUSION_RT_HDI uint8_t block_scale(const fusion_rt_quant_scheme &s,
                                  const TensorGlobals &g, const BlockAmax &a,
                                  float &mul) {
  const int32_t f = s.format;
  const bool propagate = s.nan_policy == FUSION_RT_NAN_PROPAGATE;
  if (is_mx_format(f)) {
    uint8_t b = mx_scale_byte(a.amax, a.nan, f, s.scale_rounding, propagate);
    mul = mx_reciprocal(b);
    if (b == 0 && s.zero_scale == FUSION_RT_ZERO_SCALE_ONE)
      mul = 1.0f;
    else if (b == 0 && s.zero_scale == FUSION_RT_ZERO_SCALE_MIN_NORMAL)
      mul = 0x1p126f;
    return b;
  }
  if (s.nvfp4_recipe != FUSION_RT_NVFP4_RECIPE_TE) {
    // torchao: torch.amax passes a NaN on (as a positive NaN after abs);
    // an Inf is an amax like any other. IGNORE: NaN-ignoring amaxes, and a
    // NaN scale or product clamps to the lower bound (torch-mlir's clamp).
    const uint8_t sc =
        (propagate && a.nan)
            ? uint8_t(0x7f)
            : nvfp4_torchao_block_scale(a.amax, g.ao_pts, !propagate);
    mul = nvfp4_torchao_encode_factor(sc, g.ao_pts);
    return sc;
  }
  // NVFP4: PROPAGATE marks a block holding NaN or Inf with a NaN scale.
  uint8_t sc = (propagate && a.nonfinite()) ? uint8_t(0x7f)
                                            : nvfp4_block_scale(a.amax, g.nv_factor);
  mul = nvfp4_encode_factor(sc, g.nv_s_dec);
  return sc;
}

/// The code of element `index` of copy `stream` (0 rowwise: r*N + c;
/// 1 colwise: c*M + r) with block factor `mul`. FP8 per tensor passes the
/// tensor scale as `mul`.
FUSION_RT_HDI uint8_t encode_element(const fusion_rt_quant_scheme &s, float x,
                                     float mul, uint32_t stream, uint64_t index) {
  const int32_t f = s.format;
  if (f == kMXFP8E4M3 || f == kFP8E4M3)
    return f32_to_e4m3(x * mul);
  if (f == kMXFP8E5M2 || f == kFP8E5M2)
    return f32_to_e5m2(x * mul);
  if (f == kNVFP4 && s.nvfp4_recipe != FUSION_RT_NVFP4_RECIPE_TE)
    return nvfp4_torchao_code(x, mul, s.nan_policy == FUSION_RT_NAN_IGNORE);
  const bool sr = s.elem_rounding == FUSION_RT_ROUND_STOCHASTIC;
  uint32_t bits = sr ? stochastic_bits(s.seed, s.offset, stream, index) : 0;
  return f32_to_e2m1(x * mul, sr, bits);
}

/// Decodes a code of data type `dtype` (F8E4M3, F8E5M2, F4E2M1 nibble).
FUSION_RT_HDI float decode_code(uint8_t code, int32_t dtype) {
  if (dtype == FUSION_RT_F8E4M3)
    return e4m3_to_f32(code);
  if (dtype == FUSION_RT_F8E5M2)
    return e5m2_to_f32(code);
  return e2m1_to_f32(code);
}

/// The dequantized value of code value `v` under block scale byte `sb`
/// (MX, NVFP4) or the tensor's `scale_inv` (FP8 per tensor; NVFP4's S_dec;
/// FP8 block: the block's f32 scale).
/// A NaN result is the positive quiet NaN 0x7FC00000 on every backend (a
/// product with a NaN operand keeps that operand's bits on x86 and is
/// 0x7FFFFFFF on CUDA).
FUSION_RT_HDI float dequantize_value(const fusion_rt_quant_scheme &s, float v,
                                     uint8_t sb, float scale_inv) {
  const int32_t f = s.format;
  float x;
  if (is_fp8_block_format(f) &&
      s.nvfp4_recipe == FUSION_RT_NVFP4_RECIPE_MULTIPLIER)
    x = x86_div(v, scale_inv); // the block's multiplier
  else if (is_fp8_tensor_format(f) || is_fp8_block_format(f))
    x = v * scale_inv; // FP8 block: the block's decode scale
  else if (f == kNVFP4)
    x = v * e4m3_to_f32(sb) * scale_inv;
  else if (sb == 0 && s.zero_scale == FUSION_RT_ZERO_SCALE_ONE)
    x = v; // The block was scaled by 1.0.
  else if (sb == 0 && s.zero_scale == FUSION_RT_ZERO_SCALE_MIN_NORMAL)
    x = v * 0x1p-126f;
  else
    x = v * e8m0_to_f32(sb);
  return canonical_nan(x);
}

} // namespace fusion_rt

#endif // FUSION_RT_COMMON_QUANTIZE_BLOCK_H
