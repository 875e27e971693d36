//===- paired_projection_gpu_test.cpp - CUDA paired projection vs CPU and fp64 -===//
//
// A standalone program (no GoogleTest, so that it runs on the device machine).
// For every case it draws fresh random inputs, runs the CPU reference on host
// memory and the CUDA backend on device memory through the same C ABI, and
// checks:
//  - accuracy: norm-wise relative error ||out - ref|| / ||ref|| against an
//    fp64 reference <= 1e-5 for f32 outputs (<= 8e-3 for bf16, 1e-3 f16);
//  - agreement with the CPU reference (reported: the paths differ only in the
//    fp32 summation order; max relative difference printed);
//  - the generic path: bit-identical to the CPU reference for the epilogues
//    without transcendental functions, <= 4 ulp (f32) with them;
//  - every output element written, nothing written outside the outputs
//    (guard elements around each output), the gemv path deterministic;
//  - device-side argument errors: a host/device mix returns a status and
//    writes nothing.
// Paths are forced through FUSION_RT_PAIRED_PATH (gemv / mma / blas /
// generic; mma with f32 operands falls back to the selector's path); "auto"
// is the selector. The gemv and mma paths also run at forced launch shapes.
//
// Without a CUDA device it prints "SKIP: ..." and exits 0.
// Usage: fusion_rt_paired_gpu_tests [--quick] [--paths=P1,P2,...]
// --quick runs the case list on the "auto" path only and skips the forced
// launch shapes; --paths runs the case list on the named paths instead (the
// sanitizer script runs initcheck on the paths without cuBLAS this way).
//
//===----------------------------------------------------------------------===//
#include "fusion_rt.h"

#include "common/convert.h"
#include "common/paired_plan.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

/// Sets a tuning knob (runtime/common/tuning.def) for the later calls;
/// nullptr: its default. A knob the library refuses stops the test.
void set_knob(const std::string &name, const char *value) {
  if (fusion_rt_set_tuning(name.c_str(), value) != FUSION_RT_STATUS_SUCCESS) {
    std::fprintf(stderr, "fusion_rt_set_tuning(%s, %s): %s\n", name.c_str(),
                 value ? value : "NULL", fusion_rt_last_error_message());
    std::exit(2);
  }
}

#define CUDA_OK(expr)                                                          \
  do {                                                                         \
    cudaError_t e_ = (expr);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      std::printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorString(e_),      \
                  __FILE__, __LINE__, #expr);                                  \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

int g_fail = 0;
int g_checks = 0;
double g_worst_f32 = 0; // worst f32-output error vs fp64 over the non-generic paths
const char *g_tag = "";  // launch shape of the gemv path forced by the caller

void check(bool ok, const std::string &what) {
  ++g_checks;
  if (!ok) {
    ++g_fail;
    std::printf("FAIL %s\n", what.c_str());
  }
}

int64_t esize(int32_t dt) { return dt == FUSION_RT_F32 ? 4 : 2; }

float to_f(int32_t dt, const uint8_t *p) {
  if (dt == FUSION_RT_F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return dt == FUSION_RT_BF16 ? fusion_rt::bf16_to_f32(h) : fusion_rt::f16_to_f32(h);
}
void from_f(int32_t dt, uint8_t *p, float v) {
  if (dt == FUSION_RT_F32) {
    std::memcpy(p, &v, 4);
    return;
  }
  uint16_t h = dt == FUSION_RT_BF16 ? fusion_rt::f32_to_bf16(v) : fusion_rt::f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

/// A host buffer of `n` elements of dtype `dt` plus its device copy.
struct Buf {
  int32_t dt = FUSION_RT_F32;
  int64_t n = 0;
  std::vector<uint8_t> host;
  void *dev = nullptr;
  void alloc(int32_t dtype, int64_t count) {
    dt = dtype;
    n = count;
    host.assign(size_t(std::max<int64_t>(n, 1) * esize(dt)), 0);
    CUDA_OK(cudaMalloc(&dev, host.size()));
  }
  float at(int64_t i) const { return to_f(dt, host.data() + i * esize(dt)); }
  void set(int64_t i, float v) { from_f(dt, host.data() + i * esize(dt), v); }
  void upload() { CUDA_OK(cudaMemcpy(dev, host.data(), host.size(), cudaMemcpyHostToDevice)); }
  void download(std::vector<uint8_t> &to) const {
    to.resize(host.size());
    CUDA_OK(cudaMemcpy(to.data(), dev, host.size(), cudaMemcpyDeviceToHost));
  }
  void release() {
    if (dev)
      cudaFree(dev);
    dev = nullptr;
  }
};

fusion_rt_tensor view(void *data, int32_t dt, int64_t rows, int64_t cols, int64_t rs,
                      int64_t cs) {
  fusion_rt_tensor t{};
  t.data = data;
  t.dtype = dt;
  t.rank = 2;
  t.sizes[0] = rows;
  t.sizes[1] = cols;
  t.strides[0] = rs;
  t.strides[1] = cs;
  return t;
}
fusion_rt_tensor vec1(void *data, int32_t dt, int64_t n) {
  fusion_rt_tensor t{};
  t.data = data;
  t.dtype = dt;
  t.rank = 1;
  t.sizes[0] = n;
  t.strides[0] = 1;
  return t;
}

struct Case {
  int64_t m, k, h0, h1;
  int32_t dt;
  int32_t epi0, epi1; // epilogue kinds
  int32_t gated;      // -1 or a gated kind
  int32_t od0 = FUSION_RT_F32, od1 = FUSION_RT_F32;
  bool transposed_w1 = false; ///< w1 stored [K, H1] (cuBLAS path, not gemv)
  int64_t pad = 0;            ///< extra row pitch of lhs / w0 (elements)
  bool stacked = false;       ///< w1 directly below w0 in one buffer ([w0; w1])
  bool f32_bias1 = false;     ///< epilogue1's bias in f32 (else the input dtype)
  int32_t round = 0;          ///< accumulator_round of both epilogues
  /// > 0: both weights in one buffer whose rows interleave by head group
  /// (group g: H0 / groups rows of w0, then H1 / groups of w1; Qwen3-Next's
  /// in_proj_ba), each passed as a [groups, H_i / groups, K] view.
  int64_t groups = 0;
  /// epilogue1 reads a scale although it is no softplus (sigmoid(t) * s:
  /// FLA's beta = sigmoid(b) * 2).
  bool scale1 = false;
};

/// `y` rounded as fusion_rt_accumulator_round `mode` rounds the accumulator.
double round_acc(int32_t mode, double y) {
  const float f = float(y);
  if (mode == FUSION_RT_ROUND_BF16 || mode == FUSION_RT_ROUND_BF16_AFTER_BIAS)
    return fusion_rt::bf16_to_f32(fusion_rt::f32_to_bf16(f));
  if (mode == FUSION_RT_ROUND_F16 || mode == FUSION_RT_ROUND_F16_AFTER_BIAS)
    return fusion_rt::f16_to_f32(fusion_rt::f32_to_f16(f));
  return y;
}

/// What the epilogue reads of accumulator `y` and bias `b` (when `hb`):
/// round(y) + b, or round(y + b) for the _AFTER_BIAS modes.
double biased_acc(int32_t mode, double y, bool hb, double b) {
  if (mode == FUSION_RT_ROUND_BF16_AFTER_BIAS || mode == FUSION_RT_ROUND_F16_AFTER_BIAS)
    return round_acc(mode, hb ? double(float(y) + float(b)) : y);
  return round_acc(mode, y) + (hb ? b : 0.0);
}

const char *round_name(int32_t mode) {
  switch (mode) {
  case FUSION_RT_ROUND_BF16:
    return " round=bf16";
  case FUSION_RT_ROUND_F16:
    return " round=f16";
  case FUSION_RT_ROUND_BF16_AFTER_BIAS:
    return " round=bf16(y+b)";
  case FUSION_RT_ROUND_F16_AFTER_BIAS:
    return " round=f16(y+b)";
  default:
    return "";
  }
}

constexpr int32_t NONE_ = FUSION_RT_EPILOGUE_NONE;

double sig(double x) { return 1 / (1 + std::exp(-x)); }
double sp(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }
/// Epilogue `kind` of `t`, the accumulator with its bias (biased_acc).
double epi_d(int kind, double t, bool hs, double s) {
  switch (kind) {
  case FUSION_RT_EPILOGUE_SIGMOID:
    return sig(t) * (hs ? s : 1);
  case FUSION_RT_EPILOGUE_SILU:
    return t * sig(t) * (hs ? s : 1);
  case FUSION_RT_EPILOGUE_SOFTPLUS_BIAS_SCALE:
  case FUSION_RT_EPILOGUE_SOFTPLUS_LOG_BIAS_SCALE:
    return sp(t) * (hs ? s : 1);
  case FUSION_RT_EPILOGUE_SOFTPLUS_STABLE_BIAS_SCALE: // no threshold
    return (std::max(t, 0.0) + std::log1p(std::exp(-std::fabs(t)))) * (hs ? s : 1);
  default:
    return t;
  }
}

const char *dt_name(int32_t dt) {
  return dt == FUSION_RT_BF16 ? "bf16" : dt == FUSION_RT_F16 ? "f16" : "f32";
}

/// Runs one case on the given path; returns false when the case could not run.
void run_case(const Case &c, const char *path, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  const bool gated = c.gated >= 0;
  const int64_t xrs = c.k + c.pad, w0rs = c.k + c.pad;
  Buf x, w0, w1, b0, s1, b1, o0, o1;
  x.alloc(c.dt, c.m * xrs);
  w0.alloc(c.dt, (c.h0 + (c.stacked || c.groups ? c.h1 : 0)) * w0rs);
  w1.alloc(c.dt, c.h1 * c.k);
  b0.alloc(FUSION_RT_F32, c.h0);
  b1.alloc(c.f32_bias1 ? FUSION_RT_F32 : c.dt, c.h1);
  s1.alloc(FUSION_RT_F32, c.h1);
  const float wscale = 1.f / std::sqrt(float(c.k));
  for (int64_t i = 0; i < x.n; ++i)
    x.set(i, nd(rng));
  for (int64_t i = 0; i < w0.n; ++i)
    w0.set(i, nd(rng) * wscale);
  for (int64_t i = 0; i < w1.n; ++i)
    w1.set(i, nd(rng) * wscale);
  for (int64_t i = 0; i < c.h0; ++i)
    b0.set(i, nd(rng));
  for (int64_t i = 0; i < c.h1; ++i) {
    b1.set(i, nd(rng));
    s1.set(i, -std::exp(nd(rng))); // GDN: A = -exp(A_log)
  }
  // Outputs with guard elements on both sides.
  const int64_t guard = 64;
  o0.alloc(c.od0, c.m * c.h0 + 2 * guard);
  o1.alloc(c.od1, c.m * c.h1 + 2 * guard);
  std::fill(o0.host.begin(), o0.host.end(), 0xFF); // NaN pattern in every dtype
  std::fill(o1.host.begin(), o1.host.end(), 0xFF);
  for (Buf *b : {&x, &w0, &w1, &b0, &b1, &s1, &o0, &o1})
    b->upload();

  auto make = [&](bool dev, std::vector<uint8_t> *host_out0,
                  std::vector<uint8_t> *host_out1) {
    auto P = [&](Buf &b) -> void * { return dev ? b.dev : b.host.data(); };
    fusion_rt_paired_projection d{};
    d.lhs = view(P(x), c.dt, c.m, c.k, xrs, 1);
    d.weight0 = view(P(w0), c.dt, c.h0, c.k, w0rs, 1);
    d.weight1 = c.transposed_w1 ? view(P(w1), c.dt, c.h1, c.k, 1, c.h1)
                                : view(P(w1), c.dt, c.h1, c.k, c.k, 1);
    if (c.stacked)
      d.weight1 = view(static_cast<char *>(P(w0)) + c.h0 * w0rs * esize(c.dt), c.dt,
                       c.h1, c.k, w0rs, 1);
    if (c.groups) {
      const int64_t r0 = c.h0 / c.groups, r1 = c.h1 / c.groups,
                    gs = (r0 + r1) * w0rs;
      for (int i = 0; i < 2; ++i) {
        fusion_rt_tensor &t = i == 0 ? d.weight0 : d.weight1;
        t = view(static_cast<char *>(P(w0)) + (i ? r0 * w0rs * esize(c.dt) : 0),
                 c.dt, i ? r1 : r0, c.k, w0rs, 1);
        t.rank = 3;
        t.sizes[2] = c.k, t.strides[2] = 1;
        t.sizes[1] = i ? r1 : r0, t.strides[1] = w0rs;
        t.sizes[0] = c.groups, t.strides[0] = gs;
      }
    }
    d.gated_kind = c.gated;
    d.accumulate_dtype = FUSION_RT_F32;
    d.epilogue0.kind = c.epi0;
    d.epilogue1.kind = c.epi1;
    d.epilogue0.accumulator_round = c.round;
    d.epilogue1.accumulator_round = c.round;
    if (c.epi0 != FUSION_RT_EPILOGUE_NONE)
      d.epilogue0.bias = vec1(P(b0), FUSION_RT_F32, c.h0);
    if (c.epi1 != FUSION_RT_EPILOGUE_NONE)
      d.epilogue1.bias = vec1(P(b1), c.f32_bias1 ? FUSION_RT_F32 : c.dt, c.h1);
    if (c.epi1 >= FUSION_RT_EPILOGUE_SOFTPLUS_BIAS_SCALE || c.scale1)
      d.epilogue1.scale = vec1(P(s1), FUSION_RT_F32, c.h1);
    uint8_t *h0p = dev ? static_cast<uint8_t *>(o0.dev) : host_out0->data();
    uint8_t *h1p = dev ? static_cast<uint8_t *>(o1.dev) : host_out1->data();
    d.out0 = view(h0p + guard * esize(c.od0), c.od0, c.m, c.h0, c.h0, 1);
    if (!gated)
      d.out1 = view(h1p + guard * esize(c.od1), c.od1, c.m, c.h1, c.h1, 1);
    return d;
  };

  char name[256];
  std::snprintf(name, sizeof name,
                "%s%s M=%lld K=%lld H=%lld/%lld %s epi=%d/%d gated=%d "
                "out=%s/%s%s%s%s%s%s",
                path, g_tag, (long long)c.m, (long long)c.k, (long long)c.h0,
                (long long)c.h1, dt_name(c.dt), c.epi0, c.epi1, c.gated,
                dt_name(c.od0), dt_name(c.od1), c.transposed_w1 ? " wT" : "",
                c.pad ? " padded" : "", c.stacked ? " stacked" : "",
                round_name(c.round), c.groups ? " head-grouped" : "");

  // CPU reference on host memory.
  std::vector<uint8_t> ref0 = o0.host, ref1 = o1.host;
  fusion_rt_paired_projection dh = make(false, &ref0, &ref1);
  fusion_rt_status st = fusion_rt_paired_projection_run(&dh, nullptr, nullptr);
  check(st == FUSION_RT_STATUS_SUCCESS,
        std::string(name) + ": CPU run: " + fusion_rt_last_error_message());

  // CUDA.
  set_knob("FUSION_RT_PAIRED_PATH", path);
  fusion_rt_paired_projection dd = make(true, nullptr, nullptr);
  st = fusion_rt_paired_projection_run(&dd, nullptr, nullptr);
  CUDA_OK(cudaDeviceSynchronize());
  check(st == FUSION_RT_STATUS_SUCCESS,
        std::string(name) + ": CUDA run: " + fusion_rt_last_error_message());
  std::vector<uint8_t> g0, g1;
  o0.download(g0);
  o1.download(g1);
  // Determinism: a second run gives the same bits.
  st = fusion_rt_paired_projection_run(&dd, nullptr, nullptr);
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint8_t> g0b, g1b;
  o0.download(g0b);
  o1.download(g1b);
  // The decode instance of the gemv path (where the plan takes it) against
  // the general instance: the same order of operations, the same bits.
  if (!std::strcmp(path, "gemv") || !std::strcmp(path, "auto")) {
    set_knob("FUSION_RT_PAIRED_DECODE", "0");
    st = fusion_rt_paired_projection_run(&dd, nullptr, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    set_knob("FUSION_RT_PAIRED_DECODE", nullptr);
    std::vector<uint8_t> g0c, g1c;
    o0.download(g0c);
    o1.download(g1c);
    check(st == FUSION_RT_STATUS_SUCCESS && g0c == g0 && g1c == g1,
          std::string(name) + ": the gemv decode instance differs from the general one");
  }
  set_knob("FUSION_RT_PAIRED_PATH", nullptr);
  check(g0 == g0b && g1 == g1b, std::string(name) + ": not deterministic");

  // Guards untouched, every element written (no NaN: inputs are finite).
  for (int oi = 0; oi < (gated ? 1 : 2); ++oi) {
    const std::vector<uint8_t> &g = oi == 0 ? g0 : g1;
    const int32_t od = oi == 0 ? c.od0 : c.od1;
    const int64_t n = c.m * (oi == 0 ? c.h0 : c.h1);
    const int64_t es = esize(od);
    bool guards = true, written = true;
    for (int64_t i = 0; i < guard * es; ++i)
      guards &= g[size_t(i)] == 0xFF && g[size_t((guard + n) * es + i)] == 0xFF;
    for (int64_t i = 0; i < n; ++i)
      written &= !std::isnan(to_f(od, g.data() + (guard + i) * es));
    check(guards, std::string(name) + ": wrote outside out" + std::to_string(oi));
    check(written, std::string(name) + ": left an element of out" +
                       std::to_string(oi) + " unwritten (or NaN)");
  }
  if (gated) {
    bool untouched = true;
    for (uint8_t b : g1)
      untouched &= b == 0xFF;
    check(untouched, std::string(name) + ": gated pair wrote out1");
  }

  // fp64 reference and CPU agreement.
  auto xat = [&](int64_t m, int64_t j) { return double(x.at(m * xrs + j)); };
  auto wat = [&](int i, int64_t n, int64_t j) {
    if (c.groups) { // row n = g * r_i + r at group g's offset, after w0's rows
      const int64_t r0 = c.h0 / c.groups, r1 = c.h1 / c.groups,
                    ri = i ? r1 : r0;
      const int64_t row = (n / ri) * (r0 + r1) + (i ? r0 : 0) + n % ri;
      return double(w0.at(row * w0rs + j));
    }
    if (i == 1 && c.stacked)
      return double(w0.at((c.h0 + n) * w0rs + j));
    return i == 0 ? double(w0.at(n * w0rs + j))
                  : double(w1.at(c.transposed_w1 ? j * c.h1 + n : n * c.k + j));
  };
  // Projection i's accumulator with its bias (when `hb`) and rounding.
  auto y64 = [&](int i, int64_t m, int64_t n, bool hb, double b) {
    double acc = 0;
    for (int64_t j = 0; j < c.k; ++j)
      acc += xat(m, j) * wat(i, n, j);
    return biased_acc(c.round, acc, hb, b);
  };
  for (int oi = 0; oi < (gated ? 1 : 2); ++oi) {
    const std::vector<uint8_t> &g = oi == 0 ? g0 : g1;
    const std::vector<uint8_t> &r = oi == 0 ? ref0 : ref1;
    const int32_t od = oi == 0 ? c.od0 : c.od1;
    const int64_t h = oi == 0 ? c.h0 : c.h1;
    const int64_t es = esize(od);
    double num = 0, den = 0, cpu_diff = 0, cpu_den = 0;
    int64_t bit_diff = 0, ulp_max = 0, far = 0, log_far = 0;
    // softplus as log(1 + exp(t)) (vLLM's reference form): the device's
    // expf and the host's differ by an ulp now and then, which moves
    // 1 + exp(t) across a rounding boundary of [1, 2) as often: one ulp of
    // 1 + exp(t), 2^-23, in log(1 + exp(t)) (32 ulps of a result near 0.05,
    // more of a smaller one). The bound per element: 2^-22 |scale| and 4
    // ulps of the result (the functions' own errors).
    const int32_t kind_oi = gated ? NONE_ : oi == 0 ? c.epi0 : c.epi1;
    const bool log_form = kind_oi == FUSION_RT_EPILOGUE_SOFTPLUS_LOG_BIAS_SCALE;
    for (int64_t m = 0; m < c.m; ++m)
      for (int64_t n = 0; n < h; ++n) {
        double ref;
        if (gated) {
          const double a = y64(0, m, n, c.epi0 != NONE_, b0.at(n)),
                       u = y64(1, m, n, c.epi1 != NONE_, b1.at(n));
          ref = c.gated == FUSION_RT_ACT_SWIGLU ? a * sig(a) * u : NAN;
        } else if (oi == 0) {
          ref = epi_d(c.epi0, y64(0, m, n, c.epi0 != 0, b0.at(n)), false, 1);
        } else {
          ref =
              epi_d(c.epi1, y64(1, m, n, c.epi1 != 0, b1.at(n)),
                    c.epi1 >= FUSION_RT_EPILOGUE_SOFTPLUS_BIAS_SCALE || c.scale1,
                    s1.at(n));
        }
        const int64_t off = (guard + m * h + n) * es;
        const double got = to_f(od, g.data() + off), cpu = to_f(od, r.data() + off);
        num += (got - ref) * (got - ref);
        den += ref * ref;
        cpu_diff += (got - cpu) * (got - cpu);
        cpu_den += cpu * cpu;
        // Rounded accumulators: an element agrees with the CPU oracle to f32
        // accuracy unless its sum lies at a bf16 / f16 rounding boundary.
        far += std::fabs(got - cpu) > 1e-4 * std::max(std::fabs(cpu), 1e-3);
        if (std::memcmp(g.data() + off, r.data() + off, size_t(es)) != 0) {
          ++bit_diff;
          if (od == FUSION_RT_F32) {
            int32_t a, b;
            std::memcpy(&a, g.data() + off, 4);
            std::memcpy(&b, r.data() + off, 4);
            ulp_max = std::max<int64_t>(ulp_max, std::llabs(int64_t(a) - int64_t(b)));
            if (log_form) {
              const float fc = std::fabs(float(cpu));
              const double ulp = double(std::nextafter(fc, INFINITY) - fc);
              const double sc = oi == 0 ? 1.0 : std::fabs(double(s1.at(n)));
              log_far += std::fabs(got - cpu) > std::ldexp(sc, -22) + 4 * ulp;
            }
          }
        }
      }
    const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    const double crel = cpu_den > 0 ? std::sqrt(cpu_diff / cpu_den) : 0;
    // Rounded accumulators: the fp64 reference rounds the exact sum, the
    // kernels their fp32 sum, so a sum at a rounding boundary can differ by
    // one bf16 / f16 ulp; the element-wise check against the CPU (`far`)
    // is the sharp one.
    const double out_tol = od == FUSION_RT_F32    ? 1e-5
                           : od == FUSION_RT_BF16 ? 8e-3
                                                  : 1e-3;
    const double round_tol =
        c.round == FUSION_RT_ROUND_BF16 || c.round == FUSION_RT_ROUND_BF16_AFTER_BIAS ? 8e-3
        : c.round == FUSION_RT_ROUND_F16 || c.round == FUSION_RT_ROUND_F16_AFTER_BIAS ? 1e-3
                                                                                      : 0.0;
    const double tol = std::max(out_tol, round_tol);
    char line[512];
    std::snprintf(line, sizeof line,
                  "%s out%d: rel err vs fp64 %.3g (tol %.0e), vs CPU %.3g, "
                  "bit-differing %lld/%lld, max ulp %lld",
                  name, oi, rel, tol, crel, (long long)bit_diff,
                  (long long)(c.m * h), (long long)ulp_max);
    std::printf("  %s\n", line);
    check(rel <= tol, line);
    // A summation order other than the CPU's (cuBLAS, the mma tiles) moves
    // a sum across a rounding boundary now and then: one ulp of the
    // rounded type, propagated. The f16 grid is 8x finer than bf16's, so
    // it is crossed 8x as often (measured on the H100: 1.08% of a
    // K = 1024 blas case, round(f16) after the bias); a rounding not
    // applied alike moves most elements. Limits: 1% bf16, 4% f16.
    const bool f16Round = c.round == FUSION_RT_ROUND_F16 ||
                          c.round == FUSION_RT_ROUND_F16_AFTER_BIAS;
    const int64_t farLimit = f16Round ? 4 : 1;
    if (c.round)
      check(far * 100 <= farLimit * c.m * h,
            std::string(line) + ": " + std::to_string(far) +
                " elements differ from the CPU by more than f32 accuracy "
                "(more than " + std::to_string(farLimit) +
                "% of them: the rounding is not applied alike)");
    if (od == FUSION_RT_F32 && std::strcmp(path, "generic") != 0)
      g_worst_f32 = std::max(g_worst_f32, rel);
    if (!std::strcmp(path, "generic")) {
      const int kind = oi == 0 ? c.epi0 : c.epi1;
      const bool transcendental = gated || kind >= FUSION_RT_EPILOGUE_SIGMOID;
      if (!transcendental)
        check(bit_diff == 0, std::string(line) + ": generic path not bit-exact");
      else if (od == FUSION_RT_F32 && log_form)
        check(log_far == 0,
              std::string(line) + ": generic path: " + std::to_string(log_far) +
                  " elements beyond one rounding of 1 + exp(t) (2^-22 |scale|"
                  " + 4 ulps)");
      else if (od == FUSION_RT_F32)
        check(ulp_max <= 4, std::string(line) + ": generic path > 4 ulp");
    }
  }
  for (Buf *b : {&x, &w0, &w1, &b0, &b1, &s1, &o0, &o1})
    b->release();
}

/// Device-side argument errors: a host pointer among device pointers.
void device_errors() {
  const int64_t m = 2, k = 64, h = 8;
  void *x, *w, *o0, *o1;
  CUDA_OK(cudaMalloc(&x, m * k * 2));
  CUDA_OK(cudaMalloc(&w, h * k * 2));
  CUDA_OK(cudaMalloc(&o0, m * h * 4));
  CUDA_OK(cudaMalloc(&o1, m * h * 4));
  CUDA_OK(cudaMemset(x, 0x3c, m * k * 2));
  CUDA_OK(cudaMemset(w, 0x3c, h * k * 2));
  CUDA_OK(cudaMemset(o0, 0xAB, m * h * 4));
  CUDA_OK(cudaMemset(o1, 0xAB, m * h * 4));
  std::vector<float> host_bias(h, 1.f);
  fusion_rt_paired_projection d{};
  d.lhs = view(x, FUSION_RT_BF16, m, k, k, 1);
  d.weight0 = view(w, FUSION_RT_BF16, h, k, k, 1);
  d.weight1 = view(w, FUSION_RT_BF16, h, k, k, 1);
  d.gated_kind = -1;
  d.accumulate_dtype = FUSION_RT_F32;
  d.epilogue0.kind = FUSION_RT_EPILOGUE_BIAS;
  d.epilogue0.bias = vec1(host_bias.data(), FUSION_RT_F32, h);
  d.out0 = view(o0, FUSION_RT_F32, m, h, h, 1);
  d.out1 = view(o1, FUSION_RT_F32, m, h, h, 1);
  fusion_rt_status st = fusion_rt_paired_projection_run(&d, nullptr, nullptr);
  check(st == FUSION_RT_STATUS_BAD_VALUE &&
            std::strstr(fusion_rt_last_error_message(), "desc->epilogue0.bias"),
        std::string("host bias with device tensors: status ") +
            fusion_rt_status_string(st) + ", " + fusion_rt_last_error_message());
  fusion_rt_options cpu{FUSION_RT_BACKEND_CPU, 0};
  d.epilogue0 = fusion_rt_epilogue{};
  st = fusion_rt_paired_projection_run(&d, &cpu, nullptr);
  check(st == FUSION_RT_STATUS_BAD_VALUE,
        std::string("device tensors with the CPU backend forced: ") +
            fusion_rt_status_string(st));
  std::vector<uint8_t> b0(m * h * 4), b1(m * h * 4);
  CUDA_OK(cudaMemcpy(b0.data(), o0, b0.size(), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(b1.data(), o1, b1.size(), cudaMemcpyDeviceToHost));
  bool untouched = true;
  for (size_t i = 0; i < b0.size(); ++i)
    untouched &= b0[i] == 0xAB && b1[i] == 0xAB;
  check(untouched, "device error paths wrote an output");
  cudaFree(x);
  cudaFree(w);
  cudaFree(o0);
  cudaFree(o1);
}

/// Kernel nodes of what `call(stream)` enqueues, captured into a CUDA graph
/// (not launched); -1 if the call or the capture fails.
template <typename Call> int captured_kernels(Call call) {
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
    return -1;
  int n = -1;
  cudaGraph_t graph = nullptr;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) ==
      cudaSuccess) {
    const fusion_rt_status st = call(stream);
    if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph &&
        st == FUSION_RT_STATUS_SUCCESS) {
      size_t count = 0;
      cudaGraphGetNodes(graph, nullptr, &count);
      std::vector<cudaGraphNode_t> nodes(count);
      cudaGraphGetNodes(graph, nodes.data(), &count);
      n = 0;
      for (cudaGraphNode_t node : nodes) {
        cudaGraphNodeType type;
        if (cudaGraphNodeGetType(node, &type) == cudaSuccess &&
            type == cudaGraphNodeTypeKernel)
          ++n;
      }
    }
    if (graph)
      cudaGraphDestroy(graph);
  }
  cudaStreamDestroy(stream);
  cudaGetLastError();
  return n;
}

/// The inputs of a gated front on the device: x [m, k] and [Wg; Wu]
/// [2h, k] (bf16, drawn from `nd` and `gen` in that order, weights scaled
/// by 1/sqrt(k)), uploaded; the descriptor of a SwiGLU pair over them.
fusion_rt_paired_projection gated_front(int64_t m, int64_t k, int64_t h,
                                        std::mt19937 &gen,
                                        std::normal_distribution<float> &nd,
                                        Buf &x, Buf &w) {
  x.alloc(FUSION_RT_BF16, m * k);
  w.alloc(FUSION_RT_BF16, 2 * h * k);
  for (int64_t i = 0; i < x.n; ++i)
    x.set(i, nd(gen));
  for (int64_t i = 0; i < w.n; ++i)
    w.set(i, nd(gen) / std::sqrt(float(k)));
  x.upload();
  w.upload();
  fusion_rt_paired_projection d{};
  d.lhs = view(x.dev, FUSION_RT_BF16, m, k, k, 1);
  d.weight0 = view(w.dev, FUSION_RT_BF16, h, k, k, 1);
  d.weight1 = view(static_cast<uint8_t *>(w.dev) + h * k * 2, FUSION_RT_BF16, h,
                   k, k, 1);
  d.gated_kind = FUSION_RT_ACT_SWIGLU;
  d.accumulate_dtype = FUSION_RT_F32;
  return d;
}

/// fusion_rt_paired_projection_quantize on device memory (the FFN front:
/// gate/up, SwiGLU, MXFP8 rowwise) on every path. Where the pair runs its
/// own kernels (gemv, mma): byte for byte the device's paired_projection_run
/// into a [M, H] value + fusion_rt_quantize of it (fused equals unfused on
/// one backend), and the CPU quantizer of that downloaded value gives the
/// same bytes again. On the cuBLAS path the call takes its prefill form
/// (cuBLAS writes gate and up in the rounding's type, the gated quantizer
/// reads them), whose GEMM differs from the pair's f32 one in summation
/// only: there, and everywhere as a second check, against the CPU backend's
/// call on the same inputs within the summation bound: >= 99 % of codes and
/// scales equal, scales within one step, every dequantized value within one
/// top-binade e4m3 step (32 * 2^(s - 127)) of the CPU's.
///
/// With FUSION_RT_PAIRED_QUANT_EPI=1 (`tag` " epi") the call on the gemv
/// path is one kernel where the pair's plan has a quantizing form (one CTA
/// of K, WR = 4 or 8: paired_gemv.cu's quant_epilogue), else the two steps:
/// counted as the kernel nodes of the call captured into a CUDA graph (by
/// default always the two steps).
void quantizing_front(const char *path, const char *tag = "") {
  struct QCase {
    int64_t m, k, h;
    int32_t inter, round;
    bool bias = false; ///< bf16 gate and up biases (a Linear with bias=True)
    bool gate_bias_only = false; ///< the up Linear without bias
    const char *wr = nullptr;    ///< FUSION_RT_PAIRED_WR for the case
    /// GPT-OSS's layout: gate and up every other row of one [2H, K] weight
    /// (and every other element of one [2H] bias), with the clamped SwiGLU
    /// (`clamped`) or SwiGLU.
    bool ilv = false, clamped = false;
  };
  const QCase qcases[] = {
      {1, 2048, 64, FUSION_RT_BF16, FUSION_RT_ROUND_BF16},
      {4, 1024, 96, FUSION_RT_BF16, FUSION_RT_ROUND_BF16},
      {16, 2048, 64, FUSION_RT_F32, FUSION_RT_ROUND_NONE},
      {128, 1024, 64, FUSION_RT_BF16, FUSION_RT_ROUND_BF16},
      {300, 512, 96, FUSION_RT_BF16, FUSION_RT_ROUND_NONE},
      // Appended: biased gate / up, y + b rounded once.
      {1, 2048, 64, FUSION_RT_BF16, FUSION_RT_ROUND_BF16_AFTER_BIAS, true},
      {4, 1024, 96, FUSION_RT_BF16, FUSION_RT_ROUND_BF16_AFTER_BIAS, true},
      {128, 1024, 64, FUSION_RT_BF16, FUSION_RT_ROUND_BF16_AFTER_BIAS, true},
      {300, 512, 96, FUSION_RT_BF16, FUSION_RT_ROUND_BF16, true},
      // Appended: a gate bias only (the prefill form's
      // two GEMMs, the up half's without a bias epilogue).
      {256, 512, 64, FUSION_RT_BF16, FUSION_RT_ROUND_BF16_AFTER_BIAS, true,
       true},
      // Appended: the gemv path's quantizing epilogue: a last block of 16
      // columns, f16 rounding, WR = 8 (clusters of 4 CTAs), a plan with
      // WR = 2 (no quantizing form: the two steps), 2 tokens of a wider H.
      {1, 2048, 80, FUSION_RT_BF16, FUSION_RT_ROUND_BF16},
      {3, 1024, 160, FUSION_RT_F16, FUSION_RT_ROUND_NONE},
      {1, 2048, 96, FUSION_RT_BF16, FUSION_RT_ROUND_BF16, false, false, "8"},
      {1, 4096, 64, FUSION_RT_BF16, FUSION_RT_ROUND_BF16},
      {2, 4096, 1024, FUSION_RT_BF16, FUSION_RT_ROUND_BF16_AFTER_BIAS, true},
      // Appended: GPT-OSS's interleaved gate / up (the prefill form's one
      // GEMM writes them interleaved; the gated quantizer reads pairs), with
      // its biases and clamped SwiGLU, bias-free with SwiGLU, an H whose
      // interleaved rows are not 16-byte multiples (the quantizer's scalar
      // tiles), and decode sizes.
      {128, 1024, 64, FUSION_RT_BF16, FUSION_RT_ROUND_BF16_AFTER_BIAS, true,
       false, nullptr, true, true},
      {300, 512, 96, FUSION_RT_BF16, FUSION_RT_ROUND_BF16, false, false,
       nullptr, true, false},
      {64, 512, 66, FUSION_RT_BF16, FUSION_RT_ROUND_BF16_AFTER_BIAS, true,
       false, nullptr, true, true},
      {1, 2048, 64, FUSION_RT_BF16, FUSION_RT_ROUND_BF16_AFTER_BIAS, true,
       false, nullptr, true, true},
      {16, 1024, 96, FUSION_RT_BF16, FUSION_RT_ROUND_BF16_AFTER_BIAS, true,
       false, nullptr, true, true},
      // Appended: stacked [Wg; Wu] with biases, H = 66 (the one GEMM's
      // columns 8-byte aligned behind a 256-byte-aligned pointer).
      {64, 512, 66, FUSION_RT_BF16, FUSION_RT_ROUND_BF16_AFTER_BIAS, true},
      {64, 512, 66, FUSION_RT_BF16, FUSION_RT_ROUND_BF16}};
  if (std::strcmp(path, "auto"))
    set_knob("FUSION_RT_PAIRED_PATH", path);
  std::mt19937 gen(99);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (const QCase &c : qcases) {
    Buf x, w, value, bias;
    fusion_rt_paired_projection d = gated_front(c.m, c.k, c.h, gen, nd, x, w);
    // Row i of weight0 / weight1 (interleaved: rows 2i / 2i + 1 of w).
    const int64_t w1_off = c.ilv ? c.k * 2 : c.h * c.k * 2,
                  w_rs = c.ilv ? 2 * c.k : c.k;
    d.weight0 = view(w.dev, FUSION_RT_BF16, c.h, c.k, w_rs, 1);
    d.weight1 = view(static_cast<uint8_t *>(w.dev) + w1_off, FUSION_RT_BF16,
                     c.h, c.k, w_rs, 1);
    if (c.clamped)
      d.gated_kind = FUSION_RT_ACT_CLAMPED_SWIGLU;
    value.alloc(c.inter, c.m * c.h);
    bias.alloc(FUSION_RT_BF16,
               2 * c.h); // [bg; bu] (interleaved: bg0 bu0 bg1 ...)
    for (int64_t i = 0; i < bias.n; ++i)
      bias.set(i, 0.5f * nd(gen));
    bias.upload();
    d.epilogue0.accumulator_round = d.epilogue1.accumulator_round = c.round;
    auto set_biases = [&](fusion_rt_paired_projection &pd, uint8_t *b) {
      if (!c.bias)
        return;
      pd.epilogue0.kind = FUSION_RT_EPILOGUE_BIAS;
      pd.epilogue0.bias = vec1(b, FUSION_RT_BF16, c.h);
      pd.epilogue0.bias.strides[0] = c.ilv ? 2 : 1;
      if (c.gate_bias_only)
        return;
      pd.epilogue1.kind = FUSION_RT_EPILOGUE_BIAS;
      pd.epilogue1.bias = vec1(b + (c.ilv ? 2 : c.h * 2), FUSION_RT_BF16, c.h);
      pd.epilogue1.bias.strides[0] = c.ilv ? 2 : 1;
    };
    set_biases(d, static_cast<uint8_t *>(bias.dev));
    fusion_rt_quant_scheme s;
    fusion_rt_quant_scheme_init(&s);
    const int64_t nb = (c.h + 31) / 32;
    set_knob("FUSION_RT_PAIRED_WR", c.wr);
    void *codes[2], *scales[2];
    for (int i = 0; i < 2; ++i) {
      CUDA_OK(cudaMalloc(&codes[i], c.m * c.h));
      CUDA_OK(cudaMalloc(&scales[i], c.m * nb));
      CUDA_OK(cudaMemset(codes[i], 0xAB, c.m * c.h));
      CUDA_OK(cudaMemset(scales[i], 0xAB, c.m * nb));
    }
    auto outs = [&](int i) {
      fusion_rt_quant_outputs o;
      fusion_rt_quant_outputs_init(&o);
      o.rowwise_data = view(codes[i], FUSION_RT_F8E4M3, c.m, c.h, c.h, 1);
      o.rowwise_scales = view(scales[i], FUSION_RT_E8M0, c.m, nb, nb, 1);
      return o;
    };
    const std::string what =
        std::string("quantizing front [") + path + tag +
        "] m=" + std::to_string(c.m) + " k=" + std::to_string(c.k) +
        " h=" + std::to_string(c.h) + " round=" + std::to_string(c.round) +
        (c.bias ? (c.gate_bias_only ? " gate-biased" : " biased") : "") +
        (c.wr ? std::string(" wr=") + c.wr : "") +
        (c.ilv ? (c.clamped ? " interleaved clamped" : " interleaved") : "") +
        ": ";
    fusion_rt_quant_outputs o0 = outs(0), o1 = outs(1);
    fusion_rt_status st =
        fusion_rt_paired_projection_quantize(&d, c.inter, &s, &o0, nullptr, nullptr);
    check(st == FUSION_RT_STATUS_SUCCESS,
          what + "fused call: " + fusion_rt_last_error_message());
    if (!std::strcmp(path, "gemv")) {
      fusion_rt::paired::GemvOverrides ov;
      ov.wr = c.wr ? std::atoi(c.wr) : -1;
      const fusion_rt::paired::GemvPlan plan =
          fusion_rt::paired::plan_gemv(c.m, c.k, c.h, c.h, true, 2, ov);
      const bool one = !std::strcmp(tag, " epi") &&
                       fusion_rt::paired::quant_epilogue_cy(plan, true) > 0;
      const int kernels = captured_kernels([&](cudaStream_t stream) {
        return fusion_rt_paired_projection_quantize(&d, c.inter, &s, &o0,
                                                    nullptr, stream);
      });
      check(one ? kernels == 1 : kernels >= 2,
            what +
                "kernels of the gemv path's call: " + std::to_string(kernels) +
                (one ? " (want 1: the quantizing epilogue)"
                     : " (want the two steps)"));
    }
    d.out0 = view(value.dev, c.inter, c.m, c.h, c.h, 1);
    st = fusion_rt_paired_projection_run(&d, nullptr, nullptr);
    fusion_rt_tensor vv = d.out0;
    if (st == FUSION_RT_STATUS_SUCCESS)
      st = fusion_rt_quantize(&vv, &s, &o1, nullptr, nullptr);
    check(st == FUSION_RT_STATUS_SUCCESS,
          what + "unfused calls: " + fusion_rt_last_error_message());
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint8_t> c0(c.m * c.h), c1(c0.size()), s0(c.m * nb), s1(s0.size());
    CUDA_OK(cudaMemcpy(c0.data(), codes[0], c0.size(), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(c1.data(), codes[1], c1.size(), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(s0.data(), scales[0], s0.size(), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(s1.data(), scales[1], s1.size(), cudaMemcpyDeviceToHost));
    const bool prefill_form = !std::strcmp(path, "blas");
    if (!prefill_form)
      check(c0 == c1 && s0 == s1, what + "fused != paired_run + quantize on the device");
    // The CPU backend's call on the host copies of the same inputs.
    {
      std::vector<uint8_t> c3(c0.size(), 0xAB), s3(s0.size(), 0xAB);
      fusion_rt_paired_projection hd = d;
      hd.lhs.data = x.host.data();
      hd.weight0.data = w.host.data();
      hd.weight1.data = w.host.data() + w1_off;
      set_biases(hd, bias.host.data());
      hd.out0 = fusion_rt_tensor{};
      fusion_rt_quant_outputs o3;
      fusion_rt_quant_outputs_init(&o3);
      o3.rowwise_data = view(c3.data(), FUSION_RT_F8E4M3, c.m, c.h, c.h, 1);
      o3.rowwise_scales = view(s3.data(), FUSION_RT_E8M0, c.m, nb, nb, 1);
      st = fusion_rt_paired_projection_quantize(&hd, c.inter, &s, &o3, nullptr, nullptr);
      check(st == FUSION_RT_STATUS_SUCCESS, what + "CPU call: " + fusion_rt_last_error_message());
      int64_t same_codes = 0, same_scales = 0;
      bool within = true;
      for (int64_t r = 0; r < c.m; ++r)
        for (int64_t j = 0; j < c.h; ++j) {
          const int64_t i = r * c.h + j, b = r * nb + j / 32;
          same_codes += c0[i] == c3[i];
          const int sg = s0[b], sc = s3[b];
          const double vg = fusion_rt::e4m3_to_f32(c0[i]) * std::ldexp(1.0, sg - 127);
          const double vc = fusion_rt::e4m3_to_f32(c3[i]) * std::ldexp(1.0, sc - 127);
          within &= std::abs(sg - sc) <= 1 &&
                    std::fabs(vg - vc) <= 32.0 * std::ldexp(1.0, std::max(sg, sc) - 127);
        }
      for (size_t b = 0; b < s0.size(); ++b)
        same_scales += s0[b] == s3[b];
      check(within && same_codes * 100 >= int64_t(c0.size()) * 99 &&
                same_scales * 100 >= int64_t(s0.size()) * 99,
            what + "device vs CPU beyond the summation bound (codes equal " +
                std::to_string(same_codes) + " of " + std::to_string(c0.size()) +
                ", scales " + std::to_string(same_scales) + " of " +
                std::to_string(s0.size()) + ")");
    }
    // The CPU quantizer of the device's gated value.
    std::vector<uint8_t> hv;
    value.download(hv);
    std::vector<uint8_t> c2(c0.size(), 0xAB), s2(s0.size(), 0xAB);
    fusion_rt_tensor hvv = view(hv.data(), c.inter, c.m, c.h, c.h, 1);
    fusion_rt_quant_outputs o2;
    fusion_rt_quant_outputs_init(&o2);
    o2.rowwise_data = view(c2.data(), FUSION_RT_F8E4M3, c.m, c.h, c.h, 1);
    o2.rowwise_scales = view(s2.data(), FUSION_RT_E8M0, c.m, nb, nb, 1);
    st = fusion_rt_quantize(&hvv, &s, &o2, nullptr, nullptr);
    check(st == FUSION_RT_STATUS_SUCCESS && c2 == c0 && s2 == s0,
          what + "the CPU quantizer of the device's gated value differs");
    for (int i = 0; i < 2; ++i) {
      cudaFree(codes[i]);
      cudaFree(scales[i]);
    }
    for (Buf *b : {&x, &w, &value, &bias})
      b->release();
  }
  set_knob("FUSION_RT_PAIRED_WR", nullptr);
  set_knob("FUSION_RT_PAIRED_PATH", nullptr);
}

/// fusion_rt_paired_projection_quantize with FP8 per tensor and delayed
/// scaling (the scale a device buffer; e4m3 with a scale that saturates
/// some codes, e5m2) on device memory: where the pair runs its own kernels,
/// byte for byte the device's paired_projection_run + fusion_rt_quantize
/// (codes, scale_inv, amax); everywhere, the CPU quantizer of the device's
/// gated value gives the unfused device bytes, and the fused device call is
/// within the summation bound of the CPU backend's call (>= 99 % of codes
/// equal, the rest one code step, amax within 2^-7 relative).
void quantizing_front_fp8_delayed(const char *path) {
  struct QCase {
    int64_t m, k, h;
    int32_t inter;
    int32_t format;
    float scale;
  };
  const QCase qcases[] = {
      {1, 2048, 64, FUSION_RT_BF16, FUSION_RT_FORMAT_FP8_E4M3, 256.f},
      {4, 1024, 96, FUSION_RT_BF16, FUSION_RT_FORMAT_FP8_E4M3, 16.f},
      {128, 1024, 64, FUSION_RT_BF16, FUSION_RT_FORMAT_FP8_E5M2, 1024.f},
      {300, 512, 96, FUSION_RT_F32, FUSION_RT_FORMAT_FP8_E4M3, 64.f}};
  if (std::strcmp(path, "auto"))
    set_knob("FUSION_RT_PAIRED_PATH", path);
  std::mt19937 gen(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (const QCase &c : qcases) {
    Buf x, w, value, scalars;
    fusion_rt_paired_projection d = gated_front(c.m, c.k, c.h, gen, nd, x, w);
    value.alloc(c.inter, c.m * c.h);
    // [scale, scale_inv 0, amax 0, scale_inv 1, amax 1]
    scalars.alloc(FUSION_RT_F32, 5);
    scalars.set(0, c.scale);
    scalars.upload();
    d.epilogue0.accumulator_round = d.epilogue1.accumulator_round =
        c.inter == FUSION_RT_BF16 ? FUSION_RT_ROUND_BF16 : FUSION_RT_ROUND_NONE;
    fusion_rt_quant_scheme s;
    fusion_rt_quant_scheme_init(&s);
    s.format = c.format;
    s.tensor_scaling = FUSION_RT_TENSOR_SCALING_DELAYED;
    const int32_t code_dt = c.format == FUSION_RT_FORMAT_FP8_E4M3
                                ? FUSION_RT_F8E4M3
                                : FUSION_RT_F8E5M2;
    void *codes[2];
    for (int i = 0; i < 2; ++i) {
      CUDA_OK(cudaMalloc(&codes[i], c.m * c.h));
      CUDA_OK(cudaMemset(codes[i], 0xAB, c.m * c.h));
    }
    float *sc = static_cast<float *>(scalars.dev);
    auto outs = [&](void *data, float *scale, float *scale_inv, float *amax) {
      fusion_rt_quant_outputs o;
      fusion_rt_quant_outputs_init(&o);
      o.rowwise_data = view(data, code_dt, c.m, c.h, c.h, 1);
      o.scale = vec1(scale, FUSION_RT_F32, 1);
      o.scale_inv = vec1(scale_inv, FUSION_RT_F32, 1);
      o.amax = vec1(amax, FUSION_RT_F32, 1);
      return o;
    };
    const std::string what = std::string("quantizing front fp8 delayed [") +
                             path + "] m=" + std::to_string(c.m) +
                             " k=" + std::to_string(c.k) +
                             " h=" + std::to_string(c.h) +
                             " format=" + std::to_string(c.format) + ": ";
    fusion_rt_quant_outputs o0 = outs(codes[0], sc, sc + 1, sc + 2);
    fusion_rt_quant_outputs o1 = outs(codes[1], sc, sc + 3, sc + 4);
    fusion_rt_status st = fusion_rt_paired_projection_quantize(
        &d, c.inter, &s, &o0, nullptr, nullptr);
    check(st == FUSION_RT_STATUS_SUCCESS,
          what + "fused call: " + fusion_rt_last_error_message());
    fusion_rt_paired_projection du = d;
    du.out0 = view(value.dev, c.inter, c.m, c.h, c.h, 1);
    st = fusion_rt_paired_projection_run(&du, nullptr, nullptr);
    fusion_rt_tensor vv = du.out0;
    if (st == FUSION_RT_STATUS_SUCCESS)
      st = fusion_rt_quantize(&vv, &s, &o1, nullptr, nullptr);
    check(st == FUSION_RT_STATUS_SUCCESS,
          what + "unfused calls: " + fusion_rt_last_error_message());
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint8_t> c0(c.m * c.h), c1(c0.size()), hs;
    CUDA_OK(cudaMemcpy(c0.data(), codes[0], c0.size(), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(c1.data(), codes[1], c1.size(), cudaMemcpyDeviceToHost));
    scalars.download(hs);
    float dev[5];
    std::memcpy(dev, hs.data(), sizeof dev);
    if (std::strcmp(path, "blas"))
      check(c0 == c1 && dev[1] == dev[3] && dev[2] == dev[4],
            what + "fused != paired_run + quantize on the device");
    check(dev[1] == 1.f / c.scale, what + "scale_inv is not 1 / scale");
    // The CPU quantizer of the device's gated value: the unfused bytes.
    std::vector<uint8_t> hv;
    value.download(hv);
    {
      std::vector<uint8_t> c2(c0.size(), 0xAB);
      float h[3] = {c.scale, 0.f, 0.f};
      fusion_rt_tensor hvv = view(hv.data(), c.inter, c.m, c.h, c.h, 1);
      fusion_rt_quant_outputs o2 = outs(c2.data(), h, h + 1, h + 2);
      st = fusion_rt_quantize(&hvv, &s, &o2, nullptr, nullptr);
      check(st == FUSION_RT_STATUS_SUCCESS && c2 == c1 && h[1] == dev[3] &&
                h[2] == dev[4],
            what + "the CPU quantizer of the device's gated value differs");
    }
    // The CPU backend's fused call on the host copies of the same inputs.
    {
      std::vector<uint8_t> c3(c0.size(), 0xAB);
      float h[3] = {c.scale, 0.f, 0.f};
      fusion_rt_paired_projection hd = d;
      hd.lhs.data = x.host.data();
      hd.weight0.data = w.host.data();
      hd.weight1.data = w.host.data() + c.h * c.k * 2;
      fusion_rt_quant_outputs o3 = outs(c3.data(), h, h + 1, h + 2);
      st = fusion_rt_paired_projection_quantize(&hd, c.inter, &s, &o3, nullptr,
                                                nullptr);
      check(st == FUSION_RT_STATUS_SUCCESS,
            what + "CPU call: " + fusion_rt_last_error_message());
      int64_t same = 0;
      bool within = true;
      for (size_t i = 0; i < c0.size(); ++i) {
        same += c0[i] == c3[i];
        // Codes of one sign are ordered like their values: one step apart.
        within &= (c0[i] & 0x80) == (c3[i] & 0x80)
                      ? std::abs(int(c0[i]) - int(c3[i])) <= 1
                      : (c0[i] & 0x7f) + (c3[i] & 0x7f) <= 1;
      }
      check(within && same * 100 >= int64_t(c0.size()) * 99 &&
                std::fabs(dev[2] - h[2]) <= std::ldexp(std::fabs(h[2]), -7),
            what + "device vs CPU beyond the summation bound (codes equal " +
                std::to_string(same) + " of " + std::to_string(c0.size()) +
                ", amax " + std::to_string(dev[2]) + " vs " +
                std::to_string(h[2]) + ")");
    }
    for (int i = 0; i < 2; ++i)
      cudaFree(codes[i]);
    for (Buf *b : {&x, &w, &value, &scalars})
      b->release();
  }
  set_knob("FUSION_RT_PAIRED_PATH", nullptr);
}

} // namespace

/// Runs every case on `path` at every forced launch shape: shape[i] is the
/// value of FUSION_RT_PAIRED_<vars[i]> for that run (unset afterwards).
template <size_t NC, size_t NS, size_t NV>
void run_forced(const Case (&cases)[NC], const char *path,
                const char *const (&vars)[NV], const char *const (&shapes)[NS][NV],
                uint32_t &seed) {
  for (const Case &c : cases)
    for (const auto &sh : shapes) {
      static char tag[128];
      std::string t = "[";
      for (size_t i = 0; i < NV; ++i) {
        set_knob(("FUSION_RT_PAIRED_" + std::string(vars[i])).c_str(), sh[i]);
        t += std::string(i ? " " : "") + vars[i] + "=" + sh[i];
      }
      std::snprintf(tag, sizeof tag, "%s]", t.c_str());
      g_tag = tag;
      run_case(c, path, seed++);
    }
  for (size_t i = 0; i < NV; ++i)
    set_knob(("FUSION_RT_PAIRED_" + std::string(vars[i])).c_str(), nullptr);
  g_tag = "";
}

int main(int argc, char **argv) {
  bool quick = false;
  std::string only; // ",gemv,mma," when --paths=gemv,mma
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strncmp(argv[i], "--paths=", 8)) {
      only = "," + std::string(argv[i] + 8) + ",";
    } else {
      std::printf("usage: %s [--quick] [--paths=auto,gemv,mma,blas,generic]\n", argv[0]);
      return 2;
    }
  }
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("SKIP: no CUDA device; the paired projection GPU tests did not run\n");
    return 0;
  }
  if (!fusion_rt_has_cuda()) {
    std::printf("FAIL: libfusion_rt was built without the CUDA backend\n");
    return 1;
  }
  const int32_t S = FUSION_RT_EPILOGUE_SIGMOID, SP = FUSION_RT_EPILOGUE_SOFTPLUS_BIAS_SCALE;
  const int32_t NONE = FUSION_RT_EPILOGUE_NONE, B = FUSION_RT_EPILOGUE_BIAS,
                SI = FUSION_RT_EPILOGUE_SILU;
  std::vector<Case> cases;
  const int32_t dts[] = {FUSION_RT_BF16, FUSION_RT_F16, FUSION_RT_F32};
  // The GDN gate shapes at decode and prefill token counts.
  for (int32_t dt : dts)
    for (int64_t m : {1, 2, 3, 4, 8, 16, 17, 64, 128})
      cases.push_back({m, 2048, 32, 32, dt, S, SP, -1});
  for (int64_t m : {1, 5, 16, 40})
    cases.push_back({m, 5120, 48, 48, FUSION_RT_BF16, S, SP, -1});
  for (int64_t m : {1, 16, 200})
    cases.push_back({m, 4096, 64, 64, FUSION_RT_BF16, S, SP, -1});
  // The same with an f32 bias on the second output, as the GDN gates have
  // it (dt_bias): the gemv path's decode instance (M <= 16), compared bit
  // for bit with the general instance in run_case; ragged K and H.
  for (int32_t dt : dts) {
    for (int64_t m : {1, 2, 16})
      cases.push_back({m, 2048, 32, 32, dt, S, SP, -1, FUSION_RT_F32, FUSION_RT_F32,
                       false, 0, false, true});
    cases.push_back({3, 264, 5, 3, dt, NONE, B, -1, FUSION_RT_F32, FUSION_RT_BF16, false,
                     8, false, true});
    cases.push_back({2, 1024, 17, 9, dt, SI, SP, -1, FUSION_RT_F16, FUSION_RT_F32, false,
                     0, false, true});
  }
  for (int64_t m : {1, 5, 16})
    cases.push_back({m, 5120, 48, 48, FUSION_RT_BF16, S, SP, -1, FUSION_RT_F32,
                     FUSION_RT_F32, false, 0, false, true});
  for (int64_t m : {1, 16})
    cases.push_back({m, 4096, 64, 64, FUSION_RT_BF16, S, SP, -1, FUSION_RT_F32,
                     FUSION_RT_F32, false, 0, false, true});
  cases.push_back({1, 16384, 8, 8, FUSION_RT_BF16, S, SP, -1, FUSION_RT_F32, FUSION_RT_F32,
                   false, 0, false, true});
  // Other epilogues, uneven H, mixed output dtypes, padded rows.
  for (int32_t dt : dts) {
    cases.push_back({3, 264, 5, 3, dt, NONE, B, -1});
    cases.push_back({7, 1024, 17, 9, dt, SI, NONE, -1, FUSION_RT_BF16, FUSION_RT_F16});
    cases.push_back({16, 512, 40, 24, dt, B, SI, -1, FUSION_RT_F32, FUSION_RT_BF16,
                     false, 8});
    // Gated SwiGLU (gate/up): out0 = silu(y0 + b0) * (y1 + b1).
    cases.push_back({4, 2048, 64, 64, dt, B, B, FUSION_RT_ACT_SWIGLU});
    cases.push_back({96, 1024, 48, 48, dt, NONE, B, FUSION_RT_ACT_SWIGLU});
    // K not a multiple of the vector width: blas / generic.
    cases.push_back({5, 1000, 12, 20, dt, S, SP, -1});
    // Both weights in one [H0 + H1, K] buffer (the blas path's single GEMM).
    cases.push_back({5, 2048, 32, 32, dt, S, SP, -1, FUSION_RT_F32, FUSION_RT_F32,
                     false, 0, true});
    cases.push_back({300, 512, 24, 40, dt, SI, B, -1, FUSION_RT_BF16, FUSION_RT_F32,
                     false, 8, true});
    cases.push_back({64, 1024, 32, 32, dt, B, B, FUSION_RT_ACT_SWIGLU, FUSION_RT_F32,
                     FUSION_RT_F32, false, 0, true});
    // A transposed weight view ([K, H] storage): blas / generic.
    cases.push_back({6, 768, 16, 16, dt, S, SP, -1, FUSION_RT_F32, FUSION_RT_F32, true});
  }
  // Appended last (the seeds of the cases above stay): the accumulator
  // rounded to bf16 / f16 before the epilogue (a bf16 Linear's output) on
  // every path — the GDN gates at decode and prefill sizes, the gated
  // gate/up pair, stacked weights, the decode instance (f32 bias).
  // Then the _AFTER_BIAS modes on the same cases (a Linear with bias=True:
  // y + b rounded once).
  for (int32_t r : {FUSION_RT_ROUND_BF16, FUSION_RT_ROUND_F16,
                    FUSION_RT_ROUND_BF16_AFTER_BIAS, FUSION_RT_ROUND_F16_AFTER_BIAS}) {
    for (int64_t m : {1, 4, 16, 128})
      cases.push_back({m, 2048, 32, 32, FUSION_RT_BF16, S, SP, -1, FUSION_RT_F32,
                       FUSION_RT_BF16, false, 0, false, true, r});
    cases.push_back({4, 2048, 64, 64, FUSION_RT_BF16, B, B, FUSION_RT_ACT_SWIGLU,
                     FUSION_RT_BF16, FUSION_RT_F32, false, 0, false, false, r});
    cases.push_back({96, 1024, 48, 48, FUSION_RT_F16, NONE, B, FUSION_RT_ACT_SWIGLU,
                     FUSION_RT_F32, FUSION_RT_F32, false, 0, true, false, r});
    cases.push_back({300, 512, 24, 40, FUSION_RT_BF16, SI, B, -1, FUSION_RT_BF16,
                     FUSION_RT_F32, false, 8, true, false, r});
    cases.push_back({6, 768, 16, 16, FUSION_RT_F32, S, SP, -1, FUSION_RT_F32,
                     FUSION_RT_F32, true, 0, false, false, r});
  }
  // Appended last: both weights interleaved by head group in one buffer,
  // each read in place as a [G, w, K] view (Qwen3-Next's in_proj_ba: 16 key
  // heads, per group 2 rows of b then 2 of a; bf16 Linears rounded before
  // the GDN epilogues) on every path, decode to prefill; f32 and padded rows;
  // a gated pair of 8 groups.
  for (int64_t m : {1, 4, 16, 128})
    cases.push_back({m, 2048, 32, 32, FUSION_RT_BF16, S, SP, -1, FUSION_RT_F32,
                     FUSION_RT_F32, false, 0, false, true, FUSION_RT_ROUND_BF16,
                     16});
  cases.push_back({5, 1024, 24, 24, FUSION_RT_F32, S, SP, -1, FUSION_RT_F32,
                   FUSION_RT_F32, false, 8, false, false, 0, 4});
  cases.push_back({64, 1024, 64, 64, FUSION_RT_F16, B, B, FUSION_RT_ACT_SWIGLU,
                   FUSION_RT_F32, FUSION_RT_F32, false, 0, false, false, 0, 8});
  // Appended last: softplus as log(1 + exp(t)) (SOFTPLUS_LOG_BIAS_SCALE,
  // vLLM's reference form) and the overflow-safe softplus
  // (SOFTPLUS_STABLE_BIAS_SCALE, torch.logaddexp(t, 0)) on every path:
  // decode (gemv, f32 bias) and prefill sizes, bf16-rounded accumulators,
  // stacked and interleaved weights (the log form also f16 and the [K, H]
  // view; the stable form also on epilogue 0).
  const int32_t SPL = FUSION_RT_EPILOGUE_SOFTPLUS_LOG_BIAS_SCALE,
                SPS = FUSION_RT_EPILOGUE_SOFTPLUS_STABLE_BIAS_SCALE;
  for (int32_t sp : {SPL, SPS}) {
    for (int64_t m : {1, 4, 16, 128})
      cases.push_back({m, 2048, 32, 32, FUSION_RT_BF16, S, sp, -1,
                       FUSION_RT_F32, FUSION_RT_F32, false, 0, false, true,
                       FUSION_RT_ROUND_BF16});
    cases.push_back({40, 5120, 48, 48, FUSION_RT_F32, sp == SPS ? sp : S,
                     sp == SPS ? S : sp, -1});
    if (sp == SPL)
      cases.push_back({5, 2048, 32, 32, FUSION_RT_F16, S, SPL, -1,
                       FUSION_RT_F32, FUSION_RT_F32, false, 0, true});
    cases.push_back({6, 768, 16, 16, FUSION_RT_BF16, S, sp, -1, FUSION_RT_F32,
                     FUSION_RT_F32, true});
    cases.push_back({16, 2048, 32, 32, FUSION_RT_BF16, S, sp, -1,
                     FUSION_RT_F32, FUSION_RT_F32, false, 0, false, true,
                     FUSION_RT_ROUND_BF16, 16});
  }
  // Then a scaled sigmoid / silu (epilogue1 with a scale: FLA's
  // beta = sigmoid(b) * 2), decode and prefill sizes, bf16 rounding.
  for (int64_t m : {1, 16, 128})
    cases.push_back({m, 2048, 32, 32, FUSION_RT_BF16, SPS, S, -1, FUSION_RT_F32,
                     FUSION_RT_BF16, false, 0, false, false, FUSION_RT_ROUND_BF16,
                     0, true});
  cases.push_back({40, 1024, 48, 48, FUSION_RT_F16, S, SI, -1, FUSION_RT_F32,
                   FUSION_RT_F32, false, 0, false, true, 0, 0, true});
  const char *paths[] = {"auto", "gemv", "mma", "blas", "generic"};
  uint32_t seed = 1;
  for (const Case &c : cases)
    for (const char *path : paths) {
      if (!only.empty() ? only.find("," + std::string(path) + ",") == std::string::npos
                        : quick && std::strcmp(path, "auto"))
        continue;
      if (!std::strcmp(path, "generic") && c.m * c.k * (c.h0 + c.h1) > (int64_t(1) << 26))
        continue; // the generic path is slow; large cases are covered by the others
      run_case(c, path, seed++);
    }
  // The gemv path at forced launch shapes (S, WR, WK): no cluster, K split
  // inside the CTA, across a cluster, both, an odd cluster size, 8 row warps.
  const Case shape_cases[] = {
      {1, 2048, 32, 32, FUSION_RT_BF16, S, SP, -1},
      {16, 2048, 32, 32, FUSION_RT_BF16, S, SP, -1},
      {5, 5120, 48, 48, FUSION_RT_BF16, S, SP, -1},
      {3, 2048, 32, 32, FUSION_RT_F32, S, SP, -1},
      {8, 4096, 64, 64, FUSION_RT_F16, S, SP, -1},
      {4, 2048, 64, 64, FUSION_RT_BF16, B, B, FUSION_RT_ACT_SWIGLU},
      {16, 512, 40, 24, FUSION_RT_F16, B, SI, -1, FUSION_RT_F32, FUSION_RT_BF16, false, 8}};
  const char *const shapes[][3] = {{"1", "4", "1"}, {"1", "1", "8"}, {"1", "2", "4"},
                             {"2", "1", "4"}, {"4", "2", "2"}, {"8", "4", "1"},
                             {"3", "1", "2"}, {"8", "8", "1"}};
  const char *const gemv_vars[] = {"SPLIT", "WR", "WK"};
  if (!quick)
    run_forced(shape_cases, "gemv", gemv_vars, shapes, seed);
  // The mma path at forced cluster sizes (K split across 1..8 CTAs): ragged
  // token tiles, rows and K blocks (K = 264: 33 chunks, not whole 32-K blocks).
  const Case mma_cases[] = {
      {40, 5120, 48, 48, FUSION_RT_BF16, S, SP, -1},
      {96, 1024, 48, 48, FUSION_RT_F16, NONE, B, FUSION_RT_ACT_SWIGLU},
      {17, 264, 5, 3, FUSION_RT_BF16, NONE, B, -1},
      {300, 512, 24, 40, FUSION_RT_BF16, SI, B, -1, FUSION_RT_BF16, FUSION_RT_F32,
       false, 8, true}};
  // (S, tokens, rows) of a CTA tile; rows = 8 is ignored by gated pairs.
  const char *const mma_shapes[][3] = {{"1", "32", "16"}, {"2", "16", "8"},
                                 {"3", "32", "8"}, {"8", "16", "16"}};
  const char *const mma_vars[] = {"SPLIT", "MT", "RPW"};
  if (!quick)
    run_forced(mma_cases, "mma", mma_vars, mma_shapes, seed);
  for (const char *path : paths) {
    if (!std::strcmp(path, "generic") ||
        (!only.empty() ? only.find("," + std::string(path) + ",") == std::string::npos
                       : quick && std::strcmp(path, "auto")))
      continue;
    quantizing_front(path);
    quantizing_front_fp8_delayed(path);
  }
  // The gemv path's quantizing epilogue (tuning.def's paired_quant_epi).
  if (only.empty() || only.find(",gemv,") != std::string::npos) {
    set_knob("FUSION_RT_PAIRED_QUANT_EPI", "1");
    quantizing_front("gemv", " epi");
    if (!quick)
      quantizing_front("auto", " epi");
    set_knob("FUSION_RT_PAIRED_QUANT_EPI", nullptr);
  }
  // The bias-free prefill GEMMs on cuBLASLt (tuning.def's paired_lt).
  if (!quick && (only.empty() || only.find(",blas,") != std::string::npos)) {
    set_knob("FUSION_RT_PAIRED_LT", "1");
    quantizing_front("blas", " lt");
    set_knob("FUSION_RT_PAIRED_LT", nullptr);
  }
  device_errors();
  std::printf("worst f32-output error vs fp64 (gemv / mma / blas / auto paths): %.3g\n",
              g_worst_f32);
  if (g_fail) {
    std::printf("paired projection GPU tests: %d of %d checks FAILED\n", g_fail, g_checks);
    return 1;
  }
  std::printf("paired projection GPU tests: all %d checks passed\n", g_checks);
  return 0;
}
