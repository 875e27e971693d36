//===- Pipelines.cpp - fusion pass pipelines ------------------------------===//
//
// The pipelines that chain the normalisation and the fusion passes, so a
// user can run one flag on frontend IR.
//
//===----------------------------------------------------------------------===//
#include "fusion/Transforms/Passes.h"
#include "fusion/Transforms/RemarkLock.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

LogicalResult mlir::fusion::buildActQuantizePipeline(OpPassManager &pm) {
  OpPassManager &fpm = pm.getOpAnchorName() == func::FuncOp::getOperationName()
                           ? pm
                           : pm.nest<func::FuncOp>();
  // TOSA's MX casts, which nothing upstream lowers, written out first.
  fpm.addPass(createExpandTosaMX());
  fpm.addPass(createNormalizeElementwise());
  fpm.addPass(createCanonicalizerPass());
  fpm.addPass(createCSEPass());
  fpm.addPass(createRaiseQuantize());
  fpm.addPass(createFuseActQuantize());
  return success();
}

void mlir::fusion::registerFusionPipelines() {
  PassPipelineRegistration<>(
      "fusion-act-quantize-pipeline",
      "Normalise elementwise code (fusion-normalize-elementwise, "
      "canonicalize, cse), raise written-out quantizers "
      "(fusion-raise-quantize) and run fusion-fuse-act-quantize",
      [](OpPassManager &pm) { (void)buildActQuantizePipeline(pm); });
}

std::mutex &mlir::fusion::getRemarkMutex() {
  static std::mutex mutex;
  return mutex;
}
