//===- fused_test.cpp - fused activation+quantize equals unfused ----------===//
//
// For every activation (forward and backward), every format and every
// direction: fusion_rt_act_quantize / fusion_rt_gated_act_quantize give the
// same bits as fusion_rt_activation_apply (rounded to the intermediate type)
// followed by fusion_rt_quantize. Also: dbias, packed vs split gated inputs,
// the gated-backward scale layout, and the activation formulas against
// double-precision references.
//
//===----------------------------------------------------------------------===//
#include "test_util.h"

#include "common/activation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace fusion_rt_test;

namespace {

constexpr int32_t kFormats[] = {
    FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_FORMAT_MXFP8_E5M2, FUSION_RT_FORMAT_MXFP4,
    FUSION_RT_FORMAT_NVFP4,      FUSION_RT_FORMAT_FP8_E4M3,   FUSION_RT_FORMAT_FP8_E5M2};
constexpr int32_t kDirections[] = {FUSION_RT_ROWWISE, FUSION_RT_COLWISE,
                                   FUSION_RT_BOTH};

fusion_rt_quant_scheme fused_scheme(int32_t f, int32_t dir, int variant) {
  // Alternate colwise layouts and scale layouts across formats.
  fusion_rt_quant_scheme s =
      scheme_of(f, dir, variant % 2 ? FUSION_RT_COLWISE_TRANSPOSED : FUSION_RT_COLWISE_SAME,
                variant % 3 == 1 ? FUSION_RT_SCALES_SWIZZLED : FUSION_RT_SCALES_COMPACT);
  if (variant % 4 == 3)
    s.nan_policy = FUSION_RT_NAN_IGNORE;
  return s;
}

/// Activation inputs with some values beyond the clamp limit and some NaNs.
std::vector<float> act_values(int64_t n, uint32_t seed) {
  std::vector<float> v = random_values(n, seed, false);
  for (int64_t i = 0; i < n; ++i) {
    v[size_t(i)] *= 4.f;
    if (i % 97 == 13)
      v[size_t(i)] = 9.f; // beyond the clamped-SwiGLU limit
  }
  return v;
}

struct Case {
  int32_t kind;
  bool backward;
  int32_t in_dtype, inter;
};

} // namespace

TEST(Fused, NonGatedEqualsUnfusedEveryActivationFormatDirection) {
  const int64_t m = 40, n = 70;
  int variant = 0, runs = 0;
  for (int32_t kind = FUSION_RT_ACT_IDENTITY; kind <= FUSION_RT_ACT_SRELU; ++kind)
    for (int bwd = 0; bwd <= FUSION_RT_BACKWARD_MASK_SELECT; ++bwd) {
      const int32_t in_dt = (kind + bwd) % 3 == 0   ? FUSION_RT_F32
                            : (kind + bwd) % 3 == 1 ? FUSION_RT_BF16
                                                    : FUSION_RT_F16;
      const int32_t inter = kind % 2 ? FUSION_RT_BF16 : in_dt;
      HostMatrix x = make_matrix(act_values(m * n, uint32_t(kind)), m, n, in_dt);
      HostMatrix g = make_matrix(random_values(m * n, 99u + uint32_t(kind), false),
                                 m, n, in_dt);
      fusion_rt_activation act;
      fusion_rt_activation_init(&act);
      act.kind = kind;
      act.backward = bwd;
      act.intermediate_dtype = inter;
      fusion_rt_tensor xv = x.view(), gv = g.view();
      // Unfused: the activation stored in the intermediate type.
      HostMatrix y = make_matrix(std::vector<float>(size_t(m * n), 0.f), m, n, inter);
      fusion_rt_tensor yv = y.view();
      std::vector<float> dbias_unfused(static_cast<size_t>(n));
      fusion_rt_tensor dbv = view1d(dbias_unfused.data(), FUSION_RT_F32, n);
      ASSERT_EQ(fusion_rt_activation_apply(&xv, nullptr, bwd ? &gv : nullptr, &act,
                                           &yv, &dbv, nullptr, nullptr),
                FUSION_RT_STATUS_SUCCESS)
          << fusion_rt_last_error_message();
      for (int32_t f : kFormats)
        for (int32_t dir : kDirections) {
          fusion_rt_quant_scheme s = fused_scheme(f, dir, variant++);
          SCOPED_TRACE(describe(s) + " kind " + std::to_string(kind) +
                       (bwd ? " bwd" : " fwd"));
          QuantBuffers fused, unfused;
          fused.alloc(s, m, n, false, true, true);
          unfused.alloc(s, m, n, false, true, true);
          ASSERT_EQ(fusion_rt_act_quantize(&xv, bwd ? &gv : nullptr, &act, &s,
                                           &fused.out, nullptr, nullptr),
                    FUSION_RT_STATUS_SUCCESS)
              << fusion_rt_last_error_message();
          ASSERT_EQ(fusion_rt_quantize(&yv, &s, &unfused.out, nullptr, nullptr),
                    FUSION_RT_STATUS_SUCCESS)
              << fusion_rt_last_error_message();
          // dbias of the fused op covers the pre-rounding values; the unfused
          // quantize's dbias sums the rounded ones: compare it with the
          // activation's own dbias instead.
          EXPECT_EQ(0, std::memcmp(fused.dbias.data(), dbias_unfused.data(),
                                   size_t(n) * 4));
          unfused.dbias = fused.dbias;
          EXPECT_EQ(diff(fused, unfused), "");
          ++runs;
        }
    }
  EXPECT_EQ(runs, 7 * 3 * 6 * 3);
}

TEST(Fused, GatedEqualsUnfusedEveryActivationFormatDirection) {
  const int64_t m = 37, k = 45;
  int variant = 0, runs = 0;
  for (int32_t kind = FUSION_RT_ACT_SWIGLU; kind <= FUSION_RT_ACT_LAST; ++kind)
    for (int bwd = 0; bwd <= FUSION_RT_BACKWARD_MASK_SELECT; ++bwd) {
      const int32_t in_dt = kind % 2 ? FUSION_RT_BF16 : FUSION_RT_F32;
      const int32_t inter = bwd ? FUSION_RT_BF16 : (kind % 3 ? in_dt : FUSION_RT_F16);
      HostMatrix packed =
          make_matrix(act_values(m * 2 * k, uint32_t(kind) * 3u), m, 2 * k, in_dt);
      HostMatrix g = make_matrix(random_values(m * k, 7u + uint32_t(kind), false), m,
                                 k, in_dt);
      fusion_rt_activation act;
      fusion_rt_activation_init(&act);
      act.kind = kind;
      act.backward = bwd;
      act.intermediate_dtype = inter;
      if (kind == FUSION_RT_ACT_CLAMPED_SWIGLU) {
        act.limit = 7.f;
        act.offset = 1.f;
        act.alpha = 1.702f;
      }
      fusion_rt_tensor pv = packed.view(), gv = g.view();
      // Split views of the same data: gate = columns [0, K), up = [K, 2K).
      fusion_rt_tensor gate = pv, up = pv;
      gate.sizes[1] = k;
      up.sizes[1] = k;
      up.data = packed.bytes.data() + k * (in_dt == FUSION_RT_F32 ? 4 : 2);
      const int64_t cols = bwd ? 2 * k : k;
      HostMatrix y =
          make_matrix(std::vector<float>(size_t(m * cols), 0.f), m, cols, inter);
      fusion_rt_tensor yv = y.view();
      ASSERT_EQ(fusion_rt_activation_apply(&pv, nullptr, bwd ? &gv : nullptr, &act,
                                           &yv, nullptr, nullptr, nullptr),
                FUSION_RT_STATUS_SUCCESS)
          << fusion_rt_last_error_message();
      for (int32_t f : kFormats)
        for (int32_t dir : kDirections) {
          fusion_rt_quant_scheme s = fused_scheme(f, dir, variant++);
          if (bwd && f == FUSION_RT_FORMAT_NVFP4)
            s.nvfp4_block = FUSION_RT_NVFP4_1D;
          SCOPED_TRACE(describe(s) + " kind " + std::to_string(kind) +
                       (bwd ? " bwd" : " fwd"));
          QuantBuffers fused, split, unfused;
          fused.alloc(s, m, cols, bwd != 0, true);
          split.alloc(s, m, cols, bwd != 0, true);
          ASSERT_EQ(fusion_rt_gated_act_quantize(&pv, nullptr, bwd ? &gv : nullptr,
                                                 &act, &s, &fused.out, nullptr,
                                                 nullptr),
                    FUSION_RT_STATUS_SUCCESS)
              << fusion_rt_last_error_message();
          ASSERT_EQ(fusion_rt_gated_act_quantize(&gate, &up, bwd ? &gv : nullptr,
                                                 &act, &s, &split.out, nullptr,
                                                 nullptr),
                    FUSION_RT_STATUS_SUCCESS)
              << fusion_rt_last_error_message();
          EXPECT_EQ(diff(fused, split), "");
          if (!bwd) {
            unfused.alloc(s, m, cols, false, true);
            ASSERT_EQ(fusion_rt_quantize(&yv, &s, &unfused.out, nullptr, nullptr),
                      FUSION_RT_STATUS_SUCCESS);
            EXPECT_EQ(diff(fused, unfused), "");
          } else {
            // The unfused backward quantizes [dact | dgate] as two tensors
            // (separate scales): quantize each half and compare its blocks.
            for (int half = 0; half < 2; ++half) {
              fusion_rt_tensor hv = yv;
              hv.sizes[1] = k;
              hv.data = y.bytes.data() +
                        half * k * (inter == FUSION_RT_F32 ? 4 : 2);
              fusion_rt_quant_scheme hs = s;
              hs.direction = FUSION_RT_ROWWISE;
              hs.scale_layout = FUSION_RT_SCALES_COMPACT;
              if (f == FUSION_RT_FORMAT_NVFP4 || f >= FUSION_RT_FORMAT_FP8_E4M3)
                continue; // tensor-scaled formats share one global scale
              if (s.direction == FUSION_RT_COLWISE)
                continue;
              QuantBuffers hq;
              hq.alloc(hs, m, k);
              ASSERT_EQ(fusion_rt_quantize(&hv, &hs, &hq.out, nullptr, nullptr),
                        FUSION_RT_STATUS_SUCCESS);
              const int64_t nbk = (k + 31) / 32;
              QuantBuffers compact;
              fusion_rt_quant_scheme cs = s;
              cs.scale_layout = FUSION_RT_SCALES_COMPACT;
              compact.alloc(cs, m, cols, true);
              ASSERT_EQ(fusion_rt_gated_act_quantize(&pv, nullptr, &gv, &act, &cs,
                                                     &compact.out, nullptr, nullptr),
                        FUSION_RT_STATUS_SUCCESS);
              for (int64_t i = 0; i < m; ++i) {
                for (int64_t j = 0; j < k; ++j)
                  ASSERT_EQ(compact.row_code(i, half * k + j), hq.row_code(i, j));
                for (int64_t b = 0; b < nbk; ++b)
                  ASSERT_EQ(compact.row_scales[size_t(i * 2 * nbk + half * nbk + b)],
                            hq.row_scales[size_t(i * nbk + b)]);
              }
            }
          }
          ++runs;
        }
    }
  EXPECT_EQ(runs, (FUSION_RT_ACT_LAST - FUSION_RT_ACT_SWIGLU + 1) * 3 * 6 * 3);
}

// FUSION_RT_BACKWARD_MASK_SELECT: a masked derivative gives a selected +0
// (autograd's threshold_backward / clamp backward), FUSION_RT_BACKWARD the
// product grad * 0 (-0 for a negative grad, NaN for an infinite one); a NaN
// relu-family input is not masked; unmasked values are the same in both.
TEST(Fused, MaskSelectGivesPositiveZeroWhereMasked) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  auto bits = [](float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  };
  // Columns: x, grad (and up = 0.5 for the gated kinds).
  const float xs[] = {-2.f, -0.f, 0.f, -2.f, 3.f, 3.f, nan, -1.f};
  const float gs[] = {-1.5f, -1.f, -1.f, inf, -1.5f, 2.f, -1.25f, nan};
  const int64_t n = 8;
  for (int32_t kind : {FUSION_RT_ACT_RELU, FUSION_RT_ACT_SRELU, FUSION_RT_ACT_REGLU,
                       FUSION_RT_ACT_SREGLU})
    for (int32_t mode : {FUSION_RT_BACKWARD, FUSION_RT_BACKWARD_MASK_SELECT}) {
      SCOPED_TRACE("kind " + std::to_string(kind) + " mode " + std::to_string(mode));
      const bool gated = kind >= FUSION_RT_ACT_SWIGLU;
      std::vector<float> in(xs, xs + n);
      if (gated)
        in.insert(in.end(), size_t(n), 0.5f); // [gate | up]
      HostMatrix x = make_matrix(in, 1, gated ? 2 * n : n, FUSION_RT_F32);
      HostMatrix g = make_matrix(std::vector<float>(gs, gs + n), 1, n, FUSION_RT_F32);
      HostMatrix y = make_matrix(std::vector<float>(size_t(gated ? 2 * n : n), 7.f), 1,
                                 gated ? 2 * n : n, FUSION_RT_F32);
      fusion_rt_activation act;
      fusion_rt_activation_init(&act);
      act.kind = kind;
      act.backward = mode;
      fusion_rt_tensor xv = x.view(), gv = g.view(), yv = y.view();
      ASSERT_EQ(fusion_rt_activation_apply(&xv, nullptr, &gv, &act, &yv, nullptr,
                                           nullptr, nullptr),
                FUSION_RT_STATUS_SUCCESS)
          << fusion_rt_last_error_message();
      const bool sq = kind == FUSION_RT_ACT_SRELU || kind == FUSION_RT_ACT_SREGLU;
      const float up = gated ? 0.5f : 1.f;
      for (int64_t j = 0; j < n; ++j) {
        const float got = y.at(0, j), xj = xs[j], gj = gs[j];
        SCOPED_TRACE("x " + std::to_string(xj) + " grad " + std::to_string(gj));
        if (xj > 0.f) { // not masked: d * grad (* up) in both modes
          EXPECT_EQ(bits(got), bits((sq ? 2.f * xj : 1.f) * gj * up));
        } else if (xj != xj) { // NaN input
          if (mode == FUSION_RT_BACKWARD)
            EXPECT_EQ(bits(got), bits(0.f * gj * up)); // drelu(NaN) = 0
          else if (sq)
            EXPECT_TRUE(got != got); // threshold passes 2 * NaN * grad
          else
            EXPECT_EQ(bits(got), bits(gj * up)); // threshold passes grad
        } else if (mode == FUSION_RT_BACKWARD_MASK_SELECT) {
          EXPECT_EQ(bits(got), 0u); // +0, whatever the grad
        } else {
          EXPECT_EQ(bits(got), bits(0.f * gj * up)); // -0, or NaN for Inf
        }
      }
    }
  // The clamped SwiGLU: the gate's derivative is masked above the limit
  // (and for a NaN gate).
  for (int32_t mode : {FUSION_RT_BACKWARD, FUSION_RT_BACKWARD_MASK_SELECT}) {
    fusion_rt::ActParams p;
    p.mask_select = mode == FUSION_RT_BACKWARD_MASK_SELECT;
    for (float a : {9.f, nan}) {
      float da, dg;
      fusion_rt::gated_backward(fusion_rt::kActClampedSwiGLU, a, 0.5f, -1.f, p, da,
                                dg);
      EXPECT_EQ(bits(da), p.mask_select ? 0u : bits(0.f * -1.f * 1.5f)) << a;
    }
  }
}

// The fused dbias is the f32 column sum of the pre-rounding (fp32) values,
// in the documented order (32-row bands), close to the exact sum.
TEST(Fused, DbiasSumsPreRoundingValues) {
  const int64_t m = 100, n = 33;
  HostMatrix x = make_matrix(act_values(m * n, 3), m, n, FUSION_RT_F32);
  HostMatrix g = make_matrix(random_values(m * n, 4, false), m, n, FUSION_RT_F32);
  fusion_rt_activation act;
  fusion_rt_activation_init(&act);
  act.kind = FUSION_RT_ACT_GELU_TANH;
  act.backward = 1;
  act.intermediate_dtype = FUSION_RT_BF16;
  fusion_rt_quant_scheme s = scheme_of(FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_BOTH);
  QuantBuffers q;
  q.alloc(s, m, n, false, false, true);
  fusion_rt_tensor xv = x.view(), gv = g.view();
  ASSERT_EQ(fusion_rt_act_quantize(&xv, &gv, &act, &s, &q.out, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS);
  fusion_rt::ActParams p;
  for (int64_t j = 0; j < n; ++j) {
    // The documented order: f32 sums over 32-row bands, then over bands.
    double exact = 0;
    float total = 0.f;
    for (int64_t b = 0; b < m; b += 32) {
      float band = 0.f;
      for (int64_t i = b; i < std::min(m, b + 32); ++i) {
        float e = fusion_rt::act_backward(act.kind, x.at(i, j), g.at(i, j), p);
        exact += e;
        band += e;
      }
      total += band;
    }
    EXPECT_EQ(q.dbias[size_t(j)], total) << j;
    EXPECT_NEAR(q.dbias[size_t(j)], exact, 1e-4 * (1 + std::fabs(exact)));
  }
}

// A column whose sum is NaN (Inf - Inf, or a NaN input) gets the dbias bits
// 0x7FC00000, the same on every backend (x86's own NaN would be 0xFFC00000).
TEST(Fused, DbiasNaNIsCanonical) {
  const int64_t m = 40, n = 4;
  std::vector<float> xv(size_t(m * n), 1.f), gv(size_t(m * n), 0.5f);
  const float inf = std::numeric_limits<float>::infinity();
  gv[0 * n + 0] = inf; // column 0: +Inf (band 0) - Inf (band 1) = NaN
  gv[35 * n + 0] = -inf;
  gv[3 * n + 1] = inf; // column 1: +Inf - Inf in one band
  gv[4 * n + 1] = -inf;
  gv[5 * n + 2] = std::numeric_limits<float>::quiet_NaN(); // column 2: NaN
  HostMatrix x = make_matrix(xv, m, n, FUSION_RT_F32);
  HostMatrix g = make_matrix(gv, m, n, FUSION_RT_F32);
  fusion_rt_activation act;
  fusion_rt_activation_init(&act);
  act.kind = FUSION_RT_ACT_IDENTITY;
  act.backward = 1;
  fusion_rt_quant_scheme s = scheme_of(FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_ROWWISE);
  QuantBuffers q;
  q.alloc(s, m, n, false, false, true);
  fusion_rt_tensor xvw = x.view(), gvw = g.view();
  ASSERT_EQ(fusion_rt_act_quantize(&xvw, &gvw, &act, &s, &q.out, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS);
  for (int j = 0; j < 3; ++j) {
    uint32_t bits;
    std::memcpy(&bits, &q.dbias[size_t(j)], 4);
    EXPECT_EQ(bits, 0x7fc00000u) << "column " << j;
  }
  EXPECT_EQ(q.dbias[3], 0.5f * m);
}

// Activation formulas against double-precision definitions.
TEST(Fused, ActivationMathMatchesDoubleReferences) {
  fusion_rt::ActParams p;
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  for (int i = -400; i <= 400; ++i) {
    const float xf = i * 0.02f;
    const double x = xf;
    const double gelu = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    const double dgelu =
        0.5 * (1 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-x * x / 2) / std::sqrt(2 * M_PI);
    const double t = std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x));
    const double gelu_tanh = 0.5 * x * (1 + t);
    const double dgelu_tanh = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * std::sqrt(2 / M_PI) *
                                                 (1 + 3 * 0.044715 * x * x);
    const double silu = x * sig(x);
    const double dsilu = sig(x) * (1 + x * (1 - sig(x)));
    const double a = 1.702;
    const double qgelu = x * sig(a * x);
    const double dqgelu = sig(a * x) + a * x * sig(a * x) * (1 - sig(a * x));
    struct {
      int32_t kind;
      double f, d;
    } refs[] = {{fusion_rt::kActGelu, gelu, dgelu},
                {fusion_rt::kActGeluTanh, gelu_tanh, dgelu_tanh},
                {fusion_rt::kActSilu, silu, dsilu},
                {fusion_rt::kActQGelu, qgelu, dqgelu},
                {fusion_rt::kActRelu, x > 0 ? x : 0, x > 0 ? 1.0 : 0.0},
                {fusion_rt::kActSRelu, x > 0 ? x * x : 0, x > 0 ? 2 * x : 0}};
    for (auto &r : refs) {
      EXPECT_NEAR(fusion_rt::act_forward(r.kind, xf, p), r.f, 2e-6 * (1 + std::fabs(r.f)))
          << r.kind << " x=" << x;
      EXPECT_NEAR(fusion_rt::act_derivative(r.kind, xf, p), r.d,
                  2e-5 * (1 + std::fabs(r.d)))
          << r.kind << " x=" << x;
    }
    // Gated: act(a) * g and the clamped SwiGLU.
    const float gf = 0.75f - i * 0.01f;
    EXPECT_NEAR(fusion_rt::gated_forward(fusion_rt::kActSwiGLU, xf, gf, p), silu * gf,
                2e-6 * (1 + std::fabs(silu * gf)));
    const double xc = std::min(x, 7.0), gc = std::max(-7.0, std::min(7.0, double(gf))) + 1;
    EXPECT_NEAR(fusion_rt::gated_forward(fusion_rt::kActClampedSwiGLU, xf, gf, p),
                xc * sig(a * xc) * gc, 2e-5 * (1 + std::fabs(xc * gc)));
    float da, dg;
    fusion_rt::gated_backward(fusion_rt::kActSwiGLU, xf, gf, 0.5f, p, da, dg);
    EXPECT_NEAR(da, dsilu * 0.5 * gf, 2e-5 * (1 + std::fabs(dsilu)));
    EXPECT_NEAR(dg, silu * 0.5, 2e-5 * (1 + std::fabs(silu)));
  }
  // NaN propagates through relu, srelu and the clamps.
  const float nan = std::nanf("");
  EXPECT_TRUE(std::isnan(fusion_rt::act_forward(fusion_rt::kActRelu, nan, p)));
  EXPECT_TRUE(std::isnan(fusion_rt::act_forward(fusion_rt::kActSRelu, nan, p)));
  EXPECT_TRUE(std::isnan(fusion_rt::gated_forward(fusion_rt::kActClampedSwiGLU, nan, 1.f, p)));
  // Clamped SwiGLU: no gradient through the clamp.
  float da, dg;
  fusion_rt::gated_backward(fusion_rt::kActClampedSwiGLU, 8.f, 9.f, 1.f, p, da, dg);
  EXPECT_EQ(da, 0.f);
  EXPECT_EQ(dg, 0.f);
}
