//===- LowerTMTensor.cpp - tm_tensor.scan / scatter as loops --------------===//
//
// Implements `fusion-lower-tm-tensor` (see Passes.td): torch-mlir's
// tm_tensor.scan and tm_tensor.scatter, which its linalg-on-tensors backend
// leaves in programs that index with masks or take cumulative sums, become
// scf.for loops over tensor.extract / tensor.insert. The ops are matched by
// name and read through the generic Operation API (operands, attributes,
// the body region), so that the pass works on fusion-opt's tm_tensor subset
// and on torch-mlir's own dialect alike.
//
//===----------------------------------------------------------------------===//
#include "fusion/Transforms/Declines.h"
#include "fusion/Transforms/Passes.h"
#include "fusion/Transforms/RemarkLock.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Remarks.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_LOWERTMTENSOR
#include "fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;

namespace {

constexpr StringLiteral kScan = "tm_tensor.scan";
constexpr StringLiteral kScatter = "tm_tensor.scatter";

/// The body's value for arguments `args`: its ops cloned at `b`.
Value applyBody(OpBuilder &b, Region &region, ValueRange args) {
  Block &body = region.front();
  IRMapping map;
  for (auto [arg, v] : llvm::zip(body.getArguments(), args))
    map.map(arg, v);
  for (Operation &op : body.without_terminator())
    b.clone(op, map);
  return map.lookupOrDefault(body.getTerminator()->getOperand(0));
}

/// A two-argument body yielding one value of the element type `elem`.
bool scalarBody(Operation *op, Type elem) {
  if (op->getNumRegions() != 1 || op->getRegion(0).empty())
    return false;
  Block &body = op->getRegion(0).front();
  return body.getNumArguments() == 2 && body.getArgument(0).getType() == elem &&
         body.getArgument(1).getType() == elem &&
         body.getTerminator()->getNumOperands() == 1 &&
         body.getTerminator()->getOperand(0).getType() == elem;
}

Value cstIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Loop bounds over every dimension of `v`.
void bounds(OpBuilder &b, Location loc, Value v, SmallVectorImpl<Value> &lbs,
            SmallVectorImpl<Value> &ubs, SmallVectorImpl<Value> &steps) {
  auto t = cast<RankedTensorType>(v.getType());
  for (int64_t d = 0; d < t.getRank(); ++d) {
    lbs.push_back(cstIndex(b, loc, 0));
    ubs.push_back(tensor::DimOp::create(b, loc, v, d));
    steps.push_back(cstIndex(b, loc, 1));
  }
}

/// Replaces `op` by loops over every index of `shapeOf` (row-major order)
/// carrying `iters`, whose body `body` builds; the op is erased.
void replaceByLoopNest(Operation *op, Value shapeOf, ValueRange iters,
                       function_ref<scf::ValueVector(OpBuilder &, Location,
                                                     ValueRange, ValueRange)>
                           body) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  SmallVector<Value> lbs, ubs, steps;
  bounds(b, loc, shapeOf, lbs, ubs, steps);
  scf::LoopNest nest = scf::buildLoopNest(b, loc, lbs, ubs, steps, iters, body);
  op->replaceAllUsesWith(nest.results);
  op->erase();
}

/// ins(%in) outs(%out, %acc) -> (out, acc). Loops over every index in
/// row-major order carry (out, acc); at index i of the dimension:
/// inclusive: out[0] = in[0], out[i] = body(out[i-1], in[i]); exclusive:
/// out[0] = acc, out[i] = body(out[i-1], in[i-1]); acc = each body value.
LogicalResult lowerScan(Operation *op, std::string &why) {
  auto dimAttr = op->getAttrOfType<IntegerAttr>("dimension");
  auto inclAttr = op->getAttrOfType<BoolAttr>("inclusive");
  if (op->getNumOperands() != 3 || !dimAttr || !inclAttr) {
    why = "expected ins(input) outs(output, accumulator) with dimension and "
          "inclusive";
    return failure();
  }
  Value in = op->getOperand(0), out0 = op->getOperand(1),
        acc0 = op->getOperand(2);
  auto inType = dyn_cast<RankedTensorType>(in.getType());
  if (!inType || !isa<RankedTensorType>(out0.getType()) ||
      !isa<RankedTensorType>(acc0.getType()) || op->getNumResults() != 2) {
    why = "operands that are not ranked tensors (a bufferized scan)";
    return failure();
  }
  int64_t dim = dimAttr.getInt();
  if (dim < 0 || dim >= inType.getRank() ||
      !scalarBody(op, inType.getElementType())) {
    why = "a dimension outside the input or a body other than two scalars "
          "to one";
    return failure();
  }
  bool inclusive = inclAttr.getValue();
  Region &region = op->getRegion(0);
  replaceByLoopNest(
      op, in, ValueRange{out0, acc0},
      [&](OpBuilder &nb, Location l, ValueRange ivs,
          ValueRange iters) -> scf::ValueVector {
        Value out = iters[0], acc = iters[1];
        SmallVector<Value> accIdx;
        for (int64_t d = 0; d < static_cast<int64_t>(ivs.size()); ++d)
          if (d != dim)
            accIdx.push_back(ivs[d]);
        Value first = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                            ivs[dim], cstIndex(nb, l, 0));
        auto ifOp = scf::IfOp::create(
            nb, l, first,
            [&](OpBuilder &tb, Location tl) {
              Value v = inclusive
                            ? tensor::ExtractOp::create(tb, tl, in, ivs)
                            : tensor::ExtractOp::create(tb, tl, acc, accIdx);
              Value o = tensor::InsertOp::create(tb, tl, v, out, ivs);
              scf::YieldOp::create(tb, tl, ValueRange{o, acc});
            },
            [&](OpBuilder &eb, Location el) {
              SmallVector<Value> prev(ivs);
              prev[dim] =
                  arith::SubIOp::create(eb, el, ivs[dim], cstIndex(eb, el, 1));
              Value p = tensor::ExtractOp::create(eb, el, out, prev);
              Value x = tensor::ExtractOp::create(
                  eb, el, in, inclusive ? ValueRange(ivs) : ValueRange(prev));
              Value v = applyBody(eb, region, {p, x});
              Value o = tensor::InsertOp::create(eb, el, v, out, ivs);
              Value a = tensor::InsertOp::create(eb, el, v, acc, accIdx);
              scf::YieldOp::create(eb, el, ValueRange{o, a});
            });
        return {ifOp.getResult(0), ifOp.getResult(1)};
      });
  return success();
}

/// ins(%updates, %indices) outs(%original) -> original. Loops over every
/// update position p carry the tensor; the destination index: the update's
/// trailing indices aligned to the original's last dimensions, then for
/// each i, component dimension_map[i] = indices[p0, i] (added to a trailing
/// index on the same dimension). The element there becomes body(update,
/// element); an index outside the original skips the update.
LogicalResult lowerScatter(Operation *op, std::string &why) {
  auto dimMapAttr = op->getAttrOfType<DenseI64ArrayAttr>("dimension_map");
  if (op->getNumOperands() != 3 || !dimMapAttr) {
    why = "expected ins(updates, indices) outs(original) with a dimension map";
    return failure();
  }
  Value updates = op->getOperand(0), indices = op->getOperand(1),
        original = op->getOperand(2);
  auto updType = dyn_cast<RankedTensorType>(updates.getType());
  auto idxType = dyn_cast<RankedTensorType>(indices.getType());
  auto origType = dyn_cast<RankedTensorType>(original.getType());
  if (!updType || !idxType || !origType || op->getNumResults() != 1) {
    why = "operands that are not ranked tensors (a bufferized scatter)";
    return failure();
  }
  ArrayRef<int64_t> dimMap = dimMapAttr.asArrayRef();
  int64_t rank = origType.getRank(), urank = updType.getRank();
  if (idxType.getRank() != 2 || !isa<IntegerType>(idxType.getElementType()) ||
      idxType.isDynamicDim(1) ||
      idxType.getDimSize(1) != static_cast<int64_t>(dimMap.size()) ||
      urank < 1 || urank - 1 > rank ||
      llvm::any_of(dimMap, [&](int64_t d) { return d < 0 || d >= rank; }) ||
      !scalarBody(op, origType.getElementType()) ||
      updType.getElementType() != origType.getElementType()) {
    why = "indices other than [N, D] integers matching the dimension map, or "
          "updates and a body that do not fit the original";
    return failure();
  }
  Region &region = op->getRegion(0);
  replaceByLoopNest(
      op, updates, ValueRange{original},
      [&](OpBuilder &nb, Location l, ValueRange ivs,
          ValueRange iters) -> scf::ValueVector {
        Value dest = iters[0];
        SmallVector<Value> starts(rank);
        int64_t offset = rank - (urank - 1);
        for (int64_t k = 1; k < urank; ++k)
          starts[k - 1 + offset] = ivs[k];
        for (auto [i, d] : llvm::enumerate(dimMap)) {
          Value raw = tensor::ExtractOp::create(
              nb, l, indices,
              ValueRange{ivs[0], cstIndex(nb, l, static_cast<int64_t>(i))});
          Value idx = arith::IndexCastOp::create(nb, l, nb.getIndexType(), raw);
          starts[d] =
              starts[d]
                  ? arith::AddIOp::create(nb, l, idx, starts[d]).getResult()
                  : idx;
        }
        Value inBounds;
        for (int64_t d = 0; d < rank; ++d) {
          if (!starts[d])
            starts[d] = cstIndex(nb, l, 0);
          Value size = tensor::DimOp::create(nb, l, dest, d);
          Value lo = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge,
                                           starts[d], cstIndex(nb, l, 0));
          Value hi = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                           starts[d], size);
          Value ok = arith::AndIOp::create(nb, l, lo, hi);
          inBounds =
              inBounds ? arith::AndIOp::create(nb, l, inBounds, ok).getResult()
                       : ok;
        }
        if (!inBounds) // a 0-d original: always in bounds
          inBounds = arith::ConstantIntOp::create(nb, l, 1, 1);
        auto ifOp = scf::IfOp::create(
            nb, l, inBounds,
            [&](OpBuilder &tb, Location tl) {
              Value u = tensor::ExtractOp::create(tb, tl, updates, ivs);
              Value e = tensor::ExtractOp::create(tb, tl, dest, starts);
              Value v = applyBody(tb, region, {u, e});
              Value o = tensor::InsertOp::create(tb, tl, v, dest, starts);
              scf::YieldOp::create(tb, tl, o);
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(eb, el, dest);
            });
        return {ifOp.getResult(0)};
      });
  return success();
}

struct LowerTMTensorPass
    : public fusion::impl::LowerTMTensorBase<LowerTMTensorPass> {
  using LowerTMTensorBase::LowerTMTensorBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) {
      StringRef name = op->getName().getStringRef();
      if (name == kScan || name == kScatter)
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      Location loc = op->getLoc();
      std::string name = op->getName().getStringRef().str();
      std::string why;
      bool done =
          succeeded(name == kScan ? lowerScan(op, why) : lowerScatter(op, why));
      auto opts = remark::RemarkOpts::name("LowerTMTensor")
                      .category("fusion")
                      .function(func.getSymName());
      std::lock_guard<std::mutex> lock(fusion::getRemarkMutex());
      if (done)
        remark::passed(loc, opts)
            << remark::add("wrote {0} out as loops on tensors", name);
      else
        remark::missed(loc, opts)
            << remark::reason("{0}",
                              fusion::declineTag(
                                  fusion::DeclineRule::TMTensorUnsupportedOp)
                                  .str())
            << remark::add("{0} is not lowered: {1}", name, why);
    }
  }
};

} // namespace
