/* tuning_env_test.c - the tuning knobs read from the environment
 * (runtime/src/tuning.cpp). CTest runs it with FUSION_RT_CUDA_COL_T=sp (a
 * value the knob does not take), FUSION_RT_PAIRED_MT=4 and
 * FUSION_RT_PAIRED_PATH=mma: the valid values are read, the invalid one is
 * reported on stderr and its default kept. */
#include "fusion_rt.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  char said[512] = "";
  FILE *err = tmpfile();
  int64_t col_t = -1, mt = -1, path = -1;
  if (!err)
    return 2;
  {
    /* The library reports on the process's stderr: read it back. */
    FILE *saved = stderr;
    stderr = err;
    if (fusion_rt_get_tuning("FUSION_RT_CUDA_COL_T", &col_t) != FUSION_RT_STATUS_SUCCESS ||
        fusion_rt_get_tuning("FUSION_RT_PAIRED_MT", &mt) != FUSION_RT_STATUS_SUCCESS ||
        fusion_rt_get_tuning("paired_path", &path) != FUSION_RT_STATUS_SUCCESS) {
      stderr = saved;
      fprintf(stderr, "fusion_rt_get_tuning failed: %s\n", fusion_rt_last_error_message());
      return 1;
    }
    stderr = saved;
  }
  rewind(err);
  if (!fgets(said, sizeof said, err))
    said[0] = '\0';
  printf("col_t=%lld mt=%lld path=%lld; stderr: %s\n", (long long)col_t, (long long)mt,
         (long long)path, said);
  if (col_t != 1 || mt != 4 || path != 2)
    return 1;
  if (!strstr(said, "FUSION_RT_CUDA_COL_T=sp is not one of its values (0|1); the "
                    "default is used"))
    return 1;
  return 0;
}
