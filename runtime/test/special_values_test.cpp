//===- special_values_test.cpp - the special-value contract ---------------===//
//
// research/kernels.md §1.4: one 32-element e4m3 block per case, for RCEIL and
// FLOOR and for both NaN policies (propagate = torchao, ignore = TE), plus the
// two "premature bf16" vectors of torchao's test contract and its 480 / 464
// examples. Expected bytes are written out literally.
//
//===----------------------------------------------------------------------===//
#include "test_util.h"

#include "common/convert.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>

using namespace fusion_rt_test;

namespace {

struct BlockResult {
  uint8_t scale;
  uint8_t data[32];
};

/// Quantizes one 32-element f32 block as MXFP8 e4m3 rowwise.
BlockResult quantize_block(const float (&x)[32], int32_t rounding, int32_t nan,
                           int32_t format = FUSION_RT_FORMAT_MXFP8_E4M3) {
  fusion_rt_quant_scheme s = scheme_of(format, FUSION_RT_ROWWISE);
  s.scale_rounding = rounding;
  s.nan_policy = nan;
  QuantBuffers q;
  q.alloc(s, 1, 32);
  float in[32];
  std::copy(std::begin(x), std::end(x), in);
  fusion_rt_tensor t = view2d(in, FUSION_RT_F32, 1, 32);
  fusion_rt_status st = fusion_rt_quantize(&t, &s, &q.out, nullptr, nullptr);
  EXPECT_EQ(st, FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
  BlockResult r;
  r.scale = q.row_scales[0];
  for (int i = 0; i < 32; ++i)
    r.data[i] = q.row_code(0, i);
  return r;
}

void fill(float (&x)[32], float v) {
  for (float &e : x)
    e = v;
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

constexpr int32_t kModes[] = {FUSION_RT_SCALE_RCEIL, FUSION_RT_SCALE_FLOOR,
                              FUSION_RT_SCALE_CEIL, FUSION_RT_SCALE_EVEN};
constexpr int32_t kPolicies[] = {FUSION_RT_NAN_PROPAGATE, FUSION_RT_NAN_IGNORE};

} // namespace

TEST(SpecialValues, AllZero) {
  float x[32];
  fill(x, 0.f);
  for (int32_t m : kModes)
    for (int32_t p : kPolicies) {
      BlockResult r = quantize_block(x, m, p);
      EXPECT_EQ(r.scale, 0);
      for (uint8_t d : r.data)
        EXPECT_EQ(d, 0x00);
    }
}

TEST(SpecialValues, AllSmallestNormal) {
  float x[32];
  fill(x, std::ldexp(1.f, -126));
  for (int32_t m : kModes)
    for (int32_t p : kPolicies) {
      BlockResult r = quantize_block(x, m, p);
      EXPECT_EQ(r.scale, 0);
      for (uint8_t d : r.data)
        EXPECT_EQ(d, 0x40); // 2.0
    }
}

TEST(SpecialValues, OneAndInf) {
  float x[32];
  fill(x, 1.f);
  x[5] = kInf;
  for (int32_t m : kModes) {
    BlockResult prop = quantize_block(x, m, FUSION_RT_NAN_PROPAGATE);
    EXPECT_EQ(prop.scale, 255);
    for (uint8_t d : prop.data)
      EXPECT_EQ(d, 0x7f);
    BlockResult ign = quantize_block(x, m, FUSION_RT_NAN_IGNORE);
    EXPECT_EQ(ign.scale, 254); // saturated (TE)
    EXPECT_EQ(ign.data[5], 0x7e); // Inf * 2^-127 = Inf -> satfinite 448
    EXPECT_EQ(ign.data[0], 0x00); // 1.0 * 2^-127 -> 0
  }
}

TEST(SpecialValues, OneAndNaN) {
  float x[32];
  fill(x, 1.f);
  x[7] = kNaN;
  for (int32_t m : kModes) {
    BlockResult prop = quantize_block(x, m, FUSION_RT_NAN_PROPAGATE);
    EXPECT_EQ(prop.scale, 255);
    for (uint8_t d : prop.data)
      EXPECT_EQ(d, 0x7f);
    BlockResult ign = quantize_block(x, m, FUSION_RT_NAN_IGNORE);
    EXPECT_EQ(ign.scale, 119);
    EXPECT_EQ(ign.data[0], 0x78); // 256
    EXPECT_EQ(ign.data[7], 0x7f);
  }
}

TEST(SpecialValues, NegativeNaNEncodesAs7F) {
  float x[32];
  fill(x, 1.f);
  x[3] = -kNaN;
  BlockResult ign = quantize_block(x, FUSION_RT_SCALE_RCEIL, FUSION_RT_NAN_IGNORE);
  EXPECT_EQ(ign.data[3], 0x7f); // not 0xFF
  ign = quantize_block(x, FUSION_RT_SCALE_RCEIL, FUSION_RT_NAN_IGNORE,
                       FUSION_RT_FORMAT_MXFP8_E5M2);
  EXPECT_EQ(ign.data[3], 0x7f); // e5m2 too
}

TEST(SpecialValues, AllNaN) {
  float x[32];
  fill(x, kNaN);
  for (int32_t m : kModes) {
    BlockResult prop = quantize_block(x, m, FUSION_RT_NAN_PROPAGATE);
    EXPECT_EQ(prop.scale, 255);
    BlockResult ign = quantize_block(x, m, FUSION_RT_NAN_IGNORE);
    EXPECT_EQ(ign.scale, 0); // amax of no element is 0
    for (int i = 0; i < 32; ++i) {
      EXPECT_EQ(prop.data[i], 0x7f);
      EXPECT_EQ(ign.data[i], 0x7f);
    }
  }
}

TEST(SpecialValues, All448) {
  float x[32];
  fill(x, 448.f);
  // RCEIL and FLOOR; CEIL rounds 448 up (CeilRoundsTheAmaxUp).
  for (int32_t m : {FUSION_RT_SCALE_RCEIL, FUSION_RT_SCALE_FLOOR})
    for (int32_t p : kPolicies) {
      BlockResult r = quantize_block(x, m, p);
      EXPECT_EQ(r.scale, 127);
      EXPECT_EQ(r.data[0], 0x7e);
    }
}

TEST(SpecialValues, All464) {
  float x[32];
  fill(x, 464.f);
  for (int32_t p : kPolicies) {
    BlockResult rc = quantize_block(x, FUSION_RT_SCALE_RCEIL, p);
    EXPECT_EQ(rc.scale, 128);
    EXPECT_EQ(rc.data[0], 0x76); // 232 ties to even -> 224
    BlockResult fl = quantize_block(x, FUSION_RT_SCALE_FLOOR, p);
    EXPECT_EQ(fl.scale, 127);
    EXPECT_EQ(fl.data[0], 0x7e); // 464 saturates to 448
  }
}

TEST(SpecialValues, All480TorchaoExample) {
  float x[32];
  fill(x, 480.f);
  BlockResult rc = quantize_block(x, FUSION_RT_SCALE_RCEIL, FUSION_RT_NAN_PROPAGATE);
  EXPECT_EQ(rc.scale, 128);
  EXPECT_EQ(rc.data[0], 0x77); // 240
  BlockResult fl = quantize_block(x, FUSION_RT_SCALE_FLOOR, FUSION_RT_NAN_PROPAGATE);
  EXPECT_EQ(fl.scale, 127);
  EXPECT_EQ(fl.data[0], 0x7e); // 448
}

// CEIL (torchao): the OCP rule on the amax rounded up to a power of two.
// 448 is not a power of two: one above RCEIL and FLOOR; 256 is: all agree;
// 300: one above both, its codes halved.
TEST(SpecialValues, CeilRoundsTheAmaxUp) {
  float x[32];
  struct Case {
    float v;
    uint8_t rceil, rceilCode, floor, floorCode, ceil, ceilCode;
  } cases[] = {{448.f, 127, 0x7e, 127, 0x7e, 128, 0x76},
               {256.f, 127, 0x78, 127, 0x78, 127, 0x78},
               {300.f, 127, 0x79, 127, 0x79, 128, 0x71}};
  for (const Case &c : cases)
    for (int32_t p : kPolicies) {
      fill(x, c.v);
      BlockResult rc = quantize_block(x, FUSION_RT_SCALE_RCEIL, p);
      BlockResult fl = quantize_block(x, FUSION_RT_SCALE_FLOOR, p);
      BlockResult ce = quantize_block(x, FUSION_RT_SCALE_CEIL, p);
      EXPECT_EQ(rc.scale, c.rceil) << c.v;
      EXPECT_EQ(rc.data[0], c.rceilCode) << c.v;
      EXPECT_EQ(fl.scale, c.floor) << c.v;
      EXPECT_EQ(fl.data[0], c.floorCode) << c.v;
      EXPECT_EQ(ce.scale, c.ceil) << c.v;
      EXPECT_EQ(ce.data[0], c.ceilCode) << c.v;
    }
  // FLT_MAX: CEIL's E + 1 = 255 stays one below the NaN byte after - 8.
  fill(x, FLT_MAX);
  BlockResult ce = quantize_block(x, FUSION_RT_SCALE_CEIL, FUSION_RT_NAN_PROPAGATE);
  EXPECT_EQ(ce.scale, 247);
  EXPECT_EQ(ce.data[0], 0x78);
}

// EVEN (torchao): FLOOR of the amax with its mantissa rounded half up to
// e4m3's three bits: 496 = 1.9375 * 2^8 rounds up to 2^9 (one above FLOOR;
// its elements halved, 248 ties to 256 instead of saturating to 448),
// 480 = 1.875 * 2^8 does not; a block just below 496 stays with FLOOR;
// FLT_MAX rounds to Inf's exponent: 255 - 8, its elements 2^7 * (2 - 2^-23)
// round to 256.
TEST(SpecialValues, EvenRoundsTheMantissaHalfUp) {
  float x[32];
  struct Case {
    float v;
    uint8_t floor, floorCode, even, evenCode;
  } cases[] = {{496.f, 127, 0x7e, 128, 0x78},
               {480.f, 127, 0x7e, 127, 0x7e},
               {std::nextafter(496.f, 0.f), 127, 0x7e, 127, 0x7e},
               {FLT_MAX, 246, 0x7e, 247, 0x78}};
  for (const Case &c : cases)
    for (int32_t p : kPolicies) {
      fill(x, c.v);
      BlockResult fl = quantize_block(x, FUSION_RT_SCALE_FLOOR, p);
      BlockResult ev = quantize_block(x, FUSION_RT_SCALE_EVEN, p);
      EXPECT_EQ(fl.scale, c.floor) << c.v;
      EXPECT_EQ(fl.data[0], c.floorCode) << c.v;
      EXPECT_EQ(ev.scale, c.even) << c.v;
      EXPECT_EQ(ev.data[0], c.evenCode) << c.v;
    }
}

TEST(SpecialValues, Fp32Max) {
  float x[32];
  fill(x, FLT_MAX);
  for (int32_t p : kPolicies) {
    BlockResult rc = quantize_block(x, FUSION_RT_SCALE_RCEIL, p);
    EXPECT_EQ(rc.scale, 247);
    EXPECT_EQ(rc.data[0], 0x78);
    BlockResult fl = quantize_block(x, FUSION_RT_SCALE_FLOOR, p);
    EXPECT_EQ(fl.scale, 246);
    EXPECT_EQ(fl.data[0], 0x7e);
  }
}

TEST(SpecialValues, NegativeTinyKeepsSign) {
  float x[32];
  fill(x, 1.f);
  x[9] = -fusion_rt::bf16_to_f32(0x0001); // -(bf16 min subnormal)
  for (int32_t m : kModes)
    for (int32_t p : kPolicies) {
      BlockResult r = quantize_block(x, m, p);
      EXPECT_EQ(r.scale, 119);
      EXPECT_EQ(r.data[0], 0x78);
      EXPECT_EQ(r.data[9], 0x80);
    }
}

TEST(SpecialValues, NegativeZeroKept) {
  float x[32];
  fill(x, 1.f);
  x[0] = -0.f;
  for (int32_t m : kModes)
    for (int32_t p : kPolicies) {
      BlockResult r = quantize_block(x, m, p);
      EXPECT_EQ(r.data[0], 0x80);
      EXPECT_EQ(r.data[1], 0x78);
    }
}

// torchao rceil_premature_bf16_lowers_scale: amax 0x40600001 (just above 3.5
// = 448 * 2^-7): RCEIL must round up to 2^-6 (byte 121), where rounding amax
// to bf16 first (3.5) would give 120.
TEST(SpecialValues, PrematureBf16RceilVector) {
  float x[32];
  fill(x, 0.f);
  x[0] = fusion_rt::bits_f32(0x40600001u);
  for (int32_t p : kPolicies) {
    BlockResult r = quantize_block(x, FUSION_RT_SCALE_RCEIL, p);
    EXPECT_EQ(r.scale, 121);
    EXPECT_EQ(r.data[0], 0x76); // 3.5000002 * 64 = 224.00001 -> 224
  }
}

// torchao floor_premature_bf16_raises_scale: amax 0x43FFFFFF (just below
// 512): FLOOR gives E = 135 -> 127, where bf16 rounding (512) would give 128.
TEST(SpecialValues, PrematureBf16FloorVector) {
  float x[32];
  fill(x, 0.f);
  x[0] = fusion_rt::bits_f32(0x43ffffffu);
  for (int32_t p : kPolicies) {
    BlockResult r = quantize_block(x, FUSION_RT_SCALE_FLOOR, p);
    EXPECT_EQ(r.scale, 127);
    EXPECT_EQ(r.data[0], 0x7e); // 511.99997 saturates to 448
  }
}

// The subnormal-edge exception of kernels.md §1.2 errata: amax 0x04600001
// gives amax * fp32(1/448) = 2^-127 exactly, so RCEIL byte 0.
TEST(SpecialValues, SubnormalEdgeOfRceil) {
  float x[32];
  fill(x, 0.f);
  x[0] = fusion_rt::bits_f32(0x04600001u);
  BlockResult r = quantize_block(x, FUSION_RT_SCALE_RCEIL, FUSION_RT_NAN_PROPAGATE);
  EXPECT_EQ(r.scale, 0);
}

// A partial block takes the amax of its valid elements only.
TEST(SpecialValues, PartialBlockUsesValidElements) {
  fusion_rt_quant_scheme s = scheme_of(FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_ROWWISE);
  QuantBuffers q;
  q.alloc(s, 1, 40);
  std::vector<float> in(40, 1.f);
  in[35] = 2.f; // the second block has 8 elements, amax 2
  fusion_rt_tensor t = view2d(in.data(), FUSION_RT_F32, 1, 40);
  ASSERT_EQ(fusion_rt_quantize(&t, &s, &q.out, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS);
  EXPECT_EQ(q.row_scales[0], 119); // 1.0 -> 2^-8
  EXPECT_EQ(q.row_scales[1], 120); // 2.0 -> 2^-7
  EXPECT_EQ(q.row_code(0, 35), 0x78);
}

// zero_scale = ONE as the CUDA backend implements it (mx_zero_scale.cu): in a
// block of scale byte 0, the ONE code of every element is a function of the
// EXACT code (NaN -> 0x7F, else the sign bit), because such a block's
// elements are below the format's smallest subnormal. Checked here on the
// CPU reference over tiny blocks of both formats and every policy; the
// check also requires ONE to differ from EXACT somewhere (it is not a
// no-op on these inputs).
TEST(SpecialValues, ZeroScaleOneIsAFunctionOfTheExactCode) {
  const int64_t m = 16, n = 256, nb = n / 32;
  std::vector<float> x(size_t(m * n));
  uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
  for (int64_t i = 0; i < m * n; ++i) {
    const int e = -131 + int((i / 32 * 7919) % 40); // 2^-131 .. 2^-92
    const float mant = 1.0f + float(next() >> 9) / float(1u << 23);
    x[size_t(i)] = std::ldexp(next() & 1 ? -mant : mant, e);
  }
  x[5] = -0.0f;
  x[70] = std::numeric_limits<float>::quiet_NaN(); // block 2 of row 0
  for (int64_t j = 0; j < 32; ++j)
    x[size_t(3 * n + j)] = 0.0f; // an all-zero block
  int differing = 0, byteZeroBlocks = 0, minNormalDiffers = 0;
  for (int32_t fmt : {FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_FORMAT_MXFP8_E5M2})
    for (int32_t rnd : {FUSION_RT_SCALE_RCEIL, FUSION_RT_SCALE_FLOOR})
      for (int32_t nan : {FUSION_RT_NAN_PROPAGATE, FUSION_RT_NAN_IGNORE}) {
        fusion_rt_quant_scheme s = scheme_of(fmt, FUSION_RT_ROWWISE);
        s.scale_rounding = rnd;
        s.nan_policy = nan;
        fusion_rt_tensor in = view2d(x.data(), FUSION_RT_F32, m, n);
        QuantBuffers exact, one;
        exact.alloc(s, m, n);
        ASSERT_EQ(fusion_rt_quantize(&in, &s, &exact.out, nullptr, nullptr),
                  FUSION_RT_STATUS_SUCCESS);
        s.zero_scale = FUSION_RT_ZERO_SCALE_ONE;
        one.alloc(s, m, n);
        ASSERT_EQ(fusion_rt_quantize(&in, &s, &one.out, nullptr, nullptr),
                  FUSION_RT_STATUS_SUCCESS);
        // MIN_NORMAL changes these inputs' codes too (the GPU tests' tiny
        // cases can tell it from EXACT), and only in blocks of byte 0.
        QuantBuffers minNormal;
        s.zero_scale = FUSION_RT_ZERO_SCALE_MIN_NORMAL;
        minNormal.alloc(s, m, n);
        ASSERT_EQ(fusion_rt_quantize(&in, &s, &minNormal.out, nullptr, nullptr),
                  FUSION_RT_STATUS_SUCCESS);
        for (int64_t r = 0; r < m; ++r)
          for (int64_t j = 0; j < n; ++j)
            if (exact.row_scales[size_t(r * nb + j / 32)] != 0)
              ASSERT_EQ(minNormal.row_code(r, j), exact.row_code(r, j));
            else
              minNormalDiffers += minNormal.row_code(r, j) != exact.row_code(r, j);
        EXPECT_EQ(exact.row_scales, one.row_scales) << describe(s);
        for (int64_t r = 0; r < m; ++r)
          for (int64_t b = 0; b < nb; ++b) {
            const bool zero = exact.row_scales[size_t(r * nb + b)] == 0;
            byteZeroBlocks += zero;
            for (int64_t j = b * 32; j < b * 32 + 32; ++j) {
              const uint8_t e = exact.row_code(r, j), o = one.row_code(r, j);
              const bool isNaN = fmt == FUSION_RT_FORMAT_MXFP8_E5M2
                                     ? (e & 0x7F) > 0x7C
                                     : (e & 0x7F) == 0x7F;
              const uint8_t want =
                  zero ? (isNaN ? uint8_t(0x7F) : uint8_t(e & 0x80)) : e;
              ASSERT_EQ(o, want) << describe(s) << " row " << r << " col " << j;
              differing += o != e;
            }
          }
      }
  EXPECT_GT(byteZeroBlocks, 100);
  EXPECT_GT(differing, 1000) << "ONE must change codes on these inputs";
  EXPECT_GT(minNormalDiffers, 1000) << "so must MIN_NORMAL";
}
