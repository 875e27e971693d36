//===- test_util.h - helpers shared by the runtime tests ----------*- C++ -*-===//
#ifndef FUSION_RT_TEST_UTIL_H
#define FUSION_RT_TEST_UTIL_H

#include "fusion_rt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fusion_rt_test {

/// A row-major rank-2 view; `rs` defaults to `cols`.
fusion_rt_tensor view2d(void *data, int32_t dtype, int64_t rows, int64_t cols,
                        int64_t rs = -1, int64_t cs = 1);
/// A rank-1 view of n elements.
fusion_rt_tensor view1d(void *data, int32_t dtype, int64_t n);

/// A host matrix of BF16 / F16 / F32 elements, with an optional row pitch.
struct HostMatrix {
  std::vector<uint8_t> bytes;
  int32_t dtype = FUSION_RT_F32;
  int64_t rows = 0, cols = 0, rs = 0;
  fusion_rt_tensor view();
  float at(int64_t i, int64_t j) const;
  void set(int64_t i, int64_t j, float v); ///< rounds v to dtype
};
HostMatrix make_matrix(const std::vector<float> &vals, int64_t rows, int64_t cols,
                       int32_t dtype, int64_t pitch = -1);

/// Random values: normal, with per-32-block magnitudes spread over 2^-20..2^20.
std::vector<float> random_values(int64_t n, uint32_t seed, bool wide = true);

/// Output buffers of a quantizer, sized by fusion_rt_quant_shapes_for and
/// filled with a sentinel byte.
struct QuantBuffers {
  fusion_rt_quant_scheme scheme{};
  int64_t rows = 0, cols = 0;
  fusion_rt_quant_shapes shapes{};
  std::vector<uint8_t> row_data, row_scales, col_data, col_scales;
  float amax = 0, scale_inv = 0, scale = 1;
  std::vector<float> dbias;
  bool has_amax = false, has_scale_inv = false, has_scale = false;
  fusion_rt_quant_outputs out{};

  /// want_amax: request amax even where optional; want_dbias: [cols] f32.
  void alloc(const fusion_rt_quant_scheme &s, int64_t rows, int64_t cols,
             bool gated_backward = false, bool want_amax = false,
             bool want_dbias = false, uint8_t sentinel = 0xAB);
  /// Rebuilds `out` from the vectors (after a copy).
  void bind();
  /// Element (i, j) of a data buffer (byte or nibble).
  uint8_t row_code(int64_t i, int64_t j) const;
  uint8_t col_code(int64_t i, int64_t j) const; ///< in colwise data coords
  /// The row stride, in elements, of the rowwise / colwise data views.
  int64_t row_pitch() const;
  int64_t col_pitch() const;
  bool is_fp4() const;
};

/// "" when equal, otherwise a description of the first difference.
std::string diff(const QuantBuffers &a, const QuantBuffers &b);

/// Name of a scheme for failure messages.
std::string describe(const fusion_rt_quant_scheme &s);

fusion_rt_quant_scheme scheme_of(int32_t format, int32_t direction,
                                 int32_t colwise_layout = FUSION_RT_COLWISE_SAME,
                                 int32_t scale_layout = FUSION_RT_SCALES_COMPACT);

} // namespace fusion_rt_test

#endif // FUSION_RT_TEST_UTIL_H
