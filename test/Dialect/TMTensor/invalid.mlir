// RUN: fusion-opt %s -split-input-file -verify-diagnostics
// NOT-A-PROGRAM for test/Pipeline/every-program.test: every op here is
// invalid on purpose.

// The verifiers of the tm_tensor subset (lib/Dialect/TMTensor): each
// malformed scan or scatter is an error that names what is wrong.

func.func @scan_one_output(%x: tensor<4xi64>, %o: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @below {{expects one input and two outputs (the scanned tensor and the accumulator)}}
  %0 = tm_tensor.scan dimension(0) inclusive(true) ins(%x : tensor<4xi64>) outs(%o : tensor<4xi64>) {
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    tm_tensor.yield %s : i64
  } -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @scan_bad_dimension(%x: tensor<4xi64>, %o: tensor<4xi64>, %acc: tensor<i64>) -> tensor<4xi64> {
  // expected-error @below {{expects a dimension of the input}}
  %0:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%x : tensor<4xi64>) outs(%o, %acc : tensor<4xi64>, tensor<i64>) {
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    tm_tensor.yield %s : i64
  } -> tensor<4xi64>, tensor<i64>
  return %0#0 : tensor<4xi64>
}

// -----

func.func @scan_accumulator_rank(%x: tensor<4xi64>, %o: tensor<4xi64>, %acc: tensor<1xi64>) -> tensor<4xi64> {
  // expected-error @below {{expects an output of the input's shape and an accumulator of one rank less, of its element type}}
  %0:2 = tm_tensor.scan dimension(0) inclusive(true) ins(%x : tensor<4xi64>) outs(%o, %acc : tensor<4xi64>, tensor<1xi64>) {
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    tm_tensor.yield %s : i64
  } -> tensor<4xi64>, tensor<1xi64>
  return %0#0 : tensor<4xi64>
}

// -----

func.func @scan_accumulator_sizes(%x: tensor<2x4xi64>, %o: tensor<2x4xi64>, %acc: tensor<3xi64>) -> tensor<2x4xi64> {
  // expected-error @below {{expects the accumulator's sizes to be the input's without the scanned dimension}}
  %0:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%x : tensor<2x4xi64>) outs(%o, %acc : tensor<2x4xi64>, tensor<3xi64>) {
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    tm_tensor.yield %s : i64
  } -> tensor<2x4xi64>, tensor<3xi64>
  return %0#0 : tensor<2x4xi64>
}

// -----

func.func @scan_results(%x: tensor<4xi64>, %o: tensor<4xi64>, %acc: tensor<i64>) -> tensor<4xi64> {
  // expected-error @below {{expects ranked tensor outputs with results of their types, or memref outputs and no results}}
  %0 = tm_tensor.scan dimension(0) inclusive(true) ins(%x : tensor<4xi64>) outs(%o, %acc : tensor<4xi64>, tensor<i64>) {
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    tm_tensor.yield %s : i64
  } -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @scan_body(%x: tensor<4xi64>, %o: tensor<4xi64>, %acc: tensor<i64>) -> tensor<4xi64> {
  // expected-error @below {{expects the body to yield one 'i64'}}
  %0:2 = tm_tensor.scan dimension(0) inclusive(true) ins(%x : tensor<4xi64>) outs(%o, %acc : tensor<4xi64>, tensor<i64>) {
  ^bb0(%a: i64, %b: i64):
    %c = arith.constant 1 : i32
    tm_tensor.yield %c : i32
  } -> tensor<4xi64>, tensor<i64>
  return %0#0 : tensor<4xi64>
}

// -----

func.func @scatter_indices(%d: tensor<5xi64>, %i: tensor<4x2xi32>, %u: tensor<4xi64>) -> tensor<5xi64> {
  // expected-error @below {{expects [N, D] integer indices with D static and equal to the dimension map's size}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%u, %i : tensor<4xi64>, tensor<4x2xi32>) outs(%d : tensor<5xi64>) {
  ^bb0(%a: i64, %b: i64):
    tm_tensor.yield %a : i64
  } -> tensor<5xi64>
  return %0 : tensor<5xi64>
}

// -----

func.func @scatter_dimension_map(%d: tensor<5xi64>, %i: tensor<4x1xi32>, %u: tensor<4xi64>) -> tensor<5xi64> {
  // expected-error @below {{expects distinct dimensions of the original in the dimension map}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 1>} unique_indices(false) ins(%u, %i : tensor<4xi64>, tensor<4x1xi32>) outs(%d : tensor<5xi64>) {
  ^bb0(%a: i64, %b: i64):
    tm_tensor.yield %a : i64
  } -> tensor<5xi64>
  return %0 : tensor<5xi64>
}

// -----

func.func @scatter_coverage(%d: tensor<5x3xi64>, %i: tensor<4x1xi32>, %u: tensor<4xi64>) -> tensor<5x3xi64> {
  // expected-error @below {{expects the indices and the update's dimensions to cover the original's}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%u, %i : tensor<4xi64>, tensor<4x1xi32>) outs(%d : tensor<5x3xi64>) {
  ^bb0(%a: i64, %b: i64):
    tm_tensor.yield %a : i64
  } -> tensor<5x3xi64>
  return %0 : tensor<5x3xi64>
}

// -----

func.func @scatter_element_types(%d: tensor<5xi64>, %i: tensor<4x1xi32>, %u: tensor<4xi32>) -> tensor<5xi64> {
  // expected-error @below {{expects updates of the original's element type}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%u, %i : tensor<4xi32>, tensor<4x1xi32>) outs(%d : tensor<5xi64>) {
  ^bb0(%a: i64, %b: i64):
    tm_tensor.yield %a : i64
  } -> tensor<5xi64>
  return %0 : tensor<5xi64>
}

// -----

func.func @scatter_body_arguments(%d: tensor<5xi64>, %i: tensor<4x1xi32>, %u: tensor<4xi64>) -> tensor<5xi64> {
  // expected-error @below {{expects a body of two 'i64' arguments}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%u, %i : tensor<4xi64>, tensor<4x1xi32>) outs(%d : tensor<5xi64>) {
  ^bb0(%a: i64):
    tm_tensor.yield %a : i64
  } -> tensor<5xi64>
  return %0 : tensor<5xi64>
}

// -----

func.func @scatter_two_outputs(%d: tensor<5xi64>, %i: tensor<4x1xi32>, %u: tensor<4xi64>) -> (tensor<5xi64>, tensor<5xi64>) {
  // expected-error @below {{expects two inputs (updates, indices) and one output}}
  %0:2 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%u, %i : tensor<4xi64>, tensor<4x1xi32>) outs(%d, %d : tensor<5xi64>, tensor<5xi64>) {
  ^bb0(%a: i64, %b: i64):
    tm_tensor.yield %a : i64
  } -> tensor<5xi64>, tensor<5xi64>
  return %0#0, %0#1 : tensor<5xi64>, tensor<5xi64>
}
