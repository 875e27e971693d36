//===- act_quantize.cu - activation -> MXFP8 kernels --------------*- CUDA -*-===//
//
// Forward: quantize(round_inter(act(x))); backward: quantize(round_inter(
// grad * act'(x))), optionally with the bias gradient (column sums of the
// unrounded values, written per 32-row band and reduced in band order).
// The activation never reaches memory. Each lane handles 4 columns.
//
// Bytes that must move: x (and grad) once, codes and scales once per
// direction, dbias partials ceil(M/32)*N*4 bytes written and read once.
//
//===----------------------------------------------------------------------===//
#include "cuda/launch.cuh"

namespace fusion_rt {
namespace cuda {

template <typename T> using SrcActFwd = SrcAct<T, false>;
template <typename T> using SrcActBwd = SrcAct<T, true>;

cudaError_t launch_act(const KParams &p, const mx_plan::Plan &plan, int dtype,
                       cudaStream_t s) {
  return plan.src == mx_plan::Source::ActBwd ? launch_typed<SrcActBwd>(p, plan, dtype, s)
                                             : launch_typed<SrcActFwd>(p, plan, dtype, s);
}

} // namespace cuda
} // namespace fusion_rt
