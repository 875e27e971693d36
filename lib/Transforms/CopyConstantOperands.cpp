//===- CopyConstantOperands.cpp - constants of fusion ops into buffers -----===//
//
// Implements `fusion-copy-constant-operands` (see Passes.td): a constant
// tensor that a fusion op reads becomes an allocated copy, so that a program
// whose host allocates device or managed memory (generic-alloc) hands the
// runtime no pointer into its read-only data.
//
//===----------------------------------------------------------------------===//
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_COPYCONSTANTOPERANDS
#include "fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;

namespace {

struct CopyConstantOperands
    : fusion::impl::CopyConstantOperandsBase<CopyConstantOperands> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      if (!isa<fusion::FusionDialect>(op->getDialect()))
        return;
      auto dps = dyn_cast<DestinationStyleOpInterface>(op);
      if (!dps)
        return;
      DenseMap<Value, Value> copies; // one copy per constant and op
      for (OpOperand *in : dps.getDpsInputOperands()) {
        // The constant, or a view of it (a weight split by extract_slice,
        // reshaped): the view then reads the copy.
        OpOperand *use = in;
        while (Operation *def = use->get().getDefiningOp()) {
          if (!isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
                   tensor::CollapseShapeOp, tensor::CastOp>(def))
            break;
          use = &def->getOpOperand(0);
        }
        auto cst = use->get().getDefiningOp<arith::ConstantOp>();
        auto type = dyn_cast<RankedTensorType>(use->get().getType());
        if (!cst || !type || !type.hasStaticShape())
          continue;
        Value &copy = copies[use->get()];
        if (!copy) {
          OpBuilder b(use->getOwner());
          copy = bufferization::AllocTensorOp::create(
              b, op->getLoc(), type, ValueRange(), use->get());
        }
        use->set(copy);
      }
    });
  }
};

} // namespace
