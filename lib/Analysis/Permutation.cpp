//===- Permutation.cpp - ops that only permute a tensor's dims ------------===//
//
// See fusion/Analysis/Permutation.h.
//
//===----------------------------------------------------------------------===//
#include "fusion/Analysis/Permutation.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

std::optional<SmallVector<int64_t>> mlir::fusion::permutationOf(Operation *op) {
  if (auto t = dyn_cast_or_null<linalg::TransposeOp>(op))
    return t.hasPureTensorSemantics()
               ? std::optional(SmallVector<int64_t>(t.getPermutation()))
               : std::nullopt;
  auto g = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumReductionLoops() != 0 || !g.hasPureTensorSemantics())
    return std::nullopt;
  Block &b = g.getRegion().front();
  auto y = dyn_cast<linalg::YieldOp>(b.getTerminator());
  if (b.getOperations().size() != 1 || !y || y.getNumOperands() != 1 ||
      y.getOperand(0) != b.getArgument(0))
    return std::nullopt;
  AffineMap inMap = g.getIndexingMapsArray()[0];
  AffineMap outMap = g.getIndexingMapsArray()[1];
  if (!inMap.isPermutation() || !outMap.isPermutation())
    return std::nullopt;
  // Result dim i is loop dim outMap(i); input dim k is loop dim inMap(k):
  // out[i] = in[k] where inMap(k) = outMap(i).
  SmallVector<int64_t> inputDimOfLoop(inMap.getNumResults());
  for (unsigned k = 0; k < inMap.getNumResults(); ++k)
    inputDimOfLoop[inMap.getDimPosition(k)] = k;
  SmallVector<int64_t> perm(outMap.getNumResults());
  for (unsigned i = 0; i < outMap.getNumResults(); ++i)
    perm[i] = inputDimOfLoop[outMap.getDimPosition(i)];
  return perm;
}

Value mlir::fusion::transposedMatrix(Operation *op) {
  std::optional<SmallVector<int64_t>> perm = permutationOf(op);
  if (!perm || *perm != ArrayRef<int64_t>{1, 0})
    return Value();
  return op->getOperand(0);
}
