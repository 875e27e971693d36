//===- abi_edge_test.cpp - the C ABI's promises at its edges ---------------===//
//
// Regression tests of the hardening issue: views without elements (as MLIR
// hands them over: [R, 0] with strides [0, 1]) are valid and cost nothing
// whatever their row count; packed FP4 outputs write their own bytes and no
// other (the pad nibble rule of fusion_rt.h); an allocation failure inside a
// paired projection is reported as OUT_OF_MEMORY instead of aborting.
//
//===----------------------------------------------------------------------===//
#include "test_util.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace fusion_rt_test;

namespace {

/// One byte of storage that every empty view points to (the data pointer of
/// an empty memref is valid, it is just never dereferenced).
alignas(16) char gDummy[16];

/// Quantizes an [m, n] matrix whose views are all empty, as MLIR builds them
/// (strides [0, 1] where a dimension is 0), and returns the status.
fusion_rt_status quantizeEmpty(int32_t format, int32_t direction,
                               int32_t scales, int64_t m, int64_t n,
                               float *amax, float *scaleInv) {
  fusion_rt_quant_scheme s = scheme_of(format, direction,
                                       FUSION_RT_COLWISE_SAME, scales);
  fusion_rt_quant_shapes sh{};
  EXPECT_EQ(fusion_rt_quant_shapes_for(&s, m, n, 0, &sh),
            FUSION_RT_STATUS_SUCCESS);
  auto view = [](int32_t dt, const int64_t shape[2]) {
    return view2d(gDummy, dt, shape[0], shape[1], shape[1] == 0 ? 0 : shape[1],
                 1);
  };
  const int64_t in[2] = {m, n};
  fusion_rt_tensor input = view(FUSION_RT_BF16, in);
  fusion_rt_quant_outputs o;
  fusion_rt_quant_outputs_init(&o);
  const int32_t ddt = format == FUSION_RT_FORMAT_MXFP8_E4M3 ||
                              format == FUSION_RT_FORMAT_FP8_E4M3
                          ? FUSION_RT_F8E4M3
                      : format == FUSION_RT_FORMAT_MXFP8_E5M2 ||
                              format == FUSION_RT_FORMAT_FP8_E5M2
                          ? FUSION_RT_F8E5M2
                          : FUSION_RT_F4E2M1;
  const int32_t sdt =
      format == FUSION_RT_FORMAT_NVFP4 ? FUSION_RT_F8E4M3 : FUSION_RT_E8M0;
  const bool blocks = format <= FUSION_RT_FORMAT_NVFP4;
  if (direction != FUSION_RT_COLWISE) {
    o.rowwise_data = view(ddt, sh.rowwise_data);
    if (blocks)
      o.rowwise_scales = view(sdt, sh.rowwise_scales);
  }
  if (direction != FUSION_RT_ROWWISE) {
    o.colwise_data = view(ddt, sh.colwise_data);
    if (blocks)
      o.colwise_scales = view(sdt, sh.colwise_scales);
  }
  if (amax)
    o.amax = view1d(amax, FUSION_RT_F32, 1);
  if (scaleInv)
    o.scale_inv = view1d(scaleInv, FUSION_RT_F32, 1);
  return fusion_rt_quantize(&input, &s, &o, nullptr, nullptr);
}

} // namespace

TEST(AbiEdges, EmptyViewsAreValid) {
  struct Shape {
    int64_t m, n;
  } shapes[] = {{64, 0}, {0, 64}, {0, 0}, {1, 0}};
  for (const Shape &sh : shapes)
    for (int32_t dir : {FUSION_RT_ROWWISE, FUSION_RT_COLWISE, FUSION_RT_BOTH})
      for (int32_t layout : {FUSION_RT_SCALES_COMPACT, FUSION_RT_SCALES_SWIZZLED})
        for (int32_t f : {FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_FORMAT_MXFP4}) {
          float amax = -1.f;
          EXPECT_EQ(quantizeEmpty(f, dir, layout, sh.m, sh.n, &amax, nullptr),
                    FUSION_RT_STATUS_SUCCESS)
              << "format " << f << " direction " << dir << " layout " << layout
              << " [" << sh.m << ", " << sh.n
              << "]: " << fusion_rt_last_error_message();
          EXPECT_EQ(amax, 0.f) << "the amax of no element";
        }
  // Per-tensor scalars of an empty tensor: amax 0, the scale of amax 0.
  float amax = -1.f, sinv = -1.f;
  ASSERT_EQ(quantizeEmpty(FUSION_RT_FORMAT_FP8_E4M3, FUSION_RT_ROWWISE,
                          FUSION_RT_SCALES_COMPACT, 64, 0, &amax, &sinv),
            FUSION_RT_STATUS_SUCCESS)
      << fusion_rt_last_error_message();
  EXPECT_EQ(amax, 0.f);
  EXPECT_EQ(sinv, 1.f) << "amax 0 gives scale 1 (TE's edge rule)";
}

TEST(AbiEdges, HugeEmptyTensorReturnsAtOnce) {
  // [2^40, 0] once looped over 2^35 empty bands (the call hung).
  const int64_t rows = int64_t(1) << 40;
  for (int32_t dir : {FUSION_RT_ROWWISE, FUSION_RT_BOTH})
    EXPECT_EQ(quantizeEmpty(FUSION_RT_FORMAT_MXFP8_E4M3, dir,
                            FUSION_RT_SCALES_COMPACT, rows, 0, nullptr, nullptr),
              FUSION_RT_STATUS_SUCCESS)
        << fusion_rt_last_error_message();
  // The activation and the dequantization of such a tensor as well.
  fusion_rt_tensor in = view2d(gDummy, FUSION_RT_F32, rows, 0, 0, 1);
  fusion_rt_tensor out = view2d(gDummy, FUSION_RT_F32, rows, 0, 0, 1);
  fusion_rt_activation act;
  fusion_rt_activation_init(&act);
  act.kind = FUSION_RT_ACT_SILU;
  EXPECT_EQ(fusion_rt_activation_apply(&in, nullptr, nullptr, &act, &out,
                                       nullptr, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS)
      << fusion_rt_last_error_message();
}

TEST(AbiEdges, PackedOutputsWriteTheirBytesOnly) {
  // MXFP4 of [8, 33]: each packed row owns ceil(33/2) = 17 bytes; the row
  // stride is 40 nibbles (20 bytes), so 3 bytes of every row belong to no
  // view. The pad nibble (the high one of byte 16) is written as zero.
  const int64_t m = 8, n = 33, rsNibbles = 40;
  std::vector<float> x = random_values(m * n, 7);
  fusion_rt_tensor input = view2d(x.data(), FUSION_RT_F32, m, n);
  fusion_rt_quant_scheme s =
      scheme_of(FUSION_RT_FORMAT_MXFP4, FUSION_RT_ROWWISE);
  std::vector<uint8_t> data(size_t(m * rsNibbles / 2), 0xAB);
  std::vector<uint8_t> scales(size_t(m * 2), 0xAB);
  fusion_rt_quant_outputs o;
  fusion_rt_quant_outputs_init(&o);
  o.rowwise_data = view2d(data.data(), FUSION_RT_F4E2M1, m, n, rsNibbles, 1);
  o.rowwise_scales = view2d(scales.data(), FUSION_RT_E8M0, m, 2);
  ASSERT_EQ(fusion_rt_quantize(&input, &s, &o, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS)
      << fusion_rt_last_error_message();
  for (int64_t i = 0; i < m; ++i) {
    const uint8_t *row = data.data() + i * rsNibbles / 2;
    EXPECT_EQ(row[16] >> 4, 0) << "row " << i << ": the pad nibble is zero";
    for (int64_t b = 17; b < rsNibbles / 2; ++b)
      EXPECT_EQ(row[b], 0xAB) << "row " << i << " byte " << b
                              << " lies outside the view and was written";
  }

  // NVFP4 of [1, 1]: one code in the low nibble of byte 0, its high nibble
  // the pad; bytes 1.. are another tensor's.
  float one = 3.0f, amax = 0, sinv = 0;
  fusion_rt_tensor in1 = view2d(&one, FUSION_RT_F32, 1, 1);
  fusion_rt_quant_scheme nv =
      scheme_of(FUSION_RT_FORMAT_NVFP4, FUSION_RT_ROWWISE);
  uint8_t d1[4] = {0xAB, 0xAB, 0xAB, 0xAB}, s1[4] = {0xAB, 0xAB, 0xAB, 0xAB};
  fusion_rt_quant_outputs o1;
  fusion_rt_quant_outputs_init(&o1);
  o1.rowwise_data = view2d(d1, FUSION_RT_F4E2M1, 1, 1, 2, 1);
  o1.rowwise_scales = view2d(s1, FUSION_RT_F8E4M3, 1, 1);
  o1.amax = view1d(&amax, FUSION_RT_F32, 1);
  o1.scale_inv = view1d(&sinv, FUSION_RT_F32, 1);
  ASSERT_EQ(fusion_rt_quantize(&in1, &nv, &o1, nullptr, nullptr),
            FUSION_RT_STATUS_SUCCESS)
      << fusion_rt_last_error_message();
  EXPECT_EQ(d1[0] >> 4, 0) << "the pad nibble is zero";
  EXPECT_NE(d1[0] & 0xF, 0) << "3.0 is not encoded as zero";
  EXPECT_EQ(d1[1], 0xAB);
  EXPECT_EQ(s1[1], 0xAB);
}

TEST(AbiEdges, PairedProjectionOutOfMemoryIsAStatus) {
  // lhs bf16 [4, 2^23], weights [2, 2^23]: the CPU backend converts each
  // weight to fp32 (64 MiB) and gives each of 2 threads a scratch row
  // (2 x 32 MiB). Every one of these is past glibc's largest mmap threshold
  // (32 MiB), so it is a fresh mapping that the address-space limit counts
  // (smaller blocks could come from heap memory that earlier tests freed).
  // With the limit 16 MiB above current use the first weight does not fit;
  // with 100 MiB the second does not; with 150 MiB both do and the scratch
  // (once allocated inside the workers, where a failure aborted the process)
  // does not. Each time the call must say so, not abort. Each limit is tried
  // in a child, so the limit and a failure stay there.
  const int64_t k = int64_t(1) << 23;
  std::vector<uint16_t> lhs(size_t(4 * k), 0x3f80), w(size_t(2 * 2 * k), 0x3f80);
  std::vector<float> out0(8, 7.f), out1(8, 7.f);
  fusion_rt_paired_projection d{};
  d.lhs = view2d(lhs.data(), FUSION_RT_BF16, 4, k);
  d.weight0 = view2d(w.data(), FUSION_RT_BF16, 2, k);
  d.weight1 = view2d(w.data() + 2 * k, FUSION_RT_BF16, 2, k);
  d.gated_kind = -1;
  d.accumulate_dtype = FUSION_RT_F32;
  d.out0 = view2d(out0.data(), FUSION_RT_F32, 4, 2);
  d.out1 = view2d(out1.data(), FUSION_RT_F32, 4, 2);
  fusion_rt_options opt{FUSION_RT_BACKEND_CPU, 2};

  for (rlim_t marginMiB : {16, 100, 150}) {
  SCOPED_TRACE(testing::Message() << "limit: " << marginMiB << " MiB above use");
  fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    long pages = 0;
    if (FILE *f = fopen("/proc/self/statm", "r")) {
      if (fscanf(f, "%ld", &pages) != 1)
        pages = 0;
      fclose(f);
    }
    if (pages == 0)
      _exit(3);
    const rlim_t limit = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) +
                         (marginMiB << 20);
    struct rlimit rl = {limit, limit};
    if (setrlimit(RLIMIT_AS, &rl) != 0)
      _exit(4);
    const fusion_rt_status st =
        fusion_rt_paired_projection_run(&d, &opt, nullptr);
    bool untouched = true;
    for (float v : out0)
      untouched = untouched && v == 7.f;
    _exit(st == FUSION_RT_STATUS_OUT_OF_MEMORY ? (untouched ? 0 : 2) : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status))
      << "the call died (signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
      << ") instead of returning OUT_OF_MEMORY";
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1: another status than OUT_OF_MEMORY, 2: an output was written, "
         "3/4: the limit could not be set";
  }

  // Without the limit the same call succeeds.
  ASSERT_EQ(fusion_rt_paired_projection_run(&d, &opt, nullptr),
            FUSION_RT_STATUS_SUCCESS)
      << fusion_rt_last_error_message();
  EXPECT_EQ(out0[0], float(k)) << "2^23 products of 1 x 1";
}

TEST(AbiEdges, SynchronizeWithoutDeviceWorkIsANoOp) {
  // No call of this thread ran on the CUDA backend: no CUDA call is made
  // (a machine without a GPU answers at once) and the status is SUCCESS.
  EXPECT_EQ(fusion_rt_synchronize(nullptr), FUSION_RT_STATUS_SUCCESS);
  EXPECT_STREQ(fusion_rt_last_error_message(), "");
}
