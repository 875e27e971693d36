//===- cpu_backend.cpp - the CPU reference backend ----------------*- C++ -*-===//
//
// Executes validated requests (src/backend.h) on the host. It is the oracle
// of the tests and the fallback without a GPU, so it favours plain loops over
// cleverness; it shares every formula with the CUDA kernels through
// runtime/common/.
//
// Structure: a value source (input load, activation, gated activation)
// produces the fp32 rows of the matrix to quantize. Rowwise 1D blocks are
// quantized as soon as their row exists; colwise blocks, 2D blocks, FP8
// per-tensor data and dbias work on a 32-row "band" buffer (one MX colwise
// block high). Bands are independent, so worker threads take contiguous runs
// of bands; results do not depend on the thread count. NVFP4 and FP8 current
// scaling first run an amax pass over the values.
//
//===----------------------------------------------------------------------===//
#include "src/backend.h"

#include "common/convert.h"
#include "common/layout.h"
#include "common/rng.h"
#include "common/quantize_block.h"
#include "common/scale.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

namespace fusion_rt {
namespace {

constexpr int64_t kBand = 32;

//===--- element access ----------------------------------------------------===//

inline float load_f32(const Mat &m, int64_t i, int64_t j) {
  const char *p = m.data;
  int64_t off = i * m.rs + j * m.cs;
  switch (m.dtype) {
  case FUSION_RT_BF16: {
    uint16_t h;
    std::memcpy(&h, p + off * 2, 2);
    return bf16_to_f32(h);
  }
  case FUSION_RT_F16: {
    uint16_t h;
    std::memcpy(&h, p + off * 2, 2);
    return f16_to_f32(h);
  }
  default: {
    float f;
    std::memcpy(&f, p + off * 4, 4);
    return f;
  }
  }
}

/// Loads row i, columns [0, n) of `m` into `out`.
void load_row(const Mat &m, int64_t i, int64_t n, float *out) {
  if (m.cs == 1 && m.dtype == FUSION_RT_BF16) {
    const uint16_t *p = reinterpret_cast<const uint16_t *>(m.data) + i * m.rs;
    for (int64_t j = 0; j < n; ++j)
      out[j] = bf16_to_f32(p[j]);
    return;
  }
  if (m.cs == 1 && m.dtype == FUSION_RT_F32) {
    std::memcpy(out, reinterpret_cast<const float *>(m.data) + i * m.rs,
                size_t(n) * sizeof(float));
    return;
  }
  for (int64_t j = 0; j < n; ++j)
    out[j] = load_f32(m, i, j);
}

/// Stores fp32 `v` (already representable) into a BF16/F16/F32 element.
inline void store_float(const Mat &m, int64_t i, int64_t j, float v) {
  char *p = m.data;
  int64_t off = i * m.rs + j * m.cs;
  if (m.dtype == FUSION_RT_BF16) {
    uint16_t h = f32_to_bf16(v);
    std::memcpy(p + off * 2, &h, 2);
  } else if (m.dtype == FUSION_RT_F16) {
    uint16_t h = f32_to_f16(v);
    std::memcpy(p + off * 2, &h, 2);
  } else {
    std::memcpy(p + off * 4, &v, 4);
  }
}

/// Stores a quantized code: a byte, or a nibble of an F4E2M1 view. The pad
/// nibble after the last element of an odd-length row is written as zero.
inline void store_code(const Mat &m, int64_t i, int64_t j, uint8_t code) {
  if (m.dtype != FUSION_RT_F4E2M1) {
    m.data[i * m.rs + j * m.cs] = char(code);
    return;
  }
  int64_t nib = i * m.rs + j;
  unsigned char &b = reinterpret_cast<unsigned char &>(m.data[nib >> 1]);
  if (nib & 1) {
    b = uint8_t((b & 0x0f) | (code << 4));
  } else {
    b = uint8_t((b & 0xf0) | (code & 0x0f));
    if (j + 1 == m.cols)
      b = uint8_t(b & 0x0f);
  }
}

inline uint8_t load_code(const Mat &m, int64_t i, int64_t j) {
  if (m.dtype != FUSION_RT_F4E2M1)
    return uint8_t(m.data[i * m.rs + j * m.cs]);
  int64_t nib = i * m.rs + j;
  uint8_t b = uint8_t(m.data[nib >> 1]);
  return (nib & 1) ? uint8_t(b >> 4) : uint8_t(b & 0x0f);
}

//===--- value sources -----------------------------------------------------===//

/// Per-thread scratch rows.
struct Scratch {
  std::vector<float> vals;       ///< band values [kBand][cols]
  std::vector<float> pre;        ///< pre-rounding values (dbias) [kBand][cols]
  std::vector<float> a, b, g;    ///< input rows
  std::vector<uint8_t> s2d;      ///< NVFP4 2D scales of the band
  std::vector<float> mul2d;      ///< their encode factors
};

/// Computes row r of the value matrix into v[0, cols); with `pre`, the fp32
/// values before intermediate rounding into pre[0, cols).
void compute_row(const Request &q, int64_t r, float *v, float *pre, Scratch &s) {
  const int64_t n = q.cols;
  if (q.op == Op::Quantize) {
    load_row(q.x, r, n, v);
    if (pre)
      std::memcpy(pre, v, size_t(n) * sizeof(float));
    return;
  }
  if (!q.gated) {
    load_row(q.x, r, n, s.a.data());
    if (q.backward)
      load_row(q.grad, r, n, s.g.data());
    for (int64_t j = 0; j < n; ++j) {
      float e = q.backward ? act_backward(q.act_kind, s.a[j], s.g[j], q.params)
                           : act_forward(q.act_kind, s.a[j], q.params);
      if (pre)
        pre[j] = e;
      v[j] = round_to_intermediate(e, q.inter);
    }
    return;
  }
  const int64_t k = q.x.cols;
  load_row(q.x, r, k, s.a.data());
  load_row(q.up, r, k, s.b.data());
  if (!q.backward) {
    for (int64_t j = 0; j < k; ++j) {
      float e = gated_forward(q.act_kind, s.a[j], s.b[j], q.params);
      if (pre)
        pre[j] = e;
      v[j] = round_to_intermediate(e, q.inter);
    }
    return;
  }
  load_row(q.grad, r, k, s.g.data());
  for (int64_t j = 0; j < k; ++j) {
    float da, dg;
    gated_backward(q.act_kind, s.a[j], s.b[j], s.g[j], q.params, da, dg);
    if (pre) {
      pre[j] = da;
      pre[k + j] = dg;
    }
    v[j] = round_to_intermediate(da, q.inter);
    v[k + j] = round_to_intermediate(dg, q.inter);
  }
}

/// Computes band rows [i0, i1) (matrix rows r0 + i) into s.vals (row-major,
/// ld = cols) and, with `want_pre`, their pre-rounding values into s.pre.
void compute_band(const Request &q, int64_t r0, int64_t i0, int64_t i1,
                  Scratch &s, bool want_pre) {
  const int64_t n = q.cols;
  for (int64_t i = i0; i < i1; ++i)
    compute_row(q, r0 + i, s.vals.data() + i * n,
                want_pre ? s.pre.data() + i * n : nullptr, s);
}

//===--- quantization context ----------------------------------------------===//
// Tensor globals, block scales and element codes: common/quantize_block.h.

using Globals = TensorGlobals;
using Amax = BlockAmax;

inline bool is_mx(int32_t f) { return is_mx_format(f); }
inline bool is_fp8_tensor(int32_t f) { return is_fp8_tensor_format(f); }
inline int64_t block_of(int32_t f) { return format_block(f); }

void put_row_scale(const Request &q, int64_t r, int64_t c, uint8_t byte) {
  if (q.swizzled)
    q.row_scales_swz[swizzled_scale_offset(r, c, q.row_scales_padded_cols)] =
        char(byte);
  else
    q.row_scales.data[r * q.row_scales.rs + c * q.row_scales.cs] = char(byte);
}

/// Colwise scale of data column `n`, row block `rb`.
void put_col_scale(const Request &q, int64_t n, int64_t rb, uint8_t byte) {
  if (q.swizzled)
    q.col_scales_swz[swizzled_scale_offset(n, rb, q.col_scales_padded_cols)] =
        char(byte);
  else if (q.col_transposed)
    q.col_scales.data[n * q.col_scales.rs + rb * q.col_scales.cs] = char(byte);
  else
    q.col_scales.data[rb * q.col_scales.rs + n * q.col_scales.cs] = char(byte);
}

inline void put_col_code(const Request &q, int64_t r, int64_t n, uint8_t c) {
  if (q.col_transposed)
    store_code(q.col_data, n, r, c);
  else
    store_code(q.col_data, r, n, c);
}

inline uint8_t block_scale(const Request &q, const Globals &g, const Amax &a,
                           float &mul) {
  return fusion_rt::block_scale(q.scheme, g, a, mul);
}

inline uint8_t encode(const Request &q, float x, float mul, uint32_t stream,
                      uint64_t index) {
  return encode_element(q.scheme, x, mul, stream, index);
}

/// out[j] = f32_to_e4m3(x[j] * mul) for j < n, written so that the compiler
/// vectorises it: the normal-range formula of convert.h with saturation and
/// NaN as selects; results below the e4m3 normal range (rare, zeros
/// included) are redone by the scalar conversion.
void encode_e4m3_run(const float *x, int64_t n, float mul, char *out) {
  int need_fix = 0;
  for (int64_t j = 0; j < n; ++j) {
    const float v = x[j] * mul;
    uint32_t u;
    std::memcpy(&u, &v, 4);
    const uint32_t a = u & 0x7fffffffu;
    uint32_t c = ((a + 0x7ffffu + ((a >> 20) & 1u)) >> 20) - (120u << 3);
    c = a >= 0x43e00000u ? 0x7eu : c;
    c |= (u >> 24) & 0x80u;
    c = a > 0x7f800000u ? 0x7fu : c;
    need_fix |= a < 0x3c800000u ? 1 : 0;
    out[j] = char(c);
  }
  if (need_fix)
    for (int64_t j = 0; j < n; ++j)
      if ((f32_bits(x[j] * mul) & 0x7fffffffu) < 0x3c800000u)
        out[j] = char(f32_to_e4m3(x[j] * mul));
}

/// Amax over x[0, n), vectorisable: the NaN flag is an integer OR.
Amax block_amax(const float *x, int64_t n) {
  float m = 0.f;
  int nan = 0;
  for (int64_t j = 0; j < n; ++j) {
    const float a = std::fabs(x[j]);
    m = a > m ? a : m;
    nan |= a != a ? 1 : 0;
  }
  Amax r;
  r.amax = m;
  r.nan = nan != 0;
  return r;
}

/// NVFP4 2D scales of the band: [ceil(h/16)][ceil(cols/16)].
void nvfp4_2d_scales(const Request &q, const Globals &g, int64_t h,
                     const float *vals, uint8_t *s2d, float *mul2d) {
  const int64_t n = q.cols, nbr = ceil_div(h, 16), nbc = ceil_div(n, 16);
  for (int64_t br = 0; br < nbr; ++br)
    for (int64_t bc = 0; bc < nbc; ++bc) {
      Amax a;
      for (int64_t i = br * 16; i < std::min(h, br * 16 + 16); ++i)
        for (int64_t j = bc * 16; j < std::min(n, bc * 16 + 16); ++j)
          a.add(vals[i * n + j]);
      float mul;
      s2d[size_t(br * nbc + bc)] = block_scale(q, g, a, mul);
      mul2d[size_t(br * nbc + bc)] = mul;
    }
}

/// Scale (r, c) of an FP8 block format's f32 scale matrix.
inline float &fp8_block_scale_at(const Mat &m, int64_t r, int64_t c) {
  return reinterpret_cast<float *>(m.data)[r * m.rs + c * m.cs];
}

/// Rowwise block quantization of band rows [i0, i1) (MX, NVFP4, FP8 block:
/// one f32 scale per block_cols elements); `vals` holds row i0 first. With
/// 2D NVFP4 blocks the band's scales come from `s2d` / `mul2d`.
void quantize_rows(const Request &q, const Globals &g, int64_t r0, int64_t i0,
                   int64_t i1, const float *vals, const uint8_t *s2d,
                   const float *mul2d) {
  const int32_t f = q.scheme.format;
  const bool fp8_block = is_fp8_block_format(f);
  const int64_t n = q.cols, bs = scheme_block(q.scheme), nbc2d = ceil_div(n, 16);
  const bool two_d = f == kNVFP4 && q.scheme.nvfp4_block == FUSION_RT_NVFP4_2D;
  const int64_t seg = q.seg_cols, nseg = ceil_div(n, seg);
  const int64_t blocks_per_seg = ceil_div(seg, bs);
  const bool fast_byte = q.row_data.dtype != FUSION_RT_F4E2M1 &&
                         q.row_data.cs == 1 && f == kMXFP8E4M3;
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t r = r0 + i;
    const float *row = vals + (i - i0) * n;
    for (int64_t sg = 0; sg < nseg; ++sg) {
      const int64_t c0 = sg * seg, c1 = std::min(n, c0 + seg);
      for (int64_t b = 0; b < blocks_per_seg; ++b) {
        const int64_t j0 = c0 + b * bs, j1 = std::min(c1, j0 + bs);
        if (fp8_block) {
          const Amax a = block_amax(row + j0, j1 - j0);
          const Fp8BlockScales sc = fp8_block_scales_of(q.scheme, a.amax, a.nan);
          fp8_block_scale_at(q.row_scales, r, sg * blocks_per_seg + b) = sc.dec;
          for (int64_t j = j0; j < j1; ++j)
            store_code(q.row_data, r, j, fp8_block_code(f, row[j], sc));
          continue;
        }
        float mul;
        uint8_t sb;
        if (two_d) {
          size_t idx = size_t((i / 16) * nbc2d + j0 / 16);
          sb = s2d[idx];
          mul = mul2d[idx];
        } else {
          sb = block_scale(q, g, block_amax(row + j0, j1 - j0), mul);
        }
        put_row_scale(q, r, sg * blocks_per_seg + b, sb);
        if (fast_byte) {
          encode_e4m3_run(row + j0, j1 - j0, mul,
                          q.row_data.data + r * q.row_data.rs + j0);
        } else {
          for (int64_t j = j0; j < j1; ++j)
            store_code(q.row_data, r, j,
                       encode(q, row[j], mul, 0, uint64_t(r * n + j)));
        }
      }
    }
  }
}

/// True when rowwise blocks can be quantized row by row as they are
/// produced (1D blocks of a block-scaled format).
bool rowwise_per_row(const Request &q) {
  const int32_t f = q.scheme.format;
  return q.row_wise && !is_fp8_tensor(f) &&
         !(f == kNVFP4 && q.scheme.nvfp4_block == FUSION_RT_NVFP4_2D);
}

/// Quantizes band rows [r0, r0+h) held in `vals`, except the rowwise blocks
/// that rowwise_per_row() leaves to quantize_rows.
void quantize_band(const Request &q, const Globals &g, int64_t r0, int64_t h,
                   const float *vals, Scratch &s) {
  const int32_t f = q.scheme.format;
  const int64_t n = q.cols, m = q.rows;

  if (is_fp8_tensor(f)) {
    const float scale = g.fp8_scale;
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const uint8_t c = encode(q, vals[i * n + j], scale, 0, 0);
        if (q.row_wise)
          store_code(q.row_data, r0 + i, j, c);
        if (q.col_wise)
          put_col_code(q, r0 + i, j, c);
      }
    return;
  }

  const int64_t bs = block_of(f);
  const bool two_d = f == kNVFP4 && q.scheme.nvfp4_block == FUSION_RT_NVFP4_2D;
  uint8_t *s2d = s.s2d.data();
  float *mul2d = s.mul2d.data();
  if (two_d)
    nvfp4_2d_scales(q, g, h, vals, s2d, mul2d);
  const int64_t nbc2d = ceil_div(n, 16);
  if (q.row_wise && !rowwise_per_row(q))
    quantize_rows(q, g, r0, 0, h, vals, s2d, mul2d);

  if (q.col_wise) {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i0 = 0; i0 < h; i0 += bs) {
        const int64_t i1 = std::min(h, i0 + bs);
        const int64_t rb = (r0 + i0) / bs;
        float mul;
        uint8_t sb;
        if (two_d) {
          size_t idx = size_t((i0 / 16) * nbc2d + j / 16);
          sb = s2d[idx];
          mul = mul2d[idx];
        } else {
          Amax a;
          for (int64_t i = i0; i < i1; ++i)
            a.add(vals[i * n + j]);
          sb = block_scale(q, g, a, mul);
        }
        put_col_scale(q, j, rb, sb);
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t r = r0 + i;
          put_col_code(q, r, j,
                       encode(q, vals[i * n + j], mul, 1, uint64_t(j * m + r)));
        }
      }
  }
}

//===--- threading ----------------------------------------------------------===//

int thread_count(const Request &q, int64_t nbands) {
  int t = q.num_threads > 0 ? q.num_threads
                            : int(std::max(1u, std::thread::hardware_concurrency()));
  return int(std::max<int64_t>(1, std::min<int64_t>(t, nbands)));
}

/// Runs fn(tid, band_begin, band_end) over contiguous runs of bands.
template <typename Fn> void for_bands(int nthreads, int64_t nbands, Fn fn) {
  if (nthreads <= 1) {
    fn(0, int64_t(0), nbands);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(size_t(nthreads - 1));
  const int64_t per = ceil_div(nbands, nthreads);
  // A worker that cannot be started leaves its bands to the calling thread,
  // which then needs that worker's scratch: run them one after another.
  std::vector<int> inline_runs;
  inline_runs.reserve(size_t(nthreads));
  for (int t = 1; t < nthreads; ++t) {
    int64_t b0 = std::min(nbands, t * per), b1 = std::min(nbands, b0 + per);
    try {
      pool.emplace_back([=, &fn] { fn(t, b0, b1); });
    } catch (...) {
      inline_runs.push_back(t);
    }
  }
  fn(0, int64_t(0), std::min(nbands, per));
  for (int t : inline_runs) {
    int64_t b0 = std::min(nbands, t * per), b1 = std::min(nbands, b0 + per);
    fn(t, b0, b1);
  }
  for (auto &th : pool)
    th.join();
}

void alloc_scratch(const Request &q, std::vector<Scratch> &scratch, int nthreads,
                   bool want_pre, int64_t band_rows = kBand) {
  scratch.resize(size_t(nthreads));
  const size_t in_cols = size_t(q.gated ? q.x.cols : q.cols);
  for (auto &s : scratch) {
    s.vals.resize(size_t(band_rows * q.cols));
    if (want_pre)
      s.pre.resize(size_t(kBand * q.cols));
    s.a.resize(in_cols);
    s.b.resize(in_cols);
    s.g.resize(in_cols);
    s.s2d.resize(size_t((kBand / 16) * ceil_div(q.cols, 16)));
    s.mul2d.resize(s.s2d.size());
  }
}

/// Column sums of the pre-rounding values of one band, in row order.
void band_dbias(const Request &q, int64_t h, const Scratch &s, float *out) {
  const int64_t n = q.cols;
  for (int64_t j = 0; j < n; ++j)
    out[j] = 0.f;
  for (int64_t i = 0; i < h; ++i)
    for (int64_t j = 0; j < n; ++j)
      out[j] += s.pre[size_t(i * n + j)];
}

/// dbias = sum over bands, in band order, of each band's row-order sums.
void finish_dbias(const Request &q, int64_t nbands,
                  const std::vector<float> &partial) {
  const int64_t n = q.cols;
  for (int64_t j = 0; j < n; ++j) {
    float acc = 0.f;
    for (int64_t b = 0; b < nbands; ++b)
      acc += partial[size_t(b * n + j)];
    q.dbias[j * q.dbias_stride] = canonical_nan(acc);
  }
}

//===--- operations ---------------------------------------------------------===//

/// FP8 block formats with blocks of block_rows > 1 rows (128x128 weight
/// tiles): a band of block_rows rows at a time, each block's amax over all
/// its rows, then its codes (fusion_rt_quantize only: api.cpp).
void run_fp8_tiles(const Request &q) {
  const int64_t br = q.scheme.block_rows, bc = q.scheme.block_cols;
  const int64_t n = q.cols, nbands = ceil_div(q.rows, br);
  const int nthreads = thread_count(q, nbands);
  std::vector<Scratch> scratch;
  alloc_scratch(q, scratch, nthreads, false, std::min(br, q.rows));
  for_bands(nthreads, nbands, [&](int t, int64_t b0, int64_t b1) {
    Scratch &s = scratch[size_t(t)];
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t r0 = b * br, h = std::min(br, q.rows - r0);
      for (int64_t i = 0; i < h; ++i)
        compute_row(q, r0 + i, s.vals.data() + i * n, nullptr, s);
      for (int64_t c = 0; c < ceil_div(n, bc); ++c) {
        const int64_t j0 = c * bc, j1 = std::min(n, j0 + bc);
        Amax a;
        for (int64_t i = 0; i < h; ++i)
          for (int64_t j = j0; j < j1; ++j)
            a.add(s.vals[size_t(i * n + j)]);
        const Fp8BlockScales sc = fp8_block_scales_of(q.scheme, a.amax, a.nan);
        fp8_block_scale_at(q.row_scales, b, c) = sc.dec;
        for (int64_t i = 0; i < h; ++i)
          for (int64_t j = j0; j < j1; ++j)
            store_code(q.row_data, r0 + i, j,
                       fp8_block_code(q.scheme.format, s.vals[size_t(i * n + j)], sc));
      }
    }
  });
}

void run_quantize(const Request &q) {
  const int32_t f = q.scheme.format;
  const int64_t nbands = ceil_div(q.rows, kBand);
  const int nthreads = thread_count(q, nbands);
  const bool want_dbias = q.dbias != nullptr;
  const bool per_row = rowwise_per_row(q);
  // The 32-row band buffer is needed for colwise blocks, 2D blocks, FP8
  // per-tensor data and dbias; rowwise 1D blocks alone go row by row.
  const bool need_band = !per_row || q.col_wise || want_dbias;
  std::vector<Scratch> scratch;
  alloc_scratch(q, scratch, nthreads, want_dbias, need_band ? kBand : 1);
  std::vector<float> partial(want_dbias ? size_t(nbands * q.cols) : 0);

  // Pass 1 (NVFP4, FP8 current scaling, requested amax): tensor amax of the
  // values, NaN ignored.
  const bool need_amax_first =
      f == kNVFP4 || (is_fp8_tensor(f) &&
                      q.scheme.tensor_scaling == FUSION_RT_TENSOR_SCALING_CURRENT);
  float tensor_amax = 0.f;
  if (need_amax_first || q.amax) {
    std::vector<float> amax_t(size_t(nthreads), 0.f);
    for_bands(nthreads, nbands, [&](int t, int64_t b0, int64_t b1) {
      Amax a;
      Scratch &s = scratch[size_t(t)];
      for (int64_t r = b0 * kBand; r < std::min(q.rows, b1 * kBand); ++r) {
        compute_row(q, r, s.vals.data(), nullptr, s);
        for (int64_t j = 0; j < q.cols; ++j)
          a.add(s.vals[size_t(j)]);
      }
      amax_t[size_t(t)] = a.amax;
    });
    for (float a : amax_t)
      tensor_amax = std::max(tensor_amax, a);
  }

  const Globals g = tensor_globals(q.scheme, tensor_amax, q.scale_in);

  if (is_fp8_block_format(f) && q.scheme.block_rows > 1) {
    run_fp8_tiles(q);
    if (q.amax)
      *q.amax = tensor_amax;
    return;
  }

  if (q.swizzled) {
    if (q.row_wise)
      std::memset(q.row_scales_swz, 0,
                  size_t(q.row_scales_padded_rows * q.row_scales_padded_cols));
    if (q.col_wise)
      std::memset(q.col_scales_swz, 0,
                  size_t(q.col_scales_padded_rows * q.col_scales_padded_cols));
  }

  for_bands(nthreads, nbands, [&](int t, int64_t b0, int64_t b1) {
    Scratch &s = scratch[size_t(t)];
    for (int64_t b = b0; b < b1; ++b) {
      int64_t r0 = b * kBand, h = std::min(kBand, q.rows - r0);
      if (!need_band) { // rowwise blocks only: one row at a time, in L1
        for (int64_t i = 0; i < h; ++i) {
          compute_row(q, r0 + i, s.vals.data(), nullptr, s);
          quantize_rows(q, g, r0, i, i + 1, s.vals.data(), nullptr, nullptr);
        }
        continue;
      }
      // Rowwise blocks are quantized while the row is still in L1.
      for (int64_t i = 0; i < h; ++i) {
        compute_band(q, r0, i, i + 1, s, want_dbias);
        if (per_row)
          quantize_rows(q, g, r0, i, i + 1, s.vals.data() + i * q.cols, nullptr,
                        nullptr);
      }
      if (want_dbias)
        band_dbias(q, h, s, partial.data() + b * q.cols);
      quantize_band(q, g, r0, h, s.vals.data(), s);
    }
  });

  if (want_dbias)
    finish_dbias(q, nbands, partial);
  if (q.amax)
    *q.amax = tensor_amax;
  if (q.scale_inv)
    *q.scale_inv = tensor_scale_inv(q.scheme, g);
}

void run_activation(const Request &q) {
  const int64_t nbands = ceil_div(q.rows, kBand);
  const int nthreads = thread_count(q, nbands);
  const bool want_dbias = q.dbias != nullptr;
  std::vector<Scratch> scratch;
  alloc_scratch(q, scratch, nthreads, want_dbias);
  std::vector<float> partial(want_dbias ? size_t(nbands * q.cols) : 0);
  for_bands(nthreads, nbands, [&](int t, int64_t b0, int64_t b1) {
    Scratch &s = scratch[size_t(t)];
    for (int64_t b = b0; b < b1; ++b) {
      int64_t r0 = b * kBand, h = std::min(kBand, q.rows - r0);
      compute_band(q, r0, 0, h, s, want_dbias);
      if (want_dbias)
        band_dbias(q, h, s, partial.data() + b * q.cols);
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < q.cols; ++j)
          store_float(q.act_out, r0 + i, j, s.vals[size_t(i * q.cols + j)]);
    }
  });
  if (want_dbias)
    finish_dbias(q, nbands, partial);
}

void run_dequantize(const Request &q) {
  const int32_t f = q.scheme.format;
  const bool col = q.deq_direction == FUSION_RT_COLWISE;
  const Mat &data = col ? q.col_data : q.row_data;
  const Mat &out = q.deq_out;
  const int64_t bs = scheme_block(q.scheme);
  // Logical [M, N] of the quantized tensor.
  const int64_t m = q.rows, n = q.cols;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      // (di, dj): position in the data view.
      const bool tr = col && q.col_transposed;
      const int64_t di = tr ? c : r, dj = tr ? r : c;
      const float v = decode_code(load_code(data, di, dj), data.dtype);
      uint8_t sb = 0;
      if (is_fp8_block_format(f)) { // rowwise only
        store_float(out, di, dj,
                    dequantize_value(q.scheme, v, 0,
                                     fp8_block_scale_at(q.row_scales,
                                                        r / q.scheme.block_rows,
                                                        c / bs)));
        continue;
      }
      if (!is_fp8_tensor(f)) {
        if (!col) {
          const int64_t sc = c / bs;
          sb = q.swizzled ? uint8_t(q.row_scales_swz[swizzled_scale_offset(
                                r, sc, q.row_scales_padded_cols)])
                          : uint8_t(q.row_scales.data[r * q.row_scales.rs +
                                                      sc * q.row_scales.cs]);
        } else {
          const int64_t rb = r / bs;
          if (q.swizzled)
            sb = uint8_t(q.col_scales_swz[swizzled_scale_offset(
                c, rb, q.col_scales_padded_cols)]);
          else if (q.col_transposed)
            sb = uint8_t(q.col_scales.data[c * q.col_scales.rs +
                                           rb * q.col_scales.cs]);
          else
            sb = uint8_t(q.col_scales.data[rb * q.col_scales.rs +
                                           c * q.col_scales.cs]);
        }
      }
      const float x = dequantize_value(
          q.scheme, v, sb, is_mx(f) ? 0.f : *q.scale_inv);
      store_float(out, di, dj, x);
    }
}

} // namespace

fusion_rt_status cpu_execute(const Request &req) {
  // A value matrix without columns has no rows worth visiting: [2^40, 0] is
  // as empty as [0, 0], and must not loop over 2^35 empty bands. The tensor
  // scalars (amax, scale_inv) are still written, from an empty amax.
  Request empty;
  const Request *q = &req;
  if (req.cols == 0 && req.rows != 0) {
    empty = req;
    empty.rows = 0;
    q = &empty;
  }
  try {
    switch (q->op) {
    case Op::Activation:
      run_activation(*q);
      break;
    case Op::Dequantize:
      run_dequantize(*q);
      break;
    default:
      run_quantize(*q);
      break;
    }
  } catch (const std::bad_alloc &) {
    return FUSION_RT_STATUS_OUT_OF_MEMORY;
  }
  return FUSION_RT_STATUS_SUCCESS;
}

} // namespace fusion_rt
