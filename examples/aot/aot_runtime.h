//===- aot_runtime.h - host-side pieces shared by the AOT drivers ---------===//
//
// The memref descriptor layout of MLIR's C interface, and the allocation
// hooks that fusion-aot's `generic-alloc` code calls
// (_mlir_memref_to_llvm_alloc / _aligned_alloc / _free). The driver picks
// where buffers live: host memory (the runtime runs its CPU backend), device
// memory (cudaMalloc: CUDA backend) or managed memory (CUDA backend, while
// compiled CPU loops may still touch the buffers).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_EXAMPLES_AOT_AOT_RUNTIME_H
#define FUSION_EXAMPLES_AOT_AOT_RUNTIME_H

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <set>

template <int N> struct MemRef {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[N];
  int64_t strides[N];
};

enum class AllocMode { Host, Device, Managed };
static AllocMode gAllocMode = AllocMode::Host;
static std::set<void *> gCudaAllocs;

extern "C" void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  if (gAllocMode == AllocMode::Host)
    return std::malloc(bytes);
  void *p = nullptr;
  cudaError_t e = gAllocMode == AllocMode::Device
                      ? cudaMalloc(&p, bytes)
                      : cudaMallocManaged(&p, bytes);
  if (e != cudaSuccess)
    return nullptr;
  gCudaAllocs.insert(p);
  return p;
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t align,
                                                     size_t bytes) {
  if (gAllocMode == AllocMode::Host)
    return std::aligned_alloc(align, (bytes + align - 1) / align * align);
  return _mlir_memref_to_llvm_alloc(bytes); // CUDA allocations: 256-B aligned
}

extern "C" void _mlir_memref_to_llvm_free(void *p) {
  if (gCudaAllocs.erase(p))
    cudaFree(p);
  else
    std::free(p);
}

#endif // FUSION_EXAMPLES_AOT_AOT_RUNTIME_H
