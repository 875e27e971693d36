//===- FusionRuntimeWrappers.cpp - MLIR C-interface entry points ----------===//
//
// The functions that lowered IR calls (`llvm.emit_c_interface`), one per
// fusion op: `_mlir_ciface_fusion_rt_mlir_<op>(scalar params..., table)`.
// `table` is a memref<Nx12xi64> with one row per buffer the op touches,
// operands first, then results in the dialect's order (getQuantResultKinds):
//   [aligned pointer, offset, rank, dtype, size0..3, stride0..3]
// (dtype = fusion_rt_dtype, 7 = i64; sizes/strides in elements). One table
// keeps every entry point's signature independent of element types and
// ranks. The wrappers turn rows into fusion_rt_tensor views and call the C
// ABI. They return the fusion_rt_status; the lowered IR asserts it is zero,
// and the runtime's message is printed to stderr first.
//
// FP4 (e2m1) data comes in two forms. An i8 memref with the last dimension
// halved (dtype 8) already holds two values per byte, the runtime's layout:
// the runtime writes it directly, so packed data crosses the boundary as
// is. A memref<...xf4E2M1FN> stores one element per byte (the LLVM lowering
// of i4); for it the wrapper quantizes into a packed scratch buffer and then
// widens that into the memref, one nibble per byte.
//
//===----------------------------------------------------------------------===//
#include "fusion_rt.h"
#include "fusion_rt_mlir.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

/// A 2-D strided memref descriptor as passed by the C interface.
struct Table {
  int64_t *base;
  int64_t *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
  int64_t at(int64_t r, int64_t c) const {
    return aligned[offset + r * strides[0] + c * strides[1]];
  }
};

/// One row of the table: where a buffer is and how it is laid out.
struct RankedView {
  char *aligned = nullptr;
  int64_t offset = 0;
  int64_t rank = 0;
  int64_t sizes[4] = {0, 0, 0, 0};
  int64_t strides[4] = {0, 0, 0, 0};
};

constexpr int kRowWidth = FUSION_RT_MLIR_TABLE_WIDTH;
constexpr int32_t kDtypeI64 = FUSION_RT_MLIR_DTYPE_I64;
constexpr int32_t kDtypePackedFp4 = FUSION_RT_MLIR_DTYPE_PACKED_FP4;


int64_t elementBytes(int32_t dtype) {
  switch (dtype) {
  case FUSION_RT_BF16:
  case FUSION_RT_F16:
    return 2;
  case FUSION_RT_F32:
    return 4;
  case kDtypeI64:
    return 8;
  default:
    return 1; // f8, e8m0 and (unpacked, one per byte) e2m1
  }
}

/// A memref argument turned into a runtime view, plus what is needed to
/// widen a packed FP4 result back into its memref.
struct Arg {
  fusion_rt_tensor view{};
  RankedView memref;
  std::vector<uint8_t> packed; ///< scratch for FP4 results
};

int32_t fail(const char *what) {
  std::fprintf(stderr, "fusion_rt_mlir: %s\n", what);
  return FUSION_RT_STATUS_BAD_SHAPE;
}

/// Builds the views; FP4 results get a packed contiguous scratch buffer.
int32_t makeArgs(const Table *table, std::vector<Arg> &args) {
  if (!table || table->sizes[1] != kRowWidth)
    return fail("malformed buffer table");
  int64_t n = table->sizes[0];
  args.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    Arg &a = args[static_cast<size_t>(i)];
    a.memref.aligned =
        reinterpret_cast<char *>(table->at(i, FUSION_RT_MLIR_COL_POINTER));
    a.memref.offset = table->at(i, FUSION_RT_MLIR_COL_OFFSET);
    a.memref.rank = table->at(i, FUSION_RT_MLIR_COL_RANK);
    int32_t dtype = static_cast<int32_t>(table->at(i, FUSION_RT_MLIR_COL_DTYPE));
    if (a.memref.rank < 1 || a.memref.rank > FUSION_RT_MAX_RANK)
      return fail("memref rank must be 1..4");
    for (int d = 0; d < a.memref.rank; ++d) {
      a.memref.sizes[d] = table->at(i, FUSION_RT_MLIR_COL_SIZES + d);
      a.memref.strides[d] = table->at(i, FUSION_RT_MLIR_COL_STRIDES + d);
    }
    a.view.dtype = dtype;
    a.view.rank = static_cast<int32_t>(a.memref.rank);
    for (int d = 0; d < a.view.rank; ++d) {
      a.view.sizes[d] = a.memref.sizes[d];
      a.view.strides[d] = a.memref.strides[d];
    }
    if (dtype == kDtypePackedFp4) {
      // Sizes and strides in e2m1 elements: twice the bytes.
      int r = a.view.rank;
      if (a.memref.strides[r - 1] != 1)
        return fail("packed FP4 data must be contiguous in its last "
                    "dimension");
      a.view.dtype = FUSION_RT_F4E2M1;
      a.view.sizes[r - 1] = 2 * a.memref.sizes[r - 1];
      for (int d = 0; d + 1 < r; ++d)
        a.view.strides[d] = 2 * a.memref.strides[d];
      a.view.data = a.memref.aligned + a.memref.offset;
    } else if (dtype == FUSION_RT_F4E2M1) {
      // Packed, contiguous scratch: last stride 1, other strides even.
      int64_t cols = a.view.sizes[a.view.rank - 1];
      int64_t rowStride = cols + (cols & 1);
      int64_t rows = 1;
      for (int d = 0; d + 1 < a.view.rank; ++d)
        rows *= a.view.sizes[d];
      a.packed.assign(static_cast<size_t>((rows * rowStride + 1) / 2), 0);
      a.view.data = a.packed.data();
      int64_t stride = rowStride;
      a.view.strides[a.view.rank - 1] = 1;
      for (int d = a.view.rank - 2; d >= 0; --d) {
        a.view.strides[d] = stride;
        stride *= a.view.sizes[d];
      }
    } else {
      a.view.data = a.memref.aligned + a.memref.offset * elementBytes(dtype);
    }
  }
  return FUSION_RT_STATUS_SUCCESS;
}

/// Writes packed FP4 scratch back into the one-nibble-per-byte memref.
void widenFp4(Arg &a) {
  if (a.packed.empty())
    return;
  const fusion_rt_tensor &v = a.view;
  int r = v.rank;
  int64_t cols = v.sizes[r - 1];
  int64_t rows = 1;
  for (int d = 0; d + 1 < r; ++d)
    rows *= v.sizes[d];
  for (int64_t row = 0; row < rows; ++row) {
    // Memref offset of (row, 0) from the row-major multi-index.
    int64_t rem = row, moff = a.memref.offset;
    for (int d = r - 2; d >= 0; --d) {
      moff += (rem % v.sizes[d]) * a.memref.strides[d];
      rem /= v.sizes[d];
    }
    int64_t base = row * (r >= 2 ? v.strides[r - 2] : 0);
    for (int64_t c = 0; c < cols; ++c) {
      int64_t idx = base + c;
      uint8_t byte = a.packed[static_cast<size_t>(idx / 2)];
      uint8_t nib = (idx & 1) ? (byte >> 4) : (byte & 0xF);
      a.memref.aligned[moff + c * a.memref.strides[r - 1]] =
          static_cast<char>(nib);
    }
  }
}

int32_t report(fusion_rt_status st, const char *entry) {
  if (st != FUSION_RT_STATUS_SUCCESS)
    std::fprintf(stderr, "fusion_rt_mlir: %s failed: %s: %s\n", entry,
                 fusion_rt_status_string(st), fusion_rt_last_error_message());
  return st;
}

fusion_rt_quant_scheme makeScheme(int32_t fmt, int32_t dir, int32_t rnd,
                                  int32_t nan, int32_t col, int32_t scl,
                                  int32_t blk2d, int32_t elem,
                                  int32_t scaling, int32_t zero, int32_t pow2,
                                  int32_t recipe, int32_t blkc, int32_t blkr,
                                  float eps) {
  // The lowering's order (fusion_rt_mlir.h): every scheme parameter of the
  // C interface is read by its position there.
  const int32_t v[] = {fmt,  dir,     rnd,  nan,  col,    scl, blk2d,
                       elem, scaling, zero, pow2, recipe, blkc, blkr};
  static_assert(sizeof v / sizeof v[0] == FUSION_RT_MLIR_SCHEME_I32_PARAMS,
                "FRT_SCHEME_PARAMS and fusion_rt_mlir_scheme_param differ");
  fusion_rt_quant_scheme s;
  fusion_rt_quant_scheme_init(&s);
  s.format = v[FUSION_RT_MLIR_SCHEME_FORMAT];
  s.direction = v[FUSION_RT_MLIR_SCHEME_DIRECTION];
  s.scale_rounding = v[FUSION_RT_MLIR_SCHEME_SCALE_ROUNDING];
  s.nan_policy = v[FUSION_RT_MLIR_SCHEME_NAN_POLICY];
  s.colwise_layout = v[FUSION_RT_MLIR_SCHEME_COLWISE_LAYOUT];
  s.scale_layout = v[FUSION_RT_MLIR_SCHEME_SCALE_LAYOUT];
  s.nvfp4_block = v[FUSION_RT_MLIR_SCHEME_NVFP4_2D];
  s.elem_rounding = v[FUSION_RT_MLIR_SCHEME_ELEM_ROUNDING];
  s.tensor_scaling = v[FUSION_RT_MLIR_SCHEME_TENSOR_SCALING];
  s.zero_scale = v[FUSION_RT_MLIR_SCHEME_ZERO_SCALE];
  s.force_pow2_scale = v[FUSION_RT_MLIR_SCHEME_POW2_SCALE];
  s.nvfp4_recipe = v[FUSION_RT_MLIR_SCHEME_NVFP4_RECIPE];
  if (v[FUSION_RT_MLIR_SCHEME_BLOCK_COLS] > 0) // FP8 block formats only
    s.block_cols = v[FUSION_RT_MLIR_SCHEME_BLOCK_COLS];
  if (v[FUSION_RT_MLIR_SCHEME_BLOCK_ROWS] > 0)
    s.block_rows = v[FUSION_RT_MLIR_SCHEME_BLOCK_ROWS];
  s.amax_epsilon = eps;
  return s;
}

/// Consumes the optional scale / rng operands and the results of a
/// quantizer, in the dialect's order, from `args[next...]`.
int32_t bindQuantOutputs(fusion_rt_quant_scheme &s, std::vector<Arg> &args,
                         size_t next, bool dbias, fusion_rt_quant_outputs &o) {
  fusion_rt_quant_outputs_init(&o);
  bool perTensor = s.format == FUSION_RT_FORMAT_FP8_E4M3 ||
                   s.format == FUSION_RT_FORMAT_FP8_E5M2;
  auto take = [&](fusion_rt_tensor &slot) {
    if (next >= args.size())
      return false;
    slot = args[next++].view;
    return true;
  };
  bool ok = true;
  if (s.tensor_scaling == FUSION_RT_TENSOR_SCALING_DELAYED)
    ok &= take(o.scale);
  if (s.elem_rounding == FUSION_RT_ROUND_STOCHASTIC) {
    fusion_rt_tensor rng{};
    ok &= take(rng);
    if (ok) {
      const auto *seed = static_cast<const uint64_t *>(rng.data);
      s.seed = seed[0];
      s.offset = seed[rng.strides[0]];
    }
  }
  if (s.direction != FUSION_RT_COLWISE) {
    ok &= take(o.rowwise_data);
    if (!perTensor)
      ok &= take(o.rowwise_scales);
  }
  if (s.direction != FUSION_RT_ROWWISE) {
    ok &= take(o.colwise_data);
    if (!perTensor)
      ok &= take(o.colwise_scales);
  }
  if (perTensor)
    ok &= take(o.scale_inv);
  if (perTensor || s.format == FUSION_RT_FORMAT_NVFP4)
    ok &= take(o.amax);
  // NVFP4's decode scale follows from its amax: the dialect does not keep
  // it, and the runtime writes it only where asked (a host scalar here
  // would be rejected beside device buffers).
  if (dbias)
    ok &= take(o.dbias);
  if (!ok || next != args.size())
    return fail("memref count does not match the quantization scheme");
  return FUSION_RT_STATUS_SUCCESS;
}

int32_t finish(fusion_rt_status st, std::vector<Arg> &args,
               const char *entry) {
  // The lowered program has no streams: the op is done when the call
  // returns, and its next op may read the results on the host.
  if (st == FUSION_RT_STATUS_SUCCESS)
    st = fusion_rt_synchronize(nullptr);
  if (st == FUSION_RT_STATUS_SUCCESS)
    for (Arg &a : args)
      widenFp4(a);
  return report(st, entry);
}

int32_t quantizeImpl(const fusion_rt_quant_scheme &scheme, const Table *table) {
  std::vector<Arg> args;
  if (int32_t st = makeArgs(table, args))
    return st;
  fusion_rt_quant_scheme s = scheme;
  fusion_rt_quant_outputs o;
  if (int32_t st = bindQuantOutputs(s, args, 1, false, o))
    return st;
  return finish(fusion_rt_quantize(&args[0].view, &s, &o, nullptr, nullptr),
                args, "fusion_rt_quantize");
}

fusion_rt_activation makeActivation(int32_t kind, int32_t backward,
                                    int32_t inter, float limit, float offset,
                                    float alpha) {
  fusion_rt_activation a;
  fusion_rt_activation_init(&a);
  a.kind = kind;
  a.backward = backward;
  a.intermediate_dtype = inter;
  a.limit = limit;
  a.offset = offset;
  a.alpha = alpha;
  return a;
}

int32_t actQuantizeImpl(int32_t kind, int32_t backward, int32_t inter,
                        float limit, float offset, float alpha, int32_t dbias,
                        const fusion_rt_quant_scheme &scheme, const Table *table) {
  std::vector<Arg> args;
  if (int32_t st = makeArgs(table, args))
    return st;
  fusion_rt_activation act =
      makeActivation(kind, backward, inter, limit, offset, alpha);
  fusion_rt_quant_scheme s = scheme;
  size_t next = 1;
  const fusion_rt_tensor *grad = nullptr;
  if (backward) {
    if (args.size() < 2)
      return fail("backward activation without a grad memref");
    grad = &args[next++].view;
  }
  fusion_rt_quant_outputs o;
  if (int32_t st = bindQuantOutputs(s, args, next, dbias != 0, o))
    return st;
  return finish(fusion_rt_act_quantize(&args[0].view, grad, &act, &s, &o,
                                       nullptr, nullptr),
                args, "fusion_rt_act_quantize");
}

int32_t gatedActQuantizeImpl(int32_t kind, int32_t backward, int32_t inter,
                             float limit, float offset, float alpha,
                             int32_t numInputs, const fusion_rt_quant_scheme &scheme, const Table *table) {
  std::vector<Arg> args;
  if (int32_t st = makeArgs(table, args))
    return st;
  if (numInputs < 1 || numInputs > 2 ||
      args.size() < static_cast<size_t>(numInputs + (backward ? 1 : 0)))
    return fail("bad gated input count");
  fusion_rt_activation act =
      makeActivation(kind, backward, inter, limit, offset, alpha);
  fusion_rt_quant_scheme s = scheme;
  size_t next = static_cast<size_t>(numInputs);
  const fusion_rt_tensor *up = numInputs == 2 ? &args[1].view : nullptr;
  const fusion_rt_tensor *grad = backward ? &args[next++].view : nullptr;
  fusion_rt_quant_outputs o;
  if (int32_t st = bindQuantOutputs(s, args, next, false, o))
    return st;
  return finish(fusion_rt_gated_act_quantize(&args[0].view, up, grad, &act,
                                             &s, &o, nullptr, nullptr),
                args, "fusion_rt_gated_act_quantize");
}

/// Builds the views of `table` and fills `p` from the operand rows of a
/// paired projection (lhs, weights, biases and scales given); `next` is then
/// the first destination row.
int32_t bindPairedOperands(const Table *table, std::vector<Arg> &args,
                           int32_t epi0, int32_t epi1, int32_t gatedKind,
                           int32_t kn, int32_t round0, int32_t round1,
                           int32_t hasBias0, int32_t hasScale0,
                           int32_t hasBias1, int32_t hasScale1,
                           fusion_rt_paired_projection &p, size_t &next) {
  if (int32_t st = makeArgs(table, args))
    return st;
  if (args.size() <
      static_cast<size_t>(3 + hasBias0 + hasScale0 + hasBias1 + hasScale1))
    return fail("memref count does not match the paired projection");
  std::memset(&p, 0, sizeof(p));
  next = 0;
  p.lhs = args[next++].view;
  p.weight0 = args[next++].view;
  p.weight1 = args[next++].view;
  // [K, H] weights ("kn") are passed as transposed [H, K] views, [K, G, w]
  // head groups as [G, w, K].
  if (kn)
    for (fusion_rt_tensor *w : {&p.weight0, &p.weight1})
      for (int d = 0; d + 1 < w->rank; ++d) {
        std::swap(w->sizes[d], w->sizes[d + 1]);
        std::swap(w->strides[d], w->strides[d + 1]);
      }
  p.epilogue0.kind = epi0;
  p.epilogue1.kind = epi1;
  p.epilogue0.accumulator_round = round0;
  p.epilogue1.accumulator_round = round1;
  if (hasBias0)
    p.epilogue0.bias = args[next++].view;
  if (hasScale0)
    p.epilogue0.scale = args[next++].view;
  if (hasBias1)
    p.epilogue1.bias = args[next++].view;
  if (hasScale1)
    p.epilogue1.scale = args[next++].view;
  p.gated_kind = gatedKind;
  p.accumulate_dtype = FUSION_RT_F32;
  return FUSION_RT_STATUS_SUCCESS;
}

int32_t pairedProjectionImpl(int32_t epi0, int32_t epi1, int32_t gatedKind,
                             int32_t kn, int32_t round0, int32_t round1,
                             int32_t hasBias0, int32_t hasScale0,
                             int32_t hasBias1, int32_t hasScale1,
                             const Table *table) {
  std::vector<Arg> args;
  fusion_rt_paired_projection p;
  size_t next = 0;
  if (int32_t st = bindPairedOperands(table, args, epi0, epi1, gatedKind, kn,
                                      round0, round1, hasBias0, hasScale0,
                                      hasBias1, hasScale1, p, next))
    return st;
  if (args.size() != next + (gatedKind >= 0 ? 1 : 2))
    return fail("memref count does not match the paired projection");
  p.out0 = args[next++].view;
  if (gatedKind < 0)
    p.out1 = args[next++].view;
  return finish(fusion_rt_paired_projection_run(&p, nullptr, nullptr), args,
                "fusion_rt_paired_projection_run");
}

int32_t pairedProjectionQuantizeImpl(
    int32_t epi0, int32_t epi1, int32_t gatedKind, int32_t kn, int32_t round0,
    int32_t round1, int32_t hasBias0, int32_t hasScale0, int32_t hasBias1,
    int32_t hasScale1, int32_t inter, const fusion_rt_quant_scheme &scheme, const Table *table) {
  std::vector<Arg> args;
  fusion_rt_paired_projection p;
  size_t next = 0;
  if (int32_t st = bindPairedOperands(table, args, epi0, epi1, gatedKind, kn,
                                      round0, round1, hasBias0, hasScale0,
                                      hasBias1, hasScale1, p, next))
    return st;
  fusion_rt_quant_scheme s = scheme;
  fusion_rt_quant_outputs o;
  if (int32_t st = bindQuantOutputs(s, args, next, false, o))
    return st;
  return finish(fusion_rt_paired_projection_quantize(&p, inter, &s, &o,
                                                     nullptr, nullptr),
                args, "fusion_rt_paired_projection_quantize");
}

} // namespace

#define FRT_SCHEME_PARAMS                                                      \
  int32_t fmt, int32_t dir, int32_t rnd, int32_t nan, int32_t col,             \
      int32_t scl, int32_t blk2d, int32_t elem, int32_t scaling, int32_t zero, \
      int32_t pow2, int32_t recipe, int32_t blkc, int32_t blkr, float eps
#define FRT_SCHEME_NAMES                                                       \
  makeScheme(fmt, dir, rnd, nan, col, scl, blk2d, elem, scaling, zero, pow2,   \
             recipe, blkc, blkr, eps)
#define FRT_ACT_PARAMS                                                         \
  int32_t kind, int32_t backward, int32_t inter, float limit, float offset,    \
      float alpha
#define FRT_ACT_NAMES kind, backward, inter, limit, offset, alpha

extern "C" FUSION_RT_API int32_t
_mlir_ciface_fusion_rt_mlir_quantize(FRT_SCHEME_PARAMS, const Table *table) {
  return quantizeImpl(FRT_SCHEME_NAMES, table);
}

extern "C" FUSION_RT_API int32_t _mlir_ciface_fusion_rt_mlir_act_quantize(
    FRT_ACT_PARAMS, int32_t dbias, FRT_SCHEME_PARAMS, const Table *table) {
  return actQuantizeImpl(FRT_ACT_NAMES, dbias, FRT_SCHEME_NAMES, table);
}

extern "C" FUSION_RT_API int32_t
_mlir_ciface_fusion_rt_mlir_gated_act_quantize(FRT_ACT_PARAMS,
                                               int32_t numInputs,
                                               FRT_SCHEME_PARAMS,
                                               const Table *table) {
  return gatedActQuantizeImpl(FRT_ACT_NAMES, numInputs, FRT_SCHEME_NAMES,
                              table);
}

extern "C" FUSION_RT_API int32_t
_mlir_ciface_fusion_rt_mlir_paired_projection(
    int32_t epi0, int32_t epi1, int32_t gatedKind, int32_t kn, int32_t round0,
    int32_t round1, int32_t hasBias0, int32_t hasScale0, int32_t hasBias1,
    int32_t hasScale1, const Table *table) {
  return pairedProjectionImpl(epi0, epi1, gatedKind, kn, round0, round1,
                              hasBias0, hasScale0,
                              hasBias1, hasScale1, table);
}

extern "C" FUSION_RT_API int32_t
_mlir_ciface_fusion_rt_mlir_paired_projection_quantize(
    int32_t epi0, int32_t epi1, int32_t gatedKind, int32_t kn, int32_t round0,
    int32_t round1, int32_t hasBias0, int32_t hasScale0, int32_t hasBias1,
    int32_t hasScale1, int32_t inter, FRT_SCHEME_PARAMS, const Table *table) {
  return pairedProjectionQuantizeImpl(epi0, epi1, gatedKind, kn, round0, round1,
                                      hasBias0, hasScale0, hasBias1, hasScale1,
                                      inter, FRT_SCHEME_NAMES, table);
}

extern "C" FUSION_RT_API int32_t fusion_rt_mlir_abi_version(void) {
  return FUSION_RT_MLIR_ABI_VERSION;
}
