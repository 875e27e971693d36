//===- ExpandShapeToReinterpretCast.cpp - dynamic expand_shape workaround -===//
//
// Implements `fusion-expand-shape-to-reinterpret-cast` (see Passes.td): a
// contiguous memref.expand_shape with two or more dynamic sizes in one
// reassociation group becomes a memref.reinterpret_cast, because upstream
// expand-strided-metadata crashes on it.
//
//===----------------------------------------------------------------------===//
#include "fusion/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_EXPANDSHAPETOREINTERPRETCAST
#include "fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;

namespace {

/// a * b, folded where both are constants.
OpFoldResult mulIndex(OpBuilder &b, Location loc, OpFoldResult x,
                      OpFoldResult y) {
  std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
  if (cx && cy)
    return b.getIndexAttr(*cx * *cy);
  if (cy == 1)
    return x;
  if (cx == 1)
    return y;
  return arith::MulIOp::create(b, loc, getValueOrCreateConstantIndexOp(b, loc, x),
                               getValueOrCreateConstantIndexOp(b, loc, y))
      .getResult();
}

struct ExpandToReinterpretCast : OpRewritePattern<memref::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    MemRefType src = op.getSrcType(), dst = op.getResultType();
    if (!src.getLayout().isIdentity() || !dst.getLayout().isIdentity())
      return rewriter.notifyMatchFailure(op, "not contiguous");
    bool severalDynamic = false;
    for (const ReassociationIndices &group : op.getReassociationIndices()) {
      int dynamic = 0;
      for (int64_t d : group)
        dynamic += dst.isDynamicDim(d) ? 1 : 0;
      severalDynamic = severalDynamic || dynamic > 1;
    }
    if (!severalDynamic)
      return rewriter.notifyMatchFailure(op, "upstream handles it");
    Location loc = op.getLoc();
    SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
    SmallVector<OpFoldResult> strides(sizes.size());
    OpFoldResult running = rewriter.getIndexAttr(1);
    for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
      strides[i] = running;
      running = mulIndex(rewriter, loc, running, sizes[i]);
    }
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
        op, dst, op.getSrc(), rewriter.getIndexAttr(0), sizes, strides);
    return success();
  }
};

struct ExpandShapeToReinterpretCast
    : fusion::impl::ExpandShapeToReinterpretCastBase<
          ExpandShapeToReinterpretCast> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandToReinterpretCast>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
