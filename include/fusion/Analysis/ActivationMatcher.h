//===- ActivationMatcher.h - activations in linalg bodies ---*- C++ -*-===//
//
// Recognises the activation (forward, backward, gated) that an elementwise
// `linalg.generic` computes, whatever way the frontend spelled it, and the
// column-sum reduction that forms a bias gradient (dbias).
//
// The body is not matched as an op chain. It is expanded into a canonical
// polynomial over "atoms" (tensor leaves and exp / erf / sigmoid / step
// functions of canonical polynomials), which makes the comparison
// insensitive to operand order, associativity, distributivity, splat vs
// scalar constants, constants computed in IR (sqrt(2)), extf/truncf around
// the arithmetic and the way a negation or a division is written. The result
// is compared with the reference forms of runtime/common/activation.h, with
// constants compared to a relative tolerance (so torch-mlir's tanh-GELU
// constant 0.7977240352174656 is accepted for sqrt(2/pi)).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_ANALYSIS_ACTIVATIONMATCHER_H
#define FUSION_ANALYSIS_ACTIVATIONMATCHER_H

#include "fusion/Dialect/Fusion/IR/FusionAttrs.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace mlir::fusion {

/// An activation recognised in the body of an elementwise `linalg.generic`.
struct ActivationMatch {
  /// The op that computes the activation and which of its results it is.
  linalg::GenericOp generic;
  unsigned resultIndex = 0;

  ActivationKind kind = ActivationKind::identity;
  bool backward = false;
  /// Sigmoid slope of qgelu / qgeglu / clamped_swiglu when it is not the
  /// default 1.702.
  std::optional<double> alpha;
  /// clamped_swiglu: the clamp limit and the offset added to the up half.
  std::optional<double> limit, offset;
  /// Backward kinds with a mask (relu family, clamped_swiglu): the body
  /// gives +0 where the derivative is masked (a select, as autograd's
  /// threshold_backward), not grad * 0 (`#fusion.act<..., mask = select>`).
  bool maskSelect = false;

  /// The activation input x (non-gated) or the gate (gated) as a tensor of
  /// the iteration space. Null when x is computed inside `generic` itself
  /// (for instance a bias add that elementwise fusion merged into the
  /// activation); `inputScalar` is then the value to materialise.
  Value input;
  Value inputScalar;
  /// Gated kinds: the `up` tensor (multiplies the activated gate).
  Value up;
  /// Backward kinds: the incoming gradient tensor.
  Value grad;
  /// The element type the graph rounds the activation result to before the
  /// quantizer (the narrowest type on the cast chain to the yield).
  Type intermediate;
  /// Gated backward: the ops that assemble the quantized [dgate | dup]
  /// (a tensor.concat, or two tensor.insert_slice, the outer one first),
  /// and the two halves.
  SmallVector<Operation *, 2> packOps;
  SmallVector<Value, 2> halves;
};

/// Outcome of `matchActivation`: a match, or the reason there is none.
struct ActivationMatchResult {
  std::optional<ActivationMatch> match;
  /// Admission-rule name when `match` is empty: "unsupported activation".
  std::string reason;
  /// Detail for the remark (which op or form was not understood).
  std::string detail;
};

/// Recognises the activation that computes `value`, which must be a result
/// of an elementwise (all-parallel, identity output map) `linalg.generic`.
ActivationMatchResult matchActivation(Value value);

/// Recognises a gated backward activation: `value` is [dgate | dup] along
/// the last dimension, dgate = act'(gate) * grad * up and dup = act(gate) *
/// grad, each computed by an elementwise generic. The halves are joined by a
/// tensor.concat or written by two tensor.insert_slice into one [.., 2K]
/// tensor (columns 0 and K, either order).
ActivationMatchResult matchGatedBackward(Value value);

/// True if `value` is assembled from two halves along its last dimension as
/// `matchGatedBackward` accepts (structure only).
bool isHalvesPacking(Value value);

/// If `gate` and `up` are the two halves [.., 0:K] and [.., K:2K] of one
/// tensor of last dimension 2K (`tensor.extract_slice` with unit strides),
/// returns that packed [gate | up] tensor; otherwise null.
Value matchPackedGateUp(Value gate, Value up);

/// True if `op` sums `value` ([.., N], rank >= 2) over every dimension but
/// the last into an f32 [N] tensor starting from zero: a `linalg.reduce` or
/// a `linalg.generic` with one parallel loop whose body adds (after an
/// optional extf) into the accumulator. Sets `reason` when it is a
/// reduction of `value` that does not qualify.
bool isDbiasReduction(Operation *op, Value value, std::string &reason);

/// The name of an activation as written in `#fusion.act<...>` (`dgelu`).
std::string activationName(ActivationKind kind, bool backward);

} // namespace mlir::fusion

#endif // FUSION_ANALYSIS_ACTIVATIONMATCHER_H
