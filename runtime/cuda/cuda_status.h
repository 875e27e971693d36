//===- cuda_status.h - status and pointer helpers of the CUDA backend -*- C++ -*-===//
//
// One per-thread message buffer for every CUDA entry point (quantizers and
// paired projections), and the pointer-location check they share. Included
// by the .cu files only.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_CUDA_CUDA_STATUS_H
#define FUSION_RT_CUDA_CUDA_STATUS_H

#include "fusion_rt.h"

#include <cuda_runtime.h>

namespace fusion_rt {
namespace cuda {

/// Formats the message of a failing call (read by error_detail()) and
/// returns `st`.
fusion_rt_status fail(fusion_rt_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/// A CUDA runtime error as FUSION_RT_STATUS_BACKEND_ERROR, naming `what`;
/// clears the sticky launch error.
fusion_rt_status cuda_fail(cudaError_t e, const char *what);

/// Empties the message at the start of a call.
void clear_error_detail();

/// 0: device (or managed) memory of `device`; 1: not device memory;
/// 2: memory of another device.
int where(const void *ptr, int device);

} // namespace cuda
} // namespace fusion_rt

#endif // FUSION_RT_CUDA_CUDA_STATUS_H
