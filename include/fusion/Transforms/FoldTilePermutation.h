//===- FoldTilePermutation.h - 2D FP8 tiles through their permutation -*- C++ -*-===//
//
// A 1 x (R*C) FP8 block quantizer whose rows are the R x C tiles of a matrix
// permuted into rows, and whose codes are permuted back to the matrix's
// layout (torchao's blockwise FP8 weight quantizer), becomes one quantizer
// with block = R x C on the matrix (lib/Transforms/FoldTilePermutation.cpp;
// fusion-raise-quantize runs it on every fusion.quantize).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_TRANSFORMS_FOLDTILEPERMUTATION_H
#define FUSION_TRANSFORMS_FOLDTILEPERMUTATION_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include <cstdint>
#include <string>

namespace mlir::fusion {

struct TileFoldResult {
  /// The quantizer reads rows of a permuted matrix (a fold was tried).
  bool candidate = false;
  /// Folded: the quantizer and the chains around it were replaced.
  bool folded = false;
  int64_t blockRows = 0, blockCols = 0;
  /// Reshapes and permutations removed.
  int64_t removed = 0;
  /// Why a candidate was not folded.
  std::string why;
};

/// Folds `q` (erased when folded) where it is a permuted tile quantizer.
TileFoldResult foldTilePermutation(QuantizeOp q);

} // namespace mlir::fusion

#endif // FUSION_TRANSFORMS_FOLDTILEPERMUTATION_H
