//===- dispatch.cuh - runtime flags to kernel template arguments -*- CUDA -*-===//
//
// The launchers turn the request's element format (e4m3 or e5m2) and NaN
// policy (propagate or ignore) into two bool template arguments of the
// kernel they launch. with_e4m3_propagate is that switch, written once:
// `f` receives std::integral_constant<bool, ...> values for both.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_CUDA_DISPATCH_CUH
#define FUSION_RT_CUDA_DISPATCH_CUH

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

} // namespace cuda
} // namespace fusion_rt

#endif // FUSION_RT_CUDA_DISPATCH_CUH
