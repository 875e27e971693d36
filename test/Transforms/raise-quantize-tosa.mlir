// RUN: fusion-opt %s --fusion-raise-quantize --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --fusion-expand-tosa-mx --remarks-filter=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPAND
// RUN: fusion-opt %s --fusion-expand-tosa-mx --fusion-raise-quantize --remarks-filter=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=RAISE
// RUN: not fusion-opt %s --fusion-pipeline -o /dev/null 2>&1 | FileCheck %s
// NOT-A-PROGRAM for test/Pipeline/every-program.test: the two casts after
// the first are not lowered; the error is checked here.

// tosa.cast_to_block_scaled is raised once fusion-expand-tosa-mx has written
// it out (test/Transforms/expand-tosa-mx.mlir); the raising pass alone names
// it. A sub-byte element type (f4E2M1FN here; f6 likewise) is expanded and
// then declined by the raising: the runtime's MXFP4 codes are packed two a
// byte and its scale rules are not TOSA's floor + 1 (the expansion lowers
// as written: test/Frontend/corpus.test, tosa_mxfp4_f32).

// EXPAND: [Passed] ExpandTosaMX | Category:fusion | Function=tosa_mxfp4 | Remark="expanded tosa.cast_to_block_scaled as the TOSA 1.1 specification defines it"
// RAISE: [Missed] RaiseQuantize | Category:fusion | Function=tosa_mxfp4 | Reason="unsupported format", Remark="a quantizer to f4E2M1FN elements, one a byte: the runtime stores MXFP4 / NVFP4 codes packed two a byte (and scales by RCEIL, FLOOR or CEIL, not TOSA's floor + 1)"
// CHECK: error: op was not bufferized
func.func @tosa_mxfp4(%x: tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>) {
  // expected-remark @below {{Reason="unsupported op", Remark="tosa.cast_to_block_scaled is raised once fusion-expand-tosa-mx has written it out (both pipelines run it first); this one was not"}}
  %0:2 = tosa.cast_to_block_scaled %x {block_size = #tosa.block_size<BLOCK_SIZE_32>} : (tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>)
  return %0#0, %0#1 : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
}

// A dynamic last dimension (the block partition) and an f16 input (TOSA's
// MX casts take f32 and bf16) are not expanded either, each with its reason.
// EXPAND: [Missed] ExpandTosaMX | Category:fusion | Function=negative_dynamic_last | Reason="unsupported op", Remark="tosa.cast_to_block_scaled is not expanded: the last dimension is dynamic or not a multiple of the block"
func.func @negative_dynamic_last(%x: tensor<4x?xf32>) -> (tensor<4x?xf8E4M3FN>, tensor<4x?xf8E8M0FNU>) {
  // expected-remark @below {{Reason="unsupported op"}}
  %0:2 = tosa.cast_to_block_scaled %x {block_size = #tosa.block_size<BLOCK_SIZE_32>} : (tensor<4x?xf32>) -> (tensor<4x?xf8E4M3FN>, tensor<4x?xf8E8M0FNU>)
  return %0#0, %0#1 : tensor<4x?xf8E4M3FN>, tensor<4x?xf8E8M0FNU>
}

// EXPAND: [Missed] ExpandTosaMX | Category:fusion | Function=negative_f16 | Reason="unsupported op", Remark="tosa.cast_to_block_scaled is not expanded: the unscaled side is f16 (f32 and bf16 are expanded)"
func.func @negative_f16(%x: tensor<4x64xf16>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) {
  // expected-remark @below {{Reason="unsupported op"}}
  %0:2 = tosa.cast_to_block_scaled %x {block_size = #tosa.block_size<BLOCK_SIZE_32>} : (tensor<4x64xf16>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return %0#0, %0#1 : tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>
}

// TOSA's mxint8 elements (!tosa.mxint8) are not expanded: the remark names
// the type.
// EXPAND: [Missed] ExpandTosaMX | Category:fusion | Function=negative_mxint8 | Reason="unsupported op", Remark="tosa.cast_to_block_scaled is not expanded: the elements are !tosa.mxint8 (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN and f4E2M1FN are expanded; integer MX elements are not)"
func.func @negative_mxint8(%x: tensor<4x32xf32>) -> (tensor<4x32x!tosa.mxint8>, tensor<4x1xf8E8M0FNU>) {
  // expected-remark @below {{Reason="unsupported op"}}
  %0:2 = tosa.cast_to_block_scaled %x {block_size = #tosa.block_size<BLOCK_SIZE_32>} : (tensor<4x32xf32>) -> (tensor<4x32x!tosa.mxint8>, tensor<4x1xf8E8M0FNU>)
  return %0#0, %0#1 : tensor<4x32x!tosa.mxint8>, tensor<4x1xf8E8M0FNU>
}
