//===- ProjectionPairing.h - projections and their epilogues ----*- C++ -*-===//
//
// Recognises the pieces `fusion-fuse-paired-projections` puts together: a
// contraction seen as a projection `y = x · Wᵀ` of an activation `x` (any
// linalg op that satisfies the contraction interface: linalg.matmul with or
// without transposed-weight indexing maps, linalg.matvec / vecmat,
// contraction linalg.generics, linalg.batch_matmul against one weight matrix
// broadcast across the batch), and the elementwise epilogue that consumes
// its result (none, + bias, sigmoid(y [+ bias]), silu(y [+ bias]),
// softplus(y + bias) * scale) or the gated activation that consumes two of them
// (SwiGLU, GeGLU, ...).
//
// Gated activations and silu are recognised by the ActivationMatcher
// (ActivationMatcher.h); gated products with biases added inside the body,
// which it does not take, by the probe comparison below. The GDN gates
// (sigmoid, softplus(y + bias) * scale) are not activations of the act-quantize
// runtime, so they are recognised here: the epilogue body is split structurally
// into sign * (factors that do not depend on y) * F(y), and F is compared
// numerically with the reference (runtime/common/epilogue.h) on a grid of probe
// points. That accepts every spelling of sigmoid and finds softplus (with or
// without torch's threshold-20 select, written either way round); a second
// probe, evaluated as f32 arithmetic, then tells which of the kernels' three
// f32 formulas the IR computes bit for bit: log1p(exp(t)) (softplus_bias_scale,
// torch's F.softplus), log(1 + exp(t)) (softplus_log_bias_scale, as vLLM's
// reference writes it) or max(t, 0) + log1p(exp(-|t|))
// (softplus_stable_bias_scale, torch.logaddexp(t, 0)); any other is declined.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_ANALYSIS_PROJECTIONPAIRING_H
#define FUSION_ANALYSIS_PROJECTIONPAIRING_H

#include "fusion/Transforms/Declines.h"
#include "fusion/Dialect/Fusion/IR/FusionAttrs.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace mlir::fusion {

/// A contraction seen as a projection of an activation `lhs` by a weight.
struct Projection {
  linalg::LinalgOp op;
  /// The activation: the input indexed by the result's token dimension N (or
  /// the vector of a matrix-vector product), and the weight (the matrix
  /// before a 2-D transpose or a broadcast across the batch, if any).
  Value lhs, weight;
  /// Dimension of `lhs` that is contracted (K).
  int64_t lhsKDim = 0;
  /// The weight is [K, H] rather than [H, K].
  bool kn = false;
  /// Number of leading token dimensions of `lhs` and of the result: 0 for a
  /// matrix-vector product, 1 for [N, K], more for [B, T, K] (collapsed onto
  /// N by the rewrite).
  int64_t tokenRank = 1;
  /// Element type of the accumulator (the contraction's output).
  Type accType;
  /// The [H] bias the accumulator starts from (a linalg.broadcast over the
  /// token dimensions, as torch-mlir writes addmm), or null for zero.
  Value initBias;
  /// Set when the contraction is a projection of `lhs` but not one the
  /// paired op can express: the admission rule and a detail.
  DeclineRule unsupportedRule = DeclineRule::None;
  std::string unsupportedDetail;

  Value result() const { return op->getResult(0); }
  Type lhsElementType() const;
  Type weightElementType() const;
  /// K as a static size, or ShapedType::kDynamic.
  int64_t k() const;
};

/// Recognises `op` as a projection. Returns nullopt when it is not a
/// two-input contraction whose roles (activation, weight) can be told apart;
/// a projection that the paired op cannot express comes back with
/// `unsupportedRule` set.
std::optional<Projection> matchProjection(linalg::LinalgOp op);

/// A per-column ([H]) operand of the fused op, as the epilogue computes it:
/// `sign * constant * prod(factors)`, each factor a value of the epilogue
/// body that does not depend on the projection; or an existing tensor.
struct ColumnParam {
  /// An existing [H] tensor to pass as is (no computation needed).
  Value tensor;
  SmallVector<Value, 2> factors;
  double constant = 1.0;
  bool negate = false;
};

/// The epilogue of one projection.
struct EpilogueMatch {
  EpilogueKind kind = EpilogueKind::none;
  /// The elementwise generic computing the epilogue (null for `none`
  /// without a rounding generic).
  linalg::GenericOp generic;
  /// The value the fused op's result replaces.
  Value result;
  std::optional<ColumnParam> bias, scale;
  /// The type (bf16 / f16) the epilogue rounds the f32 accumulator to before
  /// reading it (a bf16 Linear's output), or null.
  Type round;
  /// The bias is added before that rounding (`round(y + b)`: a Linear with
  /// bias=True), not after it.
  bool roundWithBias = false;
  /// bf16 / f16 when the epilogue computes its activation in that type and
  /// its generic then widens the result to f32 (`b.sigmoid().float()` of a
  /// bf16 Linear): the fused op's result has this element type (computed in
  /// f32, rounded once, as torch rounds the activation) and a widening
  /// generic after it gives the f32 value; null otherwise.
  Type widenFrom;
};

/// The gated activation consuming two projections.
struct GatedMatch {
  linalg::GenericOp generic;
  ActivationKind kind = ActivationKind::swiglu;
  /// Which of the two projections is the gate (0 or 1).
  unsigned gateIndex = 0;
  /// Biases added to the gate and to the up projection inside the body.
  std::optional<ColumnParam> gateBias, upBias;
  /// Roundings of the gate and up accumulators before the activation (see
  /// EpilogueMatch::round), or null.
  Type gateRound, upRound;
  /// The gate's / up's bias is added before its rounding (see
  /// EpilogueMatch::roundWithBias).
  bool gateRoundWithBias = false, upRoundWithBias = false;
};

/// Outcome of a match: the admission rule and a detail when it failed.
struct MatchFailure {
  DeclineRule rule = DeclineRule::None;
  std::string detail;
};

/// Recognises the epilogue that consumes `projection` (a projection's
/// result). Fails with "extra consumer of a projection result" or
/// "unsupported epilogue".
FailureOr<EpilogueMatch> matchEpilogue(Value projection, MatchFailure &why);

/// If `a` and `b` (two projections' results) are consumed by one gated
/// activation, the generic computing it; null otherwise.
linalg::GenericOp getGatedConsumer(Value a, Value b);

/// Recognises the gated activation that consumes the results `a` and `b`.
FailureOr<GatedMatch> matchGated(Value a, Value b, MatchFailure &why);

/// Builds `param` as an f32 tensor [H] (H given by `h`) at `b`'s insertion
/// point: the existing tensor, a splat constant, or a one-loop generic that
/// clones from `epilogue`'s body the ops computing the factors.
Value materializeColumnParam(OpBuilder &b, Location loc,
                             linalg::GenericOp epilogue,
                             const ColumnParam &param, OpFoldResult h);

/// The values `materializeColumnParam` reads, which must dominate the point
/// where it is called.
SmallVector<Value> columnParamSources(linalg::GenericOp epilogue,
                                      const ColumnParam &param);

} // namespace mlir::fusion

#endif // FUSION_ANALYSIS_PROJECTIONPAIRING_H
