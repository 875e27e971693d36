//===- ExpandTosaMX.cpp - TOSA 1.1's MX casts in linalg ----------------===//
//
// Implements `fusion-expand-tosa-mx` (see Passes.td): rewrites
// `tosa.cast_to_block_scaled` and `tosa.cast_from_block_scaled`, which LLVM
// 22 parses but does not lower, into linalg / arith / tensor ops that
// compute what the TOSA 1.1 specification's pseudocode defines
// (CAST_TO_BLOCK_SCALED, calc_block_scale, CAST_FROM_BLOCK_SCALED). The
// expansion is then an ordinary written-out quantizer: fusion-raise-quantize
// checks it against the runtime's quantizers like any other, and what stays
// unraised lowers with the rest of the program.
//
//===----------------------------------------------------------------------===//
#include "fusion/Transforms/Declines.h"
#include "fusion/Transforms/Passes.h"
#include "fusion/Transforms/RemarkLock.h"

#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/IR/Remarks.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_EXPANDTOSAMX
#include "fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;

namespace {

/// The element types the expansion handles: f32 / bf16 on the wide side,
/// TOSA's floating-point MX elements on the narrow side (8-bit, and the
/// sub-byte f4E2M1FN / f6E2M3FN / f6E3M2FN, whose tensors lower with one
/// element a byte); not mxint8.
bool isWide(Type t) { return t.isF32() || t.isBF16(); }
bool isMXElement(Type t) {
  return isa<Float8E4M3FNType, Float8E5M2Type, Float4E2M1FNType,
             Float6E2M3FNType, Float6E3M2FNType>(t);
}

Value cst(OpBuilder &b, Location loc, int32_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
}

/// The f32 value of an e8m0 scale byte (as i32): 2^(byte - 127), 2^-127 (an
/// f32 subnormal) for byte 0, NaN for 255.
Value scaleOfByte(OpBuilder &b, Location loc, Value byte32) {
  Value shifted = arith::ShLIOp::create(b, loc, byte32, cst(b, loc, 23));
  Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       byte32, cst(b, loc, 0));
  Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, byte32,
                                      cst(b, loc, 255));
  Value bits = arith::SelectOp::create(b, loc, isZero,
                                       cst(b, loc, 0x00400000), shifted);
  bits = arith::SelectOp::create(b, loc, isNaN, cst(b, loc, 0x7FC00000), bits);
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

/// `v` as [..., N / block, block] (the last dimension split), and back.
SmallVector<ReassociationIndices> splitLast(int64_t rank) {
  SmallVector<ReassociationIndices> re;
  for (int64_t d = 0; d + 1 < rank; ++d)
    re.push_back({d});
  re.push_back({rank - 1, rank});
  return re;
}

Value expandBlocks(OpBuilder &b, Location loc, Value v, int64_t block) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(t.getShape());
  shape.back() /= block;
  shape.push_back(block);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
  sizes.back() = b.getIndexAttr(shape[shape.size() - 2]);
  sizes.push_back(b.getIndexAttr(block));
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), v,
      splitLast(t.getRank()), sizes);
}

/// An empty tensor of `type` whose dynamic sizes are those of `like` (same
/// rank, same dynamic dimensions).
Value emptyLike(OpBuilder &b, Location loc, RankedTensorType type, Value like) {
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dyn.push_back(tensor::DimOp::create(b, loc, like, d));
  return tensor::EmptyOp::create(b, loc, type, dyn);
}

SmallVector<utils::IteratorType> parallel(int64_t rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

/// Maps of a [..., nb, block] iteration: the identity, and its [..., nb]
/// projection (one value per block).
std::pair<AffineMap, AffineMap> blockMaps(MLIRContext *ctx, int64_t rank) {
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank + 1, ctx);
  return {id, id.dropResult(rank)};
}

/// The per-element half of both casts: over `blocks` ([..., nb, block]),
/// `fn(f32 value, f32 scale of its block)` with the scale from the block's
/// e8m0 byte in `bytes` ([..., nb], i8); the result, of element type
/// `resultType`'s, collapsed back to `resultType` ([..., nb * block]).
Value mapBlockElements(
    OpBuilder &b, Location loc, Value blocks, Value bytes,
    RankedTensorType resultType,
    function_ref<Value(OpBuilder &, Location, Value, Value)> fn) {
  auto blocksType = cast<RankedTensorType>(blocks.getType());
  int64_t rank = resultType.getRank();
  auto [id, perBlock] = blockMaps(b.getContext(), rank);
  auto valuesType =
      RankedTensorType::get(blocksType.getShape(), resultType.getElementType());
  Value values =
      linalg::GenericOp::create(
          b, loc, valuesType, ValueRange{blocks, bytes},
          emptyLike(b, loc, valuesType, blocks),
          ArrayRef<AffineMap>{id, perBlock, id}, parallel(rank + 1),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value v = args[0];
            if (!v.getType().isF32())
              v = arith::ExtFOp::create(nb, l, nb.getF32Type(), v);
            Value s = scaleOfByte(
                nb, l, arith::ExtUIOp::create(nb, l, nb.getI32Type(), args[1]));
            Value r = fn(nb, l, v, s);
            linalg::YieldOp::create(nb, l, r);
          })
          .getResult(0);
  return tensor::CollapseShapeOp::create(b, loc, resultType, values,
                                         splitLast(rank));
}

/// Upstream's TOSA-to-linalg lowering (the passes of its
/// tosa-to-linalg-pipeline, without the validation, then tosa-to-arith and
/// tosa-to-tensor), for one function.
void addTosaToLinalg(OpPassManager &pm) {
  pm.addPass(tosa::createTosaOptionalDecompositionsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(tosa::createTosaInferShapesPass());
  pm.addPass(tosa::createTosaMakeBroadcastablePass());
  pm.addPass(tosa::createTosaToLinalgNamed());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(tosa::createTosaMakeBroadcastablePass());
  pm.addPass(tosa::createTosaToLinalg());
  pm.addPass(createTosaToArithPass());
  pm.addPass(createTosaToTensorPass());
}

struct ExpandTosaMXPass
    : public fusion::impl::ExpandTosaMXBase<ExpandTosaMXPass> {
  using ExpandTosaMXBase::ExpandTosaMXBase;

  /// The dialects of the TOSA lowering run from this pass, declared up
  /// front as a dynamic pipeline's must be.
  void getDependentDialects(DialectRegistry &registry) const override {
    ExpandTosaMXBase::getDependentDialects(registry);
    OpPassManager pm(func::FuncOp::getOperationName());
    addTosaToLinalg(pm);
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> ops;
    bool otherTosa = false;
    func.walk([&](Operation *op) {
      if (isa<tosa::CastToBlockScaledOp, tosa::CastFromBlockScaledOp>(op))
        ops.push_back(op);
      else if (isa_and_nonnull<tosa::TosaDialect>(op->getDialect()))
        otherTosa = true;
    });
    bool mxLeft = false;
    for (Operation *op : ops) {
      // The op is gone once expanded: its location and name first.
      Location loc = op->getLoc();
      std::string name = op->getName().getStringRef().str();
      std::string why;
      bool done = false;
      if (auto to = dyn_cast<tosa::CastToBlockScaledOp>(op))
        done = expandTo(to, why);
      else
        done = expandFrom(cast<tosa::CastFromBlockScaledOp>(op), why);
      report(loc, name, func.getSymName(), done, why);
      mxLeft |= !done;
    }
    // The function's other TOSA ops (an activation before the cast, ...)
    // through upstream's lowering, where it has any and no MX cast is left
    // (one not expanded keeps its remark and stops the pipeline later).
    if (!lowerTosa || !otherTosa || mxLeft)
      return;
    OpPassManager pm(func::FuncOp::getOperationName());
    addTosaToLinalg(pm);
    if (failed(runPipeline(pm, func)))
      signalPassFailure();
  }

  void report(Location loc, StringRef name, StringRef fn, bool done,
              StringRef why) {
    auto opts = remark::RemarkOpts::name("ExpandTosaMX")
                                  .category("fusion")
                                  .function(fn);
    std::lock_guard<std::mutex> lock(fusion::getRemarkMutex());
    if (done)
      remark::passed(loc, opts)
          << remark::add("expanded {0} as the TOSA 1.1 specification defines "
                         "it",
                         name);
    else
      remark::missed(loc, opts)
          << remark::reason(
                 "{0}",
                 fusion::declineTag(fusion::DeclineRule::TosaUnsupportedOp).str())
          << remark::add("{0} is not expanded: {1}", name, why);
  }

  /// Checks shared by both directions: the wide and narrow element types,
  /// a static last dimension that the block divides.
  static bool admissible(RankedTensorType wide, RankedTensorType narrow,
                         RankedTensorType scales, int64_t block,
                         std::string &why) {
    if (!isWide(wide.getElementType())) {
      why = llvm::formatv("the unscaled side is {0} (f32 and bf16 are "
                          "expanded)",
                          wide.getElementType())
                .str();
      return false;
    }
    if (!isMXElement(narrow.getElementType())) {
      why = llvm::formatv("the elements are {0} (f8E4M3FN, f8E5M2, "
                          "f6E2M3FN, f6E3M2FN and f4E2M1FN are expanded; "
                          "integer MX elements are not)",
                          narrow.getElementType())
                .str();
      return false;
    }
    if (wide.isDynamicDim(wide.getRank() - 1) ||
        wide.getShape().back() % block != 0) {
      why = "the last dimension is dynamic or not a multiple of the block";
      return false;
    }
    if (narrow.getShape() != wide.getShape() ||
        scales.getShape() != ArrayRef<int64_t>(scaleShape(wide.getShape(), block))) {
      why = "result shapes other than the input's (refine them first)";
      return false;
    }
    return true;
  }

  static SmallVector<int64_t> scaleShape(ArrayRef<int64_t> shape,
                                         int64_t block) {
    SmallVector<int64_t> s(shape);
    s.back() /= block;
    return s;
  }

  /// CAST_TO_BLOCK_SCALED: per block of the last dimension, max_abs (NaN
  /// propagating, from 0); scale = calc_block_scale(max_abs): 2^-127 for 0,
  /// NaN for NaN or Inf, else 2^e clipped to [2^-127, 2^127] with e =
  /// ceil(log2(max_abs / max)) for f8E4M3FN and floor(log2(max_abs / max))
  /// + 1 otherwise (max: the element type's largest normal); the data
  /// round_to_nearest_float(x / scale). With max = M * 2^P and max_abs =
  /// m * 2^E (M, m in [1, 2)), e is E - P, plus one where m > M (ceil) or
  /// m >= M (floor + 1): computed exactly on the bits of max_abs, never by
  /// log2 in floating point.
  bool expandTo(tosa::CastToBlockScaledOp op, std::string &why) {
    int64_t block = tosa::BlockSizeAttr::getBlockSizeValue(op.getBlockSize());
    auto in = cast<RankedTensorType>(op.getInputData().getType());
    auto dataType = dyn_cast<RankedTensorType>(op.getOutputData().getType());
    auto scaleType = dyn_cast<RankedTensorType>(op.getOutputScale().getType());
    if (!dataType || !scaleType ||
        !isa<Float8E8M0FNUType>(scaleType.getElementType())) {
      why = "unranked results or scales other than f8E8M0FNU";
      return false;
    }
    if (!admissible(in, dataType, scaleType, block, why))
      return false;
    Type elem = dataType.getElementType();
    const llvm::fltSemantics &sem = cast<FloatType>(elem).getFloatSemantics();
    llvm::APFloat largest = llvm::APFloat::getLargest(sem);
    bool lost = false;
    largest.convert(llvm::APFloat::IEEEsingle(),
                    llvm::APFloat::rmNearestTiesToEven, &lost);
    uint32_t maxBits =
        static_cast<uint32_t>(largest.bitcastToAPInt().getZExtValue());
    int32_t maxExp = int32_t(maxBits >> 23) - 127; // P
    int32_t maxMant = int32_t(maxBits & 0x7FFFFF); // M's fraction bits
    bool ceilRule = isa<Float8E4M3FNType>(elem);

    OpBuilder b(op);
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Value x = op.getInputData();
    Type wide = in.getElementType();
    int64_t rank = in.getRank();
    Value blocks = expandBlocks(b, loc, x, block);
    auto [id, perBlock] = blockMaps(ctx, rank);

    // max_abs per block, in the input's type (exact), NaN propagating.
    auto amaxType = RankedTensorType::get(scaleType.getShape(), wide);
    Value amaxInit = emptyLike(b, loc, amaxType, x);
    Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(wide, 0.0));
    amaxInit = linalg::FillOp::create(b, loc, zero, amaxInit).getResult(0);
    SmallVector<utils::IteratorType> iters = parallel(rank + 1);
    iters.back() = utils::IteratorType::reduction;
    Value amax =
        linalg::GenericOp::create(
            b, loc, amaxType, blocks, amaxInit,
            ArrayRef<AffineMap>{id, perBlock}, iters,
            [](OpBuilder &nb, Location l, ValueRange args) {
              Value a = math::AbsFOp::create(nb, l, args[0]);
              Value m = arith::MaximumFOp::create(nb, l, args[1], a);
              linalg::YieldOp::create(nb, l, m);
            })
            .getResult(0);

    // The scale byte: 255 for NaN / Inf, else clip(e, -127, 127) + 127.
    auto byteType = RankedTensorType::get(scaleType.getShape(), b.getI8Type());
    AffineMap blockId = AffineMap::getMultiDimIdentityMap(rank, ctx);
    Value bytes =
        linalg::GenericOp::create(
            b, loc, byteType, amax, emptyLike(b, loc, byteType, x),
            ArrayRef<AffineMap>{blockId, blockId}, parallel(rank),
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value a = args[0];
              if (!a.getType().isF32())
                a = arith::ExtFOp::create(nb, l, nb.getF32Type(), a);
              Value bits = arith::BitcastOp::create(nb, l, nb.getI32Type(), a);
              Value e = arith::ShRUIOp::create(nb, l, bits, cst(nb, l, 23));
              e = arith::AndIOp::create(nb, l, e, cst(nb, l, 255));
              Value mant =
                  arith::AndIOp::create(nb, l, bits, cst(nb, l, 0x7FFFFF));
              Value up = arith::CmpIOp::create(
                  nb, l,
                  ceilRule ? arith::CmpIPredicate::ugt
                           : arith::CmpIPredicate::uge,
                  mant, cst(nb, l, maxMant));
              // byte = (E - 127) - P + up + 127.
              Value byte = arith::SubIOp::create(nb, l, e, cst(nb, l, maxExp));
              byte = arith::AddIOp::create(
                  nb, l, byte, arith::ExtUIOp::create(nb, l, nb.getI32Type(), up));
              byte = arith::MaxSIOp::create(nb, l, byte, cst(nb, l, 0));
              byte = arith::MinSIOp::create(nb, l, byte, cst(nb, l, 254));
              Value special = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::eq, e, cst(nb, l, 255));
              byte = arith::SelectOp::create(nb, l, special, cst(nb, l, 255),
                                             byte);
              Value b8 = arith::TruncIOp::create(nb, l, nb.getI8Type(), byte);
              linalg::YieldOp::create(nb, l, b8);
            })
            .getResult(0);

    // The data: round_to_nearest_float(x / scale), in f32 (exact: the
    // scale is a power of two, and a quotient below f32's normals is below
    // every MX element's too). The quotient of a finite scale is below the
    // element's maximum (floor + 1 or ceil puts max_abs / scale at or under
    // it), so it never overflows; that of a NaN scale (a block holding NaN
    // or Inf) is NaN, which the specification writes as NaN: f6 and f4
    // elements have none (nor an Inf), and the expansion writes +0 there
    // (the block's scale byte, 255, makes every dequantized value NaN
    // whatever the code).
    bool hasNaN = llvm::APFloat::semanticsHasNaN(sem);
    Value data = mapBlockElements(
        b, loc, blocks, bytes, dataType,
        [&](OpBuilder &nb, Location l, Value v, Value s) -> Value {
          Value q = arith::DivFOp::create(nb, l, v, s);
          if (!hasNaN) {
            Value nan =
                arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNO, q, q);
            Value zero = arith::ConstantOp::create(
                nb, l, nb.getFloatAttr(nb.getF32Type(), 0.0));
            q = arith::SelectOp::create(nb, l, nan, zero, q);
          }
          return arith::TruncFOp::create(nb, l, elem, q);
        });
    Value scales = tensor::BitcastOp::create(b, loc, scaleType, bytes);
    op.getOutputData().replaceAllUsesWith(data);
    op.getOutputScale().replaceAllUsesWith(scales);
    op->erase();
    return true;
  }

  /// CAST_FROM_BLOCK_SCALED: round_to_nearest_float(f32(x) * f32(scale)).
  bool expandFrom(tosa::CastFromBlockScaledOp op, std::string &why) {
    int64_t block = tosa::BlockSizeAttr::getBlockSizeValue(op.getBlockSize());
    auto dataType = cast<RankedTensorType>(op.getInputData().getType());
    auto scaleType = dyn_cast<RankedTensorType>(op.getInputScale().getType());
    auto outType = dyn_cast<RankedTensorType>(op.getOutputData().getType());
    if (!scaleType || !outType ||
        !isa<Float8E8M0FNUType>(scaleType.getElementType())) {
      why = "an unranked result or scales other than f8E8M0FNU";
      return false;
    }
    if (!admissible(outType, dataType, scaleType, block, why))
      return false;
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value blocks = expandBlocks(b, loc, op.getInputData(), block);
    auto bytesType = RankedTensorType::get(scaleType.getShape(), b.getI8Type());
    Value bytes =
        tensor::BitcastOp::create(b, loc, bytesType, op.getInputScale());
    Type outElem = outType.getElementType();
    Value out = mapBlockElements(
        b, loc, blocks, bytes, outType,
        [&](OpBuilder &nb, Location l, Value v, Value s) -> Value {
          Value r = arith::MulFOp::create(nb, l, v, s);
          if (!outElem.isF32())
            r = arith::TruncFOp::create(nb, l, outElem, r);
          return r;
        });
    op.getOutputData().replaceAllUsesWith(out);
    op->erase();
    return true;
  }
};

} // namespace
