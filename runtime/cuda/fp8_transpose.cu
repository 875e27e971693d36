//===- fp8_transpose.cu - FP8 per tensor: cast + transpose in registers ----===//
//
// FP8 per tensor (TransformerEngine's current and delayed scaling) with the
// transposed colwise copy [N, M], alone or beside the rowwise codes [M, N]
// (TE's cast + transpose), from a 16-bit input whose rows are 16-byte
// aligned runs of a multiple of 8 values: the copies an FP8 GEMM's backward
// pass reads. Every other FP8 per-tensor request runs the stream kernels of
// fp8_block.cu (rowwise) or formats.cu's fp8_tensor_kernel (activations,
// f32 input, the SAME colwise layout, dbias); all give the same bytes.
//
// Layout of the work: a warp takes a 64 x 32 tile of the input; lane
// (g = lane / 4, q = lane % 4) holds rows 8g .. 8g + 7, columns 8q .. 8q + 7
// of it (eight 16-byte loads, all in flight before any is used; each load
// instruction of the warp reads 64 contiguous bytes of 8 rows, whole
// sectors). The lane's 8 x 8 codes are transposed in registers by byte
// permutes (32 prmt), so each column's 8 codes are one 8-byte store into
// row c of [N, M]; the 8 lanes of one q write 64 contiguous bytes of it.
// No shared memory, no barrier. The rowwise codes (cast + transpose) are
// one 8-byte store per row.
//
// Passes, each one kernel on the caller's stream: current scaling first runs
// this kernel in amax mode (NaN-ignoring max of |x|, one atomicMax a warp:
// every code depends on the whole tensor's amax, so it is a pass of its own,
// the least the semantics allow without a grid-wide barrier); the cast pass
// computes the scale on the device from it (block 0 writes scale_inv).
// Delayed scaling runs the cast once, with the amax when it is asked for
// (TE's amax history).
//
// Numerics (bit-exact with the CPU backend and fp8_tensor_kernel): codes
// cvt.rn.satfinite(x * scale) two at a time (= common/convert.h f32_to_e4m3
// / f32_to_e5m2 of the product), the scale from common/quantize_block.h
// tensor_globals.
//
//===----------------------------------------------------------------------===//
#include "common/fp8_plan.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_status.h"
#include "cuda/fp8_transpose.h"
#include "cuda/group_stream.cuh"
#include "cuda/launch.cuh"
#include "cuda/ptx.cuh"
#include "cuda/row_stream.cuh"

#include "common/layout.h"
#include "common/quantize_block.h"
#include "src/backend.h"

namespace fusion_rt {
namespace cuda {
namespace {

/// What the kernels read, by value. Strides in elements (bytes for codes).
struct XParams {
  const char *x; ///< 16-bit input [M, N], row stride x_rs
  int64_t x_rs;
  uint8_t *rd, *cd; ///< rowwise codes [M, N] (or NULL), transposed [N, M]
  int64_t rd_rs, cd_rs;
  int64_t M, N;
  uint32_t tiles_x, tiles; ///< 64 x 32 warp tiles: per tile row, in all
  fusion_rt_quant_scheme s;
  uint32_t *amax; ///< tensor amax bits (NaN ignored), or NULL
  const float *scale_in;
  float *scale_inv;
  bool current; ///< current scaling: the cast reads *amax
  /// Tiles taken from the last one down (the cast after the amax pass,
  /// tuning knob l2_reverse: the last tiles the amax pass read are in L2).
  bool reverse;
};

constexpr int kThreads = 256;
constexpr int kTileRows = 64, kTileCols = 32;

/// Columns [c, c + 8) of rows r0 .. r0 + 7 (zeros past M) of the lane.
template <typename T>
__device__ __forceinline__ void load_tile(const XParams &p, int64_t r0,
                                          int64_t c, uint4 (&w)[8]) {
  const char *base = p.x + (r0 * p.x_rs + c) * 2;
  const bool in = c < p.N;
#pragma unroll
  for (int i = 0; i < 8; ++i)
    w[i] = in && r0 + i < p.M ? ldg_stream16(base + int64_t(i) * p.x_rs * 2)
                              : make_uint4(0, 0, 0, 0);
}

/// The lane's NaN-ignoring amax key (f32 bits of max |x|).
template <typename T>
__device__ __forceinline__ uint32_t tile_key(const uint4 (&w)[8]) {
  uint32_t k = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i)
    k = max(k, stream::vec_key<T, false>(w[i]));
  return stream::key_f32_bits<T>(k);
}

/// [a0 b0 c0 d0] .. [a3 b3 c3 d3] from four words a .. d (byte 0 first):
/// the 4 x 4 byte transpose.
__device__ __forceinline__ void transpose4(uint32_t a, uint32_t b, uint32_t c,
                                           uint32_t d, uint32_t (&o)[4]) {
  const uint32_t t0 = __byte_perm(a, b, 0x5140), t1 = __byte_perm(c, d, 0x5140);
  const uint32_t t2 = __byte_perm(a, b, 0x7362), t3 = __byte_perm(c, d, 0x7362);
  o[0] = __byte_perm(t0, t1, 0x5410);
  o[1] = __byte_perm(t0, t1, 0x7632);
  o[2] = __byte_perm(t2, t3, 0x5410);
  o[3] = __byte_perm(t2, t3, 0x7632);
}

/// Stores the 8 bytes `v` at dst (n of them valid, in order): one 8-byte
/// store when whole and aligned, else byte by byte.
__device__ __forceinline__ void store8(uint8_t *dst, int n, uint2 v) {
  if (n >= 8 && (reinterpret_cast<uintptr_t>(dst) & 7) == 0) {
    stg_cs8(dst, v);
    return;
  }
#pragma unroll
  for (int b = 0; b < 8; ++b)
    if (b < n)
      dst[b] = uint8_t((b < 4 ? v.x >> (8 * b) : v.y >> (8 * (b - 4))) & 0xffu);
}

/// The warp's tile (one a warp): the lane's first row and column and its
/// 8 x 8 values; false past the last tile (warp-uniform).
template <typename T>
__device__ __forceinline__ bool load_warp_tile(const XParams &p, int64_t &r0,
                                               int64_t &c, uint4 (&w)[8]) {
  uint32_t t = blockIdx.x * (kThreads / 32) + (threadIdx.x >> 5);
  if (t >= p.tiles)
    return false;
  if (p.reverse)
    t = p.tiles - 1 - t;
  const uint32_t tr = t / p.tiles_x, tc = t - tr * p.tiles_x;
  const int lane = threadIdx.x & 31;
  r0 = int64_t(tr) * kTileRows + 8 * (lane >> 2);
  c = int64_t(tc) * kTileCols + 8 * (lane & 3);
  load_tile<T>(p, r0, c, w);
  return true;
}

/// Amax pass of current scaling: one tile a warp.
template <typename T>
__global__ void __launch_bounds__(kThreads) fp8_transpose_amax_kernel(const XParams p) {
  int64_t r0, c;
  uint4 w[8];
  if (!load_warp_tile<T>(p, r0, c, w))
    return;
  gstream::warp_amax(p.amax, tile_key<T>(w));
}

/// The cast: codes of one tile a warp, transposed (and rowwise with ROW).
template <typename T, bool E4M3, bool ROW>
__global__ void __launch_bounds__(kThreads) fp8_transpose_kernel(const XParams p) {
  const TensorGlobals g = tensor_globals(
      p.s, p.current ? __uint_as_float(*p.amax) : 0.f, p.scale_in);
  if (p.scale_inv && blockIdx.x == 0 && threadIdx.x == 0)
    *p.scale_inv = tensor_scale_inv(p.s, g);
  int64_t r0, c;
  uint4 w[8];
  if (!load_warp_tile<T>(p, r0, c, w))
    return;
  if (!p.current && p.amax) // delayed scaling, the amax asked for
    gstream::warp_amax(p.amax, tile_key<T>(w));
  uint2 code[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const float v[8] = {T::lo(w[i].x), T::hi(w[i].x), T::lo(w[i].y), T::hi(w[i].y),
                        T::lo(w[i].z), T::hi(w[i].z), T::lo(w[i].w), T::hi(w[i].w)};
    code[i] = stream::codes8<E4M3>(v, g.fp8_scale);
  }
  if (c >= p.N)
    return;
  const int rows = int(min(int64_t(8), p.M - r0));
  if (rows <= 0)
    return;
  if constexpr (ROW) {
#pragma unroll
    for (int i = 0; i < 8; ++i)
      if (i < rows)
        store8(p.rd + (r0 + i) * p.rd_rs + c, 8, code[i]);
  }
  // Column c + k of the lane: bytes k of code[0..7] (x: columns 0-3, y: 4-7).
  uint32_t lo[4], hi[4];
  transpose4(code[0].x, code[1].x, code[2].x, code[3].x, lo);
  transpose4(code[4].x, code[5].x, code[6].x, code[7].x, hi);
  uint8_t *dst = p.cd + c * p.cd_rs + r0;
#pragma unroll
  for (int k = 0; k < 4; ++k)
    store8(dst + k * p.cd_rs, rows, make_uint2(lo[k], hi[k]));
  transpose4(code[0].y, code[1].y, code[2].y, code[3].y, lo);
  transpose4(code[4].y, code[5].y, code[6].y, code[7].y, hi);
#pragma unroll
  for (int k = 0; k < 4; ++k)
    store8(dst + (k + 4) * p.cd_rs, rows, make_uint2(lo[k], hi[k]));
}

template <typename T, bool E4M3>
void launch_cast(const XParams &p, bool row, int grid, cudaStream_t st) {
  if (row)
    fp8_transpose_kernel<T, E4M3, true><<<grid, kThreads, 0, st>>>(p);
  else
    fp8_transpose_kernel<T, E4M3, false><<<grid, kThreads, 0, st>>>(p);
}

template <typename T>
cudaError_t run(XParams p, bool row, cudaStream_t st) {
  const int grid = int(ceil_div(int64_t(p.tiles), kThreads / 32));
  if (p.current) {
    fp8_transpose_amax_kernel<T><<<grid, kThreads, 0, st>>>(p);
    if (cudaError_t e = cudaGetLastError())
      return e;
    p.reverse = tuning().l2_reverse != 0;
  }
  if (p.s.format == kFP8E4M3)
    launch_cast<T, true>(p, row, grid, st);
  else
    launch_cast<T, false>(p, row, grid, st);
  return cudaGetLastError();
}

fp8_plan::Request plan_request(const Request &q) {
  fp8_plan::Request r;
  r.format = q.scheme.format;
  r.op = q.op == Op::Quantize ? 0 : -1;
  r.rowwise = q.row_wise;
  r.colwise = q.col_wise;
  r.col_transposed = q.col_transposed;
  r.dbias = q.dbias != nullptr;
  r.rows = q.rows;
  r.cols = q.cols;
  r.input16 = q.x.dtype == FUSION_RT_BF16 || q.x.dtype == FUSION_RT_F16;
  r.views_ok = gstream::vec16_rows(q.x) && (!q.row_wise || q.row_data.cs == 1) &&
               q.col_data.cs == 1;
  return r;
}

} // namespace

bool fp8_transpose_applies(const Request &q) {
  return fp8_plan::transpose_applies(plan_request(q));
}

fusion_rt_status fp8_transpose_execute(const Request &q, cudaStream_t st) {
  XParams p{};
  p.x = q.x.data;
  p.x_rs = q.x.rs;
  p.rd = q.row_wise ? reinterpret_cast<uint8_t *>(q.row_data.data) : nullptr;
  p.rd_rs = q.row_data.rs;
  p.cd = reinterpret_cast<uint8_t *>(q.col_data.data);
  p.cd_rs = q.col_data.rs;
  p.M = q.rows;
  p.N = q.cols;
  p.tiles_x = uint32_t(ceil_div(p.N, kTileCols));
  p.tiles = uint32_t(ceil_div(p.M, kTileRows)) * p.tiles_x;
  p.s = q.scheme;
  p.current = q.scheme.tensor_scaling == FUSION_RT_TENSOR_SCALING_CURRENT;
  p.scale_in = q.scale_in;
  p.scale_inv = q.scale_inv;
  void *scratch = nullptr;
  cudaError_t e = cudaSuccess;
  if (p.current || q.amax)
    e = gstream::amax_word(q.amax, st, p.amax, scratch);
  if (e == cudaSuccess) // tiles > 0: transpose_applies asks rows, cols > 0
    e = q.x.dtype == FUSION_RT_BF16 ? run<BF16T>(p, q.row_wise, st)
                                    : run<F16T>(p, q.row_wise, st);
  if (scratch)
    cudaFreeAsync(scratch, st);
  return e == cudaSuccess ? FUSION_RT_STATUS_SUCCESS
                          : cuda_fail(e, "the FP8 cast + transpose kernel launch");
}

} // namespace cuda
} // namespace fusion_rt
