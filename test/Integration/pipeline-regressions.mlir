// Programs that the whole pipeline once failed on (hardening issue), run to
// the end: fused, and unfused by the same pipeline, must print the same
// values.
//  * @paired_dynamic: a rank-3 dynamic paired projection. Its result is
//    expanded [?, 8] -> [?, ?, 8], on which upstream expand-strided-metadata
//    crashed (now fusion-expand-shape-to-reinterpret-cast rewrites it).
//  * @swiglu_up_first: gate and up are two slices of one packed tensor; after
//    bufferisation they are memrefs with different offsets, which the
//    gated_act_quantize verifier rejected.
//  * @passthrough: a function returning its argument; the deallocation
//    pipeline returns a bufferization.clone that nothing lowered.
//
// RUN: fusion-opt %s --fusion-pipeline=lower-to-llvm=false | FileCheck %s --check-prefix=IR
// RUN: fusion-opt %s --fusion-pipeline | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%fusion_rt_mlir,%mlir_runner_utils,%mlir_c_runner_utils \
// RUN:   | sed -e "s/base@ = 0x[0-9a-f]*//" > %t.fused
// RUN: fusion-opt %s "--fusion-pipeline=fuse-act-quantize=false fuse-paired-projections=false" \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%fusion_rt_mlir,%mlir_runner_utils,%mlir_c_runner_utils \
// RUN:   | sed -e "s/base@ = 0x[0-9a-f]*//" > %t.unfused
// RUN: diff %t.fused %t.unfused
// RUN: FileCheck %s --input-file=%t.fused

// IR-LABEL: func.func @paired_dynamic
// IR: fusion.paired_projection
// IR-LABEL: func.func @swiglu_up_first
// IR: fusion.gated_act_quantize #fusion.act<swiglu>

// CHECK: sizes = [2, 3, 8]
// CHECK: sizes = [2, 3, 8]
// CHECK: sizes = [4, 64]
// CHECK: sizes = [4, 2]
// CHECK-NEXT: {{\[}}[{{[1-9][0-9]*}}, {{[1-9][0-9]*}}],
// CHECK: sizes = [2, 2]
// CHECK-NEXT: {{\[}}[1.5, -2],

#id = affine_map<(d0, d1) -> (d0, d1)>

func.func @paired_dynamic(%x: tensor<?x?x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x64xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x64xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%b, %t) : tensor<?x?x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %we = tensor.empty(%b) : tensor<?x8x64xf32>
  %wb0 = linalg.broadcast ins(%w0 : tensor<8x64xf32>) outs(%we : tensor<?x8x64xf32>) dimensions = [0]
  %wb1 = linalg.broadcast ins(%w1 : tensor<8x64xf32>) outs(%we : tensor<?x8x64xf32>) dimensions = [0]
  %y0 = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wb0 : tensor<?x?x64xf32>, tensor<?x8x64xf32>) outs(%acc : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %y1 = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%x, %wb1 : tensor<?x?x64xf32>, tensor<?x8x64xf32>) outs(%acc : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %y0, %y1 : tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

func.func @swiglu_up_first(%ug: tensor<4x128xbf16>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) {
  %up = tensor.extract_slice %ug[0, 0] [4, 64] [1, 1] : tensor<4x128xbf16> to tensor<4x64xbf16>
  %gate = tensor.extract_slice %ug[0, 64] [4, 64] [1, 1] : tensor<4x128xbf16> to tensor<4x64xbf16>
  %e = tensor.empty() : tensor<4x64xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : tensor<4x64xbf16>, tensor<4x64xbf16>) outs(%e : tensor<4x64xbf16>) {
  ^bb0(%gv: bf16, %uv: bf16, %o: bf16):
    %gf = arith.extf %gv : bf16 to f32
    %uf = arith.extf %uv : bf16 to f32
    %one = arith.constant 1.0 : f32
    %n = arith.negf %gf : f32
    %ex = math.exp %n : f32
    %den = arith.addf %one, %ex : f32
    %sig = arith.divf %one, %den : f32
    %s = arith.mulf %gf, %sig : f32
    %p = arith.mulf %s, %uf : f32
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<4x64xbf16>
  %dst0 = tensor.empty() : tensor<4x64xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<4x2xf8E8M0FNU>
  %d, %sc = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return %d, %sc : tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>
}

func.func @passthrough(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  return %x : tensor<2x2xf32>
}

/// x[i, j] = 4 sin(0.37 (i * cols + j) + 0.1), of any shape.
func.func @input_f32(%rows: index, %cols: index) -> tensor<?x?xf32> {
  %e = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %t = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k0 = arith.muli %i, %cols : index
    %k = arith.addi %k0, %j : index
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    %c = arith.constant 0.37 : f32
    %b = arith.constant 0.1 : f32
    %four = arith.constant 4.0 : f32
    %p = arith.mulf %kf, %c : f32
    %q = arith.addf %p, %b : f32
    %s = math.sin %q : f32
    %v = arith.mulf %s, %four : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %t : tensor<?x?xf32>
}

func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefI32(memref<*xi32>)

func.func @print_f32(%t: tensor<*xf32>) {
  %m = bufferization.to_buffer %t : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}

func.func @print_bytes(%t: tensor<?x?xi8>) {
  %w = arith.extui %t : tensor<?x?xi8> to tensor<?x?xi32>
  %m = bufferization.to_buffer %w : tensor<?x?xi32> to memref<?x?xi32>
  %u = memref.cast %m : memref<?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

func.func @main() {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index

  %x = call @input_f32(%c6, %c64) : (index, index) -> tensor<?x?xf32>
  %xs = tensor.cast %x : tensor<?x?xf32> to tensor<?x64xf32>
  %x3 = tensor.expand_shape %xs [[0, 1], [2]] output_shape [%c2, %c3, 64] : tensor<?x64xf32> into tensor<?x?x64xf32>
  %w = call @input_f32(%c8, %c64) : (index, index) -> tensor<?x?xf32>
  %w0 = tensor.cast %w : tensor<?x?xf32> to tensor<8x64xf32>
  %wt = call @input_f32(%c8, %c128) : (index, index) -> tensor<?x?xf32>
  %w1 = tensor.extract_slice %wt[0, 64] [8, 64] [1, 1] : tensor<?x?xf32> to tensor<8x64xf32>
  %y0, %y1 = call @paired_dynamic(%x3, %w0, %w1) : (tensor<?x?x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  %y0u = tensor.cast %y0 : tensor<?x?x8xf32> to tensor<*xf32>
  %y1u = tensor.cast %y1 : tensor<?x?x8xf32> to tensor<*xf32>
  call @print_f32(%y0u) : (tensor<*xf32>) -> ()
  call @print_f32(%y1u) : (tensor<*xf32>) -> ()

  %g = call @input_f32(%c4, %c128) : (index, index) -> tensor<?x?xf32>
  %gs = tensor.cast %g : tensor<?x?xf32> to tensor<4x128xf32>
  %gb = arith.truncf %gs : tensor<4x128xf32> to tensor<4x128xbf16>
  %d, %s = call @swiglu_up_first(%gb) : (tensor<4x128xbf16>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  %di = arith.bitcast %d : tensor<4x64xf8E4M3FN> to tensor<4x64xi8>
  %si = arith.bitcast %s : tensor<4x2xf8E8M0FNU> to tensor<4x2xi8>
  %dc = tensor.cast %di : tensor<4x64xi8> to tensor<?x?xi8>
  %sc = tensor.cast %si : tensor<4x2xi8> to tensor<?x?xi8>
  call @print_bytes(%dc) : (tensor<?x?xi8>) -> ()
  call @print_bytes(%sc) : (tensor<?x?xi8>) -> ()

  %p = arith.constant dense<[[1.5, -2.0], [0.25, 8.0]]> : tensor<2x2xf32>
  %q = call @passthrough(%p) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %qu = tensor.cast %q : tensor<2x2xf32> to tensor<*xf32>
  call @print_f32(%qu) : (tensor<*xf32>) -> ()
  return
}
