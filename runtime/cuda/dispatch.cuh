//===- dispatch.cuh - runtime flags to kernel template arguments -*- CUDA -*-===//
//
// The launchers turn the request's element format (e4m3 or e5m2) and NaN
// policy (propagate or ignore) into two bool template arguments of the
// kernel they launch. with_e4m3_propagate is that switch, written once:
// `f` receives std::integral_constant<bool, ...> values for both.
// with_act_kind turns the request's activation kind into the template
// argument of the kernels' per-element math, one case a row of the registry
// (fusion_rt_kinds.def), so a new kind needs no edit here.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_CUDA_DISPATCH_CUH
#define FUSION_RT_CUDA_DISPATCH_CUH

#include "common/activation.h"

#include <type_traits>

namespace fusion_rt {
namespace cuda {

template <typename F>
decltype(auto) with_e4m3_propagate(bool e4m3, bool propagate, F &&f) {
  using Yes = std::true_type;
  using No = std::false_type;
  if (e4m3)
    return propagate ? f(Yes{}, Yes{}) : f(Yes{}, No{});
  return propagate ? f(No{}, Yes{}) : f(No{}, No{});
}

/// Calls f(std::integral_constant<int, KIND>{}) with KIND = `kind` where
/// `kind` is an activation of the registry whose gated flag is GATED (the
/// identity excepted), else with KIND = FALLBACK: one case a row, so the
/// kernels instantiate each kind of their family and nothing else.
template <bool GATED, int FALLBACK, typename F>
__device__ __forceinline__ void with_act_kind(int32_t kind, F &&f) {
  constexpr auto selected = [](int v, bool gated) {
    return gated == GATED && v != kActIdentity && v != FALLBACK;
  };
  switch (kind) {
#define FUSION_RT_ACTIVATION(U, name, value, gated, mask)                      \
  case value:                                                                  \
    f(std::integral_constant<int, selected((value), (gated)) ? (value)         \
                                                             : FALLBACK>{});   \
    break;
#include "fusion_rt_kinds.def"
  default:
    f(std::integral_constant<int, FALLBACK>{});
    break;
  }
}

} // namespace cuda
} // namespace fusion_rt

#endif // FUSION_RT_CUDA_DISPATCH_CUH
