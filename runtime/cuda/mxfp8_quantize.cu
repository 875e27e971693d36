//===- mxfp8_quantize.cu - plain MXFP8 quantize kernels -----------*- CUDA -*-===//
//
// bf16 / f16 / f32 [M, N] -> MXFP8 (e4m3 or e5m2) rowwise, colwise (same or
// transposed layout) or both in one pass. 16-bit inputs travel as raw 16-byte
// vectors (8 elements a lane); f32 as 16-byte vectors of 4.
//
// Bytes that must move: M*N*in_bytes read, M*N (+ M*N/32 scales) written per
// direction. Launch: see launch.cuh.
//
// The v2 kernels (default; FUSION_RT_CUDA_QUANT_V2=0 in the environment
// turns them off): 16-bit quantize without `amax` (rowwise, colwise same or
// transposed, both) uses the v2 kernels: leaner fast tiles (packed 16-bit
// abs-max, one scale computation per block shared by shuffles instead of one
// per lane, compile-time element format and NaN policy, per-tile base
// pointers); their slow tiles are the engine's. Bit-exact on every GPU test
// case and faster than the engine on every shape in the H200 run of
// docs/benchmarks/mxfp8_results.md.
//
//===----------------------------------------------------------------------===//
#include "cuda/launch.cuh"
#include "cuda/row_stream.cuh"

#include <cstdlib>
#include <cstring>

namespace fusion_rt {
namespace cuda {

int plain_vec(int dtype) { return dtype == FUSION_RT_F32 ? 4 : 8; }

namespace {

/// Packed max of two pairs of 16-bit |x| patterns. PROPAGATE: unsigned max
/// (a NaN pattern exceeds Inf exceeds every number). IGNORE: the IEEE maxNum
/// of the type (a NaN operand yields the other one).
template <typename T, bool PROPAGATE>
__device__ __forceinline__ uint32_t max16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  if constexpr (PROPAGATE)
    asm("max.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  else if constexpr (std::is_same<T, BF16T>::value)
    asm("max.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  else
    asm("max.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

/// The block-amax key (|x| bits of the 16-bit type, NaN patterns kept under
/// PROPAGATE, dropped under IGNORE) of one 8-element vector.
template <typename T, bool PROPAGATE>
__device__ __forceinline__ uint32_t vec_key(const uint4 &w) {
  const uint32_t m = 0x7fff7fffu;
  uint32_t k = max16x2<T, PROPAGATE>(max16x2<T, PROPAGATE>(w.x & m, w.y & m),
                                     max16x2<T, PROPAGATE>(w.z & m, w.w & m));
  uint32_t lo = k & 0xffffu, hi = k >> 16;
  if constexpr (!PROPAGATE) {
    // maxNum of an all-NaN chain is NaN: those elements are ignored (0).
    const uint32_t inf = std::is_same<T, BF16T>::value ? 0x7f80u : 0x7c00u;
    lo = lo > inf ? 0u : lo;
    hi = hi > inf ? 0u : hi;
  }
  return max(lo, hi);
}

/// fp32 bits of a 16-bit |x| pattern (exact; NaN stays NaN, Inf stays Inf).
template <typename T> __device__ __forceinline__ uint32_t key_f32_bits(uint32_t k) {
  if constexpr (std::is_same<T, BF16T>::value)
    return k << 16;
  else
    return __float_as_uint(__half2float(__ushort_as_half(uint16_t(k))));
}

/// Fast rowwise tile of mx_rowwise16_v2_kernel: same lane layout as the
/// engine (4 row groups of 8 lanes, 8 rows and 8 columns a lane).
template <typename T, bool E4M3, bool PROPAGATE>
__device__ __forceinline__ void row16_tile(const KParams &p, int64_t rb,
                                           int64_t c, int lane) {
  constexpr int RPL = 8;
  const char *xp = p.x + (rb * p.x_rs + c) * 2;
  const int64_t xstep = p.x_rs * 2;
  uint4 w[RPL];
#pragma unroll
  for (int i = 0; i < RPL; ++i)
    w[i] = ldg_stream16(xp + i * xstep);

  // Block amax of every row (all 4 lanes of a block end with it).
  uint32_t key[RPL];
#pragma unroll
  for (int i = 0; i < RPL; ++i) {
    uint32_t k = vec_key<T, PROPAGATE>(w[i]);
    k = max(k, __shfl_xor_sync(0xffffffffu, k, 1));
    key[i] = max(k, __shfl_xor_sync(0xffffffffu, k, 2));
  }
  // Lane q of the block computes the scale of rows q and q + 4; shuffles
  // hand the bytes to the other three lanes.
  const int q = lane & 3;
  uint32_t sb_mine[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const uint32_t k = q == 0 ? key[4 * h] : q == 1 ? key[4 * h + 1]
                       : q == 2 ? key[4 * h + 2] : key[4 * h + 3];
    sb_mine[h] = block_scale_byte(key_f32_bits<T>(k),
                                  E4M3 ? kMXFP8E4M3 : kMXFP8E5M2, p.rounding,
                                  PROPAGATE);
  }
  uint8_t *dp = p.rd + rb * p.rd_rs + c;
  const int64_t sc = c / 32;
  uint8_t *sp = p.swz ? p.rsc + swizzled_scale_offset(rb, sc, p.rsc_pc)
                      : p.rsc + rb * p.rsc_rs + sc * p.rsc_cs;
  const int64_t sstep = p.swz ? 16 : p.rsc_rs; // rb..rb+7 stay in one 32-row group
#pragma unroll
  for (int i = 0; i < RPL; ++i) {
    const uint8_t sb =
        uint8_t(__shfl_sync(0xffffffffu, sb_mine[i / 4], (lane & ~3) | (i % 4)));
    const float r = mx_reciprocal(sb);
    const uint32_t ws[4] = {w[i].x, w[i].y, w[i].z, w[i].w};
    uint32_t code[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float lo = T::lo(ws[j]) * r, hi = T::hi(ws[j]) * r;
      code[j] = E4M3 ? cvt_e4m3x2(lo, hi) : cvt_e5m2x2(lo, hi);
    }
    *reinterpret_cast<uint2 *>(dp + i * p.rd_rs) =
        make_uint2(code[0] | (code[1] << 16), code[2] | (code[3] << 16));
    if (q == 0)
      sp[i * sstep] = sb;
  }
}

/// Zeroes a 16-bit NaN key under IGNORE (maxNum of an all-NaN chain is NaN).
template <typename T, bool PROPAGATE>
__device__ __forceinline__ uint32_t fix_key(uint32_t k) {
  if constexpr (PROPAGATE)
    return k;
  const uint32_t inf = std::is_same<T, BF16T>::value ? 0x7f80u : 0x7c00u;
  return k > inf ? 0u : k;
}

/// Fast colwise (and, with DO_ROW, rowwise) tile: the 8 x 8 lane block of
/// the engine's layout. Column keys are packed 16-bit maxima over the lane's
/// rows, joined across the 4 row groups with shuffles; row group g computes
/// the scales of column pair g and shares them.
template <typename T, bool E4M3, bool PROPAGATE, bool DO_ROW>
__device__ __forceinline__ void col16_tile(const KParams &p, int64_t band,
                                           int64_t rb, int64_t c, int group,
                                           int lane) {
  constexpr int RPL = 8;
  const int fmt = E4M3 ? kMXFP8E4M3 : kMXFP8E5M2;
  const char *xp = p.x + (rb * p.x_rs + c) * 2;
  const int64_t xstep = p.x_rs * 2;
  uint4 w[RPL];
#pragma unroll
  for (int i = 0; i < RPL; ++i)
    w[i] = ldg_stream16(xp + i * xstep);

  const uint32_t m = 0x7fff7fffu;
  uint32_t ck[4] = {w[0].x & m, w[0].y & m, w[0].z & m, w[0].w & m};
#pragma unroll
  for (int i = 1; i < RPL; ++i) {
    ck[0] = max16x2<T, PROPAGATE>(ck[0], w[i].x & m);
    ck[1] = max16x2<T, PROPAGATE>(ck[1], w[i].y & m);
    ck[2] = max16x2<T, PROPAGATE>(ck[2], w[i].z & m);
    ck[3] = max16x2<T, PROPAGATE>(ck[3], w[i].w & m);
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    ck[j] = max16x2<T, PROPAGATE>(ck[j], __shfl_xor_sync(0xffffffffu, ck[j], 8));
    ck[j] = max16x2<T, PROPAGATE>(ck[j], __shfl_xor_sync(0xffffffffu, ck[j], 16));
  }
  const uint32_t kk = group == 0 ? ck[0] : group == 1 ? ck[1] : group == 2 ? ck[2] : ck[3];
  const uint32_t sb_lo = block_scale_byte(
      key_f32_bits<T>(fix_key<T, PROPAGATE>(kk & 0xffffu)), fmt, p.rounding, PROPAGATE);
  const uint32_t sb_hi = block_scale_byte(
      key_f32_bits<T>(fix_key<T, PROPAGATE>(kk >> 16)), fmt, p.rounding, PROPAGATE);
  const uint32_t mine = sb_lo | (sb_hi << 8);
  uint8_t sb[8];
  float crcp[8];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint32_t pr = __shfl_sync(0xffffffffu, mine, j * 8 + (lane & 7));
    sb[2 * j] = uint8_t(pr & 0xffu);
    sb[2 * j + 1] = uint8_t(pr >> 8);
  }
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    crcp[j] = mx_reciprocal(sb[j]);
    if (group == 0)
      put_col_scale(p, c + j, band, sb[j]);
  }
  if (!p.col_t) {
    uint8_t *dp = p.cd + rb * p.cd_rs + c;
#pragma unroll
    for (int i = 0; i < RPL; ++i) {
      const uint32_t ws[4] = {w[i].x, w[i].y, w[i].z, w[i].w};
      uint32_t code[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float lo = T::lo(ws[j]) * crcp[2 * j], hi = T::hi(ws[j]) * crcp[2 * j + 1];
        code[j] = E4M3 ? cvt_e4m3x2(lo, hi) : cvt_e5m2x2(lo, hi);
      }
      *reinterpret_cast<uint2 *>(dp + i * p.cd_rs) =
          make_uint2(code[0] | (code[1] << 16), code[2] | (code[3] << 16));
    }
  } else {
    // Transposed: column c + j is 8 contiguous codes of output row c + j.
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      uint32_t code[4];
#pragma unroll
      for (int i = 0; i < RPL; i += 2) {
        const uint32_t a = (&w[i].x)[j / 2], b = (&w[i + 1].x)[j / 2];
        const float va = ((j & 1) ? T::hi(a) : T::lo(a)) * crcp[j];
        const float vb = ((j & 1) ? T::hi(b) : T::lo(b)) * crcp[j];
        code[i / 2] = E4M3 ? cvt_e4m3x2(va, vb) : cvt_e5m2x2(va, vb);
      }
      *reinterpret_cast<uint2 *>(p.cd + (c + j) * p.cd_rs + rb) =
          make_uint2(code[0] | (code[1] << 16), code[2] | (code[3] << 16));
    }
  }
  if constexpr (DO_ROW) {
    uint32_t key[RPL];
#pragma unroll
    for (int i = 0; i < RPL; ++i) {
      uint32_t k = vec_key<T, PROPAGATE>(w[i]);
      k = max(k, __shfl_xor_sync(0xffffffffu, k, 1));
      key[i] = max(k, __shfl_xor_sync(0xffffffffu, k, 2));
    }
    const int q = lane & 3;
    uint32_t sb_row[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t k = q == 0 ? key[4 * h] : q == 1 ? key[4 * h + 1]
                         : q == 2 ? key[4 * h + 2] : key[4 * h + 3];
      sb_row[h] = block_scale_byte(key_f32_bits<T>(k), fmt, p.rounding, PROPAGATE);
    }
    uint8_t *dp = p.rd + rb * p.rd_rs + c;
    const int64_t sc = c / 32;
    uint8_t *sp = p.swz ? p.rsc + swizzled_scale_offset(rb, sc, p.rsc_pc)
                        : p.rsc + rb * p.rsc_rs + sc * p.rsc_cs;
    const int64_t sstep = p.swz ? 16 : p.rsc_rs;
#pragma unroll
    for (int i = 0; i < RPL; ++i) {
      const uint8_t b =
          uint8_t(__shfl_sync(0xffffffffu, sb_row[i / 4], (lane & ~3) | (i % 4)));
      const float r = mx_reciprocal(b);
      const uint32_t ws[4] = {w[i].x, w[i].y, w[i].z, w[i].w};
      uint32_t code[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float lo = T::lo(ws[j]) * r, hi = T::hi(ws[j]) * r;
        code[j] = E4M3 ? cvt_e4m3x2(lo, hi) : cvt_e5m2x2(lo, hi);
      }
      *reinterpret_cast<uint2 *>(dp + i * p.rd_rs) =
          make_uint2(code[0] | (code[1] << 16), code[2] | (code[3] << 16));
      if (q == 0)
        sp[i * sstep] = b;
    }
  }
}

template <typename T, bool E4M3, bool PROPAGATE, int DIR>
__global__ void __launch_bounds__(128, 4) mx_col16_v2_kernel(const KParams p) {
  using Src = SrcPlain<T>;
  constexpr int VEC = 8, LG = 8, RPL = 8;
  const int lane = threadIdx.x & 31;
  const int group = lane / LG;
  const int64_t warp0 = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int64_t nwarps = (int64_t(gridDim.x) * blockDim.x) >> 5;
  uint32_t unused_amax = 0;
  for (int64_t t = warp0; t < p.tiles; t += nwarps) {
    const int64_t band = t / p.tiles_x;
    const int64_t rb = band * 32 + group * RPL;
    const int64_t c = (t - band * p.tiles_x) * (LG * VEC) + (lane % LG) * VEC;
    const bool lane_fast = p.vec_all && band * 32 + 32 <= p.M && c + VEC <= p.K;
    if (__all_sync(0xffffffffu, lane_fast))
      col16_tile<T, E4M3, PROPAGATE, DIR == kBoth>(p, band, rb, c, group, lane);
    else
      tile_slow<Src, DIR>(p, band, rb, c, group, lane, unused_amax);
  }
}

template <typename T, bool E4M3, bool PROPAGATE>
__global__ void __launch_bounds__(128, 4) mx_rowwise16_v2_kernel(const KParams p) {
  using Src = SrcPlain<T>;
  constexpr int VEC = 8, LG = 8, RPL = 8;
  const int lane = threadIdx.x & 31;
  const int group = lane / LG;
  const int64_t warp0 = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int64_t nwarps = (int64_t(gridDim.x) * blockDim.x) >> 5;
  uint32_t unused_amax = 0;
  for (int64_t t = warp0; t < p.tiles; t += nwarps) {
    const int64_t band = t / p.tiles_x;
    const int64_t rb = band * 32 + group * RPL;
    const int64_t c = (t - band * p.tiles_x) * (LG * VEC) + (lane % LG) * VEC;
    const bool lane_fast = p.vec_all && band * 32 + 32 <= p.M && c + VEC <= p.K;
    if (__all_sync(0xffffffffu, lane_fast))
      row16_tile<T, E4M3, PROPAGATE>(p, rb, c, lane);
    else
      tile_slow<Src, kRow>(p, band, rb, c, group, lane, unused_amax);
  }
}

/// Grid of a v2 kernel: persistent, like launch_tiles (launch.cuh).
template <typename Kernel>
cudaError_t launch_v2_kernel(Kernel kernel, const KParams &p_in, int &per_sm,
                             cudaStream_t stream) {
  if (per_sm == 0) {
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, kThreads, 0) !=
            cudaSuccess ||
        n < 1)
      n = 1;
    per_sm = n;
  }
  KParams p = p_in;
  p.tiles_x = (p.K + 63) / 64;
  p.tiles = (p.M + 31) / 32 * p.tiles_x;
  const int64_t want = (p.tiles + 3) / 4;
  const int64_t cap = int64_t(device_sm_count()) * per_sm;
  const int grid = int(want < cap ? want : cap);
  if (grid <= 0)
    return cudaSuccess;
  kernel<<<grid, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

template <typename T, bool E4M3, bool PROPAGATE>
cudaError_t launch_v2(const KParams &p, int dir, cudaStream_t s) {
  static int per_sm[3] = {0, 0, 0};
  if (dir == kRow)
    return launch_v2_kernel(mx_rowwise16_v2_kernel<T, E4M3, PROPAGATE>, p, per_sm[0], s);
  if (dir == kCol)
    return launch_v2_kernel(mx_col16_v2_kernel<T, E4M3, PROPAGATE, kCol>, p, per_sm[1], s);
  return launch_v2_kernel(mx_col16_v2_kernel<T, E4M3, PROPAGATE, kBoth>, p, per_sm[2], s);
}

template <typename T>
cudaError_t launch_v2_typed(const KParams &p, int dir, cudaStream_t s) {
  const bool e4m3 = p.format == kMXFP8E4M3;
  if (e4m3)
    return p.propagate ? launch_v2<T, true, true>(p, dir, s)
                       : launch_v2<T, true, false>(p, dir, s);
  return p.propagate ? launch_v2<T, false, true>(p, dir, s)
                     : launch_v2<T, false, false>(p, dir, s);
}


} // namespace

bool quant_v2_enabled() {
  // The default since the 2026-11-29 19:52 H200 run (bit-exact on all GPU
  // test cases, faster everywhere); FUSION_RT_CUDA_QUANT_V2=0 selects the
  // engine's kernels instead, for A/B runs.
  static const bool on = [] {
    const char *e = std::getenv("FUSION_RT_CUDA_QUANT_V2");
    return !(e && std::strcmp(e, "0") == 0);
  }();
  return on;
}

int row_stream_variant(bool gated) {
  // FUSION_RT_CUDA_ROW_STREAM=0|4p|8p|8|16|4ph|8h selects one variant for
  // both families (A/B runs; 0 = the v2 tile kernels); unset: the defaults.
  static const int plain_swiglu = [] {
    // Defaults from the 2026-11-29 A/B runs on the H200 (docs/kernels.md):
    // plain: 4 chunks + prefetch + L2 hints (4ph); SwiGLU: the v2 tile
    // kernel (0), which beat its stream variants by 3-4 %.
    int plain = 5, swiglu = 0;
    if (const char *e = std::getenv("FUSION_RT_CUDA_ROW_STREAM")) {
      const int x = !std::strcmp(e, "0")    ? 0
                    : !std::strcmp(e, "4p") ? 1
                    : !std::strcmp(e, "8p") ? 2
                    : !std::strcmp(e, "8")  ? 3
                    : !std::strcmp(e, "16") ? 4
                    : !std::strcmp(e, "4ph") ? 5
                    : !std::strcmp(e, "8h") ? 6
                                            : -1;
      if (x >= 0)
        plain = swiglu = x;
    }
    return plain | (swiglu << 8);
  }();
  return gated ? plain_swiglu >> 8 : plain_swiglu & 0xff;
}

cudaError_t launch_quantize(const KParams &p, int dir, int dtype,
                            cudaStream_t s) {
  if (dir == kRow && dtype != FUSION_RT_F32 && !p.amax_bits && quant_v2_enabled() &&
      row_stream_ok(p, false)) {
    const int v = row_stream_variant(false);
    if (v > 0)
      return dtype == FUSION_RT_BF16 ? launch_stream_typed<false, BF16T>(p, v, s)
                                     : launch_stream_typed<false, F16T>(p, v, s);
  }
  if (dtype != FUSION_RT_F32 && !p.amax_bits && quant_v2_enabled())
    return dtype == FUSION_RT_BF16 ? launch_v2_typed<BF16T>(p, dir, s)
                                   : launch_v2_typed<F16T>(p, dir, s);
  return launch_typed<SrcPlain>(p, dir, dtype, s);
}

} // namespace cuda
} // namespace fusion_rt
