//===- gated_act_quantize.cu - gated activation -> MXFP8 kernels --*- CUDA -*-===//
//
// Forward: [gate | up] (one packed [M, 2K] view or two [M, K] views) ->
// quantize(round_inter(act(gate) * up')), [M, K]; the product never reaches
// memory. Backward: gate, up, grad -> [dact | dgate] quantized as [M, 2K]
// with separate rowwise scales for each half.
//
// Bytes that must move: forward 2*M*K*in_bytes read + M*K codes (+ scales)
// per direction; backward 3*M*K*in_bytes read + 2*M*K codes per direction.
//
//===----------------------------------------------------------------------===//
#include "cuda/launch.cuh"

namespace fusion_rt {
namespace cuda {

cudaError_t launch_gated(const KParams &p, bool backward, int dir, int dtype,
                         cudaStream_t s) {
  return backward ? launch_typed<SrcGatedBwd>(p, dir, dtype, s)
                  : launch_typed<SrcGatedFwd>(p, dir, dtype, s);
}

} // namespace cuda
} // namespace fusion_rt
