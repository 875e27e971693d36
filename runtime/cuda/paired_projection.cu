//===- paired_projection.cu - CUDA paired projection (GDN gates, gate/up) -*- CUDA -*-===//
//
// fusion_rt_paired_projection_run on device memory. Four paths, chosen per
// call (docs/paired-projections.md has the measurements behind the choice;
// the selector is runtime/common/paired_plan.h):
//
//  gemv     M <= 16 tokens or M*K*(H0+H1) <= 2^23 (f32: 2^24) multiply-adds, with
//           16-byte-loadable views. ONE launch of paired_gemv_kernel, by
//           default without a cluster: one CTA per (row group, token),
//           K split over the CTA's warps so that every lane issues all its
//           16-byte weight loads before its first FMA, the warps' partials
//           added through shared memory, both epilogues in the same launch
//           (their bias / scale loaded before the weights arrive). A cluster
//           split of K (S <= 8, DSMEM push reduction) remains available as
//           an override. No workspace, no atomics: deterministic.
//  mma      16-bit operands, past the gemv path up to kMmaMaxMacs: ONE
//           launch of paired_mma_kernel, tensor cores (mma.sync m16n8k16,
//           fp32 accumulation) on fragments loaded straight from global
//           memory with 16-byte loads, K split over the CTA's warps and a
//           cluster (DSMEM reduction), both epilogues in the same launch.
//  blas     larger M: cuBLAS into an fp32 workspace (stream-ordered
//           allocation) — one GemmEx of H0 + H1 rows when the weights are
//           stacked in one buffer, one strided-batched GemmEx when they share
//           shape and layout, else two GemmEx — then paired_epilogue_kernel.
//  generic  any strides (views cuBLAS cannot take, K not a multiple of the
//           vector width): one thread per output, sequential fp32 over K
//           with separate multiply and add — bit-identical to the CPU
//           reference's accumulation.
//
// The gemv and mma paths' kernels are in paired_gemv.cu and paired_mma.cu,
// what the paths share in paired_kernels.cuh, their PTX in ptx.cuh.
//
// Bytes the gemv path must move: (H0 + H1) * K * esize weights + M * K * esize
// lhs (L2 serves the re-reads by other row groups) + outputs. At the GDN
// shapes that is 0.25-1 MiB, under 0.3 us of HBM time: the kernel is latency
// bound, which is why one launch and a full machine matter more than bytes.
//
// Everything is stream-ordered and capturable in CUDA graphs, except that the
// first call on a device creates the cuBLAS handle (do it before capturing).
//
// Debug / benchmark overrides (runtime/common/tuning.def: the environment,
// read once per process, or fusion_rt_set_tuning):
//   FUSION_RT_PAIRED_PATH        auto | gemv | mma | blas | generic
//   FUSION_RT_PAIRED_GEMV_MAX_M  largest M that takes the gemv path
//   FUSION_RT_PAIRED_SPLIT       cluster size S (1..8) of the gemv and mma paths
//   FUSION_RT_PAIRED_WR          row warps per CTA of the gemv path
//   FUSION_RT_PAIRED_WK          K-split warps per CTA of the gemv and mma paths
//   FUSION_RT_PAIRED_MT          gemv: largest token tile (1..16); mma: tokens
//                                per tile (16, 32)
//   FUSION_RT_PAIRED_RPW         gemv: weight rows per warp (1, 2); mma: rows
//                                per tile (8, 16)
//   FUSION_RT_PAIRED_LEAN        0: never the lean gemv instance (default 1)
//   FUSION_RT_PAIRED_DECODE      0: never the decode gemv instance (default 1)
//   FUSION_RT_PAIRED_PDL         1: programmatic dependent launch (default 0):
//                                the gemv and mma kernels prefetch their
//                                weights into L2 while the kernel before
//                                them finishes; every kernel lets the next
//                                one start once it is past its wait
//
//===----------------------------------------------------------------------===//
#include "cuda/paired_kernels.cuh"

#include <cublasLt.h>
#include <cublas_v2.h>

namespace fusion_rt {
namespace paired {
namespace {

//===--- blas and generic paths -------------------------------------------------===//

/// One thread per output element of the blas path: reads the fp32 GEMM
/// results y_i [M, H_i] and applies the epilogues.
__global__ void paired_epilogue_kernel(const __grid_constant__ Params p) {
  if (p.pdl) { // launched while the GEMM may still run: wait for its y
    pdl_wait();
    pdl_launch_dependents();
  }
  const bool gated = p.gated_kind >= 0;
  const int64_t n0 = p.M * p.H[0];
  const int64_t total = gated ? n0 : n0 + p.M * p.H[1];
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int oi = e < n0 ? 0 : 1;
    const int64_t le = oi == 0 ? e : e - n0;
    const int64_t m = le / p.H[oi], n = le % p.H[oi];
    if (gated)
      finish(p.out[0], m, n,
             gated_of(p, n, p.y[0][m * p.y_ld[0] + n], p.y[1][m * p.y_ld[1] + n]));
    else
      finish(p.out[oi], m, n, epilogue_of(p.out[oi], n, p.y[oi][m * p.y_ld[oi] + n]));
  }
}

/// One thread per output element, any strides, sequential fp32 over K with
/// separate multiply and add (the CPU reference's order, bit for bit).
template <typename T>
__global__ void paired_generic_kernel(const __grid_constant__ Params p) {
  const bool gated = p.gated_kind >= 0;
  const int64_t n0 = p.M * p.H[0];
  const int64_t total = gated ? n0 : n0 + p.M * p.H[1];
  constexpr int32_t kDt = sizeof(T) == 4 ? FUSION_RT_F32
                          : std::is_same<T, __nv_bfloat16>::value ? FUSION_RT_BF16
                                                                  : FUSION_RT_F16;
  auto dot = [&](int wi, int64_t m, int64_t n) {
    float acc = 0.f;
    const T *x = reinterpret_cast<const T *>(p.x) + m * p.x_rs;
    const T *w = reinterpret_cast<const T *>(w_row_ptr<T>(p, wi, n));
    for (int64_t k = 0; k < p.K; ++k)
      acc = __fadd_rn(acc, __fmul_rn(load_elem(x, kDt, k * p.x_cs),
                                     load_elem(w, kDt, k * p.w_cs[wi])));
    return acc;
  };
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int oi = e < n0 ? 0 : 1;
    const int64_t le = oi == 0 ? e : e - n0;
    const int64_t m = le / p.H[oi], n = le % p.H[oi];
    if (gated)
      finish(p.out[0], m, n, gated_of(p, n, dot(0, m, n), dot(1, m, n)));
    else
      finish(p.out[oi], m, n, epilogue_of(p.out[oi], n, dot(oi, m, n)));
  }
}

cudaError_t launch_generic(const Params &p, int32_t dt, cudaStream_t stream) {
  const int64_t total = p.M * (p.H[0] + (p.gated_kind >= 0 ? 0 : p.H[1]));
  if (total == 0)
    return cudaSuccess;
  int64_t blocks = (total + 127) / 128;
  const int64_t cap = int64_t(cuda::device_sm_count()) * 16;
  blocks = blocks < cap ? blocks : cap;
  switch (dt) {
  case FUSION_RT_BF16:
    paired_generic_kernel<__nv_bfloat16><<<unsigned(blocks), 128, 0, stream>>>(p);
    break;
  case FUSION_RT_F16:
    paired_generic_kernel<__half><<<unsigned(blocks), 128, 0, stream>>>(p);
    break;
  default:
    paired_generic_kernel<float><<<unsigned(blocks), 128, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

//===--- cuBLAS -------------------------------------------------------------------===//

/// cuBLAS workspace of each handle: allocated once with the handle, so that
/// a call captured in a CUDA graph allocates nothing inside cuBLAS.
constexpr size_t kBlasWorkspace = size_t(32) << 20;

/// The slot of this thread's current device in the per-(thread, device)
/// handle arrays below (a device numbered past 63 uses slot 0).
int device_slot() {
  int dev = 0;
  cudaGetDevice(&dev);
  return dev < 0 || dev >= 64 ? 0 : dev;
}

/// One cuBLAS handle (and workspace) per (thread, device): handles are not
/// safe to share between threads that set different streams. Created by the
/// first blas-path call on the device, which must not be inside a capture.
cublasHandle_t blas_handle(cublasStatus_t &st, void *&workspace) {
  static thread_local cublasHandle_t handles[64] = {};
  static thread_local void *spaces[64] = {};
  const int dev = device_slot();
  st = CUBLAS_STATUS_SUCCESS;
  if (!handles[dev]) {
    st = cublasCreate(&handles[dev]);
    if (st != CUBLAS_STATUS_SUCCESS) {
      handles[dev] = nullptr;
      return nullptr;
    }
    if (cudaMalloc(&spaces[dev], kBlasWorkspace) != cudaSuccess) {
      cudaGetLastError();
      spaces[dev] = nullptr;
    }
  }
  workspace = spaces[dev];
  return handles[dev];
}

cudaDataType_t blas_type(int32_t dt) {
  return dt == FUSION_RT_BF16 ? CUDA_R_16BF : dt == FUSION_RT_F16 ? CUDA_R_16F
                                                                  : CUDA_R_32F;
}

/// How one [rows, K] operand is handed to cuBLAS (column-major): op and
/// leading dimension. `ok` false when neither stride is 1 (or ld too small).
struct BlasOperand {
  bool ok = false;
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 0;
};

/// For y^T = A * B with A the weight (H x K after op) and B = lhs^T (K x M
/// after op): a row-major [rows, K] view with unit column stride is a
/// column-major K x rows matrix, used transposed for A and as-is for B.
BlasOperand blas_operand(const Mat &a, bool is_weight) {
  BlasOperand o;
  const int64_t lim = int64_t(1) << 31;
  if (a.grouped()) // row groups: run_blas's batched form, nowhere else
    return o;
  if ((a.cs == 1 || a.cols <= 1) && (a.rs >= a.cols || a.rows <= 1)) {
    o.ok = true;
    o.op = is_weight ? CUBLAS_OP_T : CUBLAS_OP_N;
    o.ld = a.rows <= 1 ? (a.cols > 1 ? a.cols : 1) : a.rs;
  } else if ((a.rs == 1 || a.rows <= 1) && (a.cs >= a.rows || a.cols <= 1)) {
    o.ok = true;
    o.op = is_weight ? CUBLAS_OP_N : CUBLAS_OP_T;
    o.ld = a.cols <= 1 ? (a.rows > 1 ? a.rows : 1) : a.cs;
  }
  if (o.ld >= lim)
    o.ok = false;
  return o;
}

/// One cuBLASLt matmul configuration of a thread: its descriptors and the
/// algorithm the heuristic chose, kept for the next call of the same shape,
/// layout, types and pointer alignments (the heuristic and the descriptors
/// cost host time on every prefill call otherwise). The bias pointer is set
/// on each call.
struct LtPlan {
  bool used = false;
  int dev = 0;
  int64_t H = 0, M = 0, K = 0, lda = 0, ldb = 0, ldd = 0;
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  cudaDataType_t ct = CUDA_R_32F, dt = CUDA_R_32F, bias_t = CUDA_R_32F;
  bool bias = false;
  uint32_t align[3] = {0, 0, 0}; // A (weight), B (lhs), C = D
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo = {};

  bool same(const LtPlan &o) const {
    return used && dev == o.dev && H == o.H && M == o.M && K == o.K &&
           lda == o.lda && ldb == o.ldb && ldd == o.ldd && ta == o.ta &&
           tb == o.tb && ct == o.ct && dt == o.dt && bias == o.bias &&
           (!bias || bias_t == o.bias_t) && align[0] == o.align[0] &&
           align[1] == o.align[1] && align[2] == o.align[2];
  }
  void release() {
    for (cublasLtMatrixLayout_t l : {a, b, c})
      if (l)
        cublasLtMatrixLayoutDestroy(l);
    if (op)
      cublasLtMatmulDescDestroy(op);
    op = nullptr;
    a = b = c = nullptr;
    used = false;
  }
};

/// The alignment (bytes, at most 256) cuBLASLt may assume of a pointer.
uint32_t lt_alignment(const void *p) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(p);
  uint32_t al = 256;
  while (al > 1 && v % al)
    al /= 2;
  return al;
}

/// D = round(op(W) · op(X) [+ bias]), H x M column-major (ld `ldd`, type
/// `dt`), on cuBLASLt. With a bias, its bias epilogue adds it to the f32
/// accumulator and the sum is rounded once to `dt` (a Linear with
/// bias=True, as torch runs addmm). CUBLAS_STATUS_NOT_SUPPORTED where
/// cuBLASLt has no algorithm for it (nothing launched).
cublasStatus_t lt_gemm(cudaStream_t stream, const BlasOperand &bw,
                       const void *w, const BlasOperand &bx, const void *x,
                       cudaDataType_t ct, int64_t H, int64_t M, int64_t K,
                       void *d, cudaDataType_t dt, int64_t ldd,
                       const void *bias, cudaDataType_t bias_t) {
  static thread_local cublasLtHandle_t handles[64] = {};
  constexpr int kPlans = 16;
  static thread_local LtPlan plans[kPlans];
  static thread_local int next_plan = 0;
  const int dev = device_slot();
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  if (!handles[dev] && (st = cublasLtCreate(&handles[dev])) != CUBLAS_STATUS_SUCCESS) {
    handles[dev] = nullptr;
    return st;
  }
  void *ws = nullptr;
  blas_handle(st, ws); // the workspace of this thread's cuBLAS handle
  const uint64_t ws_bytes = ws ? kBlasWorkspace : 0;
  auto ok = [&](cublasStatus_t s) { return (st = s) == CUBLAS_STATUS_SUCCESS; };

  LtPlan key;
  key.used = true;
  key.dev = dev;
  key.H = H, key.M = M, key.K = K, key.lda = bw.ld, key.ldb = bx.ld,
  key.ldd = ldd;
  key.ta = bw.op, key.tb = bx.op, key.ct = ct, key.dt = dt, key.bias_t = bias_t;
  key.bias = bias != nullptr;
  // Every column's start, not only the first: the pointer and the leading
  // dimension's bytes (a [2H] output of H = 66 bf16 rows has 8-byte-aligned
  // columns behind a 256-byte-aligned pointer).
  auto aligned_cols = [](const void *ptr, int64_t ld, cudaDataType_t t) {
    const int64_t es = t == CUDA_R_32F ? 4 : 2;
    const uint32_t a = lt_alignment(ptr);
    const uint32_t b =
        lt_alignment(reinterpret_cast<const void *>(uintptr_t(ld * es)));
    return a < b ? a : b;
  };
  key.align[0] = aligned_cols(w, bw.ld, ct),
  key.align[1] = aligned_cols(x, bx.ld, ct),
  key.align[2] = aligned_cols(d, ldd, dt);
  LtPlan *plan = nullptr;
  for (LtPlan &p : plans)
    if (p.same(key))
      plan = &p;
  if (!plan) {
    LtPlan &p = plans[next_plan];
    next_plan = (next_plan + 1) % kPlans;
    p.release();
    p = key;
    p.used = false; // until its descriptors and algorithm are made
    const cublasLtEpilogue_t epi =
        key.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    const int32_t bias_type = bias_t;
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulHeuristicResult_t found = {};
    int count = 0;
    using Pref = cublasLtMatmulPreferenceAttributes_t;
    auto setPref = [&](Pref attr, uint32_t v) {
      return ok(cublasLtMatmulPreferenceSetAttribute(pref, attr, &v, sizeof v));
    };
    if (ok(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F)) &&
        ok(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA,
                                          &p.ta, sizeof p.ta)) &&
        ok(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB,
                                          &p.tb, sizeof p.tb)) &&
        ok(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                          &epi, sizeof epi)) &&
        (!key.bias ||
         (ok(cublasLtMatmulDescSetAttribute(
              p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias)) &&
          ok(cublasLtMatmulDescSetAttribute(p.op,
                                            CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                            &bias_type, sizeof bias_type)))) &&
        ok(cublasLtMatrixLayoutCreate(&p.a, ct, p.ta == CUBLAS_OP_N ? H : K,
                                      p.ta == CUBLAS_OP_N ? K : H, bw.ld)) &&
        ok(cublasLtMatrixLayoutCreate(&p.b, ct, p.tb == CUBLAS_OP_N ? K : M,
                                      p.tb == CUBLAS_OP_N ? M : K, bx.ld)) &&
        ok(cublasLtMatrixLayoutCreate(&p.c, dt, H, M, ldd)) &&
        ok(cublasLtMatmulPreferenceCreate(&pref)) &&
        ok(cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
            sizeof ws_bytes)) &&
        setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.align[0]) &&
        setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.align[1]) &&
        setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.align[2]) &&
        setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.align[2]) &&
        ok(cublasLtMatmulAlgoGetHeuristic(handles[dev], p.op, p.a, p.b, p.c,
                                          p.c, pref, 1, &found, &count)) &&
        count < 1)
      st = CUBLAS_STATUS_NOT_SUPPORTED;
    if (pref)
      cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS) {
      p.release();
      return st;
    }
    p.algo = found.algo;
    p.used = true;
    plan = &p;
  } else if (key.bias && !ok(cublasLtMatmulDescSetAttribute(
                             plan->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                             sizeof bias))) {
    return st;
  }
  const float alpha = 1.f, beta = 0.f;
  return cublasLtMatmul(handles[dev], plan->op, &alpha, w, plan->a, x, plan->b,
                        &beta, d, plan->c, d, plan->c, &plan->algo, ws,
                        ws_bytes, stream);
}

cudaError_t launch_epilogue(const Params &p, cudaStream_t stream) {
  const int64_t total = p.M * (p.H[0] + (p.gated_kind >= 0 ? 0 : p.H[1]));
  if (total == 0)
    return cudaSuccess;
  int64_t blocks = (total + 255) / 256;
  const int64_t cap = int64_t(cuda::device_sm_count()) * 8;
  blocks = blocks < cap ? blocks : cap;
  return launch_ex(paired_epilogue_kernel, p, dim3(unsigned(blocks)), 256, 0, stream);
}

/// The blas path. Returns UNSUPPORTED (nothing launched) when cuBLAS cannot
/// take the views.
/// This thread's cuBLAS handle on `stream`, with the runtime's workspace.
fusion_rt_status blas_on_stream(cudaStream_t stream, cublasHandle_t &h) {
  cublasStatus_t bst;
  void *blas_ws = nullptr;
  h = blas_handle(bst, blas_ws);
  if (!h)
    return fail(FUSION_RT_STATUS_BACKEND_ERROR,
                "CUDA backend: cublasCreate failed (status %d)", int(bst));
  // cublasSetStream resets the workspace to cuBLAS's own: set ours after it.
  if ((bst = cublasSetStream(h, stream)) != CUBLAS_STATUS_SUCCESS ||
      (blas_ws && (bst = cublasSetWorkspace(h, blas_ws, kBlasWorkspace)) !=
                      CUBLAS_STATUS_SUCCESS))
    return fail(FUSION_RT_STATUS_BACKEND_ERROR,
                "CUDA backend: cublasSetStream / cublasSetWorkspace failed "
                "(status %d)",
                int(bst));
  return FUSION_RT_STATUS_SUCCESS;
}

/// A weight as a cuBLAS operand (blas_operand). A row-grouped weight
/// (Mat::grp: one part of a weight whose rows interleave by head group) is
/// described by one group's rows: run_blas then reads it with one
/// strided-batched GEMM over its groups.
BlasOperand blas_weight_operand(const Mat &w) {
  if (!w.grouped())
    return blas_operand(w, true);
  const int64_t lim = int64_t(1) << 31;
  Mat inner = w;
  inner.rows = w.grp, inner.grp = 0;
  BlasOperand o = blas_operand(inner, true);
  if (w.gs >= lim || w.rows / w.grp >= lim)
    o.ok = false;
  return o;
}

fusion_rt_status run_blas(Params p, const PairedRequest &q, cudaStream_t stream) {
  const int32_t dt = q.lhs.dtype;
  const int64_t lim = int64_t(1) << 31;
  if (p.K < 1 || p.M >= lim || p.K >= lim || p.H[0] >= lim || p.H[1] >= lim)
    return FUSION_RT_STATUS_UNSUPPORTED;
  const BlasOperand bx = blas_operand(q.lhs, false);
  const BlasOperand bw0 = blas_weight_operand(q.w[0]);
  const BlasOperand bw1 = blas_weight_operand(q.w[1]);
  if (!bx.ok || !bw0.ok || !bw1.ok)
    return FUSION_RT_STATUS_UNSUPPORTED;
  const bool grouped = q.w[0].grouped() || q.w[1].grouped();
  cublasStatus_t bst;
  cublasHandle_t h = nullptr;
  if (fusion_rt_status st = blas_on_stream(stream, h))
    return st;
  const int64_t n0 = p.M * p.H[0], n1 = p.M * p.H[1];
  float *ws = nullptr;
  cudaError_t e = cudaMallocAsync(
      reinterpret_cast<void **>(&ws),
      size_t(n0 + n1 > 0 ? n0 + n1 : 1) * sizeof(float), stream);
  if (e != cudaSuccess)
    return cuda_fail(e, "cudaMallocAsync(paired projection workspace)");
  const float alpha = 1.f, beta = 0.f;
  const cudaDataType_t ct = blas_type(dt);
  const int64_t es = esize_of(dt);
  float *y[2] = {ws, ws + n0};
  p.y_ld[0] = p.H[0];
  p.y_ld[1] = p.H[1];
  const ptrdiff_t dist = (q.w[1].data - q.w[0].data) / es;
  const bool exact = (q.w[1].data - q.w[0].data) % es == 0;
  // Weight 1 directly below weight 0 in one row-major buffer ([w0; w1], as a
  // loader or the compiler may place them): one GEMM of H0 + H1 rows.
  const bool stacked = !grouped && exact && bw0.op == CUBLAS_OP_T &&
                       bw1.op == CUBLAS_OP_T && bw0.ld == bw1.ld &&
                       q.w[0].rows > 1 && dist == p.H[0] * q.w[0].rs &&
                       p.H[1] > 0;
  // Otherwise one strided-batched call when both weights have the same shape
  // and layout: batch stride = the distance between the two weight pointers.
  const bool same = !grouped && p.H[0] == p.H[1] && bw0.op == bw1.op &&
                    bw0.ld == bw1.ld && p.H[0] > 0 && p.M > 0;
  if (stacked) {
    const int64_t hh = p.H[0] + p.H[1];
    p.y[0] = ws;
    p.y[1] = ws + p.H[0];
    p.y_ld[0] = p.y_ld[1] = hh;
    bst = cublasGemmEx(h, CUBLAS_OP_T, bx.op, int(hh), int(p.M), int(p.K), &alpha,
                       q.w[0].data, ct, int(bw0.ld), q.lhs.data, ct, int(bx.ld), &beta,
                       ws, CUDA_R_32F, int(hh), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  } else if (same && exact && dist != 0) {
    const int lo = dist > 0 ? 0 : 1; // batch 0 = the lower weight pointer
    p.y[lo] = ws;
    p.y[1 - lo] = ws + n0;
    bst = cublasGemmStridedBatchedEx(
        h, bw0.op, bx.op, int(p.H[0]), int(p.M), int(p.K), &alpha, q.w[lo].data, ct,
        int(bw0.ld), (long long)(dist > 0 ? dist : -dist), q.lhs.data, ct, int(bx.ld),
        0LL, &beta, ws, CUDA_R_32F, int(p.H[0]), (long long)n0, 2,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  } else {
    // One GEMM a weight; a row-grouped one strided-batched over its G groups
    // (batch g: its grp rows into columns [g * grp, (g + 1) * grp) of y_i),
    // so every weight row is read once and y_i is the plain [M, H_i].
    bst = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < 2 && bst == CUBLAS_STATUS_SUCCESS; ++i) {
      p.y[i] = y[i];
      if (p.H[i] == 0 || p.M == 0)
        continue;
      const BlasOperand &bw = i == 0 ? bw0 : bw1;
      const Mat &w = q.w[i];
      if (w.grouped())
        bst = cublasGemmStridedBatchedEx(
            h, bw.op, bx.op, int(w.grp), int(p.M), int(p.K), &alpha, w.data, ct,
            int(bw.ld), (long long)w.gs, q.lhs.data, ct, int(bx.ld), 0LL, &beta,
            y[i], CUDA_R_32F, int(p.H[i]), (long long)w.grp,
            int(w.rows / w.grp), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      else
        bst = cublasGemmEx(h, bw.op, bx.op, int(p.H[i]), int(p.M), int(p.K),
                           &alpha, w.data, ct, int(bw.ld), q.lhs.data, ct,
                           int(bx.ld), &beta, y[i], CUDA_R_32F, int(p.H[i]),
                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
  }
  if (bst != CUBLAS_STATUS_SUCCESS) {
    cudaFreeAsync(ws, stream);
    return fail(FUSION_RT_STATUS_BACKEND_ERROR,
                "CUDA backend: cuBLAS GEMM failed (status %d)", int(bst));
  }
  e = launch_epilogue(p, stream);
  cudaFreeAsync(ws, stream);
  if (e != cudaSuccess)
    return cuda_fail(e, "the paired epilogue kernel launch");
  return FUSION_RT_STATUS_SUCCESS;
}

OutParams out_params(const PairedRequest &q, int i) {
  OutParams o;
  o.ptr = q.out[i].data;
  o.rs = q.out[i].rs;
  o.cs = q.out[i].cs;
  o.dtype = q.out[i].dtype;
  o.kind = q.epi_kind[i];
  o.round = q.round[i];
  if (q.bias[i].present()) {
    o.bias = q.bias[i].data;
    o.bias_cs = q.bias[i].cs;
    o.bias_dtype = q.bias[i].dtype;
  }
  if (q.scale[i].present()) {
    o.scale = q.scale[i].data;
    o.scale_cs = q.scale[i].cs;
    o.scale_dtype = q.scale[i].dtype;
  }
  return o;
}

} // namespace
} // namespace paired

using namespace paired;

namespace {
/// The path cuda_paired_execute starts on: the measured selector
/// (docs/paired-projections.md; runtime/common/paired_plan.h: the gemv path
/// while M <= 16 or the multiply-adds M * K * (H0 + H1) stay within 2^23
/// (2^24 for f32), then for 16-bit operands the mma path up to 3 * 2^26
/// multiply-adds, then cuBLAS), or the FUSION_RT_PAIRED_PATH override;
/// `generic` when the override forces the generic kernel.
Path start_path(const PairedRequest &q, bool &generic) {
  const int64_t es = esize_of(q.lhs.dtype), vec = 16 / es;
  const int64_t K = q.lhs.cols;
  // tuning.def's paired_path: 0 auto, 1 gemv, 2 mma, 3 blas, 4 generic.
  const int64_t path = tuning().paired_path;
  auto forced = [&](int64_t which) { return path == which; };
  generic = forced(4);
  const bool vec_ok = K > 0 && K % vec == 0 && vec_rows(q.lhs, es) &&
                      vec_rows(q.w[0], es) && vec_rows(q.w[1], es);
  Path sel = select_path(q.lhs.rows, K, q.w[0].rows, q.w[1].rows, es, vec_ok,
                         tuning().paired_gemv_max_m);
  if (forced(1) && vec_ok)
    sel = Path::Gemv;
  if (forced(2) && vec_ok && es == 2)
    sel = Path::Mma;
  if (forced(3))
    sel = Path::Blas;
  return sel;
}
} // namespace

// Declared in src/backend.h under FUSION_RT_HAVE_CUDA, which the kernels'
// object library does not define; defined in cuda_backend.cu.
bool cuda_is_device_pointer(const void *ptr);
fusion_rt_status cuda_execute(const Request &req, void *stream);

bool cuda_paired_touches_device(const PairedRequest &q) {
  const void *ptrs[] = {q.lhs.data,     q.w[0].data,     q.w[1].data,
                        q.bias[0].data, q.bias[1].data,  q.scale[0].data,
                        q.scale[1].data, q.out[0].data,  q.out[1].data};
  for (const void *ptr : ptrs)
    if (ptr && cuda_is_device_pointer(ptr))
      return true;
  return false;
}

const char *cuda_paired_error_detail() { return cuda::error_detail(); }

namespace {
/// cuda_paired_execute, or with `qe` (a quantizing epilogue, QuantEpi) the
/// gemv path with that epilogue only: `taken` says whether it ran (false:
/// the plan has no quantizing form, nothing was launched). Every pointer of
/// the call, the epilogue's outputs included, must be memory of the current
/// device (BAD_VALUE naming the first that is not).
fusion_rt_status paired_run(const PairedRequest &q, cudaStream_t stream,
                            const QuantEpi *qe, bool &taken) {
  taken = qe == nullptr;
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess)
    return cuda_fail(e, "cudaGetDevice");
  struct Named {
    const void *ptr;
    const char *name;
  } ptrs[] = {{q.lhs.data, "desc->lhs"},
              {q.w[0].data, "desc->weight0"},
              {q.w[1].data, "desc->weight1"},
              {q.bias[0].data, "desc->epilogue0.bias"},
              {q.scale[0].data, "desc->epilogue0.scale"},
              {q.bias[1].data, "desc->epilogue1.bias"},
              {q.scale[1].data, "desc->epilogue1.scale"},
              {q.out0_is_scratch ? nullptr : q.out[0].data, "desc->out0"},
              {q.out[1].data, "desc->out1"},
              {qe ? qe->rd : nullptr, "outputs->rowwise_data"},
              {qe ? qe->rsc : nullptr, "outputs->rowwise_scales"}};
  for (const Named &n : ptrs) {
    if (!n.ptr)
      continue;
    const int w = where(n.ptr, dev);
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
  if (q.lhs.rows == 0)
    return FUSION_RT_STATUS_SUCCESS;

  Params p;
  const int32_t dt = q.lhs.dtype;
  p.x = q.lhs.data;
  p.x_rs = q.lhs.rs;
  p.x_cs = q.lhs.cs;
  for (int i = 0; i < 2; ++i) {
    p.w[i] = q.w[i].data;
    p.w_rs[i] = q.w[i].rs;
    p.w_cs[i] = q.w[i].cs;
    p.w_grp[i] = q.w[i].grp;
    p.w_gs[i] = q.w[i].gs;
    p.H[i] = q.w[i].rows;
  }
  p.M = q.lhs.rows;
  p.K = q.lhs.cols;
  p.gated_kind = q.gated_kind;
  p.out[0] = out_params(q, 0);
  if (q.gated_kind >= 0) // bias of the up half rides on out[1]
    p.out[1].bias = q.bias[1].data, p.out[1].bias_cs = q.bias[1].cs,
    p.out[1].bias_dtype = q.bias[1].dtype, p.out[1].round = q.round[1];
  else
    p.out[1] = out_params(q, 1);

  // Programmatic dependent launch of the gemv, mma and epilogue kernels,
  // opt in with FUSION_RT_PAIRED_PDL=1 (docs/paired-projections.md,
  // "Overlap"): measured about 1 us faster per call when the kernel before
  // is ours (or any kernel that triggers its dependents), 0.25-0.6 us slower
  // behind one that does not, so it is off by default.
  p.pdl = tuning().paired_pdl != 0 ? 1 : 0;

  if (qe) {
    p.quant = *qe;
    e = launch_gemv(p, dt, stream);
    if (e == cudaErrorNotSupported) {
      cudaGetLastError();
      return FUSION_RT_STATUS_SUCCESS;
    }
    taken = true;
    return e == cudaSuccess ? FUSION_RT_STATUS_SUCCESS
                            : cuda_fail(e, "the paired gemv kernel launch");
  }

  bool force_generic = false;
  const Path sel = start_path(q, force_generic);

  if (!force_generic && sel == Path::Gemv) {
    e = launch_gemv(p, dt, stream);
    if (e == cudaSuccess)
      return FUSION_RT_STATUS_SUCCESS;
    if (e != cudaErrorNotSupported)
      return cuda_fail(e, "the paired gemv kernel launch");
    cudaGetLastError();
  }
  if (!force_generic && sel == Path::Mma) {
    e = launch_mma(p, dt, stream);
    if (e == cudaSuccess)
      return FUSION_RT_STATUS_SUCCESS;
    if (e != cudaErrorNotSupported)
      return cuda_fail(e, "the paired mma kernel launch");
    cudaGetLastError();
  }
  if (!force_generic) {
    const fusion_rt_status st = run_blas(p, q, stream);
    if (st != FUSION_RT_STATUS_UNSUPPORTED)
      return st;
  }
  e = launch_generic(p, dt, stream);
  if (e != cudaSuccess)
    return cuda_fail(e, "the paired generic kernel launch");
  return FUSION_RT_STATUS_SUCCESS;
}

/// The quantizing epilogue of the gemv path for `quant` (the quantizer of
/// fusion_rt_paired_projection_quantize), where it has one: MXFP8 rowwise
/// codes with compact scales, no amax, no colwise copy, the default
/// zero-scale rule. Other schemes take the two steps.
bool quant_epilogue_for(const Request &quant, int32_t inter, QuantEpi &qe) {
  const fusion_rt_quant_scheme &s = quant.scheme;
  if ((s.format != kMXFP8E4M3 && s.format != kMXFP8E5M2) || !quant.row_wise ||
      quant.col_wise || quant.swizzled || quant.amax || quant.dbias ||
      quant.scale_inv || s.zero_scale != FUSION_RT_ZERO_SCALE_EXACT ||
      !quant.row_data.present() || !quant.row_scales.present())
    return false;
  qe.cy = 1; // launch_gemv sets it from the plan
  qe.format = s.format;
  qe.rounding = s.scale_rounding;
  qe.propagate = s.nan_policy == FUSION_RT_NAN_PROPAGATE;
  qe.inter = inter;
  qe.rd = reinterpret_cast<uint8_t *>(quant.row_data.data);
  qe.rd_rs = quant.row_data.rs, qe.rd_cs = quant.row_data.cs;
  qe.rsc = reinterpret_cast<uint8_t *>(quant.row_scales.data);
  qe.rsc_rs = quant.row_scales.rs, qe.rsc_cs = quant.row_scales.cs;
  return true;
}
} // namespace

fusion_rt_status cuda_paired_execute(const PairedRequest &q, void *stream_ptr) {
  cuda::clear_error_detail();
  bool taken = true;
  return paired_run(q, static_cast<cudaStream_t>(stream_ptr), nullptr, taken);
}

fusion_rt_status cuda_paired_quantize_execute(const PairedRequest &q,
                                              const Request &quant,
                                              int32_t inter, void *stream_ptr,
                                              bool &taken) {
  taken = false;
  cuda::clear_error_detail();
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const int32_t dt = q.lhs.dtype;
  const int64_t es = esize_of(dt);
  const int64_t M = q.lhs.rows, K = q.lhs.cols, H = q.w[0].rows;
  // Decode sizes (the gemv path), FUSION_RT_PAIRED_QUANT_EPI=1: one kernel,
  // the pair with the quantizing epilogue; the gated value never leaves the
  // CTAs' shared memory. Off by default: on the H100 the clusters it needs
  // made the Llama-3-8B front at N = 1 2.7 % slower than the two kernels
  // (docs/benchmarks/paired-ffn-quant.md).
  if (tuning().paired_quant_epi != 0) {
    bool generic = false;
    QuantEpi qe;
    if (q.gated_kind >= 0 && M > 0 && H > 0 &&
        start_path(q, generic) == Path::Gemv && !generic &&
        quant_epilogue_for(quant, inter, qe)) {
      const fusion_rt_status st = paired_run(q, stream, &qe, taken);
      if (taken || st != FUSION_RT_STATUS_SUCCESS)
        return st;
    }
  }
  // The op's conditions (paired_plan.h, shared with the kernel report):
  // gated, both halves rounded to one type, each with no epilogue or a bias
  // added before the rounding (a Linear with bias=True), a biased H a
  // multiple of 8.
  paired::QuantHalf halves[2];
  for (int i = 0; i < 2; ++i)
    halves[i] = {q.epi_kind[i], q.round[i], q.bias[i].present(),
                 q.scale[i].present(), q.bias[i].dtype};
  bool biased = false;
  if (!paired::prefill_form(q.gated_kind >= 0, halves, H, biased) || M == 0 ||
      H == 0 || K == 0)
    return FUSION_RT_STATUS_SUCCESS;
  // GPT-OSS's interleaved layout: gate and up are every other row of one
  // [2H, K] weight (w1 = w0 + one row of it, both with twice its row pitch),
  // the biases every other element of one [2H] vector. One GEMM over the
  // whole weight (and bias) then writes gate and up interleaved in each row
  // of [M, 2H], which the gated MXFP8 quantizer reads as pairs (KParams::ilv;
  // the other formats keep the two steps).
  const Mat &w0 = q.w[0], &w1 = q.w[1];
  const bool mx = quant.scheme.format == FUSION_RT_FORMAT_MXFP8_E4M3 ||
                  quant.scheme.format == FUSION_RT_FORMAT_MXFP8_E5M2;
  // (Only where the interleaved rows of [M, 2H] are 16-byte multiples: the
  // quantizer's paired vector loads; elsewhere the two steps are as fast.)
  const int32_t gu_dt = paired::rounded_dtype(q.round[0]);
  const int64_t gu_row_bytes = 2 * H * (gu_dt == FUSION_RT_F32 ? 4 : 2);
  const bool interleaved =
      mx && H > 1 && K > 0 && gu_row_bytes % 16 == 0 && w0.cs == 1 &&
      w1.cs == 1 && !w0.grouped() && !w1.grouped() && w0.rs == w1.rs &&
      w0.rs % 2 == 0 && w0.rs / 2 >= K && w1.data - w0.data == (w0.rs / 2) * es;
  const bool ilvBias =
      interleaved && q.bias[0].present() && q.bias[1].present() &&
      q.bias[0].dtype == q.bias[1].dtype && q.bias[0].cs == 2 &&
      q.bias[1].cs == 2 &&
      q.bias[1].data - q.bias[0].data == esize_of(q.bias[0].dtype);
  // The layout: each bias contiguous (cuBLASLt's epilogue reads a vector),
  // or the two interleaved with interleaved weights; interleaved weights
  // with one bias, or biases laid out otherwise, take the two steps.
  for (int i = 0; i < 2; ++i)
    if (q.bias[i].present() && q.epi_kind[i] == FUSION_RT_EPILOGUE_BIAS &&
        !(q.bias[i].cs == 1 || H == 1 || ilvBias))
      return FUSION_RT_STATUS_SUCCESS;
  if (interleaved && biased && !ilvBias)
    return FUSION_RT_STATUS_SUCCESS;
  // cuBLAS's int dimensions (as run_blas): larger calls take the two steps.
  const int64_t lim = int64_t(1) << 31;
  if (M >= lim || K >= lim || 2 * H >= lim)
    return FUSION_RT_STATUS_SUCCESS;
  // Only where cuda_paired_execute would start on cuBLAS.
  bool generic = false;
  if (start_path(q, generic) != Path::Blas || generic)
    return FUSION_RT_STATUS_SUCCESS;
  const BlasOperand bx = blas_operand(q.lhs, false);
  const BlasOperand bw0 = blas_operand(q.w[0], true);
  const BlasOperand bw1 = blas_operand(q.w[1], true);
  if (!bx.ok || !bw0.ok || !bw1.ok)
    return FUSION_RT_STATUS_SUCCESS;
  taken = true;
  cublasStatus_t bst;
  cublasHandle_t h = nullptr;
  if (fusion_rt_status st = blas_on_stream(stream, h))
    return st;
  // [gate | up] as one [M, 2H] matrix of the rounding's type: cuBLAS rounds
  // its f32 accumulator once to it, which is round(bf16 / f16) of the pair.
  const cudaDataType_t gu_ct = gu_dt == FUSION_RT_BF16  ? CUDA_R_16BF
                               : gu_dt == FUSION_RT_F16 ? CUDA_R_16F
                                                        : CUDA_R_32F;
  const int64_t gu_es = gu_dt == FUSION_RT_F32 ? 4 : 2;
  char *gu = nullptr;
  cudaError_t e = cudaMallocAsync(reinterpret_cast<void **>(&gu),
                                  size_t(M * 2 * H * gu_es), stream);
  if (e != cudaSuccess)
    return cuda_fail(e, "cudaMallocAsync(gate and up values)");
  const float alpha = 1.f, beta = 0.f;
  const cudaDataType_t ct = blas_type(dt);
  const ptrdiff_t dist = (q.w[1].data - q.w[0].data) / es;
  const bool stacked = (q.w[1].data - q.w[0].data) % es == 0 &&
                       bw0.op == CUBLAS_OP_T && bw1.op == CUBLAS_OP_T &&
                       bw0.ld == bw1.ld && H > 1 && dist == H * q.w[0].rs;
  // One GEMM over both weights: stacked ([Wg; Wu]) writes [gate | up],
  // interleaved (whose views have w0's cs == 1, so op T) writes gate and up
  // in alternate columns, over the whole weight's rows (half the views'
  // pitch); it takes the biases as one [2H] vector where they are.
  const bool one = stacked || interleaved;
  BlasOperand whole = bw0;
  if (interleaved)
    whole.ld = bw0.ld / 2;
  const bool stackedBias =
      interleaved ? ilvBias
                  : biased && q.bias[0].present() && q.bias[1].present() &&
                        q.bias[0].dtype == q.bias[1].dtype &&
                        q.bias[1].data - q.bias[0].data ==
                            H * esize_of(q.bias[0].dtype);
  // The pair on cuBLASLt into [gate | up] of `gu` (row stride 2H): one
  // stacked GEMM where the weights (and the biases, if added) are stacked,
  // else one GEMM a half, the second only where the first succeeded; a half
  // without a bias runs without the epilogue.
  auto lt_halves = [&](bool withBias) {
    if (one && (!withBias || stackedBias))
      return lt_gemm(stream, whole, q.w[0].data, bx, q.lhs.data, ct, 2 * H, M,
                     K, gu, gu_ct, 2 * H, withBias ? q.bias[0].data : nullptr,
                     withBias ? blas_type(q.bias[0].dtype) : CUDA_R_32F);
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < 2 && st == CUBLAS_STATUS_SUCCESS; ++i) {
      const bool b = withBias && q.bias[i].present();
      st = lt_gemm(stream, i == 0 ? bw0 : bw1, q.w[i].data, bx, q.lhs.data, ct,
                   H, M, K, gu + i * H * gu_es, gu_ct, 2 * H,
                   b ? q.bias[i].data : nullptr,
                   b ? blas_type(q.bias[i].dtype) : CUDA_R_32F);
    }
    return st;
  };
  if (biased) {
    bst = lt_halves(true);
    if (bst == CUBLAS_STATUS_NOT_SUPPORTED || bst == CUBLAS_STATUS_INVALID_VALUE) {
      // No cuBLASLt algorithm (or configuration) for it: the caller runs the
      // pair and the quantizer (nothing but the scratch was written).
      cudaFreeAsync(gu, stream);
      taken = false;
      return FUSION_RT_STATUS_SUCCESS;
    }
  } else if (tuning().paired_lt != 0 &&
             (bst = lt_halves(false)) == CUBLAS_STATUS_SUCCESS) {
    // cuBLASLt took it (the knob's A/B); else cublasGemmEx below.
  } else if (one) {
    bst = cublasGemmEx(h, CUBLAS_OP_T, bx.op, int(2 * H), int(M), int(K),
                       &alpha, q.w[0].data, ct, int(whole.ld), q.lhs.data, ct,
                       int(bx.ld), &beta, gu, gu_ct, int(2 * H),
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  } else {
    bst = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < 2 && bst == CUBLAS_STATUS_SUCCESS; ++i) {
      const BlasOperand &bw = i == 0 ? bw0 : bw1;
      bst = cublasGemmEx(h, bw.op, bx.op, int(H), int(M), int(K), &alpha,
                         q.w[i].data, ct, int(bw.ld), q.lhs.data, ct, int(bx.ld),
                         &beta, gu + i * H * gu_es, gu_ct, int(2 * H),
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
  }
  if (bst != CUBLAS_STATUS_SUCCESS) {
    cudaFreeAsync(gu, stream);
    return fail(FUSION_RT_STATUS_BACKEND_ERROR,
                "CUDA backend: cuBLAS GEMM failed (status %d)", int(bst));
  }
  Request g = quant;
  g.op = Op::GatedActQuantize;
  g.gated = true;
  g.act_kind = q.gated_kind;
  g.backward = false;
  g.inter = inter;
  g.params = ActParams();
  // Gate and up: the halves of [gate | up], or alternate columns.
  const int64_t gu_cs = interleaved ? 2 : 1;
  g.x = Mat{gu, gu_dt, M, H, 2 * H, gu_cs};
  g.up = Mat{gu + (interleaved ? 1 : H) * gu_es, gu_dt, M, H, 2 * H, gu_cs};
  g.x_is_scratch = true;
  const fusion_rt_status st = cuda_execute(g, stream);
  cudaFreeAsync(gu, stream);
  return st;
}

} // namespace fusion_rt
