//===- te_shim.cpp - TransformerEngine's FP8 kernels behind a C ABI -------===//
//
// A peer for the FP8 benchmarks (bench/formats/te_peer.py): calls
// TransformerEngine 2.20's C API (libtransformer_engine.so of the
// transformer-engine-cu13 wheel) the way its PyTorch quantizers do, on
// device pointers given by the caller, on the caller's stream. Built by
// bench/formats/build_te_shim.sh; never part of the runtime or of CI.
//
// Every entry returns 0 on success, else 1 with the exception's text in
// te_last_error() (TE reports unsupported configurations by throwing).
//
//===----------------------------------------------------------------------===//
#include <transformer_engine/activation.h>
#include <transformer_engine/cast.h>
#include <transformer_engine/recipe.h>
#include <transformer_engine/transformer_engine.h>

#include <cuda_runtime_api.h>

#include <exception>
#include <string>
#include <vector>

using transformer_engine::DType;
using transformer_engine::QuantizationConfigWrapper;
using transformer_engine::TensorWrapper;

namespace {

thread_local std::string last_error;

template <typename F> int guarded(F &&f) {
  try {
    f();
    return 0;
  } catch (const std::exception &e) {
    last_error = e.what();
  } catch (...) {
    last_error = "unknown exception";
  }
  return 1;
}

using Shape = std::vector<size_t>;

TensorWrapper input(const void *x, size_t m, size_t n) {
  return TensorWrapper(const_cast<void *>(x), Shape{m, n}, DType::kBFloat16);
}

QuantizationConfigWrapper config(int pow2, float eps) {
  QuantizationConfigWrapper c;
  c.set_force_pow_2_scales(pow2 != 0);
  c.set_amax_epsilon(eps);
  return c;
}

/// A per-tensor FP8 e4m3 output [m, n]: rowwise codes `row` and / or the
/// transposed copy `col_t` [n, m], one scale / amax / scale_inv each.
TensorWrapper tensor_output(size_t m, size_t n, void *row, void *col_t, float *scale,
                            float *amax, float *scale_inv) {
  TensorWrapper out(NVTE_DELAYED_TENSOR_SCALING);
  if (row)
    out.set_rowwise_data(row, DType::kFloat8E4M3, Shape{m, n});
  if (col_t)
    out.set_columnwise_data(col_t, DType::kFloat8E4M3, Shape{n, m});
  out.set_scale(scale, DType::kFloat32, Shape{1});
  out.set_amax(amax, DType::kFloat32, Shape{1});
  if (row)
    out.set_rowwise_scale_inv(scale_inv, DType::kFloat32, Shape{1});
  if (col_t)
    out.set_columnwise_scale_inv(scale_inv, DType::kFloat32, Shape{1});
  return out;
}

/// A block-scaled FP8 e4m3 output [m, n] (rowwise): `dim` 1 (1x128) or 2
/// (128x128), scale_inv of shape [s0, s1] as TE's GEMM-ready layout wants.
TensorWrapper block_output(size_t m, size_t n, int dim, void *row, float *scale_inv,
                           size_t s0, size_t s1) {
  TensorWrapper out(dim == 2 ? NVTE_BLOCK_SCALING_2D : NVTE_BLOCK_SCALING_1D);
  out.set_rowwise_data(row, DType::kFloat8E4M3, Shape{m, n});
  out.set_rowwise_scale_inv(scale_inv, DType::kFloat32, Shape{s0, s1});
  return out;
}

} // namespace

extern "C" {

const char *te_last_error() { return last_error.c_str(); }

/// FP8 per tensor of bf16 x [m, n]. current != 0: TE's current scaling
/// (nvte_compute_amax, nvte_compute_scale_from_amax, nvte_quantize_v2:
/// Float8CurrentScalingQuantizer's three calls); else delayed scaling with
/// the given *scale (nvte_quantize, which also produces amax).
int te_fp8_tensor(const void *x, size_t m, size_t n, void *row, void *col_t, float *scale,
                  float *amax, float *scale_inv, int current, int pow2, float eps,
                  cudaStream_t s) {
  return guarded([&] {
    TensorWrapper in = input(x, m, n);
    TensorWrapper out = tensor_output(m, n, row, col_t, scale, amax, scale_inv);
    if (current) {
      QuantizationConfigWrapper c = config(pow2, eps);
      nvte_compute_amax(in.data(), out.data(), s);
      nvte_compute_scale_from_amax(out.data(), c, s);
      nvte_quantize_v2(in.data(), out.data(), c, s);
    } else {
      nvte_quantize(in.data(), out.data(), s);
    }
  });
}

/// FP8 block scaling of bf16 x [m, n] (TE's Float8BlockScaling).
int te_fp8_block(const void *x, size_t m, size_t n, int dim, void *row, float *scale_inv,
                 size_t s0, size_t s1, int pow2, float eps, cudaStream_t s) {
  return guarded([&] {
    TensorWrapper in = input(x, m, n);
    TensorWrapper out = block_output(m, n, dim, row, scale_inv, s0, s1);
    QuantizationConfigWrapper c = config(pow2, eps);
    nvte_quantize_v2(in.data(), out.data(), c, s);
  });
}

/// SwiGLU of bf16 x [m, 2k] (gate | up) into 1x128 block-scaled FP8
/// [m, k]. tmp == nullptr: nvte_swiglu straight into the block-scaled
/// output (TE's fused form, where it has one); else SwiGLU into the bf16
/// tmp [m, k], then nvte_quantize_v2 (what TE's PyTorch layer does for a
/// recipe without a fused kernel).
int te_swiglu_fp8_block(const void *x, size_t m, size_t k, void *tmp, void *row,
                        float *scale_inv, size_t s0, size_t s1, int pow2, float eps,
                        cudaStream_t s) {
  return guarded([&] {
    TensorWrapper in(const_cast<void *>(x), Shape{m, 2 * k}, DType::kBFloat16);
    TensorWrapper out = block_output(m, k, 1, row, scale_inv, s0, s1);
    if (!tmp) {
      nvte_swiglu(in.data(), out.data(), s);
      return;
    }
    TensorWrapper h(tmp, Shape{m, k}, DType::kBFloat16);
    nvte_swiglu(in.data(), h.data(), s);
    QuantizationConfigWrapper c = config(pow2, eps);
    nvte_quantize_v2(h.data(), out.data(), c, s);
  });
}

/// SwiGLU of bf16 x [m, 2k] into per-tensor FP8 [m, k] with the given
/// *scale (delayed scaling: TE's fused activation-cast kernel).
int te_swiglu_fp8_tensor(const void *x, size_t m, size_t k, void *row, float *scale,
                         float *amax, float *scale_inv, cudaStream_t s) {
  return guarded([&] {
    TensorWrapper in(const_cast<void *>(x), Shape{m, 2 * k}, DType::kBFloat16);
    TensorWrapper out = tensor_output(m, k, row, nullptr, scale, amax, scale_inv);
    nvte_swiglu(in.data(), out.data(), s);
  });
}

/// TE 2.20.2's library references one cuBLASLt entry point newer than the
/// CUDA 13.0 cuBLASLt of the device machine (grouped GEMM layouts), so it
/// does not load there. This definition, exported under cuBLASLt's symbol
/// version by te_shim.map, satisfies the reference; the FP8 casts never
/// call it (it reports CUBLAS_STATUS_NOT_SUPPORTED if anything does).
int cublasLtGroupedMatrixLayoutInit_internal() { return 15; }

} // extern "C"
