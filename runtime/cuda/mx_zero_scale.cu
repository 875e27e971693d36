//===- mx_zero_scale.cu - zero_scale = ONE after any MXFP8 kernel -*- CUDA -*-===//
//
// torchao's RCEIL quantizer (and TransformerEngine before PR#2647) scales a
// block whose scale byte is 0 by 1.0 instead of the exact 2^127
// (FUSION_RT_ZERO_SCALE_ONE). Such a block has amax <= max_elem * 2^-127, so
// each of its elements times 1.0 encodes as a signed zero (or 0x7F for a NaN
// that the IGNORE policy left out of the amax). The code the EXACT kernels
// wrote for x * 2^127 keeps x's sign and its NaN-ness, so the ONE code is a
// function of it: NaN -> 0x7F, else its sign bit. This kernel rewrites the
// codes of every block whose scale byte is 0, after any MXFP8 kernel family
// (plain, activation, gated, forward or backward; rowwise, colwise same or
// transposed, compact or swizzled scales), which therefore stays as it is
// (no register or code cost on the hot kernels).
//
// Bytes that must move: every scale byte once (M * nb rowwise, nb(M) * N
// colwise: 1/32 of the codes), plus the codes of the blocks of scale byte 0
// (read and written; none in ordinary data).
//
// zero_scale = MIN_NORMAL (torchao's FLOOR) has no such identity: its kernel
// (below) recomputes the values of the blocks of scale byte 0 from the
// inputs. Bytes: the scales once, plus the inputs and codes of those blocks.
//
//===----------------------------------------------------------------------===//
#include "cuda/launch.cuh"

namespace fusion_rt {
namespace cuda {
namespace {

/// The ONE code of an element from its EXACT code (see the file header).
__device__ __forceinline__ uint8_t zero_scale_one_code(uint8_t c, bool e5m2) {
  const bool nan = e5m2 ? (c & 0x7F) > 0x7C : (c & 0x7F) == 0x7F;
  return nan ? uint8_t(0x7F) : uint8_t(c & 0x80);
}

/// Calls f(code, r, c, seg) for every element of scale entry i when its
/// scale byte is 0: r and c are the element's input row and column, seg the
/// value (0, or 1 for the dgate half of the gated backward's [dact | dgate]),
/// code points at its data byte. Rowwise entries come first (rows x
/// nv * row_nb; blocks never straddle column K), then colwise ones
/// (ceil(M/32) x nv * K).
template <typename F>
__device__ __forceinline__ void for_zero_block(const KParams &p, int nv,
                                               int64_t i, int64_t row_entries,
                                               F f) {
  if (i < row_entries) {
    const int64_t nb = nv * p.row_nb;
    const int64_t r = i / nb, b = i % nb;
    const uint8_t s = p.swz ? p.rsc[swizzled_scale_offset(r, b, p.rsc_pc)]
                            : p.rsc[r * p.rsc_rs + b * p.rsc_cs];
    if (s != 0)
      return;
    const int64_t seg = b / p.row_nb, c0 = (b % p.row_nb) * 32;
    const int64_t c1 = min(c0 + 32, p.K);
    for (int64_t c = c0; c < c1; ++c)
      f(p.rd + r * p.rd_rs + (seg * p.K + c) * p.rd_cs, r, c, seg);
    return;
  }
  const int64_t j = i - row_entries, cols = nv * p.K;
  const int64_t rb = j / cols, c = j % cols;
  const uint8_t s = p.swz     ? p.csc[swizzled_scale_offset(c, rb, p.csc_pc)]
                    : p.col_t ? p.csc[c * p.csc_rs + rb * p.csc_cs]
                              : p.csc[rb * p.csc_rs + c * p.csc_cs];
  if (s != 0)
    return;
  const int64_t r1 = min(rb * 32 + 32, p.M);
  for (int64_t r = rb * 32; r < r1; ++r)
    f(p.col_t ? p.cd + c * p.cd_rs + r * p.cd_cs
              : p.cd + r * p.cd_rs + c * p.cd_cs,
      r, c % p.K, c / p.K);
}

__global__ void zero_scale_one_kernel(KParams p, int nv, int64_t row_entries,
                                      int64_t col_entries) {
  const bool e5m2 = p.format == FUSION_RT_FORMAT_MXFP8_E5M2;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       i < row_entries + col_entries; i += int64_t(gridDim.x) * blockDim.x)
    for_zero_block(p, nv, i, row_entries,
                   [&](uint8_t *d, int64_t, int64_t, int64_t) {
                     *d = zero_scale_one_code(*d, e5m2);
                   });
}

/// zero_scale = MIN_NORMAL (torchao's FLOOR clamps the scale to 2^-126): the
/// elements of a block of scale byte 0 are x * 2^126 instead of x * 2^127.
/// That code is not a function of the EXACT one (double rounding below the
/// e4m3 normal range, saturation above 448), so the block's values are
/// recomputed from the inputs through the source's scalar path (the same
/// activation code and rounding to the intermediate type as every kernel)
/// and encoded as the CPU backend does: f32_to_e4m3/e5m2(v * 2^126).
template <typename S>
__global__ void zero_scale_min_normal_kernel(KParams p, int64_t row_entries,
                                             int64_t col_entries) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       i < row_entries + col_entries; i += int64_t(gridDim.x) * blockDim.x)
    for_zero_block(p, S::NV, i, row_entries,
                   [&](uint8_t *d, int64_t r, int64_t c, int64_t seg) {
                     float v[S::NV], pre[S::NV];
                     S::scalar(p, r, c, v, pre);
                     // Constant indices only (a run-time index would put v
                     // in local memory).
                     *d = mx_encode(seg ? v[S::NV - 1] : v[0], 0x1p126f,
                                    p.format);
                   });
}

template <typename S>
cudaError_t launch_min_normal(const KParams &p, bool rowwise, bool colwise,
                              cudaStream_t s) {
  const int64_t rows = rowwise ? p.M * S::NV * p.row_nb : 0;
  const int64_t cols = colwise ? ceil_div(p.M, 32) * S::NV * p.K : 0;
  if (rows + cols == 0)
    return cudaSuccess;
  const int64_t blocks = ceil_div(rows + cols, 256);
  const int64_t cap = int64_t(device_sm_count()) * 8;
  zero_scale_min_normal_kernel<S>
      <<<int(blocks < cap ? blocks : cap), 256, 0, s>>>(p, rows, cols);
  return cudaGetLastError();
}

template <template <typename> class Src>
cudaError_t launch_min_normal_typed(const KParams &p, int dtype, bool rowwise,
                                    bool colwise, cudaStream_t s) {
  return dtype == FUSION_RT_BF16
             ? launch_min_normal<Src<BF16T>>(p, rowwise, colwise, s)
         : dtype == FUSION_RT_F16
             ? launch_min_normal<Src<F16T>>(p, rowwise, colwise, s)
             : launch_min_normal<Src<F32T>>(p, rowwise, colwise, s);
}

template <typename T> using SrcActFwdZ = SrcAct<T, false>;
template <typename T> using SrcActBwdZ = SrcAct<T, true>;

} // namespace

cudaError_t launch_zero_scale_min_normal(const KParams &p, int op, bool backward,
                                         int dtype, bool rowwise, bool colwise,
                                         cudaStream_t s) {
  if (op == 2)
    return backward ? launch_min_normal_typed<SrcGatedBwd>(p, dtype, rowwise,
                                                           colwise, s)
                    : launch_min_normal_typed<SrcGatedFwd>(p, dtype, rowwise,
                                                           colwise, s);
  if (op == 1)
    return backward ? launch_min_normal_typed<SrcActBwdZ>(p, dtype, rowwise,
                                                          colwise, s)
                    : launch_min_normal_typed<SrcActFwdZ>(p, dtype, rowwise,
                                                          colwise, s);
  return launch_min_normal_typed<SrcPlain>(p, dtype, rowwise, colwise, s);
}

cudaError_t launch_zero_scale_one(const KParams &p, int nv, bool rowwise,
                                  bool colwise, cudaStream_t s) {
  const int64_t rows = rowwise ? p.M * nv * p.row_nb : 0;
  const int64_t cols = colwise ? ceil_div(p.M, 32) * nv * p.K : 0;
  if (rows + cols == 0)
    return cudaSuccess;
  const int64_t blocks = ceil_div(rows + cols, 256);
  const int64_t cap = int64_t(device_sm_count()) * 8;
  zero_scale_one_kernel<<<int(blocks < cap ? blocks : cap), 256, 0, s>>>(
      p, nv, rows, cols);
  return cudaGetLastError();
}

} // namespace cuda
} // namespace fusion_rt
