//===- Transforms.h - the fusions as plan-then-rewrite ---------*- C++ -*-===//
//
// The two fusions of fusion-opt for compilers that drive them from their own
// code rather than through the passes, in the shape of upstream's
// `areElementwiseOpsFusable` / `fuseElementwiseOps(RewriterBase &, ...)`:
//
//   - plan...: every admission rule of the pass for one candidate, with
//     no IR built or erased. It returns the plan, or failure with the
//     declined rule (`MatchFailure`: a `DeclineRule`, whose stable tag
//     `declineTag(rule)` is the Reason of the pass's missed remark and a row
//     of the rule tables in docs/passes.md, and a detail).
//   - rewrite...: builds the fused op a plan describes, through the caller's
//     `RewriterBase` (every created, replaced and erased op goes through it,
//     so that a listener or a greedy driver's worklist hears of it).
//
// The passes (fusion-fuse-act-quantize, fusion-fuse-paired-projections) are
// these two functions plus their candidate search, normalisations and
// remarks; what they fuse, these fuse. A plan is valid for the IR it was
// made on: rewriting anything it names in between invalidates it (plan
// again).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_TRANSFORMS_TRANSFORMS_H
#define FUSION_TRANSFORMS_TRANSFORMS_H

#include "fusion/Analysis/ActivationMatcher.h"
#include "fusion/Analysis/ProjectionPairing.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Transforms/CheckElision.h"
#include "fusion/Transforms/Declines.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>
#include <string>

namespace mlir::fusion {

//===----------------------------------------------------------------------===//
// Activation -> quantize (fusion-fuse-act-quantize)
//===----------------------------------------------------------------------===//

/// The pass's options, and what its candidate search knows.
struct ActQuantizeOptions {
  /// Formats the fused op may take; empty: every format (`formats`).
  SmallVector<QuantFormat> formats;
  /// Decline where the activation's body rounds internally
  /// (`strict-rounding`).
  bool strictRounding = false;
  /// Checks on values computed from the activation are proven for finite
  /// inputs only (`finite-inputs`).
  bool finiteInputs = false;
  /// Quantizers of the same value already settled (declined in favour of an
  /// earlier fused op): other users, never partners or duplicates.
  const llvm::SmallPtrSetImpl<Operation *> *settled = nullptr;
};

/// A quantizer that passed every admission rule, with all the rewrite needs.
struct ActQuantizePlan {
  /// The quantizer, and the one of the other direction that joins it
  /// (direction `both`; null if none).
  QuantizeOp q, partner;
  /// Quantizers identical to q or the partner (they read the fused op's
  /// results), and further ones of the value that stay, reading the
  /// activation (one fused op writes one rowwise and one colwise copy).
  SmallVector<QuantizeOp> duplicates, extras;
  /// The fused op's scheme (q's, or the merged directions).
  QuantSchemeAttr scheme;
  /// The quantized value (the activation's result).
  Value value;
  ActivationMatch act;
  /// The reduction whose result becomes the fused op's dbias result.
  Operation *dbias = nullptr;
  /// Checks (cf.assert) on values computed from the activation, proven to
  /// hold (for every finite input where checksForFiniteInputs): they go
  /// with the fusion.
  std::optional<ProvenChecks> checks;
  bool checksForFiniteInputs = false;
  /// Set by the caller where q (or the partner) is the colwise quantizer
  /// made from a rowwise one of the transposed activation (said in the
  /// form).
  bool colwiseFromTranspose = false;
  /// The type the activation is rounded to before quantizing.
  Type intermediate;
  /// The op before which the fused op goes.
  Operation *anchor = nullptr;
};

/// Every admission rule for fusing `q` with the activation computing its
/// input (`value`, default `q`'s input): an activation (or an identity with a
/// dbias reduction) the runtime computes, no other user but a partner
/// quantizer, duplicates, a dbias reduction or checks proven to hold, runtime
/// element types and ranks, the format, and operands that dominate the
/// fused op's place. Builds and erases no IR.
FailureOr<ActQuantizePlan> planActQuantize(QuantizeOp q, DominanceInfo &dom,
                                           const ActQuantizeOptions &options,
                                           MatchFailure *why = nullptr,
                                           Value value = {});

/// What rewriteActQuantize made.
struct ActQuantizeRewrite {
  /// The fusion.act_quantize or fusion.gated_act_quantize.
  Operation *fused = nullptr;
  /// How it was fused, for a remark (" from a packed [gate | up] tensor",
  /// " with dbias", "; 2 check(s) ... dropped").
  std::string form;
};

/// Builds the fused op of `plan` before its anchor, replaces the results of
/// its quantizers (and of the dbias reduction) and erases what went dead:
/// the quantizers, the activation where nothing else reads it, the proven
/// checks. Fails only where the fused op would not verify (a bug: `why` says
/// so): the fused op and what was made for it are erased again, while the
/// shape reads of the activation stay resolved and the proven checks stay
/// dropped (both hold either way).
FailureOr<ActQuantizeRewrite> rewriteActQuantize(RewriterBase &rewriter,
                                                 ActQuantizePlan &plan,
                                                 MatchFailure *why = nullptr);

//===----------------------------------------------------------------------===//
// Paired projections (fusion-fuse-paired-projections)
//===----------------------------------------------------------------------===//

/// Two projections of one input that passed every admission rule, ordered
/// as the fused op takes them (the gate first).
struct PairedProjectionPlan {
  Projection proj[2];
  EpilogueMatch epi[2];
  /// The gated activation consuming both (SwiGLU, GeGLU, ...), if any.
  std::optional<GatedMatch> gated;
  /// The gated quantizer consuming both projections (epi[i] then holds each
  /// projection's rounding and bias): the FFN front after
  /// fusion-fuse-act-quantize; the pair becomes a quantizing paired op.
  GatedActQuantizeOp gatedQuant;
  /// Why a gated consumer of both projections (SwiGLU written with more in
  /// its body, e.g. a quantize-dequantize) stays a generic of its own while
  /// the projections pair with plain epilogues; empty otherwise.
  std::string gatedLeft;
  /// Preference among admitted partners of one projection (the pass fuses
  /// gated pairs first, then those with more non-trivial epilogues).
  int score = 0;
  /// The op before which the fused op goes.
  Operation *anchor = nullptr;
};

/// Every admission rule for pairing the projections `a` and `b`
/// (contractions matchProjection accepts, in one block): the same input,
/// the weights' shapes and types, each epilogue (or the gated activation,
/// or a fusion.gated_act_quantize) the paired op computes, no dependency
/// between the two, and a place that sees every operand and precedes every
/// use. Builds and erases no IR.
FailureOr<PairedProjectionPlan>
planPairedProjection(linalg::LinalgOp a, linalg::LinalgOp b, DominanceInfo &dom,
                     MatchFailure *why = nullptr);

/// Builds the fusion.paired_projection of `plan` before its anchor,
/// replaces the epilogues' (or the gated op's) results and erases the
/// projections, epilogues and what went dead with them (added to `erased`
/// where given). Fails, with the IR as it was, only where the fused op
/// would not verify (a bug).
FailureOr<PairedProjectionOp>
rewritePairedProjection(RewriterBase &rewriter,
                        const PairedProjectionPlan &plan,
                        DenseSet<Operation *> *erased = nullptr);

/// One line saying what the plan fuses ("paired linalg.matmul and
/// linalg.matmul into fusion.paired_projection with epilogues ..."), the
/// pass's remark.
std::string describePairedProjection(const PairedProjectionPlan &plan);

//===----------------------------------------------------------------------===//
// Static FP8 scales (fusion-normalize-elementwise, fusion-raise-quantize)
//===----------------------------------------------------------------------===//

/// The value of `v` if it is an f32 constant: a scalar, or a one-element
/// tensor (a buffer torch-mlir exports as a constant).
std::optional<float> getF32ScalarConstant(Value v);

/// True if the body of `g` only widens its one input to wider floats
/// (`y.float()`).
bool isPureWidening(linalg::GenericOp g);

/// A copy of the one-result generic `g` reading `ins` into `init`: the same
/// indexing maps and iterators, its body cloned.
linalg::GenericOp cloneGenericOnto(OpBuilder &b, Location loc,
                                   linalg::GenericOp g, ValueRange ins,
                                   Value init);

} // namespace mlir::fusion

#endif // FUSION_TRANSFORMS_TRANSFORMS_H
