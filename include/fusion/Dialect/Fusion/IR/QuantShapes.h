//===- QuantShapes.h - result shapes of a quantizer -------------*- C++ -*-===//
//
// The one place that says which shape each result of a quantizing op has.
// Written once over a dimension algebra so that the verifier (static
// int64_t dims, with ShapedType::kDynamic) and the bufferization (OpFoldResult
// dims, computed with folded affine.apply) share the same formulas.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_DIALECT_FUSION_IR_QUANTSHAPES_H
#define FUSION_DIALECT_FUSION_IR_QUANTSHAPES_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

namespace mlir::fusion {

/// Computes the shape of every result of a quantizer (see
/// getQuantResultKinds) from the data shape `shape` made of `numHalves`
/// independently scaled halves along the last dimension. `Alg` provides
/// `Dim`, `constant(int64_t)`, `ceilDiv(Dim, int64_t)`,
/// `roundUp(Dim, int64_t)`, `mul(Dim, int64_t)` and `divExact(Dim, int64_t)`.
/// The caller has checked the rank (inferQuantResultTypes).
template <typename Alg>
SmallVector<SmallVector<typename Alg::Dim, 4>, 6>
computeQuantResultShapes(Alg &alg, QuantSchemeAttr scheme,
                         ArrayRef<typename Alg::Dim> shape, unsigned numHalves,
                         bool withDbias) {
  using Dim = typename Alg::Dim;
  int64_t rank = shape.size();
  Dim n = shape.back();
  Dim m = rank >= 2 ? shape[rank - 2] : alg.constant(1);
  Dim halfN = numHalves > 1 ? alg.divExact(n, numHalves) : n;
  int64_t b = scheme.getBlockSize();
  SmallVector<SmallVector<Dim, 4>, 6> shapes;
  for (QuantResultKind kind : getQuantResultKinds(scheme, withDbias)) {
    switch (kind) {
    case QuantResultKind::RowData:
      shapes.emplace_back(shape.begin(), shape.end());
      break;
    case QuantResultKind::RowScales: {
      Dim cols = alg.mul(alg.ceilDiv(halfN, b), numHalves);
      if (scheme.getScaleLayout() == ScaleLayout::swizzled) {
        shapes.push_back({alg.roundUp(m, 128), alg.roundUp(cols, 4)});
      } else {
        SmallVector<Dim, 4> s(shape.begin(), shape.end());
        s.back() = cols;
        // 2D FP8 blocks (rank 2): one scale row per block_rows rows.
        if (scheme.isBlockFP8() && scheme.getBlockRows() > 1)
          s[rank - 2] = alg.ceilDiv(m, scheme.getBlockRows());
        shapes.push_back(s);
      }
      break;
    }
    case QuantResultKind::ColData:
      if (scheme.getColwiseLayout() == ColwiseLayout::transposed)
        shapes.push_back({n, m});
      else
        shapes.emplace_back(shape.begin(), shape.end());
      break;
    case QuantResultKind::ColScales: {
      Dim rowBlocks = alg.ceilDiv(m, b);
      if (scheme.getScaleLayout() == ScaleLayout::swizzled)
        shapes.push_back({alg.roundUp(n, 128), alg.roundUp(rowBlocks, 4)});
      else if (scheme.getColwiseLayout() == ColwiseLayout::transposed)
        shapes.push_back({n, rowBlocks});
      else
        shapes.push_back({rowBlocks, n});
      break;
    }
    case QuantResultKind::ScaleInv:
    case QuantResultKind::Amax:
      shapes.push_back({alg.constant(1)});
      break;
    case QuantResultKind::Dbias:
      shapes.push_back({n});
      break;
    }
  }
  return shapes;
}

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_IR_QUANTSHAPES_H
