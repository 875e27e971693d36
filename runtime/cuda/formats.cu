//===- formats.cu - FP4, FP8 per-tensor, dequantize and activation kernels -===//
//
// The CUDA kernels of every request the MXFP8 tile engine (mx_kernel.cuh)
// does not take: MXFP4, NVFP4 (1x16 and 16x16 blocks, RNE and stochastic
// rounding, compact and swizzled scales), FP8 per tensor (current and
// delayed scaling), FP8 block scaling (1 x block_cols, f32 scales), all with the activation sources (forward, backward with
// dbias, gated forward and backward); fusion_rt_dequantize of every format;
// fusion_rt_activation_apply. Each scale byte and code comes from the
// functions the CPU backend uses (common/quantize_block.h), so the two agree
// bit for bit (activations with transcendental functions up to the CUDA
// math library's ulp differences, as for MXFP8).
//
// Passes over the input, in order, each one kernel on the caller's stream:
//   amax      NVFP4, FP8 current scaling, or a requested amax: the
//             NaN-ignoring tensor amax (atomicMax of fp32 bits). The scale of
//             every block depends on it, so it is a pass of its own: one
//             extra read of the input, the least the semantics allow without
//             a grid-wide barrier.
//   2D scales NVFP4 16x16: one thread per block, bytes into a scratch plane.
//   rowwise   FP4 1x16 / 1x32 blocks: one thread per block (16-byte loads of
//             a whole block where aligned), packed nibbles stored whole.
//   colwise   FP4 colwise: one thread per two adjacent columns of one block
//             height, so that every packed byte has one writer.
//   fp8       FP8 per tensor: 64x64 tiles, codes stored rowwise directly and
//             transposed through shared memory.
//   fp8 block FP8 block scaling: the lanes of a block reduce its amax by
//             shuffles and code it from registers (one read of the input).
//   dbias     per-32-row-band column sums in row order, then band order
//             (the CPU backend's order), through dbias_reduce.
// The tensor scalars (scale_inv, and the globals every block uses) are
// computed on the device from the amax, so nothing waits on the host.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_backend.h"
#include "cuda/cuda_status.h"
#include "cuda/launch.cuh"
#include "cuda/mx_kernel.cuh"

#include "common/formats_plan.h"
#include "common/layout.h"
#include "common/quantize_block.h"
#include "src/backend.h"

namespace fusion_rt {
namespace cuda {
namespace {

/// Everything the format kernels read, by value. Sizes and strides in
/// elements (packed FP4 views: in nibbles, column stride 1).
struct FParams {
  const char *x, *up, *grad;
  int64_t x_rs, x_cs, up_rs, up_cs, g_rs, g_cs;
  int op; ///< 0 quantize, 1 activation, 2 gated
  bool backward;
  int32_t kind, inter;
  ActParams act;
  fusion_rt_quant_scheme s;
  int64_t M, N; ///< value matrix
  int64_t K;    ///< gated: input columns of each half
  int64_t seg;  ///< rowwise segment width (blocks never straddle a segment)
  // Outputs.
  uint8_t *rd, *rsc, *cd, *csc;
  int64_t rd_rs, rd_cs, rsc_rs, rsc_cs, rsc_pc;
  int64_t cd_rs, cd_cs, csc_rs, csc_cs, csc_pc;
  bool rd_fp4, cd_fp4, col_t, swz;
  const uint32_t *amax; ///< tensor amax bits, or NULL (no amax pass)
  const float *scale_in;
  uint8_t *s2d; ///< NVFP4 2D scales [ceil(M/16), ceil(N/16)]
  int64_t nbc2d;
  float *ws; ///< dbias partial sums [ceil(M/32), N]
  // Activation output.
  char *ao;
  int32_t ao_dt;
  int64_t ao_rs, ao_cs;
};

__device__ __forceinline__ int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
__device__ __forceinline__ int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

/// A value source: the input element type E (BF16T / F16T / F32T) and the
/// request kind OP (0 quantize, 1 activation, 2 gated) as compile-time
/// parameters, so that a plain quantizer's kernels hold no activation code.
template <typename E, int OP> struct Src : E {
  static constexpr int kOp = OP;
};

/// q = a / b, r = a % b for a, b >= 0: 32-bit division when both fit (a
/// 64-bit division is a long emulated sequence on the GPU).
__device__ __forceinline__ void divmod(int64_t a, int64_t b, int64_t &q,
                                       int64_t &r) {
  if (((a | b) >> 32) == 0) {
    const uint32_t a32 = uint32_t(a), b32 = uint32_t(b);
    q = a32 / b32;
    r = a32 - uint32_t(q) * b32;
  } else {
    q = a / b;
    r = a - q * b;
  }
}

template <typename T>
__device__ __forceinline__ float ld(const char *b, int64_t rs, int64_t cs,
                                    int64_t r, int64_t c) {
  return T::at(b + (r * rs + c * cs) * T::kBytes);
}

/// The value of one element from its inputs: a = x (gated: gate), b = up,
/// g = grad; `second`: the dgate half of a gated backward. With `pre`, the
/// value before rounding to the intermediate type (dbias).
template <int OP>
__device__ __forceinline__ float compute(const FParams &p, float a, float b,
                                         float g, bool second,
                                         float *pre = nullptr) {
  if constexpr (OP == 0) {
    if (pre)
      *pre = a;
    return a;
  }
  float e;
  if constexpr (OP == 1) {
    e = p.backward ? act_backward(p.kind, a, g, p.act) : act_forward(p.kind, a, p.act);
  } else if (!p.backward) {
    e = gated_forward(p.kind, a, b, p.act);
  } else {
    float da, dg;
    gated_backward(p.kind, a, b, g, p.act, da, dg);
    e = second ? dg : da;
  }
  if (pre)
    *pre = e;
  return round_to_intermediate(e, p.inter);
}

/// Element (r, j) of the value matrix (rounded to the intermediate type);
/// with `pre`, the value before that rounding (dbias).
template <typename T>
__device__ float value(const FParams &p, int64_t r, int64_t j,
                       float *pre = nullptr) {
  constexpr int OP = T::kOp;
  const bool second = OP == 2 && p.backward && j >= p.K;
  const int64_t c = second ? j - p.K : j;
  const float a = ld<T>(p.x, p.x_rs, p.x_cs, r, c);
  const float b = OP == 2 ? ld<T>(p.up, p.up_rs, p.up_cs, r, c) : 0.f;
  const float g = OP != 0 && p.backward ? ld<T>(p.grad, p.g_rs, p.g_cs, r, c) : 0.f;
  return compute<OP>(p, a, b, g, second, pre);
}

/// Elements [c, c+n) (n <= 8) of row r of one input view: 16-byte loads
/// when the run is whole and aligned, else element by element; 0 past n.
template <typename T>
__device__ __forceinline__ void load8(const char *base, int64_t rs, int64_t cs,
                                      int64_t r, int64_t c, int n,
                                      float (&v)[8]) {
  const char *src = base + (r * rs + c * cs) * T::kBytes;
  if (n == 8 && cs == 1 && (reinterpret_cast<uintptr_t>(src) & 15) == 0) {
    const uint4 w = ldg_stream16(src);
    if constexpr (T::kBytes == 2) {
      v[0] = T::lo(w.x), v[1] = T::hi(w.x), v[2] = T::lo(w.y), v[3] = T::hi(w.y);
      v[4] = T::lo(w.z), v[5] = T::hi(w.z), v[6] = T::lo(w.w), v[7] = T::hi(w.w);
    } else {
      const uint4 u = ldg_stream16(src + 16);
      v[0] = T::lo(w.x), v[1] = T::lo(w.y), v[2] = T::lo(w.z), v[3] = T::lo(w.w);
      v[4] = T::lo(u.x), v[5] = T::lo(u.y), v[6] = T::lo(u.z), v[7] = T::lo(u.w);
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < 8; ++k)
    v[k] = k < n ? T::at(base + (r * rs + (c + k) * cs) * T::kBytes) : 0.f;
}

/// Values [j, j+n) (n <= 8, one segment) of row r of the value matrix.
template <typename T>
__device__ __forceinline__ void values8(const FParams &p, int64_t r, int64_t j,
                                        int n, float (&v)[8]) {
  constexpr int OP = T::kOp;
  if constexpr (OP == 0) { // the values are the input
    load8<T>(p.x, p.x_rs, p.x_cs, r, j, n, v);
    return;
  }
  if (OP == 2 && p.backward && j < p.K && j + n > p.K) {
    // A run across the [dact | dgate] boundary (odd K): element by element.
#pragma unroll
    for (int k = 0; k < 8; ++k)
      v[k] = k < n ? value<T>(p, r, j + k) : 0.f;
    return;
  }
  const bool second = OP == 2 && p.backward && j >= p.K;
  const int64_t c = second ? j - p.K : j;
  float a[8], b[8], g[8];
  load8<T>(p.x, p.x_rs, p.x_cs, r, c, n, a);
  if (OP == 2)
    load8<T>(p.up, p.up_rs, p.up_cs, r, c, n, b);
  if (p.backward)
    load8<T>(p.grad, p.g_rs, p.g_cs, r, c, n, g);
#pragma unroll
  for (int k = 0; k < 8; ++k)
    v[k] = k < n ? compute<OP>(p, a[k], OP == 2 ? b[k] : 0.f,
                               p.backward ? g[k] : 0.f, second)
                 : 0.f;
}

/// Chunks of 8 values of a row: segment sg, chunk cc -> first column and
/// length. Chunks never straddle a segment.
struct Chunks {
  int64_t seg, cps, per_row; ///< chunks per segment, per row
  __device__ void at(int64_t N, int64_t idx, int64_t &j, int &n) const {
    int64_t sg = 0, cc = idx;
    if (per_row != cps) // more than one segment (gated backward)
      divmod(idx, cps, sg, cc);
    j = sg * seg + cc * 8;
    const int64_t end = min(N, sg * seg + seg);
    n = int(imin(8, end - j));
  }
};
Chunks chunks_of(int64_t N, int64_t seg) {
  Chunks c;
  c.seg = seg;
  c.cps = ceil_div(seg, 8);
  c.per_row = ceil_div(N, seg) * c.cps;
  return c;
}

__device__ __forceinline__ TensorGlobals globals(const FParams &p) {
  const float amax = p.amax ? __uint_as_float(*p.amax) : 0.f;
  return tensor_globals(p.s, amax, p.scale_in);
}

/// Stores nibble `code` at nibble index `nib` of `base`; the high (pad)
/// nibble of the byte holding the last element of a row (`last`, even
/// index) is written as zero. The caller owns the whole byte.
__device__ __forceinline__ void store_nibble(uint8_t *base, int64_t nib,
                                             uint8_t code, bool last) {
  uint8_t &b = base[nib >> 1];
  if (nib & 1)
    b = uint8_t((b & 0x0f) | (code << 4));
  else
    b = last ? uint8_t(code & 0x0f) : uint8_t((b & 0xf0) | (code & 0x0f));
}

__device__ __forceinline__ void put_row_scale(const FParams &p, int64_t r,
                                              int64_t c, uint8_t v) {
  if (p.swz)
    p.rsc[swizzled_scale_offset(r, c, p.rsc_pc)] = v;
  else
    p.rsc[r * p.rsc_rs + c * p.rsc_cs] = v;
}

__device__ __forceinline__ void put_col_scale(const FParams &p, int64_t n,
                                              int64_t rb, uint8_t v) {
  if (p.swz)
    p.csc[swizzled_scale_offset(n, rb, p.csc_pc)] = v;
  else if (p.col_t)
    p.csc[n * p.csc_rs + rb * p.csc_cs] = v;
  else
    p.csc[rb * p.csc_rs + n * p.csc_cs] = v;
}

/// Grid-stride bounds.
__device__ __forceinline__ int64_t gtid() {
  return int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t gstride() {
  return int64_t(gridDim.x) * blockDim.x;
}

/// The FP4 code of x under factor `mul`: encode_element, with its RNE case
/// (no keyed bits needed) written out so that the hot loops inline it.
/// The NVFP4 torchao recipes (MXFP4 keeps recipe 0) have their own NaN codes.
__device__ __forceinline__ uint8_t fp4_code(const fusion_rt_quant_scheme &s,
                                            bool sr, float x, float mul,
                                            uint32_t stream, uint64_t index) {
  if (s.nvfp4_recipe != FUSION_RT_NVFP4_RECIPE_TE)
    return nvfp4_torchao_code(x, mul, s.nan_policy == FUSION_RT_NAN_IGNORE);
#if FUSION_RT_HAVE_E2M1_CVT
  return sr ? encode_element(s, x, mul, stream, index) : e2m1_cvt(x * mul);
#else
  return sr ? encode_element(s, x, mul, stream, index) : f32_to_e2m1_rne(x * mul);
#endif
}

//===--- amax ---------------------------------------------------------------===//

/// NaN-ignoring amax of the value matrix into *out (fp32 bits, zeroed by the
/// caller): every thread takes chunks of 8 values.
template <typename T>
__global__ void amax_kernel(FParams p, Chunks ch, uint32_t *out) {
  float m = 0.f;
  for (int64_t r = blockIdx.x; r < p.M; r += gridDim.x)
    for (int64_t idx = threadIdx.x; idx < ch.per_row; idx += blockDim.x) {
      int64_t j;
      int n;
      ch.at(p.N, idx, j, n);
      float v[8];
      values8<T>(p, r, j, n, v);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const float a = f32_abs(v[k]); // past n: 0
        m = a > m ? a : m;             // NaN compares false: dropped
      }
    }
  for (int o = 16; o; o >>= 1) {
    const float t = __shfl_xor_sync(0xffffffffu, m, o);
    m = t > m ? t : m;
  }
  if ((threadIdx.x & 31) == 0 && m > 0.f)
    atomicMax(out, __float_as_uint(m));
}

/// The tensor scalars after the amax pass: scale_inv (NVFP4, FP8 per tensor).
__global__ void scalars_kernel(FParams p, float *scale_inv) {
  if (scale_inv)
    *scale_inv = tensor_scale_inv(p.s, globals(p));
}

//===--- NVFP4 16x16 scales --------------------------------------------------===//

template <typename T> __global__ void scales_2d_kernel(FParams p) {
  const TensorGlobals g = globals(p);
  const int64_t nbr = ceil_div(p.M, 16), total = nbr * p.nbc2d;
  for (int64_t t = gtid(); t < total; t += gstride()) {
    const int64_t br = t / p.nbc2d, bc = t % p.nbc2d;
    BlockAmax a;
    for (int64_t i = br * 16; i < min(p.M, br * 16 + 16); ++i)
      for (int64_t j = bc * 16; j < min(p.N, bc * 16 + 16); ++j)
        a.add(value<T>(p, i, j));
    float mul;
    p.s2d[t] = block_scale(p.s, g, a, mul);
  }
}

//===--- FP4 rowwise ----------------------------------------------------------===//

/// Rowwise FP4 blocks, 8 values a thread: the BS/8 adjacent lanes of one
/// block reduce its amax with xor shuffles; each lane stores its 8 codes
/// (4 bytes) and the block's first lane its scale. Block starts must be even
/// nibbles (see fp4_row_serial_kernel).
template <typename T, int BS> __global__ void fp4_row_kernel(FParams p) {
  constexpr int CPB = BS / 8;
  const TensorGlobals g = globals(p);
  const bool sr = p.s.elem_rounding == FUSION_RT_ROUND_STOCHASTIC;
  const bool two_d = p.s.format == kNVFP4 && p.s.nvfp4_block == FUSION_RT_NVFP4_2D;
  const int64_t bps = ceil_div(p.seg, BS), nseg = ceil_div(p.N, p.seg);
  const int64_t nrb = nseg * bps, total = p.M * nrb * CPB;
  const int lane = threadIdx.x & 31;
  // Warp-uniform trip count: the shuffles need every lane.
  for (int64_t base = gtid() - lane; base < total; base += gstride()) {
    const int64_t t = base + lane;
    const bool active = t < total;
    const int64_t blk = active ? t / CPB : 0; // CPB: a power of two
    const int k = int(t % CPB);
    int64_t r, c, sg = 0, b;
    divmod(blk, nrb, r, c);
    b = c;
    if (nseg > 1)
      divmod(c, bps, sg, b);
    const int64_t seg_end = min(p.N, sg * p.seg + p.seg);
    const int64_t j0 = sg * p.seg + b * BS, j = j0 + 8 * k;
    const int n = active ? int(imax(0, imin(8, min(seg_end, j0 + BS) - j)))
                         : 0;
    float v[8];
    values8<T>(p, r, j, n, v);
    BlockAmax a;
#pragma unroll
    for (int q = 0; q < 8; ++q)
      if (q < n)
        a.add(v[q]);
#pragma unroll
    for (int o = 1; o < CPB; o <<= 1) {
      const float om = __shfl_xor_sync(0xffffffffu, a.amax, o);
      const bool on = __shfl_xor_sync(0xffffffffu, int(a.nan), o) != 0;
      a.amax = om > a.amax ? om : a.amax;
      a.nan = a.nan || on;
    }
    if (!active)
      continue;
    float mul;
    uint8_t sb;
    if (two_d) {
      sb = p.s2d[(r / 16) * p.nbc2d + j0 / 16];
      mul = nvfp4_encode_factor(sb, g.nv_s_dec);
    } else {
      sb = block_scale(p.s, g, a, mul);
    }
    if (k == 0)
      put_row_scale(p, r, c, sb);
    if (n <= 0)
      continue;
    const int64_t nib = r * p.rd_rs + j;
    uint8_t *dst = p.rd + (nib >> 1);
    if (n == 8 && !(nib & 1) && (reinterpret_cast<uintptr_t>(dst) & 3) == 0) {
      uint32_t w = 0;
#pragma unroll
      for (int q = 0; q < 8; ++q)
        w |= uint32_t(fp4_code(p.s, sr, v[q], mul, 0, uint64_t(r * p.N + j + q)))
             << (4 * q);
      *reinterpret_cast<uint32_t *>(dst) = w;
    } else {
#pragma unroll
      for (int q = 0; q < 8; ++q)
        if (q < n)
          store_nibble(p.rd, nib + q,
                       fp4_code(p.s, sr, v[q], mul, 0, uint64_t(r * p.N + j + q)),
                       j + q + 1 == p.N);
    }
  }
}

/// Rowwise FP4 one row a thread: the gated backward with an odd K, whose
/// second segment starts on an odd nibble (two blocks share a byte).
template <typename T, int BS> __global__ void fp4_row_serial_kernel(FParams p) {
  const TensorGlobals g = globals(p);
  const bool two_d = p.s.format == kNVFP4 && p.s.nvfp4_block == FUSION_RT_NVFP4_2D;
  const int64_t bps = ceil_div(p.seg, BS), nrb = ceil_div(p.N, p.seg) * bps;
  for (int64_t r = gtid(); r < p.M; r += gstride())
    for (int64_t c = 0; c < nrb; ++c) {
      const int64_t sg = c / bps, b = c % bps;
      const int64_t seg_end = min(p.N, sg * p.seg + p.seg);
      const int64_t j0 = sg * p.seg + b * BS;
      const int n = int(imin(BS, seg_end - j0));
      float v[BS];
#pragma unroll
      for (int k = 0; k < BS; ++k)
        v[k] = k < n ? value<T>(p, r, j0 + k) : 0.f;
      float mul;
      uint8_t sb;
      if (two_d) {
        sb = p.s2d[(r / 16) * p.nbc2d + j0 / 16];
        mul = nvfp4_encode_factor(sb, g.nv_s_dec);
      } else {
        BlockAmax a;
#pragma unroll
        for (int k = 0; k < BS; ++k)
          if (k < n)
            a.add(v[k]);
        sb = block_scale(p.s, g, a, mul);
      }
      put_row_scale(p, r, c, sb);
#pragma unroll
      for (int k = 0; k < BS; ++k)
        if (k < n)
          store_nibble(p.rd, r * p.rd_rs + j0 + k,
                       encode_element(p.s, v[k], mul, 0, uint64_t(r * p.N + j0 + k)),
                       j0 + k + 1 == p.N);
    }
}

//===--- FP4 colwise ----------------------------------------------------------===//

/// One thread per (two adjacent columns, one block height): the SAME layout
/// gets whole bytes (both nibbles of a row's byte), the TRANSPOSED layout
/// whole runs of BS/2 bytes per column (one vector store where aligned).
template <typename T, int BS> __global__ void fp4_col_kernel(FParams p) {
  const TensorGlobals g = globals(p);
  const bool sr = p.s.elem_rounding == FUSION_RT_ROUND_STOCHASTIC;
  const bool two_d = p.s.format == kNVFP4 && p.s.nvfp4_block == FUSION_RT_NVFP4_2D;
  const int64_t ncp = ceil_div(p.N, 2), nrb = ceil_div(p.M, BS);
  const int64_t total = ncp * nrb;
  for (int64_t t = gtid(); t < total; t += gstride()) {
    int64_t rb, cp;
    divmod(t, ncp, rb, cp);
    const int64_t r0 = rb * BS;
    const int h = int(imin(BS, p.M - r0));
    const int nc = int(imin(2, p.N - 2 * cp));
    uint8_t code[2][BS];
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int64_t j = 2 * cp + q;
      float v[BS];
#pragma unroll
      for (int k = 0; k < BS; ++k)
        v[k] = (k < h && q < nc) ? value<T>(p, r0 + k, j) : 0.f;
      float mul;
      uint8_t sb;
      if (two_d) {
        sb = p.s2d[(r0 / 16) * p.nbc2d + j / 16];
        mul = nvfp4_encode_factor(sb, g.nv_s_dec);
      } else {
        BlockAmax a;
#pragma unroll
        for (int k = 0; k < BS; ++k)
          if (k < h)
            a.add(v[k]);
        sb = block_scale(p.s, g, a, mul);
      }
      if (q < nc)
        put_col_scale(p, j, rb, sb);
#pragma unroll
      for (int k = 0; k < BS; ++k)
        code[q][k] = fp4_code(p.s, sr, v[k], mul, 1, uint64_t(j * p.M + r0 + k));
    }
    if (!p.col_t) {
      // Byte (r, cp) of the [M, N] copy: columns 2cp (low) and 2cp+1 (high,
      // the pad nibble 0 past the last column).
#pragma unroll
      for (int k = 0; k < BS; ++k)
        if (k < h)
          p.cd[(r0 + k) * (p.cd_rs / 2) + cp] =
              uint8_t((code[0][k] & 0xf) | (nc == 2 ? code[1][k] << 4 : 0));
      continue;
    }
    // Rows j of the [N, M] copy: nibbles r0 .. r0+h (r0 even), the pad
    // nibble 0 past the last row.
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      if (q >= nc)
        break;
      const int64_t j = 2 * cp + q;
      uint8_t *dst = p.cd + (j * p.cd_rs + r0) / 2;
      uint32_t w[BS / 8];
#pragma unroll
      for (int z = 0; z < BS / 8; ++z) {
        w[z] = 0;
#pragma unroll
        for (int k = 0; k < 8; ++k)
          if (8 * z + k < h)
            w[z] |= uint32_t(code[q][8 * z + k] & 0xf) << (4 * k);
      }
      if (h == BS && (reinterpret_cast<uintptr_t>(dst) & (BS / 2 - 1)) == 0) {
        if constexpr (BS == 32)
          *reinterpret_cast<uint4 *>(dst) = make_uint4(w[0], w[1], w[2], w[3]);
        else
          *reinterpret_cast<uint2 *>(dst) = make_uint2(w[0], w[1]);
      } else {
#pragma unroll
        for (int z = 0; z < BS / 2; ++z)
          if (2 * z < h)
            dst[z] = uint8_t(w[z / 4] >> (8 * (z % 4)));
      }
    }
  }
}

//===--- FP8 per tensor -------------------------------------------------------===//

constexpr int kTile = 64;
constexpr int kTilePitch = kTile + 8;

/// Stores n (<= 8) codes at dst: one 8-byte store when whole and aligned.
__device__ __forceinline__ void store_codes8(uint8_t *dst, int64_t cs, int n,
                                             const uint8_t (&q)[8]) {
  if (n == 8 && cs == 1 && (reinterpret_cast<uintptr_t>(dst) & 7) == 0) {
    uint2 w;
    w.x = q[0] | (q[1] << 8) | (q[2] << 16) | (uint32_t(q[3]) << 24);
    w.y = q[4] | (q[5] << 8) | (q[6] << 16) | (uint32_t(q[7]) << 24);
    *reinterpret_cast<uint2 *>(dst) = w;
    return;
  }
#pragma unroll
  for (int k = 0; k < 8; ++k)
    if (k < n)
      dst[k * cs] = q[k];
}

/// 64x64 tiles, 256 threads: thread (cc = t % 8, rr = t / 8) codes 8
/// columns of rows rr and rr + 32 (both rows loaded before any store);
/// rowwise / SAME codes go straight out, TRANSPOSED ones through a shared
/// tile: thread t then writes 16 contiguous codes of row t / 4 of [N, M].
template <typename T> __global__ void fp8_tensor_kernel(FParams p, bool rowwise,
                                                        bool colwise) {
  __shared__ __align__(16) uint8_t tile[kTile][kTilePitch];
  const float scale = globals(p).fp8_scale;
  const bool e4 = p.s.format == kFP8E4M3;
  const int64_t tx = ceil_div(p.N, kTile), total = ceil_div(p.M, kTile) * tx;
  const int cc = threadIdx.x % 8, rr = threadIdx.x / 8;
  const bool tcol = colwise && p.col_t;
  for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
    int64_t tr, tc;
    divmod(t, tx, tr, tc);
    const int64_t r0 = tr * kTile, c0 = tc * kTile;
    const int64_t j = c0 + 8 * cc;
    const int n = int(imax(0, imin(8, p.N - j)));
    float v[2][8];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t r = r0 + rr + 32 * h;
      values8<T>(p, r, j, r < p.M ? n : 0, v[h]);
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t r = r0 + rr + 32 * h;
      // cvt.rn.satfinite (= common/convert.h f32_to_e4m3 / f32_to_e5m2, as
      // encode_element computes them) of x * scale, two at a time.
      uint8_t q[8];
#pragma unroll
      for (int k = 0; k < 8; k += 2) {
        const float lo = v[h][k] * scale, hi = v[h][k + 1] * scale;
        const uint32_t w = e4 ? cvt_e4m3x2(lo, hi) : cvt_e5m2x2(lo, hi);
        q[k] = uint8_t(w), q[k + 1] = uint8_t(w >> 8);
      }
      if (r < p.M) {
        if (rowwise)
          store_codes8(p.rd + r * p.rd_rs + j * p.rd_cs, p.rd_cs, n, q);
        if (colwise && !p.col_t)
          store_codes8(p.cd + r * p.cd_rs + j * p.cd_cs, p.cd_cs, n, q);
      }
      if (tcol) {
        uint2 w;
        w.x = q[0] | (q[1] << 8) | (q[2] << 16) | (uint32_t(q[3]) << 24);
        w.y = q[4] | (q[5] << 8) | (q[6] << 16) | (uint32_t(q[7]) << 24);
        *reinterpret_cast<uint2 *>(&tile[rr + 32 * h][8 * cc]) = w;
      }
    }
    if (tcol) {
      __syncthreads();
      // Row n = c0 + jj of the [N, M] copy, columns r0 + 16 * qq + [0, 16).
      const int jj = threadIdx.x / 4, qq = threadIdx.x % 4;
      const int64_t nrow = c0 + jj, rc = r0 + 16 * qq;
      const int h = int(imax(0, imin(16, p.M - rc)));
      if (nrow < p.N && h > 0) {
        uint8_t *dst = p.cd + nrow * p.cd_rs + rc * p.cd_cs;
        if (h == 16 && p.cd_cs == 1 && (reinterpret_cast<uintptr_t>(dst) & 15) == 0) {
          uint32_t w[4];
#pragma unroll
          for (int k = 0; k < 4; ++k)
            w[k] = tile[16 * qq + 4 * k][jj] | (tile[16 * qq + 4 * k + 1][jj] << 8) |
                   (tile[16 * qq + 4 * k + 2][jj] << 16) |
                   (uint32_t(tile[16 * qq + 4 * k + 3][jj]) << 24);
          *reinterpret_cast<uint4 *>(dst) = make_uint4(w[0], w[1], w[2], w[3]);
        } else {
          for (int k = 0; k < h; ++k)
            dst[k * p.cd_cs] = tile[16 * qq + k][jj];
        }
      }
      __syncthreads();
    }
  }
}

//===--- FP8 block scaling ----------------------------------------------------===//

/// Reduces a block's amax over the CPB adjacent lanes that hold it.
template <int CPB>
__device__ __forceinline__ void reduce_block_amax(BlockAmax &a) {
#pragma unroll
  for (int o = 1; o < CPB; o <<= 1) {
    const float om = __shfl_xor_sync(0xffffffffu, a.amax, o);
    const bool on = __shfl_xor_sync(0xffffffffu, int(a.nan), o) != 0;
    a.amax = om > a.amax ? om : a.amax;
    a.nan = a.nan || on;
  }
}

/// Codes of v[0, n) under the block's scales `sc`, stored at (r, j):
/// common/quantize_block.h fp8_block_code with the conversion done by
/// cvt.rn.satfinite two at a time (= f32_to_e4m3 / f32_to_e5m2, as the FP8
/// per-tensor kernel uses it) and a plain IEEE division or product (a NaN
/// result's bits do not reach its code, 0x7F either way).
__device__ __forceinline__ void store_fp8_block_codes(const FParams &p,
                                                      int64_t r, int64_t j,
                                                      int n, const float (&v)[8],
                                                      Fp8BlockScales sc) {
  const bool e4 = p.s.format == kFP8BlockE4M3;
  uint8_t q[8];
#pragma unroll
  for (int k = 0; k < 8; k += 2) {
    const float lo = sc.enc != 0.f ? __fmul_rn(v[k], sc.enc) : __fdiv_rn(v[k], sc.dec);
    const float hi = sc.enc != 0.f ? __fmul_rn(v[k + 1], sc.enc)
                                   : __fdiv_rn(v[k + 1], sc.dec);
    const uint32_t w = e4 ? cvt_e4m3x2(lo, hi) : cvt_e5m2x2(lo, hi);
    q[k] = uint8_t(w), q[k + 1] = uint8_t(w >> 8);
  }
  store_codes8(p.rd + r * p.rd_rs + j * p.rd_cs, p.rd_cs, n, q);
}

/// Rowwise FP8 blocks of BS = 8 * CPB elements (a power of two up to 256;
/// launched for 128), 8 values a thread: the CPB adjacent lanes of one
/// block reduce its amax with xor shuffles; each lane stores its 8 codes
/// (one 8-byte store where aligned) and the block's first lane its f32
/// scale. The values stay in registers between the amax and the codes: one
/// read of the input. (Four chunks a thread loaded before reducing, tried
/// on the H200, was 1.5-2.7x slower: docs/benchmarks/fp8_block.md.)
template <typename T, int CPB> __global__ void fp8_block_row_kernel(FParams p) {
  constexpr int BS = CPB * 8;
  const int64_t bps = ceil_div(p.seg, BS), nseg = ceil_div(p.N, p.seg);
  const int64_t nrb = nseg * bps, total = p.M * nrb * CPB;
  float *scales = reinterpret_cast<float *>(p.rsc);
  const int lane = threadIdx.x & 31;
  // Warp-uniform trip count: the shuffles need every lane.
  for (int64_t base = gtid() - lane; base < total; base += gstride()) {
    const int64_t t = base + lane;
    const bool active = t < total;
    const int64_t blk = active ? t / CPB : 0; // CPB: a power of two
    const int k = int(t % CPB);
    int64_t r, c, sg = 0, b;
    divmod(blk, nrb, r, c);
    b = c;
    if (nseg > 1)
      divmod(c, bps, sg, b);
    const int64_t seg_end = min(p.N, sg * p.seg + p.seg);
    const int64_t j0 = sg * p.seg + b * BS, j = j0 + 8 * k;
    const int n = active ? int(imax(0, imin(8, min(seg_end, j0 + BS) - j)))
                         : 0;
    float v[8];
    values8<T>(p, r, j, n, v);
    BlockAmax a;
#pragma unroll
    for (int q = 0; q < 8; ++q)
      if (q < n)
        a.add(v[q]);
    reduce_block_amax<CPB>(a);
    if (!active)
      continue;
    const Fp8BlockScales sc = fp8_block_scales_of(p.s, a.amax, a.nan);
    if (k == 0)
      scales[r * p.rsc_rs + c * p.rsc_cs] = sc.dec;
    if (n > 0)
      store_fp8_block_codes(p, r, j, n, v, sc);
  }
}

/// Rowwise FP8 blocks of any other width (per-row scaling, 32, 96, ...):
/// one warp per block, lanes taking runs of 8; the values are computed
/// again for the codes (a second read, from L2 for blocks of a few KiB).
template <typename T> __global__ void fp8_block_row_warp_kernel(FParams p) {
  const int64_t bs = p.s.block_cols;
  const int64_t bps = ceil_div(p.seg, bs), nseg = ceil_div(p.N, p.seg);
  const int64_t nrb = nseg * bps, total = p.M * nrb;
  float *scales = reinterpret_cast<float *>(p.rsc);
  const int lane = threadIdx.x & 31;
  for (int64_t blk = gtid() / 32; blk < total; blk += gstride() / 32) {
    int64_t r, c, sg = 0, b;
    divmod(blk, nrb, r, c);
    b = c;
    if (nseg > 1)
      divmod(c, bps, sg, b);
    const int64_t j0 = sg * p.seg + b * bs;
    const int64_t j1 = min(min(p.N, sg * p.seg + p.seg), j0 + bs);
    BlockAmax a;
    for (int64_t j = j0 + 8 * lane; j < j1; j += 256) {
      const int n = int(imin(8, j1 - j));
      float v[8];
      values8<T>(p, r, j, n, v);
#pragma unroll
      for (int q = 0; q < 8; ++q)
        if (q < n)
          a.add(v[q]);
    }
    reduce_block_amax<32>(a);
    const Fp8BlockScales sc = fp8_block_scales_of(p.s, a.amax, a.nan);
    if (lane == 0)
      scales[r * p.rsc_rs + c * p.rsc_cs] = sc.dec;
    for (int64_t j = j0 + 8 * lane; j < j1; j += 256) {
      const int n = int(imin(8, j1 - j));
      float v[8];
      values8<T>(p, r, j, n, v);
      store_fp8_block_codes(p, r, j, n, v, sc);
    }
  }
}

//===--- dbias ----------------------------------------------------------------===//

/// ws[b, j] = sum over the rows of band b, in row order, of the pre-rounding
/// values of column j.
template <typename T> __global__ void dbias_band_kernel(FParams p) {
  const int64_t nb = ceil_div(p.M, 32), total = nb * p.N;
  for (int64_t t = gtid(); t < total; t += gstride()) {
    const int64_t b = t / p.N, j = t % p.N;
    float acc = 0.f;
    for (int64_t r = b * 32; r < min(p.M, b * 32 + 32); ++r) {
      float pre;
      (void)value<T>(p, r, j, &pre);
      acc += pre;
    }
    p.ws[t] = acc;
  }
}

//===--- activation apply -----------------------------------------------------===//

__device__ __forceinline__ void store_float(char *base, int32_t dt, int64_t off,
                                            float v) {
  if (dt == FUSION_RT_BF16)
    reinterpret_cast<uint16_t *>(base)[off] = f32_to_bf16(v);
  else if (dt == FUSION_RT_F16)
    reinterpret_cast<uint16_t *>(base)[off] = f32_to_f16(v);
  else
    reinterpret_cast<float *>(base)[off] = v;
}

template <typename T> __global__ void activation_kernel(FParams p) {
  for (int64_t r = blockIdx.x; r < p.M; r += gridDim.x)
    for (int64_t j = threadIdx.x; j < p.N; j += blockDim.x)
      store_float(p.ao, p.ao_dt, r * p.ao_rs + j * p.ao_cs, value<T>(p, r, j));
}

//===--- dequantize -----------------------------------------------------------===//

struct DParams {
  fusion_rt_quant_scheme s;
  int64_t M, N; ///< logical [M, N] of the quantized tensor
  bool col, tr, swz, fp4;
  const uint8_t *data, *sc;
  int32_t data_dt;
  int64_t d_rs, d_cs, s_rs, s_cs, s_pc;
  const float *scale_inv;
  char *out;
  int32_t out_dt;
  int64_t o_rs, o_cs;
};

__global__ void dequantize_kernel(DParams p) {
  const int64_t bs = scheme_block(p.s);
  const bool tensor = is_fp8_tensor_format(p.s.format);
  const bool fp8_block = is_fp8_block_format(p.s.format); // rowwise only
  const float *fscales = reinterpret_cast<const float *>(p.sc);
  const float sinv = p.scale_inv ? *p.scale_inv : 0.f;
  for (int64_t r = blockIdx.x; r < p.M; r += gridDim.x)
    for (int64_t c = threadIdx.x; c < p.N; c += blockDim.x) {
      const int64_t di = p.tr ? c : r, dj = p.tr ? r : c;
      uint8_t code;
      if (p.fp4) {
        const int64_t nib = di * p.d_rs + dj;
        const uint8_t b = p.data[nib >> 1];
        code = (nib & 1) ? uint8_t(b >> 4) : uint8_t(b & 0x0f);
      } else {
        code = p.data[di * p.d_rs + dj * p.d_cs];
      }
      uint8_t sb = 0;
      if (fp8_block) {
        const float x = dequantize_value(p.s, decode_code(code, p.data_dt), 0,
                                         fscales[r * p.s_rs + (c / bs) * p.s_cs]);
        store_float(p.out, p.out_dt, di * p.o_rs + dj * p.o_cs, x);
        continue;
      }
      if (!tensor) {
        // Scale (row, block) of the compact / swizzled matrix.
        const int64_t sr = p.col ? c : r, scol = p.col ? r / bs : c / bs;
        if (p.swz)
          sb = p.sc[swizzled_scale_offset(sr, scol, p.s_pc)];
        else if (!p.col)
          sb = p.sc[r * p.s_rs + (c / bs) * p.s_cs];
        else if (p.tr)
          sb = p.sc[c * p.s_rs + (r / bs) * p.s_cs];
        else
          sb = p.sc[(r / bs) * p.s_rs + c * p.s_cs];
      }
      const float x =
          dequantize_value(p.s, decode_code(code, p.data_dt), sb, sinv);
      store_float(p.out, p.out_dt, di * p.o_rs + dj * p.o_cs, x);
    }
}

//===--- launches -------------------------------------------------------------===//

constexpr int kBlock = 256;

int grid_for(int64_t work_items) {
  const int64_t cap = int64_t(device_sm_count()) * 8;
  const int64_t want = ceil_div(work_items, kBlock);
  return int(want < 1 ? 1 : want < cap ? want : cap);
}
int grid_rows(int64_t rows) {
  const int64_t cap = int64_t(device_sm_count()) * 8;
  return int(rows < 1 ? 1 : rows < cap ? rows : cap);
}

/// The plan request (common/formats_plan.h) of a call.
formats_plan::Request plan_request(const Request &q, const FParams &p) {
  formats_plan::Request r;
  r.format = q.scheme.format;
  r.activation_only = q.op == Op::Activation;
  r.amax_out = q.amax != nullptr;
  r.current_scaling = q.scheme.tensor_scaling == FUSION_RT_TENSOR_SCALING_CURRENT;
  r.scale_inv = q.scale_inv != nullptr;
  r.rowwise = q.row_wise;
  r.colwise = q.col_wise;
  r.nvfp4_2d = p.s2d != nullptr; // formats_execute's scratch plane
  r.dbias = q.dbias != nullptr;
  r.gated = q.op == Op::GatedActQuantize;
  r.block_cols = p.s.block_cols;
  r.rows = p.M, r.cols = p.N, r.seg = p.seg;
  return r;
}

/// Launches one step of the plan for input type T.
template <typename T>
cudaError_t launch_step(const formats_plan::Step &step, const Request &q, FParams &p,
                        uint32_t *amax_bits, cudaStream_t st) {
  using formats_plan::Kernel;
  const bool nv = step.bs == 16;
  switch (step.kernel) {
  case Kernel::Amax:
    amax_kernel<T><<<grid_rows(p.M), kBlock, 0, st>>>(p, chunks_of(p.N, p.seg),
                                                      amax_bits);
    break;
  case Kernel::Activation:
    if constexpr (T::kOp != 0)
      activation_kernel<T><<<grid_rows(p.M), kBlock, 0, st>>>(p);
    break;
  case Kernel::Scalars:
    scalars_kernel<<<1, 1, 0, st>>>(p, q.scale_inv);
    break;
  case Kernel::Fp8Tensor: {
    const int64_t tiles = ceil_div(p.M, kTile) * ceil_div(p.N, kTile);
    const int64_t cap = int64_t(device_sm_count()) * 8;
    fp8_tensor_kernel<T><<<int(tiles < cap ? tiles : cap), kBlock, 0, st>>>(
        p, q.row_wise, q.col_wise);
    break;
  }
  case Kernel::Fp8BlockRow:
  case Kernel::Fp8BlockRowWarp: {
    const int64_t bs = p.s.block_cols;
    const int64_t blocks = p.M * ceil_div(p.N, p.seg) * ceil_div(p.seg, bs);
    if (step.kernel == Kernel::Fp8BlockRow)
      fp8_block_row_kernel<T, 16><<<grid_for(blocks * 16), kBlock, 0, st>>>(p);
    else
      fp8_block_row_warp_kernel<T><<<grid_for(blocks * 32), kBlock, 0, st>>>(p);
    break;
  }
  case Kernel::Scales2d:
    scales_2d_kernel<T><<<grid_for(ceil_div(p.M, 16) * p.nbc2d), kBlock, 0, st>>>(p);
    break;
  case Kernel::Fp4RowSerial:
    if (nv)
      fp4_row_serial_kernel<T, 16><<<grid_for(p.M), kBlock, 0, st>>>(p);
    else
      fp4_row_serial_kernel<T, 32><<<grid_for(p.M), kBlock, 0, st>>>(p);
    break;
  case Kernel::Fp4Row: {
    const int64_t blocks = p.M * ceil_div(p.N, p.seg) * ceil_div(p.seg, nv ? 16 : 32);
    if (nv)
      fp4_row_kernel<T, 16><<<grid_for(blocks * 2), kBlock, 0, st>>>(p);
    else
      fp4_row_kernel<T, 32><<<grid_for(blocks * 4), kBlock, 0, st>>>(p);
    break;
  }
  case Kernel::Fp4Col: {
    const int64_t work = ceil_div(p.N, 2) * ceil_div(p.M, nv ? 16 : 32);
    if (nv)
      fp4_col_kernel<T, 16><<<grid_for(work), kBlock, 0, st>>>(p);
    else
      fp4_col_kernel<T, 32><<<grid_for(work), kBlock, 0, st>>>(p);
    break;
  }
  case Kernel::DbiasBand:
    // Never planned for gated requests (formats_plan: Request::gated); the
    // guard keeps the gated instance from being compiled.
    if constexpr (T::kOp != 2)
      dbias_band_kernel<T><<<grid_for(ceil_div(p.M, 32) * p.N), kBlock, 0, st>>>(p);
    break;
  }
  return cudaGetLastError();
}

/// The steps of the call's plan (common/formats_plan.h) for input type T.
template <typename T>
cudaError_t run_passes(const Request &q, FParams &p, uint32_t *amax_bits,
                       cudaStream_t st) {
  const formats_plan::Request r = plan_request(q, p);
  const formats_plan::Plan plan = formats_plan::plan(r);
  p.amax = formats_plan::needs_amax(r) ? amax_bits : nullptr;
  for (int i = 0; i < plan.n; ++i)
    if (cudaError_t e = launch_step<T>(plan.steps[i], q, p, amax_bits, st))
      return e;
  return cudaSuccess;
}

/// run_passes for the request kind of `p`.
template <typename E>
cudaError_t run_op(const Request &q, FParams &p, uint32_t *amax_bits,
                   cudaStream_t st) {
  switch (p.op) {
  case 0:
    return run_passes<Src<E, 0>>(q, p, amax_bits, st);
  case 1:
    return run_passes<Src<E, 1>>(q, p, amax_bits, st);
  default:
    return run_passes<Src<E, 2>>(q, p, amax_bits, st);
  }
}

fusion_rt_status execute_dequantize(const Request &q, cudaStream_t st) {
  const bool col = q.deq_direction == FUSION_RT_COLWISE;
  const Mat &data = col ? q.col_data : q.row_data;
  DParams p{};
  p.s = q.scheme;
  p.M = q.rows, p.N = q.cols;
  p.col = col;
  p.tr = col && q.col_transposed;
  p.swz = q.swizzled;
  p.fp4 = data.dtype == FUSION_RT_F4E2M1;
  p.data = reinterpret_cast<const uint8_t *>(data.data);
  p.data_dt = data.dtype;
  p.d_rs = data.rs, p.d_cs = data.cs;
  const Mat &sc = col ? q.col_scales : q.row_scales;
  p.sc = reinterpret_cast<const uint8_t *>(
      q.swizzled ? (col ? q.col_scales_swz : q.row_scales_swz) : sc.data);
  p.s_rs = sc.rs, p.s_cs = sc.cs;
  p.s_pc = col ? q.col_scales_padded_cols : q.row_scales_padded_cols;
  p.scale_inv = q.scale_inv;
  p.out = q.deq_out.data;
  p.out_dt = q.deq_out.dtype;
  p.o_rs = q.deq_out.rs, p.o_cs = q.deq_out.cs;
  if (p.M > 0 && p.N > 0)
    dequantize_kernel<<<grid_rows(p.M), kBlock, 0, st>>>(p);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? FUSION_RT_STATUS_SUCCESS
                          : cuda_fail(e, "the dequantize kernel launch");
}

} // namespace

fusion_rt_status formats_execute(const Request &q, cudaStream_t st) {
  if (q.op == Op::Dequantize)
    return execute_dequantize(q, st);

  FParams p{};
  p.x = q.x.data, p.up = q.up.data, p.grad = q.grad.data;
  p.x_rs = q.x.rs, p.x_cs = q.x.cs, p.up_rs = q.up.rs, p.up_cs = q.up.cs;
  p.g_rs = q.grad.rs, p.g_cs = q.grad.cs;
  p.op = q.op == Op::Quantize ? 0 : q.gated ? 2 : 1;
  p.backward = q.backward;
  p.kind = q.act_kind;
  p.inter = q.inter;
  p.act = q.params;
  p.s = q.scheme;
  p.M = q.rows, p.N = q.cols;
  p.K = q.gated ? q.x.cols : q.cols;
  p.seg = q.seg_cols > 0 ? q.seg_cols : q.cols;
  p.rd = reinterpret_cast<uint8_t *>(q.row_data.data);
  p.rd_rs = q.row_data.rs, p.rd_cs = q.row_data.cs;
  p.rd_fp4 = q.row_data.dtype == FUSION_RT_F4E2M1;
  p.rsc = reinterpret_cast<uint8_t *>(q.swizzled ? q.row_scales_swz
                                                 : q.row_scales.data);
  p.rsc_rs = q.row_scales.rs, p.rsc_cs = q.row_scales.cs;
  p.rsc_pc = q.row_scales_padded_cols;
  p.cd = reinterpret_cast<uint8_t *>(q.col_data.data);
  p.cd_rs = q.col_data.rs, p.cd_cs = q.col_data.cs;
  p.cd_fp4 = q.col_data.dtype == FUSION_RT_F4E2M1;
  p.col_t = q.col_transposed;
  p.csc = reinterpret_cast<uint8_t *>(q.swizzled ? q.col_scales_swz
                                                 : q.col_scales.data);
  p.csc_rs = q.col_scales.rs, p.csc_cs = q.col_scales.cs;
  p.csc_pc = q.col_scales_padded_cols;
  p.swz = q.swizzled;
  p.scale_in = q.scale_in;
  p.ao = q.act_out.data;
  p.ao_dt = q.act_out.dtype;
  p.ao_rs = q.act_out.rs, p.ao_cs = q.act_out.cs;
  const bool quantizer = q.op != Op::Activation;
  const bool two_d = quantizer && q.scheme.format == kNVFP4 &&
                     q.scheme.nvfp4_block == FUSION_RT_NVFP4_2D;
  p.nbc2d = ceil_div(p.N, 16);

  cudaError_t e;
  // Swizzled scales: zero padding first (the kernels write the real bytes).
  if (quantizer && q.swizzled) {
    if (q.row_wise) {
      e = cudaMemsetAsync(q.row_scales_swz, 0,
                          size_t(q.row_scales_padded_rows * q.row_scales_padded_cols),
                          st);
      if (e != cudaSuccess)
        return cuda_fail(e, "cudaMemsetAsync(rowwise scales)");
    }
    if (q.col_wise) {
      e = cudaMemsetAsync(q.col_scales_swz, 0,
                          size_t(q.col_scales_padded_rows * q.col_scales_padded_cols),
                          st);
      if (e != cudaSuccess)
        return cuda_fail(e, "cudaMemsetAsync(colwise scales)");
    }
  }
  // One stream-ordered scratch allocation: the amax word (when no amax
  // output takes it), the 2D scale plane, the dbias band sums.
  const int64_t nbands = ceil_div(p.M, 32);
  const bool want_dbias = q.dbias != nullptr && p.N > 0;
  const size_t amax_off = 0, s2d_off = 256;
  const size_t s2d_bytes = two_d ? size_t(ceil_div(p.M, 16) * p.nbc2d) : 0;
  const size_t ws_off = round_up(int64_t(s2d_off + s2d_bytes), 256);
  const size_t ws_bytes = want_dbias ? size_t(nbands * p.N) * sizeof(float) : 0;
  char *scratch = nullptr;
  e = cudaMallocAsync(reinterpret_cast<void **>(&scratch), ws_off + ws_bytes, st);
  if (e != cudaSuccess)
    return cuda_fail(e, "cudaMallocAsync(format kernels' scratch)");
  uint32_t *amax_bits =
      q.amax ? reinterpret_cast<uint32_t *>(q.amax)
             : reinterpret_cast<uint32_t *>(scratch + amax_off);
  e = cudaMemsetAsync(amax_bits, 0, sizeof(uint32_t), st);
  if (two_d)
    p.s2d = reinterpret_cast<uint8_t *>(scratch + s2d_off);
  if (want_dbias)
    p.ws = reinterpret_cast<float *>(scratch + ws_off);

  if (e == cudaSuccess) {
    switch (q.x.dtype) {
    case FUSION_RT_BF16:
      e = run_op<BF16T>(q, p, amax_bits, st);
      break;
    case FUSION_RT_F16:
      e = run_op<F16T>(q, p, amax_bits, st);
      break;
    default:
      e = run_op<F32T>(q, p, amax_bits, st);
      break;
    }
  }
  if (e == cudaSuccess && want_dbias) {
    if (e == cudaSuccess)
      e = launch_dbias_reduce(p.M > 0 ? p.ws : nullptr, p.M > 0 ? nbands : 0,
                              p.N, q.dbias, q.dbias_stride, st);
  }
  cudaFreeAsync(scratch, st);
  return e == cudaSuccess ? FUSION_RT_STATUS_SUCCESS
                          : cuda_fail(e, "a format kernel launch");
}

} // namespace cuda
} // namespace fusion_rt
