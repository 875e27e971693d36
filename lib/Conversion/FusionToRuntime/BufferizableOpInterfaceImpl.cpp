//===- BufferizableOpInterfaceImpl.cpp - fusion ops in bufferization -------===//
//
// Every fusion op reads its tensor operands and returns fresh tensors: it
// bufferizes to one allocation per result and one call to its runtime entry
// point. Buffers are described to the runtime by a small table
// (memref<Nx12xi64>, one row per buffer: aligned pointer, offset, rank,
// dtype, sizes[4], strides[4]) so that one C signature per op covers every
// element type, rank and layout. Dynamic result sizes are computed with the
// same shape rules the verifier uses (QuantShapes.h).
//
//===----------------------------------------------------------------------===//
#include "fusion/Conversion/FusionToRuntime/FusionToRuntime.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/IR/QuantShapes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::bufferization;

namespace {

/// Dimension algebra on OpFoldResults: static dims fold to attributes.
struct ValueDims {
  using Dim = OpFoldResult;
  OpBuilder &b;
  Location loc;
  Dim apply(AffineExpr e, Dim d) {
    return affine::makeComposedFoldedAffineApply(b, loc, e, {d});
  }
  AffineExpr s0() { return b.getAffineSymbolExpr(0); }
  Dim constant(int64_t v) { return b.getIndexAttr(v); }
  Dim ceilDiv(Dim d, int64_t k) { return apply(s0().ceilDiv(k), d); }
  Dim roundUp(Dim d, int64_t k) { return apply(s0().ceilDiv(k) * k, d); }
  Dim mul(Dim d, int64_t k) { return k == 1 ? d : apply(s0() * k, d); }
  Dim divExact(Dim d, int64_t k) {
    return k == 1 ? d : apply(s0().floorDiv(k), d);
  }
};

/// fusion_rt_dtype of an element type (7 = i64 for the rng operand).
static FailureOr<int64_t> runtimeDtype(Type t) {
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
    return 7;
  return failure();
}

static SmallVector<OpFoldResult> mixedSizes(OpBuilder &b, Location loc,
                                            Value buffer) {
  return memref::getMixedSizes(b, loc, buffer);
}

/// The data shape a quantizing op quantizes, and its number of halves.
struct QuantData {
  QuantSchemeAttr scheme;
  SmallVector<OpFoldResult> shape;
  unsigned halves = 1;
  bool dbias = false;
};

/// Result shapes of `op` given its operand buffers.
static SmallVector<SmallVector<OpFoldResult, 4>, 6>
resultShapes(OpBuilder &b, Location loc, Operation *op,
             ArrayRef<Value> operandBuffers) {
  ValueDims alg{b, loc};
  auto quant = [&](const QuantData &q) {
    return computeQuantResultShapes(alg, q.scheme, ArrayRef(q.shape),
                                    q.halves, q.dbias);
  };
  if (auto q = dyn_cast<QuantizeOp>(op))
    return quant({q.getScheme(), mixedSizes(b, loc, operandBuffers[0]), 1,
                  false});
  if (auto q = dyn_cast<ActQuantizeOp>(op))
    return quant({q.getScheme(), mixedSizes(b, loc, operandBuffers[0]), 1,
                  q.getDbias()});
  if (auto q = dyn_cast<GatedActQuantizeOp>(op)) {
    SmallVector<OpFoldResult> s = mixedSizes(b, loc, operandBuffers[0]);
    if (q.getInputs().size() == 1)
      s.back() = alg.divExact(s.back(), 2);
    if (!q.getActivation().getBackward())
      return quant({q.getScheme(), s, 1, false});
    s.back() = alg.mul(s.back(), 2);
    return quant({q.getScheme(), s, 2, false});
  }
  auto p = cast<PairedProjectionOp>(op);
  SmallVector<OpFoldResult> lhs = mixedSizes(b, loc, operandBuffers[0]);
  SmallVector<SmallVector<OpFoldResult, 4>, 6> shapes;
  unsigned hDim = p.getKn() ? 1 : 0;
  unsigned numResults = p.getGated() ? 1 : 2;
  for (unsigned i = 0; i < numResults; ++i) {
    SmallVector<OpFoldResult, 4> s;
    if (lhs.size() == 2)
      s.push_back(lhs[0]);
    s.push_back(memref::getMixedSize(b, loc, operandBuffers[1 + i], hDim));
    shapes.push_back(s);
  }
  return shapes;
}

static Value i32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}

static Value f32(OpBuilder &b, Location loc, const llvm::APFloat &v) {
  return arith::ConstantFloatOp::create(
      b, loc, b.getF32Type(),
      llvm::APFloat(static_cast<float>(v.convertToDouble())));
}

/// Scheme parameters in the runtime's order.
static void appendScheme(OpBuilder &b, Location loc, QuantSchemeAttr s,
                         SmallVectorImpl<Value> &args) {
  for (int64_t v : {int64_t(s.getFormat()), int64_t(s.getDirection()),
                    int64_t(s.getRounding()), int64_t(s.getNanPolicy()),
                    int64_t(s.getColwiseLayout()), int64_t(s.getScaleLayout()),
                    int64_t(s.getBlockRows() > 1 ? 1 : 0),
                    int64_t(s.getElemRounding()),
                    int64_t(s.getTensorScaling())})
    args.push_back(i32(b, loc, v));
}

static void appendActivation(OpBuilder &b, Location loc, ActivationAttr a,
                             Type intermediate, SmallVectorImpl<Value> &args) {
  args.push_back(i32(b, loc, int64_t(a.getKind())));
  args.push_back(i32(b, loc, a.getBackward() ? 1 : 0));
  args.push_back(i32(b, loc, *runtimeDtype(intermediate)));
  args.push_back(f32(b, loc, a.getLimit()));
  args.push_back(f32(b, loc, a.getOffset()));
  args.push_back(f32(b, loc, a.getAlpha()));
}

/// Builds the buffer table memref<Nx12xi64> (cast to memref<?x12xi64>).
static Value buildTable(OpBuilder &b, Location loc, ArrayRef<Value> buffers) {
  constexpr int64_t kWidth = 12;
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
    cols[0] = toI64(ptr);
    cols[1] = toI64(meta.getOffset());
    cols[2] = arith::ConstantIntOp::create(b, loc, rank, 64);
    cols[3] = arith::ConstantIntOp::create(
        b, loc, *runtimeDtype(ty.getElementType()), 64);
    for (int64_t d = 0; d < rank; ++d) {
      cols[4 + d] = toI64(meta.getSizes()[d]);
      cols[8 + d] = toI64(meta.getStrides()[d]);
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
    args.push_back(i32(b, loc, int64_t(p.getEpilogue0())));
    args.push_back(i32(b, loc, int64_t(p.getEpilogue1())));
    args.push_back(
        i32(b, loc, p.getGated() ? int64_t(p.getGated()->getKind()) : -1));
    args.push_back(i32(b, loc, p.getKn() ? 1 : 0));
    for (Value v : {p.getBias0(), p.getScale0(), p.getBias1(), p.getScale1()})
      args.push_back(i32(b, loc, v ? 1 : 0));
  }
  return args;
}

StringRef entryPointOf(Operation *op) {
  return TypeSwitch<Operation *, StringRef>(op)
      .Case<QuantizeOp>([](auto) { return "fusion_rt_mlir_quantize"; })
      .Case<ActQuantizeOp>([](auto) { return "fusion_rt_mlir_act_quantize"; })
      .Case<GatedActQuantizeOp>(
          [](auto) { return "fusion_rt_mlir_gated_act_quantize"; })
      .Case<PairedProjectionOp>(
          [](auto) { return "fusion_rt_mlir_paired_projection"; })
      .Default([](auto) { return StringRef(); });
}

static LogicalResult bufferizeToRuntimeCall(Operation *op,
                                            RewriterBase &rewriter,
                                            const BufferizationOptions &options,
                                            BufferizationState &state) {
  Location loc = op->getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  if (!op->getParentOfType<ModuleOp>())
    return op->emitOpError() << "must be inside a module to be lowered to a "
                                "runtime call";

  SmallVector<Value> buffers;
  for (Value v : op->getOperands()) {
    if (failed(runtimeDtype(cast<ShapedType>(v.getType()).getElementType())))
      return op->emitOpError()
             << "cannot pass an operand of type " << v.getType()
             << " to the runtime";
    FailureOr<Value> buf = getBuffer(rewriter, v, options, state);
    if (failed(buf))
      return failure();
    buffers.push_back(*buf);
  }
  auto shapes = resultShapes(rewriter, loc, op, buffers);
  SmallVector<Value> results;
  for (auto [res, shape] : llvm::zip_equal(op->getResults(), shapes)) {
    auto tensorTy = cast<RankedTensorType>(res.getType());
    if (tensorTy.getRank() > 4)
      return op->emitOpError() << "result of rank " << tensorTy.getRank()
                               << " exceeds the runtime's rank limit of 4";
    auto memrefTy = cast<MemRefType>(
        getMemRefTypeWithStaticIdentityLayout(tensorTy, Attribute()));
    SmallVector<Value> dynSizes;
    for (auto [d, ofr] : llvm::enumerate(shape))
      if (tensorTy.isDynamicDim(d))
        dynSizes.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, ofr));
    FailureOr<Value> alloc =
        options.createAlloc(rewriter, loc, memrefTy, dynSizes);
    if (failed(alloc))
      return failure();
    results.push_back(*alloc);
  }
  for (Value b : buffers)
    if (cast<MemRefType>(b.getType()).getRank() > 4)
      return op->emitOpError() << "operand of rank > 4 exceeds the runtime's "
                                  "rank limit of 4";

  SmallVector<Value> all(buffers);
  all.append(results);
  SmallVector<Value> args = scalarArgs(rewriter, loc, op);
  args.push_back(buildTable(rewriter, loc, all));
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
  replaceOpWithBufferizedValues(rewriter, op, results);
  return success();
}

/// The model shared by every fusion op.
template <typename OpTy>
struct FusionOpBufferization
    : public BufferizableOpInterface::ExternalModel<FusionOpBufferization<OpTy>,
                                                    OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }
  FailureOr<BufferLikeType>
  getBufferType(Operation *op, Value value, const BufferizationOptions &,
                const BufferizationState &, SmallVector<Value> &) const {
    auto tensorTy = cast<RankedTensorType>(value.getType());
    return cast<BufferLikeType>(
        getMemRefTypeWithStaticIdentityLayout(tensorTy, Attribute()));
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    return bufferizeToRuntimeCall(op, rewriter, options, state);
  }
};

} // namespace

StringRef mlir::fusion::getRuntimeEntryPoint(Operation *op) {
  return entryPointOf(op);
}

void mlir::fusion::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, FusionDialect *) {
    QuantizeOp::attachInterface<FusionOpBufferization<QuantizeOp>>(*ctx);
    ActQuantizeOp::attachInterface<FusionOpBufferization<ActQuantizeOp>>(*ctx);
    GatedActQuantizeOp::attachInterface<
        FusionOpBufferization<GatedActQuantizeOp>>(*ctx);
    PairedProjectionOp::attachInterface<
        FusionOpBufferization<PairedProjectionOp>>(*ctx);
    ctx->loadDialect<affine::AffineDialect, arith::ArithDialect,
                     cf::ControlFlowDialect, func::FuncDialect,
                     memref::MemRefDialect>();
  });
}
