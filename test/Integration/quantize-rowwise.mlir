// RUN: fusion-opt %s --convert-elementwise-to-linalg \
// RUN:   --one-shot-bufferize=bufferize-function-boundaries --fusion-lower-to-runtime \
// RUN:   --buffer-deallocation-pipeline --convert-linalg-to-loops \
// RUN:   --expand-strided-metadata --lower-affine --convert-scf-to-cf \
// RUN:   --finalize-memref-to-llvm --convert-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%fusion_rt_mlir,%mlir_runner_utils,%mlir_c_runner_utils \
// RUN: | FileCheck %s

// fusion.quantize bufferizes, becomes a call into the runtime and runs on the CPU
// backend. Blocks of 32: all 1.0 (RCEIL byte 119, data 256 = 0x78), all 448
// (byte 127, 0x7E), all 480 (byte 128, data 240 = 0x77), all 0 (byte 0, 0).
// FLOOR differs on the 480 block: byte 127 and saturated data 448 (0x7E).

func.func private @printMemrefI32(memref<*xi32>)

func.func @print_bytes(%t: tensor<?x?xi8>) {
  %w = arith.extui %t : tensor<?x?xi8> to tensor<?x?xi32>
  %m = bufferization.to_buffer %w : tensor<?x?xi32> to memref<?x?xi32>
  %u = memref.cast %m : memref<?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

func.func @input() -> tensor<2x64xf32> {
  %a = arith.constant dense<1.0> : tensor<1x32xf32>
  %b = arith.constant dense<448.0> : tensor<1x32xf32>
  %c = arith.constant dense<480.0> : tensor<1x32xf32>
  %z = arith.constant dense<0.0> : tensor<1x32xf32>
  %r0 = tensor.concat dim(1) %a, %b : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x64xf32>
  %r1 = tensor.concat dim(1) %c, %z : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x64xf32>
  %x = tensor.concat dim(0) %r0, %r1 : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<2x64xf32>
  return %x : tensor<2x64xf32>
}

func.func @main() {
  %x = call @input() : () -> tensor<2x64xf32>

  // CHECK:      sizes = [2, 2]
  // CHECK-NEXT: {{\[}}[119, 127],
  // CHECK-NEXT:  [128, 0]]
  %dst0 = tensor.empty() : tensor<2x64xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<2x2xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<2x64xf32>, tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU>) -> (tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU>)
  %si = arith.bitcast %s : tensor<2x2xf8E8M0FNU> to tensor<2x2xi8>
  %sc = tensor.cast %si : tensor<2x2xi8> to tensor<?x?xi8>
  call @print_bytes(%sc) : (tensor<?x?xi8>) -> ()

  // Data bytes of columns 0, 32 (row 0) and 0, 32 (row 1).
  // CHECK:      sizes = [2, 2]
  // CHECK-NEXT: {{\[}}[120, 126],
  // CHECK-NEXT:  [119, 0]]
  %di = arith.bitcast %d : tensor<2x64xf8E4M3FN> to tensor<2x64xi8>
  %cols = tensor.extract_slice %di[0, 0] [2, 2] [1, 32] : tensor<2x64xi8> to tensor<2x2xi8>
  %dc = tensor.cast %cols : tensor<2x2xi8> to tensor<?x?xi8>
  call @print_bytes(%dc) : (tensor<?x?xi8>) -> ()

  // CHECK:      sizes = [2, 2]
  // CHECK-NEXT: {{\[}}[119, 127],
  // CHECK-NEXT:  [127, 0]]
  // CHECK:      sizes = [2, 2]
  // CHECK-NEXT: {{\[}}[120, 126],
  // CHECK-NEXT:  [126, 0]]
  %dst2 = tensor.empty() : tensor<2x64xf8E4M3FN>
  %dst3 = tensor.empty() : tensor<2x2xf8E8M0FNU>
  %fd, %fs = fusion.quantize %x as quant<mxfp8_e4m3, rowwise, rounding = floor> outs(%dst2, %dst3)
      : (tensor<2x64xf32>, tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU>) -> (tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU>)
  %fsi = arith.bitcast %fs : tensor<2x2xf8E8M0FNU> to tensor<2x2xi8>
  %fsc = tensor.cast %fsi : tensor<2x2xi8> to tensor<?x?xi8>
  call @print_bytes(%fsc) : (tensor<?x?xi8>) -> ()
  %fdi = arith.bitcast %fd : tensor<2x64xf8E4M3FN> to tensor<2x64xi8>
  %fcols = tensor.extract_slice %fdi[0, 0] [2, 2] [1, 32] : tensor<2x64xi8> to tensor<2x2xi8>
  %fdc = tensor.cast %fcols : tensor<2x2xi8> to tensor<?x?xi8>
  call @print_bytes(%fdc) : (tensor<?x?xi8>) -> ()
  return
}
