//===- group_stream.cuh - the 128-value group stream of 16-bit rows -*- CUDA -*-===//
//
// The work layout shared by the rowwise stream kernels of fp8_block.cu (FP8
// block 1x128 and FP8 per tensor) and fp4_stream.cu (NVFP4, MXFP4): the
// value matrix [M, N] (N % 128 == 0) is a sequence of G = M * N / 128
// groups of 128 values in row-major order. A warp takes 2U consecutive
// groups a step: lanes 0-15 the even ones, lanes 16-31 the odd ones, each
// lane 8 values (one 16-byte load per 16-bit input). Consecutive warps take
// consecutive steps. On a persistent grid each warp loads its next step
// before it computes the current one, so a step's bytes are always in
// flight; on a grid covering the tensor each warp takes one step (the shape
// of a bandwidth-bound cast that reaches the copy's bandwidth on the H100,
// docs/benchmarks/formats.md). The group position (row, group in row)
// advances by fixed increments: no division in the loop.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_CUDA_GROUP_STREAM_CUH
#define FUSION_RT_CUDA_GROUP_STREAM_CUH

#include "cuda/launch.cuh"
#include "cuda/ptx.cuh"

#include "common/layout.h"
#include "common/tuning.h"
#include "src/backend.h"

namespace fusion_rt {
namespace cuda {
namespace gstream {

/// The groups of one request and the position increments of the stream:
/// by 2 (the next group of a lane half) and by a whole grid step, each as
/// (rows, groups in row < gpr). Filled by launch().
struct Geometry {
  uint32_t groups, gpr; ///< 128-value groups in all, per row
  uint32_t d2_row, d2_gc, ds, ds_row, ds_gc;
  /// Nonzero: the steps are taken from the last one down. The second pass
  /// of a two-pass stream (the tensor amax, then the codes) sets it (the
  /// tuning knob l2_reverse): it reads first what the first pass read last,
  /// which is still in L2 (up to the L2's size of the input).
  uint32_t reverse;
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
/// The next group of this lane half (two groups on).
__device__ __forceinline__ GPos next2(const Geometry &geo, GPos p) {
  return advance(p, 2, geo.d2_row, geo.d2_gc, geo.gpr);
}
/// The same lane half's group one grid step on (one grid step back when
/// the stream runs in reverse; past the first group the position wraps and
/// is not read).
__device__ __forceinline__ GPos next_step(const Geometry &geo, GPos p) {
  if (!geo.reverse)
    return advance(p, geo.ds, geo.ds_row, geo.ds_gc, geo.gpr);
  p.g -= geo.ds;
  p.row -= geo.ds_row;
  if (p.gc < geo.ds_gc) {
    p.gc += geo.gpr - geo.ds_gc;
    --p.row;
  } else {
    p.gc -= geo.ds_gc;
  }
  return p;
}

/// The first group of this lane half's step `s`.
__device__ __forceinline__ GPos first_pos(const Geometry &geo, int U, uint32_t s) {
  const uint32_t g = s * 2 * uint32_t(U) + ((threadIdx.x & 31) >> 4);
  const uint32_t row = g / geo.gpr;
  return {g, row, g - row * geo.gpr};
}

/// The U 16-byte vectors of one 16-bit input (row stride `rs` elements) for
/// the lane half whose first group is at `pos` (its groups: pos, pos + 2,
/// ...; zeros past the end). `l`: the lane in its half.
template <int U>
__device__ __forceinline__ void load(const Geometry &geo, const char *x,
                                     int64_t rs, GPos pos, int l,
                                     uint4 (&w)[U]) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    w[u] = pos.g < geo.groups
               ? ldg_stream16(x + (int64_t(pos.row) * rs +
                                   int64_t(pos.gc) * 128 + l * 8) * 2)
               : make_uint4(0, 0, 0, 0);
    pos = next2(geo, pos);
  }
}

/// The stream of one warp (file comment): for each of its steps, the U
/// vectors of x (and of `up` with TWO) of its lane half, loaded one step
/// ahead, are handed to step(pos, l, x_vecs, up_vecs), pos being the lane
/// half's first group of the step and l its lane in the half.
template <int U, bool TWO, typename Step>
__device__ __forceinline__ void run(const Geometry &geo, const char *x,
                                    int64_t x_rs, const char *up, int64_t up_rs,
                                    Step &&step) {
  const int l = threadIdx.x & 15;
  const uint32_t nsteps = (geo.groups + 2 * U - 1) / (2 * U);
  const uint32_t stride = (gridDim.x * blockDim.x) >> 5;
  uint32_t s = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  GPos pos = first_pos(geo, U, geo.reverse && s < nsteps ? nsteps - 1 - s : s);
  auto load_step = [&](GPos at, uint4(&a)[U], uint4(&b)[U]) {
    load<U>(geo, x, x_rs, at, l, a);
    if constexpr (TWO)
      load<U>(geo, up, up_rs, at, l, b);
  };
  uint4 g[U], u2[U];
  if (s < nsteps)
    load_step(pos, g, u2);
  for (; s < nsteps; s += stride) {
    const GPos next = next_step(geo, pos);
    uint4 ng[U], nu[U];
    if (s + stride < nsteps) {
      load_step(next, ng, nu);
    } else {
#pragma unroll
      for (int u = 0; u < U; ++u)
        ng[u] = nu[u] = make_uint4(0, 0, 0, 0);
    }
    step(pos, l, g, u2);
#pragma unroll
    for (int u = 0; u < U; ++u)
      g[u] = ng[u], u2[u] = nu[u];
    pos = next;
  }
}

/// The grid of a stream launch: persistent (at most SMs x resident blocks,
/// each warp looping over its steps) or covering the tensor (one step a
/// warp).
enum class Grid { kPersistent, kCover };

/// The grid of a launch whose plan asks for `plan` (the tuning knob
/// stream_grid forces one where set).
inline Grid grid_of(Grid plan) {
  const int64_t k = tuning().stream_grid;
  return k == 1 ? Grid::kPersistent : k == 2 ? Grid::kCover : plan;
}

/// Launches `kernel(p)` (128 threads a block) on a grid of shape `shape`:
/// persistent, at most SMs x resident blocks (read off the device once into
/// `per_sm`), or one block for every 4 warp steps; with the increments of
/// U group pairs a warp step written into p.geo (p.geo.groups, p.geo.gpr
/// and p.geo.reverse set by the caller). No groups: success.
template <int U, typename Kernel, typename Params>
cudaError_t launch(Kernel kernel, Params p, int &per_sm, Grid shape,
                   cudaStream_t st) {
  Geometry &geo = p.geo;
  const int64_t steps = ceil_div(int64_t(geo.groups), 2 * U);
  const int64_t want = ceil_div(steps, kThreads / 32);
  int64_t cap = want;
  if (shape == Grid::kPersistent) {
    if (per_sm == 0) {
      int n = 0;
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, kThreads,
                                                        0) != cudaSuccess ||
          n < 1)
        n = 1;
      per_sm = n;
    }
    cap = int64_t(device_sm_count()) * per_sm;
  }
  const int grid = int(want < cap ? want : cap);
  if (grid <= 0)
    return cudaSuccess;
  geo.d2_row = 2 / geo.gpr;
  geo.d2_gc = 2 % geo.gpr;
  geo.ds = uint32_t(grid) * (kThreads / 32) * 2 * U;
  geo.ds_row = geo.ds / geo.gpr;
  geo.ds_gc = geo.ds % geo.gpr;
  kernel<<<grid, kThreads, 0, st>>>(p);
  return cudaGetLastError();
}

/// The max of `key` over the warp (every lane gets it).
__device__ __forceinline__ uint32_t warp_max_key(uint32_t key) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    key = max(key, __shfl_xor_sync(0xffffffffu, key, o));
  return key;
}

/// Raises the tensor amax word `*amax` to `key` (f32 bits of |x|, NaN-free):
/// no atomic for 0 or where the word already holds as much (atomics on one
/// word are serialized in L2; a stale read only costs an atomic, the word
/// never decreases).
__device__ __forceinline__ void raise_amax(uint32_t *amax, uint32_t key) {
  if (key != 0 && key > *reinterpret_cast<volatile uint32_t *>(amax))
    atomicMax(amax, key);
}

/// The warp's max of the amax keys `key` into `*amax`: at most one
/// atomicMax a warp (raise_amax).
__device__ __forceinline__ void warp_amax(uint32_t *amax, uint32_t key) {
  key = warp_max_key(key);
  if ((threadIdx.x & 31) == 0)
    raise_amax(amax, key);
}

/// The block's max of the amax keys `key` into `*amax`, as warp_amax but one
/// atomicMax a block at most (a grid covering the tensor has many warps).
/// Every thread of the block calls it.
__device__ __forceinline__ void block_amax(uint32_t *amax, uint32_t key) {
  __shared__ uint32_t part[kThreads / 32];
  key = warp_max_key(key);
  if ((threadIdx.x & 31) == 0)
    part[threadIdx.x >> 5] = key;
  __syncthreads();
  if (threadIdx.x == 0) {
#pragma unroll
    for (int w = 1; w < kThreads / 32; ++w)
      key = max(key, part[w]);
    raise_amax(amax, key);
  }
}

inline bool aligned(const void *ptr, uintptr_t a) {
  return (reinterpret_cast<uintptr_t>(ptr) & (a - 1)) == 0;
}

/// A 16-bit input view whose rows are 16-byte aligned runs of elements (what
/// load() reads).
inline bool vec16_rows(const Mat &m) {
  return (m.dtype == FUSION_RT_BF16 || m.dtype == FUSION_RT_F16) && m.cs == 1 &&
         aligned(m.data, 16) && (m.rs * 2) % 16 == 0;
}

/// The tensor amax word of a two-pass stream (amax, then codes), zeroed on
/// `st`: the caller's amax output `given`, else a stream-ordered scratch
/// word returned in `scratch` (cudaFreeAsync it after the passes).
inline cudaError_t amax_word(float *given, cudaStream_t st, uint32_t *&word,
                             void *&scratch) {
  word = reinterpret_cast<uint32_t *>(given);
  scratch = nullptr;
  if (!word) {
    if (cudaError_t e = cudaMallocAsync(&scratch, sizeof(uint32_t), st))
      return e;
    word = reinterpret_cast<uint32_t *>(scratch);
  }
  return cudaMemsetAsync(word, 0, sizeof(uint32_t), st);
}

} // namespace gstream
} // namespace cuda
} // namespace fusion_rt

#endif // FUSION_RT_CUDA_GROUP_STREAM_CUH
