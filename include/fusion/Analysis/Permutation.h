//===- Permutation.h - ops that only permute a tensor's dims ---*- C++ -*-===//
//
// The one recogniser of a pure permutation of a tensor's dimensions, shared
// by the passes that look through one: fusion-fuse-act-quantize (a rowwise
// quantizer of a transposed matrix is its colwise copy; FP8 codes
// transposed) and the tile-permutation fold of fusion-raise-quantize
// (torchao's blockwise weight quantizer permutes 128x128 tiles into rows).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_ANALYSIS_PERMUTATION_H
#define FUSION_ANALYSIS_PERMUTATION_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::fusion {

/// The permutation `out[i] = in[perm[i]]` (result dimension i is input
/// dimension perm[i], as linalg.transpose's `permutation`) of an op that
/// only permutes its one tensor input: a `linalg.transpose`, or a
/// `linalg.generic` on tensors with one input and one init, parallel loops
/// only, permutation maps on both (either may be the identity: a transpose
/// is written with the permutation on the input or on the output), and a
/// body that yields its input element. The identity permutation and rank 1
/// are included (a copy). Otherwise nullopt.
std::optional<SmallVector<int64_t>> permutationOf(Operation *op);

/// The matrix that `op` transposes (its input), if it is a pure 2-D
/// transpose (permutationOf gives [1, 0]); null otherwise (also for null).
Value transposedMatrix(Operation *op);

} // namespace mlir::fusion

#endif // FUSION_ANALYSIS_PERMUTATION_H
