//===- cuda_backend.cu - the CUDA backend: checks, set-up, dispatch -*- CUDA -*-===//
//
// Implements the CUDA hook of src/backend.h. A validated Request reaches
// cuda_execute; this file checks what only the device side can check (every
// pointer is memory of the current device), hands every request but the
// MXFP8 quantizers to formats.cu, fills the MXFP8 kernel parameters, and
// launches on the caller's stream:
//   swizzled scales with padding   cudaMemsetAsync of the scale buffer first
//   amax                           cudaMemsetAsync(0), then atomicMax of bits
//   dbias                          [bands, N] workspace (stream-ordered
//                                  allocation) + dbias_reduce_kernel
// Everything is stream-ordered, so calls can be captured in CUDA graphs.
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_backend.h"
#include "cuda/cuda_status.h"
#include "cuda/fp8_transpose.h"
#include "cuda/launch.cuh"
#include "src/backend.h"

#include <cxxabi.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fusion_rt {
namespace cuda {
namespace {

bool aligned(const void *p, int64_t bytes) {
  return (reinterpret_cast<uintptr_t>(p) % uint64_t(bytes)) == 0;
}

/// Vector loads of `bytes` allowed on a view: unit column stride, base and
/// row pitch multiples of `bytes`.
bool vec_ok(const Mat &m, int64_t esize, int64_t bytes) {
  return m.present() && (m.cs == 1 || m.cols <= 1) && aligned(m.data, bytes) &&
         ((m.rs * esize) % bytes == 0 || m.rows <= 1);
}

/// The kernel recorded by note_launch (check_plan knob), and its name as
/// the inventory and mx_plan::kernel_name spell it.
thread_local const void *g_launched = nullptr;

std::string launched_kernel_name() {
  if (!g_launched)
    return "no kernel";
  const char *name = nullptr;
  if (cudaFuncGetName(&name, g_launched) != cudaSuccess || !name)
    return "an unnamed kernel";
  int status = 0;
  char *demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && demangled ? demangled : name;
  std::free(demangled);
  return out;
}

std::string without_spaces(const std::string &s) {
  std::string out;
  for (char c : s)
    if (c != ' ')
      out += c;
  return out;
}

} // namespace

void note_launch(const void *kernel) {
  if (!g_launched && tuning().check_plan != 0)
    g_launched = kernel;
}

static thread_local char g_detail[512] = "";

fusion_rt_status fail(fusion_rt_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(g_detail, sizeof g_detail, fmt, ap);
  va_end(ap);
  return st;
}

fusion_rt_status cuda_fail(cudaError_t e, const char *what) {
  cudaGetLastError(); // clear a sticky launch error for the next call
  return fail(FUSION_RT_STATUS_BACKEND_ERROR, "CUDA backend: %s failed: %s",
              what, cudaGetErrorString(e));
}

void clear_error_detail() { g_detail[0] = '\0'; }

int where(const void *ptr, int device) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
    cudaGetLastError();
    return 1;
  }
  if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
    return 1;
  return (a.type == cudaMemoryTypeDevice && a.device != device) ? 2 : 0;
}

const char *error_detail() { return g_detail; }

const char *synchronize(void *stream) {
  cudaError_t e = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

int device_sm_count() {
  static int cache[64] = {0};
  int dev = 0;
  cudaGetDevice(&dev);
  if (dev < 0 || dev >= 64)
    dev = 0;
  if (!cache[dev]) {
    int n = 0;
    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
    cache[dev] = n > 0 ? n : 1;
  }
  return cache[dev];
}

__global__ void dbias_reduce_kernel(const float *ws, int64_t nbands, int64_t K,
                                    float *dbias, int64_t stride) {
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < K;
       j += int64_t(gridDim.x) * blockDim.x) {
    float acc = 0.f;
    for (int64_t b = 0; b < nbands; ++b)
      acc += ws[b * K + j];
    dbias[j * stride] = canonical_nan(acc);
  }
}

cudaError_t launch_dbias_reduce(const float *ws, int64_t nbands, int64_t K,
                                float *dbias, int64_t stride,
                                cudaStream_t stream) {
  if (K <= 0)
    return cudaSuccess;
  const int64_t blocks = ceil_div(K, 256);
  const int grid = int(blocks < 4096 ? blocks : 4096);
  dbias_reduce_kernel<<<grid, 256, 0, stream>>>(ws, ws ? nbands : 0, K, dbias,
                                                stride);
  return cudaGetLastError();
}

} // namespace cuda

using namespace cuda;

bool cuda_is_device_pointer(const void *ptr) {
  if (!ptr)
    return false;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return cuda::where(ptr, dev) != 1;
}

bool cuda_request_touches_device(const Request &q) {
  const void *ptrs[] = {q.x.data,        q.up.data,        q.grad.data,
                        q.row_data.data, q.row_scales.data, q.col_data.data,
                        q.col_scales.data, q.amax,          q.dbias,
                        q.act_out.data,  q.deq_out.data};
  for (const void *p : ptrs)
    if (p && cuda_is_device_pointer(p))
      return true;
  return false;
}

fusion_rt_status cuda_execute(const Request &q, void *stream_ptr) {
  cuda::clear_error_detail();
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const int32_t f = q.scheme.format;

  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess)
    return cuda_fail(e, "cudaGetDevice");

  // Every pointer must be memory of the current device.
  struct Named {
    const void *p;
    const char *name;
  } ptrs[] = {{q.x_is_scratch ? nullptr : q.x.data,
               q.gated ? "input (gate half)" : "input"},
              {q.x_is_scratch ? nullptr : q.up.data, "up"},
              {q.grad.data, "grad"},
              {q.row_data.data, "outputs->rowwise_data"},
              {q.row_scales.data, "outputs->rowwise_scales"},
              {q.col_data.data, "outputs->colwise_data"},
              {q.col_scales.data, "outputs->colwise_scales"},
              {q.amax, "outputs->amax"},
              {q.dbias, "outputs->dbias"},
              {q.scale_inv, "outputs->scale_inv"},
              {q.scale_in, "outputs->scale"},
              {q.act_out.data, "output"},
              {q.deq_out.data, "output"}};
  for (const Named &n : ptrs) {
    if (!n.p)
      continue;
    const int w = cuda::where(n.p, dev);
    if (w == 1)
      return fail(FUSION_RT_STATUS_BAD_VALUE,
                  "%s is host memory but the call runs on the CUDA backend: "
                  "all pointers of one call must be device memory (or all "
                  "host memory for the CPU backend)",
                  n.name);
    if (w == 2)
      return fail(FUSION_RT_STATUS_BAD_VALUE,
                  "%s is memory of another device than the current one (%d)",
                  n.name, dev);
  }

  // MXFP8 quantizers run on the tile engine below; every other format,
  // fusion_rt_dequantize and fusion_rt_activation_apply on formats.cu.
  // FP8 block 1x128 from 16-bit rows, plain or SwiGLU forward, and the 2D
  // FP8 blocks (weight tiles) on the kernels of fp8_block.cu; rowwise FP4
  // from 16-bit rows on the stream kernels of fp4_stream.cu; FP8 per tensor
  // with a transposed copy from 16-bit rows on fp8_transpose.cu.
  if (q.op == Op::Dequantize || q.op == Op::Activation ||
      (f != kMXFP8E4M3 && f != kMXFP8E5M2))
    return fp8_block_tiles_apply(q)     ? fp8_block_tiles_execute(q, stream)
           : fp8_block_stream_applies(q) ? fp8_block_stream_execute(q, stream)
           : fp8_transpose_applies(q)    ? fp8_transpose_execute(q, stream)
           : fp4_stream_applies(q)       ? fp4_stream_execute(q, stream)
                                         : formats_execute(q, stream);

  const int32_t in_dt = q.x.dtype;
  const int64_t esize = in_dt == FUSION_RT_F32 ? 4 : 2;
  const bool gated = q.op == Op::GatedActQuantize;
  const bool act = q.op == Op::ActQuantize;
  const int vec = gated ? (q.backward ? kGatedBwdVec : kGatedFwdVec)
                  : act ? kActVec
                        : plain_vec(in_dt);
  const int nv = gated && q.backward ? 2 : 1;

  KParams p{};
  p.M = q.rows;
  p.K = gated ? q.x.cols : q.cols;
  p.x = q.x.data;
  p.x_rs = q.x.rs, p.x_cs = q.x.cs;
  bool vec_all = vec_ok(q.x, esize, vec * esize);
  // Gate and up interleaved in one row (GPT-OSS's layout, the prefill form
  // of the FFN front writes it): pairs of VEC elements, 16-byte aligned.
  p.ilv = gated && !q.backward && q.up.present() && q.x.cs == 2 &&
          q.up.cs == 2 && q.up.rs == q.x.rs && q.x.cols > 1 &&
          q.up.data == q.x.data + esize && aligned(q.x.data, 16) &&
          ((q.x.rs * esize) % 16 == 0 || q.x.rows <= 1);
  if (p.ilv)
    vec_all = true;
  if (q.up.present()) {
    p.up = q.up.data, p.up_rs = q.up.rs, p.up_cs = q.up.cs;
    vec_all = vec_all && (p.ilv || vec_ok(q.up, esize, vec * esize));
  }
  if (q.grad.present()) {
    p.grad = q.grad.data, p.g_rs = q.grad.rs, p.g_cs = q.grad.cs;
    vec_all = vec_all && vec_ok(q.grad, esize, vec * esize);
  }
  p.kind = q.act_kind;
  p.inter = q.inter;
  p.set_act(q.params);
  p.format = f;
  p.rounding = q.scheme.scale_rounding;
  p.propagate = q.scheme.nan_policy == FUSION_RT_NAN_PROPAGATE;
  p.swz = q.swizzled;
  // Code stores of VEC bytes: every segment start (k*K) must keep alignment.
  vec_all = vec_all && (nv == 1 || p.K % vec == 0);
  if (q.row_wise) {
    p.rd = reinterpret_cast<uint8_t *>(q.row_data.data);
    p.rd_rs = q.row_data.rs, p.rd_cs = q.row_data.cs;
    vec_all = vec_all && vec_ok(q.row_data, 1, vec);
    p.rsc = reinterpret_cast<uint8_t *>(q.swizzled ? q.row_scales_swz
                                                   : q.row_scales.data);
    p.rsc_rs = q.row_scales.rs, p.rsc_cs = q.row_scales.cs;
    p.rsc_pc = q.row_scales_padded_cols;
    p.row_nb = ceil_div(p.K, 32);
  }
  if (q.col_wise) {
    p.cd = reinterpret_cast<uint8_t *>(q.col_data.data);
    p.cd_rs = q.col_data.rs, p.cd_cs = q.col_data.cs;
    p.col_t = q.col_transposed;
    vec_all = vec_all && vec_ok(q.col_data, 1, p.col_t ? 16 : vec);
    p.csc = reinterpret_cast<uint8_t *>(q.swizzled ? q.col_scales_swz
                                                   : q.col_scales.data);
    p.csc_rs = q.col_scales.rs, p.csc_cs = q.col_scales.cs;
    p.csc_pc = q.col_scales_padded_cols;
  }
  p.vec_all = vec_all;
  // 16-byte input vectors (8 x 16-bit) and 8-byte code stores.
  p.vec16 = esize == 2 && (p.ilv || vec_ok(q.x, esize, 16)) &&
            (!q.up.present() || p.ilv || vec_ok(q.up, esize, 16)) &&
            (!q.grad.present() || vec_ok(q.grad, esize, 16)) &&
            (!q.row_wise || vec_ok(q.row_data, 1, 8)) &&
            (!q.col_wise || vec_ok(q.col_data, 1, p.col_t ? 16 : 8));
  const int64_t nbands = ceil_div(p.M, 32);
  p.tiles = nbands * p.K; // nonzero when there is work; launch_tiles sets
                          // the real tile count of its lane layout

  // Swizzled buffers: the padding is zero (written only when there is some).
  if (q.swizzled) {
    if (q.row_wise &&
        (q.row_scales_padded_rows != q.rows ||
         q.row_scales_padded_cols != nv * p.row_nb)) {
      e = cudaMemsetAsync(q.row_scales_swz, 0,
                          size_t(q.row_scales_padded_rows * q.row_scales_padded_cols),
                          stream);
      if (e != cudaSuccess)
        return cuda_fail(e, "cudaMemsetAsync(rowwise scales)");
    }
    if (q.col_wise && (q.col_scales_padded_rows != q.cols ||
                       q.col_scales_padded_cols != nbands)) {
      e = cudaMemsetAsync(q.col_scales_swz, 0,
                          size_t(q.col_scales_padded_rows * q.col_scales_padded_cols),
                          stream);
      if (e != cudaSuccess)
        return cuda_fail(e, "cudaMemsetAsync(colwise scales)");
    }
  }
  if (q.amax) {
    e = cudaMemsetAsync(q.amax, 0, sizeof(float), stream);
    if (e != cudaSuccess)
      return cuda_fail(e, "cudaMemsetAsync(amax)");
    p.amax_bits = reinterpret_cast<uint32_t *>(q.amax);
  }
  float *ws = nullptr;
  const bool want_dbias = q.dbias && !gated;
  if (want_dbias && nbands > 0 && p.K > 0) {
    e = cudaMallocAsync(reinterpret_cast<void **>(&ws),
                        size_t(nbands * p.K) * sizeof(float), stream);
    if (e != cudaSuccess)
      return cuda_fail(e, "cudaMallocAsync(dbias workspace)");
    p.dbias_ws = ws;
  }

  if (p.tiles > 0) {
    // The kernel and its grid: the plan that the kernel report prints too.
    mx_plan::Request r;
    r.src = gated ? (q.backward ? mx_plan::Source::GatedBwd : mx_plan::Source::GatedFwd)
            : act ? (q.backward ? mx_plan::Source::ActBwd : mx_plan::Source::ActFwd)
                  : mx_plan::Source::Plain;
    r.kind = p.kind;
    r.inter = p.inter;
    r.dir = q.row_wise && q.col_wise ? kBoth : q.col_wise ? kCol : kRow;
    r.esize = int(esize);
    r.amax = p.amax_bits != nullptr;
    r.M = p.M;
    r.K = p.K;
    r.col_t = p.col_t;
    r.vec_all = p.vec_all;
    r.vec16 = p.vec16;
    r.ilv = p.ilv;
    r.flat = stream_flat(p);
    const Tuning &knobs = tuning();
    const mx_plan::Plan plan = mx_plan::plan_mx(r, knobs);
    const bool check = knobs.check_plan != 0;
    if (check)
      g_launched = nullptr;
    e = gated ? launch_gated(p, plan, in_dt, stream)
        : act ? launch_act(p, plan, in_dt, stream)
              : launch_quantize(p, plan, in_dt, stream);
    if (check && e == cudaSuccess) {
      const std::string want = mx_plan::kernel_name(
          plan,
          in_dt == FUSION_RT_BF16  ? "fusion_rt::cuda::BF16T"
          : in_dt == FUSION_RT_F16 ? "fusion_rt::cuda::F16T"
                                   : "fusion_rt::cuda::F32T",
          f == kMXFP8E4M3, p.propagate);
      const std::string got = launched_kernel_name();
      if (without_spaces(got) != without_spaces(want)) {
        if (ws)
          cudaFreeAsync(ws, stream);
        return fail(FUSION_RT_STATUS_BACKEND_ERROR,
                    "the plan names %.200s but %.200s was launched", want.c_str(),
                    got.c_str());
      }
    }
    if (e == cudaSuccess && q.scheme.zero_scale == FUSION_RT_ZERO_SCALE_ONE)
      e = launch_zero_scale_one(p, nv, q.row_wise, q.col_wise, stream);
    if (e == cudaSuccess &&
        q.scheme.zero_scale == FUSION_RT_ZERO_SCALE_MIN_NORMAL)
      e = launch_zero_scale_min_normal(p, gated ? 2 : act ? 1 : 0, q.backward,
                                       in_dt, q.row_wise, q.col_wise, stream);
    if (e != cudaSuccess) {
      if (ws)
        cudaFreeAsync(ws, stream);
      return cuda_fail(e, "the quantize kernel launch");
    }
  }
  if (want_dbias && p.K > 0) {
    e = launch_dbias_reduce(ws, nbands, p.K, q.dbias, q.dbias_stride, stream);
    if (ws)
      cudaFreeAsync(ws, stream);
    if (e != cudaSuccess)
      return cuda_fail(e, "the dbias reduction launch");
  }
  return FUSION_RT_STATUS_SUCCESS;
}

fusion_rt_status cuda_scratch_alloc(size_t bytes, void *stream, void **out) {
  cuda::clear_error_detail();
  cudaError_t e =
      cudaMallocAsync(out, bytes, static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) {
    *out = nullptr;
    return cuda_fail(e, "cudaMallocAsync(gated value scratch)");
  }
  return FUSION_RT_STATUS_SUCCESS;
}

void cuda_scratch_free(void *ptr, void *stream) {
  if (ptr)
    cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream));
}

} // namespace fusion_rt
