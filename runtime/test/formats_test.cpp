//===- formats_test.cpp - per-format numerics --------------------------===//
//
// dequantize(quantize(x)) error bounds; an independent MX reference on data
// with NaN/Inf sprinkled (both policies, both roundings); the NVFP4 global
// scale chain recomputed from kernels.md §1.7; NVFP4 2D scales shared by both
// copies; FP8 per-tensor current and delayed scaling; stochastic rounding;
// determinism across thread counts, input dtypes and strides.
//
//===----------------------------------------------------------------------===//
#include "test_util.h"

#include "common/convert.h"
#include "common/scale.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

using namespace fusion_rt_test;
using fusion_rt::bits_f32;

namespace {

QuantBuffers quantize(const fusion_rt_quant_scheme &s, HostMatrix &x,
                      const fusion_rt_options *opt = nullptr, bool want_amax = false) {
  QuantBuffers q;
  q.alloc(s, x.rows, x.cols, false, want_amax);
  fusion_rt_tensor t = x.view();
  fusion_rt_status st = fusion_rt_quantize(&t, &s, &q.out, opt, nullptr);
  EXPECT_EQ(st, FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
  return q;
}

std::vector<float> dequantize(QuantBuffers &q, int32_t dir) {
  const bool tr = dir == FUSION_RT_COLWISE &&
                  q.scheme.colwise_layout == FUSION_RT_COLWISE_TRANSPOSED;
  const int64_t r = tr ? q.cols : q.rows, c = tr ? q.rows : q.cols;
  std::vector<float> out(size_t(r * c), -1.f);
  fusion_rt_tensor ov = view2d(out.data(), FUSION_RT_F32, r, c);
  fusion_rt_status st =
      fusion_rt_dequantize(&q.scheme, &q.out, dir, &ov, nullptr, nullptr);
  EXPECT_EQ(st, FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
  if (!tr)
    return out;
  std::vector<float> back(out.size());
  for (int64_t i = 0; i < q.rows; ++i)
    for (int64_t j = 0; j < q.cols; ++j)
      back[size_t(i * q.cols + j)] = out[size_t(j * q.rows + i)];
  return back;
}

/// Block amax of element (i, j) for the block shape of `dir`.
float block_amax(const HostMatrix &x, int64_t i, int64_t j, int32_t dir, int64_t bs) {
  float a = 0.f;
  if (dir == FUSION_RT_ROWWISE) {
    for (int64_t k = j / bs * bs; k < std::min(x.cols, j / bs * bs + bs); ++k)
      a = std::max(a, std::fabs(x.at(i, k)));
  } else {
    for (int64_t k = i / bs * bs; k < std::min(x.rows, i / bs * bs + bs); ++k)
      a = std::max(a, std::fabs(x.at(k, j)));
  }
  return a;
}

} // namespace

// |x - dq(q(x))| stays within half a unit of the element format at the
// block's scale (relative bound for normals, absolute for subnormals).
TEST(Formats, DequantizeQuantizeErrorBounds) {
  const int64_t m = 70, n = 100;
  // rel: half an ulp relative to |x| for normals. sub: the absolute floor,
  // relative to the block amax (MX: scale < 2*amax/max; NVFP4 also covers
  // the e4m3 rounding of its block scale), or to scale_inv (FP8 per tensor).
  struct F {
    int32_t format;
    double rel, sub;
  } formats[] = {{FUSION_RT_FORMAT_MXFP8_E4M3, 1.0 / 16, 2.0 / 448 / 1024},
                 {FUSION_RT_FORMAT_MXFP8_E5M2, 1.0 / 8, 2.0 / 57344 / 131072},
                 {FUSION_RT_FORMAT_MXFP4, 1.0 / 4, 1.0 / 12},
                 {FUSION_RT_FORMAT_NVFP4, 1.0 / 4, 1.0 / 24 + 1.0 / 16},
                 {FUSION_RT_FORMAT_FP8_E4M3, 1.0 / 16, 1.0 / 1024},
                 {FUSION_RT_FORMAT_FP8_E5M2, 1.0 / 8, 1.0 / 131072}};
  for (const F &f : formats)
    for (int32_t dir : {FUSION_RT_ROWWISE, FUSION_RT_COLWISE}) {
      // Wide per-block ranges for MX; NVFP4 and FP8 have one tensor-wide scale
      // (e4m3 block scales underflow far below the tensor amax, by design).
      HostMatrix x = make_matrix(random_values(m * n, 11, f.format < 3), m, n,
                                 FUSION_RT_BF16);
      fusion_rt_quant_scheme s = scheme_of(f.format, dir, FUSION_RT_COLWISE_TRANSPOSED);
      QuantBuffers q = quantize(s, x);
      std::vector<float> d = dequantize(q, dir);
      SCOPED_TRACE(describe(s));
      const int64_t bs = f.format == FUSION_RT_FORMAT_NVFP4 ? 16 : 32;
      double worst = 0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const double xv = x.at(i, j), dv = d[size_t(i * n + j)];
          const double amax_ref = f.format >= FUSION_RT_FORMAT_FP8_E4M3
                                      ? double(q.scale_inv)
                                      : block_amax(x, i, j, dir, bs);
          const double bound = f.rel * std::fabs(xv) + f.sub * amax_ref + 1e-30;
          ASSERT_LE(std::fabs(xv - dv), bound) << i << "," << j << " x=" << xv
                                              << " dq=" << dv;
          worst = std::max(worst, std::fabs(xv - dv) / (std::fabs(xv) + 1e-30));
        }
      EXPECT_GT(worst, 0.0); // the round trip is lossy: the check is not vacuous
    }
}

// An independent MX reference built from the formulas of kernels.md §0/§1.2,
// on data with NaN and Inf sprinkled, for both roundings and policies.
TEST(Formats, MxMatchesFormulaReference) {
  const int64_t m = 33, n = 75;
  std::vector<float> v = random_values(m * n, 21);
  v[5] = std::numeric_limits<float>::quiet_NaN();
  v[200] = std::numeric_limits<float>::infinity();
  v[333] = -std::numeric_limits<float>::infinity();
  v[334] = std::numeric_limits<float>::quiet_NaN();
  v[1000] = -0.f;
  for (int64_t i = 0; i < 32; ++i)
    v[size_t(2000 + i)] = std::numeric_limits<float>::quiet_NaN();
  HostMatrix x = make_matrix(v, m, n, FUSION_RT_F32);
  for (int32_t f : {FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_FORMAT_MXFP8_E5M2,
                    FUSION_RT_FORMAT_MXFP4})
    for (int32_t rounding : {FUSION_RT_SCALE_RCEIL, FUSION_RT_SCALE_FLOOR,
                             FUSION_RT_SCALE_CEIL, FUSION_RT_SCALE_EVEN})
      for (int32_t pol : {FUSION_RT_NAN_PROPAGATE, FUSION_RT_NAN_IGNORE}) {
        fusion_rt_quant_scheme s = scheme_of(f, FUSION_RT_ROWWISE);
        s.scale_rounding = rounding;
        s.nan_policy = pol;
        QuantBuffers q = quantize(s, x);
        SCOPED_TRACE(describe(s));
        const double maxv = f == 0 ? 448 : f == 1 ? 57344 : 6;
        const int p = f == 0 ? 8 : f == 1 ? 15 : 2;
        const int64_t nb = (n + 31) / 32;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t b = 0; b < nb; ++b) {
            float amax = 0;
            bool nan = false, inf = false;
            for (int64_t j = b * 32; j < std::min(n, b * 32 + 32); ++j) {
              float a = std::fabs(x.at(i, j));
              nan |= std::isnan(a);
              inf |= std::isinf(a);
              if (!std::isnan(a))
                amax = std::max(amax, a);
            }
            int byte;
            if (pol == FUSION_RT_NAN_PROPAGATE && (nan || inf)) {
              byte = 255;
            } else if (inf) {
              byte = 254;
            } else if (rounding == FUSION_RT_SCALE_RCEIL) {
              // ceil(log2(fp32(amax * fp32(1/max)))) + 127, clamped at 0.
              float d = amax * float(1.0 / maxv);
              if (d == 0.f) {
                byte = 0;
              } else {
                int e;
                float fr = std::frexp(d, &e); // d = fr * 2^e, fr in [0.5, 1)
                byte = (fr == 0.5f ? e - 1 : e) + 127;
                byte = std::max(byte, 0);
              }
            } else {
              int e = amax == 0.f ? -127 : std::ilogb(amax);
              // CEIL: amax rounded up to a power of two first.
              int ex = 0;
              if (rounding == FUSION_RT_SCALE_CEIL && amax != 0.f &&
                  std::frexp(amax, &ex) != 0.5f)
                ++e;
              // EVEN: the significand rounded half up to the element's
              // mantissa bits (3 / 2 / 1) reaches 2.
              const int mb = f == 0 ? 3 : f == 1 ? 2 : 1;
              if (rounding == FUSION_RT_SCALE_EVEN && std::isnormal(amax) &&
                  2.0 * std::frexp(amax, &ex) >= 2.0 - std::ldexp(1.0, -mb - 1))
                ++e;
              byte = std::max(e + 127 - p, 0);
              if (amax != 0.f && !std::isnormal(amax))
                byte = 0;
            }
            ASSERT_EQ(q.row_scales[size_t(i * nb + b)], byte) << i << "," << b;
            const double scale = byte == 255 ? NAN : std::ldexp(1.0, byte - 127);
            for (int64_t j = b * 32; j < std::min(n, b * 32 + 32); ++j) {
              const float e = float(x.at(i, j) / scale); // exact power of two
              const uint8_t want = f == 0   ? fusion_rt::f32_to_e4m3(e)
                                   : f == 1 ? fusion_rt::f32_to_e5m2(e)
                                            : fusion_rt::f32_to_e2m1(e);
              ASSERT_EQ(q.row_code(i, j), want) << i << "," << j;
            }
          }
      }
}

// NVFP4: the global scale chain of kernels.md §1.7, recomputed step by step.
TEST(Formats, Nvfp4GlobalScaleChain) {
  const int64_t m = 20, n = 50;
  HostMatrix x = make_matrix(random_values(m * n, 8, false), m, n, FUSION_RT_BF16);
  x.set(3, 4, 0.f);
  for (int64_t j = 16; j < 32; ++j)
    x.set(5, j, 0.f); // an all-zero block: scale 0, data 0
  fusion_rt_quant_scheme s = scheme_of(FUSION_RT_FORMAT_NVFP4, FUSION_RT_ROWWISE);
  QuantBuffers q = quantize(s, x);
  float amax = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      amax = std::max(amax, std::fabs(x.at(i, j)));
  EXPECT_EQ(q.amax, amax);
  const float s_enc = std::min(2688.0f / amax, FLT_MAX);
  const float s_dec = float(1.0 / double(s_enc));
  EXPECT_EQ(q.scale_inv, s_dec);
  const float factor = s_enc * (1.0f / 6.0f);
  const int64_t nb = (n + 15) / 16;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t b = 0; b < nb; ++b) {
      float ba = 0;
      for (int64_t j = b * 16; j < std::min(n, b * 16 + 16); ++j)
        ba = std::max(ba, std::fabs(x.at(i, j)));
      const uint8_t sb = fusion_rt::f32_to_e4m3(ba * factor);
      ASSERT_EQ(q.row_scales[size_t(i * nb + b)], sb);
      const float enc = std::min(1.0f / (fusion_rt::e4m3_to_f32(sb) * s_dec), FLT_MAX);
      for (int64_t j = b * 16; j < std::min(n, b * 16 + 16); ++j)
        ASSERT_EQ(q.row_code(i, j), fusion_rt::f32_to_e2m1(x.at(i, j) * enc));
    }
  EXPECT_EQ(q.row_scales[size_t(5 * nb + 1)], 0);
  EXPECT_EQ(q.row_code(5, 20), 0);
  // The helpers agree with the chain's edge rules.
  EXPECT_EQ(fusion_rt::nvfp4_global_encode_scale(0.f), 1.f);
  EXPECT_EQ(fusion_rt::nvfp4_global_encode_scale(INFINITY), 1.f);
  EXPECT_EQ(fusion_rt::nvfp4_global_encode_scale(1e-40f), FLT_MAX);
  EXPECT_EQ(fusion_rt::nvfp4_encode_factor(0, 1.f), FLT_MAX);
}

// NVFP4 16x16 blocks: one scale per block, shared by the rowwise copy and the
// transposed colwise copy, whose data is then the exact transpose.
TEST(Formats, Nvfp4TwoDimensionalScalesShared) {
  const int64_t m = 40, n = 35;
  HostMatrix x = make_matrix(random_values(m * n, 9), m, n, FUSION_RT_F32);
  fusion_rt_quant_scheme s =
      scheme_of(FUSION_RT_FORMAT_NVFP4, FUSION_RT_BOTH, FUSION_RT_COLWISE_TRANSPOSED);
  s.nvfp4_block = FUSION_RT_NVFP4_2D;
  QuantBuffers q = quantize(s, x);
  const int64_t nbc = (n + 15) / 16, nbr = (m + 15) / 16;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      ASSERT_EQ(q.row_scales[size_t(i * nbc + j / 16)],
                q.col_scales[size_t(j * nbr + i / 16)]);
      ASSERT_EQ(q.row_scales[size_t(i * nbc + j / 16)],
                q.row_scales[size_t((i / 16 * 16) * nbc + j / 16)]);
      ASSERT_EQ(q.row_code(i, j), q.col_code(j, i));
    }
  // The 2D block scale covers all 16x16 elements: the block containing the
  // largest |x| of a 16-row group has the largest scale of that group.
  fusion_rt_quant_scheme s1 = s;
  s1.nvfp4_block = FUSION_RT_NVFP4_1D;
  QuantBuffers q1 = quantize(s1, x);
  bool differs = false;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t b = 0; b < nbc; ++b) {
      uint8_t s2 = q.row_scales[size_t(i * nbc + b)];
      uint8_t s1b = q1.row_scales[size_t(i * nbc + b)];
      ASSERT_GE(fusion_rt::e4m3_to_f32(s2), fusion_rt::e4m3_to_f32(s1b));
      differs |= s2 != s1b;
    }
  EXPECT_TRUE(differs);
}

TEST(Formats, Fp8PerTensorCurrentScaling) {
  const int64_t m = 10, n = 20;
  std::vector<float> v = random_values(m * n, 12, false);
  v[7] = std::numeric_limits<float>::quiet_NaN(); // ignored by the amax
  HostMatrix x = make_matrix(v, m, n, FUSION_RT_F32);
  fusion_rt_quant_scheme s =
      scheme_of(FUSION_RT_FORMAT_FP8_E4M3, FUSION_RT_BOTH, FUSION_RT_COLWISE_TRANSPOSED);
  QuantBuffers q = quantize(s, x, nullptr, true);
  float amax = 0;
  for (float e : v)
    if (!std::isnan(e))
      amax = std::max(amax, std::fabs(e));
  EXPECT_EQ(q.amax, amax);
  const float scale = 448.0f / amax;
  EXPECT_EQ(q.scale_inv, 1.0f / scale);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      ASSERT_EQ(q.row_code(i, j), fusion_rt::f32_to_e4m3(x.at(i, j) * scale));
      ASSERT_EQ(q.col_code(j, i), q.row_code(i, j));
    }
  EXPECT_EQ(q.row_code(0, 7), 0x7f);
  // Edge rules.
  EXPECT_EQ(fusion_rt::fp8_scale_from_amax(0.f, 448.f, 0.f, false), 1.f);
  EXPECT_EQ(fusion_rt::fp8_scale_from_amax(INFINITY, 448.f, 0.f, false), 1.f);
  EXPECT_EQ(fusion_rt::fp8_scale_from_amax(NAN, 448.f, 0.f, false), 1.f);
  EXPECT_EQ(fusion_rt::fp8_scale_from_amax(1e-40f, 448.f, 0.f, false), FLT_MAX);
  EXPECT_EQ(fusion_rt::fp8_scale_from_amax(1e-40f, 448.f, 1.f, false), 448.f);
  EXPECT_EQ(fusion_rt::fp8_scale_from_amax(3.f, 448.f, 0.f, true), 128.f);
  // Through the API: epsilon and power-of-two scales.
  s.amax_epsilon = 1e6f;
  s.force_pow2_scale = 1;
  QuantBuffers qe = quantize(s, x);
  EXPECT_EQ(qe.scale_inv, 1.0f / bits_f32(fusion_rt::f32_bits(448.f / 1e6f) & 0xff800000u));
}

// The reciprocal recipe: torch's `448 / amax` on an f32 tensor, (1 / amax)
// * 448, one ulp off the quotient for this amax (3.96830106: found by the
// raising pass's amax sweep), and the codes that ulp changes.
TEST(Formats, Fp8PerTensorReciprocalRecipe) {
  const float amax = 3.96830106f;
  const float quotient = 448.0f / amax;
  const float reciprocal = (1.0f / amax) * 448.0f;
  ASSERT_NE(quotient, reciprocal);
  EXPECT_EQ(fusion_rt::fp8_scale_from_amax(amax, 448.f, 0.f, false, true),
            reciprocal);
  EXPECT_EQ(fusion_rt::fp8_scale_from_amax(0.f, 448.f, 0.f, false, true), 1.f);
  EXPECT_EQ(fusion_rt::fp8_scale_from_amax(1e-40f, 448.f, 0.f, false, true),
            FLT_MAX);
  // x next to the midpoint between e4m3's first two subnormal codes.
  std::vector<float> v = {amax, 2.59506269e-05f, -2.59506269e-05f, 1.0f};
  HostMatrix x = make_matrix(v, 1, 4, FUSION_RT_F32);
  fusion_rt_quant_scheme s = scheme_of(FUSION_RT_FORMAT_FP8_E4M3, FUSION_RT_ROWWISE);
  s.nvfp4_recipe = FUSION_RT_NVFP4_RECIPE_RECIPROCAL;
  QuantBuffers q = quantize(s, x);
  EXPECT_EQ(q.scale_inv, 1.0f / reciprocal);
  for (int64_t j = 0; j < 4; ++j)
    EXPECT_EQ(q.row_code(0, j), fusion_rt::f32_to_e4m3(v[j] * reciprocal)) << j;
  s.nvfp4_recipe = FUSION_RT_NVFP4_RECIPE_TE;
  QuantBuffers qt = quantize(s, x);
  EXPECT_EQ(qt.scale_inv, 1.0f / quotient);
  EXPECT_NE(qt.row_code(0, 1), q.row_code(0, 1));
}

TEST(Formats, Fp8PerTensorDelayedScaling) {
  const int64_t m = 8, n = 40;
  HostMatrix x = make_matrix(random_values(m * n, 13, false), m, n, FUSION_RT_BF16);
  fusion_rt_quant_scheme s = scheme_of(FUSION_RT_FORMAT_FP8_E5M2, FUSION_RT_ROWWISE);
  s.tensor_scaling = FUSION_RT_TENSOR_SCALING_DELAYED;
  QuantBuffers q;
  q.alloc(s, m, n, false, true);
  q.scale = 1000.f; // saturates the largest values
  fusion_rt_tensor t = x.view();
  ASSERT_EQ(fusion_rt_quantize(&t, &s, &q.out, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS);
  EXPECT_EQ(q.scale_inv, 1.0f / 1000.f);
  float amax = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      amax = std::max(amax, std::fabs(x.at(i, j)));
      ASSERT_EQ(q.row_code(i, j), fusion_rt::f32_to_e5m2(x.at(i, j) * 1000.f));
    }
  EXPECT_EQ(q.amax, amax);
}

// Stochastic rounding: reproducible for a (seed, offset), different for
// another seed, only ever the two neighbours, and unbiased on average.
TEST(Formats, StochasticRounding) {
  const int64_t m = 64, n = 256;
  // 0.3 of the way from 2 to 3 at scale 1 (block amax 6 fixes scale 2^0).
  std::vector<float> v(size_t(m * n), 2.3f);
  for (int64_t i = 0; i < m; ++i)
    v[size_t(i * n)] = 6.f;
  HostMatrix x = make_matrix(v, m, n, FUSION_RT_F32);
  fusion_rt_quant_scheme s = scheme_of(FUSION_RT_FORMAT_MXFP4, FUSION_RT_BOTH,
                                       FUSION_RT_COLWISE_TRANSPOSED);
  s.elem_rounding = FUSION_RT_ROUND_STOCHASTIC;
  s.seed = 1234;
  s.offset = 5;
  QuantBuffers a = quantize(s, x), b = quantize(s, x);
  EXPECT_EQ(diff(a, b), "");
  fusion_rt_quant_scheme s2 = s;
  s2.seed = 1235;
  QuantBuffers c = quantize(s2, x);
  EXPECT_NE(a.row_data, c.row_data);
  int64_t ups = 0, total = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 1; j < 32; ++j) {
      uint8_t code = a.row_code(i, j);
      ASSERT_TRUE(code == 0x4 || code == 0x5) << int(code); // 2 or 3
      ups += code == 0x5;
      ++total;
    }
  const double p = double(ups) / double(total);
  EXPECT_NEAR(p, 0.3, 0.05);
  // NVFP4 stochastic rounding: reproducible, and keyed by the seed.
  fusion_rt_quant_scheme nv = scheme_of(FUSION_RT_FORMAT_NVFP4, FUSION_RT_ROWWISE);
  nv.elem_rounding = FUSION_RT_ROUND_STOCHASTIC;
  nv.seed = 99;
  QuantBuffers n1 = quantize(nv, x), n2 = quantize(nv, x);
  EXPECT_EQ(diff(n1, n2), "");
  nv.seed = 100;
  QuantBuffers n3 = quantize(nv, x);
  EXPECT_NE(n1.row_data, n3.row_data);
  EXPECT_EQ(n1.row_scales, n3.row_scales); // scales do not depend on rounding
  // The colwise copy draws its own bits.
  int64_t same = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 1; j < 32; ++j)
      same += a.row_code(i, j) == a.col_code(j, i);
  EXPECT_LT(same, total);
}

TEST(Formats, ThreadCountDoesNotChangeResults) {
  const int64_t m = 300, n = 200;
  HostMatrix x = make_matrix(random_values(m * n, 14), m, n, FUSION_RT_BF16);
  for (int32_t f : {FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_FORMAT_NVFP4,
                    FUSION_RT_FORMAT_FP8_E4M3}) {
    fusion_rt_quant_scheme s = scheme_of(f, FUSION_RT_BOTH, FUSION_RT_COLWISE_TRANSPOSED,
                                         FUSION_RT_SCALES_SWIZZLED);
    fusion_rt_options o1{FUSION_RT_BACKEND_CPU, 1}, o3{FUSION_RT_BACKEND_AUTO, 3};
    QuantBuffers a = quantize(s, x, &o1, true), b = quantize(s, x, &o3, true);
    EXPECT_EQ(diff(a, b), "") << describe(s);
  }
}

// Input dtype, strides and rank: a bf16 tensor and its f32 widening give the
// same result; a strided view (pitch > cols) and a rank-3 view too.
TEST(Formats, InputDtypesStridesAndRanks) {
  const int64_t m = 48, n = 64;
  std::vector<float> v = random_values(m * n, 15);
  for (float &e : v)
    e = fusion_rt::bf16_to_f32(fusion_rt::f32_to_bf16(e));
  HostMatrix xb = make_matrix(v, m, n, FUSION_RT_BF16);
  HostMatrix xf = make_matrix(v, m, n, FUSION_RT_F32);
  HostMatrix xp = make_matrix(v, m, n, FUSION_RT_BF16, n + 8);
  fusion_rt_quant_scheme s = scheme_of(FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_BOTH);
  QuantBuffers a = quantize(s, xb), b = quantize(s, xf), c = quantize(s, xp);
  EXPECT_EQ(diff(a, b), "");
  EXPECT_EQ(diff(a, c), "");
  QuantBuffers d;
  d.alloc(s, m, n);
  fusion_rt_tensor t3{};
  t3.data = xb.bytes.data();
  t3.dtype = FUSION_RT_BF16;
  t3.rank = 3;
  t3.sizes[0] = 4;
  t3.sizes[1] = m / 4;
  t3.sizes[2] = n;
  t3.strides[0] = (m / 4) * n;
  t3.strides[1] = n;
  t3.strides[2] = 1;
  ASSERT_EQ(fusion_rt_quantize(&t3, &s, &d.out, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS);
  EXPECT_EQ(diff(a, d), "");
  // f16 input of the same values (all exactly representable here? no: only
  // compare against its own f32 widening).
  HostMatrix xh = make_matrix(v, m, n, FUSION_RT_F16);
  std::vector<float> vh(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      vh[size_t(i * n + j)] = xh.at(i, j);
  HostMatrix xhf = make_matrix(vh, m, n, FUSION_RT_F32);
  EXPECT_EQ(diff(quantize(s, xh), quantize(s, xhf)), "");
}

TEST(Formats, EmptyTensor) {
  fusion_rt_quant_scheme s = scheme_of(FUSION_RT_FORMAT_FP8_E4M3, FUSION_RT_ROWWISE);
  QuantBuffers q;
  q.alloc(s, 0, 16, false, true);
  float dummy = 0;
  fusion_rt_tensor t = view2d(&dummy, FUSION_RT_F32, 0, 16);
  ASSERT_EQ(fusion_rt_quantize(&t, &s, &q.out, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS)
      << fusion_rt_last_error_message();
  EXPECT_EQ(q.amax, 0.f);
  EXPECT_EQ(q.scale_inv, 1.f);
}

// zero_scale: the elements of an MX block whose scale byte is 0 are
// multiplied by 2^127 (exact), 1.0 (one: torchao's RCEIL fallback, TE before
// PR#2647) or 2^126 (min_normal: torchao's FLOOR); other blocks, the scale
// bytes and dequantization follow. CPU backend (CUDA: UNSUPPORTED).
TEST(Formats, ZeroScalePolicies) {
  // Row 0: a tiny block (byte 0 under both roundings) and a normal block.
  std::vector<float> v(64);
  for (int i = 0; i < 32; ++i)
    v[size_t(i)] = std::ldexp(1.0f + i / 32.0f, -126 - (i % 3));
  for (int i = 32; i < 64; ++i)
    v[size_t(i)] = float(i - 40) * 0.75f;
  HostMatrix x = make_matrix(v, 1, 64, FUSION_RT_F32);
  for (int32_t rounding : {FUSION_RT_SCALE_RCEIL, FUSION_RT_SCALE_FLOOR,
                           FUSION_RT_SCALE_CEIL}) {
    const std::pair<int32_t, float> policies[] = {
        {FUSION_RT_ZERO_SCALE_EXACT, 0x1p127f},
        {FUSION_RT_ZERO_SCALE_ONE, 1.0f},
        {FUSION_RT_ZERO_SCALE_MIN_NORMAL, 0x1p126f}};
    QuantBuffers exact;
    for (auto [policy, mul] : policies) {
      fusion_rt_quant_scheme s;
      fusion_rt_quant_scheme_init(&s);
      s.scale_rounding = rounding;
      s.zero_scale = policy;
      QuantBuffers q = quantize(s, x);
      ASSERT_EQ(q.row_scales[0], 0) << "the tiny block's byte";
      for (int j = 0; j < 32; ++j)
        EXPECT_EQ(q.row_code(0, j), fusion_rt::f32_to_e4m3(v[size_t(j)] * mul))
            << "policy " << policy << " column " << j;
      if (policy == FUSION_RT_ZERO_SCALE_EXACT) {
        exact = q;
        continue;
      }
      EXPECT_EQ(q.row_scales[1], exact.row_scales[1]);
      for (int j = 32; j < 64; ++j)
        EXPECT_EQ(q.row_code(0, j), exact.row_code(0, j)) << "normal block";
      // Dequantization divides by what quantization multiplied by.
      std::vector<float> back = dequantize(q, FUSION_RT_ROWWISE);
      for (int j = 0; j < 32; ++j) {
        float code = fusion_rt::e4m3_to_f32(q.row_code(0, j));
        EXPECT_EQ(back[size_t(j)], code / mul) << "column " << j;
      }
    }
  }
}

TEST(Formats, ZeroScaleIsValidated) {
  HostMatrix x = make_matrix(std::vector<float>(32, 1.0f), 1, 32, FUSION_RT_F32);
  fusion_rt_quant_scheme s;
  fusion_rt_quant_scheme_init(&s);
  QuantBuffers q;
  q.alloc(s, 1, 32);
  fusion_rt_tensor t = x.view();
  s.zero_scale = 3;
  EXPECT_EQ(fusion_rt_quantize(&t, &s, &q.out, nullptr, nullptr),
            FUSION_RT_STATUS_BAD_VALUE);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("scheme->zero_scale"),
            std::string::npos);
  s.zero_scale = FUSION_RT_ZERO_SCALE_EXACT;
  s.format = FUSION_RT_FORMAT_FP8_E4M3;
  QuantBuffers p;
  p.alloc(s, 1, 32);
  s.zero_scale = FUSION_RT_ZERO_SCALE_ONE;
  EXPECT_EQ(fusion_rt_quantize(&t, &s, &p.out, nullptr, nullptr),
            FUSION_RT_STATUS_UNSUPPORTED);
}

// The NVFP4 torchao recipes against torchao 0.18's nvfp4_quantize (torch
// 2.15 eager on x86, with per_tensor_scale = per_tensor_amax_to_scale(amax)
// and without): scale bytes, packed code bytes and the per-tensor scale, on
// ordinary rows, rows 2^-20 and 2^40 times larger, a zero block, an all-zero
// tensor (0 / 0 scales and NaN codes) and a tensor whose amax / 2688 is 0.
TEST(Formats, Nvfp4TorchaoRecipesMatchTorchao) {
  std::vector<float> mixed;
  for (int i = 0; i < 4 * 48; ++i) {
    float x = float(((i * 37) % 101) - 50) * std::ldexp(1.0f, (i % 9) - 4) / 4.0f;
    if (i / 48 == 1)
      x = std::ldexp(x, -20);
    if (i / 48 == 2)
      x = std::ldexp(x, 40);
    if (i / 48 == 3 && i % 48 < 16)
      x = 0.0f;
    mixed.push_back(x);
  }
  std::vector<float> tiny(32, 3e-44f);
  tiny[0] = 1e-43f;
  for (int j = 1; j < 16; ++j)
    tiny[size_t(j)] = 0.0f;
  tiny[16] = 0.0f;
  tiny[17] = -0.0f;
  struct Case {
    const char *name;
    std::vector<float> x;
    int64_t rows, cols;
    uint32_t pts_bits;
    std::vector<uint8_t> two_s, two_d, one_s, one_d;
  } cases[] = {
      {"mixed", mixed, 4, 48, 1366943646u,
       {8, 8, 8, 8, 8, 8, 126, 122, 126, 8, 8, 8},
       {136, 128, 8,   8,   128, 128, 8,   8,   128, 0,   8,   136, 128, 0,
        8,   128, 128, 8,   8,   128, 128, 8,   136, 128, 0,   8,   136, 128,
        0,   8,   128, 128, 8,   8,   128, 128, 8,   136, 128, 0,   8,   136,
        128, 0,   8,   128, 128, 8,   26,  135, 128, 8,   137, 228, 0,   8,
        153, 227, 0,   8,   129, 193, 121, 8,   128, 32,  57,  143, 128, 16,
        25,  190, 0,   0,   0,   0,   0,   0,   0,   0,   0,   8,   136, 128,
        0,   8,   136, 128, 8,   8,   128, 128, 8,   8,   128, 0},
       {95, 89, 93, 8, 8, 8, 126, 126, 126, 8, 96, 93},
       {136, 128, 24,  26,  135, 128, 8,   9,   246, 0,   8,   137, 227, 1,
        8,   129, 177, 121, 8,   128, 160, 73,  143, 128, 0,   8,   136, 128,
        0,   8,   128, 128, 8,   8,   128, 128, 8,   136, 128, 0,   8,   136,
        128, 0,   8,   128, 128, 8,   127, 247, 247, 127, 255, 247, 119, 127,
        255, 247, 112, 127, 247, 247, 127, 127, 247, 119, 127, 255, 247, 119,
        127, 255, 0,   0,   0,   0,   0,   0,   0,   0,   114, 8,   136, 144,
        80,  13,  136, 144, 56,  44,  128, 128, 24,  11,  135, 0}},
      {"zero", std::vector<float>(32, 0.0f), 1, 32, 0u, {255, 255},
       std::vector<uint8_t>(16, 204), {8, 8}, std::vector<uint8_t>(16, 0)},
      {"tiny", tiny, 1, 32, 0u, {126, 126},
       {183, 187, 187, 187, 187, 187, 187, 187, 187, 119, 119, 119, 119, 119,
        119, 119},
       {8, 8},
       {0, 0, 0, 0, 0, 0, 0, 0, 128, 0, 0, 0, 0, 0, 0, 0}},
  };
  for (const Case &c : cases) {
    for (int32_t recipe : {FUSION_RT_NVFP4_RECIPE_TORCHAO,
                           FUSION_RT_NVFP4_RECIPE_TORCHAO_BLOCK}) {
      SCOPED_TRACE(std::string(c.name) + " recipe " + std::to_string(recipe));
      HostMatrix x = make_matrix(c.x, c.rows, c.cols, FUSION_RT_F32);
      fusion_rt_quant_scheme s =
          scheme_of(FUSION_RT_FORMAT_NVFP4, FUSION_RT_ROWWISE);
      s.nvfp4_recipe = recipe;
      QuantBuffers q = quantize(s, x);
      const bool two = recipe == FUSION_RT_NVFP4_RECIPE_TORCHAO;
      const std::vector<uint8_t> &ws = two ? c.two_s : c.one_s;
      const std::vector<uint8_t> &wd = two ? c.two_d : c.one_d;
      ASSERT_EQ(q.row_scales.size(), ws.size());
      for (size_t i = 0; i < ws.size(); ++i)
        EXPECT_EQ(q.row_scales[i], ws[i]) << "scale " << i;
      ASSERT_EQ(int64_t(wd.size()), c.rows * c.cols / 2);
      for (int64_t i = 0; i < c.rows; ++i)
        for (int64_t j = 0; j < c.cols; j += 2) {
          const uint8_t byte =
              uint8_t(q.row_code(i, j) | (q.row_code(i, j + 1) << 4));
          EXPECT_EQ(byte, wd[size_t((i * c.cols + j) / 2)])
              << "row " << i << " byte " << j / 2;
        }
      if (two) {
        EXPECT_EQ(fusion_rt::f32_bits(q.scale_inv), c.pts_bits);
      } else {
        EXPECT_EQ(q.scale_inv, 1.0f);
      }
    }
  }
}

// nan = IGNORE with a torchao recipe is torch-mlir's spelling of it: its
// clamps (`cmpf ult` + `select`) send a NaN to the lower bound, so the 0 / 0
// scale of an all-zero tensor is 2^-6 (0x08) and a NaN product (0 * Inf)
// the code of -6 (0xF); numbers are as torch eager (the cases above).
TEST(Formats, Nvfp4TorchaoNanIgnoreIsTorchMlirClamp) {
  std::vector<float> tiny(32, 3e-44f);
  tiny[0] = 1e-43f;
  for (int j = 1; j < 17; ++j)
    tiny[size_t(j)] = 0.0f;
  tiny[17] = -0.0f;
  struct Case {
    std::vector<float> x;
    std::vector<uint8_t> s, d;
  } cases[] = {
      {std::vector<float>(32, 0.0f), {0x08, 0x08}, std::vector<uint8_t>(16, 0xff)},
      {tiny, {0x7e, 0x7e},
       {0xf7, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x77, 0x77, 0x77,
        0x77, 0x77, 0x77, 0x77}},
  };
  for (const Case &c : cases) {
    HostMatrix x = make_matrix(c.x, 1, 32, FUSION_RT_F32);
    fusion_rt_quant_scheme s = scheme_of(FUSION_RT_FORMAT_NVFP4, FUSION_RT_ROWWISE);
    s.nvfp4_recipe = FUSION_RT_NVFP4_RECIPE_TORCHAO;
    s.nan_policy = FUSION_RT_NAN_IGNORE;
    QuantBuffers q = quantize(s, x);
    for (size_t i = 0; i < c.s.size(); ++i)
      EXPECT_EQ(q.row_scales[i], c.s[i]) << "scale " << i;
    for (int64_t j = 0; j < 32; j += 2)
      EXPECT_EQ(uint8_t(q.row_code(0, j) | (q.row_code(0, j + 1) << 4)),
                c.d[size_t(j / 2)])
          << "byte " << j / 2;
    EXPECT_EQ(q.scale_inv, 0.0f); // amax / 2688 underflows (or is 0)
  }
}

// The torchao recipes are validated: NVFP4 only, 1x16 blocks, RNE.
TEST(Formats, Nvfp4RecipeIsValidated) {
  HostMatrix x = make_matrix(std::vector<float>(32, 1.0f), 1, 32, FUSION_RT_F32);
  fusion_rt_tensor t = x.view();
  struct Bad {
    int32_t format, block, elem, recipe;
    fusion_rt_status status;
    const char *message;
  } bad[] = {
      {FUSION_RT_FORMAT_NVFP4, FUSION_RT_NVFP4_1D, FUSION_RT_ROUND_RNE, 6,
       FUSION_RT_STATUS_BAD_VALUE, "scheme->nvfp4_recipe = 6"},
      {FUSION_RT_FORMAT_NVFP4, FUSION_RT_NVFP4_1D, FUSION_RT_ROUND_RNE,
       FUSION_RT_NVFP4_RECIPE_RECIPROCAL, FUSION_RT_STATUS_UNSUPPORTED,
       "RECIPROCAL applies to FP8 per-tensor formats with current scaling only"},
      {FUSION_RT_FORMAT_FP8_BLOCK_E4M3, FUSION_RT_NVFP4_1D, FUSION_RT_ROUND_RNE,
       FUSION_RT_NVFP4_RECIPE_RECIPROCAL, FUSION_RT_STATUS_UNSUPPORTED,
       "RECIPROCAL applies to FP8 per-tensor formats with current scaling only"},
      {FUSION_RT_FORMAT_NVFP4, FUSION_RT_NVFP4_1D, FUSION_RT_ROUND_RNE,
       FUSION_RT_NVFP4_RECIPE_MULTIPLY, FUSION_RT_STATUS_UNSUPPORTED,
       "MULTIPLY / MULTIPLIER applies to the FP8 block formats only"},
      {FUSION_RT_FORMAT_NVFP4, FUSION_RT_NVFP4_1D, FUSION_RT_ROUND_RNE,
       FUSION_RT_NVFP4_RECIPE_MULTIPLIER, FUSION_RT_STATUS_UNSUPPORTED,
       "MULTIPLY / MULTIPLIER applies to the FP8 block formats only"},
      {FUSION_RT_FORMAT_NVFP4, FUSION_RT_NVFP4_1D, FUSION_RT_ROUND_RNE, -1,
       FUSION_RT_STATUS_BAD_VALUE, "scheme->nvfp4_recipe = -1"},
      {FUSION_RT_FORMAT_MXFP4, FUSION_RT_NVFP4_1D, FUSION_RT_ROUND_RNE,
       FUSION_RT_NVFP4_RECIPE_TORCHAO, FUSION_RT_STATUS_UNSUPPORTED,
       "applies to NVFP4 only"},
      {FUSION_RT_FORMAT_NVFP4, FUSION_RT_NVFP4_2D, FUSION_RT_ROUND_RNE,
       FUSION_RT_NVFP4_RECIPE_TORCHAO, FUSION_RT_STATUS_UNSUPPORTED,
       "1x16 blocks and RNE"},
      {FUSION_RT_FORMAT_NVFP4, FUSION_RT_NVFP4_1D, FUSION_RT_ROUND_STOCHASTIC,
       FUSION_RT_NVFP4_RECIPE_TORCHAO_BLOCK, FUSION_RT_STATUS_UNSUPPORTED,
       "1x16 blocks and RNE"},
  };
  for (const Bad &b : bad) {
    fusion_rt_quant_scheme s = scheme_of(b.format, FUSION_RT_ROWWISE);
    QuantBuffers q;
    q.alloc(s, 1, 32, false, false, false, 0xAB);
    s.nvfp4_block = b.block;
    s.elem_rounding = b.elem;
    s.nvfp4_recipe = b.recipe;
    EXPECT_EQ(fusion_rt_quantize(&t, &s, &q.out, nullptr, nullptr), b.status);
    EXPECT_NE(std::string(fusion_rt_last_error_message()).find(b.message),
              std::string::npos)
        << fusion_rt_last_error_message();
    for (uint8_t v : q.row_data)
      EXPECT_EQ(v, 0xAB); // nothing written
  }
}

// NVFP4's decode scale (scale_inv) is optional when quantizing: it follows
// from amax, and a caller without a device scalar for it (the MLIR
// wrappers) leaves it out. Dequantizing reads it, so it is required there.
TEST(Formats, Nvfp4ScaleInvIsOptionalWhenQuantizing) {
  std::vector<float> v(64);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = float(int(i) - 20) * 0.37f;
  HostMatrix x = make_matrix(v, 2, 32, FUSION_RT_BF16);
  fusion_rt_tensor t = x.view();
  for (int32_t recipe : {int32_t(FUSION_RT_NVFP4_RECIPE_TE),
                         int32_t(FUSION_RT_NVFP4_RECIPE_TORCHAO),
                         int32_t(FUSION_RT_NVFP4_RECIPE_TORCHAO_BLOCK)}) {
    fusion_rt_quant_scheme s = scheme_of(FUSION_RT_FORMAT_NVFP4, FUSION_RT_ROWWISE);
    s.nvfp4_recipe = recipe;
    QuantBuffers full = quantize(s, x);
    QuantBuffers part;
    part.alloc(s, 2, 32);
    part.out.scale_inv = fusion_rt_tensor{};
    ASSERT_EQ(fusion_rt_quantize(&t, &s, &part.out, nullptr, nullptr),
              FUSION_RT_STATUS_SUCCESS)
        << fusion_rt_last_error_message();
    EXPECT_EQ(part.row_data, full.row_data) << "recipe " << recipe;
    EXPECT_EQ(part.row_scales, full.row_scales) << "recipe " << recipe;
    EXPECT_EQ(part.amax, full.amax) << "recipe " << recipe;

    std::vector<float> out(64, -1.f);
    fusion_rt_tensor ov = view2d(out.data(), FUSION_RT_F32, 2, 32);
    EXPECT_EQ(fusion_rt_dequantize(&part.scheme, &part.out, FUSION_RT_ROWWISE,
                                   &ov, nullptr, nullptr),
              FUSION_RT_STATUS_NULL_POINTER);
    EXPECT_NE(std::string(fusion_rt_last_error_message())
                  .find("quantized->scale_inv has no data"),
              std::string::npos)
        << fusion_rt_last_error_message();
    for (float o : out)
      EXPECT_EQ(o, -1.f); // nothing written
  }
}
