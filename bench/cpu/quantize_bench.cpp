//===- quantize_bench.cpp - CPU throughput of the reference quantizer -----===//
//
// Measures GB/s of rowwise MXFP8 e4m3 (RCEIL, compact scales) on a bf16
// 4096x7168 matrix through the public C ABI, counting bf16 read + e4m3 write
// + e8m0 scale write (torchao's cast_bench convention). A program, not a
// test:
//   fusion_rt_cpu_bench [rows cols iters threads]
//
//===----------------------------------------------------------------------===//
#include "fusion_rt.h"

#include "common/convert.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

static fusion_rt_tensor view2d(void *data, int32_t dtype, int64_t rows,
                               int64_t cols) {
  fusion_rt_tensor t{};
  t.data = data;
  t.dtype = dtype;
  t.rank = 2;
  t.sizes[0] = rows;
  t.sizes[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  return t;
}

int main(int argc, char **argv) {
  const int64_t m = argc > 1 ? std::atoll(argv[1]) : 4096;
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 7168;
  const int iters = argc > 3 ? std::atoi(argv[3]) : 10;
  const int threads = argc > 4 ? std::atoi(argv[4]) : 0;

  std::vector<uint16_t> in(size_t(m * n));
  std::mt19937 rng(1234);
  std::normal_distribution<float> dist(0.f, 1.f);
  for (auto &v : in)
    v = fusion_rt::f32_to_bf16(dist(rng));
  const int64_t sc = (n + 31) / 32;
  std::vector<uint8_t> data(size_t(m * n)), scales(size_t(m * sc));

  fusion_rt_quant_scheme scheme;
  fusion_rt_quant_scheme_init(&scheme); // MXFP8 e4m3, RCEIL, rowwise, compact
  fusion_rt_quant_outputs out;
  fusion_rt_quant_outputs_init(&out);
  out.rowwise_data = view2d(data.data(), FUSION_RT_F8E4M3, m, n);
  out.rowwise_scales = view2d(scales.data(), FUSION_RT_E8M0, m, sc);
  fusion_rt_tensor x = view2d(in.data(), FUSION_RT_BF16, m, n);
  fusion_rt_options opt{FUSION_RT_BACKEND_CPU, threads};

  auto run = [&] {
    fusion_rt_status st = fusion_rt_quantize(&x, &scheme, &out, &opt, nullptr);
    if (st != FUSION_RT_STATUS_SUCCESS) {
      std::fprintf(stderr, "fusion_rt_quantize: %s: %s\n",
                   fusion_rt_status_string(st), fusion_rt_last_error_message());
      std::exit(1);
    }
  };
  run(); // warm-up (page faults)
  std::vector<double> times;
  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  std::sort(times.begin(), times.end());
  const double bytes = double(m * n) * 2 + double(m * n) + double(m * sc);
  const double med = times[times.size() / 2];
  std::printf("rowwise MXFP8 e4m3 RCEIL, bf16 %lldx%lld, threads=%d: median "
              "%.2f ms, best %.2f ms, %.3f GB/s (median), %.3f GB/s (best)\n",
              (long long)m, (long long)n, threads, med * 1e3, times[0] * 1e3,
              bytes / med * 1e-9, bytes / times[0] * 1e-9);
  return 0;
}
