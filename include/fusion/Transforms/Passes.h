//===- Passes.h - fusion passes ---------------------------------*- C++ -*-===//
//
// Declarations of the fusion passes (generated from Passes.td) and of the
// pass pipelines built from them.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_TRANSFORMS_PASSES_H
#define FUSION_TRANSFORMS_PASSES_H

#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::fusion {

#define GEN_PASS_DECL
#include "fusion/Transforms/Passes.h.inc"

/// Adds fusion-normalize-elementwise's fusion patterns: a producer generic is
/// fused into its consumer when every use of it is there (tensor.dim uses
/// aside), and an elementwise generic reading the expand_shape of a linalg
/// result is collapsed onto it. fusion-fuse-paired-projections reruns them
/// on the projections it splits.
void populateNormalizeFusionPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "fusion/Transforms/Passes.h.inc"

} // namespace mlir::fusion

#endif // FUSION_TRANSFORMS_PASSES_H
