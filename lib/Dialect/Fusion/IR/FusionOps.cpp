//===- FusionOps.cpp - fusion op verifiers and shape rules ----------------===//
//
// The verifiers derive every expected result type from the scheme and the
// input shape (inferQuantResultTypes) and say, in one sentence, what does not
// fit. Dynamic dimensions are accepted wherever the relation cannot be
// checked statically.
//
//===----------------------------------------------------------------------===//
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/IR/QuantShapes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fusion;

//===----------------------------------------------------------------------===//
// Custom directive: a fusion attribute written as its mnemonic and body,
// `quant<mxfp8_e4m3, rowwise>`. The `#fusion.` prefix is left out on purpose:
// the generic parser would take the op's `: (types)` for the attribute's type.
//===----------------------------------------------------------------------===//

template <typename AttrT>
static ParseResult parseFusionAttr(OpAsmParser &parser, AttrT &result) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(AttrT::getMnemonic()))
    return failure();
  Attribute attr = AttrT::parse(parser, Type());
  if (!attr)
    return failure();
  result = dyn_cast<AttrT>(attr);
  if (!result)
    return parser.emitError(loc) << "expected a " << AttrT::getMnemonic()
                                 << "<...> attribute";
  return success();
}

template <typename AttrT>
static void printFusionAttr(OpAsmPrinter &p, Operation *, AttrT attr) {
  p << AttrT::getMnemonic();
  attr.print(p);
}

/// An epilogue kind written as a bare keyword (`sigmoid`), after an optional
/// `round(type)` or `round(type, with_bias)` of the accumulator.
static ParseResult parseEpilogue(OpAsmParser &parser, EpilogueKindAttr &result,
                                 TypeAttr &round, UnitAttr &withBias) {
  if (succeeded(parser.parseOptionalKeyword("round"))) {
    Type t;
    if (parser.parseLParen() || parser.parseType(t))
      return failure();
    if (succeeded(parser.parseOptionalComma())) {
      if (parser.parseKeyword("with_bias"))
        return failure();
      withBias = UnitAttr::get(parser.getContext());
    }
    if (parser.parseRParen())
      return failure();
    round = TypeAttr::get(t);
  }
  SMLoc loc = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseKeyword(&word))
    return failure();
  std::optional<EpilogueKind> kind = symbolizeEpilogueKind(word);
  if (!kind)
    return parser.emitError(loc)
           << "unknown epilogue '" << word
           << "' (expected none, bias, sigmoid, silu, softplus_bias_scale, "
              "softplus_log_bias_scale or softplus_stable_bias_scale)";
  result = EpilogueKindAttr::get(parser.getContext(), *kind);
  return success();
}

static void printEpilogue(OpAsmPrinter &p, Operation *, EpilogueKindAttr attr,
                          TypeAttr round, UnitAttr withBias) {
  if (round)
    p << "round(" << round.getValue() << (withBias ? ", with_bias" : "")
      << ") ";
  p << stringifyEpilogueKind(attr.getValue());
}

//===----------------------------------------------------------------------===//
// Result layout of quantizers
//===----------------------------------------------------------------------===//

StringRef mlir::fusion::stringifyQuantResultKind(QuantResultKind kind) {
  switch (kind) {
  case QuantResultKind::RowData:
    return "rowwise data";
  case QuantResultKind::RowScales:
    return "rowwise scales";
  case QuantResultKind::ColData:
    return "colwise data";
  case QuantResultKind::ColScales:
    return "colwise scales";
  case QuantResultKind::ScaleInv:
    return "scale_inv";
  case QuantResultKind::Amax:
    return "amax";
  case QuantResultKind::Dbias:
    return "dbias";
  }
  llvm_unreachable("unknown result kind");
}

SmallVector<QuantResultKind, 6>
mlir::fusion::getQuantResultKinds(QuantSchemeAttr scheme, bool withDbias) {
  SmallVector<QuantResultKind, 6> kinds;
  bool perTensor = scheme.isPerTensor();
  if (scheme.hasRowwise()) {
    kinds.push_back(QuantResultKind::RowData);
    if (!perTensor)
      kinds.push_back(QuantResultKind::RowScales);
  }
  if (scheme.hasColwise()) {
    kinds.push_back(QuantResultKind::ColData);
    if (!perTensor)
      kinds.push_back(QuantResultKind::ColScales);
  }
  if (perTensor)
    kinds.push_back(QuantResultKind::ScaleInv);
  if (perTensor || scheme.getFormat() == QuantFormat::nvfp4)
    kinds.push_back(QuantResultKind::Amax);
  if (withDbias)
    kinds.push_back(QuantResultKind::Dbias);
  return kinds;
}

namespace {
/// Static dimension algebra: kDynamic absorbs every operation.
struct StaticDims {
  using Dim = int64_t;
  static bool dyn(Dim d) { return ShapedType::isDynamic(d); }
  Dim constant(int64_t v) { return v; }
  Dim ceilDiv(Dim d, int64_t k) { return dyn(d) ? d : (d + k - 1) / k; }
  Dim roundUp(Dim d, int64_t k) { return dyn(d) ? d : ((d + k - 1) / k) * k; }
  Dim mul(Dim d, int64_t k) { return dyn(d) ? d : d * k; }
  Dim divExact(Dim d, int64_t k) { return dyn(d) ? d : d / k; }
};
} // namespace

static int64_t mulDim(int64_t d, int64_t k) { return StaticDims().mul(d, k); }

FailureOr<SmallVector<RankedTensorType, 6>>
mlir::fusion::inferQuantResultTypes(MLIRContext *ctx, QuantSchemeAttr scheme,
                                    ArrayRef<int64_t> shape,
                                    unsigned numHalves, bool withDbias,
                                    std::string &error) {
  llvm::raw_string_ostream os(error);
  int64_t rank = shape.size();
  if (rank < 1) {
    os << "a quantizer needs an input of rank >= 1";
    return failure();
  }
  bool perTensor = scheme.isPerTensor();
  bool needsRank2 =
      scheme.getScaleLayout() == ScaleLayout::swizzled ||
      (scheme.hasColwise() &&
       (!perTensor || scheme.getColwiseLayout() == ColwiseLayout::transposed)) ||
      scheme.getBlockRows() > 1;
  if (needsRank2 && rank != 2) {
    os << "this scheme needs a rank-2 input, got rank " << rank;
    return failure();
  }
  // Callers pass whole halves (the gated backward output is 2K wide).
  assert((ShapedType::isDynamic(shape.back()) ||
          shape.back() % numHalves == 0) &&
         "data does not split into halves");
  StaticDims alg;
  auto shapes =
      computeQuantResultShapes(alg, scheme, shape, numHalves, withDbias);
  SmallVector<QuantResultKind, 6> kinds =
      getQuantResultKinds(scheme, withDbias);
  SmallVector<RankedTensorType, 6> types;
  for (auto [kind, s] : llvm::zip_equal(kinds, shapes)) {
    Type elt;
    switch (kind) {
    case QuantResultKind::RowData:
    case QuantResultKind::ColData:
      elt = scheme.getDataType(ctx);
      break;
    case QuantResultKind::RowScales:
    case QuantResultKind::ColScales:
      elt = scheme.getScaleType(ctx);
      break;
    default:
      elt = Float32Type::get(ctx);
      break;
    }
    types.push_back(RankedTensorType::get(s, elt));
  }
  return types;
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      "x");
  return s;
}

/// The element type and shape FP4 data has when it is packed two per byte.
static bool isPackedFp4(Type expectedElt, Type actualElt) {
  return isa<Float4E2M1FNType>(expectedElt) && actualElt.isInteger(8);
}

/// Checks the destinations (and so the results) of a quantizing op against
/// the scheme.
static LogicalResult verifyQuantizedResults(Operation *op,
                                            QuantSchemeAttr scheme,
                                            ArrayRef<int64_t> dataShape,
                                            unsigned numHalves,
                                            bool withDbias) {
  std::string error;
  auto expected = inferQuantResultTypes(op->getContext(), scheme, dataShape,
                                        numHalves, withDbias, error);
  if (failed(expected))
    return op->emitOpError() << error;
  SmallVector<QuantResultKind, 6> kinds =
      getQuantResultKinds(scheme, withDbias);
  auto outs = cast<DestinationStyleOpInterface>(op).getDpsInits();
  if (outs.size() != expected->size()) {
    InFlightDiagnostic diag = op->emitOpError()
                              << "has " << outs.size()
                              << " destinations but the scheme implies "
                              << expected->size() << " (";
    llvm::interleaveComma(kinds, diag, [&](QuantResultKind k) {
      diag << stringifyQuantResultKind(k);
    });
    return diag << ")";
  }
  for (auto [i, exp] : llvm::enumerate(*expected)) {
    auto actual = cast<ShapedType>(outs[i].getType());
    StringRef what = stringifyQuantResultKind(kinds[i]);
    SmallVector<int64_t> expShape(exp.getShape());
    if (isPackedFp4(exp.getElementType(), actual.getElementType())) {
      int64_t &last = expShape.back();
      if (!ShapedType::isDynamic(last) && last % 2 != 0)
        return op->emitOpError()
               << "result #" << i << " (" << what << ") packs FP4 two per "
               << "byte but has an odd number (" << last
               << ") of elements per row";
      last = StaticDims().divExact(last, 2);
    } else if (actual.getElementType() != exp.getElementType()) {
      return op->emitOpError()
             << "result #" << i << " (" << what << ") has element type "
             << actual.getElementType() << " but the scheme implies "
             << exp.getElementType()
             << (isa<Float4E2M1FNType>(exp.getElementType())
                     ? " (or i8, packed two per byte)"
                     : "");
    }
    if (actual.getRank() != static_cast<int64_t>(expShape.size()) ||
        failed(verifyCompatibleShape(actual.getShape(), expShape)))
      return op->emitOpError()
             << "result #" << i << " (" << what << ") has shape "
             << shapeString(actual.getShape()) << " but the scheme implies "
             << shapeString(expShape);
  }
  return success();
}

/// Destination style: all tensors (results = destinations) or all memrefs
/// (no results).
static LogicalResult verifyDestinationStyle(Operation *op) {
  auto dps = cast<DestinationStyleOpInterface>(op);
  if (!dps.hasPureTensorSemantics() && !dps.hasPureBufferSemantics())
    return op->emitOpError()
           << "operands must be all tensors or all memrefs";
  for (auto [i, res] : llvm::enumerate(op->getResults())) {
    Type out = dps.getDpsInits()[i].getType();
    if (res.getType() != out)
      return op->emitOpError() << "result #" << i << " has type "
                               << res.getType() << " but its destination has "
                               << "type " << out;
  }
  return success();
}

/// Reads every input and writes every destination; nothing on tensors.
static void getDpsEffects(
    Operation *op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  auto dps = cast<DestinationStyleOpInterface>(op);
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    if (dps.isDpsInit(&operand))
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    else
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

static Speculation::Speculatability getDpsSpeculatability(Operation *op) {
  return cast<DestinationStyleOpInterface>(op).hasPureTensorSemantics()
             ? Speculation::Speculatable
             : Speculation::NotSpeculatable;
}

#define FUSION_DPS_INTERFACE_METHODS(OpT)                                      \
  void OpT::getEffects(                                                        \
      SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>      \
          &effects) {                                                          \
    getDpsEffects(*this, effects);                                             \
  }                                                                            \
  Speculation::Speculatability OpT::getSpeculatability() {                     \
    return getDpsSpeculatability(*this);                                       \
  }
FUSION_DPS_INTERFACE_METHODS(QuantizeOp)
FUSION_DPS_INTERFACE_METHODS(ActQuantizeOp)
FUSION_DPS_INTERFACE_METHODS(GatedActQuantizeOp)
FUSION_DPS_INTERFACE_METHODS(PairedProjectionOp)
#undef FUSION_DPS_INTERFACE_METHODS

static bool isSupportedInputElement(Type t) {
  return t.isBF16() || t.isF16() || t.isF32();
}

/// Checks the optional `scale` and `rng` operands against the scheme.
static LogicalResult verifyQuantOperands(Operation *op, QuantSchemeAttr scheme,
                                         Value scale, Value rng) {
  bool delayed = scheme.getTensorScaling() == TensorScaling::delayed;
  if (delayed && !scale)
    return op->emitOpError() << "delayed scaling needs a 'scale' operand";
  if (!delayed && scale)
    return op->emitOpError()
           << "'scale' operand is only used by FP8 delayed scaling";
  if (scale) {
    auto t = cast<ShapedType>(scale.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != 1 ||
        !t.getElementType().isF32())
      return op->emitOpError() << "'scale' operand must be tensor<1xf32>";
  }
  bool stochastic = scheme.getElemRounding() == ElemRounding::stochastic;
  if (stochastic && !rng)
    return op->emitOpError()
           << "stochastic rounding needs an 'rng' operand (seed, offset)";
  if (!stochastic && rng)
    return op->emitOpError()
           << "'rng' operand is only used by stochastic rounding";
  if (rng) {
    auto t = cast<ShapedType>(rng.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != 2 ||
        !t.getElementType().isInteger(64))
      return op->emitOpError() << "'rng' operand must be tensor<2xi64>";
  }
  return success();
}

/// 2D FP8 blocks (block = RxC, R > 1: weight tiles) are for fusion.quantize;
/// the runtime's activation entry points refuse them.
static LogicalResult verifyNot2DBlocks(Operation *op, QuantSchemeAttr scheme) {
  if (scheme.isBlockFP8() && scheme.getBlockRows() > 1)
    return op->emitOpError()
           << "quantizes with 2D FP8 blocks (block = " << scheme.getBlockRows()
           << "x" << scheme.getBlockCols()
           << "), which apply to fusion.quantize only (weight tiles)";
  return success();
}

static LogicalResult verifyInputElement(Operation *op, StringRef name,
                                        Value v) {
  Type t = cast<ShapedType>(v.getType()).getElementType();
  if (!isSupportedInputElement(t))
    return op->emitOpError() << name << " element type must be bf16, f16 or "
                             << "f32, got " << t;
  return success();
}

static LogicalResult verifyIntermediate(Operation *op, Type t) {
  if (!isSupportedInputElement(t))
    return op->emitOpError()
           << "intermediate element type must be bf16, f16 or f32, got " << t;
  return success();
}

static std::string actName(ActivationAttr act) {
  return (Twine(act.getBackward() ? "d" : "") +
          stringifyActivationKind(act.getKind()))
      .str();
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  if (failed(verifyDestinationStyle(*this)))
    return failure();
  if (failed(verifyInputElement(*this, "input", getInput())) ||
      failed(verifyQuantOperands(*this, getScheme(), getScale(), getRng())))
    return failure();
  return verifyQuantizedResults(*this, getScheme(),
                                cast<ShapedType>(getInput().getType()).getShape(), 1,
                                /*withDbias=*/false);
}

//===----------------------------------------------------------------------===//
// ActQuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult ActQuantizeOp::verify() {
  if (failed(verifyDestinationStyle(*this)))
    return failure();
  ActivationAttr act = getActivation();
  if (act.isGated())
    return emitOpError() << "gated activation '" << actName(act)
                         << "' needs fusion.gated_act_quantize";
  if (act.getBackward() && !getGrad())
    return emitOpError() << "backward activation '" << actName(act)
                         << "' needs a 'grad' operand";
  if (!act.getBackward() && getGrad())
    return emitOpError() << "forward activation '" << actName(act)
                         << "' takes no 'grad' operand";
  if (failed(verifyInputElement(*this, "input", getInput())) ||
      failed(verifyIntermediate(*this, getIntermediate())) ||
      failed(verifyNot2DBlocks(*this, getScheme())) ||
      failed(verifyQuantOperands(*this, getScheme(), getScale(), getRng())))
    return failure();
  auto inTy = cast<ShapedType>(getInput().getType());
  if (Value grad = getGrad()) {
    auto gTy = cast<ShapedType>(grad.getType());
    if (failed(verifyInputElement(*this, "grad", grad)))
      return failure();
    if (gTy.getRank() != inTy.getRank() ||
        failed(verifyCompatibleShape(gTy.getShape(), inTy.getShape())))
      return emitOpError() << "'grad' shape " << shapeString(gTy.getShape())
                           << " differs from input shape "
                           << shapeString(inTy.getShape());
  }
  if (getDbias() && !act.getBackward() &&
      act.getKind() != ActivationKind::identity)
    return emitOpError() << "dbias needs a backward activation or identity, "
                            "not '"
                         << actName(act) << "'";
  return verifyQuantizedResults(*this, getScheme(), inTy.getShape(), 1,
                                getDbias());
}

//===----------------------------------------------------------------------===//
// GatedActQuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult GatedActQuantizeOp::verify() {
  if (failed(verifyDestinationStyle(*this)))
    return failure();
  ActivationAttr act = getActivation();
  if (!act.isGated())
    return emitOpError() << "activation '" << actName(act)
                         << "' is not gated; use fusion.act_quantize";
  if (act.getBackward() && !getGrad())
    return emitOpError() << "backward activation '" << actName(act)
                         << "' needs a 'grad' operand";
  if (!act.getBackward() && getGrad())
    return emitOpError() << "forward activation '" << actName(act)
                         << "' takes no 'grad' operand";
  OperandRange inputs = getInputs();
  if (inputs.empty() || inputs.size() > 2)
    return emitOpError() << "takes one packed [gate | up] input or two inputs "
                            "(gate, up), got "
                         << inputs.size();
  for (Value v : inputs)
    if (failed(verifyInputElement(*this, "input", v)))
      return failure();
  if (failed(verifyIntermediate(*this, getIntermediate())) ||
      failed(verifyNot2DBlocks(*this, getScheme())) ||
      failed(verifyQuantOperands(*this, getScheme(), getScale(), getRng())))
    return failure();

  auto first = cast<ShapedType>(inputs[0].getType());
  SmallVector<int64_t> halfShape(first.getShape());
  if (halfShape.empty())
    return emitOpError() << "gated input must have rank >= 1";
  if (inputs.size() == 2) {
    // Shape and element type, not the layout: after bufferisation the two
    // halves of one packed tensor are memrefs with different offsets.
    auto second = cast<ShapedType>(inputs[1].getType());
    if (second.getShape() != first.getShape() ||
        second.getElementType() != first.getElementType() ||
        isa<MemRefType>(second) != isa<MemRefType>(first))
      return emitOpError() << "gate and up inputs must have the same shape and "
                              "element type, got "
                           << first << " and " << second;
  } else {
    int64_t w = halfShape.back();
    if (!ShapedType::isDynamic(w) && w % 2 != 0)
      return emitOpError() << "packed gated input width " << w
                           << " is odd; it must hold [gate | up]";
    if (!ShapedType::isDynamic(w))
      halfShape.back() = w / 2;
  }
  if (Value grad = getGrad()) {
    auto gTy = cast<ShapedType>(grad.getType());
    if (failed(verifyInputElement(*this, "grad", grad)))
      return failure();
    if (gTy.getRank() != static_cast<int64_t>(halfShape.size()) ||
        failed(verifyCompatibleShape(gTy.getShape(), halfShape)))
      return emitOpError() << "'grad' shape " << shapeString(gTy.getShape())
                           << " must equal one half of the gated input, "
                           << shapeString(halfShape);
  }
  if (!act.getBackward())
    return verifyQuantizedResults(*this, getScheme(), halfShape, 1, false);
  SmallVector<int64_t> fullShape(halfShape);
  fullShape.back() = mulDim(halfShape.back(), 2);
  return verifyQuantizedResults(*this, getScheme(), fullShape, 2, false);
}

//===----------------------------------------------------------------------===//
// PairedProjectionOp
//===----------------------------------------------------------------------===//

static bool epilogueNeedsScale(EpilogueKind k) {
  return k == EpilogueKind::softplus_bias_scale ||
         k == EpilogueKind::softplus_log_bias_scale ||
         k == EpilogueKind::softplus_stable_bias_scale;
}

static bool epilogueNeedsBias(EpilogueKind k) {
  return k == EpilogueKind::bias || epilogueNeedsScale(k);
}

/// Kinds whose operands are optional: a bias when one is given (t = y +
/// bias) and none otherwise, and likewise a scale (act(t) * scale): the
/// runtime's sigmoid and silu (runtime/common/epilogue.h).
static bool epilogueTakesOptionalOperands(EpilogueKind k) {
  return k == EpilogueKind::sigmoid || k == EpilogueKind::silu;
}

int64_t mlir::fusion::pairedWeightRows(ShapedType w, bool kn) {
  if (w.getRank() == 2)
    return w.getDimSize(kn ? 1 : 0);
  const int64_t g = w.getDimSize(kn ? 1 : 0), r = w.getDimSize(kn ? 2 : 1);
  return ShapedType::isDynamic(g) || ShapedType::isDynamic(r)
             ? ShapedType::kDynamic
             : g * r;
}

int64_t mlir::fusion::pairedWeightK(ShapedType w, bool kn) {
  return w.getDimSize(kn ? 0 : w.getRank() - 1);
}

/// Checks one projection's weight, epilogue and its operands; returns H.
static FailureOr<int64_t> verifyProjection(PairedProjectionOp op, unsigned idx,
                                           Value rhs, EpilogueKind epilogue,
                                           Value bias, Value scale) {
  auto lhsTy = cast<ShapedType>(op.getLhs().getType());
  auto rhsTy = cast<ShapedType>(rhs.getType());
  std::string name = ("rhs" + Twine(idx)).str();
  if (rhsTy.getRank() != 2 && rhsTy.getRank() != 3)
    return op.emitOpError() << name
                            << " must be a rank-2 weight or rank-3 head groups "
                               "of rows, got rank "
                            << rhsTy.getRank();
  if (rhsTy.getElementType() != lhsTy.getElementType())
    return op.emitOpError() << name << " element type "
                            << rhsTy.getElementType()
                            << " differs from lhs element type "
                            << lhsTy.getElementType();
  int64_t k = lhsTy.getShape().back();
  int64_t rk = pairedWeightK(rhsTy, op.getKn());
  int64_t h = pairedWeightRows(rhsTy, op.getKn());
  if (!ShapedType::isDynamic(k) && !ShapedType::isDynamic(rk) && k != rk)
    return op.emitOpError() << name << " has K = " << rk << " but lhs has K = "
                            << k;
  StringRef epiName = stringifyEpilogueKind(epilogue);
  if (!epilogueTakesOptionalOperands(epilogue) &&
      epilogueNeedsBias(epilogue) != static_cast<bool>(bias))
    return op.emitOpError() << "epilogue " << idx << " ('" << epiName << "') "
                            << (bias ? "takes no" : "needs a")
                            << " bias operand";
  if (!epilogueTakesOptionalOperands(epilogue) &&
      epilogueNeedsScale(epilogue) != static_cast<bool>(scale))
    return op.emitOpError() << "epilogue " << idx << " ('" << epiName << "') "
                            << (scale ? "takes no" : "needs a")
                            << " scale operand";
  for (auto [what, v] : {std::pair<StringRef, Value>{"bias", bias},
                         std::pair<StringRef, Value>{"scale", scale}}) {
    if (!v)
      continue;
    auto t = cast<ShapedType>(v.getType());
    if (t.getRank() != 1 || failed(verifyCompatibleShape({h}, t.getShape())))
      return op.emitOpError() << what << " of epilogue " << idx
                              << " must have shape [" << shapeString({h})
                              << "], got " << shapeString(t.getShape());
    if (!isa<FloatType>(t.getElementType()))
      return op.emitOpError() << what << " of epilogue " << idx
                              << " must have a float element type";
  }
  return h;
}

LogicalResult PairedProjectionOp::verify() {
  if (failed(verifyDestinationStyle(*this)))
    return failure();
  auto lhsTy = cast<ShapedType>(getLhs().getType());
  if (lhsTy.getRank() != 1 && lhsTy.getRank() != 2)
    return emitOpError() << "lhs must be [K] or [N, K], got rank "
                         << lhsTy.getRank();
  if (!isa<FloatType>(lhsTy.getElementType()))
    return emitOpError() << "lhs must have a float element type";
  TypeAttr rounds[2] = {getRound0Attr(), getRound1Attr()};
  bool withBias[2] = {getRoundWithBias0(), getRoundWithBias1()};
  Value biases[2] = {getBias0(), getBias1()};
  for (auto [i, round] : llvm::enumerate(rounds)) {
    if (round && !round.getValue().isBF16() && !round.getValue().isF16())
      return emitOpError() << "round(" << round.getValue() << ") of epilogue "
                           << i << ": the accumulator rounds to bf16 or f16";
    if (withBias[i] && !round)
      return emitOpError() << "epilogue " << i
                           << ": 'with_bias' needs a round(type)";
    if (withBias[i] && !biases[i])
      return emitOpError() << "round(" << round.getValue()
                           << ", with_bias) of epilogue " << i
                           << " needs a bias operand";
  }
  auto h0 = verifyProjection(*this, 0, getRhs0(), getEpilogue0(), getBias0(),
                             getScale0());
  if (failed(h0))
    return failure();
  auto h1 = verifyProjection(*this, 1, getRhs1(), getEpilogue1(), getBias1(),
                             getScale1());
  if (failed(h1))
    return failure();

  SmallVector<int64_t, 2> lead;
  if (lhsTy.getRank() == 2)
    lead.push_back(lhsTy.getDimSize(0));
  auto resultShape = [&](int64_t h) {
    SmallVector<int64_t, 2> s(lead);
    s.push_back(h);
    return s;
  };
  SmallVector<SmallVector<int64_t, 2>, 2> expected;
  if (std::optional<ActivationAttr> gated = getGated()) {
    if (!gated->isGated() || gated->getBackward())
      return emitOpError() << "'gated' must be a forward gated activation, "
                              "got '"
                           << actName(*gated) << "'";
    for (EpilogueKind e : {getEpilogue0(), getEpilogue1()})
      if (e != EpilogueKind::none && e != EpilogueKind::bias)
        return emitOpError() << "a gated paired projection takes only 'none' "
                                "or 'bias' epilogues, got '"
                             << stringifyEpilogueKind(e) << "'";
    if (!ShapedType::isDynamic(*h0) && !ShapedType::isDynamic(*h1) &&
        *h0 != *h1)
      return emitOpError() << "gate and up projections must have the same "
                              "width, got "
                           << *h0 << " and " << *h1;
    expected.push_back(resultShape(*h0));
  } else {
    expected.push_back(resultShape(*h0));
    expected.push_back(resultShape(*h1));
  }
  if (std::optional<QuantSchemeAttr> quant = getQuant()) {
    if (!getGated())
      return emitOpError() << "'quantize' needs a gated pair (it quantizes "
                              "act(y0) * y1)";
    if (!getIntermediate())
      return emitOpError() << "'quantize' needs the intermediate type the "
                              "gated value is rounded to";
    if (failed(verifyIntermediate(*this, *getIntermediate())) ||
        failed(verifyNot2DBlocks(*this, *quant)))
      return failure();
    if (quant->getElemRounding() == ElemRounding::stochastic)
      return emitOpError() << "'quantize' takes no stochastic rounding (a "
                              "scheme with an rng operand)";
    if (failed(verifyQuantOperands(*this, *quant, getQuantScale(), Value())))
      return failure();
    return verifyQuantizedResults(*this, *quant, expected[0], 1,
                                  /*withDbias=*/false);
  }
  if (getIntermediate())
    return emitOpError() << "an intermediate type is only used with "
                            "'quantize'";
  if (getQuantScale())
    return emitOpError() << "a quantizer 'scale' operand is only used with "
                            "'quantize'";
  if (getOuts().size() != expected.size())
    return emitOpError() << "has " << getOuts().size() << " destinations but "
                         << (getGated() ? "the gated form returns 1"
                                        : "two projections return 2");
  for (auto [i, exp] : llvm::enumerate(expected)) {
    auto t = cast<ShapedType>(getOuts()[i].getType());
    if (!isa<FloatType>(t.getElementType()))
      return emitOpError() << "result #" << i
                           << " must have a float element type";
    if (t.getRank() != static_cast<int64_t>(exp.size()) ||
        failed(verifyCompatibleShape(t.getShape(), exp)))
      return emitOpError() << "result #" << i << " has shape "
                           << shapeString(t.getShape()) << " but expected "
                           << shapeString(exp);
  }
  return success();
}

#define GET_OP_CLASSES
#include "fusion/Dialect/Fusion/IR/FusionOps.cpp.inc"
