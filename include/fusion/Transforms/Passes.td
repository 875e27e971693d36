//===- Passes.td - fusion passes ---------------------------*- tablegen -*-===//
//
// The fusion passes. No `constructor`: -gen-pass-decls -name Fusion emits
// create<Name>() (and create<Name>(<Name>Options) for passes with options)
// and registerFusionPasses().
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_TRANSFORMS_PASSES_TD
#define FUSION_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def NormalizeElementwise : Pass<"fusion-normalize-elementwise", "func::FuncOp"> {
  let summary = "Bring elementwise tensor code into fused linalg.generic form";
  let description = [{
    Puts every elementwise computation into `linalg.generic` form and fuses
    chains of them, so that an activation reaches
    `fusion-fuse-act-quantize` as one expression tree in one body, however
    the frontend wrote it:

    * elementwise `arith` / `math` ops on ranked tensors become
      `linalg.generic` (upstream `convert-elementwise-to-linalg` patterns);
    * elementwise named linalg ops (`linalg.exp`, `linalg.mul`,
      `linalg.elementwise`, `linalg.map`, ...) are generalized; contractions,
      reductions and `linalg.fill` are left alone (unlike upstream
      `linalg-generalize-named-ops`, which would also turn the projections
      into generics);
    * elementwise producers are fused into their consumer when that consumer
      is their only user (upstream `linalg-fuse-elementwise-ops` patterns
      with that control function), so an activation whose value is also
      used elsewhere stays a separate op.

    Run `canonicalize` and `cse` afterwards; the
    `fusion-act-quantize-pipeline` pipeline does.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect",
                           "arith::ArithDialect"];
}

def FuseActQuantize : Pass<"fusion-fuse-act-quantize", "func::FuncOp"> {
  let summary = "Fuse an activation and the fusion.quantize of its result";
  let description = [{
    For every `fusion.quantize` whose input is computed by an elementwise
    `linalg.generic` that implements an activation (see
    `lib/Analysis/ActivationMatcher.cpp` for the recognised forms), replaces
    the activation and the quantizer with one `fusion.act_quantize` (relu,
    gelu, gelu_tanh, silu, qgelu, srelu, identity, and their backward forms
    grad * act'(x)) or `fusion.gated_act_quantize` (swiglu, geglu, reglu,
    qgeglu, sreglu, clamped_swiglu; gate and up as two tensors or as the
    halves of one packed [M, 2K] tensor; the backward forms from
    [dgate | dup] written by `tensor.concat` or two `tensor.insert_slice`).
    A column-sum reduction of the quantized value next to the quantizer is
    fused as the op's `dbias` result; a rowwise and a colwise quantizer of
    one activation become one fused op with direction `both`, and a
    quantizer identical to a fused one reads its results. The fused op rounds the activation to
    the element type the graph rounded it to (the `via` type). Every match
    is cross-checked numerically against the runtime's formula before the
    rewrite.

    Admission rules, each reported in a structured remark
    (category `fusion`, name `FuseActQuantize`; `passed`, or `missed` with
    the rule as the reason): "no activation to fuse", "unsupported
    activation" (and "geglu with erf gelu is not supported by the
    runtime"), "activation has another user", "unsupported input element
    type", "unsupported shape", "unsupported quantization format for fused
    activation", "more quantizers than one fused op writes", and with
    `strict-rounding` "activation body rounds internally". A declined
    candidate is left untouched. docs/passes.md lists the recognised
    spellings.

    Expects normalised input (`fusion-normalize-elementwise`, canonicalize,
    cse); the `fusion-act-quantize-pipeline` pipeline runs them first.
  }];
  let dependentDialects = ["fusion::FusionDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect", "arith::ArithDialect",
                           "affine::AffineDialect"];
  let options = [
    ListOption<"formats", "formats", "std::string",
               "Quantization formats to fuse (default: every format the "
               "runtime's fused entry points take)">,
    Option<"strictRounding", "strict-rounding", "bool", /*default=*/"false",
           "Decline activations whose body rounds an intermediate value to "
           "a float type narrower than f32 (a truncf inside the body, or "
           "arithmetic in bf16/f16), which the fused op, computing in f32 "
           "and rounding once, would not reproduce bit for bit">
  ];
  let statistics = [
    Statistic<"numFused", "num-fused", "Candidates fused">,
    Statistic<"numDeclined", "num-declined", "Candidates declined">
  ];
}

def FusePairedProjections : Pass<"fusion-fuse-paired-projections",
                                  "func::FuncOp"> {
  let summary = "Fuse two projections of one input and their epilogues";
  let description = [{
    Finds two contractions (`linalg.matmul` with either weight layout,
    `linalg.matvec`, `linalg.vecmat`, contraction `linalg.generic`s) that
    read the same LHS value, have the same K and element types and do not
    depend on each other, each consumed only by an elementwise epilogue
    (none, `+ bias`, sigmoid, silu, `softplus(y + bias) * scale` as the
    Gated-DeltaNet alpha gate writes it) or both by one gated activation
    (SwiGLU, GeGLU, ...), and replaces them with one
    `fusion.paired_projection`. Per-column parameters computed in the IR
    (the GDN scale `-exp(A_log)`) are materialised as an [H] tensor before
    the fused op. See `lib/Analysis/ProjectionPairing.cpp` and
    docs/passes.md for the recognised forms.

    Admission rules, each reported in a structured remark (category
    `fusion`, name `FusePairedProjections`; `passed`, or `missed` with the
    rule as the reason): "different LHS", "different K or element types",
    "different weight layouts", "dependency between the projections",
    "unsupported projection", "accumulation narrower than f32", "extra
    consumer of a projection result", "unsupported epilogue", and "no
    partner left" (every admitted partner was paired with another
    projection). A declined candidate is left untouched.

    Expects normalised input (`fusion-normalize-elementwise`, canonicalize,
    cse). Run it before `fusion-fuse-act-quantize`: a gate/up pair feeding
    SwiGLU and then a `fusion.quantize` becomes a gated
    `fusion.paired_projection` followed by the quantizer.
  }];
  let dependentDialects = ["fusion::FusionDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect", "arith::ArithDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "Pairs fused">,
    Statistic<"numDeclined", "num-declined", "Seeds declined">
  ];
}

#endif // FUSION_TRANSFORMS_PASSES_TD
