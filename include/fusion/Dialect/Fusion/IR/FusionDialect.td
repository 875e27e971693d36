//===- FusionDialect.td - The fusion dialect ---------------*- tablegen -*-===//
//
// Declares the `fusion` dialect: fused activation+quantize and paired
// projection ops that lower to calls into the fusion runtime.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_DIALECT_TD
#define FUSION_DIALECT_TD

include "mlir/IR/OpBase.td"

def Fusion_Dialect : Dialect {
  let name = "fusion";
  let cppNamespace = "::mlir::fusion";
  let summary = "Fused activation/quantization and paired-projection ops";
  let description = [{
    The `fusion` dialect holds the ops that `fusion-opt` produces when it
    finds, in linalg/arith/math/tensor IR, either an elementwise activation
    whose result is quantized (MXFP8, MXFP4, NVFP4, FP8 per tensor), or two
    projections of one input each followed by an elementwise epilogue.

    * `fusion.quantize` is the unfused quantizer, as a frontend emits it.
    * `fusion.act_quantize` and `fusion.gated_act_quantize` are an activation
      (forward or backward, optionally with the bias gradient) fused with the
      quantizer; the activation result never reaches memory.
    * `fusion.paired_projection` reads one input once for two projections.

    The quantization scheme is the `#fusion.quant<...>` attribute; the
    activation is the `#fusion.act<...>` attribute. All ops work on ranked
    tensors; the result list of a quantizing op is implied by its scheme (see
    `fusion.quantize`).
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Fusion_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fusion_Dialect, mnemonic, traits>;

#endif // FUSION_DIALECT_TD
