//===- cuda_backend.h - CUDA backend extras used by the dispatch ---*- C++ -*-===//
//
// Two additions to the CUDA hook of src/backend.h, used by api.cpp's
// dispatch when FUSION_RT_HAVE_CUDA is defined:
//  - a request goes to the CUDA backend when ANY of its pointers is device
//    memory (not only the input), so that a host/device mix is reported as
//    an error instead of the CPU backend writing through a device pointer;
//  - the CUDA backend's one-sentence message for a failing status.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_CUDA_CUDA_BACKEND_H
#define FUSION_RT_CUDA_CUDA_BACKEND_H

namespace fusion_rt {

struct Request;

/// True when any data pointer of `req` is device (or managed) memory.
bool cuda_request_touches_device(const Request &req);

namespace cuda {
/// Message of the last failing cuda_execute on this thread.
const char *error_detail();

/// cudaStreamSynchronize(stream): NULL on success, else the error's text.
const char *synchronize(void *stream);

/// Multiprocessors of the current device (cached per device ordinal;
/// cuda_backend.cu).
int device_sm_count();
} // namespace cuda

} // namespace fusion_rt

#endif // FUSION_RT_CUDA_CUDA_BACKEND_H
