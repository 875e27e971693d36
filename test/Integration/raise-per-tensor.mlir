// Per-tensor FP8 quantizers written out (test/Transforms/raise-quantize-fp4.mlir:
// an amax epsilon, and power-of-two scales; torch's `448 / amax`, which is
// (1 / amax) * 448: the reciprocal recipe) run to the end: raised to
// fusion.quantize (the runtime's FP8 current scaling, with the scheme's
// epsilon, pow2_scale and recipe passed through the lowering) and unraised,
// both by the whole pipeline, print the same codes and scales. The last
// input's amax (3.96830106) is one where (1 / amax) * 448 is one ulp off
// 448 / amax, and its second element (2.59506269e-05) one whose code that
// ulp changes (2 under the IR's rule, 1 under the quotient).
//
// RUN: fusion-opt %s "--fusion-pipeline=frontend=torch lower-to-llvm=false" | FileCheck %s --check-prefix=IR
// RUN: fusion-opt %s --fusion-pipeline=frontend=torch | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%fusion_rt_mlir,%mlir_runner_utils,%mlir_c_runner_utils,%mlir_apfloat_wrappers \
// RUN:   | sed -e "s/base@ = 0x[0-9a-f]*//" > %t.raised
// RUN: fusion-opt %s "--fusion-pipeline=frontend=torch raise-quantize=false" \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%fusion_rt_mlir,%mlir_runner_utils,%mlir_c_runner_utils,%mlir_apfloat_wrappers \
// RUN:   | sed -e "s/base@ = 0x[0-9a-f]*//" > %t.unraised
// RUN: diff %t.raised %t.unraised
// RUN: FileCheck %s --input-file=%t.raised

// IR-LABEL: @per_tensor_epsilon
// IR: fusion.quantize
// IR-LABEL: @per_tensor_pow2
// IR: fusion.quantize
// IR-LABEL: @per_tensor_reciprocal
// IR: fusion.quantize {{.*}}recipe = reciprocal

// CHECK: sizes = [4, 64]
// CHECK: sizes = [4, 64]
// CHECK: sizes = [4, 64]
// CHECK: sizes = [4, 64]
// CHECK: sizes = [4, 64]
// CHECK-NEXT: {{\[}}[126,   2,

#id2 = affine_map<(d0, d1) -> (d0, d1)>

func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefF32(memref<*xf32>)

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

func.func @per_tensor_reciprocal(%x: tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<f32>) {
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
    %one = arith.constant 1.0 : f32
    %eps = arith.constant 1.0e-12 : f32
    %g = arith.maximumf %in, %eps : f32
    %r = arith.divf %one, %g : f32
    %s = arith.mulf %r, %c448 : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %e1 = tensor.empty() : tensor<4x64xf8E4M3FN>
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

func.func @print_bytes(%t: tensor<?x?xi8>) {
  %w = arith.extui %t : tensor<?x?xi8> to tensor<?x?xi32>
  %m = bufferization.to_buffer %w : tensor<?x?xi32> to memref<?x?xi32>
  %u = memref.cast %m : memref<?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

func.func @print_f32(%t: tensor<f32>) {
  %r = tensor.expand_shape %t [] output_shape [1] : tensor<f32> into tensor<1xf32>
  %m = bufferization.to_buffer %r : tensor<1xf32> to memref<1xf32>
  %u = memref.cast %m : memref<1xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  // x[i, j] = (j - 31.5) * 2^(3 i - 5) * (1 + (j mod 7) / 8)
  %e = tensor.empty() : tensor<4x64xf32>
  %x = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<4x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %ji = arith.index_cast %j : index to i32
    %c3 = arith.constant 3 : i32
    %c5 = arith.constant 5 : i32
    %c7 = arith.constant 7 : i32
    %c127 = arith.constant 127 : i32
    %c23 = arith.constant 23 : i32
    %p = arith.muli %ii, %c3 : i32
    %q = arith.subi %p, %c5 : i32
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
  } -> tensor<4x64xf32>
  %d1, %s1 = call @per_tensor_epsilon(%x) : (tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<f32>)
  %d2, %s2 = call @per_tensor_pow2(%x) : (tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<f32>)
  %b1 = arith.bitcast %d1 : tensor<4x64xf8E4M3FN> to tensor<4x64xi8>
  %b2 = arith.bitcast %d2 : tensor<4x64xf8E4M3FN> to tensor<4x64xi8>
  %c1 = tensor.cast %b1 : tensor<4x64xi8> to tensor<?x?xi8>
  %c2 = tensor.cast %b2 : tensor<4x64xi8> to tensor<?x?xi8>
  call @print_bytes(%c1) : (tensor<?x?xi8>) -> ()
  call @print_f32(%s1) : (tensor<f32>) -> ()
  call @print_bytes(%c2) : (tensor<?x?xi8>) -> ()
  call @print_f32(%s2) : (tensor<f32>) -> ()
  // The same quantizers on an all-zero input (the epsilon decides).
  %z = arith.constant dense<0.0> : tensor<4x64xf32>
  %d3, %s3 = call @per_tensor_epsilon(%z) : (tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<f32>)
  %d4, %s4 = call @per_tensor_pow2(%z) : (tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<f32>)
  %b3 = arith.bitcast %d3 : tensor<4x64xf8E4M3FN> to tensor<4x64xi8>
  %b4 = arith.bitcast %d4 : tensor<4x64xf8E4M3FN> to tensor<4x64xi8>
  %c3 = tensor.cast %b3 : tensor<4x64xi8> to tensor<?x?xi8>
  %c4 = tensor.cast %b4 : tensor<4x64xi8> to tensor<?x?xi8>
  call @print_bytes(%c3) : (tensor<?x?xi8>) -> ()
  call @print_f32(%s3) : (tensor<f32>) -> ()
  call @print_bytes(%c4) : (tensor<?x?xi8>) -> ()
  call @print_f32(%s4) : (tensor<f32>) -> ()
  // torch's rule on an amax where it differs from the quotient.
  %ones = arith.constant dense<1.0> : tensor<4x64xf32>
  %ci0 = arith.constant 0 : index
  %ci1 = arith.constant 1 : index
  %va = arith.constant 3.96830106 : f32
  %vx = arith.constant 2.59506269e-05 : f32
  %r0 = tensor.insert %va into %ones[%ci0, %ci0] : tensor<4x64xf32>
  %r1 = tensor.insert %vx into %r0[%ci0, %ci1] : tensor<4x64xf32>
  %d5, %s5 = call @per_tensor_reciprocal(%r1) : (tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<f32>)
  %b5 = arith.bitcast %d5 : tensor<4x64xf8E4M3FN> to tensor<4x64xi8>
  %c5 = tensor.cast %b5 : tensor<4x64xi8> to tensor<?x?xi8>
  call @print_bytes(%c5) : (tensor<?x?xi8>) -> ()
  call @print_f32(%s5) : (tensor<f32>) -> ()
  return
}
