// RUN: fusion-opt %s --fusion-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// tm_tensor.scan and tm_tensor.scatter (torch-mlir's syntax) through the
// whole pipeline (fusion-lower-tm-tensor writes them out as loops), with
// the values torch computes for the same operations.

func.func private @printMemrefI64(memref<*xi64>)
func.func private @printMemrefF32(memref<*xf32>)

func.func @print_i64(%t: tensor<*xi64>) {
  %m = bufferization.to_buffer %t : tensor<*xi64> to memref<*xi64>
  call @printMemrefI64(%m) : (memref<*xi64>) -> ()
  return
}
func.func @print_f32(%t: tensor<*xf32>) {
  %m = bufferization.to_buffer %t : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : i64
  // torch.cumsum([3, 1, 4, 1, 5, 9]) = [3, 4, 8, 9, 14, 23]; the
  // accumulator ends at 23.
  %x = arith.constant dense<[3, 1, 4, 1, 5, 9]> : tensor<6xi64>
  %e = tensor.empty() : tensor<6xi64>
  %out = linalg.fill ins(%c0 : i64) outs(%e : tensor<6xi64>) -> tensor<6xi64>
  %e0 = tensor.empty() : tensor<i64>
  %acc = linalg.fill ins(%c0 : i64) outs(%e0 : tensor<i64>) -> tensor<i64>
  %s:2 = tm_tensor.scan dimension(0) inclusive(true) ins(%x : tensor<6xi64>) outs(%out, %acc : tensor<6xi64>, tensor<i64>) {
  ^bb0(%arg1: i64, %arg2: i64):
    %a = arith.addi %arg1, %arg2 : i64
    tm_tensor.yield %a : i64
  } -> tensor<6xi64>, tensor<i64>
  // CHECK: [3,  4,  8,  9,  14,  23]
  // CHECK: [23]
  %u0 = tensor.cast %s#0 : tensor<6xi64> to tensor<*xi64>
  call @print_i64(%u0) : (tensor<*xi64>) -> ()
  %u1 = tensor.cast %s#1 : tensor<i64> to tensor<*xi64>
  call @print_i64(%u1) : (tensor<*xi64>) -> ()

  // Exclusive cumprod along rows, starting from the accumulator [1, 2]:
  // [[1, 2, 6, 24], [2, 10, 60, 420]]... of x = [[2, 3, 4, 5], [5, 6, 7, 8]]:
  // row 0: 1, 1*2, 2*3, 6*4 = [1, 2, 6, 24]; row 1: 2, 2*5, 10*6, 60*7.
  %y = arith.constant dense<[[2.0, 3.0, 4.0, 5.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %ya = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %ye = tensor.empty() : tensor<2x4xf32>
  %p:2 = tm_tensor.scan dimension(1) inclusive(false) ins(%y : tensor<2x4xf32>) outs(%ye, %ya : tensor<2x4xf32>, tensor<2xf32>) {
  ^bb0(%arg1: f32, %arg2: f32):
    %m = arith.mulf %arg1, %arg2 : f32
    tm_tensor.yield %m : f32
  } -> tensor<2x4xf32>, tensor<2xf32>
  // CHECK: [1,   2,   6,   24]
  // CHECK: [2,   10,   60,   420]
  // CHECK: [24,  420]
  %v0 = tensor.cast %p#0 : tensor<2x4xf32> to tensor<*xf32>
  call @print_f32(%v0) : (tensor<*xf32>) -> ()
  %v1 = tensor.cast %p#1 : tensor<2xf32> to tensor<*xf32>
  call @print_f32(%v1) : (tensor<*xf32>) -> ()

  // x[mask] = 7 on a [4, 2, 1] tensor of zeros at (0, 1, 0), (3, 0, 0) and
  // an index past the tensor (9, 0, 0), which is skipped.
  %z = arith.constant dense<0.0> : tensor<4x2x1xf32>
  %idx = arith.constant dense<[[0, 1, 0], [9, 0, 0], [3, 0, 0]]> : tensor<3x3xi64>
  %upd = arith.constant dense<7.0> : tensor<3x1x1x1xf32>
  %w = tm_tensor.scatter {dimension_map = array<i64: 0, 1, 2>} unique_indices(true) ins(%upd, %idx : tensor<3x1x1x1xf32>, tensor<3x3xi64>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%arg1: f32, %arg2: f32):
    tm_tensor.yield %arg1 : f32
  } -> tensor<4x2x1xf32>
  // CHECK: {{\[\[}}[0],
  // CHECK-NEXT: [7]],
  // CHECK-NEXT: {{\[\[}}0],
  // CHECK-NEXT: [0]],
  // CHECK-NEXT: {{\[\[}}0],
  // CHECK-NEXT: [0]],
  // CHECK-NEXT: {{\[\[}}7],
  // CHECK-NEXT: [0]]]
  %wu = tensor.cast %w : tensor<4x2x1xf32> to tensor<*xf32>
  call @print_f32(%wu) : (tensor<*xf32>) -> ()

  // Scatter-add of [1, 2, 3, 4] at positions [4, 0, 4, 2] into [10, 10,
  // 10, 10, 10]: [12, 10, 14, 10, 14].
  %d = arith.constant dense<10> : tensor<5xi64>
  %ai = arith.constant dense<[[4], [0], [4], [2]]> : tensor<4x1xi32>
  %au = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %sa = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%au, %ai : tensor<4xi64>, tensor<4x1xi32>) outs(%d : tensor<5xi64>) {
  ^bb0(%arg1: i64, %arg2: i64):
    %a = arith.addi %arg2, %arg1 : i64
    tm_tensor.yield %a : i64
  } -> tensor<5xi64>
  // CHECK: [12,  10,  14,  10,  14]
  %su = tensor.cast %sa : tensor<5xi64> to tensor<*xi64>
  call @print_i64(%su) : (tensor<*xi64>) -> ()
  return
}
