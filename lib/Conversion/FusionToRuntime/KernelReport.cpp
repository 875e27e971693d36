//===- KernelReport.cpp - which kernel each fusion op becomes -------------===//
//
// `fusion-opt --fusion-kernel-report` prints, for every fusion op of the
// input: the runtime entry point the op lowers to, the CUDA kernel the
// runtime launches for it (or why the CUDA backend does not take it), the
// launch shape on an H200 for static shapes, and the kernel's resources read
// off the compiler: registers, static shared memory, stack, spills and the
// count of shared-state-space vs generic memory instructions in its PTX
// (tools/fusion-inspect/kernel_inventory.py, run at build time).
//
// The paired projection's path and launch plan come from the runtime's own
// plan (runtime/common/paired_plan.h, which paired_projection.cu launches
// from), and so do the MXFP8 quantizers' kernel, template arguments and
// grid (runtime/common/mx_plan.h, which cuda_backend.cu launches from, with
// the default tuning knobs) and the FP4 / FP8 stream and tile kernels'
// scope and names (fp4_plan.h, fp8_plan.h), and the general format
// kernels' steps (formats_plan.h); every name the report produces must exist in
// the inventory, which test/Conversion/kernel-report.mlir checks.
//
//===----------------------------------------------------------------------===//
#include "fusion/Conversion/FusionToRuntime/FusionToRuntime.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "common/formats_plan.h"
#include "common/fp4_plan.h"
#include "common/fp8_plan.h"
#include "common/mx_plan.h"
#include "common/paired_plan.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#ifndef FUSION_KERNEL_INVENTORY
#define FUSION_KERNEL_INVENTORY ""
#endif

namespace mlir::fusion {
#define GEN_PASS_DEF_KERNELREPORT
#include "fusion/Conversion/FusionToRuntime/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;
namespace mx_plan = fusion_rt::mx_plan;

namespace {

/// One row of the inventory.
struct KernelInfo {
  std::string file;
  int registers = 0, smem = 0, stack = 0, spillSt = 0, spillLd = 0;
  int sharedInsts = 0, genericInsts = 0;
};

/// What the report says about one op.
struct Plan {
  std::string cApi;
  std::string cudaNote; ///< why CUDA does not take it, if it does not
  SmallVector<std::string, 2> kernels;
  std::string launch;
};

constexpr int kSMs = 132; // H200
constexpr int kThreads = 128;

StringRef cApiOf(Operation *op) {
  if (isa<QuantizeOp>(op))
    return "fusion_rt_quantize";
  if (isa<ActQuantizeOp>(op))
    return "fusion_rt_act_quantize";
  if (isa<GatedActQuantizeOp>(op))
    return "fusion_rt_gated_act_quantize";
  if (cast<PairedProjectionOp>(op).getQuant())
    return "fusion_rt_paired_projection_quantize";
  return "fusion_rt_paired_projection_run";
}

std::string typeTag(Type t, bool paired) {
  if (t.isBF16())
    return paired ? "__nv_bfloat16" : "fusion_rt::cuda::BF16T";
  if (t.isF16())
    return paired ? "__half" : "fusion_rt::cuda::F16T";
  return paired ? "float" : "fusion_rt::cuda::F32T";
}

int elemBytes(Type t) { return t.isF32() ? 4 : 2; }

/// Blocks of 128 threads resident per SM for `regs` registers per thread
/// (65536 registers, allocated per warp in units of 256; 64 warps per SM).
int blocksPerSM(int regs) {
  int perThread = std::max(8, (regs + 7) / 8 * 8);
  int byRegs = 65536 / (perThread * kThreads);
  return std::max(1, std::min(byRegs, 64 / (kThreads / 32)));
}

/// The rows of a quantizer's data: the product of all but the last dim
/// (kDynamic if any is dynamic).
int64_t rowsOf(ArrayRef<int64_t> shape) {
  int64_t m = 1;
  for (int64_t d : shape.drop_back())
    m = ShapedType::isDynamic(d) || ShapedType::isDynamic(m) ? ShapedType::kDynamic
                                                              : m * d;
  return m;
}

/// The launch line of a persistent grid of 128-thread blocks: `what` the
/// work ("1024 warp tiles"), `want` blocks wanted, capped by the resident
/// blocks of `kernel` (estimated from its registers) on every SM.
std::string persistentGrid(const std::string &what, int64_t want,
                           StringRef kernel,
                           const llvm::StringMap<KernelInfo> &inv) {
  auto it = inv.find(kernel);
  int perSM = it == inv.end() ? 1 : blocksPerSM(it->second.registers);
  int64_t cap = int64_t(kSMs) * perSM;
  return "block 128, " + what + ", grid " + std::to_string(std::min(want, cap)) +
         " = min(" + std::to_string(want) + ", " + std::to_string(kSMs) +
         " SMs x " + std::to_string(perSM) +
         " resident blocks, est. from registers)";
}

/// The grid of the FP8 stream kernels (fp8_plan::stream_covers; the tuning
/// knob stream_grid may change it at run time).
std::string streamGrid(const fusion_rt::fp8_plan::Request &r) {
  return fusion_rt::fp8_plan::stream_covers(r.op == 2)
             ? "grid covering the tensor (one warp step a warp)"
             : "persistent grid of at most 132 SMs x resident blocks";
}

/// The demangled name of a value source (mx_kernel.cuh): `src` is SrcPlain,
/// SrcActFwd / SrcActBwd (the alias templates of SrcAct<T, BWD>),
/// SrcGatedFwd or SrcGatedBwd; `t` the input type's tag.
std::string sourceTypeName(StringRef src, const std::string &t) {
  return src.starts_with("SrcAct")
             ? "fusion_rt::cuda::SrcAct<" + t + ", " +
                   (src.ends_with("Bwd") ? "true" : "false") + ">"
             : ("fusion_rt::cuda::" + src + "<" + t + ">").str();
}

/// The value source as the FP4 stream kernels see it: the activation kind
/// (its ABI number; 0 for a plain quantizer), the intermediate type
/// (kInterBF16 0, kInterF16 1, kInterF32 2) and the direction.
struct StreamSource {
  int kind = 0;
  int inter = 2;
  bool forward = true;
};

int interOf(Type t) { return t.isBF16() ? 0 : t.isF16() ? 1 : 2; }

StreamSource streamSourceOf(ActivationAttr act, Type intermediate) {
  return {int(act.getKind()), interOf(intermediate), !act.getBackward()};
}

/// The rows and width of a quantizer's value matrix as the FP4 / FP8 plans
/// take them: a dynamic row count as 1 (any count; the group limit is
/// checked at run time), a dynamic width as 0 (unknown: the plans take
/// neither the stream kernels nor the 128x128 tile kernel).
void streamSizes(ArrayRef<int64_t> shape, int64_t &rows, int64_t &cols) {
  int64_t n = shape.empty() ? ShapedType::kDynamic : shape.back();
  int64_t m = rowsOf(shape);
  rows = ShapedType::isDynamic(m) ? 1 : m;
  cols = ShapedType::isDynamic(n) ? 0 : n;
}

/// FP4 rowwise on the stream kernels of fp4_stream.cu: the runtime's own
/// scope and kernel name (runtime/common/fp4_plan.h) for the lowering's
/// buffers (at run time also 16-byte aligned rows). `op` is 0 for a plain
/// quantizer, 1 an activation, 2 a gated one. Returns false where they do
/// not apply.
bool planFp4Stream(QuantSchemeAttr scheme, Type inElt, int op, StreamSource ss,
                   bool dbias, ArrayRef<int64_t> shape, Plan &plan) {
  namespace fp4_plan = fusion_rt::fp4_plan;
  bool nv = scheme.getFormat() == QuantFormat::nvfp4;
  fp4_plan::Request r;
  r.format = int32_t(scheme.getFormat());
  r.elem_rounding = scheme.getElemRounding() == ElemRounding::stochastic
                        ? FUSION_RT_ROUND_STOCHASTIC
                        : FUSION_RT_ROUND_RNE;
  r.nvfp4_block = scheme.getBlockRows() > 1 ? FUSION_RT_NVFP4_2D : FUSION_RT_NVFP4_1D;
  r.op = op;
  r.backward = !ss.forward;
  r.kind = ss.kind;
  r.kind_gated = op == 2;
  r.inter = ss.inter;
  r.own_inter = interOf(inElt);
  r.input16 = !inElt.isF32();
  r.rowwise = scheme.getDirection() != QuantDirection::colwise;
  r.colwise = scheme.getDirection() != QuantDirection::rowwise;
  r.dbias = dbias;
  streamSizes(shape, r.rows, r.cols);
  if (!fp4_plan::applies(r))
    return false;
  plan.kernels.push_back(fp4_plan::kernel_name(r, typeTag(inElt, false)));
  bool amax = nv && scheme.getRecipe() != Nvfp4Recipe::torchao_block;
  plan.launch = std::string(amax ? "two passes (tensor amax, then the codes), "
                                 : "one pass (two when the amax is asked for), ") +
                "block 128, persistent grid of at most 132 SMs x resident "
                "blocks; a warp codes " +
                std::to_string(fp4_plan::groups_per_step(r)) +
                " groups of 128 values a step (fp4_stream.cu; formats.cu's "
                "fp4_row_kernel where rows are not 16-byte aligned)";
  return true;
}

/// The format kernels (runtime/cuda/formats.cu: formats_execute and
/// run_passes): MXFP4, NVFP4, FP8 per tensor. Kernels are templated on
/// Src<input type, request kind> (0 plain, 1 activation, 2 gated).
void planFormats(QuantSchemeAttr scheme, Type inElt, StringRef src, bool dbias,
                 ArrayRef<int64_t> shape, StreamSource ss, Plan &plan,
                 bool amaxRead) {
  const std::string ns = "fusion_rt::cuda::(anonymous namespace)::";
  const int kind = src == "SrcPlain" ? 0 : src.starts_with("SrcAct") ? 1 : 2;
  const std::string srcT = ns + "Src<" + typeTag(inElt, false) + ", " +
                           std::to_string(kind) + ">";
  QuantFormat f = scheme.getFormat();
  bool fp8 = f == QuantFormat::fp8_e4m3 || f == QuantFormat::fp8_e5m2;
  bool nv = f == QuantFormat::nvfp4;
  if ((nv || f == QuantFormat::mxfp4) &&
      planFp4Stream(scheme, inElt, kind, ss, dbias, shape, plan))
    return;
  // The FP8 kernels of fp8_block.cu: the runtime's own scope and names
  // (runtime/common/fp8_plan.h) for the lowering's buffers.
  namespace fp8_plan = fusion_rt::fp8_plan;
  fp8_plan::Request r8;
  r8.format = int32_t(f);
  r8.op = kind;
  r8.backward = !ss.forward;
  r8.kind = ss.kind;
  r8.block_rows = scheme.isBlockFP8() ? int32_t(scheme.getBlockRows()) : 1;
  r8.block_cols = scheme.isBlockFP8() ? int32_t(scheme.getBlockCols()) : 128;
  r8.nan_propagate = scheme.getNanPolicy() == NanPolicy::propagate;
  r8.rowwise = scheme.getDirection() != QuantDirection::colwise;
  r8.colwise = scheme.getDirection() != QuantDirection::rowwise;
  r8.col_transposed = scheme.getColwiseLayout() == ColwiseLayout::transposed;
  r8.dbias = dbias;
  streamSizes(shape, r8.rows, r8.cols);
  // A gated backward's value matrix is [dgate | dup], two segments of the
  // K columns of `shape` (api.cpp: seg_cols = K): blocks never straddle
  // them, and an odd K starts the second on an odd nibble.
  if (kind == 2 && !ss.forward && r8.cols > 0) {
    r8.seg_cols = r8.cols;
    r8.cols *= 2;
  }
  r8.input16 = !inElt.isF32();
  // FP8 per tensor rowwise from 16-bit rows of 128-multiple width: the
  // stream kernels (fp8_block_stream_applies); with a transposed copy from
  // 16-bit rows of 8-multiple width: the cast + transpose kernels.
  const bool fp8Stream = fp8 && fp8_plan::stream_applies(r8);
  const bool fp8T = fp8 && fp8_plan::transpose_applies(r8);
  const bool current = scheme.getTensorScaling() == TensorScaling::current;
  if (fp8T) {
    if (current)
      plan.kernels.push_back(
          fp8_plan::transpose_amax_kernel_name(typeTag(inElt, false)));
    plan.kernels.push_back(fp8_plan::transpose_kernel_name(r8, typeTag(inElt, false)));
    plan.launch = std::string(current ? "two passes (tensor amax, then the cast), "
                                      : "one pass, ") +
                  "block 256, a warp per 64x32 tile, transposed in registers "
                  "(fp8_transpose.cu; formats.cu's fp8_tensor_kernel where rows "
                  "are not 16-byte aligned)";
    return;
  }
  if (scheme.isBlockFP8()) {
    // 1x128 from 16-bit rows, plain or SwiGLU forward: the stream kernels
    // (fp8_block.cu, fp8_block_stream_applies; at run time also 16-byte
    // aligned rows). Else formats.cu's plan.
    if (scheme.getBlockRows() > 1) { // 2D blocks (weight tiles)
      // 128x128 of 16-bit rows of a 128-multiple width: the tile in
      // registers (fp8_tile128_kernel; at run time also 16-byte aligned
      // rows and no amax output); else the general tile kernel.
      plan.kernels.push_back(fp8_plan::tile_kernel_name(r8, typeTag(inElt, false)));
      plan.launch = "block 256 per scale block, grid-stride, grid = min(blocks, "
                    "132 SMs x 8) (fp8_block.cu)";
      return;
    }
    if (fp8_plan::wide_row_applies(r8)) { // per-row and other wide blocks
      plan.kernels.push_back(fp8_plan::tile_kernel_name(r8, typeTag(inElt, false)));
      plan.launch = "block 256 per scale block, the block in registers "
                    "(fp8_block.cu; formats.cu's fp8_block_row_warp_kernel where "
                    "rows are not 16-byte aligned)";
      return;
    }
    if (fp8_plan::stream_applies(r8)) {
      plan.kernels.push_back(fp8_plan::stream_kernel_name(
          r8, typeTag(inElt, false), fp8_plan::kPassCodes));
      plan.launch = std::string("block 128, ") + streamGrid(r8) +
                    "; a warp codes " +
                    std::to_string(2 * fp8_plan::stream_units(r8)) +
                    " groups of 1x128 a step (fp8_block.cu; formats.cu's "
                    "fp8_block_row_kernel where rows are not 16-byte aligned)";
      return;
    }
  } else if (fp8Stream) {
    // Current scaling runs the stream kernels twice: amax, then the cast.
    if (scheme.getTensorScaling() == TensorScaling::current)
      plan.kernels.push_back(fp8_plan::stream_kernel_name(
          r8, typeTag(inElt, false), fp8_plan::kPassAmax));
    plan.kernels.push_back(fp8_plan::stream_kernel_name(
        r8, typeTag(inElt, false), fp8_plan::kPassCast));
    plan.launch =
        std::string(scheme.getTensorScaling() == TensorScaling::current
                        ? "two passes (tensor amax, then the cast), "
                        : "one pass, ") +
        "block 128, " + streamGrid(r8) +
        " (fp8_block.cu; formats.cu's fp8_tensor_kernel where "
        "rows are not 16-byte aligned)";
    return;
  }
  // The general kernels of formats.cu: the runtime's own plan
  // (common/formats_plan.h), for the lowering's buffers (an amax output for
  // per-tensor and NVFP4 schemes, scale_inv for per tensor).
  namespace formats_plan = fusion_rt::formats_plan;
  formats_plan::Request rf;
  rf.format = int32_t(f);
  // (The lowering passes no amax where delayed scaling's is not read.)
  rf.amax_out = (scheme.isPerTensor() && amaxRead) || nv;
  rf.current_scaling = current;
  rf.scale_inv = scheme.isPerTensor();
  rf.rowwise = r8.rowwise;
  rf.colwise = r8.colwise;
  rf.nvfp4_2d = nv && scheme.getBlockRows() == 16;
  rf.dbias = dbias;
  rf.gated = kind == 2;
  rf.block_cols = r8.block_cols;
  rf.rows = r8.rows;
  rf.cols = r8.cols;
  rf.seg = r8.seg_cols;
  const formats_plan::Plan fp = formats_plan::plan(rf);
  for (int i = 0; i < fp.n; ++i)
    plan.kernels.push_back(formats_plan::kernel_name(fp.steps[i], srcT));
  plan.launch = "block 256, grid-stride, grid = min(work / 256, 132 SMs x 8) "
                "(formats.cu, its plan: common/formats_plan.h)";
}

/// The plan request of an MXFP8 op (common/mx_plan.h) with the lowering's
/// buffers: contiguous rows, 16-byte aligned bases. The vector-access flags
/// follow cuda_backend.cu's checks on those strides: `vec` values a lane
/// (the family's), inputs whose rows are `xRowMul` * K wide (2 for a packed
/// [gate | up] input) and the code matrices' row lengths.
mx_plan::Request mxRequest(QuantSchemeAttr scheme, Type inElt, StringRef src,
                           ArrayRef<int64_t> shape, StreamSource ss,
                           int64_t xRowMul, bool &dynamic) {
  mx_plan::Request r;
  r.src = src == "SrcPlain"      ? mx_plan::Source::Plain
          : src == "SrcActFwd"   ? mx_plan::Source::ActFwd
          : src == "SrcActBwd"   ? mx_plan::Source::ActBwd
          : src == "SrcGatedFwd" ? mx_plan::Source::GatedFwd
                                 : mx_plan::Source::GatedBwd;
  r.kind = ss.kind;
  r.inter = ss.inter;
  r.dir = scheme.getDirection() == QuantDirection::rowwise   ? mx_plan::kRow
          : scheme.getDirection() == QuantDirection::colwise ? mx_plan::kCol
                                                             : mx_plan::kBoth;
  r.esize = elemBytes(inElt);
  r.col_t = r.dir != mx_plan::kRow &&
            scheme.getColwiseLayout() == ColwiseLayout::transposed;
  // Sizes the plan needs as numbers: a dynamic row count as 32 rows (a full
  // band), a dynamic width as 64 columns (no plain stream kernel; the gated
  // one's width needs only be a multiple of 8).
  int64_t m = rowsOf(shape), k = shape.back();
  dynamic = ShapedType::isDynamic(m) || ShapedType::isDynamic(k);
  r.M = ShapedType::isDynamic(m) ? 32 : m;
  r.K = ShapedType::isDynamic(k) ? 64 : k;
  const int64_t es = r.esize, vec = mx_plan::source_vec(r.src, r.esize);
  const int64_t nv = r.src == mx_plan::Source::GatedBwd ? 2 : 1;
  auto rowsVec = [&](int64_t rowElems, int64_t esz, int64_t bytes) {
    return r.M <= 1 || (rowElems * esz) % bytes == 0;
  };
  const int64_t xRow = xRowMul * r.K, codeRow = nv * r.K;
  const bool rowwise = r.dir != mx_plan::kCol, colwise = r.dir != mx_plan::kRow;
  // The colwise codes: [M, cols] rows, or transposed [cols, M] rows.
  auto colVec = [&](int64_t bytes) {
    return r.col_t ? (r.K <= 1 || r.M % bytes == 0) : rowsVec(codeRow, 1, bytes);
  };
  r.vec_all = rowsVec(xRow, es, vec * es) && (nv == 1 || r.K % vec == 0) &&
              (!rowwise || rowsVec(codeRow, 1, vec)) &&
              (!colwise || colVec(r.col_t ? 16 : vec));
  r.vec16 = es == 2 && rowsVec(xRow, es, 16) && (!rowwise || rowsVec(codeRow, 1, 8)) &&
            (!colwise || colVec(r.col_t ? 16 : 8));
  r.flat = xRowMul == 1 && scheme.getScaleLayout() == ScaleLayout::compact;
  return r;
}

/// The launch line of an MXFP8 plan: its work units and grid.
std::string mxLaunch(const mx_plan::Plan &p, bool dynamic, StringRef kernel,
                     const llvm::StringMap<KernelInfo> &inv) {
  using mx_plan::Family;
  std::string units;
  if (p.family == Family::RowStream || p.family == Family::SwigluStream)
    units = " chunks of 256 values, " +
            std::to_string(p.family == Family::SwigluStream ? p.step
                           : p.flat                         ? 4
                                                            : 8) +
            " a warp step";
  else if (p.family == Family::BothCta || p.family == Family::ColT)
    units = " CTA tiles of " + std::to_string(p.unit_rows) + "x" +
            std::to_string(p.unit_cols);
  else
    units = " warp tiles";
  if (dynamic)
    return "block 128, persistent grid over" + units +
           "; size depends on the runtime shape";
  return persistentGrid(std::to_string(p.units) + units, p.want, kernel, inv);
}

void planMX(QuantSchemeAttr scheme, Type inElt, StringRef src,
            ArrayRef<int64_t> shape, bool dbias,
            const llvm::StringMap<KernelInfo> &inv, Plan &plan,
            StreamSource ss = {}, int64_t xRowMul = 1, bool amaxRead = true) {
  if (scheme.getFormat() != QuantFormat::mxfp8_e4m3 &&
      scheme.getFormat() != QuantFormat::mxfp8_e5m2) {
    planFormats(scheme, inElt, src, dbias, shape, ss, plan, amaxRead);
    return;
  }
  // The runtime's own plan with the default knobs (tuning.def).
  bool dynamic = false;
  mx_plan::Request r = mxRequest(scheme, inElt, src, shape, ss, xRowMul, dynamic);
  mx_plan::Plan p = mx_plan::plan_mx(r, fusion_rt::Tuning{});
  std::string name = mx_plan::kernel_name(
      p, typeTag(inElt, false), scheme.getFormat() == QuantFormat::mxfp8_e4m3,
      scheme.getNanPolicy() == NanPolicy::propagate);
  plan.kernels.push_back(name);
  if (dbias)
    plan.kernels.push_back("fusion_rt::cuda::dbias_reduce_kernel(float const*, "
                           "long, long, float*, long)");
  plan.launch = mxLaunch(p, dynamic, name, inv);
  if (dynamic && p.family == mx_plan::Family::SwigluBwdV2)
    plan.launch += " (this kernel where the rows are a multiple of 32; the "
                   "tile engine's otherwise)";
}

/// The zero_scale policy on the GPU (mx_zero_scale.cu): after the
/// quantizer, ONE rewrites the codes of the blocks of scale byte 0 and
/// MIN_NORMAL recomputes them through the source `src` of input type `t`.
void planZeroScale(QuantSchemeAttr scheme, StringRef src, Type inElt,
                   Plan &plan) {
  if (!plan.cudaNote.empty())
    return;
  if (scheme.getZeroScale() == ZeroScale::one)
    plan.kernels.push_back("fusion_rt::cuda::(anonymous namespace)::"
                           "zero_scale_one_kernel(fusion_rt::cuda::KParams, "
                           "int, long, long)");
  if (scheme.getZeroScale() == ZeroScale::min_normal)
    plan.kernels.push_back("void fusion_rt::cuda::(anonymous namespace)::"
                           "zero_scale_min_normal_kernel<" +
                           sourceTypeName(src, typeTag(inElt, false)) +
                           " >(fusion_rt::cuda::KParams, long, long)");
}

void planPaired(PairedProjectionOp p, Plan &plan);

/// Whether a quantizing pair on the cuBLAS path takes the prefill form: the
/// op's conditions, paired::prefill_form (common/paired_plan.h), which
/// cuda_paired_quantize_execute launches from. `guType`: the type of the
/// GEMMs' [gate | up].
static bool prefillForm(PairedProjectionOp p, const Plan &plan, int64_t h,
                        Type &guType) {
  if (!StringRef(plan.launch).starts_with("cuBLAS path") ||
      ShapedType::isDynamic(h))
    return false;
  fusion_rt::paired::QuantHalf halves[2];
  int i = 0;
  for (auto [kind, bias, scale, round, withBias] :
       {std::tuple(p.getEpilogue0(), p.getBias0(), p.getScale0(),
                   p.getRound0(), p.getRoundWithBias0()),
        std::tuple(p.getEpilogue1(), p.getBias1(), p.getScale1(),
                   p.getRound1(), p.getRoundWithBias1())}) {
    // As the lowering passes them.
    FailureOr<int64_t> bt =
        bias ? getRuntimeDtype(cast<ShapedType>(bias.getType()).getElementType())
             : FailureOr<int64_t>(FUSION_RT_F32);
    halves[i++] = {int32_t(kind), getAccumulatorRound(round, withBias),
                   bool(bias), bool(scale), succeeded(bt) ? int32_t(*bt) : -1};
  }
  bool biased = false;
  if (!fusion_rt::paired::prefill_form(p.getGated().has_value(), halves, h, biased))
    return false;
  std::optional<Type> r0 = p.getRound0();
  guType = r0 ? *r0 : Float32Type::get(p.getContext());
  return true;
}

Plan planOp(Operation *op, const llvm::StringMap<KernelInfo> &inv) {
  Plan plan;
  plan.cApi = cApiOf(op).str();
  const bool amaxRead = getUnreadRuntimeOutputs(op).empty();
  if (auto q = dyn_cast<QuantizeOp>(op)) {
    Type t = cast<ShapedType>(q.getInput().getType()).getElementType();
    // v2: 16-bit plain quantize without amax (MX schemes have none).
    planMX(q.getScheme(), t, "SrcPlain",
           cast<ShapedType>(q.getInput().getType()).getShape(), false, inv,
           plan, {}, 1, amaxRead);
    planZeroScale(q.getScheme(), "SrcPlain", t, plan);
  } else if (auto q = dyn_cast<ActQuantizeOp>(op)) {
    planMX(q.getScheme(),
           cast<ShapedType>(q.getInput().getType()).getElementType(),
           q.getActivation().getBackward() ? "SrcActBwd" : "SrcActFwd",
           cast<ShapedType>(q.getInput().getType()).getShape(), q.getDbias(),
           inv, plan, streamSourceOf(q.getActivation(), q.getIntermediate()), 1,
           amaxRead);
    planZeroScale(q.getScheme(),
                  q.getActivation().getBackward() ? "SrcActBwd" : "SrcActFwd",
                  cast<ShapedType>(q.getInput().getType()).getElementType(),
                  plan);
  } else if (auto q = dyn_cast<GatedActQuantizeOp>(op)) {
    auto in = cast<ShapedType>(q.getInputs()[0].getType());
    SmallVector<int64_t> half(in.getShape());
    if (q.getInputs().size() == 1 && !ShapedType::isDynamic(half.back()))
      half.back() /= 2;
    bool bwd = q.getActivation().getBackward();
    planMX(q.getScheme(), in.getElementType(),
           bwd ? "SrcGatedBwd" : "SrcGatedFwd", half, false, inv, plan,
           streamSourceOf(q.getActivation(), q.getIntermediate()),
           q.getInputs().size() == 1 ? 2 : 1, amaxRead);
    planZeroScale(q.getScheme(), bwd ? "SrcGatedBwd" : "SrcGatedFwd",
                  in.getElementType(), plan);
  } else {
    auto p = cast<PairedProjectionOp>(op);
    planPaired(p, plan);
    if (std::optional<QuantSchemeAttr> quant = p.getQuant()) {
      auto lhs = cast<ShapedType>(p.getLhs().getType());
      auto w0 = cast<ShapedType>(p.getRhs0().getType());
      SmallVector<int64_t, 2> shape{lhs.getRank() == 2 ? lhs.getDimSize(0) : 1,
                                    pairedWeightRows(w0, p.getKn())};
      Type guType;
      if (prefillForm(p, plan, shape[1], guType)) {
        // The prefill form: GEMM(s) into [gate | up], then the gated
        // quantizer on its halves (rows of 2H).
        Plan q;
        planMX(*quant, guType, "SrcGatedFwd", shape, false, inv, q,
               streamSourceOf(*p.getGated(), *p.getIntermediate()), 2,
               amaxRead);
        planZeroScale(*quant, "SrcGatedFwd", guType, q);
        plan.kernels = q.kernels;
        plan.cudaNote = q.cudaNote;
        plan.launch =
            "cuBLAS path, the prefill form: the GEMMs (one over both weights "
            "where they lie stacked or interleaved in one buffer; cuBLASLt "
            "with its bias epilogue where a bias is added) write gate and up "
            "of the rounding's type to a stream-ordered scratch buffer, then "
            "the gated quantizer reads them" +
            (q.launch.empty() ? std::string() : ": " + q.launch);
        return plan;
      }
      // The quantizing form: the gated value [N, H] of the intermediate
      // type, then the plain quantizer on it (fusion_rt.h).
      Type t = *p.getIntermediate();
      Plan q;
      planMX(*quant, t, "SrcPlain", shape, false, inv, q, {}, 1, amaxRead);
      planZeroScale(*quant, "SrcPlain", t, q);
      llvm::append_range(plan.kernels, q.kernels);
      plan.cudaNote = q.cudaNote;
      plan.launch += "; then the quantizer of the gated value (kept in a "
                     "stream-ordered scratch buffer)" +
                     (q.launch.empty() ? std::string() : ": " + q.launch);
    }
  }
  return plan;
}

/// Whether the gemv path's quantizing epilogue (FUSION_RT_PAIRED_QUANT_EPI)
/// takes a quantizing pair's scheme (cuda_paired_quantize_execute's
/// quant_epilogue_for): MXFP8 rowwise, compact scales, the default
/// zero-scale rule.
static bool quantEpilogueScheme(QuantSchemeAttr s) {
  return (s.getFormat() == QuantFormat::mxfp8_e4m3 ||
          s.getFormat() == QuantFormat::mxfp8_e5m2) &&
         s.getDirection() == QuantDirection::rowwise &&
         s.getScaleLayout() == ScaleLayout::compact &&
         s.getZeroScale() == ZeroScale::exact;
}

/// The selector (gemv, tensor-core mma or cuBLAS by tokens and
/// multiply-adds) and the gemv / mma launch plans come from
/// runtime/common/paired_plan.h, the code the CUDA backend launches from.
void planPaired(PairedProjectionOp p, Plan &plan) {
  {
    auto lhs = cast<ShapedType>(p.getLhs().getType());
    auto w0 = cast<ShapedType>(p.getRhs0().getType());
    auto w1 = cast<ShapedType>(p.getRhs1().getType());
    int64_t n = lhs.getRank() == 2 ? lhs.getDimSize(0) : 1;
    int64_t k = lhs.getShape().back();
    int64_t h0 = pairedWeightRows(w0, p.getKn()),
            h1 = pairedWeightRows(w1, p.getKn());
    bool gated = p.getGated().has_value();
    std::string t = typeTag(lhs.getElementType(), true);
    // The kernels are in the files' anonymous namespaces; their Params is
    // shared by the three kernel files (cuda/paired_kernels.cuh).
    const char *ns = "fusion_rt::paired::(anonymous namespace)::";
    const std::string params = "(fusion_rt::paired::Params)";
    bool dyn = ShapedType::isDynamic(n) || ShapedType::isDynamic(k) ||
               ShapedType::isDynamic(h0) || ShapedType::isDynamic(h1);
    if (dyn) {
      plan.launch = "gemv path (tokens <= 16 or <= 2^23 multiply-adds), mma "
                    "path (16-bit operands, <= 3 * 2^26 multiply-adds) or cuBLAS "
                    "path, chosen at run time from the shape";
      return;
    }
    using namespace fusion_rt::paired;
    int64_t esize = elemBytes(lhs.getElementType());
    GemvPlan g = plan_gemv(n, k, h0, h1, gated, esize);
    MmaPlan mp = plan_mma(n, k, h0, h1, gated);
    Path path = select_path(n, k, h0, h1, esize, k % (16 / esize) == 0);
    if (path == Path::Gemv && g.ok) {
      // The decode instance takes the plan when every present bias and
      // scale is f32 (the runtime's decode_nb, without PDL: its default).
      bool f32Operands = true;
      for (Value v : {p.getBias0(), p.getScale0(), p.getBias1(), p.getScale1()})
        if (v)
          f32Operands = f32Operands &&
                        cast<ShapedType>(v.getType()).getElementType().isF32();
      int64_t nb = decode_nb(g, gated, f32Operands, /*pdl=*/false);
      // FUSION_RT_PAIRED_QUANT_EPI=1 (off by default) would run the
      // quantizing form as one kernel where the plan allows it.
      const int64_t cy = p.getQuant() && quantEpilogueScheme(*p.getQuant())
                             ? quant_epilogue_cy(g, gated)
                             : 0;
      const bool epi = cy > 0;
      auto gemvName = [&](bool quantInstance) {
        return std::string("void ") + ns + "paired_gemv_kernel<" + t + ", " +
               std::to_string(g.mt) + ", " + std::to_string(g.rpw) +
               (gated ? ", true" : ", false") +
               (gemv_is_lean(g.S, g.mt, g.cpw) ? ", true" : ", false") +
               (quantInstance ? ", true" : ", false") + ">" + params;
      };
      plan.kernels.push_back(nb > 0 ? std::string("void ") + ns +
                                          "paired_decode_kernel<" + t + ", " +
                                          std::to_string(nb) + ">" + params
                                    : gemvName(false));
      plan.launch =
          "gemv path: block " + std::to_string(g.threads()) + " (" +
          std::to_string(g.wr) + " row x " + std::to_string(g.wk) +
          " K-split warps), grid (" + std::to_string(g.S) + ", " +
          std::to_string(g.g) + ", " + std::to_string(g.z) + ")" +
          (g.S > 1
               ? ", clusters of " + std::to_string(g.S) + " CTAs splitting K"
               : ", no cluster") +
          ", " + std::to_string(g.mt) + " token(s) and " +
          std::to_string(g.rpw) + " weight row(s) per warp, dynamic smem " +
          std::to_string(g.smem) + " B, both epilogues in the same launch" +
          (nb > 0 ? ", decode instance (" + std::to_string(nb) +
                        " chunks per lane)"
                  : "") +
          (epi ? " (FUSION_RT_PAIRED_QUANT_EPI=1: one kernel, " +
                     gemvName(true) +
                     ", the quantizer in its epilogue, clusters of " +
                     std::to_string(cy) + " CTAs along the columns)"
               : "");
    } else if (path == Path::Mma && mp.ok) {
      plan.kernels.push_back(std::string("void ") + ns + "paired_mma_kernel<" +
                             t + ", " + std::to_string(mp.tm) + ", " +
                             std::to_string(mp.nt) + (gated ? ", true" : ", false") +
                             ">" + params);
      plan.launch =
          "mma path (tensor cores, mma.sync m16n8k16, fp32 accumulation): "
          "block " + std::to_string(mp.threads()) + " (" +
          std::to_string(mp.wk) + " K-split warps), grid (" +
          std::to_string(mp.S) + ", " + std::to_string(mp.g) + ", " +
          std::to_string(mp.z) + ")" +
          (mp.S > 1 ? ", clusters of " + std::to_string(mp.S) +
                          " CTAs splitting K"
                    : ", no cluster") +
          ", tiles of " + std::to_string(16 * mp.tm) + " tokens x " +
          std::to_string(8 * mp.nt) +
          " weight rows, both epilogues in the same launch";
    } else {
      plan.kernels.push_back(std::string(ns) + "paired_epilogue_kernel" + params);
      plan.launch = "cuBLAS path: the GEMMs (cublasGemmEx) then "
                    "paired_epilogue_kernel, block 256";
    }
  }
}

llvm::StringMap<KernelInfo> readInventory(StringRef path, std::string &arch,
                                          std::string &error) {
  llvm::StringMap<KernelInfo> inv;
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    error = "cannot read the kernel inventory '" + path.str() + "'";
    return inv;
  }
  SmallVector<StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n', -1, false);
  for (StringRef line : lines) {
    if (line.consume_front("# arch ")) {
      arch = line.trim().str();
      continue;
    }
    SmallVector<StringRef> f;
    line.split(f, '\t');
    if (f.size() != 9 || f[0] == "file")
      continue;
    KernelInfo k;
    k.file = f[0].str();
    int *slots[] = {&k.registers, &k.smem,        &k.stack,       &k.spillSt,
                    &k.spillLd,   &k.sharedInsts, &k.genericInsts};
    for (unsigned i = 0; i < 7; ++i)
      (void)f[2 + i].getAsInteger(10, *slots[i]);
    inv[f[1]] = k;
  }
  return inv;
}

struct KernelReportPass
    : public fusion::impl::KernelReportBase<KernelReportPass> {
  using KernelReportBase::KernelReportBase;

  void runOnOperation() override {
    std::string arch, error;
    llvm::StringMap<KernelInfo> inv;
    const std::string path =
        inventoryPath.empty() ? std::string(FUSION_KERNEL_INVENTORY)
                              : std::string(inventoryPath);
    if (!path.empty())
      inv = readInventory(path, arch, error);
    else
      error = "this fusion-opt was built without the CUDA toolkit, so there "
              "is no kernel inventory";
    llvm::raw_ostream &os = llvm::outs();
    os << "fusion kernel report";
    if (error.empty())
      os << " (kernels compiled for " << arch << ", launch shapes for an "
         << "H200 with " << kSMs << " SMs)\n";
    else
      os << "\n  note: " << error << "; kernel resources are not shown\n";
    unsigned index = 0;
    getOperation()->walk([&](Operation *op) {
      if (!isa<QuantizeOp, ActQuantizeOp, GatedActQuantizeOp,
               PairedProjectionOp>(op))
        return;
      Plan plan = planOp(op, inv);
      os << "op #" << index++ << " " << op->getName() << " at " << op->getLoc()
         << "\n";
      os << "  entry point: _mlir_ciface_" << getRuntimeEntryPoint(op)
         << " -> " << plan.cApi << "\n";
      os << "  CPU backend: reference implementation (host memory)\n";
      if (!plan.cudaNote.empty()) {
        os << "  CUDA backend: " << plan.cudaNote << "\n";
        return;
      }
      os << "  CUDA launch: " << plan.launch << "\n";
      for (const std::string &k : plan.kernels) {
        os << "  CUDA kernel: " << k << "\n";
        auto it = inv.find(k);
        if (it == inv.end()) {
          if (error.empty())
            os << "    (not found in the kernel inventory)\n";
          continue;
        }
        const KernelInfo &ki = it->second;
        os << "    registers " << ki.registers << ", static smem " << ki.smem
           << " B, stack " << ki.stack << " B, spill stores/loads "
           << ki.spillSt << "/" << ki.spillLd << " B, shared-memory insts "
           << ki.sharedInsts << ", generic ld/st " << ki.genericInsts << " ("
           << ki.file << ".cu)\n";
      }
    });
    markAllAnalysesPreserved();
  }
};

} // namespace

