// FP4 data crosses the runtime boundary packed: a quantizer whose data
// destination is i8 [M, N/2] gets the runtime's packed bytes (even element
// in the low nibble) with no widening, and they hold exactly the codes of
// the same quantizer writing f4E2M1FN [M, N] (one code per byte), for MXFP4
// and NVFP4 on the CPU runtime.
//
// RUN: fusion-opt %s --fusion-pipeline | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%fusion_rt_mlir,%mlir_runner_utils,%mlir_c_runner_utils \
// RUN:   | FileCheck %s

func.func private @printMemrefI32(memref<*xi32>)

func.func @print_i8(%t: tensor<?x?xi8>) {
  %w = arith.extui %t : tensor<?x?xi8> to tensor<?x?xi32>
  %m = bufferization.to_buffer %w : tensor<?x?xi32> to memref<?x?xi32>
  %u = memref.cast %m : memref<?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

// x[i, j] = (j - 21) * 0.37 * (i + 1): signs, zeros and a range of
// magnitudes within each block.
func.func @input() -> tensor<2x64xf32> {
  %e = tensor.empty() : tensor<2x64xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<2x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %c21 = arith.constant 21 : i32
    %c1 = arith.constant 1 : i32
    %a = arith.subi %jj, %c21 : i32
    %b = arith.addi %ii, %c1 : i32
    %af = arith.sitofp %a : i32 to f32
    %bf = arith.sitofp %b : i32 to f32
    %k = arith.constant 0.37 : f32
    %p = arith.mulf %af, %k : f32
    %v = arith.mulf %p, %bf : f32
    linalg.yield %v : f32
  } -> tensor<2x64xf32>
  return %x : tensor<2x64xf32>
}

// Codes of f4 data, one per byte.
func.func @codes(%d: tensor<2x64xf4E2M1FN>) -> tensor<2x64xi8> {
  %i4 = arith.bitcast %d : tensor<2x64xf4E2M1FN> to tensor<2x64xi4>
  %i8 = arith.extui %i4 : tensor<2x64xi4> to tensor<2x64xi8>
  return %i8 : tensor<2x64xi8>
}

// Codes of packed data: element 2k is the low nibble of byte k.
func.func @unpack(%p: tensor<2x32xi8>) -> tensor<2x64xi8> {
  %e = tensor.empty() : tensor<2x64xi8>
  %u = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j floordiv 2)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<2x32xi8>) outs(%e : tensor<2x64xi8>) {
  ^bb0(%b: i8, %o: i8):
    %j = linalg.index 1 : index
    %c2 = arith.constant 2 : index
    %odd = arith.remui %j, %c2 : index
    %c0 = arith.constant 0 : index
    %isodd = arith.cmpi ne, %odd, %c0 : index
    %s4 = arith.constant 4 : i8
    %s0 = arith.constant 0 : i8
    %sh = arith.select %isodd, %s4, %s0 : i8
    %v = arith.shrui %b, %sh : i8
    %m = arith.constant 15 : i8
    %n = arith.andi %v, %m : i8
    linalg.yield %n : i8
  } -> tensor<2x64xi8>
  return %u : tensor<2x64xi8>
}

// Number of positions where the two code tensors differ, as a 1x1 tensor.
func.func @mismatches(%a: tensor<2x64xi8>, %b: tensor<2x64xi8>) -> tensor<?x?xi8> {
  %zero = arith.constant 0 : i8
  %init = tensor.empty() : tensor<1x1xi8>
  %acc = linalg.fill ins(%zero : i8) outs(%init : tensor<1x1xi8>) -> tensor<1x1xi8>
  %n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (0, 0)>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%a, %b : tensor<2x64xi8>, tensor<2x64xi8>) outs(%acc : tensor<1x1xi8>) {
  ^bb0(%x: i8, %y: i8, %s: i8):
    %ne = arith.cmpi ne, %x, %y : i8
    %one = arith.extui %ne : i1 to i8
    %t = arith.addi %s, %one : i8
    linalg.yield %t : i8
  } -> tensor<1x1xi8>
  %c = tensor.cast %n : tensor<1x1xi8> to tensor<?x?xi8>
  return %c : tensor<?x?xi8>
}

func.func @main() {
  %x = call @input() : () -> tensor<2x64xf32>

  // MXFP4: no code differs, and the codes are not all alike (first 8 of
  // row 0, then the first 4 packed bytes: byte k = code[2k] + 16 * code[2k+1]).
  // CHECK:      sizes = [1, 1]
  // CHECK-NEXT: {{\[}}[0]]
  // CHECK:      sizes = [1, 8]
  // CHECK-NEXT: {{\[}}[[[#C0:]], [[#C1:]], [[#C2:]], [[#C3:]], [[#C4:]], [[#C5:]], [[#C6:]], [[#C7:]]]]
  // CHECK:      sizes = [1, 4]
  // CHECK-NEXT: {{\[}}[[[#add(C0,mul(C1,16))]], [[#add(C2,mul(C3,16))]], [[#add(C4,mul(C5,16))]], [[#add(C6,mul(C7,16))]]]]
  %e0 = tensor.empty() : tensor<2x64xf4E2M1FN>
  %e1 = tensor.empty() : tensor<2x2xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp4, rowwise> outs(%e0, %e1)
      : (tensor<2x64xf32>, tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>) -> (tensor<2x64xf4E2M1FN>, tensor<2x2xf8E8M0FNU>)
  %p0 = tensor.empty() : tensor<2x32xi8>
  %p1 = tensor.empty() : tensor<2x2xf8E8M0FNU>
  %pd, %ps = fusion.quantize %x as quant<mxfp4, rowwise> outs(%p0, %p1)
      : (tensor<2x64xf32>, tensor<2x32xi8>, tensor<2x2xf8E8M0FNU>) -> (tensor<2x32xi8>, tensor<2x2xf8E8M0FNU>)
  %wide = call @codes(%d) : (tensor<2x64xf4E2M1FN>) -> tensor<2x64xi8>
  %unp = call @unpack(%pd) : (tensor<2x32xi8>) -> tensor<2x64xi8>
  %n = call @mismatches(%wide, %unp) : (tensor<2x64xi8>, tensor<2x64xi8>) -> tensor<?x?xi8>
  call @print_i8(%n) : (tensor<?x?xi8>) -> ()
  %w8 = tensor.extract_slice %wide[0, 0] [1, 8] [1, 1] : tensor<2x64xi8> to tensor<1x8xi8>
  %w8d = tensor.cast %w8 : tensor<1x8xi8> to tensor<?x?xi8>
  call @print_i8(%w8d) : (tensor<?x?xi8>) -> ()
  %p4 = tensor.extract_slice %pd[0, 0] [1, 4] [1, 1] : tensor<2x32xi8> to tensor<1x4xi8>
  %p4d = tensor.cast %p4 : tensor<1x4xi8> to tensor<?x?xi8>
  call @print_i8(%p4d) : (tensor<?x?xi8>) -> ()

  // NVFP4 (16-element blocks, e4m3 scales, tensor amax): the same.
  // CHECK:      sizes = [1, 1]
  // CHECK-NEXT: {{\[}}[0]]
  %n0 = tensor.empty() : tensor<2x64xf4E2M1FN>
  %n1 = tensor.empty() : tensor<2x4xf8E4M3FN>
  %n2 = tensor.empty() : tensor<1xf32>
  %nd, %ns, %na = fusion.quantize %x as quant<nvfp4, rowwise> outs(%n0, %n1, %n2)
      : (tensor<2x64xf32>, tensor<2x64xf4E2M1FN>, tensor<2x4xf8E4M3FN>, tensor<1xf32>) -> (tensor<2x64xf4E2M1FN>, tensor<2x4xf8E4M3FN>, tensor<1xf32>)
  %q0 = tensor.empty() : tensor<2x32xi8>
  %q1 = tensor.empty() : tensor<2x4xf8E4M3FN>
  %q2 = tensor.empty() : tensor<1xf32>
  %qd, %qs, %qa = fusion.quantize %x as quant<nvfp4, rowwise> outs(%q0, %q1, %q2)
      : (tensor<2x64xf32>, tensor<2x32xi8>, tensor<2x4xf8E4M3FN>, tensor<1xf32>) -> (tensor<2x32xi8>, tensor<2x4xf8E4M3FN>, tensor<1xf32>)
  %nw = call @codes(%nd) : (tensor<2x64xf4E2M1FN>) -> tensor<2x64xi8>
  %nu = call @unpack(%qd) : (tensor<2x32xi8>) -> tensor<2x64xi8>
  %nn = call @mismatches(%nw, %nu) : (tensor<2x64xi8>, tensor<2x64xi8>) -> tensor<?x?xi8>
  call @print_i8(%nn) : (tensor<?x?xi8>) -> ()
  return
}
