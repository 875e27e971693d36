//===- apfloat_test.cpp - conversions checked against LLVM APFloat --------===//
//
// Every element conversion of runtime/common/ against llvm::APFloat: all
// 65536 bf16 patterns, and a dense fp32 sample that contains every boundary
// (each representable value of the target format and each midpoint, +-2 ulp,
// at every binade), the special values and 2^18 random patterns.
// APFloat has no "satfinite": where it overflows (to NaN or Inf) the contract
// saturates to the largest finite value, and where the input is NaN the
// contract's canonical NaN codes apply (0x7F for e4m3 and e5m2, 0x7FFF for
// bf16 and f16, +6 for e2m1).
//
//===----------------------------------------------------------------------===//
#include "common/convert.h"
#include "common/scale.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace fusion_rt;
using llvm::APFloat;
using llvm::APInt;

namespace {

struct Conv {
  uint64_t bits;
  APFloat::opStatus status;
  bool nan;
};

Conv apf_from_f32(uint32_t u, const llvm::fltSemantics &to,
                  APFloat::roundingMode rm = APFloat::rmNearestTiesToEven) {
  APFloat f(APFloat::IEEEsingle(), APInt(32, u));
  bool loses = false;
  APFloat::opStatus st = f.convert(to, rm, &loses);
  return {f.bitcastToAPInt().getZExtValue(), st, f.isNaN()};
}

float apf_to_f32(uint64_t code, unsigned width, const llvm::fltSemantics &from) {
  APFloat f(from, APInt(width, code));
  bool loses = false;
  f.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &loses);
  return bits_f32(uint32_t(f.bitcastToAPInt().getZExtValue()));
}

bool is_nan_bits(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

/// Expected e4m3 / e5m2 / e2m1 code for the fp32 pattern u.
uint32_t expect_small(uint32_t u, const llvm::fltSemantics &sem,
                      uint32_t sat_code, uint32_t sign_bit, uint32_t nan_code) {
  if (is_nan_bits(u))
    return nan_code;
  const uint32_t sign = (u >> 31) ? sign_bit : 0;
  if ((u & 0x7fffffffu) == 0x7f800000u)
    return sign | sat_code;
  Conv c = apf_from_f32(u, sem);
  if (c.nan || (c.status & APFloat::opOverflow))
    return sign | sat_code;
  return uint32_t(c.bits);
}

/// Dense fp32 sample: every binade's boundaries for a format with `mbits`
/// mantissa bits (each grid point and midpoint, +-2 ulp), specials, random.
std::vector<uint32_t> dense_sample(int mbits, uint32_t e_lo = 0,
                                   uint32_t e_hi = 254) {
  std::vector<uint32_t> out;
  const uint32_t specials[] = {0u,          0x80000000u, 0x7f800000u, 0xff800000u,
                               0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7f7fffffu,
                               0x00000001u, 0x00400000u, 0x00800000u, 0x80000001u};
  for (uint32_t s : specials)
    out.push_back(s);
  // Grid of the target's mantissa at every fp32 exponent, plus midpoints.
  const int step_bits = 23 - mbits - 1; // midpoints between grid points
  for (uint32_t e = e_lo; e <= e_hi; ++e)
    for (uint32_t k = 0; k < (2u << mbits); ++k) {
      uint32_t base = (e << 23) | (k << step_bits);
      for (int d = -2; d <= 2; ++d) {
        uint32_t u = base + uint32_t(d);
        if ((u & 0x7fffffffu) > 0x7f800000u)
          continue;
        out.push_back(u);
        out.push_back(u | 0x80000000u);
      }
    }
  std::mt19937 rng(42);
  for (int i = 0; i < (1 << 18); ++i)
    out.push_back(rng());
  return out;
}

std::vector<uint32_t> all_bf16_as_f32() {
  std::vector<uint32_t> out;
  for (uint32_t h = 0; h < 65536; ++h)
    out.push_back(h << 16);
  return out;
}

} // namespace

TEST(APFloat, Bf16ToF32AllPatterns) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float ours = bf16_to_f32(uint16_t(h));
    float ref = apf_to_f32(h, 16, APFloat::BFloat());
    if (is_nan_bits(h << 16))
      ASSERT_TRUE(ours != ours) << h;
    else
      ASSERT_EQ(f32_bits(ours), f32_bits(ref)) << "bf16 0x" << std::hex << h;
  }
}

TEST(APFloat, F16ToF32AllPatterns) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float ours = f16_to_f32(uint16_t(h));
    float ref = apf_to_f32(h, 16, APFloat::IEEEhalf());
    if ((h & 0x7fff) > 0x7c00)
      ASSERT_TRUE(ours != ours) << h;
    else
      ASSERT_EQ(f32_bits(ours), f32_bits(ref)) << "f16 0x" << std::hex << h;
  }
}

TEST(APFloat, SmallFormatsToF32AllCodes) {
  for (uint32_t c = 0; c < 256; ++c) {
    float e43 = e4m3_to_f32(uint8_t(c));
    if ((c & 0x7f) == 0x7f)
      EXPECT_TRUE(e43 != e43) << c;
    else
      EXPECT_EQ(f32_bits(e43),
                f32_bits(apf_to_f32(c, 8, APFloat::Float8E4M3FN())))
          << "e4m3 " << c;
    float e52 = e5m2_to_f32(uint8_t(c));
    if ((c & 0x7f) > 0x7c)
      EXPECT_TRUE(e52 != e52) << c;
    else
      EXPECT_EQ(f32_bits(e52), f32_bits(apf_to_f32(c, 8, APFloat::Float8E5M2())))
          << "e5m2 " << c;
    float e80 = e8m0_to_f32(uint8_t(c));
    if (c == 255)
      EXPECT_TRUE(e80 != e80);
    else
      EXPECT_EQ(f32_bits(e80),
                f32_bits(apf_to_f32(c, 8, APFloat::Float8E8M0FNU())))
          << "e8m0 " << c;
  }
  for (uint32_t c = 0; c < 16; ++c)
    EXPECT_EQ(f32_bits(e2m1_to_f32(uint8_t(c))),
              f32_bits(apf_to_f32(c, 4, APFloat::Float4E2M1FN())))
        << "e2m1 " << c;
}

namespace {
void check_narrowing(const std::vector<uint32_t> &sample) {
  size_t n = 0;
  for (uint32_t u : sample) {
    const float x = bits_f32(u);
    ASSERT_EQ(f32_to_e4m3(x),
              expect_small(u, APFloat::Float8E4M3FN(), 0x7e, 0x80, 0x7f))
        << "e4m3 of 0x" << std::hex << u;
    ASSERT_EQ(f32_to_e5m2(x),
              expect_small(u, APFloat::Float8E5M2(), 0x7b, 0x80, 0x7f))
        << "e5m2 of 0x" << std::hex << u;
    ASSERT_EQ(f32_to_e2m1(x),
              expect_small(u, APFloat::Float4E2M1FN(), 0x7, 0x8, 0x7))
        << "e2m1 of 0x" << std::hex << u;
    // bf16 and f16 overflow to Inf (APFloat does too); NaN -> 0x7FFF.
    uint32_t bf = is_nan_bits(u) ? 0x7fffu
                                 : uint32_t(apf_from_f32(u, APFloat::BFloat()).bits);
    ASSERT_EQ(f32_to_bf16(x), bf) << "bf16 of 0x" << std::hex << u;
    uint32_t hf = is_nan_bits(u)
                      ? 0x7fffu
                      : uint32_t(apf_from_f32(u, APFloat::IEEEhalf()).bits);
    ASSERT_EQ(f32_to_f16(x), hf) << "f16 of 0x" << std::hex << u;
    ++n;
  }
  EXPECT_EQ(n, sample.size());
}
} // namespace

TEST(APFloat, NarrowingAllBf16Patterns) { check_narrowing(all_bf16_as_f32()); }

TEST(APFloat, NarrowingDenseF32SampleE4M3Grid) { check_narrowing(dense_sample(3)); }

TEST(APFloat, NarrowingDenseF32SampleE5M2Grid) { check_narrowing(dense_sample(2)); }

TEST(APFloat, NarrowingDenseF32SampleE2M1Grid) { check_narrowing(dense_sample(1)); }

TEST(APFloat, NarrowingDenseF32SampleHalfGrid) {
  // f16 and bf16 boundaries: mantissa grids of 10 and 7 bits.
  check_narrowing(dense_sample(10, 127 - 26, 127 + 16));
  check_narrowing(dense_sample(7));
}

// roundup_e8m0 (RCEIL) is APFloat's round-toward-positive conversion to
// e8m0 for every positive finite value up to 2^127; FLOOR's E(amax) is
// round-toward-zero.
TEST(APFloat, E8M0RoundUpAndFloor) {
  std::vector<uint32_t> sample = dense_sample(0);
  for (uint32_t h = 0; h < 65536; ++h)
    sample.push_back(h << 16);
  size_t checked = 0;
  for (uint32_t u : sample) {
    u &= 0x7fffffffu;
    if (u == 0 || u >= 0x7f800000u)
      continue;
    const float v = bits_f32(u);
    if (u <= 0x7f000000u) { // v <= 2^127: representable range of e8m0
      Conv up = apf_from_f32(u, APFloat::Float8E8M0FNU(), APFloat::rmTowardPositive);
      ASSERT_EQ(e8m0_roundup(v, true), up.bits) << "0x" << std::hex << u;
      ASSERT_EQ(e8m0_roundup(v, false), up.bits) << "0x" << std::hex << u;
      ++checked;
    } else {
      EXPECT_EQ(e8m0_roundup(v, true), 254);
      EXPECT_EQ(e8m0_roundup(v, false), 255);
    }
    if (u >= 0x00800000u) { // normal: E(v) is round-toward-zero to e8m0
      Conv dn = apf_from_f32(u, APFloat::Float8E8M0FNU(), APFloat::rmTowardZero);
      int p = mx_floor_p(kMXFP8E4M3);
      uint32_t expect = dn.bits > uint32_t(p) ? uint32_t(dn.bits) - p : 0;
      ASSERT_EQ(mx_scale_byte(v, false, kMXFP8E4M3, 1, true), expect)
          << "0x" << std::hex << u;
    }
  }
  EXPECT_GT(checked, size_t(300000));
}
