//===- QuantDestinations.h - tensor.empty outs of a quantizer --*- C++ -*-===//
//
// The passes that build a quantizing op (fusion-raise-quantize,
// fusion-fuse-act-quantize) give it `tensor.empty` destinations whose
// dynamic sizes follow the verifier's shape rules (QuantShapes.h): scales
// of a dynamic last dimension are ceil(N / block) wide, packed FP4 data
// N / 2, a colwise copy's scales ceil(M / block) rows.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_TRANSFORMS_QUANTDESTINATIONS_H
#define FUSION_TRANSFORMS_QUANTDESTINATIONS_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::fusion {

/// Dimension algebra on OpFoldResults for QuantShapes.h: static dims fold
/// to attributes, dynamic ones to affine.apply on tensor.dim values.
struct ValueDims {
  using Dim = OpFoldResult;
  OpBuilder &b;
  Location loc;
  Dim apply(AffineExpr e, Dim d);
  AffineExpr s0() { return b.getAffineSymbolExpr(0); }
  Dim constant(int64_t v) { return b.getIndexAttr(v); }
  Dim ceilDiv(Dim d, int64_t k) { return apply(s0().ceilDiv(k), d); }
  Dim roundUp(Dim d, int64_t k) { return apply(s0().ceilDiv(k) * k, d); }
  Dim mul(Dim d, int64_t k) { return k == 1 ? d : apply(s0() * k, d); }
  Dim divExact(Dim d, int64_t k) {
    return k == 1 ? d : apply(s0().floorDiv(k), d);
  }
};

/// `tensor.empty` destinations of `types` for a quantizer of data of
/// `dataShape` (`halves` independently scaled halves), with dynamic sizes
/// from the verifier's shape rules. FP4 data typed i8 is packed two per byte.
SmallVector<Value> createQuantDestinations(OpBuilder &b, Location loc,
                                           QuantSchemeAttr scheme,
                                           SmallVector<OpFoldResult> dataShape,
                                           unsigned halves, bool dbias,
                                           TypeRange types);

} // namespace mlir::fusion

#endif // FUSION_TRANSFORMS_QUANTDESTINATIONS_H
