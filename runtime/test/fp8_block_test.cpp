//===- fp8_block_test.cpp - FP8 block scaling (1 x G, f32 scales) -------===//
//
// The FP8 block formats against a reference written here from the formula
// as torch and vLLM write it (amax.clamp(min=eps) / 448, x / s, clamp,
// cast; UE8M0 by exp2(ceil(log2 s)) in double): NaN, Inf, zero and
// subnormal blocks, partial blocks, per-row scaling, e5m2, column-major
// scale views; dequantize; fused equals unfused for plain, backward
// (with dbias) and gated activations; the validation of the scheme; 2D
// blocks (128x128 weight tiles) against the same formula over whole tiles;
// and the
// CUDA stream kernels' quotient from a reciprocal (common/quotient.h)
// against the division.
//
//===----------------------------------------------------------------------===//
#include "test_util.h"

#include "common/convert.h"
#include "common/quantize_block.h"
#include "common/quotient.h"
#include "common/scale.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace fusion_rt_test;
using fusion_rt::bits_f32;

namespace {

fusion_rt_quant_scheme block_scheme(int32_t f, int32_t g, float eps = 0.f,
                                    bool pow2 = false) {
  fusion_rt_quant_scheme s = scheme_of(f, FUSION_RT_ROWWISE);
  s.block_cols = g;
  s.amax_epsilon = eps;
  s.force_pow2_scale = pow2 ? 1 : 0;
  return s;
}

float scale_at(const QuantBuffers &q, int64_t i, int64_t b) {
  float v;
  std::memcpy(&v, q.row_scales.data() + 4 * (i * q.shapes.rowwise_scales[1] + b), 4);
  return v;
}

/// The reference: torch's formula with plain float arithmetic (1 x g blocks:
/// reference_2d below with one row per block).
struct Ref {
  std::vector<float> scales; // [m, nb]
  std::vector<uint8_t> codes;
};
Ref reference_2d(const HostMatrix &x, int32_t f, int64_t br, int64_t bc,
                 float eps, bool pow2, bool propagate);
Ref reference(const HostMatrix &x, int32_t f, int64_t g, float eps, bool pow2,
              bool propagate) {
  return reference_2d(x, f, 1, g, eps, pow2, propagate);
}

bool same_bits_or_both_nan(float a, float b) {
  return std::memcmp(&a, &b, 4) == 0 || (std::isnan(a) && std::isnan(b));
}

/// Values with NaN, Inf, a zero block and a subnormal block.
std::vector<float> special_values(int64_t m, int64_t n) {
  std::vector<float> v = random_values(m * n, 41, true);
  v[size_t(0 * n + 5)] = std::numeric_limits<float>::quiet_NaN();
  v[size_t(1 * n + 3)] = std::numeric_limits<float>::infinity();
  v[size_t(1 * n + 9)] = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < std::min<int64_t>(n, 32); ++j) {
    v[size_t(2 * n + j)] = 0.f;
    v[size_t(3 * n + j)] = 1e-42f * float(j % 5 - 2);
  }
  v[size_t(2 * n + 1)] = -0.f;
  return v;
}

} // namespace

TEST(Fp8Block, MatchesTorchFormula) {
  const int64_t m = 6, n = 300; // 300 = 2 x 128 + 44: a partial last block
  HostMatrix x = make_matrix(special_values(m, n), m, n, FUSION_RT_F32);
  int runs = 0;
  for (int32_t f : {FUSION_RT_FORMAT_FP8_BLOCK_E4M3, FUSION_RT_FORMAT_FP8_BLOCK_E5M2})
    for (int32_t g : {128, 32, 300, 7})
      for (float eps : {0.f, 1e-10f})
        for (bool pow2 : {false, true})
          for (int32_t nan : {FUSION_RT_NAN_PROPAGATE, FUSION_RT_NAN_IGNORE}) {
            fusion_rt_quant_scheme s = block_scheme(f, g, eps, pow2);
            s.nan_policy = nan;
            SCOPED_TRACE(describe(s) + " eps " + std::to_string(eps));
            QuantBuffers q;
            q.alloc(s, m, n, false, true);
            ASSERT_EQ(q.shapes.rowwise_scales[1], (n + g - 1) / g);
            fusion_rt_tensor t = x.view();
            ASSERT_EQ(fusion_rt_quantize(&t, &s, &q.out, nullptr, nullptr),
                      FUSION_RT_STATUS_SUCCESS)
                << fusion_rt_last_error_message();
            const Ref r = reference(x, f, g, eps, pow2, nan == FUSION_RT_NAN_PROPAGATE);
            const int64_t nb = q.shapes.rowwise_scales[1];
            for (int64_t i = 0; i < m; ++i) {
              for (int64_t b = 0; b < nb; ++b)
                ASSERT_TRUE(same_bits_or_both_nan(scale_at(q, i, b),
                                                  r.scales[size_t(i * nb + b)]))
                    << "scale " << i << "," << b << ": " << scale_at(q, i, b)
                    << " vs " << r.scales[size_t(i * nb + b)];
              for (int64_t j = 0; j < n; ++j)
                ASSERT_EQ(q.row_code(i, j), r.codes[size_t(i * n + j)])
                    << "code " << i << "," << j << " x " << x.at(i, j);
            }
            ++runs;
          }
  EXPECT_EQ(runs, 2 * 4 * 2 * 2 * 2);
}

TEST(Fp8Block, SpecialBlocks) {
  const int64_t m = 4, n = 128;
  HostMatrix x = make_matrix(special_values(m, n), m, n, FUSION_RT_F32);
  fusion_rt_quant_scheme s = block_scheme(FUSION_RT_FORMAT_FP8_BLOCK_E4M3, 32);
  QuantBuffers q;
  q.alloc(s, m, n);
  fusion_rt_tensor t = x.view();
  ASSERT_EQ(fusion_rt_quantize(&t, &s, &q.out, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS);
  // A NaN block: NaN scale (torch's amax), NaN codes.
  EXPECT_TRUE(std::isnan(scale_at(q, 0, 0)));
  EXPECT_EQ(q.row_code(0, 0), 0x7f);
  // An Inf block: s = Inf, finite elements code 0 (x / Inf), Inf / Inf NaN.
  EXPECT_EQ(scale_at(q, 1, 0), std::numeric_limits<float>::infinity());
  EXPECT_EQ(q.row_code(1, 3), 0x7f);
  EXPECT_EQ(q.row_code(1, 0) & 0x7f, 0);
  // A zero block without epsilon: s = 0, 0 / 0 is NaN; with 1e-10 codes 0,
  // and -0 keeps its sign.
  EXPECT_EQ(scale_at(q, 2, 0), 0.f);
  EXPECT_EQ(q.row_code(2, 0), 0x7f);
  s.amax_epsilon = 1e-10f;
  QuantBuffers qe;
  qe.alloc(s, m, n);
  ASSERT_EQ(fusion_rt_quantize(&t, &s, &qe.out, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS);
  EXPECT_EQ(scale_at(qe, 2, 0), 1e-10f / 448.f);
  EXPECT_EQ(qe.row_code(2, 0), 0x00);
  EXPECT_EQ(qe.row_code(2, 1), 0x80);
  // The block's largest element codes to +-448 exactly.
  for (int64_t b = 1; b < 4; ++b) {
    int64_t jmax = b * 32;
    for (int64_t j = b * 32; j < b * 32 + 32; ++j)
      if (std::fabs(x.at(0, j)) > std::fabs(x.at(0, jmax)))
        jmax = j;
    EXPECT_EQ(q.row_code(0, jmax) & 0x7f, 0x7e);
  }
  // UE8M0 round-up, exact on subnormals and powers of two.
  EXPECT_EQ(fusion_rt::pow2_roundup(1.f), 1.f);
  EXPECT_EQ(fusion_rt::pow2_roundup(1.0000001f), 2.f);
  EXPECT_EQ(fusion_rt::pow2_roundup(0.75f), 1.f);
  EXPECT_EQ(fusion_rt::pow2_roundup(bits_f32(3u)), bits_f32(4u)); // 3 -> 4 ulps
  EXPECT_EQ(fusion_rt::pow2_roundup(bits_f32(0x500000u)), bits_f32(0x800000u));
  EXPECT_EQ(fusion_rt::pow2_roundup(0x1.000002p127f),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(fusion_rt::pow2_roundup(0.f), 0.f);
}

// Scale views with any strides: column-major [M, nb] (DeepGEMM's layout,
// here with rows padded to 8) gets the same values as a row-major one.
TEST(Fp8Block, ColumnMajorScalesAndBf16) {
  const int64_t m = 5, n = 256, nb = 2, pad = 8;
  HostMatrix x = make_matrix(random_values(m * n, 3, false), m, n, FUSION_RT_BF16);
  fusion_rt_quant_scheme s = block_scheme(FUSION_RT_FORMAT_FP8_BLOCK_E4M3, 128, 1e-10f);
  QuantBuffers q;
  q.alloc(s, m, n);
  fusion_rt_tensor t = x.view();
  ASSERT_EQ(fusion_rt_quantize(&t, &s, &q.out, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS);
  std::vector<float> colmajor(size_t(pad * nb), -1.f);
  QuantBuffers qc;
  qc.alloc(s, m, n);
  qc.out.rowwise_scales.data = colmajor.data();
  qc.out.rowwise_scales.strides[0] = 1;
  qc.out.rowwise_scales.strides[1] = pad;
  ASSERT_EQ(fusion_rt_quantize(&t, &s, &qc.out, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS)
      << fusion_rt_last_error_message();
  EXPECT_EQ(q.row_data, qc.row_data);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t b = 0; b < nb; ++b)
      EXPECT_EQ(colmajor[size_t(b * pad + i)], scale_at(q, i, b));
  EXPECT_EQ(colmajor[size_t(pad - 1)], -1.f); // padding untouched
  // Dequantize: x = q * s, within half an e4m3 unit of the input.
  std::vector<float> back(size_t(m * n));
  fusion_rt_tensor bv = view2d(back.data(), FUSION_RT_F32, m, n);
  ASSERT_EQ(fusion_rt_dequantize(&s, &q.out, FUSION_RT_ROWWISE, &bv, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS)
      << fusion_rt_last_error_message();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float sc = scale_at(q, i, j / 128);
      ASSERT_EQ(back[size_t(i * n + j)],
                fusion_rt::e4m3_to_f32(q.row_code(i, j)) * sc);
      ASSERT_LE(std::fabs(back[size_t(i * n + j)] - x.at(i, j)),
                std::fabs(x.at(i, j)) / 16 + sc * 0x1p-9f);
    }
  fusion_rt_status st =
      fusion_rt_dequantize(&s, &q.out, FUSION_RT_COLWISE, &bv, nullptr, nullptr);
  EXPECT_EQ(st, FUSION_RT_STATUS_UNSUPPORTED);
}

TEST(Fp8Block, FusedEqualsUnfused) {
  const int64_t m = 9, n = 200, k = 135; // k: blocks straddle nothing at K
  int runs = 0;
  for (int32_t g : {128, 64, 50})
    for (int32_t kind : {FUSION_RT_ACT_SILU, FUSION_RT_ACT_GELU, FUSION_RT_ACT_RELU})
      for (int bwd = 0; bwd < 2; ++bwd) {
        fusion_rt_quant_scheme s =
            block_scheme(FUSION_RT_FORMAT_FP8_BLOCK_E4M3, g, 1e-10f, g == 64);
        SCOPED_TRACE(describe(s) + " kind " + std::to_string(kind) +
                     (bwd ? " bwd" : " fwd"));
        HostMatrix x = make_matrix(random_values(m * n, 5u + uint32_t(kind), false),
                                   m, n, FUSION_RT_BF16);
        HostMatrix gr = make_matrix(random_values(m * n, 9, false), m, n, FUSION_RT_BF16);
        fusion_rt_activation act;
        fusion_rt_activation_init(&act);
        act.kind = kind;
        act.backward = bwd;
        act.intermediate_dtype = FUSION_RT_BF16;
        fusion_rt_tensor xv = x.view(), gv = gr.view();
        HostMatrix y = make_matrix(std::vector<float>(size_t(m * n), 0.f), m, n,
                                   FUSION_RT_BF16);
        fusion_rt_tensor yv = y.view();
        std::vector<float> db(static_cast<size_t>(n));
        fusion_rt_tensor dbv = view1d(db.data(), FUSION_RT_F32, n);
        ASSERT_EQ(fusion_rt_activation_apply(&xv, nullptr, bwd ? &gv : nullptr, &act,
                                             &yv, &dbv, nullptr, nullptr),
                  FUSION_RT_STATUS_SUCCESS);
        QuantBuffers fused, unfused;
        fused.alloc(s, m, n, false, true, true);
        unfused.alloc(s, m, n, false, true, false);
        ASSERT_EQ(fusion_rt_act_quantize(&xv, bwd ? &gv : nullptr, &act, &s,
                                         &fused.out, nullptr, nullptr),
                  FUSION_RT_STATUS_SUCCESS)
            << fusion_rt_last_error_message();
        ASSERT_EQ(fusion_rt_quantize(&yv, &s, &unfused.out, nullptr, nullptr),
                  FUSION_RT_STATUS_SUCCESS);
        EXPECT_EQ(0, std::memcmp(fused.dbias.data(), db.data(), size_t(n) * 4));
        unfused.dbias = fused.dbias;
        EXPECT_EQ(diff(fused, unfused), "");
        ++runs;
      }
  // Gated: SwiGLU forward (vLLM's silu_and_mul -> per-token-group FP8) and
  // backward, whose [dact | dgate] halves get separate blocks.
  for (int bwd = 0; bwd < 2; ++bwd) {
    fusion_rt_quant_scheme s = block_scheme(FUSION_RT_FORMAT_FP8_BLOCK_E4M3, 128, 1e-10f);
    HostMatrix packed =
        make_matrix(random_values(m * 2 * k, 77, false), m, 2 * k, FUSION_RT_BF16);
    HostMatrix gr = make_matrix(random_values(m * k, 78, false), m, k, FUSION_RT_BF16);
    fusion_rt_activation act;
    fusion_rt_activation_init(&act);
    act.kind = FUSION_RT_ACT_SWIGLU;
    act.backward = bwd;
    act.intermediate_dtype = FUSION_RT_BF16;
    fusion_rt_tensor pv = packed.view(), gv = gr.view();
    const int64_t cols = bwd ? 2 * k : k;
    HostMatrix y =
        make_matrix(std::vector<float>(size_t(m * cols), 0.f), m, cols, FUSION_RT_BF16);
    fusion_rt_tensor yv = y.view();
    ASSERT_EQ(fusion_rt_activation_apply(&pv, nullptr, bwd ? &gv : nullptr, &act, &yv,
                                         nullptr, nullptr, nullptr),
              FUSION_RT_STATUS_SUCCESS);
    QuantBuffers fused;
    fused.alloc(s, m, cols, bwd != 0);
    ASSERT_EQ(fusion_rt_gated_act_quantize(&pv, nullptr, bwd ? &gv : nullptr, &act, &s,
                                           &fused.out, nullptr, nullptr),
              FUSION_RT_STATUS_SUCCESS)
        << fusion_rt_last_error_message();
    // Unfused: each half of the value matrix quantized on its own.
    const int64_t nbk = (k + 127) / 128;
    ASSERT_EQ(fused.shapes.rowwise_scales[1], (bwd ? 2 : 1) * nbk);
    for (int half = 0; half < (bwd ? 2 : 1); ++half) {
      fusion_rt_tensor hv = yv;
      hv.sizes[1] = k;
      hv.data = y.bytes.data() + half * k * 2;
      QuantBuffers hq;
      hq.alloc(s, m, k);
      ASSERT_EQ(fusion_rt_quantize(&hv, &s, &hq.out, nullptr, nullptr),
                FUSION_RT_STATUS_SUCCESS);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < k; ++j)
          ASSERT_EQ(fused.row_code(i, half * k + j), hq.row_code(i, j));
        for (int64_t b = 0; b < nbk; ++b)
          ASSERT_EQ(scale_at(fused, i, half * nbk + b), scale_at(hq, i, b));
      }
    }
    ++runs;
  }
  EXPECT_EQ(runs, 3 * 3 * 2 + 2);
}

TEST(Fp8Block, SchemeIsValidated) {
  const int64_t m = 2, n = 256;
  HostMatrix x = make_matrix(random_values(m * n, 1, false), m, n, FUSION_RT_F32);
  fusion_rt_tensor t = x.view();
  struct Bad {
    const char *what;
    void (*edit)(fusion_rt_quant_scheme &);
    fusion_rt_status want;
  } bad[] = {
      {"block_cols 0", [](fusion_rt_quant_scheme &s) { s.block_cols = 0; },
       FUSION_RT_STATUS_BAD_VALUE},
      {"block_rows 0", [](fusion_rt_quant_scheme &s) { s.block_rows = 0; },
       FUSION_RT_STATUS_BAD_VALUE},
      // 2D blocks take [ceil(M / 128), ...] scales, not the 1x128 buffer.
      {"block_rows 128", [](fusion_rt_quant_scheme &s) { s.block_rows = 128; },
       FUSION_RT_STATUS_BAD_SHAPE},
      {"colwise", [](fusion_rt_quant_scheme &s) { s.direction = FUSION_RT_BOTH; },
       FUSION_RT_STATUS_UNSUPPORTED},
      {"swizzled",
       [](fusion_rt_quant_scheme &s) { s.scale_layout = FUSION_RT_SCALES_SWIZZLED; },
       FUSION_RT_STATUS_UNSUPPORTED},
      {"delayed",
       [](fusion_rt_quant_scheme &s) {
         s.tensor_scaling = FUSION_RT_TENSOR_SCALING_DELAYED;
       },
       FUSION_RT_STATUS_UNSUPPORTED},
      {"floor", [](fusion_rt_quant_scheme &s) { s.scale_rounding = FUSION_RT_SCALE_FLOOR; },
       FUSION_RT_STATUS_UNSUPPORTED},
      {"format 8", [](fusion_rt_quant_scheme &s) { s.format = 8; },
       FUSION_RT_STATUS_BAD_VALUE},
  };
  const fusion_rt_quant_scheme good =
      block_scheme(FUSION_RT_FORMAT_FP8_BLOCK_E4M3, 128);
  QuantBuffers q;
  q.alloc(good, m, n);
  for (const Bad &b : bad) {
    fusion_rt_quant_scheme s = good;
    b.edit(s);
    EXPECT_EQ(fusion_rt_quantize(&t, &s, &q.out, nullptr, nullptr), b.want) << b.what;
    EXPECT_STRNE(fusion_rt_last_error_message(), "") << b.what;
  }
  // Scales of the wrong type or shape, and a scale_inv the format lacks.
  QuantBuffers w = q;
  w.bind();
  w.out.rowwise_scales.dtype = FUSION_RT_E8M0;
  EXPECT_EQ(fusion_rt_quantize(&t, &good, &w.out, nullptr, nullptr),
            FUSION_RT_STATUS_BAD_DTYPE);
  w.bind();
  w.out.rowwise_scales.sizes[1] = 3;
  EXPECT_EQ(fusion_rt_quantize(&t, &good, &w.out, nullptr, nullptr),
            FUSION_RT_STATUS_BAD_SHAPE);
  w.bind();
  float si = 0.f;
  w.out.scale_inv = view1d(&si, FUSION_RT_F32, 1);
  EXPECT_EQ(fusion_rt_quantize(&t, &good, &w.out, nullptr, nullptr),
            FUSION_RT_STATUS_BAD_VALUE);
  // Nothing was written by any failing call.
  EXPECT_EQ(q.row_data[0], 0xAB);
}

/// common/quotient.h: the quotient from RN(1/s) and one correction equals
/// the IEEE division in f32 wherever |x / s| >= 2^-18 and in its e4m3 and
/// e5m2 codes everywhere, for the scales fp8_block_scale gives (448 and
/// 57344, floors, UE8M0) of bf16 and f32 amaxes and every |x| <= amax
/// (subnormal, signed zero).
TEST(Fp8Block, QuotientByReciprocal) {
  uint64_t st = 0x9e3779b97f4a7c15ull;
  auto rnd = [&] {
    st ^= st << 13;
    st ^= st >> 7;
    st ^= st << 17;
    return st;
  };
  int64_t checked = 0, f32_diff = 0, code_diff = 0, outside = 0;
  for (int t = 0; t < 3000; ++t) {
    // amax in [2^-60, 2^101): every scale in the reciprocal's range.
    uint32_t ab = (uint32_t(rnd()) & 0x007fffffu) |
                  (uint32_t(127 - 60 + rnd() % 161) << 23);
    if (t % 2)
      ab &= 0xffff0000u; // a bf16 amax
    const float amax = bits_f32(ab);
    const bool e4 = t % 3 != 0;
    const float s = fusion_rt::fp8_block_scale(amax, e4 ? 448.f : 57344.f,
                                               t % 5 == 0 ? 1e-10f : 0.f,
                                               t % 7 == 0);
    if (!fusion_rt::quotient_by_reciprocal_ok(s)) {
      ++outside;
      continue;
    }
    const float r = 1.f / s;
    for (int k = 0; k < 1500; ++k) {
      const uint64_t w = rnd();
      float x;
      switch (k % 4) {
      case 0: // any pattern up to amax
        x = bits_f32(uint32_t(w % (uint64_t(ab) + 1)));
        break;
      case 1: // near amax
        x = bits_f32(ab - uint32_t(w % 4096 < ab ? w % 4096 : 0));
        break;
      case 2: // subnormal or zero
        x = bits_f32(uint32_t(w) & 0x007fffffu);
        break;
      default: // a multiple of s (exact quotients and ties)
        x = std::fmin(amax, float(w % 900) * 0.5f * s);
        break;
      }
      if (w & (1ull << 40))
        x = -x;
      const float q = fusion_rt::quotient_by_reciprocal(x, s, r), d = x / s;
      ++checked;
      if (std::fabs(d) >= 0x1p-18f && fusion_rt::f32_bits(q) != fusion_rt::f32_bits(d))
        ++f32_diff;
      if (fusion_rt::f32_to_e4m3(q) != fusion_rt::f32_to_e4m3(d) ||
          fusion_rt::f32_to_e5m2(q) != fusion_rt::f32_to_e5m2(d))
        ++code_diff;
    }
  }
  EXPECT_EQ(outside, 0);
  EXPECT_EQ(checked, 3000 * 1500);
  // The kernels' range test: subnormal, huge, Inf and NaN scales divide.
  EXPECT_FALSE(fusion_rt::quotient_by_reciprocal_ok(0x1p-81f));
  EXPECT_FALSE(fusion_rt::quotient_by_reciprocal_ok(0x1p101f));
  EXPECT_FALSE(fusion_rt::quotient_by_reciprocal_ok(bits_f32(0x7f800000u)));
  EXPECT_FALSE(fusion_rt::quotient_by_reciprocal_ok(bits_f32(0x7fc00000u)));
  EXPECT_EQ(f32_diff, 0);
  EXPECT_EQ(code_diff, 0);
}

namespace {

/// The reference of 2D blocks: the formula with the amax over br x bc.
/// What a reference makes of one block: the scale written and how an
/// element becomes the value that is clamped and converted (x / by, or
/// x * by under the MULTIPLY recipe).
struct BlockRef {
  float written, by;
  bool multiply;
};

/// The blocks of x (br x bc, partial at the edges): the NaN-ignoring amax
/// and whether a NaN was seen go to `block`, whose BlockRef gives the
/// scale and the elements' values; those are clamped to +-max (NaN passes)
/// and converted.
template <typename BlockFn>
Ref reference_blocks(const HostMatrix &x, int32_t f, int64_t br, int64_t bc,
                     BlockFn block) {
  const int64_t m = x.rows, n = x.cols, nbr = (m + br - 1) / br,
                nbc = (n + bc - 1) / bc;
  const float mx = f == FUSION_RT_FORMAT_FP8_BLOCK_E4M3 ? 448.f : 57344.f;
  Ref r;
  r.scales.resize(size_t(nbr * nbc));
  r.codes.resize(size_t(m * n));
  for (int64_t a = 0; a < nbr; ++a)
    for (int64_t b = 0; b < nbc; ++b) {
      float amax = 0.f;
      bool nan = false;
      for (int64_t i = a * br; i < std::min(m, a * br + br); ++i)
        for (int64_t j = b * bc; j < std::min(n, b * bc + bc); ++j) {
          const float v = std::fabs(x.at(i, j));
          nan |= std::isnan(v);
          if (v > amax)
            amax = v;
        }
      const BlockRef k = block(amax, nan, mx);
      r.scales[size_t(a * nbc + b)] = k.written;
      for (int64_t i = a * br; i < std::min(m, a * br + br); ++i)
        for (int64_t j = b * bc; j < std::min(n, b * bc + bc); ++j) {
          float v = k.multiply ? x.at(i, j) * k.by : x.at(i, j) / k.by;
          if (!std::isnan(v))
            v = std::min(mx, std::max(-mx, v));
          r.codes[size_t(i * n + j)] = f == FUSION_RT_FORMAT_FP8_BLOCK_E4M3
                                           ? fusion_rt::f32_to_e4m3(v)
                                           : fusion_rt::f32_to_e5m2(v);
        }
    }
  return r;
}

Ref reference_2d(const HostMatrix &x, int32_t f, int64_t br, int64_t bc,
                 float eps, bool pow2, bool propagate) {
  return reference_blocks(x, f, br, bc, [&](float amax, bool nan, float mx) {
    if (nan && propagate)
      amax = std::numeric_limits<float>::quiet_NaN();
    float s = (amax < eps ? eps : amax) / mx;
    if (pow2 && std::isfinite(s) && s > 0.f)
      s = float(std::exp2(std::ceil(std::log2(double(s)))));
    return BlockRef{s, s, false};
  });
}

} // namespace

/// 2D blocks (128x128 weight tiles, and small odd ones with partial blocks
/// in both directions) equal the formula over whole blocks; their scales are
/// [ceil(M / br), ceil(N / bc)]; dequantize reads each element's block; the
/// tensor amax output is the NaN-ignoring max.
TEST(Fp8Block, TwoDimensionalBlocks) {
  struct Shape {
    int64_t m, n, br, bc;
  } shapes[] = {{260, 300, 128, 128}, {10, 21, 3, 8}, {4, 256, 128, 128}};
  int runs = 0;
  for (const Shape &sh : shapes)
    for (int32_t f : {FUSION_RT_FORMAT_FP8_BLOCK_E4M3, FUSION_RT_FORMAT_FP8_BLOCK_E5M2})
      for (int32_t nan : {FUSION_RT_NAN_PROPAGATE, FUSION_RT_NAN_IGNORE})
        for (int variant = 0; variant < 2; ++variant) {
          const float eps = variant ? 1e-10f : 0.f;
          const bool pow2 = variant == 1;
          HostMatrix x = make_matrix(special_values(sh.m, sh.n), sh.m, sh.n,
                                     runs % 2 ? FUSION_RT_BF16 : FUSION_RT_F32);
          fusion_rt_quant_scheme s = block_scheme(f, int32_t(sh.bc), eps, pow2);
          s.block_rows = int32_t(sh.br);
          s.nan_policy = nan;
          SCOPED_TRACE(describe(s) + " " + std::to_string(sh.br) + "x" +
                       std::to_string(sh.bc));
          QuantBuffers q;
          q.alloc(s, sh.m, sh.n, false, true);
          const int64_t nbr = (sh.m + sh.br - 1) / sh.br, nbc = (sh.n + sh.bc - 1) / sh.bc;
          ASSERT_EQ(q.shapes.rowwise_scales[0], nbr);
          ASSERT_EQ(q.shapes.rowwise_scales[1], nbc);
          fusion_rt_tensor t = x.view();
          ASSERT_EQ(fusion_rt_quantize(&t, &s, &q.out, nullptr, nullptr),
                    FUSION_RT_STATUS_SUCCESS)
              << fusion_rt_last_error_message();
          const Ref r = reference_2d(x, f, sh.br, sh.bc, eps, pow2,
                                     nan == FUSION_RT_NAN_PROPAGATE);
          for (int64_t a = 0; a < nbr; ++a)
            for (int64_t b = 0; b < nbc; ++b)
              ASSERT_TRUE(same_bits_or_both_nan(scale_at(q, a, b),
                                                r.scales[size_t(a * nbc + b)]))
                  << "scale " << a << "," << b;
          for (int64_t i = 0; i < sh.m; ++i)
            for (int64_t j = 0; j < sh.n; ++j)
              ASSERT_EQ(q.row_code(i, j), r.codes[size_t(i * sh.n + j)])
                  << "code " << i << "," << j << " x " << x.at(i, j);
          // The tensor amax ignores NaN (Inf is in the special values).
          EXPECT_TRUE(std::isinf(q.amax));
          // Dequantize: code times its block's scale.
          std::vector<float> back(size_t(sh.m * sh.n));
          fusion_rt_tensor o = view2d(back.data(), FUSION_RT_F32, sh.m, sh.n);
          ASSERT_EQ(fusion_rt_dequantize(&s, &q.out, FUSION_RT_ROWWISE, &o, nullptr,
                                         nullptr),
                    FUSION_RT_STATUS_SUCCESS)
              << fusion_rt_last_error_message();
          for (int64_t i = 0; i < sh.m; i += 7)
            for (int64_t j = 0; j < sh.n; j += 5) {
              const float want =
                  fusion_rt::decode_code(q.row_code(i, j), q.out.rowwise_data.dtype) *
                  scale_at(q, i / sh.br, j / sh.bc);
              ASSERT_TRUE(same_bits_or_both_nan(back[size_t(i * sh.n + j)], want))
                  << "dequantized " << i << "," << j;
            }
          ++runs;
        }
  EXPECT_EQ(runs, 3 * 2 * 2 * 2);
}

/// 2D blocks are refused by the activation entry points and with a dbias
/// output (UNSUPPORTED, with a message), and nothing is written.
TEST(Fp8Block, TwoDimensionalBlocksArePlainOnly) {
  const int64_t m = 4, n = 256;
  HostMatrix x = make_matrix(random_values(m * 2 * n, 3, false), m, 2 * n,
                             FUSION_RT_BF16);
  fusion_rt_tensor t = x.view();
  fusion_rt_quant_scheme s = block_scheme(FUSION_RT_FORMAT_FP8_BLOCK_E4M3, 128);
  s.block_rows = 128;
  fusion_rt_activation a;
  fusion_rt_activation_init(&a);
  a.kind = FUSION_RT_ACT_SWIGLU;
  QuantBuffers q;
  q.alloc(s, m, n);
  EXPECT_EQ(fusion_rt_gated_act_quantize(&t, nullptr, nullptr, &a, &s, &q.out,
                                         nullptr, nullptr),
            FUSION_RT_STATUS_UNSUPPORTED);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("2D FP8 blocks"),
            std::string::npos)
      << fusion_rt_last_error_message();
  a.kind = FUSION_RT_ACT_SILU;
  QuantBuffers q2;
  q2.alloc(s, m, 2 * n);
  EXPECT_EQ(fusion_rt_act_quantize(&t, nullptr, &a, &s, &q2.out, nullptr, nullptr),
            FUSION_RT_STATUS_UNSUPPORTED);
  QuantBuffers q3;
  q3.alloc(s, m, 2 * n, false, false, true);
  EXPECT_EQ(fusion_rt_quantize(&t, &s, &q3.out, nullptr, nullptr),
            FUSION_RT_STATUS_UNSUPPORTED);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("dbias"),
            std::string::npos);
  for (const QuantBuffers *b : {&q, &q2, &q3})
    for (uint8_t c : b->row_data)
      ASSERT_EQ(c, 0xAB);
}

/// A block taller than the matrix (block_rows = 2^30 over 3 rows) is one
/// block row: the CPU backend's band is the matrix, not 2^30 rows.
TEST(Fp8Block, BlockTallerThanTheMatrix) {
  const int64_t m = 3, n = 256;
  HostMatrix x = make_matrix(special_values(4, n), m, n, FUSION_RT_F32);
  fusion_rt_quant_scheme s = block_scheme(FUSION_RT_FORMAT_FP8_BLOCK_E4M3, 128);
  s.block_rows = 1 << 30;
  QuantBuffers q;
  q.alloc(s, m, n);
  ASSERT_EQ(q.shapes.rowwise_scales[0], 1);
  fusion_rt_tensor t = x.view();
  ASSERT_EQ(fusion_rt_quantize(&t, &s, &q.out, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS)
      << fusion_rt_last_error_message();
  const Ref r = reference_2d(x, s.format, 1 << 30, 128, 0.f, false, true);
  for (int64_t b = 0; b < 2; ++b)
    EXPECT_TRUE(same_bits_or_both_nan(scale_at(q, 0, b), r.scales[size_t(b)]));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      ASSERT_EQ(q.row_code(i, j), r.codes[size_t(i * n + j)]) << i << "," << j;
}

namespace {

/// The MULTIPLY recipe's reference, written from the two anchors:
/// torchao's blockwise FP8 training quantizers (torch_blockwise_scale_*:
/// amax in f64 clamped at eps, scale = (max / amax).to(f32), (x * scale)
/// .clamp(-max, max).to(fp8), 1 / scale returned; a NaN amax gives NaN)
/// and TransformerEngine's compute_scale_from_amax (amax < eps -> eps;
/// amax Inf or 0 -> 1; an Inf scale -> FLT_MAX; power of two by truncating
/// the f32 bits), which agree on finite blocks. Here in double, as torchao
/// computes the scale (double rounding of a quotient to f32 via f64 is
/// innocuous: 53 >= 2 * 24 + 2). `multiplier`: the scale written is the
/// multiplier itself (the MULTIPLIER recipe: torchao.float8's rowwise
/// scaling returns max / amax), else 1 / scale.
Ref reference_multiply(const HostMatrix &x, int32_t f, int64_t br, int64_t bc,
                       float eps, bool pow2, bool propagate,
                       bool multiplier = false) {
  return reference_blocks(x, f, br, bc, [&](float famax, bool nan, float mx) {
    float scale;
    if (nan && propagate) {
      scale = std::numeric_limits<float>::quiet_NaN();
    } else {
      const double amax = std::max(double(famax), double(eps));
      if (std::isinf(amax) || amax == 0.0) {
        scale = 1.f;
      } else {
        scale = float(double(mx) / amax);
        if (std::isinf(scale))
          scale = std::numeric_limits<float>::max();
        if (pow2) {
          uint32_t u;
          std::memcpy(&u, &scale, 4);
          u &= 0xff800000u;
          std::memcpy(&scale, &u, 4);
        }
      }
    }
    return BlockRef{multiplier ? scale : 1.0f / scale, scale, true};
  });
}

} // namespace

/// The MULTIPLY recipe (codes of x * (max / amax), 1 / scale written) and
/// the MULTIPLIER recipe (the same codes, the multiplier written) equal
/// their reference for 1xG groups and 2D tiles, both formats, floors, NaN
/// policies and power-of-two scales, on NaN, Inf, zero, subnormal and
/// partial blocks; fused equals unfused; dequantize is code times the
/// written scale (MULTIPLIER: code / the written multiplier); the recipes
/// are refused for formats other than the FP8 blocks.
TEST(Fp8Block, MultiplyRecipe) {
  const int64_t m = 6, n = 300;
  HostMatrix x = make_matrix(special_values(m, n), m, n, FUSION_RT_F32);
  int runs = 0;
  for (int32_t recipe : {FUSION_RT_NVFP4_RECIPE_MULTIPLY,
                         FUSION_RT_NVFP4_RECIPE_MULTIPLIER})
  for (int32_t f : {FUSION_RT_FORMAT_FP8_BLOCK_E4M3, FUSION_RT_FORMAT_FP8_BLOCK_E5M2})
    for (auto [br, g] : {std::pair<int32_t, int32_t>{1, 128}, {1, 7}, {1, 300},
                         {4, 32}, {128, 128}})
      for (float eps : {0.f, 1e-12f})
        for (bool pow2 : {false, true})
          for (int32_t nan : {FUSION_RT_NAN_PROPAGATE, FUSION_RT_NAN_IGNORE}) {
            fusion_rt_quant_scheme s = block_scheme(f, g, eps, pow2);
            s.block_rows = br;
            s.nan_policy = nan;
            s.nvfp4_recipe = recipe;
            const bool multiplier = recipe == FUSION_RT_NVFP4_RECIPE_MULTIPLIER;
            SCOPED_TRACE(describe(s) + " rows " + std::to_string(br) + " eps " +
                         std::to_string(eps) + " recipe " +
                         std::to_string(recipe));
            QuantBuffers q;
            q.alloc(s, m, n, false, true);
            fusion_rt_tensor t = x.view();
            ASSERT_EQ(fusion_rt_quantize(&t, &s, &q.out, nullptr, nullptr),
                      FUSION_RT_STATUS_SUCCESS)
                << fusion_rt_last_error_message();
            const Ref r = reference_multiply(x, f, br, g, eps, pow2,
                                             nan == FUSION_RT_NAN_PROPAGATE,
                                             multiplier);
            const int64_t nbr = q.shapes.rowwise_scales[0],
                          nb = q.shapes.rowwise_scales[1];
            ASSERT_EQ(nbr * nb, int64_t(r.scales.size()));
            for (int64_t a = 0; a < nbr; ++a)
              for (int64_t b = 0; b < nb; ++b)
                ASSERT_TRUE(same_bits_or_both_nan(scale_at(q, a, b),
                                                  r.scales[size_t(a * nb + b)]))
                    << "scale " << a << "," << b << ": " << scale_at(q, a, b)
                    << " vs " << r.scales[size_t(a * nb + b)];
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j)
                ASSERT_EQ(q.row_code(i, j), r.codes[size_t(i * n + j)])
                    << "code " << i << "," << j << " x " << x.at(i, j);
            // Dequantize: code * 1 / multiplier written (MULTIPLY), code /
            // multiplier (MULTIPLIER, correctly rounded).
            std::vector<float> back(size_t(m * n));
            fusion_rt_tensor o = view2d(back.data(), FUSION_RT_F32, m, n);
            ASSERT_EQ(fusion_rt_dequantize(&s, &q.out, FUSION_RT_ROWWISE, &o,
                                           nullptr, nullptr),
                      FUSION_RT_STATUS_SUCCESS)
                << fusion_rt_last_error_message();
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                const float c = fusion_rt::decode_code(
                    q.row_code(i, j), q.out.rowwise_data.dtype);
                const float sc = scale_at(q, i / br, j / g);
                const float want = multiplier
                                       ? float(double(c) / double(sc))
                                       : c * sc;
                ASSERT_TRUE(same_bits_or_both_nan(back[size_t(i * n + j)], want))
                    << "dequantized " << i << "," << j << ": "
                    << back[size_t(i * n + j)] << " vs " << want;
              }
            ++runs;
          }
  EXPECT_EQ(runs, 2 * 2 * 5 * 2 * 2 * 2);

  // The two writings differ only in the scale: MULTIPLIER writes the
  // reciprocal's operand, and without pow2 some 1 / RN(1 / m) != m.
  {
    fusion_rt_quant_scheme s1 = block_scheme(FUSION_RT_FORMAT_FP8_BLOCK_E4M3, 7);
    s1.nvfp4_recipe = FUSION_RT_NVFP4_RECIPE_MULTIPLY;
    fusion_rt_quant_scheme s2 = s1;
    s2.nvfp4_recipe = FUSION_RT_NVFP4_RECIPE_MULTIPLIER;
    QuantBuffers a1, a2;
    a1.alloc(s1, m, n);
    a2.alloc(s2, m, n);
    fusion_rt_tensor t = x.view();
    ASSERT_EQ(fusion_rt_quantize(&t, &s1, &a1.out, nullptr, nullptr),
              FUSION_RT_STATUS_SUCCESS);
    ASSERT_EQ(fusion_rt_quantize(&t, &s2, &a2.out, nullptr, nullptr),
              FUSION_RT_STATUS_SUCCESS);
    int scalesDiffer = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        ASSERT_EQ(a1.row_code(i, j), a2.row_code(i, j));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t b = 0; b < a1.shapes.rowwise_scales[1]; ++b) {
        const float w = scale_at(a2, i, b), v = scale_at(a1, i, b);
        scalesDiffer += !same_bits_or_both_nan(w, v);
        if (std::isfinite(w) && w != 0.f)
          ASSERT_TRUE(same_bits_or_both_nan(v, 1.0f / w)) << i << "," << b;
      }
    EXPECT_GT(scalesDiffer, 0);
  }

  // The two recipes differ (a test that could not tell them apart would
  // pass either): on these values, some code differs.
  fusion_rt_quant_scheme s = block_scheme(FUSION_RT_FORMAT_FP8_BLOCK_E4M3, 128);
  QuantBuffers a, b;
  a.alloc(s, m, n);
  fusion_rt_tensor t = x.view();
  ASSERT_EQ(fusion_rt_quantize(&t, &s, &a.out, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS);
  s.nvfp4_recipe = FUSION_RT_NVFP4_RECIPE_MULTIPLY;
  b.alloc(s, m, n);
  ASSERT_EQ(fusion_rt_quantize(&t, &s, &b.out, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS);
  int differ = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      differ += a.row_code(i, j) != b.row_code(i, j);
  EXPECT_GT(differ, 0);

  // Fused SiLU (1x128) equals the unfused activation then quantize.
  {
    const int64_t fm = 4, fn = 256;
    HostMatrix xb = make_matrix(random_values(fm * fn, 9, false), fm, fn,
                                FUSION_RT_BF16);
    fusion_rt_activation act;
    fusion_rt_activation_init(&act);
    act.kind = FUSION_RT_ACT_SILU;
    act.intermediate_dtype = FUSION_RT_BF16;
    fusion_rt_tensor xv = xb.view();
    HostMatrix y = make_matrix(std::vector<float>(size_t(fm * fn), 0.f), fm, fn,
                               FUSION_RT_BF16);
    fusion_rt_tensor yv = y.view();
    ASSERT_EQ(fusion_rt_activation_apply(&xv, nullptr, nullptr, &act, &yv,
                                         nullptr, nullptr, nullptr),
              FUSION_RT_STATUS_SUCCESS)
        << fusion_rt_last_error_message();
    QuantBuffers fused, unfused;
    fused.alloc(s, fm, fn);
    unfused.alloc(s, fm, fn);
    ASSERT_EQ(fusion_rt_act_quantize(&xv, nullptr, &act, &s, &fused.out,
                                     nullptr, nullptr),
              FUSION_RT_STATUS_SUCCESS)
        << fusion_rt_last_error_message();
    ASSERT_EQ(fusion_rt_quantize(&yv, &s, &unfused.out, nullptr, nullptr),
              FUSION_RT_STATUS_SUCCESS);
    EXPECT_EQ(diff(fused, unfused), "");
  }

  // Other formats refuse the recipes.
  for (int32_t recipe : {FUSION_RT_NVFP4_RECIPE_MULTIPLY,
                         FUSION_RT_NVFP4_RECIPE_MULTIPLIER})
  for (int32_t f : {FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_FORMAT_NVFP4,
                    FUSION_RT_FORMAT_FP8_E4M3}) {
    fusion_rt_quant_scheme o = scheme_of(f, FUSION_RT_ROWWISE);
    o.nvfp4_recipe = recipe;
    QuantBuffers q;
    q.alloc(scheme_of(f, FUSION_RT_ROWWISE), m, n);
    EXPECT_EQ(fusion_rt_quantize(&t, &o, &q.out, nullptr, nullptr),
              FUSION_RT_STATUS_UNSUPPORTED);
    EXPECT_NE(std::string(fusion_rt_last_error_message()).find("MULTIPLY"),
              std::string::npos)
        << fusion_rt_last_error_message();
  }
}
