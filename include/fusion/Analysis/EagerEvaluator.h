//===- EagerEvaluator.h - evaluate tensor IR whole, any shape ---*- C++ -*-===//
//
// An interpreter that computes whole tensors, in the order of their uses,
// for IR whose shapes depend on its values: the index computations torch-mlir
// writes for `torch.nonzero` and boolean-mask indexing (cumulative sums as
// tm_tensor.scan, compaction as tm_tensor.scatter, slices whose sizes are a
// count of true elements). TensorEvaluator evaluates one element on demand
// and needs static shapes; this one materialises every value it reaches and
// takes each dynamic size from the values. Scalar semantics are
// TensorEvaluator's (applyScalarOp), so the two agree on every op.
//
// Supported: arith / math scalars, affine.apply, arith.constant,
// tensor.empty / from_elements / dim /
// extract / extract_slice / insert_slice / expand_shape / collapse_shape /
// reshape / bitcast / cast / concat, linalg structured ops on tensors
// (bodies may read other tensors with tensor.extract), and torch-mlir's
// tm_tensor.scan and tm_tensor.scatter (matched by name). Anything else or a
// budget overrun fails with a one-sentence reason; a read out of bounds
// fails too, marked as the IR's undefined behaviour.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_ANALYSIS_EAGEREVALUATOR_H
#define FUSION_ANALYSIS_EAGEREVALUATOR_H

#include "fusion/Analysis/TensorEvaluator.h"

#include "mlir/IR/Value.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::fusion {

/// The number of elements of `shape`, or -1 if a size is negative or the
/// product overflows.
int64_t numElements(ArrayRef<int64_t> shape);

/// A whole value: a tensor's shape and row-major elements, or (rank 0 and
/// `scalar`) one scalar.
struct EagerValue {
  SmallVector<int64_t> shape;
  std::vector<EvalScalar> data;
  bool scalar = false;
};

class EagerEvaluator {
public:
  /// `budget`: the most element operations one evaluation may take.
  explicit EagerEvaluator(int64_t budget = 20'000'000)
      : scalars([](Value, ArrayRef<int64_t>, EvalScalar &) { return false; }),
        budget(budget) {}

  /// Fixes the value of `v` (a leaf: the evaluator does not look through it).
  void bind(Value v, EagerValue value) {
    values[v] = std::make_unique<EagerValue>(std::move(value));
  }
  /// Forgets every computed value and binding.
  void clear() {
    values.clear();
    error.clear();
    skippedUpdates = 0;
    undefined = false;
  }

  /// The whole value of `v`, or null with getError() saying why.
  const EagerValue *evaluate(Value v);
  const std::string &getError() const { return error; }
  /// Scatter updates skipped so far because their index lay outside the
  /// original (fusion-lower-tm-tensor skips them too).
  int64_t getSkippedUpdates() const { return skippedUpdates; }
  /// Whether the last failure was a read out of bounds: behaviour the IR
  /// leaves undefined (tensor.extract, extract_slice), not a limit of the
  /// evaluator.
  bool hitUndefinedBehaviour() const { return undefined; }

private:
  TensorEvaluator scalars;
  int64_t budget;
  std::string error;
  int64_t skippedUpdates = 0;
  bool undefined = false;
  /// Each value on the heap: pointers to it stay valid while the map grows.
  llvm::DenseMap<Value, std::unique_ptr<EagerValue>> values;

  bool fail(Operation *op, const Twine &why);
  bool compute(Value v, EagerValue &out);
  bool scalarOf(Value v, EvalScalar &out);
  bool indexOf(OpFoldResult ofr, int64_t &out);
  /// affine.apply `op` of its operands' values `vals`; fails on a zero
  /// divisor.
  bool affineApply(Operation *op, ArrayRef<EvalScalar> operands,
                   EvalScalar &out);
  /// Sizes, evaluated; a negative one fails.
  bool sizesOf(Operation *op, ArrayRef<OpFoldResult> list,
               SmallVectorImpl<int64_t> &out);
  /// The offsets, sizes and strides of a slice op, evaluated (negative
  /// sizes fail).
  bool sliceOf(OffsetSizeAndStrideOpInterface op,
               SmallVectorImpl<int64_t> &offs, SmallVectorImpl<int64_t> &sizes,
               SmallVectorImpl<int64_t> &strides);
  bool structured(Operation *op, unsigned result, EagerValue &out);
  bool scan(Operation *op, unsigned result, EagerValue &out);
  bool scatter(Operation *op, EagerValue &out);
  bool applyRegion(Region &region, ArrayRef<EvalScalar> args,
                   ArrayRef<int64_t> loopIndex,
                   SmallVectorImpl<EvalScalar> &yielded);
  bool spend(int64_t n);
  bool undefinedRead(Operation *op, ArrayRef<int64_t> index,
                     ArrayRef<int64_t> shape);
};

} // namespace mlir::fusion

#endif // FUSION_ANALYSIS_EAGEREVALUATOR_H
