//===- convert.h - element conversions shared by CPU and CUDA ----*- C++ -*-===//
//
// fp32 <-> bf16 / f16 / e4m3 / e5m2 / e2m1 and e8m0 -> fp32, bit for bit as
// the H200 / Blackwell conversion instructions produce them (research/kernels.md
// §1.3 and its errata):
//   - round to nearest even (stochastic rounding for e2m1 on request);
//   - e4m3 / e5m2 / e2m1 saturate to the largest finite value ("satfinite"),
//     Inf included; bf16 / f16 overflow to Inf;
//   - a NaN becomes 0x7F in e4m3 and in e5m2 whatever its sign, 0x7FFF in bf16
//     and f16, and 0x7 (+6, the largest value) in e2m1, which has no NaN;
//   - -0.0 stays -0.0 (0x80 / 0x8000 / 0x8).
// All integer arithmetic: no dependence on the floating-point environment.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_CONVERT_H
#define FUSION_RT_COMMON_CONVERT_H

#include "common/hd.h"

namespace fusion_rt {

/// Rounds the finite magnitude with fp32 bits `a` (sign cleared) to a small
/// float with `mbits` mantissa bits whose smallest normal exponent is `emin`
/// (unbiased); subnormals have unit 2^(emin-mbits). Returns the code without
/// the sign: (biased exponent << mbits) | mantissa, where the biased exponent
/// of 2^emin is 1. The code is not clamped: callers saturate or overflow.
/// With `stochastic`, rounds up with probability remainder/unit using the 32
/// random bits `rbits`; otherwise round to nearest, ties to even.
FUSION_RT_HDI uint32_t round_magnitude(uint32_t a, int mbits, int emin,
                                       bool stochastic = false,
                                       uint32_t rbits = 0) {
  int e = int(a >> 23) - 127;
  uint64_t m = a & 0x7fffffu;
  if (a >> 23)
    m |= 0x800000u;
  else
    e = -126; // fp32 subnormal: no implicit bit
  int shift = 23 - mbits;
  if (e < emin)
    shift += emin - e;
  if (shift > 63)
    return 0; // far below half the smallest subnormal in any mode we use
  uint64_t q = m >> shift;
  uint64_t rem = m & ((uint64_t(1) << shift) - 1);
  bool up;
  if (stochastic) {
    uint64_t r = shift <= 32 ? (uint64_t(rbits) & ((uint64_t(1) << shift) - 1))
                             : (uint64_t(rbits) << (shift - 32));
    up = ((rem + r) >> shift) != 0;
  } else {
    uint64_t half = uint64_t(1) << (shift - 1);
    up = rem > half || (rem == half && (q & 1));
  }
  q += up ? 1 : 0;
  if (e >= emin)
    return uint32_t((uint64_t(e - emin) << mbits) + q);
  return uint32_t(q);
}

//===--- bf16 -------------------------------------------------------------===//

FUSION_RT_HDI uint16_t f32_to_bf16(float x) {
  uint32_t u = f32_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return 0x7fff;
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
FUSION_RT_HDI float bf16_to_f32(uint16_t h) { return bits_f32(uint32_t(h) << 16); }

//===--- f16 --------------------------------------------------------------===//

FUSION_RT_HDI uint16_t f32_to_f16(float x) {
  uint32_t u = f32_bits(x);
  uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return 0x7fff;
  if (a == 0x7f800000u)
    return uint16_t(sign | 0x7c00u);
  uint32_t code = round_magnitude(a, 10, -14);
  if (code > 0x7bffu)
    code = 0x7c00u; // overflow rounds to Inf
  return uint16_t(sign | code);
}
FUSION_RT_HDI float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t be = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (be == 0x1f)
    return bits_f32(sign | 0x7f800000u | (m << 13));
  if (be == 0) // subnormal: m * 2^-24, exact in fp32
    return bits_f32(sign | f32_bits(float(m) * 5.9604644775390625e-8f));
  return bits_f32(sign | ((be + 112u) << 23) | (m << 13));
}

//===--- fp8 e4m3 (OCP e4m3fn) --------------------------------------------===//

FUSION_RT_HDI uint8_t f32_to_e4m3(float x) {
  uint32_t u = f32_bits(x);
  uint8_t sign = uint8_t((u >> 24) & 0x80u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return 0x7f;
  if (a >= 0x43e00000u) // |x| >= 448 (Inf included): satfinite
    return uint8_t(sign | 0x7eu);
  if (a >= 0x3c800000u) // normal result: RNE on the 20 dropped bits
    return uint8_t(sign | (((a + 0x7ffffu + ((a >> 20) & 1u)) >> 20) - (120u << 3)));
  uint32_t code = round_magnitude(a, 3, -6);
  if (code > 0x7eu) // (448, 464] rounds to 448 anyway; above would be NaN code
    code = 0x7eu;
  return uint8_t(sign | code);
}
FUSION_RT_HDI float e4m3_to_f32(uint8_t c) {
  uint32_t sign = uint32_t(c & 0x80u) << 24;
  uint32_t be = (c >> 3) & 0xfu, m = c & 7u;
  if (be == 0xf && m == 7)
    return bits_f32(0x7fc00000u | sign);
  if (be == 0) // m * 2^-9
    return bits_f32(sign | f32_bits(float(m) * 0.001953125f));
  return bits_f32(sign | ((be + 120u) << 23) | (m << 20));
}

//===--- fp8 e5m2 ---------------------------------------------------------===//

FUSION_RT_HDI uint8_t f32_to_e5m2(float x) {
  uint32_t u = f32_bits(x);
  uint8_t sign = uint8_t((u >> 24) & 0x80u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return 0x7f;
  if (a >= 0x47600000u) // |x| >= 57344 (Inf included): satfinite
    return uint8_t(sign | 0x7bu);
  if (a >= 0x38800000u) // normal result: RNE on the 21 dropped bits
    return uint8_t(sign | (((a + 0xfffffu + ((a >> 21) & 1u)) >> 21) - (112u << 2)));
  uint32_t code = round_magnitude(a, 2, -14);
  if (code > 0x7bu) // >= 61440 saturates to 57344
    code = 0x7bu;
  return uint8_t(sign | code);
}
FUSION_RT_HDI float e5m2_to_f32(uint8_t c) {
  // e5m2 is the upper byte of an f16.
  return f16_to_f32(uint16_t(uint16_t(c) << 8));
}

//===--- fp4 e2m1 ---------------------------------------------------------===//

/// fp32 -> e2m1 nibble (0..15) through round_magnitude; `stochastic` rounds
/// with the 32 bits `rbits`. NaN -> 0x7 (no NaN in e2m1: the largest
/// positive value); |x| >= 6 (Inf included) saturates.
FUSION_RT_HDI uint8_t f32_to_e2m1_by_rounding(float x, bool stochastic,
                                              uint32_t rbits) {
  uint32_t u = f32_bits(x);
  uint8_t sign = uint8_t((u >> 28) & 0x8u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return 0x7;
  if (a >= 0x40c00000u) // |x| >= 6 (Inf included): satfinite
    return uint8_t(sign | 0x7u);
  uint32_t code = round_magnitude(a, 1, 0, stochastic, rbits);
  if (code > 0x7u)
    code = 0x7u;
  return uint8_t(sign | code);
}

/// The same conversion with round to nearest even, as seven comparisons of
/// the magnitude's bits with the midpoints 0.25, 0.75, 1.25, 1.75, 2.5, 3.5
/// and 5 (a tie goes to the even code: strict above a midpoint whose lower
/// neighbour is even, inclusive where the upper one is). Equal to
/// f32_to_e2m1_by_rounding(x, false, 0) for every input (conversions_test).
FUSION_RT_HDI uint8_t f32_to_e2m1_rne(float x) {
  const uint32_t u = f32_bits(x);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return 0x7;
  const uint32_t code = uint32_t(a > 0x3e800000u) + uint32_t(a >= 0x3f400000u) +
                        uint32_t(a > 0x3fa00000u) + uint32_t(a >= 0x3fe00000u) +
                        uint32_t(a > 0x40200000u) + uint32_t(a >= 0x40600000u) +
                        uint32_t(a > 0x40a00000u);
  return uint8_t(((u >> 28) & 0x8u) | code);
}

/// The code f32_to_e2m1_rne(y) of a y that is not NaN, from |y| = `ay` and
/// the sign bit `sign8` (0 or 8), by one rounding addition: |y| (clamped to
/// 8, which saturates as every larger value does) plus C = 1.5 * 2^(22+k),
/// k = max(exponent of |y|, 0), is rounded once, to nearest even, to a
/// multiple of C's ulp, which is the e2m1 step of |y|'s binade (0.5 below
/// 2, then 1, 2; 4 at 8); the ulps above C count the code within the binade
/// (plus 2k), so the code is that count, saturated at 7. About half the
/// instructions of the comparison form; equal to it for every non-NaN
/// input (conversions_test).
FUSION_RT_HDI uint8_t e2m1_rne_of_magnitude(float ay, uint32_t sign8) {
  const float y = ay < 8.f ? ay : 8.f;
  const uint32_t yb = f32_bits(y) & 0x7f800000u;
  const uint32_t e = yb > 0x3f800000u ? yb : 0x3f800000u; // 2^k
  // bits(y + C) - bits(C) + 2k, with bits(C) = e + 0x0b400000 and
  // 2k = (e >> 22) - 0xfe (the form folds into two integer adds).
  const uint32_t n = f32_bits(y + bits_f32(e + 0x0b400000u)) - e +
                     ((e >> 22) - 0x0b4000feu);
  return uint8_t(sign8 | (n < 7u ? n : 7u));
}

/// fp32 -> e2m1 nibble (0..15). `stochastic` rounds with the 32 bits `rbits`.
FUSION_RT_HDI uint8_t f32_to_e2m1(float x, bool stochastic = false,
                                  uint32_t rbits = 0) {
  return stochastic ? f32_to_e2m1_by_rounding(x, true, rbits) : f32_to_e2m1_rne(x);
}
FUSION_RT_HDI float e2m1_to_f32(uint8_t nibble) {
  uint32_t m = nibble & 7u;
  // 0, 0.5, 1, 1.5, 2, 3, 4, 6 as exact small integers / 2.
  uint32_t twice = m < 4 ? m : ((2u + (m & 1u)) << ((m >> 1) - 1u)); // 4,6,8,12
  float v = float(twice) * 0.5f;
  return (nibble & 8u) ? -v : v;
}

//===--- e8m0 -------------------------------------------------------------===//

/// e8m0 byte -> 2^(b-127); b = 0 is the fp32 subnormal 2^-127, 255 is NaN.
FUSION_RT_HDI float e8m0_to_f32(uint8_t b) {
  if (b == 255)
    return bits_f32(0x7fc00000u);
  if (b == 0)
    return bits_f32(0x00400000u);
  return bits_f32(uint32_t(b) << 23);
}

//===--- intermediate rounding --------------------------------------------===//

/// Element types the activation result can be rounded to; values equal
/// FUSION_RT_BF16 / F16 / F32 of fusion_rt.h.
enum IntermediateType : int32_t { kInterBF16 = 0, kInterF16 = 1, kInterF32 = 2 };

/// x rounded to `type` and widened back to fp32 (what a store to that type
/// followed by a load gives).
FUSION_RT_HDI float round_to_intermediate(float x, int32_t type) {
  if (type == kInterBF16)
    return bf16_to_f32(f32_to_bf16(x));
  if (type == kInterF16)
    return f16_to_f32(f32_to_f16(x));
  return x;
}

} // namespace fusion_rt

#endif // FUSION_RT_COMMON_CONVERT_H
