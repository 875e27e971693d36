//===- fp8_block.cu - FP8 block scaling 1x128: the stream kernels ----------===//
//
// Rowwise FP8 with one f32 decode scale per 1x128 group of a row (the
// DeepSeek-V3 / vLLM per-token-group recipe, docs/numerics.md §4b) from a
// 16-bit input, plain or SwiGLU forward (vLLM's silu_and_mul + group
// quantization) -- the requests FP8 serving runs most. Every other FP8 block
// request (f32 input, other widths, other activations, backward, strided
// inputs) runs formats.cu's general kernels; both give the same bytes.
//
// Layout of the work: the value matrix [M, N] (N % 128 == 0) is a sequence
// of G = M * N / 128 groups in row-major order. A warp takes 2U consecutive
// groups a step: lanes 0-15 the even ones, lanes 16-31 the odd ones, each
// lane 8 values (one 16-byte load per input). The 16 lanes of a group join
// their amax with four xor shuffles. Consecutive warps take consecutive
// steps, and each warp loads its next step before it codes the current one
// (as row_stream.cuh does for MXFP8), so a step's bytes are always in
// flight. The group position (row, group in row) advances by fixed
// increments: no division in the loop.
//
// Numerics (bit-exact with the CPU backend, common/quantize_block.h):
//   amax   |x| of the 16-bit patterns (SwiGLU: of the values rounded to the
//          intermediate type), NaN kept under PROPAGATE, dropped under IGNORE
//          (row_stream.cuh vec_key);
//   scale  fp8_block_scale_of, the CPU's function;
//   codes  cvt.rn.satfinite(x / s), the quotient correctly rounded from
//          r = RN(1/s) and one correction per element (common/quotient.h);
//          scales outside [2^-80, 2^100] (subnormal, Inf, NaN) take the IEEE
//          division itself.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_backend.h"
#include "cuda/cuda_status.h"
#include "cuda/launch.cuh"
#include "cuda/row_stream.cuh"

#include "common/quantize_block.h"
#include "common/quotient.h"
#include "src/backend.h"

namespace fusion_rt {
namespace cuda {
namespace {

/// What the stream kernels read, by value. Strides in elements.
struct BParams {
  const char *x, *up; ///< 16-bit inputs (up: SwiGLU only)
  int64_t x_rs, up_rs;
  uint8_t *rd;
  int64_t rd_rs;
  float *sc;
  int64_t sc_rs, sc_cs;
  uint32_t groups, gpr; ///< 1x128 groups in all, per row
  /// Group-position increments: by 2 (the next group of a lane half) and
  /// by a whole grid step; each as (rows, groups in row < gpr).
  uint32_t d2_row, d2_gc, ds, ds_row, ds_gc;
  fusion_rt_quant_scheme s;
  int32_t inter;
  ActParams act;
};

/// A group's index and position (row, group in row).
struct GPos {
  uint32_t g, row, gc;
};
__device__ __forceinline__ GPos advance(GPos p, uint32_t d, uint32_t d_row,
                                        uint32_t d_gc, uint32_t gpr) {
  p.g += d;
  p.row += d_row;
  p.gc += d_gc;
  if (p.gc >= gpr) {
    p.gc -= gpr;
    ++p.row;
  }
  return p;
}

/// Max of k over the 16 lanes of a group.
__device__ __forceinline__ uint32_t group_max16(uint32_t k) {
#pragma unroll
  for (int o = 1; o < 16; o <<= 1)
    k = max(k, __shfl_xor_sync(0xffffffffu, k, o));
  return k;
}

/// The 8 codes of v under decode scale s.
template <bool E4M3>
__device__ __forceinline__ uint2 codes8(const float (&v)[8], float s) {
  float q[8];
  if (quotient_by_reciprocal_ok(s)) { // false for NaN
    const float r = __frcp_rn(s);
#pragma unroll
    for (int j = 0; j < 8; ++j)
      q[j] = quotient_by_reciprocal(v[j], s, r);
  } else {
#pragma unroll
    for (int j = 0; j < 8; ++j)
      q[j] = __fdiv_rn(v[j], s);
  }
  uint32_t c[4];
#pragma unroll
  for (int j = 0; j < 4; ++j)
    c[j] = E4M3 ? cvt_e4m3x2(q[2 * j], q[2 * j + 1])
                : cvt_e5m2x2(q[2 * j], q[2 * j + 1]);
  return make_uint2(c[0] | (c[1] << 16), c[2] | (c[3] << 16));
}

/// Codes and (lane 0 of the group) scale of a lane's 8 values of group
/// `pos`, whose amax key (f32 bits of |x|, NaN patterns above Inf) is `key`.
template <bool E4M3>
__device__ __forceinline__ void emit(const BParams &p, GPos pos, int l,
                                     const float (&v)[8], uint32_t key) {
  const bool nan = key > 0x7f800000u;
  const float s = fp8_block_scale_of(p.s, nan ? 0.f : __uint_as_float(key), nan);
  const uint2 code = codes8<E4M3>(v, s);
  if (pos.g < p.groups) {
    const int64_t col = int64_t(pos.gc) * 128 + l * 8;
    *reinterpret_cast<uint2 *>(p.rd + int64_t(pos.row) * p.rd_rs + col) = code;
    if (l == 0)
      p.sc[int64_t(pos.row) * p.sc_rs + int64_t(pos.gc) * p.sc_cs] = s;
  }
}

/// The U 16-byte vectors of one input for the lane half whose first group
/// is at `pos` (its groups: pos, pos + 2, ...; zeros past the end).
template <int U>
__device__ __forceinline__ void load(const BParams &p, const char *x,
                                     int64_t rs, GPos pos, int l,
                                     uint4 (&w)[U]) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    w[u] = pos.g < p.groups
               ? ldg_stream16(x + (int64_t(pos.row) * rs +
                                   int64_t(pos.gc) * 128 + l * 8) * 2)
               : make_uint4(0, 0, 0, 0);
    pos = advance(pos, 2, p.d2_row, p.d2_gc, p.gpr);
  }
}

/// Codes one step of the plain quantizer from its raw vectors.
template <typename T, bool E4M3, bool PROPAGATE, int U>
__device__ __forceinline__ void step_plain(const BParams &p, GPos pos, int l,
                                           const uint4 (&w)[U]) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const uint32_t key = group_max16(
        stream::key_f32_bits<T>(stream::vec_key<T, PROPAGATE>(w[u])));
    const float v[8] = {T::lo(w[u].x), T::hi(w[u].x), T::lo(w[u].y),
                        T::hi(w[u].y), T::lo(w[u].z), T::hi(w[u].z),
                        T::lo(w[u].w), T::hi(w[u].w)};
    emit<E4M3>(p, pos, l, v, key);
    pos = advance(pos, 2, p.d2_row, p.d2_gc, p.gpr);
  }
}

/// Codes one SwiGLU step: values of row_stream.cuh swiglu8 (the formula of
/// gated_forward(kActSwiGLU), rounded to the intermediate type).
template <typename T, bool E4M3, bool PROPAGATE, int INTER, int U>
__device__ __forceinline__ void step_swiglu(const BParams &p, GPos pos, int l,
                                            const uint4 (&g)[U],
                                            const uint4 (&up)[U]) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    float v[8];
    const uint32_t key = group_max16(
        stream::swiglu8<T, PROPAGATE, INTER>(p.act, g[u], up[u], v));
    emit<E4M3>(p, pos, l, v, key);
    pos = advance(pos, 2, p.d2_row, p.d2_gc, p.gpr);
  }
}

/// The first group of this lane half's first step, and the step count.
__device__ __forceinline__ GPos first_pos(const BParams &p, int U, uint32_t s) {
  const uint32_t g = s * 2 * uint32_t(U) + ((threadIdx.x & 31) >> 4);
  const uint32_t row = g / p.gpr;
  return {g, row, g - row * p.gpr};
}

template <typename T, bool E4M3, bool PROPAGATE, int U>
__global__ void __launch_bounds__(128)
    fp8_block_plain_kernel(const BParams p) {
  const int l = threadIdx.x & 15;
  const uint32_t nsteps = (p.groups + 2 * U - 1) / (2 * U);
  const uint32_t stride = (gridDim.x * blockDim.x) >> 5;
  uint32_t s = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  GPos pos = first_pos(p, U, s);
  uint4 w[U];
  if (s < nsteps)
    load<U>(p, p.x, p.x_rs, pos, l, w);
  for (; s < nsteps; s += stride) {
    const GPos next = advance(pos, p.ds, p.ds_row, p.ds_gc, p.gpr);
    uint4 nx[U];
    if (s + stride < nsteps)
      load<U>(p, p.x, p.x_rs, next, l, nx);
    else
#pragma unroll
      for (int u = 0; u < U; ++u)
        nx[u] = make_uint4(0, 0, 0, 0);
    step_plain<T, E4M3, PROPAGATE, U>(p, pos, l, w);
#pragma unroll
    for (int u = 0; u < U; ++u)
      w[u] = nx[u];
    pos = next;
  }
}

template <typename T, bool E4M3, bool PROPAGATE, int INTER, int U>
__device__ __forceinline__ void swiglu_body(const BParams &p) {
  const int l = threadIdx.x & 15;
  const uint32_t nsteps = (p.groups + 2 * U - 1) / (2 * U);
  const uint32_t stride = (gridDim.x * blockDim.x) >> 5;
  uint32_t s = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  GPos pos = first_pos(p, U, s);
  uint4 g[U], up[U];
  if (s < nsteps) {
    load<U>(p, p.x, p.x_rs, pos, l, g);
    load<U>(p, p.up, p.up_rs, pos, l, up);
  }
  for (; s < nsteps; s += stride) {
    const GPos next = advance(pos, p.ds, p.ds_row, p.ds_gc, p.gpr);
    uint4 ng[U], nu[U];
    if (s + stride < nsteps) {
      load<U>(p, p.x, p.x_rs, next, l, ng);
      load<U>(p, p.up, p.up_rs, next, l, nu);
    } else {
#pragma unroll
      for (int u = 0; u < U; ++u)
        ng[u] = nu[u] = make_uint4(0, 0, 0, 0);
    }
    step_swiglu<T, E4M3, PROPAGATE, INTER, U>(p, pos, l, g, up);
#pragma unroll
    for (int u = 0; u < U; ++u)
      g[u] = ng[u], up[u] = nu[u];
    pos = next;
  }
}

/// SwiGLU forward; the intermediate type is dispatched once (uniform).
template <typename T, bool E4M3, bool PROPAGATE, int U>
__global__ void __launch_bounds__(128)
    fp8_block_swiglu_kernel(const BParams p) {
  if (p.inter == kInterBF16)
    swiglu_body<T, E4M3, PROPAGATE, kInterBF16, U>(p);
  else if (p.inter == kInterF16)
    swiglu_body<T, E4M3, PROPAGATE, kInterF16, U>(p);
  else
    swiglu_body<T, E4M3, PROPAGATE, kInterF32, U>(p);
}

/// Groups a step for each kernel family (plain: 2 x 2 groups; SwiGLU: 1 x 2
/// groups, its two inputs doubling the bytes in flight).
constexpr int kPlainU = 2, kSwigluU = 1;

/// Launches `kernel` on a persistent grid (128 threads a block) of at most
/// SMs x resident blocks, with the step increments of U groups-pairs a step.
template <int U, typename Kernel>
cudaError_t launch(Kernel kernel, BParams p, int &per_sm, cudaStream_t st) {
  if (per_sm == 0) {
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, kThreads, 0) !=
            cudaSuccess ||
        n < 1)
      n = 1;
    per_sm = n;
  }
  const int64_t steps = ceil_div(int64_t(p.groups), 2 * U);
  const int64_t want = ceil_div(steps, kThreads / 32);
  const int64_t cap = int64_t(device_sm_count()) * per_sm;
  const int grid = int(want < cap ? want : cap);
  if (grid <= 0)
    return cudaSuccess;
  p.d2_row = 2 / p.gpr;
  p.d2_gc = 2 % p.gpr;
  p.ds = uint32_t(grid) * (kThreads / 32) * 2 * U;
  p.ds_row = p.ds / p.gpr;
  p.ds_gc = p.ds % p.gpr;
  kernel<<<grid, kThreads, 0, st>>>(p);
  return cudaGetLastError();
}

template <typename T, bool E4M3, bool PROPAGATE>
cudaError_t launch_typed(const BParams &p, bool swiglu, cudaStream_t st) {
  static int per_sm[2] = {0, 0};
  if (swiglu)
    return launch<kSwigluU>(fp8_block_swiglu_kernel<T, E4M3, PROPAGATE, kSwigluU>,
                            p, per_sm[1], st);
  return launch<kPlainU>(fp8_block_plain_kernel<T, E4M3, PROPAGATE, kPlainU>, p,
                         per_sm[0], st);
}

template <typename T>
cudaError_t launch_format(const BParams &p, bool swiglu, cudaStream_t st) {
  const bool e4 = p.s.format == kFP8BlockE4M3;
  const bool prop = p.s.nan_policy == FUSION_RT_NAN_PROPAGATE;
  if (e4)
    return prop ? launch_typed<T, true, true>(p, swiglu, st)
                : launch_typed<T, true, false>(p, swiglu, st);
  return prop ? launch_typed<T, false, true>(p, swiglu, st)
              : launch_typed<T, false, false>(p, swiglu, st);
}

bool aligned(const void *ptr, uintptr_t a) {
  return (reinterpret_cast<uintptr_t>(ptr) & (a - 1)) == 0;
}

/// A 16-bit input view whose rows are 16-byte aligned runs of elements.
bool vec16_rows(const Mat &m) {
  return (m.dtype == FUSION_RT_BF16 || m.dtype == FUSION_RT_F16) && m.cs == 1 &&
         aligned(m.data, 16) && (m.rs * 2) % 16 == 0;
}

} // namespace

bool fp8_block_stream_applies(const Request &q) {
  const int32_t f = q.scheme.format;
  if (f != kFP8BlockE4M3 && f != kFP8BlockE5M2)
    return false;
  const bool plain = q.op == Op::Quantize;
  const bool swiglu = q.op == Op::GatedActQuantize && !q.backward &&
                      q.act_kind == kActSwiGLU;
  if (!plain && !swiglu)
    return false;
  const int64_t groups = q.cols / 128 * q.rows;
  return q.scheme.block_cols == 128 && q.scheme.block_rows == 1 &&
         q.row_wise && !q.col_wise && !q.amax && !q.scale_inv && !q.dbias &&
         q.rows > 0 && q.cols > 0 && q.cols % 128 == 0 &&
         (q.seg_cols == 0 || q.seg_cols == q.cols) &&
         groups < (int64_t(1) << 30) && vec16_rows(q.x) &&
         (!swiglu || (vec16_rows(q.up) && q.up.dtype == q.x.dtype)) &&
         q.row_data.cs == 1 && aligned(q.row_data.data, 8) &&
         q.row_data.rs % 8 == 0;
}

fusion_rt_status fp8_block_stream_execute(const Request &q, cudaStream_t st) {
  BParams p{};
  const bool swiglu = q.op == Op::GatedActQuantize;
  p.x = q.x.data;
  p.x_rs = q.x.rs;
  p.up = swiglu ? q.up.data : nullptr;
  p.up_rs = swiglu ? q.up.rs : 0;
  p.rd = reinterpret_cast<uint8_t *>(q.row_data.data);
  p.rd_rs = q.row_data.rs;
  p.sc = reinterpret_cast<float *>(q.row_scales.data);
  p.sc_rs = q.row_scales.rs;
  p.sc_cs = q.row_scales.cs;
  p.gpr = uint32_t(q.cols / 128);
  p.groups = uint32_t(q.rows) * p.gpr;
  p.s = q.scheme;
  p.inter = q.inter;
  p.act = q.params;
  const cudaError_t e = q.x.dtype == FUSION_RT_BF16
                            ? launch_format<BF16T>(p, swiglu, st)
                            : launch_format<F16T>(p, swiglu, st);
  return e == cudaSuccess ? FUSION_RT_STATUS_SUCCESS
                          : cuda_fail(e, "the FP8 block stream kernel launch");
}

} // namespace cuda
} // namespace fusion_rt
