//===- FusionToRuntime.h - fusion ops to runtime calls ----------*- C++ -*-===//
//
// fusion ops are in destination style and take part in one-shot
// bufferization, which turns them into the same ops on memrefs;
// `fusion-lower-to-runtime` turns those into calls of the runtime's C
// interface (lib/ExecutionEngine/FusionRuntimeWrappers.cpp), whose status the
// IR asserts.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_CONVERSION_FUSIONTORUNTIME_FUSIONTORUNTIME_H
#define FUSION_CONVERSION_FUSIONTORUNTIME_FUSIONTORUNTIME_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseSet.h"
#include <memory>
#include <optional>

namespace mlir::fusion {

/// Registers the BufferizableOpInterface models of every fusion op.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

/// The runtime entry point (without the `_mlir_ciface_` prefix) a fusion op
/// lowers to, e.g. "fusion_rt_mlir_quantize".
StringRef getRuntimeEntryPoint(Operation *op);

/// fusion_rt_dtype of an element type, or the table's own codes
/// (fusion_rt_mlir.h): i64 (the rng operand), i8 holding FP4 data packed two
/// per byte; failure for any other type.
FailureOr<int64_t> getRuntimeDtype(Type t);

/// fusion_rt_accumulator_round of a paired projection's half: none, bf16,
/// f16, and with the bias added before the rounding (`withBias`) bf16 / f16
/// + 2.
int32_t getAccumulatorRound(std::optional<Type> round, bool withBias);

/// The operand numbers of `op`'s optional outputs that nothing reads, which
/// fusion-lower-to-runtime passes as absent (a null table row): the amax of
/// FP8 per-tensor delayed scaling whose result (on tensors) has no use or
/// whose destination (on memrefs) is an allocation that only `op` uses.
llvm::SmallDenseSet<unsigned, 2> getUnreadRuntimeOutputs(Operation *op);

// The passes' declarations (Passes.td): create<Name>(), register<Name>(),
// registerFusionToRuntimePasses().
#define GEN_PASS_DECL
#include "fusion/Conversion/FusionToRuntime/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "fusion/Conversion/FusionToRuntime/Passes.h.inc"

/// `fusion-lower-to-runtime`: fusion ops on memrefs become runtime calls
/// (lib/Conversion/FusionToRuntime/LowerToRuntime.cpp).
/// (registerLowerToRuntimePass() and registerKernelReportPass() come with
/// the registration above.)
std::unique_ptr<Pass> createLowerToRuntimePass();

} // namespace mlir::fusion

#endif // FUSION_CONVERSION_FUSIONTORUNTIME_FUSIONTORUNTIME_H
