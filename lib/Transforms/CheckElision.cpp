//===- CheckElision.cpp - drop checks proven to hold ----------------------===//
//
// See CheckElision.h.
//
//===----------------------------------------------------------------------===//
#include "fusion/Transforms/CheckElision.h"

#include "fusion/Analysis/FloatRange.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::fusion;

void mlir::fusion::eraseWithDeadProducers(RewriterBase &rewriter,
                                          ArrayRef<Operation *> ops,
                                          DenseSet<Operation *> &erased) {
  SmallVector<Operation *> worklist;
  auto erase = [&](Operation *op) {
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        worklist.push_back(def);
    // Constants captured by a generic's body die with it.
    visitUsedValuesDefinedAbove(op->getRegions(), [&](OpOperand *use) {
      if (Operation *def = use->get().getDefiningOp())
        worklist.push_back(def);
    });
    erased.insert(op);
    rewriter.eraseOp(op);
  };
  for (Operation *op : ops)
    if (op && !erased.contains(op) && op->use_empty())
      erase(op);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!erased.contains(op) && op->use_empty() && isOpTriviallyDead(op))
      erase(op);
  }
}

void mlir::fusion::eraseWithDeadProducers(RewriterBase &rewriter,
                                          ArrayRef<Operation *> ops) {
  DenseSet<Operation *> erased;
  eraseWithDeadProducers(rewriter, ops, erased);
}

void mlir::fusion::eraseWithDeadProducers(ArrayRef<Operation *> ops) {
  for (Operation *op : ops)
    if (op) {
      IRRewriter rewriter(op->getContext());
      return eraseWithDeadProducers(rewriter, ops);
    }
}

bool mlir::fusion::feedsChecksOnly(Operation *op) {
  llvm::SmallPtrSet<Operation *, 16> seen;
  SmallVector<Operation *> work{op};
  bool check = false;
  while (!work.empty()) {
    Operation *o = work.pop_back_val();
    if (!seen.insert(o).second)
      continue;
    if (seen.size() > 256 || isa<func::ReturnOp>(o))
      return false;
    if (o->getNumResults() == 0) {
      check = true;
      continue;
    }
    for (Value r : o->getResults())
      for (Operation *u : r.getUsers())
        work.push_back(u);
  }
  return check;
}

/// Whether `op` has no effect but the cf.assert ops it is or holds.
static bool effectFreeBesidesAsserts(Operation *op) {
  if (isa<cf::AssertOp>(op) || isMemoryEffectFree(op))
    return true;
  if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
    return false;
  WalkResult walk = op->walk([&](Operation *nested) {
    if (nested == op || isa<cf::AssertOp>(nested) ||
        nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
        isMemoryEffectFree(nested))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !walk.wasInterrupted();
}

std::optional<mlir::fusion::ProvenChecks>
mlir::fusion::proveChecks(ArrayRef<Operation *> readers, bool finite,
                          std::string &why) {
  ProvenChecks proven;
  SmallVector<Operation *> work(readers.begin(), readers.end());
  while (!work.empty()) {
    Operation *o = work.pop_back_val();
    if (!proven.reach.insert(o))
      continue;
    for (Value r : o->getResults())
      for (Operation *u : r.getUsers())
        work.push_back(u);
  }
  for (Operation *o : proven.reach) {
    if (!effectFreeBesidesAsserts(o)) {
      why = "'" + o->getName().getStringRef().str() +
            "' among them has effects other than cf.assert";
      return std::nullopt;
    }
    o->walk([&](cf::AssertOp a) { proven.asserts.push_back(a); });
  }
  FloatRangeAnalysis ranges(finite);
  for (Operation *op : proven.asserts) {
    auto a = cast<cf::AssertOp>(op);
    if (ranges.alwaysHolds(a))
      continue;
    why = "the check \"" + a.getMsg().str() +
          "\" is not proven to hold for every " +
          (finite ? "finite input" : "input");
    if (!finite && FloatRangeAnalysis(true).alwaysHolds(a))
      why += " (it is for finite inputs: finite-inputs, frontend=torch)";
    return std::nullopt;
  }
  return proven;
}

void mlir::fusion::eraseProvenChecks(RewriterBase &rewriter,
                                     const ProvenChecks &proven) {
  for (Operation *a : proven.asserts)
    rewriter.eraseOp(a);
  // What went dead with the asserts, and the producers that die with it.
  SmallVector<Operation *> sinks;
  for (Operation *o : proven.reach)
    if (o->use_empty() && isOpTriviallyDead(o))
      sinks.push_back(o);
  eraseWithDeadProducers(rewriter, sinks);
}

unsigned mlir::fusion::dropProvenChecks(ArrayRef<Operation *> readers,
                                        bool finite, std::string &why) {
  std::optional<ProvenChecks> proven = proveChecks(readers, finite, why);
  if (!proven || proven->asserts.empty())
    return 0;
  IRRewriter rewriter(proven->asserts.front()->getContext());
  eraseProvenChecks(rewriter, *proven);
  return proven->asserts.size();
}
