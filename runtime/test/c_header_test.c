/* c_header_test.c - fusion_rt.h (and fusion_rt_mlir.h) are valid C99 and usable from C. */
#include "fusion_rt.h"
#include "fusion_rt_mlir.h" /* the lowering ABI header is valid C too */

#include <stdio.h>
#include <string.h>

int main(void) {
  float x[64];
  unsigned char data[64], scales[2];
  fusion_rt_quant_scheme s;
  fusion_rt_quant_outputs o;
  fusion_rt_tensor in;
  fusion_rt_status st;
  int i;
  for (i = 0; i < 64; ++i)
    x[i] = (float)(i - 32) * 0.25f;
  memset(&in, 0, sizeof in);
  in.data = x;
  in.dtype = FUSION_RT_F32;
  in.rank = 1;
  in.sizes[0] = 64;
  in.strides[0] = 1;
  fusion_rt_quant_scheme_init(&s);
  fusion_rt_quant_outputs_init(&o);
  o.rowwise_data.data = data;
  o.rowwise_data.dtype = FUSION_RT_F8E4M3;
  o.rowwise_data.rank = 2;
  o.rowwise_data.sizes[0] = 1;
  o.rowwise_data.sizes[1] = 64;
  o.rowwise_data.strides[0] = 64;
  o.rowwise_data.strides[1] = 1;
  o.rowwise_scales = o.rowwise_data;
  o.rowwise_scales.data = scales;
  o.rowwise_scales.dtype = FUSION_RT_E8M0;
  o.rowwise_scales.sizes[1] = 2;
  o.rowwise_scales.strides[0] = 2;
  st = fusion_rt_quantize(&in, &s, &o, NULL, NULL);
  if (st != FUSION_RT_STATUS_SUCCESS) {
    fprintf(stderr, "%s: %s\n", fusion_rt_status_string(st),
            fusion_rt_last_error_message());
    return 1;
  }
  /* Block 0: amax 8 -> RCEIL byte 122 (8/448 -> 2^-5.8 -> 2^-5); x=-8 -> -256. */
  if (scales[0] != 122 || data[0] != 0xF8 || fusion_rt_abi_version() != FUSION_RT_ABI_VERSION) {
    fprintf(stderr, "unexpected result: scale %d data 0x%02x\n", scales[0], data[0]);
    return 1;
  }
  st = fusion_rt_quantize(NULL, &s, &o, NULL, NULL);
  if (st != FUSION_RT_STATUS_NULL_POINTER)
    return 1;
  printf("C header test passed\n");
  return 0;
}
