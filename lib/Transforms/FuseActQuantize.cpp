//===- FuseActQuantize.cpp - fuse activation and quantize ----------------===//
//
// Implements `fusion-fuse-act-quantize`. Every fusion.quantize is a
// candidate: the activation that computes its input is recognised by the
// ActivationMatcher, the admission rules below are checked in order, and the
// candidate gets one structured remark (`passed`, or `missed` with the rule
// that failed). A declined candidate is left untouched. A quantizer of a
// gated fusion.paired_projection's value (the FFN front after
// fusion-fuse-paired-projections) is folded into that op instead, which
// then quantizes (fuseIntoPairedProjection).
//
// Admission rules (DeclineRule, include/fusion/Transforms/Declines.def;
// docs/passes.md):
//   "no activation to fuse"          the input is not an activation's result
//                                    (and no dbias reduction sits next to it)
//   "unsupported activation"         the body matches no supported form
//   "activation has another user"    besides the quantizers (a dbias
//                                    reduction only counts as fusable for
//                                    backward or identity non-gated
//                                    activations)
//   "more quantizers than one fused op writes"
//                                    a further quantizer of a fused
//                                    activation that is neither identical to
//                                    a fused one nor mergeable into it
//   "activation body rounds internally"
//                                    with strict-rounding only: the body
//                                    rounds an intermediate to a narrower
//                                    float (truncf inside, bf16 arithmetic)
//   "unsupported input element type" inputs must be bf16, f16 or f32, grad
//                                    and up of the input's type
//   "unsupported shape"              ranks 1..4 (fusion_rt.h views)
//   "unsupported quantization format for fused activation"
//                                    the scheme's format is not in `formats`
//   "unsupported scheme"             (the paired form) an rng operand;
//                                    2D FP8 blocks (weight tiles)
//   "operand defined after the fusion point"
//                                    an operand of the fused op (grad, up,
//                                    delayed scale, rng) comes after the
//                                    quantizer or its dbias reduction
//   "fused op does not verify"       a guard: the rules passed but the op
//                                    would be invalid (a bug)
//
//===----------------------------------------------------------------------===//
#include "fusion/Transforms/CheckElision.h"
#include "fusion/Transforms/Declines.h"
#include "fusion/Transforms/Passes.h"
#include "fusion/Transforms/QuantDestinations.h"
#include "fusion/Transforms/RemarkLock.h"
#include "fusion/Transforms/ShapeReads.h"
#include "fusion/Transforms/Transforms.h"
#include "fusion/Transforms/VerifyQuietly.h"

#include "fusion/Analysis/ActivationMatcher.h"
#include "fusion/Analysis/FloatRange.h"
#include "fusion/Analysis/Permutation.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Remarks.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSEACTQUANTIZE
#include "fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

using Plan = ActQuantizePlan;

/// True for the element types the runtime's entry points read.
bool isRuntimeFloat(Type t) { return t.isBF16() || t.isF16() || t.isF32(); }

/// The value to materialise for an activation input computed inside the
/// generic: the input itself, or its rounding when the body rounds it (to
/// keep that rounding, which the matcher looked through).
Value roundedInput(Value scalar) {
  if (scalar.hasOneUse())
    if (auto trunc = dyn_cast<arith::TruncFOp>(*scalar.getUsers().begin()))
      return trunc.getResult();
  return scalar;
}

/// If the body of `generic` rounds the identity-mapped input `tensor`
/// (arith.truncf of its block argument, possibly after an extf), returns the
/// rounded scalar. The matcher looks through that rounding, but the fused op
/// must read the rounded values, as the unfused graph did: the caller then
/// materialises the rounded tensor.
Value roundedLeaf(linalg::GenericOp generic, Value tensor) {
  for (OpOperand *in : generic.getDpsInputOperands()) {
    if (in->get() != tensor || !generic.getMatchingIndexingMap(in).isIdentity())
      continue;
    SmallVector<Value> frontier{generic.getMatchingBlockArgument(in)};
    while (!frontier.empty()) {
      Value v = frontier.pop_back_val();
      for (Operation *user : v.getUsers()) {
        if (auto trunc = dyn_cast<arith::TruncFOp>(user))
          return trunc.getResult();
        if (isa<arith::ExtFOp>(user))
          frontier.push_back(user->getResult(0));
      }
    }
  }
  return Value();
}

/// Builds a linalg.generic that computes `scalar` (a value of `generic`'s
/// body) as a tensor of the iteration space, cloning only the ops it needs.
Value materializeInput(OpBuilder &b, linalg::GenericOp generic,
                       unsigned resultIndex, Value scalar) {
  Location loc = generic.getLoc();
  Block *body = generic.getBody();
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist{scalar};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op || op->getBlock() != body || !slice.insert(op))
      continue;
    llvm::append_range(worklist, op->getOperands());
  }
  // Only the inputs that the slice reads.
  SmallVector<unsigned> usedInputs;
  for (unsigned i = 0, e = generic.getNumDpsInputs(); i < e; ++i) {
    BlockArgument arg = body->getArgument(i);
    if (arg == scalar || llvm::any_of(arg.getUsers(), [&](Operation *u) {
          return slice.contains(u);
        }))
      usedInputs.push_back(i);
  }
  Value init = generic.getDpsInitOperand(resultIndex)->get();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, init);
  Value empty = tensor::EmptyOp::create(b, loc, sizes, scalar.getType());
  SmallVector<AffineMap> maps;
  SmallVector<Value> inputs;
  for (unsigned i : usedInputs) {
    OpOperand *in = generic.getDpsInputOperand(i);
    inputs.push_back(in->get());
    maps.push_back(generic.getMatchingIndexingMap(in));
  }
  maps.push_back(
      generic.getIndexingMapMatchingResult(generic->getResult(resultIndex)));
  auto newGeneric = linalg::GenericOp::create(
      b, loc, TypeRange{empty.getType()}, inputs, ValueRange{empty}, maps,
      generic.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        IRMapping mapping;
        for (auto [k, i] : llvm::enumerate(usedInputs))
          mapping.map(body->getArgument(i), args[k]);
        for (Operation &op : body->without_terminator())
          if (slice.contains(&op))
            nb.clone(op, mapping);
        linalg::YieldOp::create(nb, l, mapping.lookupOrDefault(scalar));
      });
  return newGeneric.getResult(0);
}


/// `x` with another direction and colwise layout, if that scheme verifies;
/// otherwise null.
static QuantSchemeAttr withDirection(QuantSchemeAttr x,
                                     QuantDirection direction,
                                     ColwiseLayout colwise) {
  auto args = std::make_tuple(
      x.getFormat(), direction, x.getBlockRows(), x.getBlockCols(),
      x.getRounding(), x.getNanPolicy(), colwise, x.getScaleLayout(),
      x.getElemRounding(), x.getTensorScaling(), x.getZeroScale(),
      x.getEpsilon(), x.getPow2Scale(), x.getRecipe());
  if (failed(std::apply(
          [](auto... v) {
            return QuantSchemeAttr::verify([] { return InFlightDiagnostic(); },
                                           v...);
          },
          args)))
    return QuantSchemeAttr();
  return std::apply(
      [&](auto... v) { return QuantSchemeAttr::get(x.getContext(), v...); },
      args);
}

/// If `a` and `b` quantize one value with schemes that differ only in the
/// direction (one rowwise, one colwise), returns the scheme with direction
/// `both` that produces both copies in one pass; otherwise null.
QuantSchemeAttr mergeDirections(QuantizeOp a, QuantizeOp b) {
  QuantSchemeAttr x = a.getScheme(), y = b.getScheme();
  if (a.getInput() != b.getInput() || a.getScale() != b.getScale() ||
      a.getRng() != b.getRng())
    return QuantSchemeAttr();
  if (x.getDirection() == QuantDirection::colwise)
    std::swap(x, y);
  if (x.getDirection() != QuantDirection::rowwise ||
      y.getDirection() != QuantDirection::colwise ||
      x.getFormat() != y.getFormat() || x.getBlockRows() != y.getBlockRows() ||
      x.getBlockCols() != y.getBlockCols() ||
      x.getRounding() != y.getRounding() ||
      x.getNanPolicy() != y.getNanPolicy() ||
      x.getScaleLayout() != y.getScaleLayout() ||
      x.getElemRounding() != y.getElemRounding() ||
      x.getTensorScaling() != y.getTensorScaling() ||
      x.getZeroScale() != y.getZeroScale() ||
      !x.getEpsilon().bitwiseIsEqual(y.getEpsilon()) ||
      x.getPow2Scale() != y.getPow2Scale() || x.getRecipe() != y.getRecipe())
    return QuantSchemeAttr();
  return withDirection(x, QuantDirection::both, y.getColwiseLayout());
}

/// With `strict-rounding`: the first place where the body of `generic`
/// (the part that computes result `resultIndex`) rounds an intermediate
/// value to a float type narrower than f32, as a remark detail; empty if
/// it rounds only its inputs (a truncf of a block argument, or of
/// `inputScalar`, the input the fused op reads materialised) and its result
/// (the cast chain to the yield, the fused op's `via` type). The fused op
/// computes in f32 and rounds once, so it reproduces those roundings and
/// no others.
std::string internalRounding(linalg::GenericOp generic, unsigned resultIndex,
                             Value inputScalar) {
  Block *body = generic.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  // The ops the result depends on.
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist{yield.getOperand(resultIndex)};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op || op->getBlock() != body || !slice.insert(op))
      continue;
    llvm::append_range(worklist, op->getOperands());
  }
  // The result's own cast chain.
  llvm::SmallPtrSet<Operation *, 4> outputCasts;
  for (Value v = yield.getOperand(resultIndex);
       isa_and_present<arith::ExtFOp, arith::TruncFOp>(v.getDefiningOp());
       v = v.getDefiningOp()->getOperand(0))
    outputCasts.insert(v.getDefiningOp());
  auto isInputRead = [&](Value v) {
    while (auto ext = v.getDefiningOp<arith::ExtFOp>())
      v = ext.getIn();
    if (inputScalar && v == inputScalar)
      return true;
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == body;
  };
  auto narrow = [](Type t) {
    auto f = dyn_cast<FloatType>(t);
    return f && f.getWidth() < 32;
  };
  for (Operation &op : body->without_terminator()) {
    // Constants, widenings and the operations that are exact in any type
    // (sign, magnitude, selection) round nothing.
    if (!slice.contains(&op) || outputCasts.contains(&op) ||
        op.getNumResults() != 1 || !narrow(op.getResult(0).getType()) ||
        isa<arith::ConstantOp, arith::ExtFOp, arith::NegFOp, math::AbsFOp,
            arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
            arith::MinNumFOp, arith::SelectOp>(op))
      continue;
    std::string s;
    llvm::raw_string_ostream os(s);
    if (isa<arith::TruncFOp>(op)) {
      if (isInputRead(op.getOperand(0)))
        continue;
      os << "'arith.truncf' rounds an intermediate value to "
         << op.getResult(0).getType();
    } else {
      os << "'" << op.getName() << "' computes in "
         << op.getResult(0).getType();
    }
    return s;
  }
  return std::string();
}

/// True if `a` and `b` quantize one value with one scheme, scale and rng:
/// quantize on tensors has no side effects and never reads its destinations,
/// so their results are equal.
bool isSameQuantizer(QuantizeOp a, QuantizeOp b) {
  return a.getInput() == b.getInput() && a.getScheme() == b.getScheme() &&
         a.getScale() == b.getScale() && a.getRng() == b.getRng() &&
         a->getResultTypes() == b->getResultTypes();
}

/// The fused ops' schemes and the `formats` option: the decline of
/// `scheme`, or DeclineRule::None.
MatchFailure formatDecline(const ActQuantizeOptions &options,
                           QuantSchemeAttr scheme) {
  if (scheme.isBlockFP8() && scheme.getBlockRows() > 1)
    return {DeclineRule::UnsupportedScheme,
            ("2D FP8 blocks (block = " + Twine(scheme.getBlockRows()) + "x" +
             Twine(scheme.getBlockCols()) +
             ") quantize weights; the fused activation ops take 1xG blocks")
                .str()};
  if (!options.formats.empty() &&
      !llvm::is_contained(options.formats, scheme.getFormat()))
    return {DeclineRule::UnsupportedFormatForFusedActivation,
            ("format " + stringifyQuantFormat(scheme.getFormat()) +
             " is not in 'formats'")
                .str()};
  return {};
}

struct FuseActQuantizePass
    : public fusion::impl::FuseActQuantizeBase<FuseActQuantizePass> {
  using FuseActQuantizeBase::FuseActQuantizeBase;

  void runOnOperation() override;

private:
  ActQuantizeOptions options;

  remark::RemarkOpts remarkOpts(StringRef function) const {
    return remark::RemarkOpts::name("FuseActQuantize")
        .category("fusion")
        .function(function);
  }

  void decline(QuantizeOp q, StringRef function, DeclineRule rule,
               StringRef detail) {
    ++numDeclined;
    std::lock_guard<std::mutex> lock(getRemarkMutex());
    remark::missed(q.getLoc(), remarkOpts(function))
        << remark::reason("{0}", declineTag(rule).str())
        << remark::add("{0}", detail.str());
  }

  /// Quantizers already fused as the partner of an earlier one.
  llvm::SmallPtrSet<Operation *, 8> handled;
  /// Colwise quantizers made from rowwise ones of a transpose
  /// (transposedToColwise), named in the remark.
  llvm::SmallPtrSet<Operation *, 8> fromTranspose;
  /// Rowwise quantizers of a transpose left as they are, and why.
  llvm::DenseMap<Operation *, std::string> transposeWhy;

  void processQuantize(QuantizeOp q, StringRef function, DominanceInfo &dom);
  /// The fused op a plan describes, replacing its quantizers, with its
  /// remarks.
  void rewriteQuantize(Plan &plan, StringRef function);
  void fuseIntoPairedProjection(QuantizeOp q, PairedProjectionOp paired,
                                tensor::ExpandShapeOp expand,
                                StringRef function);
};

/// The gated fusion.paired_projection (not yet quantizing) whose result `v`
/// is, directly or through one tensor.expand_shape that splits only its
/// token dimension (a [B, T, K] Linear's result), or null.
PairedProjectionOp gatedPairedProducer(Value v,
                                       tensor::ExpandShapeOp &expand) {
  expand = v.getDefiningOp<tensor::ExpandShapeOp>();
  if (expand) {
    SmallVector<ReassociationIndices> groups =
        expand.getReassociationIndices();
    int64_t rank = expand.getResultType().getRank();
    if (groups.size() != 2 || groups.back().size() != 1 ||
        groups.back()[0] != rank - 1)
      return nullptr;
    v = expand.getSrc();
  }
  auto paired = v.getDefiningOp<PairedProjectionOp>();
  if (!paired || !paired.getGated() || paired.getQuant() ||
      !paired.hasPureTensorSemantics())
    return nullptr;
  return paired;
}

/// An empty matrix of `m`'s sizes (`swap`: swapped) with the element type
/// `elem`; eraseSwappedEmpty undoes it (the tensor.dim ops of dynamic sizes
/// included) where the rewrite is abandoned. Dynamic sizes are read off
/// `m`, which must be defined before the builder's point and outlive the
/// rewrite (not the result of an op it replaces).
static Value swappedEmpty(OpBuilder &b, Location loc, Value m, Type elem,
                          bool swap = true) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, m);
  if (swap)
    std::swap(sizes[0], sizes[1]);
  return tensor::EmptyOp::create(b, loc, sizes, elem);
}
static void eraseSwappedEmpty(Value empty) {
  // The empty tensor, then its tensor.dim sizes, then their index constants.
  SmallVector<Operation *> dead{empty.getDefiningOp()};
  for (size_t i = 0; i < dead.size(); ++i) {
    SmallVector<Value> operands(dead[i]->getOperands());
    dead[i]->erase();
    for (Value v : operands)
      if (Operation *def = v.getDefiningOp();
          def && v.use_empty() && !llvm::is_contained(dead, def) &&
          isa<tensor::DimOp, arith::ConstantIndexOp>(def))
        dead.push_back(def);
  }
}

/// `x` with `direction` (colwise or both) and the colwise data transposed,
/// if that scheme verifies and the runtime's colwise copy of it is the rowwise one
/// of the transposed matrix: MX, NVFP4 with 1-D blocks, FP8 per tensor (the
/// FP8 block formats are rowwise only); otherwise null.
static QuantSchemeAttr transposedColwise(
    QuantSchemeAttr x, QuantDirection direction = QuantDirection::colwise) {
  switch (x.getFormat()) {
  case QuantFormat::fp8_block_e4m3:
  case QuantFormat::fp8_block_e5m2:
    return QuantSchemeAttr();
  case QuantFormat::nvfp4:
    if (x.getBlockRows() != 1)
      return QuantSchemeAttr();
    break;
  default:
    break;
  }
  if (x.getDirection() != QuantDirection::rowwise ||
      x.getElemRounding() != ElemRounding::rne)
    return QuantSchemeAttr();
  return withDirection(x, direction, ColwiseLayout::transposed);
}

/// A rowwise quantizer of a transposed matrix (torchao's MX training
/// quantizes along dim 0 as `to_mx(y.t().contiguous())`; TE's colwise copy)
/// becomes the colwise quantizer, data transposed, of the matrix itself,
/// which then fuses with the activation that computes it and pairs with a
/// rowwise quantizer of it (direction `both`). Two spellings of the
/// transpose, each used only by `q`:
///  - a pure 2-D transpose of `t` (`linalg.transpose`, or a generic whose
///    body yields its input through swapped maps): `q` reads `t`;
///  - an elementwise generic that reads all its inputs transposed (the
///    normalised form of act(x.t())), a recognised activation: rebuilt with
///    identity maps on the untransposed shape, and `q` reads that.
/// Returns the new quantizer, or null with the IR unchanged (and, for a
/// transpose left alone, the reason in `why`). The colwise
/// copy of a [M, N] matrix with its data transposed is, by its definition
/// (FusionOps.td), the rowwise quantizer of the [N, M] transpose: codes
/// [N, M], scales [N, ceil(M/B)] (or swizzled from those rows).
static QuantizeOp transposedToColwise(QuantizeOp q, std::string &why) {
  Value v = q.getInput();
  auto vType = dyn_cast<RankedTensorType>(v.getType());
  Operation *def = v.getDefiningOp();
  if (!vType || vType.getRank() != 2 || !def)
    return QuantizeOp();
  MLIRContext *ctx = q.getContext();
  AffineMap swap = AffineMap::getPermutationMap(ArrayRef<unsigned>{1, 0}, ctx);
  AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
  // What reads the transpose: `source` (a pure transpose) or the operands
  // of `actT` (act(x.t())).
  Value source = transposedMatrix(def);
  linalg::GenericOp actT;
  if (auto g = dyn_cast<linalg::GenericOp>(def); g && !source) {
    SmallVector<AffineMap> maps = g.getIndexingMapsArray();
    bool tensors = llvm::all_of(g.getDpsInputs(), [](Value in) {
      return isa<RankedTensorType>(in.getType());
    });
    if (g->getNumResults() == 1 && g.getNumParallelLoops() == 2 &&
        g.getNumLoops() == 2 && tensors && g.getNumDpsInputs() > 0 &&
        !g.payloadUsesValueFromOperand(g.getDpsInitOperand(0)) &&
        maps.back() == id &&
        llvm::all_of(ArrayRef<AffineMap>(maps).drop_back(),
                     [&](AffineMap m) { return m == swap; }))
      actT = g;
  }
  if (!source && !actT)
    return QuantizeOp();
  // A transpose: the reasons it is not taken as the colwise copy.
  if (!v.hasOneUse()) {
    why = "the transposed value is also used elsewhere";
    return QuantizeOp();
  }
  QuantSchemeAttr scheme =
      q.getRng() ? QuantSchemeAttr() : transposedColwise(q.getScheme());
  if (!scheme) {
    why = "the scheme has no colwise copy that equals it (FP8 block "
          "formats are rowwise only; NVFP4 with 2D blocks or stochastic "
          "rounding)";
    return QuantizeOp();
  }
  OpBuilder b(q);
  Location loc = def->getLoc();
  linalg::GenericOp moved;
  if (actT) {
    // act(x.t()): the same body on the untransposed operands.
    // act(x.t()) reads x [M, N] transposed: the init is x's shape (its
    // sizes read off x, not off v, whose op goes).
    Value init = swappedEmpty(b, loc, actT.getDpsInputs()[0],
                              getElementTypeOrSelf(v), /*swap=*/false);
    moved = linalg::GenericOp::create(
        b, loc, TypeRange{init.getType()}, actT.getDpsInputs(),
        ValueRange{init},
        SmallVector<AffineMap>(actT.getNumDpsInputs() + 1, id),
        actT.getIteratorTypesArray());
    IRMapping map;
    actT.getRegion().cloneInto(&moved.getRegion(), map);
    source = moved.getResult(0);
  }
  auto nq = QuantizeOp::create(b, q.getLoc(), q->getResultTypes(), source,
                               q.getScale(), q.getRng(), q.getOuts(), scheme);
  // Only what then fuses: act(x.t()) must be a recognised activation.
  if (failed(verifyQuietly(nq)) ||
      (moved && !matchActivation(source).match)) {
    nq->erase();
    if (moved) {
      Value init = moved.getDpsInits()[0];
      moved->erase();
      eraseSwappedEmpty(init);
    }
    return QuantizeOp();
  }
  q->replaceAllUsesWith(nq);
  q->erase();
  def->erase();
  return nq;
}

/// FP8 per tensor: a 2-D transpose of an op's rowwise codes (TE's cast +
/// transpose; torchao.float8's `data.t().contiguous()`) is the colwise copy
/// of the same quantizer with its data transposed -- one scale for the
/// tensor, so the codes do not depend on the direction. The op (a
/// quantize, act_quantize or gated_act_quantize) becomes direction `both`,
/// writing that copy in the same pass (runtime/cuda/fp8_transpose.cu on the
/// GPU), and the transpose's users read it. Returns whether it folded.
static bool foldCodeTranspose(Operation *op) {
  auto scheme = op->getAttrOfType<QuantSchemeAttr>("scheme");
  if (!scheme || scheme.getDirection() != QuantDirection::rowwise ||
      (scheme.getFormat() != QuantFormat::fp8_e4m3 &&
       scheme.getFormat() != QuantFormat::fp8_e5m2) ||
      op->getNumResults() == 0)
    return false;
  Value data = op->getResult(0);
  auto dataType = dyn_cast<RankedTensorType>(data.getType());
  if (!dataType || dataType.getRank() != 2)
    return false;
  Operation *transpose = nullptr;
  for (Operation *user : data.getUsers())
    if (transposedMatrix(user) == data) {
      transpose = user;
      break;
    }
  QuantSchemeAttr both = transposedColwise(scheme, QuantDirection::both);
  if (!transpose || !both)
    return false;
  OpBuilder b(op);
  Location loc = op->getLoc();
  // The codes' sizes from their destination (the op's own result is
  // defined after the builder's point, and the op is replaced).
  Value colOut = swappedEmpty(
      b, loc, cast<DestinationStyleOpInterface>(op).getDpsInits()[0],
      dataType.getElementType());
  // A detached copy takes the new destinations (its operand segment sizes
  // follow) and the scheme; the op is then built from it with one result
  // more.
  Operation *copy = op->clone();
  auto setOuts = [&](auto typed) {
    SmallVector<Value> outs(typed.getOuts());
    outs.insert(outs.begin() + 1, colOut);
    typed.getOutsMutable().assign(outs);
    typed.setSchemeAttr(both);
  };
  if (auto q = dyn_cast<QuantizeOp>(copy))
    setOuts(q);
  else if (auto a = dyn_cast<ActQuantizeOp>(copy))
    setOuts(a);
  else if (auto g = dyn_cast<GatedActQuantizeOp>(copy))
    setOuts(g);
  else {
    copy->destroy();
    eraseSwappedEmpty(colOut);
    return false;
  }
  SmallVector<Type> types(op->getResultTypes());
  types.insert(types.begin() + 1, colOut.getType());
  OperationState state(loc, op->getName());
  state.addOperands(copy->getOperands());
  state.addTypes(types);
  state.propertiesAttr = copy->getPropertiesAsAttribute();
  for (NamedAttribute attr : copy->getDiscardableAttrs())
    state.addAttribute(attr.getName(), attr.getValue());
  copy->destroy();
  Operation *folded = b.create(state);
  if (failed(verifyQuietly(folded))) {
    folded->erase();
    eraseSwappedEmpty(colOut);
    return false;
  }
  transpose->getResult(0).replaceAllUsesWith(folded->getResult(1));
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    op->getResult(i).replaceAllUsesWith(folded->getResult(i ? i + 1 : 0));
  transpose->erase();
  op->erase();
  return true;
}

void FuseActQuantizePass::runOnOperation() {
  func::FuncOp func = getOperation();
  options = ActQuantizeOptions();
  for (const std::string &name : formats) {
    std::optional<QuantFormat> f = symbolizeQuantFormat(name);
    if (!f) {
      func.emitError() << "fusion-fuse-act-quantize: unknown format '" << name
                       << "' in 'formats'";
      return signalPassFailure();
    }
    options.formats.push_back(*f);
  }
  options.strictRounding = strictRounding;
  options.finiteInputs = finiteInputs;
  options.settled = &handled;
  // Reads of an activation's sizes (tensor.dim, with dynamic sizes) are no
  // users of it: resolved to its operands' sizes first.
  resolveShapeReadsIn(func);
  SmallVector<QuantizeOp> quantizers;
  func.walk([&](QuantizeOp q) { quantizers.push_back(q); });
  fromTranspose.clear();
  transposeWhy.clear();
  for (QuantizeOp &q : quantizers) {
    std::string why;
    if (QuantizeOp colwise = transposedToColwise(q, why)) {
      q = colwise;
      fromTranspose.insert(colwise);
    } else if (!why.empty()) {
      transposeWhy[q] = why;
    }
  }
  DominanceInfo &dom = getAnalysis<DominanceInfo>();
  handled.clear();
  for (QuantizeOp q : quantizers)
    if (!handled.contains(q.getOperation()))
      processQuantize(q, func.getSymName(), dom);
  // FP8 per tensor: transposes of the codes become the colwise copy.
  SmallVector<Operation *> quantizing;
  func.walk([&](Operation *op) {
    if (isa<QuantizeOp, ActQuantizeOp, GatedActQuantizeOp>(op))
      quantizing.push_back(op);
  });
  for (Operation *op : quantizing) {
    Location loc = op->getLoc();
    std::string name = op->getName().getStringRef().str();
    if (!foldCodeTranspose(op))
      continue;
    std::lock_guard<std::mutex> lock(getRemarkMutex());
    remark::passed(loc, remarkOpts(func.getSymName())) << remark::add(
        "the transpose of this {0}'s FP8 codes is its colwise copy (one "
        "scale per tensor): written by the same op, direction both",
        name);
  }
  // Values the rewrites sized off linalg ops: resolved too, so that a
  // second run finds nothing to change.
  resolveShapeReadsIn(func);
}

/// quantize(reshape(act(x))) through collapse_shape / expand_shape ops, each
/// used once (torchao's to_blocked reads a 3-D activation as [B*T, N]; a
/// quantizer with blocks narrower than the format's reads [T, N] as
/// [T, N/16, 16]): the reshapes move onto the elementwise generic's operands
/// and the generic is rebuilt on the quantized shape, so the activation
/// feeds the quantizer directly. An elementwise generic commutes with any
/// reshape; the blocks are the quantizer's, on its own shape, either way.
/// Only where the generic is a recognised activation whose maps are all
/// identities and whose body does not read its init (its one user is the
/// chain: no dbias reduction reads it); returns the new value, or null with
/// the IR unchanged.
static Value hoistRowReshapes(QuantizeOp q) {
  SmallVector<Operation *> chain;
  Value v = q.getInput();
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def) ||
        !v.hasOneUse())
      break;
    chain.push_back(def);
    v = def->getOperand(0);
  }
  if (chain.empty() || !v.hasOneUse())
    return Value();
  auto inType = cast<RankedTensorType>(v.getType());
  auto outType = cast<RankedTensorType>(q.getInput().getType());
  if (inType.getRank() == 0 || outType.getRank() == 0 ||
      ShapedType::isDynamic(outType.getShape().back()))
    return Value();
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic->getNumResults() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)) ||
      !matchActivation(v).match)
    return Value();
  for (Value in : generic.getDpsInputs())
    if (!isa<RankedTensorType>(in.getType()))
      return Value();

  OpBuilder b(q);
  Location loc = generic.getLoc();
  // The chain, innermost first, applied to one operand.
  auto reshape = [&](Value x) {
    for (Operation *op : llvm::reverse(chain)) {
      Type elem = getElementTypeOrSelf(x.getType());
      if (auto c = dyn_cast<tensor::CollapseShapeOp>(op)) {
        x = tensor::CollapseShapeOp::create(b, loc, x,
                                            c.getReassociationIndices());
      } else {
        auto e = cast<tensor::ExpandShapeOp>(op);
        x = tensor::ExpandShapeOp::create(
            b, loc, e.getResultType().clone(elem), x,
            e.getReassociationIndices(), e.getMixedOutputShape());
      }
    }
    return x;
  };
  SmallVector<Value> ins;
  for (Value in : generic.getDpsInputs())
    ins.push_back(reshape(in));
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, q.getInput()),
      inType.getElementType());
  const unsigned rank = outType.getRank();
  SmallVector<AffineMap> maps(ins.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto moved = linalg::GenericOp::create(b, loc, TypeRange{init.getType()},
                                         ins, ValueRange{init}, maps, iters);
  IRMapping map;
  generic.getRegion().cloneInto(&moved.getRegion(), map);
  q->setOperand(0, moved.getResult(0));
  for (Operation *op : chain)
    op->erase();
  generic->erase();
  return moved.getResult(0);
}

/// quantize(gated paired projection) -> one quantizing paired projection
/// (the FFN front: gate/up projections, the gated activation, the
/// quantizer). The same op as fusion-fuse-paired-projections builds from
/// two projections feeding a fusion.gated_act_quantize.
void FuseActQuantizePass::fuseIntoPairedProjection(
    QuantizeOp q, PairedProjectionOp paired, tensor::ExpandShapeOp expand,
    StringRef function) {
  QuantSchemeAttr scheme = q.getScheme();
  Value value = q.getInput();
  for (Value v : {value, Value(paired->getResult(0))})
    if (!v.hasOneUse()) {
      Operation *other = nullptr;
      for (Operation *user : v.getUsers())
        if (user != q.getOperation() && user != expand.getOperation())
          other = user;
      return decline(q, function, DeclineRule::ActivationHasAnotherUser,
                     "the gated fusion.paired_projection's result is also "
                     "used by '" +
                         (other ? other->getName().getStringRef().str()
                                : std::string("?")) +
                         "'; the quantizing form does not return it");
    }
  if (q.getRng())
    return decline(q, function, DeclineRule::UnsupportedScheme,
                   "a quantizing fusion.paired_projection takes no rng "
                   "operand (stochastic rounding)");
  if (MatchFailure f = formatDecline(options, scheme);
      f.rule != DeclineRule::None)
    return decline(q, function, f.rule, f.detail);
  if (expand && scheme.hasColwise())
    return decline(q, function, DeclineRule::ActUnsupportedShape,
                   "a colwise copy of a result with several token dimensions "
                   "(the fused op quantizes the collapsed [N, H] result; "
                   "only rowwise blocks are the same there)");
  Type intermediate = getElementTypeOrSelf(value.getType());

  OpBuilder b(q);
  Location loc = b.getFusedLoc({paired.getLoc(), q.getLoc()});
  // Destinations of the fused op: the quantizer's, collapsed like the
  // paired result when the value was expanded to several token dimensions.
  // Per-tensor results (FP8's [1] scale_inv and amax) stay as they are.
  SmallVector<Value> outs(q.getOuts());
  SmallVector<ReassociationIndices> groups;
  int64_t tokenRank = 0;
  auto perToken = [&](Value v) {
    return expand && cast<ShapedType>(v.getType()).getRank() == tokenRank;
  };
  if (expand) {
    groups = expand.getReassociationIndices();
    tokenRank = expand.getResultType().getRank();
    for (Value &out : outs)
      if (perToken(out))
        out = tensor::CollapseShapeOp::create(b, loc, out, groups);
  }
  SmallVector<Type> resultTypes;
  for (Value out : outs)
    resultTypes.push_back(out.getType());
  auto fused = PairedProjectionOp::create(
      b, loc, resultTypes, paired.getLhs(), paired.getRhs0(), paired.getRhs1(),
      paired.getBias0(), paired.getScale0(), paired.getBias1(),
      paired.getScale1(), q.getScale(), outs, paired.getEpilogue0Attr(),
      paired.getEpilogue1Attr(), paired.getGatedAttr(), paired.getKnAttr(),
      paired.getRound0Attr(), paired.getRound1Attr(),
      paired.getRoundWithBias0Attr(), paired.getRoundWithBias1Attr(), scheme,
      TypeAttr::get(intermediate));
  if (failed(verifyQuietly(fused))) {
    fused->erase();
    for (auto [out, original] : llvm::zip(outs, q.getOuts()))
      if (out != original)
        out.getDefiningOp()->erase();
    return decline(q, function, DeclineRule::ActFusedOpDoesNotVerify,
                   "the admission rules passed but the quantizing "
                   "fusion.paired_projection would not verify (a bug of "
                   "this pass: please report it with the input)");
  }
  for (auto [i, result] : llvm::enumerate(fused->getResults())) {
    Value replacement = result;
    if (perToken(q->getResult(i)))
      replacement = tensor::ExpandShapeOp::create(
          b, loc, q->getResult(i).getType(), result, groups,
          tensor::getMixedSizes(b, loc, q.getOuts()[i]));
    q->getResult(i).replaceAllUsesWith(replacement);
  }
  Location remarkLoc = q.getLoc();
  SmallVector<Operation *> dead{q.getOperation(), expand.getOperation(),
                                paired.getOperation()};
  eraseWithDeadProducers(dead);
  ++numFused;
  std::lock_guard<std::mutex> lock(getRemarkMutex());
  remark::passed(remarkLoc, remarkOpts(function)) << remark::add(
      "fused quantize into the gated fusion.paired_projection ({0}, {1}, "
      "via {2}): projections, gated activation and quantizer in one op",
      stringifyActivationKind(paired.getGated()->getKind()),
      stringifyQuantFormat(scheme.getFormat()), intermediate);
}

void FuseActQuantizePass::processQuantize(QuantizeOp q, StringRef function,
                                          DominanceInfo &dom) {
  Value value = q.getInput();
  tensor::ExpandShapeOp pairedExpand;
  if (PairedProjectionOp paired = gatedPairedProducer(value, pairedExpand))
    return fuseIntoPairedProjection(q, paired, pairedExpand, function);
  // A normalisation before the rules (the activation moves onto the
  // quantized shape; a no-op where it does not apply).
  if (Value hoisted = hoistRowReshapes(q))
    value = hoisted;
  MatchFailure why;
  FailureOr<Plan> plan = planActQuantize(q, dom, options, &why, value);
  if (failed(plan)) {
    // A rowwise quantizer of a transpose, left as it is: why it was not
    // taken as the colwise copy is the better reason.
    auto it = transposeWhy.find(q);
    if (it != transposeWhy.end() &&
        (why.rule == DeclineRule::UnsupportedActivation ||
         why.rule == DeclineRule::NoActivation))
      why = {DeclineRule::UnsupportedActivation,
             "the quantizer reads a transpose, not taken as the colwise copy "
             "of what it transposes: " +
                 it->second};
    return decline(q, function, why.rule, why.detail);
  }
  plan->colwiseFromTranspose =
      fromTranspose.contains(q.getOperation()) ||
      (plan->partner && fromTranspose.contains(plan->partner.getOperation()));
  rewriteQuantize(*plan, function);
}

} // namespace

FailureOr<ActQuantizePlan>
mlir::fusion::planActQuantize(QuantizeOp q, DominanceInfo &dom,
                              const ActQuantizeOptions &options,
                              MatchFailure *why, Value value) {
  auto no = [&](DeclineRule rule, const Twine &detail) {
    if (why)
      *why = {rule, detail.str()};
    return failure();
  };
  if (!q)
    return no(DeclineRule::NoActivation, "no quantizer given");
  if (!value)
    value = q.getInput();
  const bool finiteInputs = options.finiteInputs;
  auto valueType = cast<RankedTensorType>(value.getType());
  // Other users of the quantized value; one of them may be a dbias
  // reduction. Reads of its shape alone (a tensor.dim: the dynamic sizes of
  // a raised quantizer's outputs, or of other values the frontend sized
  // from it) are no uses of the activation: its producer says its sizes
  // (resolved by the rewrite).
  SmallVector<Operation *> others;
  for (Operation *user : value.getUsers())
    if (user != q.getOperation() && !llvm::is_contained(others, user) &&
        !isResolvableShapeRead(user, value))
      others.push_back(user);
  // A rowwise and a colwise quantizer of the same value become one fused op
  // with direction `both`.
  QuantizeOp partner;
  QuantSchemeAttr scheme = q.getScheme();
  for (Operation *user : others)
    if (auto other = dyn_cast<QuantizeOp>(user))
      if (QuantSchemeAttr both = mergeDirections(q, other)) {
        partner = other;
        scheme = both;
        break;
      }
  if (partner)
    llvm::erase(others, partner.getOperation());
  // Further quantizers of the value in this block: one identical to q or to
  // the partner (quantize on tensors is side-effect free) reads the fused op's results; any other
  // one is more than one fused op writes, and is declined once q fuses.
  SmallVector<QuantizeOp> duplicates, extras;
  for (Operation *user : others) {
    auto other = dyn_cast<QuantizeOp>(user);
    if (!other || other->getBlock() != q->getBlock() ||
        (options.settled && options.settled->contains(user)))
      continue;
    if (isSameQuantizer(q, other) ||
        (partner && isSameQuantizer(partner, other)))
      duplicates.push_back(other);
    else
      extras.push_back(other);
  }
  // Further quantizers are declined in favour of a fused op only when that
  // op takes several quantizers (a pair or duplicates), so that the
  // activation read they share is saved. Fusing a lone quantizer next to
  // another one would only recompute the activation that the other still
  // reads: those stay "another user".
  if (!partner && duplicates.empty())
    extras.clear();
  for (QuantizeOp other : llvm::concat<QuantizeOp>(duplicates, extras))
    llvm::erase(others, other.getOperation());

  std::string dbiasWhy;
  Operation *dbias = nullptr;
  if (others.size() == 1 && others[0]->getBlock() == q->getBlock() &&
      isDbiasReduction(others[0], value, dbiasWhy))
    dbias = others[0];
  // A dbias reduction next to further users: named in the remark.
  Operation *dbiasAmongOthers = nullptr;
  if (others.size() > 1)
    for (Operation *user : others) {
      std::string why;
      if (user->getBlock() == q->getBlock() &&
          isDbiasReduction(user, value, why)) {
        dbiasAmongOthers = user;
        break;
      }
    }

  bool fromHalves = isHalvesPacking(value);
  ActivationMatchResult matched =
      fromHalves ? matchGatedBackward(value) : matchActivation(value);
  Plan plan;
  std::string checksWhy;
  if (matched.match && !others.empty() && !dbias && !dbiasAmongOthers &&
      llvm::all_of(others, feedsChecksOnly)) {
    // torch-mlir's checks on values computed from the activation (the amax
    // of the IR's quantizer, which the raised op no longer reads): fused,
    // the activation is not materialised for them, so they may go only
    // where they are proven never to fail.
    plan.checks = proveChecks(others, finiteInputs, checksWhy);
    if (plan.checks && !plan.checks->asserts.empty()) {
      plan.checksForFiniteInputs = finiteInputs;
      others.clear();
    } else {
      plan.checks.reset();
    }
  }
  if (matched.match) {
    plan.act = *matched.match;
    bool dbiasFusable =
        !plan.act.up &&
        (plan.act.backward || plan.act.kind == ActivationKind::identity);
    if (!others.empty() && !(dbias && dbiasFusable)) {
      std::string detail =
          "'" + others[0]->getName().getStringRef().str() + "' also uses it";
      if (dbiasAmongOthers) {
        Operation *other =
            others[0] == dbiasAmongOthers ? others[1] : others[0];
        detail = "the dbias reduction is not the only other user: '" +
                 other->getName().getStringRef().str() + "' also uses it";
      } else if (dbias && plan.act.up)
        detail = "the runtime has no dbias for gated activations";
      else if (dbias)
        detail = "a dbias reduction fuses only with a backward or identity "
                 "activation, not " +
                 activationName(plan.act.kind, plan.act.backward);
      else if (!checksWhy.empty())
        detail = "'" + others[0]->getName().getStringRef().str() +
                 "' also uses it, for checks only (torch-mlir's cf.assert "
                 "on values computed from it, e.g. the amax that the raised "
                 "quantizer no longer reads): fused, the activation would "
                 "still be written for them; " +
                 checksWhy;
      else if (!dbiasWhy.empty())
        detail = "the reduction is not a dbias: " + dbiasWhy;
      return no(DeclineRule::ActivationHasAnotherUser, detail);
    }
    plan.dbias = dbias;
    for (Value half : plan.act.halves)
      if (!half.hasOneUse())
        return no(DeclineRule::ActivationHasAnotherUser,
                  "a half of the gated gradient is also used "
                  "elsewhere");
    // [dgate | dup] written by two insert_slice: the first write must not
    // be read by anything but the second.
    for (size_t i = 1; i < plan.act.packOps.size(); ++i)
      if (!plan.act.packOps[i]->getResult(0).hasOneUse())
        return no(DeclineRule::ActivationHasAnotherUser,
                  "the tensor holding one half of the gated gradient is "
                  "also used elsewhere");
  } else if (dbias) {
    // quantize + dbias of a value that is not a recognised activation.
    plan.act.kind = ActivationKind::identity;
    plan.act.input = value;
    plan.dbias = dbias;
  } else if (fromHalves || value.getDefiningOp<linalg::GenericOp>()) {
    // The matcher's reason is this rule's tag (ActivationMatch::reason).
    return no(DeclineRule::UnsupportedActivation, matched.detail);
  } else {
    std::string detail = "the quantized value is not computed by an "
                         "elementwise linalg.generic";
    if (!dbiasWhy.empty())
      detail += "; the reduction next to it is not a dbias: " + dbiasWhy;
    return no(DeclineRule::NoActivation, detail);
  }
  ActivationMatch &act = plan.act;

  // strict-rounding: the fused result must equal the unfused one bit for
  // bit as far as rounding goes.
  if (options.strictRounding && act.generic &&
      act.kind != ActivationKind::identity) {
    std::string why =
        internalRounding(act.generic, act.resultIndex, act.inputScalar);
    if (why.empty() && act.halves.size() == 2)
      if (auto dup = dyn_cast_or_null<linalg::GenericOp>(
              act.halves[1].getDefiningOp()))
        why = internalRounding(
            dup, cast<OpResult>(act.halves[1]).getResultNumber(), Value());
    if (!why.empty())
      return no(DeclineRule::BodyRoundsInternally,
                why + " (strict-rounding: the fused op computes in f32 "
                      "and rounds once)");
  }

  // Element types the fused op will read (a leaf the body rounds is read
  // rounded).
  // (For identity the body's rounding is the intermediate rounding itself.)
  bool isIdentity = act.kind == ActivationKind::identity;
  auto readType = [&](Value tensor) -> Type {
    if (act.generic && !isIdentity)
      if (Value rounded = roundedLeaf(act.generic, tensor))
        return rounded.getType();
    return getElementTypeOrSelf(tensor.getType());
  };
  Type inputElem =
      act.input ? readType(act.input) : roundedInput(act.inputScalar).getType();
  if (!isRuntimeFloat(inputElem)) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "input element type " << inputElem << " (the runtime reads bf16, "
       << "f16 or f32)";
    return no(DeclineRule::UnsupportedInputElementType, s);
  }
  if (act.grad && readType(act.grad) != inputElem)
    return no(DeclineRule::UnsupportedInputElementType,
              "grad and input have different element types");
  if (act.up && (readType(act.up) != inputElem ||
                 cast<ShapedType>(act.up.getType()).getShape() !=
                     cast<ShapedType>(act.input.getType()).getShape()))
    return no(DeclineRule::UnsupportedInputElementType,
              "gate and up have different types");

  Type intermediate =
      act.intermediate ? act.intermediate : valueType.getElementType();
  if (!isRuntimeFloat(intermediate)) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "the activation is rounded to " << intermediate
       << " (the runtime rounds to bf16, f16 or f32)";
    return no(DeclineRule::UnsupportedInputElementType, s);
  }

  // Shapes: fusion_rt.h views have rank 1..4.
  if (valueType.getRank() < 1 || valueType.getRank() > 4)
    return no(DeclineRule::ActUnsupportedShape,
              "rank " + std::to_string(valueType.getRank()) +
                  " (the runtime takes ranks 1 to 4)");

  // Gated backward: the runtime scales the two halves separately, so a
  // rowwise block of the concatenation must not straddle them.
  if (!act.packOps.empty() && scheme.hasRowwise() &&
      scheme.getBlockSize() > 0) {
    int64_t width = valueType.getShape().back();
    if (ShapedType::isDynamic(width) ||
        (width / 2) % scheme.getBlockSize() != 0)
      return no(DeclineRule::ActUnsupportedShape,
                "rowwise blocks of " + std::to_string(scheme.getBlockSize()) +
                    " would straddle the [dgate | dup] halves (the "
                    "half width must be a known multiple)");
  }

  // Format.
  if (MatchFailure f = formatDecline(options, scheme);
      f.rule != DeclineRule::None)
    return no(f.rule, f.detail);

  // Where the fused op goes: before the quantize or the dbias reduction,
  // whichever comes first; every operand must dominate that point.
  Operation *anchor = q;
  if (partner && partner->getBlock() == q->getBlock() &&
      partner->isBeforeInBlock(q))
    anchor = partner;
  if (partner && partner->getBlock() != q->getBlock())
    return no(DeclineRule::ActivationHasAnotherUser,
              "the other quantizer is in another block");
  if (plan.dbias && plan.dbias->isBeforeInBlock(anchor))
    anchor = plan.dbias;
  SmallVector<Value> operands{act.input, act.grad, act.up, q.getScale(),
                              q.getRng()};
  if (act.inputScalar)
    llvm::append_range(operands, act.generic.getDpsInputs());
  for (Value v : operands)
    if (v && !dom.properlyDominates(v, anchor))
      return no(DeclineRule::OperandAfterFusionPoint,
                "the fused op goes before the first of the quantizer "
                "and its dbias reduction, and one of its operands (the "
                "gradient, the up half, the delayed scale or the rng "
                "state) is defined after that point");

  plan.q = q;
  plan.partner = partner;
  plan.duplicates = std::move(duplicates);
  plan.extras = std::move(extras);
  plan.scheme = scheme;
  plan.value = value;
  plan.intermediate = intermediate;
  plan.anchor = anchor;
  return plan;
}

FailureOr<ActQuantizeRewrite>
mlir::fusion::rewriteActQuantize(RewriterBase &rewriter, ActQuantizePlan &plan,
                                 MatchFailure *why) {
  QuantizeOp q = plan.q, partner = plan.partner;
  SmallVector<QuantizeOp> &duplicates = plan.duplicates;
  QuantSchemeAttr scheme = plan.scheme;
  ActivationMatch &act = plan.act;
  const bool isIdentity = act.kind == ActivationKind::identity;
  Type intermediate = plan.intermediate;
  Operation *anchor = plan.anchor;
  // What goes with the fusion: the shape reads of the activation (to its
  // producer's sizes) and the checks proven to hold.
  resolveShapeReads(rewriter, plan.value);
  if (plan.checks)
    eraseProvenChecks(rewriter, *plan.checks);

  // Rewrite.
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(anchor);
  RewriterBase &b = rewriter;
  Location loc = q.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  // The tensors the fused op reads: the matched leaves, or the values the
  // body computes (or rounds) from them, materialised.
  auto operandFor = [&](Value tensor) -> Value {
    if (!tensor || !act.generic || isIdentity)
      return tensor;
    if (Value rounded = roundedLeaf(act.generic, tensor))
      return materializeInput(b, act.generic, act.resultIndex, rounded);
    return tensor;
  };
  Value input = act.input ? operandFor(act.input)
                          : materializeInput(b, act.generic, act.resultIndex,
                                             roundedInput(act.inputScalar));
  Value grad = operandFor(act.grad);
  Value up = operandFor(act.up);
  // Parameters are passed to the runtime as f32: keep their f32 values.
  auto param = [](std::optional<double> v, const llvm::APFloat &def) {
    return v ? llvm::APFloat(static_cast<double>(static_cast<float>(*v))) : def;
  };
  ActivationAttr actAttr = ActivationAttr::get(ctx, act.kind, act.backward);
  if (act.alpha || act.limit || act.offset || act.maskSelect)
    actAttr = ActivationAttr::get(ctx, act.kind, act.backward,
                                  param(act.limit, actAttr.getLimit()),
                                  param(act.offset, actAttr.getOffset()),
                                  param(act.alpha, actAttr.getAlpha()),
                                  act.maskSelect);
  TypeAttr intermediateAttr = TypeAttr::get(intermediate);
  // Result types by kind, taken from the quantizers being replaced.
  SmallVector<QuantResultKind, 6> fusedKinds =
      getQuantResultKinds(scheme, /*withDbias=*/false);
  auto kindsOf = [](QuantizeOp op) {
    return getQuantResultKinds(op.getScheme(), /*withDbias=*/false);
  };
  SmallVector<Type> resultTypes;
  for (QuantResultKind k : fusedKinds) {
    for (QuantizeOp from : {q, partner}) {
      if (!from)
        continue;
      auto kinds = kindsOf(from);
      auto it = llvm::find(kinds, k);
      if (it != kinds.end()) {
        resultTypes.push_back(from->getResult(it - kinds.begin()).getType());
        break;
      }
    }
  }

  Operation *fused;
  std::string form;
  SmallVector<Value> outs;
  if (up) {
    SmallVector<Value, 2> inputs;
    if (Value packed = matchPackedGateUp(input, up)) {
      inputs.push_back(packed);
      form = " from a packed [gate | up] tensor";
    } else {
      inputs = {input, up};
      form = " from gate and up tensors";
    }
    // The quantized data: [.., K] forward, [.., 2K] = [dgate | dup]
    // backward, from the gate (or the packed [gate | up]) tensor.
    SmallVector<OpFoldResult> data = tensor::getMixedSizes(b, loc, inputs[0]);
    ValueDims alg{b, loc};
    if (inputs.size() == 1)
      data.back() = alg.divExact(data.back(), 2);
    unsigned halves = act.backward ? 2 : 1;
    if (act.backward)
      data.back() = alg.mul(data.back(), 2);
    outs = createQuantDestinations(
        b, loc, scheme, data, halves, /*dbias=*/false, resultTypes);
    fused = GatedActQuantizeOp::create(b, loc, resultTypes, actAttr, inputs,
                                       grad, q.getScale(), q.getRng(), outs,
                                       scheme, intermediateAttr);
  } else {
    if (plan.dbias)
      resultTypes.push_back(plan.dbias->getResult(0).getType());
    outs = createQuantDestinations(
        b, loc, scheme, tensor::getMixedSizes(b, loc, input), 1,
        plan.dbias != nullptr, resultTypes);
    fused = ActQuantizeOp::create(
        b, loc, resultTypes, actAttr, input, grad, q.getScale(), q.getRng(),
        outs, scheme, intermediateAttr,
        plan.dbias ? b.getUnitAttr() : UnitAttr());
    if (plan.dbias)
      form = " with dbias";
  }
  // The rules above imply a valid op; a failure here is a bug, reported as a
  // decline rather than as invalid IR.
  LogicalResult verified = verifyQuietly(fused);
  if (failed(verified)) {
    SmallVector<Value> made{input, grad, up};
    rewriter.eraseOp(fused);
    for (Value out : outs)
      eraseWithDeadProducers(rewriter, {out.getDefiningOp()});
    for (auto [mine, matched] :
         llvm::zip(made, SmallVector<Value>{act.input, act.grad, act.up}))
      if (mine && mine != matched && mine.use_empty())
        eraseWithDeadProducers(rewriter, {mine.getDefiningOp()});
    if (why)
      *why = {DeclineRule::ActFusedOpDoesNotVerify,
              "the admission rules passed but the fused op would not verify "
              "(a bug of fusion-fuse-act-quantize: please report it with the "
              "input)"};
    return failure();
  }

  SmallVector<QuantizeOp> replaced{q};
  if (partner)
    replaced.push_back(partner);
  llvm::append_range(replaced, duplicates);
  for (QuantizeOp from : replaced)
    for (auto [i, k] : llvm::enumerate(kindsOf(from)))
      rewriter.replaceAllUsesWith(
          from->getResult(i),
          fused->getResult(llvm::find(fusedKinds, k) - fusedKinds.begin()));
  if (plan.dbias)
    rewriter.replaceAllUsesWith(plan.dbias->getResult(0),
                                fused->getResults().back());
  SmallVector<Operation *> dead{q.getOperation(), partner.getOperation(),
                                plan.dbias};
  for (QuantizeOp dup : duplicates)
    dead.push_back(dup.getOperation());
  llvm::append_range(dead, act.packOps);
  if (act.generic && act.generic->use_empty())
    dead.push_back(act.generic);
  eraseWithDeadProducers(rewriter, dead);

  if (partner)
    form += " (rowwise and colwise quantizers as direction both)";
  if (plan.colwiseFromTranspose)
    form += " (a rowwise quantizer of the transposed activation as its "
            "colwise copy, data transposed)";
  if (plan.checks && !plan.checks->asserts.empty())
    form += "; " + std::to_string(plan.checks->asserts.size()) +
            " check(s) (cf.assert) on values computed from the activation "
            "proven to hold for every " +
            (plan.checksForFiniteInputs ? "finite input" : "input") +
            " and dropped";
  return ActQuantizeRewrite{fused, form};
}

namespace {

void FuseActQuantizePass::rewriteQuantize(Plan &plan, StringRef function) {
  QuantizeOp q = plan.q, partner = plan.partner;
  // The quantizers go with the rewrite: what the remarks need first.
  Location loc = q.getLoc();
  std::optional<Location> partnerLoc;
  if (partner)
    partnerLoc = partner.getLoc();
  SmallVector<Location> duplicateLocs;
  for (QuantizeOp dup : plan.duplicates)
    duplicateLocs.push_back(dup.getLoc());
  IRRewriter rewriter(&getContext());
  MatchFailure why;
  FailureOr<ActQuantizeRewrite> done = rewriteActQuantize(rewriter, plan, &why);
  if (failed(done))
    return decline(q, function, why.rule, why.detail);
  if (partner)
    handled.insert(partner.getOperation());
  for (QuantizeOp dup : plan.duplicates)
    handled.insert(dup.getOperation());
  for (QuantizeOp extra : plan.extras)
    handled.insert(extra.getOperation());

  ++numFused;
  std::string what = activationName(plan.act.kind, plan.act.backward);
  const std::string &form = done->form;
  std::string opName = done->fused->getName().getStringRef().str();
  {
    std::lock_guard<std::mutex> lock(getRemarkMutex());
    remark::passed(loc, remarkOpts(function)) << remark::add(
        "fused {0} and quantize into {1}{2}", what, opName, form);
    if (partnerLoc)
      remark::passed(*partnerLoc, remarkOpts(function)) << remark::add(
          "fused {0} and quantize into {1}{2}", what, opName, form);
    for (Location dupLoc : duplicateLocs)
      remark::passed(dupLoc, remarkOpts(function)) << remark::add(
          "fused {0} and quantize into {1}{2}; this quantizer is identical "
          "to a fused one and reads its results",
          what, opName, form);
  }
  // The runtime writes at most one rowwise and one colwise copy per fused
  // op; the other quantizers keep reading the unfused activation.
  for (QuantizeOp extra : plan.extras)
    decline(extra, function, DeclineRule::MoreQuantizers,
            "this activation also feeds a fused " + opName + " with " +
                stringifyQuantFormat(plan.scheme.getFormat()).str() + ", " +
                stringifyQuantDirection(plan.scheme.getDirection()).str() +
                "; one fused op writes one rowwise and one colwise copy of "
                "one scheme, so this quantizer reads the activation");
}

} // namespace
