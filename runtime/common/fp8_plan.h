//===- fp8_plan.h - when the FP8 stream and tile kernels run -------*- C++ -*-===//
//
// The scope of the FP8 kernels of runtime/cuda/fp8_block.cu and
// fp8_transpose.cu and the kernel instance a call runs, in plain C++: the
// CUDA backend routes a call by `stream_applies` / `tiles_apply` /
// `tile128_applies` / `wide_row_applies` / `transpose_applies`, and
// `fusion-opt --fusion-kernel-report` names the kernels with the same
// functions (runtime/test/mx_plan_test.cpp checks them without a GPU).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_FP8_PLAN_H
#define FUSION_RT_COMMON_FP8_PLAN_H

#include "fusion_rt.h"

#include <cstdint>
#include <string>

namespace fusion_rt {
namespace fp8_plan {

/// What decides the kernels' scope. The launcher fills it from the
/// validated request; the kernel report from the op, assuming the
/// lowering's buffers (contiguous, aligned: `views_ok`).
struct Request {
  int32_t format = FUSION_RT_FORMAT_FP8_BLOCK_E4M3;
  int op = 0; ///< 0 quantize, 1 activation, 2 gated, 3 dequantize, -1 other
  bool backward = false;
  int32_t kind = 0; ///< activation kind (ABI value)
  int32_t block_rows = 1, block_cols = 128;
  bool nan_propagate = true;
  bool amax = false, scale_inv = false; ///< those outputs are asked for
  bool rowwise = true, colwise = false, dbias = false;
  bool col_transposed = false; ///< the colwise copy is [N, M]
  int64_t rows = 0, cols = 0;
  int64_t seg_cols = 0; ///< 0 or cols: rowwise segments not split
  bool input16 = true;  ///< bf16 / f16 input (and up of the same type)
  /// Inputs' rows 16-byte aligned runs, codes 8-byte aligned rows (the
  /// launcher's alignment facts).
  bool views_ok = true;
};

inline bool is_block(int32_t f) {
  return f == FUSION_RT_FORMAT_FP8_BLOCK_E4M3 || f == FUSION_RT_FORMAT_FP8_BLOCK_E5M2;
}
inline bool is_tensor(int32_t f) {
  return f == FUSION_RT_FORMAT_FP8_E4M3 || f == FUSION_RT_FORMAT_FP8_E5M2;
}

/// The stream kernels (fp8_block_plain_kernel, fp8_block_swiglu_kernel):
/// FP8 per tensor, or 1x128 blocks without amax / scale_inv outputs, of a
/// plain quantizer or the SwiGLU forward, rowwise only without dbias, 16-bit
/// rows of a multiple of 128, the group count within 32 bits.
inline bool stream_applies(const Request &r) {
  const bool block = is_block(r.format), tensor = is_tensor(r.format);
  if (!block && !tensor)
    return false;
  const bool swiglu = r.op == 2 && !r.backward && r.kind == FUSION_RT_ACT_SWIGLU;
  if (r.op != 0 && !swiglu)
    return false;
  return (tensor || (r.block_cols == 128 && r.block_rows == 1 && !r.amax &&
                     !r.scale_inv)) &&
         r.rowwise && !r.colwise && !r.dbias && r.rows > 0 && r.cols > 0 &&
         r.cols % 128 == 0 && (r.seg_cols == 0 || r.seg_cols == r.cols) &&
         r.cols / 128 * r.rows < (int64_t(1) << 30) && r.input16 && r.views_ok;
}

/// The 2D block (weight tile) kernels: quantize and dequantize.
inline bool tiles_apply(const Request &r) {
  return is_block(r.format) && r.block_rows > 1 && (r.op == 0 || r.op == 3);
}

/// Within them, the 128x128 tile in registers (fp8_tile128_kernel): 16-bit
/// rows of a (nonzero) multiple of 128, no amax output, aligned views. (A
/// width of 0 launches nothing at run time; the kernel report passes a
/// dynamic width as 0.)
inline bool tile128_applies(const Request &r) {
  return tiles_apply(r) && r.op == 0 && r.block_rows == 128 && r.block_cols == 128 &&
         r.cols > 0 && r.cols % 128 == 0 && !r.amax && r.input16 && r.views_ok;
}

/// Wide rowwise blocks (per-row scaling and any 1 x bc with 1024 <= bc <=
/// 16384, bc % 8 == 0) of a plain quantizer from 16-bit rows of a multiple of
/// 8 values, rowwise only, no amax / scale_inv / dbias output: the block in
/// registers (fp8_wide_row_kernel), one thread block per scale block.
inline bool wide_row_applies(const Request &r) {
  return is_block(r.format) && r.op == 0 && r.block_rows == 1 &&
         r.block_cols >= 1024 && r.block_cols <= 16384 && r.block_cols % 8 == 0 &&
         r.rowwise && !r.colwise && !r.dbias && !r.amax && !r.scale_inv &&
         r.rows > 0 && r.cols > 0 && r.cols % 8 == 0 &&
         (r.seg_cols == 0 || r.seg_cols == r.cols) &&
         r.rows * ((r.cols + r.block_cols - 1) / r.block_cols) < (int64_t(1) << 31) &&
         r.input16 && r.views_ok;
}
/// Chunks of 8 values a thread of fp8_wide_row_kernel (256 threads): the
/// fewest of 2, 4, 8 that hold the block (fewer registers, more blocks of
/// threads in flight an SM).
inline int wide_row_chunks(const Request &r) {
  return r.block_cols <= 4096 ? 2 : r.block_cols <= 8192 ? 4 : 8;
}

/// The cast + transpose kernels (fp8_transpose.cu): FP8 per tensor, a plain
/// quantizer with the transposed colwise copy (rowwise beside it or not),
/// no dbias, 16-bit rows of a multiple of 8 values, unit column strides
/// (views_ok), the 64 x 32 warp tiles counted in 32 bits.
inline bool transpose_applies(const Request &r) {
  return is_tensor(r.format) && r.op == 0 && r.colwise && r.col_transposed &&
         !r.dbias && r.rows > 0 && r.cols > 0 && r.cols % 8 == 0 &&
         (r.rows + 63) / 64 * ((r.cols + 31) / 32) < (int64_t(1) << 31) &&
         r.input16 && r.views_ok;
}

/// U, the group pairs a warp codes a step in the stream kernels (each lane
/// half U groups of 128): 2 plain (FP8 block codes and FP8 per tensor, on
/// the covering grid of stream_covers; the block codes take 4 on a
/// persistent grid, which only the tuning knob stream_grid asks for);
/// SwiGLU 1 (fp8_block.cu launch_typed).
inline int stream_units(const Request &r) { return r.op == 2 ? 1 : 2; }

namespace detail {
inline std::string flags(bool a, bool b) {
  return std::string(a ? "true" : "false") + ", " + (b ? "true" : "false");
}
inline bool e4m3(int32_t f) {
  return f == FUSION_RT_FORMAT_FP8_BLOCK_E4M3 || f == FUSION_RT_FORMAT_FP8_E4M3;
}
} // namespace detail

/// The passes of the stream kernels (fp8_block.cu StreamMode, a template
/// argument of each kernel): the block codes, the per-tensor amax pass
/// (current scaling's first pass), the per-tensor cast.
enum StreamPass { kPassCodes = 0, kPassAmax = 1, kPassCast = 2 };

/// Whether the stream kernels of the plain quantizer (`swiglu` false) or of
/// SwiGLU run on a grid covering the tensor (one warp step a warp) rather
/// than a persistent one (cuda/group_stream.cuh Grid; the tuning knob
/// stream_grid overrides it). The plain quantizer covers in every pass (FP8
/// per tensor: amax and cast; FP8 block codes): on the H100 (2026-12-06,
/// docs/benchmarks/formats.md) the delayed cast at 16384^2 ran 269 us
/// against 289 persistent, current scaling 450 against 476, 1x128 codes
/// 292 against 300 (the same at 4096 x 7168). SwiGLU stays persistent:
/// covering was slower there (FP8 per tensor 27.3 against 23.7 us at
/// 4096 x 3584, 1x128 274 against 253 at 16384 x 8192).
inline bool stream_covers(bool swiglu) { return !swiglu; }

/// The stream kernel instance (as cuobjdump lists it) for input type `t`
/// ("fusion_rt::cuda::BF16T" or F16T) and `pass` (FP8 block: kPassCodes;
/// per tensor: kPassAmax or kPassCast). The NaN policy is a template flag
/// of the block codes only (the per-tensor passes ignore NaN in the amax
/// and propagate it in the cast either way).
inline std::string stream_kernel_name(const Request &r, const std::string &t,
                                      int pass) {
  const std::string ns = "fusion_rt::cuda::(anonymous namespace)::";
  const bool swiglu = r.op == 2;
  return "void " + ns +
         (swiglu ? "fp8_block_swiglu_kernel<" : "fp8_block_plain_kernel<") + t +
         ", " +
         detail::flags(detail::e4m3(r.format),
                       is_block(r.format) && r.nan_propagate) +
         ", " + std::to_string(stream_units(r)) + ", " + std::to_string(pass) +
         ">(" + ns + "BParams)";
}

/// The tile kernel instance for input type `t` (F32T too).
inline std::string tile_kernel_name(const Request &r, const std::string &t) {
  const std::string ns = "fusion_rt::cuda::(anonymous namespace)::";
  if (wide_row_applies(r))
    return "void " + ns + "fp8_wide_row_kernel<" + t + ", " +
           (detail::e4m3(r.format) ? "true" : "false") + ", " +
           std::to_string(wide_row_chunks(r)) + ">(" + ns + "TParams)";
  if (tile128_applies(r))
    return "void " + ns + "fp8_tile128_kernel<" + t + ", " +
           detail::flags(detail::e4m3(r.format), r.nan_propagate) + ">(" + ns +
           "TParams)";
  return "void " + ns + "fp8_tile_kernel<" + t + ">(" + ns + "TParams)";
}

/// The cast kernel of the cast + transpose.
inline std::string transpose_kernel_name(const Request &r, const std::string &t) {
  const std::string ns = "fusion_rt::cuda::(anonymous namespace)::";
  return "void " + ns + "fp8_transpose_kernel<" + t + ", " +
         detail::flags(detail::e4m3(r.format), r.rowwise) + ">(" + ns + "XParams)";
}
/// The amax pass that runs before it under current scaling.
inline std::string transpose_amax_kernel_name(const std::string &t) {
  const std::string ns = "fusion_rt::cuda::(anonymous namespace)::";
  return "void " + ns + "fp8_transpose_amax_kernel<" + t + ">(" + ns + "XParams)";
}

} // namespace fp8_plan
} // namespace fusion_rt

#endif // FUSION_RT_COMMON_FP8_PLAN_H
