//===- Passes.td - fusion-to-runtime passes ----------------*- tablegen -*-===//
//
// The passes of lib/Conversion/FusionToRuntime. No `constructor`:
// -gen-pass-decls -name FusionToRuntime emits create<Name>() and
// registerFusionToRuntimePasses().
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_CONVERSION_FUSIONTORUNTIME_PASSES_TD
#define FUSION_CONVERSION_FUSIONTORUNTIME_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerToRuntime : Pass<"fusion-lower-to-runtime", "ModuleOp"> {
  let summary = "Lower every fusion op on memrefs to a call of its runtime "
                "entry point (C interface) with a status assertion";
  let description = [{
    Runs after one-shot bufferization. Each `fusion.quantize`,
    `fusion.act_quantize`, `fusion.gated_act_quantize` and
    `fusion.paired_projection` on memrefs becomes a call of its
    `_mlir_ciface_fusion_rt_mlir_*` entry point (libfusion_rt_mlir): the
    scheme and activation as i32/f32 scalars in the order of
    `runtime/include/fusion_rt_mlir.h`, the buffers as one table of
    (rank, dtype, sizes, strides, pointer) rows, and an `cf.assert` on the
    returned status. Operands the runtime cannot read in place (a strided
    view, f4E2M1FN memrefs holding one code a byte) are staged through
    plain allocations and copied back. An op it cannot lower fails the
    pass with a diagnostic that names it.
  }];
  let dependentDialects = ["arith::ArithDialect", "cf::ControlFlowDialect",
                           "func::FuncDialect", "memref::MemRefDialect"];
}

def KernelReport : Pass<"fusion-kernel-report", "ModuleOp"> {
  let summary = "Print, for every fusion op, its runtime entry point, the "
                "CUDA kernel and launch shape it becomes, and the kernel's "
                "registers, shared memory, spills and shared vs generic "
                "memory instructions";
  let description = [{
    Reads the kernel inventory built with fusion-opt (ptxas -v and the PTX
    instruction mix of the runtime's kernels for sm_90a) and prints one
    block per fusion op to stdout; the IR is unchanged. docs/lowering.md,
    "Inspecting the kernels", shows its output.
  }];
  let options = [
    Option<"inventoryPath", "inventory", "std::string", /*default=*/"\"\"",
           "Kernel inventory TSV (default, or empty: the one built with "
           "fusion-opt)">,
  ];
}

#endif // FUSION_CONVERSION_FUSIONTORUNTIME_PASSES_TD
