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
// The v2 kernels (common/mx_plan.h; tuning knob quant_v2 = 0 turns them
// off): the SwiGLU forward rowwise quantize of 16-bit inputs (no
// amax) uses swiglu_row16_v2_kernel: 16-byte loads of 8 elements a lane
// instead of 8-byte loads of 4, the activation kind and the intermediate
// type at compile time, one scale computation per block shared by shuffles,
// per-tile base pointers. Same formulas (common/activation.h). Slow tiles
// are the engine's (through a VEC = 8 view of the same source). Rows of a
// multiple of 256 take the stream kernel (row_stream.cuh) instead.
//
//===----------------------------------------------------------------------===//
#include "cuda/dispatch.cuh"
#include "cuda/launch.cuh"
#include "cuda/row_stream.cuh"

#include <cstdlib>
#include <cstring>

namespace fusion_rt {
namespace cuda {

namespace {

/// The gated forward source seen with 8 columns a lane: only its scalar
/// (slow-tile) path is used, by the v2 kernel's edge tiles.
template <typename T> struct SrcGatedFwd8 : SrcGatedFwd<T> {
  static constexpr int VEC = 8, NV = 1, G = 4;
};

/// Fast rowwise SwiGLU tile: 4 row groups of 8 lanes, 8 rows x 8 columns a
/// lane, processed 4 rows at a time.
template <typename T, bool E4M3, bool PROPAGATE, int INTER>
__device__ __forceinline__ void swiglu_row_tile(const KParams &p, int64_t rb,
                                                int64_t c, int lane) {
  constexpr int RPL = 8;
  const int fmt = E4M3 ? kMXFP8E4M3 : kMXFP8E5M2;
  const char *gp = p.x + (rb * p.x_rs + c) * 2;
  const char *up = p.up + (rb * p.up_rs + c) * 2;
  uint4 ga[RPL], ua[RPL];
#pragma unroll
  for (int i = 0; i < RPL; ++i) {
    ga[i] = ldg_stream16(gp + i * p.x_rs * 2);
    ua[i] = ldg_stream16(up + i * p.up_rs * 2);
  }
  uint8_t *dp = p.rd + rb * p.rd_rs + c;
  const int64_t sc = c / 32;
  uint8_t *sp = p.swz ? p.rsc + swizzled_scale_offset(rb, sc, p.rsc_pc)
                      : p.rsc + rb * p.rsc_rs + sc * p.rsc_cs;
  const int64_t sstep = p.swz ? 16 : p.rsc_rs;
  const int q = lane & 3;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float v[4][8];
    uint32_t key[4];
#pragma unroll
    for (int ii = 0; ii < 4; ++ii) {
      const int i = 4 * h + ii;
      key[ii] = stream::block_max4(stream::swiglu8<T, PROPAGATE, INTER>(p.act(), ga[i], ua[i], v[ii]));
    }
    const uint32_t kq = q == 0 ? key[0] : q == 1 ? key[1] : q == 2 ? key[2] : key[3];
    const uint32_t sb_mine = block_scale_byte(kq, fmt, p.rounding, PROPAGATE);
#pragma unroll
    for (int ii = 0; ii < 4; ++ii) {
      const int i = 4 * h + ii;
      const uint8_t sb = uint8_t(__shfl_sync(0xffffffffu, sb_mine, (lane & ~3) | ii));
      const float r = mx_reciprocal(sb);
      uint32_t code[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float lo = v[ii][2 * j] * r, hi = v[ii][2 * j + 1] * r;
        code[j] = E4M3 ? cvt_e4m3x2(lo, hi) : cvt_e5m2x2(lo, hi);
      }
      *reinterpret_cast<uint2 *>(dp + i * p.rd_rs) =
          make_uint2(code[0] | (code[1] << 16), code[2] | (code[3] << 16));
      if (q == 0)
        sp[i * sstep] = sb;
    }
  }
}

template <typename T, bool E4M3, bool PROPAGATE>
__global__ void __launch_bounds__(128, 4) swiglu_row16_v2_kernel(const KParams p) {
  uint32_t unused_amax = 0;
  v2_tiles(
      p, p.vec16,
      [&](int64_t, int64_t rb, int64_t c, int, int lane) {
        if (p.inter == kInterBF16)
          swiglu_row_tile<T, E4M3, PROPAGATE, kInterBF16>(p, rb, c, lane);
        else if (p.inter == kInterF16)
          swiglu_row_tile<T, E4M3, PROPAGATE, kInterF16>(p, rb, c, lane);
        else
          swiglu_row_tile<T, E4M3, PROPAGATE, kInterF32>(p, rb, c, lane);
      },
      [&](int64_t band, int64_t rb, int64_t c, int group, int lane) {
        tile_slow<SrcGatedFwd8<T>, kRow>(p, band, rb, c, group, lane, unused_amax);
      });
}

template <typename T, bool E4M3, bool PROPAGATE>
cudaError_t launch_swiglu_v2(const KParams &p, const mx_plan::Plan &plan,
                             cudaStream_t stream) {
  static int per_sm = 0;
  return launch_planned(swiglu_row16_v2_kernel<T, E4M3, PROPAGATE>, p, plan, per_sm,
                        stream);
}

template <typename T>
cudaError_t launch_swiglu_v2_typed(const KParams &p, const mx_plan::Plan &plan,
                                   cudaStream_t s) {
  return with_e4m3_propagate(
      p.format == kMXFP8E4M3, p.propagate, [&](auto e4m3, auto prop) {
        constexpr bool E = decltype(e4m3)::value, P = decltype(prop)::value;
        return launch_swiglu_v2<T, E, P>(p, plan, s);
      });
}


} // namespace

cudaError_t launch_gated(const KParams &p, const mx_plan::Plan &plan, int dtype,
                         cudaStream_t s) {
  const bool bf16 = dtype == FUSION_RT_BF16;
  switch (plan.family) {
  case mx_plan::Family::SwigluStream:
    return bf16 ? launch_stream_typed<true, BF16T>(p, plan, s)
                : launch_stream_typed<true, F16T>(p, plan, s);
  case mx_plan::Family::SwigluRowV2:
    return bf16 ? launch_swiglu_v2_typed<BF16T>(p, plan, s)
                : launch_swiglu_v2_typed<F16T>(p, plan, s);
  case mx_plan::Family::SwigluBwdV2:
    return launch_swiglu_bwd_v2(p, plan, dtype, s);
  case mx_plan::Family::Tiles:
    return plan.src == mx_plan::Source::GatedBwd
               ? launch_typed<SrcGatedBwd>(p, plan, dtype, s)
               : launch_typed<SrcGatedFwd>(p, plan, dtype, s);
  default:
    return cudaErrorInvalidConfiguration; // not a gated family
  }
}

} // namespace cuda
} // namespace fusion_rt
