//===- fp4_plan.h - when the FP4 stream kernels run, and which -----*- C++ -*-===//
//
// The one description of the FP4 rowwise stream kernels' scope
// (runtime/cuda/fp4_stream.cu) and of the kernel instance a call runs, in
// plain C++: the CUDA backend routes a call to them when `applies` says so,
// and `fusion-opt --fusion-kernel-report` names the kernel with the same
// functions, so the report cannot drift from the launch
// (runtime/test/mx_plan_test.cpp checks them without a GPU).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_FP4_PLAN_H
#define FUSION_RT_COMMON_FP4_PLAN_H

#include "fusion_rt.h"

#include <cstdint>
#include <string>

namespace fusion_rt {
namespace fp4_plan {

/// What decides the stream kernels' scope. The launcher fills it from the
/// validated request; the kernel report from the op, assuming the
/// lowering's buffers (contiguous, 16-byte aligned: `views_ok`).
struct Request {
  int32_t format = FUSION_RT_FORMAT_NVFP4;
  int32_t elem_rounding = FUSION_RT_ROUND_RNE;
  int32_t nvfp4_block = FUSION_RT_NVFP4_1D;
  int op = 0;            ///< 0 quantize, 1 activation, 2 gated
  bool backward = false;
  int32_t kind = 0;      ///< activation kind (ABI value)
  bool kind_gated = false;
  int32_t inter = 2;     ///< intermediate type (0 bf16, 1 f16, 2 f32)
  int32_t own_inter = 0; ///< the input's 16-bit type as an intermediate
  bool input16 = true;   ///< bf16 / f16 input (and up of the same type)
  bool rowwise = true, colwise = false, dbias = false;
  int64_t rows = 0, cols = 0;
  int64_t seg_cols = 0;  ///< 0 or cols: rowwise segments not split
  /// Rows of the inputs 16-byte aligned runs, codes and scales 4-byte
  /// aligned rows (the launcher's alignment facts).
  bool views_ok = true;
};

/// True when the stream kernels take the call: NVFP4 1D or MXFP4, RNE,
/// rowwise only without dbias, a plain quantizer or a forward activation
/// whose value is rounded to the input's type or kept in f32, 16-bit rows
/// of a multiple of 128, the group count within 32 bits.
inline bool applies(const Request &r) {
  if (r.format != FUSION_RT_FORMAT_NVFP4 && r.format != FUSION_RT_FORMAT_MXFP4)
    return false;
  if (r.elem_rounding == FUSION_RT_ROUND_STOCHASTIC ||
      (r.format == FUSION_RT_FORMAT_NVFP4 && r.nvfp4_block != FUSION_RT_NVFP4_1D))
    return false;
  if (r.op < 0 || r.op > 2)
    return false;
  if (r.op != 0 && (r.backward || (r.inter != 2 && r.inter != r.own_inter) ||
                    r.kind == 0 || (r.op == 2) != r.kind_gated))
    return false;
  return r.input16 && r.rowwise && !r.colwise && !r.dbias && r.rows > 0 &&
         r.cols > 0 && r.cols % 128 == 0 && (r.seg_cols == 0 || r.seg_cols == r.cols) &&
         r.cols / 128 * r.rows < (int64_t(1) << 30) && r.views_ok;
}

/// Groups of 128 values a warp codes per step: 4 for a plain quantizer, 2
/// with an activation (fp4_stream.cu's kPlainU, kActU).
inline int groups_per_step(const Request &r) { return r.op == 0 ? 4 : 2; }

/// The kernel instance (as cuobjdump lists it) for input type `t`
/// ("fusion_rt::cuda::BF16T" or F16T): fp4_stream_kernel<T, KIND, INTER, U,
/// block>, a plain quantizer as the identity with an f32 intermediate.
inline std::string kernel_name(const Request &r, const std::string &t) {
  const std::string ns = "fusion_rt::cuda::(anonymous namespace)::";
  const int32_t kind = r.op == 0 ? 0 : r.kind;
  const int32_t inter = kind ? r.inter : 2;
  return "void " + ns + "fp4_stream_kernel<" + t + ", " + std::to_string(kind) + ", " +
         std::to_string(inter) + ", " + std::to_string(kind ? 1 : 2) + ", " +
         (r.format == FUSION_RT_FORMAT_NVFP4 ? "16" : "32") + ">(" + ns + "SParams)";
}

} // namespace fp4_plan
} // namespace fusion_rt

#endif // FUSION_RT_COMMON_FP4_PLAN_H
