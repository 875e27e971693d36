//===- LowerFloat8Casts.cpp - f8 casts to APFloat runtime calls -----------===//
//
// Implements `fusion-lower-float8-casts` and `fusion-verify-lowered-to-llvm`
// (see Passes.td): the two stages that let `fusion-pipeline` lower a program
// whose unfused quantizers cast to FP8 on the CPU.
//
//===----------------------------------------------------------------------===//
#include "fusion/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/APFloat.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_LOWERFLOAT8CASTS
#define GEN_PASS_DEF_VERIFYLOWEREDTOLLVM
#include "fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;

namespace {

constexpr StringLiteral kConvert = "_mlir_apfloat_convert";

bool isNarrowFloat(Type t) {
  auto f = dyn_cast<FloatType>(t);
  return f && f.getWidth() <= 8;
}

int32_t semanticsId(Type t) {
  return static_cast<int32_t>(
      llvm::APFloatBase::SemanticsToEnum(cast<FloatType>(t).getFloatSemantics()));
}

/// The integer of `t`'s width holding `v`'s bits, zero-extended to i64.
Value toBits64(OpBuilder &b, Location loc, Value v) {
  unsigned w = cast<FloatType>(v.getType()).getWidth();
  Value i = arith::BitcastOp::create(b, loc, b.getIntegerType(w), v);
  if (w == 64)
    return i;
  return arith::ExtUIOp::create(b, loc, b.getI64Type(), i);
}

struct LowerFloat8CastsPass
    : public fusion::impl::LowerFloat8CastsBase<LowerFloat8CastsPass> {
  using LowerFloat8CastsBase::LowerFloat8CastsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> casts;
    module.walk([&](Operation *op) {
      if (!isa<arith::TruncFOp, arith::ExtFOp>(op))
        return;
      Type from = op->getOperand(0).getType(), to = op->getResult(0).getType();
      if (isa<FloatType>(from) && (isNarrowFloat(from) || isNarrowFloat(to)))
        casts.push_back(op);
    });
    if (casts.empty())
      return;
    OpBuilder b(module.getContext());
    auto i32 = b.getI32Type(), i64 = b.getI64Type();
    auto fnType = b.getFunctionType({i32, i32, i64}, {i64});
    if (auto existing = module.lookupSymbol<func::FuncOp>(kConvert)) {
      if (existing.getFunctionType() != fnType) {
        existing.emitError() << "'" << kConvert
                             << "' is declared with another type";
        return signalPassFailure();
      }
    } else {
      b.setInsertionPointToStart(module.getBody());
      auto decl = func::FuncOp::create(b, module.getLoc(), kConvert, fnType);
      decl.setPrivate();
    }
    for (Operation *op : casts) {
      b.setInsertionPoint(op);
      Location loc = op->getLoc();
      Value in = op->getOperand(0);
      Type from = in.getType(), to = op->getResult(0).getType();
      if (auto t = dyn_cast<arith::TruncFOp>(op))
        if (t.getRoundingmodeAttr() &&
            *t.getRoundingmode() != arith::RoundingMode::to_nearest_even) {
          op->emitError("fusion-lower-float8-casts: only to_nearest_even "
                        "truncf to an 8-bit float is lowered");
          return signalPassFailure();
        }
      if (saturate && isa<arith::TruncFOp>(op) && isNarrowFloat(to)) {
        // Finite |x| past the maximum becomes the maximum, sign kept.
        const auto &sem = cast<FloatType>(from).getFloatSemantics();
        llvm::APFloat maxTo =
            llvm::APFloat::getLargest(cast<FloatType>(to).getFloatSemantics());
        bool losesInfo = false;
        maxTo.convert(sem, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
        Value max = arith::ConstantFloatOp::create(b, loc, cast<FloatType>(from), maxTo);
        Value inf = arith::ConstantFloatOp::create(
            b, loc, cast<FloatType>(from), llvm::APFloat::getInf(sem));
        Value mag = math::AbsFOp::create(b, loc, in);
        Value big = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                          mag, max);
        Value finite = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE,
                                             mag, inf);
        Value clip = arith::AndIOp::create(b, loc, big, finite);
        Value signedMax = math::CopySignOp::create(b, loc, max, in);
        in = arith::SelectOp::create(b, loc, clip, signedMax, in);
      }
      Value semFrom = arith::ConstantIntOp::create(b, loc, semanticsId(from), 32);
      Value semTo = arith::ConstantIntOp::create(b, loc, semanticsId(to), 32);
      Value bits = toBits64(b, loc, in);
      Value out = func::CallOp::create(b, loc, kConvert, TypeRange{i64},
                                       ValueRange{semFrom, semTo, bits})
                      .getResult(0);
      unsigned w = cast<FloatType>(to).getWidth();
      if (w != 64)
        out = arith::TruncIOp::create(b, loc, b.getIntegerType(w), out);
      out = arith::BitcastOp::create(b, loc, to, out);
      op->getResult(0).replaceAllUsesWith(out);
      op->erase();
    }
  }
};

struct VerifyLoweredToLLVMPass
    : public fusion::impl::VerifyLoweredToLLVMBase<VerifyLoweredToLLVMPass> {
  void runOnOperation() override {
    WalkResult r = getOperation().walk([&](Operation *op) {
      if (isa<ModuleOp>(op) || isa<LLVM::LLVMDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitError() << "the pipeline did not lower '" << op->getName()
                      << "' to the LLVM dialect";
      return WalkResult::interrupt();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
