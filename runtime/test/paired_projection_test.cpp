//===- paired_projection_test.cpp - CPU reference and validation of the paired projection -===//
//
// fusion_rt_paired_projection_run on host memory (the CPU reference):
//  - against an independent fp64 reference for every epilogue, gated kind,
//    input and output dtype (norm-wise relative error, f32 outputs <= 1e-5);
//  - bit for bit against the documented order (sequential fp32 over K);
//  - strided and transposed weight views, thread-count independence,
//    softplus threshold, empty shapes;
//  - every validation path: status, a message naming the argument, and no
//    output element written.
//
//===----------------------------------------------------------------------===//
#include "test_util.h"

#include "common/convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace fusion_rt_test;

namespace {

double sigmoid_d(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus_d(double x) { return x > 20.0 ? x : std::log1p(std::exp(x)); }

double epilogue_d(int kind, double y, bool hb, double b, bool hs, double s) {
  const double t = hb ? y + b : y;
  switch (kind) {
  case FUSION_RT_EPILOGUE_SIGMOID:
    return sigmoid_d(t);
  case FUSION_RT_EPILOGUE_SILU:
    return t * sigmoid_d(t);
  case FUSION_RT_EPILOGUE_SOFTPLUS_BIAS_SCALE:
    return softplus_d(t) * (hs ? s : 1.0);
  default:
    return t;
  }
}

double gated_d(int kind, double a, double g) {
  switch (kind) {
  case FUSION_RT_ACT_SWIGLU:
    return a * sigmoid_d(a) * g;
  case FUSION_RT_ACT_REGLU:
    return (a > 0 ? a : 0) * g;
  case FUSION_RT_ACT_GEGLU:
    return a * (0.5 + 0.5 * std::tanh(a * (0.7978845608028654 +
                                            0.035677408136300125 * a * a))) *
           g;
  case FUSION_RT_ACT_GEGLU_ERF:
    return 0.5 * a * (1.0 + std::erf(a * 0.7071067811865476)) * g;
  default:
    return NAN;
  }
}

/// A paired projection on host buffers: lhs [M, K], w0 [H0, K], w1 [H1, K],
/// epilogue vectors, outputs filled with a sentinel.
struct Pair {
  int64_t m, k, h0, h1;
  int32_t dt, out_dt0 = FUSION_RT_F32, out_dt1 = FUSION_RT_F32;
  HostMatrix lhs, w0, w1, b0, s0, b1, s1, o0, o1;
  fusion_rt_paired_projection d{};
  bool transposed_w1 = false;

  Pair(int64_t m_, int64_t k_, int64_t h0_, int64_t h1_, int32_t dt_,
       uint32_t seed = 7, int32_t od0 = FUSION_RT_F32, int32_t od1 = FUSION_RT_F32,
       bool transpose_w1 = false)
      : m(m_), k(k_), h0(h0_), h1(h1_), dt(dt_), out_dt0(od0), out_dt1(od1),
        transposed_w1(transpose_w1) {
    lhs = make_matrix(random_values(m * k, seed, false), m, k, dt);
    w0 = make_matrix(scaled(random_values(h0 * k, seed + 1, false)), h0, k, dt, k + 8);
    if (transpose_w1) // stored [K, H1]; the view is its transpose
      w1 = make_matrix(scaled(random_values(h1 * k, seed + 2, false)), k, h1, dt);
    else
      w1 = make_matrix(scaled(random_values(h1 * k, seed + 2, false)), h1, k, dt);
    b0 = make_matrix(random_values(h0, seed + 3, false), 1, h0, FUSION_RT_F32);
    s0 = make_matrix(random_values(h0, seed + 4, false), 1, h0, FUSION_RT_F32);
    b1 = make_matrix(random_values(h1, seed + 5, false), 1, h1, dt);
    s1 = make_matrix(random_values(h1, seed + 6, false), 1, h1, dt);
    o0 = make_matrix(std::vector<float>(size_t(m * h0), 0.f), m, h0, out_dt0);
    o1 = make_matrix(std::vector<float>(size_t(m * h1), 0.f), m, h1, out_dt1);
    poison();
    d.lhs = lhs.view();
    d.weight0 = w0.view();
    d.weight1 = w1.view();
    if (transpose_w1)
      d.weight1 = view2d(w1.bytes.data(), dt, h1, k, 1, h1);
    d.gated_kind = -1;
    d.accumulate_dtype = FUSION_RT_F32;
    d.epilogue0.kind = FUSION_RT_EPILOGUE_SIGMOID;
    d.epilogue1.kind = FUSION_RT_EPILOGUE_SOFTPLUS_BIAS_SCALE;
    d.epilogue1.bias = view1d(b1.bytes.data(), dt, h1);
    d.epilogue1.scale = view1d(s1.bytes.data(), dt, h1);
    d.out0 = o0.view();
    d.out1 = o1.view();
  }
  /// Weights ~ N(0, 1/K) so that y ~ N(0, 1): the epilogues see their
  /// interesting range.
  std::vector<float> scaled(std::vector<float> v) const {
    const float f = 1.f / std::sqrt(float(k > 0 ? k : 1));
    for (float &x : v)
      x *= f;
    return v;
  }
  void poison() {
    std::fill(o0.bytes.begin(), o0.bytes.end(), 0xAB);
    std::fill(o1.bytes.begin(), o1.bytes.end(), 0xAB);
  }
  bool untouched() const {
    for (uint8_t b : o0.bytes)
      if (b != 0xAB)
        return false;
    for (uint8_t b : o1.bytes)
      if (b != 0xAB)
        return false;
    return true;
  }
  float w1_at(int64_t n, int64_t j) const {
    return transposed_w1 ? w1.at(j, n) : w1.at(n, j);
  }
  double y_d(int i, int64_t r, int64_t n) const {
    double acc = 0;
    for (int64_t j = 0; j < k; ++j)
      acc += double(lhs.at(r, j)) * double(i == 0 ? w0.at(n, j) : w1_at(n, j));
    return acc;
  }
  float y_f(int i, int64_t r, int64_t n) const {
    float acc = 0.f;
    for (int64_t j = 0; j < k; ++j) {
      const float p = lhs.at(r, j) * (i == 0 ? w0.at(n, j) : w1_at(n, j));
      acc = acc + p;
    }
    return acc;
  }
  fusion_rt_status run(const fusion_rt_options *opt = nullptr) {
    return fusion_rt_paired_projection_run(&d, opt, nullptr);
  }
};

/// The epilogue's bias / scale of output i, column n, from the descriptor.
struct Vec {
  bool has;
  const HostMatrix *m;
  double at(int64_t n) const { return has ? double(m->at(0, n)) : 0.0; }
};

/// Norm-wise relative error of output i against the fp64 reference.
double rel_err(const Pair &p, int i) {
  const fusion_rt_epilogue &e = i == 0 ? p.d.epilogue0 : p.d.epilogue1;
  const HostMatrix &o = i == 0 ? p.o0 : p.o1;
  const int64_t h = i == 0 ? p.h0 : p.h1;
  Vec b{e.bias.data != nullptr, i == 0 ? &p.b0 : &p.b1};
  Vec s{e.scale.data != nullptr, i == 0 ? &p.s0 : &p.s1};
  double num = 0, den = 0;
  for (int64_t r = 0; r < p.m; ++r)
    for (int64_t n = 0; n < h; ++n) {
      double ref;
      if (p.d.gated_kind >= 0) {
        Vec b1{p.d.epilogue1.bias.data != nullptr, &p.b1};
        ref = gated_d(p.d.gated_kind, p.y_d(0, r, n) + b.at(n),
                      p.y_d(1, r, n) + b1.at(n));
      } else {
        ref = epilogue_d(e.kind, p.y_d(i, r, n), b.has, b.at(n), s.has, s.at(n));
      }
      const double got = o.at(r, n);
      if (std::isnan(got))
        return INFINITY;
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

const int32_t kDtypes[] = {FUSION_RT_BF16, FUSION_RT_F16, FUSION_RT_F32};

} // namespace

TEST(PairedProjectionCpu, EveryEpilogueAndDtypeMatchesFp64) {
  for (int32_t dt : kDtypes)
    for (int k0 = 0; k0 <= 4; ++k0)
      for (int k1 = 0; k1 <= 4; ++k1) {
        Pair p(5, 300, 17, 9, dt, 11 + k0 * 5 + k1);
        p.d.epilogue0.kind = k0;
        p.d.epilogue1.kind = k1;
        // bias: f32 on out0, the input dtype on out1; scale likewise.
        p.d.epilogue0.bias = k0 != 0 ? view1d(p.b0.bytes.data(), FUSION_RT_F32, p.h0)
                                     : fusion_rt_tensor{};
        p.d.epilogue0.scale = k0 == 4 ? view1d(p.s0.bytes.data(), FUSION_RT_F32, p.h0)
                                      : fusion_rt_tensor{};
        p.d.epilogue1.bias =
            k1 != 0 && k1 != 2 ? view1d(p.b1.bytes.data(), dt, p.h1) : fusion_rt_tensor{};
        p.d.epilogue1.scale =
            k1 == 4 ? view1d(p.s1.bytes.data(), dt, p.h1) : fusion_rt_tensor{};
        ASSERT_EQ(p.run(), FUSION_RT_STATUS_SUCCESS)
            << fusion_rt_last_error_message();
        EXPECT_LE(rel_err(p, 0), 1e-5) << "dtype " << dt << " epilogue " << k0;
        EXPECT_LE(rel_err(p, 1), 1e-5) << "dtype " << dt << " epilogue " << k1;
      }
}

TEST(PairedProjectionCpu, AccumulationOrderIsSequentialFp32) {
  for (int32_t dt : kDtypes) {
    Pair p(3, 1000, 8, 8, dt, 99);
    p.d.epilogue0.kind = FUSION_RT_EPILOGUE_NONE;
    p.d.epilogue1 = fusion_rt_epilogue{};
    ASSERT_EQ(p.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
    for (int64_t r = 0; r < p.m; ++r)
      for (int64_t n = 0; n < 8; ++n) {
        const float y0 = p.y_f(0, r, n), y1 = p.y_f(1, r, n);
        EXPECT_EQ(fusion_rt::f32_bits(p.o0.at(r, n)), fusion_rt::f32_bits(y0));
        EXPECT_EQ(fusion_rt::f32_bits(p.o1.at(r, n)), fusion_rt::f32_bits(y1));
      }
  }
}

// SIGMOID and SILU with a bias are sigmoid(y + b) and silu(y + b): the bias
// is added to the fp32 accumulation before the activation (not after it),
// for an f32 bias and for one of the input dtype. The expected value is the
// formula of common/epilogue.h written out, on the sequential fp32 sum.
TEST(PairedProjectionCpu, SigmoidAndSiluAddTheBiasBeforeTheActivation) {
  for (int32_t dt : kDtypes) {
    Pair p(3, 96, 8, 8, dt, 41);
    p.d.epilogue0.kind = FUSION_RT_EPILOGUE_SIGMOID;
    p.d.epilogue0.bias = view1d(p.b0.bytes.data(), FUSION_RT_F32, p.h0);
    p.d.epilogue1 = fusion_rt_epilogue{};
    p.d.epilogue1.kind = FUSION_RT_EPILOGUE_SILU;
    p.d.epilogue1.bias = view1d(p.b1.bytes.data(), dt, p.h1);
    ASSERT_EQ(p.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
    bool biasMatters = false;
    for (int64_t r = 0; r < p.m; ++r)
      for (int64_t n = 0; n < 8; ++n) {
        const float t0 = p.y_f(0, r, n) + p.b0.at(0, n);
        const float t1 = p.y_f(1, r, n) + p.b1.at(0, n);
        const float sig0 = 1.f / (1.f + expf(-t0));
        const float silu1 = t1 * (1.f / (1.f + expf(-t1)));
        EXPECT_EQ(fusion_rt::f32_bits(p.o0.at(r, n)), fusion_rt::f32_bits(sig0))
            << "dtype " << dt << " row " << r << " col " << n;
        EXPECT_EQ(fusion_rt::f32_bits(p.o1.at(r, n)), fusion_rt::f32_bits(silu1))
            << "dtype " << dt << " row " << r << " col " << n;
        const float y0 = p.y_f(0, r, n);
        biasMatters |= p.o0.at(r, n) != 1.f / (1.f + expf(-y0));
      }
    EXPECT_TRUE(biasMatters) << "dtype " << dt;
  }
}

TEST(PairedProjectionCpu, OutputDtypesRoundOnce) {
  Pair p(4, 256, 16, 16, FUSION_RT_BF16, 5, FUSION_RT_BF16, FUSION_RT_F16);
  ASSERT_EQ(p.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
  Pair f(4, 256, 16, 16, FUSION_RT_BF16, 5);
  ASSERT_EQ(f.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t n = 0; n < 16; ++n) {
      EXPECT_EQ(p.o0.at(r, n), fusion_rt::bf16_to_f32(fusion_rt::f32_to_bf16(f.o0.at(r, n))));
      EXPECT_EQ(p.o1.at(r, n), fusion_rt::f16_to_f32(fusion_rt::f32_to_f16(f.o1.at(r, n))));
    }
}

/// `g` as a gated SwiGLU pair (out1 absent): the gate with its f32 bias b0,
/// the up half with bias b1 when `up_bias`, both accumulators rounded as
/// `round` says.
void make_gated_swiglu(Pair &g, int32_t round, bool up_bias) {
  g.d.gated_kind = FUSION_RT_ACT_SWIGLU;
  g.d.epilogue0 = fusion_rt_epilogue{};
  g.d.epilogue0.kind = FUSION_RT_EPILOGUE_BIAS;
  g.d.epilogue0.bias = view1d(g.b0.bytes.data(), FUSION_RT_F32, g.h0);
  g.d.epilogue0.accumulator_round = round;
  g.d.epilogue1 = fusion_rt_epilogue{};
  if (up_bias) {
    g.d.epilogue1.kind = FUSION_RT_EPILOGUE_BIAS;
    g.d.epilogue1.bias = view1d(g.b1.bytes.data(), g.b1.dtype, g.h1);
  }
  g.d.epilogue1.accumulator_round = round;
  g.d.out1 = fusion_rt_tensor{};
}

// accumulator_round: y is rounded to bf16 / f16 (what a bf16 Linear's
// output holds) before the epilogue, which then runs in f32 on the rounded
// value: the expected value is the sequential fp32 sum rounded, then the
// formula of common/epilogue.h. Gated pairs round gate and up before the
// activation. Rounding must change some results (else the test is blind).
TEST(PairedProjectionCpu, AccumulatorRoundingBeforeTheEpilogue) {
  auto rnd = [](int32_t mode, float y) {
    return mode == FUSION_RT_ROUND_BF16  ? fusion_rt::bf16_to_f32(fusion_rt::f32_to_bf16(y))
           : mode == FUSION_RT_ROUND_F16 ? fusion_rt::f16_to_f32(fusion_rt::f32_to_f16(y))
                                         : y;
  };
  for (int32_t dt : kDtypes)
    for (int32_t mode : {FUSION_RT_ROUND_BF16, FUSION_RT_ROUND_F16}) {
      Pair p(3, 200, 8, 8, dt, 61 + mode, FUSION_RT_F32, FUSION_RT_BF16);
      p.d.epilogue0.accumulator_round = mode;
      p.d.epilogue1.accumulator_round = FUSION_RT_ROUND_BF16;
      ASSERT_EQ(p.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
      bool changed = false;
      for (int64_t r = 0; r < p.m; ++r)
        for (int64_t n = 0; n < 8; ++n) {
          const float t0 = rnd(mode, p.y_f(0, r, n));
          const float sig = 1.f / (1.f + expf(-t0));
          EXPECT_EQ(fusion_rt::f32_bits(p.o0.at(r, n)), fusion_rt::f32_bits(sig))
              << "dtype " << dt << " mode " << mode << " row " << r << " col " << n;
          changed |= sig != 1.f / (1.f + expf(-p.y_f(0, r, n)));
          const float t1 = rnd(FUSION_RT_ROUND_BF16, p.y_f(1, r, n)) + p.b1.at(0, n);
          const float sp = (t1 > 20.f ? t1 : log1pf(expf(t1))) * p.s1.at(0, n);
          EXPECT_EQ(p.o1.at(r, n), fusion_rt::bf16_to_f32(fusion_rt::f32_to_bf16(sp)))
              << "dtype " << dt << " row " << r << " col " << n;
        }
      EXPECT_TRUE(changed) << "dtype " << dt << " mode " << mode;
    }
  // Gated SwiGLU: silu(round(y0) + b0) * round(y1), rounded once to bf16.
  Pair g(4, 256, 16, 16, FUSION_RT_BF16, 77, FUSION_RT_BF16);
  make_gated_swiglu(g, FUSION_RT_ROUND_BF16, /*up_bias=*/false);
  ASSERT_EQ(g.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
  for (int64_t r = 0; r < g.m; ++r)
    for (int64_t n = 0; n < 16; ++n) {
      const float a = rnd(FUSION_RT_ROUND_BF16, g.y_f(0, r, n)) + g.b0.at(0, n);
      const float u = rnd(FUSION_RT_ROUND_BF16, g.y_f(1, r, n));
      const float want = a * (1.f / (1.f + expf(-a))) * u;
      EXPECT_EQ(g.o0.at(r, n), fusion_rt::bf16_to_f32(fusion_rt::f32_to_bf16(want)))
          << "row " << r << " col " << n;
    }
}

// The _AFTER_BIAS modes (a Linear with bias=True, whose output is y + b
// rounded): the epilogue reads round(y + b) and adds no bias. Without a
// bias they are the plain rounding. Must differ from round(y) + b somewhere.
TEST(PairedProjectionCpu, AccumulatorRoundingAfterTheBias) {
  auto rnd = [](int32_t mode, float y) {
    return mode == FUSION_RT_ROUND_BF16_AFTER_BIAS
               ? fusion_rt::bf16_to_f32(fusion_rt::f32_to_bf16(y))
               : fusion_rt::f16_to_f32(fusion_rt::f32_to_f16(y));
  };
  for (int32_t dt : kDtypes)
    for (int32_t mode : {FUSION_RT_ROUND_BF16_AFTER_BIAS, FUSION_RT_ROUND_F16_AFTER_BIAS}) {
      // epilogue0 sigmoid with no bias, epilogue1 softplus(round(y + b)) * s.
      Pair p(3, 200, 8, 8, dt, 71 + mode, FUSION_RT_F32, FUSION_RT_F32);
      p.d.epilogue0.accumulator_round = mode;
      p.d.epilogue1.accumulator_round = mode;
      ASSERT_EQ(p.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
      Pair q(3, 200, 8, 8, dt, 71 + mode, FUSION_RT_F32, FUSION_RT_F32);
      q.d.epilogue0.accumulator_round = mode - 2; // the plain mode
      q.d.epilogue1.accumulator_round = mode - 2;
      ASSERT_EQ(q.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
      EXPECT_EQ(p.o0.bytes, q.o0.bytes) << "no bias: the modes must agree";
      bool changed = false;
      for (int64_t r = 0; r < p.m; ++r)
        for (int64_t n = 0; n < 8; ++n) {
          const float t1 = rnd(mode, p.y_f(1, r, n) + p.b1.at(0, n));
          const float sp = (t1 > 20.f ? t1 : log1pf(expf(t1))) * p.s1.at(0, n);
          EXPECT_EQ(fusion_rt::f32_bits(p.o1.at(r, n)), fusion_rt::f32_bits(sp))
              << "dtype " << dt << " mode " << mode << " row " << r << " col " << n;
          changed |= p.o1.at(r, n) != q.o1.at(r, n);
        }
      EXPECT_TRUE(changed) << "dtype " << dt << " mode " << mode;
    }
  // Gated SwiGLU of two biased bf16 Linears: silu(round(y0 + b0)) *
  // round(y1 + b1), rounded once to bf16.
  Pair g(4, 256, 16, 16, FUSION_RT_BF16, 79, FUSION_RT_BF16);
  make_gated_swiglu(g, FUSION_RT_ROUND_BF16_AFTER_BIAS, /*up_bias=*/true);
  ASSERT_EQ(g.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
  for (int64_t r = 0; r < g.m; ++r)
    for (int64_t n = 0; n < 16; ++n) {
      const float a = rnd(FUSION_RT_ROUND_BF16_AFTER_BIAS, g.y_f(0, r, n) + g.b0.at(0, n));
      const float u = rnd(FUSION_RT_ROUND_BF16_AFTER_BIAS, g.y_f(1, r, n) + g.b1.at(0, n));
      const float want = a * (1.f / (1.f + expf(-a))) * u;
      EXPECT_EQ(g.o0.at(r, n), fusion_rt::bf16_to_f32(fusion_rt::f32_to_bf16(want)))
          << "row " << r << " col " << n;
    }
}

TEST(PairedProjectionCpu, TransposedWeightViewGivesTheSameBits) {
  for (int32_t dt : kDtypes) {
    Pair a(6, 200, 12, 20, dt, 3);
    Pair b(6, 200, 12, 20, dt, 3, FUSION_RT_F32, FUSION_RT_F32, true);
    // Same values: copy a's w1 into b's transposed storage.
    for (int64_t n = 0; n < 20; ++n)
      for (int64_t j = 0; j < 200; ++j)
        b.w1.set(j, n, a.w1.at(n, j));
    ASSERT_EQ(a.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
    ASSERT_EQ(b.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
    EXPECT_EQ(a.o1.bytes, b.o1.bytes);
    EXPECT_EQ(a.o0.bytes, b.o0.bytes);
  }
}

/// A [G, w, K] weight view (Mat::grp): the parts of one stacked weight
/// whose rows interleave by head group (Qwen3-Next's in_proj_ba: per group
/// 2 rows of b, then 2 of a), read in place, give the bits of the same rows
/// copied out contiguously.
TEST(PairedProjectionCpu, RowGroupedWeightViewGivesTheSameBits) {
  const int64_t G = 5, w = 2, gs = 4, K = 72;
  for (int32_t dt : kDtypes) {
    Pair a(3, K, G * w, G * w, dt, 11);
    Pair b(3, K, G * w, G * w, dt, 11);
    // The stacked weight [G * gs, K] (row pitch K + 8): group g holds a's
    // w0 rows 2g, 2g + 1, then its w1 rows 2g, 2g + 1.
    HostMatrix stacked = make_matrix(
        std::vector<float>(size_t(G * gs * K), 0.f), G * gs, K, dt, K + 8);
    for (int64_t g = 0; g < G; ++g)
      for (int64_t r = 0; r < w; ++r)
        for (int64_t j = 0; j < K; ++j) {
          stacked.set(g * gs + r, j, a.w0.at(g * w + r, j));
          stacked.set(g * gs + w + r, j, a.w1.at(g * w + r, j));
        }
    for (int i = 0; i < 2; ++i) {
      fusion_rt_tensor &t = i == 0 ? b.d.weight0 : b.d.weight1;
      t = stacked.view();
      t.data = stacked.bytes.data() +
               size_t(i * w * stacked.rs) * (dt == FUSION_RT_F32 ? 4 : 2);
      t.rank = 3;
      t.sizes[0] = G, t.sizes[1] = w, t.sizes[2] = K;
      t.strides[0] = gs * stacked.rs, t.strides[1] = stacked.rs,
      t.strides[2] = 1;
    }
    ASSERT_EQ(a.run(), FUSION_RT_STATUS_SUCCESS)
        << fusion_rt_last_error_message();
    ASSERT_EQ(b.run(), FUSION_RT_STATUS_SUCCESS)
        << fusion_rt_last_error_message();
    EXPECT_EQ(a.o0.bytes, b.o0.bytes);
    EXPECT_EQ(a.o1.bytes, b.o1.bytes);
    EXPECT_LT(rel_err(a, 0), 1e-2);
    // Broken group views: reported, nothing written.
    struct Bad {
      const char *what;
      int64_t gstride;
      int64_t groups;
      const char *needle;
    } bad[] = {{"zero group stride", 0, G, "desc->weight1.strides[0] = 0"},
               {"overflowing group stride", int64_t(1) << 40, int64_t(1) << 30,
                "desc->weight1"}};
    for (const Bad &c : bad) {
      Pair e = b;
      e.d.weight1.strides[0] = c.gstride;
      e.d.weight1.sizes[0] = c.groups;
      e.poison();
      e.d.out0 = e.o0.view();
      e.d.out1 = e.o1.view();
      EXPECT_EQ(e.run(), FUSION_RT_STATUS_BAD_SHAPE) << c.what;
      EXPECT_NE(std::string(fusion_rt_last_error_message()).find(c.needle),
                std::string::npos)
          << c.what << ": " << fusion_rt_last_error_message();
      EXPECT_TRUE(e.untouched()) << c.what;
    }
    // Rows a group whose span overflows (sizes[1] * strides[1]): reported.
    Pair e = b;
    e.d.weight1.sizes[1] = int64_t(1) << 62;
    e.poison();
    e.d.out0 = e.o0.view();
    e.d.out1 = e.o1.view();
    EXPECT_EQ(e.run(), FUSION_RT_STATUS_BAD_SHAPE);
    EXPECT_NE(std::string(fusion_rt_last_error_message()).find("desc->weight1"),
              std::string::npos)
        << fusion_rt_last_error_message();
    EXPECT_TRUE(e.untouched());
  }
}

TEST(PairedProjectionCpu, GatedKindsMatchFp64) {
  for (int32_t dt : kDtypes)
    for (int32_t kind : {FUSION_RT_ACT_SWIGLU, FUSION_RT_ACT_GEGLU, FUSION_RT_ACT_REGLU,
                         FUSION_RT_ACT_GEGLU_ERF}) {
      Pair p(4, 384, 24, 24, dt, 21 + kind);
      p.d.gated_kind = kind;
      p.d.epilogue0 = fusion_rt_epilogue{};
      p.d.epilogue1 = fusion_rt_epilogue{};
      p.d.epilogue1.kind = FUSION_RT_EPILOGUE_BIAS;
      p.d.epilogue1.bias = view1d(p.b1.bytes.data(), dt, p.h1);
      p.d.out1 = fusion_rt_tensor{};
      ASSERT_EQ(p.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
      // GeGLU is TE's tanh approximation (the reference uses its constants).
      EXPECT_LE(rel_err(p, 0), 1e-5) << "kind " << kind << " dtype " << dt;
      EXPECT_TRUE(std::all_of(p.o1.bytes.begin(), p.o1.bytes.end(),
                              [](uint8_t b) { return b == 0xAB; }));
    }
}

/// out0 = kind0(y), out1 = kind1(y) for K = 1, lhs = 1, w = y (f32).
void run_scalar_pair(float y, int32_t kind0, int32_t kind1, float &o0, float &o1) {
  float x = 1.f, w0 = y, w1 = y;
  fusion_rt_paired_projection d{};
  d.lhs = view2d(&x, FUSION_RT_F32, 1, 1);
  d.weight0 = view2d(&w0, FUSION_RT_F32, 1, 1);
  d.weight1 = view2d(&w1, FUSION_RT_F32, 1, 1);
  d.epilogue0.kind = kind0;
  d.epilogue1.kind = kind1;
  d.gated_kind = -1;
  d.accumulate_dtype = FUSION_RT_F32;
  d.out0 = view2d(&o0, FUSION_RT_F32, 1, 1);
  d.out1 = view2d(&o1, FUSION_RT_F32, 1, 1);
  ASSERT_EQ(fusion_rt_paired_projection_run(&d, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS)
      << fusion_rt_last_error_message();
}

TEST(PairedProjectionCpu, SoftplusThresholdIsTorchs) {
  // out = softplus(y + 0) exactly as torch.
  const float ys[] = {-30.f, -1.f, 0.f, 19.99f, 20.f, 20.0001f, 25.f, NAN};
  for (float y : ys) {
    float o0 = 0, o1 = 0;
    run_scalar_pair(y, FUSION_RT_EPILOGUE_SOFTPLUS_BIAS_SCALE,
                    FUSION_RT_EPILOGUE_SIGMOID, o0, o1);
    const float want = y > 20.f ? y : log1pf(expf(y));
    if (std::isnan(y)) {
      EXPECT_TRUE(std::isnan(o0));
      EXPECT_TRUE(std::isnan(o1));
    } else {
      EXPECT_EQ(fusion_rt::f32_bits(o0), fusion_rt::f32_bits(want)) << y;
      EXPECT_NEAR(o0, softplus_d(y), 2e-7 * std::fabs(softplus_d(y)) + 1e-30) << y;
      EXPECT_NEAR(o1, sigmoid_d(y), 1e-7) << y;
    }
  }
}

TEST(PairedProjectionCpu, SoftplusLogFormIsAsWritten) {
  // SOFTPLUS_LOG_BIAS_SCALE computes log(1 + exp(t)) as vLLM's reference
  // writes it: bit for bit that f32 formula (not log1p's), with the same
  // threshold; both kinds in one call.
  int differ = 0;
  for (float y : {-30.f, -17.f, -9.5f, -4.2f, -1.f, -0.3f, 0.f, 0.7f, 3.f,
                  19.99f, 20.f, 20.0001f, 25.f, NAN}) {
    float o0 = 0, o1 = 0;
    run_scalar_pair(y, FUSION_RT_EPILOGUE_SOFTPLUS_BIAS_SCALE,
                    FUSION_RT_EPILOGUE_SOFTPLUS_LOG_BIAS_SCALE, o0, o1);
    const float want = y > 20.f ? y : logf(1.f + expf(y));
    if (std::isnan(y)) {
      EXPECT_TRUE(std::isnan(o1));
      continue;
    }
    EXPECT_EQ(fusion_rt::f32_bits(o1), fusion_rt::f32_bits(want)) << y;
    EXPECT_NEAR(o1, softplus_d(y), 1e-7 * std::max(1.0, softplus_d(y))) << y;
    differ += o0 != o1;
  }
  // The forms differ where 1 + exp(t) rounds (t = -30: 0 against 9.4e-14).
  EXPECT_GT(differ, 0);
}

TEST(PairedProjectionCpu, SigmoidAndSiluTakeAScale) {
  // sigmoid(y + b) * s and silu(y + b) * s (FLA's beta = sigmoid(b) * 2): the
  // f32 formula of the header, the product last; a bias-free scale of -0.75.
  float x = 1.f, w[2] = {0.f, 0.f}, o[2] = {0.f, 0.f};
  const float b[1] = {0.25f}, sc[2] = {2.f, -0.75f};
  for (float y : {-30.f, -2.5f, -0.1f, 0.f, 0.6f, 4.f, 90.f}) {
    w[0] = w[1] = y;
    fusion_rt_paired_projection d{};
    d.lhs = view2d(&x, FUSION_RT_F32, 1, 1);
    d.weight0 = view2d(&w[0], FUSION_RT_F32, 1, 1);
    d.weight1 = view2d(&w[1], FUSION_RT_F32, 1, 1);
    d.epilogue0.kind = FUSION_RT_EPILOGUE_SIGMOID;
    d.epilogue0.bias = view1d(const_cast<float *>(&b[0]), FUSION_RT_F32, 1);
    d.epilogue0.scale = view1d(const_cast<float *>(&sc[0]), FUSION_RT_F32, 1);
    d.epilogue1.kind = FUSION_RT_EPILOGUE_SILU;
    d.epilogue1.scale = view1d(const_cast<float *>(&sc[1]), FUSION_RT_F32, 1);
    d.gated_kind = -1;
    d.accumulate_dtype = FUSION_RT_F32;
    d.out0 = view2d(&o[0], FUSION_RT_F32, 1, 1);
    d.out1 = view2d(&o[1], FUSION_RT_F32, 1, 1);
    ASSERT_EQ(fusion_rt_paired_projection_run(&d, nullptr, nullptr),
              FUSION_RT_STATUS_SUCCESS)
        << fusion_rt_last_error_message();
    const float t0 = y + b[0];
    const float want0 = 1.f / (1.f + expf(-t0)) * sc[0];
    const float want1 = y * (1.f / (1.f + expf(-y))) * sc[1];
    EXPECT_EQ(fusion_rt::f32_bits(o[0]), fusion_rt::f32_bits(want0)) << y;
    EXPECT_EQ(fusion_rt::f32_bits(o[1]), fusion_rt::f32_bits(want1)) << y;
  }
}

TEST(PairedProjectionCpu, SoftplusStableFormIsAsWritten) {
  // SOFTPLUS_STABLE_BIAS_SCALE computes the overflow-safe softplus as
  // torch.logaddexp(t, 0) writes it: m + log1p(exp(-|t|)), m = max(t, 0),
  // m where |m| is Inf; no threshold (t = 25: 25 + 1.4e-11 rounds to 25,
  // Inf stays Inf, -Inf gives 0). Bit for bit that f32 formula, and not
  // torch's log1p form everywhere.
  int differ = 0;
  for (float y : {-INFINITY, -90.f, -30.f, -9.5f, -1.f, -0.3f, 0.f, 0.7f, 1.3f,
                  3.f, 7.7f, 19.99f, 20.f, 25.f, 100.f, INFINITY, NAN}) {
    float o0 = 0, o1 = 0;
    run_scalar_pair(y, FUSION_RT_EPILOGUE_SOFTPLUS_BIAS_SCALE,
                    FUSION_RT_EPILOGUE_SOFTPLUS_STABLE_BIAS_SCALE, o0, o1);
    if (std::isnan(y)) {
      EXPECT_TRUE(std::isnan(o1));
      continue;
    }
    const float m = y > 0.f ? y : 0.f;
    const float want = std::isinf(m) ? m : m + log1pf(expf(-std::fabs(y)));
    EXPECT_EQ(fusion_rt::f32_bits(o1), fusion_rt::f32_bits(want)) << y;
    if (std::isfinite(y))
      EXPECT_NEAR(o1, softplus_d(y), 2e-7 * std::max(1.0, softplus_d(y))) << y;
    differ += fusion_rt::f32_bits(o0) != fusion_rt::f32_bits(o1);
  }
  // The forms differ by a last bit for some 0 < t < 20 (log1p(e^t) against
  // t + log1p(e^-t)).
  EXPECT_GT(differ, 0);
}

TEST(PairedProjectionCpu, ThreadCountDoesNotChangeBits) {
  Pair a(64, 512, 32, 32, FUSION_RT_BF16, 8), b(64, 512, 32, 32, FUSION_RT_BF16, 8);
  fusion_rt_options one{FUSION_RT_BACKEND_CPU, 1}, four{FUSION_RT_BACKEND_AUTO, 4};
  ASSERT_EQ(a.run(&one), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
  ASSERT_EQ(b.run(&four), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
  EXPECT_EQ(a.o0.bytes, b.o0.bytes);
  EXPECT_EQ(a.o1.bytes, b.o1.bytes);
}

TEST(PairedProjectionCpu, EmptyShapes) {
  { // M = 0: nothing to write, success.
    Pair p(0, 64, 4, 4, FUSION_RT_F32);
    EXPECT_EQ(p.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
  }
  { // K = 0: y = 0, the epilogue still applies.
    Pair p(2, 0, 3, 3, FUSION_RT_F32);
    p.d.epilogue1 = fusion_rt_epilogue{};
    p.d.lhs.strides[0] = 1; // [M, 0] views: any nonzero row stride
    p.d.weight1.strides[0] = 1;
    ASSERT_EQ(p.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t n = 0; n < 3; ++n) {
        EXPECT_EQ(p.o0.at(r, n), 0.5f);
        EXPECT_EQ(p.o1.at(r, n), 0.f);
      }
  }
}

//===--- validation -------------------------------------------------------===//

namespace {
struct PCase {
  const char *name;
  std::function<void(Pair &)> breakit;
  fusion_rt_status status;
  const char *mentions;
};
} // namespace

TEST(PairedProjectionValidation, EveryBrokenArgumentIsReportedAndNothingWritten) {
  const PCase cases[] = {
      {"null lhs data", [](Pair &p) { p.d.lhs.data = nullptr; },
       FUSION_RT_STATUS_NULL_POINTER, "desc->lhs.data"},
      {"null weight0", [](Pair &p) { p.d.weight0.data = nullptr; },
       FUSION_RT_STATUS_NULL_POINTER, "desc->weight0.data"},
      {"null weight1", [](Pair &p) { p.d.weight1.data = nullptr; },
       FUSION_RT_STATUS_NULL_POINTER, "desc->weight1.data"},
      {"null out0", [](Pair &p) { p.d.out0.data = nullptr; },
       FUSION_RT_STATUS_NULL_POINTER, "desc->out0.data"},
      {"null out1", [](Pair &p) { p.d.out1.data = nullptr; },
       FUSION_RT_STATUS_NULL_POINTER, "desc->out1.data"},
      {"lhs dtype not float", [](Pair &p) { p.d.lhs.dtype = FUSION_RT_F8E4M3; },
       FUSION_RT_STATUS_BAD_DTYPE, "desc->lhs"},
      {"lhs dtype invalid", [](Pair &p) { p.d.lhs.dtype = 77; },
       FUSION_RT_STATUS_BAD_DTYPE, "desc->lhs.dtype"},
      {"weight0 dtype mismatch", [](Pair &p) { p.d.weight0.dtype = FUSION_RT_F16; },
       FUSION_RT_STATUS_BAD_DTYPE, "desc->weight0"},
      {"weight1 dtype mismatch", [](Pair &p) { p.d.weight1.dtype = FUSION_RT_F16; },
       FUSION_RT_STATUS_BAD_DTYPE, "desc->weight1"},
      {"weight0 K mismatch", [](Pair &p) { p.d.weight0.sizes[1] = p.k - 1; },
       FUSION_RT_STATUS_BAD_SHAPE, "desc->weight0"},
      {"weight1 K mismatch", [](Pair &p) { p.d.weight1.sizes[1] = p.k + 1; },
       FUSION_RT_STATUS_BAD_SHAPE, "desc->weight1"},
      {"misaligned weight0",
       [](Pair &p) { p.d.weight0.data = static_cast<char *>(p.d.weight0.data) + 1; },
       FUSION_RT_STATUS_MISALIGNED, "desc->weight0.data"},
      {"misaligned weight1",
       [](Pair &p) { p.d.weight1.data = static_cast<char *>(p.d.weight1.data) + 1; },
       FUSION_RT_STATUS_MISALIGNED, "desc->weight1.data"},
      {"misaligned lhs",
       [](Pair &p) { p.d.lhs.data = static_cast<char *>(p.d.lhs.data) + 1; },
       FUSION_RT_STATUS_MISALIGNED, "desc->lhs.data"},
      {"misaligned out0",
       [](Pair &p) { p.d.out0.data = static_cast<char *>(p.d.out0.data) + 2; },
       FUSION_RT_STATUS_MISALIGNED, "desc->out0.data"},
      {"weight rank 0", [](Pair &p) { p.d.weight0.rank = 0; },
       FUSION_RT_STATUS_BAD_SHAPE, "desc->weight0.rank"},
      {"weight negative stride", [](Pair &p) { p.d.weight1.strides[0] = -3; },
       FUSION_RT_STATUS_BAD_SHAPE, "desc->weight1.strides[0]"},
      {"lhs negative size", [](Pair &p) { p.d.lhs.sizes[0] = -1; },
       FUSION_RT_STATUS_BAD_SHAPE, "desc->lhs.sizes[0]"},
      {"out0 rows", [](Pair &p) { p.d.out0.sizes[0] = p.m + 1; },
       FUSION_RT_STATUS_BAD_SHAPE, "desc->out0"},
      {"out1 cols", [](Pair &p) { p.d.out1.sizes[1] = p.h1 - 1; },
       FUSION_RT_STATUS_BAD_SHAPE, "desc->out1"},
      {"out0 dtype", [](Pair &p) { p.d.out0.dtype = FUSION_RT_F8E5M2; },
       FUSION_RT_STATUS_BAD_DTYPE, "desc->out0"},
      {"accumulate dtype", [](Pair &p) { p.d.accumulate_dtype = FUSION_RT_BF16; },
       FUSION_RT_STATUS_BAD_DTYPE, "desc->accumulate_dtype"},
      {"gated kind not gated", [](Pair &p) { p.d.gated_kind = FUSION_RT_ACT_SILU; },
       FUSION_RT_STATUS_BAD_VALUE, "desc->gated_kind"},
      {"gated kind range", [](Pair &p) { p.d.gated_kind = 40; },
       FUSION_RT_STATUS_BAD_VALUE, "desc->gated_kind"},
      {"gated with different H",
       [](Pair &p) {
         p.d.gated_kind = FUSION_RT_ACT_SWIGLU;
         p.d.epilogue0 = fusion_rt_epilogue{};
         p.d.epilogue1 = fusion_rt_epilogue{};
         p.d.out1 = fusion_rt_tensor{};
       },
       FUSION_RT_STATUS_BAD_SHAPE, "desc->weight1"},
      {"gated with a sigmoid epilogue",
       [](Pair &p) {
         p.d.gated_kind = FUSION_RT_ACT_SWIGLU;
         p.d.weight1 = p.d.weight0;
         p.d.epilogue1 = fusion_rt_epilogue{};
         p.d.out1 = fusion_rt_tensor{};
       },
       FUSION_RT_STATUS_BAD_VALUE, "desc->epilogue0.kind"},
      {"gated with out1",
       [](Pair &p) {
         p.d.gated_kind = FUSION_RT_ACT_SWIGLU;
         p.d.weight1 = p.d.weight0;
         p.d.epilogue0 = fusion_rt_epilogue{};
         p.d.epilogue1 = fusion_rt_epilogue{};
       },
       FUSION_RT_STATUS_BAD_VALUE, "desc->out1"},
      {"epilogue kind range", [](Pair &p) { p.d.epilogue1.kind = 7; },
       FUSION_RT_STATUS_BAD_VALUE, "desc->epilogue1.kind"},
      {"epilogue kind negative", [](Pair &p) { p.d.epilogue0.kind = -1; },
       FUSION_RT_STATUS_BAD_VALUE, "desc->epilogue0.kind"},
      {"accumulator round range", [](Pair &p) { p.d.epilogue1.accumulator_round = FUSION_RT_ROUND_F16_AFTER_BIAS + 1; },
       FUSION_RT_STATUS_BAD_VALUE, "desc->epilogue1.accumulator_round"},
      {"accumulator round negative",
       [](Pair &p) { p.d.epilogue0.accumulator_round = -1; },
       FUSION_RT_STATUS_BAD_VALUE, "desc->epilogue0.accumulator_round"},
      {"bias missing for BIAS",
       [](Pair &p) {
         p.d.epilogue1.kind = FUSION_RT_EPILOGUE_BIAS;
         p.d.epilogue1.bias.data = nullptr;
         p.d.epilogue1.scale = fusion_rt_tensor{};
       },
       FUSION_RT_STATUS_NULL_POINTER, "desc->epilogue1.bias"},
      {"bias given to NONE",
       [](Pair &p) {
         p.d.epilogue1.kind = FUSION_RT_EPILOGUE_NONE;
         p.d.epilogue1.scale = fusion_rt_tensor{};
       },
       FUSION_RT_STATUS_BAD_VALUE, "desc->epilogue1.bias"},
      {"scale given to BIAS",
       [](Pair &p) { p.d.epilogue1.kind = FUSION_RT_EPILOGUE_BIAS; },
       FUSION_RT_STATUS_BAD_VALUE, "desc->epilogue1.scale"},
      {"bias length", [](Pair &p) { p.d.epilogue1.bias.sizes[0] = p.h1 + 1; },
       FUSION_RT_STATUS_BAD_SHAPE, "desc->epilogue1.bias"},
      {"scale length", [](Pair &p) { p.d.epilogue1.scale.sizes[0] = p.h1 - 1; },
       FUSION_RT_STATUS_BAD_SHAPE, "desc->epilogue1.scale"},
      {"bias dtype", [](Pair &p) { p.d.epilogue1.bias.dtype = FUSION_RT_F16; },
       FUSION_RT_STATUS_BAD_DTYPE, "desc->epilogue1.bias"},
      {"scale dtype", [](Pair &p) { p.d.epilogue1.scale.dtype = FUSION_RT_E8M0; },
       FUSION_RT_STATUS_BAD_DTYPE, "desc->epilogue1.scale"},
      {"bias rank 2 wrong rows",
       [](Pair &p) {
         p.d.epilogue1.bias = view2d(p.b1.bytes.data(), p.dt, 2, p.h1 / 2);
       },
       FUSION_RT_STATUS_BAD_SHAPE, "desc->epilogue1.bias"},
      {"misaligned bias",
       [](Pair &p) {
         p.d.epilogue1.bias.data = static_cast<char *>(p.d.epilogue1.bias.data) + 1;
       },
       FUSION_RT_STATUS_MISALIGNED, "desc->epilogue1.bias.data"},
  };
  for (const PCase &c : cases) {
    Pair p(4, 64, 8, 6, FUSION_RT_BF16);
    c.breakit(p);
    EXPECT_EQ(p.run(), c.status) << c.name << ": " << fusion_rt_last_error_message();
    EXPECT_NE(std::string(fusion_rt_last_error_message()).find(c.mentions),
              std::string::npos)
        << c.name << ": message '" << fusion_rt_last_error_message()
        << "' does not mention '" << c.mentions << "'";
    EXPECT_TRUE(p.untouched()) << c.name;
  }
}

TEST(PairedProjectionValidation, NullDescriptorAndBadOptions) {
  EXPECT_EQ(fusion_rt_paired_projection_run(nullptr, nullptr, nullptr),
            FUSION_RT_STATUS_NULL_POINTER);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("desc"),
            std::string::npos);
  Pair p(2, 32, 4, 4, FUSION_RT_F32);
  fusion_rt_options bad{7, 0};
  EXPECT_EQ(p.run(&bad), FUSION_RT_STATUS_BAD_VALUE);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("options->backend"),
            std::string::npos);
  fusion_rt_options neg{FUSION_RT_BACKEND_AUTO, -1};
  EXPECT_EQ(p.run(&neg), FUSION_RT_STATUS_BAD_VALUE);
  EXPECT_TRUE(p.untouched());
  if (!fusion_rt_has_cuda()) {
    fusion_rt_options cuda{FUSION_RT_BACKEND_CUDA, 0};
    EXPECT_EQ(p.run(&cuda), FUSION_RT_STATUS_UNSUPPORTED);
    EXPECT_TRUE(p.untouched());
  }
  EXPECT_EQ(p.run(), FUSION_RT_STATUS_SUCCESS);
  EXPECT_STREQ(fusion_rt_last_error_message(), "");
}

//===----------------------------------------------------------------------===//
// fusion_rt_paired_projection_quantize: the FFN front in one call
//===----------------------------------------------------------------------===//

namespace {

/// A gated pair (no out0 / out1) and the same pair written into an [M, H]
/// value of `inter`, for the composition the quantizing call must equal.
struct GatedFront {
  Pair p;
  int32_t inter;
  GatedFront(int64_t m, int64_t k, int64_t h, int32_t dt, int32_t inter_,
             int32_t kind, uint32_t seed)
      : p(m, k, h, h, dt, seed, inter_, inter_), inter(inter_) {
    p.d.gated_kind = kind;
    p.d.epilogue0 = fusion_rt_epilogue{};
    p.d.epilogue1 = fusion_rt_epilogue{};
    p.d.out1 = fusion_rt_tensor{};
  }
  /// Unfused: paired projection into p.o0, then fusion_rt_quantize of it
  /// (`scale`: FP8 delayed scaling's given scale).
  void unfused(const fusion_rt_quant_scheme &s, QuantBuffers &q,
               float scale = 1.f) {
    q.alloc(s, p.m, p.h0, false, s.format >= FUSION_RT_FORMAT_FP8_E4M3);
    q.scale = scale;
    ASSERT_EQ(fusion_rt_paired_projection_run(&p.d, nullptr, nullptr),
              FUSION_RT_STATUS_SUCCESS)
        << fusion_rt_last_error_message();
    fusion_rt_tensor v = p.o0.view();
    ASSERT_EQ(fusion_rt_quantize(&v, &s, &q.out, nullptr, nullptr),
              FUSION_RT_STATUS_SUCCESS)
        << fusion_rt_last_error_message();
  }
  fusion_rt_status fused(const fusion_rt_quant_scheme &s, QuantBuffers &q,
                         const fusion_rt_options *opt = nullptr,
                         float scale = 1.f) {
    q.alloc(s, p.m, p.h0, false, s.format >= FUSION_RT_FORMAT_FP8_E4M3);
    q.scale = scale;
    fusion_rt_paired_projection d = p.d;
    d.out0 = fusion_rt_tensor{};
    return fusion_rt_paired_projection_quantize(&d, inter, &s, &q.out, opt,
                                                nullptr);
  }
};

} // namespace

TEST(PairedProjectionQuantize, EqualsPairedRunThenQuantizeByteForByte) {
  // Every format the quantizer has (CPU), with bf16 / f32 intermediates,
  // accumulator rounding (a bf16 Linear) or none, biases, odd shapes.
  const int32_t formats[] = {FUSION_RT_FORMAT_MXFP8_E4M3,
                             FUSION_RT_FORMAT_MXFP8_E5M2,
                             FUSION_RT_FORMAT_MXFP4, FUSION_RT_FORMAT_NVFP4,
                             FUSION_RT_FORMAT_FP8_E4M3};
  const int64_t shapes[][3] = {{1, 64, 64}, {4, 96, 160}, {17, 40, 96}};
  int cases = 0;
  for (int32_t f : formats)
    for (auto &sh : shapes)
      for (int32_t inter : {FUSION_RT_BF16, FUSION_RT_F32})
        for (int round = 0; round < 2; ++round) {
          const int32_t dir = f == FUSION_RT_FORMAT_FP8_E4M3
                                  ? FUSION_RT_ROWWISE
                                  : (cases % 3 == 2 ? FUSION_RT_BOTH
                                                    : FUSION_RT_ROWWISE);
          fusion_rt_quant_scheme s = scheme_of(f, dir);
          GatedFront g(sh[0], sh[1], sh[2], FUSION_RT_BF16, inter,
                       cases % 2 ? FUSION_RT_ACT_GEGLU : FUSION_RT_ACT_SWIGLU,
                       uint32_t(11 + cases));
          if (round) {
            g.p.d.epilogue0.accumulator_round = FUSION_RT_ROUND_BF16;
            g.p.d.epilogue1.accumulator_round = FUSION_RT_ROUND_BF16;
            g.p.d.epilogue1.kind = FUSION_RT_EPILOGUE_BIAS;
            g.p.d.epilogue1.bias = view1d(g.p.b1.bytes.data(), g.p.dt, g.p.h1);
          }
          QuantBuffers want, got;
          g.unfused(s, want);
          ASSERT_EQ(g.fused(s, got), FUSION_RT_STATUS_SUCCESS)
              << fusion_rt_last_error_message();
          EXPECT_EQ(diff(want, got), "")
              << describe(s) << " shape " << sh[0] << "x" << sh[1] << "x"
              << sh[2] << " inter " << inter << " round " << round;
          ++cases;
        }
  EXPECT_EQ(cases, 60);
}

TEST(PairedProjectionQuantize,
     Fp8DelayedAndBlockScalesEqualPairedRunThenQuantize) {
  // FP8 per tensor with delayed scaling (the scale given: one saturating
  // some codes, one below 1, e5m2) and FP8 1x128 / 1x32 blocks (f32 and
  // power-of-two scales), bf16 / f32 intermediates, rounded accumulators.
  struct Case {
    int32_t format;
    float scale; ///< delayed scaling's scale; 0: not delayed
    int32_t block_cols = 0;
    bool pow2 = false;
  };
  const Case cases[] = {{FUSION_RT_FORMAT_FP8_E4M3, 64.f},
                        {FUSION_RT_FORMAT_FP8_E4M3, 0.25f},
                        {FUSION_RT_FORMAT_FP8_E5M2, 3000.f},
                        {FUSION_RT_FORMAT_FP8_BLOCK_E4M3, 0.f, 128},
                        {FUSION_RT_FORMAT_FP8_BLOCK_E4M3, 0.f, 32, true},
                        {FUSION_RT_FORMAT_FP8_BLOCK_E5M2, 0.f, 128}};
  const int64_t shapes[][3] = {{1, 64, 128}, {4, 96, 160}, {17, 40, 256}};
  int n = 0;
  for (const Case &c : cases)
    for (auto &sh : shapes)
      for (int32_t inter : {FUSION_RT_BF16, FUSION_RT_F32}) {
        fusion_rt_quant_scheme s = scheme_of(c.format, FUSION_RT_ROWWISE);
        if (c.scale > 0)
          s.tensor_scaling = FUSION_RT_TENSOR_SCALING_DELAYED;
        if (c.block_cols) {
          s.block_cols = c.block_cols;
          s.force_pow2_scale = c.pow2 ? 1 : 0;
        }
        GatedFront g(sh[0], sh[1], sh[2], FUSION_RT_BF16, inter,
                     n % 2 ? FUSION_RT_ACT_GEGLU : FUSION_RT_ACT_SWIGLU,
                     uint32_t(101 + n));
        g.p.d.epilogue0.accumulator_round = FUSION_RT_ROUND_BF16;
        g.p.d.epilogue1.accumulator_round = FUSION_RT_ROUND_BF16;
        const float scale = c.scale > 0 ? c.scale : 1.f;
        QuantBuffers want, got;
        g.unfused(s, want, scale);
        ASSERT_EQ(g.fused(s, got, nullptr, scale), FUSION_RT_STATUS_SUCCESS)
            << fusion_rt_last_error_message();
        EXPECT_EQ(diff(want, got), "")
            << describe(s) << " scale " << c.scale << " shape " << sh[0] << "x"
            << sh[1] << "x" << sh[2] << " inter " << inter;
        // The delayed scale is read: another scale gives other codes.
        if (c.scale > 0) {
          QuantBuffers other;
          ASSERT_EQ(g.fused(s, other, nullptr, scale * 4.f),
                    FUSION_RT_STATUS_SUCCESS);
          EXPECT_NE(diff(got, other), "") << describe(s);
        }
        ++n;
      }
  EXPECT_EQ(n, 36);
}

TEST(PairedProjectionQuantize, EmptyTokensWriteNothingAndSucceed) {
  GatedFront g(0, 32, 64, FUSION_RT_BF16, FUSION_RT_BF16, FUSION_RT_ACT_SWIGLU,
               3);
  QuantBuffers got;
  EXPECT_EQ(g.fused(scheme_of(FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_ROWWISE),
                    got),
            FUSION_RT_STATUS_SUCCESS)
      << fusion_rt_last_error_message();
}

TEST(PairedProjectionQuantize, EveryBrokenArgumentIsReportedAndNothingWritten) {
  const fusion_rt_quant_scheme s =
      scheme_of(FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_ROWWISE);
  struct Case {
    const char *name;
    std::function<void(fusion_rt_paired_projection &, int32_t &)> edit;
    fusion_rt_status status;
    const char *needle;
  };
  HostMatrix extra =
      make_matrix(std::vector<float>(4 * 64, 0.f), 4, 64, FUSION_RT_BF16);
  const Case cases[] = {
      {"not gated",
       [](fusion_rt_paired_projection &d, int32_t &) { d.gated_kind = -1; },
       FUSION_RT_STATUS_BAD_VALUE, "gated_kind is -1"},
      {"out0 given",
       [&](fusion_rt_paired_projection &d, int32_t &) { d.out0 = extra.view(); },
       FUSION_RT_STATUS_BAD_VALUE, "desc->out0"},
      {"out1 given",
       [&](fusion_rt_paired_projection &d, int32_t &) { d.out1 = extra.view(); },
       FUSION_RT_STATUS_BAD_VALUE, "desc->out1"},
      {"intermediate fp8",
       [](fusion_rt_paired_projection &, int32_t &inter) {
         inter = FUSION_RT_F8E4M3;
       },
       FUSION_RT_STATUS_BAD_DTYPE, "intermediate_dtype"},
      {"weights of different widths",
       [&](fusion_rt_paired_projection &d, int32_t &) {
         d.weight1.sizes[0] = 32;
       },
       FUSION_RT_STATUS_BAD_SHAPE, "gated pair"},
  };
  for (const Case &c : cases) {
    GatedFront g(4, 32, 64, FUSION_RT_BF16, FUSION_RT_BF16,
                 FUSION_RT_ACT_SWIGLU, 5);
    QuantBuffers q;
    q.alloc(s, 4, 64);
    fusion_rt_paired_projection d = g.p.d;
    d.out0 = fusion_rt_tensor{};
    int32_t inter = FUSION_RT_BF16;
    c.edit(d, inter);
    EXPECT_EQ(fusion_rt_paired_projection_quantize(&d, inter, &s, &q.out,
                                                   nullptr, nullptr),
              c.status)
        << c.name;
    EXPECT_NE(std::string(fusion_rt_last_error_message()).find(c.needle),
              std::string::npos)
        << c.name << ": " << fusion_rt_last_error_message();
    for (uint8_t b : q.row_data)
      ASSERT_EQ(b, 0xAB) << c.name;
    for (uint8_t b : q.row_scales)
      ASSERT_EQ(b, 0xAB) << c.name;
  }
  // NULL arguments and outputs of the wrong shape.
  GatedFront g(4, 32, 64, FUSION_RT_BF16, FUSION_RT_BF16, FUSION_RT_ACT_SWIGLU,
               5);
  fusion_rt_paired_projection d = g.p.d;
  d.out0 = fusion_rt_tensor{};
  QuantBuffers q;
  q.alloc(s, 4, 64);
  EXPECT_EQ(fusion_rt_paired_projection_quantize(nullptr, FUSION_RT_BF16, &s,
                                                 &q.out, nullptr, nullptr),
            FUSION_RT_STATUS_NULL_POINTER);
  EXPECT_EQ(fusion_rt_paired_projection_quantize(&d, FUSION_RT_BF16, nullptr,
                                                 &q.out, nullptr, nullptr),
            FUSION_RT_STATUS_NULL_POINTER);
  EXPECT_EQ(fusion_rt_paired_projection_quantize(&d, FUSION_RT_BF16, &s,
                                                 nullptr, nullptr, nullptr),
            FUSION_RT_STATUS_NULL_POINTER);
  QuantBuffers withDbias; // the gated value has no bias gradient
  withDbias.alloc(s, 4, 64, false, false, true);
  EXPECT_EQ(fusion_rt_paired_projection_quantize(&d, FUSION_RT_BF16, &s, &withDbias.out,
                                                 nullptr, nullptr),
            FUSION_RT_STATUS_UNSUPPORTED);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("dbias"), std::string::npos)
      << fusion_rt_last_error_message();
  QuantBuffers narrow;
  narrow.alloc(s, 4, 32); // [4, 32] codes for a [4, 64] value
  EXPECT_EQ(fusion_rt_paired_projection_quantize(&d, FUSION_RT_BF16, &s,
                                                 &narrow.out, nullptr, nullptr),
            FUSION_RT_STATUS_BAD_SHAPE)
      << fusion_rt_last_error_message();
}
