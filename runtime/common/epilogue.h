//===- epilogue.h - paired-projection epilogues shared by CPU and CUDA -*- C++ -*-===//
//
// The elementwise epilogues of fusion_rt_paired_projection_run, applied in
// fp32 to the fp32 accumulation y of one output element. Both backends call
// these functions, so the two differ only in the accumulation order of y
// (docs/paired-projections.md) and, for the transcendental kinds, in the
// libm (glibc vs CUDA) results of expf / log1pf (one ulp at most).
//
// Formulas (b = bias[n] when given, otherwise no add; s = scale[n] when
// given, otherwise no multiply):
//   NONE                  y
//   BIAS                  y + b
//   SIGMOID               sigmoid(y + b) * s      = 1 / (1 + expf(-(y + b)))
//   SILU                  silu(y + b) * s         = t * sigmoid(t)
//   SOFTPLUS_BIAS_SCALE   softplus(y + b) * s     softplus as torch's
//                         F.softplus(beta=1, threshold=20):
//                         t > 20 ? t : log1pf(expf(t))
//   SOFTPLUS_LOG_BIAS_SCALE                       the same, written
//                         t > 20 ? t : logf(1 + expf(t)) (vLLM's reference)
//   SOFTPLUS_STABLE_BIAS_SCALE                    the overflow-safe form,
//                         no threshold: m + log1pf(expf(-|t|)), m = max(t, 0)
//                         (t > 0 ? t : 0), and m where |m| is Inf
//                         (torch.logaddexp(t, 0), JAX's softplus)
// Gated pairs: out = gated_forward(kind, y0 + b0, y1 + b1) (activation.h).
// With an accumulator rounding, y + b above reads round(y) + b, or
// round(y + b) for the _AFTER_BIAS modes (biased_accumulator).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_EPILOGUE_H
#define FUSION_RT_COMMON_EPILOGUE_H

#include "common/activation.h"
#include "common/convert.h"
#include "common/hd.h"
#include <math.h>

namespace fusion_rt {

/// Epilogue kinds; values equal fusion_rt_epilogue_kind of fusion_rt.h.
enum EpilogueKind : int32_t {
  kEpiNone = FUSION_RT_EPILOGUE_NONE,
  kEpiBias = FUSION_RT_EPILOGUE_BIAS,
  kEpiSigmoid = FUSION_RT_EPILOGUE_SIGMOID,
  kEpiSilu = FUSION_RT_EPILOGUE_SILU,
  kEpiSoftplusBiasScale = FUSION_RT_EPILOGUE_SOFTPLUS_BIAS_SCALE,
  kEpiSoftplusLogBiasScale = FUSION_RT_EPILOGUE_SOFTPLUS_LOG_BIAS_SCALE,
  kEpiSoftplusStableBiasScale = FUSION_RT_EPILOGUE_SOFTPLUS_STABLE_BIAS_SCALE
};

/// Rounding of the accumulator before the epilogue; values equal
/// fusion_rt_accumulator_round of fusion_rt.h.
enum AccRound : int32_t {
  kRoundNone = 0,
  kRoundBf16 = 1,
  kRoundF16 = 2,
  kRoundBf16AfterBias = 3,
  kRoundF16AfterBias = 4
};

/// `y` rounded to bf16 / f16 (nearest even, NaN kept) and widened back, as a
/// bf16 / f16 Linear's output is before the epilogue reads it (the
/// _AFTER_BIAS modes round the same way; the bias is the caller's).
FUSION_RT_HDI float round_accumulator(int32_t mode, float y) {
  return round_to_intermediate(
      y, mode == kRoundBf16 || mode == kRoundBf16AfterBias  ? kInterBF16
         : mode == kRoundF16 || mode == kRoundF16AfterBias ? kInterF16
                                                           : kInterF32);
}

/// The value an epilogue (or a gated activation) reads of the accumulator
/// `y` and the column's bias `b` (when `has_bias`): round(y) + b, or
/// round(y + b) for the _AFTER_BIAS modes (a Linear with bias=True).
FUSION_RT_HDI float biased_accumulator(int32_t mode, float y, bool has_bias,
                                       float b) {
  if (mode == kRoundBf16AfterBias || mode == kRoundF16AfterBias)
    return round_accumulator(mode, has_bias ? y + b : y);
  const float r = round_accumulator(mode, y);
  return has_bias ? r + b : r;
}

/// Applies epilogue `kind` to `t`, the accumulator with its bias and
/// rounding (biased_accumulator); `s` is the output column's scale (ignored
/// unless has_scale).
FUSION_RT_HDI float apply_epilogue(int32_t kind, float t, bool has_scale,
                                   float s) {
  if (kind == kEpiNone || kind == kEpiBias)
    return t;
  // One expf serves the five kinds (less code in the kernels that inline
  // this), each exactly as the header's formulas: act_sigmoid(t) =
  // 1 / (1 + e^-t), act_silu(t) = t * act_sigmoid(t), torch's softplus
  // (beta 1, threshold 20: linear above it; NaN propagates through
  // log1pf(expf(NaN))) = log1p(e^t) up to 20, or log(1 + e^t) as written,
  // and the overflow-safe m + log1p(e^-|t|) (NaN: m = 0, e = NaN).
  const bool stable = kind == kEpiSoftplusStableBiasScale;
  const bool softplus = stable || kind == kEpiSoftplusBiasScale ||
                        kind == kEpiSoftplusLogBiasScale;
  const float e = expf(stable ? -fabsf(t) : softplus ? t : -t);
  if (softplus) {
    const float m = t > 0.f ? t : 0.f;
    const float sp = stable     ? (m == INFINITY ? m : m + log1pf(e))
                     : t > 20.f ? t
                     : kind == kEpiSoftplusBiasScale ? log1pf(e)
                                                     : logf(1.f + e);
    return has_scale ? sp * s : sp;
  }
  const float sig = 1.f / (1.f + e);
  const float r = kind == kEpiSilu ? t * sig : sig;
  return has_scale ? r * s : r;
}

} // namespace fusion_rt

#endif // FUSION_RT_COMMON_EPILOGUE_H
