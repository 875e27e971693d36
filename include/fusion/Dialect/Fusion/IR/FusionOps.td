//===- FusionOps.td - fusion ops ---------------------------*- tablegen -*-===//
//
// The ops of the fusion dialect. Every quantizing op has a result list that
// its scheme implies; the C++ verifier derives the expected result types from
// the scheme and the input shape (FusionOps.cpp, getQuantResultKinds).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_OPS_TD
#define FUSION_OPS_TD

include "fusion/Dialect/Fusion/IR/FusionAttrs.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"

// Operands are tensors (before bufferization) or memrefs (after it).
def Fusion_TensorOrMemRef : AnyTypeOf<[AnyRankedTensor, AnyMemRef],
    "ranked tensor or memref">;

// Every fusion op is in destination style, like linalg: `outs(...)` holds one
// destination per result. On tensors the results have the destinations'
// types; on memrefs the op has no results and writes the destinations. The
// op never reads its destinations.
class Fusion_DpsOp<string mnemonic, list<Trait> traits = []>
    : Fusion_Op<mnemonic, !listconcat(traits, [AttrSizedOperandSegments,
        DestinationStyleOpInterface,
        DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
        DeclareOpInterfaceMethods<ConditionallySpeculatable>])> {
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getOutsMutable();
    }
  }];
  let hasVerifier = 1;
}

defvar QuantResultsDoc = [{
    Results, in this order, as the scheme implies:

    | results | when | type |
    |---|---|---|
    | rowwise data, rowwise scales | direction rowwise or both | data `[.., M, N]`; scales `[.., M, ceil(N/B)]` compact or `[rup(M,128), rup(ceil(N/B),4)]` swizzled |
    | colwise data, colwise scales | direction colwise or both | data `[M, N]` (same) or `[N, M]` (transposed); scales `[ceil(M/B), N]` / `[N, ceil(M/B)]` compact, `[rup(N,128), rup(ceil(M/B),4)]` swizzled |
    | scale_inv `tensor<1xf32>` | FP8 per tensor (replaces the scales) | |
    | amax `tensor<1xf32>` | FP8 per tensor and NVFP4 | |
    | dbias `tensor<Nxf32>` | the op computes the bias gradient | |

    Data elements are `f8E4M3FN` / `f8E5M2` / `f4E2M1FN`; MX scales are
    `f8E8M0FNU`, NVFP4 block scales `f8E4M3FN`. B is 32 for MX formats and 16
    for NVFP4. Dimensions may be dynamic wherever the relation can still be
    checked; only the rowwise compact scheme takes inputs of rank other than 2.

    FP4 data (`mxfp4`, `nvfp4`) may also be typed `i8` with the last
    dimension halved: two e2m1 values per byte, the even element in the low
    nibble (torch's `float4_e2m1fn_x2`). That form crosses the runtime
    boundary as is; `f4E2M1FN` memrefs hold one element per byte, so the
    runtime call widens into them.

    Destinations (`outs`) come in the same order, with the same types.
}];

def Fusion_QuantizeOp : Fusion_DpsOp<"quantize"> {
  let summary = "Quantize a tensor (the unfused quantizer)";
  let description = !strconcat([{
    Quantizes `input` (bf16, f16 or f32) according to `scheme`. FP8 delayed
    scaling takes the scale as `scale` (`tensor<1xf32>`); NVFP4 stochastic
    rounding takes `rng` (`tensor<2xi64>`: seed, offset).

    ```mlir
    %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%e0, %e1)
        : (tensor<128x256xbf16>, tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
          -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
    ```
  }], QuantResultsDoc);
  let arguments = (ins Fusion_TensorOrMemRef:$input,
                       Optional<Fusion_TensorOrMemRef>:$scale,
                       Optional<Fusion_TensorOrMemRef>:$rng,
                       Variadic<Fusion_TensorOrMemRef>:$outs,
                       Fusion_QuantSchemeAttr:$scheme);
  let assemblyFormat = [{
    $input (`scale` $scale^)? (`rng` $rng^)? `as` custom<FusionAttr>($scheme)
    `outs` `(` $outs `)` attr-dict `:` functional-type(operands, results)
  }];
}

def Fusion_ActQuantizeOp : Fusion_DpsOp<"act_quantize"> {
  let summary = "An activation (forward or backward) fused with a quantizer";
  let description = !strconcat([{
    Computes `act(input)` (forward) or `grad * act'(input)` (backward, with
    `grad`), rounds the result to `intermediate` exactly as the unfused graph
    did, then quantizes it with `scheme`. With `dbias`, also returns the
    column sums (f32) of the activation result before that rounding.

    ```mlir
    %d, %s = fusion.act_quantize #fusion.act<gelu_tanh> %x
        as quant<mxfp8_e4m3, rowwise> via bf16 outs(%e0, %e1)
        : (tensor<128x256xbf16>, tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
          -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>)
    %g:3 = fusion.act_quantize #fusion.act<dgelu> %x grad %dy
        as quant<mxfp8_e4m3, rowwise> via bf16 dbias outs(%e0, %e1, %e2)
        : (tensor<128x256xbf16>, tensor<128x256xbf16>, tensor<128x256xf8E4M3FN>,
           tensor<128x8xf8E8M0FNU>, tensor<256xf32>)
          -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>, tensor<256xf32>)
    ```
  }], QuantResultsDoc);
  let arguments = (ins Fusion_ActivationAttr:$activation,
                       Fusion_TensorOrMemRef:$input,
                       Optional<Fusion_TensorOrMemRef>:$grad,
                       Optional<Fusion_TensorOrMemRef>:$scale,
                       Optional<Fusion_TensorOrMemRef>:$rng,
                       Variadic<Fusion_TensorOrMemRef>:$outs,
                       Fusion_QuantSchemeAttr:$scheme,
                       TypeAttr:$intermediate,
                       UnitAttr:$dbias);
  let assemblyFormat = [{
    qualified($activation) $input (`grad` $grad^)? (`scale` $scale^)?
    (`rng` $rng^)? `as` custom<FusionAttr>($scheme) `via` $intermediate
    (`dbias` $dbias^)? `outs` `(` $outs `)` attr-dict
    `:` functional-type(operands, results)
  }];
}

def Fusion_GatedActQuantizeOp : Fusion_DpsOp<"gated_act_quantize"> {
  let summary = "A gated activation (GLU family) fused with a quantizer";
  let description = !strconcat([{
    The gated input is either one packed `[M, 2K]` tensor holding
    `[gate | up]` or two `[M, K]` tensors `gate, up`; the gate half is the
    one the activation applies to: forward `act(gate) * up'` (`up' = up`,
    or `clamp(up, -limit, limit) + offset` for `clamped_swiglu`) gives
    `[M, K]`. The backward form takes `grad` `[M, K]` and gives `[M, 2K]` =
    `[dgate | dup]`, each half with its own scales (rowwise scales
    `[M, 2*ceil(K/B)]`, the second half starting at column `ceil(K/B)`).

    ```mlir
    %d, %s = fusion.gated_act_quantize #fusion.act<swiglu> %gu
        as quant<mxfp8_e4m3, rowwise> via bf16 outs(%e0, %e1)
        : (tensor<64x512xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>)
          -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>)
    ```
  }], QuantResultsDoc);
  let arguments = (ins Fusion_ActivationAttr:$activation,
                       Variadic<Fusion_TensorOrMemRef>:$inputs,
                       Optional<Fusion_TensorOrMemRef>:$grad,
                       Optional<Fusion_TensorOrMemRef>:$scale,
                       Optional<Fusion_TensorOrMemRef>:$rng,
                       Variadic<Fusion_TensorOrMemRef>:$outs,
                       Fusion_QuantSchemeAttr:$scheme,
                       TypeAttr:$intermediate);
  let assemblyFormat = [{
    qualified($activation) $inputs (`grad` $grad^)? (`scale` $scale^)?
    (`rng` $rng^)? `as` custom<FusionAttr>($scheme) `via` $intermediate
    `outs` `(` $outs `)` attr-dict `:` functional-type(operands, results)
  }];
}

def Fusion_PairedProjectionOp : Fusion_DpsOp<"paired_projection"> {
  let summary = "Two projections of one input, each with an epilogue";
  let description = [{
    Computes `y0 = epilogue0(lhs · rhs0ᵀ)` and `y1 = epilogue1(lhs · rhs1ᵀ)`
    reading `lhs` (`[N, K]`, or `[K]` for a matrix-vector product) once.
    Weights are `[H, K]` (the `torch.nn.Linear` layout) or, with `kn`,
    `[K, H]`. Epilogues: `none`, `bias` (+ bias `[H]`), `sigmoid` and `silu`
    (of `y + bias` when the optional bias `[H]` is given),
    `softplus_bias_scale` (`softplus(x + bias) * scale`, the Gated-DeltaNet
    alpha gate, torch's threshold-20 softplus `t > 20 ? t : log1p(exp(t))`;
    bias and scale `[H]`), `softplus_log_bias_scale` (the same with
    `log(1 + exp(t))` in f32, as vLLM's reference of `fused_gdn_gating`
    writes it: it differs from log1p by the rounding of `1 + exp(t)`),
    `softplus_stable_bias_scale` (the overflow-safe
    `max(t, 0) + log1p(exp(-|t|))` without a threshold, as
    `torch.logaddexp(t, 0)` and JAX's softplus write it).
    Accumulation is f32. `round(bf16)` (or `round(f16)`) before an epilogue
    rounds that projection's f32 accumulator to bf16 (f16) before the
    epilogue reads it, as a bf16 `torch.nn.Linear` rounds its output; the
    epilogue then runs in f32 on the rounded value (in a gated pair: the
    gate and up values, before the activation). The epilogue's bias is
    added after that rounding (`round(bf16) softplus_bias_scale bias %dt`:
    a Linear without bias, then `+ dt_bias` in f32); with
    `round(bf16, with_bias)` the bias is added first and the sum rounded
    once (a Linear with `bias=True`, whose output is the rounded `y + b`),
    and the epilogue adds no bias of its own.

    With `gated #fusion.act<swiglu>` (or another gated forward kind) the op
    has one result, `act(y0) * y1` (gate/up feeding SwiGLU); its epilogues
    may then only be `none` or `bias`.

    A gated pair may also quantize its result (the FFN front: gate/up
    projections, SwiGLU, MXFP8): with `quantize(#fusion.quant<...> via T)`
    the value `act(y0) * y1` is rounded to `T` (bf16, f16 or f32: the type
    the unfused program stores it in) and quantized with the scheme; the
    results are then the quantizer's (as `fusion.quantize` of a `[N, H]`
    tensor of `T`), and the gated value is never returned. FP8 delayed
    scaling takes its scale (`tensor<1xf32>`, as `fusion.quantize`'s
    `scale`) inside the clause: `quantize(#fusion.quant<fp8_e4m3, rowwise,
    scaling = delayed> via bf16 scale %s)`. Stochastic rounding (an `rng`
    operand) is not taken.

    ```mlir
    %d, %s = fusion.paired_projection %x, %wg, %wu
        epilogues(round(bf16) none, round(bf16) none) gated(#fusion.act<swiglu>)
        quantize(#fusion.quant<mxfp8_e4m3, rowwise> via bf16) outs(%e0, %e1)
        : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>,
           tensor<4x32xf8E4M3FN>, tensor<4x1xf8E8M0FNU>)
          -> (tensor<4x32xf8E4M3FN>, tensor<4x1xf8E8M0FNU>)
    ```

    ```mlir
    %g, %b = fusion.paired_projection %x, %wa, %wb
        epilogues(softplus_bias_scale bias %dt scale %s, sigmoid) outs(%e0, %e1)
        : (tensor<1x2048xbf16>, tensor<32x2048xbf16>, tensor<32x2048xbf16>,
           tensor<32xf32>, tensor<32xf32>, tensor<1x32xf32>, tensor<1x32xf32>)
          -> (tensor<1x32xf32>, tensor<1x32xf32>)
    ```
  }];
  let arguments = (ins Fusion_TensorOrMemRef:$lhs,
                       Fusion_TensorOrMemRef:$rhs0,
                       Fusion_TensorOrMemRef:$rhs1,
                       Optional<Fusion_TensorOrMemRef>:$bias0,
                       Optional<Fusion_TensorOrMemRef>:$scale0,
                       Optional<Fusion_TensorOrMemRef>:$bias1,
                       Optional<Fusion_TensorOrMemRef>:$scale1,
                       Optional<Fusion_TensorOrMemRef>:$quant_scale,
                       Variadic<Fusion_TensorOrMemRef>:$outs,
                       Fusion_EpilogueKindAttr:$epilogue0,
                       Fusion_EpilogueKindAttr:$epilogue1,
                       OptionalAttr<Fusion_ActivationAttr>:$gated,
                       UnitAttr:$kn,
                       OptionalAttr<TypeAttr>:$round0,
                       OptionalAttr<TypeAttr>:$round1,
                       UnitAttr:$round_with_bias0,
                       UnitAttr:$round_with_bias1,
                       OptionalAttr<Fusion_QuantSchemeAttr>:$quant,
                       OptionalAttr<TypeAttr>:$intermediate);
  let assemblyFormat = [{
    $lhs `,` $rhs0 `,` $rhs1 `epilogues` `(`
      custom<Epilogue>($epilogue0, $round0, $round_with_bias0)
        (`bias` $bias0^)? (`scale` $scale0^)? `,`
      custom<Epilogue>($epilogue1, $round1, $round_with_bias1)
        (`bias` $bias1^)? (`scale` $scale1^)? `)`
    (`gated` `(` qualified($gated)^ `)`)?
    (`quantize` `(` qualified($quant)^ `via` $intermediate
      (`scale` $quant_scale^)? `)`)?
    (`kn` $kn^)? `outs` `(` $outs `)`
    attr-dict `:` functional-type(operands, results)
  }];
}

#endif // FUSION_OPS_TD
