//===- FusionAttrs.cpp - #fusion.quant and #fusion.act --------------------===//
//
// Parsing, printing and verification of the quantization scheme and the
// activation attributes. Options at their default value are not printed, so
// the common case reads `#fusion.quant<mxfp8_e4m3, rowwise>`.
//
//===----------------------------------------------------------------------===//
#include "fusion/Dialect/Fusion/IR/FusionAttrs.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::fusion;

#include "fusion/Dialect/Fusion/IR/FusionEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fusion/Dialect/Fusion/IR/FusionAttrs.cpp.inc"

void FusionDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fusion/Dialect/Fusion/IR/FusionAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// QuantSchemeAttr
//===----------------------------------------------------------------------===//

std::pair<int64_t, int64_t> QuantSchemeAttr::getDefaultBlock(QuantFormat f) {
  switch (f) {
  case QuantFormat::mxfp8_e4m3:
  case QuantFormat::mxfp8_e5m2:
  case QuantFormat::mxfp4:
    return {1, 32};
  case QuantFormat::nvfp4:
    return {1, 16};
  case QuantFormat::fp8_e4m3:
  case QuantFormat::fp8_e5m2:
    return {0, 0};
  case QuantFormat::fp8_block_e4m3:
  case QuantFormat::fp8_block_e5m2:
    return {1, 128};
  }
  llvm_unreachable("unknown format");
}

ColwiseLayout QuantSchemeAttr::getDefaultColwiseLayout(QuantFormat f) {
  return f == QuantFormat::nvfp4 ? ColwiseLayout::transposed
                                 : ColwiseLayout::same;
}

QuantSchemeAttr QuantSchemeAttr::get(MLIRContext *ctx, QuantFormat format,
                                     QuantDirection direction) {
  auto [r, c] = getDefaultBlock(format);
  return get(ctx, format, direction, r, c, ScaleRounding::rceil,
             NanPolicy::propagate, getDefaultColwiseLayout(format),
             ScaleLayout::compact, ElemRounding::rne, TensorScaling::current,
             ZeroScale::exact, llvm::APFloat(0.0), false, Nvfp4Recipe::te);
}

QuantSchemeAttr QuantSchemeAttr::getChecked(
    llvm::function_ref<InFlightDiagnostic()> emitError, MLIRContext *ctx,
    QuantFormat format, QuantDirection direction) {
  auto [r, c] = getDefaultBlock(format);
  return getChecked(emitError, ctx, format, direction, r, c,
                    ScaleRounding::rceil, NanPolicy::propagate,
                    getDefaultColwiseLayout(format), ScaleLayout::compact,
                    ElemRounding::rne, TensorScaling::current,
                    ZeroScale::exact, llvm::APFloat(0.0), false, Nvfp4Recipe::te);
}

bool QuantSchemeAttr::isMX() const {
  QuantFormat f = getFormat();
  return f == QuantFormat::mxfp8_e4m3 || f == QuantFormat::mxfp8_e5m2 ||
         f == QuantFormat::mxfp4;
}

bool QuantSchemeAttr::isPerTensor() const {
  return getFormat() == QuantFormat::fp8_e4m3 ||
         getFormat() == QuantFormat::fp8_e5m2;
}

bool QuantSchemeAttr::isBlockFP8() const {
  return getFormat() == QuantFormat::fp8_block_e4m3 ||
         getFormat() == QuantFormat::fp8_block_e5m2;
}

int64_t QuantSchemeAttr::getBlockSize() const { return getBlockCols(); }

bool QuantSchemeAttr::hasRowwise() const {
  return getDirection() != QuantDirection::colwise;
}

bool QuantSchemeAttr::hasColwise() const {
  return getDirection() != QuantDirection::rowwise;
}

Type QuantSchemeAttr::getDataType(MLIRContext *ctx) const {
  switch (getFormat()) {
  case QuantFormat::mxfp8_e4m3:
  case QuantFormat::fp8_e4m3:
  case QuantFormat::fp8_block_e4m3:
    return Float8E4M3FNType::get(ctx);
  case QuantFormat::mxfp8_e5m2:
  case QuantFormat::fp8_e5m2:
  case QuantFormat::fp8_block_e5m2:
    return Float8E5M2Type::get(ctx);
  case QuantFormat::mxfp4:
  case QuantFormat::nvfp4:
    return Float4E2M1FNType::get(ctx);
  }
  llvm_unreachable("unknown format");
}

Type QuantSchemeAttr::getScaleType(MLIRContext *ctx) const {
  if (isMX())
    return Float8E8M0FNUType::get(ctx);
  if (getFormat() == QuantFormat::nvfp4)
    return Float8E4M3FNType::get(ctx);
  return Float32Type::get(ctx);
}

LogicalResult
QuantSchemeAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                        QuantFormat format, QuantDirection direction,
                        int64_t blockRows, int64_t blockCols,
                        ScaleRounding rounding, NanPolicy nanPolicy,
                        ColwiseLayout colwiseLayout, ScaleLayout scaleLayout,
                        ElemRounding elemRounding,
                        TensorScaling tensorScaling, ZeroScale zeroScale,
                        llvm::APFloat epsilon, bool pow2Scale,
                        Nvfp4Recipe recipe) {
  StringRef name = stringifyQuantFormat(format);
  bool mx = format == QuantFormat::mxfp8_e4m3 ||
            format == QuantFormat::mxfp8_e5m2 || format == QuantFormat::mxfp4;
  bool perTensor =
      format == QuantFormat::fp8_e4m3 || format == QuantFormat::fp8_e5m2;
  bool nvfp4 = format == QuantFormat::nvfp4;
  bool blockFP8 = format == QuantFormat::fp8_block_e4m3 ||
                  format == QuantFormat::fp8_block_e5m2;
  if (blockFP8 && !(blockRows >= 1 && blockCols >= 1))
    return emitError() << "format '" << name
                       << "' uses blocks of RxC (R, C >= 1: 1x128 token "
                          "groups, 128x128 weight tiles), not "
                       << blockRows << "x" << blockCols;
  if (blockFP8 && direction != QuantDirection::rowwise)
    return emitError() << "format '" << name << "' is rowwise only";
  if (blockFP8 && scaleLayout == ScaleLayout::swizzled)
    return emitError() << "format '" << name
                       << "' keeps f32 scales; they are not swizzled";
  if (mx && !(blockRows == 1 && blockCols == 32))
    return emitError() << "format '" << name << "' uses blocks of 1x32, not "
                       << blockRows << "x" << blockCols;
  if (nvfp4 && !(blockCols == 16 && (blockRows == 1 || blockRows == 16)))
    return emitError() << "format 'nvfp4' uses blocks of 1x16 or 16x16, not "
                       << blockRows << "x" << blockCols;
  if (perTensor && !(blockRows == 0 && blockCols == 0))
    return emitError() << "format '" << name
                       << "' has one scale per tensor; its block must be "
                          "'tensor'";
  if (!mx && rounding != ScaleRounding::rceil)
    return emitError() << "scale rounding '" << stringifyScaleRounding(rounding)
                       << "' applies only to MX formats, not '" << name << "'";
  if (!nvfp4 && elemRounding == ElemRounding::stochastic)
    return emitError() << "stochastic rounding is only supported for 'nvfp4', "
                          "not '"
                       << name << "'";
  if (!perTensor && tensorScaling == TensorScaling::delayed)
    return emitError() << "delayed scaling applies only to FP8 per-tensor "
                          "formats, not '"
                       << name << "'";
  if (perTensor && scaleLayout == ScaleLayout::swizzled)
    return emitError() << "format '" << name
                       << "' has no block scales to swizzle";
  if (nvfp4 && direction != QuantDirection::rowwise &&
      colwiseLayout != ColwiseLayout::transposed)
    return emitError() << "the colwise copy of 'nvfp4' is always transposed";
  if (!mx && zeroScale != ZeroScale::exact)
    return emitError() << "zero_scale applies only to MX formats, not '"
                       << name << "'";
  if (!epsilon.isZero() && !blockFP8 &&
      (!perTensor || tensorScaling != TensorScaling::current))
    return emitError() << "epsilon applies only to FP8 per-tensor formats "
                          "with current scaling and FP8 block formats, not '"
                       << name << "'"
                       << (perTensor ? " with delayed scaling" : "");
  if (pow2Scale && !blockFP8 &&
      (!perTensor || tensorScaling != TensorScaling::current))
    return emitError() << "pow2_scale applies only to FP8 per-tensor formats "
                          "with current scaling and FP8 block formats, not '"
                       << name << "'" << (perTensor ? " with delayed scaling" : "");
  const double eps = epsilon.convertToDouble();
  if (epsilon.isNegative() || !epsilon.isFinite() ||
      !std::isfinite(static_cast<float>(eps)) ||
      static_cast<double>(static_cast<float>(eps)) != eps)
    return emitError() << "epsilon must be a finite f32 value >= 0";
  const bool multiply =
      recipe == Nvfp4Recipe::multiply || recipe == Nvfp4Recipe::multiplier;
  if (multiply && !blockFP8)
    return emitError() << "recipe '" << stringifyNvfp4Recipe(recipe)
                       << "' applies only to the FP8 block formats, not '"
                       << name << "'";
  const bool reciprocal = recipe == Nvfp4Recipe::reciprocal;
  if (reciprocal && (!perTensor || tensorScaling != TensorScaling::current))
    return emitError() << "recipe 'reciprocal' applies only to FP8 per-tensor "
                          "formats with current scaling, not '"
                       << name << "'" << (perTensor ? " with delayed scaling" : "");
  if (recipe != Nvfp4Recipe::te && !multiply && !reciprocal && !nvfp4)
    return emitError() << "recipe applies only to 'nvfp4', not '" << name
                       << "'";
  if (recipe != Nvfp4Recipe::te && !multiply && !reciprocal &&
      (blockRows != 1 || elemRounding != ElemRounding::rne))
    return emitError() << "the torchao NVFP4 recipes use 1x16 blocks and "
                          "RNE elements";
  (void)nanPolicy;
  return success();
}

/// Parses `key = value` where value is a keyword naming an enum case.
template <typename EnumT>
static ParseResult
parseEnumValue(AsmParser &parser, StringRef key, EnumT &result,
               std::optional<EnumT> (*symbolize)(StringRef)) {
  StringRef word;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&word))
    return failure();
  std::optional<EnumT> value = symbolize(word);
  if (!value)
    return parser.emitError(loc) << "unknown value '" << word << "' for '"
                                 << key << "'";
  result = *value;
  return success();
}

/// Parses the trailing `(, key = value)*` of an attribute: rejects a key
/// given twice (naming it as a `what`) and lets `parseValue` parse the value
/// of each key (and diagnose unknown keys).
static ParseResult
parseKeyValues(AsmParser &parser, StringRef what,
               llvm::function_ref<ParseResult(StringRef, SMLoc)> parseValue) {
  llvm::StringSet<> seen;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return failure();
    if (!seen.insert(key).second)
      return parser.emitError(keyLoc) << what << " '" << key << "' given twice";
    if (parseValue(key, keyLoc))
      return failure();
  }
  return success();
}

Attribute QuantSchemeAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SMLoc startLoc = parser.getCurrentLocation();
  QuantFormat format = QuantFormat::mxfp8_e4m3;
  QuantDirection direction = QuantDirection::rowwise;
  if (parser.parseLess() ||
      parseEnumValue(parser, "format", format, symbolizeQuantFormat) ||
      parser.parseComma() ||
      parseEnumValue(parser, "direction", direction,
                     symbolizeQuantDirection))
    return {};
  auto [blockRows, blockCols] = getDefaultBlock(format);
  ScaleRounding rounding = ScaleRounding::rceil;
  NanPolicy nan = NanPolicy::propagate;
  ColwiseLayout colwise = getDefaultColwiseLayout(format);
  ScaleLayout scales = ScaleLayout::compact;
  ElemRounding elem = ElemRounding::rne;
  TensorScaling scaling = TensorScaling::current;
  ZeroScale zero = ZeroScale::exact;
  double epsilon = 0.0;
  bool pow2 = false;
  Nvfp4Recipe recipe = Nvfp4Recipe::te;
  auto parseOption = [&](StringRef key, SMLoc keyLoc) -> ParseResult {
    if (key == "block") {
      if (succeeded(parser.parseOptionalKeyword("tensor"))) {
        blockRows = blockCols = 0;
        return success();
      }
      SmallVector<int64_t, 2> dims;
      SMLoc dimLoc = parser.getCurrentLocation();
      if (parser.parseDimensionList(dims, /*allowDynamic=*/false,
                                    /*withTrailingX=*/false))
        return failure();
      if (dims.size() != 2)
        return parser.emitError(dimLoc) << "block must be RxC or 'tensor'";
      blockRows = dims[0];
      blockCols = dims[1];
      return success();
    }
    if (key == "rounding")
      return parseEnumValue(parser, key, rounding, symbolizeScaleRounding);
    if (key == "nan")
      return parseEnumValue(parser, key, nan, symbolizeNanPolicy);
    if (key == "colwise")
      return parseEnumValue(parser, key, colwise, symbolizeColwiseLayout);
    if (key == "scales")
      return parseEnumValue(parser, key, scales, symbolizeScaleLayout);
    if (key == "elem")
      return parseEnumValue(parser, key, elem, symbolizeElemRounding);
    if (key == "scaling")
      return parseEnumValue(parser, key, scaling, symbolizeTensorScaling);
    if (key == "zero_scale")
      return parseEnumValue(parser, key, zero, symbolizeZeroScale);
    if (key == "epsilon")
      return parser.parseFloat(epsilon);
    if (key == "recipe")
      return parseEnumValue(parser, key, recipe, symbolizeNvfp4Recipe);
    if (key == "pow2_scale") {
      StringRef word;
      SMLoc loc = parser.getCurrentLocation();
      if (parser.parseKeyword(&word))
        return failure();
      if (word != "true" && word != "false")
        return parser.emitError(loc) << "pow2_scale is true or false, not '"
                                     << word << "'";
      pow2 = word == "true";
      return success();
    }
    return parser.emitError(keyLoc)
           << "unknown quantization option '" << key
           << "' (expected block, rounding, nan, colwise, scales, elem, "
              "scaling, zero_scale, epsilon, pow2_scale or recipe)";
  };
  if (parseKeyValues(parser, "option", parseOption))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(startLoc); }, ctx, format,
                    direction, blockRows, blockCols, rounding, nan, colwise,
                    scales, elem, scaling, zero,
                    // The runtime's epsilon is an f32: rounded once here.
                    llvm::APFloat(static_cast<double>(static_cast<float>(epsilon))),
                    pow2, recipe);
}

void QuantSchemeAttr::print(AsmPrinter &p) const {
  p << "<" << stringifyQuantFormat(getFormat()) << ", "
    << stringifyQuantDirection(getDirection());
  auto [r, c] = getDefaultBlock(getFormat());
  if (getBlockRows() != r || getBlockCols() != c) {
    p << ", block = ";
    if (getBlockCols() == 0)
      p << "tensor";
    else
      p << getBlockRows() << "x" << getBlockCols();
  }
  if (getRounding() != ScaleRounding::rceil)
    p << ", rounding = " << stringifyScaleRounding(getRounding());
  if (getNanPolicy() != NanPolicy::propagate)
    p << ", nan = " << stringifyNanPolicy(getNanPolicy());
  if (getColwiseLayout() != getDefaultColwiseLayout(getFormat()))
    p << ", colwise = " << stringifyColwiseLayout(getColwiseLayout());
  if (getScaleLayout() != ScaleLayout::compact)
    p << ", scales = " << stringifyScaleLayout(getScaleLayout());
  if (getElemRounding() != ElemRounding::rne)
    p << ", elem = " << stringifyElemRounding(getElemRounding());
  if (getTensorScaling() != TensorScaling::current)
    p << ", scaling = " << stringifyTensorScaling(getTensorScaling());
  if (getZeroScale() != ZeroScale::exact)
    p << ", zero_scale = " << stringifyZeroScale(getZeroScale());
  if (!getEpsilon().isZero()) {
    // The shortest %e form that parses back to the same f32.
    const float e = static_cast<float>(getEpsilon().convertToDouble());
    std::string text;
    for (int digits = 1; digits <= 9; ++digits) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.*e", digits - 1, double(e));
      text = buf;
      if (std::strtof(buf, nullptr) == e)
        break;
    }
    // MLIR's float literals need a dot: 1e-12 is printed 1.0e-12.
    if (text.find('.') == std::string::npos)
      text.insert(text.find('e'), ".0");
    p << ", epsilon = " << text;
  }
  if (getPow2Scale())
    p << ", pow2_scale = true";
  if (getRecipe() != Nvfp4Recipe::te)
    p << ", recipe = " << stringifyNvfp4Recipe(getRecipe());
  p << ">";
}

//===----------------------------------------------------------------------===//
// ActivationAttr
//===----------------------------------------------------------------------===//

static llvm::APFloat toAPFloat(double v) { return llvm::APFloat(v); }

ActivationAttr ActivationAttr::get(MLIRContext *ctx, ActivationKind kind,
                                   bool backward) {
  return get(ctx, kind, backward, toAPFloat(kDefaultLimit),
             toAPFloat(kDefaultOffset), toAPFloat(kDefaultAlpha),
             /*maskSelect=*/false);
}

ActivationAttr ActivationAttr::getChecked(
    llvm::function_ref<InFlightDiagnostic()> emitError, MLIRContext *ctx,
    ActivationKind kind, bool backward) {
  return getChecked(emitError, ctx, kind, backward, toAPFloat(kDefaultLimit),
                    toAPFloat(kDefaultOffset), toAPFloat(kDefaultAlpha),
                    /*maskSelect=*/false);
}

static bool isGatedKind(ActivationKind k) {
  switch (k) {
  case ActivationKind::swiglu:
  case ActivationKind::geglu:
  case ActivationKind::reglu:
  case ActivationKind::qgeglu:
  case ActivationKind::sreglu:
  case ActivationKind::clamped_swiglu:
  case ActivationKind::geglu_erf:
    return true;
  default:
    return false;
  }
}

static bool kindHasAlpha(ActivationKind k) {
  return k == ActivationKind::qgelu || k == ActivationKind::qgeglu ||
         k == ActivationKind::clamped_swiglu;
}

bool ActivationAttr::isGated() const { return isGatedKind(getKind()); }
bool ActivationAttr::hasAlpha() const { return kindHasAlpha(getKind()); }
bool ActivationAttr::hasClamp() const {
  return getKind() == ActivationKind::clamped_swiglu;
}

/// The kinds whose backward derivative has a mask: the `mask` column of the
/// registry (runtime/include/fusion_rt_kinds.def), which the runtime's
/// activation.h checks its masked branches against.
static bool kindHasMask(ActivationKind k) {
  switch (k) {
#define FUSION_RT_ACTIVATION(U, name, value, gated, mask)                      \
  case ActivationKind::name:                                                   \
    return mask;
#include "fusion_rt_kinds.def"
  }
  return false;
}

/// "relu, srelu, ... and clamped_swiglu": the masked kinds, for messages.
static std::string maskedKindList() {
  SmallVector<StringRef> names;
#define FUSION_RT_ACTIVATION(U, name, value, gated, mask)                      \
  if (mask)                                                                    \
    names.push_back(#name);
#include "fusion_rt_kinds.def"
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i].str();
  return out;
}

bool ActivationAttr::hasMask() const { return kindHasMask(getKind()); }

static bool isDefault(const llvm::APFloat &v, double d) {
  return v.bitwiseIsEqual(llvm::APFloat(d));
}

LogicalResult
ActivationAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                       ActivationKind kind, bool backward, llvm::APFloat limit,
                       llvm::APFloat offset, llvm::APFloat alpha,
                       bool maskSelect) {
  if (maskSelect && !backward)
    return emitError() << "'mask' applies only to a backward activation";
  if (maskSelect && !kindHasMask(kind))
    return emitError() << "'mask = select' applies only to "
                       << maskedKindList()
                       << ", whose derivatives have a mask, not '"
                       << stringifyActivationKind(kind) << "'";
  bool clamp = kind == ActivationKind::clamped_swiglu;
  if (!clamp && (!isDefault(limit, kDefaultLimit) ||
                 !isDefault(offset, kDefaultOffset)))
    return emitError() << "'limit' and 'offset' apply only to "
                          "'clamped_swiglu', not '"
                       << stringifyActivationKind(kind) << "'";
  if (!kindHasAlpha(kind) && !isDefault(alpha, kDefaultAlpha))
    return emitError() << "'alpha' applies only to 'qgelu', 'qgeglu' and "
                          "'clamped_swiglu', not '"
                       << stringifyActivationKind(kind) << "'";
  if (clamp && !(limit.convertToDouble() > 0.0))
    return emitError() << "'limit' of 'clamped_swiglu' must be positive";
  if (!alpha.isFinite() || !limit.isFinite() || !offset.isFinite())
    return emitError() << "activation parameters must be finite";
  return success();
}

Attribute ActivationAttr::parse(AsmParser &parser, Type) {
  SMLoc startLoc = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseLess() || parser.parseKeyword(&word))
    return {};
  bool backward = false;
  std::optional<ActivationKind> kind = symbolizeActivationKind(word);
  if (!kind && word.starts_with("d")) {
    kind = symbolizeActivationKind(word.drop_front());
    backward = kind.has_value();
  }
  if (!kind) {
    parser.emitError(startLoc) << "unknown activation '" << word << "'";
    return {};
  }
  double limit = kDefaultLimit, offset = kDefaultOffset, alpha = kDefaultAlpha;
  bool maskSelect = false;
  auto parseParam = [&](StringRef key, SMLoc keyLoc) -> ParseResult {
    if (key == "mask") {
      StringRef value;
      SMLoc valueLoc = parser.getCurrentLocation();
      if (parser.parseKeyword(&value))
        return failure();
      if (value != "multiply" && value != "select")
        return parser.emitError(valueLoc)
               << "unknown mask '" << value << "' (expected multiply or select)";
      maskSelect = value == "select";
      return success();
    }
    double *slot = key == "limit"    ? &limit
                   : key == "offset" ? &offset
                   : key == "alpha"  ? &alpha
                                     : nullptr;
    if (!slot)
      return parser.emitError(keyLoc) << "unknown activation parameter '"
                                      << key
                                      << "' (expected limit, offset, alpha or "
                                         "mask)";
    return parser.parseFloat(*slot);
  };
  if (parseKeyValues(parser, "parameter", parseParam))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(startLoc); },
                    parser.getContext(), *kind, backward, toAPFloat(limit),
                    toAPFloat(offset), toAPFloat(alpha), maskSelect);
}

void ActivationAttr::print(AsmPrinter &p) const {
  p << "<" << (getBackward() ? "d" : "") << stringifyActivationKind(getKind());
  auto printParam = [&](StringRef name, const llvm::APFloat &v, double def) {
    if (isDefault(v, def))
      return;
    p << ", " << name << " = ";
    p.printFloat(v);
  };
  printParam("limit", getLimit(), kDefaultLimit);
  printParam("offset", getOffset(), kDefaultOffset);
  printParam("alpha", getAlpha(), kDefaultAlpha);
  if (getMaskSelect())
    p << ", mask = select";
  p << ">";
}
