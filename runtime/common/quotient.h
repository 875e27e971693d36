//===- quotient.h - x / s from a reciprocal, correctly rounded ----*- C++ -*-===//
//
// The FP8 block codes are cvt(x / s) with an IEEE f32 division
// (common/quantize_block.h fp8_block_code). The CUDA stream kernels
// (cuda/fp8_block.cu) divide a whole block by one s, so they take r = RN(1/s)
// once and correct each product once:
//   q0 = RN(x * r),  e = fma(-q0, s, x),  q = RN(q0 + e * r).
// Markstein's theorem: with r within half an ulp of 1/s and q0 within an ulp
// of x/s, q = RN(x/s) whenever the remainder e is exact. For
// 2^-80 <= s <= 2^100 (quotient_by_reciprocal_ok) e is exact whenever
// |x / s| >= 2^-18; smaller quotients code to a zero in e4m3 and e5m2
// (both round everything below 2^-17 to zero), whose sign is x's: the
// result takes copysign(q, x). Tested against the division in
// runtime/test/fp8_block_test.cpp (QuotientByReciprocal).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_QUOTIENT_H
#define FUSION_RT_COMMON_QUOTIENT_H

#include "common/hd.h"
#include <math.h>

namespace fusion_rt {

/// True when quotient_by_reciprocal equals the division's FP8 code for
/// every x with |x| <= 448 * s (false for NaN).
FUSION_RT_HDI bool quotient_by_reciprocal_ok(float s) {
  return s >= 0x1p-80f && s <= 0x1p100f;
}

/// x / s (see the file comment) from r = RN(1/s), with x's sign.
FUSION_RT_HDI float quotient_by_reciprocal(float x, float s, float r) {
#if defined(__CUDA_ARCH__)
  const float q0 = __fmul_rn(x, r);
  const float e = __fmaf_rn(-q0, s, x);
  return copysignf(__fmaf_rn(e, r, q0), x);
#else
  const float q0 = x * r;
  const float e = fmaf(-q0, s, x);
  return copysignf(fmaf(e, r, q0), x);
#endif
}

} // namespace fusion_rt

#endif // FUSION_RT_COMMON_QUOTIENT_H
