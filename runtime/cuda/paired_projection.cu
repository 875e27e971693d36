//===- paired_projection.cu - CUDA paired projection (placeholder) -*- CUDA -*-===//
//
// The CUDA kernels of fusion_rt_paired_projection_run land here; until then
// device pointers are reported as UNSUPPORTED (nothing written).
//
//===----------------------------------------------------------------------===//
#include "src/backend.h"

#include <cuda_runtime.h>

namespace fusion_rt {

bool cuda_paired_touches_device(const PairedRequest &q) {
  const void *ptrs[] = {q.lhs.data,    q.w[0].data,   q.w[1].data,
                        q.bias[0].data, q.bias[1].data, q.scale[0].data,
                        q.scale[1].data, q.out[0].data, q.out[1].data};
  for (const void *p : ptrs)
    if (p && cuda_is_device_pointer(p))
      return true;
  return false;
}

const char *cuda_paired_error_detail() {
  return "the CUDA backend does not implement the paired projection yet";
}

fusion_rt_status cuda_paired_execute(const PairedRequest &, void *) {
  return FUSION_RT_STATUS_UNSUPPORTED;
}

} // namespace fusion_rt
