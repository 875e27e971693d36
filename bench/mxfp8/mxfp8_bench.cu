//===- mxfp8_bench.cpp - device benchmark of the fusion_rt MXFP8 kernels ---===//
//
// Times the CUDA backend through the C ABI (fusion_rt_quantize,
// fusion_rt_act_quantize, fusion_rt_gated_act_quantize) with the method of
// research/peers.md: random inputs (never zeros), inputs and outputs rotated
// through enough buffers to exceed the L2 (>= 240 MiB of inputs), R calls
// captured in one CUDA graph, the median over >= 15 replays; per-call time =
// replay / R; bytes = inputs read once + codes and scales written once.
// Also measures the copy ceiling: a 2 GiB device-to-device copy issued
// eagerly (a memcpy node in a graph runs slower; peers.md).
//
// Options: --csv FILE, --quick (the 4096-row shapes only), --only A,B,..
// (name fragments; =NAME for an exact name), --shape MxN (one shape)
// (kernels whose name contains one of the fragments: quick A/B runs).
// Prints one CSV line per arm to stdout (and to --csv FILE):
//   arm,kernel,shape,M,N,bytes,us,GBps
// The peers (torch, torch.compile, torchao) are timed by
// bench/mxfp8/run_mxfp8_bench.py in the same run.
//
//===----------------------------------------------------------------------===//
#include "fusion_rt.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

#define CUDA_OK(expr)                                                          \
  do {                                                                         \
    cudaError_t e_ = (expr);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n",                     \
                   cudaGetErrorString(e_), __FILE__, __LINE__, #expr);         \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

FILE *g_csv = nullptr;

void emit(const char *arm, const char *kernel, const char *shape, int64_t m,
          int64_t n, double bytes, double us) {
  char line[512];
  std::snprintf(line, sizeof line, "%s,%s,%s,%lld,%lld,%.0f,%.3f,%.1f\n", arm,
                kernel, shape, (long long)m, (long long)n, bytes, us,
                bytes / (us * 1e-6) / 1e9);
  std::fputs(line, stdout);
  std::fflush(stdout);
  if (g_csv) {
    std::fputs(line, g_csv);
    std::fflush(g_csv);
  }
}

/// Fills `n` bf16 values with random normals (bits via a hash; on the device).
__global__ void fill_bf16(uint16_t *p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 0x9e3779b9u ^ seed;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    float u1 = ((h & 0xffff) + 1) / 65537.f, u2 = (h >> 16) / 65536.f;
    float g = sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
    uint32_t b = __float_as_uint(g);
    p[i] = uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

fusion_rt_tensor view2(void *data, int dt, int64_t rows, int64_t cols, int64_t rs) {
  fusion_rt_tensor t{};
  t.data = data;
  t.dtype = dt;
  t.rank = 2;
  t.sizes[0] = rows;
  t.sizes[1] = cols;
  t.strides[0] = rs;
  t.strides[1] = 1;
  return t;
}

/// Copy ceiling: eager 2 GiB D2D copies, median of 20.
double copy_ceiling() {
  const size_t bytes = size_t(2) << 30;
  void *a, *b;
  CUDA_OK(cudaMalloc(&a, bytes));
  CUDA_OK(cudaMalloc(&b, bytes));
  CUDA_OK(cudaMemset(a, 1, bytes));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<double> t;
  for (int i = 0; i < 23; ++i) {
    cudaEventRecord(e0);
    CUDA_OK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    if (i >= 3)
      t.push_back(ms * 1e3);
  }
  cudaFree(a);
  cudaFree(b);
  const double us = median(t);
  emit("copy", "d2d_copy_2GiB", "2GiB", 0, 0, 2.0 * double(bytes), us);
  return us;
}

enum class Kind { Quantize, SwiGLU, DSwiGLU, DGeluDbias };

struct Config {
  Kind kind;
  const char *name;
  int64_t m, n; // quantize: [m, n]; gated: m, K = n; act: [m, n]
  int dir, layout;
  int rounding;
};

/// Times one configuration; returns microseconds per call.
void bench(const Config &c) {
  const int64_t M = c.m, N = c.n;
  const bool gated = c.kind == Kind::SwiGLU || c.kind == Kind::DSwiGLU;
  const bool bwd = c.kind == Kind::DSwiGLU || c.kind == Kind::DGeluDbias;
  // Inputs (bf16): quantize x [M,N]; swiglu x [M,2K]; dswiglu x [M,2K] + grad
  // [M,K]; dgelu x [M,N] + grad [M,N].
  const int64_t x_cols = gated ? 2 * N : N;
  const size_t x_bytes = size_t(M * x_cols) * 2;
  const size_t g_bytes = bwd ? size_t(M * N) * 2 : 0;
  const int64_t vcols = c.kind == Kind::DSwiGLU ? 2 * N : N;
  fusion_rt_quant_scheme s;
  fusion_rt_quant_scheme_init(&s);
  s.format = FUSION_RT_FORMAT_MXFP8_E4M3;
  s.scale_rounding = c.rounding;
  s.direction = c.dir;
  s.colwise_layout = c.layout;
  fusion_rt_quant_shapes sh;
  if (fusion_rt_quant_shapes_for(&s, M, vcols, c.kind == Kind::DSwiGLU, &sh)) {
    std::fprintf(stderr, "shapes: %s\n", fusion_rt_last_error_message());
    std::exit(2);
  }
  const size_t out_bytes[4] = {
      size_t(sh.rowwise_data[0] * sh.rowwise_data[1]),
      size_t(sh.rowwise_scales[0] * sh.rowwise_scales[1]),
      size_t(sh.colwise_data[0] * sh.colwise_data[1]),
      size_t(sh.colwise_scales[0] * sh.colwise_scales[1])};
  const size_t in_total = x_bytes + g_bytes;
  size_t out_total = 0;
  for (size_t b : out_bytes)
    out_total += b;
  const size_t dbias_bytes = c.kind == Kind::DGeluDbias ? size_t(N) * 4 : 0;
  // Rotation: enough sets that the inputs exceed 240 MiB.
  const int nset = int(std::max<size_t>(1, (size_t(240) << 20) / in_total + 1));
  struct Set {
    void *x = nullptr, *g = nullptr, *o[4] = {}, *dbias = nullptr;
  };
  std::vector<Set> sets(static_cast<size_t>(nset));
  for (Set &st : sets) {
    CUDA_OK(cudaMalloc(&st.x, x_bytes));
    fill_bf16<<<1024, 256>>>(static_cast<uint16_t *>(st.x), x_bytes / 2, rand());
    if (g_bytes) {
      CUDA_OK(cudaMalloc(&st.g, g_bytes));
      fill_bf16<<<1024, 256>>>(static_cast<uint16_t *>(st.g), g_bytes / 2, rand());
    }
    for (int b = 0; b < 4; ++b)
      if (out_bytes[b])
        CUDA_OK(cudaMalloc(&st.o[b], out_bytes[b]));
    if (dbias_bytes)
      CUDA_OK(cudaMalloc(&st.dbias, dbias_bytes));
  }
  CUDA_OK(cudaDeviceSynchronize());
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  auto call = [&](const Set &st) {
    fusion_rt_quant_outputs o;
    fusion_rt_quant_outputs_init(&o);
    if (out_bytes[0]) {
      o.rowwise_data = view2(st.o[0], FUSION_RT_F8E4M3, sh.rowwise_data[0],
                             sh.rowwise_data[1], sh.rowwise_data[1]);
      o.rowwise_scales = view2(st.o[1], FUSION_RT_E8M0, sh.rowwise_scales[0],
                               sh.rowwise_scales[1], sh.rowwise_scales[1]);
    }
    if (out_bytes[2]) {
      o.colwise_data = view2(st.o[2], FUSION_RT_F8E4M3, sh.colwise_data[0],
                             sh.colwise_data[1], sh.colwise_data[1]);
      o.colwise_scales = view2(st.o[3], FUSION_RT_E8M0, sh.colwise_scales[0],
                               sh.colwise_scales[1], sh.colwise_scales[1]);
    }
    if (dbias_bytes)
      o.dbias = view2(st.dbias, FUSION_RT_F32, 1, N, N);
    fusion_rt_tensor x = view2(st.x, FUSION_RT_BF16, M, x_cols, x_cols);
    fusion_rt_tensor g = view2(st.g, FUSION_RT_BF16, M, N, N);
    fusion_rt_activation a;
    fusion_rt_activation_init(&a);
    a.intermediate_dtype = FUSION_RT_BF16;
    fusion_rt_status r;
    switch (c.kind) {
    case Kind::Quantize:
      r = fusion_rt_quantize(&x, &s, &o, nullptr, stream);
      break;
    case Kind::SwiGLU:
      a.kind = FUSION_RT_ACT_SWIGLU;
      r = fusion_rt_gated_act_quantize(&x, nullptr, nullptr, &a, &s, &o, nullptr,
                                       stream);
      break;
    case Kind::DSwiGLU:
      a.kind = FUSION_RT_ACT_SWIGLU;
      a.backward = 1;
      r = fusion_rt_gated_act_quantize(&x, nullptr, &g, &a, &s, &o, nullptr, stream);
      break;
    default:
      a.kind = FUSION_RT_ACT_GELU_TANH;
      a.backward = 1;
      r = fusion_rt_act_quantize(&x, &g, &a, &s, &o, nullptr, stream);
      break;
    }
    if (r != FUSION_RT_STATUS_SUCCESS) {
      std::fprintf(stderr, "%s: %s: %s\n", c.name, fusion_rt_status_string(r),
                   fusion_rt_last_error_message());
      std::exit(2);
    }
  };

  // Warm-up (occupancy queries, module load), outside the capture.
  for (int i = 0; i < 3; ++i)
    call(sets[size_t(i % nset)]);
  CUDA_OK(cudaStreamSynchronize(stream));
  // R calls per graph: at least 2 rotations and ~2 ms of work.
  const double est_us = double(in_total + out_total) / 3.5e12 * 1e6;
  int R = std::max(2 * nset, int(2000.0 / std::max(est_us, 1.0)));
  R = std::min(R, 400);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < R; ++i)
    call(sets[size_t(i % nset)]);
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  CUDA_OK(cudaGraphLaunch(exec, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  std::vector<double> t;
  for (int i = 0; i < 21; ++i) {
    cudaEventRecord(e0, stream);
    CUDA_OK(cudaGraphLaunch(exec, stream));
    cudaEventRecord(e1, stream);
    CUDA_OK(cudaEventSynchronize(e1));
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    t.push_back(ms * 1e3 / R);
  }
  const double us = median(t);
  char shape[64];
  std::snprintf(shape, sizeof shape, "%lldx%lld", (long long)M, (long long)N);
  emit("fusion_rt", c.name, shape, M, N, double(in_total + out_total + dbias_bytes), us);

  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(stream);
  for (Set &st : sets) {
    cudaFree(st.x);
    if (st.g)
      cudaFree(st.g);
    for (void *p : st.o)
      if (p)
        cudaFree(p);
    if (st.dbias)
      cudaFree(st.dbias);
  }
}

} // namespace

int main(int argc, char **argv) {
  bool quick = false;
  const char *only = nullptr; // run only kernels whose name contains this
  const char *shape = nullptr; // --shape MxN: only that shape
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--csv") && i + 1 < argc)
      g_csv = std::fopen(argv[++i], "w");
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else if (!std::strcmp(argv[i], "--shape") && i + 1 < argc)
      shape = argv[++i];
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 0;
  }
  cudaDeviceProp prop;
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  std::fprintf(stderr, "device: %s, %d SMs, L2 %d MiB\n", prop.name,
               prop.multiProcessorCount, prop.l2CacheSize >> 20);
  std::printf("arm,kernel,shape,M,N,bytes,us,GBps\n");
  if (g_csv)
    std::fputs("arm,kernel,shape,M,N,bytes,us,GBps\n", g_csv);
  srand(1234);
  copy_ceiling();

  const int64_t qshapes[][2] = {{16384, 16384}, {8192, 28672}, {4096, 14336}, {4096, 7168}};
  std::vector<Config> cfgs;
  for (auto &q : qshapes) {
    if (quick && q[0] != 4096)
      continue;
    cfgs.push_back({Kind::Quantize, "mxfp8_rowwise", q[0], q[1], 0, 0, 1});
    cfgs.push_back({Kind::Quantize, "mxfp8_colwise_same", q[0], q[1], 1, 0, 1});
    cfgs.push_back({Kind::Quantize, "mxfp8_colwise_transposed", q[0], q[1], 1, 1, 1});
    cfgs.push_back({Kind::Quantize, "mxfp8_both", q[0], q[1], 2, 0, 1});
    // Both directions with the colwise output transposed ([N, M], the
    // layout of torchao's dim0 + dim1 pair).
    cfgs.push_back({Kind::Quantize, "mxfp8_both_transposed", q[0], q[1], 2, 1, 1});
  }
  cfgs.push_back({Kind::Quantize, "mxfp8_rowwise_rceil", 16384, 16384, 0, 0, 0});
  const int64_t gshapes[][2] = {{4096, 7168}, {16384, 7168}, {8192, 14336}};
  for (auto &g : gshapes) {
    if (quick && g[0] != 4096)
      continue;
    cfgs.push_back({Kind::SwiGLU, "swiglu_mxfp8_rowwise", g[0], g[1], 0, 0, 1});
    cfgs.push_back({Kind::DSwiGLU, "dswiglu_mxfp8_both", g[0], g[1], 2, 0, 1});
    cfgs.push_back({Kind::DGeluDbias, "dgelu_dbias_mxfp8_both", g[0], g[1], 2, 0, 1});
  }
  for (const Config &c : cfgs) {
    // --only takes a comma-separated list of name fragments.
    bool take = !only;
    for (const char *f = only; f && *f && !take;) {
      const char *e = std::strchr(f, ',');
      const std::string frag = e ? std::string(f, size_t(e - f)) : std::string(f);
      // "=name" matches that name exactly.
      take = !frag.empty() && (frag[0] == '='
                                   ? frag.compare(1, std::string::npos, c.name) == 0
                                   : std::strstr(c.name, frag.c_str()) != nullptr);
      f = e ? e + 1 : nullptr;
    }
    if (take && shape) // --shape MxN: that shape only
      take = std::to_string(c.m) + "x" + std::to_string(c.n) == shape;
    if (take)
      bench(c);
  }
  if (g_csv)
    std::fclose(g_csv);
  return 0;
}
