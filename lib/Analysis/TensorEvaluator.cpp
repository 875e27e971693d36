//===- TensorEvaluator.cpp - evaluate tensor IR element by element ---------===//
//
// See TensorEvaluator.h. Structured ops go through the LinalgOp interface
// (indexing maps, iterator types, the body), so linalg.generic and the named
// ops (fill, reduce, map, transpose, broadcast, copy, the elementwise ones)
// share one path. A reduction visits its reduction points in lexicographic
// loop order, the order `convert-linalg-to-loops` accumulates in.
//
//===----------------------------------------------------------------------===//
#include "fusion/Analysis/TensorEvaluator.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/bit.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fusion;

namespace {

// ---- element types ----------------------------------------------------------

unsigned intWidth(Type t) {
  if (t.isIndex())
    return 64;
  return cast<IntegerType>(t).getWidth();
}

uint64_t mask(unsigned w) { return w >= 64 ? ~0ull : ((1ull << w) - 1); }

int64_t sext(uint64_t bits, unsigned w) {
  if (w >= 64)
    return static_cast<int64_t>(bits);
  uint64_t sign = 1ull << (w - 1);
  return static_cast<int64_t>(((bits & mask(w)) ^ sign) - sign);
}

llvm::APFloat toAPFloat(Type t, uint64_t bits) {
  auto ft = cast<FloatType>(t);
  return llvm::APFloat(ft.getFloatSemantics(),
                       llvm::APInt(ft.getWidth(), bits & mask(ft.getWidth())));
}

uint64_t fromAPFloat(const llvm::APFloat &f) {
  return f.bitcastToAPInt().getZExtValue();
}

/// Rounds `f` (any float semantics) to type `t`, to nearest even.
/// `f` converted to `sem`, to nearest even. A NaN becomes the quiet NaN of
/// `sem` with its sign: LLVM 22's APFloat converts the E8M0 NaN (0xFF) to
/// an f32 that says isNaN() but holds the bits of +Inf, where arith-expand's
/// extf of f8E8M0FNU (the lowering) gives a NaN.
llvm::APFloat convertTo(const llvm::fltSemantics &sem, llvm::APFloat f) {
  if (f.isNaN())
    return llvm::APFloat::getQNaN(sem, f.isNegative());
  bool losesInfo = false;
  f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return f;
}

uint64_t roundTo(Type t, llvm::APFloat f) {
  return fromAPFloat(convertTo(cast<FloatType>(t).getFloatSemantics(), f));
}

float asFloat(Type t, uint64_t bits) {
  if (t.isF32())
    return llvm::bit_cast<float>(static_cast<uint32_t>(bits));
  if (t.isBF16())
    return llvm::bit_cast<float>(static_cast<uint32_t>(bits << 16));
  return convertTo(llvm::APFloat::IEEEsingle(), toAPFloat(t, bits))
      .convertToFloat();
}

double asDouble(Type t, uint64_t bits) {
  if (t.isF64())
    return llvm::bit_cast<double>(bits);
  if (t.isF32())
    return asFloat(t, bits);
  return convertTo(llvm::APFloat::IEEEdouble(), toAPFloat(t, bits))
      .convertToDouble();
}

uint64_t fromFloat(Type t, float v) {
  uint32_t b = llvm::bit_cast<uint32_t>(v);
  if (t.isF32())
    return b;
  return roundTo(t, llvm::APFloat(v));
}

uint64_t fromDouble(Type t, double v) {
  if (t.isF64())
    return llvm::bit_cast<uint64_t>(v);
  return roundTo(t, llvm::APFloat(v));
}

/// Applies `fn` in the precision the lowered IR computes type `t` in: double
/// for f64, float for every narrower type (rounded to `t` once).
template <typename Fn>
uint64_t floatOp(Type t, ArrayRef<EvalScalar> a, ArrayRef<Type> types, Fn fn) {
  if (t.isF64()) {
    double x = asDouble(types[0], a[0].bits);
    double y = a.size() > 1 ? asDouble(types[1], a[1].bits) : 0.0;
    double z = a.size() > 2 ? asDouble(types[2], a[2].bits) : 0.0;
    return fromDouble(t, fn(x, y, z));
  }
  float x = asFloat(types[0], a[0].bits);
  float y = a.size() > 1 ? asFloat(types[1], a[1].bits) : 0.0f;
  float z = a.size() > 2 ? asFloat(types[2], a[2].bits) : 0.0f;
  return fromFloat(t, fn(x, y, z));
}

// IEEE 754-2019 maximum / minimum (NaN-propagating, -0 < +0) and maxNum /
// minNum (NaN-ignoring), as arith defines them.
template <typename T> T maximumOf(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<T>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
template <typename T> T minimumOf(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<T>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
template <typename T> T maxNumOf(T a, T b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  return maximumOf(a, b);
}
template <typename T> T minNumOf(T a, T b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  return minimumOf(a, b);
}

bool cmpF(arith::CmpFPredicate p, double a, double b) {
  using P = arith::CmpFPredicate;
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (p) {
  case P::AlwaysFalse:
    return false;
  case P::AlwaysTrue:
    return true;
  case P::OEQ:
    return !unordered && a == b;
  case P::OGT:
    return !unordered && a > b;
  case P::OGE:
    return !unordered && a >= b;
  case P::OLT:
    return !unordered && a < b;
  case P::OLE:
    return !unordered && a <= b;
  case P::ONE:
    return !unordered && a != b;
  case P::ORD:
    return !unordered;
  case P::UEQ:
    return unordered || a == b;
  case P::UGT:
    return unordered || a > b;
  case P::UGE:
    return unordered || a >= b;
  case P::ULT:
    return unordered || a < b;
  case P::ULE:
    return unordered || a <= b;
  case P::UNE:
    return unordered || a != b;
  case P::UNO:
    return unordered;
  }
  return false;
}

bool cmpI(arith::CmpIPredicate p, uint64_t a, uint64_t b, unsigned w) {
  using P = arith::CmpIPredicate;
  int64_t sa = sext(a, w), sb = sext(b, w);
  a &= mask(w);
  b &= mask(w);
  switch (p) {
  case P::eq:
    return a == b;
  case P::ne:
    return a != b;
  case P::slt:
    return sa < sb;
  case P::sle:
    return sa <= sb;
  case P::sgt:
    return sa > sb;
  case P::sge:
    return sa >= sb;
  case P::ult:
    return a < b;
  case P::ule:
    return a <= b;
  case P::ugt:
    return a > b;
  case P::uge:
    return a >= b;
  }
  return false;
}

/// An element of a constant (splat or dense) as raw bits.
std::optional<uint64_t> constantBits(Attribute attr, int64_t linear) {
  if (auto f = dyn_cast<FloatAttr>(attr))
    return fromAPFloat(f.getValue());
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getValue().getZExtValue();
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  int64_t at = dense.isSplat() ? 0 : linear;
  Type et = dense.getElementType();
  if (isa<FloatType>(et))
    return fromAPFloat(dense.getValues<llvm::APFloat>()[at]);
  if (isa<IntegerType, IndexType>(et))
    return dense.getValues<llvm::APInt>()[at].getZExtValue();
  return std::nullopt;
}

int64_t evalAffine(AffineExpr e, ArrayRef<int64_t> dims) {
  switch (e.getKind()) {
  case AffineExprKind::DimId:
    return dims[cast<AffineDimExpr>(e).getPosition()];
  case AffineExprKind::Constant:
    return cast<AffineConstantExpr>(e).getValue();
  default:
    break;
  }
  auto bin = cast<AffineBinaryOpExpr>(e);
  int64_t l = evalAffine(bin.getLHS(), dims), r = evalAffine(bin.getRHS(), dims);
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return l + r;
  case AffineExprKind::Mul:
    return l * r;
  case AffineExprKind::Mod:
    return ((l % r) + r) % r;
  case AffineExprKind::FloorDiv:
    return l >= 0 ? l / r : -((-l + r - 1) / r);
  case AffineExprKind::CeilDiv:
    return l >= 0 ? (l + r - 1) / r : -((-l) / r);
  default:
    return 0;
  }
}

bool hasSymbols(AffineMap m) { return m.getNumSymbols() != 0; }

} // namespace

// ---- public helpers ---------------------------------------------------------

int64_t TensorEvaluator::affineValue(AffineExpr e, ArrayRef<int64_t> dims) {
  return evalAffine(e, dims);
}

std::optional<uint64_t> TensorEvaluator::constantElement(Attribute attr,
                                                         int64_t linear) {
  return constantBits(attr, linear);
}

int64_t TensorEvaluator::linearize(ArrayRef<int64_t> index,
                                   ArrayRef<int64_t> shape) {
  int64_t linear = 0;
  for (auto [i, n] : llvm::zip_equal(index, shape))
    linear = linear * n + i;
  return linear;
}

void TensorEvaluator::delinearize(int64_t linear, ArrayRef<int64_t> shape,
                                  SmallVectorImpl<int64_t> &index) {
  index.assign(shape.size(), 0);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] == 0 ? 0 : linear % shape[d];
    linear = shape[d] == 0 ? 0 : linear / shape[d];
  }
}

LogicalResult TensorEvaluator::fail(Operation *op, const Twine &why) {
  if (error.empty()) {
    error = why.str();
    if (op)
      error += " ('" + op->getName().getStringRef().str() + "')";
  }
  return failure();
}

FailureOr<EvalScalar> TensorEvaluator::element(Value v,
                                               ArrayRef<int64_t> index) {
  error.clear();
  return evalElement(v, index);
}

// ---- tensors ------------------------------------------------------------------

FailureOr<EvalScalar> TensorEvaluator::evalElement(Value v,
                                                   ArrayRef<int64_t> index) {
  if (--budget < 0) {
    (void)fail(nullptr, "evaluation budget exhausted");
    return failure();
  }
  EvalScalar leaf;
  if (leaves(v, index, leaf))
    return leaf;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape()) {
    (void)fail(v.getDefiningOp(), "a value without a static tensor shape");
    return failure();
  }
  ArrayRef<int64_t> shape = type.getShape();
  for (auto [i, n] : llvm::zip_equal(index, shape))
    if (i < 0 || i >= n) {
      (void)fail(v.getDefiningOp(), "an index out of bounds");
      return failure();
    }
  Operation *op = v.getDefiningOp();
  if (!op) {
    (void)fail(nullptr, "a block argument that is not the region's input");
    return failure();
  }
  int64_t linear = linearize(index, shape);
  auto key = std::make_pair(v.getAsOpaquePointer(), linear);
  if (auto it = cache.find(key); it != cache.end())
    return it->second;

  // Reshapes keep the row-major order; a bitcast keeps the bits.
  auto viaLinear = [&](Value src) -> FailureOr<EvalScalar> {
    auto st = dyn_cast<RankedTensorType>(src.getType());
    if (!st || !st.hasStaticShape()) {
      (void)fail(op, "a reshape of a dynamically shaped tensor");
      return failure();
    }
    SmallVector<int64_t> srcIndex;
    delinearize(linear, st.getShape(), srcIndex);
    return evalElement(src, srcIndex);
  };
  if (auto e = dyn_cast<tensor::ExpandShapeOp>(op))
    return viaLinear(e.getSrc());
  if (auto c = dyn_cast<tensor::CollapseShapeOp>(op))
    return viaLinear(c.getSrc());
  if (auto r = dyn_cast<tensor::ReshapeOp>(op))
    return viaLinear(r.getSource());
  if (auto b = dyn_cast<tensor::BitcastOp>(op))
    return evalElement(b.getOperand(), index);
  if (auto c = dyn_cast<tensor::CastOp>(op))
    return evalElement(c.getSource(), index);
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    std::optional<uint64_t> bits = constantBits(c.getValue(), linear);
    if (!bits) {
      (void)fail(op, "a constant of an unsupported kind");
      return failure();
    }
    return EvalScalar{*bits, false};
  }
  if (isa<tensor::EmptyOp>(op)) {
    (void)fail(op, "a read of an uninitialised tensor");
    return failure();
  }
  if (auto s = dyn_cast<tensor::ExtractSliceOp>(op)) {
    if (!s.hasUnitStride() && llvm::any_of(s.getStaticStrides(), [](int64_t x) {
          return ShapedType::isDynamic(x);
        })) {
      (void)fail(op, "a slice with dynamic strides");
      return failure();
    }
    ArrayRef<int64_t> offs = s.getStaticOffsets(), strides = s.getStaticStrides();
    if (llvm::any_of(offs, [](int64_t x) { return ShapedType::isDynamic(x); })) {
      (void)fail(op, "a slice with dynamic offsets");
      return failure();
    }
    llvm::SmallBitVector dropped = s.getDroppedDims();
    SmallVector<int64_t> src;
    unsigned r = 0;
    for (unsigned d = 0; d < offs.size(); ++d) {
      int64_t i = dropped.test(d) ? 0 : index[r++];
      src.push_back(offs[d] + i * strides[d]);
    }
    return evalElement(s.getSource(), src);
  }
  if (auto ins = dyn_cast<tensor::InsertSliceOp>(op)) {
    ArrayRef<int64_t> offs = ins.getStaticOffsets(),
                      sizes = ins.getStaticSizes(),
                      strides = ins.getStaticStrides();
    if (llvm::any_of(llvm::concat<const int64_t>(offs, sizes, strides),
                     [](int64_t x) { return ShapedType::isDynamic(x); })) {
      (void)fail(op, "an insert_slice with dynamic offsets or sizes");
      return failure();
    }
    SmallVector<int64_t> src;
    bool inside = true;
    for (unsigned d = 0; d < offs.size() && inside; ++d) {
      int64_t rel = index[d] - offs[d];
      if (rel < 0 || rel % strides[d] != 0 || rel / strides[d] >= sizes[d])
        inside = false;
      else if (sizes[d] != 1 || ins.getSourceType().getRank() ==
                                    static_cast<int64_t>(offs.size()))
        src.push_back(rel / strides[d]);
    }
    if (!inside)
      return evalElement(ins.getDest(), index);
    if (static_cast<int64_t>(src.size()) != ins.getSourceType().getRank()) {
      (void)fail(op, "a rank-reducing insert_slice");
      return failure();
    }
    return evalElement(ins.getSource(), src);
  }
  if (auto cat = dyn_cast<tensor::ConcatOp>(op)) {
    int64_t dim = cat.getDim();
    SmallVector<int64_t> src(index.begin(), index.end());
    for (Value in : cat.getInputs()) {
      int64_t n = cast<RankedTensorType>(in.getType()).getDimSize(dim);
      if (src[dim] < n)
        return evalElement(in, src);
      src[dim] -= n;
    }
    (void)fail(op, "an index past the concatenation");
    return failure();
  }
  if (auto fe = dyn_cast<tensor::FromElementsOp>(op))
    return scalar(fe.getElements()[linear]);
  if (auto sp = dyn_cast<tensor::SplatOp>(op))
    return scalar(sp.getInput());
  if (isa<linalg::LinalgOp>(op)) {
    SmallVector<EvalScalar> results;
    if (failed(evalStructured(op, cast<OpResult>(v).getResultNumber(), index,
                              results)))
      return failure();
    return results[cast<OpResult>(v).getResultNumber()];
  }
  (void)fail(op, "an op the evaluator does not model");
  return failure();
}

const TensorEvaluator::Structured &
TensorEvaluator::structureOf(Operation *op) {
  std::unique_ptr<Structured> &slot = structured[op];
  if (slot)
    return *slot;
  slot = std::make_unique<Structured>();
  Structured &s = *slot;
  auto linalgOp = cast<linalg::LinalgOp>(op);
  if (!linalgOp.hasPureTensorSemantics()) {
    s.error = "a structured op on buffers";
    return s;
  }
  s.ranges = linalgOp.getStaticLoopRanges();
  if (llvm::any_of(s.ranges,
                   [](int64_t r) { return ShapedType::isDynamic(r); })) {
    s.error = "a structured op with dynamic loop ranges";
    return s;
  }
  SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
  if (llvm::any_of(maps, hasSymbols)) {
    s.error = "an indexing map with symbols";
    return s;
  }
  SmallVector<utils::IteratorType> iters = linalgOp.getIteratorTypesArray();
  unsigned numLoops = s.ranges.size();
  SmallVector<bool> reduction(numLoops, false);
  for (unsigned l = 0; l < numLoops; ++l)
    if (iters[l] == utils::IteratorType::reduction) {
      s.reductionDims.push_back(l);
      reduction[l] = true;
    }
  for (unsigned o = 0; o < linalgOp.getNumDpsInits(); ++o) {
    OpOperand *operand = linalgOp.getDpsInitOperand(o);
    AffineMap m = linalgOp.getMatchingIndexingMap(operand);
    s.initMaps.push_back(m);
    BlockArgument arg = linalgOp.getMatchingBlockArgument(operand);
    s.initRead.push_back(arg && !arg.use_empty());
    // The loop point of a result element: the dimensions of its output
    // map; every parallel loop must be one of them (reductions are
    // enumerated).
    SmallVector<unsigned> dims;
    SmallVector<bool> known(numLoops, false);
    std::string why;
    for (AffineExpr e : m.getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (!dim) {
        why = "an output indexing map that is not a projection";
        break;
      }
      dims.push_back(dim.getPosition());
      known[dim.getPosition()] = true;
    }
    for (unsigned l = 0; l < numLoops && why.empty(); ++l)
      if (!reduction[l] && !known[l])
        why = "a parallel loop the output does not index";
    s.outDims.push_back(std::move(dims));
    s.outErrors.push_back(std::move(why));
  }
  for (BlockArgument arg : linalgOp.getBlock()->getArguments()) {
    OpOperand *operand = linalgOp.getMatchingOpOperand(arg);
    Structured::Arg a;
    a.used = !arg.use_empty();
    if (linalgOp.isDpsInit(operand)) {
      a.init = operand->getOperandNumber() - linalgOp.getNumDpsInputs();
    } else {
      a.operand = operand->get();
      if (isa<ShapedType>(a.operand.getType()))
        a.map = linalgOp.getMatchingIndexingMap(operand);
    }
    s.args.push_back(a);
  }
  // The body's slots (see Structured::BodyOp).
  Block *body = linalgOp.getBlock();
  DenseMap<Value, int> slotOf;
  for (BlockArgument arg : body->getArguments())
    slotOf[arg] = arg.getArgNumber();
  int next = body->getNumArguments();
  auto source = [&](Value v) {
    if (auto it = slotOf.find(v); it != slotOf.end())
      return it->second;
    s.outer.push_back(v);
    return -int(s.outer.size());
  };
  for (Operation &op : body->without_terminator()) {
    if (isa<cf::AssertOp>(op))
      continue; // Checks of the frontend; no value.
    if (op.getNumResults() != 1) {
      s.error = "a body op without exactly one result";
      return s;
    }
    Structured::BodyOp b{&op, {}};
    for (Value operand : op.getOperands())
      b.operands.push_back(source(operand));
    slotOf[op.getResult(0)] = next++;
    s.bodyOps.push_back(std::move(b));
  }
  for (Value v : body->getTerminator()->getOperands())
    s.yields.push_back(source(v));
  return s;
}

LogicalResult
TensorEvaluator::evalStructured(Operation *op, unsigned resultIndex,
                                ArrayRef<int64_t> index,
                                SmallVectorImpl<EvalScalar> &results) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  const Structured &st = structureOf(op);
  if (!st.error.empty())
    return fail(op, st.error);
  if (!st.outErrors[resultIndex].empty())
    return fail(op, st.outErrors[resultIndex]);
  ArrayRef<int64_t> ranges = st.ranges;
  ArrayRef<unsigned> reductionDims = st.reductionDims;

  // The loop point of the requested result element: the dimensions of its
  // output map, the reductions enumerated below.
  unsigned numLoops = ranges.size();
  SmallVector<int64_t> d(numLoops, 0);
  for (auto [k, dim] : llvm::enumerate(st.outDims[resultIndex]))
    d[dim] = index[k];

  Block *body = linalgOp.getBlock();
  unsigned numInits = st.initMaps.size();
  // Accumulators: the init elements, read only where the body uses them.
  SmallVector<EvalScalar> acc(numInits);
  SmallVector<SmallVector<int64_t>> initIndex(numInits);
  for (unsigned o = 0; o < numInits; ++o) {
    for (AffineExpr e : st.initMaps[o].getResults())
      initIndex[o].push_back(evalAffine(e, d));
    if (!st.initRead[o])
      continue;
    FailureOr<EvalScalar> x =
        evalElement(linalgOp.getDpsInitOperand(o)->get(), initIndex[o]);
    if (failed(x))
      return failure();
    acc[o] = *x;
  }

  SmallVector<EvalScalar> args(body->getNumArguments());
  SmallVector<EvalScalar> yielded;
  SmallVector<int64_t> at;
  while (true) {
    for (auto [i, a] : llvm::enumerate(st.args)) {
      if (a.init >= 0) {
        args[i] = acc[a.init];
        continue;
      }
      if (!a.used)
        continue;
      if (!a.map) {
        FailureOr<EvalScalar> s = scalar(a.operand);
        if (failed(s))
          return failure();
        args[i] = *s;
        continue;
      }
      at.clear();
      for (AffineExpr e : a.map.getResults())
        at.push_back(evalAffine(e, d));
      FailureOr<EvalScalar> x = evalElement(a.operand, at);
      if (failed(x))
        return failure();
      args[i] = *x;
    }
    if (failed(evalBody(st, d, args, yielded)))
      return failure();
    for (unsigned o = 0; o < numInits; ++o)
      acc[o] = yielded[o];
    // Next reduction point, innermost (last) dimension fastest.
    int64_t r = static_cast<int64_t>(reductionDims.size()) - 1;
    for (; r >= 0; --r) {
      unsigned l = reductionDims[r];
      if (++d[l] < ranges[l])
        break;
      d[l] = 0;
    }
    if (r < 0)
      break;
    if (--budget < 0)
      return fail(op, "evaluation budget exhausted");
  }
  results.assign(acc.begin(), acc.end());
  if (!reductionDims.empty() || numInits > 1)
    for (unsigned o = 0; o < numInits; ++o) {
      auto t = cast<RankedTensorType>(op->getResult(o).getType());
      cache[{op->getResult(o).getAsOpaquePointer(),
             linearize(initIndex[o], t.getShape())}] = acc[o];
    }
  return success();
}

LogicalResult TensorEvaluator::evalBody(const Structured &st,
                                        ArrayRef<int64_t> loopIndex,
                                        ArrayRef<EvalScalar> args,
                                        SmallVectorImpl<EvalScalar> &yielded) {
  // Slots: the block arguments, then each op's result in body order.
  SmallVector<EvalScalar, 32> slots(args.begin(), args.end());
  auto read = [&](int src, EvalScalar &out) -> LogicalResult {
    if (src >= 0) {
      out = slots[src];
      return success();
    }
    FailureOr<EvalScalar> s = scalar(st.outer[-src - 1]); // Outside the body.
    if (failed(s))
      return failure();
    out = *s;
    return success();
  };
  SmallVector<EvalScalar, 4> operands;
  for (const Structured::BodyOp &b : st.bodyOps) {
    operands.resize(b.operands.size());
    for (auto [i, src] : llvm::enumerate(b.operands))
      if (failed(read(src, operands[i])))
        return failure();
    EvalScalar r;
    if (failed(evalScalarOp(b.op, operands, loopIndex, r)))
      return failure();
    slots.push_back(r);
  }
  yielded.resize(st.yields.size());
  for (auto [i, src] : llvm::enumerate(st.yields))
    if (failed(read(src, yielded[i])))
      return failure();
  return success();
}

// ---- scalars -----------------------------------------------------------------

FailureOr<EvalScalar> TensorEvaluator::scalar(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op) {
    (void)fail(nullptr, "a scalar block argument outside a structured body");
    return failure();
  }
  if (auto ex = dyn_cast<tensor::ExtractOp>(op)) {
    SmallVector<int64_t> at;
    for (Value i : ex.getIndices()) {
      FailureOr<EvalScalar> s = scalar(i);
      if (failed(s))
        return failure();
      at.push_back(static_cast<int64_t>(s->bits));
    }
    return evalElement(ex.getTensor(), at);
  }
  if (op->getNumResults() != 1) {
    (void)fail(op, "a scalar op without exactly one result");
    return failure();
  }
  SmallVector<EvalScalar, 4> operands;
  for (Value operand : op->getOperands()) {
    FailureOr<EvalScalar> s = scalar(operand);
    if (failed(s))
      return failure();
    operands.push_back(*s);
  }
  EvalScalar r;
  if (failed(evalScalarOp(op, operands, {}, r)))
    return failure();
  return r;
}

uint64_t TensorEvaluator::truncTo(Type t, const llvm::APFloat &in) const {
  uint64_t bits = roundTo(t, in);
  if (saturatingF8 && cast<FloatType>(t).getWidth() == 8 && in.isFinite() &&
      !toAPFloat(t, bits).isFinite())
    bits = fromAPFloat(llvm::APFloat::getLargest(
        cast<FloatType>(t).getFloatSemantics(), in.isNegative()));
  return bits;
}

LogicalResult TensorEvaluator::evalScalarOp(Operation *op,
                                            ArrayRef<EvalScalar> a,
                                            ArrayRef<int64_t> loopIndex,
                                            EvalScalar &r) {
  Type rt = op->getResult(0).getType();
  SmallVector<Type, 3> types(op->getOperandTypes());
  r = EvalScalar{};
  for (const EvalScalar &x : a)
    r.poison |= x.poison;
  // select picks: poison in the branch not taken does not matter.
  if (auto sel = dyn_cast<arith::SelectOp>(op)) {
    r = (a[0].bits & 1) ? a[1] : a[2];
    r.poison |= a[0].poison;
    return success();
  }
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    std::optional<uint64_t> bits = constantBits(c.getValue(), 0);
    if (!bits || isa<ShapedType>(rt))
      return fail(op, "a non-scalar constant in scalar position");
    r.bits = *bits;
    return success();
  }
  if (auto idx = dyn_cast<linalg::IndexOp>(op)) {
    if (idx.getDim() >= loopIndex.size())
      return fail(op, "linalg.index outside a structured body");
    r.bits = static_cast<uint64_t>(loopIndex[idx.getDim()]);
    return success();
  }

  auto f1 = [&](auto fn) {
    r.bits = floatOp(rt, a, types, [&](auto x, auto, auto) { return fn(x); });
    return success();
  };
  auto f2 = [&](auto fn) {
    r.bits = floatOp(rt, a, types, [&](auto x, auto y, auto) { return fn(x, y); });
    return success();
  };

  // Float arithmetic.
  if (isa<arith::AddFOp>(op))
    return f2([](auto x, auto y) { return x + y; });
  if (isa<arith::SubFOp>(op))
    return f2([](auto x, auto y) { return x - y; });
  if (isa<arith::MulFOp>(op))
    return f2([](auto x, auto y) { return x * y; });
  if (isa<arith::DivFOp>(op))
    return f2([](auto x, auto y) { return x / y; });
  if (isa<arith::RemFOp>(op))
    return f2([](auto x, auto y) { return std::fmod(x, y); });
  if (isa<arith::NegFOp>(op)) {
    unsigned w = cast<FloatType>(rt).getWidth();
    r.bits = a[0].bits ^ (1ull << (w - 1));
    return success();
  }
  if (isa<math::AbsFOp>(op)) {
    unsigned w = cast<FloatType>(rt).getWidth();
    r.bits = a[0].bits & ~(1ull << (w - 1));
    return success();
  }
  if (isa<math::CopySignOp>(op)) {
    unsigned w = cast<FloatType>(rt).getWidth();
    uint64_t sign = 1ull << (w - 1);
    r.bits = (a[0].bits & ~sign) | (a[1].bits & sign);
    return success();
  }
  if (isa<arith::MaximumFOp>(op))
    return f2([](auto x, auto y) { return maximumOf(x, y); });
  if (isa<arith::MinimumFOp>(op))
    return f2([](auto x, auto y) { return minimumOf(x, y); });
  if (isa<arith::MaxNumFOp>(op))
    return f2([](auto x, auto y) { return maxNumOf(x, y); });
  if (isa<arith::MinNumFOp>(op))
    return f2([](auto x, auto y) { return minNumOf(x, y); });
  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    r.bits = cmpF(cmp.getPredicate(), asDouble(types[0], a[0].bits),
                  asDouble(types[1], a[1].bits));
    return success();
  }
  if (isa<math::FmaOp>(op)) {
    r.bits = floatOp(rt, a, types,
                     [](auto x, auto y, auto z) { return std::fma(x, y, z); });
    return success();
  }
  // Math functions, through the C library in the type's precision.
  if (isa<math::ExpOp>(op))
    return f1([](auto x) { return std::exp(x); });
  if (isa<math::Exp2Op>(op))
    return f1([](auto x) { return std::exp2(x); });
  if (isa<math::ExpM1Op>(op))
    return f1([](auto x) { return std::expm1(x); });
  if (isa<math::LogOp>(op))
    return f1([](auto x) { return std::log(x); });
  if (isa<math::Log2Op>(op))
    return f1([](auto x) { return std::log2(x); });
  if (isa<math::Log10Op>(op))
    return f1([](auto x) { return std::log10(x); });
  if (isa<math::Log1pOp>(op))
    return f1([](auto x) { return std::log1p(x); });
  if (isa<math::SqrtOp>(op))
    return f1([](auto x) { return std::sqrt(x); });
  if (isa<math::RsqrtOp>(op))
    return f1([](auto x) { return decltype(x)(1) / std::sqrt(x); });
  if (isa<math::TanhOp>(op))
    return f1([](auto x) { return std::tanh(x); });
  if (isa<math::ErfOp>(op))
    return f1([](auto x) { return std::erf(x); });
  if (isa<math::CeilOp>(op))
    return f1([](auto x) { return std::ceil(x); });
  if (isa<math::FloorOp>(op))
    return f1([](auto x) { return std::floor(x); });
  if (isa<math::TruncOp>(op))
    return f1([](auto x) { return std::trunc(x); });
  if (isa<math::RoundOp>(op))
    return f1([](auto x) { return std::round(x); });
  if (isa<math::RoundEvenOp>(op))
    return f1([](auto x) { return std::nearbyint(x); });
  if (isa<math::PowFOp>(op))
    return f2([](auto x, auto y) { return std::pow(x, y); });
  if (isa<math::FPowIOp>(op)) {
    // Binary powering, as compiler-rt's __powisf2 / __powidf2.
    int64_t n = sext(a[1].bits, intWidth(types[1]));
    r.bits = floatOp(rt, a.take_front(1), types, [&](auto x, auto, auto) {
      decltype(x) p = 1;
      bool recip = n < 0;
      uint64_t e = recip ? -static_cast<uint64_t>(n) : n;
      while (true) {
        if (e & 1)
          p *= x;
        e >>= 1;
        if (!e)
          break;
        x *= x;
      }
      return recip ? decltype(x)(1) / p : p;
    });
    return success();
  }
  if (isa<math::IsNaNOp>(op)) {
    r.bits = std::isnan(asDouble(types[0], a[0].bits));
    return success();
  }
  if (isa<math::IsInfOp>(op)) {
    r.bits = std::isinf(asDouble(types[0], a[0].bits));
    return success();
  }
  if (isa<math::IsFiniteOp>(op)) {
    r.bits = std::isfinite(asDouble(types[0], a[0].bits));
    return success();
  }

  // Conversions.
  if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
    if (auto t = dyn_cast<arith::TruncFOp>(op))
      if (t.getRoundingmodeAttr() &&
          *t.getRoundingmode() != arith::RoundingMode::to_nearest_even)
        return fail(op, "a truncf with a rounding mode other than to_nearest_even");
    llvm::APFloat in = toAPFloat(types[0], a[0].bits);
    r.bits = isa<arith::TruncFOp>(op) ? truncTo(rt, in) : roundTo(rt, in);
    return success();
  }
  if (auto st = dyn_cast<arith::ScalingTruncFOp>(op)) {
    // extf(scale) (truncf to f8E8M0FNU first for wide scales), divf, truncf.
    llvm::APFloat scale = toAPFloat(types[1], a[1].bits);
    bool losesInfo = false;
    if (cast<FloatType>(types[1]).getWidth() >= 16) {
      scale.convert(llvm::APFloat::Float8E8M0FNU(),
                    llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    }
    Type inT = types[0];
    uint64_t s = roundTo(inT, scale);
    EvalScalar q[2] = {a[0], EvalScalar{s, false}};
    Type qt[2] = {inT, inT};
    uint64_t div = floatOp(inT, q, qt, [](auto x, auto y, auto) { return x / y; });
    // Its final truncf is an arith.truncf (arith-expand): saturating where
    // the 8-bit casts are.
    r.bits = truncTo(rt, toAPFloat(inT, div));
    return success();
  }
  if (isa<arith::ScalingExtFOp>(op)) {
    EvalScalar q[2] = {EvalScalar{roundTo(rt, toAPFloat(types[0], a[0].bits))},
                       EvalScalar{roundTo(rt, toAPFloat(types[1], a[1].bits))}};
    Type qt[2] = {rt, rt};
    r.bits = floatOp(rt, q, qt, [](auto x, auto y, auto) { return x * y; });
    return success();
  }
  if (isa<arith::SIToFPOp, arith::UIToFPOp>(op)) {
    unsigned w = intWidth(types[0]);
    bool isSigned = isa<arith::SIToFPOp>(op);
    llvm::APFloat f(cast<FloatType>(rt).getFloatSemantics());
    f.convertFromAPInt(llvm::APInt(w, a[0].bits & mask(w)), isSigned,
                       llvm::APFloat::rmNearestTiesToEven);
    r.bits = fromAPFloat(f);
    return success();
  }
  if (isa<arith::FPToSIOp, arith::FPToUIOp>(op)) {
    unsigned w = intWidth(rt);
    bool isSigned = isa<arith::FPToSIOp>(op);
    llvm::APSInt out(w, !isSigned);
    bool exact = false;
    llvm::APFloat f = toAPFloat(types[0], a[0].bits);
    auto status = f.convertToInteger(out, llvm::APFloat::rmTowardZero, &exact);
    r.bits = out.getZExtValue() & mask(w);
    if (status & llvm::APFloat::opInvalidOp) {
      // NaN or out of range: poison in LLVM, unless wrapping was asked for
      // and the value fits an i32.
      llvm::APSInt wide(32, /*isUnsigned=*/false);
      bool fits = wrappingInt && w < 32 && !f.isNaN() &&
                  !(f.convertToInteger(wide, llvm::APFloat::rmTowardZero,
                                       &exact) &
                    llvm::APFloat::opInvalidOp);
      if (fits)
        r.bits = static_cast<uint64_t>(wide.getSExtValue()) & mask(w);
      else
        r.poison = true;
    }
    return success();
  }
  if (isa<arith::BitcastOp>(op)) {
    r.bits = a[0].bits;
    return success();
  }
  if (isa<arith::IndexCastOp, arith::ExtSIOp>(op)) {
    r.bits = static_cast<uint64_t>(sext(a[0].bits, intWidth(types[0]))) &
             mask(intWidth(rt));
    return success();
  }
  if (isa<arith::IndexCastUIOp, arith::ExtUIOp, arith::TruncIOp>(op)) {
    r.bits = a[0].bits & mask(intWidth(types[0])) & mask(intWidth(rt));
    return success();
  }

  // Integer arithmetic.
  if (isa<IntegerType, IndexType>(rt) && !types.empty() &&
      isa<IntegerType, IndexType>(types[0])) {
    unsigned w = intWidth(rt);
    unsigned wo = intWidth(types[0]);
    uint64_t x = a[0].bits & mask(wo);
    uint64_t y = a.size() > 1 ? a[1].bits & mask(wo) : 0;
    int64_t sx = sext(x, wo), sy = sext(y, wo);
    auto set = [&](uint64_t v) {
      r.bits = v & mask(w);
      return success();
    };
    if (auto cmp = dyn_cast<arith::CmpIOp>(op))
      return set(cmpI(cmp.getPredicate(), x, y, wo));
    if (isa<arith::AddIOp>(op))
      return set(x + y);
    if (isa<arith::SubIOp>(op))
      return set(x - y);
    if (isa<arith::MulIOp>(op))
      return set(x * y);
    if (isa<arith::AndIOp>(op))
      return set(x & y);
    if (isa<arith::OrIOp>(op))
      return set(x | y);
    if (isa<arith::XOrIOp>(op))
      return set(x ^ y);
    if (isa<arith::MaxSIOp>(op))
      return set(sx > sy ? x : y);
    if (isa<arith::MinSIOp>(op))
      return set(sx < sy ? x : y);
    if (isa<arith::MaxUIOp>(op))
      return set(x > y ? x : y);
    if (isa<arith::MinUIOp>(op))
      return set(x < y ? x : y);
    if (isa<arith::ShLIOp, arith::ShRSIOp, arith::ShRUIOp>(op)) {
      if (y >= w) {
        r.poison = true;
        return set(0);
      }
      if (isa<arith::ShLIOp>(op))
        return set(x << y);
      if (isa<arith::ShRUIOp>(op))
        return set(x >> y);
      return set(static_cast<uint64_t>(sx >> y));
    }
    if (isa<arith::DivSIOp, arith::RemSIOp, arith::DivUIOp, arith::RemUIOp,
            arith::FloorDivSIOp, arith::CeilDivSIOp>(op)) {
      if (y == 0 || (isa<arith::DivSIOp, arith::FloorDivSIOp,
                         arith::CeilDivSIOp, arith::RemSIOp>(op) &&
                     sy == -1 && x == (1ull << (wo - 1)))) {
        r.poison = true;
        return set(0);
      }
      if (isa<arith::DivUIOp>(op))
        return set(x / y);
      if (isa<arith::RemUIOp>(op))
        return set(x % y);
      if (isa<arith::DivSIOp>(op))
        return set(static_cast<uint64_t>(sx / sy));
      if (isa<arith::RemSIOp>(op))
        return set(static_cast<uint64_t>(sx % sy));
      int64_t q = sx / sy, m = sx % sy;
      if (isa<arith::FloorDivSIOp>(op))
        return set(static_cast<uint64_t>(m != 0 && ((m < 0) != (sy < 0)) ? q - 1 : q));
      return set(static_cast<uint64_t>(m != 0 && ((m < 0) == (sy < 0)) ? q + 1 : q));
    }
  }
  return fail(op, "an op the evaluator does not model");
}
