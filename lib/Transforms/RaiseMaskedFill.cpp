//===- RaiseMaskedFill.cpp - index_put by a mask becomes a select ---------===//
//
// Implements `fusion-raise-masked-fill` (see Passes.td). torch-mlir writes
// `x[mask] = v` (aten.index_put with a boolean index; torchao's EVEN scale
// mode restores NaN amaxes so) as torch.nonzero's index computation (a
// cumulative sum, a compacting scatter, slices sized by the count of true
// elements) feeding a tm_tensor.scatter that overwrites x at those indices.
// The whole is select(mask, v, x). This pass proves that of each overwriting
// scatter semantically: with the mask and x as free inputs, the eager
// evaluator computes the scatter's result on probe masks (none, all, the
// first, the last, alternating, two random densities) and random x, and the
// result must equal select(mask, v, x) for one constant v on every probe.
// Then the scatter is replaced by a linalg.generic select, and the index
// computation, now dead, is erased. A program without the loops is smaller,
// runs without a serial scan, and its quantizer can be raised
// (fusion-raise-quantize evaluates the select; it cannot evaluate loops).
//
//===----------------------------------------------------------------------===//
#include "fusion/Analysis/EagerEvaluator.h"
#include "fusion/Transforms/Declines.h"
#include "fusion/Transforms/Passes.h"
#include "fusion/Transforms/RemarkLock.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Remarks.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <deque>
#include <random>
#include <set>

namespace mlir::fusion {
#define GEN_PASS_DEF_RAISEMASKEDFILL
#include "fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

constexpr StringLiteral kScatter = "tm_tensor.scatter";
constexpr StringLiteral kScan = "tm_tensor.scan";

/// Largest mask the check evaluates: every probe computes the index
/// computation over the whole mask (about 2.3 s for the seven probes of a
/// 1024 x 128 mask, torchao's EVEN mode on 1024 x 4096, on this machine).
constexpr int64_t kMaskLimit = int64_t(1) << 18;

/// Whether `op` is a scatter whose body yields the update: an overwrite.
bool isOverwritingScatter(Operation *op) {
  if (op->getName().getStringRef() != kScatter || op->getNumOperands() != 3 ||
      op->getNumResults() != 1 || op->getNumRegions() != 1 ||
      !op->getRegion(0).hasOneBlock())
    return false;
  Block &body = op->getRegion(0).front();
  return body.getNumArguments() == 2 &&
         body.getTerminator()->getNumOperands() == 1 &&
         body.getTerminator()->getOperand(0) == body.getArgument(0);
}

/// Values `root` depends on (operands, and values that region bodies use
/// from above), nearest first.
void backwardValues(Value root, llvm::SetVector<Value> &seen) {
  std::deque<Value> work{root};
  while (!work.empty()) {
    Value v = work.front();
    work.pop_front();
    if (!seen.insert(v))
      continue;
    Operation *op = v.getDefiningOp();
    if (!op)
      continue;
    llvm::append_range(work, op->getOperands());
    op->walk([&](Operation *inner) {
      if (inner == op)
        return;
      for (Value operand : inner->getOperands())
        if (!op->isAncestor(operand.getParentBlock()->getParentOp()))
          work.push_back(operand);
    });
  }
}

/// One probe mask of `n` elements.
std::vector<bool> probeMask(unsigned kind, int64_t n) {
  std::vector<bool> m(n, false);
  std::mt19937 rng(7727 + kind);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int64_t i = 0; i < n; ++i) {
    switch (kind) {
    case 1:
      m[i] = true;
      break;
    case 2:
      m[i] = i == 0;
      break;
    case 3:
      m[i] = i == n - 1;
      break;
    case 4:
      m[i] = i % 2 == 0;
      break;
    case 5:
      m[i] = u(rng) < 0.37;
      break;
    case 6:
      m[i] = u(rng) < 0.63;
      break;
    default:
      break;
    }
  }
  return m;
}
constexpr unsigned kNumProbes = 7;
const char *const kProbeNames[kNumProbes] = {
    "no element",         "every element",       "the first element",
    "the last element",   "every other element", "37% of the elements",
    "63% of the elements"};

struct Proof {
  Value mask;
  uint64_t fill = 0;
  /// Probes on which the IR reads out of bounds (its behaviour undefined:
  /// any result refines it).
  std::set<unsigned> undefinedProbes;
};

/// Probes on which the IR may be undefined; more, and the check would rest
/// on too few.
constexpr size_t kMaxUndefinedProbes = 2;

/// Largest argument the dynamic-size check binds (elements).
constexpr int64_t kMaxBoundArgument = int64_t(1) << 22;

/// Binds every ranked tensor argument of `func` to a value of its shape with
/// each dynamic size `dyn` and poison elements: the index computation reads
/// their sizes (`tensor.dim`), not their elements.
void bindArgumentShapes(EagerEvaluator &eval, func::FuncOp func, int64_t dyn) {
  for (BlockArgument a : func.getArguments()) {
    auto t = dyn_cast<RankedTensorType>(a.getType());
    if (!t)
      continue;
    EagerValue v;
    for (int64_t s : t.getShape())
      v.shape.push_back(ShapedType::isDynamic(s) ? dyn : s);
    // Large static arguments (weights) stay unbound: an index computation
    // reaching them is not evaluable (a decline), and nothing is allocated.
    // (An element count that overflows, -1, is past it too.)
    const int64_t n = numElements(v.shape);
    if (n < 0 || n > kMaxBoundArgument)
      continue;
    v.data.assign(n, EvalScalar{0, true});
    eval.bind(a, std::move(v));
  }
}

/// prove() at one shape of the mask and the tensor written into; `dyn`: the
/// size of the function arguments' dynamic dimensions, if any.
FailureOr<Proof> proveAt(Operation *scatter, Value mask, func::FuncOp func,
                         ArrayRef<int64_t> shape, std::optional<int64_t> dyn,
                         std::string &why) {
  Value original = scatter->getOperand(2);
  auto type = cast<RankedTensorType>(original.getType());
  unsigned width = type.getElementTypeBitWidth();
  uint64_t widthMask = width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  if (n > kMaskLimit) {
    why = llvm::formatv("the tensor written into has {0} elements; the "
                        "check evaluates masks of up to {1}",
                        n, kMaskLimit);
    return failure();
  }
  EagerEvaluator eval(int64_t(kNumProbes) * 200 * std::max<int64_t>(n, 64));
  std::mt19937_64 rng(1299709);
  std::optional<uint64_t> fill;
  std::set<unsigned> undefinedProbes;
  std::string firstUndefined;
  for (unsigned kind = 0; kind < kNumProbes; ++kind) {
    std::vector<bool> m = probeMask(kind, n);
    EagerValue mv, xv;
    mv.shape.assign(shape.begin(), shape.end());
    xv.shape = mv.shape;
    for (int64_t i = 0; i < n; ++i) {
      mv.data.push_back(EvalScalar{m[i] ? 1u : 0u, false});
      xv.data.push_back(EvalScalar{rng() & widthMask, false});
    }
    eval.clear();
    if (dyn)
      bindArgumentShapes(eval, func, *dyn);
    eval.bind(mask, mv);
    eval.bind(original, xv);
    const EagerValue *r = eval.evaluate(scatter->getResult(0));
    if (!r && eval.hitUndefinedBehaviour()) {
      // Torch-mlir's broadcast of the index list takes max(count, 1) rows:
      // with no true element it reads one from an empty tensor.
      if (undefinedProbes.empty())
        firstUndefined = eval.getError();
      undefinedProbes.insert(kind);
      continue;
    }
    if (!r) {
      why = "not evaluable: " + eval.getError();
      return failure();
    }
    if (eval.getSkippedUpdates() != 0) {
      why = llvm::formatv("with {0} true, {1} updates have an index outside "
                          "the tensor",
                          kProbeNames[kind], eval.getSkippedUpdates());
      return failure();
    }
    for (int64_t i = 0; i < n; ++i) {
      const EvalScalar &e = r->data[i];
      if (!m[i]) {
        if (e.poison || e.bits != xv.data[i].bits) {
          why = llvm::formatv("with {0} true, element {1} (mask false) is "
                              "not kept",
                              kProbeNames[kind], i);
          return failure();
        }
        continue;
      }
      if (!fill && !e.poison)
        fill = e.bits;
      if (e.poison || e.bits != *fill) {
        why = llvm::formatv("with {0} true, element {1} (mask true) is not "
                            "the one fill value",
                            kProbeNames[kind], i);
        return failure();
      }
    }
  }
  if (undefinedProbes.size() > kMaxUndefinedProbes) {
    why = llvm::formatv("not evaluable: the IR reads out of bounds "
                        "(undefined) on {0} of the {1} probes (first: {2})",
                        undefinedProbes.size(), kNumProbes, firstUndefined);
    return failure();
  }
  if (!fill) {
    why = "no probe wrote a value";
    return failure();
  }
  return Proof{mask, *fill, std::move(undefinedProbes)};
}

/// The dynamic sizes the check fixes every dynamic size of the function's
/// arguments to, in turn, where the tensor written into has any.
constexpr int64_t kDynamicSizes[] = {3, 37};

/// Checks that `scatter` computes select(mask, fill, original) for one
/// constant fill, with `mask` and the original free, at the sizes of the
/// program or, where they are dynamic, at each of kDynamicSizes. Returns
/// the reason of a failure in `why`.
FailureOr<Proof> prove(Operation *scatter, Value mask, func::FuncOp func,
                       std::string &why) {
  Value original = scatter->getOperand(2);
  auto type = cast<RankedTensorType>(original.getType());
  if (type.hasStaticShape())
    return proveAt(scatter, mask, func, type.getShape(), std::nullopt, why);
  std::optional<Proof> proof;
  for (int64_t dyn : kDynamicSizes) {
    // The sizes of the mask and of the tensor written into at these
    // argument sizes: evaluated from the program (their elements poison).
    EagerEvaluator sizes(int64_t(1) << 24);
    bindArgumentShapes(sizes, func, dyn);
    const EagerValue *m = sizes.evaluate(mask);
    const EagerValue *x = m ? sizes.evaluate(original) : nullptr;
    if (!x) {
      why = "not evaluable: the sizes of the mask and the tensor: " +
            sizes.getError();
      return failure();
    }
    if (m->shape != x->shape) {
      why = llvm::formatv("with each dynamic size {0}, the mask and the "
                          "tensor written into differ in shape",
                          dyn);
      return failure();
    }
    SmallVector<int64_t> shape(x->shape);
    FailureOr<Proof> p = proveAt(scatter, mask, func, shape, dyn, why);
    if (failed(p) || (proof && proof->fill != p->fill)) {
      if (succeeded(p))
        why = "the fill value depends on the sizes";
      return failure();
    }
    if (proof)
      p->undefinedProbes.insert(proof->undefinedProbes.begin(),
                                proof->undefinedProbes.end());
    if (p->undefinedProbes.size() > kMaxUndefinedProbes) {
      why = llvm::formatv("not evaluable: the IR reads out of bounds "
                          "(undefined) on {0} of the {1} probes over the "
                          "dynamic sizes",
                          p->undefinedProbes.size(), kNumProbes);
      return failure();
    }
    proof = *p;
  }
  return *proof;
}

/// The constant of `type` with raw bits `bits`.
TypedAttr constantOf(Type type, uint64_t bits) {
  unsigned width = type.getIntOrFloatBitWidth();
  llvm::APInt raw(width, bits);
  if (auto ft = dyn_cast<FloatType>(type))
    return FloatAttr::get(ft, llvm::APFloat(ft.getFloatSemantics(), raw));
  return IntegerAttr::get(type, raw);
}

/// select(mask, fill, original) as one elementwise linalg.generic.
Value buildSelect(OpBuilder &b, Location loc, Value mask, Value original,
                  uint64_t fill) {
  auto type = cast<RankedTensorType>(original.getType());
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, original), type.getElementType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  Value c = arith::ConstantOp::create(b, loc,
                                      constantOf(type.getElementType(), fill));
  auto generic = linalg::GenericOp::create(
      b, loc, type, ValueRange{mask, original}, ValueRange{init},
      ArrayRef<AffineMap>{id, id, id}, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value s = arith::SelectOp::create(nb, l, args[0], c, args[1]);
        linalg::YieldOp::create(nb, l, s);
      });
  return generic.getResult(0);
}

/// Erases `op`'s dead producers (pure ops and tm_tensor ops, which compute
/// tensors only), transitively.
void eraseDeadProducers(SmallVector<Operation *> work) {
  llvm::DenseSet<Operation *> erased;
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!op || erased.contains(op) || !op->use_empty())
      continue;
    // Only ops that compute values: a bufferized (memref) tm_tensor op has
    // no results and writes its operands.
    StringRef name = op->getName().getStringRef();
    if (op->getNumResults() == 0 ||
        (name != kScan && name != kScatter && !isPure(op)))
      continue;
    SmallVector<Operation *> producers;
    for (Value v : op->getOperands())
      producers.push_back(v.getDefiningOp());
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (Operation *def = v.getDefiningOp(); def && !op->isAncestor(def))
          producers.push_back(def);
    });
    op->erase();
    erased.insert(op);
    llvm::append_range(work, producers);
  }
}

struct RaiseMaskedFillPass
    : public fusion::impl::RaiseMaskedFillBase<RaiseMaskedFillPass> {
  using RaiseMaskedFillBase::RaiseMaskedFillBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> scatters;
    func.walk([&](Operation *op) {
      if (isOverwritingScatter(op))
        scatters.push_back(op);
    });
    bool rewrote = false;
    for (Operation *op : scatters) {
      Location loc = op->getLoc();
      auto opts = remark::RemarkOpts::name("RaiseMaskedFill")
                      .category("fusion")
                      .function(func.getSymName());
      std::string why;
      DeclineRule rule = DeclineRule::None;
      FailureOr<Proof> proof = failure();
      auto type = dyn_cast<RankedTensorType>(op->getOperand(2).getType());
      if (!type || op->getResult(0).getType() != type) {
        rule = DeclineRule::MaskedFillUnsupportedShape;
        why = "the tensor written into is not a ranked tensor of the "
              "result's type";
      } else if (!type.getElementType().isIntOrFloat() ||
                 type.getElementType().getIntOrFloatBitWidth() > 64) {
        rule = DeclineRule::MaskedFillUnsupportedShape;
        why = "the tensor written into has elements that are neither "
              "integers nor floats of at most 64 bits";
      } else if (type.hasStaticShape() && type.getNumElements() > kMaskLimit) {
        rule = DeclineRule::MaskedFillUnsupportedShape;
        why = llvm::formatv("the tensor written into has {0} elements; the "
                            "check evaluates masks of up to {1}",
                            type.getNumElements(), kMaskLimit);
      } else {
        // The mask: a boolean tensor of the original's shape that the
        // indices derive from (the nearest first).
        llvm::SetVector<Value> slice;
        backwardValues(op->getOperand(1), slice);
        SmallVector<Value> masks;
        for (Value v : slice) {
          auto t = dyn_cast<RankedTensorType>(v.getType());
          if (t && t.getShape() == type.getShape() &&
              t.getElementType().isInteger(1) && v != op->getOperand(2) &&
              !v.getDefiningOp<tensor::EmptyOp>())
            masks.push_back(v);
        }
        if (masks.empty()) {
          rule = DeclineRule::NoMask;
          why = "the indices do not derive from a boolean tensor of the "
                "shape written into";
        }
        // The reason of the nearest candidate is the one reported.
        std::string candidateWhy;
        for (Value m : masks) {
          proof = prove(op, m, func, candidateWhy);
          if (succeeded(proof))
            break;
          if (why.empty())
            why = candidateWhy;
        }
        if (!masks.empty() && failed(proof))
          rule =
              why.rfind("not evaluable", 0) == 0
                  ? DeclineRule::MaskedFillNotEvaluable
              : why.find("elements; the check evaluates") != std::string::npos
                  ? DeclineRule::MaskedFillUnsupportedShape
                  : DeclineRule::NotAMaskedFill;
      }
      std::lock_guard<std::mutex> lock(fusion::getRemarkMutex());
      if (failed(proof)) {
        remark::missed(loc, opts)
            << remark::reason("{0}", declineTag(rule).str())
            << remark::add("this overwriting tm_tensor.scatter stays: {0}",
                           why);
        continue;
      }
      OpBuilder b(op);
      Value sel =
          buildSelect(b, loc, proof->mask, op->getOperand(2), proof->fill);
      op->getResult(0).replaceAllUsesWith(sel);
      SmallVector<Operation *> producers;
      for (Value v : op->getOperands())
        producers.push_back(v.getDefiningOp());
      op->erase();
      eraseDeadProducers(producers);
      rewrote = true;
      std::string undefinedNote;
      for (unsigned k : proof->undefinedProbes)
        undefinedNote +=
            (undefinedNote.empty() ? "" : ", ") + std::string(kProbeNames[k]);
      if (!undefinedNote.empty())
        undefinedNote = "; with " + undefinedNote +
                        " true the IR reads out of bounds (undefined), the "
                        "select keeps the tensor there";
      remark::passed(loc, opts) << remark::add(
          "an index_put by a mask (tm_tensor.scatter at the mask's true "
          "elements) became select(mask, constant, tensor){0}{1}",
          type.hasStaticShape() ? ""
                                : " (dynamic sizes: checked with each "
                                  "dynamic size of the arguments fixed to "
                                  "3 and to 37)",
          undefinedNote);
    }
    if (!rewrote)
      return;
    // What is left of the index computations: the frontend's checks of the
    // count (cf.assert "negative values not allowed in new dimensions" on
    // max(count, 1) >= 0), which integer range analysis proves; erased with
    // what only they read.
    OpPassManager ranges(func::FuncOp::getOperationName());
    ranges.addPass(arith::createIntRangeOptimizationsPass());
    if (failed(runPipeline(ranges, func)))
      return signalPassFailure();
    SmallVector<cf::AssertOp> proven;
    func.walk([&](cf::AssertOp a) {
      if (matchPattern(a.getArg(), m_One()))
        proven.push_back(a);
    });
    for (cf::AssertOp a : proven) {
      Operation *cond = a.getArg().getDefiningOp();
      a.erase();
      eraseDeadProducers({cond});
    }
    // The range pass drops dead pure ops itself; tm_tensor ops that only
    // they read are dead now too.
    SmallVector<Operation *> tm;
    func.walk([&](Operation *op) {
      StringRef name = op->getName().getStringRef();
      if (name == kScan || name == kScatter)
        tm.push_back(op);
    });
    eraseDeadProducers(tm);
  }
};

} // namespace
