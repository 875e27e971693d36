//===- formats_plan.h - which general format kernels a call runs ---*- C++ -*-===//
//
// The one description of the kernels that runtime/cuda/formats.cu (the
// general kernels of MXFP4, NVFP4, FP8 per tensor and FP8 blocks: the
// fallback of every format) launches for a call, in order, with their
// template arguments, in plain C++. formats_execute launches the steps of
// `plan`, and `fusion-opt --fusion-kernel-report` names them with
// `kernel_name`, so the report cannot drift from the launch
// (runtime/test/formats_plan_test.cpp checks the plans without a GPU).
// Grids stay with the launcher: they depend on the device.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_FORMATS_PLAN_H
#define FUSION_RT_COMMON_FORMATS_PLAN_H

#include "common/quantize_block.h"
#include "fusion_rt.h"

#include <cstdint>
#include <string>

namespace fusion_rt {
namespace formats_plan {

/// The kernels of formats.cu that a plan launches (dequantize aside).
enum class Kernel : int32_t {
  Amax,           ///< amax_kernel<Src>: the tensor amax
  Activation,     ///< activation_kernel<Src>: an activation-only call
  Scalars,        ///< scalars_kernel: scale_inv of FP8 per tensor
  Fp8Tensor,      ///< fp8_tensor_kernel<Src>: FP8 per tensor, both copies
  Fp8BlockRow,    ///< fp8_block_row_kernel<Src, 16>: 1x128 FP8 blocks
  Fp8BlockRowWarp,///< fp8_block_row_warp_kernel<Src>: other FP8 block widths
  Scales2d,       ///< scales_2d_kernel<Src>: NVFP4 16x16 block scales
  Fp4Row,         ///< fp4_row_kernel<Src, BS>
  Fp4RowSerial,   ///< fp4_row_serial_kernel<Src, BS>: odd rowwise segments
  Fp4Col,         ///< fp4_col_kernel<Src, BS>
  DbiasBand,      ///< dbias_band_kernel<Src>: dbias partial sums
};

/// What decides the kernels: the validated request's facts.
struct Request {
  int32_t format = FUSION_RT_FORMAT_MXFP4;
  bool activation_only = false; ///< fusion_rt_activation: no quantizer
  bool amax_out = false;        ///< an amax output is asked for
  bool current_scaling = false; ///< FP8 per tensor, current scaling
  bool scale_inv = false;       ///< a scale_inv output (FP8 per tensor)
  bool rowwise = true, colwise = false;
  bool nvfp4_2d = false; ///< NVFP4 with 16x16 blocks
  bool dbias = false;
  /// A gated activation: no dbias step (validation rejects a gated dbias;
  /// the plan says so rather than the launcher's compile-time guard alone).
  bool gated = false;
  int32_t block_cols = 0; ///< FP8 block width
  int64_t rows = 0, cols = 0;
  int64_t seg = 0; ///< rowwise segment (cols, or K of a gated backward)
};

struct Step {
  Kernel kernel = Kernel::Amax;
  int bs = 0; ///< the FP4 kernels' block size (16 NVFP4, 32 MXFP4)
};

/// The steps of one call, in launch order (at most seven).
struct Plan {
  Step steps[8];
  int n = 0;
  void add(Kernel k, int bs = 0) { steps[n++] = Step{k, bs}; }
};

/// The tensor amax runs first wherever a value needs it: NVFP4's global
/// scale, FP8 current scaling, and an amax output.
inline bool needs_amax(const Request &r) {
  return !r.activation_only &&
         (r.format == FUSION_RT_FORMAT_NVFP4 || r.amax_out ||
          (is_fp8_tensor_format(r.format) && r.current_scaling));
}

inline Plan plan(const Request &r) {
  Plan p;
  const bool empty = r.rows <= 0 || r.cols <= 0;
  if (needs_amax(r) && !empty)
    p.add(Kernel::Amax);
  if (r.activation_only) {
    if (!empty)
      p.add(Kernel::Activation);
  } else {
    if (r.scale_inv)
      p.add(Kernel::Scalars);
    if (!empty) {
      if (is_fp8_tensor_format(r.format)) {
        p.add(Kernel::Fp8Tensor);
      } else if (is_fp8_block_format(r.format)) {
        // 1x128 (DeepSeek-V3, vLLM) on 16-lane groups; every other width
        // on a warp a block (fewer instances: formats.cu builds slowest).
        p.add(r.block_cols == 128 ? Kernel::Fp8BlockRow : Kernel::Fp8BlockRowWarp);
      } else {
        const int bs = r.format == FUSION_RT_FORMAT_NVFP4 ? 16 : 32;
        if (r.nvfp4_2d)
          p.add(Kernel::Scales2d);
        // Block starts on odd nibbles (a gated backward with an odd K): one
        // row a thread.
        const int64_t seg = r.seg > 0 ? r.seg : r.cols;
        const bool serial = (r.cols + seg - 1) / seg > 1 && (seg & 1);
        if (r.rowwise)
          p.add(serial ? Kernel::Fp4RowSerial : Kernel::Fp4Row, bs);
        if (r.colwise)
          p.add(Kernel::Fp4Col, bs);
      }
    }
  }
  // dbias: band sums here, then the reduction (cuda_backend.cu).
  if (r.dbias && !r.gated && !empty)
    p.add(Kernel::DbiasBand);
  return p;
}

/// The demangled name of a step's kernel for source type `src` (e.g.
/// "fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::BF16T, 0>"),
/// as the kernel inventory (cu++filt of the built kernels) spells it: a
/// template's name has its return type, a plain function's has none.
inline std::string kernel_name(const Step &s, const std::string &src) {
  const std::string ns = "fusion_rt::cuda::(anonymous namespace)::";
  const std::string params = "(" + ns + "FParams)";
  const std::string t = "<" + src + " >";
  const std::string tbs = "<" + src + ", " + std::to_string(s.bs) + ">";
  switch (s.kernel) {
  case Kernel::Amax:
    return "void " + ns + "amax_kernel" + t + "(" + ns + "FParams, " + ns +
           "Chunks, unsigned int*)";
  case Kernel::Activation:
    return "void " + ns + "activation_kernel" + t + params;
  case Kernel::Scalars: // not a template: no return type
    return ns + "scalars_kernel(" + ns + "FParams, float*)";
  case Kernel::Fp8Tensor:
    return "void " + ns + "fp8_tensor_kernel" + t + "(" + ns + "FParams, bool, bool)";
  case Kernel::Fp8BlockRow:
    return "void " + ns + "fp8_block_row_kernel<" + src + ", 16>" + params;
  case Kernel::Fp8BlockRowWarp:
    return "void " + ns + "fp8_block_row_warp_kernel" + t + params;
  case Kernel::Scales2d:
    return "void " + ns + "scales_2d_kernel" + t + params;
  case Kernel::Fp4Row:
    return "void " + ns + "fp4_row_kernel" + tbs + params;
  case Kernel::Fp4RowSerial:
    return "void " + ns + "fp4_row_serial_kernel" + tbs + params;
  case Kernel::Fp4Col:
    return "void " + ns + "fp4_col_kernel" + tbs + params;
  case Kernel::DbiasBand:
    return "void " + ns + "dbias_band_kernel" + t + params;
  }
  return "";
}

} // namespace formats_plan
} // namespace fusion_rt

#endif // FUSION_RT_COMMON_FORMATS_PLAN_H
