//===- backend.h - validated requests and backend dispatch --------*- C++ -*-===//
//
// The C entry points (api.cpp) validate their arguments completely and turn
// them into one `Request`: rank-2 views with sizes and strides checked, enum
// fields in range, every required output present with the right shape. A
// backend only executes a Request; it never sees an invalid one.
//
// CUDA HOOK: a CUDA build defines FUSION_RT_HAVE_CUDA, implements the two
// `cuda_*` functions below in runtime/cuda/, and api.cpp routes a request to
// `cuda_execute` when the backend option says CUDA, or says AUTO and
// `cuda_is_device_pointer` is true for the input.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_SRC_BACKEND_H
#define FUSION_RT_SRC_BACKEND_H

#include "common/activation.h"
#include "common/convert.h"
#include "common/layout.h"
#include "fusion_rt.h"

namespace fusion_rt {

/// A validated rank-2 view; strides in elements (for F4E2M1: cs == 1 and rs
/// even, so element (i, j) is nibble (i*rs + j) of `data`).
///
/// Row groups (the weights of a paired projection only, from a [G, w, K]
/// view whose leading dimensions do not collapse, e.g. one part of Qwen3-
/// Next's head-grouped `in_proj_ba`): with grp > 0, row i = g * grp + r lies
/// at g * gs + r * rs (row_at).
struct Mat {
  char *data = nullptr;
  int32_t dtype = -1;
  int64_t rows = 0, cols = 0;
  int64_t rs = 0, cs = 0;
  int64_t grp = 0, gs = 0; ///< rows per group and group stride (grp > 0)
  bool present() const { return data != nullptr; }
  bool grouped() const { return grp > 0; }
  /// Element offset of row i.
  int64_t row_at(int64_t i) const { return grouped_row_offset(i, rs, grp, gs); }
};

enum class Op { Quantize, ActQuantize, GatedActQuantize, Activation, Dequantize };

struct Request {
  Op op = Op::Quantize;
  /// Quantize / ActQuantize / non-gated Activation: x is [M, N].
  /// Gated: x is the gate half [M, K], up the up half [M, K] (views into
  /// the packed [M, 2K] input when `packed_gated`).
  Mat x, up, grad;
  bool packed_gated = false;
  bool gated = false;
  int32_t act_kind = kActIdentity;
  bool backward = false;
  int32_t inter = kInterF32; ///< intermediate type (ActQuantize, Activation)
  ActParams params;
  fusion_rt_quant_scheme scheme{};
  /// The value matrix that is quantized (or written by Activation):
  /// [M, N]; gated forward [M, K]; gated backward [M, 2K].
  int64_t rows = 0, cols = 0;
  /// Width of a rowwise block segment: cols, or K for the gated backward
  /// (rowwise blocks never straddle column K).
  int64_t seg_cols = 0;
  bool row_wise = false, col_wise = false, col_transposed = false;
  bool swizzled = false;
  Mat row_data, row_scales, col_data, col_scales; ///< scales: compact views
  char *row_scales_swz = nullptr, *col_scales_swz = nullptr;
  int64_t row_scales_padded_rows = 0, row_scales_padded_cols = 0;
  int64_t col_scales_padded_rows = 0, col_scales_padded_cols = 0;
  float *amax = nullptr, *scale_inv = nullptr;
  const float *scale_in = nullptr;
  float *dbias = nullptr;
  int64_t dbias_stride = 1;
  Mat act_out;                 ///< Activation output
  int32_t deq_direction = 0;   ///< Dequantize: ROWWISE or COLWISE
  Mat deq_out;                 ///< Dequantize output (data-shaped)
  int num_threads = 0;
  /// x (and up) are the runtime's own stream-ordered scratch
  /// (cuda_scratch_alloc), which the device-pointer check may not see
  /// mapped yet: not checked.
  bool x_is_scratch = false;
};

/// Executes a validated request on the host. Returns SUCCESS or
/// OUT_OF_MEMORY (then nothing was written).
fusion_rt_status cpu_execute(const Request &req);

/// A validated fusion_rt_paired_projection (api.cpp): lhs [M, K], w[i]
/// [H_i, K] (any strides), out[i] [M, H_i]; bias / scale are [1, H_i] views
/// of F32 or the input dtype, absent when data == NULL. With gated_kind >= 0
/// (a gated fusion_rt_act_kind) H_0 == H_1, both epilogues are NONE or BIAS
/// and only out[0] is present. Semantics: docs/paired-projections.md.
struct PairedRequest {
  Mat lhs;
  Mat w[2];
  int32_t epi_kind[2] = {0, 0}; ///< fusion_rt_epilogue_kind
  int32_t round[2] = {0, 0};    ///< fusion_rt_accumulator_round
  Mat bias[2], scale[2];
  int32_t gated_kind = -1;
  Mat out[2];
  int num_threads = 0;
  /// out[0] is the runtime's own scratch (see Request::x_is_scratch).
  bool out0_is_scratch = false;
};

/// The CPU reference of the paired projection (f32, sequential over K).
fusion_rt_status cpu_paired_execute(const PairedRequest &req);

#ifdef FUSION_RT_HAVE_CUDA
/// True when `ptr` is device (or managed) memory.
bool cuda_is_device_pointer(const void *ptr);
/// Executes a validated request on the device, on `stream`.
fusion_rt_status cuda_execute(const Request &req, void *stream);
/// True when any data pointer of `req` is device (or managed) memory.
bool cuda_paired_touches_device(const PairedRequest &req);
/// Executes a validated paired projection on the device, on `stream`; on
/// failure the message is in cuda_paired_error_detail().
fusion_rt_status cuda_paired_execute(const PairedRequest &req, void *stream);
const char *cuda_paired_error_detail();
/// Stream-ordered device scratch (cudaMallocAsync / cudaFreeAsync): the
/// gated value between the two steps of fusion_rt_paired_projection_quantize.
fusion_rt_status cuda_scratch_alloc(size_t bytes, void *stream, void **out);
void cuda_scratch_free(void *ptr, void *stream);
/// fusion_rt_paired_projection_quantize where the pair would run on cuBLAS
/// (prefill sizes): the gate and up GEMMs with outputs of the accumulator
/// rounding's type (bf16 / f16, or f32 without rounding), then the fused
/// gated quantizer over them (`quant`: the validated quantizer, outputs
/// included). Biases added before the rounding (a Linear with bias=True:
/// ROUND_*_AFTER_BIAS) go into cuBLASLt's bias epilogue. Sets `taken`
/// false, writing nothing, where it does not apply (not the cuBLAS path,
/// other epilogues, a bias added after the rounding, different rounding
/// types, no cuBLAS operand layout, no cuBLASLt algorithm): the caller then
/// runs the pair and the quantizer.
fusion_rt_status cuda_paired_quantize_execute(const PairedRequest &pair,
                                              const Request &quant,
                                              int32_t intermediate_dtype,
                                              void *stream, bool &taken);
#endif

} // namespace fusion_rt

#endif // FUSION_RT_SRC_BACKEND_H
