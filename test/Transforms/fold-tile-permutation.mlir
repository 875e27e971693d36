// RUN: fusion-opt %s --fusion-raise-quantize | FileCheck %s
// RUN: fusion-opt %s --fusion-raise-quantize --remarks-filter=fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: fusion-opt %s --fusion-pipeline -o /dev/null

// The fold of a permuted tile quantizer (lib/Transforms/FoldTilePermutation.cpp,
// run by fusion-raise-quantize on every fusion.quantize): FP8 block rows
// of 1 x R*C that are the R x C tiles of a matrix, permuted into rows, the
// codes permuted back, become block = R x C on the matrix itself.

// torchao's weight-tile layout (reshape, permute, reshape), as
// linalg.transpose; the scales reshaped to the tile grid.
// CHECK-LABEL: func.func @torchao_tiles
//  CHECK-SAME: (%[[X:.*]]: tensor<256x384xbf16>)
//   CHECK-NOT: linalg.transpose
//       CHECK: %[[Q:.*]]:2 = fusion.quantize %[[X]] as quant<fp8_block_e4m3, rowwise, block = 128x128> outs({{.*}}) : (tensor<256x384xbf16>, tensor<256x384xf8E4M3FN>, tensor<2x3xf32>)
//   CHECK-NOT: linalg.transpose
//       CHECK: return %[[Q]]#0, %[[Q]]#1
// REMARK: [Passed] RaiseQuantize | Category:fusion | Function=torchao_tiles | Remark="folded the tile permutation: the rows quantized are the 128x128 tiles of the matrix, quantized in place (block = 128x128; 6 reshapes and permutations removed)"
func.func @torchao_tiles(%x: tensor<256x384xbf16>) -> (tensor<256x384xf8E4M3FN>, tensor<2x3xf32>) {
  %e = tensor.expand_shape %x [[0, 1], [2, 3]] output_shape [2, 128, 3, 128] : tensor<256x384xbf16> into tensor<2x128x3x128xbf16>
  %t0 = tensor.empty() : tensor<2x3x128x128xbf16>
  %p = linalg.transpose ins(%e : tensor<2x128x3x128xbf16>) outs(%t0 : tensor<2x3x128x128xbf16>) permutation = [0, 2, 1, 3]
  %rows = tensor.collapse_shape %p [[0, 1], [2, 3]] : tensor<2x3x128x128xbf16> into tensor<6x16384xbf16>
  %d0 = tensor.empty() : tensor<6x16384xf8E4M3FN>
  %s0 = tensor.empty() : tensor<6x1xf32>
  %q:2 = fusion.quantize %rows as quant<fp8_block_e4m3, rowwise, block = 1x16384> outs(%d0, %s0)
      : (tensor<6x16384xbf16>, tensor<6x16384xf8E4M3FN>, tensor<6x1xf32>) -> (tensor<6x16384xf8E4M3FN>, tensor<6x1xf32>)
  %c4 = tensor.expand_shape %q#0 [[0, 1], [2, 3]] output_shape [2, 3, 128, 128] : tensor<6x16384xf8E4M3FN> into tensor<2x3x128x128xf8E4M3FN>
  %t1 = tensor.empty() : tensor<2x128x3x128xf8E4M3FN>
  %pb = linalg.transpose ins(%c4 : tensor<2x3x128x128xf8E4M3FN>) outs(%t1 : tensor<2x128x3x128xf8E4M3FN>) permutation = [0, 2, 1, 3]
  %codes = tensor.collapse_shape %pb [[0, 1], [2, 3]] : tensor<2x128x3x128xf8E4M3FN> into tensor<256x384xf8E4M3FN>
  %sf = tensor.collapse_shape %q#1 [[0, 1]] : tensor<6x1xf32> into tensor<6xf32>
  %sg = tensor.expand_shape %sf [[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
  return %codes, %sg : tensor<256x384xf8E4M3FN>, tensor<2x3xf32>
}

// The permutation as the linalg.generic torch-mlir's lowering leaves, the
// tile rows split 4 x 32 on the way, 64 x 32 tiles, the scales kept as
// [T, 1]: rebuilt from the tile grid by reshapes.
// CHECK-LABEL: func.func @generic_tiles_scales_as_rows
//       CHECK: %[[Q:.*]]:2 = fusion.quantize %{{.*}} as quant<fp8_block_e5m2, rowwise, block = 64x32> outs({{.*}}) : (tensor<128x64xf32>, tensor<128x64xf8E5M2>, tensor<2x2xf32>)
//       CHECK: %[[F:.*]] = tensor.collapse_shape %[[Q]]#1 {{\[\[}}0, 1]] : tensor<2x2xf32> into tensor<4xf32>
//       CHECK: %[[S:.*]] = tensor.expand_shape %[[F]] {{\[\[}}0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
//       CHECK: return %[[Q]]#0, %[[S]]
// REMARK: [Passed] RaiseQuantize | Category:fusion | Function=generic_tiles_scales_as_rows | Remark="folded the tile permutation: the rows quantized are the 64x32 tiles of the matrix, quantized in place (block = 64x32; 8 reshapes and permutations removed)"
#perm = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @generic_tiles_scales_as_rows(%x: tensor<128x64xf32>) -> (tensor<128x64xf8E5M2>, tensor<4x1xf32>) {
  %e = tensor.expand_shape %x [[0, 1], [2, 3]] output_shape [2, 64, 2, 32] : tensor<128x64xf32> into tensor<2x64x2x32xf32>
  %t0 = tensor.empty() : tensor<2x2x64x32xf32>
  %p = linalg.generic {indexing_maps = [#perm, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e : tensor<2x64x2x32xf32>) outs(%t0 : tensor<2x2x64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x64x32xf32>
  %rows = tensor.collapse_shape %p [[0, 1], [2, 3]] : tensor<2x2x64x32xf32> into tensor<4x2048xf32>
  %d0 = tensor.empty() : tensor<4x2048xf8E5M2>
  %s0 = tensor.empty() : tensor<4x1xf32>
  %q:2 = fusion.quantize %rows as quant<fp8_block_e5m2, rowwise, block = 1x2048> outs(%d0, %s0)
      : (tensor<4x2048xf32>, tensor<4x2048xf8E5M2>, tensor<4x1xf32>) -> (tensor<4x2048xf8E5M2>, tensor<4x1xf32>)
  %c3 = tensor.expand_shape %q#0 [[0, 1], [2, 3]] output_shape [2, 2, 4, 512] : tensor<4x2048xf8E5M2> into tensor<2x2x4x512xf8E5M2>
  %c4 = tensor.expand_shape %c3 [[0], [1], [2], [3, 4]] output_shape [2, 2, 4, 16, 32] : tensor<2x2x4x512xf8E5M2> into tensor<2x2x4x16x32xf8E5M2>
  %c5 = tensor.collapse_shape %c4 [[0], [1], [2, 3], [4]] : tensor<2x2x4x16x32xf8E5M2> into tensor<2x2x64x32xf8E5M2>
  %t1 = tensor.empty() : tensor<2x64x2x32xf8E5M2>
  %pb = linalg.generic {indexing_maps = [#perm, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c5 : tensor<2x2x64x32xf8E5M2>) outs(%t1 : tensor<2x64x2x32xf8E5M2>) {
  ^bb0(%in: f8E5M2, %out: f8E5M2):
    linalg.yield %in : f8E5M2
  } -> tensor<2x64x2x32xf8E5M2>
  %codes = tensor.collapse_shape %pb [[0, 1], [2, 3]] : tensor<2x64x2x32xf8E5M2> into tensor<128x64xf8E5M2>
  return %codes, %q#1 : tensor<128x64xf8E5M2>, tensor<4x1xf32>
}

// Declined: the codes stay in the tiles' order (the program wants the
// permuted copy).
// CHECK-LABEL: func.func @negative_codes_stay_permuted
//       CHECK: linalg.transpose
//       CHECK: fusion.quantize %{{.*}} as quant<fp8_block_e4m3, rowwise, block = 1x16384>
// REMARK: [Missed] RaiseQuantize | Category:fusion | Function=negative_codes_stay_permuted | Reason="permuted tiles not folded", Remark="the codes are not returned to the matrix's layout (they stay in the tiles' order)"
func.func @negative_codes_stay_permuted(%x: tensor<256x256xbf16>) -> (tensor<4x16384xf8E4M3FN>, tensor<4x1xf32>) {
  %e = tensor.expand_shape %x [[0, 1], [2, 3]] output_shape [2, 128, 2, 128] : tensor<256x256xbf16> into tensor<2x128x2x128xbf16>
  %t0 = tensor.empty() : tensor<2x2x128x128xbf16>
  %p = linalg.transpose ins(%e : tensor<2x128x2x128xbf16>) outs(%t0 : tensor<2x2x128x128xbf16>) permutation = [0, 2, 1, 3]
  %rows = tensor.collapse_shape %p [[0, 1], [2, 3]] : tensor<2x2x128x128xbf16> into tensor<4x16384xbf16>
  %d0 = tensor.empty() : tensor<4x16384xf8E4M3FN>
  %s0 = tensor.empty() : tensor<4x1xf32>
  %q:2 = fusion.quantize %rows as quant<fp8_block_e4m3, rowwise, block = 1x16384> outs(%d0, %s0)
      : (tensor<4x16384xbf16>, tensor<4x16384xf8E4M3FN>, tensor<4x1xf32>) -> (tensor<4x16384xf8E4M3FN>, tensor<4x1xf32>)
  return %q#0, %q#1 : tensor<4x16384xf8E4M3FN>, tensor<4x1xf32>
}

// Declined: the scale grid comes out transposed ([N/C, M/R]), not in the
// tiles' row-major order.
// CHECK-LABEL: func.func @negative_scales_transposed
//       CHECK: fusion.quantize %{{.*}} as quant<fp8_block_e4m3, rowwise, block = 1x16384>
// REMARK: [Missed] RaiseQuantize | Category:fusion | Function=negative_scales_transposed | Reason="permuted tiles not folded", Remark="the scales are not in the tiles' row-major order"
func.func @negative_scales_transposed(%x: tensor<256x384xbf16>) -> (tensor<256x384xf8E4M3FN>, tensor<3x2xf32>) {
  %e = tensor.expand_shape %x [[0, 1], [2, 3]] output_shape [2, 128, 3, 128] : tensor<256x384xbf16> into tensor<2x128x3x128xbf16>
  %t0 = tensor.empty() : tensor<2x3x128x128xbf16>
  %p = linalg.transpose ins(%e : tensor<2x128x3x128xbf16>) outs(%t0 : tensor<2x3x128x128xbf16>) permutation = [0, 2, 1, 3]
  %rows = tensor.collapse_shape %p [[0, 1], [2, 3]] : tensor<2x3x128x128xbf16> into tensor<6x16384xbf16>
  %d0 = tensor.empty() : tensor<6x16384xf8E4M3FN>
  %s0 = tensor.empty() : tensor<6x1xf32>
  %q:2 = fusion.quantize %rows as quant<fp8_block_e4m3, rowwise, block = 1x16384> outs(%d0, %s0)
      : (tensor<6x16384xbf16>, tensor<6x16384xf8E4M3FN>, tensor<6x1xf32>) -> (tensor<6x16384xf8E4M3FN>, tensor<6x1xf32>)
  %c4 = tensor.expand_shape %q#0 [[0, 1], [2, 3]] output_shape [2, 3, 128, 128] : tensor<6x16384xf8E4M3FN> into tensor<2x3x128x128xf8E4M3FN>
  %t1 = tensor.empty() : tensor<2x128x3x128xf8E4M3FN>
  %pb = linalg.transpose ins(%c4 : tensor<2x3x128x128xf8E4M3FN>) outs(%t1 : tensor<2x128x3x128xf8E4M3FN>) permutation = [0, 2, 1, 3]
  %codes = tensor.collapse_shape %pb [[0, 1], [2, 3]] : tensor<2x128x3x128xf8E4M3FN> into tensor<256x384xf8E4M3FN>
  %sf = tensor.collapse_shape %q#1 [[0, 1]] : tensor<6x1xf32> into tensor<6xf32>
  %sg = tensor.expand_shape %sf [[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
  %t2 = tensor.empty() : tensor<3x2xf32>
  %st = linalg.transpose ins(%sg : tensor<2x3xf32>) outs(%t2 : tensor<3x2xf32>) permutation = [1, 0]
  return %codes, %st : tensor<256x384xf8E4M3FN>, tensor<3x2xf32>
}

// Declined: a row is a whole column of the matrix: 256x1 tiles, which the
// tile kernels would read a column at a time (the rowwise quantizer of the
// transposed copy is kept).
// CHECK-LABEL: func.func @negative_column_tiles
//       CHECK: linalg.transpose
//       CHECK: fusion.quantize %{{.*}} as quant<fp8_block_e4m3, rowwise, block = 1x256>
// REMARK: [Missed] RaiseQuantize | Category:fusion | Function=negative_column_tiles | Reason="permuted tiles not folded", Remark="the tiles are 256x1: narrower than 32 columns, which the tile kernels read a column at a time; the permuted rows are kept"
func.func @negative_column_tiles(%x: tensor<256x64xbf16>) -> (tensor<256x64xf8E4M3FN>, tensor<64x1xf32>) {
  %t0 = tensor.empty() : tensor<64x256xbf16>
  %p = linalg.transpose ins(%x : tensor<256x64xbf16>) outs(%t0 : tensor<64x256xbf16>) permutation = [1, 0]
  %d0 = tensor.empty() : tensor<64x256xf8E4M3FN>
  %s0 = tensor.empty() : tensor<64x1xf32>
  %q:2 = fusion.quantize %p as quant<fp8_block_e4m3, rowwise, block = 1x256> outs(%d0, %s0)
      : (tensor<64x256xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x1xf32>) -> (tensor<64x256xf8E4M3FN>, tensor<64x1xf32>)
  %t1 = tensor.empty() : tensor<256x64xf8E4M3FN>
  %pb = linalg.transpose ins(%q#0 : tensor<64x256xf8E4M3FN>) outs(%t1 : tensor<256x64xf8E4M3FN>) permutation = [1, 0]
  return %pb, %q#1 : tensor<256x64xf8E4M3FN>, tensor<64x1xf32>
}

// Declined: a row takes the high factor of the columns (every other 64
// columns), not the lowest: not a tile.
// CHECK-LABEL: func.func @negative_rows_not_tiles
//       CHECK: fusion.quantize %{{.*}} as quant<fp8_block_e4m3, rowwise, block = 1x8192>
// REMARK: [Missed] RaiseQuantize | Category:fusion | Function=negative_rows_not_tiles | Reason="permuted tiles not folded", Remark="the permuted rows are not tiles of the matrix (a row holds elements that are not the lowest factors of its dimensions)"
func.func @negative_rows_not_tiles(%x: tensor<128x128xbf16>) -> (tensor<128x128xf8E4M3FN>, tensor<2x1xf32>) {
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [128, 2, 64] : tensor<128x128xbf16> into tensor<128x2x64xbf16>
  %t0 = tensor.empty() : tensor<64x128x2xbf16>
  %p = linalg.transpose ins(%e : tensor<128x2x64xbf16>) outs(%t0 : tensor<64x128x2xbf16>) permutation = [2, 0, 1]
  %rows = tensor.collapse_shape %p [[0], [1, 2]] : tensor<64x128x2xbf16> into tensor<64x256xbf16>
  %rows2 = tensor.expand_shape %rows [[0, 1], [2]] output_shape [2, 32, 256] : tensor<64x256xbf16> into tensor<2x32x256xbf16>
  %rows3 = tensor.collapse_shape %rows2 [[0], [1, 2]] : tensor<2x32x256xbf16> into tensor<2x8192xbf16>
  %d0 = tensor.empty() : tensor<2x8192xf8E4M3FN>
  %s0 = tensor.empty() : tensor<2x1xf32>
  %q:2 = fusion.quantize %rows3 as quant<fp8_block_e4m3, rowwise, block = 1x8192> outs(%d0, %s0)
      : (tensor<2x8192xbf16>, tensor<2x8192xf8E4M3FN>, tensor<2x1xf32>) -> (tensor<2x8192xf8E4M3FN>, tensor<2x1xf32>)
  %c1 = tensor.expand_shape %q#0 [[0], [1, 2]] output_shape [2, 32, 256] : tensor<2x8192xf8E4M3FN> into tensor<2x32x256xf8E4M3FN>
  %c2 = tensor.collapse_shape %c1 [[0, 1], [2]] : tensor<2x32x256xf8E4M3FN> into tensor<64x256xf8E4M3FN>
  %c3 = tensor.expand_shape %c2 [[0], [1, 2]] output_shape [64, 128, 2] : tensor<64x256xf8E4M3FN> into tensor<64x128x2xf8E4M3FN>
  %t1 = tensor.empty() : tensor<128x2x64xf8E4M3FN>
  %pb = linalg.transpose ins(%c3 : tensor<64x128x2xf8E4M3FN>) outs(%t1 : tensor<128x2x64xf8E4M3FN>) permutation = [1, 2, 0]
  %codes = tensor.collapse_shape %pb [[0], [1, 2]] : tensor<128x2x64xf8E4M3FN> into tensor<128x128xf8E4M3FN>
  return %codes, %q#1 : tensor<128x128xf8E4M3FN>, tensor<2x1xf32>
}
