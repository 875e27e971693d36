//===- paired_projection.cpp - CPU reference of the paired projection -*- C++ -*-===//
//
// The oracle for the CUDA kernels (docs/paired-projections.md):
//   y_i[m, n] = sum over k = 0, 1, ..., K-1 in that order of
//               f32(lhs[m, k]) * f32(w_i[n, k]),
// accumulated in fp32 starting from +0.0, one rounding per product and one
// per add (the runtime builds with -ffp-contract=off, so no FMA). For BF16
// and F16 inputs every product is exact in fp32, so only the adds round.
// Then, when the request says so, y rounded to bf16 / f16 (what a bf16
// Linear's output holds), the epilogue of common/epilogue.h in fp32, and one
// rounding to the output dtype. Output rows are independent; worker threads take contiguous
// runs of lhs rows, so the result does not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#include "common/convert.h"
#include "common/epilogue.h"
#include "src/backend.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace fusion_rt {
namespace {

/// Element (i, j) of a validated BF16 / F16 / F32 view as fp32.
inline float load(const Mat &a, int64_t i, int64_t j) {
  const int64_t off = a.row_at(i) + j * a.cs;
  if (a.dtype == FUSION_RT_F32) {
    float f;
    std::memcpy(&f, a.data + off * 4, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, a.data + off * 2, 2);
  return a.dtype == FUSION_RT_BF16 ? bf16_to_f32(h) : f16_to_f32(h);
}

/// Stores fp32 `v` rounded once to the view's dtype.
inline void store(const Mat &a, int64_t i, int64_t j, float v) {
  const int64_t off = i * a.rs + j * a.cs;
  if (a.dtype == FUSION_RT_F32) {
    std::memcpy(a.data + off * 4, &v, 4);
    return;
  }
  const uint16_t h = a.dtype == FUSION_RT_BF16 ? f32_to_bf16(v) : f32_to_f16(v);
  std::memcpy(a.data + off * 2, &h, 2);
}

/// The weights converted to fp32 once per call, row-major [H_i, K] (the same
/// values load() gives).
struct Weights {
  std::vector<float> w[2];
};

/// The fp32 dot product of x (K values) with w (K values), sequential over k.
inline float dot(const float *x, const float *w, int64_t k) {
  float acc = 0.f;
  for (int64_t j = 0; j < k; ++j)
    acc = acc + x[j] * w[j];
  return acc;
}

/// Rows [m0, m1) of the outputs. `x` is the caller's scratch row of K floats
/// (allocated before any thread starts, so that no allocation can fail in a
/// worker where nothing could report it).
void run_rows(const PairedRequest &q, const Weights &wf, float *x, int64_t m0,
              int64_t m1) {
  const int64_t k = q.lhs.cols;
  const bool gated = q.gated_kind >= 0;
  const ActParams params; // gated kinds use the defaults (the ABI has none)
  for (int64_t m = m0; m < m1; ++m) {
    for (int64_t j = 0; j < k; ++j)
      x[j] = load(q.lhs, m, j);
    if (gated) {
      const bool hb0 = q.bias[0].present(), hb1 = q.bias[1].present();
      for (int64_t n = 0; n < q.w[0].rows; ++n) {
        const float a = biased_accumulator(
            q.round[0], dot(x, wf.w[0].data() + n * k, k), hb0,
            hb0 ? load(q.bias[0], 0, n) : 0.f);
        const float g = biased_accumulator(
            q.round[1], dot(x, wf.w[1].data() + n * k, k), hb1,
            hb1 ? load(q.bias[1], 0, n) : 0.f);
        store(q.out[0], m, n, gated_forward(q.gated_kind, a, g, params));
      }
      continue;
    }
    for (int i = 0; i < 2; ++i) {
      const bool hb = q.bias[i].present(), hs = q.scale[i].present();
      for (int64_t n = 0; n < q.w[i].rows; ++n) {
        const float b = hb ? load(q.bias[i], 0, n) : 0.f;
        const float s = hs ? load(q.scale[i], 0, n) : 1.f;
        const float t = biased_accumulator(
            q.round[i], dot(x, wf.w[i].data() + n * k, k), hb, b);
        store(q.out[i], m, n, apply_epilogue(q.epi_kind[i], t, hs, s));
      }
    }
  }
}

} // namespace

fusion_rt_status cpu_paired_execute(const PairedRequest &q) {
  const int64_t m = q.lhs.rows, k = q.lhs.cols;
  if (m == 0)
    return FUSION_RT_STATUS_SUCCESS;
  // Threads only pay when there is real work: ~1 M multiply-adds each.
  const int64_t work =
      m * (q.w[0].rows + q.w[1].rows) * std::max<int64_t>(q.lhs.cols, 1);
  int t = q.num_threads > 0
              ? q.num_threads
              : int(std::max(1u, std::thread::hardware_concurrency()));
  t = int(std::min<int64_t>({int64_t(t), m, std::max<int64_t>(1, work >> 20)}));
  // Every allocation happens here, where a failure is reported as a status:
  // the fp32 weights and one scratch row per thread.
  const size_t row = size_t(std::max<int64_t>(k, 1));
  Weights wf;
  std::vector<float> scratch;
  std::vector<std::thread> pool;
  try {
    for (int i = 0; i < 2; ++i)
      wf.w[i].resize(size_t(std::max<int64_t>(q.w[i].rows * k, 1)));
    scratch.resize(row * size_t(t));
    pool.reserve(size_t(t - 1));
  } catch (...) {
    return FUSION_RT_STATUS_OUT_OF_MEMORY;
  }
  for (int i = 0; i < 2; ++i)
    for (int64_t n = 0; n < q.w[i].rows; ++n)
      for (int64_t j = 0; j < k; ++j)
        wf.w[i][size_t(n * k + j)] = load(q.w[i], n, j);
  if (t <= 1) {
    run_rows(q, wf, scratch.data(), 0, m);
    return FUSION_RT_STATUS_SUCCESS;
  }
  const int64_t per = (m + t - 1) / t;
  int64_t done_by_caller_from = m;
  for (int w = 1; w < t; ++w) {
    const int64_t b0 = w * per, b1 = std::min(m, b0 + per);
    if (b0 >= b1)
      break;
    try {
      pool.emplace_back(run_rows, std::cref(q), std::cref(wf),
                        scratch.data() + row * size_t(w), b0, b1);
    } catch (...) {
      // A worker that cannot be started leaves its rows to this thread.
      done_by_caller_from = b0;
      break;
    }
  }
  run_rows(q, wf, scratch.data(), 0, std::min(m, per));
  if (done_by_caller_from < m)
    run_rows(q, wf, scratch.data(), done_by_caller_from, m);
  for (std::thread &th : pool)
    th.join();
  return FUSION_RT_STATUS_SUCCESS;
}

} // namespace fusion_rt
