//===- NormalizeElementwise.cpp - elementwise code into fused generics ----===//
//
// Implements `fusion-normalize-elementwise`: the normalisation that lets the
// activation matcher see one expression tree per activation. It reuses the
// upstream patterns (elementwise ops to linalg, named op generalisation,
// elementwise fusion) but restricts generalisation to elementwise named ops
// and fuses a producer only into its sole consumer.
//
//===----------------------------------------------------------------------===//
#include "fusion/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_NORMALIZEELEMENTWISE
#include "fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;

namespace {

/// Generalizes elementwise named linalg ops (linalg.exp, linalg.mul,
/// linalg.elementwise, linalg.map, ...). Contractions, reductions and fills
/// keep their named form.
struct GeneralizeElementwiseNamedOp
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (isa<linalg::GenericOp, linalg::FillOp>(op.getOperation()) ||
        !op.hasPureTensorSemantics() || !linalg::isElementwise(op))
      return failure();
    return linalg::generalizeNamedOp(rewriter, op);
  }
};

/// Rewrites `tensor.bitcast` (torch-mlir's lowering of `view(dtype)`) as the
/// elementwise `arith.bitcast`, which then becomes a linalg.generic like any
/// elementwise op: one-shot bufferization has no model for tensor.bitcast.
struct TensorBitcastToElementwise : public OpRewritePattern<tensor::BitcastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::BitcastOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(),
                                                  op.getOperand());
    return success();
  }
};

/// `tensor.dim` of a `tensor.expand_shape` result: the size the expand_shape
/// names (its output_shape). The collapsing patterns below size the
/// expand_shape they move onto a generic's result by such reads of the one
/// the generic read; folded, that one is left with no user, so the rounding
/// generic it expanded fuses into the epilogue (torch-mlir's [B, T, K]
/// Linear with a dynamic T).
struct DimOfExpandShape : public OpRewritePattern<tensor::DimOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::DimOp op,
                                PatternRewriter &rewriter) const override {
    auto expand = op.getSource().getDefiningOp<tensor::ExpandShapeOp>();
    std::optional<int64_t> index = op.getConstantIndex();
    if (!expand || !index || *index < 0 ||
        *index >= expand.getResultType().getRank())
      return failure();
    OpFoldResult size = expand.getMixedOutputShape()[*index];
    rewriter.replaceOp(
        op, getValueOrCreateConstantIndexOp(rewriter, op.getLoc(), size));
    return success();
  }
};

} // namespace

void mlir::fusion::populateNormalizeFusionPatterns(
    RewritePatternSet &patterns) {
  linalg::populateElementwiseOpsFusionPatterns(
      patterns, [](OpOperand *fused) {
        Operation *producer = fused->get().getDefiningOp();
        Operation *consumer = fused->getOwner();
        if (!producer)
          return false;
        if (llvm::all_of(producer->getUsers(), [&](Operation *u) {
              return u == consumer || isa<tensor::DimOp>(u);
            }))
          return true;
        // A small elementwise value shared by the halves of one
        // concatenation (the sigmoid that CSE leaves shared by dgate and dup
        // of a gated backward, [dgate | dup]) is computed again in each
        // half, so that each reads the inputs, not an opaque tensor; the
        // producer then has no user left. A value that anything else reads
        // (a reduction such as a dbias or an amax, a quantizer, a return)
        // keeps its own op.
        auto isElementwiseGeneric = [](Operation *op) {
          auto g = dyn_cast<linalg::GenericOp>(op);
          return g && g.hasPureTensorSemantics() &&
                 g.getNumParallelLoops() == g.getNumLoops();
        };
        constexpr size_t kMaxRecomputedOps = 16;
        if (!isElementwiseGeneric(producer) ||
            producer->getRegion(0).front().getOperations().size() >
                kMaxRecomputedOps)
          return false;
        Operation *concat = nullptr;
        for (Operation *u : producer->getUsers()) {
          if (isa<tensor::DimOp>(u))
            continue;
          if (!isElementwiseGeneric(u) || u->getNumResults() != 1 ||
              !u->getResult(0).hasOneUse())
            return false;
          Operation *next = *u->getResult(0).getUsers().begin();
          if (!isa<tensor::ConcatOp>(next) || (concat && next != concat))
            return false;
          concat = next;
        }
        return concat != nullptr;
      });
  // torch-mlir computes a Linear of [B, T, K] on [B*T, K] and expands the
  // result back before the epilogue: an elementwise generic that reads such
  // an expand_shape is collapsed onto the producer's shape (the
  // expand_shape moves to its result), so that it fuses with the rounding
  // generic before it and reads the projection directly.
  linalg::populateFoldReshapeOpsByCollapsingPatterns(
      patterns, [](OpOperand *fused) {
        auto expand = fused->get().getDefiningOp<tensor::ExpandShapeOp>();
        auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
        return expand && consumer &&
               consumer.getNumParallelLoops() == consumer.getNumLoops() &&
               expand.getSrc().getDefiningOp<linalg::LinalgOp>();
      });
  patterns.add<DimOfExpandShape>(patterns.getContext());
}

namespace {

struct NormalizeElementwisePass
    : public fusion::impl::NormalizeElementwiseBase<NormalizeElementwisePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseToLinalgConversionPatterns(patterns);
    patterns.add<GeneralizeElementwiseNamedOp, TensorBitcastToElementwise>(ctx);
    // Fuse a producer when every use of it is in this consumer, or when it
    // is small and shared by the halves of one concatenation (it is
    // recomputed in each): a value that is also used elsewhere (an
    // activation feeding a dbias reduction, a quantizer) keeps its own op.
    // `tensor.dim` users do not count: with dynamic shapes the fusion patterns themselves create them,
    // and they fold onto the producer's init (DimOp canonicalization).
    fusion::populateNormalizeFusionPatterns(patterns);
    tensor::DimOp::getCanonicalizationPatterns(patterns, ctx);
    // Region simplification is left to the canonicalize that follows; here
    // it only costs time (half of this pass on large modules).
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
