//===- launch.cuh - launch configuration of the tile engine -------*- CUDA -*-===//
//
// Grid sizing for mx_quantize_kernel: a persistent grid of (SMs x resident
// blocks per SM) blocks of 128 threads, read off the device once per kernel,
// capped by the number of warp tiles. Included by the three kernel-family
// files, each of which instantiates only its own sources.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_CUDA_LAUNCH_CUH
#define FUSION_RT_CUDA_LAUNCH_CUH

#include "common/mx_plan.h"
#include "cuda/cuda_backend.h"
#include "cuda/mx_kernel.cuh"

#include <cuda_runtime.h>

namespace fusion_rt {
namespace cuda {

constexpr int kThreads = 128;


/// Under the check_plan knob, records the first kernel launched since
/// cuda_execute (cuda_backend.cu) cleared the record, for its comparison
/// with the plan's kernel name; otherwise does nothing.
void note_launch(const void *kernel);

/// Launches `kernel` (128 threads a block) on a persistent grid of
/// min(want, SMs x resident blocks) blocks; the resident blocks are read off
/// the device once and cached in `per_sm`. Nothing to do (want <= 0) is
/// success.
template <typename Kernel>
cudaError_t launch_persistent(Kernel kernel, const KParams &p, int64_t want,
                              int &per_sm, cudaStream_t stream) {
  note_launch(reinterpret_cast<const void *>(kernel));
  if (per_sm == 0) {
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, kThreads, 0) !=
            cudaSuccess ||
        n < 1)
      n = 1;
    per_sm = n;
  }
  const int64_t cap = int64_t(device_sm_count()) * per_sm;
  const int grid = int(want < cap ? want : cap);
  if (grid <= 0)
    return cudaSuccess;
  kernel<<<grid, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

/// Launches `kernel` on the grid of `plan` (common/mx_plan.h): p.tiles_x
/// and p.tiles from the plan's units, min(plan.want, resident blocks)
/// blocks.
template <typename Kernel>
cudaError_t launch_planned(Kernel kernel, const KParams &p_in,
                           const mx_plan::Plan &plan, int &per_sm,
                           cudaStream_t stream) {
  KParams p = p_in;
  p.tiles_x = plan.tiles_x;
  p.tiles = plan.units;
  return launch_persistent(kernel, p, plan.want, per_sm, stream);
}

/// Launches mx_quantize_kernel<Src, DIR> over the plan's warp tiles (a
/// plan whose tile width is not this source's is refused).
template <typename Src, int DIR>
cudaError_t launch_tiles(const KParams &p, const mx_plan::Plan &plan,
                         cudaStream_t stream) {
  if (plan.unit_rows != 32 || plan.unit_cols != (32 / Src::G) * Src::VEC)
    return cudaErrorInvalidConfiguration;
  static int per_sm = 0;
  return launch_planned(mx_quantize_kernel<Src, DIR>, p, plan, per_sm, stream);
}

/// Dispatches on the plan's direction (kRow, kCol, kBoth).
template <typename Src>
cudaError_t launch_dir(const KParams &p, const mx_plan::Plan &plan,
                       cudaStream_t stream) {
  switch (plan.dir) {
  case kRow:
    return launch_tiles<Src, kRow>(p, plan, stream);
  case kCol:
    return launch_tiles<Src, kCol>(p, plan, stream);
  default:
    return launch_tiles<Src, kBoth>(p, plan, stream);
  }
}

/// Dispatches on the input element type (FUSION_RT_BF16 / F16 / F32).
template <template <typename> class SrcT>
cudaError_t launch_typed(const KParams &p, const mx_plan::Plan &plan, int dtype,
                         cudaStream_t stream) {
  switch (dtype) {
  case FUSION_RT_BF16:
    return launch_dir<SrcT<BF16T>>(p, plan, stream);
  case FUSION_RT_F16:
    return launch_dir<SrcT<F16T>>(p, plan, stream);
  default:
    return launch_dir<SrcT<F32T>>(p, plan, stream);
  }
}

/// Vector bytes per load of each family (for the host's alignment checks).
int plain_vec(int dtype);
constexpr int kActVec = 4;
constexpr int kGatedFwdVec = 4;
constexpr int kGatedBwdVec = 2;

/// True for the FLAT form's layout (mx_plan::Request::flat): contiguous
/// rows, compact contiguous rowwise scales in a 4-byte aligned buffer.
inline bool stream_flat(const KParams &p) {
  return p.x_rs == p.K && p.rd_rs == p.K && !p.swz && p.rsc_cs == 1 &&
         p.rsc_rs == p.K / 32 && reinterpret_cast<uintptr_t>(p.rsc) % 4 == 0;
}

/// Family launchers, one per .cu file: each launches what `plan`
/// (common/mx_plan.h plan_mx) names for its sources.
cudaError_t launch_quantize(const KParams &p, const mx_plan::Plan &plan, int dtype,
                            cudaStream_t s);
cudaError_t launch_act(const KParams &p, const mx_plan::Plan &plan, int dtype,
                       cudaStream_t s);
cudaError_t launch_gated(const KParams &p, const mx_plan::Plan &plan, int dtype,
                         cudaStream_t s);
/// FUSION_RT_ZERO_SCALE_ONE after any of them (mx_zero_scale.cu): rewrites
/// the codes of the blocks whose scale byte is 0. `nv` is 2 for the gated
/// backward's [dact | dgate] values, else 1.
cudaError_t launch_zero_scale_one(const KParams &p, int nv, bool rowwise,
                                  bool colwise, cudaStream_t s);
/// FUSION_RT_ZERO_SCALE_MIN_NORMAL after any of them: recomputes the blocks
/// of scale byte 0 (op: 0 quantize, 1 activation, 2 gated).
cudaError_t launch_zero_scale_min_normal(const KParams &p, int op, bool backward,
                                         int dtype, bool rowwise, bool colwise,
                                         cudaStream_t s);

/// The SwiGLU backward kernel of mxfp8_quantize.cu (Family::SwigluBwdV2).
cudaError_t launch_swiglu_bwd_v2(const KParams &p, const mx_plan::Plan &plan,
                                 int dtype, cudaStream_t s);

/// dbias[j * stride] = canonical_nan(sum over b < nbands of ws[b * K + j]),
/// in band order (cuda_backend.cu; ws may be NULL when nbands is 0).
cudaError_t launch_dbias_reduce(const float *ws, int64_t nbands, int64_t K,
                                float *dbias, int64_t stride, cudaStream_t s);

} // namespace cuda

struct Request;
namespace cuda {
/// Every request but the MXFP8 quantizers (formats.cu): MXFP4, NVFP4, FP8
/// per tensor, dequantize, activation apply. Pointers already checked.
fusion_rt_status formats_execute(const Request &q, cudaStream_t stream);
/// FP8 block scaling 1x128 from 16-bit inputs with 16-byte aligned rows,
/// plain quantize or SwiGLU forward, rowwise codes of 8-byte aligned rows,
/// no amax / scale_inv / dbias output (fp8_block.cu): the stream kernels.
bool fp8_block_stream_applies(const Request &q);
fusion_rt_status fp8_block_stream_execute(const Request &q, cudaStream_t stream);
/// NVFP4 (1x16, RNE) and MXFP4 rowwise from 16-bit inputs with 16-byte
/// aligned rows of a multiple of 128 values, plain or a forward activation
/// (the value in the input's type or f32), codes and scales of 4-byte
/// aligned rows, no colwise copy or dbias (fp4_stream.cu).
bool fp4_stream_applies(const Request &q);
fusion_rt_status fp4_stream_execute(const Request &q, cudaStream_t stream);
/// FP8 block formats with block_rows > 1 (2D blocks, 128x128 weight tiles):
/// quantize (a thread block per scale block) and dequantize (fp8_block.cu).
bool fp8_block_tiles_apply(const Request &q);
fusion_rt_status fp8_block_tiles_execute(const Request &q, cudaStream_t stream);
} // namespace cuda
} // namespace fusion_rt

#endif // FUSION_RT_CUDA_LAUNCH_CUH
