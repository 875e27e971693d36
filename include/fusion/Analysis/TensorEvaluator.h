//===- TensorEvaluator.h - evaluate tensor IR element by element -*- C++ -*-===//
//
// An interpreter for the tensor-level IR that frontends emit (linalg on
// tensors, arith, math, tensor reshapes and slices), evaluated on demand: the
// element of a value at one index is computed from exactly the elements it
// depends on. It lets a pass compare what a region of IR computes with what
// the runtime's reference computes, on probe inputs, without running the
// pipeline and whatever the static sizes are (a few rows of a
// [16384, 7168] quantizer cost a few rows).
//
// Semantics follow the IR as the fusion pipeline lowers it: f32 / f64
// arithmetic in IEEE float / double, bf16 / f16 arithmetic computed in f32
// and rounded once, conversions through APFloat (round to nearest even,
// overflow to Inf, or to NaN for types without Inf), math functions through
// the C library. Values that the IR leaves undefined (fptosi of NaN or out of
// range, shifts past the width, integer division by zero) are poison: a
// poison that reaches a compared element makes the comparison fail.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_ANALYSIS_TENSOREVALUATOR_H
#define FUSION_ANALYSIS_TENSOREVALUATOR_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace mlir::fusion {

/// One element: the raw bits of its type (a float type's encoding, an
/// integer zero-extended, an index as int64), or poison.
struct EvalScalar {
  uint64_t bits = 0;
  bool poison = false;
};

/// Evaluates elements of tensor values (static shapes) and scalars.
class TensorEvaluator {
public:
  /// Supplies the elements of the leaves: values that the evaluator must not
  /// look through (the input of the region under test). Returns false for a
  /// value that is not a leaf.
  using LeafFn =
      std::function<bool(Value leaf, ArrayRef<int64_t> index, EvalScalar &out)>;

  explicit TensorEvaluator(LeafFn leaves, int64_t stepBudget = 50'000'000)
      : leaves(std::move(leaves)), budget(stepBudget) {}

  /// The element of `v` (a ranked tensor of static shape) at `index`.
  FailureOr<EvalScalar> element(Value v, ArrayRef<int64_t> index);
  /// The value of a scalar `v` (int, index or float typed).
  FailureOr<EvalScalar> scalar(Value v);

  /// Evaluate arith.truncf to an 8-bit float type as a saturating cast:
  /// finite values past the type's maximum become the maximum.
  void setSaturatingFloat8Casts(bool on) { saturatingF8 = on; }
  /// Evaluate fptosi / fptoui of a finite value in the i32 range that does
  /// not fit the result type as truncation toward zero to i32, then to the
  /// result's width (x86's cvttss2si; torch's `.to(torch.uint8)`, which
  /// torch-mlir emits as fptosi to i8). Otherwise such a result is poison.
  void setWrappingIntCasts(bool on) { wrappingInt = on; }

  /// Applies one scalar op (arith, math, linalg.index at `loopIndex`) to the
  /// values of its operands, with the semantics `element` gives it inside a
  /// structured body (for interpreters of other ops' bodies).
  LogicalResult applyScalarOp(Operation *op, ArrayRef<EvalScalar> operands,
                              ArrayRef<int64_t> loopIndex, EvalScalar &result) {
    error.clear();
    return evalScalarOp(op, operands, loopIndex, result);
  }

  /// Forgets every cached element (call when the leaves change).
  void clear() { cache.clear(); }

  /// Why the last call failed: the op or the condition, in one sentence.
  const std::string &getError() const { return error; }

  /// The element at row-major `linear` of a constant attribute (a float or
  /// integer scalar, a splat or a dense tensor) as raw bits.
  static std::optional<uint64_t> constantElement(Attribute attr,
                                                 int64_t linear);

  /// The value of an affine expression without symbols at `dims`.
  static int64_t affineValue(AffineExpr e, ArrayRef<int64_t> dims);

  /// Row-major linear index of `index` in `shape`, and back.
  static int64_t linearize(ArrayRef<int64_t> index, ArrayRef<int64_t> shape);
  static void delinearize(int64_t linear, ArrayRef<int64_t> shape,
                          SmallVectorImpl<int64_t> &index);

private:
  LeafFn leaves;
  int64_t budget;
  bool saturatingF8 = false;
  bool wrappingInt = false;
  std::string error;
  /// Elements of reduction results (and of every result of a multi-result
  /// op), keyed by (result, linear index).
  DenseMap<std::pair<void *, int64_t>, EvalScalar> cache;

  /// What evalStructured reads of a structured op, read from the op once
  /// (its maps and operands are the same for every element it evaluates).
  struct Structured {
    SmallVector<int64_t> ranges;
    SmallVector<unsigned> reductionDims;
    /// Per init: its indexing map, whether the body reads it.
    SmallVector<AffineMap> initMaps;
    SmallVector<bool> initRead;
    /// Per output result: loop dimension of each index of the output map,
    /// or why that result cannot be evaluated.
    SmallVector<SmallVector<unsigned>> outDims;
    SmallVector<std::string> outErrors;
    /// Per block argument: the operand it reads (null: an init, see
    /// `initOf`), its map (tensors) or none (a scalar operand).
    struct Arg {
      Value operand;
      AffineMap map;
      int init = -1; ///< index of the init it reads, or -1
      bool used = false;
    };
    SmallVector<Arg> args;
    /// The body as a list of slots: block arguments first, then one per op
    /// result. Each op reads its operands from slots (index >= 0) or, for
    /// values defined outside the body, through scalar() (`outer`).
    struct BodyOp {
      Operation *op;
      SmallVector<int, 4> operands; ///< slot, or -1 - index into `outer`
    };
    SmallVector<BodyOp> bodyOps;
    SmallVector<Value> outer;
    SmallVector<int> yields; ///< slot, or -1 - index into `outer`
    std::string error; ///< why the op cannot be evaluated, or empty
  };
  DenseMap<Operation *, std::unique_ptr<Structured>> structured;
  const Structured &structureOf(Operation *op);

  LogicalResult fail(Operation *op, const Twine &why);
  FailureOr<EvalScalar> evalElement(Value v, ArrayRef<int64_t> index);
  LogicalResult evalStructured(Operation *op, unsigned resultIndex,
                               ArrayRef<int64_t> index,
                               SmallVectorImpl<EvalScalar> &results);
  LogicalResult evalBody(const Structured &st, ArrayRef<int64_t> loopIndex,
                         ArrayRef<EvalScalar> args,
                         SmallVectorImpl<EvalScalar> &yielded);
  /// `in` rounded to the float type `t` as arith.truncf does: to nearest
  /// even, and (saturating 8-bit casts) finite values past an 8-bit type's
  /// range to its largest value.
  uint64_t truncTo(Type t, const llvm::APFloat &in) const;
  LogicalResult evalScalarOp(Operation *op, ArrayRef<EvalScalar> operands,
                             ArrayRef<int64_t> loopIndex, EvalScalar &result);
};

} // namespace mlir::fusion

#endif // FUSION_ANALYSIS_TENSOREVALUATOR_H
