// Hand-edited from silu_nvfp4_bf16_blocked_2x200x1024.mlir (tools/frontend-corpus/generate.py): the scales of each batch are padded to 256 rows (two 128-row tiles a batch), where to_blocked and the runtime pad the 400 rows of both batches to 512 together.
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> ()>
#map2 = affine_map<() -> ()>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
#map5 = affine_map<(d0, d1) -> ()>
#map6 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map7 = affine_map<(d0) -> (d0)>
module {
  func.func @main(%arg0: tensor<2x200x1024xbf16>) -> (tensor<2x200x512xi8>, tensor<32768xf8E4M3FN>) {
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant 1.000000e+00 : f32
    %cst_0 = arith.constant 0xFF80 : bf16
    %cst_1 = arith.constant 0xFF800000 : f32
    %cst_2 = arith.constant 0.000000e+00 : f32
    %cst_3 = arith.constant dense<0.000000e+00> : tensor<512x64xf8E4M3FN>
    %cst_4 = arith.constant 6.000000e+00 : f64
    %cst_5 = arith.constant 2.688000e+03 : f32
    %cst_6 = arith.constant 6.000000e+00 : f32
    %cst_7 = arith.constant 1.562500e-02 : f32
    %cst_8 = arith.constant 4.480000e+02 : f32
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
    %cst_10 = arith.constant dense<7> : tensor<2x200x1024xi8>
    %cst_11 = arith.constant dense<1249902592> : tensor<i32>
    %0 = tensor.empty() : tensor<2x200x1024xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x200x1024xbf16>) outs(%0 : tensor<2x200x1024xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %77 = arith.extf %in : bf16 to f32
      linalg.yield %77 : f32
    } -> tensor<2x200x1024xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1 : tensor<2x200x1024xf32>) outs(%0 : tensor<2x200x1024xf32>) {
    ^bb0(%in: f32, %out: f32):
      %77 = arith.negf %in : f32
      %78 = math.exp %77 : f32
      %79 = arith.addf %78, %cst : f32
      %80 = arith.divf %cst, %79 : f32
      linalg.yield %80 : f32
    } -> tensor<2x200x1024xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %2 : tensor<2x200x1024xf32>, tensor<2x200x1024xf32>) outs(%0 : tensor<2x200x1024xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %77 = arith.mulf %in, %in_25 : f32
      linalg.yield %77 : f32
    } -> tensor<2x200x1024xf32>
    %4 = tensor.empty() : tensor<2x200x1024xbf16>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%3 : tensor<2x200x1024xf32>) outs(%4 : tensor<2x200x1024xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %77 = arith.truncf %in : f32 to bf16
      linalg.yield %77 : bf16
    } -> tensor<2x200x1024xbf16>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5 : tensor<2x200x1024xbf16>) outs(%4 : tensor<2x200x1024xbf16>) {
    ^bb0(%in: bf16, %out: bf16):
      %77 = math.absf %in : bf16
      linalg.yield %77 : bf16
    } -> tensor<2x200x1024xbf16>
    %7 = tensor.empty() : tensor<bf16>
    %8 = linalg.fill ins(%cst_0 : bf16) outs(%7 : tensor<bf16>) -> tensor<bf16>
    %9 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction", "reduction"]} ins(%6 : tensor<2x200x1024xbf16>) outs(%8 : tensor<bf16>) {
    ^bb0(%in: bf16, %out: bf16):
      %77 = arith.maximumf %in, %out : bf16
      linalg.yield %77 : bf16
    } -> tensor<bf16>
    %10 = tensor.empty() : tensor<f32>
    %11 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%9 : tensor<bf16>) outs(%10 : tensor<f32>) {
    ^bb0(%in: bf16, %out: f32):
      %77 = arith.extf %in : bf16 to f32
      linalg.yield %77 : f32
    } -> tensor<f32>
    %12 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%11 : tensor<f32>) outs(%10 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %77 = arith.divf %in, %cst_5 : f32
      linalg.yield %77 : f32
    } -> tensor<f32>
    %13 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5 : tensor<2x200x1024xbf16>) outs(%0 : tensor<2x200x1024xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %77 = arith.extf %in : bf16 to f32
      linalg.yield %77 : f32
    } -> tensor<2x200x1024xf32>
    %collapsed = tensor.collapse_shape %13 [[0], [1, 2]] : tensor<2x200x1024xf32> into tensor<2x204800xf32>
    %expanded = tensor.expand_shape %collapsed [[0], [1, 2]] output_shape [2, 12800, 16] : tensor<2x204800xf32> into tensor<2x12800x16xf32>
    %14 = tensor.empty() : tensor<2x12800x16xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x12800x16xf32>) outs(%14 : tensor<2x12800x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %77 = math.absf %in : f32
      linalg.yield %77 : f32
    } -> tensor<2x12800x16xf32>
    %16 = tensor.empty() : tensor<2x12800xi64>
    %17 = linalg.fill ins(%c0_i64 : i64) outs(%16 : tensor<2x12800xi64>) -> tensor<2x12800xi64>
    %18 = tensor.empty() : tensor<2x12800xf32>
    %19 = linalg.fill ins(%cst_1 : f32) outs(%18 : tensor<2x12800xf32>) -> tensor<2x12800xf32>
    %20:2 = linalg.generic {indexing_maps = [#map, #map3, #map3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%15 : tensor<2x12800x16xf32>) outs(%19, %17 : tensor<2x12800xf32>, tensor<2x12800xi64>) {
    ^bb0(%in: f32, %out: f32, %out_25: i64):
      %77 = linalg.index 2 : index
      %78 = arith.index_cast %77 : index to i64
      %79 = arith.maximumf %in, %out : f32
      %80 = arith.cmpf ogt, %in, %out : f32
      %81 = arith.select %80, %78, %out_25 : i64
      linalg.yield %79, %81 : f32, i64
    } -> (tensor<2x12800xf32>, tensor<2x12800xi64>)
    %21 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%20#0 : tensor<2x12800xf32>) outs(%18 : tensor<2x12800xf32>) {
    ^bb0(%in: f32, %out: f32):
      %77 = arith.divf %in, %cst_6 : f32
      linalg.yield %77 : f32
    } -> tensor<2x12800xf32>
    %22 = linalg.generic {indexing_maps = [#map4, #map5, #map4], iterator_types = ["parallel", "parallel"]} ins(%21, %12 : tensor<2x12800xf32>, tensor<f32>) outs(%18 : tensor<2x12800xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %77 = arith.divf %in, %in_25 : f32
      linalg.yield %77 : f32
    } -> tensor<2x12800xf32>
    %23 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%22 : tensor<2x12800xf32>) outs(%18 : tensor<2x12800xf32>) {
    ^bb0(%in: f32, %out: f32):
      %77 = arith.cmpf ult, %in, %cst_7 : f32
      %78 = arith.select %77, %cst_7, %in : f32
      %79 = arith.cmpf ugt, %78, %cst_8 : f32
      %80 = arith.select %79, %cst_8, %78 : f32
      linalg.yield %80 : f32
    } -> tensor<2x12800xf32>
    %24 = tensor.empty() : tensor<2x12800xf8E4M3FN>
    %25 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%23 : tensor<2x12800xf32>) outs(%24 : tensor<2x12800xf8E4M3FN>) {
    ^bb0(%in: f32, %out: f8E4M3FN):
      %77 = arith.truncf %in : f32 to f8E4M3FN
      linalg.yield %77 : f8E4M3FN
    } -> tensor<2x12800xf8E4M3FN>
    %26 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%25 : tensor<2x12800xf8E4M3FN>) outs(%18 : tensor<2x12800xf32>) {
    ^bb0(%in: f8E4M3FN, %out: f32):
      %77 = arith.extf %in : f8E4M3FN to f32
      linalg.yield %77 : f32
    } -> tensor<2x12800xf32>
    %27 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%12 : tensor<f32>) outs(%10 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %77 = arith.cmpf one, %in, %cst_2 : f32
      cf.assert %77, "unimplemented: tensor with zero element"
      %78 = arith.divf %cst, %in : f32
      linalg.yield %78 : f32
    } -> tensor<f32>
    %28 = linalg.generic {indexing_maps = [#map5, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%27, %26 : tensor<f32>, tensor<2x12800xf32>) outs(%18 : tensor<2x12800xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %77 = arith.divf %in, %in_25 : f32
      linalg.yield %77 : f32
    } -> tensor<2x12800xf32>
    %expanded_12 = tensor.expand_shape %28 [[0], [1, 2]] output_shape [2, 12800, 1] : tensor<2x12800xf32> into tensor<2x12800x1xf32>
    %29 = linalg.generic {indexing_maps = [#map, #map6, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded, %expanded_12 : tensor<2x12800x16xf32>, tensor<2x12800x1xf32>) outs(%14 : tensor<2x12800x16xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %77 = arith.mulf %in, %in_25 : f32
      linalg.yield %77 : f32
    } -> tensor<2x12800x16xf32>
    %30 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%29 : tensor<2x12800x16xf32>) outs(%14 : tensor<2x12800x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %77 = arith.cmpf ult, %in, %cst_9 : f32
      %78 = arith.select %77, %cst_9, %in : f32
      %79 = arith.cmpf ugt, %78, %cst_6 : f32
      %80 = arith.select %79, %cst_6, %78 : f32
      linalg.yield %80 : f32
    } -> tensor<2x12800x16xf32>
    %collapsed_13 = tensor.collapse_shape %30 [[0], [1, 2]] : tensor<2x12800x16xf32> into tensor<2x204800xf32>
    %expanded_14 = tensor.expand_shape %collapsed_13 [[0], [1, 2]] output_shape [2, 200, 1024] : tensor<2x204800xf32> into tensor<2x200x1024xf32>
    %31 = tensor.bitcast %cst_11 : tensor<i32> to tensor<f32>
    %32 = tensor.bitcast %expanded_14 : tensor<2x200x1024xf32> to tensor<2x200x1024xi32>
    %33 = tensor.empty() : tensor<2x200x1024xi32>
    %34 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%32 : tensor<2x200x1024xi32>) outs(%33 : tensor<2x200x1024xi32>) {
    ^bb0(%in: i32, %out: i32):
      %77 = arith.andi %in, %c-2147483648_i32 : i32
      linalg.yield %77 : i32
    } -> tensor<2x200x1024xi32>
    %35 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%32, %34 : tensor<2x200x1024xi32>, tensor<2x200x1024xi32>) outs(%33 : tensor<2x200x1024xi32>) {
    ^bb0(%in: i32, %in_25: i32, %out: i32):
      %77 = arith.xori %in, %in_25 : i32
      linalg.yield %77 : i32
    } -> tensor<2x200x1024xi32>
    %36 = tensor.bitcast %35 : tensor<2x200x1024xi32> to tensor<2x200x1024xf32>
    %37 = tensor.empty() : tensor<2x200x1024xi1>
    %38 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%36 : tensor<2x200x1024xf32>) outs(%37 : tensor<2x200x1024xi1>) {
    ^bb0(%in: f32, %out: i1):
      %77 = arith.extf %in : f32 to f64
      %78 = arith.cmpf oge, %77, %cst_4 : f64
      linalg.yield %78 : i1
    } -> tensor<2x200x1024xi1>
    %39 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%38 : tensor<2x200x1024xi1>) outs(%37 : tensor<2x200x1024xi1>) {
    ^bb0(%in: i1, %out: i1):
      %77 = arith.cmpi eq, %in, %false : i1
      linalg.yield %77 : i1
    } -> tensor<2x200x1024xi1>
    %40 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%36 : tensor<2x200x1024xf32>) outs(%37 : tensor<2x200x1024xi1>) {
    ^bb0(%in: f32, %out: i1):
      %77 = arith.cmpf olt, %in, %cst : f32
      linalg.yield %77 : i1
    } -> tensor<2x200x1024xi1>
    %41 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%39, %40 : tensor<2x200x1024xi1>, tensor<2x200x1024xi1>) outs(%37 : tensor<2x200x1024xi1>) {
    ^bb0(%in: i1, %in_25: i1, %out: i1):
      %77 = arith.andi %in, %in_25 : i1
      linalg.yield %77 : i1
    } -> tensor<2x200x1024xi1>
    %42 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%38, %41 : tensor<2x200x1024xi1>, tensor<2x200x1024xi1>) outs(%37 : tensor<2x200x1024xi1>) {
    ^bb0(%in: i1, %in_25: i1, %out: i1):
      %77 = arith.ori %in, %in_25 : i1
      linalg.yield %77 : i1
    } -> tensor<2x200x1024xi1>
    %43 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%42 : tensor<2x200x1024xi1>) outs(%37 : tensor<2x200x1024xi1>) {
    ^bb0(%in: i1, %out: i1):
      %77 = arith.cmpi eq, %in, %false : i1
      linalg.yield %77 : i1
    } -> tensor<2x200x1024xi1>
    %44 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%36, %31 : tensor<2x200x1024xf32>, tensor<f32>) outs(%0 : tensor<2x200x1024xf32>) {
    ^bb0(%in: f32, %in_25: f32, %out: f32):
      %77 = arith.addf %in, %in_25 : f32
      linalg.yield %77 : f32
    } -> tensor<2x200x1024xf32>
    %45 = tensor.bitcast %44 : tensor<2x200x1024xf32> to tensor<2x200x1024xi32>
    %46 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%45 : tensor<2x200x1024xi32>) outs(%33 : tensor<2x200x1024xi32>) {
    ^bb0(%in: i32, %out: i32):
      %77 = arith.subi %in, %c1249902592_i32 : i32
      linalg.yield %77 : i32
    } -> tensor<2x200x1024xi32>
    %47 = tensor.bitcast %46 : tensor<2x200x1024xi32> to tensor<2x200x1024xf32>
    %48 = tensor.bitcast %47 : tensor<2x200x1024xf32> to tensor<2x200x1024xi32>
    %49 = tensor.empty() : tensor<2x200x1024xi8>
    %50 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%48 : tensor<2x200x1024xi32>) outs(%49 : tensor<2x200x1024xi8>) {
    ^bb0(%in: i32, %out: i8):
      %77 = arith.trunci %in : i32 to i8
      linalg.yield %77 : i8
    } -> tensor<2x200x1024xi8>
    %51 = tensor.bitcast %36 : tensor<2x200x1024xf32> to tensor<2x200x1024xi32>
    %52 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%51 : tensor<2x200x1024xi32>) outs(%33 : tensor<2x200x1024xi32>) {
    ^bb0(%in: i32, %out: i32):
      %77 = arith.shrsi %in, %c22_i32 : i32
      linalg.yield %77 : i32
    } -> tensor<2x200x1024xi32>
    %53 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%52 : tensor<2x200x1024xi32>) outs(%33 : tensor<2x200x1024xi32>) {
    ^bb0(%in: i32, %out: i32):
      %77 = arith.andi %in, %c1_i32 : i32
      linalg.yield %77 : i32
    } -> tensor<2x200x1024xi32>
    %54 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%51 : tensor<2x200x1024xi32>) outs(%33 : tensor<2x200x1024xi32>) {
    ^bb0(%in: i32, %out: i32):
      %77 = arith.addi %in, %c-1054867457_i32 : i32
      linalg.yield %77 : i32
    } -> tensor<2x200x1024xi32>
    %55 = tensor.bitcast %54 : tensor<2x200x1024xi32> to tensor<2x200x1024xf32>
    %56 = tensor.bitcast %55 : tensor<2x200x1024xf32> to tensor<2x200x1024xi32>
    %57 = tensor.bitcast %56 : tensor<2x200x1024xi32> to tensor<2x200x1024xf32>
    %58 = tensor.bitcast %57 : tensor<2x200x1024xf32> to tensor<2x200x1024xi32>
    %59 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%58, %53 : tensor<2x200x1024xi32>, tensor<2x200x1024xi32>) outs(%33 : tensor<2x200x1024xi32>) {
    ^bb0(%in: i32, %in_25: i32, %out: i32):
      %77 = arith.addi %in, %in_25 : i32
      linalg.yield %77 : i32
    } -> tensor<2x200x1024xi32>
    %60 = tensor.bitcast %59 : tensor<2x200x1024xi32> to tensor<2x200x1024xf32>
    %61 = tensor.bitcast %60 : tensor<2x200x1024xf32> to tensor<2x200x1024xi32>
    %62 = tensor.bitcast %61 : tensor<2x200x1024xi32> to tensor<2x200x1024xf32>
    %63 = tensor.bitcast %62 : tensor<2x200x1024xf32> to tensor<2x200x1024xi32>
    %64 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%63 : tensor<2x200x1024xi32>) outs(%33 : tensor<2x200x1024xi32>) {
    ^bb0(%in: i32, %out: i32):
      %77 = arith.shrsi %in, %c22_i32 : i32
      linalg.yield %77 : i32
    } -> tensor<2x200x1024xi32>
    %65 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%64 : tensor<2x200x1024xi32>) outs(%49 : tensor<2x200x1024xi8>) {
    ^bb0(%in: i32, %out: i8):
      %77 = arith.trunci %in : i32 to i8
      linalg.yield %77 : i8
    } -> tensor<2x200x1024xi8>
    %66 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%41, %50, %cst_10 : tensor<2x200x1024xi1>, tensor<2x200x1024xi8>, tensor<2x200x1024xi8>) outs(%49 : tensor<2x200x1024xi8>) {
    ^bb0(%in: i1, %in_25: i8, %in_26: i8, %out: i8):
      %77 = arith.select %in, %in_25, %in_26 : i8
      linalg.yield %77 : i8
    } -> tensor<2x200x1024xi8>
    %67 = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%43, %65, %66 : tensor<2x200x1024xi1>, tensor<2x200x1024xi8>, tensor<2x200x1024xi8>) outs(%49 : tensor<2x200x1024xi8>) {
    ^bb0(%in: i1, %in_25: i8, %in_26: i8, %out: i8):
      %77 = arith.select %in, %in_25, %in_26 : i8
      linalg.yield %77 : i8
    } -> tensor<2x200x1024xi8>
    %68 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%34 : tensor<2x200x1024xi32>) outs(%33 : tensor<2x200x1024xi32>) {
    ^bb0(%in: i32, %out: i32):
      %77 = arith.shrsi %in, %c28_i32 : i32
      linalg.yield %77 : i32
    } -> tensor<2x200x1024xi32>
    %69 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%68 : tensor<2x200x1024xi32>) outs(%49 : tensor<2x200x1024xi8>) {
    ^bb0(%in: i32, %out: i8):
      %77 = arith.trunci %in : i32 to i8
      linalg.yield %77 : i8
    } -> tensor<2x200x1024xi8>
    %70 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%69 : tensor<2x200x1024xi8>) outs(%49 : tensor<2x200x1024xi8>) {
    ^bb0(%in: i8, %out: i8):
      %77 = arith.andi %in, %c8_i8 : i8
      linalg.yield %77 : i8
    } -> tensor<2x200x1024xi8>
    %71 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%67, %70 : tensor<2x200x1024xi8>, tensor<2x200x1024xi8>) outs(%49 : tensor<2x200x1024xi8>) {
    ^bb0(%in: i8, %in_25: i8, %out: i8):
      %77 = arith.ori %in, %in_25 : i8
      linalg.yield %77 : i8
    } -> tensor<2x200x1024xi8>
    %collapsed_15 = tensor.collapse_shape %71 [[0, 1, 2]] : tensor<2x200x1024xi8> into tensor<409600xi8>
    %extracted_slice = tensor.extract_slice %collapsed_15[0] [204800] [2] : tensor<409600xi8> to tensor<204800xi8>
    %extracted_slice_16 = tensor.extract_slice %collapsed_15[1] [204800] [2] : tensor<409600xi8> to tensor<204800xi8>
    %72 = tensor.empty() : tensor<204800xi8>
    %73 = linalg.generic {indexing_maps = [#map7, #map7], iterator_types = ["parallel"]} ins(%extracted_slice_16 : tensor<204800xi8>) outs(%72 : tensor<204800xi8>) {
    ^bb0(%in: i8, %out: i8):
      %77 = arith.shli %in, %c4_i8 : i8
      linalg.yield %77 : i8
    } -> tensor<204800xi8>
    %74 = linalg.generic {indexing_maps = [#map7, #map7, #map7], iterator_types = ["parallel"]} ins(%extracted_slice, %73 : tensor<204800xi8>, tensor<204800xi8>) outs(%72 : tensor<204800xi8>) {
    ^bb0(%in: i8, %in_25: i8, %out: i8):
      %77 = arith.ori %in, %in_25 : i8
      linalg.yield %77 : i8
    } -> tensor<204800xi8>
    %expanded_17 = tensor.expand_shape %74 [[0, 1, 2]] output_shape [2, 200, 512] : tensor<204800xi8> into tensor<2x200x512xi8>
    %collapsed_18 = tensor.collapse_shape %25 [[0, 1]] : tensor<2x12800xf8E4M3FN> into tensor<25600xf8E4M3FN>
    %expanded_19 = tensor.expand_shape %collapsed_18 [[0, 1, 2]] output_shape [2, 200, 64] : tensor<25600xf8E4M3FN> into tensor<2x200x64xf8E4M3FN>
    %cst_batch = arith.constant dense<0.000000e+00> : tensor<2x256x64xf8E4M3FN>
    %inserted_batch = tensor.insert_slice %expanded_19 into %cst_batch[0, 0, 0] [2, 200, 64] [1, 1, 1] : tensor<2x200x64xf8E4M3FN> into tensor<2x256x64xf8E4M3FN>
    %inserted_slice = tensor.collapse_shape %inserted_batch [[0, 1], [2]] : tensor<2x256x64xf8E4M3FN> into tensor<512x64xf8E4M3FN>
    %expanded_20 = tensor.expand_shape %inserted_slice [[0, 1], [2, 3]] output_shape [4, 128, 16, 4] : tensor<512x64xf8E4M3FN> into tensor<4x128x16x4xf8E4M3FN>
    %75 = tensor.empty() : tensor<4x16x128x4xf8E4M3FN>
    %transposed = linalg.transpose ins(%expanded_20 : tensor<4x128x16x4xf8E4M3FN>) outs(%75 : tensor<4x16x128x4xf8E4M3FN>) permutation = [0, 2, 1, 3] 
    %collapsed_21 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<4x16x128x4xf8E4M3FN> into tensor<64x128x4xf8E4M3FN>
    %expanded_22 = tensor.expand_shape %collapsed_21 [[0], [1, 2], [3]] output_shape [64, 4, 32, 4] : tensor<64x128x4xf8E4M3FN> into tensor<64x4x32x4xf8E4M3FN>
    %76 = tensor.empty() : tensor<64x32x4x4xf8E4M3FN>
    %transposed_23 = linalg.transpose ins(%expanded_22 : tensor<64x4x32x4xf8E4M3FN>) outs(%76 : tensor<64x32x4x4xf8E4M3FN>) permutation = [0, 2, 1, 3] 
    %collapsed_24 = tensor.collapse_shape %transposed_23 [[0, 1, 2, 3]] : tensor<64x32x4x4xf8E4M3FN> into tensor<32768xf8E4M3FN>
    return %expanded_17, %collapsed_24 : tensor<2x200x512xi8>, tensor<32768xf8E4M3FN>
  }
}

