//===- TMTensorDialect.cpp - the tm_tensor subset
//--------------------------===//
//
// Registration and verifiers of the tm_tensor subset (TMTensorOps.td).
//
//===----------------------------------------------------------------------===//
#include "fusion/Dialect/TMTensor/TMTensorDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::fusion::tm_tensor;

#include "fusion/Dialect/TMTensor/TMTensorDialect.cpp.inc"

void TMTensorDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "fusion/Dialect/TMTensor/TMTensorOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "fusion/Dialect/TMTensor/TMTensorOps.cpp.inc"

namespace {

/// A body of two scalar arguments of `elem` yielding one value of `elem`.
LogicalResult verifyBody(Operation *op, Region &region, Type elem) {
  Block &body = region.front();
  if (body.getNumArguments() != 2 || body.getArgument(0).getType() != elem ||
      body.getArgument(1).getType() != elem)
    return op->emitOpError("expects a body of two ") << elem << " arguments";
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().size() != 1 ||
      yield.getValues()[0].getType() != elem)
    return op->emitOpError("expects the body to yield one ") << elem;
  return success();
}

/// Tensor outputs: one result of each output's type; memref outputs (a
/// bufferized op): none.
LogicalResult resultsAreOutputs(Operation *op, ValueRange outputs,
                                ValueRange results) {
  bool tensors =
      llvm::all_of(outputs.getTypes(), llvm::IsaPred<RankedTensorType>);
  bool memrefs = llvm::all_of(outputs.getTypes(), llvm::IsaPred<MemRefType>);
  if (tensors && outputs.getTypes() == results.getTypes())
    return success();
  if (memrefs && results.empty())
    return success();
  return op->emitOpError("expects ranked tensor outputs with results of "
                         "their types, or memref outputs and no results");
}

} // namespace

LogicalResult ScanOp::verify() {
  if (getInputs().size() != 1 || getOutputs().size() != 2)
    return emitOpError("expects one input and two outputs (the scanned "
                       "tensor and the accumulator)");
  auto in = cast<ShapedType>(getInputs()[0].getType());
  auto out = cast<ShapedType>(getOutputs()[0].getType());
  auto acc = cast<ShapedType>(getOutputs()[1].getType());
  if (!in.hasRank() || !out.hasRank() || !acc.hasRank())
    return emitOpError("expects ranked operands");
  int64_t dim = getDimension();
  if (in.getRank() < 1 || dim < 0 || dim >= in.getRank())
    return emitOpError("expects a dimension of the input");
  if (out.getShape() != in.getShape() ||
      out.getElementType() != in.getElementType() ||
      acc.getRank() != in.getRank() - 1 ||
      acc.getElementType() != in.getElementType())
    return emitOpError("expects an output of the input's shape and an "
                       "accumulator of one rank less, of its element type");
  for (int64_t d = 0, a = 0; d < in.getRank(); ++d) {
    if (d == dim)
      continue;
    if (acc.getDimSize(a) != in.getDimSize(d))
      return emitOpError("expects the accumulator's sizes to be the "
                         "input's without the scanned dimension");
    ++a;
  }
  if (failed(resultsAreOutputs(*this, getOutputs(), getResults())))
    return failure();
  return verifyBody(*this, getRegion(), in.getElementType());
}

LogicalResult ScatterOp::verify() {
  if (getInputs().size() != 2 || getOutputs().size() != 1)
    return emitOpError("expects two inputs (updates, indices) and one output");
  auto updates = cast<ShapedType>(getInputs()[0].getType());
  auto indices = cast<ShapedType>(getInputs()[1].getType());
  auto original = cast<ShapedType>(getOutputs()[0].getType());
  if (!updates.hasRank() || !indices.hasRank() || !original.hasRank())
    return emitOpError("expects ranked operands");
  ArrayRef<int64_t> dimMap = getDimensionMap();
  if (indices.getRank() != 2 || !isa<IntegerType>(indices.getElementType()) ||
      indices.isDynamicDim(1) ||
      indices.getDimSize(1) != static_cast<int64_t>(dimMap.size()))
    return emitOpError("expects [N, D] integer indices with D static and "
                       "equal to the dimension map's size");
  if (updates.getRank() < 1 || updates.getRank() - 1 > original.getRank())
    return emitOpError("expects updates of rank 1 to the original's rank + 1");
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t d : dimMap)
    if (d < 0 || d >= original.getRank() || !seen.insert(d).second)
      return emitOpError("expects distinct dimensions of the original in "
                         "the dimension map");
  if (original.getRank() >
      static_cast<int64_t>(dimMap.size()) + updates.getRank() - 1)
    return emitOpError("expects the indices and the update's dimensions to "
                       "cover the original's");
  if (updates.getElementType() != original.getElementType())
    return emitOpError("expects updates of the original's element type");
  if (failed(resultsAreOutputs(*this, getOutputs(), getResults())))
    return failure();
  return verifyBody(*this, getRegion(), original.getElementType());
}
