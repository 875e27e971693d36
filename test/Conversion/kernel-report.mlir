// REQUIRES: kernel-inventory
// RUN: fusion-opt %s --fusion-kernel-report -o /dev/null | FileCheck %s
// RUN: fusion-opt %s --fusion-kernel-report -o /dev/null | FileCheck %s --check-prefix=FOUND
// RUN: fusion-opt %s --fusion-kernel-report=inventory=%t.missing -o /dev/null | FileCheck %s --check-prefix=MISSING

// For every fusion op: the runtime entry point, the CUDA kernel it becomes,
// the launch shape and the kernel's resources. Every kernel named must be in
// the inventory built from runtime/cuda (FOUND), so the report's mirror of
// the runtime's dispatch cannot drift from the kernels that exist.

// CHECK: fusion kernel report (kernels compiled for sm_90a, launch shapes for an H200 with 132 SMs)
// FOUND-NOT: not found in the kernel inventory
// MISSING: note: cannot read the kernel inventory '{{.*}}.missing'; kernel resources are not shown

// CHECK: op #0 fusion.quantize
// CHECK-NEXT: entry point: _mlir_ciface_fusion_rt_mlir_quantize -> fusion_rt_quantize
// CHECK-NEXT: CPU backend: reference implementation (host memory)
// CHECK-NEXT: CUDA launch: block 128, 8192 chunks of 256 values, 4 a warp step, grid {{[0-9]+}} = min(512, 132 SMs x {{[0-9]+}} resident blocks, est. from registers)
// CHECK-NEXT: CUDA kernel: void fusion_rt::cuda::stream::row_stream_kernel<fusion_rt::cuda::BF16T, true, true, 4, true, true, true>(fusion_rt::cuda::KParams)
// CHECK-NEXT: registers {{[0-9]+}}, static smem {{[0-9]+}} B, stack 0 B, spill stores/loads 0/0 B, shared-memory insts {{[0-9]+}}, generic ld/st 0 (mxfp8_quantize.cu)
func.func @quantize(%x: tensor<1024x2048xbf16>) -> (tensor<1024x2048xf8E4M3FN>, tensor<1024x64xf8E8M0FNU>) {
  %dst0 = tensor.empty() : tensor<1024x2048xf8E4M3FN>
  %dst1 = tensor.empty() : tensor<1024x64xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%dst0, %dst1)
      : (tensor<1024x2048xbf16>, tensor<1024x2048xf8E4M3FN>, tensor<1024x64xf8E8M0FNU>) -> (tensor<1024x2048xf8E4M3FN>, tensor<1024x64xf8E8M0FNU>)
  return %d, %s : tensor<1024x2048xf8E4M3FN>, tensor<1024x64xf8E8M0FNU>
}

// CHECK: op #1 fusion.act_quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::mx_quantize_kernel<fusion_rt::cuda::SrcAct<fusion_rt::cuda::F16T, true>, 3>(fusion_rt::cuda::KParams)
// CHECK: CUDA kernel: fusion_rt::cuda::dbias_reduce_kernel(float const*, long, long, float*, long)
func.func @act_backward_dbias(%x: tensor<64x256xf16>, %dy: tensor<64x256xf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E4M3FN>, tensor<2x256xf8E8M0FNU>, tensor<256xf32>) {
  %dst2 = tensor.empty() : tensor<64x256xf8E4M3FN>
  %dst3 = tensor.empty() : tensor<64x8xf8E8M0FNU>
  %dst4 = tensor.empty() : tensor<64x256xf8E4M3FN>
  %dst5 = tensor.empty() : tensor<2x256xf8E8M0FNU>
  %dst6 = tensor.empty() : tensor<256xf32>
  %r:5 = fusion.act_quantize #fusion.act<dgelu> %x grad %dy as quant<mxfp8_e4m3, both> via f16 dbias outs(%dst2, %dst3, %dst4, %dst5, %dst6)
      : (tensor<64x256xf16>, tensor<64x256xf16>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E4M3FN>, tensor<2x256xf8E8M0FNU>, tensor<256xf32>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E4M3FN>, tensor<2x256xf8E8M0FNU>, tensor<256xf32>)
  return %r#0, %r#1, %r#2, %r#3, %r#4 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E4M3FN>, tensor<2x256xf8E8M0FNU>, tensor<256xf32>
}

// CHECK: op #2 fusion.gated_act_quantize
// CHECK: CUDA launch: block 128, persistent grid over warp tiles; size depends on the runtime shape
// CHECK: CUDA kernel: void fusion_rt::cuda::mx_quantize_kernel<fusion_rt::cuda::SrcGatedFwd<fusion_rt::cuda::F32T>, 2>(fusion_rt::cuda::KParams)
func.func @gated(%x: tensor<?x512xf32>) -> (tensor<?x256xf8E5M2>, tensor<?x256xf8E8M0FNU>) {
  %dst_c0 = arith.constant 0 : index
  %dst_m = tensor.dim %x, %dst_c0 : tensor<?x512xf32>
  %dst_mb = affine.apply affine_map<()[s0] -> (s0 ceildiv 32)>()[%dst_m]
  %dst7 = tensor.empty(%dst_m) : tensor<?x256xf8E5M2>
  %dst8 = tensor.empty(%dst_mb) : tensor<?x256xf8E8M0FNU>
  %d, %s = fusion.gated_act_quantize #fusion.act<swiglu> %x as quant<mxfp8_e5m2, colwise> via f32 outs(%dst7, %dst8)
      : (tensor<?x512xf32>, tensor<?x256xf8E5M2>, tensor<?x256xf8E8M0FNU>) -> (tensor<?x256xf8E5M2>, tensor<?x256xf8E8M0FNU>)
  return %d, %s : tensor<?x256xf8E5M2>, tensor<?x256xf8E8M0FNU>
}

// The SwiGLU backward with a bf16 intermediate, full 32x64 tiles: its own
// kernel (the report named the engine's before it shared the launcher's plan).
// CHECK: op #3 fusion.gated_act_quantize
// CHECK: CUDA launch: block 128, 1 warp tiles, grid 1 = min(1,
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::swiglu_bwd16_kernel<fusion_rt::cuda::BF16T, true, true, 1>(fusion_rt::cuda::KParams)
func.func @gated_backward(%x: tensor<32x128xbf16>, %dy: tensor<32x64xbf16>) -> (tensor<32x128xf8E4M3FN>, tensor<32x4xf8E8M0FNU>) {
  %dst9 = tensor.empty() : tensor<32x128xf8E4M3FN>
  %dst10 = tensor.empty() : tensor<32x4xf8E8M0FNU>
  %d, %s = fusion.gated_act_quantize #fusion.act<dswiglu> %x grad %dy as quant<mxfp8_e4m3, rowwise> via bf16 outs(%dst9, %dst10)
      : (tensor<32x128xbf16>, tensor<32x64xbf16>, tensor<32x128xf8E4M3FN>, tensor<32x4xf8E8M0FNU>) -> (tensor<32x128xf8E4M3FN>, tensor<32x4xf8E8M0FNU>)
  return %d, %s : tensor<32x128xf8E4M3FN>, tensor<32x4xf8E8M0FNU>
}

// CHECK: op #4 fusion.quantize
// CHECK: CUDA launch: block 256, grid-stride
// CHECK-NEXT: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::amax_kernel<fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::BF16T, 0> >(
// CHECK-NOT: not found in the kernel inventory
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp4_row_kernel<fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::BF16T, 0>, 16>(
// CHECK-NOT: not found in the kernel inventory
func.func @nvfp4(%x: tensor<16x32xbf16>) -> (tensor<16x32xf4E2M1FN>, tensor<16x2xf8E4M3FN>, tensor<1xf32>) {
  %dst11 = tensor.empty() : tensor<16x32xf4E2M1FN>
  %dst12 = tensor.empty() : tensor<16x2xf8E4M3FN>
  %dst13 = tensor.empty() : tensor<1xf32>
  %d, %s, %a = fusion.quantize %x as quant<nvfp4, rowwise> outs(%dst11, %dst12, %dst13)
      : (tensor<16x32xbf16>, tensor<16x32xf4E2M1FN>, tensor<16x2xf8E4M3FN>, tensor<1xf32>) -> (tensor<16x32xf4E2M1FN>, tensor<16x2xf8E4M3FN>, tensor<1xf32>)
  return %d, %s, %a : tensor<16x32xf4E2M1FN>, tensor<16x2xf8E4M3FN>, tensor<1xf32>
}

// CHECK: op #5 fusion.paired_projection
// CHECK-NEXT: entry point: _mlir_ciface_fusion_rt_mlir_paired_projection -> fusion_rt_paired_projection_run
// The GDN decode call (f32 bias and scale, an even K split) takes the gemv
// path's decode instance, 8 chunks of 16 bytes per lane.
// CHECK: CUDA launch: gemv path: block 128 (4 row x 1 K-split warps), grid (1, 16, 3), no cluster, 1 token(s) and 1 weight row(s) per warp, dynamic smem 0 B, both epilogues in the same launch, decode instance (8 chunks per lane)
// CHECK: CUDA kernel: void fusion_rt::paired::(anonymous namespace)::paired_decode_kernel<__nv_bfloat16, 8>
func.func @gdn(%x: tensor<3x2048xbf16>, %wa: tensor<32x2048xbf16>, %wb: tensor<32x2048xbf16>, %dt: tensor<32xf32>, %s: tensor<32xf32>) -> (tensor<3x32xf32>, tensor<3x32xf32>) {
  %dst14 = tensor.empty() : tensor<3x32xf32>
  %dst15 = tensor.empty() : tensor<3x32xf32>
  %g, %b = fusion.paired_projection %x, %wa, %wb epilogues(softplus_bias_scale bias %dt scale %s, sigmoid) outs(%dst14, %dst15)
      : (tensor<3x2048xbf16>, tensor<32x2048xbf16>, tensor<32x2048xbf16>, tensor<32xf32>, tensor<32xf32>, tensor<3x32xf32>, tensor<3x32xf32>) -> (tensor<3x32xf32>, tensor<3x32xf32>)
  return %g, %b : tensor<3x32xf32>, tensor<3x32xf32>
}

// 128 tokens of the same pair: past the gemv path (2^24 multiply-adds),
// the tensor-core mma path.
// CHECK: op #6 fusion.paired_projection
// CHECK: CUDA launch: mma path (tensor cores, mma.sync m16n8k16, fp32 accumulation): block 256 (8 K-split warps), grid (2, 8, 8), clusters of 2 CTAs splitting K, tiles of 16 tokens x 8 weight rows, both epilogues in the same launch
// CHECK: CUDA kernel: void fusion_rt::paired::(anonymous namespace)::paired_mma_kernel<__nv_bfloat16, 1, 1, false>
func.func @gdn_prefill(%x: tensor<128x2048xbf16>, %wa: tensor<32x2048xbf16>, %wb: tensor<32x2048xbf16>, %dt: tensor<32xf32>, %s: tensor<32xf32>) -> (tensor<128x32xf32>, tensor<128x32xf32>) {
  %dsta = tensor.empty() : tensor<128x32xf32>
  %dstb = tensor.empty() : tensor<128x32xf32>
  %g, %b = fusion.paired_projection %x, %wa, %wb epilogues(softplus_bias_scale bias %dt scale %s, sigmoid) outs(%dsta, %dstb)
      : (tensor<128x2048xbf16>, tensor<32x2048xbf16>, tensor<32x2048xbf16>, tensor<32xf32>, tensor<32xf32>, tensor<128x32xf32>, tensor<128x32xf32>) -> (tensor<128x32xf32>, tensor<128x32xf32>)
  return %g, %b : tensor<128x32xf32>, tensor<128x32xf32>
}

// CHECK: op #7 fusion.paired_projection
// CHECK: CUDA launch: cuBLAS path
// CHECK: CUDA kernel: fusion_rt::paired::(anonymous namespace)::paired_epilogue_kernel
func.func @ffn(%x: tensor<2048x256xbf16>, %wg: tensor<512x256xbf16>, %wu: tensor<512x256xbf16>) -> tensor<2048x512xbf16> {
  %dst16 = tensor.empty() : tensor<2048x512xbf16>
  %y = fusion.paired_projection %x, %wg, %wu epilogues(none, none) gated(#fusion.act<swiglu>) outs(%dst16)
      : (tensor<2048x256xbf16>, tensor<512x256xbf16>, tensor<512x256xbf16>, tensor<2048x512xbf16>) -> tensor<2048x512xbf16>
  return %y : tensor<2048x512xbf16>
}

// The SwiGLU forward rowwise quantize of 16-bit rows of a multiple of 256
// takes the stream kernel, 1 chunk a step below mx_plan::kGatedStepOneBelow
// chunks (the report named the v2 kernel before it shared the launcher's
// plan).
// CHECK: op #8 fusion.gated_act_quantize
// CHECK: CUDA launch: block 128, 1024 chunks of 256 values, 1 a warp step, grid {{[0-9]+}} = min(256,
// CHECK: CUDA kernel: void fusion_rt::cuda::stream::swiglu_stream_kernel<fusion_rt::cuda::BF16T, false, false, 7, false, 1, true>(fusion_rt::cuda::KParams)
func.func @swiglu_v2(%x: tensor<256x2048xbf16>) -> (tensor<256x1024xf8E5M2>, tensor<256x32xf8E8M0FNU>) {
  %dst17 = tensor.empty() : tensor<256x1024xf8E5M2>
  %dst18 = tensor.empty() : tensor<256x32xf8E8M0FNU>
  %d, %s = fusion.gated_act_quantize #fusion.act<swiglu> %x as quant<mxfp8_e5m2, rowwise, nan = ignore> via bf16 outs(%dst17, %dst18)
      : (tensor<256x2048xbf16>, tensor<256x1024xf8E5M2>, tensor<256x32xf8E8M0FNU>) -> (tensor<256x1024xf8E5M2>, tensor<256x32xf8E8M0FNU>)
  return %d, %s : tensor<256x1024xf8E5M2>, tensor<256x32xf8E8M0FNU>
}

// Colwise transposed 16-bit quantize: the shared-memory transpose kernel
// (colT, default form sph: prefetch + L2 hints) over 128x64 CTA tiles.
// CHECK: op #9 fusion.quantize
// CHECK: CUDA launch: block 128, 16 CTA tiles of 128x64, grid 16 = min(16,
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::mx_colT16_kernel<fusion_rt::cuda::BF16T, true, true, 2, true, true>(fusion_rt::cuda::KParams)
// CHECK-NEXT: registers {{[0-9]+}}, static smem {{[0-9]+}} B, stack 0 B, spill stores/loads 0/0 B
func.func @colwise_transposed(%x: tensor<256x512xbf16>) -> (tensor<512x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU>) {
  %e0 = tensor.empty() : tensor<512x256xf8E4M3FN>
  %e1 = tensor.empty() : tensor<512x8xf8E8M0FNU>
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, colwise, colwise = transposed> outs(%e0, %e1)
      : (tensor<256x512xbf16>, tensor<512x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU>) -> (tensor<512x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU>)
  return %d, %s : tensor<512x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU>
}

// Both directions, same colwise layout: the CTA kernel over 32x256 tiles.
// CHECK: op #10 fusion.quantize
// CHECK: CUDA launch: block 128, 16 CTA tiles of 32x256, grid 16 = min(16,
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::mx_both16_cta_kernel<fusion_rt::cuda::BF16T, true, true>(fusion_rt::cuda::KParams)
func.func @both_same(%x: tensor<256x512xbf16>) -> (tensor<256x512xf8E4M3FN>, tensor<256x16xf8E8M0FNU>, tensor<256x512xf8E4M3FN>, tensor<8x512xf8E8M0FNU>) {
  %e0 = tensor.empty() : tensor<256x512xf8E4M3FN>
  %e1 = tensor.empty() : tensor<256x16xf8E8M0FNU>
  %e2 = tensor.empty() : tensor<256x512xf8E4M3FN>
  %e3 = tensor.empty() : tensor<8x512xf8E8M0FNU>
  %d:4 = fusion.quantize %x as quant<mxfp8_e4m3, both> outs(%e0, %e1, %e2, %e3)
      : (tensor<256x512xbf16>, tensor<256x512xf8E4M3FN>, tensor<256x16xf8E8M0FNU>, tensor<256x512xf8E4M3FN>, tensor<8x512xf8E8M0FNU>) -> (tensor<256x512xf8E4M3FN>, tensor<256x16xf8E8M0FNU>, tensor<256x512xf8E4M3FN>, tensor<8x512xf8E8M0FNU>)
  return %d#0, %d#1, %d#2, %d#3 : tensor<256x512xf8E4M3FN>, tensor<256x16xf8E8M0FNU>, tensor<256x512xf8E4M3FN>, tensor<8x512xf8E8M0FNU>
}

// The same call with a bf16 bias: the general lean instance of the gemv path.
// CHECK: op #11 fusion.paired_projection
// CHECK: CUDA launch: gemv path: block 128 (2 row x 2 K-split warps), grid (1, 24, 1), no cluster, 1 token(s) and 1 weight row(s) per warp, dynamic smem 0 B, both epilogues in the same launch
// CHECK-NOT: decode instance
// CHECK: CUDA kernel: void fusion_rt::paired::(anonymous namespace)::paired_gemv_kernel<__nv_bfloat16, 1, 1, false, true, false>
func.func @gdn_bf16_bias(%x: tensor<1x4096xbf16>, %wa: tensor<24x4096xbf16>, %wb: tensor<24x4096xbf16>, %dt: tensor<24xbf16>, %s: tensor<24xf32>) -> (tensor<1x24xf32>, tensor<1x24xf32>) {
  %e0 = tensor.empty() : tensor<1x24xf32>
  %e1 = tensor.empty() : tensor<1x24xf32>
  %g, %b = fusion.paired_projection %x, %wa, %wb epilogues(softplus_bias_scale bias %dt scale %s, sigmoid) outs(%e0, %e1)
      : (tensor<1x4096xbf16>, tensor<24x4096xbf16>, tensor<24x4096xbf16>, tensor<24xbf16>, tensor<24xf32>, tensor<1x24xf32>, tensor<1x24xf32>) -> (tensor<1x24xf32>, tensor<1x24xf32>)
  return %g, %b : tensor<1x24xf32>, tensor<1x24xf32>
}

// zero_scale = one (torchao's RCEIL): the quantizer, then the rewrite of the
// blocks of scale byte 0 (mx_zero_scale.cu); min_normal (FLOOR): the
// quantizer, then the recomputation of those blocks.
// CHECK: op #12 fusion.act_quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::mx_quantize_kernel<fusion_rt::cuda::SrcAct<fusion_rt::cuda::BF16T, false>, 1>(fusion_rt::cuda::KParams)
// CHECK: CUDA kernel: fusion_rt::cuda::(anonymous namespace)::zero_scale_one_kernel(fusion_rt::cuda::KParams, int, long, long)
// CHECK-NEXT: registers {{[0-9]+}}, static smem 0 B, stack 0 B, spill stores/loads 0/0 B, shared-memory insts 0, generic ld/st 0 (mx_zero_scale.cu)
// CHECK: op #13 fusion.quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::stream::row_stream_kernel
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::zero_scale_min_normal_kernel<fusion_rt::cuda::SrcPlain<fusion_rt::cuda::BF16T> >(fusion_rt::cuda::KParams, long, long)
// CHECK-NEXT: registers {{[0-9]+}}, static smem 0 B, stack 0 B, spill stores/loads 0/0 B
func.func @torchao_zero_scale(%x: tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  %e0 = tensor.empty() : tensor<64x256xf8E4M3FN>
  %e1 = tensor.empty() : tensor<64x8xf8E8M0FNU>
  %d:2 = fusion.act_quantize #fusion.act<silu> %x as quant<mxfp8_e4m3, rowwise, zero_scale = one> via bf16 outs(%e0, %e1)
      : (tensor<64x256xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>)
  %e2 = tensor.empty() : tensor<64x256xf8E4M3FN>
  %e3 = tensor.empty() : tensor<64x8xf8E8M0FNU>
  %q:2 = fusion.quantize %x as quant<mxfp8_e4m3, rowwise, rounding = floor, zero_scale = min_normal> outs(%e2, %e3)
      : (tensor<64x256xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>)
  return %d#0, %d#1, %q#0, %q#1 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}

// The FFN front in one op (a quantizing gated pair) at decode size: the
// pair's gemv kernel, then the MXFP8 quantizer of the gated bf16 value; the
// launch names the one-kernel form of FUSION_RT_PAIRED_QUANT_EPI=1.
// CHECK: op #14 fusion.paired_projection
// CHECK-NEXT: entry point: _mlir_ciface_fusion_rt_mlir_paired_projection_quantize -> fusion_rt_paired_projection_quantize
// CHECK: CUDA launch: gemv path: block 128 (4 row x 1 K-split warps), grid (1, 3584, 1), no cluster, {{.*}} (FUSION_RT_PAIRED_QUANT_EPI=1: one kernel, void fusion_rt::paired::(anonymous namespace)::paired_gemv_kernel<__nv_bfloat16, 1, 2, true, false, true>(fusion_rt::paired::Params), the quantizer in its epilogue, clusters of 8 CTAs along the columns); then the quantizer of the gated value (kept in a stream-ordered scratch buffer): block 128,
// CHECK: CUDA kernel: void fusion_rt::paired::(anonymous namespace)::paired_gemv_kernel<__nv_bfloat16, 1, 2, true, false, false>
// CHECK: CUDA kernel: void fusion_rt::cuda::stream::row_stream_kernel<fusion_rt::cuda::BF16T,
func.func @ffn_front(%x: tensor<1x4096xbf16>, %wg: tensor<14336x4096xbf16>, %wu: tensor<14336x4096xbf16>) -> (tensor<1x14336xf8E4M3FN>, tensor<1x448xf8E8M0FNU>) {
  %d0 = tensor.empty() : tensor<1x14336xf8E4M3FN>
  %d1 = tensor.empty() : tensor<1x448xf8E8M0FNU>
  %q:2 = fusion.paired_projection %x, %wg, %wu epilogues(round(bf16) none, round(bf16) none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<mxfp8_e4m3, rowwise> via bf16) outs(%d0, %d1)
      : (tensor<1x4096xbf16>, tensor<14336x4096xbf16>, tensor<14336x4096xbf16>, tensor<1x14336xf8E4M3FN>, tensor<1x448xf8E8M0FNU>) -> (tensor<1x14336xf8E4M3FN>, tensor<1x448xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<1x14336xf8E4M3FN>, tensor<1x448xf8E8M0FNU>
}

// The same front at prefill size: the cuBLAS path's prefill form, the GEMMs
// into [gate | up] of bf16, then the gated quantizer on its halves (the
// stream kernel, 2 chunks a step); no epilogue kernel, no plain quantizer.
// CHECK: op #{{[0-9]+}} fusion.paired_projection
// CHECK: CUDA launch: cuBLAS path, the prefill form: {{.*}}then the gated quantizer reads them: block 128, 114688 chunks of 256 values, 2 a warp step,
// CHECK-NEXT: CUDA kernel: void fusion_rt::cuda::stream::swiglu_stream_kernel<fusion_rt::cuda::BF16T, true, true, 7, false, 2, true>(fusion_rt::cuda::KParams)
// CHECK-NOT: CUDA kernel:
func.func @ffn_front_prefill(%x: tensor<2048x4096xbf16>, %wg: tensor<14336x4096xbf16>, %wu: tensor<14336x4096xbf16>) -> (tensor<2048x14336xf8E4M3FN>, tensor<2048x448xf8E8M0FNU>) {
  %d0 = tensor.empty() : tensor<2048x14336xf8E4M3FN>
  %d1 = tensor.empty() : tensor<2048x448xf8E8M0FNU>
  %q:2 = fusion.paired_projection %x, %wg, %wu epilogues(round(bf16) none, round(bf16) none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<mxfp8_e4m3, rowwise> via bf16) outs(%d0, %d1)
      : (tensor<2048x4096xbf16>, tensor<14336x4096xbf16>, tensor<14336x4096xbf16>, tensor<2048x14336xf8E4M3FN>, tensor<2048x448xf8E8M0FNU>) -> (tensor<2048x14336xf8E4M3FN>, tensor<2048x448xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<2048x14336xf8E4M3FN>, tensor<2048x448xf8E8M0FNU>
}

// GPT-OSS's front with biases added before the bf16 rounding (H = 2880, not
// a multiple of 256): the prefill form, the clamped SwiGLU's stream-kernel
// instance, each row's last chunk partial, 1 chunk a step (the row kernel's
// under gated_stream = 0).
// CHECK: op #{{[0-9]+}} fusion.paired_projection
// CHECK: CUDA launch: cuBLAS path, the prefill form: {{.*}}: block 128, 1536 chunks of 256 values, 1 a warp step,
// CHECK-NEXT: CUDA kernel: void fusion_rt::cuda::stream::swiglu_stream_kernel<fusion_rt::cuda::BF16T, true, true, 12, false, 1, true>(fusion_rt::cuda::KParams)
// CHECK-NOT: CUDA kernel:
func.func @oss_front(%x: tensor<128x2880xbf16>, %wg: tensor<2880x2880xbf16>, %wu: tensor<2880x2880xbf16>, %bg: tensor<2880xbf16>, %bu: tensor<2880xbf16>) -> (tensor<128x2880xf8E4M3FN>, tensor<128x90xf8E8M0FNU>) {
  %d0 = tensor.empty() : tensor<128x2880xf8E4M3FN>
  %d1 = tensor.empty() : tensor<128x90xf8E8M0FNU>
  %q:2 = fusion.paired_projection %x, %wg, %wu epilogues(round(bf16, with_bias) bias bias %bg, round(bf16, with_bias) bias bias %bu) gated(#fusion.act<clamped_swiglu>) quantize(#fusion.quant<mxfp8_e4m3, rowwise> via bf16) outs(%d0, %d1)
      : (tensor<128x2880xbf16>, tensor<2880x2880xbf16>, tensor<2880x2880xbf16>, tensor<2880xbf16>, tensor<2880xbf16>, tensor<128x2880xf8E4M3FN>, tensor<128x90xf8E8M0FNU>) -> (tensor<128x2880xf8E4M3FN>, tensor<128x90xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<128x2880xf8E4M3FN>, tensor<128x90xf8E8M0FNU>
}

// A biased front whose H is no multiple of 8 takes the two steps (the pair's
// GEMMs and epilogue kernel, then the plain quantizer): cuBLASLt's bias
// epilogue measured wrong at H = 66 (cuda_paired_quantize_execute).
// CHECK: op #{{[0-9]+}} fusion.paired_projection
// CHECK: CUDA launch: cuBLAS path: the GEMMs (cublasGemmEx) then paired_epilogue_kernel
// CHECK: CUDA kernel: fusion_rt::paired::(anonymous namespace)::paired_epilogue_kernel(fusion_rt::paired::Params)
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::mx_rowwise16_v2_kernel<fusion_rt::cuda::BF16T, true, true>
func.func @odd_h(%x: tensor<2048x4096xbf16>, %wg: tensor<66x4096xbf16>, %wu: tensor<66x4096xbf16>, %bg: tensor<66xbf16>, %bu: tensor<66xbf16>) -> (tensor<2048x66xf8E4M3FN>, tensor<2048x3xf8E8M0FNU>) {
  %d0 = tensor.empty() : tensor<2048x66xf8E4M3FN>
  %d1 = tensor.empty() : tensor<2048x3xf8E8M0FNU>
  %q:2 = fusion.paired_projection %x, %wg, %wu epilogues(round(bf16, with_bias) bias bias %bg, round(bf16, with_bias) bias bias %bu) gated(#fusion.act<swiglu>) quantize(#fusion.quant<mxfp8_e4m3, rowwise> via bf16) outs(%d0, %d1)
      : (tensor<2048x4096xbf16>, tensor<66x4096xbf16>, tensor<66x4096xbf16>, tensor<66xbf16>, tensor<66xbf16>, tensor<2048x66xf8E4M3FN>, tensor<2048x3xf8E8M0FNU>) -> (tensor<2048x66xf8E4M3FN>, tensor<2048x3xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<2048x66xf8E4M3FN>, tensor<2048x3xf8E8M0FNU>
}

// FP8 block scaling: 1x128 groups after SwiGLU of bf16 take the stream
// kernel (fp8_block.cu), f32 1x128 groups the lane-group kernel (16 lanes a
// group), a whole row of 96 the warp kernel (formats.cu).
// CHECK: op #{{[0-9]+}} fusion.gated_act_quantize
// CHECK: CUDA launch: block 128, persistent grid of at most 132 SMs x resident blocks; a warp codes 2 groups of 1x128 a step
// CHECK-NEXT: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_block_swiglu_kernel<fusion_rt::cuda::BF16T, true, true, 1, 0>(fusion_rt::cuda::(anonymous namespace)::BParams)
// CHECK-NOT: not found in the kernel inventory
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_block_row_warp_kernel<fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::F32T, 0> >(
// CHECK-NOT: not found in the kernel inventory
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_block_row_kernel<fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::F32T, 0>, 16>(
// CHECK-NOT: not found in the kernel inventory
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA launch: block 128, grid covering the tensor (one warp step a warp); a warp codes 4 groups of 1x128 a step
// CHECK-NEXT: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_block_plain_kernel<fusion_rt::cuda::F16T, false, false, 2, 0>(fusion_rt::cuda::(anonymous namespace)::BParams)
// CHECK-NOT: not found in the kernel inventory
func.func @fp8_block(%gu: tensor<64x512xbf16>, %x: tensor<8x96xf32>, %y: tensor<4x256xf32>, %z: tensor<2x384xf16>)
    -> (tensor<64x256xf8E4M3FN>, tensor<64x2xf32>, tensor<8x96xf8E4M3FN>, tensor<8x1xf32>, tensor<4x256xf8E4M3FN>, tensor<4x2xf32>, tensor<2x384xf8E5M2>, tensor<2x3xf32>) {
  %d0 = tensor.empty() : tensor<64x256xf8E4M3FN>
  %s0 = tensor.empty() : tensor<64x2xf32>
  %a, %b = fusion.gated_act_quantize #fusion.act<swiglu> %gu as quant<fp8_block_e4m3, rowwise, epsilon = 1.0e-10> via bf16 outs(%d0, %s0)
      : (tensor<64x512xbf16>, tensor<64x256xf8E4M3FN>, tensor<64x2xf32>) -> (tensor<64x256xf8E4M3FN>, tensor<64x2xf32>)
  %d1 = tensor.empty() : tensor<8x96xf8E4M3FN>
  %s1 = tensor.empty() : tensor<8x1xf32>
  %c, %d = fusion.quantize %x as quant<fp8_block_e4m3, rowwise, block = 1x96> outs(%d1, %s1)
      : (tensor<8x96xf32>, tensor<8x96xf8E4M3FN>, tensor<8x1xf32>) -> (tensor<8x96xf8E4M3FN>, tensor<8x1xf32>)
  %d2 = tensor.empty() : tensor<4x256xf8E4M3FN>
  %s2 = tensor.empty() : tensor<4x2xf32>
  %e, %f = fusion.quantize %y as quant<fp8_block_e4m3, rowwise> outs(%d2, %s2)
      : (tensor<4x256xf32>, tensor<4x256xf8E4M3FN>, tensor<4x2xf32>) -> (tensor<4x256xf8E4M3FN>, tensor<4x2xf32>)
  %d3 = tensor.empty() : tensor<2x384xf8E5M2>
  %s3 = tensor.empty() : tensor<2x3xf32>
  %g, %h = fusion.quantize %z as quant<fp8_block_e5m2, rowwise, nan = ignore> outs(%d3, %s3)
      : (tensor<2x384xf16>, tensor<2x384xf8E5M2>, tensor<2x3xf32>) -> (tensor<2x384xf8E5M2>, tensor<2x3xf32>)
  return %a, %b, %c, %d, %e, %f, %g, %h : tensor<64x256xf8E4M3FN>, tensor<64x2xf32>, tensor<8x96xf8E4M3FN>, tensor<8x1xf32>, tensor<4x256xf8E4M3FN>, tensor<4x2xf32>, tensor<2x384xf8E5M2>, tensor<2x3xf32>
}

// 2D blocks (128x128 weight tiles): a block of threads per tile.
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA launch: block 256 per scale block
// CHECK-NEXT: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_tile128_kernel<fusion_rt::cuda::BF16T, true, true>(fusion_rt::cuda::(anonymous namespace)::TParams)
// CHECK-NOT: not found in the kernel inventory
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA launch: block 256 per scale block
// CHECK-NEXT: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_tile_kernel<fusion_rt::cuda::F32T>(fusion_rt::cuda::(anonymous namespace)::TParams)
// CHECK-NOT: not found in the kernel inventory
func.func @fp8_block_2d(%w: tensor<256x384xbf16>, %v: tensor<256x384xf32>)
    -> (tensor<256x384xf8E4M3FN>, tensor<2x3xf32>, tensor<256x384xf8E4M3FN>, tensor<2x3xf32>) {
  %d = tensor.empty() : tensor<256x384xf8E4M3FN>
  %s = tensor.empty() : tensor<2x3xf32>
  %a, %b = fusion.quantize %w as quant<fp8_block_e4m3, rowwise, block = 128x128> outs(%d, %s)
      : (tensor<256x384xbf16>, tensor<256x384xf8E4M3FN>, tensor<2x3xf32>) -> (tensor<256x384xf8E4M3FN>, tensor<2x3xf32>)
  %d1 = tensor.empty() : tensor<256x384xf8E4M3FN>
  %s1 = tensor.empty() : tensor<2x3xf32>
  %c, %e = fusion.quantize %v as quant<fp8_block_e4m3, rowwise, block = 128x128> outs(%d1, %s1)
      : (tensor<256x384xf32>, tensor<256x384xf8E4M3FN>, tensor<2x3xf32>) -> (tensor<256x384xf8E4M3FN>, tensor<2x3xf32>)
  return %a, %b, %c, %e : tensor<256x384xf8E4M3FN>, tensor<2x3xf32>, tensor<256x384xf8E4M3FN>, tensor<2x3xf32>
}

// FP8 per tensor, rowwise from bf16 rows of a multiple of 128: the stream
// kernel (twice under current scaling: amax, then the cast); a width of 100
// takes formats.cu's amax and tile kernels.
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA launch: two passes (tensor amax, then the cast), block 128, grid covering the tensor (one warp step a warp)
// CHECK-NEXT: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_block_plain_kernel<fusion_rt::cuda::BF16T, true, false, 2, 1>(fusion_rt::cuda::(anonymous namespace)::BParams)
// CHECK-NOT: not found in the kernel inventory
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_block_plain_kernel<fusion_rt::cuda::BF16T, true, false, 2, 2>(fusion_rt::cuda::(anonymous namespace)::BParams)
// CHECK-NOT: not found in the kernel inventory
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::amax_kernel<fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::BF16T, 0> >(
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_tensor_kernel<fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::BF16T, 0> >(
func.func @fp8_tensor(%x: tensor<8x256xbf16>, %y: tensor<8x100xbf16>)
    -> (tensor<8x256xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>, tensor<8x100xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) {
  %d0 = tensor.empty() : tensor<8x256xf8E4M3FN>
  %s0 = tensor.empty() : tensor<1xf32>
  %m0 = tensor.empty() : tensor<1xf32>
  %a:3 = fusion.quantize %x as quant<fp8_e4m3, rowwise> outs(%d0, %s0, %m0)
      : (tensor<8x256xbf16>, tensor<8x256xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<8x256xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  %d1 = tensor.empty() : tensor<8x100xf8E4M3FN>
  %s1 = tensor.empty() : tensor<1xf32>
  %m1 = tensor.empty() : tensor<1xf32>
  %c:3 = fusion.quantize %y as quant<fp8_e4m3, rowwise> outs(%d1, %s1, %m1)
      : (tensor<8x100xbf16>, tensor<8x100xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<8x100xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return %a#0, %a#1, %a#2, %c#0, %c#1, %c#2 : tensor<8x256xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>, tensor<8x100xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>
}

// FP8 per tensor with delayed scaling on formats.cu's general kernels (a
// width of 100): the amax pass only where the amax is read (TE's history);
// where nothing reads it the lowering passes no amax buffer.
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::amax_kernel<fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::BF16T, 0> >(
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_tensor_kernel<fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::BF16T, 0> >(
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK-NOT: amax_kernel
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_tensor_kernel<fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::BF16T, 0> >(
// CHECK-NOT: amax_kernel
func.func @fp8_tensor_delayed(%x: tensor<8x100xbf16>, %s: tensor<1xf32>)
    -> (tensor<8x100xf8E4M3FN>, tensor<1xf32>, tensor<8x100xf8E4M3FN>) {
  %d0 = tensor.empty() : tensor<8x100xf8E4M3FN>
  %s0 = tensor.empty() : tensor<1xf32>
  %m0 = tensor.empty() : tensor<1xf32>
  %a:3 = fusion.quantize %x scale %s as quant<fp8_e4m3, rowwise, scaling = delayed> outs(%d0, %s0, %m0)
      : (tensor<8x100xbf16>, tensor<1xf32>, tensor<8x100xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<8x100xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  %d1 = tensor.empty() : tensor<8x100xf8E4M3FN>
  %s1 = tensor.empty() : tensor<1xf32>
  %m1 = tensor.empty() : tensor<1xf32>
  %c:3 = fusion.quantize %x scale %s as quant<fp8_e4m3, rowwise, scaling = delayed> outs(%d1, %s1, %m1)
      : (tensor<8x100xbf16>, tensor<1xf32>, tensor<8x100xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<8x100xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  return %a#0, %a#2, %c#0 : tensor<8x100xf8E4M3FN>, tensor<1xf32>, tensor<8x100xf8E4M3FN>
}

// FP8 per tensor with a transposed copy from bf16 rows of a multiple of 8:
// the cast + transpose kernels of fp8_transpose.cu (current scaling: the
// amax pass first); FP8 blocks of a whole bf16 row of 2048: the wide-row
// kernel (the block in registers); a whole f16 row of 96 stays on the warp
// kernel.
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA launch: two passes (tensor amax, then the cast), block 256, a warp per 64x32 tile
// CHECK-NEXT: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_transpose_amax_kernel<fusion_rt::cuda::BF16T>(fusion_rt::cuda::(anonymous namespace)::XParams)
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_transpose_kernel<fusion_rt::cuda::BF16T, true, true>(fusion_rt::cuda::(anonymous namespace)::XParams)
// CHECK-NOT: not found in the kernel inventory
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA launch: block 256 per scale block, the block in registers
// CHECK-NEXT: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_wide_row_kernel<fusion_rt::cuda::BF16T, false, 2>(fusion_rt::cuda::(anonymous namespace)::TParams)
// CHECK-NOT: not found in the kernel inventory
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp8_block_row_warp_kernel<fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::F16T, 0> >(
func.func @fp8_transpose_and_rows(%x: tensor<64x40xbf16>, %w: tensor<4x2048xbf16>, %v: tensor<4x96xf16>)
    -> (tensor<64x40xf8E4M3FN>, tensor<40x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>, tensor<4x2048xf8E5M2>, tensor<4x1xf32>, tensor<4x96xf8E4M3FN>, tensor<4x1xf32>) {
  %d0 = tensor.empty() : tensor<64x40xf8E4M3FN>
  %c0 = tensor.empty() : tensor<40x64xf8E4M3FN>
  %s0 = tensor.empty() : tensor<1xf32>
  %m0 = tensor.empty() : tensor<1xf32>
  %a:4 = fusion.quantize %x as quant<fp8_e4m3, both, colwise = transposed> outs(%d0, %c0, %s0, %m0)
      : (tensor<64x40xbf16>, tensor<64x40xf8E4M3FN>, tensor<40x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>) -> (tensor<64x40xf8E4M3FN>, tensor<40x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>)
  %d1 = tensor.empty() : tensor<4x2048xf8E5M2>
  %s1 = tensor.empty() : tensor<4x1xf32>
  %b:2 = fusion.quantize %w as quant<fp8_block_e5m2, rowwise, block = 1x2048> outs(%d1, %s1)
      : (tensor<4x2048xbf16>, tensor<4x2048xf8E5M2>, tensor<4x1xf32>) -> (tensor<4x2048xf8E5M2>, tensor<4x1xf32>)
  %d2 = tensor.empty() : tensor<4x96xf8E4M3FN>
  %s2 = tensor.empty() : tensor<4x1xf32>
  %c:2 = fusion.quantize %v as quant<fp8_block_e4m3, rowwise, block = 1x96> outs(%d2, %s2)
      : (tensor<4x96xf16>, tensor<4x96xf8E4M3FN>, tensor<4x1xf32>) -> (tensor<4x96xf8E4M3FN>, tensor<4x1xf32>)
  return %a#0, %a#1, %a#2, %a#3, %b#0, %b#1, %c#0, %c#1 : tensor<64x40xf8E4M3FN>, tensor<40x64xf8E4M3FN>, tensor<1xf32>, tensor<1xf32>, tensor<4x2048xf8E5M2>, tensor<4x1xf32>, tensor<4x96xf8E4M3FN>, tensor<4x1xf32>
}

// FP4 rowwise from 16-bit rows of a multiple of 128: the stream kernels of
// fp4_stream.cu (SiLU -> NVFP4: the amax pass, then the codes, on one
// kernel; SwiGLU -> MXFP4 into f32; plain MXFP4); 16x16 NVFP4 blocks and a
// width of 96 take formats.cu.
// CHECK: op #{{[0-9]+}} fusion.act_quantize
// CHECK: CUDA launch: two passes (tensor amax, then the codes), block 128, persistent grid
// CHECK-NEXT: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp4_stream_kernel<fusion_rt::cuda::BF16T, 4, 0, 1, 16>(fusion_rt::cuda::(anonymous namespace)::SParams)
// CHECK-NOT: not found in the kernel inventory
// CHECK: op #{{[0-9]+}} fusion.gated_act_quantize
// CHECK: CUDA launch: one pass (two when the amax is asked for), block 128
// CHECK-NEXT: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp4_stream_kernel<fusion_rt::cuda::F16T, 7, 2, 1, 32>(fusion_rt::cuda::(anonymous namespace)::SParams)
// CHECK-NOT: not found in the kernel inventory
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp4_stream_kernel<fusion_rt::cuda::BF16T, 0, 2, 2, 32>(fusion_rt::cuda::(anonymous namespace)::SParams)
// CHECK-NOT: not found in the kernel inventory
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp4_row_kernel<fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::BF16T, 0>, 16>(
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp4_row_kernel<fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::BF16T, 0>, 32>(
func.func @fp4_stream(%x: tensor<64x256xbf16>, %gu: tensor<8x768xf16>, %y: tensor<16x128xbf16>, %w: tensor<8x96xbf16>)
    -> (tensor<64x256xf4E2M1FN>, tensor<64x16xf8E4M3FN>, tensor<8x384xf4E2M1FN>, tensor<8x12xf8E8M0FNU>, tensor<16x128xf4E2M1FN>, tensor<16x4xf8E8M0FNU>, tensor<64x256xf4E2M1FN>, tensor<64x16xf8E4M3FN>, tensor<8x96xf4E2M1FN>, tensor<8x3xf8E8M0FNU>) {
  %d0 = tensor.empty() : tensor<64x256xf4E2M1FN>
  %s0 = tensor.empty() : tensor<64x16xf8E4M3FN>
  %m0 = tensor.empty() : tensor<1xf32>
  %a:3 = fusion.act_quantize #fusion.act<silu> %x as quant<nvfp4, rowwise> via bf16 outs(%d0, %s0, %m0)
      : (tensor<64x256xbf16>, tensor<64x256xf4E2M1FN>, tensor<64x16xf8E4M3FN>, tensor<1xf32>) -> (tensor<64x256xf4E2M1FN>, tensor<64x16xf8E4M3FN>, tensor<1xf32>)
  %d1 = tensor.empty() : tensor<8x384xf4E2M1FN>
  %s1 = tensor.empty() : tensor<8x12xf8E8M0FNU>
  %b:2 = fusion.gated_act_quantize #fusion.act<swiglu> %gu as quant<mxfp4, rowwise> via f32 outs(%d1, %s1)
      : (tensor<8x768xf16>, tensor<8x384xf4E2M1FN>, tensor<8x12xf8E8M0FNU>) -> (tensor<8x384xf4E2M1FN>, tensor<8x12xf8E8M0FNU>)
  %d2 = tensor.empty() : tensor<16x128xf4E2M1FN>
  %s2 = tensor.empty() : tensor<16x4xf8E8M0FNU>
  %c:2 = fusion.quantize %y as quant<mxfp4, rowwise> outs(%d2, %s2)
      : (tensor<16x128xbf16>, tensor<16x128xf4E2M1FN>, tensor<16x4xf8E8M0FNU>) -> (tensor<16x128xf4E2M1FN>, tensor<16x4xf8E8M0FNU>)
  %d3 = tensor.empty() : tensor<64x256xf4E2M1FN>
  %s3 = tensor.empty() : tensor<64x16xf8E4M3FN>
  %m3 = tensor.empty() : tensor<1xf32>
  %e:3 = fusion.quantize %x as quant<nvfp4, rowwise, block = 16x16> outs(%d3, %s3, %m3)
      : (tensor<64x256xbf16>, tensor<64x256xf4E2M1FN>, tensor<64x16xf8E4M3FN>, tensor<1xf32>) -> (tensor<64x256xf4E2M1FN>, tensor<64x16xf8E4M3FN>, tensor<1xf32>)
  %d4 = tensor.empty() : tensor<8x96xf4E2M1FN>
  %s4 = tensor.empty() : tensor<8x3xf8E8M0FNU>
  %f:2 = fusion.quantize %w as quant<mxfp4, rowwise> outs(%d4, %s4)
      : (tensor<8x96xbf16>, tensor<8x96xf4E2M1FN>, tensor<8x3xf8E8M0FNU>) -> (tensor<8x96xf4E2M1FN>, tensor<8x3xf8E8M0FNU>)
  return %a#0, %a#1, %b#0, %b#1, %c#0, %c#1, %e#0, %e#1, %f#0, %f#1 : tensor<64x256xf4E2M1FN>, tensor<64x16xf8E4M3FN>, tensor<8x384xf4E2M1FN>, tensor<8x12xf8E8M0FNU>, tensor<16x128xf4E2M1FN>, tensor<16x4xf8E8M0FNU>, tensor<64x256xf4E2M1FN>, tensor<64x16xf8E4M3FN>, tensor<8x96xf4E2M1FN>, tensor<8x3xf8E8M0FNU>
}

// Every family of the MXFP8 plan (runtime/common/mx_plan.h) that the ops
// above do not reach: SwiGLU forward rowwise of a width that is no multiple
// of 256 (the v2 kernel), plain rowwise 16-bit of such a width (v2), plain
// colwise same layout (v2), and the general stream form for swizzled scales.
// CHECK: op #{{[0-9]+}} fusion.gated_act_quantize
// CHECK: CUDA launch: block 128, 20 warp tiles, grid 5 = min(5,
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::swiglu_row16_v2_kernel<fusion_rt::cuda::BF16T, true, true, 7, false>(fusion_rt::cuda::KParams)
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::mx_rowwise16_v2_kernel<fusion_rt::cuda::F16T, true, true>(fusion_rt::cuda::KParams)
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::mx_col16_v2_kernel<fusion_rt::cuda::BF16T, false, true, 2>(fusion_rt::cuda::KParams)
// CHECK: op #{{[0-9]+}} fusion.quantize
// CHECK: CUDA launch: block 128, 512 chunks of 256 values, 8 a warp step, grid {{[0-9]+}} = min(16,
// CHECK: CUDA kernel: void fusion_rt::cuda::stream::row_stream_kernel<fusion_rt::cuda::BF16T, true, true, 8, false, false, false>(fusion_rt::cuda::KParams)
func.func @mx_plan_families(%g: tensor<128x612xbf16>, %h: tensor<64x320xf16>, %c: tensor<64x320xbf16>, %z: tensor<128x1024xbf16>) -> (tensor<128x306xf8E4M3FN>, tensor<128x10xf8E8M0FNU>, tensor<64x320xf8E4M3FN>, tensor<64x10xf8E8M0FNU>, tensor<64x320xf8E5M2>, tensor<2x320xf8E8M0FNU>, tensor<128x1024xf8E4M3FN>, tensor<128x32xf8E8M0FNU>) {
  %e0 = tensor.empty() : tensor<128x306xf8E4M3FN>
  %e1 = tensor.empty() : tensor<128x10xf8E8M0FNU>
  %a:2 = fusion.gated_act_quantize #fusion.act<swiglu> %g as quant<mxfp8_e4m3, rowwise> via bf16 outs(%e0, %e1)
      : (tensor<128x612xbf16>, tensor<128x306xf8E4M3FN>, tensor<128x10xf8E8M0FNU>) -> (tensor<128x306xf8E4M3FN>, tensor<128x10xf8E8M0FNU>)
  %e2 = tensor.empty() : tensor<64x320xf8E4M3FN>
  %e3 = tensor.empty() : tensor<64x10xf8E8M0FNU>
  %b:2 = fusion.quantize %h as quant<mxfp8_e4m3, rowwise> outs(%e2, %e3)
      : (tensor<64x320xf16>, tensor<64x320xf8E4M3FN>, tensor<64x10xf8E8M0FNU>) -> (tensor<64x320xf8E4M3FN>, tensor<64x10xf8E8M0FNU>)
  %e4 = tensor.empty() : tensor<64x320xf8E5M2>
  %e5 = tensor.empty() : tensor<2x320xf8E8M0FNU>
  %d:2 = fusion.quantize %c as quant<mxfp8_e5m2, colwise> outs(%e4, %e5)
      : (tensor<64x320xbf16>, tensor<64x320xf8E5M2>, tensor<2x320xf8E8M0FNU>) -> (tensor<64x320xf8E5M2>, tensor<2x320xf8E8M0FNU>)
  %e6 = tensor.empty() : tensor<128x1024xf8E4M3FN>
  %e7 = tensor.empty() : tensor<128x32xf8E8M0FNU>
  %f:2 = fusion.quantize %z as quant<mxfp8_e4m3, rowwise, scales = swizzled> outs(%e6, %e7)
      : (tensor<128x1024xbf16>, tensor<128x1024xf8E4M3FN>, tensor<128x32xf8E8M0FNU>) -> (tensor<128x1024xf8E4M3FN>, tensor<128x32xf8E8M0FNU>)
  return %a#0, %a#1, %b#0, %b#1, %d#0, %d#1, %f#0, %f#1 : tensor<128x306xf8E4M3FN>, tensor<128x10xf8E8M0FNU>, tensor<64x320xf8E4M3FN>, tensor<64x10xf8E8M0FNU>, tensor<64x320xf8E5M2>, tensor<2x320xf8E8M0FNU>, tensor<128x1024xf8E4M3FN>, tensor<128x32xf8E8M0FNU>
}

// A gated backward's value matrix is two segments of K columns: with an odd
// K the second segment starts on an odd nibble, and the runtime takes the
// one-row-a-thread kernel (formats_plan.h); an even K keeps fp4_row_kernel.
// CHECK: op #{{[0-9]+}} fusion.gated_act_quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp4_row_serial_kernel<fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::BF16T, 2>, 32>(
// CHECK-NOT: not found in the kernel inventory
// CHECK: op #{{[0-9]+}} fusion.gated_act_quantize
// CHECK: CUDA kernel: void fusion_rt::cuda::(anonymous namespace)::fp4_row_kernel<fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::BF16T, 2>, 32>(
// CHECK-NOT: not found in the kernel inventory
func.func @fp4_gated_backward_segments(%x: tensor<4x14xbf16>, %dy: tensor<4x7xbf16>, %x2: tensor<4x64xbf16>, %dy2: tensor<4x32xbf16>)
    -> (tensor<4x14xf4E2M1FN>, tensor<4x2xf8E8M0FNU>, tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>) {
  %d0 = tensor.empty() : tensor<4x14xf4E2M1FN>
  %s0 = tensor.empty() : tensor<4x2xf8E8M0FNU>
  %a:2 = fusion.gated_act_quantize #fusion.act<dswiglu> %x grad %dy as quant<mxfp4, rowwise> via bf16 outs(%d0, %s0)
      : (tensor<4x14xbf16>, tensor<4x7xbf16>, tensor<4x14xf4E2M1FN>, tensor<4x2xf8E8M0FNU>) -> (tensor<4x14xf4E2M1FN>, tensor<4x2xf8E8M0FNU>)
  %d1 = tensor.empty() : tensor<4x64xf4E2M1FN>
  %s1 = tensor.empty() : tensor<4x2xf8E8M0FNU>
  %b:2 = fusion.gated_act_quantize #fusion.act<dswiglu> %x2 grad %dy2 as quant<mxfp4, rowwise> via bf16 outs(%d1, %s1)
      : (tensor<4x64xbf16>, tensor<4x32xbf16>, tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>)
  return %a#0, %a#1, %b#0, %b#1 : tensor<4x14xf4E2M1FN>, tensor<4x2xf8E8M0FNU>, tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
}

// The same front with swizzled scales: the gemv kernel has no quantizing
// form for them (not even with FUSION_RT_PAIRED_QUANT_EPI=1).
// CHECK: op #{{[0-9]+}} fusion.paired_projection
// CHECK: CUDA launch: gemv path: {{.*}}, no cluster, {{.*}} both epilogues in the same launch; then the quantizer of the gated value (kept in a stream-ordered scratch buffer)
// CHECK: CUDA kernel: void fusion_rt::paired::(anonymous namespace)::paired_gemv_kernel<__nv_bfloat16, 1, 2, true, false, false>
// CHECK: CUDA kernel: void fusion_rt::cuda::
func.func @ffn_front_swizzled(%x: tensor<1x4096xbf16>, %wg: tensor<14336x4096xbf16>, %wu: tensor<14336x4096xbf16>) -> (tensor<1x14336xf8E4M3FN>, tensor<128x448xf8E8M0FNU>) {
  %d0 = tensor.empty() : tensor<1x14336xf8E4M3FN>
  %d1 = tensor.empty() : tensor<128x448xf8E8M0FNU>
  %q:2 = fusion.paired_projection %x, %wg, %wu epilogues(round(bf16) none, round(bf16) none) gated(#fusion.act<swiglu>) quantize(#fusion.quant<mxfp8_e4m3, rowwise, scales = swizzled> via bf16) outs(%d0, %d1)
      : (tensor<1x4096xbf16>, tensor<14336x4096xbf16>, tensor<14336x4096xbf16>, tensor<1x14336xf8E4M3FN>, tensor<128x448xf8E8M0FNU>) -> (tensor<1x14336xf8E4M3FN>, tensor<128x448xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<1x14336xf8E4M3FN>, tensor<128x448xf8E8M0FNU>
}
