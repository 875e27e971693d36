//===- mxfp8_quantize.cu - plain MXFP8 quantize kernels -----------*- CUDA -*-===//
//
// bf16 / f16 / f32 [M, N] -> MXFP8 (e4m3 or e5m2) rowwise, colwise (same or
// transposed layout) or both in one pass. 16-bit inputs travel as raw 16-byte
// vectors (8 elements a lane); f32 as 16-byte vectors of 4.
//
// Bytes that must move: M*N*in_bytes read, M*N (+ M*N/32 scales) written per
// direction. Launch: see launch.cuh.
//
//===----------------------------------------------------------------------===//
#include "cuda/launch.cuh"

namespace fusion_rt {
namespace cuda {

int plain_vec(int dtype) { return dtype == FUSION_RT_F32 ? 4 : 8; }

cudaError_t launch_quantize(const KParams &p, int dir, int dtype,
                            cudaStream_t s) {
  return launch_typed<SrcPlain>(p, dir, dtype, s);
}

} // namespace cuda
} // namespace fusion_rt
