//===- TMTensorOps.td - the tm_tensor ops torch-mlir leaves -*- tablegen -*-===//
//
// A subset of torch-mlir's TMTensor dialect: the two ops its
// linalg-on-tensors backend leaves in programs that index with masks or
// take cumulative sums (`x[mask] = v`, torch.nonzero, torch.cumsum; e.g.
// torchao's EVEN scale mode), in torch-mlir's printed syntax, so that
// fusion-opt parses them. fusion-lower-tm-tensor (Passes.td) writes them
// out as loops on tensors. The ops are defined here from their behaviour
// (documented in docs/passes.md), on ranked tensors or (a bufferized
// program, which the lowering leaves) memrefs; torch-mlir's own
// dialect is not a dependency. Not registered by the plugin (a torch-mlir
// tool has the real dialect; the lowering pass works on either by name).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_TMTENSOR_OPS
#define FUSION_TMTENSOR_OPS

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def TMTensor_Dialect : Dialect {
  let name = "tm_tensor";
  let cppNamespace = "::mlir::fusion::tm_tensor";
  let summary = "torch-mlir's tm_tensor.scan / scatter, parsed and lowered "
                "by fusion-opt";
}

class TMTensor_Op<string mnemonic, list<Trait> traits = []>
    : Op<TMTensor_Dialect, mnemonic, traits>;

def TMTensor_YieldOp : TMTensor_Op<"yield", [Pure, ReturnLike, Terminator]> {
  let summary = "the value a scan or scatter body computes";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def TMTensor_ScanOp : TMTensor_Op<"scan", [AttrSizedOperandSegments]> {
  let summary = "inclusive or exclusive scan along one dimension";
  let description = [{
    `ins(%in) outs(%out, %acc)`: along `dimension`, inclusive:
    out[0] = in[0], out[i] = body(out[i-1], in[i]); exclusive:
    out[0] = acc, out[i] = body(out[i-1], in[i-1]); the accumulator result
    is the last value the body computed (acc where the dimension has one
    element). Results: the scanned tensor and the accumulator.
  }];
  let arguments = (ins Variadic<AnyShaped>:$inputs,
                   Variadic<AnyShaped>:$outputs, I64Attr:$dimension,
                   BoolAttr:$inclusive);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$region);
  let assemblyFormat = [{
    `dimension` `(` $dimension `)` `inclusive` `(` $inclusive `)` attr-dict
    `ins` `(` $inputs `:` type($inputs) `)`
    `outs` `(` $outputs `:` type($outputs) `)`
    $region (`->` type($results)^)?
  }];
  let hasVerifier = 1;
}

def TMTensor_ScatterOp : TMTensor_Op<"scatter", [AttrSizedOperandSegments]> {
  let summary = "updates combined into a tensor at indexed positions";
  let description = [{
    `ins(%updates, %indices) outs(%original)`: for every position p of
    `updates` ([N, ...]), the destination index has, for each i <
    indices.dim(1), component dimension_map[i] = indices[p0, i] (plus the
    update's own trailing index where one lands on the same dimension);
    the update's trailing dimensions fill the original's last ones. The
    element there becomes body(update, original element), in order of p.
  }];
  let arguments = (ins Variadic<AnyShaped>:$inputs,
                   Variadic<AnyShaped>:$outputs,
                   DenseI64ArrayAttr:$dimension_map,
                   BoolAttr:$unique_indices);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$region);
  let assemblyFormat = [{
    attr-dict `unique_indices` `(` $unique_indices `)`
    `ins` `(` $inputs `:` type($inputs) `)`
    `outs` `(` $outputs `:` type($outputs) `)`
    $region (`->` type($results)^)?
  }];
  let hasVerifier = 1;
}

#endif // FUSION_TMTENSOR_OPS
