//===- initcheck_probe.cu - does initcheck see what cuBLAS writes? ---------===//
//
// compute-sanitizer initcheck reports "uninitialized __global__ memory
// read" in paired_epilogue_kernel on the cuBLAS path of the paired
// projection, although every value read is checked correct against fp64.
// This probe settles where the report comes from, with none of the
// runtime's code: a buffer C is allocated (cudaMalloc or cudaMallocAsync),
// written (by cublasGemmEx with beta = 0, or by a plain kernel), and then
// read by a plain kernel. Under initcheck, a report in the (allocator,
// cuBLAS) cases but none in the (allocator, kernel) cases means initcheck
// does not track the writes of cuBLAS's GEMM kernels.
//
// Usage: initcheck_probe {malloc|async} {cublas|kernel}   (exit 0 = ran;
// the sanitizer's report is the result). Build (bench/sanitize/gpu_sanitize.sh):
//   nvcc -O2 -gencode=arch=compute_90a,code=sm_90a initcheck_probe.cu -lcublas
//
//===----------------------------------------------------------------------===//
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

__global__ void fill(float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = float(i % 7);
}

__global__ void sum(const float *c, int n, float *out) {
  float s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    s += c[i];
  atomicAdd(out, s);
}

bool ok(cudaError_t e, const char *what) {
  if (e == cudaSuccess)
    return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return false;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s {malloc|async} {cublas|kernel}\n", argv[0]);
    return 2;
  }
  const bool async = !std::strcmp(argv[1], "async");
  const bool blas = !std::strcmp(argv[2], "cublas");
  const int m = 256, n = 384, k = 512; // C [m, n] = A [m, k] x B^T, B [n, k]
  cudaStream_t s;
  if (!ok(cudaStreamCreate(&s), "stream"))
    return 1;
  std::vector<__nv_bfloat16> ha(size_t(m) * k), hb(size_t(n) * k);
  for (size_t i = 0; i < ha.size(); ++i)
    ha[i] = __float2bfloat16(float(int(i % 13) - 6) / 8);
  for (size_t i = 0; i < hb.size(); ++i)
    hb[i] = __float2bfloat16(float(int(i % 11) - 5) / 4);
  __nv_bfloat16 *a, *b;
  float *c, *out;
  if (!ok(cudaMalloc(&a, ha.size() * 2), "a") || !ok(cudaMalloc(&b, hb.size() * 2), "b") ||
      !ok(cudaMalloc(&out, 4), "out"))
    return 1;
  cudaMemcpy(a, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice);
  cudaMemset(out, 0, 4);
  if (async ? !ok(cudaMallocAsync(&c, size_t(m) * n * 4, s), "cudaMallocAsync")
            : !ok(cudaMalloc(&c, size_t(m) * n * 4), "cudaMalloc"))
    return 1;
  if (blas) {
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
      return 1;
    cublasSetStream(h, s);
    const float alpha = 1, beta = 0;
    // Column-major: C^T [n, m] = B [n, k] x A^T, as the runtime calls it.
    cublasStatus_t st = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, b,
                                     CUDA_R_16BF, k, a, CUDA_R_16BF, k, &beta, c,
                                     CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "cublasGemmEx: %d\n", int(st));
      return 1;
    }
    cudaStreamSynchronize(s);
    cublasDestroy(h);
  } else {
    fill<<<(m * n + 255) / 256, 256, 0, s>>>(c, m * n);
  }
  sum<<<64, 256, 0, s>>>(c, m * n, out);
  float host = 0;
  if (!ok(cudaStreamSynchronize(s), "sync"))
    return 1;
  cudaMemcpy(&host, out, 4, cudaMemcpyDeviceToHost);
  std::printf("initcheck_probe %s %s: sum %g\n", argv[1], argv[2], host);
  if (async)
    cudaFreeAsync(c, s);
  else
    cudaFree(c);
  cudaStreamSynchronize(s);
  return 0;
}
