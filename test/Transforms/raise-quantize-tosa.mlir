// RUN: fusion-opt %s --fusion-raise-quantize --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: not fusion-opt %s --fusion-pipeline -o /dev/null 2>&1 | FileCheck %s
// NOT-A-PROGRAM for test/Pipeline/every-program.test: TOSA is not an input
// dialect of the pipeline (linalg, arith, math, tensor, func); the error is
// checked here.

// TOSA's MX cast (TOSA 1.1, EXT_MXFP) parses on LLVM 22 but has no lowering
// there, and its numerics are not checked against the runtime's quantizers
// (docs/passes.md, "Not recognised yet"): the raising names it, and the
// pipeline stops at it with an error, not a crash.

// CHECK: error: op was not bufferized
func.func @tosa_mxfp8(%x: tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) {
  // expected-remark @below {{Reason="unsupported op", Remark="tosa.cast_to_block_scaled is not raised: its numerics are the TOSA 1.1 specification's, not checked against the runtime's quantizers here (LLVM 22 has no lowering for it)"}}
  %0:2 = tosa.cast_to_block_scaled %x {block_size = #tosa.block_size<BLOCK_SIZE_32>} : (tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return %0#0, %0#1 : tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>
}
