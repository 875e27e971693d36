// RUN: fusion-opt %s --fusion-raise-masked-fill --remarks-filter=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: not fusion-opt %s --split-input-file --fusion-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: fusion-opt %s --fusion-raise-masked-fill | FileCheck %s
// NOT-A-PROGRAM for test/Pipeline/every-program.test: the modulo by zero
// below is invalid input; the pipeline rejects it with upstream's
// diagnostic (checked here), after fusion-raise-masked-fill declined it;
// and a bufferized tm_tensor.scan has no lowering.

// PIPE: error: modulo by non-positive value is not supported
// PIPE: error: ops with unknown memory side effects are not supported

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

// -----

// A function whose masked fill is raised keeps its bufferized (memref)
// tm_tensor.scan: it has no results, but writes its operands.
// REMARK: [Passed] RaiseMaskedFill | Category:fusion | Function=keeps_memref_scan
// CHECK-LABEL: func.func @keeps_memref_scan
// CHECK: arith.select
// CHECK: tm_tensor.scan dimension(0) inclusive(true) ins(%{{.*}} : memref<4xi64>)
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0) -> (d0)>
#map4 = affine_map<(d0) -> (d0, 0)>
#map5 = affine_map<(d0) -> ()>
#map6 = affine_map<(d0, d1) -> (d0, 0)>
#map7 = affine_map<(d0, d1) -> (0, d1)>
#map8 = affine_map<(d0, d1) -> (d1)>
#map9 = affine_map<(d0, d1, d2) -> ()>
#map10 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
func.func @keeps_memref_scan(%arg0: tensor<4x2x1xf32>, %mi: memref<4xi64>, %mo: memref<4xi64>, %ma: memref<i64>) -> tensor<4x2x1xf32> {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 0xFF80 : bf16
    %c-1 = arith.constant -1 : index
    %cst_1 = arith.constant dense<0x7FC00000> : tensor<f32>
    %c524288_i32 = arith.constant 524288 : i32
    %c-8388608_i32 = arith.constant -8388608 : i32
    %c2 = arith.constant 2 : index
    %c255_i32 = arith.constant 255 : i32
    %c-127_i32 = arith.constant -127 : i32
    %c128_i32 = arith.constant 128 : i32
    %cst_2 = arith.constant 1.17549435E-38 : f32
    %c127_i32 = arith.constant 127 : i32
    %c8_i32 = arith.constant 8 : i32
    %c1_i64 = arith.constant 1 : i64
    %c8 = arith.constant 8 : index
    %c0_i64 = arith.constant 0 : i64
    %cst_3 = arith.constant dense<-1> : tensor<i8>
    %cst_4 = arith.constant dense<23> : tensor<i32>
    %cst_5 = arith.constant dense<0> : tensor<8xi64>
    %cst_6 = arith.constant dense<[4, 2, 1]> : tensor<3xi64>
    %cst_7 = arith.constant dense<1> : tensor<1xi64>
  %17 = tensor.empty() : tensor<4x2x1xi1>
  %18 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %arg0 : tensor<4x2x1xf32>, tensor<4x2x1xf32>) outs(%17 : tensor<4x2x1xi1>) {
  ^bb0(%in: f32, %in_25: f32, %out: i1):
    %91 = arith.cmpf une, %in, %in_25 : f32
    linalg.yield %91 : i1
  } -> tensor<4x2x1xi1>
    %collapsed = tensor.collapse_shape %18 [[0, 1, 2]] : tensor<4x2x1xi1> into tensor<8xi1>
    %24 = tensor.empty() : tensor<8xi64>
    %25 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel"]} ins(%collapsed : tensor<8xi1>) outs(%24 : tensor<8xi64>) {
    ^bb0(%in: i1, %out: i64):
      %91 = arith.extui %in : i1 to i64
      linalg.yield %91 : i64
    } -> tensor<8xi64>
    %26 = linalg.fill ins(%c0_i64 : i64) outs(%24 : tensor<8xi64>) -> tensor<8xi64>
    %27 = tensor.empty() : tensor<i64>
    %28 = linalg.fill ins(%c0_i64 : i64) outs(%27 : tensor<i64>) -> tensor<i64>
    %29:2 = tm_tensor.scan dimension(0) inclusive(true) ins(%25 : tensor<8xi64>) outs(%26, %28 : tensor<8xi64>, tensor<i64>) {
    ^bb0(%arg1: i64, %arg2: i64):
      %91 = arith.addi %arg1, %arg2 : i64
      tm_tensor.yield %91 : i64
    } -> tensor<8xi64>, tensor<i64>
    %30 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel"]} ins(%29#0 : tensor<8xi64>) outs(%24 : tensor<8xi64>) {
    ^bb0(%in: i64, %out: i64):
      %91 = arith.subi %in, %c1_i64 : i64
      linalg.yield %91 : i64
    } -> tensor<8xi64>
    %31 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel"]} ins(%30 : tensor<8xi64>) outs(%24 : tensor<8xi64>) {
    ^bb0(%in: i64, %out: i64):
      %91 = arith.maxsi %in, %c0_i64 : i64
      linalg.yield %91 : i64
    } -> tensor<8xi64>
    %32 = linalg.generic {indexing_maps = [#map3], iterator_types = ["parallel"]} outs(%24 : tensor<8xi64>) {
    ^bb0(%out: i64):
      %91 = linalg.index 0 : index
      %92 = arith.index_cast %91 : index to i64
      linalg.yield %92 : i64
    } -> tensor<8xi64>
    %33 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel"]} ins(%32, %25 : tensor<8xi64>, tensor<8xi64>) outs(%24 : tensor<8xi64>) {
    ^bb0(%in: i64, %in_25: i64, %out: i64):
      %91 = arith.muli %in, %in_25 : i64
      linalg.yield %91 : i64
    } -> tensor<8xi64>
    %34 = tensor.empty() : tensor<8x1xi64>
    %35 = linalg.fill ins(%c0_i64 : i64) outs(%34 : tensor<8x1xi64>) -> tensor<8x1xi64>
    %36:2 = linalg.generic {indexing_maps = [#map4, #map3], iterator_types = ["parallel"]} outs(%35, %26 : tensor<8x1xi64>, tensor<8xi64>) {
    ^bb0(%out: i64, %out_25: i64):
      %91 = linalg.index 0 : index
      %92 = arith.remsi %91, %c8 : index
      %extracted_26 = tensor.extract %31[%92] : tensor<8xi64>
      %extracted_27 = tensor.extract %33[%92] : tensor<8xi64>
      linalg.yield %extracted_26, %extracted_27 : i64, i64
    } -> (tensor<8x1xi64>, tensor<8xi64>)
    %37 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(false) ins(%36#1, %36#0 : tensor<8xi64>, tensor<8x1xi64>) outs(%cst_5 : tensor<8xi64>) {
    ^bb0(%arg1: i64, %arg2: i64):
      %91 = arith.addi %arg2, %arg1 : i64
      tm_tensor.yield %91 : i64
    } -> tensor<8xi64>
    %38 = linalg.generic {indexing_maps = [#map3, #map5], iterator_types = ["reduction"]} ins(%25 : tensor<8xi64>) outs(%28 : tensor<i64>) {
    ^bb0(%in: i64, %out: i64):
      %91 = arith.addi %in, %out : i64
      linalg.yield %91 : i64
    } -> tensor<i64>
    %extracted = tensor.extract %38[] : tensor<i64>
    %39 = arith.index_cast %extracted : i64 to index
    %40 = arith.cmpi slt, %39, %c0 : index
    %41 = arith.addi %39, %c8 : index
    %42 = arith.select %40, %41, %39 : index
    %43 = arith.cmpi slt, %42, %c0 : index
    %44 = arith.select %43, %c-1, %42 : index
    %45 = arith.minsi %44, %c8 : index
    %46 = arith.maxsi %45, %c0 : index
    %extracted_slice = tensor.extract_slice %37[0] [%46] [1] : tensor<8xi64> to tensor<?xi64>
    %47 = tensor.empty() : tensor<3xi64>
    %48 = linalg.fill ins(%c0_i64 : i64) outs(%47 : tensor<3xi64>) -> tensor<3xi64>
    %49 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel"]} ins(%cst_6 : tensor<3xi64>) outs(%48 : tensor<3xi64>) {
    ^bb0(%in: i64, %out: i64):
      %91 = linalg.index 0 : index
      %92 = arith.subi %c2, %91 : index
      %extracted_25 = tensor.extract %cst_6[%92] : tensor<3xi64>
      linalg.yield %extracted_25 : i64
    } -> tensor<3xi64>
    %50 = linalg.fill ins(%c1_i64 : i64) outs(%47 : tensor<3xi64>) -> tensor<3xi64>
    %51 = linalg.fill ins(%c1_i64 : i64) outs(%27 : tensor<i64>) -> tensor<i64>
    %52:2 = tm_tensor.scan dimension(0) inclusive(true) ins(%49 : tensor<3xi64>) outs(%50, %51 : tensor<3xi64>, tensor<i64>) {
    ^bb0(%arg1: i64, %arg2: i64):
      %91 = arith.muli %arg1, %arg2 : i64
      tm_tensor.yield %91 : i64
    } -> tensor<3xi64>, tensor<i64>
    %53 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel"]} ins(%52#0 : tensor<3xi64>) outs(%48 : tensor<3xi64>) {
    ^bb0(%in: i64, %out: i64):
      %91 = linalg.index 0 : index
      %92 = arith.subi %c2, %91 : index
      %extracted_25 = tensor.extract %52#0[%92] : tensor<3xi64>
      linalg.yield %extracted_25 : i64
    } -> tensor<3xi64>
    %extracted_slice_9 = tensor.extract_slice %53[1] [2] [1] : tensor<3xi64> to tensor<2xi64>
    %concat = tensor.concat dim(0) %extracted_slice_9, %cst_7 : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
    %expanded_10 = tensor.expand_shape %extracted_slice [[0, 1]] output_shape [%46, 1] : tensor<?xi64> into tensor<?x1xi64>
    %expanded_11 = tensor.expand_shape %concat [[0, 1]] output_shape [1, 3] : tensor<3xi64> into tensor<1x3xi64>
    %54 = tensor.empty(%46) : tensor<?x3xi64>
    %55 = linalg.generic {indexing_maps = [#map6, #map7, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded_10, %expanded_11 : tensor<?x1xi64>, tensor<1x3xi64>) outs(%54 : tensor<?x3xi64>) {
    ^bb0(%in: i64, %in_25: i64, %out: i64):
      %91 = arith.sitofp %in : i64 to f64
      %92 = arith.sitofp %in_25 : i64 to f64
      %93 = arith.divf %91, %92 : f64
      %94 = math.floor %93 : f64
      %95 = arith.fptosi %94 : f64 to i64
      linalg.yield %95 : i64
    } -> tensor<?x3xi64>
    %56 = linalg.generic {indexing_maps = [#map, #map8, #map], iterator_types = ["parallel", "parallel"]} ins(%55, %cst_6 : tensor<?x3xi64>, tensor<3xi64>) outs(%54 : tensor<?x3xi64>) {
    ^bb0(%in: i64, %in_25: i64, %out: i64):
      %91 = arith.remsi %in, %in_25 : i64
      %92 = arith.cmpi ne, %91, %c0_i64 : i64
      %93 = arith.cmpi slt, %in_25, %c0_i64 : i64
      %94 = arith.cmpi slt, %91, %c0_i64 : i64
      %95 = arith.xori %93, %94 : i1
      %96 = arith.andi %92, %95 : i1
      %97 = arith.addi %91, %in_25 : i64
      %98 = arith.select %96, %97, %91 : i64
      linalg.yield %98 : i64
    } -> tensor<?x3xi64>
    %extracted_slice_12 = tensor.extract_slice %56[0, 0] [%46, 1] [1, 1] : tensor<?x3xi64> to tensor<?x1xi64>
    %collapsed_13 = tensor.collapse_shape %extracted_slice_12 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
    %extracted_slice_14 = tensor.extract_slice %56[0, 1] [%46, 1] [1, 1] : tensor<?x3xi64> to tensor<?x1xi64>
    %collapsed_15 = tensor.collapse_shape %extracted_slice_14 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
    %extracted_slice_16 = tensor.extract_slice %56[0, 2] [%46, 1] [1, 1] : tensor<?x3xi64> to tensor<?x1xi64>
    %collapsed_17 = tensor.collapse_shape %extracted_slice_16 [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
    %57 = arith.index_cast %46 : index to i64
    %58 = arith.maxsi %57, %c1_i64 : i64
    %59 = arith.maxsi %57, %58 : i64
    %60 = arith.maxsi %57, %59 : i64
    %61 = arith.cmpi sge, %60, %c0_i64 : i64
    cf.assert %61, "negative values not allowed in new dimensions"
    %62 = arith.index_cast %60 : i64 to index
    %63 = tensor.empty(%62) : tensor<?xf32>
    %64 = linalg.generic {indexing_maps = [#map5, #map3], iterator_types = ["parallel"]} ins(%cst_1 : tensor<f32>) outs(%63 : tensor<?xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<?xf32>
    cf.assert %61, "unimplemented: dynamic negative broadcast sizes"
    %65 = tensor.empty(%62) : tensor<?xi64>
    %66 = linalg.generic {indexing_maps = [#map3], iterator_types = ["parallel"]} outs(%65 : tensor<?xi64>) {
    ^bb0(%out: i64):
      %91 = linalg.index 0 : index
      %92 = arith.cmpi eq, %46, %c1 : index
      %93 = arith.select %92, %c0, %91 : index
      %extracted_25 = tensor.extract %collapsed_13[%93] : tensor<?xi64>
      linalg.yield %extracted_25 : i64
    } -> tensor<?xi64>
    cf.assert %61, "unimplemented: dynamic negative broadcast sizes"
    %67 = linalg.generic {indexing_maps = [#map3], iterator_types = ["parallel"]} outs(%65 : tensor<?xi64>) {
    ^bb0(%out: i64):
      %91 = linalg.index 0 : index
      %92 = arith.cmpi eq, %46, %c1 : index
      %93 = arith.select %92, %c0, %91 : index
      %extracted_25 = tensor.extract %collapsed_15[%93] : tensor<?xi64>
      linalg.yield %extracted_25 : i64
    } -> tensor<?xi64>
    cf.assert %61, "unimplemented: dynamic negative broadcast sizes"
    %68 = linalg.generic {indexing_maps = [#map3], iterator_types = ["parallel"]} outs(%65 : tensor<?xi64>) {
    ^bb0(%out: i64):
      %91 = linalg.index 0 : index
      %92 = arith.cmpi eq, %46, %c1 : index
      %93 = arith.select %92, %c0, %91 : index
      %extracted_25 = tensor.extract %collapsed_17[%93] : tensor<?xi64>
      linalg.yield %extracted_25 : i64
    } -> tensor<?xi64>
    %expanded_18 = tensor.expand_shape %66 [[0, 1]] output_shape [%62, 1] : tensor<?xi64> into tensor<?x1xi64>
    %expanded_19 = tensor.expand_shape %67 [[0, 1]] output_shape [%62, 1] : tensor<?xi64> into tensor<?x1xi64>
    %expanded_20 = tensor.expand_shape %68 [[0, 1]] output_shape [%62, 1] : tensor<?xi64> into tensor<?x1xi64>
    %concat_21 = tensor.concat dim(1) %expanded_18, %expanded_19, %expanded_20 : (tensor<?x1xi64>, tensor<?x1xi64>, tensor<?x1xi64>) -> tensor<?x3xi64>
    %expanded_22 = tensor.expand_shape %64 [[0, 1, 2, 3]] output_shape [%62, 1, 1, 1] : tensor<?xf32> into tensor<?x1x1x1xf32>
    %69 = tm_tensor.scatter {dimension_map = array<i64: 0, 1, 2>} unique_indices(true) ins(%expanded_22, %concat_21 : tensor<?x1x1x1xf32>, tensor<?x3xi64>) outs(%arg0 : tensor<4x2x1xf32>) {
    ^bb0(%arg1: f32, %arg2: f32):
      tm_tensor.yield %arg1 : f32
    } -> tensor<4x2x1xf32>
  tm_tensor.scan dimension(0) inclusive(true) ins(%mi : memref<4xi64>) outs(%mo, %ma : memref<4xi64>, memref<i64>) {
  ^bb0(%s0: i64, %s1: i64):
    %ss = arith.addi %s0, %s1 : i64
    tm_tensor.yield %ss : i64
  }
  return %69 : tensor<4x2x1xf32>
}
