//===- test_util.cpp - helpers shared by the runtime tests ----------------===//
#include "test_util.h"

#include "common/convert.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <random>
#include <sstream>

namespace fusion_rt_test {

fusion_rt_tensor view2d(void *data, int32_t dtype, int64_t rows, int64_t cols,
                        int64_t rs, int64_t cs) {
  fusion_rt_tensor t{};
  t.data = data;
  t.dtype = dtype;
  t.rank = 2;
  t.sizes[0] = rows;
  t.sizes[1] = cols;
  t.strides[0] = rs < 0 ? cols : rs;
  t.strides[1] = cs;
  return t;
}

fusion_rt_tensor view1d(void *data, int32_t dtype, int64_t n) {
  fusion_rt_tensor t{};
  t.data = data;
  t.dtype = dtype;
  t.rank = 1;
  t.sizes[0] = n;
  t.strides[0] = 1;
  return t;
}

static int64_t elem_bytes(int32_t dtype) {
  return dtype == FUSION_RT_F32 ? 4 : 2;
}

fusion_rt_tensor HostMatrix::view() {
  return view2d(bytes.data(), dtype, rows, cols, rs);
}

float HostMatrix::at(int64_t i, int64_t j) const {
  const uint8_t *p = bytes.data() + (i * rs + j) * elem_bytes(dtype);
  if (dtype == FUSION_RT_F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return dtype == FUSION_RT_BF16 ? fusion_rt::bf16_to_f32(h)
                                 : fusion_rt::f16_to_f32(h);
}

void HostMatrix::set(int64_t i, int64_t j, float v) {
  uint8_t *p = bytes.data() + (i * rs + j) * elem_bytes(dtype);
  if (dtype == FUSION_RT_F32) {
    std::memcpy(p, &v, 4);
    return;
  }
  uint16_t h = dtype == FUSION_RT_BF16 ? fusion_rt::f32_to_bf16(v)
                                       : fusion_rt::f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

HostMatrix make_matrix(const std::vector<float> &vals, int64_t rows, int64_t cols,
                       int32_t dtype, int64_t pitch) {
  HostMatrix m;
  m.dtype = dtype;
  m.rows = rows;
  m.cols = cols;
  m.rs = pitch < 0 ? cols : pitch;
  m.bytes.assign(size_t(std::max<int64_t>(1, rows * m.rs) * elem_bytes(dtype)),
                 0x5A);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      m.set(i, j, vals[size_t(i * cols + j)]);
  return m;
}

std::vector<float> random_values(int64_t n, uint32_t seed, bool wide) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::uniform_int_distribution<int> ex(-20, 20);
  std::vector<float> v{};
  v.resize(size_t(n));
  float mag = 1.f;
  for (int64_t i = 0; i < n; ++i) {
    if (wide && i % 32 == 0)
      mag = std::ldexp(1.f, ex(rng));
    v[size_t(i)] = nd(rng) * mag;
  }
  return v;
}

bool QuantBuffers::is_fp4() const {
  return scheme.format == FUSION_RT_FORMAT_MXFP4 ||
         scheme.format == FUSION_RT_FORMAT_NVFP4;
}

int64_t QuantBuffers::row_pitch() const {
  int64_t c = shapes.rowwise_data[1];
  return is_fp4() ? (c + 1) / 2 * 2 : c;
}
int64_t QuantBuffers::col_pitch() const {
  int64_t c = shapes.colwise_data[1];
  return is_fp4() ? (c + 1) / 2 * 2 : c;
}

static size_t data_bytes(int64_t rows, int64_t pitch, bool fp4) {
  return size_t(std::max<int64_t>(1, fp4 ? rows * pitch / 2 : rows * pitch));
}

void QuantBuffers::alloc(const fusion_rt_quant_scheme &s, int64_t r, int64_t c,
                         bool gated_backward, bool want_amax, bool want_dbias,
                         uint8_t sentinel) {
  scheme = s;
  rows = r;
  cols = c;
  fusion_rt_status st =
      fusion_rt_quant_shapes_for(&s, r, c, gated_backward ? 1 : 0, &shapes);
  if (st != FUSION_RT_STATUS_SUCCESS)
    throw std::runtime_error(fusion_rt_last_error_message());
  row_data.assign(data_bytes(shapes.rowwise_data[0], row_pitch(), is_fp4()),
                  sentinel);
  col_data.assign(data_bytes(shapes.colwise_data[0], col_pitch(), is_fp4()),
                  sentinel);
  // FP8 block scales are f32: four bytes each.
  const int64_t sbytes = s.format >= FUSION_RT_FORMAT_FP8_BLOCK_E4M3 ? 4 : 1;
  row_scales.assign(
      size_t(std::max<int64_t>(1, shapes.rowwise_scales[0] *
                                      shapes.rowwise_scales[1] * sbytes)),
      sentinel);
  col_scales.assign(
      size_t(std::max<int64_t>(1, shapes.colwise_scales[0] * shapes.colwise_scales[1])),
      sentinel);
  const bool fp8 = s.format == FUSION_RT_FORMAT_FP8_E4M3 ||
                   s.format == FUSION_RT_FORMAT_FP8_E5M2;
  const bool nv = s.format == FUSION_RT_FORMAT_NVFP4;
  has_amax = nv || want_amax;
  has_scale_inv = nv || fp8;
  has_scale = fp8 && s.tensor_scaling == FUSION_RT_TENSOR_SCALING_DELAYED;
  std::memset(&amax, sentinel, sizeof amax);
  std::memset(&scale_inv, sentinel, sizeof scale_inv);
  dbias.assign(want_dbias ? size_t(c) : 0, 0.f);
  if (want_dbias)
    std::memset(dbias.data(), sentinel, dbias.size() * sizeof(float));
  bind();
}

void QuantBuffers::bind() {
  fusion_rt_quant_outputs_init(&out);
  const int32_t f = scheme.format;
  const int32_t dt = f == FUSION_RT_FORMAT_MXFP8_E4M3 || f == FUSION_RT_FORMAT_FP8_E4M3 ||
                             f == FUSION_RT_FORMAT_FP8_BLOCK_E4M3
                         ? FUSION_RT_F8E4M3
                     : f == FUSION_RT_FORMAT_MXFP8_E5M2 || f == FUSION_RT_FORMAT_FP8_E5M2 ||
                             f == FUSION_RT_FORMAT_FP8_BLOCK_E5M2
                         ? FUSION_RT_F8E5M2
                         : FUSION_RT_F4E2M1;
  const bool fp8_block = f >= FUSION_RT_FORMAT_FP8_BLOCK_E4M3;
  const int32_t sdt = f == FUSION_RT_FORMAT_NVFP4 ? FUSION_RT_F8E4M3
                      : fp8_block                 ? FUSION_RT_F32
                                                  : FUSION_RT_E8M0;
  if (scheme.direction != FUSION_RT_COLWISE)
    out.rowwise_data = view2d(row_data.data(), dt, shapes.rowwise_data[0],
                              shapes.rowwise_data[1], row_pitch());
  if (scheme.direction != FUSION_RT_ROWWISE)
    out.colwise_data = view2d(col_data.data(), dt, shapes.colwise_data[0],
                              shapes.colwise_data[1], col_pitch());
  const bool blocks = f <= FUSION_RT_FORMAT_NVFP4 || fp8_block;
  if (blocks && scheme.direction != FUSION_RT_COLWISE)
    out.rowwise_scales = view2d(row_scales.data(), sdt, shapes.rowwise_scales[0],
                                shapes.rowwise_scales[1]);
  if (blocks && scheme.direction != FUSION_RT_ROWWISE)
    out.colwise_scales = view2d(col_scales.data(), sdt, shapes.colwise_scales[0],
                                shapes.colwise_scales[1]);
  if (has_amax)
    out.amax = view1d(&amax, FUSION_RT_F32, 1);
  if (has_scale_inv)
    out.scale_inv = view1d(&scale_inv, FUSION_RT_F32, 1);
  if (has_scale)
    out.scale = view1d(&scale, FUSION_RT_F32, 1);
  if (!dbias.empty())
    out.dbias = view1d(dbias.data(), FUSION_RT_F32, int64_t(dbias.size()));
}

static uint8_t code_at(const std::vector<uint8_t> &buf, int64_t pitch, bool fp4,
                       int64_t i, int64_t j) {
  if (!fp4)
    return buf[size_t(i * pitch + j)];
  int64_t nib = i * pitch + j;
  uint8_t b = buf[size_t(nib / 2)];
  return (nib & 1) ? uint8_t(b >> 4) : uint8_t(b & 0xf);
}

uint8_t QuantBuffers::row_code(int64_t i, int64_t j) const {
  return code_at(row_data, row_pitch(), is_fp4(), i, j);
}
uint8_t QuantBuffers::col_code(int64_t i, int64_t j) const {
  return code_at(col_data, col_pitch(), is_fp4(), i, j);
}

static std::string diff_bytes(const char *what, const std::vector<uint8_t> &a,
                              const std::vector<uint8_t> &b) {
  if (a.size() != b.size())
    return std::string(what) + ": sizes differ";
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) {
      std::ostringstream os;
      os << what << "[" << i << "]: 0x" << std::hex << int(a[i]) << " vs 0x"
         << int(b[i]);
      return os.str();
    }
  return "";
}

std::string diff(const QuantBuffers &a, const QuantBuffers &b) {
  std::string d;
  if (!(d = diff_bytes("rowwise_data", a.row_data, b.row_data)).empty() ||
      !(d = diff_bytes("rowwise_scales", a.row_scales, b.row_scales)).empty() ||
      !(d = diff_bytes("colwise_data", a.col_data, b.col_data)).empty() ||
      !(d = diff_bytes("colwise_scales", a.col_scales, b.col_scales)).empty())
    return d;
  if (std::memcmp(&a.amax, &b.amax, 4))
    return "amax differs";
  if (std::memcmp(&a.scale_inv, &b.scale_inv, 4))
    return "scale_inv differs";
  if (a.dbias.size() != b.dbias.size() ||
      (!a.dbias.empty() &&
       std::memcmp(a.dbias.data(), b.dbias.data(), a.dbias.size() * 4)))
    return "dbias differs";
  return "";
}

std::string describe(const fusion_rt_quant_scheme &s) {
  static const char *fmt[] = {"mxfp8_e4m3",     "mxfp8_e5m2", "mxfp4",
                              "nvfp4",          "fp8_e4m3",   "fp8_e5m2",
                              "fp8_block_e4m3", "fp8_block_e5m2"};
  static const char *dir[] = {"row", "col", "both"};
  std::ostringstream os;
  // Out-of-range fields (the ABI fuzzer's corruptions) print as numbers.
  if (s.format >= 0 && s.format < 8)
    os << fmt[s.format];
  else
    os << "format " << s.format;
  os << "/";
  if (s.direction >= 0 && s.direction < 3)
    os << dir[s.direction];
  else
    os << "direction " << s.direction;
  os
     << (s.colwise_layout ? "/T" : "") << (s.scale_layout ? "/swz" : "")
     << (s.scale_rounding == 1 ? "/floor" : s.scale_rounding == 2 ? "/ceil" : "")
     << (s.nan_policy ? "/ignore" : "")
     << (s.nvfp4_block ? "/2d" : "") << (s.elem_rounding ? "/sr" : "")
     << (s.tensor_scaling ? "/delayed" : "")
     << (s.nvfp4_recipe ? "/recipe" + std::to_string(s.nvfp4_recipe) : "");
  if (s.format >= FUSION_RT_FORMAT_FP8_BLOCK_E4M3)
    os << "/1x" << s.block_cols << (s.force_pow2_scale ? "/ue8m0" : "");
  return os.str();
}

fusion_rt_quant_scheme scheme_of(int32_t format, int32_t direction,
                                 int32_t colwise_layout, int32_t scale_layout) {
  fusion_rt_quant_scheme s;
  fusion_rt_quant_scheme_init(&s);
  s.format = format;
  s.direction = direction;
  s.colwise_layout = format == FUSION_RT_FORMAT_NVFP4
                         ? FUSION_RT_COLWISE_TRANSPOSED
                         : colwise_layout;
  s.scale_layout =
      format >= FUSION_RT_FORMAT_FP8_E4M3 ? FUSION_RT_SCALES_COMPACT : scale_layout;
  return s;
}

} // namespace fusion_rt_test
