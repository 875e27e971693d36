// RUN: fusion-opt %s --fusion-copy-constant-operands | FileCheck %s
// RUN: fusion-opt %s "--fusion-pipeline=generic-alloc=true" | FileCheck %s --check-prefix=LLVM

// Constant inputs of fusion ops (weights as torch-mlir emits them) are read
// from allocated copies, so that a host allocating device memory
// (generic-alloc) hands the runtime no pointer into read-only data.

// CHECK-LABEL: func.func @weights
//       CHECK: %[[W:.*]] = arith.constant dense<
//       CHECK: %[[C:.*]] = bufferization.alloc_tensor() copy(%[[W]]) : tensor<8x64xbf16>
//       CHECK: fusion.paired_projection %{{.*}}, %[[C]], %[[C]]
// LLVM-LABEL: llvm.func @weights
//       LLVM: llvm.call @_mlir_memref_to_llvm_alloc
func.func @weights(%x: tensor<4x64xbf16>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = arith.constant dense<1.0> : tensor<8x64xbf16>
  %e0 = tensor.empty() : tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %a, %b = fusion.paired_projection %x, %w, %w epilogues(none, sigmoid) outs(%e0, %e1)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

/// A non-constant input stays as it is.
// CHECK-LABEL: func.func @negative_argument
//   CHECK-NOT: alloc_tensor
func.func @negative_argument(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %a, %b = fusion.paired_projection %x, %w, %w epilogues(none, none) outs(%e0, %e1)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

/// A view of a constant (stacked weights cut in parts): the view reads one
/// copy of the whole constant, so the parts stay views.
// CHECK-LABEL: func.func @stacked
//       CHECK: %[[W:.*]] = arith.constant dense<
//       CHECK: %[[C:.*]] = bufferization.alloc_tensor() copy(%[[W]]) : tensor<16x64xbf16>
//   CHECK-DAG: tensor.extract_slice %[[C]][0, 0] [8, 64]
//   CHECK-DAG: tensor.extract_slice %[[C]][8, 0] [8, 64]
//   CHECK-NOT: alloc_tensor
//       CHECK: fusion.paired_projection
func.func @stacked(%x: tensor<4x64xbf16>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = arith.constant dense<1.0> : tensor<16x64xbf16>
  %w0 = tensor.extract_slice %w[0, 0] [8, 64] [1, 1] : tensor<16x64xbf16> to tensor<8x64xbf16>
  %w1 = tensor.extract_slice %w[8, 0] [8, 64] [1, 1] : tensor<16x64xbf16> to tensor<8x64xbf16>
  %e0 = tensor.empty() : tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %a, %b = fusion.paired_projection %x, %w0, %w1 epilogues(none, none) outs(%e0, %e1)
      : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}
