//===- FusionPipeline.cpp - the end-to-end fusion pipeline ----------------===//
//
// One named pipeline from frontend tensor IR to the LLVM dialect. Switching a
// fusion off leaves every other stage as it is, so the fused and unfused
// programs differ only in the fusion (the JIT tests compare the two).
//
//===----------------------------------------------------------------------===//
#include "fusion/Pipelines/FusionPipeline.h"
#include "fusion/Conversion/FusionToRuntime/FusionToRuntime.h"
#include "fusion/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::fusion::buildFusionPipeline(OpPassManager &pm,
                                       const FusionPipelineOptions &options) {
  // Normalise and fuse, per function.
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  // torch-mlir's tm_tensor scans and scatters as loops, and TOSA's MX
  // casts, which nothing upstream lowers, written out first.
  fpm.addPass(createRaiseMaskedFill());
  fpm.addPass(createLowerTMTensor());
  fpm.addPass(createExpandTosaMX());
  fpm.addPass(createNormalizeElementwise());
  fpm.addPass(createCanonicalizerPass());
  fpm.addPass(createCSEPass());
  // Quantizers written out in upstream ops become fusion.quantize, so the
  // fusions below see them.
  if (options.raiseQuantize) {
    bool torch = options.frontend == Frontend::torch;
    RaiseQuantizeOptions raiseOpts;
    raiseOpts.saturatingCasts = options.saturatingCasts || torch;
    raiseOpts.wrappingIntCasts = options.wrappingIntCasts || torch;
    raiseOpts.finiteInputs = options.finiteInputs || torch;
    fpm.addPass(createRaiseQuantize(raiseOpts));
  }
  // Pairs first: a gate/up pair feeding SwiGLU then a quantizer becomes a
  // gated paired projection followed by the quantizer (docs/passes.md).
  if (options.fusePairedProjections)
    fpm.addPass(createFusePairedProjections());
  if (options.fuseActQuantize) {
    FuseActQuantizeOptions fuseOpts;
    fuseOpts.finiteInputs =
        options.finiteInputs || options.frontend == Frontend::torch;
    fpm.addPass(createFuseActQuantize(fuseOpts));
  }
  if (!options.lowerToLLVM)
    return;

  // A host that allocates device memory must not see pointers into the
  // program's read-only data (constant weights) beside its buffers.
  if (options.genericAlloc)
    pm.addNestedPass<func::FuncOp>(createCopyConstantOperands());
  // Bufferise: fusion ops (destination style) write their destinations'
  // buffers; then each becomes a runtime call.
  bufferization::OneShotBufferizePassOptions bufOpts;
  bufOpts.bufferizeFunctionBoundaries = true;
  bufOpts.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufOpts));
  pm.addPass(createLowerToRuntimePass());
  bufferization::BufferDeallocationPipelineOptions deallocOpts;
  bufferization::buildBufferDeallocationPipeline(pm, deallocOpts);
  // The deallocation pipeline returns a function's argument as a
  // `bufferization.clone`: an allocation and a copy.
  pm.addPass(createConvertBufferizationToMemRefPass());

  // Lower what is left (unfused linalg code, the runtime calls) to LLVM.
  pm.addPass(createConvertLinalgToLoopsPass());
  // Upstream expand-strided-metadata crashes on an expand_shape that splits
  // a dimension into several dynamic ones: those become reinterpret_casts.
  pm.addNestedPass<func::FuncOp>(createExpandShapeToReinterpretCast());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // torch-mlir writes x**3 as math.fpowi: multiplications by squaring.
  pm.addPass(math::createMathExpandOpsPass(math::MathExpandOpsPassOptions{{"fpowi"}}));
  pm.addPass(createConvertMathToLibmPass());
  // bf16 arithmetic left in the unfused graph (torch-mlir's bf16 GELU-tanh,
  // x**3 expanded above) is computed in f32 and rounded, which is what LLVM's
  // promotion does too, but without a call of compiler-rt's __truncsfbf2
  // that an AOT link may not find.
  arith::ArithEmulateUnsupportedFloatsOptions emulateOpts;
  emulateOpts.sourceTypeStrs = {"bf16"};
  emulateOpts.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulateOpts));
  // bf16/f16 roundings of the unfused graph (and those math-to-libm adds
  // around f32 calls for bf16 math) expand to integer code, so the JIT
  // needs no compiler-rt conversion routines.
  arith::ArithExpandOpsPassOptions expandOpts;
  expandOpts.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expandOpts));
  // Casts to and from FP8 that stay unfused: APFloat calls.
  LowerFloat8CastsOptions castOpts;
  castOpts.saturate =
      options.saturatingCasts || options.frontend == Frontend::torch;
  pm.addPass(createLowerFloat8Casts(castOpts));
  FinalizeMemRefToLLVMConversionPassOptions memrefOpts;
  memrefOpts.useGenericFunctions = options.genericAlloc;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOpts));
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createVerifyLoweredToLLVM());
}

LogicalResult mlir::fusion::buildActQuantizePipeline(OpPassManager &pm) {
  OpPassManager &fpm = pm.getOpAnchorName() == func::FuncOp::getOperationName()
                           ? pm
                           : pm.nest<func::FuncOp>();
  // torch-mlir's tm_tensor scans and scatters as loops, and TOSA's MX
  // casts, which nothing upstream lowers, written out first.
  fpm.addPass(createRaiseMaskedFill());
  fpm.addPass(createLowerTMTensor());
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

void mlir::fusion::registerFusionPipeline() {
  PassPipelineRegistration<FusionPipelineOptions>(
      "fusion-pipeline",
      "Frontend tensor IR to the LLVM dialect: normalise, fuse "
      "(act->quantize, paired projections), bufferise, lower fusion ops to "
      "runtime calls (fusion-lower-to-runtime), lower to LLVM",
      buildFusionPipeline);
}

void mlir::fusion::registerAllFusionPasses() {
  registerFusionPasses();
  registerFusionPipelines();
  registerFusionPipeline();
  registerKernelReportPass();
  registerLowerToRuntimePass();
}
