//===- conversions_test.cpp - conversions without LLVM --------------------===//
//
// Hand-checked values and round trips of runtime/common/convert.h and
// scale.h. The exhaustive comparison against APFloat is apfloat_test.cpp.
//
//===----------------------------------------------------------------------===//
#include "common/convert.h"
#include "common/scale.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace fusion_rt;

TEST(Conversions, E4M3HandValues) {
  EXPECT_EQ(f32_to_e4m3(448.f), 0x7e);
  EXPECT_EQ(f32_to_e4m3(464.f), 0x7e);  // tie to even (448)
  EXPECT_EQ(f32_to_e4m3(1e30f), 0x7e);  // satfinite
  EXPECT_EQ(f32_to_e4m3(-INFINITY), 0xfe);
  EXPECT_EQ(f32_to_e4m3(std::ldexp(1.f, -10)), 0x00); // tie to even (0)
  EXPECT_EQ(f32_to_e4m3(std::nextafter(std::ldexp(1.f, -10), 1.f)), 0x01);
  EXPECT_EQ(f32_to_e4m3(std::ldexp(1.f, -9)), 0x01);
  EXPECT_EQ(f32_to_e4m3(std::ldexp(1.f, -6)), 0x08);
  EXPECT_EQ(f32_to_e4m3(-0.f), 0x80);
  EXPECT_EQ(f32_to_e4m3(std::numeric_limits<float>::quiet_NaN()), 0x7f);
  EXPECT_EQ(f32_to_e4m3(-std::numeric_limits<float>::quiet_NaN()), 0x7f);
  EXPECT_EQ(f32_to_e4m3(1.f), 0x38);
  EXPECT_EQ(f32_to_e4m3(1.0625f), 0x38); // tie to even
  EXPECT_EQ(f32_to_e4m3(1.1875f), 0x3a); // tie to even (up)
}

TEST(Conversions, E5M2AndE2M1HandValues) {
  EXPECT_EQ(f32_to_e5m2(57344.f), 0x7b);
  EXPECT_EQ(f32_to_e5m2(61439.f), 0x7b);
  EXPECT_EQ(f32_to_e5m2(61440.f), 0x7b); // satfinite instead of Inf
  EXPECT_EQ(f32_to_e5m2(INFINITY), 0x7b);
  EXPECT_EQ(f32_to_e5m2(-INFINITY), 0xfb);
  EXPECT_EQ(f32_to_e5m2(std::ldexp(1.f, -16)), 0x01);
  EXPECT_EQ(f32_to_e5m2(-std::numeric_limits<float>::quiet_NaN()), 0x7f);
  EXPECT_EQ(f32_to_e2m1(6.f), 0x7);
  EXPECT_EQ(f32_to_e2m1(5.f), 0x6);   // tie between 4 and 6 -> 4 (even)
  EXPECT_EQ(f32_to_e2m1(0.25f), 0x0); // tie between 0 and 0.5 -> 0
  EXPECT_EQ(f32_to_e2m1(0.75f), 0x2); // tie between 0.5 and 1 -> 1
  EXPECT_EQ(f32_to_e2m1(-100.f), 0xf);
  EXPECT_EQ(f32_to_e2m1(-0.f), 0x8);
  EXPECT_EQ(f32_to_e2m1(std::numeric_limits<float>::quiet_NaN()), 0x7);
}

// The comparison form of the e2m1 RNE conversion (the one the CUDA kernels
// use) against round_magnitude: every 64th fp32 bit pattern (2^26 inputs,
// both signs, NaN and Inf included) and every pattern within 4096 ulps of
// each midpoint and of the saturation bound.
TEST(Conversions, E2m1ComparisonFormEqualsRounding) {
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 64) {
    const float x = bits_f32(uint32_t(u));
    ASSERT_EQ(f32_to_e2m1_rne(x), f32_to_e2m1_by_rounding(x, false, 0))
        << std::hex << u;
  }
  const float marks[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.f, 6.f, 0.f};
  for (float m : marks)
    for (int d = -4096; d <= 4096; ++d)
      for (uint32_t sign : {0u, 0x80000000u}) {
        const int64_t b = int64_t(f32_bits(m)) + d;
        if (b < 0)
          continue;
        const float x = bits_f32(uint32_t(b) | sign);
        ASSERT_EQ(f32_to_e2m1_rne(x), f32_to_e2m1_by_rounding(x, false, 0))
            << std::hex << (uint32_t(b) | sign);
      }
}

// The one-addition form of the e2m1 RNE conversion (fp4_stream.cu) against
// the comparison form: every 64th bit pattern, and every pattern of
// |x| in [2^-3, 2^4) (the binades around the codes and the saturation
// bound), both signs. (Every non-NaN pattern was checked once by hand, 2^32
// inputs, 0 mismatches.)
TEST(Conversions, E2m1AdditionFormEqualsComparisonForm) {
  auto check = [](uint32_t u) {
    const float x = bits_f32(u);
    if (f32_is_nan(x))
      return;
    ASSERT_EQ(e2m1_rne_of_magnitude(f32_abs(x), (u >> 28) & 8u),
              f32_to_e2m1_rne(x))
        << std::hex << u;
  };
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 64)
    check(uint32_t(u));
  for (uint32_t u = 0x3e000000u; u < 0x41800000u; ++u) {
    check(u);
    check(u | 0x80000000u);
  }
}

TEST(Conversions, RoundTripsOfEveryCode) {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7f) != 0x7f) {
      EXPECT_EQ(f32_to_e4m3(e4m3_to_f32(uint8_t(c))), c);
    }
    if ((c & 0x7f) <= 0x7b) {
      EXPECT_EQ(f32_to_e5m2(e5m2_to_f32(uint8_t(c))), c);
    }
  }
  for (int c = 0; c < 16; ++c)
    EXPECT_EQ(f32_to_e2m1(e2m1_to_f32(uint8_t(c))), c);
  const float e2m1[] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(e2m1_to_f32(uint8_t(c)), e2m1[c]);
    EXPECT_EQ(e2m1_to_f32(uint8_t(c | 8)), -e2m1[c]);
  }
  for (uint32_t h = 0; h < 65536; ++h) {
    if ((h & 0x7fff) <= 0x7f80) {
      ASSERT_EQ(f32_to_bf16(bf16_to_f32(uint16_t(h))), h);
    }
    if ((h & 0x7fff) <= 0x7c00) {
      ASSERT_EQ(f32_to_f16(f16_to_f32(uint16_t(h))), h);
    }
  }
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()), 0x7fff);
  EXPECT_EQ(f32_to_f16(65520.f), 0x7c00); // overflow to Inf
}

TEST(Conversions, E8M0AndReciprocal) {
  EXPECT_EQ(f32_bits(e8m0_to_f32(0)), 0x00400000u);
  EXPECT_EQ(e8m0_to_f32(127), 1.f);
  EXPECT_TRUE(std::isnan(e8m0_to_f32(255)));
  // r(b) = 2^(127-b): bits (254-b) << 23; 254 -> 2^-127 subnormal; 255 NaN.
  EXPECT_EQ(f32_bits(mx_reciprocal(0)), 0x7f000000u);
  EXPECT_EQ(mx_reciprocal(127), 1.f);
  EXPECT_EQ(f32_bits(mx_reciprocal(253)), 0x00800000u);
  EXPECT_EQ(f32_bits(mx_reciprocal(254)), 0x00400000u);
  EXPECT_TRUE(std::isnan(mx_reciprocal(255)));
  for (int b = 0; b < 255; ++b)
    EXPECT_EQ(double(mx_reciprocal(uint8_t(b))) * double(e8m0_to_f32(uint8_t(b))), 1.0);
  // roundup_e8m0 subnormal rule and saturation.
  EXPECT_EQ(e8m0_roundup(bits_f32(0x00400000u), true), 0);
  EXPECT_EQ(e8m0_roundup(bits_f32(0x00400001u), true), 1);
  EXPECT_EQ(e8m0_roundup(0.f, true), 0);
  EXPECT_EQ(e8m0_roundup(1.f, true), 127);
  EXPECT_EQ(e8m0_roundup(std::nextafter(1.f, 2.f), true), 128);
  EXPECT_EQ(e8m0_roundup(INFINITY, true), 254);
  EXPECT_EQ(e8m0_roundup(INFINITY, false), 255);
  EXPECT_EQ(e8m0_roundup(std::numeric_limits<float>::quiet_NaN(), true), 255);
  EXPECT_EQ(f32_bits(mx_max_rcp(kMXFP8E4M3)), 0x3b124925u);
  EXPECT_EQ(f32_bits(mx_max_rcp(kMXFP8E5M2)), 0x37924925u);
  EXPECT_EQ(mx_max_rcp(kMXFP8E4M3), 1.0f / 448.0f);
  EXPECT_EQ(mx_max_rcp(kMXFP4), 1.0f / 6.0f);
}
