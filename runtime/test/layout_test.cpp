//===- layout_test.cpp - scale layouts and colwise copies -----------------===//
//
// The swizzled scale layout against its formula (and hand-computed offsets),
// colwise quantization against rowwise quantization of the transpose, in
// both colwise layouts, for every block format and odd shapes.
//
//===----------------------------------------------------------------------===//
#include "test_util.h"

#include "common/layout.h"

#include <gtest/gtest.h>

using namespace fusion_rt_test;

namespace {

constexpr int32_t kBlockFormats[] = {FUSION_RT_FORMAT_MXFP8_E4M3,
                                     FUSION_RT_FORMAT_MXFP8_E5M2,
                                     FUSION_RT_FORMAT_MXFP4, FUSION_RT_FORMAT_NVFP4};

struct Shape {
  int64_t m, n;
};
constexpr Shape kShapes[] = {{1, 1}, {7, 45}, {77, 130}, {130, 77}, {256, 96}};

QuantBuffers run(const fusion_rt_quant_scheme &s, std::vector<float> &x,
                 int64_t m, int64_t n) {
  QuantBuffers q;
  q.alloc(s, m, n);
  fusion_rt_tensor t = view2d(x.data(), FUSION_RT_F32, m, n);
  fusion_rt_status st = fusion_rt_quantize(&t, &s, &q.out, nullptr, nullptr);
  EXPECT_EQ(st, FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
  return q;
}

} // namespace

TEST(Layout, SwizzleFormulaHandValues) {
  using fusion_rt::swizzled_scale_offset;
  // 4 padded columns: one tile column.
  EXPECT_EQ(swizzled_scale_offset(0, 0, 4), 0);
  EXPECT_EQ(swizzled_scale_offset(0, 3, 4), 3);
  EXPECT_EQ(swizzled_scale_offset(1, 0, 4), 16);
  EXPECT_EQ(swizzled_scale_offset(31, 0, 4), 496);
  EXPECT_EQ(swizzled_scale_offset(32, 0, 4), 4);
  EXPECT_EQ(swizzled_scale_offset(127, 3, 4), 511);
  EXPECT_EQ(swizzled_scale_offset(128, 0, 4), 512);
  // 8 padded columns: tiles of a 128-row group are consecutive.
  EXPECT_EQ(swizzled_scale_offset(0, 4, 8), 512);
  EXPECT_EQ(swizzled_scale_offset(128, 0, 8), 1024);
  EXPECT_EQ(swizzled_scale_offset(129, 5, 8), 1024 + 512 + 16 + 1);
}

TEST(Layout, SwizzledEqualsCompactThroughFormula) {
  for (int32_t f : kBlockFormats)
    for (Shape sh : kShapes)
      for (int32_t dir : {FUSION_RT_ROWWISE, FUSION_RT_COLWISE}) {
        std::vector<float> x = random_values(sh.m * sh.n, uint32_t(sh.m * 31 + sh.n));
        const int32_t lay = FUSION_RT_COLWISE_TRANSPOSED;
        QuantBuffers c = run(scheme_of(f, dir, lay, FUSION_RT_SCALES_COMPACT), x,
                             sh.m, sh.n);
        QuantBuffers z = run(scheme_of(f, dir, lay, FUSION_RT_SCALES_SWIZZLED), x,
                             sh.m, sh.n);
        SCOPED_TRACE(describe(z.scheme) + " " + std::to_string(sh.m) + "x" +
                     std::to_string(sh.n));
        EXPECT_EQ(c.row_data, z.row_data);
        EXPECT_EQ(c.col_data, z.col_data);
        // Logical scale matrix S[r][c]: rowwise [M, nb(N)]; colwise
        // (transposed compact) [N, nb(M)].
        const bool row = dir == FUSION_RT_ROWWISE;
        const auto &cs = row ? c.shapes.rowwise_scales : c.shapes.colwise_scales;
        const auto &zs = row ? z.shapes.rowwise_scales : z.shapes.colwise_scales;
        const std::vector<uint8_t> &cb = row ? c.row_scales : c.col_scales;
        const std::vector<uint8_t> &zb = row ? z.row_scales : z.col_scales;
        EXPECT_EQ(zs[0], fusion_rt::round_up(cs[0], 128));
        EXPECT_EQ(zs[1], fusion_rt::round_up(cs[1], 4));
        std::vector<bool> hit(zb.size(), false);
        for (int64_t r = 0; r < cs[0]; ++r)
          for (int64_t k = 0; k < cs[1]; ++k) {
            int64_t off = fusion_rt::swizzled_scale_offset(r, k, zs[1]);
            ASSERT_LT(off, int64_t(zb.size()));
            ASSERT_EQ(zb[size_t(off)], cb[size_t(r * cs[1] + k)]) << r << "," << k;
            hit[size_t(off)] = true;
          }
        for (size_t i = 0; i < zb.size(); ++i) {
          if (!hit[i]) {
            ASSERT_EQ(zb[i], 0) << "padding byte " << i << " is not zero";
          }
        }
      }
}

TEST(Layout, ColwiseEqualsRowwiseOfTranspose) {
  for (int32_t f : kBlockFormats)
    for (Shape sh : kShapes) {
      std::vector<float> x = random_values(sh.m * sh.n, uint32_t(sh.m + 7 * sh.n));
      std::vector<float> xt(x.size());
      for (int64_t i = 0; i < sh.m; ++i)
        for (int64_t j = 0; j < sh.n; ++j)
          xt[size_t(j * sh.m + i)] = x[size_t(i * sh.n + j)];
      QuantBuffers rt = run(scheme_of(f, FUSION_RT_ROWWISE), xt, sh.n, sh.m);
      QuantBuffers ct =
          run(scheme_of(f, FUSION_RT_COLWISE, FUSION_RT_COLWISE_TRANSPOSED), x,
              sh.m, sh.n);
      SCOPED_TRACE(describe(ct.scheme) + " " + std::to_string(sh.m) + "x" +
                   std::to_string(sh.n));
      // Transposed layout: the same bytes as rowwise of the transpose.
      EXPECT_EQ(ct.col_data, rt.row_data);
      EXPECT_EQ(ct.col_scales, rt.row_scales);
      if (f == FUSION_RT_FORMAT_NVFP4)
        continue; // NVFP4 colwise is transposed only
      QuantBuffers cs = run(scheme_of(f, FUSION_RT_COLWISE, FUSION_RT_COLWISE_SAME),
                            x, sh.m, sh.n);
      const int64_t nbm = (sh.m + 31) / 32;
      for (int64_t i = 0; i < sh.m; ++i)
        for (int64_t j = 0; j < sh.n; ++j)
          ASSERT_EQ(cs.col_code(i, j), rt.row_code(j, i)) << i << "," << j;
      for (int64_t rb = 0; rb < nbm; ++rb)
        for (int64_t j = 0; j < sh.n; ++j)
          ASSERT_EQ(cs.col_scales[size_t(rb * sh.n + j)],
                    rt.row_scales[size_t(j * nbm + rb)]);
    }
}

TEST(Layout, BothEqualsSeparateDirections) {
  for (int32_t f : kBlockFormats) {
    const int64_t m = 77, n = 130;
    std::vector<float> x = random_values(m * n, 5);
    QuantBuffers r = run(scheme_of(f, FUSION_RT_ROWWISE), x, m, n);
    QuantBuffers c = run(scheme_of(f, FUSION_RT_COLWISE, FUSION_RT_COLWISE_TRANSPOSED),
                         x, m, n);
    QuantBuffers b =
        run(scheme_of(f, FUSION_RT_BOTH, FUSION_RT_COLWISE_TRANSPOSED), x, m, n);
    SCOPED_TRACE(describe(b.scheme));
    EXPECT_EQ(b.row_data, r.row_data);
    EXPECT_EQ(b.row_scales, r.row_scales);
    EXPECT_EQ(b.col_data, c.col_data);
    EXPECT_EQ(b.col_scales, c.col_scales);
  }
}

// MXFP4 packing: even element in the low nibble; an odd row's pad nibble is 0.
TEST(Layout, Fp4PackingLowNibbleFirst) {
  fusion_rt_quant_scheme s = scheme_of(FUSION_RT_FORMAT_MXFP4, FUSION_RT_ROWWISE);
  std::vector<float> x = {6.f, 1.f, -0.5f, 3.f, 2.f}; // amax 6 -> scale 2^0
  QuantBuffers q = run(s, x, 1, 5);
  EXPECT_EQ(q.row_scales[0], 127);
  ASSERT_EQ(q.row_data.size(), 3u);
  EXPECT_EQ(q.row_data[0], 0x27); // 6 = 0x7 low, 1 = 0x2 high
  EXPECT_EQ(q.row_data[1], 0x59); // -0.5 = 0x9 low, 3 = 0x5 high
  EXPECT_EQ(q.row_data[2], 0x04); // 2 = 0x4 low, pad nibble 0
}

// fusion_rt_quant_shapes_for: the shapes the lowering allocates, by hand.
TEST(Layout, QuantShapesForHandValues) {
  auto shapes = [](fusion_rt_quant_scheme s, int64_t m, int64_t n, int gated_bwd) {
    fusion_rt_quant_shapes sh;
    EXPECT_EQ(fusion_rt_quant_shapes_for(&s, m, n, gated_bwd, &sh),
              FUSION_RT_STATUS_SUCCESS);
    return sh;
  };
  auto eq = [](const int64_t (&a)[2], int64_t r, int64_t c) {
    EXPECT_EQ(a[0], r);
    EXPECT_EQ(a[1], c);
  };
  fusion_rt_quant_shapes s = shapes(
      scheme_of(FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_BOTH, FUSION_RT_COLWISE_SAME),
      100, 70, 0);
  eq(s.rowwise_data, 100, 70);
  eq(s.rowwise_scales, 100, 3);
  eq(s.colwise_data, 100, 70);
  eq(s.colwise_scales, 4, 70);
  s = shapes(scheme_of(FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_BOTH,
                       FUSION_RT_COLWISE_TRANSPOSED, FUSION_RT_SCALES_SWIZZLED),
             100, 70, 0);
  eq(s.colwise_data, 70, 100);
  eq(s.rowwise_scales, 128, 4);
  eq(s.colwise_scales, 128, 4);
  s = shapes(scheme_of(FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_COLWISE,
                       FUSION_RT_COLWISE_TRANSPOSED),
             100, 70, 0);
  eq(s.rowwise_data, 0, 0);
  eq(s.rowwise_scales, 0, 0);
  eq(s.colwise_scales, 70, 4);
  s = shapes(scheme_of(FUSION_RT_FORMAT_NVFP4, FUSION_RT_BOTH,
                       FUSION_RT_COLWISE_TRANSPOSED, FUSION_RT_SCALES_SWIZZLED),
             100, 70, 0);
  eq(s.rowwise_scales, 128, 8);  // nb16(70) = 5 -> 8
  eq(s.colwise_scales, 128, 8);  // nb16(100) = 7 -> 8
  // Gated backward [M, 2K], K = 45: two segments of nb(45) = 2 scale columns.
  s = shapes(scheme_of(FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_BOTH), 100, 90, 1);
  eq(s.rowwise_scales, 100, 4);
  eq(s.colwise_scales, 4, 90);
  s = shapes(scheme_of(FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_ROWWISE), 100, 90, 0);
  eq(s.rowwise_scales, 100, 3); // one segment: nb(90) = 3
  s = shapes(scheme_of(FUSION_RT_FORMAT_FP8_E4M3, FUSION_RT_BOTH,
                       FUSION_RT_COLWISE_TRANSPOSED),
             100, 70, 0);
  eq(s.colwise_data, 70, 100);
  eq(s.rowwise_scales, 0, 0);
  eq(s.colwise_scales, 0, 0);
}
