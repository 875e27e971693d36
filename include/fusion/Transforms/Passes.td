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

def ExpandTosaMX : Pass<"fusion-expand-tosa-mx", "func::FuncOp"> {
  let summary = "Write TOSA 1.1's MX casts out in linalg, as the TOSA "
                "specification defines them";
  let description = [{
    LLVM 22 parses `tosa.cast_to_block_scaled` and
    `tosa.cast_from_block_scaled` (TOSA 1.1, EXT_MXFP) but has no lowering
    for them. This pass rewrites each into linalg / arith / tensor ops that
    compute what the specification's pseudocode defines
    (CAST_TO_BLOCK_SCALED with calc_block_scale, CAST_FROM_BLOCK_SCALED):
    per block of 32 along the last dimension, max_abs from 0 (NaN
    propagating); the scale 2^-127 for a zero block, NaN for NaN or Inf,
    else 2^e clipped to e8m0's range, with e = ceil(log2(max_abs / max))
    for f8E4M3FN and floor(log2(max_abs / max)) + 1 for the other element
    types (computed exactly on max_abs's bits); the data rounded to nearest
    from x / scale. The dequantizing cast is f32(x) * f32(scale), rounded to
    the result type.

    The expansion is then a written-out quantizer like any other:
    `fusion-raise-quantize` raises it where a runtime quantizer equals it
    (f8E4M3FN: the runtime's default MXFP8, RCEIL with NaN propagation) and
    the rest lowers with the program. The sub-byte elements (f6E2M3FN,
    f6E3M2FN, f4E2M1FN) are expanded too (a NaN scale's elements, which
    the types cannot hold, become +0). Other element types, unscaled types
    other than f32 / bf16, and a dynamic last dimension are left as they are, with a
    `missed` remark (category `fusion`, name `ExpandTosaMX`) that says why;
    each expanded op gets a `passed` remark.

    Then, with `lower-tosa` (default), a function that holds other TOSA ops
    (an activation before the cast, ...) and no MX cast left is lowered by
    upstream's TOSA-to-linalg passes (those of `tosa-to-linalg-pipeline`
    without its validation, then `tosa-to-arith` and `tosa-to-tensor`), so
    that a TOSA program reaches the fusion passes in linalg. Functions
    without TOSA ops are not touched.
  }];
  // The TOSA lowering's dialects: its passes' own (getDependentDialects).
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect",
                           "arith::ArithDialect", "math::MathDialect"];
  let options = [
    Option<"lowerTosa", "lower-tosa", "bool", /*default=*/"true",
           "Lower the other TOSA ops of a function that has any with "
           "upstream's TOSA-to-linalg passes">
  ];
}

def LowerTMTensor : Pass<"fusion-lower-tm-tensor", "func::FuncOp"> {
  let summary = "Write torch-mlir's tm_tensor.scan / scatter out as loops "
                "on tensors";
  let description = [{
    torch-mlir's linalg-on-tensors backend leaves two ops of its TMTensor
    dialect where a program indexes with a mask or takes a cumulative sum
    (`x[mask] = v`, `torch.nonzero`, `torch.cumsum`; torchao's EVEN scale
    mode writes `max_abs[nan_mask] = nan`): `tm_tensor.scan` and
    `tm_tensor.scatter`. fusion-opt parses them (its tm_tensor subset,
    include/fusion/Dialect/TMTensor) and this pass, first in
    `--fusion-pipeline` and `--fusion-act-quantize-pipeline`, rewrites each
    into `scf.for` loops over `tensor.extract` / `tensor.insert`, which
    bufferize and lower with the rest of the program. A scan runs its body
    along the dimension in order (inclusive: out[0] = in[0]; exclusive:
    out[0] = the accumulator); a scatter applies its body to each update in
    order, and skips an update whose index lies outside the original (the
    op leaves that undefined; nothing is written outside the tensor).
    Matched by operation name, so the pass also runs where torch-mlir's own
    dialect is loaded (the plugin). Every rewritten op gets a `passed`
    remark (category `fusion`, name `LowerTMTensor`); one it cannot take
    (memref operands, unranked or non-integer indices) a `missed` one.
  }];
  let dependentDialects = ["scf::SCFDialect", "tensor::TensorDialect",
                           "arith::ArithDialect"];
}

def RaiseMaskedFill : Pass<"fusion-raise-masked-fill", "func::FuncOp"> {
  let summary = "Replace an index_put by a boolean mask (nonzero + "
                "tm_tensor.scatter) by a select";
  let description = [{
    torch-mlir writes `x[mask] = v` (aten.index_put with a boolean index;
    torchao's EVEN scale mode restores NaN amaxes so) as torch.nonzero's
    index computation (a cumulative sum as `tm_tensor.scan`, a compacting
    scatter, slices sized by the number of true elements) and one
    `tm_tensor.scatter` that overwrites x at those indices. The whole is
    `select(mask, v, x)`. For each overwriting scatter (a body that yields
    the update) into a tensor of static shape, the pass takes as the mask a
    boolean tensor of that shape which the indices derive from, and checks
    the claim semantically: an interpreter that materialises whole tensors
    (lib/Analysis/EagerEvaluator.cpp; the index computation's shapes depend
    on the mask) computes the scatter's result with the mask and x free, on
    seven probe masks (no element, every element, the first, the last,
    every other, 37 % and 63 % at random) and random x; every result must
    equal select(mask, v, x) for one constant v, with no index outside the
    tensor. The scatter then becomes one elementwise `linalg.generic` select
    and the dead index computation is erased (the frontend's `cf.assert`s
    on the count stay). Runs before `fusion-lower-tm-tensor` in both
    pipelines: what it leaves becomes loops there, which
    `fusion-raise-quantize` cannot evaluate.

    Remarks (category `fusion`, name `RaiseMaskedFill`): `passed` for each
    rewrite; `missed` with reason "unsupported shape" (a dynamic shape, or
    more than 262144 elements: every probe evaluates the whole index
    computation), "no mask", "not evaluable" (the evaluator's reason) or
    "not a masked fill" (the first probe and element that differ).
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect",
                           "arith::ArithDialect"];
}

def RaiseQuantize : Pass<"fusion-raise-quantize", "func::FuncOp"> {
  let summary = "Replace quantizers written out in upstream ops by fusion.quantize";
  let description = [{
    Finds quantizers that a frontend wrote out in upstream ops (torchao's
    `to_mx` as torch-mlir lowers it, hand-written `log2` / `floor` / `exp2`
    scales, `arith.scaling_truncf`, ...) and replaces each by one
    `fusion.quantize`, so that `fusion-fuse-act-quantize` can fuse it with
    the activation before it.

    A candidate is a cast to an FP8 type (`f8E4M3FN`, `f8E5M2`) whose
    operand depends on an amax reduction. The pass takes the region between
    the quantizer's input and its two results (the data and the block
    scales), whatever ops it is written in, and checks it semantically: an
    interpreter of the tensor IR (lib/Analysis/TensorEvaluator.cpp)
    evaluates the region on probe inputs (random values over the whole
    exponent range, NaN, +-Inf, zero and -0 blocks, subnormals, values above
    the format's maximum, scale and rounding boundaries) and the runtime's
    own CPU quantizer computes every candidate scheme (MXFP8 e4m3 / e5m2,
    RCEIL / FLOOR, NaN propagate / ignore) on the same inputs. The region is
    raised to the first scheme that reproduces every byte; NaN data elements
    compare as NaN (the IR leaves a NaN's sign and payload open).

    Every candidate gets a structured remark (category `fusion`, name
    `RaiseQuantize`): `passed` with the scheme, or `missed` with the rule:
    "no amax reduction", "no quantizer input", "no scale output",
    "intermediate value has another user", "unsupported shape",
    "not evaluable" (an op or a form the interpreter does not model), or
    "differs from every runtime quantizer" with the first differing element
    and what the difference is (a cast that does not saturate, a different
    scale rounding, ...). docs/passes.md lists the rules.
  }];
  let dependentDialects = ["fusion::FusionDialect", "tensor::TensorDialect",
                           "linalg::LinalgDialect", "affine::AffineDialect"];
  let options = [
    Option<"saturatingCasts", "saturating-casts", "bool", /*default=*/"false",
           "Treat arith.truncf to an FP8 type as a saturating cast (finite "
           "values above the maximum become the maximum), as torch >= 2.12 "
           "eager casts and Triton casts do; torchao drops its clamp when it "
           "relies on that. By default the cast means what arith defines "
           "(overflow gives NaN for f8E4M3FN, Inf for f8E5M2)">,
    Option<"wrappingIntCasts", "wrapping-int-casts", "bool",
           /*default=*/"false",
           "Treat fptosi / fptoui of an in-range (i32) value that does not "
           "fit the narrower result as truncation to i32 then to the result "
           "width, as torch's .to(torch.uint8) does (torch-mlir emits it as "
           "fptosi to i8, poison above 127). By default such a result is "
           "poison and a quantizer that depends on it is declined">,
    Option<"finiteInputs", "finite-inputs", "bool", /*default=*/"false",
           "Assume the quantizer's input holds no NaN or Inf (the fast-math "
           "nnan/ninf contract): the exactness check then probes finite "
           "values only, and the raised op applies the runtime's NaN policy "
           "(propagate: torch's eager semantics) where the written IR may "
           "differ">
  ];
  let statistics = [
    Statistic<"numRaised", "num-raised", "Quantizers raised">,
    Statistic<"numDeclined", "num-declined", "Candidates declined">
  ];
}

def FuseActQuantize : Pass<"fusion-fuse-act-quantize", "func::FuncOp"> {
  let summary = "Fuse an activation and the fusion.quantize of its result";
  let description = [{
    For every `fusion.quantize` whose input is computed by an elementwise
    `linalg.generic` that implements an activation (see
    `lib/Analysis/ActivationMatcher.cpp` for the recognised forms), replaces
    the activation and the quantizer with one `fusion.act_quantize` (relu,
    gelu, gelu_tanh, silu, qgelu, srelu, identity, and their backward forms
    grad * act'(x)) or `fusion.gated_act_quantize` (swiglu, geglu, geglu_erf,
    reglu, qgeglu, sreglu, clamped_swiglu; gate and up as two tensors or as the
    halves of one packed [M, 2K] tensor; the backward forms from
    [dgate | dup] written by `tensor.concat` or two `tensor.insert_slice`).
    A column-sum reduction of the quantized value next to the quantizer is
    fused as the op's `dbias` result; a rowwise and a colwise quantizer of
    one activation become one fused op with direction `both`, and a
    quantizer identical to a fused one reads its results. A rowwise
    quantizer of a 2-D transpose (torchao's `to_mx(y.t().contiguous())`)
    is taken first as the colwise copy of what it transposes, data
    transposed; for FP8 per tensor, a transpose of the codes becomes the
    op's colwise copy (direction `both`). The fused op rounds the activation to
    the element type the graph rounded it to (the `via` type). Every match
    is cross-checked numerically against the runtime's formula before the
    rewrite.

    Admission rules, each reported in a structured remark
    (category `fusion`, name `FuseActQuantize`; `passed`, or `missed` with
    the rule as the reason): "no activation to fuse", "unsupported
    activation", "activation has another user", "unsupported input element
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
           "and rounding once, would not reproduce bit for bit">,
    Option<"finiteInputs", "finite-inputs", "bool", /*default=*/"false",
           "The function's float arguments hold finite values (the "
           "nnan/ninf contract of fusion-raise-quantize's option of that "
           "name): checks (cf.assert) that read the activation are proven "
           "for finite arguments only">
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
    Gated-DeltaNet alpha gate writes it, with log1p(exp(t)),
    log(1 + exp(t)) or max(t, 0) + log1p(exp(-|t|))) or both by one gated
    activation
    (SwiGLU, GeGLU, ...), and replaces them with one
    `fusion.paired_projection`. A generic that reads both projections but
    is no gated activation (SwiGLU followed by a quantize-dequantize) stays
    as it is and reads the pair's f32 accumulators (epilogues `none, none`;
    the remark names why the body is not fused). Per-column parameters
    computed in the IR
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

    One projection over stacked weights whose result (after an optional
    rounding to bf16 / f16 and an optional expand_shape of the token
    dimensions) is only cut along its last dimension into contiguous parts
    (`tensor.extract_slice`, torch's `chunk` / `split`: Llama's fused `w13`)
    is first split into one projection per part, each over a row range of
    the one weight (an extract_slice: a view, no copy); the parts then pair
    like separate projections (remark "split ... into N projections"). A
    result cut in another way (interleaved head groups) gets a `missed`
    remark saying why.

    Expects normalised input (`fusion-normalize-elementwise`, canonicalize,
    cse). Run it before `fusion-fuse-act-quantize`: a gate/up pair feeding
    SwiGLU and then a `fusion.quantize` becomes a gated
    `fusion.paired_projection` followed by the quantizer.
  }];
  let dependentDialects = ["fusion::FusionDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect", "arith::ArithDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "Pairs fused">,
    Statistic<"numDeclined", "num-declined", "Seeds declined">,
    Statistic<"numSplit", "num-split", "Stacked projections split">
  ];
}

def LowerFloat8Casts : Pass<"fusion-lower-float8-casts", "ModuleOp"> {
  let summary = "Lower scalar casts to and from 8-bit floats to APFloat calls";
  let description = [{
    LLVM has no 8-bit float types, so `arith.truncf` / `arith.extf` with an
    f8 (or f4 / f6) side survive `convert-to-llvm`. This pass rewrites each
    scalar one into a call of `_mlir_apfloat_convert` (upstream's
    `libmlir_apfloat_wrappers.so`, which JIT runs and AOT links load): the
    cast arith defines, round to nearest even, overflow to NaN (f8E4M3FN) or
    Inf (f8E5M2). Unlike upstream `convert-arith-to-apfloat` it leaves every
    other op alone (f32 arithmetic stays native). With `saturate`, finite
    values past the target's maximum become the maximum first (what
    `fusion-raise-quantize=saturating-casts` assumes).
  }];
  let dependentDialects = ["func::FuncDialect", "arith::ArithDialect",
                           "math::MathDialect"];
  let options = [
    Option<"saturate", "saturate", "bool", /*default=*/"false",
           "Saturate finite values to the 8-bit type's maximum">
  ];
}

def CopyConstantOperands
    : Pass<"fusion-copy-constant-operands", "func::FuncOp"> {
  let summary = "Read constant tensors of fusion ops from allocated buffers";
  let description = [{
    A constant tensor (a model's weights as torch-mlir emits them,
    `arith.constant dense_resource<...>`) bufferizes to a global in the
    program's read-only data: host memory. A program built with
    `generic-alloc` lets its host decide where buffers live (device or
    managed memory, so the runtime runs its CUDA kernels), but a fusion op
    reading such a global would hand the runtime a host pointer beside device
    pointers, which it rejects. This pass gives every constant input of a
    fusion op a `bufferization.alloc_tensor() copy(...)`: the buffer comes
    from the host program's allocator and holds the same bytes.
    `fusion-pipeline` runs it with `generic-alloc=true`.
  }];
  let dependentDialects = ["bufferization::BufferizationDialect"];
}

def ExpandShapeToReinterpretCast
    : Pass<"fusion-expand-shape-to-reinterpret-cast", "func::FuncOp"> {
  let summary = "Rewrite contiguous memref.expand_shape with several dynamic "
                "sizes in one group as memref.reinterpret_cast";
  let description = [{
    Upstream `expand-strided-metadata` (LLVM 22.1) crashes on a
    `memref.expand_shape` that splits one dimension into two or more dynamic
    ones (`memref<?x8xf32> into memref<?x?x8xf32>`, what a rank-3 dynamic
    paired projection's result becomes). Where source and result both have
    the identity layout, the result is the same buffer with the output
    shape's row-major strides: this pass writes it as that
    `memref.reinterpret_cast` (static sizes and strides stay static) and
    leaves every other `expand_shape` to upstream. `fusion-pipeline` runs it
    before `expand-strided-metadata`.
  }];
  let dependentDialects = ["memref::MemRefDialect", "arith::ArithDialect"];
}

def VerifyLoweredToLLVM : Pass<"fusion-verify-lowered-to-llvm", "ModuleOp"> {
  let summary = "Fail with a diagnostic if an op is left outside LLVM";
  let description = [{
    The last stage of `fusion-pipeline`: conversion to LLVM is partial, so an
    op no pattern lowered would otherwise reach `mlir-translate`. This pass
    reports the first such op ("the pipeline did not lower this op to the
    LLVM dialect") and fails.
  }];
}


def TestFloatRange : Pass<"fusion-test-float-range", "func::FuncOp"> {
  let summary = "Test: report FloatRangeAnalysis's ranges and check them";
  let description = [{
    For tests of `FloatRangeAnalysis` (lib/Analysis/FloatRange.cpp): emits a
    remark (category `fusion`, name `FloatRange`) with the range of every
    float value the function returns and whether each `cf.assert` is proven
    to hold. Then checks the ranges: the function (static shapes) is
    evaluated by the TensorEvaluator on `samples` random inputs (random bit
    patterns mixed with zeros, infinities, NaN, the largest and smallest
    values; finite only with `finite-inputs`), and an error is emitted for
    any returned element outside its range and any proven assert whose
    condition is false.
  }];
  let options = [
    Option<"finiteInputs", "finite-inputs", "bool", /*default=*/"false",
           "The function's float arguments hold finite values">,
    Option<"samples", "samples", "unsigned", /*default=*/"64",
           "Random inputs to evaluate the function on">
  ];
}

#endif // FUSION_TRANSFORMS_PASSES_TD
