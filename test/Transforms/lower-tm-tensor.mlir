// RUN: fusion-opt %s --fusion-lower-tm-tensor --remarks-filter=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: fusion-opt %s --fusion-lower-tm-tensor | FileCheck %s
// NOT-A-PROGRAM for test/Pipeline/every-program.test: the memref scan at the
// end is not lowered (its remark is checked here); the values of the others
// are checked end to end by test/Integration/tm-tensor.mlir.

// torch-mlir's tm_tensor.scan and tm_tensor.scatter, in its syntax (from
// torch-mlir 20261001's linalg-on-tensors IR of `x[mask] = v`,
// torch.nonzero and torch.cumsum), written out as loops on tensors.

// REMARK: [Passed] LowerTMTensor | Category:fusion | Function=cumsum | Remark="wrote tm_tensor.scan out as loops on tensors"
// CHECK-LABEL: func.func @cumsum
// CHECK-NOT: tm_tensor
// CHECK: scf.for
// CHECK: scf.if
// CHECK: arith.addi
// CHECK: tensor.insert
func.func @cumsum(%x: tensor<6xi64>) -> (tensor<6xi64>, tensor<i64>) {
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<6xi64>
  %out = linalg.fill ins(%c0 : i64) outs(%e : tensor<6xi64>) -> tensor<6xi64>
  %e0 = tensor.empty() : tensor<i64>
  %acc = linalg.fill ins(%c0 : i64) outs(%e0 : tensor<i64>) -> tensor<i64>
  %0:2 = tm_tensor.scan dimension(0) inclusive(true) ins(%x : tensor<6xi64>) outs(%out, %acc : tensor<6xi64>, tensor<i64>) {
  ^bb0(%arg1: i64, %arg2: i64):
    %s = arith.addi %arg1, %arg2 : i64
    tm_tensor.yield %s : i64
  } -> tensor<6xi64>, tensor<i64>
  return %0#0, %0#1 : tensor<6xi64>, tensor<i64>
}

// An exclusive product scan along the second dimension of a 2-D input: the
// first element of each row is the accumulator's.
// REMARK: [Passed] LowerTMTensor | Category:fusion | Function=cumprod_exclusive
func.func @cumprod_exclusive(%x: tensor<2x4xf32>, %acc: tensor<2xf32>) -> (tensor<2x4xf32>, tensor<2xf32>) {
  %e = tensor.empty() : tensor<2x4xf32>
  %0:2 = tm_tensor.scan dimension(1) inclusive(false) ins(%x : tensor<2x4xf32>) outs(%e, %acc : tensor<2x4xf32>, tensor<2xf32>) {
  ^bb0(%arg1: f32, %arg2: f32):
    %p = arith.mulf %arg1, %arg2 : f32
    tm_tensor.yield %p : f32
  } -> tensor<2x4xf32>, tensor<2xf32>
  return %0#0, %0#1 : tensor<2x4xf32>, tensor<2xf32>
}

// `x[mask] = v` as torch-mlir writes the assignment: [N, 3] indices into a
// [4, 2, 1] tensor, [N, 1, 1, 1] updates, the body taking the update. An
// index past the tensor (row 2 of the indices: 9) is skipped.
// REMARK: [Passed] LowerTMTensor | Category:fusion | Function=masked_assign | Remark="wrote tm_tensor.scatter out as loops on tensors"
// CHECK-LABEL: func.func @masked_assign
// CHECK-NOT: tm_tensor
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
func.func @masked_assign(%dest: tensor<4x2x1xf32>, %idx: tensor<?x3xi64>, %upd: tensor<?x1x1x1xf32>) -> tensor<4x2x1xf32> {
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0, 1, 2>} unique_indices(true) ins(%upd, %idx : tensor<?x1x1x1xf32>, tensor<?x3xi64>) outs(%dest : tensor<4x2x1xf32>) {
  ^bb0(%arg1: f32, %arg2: f32):
    tm_tensor.yield %arg1 : f32
  } -> tensor<4x2x1xf32>
  return %0 : tensor<4x2x1xf32>
}

// torch.nonzero's scatter: 1-D updates accumulated at [N, 1] positions.
// REMARK: [Passed] LowerTMTensor | Category:fusion | Function=scatter_add
func.func @scatter_add(%dest: tensor<5xi64>, %idx: tensor<4x1xi32>, %upd: tensor<4xi64>) -> tensor<5xi64> {
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%upd, %idx : tensor<4xi64>, tensor<4x1xi32>) outs(%dest : tensor<5xi64>) {
  ^bb0(%arg1: i64, %arg2: i64):
    %s = arith.addi %arg2, %arg1 : i64
    tm_tensor.yield %s : i64
  } -> tensor<5xi64>
  return %0 : tensor<5xi64>
}

// A scan of memrefs (a bufferized program) is left, with its reason.
// REMARK: [Missed] LowerTMTensor | Category:fusion | Function=negative_memref | Reason="unsupported op", Remark="tm_tensor.scan is not lowered: operands that are not ranked tensors (a bufferized scan)"
// CHECK-LABEL: func.func @negative_memref
// CHECK: tm_tensor.scan dimension(0) inclusive(true) ins(%{{.*}} : memref<4xi64>) outs(%{{.*}}, %{{.*}} : memref<4xi64>, memref<i64>)
func.func @negative_memref(%x: memref<4xi64>, %out: memref<4xi64>, %acc: memref<i64>) {
  tm_tensor.scan dimension(0) inclusive(true) ins(%x : memref<4xi64>) outs(%out, %acc : memref<4xi64>, memref<i64>) {
  ^bb0(%arg1: i64, %arg2: i64):
    %s = arith.addi %arg1, %arg2 : i64
    tm_tensor.yield %s : i64
  }
  return
}
