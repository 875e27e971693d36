//===- ActivationMatcher.cpp - recognise activations in linalg bodies -----===//
//
// A linalg.generic body is expanded into a canonical polynomial whose
// "atoms" are tensor leaves and exp / erf / sigmoid / step / recip / other
// functions of canonical polynomials. Two spellings of one activation give
// the same polynomial up to constants, so the matcher compares the body with
// the reference forms of runtime/common/activation.h instead of walking one
// op chain (the brittleness that made IREE delete its SiLU matcher,
// research/compiler.md §3.2). Rules that make the form canonical:
//
//  * a / c (constant c) is a * (1/c); a / m (m a monomial) uses negative
//    exponents; other divisions become recip(b), and recip(k + c*exp(q)) is
//    the sigmoid (1/k) * sigmoid(-(q + ln(c/k)));
//  * exp(c + q) = e^c * exp(q); sigmoid(-q) = 1 - sigmoid(q) and
//    erf(-q) = -erf(q) give arguments a positive leading coefficient;
//    exp(q) * sigmoid(q) = exp(q) - sigmoid(q), exp(-q) * sigmoid(q) =
//    1 - sigmoid(q); tanh(q) = 2 sigmoid(2q) - 1; erfc(q) = 1 - erf(q);
//  * comparisons become step functions: a > b is step(a - b), a >= b is
//    1 - step(b - a); select(c, t, f) = f + (t - f) * c; max(a, b) =
//    b + (a - b) * step(a - b) with the operands ordered canonically; the
//    step argument is scaled so its leading coefficient is +-1, step^n = step;
//  * extf / truncf are looked through (the rounding the graph applies to the
//    activation result is kept separately, as the fused op's intermediate
//    type).
//
// NaN-only differences are ignored (a select-based relu maps NaN to 0, the
// runtime's relu propagates it; docs/passes.md). Every match is confirmed by
// evaluating the body in double precision at sample points against the
// runtime's formula (agreesNumerically), and the clamped SwiGLU, whose
// canonical form depends on how its clamps are spelled, is recognised by
// reading its parameters off the atoms and checking numerically.
//
// The gated backward form is [dgate | dup] (a tensor.concat, or two
// tensor.insert_slice into one [.., 2K] tensor) of two generics
// [act'(gate) * grad * up | act(gate) * grad] (matchGatedBackward).
//
//===----------------------------------------------------------------------===//
#include "fusion/Analysis/ActivationMatcher.h"
#include "common/activation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace mlir::fusion;

namespace {

//===----------------------------------------------------------------------===//
// Canonical polynomials over atoms
//===----------------------------------------------------------------------===//

using AtomId = unsigned;
/// Sorted (atom, exponent) pairs; the empty monomial is the constant 1.
using Monomial = SmallVector<std::pair<AtomId, int>, 4>;
struct Term {
  Monomial mono;
  double coef;
};
/// Terms sorted by monomial, no two equal monomials, no zero coefficient.
using Poly = SmallVector<Term, 4>;

enum class AtomKind : uint8_t { Leaf, Exp, Erf, Sigmoid, Recip, Step, Func };

/// Bit of an atom kind in a "which functions occur" mask.
unsigned kindBit(AtomKind k) { return 1u << static_cast<unsigned>(k); }

struct Atom {
  AtomKind kind;
  /// Leaf: the opaque pointer of the Value; Func: the op name.
  const void *key;
  Poly arg;
};

/// Relative tolerance of constant comparisons (torch-mlir's tanh-GELU
/// constant is 2e-4 away from sqrt(2/pi)).
constexpr double kRelTol = 1e-3;
/// Polynomials larger than this are not activations.
constexpr size_t kMaxTerms = 256;

/// The tolerance in force: kRelTol, or kLooseRelTol while matchActivation
/// looks for a near miss to name in its remark.
constexpr double kLooseRelTol = 1e-2;
thread_local double gRelTol = kRelTol;

/// A frontend that computes in bf16 writes its constants rounded to bf16
/// (torch-mlir's tanh-GELU: 0.796875 for sqrt(2/pi), 1.3e-3 off): each is
/// within 2^-9 (relative) of the exact one, and a coefficient of the
/// canonical form multiplies at most two of them (c1 * c2 of GELU's
/// x^3 term), so a body with bf16 constants is compared within 4e-3. Such a
/// body computes in bf16 and is fused like any body that rounds inside
/// (the fused op computes in f32 with the exact constants, the more
/// accurate result; `strict-rounding` declines it).
constexpr double kBf16RelTol = 4e-3;

/// Raises the tolerance in force to `tol` for a scope (never lowers it:
/// the near-miss search's loose tolerance stays).
struct ScopedTolerance {
  double saved;
  explicit ScopedTolerance(double tol) : saved(gRelTol) {
    gRelTol = std::max(gRelTol, tol);
  }
  ~ScopedTolerance() { gRelTol = saved; }
};

/// kBf16RelTol if a body of `generics` reads a bf16 constant (defined in the
/// body or captured from outside it), else kRelTol.
double bodyTolerance(ArrayRef<linalg::GenericOp> generics) {
  for (linalg::GenericOp g : generics) {
    if (!g)
      continue;
    WalkResult r = g.getBody()->walk([&](Operation *op) {
      for (Value v : op->getOperands()) {
        FloatAttr c;
        if (matchPattern(v, m_Constant(&c)) && c.getType().isBF16())
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      return kBf16RelTol;
  }
  return kRelTol;
}

bool close(double a, double b) {
  double d = std::fabs(a - b);
  return d <= 1e-9 || d <= gRelTol * std::max(std::fabs(a), std::fabs(b));
}

bool polyClose(const Poly &a, const Poly &b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip(a, b))
    if (x.mono != y.mono || !close(x.coef, y.coef))
      return false;
  return true;
}

bool monoLess(const Monomial &a, const Monomial &b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

/// The polynomial algebra of one candidate: atoms are interned so that equal
/// (within tolerance) functions of equal arguments get one id.
class Algebra {
public:
  bool overflow = false;

  const Atom &atom(AtomId id) const { return atoms[id]; }
  size_t numAtoms() const { return atoms.size(); }

  std::optional<AtomId> find(AtomKind kind, const void *key,
                             const Poly &arg) const {
    for (auto [i, a] : llvm::enumerate(atoms))
      if (a.kind == kind && a.key == key && polyClose(a.arg, arg))
        return static_cast<AtomId>(i);
    return std::nullopt;
  }

  AtomId intern(AtomKind kind, const void *key, Poly arg) {
    if (std::optional<AtomId> id = find(kind, key, arg))
      return *id;
    atoms.push_back(Atom{kind, key, std::move(arg)});
    return atoms.size() - 1;
  }

  static Poly constant(double c) {
    Poly p;
    if (c != 0.0)
      p.push_back(Term{{}, c});
    return p;
  }

  Poly atomPoly(AtomId id) { return Poly{Term{Monomial{{id, 1}}, 1.0}}; }

  Poly leaf(const void *key) {
    return atomPoly(intern(AtomKind::Leaf, key, Poly()));
  }

  static std::optional<double> getConstant(const Poly &p) {
    if (p.empty())
      return 0.0;
    if (p.size() == 1 && p[0].mono.empty())
      return p[0].coef;
    return std::nullopt;
  }

  void normalize(Poly &p) {
    expandExpSigmoid(p);
    llvm::stable_sort(p, [](const Term &a, const Term &b) {
      return monoLess(a.mono, b.mono);
    });
    Poly out;
    for (Term &t : p) {
      if (!out.empty() && out.back().mono == t.mono)
        out.back().coef += t.coef;
      else
        out.push_back(std::move(t));
    }
    double maxAbs = 0;
    for (const Term &t : out)
      maxAbs = std::max(maxAbs, std::fabs(t.coef));
    llvm::erase_if(out, [&](const Term &t) {
      return t.coef == 0.0 || std::fabs(t.coef) <= 1e-7 * maxAbs;
    });
    if (out.size() > kMaxTerms)
      overflow = true;
    p = std::move(out);
  }

  Poly add(const Poly &a, const Poly &b) {
    Poly r(a);
    r.append(b.begin(), b.end());
    normalize(r);
    return r;
  }

  Poly scale(const Poly &a, double k) {
    Poly r(a);
    for (Term &t : r)
      t.coef *= k;
    normalize(r);
    return r;
  }

  Poly sub(const Poly &a, const Poly &b) { return add(a, scale(b, -1.0)); }

  Poly mul(const Poly &a, const Poly &b) {
    Poly r;
    if (a.size() * b.size() > 4 * kMaxTerms) {
      overflow = true;
      return r;
    }
    for (const Term &x : a)
      for (const Term &y : b)
        r.push_back(Term{mulMono(x.mono, y.mono), x.coef * y.coef});
    normalize(r);
    return r;
  }

  Poly pow(const Poly &a, int64_t n) {
    if (n < 0)
      return recip(pow(a, -n));
    Poly r = constant(1.0);
    for (int64_t i = 0; i < n && !overflow; ++i)
      r = mul(r, a);
    return r;
  }

  /// The leading coefficient of the first non-constant term (0 if none).
  static double leadCoef(const Poly &p) {
    for (const Term &t : p)
      if (!t.mono.empty())
        return t.coef;
    return 0.0;
  }

  /// step(p) = 1 if p > 0 else 0.
  Poly step(const Poly &p) {
    if (std::optional<double> c = getConstant(p))
      return constant(*c > 0 ? 1.0 : 0.0);
    // step(k q step(q)), a comparison of max(q, 0) scaled by k (torch's
    // threshold_backward masks on relu(x) <= 0): q step(q) > 0 exactly
    // where q > 0, and it is never negative.
    if (std::optional<std::pair<AtomId, double>> s = stepFactor(p))
      return s->second > 0 ? atomPoly(s->first) : constant(0.0);
    double lead = std::fabs(leadCoef(p));
    return atomPoly(intern(AtomKind::Step, nullptr, scale(p, 1.0 / lead)));
  }

  /// (S, k) if `p` = k * arg(S) * S for a step atom S.
  std::optional<std::pair<AtomId, double>> stepFactor(const Poly &p) {
    if (p.empty())
      return std::nullopt;
    for (auto [id, e] : p.front().mono) {
      if (atoms[id].kind != AtomKind::Step || e != 1)
        continue;
      Poly rest;
      bool everyTerm = true;
      for (const Term &t : p) {
        Monomial m;
        bool has = false;
        for (auto f : t.mono) {
          if (f.first == id && f.second == 1)
            has = true;
          else
            m.push_back(f);
        }
        everyTerm &= has;
        rest.push_back(Term{m, t.coef});
      }
      if (!everyTerm)
        continue;
      normalize(rest);
      Poly q = atoms[id].arg;
      double lq = leadCoef(q), lr = leadCoef(rest);
      if (lq == 0.0 || lr == 0.0)
        continue;
      if (polyClose(rest, scale(q, lr / lq)))
        return std::make_pair(id, lr / lq);
    }
    return std::nullopt;
  }

  Poly exp(const Poly &p) {
    if (std::optional<double> c = getConstant(p))
      return constant(std::exp(*c));
    // exp(c + q) = e^c * exp(q).
    double c0 = 0;
    Poly q;
    for (const Term &t : p) {
      if (t.mono.empty())
        c0 = t.coef;
      else
        q.push_back(t);
    }
    return scale(atomPoly(intern(AtomKind::Exp, nullptr, q)), std::exp(c0));
  }

  /// sigmoid(-q) = 1 - sigmoid(q) makes the leading coefficient of the
  /// argument positive, so `1 - sigmoid(-x)` is sigmoid(x).
  Poly sigmoid(const Poly &p) {
    if (std::optional<double> c = getConstant(p))
      return constant(1.0 / (1.0 + std::exp(-*c)));
    if (leadCoef(p) < 0)
      return sub(constant(1.0), sigmoid(scale(p, -1.0)));
    return atomPoly(intern(AtomKind::Sigmoid, nullptr, p));
  }

  /// tanh(q) = 2 sigmoid(2q) - 1: one canonical form for the tanh and the
  /// sigmoid spellings (gelu_tanh as x*sigmoid(2k(x + c x^3)), sigmoid as
  /// 0.5 + 0.5 tanh(x/2)).
  Poly tanh(const Poly &p) {
    if (std::optional<double> c = getConstant(p))
      return constant(std::tanh(*c));
    return sub(scale(sigmoid(scale(p, 2.0)), 2.0), constant(1.0));
  }

  /// erf is odd: erf(p) = -erf(-p) makes the leading coefficient positive
  /// (so erfc(-x/sqrt2) = 1 + erf(x/sqrt2)).
  Poly erf(const Poly &p) {
    if (std::optional<double> c = getConstant(p))
      return constant(std::erf(*c));
    if (leadCoef(p) < 0)
      return scale(erf(scale(p, -1.0)), -1.0);
    return atomPoly(intern(AtomKind::Erf, nullptr, p));
  }

  /// An unknown function of `p` (sqrt, log, abs, ...), folded on constants.
  Poly func(const void *name, const Poly &p,
            llvm::function_ref<double(double)> fold) {
    if (std::optional<double> c = getConstant(p))
      return constant(fold(*c));
    return atomPoly(intern(AtomKind::Func, name, p));
  }

  Poly recip(const Poly &b) {
    if (std::optional<double> c = getConstant(b))
      return constant(*c == 0.0 ? INFINITY : 1.0 / *c);
    // A single monomial without step atoms: negate the exponents.
    if (b.size() == 1 && llvm::none_of(b[0].mono, [&](auto f) {
          return atoms[f.first].kind == AtomKind::Step;
        })) {
      Term t = b[0];
      t.coef = 1.0 / t.coef;
      for (auto &f : t.mono)
        f.second = -f.second;
      return Poly{t};
    }
    // k + c*exp(q) with k, c > 0: (1/k) * sigmoid(-(q + ln(c/k))).
    if (b.size() == 2 && b[0].mono.empty() && b[1].mono.size() == 1 &&
        b[1].mono[0].second == 1 &&
        atoms[b[1].mono[0].first].kind == AtomKind::Exp && b[0].coef > 0 &&
        b[1].coef > 0) {
      double k = b[0].coef, c = b[1].coef;
      Poly q = atoms[b[1].mono[0].first].arg;
      Poly arg = scale(add(q, constant(std::log(c / k))), -1.0);
      return scale(sigmoid(arg), 1.0 / k);
    }
    return atomPoly(intern(AtomKind::Recip, nullptr, b));
  }

  /// max(a, b) = b + (a - b) * step(a - b), a and b ordered so that the
  /// difference has a positive leading coefficient.
  Poly max(const Poly &a, const Poly &b) {
    Poly d = sub(a, b);
    if (std::optional<double> c = getConstant(d))
      return *c > 0 ? a : b;
    if (leadCoef(d) < 0)
      return max(b, a);
    return add(b, mul(d, step(d)));
  }

  Poly min(const Poly &a, const Poly &b) {
    return scale(max(scale(a, -1.0), scale(b, -1.0)), -1.0);
  }

  /// Which atom kinds occur in `p`, arguments included.
  unsigned kindMask(const Poly &p) const {
    unsigned m = 0;
    for (const Term &t : p)
      for (auto f : t.mono) {
        m |= kindBit(atoms[f.first].kind);
        m |= kindMask(atoms[f.first].arg);
      }
    return m;
  }

private:
  std::vector<Atom> atoms;

  /// With sigmoid arguments of positive leading coefficient, a product of
  /// exp and sigmoid of one argument is rewritten term by term:
  ///   exp(q) * sigmoid(q)  = exp(q) - sigmoid(q)
  ///   exp(-q) * sigmoid(q) = 1 - sigmoid(q)
  /// (so exp(x) / (1 + exp(x)) = exp(x) * (1 - sigmoid(x)) is sigmoid(x)).
  /// Each step lowers the exp exponent of the terms it produces.
  void expandExpSigmoid(Poly &p) {
    for (size_t i = 0; i < p.size(); ++i) {
      Monomial &m = p[i].mono;
      std::optional<size_t> ePos, sPos;
      bool sameSign = false;
      for (size_t e = 0; e < m.size() && !ePos; ++e) {
        if (atoms[m[e].first].kind != AtomKind::Exp || m[e].second < 1)
          continue;
        const Poly &q = atoms[m[e].first].arg;
        Poly negQ = q;
        for (Term &t : negQ)
          t.coef = -t.coef;
        for (size_t s = 0; s < m.size(); ++s) {
          if (atoms[m[s].first].kind != AtomKind::Sigmoid || m[s].second < 1)
            continue;
          const Poly &arg = atoms[m[s].first].arg;
          if (polyClose(arg, q) || polyClose(arg, negQ)) {
            ePos = e;
            sPos = s;
            sameSign = polyClose(arg, q);
            break;
          }
        }
      }
      if (!ePos)
        continue;
      auto lowered = [](Monomial mono, size_t pos) {
        if (--mono[pos].second == 0)
          mono.erase(mono.begin() + pos);
        return mono;
      };
      double c = p[i].coef;
      Monomial noExp = lowered(m, *ePos);
      // sameSign: c*M*exp*sig -> c*M*exp - c*M*sig (M*exp = m without sig).
      // otherwise: c*M*exp*sig -> c*M - c*M*sig (M = m without exp and sig).
      Monomial first =
          sameSign
              ? lowered(m, *sPos)
              : lowered(noExp, *sPos - (*sPos > *ePos && m[*ePos].second == 1));
      p[i] = Term{std::move(first), c};
      p.push_back(Term{std::move(noExp), -c});
      --i; // the rewritten term may hold another pair
    }
  }

  Monomial mulMono(const Monomial &a, const Monomial &b) {
    Monomial r;
    size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
      if (j == b.size() || (i < a.size() && a[i].first < b[j].first)) {
        r.push_back(a[i++]);
      } else if (i == a.size() || b[j].first < a[i].first) {
        r.push_back(b[j++]);
      } else {
        int e = a[i].second + b[j].second;
        if (atoms[a[i].first].kind == AtomKind::Step)
          e = e > 0 ? 1 : e; // step^n = step
        if (e != 0)
          r.push_back({a[i].first, e});
        ++i;
        ++j;
      }
    }
    return r;
  }
};

//===----------------------------------------------------------------------===//
// From a linalg.generic body to a polynomial
//===----------------------------------------------------------------------===//

/// The scalar value a tensor holds everywhere, if it is a splat constant or
/// a linalg.fill of a constant.
std::optional<double> getSplatValue(Value tensor) {
  if (auto cst = tensor.getDefiningOp<arith::ConstantOp>()) {
    if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue()))
      if (dense.isSplat() && isa<FloatType>(dense.getElementType()))
        return dense.getSplatValue<APFloat>().convertToDouble();
    return std::nullopt;
  }
  if (auto fill = tensor.getDefiningOp<linalg::FillOp>()) {
    FloatAttr f;
    if (matchPattern(fill.getInputs()[0], m_Constant(&f)))
      return f.getValueAsDouble();
  }
  return std::nullopt;
}

Value stripCasts(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (!isa<arith::ExtFOp, arith::TruncFOp>(op))
      break;
    v = op->getOperand(0);
  }
  return v;
}

/// The one interpreter of a generic's scalar body. It walks the body's ops
/// once, and a Domain gives them their meaning: polynomials in the canonical
/// form (PolyDomain, the matcher's algebra) or numbers in double precision
/// (NumDomain, the numeric cross-check), so the two opinions on what a body
/// computes read the same ops the same way. A Domain provides `Val`,
/// `normalize(Value)` (values taken as the same before the memo),
/// `bound(Value)` (a value the caller binds: a hypothesis, a leaf),
/// `outside(Value)` (a value defined outside the body, or nullopt to
/// interpret its op), `input(arg, operand)` (a body argument of a non-splat
/// input), `error()` (a failure of the domain itself), one method per op,
/// and which powers it takes (`takesPower`, `kVariablePower`).
template <typename Domain>
class BodyInterpreter {
public:
  using Val = typename Domain::Val;
  BodyInterpreter(linalg::GenericOp generic, Domain domain)
      : generic(generic), d(std::move(domain)) {}

  /// Why the body cannot be interpreted, independent of the bindings (an
  /// op the domain does not know); empty when the interpretation worked.
  std::string unsupported;

  std::optional<Val> eval(Value v) {
    v = d.normalize(v);
    auto it = memo.find(v);
    if (it != memo.end())
      return it->second;
    std::optional<Val> r = evalUncached(v);
    if (std::optional<std::string> err = d.error()) {
      unsupported = *err;
      return std::nullopt;
    }
    if (r)
      memo[v] = *r;
    return r;
  }

private:
  linalg::GenericOp generic;
  Domain d;
  DenseMap<Value, Val> memo;

  std::optional<Val> fail(Operation *op, StringRef why = "") {
    if (unsupported.empty())
      unsupported = ("the body uses '" + op->getName().getStringRef() + "'" +
                     (why.empty() ? "" : " " + why))
                        .str();
    return std::nullopt;
  }

  std::optional<Val> blockArg(BlockArgument arg) {
    if (arg.getOwner() != generic.getBody())
      return d.outside(arg);
    unsigned idx = arg.getArgNumber();
    if (idx >= generic.getNumDpsInputs()) {
      unsupported = "the body reads its output operand";
      return std::nullopt;
    }
    OpOperand *operand = generic.getDpsInputOperand(idx);
    if (std::optional<double> c = getSplatValue(operand->get()))
      return d.constant(*c);
    return d.input(arg, operand);
  }

  /// A comparison (0 or 1 in the domain); equality predicates are not
  /// taken (the polynomial form has no equality step).
  std::optional<Val> cmp(arith::CmpFOp c) {
    std::optional<Val> a = eval(c.getLhs());
    std::optional<Val> b = a ? eval(c.getRhs()) : std::nullopt;
    if (!b)
      return std::nullopt;
    using P = arith::CmpFPredicate;
    switch (c.getPredicate()) {
    case P::OGT:
    case P::UGT:
      return d.greater(*a, *b);
    case P::OLT:
    case P::ULT:
      return d.greater(*b, *a);
    case P::OGE:
    case P::UGE:
      return d.greaterEqual(*a, *b);
    case P::OLE:
    case P::ULE:
      return d.greaterEqual(*b, *a);
    default:
      return fail(c, "with an equality predicate");
    }
  }

  std::optional<Val> evalUncached(Value v) {
    if (std::optional<Val> b = d.bound(v))
      return b;
    if (auto arg = dyn_cast<BlockArgument>(v))
      return blockArg(arg);
    Operation *op = v.getDefiningOp();
    FloatAttr fa;
    if (matchPattern(v, m_Constant(&fa)))
      return d.constant(fa.getValueAsDouble());
    if (op->getBlock() != generic.getBody())
      if (std::optional<Val> o = d.outside(v))
        return o;

    auto unary = [&](auto fn) -> std::optional<Val> {
      std::optional<Val> a = eval(op->getOperand(0));
      if (!a)
        return std::nullopt;
      return fn(*a);
    };
    auto binary = [&](auto fn) -> std::optional<Val> {
      std::optional<Val> a = eval(op->getOperand(0));
      if (!a)
        return std::nullopt;
      std::optional<Val> b = eval(op->getOperand(1));
      if (!b)
        return std::nullopt;
      return fn(*a, *b);
    };
    const void *name = op->getName().getAsOpaquePointer();

    if (isa<arith::ExtFOp, arith::TruncFOp>(op))
      return eval(op->getOperand(0));
    if (isa<arith::AddFOp>(op))
      return binary([&](auto &a, auto &b) { return d.add(a, b); });
    if (isa<arith::SubFOp>(op))
      return binary([&](auto &a, auto &b) { return d.sub(a, b); });
    if (isa<arith::MulFOp>(op))
      return binary([&](auto &a, auto &b) { return d.mul(a, b); });
    if (isa<arith::DivFOp>(op))
      return binary([&](auto &a, auto &b) { return d.div(a, b); });
    if (isa<arith::NegFOp>(op))
      return unary([&](auto &a) { return d.neg(a); });
    if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
      return binary([&](auto &a, auto &b) { return d.max(a, b); });
    if (isa<arith::MinimumFOp, arith::MinNumFOp>(op))
      return binary([&](auto &a, auto &b) { return d.min(a, b); });
    if (auto sel = dyn_cast<arith::SelectOp>(op)) {
      auto c = sel.getCondition().getDefiningOp<arith::CmpFOp>();
      if (!c)
        return fail(op, "on a condition that is not an arith.cmpf");
      std::optional<Val> k = cmp(c);
      std::optional<Val> t = k ? eval(sel.getTrueValue()) : std::nullopt;
      std::optional<Val> f = t ? eval(sel.getFalseValue()) : std::nullopt;
      if (!f)
        return std::nullopt;
      return d.select(*k, *t, *f);
    }
    if (auto c = dyn_cast<arith::CmpFOp>(op))
      return cmp(c);
    if (auto toFp = dyn_cast<arith::UIToFPOp>(op)) {
      if (auto c = toFp.getIn().getDefiningOp<arith::CmpFOp>())
        return cmp(c);
      return fail(op, "on a value that is not an arith.cmpf");
    }
    if (isa<math::ExpOp>(op))
      return unary([&](auto &a) { return d.exp(a); });
    if (isa<math::Exp2Op>(op))
      return unary([&](auto &a) { return d.exp2(a); });
    if (isa<math::ExpM1Op>(op))
      return unary([&](auto &a) { return d.expm1(a); });
    if (isa<math::TanhOp>(op))
      return unary([&](auto &a) { return d.tanh(a); });
    if (isa<math::ErfOp>(op))
      return unary([&](auto &a) { return d.erf(a); });
    if (isa<math::ErfcOp>(op)) // jax.nn.gelu(approximate=False)
      return unary([&](auto &a) { return d.erfc(a); });
    if (isa<math::SqrtOp>(op))
      return unary([&](auto &a) {
        return d.func(name, a, [](double x) { return std::sqrt(x); });
      });
    if (isa<math::RsqrtOp>(op))
      return unary([&](auto &a) {
        return d.func(name, a, [](double x) { return 1.0 / std::sqrt(x); });
      });
    if (isa<math::LogOp>(op))
      return unary([&](auto &a) {
        return d.func(name, a, [](double x) { return std::log(x); });
      });
    if (isa<math::Log1pOp>(op))
      return unary([&](auto &a) {
        return d.func(name, a, [](double x) { return std::log1p(x); });
      });
    if (isa<math::AbsFOp>(op))
      return unary([&](auto &a) {
        return d.func(name, a, [](double x) { return std::fabs(x); });
      });
    // Powers: the exponent is checked before the base is read.
    if (auto powi = dyn_cast<math::FPowIOp>(op)) {
      APInt n;
      if (!matchPattern(powi.getRhs(), m_ConstantInt(&n)) ||
          !d.takesPower(double(n.getSExtValue())))
        return fail(op, "with a non-constant or large exponent");
      return unary([&](auto &a) { return d.pow(a, double(n.getSExtValue())); });
    }
    if (auto powf = dyn_cast<math::PowFOp>(op)) {
      FloatAttr e;
      if (matchPattern(powf.getRhs(), m_Constant(&e))) {
        double k = e.getValueAsDouble();
        if (d.takesPower(k))
          return unary([&](auto &a) { return d.pow(a, k); });
      } else if constexpr (Domain::kVariablePower) {
        return binary([&](auto &a, auto &b) { return d.pow(a, b); });
      }
      return fail(op, "with a non-integer exponent");
    }
    return fail(op);
  }
};

/// The canonical form: a body as a polynomial of the Algebra, with
/// `hypothesis` (a tensor input or a scalar computed in the body) as the
/// leaf x. Casts are looked through (the canonical form is real-valued).
struct PolyDomain {
  using Val = Poly;
  Algebra &alg;
  Value hypothesis;

  Value normalize(Value v) const { return stripCasts(v); }
  std::optional<Poly> bound(Value v) {
    if (hypothesis && v == hypothesis)
      return alg.leaf(v.getAsOpaquePointer());
    return std::nullopt;
  }
  std::optional<Poly> outside(Value v) {
    return alg.leaf(v.getAsOpaquePointer());
  }
  std::optional<Poly> input(BlockArgument arg, OpOperand *operand) {
    // An input read with the identity map is the tensor itself (the same
    // leaf wherever it is read); otherwise the element this body reads.
    auto generic = cast<linalg::GenericOp>(operand->getOwner());
    if (generic.getMatchingIndexingMap(operand).isIdentity())
      return alg.leaf(operand->get().getAsOpaquePointer());
    return alg.leaf(arg.getAsOpaquePointer());
  }
  std::optional<std::string> error() const {
    if (alg.overflow)
      return std::string("the expression is too large");
    return std::nullopt;
  }
  Poly constant(double c) { return Algebra::constant(c); }
  Poly add(const Poly &a, const Poly &b) { return alg.add(a, b); }
  Poly sub(const Poly &a, const Poly &b) { return alg.sub(a, b); }
  Poly mul(const Poly &a, const Poly &b) { return alg.mul(a, b); }
  Poly div(const Poly &a, const Poly &b) { return alg.mul(a, alg.recip(b)); }
  Poly neg(const Poly &a) { return alg.scale(a, -1.0); }
  Poly max(const Poly &a, const Poly &b) { return alg.max(a, b); }
  Poly min(const Poly &a, const Poly &b) { return alg.min(a, b); }
  /// a > b as a 0/1 step; a >= b as 1 - [b > a].
  Poly greater(const Poly &a, const Poly &b) { return alg.step(alg.sub(a, b)); }
  Poly greaterEqual(const Poly &a, const Poly &b) {
    return alg.sub(Algebra::constant(1), alg.step(alg.sub(b, a)));
  }
  Poly select(const Poly &c, const Poly &t, const Poly &f) {
    return alg.add(f, alg.mul(alg.sub(t, f), c));
  }
  Poly exp(const Poly &a) { return alg.exp(a); }
  Poly exp2(const Poly &a) { return alg.exp(alg.scale(a, M_LN2)); }
  Poly expm1(const Poly &a) {
    return alg.sub(alg.exp(a), Algebra::constant(1.0));
  }
  Poly tanh(const Poly &a) { return alg.tanh(a); }
  Poly erf(const Poly &a) { return alg.erf(a); }
  Poly erfc(const Poly &a) {
    return alg.sub(Algebra::constant(1.0), alg.erf(a));
  }
  template <typename Fn>
  Poly func(const void *name, const Poly &a, Fn fn) {
    return alg.func(name, a, fn);
  }
  /// Integer powers up to 8 expand; others are not polynomials here.
  static constexpr bool kVariablePower = false;
  bool takesPower(double e) const {
    return e == std::round(e) && std::fabs(e) <= 8;
  }
  Poly pow(const Poly &a, double e) {
    return alg.pow(a, static_cast<int64_t>(e));
  }
};

/// Expands the body of `generic` into a polynomial, with `hypothesis` (a
/// tensor input or a scalar computed in the body) as the leaf x.
class BodyExpander : public BodyInterpreter<PolyDomain> {
public:
  BodyExpander(linalg::GenericOp generic, Algebra &alg, Value hypothesis)
      : BodyInterpreter(generic, PolyDomain{alg, hypothesis}) {}
  std::optional<Poly> expand(Value v) { return eval(v); }
};

//===----------------------------------------------------------------------===//
// Reference forms (runtime/common/activation.h)
//===----------------------------------------------------------------------===//

constexpr double kSqrt2OverPi = 0.7978845608028654; // sqrt(2/pi)
constexpr double kGeluCubic = 0.044715;
constexpr double kInvSqrt2 = 0.7071067811865476;
constexpr double kInvSqrt2Pi = 0.3989422804014327;
constexpr double kQGeluAlpha = 1.702;

struct RefBuilder {
  Algebra &A;
  Poly x;

  Poly c(double v) { return Algebra::constant(v); }
  Poly geluTanhArg() {
    return A.add(A.scale(x, kSqrt2OverPi),
                 A.scale(A.pow(x, 3), kSqrt2OverPi * kGeluCubic));
  }
  Poly relu() { return A.mul(x, A.step(x)); }
  Poly reluGe() { return A.sub(x, A.mul(x, A.step(A.scale(x, -1)))); }
  Poly srelu() { return A.mul(A.pow(x, 2), A.step(x)); }
  Poly sreluGe() {
    Poly x2 = A.pow(x, 2);
    return A.sub(x2, A.mul(x2, A.step(A.scale(x, -1))));
  }
  Poly geluErf() {
    Poly half = A.scale(x, 0.5);
    return A.add(half, A.mul(half, A.erf(A.scale(x, kInvSqrt2))));
  }
  Poly geluTanh() {
    Poly half = A.scale(x, 0.5);
    return A.add(half, A.mul(half, A.tanh(geluTanhArg())));
  }
  Poly sigmoidGated(double alpha) {
    return A.mul(x, A.sigmoid(A.scale(x, alpha)));
  }
  Poly dRelu() { return A.step(x); }
  Poly dSrelu() { return A.mul(A.scale(x, 2.0), A.step(x)); }
  Poly dGeluErf() {
    Poly cdf = A.add(c(0.5), A.scale(A.erf(A.scale(x, kInvSqrt2)), 0.5));
    Poly pdf = A.scale(A.exp(A.scale(A.pow(x, 2), -0.5)), kInvSqrt2Pi);
    return A.add(cdf, A.mul(x, pdf));
  }
  Poly dGeluTanh() {
    Poly t = A.tanh(geluTanhArg());
    Poly left = A.add(c(0.5), A.scale(t, 0.5));
    Poly sech2 = A.sub(c(1.0), A.mul(t, t));
    Poly inner = A.add(c(kSqrt2OverPi),
                       A.scale(A.pow(x, 2), 3 * kSqrt2OverPi * kGeluCubic));
    return A.add(left, A.mul(A.scale(x, 0.5), A.mul(sech2, inner)));
  }
  Poly dSigmoidGated(double alpha) {
    Poly s = A.sigmoid(A.scale(x, alpha));
    Poly ax = A.scale(x, alpha);
    return A.add(s, A.mul(ax, A.sub(s, A.mul(s, s))));
  }
};

/// Slopes `alpha` of the sigmoid(alpha * x) atoms that occur in `p`.
SmallVector<double> sigmoidSlopes(const Algebra &A, const Poly &p, AtomId x) {
  SmallVector<double> slopes;
  for (const Term &t : p)
    for (auto f : t.mono) {
      const Atom &a = A.atom(f.first);
      if (a.kind != AtomKind::Sigmoid || a.arg.size() != 1)
        continue;
      const Term &arg = a.arg[0];
      if (arg.mono.size() == 1 && arg.mono[0] == std::make_pair(x, 1) &&
          !llvm::any_of(slopes, [&](double s) { return close(s, arg.coef); }))
        slopes.push_back(arg.coef);
    }
  return slopes;
}

struct KindMatch {
  ActivationKind kind;
  std::optional<double> alpha;
};

/// The sigmoid-family kind for a slope: silu (1), the default qgelu (1.702)
/// or qgelu with an explicit alpha.
/// The slope is a parameter of qgelu, so it is kept exactly rather than
/// snapped to the nearest known kind within the constant tolerance.
KindMatch sigmoidFamily(double alpha, ActivationKind silu,
                        ActivationKind qgelu) {
  auto same = [](double a, double b) {
    return std::fabs(a - b) <= 1e-6 * std::fabs(b);
  };
  if (same(alpha, 1.0))
    return {silu, std::nullopt};
  if (same(alpha, kQGeluAlpha))
    return {qgelu, std::nullopt};
  return {qgelu, alpha};
}

/// Forward non-gated forms of `p` in terms of leaf `x`.
std::optional<KindMatch> matchForward(Algebra &A, const Poly &p, AtomId x,
                                      bool gated) {
  RefBuilder R{A, A.atomPoly(x)};
  unsigned fnMask = A.kindMask(p) & ~kindBit(AtomKind::Leaf);
  if (fnMask == kindBit(AtomKind::Step)) {
    if (polyClose(p, R.relu()) || polyClose(p, R.reluGe()))
      return KindMatch{gated ? ActivationKind::reglu : ActivationKind::relu,
                       std::nullopt};
    if (polyClose(p, R.srelu()) || polyClose(p, R.sreluGe()))
      return KindMatch{gated ? ActivationKind::sreglu : ActivationKind::srelu,
                       std::nullopt};
  }
  if (fnMask == kindBit(AtomKind::Erf) && polyClose(p, R.geluErf()))
    return KindMatch{gated ? ActivationKind::geglu_erf : ActivationKind::gelu,
                     std::nullopt};
  ActivationKind geluTanh =
      gated ? ActivationKind::geglu : ActivationKind::gelu_tanh;
  if (fnMask == kindBit(AtomKind::Sigmoid)) {
    if (polyClose(p, R.geluTanh()))
      return KindMatch{geluTanh, std::nullopt};
    for (double alpha : sigmoidSlopes(A, p, x))
      if (polyClose(p, R.sigmoidGated(alpha)))
        return gated ? sigmoidFamily(alpha, ActivationKind::swiglu,
                                     ActivationKind::qgeglu)
                     : sigmoidFamily(alpha, ActivationKind::silu,
                                     ActivationKind::qgelu);
  }
  return std::nullopt;
}

/// Derivative forms act'(x) of `q` (the backward value divided by grad).
std::optional<KindMatch> matchDerivative(Algebra &A, const Poly &q, AtomId x) {
  RefBuilder R{A, A.atomPoly(x)};
  unsigned fnMask = A.kindMask(q) & ~kindBit(AtomKind::Leaf);
  if (fnMask == kindBit(AtomKind::Step)) {
    if (polyClose(q, R.dRelu()))
      return KindMatch{ActivationKind::relu, std::nullopt};
    if (polyClose(q, R.dSrelu()))
      return KindMatch{ActivationKind::srelu, std::nullopt};
  }
  if (fnMask == (kindBit(AtomKind::Erf) | kindBit(AtomKind::Exp)) &&
      polyClose(q, R.dGeluErf()))
    return KindMatch{ActivationKind::gelu, std::nullopt};
  if (fnMask == kindBit(AtomKind::Sigmoid) && polyClose(q, R.dGeluTanh()))
    return KindMatch{ActivationKind::gelu_tanh, std::nullopt};
  if (fnMask == kindBit(AtomKind::Sigmoid))
    for (double alpha : sigmoidSlopes(A, q, x))
      if (polyClose(q, R.dSigmoidGated(alpha)))
        return sigmoidFamily(alpha, ActivationKind::silu,
                             ActivationKind::qgelu);
  return std::nullopt;
}

/// Leaves (other than `x`) that occur with exponent 1 in every term of `p`
/// and nowhere inside an atom's argument: candidates for grad or up.
SmallVector<AtomId> commonLinearLeaves(const Algebra &A, const Poly &p,
                                       AtomId x) {
  SmallVector<AtomId> result;
  if (p.empty())
    return result;
  for (auto f : p[0].mono) {
    if (f.first == x || f.second != 1 || A.atom(f.first).kind != AtomKind::Leaf)
      continue;
    bool everywhere = llvm::all_of(p, [&](const Term &t) {
      return llvm::is_contained(t.mono, std::make_pair(f.first, 1));
    });
    if (everywhere)
      result.push_back(f.first);
  }
  return result;
}

/// `p` with one power of `leaf` divided out of every term.
Poly divideLeaf(Algebra &A, const Poly &p, AtomId leaf) {
  Poly q;
  for (const Term &t : p) {
    Term u = t;
    llvm::erase_if(u.mono, [&](auto f) { return f.first == leaf; });
    q.push_back(std::move(u));
  }
  A.normalize(q);
  return q;
}

bool isSupportedFloat(Type t) { return isa<FloatType>(t); }

/// The tensor that a leaf atom stands for, if it is an identity-mapped input
/// of the generic.
Value leafTensor(linalg::GenericOp g, const Algebra &A, AtomId id) {
  const void *key = A.atom(id).key;
  for (OpOperand *in : g.getDpsInputOperands())
    if (in->get().getAsOpaquePointer() == key &&
        g.getMatchingIndexingMap(in).isIdentity())
      return in->get();
  return Value();
}

//===----------------------------------------------------------------------===//
// Numeric cross-check
//===----------------------------------------------------------------------===//

/// The numbers: a body evaluated in double precision with the leaves bound
/// to numbers, a second, independent opinion on what the body computes, so
/// that a bug in the canonical form cannot turn into a miscompile. Values
/// defined outside the body are evaluated from their ops unless bound.
struct NumDomain {
  using Val = double;
  const DenseMap<Value, double> &leaves;

  Value normalize(Value v) const { return v; }
  std::optional<double> bound(Value v) const {
    auto it = leaves.find(v);
    if (it != leaves.end())
      return it->second;
    return std::nullopt;
  }
  std::optional<double> outside(Value) const { return std::nullopt; }
  std::optional<double> input(BlockArgument, OpOperand *operand) const {
    return bound(operand->get());
  }
  std::optional<std::string> error() const { return std::nullopt; }
  double constant(double c) const { return c; }
  double add(double a, double b) const { return a + b; }
  double sub(double a, double b) const { return a - b; }
  double mul(double a, double b) const { return a * b; }
  double div(double a, double b) const { return a / b; }
  double neg(double a) const { return -a; }
  // IEEE maximum / minimum: +0 is above -0 (the sign of a zero result
  // matters to the quantized bytes).
  double max(double a, double b) const {
    return a == b ? (std::signbit(a) ? b : a) : std::max(a, b);
  }
  double min(double a, double b) const {
    return a == b ? (std::signbit(a) ? a : b) : std::min(a, b);
  }
  double greater(double a, double b) const { return a > b ? 1.0 : 0.0; }
  double greaterEqual(double a, double b) const { return a >= b ? 1.0 : 0.0; }
  double select(double c, double t, double f) const { return c != 0.0 ? t : f; }
  double exp(double a) const { return std::exp(a); }
  double exp2(double a) const { return std::exp2(a); }
  double expm1(double a) const { return std::expm1(a); }
  double tanh(double a) const { return std::tanh(a); }
  double erf(double a) const { return std::erf(a); }
  double erfc(double a) const { return std::erfc(a); }
  template <typename Fn>
  double func(const void *, double a, Fn fn) const { return fn(a); }
  static constexpr bool kVariablePower = true;
  bool takesPower(double) const { return true; }
  double pow(double a, double b) const { return std::pow(a, b); }
};

/// Evaluates the body in double precision with the leaves bound to numbers.
class BodyEvaluator : public BodyInterpreter<NumDomain> {
public:
  BodyEvaluator(linalg::GenericOp generic,
                const DenseMap<Value, double> &leaves)
      : BodyInterpreter(generic, NumDomain{leaves}) {}
};

/// The runtime's own activation code (runtime/common/activation.h, in
/// float, as every backend computes it) for a match: the reference of the
/// numeric cross-checks. The dialect's ActivationKind values are the
/// runtime's (fusion_rt_kinds.def, asserted in LowerToRuntime.cpp).
fusion_rt::ActParams runtimeParams(const ActivationMatch &m, double alpha) {
  fusion_rt::ActParams p;
  p.alpha = float(alpha);
  p.mask_select = m.maskSelect;
  return p;
}

/// act(x) of a non-gated kind, or of a gated kind's gate activation.
double runtimeForward(ActivationKind kind, double x,
                      const fusion_rt::ActParams &p) {
  const int32_t k = int32_t(kind);
  return fusion_rt::act_forward(
      fusion_rt::act_is_gated(k) ? fusion_rt::gated_base_kind(k) : k, float(x), p);
}

/// The kinds whose derivative is zero by a mask (x <= 0) in the runtime: a
/// backward body may select +0 there (`mask = select`).
bool hasReluMask(ActivationKind kind) {
  // The registry's masked kinds (fusion_rt_kinds.def) but the clamped
  // SwiGLU, whose mask is its clamp (matchClampedSwigluBackward).
  return fusion_rt::act_has_mask(int32_t(kind)) &&
         kind != ActivationKind::clamped_swiglu;
}

/// How a body compares with the runtime's formula on the sample points.
enum class Agreement {
  Agree,
  /// Beyond the tolerance somewhere.
  Differ,
  /// Within the tolerance, but a zero has the other sign: the runtime's
  /// -0 (grad * 0) where the body selects +0, or the reverse. The quantized
  /// codes of the two differ (0x80 and 0x00).
  ZeroSign
};

/// Compares a body value with the runtime's at one sample point; for a zero
/// of the other sign, records the point in `note` (first one only).
Agreement compareAt(std::optional<double> got, double want,
                    const std::string &where, std::string *note) {
  if (!got || !(std::fabs(*got - want) <=
                1e-2 * std::max(std::fabs(*got), std::fabs(want)) + 1e-4))
    return Agreement::Differ;
  if (*got == 0.0 && want == 0.0 && std::signbit(*got) != std::signbit(want)) {
    if (note && note->empty())
      *note = where + " the body gives " + (std::signbit(*got) ? "-0" : "+0") +
              " where the runtime gives " + (std::signbit(want) ? "-0" : "+0");
    return Agreement::ZeroSign;
  }
  return Agreement::Agree;
}

/// The worse of two agreements (Differ over ZeroSign over Agree).
Agreement worse(Agreement a, Agreement b) {
  return a == Agreement::Differ || b == Agreement::Differ ? Agreement::Differ
         : a == Agreement::ZeroSign || b == Agreement::ZeroSign
             ? Agreement::ZeroSign
             : Agreement::Agree;
}

/// Runs `check` (an agreement of `m` with the runtime, noting the first
/// zero of the other sign) with the product mask, then, where only the sign
/// of a zero differed and `maskable`, with the selected one; `m.maskSelect`
/// says which agreed.
Agreement agreesWithEitherMask(
    ActivationMatch &m, bool maskable, std::string &note,
    llvm::function_ref<Agreement(std::string *)> check) {
  m.maskSelect = false;
  Agreement agreement = check(&note);
  if (agreement == Agreement::ZeroSign && maskable) {
    m.maskSelect = true;
    agreement = check(nullptr);
    m.maskSelect = agreement == Agreement::Agree;
  }
  return agreement;
}

/// The remark detail of a form that matched but for the sign of a zero.
std::string zeroSignDetail(StringRef what, StringRef form, StringRef note) {
  return (what + " " + form + " but for the sign of a zero (" + note +
          "; the quantized codes would differ)")
      .str();
}

std::string formatPoint(StringRef name, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s = %g", name.str().c_str(), v);
  return buf;
}

/// Whether the body computes, at a set of sample points, what the runtime
/// computes for `m` (within a tolerance that covers the accepted constant
/// differences and intermediate roundings, and with the same sign wherever
/// both are zero).
Agreement agreesNumerically(const ActivationMatch &m, Value root, Value xLeaf,
                            std::string *note = nullptr) {
  static const double xs[] = {-6.0, -3.1, -2.2, -1.3, -0.7, -0.15, 0.2,
                              0.45, 0.9,  1.6,  2.4,  3.3,  5.1};
  static const double gs[] = {0.7, -1.3};
  double alpha = m.alpha ? *m.alpha : kQGeluAlpha;
  Agreement result = Agreement::Agree;
  for (double x : xs)
    for (double other : gs) {
      DenseMap<Value, double> leaves;
      leaves[xLeaf] = x;
      if (m.grad)
        leaves[m.grad] = other;
      if (m.up)
        leaves[m.up] = other;
      BodyEvaluator evaluator(m.generic, leaves);
      std::optional<double> got = evaluator.eval(root);
      // The runtime's value (with mask_select: a selected +0 where the
      // derivative is masked).
      const fusion_rt::ActParams p = runtimeParams(m, alpha);
      double want =
          m.backward ? fusion_rt::act_backward(int32_t(m.kind), float(x),
                                               float(other), p)
          : m.up     ? fusion_rt::gated_forward(int32_t(m.kind), float(x),
                                                float(other), p)
                     : runtimeForward(m.kind, x, p);
      result = worse(result,
                     compareAt(got, want,
                               "at " + formatPoint("x", x) +
                                   (m.grad ? ", " + formatPoint("grad", other)
                                    : m.up ? ", " + formatPoint("up", other)
                                           : std::string()) +
                                   ",",
                               note));
      if (result == Agreement::Differ)
        return result;
    }
  return result;
}

/// GPT-OSS's clamped SwiGLU (runtime/common/activation.h gated_forward):
/// min(g, limit) * sigmoid(alpha * min(g, limit)) * (clamp(u, -limit, limit)
/// + offset). Its canonical form depends on how the clamps are spelled, so
/// the parameters are read off the atoms (limit from step(g - limit), alpha
/// from the sigmoid's slope, offset from one evaluation) and the whole
/// function is then confirmed numerically on a grid that crosses the clamps.
struct ClampedParams {
  double limit, offset, alpha;
  /// Backward: the body selects +0 where the gate's derivative is masked.
  bool maskSelect = false;
};

/// Records a clamped SwiGLU's parameters on `m`: limit, offset, and alpha
/// only where it differs from the default 1.702.
void setClamped(ActivationMatch &m, const ClampedParams &c) {
  m.kind = ActivationKind::clamped_swiglu;
  m.limit = c.limit;
  m.offset = c.offset;
  if (std::fabs(c.alpha - kQGeluAlpha) > 1e-6 * kQGeluAlpha)
    m.alpha = c.alpha;
  m.maskSelect = c.maskSelect;
}

/// The clamp limit L (a step of min(g, L)) and alpha (a sigmoid of alpha g)
/// of a clamped SwiGLU body over the gate atom `g`, when both are there.
std::optional<std::pair<double, double>> clampedLimitAlpha(const Algebra &A,
                                                           AtomId g) {
  std::optional<double> limit, alpha;
  for (AtomId id = 0, e = A.numAtoms(); id < e; ++id) {
    const Atom &a = A.atom(id);
    if (a.kind == AtomKind::Step && a.arg.size() == 2 &&
        a.arg[0].mono.empty() && a.arg[1].mono == Monomial{{g, 1}} &&
        a.arg[1].coef == 1.0 && a.arg[0].coef < 0)
      limit = -a.arg[0].coef;
    if (a.kind == AtomKind::Sigmoid)
      for (const Term &t : a.arg)
        if (t.mono == Monomial{{g, 1}} && t.coef > 0)
          alpha = t.coef;
  }
  if (!limit || !alpha)
    return std::nullopt;
  return std::make_pair(*limit, *alpha);
}

/// sigmoid in double: only to solve a clamped SwiGLU's offset from one
/// evaluation of the body (the comparisons use the runtime's code).
double sigmoidD(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// The runtime's parameters (activation.h ActParams) of a clamped SwiGLU.
fusion_rt::ActParams clampedRuntimeParams(const ClampedParams &c,
                                          bool maskSelect) {
  fusion_rt::ActParams p;
  p.limit = float(c.limit);
  p.offset = float(c.offset);
  p.alpha = float(c.alpha);
  p.mask_select = maskSelect;
  return p;
}

std::optional<ClampedParams> matchClampedSwiglu(const Algebra &A, AtomId g,
                                                linalg::GenericOp generic,
                                                Value root, Value gate,
                                                Value up) {
  std::optional<std::pair<double, double>> la = clampedLimitAlpha(A, g);
  if (!la)
    return std::nullopt;
  std::optional<double> limit = la->first, alpha = la->second;
  auto evalAt = [&](double gv, double uv) -> std::optional<double> {
    DenseMap<Value, double> leaves;
    leaves[gate] = gv;
    leaves[up] = uv;
    BodyEvaluator evaluator(generic, leaves);
    return evaluator.eval(root);
  };
  // The offset from one evaluation inside the clamps, where the body is
  // qgelu(g) * (u + offset): solved in double, as the body is evaluated (the
  // runtime's float code would leave the offset an ulp off); the runtime's
  // own code then judges the whole function below.
  double g0 = std::min(1.0, *limit / 2);
  std::optional<double> out0 = evalAt(g0, 0.0);
  if (!out0)
    return std::nullopt;
  double offset = *out0 / (g0 * sigmoidD(*alpha * g0));
  ClampedParams params{*limit, offset, *alpha};
  const double L = *limit;
  fusion_rt::ActParams p = clampedRuntimeParams(params, false);
  const double gs[] = {-6.0, -1.3, -0.2, 0.4, 1.1, L - 0.5, L + 0.5, L + 3};
  const double us[] = {-L - 2, -L + 0.5, -0.8, 0.3, 1.7, L - 0.3, L + 1.5};
  for (double gv : gs)
    for (double uv : us) {
      std::optional<double> got = evalAt(gv, uv);
      double want = fusion_rt::gated_forward(fusion_rt::kActClampedSwiGLU,
                                             float(gv), float(uv), p);
      if (!got || !(std::fabs(*got - want) <=
                    1e-3 * std::max(std::fabs(*got), std::fabs(want)) + 1e-6))
        return std::nullopt;
    }
  return params;
}

/// The clamped SwiGLU backward (runtime/common/activation.h gated_backward):
/// with x = min(g, L), s = sigmoid(alpha x),
///   dgate = (g <= L ? s + alpha x s (1 - s) : 0) * grad * (clamp(u, -L, L)
///           + offset)
///   dup   = (-L <= u <= L ? x s : 0) * grad.
/// L and alpha are read off the atoms of the dgate half (as for the
/// forward), offset from one evaluation, then both halves are compared with
/// the formula on a grid that crosses both clamps (away from the boundaries,
/// where the masks' <= / < may legitimately differ).
std::optional<ClampedParams>
matchClampedSwigluBackward(const Algebra &A, AtomId g, linalg::GenericOp gA,
                           Value rootA, linalg::GenericOp gB, Value rootB,
                           Value gate, Value up, Value grad) {
  std::optional<std::pair<double, double>> la = clampedLimitAlpha(A, g);
  if (!la)
    return std::nullopt;
  std::optional<double> limit = la->first, alpha = la->second;
  const double L = *limit, al = *alpha;
  auto evalAt = [&](double gv, double uv, double dv, linalg::GenericOp gen,
                    Value root) -> std::optional<double> {
    DenseMap<Value, double> leaves;
    leaves[gate] = gv;
    leaves[up] = uv;
    leaves[grad] = dv;
    BodyEvaluator evaluator(gen, leaves);
    return evaluator.eval(root);
  };
  // The offset from one evaluation of dgate inside the clamps, where the
  // body is dact(g) * grad * (u + offset), solved in double (as the
  // forward's).
  double g0 = std::min(1.0, L / 2);
  std::optional<double> out0 = evalAt(g0, 0.0, 1.0, gA, rootA);
  const double s0 = sigmoidD(al * g0);
  const double dact0 = s0 + al * g0 * s0 * (1 - s0);
  if (!out0 || dact0 == 0.0)
    return std::nullopt;
  double offset = *out0 / dact0;
  const double gs[] = {-6.0, -1.3, -0.2, 0.4, 1.1, L - 0.5, L + 0.5, L + 3};
  const double us[] = {-L - 2, -L + 0.5, -0.8, 0.3, 1.7, L - 0.3, L + 1.5};
  auto near = [](std::optional<double> got, double want) {
    return got && std::fabs(*got - want) <=
                      1e-3 * std::max(std::fabs(*got), std::fabs(want)) + 1e-6;
  };
  // Zeros must also have the runtime's sign: dgate's masked derivative is
  // grad * 0 (`mask = multiply`) or a selected +0 (`mask = select`); dup's
  // masked value is +0 either way. Both come from the runtime's own
  // gated_backward, once in each mode.
  bool zerosAs[2] = {true, true}; // multiply, select
  auto sameZero = [](std::optional<double> got, double want) {
    return !(*got == 0.0 && want == 0.0) ||
           std::signbit(*got) == std::signbit(want);
  };
  const ClampedParams params{L, offset, al};
  for (double gv : gs)
    for (double uv : us)
      for (double dv : {0.7, -1.3}) {
        float want[2][2]; // [mode][dgate, dup]
        for (int mode = 0; mode < 2; ++mode)
          fusion_rt::gated_backward(fusion_rt::kActClampedSwiGLU, float(gv),
                                    float(uv), float(dv),
                                    clampedRuntimeParams(params, mode == 1),
                                    want[mode][0], want[mode][1]);
        std::optional<double> gotA = evalAt(gv, uv, dv, gA, rootA),
                              gotB = evalAt(gv, uv, dv, gB, rootB);
        if (!near(gotA, want[0][0]) || !near(gotB, want[0][1]))
          return std::nullopt;
        for (int mode = 0; mode < 2; ++mode)
          zerosAs[mode] &= sameZero(gotA, want[mode][0]) &&
                           sameZero(gotB, want[mode][1]);
      }
  if (!zerosAs[0] && !zerosAs[1])
    return std::nullopt;
  return ClampedParams{L, offset, al, /*maskSelect=*/!zerosAs[0]};
}

/// The scalar a generic's body yields for result `res`.
Value yieldedValue(OpResult res) {
  auto generic = cast<linalg::GenericOp>(res.getOwner());
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  return yield.getOperand(res.getResultNumber());
}

/// The rounding the graph applies to an activation result: the narrowest
/// float type on the cast chain between the arithmetic and the yield.
Type roundingType(Value root) {
  Type intermediate = root.getType();
  for (Value v = root; Operation *op = v.getDefiningOp();) {
    if (!isa<arith::ExtFOp, arith::TruncFOp>(op))
      break;
    v = op->getOperand(0);
    if (cast<FloatType>(v.getType()).getWidth() <
        cast<FloatType>(intermediate).getWidth())
      intermediate = v.getType();
  }
  return intermediate;
}

/// The elementwise generic (all-parallel, identity result map) computing
/// `value`, if any.
linalg::GenericOp elementwiseProducer(Value value) {
  auto res = dyn_cast<OpResult>(value);
  auto generic =
      res ? dyn_cast<linalg::GenericOp>(res.getOwner()) : linalg::GenericOp();
  if (!generic || generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.getIndexingMapMatchingResult(res).isIdentity())
    return linalg::GenericOp();
  return generic;
}

/// The gated kind whose gate activation is the non-gated `base`: the
/// runtime's gated_base_kind inverted (the clamped SwiGLU has its own
/// matcher).
std::optional<ActivationKind> gatedKindOf(ActivationKind base) {
  for (int32_t k = 0; k <= FUSION_RT_ACT_LAST; ++k)
    if (fusion_rt::act_is_gated(k) && k != fusion_rt::kActClampedSwiGLU &&
        base != ActivationKind::identity &&
        fusion_rt::gated_base_kind(k) == int32_t(base))
      return ActivationKind(k);
  return std::nullopt;
}

/// Numeric cross-check of a gated backward match: dgate = act'(g) grad up
/// (a selected +0 where the derivative is masked, with `mask = select`),
/// dup = act(g) grad.
Agreement gatedBackwardAgrees(const ActivationMatch &m, linalg::GenericOp gA,
                              Value rootA, linalg::GenericOp gB, Value rootB,
                              std::string *note = nullptr) {
  static const double xs[] = {-6.0, -2.2, -0.7, -0.15, 0.2, 0.9, 2.4, 5.1};
  double alpha = m.alpha ? *m.alpha : kQGeluAlpha;
  Agreement result = Agreement::Agree;
  for (double x : xs)
    for (auto [g, u] : {std::pair{0.7, -1.1}, std::pair{-1.3, 0.6}}) {
      DenseMap<Value, double> leaves;
      leaves[m.input] = x;
      leaves[m.grad] = g;
      leaves[m.up] = u;
      BodyEvaluator evalA(gA, leaves), evalB(gB, leaves);
      // The runtime's gated backward: d_act (the gate's) and d_gate (the
      // up half's), with mask_select as the match says.
      float dGate = 0, dUp = 0;
      fusion_rt::gated_backward(int32_t(m.kind), float(x), float(u), float(g),
                                runtimeParams(m, alpha), dGate, dUp);
      double wantA = dGate, wantB = dUp;
      std::string where = "at " + formatPoint("gate", x) + ", " +
                          formatPoint("grad", g) + ", " + formatPoint("up", u);
      result = worse(result, compareAt(evalA.eval(rootA), wantA,
                                       where + ", dgate:", note));
      result = worse(result, compareAt(evalB.eval(rootB), wantB,
                                       where + ", dup:", note));
      if (result == Agreement::Differ)
        return result;
    }
  return result;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

std::string mlir::fusion::activationName(ActivationKind kind, bool backward) {
  return ((backward ? "d" : "") + stringifyActivationKind(kind)).str();
}

/// A near miss: `match` succeeds on `value` only with constants up to 1 %
/// off the runtime's (a frontend that computes in bf16 writes bf16-rounded
/// constants, 0.796875 for sqrt(2/pi)). Says so in `result`'s detail; it
/// still does not fuse.
static void sayNearMiss(ActivationMatchResult &result, Value value,
                        ActivationMatchResult (*match)(Value),
                        StringRef what) {
  if (gRelTol >= kLooseRelTol)
    return;
  const double saved = gRelTol;
  gRelTol = kLooseRelTol;
  ActivationMatchResult loose = match(value);
  gRelTol = saved;
  if (loose.match)
    result.detail =
        what.str() +
        activationName(loose.match->kind, loose.match->backward) +
        " only with constants up to 1% off the runtime's (more than the "
        "rounding of its constants to their type explains); the fused op "
        "uses the exact constants and would not reproduce it";
}

ActivationMatchResult mlir::fusion::matchActivation(Value value) {
  ActivationMatchResult result;
  result.reason = "unsupported activation";
  auto res = dyn_cast<OpResult>(value);
  auto generic =
      res ? dyn_cast<linalg::GenericOp>(res.getOwner()) : linalg::GenericOp();
  if (!generic) {
    result.detail = "the value is not computed by a linalg.generic";
    return result;
  }
  if (generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.getIndexingMapMatchingResult(res).isIdentity()) {
    result.detail = "the linalg.generic is not elementwise";
    return result;
  }
  ScopedTolerance tolerance(bodyTolerance(generic));
  Value root = yieldedValue(res);
  Type intermediate = roundingType(root);

  // Hypotheses for x: identity-mapped tensor inputs first, then values
  // computed in the body (an input the frontend fused into the activation).
  SmallVector<Value> hypotheses;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    if (!generic.getMatchingIndexingMap(in).isIdentity() ||
        getSplatValue(in->get()) || llvm::is_contained(hypotheses, in->get()))
      continue;
    hypotheses.push_back(in->get());
  }
  size_t numTensorHypotheses = hypotheses.size();
  Value strippedRoot = stripCasts(root);
  // Body values that depend on an input (not only on constants).
  Block *body = generic.getBody();
  llvm::SmallPtrSet<Operation *, 16> dependsOnInput;
  for (Operation &op : body->without_terminator())
    if (llvm::any_of(op.getOperands(), [&](Value v) {
          if (auto arg = dyn_cast<BlockArgument>(v))
            return arg.getOwner() == body;
          return dependsOnInput.contains(v.getDefiningOp());
        }))
      dependsOnInput.insert(&op);
  for (Operation &op : body->without_terminator()) {
    if (op.getNumResults() != 1 || !dependsOnInput.contains(&op) ||
        isa<arith::ExtFOp, arith::TruncFOp>(op) ||
        !isSupportedFloat(op.getResult(0).getType()) ||
        op.getResult(0) == strippedRoot)
      continue;
    hypotheses.push_back(op.getResult(0));
    if (hypotheses.size() > numTensorHypotheses + 64)
      break;
  }

  bool sawCrossCheckFailure = false;
  // The first form that matched but for the sign of a zero, for the remark.
  std::string zeroSignForm, zeroSignNote;
  for (auto [i, hyp] : llvm::enumerate(hypotheses)) {
    bool tensorHyp = i < numTensorHypotheses;
    Algebra A;
    // A tensor hypothesis is reached through the block arguments; a scalar
    // one is the value itself.
    BodyExpander expander(generic, A, tensorHyp ? Value() : hyp);
    std::optional<Poly> p = expander.expand(root);
    if (!p) {
      if (!expander.unsupported.empty()) {
        result.detail = expander.unsupported;
        return result;
      }
      continue;
    }
    std::optional<AtomId> x =
        A.find(AtomKind::Leaf, hyp.getAsOpaquePointer(), Poly());
    if (!x)
      continue;

    ActivationMatch m;
    m.intermediate = intermediate;
    m.generic = generic;
    m.resultIndex = res.getResultNumber();
    if (tensorHyp)
      m.input = hyp;
    else
      m.inputScalar = hyp;
    bool crossCheckFailed = false;
    auto accept = [&](const KindMatch &k, bool backward) {
      m.kind = k.kind;
      m.alpha = k.alpha;
      m.backward = backward;
      // A masked derivative the body selects as +0 (torch's
      // threshold_backward): the runtime's `mask = select`.
      std::string note;
      Agreement agreement = agreesWithEitherMask(
          m, backward && hasReluMask(k.kind), note, [&](std::string *n) {
            return agreesNumerically(m, root, hyp, n);
          });
      if (agreement == Agreement::Differ) {
        crossCheckFailed = true;
        return false;
      }
      if (agreement == Agreement::ZeroSign) {
        if (zeroSignForm.empty()) {
          zeroSignForm = activationName(k.kind, backward);
          zeroSignNote = note;
        }
        return false;
      }
      result.match = m;
      result.reason.clear();
      return true;
    };

    // Identity: a cast of a tensor input.
    if (tensorHyp && p->size() == 1 && p->front().coef == 1.0 &&
        p->front().mono == Monomial{{*x, 1}} &&
        accept({ActivationKind::identity, std::nullopt}, false))
      return result;

    if (std::optional<KindMatch> k =
            matchForward(A, *p, *x, /*gated=*/false))
      if (accept(*k, false))
        return result;

    for (AtomId leaf : commonLinearLeaves(A, *p, *x)) {
      Value other = leafTensor(generic, A, leaf);
      if (!other)
        continue;
      Poly q = divideLeaf(A, *p, leaf);
      if (std::optional<KindMatch> k = matchDerivative(A, q, *x)) {
        m.grad = other;
        if (accept(*k, true))
          return result;
        m.grad = Value();
      }
      if (!tensorHyp)
        continue;
      if (std::optional<KindMatch> k =
              matchForward(A, q, *x, /*gated=*/true)) {
        m.up = other;
        if (accept(*k, false))
          return result;
        m.up = Value();
      }
    }
    // The clamped SwiGLU: `up` sits inside the clamps, not as a factor.
    if (tensorHyp) {
      for (Value other :
           ArrayRef<Value>(hypotheses).take_front(numTensorHypotheses)) {
        if (other == hyp ||
            !A.find(AtomKind::Leaf, other.getAsOpaquePointer(), Poly()))
          continue;
        if (std::optional<ClampedParams> c =
                matchClampedSwiglu(A, *x, generic, root, hyp, other)) {
          setClamped(m, *c);
          m.up = other;
          result.match = m;
          result.reason.clear();
          return result;
        }
      }
    }
    if (crossCheckFailed)
      sawCrossCheckFailure = true;
  }
  if (!zeroSignForm.empty()) {
    result.detail = zeroSignDetail("the body is", zeroSignForm, zeroSignNote);
    return result;
  }
  if (sawCrossCheckFailure) {
    result.detail = "a recognised form failed the numeric cross-check "
                    "(please report: the canonical form has a bug)";
    return result;
  }
  result.detail = "the body matches no supported activation form";
  sayNearMiss(result, value, matchActivation, "the body is ");
  return result;
}

static bool isDimOf(OpFoldResult ofr, Value source, int64_t dim);

/// True if `ofr` is the constant `c`.
static bool isConstant(OpFoldResult ofr, int64_t c) {
  std::optional<int64_t> v = getConstantIntValue(ofr);
  return v && *v == c;
}

/// True if `ins` writes its whole source into `dest` along every dimension
/// but the last (offset 0, the dest's size, unit strides, no rank change),
/// at last-dimension `offset` with last-dimension size `size`.
static bool insertsColumns(tensor::InsertSliceOp ins, int64_t offset,
                           int64_t size) {
  RankedTensorType destType = ins.getDestType();
  int64_t rank = destType.getRank();
  if (ins.getSourceType().getRank() != rank)
    return false;
  auto offsets = ins.getMixedOffsets(), sizes = ins.getMixedSizes();
  for (OpFoldResult st : ins.getMixedStrides())
    if (!isConstant(st, 1))
      return false;
  for (int64_t d = 0; d + 1 < rank; ++d)
    if (!isConstant(offsets[d], 0) || !isDimOf(sizes[d], ins.getDest(), d))
      return false;
  return isConstant(offsets[rank - 1], offset) &&
         isConstant(sizes[rank - 1], size);
}

/// Recognises `value` as [lo | hi] along the last dimension: a tensor.concat
/// of two, or two tensor.insert_slice of [.., K] tensors into one [.., 2K]
/// tensor, one at column 0 and one at column K (either order of the writes;
/// the first write's destination is fully overwritten). `ops` gets the ops
/// that assemble it, the one that produces `value` first.
static bool matchHalvesPacking(Value value, Value &lo, Value &hi,
                               SmallVector<Operation *, 2> &ops) {
  auto type = cast<RankedTensorType>(value.getType());
  if (auto concat = value.getDefiningOp<tensor::ConcatOp>()) {
    if (concat.getInputs().size() != 2 ||
        concat.getDim() + 1 != static_cast<uint64_t>(type.getRank()))
      return false;
    lo = concat.getInputs()[0];
    hi = concat.getInputs()[1];
    ops = {concat};
    return true;
  }
  auto outer = value.getDefiningOp<tensor::InsertSliceOp>();
  auto inner = outer ? outer.getDest().getDefiningOp<tensor::InsertSliceOp>()
                     : tensor::InsertSliceOp();
  int64_t width = type.getShape().back();
  if (!inner || ShapedType::isDynamic(width) || width % 2 != 0)
    return false;
  int64_t half = width / 2;
  if (insertsColumns(inner, 0, half) && insertsColumns(outer, half, half)) {
    lo = inner.getSource();
    hi = outer.getSource();
  } else if (insertsColumns(inner, half, half) &&
             insertsColumns(outer, 0, half)) {
    lo = outer.getSource();
    hi = inner.getSource();
  } else {
    return false;
  }
  ops = {outer, inner};
  return true;
}

bool mlir::fusion::isHalvesPacking(Value value) {
  Value lo, hi;
  SmallVector<Operation *, 2> ops;
  return matchHalvesPacking(value, lo, hi, ops);
}

ActivationMatchResult mlir::fusion::matchGatedBackward(Value value) {
  ActivationMatchResult result;
  result.reason = "unsupported activation";
  Value dGate, dUp;
  SmallVector<Operation *, 2> packOps;
  if (!matchHalvesPacking(value, dGate, dUp, packOps)) {
    result.detail = "the value is not [dgate | dup] along the last dimension "
                    "(a tensor.concat of two halves, or two "
                    "tensor.insert_slice at columns 0 and K of a [.., 2K] "
                    "tensor)";
    return result;
  }
  linalg::GenericOp gA = elementwiseProducer(dGate);
  linalg::GenericOp gB = elementwiseProducer(dUp);
  if (!gA || !gB) {
    result.detail = "a half is not computed by an elementwise linalg.generic";
    return result;
  }
  ScopedTolerance tolerance(bodyTolerance({gA, gB}));
  Value rootA = yieldedValue(cast<OpResult>(dGate));
  Value rootB = yieldedValue(cast<OpResult>(dUp));
  Type intermediate = roundingType(rootA);
  Type roundingB = roundingType(rootB);
  if (cast<FloatType>(roundingB).getWidth() <
      cast<FloatType>(intermediate).getWidth())
    intermediate = roundingB;

  // How far the best candidate gate got, for the remark when none matches.
  std::string nearest;
  for (OpOperand *in : gA.getDpsInputOperands()) {
    Value gate = in->get();
    if (!gA.getMatchingIndexingMap(in).isIdentity() || getSplatValue(gate))
      continue;
    Algebra A;
    BodyExpander expA(gA, A, Value()), expB(gB, A, Value());
    std::optional<Poly> pA = expA.expand(rootA);
    std::optional<Poly> pB = pA ? expB.expand(rootB) : std::nullopt;
    if (!pB) {
      std::string why =
          !expA.unsupported.empty() ? expA.unsupported : expB.unsupported;
      if (!why.empty()) {
        result.detail = why;
        return result;
      }
      continue;
    }
    std::optional<AtomId> x =
        A.find(AtomKind::Leaf, gate.getAsOpaquePointer(), Poly());
    if (!x)
      continue;
    // dup = act(gate) * grad: grad is a linear factor of dup.
    for (AtomId gradLeaf : commonLinearLeaves(A, *pB, *x)) {
      Value grad = leafTensor(gB, A, gradLeaf);
      if (!grad)
        continue;
      std::optional<KindMatch> fwd = matchForward(
          A, divideLeaf(A, *pB, gradLeaf), *x, /*gated=*/false);
      std::optional<ActivationKind> gated =
          fwd ? gatedKindOf(fwd->kind) : std::nullopt;
      if (!gated)
        continue;
      std::string base = stringifyActivationKind(fwd->kind).str();
      // dgate = act'(gate) * grad * up.
      if (!llvm::is_contained(commonLinearLeaves(A, *pA, *x), gradLeaf)) {
        nearest = "dup is " + base +
                  "(gate) * grad, but grad is not a factor of dgate";
        continue;
      }
      nearest = "dup is " + base + "(gate) * grad, but dgate is not " + base +
                "'(gate) * grad * up in a form the matcher recognises";
      Poly qA = divideLeaf(A, *pA, gradLeaf);
      for (AtomId upLeaf : commonLinearLeaves(A, qA, *x)) {
        Value up = leafTensor(gA, A, upLeaf);
        if (!up || upLeaf == gradLeaf)
          continue;
        std::optional<KindMatch> d =
            matchDerivative(A, divideLeaf(A, qA, upLeaf), *x);
        if (!d || d->kind != fwd->kind || d->alpha != fwd->alpha)
          continue;
        ActivationMatch m;
        m.generic = gA;
        m.resultIndex = cast<OpResult>(dGate).getResultNumber();
        m.kind = *gated;
        m.backward = true;
        m.alpha = fwd->alpha;
        m.input = gate;
        m.up = up;
        m.grad = grad;
        m.intermediate = intermediate;
        m.packOps = packOps;
        m.halves = {dGate, dUp};
        std::string note;
        Agreement agreement = agreesWithEitherMask(
            m, hasReluMask(*gated), note, [&](std::string *n) {
              return gatedBackwardAgrees(m, gA, rootA, gB, rootB, n);
            });
        if (agreement == Agreement::Differ) {
          result.detail = "a recognised form failed the numeric cross-check "
                          "(please report: the canonical form has a bug)";
          return result;
        }
        if (agreement == Agreement::ZeroSign) {
          result.detail = zeroSignDetail("the halves are",
                                         activationName(*gated, true), note);
          return result;
        }
        result.match = m;
        result.reason.clear();
        return result;
      }
    }
    // The clamped SwiGLU backward: up and grad sit inside the clamps'
    // masks, not as plain factors; try every (up, grad) pair of dgate's
    // other inputs.
    for (OpOperand *upIn : gA.getDpsInputOperands())
      for (OpOperand *gradIn : gA.getDpsInputOperands()) {
        Value up = upIn->get(), grad = gradIn->get();
        if (up == gate || grad == gate || up == grad ||
            !gA.getMatchingIndexingMap(upIn).isIdentity() ||
            !gA.getMatchingIndexingMap(gradIn).isIdentity())
          continue;
        std::optional<ClampedParams> c = matchClampedSwigluBackward(
            A, *x, gA, rootA, gB, rootB, gate, up, grad);
        if (!c)
          continue;
        ActivationMatch m;
        m.generic = gA;
        m.resultIndex = cast<OpResult>(dGate).getResultNumber();
        setClamped(m, *c);
        m.backward = true;
        m.input = gate;
        m.up = up;
        m.grad = grad;
        m.intermediate = intermediate;
        m.packOps = packOps;
        m.halves = {dGate, dUp};
        result.match = m;
        result.reason.clear();
        return result;
      }
  }
  result.detail = nearest.empty()
                      ? "the halves match no supported gated backward form "
                        "(the second half, dup, is no supported activation "
                        "of a gate times a gradient)"
                      : nearest;
  sayNearMiss(result, value, matchGatedBackward, "the halves are ");
  return result;
}

/// True if `ofr` is the size of dimension `dim` of `source`.
static bool isDimOf(OpFoldResult ofr, Value source, int64_t dim) {
  auto type = cast<RankedTensorType>(source.getType());
  if (std::optional<int64_t> c = getConstantIntValue(ofr))
    return !type.isDynamicDim(dim) && *c == type.getDimSize(dim);
  auto v = dyn_cast<Value>(ofr);
  auto dimOp = v ? v.getDefiningOp<tensor::DimOp>() : tensor::DimOp();
  return dimOp && dimOp.getSource() == source &&
         dimOp.getConstantIndex() == dim;
}

/// True if `ofr` is half of the size of dimension `dim` of `source`.
static bool isHalfDimOf(OpFoldResult ofr, Value source, int64_t dim) {
  auto type = cast<RankedTensorType>(source.getType());
  if (std::optional<int64_t> c = getConstantIntValue(ofr))
    return !type.isDynamicDim(dim) && 2 * *c == type.getDimSize(dim);
  auto v = dyn_cast<Value>(ofr);
  Operation *op = v ? v.getDefiningOp() : nullptr;
  if (!op ||
      !isa<arith::DivUIOp, arith::DivSIOp, arith::FloorDivSIOp, arith::ShRUIOp>(
          op))
    return false;
  std::optional<int64_t> k = getConstantIntValue(op->getOperand(1));
  int64_t want = isa<arith::ShRUIOp>(op) ? 1 : 2;
  return k && *k == want && isDimOf(op->getOperand(0), source, dim);
}

static bool sameOfr(OpFoldResult a, OpFoldResult b) {
  std::optional<int64_t> ca = getConstantIntValue(a),
                         cb = getConstantIntValue(b);
  if (ca || cb)
    return ca && cb && *ca == *cb;
  return cast<Value>(a) == cast<Value>(b);
}

Value mlir::fusion::matchPackedGateUp(Value gate, Value up) {
  auto g = gate.getDefiningOp<tensor::ExtractSliceOp>();
  auto u = up.getDefiningOp<tensor::ExtractSliceOp>();
  if (!g || !u || g.getSource() != u.getSource())
    return Value();
  Value source = g.getSource();
  int64_t rank = g.getSourceType().getRank();
  if (rank < 1 || g.getResultType().getRank() != rank ||
      u.getResultType().getRank() != rank)
    return Value();
  SmallVector<OpFoldResult> strides = g.getMixedStrides();
  llvm::append_range(strides, u.getMixedStrides());
  for (OpFoldResult s : strides)
    if (getConstantIntValue(s) != 1)
      return Value();
  auto gOff = g.getMixedOffsets(), uOff = u.getMixedOffsets();
  auto gSize = g.getMixedSizes(), uSize = u.getMixedSizes();
  for (int64_t d = 0; d + 1 < rank; ++d)
    if (getConstantIntValue(gOff[d]) != 0 ||
        getConstantIntValue(uOff[d]) != 0 || !isDimOf(gSize[d], source, d) ||
        !isDimOf(uSize[d], source, d))
      return Value();
  int64_t last = rank - 1;
  if (getConstantIntValue(gOff[last]) != 0 ||
      !isHalfDimOf(gSize[last], source, last) ||
      !sameOfr(uSize[last], gSize[last]) || !sameOfr(uOff[last], gSize[last]))
    return Value();
  return source;
}

/// True if the body of a reduction is `acc + extf?(in)` (either order).
static bool isAddIntoAccumulator(Block &body, Value in, Value acc) {
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value a = add.getLhs(), b = add.getRhs();
  auto isIn = [&](Value v) {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      v = ext.getIn();
    return v == in;
  };
  return (isIn(a) && b == acc) || (isIn(b) && a == acc);
}

static bool isZeroInit(Value init) {
  std::optional<double> c = getSplatValue(init);
  return c && *c == 0.0;
}

bool mlir::fusion::isDbiasReduction(Operation *op, Value value,
                                    std::string &reason) {
  auto valueType = cast<RankedTensorType>(value.getType());
  Value init;
  Block *body = nullptr;
  Value in, acc;
  // Column sums: every dimension but the last is reduced (the runtime
  // collapses rank 3 and 4 onto rows, so this is its dbias for any rank).
  int64_t rank = valueType.getRank();
  const char *notColumnSum =
      "the reduction is not a sum over all dimensions but the last";
  if (auto reduce = dyn_cast<linalg::ReduceOp>(op)) {
    if (reduce.getInputs().size() != 1 || reduce.getInputs()[0] != value ||
        reduce.getInits().size() != 1)
      return false;
    SmallVector<int64_t> leading =
        llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
    if (rank < 2 || reduce.getDimensions() != ArrayRef<int64_t>(leading)) {
      reason = notColumnSum;
      return false;
    }
    init = reduce.getInits()[0];
    body = &reduce.getCombiner().front();
    in = body->getArgument(0);
    acc = body->getArgument(1);
  } else if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
    if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
        generic.getDpsInputOperand(0)->get() != value)
      return false;
    if (rank < 2 || generic.getNumLoops() != static_cast<unsigned>(rank) ||
        generic.getNumParallelLoops() != 1) {
      reason = notColumnSum;
      return false;
    }
    AffineMap inMap =
        generic.getMatchingIndexingMap(generic.getDpsInputOperand(0));
    AffineMap outMap =
        generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
    auto iters = generic.getIteratorTypesArray();
    unsigned parallel =
        llvm::find(iters, utils::IteratorType::parallel) - iters.begin();
    if (!inMap.isPermutation() || outMap.getNumResults() != 1 ||
        !outMap.getResult(0).isFunctionOfDim(parallel) ||
        !inMap.getResult(rank - 1).isFunctionOfDim(parallel)) {
      reason = notColumnSum;
      return false;
    }
    init = generic.getDpsInitOperand(0)->get();
    body = generic.getBody();
    in = body->getArgument(0);
    acc = body->getArgument(1);
  } else {
    return false;
  }
  auto initType = cast<RankedTensorType>(init.getType());
  if (!initType.getElementType().isF32()) {
    reason = "the reduction does not accumulate in f32";
    return false;
  }
  if (!isZeroInit(init)) {
    reason = "the reduction does not start from zero";
    return false;
  }
  if (!isAddIntoAccumulator(*body, in, acc)) {
    reason = "the reduction is not a sum";
    return false;
  }
  return true;
}
