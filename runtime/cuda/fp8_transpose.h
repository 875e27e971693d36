//===- fp8_transpose.h - FP8 per tensor cast + transpose entry points -*- C++ -*-===//
//
// The FP8 per-tensor requests with a transposed colwise copy from 16-bit
// rows (fp8_transpose.cu; scope: common/fp8_plan.h transpose_applies).
// Pointers already checked.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_CUDA_FP8_TRANSPOSE_H
#define FUSION_RT_CUDA_FP8_TRANSPOSE_H

#include "fusion_rt.h"

#include <cuda_runtime.h>

namespace fusion_rt {
struct Request;
namespace cuda {
bool fp8_transpose_applies(const Request &q);
fusion_rt_status fp8_transpose_execute(const Request &q, cudaStream_t stream);
} // namespace cuda
} // namespace fusion_rt

#endif // FUSION_RT_CUDA_FP8_TRANSPOSE_H
