//===- TestFloatRange.cpp - test pass for FloatRangeAnalysis --------------===//
//
// Implements `fusion-test-float-range`: reports FloatRangeAnalysis's range of
// every float value a function returns (and whether each cf.assert is
// proven), then checks those ranges against the TensorEvaluator's results on
// random inputs. A returned element outside its range is an error, so every
// lit case of the analysis is also a soundness check.
//
//===----------------------------------------------------------------------===//
#include "fusion/Transforms/Passes.h"
#include "fusion/Transforms/RemarkLock.h"

#include "fusion/Analysis/FloatRange.h"
#include "fusion/Analysis/TensorEvaluator.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Remarks.h"
#include "llvm/ADT/APFloat.h"

#include <random>

namespace mlir::fusion {
#define GEN_PASS_DEF_TESTFLOATRANGE
#include "fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

double toDouble(FloatType t, uint64_t bits) {
  llvm::APFloat f(t.getFloatSemantics(), llvm::APInt(t.getWidth(), bits));
  bool loses = false;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &loses);
  return f.convertToDouble();
}

/// A random element of `t`: often a special value, else random bits.
uint64_t draw(Type t, bool finite, std::mt19937_64 &rng) {
  auto ft = dyn_cast<FloatType>(t);
  if (!ft)
    return rng() & llvm::maskTrailingOnes<uint64_t>(
                       std::min(64u, t.getIntOrFloatBitWidth()));
  const llvm::fltSemantics &sem = ft.getFloatSemantics();
  for (;;) {
    llvm::APFloat v(sem);
    switch (rng() % 12) {
    case 0: v = llvm::APFloat::getZero(sem, rng() & 1); break;
    case 1: v = llvm::APFloat::getInf(sem, rng() & 1); break;
    case 2: v = llvm::APFloat::getNaN(sem); break;
    case 3: v = llvm::APFloat::getLargest(sem, rng() & 1); break;
    case 4: v = llvm::APFloat::getSmallest(sem, rng() & 1); break;
    case 5: v = llvm::APFloat::getSmallestNormalized(sem, rng() & 1); break;
    default:
      v = llvm::APFloat(sem, llvm::APInt(ft.getWidth(), rng()));
    }
    if (finite && !v.isFinite())
      continue;
    return v.bitcastToAPInt().getZExtValue();
  }
}

struct TestFloatRangePass
    : public fusion::impl::TestFloatRangeBase<TestFloatRangePass> {
  using TestFloatRangeBase::TestFloatRangeBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    auto opts = remark::RemarkOpts::name("FloatRange")
                    .category("fusion")
                    .function(func.getSymName());
    FloatRangeAnalysis ranges(finiteInputs);
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    SmallVector<FloatRange> results;
    for (Value v : ret.getOperands())
      results.push_back(ranges.range(v));
    SmallVector<int64_t> checked(results.size(), 0);
    auto report = [&] {
      std::lock_guard<std::mutex> lock(getRemarkMutex());
      for (auto [i, v] : llvm::enumerate(ret.getOperands()))
        if (isa<FloatType>(getElementTypeOrSelf(v.getType())))
          remark::analysis(ret.getLoc(), opts)
              << remark::add("result {0}: {1}; {2} values checked", i,
                             results[i].str(), checked[i]);
      func.walk([&](cf::AssertOp a) {
        remark::analysis(a.getLoc(), opts) << remark::add(
            "assert \"{0}\": {1}", a.getMsg(),
            ranges.alwaysHolds(a) ? "holds" : "may fail");
      });
    };

    // Soundness: the evaluator's results on random inputs lie in the
    // ranges. Static shapes only.
    for (BlockArgument arg : func.getArguments()) {
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      if (!t || !t.hasStaticShape() || !t.getElementType().isIntOrFloat())
        return report();
    }
    std::mt19937_64 rng(0x5eed ^ std::hash<std::string>()(
                                     func.getSymName().str()));
    SmallVector<SmallVector<uint64_t>> inputs(func.getNumArguments());
    TensorEvaluator eval([&](Value leaf, ArrayRef<int64_t> index,
                             EvalScalar &out) {
      auto arg = dyn_cast<BlockArgument>(leaf);
      if (!arg || arg.getOwner() != &func.getBody().front())
        return false;
      auto t = cast<RankedTensorType>(arg.getType());
      out.bits = inputs[arg.getArgNumber()][TensorEvaluator::linearize(
          index, t.getShape())];
      out.poison = false;
      return true;
    });
    for (unsigned s = 0; s < samples; ++s) {
      for (BlockArgument arg : func.getArguments()) {
        auto t = cast<RankedTensorType>(arg.getType());
        auto &in = inputs[arg.getArgNumber()];
        in.clear();
        for (int64_t k = 0; k < t.getNumElements(); ++k)
          in.push_back(draw(t.getElementType(), finiteInputs, rng));
      }
      eval.clear();
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        auto t = dyn_cast<RankedTensorType>(v.getType());
        auto ft = t ? dyn_cast<FloatType>(t.getElementType()) : FloatType();
        if (!ft || !t.hasStaticShape())
          continue;
        SmallVector<int64_t> index;
        for (int64_t k = 0; k < std::min<int64_t>(t.getNumElements(), 4096);
             ++k) {
          TensorEvaluator::delinearize(k, t.getShape(), index);
          FailureOr<EvalScalar> e = eval.element(v, index);
          if (failed(e) || e->poison)
            continue;
          double d = toDouble(ft, e->bits);
          bool inside = std::isnan(d) ? results[i].nan : results[i].contains(d);
          ++checked[i];
          if (!inside) {
            ret.emitError() << "FloatRange: result " << i << " element " << k
                            << " is " << d << " in sample " << s
                            << ", outside " << results[i].str();
            return signalPassFailure();
          }
        }
      }
    }
    report();
  }
};

} // namespace
