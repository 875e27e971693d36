// RUN: fusion-opt %s --fusion-expand-tosa-mx | FileCheck %s
// RUN: fusion-opt %s --fusion-expand-tosa-mx=lower-tosa=false | FileCheck %s --check-prefix=KEEP
// RUN: fusion-opt %s --fusion-expand-tosa-mx --fusion-raise-quantize --remarks-filter=fusion -verify-diagnostics -o /dev/null
// RUN: fusion-opt %s --fusion-act-quantize-pipeline | FileCheck %s --check-prefix=FUSED

// fusion-expand-tosa-mx writes TOSA 1.1's MX casts out as the
// specification's pseudocode defines them (calc_block_scale); the raising
// then takes the f8E4M3FN cast (equal to the runtime's default MXFP8 on
// every probe) and the activation before it fuses. End to end against an
// exact oracle of the pseudocode: test/Frontend/corpus.test (tosa_*).

// The f8E4M3FN scale: E - 8, plus one where amax's mantissa is above
// 1.75's (ceil(log2(amax / 448))), clipped to [0, 254]; NaN / Inf -> 255.
// CHECK-LABEL: func.func @to_e4m3
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [4, 2, 32]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.cmpi ugt, %{{.*}}, %c6291456_i32
// CHECK: arith.subi %{{.*}}, %c8_i32
// CHECK: arith.select
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: linalg.generic
// CHECK: arith.divf
// CHECK: arith.truncf %{{.*}} : f32 to f8E4M3FN
// CHECK: tensor.collapse_shape
// CHECK: tensor.bitcast %{{.*}} : tensor<4x2xi8> to tensor<4x2xf8E8M0FNU>
// CHECK-NOT: tosa.
func.func @to_e4m3(%x: tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) {
  // expected-remark @+2 {{Remark="expanded tosa.cast_to_block_scaled as the TOSA 1.1 specification defines it"}}
  // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<mxfp8_e4m3, rowwise>"}}
  %0:2 = tosa.cast_to_block_scaled %x {block_size = #tosa.block_size<BLOCK_SIZE_32>} : (tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return %0#0, %0#1 : tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>
}

// f8E5M2: floor(log2(amax / 57344)) + 1, one above the runtime's RCEIL
// where amax / 57344 is a power of two: declined, the expansion stays.
// CHECK-LABEL: func.func @negative_to_e5m2
// CHECK: arith.cmpi uge, %{{.*}}, %c6291456_i32
// CHECK: arith.subi %{{.*}}, %c15_i32
// CHECK: arith.truncf %{{.*}} : f32 to f8E5M2
func.func @negative_to_e5m2(%x: tensor<2x3x64xbf16>) -> (tensor<2x3x64xf8E5M2>, tensor<2x3x2xf8E8M0FNU>) {
  // expected-remark @+2 {{Remark="expanded tosa.cast_to_block_scaled as the TOSA 1.1 specification defines it"}}
  // expected-remark @below {{Reason="differs from every runtime quantizer", Remark="closest is #fusion.quant<mxfp8_e5m2, rowwise>}}
  %0:2 = tosa.cast_to_block_scaled %x {block_size = #tosa.block_size<BLOCK_SIZE_32>} : (tensor<2x3x64xbf16>) -> (tensor<2x3x64xf8E5M2>, tensor<2x3x2xf8E8M0FNU>)
  return %0#0, %0#1 : tensor<2x3x64xf8E5M2>, tensor<2x3x2xf8E8M0FNU>
}

// Dynamic leading sizes: the expansion keeps them; the raising checks a
// copy with fixed sizes.
// CHECK-LABEL: func.func @to_e4m3_dynamic
// CHECK: tensor.dim
// CHECK: tensor.expand_shape
func.func @to_e4m3_dynamic(%x: tensor<?x64xf32>) -> (tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>) {
  // expected-remark @+2 {{Remark="expanded tosa.cast_to_block_scaled as the TOSA 1.1 specification defines it"}}
  // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<mxfp8_e4m3, rowwise> (dynamic sizes: checked with each dynamic size fixed to 4)"}}
  %0:2 = tosa.cast_to_block_scaled %x {block_size = #tosa.block_size<BLOCK_SIZE_32>} : (tensor<?x64xf32>) -> (tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>)
  return %0#0, %0#1 : tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>
}

// The dequantizing cast: f32(x) * f32(scale), rounded to the result type.
// CHECK-LABEL: func.func @from_e4m3
// CHECK: tensor.bitcast %{{.*}} : tensor<4x2xf8E8M0FNU> to tensor<4x2xi8>
// CHECK: arith.extf %{{.*}} : f8E4M3FN to f32
// CHECK: arith.mulf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @from_e4m3(%q: tensor<4x64xf8E4M3FN>, %s: tensor<4x2xf8E8M0FNU>) -> tensor<4x64xbf16> {
  // expected-remark @below {{Remark="expanded tosa.cast_from_block_scaled as the TOSA 1.1 specification defines it"}}
  %0 = tosa.cast_from_block_scaled %q, %s {block_size = #tosa.block_size<BLOCK_SIZE_32>} : (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) -> tensor<4x64xbf16>
  return %0 : tensor<4x64xbf16>
}

// A SiLU before the cast (as a TOSA-to-linalg lowering leaves it) fuses
// with the raised quantizer into one op.
// FUSED-LABEL: func.func @silu_to_e4m3
// FUSED: fusion.act_quantize #fusion.act<silu> %arg0 as quant<mxfp8_e4m3, rowwise>
// FUSED-NOT: linalg.generic
func.func @silu_to_e4m3(%x: tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) {
  %e = tensor.empty() : tensor<4x64xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %x1 = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %d = arith.addf %x1, %one : f32
    %s = arith.divf %in, %d : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  // expected-remark @+2 {{Remark="expanded tosa.cast_to_block_scaled as the TOSA 1.1 specification defines it"}}
  // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<mxfp8_e4m3, rowwise>"}}
  %0:2 = tosa.cast_to_block_scaled %a {block_size = #tosa.block_size<BLOCK_SIZE_32>} : (tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return %0#0, %0#1 : tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>
}

// A program in TOSA throughout: the function's other TOSA ops (sigmoid, mul,
// const) go through upstream's TOSA-to-linalg lowering after the cast is
// written out; the SiLU then fuses with the raised quantizer.
// CHECK-LABEL: func.func @tosa_silu_to_e4m3
// CHECK-NOT: tosa.
// FUSED-LABEL: func.func @tosa_silu_to_e4m3
// FUSED: fusion.act_quantize #fusion.act<silu> %arg0 as quant<mxfp8_e4m3, rowwise>
// FUSED-NOT: linalg.generic
func.func @tosa_silu_to_e4m3(%x: tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) {
  %s = tosa.sigmoid %x : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %y = tosa.mul %x, %s, %shift : (tensor<4x64xf32>, tensor<4x64xf32>, tensor<1xi8>) -> tensor<4x64xf32>
  // expected-remark @+2 {{Remark="expanded tosa.cast_to_block_scaled as the TOSA 1.1 specification defines it"}}
  // expected-remark @below {{Remark="raised to fusion.quantize #fusion.quant<mxfp8_e4m3, rowwise>"}}
  %q:2 = tosa.cast_to_block_scaled %y {block_size = #tosa.block_size<BLOCK_SIZE_32>} : (tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>
}
// KEEP-LABEL: func.func @tosa_silu_to_e4m3
// KEEP: tosa.sigmoid
// KEEP: tosa.mul
// KEEP-NOT: tosa.cast_to_block_scaled
