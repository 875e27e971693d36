//===- formats_plan_test.cpp - which general format kernels a call runs ---===//
//
// runtime/common/formats_plan.h is plain C++: formats.cu launches the steps
// of `plan` and the kernel report names them with `kernel_name`. These
// tests check, without a GPU, the steps of each format and direction, the
// passes that only some calls need (the amax, scale_inv, the NVFP4 2D
// scales, dbias, the serial rows of odd segments), empty shapes, and the
// names the report prints.
//
//===----------------------------------------------------------------------===//
#include "common/formats_plan.h"
#include "fusion_rt.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace fusion_rt;
using namespace fusion_rt::formats_plan;

Request request(int32_t format, int64_t rows = 64, int64_t cols = 256) {
  Request r;
  r.format = format;
  r.rows = rows;
  r.cols = cols;
  r.seg = cols;
  return r;
}

std::vector<Kernel> kernels(const Request &r) {
  const Plan p = plan(r);
  std::vector<Kernel> k;
  for (int i = 0; i < p.n; ++i)
    k.push_back(p.steps[i].kernel);
  return k;
}

TEST(FormatsPlan, Mxfp4Directions) {
  Request r = request(FUSION_RT_FORMAT_MXFP4);
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Fp4Row}));
  EXPECT_EQ(plan(r).steps[0].bs, 32);
  r.colwise = true;
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Fp4Row, Kernel::Fp4Col}));
  r.rowwise = false;
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Fp4Col}));
}

TEST(FormatsPlan, Nvfp4NeedsTheAmaxFirst) {
  Request r = request(FUSION_RT_FORMAT_NVFP4);
  r.amax_out = true; // the lowering's buffers: NVFP4 has an amax result
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Amax, Kernel::Fp4Row}));
  EXPECT_EQ(plan(r).steps[1].bs, 16);
  r.amax_out = false; // the global scale needs it all the same
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Amax, Kernel::Fp4Row}));
  r.nvfp4_2d = true;
  r.colwise = true;
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Amax, Kernel::Scales2d,
                                             Kernel::Fp4Row, Kernel::Fp4Col}));
}

TEST(FormatsPlan, OddSegmentsTakeTheSerialRows) {
  // A gated backward [M, 2K] with K odd: rowwise blocks start on odd nibbles.
  Request r = request(FUSION_RT_FORMAT_MXFP4, 8, 2 * 33);
  r.seg = 33;
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Fp4RowSerial}));
  r.seg = 32; // even halves: the block kernel
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Fp4Row}));
  r.seg = 0; // one segment (0 means the whole row), odd width
  r.cols = 33;
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Fp4Row}));
}

TEST(FormatsPlan, Fp8PerTensor) {
  // Delayed scaling: the amax output (the history) is computed here too.
  Request r = request(FUSION_RT_FORMAT_FP8_E4M3);
  r.amax_out = true;
  r.scale_inv = true;
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Amax, Kernel::Scalars,
                                             Kernel::Fp8Tensor}));
  // Current scaling without an amax output still needs the amax.
  r.amax_out = false;
  r.current_scaling = true;
  EXPECT_TRUE(needs_amax(r));
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Amax, Kernel::Scalars,
                                             Kernel::Fp8Tensor}));
  // Delayed, no amax output: the cast alone.
  r.current_scaling = false;
  r.scale_inv = false;
  EXPECT_FALSE(needs_amax(r));
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Fp8Tensor}));
}

TEST(FormatsPlan, Fp8BlockWidths) {
  Request r = request(FUSION_RT_FORMAT_FP8_BLOCK_E4M3);
  r.block_cols = 128;
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Fp8BlockRow}));
  r.block_cols = 64;
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Fp8BlockRowWarp}));
  r.format = FUSION_RT_FORMAT_FP8_BLOCK_E5M2;
  r.block_cols = 256;
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Fp8BlockRowWarp}));
}

TEST(FormatsPlan, DbiasComesLast) {
  Request r = request(FUSION_RT_FORMAT_MXFP4);
  r.dbias = true;
  r.colwise = true;
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Fp4Row, Kernel::Fp4Col,
                                             Kernel::DbiasBand}));
  // A gated request has no dbias step (validation rejects a gated dbias;
  // the plan encodes it, not only the launcher's compile-time guard).
  r.gated = true;
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Fp4Row, Kernel::Fp4Col}));
}

TEST(FormatsPlan, ActivationOnly) {
  Request r = request(FUSION_RT_FORMAT_NVFP4);
  r.activation_only = true;
  r.amax_out = true; // ignored: no quantizer
  EXPECT_FALSE(needs_amax(r));
  EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Activation}));
}

TEST(FormatsPlan, EmptyShapesLaunchOnlyTheScalars) {
  // No element: no kernel over the values; scale_inv is still written.
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{0, 256}, {64, 0}}) {
    Request r = request(FUSION_RT_FORMAT_FP8_E5M2, rows, cols);
    r.amax_out = r.scale_inv = r.current_scaling = true;
    r.dbias = true;
    EXPECT_EQ(kernels(r), (std::vector<Kernel>{Kernel::Scalars}));
    r.format = FUSION_RT_FORMAT_NVFP4;
    r.scale_inv = false;
    EXPECT_TRUE(kernels(r).empty());
  }
}

TEST(FormatsPlan, KernelNames) {
  const std::string src =
      "fusion_rt::cuda::(anonymous namespace)::Src<fusion_rt::cuda::BF16T, 1>";
  const std::string ns = "fusion_rt::cuda::(anonymous namespace)::";
  EXPECT_EQ(kernel_name(Step{Kernel::Fp4Row, 16}, src),
            "void " + ns + "fp4_row_kernel<" + src + ", 16>(" + ns + "FParams)");
  EXPECT_EQ(kernel_name(Step{Kernel::Amax, 0}, src),
            "void " + ns + "amax_kernel<" + src + " >(" + ns + "FParams, " + ns +
                "Chunks, unsigned int*)");
  EXPECT_EQ(kernel_name(Step{Kernel::Scalars, 0}, src),
            ns + "scalars_kernel(" + ns + "FParams, float*)");
  // Every kernel has a name.
  for (int k = int(Kernel::Amax); k <= int(Kernel::DbiasBand); ++k)
    EXPECT_FALSE(kernel_name(Step{Kernel(k), 32}, src).empty()) << k;
}

} // namespace
