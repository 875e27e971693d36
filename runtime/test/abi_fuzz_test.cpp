//===- abi_fuzz_test.cpp - random single-field corruptions of valid calls -===//
//
// A fixed-seed fuzzer of the quantizer entry point: a random valid call
// (format, direction, layouts, policies, shape), then one random corruption
// (a view's dtype, rank, size, stride or pointer; a scheme field; a NULL
// descriptor), or none. Every output lives in one arena between guard bytes.
// A call that fails must name its reason and leave the whole arena as it
// was; a call that succeeds must leave every guard byte as it was (nothing
// written outside the views). A crash or hang fails the test binary.
// FUSION_RT_ABI_FUZZ_CALLS sets the number of calls (default 3000; the long
// run of docs/hardening.md uses 200000) and FUSION_RT_ABI_FUZZ_SEED the seed.
//
//===----------------------------------------------------------------------===//
#include "test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
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

/// Places the output buffers of `q` in one arena, each between guard bytes,
/// and points `out`'s views there. Returns the ranges inside views.
struct Arena {
  std::vector<uint8_t> bytes;
  std::vector<std::pair<size_t, size_t>> inside; ///< [offset, size)

  void build(QuantBuffers &q, fusion_rt_quant_outputs &out) {
    fusion_rt_tensor *views[] = {&out.rowwise_data, &out.rowwise_scales,
                                 &out.colwise_data, &out.colwise_scales,
                                 &out.amax, &out.scale_inv};
    size_t sizes[] = {q.row_data.size(), q.row_scales.size(),
                      q.col_data.size(), q.col_scales.size(), 4, 4};
    size_t total = kGuard;
    for (size_t s : sizes)
      total += (s + 15) / 16 * 16 + kGuard;
    bytes.assign(total, kCanary);
    inside.clear();
    size_t off = kGuard;
    for (int i = 0; i < 6; ++i) {
      if (views[i]->data) {
        views[i]->data = bytes.data() + off;
        inside.push_back({off, sizes[i]});
      }
      off += (sizes[i] + 15) / 16 * 16 + kGuard;
    }
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

} // namespace

TEST(AbiFuzz, CorruptedCallsAreRejectedOrStayInTheirViews) {
  const int64_t calls = envInt("FUSION_RT_ABI_FUZZ_CALLS", 3000);
  std::mt19937_64 rng(uint64_t(envInt("FUSION_RT_ABI_FUZZ_SEED", 20261202)));
  auto pick = [&](int64_t n) { return int64_t(rng() % uint64_t(n)); };
  int64_t ok = 0, rejected = 0;
  for (int64_t call = 0; call < calls; ++call) {
    // A valid call.
    const int32_t formats[] = {FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_FORMAT_MXFP8_E5M2,
                               FUSION_RT_FORMAT_MXFP4, FUSION_RT_FORMAT_NVFP4,
                               FUSION_RT_FORMAT_FP8_E4M3, FUSION_RT_FORMAT_FP8_E5M2};
    fusion_rt_quant_scheme s;
    fusion_rt_quant_scheme_init(&s);
    s.format = formats[pick(6)];
    s.direction = int32_t(pick(3));
    s.colwise_layout = s.format == FUSION_RT_FORMAT_NVFP4 ? FUSION_RT_COLWISE_TRANSPOSED
                                                          : int32_t(pick(2));
    const bool blocks = s.format <= FUSION_RT_FORMAT_NVFP4;
    s.scale_layout = blocks ? int32_t(pick(2)) : FUSION_RT_SCALES_COMPACT;
    s.scale_rounding = int32_t(pick(2));
    s.nan_policy = int32_t(pick(2));
    if (s.format <= FUSION_RT_FORMAT_MXFP4)
      s.zero_scale = int32_t(pick(3));
    const int64_t m = 1 + pick(70), n = 2 * (1 + pick(50));
    const int32_t idt = int32_t(pick(3)); // BF16, F16, F32
    std::vector<float> xv = random_values(m * n, uint32_t(call));
    HostMatrix x = make_matrix(xv, m, n, idt);
    QuantBuffers q;
    try {
      q.alloc(s, m, n, false, pick(2) == 0, false, kCanary);
    } catch (...) {
      continue; // a scheme the shape helper rejects: not a valid call
    }
    fusion_rt_quant_outputs out = q.out;
    Arena arena;
    arena.build(q, out);
    fusion_rt_tensor in = x.view();
    const fusion_rt_tensor *inp = &in;
    const fusion_rt_quant_outputs *outp = &out;
    const fusion_rt_quant_scheme *sp = &s;

    // One corruption (or none).
    fusion_rt_tensor *views[] = {&in, &out.rowwise_data, &out.rowwise_scales,
                                 &out.colwise_data, &out.colwise_scales,
                                 &out.amax, &out.scale_inv};
    fusion_rt_tensor *v = views[pick(7)];
    const int kind = int(pick(10));
    std::string what = "none";
    const int64_t sizeValues[] = {-1, 0, 1, 2, int64_t(1) << 41};
    const int32_t schemeValues[] = {-3, -1, 0, 1, 2, 3, 4, 5, 7, 20};
    switch (kind) {
    case 1:
      v->dtype = int32_t(pick(15)) - 2;
      // A wider input type than the buffer holds (bf16 -> f32) is a valid
      // call about memory that is not there: the caller's error, which no
      // runtime can see. Every other dtype change is fair.
      if (v == &in && v->dtype == FUSION_RT_F32 && x.dtype != FUSION_RT_F32)
        v->dtype = -1;
      what = "dtype";
      break;
    case 2:
      v->rank = int32_t(pick(8)) - 1;
      what = "rank";
      break;
    case 3:
    case 4: {
      if (v->rank <= 0)
        break;
      const int d = int(pick(std::min<int32_t>(v->rank, FUSION_RT_MAX_RANK)));
      if (kind == 3) {
        const int64_t r = pick(7);
        v->sizes[d] = r < 5 ? sizeValues[r] : v->sizes[d] + (r == 5 ? 1 : -1);
        what = "size";
      } else {
        const int64_t r = pick(4);
        v->strides[d] = r == 0 ? -1 : r == 1 ? 0 : r == 2 ? 1 : int64_t(1) << 45;
        what = "stride";
      }
      break;
    }
    case 5:
      v->data = nullptr;
      what = "NULL data";
      break;
    case 6: // misaligned input (wider than a byte: must be rejected)
      in.data = static_cast<char *>(in.data) + 1;
      what = "misaligned input";
      break;
    case 7: {
      int32_t *fields[] = {&s.format, &s.scale_rounding, &s.nan_policy,
                           &s.direction, &s.colwise_layout, &s.scale_layout,
                           &s.nvfp4_block, &s.elem_rounding, &s.tensor_scaling,
                           &s.zero_scale, &s.force_pow2_scale};
      *fields[pick(11)] = schemeValues[pick(10)];
      what = "scheme field";
      break;
    }
    case 8: {
      const float eps[] = {-1.f, std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::infinity(), 1e-12f};
      s.amax_epsilon = eps[pick(4)];
      what = "amax_epsilon";
      break;
    }
    case 9: {
      const int64_t r = pick(3);
      if (r == 0)
        inp = nullptr;
      else if (r == 1)
        outp = nullptr;
      else
        sp = nullptr;
      what = "NULL descriptor";
      break;
    }
    default:
      break;
    }
    fusion_rt_options opt{FUSION_RT_BACKEND_CPU, int32_t(1 + pick(3))};
    const fusion_rt_status st = fusion_rt_quantize(inp, sp, outp, &opt, nullptr);
    const std::string ctx = "call " + std::to_string(call) + " (" +
                            describe(s) + ", [" + std::to_string(m) + ", " +
                            std::to_string(n) + "], corruption: " + what + ")";
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
  std::printf("abi fuzz: %lld calls, %lld succeeded, %lld rejected\n",
              (long long)calls, (long long)ok, (long long)rejected);
  EXPECT_GT(ok, 0);
  EXPECT_GT(rejected, 0);
}
