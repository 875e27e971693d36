//===- FusionAttrs.td - fusion enums and attributes --------*- tablegen -*-===//
//
// The quantization scheme (#fusion.quant) and activation (#fusion.act)
// attributes and the enums they are built from. Enum values equal the
// runtime ABI's values (runtime/include/fusion_rt.h) so the lowering can
// pass them through unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_ATTRS_TD
#define FUSION_ATTRS_TD

include "fusion/Dialect/Fusion/IR/FusionDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class Fusion_I32Enum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::mlir::fusion";
  let genSpecializedAttr = 0;
}

def Fusion_QuantFormat : Fusion_I32Enum<"QuantFormat", "quantized format", [
  I32EnumAttrCase<"mxfp8_e4m3", 0>, I32EnumAttrCase<"mxfp8_e5m2", 1>,
  I32EnumAttrCase<"mxfp4", 2>, I32EnumAttrCase<"nvfp4", 3>,
  I32EnumAttrCase<"fp8_e4m3", 4>, I32EnumAttrCase<"fp8_e5m2", 5>,
  I32EnumAttrCase<"fp8_block_e4m3", 6>, I32EnumAttrCase<"fp8_block_e5m2", 7>]>;

def Fusion_ScaleRounding : Fusion_I32Enum<"ScaleRounding",
    "rounding of an MX block scale to E8M0", [
  I32EnumAttrCase<"rceil", 0>, I32EnumAttrCase<"floor", 1>,
  I32EnumAttrCase<"ceil", 2>, I32EnumAttrCase<"even", 3>]>;

def Fusion_NanPolicy : Fusion_I32Enum<"NanPolicy",
    "what a NaN/Inf element does to its block", [
  I32EnumAttrCase<"propagate", 0>, I32EnumAttrCase<"ignore", 1>]>;

def Fusion_QuantDirection : Fusion_I32Enum<"QuantDirection",
    "which copies a quantizer writes", [
  I32EnumAttrCase<"rowwise", 0>, I32EnumAttrCase<"colwise", 1>,
  I32EnumAttrCase<"both", 2>]>;

def Fusion_ColwiseLayout : Fusion_I32Enum<"ColwiseLayout",
    "layout of the colwise data", [
  I32EnumAttrCase<"same", 0>, I32EnumAttrCase<"transposed", 1>]>;

def Fusion_ScaleLayout : Fusion_I32Enum<"ScaleLayout", "layout of block scales", [
  I32EnumAttrCase<"compact", 0>, I32EnumAttrCase<"swizzled", 1>]>;

def Fusion_ElemRounding : Fusion_I32Enum<"ElemRounding",
    "rounding of scaled elements", [
  I32EnumAttrCase<"rne", 0>, I32EnumAttrCase<"stochastic", 1>]>;

def Fusion_ZeroScale : Fusion_I32Enum<"ZeroScale",
    "how an MX block whose scale byte is 0 (2^-127) scales its elements", [
  I32EnumAttrCase<"exact", 0>, I32EnumAttrCase<"one", 1>,
  I32EnumAttrCase<"min_normal", 2>]>;

def Fusion_TensorScaling : Fusion_I32Enum<"TensorScaling",
    "how an FP8 per-tensor scale is obtained", [
  I32EnumAttrCase<"current", 0>, I32EnumAttrCase<"delayed", 1>]>;

def Fusion_Nvfp4Recipe : Fusion_I32Enum<"Nvfp4Recipe",
    "how NVFP4 (and FP8 block) scales and codes are computed", [
  I32EnumAttrCase<"te", 0>, I32EnumAttrCase<"torchao", 1>,
  I32EnumAttrCase<"torchao_block", 2>, I32EnumAttrCase<"multiply", 3>,
  I32EnumAttrCase<"multiplier", 4>, I32EnumAttrCase<"reciprocal", 5>]>;

def Fusion_ActivationKind : Fusion_I32Enum<"ActivationKind", "activation", [
  I32EnumAttrCase<"identity", 0>, I32EnumAttrCase<"relu", 1>,
  I32EnumAttrCase<"gelu", 2>, I32EnumAttrCase<"gelu_tanh", 3>,
  I32EnumAttrCase<"silu", 4>, I32EnumAttrCase<"qgelu", 5>,
  I32EnumAttrCase<"srelu", 6>, I32EnumAttrCase<"swiglu", 7>,
  I32EnumAttrCase<"geglu", 8>, I32EnumAttrCase<"reglu", 9>,
  I32EnumAttrCase<"qgeglu", 10>, I32EnumAttrCase<"sreglu", 11>,
  I32EnumAttrCase<"clamped_swiglu", 12>, I32EnumAttrCase<"geglu_erf", 13>]>;

def Fusion_EpilogueKind : I32EnumAttr<"EpilogueKind",
    "elementwise epilogue of one projection", [
  I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"bias", 1>,
  I32EnumAttrCase<"sigmoid", 2>, I32EnumAttrCase<"silu", 3>,
  I32EnumAttrCase<"softplus_bias_scale", 4>,
  I32EnumAttrCase<"softplus_log_bias_scale", 5>,
  I32EnumAttrCase<"softplus_stable_bias_scale", 6>]> {
  let cppNamespace = "::mlir::fusion";
  let genSpecializedAttr = 0;
}
def Fusion_EpilogueKindAttr : EnumAttr<Fusion_Dialect, Fusion_EpilogueKind,
                                       "epilogue"> {
  let assemblyFormat = "$value";
}

class Fusion_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Fusion_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Fusion_QuantSchemeAttr : Fusion_Attr<"QuantScheme", "quant"> {
  let summary = "A quantization scheme";
  let description = [{
    Describes a quantizer completely:

    ```
    #fusion.quant<FORMAT, DIRECTION [, block = RxC | tensor]
                  [, rounding = rceil|floor|ceil|even] [, nan = propagate|ignore]
                  [, colwise = same|transposed] [, scales = compact|swizzled]
                  [, elem = rne|stochastic] [, scaling = current|delayed]
                  [, zero_scale = exact|one|min_normal] [, epsilon = F]
                  [, pow2_scale = true]
                  [, recipe = te|torchao|torchao_block|multiply|multiplier|reciprocal]>
    ```

    * FORMAT: `mxfp8_e4m3`, `mxfp8_e5m2`, `mxfp4` (E8M0 scales over blocks
      of 32), `nvfp4` (E4M3 scales over blocks of 16 plus a global scale
      from the tensor amax, TransformerEngine's recipe), `fp8_e4m3`,
      `fp8_e5m2` (one f32 scale per tensor), `fp8_block_e4m3`,
      `fp8_block_e5m2` (one f32 decode scale per 1xG block: DeepSeek-V3 /
      vLLM per-token-group quantization; s = max(amax, epsilon) / max,
      optionally rounded up to a power of two (`pow2_scale`, UE8M0), codes
      of x / s; rowwise and compact only).
    * DIRECTION: `rowwise` (blocks along the last dimension), `colwise`
      (blocks down the columns), `both` (both copies from one read).
    * `block`: the rowwise block shape. MX formats use `1x32`; NVFP4 `1x16`
      (default) or `16x16` (2D, one scale shared by both copies); FP8 per
      tensor uses `tensor`; the FP8 block formats `1xG` for any G >= 1
      (default `1x128`). Defaults follow the format.
    * `rounding`: E8M0 scale rounding of MX formats; `rceil` (default,
      NVIDIA/TransformerEngine), `floor` (OCP), `ceil` (torchao's CEIL:
      the OCP rule on the amax rounded up to a power of two) or `even`
      (torchao's EVEN: the OCP rule on the amax with its mantissa rounded
      half up to the element type's mantissa width).
    * `nan`: `propagate` (default; a NaN/Inf in a block gives scale 0xFF and
      a NaN block, torchao) or `ignore` (TransformerEngine).
    * `colwise`: colwise data `same` layout as the input (default) or
      `transposed`; NVFP4's colwise copy is always transposed (its default).
    * `scales`: `compact` (default) or `swizzled`, the zero-padded 128x4
      layout block-scaled GEMMs read.
    * `elem`: element rounding, `rne` (default) or `stochastic` (NVFP4 only;
      the op then takes an `rng` operand holding {seed, offset}).
    * `scaling`: FP8 per tensor only: `current` (amax pass, default) or
      `delayed` (the op takes a `scale` operand).
    * `zero_scale`: MX formats only: what the elements of a block whose
      scale byte is 0 are multiplied by: `exact` (2^127, default; TE since
      PR#2647), `one` (1.0: torchao 0.18's RCEIL fallback and TE before
      PR#2647) or `min_normal` (2^126: torchao's FLOOR, which clamps the
      scale to the smallest normal f32).
    * `epsilon`: FP8 per tensor with current scaling and the FP8 block
      formats: the amax is clamped to at least `epsilon` (rounded to f32)
      before scale = max / amax (TransformerEngine's `amax_epsilon`;
      torchao.float8 clamps at 1e-12) or s = amax / max (vLLM: 1e-10).
      Default 0.
    * `pow2_scale`: FP8 per tensor with current scaling: the scale is
      truncated to a power of two (its f32 bits & 0xFF800000,
      TransformerEngine's power-of-two scaling); FP8 block formats: s is
      rounded up to a power of two (UE8M0 scales). Default false.
    * `recipe`: NVFP4 only: how the block scales and codes are computed:
      `te` (default, TransformerEngine: S_enc = 448*6/amax, scale =
      e4m3(block_amax * S_enc / 6)), `torchao` (torchao's nvfp4_quantize
      with per_tensor_scale = amax/2688: scale = e4m3(clamp(block_amax / 6
      / pts, 2^-6, 448)), codes of x * ((1/pts) / scale)) or
      `torchao_block` (nvfp4_quantize without a per-tensor scale). The
      torchao recipes use 1x16 blocks and RNE (docs/numerics.md).
      FP8 block formats: `multiply` (TransformerEngine's Float8BlockScaling,
      torchao's blockwise FP8 training): scale = max / amax as TE's
      compute_scale_from_amax (epsilon, pow2_scale truncating), codes of
      x * scale, 1 / scale written; `multiplier` (torchao.float8's rowwise
      scaling): as `multiply`, but the scale written is the multiplier
      max / amax itself (a Float8Tensor's scale; decoding divides by it);
      the default is DeepSeek-V3's s = max(amax, epsilon) / max, codes of
      x / s. FP8 per tensor with current scaling: `reciprocal`, the scale
      (1 / max(amax, epsilon)) * max with each step rounded to f32, as
      torch computes `max / amax` on an f32 tensor (reciprocal, then times
      max); the default is the correctly rounded quotient.

    Options at their default are not printed.
  }];
  let parameters = (ins
    "::mlir::fusion::QuantFormat":$format,
    "::mlir::fusion::QuantDirection":$direction,
    "int64_t":$blockRows,
    "int64_t":$blockCols,
    "::mlir::fusion::ScaleRounding":$rounding,
    "::mlir::fusion::NanPolicy":$nanPolicy,
    "::mlir::fusion::ColwiseLayout":$colwiseLayout,
    "::mlir::fusion::ScaleLayout":$scaleLayout,
    "::mlir::fusion::ElemRounding":$elemRounding,
    "::mlir::fusion::TensorScaling":$tensorScaling,
    "::mlir::fusion::ZeroScale":$zeroScale,
    APFloatParameter<"amax epsilon">:$epsilon,
    "bool":$pow2Scale,
    "::mlir::fusion::Nvfp4Recipe":$recipe
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::mlir::fusion::QuantFormat":$format,
                     "::mlir::fusion::QuantDirection":$direction)>
  ];
  let extraClassDeclaration = [{
    /// True for the MX formats (E8M0 scales over blocks of 32).
    bool isMX() const;
    /// True for FP8 with one scale per tensor.
    bool isPerTensor() const;
    /// True for FP8 with one f32 scale per 1xG block.
    bool isBlockFP8() const;
    /// Elements per scale along the quantized dimension (32, 16, or 0 for a
    /// per-tensor scale).
    int64_t getBlockSize() const;
    bool hasRowwise() const;
    bool hasColwise() const;
    /// Element type of the quantized data.
    ::mlir::Type getDataType(::mlir::MLIRContext *ctx) const;
    /// Element type of the block scales (f32 for the per-tensor scale_inv).
    ::mlir::Type getScaleType(::mlir::MLIRContext *ctx) const;
    /// The default block and colwise layout for a format.
    static std::pair<int64_t, int64_t> getDefaultBlock(QuantFormat format);
    static ColwiseLayout getDefaultColwiseLayout(QuantFormat format);
  }];
}

def Fusion_ActivationAttr : Fusion_Attr<"Activation", "act"> {
  let summary = "An activation, forward or backward, plain or gated";
  let description = [{
    ```
    #fusion.act<KIND [, limit = F] [, offset = F] [, alpha = F]
                [, mask = multiply | select]>
    ```

    KIND is a forward activation (`identity`, `relu`, `gelu` (erf),
    `gelu_tanh`, `silu`, `qgelu`, `srelu`), a gated one taking [gate | up]
    (`swiglu`, `geglu` (tanh GELU gate), `geglu_erf` (exact GELU gate), `reglu`,
    `qgeglu`, `sreglu`, `clamped_swiglu`), or
    the backward form of either, spelled with a `d` prefix (`dsilu`,
    `dswiglu`, ...): grad · act'(x). `clamped_swiglu` takes `limit` (default
    7.0) and `offset` (default 1.0); `qgelu`, `qgeglu` and `clamped_swiglu`
    take `alpha` (default 1.702). `mask` (backward only) says what a
    derivative that is zero by a mask gives (relu, srelu, reglu, sreglu:
    x <= 0; clamped_swiglu: the gate above `limit`): `multiply` (default,
    TransformerEngine's grad * 0, -0 for a negative grad) or `select` (+0,
    as PyTorch autograd's threshold_backward and clamp backward select it;
    a NaN relu-family input is not masked); only the kinds with a mask take
    `select`. Parameters at their default are not printed.
  }];
  let parameters = (ins
    "::mlir::fusion::ActivationKind":$kind,
    "bool":$backward,
    APFloatParameter<"clamp limit">:$limit,
    APFloatParameter<"gate offset">:$offset,
    APFloatParameter<"sigmoid scale">:$alpha,
    "bool":$maskSelect
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::mlir::fusion::ActivationKind":$kind,
                     CArg<"bool", "false">:$backward)>
  ];
  let extraClassDeclaration = [{
    /// True for the kinds that take [gate | up].
    bool isGated() const;
    /// True if `alpha` / `limit` and `offset` mean something for this kind.
    bool hasAlpha() const;
    bool hasClamp() const;
    /// True for the kinds whose derivative has a mask (`mask = select`).
    bool hasMask() const;
    static constexpr double kDefaultLimit = 7.0;
    static constexpr double kDefaultOffset = 1.0;
    static constexpr double kDefaultAlpha = 1.702;
  }];
}

#endif // FUSION_ATTRS_TD
