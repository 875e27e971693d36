//===- FloatRange.cpp - value ranges of float tensor IR --------------------===//
//
// See FloatRange.h. Bounds are doubles: every float type the frontends use
// (f64, f32, bf16, f16, the 8-bit types) embeds in double exactly. An
// operation in type T is bounded at its corners computed in double and
// rounded to T; for + - * / of f32 (and narrower) operands the double result
// rounded to T is the correctly rounded result (double has more than
// 2p + 2 bits), and bf16 / f16 arithmetic that the pipeline carries out in
// f32 and rounds once more is bounded by both roundings.
//
//===----------------------------------------------------------------------===//
#include "fusion/Analysis/FloatRange.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APFloat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

using namespace mlir;
using namespace mlir::fusion;

static constexpr double kInf = std::numeric_limits<double>::infinity();

FloatRange FloatRange::top() { return interval(-kInf, kInf, true); }
FloatRange FloatRange::point(double v) {
  FloatRange r;
  if (std::isnan(v)) {
    r.nan = true;
    return r;
  }
  r.lo = r.hi = v;
  r.number = true;
  return r;
}
FloatRange FloatRange::interval(double lo, double hi, bool nan) {
  FloatRange r;
  r.nan = nan;
  if (std::isnan(lo) || std::isnan(hi))
    return top();
  if (lo <= hi) {
    r.lo = lo;
    r.hi = hi;
    r.number = true;
  }
  return r;
}
FloatRange FloatRange::join(const FloatRange &o) const {
  FloatRange r;
  r.nan = nan || o.nan;
  r.number = number || o.number;
  if (number && o.number) {
    r.lo = std::min(lo, o.lo);
    r.hi = std::max(hi, o.hi);
  } else if (number) {
    r.lo = lo;
    r.hi = hi;
  } else if (o.number) {
    r.lo = o.lo;
    r.hi = o.hi;
  }
  return r;
}
bool FloatRange::operator==(const FloatRange &o) const {
  if (nan != o.nan || number != o.number)
    return false;
  return !number || (lo == o.lo && hi == o.hi);
}
std::string FloatRange::str() const {
  auto print = [](double d) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.9g", d);
    return std::string(buf);
  };
  std::string s = number ? "[" + print(lo) + ", " + print(hi) + "]" : "{}";
  return nan ? s + " or NaN" : s;
}

namespace {

FloatType floatTypeOf(Value v) {
  return dyn_cast<FloatType>(getElementTypeOrSelf(v.getType()));
}

/// `x` rounded to nearest even in `t`; nullopt where `t` has no infinity and
/// `x` overflows it (the result would be NaN).
std::optional<double> roundTo(double x, FloatType t) {
  if (t.isF64() || std::isnan(x))
    return x;
  llvm::APFloat f(x);
  bool loses = false;
  f.convert(t.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &loses);
  if (f.isNaN())
    return std::nullopt;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &loses);
  return f.convertToDouble();
}

/// The largest finite value of `t`.
double largest(FloatType t) {
  llvm::APFloat f = llvm::APFloat::getLargest(t.getFloatSemantics());
  bool loses = false;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &loses);
  return f.convertToDouble();
}

/// `x` moved `ulps` units of `t` towards -inf (down) or +inf.
double nudge(double x, FloatType t, int ulps, bool down) {
  if (std::isinf(x) || std::isnan(x))
    return x;
  llvm::APFloat f(x);
  bool loses = false;
  f.convert(t.getFloatSemantics(), down ? llvm::APFloat::rmTowardNegative
                                        : llvm::APFloat::rmTowardPositive,
            &loses);
  for (int i = 0; i < ulps; ++i)
    f.next(/*nextDown=*/down);
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &loses);
  return f.convertToDouble();
}

/// Bounds of exact results `candidates` as the IR rounds them to `t`: for
/// bf16 / f16 both the direct rounding and the rounding through f32.
FloatRange roundAll(ArrayRef<double> candidates, FloatType t, bool nan) {
  bool any = false;
  double lo = kInf, hi = -kInf;
  Type f32 = Float32Type::get(t.getContext());
  for (double c : candidates) {
    if (std::isnan(c))
      continue;
    SmallVector<double, 2> rounded;
    std::optional<double> direct = roundTo(c, t);
    if (!direct)
      return FloatRange::top();
    rounded.push_back(*direct);
    if (t.getWidth() < 32) {
      std::optional<double> viaF32 = roundTo(c, cast<FloatType>(f32));
      std::optional<double> twice = viaF32 ? roundTo(*viaF32, t) : viaF32;
      if (!twice)
        return FloatRange::top();
      rounded.push_back(*twice);
    }
    for (double r : rounded) {
      lo = std::min(lo, r);
      hi = std::max(hi, r);
      any = true;
    }
  }
  if (!any) {
    FloatRange r;
    r.nan = true;
    return r;
  }
  return FloatRange::interval(lo, hi, nan);
}

bool hasInf(const FloatRange &r) {
  return r.number && (r.lo == -kInf || r.hi == kInf);
}

FloatRange add(const FloatRange &a, const FloatRange &b, FloatType t) {
  if (!a.number || !b.number)
    return FloatRange::point(NAN);
  bool nan = a.nan || b.nan || (a.hi == kInf && b.lo == -kInf) ||
             (a.lo == -kInf && b.hi == kInf);
  double lo = a.lo + b.lo, hi = a.hi + b.hi;
  return roundAll({std::isnan(lo) ? -kInf : lo, std::isnan(hi) ? kInf : hi},
                  t, nan);
}

FloatRange negate(const FloatRange &a) {
  FloatRange r = a;
  if (a.number) {
    r.lo = -a.hi;
    r.hi = -a.lo;
  }
  return r;
}

FloatRange mul(const FloatRange &a, const FloatRange &b, FloatType t) {
  if (!a.number || !b.number)
    return FloatRange::point(NAN);
  bool nan = a.nan || b.nan || (a.contains(0) && hasInf(b)) ||
             (b.contains(0) && hasInf(a));
  return roundAll({a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}, t,
                  nan);
}

FloatRange div(const FloatRange &a, const FloatRange &b, FloatType t) {
  if (!a.number || !b.number)
    return FloatRange::point(NAN);
  if (b.contains(0))
    return FloatRange::top();
  bool nan = a.nan || b.nan || (hasInf(a) && hasInf(b));
  return roundAll({a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi}, t,
                  nan);
}

/// max / min that propagate NaN (maximumf / minimumf) or ignore it
/// (maxnumf / minnumf).
FloatRange extremum(const FloatRange &a, const FloatRange &b, bool isMax,
                    bool propagateNaN) {
  FloatRange both;
  if (a.number && b.number)
    both = FloatRange::interval(isMax ? std::max(a.lo, b.lo)
                                      : std::min(a.lo, b.lo),
                                isMax ? std::max(a.hi, b.hi)
                                      : std::min(a.hi, b.hi));
  if (propagateNaN) {
    both.nan = a.nan || b.nan;
    return both;
  }
  FloatRange r = both;
  if (b.nan && a.number)
    r = r.join(FloatRange::interval(a.lo, a.hi));
  if (a.nan && b.number)
    r = r.join(FloatRange::interval(b.lo, b.hi));
  r.nan = a.nan && b.nan;
  return r;
}

/// An increasing function computed by a library: bounds at the ends, widened
/// by a few units in the last place of `t`.
template <typename F>
FloatRange increasing(const FloatRange &a, FloatType t, F f, double domainLo,
                      bool closedDomain = true) {
  FloatRange r;
  r.nan = a.nan;
  if (!a.number)
    return r;
  if (a.lo < domainLo || (!closedDomain && a.lo == domainLo))
    r.nan = true;
  double lo = std::max(a.lo, domainLo), hi = a.hi;
  if (hi < domainLo) {
    r.nan = true;
    return r;
  }
  double flo = f(lo), fhi = f(hi);
  if (std::isnan(flo) || std::isnan(fhi))
    return FloatRange::top();
  FloatRange bounds = roundAll({flo, fhi}, t, r.nan);
  if (!bounds.number)
    return FloatRange::top();
  bounds.lo = nudge(bounds.lo, t, 4, /*down=*/true);
  bounds.hi = nudge(bounds.hi, t, 4, /*down=*/false);
  return bounds;
}

/// The range of `x` where `x pred k` is `holds` (the select that keeps `x`
/// under that outcome: a clamp).
FloatRange refine(FloatRange x, arith::CmpFPredicate pred, double k,
                  bool holds) {
  using P = arith::CmpFPredicate;
  // The predicate that holds on this branch.
  if (!holds) {
    switch (pred) {
    case P::OLT: pred = P::UGE; break;
    case P::OLE: pred = P::UGT; break;
    case P::OGT: pred = P::ULE; break;
    case P::OGE: pred = P::ULT; break;
    case P::ULT: pred = P::OGE; break;
    case P::ULE: pred = P::OGT; break;
    case P::UGT: pred = P::OLE; break;
    case P::UGE: pred = P::OLT; break;
    case P::OEQ: pred = P::UNE; break;
    case P::ONE: pred = P::UEQ; break;
    case P::UEQ: pred = P::ONE; break;
    case P::UNE: pred = P::OEQ; break;
    case P::ORD: pred = P::UNO; break;
    case P::UNO: pred = P::ORD; break;
    default: return x;
    }
  }
  bool ordered = pred == P::OLT || pred == P::OLE || pred == P::OGT ||
                 pred == P::OGE || pred == P::OEQ || pred == P::ONE ||
                 pred == P::ORD;
  if (ordered)
    x.nan = false;
  if (!x.number)
    return x;
  switch (pred) {
  case P::OLT: case P::OLE: case P::ULT: case P::ULE:
    x.hi = std::min(x.hi, k);
    break;
  case P::OGT: case P::OGE: case P::UGT: case P::UGE:
    x.lo = std::max(x.lo, k);
    break;
  case P::OEQ: case P::UEQ:
    x.lo = std::max(x.lo, k);
    x.hi = std::min(x.hi, k);
    break;
  case P::UNO:
    x.number = false;
    break;
  default:
    break;
  }
  if (x.number && x.lo > x.hi)
    x.number = false;
  return x;
}

/// The predicate of `b pred' a` equal to `a pred b`.
arith::CmpFPredicate swapped(arith::CmpFPredicate pred) {
  using P = arith::CmpFPredicate;
  switch (pred) {
  case P::OLT: return P::OGT;
  case P::OLE: return P::OGE;
  case P::OGT: return P::OLT;
  case P::OGE: return P::OLE;
  case P::ULT: return P::UGT;
  case P::ULE: return P::UGE;
  case P::UGT: return P::ULT;
  case P::UGE: return P::ULE;
  default: return pred;
  }
}

std::optional<bool> compare(arith::CmpFPredicate pred, const FloatRange &a,
                            const FloatRange &b) {
  using P = arith::CmpFPredicate;
  bool numbers = a.number && b.number;
  bool anyNaN = a.nan || b.nan;
  bool lt = numbers && a.lo < b.hi, le = numbers && a.lo <= b.hi;
  bool gt = numbers && a.hi > b.lo, ge = numbers && a.hi >= b.lo;
  bool eq = numbers && a.lo <= b.hi && b.lo <= a.hi;
  bool ne = numbers && !(a.lo == a.hi && b.lo == b.hi && a.lo == b.lo);
  bool canTrue = false, canFalse = false;
  auto ordered = [&](bool t, bool f) {
    canTrue = t;
    canFalse = f || anyNaN;
  };
  auto unordered = [&](bool t, bool f) {
    canTrue = t || anyNaN;
    canFalse = f;
  };
  switch (pred) {
  case P::AlwaysFalse: return false;
  case P::AlwaysTrue: return true;
  case P::OLT: ordered(lt, ge); break;
  case P::OLE: ordered(le, gt); break;
  case P::OGT: ordered(gt, le); break;
  case P::OGE: ordered(ge, lt); break;
  case P::OEQ: ordered(eq, ne); break;
  case P::ONE: ordered(ne, eq); break;
  case P::ORD: ordered(numbers, false); break;
  case P::ULT: unordered(lt, ge); break;
  case P::ULE: unordered(le, gt); break;
  case P::UGT: unordered(gt, le); break;
  case P::UGE: unordered(ge, lt); break;
  case P::UEQ: unordered(eq, ne); break;
  case P::UNE: unordered(ne, eq); break;
  case P::UNO: unordered(false, numbers); break;
  }
  if (!canTrue)
    return false;
  if (!canFalse)
    return true;
  return std::nullopt;
}

} // namespace

FloatRange FloatRangeAnalysis::range(Value v) {
  auto it = cache.find(v);
  if (it != cache.end())
    return it->second;
  if (!floatTypeOf(v))
    return FloatRange::top();
  void *key = v.getAsOpaquePointer();
  if (!inProgress.insert(key).second)
    return FloatRange::top();
  FloatRange r = compute(v);
  inProgress.erase(key);
  cache[v] = r;
  return r;
}

FloatRange FloatRangeAnalysis::compute(Value v) {
  FloatType t = floatTypeOf(v);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *parent = arg.getOwner()->getParentOp();
    if (isa<func::FuncOp>(parent) && arg.getOwner()->isEntryBlock())
      return finiteArguments
                 ? FloatRange::interval(-largest(t), largest(t))
                 : FloatRange::top();
    if (isa<linalg::GenericOp, linalg::ReduceOp, linalg::MapOp>(parent)) {
      bindBody(parent);
      auto it = cache.find(v);
      if (it != cache.end())
        return it->second;
    }
    return FloatRange::top();
  }
  auto result = cast<OpResult>(v);
  return computeOp(result.getOwner(), result.getResultNumber());
}

FloatRange FloatRangeAnalysis::computeOp(Operation *op, unsigned index) {
  FloatType t = floatTypeOf(op->getResult(index));
  auto operand = [&](unsigned i) { return range(op->getOperand(i)); };

  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    if (auto f = dyn_cast<FloatAttr>(cst.getValue()))
      return FloatRange::point(f.getValueAsDouble());
    if (auto dense = dyn_cast<DenseFPElementsAttr>(cst.getValue())) {
      if (dense.isSplat())
        return FloatRange::point(
            dense.getSplatValue<APFloat>().convertToDouble());
      if (dense.getNumElements() > (1 << 16))
        return FloatRange::top();
      FloatRange r;
      bool first = true;
      for (APFloat e : dense.getValues<APFloat>()) {
        bool loses = false;
        e.convert(llvm::APFloat::IEEEdouble(),
                  llvm::APFloat::rmNearestTiesToEven, &loses);
        FloatRange p = FloatRange::point(e.convertToDouble());
        r = first ? p : r.join(p);
        first = false;
      }
      return r;
    }
    return FloatRange::top();
  }
  if (isa<linalg::GenericOp, linalg::ReduceOp, linalg::MapOp>(op))
    return genericResult(op, index);
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return range(fill.getInputs()[0]);
  // Ops that move elements without changing them.
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ExtractSliceOp,
          tensor::CastOp, tensor::ExtractOp, tensor::ReshapeOp,
          linalg::TransposeOp, linalg::BroadcastOp>(op))
    return operand(0);
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    return range(insert.getSource()).join(range(insert.getDest()));
  if (auto insert = dyn_cast<tensor::InsertOp>(op))
    return range(insert.getScalar()).join(range(insert.getDest()));
  if (isa<tensor::ConcatOp, tensor::FromElementsOp>(op)) {
    FloatRange r = operand(0);
    for (unsigned i = 1; i < op->getNumOperands(); ++i)
      r = r.join(operand(i));
    return r;
  }
  if (isa<arith::SelectOp>(op))
    return select(op);
  if (isa<arith::AddFOp>(op))
    return add(operand(0), operand(1), t);
  if (isa<arith::SubFOp>(op))
    return add(operand(0), negate(operand(1)), t);
  if (isa<arith::MulFOp>(op))
    return mul(operand(0), operand(1), t);
  if (isa<arith::DivFOp>(op))
    return div(operand(0), operand(1), t);
  if (isa<arith::NegFOp>(op))
    return negate(operand(0));
  if (isa<math::AbsFOp>(op)) {
    FloatRange a = operand(0);
    if (!a.number || a.lo >= 0)
      return a;
    if (a.hi <= 0)
      return negate(a);
    return FloatRange::interval(0, std::max(-a.lo, a.hi), a.nan);
  }
  if (isa<arith::MaximumFOp>(op))
    return extremum(operand(0), operand(1), true, true);
  if (isa<arith::MinimumFOp>(op))
    return extremum(operand(0), operand(1), false, true);
  if (isa<arith::MaxNumFOp>(op))
    return extremum(operand(0), operand(1), true, false);
  if (isa<arith::MinNumFOp>(op))
    return extremum(operand(0), operand(1), false, false);
  if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
    FloatRange a = operand(0);
    if (!a.number)
      return a;
    return roundAll({a.lo, a.hi}, t, a.nan);
  }
  if (isa<arith::SIToFPOp, arith::UIToFPOp>(op)) {
    auto it = dyn_cast<IntegerType>(getElementTypeOrSelf(op->getOperand(0)));
    if (!it || it.getWidth() > 64)
      return FloatRange::top();
    double span = std::ldexp(1.0, it.getWidth() - 1);
    if (isa<arith::SIToFPOp>(op))
      return roundAll({-span, span - 1}, t, false);
    return roundAll({0, 2 * span - 1}, t, false);
  }
  if (isa<math::FloorOp, math::CeilOp, math::RoundOp, math::RoundEvenOp,
          math::TruncOp>(op)) {
    FloatRange a = operand(0);
    if (!a.number)
      return a;
    bool up = isa<math::CeilOp>(op);
    bool down = isa<math::FloorOp>(op);
    double lo = down ? std::floor(a.lo) : up ? std::ceil(a.lo) : std::floor(a.lo);
    double hi = down ? std::floor(a.hi) : up ? std::ceil(a.hi) : std::ceil(a.hi);
    return FloatRange::interval(lo, hi, a.nan);
  }
  // Increasing library functions, with the low end of their domain (below
  // it: NaN).
  struct Increasing {
    TypeID op;
    double (*f)(double);
    double domainLo;
  };
  static const Increasing kIncreasing[] = {
      {TypeID::get<math::ExpOp>(), [](double x) { return std::exp(x); }, -kInf},
      {TypeID::get<math::Exp2Op>(), [](double x) { return std::exp2(x); }, -kInf},
      {TypeID::get<math::TanhOp>(), [](double x) { return std::tanh(x); }, -kInf},
      {TypeID::get<math::ErfOp>(), [](double x) { return std::erf(x); }, -kInf},
      {TypeID::get<math::LogOp>(), [](double x) { return std::log(x); }, 0.0},
      {TypeID::get<math::Log2Op>(), [](double x) { return std::log2(x); }, 0.0},
      {TypeID::get<math::SqrtOp>(), [](double x) { return std::sqrt(x); }, 0.0},
  };
  for (const Increasing &e : kIncreasing)
    if (op->getName().getTypeID() == e.op)
      return increasing(operand(0), t, e.f, e.domainLo);
  if (auto pow = dyn_cast<math::PowFOp>(op)) {
    // 2^x, torch's exp2: a constant base above one.
    FloatRange base = operand(0);
    if (base.number && !base.nan && base.lo == base.hi && base.lo > 1) {
      double b = base.lo;
      return increasing(operand(1), t,
                        [b](double x) { return std::pow(b, x); }, -kInf);
    }
    return FloatRange::top();
  }
  return FloatRange::top();
}

FloatRange FloatRangeAnalysis::select(Operation *op) {
  auto sel = cast<arith::SelectOp>(op);
  std::optional<bool> cond = condition(sel.getCondition());
  auto branch = [&](Value v, bool holds) {
    FloatRange r = range(v);
    auto cmp = sel.getCondition().getDefiningOp<arith::CmpFOp>();
    if (!cmp)
      return r;
    FloatRange lhs = range(cmp.getLhs()), rhs = range(cmp.getRhs());
    auto isPoint = [](const FloatRange &x) {
      return x.number && !x.nan && x.lo == x.hi;
    };
    // A NaN test of the value itself: x != x (une), uno x, x; or its
    // negation (oeq, ord).
    if (cmp.getLhs() == cmp.getRhs() && v == cmp.getLhs()) {
      using P = arith::CmpFPredicate;
      P pred = cmp.getPredicate();
      bool isNaNTest = pred == P::UNE || pred == P::UNO;
      bool isNumberTest = pred == P::OEQ || pred == P::ORD;
      if (isNaNTest || isNumberTest) {
        if (holds == isNaNTest)
          r.number = false;
        else
          r.nan = false;
      }
      return r;
    }
    if (v == cmp.getLhs() && isPoint(rhs))
      return refine(r, cmp.getPredicate(), rhs.lo, holds);
    if (v == cmp.getRhs() && isPoint(lhs))
      return refine(r, swapped(cmp.getPredicate()), lhs.lo, holds);
    return r;
  };
  if (cond)
    return *cond ? branch(sel.getTrueValue(), true)
                 : branch(sel.getFalseValue(), false);
  return branch(sel.getTrueValue(), true)
      .join(branch(sel.getFalseValue(), false));
}

std::optional<bool> FloatRangeAnalysis::condition(Value v) {
  if (auto cst = v.getDefiningOp<arith::ConstantOp>())
    if (auto b = dyn_cast<BoolAttr>(cst.getValue()))
      return b.getValue();
  if (auto cst = v.getDefiningOp<arith::ConstantOp>())
    if (auto i = dyn_cast<IntegerAttr>(cst.getValue()))
      return i.getValue().getBoolValue();
  if (auto cmp = v.getDefiningOp<arith::CmpFOp>())
    return compare(cmp.getPredicate(), range(cmp.getLhs()),
                   range(cmp.getRhs()));
  if (auto andOp = v.getDefiningOp<arith::AndIOp>()) {
    std::optional<bool> a = condition(andOp.getLhs()),
                        b = condition(andOp.getRhs());
    if ((a && !*a) || (b && !*b))
      return false;
    if (a && b)
      return true;
    return std::nullopt;
  }
  if (auto orOp = v.getDefiningOp<arith::OrIOp>()) {
    std::optional<bool> a = condition(orOp.getLhs()),
                        b = condition(orOp.getRhs());
    if ((a && *a) || (b && *b))
      return true;
    if (a && b)
      return false;
    return std::nullopt;
  }
  return std::nullopt;
}

void FloatRangeAnalysis::forgetBody(Operation *generic) {
  generic->walk([&](Operation *inner) {
    for (Value r : inner->getResults())
      cache.erase(r);
  });
}

namespace {
/// A linalg op with a scalar body: linalg.generic, linalg.reduce,
/// linalg.map. Block arguments: the inputs' elements, then (generic,
/// reduce) the inits'.
struct BodyOp {
  Block *body = nullptr;
  SmallVector<Value> ins, inits;
  bool reduction = false;
  /// Every reduced extent is static and not zero: the result is at least
  /// one step of the body away from the init.
  bool nonEmpty = true;
};

std::optional<BodyOp> bodyOp(Operation *op) {
  BodyOp b;
  if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
    b.body = generic.getBody();
    b.ins = generic.getDpsInputs();
    b.inits = generic.getDpsInits();
    SmallVector<int64_t> loops = generic.getStaticLoopRanges();
    for (auto [dim, it] : llvm::enumerate(generic.getIteratorTypesArray()))
      if (it == utils::IteratorType::reduction) {
        b.reduction = true;
        b.nonEmpty &= !ShapedType::isDynamic(loops[dim]) && loops[dim] > 0;
      }
    return b;
  }
  if (auto reduce = dyn_cast<linalg::ReduceOp>(op)) {
    b.body = &reduce.getCombiner().front();
    b.ins = reduce.getInputs();
    b.inits = reduce.getInits();
    b.reduction = true;
    auto type = dyn_cast<ShapedType>(b.ins.front().getType());
    for (int64_t dim : reduce.getDimensions())
      b.nonEmpty &= type && type.hasRank() && !type.isDynamicDim(dim) &&
                    type.getDimSize(dim) > 0;
    return b;
  }
  if (auto map = dyn_cast<linalg::MapOp>(op)) {
    b.body = &map.getMapper().front();
    b.ins = map.getInputs();
    return b;
  }
  return std::nullopt;
}
} // namespace

SmallVector<FloatRange> FloatRangeAnalysis::yields(Operation *op) {
  forgetBody(op);
  SmallVector<FloatRange> out;
  for (Value y : bodyOp(op)->body->getTerminator()->getOperands())
    out.push_back(range(y));
  return out;
}

void FloatRangeAnalysis::bindBody(Operation *op) {
  std::optional<BodyOp> b = bodyOp(op);
  if (!b || b->body->getNumArguments() == 0 ||
      cache.count(b->body->getArgument(0)) || !inProgress.insert(op).second)
    return;
  auto bind = [&](unsigned i, const FloatRange &r) {
    if (i < b->body->getNumArguments())
      cache[b->body->getArgument(i)] = r;
  };
  unsigned numIns = b->ins.size();
  for (auto [i, in] : llvm::enumerate(b->ins))
    bind(i, range(in));
  SmallVector<FloatRange> init;
  for (Value out : b->inits)
    init.push_back(range(out));
  for (auto [k, r] : llvm::enumerate(init))
    bind(numIns + k, r);

  SmallVector<FloatRange> results = yields(op);
  if (b->reduction && results.size() == init.size()) {
    // Partial results: at least one step from the init, then steps from
    // partial results, until the ranges stop growing.
    bool stable = false;
    for (int iter = 0; iter < 16 && !stable; ++iter) {
      for (auto [k, r] : llvm::enumerate(init))
        bind(numIns + k, r.join(results[k]));
      SmallVector<FloatRange> next = yields(op);
      stable = true;
      for (auto [k, r] : llvm::enumerate(next)) {
        FloatRange grown = results[k].join(r);
        stable &= grown == results[k];
        results[k] = grown;
      }
    }
    if (!stable) {
      for (unsigned k = 0; k < init.size(); ++k) {
        results[k] = FloatRange::top();
        bind(numIns + k, FloatRange::top());
      }
      forgetBody(op);
    }
    // A reduction over an empty or unknown extent may return the init.
    if (!b->nonEmpty)
      for (auto [k, r] : llvm::enumerate(init))
        results[k] = results[k].join(r);
  }
  for (auto [k, r] : llvm::enumerate(results))
    if (k < op->getNumResults())
      cache[op->getResult(k)] = r;
  inProgress.erase(op);
}

FloatRange FloatRangeAnalysis::genericResult(Operation *op, unsigned index) {
  bindBody(op);
  auto it = cache.find(op->getResult(index));
  return it != cache.end() ? it->second : FloatRange::top();
}

bool FloatRangeAnalysis::alwaysHolds(Operation *op) {
  auto assertOp = dyn_cast<cf::AssertOp>(op);
  if (!assertOp)
    return false;
  Operation *parent = op->getParentOp();
  if (isa<linalg::GenericOp, linalg::ReduceOp, linalg::MapOp>(parent))
    bindBody(parent);
  std::optional<bool> holds = condition(assertOp.getArg());
  return holds && *holds;
}
