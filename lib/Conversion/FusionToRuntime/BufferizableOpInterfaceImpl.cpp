//===- BufferizableOpInterfaceImpl.cpp - fusion ops in bufferization -------===//
//
// Every fusion op is in destination style: it reads its inputs and writes
// its `outs`, never reading them. One-shot bufferization therefore gives each
// op its destinations' buffers (in place when the analysis allows, so a
// quantized result can land directly in a caller's buffer or a slice of a
// larger one) and turns it into the same op on memrefs, without results.
// `fusion-lower-to-runtime` (LowerToRuntime.cpp) then turns the memref form
// into runtime calls.
//
//===----------------------------------------------------------------------===//
#include "fusion/Conversion/FusionToRuntime/FusionToRuntime.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::bufferization;

namespace {

/// The model shared by every fusion op: linalg's destination-style model,
/// except that destinations are only written, never read.
template <typename OpTy>
struct FusionOpBufferization
    : public DstBufferizableOpInterfaceExternalModel<
          FusionOpBufferization<OpTy>, OpTy> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    return !cast<DestinationStyleOpInterface>(op).isDpsInit(&operand);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto dps = cast<DestinationStyleOpInterface>(op);
    if (dps.hasPureBufferSemantics())
      return success();
    if (!dps.hasPureTensorSemantics())
      return op->emitOpError() << "operands must be all tensors or all "
                                  "memrefs to be bufferized";
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    SmallVector<Value> operands;
    for (Value v : op->getOperands()) {
      FailureOr<Value> buf = getBuffer(rewriter, v, options, state);
      if (failed(buf))
        return failure();
      operands.push_back(*buf);
    }
    SmallVector<Value> outs(
        ArrayRef<Value>(operands).take_back(dps.getNumDpsInits()));
    cloneWithoutRegions(rewriter, op, /*newResultTypes=*/TypeRange(),
                        operands);
    replaceOpWithBufferizedValues(rewriter, op, outs);
    return success();
  }
};

} // namespace

void mlir::fusion::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, FusionDialect *) {
    QuantizeOp::attachInterface<FusionOpBufferization<QuantizeOp>>(*ctx);
    ActQuantizeOp::attachInterface<FusionOpBufferization<ActQuantizeOp>>(*ctx);
    GatedActQuantizeOp::attachInterface<
        FusionOpBufferization<GatedActQuantizeOp>>(*ctx);
    PairedProjectionOp::attachInterface<
        FusionOpBufferization<PairedProjectionOp>>(*ctx);
    ctx->loadDialect<memref::MemRefDialect>();
  });
}
