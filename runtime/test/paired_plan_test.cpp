//===- paired_plan_test.cpp - launch plans of the CUDA paired projection ---===//
//
// runtime/common/paired_plan.h is plain C++: the CUDA backend launches from
// it and the kernel report prints it. These tests check, without a GPU, what
// the kernels rely on: every 16-byte chunk of K is owned by exactly one
// (cluster rank, warp), every token and weight row is covered by the grid,
// the launch fits (threads, cluster size, grid limits), the lean gemv
// instance is chosen only where one batch of loads covers a lane, the
// decode instance only where every lane has the same chunks, and the
// selector follows the documented thresholds (docs/paired-projections.md).
//
//===----------------------------------------------------------------------===//
#include "common/paired_plan.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace fusion_rt::paired;

std::string where(int64_t M, int64_t K, int64_t H0, int64_t H1, bool gated) {
  return "M=" + std::to_string(M) + " K=" + std::to_string(K) +
         " H=" + std::to_string(H0) + "/" + std::to_string(H1) +
         (gated ? " gated" : "");
}

const int64_t kMs[] = {1, 2, 3, 15, 16, 17, 40, 64, 128, 200, 512, 1024, 4096};
const int64_t kKs[] = {8, 16, 264, 1024, 2048, 4096, 5120, 16384, 40960};
const int64_t kHs[][2] = {{1, 1}, {5, 3}, {32, 32}, {48, 48}, {64, 64},
                          {17, 9}, {512, 512}, {40, 24}};

TEST(PairedPlan, MmaPlanCoversEveryChunkRowAndToken) {
  for (int64_t M : kMs)
    for (int64_t K : kKs)
      for (const auto &h : kHs)
        for (bool gated : {false, true}) {
          if (gated && h[0] != h[1])
            continue;
          const MmaPlan p = plan_mma(M, K, h[0], h[1], gated);
          const std::string at = where(M, K, h[0], h[1], gated);
          ASSERT_TRUE(p.ok) << at;
          EXPECT_EQ(p.chunks, K / 8) << at;
          // K: ranks own [r * cpc, (r + 1) * cpc), warps [w * cpw, ...) of
          // that, in whole 32-K blocks (4 chunks); together they reach past
          // the last chunk, and the last rank is not empty.
          EXPECT_EQ(p.cpw % 4, 0) << at;
          EXPECT_EQ(p.cpc, p.cpw * p.wk) << at;
          EXPECT_GE(p.cpc * p.S, p.chunks) << at;
          EXPECT_LT((p.S - 1) * p.cpc, p.chunks) << at;
          // Launch limits.
          EXPECT_GE(p.S, 1) << at;
          EXPECT_LE(p.S, kMmaMaxCluster) << at;
          EXPECT_GE(p.wk, 1) << at;
          EXPECT_LE(p.threads(), kMaxThreads) << at;
          // Rows and tokens covered; a gated tile is 8 gate + 8 up rows.
          const int64_t rows = gated ? 2 * h[0] : h[0] + h[1];
          EXPECT_GE(p.g * 8 * p.nt, rows) << at;
          EXPECT_LT((p.g - 1) * 8 * p.nt, rows) << at;
          EXPECT_GE(p.z * 16 * p.tm, M) << at;
          if (gated) {
            EXPECT_EQ(p.nt, 2) << at;
          }
        }
}

TEST(PairedPlan, MmaOverridesAreClamped) {
  MmaOverrides o;
  o.S = 100;
  o.tokens = 32;
  o.rows = 8;
  o.wk = 64;
  const MmaPlan p = plan_mma(300, 512, 24, 40, false, o);
  EXPECT_EQ(p.S, kMaxCluster);
  EXPECT_EQ(p.tm, 2);
  EXPECT_EQ(p.nt, 1);
  EXPECT_EQ(p.wk, kMaxWarps);
  EXPECT_GE(p.cpc * p.S, p.chunks);
  // A gated pair keeps 16-row tiles whatever the override.
  EXPECT_EQ(plan_mma(96, 1024, 48, 48, true, o).nt, 2);
}

TEST(PairedPlan, GemvPlanCoversEveryChunkAndLeanMeansOneBatch) {
  for (int64_t M : kMs)
    for (int64_t K : kKs)
      for (const auto &h : kHs)
        for (bool gated : {false, true})
          for (int64_t esize : {2, 4}) {
            if ((gated && h[0] != h[1]) || K % (16 / esize) != 0)
              continue;
            const GemvPlan p = plan_gemv(M, K, h[0], h[1], gated, esize);
            const std::string at = where(M, K, h[0], h[1], gated) +
                                   " esize=" + std::to_string(esize);
            if (!p.ok)
              continue; // the grid does not fit: the backend takes another path
            EXPECT_EQ(p.chunks, K * esize / 16) << at;
            EXPECT_EQ(p.cpw % 32, 0) << at; // one chunk per lane per round
            EXPECT_EQ(p.cpc, p.cpw * p.wk) << at;
            EXPECT_GE(p.cpc * p.S, p.chunks) << at;
            EXPECT_LE(p.threads(), kMaxThreads) << at;
            EXPECT_GE(p.z * p.mt, M) << at;
            EXPECT_GE(p.g * p.wr, p.units) << at;
            if (p.mt >= 4) {
              EXPECT_LE(int64_t(p.smem), kXsBytes) << at;
            }
            // The lean instance has no batch loop: every lane's chunks of
            // the warp's range must fit in one batch.
            if (gemv_is_lean(p.S, p.mt, p.cpw)) {
              EXPECT_LE(p.cpw / 32, kBatch) << at;
            }
          }
}

TEST(PairedPlan, DecodeShapesTakeTheLeanGemvInstance) {
  // The GDN gate shapes at N <= 16 (bf16): no cluster, one batch per lane,
  // except (5120, 48) at N = 16, where the grid cap halves the K-split warps
  // (2 x 2 warps, 10 chunks per lane: two batches).
  const int64_t shapes[][2] = {{2048, 32}, {5120, 48}, {4096, 64}};
  for (const auto &s : shapes)
    for (int64_t M : {1, 2, 4, 8, 16}) {
      const GemvPlan p = plan_gemv(M, s[0], s[1], s[1], false, 2);
      const bool expect = !(s[0] == 5120 && M == 16);
      EXPECT_TRUE(p.ok) << where(M, s[0], s[1], s[1], false);
      EXPECT_EQ(gemv_is_lean(p.S, p.mt, p.cpw), expect)
          << where(M, s[0], s[1], s[1], false);
    }
  // A forced cluster is never lean.
  GemvOverrides o;
  o.S = 4;
  const GemvPlan c = plan_gemv(1, 2048, 32, 32, false, 2, o);
  EXPECT_FALSE(gemv_is_lean(c.S, c.mt, c.cpw));
}

TEST(PairedPlan, DecodeInstanceServesTheGdnDecodeCalls) {
  // (K, H, largest M with one token per CTA, chunks per lane) for bf16.
  const int64_t shapes[][4] = {{2048, 32, 16, 8}, {5120, 48, 2, 5}, {4096, 64, 4, 8}};
  for (const auto &s : shapes)
    for (int64_t M : {1, 2, 4, 8, 16}) {
      const GemvPlan p = plan_gemv(M, s[0], s[1], s[1], false, 2);
      const std::string at = where(M, s[0], s[1], s[1], false);
      EXPECT_EQ(decode_nb(p, false, true, false), M <= s[2] ? s[3] : 0) << at;
      EXPECT_EQ(decode_nb(p, true, true, false), 0) << at << " (gated)";
      EXPECT_EQ(decode_nb(p, false, false, false), 0) << at << " (bf16 bias)";
      EXPECT_EQ(decode_nb(p, false, true, true), 0) << at << " (PDL)";
    }
  // Wherever it applies: one token, no cluster, every lane of a row with
  // the same nb <= kBatch chunks, at most 8 warps.
  for (int64_t M : kMs)
    for (int64_t K : kKs)
      for (const auto &h : kHs)
        for (int64_t es : {2, 4}) {
          if (K % (16 / es))
            continue;
          const GemvPlan p = plan_gemv(M, K, h[0], h[1], false, es);
          const int64_t nb = decode_nb(p, false, true, false);
          if (nb == 0)
            continue;
          const std::string at = where(M, K, h[0], h[1], false);
          EXPECT_TRUE(p.ok && p.mt == 1 && p.S == 1 && p.rpw == 1) << at;
          EXPECT_LE(nb, kBatch) << at;
          EXPECT_EQ(nb * 32, p.cpw) << at;
          EXPECT_EQ(p.wk * p.cpw, p.chunks) << at;
          EXPECT_LE(p.wr * p.wk, kMaxWarps) << at;
        }
}

TEST(PairedPlan, SelectorFollowsTheDocumentedThresholds) {
  // M <= 16 always takes gemv when the views vectorise.
  // Weights past 8 MiB (80 MiB here): gemv only for one token.
  EXPECT_EQ(select_path(16, 40960, 512, 512, 2, true), Path::Blas);
  EXPECT_EQ(select_path(1, 40960, 512, 512, 2, true), Path::Gemv);
  EXPECT_EQ(select_path(2, 40960, 512, 512, 2, true), Path::Mma); // 2^26.3
  EXPECT_EQ(select_path(2, 4096, 14336, 14336, 2, true), Path::Blas); // Llama-3-8B FFN
  EXPECT_EQ(select_path(16, 2048, 1024, 1024, 2, true), Path::Gemv); // 8 MiB
  // Past that: gemv up to 2^23 multiply-adds (16-bit), then mma.
  EXPECT_EQ(select_path(64, 2048, 32, 32, 2, true), Path::Gemv);  // 2^23
  EXPECT_EQ(select_path(65, 2048, 32, 32, 2, true), Path::Mma);
  EXPECT_EQ(select_path(128, 2048, 32, 32, 2, true), Path::Mma);
  // f32 operands: gemv up to 2^24, never mma.
  EXPECT_EQ(select_path(128, 2048, 32, 32, 4, true), Path::Gemv);  // 2^24
  EXPECT_EQ(select_path(129, 2048, 32, 32, 4, true), Path::Blas);
  // mma up to 3 * 2^26 multiply-adds, then cuBLAS.
  EXPECT_EQ(select_path(1024, 2048, 32, 32, 2, true), Path::Mma);  // 2^27
  EXPECT_EQ(select_path(1536, 2048, 32, 32, 2, true), Path::Mma);  // 3 * 2^26
  EXPECT_EQ(select_path(1537, 2048, 32, 32, 2, true), Path::Blas);
  EXPECT_EQ(select_path(512, 5120, 48, 48, 2, true), Path::Blas);  // 2^27.9
  // Views that cannot be loaded 16 bytes at a time: cuBLAS (or generic).
  EXPECT_EQ(select_path(1, 2048, 32, 32, 2, false), Path::Blas);
  // The FUSION_RT_PAIRED_GEMV_MAX_M override replaces the gemv rule only.
  EXPECT_EQ(select_path(1, 2048, 32, 32, 2, true, 0), Path::Mma);
  EXPECT_EQ(select_path(300, 2048, 32, 32, 2, true, 300), Path::Gemv);
  EXPECT_EQ(select_path(4096, 2048, 32, 32, 2, true, 0), Path::Blas);
}

} // namespace

// The prefill form's conditions (cuda_paired_quantize_execute and the kernel
// report): each rejected case names the rule that rejects it.
TEST(PairedPlan, PrefillFormTakesGatedBiasOnlyPairsOfOneRounding) {
  const QuantHalf none{};
  const QuantHalf bf16{FUSION_RT_EPILOGUE_NONE, FUSION_RT_ROUND_BF16};
  const QuantHalf f16{FUSION_RT_EPILOGUE_NONE, FUSION_RT_ROUND_F16};
  const QuantHalf biasAfter{FUSION_RT_EPILOGUE_BIAS,
                            FUSION_RT_ROUND_BF16_AFTER_BIAS, true, false,
                            FUSION_RT_BF16};
  bool biased = true;
  EXPECT_TRUE(prefill_form(true, {none, none}, 66, biased));
  EXPECT_FALSE(biased);
  EXPECT_TRUE(prefill_form(true, {bf16, bf16}, 14336, biased));
  EXPECT_FALSE(prefill_form(false, {bf16, bf16}, 14336, biased)) << "ungated";
  EXPECT_FALSE(prefill_form(true, {bf16, f16}, 64, biased)) << "two roundings";
  EXPECT_FALSE(prefill_form(true, {bf16, none}, 64, biased)) << "one rounded";
  EXPECT_TRUE(prefill_form(true, {biasAfter, biasAfter}, 2880, biased));
  EXPECT_TRUE(biased);
  QuantHalf f32Bias = biasAfter;
  f32Bias.bias_dtype = FUSION_RT_F32;
  EXPECT_TRUE(prefill_form(true, {f32Bias, biasAfter}, 128, biased));
  EXPECT_FALSE(prefill_form(true, {biasAfter, biasAfter}, 66, biased))
      << "biased H not a multiple of 8";
  // One field of a biased half changed, each rejected.
  auto with = [&](void (*change)(QuantHalf &)) {
    QuantHalf h = biasAfter;
    change(h);
    return h;
  };
  const std::pair<const char *, QuantHalf> rejected[] = {
      {"bias added after the rounding",
       with([](QuantHalf &h) { h.round = FUSION_RT_ROUND_BF16; })},
      {"scale", with([](QuantHalf &h) { h.scale = true; })},
      {"bias of another 16-bit type",
       with([](QuantHalf &h) { h.bias_dtype = FUSION_RT_F16; })},
      {"bias epilogue without a bias", with([](QuantHalf &h) { h.bias = false; })}};
  for (const auto &[why, h] : rejected)
    EXPECT_FALSE(prefill_form(true, {h, biasAfter}, 64, biased)) << why;
  QuantHalf sigmoid{FUSION_RT_EPILOGUE_SIGMOID, FUSION_RT_ROUND_NONE};
  EXPECT_FALSE(prefill_form(true, {sigmoid, none}, 64, biased))
      << "an epilogue other than a bias";
  const QuantHalf f32BiasNoRound{FUSION_RT_EPILOGUE_BIAS, FUSION_RT_ROUND_NONE,
                                 true, false, FUSION_RT_F32};
  EXPECT_TRUE(prefill_form(true, {f32BiasNoRound, none}, 8, biased));
  EXPECT_EQ(rounded_dtype(FUSION_RT_ROUND_F16_AFTER_BIAS), FUSION_RT_F16);
  EXPECT_EQ(rounded_dtype(FUSION_RT_ROUND_NONE), FUSION_RT_F32);
}
