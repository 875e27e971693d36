// arith.scaling_truncf written out (upstream MLIR's MX op, RCEIL scale by
// integer bit operations; test/Transforms/raise-quantize-scaling-truncf.mlir)
// run to the end: raised to fusion.quantize (the runtime's quantizer) and
// unraised (arith-expand's lowering of scaling_truncf), both by the whole
// pipeline, print the same codes and scales.
//
// RUN: fusion-opt %s --fusion-pipeline=lower-to-llvm=false | FileCheck %s --check-prefix=IR
// RUN: fusion-opt %s --fusion-pipeline | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%fusion_rt_mlir,%mlir_runner_utils,%mlir_c_runner_utils,%mlir_apfloat_wrappers \
// RUN:   | sed -e "s/base@ = 0x[0-9a-f]*//" > %t.raised
// RUN: fusion-opt %s "--fusion-pipeline=raise-quantize=false" \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%fusion_rt_mlir,%mlir_runner_utils,%mlir_c_runner_utils,%mlir_apfloat_wrappers \
// RUN:   | sed -e "s/base@ = 0x[0-9a-f]*//" > %t.unraised
// RUN: diff %t.raised %t.unraised
// RUN: FileCheck %s --input-file=%t.raised

// IR-LABEL: @rceil_scaling_truncf
// IR: fusion.quantize

// CHECK: sizes = [4, 64]
// CHECK: sizes = [4, 2]

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
!x = tensor<4x64xf32>
!b = tensor<4x2x32xf32>
!d = tensor<4x64xf8E4M3FN>
!s = tensor<4x2xf8E8M0FNU>

func.func private @printMemrefI32(memref<*xi32>)

func.func @rceil_scaling_truncf(%x: !x) -> (!d, !s) {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.00223214285 : f32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c23 = arith.constant 23 : i32
  %c255 = arith.constant 255 : i32
  %cm = arith.constant 8388607 : i32
  %half = arith.constant 4194304 : i32
  %true = arith.constant true
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 32] : !x into !b
  %i0 = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%i0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e : !b) outs(%f : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4x2xf32>
  %i1 = tensor.empty() : tensor<4x2xi8>
  %byte = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%amax : tensor<4x2xf32>) outs(%i1 : tensor<4x2xi8>) {
  ^bb0(%a: f32, %o: i8):
    %r = arith.mulf %a, %inv : f32
    %bits = arith.bitcast %r : f32 to i32
    %sh = arith.shrui %bits, %c23 : i32
    %ex = arith.andi %sh, %c255 : i32
    %man = arith.andi %bits, %cm : i32
    %nz = arith.cmpi ne, %man, %c0 : i32
    %sub = arith.cmpi eq, %ex, %c0 : i32
    %low = arith.cmpi ule, %man, %half : i32
    %tiny = arith.andi %sub, %low : i1
    %keep = arith.xori %tiny, %true : i1
    %inc = arith.andi %nz, %keep : i1
    %up = arith.addi %ex, %c1 : i32
    %rc = arith.select %inc, %up, %ex : i32
    %special = arith.cmpi eq, %ex, %c255 : i32
    %bb = arith.select %special, %c255, %rc : i32
    %t = arith.trunci %bb : i32 to i8
    linalg.yield %t : i8
  } -> tensor<4x2xi8>
  %scale = arith.bitcast %byte : tensor<4x2xi8> to !s
  %i2 = tensor.empty() : tensor<4x2x32xf8E8M0FNU>
  %sb = linalg.broadcast ins(%scale : !s) outs(%i2 : tensor<4x2x32xf8E8M0FNU>) dimensions = [2]
  %q = arith.scaling_truncf %e, %sb : !b, tensor<4x2x32xf8E8M0FNU> to tensor<4x2x32xf8E4M3FN>
  %d = tensor.collapse_shape %q [[0], [1, 2]] : tensor<4x2x32xf8E4M3FN> into !d
  return %d, %scale : !d, !s
}

func.func @print_bytes(%t: tensor<?x?xi8>) {
  %w = arith.extui %t : tensor<?x?xi8> to tensor<?x?xi32>
  %m = bufferization.to_buffer %w : tensor<?x?xi32> to memref<?x?xi32>
  %u = memref.cast %m : memref<?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

func.func @main() {
  // x[i, j] = (j - 31.5) * 2^(9 i - 13) * (1 + (j mod 7) / 8): blocks over a
  // wide range, rounding ties, block maxima that are and are not powers of 2.
  %e = tensor.empty() : !x
  %x = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%e : !x) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %ji = arith.index_cast %j : index to i32
    %c9 = arith.constant 9 : i32
    %c13 = arith.constant 13 : i32
    %c7 = arith.constant 7 : i32
    %c127 = arith.constant 127 : i32
    %c23 = arith.constant 23 : i32
    %p = arith.muli %ii, %c9 : i32
    %q = arith.subi %p, %c13 : i32
    %b = arith.addi %q, %c127 : i32
    %sb = arith.shli %b, %c23 : i32
    %scale = arith.bitcast %sb : i32 to f32
    %jf = arith.sitofp %ji : i32 to f32
    %h = arith.constant 31.5 : f32
    %d = arith.subf %jf, %h : f32
    %m = arith.remsi %ji, %c7 : i32
    %mf = arith.sitofp %m : i32 to f32
    %eighth = arith.constant 0.125 : f32
    %one = arith.constant 1.0 : f32
    %f = arith.mulf %mf, %eighth : f32
    %g = arith.addf %one, %f : f32
    %v0 = arith.mulf %d, %scale : f32
    %v = arith.mulf %v0, %g : f32
    linalg.yield %v : f32
  } -> !x
  %data, %scales = call @rceil_scaling_truncf(%x) : (!x) -> (!d, !s)
  %di = arith.bitcast %data : !d to tensor<4x64xi8>
  %si = arith.bitcast %scales : !s to tensor<4x2xi8>
  %dd = tensor.cast %di : tensor<4x64xi8> to tensor<?x?xi8>
  %sd = tensor.cast %si : tensor<4x2xi8> to tensor<?x?xi8>
  call @print_bytes(%dd) : (tensor<?x?xi8>) -> ()
  call @print_bytes(%sd) : (tensor<?x?xi8>) -> ()
  return
}
