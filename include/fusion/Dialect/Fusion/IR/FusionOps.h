//===- FusionOps.h - fusion ops ---------------------------------*- C++ -*-===//
//
// The fusion ops, and the one description of what a quantizer returns
// (getQuantResultKinds / inferQuantResultTypes) that the verifiers, the
// passes and the lowering share.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_DIALECT_FUSION_IR_FUSIONOPS_H
#define FUSION_DIALECT_FUSION_IR_FUSIONOPS_H

#include "fusion/Dialect/Fusion/IR/FusionAttrs.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::fusion {

/// What one result of a quantizing op holds.
enum class QuantResultKind {
  RowData,
  RowScales,
  ColData,
  ColScales,
  ScaleInv,
  Amax,
  Dbias
};

/// A readable name ("rowwise scales", ...) for diagnostics.
llvm::StringRef stringifyQuantResultKind(QuantResultKind kind);

/// The results a quantizer with `scheme` returns, in order.
llvm::SmallVector<QuantResultKind, 6>
getQuantResultKinds(QuantSchemeAttr scheme, bool withDbias);

/// The result types of a quantizer with `scheme` applied to data of
/// `dataShape` (dynamic dims allowed) made of `numHalves` independently
/// scaled halves along the last dimension (2 for a gated backward output).
/// Returns failure with `error` set when the shape cannot take the scheme.
llvm::FailureOr<llvm::SmallVector<RankedTensorType, 6>>
inferQuantResultTypes(MLIRContext *ctx, QuantSchemeAttr scheme,
                      llvm::ArrayRef<int64_t> dataShape, unsigned numHalves,
                      bool withDbias, std::string &error);

/// A paired projection's weight dimensions: H (its rows; G * w for head
/// groups) and K, from its type ([H, K], [K, H] with `kn`, [G, w, K], or
/// [K, G, w] with `kn`). Dynamic when a dimension is.
int64_t pairedWeightRows(ShapedType weight, bool kn);
int64_t pairedWeightK(ShapedType weight, bool kn);

} // namespace mlir::fusion

#define GET_OP_CLASSES
#include "fusion/Dialect/Fusion/IR/FusionOps.h.inc"

#endif // FUSION_DIALECT_FUSION_IR_FUSIONOPS_H
