//===- formats_gpu_test.cpp - FP4 / FP8 per tensor / dequantize on CUDA ----===//
//
// A standalone program (no GoogleTest: it runs on the device machine too)
// for the CUDA kernels of runtime/cuda/formats.cu: every request the MXFP8
// tile engine does not take. For every case it runs the CPU backend on host
// memory and the CUDA backend on device memory through the same C ABI and
// compares every output byte, amax, scale_inv and dbias bitwise:
//   - MXFP4 (RCEIL / FLOOR, NaN propagate / ignore, every zero_scale policy),
//     NVFP4 (1x16 and 16x16 blocks, RNE and stochastic rounding), FP8 per
//     tensor (e4m3 / e5m2, current scaling with epsilon and power-of-two
//     scales, delayed scaling), FP8 block scaling (1 x G, f32 scales,
//     every kernel width); rowwise, colwise (SAME and TRANSPOSED) and both;
//     compact and swizzled scales;
//   - plain inputs (bf16 / f16 / f32, strided rows, a column-strided view),
//     every activation forward and backward (with dbias), every gated kind
//     forward and backward (packed and two views, odd K);
//   - shapes with partial blocks, odd widths (packed nibbles with a pad
//     nibble), one row, and (without --quick) benchmark sizes;
//   - fusion_rt_dequantize of every copy produced (f32 and bf16 outputs);
//   - fusion_rt_activation_apply (with dbias);
//   - error paths: a delayed scale in host memory, a host/device mix.
// Activations with transcendental functions (expf / tanhf / erff differ by an
// ulp between CUDA's math library and the host libm) may differ at a
// measured rate below 1e-3 of the bytes; everything else must be identical.
// Without a CUDA device it prints "SKIP: ..." and exits 0.
// Usage: fusion_rt_formats_gpu_tests [--quick] [--seed N]
//
//===----------------------------------------------------------------------===//
#include "fusion_rt.h"
#include "common/activation.h"
#include "test/test_util.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using fusion_rt_test::HostMatrix;
using fusion_rt_test::QuantBuffers;

namespace {

#define CUDA_OK(expr)                                                          \
  do {                                                                         \
    cudaError_t e_ = (expr);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      std::printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorString(e_),      \
                  __FILE__, __LINE__, #expr);                                  \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

uint64_t g_rng = 0x2545f4914f6cdd1dull;
uint32_t rnd() {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return uint32_t(g_rng >> 16);
}
float u2f(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

int g_failures = 0, g_cases = 0;
double g_max_rate = 0;

/// A device copy of a host byte vector (NULL for an empty one).
struct DevBuf {
  void *p = nullptr;
  size_t n = 0;
  void upload(const void *host, size_t bytes) {
    n = bytes;
    if (!n)
      return;
    CUDA_OK(cudaMalloc(&p, n));
    CUDA_OK(cudaMemcpy(p, host, n, cudaMemcpyHostToDevice));
  }
  void download(void *host) const {
    if (n)
      CUDA_OK(cudaMemcpy(host, p, n, cudaMemcpyDeviceToHost));
  }
  ~DevBuf() {
    if (p)
      cudaFree(p);
  }
};

/// Device mirror of a QuantBuffers: same views, device pointers; the device
/// buffers start as `sentinel` bytes (the same as the CPU's, 0xAB, so that
/// a byte written by one backend only is a difference).
struct DevQuant {
  DevBuf row_data, row_scales, col_data, col_scales, amax, scale_inv, scale, dbias;
  fusion_rt_quant_outputs out{};
  void mirror(const QuantBuffers &h, uint8_t sentinel) {
    auto up = [&](DevBuf &d, const void *data, size_t bytes) {
      std::vector<uint8_t> fill(bytes, sentinel);
      d.upload(fill.data(), bytes);
      (void)data;
    };
    out = h.out;
    up(row_data, h.row_data.data(), h.row_data.size());
    up(row_scales, h.row_scales.data(), h.row_scales.size());
    up(col_data, h.col_data.data(), h.col_data.size());
    up(col_scales, h.col_scales.data(), h.col_scales.size());
    up(amax, nullptr, 4);
    up(scale_inv, nullptr, 4);
    scale.upload(&h.scale, 4); // the delayed scale is an input
    up(dbias, nullptr, h.dbias.size() * 4);
    auto rebind = [](fusion_rt_tensor &t, const DevBuf &d) {
      if (t.data)
        t.data = d.p;
    };
    rebind(out.rowwise_data, row_data);
    rebind(out.rowwise_scales, row_scales);
    rebind(out.colwise_data, col_data);
    rebind(out.colwise_scales, col_scales);
    rebind(out.amax, amax);
    rebind(out.scale_inv, scale_inv);
    rebind(out.scale, scale);
    rebind(out.dbias, dbias);
  }
  /// Copies the device outputs into `h`'s vectors (same sizes).
  void into(QuantBuffers &h) const {
    row_data.download(h.row_data.data());
    row_scales.download(h.row_scales.data());
    col_data.download(h.col_data.data());
    col_scales.download(h.col_scales.data());
    if (h.out.amax.data)
      amax.download(&h.amax);
    if (h.out.scale_inv.data)
      scale_inv.download(&h.scale_inv);
    if (!h.dbias.empty())
      dbias.download(h.dbias.data());
  }
};

struct Case {
  std::string name;
  int op = 0; // 0 quantize, 1 act, 2 gated
  int dt = FUSION_RT_BF16;
  int64_t M = 64, N = 64; // rows; input cols (K for gated)
  int64_t pad = 0;        // extra elements per input row
  bool colview = false;   // input as a transposed view (cs != 1)
  fusion_rt_quant_scheme s{};
  int kind = 0, backward = 0, inter = FUSION_RT_F32;
  bool packed = true, dbias = false, amax = false, specials = true;
  bool colmajor_scales = false; // rowwise f32 scales column-major (DeepGEMM)
  bool sweep = false;           // make_sweep's input instead of make_input's
};

bool transcendental(int kind) {
  return kind == FUSION_RT_ACT_GELU || kind == FUSION_RT_ACT_GELU_TANH ||
         kind == FUSION_RT_ACT_SILU || kind == FUSION_RT_ACT_QGELU ||
         kind == FUSION_RT_ACT_SWIGLU || kind == FUSION_RT_ACT_GEGLU ||
         kind == FUSION_RT_ACT_QGEGLU || kind == FUSION_RT_ACT_CLAMPED_SWIGLU ||
         kind == FUSION_RT_ACT_GEGLU_ERF;
}

/// Random input [rows, cols] (+pad) with special values and blocks.
HostMatrix make_input(int dt, int64_t rows, int64_t cols, int64_t pad,
                      bool specials, uint32_t seed) {
  std::vector<float> v = fusion_rt_test::random_values(rows * (cols + pad), seed);
  HostMatrix m = fusion_rt_test::make_matrix(v, rows, cols + pad, dt);
  m.cols = cols; // the pad columns stay in the pitch only
  if (!specials)
    return m;
  const float sp[] = {u2f(0x7fc00000u), -u2f(0x7fc00000u), INFINITY, -INFINITY,
                      -0.0f, 0.0f, u2f(0x00000001u), -u2f(0x00010000u), 3.0e38f,
                      -3.0e38f, 448.f, 6.f, 5.75f, 0.25f, 57344.f, 1.0f};
  const int ns = int(sizeof sp / sizeof sp[0]);
  const int64_t n = std::max<int64_t>(4, rows * cols / 300);
  for (int64_t t = 0; t < n; ++t)
    m.set(int64_t(rnd() % uint32_t(rows)), int64_t(rnd() % uint32_t(cols)),
          sp[rnd() % ns]);
  for (int t = 0; t < 6; ++t) { // whole special / zero blocks
    const int64_t i0 = rnd() % uint32_t(rows), j0 = (rnd() % uint32_t(cols)) / 16 * 16;
    const float x = sp[rnd() % ns];
    const bool col = rnd() & 1;
    for (int64_t k = 0; k < 32; ++k) {
      const int64_t i = col ? i0 / 32 * 32 + k : i0, j = col ? j0 : j0 + k;
      if (i < rows && j < cols)
        m.set(i, j, (k % 3 == 0 && t % 3 != 2) ? x : (t % 2 ? 0.f : -0.0f));
    }
  }
  return m;
}

/// Every magnitude of the 16-bit type `dt` in [2^-4, 6] under every block
/// scale 2^E the type can hold it at (E in steps of 3; bf16 -126..120, f16
/// -10..13), for the MX element conversion: blocks of 32 hold one anchor
/// +-6 * 2^E (the block amax: scale 2^E under RCEIL and FLOOR, so the
/// magnitudes meet the conversion at their own value) at a position that
/// moves from block to block, and 31 magnitudes * 2^E with alternating
/// signs; the sequence repeats until [rows, cols] is full.
HostMatrix make_sweep(int dt, int64_t rows, int64_t cols) {
  const bool bf = dt == FUSION_RT_BF16;
  const int mant = bf ? 7 : 10;
  std::vector<float> grid;
  for (int e = -4; e <= 2; ++e)
    for (int m = 0; m < (1 << mant); ++m) {
      const float y = std::ldexp(1.0f + float(m) / float(1 << mant), e);
      if (y <= 6.f)
        grid.push_back(y);
    }
  std::vector<float> v(size_t(rows * cols));
  size_t gi = 0, blk = 0;
  int E = bf ? -126 : -10;
  for (size_t i = 0; i < v.size(); i += 32, ++blk) {
    const size_t anchor = blk % 32;
    for (size_t j = 0; j < 32 && i + j < v.size(); ++j) {
      float y;
      if (j == anchor) {
        y = blk % 2 ? -6.f : 6.f;
      } else {
        y = grid[gi] * ((gi + blk) % 2 ? -1.f : 1.f);
        if (++gi == grid.size()) {
          gi = 0;
          E += 3;
          if (E > (bf ? 120 : 13))
            E = bf ? -126 : -10;
        }
      }
      v[i + j] = std::ldexp(y, E);
    }
  }
  return fusion_rt_test::make_matrix(v, rows, cols, dt);
}

/// The input as a column-strided view: stores x^T and views it (1, rows).
HostMatrix transposed_storage(const HostMatrix &m) {
  std::vector<float> v(size_t(m.rows * m.cols));
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j)
      v[size_t(j * m.rows + i)] = m.at(i, j);
  return fusion_rt_test::make_matrix(v, m.cols, m.rows, m.dtype);
}

fusion_rt_tensor tensor_of(void *data, const HostMatrix &m, bool colview,
                           int64_t rows, int64_t cols) {
  if (colview)
    return fusion_rt_test::view2d(data, m.dtype, rows, cols, 1, rows);
  return fusion_rt_test::view2d(data, m.dtype, rows, cols, m.rs);
}

size_t first_diff_count(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b,
                        size_t &total) {
  size_t d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    d += a[i] != b[i];
  total += a.size();
  return d;
}

void report(bool ok, const std::string &name, const std::string &what) {
  ++g_cases;
  std::printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", name.c_str(),
              what.empty() ? "" : ": ", what.c_str());
  if (!ok)
    ++g_failures;
}

/// Dequantizes one copy of `q` (CPU) and of `dq` (device) and compares.
void check_dequantize(const Case &c, const QuantBuffers &q, const DevQuant &dq,
                      int dir, int out_dt) {
  const bool tr = dir == FUSION_RT_COLWISE &&
                  q.scheme.colwise_layout == FUSION_RT_COLWISE_TRANSPOSED;
  const int64_t r = tr ? q.cols : q.rows, cl = tr ? q.rows : q.cols;
  const size_t es = out_dt == FUSION_RT_F32 ? 4 : 2;
  std::vector<uint8_t> h(size_t(r * cl) * es, 0xAB), g(h.size(), 0);
  DevBuf dout;
  dout.upload(h.data(), h.size()); // the same sentinel bytes
  fusion_rt_tensor ho = fusion_rt_test::view2d(h.data(), out_dt, r, cl);
  fusion_rt_tensor go = fusion_rt_test::view2d(dout.p, out_dt, r, cl);
  fusion_rt_options cpu{FUSION_RT_BACKEND_CPU, 0}, gpu{FUSION_RT_BACKEND_CUDA, 0};
  const fusion_rt_status sc =
      fusion_rt_dequantize(&q.scheme, &q.out, dir, &ho, &cpu, nullptr);
  const fusion_rt_status sg =
      fusion_rt_dequantize(&q.scheme, &dq.out, dir, &go, &gpu, nullptr);
  CUDA_OK(cudaDeviceSynchronize());
  dout.download(g.data());
  std::string name = c.name + " | dequantize " +
                     (dir == FUSION_RT_ROWWISE ? "rowwise" : "colwise") +
                     (out_dt == FUSION_RT_F32 ? " -> f32" : " -> bf16");
  if (sc != FUSION_RT_STATUS_SUCCESS || sg != FUSION_RT_STATUS_SUCCESS) {
    report(false, name, std::string("status cpu ") + fusion_rt_status_string(sc) +
                            " gpu " + fusion_rt_status_string(sg) + ": " +
                            fusion_rt_last_error_message());
    return;
  }
  size_t total = 0;
  const size_t d = first_diff_count(h, g, total);
  report(d == 0, name, d ? std::to_string(d) + " of " + std::to_string(total) +
                               " bytes differ"
                         : "");
}

void run_case(const Case &c) {
  const bool gated = c.op == 2;
  const int64_t M = c.M, K = c.N;
  const int64_t in_cols = gated && c.packed ? 2 * K : K;
  const int64_t vcols = gated && c.backward ? 2 * K : K;
  // Inputs: [0] x (or packed [gate | up]), then up (two views), then grad.
  std::vector<HostMatrix> in;
  in.push_back(c.sweep
                   ? make_sweep(c.dt, M, in_cols)
                   : make_input(c.dt, M, in_cols, c.pad, c.specials, rnd()));
  if (gated && !c.packed)
    in.push_back(make_input(c.dt, M, K, c.pad, false, rnd()));
  if (c.backward)
    in.push_back(make_input(c.dt, M, K, c.pad, false, rnd()));
  if (c.colview)
    in[0] = transposed_storage(in[0]);
  std::vector<DevBuf> din(in.size());
  for (size_t i = 0; i < in.size(); ++i)
    din[i].upload(in[i].bytes.data(), in[i].bytes.size());

  QuantBuffers q;
  try {
    q.alloc(c.s, M, vcols, gated && c.backward, c.amax, c.dbias);
  } catch (const std::exception &e) {
    report(false, c.name, std::string("alloc: ") + e.what());
    return;
  }
  if (q.has_scale)
    q.scale = 0.5f + float(rnd() % 64) / 16.f; // a delayed scale
  q.bind();
  if (c.colmajor_scales) { // the same [R, G] scales, stored column by column
    q.out.rowwise_scales.strides[0] = 1;
    q.out.rowwise_scales.strides[1] = q.shapes.rowwise_scales[0];
  }
  DevQuant dq;
  dq.mirror(q, 0xAB);
  QuantBuffers g = q; // host copy of the device results
  g.bind();

  fusion_rt_activation a;
  fusion_rt_activation_init(&a);
  a.kind = c.kind;
  a.backward = c.backward;
  a.intermediate_dtype = c.inter;
  auto run = [&](bool dev) {
    fusion_rt_options opt{dev ? FUSION_RT_BACKEND_CUDA : FUSION_RT_BACKEND_CPU, 0};
    std::vector<fusion_rt_tensor> t;
    for (size_t i = 0; i < in.size(); ++i) {
      void *data = dev ? din[i].p : in[i].bytes.data();
      const int64_t cols = i == 0 ? in_cols : K;
      t.push_back(tensor_of(data, in[i], i == 0 && c.colview, M, cols));
    }
    const fusion_rt_quant_outputs *o = dev ? &dq.out : &q.out;
    if (c.op == 0)
      return fusion_rt_quantize(&t[0], &c.s, o, &opt, nullptr);
    if (c.op == 1)
      return fusion_rt_act_quantize(&t[0], c.backward ? &t[1] : nullptr, &a, &c.s,
                                    o, &opt, nullptr);
    const fusion_rt_tensor *up = c.packed ? nullptr : &t[1];
    const fusion_rt_tensor *grad = c.backward ? &t.back() : nullptr;
    return fusion_rt_gated_act_quantize(&t[0], up, grad, &a, &c.s, o, &opt, nullptr);
  };
  const fusion_rt_status sc = run(false);
  if (sc != FUSION_RT_STATUS_SUCCESS) {
    report(false, c.name, std::string("CPU backend: ") + fusion_rt_status_string(sc) +
                              ": " + fusion_rt_last_error_message());
    return;
  }
  const fusion_rt_status sg = run(true);
  CUDA_OK(cudaDeviceSynchronize());
  if (sg != FUSION_RT_STATUS_SUCCESS) {
    report(false, c.name, std::string("CUDA backend: ") +
                              fusion_rt_status_string(sg) + ": " +
                              fusion_rt_last_error_message());
    return;
  }
  dq.into(g);
  const bool tol = c.op != 0 && transcendental(c.kind);
  if (!tol) {
    const std::string d = fusion_rt_test::diff(q, g);
    report(d.empty(), c.name, d);
  } else {
    size_t total = 0, diff = 0;
    diff += first_diff_count(q.row_data, g.row_data, total);
    diff += first_diff_count(q.row_scales, g.row_scales, total);
    diff += first_diff_count(q.col_data, g.col_data, total);
    diff += first_diff_count(q.col_scales, g.col_scales, total);
    const double rate = total ? double(diff) / double(total) : 0.0;
    g_max_rate = std::max(g_max_rate, rate);
    char msg[96];
    std::snprintf(msg, sizeof msg, "%zu of %zu bytes differ (%.2e)", diff, total, rate);
    report(rate <= 1e-3, c.name, msg);
  }
  // Dequantize every copy of a plain quantizer's output.
  if (c.op == 0 || (c.op != 2 && !c.backward)) {
    int v = 0;
    for (int dir : {FUSION_RT_ROWWISE, FUSION_RT_COLWISE}) {
      if ((dir == FUSION_RT_ROWWISE && c.s.direction == FUSION_RT_COLWISE) ||
          (dir == FUSION_RT_COLWISE && c.s.direction == FUSION_RT_ROWWISE))
        continue;
      // The device copy is dequantized from the device outputs; on the host
      // from the CPU's. Tolerance cases start from different codes: skip.
      if (!tol)
        check_dequantize(c, q, dq, dir, (v++ + g_cases) % 2 ? FUSION_RT_BF16
                                                            : FUSION_RT_F32);
    }
  }
}

/// fusion_rt_activation_apply on both backends.
void run_activation(int kind, int bwd, int dt, int out_dt, int64_t M, int64_t K,
                    bool dbias) {
  const bool gated = kind >= FUSION_RT_ACT_SWIGLU;
  const int64_t in_cols = gated ? 2 * K : K, vcols = gated && bwd ? 2 * K : K;
  HostMatrix x = make_input(dt, M, in_cols, 0, true, rnd());
  HostMatrix gr = make_input(dt, M, K, 0, false, rnd());
  DevBuf dx, dg;
  dx.upload(x.bytes.data(), x.bytes.size());
  dg.upload(gr.bytes.data(), gr.bytes.size());
  const size_t es = out_dt == FUSION_RT_F32 ? 4 : 2;
  std::vector<uint8_t> h(size_t(M * vcols) * es, 0xAB), g(h.size());
  std::vector<float> hb(size_t(vcols), -1.f), gb(size_t(vcols), -2.f);
  DevBuf dout, db;
  dout.upload(g.data(), g.size());
  db.upload(gb.data(), gb.size() * 4);
  fusion_rt_activation a;
  fusion_rt_activation_init(&a);
  a.kind = kind;
  a.backward = bwd;
  a.intermediate_dtype = out_dt;
  auto run = [&](bool dev) {
    fusion_rt_options opt{dev ? FUSION_RT_BACKEND_CUDA : FUSION_RT_BACKEND_CPU, 0};
    fusion_rt_tensor tx = fusion_rt_test::view2d(dev ? dx.p : x.bytes.data(), dt, M,
                                                 in_cols);
    fusion_rt_tensor tg = fusion_rt_test::view2d(dev ? dg.p : gr.bytes.data(), dt, M, K);
    fusion_rt_tensor to = fusion_rt_test::view2d(dev ? dout.p : h.data(), out_dt, M,
                                                 vcols);
    fusion_rt_tensor tb = fusion_rt_test::view1d(dev ? db.p : hb.data(),
                                                 FUSION_RT_F32, vcols);
    return fusion_rt_activation_apply(&tx, nullptr, bwd ? &tg : nullptr, &a, &to,
                                      dbias ? &tb : nullptr, &opt, nullptr);
  };
  char name[128];
  std::snprintf(name, sizeof name, "activation_apply kind=%d%s %lldx%lld%s", kind,
                bwd ? " bwd" : "", (long long)M, (long long)K, dbias ? " dbias" : "");
  const fusion_rt_status sc = run(false), sg = run(true);
  CUDA_OK(cudaDeviceSynchronize());
  if (sc != FUSION_RT_STATUS_SUCCESS || sg != FUSION_RT_STATUS_SUCCESS) {
    report(false, name, std::string("status cpu ") + fusion_rt_status_string(sc) +
                            " gpu " + fusion_rt_status_string(sg) + ": " +
                            fusion_rt_last_error_message());
    return;
  }
  dout.download(g.data());
  db.download(gb.data());
  size_t total = 0;
  const size_t d = first_diff_count(h, g, total);
  const bool bias_same = !dbias || std::memcmp(hb.data(), gb.data(), hb.size() * 4) == 0;
  const double rate = double(d) / double(total ? total : 1);
  const bool ok = transcendental(kind) ? rate <= 1e-2 : (d == 0 && bias_same);
  char msg[96];
  std::snprintf(msg, sizeof msg, "%zu of %zu bytes differ%s", d, total,
                dbias ? (bias_same ? ", dbias exact" : ", dbias differs") : "");
  report(ok, name, msg);
}

/// Error paths of the device side: nothing written.
void error_paths() {
  const int64_t M = 64, N = 64;
  HostMatrix x = make_input(FUSION_RT_BF16, M, N, 0, false, 7);
  DevBuf dx;
  dx.upload(x.bytes.data(), x.bytes.size());
  fusion_rt_tensor tx = fusion_rt_test::view2d(dx.p, FUSION_RT_BF16, M, N);
  // 1. FP8 delayed scaling with the scale in host memory.
  {
    fusion_rt_quant_scheme s =
        fusion_rt_test::scheme_of(FUSION_RT_FORMAT_FP8_E4M3, FUSION_RT_ROWWISE);
    s.tensor_scaling = FUSION_RT_TENSOR_SCALING_DELAYED;
    QuantBuffers q;
    q.alloc(s, M, N);
    DevQuant dq;
    dq.mirror(q, 0xCD);
    float host_scale = 2.f;
    dq.out.scale = fusion_rt_test::view1d(&host_scale, FUSION_RT_F32, 1);
    const fusion_rt_status st = fusion_rt_quantize(&tx, &s, &dq.out, nullptr, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    QuantBuffers g = q;
    dq.into(g);
    bool untouched = true;
    for (uint8_t b : g.row_data)
      untouched &= b == 0xCD;
    report(st == FUSION_RT_STATUS_BAD_VALUE && untouched,
           "error path: FP8 delayed scale in host memory",
           std::string(fusion_rt_status_string(st)) + " (" +
               fusion_rt_last_error_message() + ")" +
               (untouched ? ", nothing written" : ", OUTPUT WRITTEN"));
  }
  // 2. NVFP4 with a host amax output.
  {
    fusion_rt_quant_scheme s =
        fusion_rt_test::scheme_of(FUSION_RT_FORMAT_NVFP4, FUSION_RT_ROWWISE);
    QuantBuffers q;
    q.alloc(s, M, N);
    DevQuant dq;
    dq.mirror(q, 0xCD);
    float host_amax = -1.f;
    dq.out.amax = fusion_rt_test::view1d(&host_amax, FUSION_RT_F32, 1);
    const fusion_rt_status st = fusion_rt_quantize(&tx, &s, &dq.out, nullptr, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    QuantBuffers g = q;
    dq.into(g);
    bool untouched = host_amax == -1.f;
    for (uint8_t b : g.row_data)
      untouched &= b == 0xCD;
    report(st == FUSION_RT_STATUS_BAD_VALUE && untouched,
           "error path: NVFP4 amax output in host memory",
           std::string(fusion_rt_status_string(st)) + " (" +
               fusion_rt_last_error_message() + ")" +
               (untouched ? ", nothing written" : ", OUTPUT WRITTEN"));
  }
}

fusion_rt_quant_scheme make_scheme(int fmt, int dir, int v) {
  const int layout = fmt == FUSION_RT_FORMAT_NVFP4 ? FUSION_RT_COLWISE_TRANSPOSED
                                                   : (v / 2) % 2;
  const int swz = fmt <= FUSION_RT_FORMAT_NVFP4 ? (v / 3) % 2 : 0;
  fusion_rt_quant_scheme s = fusion_rt_test::scheme_of(fmt, dir, layout, swz);
  s.nan_policy = (v / 5) % 2;
  if (fmt == FUSION_RT_FORMAT_MXFP4) {
    s.scale_rounding = v % 3; // RCEIL, FLOOR, CEIL
    s.zero_scale = (v / 7) % 3;
  }
  if (fmt == FUSION_RT_FORMAT_NVFP4) {
    s.nvfp4_block = v % 2;
    s.elem_rounding = (v / 4) % 2;
    s.seed = 0x1234567800000000ull + uint64_t(v);
    s.offset = uint64_t(v) * 977;
  }
  if (fmt >= FUSION_RT_FORMAT_FP8_E4M3) {
    s.tensor_scaling = v % 3 == 2;
    s.force_pow2_scale = v % 4 == 1;
    s.amax_epsilon = v % 5 == 3 ? 1e-3f : 0.f;
    // Current scaling: every other case with torch's scale rule, (1 / amax)
    // * max (the reciprocal recipe).
    if (s.tensor_scaling == FUSION_RT_TENSOR_SCALING_CURRENT && v % 2 == 0)
      s.nvfp4_recipe = FUSION_RT_NVFP4_RECIPE_RECIPROCAL;
  }
  return s;
}

std::string describe(const Case &c) {
  static const char *dts[] = {"bf16", "f16", "f32"};
  char b[200];
  std::snprintf(b, sizeof b, "%s %s %lldx%lld %s%s%s%s",
                c.op == 0 ? "quantize" : c.op == 1 ? "act" : "gated", dts[c.dt],
                (long long)c.M, (long long)c.N,
                fusion_rt_test::describe(c.s).c_str(), c.pad ? " strided" : "",
                c.colview ? " colview" : "", c.amax ? " amax" : "");
  std::string s = b;
  if (c.sweep)
    s += " sweep";
  if (c.s.zero_scale)
    s += c.s.zero_scale == 1 ? "/zero_one" : "/zero_min_normal";
  if (c.s.amax_epsilon > 0)
    s += "/eps";
  if (c.s.force_pow2_scale)
    s += "/pow2";
  if (c.colmajor_scales)
    s += "/colmajor-scales";
  if (c.s.block_rows > 1)
    s += "/block-rows=" + std::to_string(c.s.block_rows);
  if (c.s.nvfp4_recipe == FUSION_RT_NVFP4_RECIPE_MULTIPLY)
    s += "/multiply";
  if (c.s.nvfp4_recipe == FUSION_RT_NVFP4_RECIPE_MULTIPLIER)
    s += "/multiplier";
  if (c.op) {
    char a[96];
    std::snprintf(a, sizeof a, " kind=%d%s inter=%s%s%s", c.kind,
                  c.backward == FUSION_RT_BACKWARD_MASK_SELECT ? " bwd-select"
                  : c.backward                                 ? " bwd"
                                                               : "",
                  dts[c.inter], c.dbias ? " dbias" : "",
                  c.op == 2 ? (c.packed ? " packed" : " two-views") : "");
    s += a;
  }
  return s;
}

} // namespace

int main(int argc, char **argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc)
      g_rng = std::strtoull(argv[++i], nullptr, 0) | 1;
  }
  int ndev = 0;
  const cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    std::printf("SKIP: no CUDA device (%s); the format kernels' GPU tests did "
                "not run\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 0;
  }
  if (!fusion_rt_has_cuda()) {
    std::printf("SKIP: this fusion_rt was built without the CUDA backend\n");
    return 0;
  }
  cudaDeviceProp prop;
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d, %d SMs), seed 0x%llx\n", prop.name, prop.major,
              prop.minor, prop.multiProcessorCount, (unsigned long long)g_rng);
  const auto t0 = std::chrono::steady_clock::now();

  const int fmts[] = {FUSION_RT_FORMAT_MXFP4, FUSION_RT_FORMAT_NVFP4,
                      FUSION_RT_FORMAT_FP8_E4M3, FUSION_RT_FORMAT_FP8_E5M2};
  const int dts[] = {FUSION_RT_BF16, FUSION_RT_F16, FUSION_RT_F32};
  const int64_t shapes[][2] = {{128, 512}, {77, 291}, {64, 40}, {33, 1000}, {1, 17},
                               {48, 33}};
  std::vector<Case> cases;
  int v = 0;
  auto add = [&](int dt, const int64_t *sh, const fusion_rt_quant_scheme &s,
                 bool amax) {
    Case c;
    c.dt = dt;
    c.M = sh[0];
    c.N = sh[1];
    c.s = s;
    c.amax = amax;
    cases.push_back(c);
  };
  // Plain quantize: every format x dtype x shape x direction, schemes varied.
  for (int fmt : fmts)
    for (int dt : dts)
      for (auto &sh : shapes)
        for (int dir = 0; dir < 3; ++dir) {
          fusion_rt_quant_scheme s = make_scheme(fmt, dir, v++);
          add(dt, sh, s, v % 4 == 0);
        }
  // NVFP4 torchao recipes (1x16 blocks, RNE), both NaN policies.
  for (int recipe = FUSION_RT_NVFP4_RECIPE_TORCHAO;
       recipe <= FUSION_RT_NVFP4_RECIPE_TORCHAO_BLOCK; ++recipe)
    for (int dt : dts)
      for (auto &sh : shapes)
        for (int dir = 0; dir < 3; ++dir) {
          fusion_rt_quant_scheme s = make_scheme(FUSION_RT_FORMAT_NVFP4, dir, v++);
          s.nvfp4_block = FUSION_RT_NVFP4_1D;
          s.elem_rounding = FUSION_RT_ROUND_RNE;
          s.nvfp4_recipe = recipe;
          add(dt, sh, s, true);
        }
  // Strided rows (16-byte aligned and not) and a column-strided view.
  for (int fmt : fmts)
    for (int k = 0; k < 3; ++k) {
      Case c;
      c.M = 96;
      c.N = 256;
      c.pad = k == 0 ? 8 : 3;
      c.colview = k == 2;
      c.pad = c.colview ? 0 : c.pad;
      c.s = make_scheme(fmt, FUSION_RT_BOTH, v++);
      cases.push_back(c);
    }
  // FP8 block scaling (rowwise, f32 scales): the widths of the lane-group
  // kernel (8 .. 256) and of the warp kernel (7, 96, 300, a whole row),
  // e4m3 / e5m2, an amax floor, UE8M0 scales, both NaN policies.
  auto block_scheme = [&](int fmt, int g) {
    fusion_rt_quant_scheme s = fusion_rt_test::scheme_of(fmt, FUSION_RT_ROWWISE);
    s.block_cols = g;
    s.nan_policy = (v / 2) % 2;
    s.amax_epsilon = v % 3 == 1 ? 1e-10f : 0.f;
    s.force_pow2_scale = v % 4 == 3;
    ++v;
    return s;
  };
  for (int fmt : {FUSION_RT_FORMAT_FP8_BLOCK_E4M3, FUSION_RT_FORMAT_FP8_BLOCK_E5M2})
    for (int g : {8, 16, 32, 64, 128, 256, 7, 96, 300, 0})
      for (int dt : dts)
        for (auto &sh : shapes) {
          fusion_rt_quant_scheme s = block_scheme(fmt, g ? g : int(sh[1]));
          add(dt, sh, s, v % 5 == 0);
        }
  // Wide rowwise blocks from 16-bit rows (fp8_wide_row_kernel of
  // fp8_block.cu: 1024 <= block <= 16384, N % 8 == 0, rows 16-byte aligned;
  // the warp kernel of formats.cu otherwise): per-row scaling (block = N)
  // of 2 and 8 chunks a thread, a whole-width and a partial last block,
  // a row wider than the widest block; strided rows.
  {
    const int64_t shw[][3] = {{5, 4096, 0},    {3, 7168, 0},     {2, 16384, 0},
                              {4, 1032, 0},    {3, 3000, 1024},  {2, 20000, 16384},
                              {2, 20000, 0},   {7, 2048, 2048}};
    int k = 0;
    for (int fmt : {FUSION_RT_FORMAT_FP8_BLOCK_E4M3, FUSION_RT_FORMAT_FP8_BLOCK_E5M2})
      for (int dt : {FUSION_RT_BF16, FUSION_RT_F16})
        for (auto &sh : shw) {
          Case c;
          c.dt = dt;
          c.M = sh[0];
          c.N = sh[1];
          c.pad = k % 4 == 1 ? 8 : k % 4 == 3 ? 3 : 0;
          c.s = block_scheme(fmt, int(sh[2] ? sh[2] : sh[1]));
          c.colmajor_scales = k++ % 3 == 1;
          cases.push_back(c);
        }
  }
  // 1x128 groups from 16-bit rows (the stream kernels of fp8_block.cu where
  // rows are 16-byte aligned: pad 0 and 8; the general kernel at pad 3):
  // special values and blocks, odd group counts, one row, column-major
  // scales; SwiGLU into every intermediate type, packed and two views.
  {
    const int64_t sh128[][2] = {{3, 384}, {1, 128}, {130, 256}, {37, 1152}};
    int k = 0;
    for (int fmt : {FUSION_RT_FORMAT_FP8_BLOCK_E4M3, FUSION_RT_FORMAT_FP8_BLOCK_E5M2})
      for (int dt : {FUSION_RT_BF16, FUSION_RT_F16})
        for (auto &sh : sh128)
          for (int pad : {0, 8, 3}) {
            Case c;
            c.dt = dt;
            c.M = sh[0];
            c.N = sh[1];
            c.pad = pad;
            c.s = block_scheme(fmt, 128);
            c.colmajor_scales = k++ % 3 == 1;
            cases.push_back(c);
          }
    // 2D blocks (128x128 weight tiles, 3x8 with partial blocks both ways):
    // every input type, strided and column-strided inputs, column-major
    // scales, the tensor amax output; then the device dequantize.
    const int64_t sh2d[][4] = {{260, 300, 128, 128}, {10, 21, 3, 8}, {129, 256, 128, 128}};
    for (int fmt : {FUSION_RT_FORMAT_FP8_BLOCK_E4M3, FUSION_RT_FORMAT_FP8_BLOCK_E5M2})
      for (int dt : dts)
        for (auto &sh : sh2d) {
          Case c;
          c.dt = dt;
          c.M = sh[0];
          c.N = sh[1];
          c.pad = k % 4 == 1 ? 3 : 0;
          c.colview = k % 4 == 2;
          c.s = block_scheme(fmt, int(sh[3]));
          c.s.block_rows = int(sh[2]);
          c.colmajor_scales = k % 3 == 0;
          c.amax = k++ % 2 == 0;
          cases.push_back(c);
        }
    // FP8 per tensor rowwise on the same stream kernels (current scaling:
    // an amax pass then the cast; delayed: the cast, with the amax when
    // asked), plain and SwiGLU forward.
    for (int fmt : {FUSION_RT_FORMAT_FP8_E4M3, FUSION_RT_FORMAT_FP8_E5M2})
      for (int dt : {FUSION_RT_BF16, FUSION_RT_F16})
        for (auto &sh : sh128)
          for (int pad : {0, 8}) {
            Case c;
            c.dt = dt;
            c.M = sh[0];
            c.N = sh[1];
            c.pad = pad;
            c.s = make_scheme(fmt, FUSION_RT_ROWWISE, v++);
            c.amax = k++ % 2 == 0;
            cases.push_back(c);
          }
    // FP8 per tensor with the transposed colwise copy, alone and beside the
    // rowwise codes (TE's cast + transpose), from 16-bit rows: the kernels
    // of fp8_transpose.cu where N % 8 == 0 (partial 64x32 warp tiles both
    // ways, row counts not a multiple of 8, so byte stores of the [N, M]
    // rows; 16-byte aligned strided rows), formats.cu's fp8_tensor_kernel
    // where N % 8 != 0 or rows are not 16-byte aligned (pad 3); both
    // scalings, the amax output, power-of-two scales.
    {
      const int64_t sht[][2] = {{256, 1024}, {33, 1000}, {129, 72}, {1, 8},
                                {70, 40}, {64, 36}};
      for (int fmt : {FUSION_RT_FORMAT_FP8_E4M3, FUSION_RT_FORMAT_FP8_E5M2})
        for (int dt : {FUSION_RT_BF16, FUSION_RT_F16})
          for (auto &sh : sht)
            for (int dir : {FUSION_RT_COLWISE, FUSION_RT_BOTH}) {
              Case c;
              c.dt = dt;
              c.M = sh[0];
              c.N = sh[1];
              c.pad = k % 5 == 1 ? 8 : k % 5 == 3 ? 3 : 0;
              c.s = fusion_rt_test::scheme_of(fmt, dir, FUSION_RT_COLWISE_TRANSPOSED, 0);
              c.s.tensor_scaling = k % 2;
              c.s.force_pow2_scale = k % 3 == 2;
              if (k % 4 == 0)
                c.s.nvfp4_recipe = FUSION_RT_NVFP4_RECIPE_RECIPROCAL;
              c.amax = k++ % 4 < 2;
              cases.push_back(c);
            }
    }
    for (int inter : {FUSION_RT_F32, FUSION_RT_BF16})
      for (int fmt : {FUSION_RT_FORMAT_FP8_E4M3, FUSION_RT_FORMAT_FP8_E5M2})
        for (int scaling = 0; scaling < 2; ++scaling) {
          Case c;
          c.op = 2;
          c.kind = FUSION_RT_ACT_SWIGLU;
          c.dt = k % 2 ? FUSION_RT_F16 : FUSION_RT_BF16;
          c.inter = inter;
          c.packed = k % 3 != 0;
          c.M = 21;
          c.N = 384;
          c.s = make_scheme(fmt, FUSION_RT_ROWWISE, v++);
          c.s.tensor_scaling = scaling;
          c.amax = k++ % 2 == 1;
          cases.push_back(c);
        }
    for (int inter : {FUSION_RT_F32, FUSION_RT_BF16, FUSION_RT_F16})
      for (int packed = 0; packed < 2; ++packed)
        for (int dt : {FUSION_RT_BF16, FUSION_RT_F16}) {
          Case c;
          c.op = 2;
          c.kind = FUSION_RT_ACT_SWIGLU;
          c.dt = dt;
          c.inter = inter;
          c.packed = packed;
          c.M = 19 + k % 4;
          c.N = 640; // 5 groups a row: odd group counts
          c.pad = k % 3 == 2 ? 8 : 0;
          c.s = block_scheme(k % 2 ? FUSION_RT_FORMAT_FP8_BLOCK_E5M2
                                   : FUSION_RT_FORMAT_FP8_BLOCK_E4M3,
                             128);
          c.colmajor_scales = k++ % 4 == 1;
          cases.push_back(c);
        }
    // The MULTIPLY recipe (TE's Float8BlockScaling, torchao's blockwise
    // training: codes of x * (max / amax)): the stream kernels (1x128,
    // aligned 16-bit rows), the general kernels (pad 3, f32, other widths),
    // the 2D tile kernels, SwiGLU forward; every third case the MULTIPLIER
    // recipe (the same codes, the multiplier written: torchao.float8's
    // rowwise scaling).
    auto multiply = [&](fusion_rt_quant_scheme s) {
      s.nvfp4_recipe = k % 3 == 0 ? FUSION_RT_NVFP4_RECIPE_MULTIPLIER
                                  : FUSION_RT_NVFP4_RECIPE_MULTIPLY;
      s.amax_epsilon = k % 2 ? 1e-12f : 0.f;
      return s;
    };
    for (int fmt : {FUSION_RT_FORMAT_FP8_BLOCK_E4M3, FUSION_RT_FORMAT_FP8_BLOCK_E5M2})
      for (int dt : dts)
        for (auto &sh : sh128)
          for (int g : {128, 96, 7}) {
            Case c;
            c.dt = dt;
            c.M = sh[0];
            c.N = sh[1];
            c.pad = k % 3 == 2 ? 3 : (k % 3) * 8;
            c.s = multiply(block_scheme(fmt, g));
            c.colmajor_scales = k++ % 4 == 1;
            cases.push_back(c);
          }
    for (int fmt : {FUSION_RT_FORMAT_FP8_BLOCK_E4M3, FUSION_RT_FORMAT_FP8_BLOCK_E5M2})
      for (int dt : dts)
        for (auto &sh : sh2d) {
          Case c;
          c.dt = dt;
          c.M = sh[0];
          c.N = sh[1];
          c.pad = k % 4 == 1 ? 3 : 0;
          c.s = multiply(block_scheme(fmt, int(sh[3])));
          c.s.block_rows = int(sh[2]);
          c.amax = k++ % 2 == 0;
          cases.push_back(c);
        }
    for (int inter : {FUSION_RT_F32, FUSION_RT_BF16})
      for (int dt : {FUSION_RT_BF16, FUSION_RT_F16}) {
        Case c;
        c.op = 2;
        c.kind = FUSION_RT_ACT_SWIGLU;
        c.dt = dt;
        c.inter = inter;
        c.packed = k % 2;
        c.M = 21;
        c.N = 640;
        c.s = multiply(block_scheme(FUSION_RT_FORMAT_FP8_BLOCK_E4M3, 128));
        ++k;
        cases.push_back(c);
      }
    // FP4 rowwise on the stream kernels of fp4_stream.cu (16-bit rows of a
    // multiple of 128, 16-byte aligned: pad 0 and 8; pad 3 takes
    // formats.cu): both formats, compact and swizzled scales, both NaN
    // policies, MX scale roundings and zero-scale policies, the torchao
    // NVFP4 recipes, the amax output; then every forward activation kind
    // into the input's type and f32 (f16 under bf16 takes formats.cu),
    // gated kinds packed and as two views.
    for (int fmt : {FUSION_RT_FORMAT_MXFP4, FUSION_RT_FORMAT_NVFP4})
      for (int dt : {FUSION_RT_BF16, FUSION_RT_F16})
        for (auto &sh : sh128)
          for (int pad : {0, 8, 3}) {
            Case c;
            c.dt = dt;
            c.M = sh[0];
            c.N = sh[1];
            c.pad = pad;
            c.s = make_scheme(fmt, FUSION_RT_ROWWISE, v++);
            c.s.scale_layout = k % 2 ? FUSION_RT_SCALES_SWIZZLED : FUSION_RT_SCALES_COMPACT;
            if (fmt == FUSION_RT_FORMAT_NVFP4) {
              c.s.nvfp4_block = FUSION_RT_NVFP4_1D;
              c.s.elem_rounding = FUSION_RT_ROUND_RNE;
              c.s.nvfp4_recipe = k % 5 == 3   ? FUSION_RT_NVFP4_RECIPE_TORCHAO
                                 : k % 5 == 4 ? FUSION_RT_NVFP4_RECIPE_TORCHAO_BLOCK
                                              : FUSION_RT_NVFP4_RECIPE_TE;
            }
            c.amax = k++ % 3 == 1;
            cases.push_back(c);
          }
    // MXFP4 over make_sweep's magnitudes (the packed 16-bit conversion of
    // the plain stream kernel): both types, RCEIL, FLOOR and EVEN.
    for (int dt : {FUSION_RT_BF16, FUSION_RT_F16})
      for (int rounding : {FUSION_RT_SCALE_RCEIL, FUSION_RT_SCALE_FLOOR,
                           FUSION_RT_SCALE_EVEN}) {
        Case c;
        c.dt = dt;
        c.M = dt == FUSION_RT_BF16 ? 600 : 1400;
        c.N = 128;
        c.sweep = true;
        c.s = make_scheme(FUSION_RT_FORMAT_MXFP4, FUSION_RT_ROWWISE, v++);
        c.s.scale_rounding = rounding;
        c.s.scale_layout = FUSION_RT_SCALES_COMPACT;
        cases.push_back(c);
      }
    for (int kind = 1; kind <= FUSION_RT_ACT_LAST; ++kind)
      for (int fmt : {FUSION_RT_FORMAT_MXFP4, FUSION_RT_FORMAT_NVFP4})
        for (int inter = 0; inter < 2; ++inter) {
          Case c;
          c.op = kind >= 7 ? 2 : 1;
          c.kind = kind;
          c.dt = (kind + inter) % 2 ? FUSION_RT_F16 : FUSION_RT_BF16;
          c.inter = inter ? c.dt : (k % 5 == 0 ? FUSION_RT_F16 : FUSION_RT_F32);
          c.packed = k % 2;
          c.M = 17 + k % 5;
          c.N = kind % 2 ? 384 : 640;
          c.pad = k % 4 == 3 ? 8 : 0;
          c.s = make_scheme(fmt, FUSION_RT_ROWWISE, v++);
          c.s.scale_layout = k % 3 == 1 ? FUSION_RT_SCALES_SWIZZLED : FUSION_RT_SCALES_COMPACT;
          if (fmt == FUSION_RT_FORMAT_NVFP4) {
            c.s.nvfp4_block = FUSION_RT_NVFP4_1D;
            c.s.elem_rounding = FUSION_RT_ROUND_RNE;
          }
          c.amax = k++ % 4 == 2;
          cases.push_back(c);
        }
  }
  for (int kind = 0; kind <= FUSION_RT_ACT_LAST; ++kind)
    for (int bwd = 0; bwd < 2; ++bwd) {
      Case c;
      c.op = kind >= 7 ? 2 : 1;
      c.kind = kind;
      c.backward = bwd;
      c.dt = dts[(kind + bwd) % 3];
      c.inter = kind % 3 == 0 ? FUSION_RT_F32 : FUSION_RT_BF16;
      c.packed = (kind + bwd) % 2 == 0;
      c.M = 40 + kind;
      c.N = kind % 2 ? 384 : 331; // gated backward: blocks of each half
      c.dbias = bwd && c.op == 1;
      c.s = block_scheme(FUSION_RT_FORMAT_FP8_BLOCK_E4M3, kind % 4 ? 128 : 64);
      cases.push_back(c);
    }
  // Activations: every kind forward and backward (dbias), formats rotating.
  for (int kind = 0; kind <= 6; ++kind)
    for (int bwd = 0; bwd < 2; ++bwd) {
      Case c;
      c.op = 1;
      c.kind = kind;
      c.backward = bwd;
      c.dt = dts[(kind + bwd) % 3];
      c.inter = kind % 3 == 0 ? FUSION_RT_F32 : c.dt;
      c.M = kind % 2 ? 96 : 70;
      c.N = kind % 2 ? 256 : 203;
      c.s = make_scheme(fmts[(kind + bwd) % 4], v % 3, v);
      ++v;
      c.dbias = bwd;
      c.amax = kind == 4;
      cases.push_back(c);
    }
  // Gated: every kind forward and backward, packed and two views, odd K
  // (the backward's second segment then starts on an odd nibble).
  for (int kind = FUSION_RT_ACT_SWIGLU; kind <= FUSION_RT_ACT_LAST; ++kind)
    for (int bwd = 0; bwd < 2; ++bwd) {
      Case c;
      c.op = 2;
      c.kind = kind;
      c.backward = bwd;
      c.dt = dts[(kind + bwd) % 3];
      c.inter = kind % 2 ? c.dt : FUSION_RT_F32;
      c.packed = (kind + bwd) % 2 == 0;
      c.M = 64 + kind;
      c.N = kind % 2 ? 96 : 101;
      c.s = make_scheme(fmts[(kind + 2 * bwd) % 4], v % 3, v);
      if (bwd) // 16x16 blocks of a gated backward: UNSUPPORTED (both backends)
        c.s.nvfp4_block = FUSION_RT_NVFP4_1D;
      ++v;
      cases.push_back(c);
    }
  // Exact activations with dbias into every format and direction.
  for (int fmt : fmts)
    for (int dir = 0; dir < 3; ++dir) {
      Case c;
      c.op = 1;
      c.kind = dir == 0 ? FUSION_RT_ACT_RELU : dir == 1 ? FUSION_RT_ACT_SRELU
                                                        : FUSION_RT_ACT_IDENTITY;
      c.backward = 1;
      c.dbias = true;
      c.amax = true;
      c.dt = dir % 2 ? FUSION_RT_F16 : FUSION_RT_BF16;
      c.inter = FUSION_RT_BF16;
      c.M = 70 + 26 * dir;
      c.N = 203;
      c.s = make_scheme(fmt, dir, v++);
      cases.push_back(c);
    }
  if (!quick) {
    const int64_t big[][2] = {{4096, 7168}, {2048, 4096}};
    for (int fmt : fmts)
      for (int dir = 0; dir < 3; ++dir) {
        Case c;
        c.M = big[dir % 2][0];
        c.N = big[dir % 2][1];
        c.specials = false;
        c.s = make_scheme(fmt, dir, v++);
        cases.push_back(c);
      }
    for (int dt : {FUSION_RT_BF16, FUSION_RT_F32}) { // a 7168x4096 weight, 128x128
      Case c;
      c.dt = dt;
      c.M = 7168;
      c.N = 4096;
      c.specials = false;
      c.s = block_scheme(FUSION_RT_FORMAT_FP8_BLOCK_E4M3, 128);
      c.s.block_rows = 128;
      cases.push_back(c);
    }
    for (int g : {128, 7168}) { // SwiGLU -> FP8 1x128 / per row at a model size
      Case c;
      c.op = 2;
      c.kind = FUSION_RT_ACT_SWIGLU;
      c.inter = FUSION_RT_BF16;
      c.M = 4096;
      c.N = 7168;
      c.specials = false;
      c.s = block_scheme(FUSION_RT_FORMAT_FP8_BLOCK_E4M3, g);
      cases.push_back(c);
    }
    for (int fmt : {FUSION_RT_FORMAT_NVFP4, FUSION_RT_FORMAT_MXFP4}) {
      Case c; // SiLU -> FP4 rowwise at a model size (fp4_stream.cu)
      c.op = 1;
      c.kind = FUSION_RT_ACT_SILU;
      c.inter = FUSION_RT_BF16;
      c.M = 4096;
      c.N = 7168;
      c.specials = false;
      c.s = fusion_rt_test::scheme_of(fmt, FUSION_RT_ROWWISE);
      cases.push_back(c);
    }
    Case c; // SwiGLU -> NVFP4 rowwise at a model size
    c.op = 2;
    c.kind = FUSION_RT_ACT_SWIGLU;
    c.inter = FUSION_RT_BF16;
    c.M = 2048;
    c.N = 7168;
    c.specials = false;
    c.s = fusion_rt_test::scheme_of(FUSION_RT_FORMAT_NVFP4, FUSION_RT_ROWWISE);
    cases.push_back(c);
  }
  // Backward with masked derivatives selected (FUSION_RT_BACKWARD_MASK_SELECT):
  // the backward cases of the kinds with a mask again, appended last so that
  // the cases above keep their inputs.
  for (size_t i = 0, n = cases.size(); i < n; ++i) {
    Case c = cases[i];
    const bool masked = fusion_rt::act_has_mask(c.kind); // the registry's mask column
    if (c.op == 0 || c.backward != FUSION_RT_BACKWARD || !masked || c.M * c.N > (1 << 20))
      continue;
    c.backward = FUSION_RT_BACKWARD_MASK_SELECT;
    cases.push_back(c);
  }
  for (Case &c : cases) {
    c.name = describe(c);
    run_case(c);
  }
  // fusion_rt_activation_apply.
  run_activation(FUSION_RT_ACT_RELU, 1, FUSION_RT_BF16, FUSION_RT_BF16, 77, 203, true);
  run_activation(FUSION_RT_ACT_SRELU, 0, FUSION_RT_F32, FUSION_RT_F32, 64, 256, true);
  run_activation(FUSION_RT_ACT_GELU, 0, FUSION_RT_BF16, FUSION_RT_BF16, 64, 256, false);
  run_activation(FUSION_RT_ACT_REGLU, 1, FUSION_RT_F16, FUSION_RT_F16, 33, 100, false);
  run_activation(FUSION_RT_ACT_SWIGLU, 0, FUSION_RT_BF16, FUSION_RT_BF16, 64, 128,
                 false);
  error_paths();
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%d checks, %d failures, max mismatch rate of transcendental "
              "activations %.2e, %.1f s\n",
              g_cases, g_failures, g_max_rate, secs);
  std::printf(g_failures ? "FORMAT GPU TESTS FAILED\n" : "FORMAT GPU TESTS PASSED\n");
  return g_failures ? 1 : 0;
}
