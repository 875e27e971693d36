// The same program, run with and without fusion-fuse-act-quantize, gives the
// same quantizer bits: the fused runtime op rounds the activation to the
// graph's intermediate type (bf16 here) before amax and quantization, exactly
// as the unfused graph does. (The activations are written here in the form
// the runtime evaluates, x * (1 / (1 + exp(-x))); other spellings of the same
// function are matched too but may differ in the last fp32 bit before the
// bf16 rounding, see docs/numerics.md.)
//
// RUN: fusion-opt %s --fusion-pipeline=lower-to-llvm=false | FileCheck %s --check-prefix=IR
// RUN: fusion-opt %s --fusion-pipeline | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%fusion_rt_mlir,%mlir_runner_utils,%mlir_c_runner_utils \
// RUN:   | sed -e "s/base@ = 0x[0-9a-f]*//" > %t.fused
// RUN: fusion-opt %s --fusion-pipeline=fuse-act-quantize=false | mlir-runner -e main \
// RUN:   -entry-point-result=void \
// RUN:   -shared-libs=%fusion_rt_mlir,%mlir_runner_utils,%mlir_c_runner_utils \
// RUN:   | sed -e "s/base@ = 0x[0-9a-f]*//" > %t.unfused
// RUN: diff %t.fused %t.unfused
// RUN: FileCheck %s --input-file=%t.fused

// IR-LABEL: func.func @swiglu
// IR: fusion.gated_act_quantize #fusion.act<swiglu> {{.*}} as quant<mxfp8_e4m3, rowwise> via bf16
// IR-LABEL: func.func @silu
// IR: fusion.act_quantize #fusion.act<silu> {{.*}} as quant<mxfp8_e4m3, colwise> via bf16
// IR-LABEL: func.func @relu
// IR: fusion.act_quantize #fusion.act<relu> {{.*}} as quant<mxfp8_e5m2, rowwise, rounding = floor> via bf16

// Two printed tensors per function (data, scales); the values themselves
// are whatever the unfused program computes, compared by `diff` above. The
// first swiglu scales are spot-checked so that an empty or all-zero output
// cannot pass.
// CHECK: sizes = [16, 64]
// CHECK: sizes = [16, 2]
// CHECK-NEXT: {{\[}}[{{[1-9][0-9]*}}, {{[1-9][0-9]*}}],
// CHECK-COUNT-4: data =

#id = affine_map<(d0, d1) -> (d0, d1)>

func.func @swiglu(%x: tensor<16x128xbf16>) -> (tensor<16x64xf8E4M3FN>, tensor<16x2xf8E8M0FNU>) {
  %g = tensor.extract_slice %x[0, 0] [16, 64] [1, 1] : tensor<16x128xbf16> to tensor<16x64xbf16>
  %u = tensor.extract_slice %x[0, 64] [16, 64] [1, 1] : tensor<16x128xbf16> to tensor<16x64xbf16>
  %e = tensor.empty() : tensor<16x64xbf16>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : tensor<16x64xbf16>, tensor<16x64xbf16>) outs(%e : tensor<16x64xbf16>) {
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
  } -> tensor<16x64xbf16>
  %dst0 = tensor.empty() : tensor<16x64xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<16x2xf8E8M0FNU>
  %d, %sc = fusion.quantize %a as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<16x64xbf16>, tensor<16x64xf8E4M3FN>, tensor<16x2xf8E8M0FNU>) -> (tensor<16x64xf8E4M3FN>, tensor<16x2xf8E8M0FNU>)
  return %d, %sc : tensor<16x64xf8E4M3FN>, tensor<16x2xf8E8M0FNU>
}

func.func @silu(%x: tensor<64x32xbf16>) -> (tensor<64x32xf8E4M3FN>, tensor<2x32xf8E8M0FNU>) {
  %e = tensor.empty() : tensor<64x32xbf16>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x32xbf16>) outs(%e : tensor<64x32xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    %f = arith.extf %v : bf16 to f32
    %one = arith.constant 1.0 : f32
    %n = arith.negf %f : f32
    %ex = math.exp %n : f32
    %den = arith.addf %ex, %one : f32
    %sig = arith.divf %one, %den : f32
    %s = arith.mulf %f, %sig : f32
    %r = arith.truncf %s : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<64x32xbf16>
  %dst2 = tensor.empty() : tensor<64x32xf8E4M3FN>
  %dst3 = tensor.empty() : tensor<2x32xf8E8M0FNU>
  %d, %sc = fusion.quantize %a as quant<mxfp8_e4m3, colwise> outs(%dst2, %dst3)
      : (tensor<64x32xbf16>, tensor<64x32xf8E4M3FN>, tensor<2x32xf8E8M0FNU>) -> (tensor<64x32xf8E4M3FN>, tensor<2x32xf8E8M0FNU>)
  return %d, %sc : tensor<64x32xf8E4M3FN>, tensor<2x32xf8E8M0FNU>
}

func.func @relu(%x: tensor<16x64xbf16>) -> (tensor<16x64xf8E5M2>, tensor<16x2xf8E8M0FNU>) {
  %zero = arith.constant dense<0.0> : tensor<16x64xbf16>
  %a = arith.maximumf %x, %zero : tensor<16x64xbf16>
  %dst4 = tensor.empty() : tensor<16x64xf8E5M2>
  %dst5 = tensor.empty() : tensor<16x2xf8E8M0FNU>
  %d, %sc = fusion.quantize %a as quant<mxfp8_e5m2, rowwise, rounding = floor> outs(%dst4, %dst5)
      : (tensor<16x64xbf16>, tensor<16x64xf8E5M2>, tensor<16x2xf8E8M0FNU>) -> (tensor<16x64xf8E5M2>, tensor<16x2xf8E8M0FNU>)
  return %d, %sc : tensor<16x64xf8E5M2>, tensor<16x2xf8E8M0FNU>
}

// Deterministic inputs: x[i, j] = bf16(4 * sin(0.37 * (i * cols + j) + 0.1)).
func.func @input(%rows: index, %cols: index) -> tensor<?x?xbf16> {
  %e = tensor.empty(%rows, %cols) : tensor<?x?xbf16>
  %t = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x?xbf16>) {
  ^bb0(%o: bf16):
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
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x?xbf16>
  return %t : tensor<?x?xbf16>
}

func.func private @printMemrefI32(memref<*xi32>)

func.func @print_bytes(%t: tensor<?x?xi8>) {
  %w = arith.extui %t : tensor<?x?xi8> to tensor<?x?xi32>
  %m = bufferization.to_buffer %w : tensor<?x?xi32> to memref<?x?xi32>
  %u = memref.cast %m : memref<?x?xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

func.func @main() {
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index

  %x0 = call @input(%c16, %c128) : (index, index) -> tensor<?x?xbf16>
  %x0s = tensor.cast %x0 : tensor<?x?xbf16> to tensor<16x128xbf16>
  %d0, %s0 = call @swiglu(%x0s) : (tensor<16x128xbf16>) -> (tensor<16x64xf8E4M3FN>, tensor<16x2xf8E8M0FNU>)
  %d0i = arith.bitcast %d0 : tensor<16x64xf8E4M3FN> to tensor<16x64xi8>
  %s0i = arith.bitcast %s0 : tensor<16x2xf8E8M0FNU> to tensor<16x2xi8>
  %d0c = tensor.cast %d0i : tensor<16x64xi8> to tensor<?x?xi8>
  %s0c = tensor.cast %s0i : tensor<16x2xi8> to tensor<?x?xi8>
  call @print_bytes(%d0c) : (tensor<?x?xi8>) -> ()
  call @print_bytes(%s0c) : (tensor<?x?xi8>) -> ()

  %x1 = call @input(%c64, %c32) : (index, index) -> tensor<?x?xbf16>
  %x1s = tensor.cast %x1 : tensor<?x?xbf16> to tensor<64x32xbf16>
  %d1, %s1 = call @silu(%x1s) : (tensor<64x32xbf16>) -> (tensor<64x32xf8E4M3FN>, tensor<2x32xf8E8M0FNU>)
  %d1i = arith.bitcast %d1 : tensor<64x32xf8E4M3FN> to tensor<64x32xi8>
  %s1i = arith.bitcast %s1 : tensor<2x32xf8E8M0FNU> to tensor<2x32xi8>
  %d1c = tensor.cast %d1i : tensor<64x32xi8> to tensor<?x?xi8>
  %s1c = tensor.cast %s1i : tensor<2x32xi8> to tensor<?x?xi8>
  call @print_bytes(%d1c) : (tensor<?x?xi8>) -> ()
  call @print_bytes(%s1c) : (tensor<?x?xi8>) -> ()

  %x2 = call @input(%c16, %c64) : (index, index) -> tensor<?x?xbf16>
  %x2s = tensor.cast %x2 : tensor<?x?xbf16> to tensor<16x64xbf16>
  %d2, %s2 = call @relu(%x2s) : (tensor<16x64xbf16>) -> (tensor<16x64xf8E5M2>, tensor<16x2xf8E8M0FNU>)
  %d2i = arith.bitcast %d2 : tensor<16x64xf8E5M2> to tensor<16x64xi8>
  %s2i = arith.bitcast %s2 : tensor<16x2xf8E8M0FNU> to tensor<16x2xi8>
  %d2c = tensor.cast %d2i : tensor<16x64xi8> to tensor<?x?xi8>
  %s2c = tensor.cast %s2i : tensor<16x2xi8> to tensor<?x?xi8>
  call @print_bytes(%d2c) : (tensor<?x?xi8>) -> ()
  call @print_bytes(%s2c) : (tensor<?x?xi8>) -> ()
  return
}
