/* Quantizes one MXFP8 block on the CPU through the installed runtime. */
#include <fusion_rt.h>
#include <stdio.h>

int main(void) {
  float x[32];
  unsigned char data[32], scale[1];
  for (int i = 0; i < 32; ++i)
    x[i] = 1.0f;
  fusion_rt_tensor in = {x, FUSION_RT_F32, 2, {1, 32}, {32, 1}};
  fusion_rt_quant_scheme s;
  fusion_rt_quant_scheme_init(&s);
  fusion_rt_quant_outputs o;
  fusion_rt_quant_outputs_init(&o);
  fusion_rt_tensor d = {data, FUSION_RT_F8E4M3, 2, {1, 32}, {32, 1}};
  fusion_rt_tensor sc = {scale, FUSION_RT_E8M0, 2, {1, 1}, {1, 1}};
  o.rowwise_data = d;
  o.rowwise_scales = sc;
  fusion_rt_status st = fusion_rt_quantize(&in, &s, &o, NULL, NULL);
  printf("abi %d status %s scale %u data %u\n", fusion_rt_abi_version(),
         fusion_rt_status_string(st), scale[0], data[0]);
  return st == FUSION_RT_STATUS_SUCCESS ? 0 : 1;
}
