//===- ProjectionPairing.cpp - projections and their epilogues -----------===//
//
// Projections: roles are read from the indexing maps, not from operand
// positions, so linalg.matmul (either weight layout), linalg.matvec,
// linalg.vecmat and contraction generics are handled alike. The activation
// is the input indexed by the result's token dimension (result dim 0 of an
// [N, H] result) or, for an [H] result, the input that does not carry H.
//
// Epilogues: the body of the consuming elementwise generic is read as a
// function of y (the projection) and of per-column parameters (inputs
// indexed by the H dimension only, scalars, splat constants). The part that
// does not depend on y is kept as IR (it is cloned into an [H] computation
// by the pass); the part that does is compared with the reference epilogue
// on probe points (see `kProbeTolerance`).
//
//===----------------------------------------------------------------------===//
#include "fusion/Analysis/ProjectionPairing.h"

#include "fusion/Analysis/ActivationMatcher.h"
// The runtime's epilogue formulas (header only), the reference of the f32
// form probe (softplusForm).
#include "common/epilogue.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fusion;

//===----------------------------------------------------------------------===//
// Projections
//===----------------------------------------------------------------------===//

Type Projection::lhsElementType() const {
  return getElementTypeOrSelf(lhs.getType());
}

Type Projection::weightElementType() const {
  return getElementTypeOrSelf(weight.getType());
}

int64_t Projection::k() const {
  return cast<RankedTensorType>(lhs.getType()).getDimSize(lhsKDim);
}

/// The scalar a tensor holds everywhere, if it is a splat constant or a
/// linalg.fill of a constant.
static std::optional<double> getSplatValue(Value tensor) {
  if (auto cst = tensor.getDefiningOp<arith::ConstantOp>()) {
    if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue()))
      if (dense.isSplat() && isa<FloatType>(dense.getElementType()))
        return dense.getSplatValue<APFloat>().convertToDouble();
    return std::nullopt;
  }
  if (auto fill = tensor.getDefiningOp<linalg::FillOp>()) {
    FloatAttr f;
    if (matchPattern(fill.getInputs()[0], m_Constant(&f)))
      return f.getValueAsDouble();
  }
  return std::nullopt;
}

static std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// The position of loop `dim` among the results of `map`, if it is there.
static std::optional<unsigned> resultPos(AffineMap map, unsigned dim) {
  for (auto [i, e] : llvm::enumerate(map.getResults()))
    if (e.isFunctionOfDim(dim))
      return i;
  return std::nullopt;
}

/// If `v` ([..., H]) is an [H] vector broadcast over all leading dimensions
/// (linalg.broadcast, or the generic that fusion-normalize-elementwise makes
/// of it), that vector; otherwise null.
static Value getColumnBroadcastSource(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() < 2)
    return Value();
  SmallVector<int64_t> leading =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank() - 1));
  Value source;
  if (auto bc = v.getDefiningOp<linalg::BroadcastOp>()) {
    if (bc.getDimensions() == ArrayRef<int64_t>(leading))
      source = bc.getInput();
  } else if (auto g = v.getDefiningOp<linalg::GenericOp>()) {
    std::optional<SmallVector<int64_t>> dims =
        linalg::isaBroadcastOpInterface(g);
    if (dims && *dims == leading)
      source = g.getDpsInputOperand(0)->get();
  }
  if (!source || cast<RankedTensorType>(source.getType()).getRank() != 1 ||
      !isa<FloatType>(getElementTypeOrSelf(source.getType())))
    return Value();
  return source;
}

/// If `v` is a bf16 / f16 tensor widened to f32 by an elementwise generic
/// (its body one `arith.extf`), read in order or, for a 2-D tensor,
/// transposed (a 2-D transpose that fusion-normalize-elementwise folded into
/// it): that tensor, and whether it is read transposed.
static std::optional<std::pair<Value, bool>> getWideningSource(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops() ||
      !g.hasPureTensorSemantics())
    return std::nullopt;
  Block &body = g.getRegion().front();
  if (body.getOperations().size() != 2)
    return std::nullopt;
  auto ext = dyn_cast<arith::ExtFOp>(&body.front());
  if (!ext || ext.getIn() != body.getArgument(0) ||
      body.getTerminator()->getOperand(0) != ext.getResult() ||
      !ext.getType().isF32() ||
      !isa<BFloat16Type, Float16Type>(ext.getIn().getType()))
    return std::nullopt;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!maps[1].isIdentity())
    return std::nullopt;
  Value source = g.getDpsInputOperand(0)->get();
  if (maps[0].isIdentity())
    return std::make_pair(source, false);
  if (maps[0].getNumDims() == 2 && maps[0].isPermutation() &&
      maps[0].getDimPosition(0) == 1)
    return std::make_pair(source, true);
  return std::nullopt;
}

/// A 2-D tensor copied along one added dimension into a 3-D one: torch-mlir
/// broadcasts the weight of F.linear / matmul on a 3-D input across the
/// batch and multiplies with linalg.batch_matmul.
struct BatchBroadcast {
  Value source;
  /// The broadcast result's dimension that each source dimension becomes.
  unsigned resultDimOf[2];
  /// The added (batch) dimension of the result.
  unsigned batchDim;
};

/// If `v` ([B, P, Q] or another order) is a 2-D tensor broadcast along one
/// dimension, as linalg.broadcast or as a generic that yields its one input
/// read through a two-result projected permutation (a broadcast, possibly
/// with a transpose folded in by fusion-normalize-elementwise), the source
/// and how its dimensions land; otherwise nullopt.
static std::optional<BatchBroadcast> getBatchBroadcastSource(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() != 3)
    return std::nullopt;
  BatchBroadcast bc;
  if (auto op = v.getDefiningOp<linalg::BroadcastOp>()) {
    ArrayRef<int64_t> added = op.getDimensions();
    if (added.size() != 1)
      return std::nullopt;
    bc.source = op.getInput();
    bc.batchDim = added[0];
    unsigned j = 0;
    for (unsigned d = 0; d < 3; ++d)
      if (d != bc.batchDim)
        bc.resultDimOf[j++] = d;
    return bc;
  }
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops() || g.getNumLoops() != 3)
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  if (yield.getNumOperands() != 1 ||
      yield.getOperand(0) != g.getBody()->getArgument(0))
    return std::nullopt;
  AffineMap inMap = g.getMatchingIndexingMap(g.getDpsInputOperand(0));
  AffineMap outMap = g.getMatchingIndexingMap(g.getDpsInitOperand(0));
  if (!outMap.isIdentity() || !inMap.isProjectedPermutation() ||
      inMap.getNumResults() != 2)
    return std::nullopt;
  bc.source = g.getDpsInputOperand(0)->get();
  bc.resultDimOf[0] = inMap.getDimPosition(0);
  bc.resultDimOf[1] = inMap.getDimPosition(1);
  bc.batchDim = 3 - bc.resultDimOf[0] - bc.resultDimOf[1];
  return bc;
}

/// The element type the body multiplies in (the mulf result), if found.
static Type productType(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  for (Operation &inner : body->without_terminator())
    if (isa<arith::MulFOp>(inner))
      return inner.getResult(0).getType();
  return Type();
}

std::optional<Projection> mlir::fusion::matchProjection(linalg::LinalgOp op) {
  if (!op || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps,
                    [](AffineMap m) { return m.isProjectedPermutation(); }))
    return std::nullopt;
  AffineMap outMap = maps[2];
  unsigned outRank = outMap.getNumResults();
  if (outRank < 1)
    return std::nullopt;

  // H is the result's last dimension; N (when present) the one before.
  unsigned hLoop = outMap.getDimPosition(outRank - 1);
  std::optional<unsigned> nLoop;
  if (outRank >= 2)
    nLoop = outMap.getDimPosition(outRank - 2);
  int lhsIdx = -1;
  for (unsigned i = 0; i < 2; ++i) {
    bool hasH = resultPos(maps[i], hLoop).has_value();
    bool hasN = nLoop && resultPos(maps[i], *nLoop).has_value();
    if (!hasH && (hasN || !nLoop)) {
      if (lhsIdx >= 0)
        return std::nullopt;
      lhsIdx = i;
    }
  }
  if (lhsIdx < 0)
    return std::nullopt;
  unsigned wIdx = 1 - lhsIdx;
  AffineMap lhsMap = maps[lhsIdx], wMap = maps[wIdx];
  if (!resultPos(wMap, hLoop) || (nLoop && resultPos(wMap, *nLoop)))
    return std::nullopt;

  Projection p;
  p.op = op;
  p.lhs = op.getDpsInputOperand(lhsIdx)->get();
  p.weight = op.getDpsInputOperand(wIdx)->get();
  p.accType = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
  auto setUnsupported = [&](DeclineRule rule, const Twine &detail) {
    if (p.unsupportedRule == DeclineRule::None) {
      p.unsupportedRule = rule;
      p.unsupportedDetail = detail.str();
    }
  };

  // Contracted loops: in both inputs, not in the result.
  SmallVector<unsigned> kLoops;
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d)
    if (resultPos(lhsMap, d) && resultPos(wMap, d) && !resultPos(outMap, d))
      kLoops.push_back(d);
  if (kLoops.size() != 1)
    return std::nullopt;
  p.lhsKDim = *resultPos(lhsMap, kLoops[0]);
  unsigned wK = *resultPos(wMap, kLoops[0]);
  unsigned wH = *resultPos(wMap, hLoop);
  p.kn = wK < wH;
  // torch-mlir computes a bf16 / f16 Linear with bias=True in f32, on x and
  // the weight widened by extf: every product of two widened bf16 (f16)
  // values is exact in f32, so the contraction is the narrow one with an f32
  // accumulator, and the projection reads the narrow tensors (no f32 copy of
  // the weight at run time, and one input type with the unbiased Linears of
  // the same x).
  if (wMap.getNumResults() == 2 && p.accType.isF32()) {
    std::optional<std::pair<Value, bool>> wl = getWideningSource(p.lhs);
    std::optional<std::pair<Value, bool>> ww = getWideningSource(p.weight);
    if (wl && ww && !wl->second &&
        getElementTypeOrSelf(wl->first.getType()) ==
            getElementTypeOrSelf(ww->first.getType())) {
      p.lhs = wl->first;
      p.weight = ww->first;
      if (ww->second)
        p.kn = !p.kn;
    }
  }
  // A 3-D weight that is one [H, K] or [K, H] matrix broadcast along a
  // token (batch) dimension of the LHS and the result (torch-mlir's matmul
  // of a [B, T, K] input): read the matrix before the broadcast, whose
  // dimensions give the layout; the broadcast dies with the projection.
  bool batchedWeight = wMap.getNumResults() != 2;
  if (wMap.getNumResults() == 3) {
    if (std::optional<BatchBroadcast> bc = getBatchBroadcastSource(p.weight)) {
      unsigned loop0 = wMap.getDimPosition(bc->resultDimOf[0]);
      unsigned loop1 = wMap.getDimPosition(bc->resultDimOf[1]);
      unsigned batchLoop = wMap.getDimPosition(bc->batchDim);
      bool kh = (loop0 == kLoops[0] && loop1 == hLoop) ||
                (loop0 == hLoop && loop1 == kLoops[0]);
      if (kh && resultPos(lhsMap, batchLoop) && resultPos(outMap, batchLoop)) {
        p.weight = bc->source;
        p.kn = loop0 == kLoops[0];
        batchedWeight = false;
      }
    }
  }
  // torch-mlir writes F.linear as a linalg.transpose of the [H, K] weight
  // feeding a plain matmul: read the weight before the transpose (the fused
  // op takes either layout), so the transpose dies with the projection.
  // (fusion-normalize-elementwise turns that transpose into a generic.)
  if (auto tr = p.weight.getDefiningOp<linalg::TransposeOp>();
      tr && tr.getPermutation() == ArrayRef<int64_t>{1, 0}) {
    p.weight = tr.getInput();
    p.kn = !p.kn;
  } else if (auto g = p.weight.getDefiningOp<linalg::GenericOp>()) {
    std::optional<SmallVector<int64_t>> perm =
        linalg::isaTransposeOpInterface(g);
    if (perm && *perm == SmallVector<int64_t>{1, 0}) {
      p.weight = g.getDpsInputOperand(0)->get();
      p.kn = !p.kn;
    }
  }

  // Layouts the paired op takes: lhs [N, K] or [K], weight [H, K] or [K, H],
  // result [N, H] or [H]. Several token dimensions ([B, T, K] against a 2-D
  // weight, the result [B, T, H]) are collapsed onto N by the rewrite.
  int64_t lhsRank = lhsMap.getNumResults();
  p.tokenRank = lhsRank - 1;
  if (batchedWeight)
    setUnsupported(DeclineRule::UnsupportedProjection,
                   "the weight has rank " + Twine(wMap.getNumResults()) +
                       " (batched weights); the paired op takes one [H, K] "
                       "or [K, H] matrix per projection");
  if (lhsRank != static_cast<int64_t>(outRank))
    setUnsupported(DeclineRule::UnsupportedProjection,
                   "the LHS and the result have different ranks");
  bool tokensInOrder = p.lhsKDim == lhsRank - 1;
  for (int64_t i = 0; tokensInOrder && i + 1 < lhsRank &&
                      i + 1 < static_cast<int64_t>(outRank);
       ++i)
    tokensInOrder = lhsMap.getDimPosition(i) == outMap.getDimPosition(i);
  if (!tokensInOrder)
    setUnsupported(DeclineRule::UnsupportedProjection,
                   lhsRank == 2
                       ? Twine("the LHS is read as [K, N]; the paired op "
                               "takes [N, K]")
                       : Twine("the LHS is not [tokens..., K] with the "
                               "result's token order"));

  // Accumulation.
  Type prodType = productType(op);
  if (auto acc = dyn_cast<FloatType>(p.accType)) {
    if (acc.getWidth() < 32)
      setUnsupported(DeclineRule::NarrowAccumulation,
                     "the contraction accumulates in " + typeString(p.accType) +
                         "; the paired op accumulates in f32");
    else if (!p.accType.isF32())
      setUnsupported(DeclineRule::UnsupportedProjection,
                     "the contraction accumulates in " + typeString(p.accType) +
                         "; the paired op accumulates in f32");
    else if (prodType && prodType != p.accType)
      setUnsupported(DeclineRule::NarrowAccumulation,
                     "the contraction multiplies in " + typeString(prodType));
  } else {
    setUnsupported(DeclineRule::UnsupportedProjection,
                   "the contraction accumulates in " + typeString(p.accType));
  }
  // The accumulator starts from zero, or from an [H] bias broadcast over the
  // tokens (torch-mlir's addmm): the bias then becomes a `bias` epilogue.
  Value init = op.getDpsInitOperand(0)->get();
  std::optional<double> initValue = getSplatValue(init);
  if (!initValue && outRank >= 2)
    p.initBias = getColumnBroadcastSource(init);
  if (!p.initBias && (!initValue || *initValue != 0.0))
    setUnsupported(DeclineRule::UnsupportedProjection,
                   "the accumulator does not start from zero or from a "
                   "broadcast [H] bias");
  for (Type t : {p.lhsElementType(), p.weightElementType()})
    if (!t.isBF16() && !t.isF16() && !t.isF32())
      setUnsupported(DeclineRule::UnsupportedProjection,
                     "element type " + typeString(t) +
                         " (the runtime reads bf16, f16 or f32)");
  return p;
}

//===----------------------------------------------------------------------===//
// Epilogue bodies
//===----------------------------------------------------------------------===//

namespace {

/// How the epilogue reads one of its input operands.
struct OperandRole {
  enum Kind { Projection, Column, Splat, Unsupported } kind = Unsupported;
  /// Column: the [H] (or 0-d / unit) tensor to read and its indexing map
  /// over the one loop of an [H] iteration space.
  Value source;
  AffineMap columnMap;
  double splat = 0.0;
};

/// Agreement required between the epilogue and the reference on a probe:
/// |a - b| <= kProbeTolerance * max(1, |a|, |b|), about one f32 ulp. It
/// accepts log(1 + exp(t)) for log1p(exp(t)) (they differ by < 1e-7 for
/// t < -16, below f32 resolution on the scale of 1) and softplus thresholds
/// of 16 and above (torch uses 20); it rejects a threshold of 10 or a
/// missing bias.
constexpr double kProbeTolerance = 1e-7;

bool probeClose(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return false;
  if (a == b)
    return true;
  return std::fabs(a - b) <=
         kProbeTolerance * std::max({1.0, std::fabs(a), std::fabs(b)});
}

double refSigmoid(double t) { return 1.0 / (1.0 + std::exp(-t)); }
double refSoftplus(double t) { return t > 20.0 ? t : std::log1p(std::exp(t)); }
double refSilu(double t) { return t * refSigmoid(t); }
double refGeluErf(double t) {
  return 0.5 * t * (1.0 + std::erf(t * 0.7071067811865476));
}
double refGeluTanh(double t) {
  return 0.5 * t *
         (1.0 + std::tanh(0.7978845608028654 * (t + 0.044715 * t * t * t)));
}

/// How `generic` reads input `in` if it does not depend on the token
/// dimension: a splat constant, or a column (a tensor read through a map that
/// uses only the H loop, the last one, or constants; a linalg.broadcast of an
/// [H] vector along N counts as its source).
std::optional<OperandRole> readColumn(linalg::GenericOp generic,
                                      OpOperand *in) {
  OperandRole role;
  Value v = in->get();
  if (std::optional<double> c = getSplatValue(v)) {
    role.kind = OperandRole::Splat;
    role.splat = *c;
    return role;
  }
  unsigned numLoops = generic.getNumLoops();
  unsigned hLoop = numLoops - 1;
  MLIRContext *ctx = generic.getContext();
  AffineMap map = generic.getMatchingIndexingMap(in);
  if (Value source = map.isIdentity() ? getColumnBroadcastSource(v) : Value()) {
    v = source;
    map = AffineMap::get(numLoops, 0, {getAffineDimExpr(hLoop, ctx)}, ctx);
  }
  SmallVector<AffineExpr> results;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      if (d.getPosition() != hLoop)
        return std::nullopt;
      results.push_back(getAffineDimExpr(0, ctx));
    } else if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      results.push_back(c);
    } else {
      return std::nullopt;
    }
  }
  if (!isa<FloatType>(getElementTypeOrSelf(v.getType())))
    return std::nullopt;
  role.kind = OperandRole::Column;
  role.source = v;
  role.columnMap = AffineMap::get(1, 0, results, ctx);
  return role;
}

/// One elementwise generic, read as a function of the projection(s).
class EpilogueBody {
public:
  EpilogueBody(linalg::GenericOp generic, ArrayRef<Value> projections)
      : generic(generic), block(generic.getBody()) {
    classify(projections);
  }

  linalg::GenericOp generic;
  /// The body.
  Block *block;
  std::string unsupported;
  SmallVector<OperandRole> roles;
  /// Body values that stand for each projection (by projection index): its
  /// block arguments and, when the projection is rounded before the
  /// epilogue, the truncf of them.
  SmallVector<SmallVector<Value, 2>, 2> projArgs;
  /// The type each projection is rounded to before the epilogue, or null.
  SmallVector<Type, 2> roundTypes;
  /// The bias added to each projection before that rounding (`truncf(y +
  /// b)`, a Linear with bias=True), or null.
  SmallVector<Value, 2> roundedBiases;
  /// Body values that depend on a projection.
  DenseSet<Value> dependent;

  Value root() const {
    return cast<linalg::YieldOp>(block->getTerminator()).getOperand(0);
  }

  bool isDependent(Value v) const { return dependent.contains(v); }

  /// `v` without extf; truncf is not looked through (it rounds).
  static Value stripExt(Value v) {
    while (auto ext = v.getDefiningOp<arith::ExtFOp>())
      v = ext.getIn();
    return v;
  }

  /// The projection `v` stands for (after extf), or -1.
  int projectionOf(Value v) const {
    v = stripExt(v);
    for (auto [i, args] : llvm::enumerate(projArgs))
      if (llvm::is_contained(args, v))
        return i;
    return -1;
  }

  /// Evaluate as f32 arithmetic (softplusForm): each value rounded to f32
  /// (to bf16 / f16 by a truncf to those), transcendental ops by their f32
  /// libm functions, the CPU backend's; double otherwise.
  bool inF32 = false;

  /// Evaluates body value `v` in double (or as f32, inF32): projection i is
  /// `proj[i]` (its rounding, with its bias when rounded with it, standing
  /// for the projection too), column operands get the probe value of their
  /// position.
  std::optional<double> eval(Value v, ArrayRef<double> proj, int probe) {
    std::optional<double> r = evalValue(v, proj, probe);
    if (r && inF32) {
      // Rounded to f32, then to the value's own type where it is narrower
      // (a body computing in bf16 rounds every op's result); a projection
      // (its rounding included) reads the probe value as given.
      r = double(float(*r));
      auto t = dyn_cast<FloatType>(getElementTypeOrSelf(v.getType()));
      if (t && t.getWidth() < 32 && projectionOf(v) < 0)
        r = roundAs(t, *r);
    }
    return r;
  }

  /// `x` (an f32 value) rounded to the float type `t`, nearest even.
  static double roundAs(FloatType t, double x) {
    bool lost = false;
    llvm::APFloat a(static_cast<float>(x));
    a.convert(t.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
    a.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    return a.convertToDouble();
  }

  /// eval without the f32 rounding of its result.
  std::optional<double> evalValue(Value v, ArrayRef<double> proj, int probe) {
    if (!isa<BlockArgument>(v) && v.getDefiningOp<arith::TruncFOp>())
      if (int pi = projectionOf(v); pi >= 0)
        return proj[pi];
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != generic.getBody())
        return std::nullopt;
      int pi = projectionOf(arg);
      if (pi >= 0)
        return proj[pi];
      const OperandRole &role = roles[arg.getArgNumber()];
      if (role.kind == OperandRole::Splat)
        return role.splat;
      if (role.kind == OperandRole::Column) {
        static constexpr double kParams[] = {0.31, -1.7, 2.3, 0.85, -0.45};
        return kParams[(arg.getArgNumber() + probe) % 5];
      }
      return std::nullopt;
    }
    FloatAttr fa;
    if (matchPattern(v, m_Constant(&fa)))
      return fa.getValueAsDouble();
    Operation *op = v.getDefiningOp();
    if (!op || op->getBlock() != generic.getBody())
      return std::nullopt;
    auto arg = [&](unsigned i) { return eval(op->getOperand(i), proj, probe); };
    // A math function: `fn` in double, `ff` (its f32 libm function) inF32.
    auto un = [&](double (*fn)(double),
                  float (*ff)(float) = nullptr) -> std::optional<double> {
      std::optional<double> a = arg(0);
      if (!a)
        return std::nullopt;
      if (inF32 && ff)
        return ff(float(*a));
      return fn(*a);
    };
    auto bin = [&](auto fn) -> std::optional<double> {
      std::optional<double> a = arg(0), b = arg(1);
      if (!a || !b)
        return std::nullopt;
      return fn(*a, *b);
    };
    if (auto trunc = dyn_cast<arith::TruncFOp>(op); trunc && inF32) {
      std::optional<double> a = arg(0);
      auto to = dyn_cast<FloatType>(getElementTypeOrSelf(trunc.getType()));
      if (!a || !to)
        return std::nullopt;
      return roundAs(to, *a);
    }
    if (isa<arith::ExtFOp, arith::TruncFOp>(op))
      return arg(0);
    if (isa<arith::AddFOp>(op))
      return bin([](double a, double b) { return a + b; });
    if (isa<arith::SubFOp>(op))
      return bin([](double a, double b) { return a - b; });
    if (isa<arith::MulFOp>(op))
      return bin([](double a, double b) { return a * b; });
    if (isa<arith::DivFOp>(op))
      return bin([](double a, double b) { return a / b; });
    if (isa<arith::NegFOp>(op))
      return un([](double a) { return -a; });
    if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
      return bin([](double a, double b) { return std::max(a, b); });
    if (isa<arith::MinimumFOp, arith::MinNumFOp>(op))
      return bin([](double a, double b) { return std::min(a, b); });
    if (isa<math::ExpOp>(op))
      return un([](double a) { return std::exp(a); }, ::expf);
    if (isa<math::Exp2Op>(op))
      return un([](double a) { return std::exp2(a); }, ::exp2f);
    if (isa<math::ExpM1Op>(op))
      return un([](double a) { return std::expm1(a); }, ::expm1f);
    if (isa<math::LogOp>(op))
      return un([](double a) { return std::log(a); }, ::logf);
    if (isa<math::Log1pOp>(op))
      return un([](double a) { return std::log1p(a); }, ::log1pf);
    if (isa<math::Log2Op>(op))
      return un([](double a) { return std::log2(a); }, ::log2f);
    if (isa<math::TanhOp>(op))
      return un([](double a) { return std::tanh(a); }, ::tanhf);
    if (isa<math::ErfOp>(op))
      return un([](double a) { return std::erf(a); }, ::erff);
    if (isa<math::SqrtOp>(op))
      return un([](double a) { return std::sqrt(a); }, ::sqrtf);
    if (isa<math::RsqrtOp>(op))
      return un([](double a) { return 1.0 / std::sqrt(a); });
    if (isa<math::AbsFOp>(op))
      return un([](double a) { return std::fabs(a); });
    if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
      std::optional<double> a = arg(0), b = arg(1);
      if (!a || !b)
        return std::nullopt;
      return arith::applyCmpPredicate(cmp.getPredicate(), llvm::APFloat(*a),
                                      llvm::APFloat(*b))
                 ? 1.0
                 : 0.0;
    }
    if (auto sel = dyn_cast<arith::SelectOp>(op)) {
      std::optional<double> c = arg(0);
      if (!c)
        return std::nullopt;
      return *c != 0.0 ? arg(1) : arg(2);
    }
    if (isa<arith::UIToFPOp>(op))
      return arg(0);
    return std::nullopt;
  }

  /// True if `f(t)` of the reference agrees with `v` on every probe, where
  /// t = y + bias (bias a projection-independent body value, or 0).
  bool agrees(Value v, Value bias, double (*ref)(double)) {
    for (int probe = 0; probe < 3; ++probe) {
      for (double y = -40.0; y <= 40.0; y += 0.25) {
        double yy = y + 0.0137;
        std::optional<double> b = bias ? eval(bias, {}, probe) : 0.0;
        std::optional<double> got = eval(v, {yy}, probe);
        if (!b || !got || !probeClose(*got, ref(yy + *b)))
          return false;
      }
    }
    return true;
  }

  /// Which of the runtime's three softplus epilogues (fusion_rt::
  /// apply_epilogue, the formula every backend computes) `v`, a softplus of
  /// t = y + bias that `agrees` with the reference, equals bit for bit on
  /// every probe, evaluated as f32 arithmetic: torch's
  /// `t > 20 ? t : log1p(exp(t))` (F.softplus), `log(1 + exp(t))` as
  /// vLLM's torch reference of fused_gdn_gating writes it (the two differ
  /// by the rounding of 1 + exp(t), up to a few ulps), or the overflow-safe
  /// `max(t, 0) + log1p(exp(-|t|))` (torch.logaddexp(t, 0), JAX's
  /// softplus; no threshold); none where no form is exact.
  std::optional<EpilogueKind> softplusForm(Value v, Value bias) {
    static constexpr EpilogueKind kForms[] = {
        EpilogueKind::softplus_bias_scale,
        EpilogueKind::softplus_log_bias_scale,
        EpilogueKind::softplus_stable_bias_scale};
    bool exact[3] = {true, true, true};
    auto any = [&] { return exact[0] || exact[1] || exact[2]; };
    inF32 = true;
    for (int probe = 0; probe < 3 && any(); ++probe) {
      std::optional<double> b = bias ? eval(bias, {}, probe) : 0.0;
      for (double y = -40.0; y <= 40.0 && any(); y += 0.125) {
        float yf = float(y + 0.0137);
        std::optional<double> got =
            b ? eval(v, {double(yf)}, probe) : std::nullopt;
        float t = yf + float(b.value_or(0.0));
        for (int f = 0; f < 3; ++f)
          exact[f] &= got && *got == double(fusion_rt::apply_epilogue(
                                         int32_t(kForms[f]), t, false, 1.f));
      }
    }
    inF32 = false;
    for (int f = 0; f < 3; ++f)
      if (exact[f])
        return kForms[f];
    return std::nullopt;
  }

  /// True if `v` agrees on every probe with act(y_g + b_g) * (y_u + b_u),
  /// projection `gate` being y_g and the other y_u (biases may be null).
  bool agreesGated(Value v, unsigned gate, Value bg, Value bu,
                   double (*act)(double), double (*up)(double)) {
    // Up values past the clamped SwiGLU's limit (7) as well.
    static constexpr double kUp[] = {-9.5, -1.3, 0.45, 2.2, 8.5};
    for (int probe = 0; probe < 3; ++probe) {
      std::optional<double> gb = bg ? eval(bg, {}, probe) : 0.0;
      std::optional<double> ub = bu ? eval(bu, {}, probe) : 0.0;
      if (!gb || !ub)
        return false;
      for (double y = -20.0; y <= 20.0; y += 0.5) {
        for (double u : kUp) {
          double proj[2];
          proj[gate] = y + 0.0137;
          proj[1 - gate] = u;
          std::optional<double> got = eval(v, proj, probe);
          if (!got || !probeClose(*got, act(proj[gate] + *gb) * up(u + *ub)))
            return false;
        }
      }
    }
    return true;
  }

  /// The bias-then-rounding of projection argument `a` (a bf16 Linear with
  /// bias=True: `truncf(a + b)`, `b` not depending on a projection, the sum
  /// read by nothing but roundings to bf16 / f16 that are not the body's
  /// result), as the sum, when every use of `a` is that one add; null
  /// otherwise, with `partly` set when some use is such an add and another
  /// is not.
  Value biasThenRound(Value a, bool &partly) const {
    partly = false;
    auto accType = dyn_cast<FloatType>(a.getType());
    if (!accType || !accType.isF32() || a.use_empty())
      return Value();
    arith::AddFOp add;
    bool other = false;
    for (Operation *u : a.getUsers()) {
      auto au = dyn_cast<arith::AddFOp>(u);
      if (au && (!add || au == add) && isBiasThenRound(a, au))
        add = au;
      else
        other = true;
    }
    partly = add && other;
    return add && !other ? add.getResult() : Value();
  }

  /// True if `add` is `a + b` with `b` not depending on a projection and
  /// the sum read only by roundings to bf16 / f16 that are not the body's
  /// result.
  bool isBiasThenRound(Value a, arith::AddFOp add) const {
    Value b = add.getLhs() == a ? add.getRhs() : add.getLhs();
    if (b == a || dependent.contains(b) || add.getResult().use_empty())
      return false;
    for (Operation *u : add->getUsers()) {
      auto trunc = dyn_cast<arith::TruncFOp>(u);
      auto to = trunc ? dyn_cast<FloatType>(trunc.getType()) : FloatType();
      if (!to || !(to.isBF16() || to.isF16()) || trunc.getResult() == root())
        return false;
    }
    return true;
  }

  /// Finds how the epilogue reads each projection: as the f32 accumulator,
  /// or rounded once to bf16 / f16 before anything else reads it (a bf16
  /// Linear's output: truncf of the block argument, every use of the
  /// argument being that rounding), which the fused op records and applies
  /// (`round(bf16)`); or its sum with a bias rounded so (a Linear with
  /// bias=True: `round(bf16, with_bias)`, the bias in `roundedBiases`). A
  /// projection read both rounded and unrounded, or rounded to another type,
  /// is declined. Roundings inside the epilogue (a bf16 sigmoid) are
  /// accepted, as fusion-fuse-act-quantize accepts them: the fused op
  /// computes in f32 and rounds once, the more accurate result. Sets
  /// `unsupported`.
  bool checkPrecision() {
    roundTypes.assign(projArgs.size(), Type());
    roundedBiases.assign(projArgs.size(), Value());
    for (auto [pi, args] : llvm::enumerate(projArgs)) {
      SmallVector<Value, 2> rounded;
      bool withBias = false, withoutBias = false;
      for (Value a : SmallVector<Value, 2>(args)) {
        auto accType = dyn_cast<FloatType>(a.getType());
        bool anyTrunc = false, allTrunc = true;
        // Read with its bias before a rounding by one op, and otherwise by
        // another (`partly`): the fused op reads it one way.
        bool partly = false;
        Value sum = biasThenRound(a, partly);
        (sum ? withBias : withoutBias) = true;
        withBias |= partly;
        if (withBias && withoutBias) {
          unsupported = "the epilogue reads the projection both with a bias "
                        "before its rounding and without (the fused op reads "
                        "it one way)";
          return false;
        }
        if (sum) {
          auto add = sum.getDefiningOp<arith::AddFOp>();
          Value b = add.getLhs() == a ? add.getRhs() : add.getLhs();
          if (roundedBiases[pi] && roundedBiases[pi] != b) {
            unsupported = "the projection is read with two biases before its "
                          "rounding";
            return false;
          }
          roundedBiases[pi] = b;
          a = sum; // its roundings below stand for the projection
        }
        for (Operation *u : a.getUsers()) {
          auto trunc = dyn_cast<arith::TruncFOp>(u);
          if (trunc && trunc.getResult() == root()) {
            allTrunc = false; // the final rounding of a `none` epilogue
            continue;
          }
          auto to = trunc ? dyn_cast<FloatType>(trunc.getType()) : FloatType();
          if (!to || !accType || !accType.isF32() ||
              !(to.isBF16() || to.isF16())) {
            allTrunc = false;
            if (trunc) {
              unsupported = "the projection is rounded to " +
                            typeString(trunc.getType()) +
                            " before its epilogue (the fused op rounds the "
                            "f32 accumulator to bf16 or f16 only)";
              return false;
            }
            continue;
          }
          if (roundTypes[pi] && roundTypes[pi] != to) {
            unsupported = "the projection is rounded to two types before its "
                          "epilogue";
            return false;
          }
          roundTypes[pi] = to;
          anyTrunc = true;
          rounded.push_back(trunc.getResult());
        }
        if (anyTrunc && !allTrunc) {
          unsupported = "the epilogue reads the projection both rounded to " +
                        typeString(roundTypes[pi]) +
                        " and unrounded (the fused op reads it one way)";
          return false;
        }
      }
      llvm::append_range(args, rounded);
    }
    return true;
  }

private:
  void classify(ArrayRef<Value> projections) {
    projArgs.resize(projections.size());
    Block *body = generic.getBody();
    unsigned numLoops = generic.getNumLoops();
    if (generic.getNumDpsInits() != 1 || generic->getNumResults() != 1) {
      unsupported = "the epilogue generic has several results";
      return;
    }
    if (generic.getNumParallelLoops() != numLoops ||
        !generic.getIndexingMapMatchingResult(generic->getResult(0))
             .isIdentity()) {
      unsupported = "the consumer is not elementwise";
      return;
    }
    for (OpOperand *in : generic.getDpsInputOperands()) {
      OperandRole role;
      AffineMap map = generic.getMatchingIndexingMap(in);
      Value v = in->get();
      auto it = llvm::find(projections, v);
      if (it != projections.end() && map.isIdentity()) {
        role.kind = OperandRole::Projection;
        projArgs[it - projections.begin()].push_back(
            body->getArgument(in->getOperandNumber()));
      } else if (std::optional<OperandRole> col = readColumn(generic, in)) {
        role = *col;
      } else if (unsupported.empty()) {
        unsupported = llvm::is_contained(projections, v)
                          ? "the epilogue reads the projection through a "
                            "non-identity map"
                          : "the epilogue reads a tensor indexed by the "
                            "token dimension other than the projection";
      }
      roles.push_back(role);
    }
    // Values that depend on a projection.
    for (auto &args : projArgs)
      for (Value a : args)
        dependent.insert(a);
    for (Operation &op : body->without_terminator()) {
      if (isa<linalg::IndexOp>(op)) {
        unsupported = "the epilogue uses linalg.index";
        return;
      }
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return dependent.contains(v); }))
        for (Value r : op.getResults())
          dependent.insert(r);
    }
    for (BlockArgument a :
         body->getArguments().drop_front(generic.getNumDpsInputs()))
      if (!a.use_empty() && unsupported.empty())
        unsupported = "the epilogue reads its output operand";
  }
};

/// Splits `v` into sign * prod(factors) * dependent-part, looking through
/// negf, mulf and extf. Fails if more than one factor depends on y.
bool factorize(const EpilogueBody &body, Value v, bool &negate,
               SmallVector<Value, 2> &factors, Value &dependentPart) {
  if (!body.isDependent(v)) {
    factors.push_back(v);
    return true;
  }
  Operation *op = v.getDefiningOp();
  if (op && op->getBlock() == body.block) {
    if (auto neg = dyn_cast<arith::NegFOp>(op)) {
      negate = !negate;
      return factorize(body, neg.getOperand(), negate, factors, dependentPart);
    }
    if (auto ext = dyn_cast<arith::ExtFOp>(op))
      return factorize(body, ext.getIn(), negate, factors, dependentPart);
    if (auto mul = dyn_cast<arith::MulFOp>(op))
      return factorize(body, mul.getLhs(), negate, factors, dependentPart) &&
             factorize(body, mul.getRhs(), negate, factors, dependentPart);
  }
  if (dependentPart)
    return false;
  dependentPart = v;
  return true;
}

/// The column parameter for a projection-independent body value `v`: the
/// operand tensor itself when `v` is (an extf of) a column operand read as
/// [H], else `v` to be materialised.
ColumnParam columnParam(const EpilogueBody &body, Value v) {
  ColumnParam p;
  Value s = EpilogueBody::stripExt(v);
  if (auto arg = dyn_cast<BlockArgument>(s);
      arg && arg.getOwner() == body.block &&
      arg.getArgNumber() < body.roles.size()) {
    const OperandRole &role = body.roles[arg.getArgNumber()];
    if (role.kind == OperandRole::Column && role.columnMap.isIdentity() &&
        cast<RankedTensorType>(role.source.getType()).getRank() == 1) {
      p.tensor = role.source;
      return p;
    }
  }
  p.factors.push_back(v);
  return p;
}

/// The bias b in `y + b` inside the dependent part `f`: a projection-free
/// operand of an addf whose other operand is (an extf of) the projection.
Value findBias(const EpilogueBody &body, Value f, int proj = 0) {
  Value found;
  SmallVector<Value> worklist{f};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second || !body.isDependent(v))
      continue;
    Operation *op = v.getDefiningOp();
    if (!op || op->getBlock() != body.block)
      continue;
    // A rounded projection stands for it: a bias added before the rounding
    // is the rounding's (EpilogueBody::roundedBiases), not the epilogue's.
    if (isa<arith::TruncFOp>(op) && body.projectionOf(v) >= 0)
      continue;
    if (auto add = dyn_cast<arith::AddFOp>(op)) {
      for (auto [a, b] : {std::pair(add.getLhs(), add.getRhs()),
                          std::pair(add.getRhs(), add.getLhs())})
        if (body.projectionOf(a) == proj && !body.isDependent(b)) {
          if (found && found != b)
            return Value();
          found = b;
        }
    }
    llvm::append_range(worklist, op->getOperands());
  }
  return found;
}

} // namespace

FailureOr<EpilogueMatch> mlir::fusion::matchEpilogue(Value projection,
                                                     MatchFailure &why) {
  EpilogueMatch m;
  m.result = projection;
  SmallVector<Operation *> users(projection.getUsers());
  llvm::sort(users);
  users.erase(std::unique(users.begin(), users.end()), users.end());
  auto elementwiseGeneric = [](Operation *op) -> linalg::GenericOp {
    auto g = dyn_cast<linalg::GenericOp>(op);
    if (g && g.getNumParallelLoops() == g.getNumLoops())
      return g;
    return linalg::GenericOp();
  };
  SmallVector<linalg::GenericOp> generics;
  for (Operation *u : users)
    if (linalg::GenericOp g = elementwiseGeneric(u))
      generics.push_back(g);
  if (generics.empty())
    return m; // `none`: the fused op's result replaces the projection.
  if (users.size() > 1) {
    why.rule = DeclineRule::ExtraConsumer;
    why.detail = "the projection feeds an elementwise epilogue and " +
                 std::to_string(users.size() - 1) + " other op(s)";
    return failure();
  }
  linalg::GenericOp g = generics.front();
  EpilogueBody body(g, {projection});
  auto unsupported = [&](StringRef detail) -> FailureOr<EpilogueMatch> {
    why.rule = DeclineRule::UnsupportedEpilogue;
    why.detail = detail.str();
    return failure();
  };
  if (!body.unsupported.empty())
    return unsupported(body.unsupported);
  if (!body.checkPrecision())
    return unsupported(body.unsupported);
  m.round = body.roundTypes[0];
  m.generic = g;
  m.result = g->getResult(0);
  // The kind, read with each rounded projection standing for it.
  auto kindOf = [&]() -> FailureOr<EpilogueMatch> {

    // silu through the ActivationMatcher (the act-quantize definition).
    ActivationMatchResult act = matchActivation(g->getResult(0));
    if (act.match && !act.match->backward && !act.match->up) {
      if (act.match->kind == ActivationKind::silu &&
          act.match->input == projection) {
        m.kind = EpilogueKind::silu;
        return m;
      }
    }

    Value root = body.root();
    // A final widening of a value computed in bf16 / f16 (`b.sigmoid()` of a
    // bf16 Linear, then `.float()`): the activation kinds below compute in
    // f32 and round once to that type, then widen (EpilogueMatch::widenFrom).
    Type narrow;
    if (auto def = root.getDefiningOp();
        def && isa<arith::TruncFOp, arith::ExtFOp>(def)) {
      root = def->getOperand(0);
      Type from = root.getType();
      if (isa<arith::ExtFOp>(def) && (from.isBF16() || from.isF16()) &&
          getElementTypeOrSelf(g->getResult(0).getType()).isF32())
        narrow = from;
    }
    bool negate = false;
    SmallVector<Value, 2> factors;
    Value f;
    if (!factorize(body, root, negate, factors, f) || !f) {
      // silu(y + b) = t * sigmoid(t) has two factors that depend on y: read
      // the whole root as the function of y.
      if (Value b = findBias(body, root); b && body.agrees(root, b, refSilu)) {
        m.kind = EpilogueKind::silu;
        m.bias = columnParam(body, b);
        return m;
      }
      if (body.agrees(root, Value(), refSilu)) {
        m.kind = EpilogueKind::silu;
        return m;
      }
      return unsupported("the epilogue is not a product of one function of the "
                         "projection and per-column factors");
    }
    bool plain = factors.empty() && !negate;
    // The per-column scale: the product of the factors and the sign.
    auto scaleOf = [&] {
      ColumnParam scale;
      if (factors.size() == 1 && !negate) {
        scale = columnParam(body, factors.front());
      } else {
        scale.factors = factors;
        scale.negate = negate;
      }
      return scale;
    };

    // none (a rounding or widening of y) and bias (y + b).
    if (plain && body.projectionOf(f) == 0)
      return m; // kind none with the generic's result type
    Value bias = findBias(body, f);
    if (plain && bias) {
      auto add = f.getDefiningOp<arith::AddFOp>();
      if (add && (add.getLhs() == bias || add.getRhs() == bias)) {
        m.kind = EpilogueKind::bias;
        m.bias = columnParam(body, bias);
        return m;
      }
    }
    // sigmoid / silu of y or of y + b: the bias a column value added to y
    // inside the activation (a bias added after it is no match: `bias` is
    // then not an operand of an add with y); times a per-column scale where
    // not plain (FLA's GatedDeltaNet: beta = b.sigmoid() * 2).
    std::optional<EpilogueKind> gateKind;
    Value gateBias;
    SmallVector<Value, 2> gateBiases{Value()};
    if (bias)
      gateBiases.push_back(bias);
    for (Value b : gateBiases)
      for (auto [kind, ref] : {std::pair{EpilogueKind::sigmoid, &refSigmoid},
                               std::pair{EpilogueKind::silu, &refSilu}})
        if (!gateKind && body.agrees(f, b, ref))
          gateKind = kind, gateBias = b;
    if (plain && gateKind) {
      m.kind = *gateKind;
      if (gateBias)
        m.bias = columnParam(body, gateBias);
      m.widenFrom = narrow;
      return m;
    }
    if (body.agrees(f, bias, refSoftplus)) {
      std::optional<EpilogueKind> form = body.softplusForm(f, bias);
      if (!form)
        return unsupported(
            "softplus(y + bias) is written in a form whose f32 result is "
            "none of log1p(exp(t)), log(1 + exp(t)) and max(t, 0) + "
            "log1p(exp(-|t|)) bit for bit (the fused kernels compute one of "
            "the three)");
      m.kind = *form;
      if (bias) {
        m.bias = columnParam(body, bias);
      } else {
        m.bias = ColumnParam();
        m.bias->constant = 0.0;
      }
      m.scale = scaleOf();
      return m;
    }
    // A scaled sigmoid or silu: act(y [+ b]) * s.
    if (!plain) {
      if (gateKind && f.getType() != root.getType())
        return unsupported("the epilogue rounds " +
                           stringifyEpilogueKind(*gateKind).str() + "(y) to " +
                           typeString(f.getType()) +
                           " before multiplying it by its scale in " +
                           typeString(root.getType()) +
                           " (the fused op scales the unrounded value)");
      if (gateKind) {
        m.kind = *gateKind;
        if (gateBias)
          m.bias = columnParam(body, gateBias);
        m.scale = scaleOf();
        m.widenFrom = narrow;
        return m;
      }
      if (bias && f.getDefiningOp<arith::AddFOp>())
        return unsupported("a scale on a bias epilogue ((y + b) * s): no "
                           "fused epilogue scales y + b");
    }
    return unsupported("the epilogue matches none of: y + bias, "
                       "sigmoid(y [+ bias]), silu(y [+ bias]), "
                       "softplus(y + bias) * scale");
  };
  FailureOr<EpilogueMatch> r = kindOf();
  Value rb = body.roundedBiases[0];
  if (failed(r) || !rb)
    return r;
  // The bias was added before the rounding (a Linear with bias=True): it is
  // the epilogue's bias, added before the rounding; the epilogue may not add
  // one of its own after it (the fused op adds one bias).
  bool ownBias = r->bias && (r->bias->tensor || !r->bias->factors.empty() ||
                             r->bias->constant != 0.0);
  if (ownBias || r->kind == EpilogueKind::bias)
    return unsupported("the epilogue adds a bias both before and after "
                       "rounding the projection to " +
                       typeString(r->round) + " (the fused op adds one)");
  if (r->kind == EpilogueKind::none)
    r->kind = EpilogueKind::bias;
  r->bias = columnParam(body, rb);
  r->roundWithBias = true;
  return r;
}

linalg::GenericOp mlir::fusion::getGatedConsumer(Value a, Value b) {
  if (!a.hasOneUse() && !b.hasOneUse())
    return linalg::GenericOp();
  for (Operation *u : a.getUsers())
    if (auto g = dyn_cast<linalg::GenericOp>(u))
      if (llvm::is_contained(g->getOperands(), b))
        return g;
  return linalg::GenericOp();
}

/// Gated products with a bias added to the gate and/or the up projection
/// inside the body, act(y_g + b_g) * (y_u + b_u), which the ActivationMatcher
/// does not take (it matches gated products of tensors): the biases are
/// located structurally and the product is compared on probes with the
/// runtime's swiglu, geglu (tanh GELU), geglu_erf and clamped_swiglu (its
/// default parameters, GPT-OSS's: the gate clamped above at 7 with slope
/// 1.702, the up clamped to [-7, 7] plus one). With `plainToo`, a
/// product without such biases is matched the same way (projections rounded
/// with their biases, which the ActivationMatcher cannot see as operands).
static bool matchGatedBiases(EpilogueBody &body, GatedMatch &m,
                             bool plainToo = false) {
  Value root = body.root();
  if (auto def = root.getDefiningOp();
      def && isa<arith::TruncFOp, arith::ExtFOp>(def))
    root = def->getOperand(0);
  struct Form {
    ActivationKind kind;
    double (*act)(double);
    double (*up)(double);
  };
  auto linear = [](double u) { return u; };
  auto clampedGate = [](double t) {
    double c = std::min(t, 7.0);
    return c * refSigmoid(1.702 * c);
  };
  auto clampedUp = [](double u) { return std::clamp(u, -7.0, 7.0) + 1.0; };
  for (unsigned gate : {0u, 1u}) {
    Value bg = findBias(body, root, gate), bu = findBias(body, root, 1 - gate);
    if (!bg && !bu && !plainToo)
      continue; // plain products are the ActivationMatcher's
    for (Form f :
         {Form{ActivationKind::swiglu, refSilu, linear},
          Form{ActivationKind::geglu, refGeluTanh, linear},
          Form{ActivationKind::geglu_erf, refGeluErf, linear},
          Form{ActivationKind::clamped_swiglu, clampedGate, clampedUp}}) {
      if (!body.agreesGated(root, gate, bg, bu, f.act, f.up))
        continue;
      m.gateIndex = gate;
      m.kind = f.kind;
      if (bg)
        m.gateBias = columnParam(body, bg);
      if (bu)
        m.upBias = columnParam(body, bu);
      return true;
    }
  }
  return false;
}

FailureOr<GatedMatch> mlir::fusion::matchGated(Value a, Value b,
                                               MatchFailure &why) {
  GatedMatch m;
  m.generic = getGatedConsumer(a, b);
  auto fail = [&](DeclineRule rule, StringRef detail) -> FailureOr<GatedMatch> {
    why.rule = rule;
    why.detail = detail.str();
    return failure();
  };
  if (!m.generic)
    return fail(DeclineRule::UnsupportedEpilogue, "no gated activation consumes both");
  for (Value v : {a, b})
    for (Operation *u : v.getUsers())
      if (u != m.generic.getOperation())
        return fail(DeclineRule::ExtraConsumer,
                    "a projection feeds the gated activation and '" +
                        u->getName().getStringRef().str() + "'");
  EpilogueBody body(m.generic, {a, b});
  if (!body.unsupported.empty())
    return fail(DeclineRule::UnsupportedEpilogue, body.unsupported);
  if (!body.checkPrecision())
    return fail(DeclineRule::UnsupportedEpilogue, body.unsupported);
  auto withRounds = [&]() -> FailureOr<GatedMatch> {
    m.gateRound = body.roundTypes[m.gateIndex];
    m.upRound = body.roundTypes[1 - m.gateIndex];
    // Biases added before the roundings (Linears with bias=True).
    for (auto [idx, bias, flag] :
         {std::tuple(m.gateIndex, &m.gateBias, &m.gateRoundWithBias),
          std::tuple(1 - m.gateIndex, &m.upBias, &m.upRoundWithBias)}) {
      Value rb = body.roundedBiases[idx];
      if (!rb)
        continue;
      if (*bias)
        return fail(DeclineRule::UnsupportedEpilogue,
                    "the gated body adds a bias both before and after "
                    "rounding a projection to " +
                        typeString(body.roundTypes[idx]) +
                        " (the fused op adds one)");
      *bias = columnParam(body, rb);
      *flag = true;
    }
    return m;
  };
  if (body.roundedBiases[0] || body.roundedBiases[1]) {
    if (matchGatedBiases(body, m, /*plainToo=*/true))
      return withRounds();
    return fail(DeclineRule::UnsupportedEpilogue,
                "the body is not swiglu, geglu, geglu_erf or clamped_swiglu "
                "(default parameters) of the projections rounded with their "
                "biases (the forms matched for biased bf16 / f16 Linears)");
  }
  ActivationMatchResult act = matchActivation(m.generic->getResult(0));
  if (!act.match && matchGatedBiases(body, m))
    return withRounds();
  if (!act.match)
    return fail(DeclineRule::UnsupportedEpilogue, act.reason == "unsupported activation"
                                            ? act.detail
                                            : act.reason + ": " + act.detail);
  ActivationMatch &am = *act.match;
  if (!am.up || am.backward)
    return fail(DeclineRule::UnsupportedEpilogue,
                "the consumer of both projections is not a gated activation");
  int upIdx = am.up == a ? 0 : am.up == b ? 1 : -1;
  if (upIdx < 0)
    return fail(DeclineRule::UnsupportedEpilogue,
                "the gated activation's up operand is not a projection");
  m.gateIndex = 1 - upIdx;
  Value gate = m.gateIndex == 0 ? a : b;
  if (am.input) {
    if (am.input != gate)
      return fail(DeclineRule::UnsupportedEpilogue,
                  "the gated activation's gate is not a projection");
  } else {
    // The gate is computed in the body: it must be gate + bias.
    Value s = am.inputScalar;
    auto add = s.getDefiningOp<arith::AddFOp>();
    Value bias;
    if (add)
      for (auto [x, y] : {std::pair(add.getLhs(), add.getRhs()),
                          std::pair(add.getRhs(), add.getLhs())})
        if (body.projectionOf(x) == static_cast<int>(m.gateIndex) &&
            !body.isDependent(y))
          bias = y;
    if (!bias)
      return fail(DeclineRule::UnsupportedEpilogue,
                  "the gate is not a projection or a projection plus a bias");
    m.gateBias = columnParam(body, bias);
  }
  if (am.alpha)
    return fail(DeclineRule::UnsupportedEpilogue,
                "the gated activation has a non-default slope; the runtime's "
                "gated pair uses the default parameters");
  m.kind = am.kind;
  return withRounds();
}

//===----------------------------------------------------------------------===//
// Materialising per-column parameters
//===----------------------------------------------------------------------===//

/// The body ops (in block order) that compute `param`'s factors.
static SmallVector<Operation *> factorSlice(linalg::GenericOp epilogue,
                                            const ColumnParam &param) {
  Block *body = epilogue.getBody();
  DenseSet<Operation *> needed;
  SmallVector<Value> worklist(param.factors.begin(), param.factors.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op || op->getBlock() != body || !needed.insert(op).second)
      continue;
    llvm::append_range(worklist, op->getOperands());
  }
  SmallVector<Operation *> slice;
  for (Operation &op : body->without_terminator())
    if (needed.contains(&op))
      slice.push_back(&op);
  return slice;
}

/// The block arguments of `epilogue` that `param`'s factors read.
static SmallVector<BlockArgument> factorArgs(linalg::GenericOp epilogue,
                                             const ColumnParam &param) {
  SmallVector<BlockArgument> args;
  auto note = [&](Value v) {
    if (auto a = dyn_cast<BlockArgument>(v);
        a && a.getOwner() == epilogue.getBody() && !llvm::is_contained(args, a))
      args.push_back(a);
  };
  for (Value f : param.factors)
    note(f);
  for (Operation *op : factorSlice(epilogue, param))
    for (Value v : op->getOperands())
      note(v);
  return args;
}

SmallVector<Value> mlir::fusion::columnParamSources(linalg::GenericOp epilogue,
                                                    const ColumnParam &param) {
  if (param.tensor)
    return {param.tensor};
  SmallVector<Value> sources;
  if (!epilogue)
    return sources;
  for (BlockArgument a : factorArgs(epilogue, param))
    if (std::optional<OperandRole> role =
            readColumn(epilogue, epilogue.getDpsInputOperand(a.getArgNumber())))
      if (role->kind == OperandRole::Column)
        sources.push_back(role->source);
  // Values from above that the cloned ops capture (constants).
  for (Operation *op : factorSlice(epilogue, param))
    for (Value v : op->getOperands())
      if (!isa<BlockArgument>(v) ||
          cast<BlockArgument>(v).getOwner() != epilogue.getBody())
        if (!v.getDefiningOp() ||
            v.getDefiningOp()->getBlock() != epilogue.getBody())
          sources.push_back(v);
  for (Value f : param.factors)
    if (Operation *def = f.getDefiningOp();
        def && def->getBlock() != epilogue.getBody())
      sources.push_back(f);
  return sources;
}

/// `v` converted to f32 inside a body.
static Value toF32(OpBuilder &b, Location loc, Value v) {
  auto t = cast<FloatType>(v.getType());
  if (t.isF32())
    return v;
  if (t.getWidth() < 32)
    return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  return arith::TruncFOp::create(b, loc, b.getF32Type(), v);
}

Value mlir::fusion::materializeColumnParam(OpBuilder &b, Location loc,
                                           linalg::GenericOp epilogue,
                                           const ColumnParam &param,
                                           OpFoldResult h) {
  if (param.tensor)
    return param.tensor;
  Type f32 = b.getF32Type();
  double sign = param.negate ? -1.0 : 1.0;
  if (param.factors.empty()) {
    double value = sign * param.constant;
    if (std::optional<int64_t> n = getConstantIntValue(h)) {
      auto type = RankedTensorType::get({*n}, f32);
      return arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
    }
    Value empty = tensor::EmptyOp::create(b, loc, {h}, f32);
    Value cst = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
    return linalg::FillOp::create(b, loc, cst, empty).getResult(0);
  }

  // One parallel loop over H; each column operand read through its column
  // map, splat operands become scalar constants in the body.
  SmallVector<BlockArgument> args = factorArgs(epilogue, param);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<std::pair<BlockArgument, double>> splats;
  SmallVector<BlockArgument> columnArgs;
  for (BlockArgument a : args) {
    std::optional<OperandRole> role =
        readColumn(epilogue, epilogue.getDpsInputOperand(a.getArgNumber()));
    assert(role && "factor reads a non-column operand");
    if (role->kind == OperandRole::Splat) {
      splats.push_back({a, role->splat});
      continue;
    }
    inputs.push_back(role->source);
    maps.push_back(role->columnMap);
    columnArgs.push_back(a);
  }
  Value empty = tensor::EmptyOp::create(b, loc, {h}, f32);
  maps.push_back(b.getMultiDimIdentityMap(1));
  SmallVector<Operation *> slice = factorSlice(epilogue, param);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{empty.getType()}, inputs, ValueRange{empty}, maps,
      {utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange blockArgs) {
        IRMapping mapping;
        for (auto [a, na] : llvm::zip(columnArgs, blockArgs))
          mapping.map(a, na);
        for (auto [a, c] : splats)
          mapping.map(a, arith::ConstantOp::create(
                             nb, l, FloatAttr::get(a.getType(), c)));
        for (Operation *op : slice)
          nb.clone(*op, mapping);
        Value acc;
        for (Value f : param.factors) {
          Value v = toF32(nb, l, mapping.lookupOrDefault(f));
          acc = acc ? arith::MulFOp::create(nb, l, acc, v).getResult() : v;
        }
        if (param.constant != 1.0)
          acc = arith::MulFOp::create(
              nb, l, acc,
              arith::ConstantOp::create(nb, l,
                                        nb.getF32FloatAttr(param.constant)));
        if (param.negate)
          acc = arith::NegFOp::create(nb, l, acc);
        linalg::YieldOp::create(nb, l, acc);
      });
  return generic.getResult(0);
}
