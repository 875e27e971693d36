/*===- fusion_rt.h - fusion-opt runtime C ABI ---------------------*- C -*-===*
 *
 * The one header of the fusion-opt runtime: the C ABI that the lowering
 * (`fusion-lower-to-runtime`), the tests, the benchmarks and outside users
 * call. Plain C99, usable from C and C++, no MLIR dependency.
 *
 * Conventions
 *  - Every entry point returns a fusion_rt_status. On any error nothing is
 *    written to any output, and fusion_rt_last_error_message() (thread-local)
 *    names the offending argument in one sentence.
 *  - Every entry point takes `void* stream`: a cudaStream_t for device
 *    pointers, ignored by the CPU backend.
 *  - Tensor views carry sizes and strides in ELEMENTS (never bytes). For
 *    FUSION_RT_F4E2M1 two elements share a byte (even element in the low
 *    nibble), packing runs along the last dimension, the last stride must be
 *    1 and every other stride must be even. A packed view owns whole bytes:
 *    a row of N elements owns bytes [0, ceil(N/2)) from its start, so an
 *    odd-length row's last byte holds a pad nibble (the high one), which
 *    belongs to the view; outputs write it as zero (the bytes of a packed
 *    output are then fully defined), and nothing past those bytes is
 *    written. A view with a zero-sized dimension holds no element: its
 *    strides are not checked and nothing of it is read or written.
 *  - Quantizers see a rank-2 matrix [M, N] = rows x cols. A rank-1 view is
 *    [1, N]; rank 3 and 4 views are collapsed onto [prod(leading), N] and
 *    must therefore have collapsible leading strides.
 *
 * Numerics: docs/numerics.md (the contract), ../shared/research/kernels.md.
 *===----------------------------------------------------------------------===*/
#ifndef FUSION_RT_H
#define FUSION_RT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ABI version: bumped on any incompatible change of a struct or signature. */
/* 2: fusion_rt_quant_scheme.nvfp4_recipe.
 * 3: the FP8 block formats and fusion_rt_quant_scheme.block_rows/_cols. */
#define FUSION_RT_ABI_VERSION 3

#if defined(_WIN32)
#define FUSION_RT_API __declspec(dllexport)
#else
#define FUSION_RT_API __attribute__((visibility("default")))
#endif

/** Maximum rank of a tensor view. */
#define FUSION_RT_MAX_RANK 4

/*===--------------------------- status codes ----------------------------===*/

typedef enum fusion_rt_status {
  FUSION_RT_STATUS_SUCCESS = 0,
  /** A required pointer argument (descriptor, view or data) is NULL. */
  FUSION_RT_STATUS_NULL_POINTER = 1,
  /** A data pointer is not aligned to its element size (or a packed e2m1
   *  view violates the even-stride rule). */
  FUSION_RT_STATUS_MISALIGNED = 2,
  /** A rank, size or stride is negative, overflows, or disagrees with the
   *  shape the operation requires (including outputs too small). */
  FUSION_RT_STATUS_BAD_SHAPE = 3,
  /** An element type is not the one the operation requires. */
  FUSION_RT_STATUS_BAD_DTYPE = 4,
  /** An enum field of a descriptor is out of range. */
  FUSION_RT_STATUS_BAD_VALUE = 5,
  /** A valid combination that this build or backend does not implement. */
  FUSION_RT_STATUS_UNSUPPORTED = 6,
  /** The device backend failed (CUDA error); the message has details. */
  FUSION_RT_STATUS_BACKEND_ERROR = 7,
  /** Host memory allocation failed. */
  FUSION_RT_STATUS_OUT_OF_MEMORY = 8
} fusion_rt_status;

/*===--------------------------- element types ---------------------------===*/

typedef enum fusion_rt_dtype {
  FUSION_RT_BF16 = 0,
  FUSION_RT_F16 = 1,
  FUSION_RT_F32 = 2,
  FUSION_RT_F8E4M3 = 3, /**< OCP e4m3fn: max 448, NaN 0x7F/0xFF, no Inf */
  FUSION_RT_F8E5M2 = 4, /**< OCP e5m2: max 57344 */
  FUSION_RT_F4E2M1 = 5, /**< two per byte, even element in the low nibble */
  FUSION_RT_E8M0 = 6    /**< unsigned exponent 2^(b-127), 255 = NaN */
} fusion_rt_dtype;

/** A strided view of a tensor. Sizes and strides count elements. */
typedef struct fusion_rt_tensor {
  void *data;
  int32_t dtype; /**< fusion_rt_dtype */
  int32_t rank;  /**< 1..4 */
  int64_t sizes[FUSION_RT_MAX_RANK];
  int64_t strides[FUSION_RT_MAX_RANK]; /**< in elements */
} fusion_rt_tensor;

/*===------------------------ quantization scheme ------------------------===*/

typedef enum fusion_rt_format {
  FUSION_RT_FORMAT_MXFP8_E4M3 = 0, /**< 32-blocks, e8m0 scales */
  FUSION_RT_FORMAT_MXFP8_E5M2 = 1,
  FUSION_RT_FORMAT_MXFP4 = 2, /**< e2m1 data, 32-blocks, e8m0 scales */
  FUSION_RT_FORMAT_NVFP4 = 3, /**< e2m1 data, 16-blocks, e4m3 scales, global scale */
  FUSION_RT_FORMAT_FP8_E4M3 = 4, /**< per-tensor f32 scale */
  FUSION_RT_FORMAT_FP8_E5M2 = 5,
  /** One f32 scale per block of block_rows x block_cols elements (1x128:
   *  DeepSeek-V3 / vLLM per-token-group activations; block_cols = N: one
   *  scale per row). Decode scale s = max(amax, amax_epsilon) / max_elem
   *  (f32 division; force_pow2_scale: s rounded up to a power of two, UE8M0
   *  as vLLM's scale_ue8m0), codes q = cvt_rn_satfinite(x / s) (f32
   *  division), the scale buffer holds s (x = q * s). A NaN in a block makes
   *  its amax NaN under PROPAGATE (torch's amax; then s and every code are
   *  NaN) and is dropped under IGNORE; an Inf amax gives s = Inf. */
  FUSION_RT_FORMAT_FP8_BLOCK_E4M3 = 6,
  FUSION_RT_FORMAT_FP8_BLOCK_E5M2 = 7
} fusion_rt_format;

typedef enum fusion_rt_scale_rounding {
  /** byte = roundup_e8m0(fp32(amax * fp32(1/max_elem))) (NVIDIA, TE, torchao RCEIL). */
  FUSION_RT_SCALE_RCEIL = 0,
  /** byte = max(E(amax) - P, 0), P = 8 / 15 / 2 (OCP, torchao FLOOR). */
  FUSION_RT_SCALE_FLOOR = 1,
  /** byte = max(E(amax) + (mantissa(amax) != 0) - P, 0): amax rounded up to
   *  a power of two before the OCP rule (torchao CEIL). */
  FUSION_RT_SCALE_CEIL = 2,
  /** byte = max(E(amax') - P, 0), amax' = amax with its mantissa rounded
   *  half up to the element type's mantissa width m (3 / 2 / 1), i.e.
   *  bits(amax') = (bits(amax) + 2^(22-m)) & 0xff800000 (torchao EVEN; an
   *  amax' that rounds to Inf gives 255 - P). */
  FUSION_RT_SCALE_EVEN = 3
} fusion_rt_scale_rounding;

typedef enum fusion_rt_nan_policy {
  /** NaN or Inf in a block -> scale byte 255 and a NaN block (torchao). */
  FUSION_RT_NAN_PROPAGATE = 0,
  /** NaN dropped from amax; Inf amax saturates to byte 254 (TransformerEngine). */
  FUSION_RT_NAN_IGNORE = 1
} fusion_rt_nan_policy;

typedef enum fusion_rt_direction {
  FUSION_RT_ROWWISE = 0, /**< 1xB blocks along rows */
  FUSION_RT_COLWISE = 1, /**< Bx1 blocks down columns */
  FUSION_RT_BOTH = 2
} fusion_rt_direction;

typedef enum fusion_rt_colwise_layout {
  FUSION_RT_COLWISE_SAME = 0,      /**< colwise data [M, N] (TE MXFP8) */
  FUSION_RT_COLWISE_TRANSPOSED = 1 /**< colwise data [N, M] (TE NVFP4, FP8 per tensor) */
} fusion_rt_colwise_layout;

typedef enum fusion_rt_scale_layout {
  FUSION_RT_SCALES_COMPACT = 0,
  /** Zero-padded 128x4 tiles of 512 bytes, the layout block-scaled GEMMs read. */
  FUSION_RT_SCALES_SWIZZLED = 1
} fusion_rt_scale_layout;

typedef enum fusion_rt_nvfp4_block {
  FUSION_RT_NVFP4_1D = 0, /**< 1x16 blocks along the quantized dimension */
  FUSION_RT_NVFP4_2D = 1  /**< 16x16 blocks, one scale shared by both copies */
} fusion_rt_nvfp4_block;

typedef enum fusion_rt_elem_rounding {
  FUSION_RT_ROUND_RNE = 0,
  /** Stochastic rounding keyed by (seed, offset); FP4 formats only. */
  FUSION_RT_ROUND_STOCHASTIC = 1
} fusion_rt_elem_rounding;

typedef enum fusion_rt_tensor_scaling {
  /** amax pass then scale = max/amax with TE's edge rules. */
  FUSION_RT_TENSOR_SCALING_CURRENT = 0,
  /** scale given as an input (f32 [1]). */
  FUSION_RT_TENSOR_SCALING_DELAYED = 1
} fusion_rt_tensor_scaling;

typedef enum fusion_rt_zero_scale {
  /** An MX block with scale byte 0 (2^-127) multiplies its elements by 2^127
   *  (the exact reciprocal; TransformerEngine since PR#2647). */
  FUSION_RT_ZERO_SCALE_EXACT = 0,
  /** ... by 1.0 (torchao 0.18's RCEIL fallback; TE before PR#2647). */
  FUSION_RT_ZERO_SCALE_ONE = 1,
  /** ... by 2^126 (torchao's FLOOR: scale clamped to the smallest normal f32). */
  FUSION_RT_ZERO_SCALE_MIN_NORMAL = 2
} fusion_rt_zero_scale;

/** How NVFP4's scales are computed (docs/numerics.md, "NVFP4 recipes"),
 *  and (MULTIPLY) those of the FP8 block formats. */
typedef enum fusion_rt_nvfp4_recipe {
  /** TransformerEngine: S_enc = 2688/amax, scale = e4m3(block_amax * S_enc/6),
   *  codes of x * 1/(scale * S_dec). */
  FUSION_RT_NVFP4_RECIPE_TE = 0,
  /** torchao 0.18 nvfp4_quantize with per_tensor_scale = amax/2688:
   *  scale = e4m3(clamp(block_amax/6 / pts, 2^-6, 448)), codes of
   *  clamp(x * ((1/pts) / scale), -6, 6); 1x16 blocks, RNE. */
  FUSION_RT_NVFP4_RECIPE_TORCHAO = 1,
  /** torchao 0.18 nvfp4_quantize without a per-tensor scale:
   *  scale = e4m3(clamp(block_amax/6, 2^-6, 448)), codes of x * (1/scale);
   *  1x16 blocks, RNE. */
  FUSION_RT_NVFP4_RECIPE_TORCHAO_BLOCK = 2,
  /** FP8 block formats only: scale = max / max(amax, eps) as
   *  TransformerEngine's compute_scale_from_amax (amax Inf or 0 -> 1, an
   *  Inf scale -> FLT_MAX, power-of-two truncation with force_pow2_scale;
   *  a NaN amax under PROPAGATE gives a NaN scale), codes of x * scale, the
   *  scale written 1 / scale: TE's Float8BlockScaling and torchao's
   *  blockwise FP8 training quantizers. The default (TE = 0) for FP8 blocks
   *  is DeepSeek-V3's s = max(amax, eps) / max, codes of x / s. */
  FUSION_RT_NVFP4_RECIPE_MULTIPLY = 3,
  /** FP8 block formats only: as MULTIPLY (codes of x * scale, scale = max /
   *  max(amax, eps) with the same edge rules), but the scale written is the
   *  multiplier itself, not 1 / scale: torchao.float8's rowwise (axiswise)
   *  scaling, whose Float8Tensor holds max / amax. fusion_rt_dequantize
   *  then decodes x = code / scale (correctly rounded). */
  FUSION_RT_NVFP4_RECIPE_MULTIPLIER = 4,
  /** FP8 per tensor with current scaling only: scale = (1 / max(amax, eps))
   *  * max, each step rounded to f32, as torch computes `max / amax` on an
   *  f32 tensor (Tensor.__rtruediv__ is reciprocal() * max): one ulp off the
   *  quotient for about a quarter of all amaxes. TE's edge rules otherwise
   *  (amax 0, Inf or NaN -> 1, an Inf scale -> FLT_MAX, power-of-two
   *  truncation with force_pow2_scale). */
  FUSION_RT_NVFP4_RECIPE_RECIPROCAL = 5
} fusion_rt_nvfp4_recipe;

/** How to quantize. Initialise with fusion_rt_quant_scheme_init(). */
typedef struct fusion_rt_quant_scheme {
  int32_t format;         /**< fusion_rt_format */
  int32_t scale_rounding; /**< fusion_rt_scale_rounding (MX formats) */
  int32_t nan_policy;     /**< fusion_rt_nan_policy */
  int32_t direction;      /**< fusion_rt_direction */
  int32_t colwise_layout; /**< fusion_rt_colwise_layout */
  int32_t scale_layout;   /**< fusion_rt_scale_layout (MX and NVFP4) */
  int32_t nvfp4_block;    /**< fusion_rt_nvfp4_block */
  int32_t elem_rounding;  /**< fusion_rt_elem_rounding */
  int32_t tensor_scaling; /**< fusion_rt_tensor_scaling (FP8 per tensor) */
  /** FP8 current scaling: amax below this is raised to it (TE amax_epsilon). */
  float amax_epsilon;
  /** FP8 current scaling: nonzero rounds the scale down to a power of two. */
  int32_t force_pow2_scale;
  /** fusion_rt_zero_scale (MX formats). Both backends implement every
   *  value (CUDA: MXFP8). */
  int32_t zero_scale;
  int32_t nvfp4_recipe; /**< fusion_rt_nvfp4_recipe (NVFP4; FP8 block: MULTIPLY, MULTIPLIER) */
  /** FP8 block formats only: rows of a scale block (>= 1; default 1).
   *  block_rows > 1 gives 2D blocks, 128x128 for DeepSeek-V3 weights: the
   *  rowwise scales are [ceil(M / block_rows), ceil(N / block_cols)], each
   *  block's amax taken over all its rows. 2D blocks are for
   *  fusion_rt_quantize and fusion_rt_dequantize (the activation entry
   *  points return UNSUPPORTED; no dbias). */
  int32_t block_rows;
  /** FP8 block formats only: elements per scale along a row (>= 1; default
   *  128). Blocks never straddle the [dact | dgate] boundary of a gated
   *  backward output. */
  int32_t block_cols;
  uint64_t seed;   /**< stochastic rounding key */
  uint64_t offset; /**< stochastic rounding counter offset */
} fusion_rt_quant_scheme;

/*===----------------------------- activations ---------------------------===*/

typedef enum fusion_rt_act_kind {
  FUSION_RT_ACT_IDENTITY = 0,
  FUSION_RT_ACT_RELU = 1,
  FUSION_RT_ACT_GELU = 2,      /**< exact erf: x*0.5*(1+erf(x/sqrt2)) */
  FUSION_RT_ACT_GELU_TANH = 3, /**< TE's tanh approximation */
  FUSION_RT_ACT_SILU = 4,
  FUSION_RT_ACT_QGELU = 5, /**< x*sigmoid(alpha*x) */
  FUSION_RT_ACT_SRELU = 6, /**< squared relu */
  /* gated: input [gate | up]; out = act(gate) * up */
  FUSION_RT_ACT_SWIGLU = 7,
  FUSION_RT_ACT_GEGLU = 8, /**< gelu_tanh gate, as TE */
  FUSION_RT_ACT_REGLU = 9,
  FUSION_RT_ACT_QGEGLU = 10,
  FUSION_RT_ACT_SREGLU = 11,
  /** GPT-OSS: min(a,limit)*sigmoid(alpha*min(a,limit)) * (clamp(g,-limit,limit)+offset) */
  FUSION_RT_ACT_CLAMPED_SWIGLU = 12,
  /** exact (erf) GELU gate: torch's F.gelu(gate) * up (diffusers' GEGLU) */
  FUSION_RT_ACT_GEGLU_ERF = 13
} fusion_rt_act_kind;

/** The largest fusion_rt_act_kind. */
#define FUSION_RT_ACT_LAST FUSION_RT_ACT_GEGLU_ERF

/** fusion_rt_activation.backward. */
typedef enum fusion_rt_backward_mode {
  FUSION_RT_FORWARD = 0,
  /** grad * act'(x) (gated: [dact | dgate]) as TransformerEngine computes
   *  it: where a derivative is zero by a mask, grad * 0 (-0 for a negative
   *  grad, NaN for an infinite one). */
  FUSION_RT_BACKWARD = 1,
  /** As FUSION_RT_BACKWARD, except where a derivative is zero by a mask
   *  (relu, srelu, reglu, sreglu: x <= 0; clamped_swiglu: the gate above
   *  limit or NaN): +0 there, as PyTorch autograd's threshold_backward and
   *  clamp backward select it; a NaN relu-family input is not masked
   *  (relu(NaN) is NaN: relu gives grad, srelu NaN). Other kinds compute
   *  the same as FUSION_RT_BACKWARD. */
  FUSION_RT_BACKWARD_MASK_SELECT = 2
} fusion_rt_backward_mode;

/** Activation descriptor. Initialise with fusion_rt_activation_init(). */
typedef struct fusion_rt_activation {
  int32_t kind;     /**< fusion_rt_act_kind */
  int32_t backward; /**< fusion_rt_backward_mode: 0 forward, 1 or 2 backward */
  /** Element type the activation result is rounded to before amax and
   *  quantization (BF16, F16 or F32), as the unfused graph stores it. */
  int32_t intermediate_dtype;
  float limit;  /**< clamped swiglu limit, default 7.0 */
  float offset; /**< clamped swiglu linear offset on the up half, default 1.0 */
  float alpha;  /**< qgelu / clamped swiglu sigmoid slope, default 1.702 */
} fusion_rt_activation;

/*===------------------------------ outputs ------------------------------===*/

/** Output (and the delayed-scaling input) buffers of a quantizer. Views not
 *  needed by the scheme must have data == NULL. Required shapes, with
 *  B = 32 (MX) or 16 (NVFP4), nb(x) = ceil(x/B), rup(x,k) = round x up to k:
 *
 *  rowwise_data    [M, N] of the data type (e4m3 / e5m2 / e2m1)
 *  rowwise_scales  compact [M, nb(N)] (FP8 block formats: B = block_cols,
 *                  F32, any strides, e.g. column-major [1, M] as DeepGEMM
 *                  reads them; rowwise and compact only); swizzled [rup(M,128), rup(nb(N),4)],
 *                  contiguous, byte (r,c) of the logical scale matrix at
 *                  ((r/128)*(Cp/4) + c/4)*512 + (r%32)*16 + ((r%128)/32)*4 + c%4
 *                  with Cp = rup(nb(N),4); padding is written as zero.
 *  colwise_data    SAME [M, N] or TRANSPOSED [N, M] (NVFP4: TRANSPOSED only)
 *  colwise_scales  compact SAME [nb(M), N], TRANSPOSED [N, nb(M)];
 *                  swizzled [rup(N,128), rup(nb(M),4)] with r = data column,
 *                  c = row block (same formula).
 *  Scales are E8M0 (MX), F8E4M3 (NVFP4) or F32 (FP8 block). FP8 per tensor has no block
 *  scales: scale_inv (f32 [1], required) = 1/scale, amax (f32 [1], optional).
 *  NVFP4 also writes amax (f32 [1], tensor amax; required) and scale_inv
 *  (f32 [1], optional: the global decode scale S_dec = 1/S_enc, S_enc =
 *  min(2688/amax, FLT_MAX); torchao recipes: amax/2688, or 1 for
 *  TORCHAO_BLOCK; it follows from amax). MX formats may request amax (f32 [1]) optionally. Every
 *  amax is the NaN-ignoring tensor amax of the quantized values.
 *  Every view must have exactly its shape (strides are free, except that
 *  swizzled scales are contiguous); fusion_rt_quant_shapes_for() gives them.
 *  dbias           optional f32 [N]: column sums in f32 of the fp32 values
 *                  (a NaN sum is written as 0x7FC00000 on every backend)
 *                  before rounding to the intermediate type, summed in row
 *                  order within 32-row bands, then band by band.
 *  scale           input, FP8 delayed scaling only: f32 [1].
 *
 *  Gated forward quantizes [M, K]. Gated backward quantizes [M, 2K] =
 *  [dact | dgate]: rowwise blocks never straddle column K, rowwise scales are
 *  [M, 2*nb(K)] (dgate scales from column nb(K)); colwise as for [M, 2K].
 */
typedef struct fusion_rt_quant_outputs {
  fusion_rt_tensor rowwise_data;
  fusion_rt_tensor rowwise_scales;
  fusion_rt_tensor colwise_data;
  fusion_rt_tensor colwise_scales;
  fusion_rt_tensor amax;
  fusion_rt_tensor scale_inv;
  fusion_rt_tensor dbias;
  fusion_rt_tensor scale; /**< input (FP8 delayed scaling) */
} fusion_rt_quant_outputs;

/*===------------------------------ options ------------------------------===*/

typedef enum fusion_rt_backend {
  FUSION_RT_BACKEND_AUTO = 0, /**< device pointers -> CUDA, host -> CPU */
  FUSION_RT_BACKEND_CPU = 1,
  FUSION_RT_BACKEND_CUDA = 2 /**< UNSUPPORTED in a build without CUDA */
} fusion_rt_backend;

/** Options common to every entry point; NULL means all defaults. */
typedef struct fusion_rt_options {
  int32_t backend; /**< fusion_rt_backend */
  /** CPU backend worker threads; 0 = one per hardware thread. */
  int32_t num_threads;
} fusion_rt_options;

/*===------------------------- paired projections ------------------------===*/

typedef enum fusion_rt_epilogue_kind {
  FUSION_RT_EPILOGUE_NONE = 0,
  FUSION_RT_EPILOGUE_BIAS = 1,    /**< y + bias[n] */
  /** sigmoid(y) (+bias first when given; * scale[n] when a scale is given,
   *  as FLA's GatedDeltaNet writes beta = sigmoid(b) * 2) */
  FUSION_RT_EPILOGUE_SIGMOID = 2,
  FUSION_RT_EPILOGUE_SILU = 3, /**< silu(y), bias and scale as SIGMOID */
  /** GDN alpha gate: softplus(y + bias[n]) * scale[n]; softplus is linear
   *  above 20 (torch threshold 20, beta 1), log1pf(expf(t)) up to it. */
  FUSION_RT_EPILOGUE_SOFTPLUS_BIAS_SCALE = 4,
  /** The same with logf(1 + expf(t)) up to 20, as vLLM's torch reference of
   *  fused_gdn_gating writes softplus (it differs from log1p by the
   *  rounding of 1 + exp(t)). */
  FUSION_RT_EPILOGUE_SOFTPLUS_LOG_BIAS_SCALE = 5,
  /** The overflow-safe softplus, no threshold: m + log1pf(expf(-|t|)) with
   *  m = (t > 0 ? t : 0), and m itself where |m| is Inf; as
   *  torch.logaddexp(t, 0) and JAX's softplus (logaddexp(t, 0)) write it. */
  FUSION_RT_EPILOGUE_SOFTPLUS_STABLE_BIAS_SCALE = 6
} fusion_rt_epilogue_kind;

/** Rounding of a paired projection's f32 accumulator before its epilogue:
 *  what a bf16 / f16 `torch.nn.Linear` does (its output is rounded to the
 *  input dtype, then the epilogue reads it). The epilogue itself stays f32.
 *  BF16 / F16 round y and then add the epilogue's bias (a Linear without
 *  bias, then `+ dt_bias` in f32); the _AFTER_BIAS modes round y + bias
 *  once (a Linear with bias=True: its output is the rounded sum), and the
 *  epilogue then adds no bias. Without a bias they equal BF16 / F16. */
typedef enum fusion_rt_accumulator_round {
  FUSION_RT_ROUND_NONE = 0, /**< the epilogue reads the f32 accumulator */
  FUSION_RT_ROUND_BF16 = 1, /**< y rounded to bf16 (nearest even), then + bias */
  FUSION_RT_ROUND_F16 = 2,  /**< y rounded to f16 (nearest even), then + bias */
  FUSION_RT_ROUND_BF16_AFTER_BIAS = 3, /**< y + bias rounded to bf16 */
  FUSION_RT_ROUND_F16_AFTER_BIAS = 4   /**< y + bias rounded to f16 */
} fusion_rt_accumulator_round;

typedef struct fusion_rt_epilogue {
  int32_t kind;       /**< fusion_rt_epilogue_kind */
  /** fusion_rt_accumulator_round: y rounded before the epilogue (and, in a
   *  gated pair, before the gated activation). Zero (NONE) keeps the
   *  behaviour of callers that left this field zero. */
  int32_t accumulator_round;
  fusion_rt_tensor bias;  /**< [N] or data == NULL */
  fusion_rt_tensor scale; /**< [N] or data == NULL */
} fusion_rt_epilogue;

/** Two projections of one LHS: out_i = epilogue_i(lhs[M,K] x weight_i^T),
 *  weight_i [N_i, K] (any strides, so [K, N_i] is a transposed view), or
 *  [G, w, K] head groups of rows, N_i = G * w, row g * w + r of weight_i at
 *  g * strides[0] + r * strides[1] (any strides[0]: one part of a weight
 *  whose rows interleave by group, as Qwen3-Next's in_proj_ba, read in
 *  place).
 *  With gated_kind set (a gated fusion_rt_act_kind), the pair is an FFN
 *  gate/up pair and out0 = act(lhs x w0^T) * (lhs x w1^T), out1 unused. */
typedef struct fusion_rt_paired_projection {
  fusion_rt_tensor lhs;
  fusion_rt_tensor weight0;
  fusion_rt_tensor weight1;
  fusion_rt_epilogue epilogue0;
  fusion_rt_epilogue epilogue1;
  int32_t gated_kind; /**< -1 for two separate results */
  int32_t accumulate_dtype; /**< FUSION_RT_F32 */
  fusion_rt_tensor out0;
  fusion_rt_tensor out1;
} fusion_rt_paired_projection;

/*===---------------------------- entry points ---------------------------===*/

/** Returns FUSION_RT_ABI_VERSION of the library actually loaded. */
FUSION_RT_API int32_t fusion_rt_abi_version(void);

/** Static name of a status, e.g. "FUSION_RT_STATUS_BAD_SHAPE". */
FUSION_RT_API const char *fusion_rt_status_string(fusion_rt_status status);

/** Message of the last failing call on this thread ("" after success). */
FUSION_RT_API const char *fusion_rt_last_error_message(void);

/** Waits until the work that this thread's calls queued on `stream` (a
 *  cudaStream_t; NULL: the default stream) has finished, and returns its
 *  status (BACKEND_ERROR with a message if the device reports an error).
 *  Returns SUCCESS at once, making no CUDA call, when none of this thread's
 *  calls since the last synchronize ran on the CUDA backend. For callers
 *  without streams: the MLIR entry points (libfusion_rt_mlir) call it after
 *  every call, because the lowered program may read the results on the host
 *  next (managed memory). */
FUSION_RT_API fusion_rt_status fusion_rt_synchronize(void *stream);

/** Nonzero when the library was built with the CUDA backend. */
FUSION_RT_API int32_t fusion_rt_has_cuda(void);

/** Tuning knobs (runtime/common/tuning.def; docs/kernels.md, "Tuning
 *  knobs"): which kernel variant runs and its launch shape, for benchmarks
 *  and tests. Every value gives the same results. `name` is the knob's
 *  environment variable (e.g. "FUSION_RT_CUDA_COL_T") or field name;
 *  `value` one of its values ("0", "sph", "gemv", a decimal for integer
 *  knobs), or NULL, "" or "default" for the default. The environment sets
 *  the knobs once, at the library's first call that reads them; this
 *  changes one for the later calls of the whole process. BAD_VALUE (with
 *  a message naming the knob's values) for an unknown name or value. */
FUSION_RT_API fusion_rt_status fusion_rt_set_tuning(const char *name,
                                                    const char *value);

/** The current value of a tuning knob: the position of its value in the
 *  knob's list ("0|1": 0 or 1), or the integer. BAD_VALUE for an unknown
 *  name, NULL_POINTER for a NULL `value`. */
FUSION_RT_API fusion_rt_status fusion_rt_get_tuning(const char *name,
                                                    int64_t *value);

/** Defaults: MXFP8_E4M3, RCEIL, PROPAGATE, ROWWISE, SAME, COMPACT, 1D, RNE,
 *  CURRENT, epsilon 0, no pow2, blocks 1 x 128, seed 0, offset 0. */
FUSION_RT_API void fusion_rt_quant_scheme_init(fusion_rt_quant_scheme *scheme);

/** Defaults: IDENTITY forward, intermediate F32, limit 7, offset 1, alpha 1.702. */
FUSION_RT_API void fusion_rt_activation_init(fusion_rt_activation *act);

/** Zeroes every view of `outputs` (all data NULL). */
FUSION_RT_API void fusion_rt_quant_outputs_init(fusion_rt_quant_outputs *outputs);

/** Shapes a quantizer needs for a [rows, cols] matrix (cols = K for gated
 *  forward, 2K for gated backward with `gated_backward` nonzero). Each shape
 *  is {dim0, dim1}; {0, 0} when the scheme does not produce that buffer. */
typedef struct fusion_rt_quant_shapes {
  int64_t rowwise_data[2];
  int64_t rowwise_scales[2];
  int64_t colwise_data[2];
  int64_t colwise_scales[2];
} fusion_rt_quant_shapes;
FUSION_RT_API fusion_rt_status
fusion_rt_quant_shapes_for(const fusion_rt_quant_scheme *scheme, int64_t rows,
                           int64_t cols, int32_t gated_backward,
                           fusion_rt_quant_shapes *shapes);

/** Quantize `input` (BF16/F16/F32 [M, N]). */
FUSION_RT_API fusion_rt_status
fusion_rt_quantize(const fusion_rt_tensor *input,
                   const fusion_rt_quant_scheme *scheme,
                   const fusion_rt_quant_outputs *outputs,
                   const fusion_rt_options *options, void *stream);

/** Fused activation + quantize (non-gated kinds). Forward quantizes
 *  round_to_intermediate(act(x)); backward (act->backward) quantizes
 *  round_to_intermediate(grad * act'(x)), `grad` [M, N] of the input type.
 *  outputs->dbias optional. */
FUSION_RT_API fusion_rt_status
fusion_rt_act_quantize(const fusion_rt_tensor *input,
                       const fusion_rt_tensor *grad,
                       const fusion_rt_activation *act,
                       const fusion_rt_quant_scheme *scheme,
                       const fusion_rt_quant_outputs *outputs,
                       const fusion_rt_options *options, void *stream);

/** Fused gated activation + quantize (gated kinds). Input either one packed
 *  view [M, 2K] = [gate | up] (`up` NULL) or two views gate=`input` [M, K]
 *  and `up` [M, K]. Forward output [M, K]; backward (`grad` [M, K]) output
 *  [M, 2K] = [dact | dgate] with separate scales. dbias not supported. */
FUSION_RT_API fusion_rt_status
fusion_rt_gated_act_quantize(const fusion_rt_tensor *input,
                             const fusion_rt_tensor *up,
                             const fusion_rt_tensor *grad,
                             const fusion_rt_activation *act,
                             const fusion_rt_quant_scheme *scheme,
                             const fusion_rt_quant_outputs *outputs,
                             const fusion_rt_options *options, void *stream);

/** Unfused activation (the graph the fused ops replace): writes the
 *  activation, rounded to output->dtype (BF16/F16/F32, which must equal
 *  act->intermediate_dtype). Gated kinds take `up` as in
 *  fusion_rt_gated_act_quantize; output [M, N], [M, K] or [M, 2K].
 *  `dbias` optional f32 [cols] (NULL or data NULL to skip), non-gated only. */
FUSION_RT_API fusion_rt_status
fusion_rt_activation_apply(const fusion_rt_tensor *input,
                           const fusion_rt_tensor *up,
                           const fusion_rt_tensor *grad,
                           const fusion_rt_activation *act,
                           const fusion_rt_tensor *output,
                           const fusion_rt_tensor *dbias,
                           const fusion_rt_options *options, void *stream);

/** Dequantize one copy (FUSION_RT_ROWWISE or FUSION_RT_COLWISE, never BOTH)
 *  of a quantized tensor described by `scheme` and `quantized` into `output`
 *  (F32/BF16/F16) of the logical [M, N] shape (colwise TRANSPOSED copies are
 *  dequantized as [N, M]). Reads that copy's data and scales; FP8 per tensor
 *  and NVFP4 also read scale_inv (NVFP4 also requires amax to be given).
 *  MX: x = q * 2^(s-127); NVFP4: x = q * e4m3(s) * S_dec; FP8: x = q *
 *  scale_inv. A NaN result is the quiet NaN 0x7FC00000 on every backend
 *  before the conversion to the output type (bf16 / f16: 0x7FFF). Gated-backward outputs (split
 *  scales) are not handled. Both backends implement every format. */
FUSION_RT_API fusion_rt_status
fusion_rt_dequantize(const fusion_rt_quant_scheme *scheme,
                     const fusion_rt_quant_outputs *quantized,
                     int32_t direction, const fusion_rt_tensor *output,
                     const fusion_rt_options *options, void *stream);

/** Paired projections: both results of `desc` from one read of the LHS
 *  (CPU reference in runtime/cpu/paired_projection.cpp; epilogue math in
 *  runtime/common/epilogue.h). */
FUSION_RT_API fusion_rt_status
fusion_rt_paired_projection_run(const fusion_rt_paired_projection *desc,
                                const fusion_rt_options *options,
                                void *stream);

/** The FFN front in one call: a gated pair (desc->gated_kind set; out0 and
 *  out1 absent) whose value act(lhs x w0^T) * (lhs x w1^T), rounded to
 *  `intermediate_dtype` (BF16/F16/F32: the type the unfused program stores
 *  it in), is quantized with `scheme` into `outputs` as fusion_rt_quantize
 *  of that [M, H] value would (outputs->dbias must be absent). Equals fusion_rt_paired_projection_run into
 *  an [M, H] tensor of intermediate_dtype followed by fusion_rt_quantize of
 *  it, on the same backend, byte for byte; the gated value is not returned.
 *  Both backends keep it in a scratch buffer between the projection and the
 *  quantizer (on the GPU: stream-ordered, in L2 at decode sizes). */
FUSION_RT_API fusion_rt_status fusion_rt_paired_projection_quantize(
    const fusion_rt_paired_projection *desc, int32_t intermediate_dtype,
    const fusion_rt_quant_scheme *scheme,
    const fusion_rt_quant_outputs *outputs, const fusion_rt_options *options,
    void *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FUSION_RT_H */
