//===- fusion-opt.cpp - The fusion-opt driver -----------------------------===//
//
// An MlirOptMain driver with the fusion dialect, the fusion passes, and the
// upstream dialects, passes and extensions that its inputs and pipelines use.
//
//===----------------------------------------------------------------------===//
#include "fusion/Conversion/FusionToRuntime/FusionToRuntime.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Dialect/TMTensor/TMTensorDialect.h"
#include "fusion/Pipelines/FusionPipeline.h"
#include "fusion/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::fusion::registerAllFusionPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::fusion::FusionDialect>();
  // torch-mlir's tm_tensor.scan / scatter (a subset: fusion-lower-tm-tensor
  // writes them out).
  registry.insert<mlir::fusion::tm_tensor::TMTensorDialect>();
  mlir::fusion::registerBufferizableOpInterfaceExternalModels(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "fusion-opt: activation/quantize and paired-projection "
                  "fusion driver\n",
      registry));
}
