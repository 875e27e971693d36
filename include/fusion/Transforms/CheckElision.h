//===- CheckElision.h - drop checks proven to hold --------------*- C++ -*-===//
//
// The checks frontends write on values a fusion no longer needs
// (torch-mlir's cf.assert "unimplemented: tensor with zero element" on a
// quantizer's amax) keep those values, and the tensor they are computed
// from, alive. These helpers find such checks and drop them where
// FloatRangeAnalysis proves that they never fail. Used by
// fusion-raise-quantize (the raised region's leftover checks) and
// fusion-fuse-act-quantize (checks on the activation).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_TRANSFORMS_CHECKELISION_H
#define FUSION_TRANSFORMS_CHECKELISION_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

#include <string>

namespace mlir::fusion {

/// Erases `ops` (those without uses, not in `erased` yet; nulls skipped) and
/// then every producer that became trivially dead, adding each to `erased`,
/// through `rewriter` (its listener hears each erasure).
void eraseWithDeadProducers(RewriterBase &rewriter, ArrayRef<Operation *> ops,
                            DenseSet<Operation *> &erased);
/// The same when the caller keeps no record of what went; without a
/// rewriter of the caller's, through an IRRewriter.
void eraseWithDeadProducers(RewriterBase &rewriter, ArrayRef<Operation *> ops);
void eraseWithDeadProducers(ArrayRef<Operation *> ops);

/// Whether everything computed from `op` ends in checks without results
/// (torch-mlir's cf.assert inside a result-less linalg.generic), at least
/// one of them.
bool feedsChecksOnly(Operation *op);

/// `readers` (each feedsChecksOnly): when every cf.assert in what is
/// computed from them is proven to hold (FloatRangeAnalysis, for finite
/// function arguments with `finite`), erases those asserts and the
/// computations that then go dead, and returns how many asserts went. Else
/// returns 0 with `why` naming the first check that is not proven (or the op
/// that is more than a check), and changes nothing.
unsigned dropProvenChecks(ArrayRef<Operation *> readers, bool finite,
                          std::string &why);

/// dropProvenChecks in two steps, for a pass that decides before it
/// rewrites: the proof (the asserts in what is computed from `readers` and
/// those ops, when every assert holds; else nullopt with `why`), which
/// changes nothing, then the erasure of what it found.
struct ProvenChecks {
  SmallVector<Operation *> asserts;
  llvm::SetVector<Operation *> reach;
};
std::optional<ProvenChecks> proveChecks(ArrayRef<Operation *> readers,
                                        bool finite, std::string &why);
void eraseProvenChecks(RewriterBase &rewriter, const ProvenChecks &proven);

} // namespace mlir::fusion

#endif // FUSION_TRANSFORMS_CHECKELISION_H
