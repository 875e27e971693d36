// RUN: fusion-opt %s "--fusion-raise-quantize=saturating-casts=1 wrapping-int-casts=1 finite-inputs=1" | FileCheck %s
// RUN: fusion-opt %s "--fusion-raise-quantize=saturating-casts=1 wrapping-int-casts=1 finite-inputs=1" --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --fusion-pipeline=frontend=torch -o /dev/null

// fusion-raise-quantize on FP4 and per-tensor quantizers written out in
// upstream ops. @torchao_mxfp4 is torch-mlir's output for torchao's to_mx
// with float4_e2m1fn_x2 after a SiLU (test/Frontend/corpus, RCEIL): e2m1
// codes by integer bit tricks, packed two a byte (even element in the low
// nibble) by stride-2 slices, shli 4 and ori. It becomes one fusion.quantize
// whose data is the packed i8 tensor.

// CHECK-LABEL: func.func @torchao_mxfp4
//       CHECK: %[[Q:.*]]:2 = fusion.quantize %{{.*}} as quant<mxfp4, rowwise, zero_scale = one> outs({{.*}}) : (tensor<4x64xbf16>, tensor<4x32xi8>, tensor<4x2xf8E8M0FNU>) -> (tensor<4x32xi8>, tensor<4x2xf8E8M0FNU>)
//   CHECK-NOT: tensor.extract_slice
//       CHECK: return %[[Q]]#0, %{{.*}} : tensor<4x32xi8>, tensor<4x2xf8E8M0FNU>

/// The same program packing the odd element into the low nibble: the codes
/// are right, the bytes are not the runtime's (nor torch's).
// CHECK-LABEL: func.func @negative_swapped_nibbles
//   CHECK-NOT: fusion.quantize
//       CHECK: return

/// A per-tensor FP8 quantizer (one amax for the whole tensor) with its amax
/// clamped at an epsilon: raised with it; the scale the function returns is
/// computed from the raised op's amax.
// CHECK-LABEL: func.func @per_tensor_epsilon
//       CHECK: %[[Q:.*]]:3 = fusion.quantize %{{.*}} as quant<fp8_e4m3, rowwise, epsilon = 1.0e-12>
//       CHECK: %[[A:.*]] = tensor.collapse_shape %[[Q]]#2 [] : tensor<1xf32> into tensor<f32>
//   CHECK-NOT: math.absf
//       CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<f32>)
//   CHECK-NOT: math.absf
//       CHECK: return %[[Q]]#0, %[[S]]

// CHECK-LABEL: func.func @per_tensor_pow2
//       CHECK: fusion.quantize %{{.*}} as quant<fp8_e4m3, rowwise, epsilon = 1.0e-12, pow2_scale = true>

// CHECK-LABEL: func.func @per_tensor_epsilon_large
//       CHECK: fusion.quantize %{{.*}} as quant<fp8_e4m3, rowwise, epsilon = 1.0e-12>
//   CHECK-NOT: math.absf
//       CHECK: return

// CHECK-LABEL: func.func @negative_per_tensor_positional_large
//   CHECK-NOT: fusion.quantize
//       CHECK: return

/// Larger than the exactness check evaluates on the real shape, with a
/// reshape that keeps it from being checked on a small copy: declined.
// CHECK-LABEL: func.func @per_tensor_flat_amax_large
//       CHECK: fusion.quantize %{{.*}} as quant<fp8_e4m3, rowwise, epsilon = 1.0e-12>
//       CHECK: return

// CHECK-LABEL: func.func @negative_per_tensor_too_large
//   CHECK-NOT: fusion.quantize
//       CHECK: return

// CHECK-LABEL: func.func @negative_per_tensor_row_zero
//   CHECK-NOT: fusion.quantize
//       CHECK: return

// CHECK-LABEL: func.func @negative_per_tensor_reshape_op
//   CHECK-NOT: fusion.quantize
//       CHECK: return

/// The same without a guard for a zero amax: declined with the difference.
// CHECK-LABEL: func.func @negative_per_tensor
//   CHECK-NOT: fusion.quantize
//       CHECK: return

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1, d2) -> ()>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map5 = affine_map<(d0, d1) -> ()>
#map6 = affine_map<(d0) -> (d0)>
module {
  func.func @torchao_mxfp4(%arg0: tensor<4x64xbf16>) -> (tensor<4x32xi8>, tensor<4x2xf8E8M0FNU>) {
    %c255_i64 = arith.constant 255 : i64
    %c254_i64 = arith.constant 254 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 0xFF80 : bf16
    %cst_1 = arith.constant dense<5.87747175E-39> : tensor<f32>
    %cst_2 = arith.constant dense<1.000000e+00> : tensor<f32>
    %cst_3 = arith.constant 0x7FF0000000000000 : f64
    %cst_4 = arith.constant 6.000000e+00 : f64
    %cst_5 = arith.constant 6.000000e+00 : f32
    %cst_6 = arith.constant -1.270000e+02 : f32
    %cst_7 = arith.constant 1.270000e+02 : f32
    %cst_8 = arith.constant 2.000000e+00 : f32
    %cst_9 = arith.constant -6.000000e+00 : f32
    %c-2147483648_i32 = arith.constant -2147483648 : i32
    %false = arith.constant false
    %c1249902592_i32 = arith.constant 1249902592 : i32
    %c22_i32 = arith.constant 22 : i32
    %c1_i32 = arith.constant 1 : i32
    %c-1054867457_i32 = arith.constant -1054867457 : i32
    %c28_i32 = arith.constant 28 : i32
    %c8_i8 = arith.constant 8 : i8
    %c4_i8 = arith.constant 4 : i8
    %cst_10 = arith.constant dense<7> : tensor<4x64xi8>
    %cst_11 = arith.constant dense<-1> : tensor<i8>
    %cst_12 = arith.constant dense<-2> : tensor<i8>
    %cst_13 = arith.constant dense<127> : tensor<i64>
    %cst_14 = arith.constant dense<1249902592> : tensor<i32>
    %0 = tensor.empty() : tensor<4x64xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x64xbf16>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %86 = arith.extf %in : bf16 to f32
      linalg.yield %86 : f32
    } -> tensor<4x64xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = arith.negf %in : f32
      %87 = math.exp %86 : f32
      %88 = arith.addf %87, %cst : f32
      %89 = arith.divf %cst, %88 : f32
      linalg.yield %89 : f32
    } -> tensor<4x64xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%1, %2 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_20: f32, %out: f32):
      %86 = arith.mulf %in, %in_20 : f32
      linalg.yield %86 : f32
    } -> tensor<4x64xf32>
    %4 = tensor.empty() : tensor<4x64xbf16>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<4x64xf32>) outs(%4 : tensor<4x64xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %86 = arith.truncf %in : f32 to bf16
      linalg.yield %86 : bf16
    } -> tensor<4x64xbf16>
    %expanded = tensor.expand_shape %5 [[0], [1, 2]] output_shape [4, 2, 32] : tensor<4x64xbf16> into tensor<4x2x32xbf16>
    %6 = tensor.empty() : tensor<4x2x32xbf16>
    %7 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<4x2x32xbf16>) outs(%6 : tensor<4x2x32xbf16>) {
    ^bb0(%in: bf16, %out: bf16):
      %86 = math.absf %in : bf16
      linalg.yield %86 : bf16
    } -> tensor<4x2x32xbf16>
    %8 = tensor.empty() : tensor<4x2xi64>
    %9 = linalg.fill ins(%c0_i64 : i64) outs(%8 : tensor<4x2xi64>) -> tensor<4x2xi64>
    %10 = tensor.empty() : tensor<4x2xbf16>
    %11 = linalg.fill ins(%cst_0 : bf16) outs(%10 : tensor<4x2xbf16>) -> tensor<4x2xbf16>
    %12:2 = linalg.generic {indexing_maps = [#map1, #map2, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%7 : tensor<4x2x32xbf16>) outs(%11, %9 : tensor<4x2xbf16>, tensor<4x2xi64>) {
    ^bb0(%in: bf16, %out: bf16, %out_20: i64):
      %86 = linalg.index 2 : index
      %87 = arith.index_cast %86 : index to i64
      %88 = arith.maximumf %in, %out : bf16
      %89 = arith.cmpf ogt, %in, %out : bf16
      %90 = arith.select %89, %87, %out_20 : i64
      linalg.yield %88, %90 : bf16, i64
    } -> (tensor<4x2xbf16>, tensor<4x2xi64>)
    %expanded_15 = tensor.expand_shape %12#0 [[0], [1, 2]] output_shape [4, 2, 1] : tensor<4x2xbf16> into tensor<4x2x1xbf16>
    %13 = tensor.empty() : tensor<4x2x32xf32>
    %14 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<4x2x32xbf16>) outs(%13 : tensor<4x2x32xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %86 = arith.extf %in : bf16 to f32
      linalg.yield %86 : f32
    } -> tensor<4x2x32xf32>
    %15 = tensor.empty() : tensor<4x2x1xf32>
    %16 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_15 : tensor<4x2x1xbf16>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %86 = arith.extf %in : bf16 to f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %17 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%16 : tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = arith.divf %in, %cst_5 : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %18 = tensor.empty() : tensor<4x2x1xi1>
    %19 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17, %17 : tensor<4x2x1xf32>, tensor<4x2x1xf32>) outs(%18 : tensor<4x2x1xi1>) {
    ^bb0(%in: f32, %in_20: f32, %out: i1):
      %86 = arith.cmpf une, %in, %in_20 : f32
      linalg.yield %86 : i1
    } -> tensor<4x2x1xi1>
    %20 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17 : tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = math.absf %in : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %21 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20 : tensor<4x2x1xf32>) outs(%18 : tensor<4x2x1xi1>) {
    ^bb0(%in: f32, %out: i1):
      %86 = arith.extf %in : f32 to f64
      %87 = arith.cmpf oeq, %86, %cst_3 : f64
      linalg.yield %87 : i1
    } -> tensor<4x2x1xi1>
    %22 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17 : tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = math.log2 %in : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %23 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%22 : tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = math.ceil %in : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %24 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%23 : tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = arith.cmpf ult, %in, %cst_6 : f32
      %87 = arith.select %86, %cst_6, %in : f32
      %88 = arith.cmpf ugt, %87, %cst_7 : f32
      %89 = arith.select %88, %cst_7, %87 : f32
      linalg.yield %89 : f32
    } -> tensor<4x2x1xf32>
    %25 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%24 : tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = arith.addf %in, %cst_7 : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %26 = tensor.empty() : tensor<4x2x1xi8>
    %27 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%25 : tensor<4x2x1xf32>) outs(%26 : tensor<4x2x1xi8>) {
    ^bb0(%in: f32, %out: i8):
      %86 = arith.fptosi %in : f32 to i8
      linalg.yield %86 : i8
    } -> tensor<4x2x1xi8>
    %28 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%21, %cst_12, %27 : tensor<4x2x1xi1>, tensor<i8>, tensor<4x2x1xi8>) outs(%26 : tensor<4x2x1xi8>) {
    ^bb0(%in: i1, %in_20: i8, %in_21: i8, %out: i8):
      %86 = arith.select %in, %in_20, %in_21 : i8
      linalg.yield %86 : i8
    } -> tensor<4x2x1xi8>
    %29 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19, %cst_11, %28 : tensor<4x2x1xi1>, tensor<i8>, tensor<4x2x1xi8>) outs(%26 : tensor<4x2x1xi8>) {
    ^bb0(%in: i1, %in_20: i8, %in_21: i8, %out: i8):
      %86 = arith.select %in, %in_20, %in_21 : i8
      linalg.yield %86 : i8
    } -> tensor<4x2x1xi8>
    %30 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<4x2x1xi8>) outs(%18 : tensor<4x2x1xi1>) {
    ^bb0(%in: i8, %out: i1):
      %86 = arith.extsi %in : i8 to i64
      %87 = arith.cmpi eq, %86, %c255_i64 : i64
      linalg.yield %87 : i1
    } -> tensor<4x2x1xi1>
    %31 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<4x2x1xi8>) outs(%18 : tensor<4x2x1xi1>) {
    ^bb0(%in: i8, %out: i1):
      %86 = arith.extsi %in : i8 to i64
      %87 = arith.cmpi eq, %86, %c254_i64 : i64
      linalg.yield %87 : i1
    } -> tensor<4x2x1xi1>
    %32 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<4x2x1xi8>) outs(%18 : tensor<4x2x1xi1>) {
    ^bb0(%in: i8, %out: i1):
      %86 = arith.extsi %in : i8 to i64
      %87 = arith.cmpi eq, %86, %c0_i64 : i64
      linalg.yield %87 : i1
    } -> tensor<4x2x1xi1>
    %33 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<4x2x1xi8>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: i8, %out: f32):
      %86 = arith.uitofp %in : i8 to f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %34 = linalg.generic {indexing_maps = [#map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_13, %33 : tensor<i64>, tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: i64, %in_20: f32, %out: f32):
      %86 = arith.sitofp %in : i64 to f32
      %87 = arith.subf %86, %in_20 : f32
      linalg.yield %87 : f32
    } -> tensor<4x2x1xf32>
    %35 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%34 : tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = math.powf %cst_8, %in : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %36 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%32, %cst_2, %35 : tensor<4x2x1xi1>, tensor<f32>, tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: i1, %in_20: f32, %in_21: f32, %out: f32):
      %86 = arith.select %in, %in_20, %in_21 : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %37 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%31, %cst_1, %36 : tensor<4x2x1xi1>, tensor<f32>, tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: i1, %in_20: f32, %in_21: f32, %out: f32):
      %86 = arith.select %in, %in_20, %in_21 : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %38 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%30, %17, %37 : tensor<4x2x1xi1>, tensor<4x2x1xf32>, tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: i1, %in_20: f32, %in_21: f32, %out: f32):
      %86 = arith.select %in, %in_20, %in_21 : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %39 = linalg.generic {indexing_maps = [#map1, #map4, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14, %38 : tensor<4x2x32xf32>, tensor<4x2x1xf32>) outs(%13 : tensor<4x2x32xf32>) {
    ^bb0(%in: f32, %in_20: f32, %out: f32):
      %86 = arith.mulf %in, %in_20 : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x32xf32>
    %40 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%39 : tensor<4x2x32xf32>) outs(%13 : tensor<4x2x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = arith.cmpf ult, %in, %cst_9 : f32
      %87 = arith.select %86, %cst_9, %in : f32
      %88 = arith.cmpf ugt, %87, %cst_5 : f32
      %89 = arith.select %88, %cst_5, %87 : f32
      linalg.yield %89 : f32
    } -> tensor<4x2x32xf32>
    %collapsed = tensor.collapse_shape %40 [[0], [1, 2]] : tensor<4x2x32xf32> into tensor<4x64xf32>
    %41 = tensor.bitcast %cst_14 : tensor<i32> to tensor<f32>
    %42 = tensor.bitcast %collapsed : tensor<4x64xf32> to tensor<4x64xi32>
    %43 = tensor.empty() : tensor<4x64xi32>
    %44 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%42 : tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %out: i32):
      %86 = arith.andi %in, %c-2147483648_i32 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %45 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%42, %44 : tensor<4x64xi32>, tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %in_20: i32, %out: i32):
      %86 = arith.xori %in, %in_20 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %46 = tensor.bitcast %45 : tensor<4x64xi32> to tensor<4x64xf32>
    %47 = tensor.empty() : tensor<4x64xi1>
    %48 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%46 : tensor<4x64xf32>) outs(%47 : tensor<4x64xi1>) {
    ^bb0(%in: f32, %out: i1):
      %86 = arith.extf %in : f32 to f64
      %87 = arith.cmpf oge, %86, %cst_4 : f64
      linalg.yield %87 : i1
    } -> tensor<4x64xi1>
    %49 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%48 : tensor<4x64xi1>) outs(%47 : tensor<4x64xi1>) {
    ^bb0(%in: i1, %out: i1):
      %86 = arith.cmpi eq, %in, %false : i1
      linalg.yield %86 : i1
    } -> tensor<4x64xi1>
    %50 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%46 : tensor<4x64xf32>) outs(%47 : tensor<4x64xi1>) {
    ^bb0(%in: f32, %out: i1):
      %86 = arith.cmpf olt, %in, %cst : f32
      linalg.yield %86 : i1
    } -> tensor<4x64xi1>
    %51 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%49, %50 : tensor<4x64xi1>, tensor<4x64xi1>) outs(%47 : tensor<4x64xi1>) {
    ^bb0(%in: i1, %in_20: i1, %out: i1):
      %86 = arith.andi %in, %in_20 : i1
      linalg.yield %86 : i1
    } -> tensor<4x64xi1>
    %52 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%48, %51 : tensor<4x64xi1>, tensor<4x64xi1>) outs(%47 : tensor<4x64xi1>) {
    ^bb0(%in: i1, %in_20: i1, %out: i1):
      %86 = arith.ori %in, %in_20 : i1
      linalg.yield %86 : i1
    } -> tensor<4x64xi1>
    %53 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%52 : tensor<4x64xi1>) outs(%47 : tensor<4x64xi1>) {
    ^bb0(%in: i1, %out: i1):
      %86 = arith.cmpi eq, %in, %false : i1
      linalg.yield %86 : i1
    } -> tensor<4x64xi1>
    %54 = linalg.generic {indexing_maps = [#map, #map5, #map], iterator_types = ["parallel", "parallel"]} ins(%46, %41 : tensor<4x64xf32>, tensor<f32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_20: f32, %out: f32):
      %86 = arith.addf %in, %in_20 : f32
      linalg.yield %86 : f32
    } -> tensor<4x64xf32>
    %55 = tensor.bitcast %54 : tensor<4x64xf32> to tensor<4x64xi32>
    %56 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%55 : tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %out: i32):
      %86 = arith.subi %in, %c1249902592_i32 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %57 = tensor.bitcast %56 : tensor<4x64xi32> to tensor<4x64xf32>
    %58 = tensor.bitcast %57 : tensor<4x64xf32> to tensor<4x64xi32>
    %59 = tensor.empty() : tensor<4x64xi8>
    %60 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%58 : tensor<4x64xi32>) outs(%59 : tensor<4x64xi8>) {
    ^bb0(%in: i32, %out: i8):
      %86 = arith.trunci %in : i32 to i8
      linalg.yield %86 : i8
    } -> tensor<4x64xi8>
    %61 = tensor.bitcast %46 : tensor<4x64xf32> to tensor<4x64xi32>
    %62 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%61 : tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %out: i32):
      %86 = arith.shrsi %in, %c22_i32 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %63 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%62 : tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %out: i32):
      %86 = arith.andi %in, %c1_i32 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %64 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%61 : tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %out: i32):
      %86 = arith.addi %in, %c-1054867457_i32 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %65 = tensor.bitcast %64 : tensor<4x64xi32> to tensor<4x64xf32>
    %66 = tensor.bitcast %65 : tensor<4x64xf32> to tensor<4x64xi32>
    %67 = tensor.bitcast %66 : tensor<4x64xi32> to tensor<4x64xf32>
    %68 = tensor.bitcast %67 : tensor<4x64xf32> to tensor<4x64xi32>
    %69 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%68, %63 : tensor<4x64xi32>, tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %in_20: i32, %out: i32):
      %86 = arith.addi %in, %in_20 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %70 = tensor.bitcast %69 : tensor<4x64xi32> to tensor<4x64xf32>
    %71 = tensor.bitcast %70 : tensor<4x64xf32> to tensor<4x64xi32>
    %72 = tensor.bitcast %71 : tensor<4x64xi32> to tensor<4x64xf32>
    %73 = tensor.bitcast %72 : tensor<4x64xf32> to tensor<4x64xi32>
    %74 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%73 : tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %out: i32):
      %86 = arith.shrsi %in, %c22_i32 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %75 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%74 : tensor<4x64xi32>) outs(%59 : tensor<4x64xi8>) {
    ^bb0(%in: i32, %out: i8):
      %86 = arith.trunci %in : i32 to i8
      linalg.yield %86 : i8
    } -> tensor<4x64xi8>
    %76 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%51, %60, %cst_10 : tensor<4x64xi1>, tensor<4x64xi8>, tensor<4x64xi8>) outs(%59 : tensor<4x64xi8>) {
    ^bb0(%in: i1, %in_20: i8, %in_21: i8, %out: i8):
      %86 = arith.select %in, %in_20, %in_21 : i8
      linalg.yield %86 : i8
    } -> tensor<4x64xi8>
    %77 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%53, %75, %76 : tensor<4x64xi1>, tensor<4x64xi8>, tensor<4x64xi8>) outs(%59 : tensor<4x64xi8>) {
    ^bb0(%in: i1, %in_20: i8, %in_21: i8, %out: i8):
      %86 = arith.select %in, %in_20, %in_21 : i8
      linalg.yield %86 : i8
    } -> tensor<4x64xi8>
    %78 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%44 : tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %out: i32):
      %86 = arith.shrsi %in, %c28_i32 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %79 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%78 : tensor<4x64xi32>) outs(%59 : tensor<4x64xi8>) {
    ^bb0(%in: i32, %out: i8):
      %86 = arith.trunci %in : i32 to i8
      linalg.yield %86 : i8
    } -> tensor<4x64xi8>
    %80 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%79 : tensor<4x64xi8>) outs(%59 : tensor<4x64xi8>) {
    ^bb0(%in: i8, %out: i8):
      %86 = arith.andi %in, %c8_i8 : i8
      linalg.yield %86 : i8
    } -> tensor<4x64xi8>
    %81 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%77, %80 : tensor<4x64xi8>, tensor<4x64xi8>) outs(%59 : tensor<4x64xi8>) {
    ^bb0(%in: i8, %in_20: i8, %out: i8):
      %86 = arith.ori %in, %in_20 : i8
      linalg.yield %86 : i8
    } -> tensor<4x64xi8>
    %collapsed_16 = tensor.collapse_shape %81 [[0, 1]] : tensor<4x64xi8> into tensor<256xi8>
    %extracted_slice = tensor.extract_slice %collapsed_16[0] [128] [2] : tensor<256xi8> to tensor<128xi8>
    %extracted_slice_17 = tensor.extract_slice %collapsed_16[1] [128] [2] : tensor<256xi8> to tensor<128xi8>
    %82 = tensor.empty() : tensor<128xi8>
    %83 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = ["parallel"]} ins(%extracted_slice_17 : tensor<128xi8>) outs(%82 : tensor<128xi8>) {
    ^bb0(%in: i8, %out: i8):
      %86 = arith.shli %in, %c4_i8 : i8
      linalg.yield %86 : i8
    } -> tensor<128xi8>
    // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<mxfp4, rowwise, zero_scale = one> (assuming finite inputs)"}}
    %84 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%extracted_slice, %83 : tensor<128xi8>, tensor<128xi8>) outs(%82 : tensor<128xi8>) {
    ^bb0(%in: i8, %in_20: i8, %out: i8):
      %86 = arith.ori %in, %in_20 : i8
      linalg.yield %86 : i8
    } -> tensor<128xi8>
    %expanded_18 = tensor.expand_shape %84 [[0, 1]] output_shape [4, 32] : tensor<128xi8> into tensor<4x32xi8>
    %85 = tensor.bitcast %29 : tensor<4x2x1xi8> to tensor<4x2x1xf8E8M0FNU>
    %collapsed_19 = tensor.collapse_shape %85 [[0], [1, 2]] : tensor<4x2x1xf8E8M0FNU> into tensor<4x2xf8E8M0FNU>
    return %expanded_18, %collapsed_19 : tensor<4x32xi8>, tensor<4x2xf8E8M0FNU>
  }

  func.func @negative_swapped_nibbles(%arg0: tensor<4x64xbf16>) -> (tensor<4x32xi8>, tensor<4x2xf8E8M0FNU>) {
    %c255_i64 = arith.constant 255 : i64
    %c254_i64 = arith.constant 254 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 0xFF80 : bf16
    %cst_1 = arith.constant dense<5.87747175E-39> : tensor<f32>
    %cst_2 = arith.constant dense<1.000000e+00> : tensor<f32>
    %cst_3 = arith.constant 0x7FF0000000000000 : f64
    %cst_4 = arith.constant 6.000000e+00 : f64
    %cst_5 = arith.constant 6.000000e+00 : f32
    %cst_6 = arith.constant -1.270000e+02 : f32
    %cst_7 = arith.constant 1.270000e+02 : f32
    %cst_8 = arith.constant 2.000000e+00 : f32
    %cst_9 = arith.constant -6.000000e+00 : f32
    %c-2147483648_i32 = arith.constant -2147483648 : i32
    %false = arith.constant false
    %c1249902592_i32 = arith.constant 1249902592 : i32
    %c22_i32 = arith.constant 22 : i32
    %c1_i32 = arith.constant 1 : i32
    %c-1054867457_i32 = arith.constant -1054867457 : i32
    %c28_i32 = arith.constant 28 : i32
    %c8_i8 = arith.constant 8 : i8
    %c4_i8 = arith.constant 4 : i8
    %cst_10 = arith.constant dense<7> : tensor<4x64xi8>
    %cst_11 = arith.constant dense<-1> : tensor<i8>
    %cst_12 = arith.constant dense<-2> : tensor<i8>
    %cst_13 = arith.constant dense<127> : tensor<i64>
    %cst_14 = arith.constant dense<1249902592> : tensor<i32>
    %0 = tensor.empty() : tensor<4x64xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x64xbf16>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %86 = arith.extf %in : bf16 to f32
      linalg.yield %86 : f32
    } -> tensor<4x64xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = arith.negf %in : f32
      %87 = math.exp %86 : f32
      %88 = arith.addf %87, %cst : f32
      %89 = arith.divf %cst, %88 : f32
      linalg.yield %89 : f32
    } -> tensor<4x64xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%1, %2 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_20: f32, %out: f32):
      %86 = arith.mulf %in, %in_20 : f32
      linalg.yield %86 : f32
    } -> tensor<4x64xf32>
    %4 = tensor.empty() : tensor<4x64xbf16>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<4x64xf32>) outs(%4 : tensor<4x64xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %86 = arith.truncf %in : f32 to bf16
      linalg.yield %86 : bf16
    } -> tensor<4x64xbf16>
    %expanded = tensor.expand_shape %5 [[0], [1, 2]] output_shape [4, 2, 32] : tensor<4x64xbf16> into tensor<4x2x32xbf16>
    %6 = tensor.empty() : tensor<4x2x32xbf16>
    %7 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<4x2x32xbf16>) outs(%6 : tensor<4x2x32xbf16>) {
    ^bb0(%in: bf16, %out: bf16):
      %86 = math.absf %in : bf16
      linalg.yield %86 : bf16
    } -> tensor<4x2x32xbf16>
    %8 = tensor.empty() : tensor<4x2xi64>
    %9 = linalg.fill ins(%c0_i64 : i64) outs(%8 : tensor<4x2xi64>) -> tensor<4x2xi64>
    %10 = tensor.empty() : tensor<4x2xbf16>
    %11 = linalg.fill ins(%cst_0 : bf16) outs(%10 : tensor<4x2xbf16>) -> tensor<4x2xbf16>
    %12:2 = linalg.generic {indexing_maps = [#map1, #map2, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%7 : tensor<4x2x32xbf16>) outs(%11, %9 : tensor<4x2xbf16>, tensor<4x2xi64>) {
    ^bb0(%in: bf16, %out: bf16, %out_20: i64):
      %86 = linalg.index 2 : index
      %87 = arith.index_cast %86 : index to i64
      %88 = arith.maximumf %in, %out : bf16
      %89 = arith.cmpf ogt, %in, %out : bf16
      %90 = arith.select %89, %87, %out_20 : i64
      linalg.yield %88, %90 : bf16, i64
    } -> (tensor<4x2xbf16>, tensor<4x2xi64>)
    %expanded_15 = tensor.expand_shape %12#0 [[0], [1, 2]] output_shape [4, 2, 1] : tensor<4x2xbf16> into tensor<4x2x1xbf16>
    %13 = tensor.empty() : tensor<4x2x32xf32>
    %14 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<4x2x32xbf16>) outs(%13 : tensor<4x2x32xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %86 = arith.extf %in : bf16 to f32
      linalg.yield %86 : f32
    } -> tensor<4x2x32xf32>
    %15 = tensor.empty() : tensor<4x2x1xf32>
    %16 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_15 : tensor<4x2x1xbf16>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %86 = arith.extf %in : bf16 to f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %17 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%16 : tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = arith.divf %in, %cst_5 : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %18 = tensor.empty() : tensor<4x2x1xi1>
    %19 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17, %17 : tensor<4x2x1xf32>, tensor<4x2x1xf32>) outs(%18 : tensor<4x2x1xi1>) {
    ^bb0(%in: f32, %in_20: f32, %out: i1):
      %86 = arith.cmpf une, %in, %in_20 : f32
      linalg.yield %86 : i1
    } -> tensor<4x2x1xi1>
    %20 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17 : tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = math.absf %in : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %21 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20 : tensor<4x2x1xf32>) outs(%18 : tensor<4x2x1xi1>) {
    ^bb0(%in: f32, %out: i1):
      %86 = arith.extf %in : f32 to f64
      %87 = arith.cmpf oeq, %86, %cst_3 : f64
      linalg.yield %87 : i1
    } -> tensor<4x2x1xi1>
    %22 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17 : tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = math.log2 %in : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %23 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%22 : tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = math.ceil %in : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %24 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%23 : tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = arith.cmpf ult, %in, %cst_6 : f32
      %87 = arith.select %86, %cst_6, %in : f32
      %88 = arith.cmpf ugt, %87, %cst_7 : f32
      %89 = arith.select %88, %cst_7, %87 : f32
      linalg.yield %89 : f32
    } -> tensor<4x2x1xf32>
    %25 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%24 : tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = arith.addf %in, %cst_7 : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %26 = tensor.empty() : tensor<4x2x1xi8>
    %27 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%25 : tensor<4x2x1xf32>) outs(%26 : tensor<4x2x1xi8>) {
    ^bb0(%in: f32, %out: i8):
      %86 = arith.fptosi %in : f32 to i8
      linalg.yield %86 : i8
    } -> tensor<4x2x1xi8>
    %28 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%21, %cst_12, %27 : tensor<4x2x1xi1>, tensor<i8>, tensor<4x2x1xi8>) outs(%26 : tensor<4x2x1xi8>) {
    ^bb0(%in: i1, %in_20: i8, %in_21: i8, %out: i8):
      %86 = arith.select %in, %in_20, %in_21 : i8
      linalg.yield %86 : i8
    } -> tensor<4x2x1xi8>
    %29 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19, %cst_11, %28 : tensor<4x2x1xi1>, tensor<i8>, tensor<4x2x1xi8>) outs(%26 : tensor<4x2x1xi8>) {
    ^bb0(%in: i1, %in_20: i8, %in_21: i8, %out: i8):
      %86 = arith.select %in, %in_20, %in_21 : i8
      linalg.yield %86 : i8
    } -> tensor<4x2x1xi8>
    %30 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<4x2x1xi8>) outs(%18 : tensor<4x2x1xi1>) {
    ^bb0(%in: i8, %out: i1):
      %86 = arith.extsi %in : i8 to i64
      %87 = arith.cmpi eq, %86, %c255_i64 : i64
      linalg.yield %87 : i1
    } -> tensor<4x2x1xi1>
    %31 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<4x2x1xi8>) outs(%18 : tensor<4x2x1xi1>) {
    ^bb0(%in: i8, %out: i1):
      %86 = arith.extsi %in : i8 to i64
      %87 = arith.cmpi eq, %86, %c254_i64 : i64
      linalg.yield %87 : i1
    } -> tensor<4x2x1xi1>
    %32 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<4x2x1xi8>) outs(%18 : tensor<4x2x1xi1>) {
    ^bb0(%in: i8, %out: i1):
      %86 = arith.extsi %in : i8 to i64
      %87 = arith.cmpi eq, %86, %c0_i64 : i64
      linalg.yield %87 : i1
    } -> tensor<4x2x1xi1>
    %33 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<4x2x1xi8>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: i8, %out: f32):
      %86 = arith.uitofp %in : i8 to f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %34 = linalg.generic {indexing_maps = [#map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cst_13, %33 : tensor<i64>, tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: i64, %in_20: f32, %out: f32):
      %86 = arith.sitofp %in : i64 to f32
      %87 = arith.subf %86, %in_20 : f32
      linalg.yield %87 : f32
    } -> tensor<4x2x1xf32>
    %35 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%34 : tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = math.powf %cst_8, %in : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %36 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%32, %cst_2, %35 : tensor<4x2x1xi1>, tensor<f32>, tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: i1, %in_20: f32, %in_21: f32, %out: f32):
      %86 = arith.select %in, %in_20, %in_21 : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %37 = linalg.generic {indexing_maps = [#map1, #map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%31, %cst_1, %36 : tensor<4x2x1xi1>, tensor<f32>, tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: i1, %in_20: f32, %in_21: f32, %out: f32):
      %86 = arith.select %in, %in_20, %in_21 : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %38 = linalg.generic {indexing_maps = [#map1, #map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%30, %17, %37 : tensor<4x2x1xi1>, tensor<4x2x1xf32>, tensor<4x2x1xf32>) outs(%15 : tensor<4x2x1xf32>) {
    ^bb0(%in: i1, %in_20: f32, %in_21: f32, %out: f32):
      %86 = arith.select %in, %in_20, %in_21 : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x1xf32>
    %39 = linalg.generic {indexing_maps = [#map1, #map4, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14, %38 : tensor<4x2x32xf32>, tensor<4x2x1xf32>) outs(%13 : tensor<4x2x32xf32>) {
    ^bb0(%in: f32, %in_20: f32, %out: f32):
      %86 = arith.mulf %in, %in_20 : f32
      linalg.yield %86 : f32
    } -> tensor<4x2x32xf32>
    %40 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%39 : tensor<4x2x32xf32>) outs(%13 : tensor<4x2x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %86 = arith.cmpf ult, %in, %cst_9 : f32
      %87 = arith.select %86, %cst_9, %in : f32
      %88 = arith.cmpf ugt, %87, %cst_5 : f32
      %89 = arith.select %88, %cst_5, %87 : f32
      linalg.yield %89 : f32
    } -> tensor<4x2x32xf32>
    %collapsed = tensor.collapse_shape %40 [[0], [1, 2]] : tensor<4x2x32xf32> into tensor<4x64xf32>
    %41 = tensor.bitcast %cst_14 : tensor<i32> to tensor<f32>
    %42 = tensor.bitcast %collapsed : tensor<4x64xf32> to tensor<4x64xi32>
    %43 = tensor.empty() : tensor<4x64xi32>
    %44 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%42 : tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %out: i32):
      %86 = arith.andi %in, %c-2147483648_i32 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %45 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%42, %44 : tensor<4x64xi32>, tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %in_20: i32, %out: i32):
      %86 = arith.xori %in, %in_20 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %46 = tensor.bitcast %45 : tensor<4x64xi32> to tensor<4x64xf32>
    %47 = tensor.empty() : tensor<4x64xi1>
    %48 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%46 : tensor<4x64xf32>) outs(%47 : tensor<4x64xi1>) {
    ^bb0(%in: f32, %out: i1):
      %86 = arith.extf %in : f32 to f64
      %87 = arith.cmpf oge, %86, %cst_4 : f64
      linalg.yield %87 : i1
    } -> tensor<4x64xi1>
    %49 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%48 : tensor<4x64xi1>) outs(%47 : tensor<4x64xi1>) {
    ^bb0(%in: i1, %out: i1):
      %86 = arith.cmpi eq, %in, %false : i1
      linalg.yield %86 : i1
    } -> tensor<4x64xi1>
    %50 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%46 : tensor<4x64xf32>) outs(%47 : tensor<4x64xi1>) {
    ^bb0(%in: f32, %out: i1):
      %86 = arith.cmpf olt, %in, %cst : f32
      linalg.yield %86 : i1
    } -> tensor<4x64xi1>
    %51 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%49, %50 : tensor<4x64xi1>, tensor<4x64xi1>) outs(%47 : tensor<4x64xi1>) {
    ^bb0(%in: i1, %in_20: i1, %out: i1):
      %86 = arith.andi %in, %in_20 : i1
      linalg.yield %86 : i1
    } -> tensor<4x64xi1>
    %52 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%48, %51 : tensor<4x64xi1>, tensor<4x64xi1>) outs(%47 : tensor<4x64xi1>) {
    ^bb0(%in: i1, %in_20: i1, %out: i1):
      %86 = arith.ori %in, %in_20 : i1
      linalg.yield %86 : i1
    } -> tensor<4x64xi1>
    %53 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%52 : tensor<4x64xi1>) outs(%47 : tensor<4x64xi1>) {
    ^bb0(%in: i1, %out: i1):
      %86 = arith.cmpi eq, %in, %false : i1
      linalg.yield %86 : i1
    } -> tensor<4x64xi1>
    %54 = linalg.generic {indexing_maps = [#map, #map5, #map], iterator_types = ["parallel", "parallel"]} ins(%46, %41 : tensor<4x64xf32>, tensor<f32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_20: f32, %out: f32):
      %86 = arith.addf %in, %in_20 : f32
      linalg.yield %86 : f32
    } -> tensor<4x64xf32>
    %55 = tensor.bitcast %54 : tensor<4x64xf32> to tensor<4x64xi32>
    %56 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%55 : tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %out: i32):
      %86 = arith.subi %in, %c1249902592_i32 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %57 = tensor.bitcast %56 : tensor<4x64xi32> to tensor<4x64xf32>
    %58 = tensor.bitcast %57 : tensor<4x64xf32> to tensor<4x64xi32>
    %59 = tensor.empty() : tensor<4x64xi8>
    %60 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%58 : tensor<4x64xi32>) outs(%59 : tensor<4x64xi8>) {
    ^bb0(%in: i32, %out: i8):
      %86 = arith.trunci %in : i32 to i8
      linalg.yield %86 : i8
    } -> tensor<4x64xi8>
    %61 = tensor.bitcast %46 : tensor<4x64xf32> to tensor<4x64xi32>
    %62 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%61 : tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %out: i32):
      %86 = arith.shrsi %in, %c22_i32 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %63 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%62 : tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %out: i32):
      %86 = arith.andi %in, %c1_i32 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %64 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%61 : tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %out: i32):
      %86 = arith.addi %in, %c-1054867457_i32 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %65 = tensor.bitcast %64 : tensor<4x64xi32> to tensor<4x64xf32>
    %66 = tensor.bitcast %65 : tensor<4x64xf32> to tensor<4x64xi32>
    %67 = tensor.bitcast %66 : tensor<4x64xi32> to tensor<4x64xf32>
    %68 = tensor.bitcast %67 : tensor<4x64xf32> to tensor<4x64xi32>
    %69 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%68, %63 : tensor<4x64xi32>, tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %in_20: i32, %out: i32):
      %86 = arith.addi %in, %in_20 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %70 = tensor.bitcast %69 : tensor<4x64xi32> to tensor<4x64xf32>
    %71 = tensor.bitcast %70 : tensor<4x64xf32> to tensor<4x64xi32>
    %72 = tensor.bitcast %71 : tensor<4x64xi32> to tensor<4x64xf32>
    %73 = tensor.bitcast %72 : tensor<4x64xf32> to tensor<4x64xi32>
    %74 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%73 : tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %out: i32):
      %86 = arith.shrsi %in, %c22_i32 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %75 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%74 : tensor<4x64xi32>) outs(%59 : tensor<4x64xi8>) {
    ^bb0(%in: i32, %out: i8):
      %86 = arith.trunci %in : i32 to i8
      linalg.yield %86 : i8
    } -> tensor<4x64xi8>
    %76 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%51, %60, %cst_10 : tensor<4x64xi1>, tensor<4x64xi8>, tensor<4x64xi8>) outs(%59 : tensor<4x64xi8>) {
    ^bb0(%in: i1, %in_20: i8, %in_21: i8, %out: i8):
      %86 = arith.select %in, %in_20, %in_21 : i8
      linalg.yield %86 : i8
    } -> tensor<4x64xi8>
    %77 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%53, %75, %76 : tensor<4x64xi1>, tensor<4x64xi8>, tensor<4x64xi8>) outs(%59 : tensor<4x64xi8>) {
    ^bb0(%in: i1, %in_20: i8, %in_21: i8, %out: i8):
      %86 = arith.select %in, %in_20, %in_21 : i8
      linalg.yield %86 : i8
    } -> tensor<4x64xi8>
    %78 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%44 : tensor<4x64xi32>) outs(%43 : tensor<4x64xi32>) {
    ^bb0(%in: i32, %out: i32):
      %86 = arith.shrsi %in, %c28_i32 : i32
      linalg.yield %86 : i32
    } -> tensor<4x64xi32>
    %79 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%78 : tensor<4x64xi32>) outs(%59 : tensor<4x64xi8>) {
    ^bb0(%in: i32, %out: i8):
      %86 = arith.trunci %in : i32 to i8
      linalg.yield %86 : i8
    } -> tensor<4x64xi8>
    %80 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%79 : tensor<4x64xi8>) outs(%59 : tensor<4x64xi8>) {
    ^bb0(%in: i8, %out: i8):
      %86 = arith.andi %in, %c8_i8 : i8
      linalg.yield %86 : i8
    } -> tensor<4x64xi8>
    %81 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%77, %80 : tensor<4x64xi8>, tensor<4x64xi8>) outs(%59 : tensor<4x64xi8>) {
    ^bb0(%in: i8, %in_20: i8, %out: i8):
      %86 = arith.ori %in, %in_20 : i8
      linalg.yield %86 : i8
    } -> tensor<4x64xi8>
    %collapsed_16 = tensor.collapse_shape %81 [[0, 1]] : tensor<4x64xi8> into tensor<256xi8>
    %extracted_slice = tensor.extract_slice %collapsed_16[0] [128] [2] : tensor<256xi8> to tensor<128xi8>
    %extracted_slice_17 = tensor.extract_slice %collapsed_16[1] [128] [2] : tensor<256xi8> to tensor<128xi8>
    %82 = tensor.empty() : tensor<128xi8>
    %83 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = ["parallel"]} ins(%extracted_slice : tensor<128xi8>) outs(%82 : tensor<128xi8>) {
    ^bb0(%in: i8, %out: i8):
      %86 = arith.shli %in, %c4_i8 : i8
      linalg.yield %86 : i8
    } -> tensor<128xi8>
    // expected-remark @below {{Reason="differs from every runtime quantizer"}}
    %84 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = ["parallel"]} ins(%extracted_slice_17, %83 : tensor<128xi8>, tensor<128xi8>) outs(%82 : tensor<128xi8>) {
    ^bb0(%in: i8, %in_20: i8, %out: i8):
      %86 = arith.ori %in, %in_20 : i8
      linalg.yield %86 : i8
    } -> tensor<128xi8>
    %expanded_18 = tensor.expand_shape %84 [[0, 1]] output_shape [4, 32] : tensor<128xi8> into tensor<4x32xi8>
    %85 = tensor.bitcast %29 : tensor<4x2x1xi8> to tensor<4x2x1xf8E8M0FNU>
    %collapsed_19 = tensor.collapse_shape %85 [[0], [1, 2]] : tensor<4x2x1xf8E8M0FNU> into tensor<4x2xf8E8M0FNU>
    return %expanded_18, %collapsed_19 : tensor<4x32xi8>, tensor<4x2xf8E8M0FNU>
  }

  // A hand-written per-tensor FP8 quantizer whose amax is clamped at an
  // epsilon (f32 here; torchao.float8 clamps at 1e-12 in f64,
  // test/Frontend/corpus/silu_fp8_tensorwise_bf16.mlir): raised with that
  // epsilon. The scale the function returns is computed from the amax alone:
  // it stays, and reads the raised op's amax.
  func.func @per_tensor_epsilon(%x: tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<f32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<f32>) {
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
    %e1 = tensor.empty() : tensor<4x64xf8E4M3FN>
    // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.0e-12> (assuming finite inputs)"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<4x64xf32>, tensor<f32>) outs(%e1 : tensor<4x64xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y = arith.mulf %in, %s : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %c0 = arith.maximumf %y, %lo : f32
      %c1 = arith.minimumf %c0, %hi : f32
      %t = arith.truncf %c1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<4x64xf8E4M3FN>
    return %q, %scale : tensor<4x64xf8E4M3FN>, tensor<f32>
  }

  // The scale truncated to a power of two (its bits & 0xFF800000, TE's
  // option): raised with pow2_scale.
  func.func @per_tensor_pow2(%x: tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<f32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<f32>) {
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
      %s0 = arith.divf %c448, %g : f32
      %bits = arith.bitcast %s0 : f32 to i32
      %mask = arith.constant -8388608 : i32
      %pb = arith.andi %bits, %mask : i32
      %s = arith.bitcast %pb : i32 to f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %e1 = tensor.empty() : tensor<4x64xf8E4M3FN>
    // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.0e-12, pow2_scale = true> (assuming finite inputs)"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<4x64xf32>, tensor<f32>) outs(%e1 : tensor<4x64xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y = arith.mulf %in, %s : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %c0 = arith.maximumf %y, %lo : f32
      %c1 = arith.minimumf %c0, %hi : f32
      %t = arith.truncf %c1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<4x64xf8E4M3FN>
    return %q, %scale : tensor<4x64xf8E4M3FN>, tensor<f32>
  }

  // The same on [2048, 4096]: checked on a copy of the region on [4, 64]
  // (elementwise maps, a full reduction, 0-d steps: the same function on
  // any shape), so its size does not matter.
  func.func @per_tensor_epsilon_large(%x: tensor<2048x4096xf32>) -> (tensor<2048x4096xf8E4M3FN>, tensor<f32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<2048x4096xf32>) outs(%init : tensor<f32>) {
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
    %e1 = tensor.empty() : tensor<2048x4096xf8E4M3FN>
    // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.0e-12> (assuming finite inputs)"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<2048x4096xf32>, tensor<f32>) outs(%e1 : tensor<2048x4096xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y = arith.mulf %in, %s : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %c0 = arith.maximumf %y, %lo : f32
      %c1 = arith.minimumf %c0, %hi : f32
      %t = arith.truncf %c1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<2048x4096xf8E4M3FN>
    return %q, %scale : tensor<2048x4096xf8E4M3FN>, tensor<f32>
  }

  // A body that reads its position (column 0 zeroed) is not the same
  // function on a small copy: checked on the real shape, which is too large.
  func.func @negative_per_tensor_positional_large(%x: tensor<2048x4096xf32>) -> (tensor<2048x4096xf8E4M3FN>, tensor<f32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<2048x4096xf32>) outs(%init : tensor<f32>) {
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
    %e1 = tensor.empty() : tensor<2048x4096xf8E4M3FN>
    // expected-remark @below {{Reason="unsupported shape", Remark="the exactness check of a per-tensor quantizer evaluates every element (the amax reads them all): 8388608 elements exceed its limit of 262144, and it has no copy on fewer rows: a body of the quantizer reads its position (linalg.index)"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<2048x4096xf32>, tensor<f32>) outs(%e1 : tensor<2048x4096xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %col = linalg.index 1 : index
      %c0i = arith.constant 0 : index
      %first = arith.cmpi eq, %col, %c0i : index
      %y0 = arith.mulf %in, %s : f32
      %zf = arith.constant 0.0 : f32
      %y = arith.select %first, %zf, %y0 : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %c0 = arith.maximumf %y, %lo : f32
      %c1 = arith.minimumf %c0, %hi : f32
      %t = arith.truncf %c1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<2048x4096xf8E4M3FN>
    return %q, %scale : tensor<2048x4096xf8E4M3FN>, tensor<f32>
  }

  // Past the exactness check's limit, its amax over a flattened input: the
  // reshape keeps rows whole, so the check runs on a copy with 4 rows.
  func.func @per_tensor_flat_amax_large(%x: tensor<512x513xf32>) -> (tensor<512x513xf8E4M3FN>, tensor<f32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %flat = tensor.collapse_shape %x [[0, 1]] : tensor<512x513xf32> into tensor<262656xf32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%flat : tensor<262656xf32>) outs(%init : tensor<f32>) {
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
    %e1 = tensor.empty() : tensor<512x513xf8E4M3FN>
    // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<fp8_e4m3, rowwise, epsilon = 1.0e-12> (assuming finite inputs)"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<512x513xf32>, tensor<f32>) outs(%e1 : tensor<512x513xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y = arith.mulf %in, %s : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %c0 = arith.maximumf %y, %lo : f32
      %c1 = arith.minimumf %c0, %hi : f32
      %t = arith.truncf %c1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<512x513xf8E4M3FN>
    return %q, %scale : tensor<512x513xf8E4M3FN>, tensor<f32>
  }

  // Past the exactness check's limit, and not checkable on a copy with fewer
  // rows (the amax reads a reshape of the input that splits its rows):
  // declined with the reason.
  func.func @negative_per_tensor_too_large(%x: tensor<512x513xf32>) -> (tensor<512x513xf8E4M3FN>, tensor<f32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %flat = tensor.collapse_shape %x [[0, 1]] : tensor<512x513xf32> into tensor<262656xf32>
    %re = tensor.expand_shape %flat [[0, 1]] output_shape [513, 512] : tensor<262656xf32> into tensor<513x512xf32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%re : tensor<513x512xf32>) outs(%init : tensor<f32>) {
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
    %e1 = tensor.empty() : tensor<512x513xf8E4M3FN>
    // expected-remark @below {{Reason="unsupported shape", Remark="the exactness check of a per-tensor quantizer evaluates every element (the amax reads them all): 262656 elements exceed its limit of 262144, and it has no copy on fewer rows: a reshape that splits the input's rows"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<512x513xf32>, tensor<f32>) outs(%e1 : tensor<512x513xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y = arith.mulf %in, %s : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %c0 = arith.maximumf %y, %lo : f32
      %c1 = arith.minimumf %c0, %hi : f32
      %t = arith.truncf %c1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<512x513xf8E4M3FN>
    return %q, %scale : tensor<512x513xf8E4M3FN>, tensor<f32>
  }

  // Past the limit, its amax over row 0 broadcast to every row (a constant
  // in an indexing map): no copy on fewer rows computes the same.
  func.func @negative_per_tensor_row_zero(%x: tensor<512x513xf32>) -> (tensor<512x513xf8E4M3FN>, tensor<f32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %e2 = tensor.empty() : tensor<512x513xf32>
    %row0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<512x513xf32>) outs(%e2 : tensor<512x513xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<512x513xf32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%row0 : tensor<512x513xf32>) outs(%init : tensor<f32>) {
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
    %e1 = tensor.empty() : tensor<512x513xf8E4M3FN>
    // expected-remark @below {{Reason="unsupported shape", Remark="the exactness check of a per-tensor quantizer evaluates every element (the amax reads them all): 262656 elements exceed its limit of 262144, and it has no copy on fewer rows: an indexing map other than dimensions and constants over the input's rows"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<512x513xf32>, tensor<f32>) outs(%e1 : tensor<512x513xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y = arith.mulf %in, %s : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %c0 = arith.maximumf %y, %lo : f32
      %c1 = arith.minimumf %c0, %hi : f32
      %t = arith.truncf %c1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<512x513xf8E4M3FN>
    return %q, %scale : tensor<512x513xf8E4M3FN>, tensor<f32>
  }

  // Past the limit, its amax over a tensor.reshape of the input (a shape
  // operand, as torch-mlir writes views of dynamic tensors): an op the copy
  // does not model on the rows.
  func.func @negative_per_tensor_reshape_op(%x: tensor<512x513xf32>) -> (tensor<512x513xf8E4M3FN>, tensor<f32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %shape = arith.constant dense<262656> : tensor<1xindex>
    %flat = tensor.reshape %x(%shape) : (tensor<512x513xf32>, tensor<1xindex>) -> tensor<262656xf32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%flat : tensor<262656xf32>) outs(%init : tensor<f32>) {
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
    %e1 = tensor.empty() : tensor<512x513xf8E4M3FN>
    // expected-remark @below {{Reason="unsupported shape", Remark="the exactness check of a per-tensor quantizer evaluates every element (the amax reads them all): 262656 elements exceed its limit of 262144, and it has no copy on fewer rows: 'tensor.reshape' reads the input's rows"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<512x513xf32>, tensor<f32>) outs(%e1 : tensor<512x513xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y = arith.mulf %in, %s : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %c0 = arith.maximumf %y, %lo : f32
      %c1 = arith.minimumf %c0, %hi : f32
      %t = arith.truncf %c1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<512x513xf8E4M3FN>
    return %q, %scale : tensor<512x513xf8E4M3FN>, tensor<f32>
  }

  // Without a guard for a zero amax (448 / 0 = Inf, 0 * Inf = NaN) the
  // written quantizer differs from the runtime's rule (scale 1 for amax 0).
  func.func @negative_per_tensor(%x: tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<f32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x64xf32>) outs(%init : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %a = math.absf %in : f32
      %m = arith.maximumf %a, %out : f32
      linalg.yield %m : f32
    } -> tensor<f32>
    %scale = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%amax : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %c448 = arith.constant 448.0 : f32
      %s = arith.divf %c448, %in : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %e1 = tensor.empty() : tensor<4x64xf8E4M3FN>
    // expected-remark @below {{Reason="differs from every runtime quantizer", Remark="closest is #fusion.quant<fp8_e4m3, rowwise> (256 differing elements in the probes); first: probe 3, element 0: x = 0.000000e+00 (tensor amax 0.000000e+00, runtime scale_inv 1.000000e+00) gives 0x7f in the IR, 0x00 in the runtime"}}
    %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<4x64xf32>, tensor<f32>) outs(%e1 : tensor<4x64xf8E4M3FN>) {
    ^bb0(%in: f32, %s: f32, %out: f8E4M3FN):
      %y = arith.mulf %in, %s : f32
      %lo = arith.constant -448.0 : f32
      %hi = arith.constant 448.0 : f32
      %c0 = arith.maximumf %y, %lo : f32
      %c1 = arith.minimumf %c0, %hi : f32
      %t = arith.truncf %c1 : f32 to f8E4M3FN
      linalg.yield %t : f8E4M3FN
    } -> tensor<4x64xf8E4M3FN>
    return %q, %scale : tensor<4x64xf8E4M3FN>, tensor<f32>
  }
}
