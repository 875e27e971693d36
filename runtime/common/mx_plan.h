//===- mx_plan.h - which CUDA kernel runs an MXFP8 quantizer ------*- C++ -*-===//
//
// The one description of how the CUDA backend runs an MXFP8 quantizer
// (plain, activation, gated; forward and backward): the kernel family, its
// template arguments and its grid. Plain C++ (no CUDA types), like
// paired_plan.h: the launchers in runtime/cuda (mxfp8_quantize.cu,
// act_quantize.cu, gated_act_quantize.cu) launch what `plan_mx` returns,
// and `fusion-opt --fusion-kernel-report` names the kernel from the same
// plan and `kernel_name`, so the report cannot drift from the launch
// (runtime/test/mx_plan_test.cpp checks both). The measurements behind the
// choices: docs/kernels.md.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_MX_PLAN_H
#define FUSION_RT_COMMON_MX_PLAN_H

#include "common/tuning.h"

#include <cstdint>
#include <string>

namespace fusion_rt {
namespace mx_plan {

/// Where the quantized values come from (the tile engine's value sources,
/// runtime/cuda/mx_kernel.cuh).
enum class Source { Plain, ActFwd, ActBwd, GatedFwd, GatedBwd };

/// Directions, as mx_kernel.cuh's Dir.
constexpr int kRow = 1, kCol = 2, kBoth = 3;

/// The ABI number of SwiGLU and the bf16 intermediate (fusion_rt_kinds.def,
/// common/convert.h), which the specialised kernels need.
constexpr int kSwiGLU = 7;
constexpr int kClampedSwiGLU = 12; ///< GPT-OSS's (FUSION_RT_ACT_CLAMPED_SWIGLU)
constexpr int kInterBF16 = 0;

enum class Family {
  /// mx_quantize_kernel<Src, DIR> (launch.cuh): every source, input type
  /// and direction; warp tiles of 32 rows x (32 / G) * VEC columns.
  Tiles,
  /// stream::row_stream_kernel (row_stream.cuh): plain rowwise 16-bit,
  /// chunks of 256 values; `flat` picks the FLAT form (4 chunks a step,
  /// prefetch, L2 hints: "4ph") or the general one (8 chunks a step).
  RowStream,
  /// stream::swiglu_stream_kernel<KIND, ILV, step>: SwiGLU and the clamped
  /// SwiGLU forward rowwise 16-bit, two views or gate / up interleaved in
  /// one row, K % 8 == 0 (the lanes past K of a row's last chunk masked), 1
  /// chunk a step when the chunks are few, else 2, with prefetch (the tuning
  /// knob gated_stream = 0: SwiGLU, two views, K % 256 == 0, 2 a step only).
  SwigluStream,
  /// mx_rowwise16_v2_kernel / mx_col16_v2_kernel<DIR>: 16-bit plain, warp
  /// tiles of 32 x 64.
  V2,
  /// mx_both16_cta_kernel: 16-bit plain, both directions, same layout; CTA
  /// tiles of 32 x 256.
  BothCta,
  /// mx_colT16_kernel: 16-bit plain, transposed colwise (or both); CTA
  /// tiles of 128 x 64; colwise only with prefetch and L2 hints ("sph").
  ColT,
  /// swiglu_row16_v2_kernel<KIND, ILV> (gated_act_quantize.cu): SwiGLU or
  /// the clamped SwiGLU forward rowwise 16-bit that the stream kernel does
  /// not take, two views or gate / up interleaved in one row, warp tiles of
  /// 32 x 64 (rows below M masked).
  SwigluRowV2,
  /// swiglu_bwd16_kernel<DIR> (mxfp8_quantize.cu): SwiGLU backward with a
  /// bf16 intermediate, full 32 x 64 tiles only.
  SwigluBwdV2,
};

/// What the plan needs to know of a call. The launcher fills it from the
/// validated request; the kernel report from the op's types, assuming
/// contiguous, 16-byte aligned buffers (the lowering's memrefs).
struct Request {
  Source src = Source::Plain;
  int kind = 0;       ///< activation kind (ABI value)
  int inter = 2;      ///< intermediate type (kInterBF16 0, F16 1, F32 2)
  int dir = kRow;     ///< kRow, kCol or kBoth
  int esize = 2;      ///< input element bytes (2: bf16 / f16, 4: f32)
  bool amax = false;  ///< an amax output is requested
  int64_t M = 0;      ///< rows of the value matrix
  int64_t K = 0;      ///< columns (the gated forms: of one half)
  bool col_t = false; ///< the colwise copy is transposed
  /// Vector access of the family's width on every buffer (cuda_backend.cu
  /// vec_all), and 16-byte input vectors with 8-byte code stores (vec16).
  bool vec_all = true, vec16 = true;
  /// Gated forward with gate and up interleaved in one row (column stride 2,
  /// 16-byte aligned rows): the stream and SwigluRowV2 kernels' ILV
  /// instances and the tile engine's source read pairs with vector loads.
  bool ilv = false;
  /// Contiguous rows, compact contiguous 4-byte aligned rowwise scales: the
  /// stream kernel's FLAT form.
  bool flat = true;
};

struct Plan {
  Family family = Family::Tiles;
  /// SwigluStream / SwigluRowV2: the activation kind and the interleaved
  /// gate / up layout of the kernel instance (template arguments);
  /// SwigluStream: chunks a warp step.
  int kind = 0;
  bool ilv = false;
  int step = 2;
  Source src = Source::Plain;
  int dir = kRow;
  bool flat = false; ///< RowStream: the FLAT form
  /// Work units and their grid: tiles_x units across K, `units` in all,
  /// `want` blocks of 128 threads wanted (the launcher caps them at the
  /// resident blocks of all SMs).
  int64_t unit_rows = 0, unit_cols = 0;
  int64_t tiles_x = 0, units = 0, want = 0;
};

/// Value-source geometry of the tile engine: VEC values a lane, G row
/// groups a warp (mx_kernel.cuh's Src*::VEC and ::G).
inline int source_vec(Source s, int esize) {
  switch (s) {
  case Source::Plain:
    return 16 / esize;
  case Source::GatedBwd:
    return 2;
  default:
    return 4;
  }
}
inline int source_groups(Source s) { return s == Source::GatedBwd ? 2 : 4; }

namespace detail {
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The stream kernels' condition (row_stream.cuh): vector access, K a
/// multiple of 256 (`partial`, the gated kernel's extended scope: of 8, the
/// lanes past K of a row's last chunk masked), the chunk count within the
/// 32-bit step arithmetic.
inline bool stream_ok(const Request &r, bool gated, bool partial = false) {
  return (gated ? r.vec16 : r.vec_all) && r.K % (partial ? 8 : 256) == 0 &&
         r.M > 0 && r.K > 0 && r.M * ceil_div(r.K, 256) < (int64_t(1) << 30);
}

/// Chunks below which the gated stream kernel takes one chunk a warp step
/// instead of two: a grid of two-chunk steps would not fill the GPU (132
/// SMs x 32 resident warps of 128-thread blocks at 8 blocks an SM is 4224
/// warps, 8448 chunks at two a step), and at decode and small prefill sizes
/// a warp's latency, not the bytes in flight, bounds the kernel.
constexpr int64_t kGatedStepOneBelow = 8192;

/// Fills the grid of `p` for units of rows x cols, `per_block` units a
/// block (`units_of_rows` false: chunk units counted per row).
inline void grid(Plan &p, const Request &r, int64_t rows, int64_t cols,
                 int64_t per_block) {
  p.unit_rows = rows;
  p.unit_cols = cols;
  p.tiles_x = ceil_div(r.K, cols);
  p.units = ceil_div(r.M, rows) * p.tiles_x;
  p.want = ceil_div(p.units, per_block);
}
} // namespace detail

/// The kernel that runs `r` with the knobs `t`.
inline Plan plan_mx(const Request &r, const Tuning &t) {
  using namespace detail;
  Plan p;
  p.src = r.src;
  p.dir = r.dir;
  const bool v2 = r.esize == 2 && !r.amax && t.quant_v2 != 0;
  if (r.src == Source::Plain && v2) {
    if (r.dir == kRow && t.row_stream != 0 && stream_ok(r, false)) {
      p.family = Family::RowStream;
      p.flat = r.flat;
      // Chunks of 256 values, U a warp step, 4 warps a block.
      grid(p, r, 1, 256, (p.flat ? 4 : 8) * 4);
      return p;
    }
    if (r.dir == kBoth && !r.col_t && t.both != 0) {
      p.family = Family::BothCta;
      grid(p, r, 32, 256, 1);
      return p;
    }
    // The transposed kernel's strip order needs the 32 x 64 tile count in
    // 32 bits.
    if (r.col_t && r.dir != kRow && t.col_t != 0 &&
        ceil_div(r.M, 32) * ceil_div(r.K, 64) < (int64_t(1) << 31)) {
      p.family = Family::ColT;
      grid(p, r, 128, 64, 1);
      return p;
    }
    p.family = Family::V2;
    grid(p, r, 32, 64, 4);
    return p;
  }
  if (r.src == Source::GatedFwd && v2 && r.dir == kRow &&
      (r.kind == kSwiGLU || r.kind == kClampedSwiGLU)) {
    p.kind = r.kind;
    p.ilv = r.ilv;
    // The extended scope (gated_stream 1, the default since its GPU tests
    // passed and GPT-OSS's front measured 1.4-1.8x faster at N = 16-128,
    // H100 2026-12-07: partial chunks, the clamped SwiGLU, interleaved gate
    // / up, one chunk a step for few chunks); under 0, SwiGLU with two views
    // and K % 256 == 0 at 2 chunks a step.
    const bool ext = t.gated_stream != 0;
    if (t.row_stream != 0 && stream_ok(r, true, ext) &&
        (ext || (r.kind == kSwiGLU && !r.ilv))) {
      p.family = Family::SwigluStream;
      const int64_t chunks = r.M * ceil_div(r.K, 256);
      p.step = t.gated_step == 1 || t.gated_step == 2 ? int(t.gated_step)
               : ext && chunks < kGatedStepOneBelow   ? 1
                                                      : 2;
      grid(p, r, 1, 256, p.step * 4);
      return p;
    }
    p.family = Family::SwigluRowV2;
    grid(p, r, 32, 64, 4);
    return p;
  }
  if (r.src == Source::GatedBwd && v2 && t.gated_bwd != 0 && r.kind == kSwiGLU &&
      r.inter == kInterBF16 && r.vec16 && r.M > 0 && r.K > 0 && r.M % 32 == 0 &&
      r.K % 64 == 0) {
    p.family = Family::SwigluBwdV2;
    grid(p, r, 32, 64, 4);
    return p;
  }
  p.family = Family::Tiles;
  grid(p, r, 32, (32 / source_groups(r.src)) * source_vec(r.src, r.esize), 4);
  return p;
}

/// The demangled name of the kernel `p` launches (as cuobjdump lists it),
/// for input type `t` ("fusion_rt::cuda::BF16T", F16T or F32T) and the
/// format and NaN-policy template flags `e4m3`, `propagate`.
inline std::string kernel_name(const Plan &p, const std::string &t, bool e4m3,
                               bool propagate) {
  const std::string flags = std::string(e4m3 ? "true" : "false") + ", " +
                            (propagate ? "true" : "false");
  const std::string anon = "void fusion_rt::cuda::(anonymous namespace)::";
  const std::string arg = "(fusion_rt::cuda::KParams)";
  const std::string dir = std::to_string(p.dir);
  switch (p.family) {
  case Family::RowStream:
    return "void fusion_rt::cuda::stream::row_stream_kernel<" + t + ", " + flags +
           (p.flat ? ", 4, true, true, true>" : ", 8, false, false, false>") + arg;
  case Family::SwigluStream:
    return "void fusion_rt::cuda::stream::swiglu_stream_kernel<" + t + ", " +
           flags + ", " + std::to_string(p.kind) + ", " +
           (p.ilv ? "true" : "false") + ", " + std::to_string(p.step) +
           ", true>" + arg;
  case Family::V2:
    return p.dir == kRow
               ? anon + "mx_rowwise16_v2_kernel<" + t + ", " + flags + ">" + arg
               : anon + "mx_col16_v2_kernel<" + t + ", " + flags + ", " + dir + ">" +
                     arg;
  case Family::BothCta:
    return anon + "mx_both16_cta_kernel<" + t + ", " + flags + ">" + arg;
  case Family::ColT:
    return anon + "mx_colT16_kernel<" + t + ", " + flags + ", " + dir +
           (p.dir == kCol ? ", true, true>" : ", false, false>") + arg;
  case Family::SwigluRowV2:
    return anon + "swiglu_row16_v2_kernel<" + t + ", " + flags + ", " +
           std::to_string(p.kind) + ", " + (p.ilv ? "true" : "false") + ">" +
           arg;
  case Family::SwigluBwdV2:
    return anon + "swiglu_bwd16_kernel<" + t + ", " + flags + ", " + dir + ">" + arg;
  case Family::Tiles:
    break;
  }
  const char *src = p.src == Source::Plain      ? "SrcPlain"
                    : p.src == Source::ActFwd   ? "SrcAct"
                    : p.src == Source::ActBwd   ? "SrcAct"
                    : p.src == Source::GatedFwd ? "SrcGatedFwd"
                                                : "SrcGatedBwd";
  std::string s = "fusion_rt::cuda::" + std::string(src) + "<" + t;
  if (p.src == Source::ActFwd || p.src == Source::ActBwd)
    s += p.src == Source::ActBwd ? ", true" : ", false";
  s += ">";
  return "void fusion_rt::cuda::mx_quantize_kernel<" + s + ", " + dir + ">" + arg;
}

} // namespace mx_plan
} // namespace fusion_rt

#endif // FUSION_RT_COMMON_MX_PLAN_H
