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
#include "fusion/Transforms/ShapeReads.h"
#include "fusion/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
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

/// torch-mlir views a decode-shaped Linear's [B, 1, K] input as [B, K] by
/// grouping the unit T with K ([[0], [1, 2]]), and expands the [B, H]
/// result back the same way. A broadcast operand of the epilogue that reads
/// only H (a per-column bias or scale, `(d0, d1, d2) -> (d2)`) then covers
/// part of a group, so the collapsing patterns cannot move that
/// expand_shape past the epilogue, and the epilogue never reaches the
/// projection (the GDN gates of a [B, 1, K] input paired with epilogues
/// `none, ...`). A group's leading static unit dimensions belong as well to
/// the end of the group before it (the same elements in the same order):
/// moved there, the per-column operand covers H's group whole.
struct RegroupUnitDimsOfExpand
    : public OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getSrc().getDefiningOp<linalg::LinalgOp>())
      return failure();
    ArrayRef<int64_t> shape = op.getResultType().getShape();
    SmallVector<ReassociationIndices> groups = op.getReassociationIndices();
    bool changed = false;
    for (size_t g = 1; g < groups.size(); ++g)
      while (groups[g].size() > 1 && shape[groups[g].front()] == 1) {
        groups[g - 1].push_back(groups[g].front());
        groups[g].erase(groups[g].begin());
        changed = true;
      }
    if (!changed)
      return failure();
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, op.getResultType(), op.getSrc(), groups, op.getMixedOutputShape());
    return success();
  }
};

/// Replaces `op` by `r`, through a tensor.cast where `r` has another (more
/// or less static) type than `op`'s result.
void replaceWithCast(PatternRewriter &rewriter, Operation *op, Value r) {
  Type type = op->getResult(0).getType();
  if (r.getType() != type)
    r = tensor::CastOp::create(rewriter, op->getLoc(), type, r);
  rewriter.replaceOp(op, r);
}

/// torch-mlir writes the view of a Linear's [M, H] result back to
/// [B, T, H] as a `tensor.reshape` to a shape built from sizes
/// (`tensor.from_elements`) when both token dimensions are dynamic. When the
/// new shape keeps the source's trailing dimensions and only splits its
/// first one (or, the other way, merges leading dimensions into one), the
/// reshape is an expand_shape (collapse_shape): the same elements in the
/// same order, and the same precondition (the sizes multiply to the
/// source's). The expand_shape then moves past the elementwise epilogue like
/// the one torch-mlir writes for a single dynamic token dimension.
struct ReshapeAsExpandOrCollapse : public OpRewritePattern<tensor::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto srcType = dyn_cast<RankedTensorType>(op.getSource().getType());
    auto resType = dyn_cast<RankedTensorType>(op.getResult().getType());
    auto elements = op.getShape().getDefiningOp<tensor::FromElementsOp>();
    if (!srcType || !resType || !elements || srcType.getRank() == 0 ||
        resType.getRank() == 0 || srcType.getRank() == resType.getRank())
      return failure();
    bool expand = resType.getRank() > srcType.getRank();
    RankedTensorType big = expand ? resType : srcType;
    RankedTensorType small = expand ? srcType : resType;
    int64_t lead = big.getRank() - small.getRank();
    // The size of the result's dimension d: static in the type, or a
    // constant element of the shape.
    auto resultSize = [&](int64_t d) -> std::optional<int64_t> {
      if (!resType.isDynamicDim(d))
        return resType.getDimSize(d);
      APInt c;
      if (matchPattern(elements.getElements()[d], m_ConstantInt(&c)))
        return c.getSExtValue();
      return std::nullopt;
    };
    // Trailing dimensions kept: the same static sizes on both sides.
    for (int64_t d = 1; d < small.getRank(); ++d) {
      int64_t srcDim = expand ? d : d + lead;
      int64_t resDim = expand ? d + lead : d;
      std::optional<int64_t> r = resultSize(resDim);
      if (srcType.isDynamicDim(srcDim) || !r || *r != srcType.getDimSize(srcDim))
        return failure();
    }
    SmallVector<ReassociationIndices> reassoc;
    reassoc.emplace_back();
    for (int64_t d = 0; d <= lead; ++d)
      reassoc.back().push_back(d);
    for (int64_t d = lead + 1; d < big.getRank(); ++d)
      reassoc.push_back({d});
    if (!expand) {
      // The merged size: static where every merged size is (it must then
      // be the result's, when that is static too); a static result size
      // over a dynamic group comes back through a cast.
      int64_t merged = 1;
      for (int64_t d = 0; d <= lead; ++d)
        merged = srcType.isDynamicDim(d) || ShapedType::isDynamic(merged)
                     ? ShapedType::kDynamic
                     : merged * srcType.getDimSize(d);
      if (!ShapedType::isDynamic(merged) && !resType.isDynamicDim(0) &&
          merged != resType.getDimSize(0))
        return failure();
      SmallVector<int64_t> sizes(resType.getShape());
      sizes[0] = merged;
      auto type = RankedTensorType::get(sizes, resType.getElementType(),
                                        resType.getEncoding());
      replaceWithCast(rewriter, op,
                      tensor::CollapseShapeOp::create(rewriter, op.getLoc(),
                                                      type, op.getSource(),
                                                      reassoc));
      return success();
    }
    // Checks first (a pattern that fails creates nothing): the result's
    // static sizes, non-negative, and the leading group of a static source
    // static and multiplying to its size (expand_shape's rule).
    SmallVector<int64_t> sizes;
    for (int64_t d = 0; d < resType.getRank(); ++d) {
      std::optional<int64_t> r = resultSize(d);
      if (r && *r < 0)
        return failure();
      sizes.push_back(r ? *r : ShapedType::kDynamic);
    }
    if (!srcType.isDynamicDim(0)) {
      int64_t prod = 1;
      for (int64_t d = 0; d <= lead; ++d) {
        if (ShapedType::isDynamic(sizes[d]))
          return failure();
        prod *= sizes[d];
      }
      if (prod != srcType.getDimSize(0))
        return failure();
    }
    Location loc = op.getLoc();
    SmallVector<OpFoldResult> shape;
    for (int64_t d = 0; d < resType.getRank(); ++d) {
      if (!ShapedType::isDynamic(sizes[d])) {
        shape.push_back(rewriter.getIndexAttr(sizes[d]));
        continue;
      }
      Value v = elements.getElements()[d];
      if (!v.getType().isIndex())
        v = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), v);
      shape.push_back(v);
    }
    auto type = RankedTensorType::get(sizes, resType.getElementType(),
                                      resType.getEncoding());
    replaceWithCast(rewriter, op,
                    tensor::ExpandShapeOp::create(
                        rewriter, loc, type, op.getSource(), reassoc, shape));
    return success();
  }
};

/// A slice of a `tensor.concat` that is exactly one of its operands (unit
/// strides, the operand's offset and size along the concatenated dimension,
/// every other dimension whole): that operand. A program that concatenates
/// two projections and splits the halves again (`torch.cat([w1(x), w3(x)])`
/// before a [gate | up] SwiGLU) then reads the projections directly.
struct SliceOfConcatOperand : public OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp op,
                                PatternRewriter &rewriter) const override {
    auto concat = op.getSource().getDefiningOp<tensor::ConcatOp>();
    if (!concat || !op.hasUnitStride() ||
        op.getSourceType().getRank() != op.getResultType().getRank())
      return failure();
    const int64_t dim = static_cast<int64_t>(concat.getDim());
    const int64_t rank = op.getSourceType().getRank();
    SmallVector<OpFoldResult> offsets = op.getMixedOffsets();
    SmallVector<OpFoldResult> sizes = op.getMixedSizes();
    // A whole dimension k: offset 0 and, provably, the size of the
    // concatenation or of the operand (equal off the concatenated
    // dimension).
    auto whole = [&](int64_t k, Value operand) {
      return isConstantIntValue(offsets[k], 0) &&
             (fusion::isSizeOf(sizes[k], operand, k) ||
              fusion::isSizeOf(sizes[k], concat.getResult(), k));
    };
    int64_t start = 0;
    for (Value operand : concat.getInputs()) {
      auto t = cast<RankedTensorType>(operand.getType());
      if (t.isDynamicDim(dim))
        return failure();
      const int64_t width = t.getDimSize(dim);
      if (isConstantIntValue(offsets[dim], start) &&
          isConstantIntValue(sizes[dim], width)) {
        for (int64_t k = 0; k < rank; ++k)
          if (k != dim && !whole(k, operand))
            return failure();
        replaceWithCast(rewriter, op, operand);
        return success();
      }
      start += width;
    }
    return failure();
  }
};

/// torch-mlir writes `torch.einsum("nk,hk->nh", x, w)` as a
/// `linalg.batch_matmul` of batch 1: x and w expanded to [1, N, K] and
/// [1, K, H], the result [1, N, H] collapsed back. With a static unit batch
/// on every operand it is the matmul of the collapsed operands (the same
/// products summed in the same order), expanded back; the expand_shape and
/// collapse_shape around it then fold away, and the projection matcher sees
/// the plain matmul of a Linear.
struct UnitBatchMatmulAsMatmul
    : public OpRewritePattern<linalg::BatchMatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::BatchMatmulOp op,
                                PatternRewriter &rewriter) const override {
    // The default maps and the default (signed) cast, the matmul's.
    auto cast = op->getAttrOfType<linalg::TypeFnAttr>(op.getCastAttrName());
    if (!op.hasPureTensorSemantics() || op.hasUserDefinedMaps() ||
        (cast && cast.getValue() != linalg::TypeFn::cast_signed))
      return failure();
    SmallVector<Value> operands{op.getDpsInputOperand(0)->get(),
                                op.getDpsInputOperand(1)->get(),
                                op.getDpsInitOperand(0)->get()};
    for (Value v : operands) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || t.getRank() != 3 || t.getDimSize(0) != 1)
        return failure();
    }
    Location loc = op.getLoc();
    SmallVector<ReassociationIndices> re{{0, 1}, {2}};
    SmallVector<Value> collapsed;
    for (Value v : operands)
      collapsed.push_back(
          tensor::CollapseShapeOp::create(rewriter, loc, v, re));
    auto mm = linalg::MatmulOp::create(
        rewriter, loc, TypeRange{collapsed[2].getType()},
        ValueRange{collapsed[0], collapsed[1]}, ValueRange{collapsed[2]});
    SmallVector<OpFoldResult> shape =
        tensor::getMixedSizes(rewriter, loc, operands[2]);
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, op.getResultTypes()[0], mm.getResult(0), re, shape);
    return success();
  }
};

/// A slice of a widened tensor (`x.float()` then `chunk`, as a gated
/// backward or forward written by hand splits [gate | up] after widening)
/// is the widening of the same slice of x: elementwise and exact, so the
/// two commute. When every use of the widened tensor is such a slice, each
/// slice widens its own part of x, and the widening then fuses into the
/// generic that reads it like `grad.float()` does, so the fused op reads
/// x's parts and the gradient in one element type (before: the gated
/// backward was declined, "grad and input have different element types").
struct SliceOfWidening : public OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp op,
                                PatternRewriter &rewriter) const override {
    auto g = op.getSource().getDefiningOp<linalg::GenericOp>();
    if (!g || g->getNumResults() != 1 || !g.hasPureTensorSemantics() ||
        !fusion::isPureWidening(g) ||
        g.getNumParallelLoops() != g.getNumLoops() ||
        !llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }) ||
        op.getSourceType().getRank() != op.getResultType().getRank() ||
        !llvm::all_of(g->getResult(0).getUsers(), [](Operation *u) {
          return isa<tensor::ExtractSliceOp>(u);
        }))
      return failure();
    Location loc = op.getLoc();
    Value part = tensor::ExtractSliceOp::create(
        rewriter, loc, g.getDpsInputOperand(0)->get(), op.getMixedOffsets(),
        op.getMixedSizes(), op.getMixedStrides());
    Value init = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, part),
        op.getResultType().getElementType());
    // g's maps are identities of the slice's rank too.
    linalg::GenericOp widened =
        fusion::cloneGenericOnto(rewriter, loc, g, ValueRange{part}, init);
    replaceWithCast(rewriter, op, widened.getResult(0));
    return success();
  }
};

/// The dimensions of `type` that are not a static 1.
SmallVector<int64_t> nonUnitDims(RankedTensorType type) {
  SmallVector<int64_t> dims;
  for (int64_t d = 0, e = type.getRank(); d < e; ++d)
    if (type.getDimSize(d) != 1)
      dims.push_back(d);
  return dims;
}

/// The reassociation that drops the static unit dimensions of `type`: one
/// group per other dimension, holding it and the unit dimensions before it
/// (trailing ones join the last group). Empty when nothing is dropped or
/// every dimension is a unit one.
SmallVector<ReassociationIndices> dropUnitDims(RankedTensorType type) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t d = 0, e = type.getRank(); d < e; ++d) {
    pending.push_back(d);
    if (type.getDimSize(d) != 1) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (groups.empty() || static_cast<int64_t>(groups.size()) == type.getRank())
    return {};
  groups.back().append(pending.begin(), pending.end());
  return groups;
}

/// `groups` (a reshape between `low` and `high`) restricted to the
/// dimensions of both that are not 1, renumbered among them; nullopt when a
/// dimension of `low` that is not 1 keeps none of its group.
std::optional<SmallVector<ReassociationIndices>>
withoutUnitDims(ArrayRef<ReassociationIndices> groups, RankedTensorType low,
                RankedTensorType high) {
  SmallVector<int64_t> kept = nonUnitDims(high);
  SmallVector<ReassociationIndices> out;
  for (auto [i, g] : llvm::enumerate(groups)) {
    if (low.getDimSize(i) == 1)
      continue;
    ReassociationIndices ng;
    for (int64_t d : g)
      if (high.getDimSize(d) != 1)
        ng.push_back(llvm::find(kept, d) - kept.begin());
    if (ng.empty())
      return std::nullopt;
    out.push_back(ng);
  }
  return out;
}

bool isIdentityReassociation(ArrayRef<ReassociationIndices> groups) {
  return llvm::all_of(
      groups, [](const ReassociationIndices &g) { return g.size() == 1; });
}

/// torch-mlir moves unit dimensions around an einsum's operands and result
/// as `collapse_shape(transpose(expand_shape(x)))` ([64, 64] -> [64, 64, 1]
/// -> permutation [1, 0, 2] -> [64, 64]; [6, 64] -> [2, 3, 1, 64] ->
/// [2, 3, 64, 1] -> [2, 3, 64]). When the transpose moves only static unit
/// dimensions, the chain is a reshape of x (the same elements in the same
/// order): x without its unit dimensions, expanded and collapsed as the two
/// reshapes do to the other dimensions, unit dimensions inserted where the
/// result has them. When it permutes the other dimensions and the reshapes
/// only insert and drop unit dimensions, the chain is the transpose of x (a
/// weight read as `hk`: the Linear's transpose, which the projection matcher
/// reads through). The transpose may be named or a generic (this pass
/// generalizes it).
struct UnitDimTransposeChain
    : public OpRewritePattern<tensor::CollapseShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::CollapseShapeOp op,
                                PatternRewriter &rewriter) const override {
    Value input;
    SmallVector<int64_t> perm;
    if (auto tr = op.getSrc().getDefiningOp<linalg::TransposeOp>()) {
      input = tr.getInput();
      perm = llvm::to_vector(tr.getPermutation());
    } else if (auto g = op.getSrc().getDefiningOp<linalg::GenericOp>()) {
      if (std::optional<SmallVector<int64_t>> p =
              linalg::isaTransposeOpInterface(g)) {
        input = g.getDpsInputOperand(0)->get();
        perm = *p;
      }
    }
    auto ex = input ? input.getDefiningOp<tensor::ExpandShapeOp>()
                    : tensor::ExpandShapeOp();
    if (!ex)
      return failure();
    RankedTensorType srcType = ex.getSrcType(), resType = op.getResultType();
    RankedTensorType expType = ex.getResultType();
    RankedTensorType trType = op.getSrcType();
    // The expanded dimensions that are not 1, in the transpose's order.
    SmallVector<int64_t> moved;
    for (int64_t d : perm)
      if (expType.getDimSize(d) != 1)
        moved.push_back(d);
    if (moved.empty())
      return failure();
    Location loc = op.getLoc();
    Value x = ex.getSrc();
    if (llvm::is_sorted(moved)) {
      // A reshape: x' (no unit dimensions) -> E' -> R' -> R.
      std::optional<SmallVector<ReassociationIndices>> in =
          withoutUnitDims(ex.getReassociationIndices(), srcType, expType);
      std::optional<SmallVector<ReassociationIndices>> out =
          withoutUnitDims(op.getReassociationIndices(), resType, trType);
      if (!in || !out)
        return failure();
      if (SmallVector<ReassociationIndices> drop = dropUnitDims(srcType);
          !drop.empty())
        x = tensor::CollapseShapeOp::create(rewriter, loc, x, drop);
      SmallVector<int64_t> expKept = nonUnitDims(expType);
      if (!isIdentityReassociation(*in)) {
        SmallVector<OpFoldResult> shape;
        SmallVector<int64_t> staticShape;
        for (int64_t d : expKept) {
          shape.push_back(ex.getMixedOutputShape()[d]);
          staticShape.push_back(expType.getDimSize(d));
        }
        x = tensor::ExpandShapeOp::create(
            rewriter, loc,
            RankedTensorType::get(staticShape, expType.getElementType()), x,
            *in, shape);
      }
      if (!isIdentityReassociation(*out))
        x = tensor::CollapseShapeOp::create(rewriter, loc, x, *out);
      if (SmallVector<ReassociationIndices> insert = dropUnitDims(resType);
          !insert.empty()) {
        SmallVector<OpFoldResult> shape;
        int64_t k = 0;
        for (int64_t d = 0, e = resType.getRank(); d < e; ++d)
          shape.push_back(resType.getDimSize(d) == 1
                              ? OpFoldResult(rewriter.getIndexAttr(1))
                              : tensor::getMixedSize(rewriter, loc, x, k++));
        x = tensor::ExpandShapeOp::create(rewriter, loc, resType, x, insert,
                                          shape);
      }
      replaceWithCast(rewriter, op, x);
      return success();
    }
    // A transpose of x: the reshapes only insert and drop unit dimensions,
    // and no side has one.
    const int64_t rank = srcType.getRank();
    if (resType.getRank() != rank ||
        static_cast<int64_t>(nonUnitDims(srcType).size()) != rank ||
        static_cast<int64_t>(nonUnitDims(resType).size()) != rank)
      return failure();
    // Source dimension i is expanded dimension fromSrc[i].
    SmallVector<int64_t> fromSrc;
    for (const ReassociationIndices &g : ex.getReassociationIndices())
      for (int64_t d : g)
        if (expType.getDimSize(d) != 1)
          fromSrc.push_back(d);
    // Result dimension r carries transposed position toRes[r].
    SmallVector<int64_t> toRes;
    for (const ReassociationIndices &g : op.getReassociationIndices())
      for (int64_t j : g)
        if (trType.getDimSize(j) != 1)
          toRes.push_back(j);
    if (static_cast<int64_t>(fromSrc.size()) != rank ||
        static_cast<int64_t>(toRes.size()) != rank)
      return failure();
    // Result dimension r reads x's dimension inverse[r].
    SmallVector<int64_t> inverse(rank);
    for (int64_t r = 0; r < rank; ++r)
      inverse[r] = llvm::find(fromSrc, perm[toRes[r]]) - fromSrc.begin();
    SmallVector<OpFoldResult> sizes;
    for (int64_t r = 0; r < rank; ++r)
      sizes.push_back(tensor::getMixedSize(rewriter, loc, x, inverse[r]));
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, sizes, srcType.getElementType());
    x = linalg::TransposeOp::create(rewriter, loc, x, empty, inverse)
            .getResult()[0];
    replaceWithCast(rewriter, op, x);
    return success();
  }
};

/// True if `v` is a one-element tensor (or a scalar read from one) that
/// is not constant and not computed by a reduction: a scale given to the
/// function (FP8 delayed scaling), not the amax-derived scale of current
/// scaling.
bool isGivenScale(Value v) {
  if (auto ex = v.getDefiningOp<tensor::ExtractOp>())
    v = ex.getTensor();
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape() || t.getNumElements() != 1 ||
      matchPattern(v, m_Constant()))
    return false;
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  while (!work.empty() && seen.size() < 256) {
    Value u = work.pop_back_val();
    if (!seen.insert(u).second)
      continue;
    Operation *def = u.getDefiningOp();
    if (!def)
      continue;
    if (auto l = dyn_cast<linalg::LinalgOp>(def))
      if (l.getNumReductionLoops() > 0)
        return false;
    if (def->hasTrait<OpTrait::ConstantLike>())
      continue;
    for (Value o : def->getOperands())
      work.push_back(o);
  }
  return work.empty();
}

/// True if `v` is an f32 constant (a scalar, or a one-element tensor) other
/// than 0 and 1: a static scale where a quantizer multiplies by it.
bool isConstantScale(Value v) {
  std::optional<float> f = fusion::getF32ScalarConstant(v);
  return f && std::isfinite(*f) && *f != 0.0f && *f != 1.0f;
}

/// True if the body of `g` is a static-scale quantizer's step: one multiply
/// by (or division by) a constant scale (isConstantScale, read as a scalar
/// or as a one-element input), with nothing but conversions and clamps
/// (compare / select / min / max) beside it: `(y.float() * 24.0).clamp(..)`
/// with the scale a buffer or a literal.
bool isConstantScaleStep(linalg::GenericOp g) {
  unsigned scaled = 0;
  for (Operation &inner : g.getBody()->without_terminator()) {
    if (isa<arith::ExtFOp, arith::TruncFOp, arith::CmpFOp, arith::SelectOp,
            arith::MinimumFOp, arith::MaximumFOp, arith::MinNumFOp,
            arith::MaxNumFOp>(inner))
      continue;
    // x * s, or x / s (vLLM's static FP8, which the raising checks).
    auto mul = dyn_cast<arith::MulFOp>(inner);
    auto div = dyn_cast<arith::DivFOp>(inner);
    if (!mul && !div)
      return false;
    auto constantOperand = [&](Value v) {
      if (auto arg = dyn_cast<BlockArgument>(v);
          arg && arg.getOwner() == g.getBody())
        return arg.getArgNumber() < g.getNumDpsInputs() &&
               isConstantScale(g.getDpsInputs()[arg.getArgNumber()]);
      return isConstantScale(v);
    };
    if (mul ? !constantOperand(mul.getLhs()) && !constantOperand(mul.getRhs())
            : !constantOperand(div.getRhs()))
      return false;
    ++scaled;
  }
  return scaled == 1;
}

/// True if `op` is an elementwise generic of a delayed- or static-scaling
/// quantizer written out, `(x.float() * scale).clamp(..).to(fp8)` (the
/// scale given, or a constant: isConstantScaleStep): on the way
/// (through sole users) to a cast to FP8, either multiplying by a given
/// scale, after such a multiply, or a widening conversion before it. Producers
/// are not fused into such ops, so that the quantizer's input stays a tensor of
/// its own, which fusion-raise-quantize takes (and fusion-fuse-act-quantize
/// then fuses the activation that computes it); the generics of the activation
/// before it fuse as anywhere else.
bool onDelayedFp8Cast(Operation *op) {
  bool scaled = false;
  for (unsigned i = 0; i < 8; ++i) {
    auto g = dyn_cast_or_null<linalg::GenericOp>(op);
    if (!g || !g.hasPureTensorSemantics() ||
        g.getNumParallelLoops() != g.getNumLoops() || g->getNumResults() != 1)
      return false;
    for (Value in : g.getDpsInputs())
      scaled = scaled || isGivenScale(in);
    g.getRegion().walk([&](Operation *inner) {
      for (Value o : inner->getOperands())
        if (!g->isAncestor(o.getParentRegion()->getParentOp()))
          scaled = scaled || isGivenScale(o);
    });
    scaled = scaled || isConstantScaleStep(g);
    // A step of the activation before the quantizer.
    if (!scaled && !fusion::isPureWidening(g))
      return false;
    auto rt = cast<RankedTensorType>(g->getResult(0).getType());
    if (isa<Float8E4M3FNType, Float8E5M2Type>(rt.getElementType()))
      return scaled;
    Operation *next = nullptr;
    for (Operation *u : g->getResult(0).getUsers()) {
      if (isa<tensor::DimOp>(u))
        continue;
      if (next)
        return false;
      next = u;
    }
    op = next;
  }
  return false;
}

} // namespace

void mlir::fusion::populateNormalizeFusionPatterns(
    RewritePatternSet &patterns) {
  linalg::populateElementwiseOpsFusionPatterns(
      patterns, [](OpOperand *fused) {
        Operation *producer = fused->get().getDefiningOp();
        Operation *consumer = fused->getOwner();
        if (!producer)
          return false;
        // A delayed-scaling quantizer keeps its input (onDelayedFp8Cast).
        if (onDelayedFp8Cast(consumer))
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
  patterns.add<DimOfExpandShape, ReshapeAsExpandOrCollapse,
               SliceOfConcatOperand, RegroupUnitDimsOfExpand,
               UnitBatchMatmulAsMatmul, UnitDimTransposeChain, SliceOfWidening>(
      patterns.getContext());
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

std::optional<float> mlir::fusion::getF32ScalarConstant(Value v) {
  FloatAttr attr;
  if (!matchPattern(v, m_Constant(&attr))) {
    DenseFPElementsAttr dense;
    if (!matchPattern(v, m_Constant(&dense)) || dense.getNumElements() != 1)
      return std::nullopt;
    attr = *dense.getValues<FloatAttr>().begin();
  }
  if (!attr.getType().isF32())
    return std::nullopt;
  return static_cast<float>(attr.getValueAsDouble());
}

/// (A narrowing `.to(bf16)` is not one: it is an activation's own rounding.)
bool mlir::fusion::isPureWidening(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 1)
    return false;
  for (Operation &inner : g.getBody()->without_terminator())
    if (!isa<arith::ExtFOp>(inner))
      return false;
  return true;
}

linalg::GenericOp mlir::fusion::cloneGenericOnto(OpBuilder &b, Location loc,
                                                 linalg::GenericOp g,
                                                 ValueRange ins, Value init) {
  return linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ins, ValueRange{init},
      g.getIndexingMapsArray(), g.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        IRMapping m;
        m.map(g.getBody()->getArguments(), args);
        for (Operation &inner : g.getBody()->without_terminator())
          nb.clone(inner, m);
        auto y = cast<linalg::YieldOp>(g.getBody()->getTerminator());
        linalg::YieldOp::create(nb, l, m.lookup(y.getOperand(0)));
      });
}
