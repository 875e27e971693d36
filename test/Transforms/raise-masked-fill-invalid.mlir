// RUN: fusion-opt %s --fusion-raise-masked-fill --remarks-filter=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: not fusion-opt %s --fusion-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPE
// NOT-A-PROGRAM for test/Pipeline/every-program.test: the modulo by zero
// below is invalid input; the pipeline rejects it with upstream's
// diagnostic (checked here), after fusion-raise-masked-fill declined it.

// PIPE: error: modulo by non-positive value is not supported

// Indices computed by an affine.apply whose symbol is zero (a division by
// zero): the evaluator stops with the reason instead of dividing.
// REMARK: [Missed] RaiseMaskedFill | Category:fusion | Function=negative_division_by_zero | Reason="not evaluable", Remark="this overwriting tm_tensor.scatter stays: not evaluable: a division by zero or a negative value ('affine.apply')"
#mod_sym = affine_map<(d0)[s0] -> (d0 mod s0)>
func.func @negative_division_by_zero(%x: tensor<4xf32>, %m: tensor<4xi1>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : index
  %e = tensor.empty() : tensor<4x1xi64>
  %idx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<4xi1>) outs(%e : tensor<4x1xi64>) {
  ^bb0(%in: i1, %out: i64):
    %i = linalg.index 0 : index
    %j = affine.apply #mod_sym(%i)[%z]
    %k = arith.index_cast %j : index to i64
    linalg.yield %k : i64
  } -> tensor<4x1xi64>
  %cst = arith.constant dense<1.0> : tensor<4xf32>
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%cst, %idx : tensor<4xf32>, tensor<4x1xi64>) outs(%x : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    tm_tensor.yield %a : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
