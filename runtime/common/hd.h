//===- hd.h - host/device portability macros for shared numerics -*- C++ -*-===//
//
// Included by every header in runtime/common/. The numerics there are compiled
// both by the host compiler (CPU backend, tests) and by nvcc (CUDA kernels), so
// they are header-only, use no std:: containers and take no exceptions.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_HD_H
#define FUSION_RT_COMMON_HD_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define FUSION_RT_HD __host__ __device__
#else
#define FUSION_RT_HD
#endif

/// Inline host/device function.
#define FUSION_RT_HDI FUSION_RT_HD inline

namespace fusion_rt {

/// The IEEE bits of an fp32 value (memcpy is the portable, optimisable form).
FUSION_RT_HDI uint32_t f32_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
#endif
}

/// The fp32 value of IEEE bits.
FUSION_RT_HDI float bits_f32(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
#endif
}

FUSION_RT_HDI bool f32_is_nan(float x) {
  return (f32_bits(x) & 0x7fffffffu) > 0x7f800000u;
}
FUSION_RT_HDI bool f32_is_inf(float x) {
  return (f32_bits(x) & 0x7fffffffu) == 0x7f800000u;
}
/// `x` with every NaN written as the positive quiet NaN 0x7FC00000: the NaN
/// an f32 sum produces differs between x86 (0xFFC00000 from Inf - Inf) and
/// CUDA (0x7FFFFFFF); outputs that are sums (dbias) go through this so that
/// both backends write the same bytes.
FUSION_RT_HDI float canonical_nan(float x) {
  return f32_is_nan(x) ? bits_f32(0x7fc00000u) : x;
}
/// |x| as an fp32 (clears the sign bit; NaN stays NaN).
FUSION_RT_HDI float f32_abs(float x) {
  return bits_f32(f32_bits(x) & 0x7fffffffu);
}

/// FLT_MAX, spelled without <cfloat> so that device code needs nothing else.
constexpr float kF32Max = 3.40282346638528859812e+38f;

} // namespace fusion_rt

#endif // FUSION_RT_COMMON_HD_H
