//===- EagerEvaluator.cpp - evaluate tensor IR whole, any shape -----------===//
//
// See EagerEvaluator.h. Each value is computed once, whole, from the values
// of its operands; dynamic sizes come from the scalars the IR computes them
// with. The bodies of structured ops and of tm_tensor ops run one op at a
// time through TensorEvaluator::applyScalarOp.
//
//===----------------------------------------------------------------------===//
#include "fusion/Analysis/EagerEvaluator.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fusion;

namespace {

constexpr StringLiteral kScan = "tm_tensor.scan";
constexpr StringLiteral kScatter = "tm_tensor.scatter";

/// Steps `index` to the next row-major index of `shape`; false past the end.
bool next(SmallVectorImpl<int64_t> &index, ArrayRef<int64_t> shape) {
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (++index[d] < shape[d])
      return true;
    index[d] = 0;
  }
  return false;
}

bool inBounds(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  for (auto [i, n] : llvm::zip_equal(index, shape))
    if (i < 0 || i >= n)
      return false;
  return true;
}

} // namespace

int64_t mlir::fusion::numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    if (s < 0 || llvm::MulOverflow(n, s, n))
      return -1;
  return n;
}

bool EagerEvaluator::fail(Operation *op, const Twine &why) {
  if (error.empty()) {
    error = why.str();
    if (op)
      error += " ('" + op->getName().getStringRef().str() + "')";
  }
  return false;
}

bool EagerEvaluator::undefinedRead(Operation *op, ArrayRef<int64_t> index,
                                   ArrayRef<int64_t> shape) {
  undefined = true;
  auto list = [](ArrayRef<int64_t> v) {
    std::string s;
    for (int64_t x : v)
      s += (s.empty() ? "" : ", ") + std::to_string(x);
    return "[" + s + "]";
  };
  return fail(op, "undefined: a read at " + list(index) +
                      " of a tensor of "
                      "shape " +
                      list(shape));
}

bool EagerEvaluator::spend(int64_t n) {
  if (n < 0)
    return fail(nullptr, "a size that is negative or overflows");
  budget -= n;
  return budget >= 0 || fail(nullptr, "evaluation budget exhausted");
}

const EagerValue *EagerEvaluator::evaluate(Value v) {
  if (auto it = values.find(v); it != values.end())
    return it->second.get();
  EagerValue out;
  if (!compute(v, out))
    return nullptr;
  auto &slot = values[v] = std::make_unique<EagerValue>(std::move(out));
  return slot.get();
}

bool EagerEvaluator::scalarOf(Value v, EvalScalar &out) {
  const EagerValue *e = evaluate(v);
  if (!e)
    return false;
  if (!e->scalar)
    return fail(v.getDefiningOp(), "a tensor where a scalar is expected");
  out = e->data[0];
  return true;
}

bool EagerEvaluator::indexOf(OpFoldResult ofr, int64_t &out) {
  if (auto attr = dyn_cast<Attribute>(ofr)) {
    out = cast<IntegerAttr>(attr).getInt();
    return true;
  }
  EvalScalar s;
  if (!scalarOf(cast<Value>(ofr), s))
    return false;
  if (s.poison)
    return fail(cast<Value>(ofr).getDefiningOp(), "a poison size or offset");
  out = static_cast<int64_t>(s.bits);
  return true;
}

bool EagerEvaluator::sizesOf(Operation *op, ArrayRef<OpFoldResult> list,
                             SmallVectorImpl<int64_t> &out) {
  for (OpFoldResult x : list) {
    if (!indexOf(x, out.emplace_back()))
      return false;
    if (out.back() < 0)
      return fail(op, "a negative size");
  }
  return true;
}

bool EagerEvaluator::sliceOf(OffsetSizeAndStrideOpInterface op,
                             SmallVectorImpl<int64_t> &offs,
                             SmallVectorImpl<int64_t> &sizes,
                             SmallVectorImpl<int64_t> &strides) {
  for (OpFoldResult x : op.getMixedOffsets())
    if (!indexOf(x, offs.emplace_back()))
      return false;
  for (OpFoldResult x : op.getMixedStrides())
    if (!indexOf(x, strides.emplace_back()))
      return false;
  return sizesOf(op, op.getMixedSizes(), sizes);
}

bool EagerEvaluator::affineApply(Operation *op, ArrayRef<EvalScalar> operands,
                                 EvalScalar &out) {
  SmallVector<int64_t> vals;
  bool poison = false;
  for (const EvalScalar &x : operands) {
    vals.push_back(static_cast<int64_t>(x.bits));
    poison |= x.poison;
  }
  // Symbols become dimensions after the map's own.
  AffineMap map = cast<affine::AffineApplyOp>(op).getAffineMap();
  SmallVector<AffineExpr> syms;
  for (unsigned s = 0; s < map.getNumSymbols(); ++s)
    syms.push_back(getAffineDimExpr(map.getNumDims() + s, op->getContext()));
  AffineExpr e = map.getResult(0).replaceSymbols(syms);
  bool badDivisor = false;
  e.walk([&](AffineExpr sub) { // Post-order: inner divisors first.
    auto bin = dyn_cast<AffineBinaryOpExpr>(sub);
    if (!badDivisor && bin && sub.getKind() != AffineExprKind::Add &&
        sub.getKind() != AffineExprKind::Mul &&
        TensorEvaluator::affineValue(bin.getRHS(), vals) <= 0)
      badDivisor = true;
  });
  if (badDivisor) // The affine lowering rejects these too.
    return fail(op, "a division by zero or a negative value");
  out = EvalScalar{static_cast<uint64_t>(TensorEvaluator::affineValue(e, vals)),
                   poison};
  return true;
}

bool EagerEvaluator::compute(Value v, EagerValue &out) {
  Operation *op = v.getDefiningOp();
  if (!op)
    return fail(nullptr, "a block argument that is not bound");
  unsigned result = cast<OpResult>(v).getResultNumber();
  auto type = dyn_cast<RankedTensorType>(v.getType());

  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    if (!type) {
      std::optional<uint64_t> bits =
          TensorEvaluator::constantElement(c.getValue(), 0);
      if (!bits)
        return fail(op, "a constant of an unsupported kind");
      out.scalar = true;
      out.data.push_back(EvalScalar{*bits, false});
      return true;
    }
    if (!type.hasStaticShape())
      return fail(op, "a constant without a static shape");
    out.shape.assign(type.getShape().begin(), type.getShape().end());
    int64_t n = numElements(out.shape);
    if (!spend(n))
      return false;
    for (int64_t i = 0; i < n; ++i) {
      std::optional<uint64_t> bits =
          TensorEvaluator::constantElement(c.getValue(), i);
      if (!bits)
        return fail(op, "a constant of an unsupported kind");
      out.data.push_back(EvalScalar{*bits, false});
    }
    return true;
  }

  // Scalars.
  if (!isa<ShapedType>(v.getType())) {
    out.scalar = true;
    out.data.resize(1);
    if (auto ex = dyn_cast<tensor::ExtractOp>(op)) {
      const EagerValue *t = evaluate(ex.getTensor());
      if (!t)
        return false;
      SmallVector<int64_t> at;
      for (Value i : ex.getIndices()) {
        EvalScalar s;
        if (!scalarOf(i, s))
          return false;
        if (s.poison)
          return fail(op, "a poison index");
        at.push_back(static_cast<int64_t>(s.bits));
      }
      if (!inBounds(at, t->shape))
        return undefinedRead(op, at, t->shape);
      out.data[0] = t->data[TensorEvaluator::linearize(at, t->shape)];
      return true;
    }
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      const EagerValue *t = evaluate(dim.getSource());
      EvalScalar d;
      if (!t || !scalarOf(dim.getIndex(), d))
        return false;
      if (d.bits >= t->shape.size())
        return fail(op, "a dimension out of range");
      out.data[0] = EvalScalar{static_cast<uint64_t>(t->shape[d.bits]), false};
      return true;
    }
    if (auto apply = dyn_cast<affine::AffineApplyOp>(op)) {
      SmallVector<EvalScalar> operands(apply.getMapOperands().size());
      for (auto [i, operand] : llvm::enumerate(apply.getMapOperands()))
        if (!scalarOf(operand, operands[i]))
          return false;
      return affineApply(apply, operands, out.data[0]) && spend(1);
    }
    if (op->getNumResults() != 1 || op->getNumRegions() != 0)
      return fail(op, "a scalar op the evaluator does not model");
    SmallVector<EvalScalar, 4> operands(op->getNumOperands());
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      if (!scalarOf(operand, operands[i]))
        return false;
    if (failed(scalars.applyScalarOp(op, operands, {}, out.data[0])))
      return fail(nullptr, scalars.getError());
    return spend(1);
  }
  if (!type)
    return fail(op, "an unranked tensor");

  // Reshapes keep the row-major order; a bitcast keeps the bits.
  auto reshaped = [&](Value src) -> bool {
    const EagerValue *s = evaluate(src);
    if (!s)
      return false;
    if (numElements(out.shape) != static_cast<int64_t>(s->data.size()))
      return fail(op, "a reshape that changes the number of elements");
    out.data = s->data;
    return spend(static_cast<int64_t>(out.data.size()));
  };
  if (auto e = dyn_cast<tensor::ExpandShapeOp>(op))
    return sizesOf(op, e.getMixedOutputShape(), out.shape) &&
           reshaped(e.getSrc());
  if (auto c = dyn_cast<tensor::CollapseShapeOp>(op)) {
    const EagerValue *s = evaluate(c.getSrc());
    if (!s)
      return false;
    for (const ReassociationIndices &group : c.getReassociationIndices()) {
      int64_t n = 1;
      for (int64_t d : group)
        n *= s->shape[d];
      out.shape.push_back(n);
    }
    return reshaped(c.getSrc());
  }
  if (auto r = dyn_cast<tensor::ReshapeOp>(op)) {
    const EagerValue *s = evaluate(r.getShape());
    if (!s || s->shape.size() != 1)
      return s ? fail(op, "a shape operand that is not 1-D") : false;
    for (const EvalScalar &x : s->data) {
      if (x.poison)
        return fail(op, "a poison size");
      out.shape.push_back(static_cast<int64_t>(x.bits));
    }
    return reshaped(r.getSource());
  }
  if (isa<tensor::BitcastOp, tensor::CastOp>(op)) {
    const EagerValue *s = evaluate(op->getOperand(0));
    if (!s)
      return false;
    out.shape = s->shape;
    return reshaped(op->getOperand(0));
  }
  if (auto e = dyn_cast<tensor::EmptyOp>(op)) {
    if (!sizesOf(op, e.getMixedSizes(), out.shape))
      return false;
    int64_t n = numElements(out.shape);
    if (!spend(n))
      return false;
    out.data.assign(n, EvalScalar{0, true}); // Uninitialised: poison.
    return true;
  }
  if (auto s = dyn_cast<tensor::ExtractSliceOp>(op)) {
    const EagerValue *src = evaluate(s.getSource());
    if (!src)
      return false;
    SmallVector<int64_t> offs, sizes, strides;
    if (!sliceOf(s, offs, sizes, strides))
      return false;
    llvm::SmallBitVector dropped = s.getDroppedDims();
    for (unsigned d = 0; d < sizes.size(); ++d)
      if (!dropped.test(d))
        out.shape.push_back(sizes[d]);
    int64_t n = numElements(sizes);
    if (!spend(n))
      return false;
    out.data.reserve(n);
    if (n == 0)
      return true;
    SmallVector<int64_t> at(sizes.size(), 0), from(sizes.size());
    do {
      for (unsigned d = 0; d < sizes.size(); ++d)
        from[d] = offs[d] + at[d] * strides[d];
      if (!inBounds(from, src->shape))
        return undefinedRead(op, from, src->shape);
      out.data.push_back(
          src->data[TensorEvaluator::linearize(from, src->shape)]);
    } while (next(at, sizes));
    return true;
  }
  if (auto ins = dyn_cast<tensor::InsertSliceOp>(op)) {
    const EagerValue *src = evaluate(ins.getSource());
    const EagerValue *dst = evaluate(ins.getDest());
    if (!src || !dst)
      return false;
    SmallVector<int64_t> offs, sizes, strides;
    if (!sliceOf(ins, offs, sizes, strides))
      return false;
    out.shape = dst->shape;
    out.data = dst->data;
    int64_t n = numElements(sizes);
    if (n != static_cast<int64_t>(src->data.size()))
      return fail(op, "a source that does not fill the slice");
    if (!spend(n + static_cast<int64_t>(out.data.size())))
      return false;
    if (n == 0)
      return true;
    SmallVector<int64_t> at(sizes.size(), 0), to(sizes.size());
    int64_t k = 0;
    do {
      for (unsigned d = 0; d < sizes.size(); ++d)
        to[d] = offs[d] + at[d] * strides[d];
      if (!inBounds(to, out.shape))
        return fail(op, "a slice out of bounds");
      out.data[TensorEvaluator::linearize(to, out.shape)] = src->data[k++];
    } while (next(at, sizes));
    return true;
  }
  if (auto cat = dyn_cast<tensor::ConcatOp>(op)) {
    int64_t dim = cat.getDim();
    SmallVector<const EagerValue *> ins;
    for (Value in : cat.getInputs()) {
      ins.push_back(evaluate(in));
      if (!ins.back())
        return false;
    }
    out.shape = ins.front()->shape;
    out.shape[dim] = 0;
    for (const EagerValue *in : ins) {
      if (in->shape.size() != out.shape.size())
        return fail(op, "inputs of different ranks");
      for (unsigned d = 0; d < in->shape.size(); ++d)
        if (d != dim && in->shape[d] != ins.front()->shape[d])
          return fail(op, "inputs that differ outside the dimension");
      out.shape[dim] += in->shape[dim];
    }
    int64_t n = numElements(out.shape);
    if (!spend(n))
      return false;
    out.data.reserve(n);
    if (n == 0)
      return true;
    SmallVector<int64_t> at(out.shape.size(), 0);
    do {
      SmallVector<int64_t> src(at);
      for (const EagerValue *in : ins) {
        if (src[dim] < in->shape[dim]) {
          out.data.push_back(
              in->data[TensorEvaluator::linearize(src, in->shape)]);
          break;
        }
        src[dim] -= in->shape[dim];
      }
    } while (next(at, out.shape));
    return true;
  }
  if (auto fe = dyn_cast<tensor::FromElementsOp>(op)) {
    out.shape.assign(type.getShape().begin(), type.getShape().end());
    for (Value e : fe.getElements())
      if (!scalarOf(e, out.data.emplace_back()))
        return false;
    return spend(static_cast<int64_t>(out.data.size()));
  }
  if (isa<linalg::LinalgOp>(op))
    return structured(op, result, out);
  StringRef name = op->getName().getStringRef();
  if (name == kScan)
    return scan(op, result, out);
  if (name == kScatter)
    return scatter(op, out);
  return fail(op, "an op the evaluator does not model");
}

bool EagerEvaluator::applyRegion(Region &region, ArrayRef<EvalScalar> args,
                                 ArrayRef<int64_t> loopIndex,
                                 SmallVectorImpl<EvalScalar> &yielded) {
  if (!region.hasOneBlock())
    return fail(region.getParentOp(), "a body of more than one block");
  Block &body = region.front();
  llvm::SmallDenseMap<Value, EvalScalar, 16> local;
  for (auto [arg, v] : llvm::zip_equal(body.getArguments(), args))
    local[arg] = v;
  auto read = [&](Value v, EvalScalar &out) {
    if (auto it = local.find(v); it != local.end()) {
      out = it->second;
      return true;
    }
    return scalarOf(v, out); // Defined outside the body.
  };
  SmallVector<EvalScalar, 4> operands;
  for (Operation &op : body.without_terminator()) {
    if (isa<cf::AssertOp>(op))
      continue; // The frontend's checks: no value.
    if (op.getNumResults() != 1 || op.getNumRegions() != 0)
      return fail(&op, "a body op without exactly one result");
    EvalScalar r;
    if (auto ex = dyn_cast<tensor::ExtractOp>(op)) {
      const EagerValue *t = evaluate(ex.getTensor());
      if (!t)
        return false;
      SmallVector<int64_t, 4> at;
      for (Value i : ex.getIndices()) {
        EvalScalar s;
        if (!read(i, s))
          return false;
        if (s.poison)
          return fail(&op, "a poison index");
        at.push_back(static_cast<int64_t>(s.bits));
      }
      if (!inBounds(at, t->shape))
        return undefinedRead(&op, at, t->shape);
      r = t->data[TensorEvaluator::linearize(at, t->shape)];
    } else {
      operands.resize(op.getNumOperands());
      for (auto [i, operand] : llvm::enumerate(op.getOperands()))
        if (!read(operand, operands[i]))
          return false;
      if (isa<affine::AffineApplyOp>(op)) {
        if (!affineApply(&op, operands, r))
          return false;
      } else if (failed(scalars.applyScalarOp(&op, operands, loopIndex, r))) {
        return fail(nullptr, scalars.getError());
      }
    }
    local[op.getResult(0)] = r;
  }
  if (!spend(static_cast<int64_t>(body.getOperations().size())))
    return false;
  yielded.clear();
  for (Value v : body.getTerminator()->getOperands())
    if (!read(v, yielded.emplace_back()))
      return false;
  return true;
}

bool EagerEvaluator::structured(Operation *op, unsigned result,
                                EagerValue &out) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  if (!linalgOp.hasPureTensorSemantics())
    return fail(op, "a structured op on buffers");
  // Operand values, and the loop ranges from their sizes.
  SmallVector<const EagerValue *> vals;
  SmallVector<int64_t> flatSizes;
  for (OpOperand &operand : op->getOpOperands()) {
    const EagerValue *e = evaluate(operand.get());
    if (!e)
      return false;
    vals.push_back(e);
    if (!e->scalar)
      flatSizes.append(e->shape.begin(), e->shape.end());
  }
  AffineMap shapesToLoops = linalgOp.getShapesToLoopsMap();
  if (!shapesToLoops)
    return fail(op, "loop ranges that are not read off the operand sizes");
  SmallVector<int64_t> ranges;
  for (AffineExpr e : shapesToLoops.getResults())
    ranges.push_back(TensorEvaluator::affineValue(e, flatSizes));
  SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
  unsigned numInputs = linalgOp.getNumDpsInputs();
  unsigned numInits = linalgOp.getNumDpsInits();
  SmallVector<EagerValue> outs(numInits);
  for (unsigned o = 0; o < numInits; ++o) {
    outs[o].shape = vals[numInputs + o]->shape;
    outs[o].data = vals[numInputs + o]->data;
  }
  int64_t points = numElements(ranges);
  if (!spend(points))
    return false;
  Block *body = linalgOp.getBlock();
  SmallVector<EvalScalar> args(body->getNumArguments()), yielded;
  SmallVector<SmallVector<int64_t, 4>> at(op->getNumOperands());
  // The block argument of each operand (none for linalg.map's init).
  SmallVector<int> argOf;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument barg = linalgOp.getMatchingBlockArgument(&operand);
    argOf.push_back(barg ? int(barg.getArgNumber()) : -1);
  }
  if (points > 0) {
    SmallVector<int64_t> d(ranges.size(), 0);
    do {
      for (unsigned i = 0; i < op->getNumOperands(); ++i) {
        at[i].clear();
        for (AffineExpr e : maps[i].getResults())
          at[i].push_back(TensorEvaluator::affineValue(e, d));
        const EagerValue *src = i < numInputs ? vals[i] : &outs[i - numInputs];
        if (src->scalar) {
          if (argOf[i] >= 0)
            args[argOf[i]] = src->data[0];
          continue;
        }
        if (!inBounds(at[i], src->shape))
          return fail(op, "an indexing map out of bounds");
        if (argOf[i] >= 0)
          args[argOf[i]] =
              src->data[TensorEvaluator::linearize(at[i], src->shape)];
      }
      if (!applyRegion(op->getRegion(0), args, d, yielded))
        return false;
      for (unsigned o = 0; o < numInits; ++o)
        outs[o].data[TensorEvaluator::linearize(at[numInputs + o],
                                                outs[o].shape)] = yielded[o];
    } while (next(d, ranges));
  }
  // Keep every result: a multi-result op is evaluated once.
  for (unsigned o = 0; o < numInits; ++o)
    if (o != result)
      values[op->getResult(o)] = std::make_unique<EagerValue>(outs[o]);
  out = std::move(outs[result]);
  return true;
}

bool EagerEvaluator::scan(Operation *op, unsigned result, EagerValue &out) {
  auto dimAttr = op->getAttrOfType<IntegerAttr>("dimension");
  auto inclAttr = op->getAttrOfType<BoolAttr>("inclusive");
  if (op->getNumOperands() != 3 || op->getNumResults() != 2 || !dimAttr ||
      !inclAttr || op->getNumRegions() != 1)
    return fail(op, "a scan other than ins(input) outs(output, accumulator)");
  const EagerValue *in = evaluate(op->getOperand(0));
  const EagerValue *out0 = in ? evaluate(op->getOperand(1)) : nullptr;
  const EagerValue *acc0 = out0 ? evaluate(op->getOperand(2)) : nullptr;
  if (!acc0)
    return false;
  int64_t dim = dimAttr.getInt();
  if (dim < 0 || dim >= static_cast<int64_t>(in->shape.size()) ||
      in->shape != out0->shape)
    return fail(op, "a scan dimension or output outside the input");
  bool inclusive = inclAttr.getValue();
  EagerValue o = *out0, acc = *acc0;
  SmallVector<EvalScalar> yielded;
  int64_t n = static_cast<int64_t>(in->data.size());
  if (!spend(n))
    return false;
  if (n > 0) {
    SmallVector<int64_t> i(in->shape.size(), 0), prev, accIdx;
    do {
      accIdx.clear();
      for (int64_t d = 0; d < static_cast<int64_t>(i.size()); ++d)
        if (d != dim)
          accIdx.push_back(i[d]);
      if (!inBounds(accIdx, acc.shape))
        return fail(op, "an accumulator that does not fit the input");
      int64_t li = TensorEvaluator::linearize(i, in->shape);
      int64_t la = TensorEvaluator::linearize(accIdx, acc.shape);
      if (i[dim] == 0) {
        o.data[li] = inclusive ? in->data[li] : acc.data[la];
        continue;
      }
      prev.assign(i.begin(), i.end());
      --prev[dim];
      int64_t lp = TensorEvaluator::linearize(prev, in->shape);
      if (!applyRegion(op->getRegion(0),
                       {o.data[lp], in->data[inclusive ? li : lp]}, {},
                       yielded))
        return false;
      o.data[li] = yielded[0];
      acc.data[la] = yielded[0];
    } while (next(i, in->shape));
  }
  values[op->getResult(1 - result)] =
      std::make_unique<EagerValue>(result == 0 ? acc : o);
  out = result == 0 ? std::move(o) : std::move(acc);
  return true;
}

bool EagerEvaluator::scatter(Operation *op, EagerValue &out) {
  auto dimMapAttr = op->getAttrOfType<DenseI64ArrayAttr>("dimension_map");
  if (op->getNumOperands() != 3 || op->getNumResults() != 1 || !dimMapAttr ||
      op->getNumRegions() != 1)
    return fail(op,
                "a scatter other than ins(updates, indices) outs(original)");
  const EagerValue *upd = evaluate(op->getOperand(0));
  const EagerValue *idx = upd ? evaluate(op->getOperand(1)) : nullptr;
  const EagerValue *orig = idx ? evaluate(op->getOperand(2)) : nullptr;
  if (!orig)
    return false;
  ArrayRef<int64_t> dimMap = dimMapAttr.asArrayRef();
  int64_t rank = static_cast<int64_t>(orig->shape.size());
  int64_t urank = static_cast<int64_t>(upd->shape.size());
  if (idx->shape.size() != 2 ||
      idx->shape[1] != static_cast<int64_t>(dimMap.size()) || urank < 1 ||
      urank - 1 > rank || idx->shape[0] != upd->shape[0] ||
      llvm::any_of(dimMap, [&](int64_t d) { return d < 0 || d >= rank; }))
    return fail(op, "indices and updates that do not fit the original");
  out = *orig;
  int64_t n = static_cast<int64_t>(upd->data.size());
  if (!spend(n))
    return false;
  if (n == 0)
    return true;
  SmallVector<int64_t> p(urank, 0), dest(rank);
  SmallVector<EvalScalar> yielded;
  int64_t offset = rank - (urank - 1);
  auto idxElem = dyn_cast<IntegerType>(
      cast<ShapedType>(op->getOperand(1).getType()).getElementType());
  if (!idxElem)
    return fail(op, "indices that are not integers");
  unsigned width = idxElem.getWidth();
  do {
    std::fill(dest.begin(), dest.end(), 0);
    for (int64_t k = 1; k < urank; ++k)
      dest[k - 1 + offset] = p[k];
    for (auto [i, d] : llvm::enumerate(dimMap)) {
      const EvalScalar &raw = idx->data[p[0] * idx->shape[1] + i];
      if (raw.poison)
        return fail(op, "a poison index");
      dest[d] += llvm::SignExtend64(raw.bits, width);
    }
    if (!inBounds(dest, out.shape)) {
      ++skippedUpdates;
      continue; // Skipped, as fusion-lower-tm-tensor lowers it.
    }
    int64_t l = TensorEvaluator::linearize(dest, out.shape);
    if (!applyRegion(
            op->getRegion(0),
            {upd->data[TensorEvaluator::linearize(p, upd->shape)], out.data[l]},
            {}, yielded))
      return false;
    out.data[l] = yielded[0];
  } while (next(p, upd->shape));
  return true;
}
