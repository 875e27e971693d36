//===- FusionPipeline.h - the end-to-end fusion pipeline --------*- C++ -*-===//
//
// `fusion-pipeline`: frontend tensor IR → normalise → fuse → bufferise (fusion
// ops become runtime calls) → LLVM dialect, ready for mlir-runner (JIT) or
// mlir-translate + llc (AOT).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_PIPELINES_FUSIONPIPELINE_H
#define FUSION_PIPELINES_FUSIONPIPELINE_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace fusion {

/// Options of `fusion-pipeline`.
/// What the casts of the input IR mean (fusion-raise-quantize's options).
enum class Frontend { generic, torch };

struct FusionPipelineOptions
    : public PassPipelineOptions<FusionPipelineOptions> {
  PassOptions::Option<bool> fuseActQuantize{
      *this, "fuse-act-quantize",
      llvm::cl::desc("Fuse activations with their quantizers"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> raiseQuantize{
      *this, "raise-quantize",
      llvm::cl::desc("Replace quantizers written out in upstream ops by "
                     "fusion.quantize (fusion-raise-quantize)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> saturatingCasts{
      *this, "saturating-casts",
      llvm::cl::desc("fusion-raise-quantize: treat arith.truncf to FP8 as a "
                     "saturating cast (torch >= 2.12, Triton)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> wrappingIntCasts{
      *this, "wrapping-int-casts",
      llvm::cl::desc("fusion-raise-quantize: fptosi/fptoui of in-range "
                     "values wrap like torch's .to(torch.uint8)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> finiteInputs{
      *this, "finite-inputs",
      llvm::cl::desc("fusion-raise-quantize: assume quantizer inputs hold no "
                     "NaN or Inf"),
      llvm::cl::init(false)};
  PassOptions::Option<Frontend> frontend{
      *this, "frontend",
      llvm::cl::desc("Where the IR comes from: 'generic' (default) or "
                     "'torch' (torch-mlir: sets saturating-casts, "
                     "wrapping-int-casts and finite-inputs; docs/passes.md "
                     "says why)"),
      llvm::cl::init(Frontend::generic),
      llvm::cl::values(clEnumValN(Frontend::generic, "generic",
                                  "IR means what its ops define"),
                       clEnumValN(Frontend::torch, "torch",
                                  "IR from torch-mlir"))};
  PassOptions::Option<bool> fusePairedProjections{
      *this, "fuse-paired-projections",
      llvm::cl::desc("Fuse pairs of projections of one input"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> lowerToLLVM{
      *this, "lower-to-llvm",
      llvm::cl::desc("Bufferise and lower to the LLVM dialect (off: stop "
                     "after fusion, on tensors)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> genericAlloc{
      *this, "generic-alloc",
      llvm::cl::desc("Allocate buffers through _mlir_memref_to_llvm_alloc / "
                     "_mlir_memref_to_llvm_free, so the host program decides "
                     "where they live (e.g. CUDA managed memory)"),
      llvm::cl::init(false)};
};

/// Adds, nested on func.func, the passes that write out TOSA MX casts,
/// normalise elementwise code, raise written-out quantizers and fuse
/// activations with their quantizers: fusion-expand-tosa-mx,
/// fusion-normalize-elementwise, canonicalize, cse, fusion-raise-quantize,
/// fusion-fuse-act-quantize (`fusion-act-quantize-pipeline`).
LogicalResult buildActQuantizePipeline(OpPassManager &pm);

/// Registers `fusion-act-quantize-pipeline`.
void registerFusionPipelines();

/// Adds the stages of `fusion-pipeline` to `pm` (anchored on builtin.module).
void buildFusionPipeline(OpPassManager &pm,
                         const FusionPipelineOptions &options);

/// Registers `fusion-pipeline`.
void registerFusionPipeline();

/// Registers every fusion pass and pipeline: the passes of Passes.td, the
/// act-quantize pipeline, `--fusion-pipeline`, `fusion-kernel-report` and
/// `fusion-lower-to-runtime`. fusion-opt and the plugin both call it, so
/// the two offer the same passes.
void registerAllFusionPasses();

} // namespace fusion
} // namespace mlir

#endif // FUSION_PIPELINES_FUSIONPIPELINE_H
