// RUN: fusion-opt %s --convert-elementwise-to-linalg \
// RUN:   --one-shot-bufferize=bufferize-function-boundaries --fusion-lower-to-runtime \
// RUN:   --buffer-deallocation-pipeline --convert-linalg-to-loops \
// RUN:   --expand-strided-metadata --lower-affine --convert-scf-to-cf \
// RUN:   --finalize-memref-to-llvm --convert-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%fusion_rt_mlir,%mlir_runner_utils,%mlir_c_runner_utils \
// RUN: | FileCheck %s

// FP8 2D blocks (block = RxC with R > 1, as DeepSeek-V3's 128x128 weight
// tiles) through the lowering (MLIR ABI 5 passes the block height) on the CPU
// backend, with 2x3 blocks of a 4x6 input: one f32 scale per block,
// s = max(amax over the block, epsilon) / 448, codes x / s in e4m3.
// Blocks: amax 448 (s = 1), 896 (s = 2), 224 (s = 0.5), all zero (s =
// epsilon / 448 = 0.01).

func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[448.0, 0.0, 0.0, 896.0, 0.0, 0.0],
                             [0.0, 1.0, 0.0, 0.0, 2.0, 0.0],
                             [224.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                             [0.0, 0.0, -0.5, 0.0, 0.0, 0.0]]> : tensor<4x6xf32>
  %dst0 = tensor.empty() : tensor<4x6xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<2x2xf32>
  %d, %s = fusion.quantize %x as quant<fp8_block_e4m3, rowwise, block = 2x3, epsilon = 4.48> outs(%dst0, %dst1)
      : (tensor<4x6xf32>, tensor<4x6xf8E4M3FN>, tensor<2x2xf32>) -> (tensor<4x6xf8E4M3FN>, tensor<2x2xf32>)

  // CHECK:      sizes = [2, 2]
  // CHECK-NEXT: {{\[}}[1,   2],
  // CHECK-NEXT:  [0.5,   0.01]]
  %sm = bufferization.to_buffer %s : tensor<2x2xf32> to memref<2x2xf32>
  %su = memref.cast %sm : memref<2x2xf32> to memref<*xf32>
  call @printMemrefF32(%su) : (memref<*xf32>) -> ()

  // e4m3 codes: 448 -> 0x7E (126), 1 -> 0x38 (56), -1 -> 0xB8 (184).
  // CHECK:      sizes = [4, 6]
  // CHECK-NEXT: {{\[}}[126,   0,   0,   126,   0,   0],
  // CHECK-NEXT:  [0,   56,   0,   0,   56,   0],
  // CHECK-NEXT:  [126,   0,   0,   0,   0,   0],
  // CHECK-NEXT:  [0,   0,   184,   0,   0,   0]]
  %di = arith.bitcast %d : tensor<4x6xf8E4M3FN> to tensor<4x6xi8>
  %dw = arith.extui %di : tensor<4x6xi8> to tensor<4x6xi32>
  %dm = bufferization.to_buffer %dw : tensor<4x6xi32> to memref<4x6xi32>
  %du = memref.cast %dm : memref<4x6xi32> to memref<*xi32>
  call @printMemrefI32(%du) : (memref<*xi32>) -> ()
  return
}
