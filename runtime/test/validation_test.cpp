//===- validation_test.cpp - every validation path, nothing written -------===//
//
// Each case starts from a valid call, breaks one argument, and checks the
// status, that the message names the argument, and that no output byte
// changed (outputs are filled with a sentinel).
//
//===----------------------------------------------------------------------===//
#include "test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>

using namespace fusion_rt_test;

namespace {

/// A valid MXFP8 act+quantize call, every output present, ready to break.
struct Call {
  int64_t m = 64, n = 96;
  std::vector<float> x, g;
  fusion_rt_tensor input{}, grad{};
  fusion_rt_activation act{};
  fusion_rt_quant_scheme scheme{};
  QuantBuffers q;
  fusion_rt_quant_outputs out{};
  fusion_rt_options opt{FUSION_RT_BACKEND_AUTO, 0};
  bool use_opt = false;

  Call() {
    x = random_values(m * n, 1);
    g = random_values(m * n, 2);
    input = view2d(x.data(), FUSION_RT_F32, m, n);
    grad = view2d(g.data(), FUSION_RT_F32, m, n);
    fusion_rt_activation_init(&act);
    act.kind = FUSION_RT_ACT_GELU;
    act.backward = 1;
    act.intermediate_dtype = FUSION_RT_BF16;
    scheme = scheme_of(FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_BOTH);
    q.alloc(scheme, m, n, false, true, true, 0xAB);
    out = q.out;
  }
  fusion_rt_status run() {
    return fusion_rt_act_quantize(&input, &grad, &act, &scheme, &out,
                                  use_opt ? &opt : nullptr, nullptr);
  }
  bool untouched() const {
    auto all = [](const std::vector<uint8_t> &v) {
      for (uint8_t b : v)
        if (b != 0xAB)
          return false;
      return true;
    };
    uint32_t sentinel = 0xABABABABu, a, d;
    std::memcpy(&a, &q.amax, 4);
    std::memcpy(&d, q.dbias.data(), 4);
    return all(q.row_data) && all(q.col_data) && all(q.row_scales) &&
           all(q.col_scales) && a == sentinel && d == sentinel;
  }
};

struct Case {
  const char *name;
  std::function<void(Call &)> breakit;
  fusion_rt_status status;
  const char *mentions;
};

} // namespace

TEST(Validation, ValidCallSucceedsAndWrites) {
  Call c;
  ASSERT_EQ(c.run(), FUSION_RT_STATUS_SUCCESS) << fusion_rt_last_error_message();
  EXPECT_FALSE(c.untouched());
  EXPECT_STREQ(fusion_rt_last_error_message(), "");
}

TEST(Validation, EveryBrokenArgumentIsReportedAndNothingWritten) {
  static uint8_t odd_buf[64];
  const Case cases[] = {
      {"null input", [](Call &c) { c.input.data = nullptr; },
       FUSION_RT_STATUS_NULL_POINTER, "input.data"},
      {"input dtype", [](Call &c) { c.input.dtype = FUSION_RT_E8M0; },
       FUSION_RT_STATUS_BAD_DTYPE, "input"},
      {"input dtype invalid", [](Call &c) { c.input.dtype = 42; },
       FUSION_RT_STATUS_BAD_DTYPE, "input.dtype"},
      {"rank 0", [](Call &c) { c.input.rank = 0; }, FUSION_RT_STATUS_BAD_SHAPE,
       "input.rank"},
      {"rank 5", [](Call &c) { c.input.rank = 5; }, FUSION_RT_STATUS_BAD_SHAPE,
       "input.rank"},
      {"negative size", [](Call &c) { c.input.sizes[0] = -1; },
       FUSION_RT_STATUS_BAD_SHAPE, "input.sizes[0]"},
      {"negative stride", [](Call &c) { c.input.strides[1] = -1; },
       FUSION_RT_STATUS_BAD_SHAPE, "input.strides[1]"},
      {"zero stride", [](Call &c) { c.input.strides[0] = 0; },
       FUSION_RT_STATUS_BAD_SHAPE, "input.strides[0]"},
      {"huge size", [](Call &c) { c.input.sizes[0] = int64_t(1) << 50; },
       FUSION_RT_STATUS_BAD_SHAPE, "input.sizes[0]"},
      {"overflowing extent",
       [](Call &c) {
         c.input.sizes[0] = int64_t(1) << 39;
         c.input.strides[0] = int64_t(1) << 39;
         c.input.sizes[1] = int64_t(1) << 39;
         c.input.strides[1] = int64_t(1) << 39;
       },
       FUSION_RT_STATUS_BAD_SHAPE, "overflows"},
      {"rank 3 not collapsible",
       [](Call &c) {
         c.input.rank = 3;
         c.input.sizes[2] = c.n;
         c.input.strides[2] = 1;
         c.input.sizes[1] = c.m / 2;
         c.input.strides[1] = c.n;
         c.input.sizes[0] = 2;
         c.input.strides[0] = 7;
       },
       FUSION_RT_STATUS_BAD_SHAPE, "input.strides[0]"},
      {"misaligned input",
       [](Call &c) { c.input.data = reinterpret_cast<char *>(c.x.data()) + 2; },
       FUSION_RT_STATUS_MISALIGNED, "input.data"},
      {"grad missing", [](Call &c) { c.grad.data = nullptr; },
       FUSION_RT_STATUS_NULL_POINTER, "grad"},
      {"grad dtype", [](Call &c) { c.grad.dtype = FUSION_RT_BF16; },
       FUSION_RT_STATUS_BAD_DTYPE, "grad"},
      {"grad shape", [](Call &c) { c.grad.sizes[1] = c.n - 1; },
       FUSION_RT_STATUS_BAD_SHAPE, "grad"},
      {"grad on forward", [](Call &c) { c.act.backward = 0; },
       FUSION_RT_STATUS_BAD_VALUE, "grad"},
      {"act kind range", [](Call &c) { c.act.kind = 99; },
       FUSION_RT_STATUS_BAD_VALUE, "act->kind"},
      {"backward mode range", [](Call &c) { c.act.backward = 3; },
       FUSION_RT_STATUS_BAD_VALUE, "act->backward"},
      {"negative backward mode", [](Call &c) { c.act.backward = -1; },
       FUSION_RT_STATUS_BAD_VALUE, "act->backward"},
      {"gated kind to non-gated entry",
       [](Call &c) { c.act.kind = FUSION_RT_ACT_SWIGLU; },
       FUSION_RT_STATUS_BAD_VALUE, "act->kind"},
      {"intermediate dtype",
       [](Call &c) { c.act.intermediate_dtype = FUSION_RT_F8E4M3; },
       FUSION_RT_STATUS_BAD_DTYPE, "act->intermediate_dtype"},
      {"act params", [](Call &c) { c.act.alpha = NAN; },
       FUSION_RT_STATUS_BAD_VALUE, "act->"},
      {"format range", [](Call &c) { c.scheme.format = 8; },
       FUSION_RT_STATUS_BAD_VALUE, "scheme->format"},
      {"rounding range", [](Call &c) { c.scheme.scale_rounding = 4; },
       FUSION_RT_STATUS_BAD_VALUE, "scheme->scale_rounding"},
      {"nan range", [](Call &c) { c.scheme.nan_policy = -1; },
       FUSION_RT_STATUS_BAD_VALUE, "scheme->nan_policy"},
      {"direction range", [](Call &c) { c.scheme.direction = 3; },
       FUSION_RT_STATUS_BAD_VALUE, "scheme->direction"},
      {"colwise layout range", [](Call &c) { c.scheme.colwise_layout = 2; },
       FUSION_RT_STATUS_BAD_VALUE, "scheme->colwise_layout"},
      {"scale layout range", [](Call &c) { c.scheme.scale_layout = 2; },
       FUSION_RT_STATUS_BAD_VALUE, "scheme->scale_layout"},
      {"nvfp4 block range", [](Call &c) { c.scheme.nvfp4_block = 2; },
       FUSION_RT_STATUS_BAD_VALUE, "scheme->nvfp4_block"},
      {"elem rounding range", [](Call &c) { c.scheme.elem_rounding = 2; },
       FUSION_RT_STATUS_BAD_VALUE, "scheme->elem_rounding"},
      {"tensor scaling range", [](Call &c) { c.scheme.tensor_scaling = 2; },
       FUSION_RT_STATUS_BAD_VALUE, "scheme->tensor_scaling"},
      {"epsilon", [](Call &c) { c.scheme.amax_epsilon = -1.f; },
       FUSION_RT_STATUS_BAD_VALUE, "scheme->amax_epsilon"},
      {"stochastic mxfp8",
       [](Call &c) { c.scheme.elem_rounding = FUSION_RT_ROUND_STOCHASTIC; },
       FUSION_RT_STATUS_UNSUPPORTED, "scheme->elem_rounding"},
      {"2d mxfp8", [](Call &c) { c.scheme.nvfp4_block = FUSION_RT_NVFP4_2D; },
       FUSION_RT_STATUS_UNSUPPORTED, "scheme->nvfp4_block"},
      {"delayed mxfp8",
       [](Call &c) {
         c.scheme.tensor_scaling = FUSION_RT_TENSOR_SCALING_DELAYED;
       },
       FUSION_RT_STATUS_UNSUPPORTED, "scheme->tensor_scaling"},
      {"floor nvfp4",
       [](Call &c) {
         c.scheme.format = FUSION_RT_FORMAT_NVFP4;
         c.scheme.colwise_layout = FUSION_RT_COLWISE_TRANSPOSED;
         c.scheme.scale_rounding = FUSION_RT_SCALE_FLOOR;
       },
       FUSION_RT_STATUS_UNSUPPORTED, "scheme->scale_rounding"},
      {"ceil fp8",
       [](Call &c) {
         c.scheme.format = FUSION_RT_FORMAT_FP8_E4M3;
         c.scheme.colwise_layout = FUSION_RT_COLWISE_TRANSPOSED;
         c.scheme.scale_rounding = FUSION_RT_SCALE_CEIL;
       },
       FUSION_RT_STATUS_UNSUPPORTED, "scheme->scale_rounding CEIL"},
      {"even fp8",
       [](Call &c) {
         c.scheme.format = FUSION_RT_FORMAT_FP8_E5M2;
         c.scheme.colwise_layout = FUSION_RT_COLWISE_TRANSPOSED;
         c.scheme.scale_rounding = FUSION_RT_SCALE_EVEN;
       },
       FUSION_RT_STATUS_UNSUPPORTED, "scheme->scale_rounding EVEN"},
      {"nvfp4 colwise same",
       [](Call &c) { c.scheme.format = FUSION_RT_FORMAT_NVFP4; },
       FUSION_RT_STATUS_UNSUPPORTED, "scheme->colwise_layout"},
      {"swizzled fp8",
       [](Call &c) {
         c.scheme.format = FUSION_RT_FORMAT_FP8_E4M3;
         c.scheme.scale_layout = FUSION_RT_SCALES_SWIZZLED;
       },
       FUSION_RT_STATUS_UNSUPPORTED, "scheme->scale_layout"},
      {"rowwise data too small",
       [](Call &c) { c.out.rowwise_data.sizes[0] = c.m - 1; },
       FUSION_RT_STATUS_BAD_SHAPE, "outputs->rowwise_data"},
      {"rowwise data dtype",
       [](Call &c) { c.out.rowwise_data.dtype = FUSION_RT_F8E5M2; },
       FUSION_RT_STATUS_BAD_DTYPE, "outputs->rowwise_data"},
      {"rowwise data missing",
       [](Call &c) { c.out.rowwise_data.data = nullptr; },
       FUSION_RT_STATUS_NULL_POINTER, "outputs->rowwise_data"},
      {"rowwise scales too small",
       [](Call &c) { c.out.rowwise_scales.sizes[1] = 2; },
       FUSION_RT_STATUS_BAD_SHAPE, "outputs->rowwise_scales"},
      {"rowwise scales dtype",
       [](Call &c) { c.out.rowwise_scales.dtype = FUSION_RT_F8E4M3; },
       FUSION_RT_STATUS_BAD_DTYPE, "outputs->rowwise_scales"},
      {"colwise data shape (transposed expected)",
       [](Call &c) { c.scheme.colwise_layout = FUSION_RT_COLWISE_TRANSPOSED; },
       FUSION_RT_STATUS_BAD_SHAPE, "outputs->colwise_data"},
      {"colwise scales missing",
       [](Call &c) { c.out.colwise_scales.data = nullptr; },
       FUSION_RT_STATUS_NULL_POINTER, "outputs->colwise_scales"},
      {"swizzled shape",
       [](Call &c) { c.scheme.scale_layout = FUSION_RT_SCALES_SWIZZLED; },
       FUSION_RT_STATUS_BAD_SHAPE, "outputs->rowwise_scales"},
      {"unexpected colwise output",
       [](Call &c) { c.scheme.direction = FUSION_RT_ROWWISE; },
       FUSION_RT_STATUS_BAD_VALUE, "outputs->colwise_data"},
      {"unexpected scale_inv",
       [](Call &c) {
         c.out.scale_inv = view1d(&c.q.scale_inv, FUSION_RT_F32, 1);
       },
       FUSION_RT_STATUS_BAD_VALUE, "outputs->scale_inv"},
      {"unexpected scale input",
       [](Call &c) { c.out.scale = view1d(&c.q.scale, FUSION_RT_F32, 1); },
       FUSION_RT_STATUS_BAD_VALUE, "outputs->scale"},
      {"amax shape", [](Call &c) { c.out.amax.sizes[0] = 2; },
       FUSION_RT_STATUS_BAD_SHAPE, "outputs->amax"},
      {"dbias shape", [](Call &c) { c.out.dbias.sizes[0] = c.n + 1; },
       FUSION_RT_STATUS_BAD_SHAPE, "outputs->dbias"},
      {"dbias dtype", [](Call &c) { c.out.dbias.dtype = FUSION_RT_BF16; },
       FUSION_RT_STATUS_BAD_DTYPE, "outputs->dbias"},
      {"odd fp4 row stride",
       [](Call &c) {
         c.scheme.format = FUSION_RT_FORMAT_MXFP4;
         c.out.rowwise_data =
             view2d(odd_buf, FUSION_RT_F4E2M1, c.m, c.n, c.n + 1);
       },
       FUSION_RT_STATUS_MISALIGNED, "outputs->rowwise_data"},
      {"backend range",
       [](Call &c) {
         c.use_opt = true;
         c.opt.backend = 7;
       },
       FUSION_RT_STATUS_BAD_VALUE, "options->backend"},
      {"threads",
       [](Call &c) {
         c.use_opt = true;
         c.opt.num_threads = -2;
       },
       FUSION_RT_STATUS_BAD_VALUE, "options->num_threads"},
  };
  for (const Case &k : cases) {
    Call c;
    k.breakit(c);
    fusion_rt_status st = c.run();
    EXPECT_EQ(st, k.status) << k.name << ": " << fusion_rt_last_error_message();
    EXPECT_NE(std::string(fusion_rt_last_error_message()).find(k.mentions),
              std::string::npos)
        << k.name << ": message \"" << fusion_rt_last_error_message()
        << "\" does not mention " << k.mentions;
    EXPECT_TRUE(c.untouched()) << k.name << " wrote an output";
  }
}

TEST(Validation, NullDescriptors) {
  Call c;
  EXPECT_EQ(fusion_rt_act_quantize(nullptr, &c.grad, &c.act, &c.scheme, &c.out,
                                   nullptr, nullptr),
            FUSION_RT_STATUS_NULL_POINTER);
  EXPECT_STREQ(fusion_rt_last_error_message(), "input is NULL");
  EXPECT_EQ(fusion_rt_act_quantize(&c.input, &c.grad, nullptr, &c.scheme, &c.out,
                                   nullptr, nullptr),
            FUSION_RT_STATUS_NULL_POINTER);
  EXPECT_STREQ(fusion_rt_last_error_message(), "act is NULL");
  EXPECT_EQ(fusion_rt_act_quantize(&c.input, &c.grad, &c.act, nullptr, &c.out,
                                   nullptr, nullptr),
            FUSION_RT_STATUS_NULL_POINTER);
  EXPECT_STREQ(fusion_rt_last_error_message(), "scheme is NULL");
  EXPECT_EQ(fusion_rt_act_quantize(&c.input, &c.grad, &c.act, &c.scheme, nullptr,
                                   nullptr, nullptr),
            FUSION_RT_STATUS_NULL_POINTER);
  EXPECT_STREQ(fusion_rt_last_error_message(), "outputs is NULL");
  EXPECT_TRUE(c.untouched());
}

TEST(Validation, CudaBackendWithoutCuda) {
  if (fusion_rt_has_cuda())
    GTEST_SKIP() << "this build has the CUDA backend";
  Call c;
  c.use_opt = true;
  c.opt.backend = FUSION_RT_BACKEND_CUDA;
  EXPECT_EQ(c.run(), FUSION_RT_STATUS_UNSUPPORTED);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("options->backend"),
            std::string::npos);
  EXPECT_TRUE(c.untouched());
}

TEST(Validation, GatedArguments) {
  const int64_t m = 8, k = 33;
  std::vector<float> x(size_t(m * (2 * k + 1)), 1.f), g(size_t(m * k), 1.f);
  fusion_rt_activation act;
  fusion_rt_activation_init(&act);
  act.kind = FUSION_RT_ACT_SWIGLU;
  fusion_rt_quant_scheme s = scheme_of(FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_ROWWISE);
  QuantBuffers q;
  q.alloc(s, m, k, false, false, true);
  // Odd packed width.
  fusion_rt_tensor odd = view2d(x.data(), FUSION_RT_F32, m, 2 * k + 1);
  EXPECT_EQ(fusion_rt_gated_act_quantize(&odd, nullptr, nullptr, &act, &s, &q.out,
                                         nullptr, nullptr),
            FUSION_RT_STATUS_BAD_SHAPE);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("input"),
            std::string::npos);
  // dbias is not defined for gated activations.
  fusion_rt_tensor packed = view2d(x.data(), FUSION_RT_F32, m, 2 * k);
  EXPECT_EQ(fusion_rt_gated_act_quantize(&packed, nullptr, nullptr, &act, &s, &q.out,
                                         nullptr, nullptr),
            FUSION_RT_STATUS_UNSUPPORTED);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("outputs->dbias"),
            std::string::npos);
  // up with a different dtype.
  q.out.dbias = fusion_rt_tensor{};
  fusion_rt_tensor gate = view2d(x.data(), FUSION_RT_F32, m, k);
  fusion_rt_tensor up = view2d(x.data(), FUSION_RT_BF16, m, k);
  EXPECT_EQ(fusion_rt_gated_act_quantize(&gate, &up, nullptr, &act, &s, &q.out,
                                         nullptr, nullptr),
            FUSION_RT_STATUS_BAD_DTYPE);
  // Non-gated kind to the gated entry point.
  act.kind = FUSION_RT_ACT_SILU;
  EXPECT_EQ(fusion_rt_gated_act_quantize(&packed, nullptr, nullptr, &act, &s, &q.out,
                                         nullptr, nullptr),
            FUSION_RT_STATUS_BAD_VALUE);
  // Backward output must be [M, 2K].
  act.kind = FUSION_RT_ACT_SWIGLU;
  act.backward = 1;
  fusion_rt_tensor gv = view2d(g.data(), FUSION_RT_F32, m, k);
  EXPECT_EQ(fusion_rt_gated_act_quantize(&packed, nullptr, &gv, &act, &s, &q.out,
                                         nullptr, nullptr),
            FUSION_RT_STATUS_BAD_SHAPE);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("outputs->rowwise_data"),
            std::string::npos);
  for (uint8_t b : q.row_data)
    ASSERT_EQ(b, 0xAB);
  for (uint8_t b : q.row_scales)
    ASSERT_EQ(b, 0xAB);
}

TEST(Validation, OtherEntryPoints) {
  fusion_rt_quant_scheme s = scheme_of(FUSION_RT_FORMAT_MXFP8_E4M3, FUSION_RT_ROWWISE);
  QuantBuffers q;
  q.alloc(s, 4, 32);
  std::vector<float> out(128, 7.f);
  fusion_rt_tensor ov = view2d(out.data(), FUSION_RT_F32, 4, 32);
  EXPECT_EQ(fusion_rt_dequantize(&s, &q.out, FUSION_RT_BOTH, &ov, nullptr, nullptr),
            FUSION_RT_STATUS_BAD_VALUE);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("direction"),
            std::string::npos);
  fusion_rt_tensor small = view2d(out.data(), FUSION_RT_F32, 4, 16);
  EXPECT_EQ(fusion_rt_dequantize(&s, &q.out, FUSION_RT_ROWWISE, &small, nullptr,
                                 nullptr),
            FUSION_RT_STATUS_BAD_SHAPE);
  for (float v : out)
    ASSERT_EQ(v, 7.f);

  // (The paired projection's own validation is paired_projection_test.cpp.)
  EXPECT_EQ(fusion_rt_paired_projection_run(nullptr, nullptr, nullptr),
            FUSION_RT_STATUS_NULL_POINTER);

  fusion_rt_quant_shapes sh;
  EXPECT_EQ(fusion_rt_quant_shapes_for(&s, -1, 4, 0, &sh), FUSION_RT_STATUS_BAD_SHAPE);
  EXPECT_EQ(fusion_rt_quant_shapes_for(&s, 4, 5, 1, &sh), FUSION_RT_STATUS_BAD_SHAPE);

  // Activation output type must be the intermediate type.
  fusion_rt_activation act;
  fusion_rt_activation_init(&act);
  act.kind = FUSION_RT_ACT_RELU;
  act.intermediate_dtype = FUSION_RT_BF16;
  std::vector<float> in(128, 1.f);
  fusion_rt_tensor iv = view2d(in.data(), FUSION_RT_F32, 4, 32);
  EXPECT_EQ(fusion_rt_activation_apply(&iv, nullptr, nullptr, &act, &ov, nullptr,
                                       nullptr, nullptr),
            FUSION_RT_STATUS_BAD_DTYPE);
  EXPECT_NE(std::string(fusion_rt_last_error_message()).find("output"),
            std::string::npos);
  for (float v : out)
    ASSERT_EQ(v, 7.f);
}

TEST(Validation, StatusStringsAndVersion) {
  EXPECT_EQ(fusion_rt_abi_version(), FUSION_RT_ABI_VERSION);
  EXPECT_STREQ(fusion_rt_status_string(FUSION_RT_STATUS_SUCCESS),
               "FUSION_RT_STATUS_SUCCESS");
  EXPECT_STREQ(fusion_rt_status_string(FUSION_RT_STATUS_UNSUPPORTED),
               "FUSION_RT_STATUS_UNSUPPORTED");
  EXPECT_STREQ(fusion_rt_status_string(fusion_rt_status(1234)),
               "FUSION_RT_STATUS_<unknown>");
}
