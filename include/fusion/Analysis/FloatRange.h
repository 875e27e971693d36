//===- FloatRange.h - value ranges of float tensor IR ------------*- C++ -*-===//
//
// A sound interval analysis of the float values of tensor-level IR (linalg
// on tensors, arith, math, tensor reshapes): for a value it gives an interval
// [lo, hi] that holds every number the value can take (every element, for a
// tensor) and whether it can be NaN. It lets a pass prove that a check the
// frontend wrote (torch-mlir's `cf.assert` inside a linalg.generic, e.g.
// "the scale is not zero") holds for every input, or for every finite input,
// so that the check can go when the value it reads is no longer materialised.
//
// Soundness rules: IEEE operations are monotone in each argument between
// their poles, so bounds computed at the corners with the operation's own
// rounding (round to nearest even in the operation's type) bound every
// result; math functions through a library are widened by a few units in
// the last place; anything not modelled is the whole line plus NaN.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_ANALYSIS_FLOATRANGE_H
#define FUSION_ANALYSIS_FLOATRANGE_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>
#include <string>

namespace mlir::fusion {

/// The numbers a value can take, [lo, hi] (when `number`), and whether it
/// can be NaN. Infinities are the ends of the line.
struct FloatRange {
  double lo = 0, hi = 0;
  bool number = false; ///< Some non-NaN value is possible.
  bool nan = false;    ///< NaN is possible.

  static FloatRange top();
  static FloatRange point(double v);
  static FloatRange interval(double lo, double hi, bool nan = false);
  FloatRange join(const FloatRange &o) const;
  bool operator==(const FloatRange &o) const;
  bool contains(double v) const { return number && lo <= v && v <= hi; }
  std::string str() const;
};

class FloatRangeAnalysis {
public:
  /// With `finiteArguments`, the function's float arguments hold finite
  /// values only (the pipeline's finite-inputs / frontend=torch contract);
  /// otherwise any value, NaN included.
  explicit FloatRangeAnalysis(bool finiteArguments)
      : finiteArguments(finiteArguments) {}

  /// The range of a float scalar, or of every element of a float tensor.
  FloatRange range(Value v);
  /// Whether an i1 value is always true / always false; nullopt: unknown.
  std::optional<bool> condition(Value v);
  /// Whether the condition of `assertOp` (a cf.assert, possibly inside a
  /// linalg.generic, linalg.reduce or linalg.map body) always holds.
  bool alwaysHolds(Operation *assertOp);

private:
  FloatRange compute(Value v);
  FloatRange computeOp(Operation *op, unsigned resultIndex);
  FloatRange genericResult(Operation *generic, unsigned resultIndex);
  /// Binds the block arguments of the body of a linalg.generic,
  /// linalg.reduce or linalg.map to the ranges of its operands (inits: the
  /// init joined with the results, which covers every partial reduction).
  void bindBody(Operation *generic);
  /// The ranges of the yielded values with the body bound as now.
  SmallVector<FloatRange> yields(Operation *generic);
  void forgetBody(Operation *generic);
  FloatRange select(Operation *op);

  bool finiteArguments;
  llvm::DenseMap<Value, FloatRange> cache;
  llvm::SmallPtrSet<void *, 16> inProgress;
};

} // namespace mlir::fusion

#endif // FUSION_ANALYSIS_FLOATRANGE_H
