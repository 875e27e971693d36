//===- FusionPlugin.cpp - fusion as an mlir-opt plugin --------------------===//
//
// Loads into upstream mlir-opt:
//   mlir-opt --load-dialect-plugin=FusionPlugin.so \
//            --load-pass-plugin=FusionPlugin.so \
//            --pass-pipeline='builtin.module(func.func(fusion-fuse-act-quantize))'
// The dialect plugin registers the fusion dialect and its bufferization
// models; the pass plugin the fusion passes and pipelines. Plugin passes are
// known only after option parsing, so they are named in --pass-pipeline.
//
//===----------------------------------------------------------------------===//
#include "fusion/Conversion/FusionToRuntime/FusionToRuntime.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Pipelines/FusionPipeline.h"
#include "fusion/Transforms/Passes.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

using namespace mlir;

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "FusionDialect", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            registry->insert<fusion::FusionDialect>();
            fusion::registerBufferizableOpInterfaceExternalModels(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "FusionPasses", LLVM_VERSION_STRING, []() {
            fusion::registerAllFusionPasses();
          }};
}
