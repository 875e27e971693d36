//===- abi_fuzz_test.cpp - random single-field corruptions of valid calls -===//
//
// A fixed-seed fuzzer of every C ABI entry point: a random valid call of
// fusion_rt_quantize, _act_quantize, _gated_act_quantize,
// _activation_apply, _dequantize, _paired_projection_run or
// _paired_projection_quantize (formats,
// directions, layouts, policies, activation kinds, epilogues, shapes), then
// one random corruption (a view's dtype, rank, size, stride or pointer; an
// enum field of a descriptor; a NULL descriptor), or none. Every output lives
// in one arena between guard bytes. A call that fails must name its reason
// and leave the whole arena as it was; a call that succeeds must leave every
// guard byte as it was (nothing written outside the views). A crash or hang
// fails the test binary. FUSION_RT_ABI_FUZZ_CALLS sets the number of calls
// per entry point (default 3000; the long runs of docs/hardening.md use
// more) and FUSION_RT_ABI_FUZZ_SEED the seed.
//
//===----------------------------------------------------------------------===//
#include "test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace fusion_rt_test;

namespace {

constexpr uint8_t kCanary = 0xC5;
constexpr size_t kGuard = 64;

int64_t envInt(const char *name, int64_t fallback) {
  const char *v = std::getenv(name);
  return v && *v ? std::atoll(v) : fallback;
}

/// Output buffers of one call, each between guard bytes in one arena.
struct Arena {
  std::vector<uint8_t> bytes;
  std::vector<std::pair<size_t, size_t>> inside; ///< [offset, size)

  /// Points every view of `outs` with data != NULL into the arena, with
  /// room for its byte size.
  void place(const std::vector<std::pair<fusion_rt_tensor *, size_t>> &outs) {
    size_t total = kGuard;
    for (auto &o : outs)
      total += (o.second + 15) / 16 * 16 + kGuard;
    bytes.assign(total, kCanary);
    inside.clear();
    size_t off = kGuard;
    for (auto &[v, size] : outs) {
      if (v->data) {
        v->data = bytes.data() + off;
        inside.push_back({off, size});
      }
      off += (size + 15) / 16 * 16 + kGuard;
    }
  }
  /// The quantizer's outputs (the delayed-scaling `scale` input stays where
  /// it is: the runtime reads it).
  void place(QuantBuffers &q, fusion_rt_quant_outputs &out) {
    place({{&out.rowwise_data, q.row_data.size()},
           {&out.rowwise_scales, q.row_scales.size()},
           {&out.colwise_data, q.col_data.size()},
           {&out.colwise_scales, q.col_scales.size()},
           {&out.amax, 4},
           {&out.scale_inv, 4},
           {&out.dbias, q.dbias.size() * 4}});
  }
  /// The first guard byte that changed, or -1.
  int64_t changedGuard() const {
    std::vector<bool> in(bytes.size(), false);
    for (auto [o, n] : inside)
      for (size_t i = 0; i < n; ++i)
        in[o + i] = true;
    for (size_t i = 0; i < bytes.size(); ++i)
      if (!in[i] && bytes[i] != kCanary)
        return int64_t(i);
    return -1;
  }
  bool untouched() const {
    for (uint8_t b : bytes)
      if (b != kCanary)
        return false;
    return true;
  }
};

/// Size of an element in nibbles (e2m1 is half a byte).
int nibbles(int32_t dtype) {
  switch (dtype) {
  case FUSION_RT_F32:
    return 8;
  case FUSION_RT_BF16:
  case FUSION_RT_F16:
    return 4;
  case FUSION_RT_F4E2M1:
    return 1;
  default:
    return 2;
  }
}

/// What one corruption may touch: views (with whether their dtype is the
/// caller's choice), enum fields, and descriptor pointers to set to NULL.
struct Target {
  struct View {
    fusion_rt_tensor *t;
    bool freeDtype; ///< any float type is valid (so widening it over-reads)
  };
  std::vector<View> views;
  std::vector<int32_t *> fields;
  std::vector<std::function<void()>> nullers;
  fusion_rt_tensor *misalignable = nullptr;
};

class Fuzzer {
public:
  explicit Fuzzer(uint64_t salt)
      : rng(uint64_t(envInt("FUSION_RT_ABI_FUZZ_SEED", 20261202)) ^ salt) {}
  int64_t pick(int64_t n) { return int64_t(rng() % uint64_t(n)); }

  /// Applies one random corruption (or none) and says which.
  std::string corrupt(Target &t) {
    const int kind = int(pick(10));
    const int64_t sizeValues[] = {-1, 0, 1, 2, int64_t(1) << 41};
    const int32_t fieldValues[] = {-3, -1, 0, 1, 2, 3, 4, 5, 7, 20};
    Target::View v = t.views[size_t(pick(int64_t(t.views.size())))];
    switch (kind) {
    case 1: {
      const int32_t old = v.t->dtype;
      v.t->dtype = int32_t(pick(15)) - 2;
      // A wider type than the buffer holds, where the caller may choose the
      // type, is a valid call about memory that is not there: the caller's
      // error, which no runtime can see. Every other dtype change is fair.
      if (v.freeDtype && v.t->dtype >= 0 && v.t->dtype <= FUSION_RT_E8M0 &&
          nibbles(v.t->dtype) > nibbles(old))
        v.t->dtype = -1;
      return "dtype";
    }
    case 2:
      v.t->rank = int32_t(pick(8)) - 1;
      return "rank";
    case 3:
    case 4: {
      if (v.t->rank <= 0)
        return "none";
      const int d = int(pick(std::min<int32_t>(v.t->rank, FUSION_RT_MAX_RANK)));
      if (kind == 3) {
        const int64_t r = pick(7);
        v.t->sizes[d] = r < 5 ? sizeValues[r] : v.t->sizes[d] + (r == 5 ? 1 : -1);
        return "size";
      }
      const int64_t r = pick(4);
      v.t->strides[d] = r == 0 ? -1 : r == 1 ? 0 : r == 2 ? 1 : int64_t(1) << 45;
      return "stride";
    }
    case 5:
      v.t->data = nullptr;
      return "NULL data";
    case 6: // a misaligned input wider than a byte must be rejected
      if (!t.misalignable)
        return "none";
      t.misalignable->data = static_cast<char *>(t.misalignable->data) + 1;
      return "misaligned input";
    case 7:
    case 8:
      if (t.fields.empty())
        return "none";
      *t.fields[size_t(pick(int64_t(t.fields.size())))] = fieldValues[pick(10)];
      return "enum field";
    case 9:
      t.nullers[size_t(pick(int64_t(t.nullers.size())))]();
      return "NULL descriptor";
    default:
      return "none";
    }
  }

  /// Checks the outcome of one call.
  void check(fusion_rt_status st, const Arena &arena, const std::string &ctx) {
    if (st == FUSION_RT_STATUS_SUCCESS) {
      ++ok;
      const int64_t g = arena.changedGuard();
      ASSERT_EQ(g, -1) << ctx << ": wrote guard byte " << g << " outside the views";
    } else {
      ++rejected;
      ASSERT_STRNE(fusion_rt_last_error_message(), "") << ctx;
      ASSERT_TRUE(arena.untouched())
          << ctx << ": rejected (" << fusion_rt_last_error_message()
          << ") but an output byte changed";
    }
  }

  /// A random valid scheme (any format, direction, layout and policy).
  fusion_rt_quant_scheme scheme() {
    const int32_t formats[] = {FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_FORMAT_MXFP8_E5M2,
                               FUSION_RT_FORMAT_MXFP4, FUSION_RT_FORMAT_NVFP4,
                               FUSION_RT_FORMAT_FP8_E4M3, FUSION_RT_FORMAT_FP8_E5M2,
                               FUSION_RT_FORMAT_FP8_BLOCK_E4M3,
                               FUSION_RT_FORMAT_FP8_BLOCK_E5M2};
    fusion_rt_quant_scheme s;
    fusion_rt_quant_scheme_init(&s);
    s.format = formats[pick(8)];
    const bool fp8_block = s.format >= FUSION_RT_FORMAT_FP8_BLOCK_E4M3;
    s.direction = fp8_block ? FUSION_RT_ROWWISE : int32_t(pick(3));
    if (fp8_block) {
      const int32_t widths[] = {1, 7, 32, 64, 128, 256, 300};
      s.block_cols = widths[pick(7)];
      // 2D blocks (weight tiles): fusion_rt_quantize / _dequantize only, the
      // other entry points refuse them.
      const int32_t heights[] = {1, 1, 3, 128};
      s.block_rows = heights[pick(4)];
    }
    s.colwise_layout = s.format == FUSION_RT_FORMAT_NVFP4 ? FUSION_RT_COLWISE_TRANSPOSED
                                                          : int32_t(pick(2));
    const bool blocks = s.format <= FUSION_RT_FORMAT_NVFP4;
    s.scale_layout = blocks ? int32_t(pick(2)) : FUSION_RT_SCALES_COMPACT;
    s.scale_rounding = int32_t(pick(3));
    s.nan_policy = int32_t(pick(2));
    if (s.format <= FUSION_RT_FORMAT_MXFP4)
      s.zero_scale = int32_t(pick(3));
    return s;
  }
  /// The scheme's enum fields, for corruption.
  static void addSchemeFields(Target &t, fusion_rt_quant_scheme &s) {
    for (int32_t *f : {&s.format, &s.scale_rounding, &s.nan_policy, &s.direction,
                       &s.colwise_layout, &s.scale_layout, &s.nvfp4_block,
                       &s.elem_rounding, &s.tensor_scaling, &s.zero_scale,
                       &s.force_pow2_scale, &s.block_rows, &s.block_cols})
      t.fields.push_back(f);
  }
  /// The quantizer's views, scheme fields and (fused calls) activation
  /// fields, for corruption.
  static void addQuantizer(Target &t, fusion_rt_quant_outputs &out,
                           fusion_rt_quant_scheme &s, fusion_rt_activation *a) {
    addQuantViews(t, out);
    addSchemeFields(t, s);
    if (a)
      for (int32_t *fld : {&a->kind, &a->backward, &a->intermediate_dtype})
        t.fields.push_back(fld);
  }
  static void addQuantViews(Target &t, fusion_rt_quant_outputs &out) {
    for (fusion_rt_tensor *v : {&out.rowwise_data, &out.rowwise_scales,
                                &out.colwise_data, &out.colwise_scales, &out.amax,
                                &out.scale_inv, &out.dbias})
      t.views.push_back({v, false});
  }
  /// Output buffers of a random valid quantizer call (amax requested or
  /// not); false for a scheme the shape helper rejects.
  bool alloc(QuantBuffers &q, const fusion_rt_quant_scheme &s, int64_t m,
             int64_t n) {
    const bool amax = pick(2) == 0;
    try {
      q.alloc(s, m, n, false, amax, false, kCanary);
    } catch (...) {
      return false;
    }
    return true;
  }
  HostMatrix matrix(int64_t m, int64_t n, int32_t dtype) {
    return make_matrix(random_values(m * n, uint32_t(rng())), m, n, dtype);
  }
  fusion_rt_options options() {
    return fusion_rt_options{FUSION_RT_BACKEND_CPU, int32_t(1 + pick(3))};
  }
  void report(const char *entry, int64_t calls) {
    std::printf("abi fuzz %s: %lld calls, %lld succeeded, %lld rejected\n", entry,
                (long long)calls, (long long)ok, (long long)rejected);
    EXPECT_GT(ok, 0);
    EXPECT_GT(rejected, 0);
  }

  std::mt19937_64 rng;
  int64_t ok = 0, rejected = 0;
};

std::string context(int64_t call, const std::string &what, int64_t m, int64_t n,
                    const std::string &corruption) {
  return "call " + std::to_string(call) + " (" + what + ", [" + std::to_string(m) +
         ", " + std::to_string(n) + "], corruption: " + corruption + ")";
}

int64_t callCount() { return envInt("FUSION_RT_ABI_FUZZ_CALLS", 3000); }

/// An activation of the given family with random direction and precision.
fusion_rt_activation randomActivation(Fuzzer &f, bool gated) {
  fusion_rt_activation a;
  fusion_rt_activation_init(&a);
  a.kind = gated ? int32_t(FUSION_RT_ACT_SWIGLU + f.pick(6)) : int32_t(f.pick(7));
  a.backward = int32_t(f.pick(3)); // forward, backward, masks selected
  a.intermediate_dtype = int32_t(f.pick(3));
  return a;
}

} // namespace

TEST(AbiFuzz, QuantizeCallsAreRejectedOrStayInTheirViews) {
  const int64_t calls = callCount();
  Fuzzer f(0);
  for (int64_t call = 0; call < calls; ++call) {
    fusion_rt_quant_scheme s = f.scheme();
    const int64_t m = 1 + f.pick(70), n = 2 * (1 + f.pick(50));
    HostMatrix x = f.matrix(m, n, int32_t(f.pick(3)));
    QuantBuffers q;
    if (!f.alloc(q, s, m, n))
      continue; // a scheme the shape helper rejects: not a valid call
    fusion_rt_quant_outputs out = q.out;
    Arena arena;
    arena.place(q, out);
    fusion_rt_tensor in = x.view();
    const fusion_rt_tensor *inp = &in;
    const fusion_rt_quant_outputs *outp = &out;
    const fusion_rt_quant_scheme *sp = &s;
    Target t;
    t.views.push_back({&in, true});
    Fuzzer::addQuantizer(t, out, s, nullptr);
    t.misalignable = &in;
    t.nullers = {[&] { inp = nullptr; }, [&] { outp = nullptr; }, [&] { sp = nullptr; },
                 [&] {
                   const float eps[] = {-1.f, std::numeric_limits<float>::quiet_NaN(),
                                        std::numeric_limits<float>::infinity()};
                   s.amax_epsilon = eps[f.pick(3)];
                 }};
    const std::string what = f.corrupt(t);
    const fusion_rt_options opt = f.options();
    const fusion_rt_status st = fusion_rt_quantize(inp, sp, outp, &opt, nullptr);
    ASSERT_NO_FATAL_FAILURE(f.check(st, arena, context(call, describe(s), m, n, what)));
  }
  f.report("quantize", calls);
}

TEST(AbiFuzz, ActQuantizeCallsAreRejectedOrStayInTheirViews) {
  const int64_t calls = callCount();
  Fuzzer f(1);
  for (int64_t call = 0; call < calls; ++call) {
    fusion_rt_quant_scheme s = f.scheme();
    fusion_rt_activation a = randomActivation(f, false);
    const int64_t m = 1 + f.pick(70), n = 2 * (1 + f.pick(50));
    const int32_t dt = int32_t(f.pick(3));
    HostMatrix x = f.matrix(m, n, dt), g = f.matrix(m, n, dt);
    QuantBuffers q;
    try {
      q.alloc(s, m, n, false, f.pick(2) == 0, f.pick(2) == 0, kCanary);
    } catch (...) {
      continue;
    }
    fusion_rt_quant_outputs out = q.out;
    Arena arena;
    arena.place(q, out);
    fusion_rt_tensor in = x.view(), grad = g.view();
    const fusion_rt_tensor *inp = &in, *gp = a.backward ? &grad : nullptr;
    const fusion_rt_activation *ap = &a;
    const fusion_rt_quant_outputs *outp = &out;
    const fusion_rt_quant_scheme *sp = &s;
    Target t;
    t.views.push_back({&in, true});
    t.views.push_back({&grad, true});
    Fuzzer::addQuantizer(t, out, s, &a);
    t.misalignable = &in;
    t.nullers = {[&] { inp = nullptr; }, [&] { gp = gp ? nullptr : &grad; },
                 [&] { ap = nullptr; }, [&] { outp = nullptr; }, [&] { sp = nullptr; }};
    const std::string what = f.corrupt(t);
    const fusion_rt_options opt = f.options();
    const fusion_rt_status st =
        fusion_rt_act_quantize(inp, gp, ap, sp, outp, &opt, nullptr);
    ASSERT_NO_FATAL_FAILURE(f.check(
        st, arena,
        context(call, describe(s) + " act " + std::to_string(a.kind), m, n, what)));
  }
  f.report("act_quantize", calls);
}

TEST(AbiFuzz, GatedActQuantizeCallsAreRejectedOrStayInTheirViews) {
  const int64_t calls = callCount();
  Fuzzer f(2);
  for (int64_t call = 0; call < calls; ++call) {
    fusion_rt_quant_scheme s = f.scheme();
    fusion_rt_activation a = randomActivation(f, true);
    const int64_t m = 1 + f.pick(70), k = 1 + f.pick(50);
    const int32_t dt = int32_t(f.pick(3));
    const bool packed = f.pick(2) == 0;
    HostMatrix gate = f.matrix(m, packed ? 2 * k : k, dt), up = f.matrix(m, k, dt),
               g = f.matrix(m, k, dt);
    QuantBuffers q;
    const int64_t cols = a.backward ? 2 * k : k;
    try {
      q.alloc(s, m, cols, a.backward != 0, f.pick(2) == 0, false, kCanary);
    } catch (...) {
      continue;
    }
    fusion_rt_quant_outputs out = q.out;
    Arena arena;
    arena.place(q, out);
    fusion_rt_tensor in = gate.view(), upv = up.view(), grad = g.view();
    const fusion_rt_tensor *inp = &in, *upp = packed ? nullptr : &upv,
                           *gp = a.backward ? &grad : nullptr;
    const fusion_rt_activation *ap = &a;
    const fusion_rt_quant_outputs *outp = &out;
    const fusion_rt_quant_scheme *sp = &s;
    Target t;
    t.views.push_back({&in, true});
    t.views.push_back({&upv, true});
    t.views.push_back({&grad, true});
    Fuzzer::addQuantizer(t, out, s, &a);
    t.misalignable = &in;
    t.nullers = {[&] { inp = nullptr; }, [&] { upp = upp ? nullptr : &upv; },
                 [&] { gp = gp ? nullptr : &grad; }, [&] { ap = nullptr; },
                 [&] { outp = nullptr; }, [&] { sp = nullptr; }};
    const std::string what = f.corrupt(t);
    const fusion_rt_options opt = f.options();
    const fusion_rt_status st =
        fusion_rt_gated_act_quantize(inp, upp, gp, ap, sp, outp, &opt, nullptr);
    ASSERT_NO_FATAL_FAILURE(f.check(
        st, arena,
        context(call, describe(s) + " gated " + std::to_string(a.kind), m, k, what)));
  }
  f.report("gated_act_quantize", calls);
}

TEST(AbiFuzz, ActivationApplyCallsAreRejectedOrStayInTheirViews) {
  const int64_t calls = callCount();
  Fuzzer f(3);
  for (int64_t call = 0; call < calls; ++call) {
    const bool gated = f.pick(2) == 0;
    fusion_rt_activation a = randomActivation(f, gated);
    const int64_t m = 1 + f.pick(70), k = 1 + f.pick(50);
    const int32_t dt = int32_t(f.pick(3));
    const bool packed = gated && f.pick(2) == 0;
    HostMatrix x = f.matrix(m, packed ? 2 * k : k, dt), up = f.matrix(m, k, dt),
               g = f.matrix(m, k, dt);
    const int64_t cols = gated && a.backward ? 2 * k : k;
    const int64_t esize = nibbles(a.intermediate_dtype) / 2;
    fusion_rt_tensor outv =
        view2d(reinterpret_cast<void *>(1), a.intermediate_dtype, m, cols);
    fusion_rt_tensor dbias = view1d(reinterpret_cast<void *>(1), FUSION_RT_F32, cols);
    if (gated || f.pick(2) == 0)
      dbias.data = nullptr;
    Arena arena;
    arena.place({{&outv, size_t(m * cols * esize)}, {&dbias, size_t(cols * 4)}});
    fusion_rt_tensor in = x.view(), upv = up.view(), grad = g.view();
    const fusion_rt_tensor *inp = &in, *upp = gated && !packed ? &upv : nullptr,
                           *gp = a.backward ? &grad : nullptr, *op = &outv,
                           *dp = &dbias;
    const fusion_rt_activation *ap = &a;
    Target t;
    t.views = {{&in, true}, {&upv, true}, {&grad, true}, {&outv, false}, {&dbias, false}};
    for (int32_t *fld : {&a.kind, &a.backward, &a.intermediate_dtype})
      t.fields.push_back(fld);
    t.misalignable = &in;
    t.nullers = {[&] { inp = nullptr; }, [&] { upp = upp ? nullptr : &upv; },
                 [&] { gp = gp ? nullptr : &grad; }, [&] { ap = nullptr; },
                 [&] { op = nullptr; }, [&] { dp = nullptr; }};
    const std::string what = f.corrupt(t);
    const fusion_rt_options opt = f.options();
    const fusion_rt_status st =
        fusion_rt_activation_apply(inp, upp, gp, ap, op, dp, &opt, nullptr);
    ASSERT_NO_FATAL_FAILURE(
        f.check(st, arena,
                context(call, "act " + std::to_string(a.kind) +
                                  (a.backward ? " backward" : " forward"),
                        m, k, what)));
  }
  f.report("activation_apply", calls);
}

TEST(AbiFuzz, DequantizeCallsAreRejectedOrStayInTheirViews) {
  const int64_t calls = callCount();
  Fuzzer f(4);
  for (int64_t call = 0; call < calls; ++call) {
    fusion_rt_quant_scheme s = f.scheme();
    const int64_t m = 1 + f.pick(70), n = 2 * (1 + f.pick(50));
    HostMatrix x = f.matrix(m, n, int32_t(f.pick(3)));
    QuantBuffers q;
    if (!f.alloc(q, s, m, n))
      continue; // a scheme the shape helper rejects: not a valid call
    // A valid quantized tensor first (outside the arena: an input here).
    fusion_rt_tensor xin = x.view();
    fusion_rt_options qopt{FUSION_RT_BACKEND_CPU, 1};
    ASSERT_EQ(fusion_rt_quantize(&xin, &s, &q.out, &qopt, nullptr),
              FUSION_RT_STATUS_SUCCESS)
        << describe(s) << ": " << fusion_rt_last_error_message();
    int32_t direction = s.direction == FUSION_RT_BOTH ? int32_t(f.pick(2)) : s.direction;
    const bool transposed =
        direction == FUSION_RT_COLWISE && s.colwise_layout == FUSION_RT_COLWISE_TRANSPOSED;
    const int32_t odt = int32_t(f.pick(3));
    const int64_t r = transposed ? n : m, c = transposed ? m : n;
    fusion_rt_tensor outv = view2d(reinterpret_cast<void *>(1), odt, r, c);
    Arena arena;
    arena.place({{&outv, size_t(r * c * (nibbles(odt) / 2))}});
    fusion_rt_quant_outputs quantized = q.out;
    const fusion_rt_quant_scheme *sp = &s;
    const fusion_rt_quant_outputs *qp = &quantized;
    const fusion_rt_tensor *op = &outv;
    Target t;
    for (fusion_rt_tensor *v : {&quantized.rowwise_data, &quantized.rowwise_scales,
                                &quantized.colwise_data, &quantized.colwise_scales,
                                &quantized.amax, &quantized.scale_inv})
      t.views.push_back({v, false});
    t.views.push_back({&outv, true});
    Fuzzer::addSchemeFields(t, s);
    t.fields.push_back(&direction);
    t.misalignable = &outv;
    t.nullers = {[&] { sp = nullptr; }, [&] { qp = nullptr; }, [&] { op = nullptr; }};
    const std::string what = f.corrupt(t);
    const fusion_rt_options opt = f.options();
    const fusion_rt_status st = fusion_rt_dequantize(sp, qp, direction, op, &opt, nullptr);
    ASSERT_NO_FATAL_FAILURE(f.check(st, arena, context(call, describe(s), m, n, what)));
  }
  f.report("dequantize", calls);
}

TEST(AbiFuzz, PairedProjectionCallsAreRejectedOrStayInTheirViews) {
  const int64_t calls = callCount();
  Fuzzer f(5);
  for (int64_t call = 0; call < calls; ++call) {
    const int64_t m = 1 + f.pick(20), k = 1 + f.pick(64);
    const bool gated = f.pick(3) == 0;
    const int64_t n0 = 1 + f.pick(40), n1 = gated ? n0 : 1 + f.pick(40);
    const int32_t dt = int32_t(f.pick(3));
    HostMatrix x = f.matrix(m, k, dt), w0 = f.matrix(n0, k, dt), w1 = f.matrix(n1, k, dt);
    const int32_t vdt[2] = {f.pick(2) ? FUSION_RT_F32 : dt, f.pick(2) ? FUSION_RT_F32 : dt};
    HostMatrix bias0 = f.matrix(1, n0, vdt[0]), bias1 = f.matrix(1, n1, vdt[1]),
               scale0 = f.matrix(1, n0, vdt[0]), scale1 = f.matrix(1, n1, vdt[1]);
    fusion_rt_paired_projection d{};
    d.lhs = x.view();
    d.weight0 = w0.view();
    d.weight1 = w1.view();
    d.gated_kind = gated ? int32_t(FUSION_RT_ACT_SWIGLU + f.pick(6)) : -1;
    d.accumulate_dtype = FUSION_RT_F32;
    HostMatrix *biases[2] = {&bias0, &bias1}, *scales[2] = {&scale0, &scale1};
    fusion_rt_epilogue *epis[2] = {&d.epilogue0, &d.epilogue1};
    for (int i = 0; i < 2; ++i) {
      fusion_rt_epilogue &e = *epis[i];
      e.kind = int32_t(f.pick(gated ? 2 : 7));
      e.accumulator_round = int32_t(f.pick(5));
      const bool bias = e.kind == FUSION_RT_EPILOGUE_BIAS ||
                        (e.kind != FUSION_RT_EPILOGUE_NONE && f.pick(2) == 0);
      if (bias)
        e.bias = view1d(biases[i]->bytes.data(), vdt[i], i ? n1 : n0);
      if (e.kind >= FUSION_RT_EPILOGUE_SOFTPLUS_BIAS_SCALE && f.pick(2) == 0)
        e.scale = view1d(scales[i]->bytes.data(), vdt[i], i ? n1 : n0);
    }
    const int32_t odt[2] = {int32_t(f.pick(3)), int32_t(f.pick(3))};
    d.out0 = view2d(reinterpret_cast<void *>(1), odt[0], m, n0);
    if (!gated)
      d.out1 = view2d(reinterpret_cast<void *>(1), odt[1], m, n1);
    Arena arena;
    arena.place({{&d.out0, size_t(m * n0 * (nibbles(odt[0]) / 2))},
                 {&d.out1, size_t(m * n1 * (nibbles(odt[1]) / 2))}});
    const fusion_rt_paired_projection *dp = &d;
    Target t;
    t.views = {{&d.lhs, false},           {&d.weight0, false},
               {&d.weight1, false},       {&d.epilogue0.bias, true},
               {&d.epilogue0.scale, true}, {&d.epilogue1.bias, true},
               {&d.epilogue1.scale, true}, {&d.out0, true},
               {&d.out1, true}};
    t.fields = {&d.epilogue0.kind, &d.epilogue0.accumulator_round, &d.epilogue1.kind,
                &d.epilogue1.accumulator_round, &d.gated_kind, &d.accumulate_dtype};
    t.misalignable = &d.lhs;
    t.nullers = {[&] { dp = nullptr; }};
    const std::string what = f.corrupt(t);
    const fusion_rt_options opt = f.options();
    const fusion_rt_status st = fusion_rt_paired_projection_run(dp, &opt, nullptr);
    ASSERT_NO_FATAL_FAILURE(f.check(
        st, arena,
        context(call, "paired gated " + std::to_string(d.gated_kind) + " epilogues " +
                          std::to_string(d.epilogue0.kind) + "," +
                          std::to_string(d.epilogue1.kind),
                m, k, what)));
  }
  f.report("paired_projection", calls);
}

TEST(AbiFuzz, PairedProjectionQuantizeCallsAreRejectedOrStayInTheirViews) {
  const int64_t calls = callCount();
  Fuzzer f(6);
  for (int64_t call = 0; call < calls; ++call) {
    fusion_rt_quant_scheme s = f.scheme();
    const int64_t m = 1 + f.pick(20), k = 1 + f.pick(64), h = 2 * (1 + f.pick(40));
    const int32_t dt = int32_t(f.pick(3));
    HostMatrix x = f.matrix(m, k, dt), w0 = f.matrix(h, k, dt), w1 = f.matrix(h, k, dt);
    HostMatrix bias0 = f.matrix(1, h, FUSION_RT_F32), bias1 = f.matrix(1, h, dt);
    QuantBuffers q;
    if (!f.alloc(q, s, m, h))
      continue;
    fusion_rt_paired_projection d{};
    d.lhs = x.view();
    d.weight0 = w0.view();
    d.weight1 = w1.view();
    d.gated_kind = int32_t(FUSION_RT_ACT_SWIGLU + f.pick(6));
    d.accumulate_dtype = FUSION_RT_F32;
    d.epilogue0.accumulator_round = int32_t(f.pick(5));
    d.epilogue1.accumulator_round = int32_t(f.pick(5));
    if (f.pick(2) == 0) {
      d.epilogue0.kind = FUSION_RT_EPILOGUE_BIAS;
      d.epilogue0.bias = view1d(bias0.bytes.data(), FUSION_RT_F32, h);
    }
    if (f.pick(2) == 0) {
      d.epilogue1.kind = FUSION_RT_EPILOGUE_BIAS;
      d.epilogue1.bias = view1d(bias1.bytes.data(), dt, h);
    }
    int32_t inter = int32_t(f.pick(3));
    fusion_rt_quant_outputs out = q.out;
    Arena arena;
    arena.place(q, out);
    const fusion_rt_paired_projection *dp = &d;
    const fusion_rt_quant_outputs *outp = &out;
    const fusion_rt_quant_scheme *sp = &s;
    Target t;
    t.views = {{&d.lhs, false},           {&d.weight0, false},
               {&d.weight1, false},       {&d.epilogue0.bias, true},
               {&d.epilogue1.bias, true}, {&d.out0, true}};
    Fuzzer::addQuantViews(t, out);
    Fuzzer::addSchemeFields(t, s);
    t.fields.insert(t.fields.end(), {&d.epilogue0.kind, &d.epilogue0.accumulator_round,
                                     &d.epilogue1.kind, &d.epilogue1.accumulator_round,
                                     &d.gated_kind, &d.accumulate_dtype, &inter});
    t.misalignable = &d.lhs;
    t.nullers = {[&] { dp = nullptr; }, [&] { outp = nullptr; }, [&] { sp = nullptr; }};
    const std::string what = f.corrupt(t);
    const fusion_rt_options opt = f.options();
    const fusion_rt_status st =
        fusion_rt_paired_projection_quantize(dp, inter, sp, outp, &opt, nullptr);
    ASSERT_NO_FATAL_FAILURE(f.check(
        st, arena,
        context(call, describe(s) + " paired quantize gated " +
                          std::to_string(d.gated_kind) + " via " + std::to_string(inter),
                m, h, what)));
  }
  f.report("paired_projection_quantize", calls);
}
