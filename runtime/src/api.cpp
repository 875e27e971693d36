//===- api.cpp - C entry points: validation and backend dispatch --*- C++ -*-===//
//
// Every entry point validates all of its arguments before anything is
// written, builds one validated Request (backend.h) and hands it to a
// backend. Errors return a status and leave a one-sentence message naming the
// argument in a thread-local buffer.
//
//===----------------------------------------------------------------------===//
#include "fusion_rt.h"
#include "src/backend.h"
#include "src/tuning_store.h"
#ifdef FUSION_RT_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

#include "common/layout.h"
#include "common/scale.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <new>
#include <cstdarg>
#include <cstdio>

namespace fusion_rt {
namespace {

thread_local char g_last_error[512] = "";

fusion_rt_status fail(fusion_rt_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

fusion_rt_status fail(fusion_rt_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(g_last_error, sizeof g_last_error, fmt, ap);
  va_end(ap);
  return st;
}

#define FUSION_RT_TRY(expr)                                                    \
  do {                                                                         \
    fusion_rt_status st_ = (expr);                                             \
    if (st_ != FUSION_RT_STATUS_SUCCESS)                                       \
      return st_;                                                              \
  } while (0)

/// Largest extent accepted in any dimension: keeps every derived size and
/// byte offset far from int64 overflow.
constexpr int64_t kMaxExtent = int64_t(1) << 40;

const char *dtype_name(int32_t d) {
  static const char *names[] = {"BF16",   "F16",    "F32", "F8E4M3",
                                "F8E5M2", "F4E2M1", "E8M0"};
  return d >= 0 && d <= 6 ? names[d] : "an invalid dtype";
}

int64_t dtype_bits(int32_t d) {
  switch (d) {
  case FUSION_RT_BF16:
  case FUSION_RT_F16:
    return 16;
  case FUSION_RT_F32:
    return 32;
  case FUSION_RT_F4E2M1:
    return 4;
  case FUSION_RT_F8E4M3:
  case FUSION_RT_F8E5M2:
  case FUSION_RT_E8M0:
    return 8;
  default:
    return 0;
  }
}

bool is_float_type(int32_t d) {
  return d == FUSION_RT_BF16 || d == FUSION_RT_F16 || d == FUSION_RT_F32;
}

/// True when an optional view is absent (NULL view or NULL data).
bool absent(const fusion_rt_tensor *t) { return !t || !t->data; }

/// Checks a view and collapses it to rank 2.
fusion_rt_status to_mat(const fusion_rt_tensor *t, const char *name, Mat &out) {
  if (!t)
    return fail(FUSION_RT_STATUS_NULL_POINTER, "%s is NULL", name);
  if (!t->data)
    return fail(FUSION_RT_STATUS_NULL_POINTER, "%s.data is NULL", name);
  const int64_t bits = dtype_bits(t->dtype);
  if (!bits)
    return fail(FUSION_RT_STATUS_BAD_DTYPE, "%s.dtype = %d is not a fusion_rt_dtype",
                name, int(t->dtype));
  if (t->rank < 1 || t->rank > FUSION_RT_MAX_RANK)
    return fail(FUSION_RT_STATUS_BAD_SHAPE, "%s.rank = %d is not in 1..4", name,
                int(t->rank));
  const int r = t->rank;
  // A view with no elements (MLIR hands the runtime [R, 0] memrefs with
  // strides [0, 1]) addresses nothing: its strides are not checked.
  bool empty = false;
  for (int i = 0; i < r; ++i)
    empty = empty || t->sizes[i] == 0;
  int64_t max_off = 0;
  for (int i = 0; i < r; ++i) {
    if (t->sizes[i] < 0 || t->sizes[i] > kMaxExtent)
      return fail(FUSION_RT_STATUS_BAD_SHAPE, "%s.sizes[%d] = %lld is out of range",
                  name, i, (long long)t->sizes[i]);
    if (t->strides[i] < 0 || t->strides[i] > kMaxExtent)
      return fail(FUSION_RT_STATUS_BAD_SHAPE, "%s.strides[%d] = %lld is out of range",
                  name, i, (long long)t->strides[i]);
    if (t->strides[i] == 0 && t->sizes[i] > 1 && !empty)
      return fail(FUSION_RT_STATUS_BAD_SHAPE,
                  "%s.strides[%d] is 0 for a dimension of size %lld", name, i,
                  (long long)t->sizes[i]);
    int64_t term;
    if (t->sizes[i] > 0 &&
        (__builtin_mul_overflow(t->sizes[i] - 1, t->strides[i], &term) ||
         __builtin_add_overflow(max_off, term, &max_off)))
      return fail(FUSION_RT_STATUS_BAD_SHAPE, "%s: the extent of the view overflows",
                  name);
  }
  int64_t max_bits;
  if (__builtin_mul_overflow(max_off + 1, bits, &max_bits))
    return fail(FUSION_RT_STATUS_BAD_SHAPE, "%s: the extent of the view overflows",
                name);
  Mat m;
  m.data = static_cast<char *>(t->data);
  m.dtype = t->dtype;
  m.cols = t->sizes[r - 1];
  m.cs = t->strides[r - 1];
  if (r == 1) {
    m.rows = 1;
    m.rs = m.cols; // unused: row 0 only
  } else {
    m.rows = t->sizes[r - 2];
    m.rs = t->strides[r - 2];
    int64_t expect;
    if (__builtin_mul_overflow(m.rs, m.rows, &expect))
      return fail(FUSION_RT_STATUS_BAD_SHAPE, "%s: the extent of the view overflows",
                  name);
    for (int i = r - 3; i >= 0; --i) {
      if (t->sizes[i] > 1 && t->strides[i] != expect && !empty)
        return fail(FUSION_RT_STATUS_BAD_SHAPE,
                    "%s.strides[%d] = %lld does not let the leading dimensions "
                    "collapse onto rows (expected %lld)",
                    name, i, (long long)t->strides[i], (long long)expect);
      if (__builtin_mul_overflow(m.rows, t->sizes[i], &m.rows) ||
          __builtin_mul_overflow(expect, t->sizes[i], &expect))
        return fail(FUSION_RT_STATUS_BAD_SHAPE, "%s: the row count overflows", name);
    }
  }
  int64_t count;
  if (__builtin_mul_overflow(m.rows, m.cols, &count) || count > (int64_t(1) << 50))
    return fail(FUSION_RT_STATUS_BAD_SHAPE, "%s: the element count overflows", name);
  if (bits >= 16 && reinterpret_cast<uintptr_t>(t->data) % uintptr_t(bits / 8))
    return fail(FUSION_RT_STATUS_MISALIGNED,
                "%s.data is not aligned to its %lld-byte %s elements", name,
                (long long)(bits / 8), dtype_name(t->dtype));
  if (empty) {
    // Row-major strides of the collapsed shape, so that no backend ever
    // computes an address from the caller's (meaningless) ones.
    m.cs = 1;
    m.rs = bits == 4 ? m.cols + (m.cols & 1) : m.cols;
  }
  if (bits == 4) {
    if (m.cols > 1 && m.cs != 1)
      return fail(FUSION_RT_STATUS_MISALIGNED,
                  "%s: packed F4E2M1 needs the last stride to be 1 (got %lld)",
                  name, (long long)m.cs);
    if (m.rows > 1 && (m.rs % 2) != 0)
      return fail(FUSION_RT_STATUS_MISALIGNED,
                  "%s: packed F4E2M1 needs an even row stride (got %lld)", name,
                  (long long)m.rs);
    m.cs = 1;
  }
  out = m;
  return FUSION_RT_STATUS_SUCCESS;
}

fusion_rt_status expect_mat(const Mat &m, const char *name, int32_t dtype,
                            int64_t rows, int64_t cols) {
  if (m.dtype != dtype)
    return fail(FUSION_RT_STATUS_BAD_DTYPE, "%s has dtype %s, expected %s", name,
                dtype_name(m.dtype), dtype_name(dtype));
  if (m.rows != rows || m.cols != cols)
    return fail(FUSION_RT_STATUS_BAD_SHAPE,
                "%s has shape [%lld, %lld], expected [%lld, %lld]", name,
                (long long)m.rows, (long long)m.cols, (long long)rows,
                (long long)cols);
  return FUSION_RT_STATUS_SUCCESS;
}

fusion_rt_status get_mat(const fusion_rt_tensor *t, const char *name,
                         int32_t dtype, int64_t rows, int64_t cols, Mat &out) {
  FUSION_RT_TRY(to_mat(t, name, out));
  return expect_mat(out, name, dtype, rows, cols);
}

fusion_rt_status get_float_input(const fusion_rt_tensor *t, const char *name,
                                 Mat &out) {
  FUSION_RT_TRY(to_mat(t, name, out));
  if (!is_float_type(out.dtype))
    return fail(FUSION_RT_STATUS_BAD_DTYPE, "%s has dtype %s, expected BF16, F16 or F32",
                name, dtype_name(out.dtype));
  return FUSION_RT_STATUS_SUCCESS;
}

/// An f32 [1] view (rank 1 [1] or rank 2 [1, 1]).
fusion_rt_status get_scalar(const fusion_rt_tensor *t, const char *name,
                            float *&out) {
  Mat m;
  FUSION_RT_TRY(get_mat(t, name, FUSION_RT_F32, 1, 1, m));
  out = reinterpret_cast<float *>(m.data);
  return FUSION_RT_STATUS_SUCCESS;
}

fusion_rt_status must_be_absent(const fusion_rt_tensor &t, const char *name,
                                const char *why) {
  if (t.data)
    return fail(FUSION_RT_STATUS_BAD_VALUE, "%s is given but %s", name, why);
  return FUSION_RT_STATUS_SUCCESS;
}

fusion_rt_status check_options(const fusion_rt_options *o, int &threads) {
  threads = 0;
  if (!o)
    return FUSION_RT_STATUS_SUCCESS;
  if (o->backend < FUSION_RT_BACKEND_AUTO || o->backend > FUSION_RT_BACKEND_CUDA)
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "options->backend = %d is not a fusion_rt_backend", int(o->backend));
  if (o->num_threads < 0)
    return fail(FUSION_RT_STATUS_BAD_VALUE, "options->num_threads = %d is negative",
                int(o->num_threads));
#ifndef FUSION_RT_HAVE_CUDA
  if (o->backend == FUSION_RT_BACKEND_CUDA)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "options->backend is FUSION_RT_BACKEND_CUDA but this build of "
                "the runtime has no CUDA backend");
#endif
  threads = o->num_threads;
  return FUSION_RT_STATUS_SUCCESS;
}

bool in_range(int32_t v, int32_t lo, int32_t hi) { return v >= lo && v <= hi; }

fusion_rt_status check_scheme(const fusion_rt_quant_scheme *s) {
  if (!s)
    return fail(FUSION_RT_STATUS_NULL_POINTER, "scheme is NULL");
  struct Field {
    int32_t v, hi;
    const char *name;
  } fields[] = {{s->format, 7, "scheme->format"},
                {s->scale_rounding, 3, "scheme->scale_rounding"},
                {s->nan_policy, 1, "scheme->nan_policy"},
                {s->direction, 2, "scheme->direction"},
                {s->colwise_layout, 1, "scheme->colwise_layout"},
                {s->scale_layout, 1, "scheme->scale_layout"},
                {s->nvfp4_block, 1, "scheme->nvfp4_block"},
                {s->elem_rounding, 1, "scheme->elem_rounding"},
                {s->tensor_scaling, 1, "scheme->tensor_scaling"},
                {s->zero_scale, 2, "scheme->zero_scale"},
                {s->nvfp4_recipe, FUSION_RT_NVFP4_RECIPE_RECIPROCAL, "scheme->nvfp4_recipe"}};
  for (const Field &f : fields)
    if (!in_range(f.v, 0, f.hi))
      return fail(FUSION_RT_STATUS_BAD_VALUE, "%s = %d is out of range 0..%d",
                  f.name, int(f.v), int(f.hi));
  if (!(s->amax_epsilon >= 0.f) || std::isinf(s->amax_epsilon))
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "scheme->amax_epsilon must be finite and >= 0");
  const int32_t f = s->format;
  const bool mx = f <= FUSION_RT_FORMAT_MXFP4, nv = f == FUSION_RT_FORMAT_NVFP4;
  const bool fpb = f >= FUSION_RT_FORMAT_FP8_BLOCK_E4M3;
  const bool fp8 = !mx && !nv && !fpb;
  if (fpb) {
    if (s->block_cols < 1)
      return fail(FUSION_RT_STATUS_BAD_VALUE,
                  "scheme->block_cols = %d: an FP8 block holds at least one "
                  "element",
                  int(s->block_cols));
    if (s->block_rows < 1)
      return fail(FUSION_RT_STATUS_BAD_VALUE,
                  "scheme->block_rows = %d: an FP8 block holds at least one "
                  "row",
                  int(s->block_rows));
    if (s->direction != FUSION_RT_ROWWISE)
      return fail(FUSION_RT_STATUS_UNSUPPORTED,
                  "scheme->direction: the FP8 block formats are ROWWISE only");
    if (s->tensor_scaling != FUSION_RT_TENSOR_SCALING_CURRENT)
      return fail(FUSION_RT_STATUS_UNSUPPORTED,
                  "scheme->tensor_scaling DELAYED applies to FP8 per-tensor "
                  "formats only");
  }
  if (s->scale_rounding != FUSION_RT_SCALE_RCEIL && !mx)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->scale_rounding %s applies to MX formats only",
                s->scale_rounding == FUSION_RT_SCALE_FLOOR  ? "FLOOR"
                : s->scale_rounding == FUSION_RT_SCALE_CEIL ? "CEIL"
                                                            : "EVEN");
  if (s->scale_layout == FUSION_RT_SCALES_SWIZZLED && fp8)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->scale_layout SWIZZLED: FP8 per-tensor scaling has no "
                "block scales");
  if (s->scale_layout == FUSION_RT_SCALES_SWIZZLED && fpb)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->scale_layout SWIZZLED: the FP8 block formats' f32 "
                "scales are COMPACT (any strides)");
  if (s->nvfp4_block == FUSION_RT_NVFP4_2D && !nv)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->nvfp4_block 2D applies to NVFP4 only");
  if (s->elem_rounding == FUSION_RT_ROUND_STOCHASTIC &&
      f != FUSION_RT_FORMAT_MXFP4 && !nv)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->elem_rounding STOCHASTIC applies to FP4 formats only");
  if (s->zero_scale != FUSION_RT_ZERO_SCALE_EXACT && !mx)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->zero_scale applies to MX formats only");
  if (s->tensor_scaling == FUSION_RT_TENSOR_SCALING_DELAYED && !fp8)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->tensor_scaling DELAYED applies to FP8 per-tensor formats only");
  const bool multiply = s->nvfp4_recipe == FUSION_RT_NVFP4_RECIPE_MULTIPLY ||
                        s->nvfp4_recipe == FUSION_RT_NVFP4_RECIPE_MULTIPLIER;
  if (multiply && !fpb)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->nvfp4_recipe MULTIPLY / MULTIPLIER applies to the FP8 "
                "block formats only");
  const bool reciprocal = s->nvfp4_recipe == FUSION_RT_NVFP4_RECIPE_RECIPROCAL;
  if (reciprocal && !(fp8 && s->tensor_scaling == FUSION_RT_TENSOR_SCALING_CURRENT))
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->nvfp4_recipe RECIPROCAL applies to FP8 per-tensor "
                "formats with current scaling only");
  if (s->nvfp4_recipe != FUSION_RT_NVFP4_RECIPE_TE && !multiply && !reciprocal &&
      !nv)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->nvfp4_recipe TORCHAO / TORCHAO_BLOCK applies to NVFP4 "
                "only");
  if (s->nvfp4_recipe != FUSION_RT_NVFP4_RECIPE_TE && !multiply && !reciprocal &&
      (s->nvfp4_block != FUSION_RT_NVFP4_1D ||
       s->elem_rounding != FUSION_RT_ROUND_RNE))
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->nvfp4_recipe: the torchao recipes use 1x16 blocks "
                "and RNE elements");
  if (nv && s->direction != FUSION_RT_ROWWISE &&
      s->colwise_layout != FUSION_RT_COLWISE_TRANSPOSED)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->colwise_layout: NVFP4 colwise data is TRANSPOSED only");
  return FUSION_RT_STATUS_SUCCESS;
}

/// 2D FP8 blocks (block_rows > 1: weight tiles) are for fusion_rt_quantize
/// and fusion_rt_dequantize; `what` names the refusing entry point.
fusion_rt_status plain_only_2d(const fusion_rt_quant_scheme &s, const char *what) {
  if (s.format >= FUSION_RT_FORMAT_FP8_BLOCK_E4M3 && s.block_rows > 1)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->block_rows = %d: 2D FP8 blocks (weight tiles) apply to "
                "fusion_rt_quantize, not to %s",
                int(s.block_rows), what);
  return FUSION_RT_STATUS_SUCCESS;
}

int32_t data_dtype(int32_t format) {
  switch (format) {
  case FUSION_RT_FORMAT_MXFP8_E4M3:
  case FUSION_RT_FORMAT_FP8_E4M3:
  case FUSION_RT_FORMAT_FP8_BLOCK_E4M3:
    return FUSION_RT_F8E4M3;
  case FUSION_RT_FORMAT_MXFP8_E5M2:
  case FUSION_RT_FORMAT_FP8_E5M2:
  case FUSION_RT_FORMAT_FP8_BLOCK_E5M2:
    return FUSION_RT_F8E5M2;
  default:
    return FUSION_RT_F4E2M1;
  }
}

/// Shapes for a validated scheme (see fusion_rt_quant_shapes_for).
fusion_rt_quant_shapes shapes_of(const fusion_rt_quant_scheme &s, int64_t m,
                                 int64_t n, bool gated_backward) {
  fusion_rt_quant_shapes sh{};
  const bool row = s.direction != FUSION_RT_COLWISE;
  const bool col = s.direction != FUSION_RT_ROWWISE;
  const bool tr = s.colwise_layout == FUSION_RT_COLWISE_TRANSPOSED;
  const bool fpb = s.format >= FUSION_RT_FORMAT_FP8_BLOCK_E4M3;
  const bool blocks = s.format <= FUSION_RT_FORMAT_NVFP4 || fpb;
  const int64_t bs = fpb ? s.block_cols
                         : s.format == FUSION_RT_FORMAT_NVFP4 ? 16 : 32;
  const bool swz = s.scale_layout == FUSION_RT_SCALES_SWIZZLED;
  if (row) {
    sh.rowwise_data[0] = m;
    sh.rowwise_data[1] = n;
    if (blocks) {
      int64_t c = gated_backward ? 2 * ceil_div(n / 2, bs) : ceil_div(n, bs);
      // FP8 block formats: one scale row per block_rows rows (2D tiles).
      const int64_t r = fpb ? ceil_div(m, int64_t(s.block_rows)) : m;
      sh.rowwise_scales[0] = swz ? round_up(m, 128) : r;
      sh.rowwise_scales[1] = swz ? round_up(c, 4) : c;
    }
  }
  if (col) {
    sh.colwise_data[0] = tr ? n : m;
    sh.colwise_data[1] = tr ? m : n;
    if (blocks) {
      int64_t rb = ceil_div(m, bs);
      if (swz) {
        sh.colwise_scales[0] = round_up(n, 128);
        sh.colwise_scales[1] = round_up(rb, 4);
      } else {
        sh.colwise_scales[0] = tr ? n : rb;
        sh.colwise_scales[1] = tr ? rb : n;
      }
    }
  }
  return sh;
}

fusion_rt_status get_scales(const fusion_rt_tensor &t, const char *name,
                            const fusion_rt_quant_scheme &s, const int64_t shape[2],
                            Mat &out, char *&swz) {
  const int32_t dt = s.format == FUSION_RT_FORMAT_NVFP4 ? FUSION_RT_F8E4M3
                     : s.format >= FUSION_RT_FORMAT_FP8_BLOCK_E4M3
                         ? FUSION_RT_F32
                         : FUSION_RT_E8M0;
  FUSION_RT_TRY(get_mat(&t, name, dt, shape[0], shape[1], out));
  if (s.scale_layout == FUSION_RT_SCALES_SWIZZLED) {
    if ((out.cols > 1 && out.cs != 1) || (out.rows > 1 && out.rs != out.cols))
      return fail(FUSION_RT_STATUS_BAD_SHAPE,
                  "%s: swizzled scales must be a contiguous row-major buffer", name);
    swz = out.data;
  }
  return FUSION_RT_STATUS_SUCCESS;
}

/// Validates the outputs of a quantizer of the [m, n] value matrix and fills
/// them into `req`.
fusion_rt_status check_outputs(const fusion_rt_quant_scheme &s,
                               const fusion_rt_quant_outputs *o, int64_t m,
                               int64_t n, bool gated_backward, bool dbias_ok,
                               Request &req) {
  if (!o)
    return fail(FUSION_RT_STATUS_NULL_POINTER, "outputs is NULL");
  const int32_t f = s.format;
  const bool mx = f <= FUSION_RT_FORMAT_MXFP4, nv = f == FUSION_RT_FORMAT_NVFP4;
  const bool fpb = f >= FUSION_RT_FORMAT_FP8_BLOCK_E4M3;
  const bool fp8 = !mx && !nv && !fpb;
  const fusion_rt_quant_shapes sh = shapes_of(s, m, n, gated_backward);
  req.scheme = s;
  req.rows = m;
  req.cols = n;
  req.seg_cols = gated_backward ? n / 2 : n;
  if (req.seg_cols == 0)
    req.seg_cols = 1;
  req.row_wise = s.direction != FUSION_RT_COLWISE;
  req.col_wise = s.direction != FUSION_RT_ROWWISE;
  req.col_transposed = s.colwise_layout == FUSION_RT_COLWISE_TRANSPOSED;
  req.swizzled = s.scale_layout == FUSION_RT_SCALES_SWIZZLED;
  const int32_t ddt = data_dtype(f);

  if (req.row_wise) {
    FUSION_RT_TRY(get_mat(&o->rowwise_data, "outputs->rowwise_data", ddt,
                          sh.rowwise_data[0], sh.rowwise_data[1], req.row_data));
  } else {
    FUSION_RT_TRY(must_be_absent(o->rowwise_data, "outputs->rowwise_data",
                                 "the scheme's direction is COLWISE"));
    FUSION_RT_TRY(must_be_absent(o->rowwise_scales, "outputs->rowwise_scales",
                                 "the scheme's direction is COLWISE"));
  }
  if (req.col_wise) {
    FUSION_RT_TRY(get_mat(&o->colwise_data, "outputs->colwise_data", ddt,
                          sh.colwise_data[0], sh.colwise_data[1], req.col_data));
  } else {
    FUSION_RT_TRY(must_be_absent(o->colwise_data, "outputs->colwise_data",
                                 "the scheme's direction is ROWWISE"));
    FUSION_RT_TRY(must_be_absent(o->colwise_scales, "outputs->colwise_scales",
                                 "the scheme's direction is ROWWISE"));
  }
  if (fp8) {
    FUSION_RT_TRY(must_be_absent(o->rowwise_scales, "outputs->rowwise_scales",
                                 "FP8 per-tensor scaling has no block scales"));
    FUSION_RT_TRY(must_be_absent(o->colwise_scales, "outputs->colwise_scales",
                                 "FP8 per-tensor scaling has no block scales"));
  } else {
    if (req.row_wise) {
      req.row_scales_padded_rows = sh.rowwise_scales[0];
      req.row_scales_padded_cols = sh.rowwise_scales[1];
      FUSION_RT_TRY(get_scales(o->rowwise_scales, "outputs->rowwise_scales", s,
                               sh.rowwise_scales, req.row_scales,
                               req.row_scales_swz));
    }
    if (req.col_wise) {
      req.col_scales_padded_rows = sh.colwise_scales[0];
      req.col_scales_padded_cols = sh.colwise_scales[1];
      FUSION_RT_TRY(get_scales(o->colwise_scales, "outputs->colwise_scales", s,
                               sh.colwise_scales, req.col_scales,
                               req.col_scales_swz));
    }
  }
  // Tensor scalars.
  if (nv || !absent(&o->amax))
    FUSION_RT_TRY(get_scalar(&o->amax, "outputs->amax", req.amax));
  if (mx || fpb)
    FUSION_RT_TRY(must_be_absent(o->scale_inv, "outputs->scale_inv",
                                 mx ? "MX formats keep their scales in the scale buffers"
                                    : "the FP8 block formats keep their scales in "
                                      "the scale buffers"));
  else if (!(nv && absent(&o->scale_inv))) // NVFP4's S_dec: optional
    FUSION_RT_TRY(get_scalar(&o->scale_inv, "outputs->scale_inv", req.scale_inv));
  if (fp8 && s.tensor_scaling == FUSION_RT_TENSOR_SCALING_DELAYED) {
    float *scale = nullptr;
    FUSION_RT_TRY(get_scalar(&o->scale, "outputs->scale", scale));
    req.scale_in = scale;
  } else {
    FUSION_RT_TRY(must_be_absent(o->scale, "outputs->scale",
                                 "only FP8 delayed scaling reads a scale"));
  }
  if (!absent(&o->dbias)) {
    if (fpb && s.block_rows > 1)
      return fail(FUSION_RT_STATUS_UNSUPPORTED,
                  "outputs->dbias: 2D FP8 blocks (block_rows = %d) quantize "
                  "weights, which take no bias gradient",
                  int(s.block_rows));
    if (!dbias_ok)
      return fail(FUSION_RT_STATUS_UNSUPPORTED,
                  "outputs->dbias: gated activations have no bias gradient");
    Mat d;
    FUSION_RT_TRY(get_mat(&o->dbias, "outputs->dbias", FUSION_RT_F32, 1, n, d));
    req.dbias = reinterpret_cast<float *>(d.data);
    req.dbias_stride = d.cs;
  }
  return FUSION_RT_STATUS_SUCCESS;
}

fusion_rt_status check_activation(const fusion_rt_activation *a, bool gated,
                                  Request &req) {
  if (!a)
    return fail(FUSION_RT_STATUS_NULL_POINTER, "act is NULL");
  if (!in_range(a->kind, 0, FUSION_RT_ACT_LAST))
    return fail(FUSION_RT_STATUS_BAD_VALUE, "act->kind = %d is not a fusion_rt_act_kind",
                int(a->kind));
  if (act_is_gated(a->kind) != gated)
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                gated ? "act->kind = %d is not a gated activation"
                      : "act->kind = %d is gated: use the gated entry point",
                int(a->kind));
  if (!is_float_type(a->intermediate_dtype))
    return fail(FUSION_RT_STATUS_BAD_DTYPE,
                "act->intermediate_dtype = %d is not BF16, F16 or F32",
                int(a->intermediate_dtype));
  if (!std::isfinite(a->limit) || a->limit < 0.f || !std::isfinite(a->offset) ||
      !std::isfinite(a->alpha))
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "act->limit, offset and alpha must be finite (limit >= 0)");
  if (a->backward < FUSION_RT_FORWARD ||
      a->backward > FUSION_RT_BACKWARD_MASK_SELECT)
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "act->backward = %d is not a fusion_rt_backward_mode (0 "
                "forward, 1 backward, 2 backward with masks selected)",
                int(a->backward));
  req.act_kind = a->kind;
  req.backward = a->backward != FUSION_RT_FORWARD;
  req.params.mask_select = a->backward == FUSION_RT_BACKWARD_MASK_SELECT;
  req.inter = a->intermediate_dtype;
  req.params.limit = a->limit;
  req.params.offset = a->offset;
  req.params.alpha = a->alpha;
  return FUSION_RT_STATUS_SUCCESS;
}

/// Inputs of a non-gated activation: x [M, N] and, backward, grad [M, N].
fusion_rt_status check_act_inputs(const fusion_rt_tensor *input,
                                  const fusion_rt_tensor *grad, Request &req) {
  FUSION_RT_TRY(get_float_input(input, "input", req.x));
  if (req.backward) {
    FUSION_RT_TRY(to_mat(grad, "grad", req.grad));
    FUSION_RT_TRY(expect_mat(req.grad, "grad", req.x.dtype, req.x.rows, req.x.cols));
  } else if (!absent(grad)) {
    return fail(FUSION_RT_STATUS_BAD_VALUE, "grad is given to a forward activation");
  }
  return FUSION_RT_STATUS_SUCCESS;
}

/// Inputs of a gated activation: packed [M, 2K] or gate + up [M, K]; grad
/// [M, K] backward. Sets req.x / req.up to the two halves.
fusion_rt_status check_gated_inputs(const fusion_rt_tensor *input,
                                    const fusion_rt_tensor *up,
                                    const fusion_rt_tensor *grad, Request &req) {
  req.gated = true;
  FUSION_RT_TRY(get_float_input(input, "input", req.x));
  if (absent(up)) {
    if (req.x.cols % 2)
      return fail(FUSION_RT_STATUS_BAD_SHAPE,
                  "input: a packed gated input [M, 2K] needs an even column "
                  "count (got %lld)",
                  (long long)req.x.cols);
    req.packed_gated = true;
    const int64_t k = req.x.cols / 2;
    req.x.cols = k;
    req.up = req.x;
    req.up.data += k * req.x.cs * (dtype_bits(req.x.dtype) / 8);
  } else {
    FUSION_RT_TRY(to_mat(up, "up", req.up));
    FUSION_RT_TRY(expect_mat(req.up, "up", req.x.dtype, req.x.rows, req.x.cols));
  }
  if (req.backward) {
    FUSION_RT_TRY(to_mat(grad, "grad", req.grad));
    FUSION_RT_TRY(expect_mat(req.grad, "grad", req.x.dtype, req.x.rows, req.x.cols));
  } else if (!absent(grad)) {
    return fail(FUSION_RT_STATUS_BAD_VALUE, "grad is given to a forward activation");
  }
  return FUSION_RT_STATUS_SUCCESS;
}

/// A bias or scale of a paired epilogue: absent (data NULL), or [H] (rank 1,
/// or rank 2 [1, H]) of F32 or the input dtype.
fusion_rt_status get_epilogue_vector(const fusion_rt_tensor &t, const char *name,
                                     int32_t in_dtype, int64_t h, Mat &out) {
  out = Mat{};
  if (!t.data)
    return FUSION_RT_STATUS_SUCCESS;
  FUSION_RT_TRY(to_mat(&t, name, out));
  if (out.dtype != FUSION_RT_F32 && out.dtype != in_dtype)
    return fail(FUSION_RT_STATUS_BAD_DTYPE, "%s has dtype %s, expected F32 or %s",
                name, dtype_name(out.dtype), dtype_name(in_dtype));
  if (out.rows != 1 || out.cols != h)
    return fail(FUSION_RT_STATUS_BAD_SHAPE,
                "%s has shape [%lld, %lld], expected [%lld] (one value per "
                "output column)",
                name, (long long)out.rows, (long long)out.cols, (long long)h);
  return FUSION_RT_STATUS_SUCCESS;
}

/// Validates epilogue i of a paired projection with h output columns.
fusion_rt_status check_paired_epilogue(const fusion_rt_epilogue &e, int i,
                                       bool gated, int32_t in_dtype, int64_t h,
                                       PairedRequest &req) {
  char name[48];
  if (!in_range(e.kind, FUSION_RT_EPILOGUE_NONE,
                FUSION_RT_EPILOGUE_SOFTPLUS_STABLE_BIAS_SCALE))
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "desc->epilogue%d.kind = %d is not a fusion_rt_epilogue_kind", i,
                int(e.kind));
  if (gated && e.kind != FUSION_RT_EPILOGUE_NONE &&
      e.kind != FUSION_RT_EPILOGUE_BIAS)
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "desc->epilogue%d.kind = %d: a gated pair takes NONE or BIAS "
                "epilogues (the gated activation is the epilogue)",
                i, int(e.kind));
  req.epi_kind[i] = e.kind;
  if (!in_range(e.accumulator_round, FUSION_RT_ROUND_NONE,
                FUSION_RT_ROUND_F16_AFTER_BIAS))
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "desc->epilogue%d.accumulator_round = %d is not a "
                "fusion_rt_accumulator_round",
                i, int(e.accumulator_round));
  // Without a bias, rounding after it is the plain rounding (one form for
  // the paths that read the mode, such as the cuBLAS gate/up type).
  req.round[i] = !e.bias.data && e.accumulator_round >= FUSION_RT_ROUND_BF16_AFTER_BIAS
                     ? e.accumulator_round - 2
                     : e.accumulator_round;
  std::snprintf(name, sizeof name, "desc->epilogue%d.bias", i);
  if (e.kind == FUSION_RT_EPILOGUE_NONE && e.bias.data)
    return fail(FUSION_RT_STATUS_BAD_VALUE, "%s is given but epilogue%d.kind is NONE",
                name, i);
  if (e.kind == FUSION_RT_EPILOGUE_BIAS && !e.bias.data)
    return fail(FUSION_RT_STATUS_NULL_POINTER,
                "%s.data is NULL but epilogue%d.kind is BIAS", name, i);
  FUSION_RT_TRY(get_epilogue_vector(e.bias, name, in_dtype, h, req.bias[i]));
  std::snprintf(name, sizeof name, "desc->epilogue%d.scale", i);
  if (e.kind < FUSION_RT_EPILOGUE_SIGMOID && e.scale.data)
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "%s is given but epilogue%d.kind %s reads no scale", name, i,
                e.kind == FUSION_RT_EPILOGUE_NONE ? "NONE" : "BIAS");
  return get_epilogue_vector(e.scale, name, in_dtype, h, req.scale[i]);
}

/// A paired projection's weight: to_mat, or row groups (Mat::grp) for a
/// [G, w, K] view whose leading dimensions do not collapse (each group's w
/// rows evenly spaced, the groups `strides[0]` apart: one part of a weight
/// whose rows interleave by head group).
fusion_rt_status to_weight_mat(const fusion_rt_tensor *t, const char *name,
                               Mat &out) {
  int64_t dense; // the group stride of rows that collapse
  if (!t || !t->data || t->rank != 3 || t->sizes[0] <= 1 || t->sizes[1] < 1 ||
      t->sizes[2] < 1 ||
      __builtin_mul_overflow(t->sizes[1], t->strides[1], &dense) ||
      t->strides[0] == dense)
    return to_mat(t, name, out); // also what it rejects
  if (t->sizes[1] == 1) { // one row a group: an ordinary [G, K] view
    fusion_rt_tensor v = *t;
    v.rank = 2;
    v.sizes[1] = t->sizes[2], v.strides[1] = t->strides[2];
    return to_mat(&v, name, out);
  }
  // The rows of one group ([w, K]), then the groups.
  fusion_rt_tensor inner = *t;
  inner.rank = 2;
  inner.sizes[0] = t->sizes[1], inner.strides[0] = t->strides[1];
  inner.sizes[1] = t->sizes[2], inner.strides[1] = t->strides[2];
  FUSION_RT_TRY(to_mat(&inner, name, out));
  const int64_t g = t->sizes[0], gs = t->strides[0];
  if (g > kMaxExtent)
    return fail(FUSION_RT_STATUS_BAD_SHAPE,
                "%s.sizes[0] = %lld is out of range", name, (long long)g);
  if (gs <= 0 || gs > kMaxExtent)
    return fail(FUSION_RT_STATUS_BAD_SHAPE,
                "%s.strides[0] = %lld is out of range for %lld groups of rows",
                name, (long long)gs, (long long)g);
  int64_t span, rows, count;
  const int64_t inner_span =
      (out.rows - 1) * out.rs + (out.cols - 1) * out.cs + 1;
  if (__builtin_mul_overflow(g - 1, gs, &span) ||
      __builtin_add_overflow(span, inner_span, &span) ||
      __builtin_mul_overflow(span, dtype_bits(t->dtype), &span) ||
      __builtin_mul_overflow(out.rows, g, &rows) ||
      __builtin_mul_overflow(rows, out.cols, &count) ||
      count > (int64_t(1) << 50))
    return fail(FUSION_RT_STATUS_BAD_SHAPE,
                "%s: the extent of the view overflows", name);
  out.grp = out.rows;
  out.gs = gs;
  out.rows = rows;
  return FUSION_RT_STATUS_SUCCESS;
}

/// Validates a paired-projection descriptor into `req`; with `quantizing`,
/// one whose gated value is quantized (out0 and out1 must be absent).
fusion_rt_status check_paired(const fusion_rt_paired_projection *d,
                              PairedRequest &req, bool quantizing = false) {
  if (!d)
    return fail(FUSION_RT_STATUS_NULL_POINTER, "desc is NULL");
  if (d->accumulate_dtype != FUSION_RT_F32)
    return fail(FUSION_RT_STATUS_BAD_DTYPE,
                "desc->accumulate_dtype = %d: only F32 accumulation is supported",
                int(d->accumulate_dtype));
  const bool gated = d->gated_kind != -1;
  if (quantizing && !gated)
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "desc->gated_kind is -1: fusion_rt_paired_projection_quantize "
                "quantizes the value of a gated pair (gate/up feeding a gated "
                "activation)");
  if (gated && !(in_range(d->gated_kind, 0, FUSION_RT_ACT_LAST) &&
                 act_is_gated(d->gated_kind)))
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "desc->gated_kind = %d is neither -1 nor a gated fusion_rt_act_kind",
                int(d->gated_kind));
  req.gated_kind = d->gated_kind;
  FUSION_RT_TRY(get_float_input(&d->lhs, "desc->lhs", req.lhs));
  const int32_t dt = req.lhs.dtype;
  const int64_t m = req.lhs.rows, k = req.lhs.cols;
  const fusion_rt_tensor *ws[2] = {&d->weight0, &d->weight1};
  const char *wname[2] = {"desc->weight0", "desc->weight1"};
  for (int i = 0; i < 2; ++i) {
    Mat &w = req.w[i];
    FUSION_RT_TRY(to_weight_mat(ws[i], wname[i], w));
    if (w.dtype != dt)
      return fail(FUSION_RT_STATUS_BAD_DTYPE,
                  "%s has dtype %s but desc->lhs has %s (they must match)",
                  wname[i], dtype_name(w.dtype), dtype_name(dt));
    if (w.cols != k)
      return fail(FUSION_RT_STATUS_BAD_SHAPE,
                  "%s is [%lld, %lld]: its K (%lld) differs from desc->lhs's K "
                  "(%lld)",
                  wname[i], (long long)w.rows, (long long)w.cols,
                  (long long)w.cols, (long long)k);
  }
  if (gated && req.w[0].rows != req.w[1].rows)
    return fail(FUSION_RT_STATUS_BAD_SHAPE,
                "desc->weight1 has %lld rows but a gated pair needs as many as "
                "desc->weight0 (%lld)",
                (long long)req.w[1].rows, (long long)req.w[0].rows);
  FUSION_RT_TRY(check_paired_epilogue(d->epilogue0, 0, gated, dt, req.w[0].rows, req));
  FUSION_RT_TRY(check_paired_epilogue(d->epilogue1, 1, gated, dt, req.w[1].rows, req));
  const fusion_rt_tensor *os[2] = {&d->out0, &d->out1};
  const char *oname[2] = {"desc->out0", "desc->out1"};
  for (int i = 0; i < 2; ++i) {
    if (quantizing) {
      FUSION_RT_TRY(must_be_absent(*os[i], oname[i],
                                   "the quantizing form writes `outputs`"));
      continue;
    }
    if (i == 1 && gated) {
      FUSION_RT_TRY(must_be_absent(d->out1, "desc->out1",
                                   "a gated pair has one result (out0)"));
      continue;
    }
    FUSION_RT_TRY(get_float_input(os[i], oname[i], req.out[i]));
    if (req.out[i].rows != m || req.out[i].cols != req.w[i].rows)
      return fail(FUSION_RT_STATUS_BAD_SHAPE,
                  "%s has shape [%lld, %lld], expected [%lld, %lld] (lhs rows x "
                  "weight%d rows)",
                  oname[i], (long long)req.out[i].rows, (long long)req.out[i].cols,
                  (long long)m, (long long)req.w[i].rows, i);
  }
  return FUSION_RT_STATUS_SUCCESS;
}

// The backends of each kind of request, by overload, for dispatch().
fusion_rt_status run_cpu(const Request &req) { return cpu_execute(req); }
fusion_rt_status run_cpu(const PairedRequest &req) {
  return cpu_paired_execute(req);
}
#ifdef FUSION_RT_HAVE_CUDA
bool on_device(const Request &req) { return cuda_request_touches_device(req); }
bool on_device(const PairedRequest &req) {
  return cuda_paired_touches_device(req);
}
/// Whether a call of this thread queued work on the CUDA backend since the
/// last fusion_rt_synchronize.
thread_local bool g_queued_on_device = false;

fusion_rt_status run_cuda(const Request &req, void *stream) {
  g_queued_on_device = true;
  fusion_rt_status st = cuda_execute(req, stream);
  return st == FUSION_RT_STATUS_SUCCESS ? st : fail(st, "%s", cuda::error_detail());
}
fusion_rt_status run_cuda(const PairedRequest &req, void *stream) {
  g_queued_on_device = true;
  fusion_rt_status st = cuda_paired_execute(req, stream);
  return st == FUSION_RT_STATUS_SUCCESS ? st
                                        : fail(st, "%s", cuda_paired_error_detail());
}
#endif

/// Runs a validated request on its backend.
template <typename R>
fusion_rt_status dispatch(const R &req, const fusion_rt_options *opt,
                          void *stream) {
  (void)stream;
#ifdef FUSION_RT_HAVE_CUDA
  // CUDA HOOK: device-pointer routing. A request goes to CUDA when asked to,
  // or (AUTO) when any of its pointers is device memory; the CPU backend
  // never receives a device pointer.
  const int32_t backend = opt ? opt->backend : FUSION_RT_BACKEND_AUTO;
  const bool device = on_device(req);
  if (backend == FUSION_RT_BACKEND_CPU && device)
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "options->backend is FUSION_RT_BACKEND_CPU but a tensor is in "
                "device memory");
  if (backend == FUSION_RT_BACKEND_CUDA || device)
    return run_cuda(req, stream);
#else
  (void)opt;
#endif
  fusion_rt_status st = run_cpu(req);
  if (st == FUSION_RT_STATUS_OUT_OF_MEMORY)
    return fail(st, "the CPU backend could not allocate its scratch buffers");
  return st;
}

void clear_error() { g_last_error[0] = '\0'; }

} // namespace
} // namespace fusion_rt

using namespace fusion_rt;

extern "C" {

int32_t fusion_rt_abi_version(void) { return FUSION_RT_ABI_VERSION; }

const char *fusion_rt_status_string(fusion_rt_status status) {
  switch (status) {
  case FUSION_RT_STATUS_SUCCESS:
    return "FUSION_RT_STATUS_SUCCESS";
  case FUSION_RT_STATUS_NULL_POINTER:
    return "FUSION_RT_STATUS_NULL_POINTER";
  case FUSION_RT_STATUS_MISALIGNED:
    return "FUSION_RT_STATUS_MISALIGNED";
  case FUSION_RT_STATUS_BAD_SHAPE:
    return "FUSION_RT_STATUS_BAD_SHAPE";
  case FUSION_RT_STATUS_BAD_DTYPE:
    return "FUSION_RT_STATUS_BAD_DTYPE";
  case FUSION_RT_STATUS_BAD_VALUE:
    return "FUSION_RT_STATUS_BAD_VALUE";
  case FUSION_RT_STATUS_UNSUPPORTED:
    return "FUSION_RT_STATUS_UNSUPPORTED";
  case FUSION_RT_STATUS_BACKEND_ERROR:
    return "FUSION_RT_STATUS_BACKEND_ERROR";
  case FUSION_RT_STATUS_OUT_OF_MEMORY:
    return "FUSION_RT_STATUS_OUT_OF_MEMORY";
  }
  return "FUSION_RT_STATUS_<unknown>";
}

const char *fusion_rt_last_error_message(void) { return g_last_error; }

fusion_rt_status fusion_rt_synchronize(void *stream) {
  clear_error();
#ifdef FUSION_RT_HAVE_CUDA
  if (!g_queued_on_device)
    return FUSION_RT_STATUS_SUCCESS;
  g_queued_on_device = false;
  if (const char *err = cuda::synchronize(stream))
    return fail(FUSION_RT_STATUS_BACKEND_ERROR,
                "the CUDA stream reported an error: %s", err);
#else
  (void)stream;
#endif
  return FUSION_RT_STATUS_SUCCESS;
}

fusion_rt_status fusion_rt_set_tuning(const char *name, const char *value) {
  clear_error();
  if (!name)
    return fail(FUSION_RT_STATUS_NULL_POINTER, "name is NULL");
  const TuningKnob *k = find_tuning_knob(name);
  if (!k)
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "'%s' is not a tuning knob (runtime/common/tuning.def)", name);
  int64_t v = 0;
  if (!parse_tuning_value(*k, value, v))
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "%s takes %s, \"default\" or \"\"; got '%s'", k->env,
                *k->values ? k->values : "a decimal integer", value);
  set_tuning_value(k->member, v);
  return FUSION_RT_STATUS_SUCCESS;
}

fusion_rt_status fusion_rt_get_tuning(const char *name, int64_t *value) {
  clear_error();
  if (!name || !value)
    return fail(FUSION_RT_STATUS_NULL_POINTER, "%s is NULL",
                !name ? "name" : "value");
  const TuningKnob *k = find_tuning_knob(name);
  if (!k)
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "'%s' is not a tuning knob (runtime/common/tuning.def)", name);
  *value = tuning().*(k->member);
  return FUSION_RT_STATUS_SUCCESS;
}

int32_t fusion_rt_has_cuda(void) {
#ifdef FUSION_RT_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}

void fusion_rt_quant_scheme_init(fusion_rt_quant_scheme *s) {
  if (!s)
    return;
  *s = fusion_rt_quant_scheme{};
  s->format = FUSION_RT_FORMAT_MXFP8_E4M3;
  s->scale_rounding = FUSION_RT_SCALE_RCEIL;
  s->nan_policy = FUSION_RT_NAN_PROPAGATE;
  s->direction = FUSION_RT_ROWWISE;
  s->colwise_layout = FUSION_RT_COLWISE_SAME;
  s->scale_layout = FUSION_RT_SCALES_COMPACT;
  s->nvfp4_block = FUSION_RT_NVFP4_1D;
  s->elem_rounding = FUSION_RT_ROUND_RNE;
  s->tensor_scaling = FUSION_RT_TENSOR_SCALING_CURRENT;
  s->block_rows = 1;
  s->block_cols = 128;
}

void fusion_rt_activation_init(fusion_rt_activation *a) {
  if (!a)
    return;
  a->kind = FUSION_RT_ACT_IDENTITY;
  a->backward = 0;
  a->intermediate_dtype = FUSION_RT_F32;
  a->limit = 7.0f;
  a->offset = 1.0f;
  a->alpha = 1.702f;
}

void fusion_rt_quant_outputs_init(fusion_rt_quant_outputs *o) {
  if (o)
    *o = fusion_rt_quant_outputs{};
}

fusion_rt_status fusion_rt_quant_shapes_for(const fusion_rt_quant_scheme *scheme,
                                            int64_t rows, int64_t cols,
                                            int32_t gated_backward,
                                            fusion_rt_quant_shapes *shapes) {
  clear_error();
  FUSION_RT_TRY(check_scheme(scheme));
  if (!shapes)
    return fail(FUSION_RT_STATUS_NULL_POINTER, "shapes is NULL");
  if (rows < 0 || rows > kMaxExtent || cols < 0 || cols > kMaxExtent)
    return fail(FUSION_RT_STATUS_BAD_SHAPE, "rows and cols must be in 0..2^40");
  if (gated_backward && cols % 2)
    return fail(FUSION_RT_STATUS_BAD_SHAPE,
                "cols = %lld: a gated backward output [M, 2K] has an even width",
                (long long)cols);
  *shapes = shapes_of(*scheme, rows, cols, gated_backward != 0);
  return FUSION_RT_STATUS_SUCCESS;
}

fusion_rt_status fusion_rt_quantize(const fusion_rt_tensor *input,
                                    const fusion_rt_quant_scheme *scheme,
                                    const fusion_rt_quant_outputs *outputs,
                                    const fusion_rt_options *options,
                                    void *stream) {
  clear_error();
  Request req;
  req.op = Op::Quantize;
  FUSION_RT_TRY(check_options(options, req.num_threads));
  FUSION_RT_TRY(check_scheme(scheme));
  FUSION_RT_TRY(get_float_input(input, "input", req.x));
  FUSION_RT_TRY(check_outputs(*scheme, outputs, req.x.rows, req.x.cols, false,
                              true, req));
  return dispatch(req, options, stream);
}

fusion_rt_status fusion_rt_act_quantize(const fusion_rt_tensor *input,
                                        const fusion_rt_tensor *grad,
                                        const fusion_rt_activation *act,
                                        const fusion_rt_quant_scheme *scheme,
                                        const fusion_rt_quant_outputs *outputs,
                                        const fusion_rt_options *options,
                                        void *stream) {
  clear_error();
  Request req;
  req.op = Op::ActQuantize;
  FUSION_RT_TRY(check_options(options, req.num_threads));
  FUSION_RT_TRY(check_activation(act, false, req));
  FUSION_RT_TRY(check_scheme(scheme));
  FUSION_RT_TRY(plain_only_2d(*scheme, "fusion_rt_act_quantize"));
  FUSION_RT_TRY(check_act_inputs(input, grad, req));
  FUSION_RT_TRY(check_outputs(*scheme, outputs, req.x.rows, req.x.cols, false,
                              true, req));
  return dispatch(req, options, stream);
}

fusion_rt_status fusion_rt_gated_act_quantize(
    const fusion_rt_tensor *input, const fusion_rt_tensor *up,
    const fusion_rt_tensor *grad, const fusion_rt_activation *act,
    const fusion_rt_quant_scheme *scheme, const fusion_rt_quant_outputs *outputs,
    const fusion_rt_options *options, void *stream) {
  clear_error();
  Request req;
  req.op = Op::GatedActQuantize;
  FUSION_RT_TRY(check_options(options, req.num_threads));
  FUSION_RT_TRY(check_activation(act, true, req));
  FUSION_RT_TRY(check_scheme(scheme));
  FUSION_RT_TRY(plain_only_2d(*scheme, "fusion_rt_gated_act_quantize"));
  FUSION_RT_TRY(check_gated_inputs(input, up, grad, req));
  const int64_t k = req.x.cols;
  if (req.backward && scheme->format == FUSION_RT_FORMAT_NVFP4 &&
      scheme->nvfp4_block == FUSION_RT_NVFP4_2D)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->nvfp4_block 2D with a gated backward output is not "
                "supported");
  FUSION_RT_TRY(check_outputs(*scheme, outputs, req.x.rows,
                              req.backward ? 2 * k : k, req.backward, false, req));
  return dispatch(req, options, stream);
}

fusion_rt_status fusion_rt_activation_apply(
    const fusion_rt_tensor *input, const fusion_rt_tensor *up,
    const fusion_rt_tensor *grad, const fusion_rt_activation *act,
    const fusion_rt_tensor *output, const fusion_rt_tensor *dbias,
    const fusion_rt_options *options, void *stream) {
  clear_error();
  Request req;
  req.op = Op::Activation;
  FUSION_RT_TRY(check_options(options, req.num_threads));
  if (!act)
    return fail(FUSION_RT_STATUS_NULL_POINTER, "act is NULL");
  const bool gated = in_range(act->kind, 0, FUSION_RT_ACT_LAST) &&
                     act_is_gated(act->kind);
  FUSION_RT_TRY(check_activation(act, gated, req));
  if (gated) {
    FUSION_RT_TRY(check_gated_inputs(input, up, grad, req));
  } else {
    if (!absent(up))
      return fail(FUSION_RT_STATUS_BAD_VALUE,
                  "up is given to a non-gated activation");
    FUSION_RT_TRY(check_act_inputs(input, grad, req));
  }
  req.rows = req.x.rows;
  req.cols = gated && req.backward ? 2 * req.x.cols : req.x.cols;
  req.seg_cols = req.cols;
  FUSION_RT_TRY(get_mat(output, "output", req.inter, req.rows, req.cols, req.act_out));
  if (!absent(dbias)) {
    if (gated)
      return fail(FUSION_RT_STATUS_UNSUPPORTED,
                  "dbias: gated activations have no bias gradient");
    Mat d;
    FUSION_RT_TRY(get_mat(dbias, "dbias", FUSION_RT_F32, 1, req.cols, d));
    req.dbias = reinterpret_cast<float *>(d.data);
    req.dbias_stride = d.cs;
  }
  return dispatch(req, options, stream);
}

fusion_rt_status fusion_rt_dequantize(const fusion_rt_quant_scheme *scheme,
                                      const fusion_rt_quant_outputs *quantized,
                                      int32_t direction,
                                      const fusion_rt_tensor *output,
                                      const fusion_rt_options *options,
                                      void *stream) {
  clear_error();
  Request req;
  req.op = Op::Dequantize;
  FUSION_RT_TRY(check_options(options, req.num_threads));
  FUSION_RT_TRY(check_scheme(scheme));
  if (!quantized)
    return fail(FUSION_RT_STATUS_NULL_POINTER, "quantized is NULL");
  if (direction != FUSION_RT_ROWWISE && direction != FUSION_RT_COLWISE)
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "direction = %d: dequantize one copy, ROWWISE or COLWISE",
                int(direction));
  if (direction == FUSION_RT_COLWISE && scheme->format == FUSION_RT_FORMAT_NVFP4 &&
      scheme->colwise_layout != FUSION_RT_COLWISE_TRANSPOSED)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "scheme->colwise_layout: NVFP4 colwise data is TRANSPOSED only");
  if (direction == FUSION_RT_COLWISE &&
      scheme->format >= FUSION_RT_FORMAT_FP8_BLOCK_E4M3)
    return fail(FUSION_RT_STATUS_UNSUPPORTED,
                "direction COLWISE: the FP8 block formats are ROWWISE only");
  FUSION_RT_TRY(get_float_input(output, "output", req.deq_out));
  const bool tr = direction == FUSION_RT_COLWISE &&
                  scheme->colwise_layout == FUSION_RT_COLWISE_TRANSPOSED;
  const int64_t m = tr ? req.deq_out.cols : req.deq_out.rows;
  const int64_t n = tr ? req.deq_out.rows : req.deq_out.cols;
  fusion_rt_quant_scheme one = *scheme;
  one.direction = direction;
  // The quantized buffers are inputs here: reuse the output checks for the
  // copy being read, ignoring the other copy and the write-only extras.
  fusion_rt_quant_outputs in{};
  if (direction == FUSION_RT_ROWWISE) {
    in.rowwise_data = quantized->rowwise_data;
    in.rowwise_scales = quantized->rowwise_scales;
  } else {
    in.colwise_data = quantized->colwise_data;
    in.colwise_scales = quantized->colwise_scales;
  }
  const int32_t f = scheme->format;
  if (f == FUSION_RT_FORMAT_NVFP4) {
    in.amax = quantized->amax;
    in.scale_inv = quantized->scale_inv;
  } else if (f == FUSION_RT_FORMAT_FP8_E4M3 || f == FUSION_RT_FORMAT_FP8_E5M2) {
    in.scale_inv = quantized->scale_inv;
    one.tensor_scaling = FUSION_RT_TENSOR_SCALING_CURRENT;
  }
  FUSION_RT_TRY(check_outputs(one, &in, m, n, false, false, req));
  // A quantizer may leave NVFP4's decode scale out; decoding reads it.
  if (f == FUSION_RT_FORMAT_NVFP4 && !req.scale_inv)
    return fail(FUSION_RT_STATUS_NULL_POINTER,
                "quantized->scale_inv has no data: NVFP4 dequantization "
                "reads the global decode scale");
  req.deq_direction = direction;
  req.x = req.deq_out; // where the pointers live
  return dispatch(req, options, stream);
}

fusion_rt_status
fusion_rt_paired_projection_run(const fusion_rt_paired_projection *desc,
                                const fusion_rt_options *options, void *stream) {
  clear_error();
  PairedRequest req;
  FUSION_RT_TRY(check_options(options, req.num_threads));
  FUSION_RT_TRY(check_paired(desc, req));
  return dispatch(req, options, stream);
}

fusion_rt_status fusion_rt_paired_projection_quantize(
    const fusion_rt_paired_projection *desc, int32_t intermediate_dtype,
    const fusion_rt_quant_scheme *scheme,
    const fusion_rt_quant_outputs *outputs, const fusion_rt_options *options,
    void *stream) {
  clear_error();
  PairedRequest preq;
  FUSION_RT_TRY(check_options(options, preq.num_threads));
  FUSION_RT_TRY(check_paired(desc, preq, /*quantizing=*/true));
  if (intermediate_dtype != FUSION_RT_BF16 &&
      intermediate_dtype != FUSION_RT_F16 && intermediate_dtype != FUSION_RT_F32)
    return fail(FUSION_RT_STATUS_BAD_DTYPE,
                "intermediate_dtype = %d: the gated value is rounded to BF16, "
                "F16 or F32",
                int(intermediate_dtype));
  Request qreq;
  qreq.op = Op::Quantize;
  qreq.num_threads = preq.num_threads;
  FUSION_RT_TRY(check_scheme(scheme));
  FUSION_RT_TRY(plain_only_2d(*scheme, "fusion_rt_paired_projection_quantize"));
  const int64_t m = preq.lhs.rows, h = preq.w[0].rows;
  // No dbias: the gated value is not an activation input here (the CUDA
  // prefill form, a gated quantizer, has none either).
  FUSION_RT_TRY(check_outputs(*scheme, outputs, m, h, false, false, qreq));
  // The gated value [M, H] between the two steps.
  Mat value;
  value.dtype = intermediate_dtype;
  value.rows = m;
  value.cols = h;
  value.rs = h;
  value.cs = 1;
  // (At least one element: an empty [M, H] still runs the quantizer, which
  // writes a per-tensor amax.)
  const size_t bytes = std::max<size_t>(
      1, size_t(m) * size_t(h)) * (intermediate_dtype == FUSION_RT_F32 ? 4 : 2);
#ifdef FUSION_RT_HAVE_CUDA
  const int32_t backend = options ? options->backend : FUSION_RT_BACKEND_AUTO;
  const bool device = on_device(preq) || on_device(qreq);
  if (backend == FUSION_RT_BACKEND_CPU && device)
    return fail(FUSION_RT_STATUS_BAD_VALUE,
                "options->backend is FUSION_RT_BACKEND_CPU but a tensor is in "
                "device memory");
  if (backend == FUSION_RT_BACKEND_CUDA || device) {
    // Prefill sizes: cuBLAS writes gate and up, the gated quantizer reads
    // them (no f32 intermediate, no separate epilogue pass).
    g_queued_on_device = true;
    bool taken = false;
    fusion_rt_status fst = cuda_paired_quantize_execute(
        preq, qreq, intermediate_dtype, stream, taken);
    if (taken)
      return fst == FUSION_RT_STATUS_SUCCESS ? fst
                                             : fail(fst, "%s", cuda::error_detail());
    void *scratch = nullptr;
    if (fusion_rt_status st = cuda_scratch_alloc(bytes, stream, &scratch))
      return fail(st, "%s", cuda::error_detail());
    value.data = static_cast<char *>(scratch);
    preq.out[0] = value;
    preq.out0_is_scratch = true;
    qreq.x = value;
    qreq.x_is_scratch = true;
    fusion_rt_status st = run_cuda(preq, stream);
    if (st == FUSION_RT_STATUS_SUCCESS)
      st = run_cuda(qreq, stream);
    cuda_scratch_free(scratch, stream);
    return st;
  }
#endif
  std::unique_ptr<char[]> scratch(new (std::nothrow) char[bytes]);
  if (!scratch)
    return fail(FUSION_RT_STATUS_OUT_OF_MEMORY,
                "the CPU backend could not allocate the [%lld, %lld] gated "
                "value",
                (long long)m, (long long)h);
  value.data = scratch.get();
  preq.out[0] = value;
  qreq.x = value;
  fusion_rt_status st = run_cpu(preq);
  if (st == FUSION_RT_STATUS_SUCCESS)
    st = run_cpu(qreq);
  if (st == FUSION_RT_STATUS_OUT_OF_MEMORY)
    return fail(st, "the CPU backend could not allocate its scratch buffers");
  return st;
}

} // extern "C"
