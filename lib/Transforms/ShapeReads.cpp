//===- ShapeReads.cpp - reads of a tensor's sizes -------------------------===//
//
// See fusion/Transforms/ShapeReads.h.
//
//===----------------------------------------------------------------------===//
#include "fusion/Transforms/ShapeReads.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

bool mlir::fusion::isResolvableShapeRead(Operation *user, Value value) {
  auto d = dyn_cast<tensor::DimOp>(user);
  auto res = dyn_cast<OpResult>(value);
  return d && d.getSource() == value && d.getConstantIndex() && res &&
         isa<ReifyRankedShapedTypeOpInterface>(res.getOwner());
}

unsigned mlir::fusion::resolveShapeReads(RewriterBase &rewriter, Value value) {
  auto res = dyn_cast<OpResult>(value);
  auto shaped = res ? dyn_cast<ReifyRankedShapedTypeOpInterface>(res.getOwner())
                    : ReifyRankedShapedTypeOpInterface();
  if (!shaped)
    return 0;
  unsigned replaced = 0;
  SmallVector<tensor::DimOp> dims;
  for (Operation *user : value.getUsers())
    if (isResolvableShapeRead(user, value))
      dims.push_back(cast<tensor::DimOp>(user));
  OpBuilder::InsertionGuard guard(rewriter);
  for (tensor::DimOp d : dims) {
    // The ops made for the sizes (those of the other dimensions, and an
    // unused one, are erased again).
    Block *block = d->getBlock();
    Operation *before = d->getPrevNode();
    rewriter.setInsertionPoint(d);
    ReifiedRankedShapedTypeDims sizes;
    if (failed(reifyResultShapes(rewriter, shaped, sizes)))
      return replaced;
    OpFoldResult size = sizes[res.getResultNumber()][*d.getConstantIndex()];
    Value v = getValueOrCreateConstantIndexOp(rewriter, d.getLoc(), size);
    SmallVector<Operation *> created;
    for (Operation &op : llvm::make_range(
             before ? std::next(before->getIterator()) : block->begin(),
             d->getIterator()))
      created.push_back(&op);
    // A size that reads the value itself resolves nothing.
    auto again = v.getDefiningOp<tensor::DimOp>();
    if (!(again && again.getSource() == value)) {
      rewriter.replaceOp(d, v);
      ++replaced;
    }
    for (Operation *op : llvm::reverse(created))
      if (op->use_empty() && isOpTriviallyDead(op))
        rewriter.eraseOp(op);
  }
  return replaced;
}

unsigned mlir::fusion::resolveShapeReads(Value value) {
  IRRewriter rewriter(value.getContext());
  return resolveShapeReads(rewriter, value);
}

void mlir::fusion::resolveShapeReadsIn(Operation *root) {
  // Each round moves reads onto the producers' operands; done when a round
  // replaces nothing (reads of arguments, or of ops that size their results
  // from themselves, stay).
  for (int round = 0; round < 16; ++round) {
    SmallVector<Value> values;
    root->walk([&](tensor::DimOp d) {
      if (isResolvableShapeRead(d, d.getSource()) &&
          isa<linalg::LinalgOp>(d.getSource().getDefiningOp()) &&
          !llvm::is_contained(values, d.getSource()))
        values.push_back(d.getSource());
    });
    unsigned replaced = 0;
    for (Value v : values)
      replaced += resolveShapeReads(v);
    if (!replaced)
      return;
  }
}

/// The canonical (value, dimension) a size traces to, or a constant.
static std::pair<Value, int64_t> traceSize(Value t, int64_t d) {
  for (int depth = 0; depth < 32; ++depth) {
    Operation *def = t.getDefiningOp();
    if (!def)
      break;
    // A size an op names (tensor.empty's sizes, tensor.expand_shape's
    // output_shape): a constant, a size read off another tensor, or a value.
    std::optional<OpFoldResult> named;
    if (auto e = dyn_cast<tensor::EmptyOp>(def))
      named = e.getMixedSizes()[d];
    else if (auto x = dyn_cast<tensor::ExpandShapeOp>(def))
      named = x.getMixedOutputShape()[d];
    if (named) {
      auto v = dyn_cast<Value>(*named);
      if (!v)
        return {Value(), *getConstantIntValue(*named)};
      auto dim = v.getDefiningOp<tensor::DimOp>();
      if (!dim || !dim.getConstantIndex())
        return {v, -1};
      t = dim.getSource();
      d = *dim.getConstantIndex();
      continue;
    }
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(def)) {
      auto r = cast<OpResult>(t);
      if (r.getResultNumber() >= unsigned(dps.getNumDpsInits()))
        break;
      t = dps.getDpsInits()[r.getResultNumber()];
      continue;
    }
    if (auto c = dyn_cast<tensor::CastOp>(def)) {
      t = c.getSource();
      continue;
    }
    break;
  }
  auto type = cast<ShapedType>(t.getType());
  if (!type.isDynamicDim(d))
    return {Value(), type.getDimSize(d)};
  return {t, d};
}

bool mlir::fusion::isSizeOf(OpFoldResult size, Value tensor, int64_t d) {
  std::pair<Value, int64_t> want = traceSize(tensor, d);
  if (std::optional<int64_t> c = getConstantIntValue(size))
    return !want.first && want.second == *c;
  auto v = cast<Value>(size);
  if (auto dim = v.getDefiningOp<tensor::DimOp>();
      dim && dim.getConstantIndex())
    return traceSize(dim.getSource(), *dim.getConstantIndex()) == want;
  return want == std::pair<Value, int64_t>{v, -1};
}
