//===- FusePairedProjections.cpp - pair projections of one input ----------===//
//
// Implements `fusion-fuse-paired-projections`. Two contractions of one block
// are a candidate pair when they read the same activation x, feed the same
// gated activation, or read equal computations under two SSA names. Each
// pair is checked against the admission rules below, in order; admitted
// pairs are rewritten best first (gated pairs, then pairs with more
// non-trivial epilogues, then program order), each projection at most once,
// into one fusion.paired_projection. Remarks: `passed` per fused pair at its
// first projection; `missed` per projection left alone that had a later
// partner, with the rule the nearest one failed ("no partner left" when all
// of them were paired with others). Declined candidates are left untouched.
//
// Admission rules (DeclineRule, include/fusion/Transforms/Declines.def;
// docs/passes.md):
//   "different LHS"                  the two read different SSA values
//   "different K or element types"   contracted dimension, weight, LHS or
//                                    accumulator element types differ
//   "different weight layouts"       one weight is [H, K], the other [K, H]
//   "dependency between the projections"
//                                    one reaches the other (or its epilogue)
//                                    through its operands, or no point of the
//                                    block sees every operand and precedes
//                                    every use
//   "unsupported projection"         batched weights (not one matrix
//                                    broadcast across the batch), LHS not
//                                    [tokens..., K] / [K],
//                                    accumulator not zero-initialised, ...
//   "accumulation narrower than f32" the IR accumulates (or multiplies) in
//                                    bf16 / f16; the fused op uses f32
//   "extra consumer of a projection result"
//                                    the result feeds an epilogue and
//                                    something else
//   "unsupported epilogue"           the consumer is not none / + bias /
//                                    sigmoid(y[+b]) / silu(y[+b]) /
//                                    softplus(y+b)*s / a
//                                    gated activation, or it rounds or
//                                    computes in a narrower type than f32
//
//===----------------------------------------------------------------------===//
#include "fusion/Transforms/CheckElision.h"
#include "fusion/Transforms/Declines.h"
#include "fusion/Transforms/Passes.h"
#include "fusion/Transforms/RemarkLock.h"
#include "fusion/Transforms/ShapeReads.h"
#include "fusion/Transforms/Transforms.h"
#include "fusion/Transforms/VerifyQuietly.h"

#include "fusion/Analysis/ProjectionPairing.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Remarks.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSEPAIREDPROJECTIONS
#include "fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

using PairPlan = PairedProjectionPlan;

/// True if `a` and `b` are the same computation under two SSA names (the
/// same op on the same operands with the same attributes).
bool equalComputations(Value a, Value b) {
  auto ra = dyn_cast<OpResult>(a), rb = dyn_cast<OpResult>(b);
  if (!ra || !rb || ra.getResultNumber() != rb.getResultNumber())
    return false;
  Operation *x = ra.getOwner(), *y = rb.getOwner();
  return x != y && x->getName() == y->getName() && x->getNumRegions() == 0 &&
         x->getOperands() == y->getOperands() &&
         x->getAttrDictionary() == y->getAttrDictionary() &&
         x->getResultTypes() == y->getResultTypes();
}

std::string typeStr(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// If the results of `a` and `b` reach, each directly or through its own
/// rounding or bias generic (a bf16 Linear's output, with or without its
/// bias), the gate and up inputs of one forward fusion.gated_act_quantize:
/// that op, in `gateIndex` which of `a` (0) and `b` (1) is the gate, and in
/// `epi` the epilogue (none or bias, with that generic if any) of `a` and
/// of `b`.
GatedActQuantizeOp getGatedQuantizeConsumer(Value a, Value b,
                                            unsigned &gateIndex,
                                            EpilogueMatch (&epi)[2]) {
  auto consumer = [](Value v, unsigned &input,
                     EpilogueMatch &match) -> GatedActQuantizeOp {
    MatchFailure ignored;
    FailureOr<EpilogueMatch> e = matchEpilogue(v, ignored);
    if (failed(e) ||
        (e->kind != EpilogueKind::none && e->kind != EpilogueKind::bias) ||
        !e->result.hasOneUse())
      return {};
    match = *e;
    OpOperand &use = *e->result.getUses().begin();
    auto gq = dyn_cast<GatedActQuantizeOp>(use.getOwner());
    if (!gq || gq.getInputs().size() != 2 || gq.getActivation().getBackward())
      return {};
    input = use.getOperandNumber() - gq.getInputs().getBeginOperandIndex();
    return input < 2 ? gq : GatedActQuantizeOp();
  };
  unsigned ia = 0, ib = 0;
  GatedActQuantizeOp ga = consumer(a, ia, epi[0]), gb = consumer(b, ib, epi[1]);
  if (!ga || ga != gb || ia == ib)
    return {};
  gateIndex = ia == 0 ? 0 : 1;
  return ga;
}

/// The op of the pair's data flow whose result the fused op replaces.
Operation *rootOf(const Projection &p, const EpilogueMatch &e) {
  return e.generic ? &*e.generic : &*p.op;
}

/// `v` (an [H] float tensor) as f32, through a one-loop extf/truncf generic.
Value castToF32(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  Type f32 = b.getF32Type();
  if (type.getElementType() == f32)
    return v;
  Value empty =
      tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, v), f32);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{empty.getType()}, ValueRange{v},
             ValueRange{empty}, ArrayRef<AffineMap>{id, id}, iters,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value x = args[0];
               Value r =
                   cast<FloatType>(x.getType()).getWidth() < 32
                       ? arith::ExtFOp::create(nb, l, f32, x).getResult()
                       : arith::TruncFOp::create(nb, l, f32, x).getResult();
               linalg::YieldOp::create(nb, l, r);
             })
      .getResult(0);
}

/// A projection over stacked weights whose result is cut along its last
/// dimension: `y = x · Wᵀ` ([N, H]), optionally rounded by an elementwise
/// cast generic and expanded back to the token dimensions, read only by
/// extract_slices of contiguous column ranges.
struct SplitPlan {
  Projection proj;
  linalg::GenericOp rounding;
  tensor::ExpandShapeOp expand;
  SmallVector<tensor::ExtractSliceOp> slices;
  SmallVector<int64_t> offsets, sizes;
  /// Interleaved (head-group) split: the expand_shape cuts the last
  /// dimension into `groups` groups of `groupSize`, each slice takes columns
  /// [offset, offset + size) of every group, and `collapses[i]` merges slice
  /// i's last two dimensions back. Part i reads rows g * groupSize + offset
  /// + r of the weight: `parts[i]`, the constant weight de-interleaved, or
  /// (a weight that is not a constant) a [G, w, K] view of it (`inPlace`):
  /// the weight expanded into its head groups and sliced, which the pairing
  /// hands the paired op as its row-grouped weight (no copy).
  int64_t groups = 0, groupSize = 0;
  SmallVector<tensor::CollapseShapeOp> collapses;
  SmallVector<DenseElementsAttr> parts;
  bool inPlace = false;
  /// Strided split (GPT-OSS's `x[..., ::2]`, `x[..., 1::2]` of its one
  /// gate/up Linear): each slice takes every `stride`-th column from its
  /// offset, so part i reads rows offset + stride * r of the weight: a view
  /// with `stride` times the row pitch (no copy), its bias columns alike.
  int64_t stride = 1;
};

/// Sorts `plan.slices` by column offset into `plan.offsets` / `sizes`;
/// fails when one has a dynamic offset or width, or when two overlap:
/// column ranges, or (`plan.stride` > 1) every stride-th column from offsets
/// that must be distinct and below the stride, each part ending inside the
/// result's `width` columns.
LogicalResult orderSlices(SplitPlan &plan, int64_t width = 0) {
  llvm::sort(plan.slices, [](tensor::ExtractSliceOp a, tensor::ExtractSliceOp b) {
    return a.getStaticOffsets().back() < b.getStaticOffsets().back();
  });
  const int64_t stride = plan.stride;
  int64_t end = 0;
  for (tensor::ExtractSliceOp s : plan.slices) {
    int64_t o = s.getStaticOffsets().back(), n = s.getStaticSizes().back();
    if (ShapedType::isDynamic(o) || ShapedType::isDynamic(n))
      return failure();
    const bool overlaps =
        stride == 1 ? o < end
                    : o >= stride ||
                          (!plan.offsets.empty() && plan.offsets.back() == o) ||
                          n < 1 || o + stride * (n - 1) >= width;
    if (overlaps)
      return failure();
    plan.offsets.push_back(o);
    plan.sizes.push_back(n);
    end = o + n;
  }
  return success();
}

/// The constant a weight is (dense or dense_resource), or null.
ElementsAttr constantWeight(Value w) {
  auto k = w.getDefiningOp<arith::ConstantOp>();
  return k ? dyn_cast<ElementsAttr>(k.getValue()) : ElementsAttr();
}

/// The raw bytes of a constant weight (row-major), or an empty array.
ArrayRef<char> rawBytes(ElementsAttr attr) {
  if (auto d = dyn_cast<DenseElementsAttr>(attr))
    return d.isSplat() ? ArrayRef<char>() : d.getRawData();
  if (auto r = dyn_cast<DenseResourceElementsAttr>(attr))
    if (AsmResourceBlob *blob = r.getRawHandle().getBlob())
      return blob->getData();
  return {};
}

/// Matches the interleaved split behind `e` (see SplitPlan) into `plan`, and
/// de-interleaves the constant weight; `why` says what does not fit.
LogicalResult matchInterleaved(tensor::ExpandShapeOp e, SplitPlan &plan,
                               std::string &why) {
  const std::string interleave =
      "the result is reshaped into head groups and split inside each group "
      "(the parts' columns interleave)";
  SmallVector<ReassociationIndices> re = e.getReassociationIndices();
  RankedTensorType et = e.getResultType();
  const int64_t rank = et.getRank();
  if (re.size() < 2 || re.back().size() != 2 || et.isDynamicDim(rank - 1) ||
      et.isDynamicDim(rank - 2)) {
    why = interleave + ", into more than two or dynamic dimensions";
    return failure();
  }
  plan.groups = et.getDimSize(rank - 2);
  plan.groupSize = et.getDimSize(rank - 1);
  for (Operation *u : e->getUsers()) {
    auto s = dyn_cast<tensor::ExtractSliceOp>(u);
    if (!s || !s.hasUnitStride() || s.getResultType().getRank() != rank ||
        !s->hasOneUse()) {
      why = interleave + "; a use is not a unit-stride slice of one use";
      return failure();
    }
    // Every token dimension and the group dimension whole (a dynamic
    // token count read off the same size).
    for (int64_t d = 0; d + 1 < rank; ++d)
      if (!isConstantIntValue(s.getMixedOffsets()[d], 0) ||
          !isSizeOf(s.getMixedSizes()[d], e.getResult(), d)) {
        why = interleave + "; a slice cuts a token dimension or a group";
        return failure();
      }
    auto c = dyn_cast<tensor::CollapseShapeOp>(*s->getUsers().begin());
    SmallVector<ReassociationIndices> cre;
    if (c)
      cre = c.getReassociationIndices();
    if (!c || cre.size() != size_t(rank - 1) || cre.back().size() != 2 ||
        cre.back()[0] != rank - 2 ||
        !llvm::all_of(llvm::drop_end(cre), [](const ReassociationIndices &r) {
          return r.size() == 1;
        })) {
      why = interleave + "; a part is not collapsed back to [tokens..., "
                         "groups x width]";
      return failure();
    }
    plan.slices.push_back(s);
  }
  if (failed(orderSlices(plan))) {
    why = interleave + "; the parts overlap or have dynamic widths";
    return failure();
  }
  for (tensor::ExtractSliceOp s : plan.slices)
    plan.collapses.push_back(
        cast<tensor::CollapseShapeOp>(*s->getUsers().begin()));
  if (plan.slices.size() < 2)
    return failure();
  // A constant weight's rows are de-interleaved here, once (one constant per
  // part); any other weight is read in place: each part a [G, w, K] view of
  // its head groups, which the paired op takes as a row-grouped weight.
  Projection &p = plan.proj;
  ElementsAttr w = constantWeight(p.weight);
  auto wt = cast<RankedTensorType>(p.weight.getType());
  ArrayRef<char> raw = w ? rawBytes(w) : ArrayRef<char>();
  const int64_t h = wt.getDimSize(p.kn ? 1 : 0), k = wt.getDimSize(p.kn ? 0 : 1);
  if (h != plan.groups * plan.groupSize) {
    why = interleave + "; the weight's width is dynamic or not groups x "
                       "group size";
    return failure();
  }
  const int64_t esize =
      wt.getElementType().getIntOrFloatBitWidth() / 8;
  if (raw.empty() || !wt.hasStaticShape() ||
      wt.getElementType().getIntOrFloatBitWidth() % 8 != 0 ||
      int64_t(raw.size()) != wt.getNumElements() * esize) {
    plan.inPlace = true;
    plan.expand = e;
    return success();
  }
  for (auto [o, n] : llvm::zip(plan.offsets, plan.sizes)) {
    const int64_t rows = plan.groups * n;
    std::vector<char> bytes(size_t(rows * k * esize));
    for (int64_t g = 0; g < plan.groups; ++g)
      for (int64_t r = 0; r < n; ++r) {
        const int64_t src = g * plan.groupSize + o + r, dst = g * n + r;
        for (int64_t j = 0; j < k; ++j) {
          // [H, K] rows, or [K, H] columns.
          const int64_t from = p.kn ? j * h + src : src * k + j;
          const int64_t to = p.kn ? j * rows + dst : dst * k + j;
          std::memcpy(&bytes[size_t(to * esize)], &raw[size_t(from * esize)],
                      size_t(esize));
        }
      }
    auto type = RankedTensorType::get(
        p.kn ? SmallVector<int64_t>{k, rows} : SmallVector<int64_t>{rows, k},
        wt.getElementType());
    plan.parts.push_back(DenseElementsAttr::getFromRawBuffer(type, bytes));
  }
  plan.expand = e;
  return success();
}

/// True if `g` is the output step of a (bf16) Linear that a split can clone
/// per part: an elementwise 2-D generic whose first input is `v` (identity
/// map) and whose other inputs are [H] columns (a bias: map (n, h) -> (h)),
/// the body casting floats and adding (the truncf of y, or of y + bias).
bool isSplittableOutputStep(linalg::GenericOp g, Value v) {
  if (!g || g.getNumDpsInputs() < 1 || g.getNumDpsInits() != 1 ||
      g.getNumLoops() != 2 || g.getNumParallelLoops() != 2 ||
      g.getDpsInputOperand(0)->get() != v)
    return false;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  SmallVector<Value> inputs = g.getDpsInputs();
  AffineMap column =
      AffineMap::get(2, 0, getAffineDimExpr(1, g.getContext()), g.getContext());
  for (auto [i, m] : llvm::enumerate(maps)) {
    const bool isColumn = i >= 1 && i < inputs.size();
    if (isColumn ? m != column : !m.isIdentity())
      return false;
    if (isColumn && inputs[i] == v) // the projection read twice
      return false;
  }
  for (Operation &op : g.getBody()->without_terminator())
    if (!isa<arith::TruncFOp, arith::ExtFOp, arith::AddFOp>(op))
      return false;
  return g.getBody()->getArguments().back().use_empty();
}

/// Recognises a split projection at `op`. Returns failure with `why` set
/// when the result is cut but not in a way the pass can express (an empty
/// `why` means: not a split at all).
FailureOr<SplitPlan> matchSplit(linalg::LinalgOp op, std::string &why) {
  std::optional<Projection> p = matchProjection(op);
  if (!p || p->unsupportedRule != DeclineRule::None || p->tokenRank != 1 ||
      p->lhsKDim != 1 || op->getNumResults() != 1)
    return failure();
  SplitPlan plan;
  plan.proj = *p;
  Value v = p->result();
  if (p->initBias) {
    if (!v.use_empty() && llvm::all_of(v.getUsers(), [](Operation *u) {
          return isa<tensor::ExtractSliceOp>(u);
        }))
      why = "the accumulator starts from a bias (addmm); the parts would "
            "need slices of it, which the split does not make";
    return failure();
  }
  if (v.hasOneUse())
    if (auto g = dyn_cast<linalg::GenericOp>(*v.getUsers().begin());
        isSplittableOutputStep(g, v)) {
      plan.rounding = g;
      v = g->getResult(0);
    }
  auto vt = cast<RankedTensorType>(v.getType());
  if (v.hasOneUse())
    if (auto r = dyn_cast<tensor::ReshapeOp>(*v.getUsers().begin())) {
      // fusion-normalize-elementwise has made every reshape that only
      // splits the tokens an expand_shape; this one also cuts the columns
      // (torch-mlir's head-group view with two dynamic token dimensions).
      if (llvm::any_of(r->getUsers(), [](Operation *u) {
            return isa<tensor::ExtractSliceOp>(u);
          }))
        why = "the result is reshaped by a tensor.reshape to a shape built "
              "from sizes that also cuts its columns (a head-group view with "
              "two dynamic token dimensions) before it is split; only an "
              "expand_shape is split";
      return failure();
    }
  if (v.hasOneUse())
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(*v.getUsers().begin())) {
      SmallVector<ReassociationIndices> re = e.getReassociationIndices();
      if (re.back().size() != 1) {
        if (llvm::none_of(e->getUsers(), [](Operation *u) {
              return isa<tensor::ExtractSliceOp>(u);
            }))
          return failure();
        if (plan.rounding && plan.rounding.getNumDpsInputs() > 1) {
          if (llvm::any_of(e->getUsers(), [](Operation *u) {
                return isa<tensor::ExtractSliceOp>(u);
              }))
            why = "the result is biased before a split into head groups; "
                  "the parts' biases would need de-interleaving, which the "
                  "split does not do";
          return failure();
        }
        if (failed(matchInterleaved(e, plan, why)))
          return failure();
        return plan;
      }
      plan.expand = e;
      v = e.getResult();
      vt = e.getResultType();
    }
  if (v.use_empty() ||
      !llvm::all_of(v.getUsers(), [](Operation *u) {
        return isa<tensor::ExtractSliceOp>(u);
      }))
    return failure();
  int64_t rank = vt.getRank();
  int64_t h = vt.getShape().back();
  int64_t stride = 0;
  for (Operation *u : v.getUsers()) {
    auto s = cast<tensor::ExtractSliceOp>(u);
    // Unit strides but along the columns, where every slice takes the same
    // static one (ranges, or every stride-th column).
    ArrayRef<int64_t> strides = s.getStaticStrides();
    const bool columnStride =
        !strides.empty() && !ShapedType::isDynamic(strides.back()) &&
        strides.back() >= 1 && (!stride || strides.back() == stride) &&
        llvm::all_of(strides.drop_back(), [](int64_t t) { return t == 1; });
    if (!columnStride || s.getSourceType().getRank() != rank ||
        s.getResultType().getRank() != rank || ShapedType::isDynamic(h)) {
      why = "the result is sliced with strides along its tokens, dynamic or "
            "different column strides, a rank change or dynamic sizes; only "
            "column ranges or every k-th column of a static width split";
      return failure();
    }
    stride = strides.back();
    ArrayRef<int64_t> offs = s.getStaticOffsets(), sz = s.getStaticSizes();
    // Every token dimension whole (a dynamic token count read off the
    // same size).
    for (int64_t d = 0; d + 1 < rank; ++d)
      if (!isConstantIntValue(s.getMixedOffsets()[d], 0) ||
          !isSizeOf(s.getMixedSizes()[d], v, d)) {
        why = "a slice cuts a token dimension";
        return failure();
      }
    if (ShapedType::isDynamic(offs.back()) || ShapedType::isDynamic(sz.back())) {
      why = "a slice has a dynamic column offset or size";
      return failure();
    }
    plan.slices.push_back(s);
  }
  plan.stride = stride;
  if (failed(orderSlices(plan, h))) {
    why = stride == 1 ? "the slices of the result overlap"
                      : "the strided slices of the result overlap (offsets "
                        "not distinct below the stride " +
                            std::to_string(stride) + ") or run past its " +
                            std::to_string(h) + " columns";
    return failure();
  }
  if (plan.slices.size() < 2)
    return failure();
  return plan;
}

/// p's weight expanded into its `groups` head groups of `groupSize` rows:
/// [G, groupSize, K] ([K, G, groupSize] with kn), a view.
Value expandWeightGroups(OpBuilder &b, Location loc, const Projection &p,
                         int64_t groups, int64_t groupSize) {
  auto wt = cast<RankedTensorType>(p.weight.getType());
  const int64_t k = wt.getDimSize(p.kn ? 0 : 1);
  SmallVector<ReassociationIndices> re =
      p.kn ? SmallVector<ReassociationIndices>{{0}, {1, 2}}
           : SmallVector<ReassociationIndices>{{0, 1}, {2}};
  auto expandedTy =
      RankedTensorType::get(p.kn ? SmallVector<int64_t>{k, groups, groupSize}
                                 : SmallVector<int64_t>{groups, groupSize, k},
                            wt.getElementType());
  OpFoldResult kSize = tensor::getMixedSize(b, loc, p.weight, p.kn ? 0 : 1);
  SmallVector<OpFoldResult> shape =
      p.kn ? SmallVector<OpFoldResult>{kSize, b.getIndexAttr(groups),
                                       b.getIndexAttr(groupSize)}
           : SmallVector<OpFoldResult>{b.getIndexAttr(groups),
                                       b.getIndexAttr(groupSize), kSize};
  return tensor::ExpandShapeOp::create(b, loc, expandedTy, p.weight, re, shape);
}

/// Rows [o, o + width) of each head group of `expanded` (expandWeightGroups)
/// as [G * width, K] ([K, G * width] with kn): sliced to [G, width, K],
/// collapsed. The slice is a view of the weight; the collapse would copy
/// it, but the pairing reads the slice instead (groupedWeightOf).
Value groupedWeightPart(OpBuilder &b, Location loc, const Projection &p,
                        Value expanded, int64_t o, int64_t width) {
  SmallVector<ReassociationIndices> re =
      p.kn ? SmallVector<ReassociationIndices>{{0}, {1, 2}}
           : SmallVector<ReassociationIndices>{{0, 1}, {2}};
  SmallVector<OpFoldResult> offs(3, b.getIndexAttr(0)),
      sizes = tensor::getMixedSizes(b, loc, expanded),
      strides(3, b.getIndexAttr(1));
  offs[p.kn ? 2 : 1] = b.getIndexAttr(o);
  sizes[p.kn ? 2 : 1] = b.getIndexAttr(width);
  Value slice =
      tensor::ExtractSliceOp::create(b, loc, expanded, offs, sizes, strides);
  return tensor::CollapseShapeOp::create(b, loc, slice, re);
}

/// The weight a paired op reads for a projection weight `w`: the [G, w, K]
/// ([K, G, w] with kn) head-group slice a collapse_shape of groupedWeightPart
/// merges, or `w` itself.
Value groupedWeightOf(Value w, bool kn) {
  auto c = w.getDefiningOp<tensor::CollapseShapeOp>();
  if (!c || c.getSrcType().getRank() != 3 ||
      !c.getSrc().getDefiningOp<tensor::ExtractSliceOp>())
    return w;
  SmallVector<ReassociationIndices> re = c.getReassociationIndices();
  const bool rows = kn ? re.size() == 2 && re[1].size() == 2
                       : re.size() == 2 && re[0].size() == 2;
  return rows ? c.getSrc() : w;
}

/// Rewrites a split projection into one projection per part, each over rows
/// [o, o + h) of the weight (columns when it is [K, H]; rows o + stride * r,
/// r < h, for a strided split): a linalg.matmul of
/// the same LHS with an extract_slice of the weight (a view), followed by a
/// clone of the rounding and of the expand_shape. Adds the ops it erases to
/// `erased`.
void rewriteSplit(SplitPlan &plan, DenseSet<Operation *> &erased) {
  const bool interleaved = plan.groups > 0;
  Projection &p = plan.proj;
  Operation *op = p.op;
  OpBuilder b(plan.slices.front());
  b.setInsertionPointAfter(plan.expand ? plan.expand.getOperation()
                           : plan.rounding ? plan.rounding.getOperation()
                                           : op);
  Location loc = op->getLoc();
  MLIRContext *ctx = op->getContext();
  OpFoldResult n = tensor::getMixedSize(b, loc, p.lhs, 0);
  OpFoldResult k = tensor::getMixedSize(b, loc, p.lhs, 1);
  AffineExpr dn, dh, dk;
  bindDims(ctx, dn, dh, dk);
  auto map = [&](ArrayRef<AffineExpr> r) { return AffineMap::get(3, 0, r, ctx); };
  SmallVector<Attribute> maps = {
      AffineMapAttr::get(map({dn, dk})),
      AffineMapAttr::get(p.kn ? map({dk, dh}) : map({dh, dk})),
      AffineMapAttr::get(map({dn, dh}))};
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(p.accType));
  Value expanded; // the weight's head groups (in-place parts), made once
  for (auto [i, s, o, width] : llvm::enumerate(plan.slices, plan.offsets, plan.sizes)) {
    // Rows of the part: a range of the weight, its de-interleaved rows
    // (every group's [o, o + width)) as a new constant, or those rows in
    // place: the [G, width, K] slice of the weight expanded into its head
    // groups, collapsed to the matmul's [G * width, K] (the pairing takes
    // the slice itself as the paired op's row-grouped weight).
    const int64_t h = interleaved ? plan.groups * width : width;
    Value w;
    if (interleaved && plan.inPlace) {
      if (!expanded)
        expanded = expandWeightGroups(b, loc, p, plan.groups, plan.groupSize);
      w = groupedWeightPart(b, loc, p, expanded, o, width);
    } else if (interleaved) {
      w = arith::ConstantOp::create(b, loc, plan.parts[i]);
    } else {
      SmallVector<OpFoldResult> offs(2, b.getIndexAttr(0)), sizes,
          strides(2, b.getIndexAttr(1));
      if (p.kn) {
        offs[1] = b.getIndexAttr(o);
        sizes = {k, b.getIndexAttr(h)};
        strides[1] = b.getIndexAttr(plan.stride);
      } else {
        offs[0] = b.getIndexAttr(o);
        sizes = {b.getIndexAttr(h), k};
        strides[0] = b.getIndexAttr(plan.stride);
      }
      w = tensor::ExtractSliceOp::create(b, loc, p.weight, offs, sizes, strides);
    }
    Value empty = tensor::EmptyOp::create(b, loc, SmallVector<OpFoldResult>{n, b.getIndexAttr(h)}, p.accType);
    Value acc = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
    auto mm = linalg::MatmulOp::create(b, loc, TypeRange{acc.getType()},
                                       ValueRange{p.lhs, w}, ValueRange{acc});
    mm->setAttr("indexing_maps", b.getArrayAttr(maps));
    Value v = mm->getResult(0);
    if (linalg::GenericOp r = plan.rounding) {
      // The output step of the part: the projection's rows [o, o + h), its
      // bias columns the same range of each bias (every stride-th from o).
      Type et = getElementTypeOrSelf(r->getResult(0).getType());
      Value out = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, v), et);
      SmallVector<Value> ins{v}, rIns = r.getDpsInputs();
      for (Value col : ArrayRef<Value>(rIns).drop_front())
        ins.push_back(tensor::ExtractSliceOp::create(
            b, loc, col, ArrayRef<OpFoldResult>{b.getIndexAttr(o)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(h)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(plan.stride)}));
      v = cloneGenericOnto(b, loc, r, ins, out).getResult(0);
    }
    if (tensor::ExpandShapeOp e = plan.expand; e && interleaved) {
      // Tokens expanded as before; the part's columns stay one dimension,
      // the type of the collapse_shape it replaces.
      tensor::CollapseShapeOp c = plan.collapses[i];
      SmallVector<ReassociationIndices> re = e.getReassociationIndices();
      re.back() = {re.back().front()};
      SmallVector<OpFoldResult> shape = e.getMixedOutputShape();
      shape.pop_back();
      shape.back() = b.getIndexAttr(h);
      if (re.size() == 2 && re.front().size() == 1)
        c.getResult().replaceAllUsesWith(v); // [N, H]: no token expansion
      else
        c.getResult().replaceAllUsesWith(tensor::ExpandShapeOp::create(
            b, loc, c.getResultType(), v, re, shape));
      continue;
    }
    if (tensor::ExpandShapeOp e = plan.expand) {
      SmallVector<OpFoldResult> shape = e.getMixedOutputShape();
      shape.back() = b.getIndexAttr(h);
      v = tensor::ExpandShapeOp::create(b, loc, s.getResultType(), v,
                                        e.getReassociationIndices(), shape);
    }
    s.getResult().replaceAllUsesWith(v);
  }
  auto erase = [&](Operation *dead) {
    erased.insert(dead);
    dead->erase();
  };
  for (tensor::CollapseShapeOp c : plan.collapses)
    erase(c);
  for (tensor::ExtractSliceOp s : plan.slices)
    erase(s);
  if (plan.expand)
    erase(plan.expand);
  if (plan.rounding)
    erase(plan.rounding);
  SmallVector<Value> operands(op->getOperands());
  erase(op);
  for (Value v : operands)
    if (Operation *def = v.getDefiningOp(); def && isOpTriviallyDead(def))
      erase(def);
}

struct FusePairedProjectionsPass
    : public fusion::impl::FusePairedProjectionsBase<
          FusePairedProjectionsPass> {
  using FusePairedProjectionsBase::FusePairedProjectionsBase;

  void runOnOperation() override;

private:
  /// Ops erased so far (their projections are skipped).
  DenseSet<Operation *> erased;

  remark::RemarkOpts remarkOpts(StringRef function) const {
    return remark::RemarkOpts::name("FusePairedProjections")
        .category("fusion")
        .function(function);
  }
};

/// The admission rules on two projections (placement aside).
FailureOr<PairPlan> checkPair(const Projection &a, const Projection &b,
                              MatchFailure &why);
/// Where the fused op goes (plan.anchor), or the decline.
LogicalResult placement(PairPlan &plan, DominanceInfo &dom, MatchFailure &why);

FailureOr<PairPlan> checkPair(const Projection &a, const Projection &b,
                              MatchFailure &why) {
  auto decline = [&](DeclineRule rule, const Twine &detail) {
    why.rule = rule;
    why.detail = detail.str();
    return failure();
  };
  linalg::GenericOp gatedConsumer = getGatedConsumer(a.result(), b.result());

  // Same input.
  if (a.lhs != b.lhs) {
    if (equalComputations(a.lhs, b.lhs))
      return decline(DeclineRule::DifferentLhs,
                     "the inputs are equal computations under two SSA names "
                     "(run cse first)");
    return decline(DeclineRule::DifferentLhs,
                   gatedConsumer
                       ? "the gated activation multiplies projections of two "
                         "different inputs"
                       : "the projections read different inputs");
  }

  // Same K and element types.
  if (a.lhsKDim != b.lhsKDim)
    return decline(DeclineRule::DifferentKOrTypes,
                   "the projections contract dimensions " + Twine(a.lhsKDim) +
                       " and " + Twine(b.lhsKDim) + " of the LHS");
  if (a.weightElementType() != b.weightElementType())
    return decline(DeclineRule::DifferentKOrTypes,
                   "weight element types " + typeStr(a.weightElementType()) +
                       " and " + typeStr(b.weightElementType()));
  if (a.accType != b.accType)
    return decline(DeclineRule::DifferentKOrTypes,
                   "accumulator element types " + typeStr(a.accType) + " and " +
                       typeStr(b.accType));
  if (a.weightElementType() != a.lhsElementType())
    return decline(DeclineRule::DifferentKOrTypes,
                   "the weights are " + typeStr(a.weightElementType()) +
                       " but the LHS is " + typeStr(a.lhsElementType()) +
                       " (the paired op reads both in one type)");

  // Independence: neither projection reaches the other through its
  // operands.
  auto reaches = [](Operation *from, Operation *target) {
    SetVector<Operation *> slice;
    BackwardSliceOptions opts;
    opts.omitUsesFromAbove = false;
    (void)getBackwardSlice(from, &slice, opts);
    return slice.contains(target);
  };
  if (reaches(b.op, a.op) || reaches(a.op, b.op))
    return decline(DeclineRule::DependencyBetweenProjections,
                   "one projection's operands are computed from the other's "
                   "result");

  // Each projection on its own.
  for (const Projection *p : {&a, &b})
    if (p->unsupportedRule != DeclineRule::None)
      return decline(p->unsupportedRule, p->unsupportedDetail);
  if (a.kn != b.kn)
    return decline(DeclineRule::DifferentWeightLayouts,
                   "one weight is [H, K] and the other [K, H]");

  // Epilogues.
  PairPlan plan;
  plan.proj[0] = a;
  plan.proj[1] = b;
  // The accumulator starts from a bias (addmm): a rounding of it rounds
  // the sum (`round(T, with_bias)`); another bias is one too many.
  auto declineSecondBias = [&](StringRef where) {
    return decline(DeclineRule::UnsupportedEpilogue,
                   ("a bias in the accumulator and another in the " + where)
                       .str());
  };
  unsigned gateIndex = 0;
  if (GatedActQuantizeOp gq = getGatedQuantizeConsumer(
          a.result(), b.result(), gateIndex, plan.epi)) {
    if (gateIndex == 1) {
      std::swap(plan.proj[0], plan.proj[1]);
      std::swap(plan.epi[0], plan.epi[1]);
    }
    plan.gatedQuant = gq;
    if (gq.getRng())
      return decline(DeclineRule::UnsupportedEpilogue,
                     "the gated quantizer takes an rng operand (stochastic "
                     "rounding), which the quantizing paired op does not");
    if (a.tokenRank > 1 && gq.getScheme().hasColwise())
      return decline(DeclineRule::UnsupportedEpilogue,
                     "a colwise copy of a result with several token "
                     "dimensions (the fused op quantizes the collapsed "
                     "[N, H] result; only rowwise blocks are the same there)");
    for (unsigned i = 0; i < 2; ++i) {
      // The gated quantizer reads the value as stored: a result narrower
      // than the accumulator is the accumulator rounded to it.
      Type stored = getElementTypeOrSelf(plan.epi[i].result.getType());
      if (!plan.epi[i].round && stored != plan.proj[i].accType) {
        if (!stored.isBF16() && !stored.isF16())
          return decline(DeclineRule::UnsupportedEpilogue,
                         "the gated quantizer reads the projection as " +
                             typeStr(stored) +
                             " (the fused op rounds the accumulator to bf16 "
                             "or f16 only)");
        // The stored value is y [+ b] rounded: a bias epilogue's bias is
        // added before that rounding (a Linear with bias=True).
        plan.epi[i].round = stored;
        plan.epi[i].roundWithBias = plan.epi[i].bias.has_value();
      }
      if (Value initBias = plan.proj[i].initBias) {
        if (plan.epi[i].bias)
          return declineSecondBias("epilogue");
        plan.epi[i].kind = EpilogueKind::bias;
        plan.epi[i].bias = ColumnParam();
        plan.epi[i].bias->tensor = initBias;
        plan.epi[i].roundWithBias = plan.epi[i].round != Type();
      }
    }
    plan.score = 4;
    return plan;
  }
  FailureOr<GatedMatch> g = failure();
  if (gatedConsumer) {
    // A gated body that is not a gated activation (e.g. SwiGLU followed by
    // a quantize-dequantize in one generic): the projections still pair,
    // their accumulators the fused op's results, and the body stays.
    MatchFailure gatedWhy;
    g = matchGated(a.result(), b.result(), gatedWhy);
    if (failed(g))
      plan.gatedLeft = gatedWhy.detail;
  }
  if (succeeded(g)) {
    plan.gated = *g;
    if (g->gateIndex == 1)
      std::swap(plan.proj[0], plan.proj[1]);
    // A bias the accumulator starts from is the gate's or up's bias.
    for (auto [p, bias, round, withBias] :
         {std::tuple(&plan.proj[0], &plan.gated->gateBias, plan.gated->gateRound,
                     &plan.gated->gateRoundWithBias),
          std::tuple(&plan.proj[1], &plan.gated->upBias, plan.gated->upRound,
                     &plan.gated->upRoundWithBias)}) {
      if (!p->initBias)
        continue;
      if (*bias)
        return declineSecondBias("gated body");
      *bias = ColumnParam();
      (*bias)->tensor = p->initBias;
      *withBias = round != Type();
    }
    plan.score = 3;
    return plan;
  }
  for (unsigned i = 0; i < 2; ++i) {
    // Under a gated body left as it is, each accumulator is the result.
    FailureOr<EpilogueMatch> e =
        plan.gatedLeft.empty() ? matchEpilogue(plan.proj[i].result(), why)
                               : FailureOr<EpilogueMatch>(EpilogueMatch());
    if (succeeded(e) && !plan.gatedLeft.empty())
      e->result = plan.proj[i].result();
    if (failed(e))
      return failure();
    plan.epi[i] = *e;
    if (Value initBias = plan.proj[i].initBias) {
      // y starts from a bias (torch-mlir's addmm): `none` takes it as
      // `bias`, sigmoid and silu without a bias of their own as theirs
      // (sigmoid(y + b)); the fused op adds one bias per projection.
      bool activation =
          e->kind == EpilogueKind::sigmoid || e->kind == EpilogueKind::silu;
      if (e->kind != EpilogueKind::none && !(activation && !e->bias))
        return decline(DeclineRule::UnsupportedEpilogue,
                       "the accumulator starts from a bias and the epilogue "
                       "is " +
                           stringifyEpilogueKind(e->kind) +
                           (e->bias ? " with a bias of its own" : "") +
                           " (the fused op adds one bias, to y, before a "
                           "sigmoid or silu)");
      if (e->kind == EpilogueKind::none)
        plan.epi[i].kind = EpilogueKind::bias;
      plan.epi[i].bias = ColumnParam();
      plan.epi[i].bias->tensor = initBias;
      // A rounding of the accumulator rounds the sum with its bias.
      plan.epi[i].roundWithBias = e->round != Type();
    }
    if (plan.epi[i].kind != EpilogueKind::none)
      ++plan.score;
  }
  // Epilogue operands must not depend on the other projection either.
  for (unsigned i = 0; i < 2; ++i)
    if (plan.epi[i].generic &&
        reaches(plan.epi[i].generic, plan.proj[1 - i].op))
      return decline(DeclineRule::DependencyBetweenProjections,
                     "one epilogue reads a value computed from the other "
                     "projection");
  return plan;
}

LogicalResult placement(PairPlan &plan, DominanceInfo &dom, MatchFailure &why) {
  // The roots whose results the fused op replaces.
  SmallVector<Operation *, 2> roots;
  if (plan.gated) {
    roots.push_back(plan.gated->generic);
  } else if (plan.gatedQuant) {
    roots.push_back(plan.gatedQuant);
  } else {
    roots.push_back(rootOf(plan.proj[0], plan.epi[0]));
    roots.push_back(rootOf(plan.proj[1], plan.epi[1]));
  }
  // The values the fused op and the materialised parameters read.
  SmallVector<Value> operands{plan.proj[0].lhs, plan.proj[0].weight,
                              plan.proj[1].weight};
  auto addParam = [&](linalg::GenericOp g,
                      const std::optional<ColumnParam> &p) {
    if (p)
      llvm::append_range(operands, columnParamSources(g, *p));
  };
  if (plan.gatedQuant && plan.gatedQuant.getScale())
    operands.push_back(plan.gatedQuant.getScale()); // FP8 delayed scaling
  if (plan.gated) {
    addParam(plan.gated->generic, plan.gated->gateBias);
    addParam(plan.gated->generic, plan.gated->upBias);
  } else {
    for (EpilogueMatch &e : plan.epi) {
      addParam(e.generic, e.bias);
      addParam(e.generic, e.scale);
    }
  }
  // Try before the first root, then before the last one.
  SmallVector<Operation *, 2> anchors(roots);
  llvm::sort(anchors,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  for (Operation *anchor : anchors) {
    bool ok = llvm::all_of(
        operands, [&](Value v) { return dom.properlyDominates(v, anchor); });
    for (Operation *root : roots)
      for (Operation *user : root->getUsers())
        ok = ok && dom.dominates(anchor, user);
    if (ok) {
      plan.anchor = anchor;
      return success();
    }
  }
  why.rule = DeclineRule::DependencyBetweenProjections;
  why.detail = "no point of the block sees every operand of the pair and "
               "precedes every use of its results";
  return failure();
}

} // namespace

FailureOr<PairedProjectionPlan>
mlir::fusion::planPairedProjection(linalg::LinalgOp a, linalg::LinalgOp b,
                                   DominanceInfo &dom, MatchFailure *why) {
  MatchFailure local;
  MatchFailure &w = why ? *why : local;
  if (!a || !b) {
    w = {DeclineRule::UnsupportedProjection, "no op given"};
    return failure();
  }
  std::optional<Projection> pa = matchProjection(a), pb = matchProjection(b);
  if (!pa || !pb) {
    w = {DeclineRule::UnsupportedProjection,
         "'" + (pa ? b : a)->getName().getStringRef().str() +
             "' is not a projection (a contraction of an activation by a "
             "weight)"};
    return failure();
  }
  if (a->getBlock() != b->getBlock()) {
    w = {DeclineRule::DependencyBetweenProjections,
         "the projections are in different blocks"};
    return failure();
  }
  FailureOr<PairPlan> plan = checkPair(*pa, *pb, w);
  if (failed(plan) || failed(placement(*plan, dom, w)))
    return failure();
  return plan;
}

FailureOr<PairedProjectionOp>
mlir::fusion::rewritePairedProjection(RewriterBase &rewriter,
                                      const PairedProjectionPlan &plan,
                                      DenseSet<Operation *> *erasedOps) {
  DenseSet<Operation *> localErased;
  DenseSet<Operation *> &erased = erasedOps ? *erasedOps : localErased;
  auto eraseWithDeadProducers = [&](ArrayRef<Operation *> ops) {
    fusion::eraseWithDeadProducers(rewriter, ops, erased);
  };
  Operation *anchor = plan.anchor;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(anchor);
  RewriterBase &b = rewriter;
  MLIRContext *ctx = rewriter.getContext();
  Location loc =
      b.getFusedLoc({plan.proj[0].op->getLoc(), plan.proj[1].op->getLoc()});
  // H of each projection, computed once (a tensor.dim when dynamic).
  DenseMap<Value, OpFoldResult> hSizes;
  auto hSize = [&](const Projection &p) {
    auto it = hSizes.find(p.weight);
    if (it == hSizes.end())
      it = hSizes
               .try_emplace(p.weight, tensor::getMixedSize(b, loc, p.weight,
                                                           p.kn ? 1 : 0))
               .first;
    return it->second;
  };

  Value bias[2], scale[2];
  EpilogueKind kinds[2] = {EpilogueKind::none, EpilogueKind::none};
  SmallVector<Type, 2> resultTypes;
  ActivationAttr gatedAttr;
  TypeAttr rounds[2];
  bool withBias[2] = {false, false};
  auto typeAttr = [](Type t) { return t ? TypeAttr::get(t) : TypeAttr(); };
  SmallVector<Operation *> roots;
  if (plan.gated) {
    const GatedMatch &g = *plan.gated;
    if (g.gateBias) {
      kinds[0] = EpilogueKind::bias;
      bias[0] = materializeColumnParam(b, loc, g.generic, *g.gateBias,
                                       hSize(plan.proj[0]));
    }
    if (g.upBias) {
      kinds[1] = EpilogueKind::bias;
      bias[1] = materializeColumnParam(b, loc, g.generic, *g.upBias,
                                       hSize(plan.proj[1]));
    }
    gatedAttr = ActivationAttr::get(ctx, g.kind);
    rounds[0] = typeAttr(g.gateRound);
    rounds[1] = typeAttr(g.upRound);
    withBias[0] = g.gateRoundWithBias;
    withBias[1] = g.upRoundWithBias;
    resultTypes.push_back(g.generic->getResult(0).getType());
    roots.push_back(g.generic);
  } else {
    for (unsigned i = 0; i < 2; ++i) {
      const EpilogueMatch &e = plan.epi[i];
      kinds[i] = e.kind;
      rounds[i] = typeAttr(e.round);
      withBias[i] = e.roundWithBias;
      if (e.bias)
        bias[i] = materializeColumnParam(b, loc, e.generic, *e.bias,
                                         hSize(plan.proj[i]));
      if (e.scale)
        scale[i] = materializeColumnParam(b, loc, e.generic, *e.scale,
                                          hSize(plan.proj[i]));
      if (!plan.gatedQuant) {
        // An activation computed in bf16 / f16, then widened: the fused op
        // stores the narrow value, a widening generic follows it.
        auto rt = cast<RankedTensorType>(e.result.getType());
        resultTypes.push_back(e.widenFrom ? rt.clone(e.widenFrom) : rt);
        roots.push_back(rootOf(plan.proj[i], e));
      }
    }
  }
  QuantSchemeAttr quant;
  TypeAttr intermediate;
  Value quantScale;
  if (GatedActQuantizeOp gq = plan.gatedQuant) {
    gatedAttr = gq.getActivation();
    quant = gq.getScheme();
    quantScale = gq.getScale();
    intermediate = gq.getIntermediateAttr();
    llvm::append_range(resultTypes, gq->getResultTypes());
    roots.push_back(gq);
    for (const EpilogueMatch &e : plan.epi)
      if (e.generic)
        roots.push_back(e.generic);
  }
  // The values the fused op's results replace, in its result order.
  SmallVector<Value> replacedValues;
  if (plan.gatedQuant)
    llvm::append_range(replacedValues, plan.gatedQuant->getResults());
  else
    for (Operation *root : roots)
      replacedValues.push_back(root->getResult(0));
  // The runtime reads bias and scale as f32 or as the input's element type.
  Type lhsElem = plan.proj[0].lhsElementType();
  for (Value *v : {&bias[0], &bias[1], &scale[0], &scale[1]})
    if (*v && getElementTypeOrSelf(v->getType()) != lhsElem)
      *v = castToF32(b, loc, *v);
  // Several token dimensions: collapse x to [N, K] and the results to
  // [N, H] around the fused op.
  Value lhs = plan.proj[0].lhs;
  int64_t tokenRank = plan.proj[0].tokenRank;
  SmallVector<ReassociationIndices> reassoc;
  if (tokenRank > 1) {
    reassoc.push_back(llvm::to_vector(llvm::seq<int64_t>(0, tokenRank)));
    reassoc.push_back({tokenRank});
    lhs = tensor::CollapseShapeOp::create(b, loc, lhs, reassoc);
    int64_t rows = cast<RankedTensorType>(lhs.getType()).getDimSize(0);
    // Per-token results (not a per-tensor quantizer's [1] scale or amax).
    for (Type &t : resultTypes) {
      auto rt = cast<RankedTensorType>(t);
      if (rt.getRank() == tokenRank + 1)
        t = RankedTensorType::get({rows, rt.getShape().back()},
                                  rt.getElementType());
    }
  }
  // Destinations: [N, H] (or [H]) of each result; a quantizer's own, rank
  // collapsed like the results, for the quantizing form.
  SmallVector<Value, 2> outs;
  if (plan.gatedQuant)
    for (auto [out, t] :
         llvm::zip(GatedActQuantizeOp(plan.gatedQuant).getOuts(), resultTypes))
      outs.push_back(out.getType() == t ? out
                                        : tensor::CollapseShapeOp::create(
                                              b, loc, out, reassoc)
                                              .getResult());
  for (auto [i, t] : llvm::enumerate(resultTypes)) {
    if (plan.gatedQuant)
      break;
    auto rt = cast<RankedTensorType>(t);
    SmallVector<Value, 2> dynSizes;
    if (rt.getRank() == 2 && rt.isDynamicDim(0))
      dynSizes.push_back(tensor::DimOp::create(b, loc, lhs, 0));
    if (rt.isDynamicDim(rt.getRank() - 1))
      dynSizes.push_back(
          getValueOrCreateConstantIndexOp(b, loc, hSize(plan.proj[i])));
    outs.push_back(tensor::EmptyOp::create(b, loc, rt, dynSizes));
  }
  auto fused = PairedProjectionOp::create(
      b, loc, resultTypes, lhs,
      groupedWeightOf(plan.proj[0].weight, plan.proj[0].kn),
      groupedWeightOf(plan.proj[1].weight, plan.proj[1].kn), bias[0], scale[0],
      bias[1], scale[1], quantScale, outs, kinds[0], kinds[1], gatedAttr,
      plan.proj[0].kn, rounds[0], rounds[1], withBias[0], withBias[1], quant,
      intermediate);
  // The rules imply a valid op; a failure here is a bug, reported as a
  // decline rather than as invalid IR.
  LogicalResult verified = verifyQuietly(fused);
  if (failed(verified)) {
    SmallVector<Value> created{bias[0], bias[1], scale[0], scale[1]};
    for (Value out : outs)
      if (out.getDefiningOp<tensor::EmptyOp>() ||
          out.getDefiningOp<tensor::CollapseShapeOp>())
        created.push_back(out);
    if (lhs != plan.proj[0].lhs)
      created.push_back(lhs);
    rewriter.eraseOp(fused);
    for (Value v : created)
      if (Operation *def = v ? v.getDefiningOp() : nullptr)
        if (def->isBeforeInBlock(anchor) && def->use_empty() &&
            def->getBlock() == anchor->getBlock())
          eraseWithDeadProducers({def});
    return failure();
  }
  for (auto [old, result] : llvm::zip(replacedValues, fused->getResults())) {
    Value replacement = result;
    if (getElementTypeOrSelf(old.getType()) !=
        getElementTypeOrSelf(result.getType()))
      replacement = castToF32(b, loc, result); // EpilogueMatch::widenFrom
    if (old.getType() != replacement.getType()) {
      auto type = cast<RankedTensorType>(old.getType());
      SmallVector<OpFoldResult> shape;
      for (int64_t d = 0; d < tokenRank; ++d)
        shape.push_back(tensor::getMixedSize(b, loc, plan.proj[0].lhs, d));
      shape.push_back(tensor::getMixedSize(b, loc, replacement, 1));
      replacement = tensor::ExpandShapeOp::create(b, loc, type, replacement,
                                                  reassoc, shape);
    }
    rewriter.replaceAllUsesWith(old, replacement);
  }
  SmallVector<Operation *> dead(roots);
  dead.push_back(plan.proj[0].op);
  dead.push_back(plan.proj[1].op);
  eraseWithDeadProducers(dead);
  return fused;
}

std::string
mlir::fusion::describePairedProjection(const PairedProjectionPlan &plan) {
  std::string s = "paired " + plan.proj[0].op->getName().getStringRef().str() +
                  " and " + plan.proj[1].op->getName().getStringRef().str() +
                  " into fusion.paired_projection ";
  // " with a gate bias", and where the bias is added before the rounding
  // (a Linear with bias=True) " rounded with it".
  auto biasPhrase = [](bool has, bool withBias, StringRef which) {
    if (!has)
      return std::string();
    return (" with " + which + " bias" + (withBias ? " rounded with it" : ""))
        .str();
  };
  if (GatedActQuantizeOp gq = plan.gatedQuant) {
    Type round = plan.epi[0].round ? plan.epi[0].round : plan.epi[1].round;
    return s + "gated " +
           stringifyActivationKind(gq.getActivation().getKind()).str() +
           (round ? " of the accumulators rounded to " + typeStr(round)
                  : std::string()) +
           biasPhrase(plan.epi[0].bias.has_value(), plan.epi[0].roundWithBias,
                      "a gate") +
           biasPhrase(plan.epi[1].bias.has_value(), plan.epi[1].roundWithBias,
                      "an up") +
           ", quantized " +
           stringifyQuantFormat(gq.getScheme().getFormat()).str() + " via " +
           typeStr(gq.getIntermediate()) +
           " (the fusion.gated_act_quantize it fed)";
  }
  if (plan.gated)
    return s + "gated " + stringifyActivationKind(plan.gated->kind).str() +
           (plan.gated->gateRound || plan.gated->upRound
                ? " of the accumulators rounded to " +
                      typeStr(plan.gated->gateRound ? plan.gated->gateRound
                                                    : plan.gated->upRound)
                : std::string()) +
           biasPhrase(plan.gated->gateBias.has_value(),
                      plan.gated->gateRoundWithBias, "a gate") +
           biasPhrase(plan.gated->upBias.has_value(),
                      plan.gated->upRoundWithBias, "an up");
  // Elementwise ops that read the epilogue's result only through a reshape
  // that normalisation could not move past them (a view that splits the
  // columns, read by a per-column-of-the-view operand) stay unfused: named,
  // so that an epilogue the program has does not go missing silently.
  auto afterReshape = [](Value r) -> std::string {
    if (!r || !r.hasOneUse())
      return "";
    Operation *reshape = *r.getUsers().begin();
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ReshapeOp>(
            reshape))
      return "";
    for (Operation *u : reshape->getResult(0).getUsers())
      if (auto g = dyn_cast<linalg::GenericOp>(u);
          g && g.getNumParallelLoops() == g.getNumLoops())
        return " (the elementwise op after its " +
               reshape->getName().getStringRef().str() +
               " stays unfused: the reshape is not moved past it)";
    return "";
  };
  auto epi = [&](unsigned i) {
    std::string r;
    if (Type t = plan.epi[i].round)
      r = "round(" + typeStr(t) +
          (plan.epi[i].roundWithBias ? ", with_bias" : "") + ") ";
    return r + stringifyEpilogueKind(plan.epi[i].kind).str() +
           afterReshape(plan.epi[i].result);
  };
  return s + "with epilogues " + epi(0) + ", " + epi(1) +
         (plan.gatedLeft.empty()
              ? std::string()
              : "; the generic that reads both stays as it is (" +
                    plan.gatedLeft + ")");
}

namespace {

void FusePairedProjectionsPass::runOnOperation() {
  func::FuncOp func = getOperation();
  StringRef function = func.getSymName();
  erased.clear();
  IRRewriter rewriter(&getContext());
  // Reads of a projection's sizes (tensor.dim, with dynamic token counts)
  // are no consumers of it: resolved to its operands' sizes first.
  resolveShapeReadsIn(func);
  // Projections over stacked weights, cut into parts: one projection per
  // part first, so that the parts pair like separate projections.
  bool splitAny = false;
  SmallVector<linalg::LinalgOp> contractions;
  func.walk([&](linalg::LinalgOp op) { contractions.push_back(op); });
  DenseSet<Operation *> splitErased;
  for (linalg::LinalgOp op : contractions) {
    if (splitErased.contains(op.getOperation()))
      continue; // the rounding generic of a projection split above
    std::string why;
    FailureOr<SplitPlan> split = matchSplit(op, why);
    std::lock_guard<std::mutex> lock(getRemarkMutex());
    if (failed(split)) {
      if (!why.empty()) {
        ++numDeclined;
        remark::missed(op->getLoc(), remarkOpts(function))
            << remark::reason("{0}",
                              declineTag(DeclineRule::UnsupportedSplit).str())
            << remark::add("{0}", why);
      }
      continue;
    }
    std::string ranges;
    const bool sameSizes = llvm::all_equal(split->sizes);
    for (auto [o, h] : llvm::zip(split->offsets, split->sizes))
      ranges += split->stride > 1
                    ? (ranges.empty() ? "" : ", ") + std::to_string(o) + " + " +
                          std::to_string(split->stride) + "r" +
                          (sameSizes ? "" : " (r < " + std::to_string(h) + ")")
                    : (ranges.empty() ? "[" : ", [") + std::to_string(o) +
                          ", " + std::to_string(o + h) + ")";
    if (split->stride > 1)
      ranges += (sameSizes ? " for r < " + std::to_string(split->sizes.front())
                           : std::string()) +
                " (interleaved columns, period " +
                std::to_string(split->stride) +
                ": each part a view of the weight with " +
                std::to_string(split->stride) + " times its row pitch)";
    if (split->inPlace)
      remark::passed(op->getLoc(), remarkOpts(function)) << remark::add(
          "split {0} into {1} projections over rows {2} of each of the {3} "
          "head groups of {4} rows of its weight (read in place: each part "
          "a row-grouped view of the weight)",
          op->getName().getStringRef(), split->slices.size(), ranges,
          split->groups, split->groupSize);
    else if (split->parts.empty())
      remark::passed(op->getLoc(), remarkOpts(function)) << remark::add(
          "split {0} into {1} projections over rows {2} of its weight{3}",
          op->getName().getStringRef(), split->slices.size(), ranges,
          split->rounding && split->rounding.getNumDpsInputs() > 1
              ? " and those columns of its bias"
              : "");
    else
      remark::passed(op->getLoc(), remarkOpts(function)) << remark::add(
          "split {0} into {1} projections over rows {2} of each of the {3} "
          "head groups of {4} rows of its constant weight (de-interleaved "
          "into one constant per part)",
          op->getName().getStringRef(), split->slices.size(), ranges,
          split->groups, split->groupSize);
    ++numSplit;
    splitAny = true;
    rewriteSplit(*split, splitErased);
  }
  // The parts' roundings fuse into their epilogues, as normalisation fuses
  // those of separate projections.
  if (splitAny) {
    RewritePatternSet patterns(&getContext());
    populateNormalizeFusionPatterns(patterns);
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(func, std::move(patterns), config)))
      return signalPassFailure();
  }
  SmallVector<Projection> projections;
  func.walk([&](linalg::LinalgOp op) {
    if (std::optional<Projection> p = matchProjection(op))
      projections.push_back(*p);
  });
  DominanceInfo &dom = getAnalysis<DominanceInfo>();

  // Candidate pairs: same block and the same LHS, one gated consumer, or
  // LHS values that are equal computations.
  struct Candidate {
    unsigned a, b;
    std::optional<PairPlan> plan;
    MatchFailure why;
  };
  std::vector<Candidate> candidates;
  size_t n = projections.size();
  SmallVector<bool> hasLaterPartner(n, false), hasPartner(n, false);
  for (unsigned i = 0; i < n; ++i) {
    for (unsigned j = i + 1; j < n; ++j) {
      const Projection &a = projections[i], &b = projections[j];
      if (a.op->getBlock() != b.op->getBlock())
        continue;
      if (a.lhs != b.lhs && !getGatedConsumer(a.result(), b.result()) &&
          !equalComputations(a.lhs, b.lhs))
        continue;
      Candidate c{i, j, std::nullopt, MatchFailure()};
      FailureOr<PairPlan> plan = planPairedProjection(a.op, b.op, dom, &c.why);
      if (succeeded(plan))
        c.plan = *plan;
      candidates.push_back(std::move(c));
      hasLaterPartner[i] = true;
      hasPartner[i] = hasPartner[j] = true;
    }
  }

  // Admitted pairs, best first: gated, then more non-trivial epilogues,
  // then program order; each projection is fused at most once.
  SmallVector<Candidate *> admitted;
  for (Candidate &c : candidates)
    if (c.plan)
      admitted.push_back(&c);
  llvm::stable_sort(admitted, [](Candidate *x, Candidate *y) {
    return x->plan->score > y->plan->score;
  });
  SmallVector<bool> fused(n, false);
  for (Candidate *c : admitted) {
    if (fused[c->a] || fused[c->b] ||
        erased.contains(projections[c->a].op) ||
        erased.contains(projections[c->b].op))
      continue;
    // Re-check against the IR as earlier rewrites left it.
    MatchFailure why;
    FailureOr<PairPlan> plan = planPairedProjection(
        projections[c->a].op, projections[c->b].op, dom, &why);
    if (failed(plan)) {
      c->plan.reset();
      c->why = why;
      continue;
    }
    Location seedLoc = projections[c->a].op->getLoc();
    std::string what = describePairedProjection(*plan);
    if (failed(rewritePairedProjection(rewriter, *plan, &erased))) {
      c->plan.reset();
      c->why = {DeclineRule::UnsupportedProjection,
                "the fused op would not verify"};
      continue;
    }
    fused[c->a] = fused[c->b] = true;
    ++numFused;
    std::lock_guard<std::mutex> lock(getRemarkMutex());
    remark::passed(seedLoc, remarkOpts(function)) << remark::add("{0}", what);
  }

  // One missed remark per projection left alone that had a partner: the
  // rule its nearest later partner failed, or that every partner was taken.
  for (unsigned i = 0; i < n; ++i) {
    if (fused[i] || !hasPartner[i] || erased.contains(projections[i].op))
      continue;
    const MatchFailure *why = nullptr;
    for (Candidate &c : candidates)
      if (c.a == i && !c.plan) {
        why = &c.why;
        break;
      }
    // A pair with an earlier projection is reported there, unless that one
    // was fused with another projection (the third projection of one x).
    bool earlierFused = false;
    for (Candidate &c : candidates)
      if (c.b == i && fused[c.a]) {
        earlierFused = true;
        if (!why && !c.plan)
          why = &c.why;
      }
    if (!why && (hasLaterPartner[i] || earlierFused)) {
      static const MatchFailure taken{
          DeclineRule::NoPartnerLeft,
          "every projection it could pair with was paired with another one"};
      why = &taken;
    }
    if (!why)
      continue; // reported at its earlier partner
    ++numDeclined;
    std::lock_guard<std::mutex> lock(getRemarkMutex());
    remark::missed(projections[i].op->getLoc(), remarkOpts(function))
        << remark::reason("{0}", declineTag(why->rule).str())
        << remark::add("{0}", why->detail);
  }
  // The split parts' outputs are sized off their new projections: resolved
  // too, so that a second run finds nothing to change.
  resolveShapeReadsIn(func);
}

} // namespace
