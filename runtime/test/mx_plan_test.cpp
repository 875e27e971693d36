//===- mx_plan_test.cpp - which kernel runs an MXFP8 quantizer ------------===//
//
// runtime/common/mx_plan.h is plain C++: the CUDA backend launches what
// plan_mx returns and the kernel report names it with kernel_name. These
// tests check, without a GPU, the choice the measurements made
// (docs/kernels.md) and the knobs of common/tuning.def that select the
// baselines, the grid arithmetic every launcher now takes from the plan,
// and the tuning knobs' parser and C entry points.
//
//===----------------------------------------------------------------------===//
#include "common/fp4_plan.h"
#include "common/fp8_plan.h"
#include "common/mx_plan.h"
#include "fusion_rt.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace fusion_rt;
using namespace fusion_rt::mx_plan;

Request plain(int dir, int64_t M, int64_t K) {
  Request r;
  r.dir = dir;
  r.M = M;
  r.K = K;
  return r;
}

Request gated(bool backward, int64_t M, int64_t K) {
  Request r;
  r.src = backward ? Source::GatedBwd : Source::GatedFwd;
  r.kind = kSwiGLU;
  r.inter = kInterBF16;
  r.M = M;
  r.K = K;
  return r;
}

const std::string kBF16 = "fusion_rt::cuda::BF16T";

TEST(MxPlan, PlainRowwiseTakesTheStreamKernel) {
  Plan p = plan_mx(plain(kRow, 1024, 2048), Tuning{});
  EXPECT_EQ(p.family, Family::RowStream);
  EXPECT_TRUE(p.flat);
  // 1024 rows x 8 chunks of 256; 4 chunks a warp step, 4 warps a block.
  EXPECT_EQ(p.units, 8192);
  EXPECT_EQ(p.want, 512);
  EXPECT_EQ(kernel_name(p, kBF16, true, true),
            "void fusion_rt::cuda::stream::row_stream_kernel<fusion_rt::cuda::BF16T, "
            "true, true, 4, true, true, true>(fusion_rt::cuda::KParams)");
  Request general = plain(kRow, 1024, 2048);
  general.flat = false; // strided rows or swizzled scales
  p = plan_mx(general, Tuning{});
  EXPECT_EQ(p.family, Family::RowStream);
  EXPECT_EQ(p.want, 256); // 8 chunks a step
  EXPECT_NE(kernel_name(p, kBF16, true, true).find(", 8, false, false, false>"),
            std::string::npos);
}

TEST(MxPlan, StreamKernelConditions) {
  // Width not a multiple of 256, unaligned views, an amax, f32 input, or the
  // knob off: the v2 tile kernel (16-bit) or the engine (f32, amax).
  EXPECT_EQ(plan_mx(plain(kRow, 64, 320), Tuning{}).family, Family::V2);
  Request r = plain(kRow, 64, 512);
  r.vec_all = false;
  EXPECT_EQ(plan_mx(r, Tuning{}).family, Family::V2);
  Tuning off;
  off.row_stream = 0;
  EXPECT_EQ(plan_mx(plain(kRow, 64, 512), off).family, Family::V2);
  r = plain(kRow, 64, 512);
  r.esize = 4;
  EXPECT_EQ(plan_mx(r, Tuning{}).family, Family::Tiles);
  r = plain(kRow, 64, 512);
  r.amax = true;
  EXPECT_EQ(plan_mx(r, Tuning{}).family, Family::Tiles);
  // The chunk count must stay within 2^30 (32-bit step arithmetic).
  EXPECT_EQ(plan_mx(plain(kRow, int64_t(1) << 24, 256 * 64), Tuning{}).family,
            Family::V2);
  EXPECT_EQ(plan_mx(plain(kRow, 0, 512), Tuning{}).family, Family::V2);
}

TEST(MxPlan, ColwiseAndBoth) {
  Request r = plain(kCol, 256, 512);
  r.col_t = true;
  Plan p = plan_mx(r, Tuning{});
  EXPECT_EQ(p.family, Family::ColT);
  EXPECT_EQ(p.units, 2 * 8); // 128 x 64 CTA tiles
  EXPECT_EQ(p.want, 16);
  EXPECT_NE(kernel_name(p, kBF16, true, true).find("mx_colT16_kernel<fusion_rt::cuda::BF16T, "
                                                   "true, true, 2, true, true>"),
            std::string::npos);
  r.dir = kBoth;
  p = plan_mx(r, Tuning{});
  EXPECT_EQ(p.family, Family::ColT);
  EXPECT_NE(kernel_name(p, kBF16, false, true).find(", 3, false, false>"),
            std::string::npos);
  Tuning off;
  off.col_t = 0;
  EXPECT_EQ(plan_mx(r, off).family, Family::V2);
  // Same layout: both directions on the CTA kernel, colwise on v2.
  p = plan_mx(plain(kBoth, 100, 1000), Tuning{});
  EXPECT_EQ(p.family, Family::BothCta);
  EXPECT_EQ(p.units, 4 * 4); // 32 x 256 CTA tiles
  off = Tuning{};
  off.both = 0;
  p = plan_mx(plain(kBoth, 100, 1000), off);
  EXPECT_EQ(p.family, Family::V2);
  EXPECT_EQ(p.units, 4 * 16); // 32 x 64 warp tiles
  EXPECT_EQ(p.want, 16);
  EXPECT_EQ(plan_mx(plain(kCol, 100, 1000), Tuning{}).family, Family::V2);
  // The transposed kernel's strip order needs 32-bit tile counts.
  r = plain(kCol, int64_t(1) << 30, int64_t(1) << 12);
  r.col_t = true;
  EXPECT_EQ(plan_mx(r, Tuning{}).family, Family::V2);
}

TEST(MxPlan, SwigluForward) {
  // The narrow scope (gated_stream = 0, the default until 2026-12-07):
  // SwiGLU, two views, K % 256 == 0, 2 chunks a step.
  Tuning narrow;
  narrow.gated_stream = 0;
  Plan p = plan_mx(gated(false, 256, 1024), narrow);
  EXPECT_EQ(p.family, Family::SwigluStream);
  EXPECT_EQ(p.step, 2);
  EXPECT_EQ(p.units, 256 * 4);
  EXPECT_EQ(p.want, 128); // 2 chunks a step, 4 warps a block
  EXPECT_EQ(kernel_name(p, kBF16, false, false),
            "void fusion_rt::cuda::stream::swiglu_stream_kernel<fusion_rt::cuda::BF16T, "
            "false, false, 7, false, 2, true>(fusion_rt::cuda::KParams)");
  EXPECT_EQ(plan_mx(gated(false, 256, 64), narrow).family, Family::SwigluRowV2);
  EXPECT_EQ(plan_mx(gated(false, 16, 2880), narrow).family, Family::SwigluRowV2);
  Request r = gated(false, 256, 1024);
  r.vec16 = false;
  EXPECT_EQ(plan_mx(r, narrow).family, Family::SwigluRowV2);
  Tuning off = narrow;
  off.row_stream = 0;
  EXPECT_EQ(plan_mx(gated(false, 256, 1024), off).family, Family::SwigluRowV2);
  off = narrow;
  off.quant_v2 = 0;
  EXPECT_EQ(plan_mx(gated(false, 256, 1024), off).family, Family::Tiles);
  // Gate and up interleaved in one row (GPT-OSS), and the clamped SwiGLU:
  // the row kernel's instances in the narrow scope.
  r = gated(false, 256, 1024);
  r.ilv = true;
  p = plan_mx(r, narrow);
  EXPECT_EQ(p.family, Family::SwigluRowV2);
  EXPECT_EQ(
      kernel_name(p, kBF16, true, false),
      "void fusion_rt::cuda::(anonymous namespace)::swiglu_row16_v2_kernel<"
      "fusion_rt::cuda::BF16T, true, false, 7, "
      "true>(fusion_rt::cuda::KParams)");
  r = gated(false, 256, 1024);
  r.kind = kClampedSwiGLU;
  p = plan_mx(r, narrow);
  EXPECT_EQ(p.family, Family::SwigluRowV2);
  EXPECT_NE(kernel_name(p, kBF16, true, true).find(", 12, false>"),
            std::string::npos);

  // The default, extended scope (gated_stream = 1): few chunks (256 rows x
  // 4) take one chunk a warp step, enough to fill the GPU two.
  Tuning ext;
  EXPECT_EQ(ext.gated_stream, 1);
  p = plan_mx(gated(false, 256, 1024), ext);
  EXPECT_EQ(p.family, Family::SwigluStream);
  EXPECT_EQ(p.step, 1);
  EXPECT_EQ(p.want, 256);
  EXPECT_EQ(kernel_name(p, kBF16, false, false),
            "void fusion_rt::cuda::stream::swiglu_stream_kernel<fusion_rt::cuda::BF16T, "
            "false, false, 7, false, 1, true>(fusion_rt::cuda::KParams)");
  p = plan_mx(gated(false, 4096, 1024), ext);
  EXPECT_EQ(p.step, 2);
  EXPECT_EQ(p.units, 4096 * 4);
  EXPECT_EQ(p.want, 2048);
  Tuning step = ext;
  step.gated_step = 2;
  EXPECT_EQ(plan_mx(gated(false, 256, 1024), step).step, 2);
  step.gated_step = 1;
  EXPECT_EQ(plan_mx(gated(false, 4096, 1024), step).step, 1);
  step = Tuning{};
  step.gated_step = 1;
  EXPECT_EQ(plan_mx(gated(false, 4096, 1024), step).step, 1);
  // K % 256 != 0 (GPT-OSS's 2880): a row's last chunk partial, its lanes
  // masked; K % 8 != 0: the row kernel.
  p = plan_mx(gated(false, 16, 2880), ext);
  EXPECT_EQ(p.family, Family::SwigluStream);
  EXPECT_EQ(p.tiles_x, 12);
  EXPECT_EQ(p.units, 16 * 12);
  EXPECT_EQ(plan_mx(gated(false, 256, 64), ext).family, Family::SwigluStream);
  EXPECT_EQ(plan_mx(gated(false, 256, 100), ext).family, Family::SwigluRowV2);
  r = gated(false, 256, 1024);
  r.ilv = true;
  p = plan_mx(r, ext);
  EXPECT_EQ(p.family, Family::SwigluStream);
  EXPECT_EQ(
      kernel_name(p, kBF16, true, false),
      "void fusion_rt::cuda::stream::swiglu_stream_kernel<fusion_rt::cuda::BF16T, "
      "true, false, 7, true, 1, true>(fusion_rt::cuda::KParams)");
  ext.row_stream = 0;
  EXPECT_EQ(plan_mx(r, ext).family, Family::SwigluRowV2);
  ext.row_stream = 1;
  r = gated(false, 256, 1024);
  r.kind = kClampedSwiGLU;
  p = plan_mx(r, ext);
  EXPECT_EQ(p.family, Family::SwigluStream);
  EXPECT_NE(kernel_name(p, kBF16, true, true).find(", 12, false, 1, true>"),
            std::string::npos);
  r.K = 100;
  EXPECT_EQ(plan_mx(r, ext).family, Family::SwigluRowV2);
  // Other kinds, directions and f32 inputs: the engine.
  r = gated(false, 256, 1024);
  r.kind = kSwiGLU + 1; // GeGLU
  EXPECT_EQ(plan_mx(r, Tuning{}).family, Family::Tiles);
  r = gated(false, 256, 1024);
  r.dir = kCol;
  EXPECT_EQ(plan_mx(r, Tuning{}).family, Family::Tiles);
  r = gated(false, 256, 1024);
  r.esize = 4;
  p = plan_mx(r, Tuning{});
  EXPECT_EQ(p.family, Family::Tiles);
  EXPECT_EQ(p.unit_cols, 32); // 8 lanes x 4 values
  EXPECT_EQ(kernel_name(p, "fusion_rt::cuda::F32T", true, true),
            "void fusion_rt::cuda::mx_quantize_kernel<fusion_rt::cuda::SrcGatedFwd<"
            "fusion_rt::cuda::F32T>, 1>(fusion_rt::cuda::KParams)");
}

TEST(MxPlan, SwigluBackward) {
  Plan p = plan_mx(gated(true, 32, 64), Tuning{});
  EXPECT_EQ(p.family, Family::SwigluBwdV2);
  EXPECT_EQ(kernel_name(p, kBF16, true, true),
            "void fusion_rt::cuda::(anonymous namespace)::swiglu_bwd16_kernel<"
            "fusion_rt::cuda::BF16T, true, true, 1>(fusion_rt::cuda::KParams)");
  // Full tiles only, a bf16 intermediate, 16-byte views, the knob.
  EXPECT_EQ(plan_mx(gated(true, 33, 64), Tuning{}).family, Family::Tiles);
  EXPECT_EQ(plan_mx(gated(true, 32, 96), Tuning{}).family, Family::Tiles);
  Request r = gated(true, 32, 64);
  r.inter = 2;
  EXPECT_EQ(plan_mx(r, Tuning{}).family, Family::Tiles);
  r = gated(true, 32, 64);
  r.vec16 = false;
  EXPECT_EQ(plan_mx(r, Tuning{}).family, Family::Tiles);
  Tuning off;
  off.gated_bwd = 0;
  p = plan_mx(gated(true, 32, 64), off);
  EXPECT_EQ(p.family, Family::Tiles);
  EXPECT_EQ(p.unit_cols, 32); // 16 lanes x 2 values
  EXPECT_EQ(kernel_name(p, kBF16, true, true),
            "void fusion_rt::cuda::mx_quantize_kernel<fusion_rt::cuda::SrcGatedBwd<"
            "fusion_rt::cuda::BF16T>, 1>(fusion_rt::cuda::KParams)");
}

TEST(MxPlan, ActivationsTakeTheEngine) {
  for (Source s : {Source::ActFwd, Source::ActBwd})
    for (int dir : {kRow, kCol, kBoth}) {
      Request r = plain(dir, 64, 256);
      r.src = s;
      Plan p = plan_mx(r, Tuning{});
      EXPECT_EQ(p.family, Family::Tiles);
      EXPECT_EQ(p.unit_cols, 32);
      EXPECT_EQ(p.units, 2 * 8);
      EXPECT_EQ(p.want, 4);
      EXPECT_EQ(kernel_name(p, "fusion_rt::cuda::F16T", true, true),
                "void fusion_rt::cuda::mx_quantize_kernel<fusion_rt::cuda::SrcAct<"
                "fusion_rt::cuda::F16T, " +
                    std::string(s == Source::ActBwd ? "true" : "false") + ">, " +
                    std::to_string(dir) + ">(fusion_rt::cuda::KParams)");
    }
}

TEST(MxPlan, GridCoversEveryValue) {
  // Every family's units cover the [M, K] matrix exactly once.
  for (int64_t M : {1, 31, 32, 33, 128, 1000})
    for (int64_t K : {32, 64, 256, 300, 2048})
      for (int dir : {kRow, kCol, kBoth})
        for (bool col_t : {false, true}) {
          Request r = plain(dir, M, K);
          r.col_t = col_t && dir != kRow;
          Plan p = plan_mx(r, Tuning{});
          EXPECT_GE(p.tiles_x * p.unit_cols, K);
          EXPECT_LT((p.tiles_x - 1) * p.unit_cols, K);
          EXPECT_EQ(p.units, (M + p.unit_rows - 1) / p.unit_rows * p.tiles_x);
          EXPECT_GE(p.want, 1);
        }
}

TEST(Fp4Plan, StreamKernelScopeAndName) {
  fp4_plan::Request r;
  r.rows = 64;
  r.cols = 256;
  EXPECT_TRUE(fp4_plan::applies(r));
  EXPECT_EQ(fp4_plan::groups_per_step(r), 4);
  EXPECT_EQ(fp4_plan::kernel_name(r, kBF16),
            "void fusion_rt::cuda::(anonymous namespace)::fp4_stream_kernel<"
            "fusion_rt::cuda::BF16T, 0, 2, 2, 16>(fusion_rt::cuda::(anonymous "
            "namespace)::SParams)");
  // SiLU into bf16 -> MXFP4.
  fp4_plan::Request a = r;
  a.format = FUSION_RT_FORMAT_MXFP4;
  a.op = 1;
  a.kind = FUSION_RT_ACT_SILU;
  a.inter = 0;
  EXPECT_TRUE(fp4_plan::applies(a));
  EXPECT_EQ(fp4_plan::groups_per_step(a), 2);
  EXPECT_NE(fp4_plan::kernel_name(a, kBF16).find("<fusion_rt::cuda::BF16T, 4, 0, 1, 32>"),
            std::string::npos);
  // Out of scope: each condition alone.
  auto without = [&](auto change) {
    fp4_plan::Request x = a;
    change(x);
    return fp4_plan::applies(x);
  };
  EXPECT_FALSE(without([](fp4_plan::Request &x) { x.cols = 200; }));
  EXPECT_FALSE(without([](fp4_plan::Request &x) { x.backward = true; }));
  EXPECT_FALSE(without([](fp4_plan::Request &x) { x.inter = 1; })); // not the input's
  EXPECT_FALSE(without([](fp4_plan::Request &x) { x.colwise = true; }));
  EXPECT_FALSE(without([](fp4_plan::Request &x) { x.dbias = true; }));
  EXPECT_FALSE(without([](fp4_plan::Request &x) { x.input16 = false; }));
  EXPECT_FALSE(without([](fp4_plan::Request &x) { x.views_ok = false; }));
  EXPECT_FALSE(without([](fp4_plan::Request &x) { x.kind_gated = true; }));
  EXPECT_FALSE(without([](fp4_plan::Request &x) { x.op = 3; }));
  EXPECT_FALSE(without([](fp4_plan::Request &x) { x.seg_cols = 128; }));
  EXPECT_FALSE(without([](fp4_plan::Request &x) { x.rows = int64_t(1) << 29; }));
  fp4_plan::Request n = r;
  n.elem_rounding = FUSION_RT_ROUND_STOCHASTIC;
  EXPECT_FALSE(fp4_plan::applies(n));
  n = r;
  n.nvfp4_block = FUSION_RT_NVFP4_2D;
  EXPECT_FALSE(fp4_plan::applies(n));
  n = r;
  n.format = FUSION_RT_FORMAT_MXFP8_E4M3;
  EXPECT_FALSE(fp4_plan::applies(n));
}

TEST(Fp8Plan, StreamAndTileKernels) {
  fp8_plan::Request r; // 1x128 blocks, plain, bf16 rows of 256
  r.rows = 8;
  r.cols = 256;
  EXPECT_TRUE(fp8_plan::stream_applies(r));
  EXPECT_EQ(
      fp8_plan::stream_kernel_name(r, kBF16, fp8_plan::kPassCodes),
      "void fusion_rt::cuda::(anonymous namespace)::fp8_block_plain_kernel<"
      "fusion_rt::cuda::BF16T, true, true, 2, 0>(fusion_rt::cuda::(anonymous "
      "namespace)::BParams)");
  EXPECT_EQ(fp8_plan::stream_units(r), 2);
  // Per tensor: the NaN flag is not a template argument of its passes.
  fp8_plan::Request t = r;
  t.format = FUSION_RT_FORMAT_FP8_E5M2;
  t.amax = true;
  EXPECT_TRUE(fp8_plan::stream_applies(t));
  EXPECT_NE(fp8_plan::stream_kernel_name(t, kBF16, fp8_plan::kPassCast)
                .find("<fusion_rt::cuda::BF16T, false, false, 2, 2>"),
            std::string::npos);
  EXPECT_NE(fp8_plan::stream_kernel_name(t, kBF16, fp8_plan::kPassAmax)
                .find("<fusion_rt::cuda::BF16T, false, false, 2, 1>"),
            std::string::npos);
  // SwiGLU forward only; other gated kinds, activations and backward not.
  fp8_plan::Request g = r;
  g.op = 2;
  g.kind = FUSION_RT_ACT_SWIGLU;
  EXPECT_TRUE(fp8_plan::stream_applies(g));
  EXPECT_NE(fp8_plan::stream_kernel_name(g, kBF16, fp8_plan::kPassCodes)
                .find("fp8_block_swiglu_kernel<"),
            std::string::npos);
  // Groups a step: plain 2 x 2 (FP8 block codes and the per-tensor passes,
  // on the covering grid), SwiGLU 1 x 2 (persistent).
  EXPECT_EQ(fp8_plan::stream_units(g), 1);
  EXPECT_EQ(fp8_plan::stream_units(t), 2);
  fp8_plan::Request tg = t;
  tg.op = 2;
  tg.kind = FUSION_RT_ACT_SWIGLU;
  EXPECT_EQ(fp8_plan::stream_units(tg), 1);
  // The grid (the H100 A/B of docs/benchmarks/formats.md): the plain
  // quantizer's passes cover the tensor, SwiGLU's run persistent.
  EXPECT_TRUE(fp8_plan::stream_covers(false));
  EXPECT_FALSE(fp8_plan::stream_covers(true));
  g.backward = true;
  EXPECT_FALSE(fp8_plan::stream_applies(g));
  g.backward = false;
  g.kind = FUSION_RT_ACT_GEGLU;
  EXPECT_FALSE(fp8_plan::stream_applies(g));
  fp8_plan::Request a = r;
  a.op = 1;
  a.kind = FUSION_RT_ACT_SILU;
  EXPECT_FALSE(fp8_plan::stream_applies(a));
  // Block outputs beyond codes and scales, other widths, layouts.
  fp8_plan::Request b = r;
  b.amax = true;
  EXPECT_FALSE(fp8_plan::stream_applies(b));
  b = r;
  b.block_cols = 64;
  EXPECT_FALSE(fp8_plan::stream_applies(b));
  b = r;
  b.cols = 200;
  EXPECT_FALSE(fp8_plan::stream_applies(b));
  b = r;
  b.input16 = false;
  EXPECT_FALSE(fp8_plan::stream_applies(b));
  b = r;
  b.colwise = true;
  EXPECT_FALSE(fp8_plan::stream_applies(b));
  // 2D blocks: the tile kernels; 128x128 of aligned 16-bit rows in registers.
  fp8_plan::Request w = r;
  w.block_rows = 128;
  EXPECT_FALSE(fp8_plan::stream_applies(w));
  EXPECT_TRUE(fp8_plan::tiles_apply(w));
  EXPECT_TRUE(fp8_plan::tile128_applies(w));
  EXPECT_NE(fp8_plan::tile_kernel_name(w, kBF16).find("fp8_tile128_kernel<fusion_rt::cuda::"
                                                     "BF16T, true, true>"),
            std::string::npos);
  fp8_plan::Request w0 = w;
  w0.cols = 0; // the report's dynamic width
  EXPECT_FALSE(fp8_plan::tile128_applies(w0));
  w.input16 = false;
  EXPECT_FALSE(fp8_plan::tile128_applies(w));
  EXPECT_EQ(fp8_plan::tile_kernel_name(w, "fusion_rt::cuda::F32T"),
            "void fusion_rt::cuda::(anonymous namespace)::fp8_tile_kernel<"
            "fusion_rt::cuda::F32T>(fusion_rt::cuda::(anonymous namespace)::TParams)");
  w.op = 3; // dequantize
  EXPECT_TRUE(fp8_plan::tiles_apply(w));
  w.op = 1;
  EXPECT_FALSE(fp8_plan::tiles_apply(w));
}

TEST(Fp8Plan, WideRowsAndTranspose) {
  // Per-row scaling of bf16 rows of 7168: the wide-row kernel, 4 chunks a
  // thread; rows of 4096: 2 chunks, of 16384: 8; below 1024 and above
  // 16384 not.
  fp8_plan::Request r;
  r.rows = 4;
  r.cols = 7168;
  r.block_cols = 7168;
  EXPECT_FALSE(fp8_plan::stream_applies(r));
  EXPECT_TRUE(fp8_plan::wide_row_applies(r));
  EXPECT_EQ(fp8_plan::wide_row_chunks(r), 4);
  EXPECT_EQ(fp8_plan::tile_kernel_name(r, kBF16),
            "void fusion_rt::cuda::(anonymous namespace)::fp8_wide_row_kernel<"
            "fusion_rt::cuda::BF16T, true, 4>(fusion_rt::cuda::(anonymous "
            "namespace)::TParams)");
  fp8_plan::Request n = r;
  n.cols = n.block_cols = 4096;
  EXPECT_EQ(fp8_plan::wide_row_chunks(n), 2);
  n.cols = n.block_cols = 8200;
  EXPECT_EQ(fp8_plan::wide_row_chunks(n), 8);
  n.cols = n.block_cols = 16384;
  EXPECT_EQ(fp8_plan::wide_row_chunks(n), 8);
  n.cols = n.block_cols = 1000;
  EXPECT_FALSE(fp8_plan::wide_row_applies(n));
  n.cols = n.block_cols = 16392;
  EXPECT_FALSE(fp8_plan::wide_row_applies(n));
  n = r;
  n.cols = 7164; // not whole 16-byte vectors
  EXPECT_FALSE(fp8_plan::wide_row_applies(n));
  n = r;
  n.amax = true;
  EXPECT_FALSE(fp8_plan::wide_row_applies(n));
  n = r;
  n.views_ok = false;
  EXPECT_FALSE(fp8_plan::wide_row_applies(n));
  n = r;
  n.format = FUSION_RT_FORMAT_FP8_E4M3;
  EXPECT_FALSE(fp8_plan::wide_row_applies(n));
  // FP8 per tensor with a transposed copy: the cast + transpose kernels.
  fp8_plan::Request t;
  t.format = FUSION_RT_FORMAT_FP8_E5M2;
  t.rows = 33;
  t.cols = 1000;
  t.colwise = true;
  t.col_transposed = true;
  EXPECT_TRUE(fp8_plan::transpose_applies(t));
  EXPECT_EQ(fp8_plan::transpose_kernel_name(t, kBF16),
            "void fusion_rt::cuda::(anonymous namespace)::fp8_transpose_kernel<"
            "fusion_rt::cuda::BF16T, false, true>(fusion_rt::cuda::(anonymous "
            "namespace)::XParams)");
  EXPECT_EQ(fp8_plan::transpose_amax_kernel_name(kBF16),
            "void fusion_rt::cuda::(anonymous namespace)::fp8_transpose_amax_kernel<"
            "fusion_rt::cuda::BF16T>(fusion_rt::cuda::(anonymous namespace)::XParams)");
  t.rowwise = false;
  EXPECT_NE(fp8_plan::transpose_kernel_name(t, kBF16).find("BF16T, false, false>"),
            std::string::npos);
  fp8_plan::Request u = t;
  u.col_transposed = false; // the SAME layout: formats.cu
  EXPECT_FALSE(fp8_plan::transpose_applies(u));
  u = t;
  u.cols = 1001;
  EXPECT_FALSE(fp8_plan::transpose_applies(u));
  u = t;
  u.op = 1;
  EXPECT_FALSE(fp8_plan::transpose_applies(u));
  u = t;
  u.dbias = true;
  EXPECT_FALSE(fp8_plan::transpose_applies(u));
  u = t;
  u.input16 = false;
  EXPECT_FALSE(fp8_plan::transpose_applies(u));
  u = t;
  u.format = FUSION_RT_FORMAT_FP8_BLOCK_E4M3;
  EXPECT_FALSE(fp8_plan::transpose_applies(u));
}

TEST(Tuning, KnobsParseTheirValues) {
  const TuningKnob *k = find_tuning_knob("FUSION_RT_PAIRED_PATH");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(find_tuning_knob("paired_path"), k);
  int64_t v = -7;
  EXPECT_TRUE(parse_tuning_value(*k, "mma", v));
  EXPECT_EQ(v, 2);
  EXPECT_TRUE(parse_tuning_value(*k, "generic", v));
  EXPECT_EQ(v, 4);
  EXPECT_TRUE(parse_tuning_value(*k, "default", v));
  EXPECT_EQ(v, 0);
  v = -7;
  EXPECT_FALSE(parse_tuning_value(*k, "gem", v));
  EXPECT_FALSE(parse_tuning_value(*k, "gemvv", v));
  EXPECT_EQ(v, -7);
  k = find_tuning_knob("FUSION_RT_PAIRED_MT");
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(parse_tuning_value(*k, "16", v));
  EXPECT_EQ(v, 16);
  EXPECT_TRUE(parse_tuning_value(*k, "", v));
  EXPECT_EQ(v, -1);
  EXPECT_FALSE(parse_tuning_value(*k, "4x", v));
  EXPECT_EQ(find_tuning_knob("FUSION_RT_NO_SUCH_KNOB"), nullptr);
  EXPECT_EQ(find_tuning_knob(nullptr), nullptr);
  // Every knob's default is one of its values.
  size_t n = 0;
  const TuningKnob *all = tuning_knobs(n);
  EXPECT_GE(n, 15u);
  for (size_t i = 0; i < n; ++i) {
    const Tuning t;
    EXPECT_EQ(t.*(all[i].member), all[i].dflt) << all[i].env;
    if (*all[i].values) {
      EXPECT_GE(all[i].dflt, 0) << all[i].env;
    }
  }
}

TEST(Tuning, SetAndGetThroughTheCApi) {
  int64_t v = -1;
  ASSERT_EQ(fusion_rt_get_tuning("FUSION_RT_CUDA_COL_T", &v), FUSION_RT_STATUS_SUCCESS);
  const int64_t before = v;
  ASSERT_EQ(fusion_rt_set_tuning("FUSION_RT_CUDA_COL_T", "0"), FUSION_RT_STATUS_SUCCESS);
  ASSERT_EQ(fusion_rt_get_tuning("col_t", &v), FUSION_RT_STATUS_SUCCESS);
  EXPECT_EQ(v, 0);
  ASSERT_EQ(fusion_rt_set_tuning("col_t", nullptr), FUSION_RT_STATUS_SUCCESS);
  ASSERT_EQ(fusion_rt_get_tuning("FUSION_RT_CUDA_COL_T", &v), FUSION_RT_STATUS_SUCCESS);
  EXPECT_EQ(v, 1);
  ASSERT_EQ(fusion_rt_set_tuning("FUSION_RT_PAIRED_PATH", "blas"), FUSION_RT_STATUS_SUCCESS);
  ASSERT_EQ(fusion_rt_get_tuning("FUSION_RT_PAIRED_PATH", &v), FUSION_RT_STATUS_SUCCESS);
  EXPECT_EQ(v, 3);
  ASSERT_EQ(fusion_rt_set_tuning("FUSION_RT_PAIRED_PATH", "default"),
            FUSION_RT_STATUS_SUCCESS);
  // Bad names and values: BAD_VALUE with a message naming what it takes;
  // the knob keeps its value.
  EXPECT_EQ(fusion_rt_set_tuning("FUSION_RT_CUDA_COL_T", "sp"), FUSION_RT_STATUS_BAD_VALUE);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("0|1"), std::string::npos);
  EXPECT_EQ(fusion_rt_set_tuning("FUSION_RT_PAIRED_MT", "x"), FUSION_RT_STATUS_BAD_VALUE);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("decimal"), std::string::npos);
  EXPECT_EQ(fusion_rt_set_tuning("FUSION_RT_NO_SUCH_KNOB", "1"), FUSION_RT_STATUS_BAD_VALUE);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("not a tuning knob"),
            std::string::npos);
  EXPECT_EQ(fusion_rt_set_tuning(nullptr, "1"), FUSION_RT_STATUS_NULL_POINTER);
  EXPECT_EQ(fusion_rt_get_tuning("FUSION_RT_CUDA_COL_T", nullptr),
            FUSION_RT_STATUS_NULL_POINTER);
  EXPECT_EQ(fusion_rt_get_tuning("nope", &v), FUSION_RT_STATUS_BAD_VALUE);
  ASSERT_EQ(fusion_rt_get_tuning("FUSION_RT_CUDA_COL_T", &v), FUSION_RT_STATUS_SUCCESS);
  EXPECT_EQ(v, before);
}

} // namespace
