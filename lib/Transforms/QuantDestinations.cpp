//===- QuantDestinations.cpp - tensor.empty outs of a quantizer -----------===//
//
// See fusion/Transforms/QuantDestinations.h.
//
//===----------------------------------------------------------------------===//
#include "fusion/Transforms/QuantDestinations.h"

#include "fusion/Dialect/Fusion/IR/QuantShapes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fusion;

OpFoldResult ValueDims::apply(AffineExpr e, OpFoldResult d) {
  return affine::makeComposedFoldedAffineApply(b, loc, e, {d});
}

SmallVector<Value> mlir::fusion::createQuantDestinations(
    OpBuilder &b, Location loc, QuantSchemeAttr scheme,
    SmallVector<OpFoldResult> dataShape, unsigned halves, bool dbias,
    TypeRange types) {
  ValueDims alg{b, loc};
  auto shapes = computeQuantResultShapes(alg, scheme, ArrayRef(dataShape),
                                         halves, dbias);
  SmallVector<Value> outs;
  for (auto [type, shape] : llvm::zip_equal(types, shapes)) {
    auto t = cast<RankedTensorType>(type);
    if (t.getElementType().isInteger(8))
      shape.back() = alg.divExact(shape.back(), 2);
    SmallVector<Value> dynSizes;
    for (auto [d, size] : llvm::enumerate(shape))
      if (t.isDynamicDim(d))
        dynSizes.push_back(getValueOrCreateConstantIndexOp(b, loc, size));
    outs.push_back(tensor::EmptyOp::create(b, loc, t, dynSizes));
  }
  return outs;
}
