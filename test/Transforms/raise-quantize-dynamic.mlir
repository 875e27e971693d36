// RUN: fusion-opt %s "--fusion-raise-quantize=saturating-casts=1 wrapping-int-casts=1 finite-inputs=1" | FileCheck %s
// RUN: fusion-opt %s "--fusion-raise-quantize=saturating-casts=1 wrapping-int-casts=1 finite-inputs=1" --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --fusion-pipeline=frontend=torch -o /dev/null

// fusion-raise-quantize with dynamic sizes: torch-mlir's output for SiLU
// then torchao's to_mx (RCEIL) exported with a dynamic row count
// (test/Frontend/corpus/silu_mxfp8_rceil_bf16_dyn.mlir). The check runs on a
// copy of the function with the dynamic size fixed to 4; the quantizer is
// raised with its dynamic shapes, its outputs sized from the input's
// producer (no tensor.dim of the activation), and the sizes the IR took
// from its intermediates resolved so that they die.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: %[[Q:.*]]:2 = fusion.quantize %{{.*}} as quant<mxfp8_e4m3, rowwise, zero_scale = one> outs({{.*}}) : (tensor<?x64xbf16>, tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>)
// CHECK-NOT: math.log2
// CHECK: return %[[Q]]#0, %[[Q]]#1
//
// The same quantizer but for rows from the fifth on (linalg.index): exact
// on the copy's 4 rows, not on every size, so declined.
// CHECK-LABEL: func.func @negative_position
// CHECK-NOT: fusion.quantize
// CHECK: return
//
// A per-tensor FP8 quantizer with a dynamic row count is raised. A dynamic
// last dimension is fixed to 256 in the copy, and the quantizer raised only
// if a second copy with 384 gives the same scheme: per tensor, yes; FP8
// with one scale per row (1 x N: the block follows the dimension), no.
// CHECK-LABEL: func.func @dynamic_rows_per_tensor
// CHECK: fusion.quantize %arg0 as quant<fp8_e4m3, rowwise, epsilon = 1.0e-12> outs({{.*}}) : (tensor<?x64xf32>, tensor<?x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
// CHECK-LABEL: func.func @negative_size_value
// CHECK-NOT: fusion.quantize
// CHECK: return
// CHECK-LABEL: func.func @dynamic_columns_per_tensor
// CHECK: fusion.quantize %arg0 as quant<fp8_e4m3, rowwise, epsilon = 1.0e-12> outs({{.*}}) : (tensor<4x?xf32>, tensor<4x?xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
// CHECK-LABEL: func.func @negative_dynamic_columns_per_row
// CHECK-NOT: fusion.quantize
// CHECK: return
// The per-tensor amax of the first 256 columns only: the quantizer at 256,
// not raised at 384 (the amax no longer reads the whole input). A reshape
// into blocks of 256 columns: at 384 the copy keeps a dynamic cast, which
// the check cannot evaluate.
// CHECK-LABEL: func.func @negative_dynamic_columns_amax_of_slice
// CHECK-NOT: fusion.quantize
// CHECK: return
// CHECK-LABEL: func.func @negative_dynamic_columns_no_wide_copy
// CHECK-NOT: fusion.quantize
// CHECK: return
// An unranked argument leaves no copy with fixed sizes.
// CHECK-LABEL: func.func @negative_unranked_argument
// CHECK-NOT: fusion.quantize
// CHECK: return
// Two quantizers of one function: each checked on a copy taken after the
// other's rewrite.
// CHECK-LABEL: func.func @dynamic_two_quantizers
// CHECK-COUNT-2: fusion.quantize
// CHECK-NOT: math.absf
// CHECK: return
// The dynamic last dimension pinned by the program (a tensor.cast to 256
// on the quantizer's path): both copies see 256 and the remark says so.
// CHECK-LABEL: func.func @dynamic_columns_pinned_by_cast
// CHECK: fusion.quantize %{{.*}} as quant<fp8_e4m3, rowwise, epsilon = 1.0e-12>
// Rows quantized in blocks of 32 along a dynamic size (dim 0 through a
// transpose): the copy with that size fixed to 4 has no whole block, and
// the copies with every dynamic size 256 and 384 that then take the check
// are bounded (the check's cost is their size): 16384 columns are more
// than it takes, so the quantizer stays as written. (Programs within the
// bound: test/Frontend/corpus.test, T_DYN_COL.)
// CHECK-LABEL: func.func @negative_dynamic_rows_blocked_too_large
// CHECK-NOT: fusion.quantize
// CHECK: return

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1, d2) -> ()>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
module {
  func.func @dynamic_rows(%arg0: tensor<?x64xbf16>) -> (tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>) {
    %c255_i64 = arith.constant 255 : i64
    %c254_i64 = arith.constant 254 : i64
    %c0_i64 = arith.constant 0 : i64
    %c0 = arith.constant 0 : index
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 0xFF80 : bf16
    %cst_1 = arith.constant dense<5.87747175E-39> : tensor<f32>
    %cst_2 = arith.constant dense<1.000000e+00> : tensor<f32>
    %cst_3 = arith.constant 0x7FF0000000000000 : f64
    %cst_4 = arith.constant 4.480000e+02 : f32
    %cst_5 = arith.constant -1.270000e+02 : f32
    %cst_6 = arith.constant 1.270000e+02 : f32
    %cst_7 = arith.constant 2.000000e+00 : f32
    %cst_8 = arith.constant -4.480000e+02 : f32
    %cst_9 = arith.constant dense<-1> : tensor<i8>
    %cst_10 = arith.constant dense<-2> : tensor<i8>
    %cst_11 = arith.constant dense<127> : tensor<i64>
    %dim = tensor.dim %arg0, %c0 : tensor<?x64xbf16>
    %0 = tensor.empty(%dim) : tensor<?x64xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<?x64xbf16>) outs(%0 : tensor<?x64xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %44 = arith.extf %in : bf16 to f32
      linalg.yield %44 : f32
    } -> tensor<?x64xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<?x64xf32>) outs(%0 : tensor<?x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = arith.negf %in : f32
      %45 = math.exp %44 : f32
      %46 = arith.addf %45, %cst : f32
      %47 = arith.divf %cst, %46 : f32
      linalg.yield %47 : f32
    } -> tensor<?x64xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%1, %2 : tensor<?x64xf32>, tensor<?x64xf32>) outs(%0 : tensor<?x64xf32>) {
    ^bb0(%in: f32, %in_14: f32, %out: f32):
      %44 = arith.mulf %in, %in_14 : f32
      linalg.yield %44 : f32
    } -> tensor<?x64xf32>
    %4 = tensor.empty(%dim) : tensor<?x64xbf16>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<?x64xf32>) outs(%4 : tensor<?x64xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %44 = arith.truncf %in : f32 to bf16
      linalg.yield %44 : bf16
    } -> tensor<?x64xbf16>
    %expanded = tensor.expand_shape %5 [[0], [1, 2]] output_shape [%dim, 2, 32] : tensor<?x64xbf16> into tensor<?x2x32xbf16>
    %6 = tensor.empty(%dim) : tensor<?x2x32xbf16>
    %7 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<?x2x32xbf16>) outs(%6 : tensor<?x2x32xbf16>) {
    ^bb0(%in: bf16, %out: bf16):
      %44 = math.absf %in : bf16
      linalg.yield %44 : bf16
    } -> tensor<?x2x32xbf16>
    %8 = tensor.empty(%dim) : tensor<?x2xi64>
    %9 = linalg.fill ins(%c0_i64 : i64) outs(%8 : tensor<?x2xi64>) -> tensor<?x2xi64>
    %10 = tensor.empty(%dim) : tensor<?x2xbf16>
    %11 = linalg.fill ins(%cst_0 : bf16) outs(%10 : tensor<?x2xbf16>) -> tensor<?x2xbf16>
    %12:2 = linalg.generic {indexing_maps = [#map1, #map2, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%7 : tensor<?x2x32xbf16>) outs(%11, %9 : tensor<?x2xbf16>, tensor<?x2xi64>) {
    ^bb0(%in: bf16, %out: bf16, %out_14: i64):
      %44 = linalg.index 2 : index
      %45 = arith.index_cast %44 : index to i64
      %46 = arith.maximumf %in, %out : bf16
      %47 = arith.cmpf ogt, %in, %out : bf16
      %48 = arith.select %47, %45, %out_14 : i64
      linalg.yield %46, %48 : bf16, i64
    } -> (tensor<?x2xbf16>, tensor<?x2xi64>)
    %expanded_12 = tensor.expand_shape %12#0 [[0], [1, 2]] output_shape [%dim, 2, 1] : tensor<?x2xbf16> into tensor<?x2x1xbf16>
    %13 = tensor.empty(%dim) : tensor<?x2x32xf32>
    %14 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<?x2x32xbf16>) outs(%13 : tensor<?x2x32xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %44 = arith.extf %in : bf16 to f32
      linalg.yield %44 : f32
    } -> tensor<?x2x32xf32>
    %15 = tensor.empty(%dim) : tensor<?x2x1xf32>
    %16 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_12 : tensor<?x2x1xbf16>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %44 = arith.extf %in : bf16 to f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %17 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%16 : tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = arith.divf %in, %cst_4 : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %18 = tensor.empty(%dim) : tensor<?x2x1xi1>
    %19 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17, %17 : tensor<?x2x1xf32>, tensor<?x2x1xf32>) outs(%18 : tensor<?x2x1xi1>) {
    ^bb0(%in: f32, %in_14: f32, %out: i1):
      %44 = arith.cmpf une, %in, %in_14 : f32
      linalg.yield %44 : i1
    } -> tensor<?x2x1xi1>
    %20 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17 : tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = math.absf %in : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %21 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20 : tensor<?x2x1xf32>) outs(%18 : tensor<?x2x1xi1>) {
    ^bb0(%in: f32, %out: i1):
      %44 = arith.extf %in : f32 to f64
      %45 = arith.cmpf oeq, %44, %cst_3 : f64
      linalg.yield %45 : i1
    } -> tensor<?x2x1xi1>
    %22 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17 : tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = math.log2 %in : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %23 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%22 : tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = math.ceil %in : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %24 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%23 : tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = arith.cmpf ult, %in, %cst_5 : f32
      %45 = arith.select %44, %cst_5, %in : f32
      %46 = arith.cmpf ugt, %45, %cst_6 : f32
      %47 = arith.select %46, %cst_6, %45 : f32
      linalg.yield %47 : f32
    } -> tensor<?x2x1xf32>
    %25 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%24 : tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = arith.addf %in, %cst_6 : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %26 = tensor.empty(%dim) : tensor<?x2x1xi8>
    %27 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%25 : tensor<?x2x1xf32>) outs(%26 : tensor<?x2x1xi8>) {
    ^bb0(%in: f32, %out: i8):
      %44 = arith.fptosi %in : f32 to i8
      linalg.yield %44 : i8
    } -> tensor<?x2x1xi8>
    %28 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%21, %cst_10, %27 : tensor<?x2x1xi1>, tensor<i8>, tensor<?x2x1xi8>) outs(%26 : tensor<?x2x1xi8>) {
    ^bb0(%in: i1, %in_14: i8, %in_15: i8, %out: i8):
      %44 = arith.select %in, %in_14, %in_15 : i8
      linalg.yield %44 : i8
    } -> tensor<?x2x1xi8>
    %29 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19, %cst_9, %28 : tensor<?x2x1xi1>, tensor<i8>, tensor<?x2x1xi8>) outs(%26 : tensor<?x2x1xi8>) {
    ^bb0(%in: i1, %in_14: i8, %in_15: i8, %out: i8):
      %44 = arith.select %in, %in_14, %in_15 : i8
      linalg.yield %44 : i8
    } -> tensor<?x2x1xi8>
    %30 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<?x2x1xi8>) outs(%18 : tensor<?x2x1xi1>) {
    ^bb0(%in: i8, %out: i1):
      %44 = arith.extsi %in : i8 to i64
      %45 = arith.cmpi eq, %44, %c255_i64 : i64
      linalg.yield %45 : i1
    } -> tensor<?x2x1xi1>
    %31 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<?x2x1xi8>) outs(%18 : tensor<?x2x1xi1>) {
    ^bb0(%in: i8, %out: i1):
      %44 = arith.extsi %in : i8 to i64
      %45 = arith.cmpi eq, %44, %c254_i64 : i64
      linalg.yield %45 : i1
    } -> tensor<?x2x1xi1>
    %32 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<?x2x1xi8>) outs(%18 : tensor<?x2x1xi1>) {
    ^bb0(%in: i8, %out: i1):
      %44 = arith.extsi %in : i8 to i64
      %45 = arith.cmpi eq, %44, %c0_i64 : i64
      linalg.yield %45 : i1
    } -> tensor<?x2x1xi1>
    %33 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<?x2x1xi8>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: i8, %out: f32):
      %44 = arith.uitofp %in : i8 to f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %34 = linalg.generic {indexing_maps = [#map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_11, %33 : tensor<i64>, tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: i64, %in_14: f32, %out: f32):
      %44 = arith.sitofp %in : i64 to f32
      %45 = arith.subf %44, %in_14 : f32
      linalg.yield %45 : f32
    } -> tensor<?x2x1xf32>
    %35 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%34 : tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = math.powf %cst_7, %in : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %36 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%32, %cst_2, %35 : tensor<?x2x1xi1>, tensor<f32>, tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: i1, %in_14: f32, %in_15: f32, %out: f32):
      %44 = arith.select %in, %in_14, %in_15 : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %37 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%31, %cst_1, %36 : tensor<?x2x1xi1>, tensor<f32>, tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: i1, %in_14: f32, %in_15: f32, %out: f32):
      %44 = arith.select %in, %in_14, %in_15 : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %38 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%30, %17, %37 : tensor<?x2x1xi1>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: i1, %in_14: f32, %in_15: f32, %out: f32):
      %44 = arith.select %in, %in_14, %in_15 : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %39 = linalg.generic {indexing_maps = [#map1, #map4, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14, %38 : tensor<?x2x32xf32>, tensor<?x2x1xf32>) outs(%13 : tensor<?x2x32xf32>) {
    ^bb0(%in: f32, %in_14: f32, %out: f32):
      %44 = arith.mulf %in, %in_14 : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x32xf32>
    %40 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%39 : tensor<?x2x32xf32>) outs(%13 : tensor<?x2x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = arith.cmpf ult, %in, %cst_8 : f32
      %45 = arith.select %44, %cst_8, %in : f32
      %46 = arith.cmpf ugt, %45, %cst_4 : f32
      %47 = arith.select %46, %cst_4, %45 : f32
      linalg.yield %47 : f32
    } -> tensor<?x2x32xf32>
    %41 = tensor.empty(%dim) : tensor<?x2x32xf8E4M3FN>
    // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<mxfp8_e4m3, rowwise, zero_scale = one> (assuming finite inputs) (dynamic sizes: checked with each dynamic size fixed to 4)"}}
    %42 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%40 : tensor<?x2x32xf32>) outs(%41 : tensor<?x2x32xf8E4M3FN>) {
    ^bb0(%in: f32, %out: f8E4M3FN):
      %44 = arith.truncf %in : f32 to f8E4M3FN
      linalg.yield %44 : f8E4M3FN
    } -> tensor<?x2x32xf8E4M3FN>
    %collapsed = tensor.collapse_shape %42 [[0], [1, 2]] : tensor<?x2x32xf8E4M3FN> into tensor<?x64xf8E4M3FN>
    %43 = tensor.bitcast %29 : tensor<?x2x1xi8> to tensor<?x2x1xf8E8M0FNU>
    %collapsed_13 = tensor.collapse_shape %43 [[0], [1, 2]] : tensor<?x2x1xf8E8M0FNU> into tensor<?x2xf8E8M0FNU>
    return %collapsed, %collapsed_13 : tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>
  }
  func.func @negative_position(%arg0: tensor<?x64xbf16>) -> (tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>) {
    %c255_i64 = arith.constant 255 : i64
    %c254_i64 = arith.constant 254 : i64
    %c0_i64 = arith.constant 0 : i64
    %c0 = arith.constant 0 : index
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 0xFF80 : bf16
    %cst_1 = arith.constant dense<5.87747175E-39> : tensor<f32>
    %cst_2 = arith.constant dense<1.000000e+00> : tensor<f32>
    %cst_3 = arith.constant 0x7FF0000000000000 : f64
    %cst_4 = arith.constant 4.480000e+02 : f32
    %cst_5 = arith.constant -1.270000e+02 : f32
    %cst_6 = arith.constant 1.270000e+02 : f32
    %cst_7 = arith.constant 2.000000e+00 : f32
    %cst_8 = arith.constant -4.480000e+02 : f32
    %cst_9 = arith.constant dense<-1> : tensor<i8>
    %cst_10 = arith.constant dense<-2> : tensor<i8>
    %cst_11 = arith.constant dense<127> : tensor<i64>
    %dim = tensor.dim %arg0, %c0 : tensor<?x64xbf16>
    %0 = tensor.empty(%dim) : tensor<?x64xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<?x64xbf16>) outs(%0 : tensor<?x64xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %44 = arith.extf %in : bf16 to f32
      linalg.yield %44 : f32
    } -> tensor<?x64xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<?x64xf32>) outs(%0 : tensor<?x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = arith.negf %in : f32
      %45 = math.exp %44 : f32
      %46 = arith.addf %45, %cst : f32
      %47 = arith.divf %cst, %46 : f32
      linalg.yield %47 : f32
    } -> tensor<?x64xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%1, %2 : tensor<?x64xf32>, tensor<?x64xf32>) outs(%0 : tensor<?x64xf32>) {
    ^bb0(%in: f32, %in_14: f32, %out: f32):
      %44 = arith.mulf %in, %in_14 : f32
      linalg.yield %44 : f32
    } -> tensor<?x64xf32>
    %4 = tensor.empty(%dim) : tensor<?x64xbf16>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<?x64xf32>) outs(%4 : tensor<?x64xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %44 = arith.truncf %in : f32 to bf16
      linalg.yield %44 : bf16
    } -> tensor<?x64xbf16>
    %expanded = tensor.expand_shape %5 [[0], [1, 2]] output_shape [%dim, 2, 32] : tensor<?x64xbf16> into tensor<?x2x32xbf16>
    %6 = tensor.empty(%dim) : tensor<?x2x32xbf16>
    %7 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<?x2x32xbf16>) outs(%6 : tensor<?x2x32xbf16>) {
    ^bb0(%in: bf16, %out: bf16):
      %44 = math.absf %in : bf16
      linalg.yield %44 : bf16
    } -> tensor<?x2x32xbf16>
    %8 = tensor.empty(%dim) : tensor<?x2xi64>
    %9 = linalg.fill ins(%c0_i64 : i64) outs(%8 : tensor<?x2xi64>) -> tensor<?x2xi64>
    %10 = tensor.empty(%dim) : tensor<?x2xbf16>
    %11 = linalg.fill ins(%cst_0 : bf16) outs(%10 : tensor<?x2xbf16>) -> tensor<?x2xbf16>
    %12:2 = linalg.generic {indexing_maps = [#map1, #map2, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%7 : tensor<?x2x32xbf16>) outs(%11, %9 : tensor<?x2xbf16>, tensor<?x2xi64>) {
    ^bb0(%in: bf16, %out: bf16, %out_14: i64):
      %44 = linalg.index 2 : index
      %45 = arith.index_cast %44 : index to i64
      %46 = arith.maximumf %in, %out : bf16
      %47 = arith.cmpf ogt, %in, %out : bf16
      %48 = arith.select %47, %45, %out_14 : i64
      linalg.yield %46, %48 : bf16, i64
    } -> (tensor<?x2xbf16>, tensor<?x2xi64>)
    %expanded_12 = tensor.expand_shape %12#0 [[0], [1, 2]] output_shape [%dim, 2, 1] : tensor<?x2xbf16> into tensor<?x2x1xbf16>
    %13 = tensor.empty(%dim) : tensor<?x2x32xf32>
    %14 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<?x2x32xbf16>) outs(%13 : tensor<?x2x32xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %44 = arith.extf %in : bf16 to f32
      linalg.yield %44 : f32
    } -> tensor<?x2x32xf32>
    %15 = tensor.empty(%dim) : tensor<?x2x1xf32>
    %16 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_12 : tensor<?x2x1xbf16>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %44 = arith.extf %in : bf16 to f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %17 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%16 : tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = arith.divf %in, %cst_4 : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %18 = tensor.empty(%dim) : tensor<?x2x1xi1>
    %19 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17, %17 : tensor<?x2x1xf32>, tensor<?x2x1xf32>) outs(%18 : tensor<?x2x1xi1>) {
    ^bb0(%in: f32, %in_14: f32, %out: i1):
      %44 = arith.cmpf une, %in, %in_14 : f32
      linalg.yield %44 : i1
    } -> tensor<?x2x1xi1>
    %20 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17 : tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = math.absf %in : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %21 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20 : tensor<?x2x1xf32>) outs(%18 : tensor<?x2x1xi1>) {
    ^bb0(%in: f32, %out: i1):
      %44 = arith.extf %in : f32 to f64
      %45 = arith.cmpf oeq, %44, %cst_3 : f64
      linalg.yield %45 : i1
    } -> tensor<?x2x1xi1>
    %22 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17 : tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = math.log2 %in : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %23 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%22 : tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = math.ceil %in : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %24 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%23 : tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = arith.cmpf ult, %in, %cst_5 : f32
      %45 = arith.select %44, %cst_5, %in : f32
      %46 = arith.cmpf ugt, %45, %cst_6 : f32
      %47 = arith.select %46, %cst_6, %45 : f32
      linalg.yield %47 : f32
    } -> tensor<?x2x1xf32>
    %25 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%24 : tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = arith.addf %in, %cst_6 : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %26 = tensor.empty(%dim) : tensor<?x2x1xi8>
    %27 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%25 : tensor<?x2x1xf32>) outs(%26 : tensor<?x2x1xi8>) {
    ^bb0(%in: f32, %out: i8):
      %44 = arith.fptosi %in : f32 to i8
      linalg.yield %44 : i8
    } -> tensor<?x2x1xi8>
    %28 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%21, %cst_10, %27 : tensor<?x2x1xi1>, tensor<i8>, tensor<?x2x1xi8>) outs(%26 : tensor<?x2x1xi8>) {
    ^bb0(%in: i1, %in_14: i8, %in_15: i8, %out: i8):
      %44 = arith.select %in, %in_14, %in_15 : i8
      linalg.yield %44 : i8
    } -> tensor<?x2x1xi8>
    %29 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19, %cst_9, %28 : tensor<?x2x1xi1>, tensor<i8>, tensor<?x2x1xi8>) outs(%26 : tensor<?x2x1xi8>) {
    ^bb0(%in: i1, %in_14: i8, %in_15: i8, %out: i8):
      %44 = arith.select %in, %in_14, %in_15 : i8
      linalg.yield %44 : i8
    } -> tensor<?x2x1xi8>
    %30 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<?x2x1xi8>) outs(%18 : tensor<?x2x1xi1>) {
    ^bb0(%in: i8, %out: i1):
      %44 = arith.extsi %in : i8 to i64
      %45 = arith.cmpi eq, %44, %c255_i64 : i64
      linalg.yield %45 : i1
    } -> tensor<?x2x1xi1>
    %31 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<?x2x1xi8>) outs(%18 : tensor<?x2x1xi1>) {
    ^bb0(%in: i8, %out: i1):
      %44 = arith.extsi %in : i8 to i64
      %45 = arith.cmpi eq, %44, %c254_i64 : i64
      linalg.yield %45 : i1
    } -> tensor<?x2x1xi1>
    %32 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<?x2x1xi8>) outs(%18 : tensor<?x2x1xi1>) {
    ^bb0(%in: i8, %out: i1):
      %44 = arith.extsi %in : i8 to i64
      %45 = arith.cmpi eq, %44, %c0_i64 : i64
      linalg.yield %45 : i1
    } -> tensor<?x2x1xi1>
    %33 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<?x2x1xi8>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: i8, %out: f32):
      %44 = arith.uitofp %in : i8 to f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %34 = linalg.generic {indexing_maps = [#map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_11, %33 : tensor<i64>, tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: i64, %in_14: f32, %out: f32):
      %44 = arith.sitofp %in : i64 to f32
      %45 = arith.subf %44, %in_14 : f32
      linalg.yield %45 : f32
    } -> tensor<?x2x1xf32>
    %35 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%34 : tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = math.powf %cst_7, %in : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %36 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%32, %cst_2, %35 : tensor<?x2x1xi1>, tensor<f32>, tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: i1, %in_14: f32, %in_15: f32, %out: f32):
      %44 = arith.select %in, %in_14, %in_15 : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %37 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%31, %cst_1, %36 : tensor<?x2x1xi1>, tensor<f32>, tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: i1, %in_14: f32, %in_15: f32, %out: f32):
      %44 = arith.select %in, %in_14, %in_15 : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %38 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%30, %17, %37 : tensor<?x2x1xi1>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) outs(%15 : tensor<?x2x1xf32>) {
    ^bb0(%in: i1, %in_14: f32, %in_15: f32, %out: f32):
      %44 = arith.select %in, %in_14, %in_15 : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x1xf32>
    %39 = linalg.generic {indexing_maps = [#map1, #map4, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14, %38 : tensor<?x2x32xf32>, tensor<?x2x1xf32>) outs(%13 : tensor<?x2x32xf32>) {
    ^bb0(%in: f32, %in_14: f32, %out: f32):
      %44 = arith.mulf %in, %in_14 : f32
      linalg.yield %44 : f32
    } -> tensor<?x2x32xf32>
    %40 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%39 : tensor<?x2x32xf32>) outs(%13 : tensor<?x2x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %44 = arith.cmpf ult, %in, %cst_8 : f32
      %45 = arith.select %44, %cst_8, %in : f32
      %46 = arith.cmpf ugt, %45, %cst_4 : f32
      %47 = arith.select %46, %cst_4, %45 : f32
      %row = linalg.index 0 : index
      %c4_idx = arith.constant 4 : index
      %late = arith.cmpi uge, %row, %c4_idx : index
      %zero = arith.constant 0.000000e+00 : f32
      %48 = arith.select %late, %zero, %47 : f32
      linalg.yield %48 : f32
    } -> tensor<?x2x32xf32>
    %41 = tensor.empty(%dim) : tensor<?x2x32xf8E4M3FN>
    // expected-remark @below {{Reason="unsupported shape", Remark="dynamic sizes: a body of the quantizer reads its position (linalg.index)"}}
    %42 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%40 : tensor<?x2x32xf32>) outs(%41 : tensor<?x2x32xf8E4M3FN>) {
    ^bb0(%in: f32, %out: f8E4M3FN):
      %44 = arith.truncf %in : f32 to f8E4M3FN
      linalg.yield %44 : f8E4M3FN
    } -> tensor<?x2x32xf8E4M3FN>
    %collapsed = tensor.collapse_shape %42 [[0], [1, 2]] : tensor<?x2x32xf8E4M3FN> into tensor<?x64xf8E4M3FN>
    %43 = tensor.bitcast %29 : tensor<?x2x1xi8> to tensor<?x2x1xf8E8M0FNU>
    %collapsed_13 = tensor.collapse_shape %43 [[0], [1, 2]] : tensor<?x2x1xf8E8M0FNU> into tensor<?x2xf8E8M0FNU>
    return %collapsed, %collapsed_13 : tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>
  }

  func.func @dynamic_rows_per_tensor(%x: tensor<?x64xf32>) -> (tensor<?x64xf8E4M3FN>, tensor<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n0 = tensor.dim %x, %c0 : tensor<?x64xf32>
    %n1 = tensor.dim %x, %c1 : tensor<?x64xf32>
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<?x64xf32>) outs(%init : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %a = math.absf %in : f32
      %m = arith.maximumf %a, %out : f32
      linalg.yield %m : f32
    } -> tensor<f32>
    %scale = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%amax : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %c448 = arith.constant 448.0 : f32
      %eps = arith.constant 1.0e-12 : f32
      %g = arith.maximumf %in, %eps : f32
      %s = arith.divf %c448, %g : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %e1 = tensor.empty(%n0) : tensor<?x64xf8E4M3FN>
    // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.0e-12> (assuming finite inputs) (dynamic sizes: checked with each dynamic size fixed to 4)"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<?x64xf32>, tensor<f32>) outs(%e1 : tensor<?x64xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y = arith.mulf %in, %s : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %m0 = arith.maximumf %y, %lo : f32
      %m1 = arith.minimumf %m0, %hi : f32
      %t = arith.truncf %m1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<?x64xf8E4M3FN>
    return %q, %scale : tensor<?x64xf8E4M3FN>, tensor<f32>
  }
  // A body that reads a value computed from the number of rows (n / n):
  // exact on the copy with 4 rows, where it folds to a constant, but not
  // shown exact for every size.
  func.func @negative_size_value(%x: tensor<?x64xf32>) -> (tensor<?x64xf8E4M3FN>, tensor<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n0 = tensor.dim %x, %c0 : tensor<?x64xf32>
    %n1 = tensor.dim %x, %c1 : tensor<?x64xf32>
    %ni = arith.index_cast %n0 : index to i64
    %nf = arith.sitofp %ni : i64 to f32
    %one = arith.divf %nf, %nf : f32
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<?x64xf32>) outs(%init : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %a = math.absf %in : f32
      %m = arith.maximumf %a, %out : f32
      linalg.yield %m : f32
    } -> tensor<f32>
    %scale = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%amax : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %c448 = arith.constant 448.0 : f32
      %eps = arith.constant 1.0e-12 : f32
      %g = arith.maximumf %in, %eps : f32
      %s = arith.divf %c448, %g : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %e1 = tensor.empty(%n0) : tensor<?x64xf8E4M3FN>
    // expected-remark @below {{Reason="unsupported shape", Remark="dynamic sizes: a value of the quantizer is computed from a dynamic size"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<?x64xf32>, tensor<f32>) outs(%e1 : tensor<?x64xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y0 = arith.mulf %in, %s : f32
      %y = arith.mulf %y0, %one : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %m0 = arith.maximumf %y, %lo : f32
      %m1 = arith.minimumf %m0, %hi : f32
      %t = arith.truncf %m1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<?x64xf8E4M3FN>
    return %q, %scale : tensor<?x64xf8E4M3FN>, tensor<f32>
  }

  func.func @dynamic_columns_per_tensor(%x: tensor<4x?xf32>) -> (tensor<4x?xf8E4M3FN>, tensor<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n0 = tensor.dim %x, %c0 : tensor<4x?xf32>
    %n1 = tensor.dim %x, %c1 : tensor<4x?xf32>
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x?xf32>) outs(%init : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %a = math.absf %in : f32
      %m = arith.maximumf %a, %out : f32
      linalg.yield %m : f32
    } -> tensor<f32>
    %scale = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%amax : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %c448 = arith.constant 448.0 : f32
      %eps = arith.constant 1.0e-12 : f32
      %g = arith.maximumf %in, %eps : f32
      %s = arith.divf %c448, %g : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %e1 = tensor.empty(%n1) : tensor<4x?xf8E4M3FN>
    // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.0e-12> (assuming finite inputs) (dynamic sizes: checked with each dynamic size fixed to 4, the last one to 256 and to 384)"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<4x?xf32>, tensor<f32>) outs(%e1 : tensor<4x?xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y = arith.mulf %in, %s : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %m0 = arith.maximumf %y, %lo : f32
      %m1 = arith.minimumf %m0, %hi : f32
      %t = arith.truncf %m1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<4x?xf8E4M3FN>
    return %q, %scale : tensor<4x?xf8E4M3FN>, tensor<f32>
  }
  func.func @negative_dynamic_columns_per_row(%x: tensor<4x?xf32>) -> (tensor<4x?xf8E4M3FN>, tensor<4x1xf32>) {
    %c1 = arith.constant 1 : index
    %n1 = tensor.dim %x, %c1 : tensor<4x?xf32>
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<4xf32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x?xf32>) outs(%init : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = math.absf %in : f32
      %m = arith.maximumf %a, %out : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    %a2 = tensor.expand_shape %amax [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
    %e2 = tensor.empty() : tensor<4x1xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a2 : tensor<4x1xf32>) outs(%e2 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %c448 = arith.constant 448.0 : f32
      %eps = arith.constant 1.0e-12 : f32
      %g = arith.maximumf %in, %eps : f32
      %d = arith.divf %g, %c448 : f32
      linalg.yield %d : f32
    } -> tensor<4x1xf32>
    %e1 = tensor.empty(%n1) : tensor<4x?xf8E4M3FN>
    // expected-remark @below {{Reason="unsupported shape", Remark="dynamic sizes: the input's last dimension is dynamic, and the quantizer is #fusion.quant<fp8_block_e4m3, rowwise, block = 1x256, epsilon = 1.0e-12> with it fixed to 256 but #fusion.quant<fp8_block_e4m3, rowwise, block = 1x384, epsilon = 1.0e-12> with it fixed to 384"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<4x?xf32>, tensor<4x1xf32>) outs(%e1 : tensor<4x?xf8E4M3FN>) {
    ^bb0(%in: f32, %sc: f32, %out: f8E4M3FN):
      %y = arith.divf %in, %sc : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %m0 = arith.maximumf %y, %lo : f32
      %m1 = arith.minimumf %m0, %hi : f32
      %t = arith.truncf %m1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<4x?xf8E4M3FN>
    return %q, %s : tensor<4x?xf8E4M3FN>, tensor<4x1xf32>
  }
  func.func @negative_dynamic_columns_amax_of_slice(%x: tensor<4x?xf32>) -> (tensor<4x?xf8E4M3FN>, tensor<f32>) {
    %c1 = arith.constant 1 : index
    %n1 = tensor.dim %x, %c1 : tensor<4x?xf32>
    %ninf = arith.constant 0xFF800000 : f32
    %head = tensor.extract_slice %x[0, 0] [4, 256] [1, 1] : tensor<4x?xf32> to tensor<4x256xf32>
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%head : tensor<4x256xf32>) outs(%init : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %a = math.absf %in : f32
      %m = arith.maximumf %a, %out : f32
      linalg.yield %m : f32
    } -> tensor<f32>
    %scale = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%amax : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %c448 = arith.constant 448.0 : f32
      %eps = arith.constant 1.0e-12 : f32
      %g = arith.maximumf %in, %eps : f32
      %s = arith.divf %c448, %g : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %e1 = tensor.empty(%n1) : tensor<4x?xf8E4M3FN>
    // expected-remark @below {{Reason="unsupported shape", Remark="dynamic sizes: the input's last dimension is dynamic, and the quantizer is #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.0e-12> with it fixed to 256 but not raised (found no single bf16/f16/f32 tensor of the data's size that the quantized data and its per-tensor amax are computed from) with it fixed to 384"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<4x?xf32>, tensor<f32>) outs(%e1 : tensor<4x?xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y = arith.mulf %in, %s : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %m0 = arith.maximumf %y, %lo : f32
      %m1 = arith.minimumf %m0, %hi : f32
      %t = arith.truncf %m1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<4x?xf8E4M3FN>
    return %q, %scale : tensor<4x?xf8E4M3FN>, tensor<f32>
  }
  func.func @negative_dynamic_columns_no_wide_copy(%x: tensor<4x?xf32>) -> (tensor<4x?xf8E4M3FN>, tensor<f32>) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %n1 = tensor.dim %x, %c1 : tensor<4x?xf32>
    %nb = arith.divui %n1, %c256 : index
    %x3 = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, %nb, 256] : tensor<4x?xf32> into tensor<4x?x256xf32>
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%x3 : tensor<4x?x256xf32>) outs(%init : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %a = math.absf %in : f32
      %m = arith.maximumf %a, %out : f32
      linalg.yield %m : f32
    } -> tensor<f32>
    %scale = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%amax : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %c448 = arith.constant 448.0 : f32
      %eps = arith.constant 1.0e-12 : f32
      %g = arith.maximumf %in, %eps : f32
      %s = arith.divf %c448, %g : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %e1 = tensor.empty(%n1) : tensor<4x?xf8E4M3FN>
    // expected-remark @below {{Reason="unsupported shape", Remark="dynamic sizes: the input's last dimension is dynamic, and the quantizer is #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.0e-12> with it fixed to 256 but not raised (the exactness check cannot evaluate the data: a value without a static tensor shape ('tensor.cast')) with it fixed to 384"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<4x?xf32>, tensor<f32>) outs(%e1 : tensor<4x?xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y = arith.mulf %in, %s : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %m0 = arith.maximumf %y, %lo : f32
      %m1 = arith.minimumf %m0, %hi : f32
      %t = arith.truncf %m1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<4x?xf8E4M3FN>
    return %q, %scale : tensor<4x?xf8E4M3FN>, tensor<f32>
  }
  func.func @negative_unranked_argument(%u: tensor<*xf32>) -> (tensor<?x64xf8E4M3FN>, tensor<f32>) {
    %x = tensor.cast %u : tensor<*xf32> to tensor<?x64xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n0 = tensor.dim %x, %c0 : tensor<?x64xf32>
    %n1 = tensor.dim %x, %c1 : tensor<?x64xf32>
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<?x64xf32>) outs(%init : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %a = math.absf %in : f32
      %m = arith.maximumf %a, %out : f32
      linalg.yield %m : f32
    } -> tensor<f32>
    %scale = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%amax : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %c448 = arith.constant 448.0 : f32
      %eps = arith.constant 1.0e-12 : f32
      %g = arith.maximumf %in, %eps : f32
      %s = arith.divf %c448, %g : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %e1 = tensor.empty(%n0) : tensor<?x64xf8E4M3FN>
    // expected-remark @below {{Reason="unsupported shape", Remark="dynamic sizes: no copy of the function with fixed sizes (an unranked argument, or sizes the program's reshapes contradict)"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<?x64xf32>, tensor<f32>) outs(%e1 : tensor<?x64xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y = arith.mulf %in, %s : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %m0 = arith.maximumf %y, %lo : f32
      %m1 = arith.minimumf %m0, %hi : f32
      %t = arith.truncf %m1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<?x64xf8E4M3FN>
    return %q, %scale : tensor<?x64xf8E4M3FN>, tensor<f32>
  }

  func.func @dynamic_two_quantizers(%x: tensor<?x64xf32>, %y: tensor<?x32xf32>) -> (tensor<?x64xf8E4M3FN>, tensor<?x32xf8E4M3FN>) {
    %c0_a = arith.constant 0 : index
    %c1_a = arith.constant 1 : index
    %n0_a = tensor.dim %x, %c0_a : tensor<?x64xf32>
    %n1_a = tensor.dim %x, %c1_a : tensor<?x64xf32>
    %ninf_a = arith.constant 0xFF800000 : f32
    %e0_a = tensor.empty() : tensor<f32>
    %init_a = linalg.fill ins(%ninf_a : f32) outs(%e0_a : tensor<f32>) -> tensor<f32>
    %amax_a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<?x64xf32>) outs(%init_a : tensor<f32>) {
    ^bb0(%in_a: f32, %out_a: f32):
      %a_a = math.absf %in_a : f32
      %m_a = arith.maximumf %a_a, %out_a : f32
      linalg.yield %m_a : f32
    } -> tensor<f32>
    %scale_a = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%amax_a : tensor<f32>) outs(%e0_a : tensor<f32>) {
    ^bb0(%in_a: f32, %out_a: f32):
      %c448_a = arith.constant 448.0 : f32
      %eps_a = arith.constant 1.0e-12 : f32
      %g_a = arith.maximumf %in_a, %eps_a : f32
      %s_a = arith.divf %c448_a, %g_a : f32
      linalg.yield %s_a : f32
    } -> tensor<f32>
    %e1_a = tensor.empty(%n0_a) : tensor<?x64xf8E4M3FN>
    // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.0e-12> (assuming finite inputs) (dynamic sizes: checked with each dynamic size fixed to 4)"}}
    %q_a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale_a : tensor<?x64xf32>, tensor<f32>) outs(%e1_a : tensor<?x64xf8E4M3FN>) {
    ^bb0(%in_a: f32, %s_a: f32, %out_a: f8E4M3FN):
      %y_a = arith.mulf %in_a, %s_a : f32
      %lo_a = arith.constant -448.0 : f32
      %hi_a = arith.constant 448.0 : f32
      %m0_a = arith.maximumf %y_a, %lo_a : f32
      %m1_a = arith.minimumf %m0_a, %hi_a : f32
      %t_a = arith.truncf %m1_a : f32 to f8E4M3FN
      linalg.yield %t_a : f8E4M3FN
    } -> tensor<?x64xf8E4M3FN>
    %c0_b = arith.constant 0 : index
    %c1_b = arith.constant 1 : index
    %n0_b = tensor.dim %y, %c0_b : tensor<?x32xf32>
    %n1_b = tensor.dim %y, %c1_b : tensor<?x32xf32>
    %ninf_b = arith.constant 0xFF800000 : f32
    %e0_b = tensor.empty() : tensor<f32>
    %init_b = linalg.fill ins(%ninf_b : f32) outs(%e0_b : tensor<f32>) -> tensor<f32>
    %amax_b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%y : tensor<?x32xf32>) outs(%init_b : tensor<f32>) {
    ^bb0(%in_b: f32, %out_b: f32):
      %a_b = math.absf %in_b : f32
      %m_b = arith.maximumf %a_b, %out_b : f32
      linalg.yield %m_b : f32
    } -> tensor<f32>
    %scale_b = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%amax_b : tensor<f32>) outs(%e0_b : tensor<f32>) {
    ^bb0(%in_b: f32, %out_b: f32):
      %c448_b = arith.constant 448.0 : f32
      %eps_b = arith.constant 1.0e-12 : f32
      %g_b = arith.maximumf %in_b, %eps_b : f32
      %s_b = arith.divf %c448_b, %g_b : f32
      linalg.yield %s_b : f32
    } -> tensor<f32>
    %e1_b = tensor.empty(%n0_b) : tensor<?x32xf8E4M3FN>
    // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.0e-12> (assuming finite inputs) (dynamic sizes: checked with each dynamic size fixed to 4)"}}
    %q_b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %scale_b : tensor<?x32xf32>, tensor<f32>) outs(%e1_b : tensor<?x32xf8E4M3FN>) {
    ^bb0(%in_b: f32, %s_b: f32, %out_b: f8E4M3FN):
      %y_b = arith.mulf %in_b, %s_b : f32
      %lo_b = arith.constant -448.0 : f32
      %hi_b = arith.constant 448.0 : f32
      %m0_b = arith.maximumf %y_b, %lo_b : f32
      %m1_b = arith.minimumf %m0_b, %hi_b : f32
      %t_b = arith.truncf %m1_b : f32 to f8E4M3FN
      linalg.yield %t_b : f8E4M3FN
    } -> tensor<?x32xf8E4M3FN>
    return %q_a, %q_b : tensor<?x64xf8E4M3FN>, tensor<?x32xf8E4M3FN>
  }
  func.func @dynamic_columns_pinned_by_cast(%x0: tensor<4x?xf32>) -> (tensor<4x?xf8E4M3FN>, tensor<f32>) {
    %c0 = arith.constant 0 : index
    %pinned = tensor.cast %x0 : tensor<4x?xf32> to tensor<4x256xf32>
    %x = tensor.cast %pinned : tensor<4x256xf32> to tensor<4x?xf32>
    %c1 = arith.constant 1 : index
    %n0 = tensor.dim %x, %c0 : tensor<4x?xf32>
    %n1 = tensor.dim %x, %c1 : tensor<4x?xf32>
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x?xf32>) outs(%init : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %a = math.absf %in : f32
      %m = arith.maximumf %a, %out : f32
      linalg.yield %m : f32
    } -> tensor<f32>
    %scale = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%amax : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %c448 = arith.constant 448.0 : f32
      %eps = arith.constant 1.0e-12 : f32
      %g = arith.maximumf %in, %eps : f32
      %s = arith.divf %c448, %g : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %e1 = tensor.empty(%n1) : tensor<4x?xf8E4M3FN>
    // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.0e-12> (assuming finite inputs) (dynamic sizes: checked with each dynamic size fixed to 4, the last one to 256 in both copies: the program fixes it)"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<4x?xf32>, tensor<f32>) outs(%e1 : tensor<4x?xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y = arith.mulf %in, %s : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %m0 = arith.maximumf %y, %lo : f32
      %m1 = arith.minimumf %m0, %hi : f32
      %t = arith.truncf %m1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<4x?xf8E4M3FN>
    return %q, %scale : tensor<4x?xf8E4M3FN>, tensor<f32>
  }
  func.func @negative_dynamic_rows_blocked_too_large(%x: tensor<?x16384xf32>) -> tensor<16384x?x32xf8E4M3FN> {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %n = tensor.dim %x, %c0 : tensor<?x16384xf32>
    %e = tensor.empty(%n) : tensor<16384x?xf32>
    %t = linalg.transpose ins(%x : tensor<?x16384xf32>) outs(%e : tensor<16384x?xf32>) permutation = [1, 0]
    %nb = arith.divui %n, %c32 : index
    %t3 = tensor.expand_shape %t [[0], [1, 2]] output_shape [16384, %nb, 32] : tensor<16384x?xf32> into tensor<16384x?x32xf32>
    %e1 = tensor.empty(%nb) : tensor<16384x?x32xf8E4M3FN>
    // expected-remark @below {{Reason="unsupported shape", Remark="dynamic sizes: a leading dynamic size reaches the quantizer's blocks, and its copy with each dynamic size 256 quantizes 4194304 elements, more than the check takes (2097152); not checked"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%t3 : tensor<16384x?x32xf32>) outs(%e1 : tensor<16384x?x32xf8E4M3FN>) {
    ^bb0(%in: f32, %out: f8E4M3FN):
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %m0 = arith.maximumf %in, %lo : f32
      %m1 = arith.minimumf %m0, %hi : f32
      %c = arith.truncf %m1 : f32 to f8E4M3FN
      linalg.yield %c : f8E4M3FN
    } -> tensor<16384x?x32xf8E4M3FN>
    return %q : tensor<16384x?x32xf8E4M3FN>
  }
}
