//===- gated_act_quantize.cu - gated activation -> MXFP8 -------*- CUDA -*-===//
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
// off): the SwiGLU forward rowwise quantize of 16-bit inputs (no amax) with
// two 16-byte views and K % 256 == 0 takes the stream kernel
// (row_stream.cuh: chunks of 256 values of a row, two a warp step); by
// default (the knob gated_stream = 1) it also takes K % 8 == 0 (the lanes
// past K masked), the clamped SwiGLU (GPT-OSS) and gate and up interleaved
// in one row (ILV: two 16-byte loads give 8 gate and 8 up values), one
// chunk a step when the chunks are few. The others (K % 8 != 0), and every
// such call under row_stream = 0 or gated_stream = 0, take
// swiglu_row16_v2_kernel: warp tiles of 32 rows x 64 columns, 16-byte loads
// of 8 elements a lane, the activation kind and the intermediate type at
// compile time, one scale computation per block shared by shuffles,
// per-tile base pointers, rows past M masked in its fast tile; slow tiles
// are the engine's (through a VEC = 8 view of the same source). Same
// formulas (common/activation.h) in both.
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

/// Fast rowwise gated tile (SwiGLU or the clamped SwiGLU; ILV: gate and up
/// interleaved in one row): 4 row groups of 8 lanes, 8 rows x 8 columns a
/// lane, processed 4 rows at a time. Rows past M read zeros and store
/// nothing (a band of fewer than 32 rows, a decode-sized input).
template <typename T, bool E4M3, bool PROPAGATE, int INTER, int KIND, bool ILV>
__device__ __forceinline__ void swiglu_row_tile(const KParams &p, int64_t rb,
                                                int64_t c, int lane) {
  constexpr int RPL = 8;
  const int fmt = E4M3 ? kMXFP8E4M3 : kMXFP8E5M2;
  const int64_t rows = p.M - rb;
  const char *gp = p.x + (rb * p.x_rs + (ILV ? 2 * c : c)) * 2;
  const char *up = ILV ? gp : p.up + (rb * p.up_rs + c) * 2;
  uint4 ga[RPL], ua[RPL];
#pragma unroll
  for (int i = 0; i < RPL; ++i) {
    if (i >= rows) {
      ga[i] = ua[i] = make_uint4(0, 0, 0, 0);
    } else if constexpr (ILV) {
      stream::load_pairs16(gp + i * p.x_rs * 2, ga[i], ua[i]);
    } else {
      ga[i] = ldg_stream16(gp + i * p.x_rs * 2);
      ua[i] = ldg_stream16(up + i * p.up_rs * 2);
    }
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
      // Rows past M: no activation math (a decode-sized input has 1 of 32
      // rows; the math of the other 31 cost more than the whole tile), but
      // the block's lanes still join the shuffle. Nothing of them is stored.
      uint32_t k8 = 0;
      if (i < rows)
        k8 = stream::gated8<T, PROPAGATE, INTER, KIND>(p.act(), ga[i], ua[i], v[ii]);
      else
#pragma unroll
        for (int j = 0; j < 8; ++j)
          v[ii][j] = 0.f;
      key[ii] = stream::block_max4(k8);
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
      if (i >= rows)
        continue;
      *reinterpret_cast<uint2 *>(dp + i * p.rd_rs) =
          make_uint2(code[0] | (code[1] << 16), code[2] | (code[3] << 16));
      if (q == 0)
        sp[i * sstep] = sb;
    }
  }
}

template <typename T, bool E4M3, bool PROPAGATE, int KIND, bool ILV>
__global__ void __launch_bounds__(128, 4)
    swiglu_row16_v2_kernel(const KParams p) {
  uint32_t unused_amax = 0;
  v2_tiles<true>(
      p, p.vec16,
      [&](int64_t, int64_t rb, int64_t c, int, int lane) {
        if (p.inter == kInterBF16)
          swiglu_row_tile<T, E4M3, PROPAGATE, kInterBF16, KIND, ILV>(p, rb, c,
                                                                     lane);
        else if (p.inter == kInterF16)
          swiglu_row_tile<T, E4M3, PROPAGATE, kInterF16, KIND, ILV>(p, rb, c,
                                                                    lane);
        else
          swiglu_row_tile<T, E4M3, PROPAGATE, kInterF32, KIND, ILV>(p, rb, c,
                                                                    lane);
      },
      [&](int64_t band, int64_t rb, int64_t c, int group, int lane) {
        tile_slow<SrcGatedFwd8<T>, kRow>(p, band, rb, c, group, lane, unused_amax);
      });
}

template <typename T, bool E4M3, bool PROPAGATE, int KIND, bool ILV>
cudaError_t launch_swiglu_v2(const KParams &p, const mx_plan::Plan &plan,
                             cudaStream_t stream) {
  static int per_sm = 0;
  return launch_planned(swiglu_row16_v2_kernel<T, E4M3, PROPAGATE, KIND, ILV>,
                        p, plan, per_sm, stream);
}

template <typename T>
cudaError_t launch_swiglu_v2_typed(const KParams &p, const mx_plan::Plan &plan,
                                   cudaStream_t s) {
  return with_e4m3_propagate(
      p.format == kMXFP8E4M3, p.propagate, [&](auto e4m3, auto prop) {
        constexpr bool E = decltype(e4m3)::value, P = decltype(prop)::value;
        if (plan.kind == mx_plan::kClampedSwiGLU)
          return plan.ilv ? launch_swiglu_v2<T, E, P, kActClampedSwiGLU, true>(
                                p, plan, s)
                          : launch_swiglu_v2<T, E, P, kActClampedSwiGLU, false>(
                                p, plan, s);
        return plan.ilv
                   ? launch_swiglu_v2<T, E, P, kActSwiGLU, true>(p, plan, s)
                   : launch_swiglu_v2<T, E, P, kActSwiGLU, false>(p, plan, s);
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
