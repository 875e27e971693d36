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
// The kernel choice mirrors the dispatch in runtime/cuda/cuda_backend.cu and
// paired_projection.cu; every name it produces must exist in the inventory,
// which test/Conversion/kernel-report.mlir checks, so the mirror cannot
// drift silently.
//
//===----------------------------------------------------------------------===//
#include "fusion/Conversion/FusionToRuntime/FusionToRuntime.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#ifndef FUSION_KERNEL_INVENTORY
#define FUSION_KERNEL_INVENTORY ""
#endif

using namespace mlir;
using namespace mlir::fusion;

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

/// The MX tile engine: mirrors runtime/cuda/cuda_backend.cu + launch.cuh.
void planMX(Operation *op, QuantSchemeAttr scheme, Type inElt, StringRef src,
            int vec, int g, ArrayRef<int64_t> shape, bool dbias,
            const llvm::StringMap<KernelInfo> &inv, Plan &plan) {
  if (scheme.getFormat() != QuantFormat::mxfp8_e4m3 &&
      scheme.getFormat() != QuantFormat::mxfp8_e5m2) {
    plan.cudaNote = ("not taken: the CUDA backend implements MXFP8 only; "
                     "format '" +
                     stringifyQuantFormat(scheme.getFormat()) +
                     "' runs on the CPU backend (host memory)")
                        .str();
    return;
  }
  int dir = scheme.getDirection() == QuantDirection::rowwise   ? 1
            : scheme.getDirection() == QuantDirection::colwise ? 2
                                                               : 3;
  std::string name = ("void fusion_rt::cuda::mx_quantize_kernel<fusion_rt::"
                      "cuda::" +
                      src + "<" + typeTag(inElt, false) + ">, " +
                      std::to_string(dir) + ">(fusion_rt::cuda::KParams)")
                         .str();
  // SrcAct carries the backward flag as a second template argument.
  if (src.starts_with("SrcAct"))
    name = ("void fusion_rt::cuda::mx_quantize_kernel<fusion_rt::cuda::SrcAct<" +
            typeTag(inElt, false) + ", " +
            (src.ends_with("Bwd") ? "true" : "false") + ">, " +
            std::to_string(dir) + ">(fusion_rt::cuda::KParams)");
  plan.kernels.push_back(name);
  if (dbias)
    plan.kernels.push_back("fusion_rt::cuda::dbias_reduce_kernel(float const*, "
                           "long, long, float*, long)");
  int64_t m = 1;
  for (int64_t d : shape.drop_back())
    m = ShapedType::isDynamic(d) || ShapedType::isDynamic(m) ? ShapedType::kDynamic
                                                              : m * d;
  int64_t k = shape.back();
  if (ShapedType::isDynamic(m) || ShapedType::isDynamic(k)) {
    plan.launch = "block 128; grid depends on the runtime shape";
    return;
  }
  int64_t perTileX = (32 / g) * vec;
  int64_t tiles = (m + 31) / 32 * ((k + perTileX - 1) / perTileX);
  int64_t want = (tiles + kThreads / 32 - 1) / (kThreads / 32);
  auto it = inv.find(name);
  int perSM = it == inv.end() ? 1 : blocksPerSM(it->second.registers);
  int64_t cap = int64_t(kSMs) * perSM;
  plan.launch = "block 128, " + std::to_string(tiles) + " warp tiles, grid " +
                std::to_string(std::min(want, cap)) + " = min(" +
                std::to_string(want) + ", " + std::to_string(kSMs) + " SMs x " +
                std::to_string(perSM) + " resident blocks, est. from registers)";
}

Plan planOp(Operation *op, const llvm::StringMap<KernelInfo> &inv) {
  Plan plan;
  plan.cApi = cApiOf(op).str();
  if (auto q = dyn_cast<QuantizeOp>(op)) {
    Type t = q.getInput().getType().getElementType();
    planMX(op, q.getScheme(), t, "SrcPlain", 16 / elemBytes(t), 4,
           q.getInput().getType().getShape(), false, inv, plan);
  } else if (auto q = dyn_cast<ActQuantizeOp>(op)) {
    planMX(op, q.getScheme(), q.getInput().getType().getElementType(),
           q.getActivation().getBackward() ? "SrcActBwd" : "SrcActFwd", 4, 4,
           q.getInput().getType().getShape(), q.getDbias(), inv, plan);
  } else if (auto q = dyn_cast<GatedActQuantizeOp>(op)) {
    auto in = cast<RankedTensorType>(q.getInputs()[0].getType());
    SmallVector<int64_t> half(in.getShape());
    if (q.getInputs().size() == 1 && !ShapedType::isDynamic(half.back()))
      half.back() /= 2;
    bool bwd = q.getActivation().getBackward();
    planMX(op, q.getScheme(), in.getElementType(),
           bwd ? "SrcGatedBwd" : "SrcGatedFwd", bwd ? 2 : 4, bwd ? 2 : 4, half,
           false, inv, plan);
  } else {
    auto p = cast<PairedProjectionOp>(op);
    auto lhs = p.getLhs().getType();
    int64_t n = lhs.getRank() == 2 ? lhs.getDimSize(0) : 1;
    std::string t = typeTag(lhs.getElementType(), true);
    const char *prefix =
        "void fusion_rt::paired::(anonymous namespace)::";
    if (!ShapedType::isDynamic(n) && n <= 16) {
      int mt = 1;
      while (mt < n)
        mt *= 2;
      for (int rpw : {2, 1})
        plan.kernels.push_back(std::string(prefix) + "paired_gemv_kernel<" + t +
                               ", " + std::to_string(mt) + ", " +
                               std::to_string(rpw) +
                               ">(fusion_rt::paired::(anonymous "
                               "namespace)::Params)");
      plan.launch = "gemv path (N <= 16): one launch, split K over the SMs; "
                    "the weight-rows-per-warp variant (2 or 1) and the "
                    "cluster size are chosen at run time";
    } else {
      plan.kernels.push_back(
          "fusion_rt::paired::(anonymous namespace)::paired_epilogue_kernel("
          "fusion_rt::paired::(anonymous namespace)::Params)");
      plan.launch = "cuBLAS path: two GEMMs (cublasGemmEx) then "
                    "paired_epilogue_kernel, block 256";
    }
  }
  return plan;
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
    : public PassWrapper<KernelReportPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(KernelReportPass)

  KernelReportPass() = default;
  KernelReportPass(const KernelReportPass &other) : PassWrapper(other) {}

  StringRef getArgument() const override { return "fusion-kernel-report"; }
  StringRef getDescription() const override {
    return "Print, for every fusion op, its runtime entry point, the CUDA "
           "kernel and launch shape it becomes, and the kernel's registers, "
           "shared memory, spills and shared vs generic memory instructions";
  }

  Option<std::string> inventoryPath{
      *this, "inventory",
      llvm::cl::desc("Kernel inventory TSV (default: the one built with "
                     "fusion-opt)"),
      llvm::cl::init(FUSION_KERNEL_INVENTORY)};

  void runOnOperation() override {
    std::string arch, error;
    llvm::StringMap<KernelInfo> inv;
    if (!inventoryPath.empty())
      inv = readInventory(inventoryPath, arch, error);
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

void mlir::fusion::registerKernelReportPass() {
  PassRegistration<KernelReportPass>();
}
