//===- LowerToRuntime.cpp - fusion ops on memrefs to runtime calls ---------===//
//
// `fusion-lower-to-runtime`: every fusion op on memrefs (after one-shot
// bufferization) becomes one call to its runtime entry point with the C
// interface (`llvm.emit_c_interface`; lib/ExecutionEngine/
// FusionRuntimeWrappers.cpp) and a `cf.assert` on the returned status.
// Buffers are described to the runtime by a small table (memref<Nx12xi64>,
// one row per buffer: aligned pointer, offset, rank, dtype, sizes[4],
// strides[4]) so that one C signature per op covers every element type, rank
// and layout. Rows are the op's operands in order: inputs, then
// destinations. FP4 destinations typed i8 (two per byte) are passed as they
// are, so packed data crosses the boundary without a copy.
//
//===----------------------------------------------------------------------===//
#include "fusion/Conversion/FusionToRuntime/FusionToRuntime.h"
#include "fusion_rt.h"
#include "fusion_rt_mlir.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_LOWERTORUNTIME
#include "fusion/Conversion/FusionToRuntime/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

// The dialect's enums are passed to the runtime by value: each case must be
// the runtime's (the registry runtime/include/fusion_rt_kinds.def).
#define FUSION_RT_ACTIVATION(U, name, value, gated, mask)                      \
  static_assert(uint32_t(ActivationKind::name) == (value) &&                  \
                    FUSION_RT_ACT_##U == (value),                              \
                "fusion_rt_kinds.def: activation " #name);
#define FUSION_RT_EPILOGUE(U, name, value)                                     \
  static_assert(uint32_t(EpilogueKind::name) == (value) &&                    \
                    FUSION_RT_EPILOGUE_##U == (value),                         \
                "fusion_rt_kinds.def: epilogue " #name);
#define FUSION_RT_SCHEME_ENUM(abi, enumName, name, value)                      \
  static_assert(uint32_t(enumName::name) == (value) && (abi) == (value),       \
                "fusion_rt_kinds.def: " #enumName " " #name);
#include "fusion_rt_kinds.def"

static Value i32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}

static Value f32(OpBuilder &b, Location loc, const llvm::APFloat &v) {
  return arith::ConstantFloatOp::create(
      b, loc, b.getF32Type(),
      llvm::APFloat(static_cast<float>(v.convertToDouble())));
}

/// Scheme parameters in the order of fusion_rt_mlir_scheme_param.
static void appendScheme(OpBuilder &b, Location loc, QuantSchemeAttr s,
                         SmallVectorImpl<Value> &args) {
  int64_t v[FUSION_RT_MLIR_SCHEME_I32_PARAMS];
  v[FUSION_RT_MLIR_SCHEME_FORMAT] = int64_t(s.getFormat());
  v[FUSION_RT_MLIR_SCHEME_DIRECTION] = int64_t(s.getDirection());
  v[FUSION_RT_MLIR_SCHEME_SCALE_ROUNDING] = int64_t(s.getRounding());
  v[FUSION_RT_MLIR_SCHEME_NAN_POLICY] = int64_t(s.getNanPolicy());
  v[FUSION_RT_MLIR_SCHEME_COLWISE_LAYOUT] = int64_t(s.getColwiseLayout());
  v[FUSION_RT_MLIR_SCHEME_SCALE_LAYOUT] = int64_t(s.getScaleLayout());
  v[FUSION_RT_MLIR_SCHEME_NVFP4_2D] =
      s.getFormat() == QuantFormat::nvfp4 && s.getBlockRows() > 1 ? 1 : 0;
  v[FUSION_RT_MLIR_SCHEME_ELEM_ROUNDING] = int64_t(s.getElemRounding());
  v[FUSION_RT_MLIR_SCHEME_TENSOR_SCALING] = int64_t(s.getTensorScaling());
  v[FUSION_RT_MLIR_SCHEME_ZERO_SCALE] = int64_t(s.getZeroScale());
  v[FUSION_RT_MLIR_SCHEME_POW2_SCALE] = s.getPow2Scale() ? 1 : 0;
  v[FUSION_RT_MLIR_SCHEME_NVFP4_RECIPE] = int64_t(s.getRecipe());
  v[FUSION_RT_MLIR_SCHEME_BLOCK_COLS] = s.isBlockFP8() ? s.getBlockCols() : 0;
  v[FUSION_RT_MLIR_SCHEME_BLOCK_ROWS] = s.isBlockFP8() ? s.getBlockRows() : 0;
  for (int64_t x : v)
    args.push_back(i32(b, loc, x));
  args.push_back(f32(b, loc, s.getEpsilon()));
}

static_assert(FUSION_RT_MLIR_ACT_I32_PARAMS == 3 &&
                  FUSION_RT_MLIR_ACT_F32_PARAMS == 3,
              "appendActivation writes 3 i32 and 3 f32 (fusion_rt_mlir.h)");
static void appendActivation(OpBuilder &b, Location loc, ActivationAttr a,
                             Type intermediate, SmallVectorImpl<Value> &args) {
  args.push_back(i32(b, loc, int64_t(a.getKind())));
  args.push_back(i32(b, loc,
                    !a.getBackward()    ? FUSION_RT_FORWARD
                    : a.getMaskSelect() ? FUSION_RT_BACKWARD_MASK_SELECT
                                        : FUSION_RT_BACKWARD));
  args.push_back(i32(b, loc, *getRuntimeDtype(intermediate)));
  args.push_back(f32(b, loc, a.getLimit()));
  args.push_back(f32(b, loc, a.getOffset()));
  args.push_back(f32(b, loc, a.getAlpha()));
}

/// Builds the buffer table memref<Nx12xi64> (cast to memref<?x12xi64>).
/// A row of `absent` gets a null pointer: an optional output the runtime
/// then does not compute.
static Value buildTable(OpBuilder &b, Location loc, ArrayRef<Value> buffers,
                        const llvm::SmallDenseSet<unsigned, 2> &absent) {
  constexpr int64_t kWidth = FUSION_RT_MLIR_TABLE_WIDTH;
  auto tableTy = MemRefType::get(
      {static_cast<int64_t>(buffers.size()), kWidth}, b.getI64Type());
  Value table = memref::AllocaOp::create(b, loc, tableTy);
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  auto toI64 = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v).getResult();
  };
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
  for (auto [row, buf] : llvm::enumerate(buffers)) {
    auto ty = cast<MemRefType>(buf.getType());
    int64_t rank = ty.getRank();
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buf);
    Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buf);
    SmallVector<Value, kWidth> cols(kWidth, zero);
    if (!absent.contains(row)) {
      cols[FUSION_RT_MLIR_COL_POINTER] = toI64(ptr);
      cols[FUSION_RT_MLIR_COL_OFFSET] = toI64(meta.getOffset());
    }
    cols[FUSION_RT_MLIR_COL_RANK] = arith::ConstantIntOp::create(b, loc, rank, 64);
    cols[FUSION_RT_MLIR_COL_DTYPE] = arith::ConstantIntOp::create(
        b, loc, *getRuntimeDtype(ty.getElementType()), 64);
    for (int64_t d = 0; d < rank; ++d) {
      cols[FUSION_RT_MLIR_COL_SIZES + d] = toI64(meta.getSizes()[d]);
      cols[FUSION_RT_MLIR_COL_STRIDES + d] = toI64(meta.getStrides()[d]);
    }
    for (int64_t c = 0; c < kWidth; ++c)
      memref::StoreOp::create(b, loc, cols[c], table,
                              ValueRange{idx(row), idx(c)});
  }
  auto dynTy = MemRefType::get({ShapedType::kDynamic, kWidth}, b.getI64Type());
  return memref::CastOp::create(b, loc, dynTy, table);
}

/// Finds or declares `name(argTypes) -> i32` with the C interface.
static func::FuncOp getOrDeclareEntryPoint(RewriterBase &rewriter,
                                           Operation *op, StringRef name,
                                           TypeRange argTypes) {
  auto module = op->getParentOfType<ModuleOp>();
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(module.getBody());
  auto type = rewriter.getFunctionType(argTypes, rewriter.getI32Type());
  auto f = func::FuncOp::create(rewriter, op->getLoc(), name, type);
  f.setPrivate();
  f->setAttr("llvm.emit_c_interface", rewriter.getUnitAttr());
  return f;
}

/// Scalar arguments of the runtime call, in the wrapper's order.
static SmallVector<Value> scalarArgs(OpBuilder &b, Location loc,
                                     Operation *op) {
  SmallVector<Value> args;
  if (auto q = dyn_cast<QuantizeOp>(op)) {
    appendScheme(b, loc, q.getScheme(), args);
  } else if (auto q = dyn_cast<ActQuantizeOp>(op)) {
    appendActivation(b, loc, q.getActivation(), q.getIntermediate(), args);
    args.push_back(i32(b, loc, q.getDbias() ? 1 : 0));
    appendScheme(b, loc, q.getScheme(), args);
  } else if (auto q = dyn_cast<GatedActQuantizeOp>(op)) {
    appendActivation(b, loc, q.getActivation(), q.getIntermediate(), args);
    args.push_back(i32(b, loc, q.getInputs().size()));
    appendScheme(b, loc, q.getScheme(), args);
  } else {
    auto p = cast<PairedProjectionOp>(op);
    static_assert(FUSION_RT_MLIR_PAIRED_I32_PARAMS == 10,
                  "the paired scalars below (fusion_rt_mlir.h)");
    args.push_back(i32(b, loc, int64_t(p.getEpilogue0())));
    args.push_back(i32(b, loc, int64_t(p.getEpilogue1())));
    args.push_back(
        i32(b, loc, p.getGated() ? int64_t(p.getGated()->getKind()) : -1));
    args.push_back(i32(b, loc, p.getKn() ? 1 : 0));
    // fusion_rt_accumulator_round of each projection.
    for (auto [r, withBias] : {std::pair(p.getRound0(), p.getRoundWithBias0()),
                               std::pair(p.getRound1(), p.getRoundWithBias1())})
      args.push_back(i32(b, loc, getAccumulatorRound(r, withBias)));
    for (Value v : {p.getBias0(), p.getScale0(), p.getBias1(), p.getScale1()})
      args.push_back(i32(b, loc, v ? 1 : 0));
    // The quantizing form: the intermediate type, then the scheme.
    if (std::optional<QuantSchemeAttr> quant = p.getQuant()) {
      args.push_back(i32(b, loc, *getRuntimeDtype(*p.getIntermediate())));
      appendScheme(b, loc, *quant, args);
    }
  }
  return args;
}

static StringRef entryPointOf(Operation *op) {
  return TypeSwitch<Operation *, StringRef>(op)
      .Case<QuantizeOp>([](auto) { return FUSION_RT_MLIR_QUANTIZE; })
      .Case<ActQuantizeOp>([](auto) { return FUSION_RT_MLIR_ACT_QUANTIZE; })
      .Case<GatedActQuantizeOp>(
          [](auto) { return FUSION_RT_MLIR_GATED_ACT_QUANTIZE; })
      .Case<PairedProjectionOp>([](PairedProjectionOp p) {
        return p.getQuant() ? FUSION_RT_MLIR_PAIRED_PROJECTION_QUANTIZE
                            : FUSION_RT_MLIR_PAIRED_PROJECTION;
      })
      .Default([](auto) { return StringRef(); });
}


/// Lowers one fusion op on memrefs to its runtime call.
static LogicalResult lowerToRuntimeCall(Operation *op, RewriterBase &rewriter) {
  auto dps = cast<DestinationStyleOpInterface>(op);
  if (!dps.hasPureBufferSemantics())
    return op->emitOpError()
           << "works on tensors; bufferize it (one-shot-bufferize) before "
              "fusion-lower-to-runtime";
  if (!op->getParentOfType<ModuleOp>())
    return op->emitOpError() << "must be inside a module to be lowered to a "
                                "runtime call";
  Location loc = op->getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  SmallVector<Value> operands = llvm::to_vector(op->getOperands());
  // Destinations staged through a contiguous copy: (copy, destination).
  SmallVector<std::pair<Value, Value>> copyBack;
  for (OpOperand &operand : op->getOpOperands()) {
    Value &v = operands[operand.getOperandNumber()];
    auto ty = cast<MemRefType>(v.getType());
    if (failed(getRuntimeDtype(ty.getElementType())))
      return op->emitOpError() << "cannot pass an operand of type " << ty
                               << " to the runtime";
    if (ty.getRank() <= 4)
      continue;
    // The runtime collapses the leading dimensions of a view onto rows
    // anyway; past its rank limit the lowering does it: as a view where the
    // strides allow it statically, else through a contiguous copy (read
    // before the call for an input, written back after it for a result).
    SmallVector<ReassociationIndices> groups(2);
    for (int64_t d = 0; d + 1 < ty.getRank(); ++d)
      groups[0].push_back(d);
    groups[1].push_back(ty.getRank() - 1);
    if (!memref::CollapseShapeOp::isGuaranteedCollapsible(ty, groups)) {
      SmallVector<Value> dynSizes;
      for (int64_t d = 0; d < ty.getRank(); ++d)
        if (ty.isDynamicDim(d))
          dynSizes.push_back(memref::DimOp::create(rewriter, loc, v, d));
      auto contiguous =
          MemRefType::get(ty.getShape(), ty.getElementType(),
                          MemRefLayoutAttrInterface(), ty.getMemorySpace());
      Value copy = memref::AllocOp::create(rewriter, loc, contiguous, dynSizes);
      if (dps.isDpsInit(&operand))
        copyBack.push_back({copy, v});
      else
        memref::CopyOp::create(rewriter, loc, v, copy);
      v = copy;
    }
    v = memref::CollapseShapeOp::create(rewriter, loc, v, groups);
  }
  SmallVector<Value> args = scalarArgs(rewriter, loc, op);
  args.push_back(
      buildTable(rewriter, loc, operands, getUnreadRuntimeOutputs(op)));
  StringRef name = entryPointOf(op);
  func::FuncOp callee =
      getOrDeclareEntryPoint(rewriter, op, name, ValueRange(args).getTypes());
  auto call = func::CallOp::create(rewriter, loc, callee, args);
  Value ok = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                   call.getResult(0), i32(rewriter, loc, 0));
  cf::AssertOp::create(rewriter, loc, ok,
                       (Twine("fusion runtime call ") + name +
                        " failed (its message is on stderr)")
                           .str());
  for (auto [copy, dest] : copyBack)
    memref::CopyOp::create(rewriter, loc, copy, dest);
  // The staging buffers are plain allocations: the buffer deallocation
  // pipeline (which fusion-pipeline runs next) frees them.
  rewriter.eraseOp(op);
  return success();
}

struct LowerToRuntimePass
    : public fusion::impl::LowerToRuntimeBase<LowerToRuntimePass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<QuantizeOp, ActQuantizeOp, GatedActQuantizeOp,
              PairedProjectionOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    bool failedAny = false;
    for (Operation *op : ops)
      failedAny |= failed(lowerToRuntimeCall(op, rewriter));
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace

/// (The verifier allows i8 only for packed FP4.)
FailureOr<int64_t> mlir::fusion::getRuntimeDtype(Type t) {
  if (t.isBF16())
    return 0;
  if (t.isF16())
    return 1;
  if (t.isF32())
    return 2;
  if (isa<Float8E4M3FNType>(t))
    return 3;
  if (isa<Float8E5M2Type>(t))
    return 4;
  if (isa<Float4E2M1FNType>(t))
    return 5;
  if (isa<Float8E8M0FNUType>(t))
    return 6;
  if (t.isInteger(64))
    return FUSION_RT_MLIR_DTYPE_I64;
  if (t.isInteger(8))
    return FUSION_RT_MLIR_DTYPE_PACKED_FP4;
  return failure();
}

int32_t mlir::fusion::getAccumulatorRound(std::optional<Type> round,
                                          bool withBias) {
  if (!round)
    return FUSION_RT_ROUND_NONE;
  int32_t mode = round->isBF16() ? FUSION_RT_ROUND_BF16 : FUSION_RT_ROUND_F16;
  return withBias ? mode + (FUSION_RT_ROUND_BF16_AFTER_BIAS - FUSION_RT_ROUND_BF16)
                  : mode;
}

StringRef mlir::fusion::getRuntimeEntryPoint(Operation *op) {
  return entryPointOf(op);
}

std::unique_ptr<Pass> mlir::fusion::createLowerToRuntimePass() {
  return createLowerToRuntime();
}

/// The operand numbers of the optional outputs that nothing reads, which
/// the call passes as absent: the amax of FP8 per-tensor delayed scaling (a
/// static scale, or a program that keeps no amax history), a fresh
/// allocation that only the op uses. The runtime then skips the amax (on
/// the general path a pass over the input of its own).
llvm::SmallDenseSet<unsigned, 2>
mlir::fusion::getUnreadRuntimeOutputs(Operation *op) {
  llvm::SmallDenseSet<unsigned, 2> rows;
  QuantSchemeAttr scheme;
  bool dbias = false;
  if (auto q = dyn_cast<QuantizeOp>(op))
    scheme = q.getScheme();
  else if (auto q = dyn_cast<ActQuantizeOp>(op))
    scheme = q.getScheme(), dbias = q.getDbias();
  else if (auto q = dyn_cast<GatedActQuantizeOp>(op))
    scheme = q.getScheme();
  else if (auto p = dyn_cast<PairedProjectionOp>(op))
    scheme = p.getQuant() ? *p.getQuant() : QuantSchemeAttr();
  if (!scheme || scheme.isBlockFP8() ||
      (scheme.getFormat() != QuantFormat::fp8_e4m3 &&
       scheme.getFormat() != QuantFormat::fp8_e5m2) ||
      scheme.getTensorScaling() != TensorScaling::delayed)
    return rows;
  auto dps = cast<DestinationStyleOpInterface>(op);
  for (auto [i, kind] : llvm::enumerate(getQuantResultKinds(scheme, dbias))) {
    if (kind != QuantResultKind::Amax || i >= dps.getNumDpsInits())
      continue;
    OpOperand *out = dps.getDpsInitOperand(i);
    Operation *def = out->get().getDefiningOp();
    if (dps.hasPureTensorSemantics()
            ? op->getResult(i).use_empty()
            : isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(def) &&
                  llvm::all_of(out->get().getUsers(),
                               [&](Operation *u) { return u == op; }))
      rows.insert(out->getOperandNumber());
  }
  return rows;
}
