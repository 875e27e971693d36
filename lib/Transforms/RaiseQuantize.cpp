//===- RaiseQuantize.cpp - quantizers in upstream ops -> fusion.quantize --===//
//
// Frontends write quantizers out in upstream ops (torch-mlir lowers torchao's
// to_mx into a blockwise amax reduction, integer bit tricks on the amax, a
// division and an arith.truncf). This pass finds such a quantizer by its
// structure only as far as needed to delimit it (a cast to FP8 fed by an amax
// reduction; the region between one input and two results) and decides what
// it computes semantically: the region is evaluated on probe inputs and
// compared, byte for byte, with the runtime's own CPU quantizer under every
// candidate scheme. Only a region that reproduces one scheme on every probe
// is replaced; every candidate gets a remark.
//
//===----------------------------------------------------------------------===//
#include "fusion/Analysis/TensorEvaluator.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Transforms/CheckElision.h"
#include "fusion/Transforms/Declines.h"
#include "fusion/Transforms/FoldTilePermutation.h"
#include "fusion/Transforms/Passes.h"
#include "fusion/Transforms/QuantDestinations.h"
#include "fusion/Transforms/RemarkLock.h"
#include "fusion/Transforms/Transforms.h"
#include "fusion/Transforms/VerifyQuietly.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"

#include "common/layout.h"
#include "fusion_rt.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Remarks.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <array>
#include <random>

namespace mlir::fusion {
#define GEN_PASS_DEF_RAISEQUANTIZE
#include "fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// A region that may be a quantizer: `x` in, `data` and `scales` out.
struct Candidate {
  Operation *cast = nullptr; ///< The op that produces the FP8 values.
  Operation *reduction = nullptr;
  Value x, data, scales;
  /// MXFP4 written out: `data` holds two e2m1 codes per byte (i8, the even
  /// element in the low nibble, torch's float4_e2m1fn_x2), half of x's
  /// elements.
  bool packedFp4 = false;
  /// Packed FP4 with e4m3 scales over blocks of 16: NVFP4 (torchao's
  /// nvfp4_quantize), whose per-tensor scale reads the whole input.
  bool nvfp4 = false;
  /// FP8 with one scale per tensor: `amax` is the reduction's result (a
  /// single value). Values computed from the amax alone (the scale the IR
  /// returns) stay, fed by the raised op's amax.
  bool perTensor = false;
  Value amax;
  /// NVFP4: `amax` is the region's tensor amax (a one-element reduction of
  /// the input) when the values of the region that the program reads
  /// besides the data and the scales (torchao's per-tensor scale, the
  /// checks torch-mlir puts on it) are computed from it alone. Where the
  /// check shows it equal to the raised op's, the raised op's amax feeds
  /// them and the IR's amax pass goes; else (readers that are checks only)
  /// they keep reading the IR's values.
  bool readByNonCheck = false; ///< Some reader is more than a check.
  /// Which layouts the scales' element count allows: compact [rows, nb], or
  /// swizzled (torchao's to_blocked, cuBLAS's 128x4 tiles: [rup(rows,
  /// 128), rup(nb, 4)], flattened or not). Both when the counts agree.
  bool compactScales = true, swizzledScales = false;
  /// FP8 with one f32 scale per group of `group` elements of a row
  /// (DeepSeek-V3 / vLLM per-token groups; group = cols: per-row scaling).
  bool blockFP8 = false;
  int64_t group = 0;
  /// Checks (cf.assert) left reading the input, proven and dropped after
  /// the rewrite.
  unsigned droppedChecks = 0;
  /// Rows of a 2D FP8 block (DeepSeek-V3's 128x128 weight tiles): > 1 when
  /// one f32 scale covers `blockRows` x `group` elements.
  int64_t blockRows = 1;
  /// FP8 block scales that the program returns transposed (their last two
  /// dimensions swapped by a linalg.transpose: the column-major scales
  /// DeepGEMM reads, SGLang's x_s.t().contiguous()). `scales` is the value
  /// before the transpose, which stays and reads the raised op's scales.
  bool scalesTransposed = false;
  /// FP8 per tensor with a given scale (TE's delayed scaling, a static
  /// scale passed in): `scale` is the one-element f32 tensor the region
  /// multiplies by, read as a leaf (also `perTensor`). `amax`, if set, is a
  /// separate tensor amax of `x` (TE's amax for the history), computed by
  /// `amaxRegion`, that the raised op's amax replaces.
  bool delayed = false;
  Value scale;
  /// A delayed scale that is a constant of the program (a buffer exported
  /// as a constant, a literal multiplier): its value, checked at that value
  /// only, and materialized as the raised op's scale operand.
  std::optional<float> constScale;
  /// The constant the program divides by (x / d, vLLM's static FP8), whose
  /// reciprocal is constScale; 0 for a multiply.
  float constDivisor = 0.0f;
  llvm::SetVector<Operation *> amaxRegion;
  /// Appended to the remark of a raised candidate.
  std::string note;
  llvm::SetVector<Operation *> region;
};

/// Why a candidate was declined: the rule (the remark's reason) and detail.
struct Decline {
  DeclineRule rule = DeclineRule::None;
  std::string detail;
  /// The region of a packed-FP4 quantizer whose scales were found but that
  /// was declined before its check (its remark is the quantizer's).
  SmallVector<Operation *> region;
};

bool isFloat8Data(Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); }

Type elementTypeOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? t.getElementType() : Type();
}

int64_t numElements(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t.getNumElements() : -1;
}

bool isReshape(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
             tensor::ReshapeOp>(op);
}

/// Ops a quantizer region may contain (the ones the evaluator models).
bool isRegionOp(Operation *op) {
  if (auto l = dyn_cast<linalg::LinalgOp>(op))
    return l.hasPureTensorSemantics();
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
             tensor::ReshapeOp, tensor::BitcastOp, tensor::ExtractSliceOp,
             tensor::InsertSliceOp, tensor::ConcatOp, tensor::FromElementsOp,
             tensor::SplatOp, tensor::ExtractOp, tensor::EmptyOp,
             arith::ConstantOp>(op) ||
         (op->getNumRegions() == 0 && op->getNumResults() == 1 &&
          isa<arith::ArithDialect, math::MathDialect>(op->getDialect()));
}

/// True if `v` is computed from constants only (its value does not depend on
/// the region's input): constants, empty tensors, fills of constants, and
/// ops of such values.
bool isConstantLike(Value v, DenseMap<Value, bool> &memo, unsigned depth = 0);

/// Values an op reads: its operands and the values its body captures.
SmallVector<Value> readValues(Operation *op) {
  SmallVector<Value> values(op->getOperands());
  op->walk([&](Operation *inner) {
    if (inner == op)
      return;
    for (Value o : inner->getOperands()) {
      Operation *owner = o.getParentRegion()->getParentOp();
      if (owner != op && !op->isProperAncestor(owner))
        values.push_back(o);
    }
  });
  return values;
}

/// True if `v` is computed from constants only (its value does not depend on
/// the region's input): constants, empty tensors, fills of constants, and
/// ops of such values.
bool isConstantLike(Value v, DenseMap<Value, bool> &memo, unsigned depth) {
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  Operation *op = v.getDefiningOp();
  // A dimension size does not depend on the tensor's values.
  if (isa_and_nonnull<tensor::DimOp>(op))
    return memo[v] = true;
  // Nor arithmetic on sizes (affine.apply, index ops of torch-mlir's shape
  // computations).
  if (op && isa<IndexType>(v.getType()) && op->getNumRegions() == 0 &&
      isPure(op) && depth < 32) {
    bool sizes = llvm::all_of(op->getOperands(), [&](Value o) {
      return isConstantLike(o, memo, depth + 1);
    });
    return memo[v] = sizes;
  }
  bool result = op && depth < 32 && isRegionOp(op) &&
                llvm::all_of(readValues(op), [&](Value o) {
                  return isConstantLike(o, memo, depth + 1);
                });
  memo[v] = result;
  return result;
}

/// The ops between `roots` and `x` (stopping at `x`, at `stop` if given,
/// and at constant-like values). Fails with the first value that is none.
LogicalResult backwardSlice(ArrayRef<Value> roots, Value x,
                            llvm::SetVector<Operation *> &slice,
                            DenseMap<Value, bool> &constMemo, Value &stray,
                            Value stop = Value()) {
  SmallVector<Value> work(roots.begin(), roots.end());
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == x || (stop && v == stop) || !seen.insert(v).second ||
        isConstantLike(v, constMemo))
      continue;
    Operation *op = v.getDefiningOp();
    if (!op || !isRegionOp(op)) {
      stray = v;
      return failure();
    }
    slice.insert(op);
    for (Value r : readValues(op))
      work.push_back(r);
  }
  return success();
}

/// The op at function level that contains `op`.
Operation *topLevel(Operation *op) {
  while (op->getParentOp() && !isa<func::FuncOp>(op->getParentOp()))
    op = op->getParentOp();
  return op;
}

/// Follows `v` through single-use reshapes to the value the program uses.
Value followReshapes(Value v) {
  while (v.hasOneUse() && isReshape(*v.getUsers().begin())) {
    Value next = (*v.getUsers().begin())->getResult(0);
    // A cast that only forgets static sizes (to a dynamic result type) is
    // not the value the program uses.
    if (isa<tensor::CastOp>(next.getDefiningOp()) &&
        cast<ShapedType>(v.getType()).hasStaticShape() &&
        !cast<ShapedType>(next.getType()).hasStaticShape())
      break;
    v = next;
  }
  return v;
}

/// The nearest structured op with a reduction loop and one input (an amax,
/// not a contraction) that `start` depends on through region ops; with
/// `throughLoop`, also through loops (their operands and the values their
/// bodies read from above), the first loop crossed returned there.
Operation *findReduction(Operation *start, Operation **throughLoop = nullptr) {
  SmallVector<std::pair<Operation *, Operation *>> work{{start, nullptr}};
  DenseSet<Operation *> seen;
  while (!work.empty() && seen.size() < 256) {
    auto [op, loop] = work.front();
    work.erase(work.begin());
    if (!seen.insert(op).second)
      continue;
    // An amax reduction reads one tensor; a contraction upstream of the
    // quantizer's input (the projection that computes it) is not one.
    if (auto l = dyn_cast<linalg::LinalgOp>(op))
      if (l.getNumReductionLoops() > 0 && l.getNumDpsInputs() == 1) {
        if (throughLoop)
          *throughLoop = loop;
        return op;
      }
    // (readValues: a loop's operands and what its body reads from above.)
    if (throughLoop && isa<LoopLikeOpInterface>(op) && !loop)
      loop = op;
    for (Value v : readValues(op))
      if (Operation *def = v.getDefiningOp())
        if ((isRegionOp(def) ||
             (throughLoop && isa<LoopLikeOpInterface>(def))) &&
            isa<RankedTensorType>(v.getType()))
          work.push_back({def, loop});
  }
  return nullptr;
}

/// Values the reduction's input may have come from, upstream first: the
/// reduction input, then back through reshapes and one-input elementwise ops
/// (|x|, casts).
SmallVector<Value> inputCandidates(Operation *reduction) {
  SmallVector<Value> chain;
  Value v = cast<linalg::LinalgOp>(reduction).getDpsInputOperand(0)->get();
  DenseMap<Value, bool> memo;
  for (unsigned i = 0; i < 16 && v; ++i) {
    chain.push_back(v);
    Operation *def = v.getDefiningOp();
    if (!def)
      break;
    if (isReshape(def) || isa<tensor::BitcastOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    auto l = dyn_cast<linalg::LinalgOp>(def);
    if (!l)
      break;
    // A reduction of one tensor read by this one: the amax in stages
    // (torch.amax of a whole tensor: rows first, then the row maxima).
    if (l.getNumReductionLoops() != 0) {
      if (l.getNumDpsInputs() != 1)
        break;
      v = l.getDpsInputOperand(0)->get();
      continue;
    }
    Value only;
    for (OpOperand *in : l.getDpsInputOperands()) {
      if (isConstantLike(in->get(), memo))
        continue;
      if (only) {
        only = Value();
        break;
      }
      only = in->get();
    }
    v = only;
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

// ---- probes -------------------------------------------------------------------

/// Raw bits of `f` rounded to the float type `t`.
uint64_t floatBits(Type t, float f) {
  llvm::APFloat a(f);
  bool losesInfo = false;
  a.convert(cast<FloatType>(t).getFloatSemantics(),
            llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return a.bitcastToAPInt().getZExtValue();
}

/// The value of the raw bits `bits` of the float type `t` (floatBits back).
double floatValue(Type t, uint64_t bits) {
  auto ft = cast<FloatType>(t);
  return llvm::APFloat(ft.getFloatSemantics(), llvm::APInt(ft.getWidth(), bits))
      .convertToDouble();
}

/// One probe: f32 values for `rows` x `cols` (sampled rows of the input).
/// Each block of 32 gets one pattern; the patterns cover what a quantizer's
/// edge rules are about.
std::vector<float> makeProbe(unsigned kind, int64_t rows, int64_t cols,
                             unsigned seed, bool finite) {
  std::mt19937 rng(seed * 7919 + kind);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-40, 40), pick(0, 31);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b * 32 < cols; ++b) {
      float *blk = &v[r * cols + b * 32];
      int64_t n = std::min<int64_t>(32, cols - b * 32);
      float s = std::ldexp(1.0f, expo(rng));
      for (int64_t i = 0; i < n; ++i)
        blk[i] = normal(rng) * s;
      if (kind == 0)
        continue;
      unsigned pattern = (b + r * 3 + kind * 5) % 16;
      if (finite && (pattern == 1 || pattern == 2 || pattern == 3 ||
                     pattern == 11))
        pattern = 14; // No NaN or Inf: a random block.
      int at = pick(rng) % n;
      switch (pattern) {
      case 0: // zero block, one -0
        for (int64_t i = 0; i < n; ++i)
          blk[i] = 0.0f;
        blk[at] = -0.0f;
        break;
      case 1:
        blk[at] = nan;
        break;
      case 2:
        blk[at] = inf;
        break;
      case 3:
        blk[at] = -inf;
        break;
      case 4: // f32 subnormals only
        for (int64_t i = 0; i < n; ++i)
          blk[i] = std::ldexp(normal(rng), -135);
        break;
      case 5: // near the top of f32
        for (int64_t i = 0; i < n; ++i)
          blk[i] = std::ldexp(normal(rng), 126);
        blk[at] = 3.4028235e38f;
        break;
      case 6: { // amax mantissa near 2 (FLOOR scales overflow the element),
                // or at / just below the mantissa where EVEN's rounding of
                // the amax to the element's m bits carries: 2 - 2^-(m+1)
        static const float near2[] = {1.9921875f, 1.9375f, 1.875f, 1.75f};
        float mant = near2[(r + b) % 4];
        if ((r + 2 * b) % 3 == 1 && mant != near2[0])
          mant = std::nextafter(mant, 0.0f);
        blk[at] = std::ldexp(mant, expo(rng)) * (at % 2 ? -1.0f : 1.0f);
        for (int64_t i = 0; i < n; ++i)
          if (i != at)
            blk[i] = blk[at] * (0.875f + 0.125f * (i % 2)) * (i % 3 ? 1 : -1);
        break;
      }
      case 7: // amax an exact power of two, elements on rounding ties
        for (int64_t i = 0; i < n; ++i)
          blk[i] = std::ldexp(1.0f + (2 * (i % 8) + 1) / 32.0f, expo(rng) % 4);
        blk[at] = std::ldexp(1.0f, 4);
        break;
      case 8: // amax at e4m3 / e5m2 maxima and just past them
        blk[at] = (at % 2) ? 448.0f : 57344.0f;
        blk[(at + 1) % n] = (at % 2) ? 464.0f : 61440.0f;
        break;
      case 9: // wide range in one block: elements become f8 subnormals
        for (int64_t i = 0; i < n; ++i)
          blk[i] = std::ldexp(normal(rng), -(int)(i % 24));
        break;
      case 10: // smallest normals and the f32 minimum normal
        for (int64_t i = 0; i < n; ++i)
          blk[i] = std::ldexp(1.0f + i / 64.0f, -126);
        break;
      case 11: // NaN and Inf together
        blk[at] = nan;
        blk[(at + 5) % n] = -inf;
        break;
      case 12: // negative block
        for (int64_t i = 0; i < n; ++i)
          blk[i] = -std::fabs(blk[i]);
        break;
      case 13: // amax just below a power of two
        blk[at] = std::nextafter(std::ldexp(1.0f, expo(rng) % 8), 0.0f);
        break;
      case 15: { // amax exactly an element maximum (e4m3, e5m2, e2m1)
                 // times a power of two: ceil and floor + 1 differ there
        static const float maxima[] = {448.0f, 57344.0f, 6.0f};
        float m = std::ldexp(maxima[(r + b) % 3], int((r + 2 * b) % 9) - 4);
        for (int64_t i = 0; i < n; ++i)
          blk[i] = std::fmod(std::fabs(blk[i]), m) * (i % 2 ? -1.0f : 1.0f);
        blk[at] = at % 2 ? -m : m;
        break;
      }
      default:
        break;
      }
    }
  return v;
}

/// Largest per-tensor quantizer input the exactness check evaluates: the
/// amax reads every element, so every probe evaluates the whole tensor
/// (about 8 s for 2^18 elements on two cores).
constexpr int64_t kPerTensorLimit = int64_t(1) << 18;

/// One probe of a whole tensor of `n` elements for a per-tensor quantizer:
/// the cases its scale rule is about (zero, an amax below or at an epsilon
/// such as torchao's 1e-12, subnormals, the top of f32, elements that
/// become FP8 subnormals, rounding ties), and NaN / Inf unless `finite`.
std::vector<float> makeTensorProbe(unsigned kind, int64_t n, bool finite,
                                   float fmax) {
  std::mt19937 rng(104729 + kind);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  std::vector<float> v(n);
  for (float &f : v)
    f = normal(rng);
  const int64_t at = pick(rng);
  auto scaleAll = [&](float k) {
    for (float &f : v)
      f *= k;
  };
  switch (kind) {
  case 1:
    scaleAll(std::ldexp(1.0f, -30));
    break;
  case 2:
    scaleAll(std::ldexp(1.0f, 40));
    break;
  case 3: // all zero, one -0
    for (float &f : v)
      f = 0.0f;
    v[at] = -0.0f;
    break;
  case 4: // amax below 1e-12
    scaleAll(1e-14f);
    break;
  case 5: // amax at float(1e-12), and just above it
    scaleAll(1e-14f);
    v[at] = 1e-12f;
    v[(at + 1) % n] = -std::nextafter(1e-12f, 0.0f);
    break;
  case 6:
    scaleAll(1e-14f);
    v[at] = std::nextafter(1e-12f, 1.0f);
    break;
  case 7: // f32 subnormals only
    for (float &f : v)
      f = std::ldexp(normal(rng), -135);
    break;
  case 8: // the top of f32
    scaleAll(std::ldexp(1.0f, 120));
    v[at] = 3.4028235e38f;
    break;
  case 9: // wide range: elements become FP8 subnormals or zero
    for (int64_t i = 0; i < n; ++i)
      v[i] = std::ldexp(normal(rng), -int(i % 28));
    v[at] = 448.0f;
    break;
  case 10: // amax 448 (scale 1 for e4m3): elements on e4m3 rounding ties
    for (int64_t i = 0; i < n; ++i)
      v[i] = std::ldexp(1.0f + (2 * (i % 8) + 1) / 16.0f, int(i % 15) - 6) *
             (i % 3 ? 1.0f : -1.0f);
    v[at] = 448.0f;
    break;
  case 11:
    v[at] = finite ? 1.0f : std::numeric_limits<float>::quiet_NaN();
    break;
  case 12:
    v[at] = finite ? -2.0f : -std::numeric_limits<float>::infinity();
    break;
  case 13:
  case 14:
  case 15:
  case 16: {
    // An amax (f32) whose scale max / amax is the float just below 2^k:
    // there log2f rounds to k, so exp2(floor(log2(s))) (torchao's
    // power-of-two rounding) is 2^k where an exact round-down (TE's, the
    // runtime's) is 2^(k-1). (Values of a narrower type never get that
    // close to a power of two.)
    const int k = std::array<int, 4>{4, 7, 12, 20}[kind - 13];
    const float below = std::nextafter(std::ldexp(1.0f, k), 0.0f);
    float a = fmax / below;
    for (int step = 0; step < 64 && fmax / a != below; ++step)
      a = std::nextafter(a, fmax / a > below ? 1e30f : 0.0f);
    scaleAll(a * 0.25f);
    v[at] = a;
    break;
  }
  default:
    break;
  }
  return v;
}
constexpr unsigned kTensorProbes = 17;

/// The bits of probe `values` in the input type `xt` (into `bits`); under
/// `finite` (the finite-inputs contract) a value that is not finite in that
/// type becomes +-65504.
void probeBits(ArrayRef<float> values, Type xt, bool finite,
               std::vector<uint64_t> &bits) {
  const auto &sem = cast<FloatType>(xt).getFloatSemantics();
  const unsigned width = cast<FloatType>(xt).getWidth();
  bits.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    bits[i] = floatBits(xt, values[i]);
    if (finite && !llvm::APFloat(sem, llvm::APInt(width, bits[i])).isFinite())
      bits[i] = floatBits(xt, std::copysign(65504.0f, values[i]));
  }
}

/// The leaf function of an evaluator that reads `probe` (row-major over
/// `shape`) as the elements of `x`.
TensorEvaluator::LeafFn probeLeaf(Value x, ArrayRef<int64_t> shape,
                                  const std::vector<uint64_t> &probe) {
  SmallVector<int64_t> dims(shape);
  return [x, dims, &probe](Value v, ArrayRef<int64_t> index, EvalScalar &out) {
    if (v != x)
      return false;
    out = EvalScalar{probe[TensorEvaluator::linearize(index, dims)], false};
    return true;
  };
}

/// The scheme a remark names, in the dialect's syntax.
std::string schemeName(QuantSchemeAttr s) {
  std::string str;
  llvm::raw_string_ostream os(str);
  Attribute(s).print(os);
  return str;
}

/// A probe as the runtime's input: [rows, cols] of the input type.
struct ReferenceInput {
  std::vector<uint16_t> in16;
  std::vector<uint32_t> in32;
  fusion_rt_tensor view{};
  ReferenceInput(Type inType, const std::vector<uint64_t> &in, int64_t rows,
                 int64_t cols) {
    view.rank = 2;
    view.sizes[0] = rows;
    view.sizes[1] = cols;
    view.strides[0] = cols;
    view.strides[1] = 1;
    if (inType.isF32()) {
      in32.assign(in.begin(), in.end());
      view.data = in32.data();
      view.dtype = FUSION_RT_F32;
    } else {
      in16.assign(in.begin(), in.end());
      view.data = in16.data();
      view.dtype = inType.isBF16() ? FUSION_RT_BF16 : FUSION_RT_F16;
    }
  }
};

/// fusion_rt_quantize on the CPU backend, one thread; a rejection becomes
/// `error`.
LogicalResult callReference(const fusion_rt_tensor &input,
                            const fusion_rt_quant_scheme &s,
                            const fusion_rt_quant_outputs &out,
                            std::string &error) {
  fusion_rt_options opts{FUSION_RT_BACKEND_CPU, 1};
  if (fusion_rt_quantize(&input, &s, &out, &opts, nullptr) ==
      FUSION_RT_STATUS_SUCCESS)
    return success();
  error = std::string("the runtime rejected the reference call: ") +
          fusion_rt_last_error_message();
  return failure();
}

/// An f32 [1] view of `p` (the amax and scale_inv outputs).
fusion_rt_tensor scalarView(float *p) {
  fusion_rt_tensor one{};
  one.data = p;
  one.dtype = FUSION_RT_F32;
  one.rank = 1;
  one.sizes[0] = 1;
  one.strides[0] = 1;
  return one;
}

/// What the runtime computes for one scheme on one probe.
struct Reference {
  std::vector<uint8_t> data, scales;
  float amax = 0; ///< NVFP4: the tensor amax.
};

/// Runs the runtime's CPU quantizer (MX rowwise, compact scales).
LogicalResult runReference(QuantSchemeAttr scheme, Type inType,
                           const std::vector<uint64_t> &in, int64_t rows,
                           int64_t cols, Reference &ref, std::string &error) {
  fusion_rt_quant_scheme s;
  fusion_rt_quant_scheme_init(&s);
  s.format = static_cast<int32_t>(scheme.getFormat());
  s.scale_rounding = static_cast<int32_t>(scheme.getRounding());
  s.nan_policy = static_cast<int32_t>(scheme.getNanPolicy());
  s.zero_scale = static_cast<int32_t>(scheme.getZeroScale());
  s.nvfp4_recipe = static_cast<int32_t>(scheme.getRecipe());
  s.direction = FUSION_RT_ROWWISE;
  const bool nv = scheme.getFormat() == QuantFormat::nvfp4;
  int64_t nb = nv ? (cols + 15) / 16 : (cols + 31) / 32;
  ReferenceInput ri(inType, in, rows, cols);
  const fusion_rt_tensor &input = ri.view;
  const bool fp4 = nv || scheme.getFormat() == QuantFormat::mxfp4;
  // FP4 codes are packed two per byte: a row owns ceil(cols / 2) bytes.
  const int64_t rowBytes = fp4 ? (cols + 1) / 2 : cols;
  ref.data.assign(rows * rowBytes, 0);
  ref.scales.assign(rows * nb, 0);
  fusion_rt_quant_outputs out;
  fusion_rt_quant_outputs_init(&out);
  out.rowwise_data = input;
  out.rowwise_data.data = ref.data.data();
  out.rowwise_data.dtype = fp4 ? FUSION_RT_F4E2M1
                           : scheme.getFormat() == QuantFormat::mxfp8_e5m2
                               ? FUSION_RT_F8E5M2
                               : FUSION_RT_F8E4M3;
  out.rowwise_data.strides[0] = fp4 ? 2 * rowBytes : cols;
  out.rowwise_scales = input;
  out.rowwise_scales.data = ref.scales.data();
  out.rowwise_scales.dtype = nv ? FUSION_RT_F8E4M3 : FUSION_RT_E8M0;
  out.rowwise_scales.sizes[1] = nb;
  out.rowwise_scales.strides[0] = nb;
  // NVFP4 also writes the tensor amax and its decode scale.
  float scaleInv = 0;
  if (nv) {
    out.amax = scalarView(&ref.amax);
    out.scale_inv = scalarView(&scaleInv);
  }
  return callReference(input, s, out, error);
}

/// What the runtime computes for a per-tensor FP8 scheme on one probe.
struct TensorReference {
  std::vector<uint8_t> data;
  float amax = 0, scaleInv = 0;
};

/// Runs the runtime's CPU quantizer (FP8 per tensor: current scaling, or
/// delayed scaling with `*scale` where given).
LogicalResult runTensorReference(QuantSchemeAttr scheme, Type inType,
                                 const std::vector<uint64_t> &in, int64_t rows,
                                 int64_t cols, TensorReference &ref,
                                 std::string &error, float *scale = nullptr) {
  fusion_rt_quant_scheme s;
  fusion_rt_quant_scheme_init(&s);
  s.format = static_cast<int32_t>(scheme.getFormat());
  s.direction = FUSION_RT_ROWWISE;
  s.tensor_scaling = scale ? FUSION_RT_TENSOR_SCALING_DELAYED
                           : FUSION_RT_TENSOR_SCALING_CURRENT;
  s.amax_epsilon = static_cast<float>(scheme.getEpsilon().convertToDouble());
  s.force_pow2_scale = scheme.getPow2Scale() ? 1 : 0;
  if (!scale)
    s.nvfp4_recipe = static_cast<int32_t>(scheme.getRecipe());
  ReferenceInput ri(inType, in, rows, cols);
  const fusion_rt_tensor &input = ri.view;
  ref.data.assign(rows * cols, 0);
  fusion_rt_quant_outputs out;
  fusion_rt_quant_outputs_init(&out);
  out.rowwise_data = input;
  out.rowwise_data.data = ref.data.data();
  out.rowwise_data.dtype = scheme.getFormat() == QuantFormat::fp8_e5m2
                               ? FUSION_RT_F8E5M2
                               : FUSION_RT_F8E4M3;
  out.amax = scalarView(&ref.amax);
  out.scale_inv = scalarView(&ref.scaleInv);
  if (scale)
    out.scale = scalarView(scale);
  return callReference(input, s, out, error);
}

/// Element `linear` (row-major over `shape`) of `what` under `eval`; false,
/// with `why` naming what could not be evaluated, where it fails.
bool evalElement(TensorEvaluator &eval, Value what, ArrayRef<int64_t> shape,
                 int64_t linear, StringRef name, SmallVectorImpl<int64_t> &index,
                 EvalScalar &out, Decline &why) {
  TensorEvaluator::delinearize(linear, shape, index);
  FailureOr<EvalScalar> e = eval.element(what, index);
  if (failed(e)) {
    why = {DeclineRule::NotEvaluable, ("the exactness check cannot evaluate the " + name +
                             ": " + eval.getError())
                                .str()};
    return false;
  }
  out = *e;
  return true;
}

std::string hexByte(uint64_t b) { return llvm::formatv("{0:x-2}", b).str(); }

/// One element where the IR and a scheme disagree.
struct Mismatch {
  std::string what;
  unsigned count = 0;
  unsigned firstProbe = 0; ///< The probe of the first difference.
  /// Counts a difference found by `probe`; the first one is kept (its text
  /// built by `w`, called for that one only).
  void add(llvm::function_ref<std::string()> w, unsigned probe) {
    if (count++ == 0) {
      what = w();
      firstProbe = probe;
    }
  }
};

/// The first scheme that reproduced every probe; otherwise failure, with
/// `why` naming the scheme that came closest (passed the most probes, then
/// the fewest differences) and its first difference.
FailureOr<QuantSchemeAttr> firstAlive(ArrayRef<QuantSchemeAttr> schemes,
                                      ArrayRef<bool> alive,
                                      ArrayRef<Mismatch> mismatch, Decline &why) {
  for (auto [k, scheme] : llvm::enumerate(schemes))
    if (alive[k])
      return scheme;
  unsigned best = 0;
  for (unsigned k = 1; k < schemes.size(); ++k)
    if (std::make_pair(-int(mismatch[k].firstProbe), mismatch[k].count) <
        std::make_pair(-int(mismatch[best].firstProbe), mismatch[best].count))
      best = k;
  why = {DeclineRule::DiffersFromRuntime,
         llvm::formatv("closest is {0} ({1} differing elements in the "
                       "probes); first: {2}",
                       schemeName(schemes[best]), mismatch[best].count,
                       mismatch[best].what)
             .str()};
  return failure();
}

// ---- the pass -----------------------------------------------------------------

struct Specialized;

struct RaiseQuantizePass
    : public fusion::impl::RaiseQuantizeBase<RaiseQuantizePass> {
  using RaiseQuantizeBase::RaiseQuantizeBase;
  void runOnOperation() override;

private:
  remark::RemarkOpts remarkOpts(StringRef function) const {
    return remark::RemarkOpts::name("RaiseQuantize")
        .category("fusion")
        .function(function);
  }
  void decline(Location loc, StringRef function, const Decline &d) {
    ++numDeclined;
    std::lock_guard<std::mutex> lock(getRemarkMutex());
    remark::missed(loc, remarkOpts(function))
        << remark::reason("{0}", declineTag(d.rule).str())
        << remark::add("{0}", d.detail);
  }

  SmallVector<Candidate> delimit(Operation *castOp, bool packedFp4,
                                 Decline &why);
  SmallVector<Candidate> delimitPerTensor(Operation *castOp,
                                          Operation *reduction, Value data,
                                          Decline &why);
  SmallVector<Candidate> delimitDelayed(Operation *castOp, Value data,
                                        Decline &why);
  FailureOr<QuantSchemeAttr> identifyPerTensor(Candidate &c, Decline &why);
  void sweepTensorScale(Value xv, Value dataV, Value amaxV,
                        ArrayRef<QuantSchemeAttr> schemes,
                        SmallVectorImpl<bool> &alive,
                        SmallVectorImpl<Mismatch> &mismatch);
  FailureOr<QuantSchemeAttr> identifyDelayed(Candidate &c, Decline &why);
  void checkDelayedAmax(Candidate &c, QuantSchemeAttr scheme);
  void rewritePerTensor(Candidate &c, QuantSchemeAttr scheme);
  LogicalResult findScales(Candidate &c, DenseMap<Value, bool> &constMemo,
                           Decline &why);
  FailureOr<QuantSchemeAttr> identify(Candidate &c, Decline &why);
  FailureOr<QuantSchemeAttr> identifyBlockFP8(Candidate &c, Decline &why);
  void rewrite(Candidate &c, QuantSchemeAttr scheme);

  /// A candidate the check shows exact, and its scheme.
  struct Found {
    Candidate candidate;
    QuantSchemeAttr scheme;
    /// A dynamic last dimension of the input: its size in the two copies
    /// the quantizer was checked on (equal where the program fixes it, as a
    /// tensor.cast to a static size does); 0 where that dimension is static.
    int64_t checkedLast[2] = {0, 0};
    /// The size the copy gave the other dynamic dimensions.
    int64_t checkedLeading = 0;
  };
  /// The first candidate of the seed that identify() admits; else `why`
  /// (empty rule: no remark) and the region a declined FP4 quantizer owns.
  std::optional<Found> findRaisable(Operation *castOp, bool packedFp4,
                                    Decline &why,
                                    SmallVectorImpl<Operation *> &declined);
  /// The same for a seed with dynamic sizes, checked on `sp`; an input
  /// whose last dimension is dynamic also on `wide()` (that dimension fixed
  /// to another size; null if no such copy).
  std::optional<Found>
  findRaisableDynamic(Operation *castOp, bool packedFp4, Specialized &sp,
                      llvm::function_ref<Specialized *()> wide, Decline &why,
                      SmallVectorImpl<Operation *> &declined);
};

SmallVector<Candidate> RaiseQuantizePass::delimit(Operation *castOp,
                                                 bool packedFp4, Decline &why) {
  Value data = followReshapes(castOp->getResult(0));
  Operation *reduction = findReduction(castOp);
  // A quantizer whose scale a loop computes (a tm_tensor op written out):
  // its amax lies beyond the loop.
  Operation *loop = nullptr;
  if (!reduction)
    (void)findReduction(castOp, &loop);
  if (reduction && numElements(data) < 0) {
    why = {DeclineRule::RaiseUnsupportedShape,
           "the exactness check needs static shapes; this quantizer's data is " +
               llvm::formatv("{0}", data.getType()).str()};
    return {};
  }
  if (!reduction && loop) {
    why = {DeclineRule::NotEvaluable,
           "this " +
               std::string(
                   packedFp4
                       ? "i8 tensor (packed FP4 codes, if a quantizer)"
                       : "cast to " +
                             llvm::formatv("{0}", elementTypeOf(data)).str()) +
               " depends on an amax reduction through a loop (" +
               loop->getName().getStringRef().str() +
               ": a tm_tensor op written out by fusion-lower-tm-tensor, or "
               "one of the program's), which the raising does not look "
               "through"};
    why.region = {castOp};
    return {};
  }
  if (!reduction && !packedFp4) {
    // A cast of x times a given one-element scale: FP8 delayed scaling.
    SmallVector<Candidate> delayed = delimitDelayed(castOp, data, why);
    if (!delayed.empty() || why.rule != DeclineRule::None)
      return delayed;
  }
  if (!reduction) {
    why = {DeclineRule::NoAmaxReduction,
           "no reduction feeds this cast to " +
               llvm::formatv("{0}", elementTypeOf(data)).str() +
               ": a plain cast, not a scaled quantizer"};
    return {};
  }
  // One amax for the whole tensor: FP8 with a per-tensor scale
  // (torchao.float8 tensorwise, TE's current scaling).
  // (Every loop of such a reduction is a reduction loop; a block amax keeps
  // its row and block loops even where they have one iteration.)
  if (!packedFp4 &&
      cast<linalg::LinalgOp>(reduction).getNumParallelLoops() == 0)
    return delimitPerTensor(castOp, reduction, data, why);
  // Every value on the reduction's input chain from which the data alone is
  // computed, upstream first: identify() takes the first that reproduces a
  // runtime quantizer (a bf16 tensor quantized after an extf, or the bf16
  // rounding of an f32 one).
  DenseMap<Value, bool> constMemo;
  Value stray;
  SmallVector<Candidate> found;
  const SmallVector<Value> xs = inputCandidates(reduction);
  for (Value x : xs) {
    Type et = elementTypeOf(x);
    if (!et || !(et.isF32() || et.isBF16() || et.isF16()) ||
        numElements(x) != (packedFp4 ? 2 : 1) * numElements(data) ||
        numElements(x) <= 0)
      continue;
    Candidate c;
    c.packedFp4 = packedFp4;
    c.cast = castOp;
    c.data = data;
    c.reduction = reduction;
    c.x = x;
    if (failed(backwardSlice({data}, x, c.region, constMemo, stray)))
      continue;
    if (succeeded(findScales(c, constMemo, why)))
      found.push_back(std::move(c));
    else if (c.scales)
      why.region.assign(c.region.begin(), c.region.end());
  }
  // FP8 values with 1/16 of a float tensor's elements on the chain: the
  // e4m3 block scales of an NVFP4 quantizer (torchao's nvfp4_quantize).
  bool nvfp4Scales = false;
  if (!packedFp4 && isa<Float8E4M3FNType>(elementTypeOf(data)))
    for (Value x : xs)
      nvfp4Scales = nvfp4Scales || numElements(x) == 16 * numElements(data);
  if (found.empty() && why.rule == DeclineRule::None && nvfp4Scales) {
    why = {DeclineRule::UnsupportedFormat,
           "these FP8 values are the e4m3 block scales of an NVFP4 quantizer "
           "(blocks of 16) whose codes are not packed two per byte into an "
           "i8 tensor that the program uses"};
    return found;
  }
  if (found.empty() && why.rule == DeclineRule::None) {
    why = {DeclineRule::NoQuantizerInput,
           "found no single bf16/f16/f32 tensor of the data's size that the "
           "quantized data is computed from"};
    if (stray)
      why.detail += llvm::formatv("; it also reads a value of type {0}",
                                  stray.getType())
                        .str();
  }
  return found;
}

/// The value that `r` transposes when r swaps the last two dimensions of
/// one tensor and does nothing else: a linalg.transpose, or a generic that
/// is one (upstream isaTransposeOpInterface, as generalizing leaves it),
/// else null.
Value lastTwoTransposed(Value r) {
  Value in;
  std::optional<SmallVector<int64_t>> perm;
  if (auto t = r.getDefiningOp<linalg::TransposeOp>()) {
    in = t.getInput();
    perm = SmallVector<int64_t>(t.getPermutation());
  } else if (auto g = r.getDefiningOp<linalg::GenericOp>();
             g && g.hasPureTensorSemantics()) {
    perm = linalg::isaTransposeOpInterface(g);
    in = perm ? g.getDpsInputs()[0] : Value();
  }
  // A swap of the last two dimensions is its own inverse: either reading
  // of the permutation gives the same test.
  const int64_t n = perm ? int64_t(perm->size()) : 0;
  if (!in || n < 2 || (*perm)[n - 2] != n - 1 || (*perm)[n - 1] != n - 2)
    return Value();
  for (int64_t i = 0; i + 2 < n; ++i)
    if ((*perm)[i] != i)
      return Value();
  return in;
}

LogicalResult RaiseQuantizePass::findScales(Candidate &c,
                                            DenseMap<Value, bool> &constMemo,
                                            Decline &why) {
  Value stray;
  // The scales: a value computed from x alone, of MX scale size, that the
  // program uses and that depends on the same reduction.
  auto xType = cast<RankedTensorType>(c.x.getType());
  int64_t cols = xType.getShape().back();
  int64_t rows = xType.getNumElements() / std::max<int64_t>(cols, 1);
  int64_t scaleCount = rows * ((cols + 31) / 32);
  // Packed FP4 codes with e4m3 scales over blocks of 16: NVFP4.
  int64_t nvScaleCount = rows * ((cols + 15) / 16);
  // The same, swizzled (padded to 128-row by 4-block tiles).
  using fusion_rt::ceil_div, fusion_rt::round_up;
  int64_t swzCount = round_up(rows, 128) * round_up(ceil_div(cols, 32), 4);
  int64_t nvSwzCount = round_up(rows, 128) * round_up(ceil_div(cols, 16), 4);
  llvm::SetVector<Operation *> derived(c.region.begin(), c.region.end());
  SmallVector<Operation *> work;
  for (Operation *op : c.region)
    for (Value r : op->getResults())
      for (Operation *u : r.getUsers())
        work.push_back(u);
  SmallVector<Value> scaleCandidates;
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    Operation *top = topLevel(op);
    if (derived.contains(top) || !isRegionOp(top))
      continue;
    bool fromRegion = llvm::all_of(readValues(top), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return v == c.x || isConstantLike(v, constMemo) ||
             (def && derived.contains(def));
    });
    if (!fromRegion)
      continue;
    derived.insert(top);
    for (Value r : top->getResults())
      for (Operation *u : r.getUsers())
        work.push_back(u);
  }
  SmallVector<bool> nvfp4Scales;
  for (Operation *op : derived)
    for (Value r : op->getResults()) {
      if (r == c.data)
        continue;
      Type et = elementTypeOf(r);
      const int64_t n = numElements(r);
      const bool mxScales =
          (n == scaleCount || n == swzCount) && et &&
          (isa<Float8E8M0FNUType>(et) || et.isInteger(8));
      const bool nvScales = c.packedFp4 &&
                            (n == nvScaleCount || n == nvSwzCount) && et &&
                            isa<Float8E4M3FNType>(et);
      if (!mxScales && !nvScales)
        continue;
      bool escapes = llvm::any_of(r.getUsers(), [&](Operation *u) {
        return !derived.contains(u);
      });
      if (escapes) {
        scaleCandidates.push_back(r);
        nvfp4Scales.push_back(nvScales);
      }
    }
  if (scaleCandidates.empty() && !c.packedFp4) {
    // Float scales, one per row or per group of a row: FP8 rowwise
    // (torchao's axiswise) or 1x128 token groups (DeepSeek-V3): the FP8
    // block formats, whose scales are f32.
    for (Operation *op : derived)
      for (Value out : op->getResults()) {
        Value r = out;
        auto ft = dyn_cast_or_null<FloatType>(elementTypeOf(r));
        int64_t n = numElements(r);
        if (r == c.data || !ft || ft.getWidth() < 16 || n <= 0 ||
            n % rows != 0 || cols % (n / rows) != 0 || n >= rows * cols ||
            llvm::all_of(r.getUsers(),
                         [&](Operation *u) { return derived.contains(u); }))
          continue;
        // Scales returned transposed: the quantizer's are the transpose's
        // input (the same count; the check below compares every one).
        bool transposed = false;
        if (Value inner = lastTwoTransposed(r)) {
          Operation *def = inner.getDefiningOp();
          if (def && derived.contains(def) && numElements(inner) == n) {
            r = inner;
            transposed = true;
          }
        }
        if (!ft.isF32()) {
          why = {DeclineRule::UnsupportedFormat,
                 llvm::formatv("the scales are {0} {1} values, one per {2} "
                               "elements of a row; the FP8 block formats "
                               "keep f32 scales",
                               n, ft, cols / (n / rows))
                     .str()};
          return failure();
        }
        if (c.blockFP8 && c.scales != r) {
          why = {DeclineRule::NoScaleOutput,
                 "more than one f32 tensor looks like the block scales"};
          return failure();
        }
        c.blockFP8 = true;
        c.group = cols / (n / rows);
        c.scales = r;
        c.scalesTransposed = c.scalesTransposed || transposed;
      }
    if (c.blockFP8) {
      scaleCandidates.push_back(c.scales);
      nvfp4Scales.push_back(false);
    } else {
      // f32 scales of 2D tiles ([M/R, N/C], also with unit dims between,
      // as keepdim leaves them): DeepSeek-V3's 128x128 weight quantizer,
      // the FP8 block formats with block = RxC. R and C follow from the
      // count of tiles each way; the check decides whether the IR's tiles
      // are these.
      for (Operation *op : derived)
        for (Value r : op->getResults()) {
          auto rt = dyn_cast<RankedTensorType>(r.getType());
          if (r == c.data || !rt || !rt.hasStaticShape() ||
              !rt.getElementType().isF32() ||
              llvm::all_of(r.getUsers(),
                           [&](Operation *u) { return derived.contains(u); }))
            continue;
          SmallVector<int64_t> dims;
          for (int64_t d : rt.getShape())
            if (d != 1)
              dims.push_back(d);
          if (rt.getRank() == 2)
            dims.assign(rt.getShape().begin(), rt.getShape().end());
          // Tiles of the matrix as the program holds it: a 2-D input (a
          // reshaped view of it, such as [M/R, R, N/C, C], has other rows).
          const int64_t n = rt.getNumElements();
          if (cast<ShapedType>(c.x.getType()).getRank() != 2 ||
              dims.size() != 2 || n <= 1 || n % rows == 0 ||
              rows % dims[0] != 0 || cols % dims[1] != 0)
            continue;
          if (c.blockFP8 && c.scales != r) {
            why = {DeclineRule::NoScaleOutput,
                   "more than one f32 tensor looks like the 2D block scales"};
            return failure();
          }
          c.blockFP8 = true;
          c.blockRows = rows / dims[0];
          c.group = cols / dims[1];
          c.scales = r;
        }
      if (c.blockFP8) {
        scaleCandidates.push_back(c.scales);
        nvfp4Scales.push_back(false);
      }
    }
  }
  if (scaleCandidates.size() != 1) {
    why = {DeclineRule::NoScaleOutput,
           scaleCandidates.empty()
               ? "no 8-bit tensor of " + std::to_string(scaleCount) +
                     " block scales " +
                     (c.packedFp4 ? "(nor an e4m3 tensor of " +
                                        std::to_string(nvScaleCount) +
                                        " NVFP4 scales) "
                                  : std::string()) +
                     "computed from the input is used"
               : "more than one tensor looks like the block scales"};
    return failure();
  }
  c.scales = scaleCandidates.front();
  c.nvfp4 = nvfp4Scales.front();
  c.compactScales = c.blockFP8 || numElements(c.scales) ==
                                      (c.nvfp4 ? nvScaleCount : scaleCount);
  c.swizzledScales = !c.blockFP8 && numElements(c.scales) ==
                                        (c.nvfp4 ? nvSwzCount : swzCount);
  if (failed(backwardSlice({c.scales}, c.x, c.region, constMemo, stray))) {
    why = {DeclineRule::NoQuantizerInput, "the scales read a value other than the "
                                 "quantizer's input"};
    return failure();
  }
  // Nothing inside may be used outside, but the two results, except by a
  // check without results (torch-mlir's cf.assert, or a result-less linalg
  // op holding one after elementwise fusion split it off) and, for NVFP4,
  // values computed from the tensor amax alone (torchao's per-tensor scale).
  Value tensorAmax;
  if (c.nvfp4)
    for (Operation *op : c.region)
      if (auto l = dyn_cast<linalg::LinalgOp>(op))
        if (l->getNumResults() == 1 && l.getNumReductionLoops() > 0 &&
            numElements(l->getResult(0)) == 1)
          tensorAmax = l->getResult(0);
  for (Operation *op : c.region)
    for (Value r : op->getResults()) {
      if (r == c.data || r == c.scales)
        continue;
      bool read = false, nonCheck = false;
      std::string reader;
      for (Operation *u : r.getUsers()) {
        Operation *top = topLevel(u);
        if (c.region.contains(top))
          continue;
        read = true;
        const bool checkOnly =
            top->getNumResults() == 0 &&
            (isa<linalg::LinalgOp>(top) ||
             top->getName().getStringRef() == "cf.assert");
        if (!checkOnly && reader.empty())
          reader = u->getName().getStringRef().str();
        nonCheck = nonCheck || !checkOnly;
      }
      if (!read)
        continue;
      llvm::SetVector<Operation *> fromAmax;
      Value other;
      const bool ofAmax =
          tensorAmax &&
          succeeded(backwardSlice({r}, tensorAmax, fromAmax, constMemo, other));
      if (nonCheck && !ofAmax) {
        why = {DeclineRule::IntermediateHasAnotherUser,
               "'" + reader + "' outside the quantizer reads one of its " +
                   "values" +
                   (c.nvfp4 ? ", which is computed from its input other than "
                              "through the tensor amax"
                            : "")};
        return failure();
      }
      if (ofAmax) {
        c.readByNonCheck = c.readByNonCheck || nonCheck;
        c.amax = tensorAmax;
      }
    }
  return success();
}

SmallVector<Candidate>
RaiseQuantizePass::delimitPerTensor(Operation *castOp, Operation *reduction,
                                    Value data, Decline &why) {
  Value amax = reduction->getResult(0);
  if (numElements(amax) != 1) {
    why = {DeclineRule::UnsupportedFormat,
           "the amax reduction that scales this cast has no parallel loop "
           "but more than one result element"};
    return {};
  }
  DenseMap<Value, bool> constMemo;
  SmallVector<Candidate> found;
  Value stray;
  for (Value x : inputCandidates(reduction)) {
    Type et = elementTypeOf(x);
    if (!et || !(et.isF32() || et.isBF16() || et.isF16()) ||
        numElements(x) != numElements(data) || numElements(x) <= 0)
      continue;
    Candidate c;
    c.perTensor = true;
    c.cast = castOp;
    c.data = data;
    c.reduction = reduction;
    c.x = x;
    c.amax = amax;
    if (failed(backwardSlice({data}, x, c.region, constMemo, stray)) ||
        !c.region.contains(reduction))
      continue;
    // Values of the region that the program uses besides the data must be
    // computed from the amax alone (the scale torchao returns): they stay,
    // and read the raised op's amax.
    bool ok = true;
    for (Operation *op : c.region)
      for (Value r : op->getResults()) {
        if (r == c.data || !ok)
          continue;
        for (Operation *u : r.getUsers()) {
          if (c.region.contains(topLevel(u)))
            continue;
          llvm::SetVector<Operation *> fromAmax;
          Value other;
          if (failed(backwardSlice({r}, amax, fromAmax, constMemo, other))) {
            why = {DeclineRule::IntermediateHasAnotherUser,
                   "'" + u->getName().getStringRef().str() +
                       "' outside the quantizer reads one of its values, "
                       "which is computed from its input other than "
                       "through the amax"};
            ok = false;
          }
          break;
        }
      }
    if (ok)
      found.push_back(std::move(c));
  }
  if (found.empty() && why.rule == DeclineRule::None)
    why = {DeclineRule::NoQuantizerInput,
           "found no single bf16/f16/f32 tensor of the data's size that the "
           "quantized data and its per-tensor amax are computed from"};
  return found;
}

/// True if `v` is computed from `x` (through any ops; bounded).
bool dependsOn(Value v, Value x) {
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  while (!work.empty() && seen.size() < 4096) {
    Value u = work.pop_back_val();
    if (u == x)
      return true;
    if (!seen.insert(u).second)
      continue;
    if (Operation *def = u.getDefiningOp())
      for (Value r : readValues(def))
        work.push_back(r);
  }
  return !work.empty();
}

/// FP8 per tensor with a given scale: TE's delayed scaling (or a static
/// scale passed in) written in torch, `(x * scale).clamp(-max, max)
/// .to(fp8)`, where `scale` is a one-element f32 tensor that does not
/// depend on x (an argument: the scale TE keeps from its amax history).
/// The inputs tried are the values on the cast's input chain upstream of
/// the op that reads the scale (each op's one non-constant operand of the
/// data's size, the scale its only other non-constant operand), upstream
/// first. A tensor amax of the same input that the program computes beside
/// it (TE's amax for the history, `x.abs().amax()`) is offered to the
/// raised op; identifyDelayed takes it where the check shows it equal.
SmallVector<Candidate>
RaiseQuantizePass::delimitDelayed(Operation *castOp, Value data, Decline &why) {
  const int64_t n = numElements(data);
  if (n <= 1 || !isFloat8Data(elementTypeOf(data)))
    return {};
  DenseMap<Value, bool> constMemo;
  SmallVector<Value> chain;
  Value scale;
  size_t scaleAt = 0; // chain values from this index on are upstream of it
  // Constant multipliers of the chain (a static scale: a buffer exported as
  // a constant, a literal): the value, its f32, and the chain index after
  // the op that multiplies by it.
  struct ConstScale {
    Value v;
    float value;
    size_t at;
    float divisor; ///< x / divisor (0: a multiply)
  };
  SmallVector<ConstScale, 2> constScales;
  const float fmaxData =
      isa<Float8E5M2Type>(elementTypeOf(data)) ? 57344.0f : 448.0f;
  auto noteConstScale = [&](Operation *reader, Value v) {
    // A scalar f32 constant (or one-element f32 constant tensor) that the
    // op multiplies by; not a clamp bound (+-max), not 0 or 1.
    std::optional<float> constant = getF32ScalarConstant(v);
    if (!constant)
      return;
    const float f = *constant;
    if (!std::isfinite(f) || f == 0.0f || f == 1.0f ||
        std::fabs(f) == fmaxData || constScales.size() == 2 ||
        llvm::any_of(constScales,
                     [&](const ConstScale &cs) { return cs.v == v; }))
      return;
    // x * f: the scale f; x / f (vLLM's static FP8): the scale 1 / f, which
    // the check then compares with the division as written (equal where f
    // is a power of two).
    bool multiplies = false, divides = false;
    auto note = [&](Value w) {
      reader->walk([&](Operation *o) {
        if (auto m = dyn_cast<arith::MulFOp>(o))
          multiplies |= m.getLhs() == w || m.getRhs() == w;
        if (auto d = dyn_cast<arith::DivFOp>(o))
          divides |= d.getRhs() == w;
      });
    };
    note(v);
    if (auto g = dyn_cast<linalg::GenericOp>(reader))
      for (OpOperand *in : g.getDpsInputOperands())
        if (in->get() == v)
          note(g.getMatchingBlockArgument(in));
    if (multiplies == divides)
      return;
    const float scaleValue = multiplies ? f : 1.0f / f;
    if (std::isfinite(scaleValue) && scaleValue != 0.0f)
      constScales.push_back(
          {v, scaleValue, chain.size(), multiplies ? 0.0f : f});
  };
  Operation *op = castOp;
  for (unsigned i = 0; i < 16 && op && isRegionOp(op); ++i) {
    Value next;
    bool ends = false;
    for (Value v : readValues(op)) {
      if (v == next || (scale && v == scale))
        continue;
      if (isConstantLike(v, constMemo)) {
        noteConstScale(op, v);
        continue;
      }
      // A scalar read from a one-element tensor: that tensor is the scale.
      if (auto ex = v.getDefiningOp<tensor::ExtractOp>();
          ex && !isa<ShapedType>(v.getType()) &&
          numElements(ex.getTensor()) == 1) {
        if (scale && ex.getTensor() == scale)
          continue;
        v = ex.getTensor();
      }
      const int64_t m = numElements(v);
      if (m == 1 && !scale) {
        scale = v;
        scaleAt = chain.size();
        continue;
      }
      if (m == n && !next) {
        next = v;
        continue;
      }
      ends = true;
      break;
    }
    if (ends || !next)
      break;
    chain.push_back(next);
    op = next.getDefiningOp();
  }
  // No scale read from outside: a constant multiplier or divisor (static
  // scaling), if the chain has one.
  std::optional<float> constScale;
  float constDivisor = 0.0f;
  if (!scale && !constScales.empty()) {
    const ConstScale &cs = constScales.front();
    scale = cs.v;
    scaleAt = cs.at;
    constScale = cs.value;
    constDivisor = cs.divisor;
  }
  if (!scale)
    return {};
  auto scaleType = dyn_cast<RankedTensorType>(scale.getType());
  if (scaleType && !scaleType.getElementType().isF32()) {
    why = {DeclineRule::UnsupportedFormat,
           llvm::formatv("this cast to {0} multiplies by a one-element tensor "
                         "of type {1} that it does not compute (a delayed "
                         "scale?): the runtime's FP8 delayed scaling takes an "
                         "f32 scale",
                         elementTypeOf(data), scaleType)
               .str()};
    return {};
  }
  // A constant scale is materialized where the raised op goes.
  Operation *scaleDef = constScale ? nullptr : scale.getDefiningOp();
  // The function's tensor amaxes: reductions without parallel loops of one
  // float element (|x|, casts and stages before them); each candidate takes
  // the first whose input chain reaches its input.
  SmallVector<linalg::LinalgOp> tensorAmaxes;
  castOp->getParentOfType<func::FuncOp>().walk([&](linalg::LinalgOp l) {
    if (l.hasPureTensorSemantics() && l->getNumResults() == 1 &&
        l.getNumReductionLoops() != 0 && l.getNumParallelLoops() == 0 &&
        l.getNumDpsInputs() == 1 && numElements(l->getResult(0)) == 1 &&
        isa<FloatType>(elementTypeOf(l->getResult(0))))
      tensorAmaxes.push_back(l);
  });
  SmallVector<Candidate> found;
  for (size_t j = chain.size(); j-- > scaleAt;) {
    Value x = chain[j];
    Type et = elementTypeOf(x);
    if (!et || !(et.isF32() || et.isBF16() || et.isF16()) ||
        dependsOn(scale, x))
      continue;
    if (scaleDef && x.getDefiningOp() &&
        scaleDef->getBlock() != x.getDefiningOp()->getBlock())
      continue;
    Candidate c;
    c.perTensor = c.delayed = true;
    c.cast = castOp;
    c.data = data;
    c.x = x;
    c.scale = scale;
    c.constScale = constScale;
    c.constDivisor = constDivisor;
    Value stray;
    if (failed(backwardSlice({data}, x, c.region, constMemo, stray, scale)))
      continue;
    // The program's tensor amax of x.
    for (linalg::LinalgOp l : tensorAmaxes) {
      if (!llvm::is_contained(inputCandidates(l), x))
        continue;
      llvm::SetVector<Operation *> slice;
      Value other;
      if (failed(backwardSlice({l->getResult(0)}, x, slice, constMemo, other)))
        continue;
      // The raised op, placed after the scale, must come before the
      // amax's readers.
      if (scaleDef &&
          llvm::any_of(l->getResult(0).getUsers(), [&](Operation *u) {
            Operation *top = topLevel(u);
            return top->getBlock() != scaleDef->getBlock() ||
                   top->isBeforeInBlock(scaleDef);
          })) {
        c.note = "; the program's tensor amax of its input stays a "
                 "reduction of its own: it is read before the scale is "
                 "defined";
        continue;
      }
      c.amax = l->getResult(0);
      c.amaxRegion = std::move(slice);
      break;
    }
    found.push_back(std::move(c));
  }
  return found;
}

/// A copy of a quantizer region on an input with fewer rows (leading
/// sizes), when the region's meaning does not depend on them: the check of a
/// quantizer that reads the whole tensor (a per-tensor amax) evaluates the
/// copy instead of every element of the original.
///
/// Each dimension of each tensor in the region is described by its factors
/// in row-major order ("atoms"): a leading dimension of the input (which
/// shrinks in the copy) or a fixed size. The input's dimensions are atoms of
/// their own; linalg ops carry atoms through their indexing maps (dimension
/// and constant results only), reshapes concatenate and split them (a fixed
/// size splits, an input dimension does not), slices keep them where they
/// take a whole dimension or every s-th element of one whose innermost
/// fixed factor s divides. Any other tensor op, a body that reads its
/// position into a result the region uses (linalg.index) or a tensor, a
/// non-splat constant with a shrinking dimension, or two uses that disagree
/// leaves no copy. Such a region computes on the copy what the original
/// computes on the same rows: elementwise steps, reductions (over rows
/// too), and reshapes that move rows as whole units. `x`, `data`, `scales`
/// and `amax` of the copy are returned in `map`.
struct SmallCopy {
  OwningOpRef<ModuleOp> module;
  IRMapping map;
};

std::string sizeDependence(const llvm::SetVector<Operation *> &region);

/// One factor of a dimension: input dimension `dim` (shrinking) or a fixed
/// `size` (dim < 0). With `tile` > 0 the copy has small * tile + rem of it
/// (`size` here): rows that are not a whole number of tiles (the whole
/// dimension, n * tile + rem rows of which the n whole tiles shrink), and
/// the whole tiles such rows are padded to (paddedTiles).
struct Atom {
  int64_t dim, size;
  int64_t tile = 0, rem = 0;
  bool operator==(const Atom &o) const {
    return dim == o.dim && size == o.size && tile == o.tile && rem == o.rem;
  }
};

/// The size of atom `t` in the copy whose input dimensions are `small`.
int64_t smallSize(Atom t, ArrayRef<int64_t> small) {
  if (t.dim < 0)
    return t.size;
  return t.tile > 0 ? small[t.dim] * t.tile + t.rem : small[t.dim];
}
using Atoms = SmallVector<Atom, 2>;
using DimAtoms = SmallVector<Atoms, 4>;

/// `a` with unit fixed factors dropped and adjacent fixed factors merged.
Atoms canonical(ArrayRef<Atom> a) {
  Atoms out;
  for (Atom t : a) {
    if (t.dim < 0 && t.size == 1)
      continue;
    if (t.dim < 0 && !out.empty() && out.back().dim < 0)
      out.back().size *= t.size;
    else
      out.push_back(t);
  }
  return out;
}

bool hasInputDim(ArrayRef<Atom> a) {
  return llvm::any_of(a, [](Atom t) { return t.dim >= 0; });
}

/// The tiles of rows `src` (P fixed rows, then one atom of k whole tiles and
/// r rows) padded from `size` to `padded` rows, the fewest whole tiles: an
/// atom of P * k + c tiles with c = ceil(P * r / tile), k being the copy's
/// whole tiles in the copy (smallSize: P tiles a step, c more). None when
/// `src` has another form or `padded` is not those tiles.
std::optional<Atom> paddedTiles(ArrayRef<Atom> src, int64_t size,
                                int64_t padded) {
  if (src.empty() || src.back().tile <= 0 || src.back().rem <= 0)
    return std::nullopt;
  int64_t p = 1;
  for (Atom t : src.drop_back()) {
    if (t.dim >= 0)
      return std::nullopt;
    p *= t.size;
  }
  const Atom rows = src.back();
  const int64_t tile = rows.tile;
  const int64_t c = (p * rows.rem + tile - 1) / tile;
  if (padded != llvm::divideCeilSigned(size, tile) * tile)
    return std::nullopt;
  return Atom{rows.dim, padded / tile, p, c};
}

/// Splits `src` (one dimension's factors) into dimensions of `sizes`.
FailureOr<DimAtoms> splitAtoms(Atoms src, ArrayRef<int64_t> sizes) {
  DimAtoms out;
  size_t i = 0;
  for (int64_t s : sizes) {
    Atoms d;
    int64_t rem = s;
    while (rem > 1) {
      if (i >= src.size())
        return failure();
      Atom &h = src[i];
      if (rem % h.size == 0) {
        d.push_back(h);
        rem /= h.size;
        ++i;
      } else if (h.dim < 0 && h.size % rem == 0) {
        d.push_back({-1, rem});
        h.size /= rem;
        rem = 1;
      } else {
        return failure();
      }
    }
    out.push_back(canonical(d));
  }
  if (i != src.size())
    return failure();
  return out;
}

/// `rowGranule` / `colGranule` > 1: the rows (the last dimension) shrink in
/// whole granules of that many, for regions that split them into tiles
/// (torchao's to_blocked: 128-row tiles, 4 blocks of scales per tile row).
/// The copy keeps two granules of each, so that an order of the tiles is
/// seen (one tile would hide a transposed tile order).
FailureOr<SmallCopy> copyOnSmallInput(const Candidate &c, bool shrinkLast,
                                      std::string &failure_,
                                      int64_t rowGranule = 1,
                                      int64_t colGranule = 1) {
  auto fail = [&](const Twine &why) {
    failure_ = why.str();
    return failure();
  };
  auto xType = cast<RankedTensorType>(c.x.getType());
  const int64_t rank = xType.getRank();
  if (rank < 1 || !xType.hasStaticShape())
    return fail("the input has no static shape");
  SmallVector<int64_t> granule(rank, 1);
  if (rank >= 2)
    granule[rank - 2] = rowGranule;
  if (shrinkLast)
    granule[rank - 1] = colGranule;
  // Rows (the dimension before the last) that are not a whole number of
  // tiles keep their partial tile: the copy has one whole tile and it
  // (torchao's to_blocked pads the scales to whole tiles; fewer rows than a
  // tile do not shrink).
  const int64_t rowDim = rank >= 2 ? rank - 2 : -1;
  auto partialRows = [&](int64_t d) {
    return d == rowDim && granule[d] > 1 &&
           xType.getDimSize(d) % granule[d] != 0;
  };
  for (int64_t d = 0; d < rank; ++d)
    if (xType.getDimSize(d) % granule[d] != 0 && !partialRows(d))
      return fail("a dimension is not a whole number of tiles");
  SmallVector<int64_t> small(rank, 1);
  if (shrinkLast)
    small[rank - 1] = colGranule > 1 ? 2 : 64;
  else
    small[rank - 1] = xType.getShape().back();
  if (rank >= 2)
    small[rank - 2] = rowGranule > 1 ? 2 : 4;
  for (int64_t d = 0; d < rank; ++d)
    small[d] = std::min(small[d], xType.getDimSize(d) / granule[d]);
  if (rowDim >= 0 && partialRows(rowDim))
    small[rowDim] = std::min<int64_t>(small[rowDim], 1);

  // The ops to copy: the region and the constant-like ops it reads.
  llvm::SetVector<Operation *> ops(c.region.begin(), c.region.end());
  for (size_t i = 0; i < ops.size(); ++i)
    for (Value v : readValues(ops[i]))
      if (Operation *def = v.getDefiningOp())
        if (v != c.x && !ops.contains(def)) {
          if (def->getBlock() != c.region.front()->getBlock())
            return fail("the region reads a value defined elsewhere");
          ops.insert(def);
        }
  SmallVector<Operation *> order(ops.begin(), ops.end());
  llvm::sort(order, [](Operation *a, Operation *b) {
    return a->getBlock() == b->getBlock() ? a->isBeforeInBlock(b) : a < b;
  });
  // Factors are positive sizes: every tensor static and non-empty.
  for (Operation *op : order)
    for (Type t : llvm::concat<const Type>(op->getOperandTypes(),
                                           op->getResultTypes()))
      if (auto rt = dyn_cast<ShapedType>(t))
        if (!rt.hasStaticShape() || llvm::is_contained(rt.getShape(), 0))
          return fail("a tensor in the region has a dynamic or zero size");

  // The factors of every tensor dimension, to a fixed point.
  DenseMap<Value, DimAtoms> atoms;
  {
    DimAtoms in;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = xType.getDimSize(d);
      // Dimensions before rows with a partial tile keep their size: rows
      // flattened with them (a 3-D input's scales as [B * T, N / 16]) are
      // then as many modulo a tile in the copy as here, so that padding to
      // whole tiles adds the same number of rows.
      bool shrinks = (d < rank - 1 || shrinkLast) && size > granule[d] &&
                     !(rowDim >= 0 && d < rowDim && partialRows(rowDim));
      if (partialRows(d)) {
        in.push_back(shrinks ? Atoms{Atom{d, size, granule[d],
                                          size % granule[d]}}
                             : Atoms{Atom{-1, size}});
        continue;
      }
      in.push_back(canonical({shrinks ? Atom{d, size / granule[d]}
                                      : Atom{-1, size / granule[d]},
                              Atom{-1, granule[d]}}));
    }
    atoms[c.x] = in;
  }
  bool changed = true, conflict = false;
  auto known = [&](Value v) -> const DimAtoms * {
    auto it = atoms.find(v);
    return it == atoms.end() ? nullptr : &it->second;
  };
  auto assign = [&](Value v, DimAtoms a) {
    if (const DimAtoms *k = known(v)) {
      conflict |= *k != a;
      return;
    }
    atoms[v] = std::move(a);
    changed = true;
  };
  auto fixedAtoms = [](Value v) {
    DimAtoms a;
    for (int64_t s : cast<RankedTensorType>(v.getType()).getShape())
      a.push_back(canonical({Atom{-1, s}}));
    return a;
  };
  auto tensors = [](ValueRange vs) {
    SmallVector<Value> out;
    for (Value v : vs)
      if (auto t = dyn_cast<RankedTensorType>(v.getType()))
        if (t.getRank() > 0)
          out.push_back(v);
    return out;
  };
  std::string unsupported;
  for (unsigned iter = 0; changed && !conflict && iter < 64; ++iter) {
    changed = false;
    for (Operation *op : order) {
      if (auto l = dyn_cast<linalg::LinalgOp>(op)) {
        // Loop dimensions' factors from any operand or result known.
        SmallVector<std::optional<Atoms>> loops(l.getNumLoops());
        SmallVector<std::pair<Value, AffineMap>> views;
        for (OpOperand &o : op->getOpOperands())
          if (isa<RankedTensorType>(o.get().getType()))
            views.push_back({o.get(), l.getMatchingIndexingMap(&o)});
        for (auto [r, init] : llvm::zip(op->getResults(), l.getDpsInitsMutable()))
          views.push_back({r, l.getMatchingIndexingMap(&init)});
        for (auto [v, m] : views) {
          const DimAtoms *k = known(v);
          if (!k)
            continue;
          for (auto [p, e] : llvm::enumerate(m.getResults())) {
            if (auto d = dyn_cast<AffineDimExpr>(e)) {
              auto &slot = loops[d.getPosition()];
              if (!slot)
                slot = (*k)[p];
              else
                conflict |= *slot != (*k)[p];
            } else if (!isa<AffineConstantExpr>(e) || hasInputDim((*k)[p])) {
              unsupported = "an indexing map other than dimensions and "
                            "constants over the input's rows";
            }
          }
        }
        for (auto [v, m] : views) {
          DimAtoms a;
          bool all = true;
          auto shape = cast<RankedTensorType>(v.getType()).getShape();
          for (auto [p, e] : llvm::enumerate(m.getResults())) {
            auto d = dyn_cast<AffineDimExpr>(e);
            if (d && loops[d.getPosition()]) {
              a.push_back(*loops[d.getPosition()]);
            } else if (!d) {
              a.push_back(canonical({Atom{-1, shape[p]}}));
            } else {
              all = false;
            }
          }
          if (all && !m.getResults().empty())
            assign(v, a);
        }
        continue;
      }
      if (auto e = dyn_cast<tensor::ExpandShapeOp>(op)) {
        if (const DimAtoms *k = known(e.getSrc())) {
          DimAtoms a(e.getResultType().getRank());
          auto outShape = e.getResultType().getShape();
          for (auto [i, group] : llvm::enumerate(e.getReassociationIndices())) {
            SmallVector<int64_t> sizes;
            for (int64_t d : group)
              sizes.push_back(outShape[d]);
            FailureOr<DimAtoms> parts = splitAtoms((*k)[i], sizes);
            if (failed(parts)) {
              unsupported = "a reshape that splits the input's rows";
              break;
            }
            for (auto [d, p] : llvm::zip(group, *parts))
              a[d] = p;
          }
          if (unsupported.empty())
            assign(e.getResult(), a);
        }
        continue;
      }
      if (auto cs = dyn_cast<tensor::CollapseShapeOp>(op)) {
        if (const DimAtoms *k = known(cs.getSrc())) {
          DimAtoms a;
          for (const ReassociationIndices &group :
               cs.getReassociationIndices()) {
            Atoms joined;
            for (int64_t d : group)
              joined.append((*k)[d]);
            a.push_back(canonical(joined));
          }
          assign(cs.getResult(), a);
        }
        continue;
      }
      if (isa<tensor::CastOp, tensor::BitcastOp>(op)) {
        if (const DimAtoms *k = known(op->getOperand(0)))
          assign(op->getResult(0), *k);
        else if (const DimAtoms *r = known(op->getResult(0)))
          assign(op->getOperand(0), *r);
        continue;
      }
      if (auto s = dyn_cast<tensor::ExtractSliceOp>(op)) {
        const DimAtoms *k = known(s.getSource());
        if (!k)
          continue;
        if (!s.getOffsets().empty() || !s.getSizes().empty() ||
            !s.getStrides().empty()) {
          unsupported = "a slice with dynamic offsets, sizes or strides";
          continue;
        }
        llvm::SmallBitVector dropped = s.getDroppedDims();
        auto srcShape = s.getSourceType().getShape();
        DimAtoms a;
        for (int64_t d = 0; d < s.getSourceType().getRank(); ++d) {
          int64_t off = s.getStaticOffsets()[d], size = s.getStaticSizes()[d],
                  stride = s.getStaticStrides()[d];
          Atoms src = (*k)[d];
          Atoms res;
          if (!hasInputDim(src)) {
            res = canonical({Atom{-1, size}});
          } else if (off == 0 && stride == 1 && size == srcShape[d]) {
            res = src;
          } else if (stride > 1 && off < stride && src.back().dim < 0 &&
                     src.back().size % stride == 0 &&
                     size * stride == srcShape[d]) {
            res = src;
            res.back().size /= stride;
            res = canonical(res);
          } else {
            unsupported = "a slice of part of the input's rows";
            break;
          }
          if (!dropped.test(d))
            a.push_back(res);
        }
        if (unsupported.empty())
          assign(s.getResult(), a);
        continue;
      }
      // A tensor written at the start of a constant or an empty tensor as
      // large or larger (torchao's to_blocked pads its scales to whole
      // 128-row tiles: zeros, then the scales inserted): dimensions of the
      // same size keep their factors; rows of whole tiles and a partial one,
      // after P fixed rows each (P = 1, or a 3-D input's batch flattened
      // with them), become whole tiles: k tiles and r rows a batch pad to
      // P * k + ceil(P * r / tile) tiles, an atom of P tiles a step of k and
      // that many more.
      auto ins = dyn_cast<tensor::InsertSliceOp>(op);
      const DimAtoms *k = ins ? known(ins.getSource()) : nullptr;
      if (k && llvm::any_of(*k, [](const Atoms &a) { return hasInputDim(a); })) {
        auto srcShape = ins.getSourceType().getShape();
        auto dstShape = ins.getDestType().getShape();
        Operation *dest = ins.getDest().getDefiningOp();
        // (Every tensor of the region is static: checked above.)
        if (ins.getSourceType().getRank() != ins.getDestType().getRank() ||
            llvm::any_of(ins.getStaticOffsets(),
                         [](int64_t o) { return o != 0; }) ||
            llvm::any_of(ins.getStaticStrides(),
                         [](int64_t s) { return s != 1; }) ||
            !dest || !isa<arith::ConstantOp, tensor::EmptyOp>(dest)) {
          unsupported = "'tensor.insert_slice' writes the input's rows other "
                        "than at the start of a constant or an empty tensor";
          continue;
        }
        DimAtoms a;
        for (int64_t d = 0; d < ins.getSourceType().getRank(); ++d) {
          const Atoms &src = (*k)[d];
          if (!hasInputDim(src)) {
            a.push_back(canonical({Atom{-1, dstShape[d]}}));
          } else if (srcShape[d] == dstShape[d]) {
            a.push_back(src);
          } else if (std::optional<Atom> tiles =
                         paddedTiles(src, srcShape[d], dstShape[d])) {
            a.push_back({*tiles, Atom{-1, src.back().tile}});
          } else {
            unsupported = "a padding of the input's rows other than to the "
                          "fewest whole tiles";
            break;
          }
        }
        if (unsupported.empty()) {
          assign(ins.getResult(), a);
          assign(ins.getDest(), a);
        }
        continue;
      }
      // Constants, empty tensors and any other op: every tensor it reads or
      // makes has a size of its own.
      for (Value v : tensors(op->getOperands())) {
        if (const DimAtoms *k = known(v))
          if (llvm::any_of(*k, [](const Atoms &a) { return hasInputDim(a); }))
            unsupported = "'" + op->getName().getStringRef().str() +
                          "' reads the input's rows";
      }
      if (!isa<arith::ConstantOp, tensor::EmptyOp>(op))
        for (Value v : tensors(op->getResults()))
          assign(v, fixedAtoms(v));
    }
    if (!unsupported.empty())
      return fail(unsupported);
  }
  if (conflict)
    return fail("two uses of a value disagree on its rows");

  // A body that reads its position into a result the region uses, or a
  // tensor, is not the same function on fewer rows.
  for (Operation *op : order) {
    if (!isa<linalg::LinalgOp>(op))
      continue;
    bool tensorRead = false;
    op->walk([&](Operation *inner) {
      if (inner != op && llvm::any_of(inner->getOperandTypes(),
                                      llvm::IsaPred<ShapedType>))
        tensorRead = true;
    });
    if (tensorRead)
      return fail("a body reads a tensor");
  }
  if (std::string dep = sizeDependence(ops); !dep.empty())
    return fail(dep);

  // The copy's types.
  auto newType = [&](Value v) -> Type {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || t.getRank() == 0)
      return v.getType();
    const DimAtoms *k = known(v);
    if (!k)
      return v.getType(); // Unconstrained: its own size.
    SmallVector<int64_t> shape;
    for (const Atoms &a : *k) {
      int64_t n = 1;
      for (Atom t : a)
        n *= smallSize(t, small);
      shape.push_back(n);
    }
    return RankedTensorType::get(shape, t.getElementType(), t.getEncoding());
  };
  MLIRContext *ctx = c.x.getContext();
  Location loc = c.x.getLoc();
  SmallCopy copy;
  copy.module = ModuleOp::create(loc);
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(copy.module->getBody());
  auto fn = func::FuncOp::create(b, loc, "small",
                                 b.getFunctionType({newType(c.x)}, {}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  copy.map.map(c.x, entry->getArgument(0));
  for (Operation *op : order) {
    for (Value v : readValues(op))
      if (!copy.map.contains(v))
        return fail("the region reads a value it does not compute");
    Operation *clone = nullptr;
    if (auto k = dyn_cast<arith::ConstantOp>(op)) {
      Type t = newType(k.getResult());
      Attribute value = k.getValue();
      if (t != k.getType()) {
        auto dense = dyn_cast<DenseElementsAttr>(value);
        if (!dense || !dense.isSplat())
          return fail("a constant that is not a splat has the input's rows");
        value = dense.resizeSplat(cast<ShapedType>(t));
      }
      clone = arith::ConstantOp::create(b, loc, cast<TypedAttr>(value));
    } else if (auto e = dyn_cast<tensor::ExpandShapeOp>(op)) {
      clone = tensor::ExpandShapeOp::create(b, e.getLoc(),
                                            newType(e.getResult()),
                                            copy.map.lookup(e.getSrc()),
                                            e.getReassociationIndices());
    } else if (auto ins = dyn_cast<tensor::InsertSliceOp>(op)) {
      auto st = cast<RankedTensorType>(newType(ins.getSource()));
      SmallVector<OpFoldResult> sizes;
      for (int64_t size : st.getShape())
        sizes.push_back(b.getIndexAttr(size));
      clone = tensor::InsertSliceOp::create(
          b, ins.getLoc(), copy.map.lookup(ins.getSource()),
          copy.map.lookup(ins.getDest()), ins.getMixedOffsets(), sizes,
          ins.getMixedStrides());
    } else if (auto s = dyn_cast<tensor::ExtractSliceOp>(op)) {
      auto rt = cast<RankedTensorType>(newType(s.getResult()));
      llvm::SmallBitVector dropped = s.getDroppedDims();
      SmallVector<OpFoldResult> sizes;
      for (int64_t d = 0, r = 0; d < s.getSourceType().getRank(); ++d)
        sizes.push_back(b.getIndexAttr(dropped.test(d) ? 1
                                                       : rt.getDimSize(r++)));
      clone = tensor::ExtractSliceOp::create(
          b, s.getLoc(), rt, copy.map.lookup(s.getSource()),
          s.getMixedOffsets(), sizes, s.getMixedStrides());
    } else {
      clone = b.clone(*op, copy.map);
      for (auto [old, neu] : llvm::zip(op->getResults(), clone->getResults()))
        neu.setType(newType(old));
    }
    for (auto [old, neu] : llvm::zip(op->getResults(), clone->getResults()))
      copy.map.map(old, neu);
  }
  func::ReturnOp::create(b, loc);
  for (Value v : {c.data, c.scales, c.amax})
    if (v && !copy.map.contains(v))
      return fail("the quantizer's results are not in its region");
  // Quietly, and for this thread only: a handler that claimed every
  // diagnostic would swallow the remarks of the functions other threads
  // raise meanwhile.
  if (failed(verifyQuietly(*copy.module)))
    return fail("the copy on fewer rows does not verify");
  return copy;
}

FailureOr<QuantSchemeAttr> RaiseQuantizePass::identifyPerTensor(Candidate &c,
                                                                Decline &why) {
  MLIRContext *ctx = &getContext();
  // The check runs on a copy of the region on a small input where the
  // region's meaning does not depend on the size, else on the region itself.
  std::string noCopy;
  FailureOr<SmallCopy> small = copyOnSmallInput(c, /*shrinkLast=*/true, noCopy);
  Value xv = succeeded(small) ? small->map.lookup(c.x) : c.x;
  Value dataV = succeeded(small) ? small->map.lookup(c.data) : c.data;
  Value amaxV = succeeded(small) ? small->map.lookup(c.amax) : c.amax;
  auto xType = cast<RankedTensorType>(xv.getType());
  auto dType = cast<RankedTensorType>(dataV.getType());
  auto aType = cast<RankedTensorType>(amaxV.getType());
  const int64_t n = xType.getNumElements();
  if (n > kPerTensorLimit) {
    why = {DeclineRule::RaiseUnsupportedShape,
           llvm::formatv("the exactness check of a per-tensor quantizer "
                         "evaluates every element (the amax reads them all): "
                         "{0} elements exceed its limit of {1}, and it has no "
                         "copy on fewer rows: {2}",
                         n, kPerTensorLimit, noCopy)
               .str()};
    return failure();
  }
  const int64_t cols = xType.getShape().back(), rows = n / cols;
  Type xt = xType.getElementType();
  Type at = aType.getElementType();
  if (!isa<FloatType>(at)) {
    why = {DeclineRule::UnsupportedFormat, "the per-tensor amax is not a float"};
    return failure();
  }
  QuantFormat format = isa<Float8E5M2Type>(dType.getElementType())
                           ? QuantFormat::fp8_e5m2
                           : QuantFormat::fp8_e4m3;
  // The runtime's rule with no epsilon, and with every small positive
  // constant of the region as the epsilon (torchao clamps the amax at 1e-12).
  SmallVector<double> epsilons{0.0};
  for (Operation *op : c.region)
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        auto k = v.getDefiningOp<arith::ConstantOp>();
        auto f = k ? dyn_cast<FloatAttr>(k.getValue()) : FloatAttr();
        double d = f ? f.getValueAsDouble() : 0.0;
        // As the runtime holds it: an f32.
        d = static_cast<double>(static_cast<float>(d));
        if (d > 0 && d < 1e-3 && !llvm::is_contained(epsilons, d))
          epsilons.push_back(d);
      }
    });
  SmallVector<QuantSchemeAttr> schemes;
  QuantSchemeAttr base = QuantSchemeAttr::get(ctx, format, QuantDirection::rowwise);
  // Each also with the scale truncated to a power of two (TE's option),
  // and with the scale (1 / amax) * max (torch's `max / amax` on an f32
  // tensor: the `reciprocal` recipe) after the correctly rounded quotient.
  for (Nvfp4Recipe recipe : {Nvfp4Recipe::te, Nvfp4Recipe::reciprocal})
    for (bool pow2 : {false, true})
      for (double e : epsilons)
        schemes.push_back(QuantSchemeAttr::get(
            ctx, format, QuantDirection::rowwise, base.getBlockRows(),
            base.getBlockCols(), base.getRounding(), base.getNanPolicy(),
            base.getColwiseLayout(), base.getScaleLayout(),
            base.getElemRounding(), base.getTensorScaling(),
            base.getZeroScale(), llvm::APFloat(e), pow2, recipe));

  std::vector<uint64_t> probe;
  // Every probe evaluates the whole tensor (the amax reads every element):
  // a budget of steps per element and probe.
  TensorEvaluator eval(probeLeaf(xv, xType.getShape(), probe),
                       int64_t(1000) * n * kTensorProbes + 1000000);
  eval.setSaturatingFloat8Casts(saturatingCasts);
  eval.setWrappingIntCasts(wrappingIntCasts);
  SmallVector<Mismatch> mismatch(schemes.size());
  SmallVector<bool> alive(schemes.size(), true);
  SmallVector<int64_t> index;
  const auto dSem = &cast<FloatType>(dType.getElementType()).getFloatSemantics();
  const auto aSem = &cast<FloatType>(at).getFloatSemantics();
  const float fmax = format == QuantFormat::fp8_e5m2 ? 57344.0f : 448.0f;
  for (unsigned kind = 0; kind < kTensorProbes; ++kind) {
    std::vector<float> values = makeTensorProbe(kind, n, finiteInputs, fmax);
    probe.resize(n);
    probeBits(values, xt, finiteInputs, probe);
    // Under the finite-inputs contract (fast-math ninf) a tensor whose scale
    // max / amax overflows f32 (amax below max / FLT_MAX, about 1.3e-36: f32
    // subnormals only) is outside the domain: a hand-written TE rule
    // `where(amax > 0, max / amax, 1)` gives an infinite scale there, where
    // TE (and the runtime) clamp it to FLT_MAX.
    if (finiteInputs) {
      float pa = 0.0f;
      for (uint64_t b : probe)
        pa = std::max(pa, std::fabs(static_cast<float>(floatValue(xt, b))));
      if (pa > 0.0f && std::isinf(fmax / pa))
        continue;
    }
    eval.clear();
    std::vector<EvalScalar> irData(n);
    for (int64_t i = 0; i < n; ++i) {
      TensorEvaluator::delinearize(i, dType.getShape(), index);
      FailureOr<EvalScalar> e = eval.element(dataV, index);
      if (failed(e)) {
        why = {DeclineRule::NotEvaluable, "the exactness check cannot evaluate the "
                                "data: " + eval.getError()};
        return failure();
      }
      irData[i] = *e;
    }
    index.assign(aType.getRank(), 0);
    FailureOr<EvalScalar> irAmax = eval.element(amaxV, index);
    if (failed(irAmax)) {
      why = {DeclineRule::NotEvaluable,
             "the exactness check cannot evaluate the amax: " + eval.getError()};
      return failure();
    }
    for (auto [k, scheme] : llvm::enumerate(schemes)) {
      TensorReference ref;
      std::string error;
      if (failed(runTensorReference(scheme, xt, probe, rows, cols, ref, error))) {
        why = {DeclineRule::NotEvaluable, error};
        return failure();
      }
      // The text of a difference is built for the first one only (the
      // mismatch keeps no other; formatting every difference of a large
      // check cost more than evaluating it).
      auto note = [&](llvm::function_ref<std::string()> what) {
        alive[k] = false;
        mismatch[k].add(what, kind);
      };
      // The amax the raised op returns must be the IR's, exactly.
      llvm::APFloat rtAmax(ref.amax);
      bool lost = false;
      rtAmax.convert(*aSem, llvm::APFloat::rmNearestTiesToEven, &lost);
      llvm::APFloat irA(*aSem, llvm::APInt(llvm::APFloat::getSizeInBits(*aSem),
                                           irAmax->bits));
      if (irAmax->poison || lost ||
          !(irA.bitwiseIsEqual(rtAmax) || (irA.isNaN() && rtAmax.isNaN())))
        note([&] {
          return llvm::formatv(
                     "probe {0}: the tensor amax is {1} in the IR, "
                     "{2:e8} in the runtime",
                     kind,
                     irAmax->poison
                         ? std::string("undefined (poison)")
                         : llvm::formatv("{0:e8}", irA.convertToDouble()).str(),
                     ref.amax)
              .str();
        });
      for (int64_t i = 0; i < n; ++i) {
        EvalScalar e = irData[i];
        uint8_t want = ref.data[i];
        llvm::APFloat ir(*dSem, llvm::APInt(8, e.bits & 0xff));
        llvm::APFloat rt(*dSem, llvm::APInt(8, want));
        if (!e.poison && ((e.bits & 0xff) == want || (ir.isNaN() && rt.isNaN())))
          continue;
        note([&] { return llvm::formatv("probe {0}, element {1}: x = {2:e} (tensor amax "
                           "{3:e}, runtime scale_inv {4:e}) gives {5} in the IR, "
                           "0x{6} in the runtime",
                           kind, i, values[i], ref.amax, ref.scaleInv,
                           e.poison ? std::string("undefined (poison)")
                                    : "0x" + hexByte(e.bits & 0xff),
                           hexByte(want))
                 .str(); });
      }
    }
    if (llvm::none_of(alive, [](bool a) { return a; }))
      break;
  }
  if (llvm::any_of(alive, [](bool a) { return a; }))
    sweepTensorScale(xv, dataV, amaxV, schemes, alive, mismatch);
  return firstAlive(schemes, alive, mismatch, why);
}

/// The per-tensor scale rule between the probes' amax values: the probes
/// give 17 tensor amaxes, and a rule that rounds its scale differently from
/// the runtime's (torch's `max / amax` with an f32 tensor amax is
/// `reciprocal(amax) * max`, one f32 ulp off the runtime's correctly
/// rounded quotient for about a quarter of all amaxes) changes only the
/// codes of elements whose product x * scale lies next to an FP8 rounding
/// midpoint, about one in a million. So the amax value itself is made a
/// leaf: for kSweepAmaxes amaxes of the input type spread over 2^-9..2^24
/// the IR's codes of inputs around m / scale for FP8 midpoints m (the
/// neighbours, in the input type, where one ulp of the scale moves a
/// product across m) are compared with the runtime's on the same tensor
/// amax. Where the IR's codes do not read the amax through `amaxV` (an
/// element reads other inputs), the sweep does not apply and the probes
/// decide alone.
void RaiseQuantizePass::sweepTensorScale(Value xv, Value dataV, Value amaxV,
                                         ArrayRef<QuantSchemeAttr> schemes,
                                         SmallVectorImpl<bool> &alive,
                                         SmallVectorImpl<Mismatch> &mismatch) {
  constexpr unsigned kSweepAmaxes = 256;
  auto xType = cast<RankedTensorType>(xv.getType());
  auto dType = cast<RankedTensorType>(dataV.getType());
  auto aType = cast<RankedTensorType>(amaxV.getType());
  const int64_t n = xType.getNumElements();
  if (dType.getShape() != xType.getShape() || n < 2)
    return;
  Type xt = xType.getElementType();
  const auto &xSem = cast<FloatType>(xt).getFloatSemantics();
  const auto &aSem = cast<FloatType>(aType.getElementType()).getFloatSemantics();
  const auto &dSem = cast<FloatType>(dType.getElementType()).getFloatSemantics();
  const float fmax = isa<Float8E5M2Type>(dType.getElementType()) ? 57344.0f : 448.0f;
  // FP8 rounding midpoints: between every 8th pair of neighbouring positive
  // codes (subnormal, normal, the top).
  SmallVector<double> mids;
  const unsigned top = isa<Float8E5M2Type>(dType.getElementType()) ? 0x7b : 0x7e;
  for (unsigned c = 1; c < top; c += 8)
    mids.push_back(0.5 * (llvm::APFloat(dSem, llvm::APInt(8, c)).convertToDouble() +
                          llvm::APFloat(dSem, llvm::APInt(8, c + 1)).convertToDouble()));
  mids.push_back(0.5 * (llvm::APFloat(dSem, llvm::APInt(8, top - 1)).convertToDouble() +
                        fmax));
  std::vector<uint64_t> probe(n, 0);
  uint64_t amaxBits = 0;
  int64_t current = -1;
  bool stray = false;
  TensorEvaluator eval(
      [&](Value v, ArrayRef<int64_t> index, EvalScalar &out) {
        if (v == amaxV) {
          out = EvalScalar{amaxBits, false};
          return true;
        }
        if (v != xv)
          return false;
        int64_t at = TensorEvaluator::linearize(index, xType.getShape());
        stray = stray || at != current;
        out = EvalScalar{probe[at], false};
        return true;
      },
      int64_t(50'000'000));
  eval.setSaturatingFloat8Casts(saturatingCasts);
  eval.setWrappingIntCasts(wrappingIntCasts);
  std::mt19937 rng(7919);
  std::uniform_int_distribution<int> exponent(-9, 24);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  SmallVector<int64_t> index;
  for (unsigned t = 0; t < kSweepAmaxes; ++t) {
    // The amax: a value of the input type (the largest |x| is one).
    const uint64_t ab = floatBits(xt, std::ldexp(mantissa(rng), exponent(rng)));
    const float a = static_cast<float>(floatValue(xt, ab));
    llvm::APFloat aa(a);
    bool lost = false;
    aa.convert(aSem, llvm::APFloat::rmNearestTiesToEven, &lost);
    if (lost || !std::isfinite(a) || a <= 0.0f)
      continue;
    amaxBits = aa.bitcastToAPInt().getZExtValue();
    // The inputs: the amax itself, then up to 8 neighbours (input type)
    // of m / scale for each midpoint m, no larger than the amax.
    std::fill(probe.begin(), probe.end(), 0);
    int64_t k = 0;
    probe[k++] = ab;
    const float scale = fmax / a;
    for (double m : mids) {
      llvm::APFloat x(static_cast<float>(m / scale));
      x.convert(xSem, llvm::APFloat::rmNearestTiesToEven, &lost);
      for (int step = 0; step < 4; ++step)
        x.next(/*nextDown=*/true);
      for (int step = 0; step < 9 && k < n; ++step, x.next(false)) {
        double v = x.convertToDouble();
        if (!(v > 0.0) || v > a)
          continue;
        probe[k++] = x.bitcastToAPInt().getZExtValue();
        if (k < n && step % 2 == 0)
          probe[k++] = (x.bitcastToAPInt() ^
                        llvm::APInt::getOneBitSet(
                            llvm::APFloat::getSizeInBits(xSem),
                            llvm::APFloat::getSizeInBits(xSem) - 1))
                           .getZExtValue();
      }
    }
    eval.clear();
    SmallVector<uint64_t> ir(k);
    for (int64_t i = 0; i < k; ++i) {
      current = i;
      TensorEvaluator::delinearize(i, dType.getShape(), index);
      FailureOr<EvalScalar> e = eval.element(dataV, index);
      if (failed(e) || stray)
        return; // not the amax's function alone: the probes decide
      ir[i] = e->poison ? ~uint64_t(0) : (e->bits & 0xff);
    }
    std::vector<uint64_t> row(probe.begin(), probe.begin() + k);
    for (auto [s, scheme] : llvm::enumerate(schemes)) {
      if (!alive[s])
        continue;
      TensorReference ref;
      std::string error;
      if (failed(runTensorReference(scheme, xt, row, 1, k, ref, error)))
        return;
      for (int64_t i = 0; i < k; ++i) {
        if (ir[i] == ref.data[i])
          continue;
        alive[s] = false;
        mismatch[s].add(
            [&] {
              return llvm::formatv(
                         "amax sweep: tensor amax {0:e8}, x = {1:e8} gives {2} in "
                         "the IR, 0x{3} in the runtime (the IR's rule for this "
                         "amax rounds differently from the runtime's)",
                         a, floatValue(xt, row[i]),
                         ir[i] == ~uint64_t(0) ? std::string("undefined (poison)")
                                               : "0x" + hexByte(ir[i]),
                         hexByte(ref.data[i]))
                  .str();
            },
            kTensorProbes);
        break;
      }
    }
    if (llvm::none_of(alive, [](bool b) { return b; }))
      return;
  }
}

/// FP8 delayed scaling (delimitDelayed): the codes are elementwise in x
/// and the given scale, so the check evaluates sampled elements (at most
/// kDelayedSamples, spread over the tensor) for each probe and each of a
/// few scales, x's elements drawn from a probe table by a hash of their
/// position (a region that moved elements would read other values), and
/// compares them with the runtime's codes for the same values. The tensor
/// amax that the program computes beside it is then checked on the whole
/// tensor (checkDelayedAmax).
constexpr int64_t kDelayedSamples = 1024;
LogicalResult checkConstDivisor(const Candidate &c, Type xt, Type dataType,
                                float fmax, Decline &why);
constexpr int64_t kDelayedTable = 256;

FailureOr<QuantSchemeAttr> RaiseQuantizePass::identifyDelayed(Candidate &c,
                                                              Decline &why) {
  MLIRContext *ctx = &getContext();
  auto xType = cast<RankedTensorType>(c.x.getType());
  auto dType = cast<RankedTensorType>(c.data.getType());
  const int64_t n = xType.getNumElements();
  if (dType.getNumElements() != n) {
    why = {DeclineRule::NoQuantizerInput,
           "the delayed-scaling candidate's input and data differ in size"};
    return failure();
  }
  Type xt = xType.getElementType();
  QuantFormat format = isa<Float8E5M2Type>(dType.getElementType())
                           ? QuantFormat::fp8_e5m2
                           : QuantFormat::fp8_e4m3;
  const float fmax = format == QuantFormat::fp8_e5m2 ? 57344.0f : 448.0f;
  QuantSchemeAttr base =
      QuantSchemeAttr::get(ctx, format, QuantDirection::rowwise);
  QuantSchemeAttr scheme = QuantSchemeAttr::get(
      ctx, format, QuantDirection::rowwise, base.getBlockRows(),
      base.getBlockCols(), base.getRounding(), base.getNanPolicy(),
      base.getColwiseLayout(), base.getScaleLayout(), base.getElemRounding(),
      TensorScaling::delayed, base.getZeroScale(), base.getEpsilon(),
      base.getPow2Scale(), base.getRecipe());
  // The sampled positions: all of a small tensor, else the first and last
  // quarter of the samples and the rest spread evenly.
  SmallVector<int64_t> at;
  if (n <= kDelayedSamples) {
    for (int64_t i = 0; i < n; ++i)
      at.push_back(i);
  } else {
    const int64_t q = kDelayedSamples / 4;
    for (int64_t i = 0; i < q; ++i) {
      at.push_back(i);
      at.push_back(n - q + i);
    }
    for (int64_t i = 0; i < 2 * q; ++i)
      at.push_back(q + (n - 2 * q) * i / (2 * q));
  }
  auto slot = [](int64_t linear) {
    return static_cast<int64_t>((uint64_t(linear) * 2654435761u + 12345u) %
                                uint64_t(kDelayedTable));
  };
  // Scales: one, a power of two below it, the common fmax / amax forms,
  // tiny and large (saturation, FP8 subnormals, f32 overflow of x * s).
  // A constant scale: its value only (the raised op takes that constant).
  SmallVector<float, 6> scales{1.0f,    0.1875f, fmax / 5.3f,
                               3.0e-5f, 6.5e4f,  1.0e30f};
  if (c.constScale)
    scales.assign({*c.constScale});
  if (c.constDivisor != 0.0f &&
      failed(checkConstDivisor(c, xt, dType.getElementType(), fmax, why)))
    return failure();
  std::vector<uint64_t> table(kDelayedTable);
  float scaleValue = 1.0f;
  TensorEvaluator eval(
      [&](Value v, ArrayRef<int64_t> index, EvalScalar &out) {
        if (v == c.x) {
          out = EvalScalar{
              table[slot(TensorEvaluator::linearize(index, xType.getShape()))],
              false};
          return true;
        }
        // (A constant scale is evaluated as the program writes it.)
        if (v == c.scale && !c.constScale) {
          out = EvalScalar{llvm::bit_cast<uint32_t>(scaleValue), false};
          return true;
        }
        return false;
      },
      int64_t(4000) * kDelayedSamples * kTensorProbes * scales.size() +
          1000000);
  eval.setSaturatingFloat8Casts(saturatingCasts);
  eval.setWrappingIntCasts(wrappingIntCasts);
  const auto dSem =
      &cast<FloatType>(dType.getElementType()).getFloatSemantics();
  Mismatch mismatch;
  SmallVector<int64_t> index;
  std::vector<uint64_t> sampled(at.size());
  for (unsigned kind = 0; kind < kTensorProbes && !mismatch.count; ++kind) {
    std::vector<float> values =
        makeTensorProbe(kind, kDelayedTable, finiteInputs, fmax);
    probeBits(values, xt, finiteInputs, table);
    for (auto [k, i] : llvm::enumerate(at))
      sampled[k] = table[slot(i)];
    for (float s : scales) {
      scaleValue = s;
      eval.clear();
      TensorReference ref;
      std::string error;
      if (failed(runTensorReference(scheme, xt, sampled, 1,
                                    static_cast<int64_t>(sampled.size()), ref,
                                    error, &scaleValue))) {
        why = {DeclineRule::NotEvaluable, error};
        return failure();
      }
      for (auto [k, i] : llvm::enumerate(at)) {
        // Under the finite-inputs contract (fast-math ninf) a product that
        // overflows f32 is outside the domain: torch casts Inf to NaN where
        // the runtime saturates.
        if (finiteInputs &&
            std::isinf(static_cast<float>(floatValue(xt, sampled[k])) * s))
          continue;
        EvalScalar e;
        if (!evalElement(eval, c.data, dType.getShape(), i, "data", index, e,
                         why))
          return failure();
        const uint8_t want = ref.data[k];
        llvm::APFloat ir(*dSem, llvm::APInt(8, e.bits & 0xff));
        llvm::APFloat rt(*dSem, llvm::APInt(8, want));
        if (!e.poison &&
            ((e.bits & 0xff) == want || (ir.isNaN() && rt.isNaN())))
          continue;
        mismatch.add(
            [&] {
              return llvm::formatv("probe {0}, element {1}: x = {2:e}, scale "
                                   "{3:e} gives {4} in the IR, 0x{5} in the "
                                   "runtime (x * scale, saturated)",
                                   kind, i, floatValue(xt, sampled[k]), s,
                                   e.poison ? std::string("undefined (poison)")
                                            : "0x" + hexByte(e.bits & 0xff),
                                   hexByte(want))
                  .str();
            },
            kind);
      }
      if (mismatch.count)
        break;
    }
  }
  if (mismatch.count) {
    SmallVector<bool> alive{false};
    return firstAlive({scheme}, alive, {mismatch}, why);
  }
  checkDelayedAmax(c, scheme);
  return scheme;
}

/// x / d (a static scale the program divides by) against the runtime's
/// x * s, s = fl(1 / d): the same real number where d is a power of two;
/// otherwise they differ where x / d is a tie of the FP8 rounding that the
/// rounded product misses, so every value of a 16-bit input is compared
/// (both in f32, saturated, rounded to FP8). An f32 input is compared where
/// the two can differ at all: fl(x / d) and fl(x * s) are both within
/// 2^-23 relative of x / d (d and s normal), and the FP8 code, a monotone
/// step function of the quotient, changes only at the midpoints m between
/// neighbouring FP8 values (above the largest it saturates), so codes that
/// differ put a midpoint between the two quotients and x within 4 ulps of
/// m * d; the 17 f32 values around fl(m * d), for every midpoint and sign,
/// decide it for every finite f32 x (a proof, not a sample: d = 5 and 10
/// pass, d = 3 and 7 have inputs that differ).
LogicalResult checkConstDivisor(const Candidate &c, Type xt, Type dataType,
                                float fmax, Decline &why) {
  const float d = c.constDivisor, s = *c.constScale;
  int exp = 0;
  if (std::fabs(std::frexp(d, &exp)) == 0.5f)
    return success();
  auto describe = [&](const Twine &rest) {
    why = {DeclineRule::DiffersFromRuntime,
           llvm::formatv("this cast to {0} divides by the program's constant "
                         "{1:e} (a static scale), where the runtime "
                         "multiplies by {2:e}: ",
                         dataType, d, s)
                   .str() +
               rest.str()};
    return failure();
  };
  // An f32 input widened from a 16-bit tensor (`y.float()`) takes that
  // type's values.
  if (auto g = c.x.getDefiningOp<linalg::GenericOp>();
      g && xt.isF32() && isPureWidening(g)) {
    Type src = getElementTypeOrSelf(g.getDpsInputs()[0].getType());
    if (src.isBF16() || src.isF16())
      xt = src;
  }
  const bool f32 = xt.isF32();
  if (!xt.isBF16() && !xt.isF16() && !f32)
    return describe("for an input of type " + llvm::formatv("{0}", xt).str() +
                    " the two differ where the quotient is a tie of the FP8 "
                    "rounding (equal for every input only for a power-of-two "
                    "divisor)");
  if (f32 && (!std::isnormal(d) || !std::isnormal(s)))
    return describe("the divisor or its reciprocal is not a normal f32, so "
                    "the two quotients are not within one rounding of each "
                    "other and cannot be compared on a finite set of inputs");
  const auto &sem = cast<FloatType>(dataType).getFloatSemantics();
  auto fp8 = [&](float v) {
    v = std::min(std::max(v, -fmax), fmax);
    llvm::APFloat f(v);
    bool lost = false;
    f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
    return f.bitcastToAPInt().getZExtValue();
  };
  auto differ = [&](float x) {
    return std::isfinite(x) && fp8(x / d) != fp8(x * s);
  };
  auto witness = [&](float x) {
    return describe(llvm::formatv("x = {0:e} gives 0x{1} divided, 0x{2} "
                                  "multiplied",
                                  x, hexByte(fp8(x / d)), hexByte(fp8(x * s)))
                        .str());
  };
  if (!f32) {
    for (uint32_t bits = 0; bits < 65536; ++bits) {
      const float x = static_cast<float>(floatValue(xt, bits));
      if (differ(x))
        return witness(x);
    }
    return success();
  }
  // The format's finite values >= 0 in order, and the midpoints between
  // neighbours up to fmax.
  SmallVector<double> vals;
  const unsigned width = llvm::APFloat::getSizeInBits(sem);
  for (uint32_t bits = 0; bits < (1u << width); ++bits) {
    llvm::APFloat v(sem, llvm::APInt(width, bits));
    if (!v.isFinite() || v.isNegative())
      continue;
    const double dv = v.convertToDouble();
    if (dv <= fmax)
      vals.push_back(dv);
  }
  llvm::sort(vals);
  vals.erase(std::unique(vals.begin(), vals.end()), vals.end());
  for (size_t i = 0; i + 1 < vals.size(); ++i) {
    const double m = 0.5 * (vals[i] + vals[i + 1]);
    for (double sign : {1.0, -1.0}) {
      const double c = sign * m * double(d);
      if (!(std::fabs(c) <= double(std::numeric_limits<float>::max())))
        continue;
      float x = static_cast<float>(c);
      for (int k = 0; k < 8; ++k)
        x = std::nextafter(x, -std::numeric_limits<float>::infinity());
      for (int k = 0; k <= 16;
           ++k, x = std::nextafter(x, std::numeric_limits<float>::infinity()))
        if (differ(x))
          return witness(x);
    }
  }
  return success();
}

/// The tensor amax that the program computes beside a delayed quantizer is
/// taken from the raised op (one pass over x: the kernels take it while
/// they cast) where it equals the runtime's on every probe (the whole
/// tensor, or a copy on fewer rows); else it stays, and the remark says why.
void RaiseQuantizePass::checkDelayedAmax(Candidate &c, QuantSchemeAttr scheme) {
  if (!c.amax)
    return;
  auto keep = [&](const Twine &why) {
    c.note = ("; the program's tensor amax of its input stays a reduction "
              "of its own: " +
              why)
                 .str();
    c.amax = Value();
    c.amaxRegion.clear();
  };
  Candidate a;
  a.x = c.x;
  a.amax = c.amax;
  a.region = c.amaxRegion;
  std::string noCopy;
  FailureOr<SmallCopy> small = failure();
  if (numElements(c.x) > kPerTensorLimit) {
    small = copyOnSmallInput(a, /*shrinkLast=*/true, noCopy);
    if (failed(small))
      return keep(llvm::formatv("its check evaluates every element, {0} "
                                "exceed its limit of {1}, and it has no copy "
                                "on fewer rows: {2}",
                                numElements(c.x), kPerTensorLimit, noCopy));
  }
  Value xv = succeeded(small) ? small->map.lookup(c.x) : c.x;
  Value amaxV = succeeded(small) ? small->map.lookup(c.amax) : c.amax;
  auto xType = cast<RankedTensorType>(xv.getType());
  auto aType = cast<RankedTensorType>(amaxV.getType());
  const int64_t n = xType.getNumElements();
  const int64_t cols = xType.getRank() ? xType.getShape().back() : 1;
  Type xt = xType.getElementType();
  const auto aSem =
      &cast<FloatType>(aType.getElementType()).getFloatSemantics();
  std::vector<uint64_t> probe(n);
  TensorEvaluator eval(probeLeaf(xv, xType.getShape(), probe),
                       int64_t(1000) * n * kTensorProbes + 1000000);
  SmallVector<int64_t> zero(aType.getRank(), 0);
  float one = 1.0f;
  for (unsigned kind = 0; kind < kTensorProbes; ++kind) {
    std::vector<float> values = makeTensorProbe(
        kind, n, finiteInputs,
        scheme.getFormat() == QuantFormat::fp8_e5m2 ? 57344.0f : 448.0f);
    probeBits(values, xt, finiteInputs, probe);
    eval.clear();
    FailureOr<EvalScalar> irAmax = eval.element(amaxV, zero);
    if (failed(irAmax))
      return keep("its check cannot evaluate it: " + eval.getError());
    TensorReference ref;
    std::string error;
    if (failed(runTensorReference(scheme, xt, probe, n / cols, cols, ref, error,
                                  &one)))
      return keep(error);
    llvm::APFloat rt(ref.amax);
    bool lost = false;
    rt.convert(*aSem, llvm::APFloat::rmNearestTiesToEven, &lost);
    llvm::APFloat ir(
        *aSem, llvm::APInt(llvm::APFloat::getSizeInBits(*aSem), irAmax->bits));
    if (irAmax->poison || lost ||
        !(ir.bitwiseIsEqual(rt) || (ir.isNaN() && rt.isNaN())))
      return keep(llvm::formatv(
          "probe {0}: it is {1} in the IR, {2:e} in the runtime (whose amax "
          "ignores NaN)",
          kind,
          irAmax->poison ? std::string("undefined (poison)")
                         : llvm::formatv("{0:e}", ir.convertToDouble()).str(),
          ref.amax));
  }
  c.note = "; the program's tensor amax of its input (TE's amax history) is "
           "the raised op's";
}

FailureOr<QuantSchemeAttr> RaiseQuantizePass::identify(Candidate &c,
                                                       Decline &why) {
  if (c.blockFP8)
    return identifyBlockFP8(c, why);
  MLIRContext *ctx = &getContext();
  // The values checked: the region's, or (NVFP4 on a large input) those of
  // its copy on fewer rows.
  Value xv = c.x, dataV = c.data, scalesV = c.scales, amaxV = c.amax;
  auto xType = cast<RankedTensorType>(xv.getType());
  int64_t cols = xType.getShape().back();
  int64_t rows = xType.getNumElements() / cols;
  // NVFP4's per-tensor scale reads every element: its check evaluates the
  // whole tensor, as the per-tensor FP8 check does; a large one, on a copy
  // with fewer rows.
  const int64_t B = c.nvfp4 ? 16 : 32;
  int64_t nb = (cols + B - 1) / B;
  FailureOr<SmallCopy> small = failure();
  if (c.nvfp4 && rows * cols > kPerTensorLimit) {
    std::string noCopy;
    auto elementsOf = [&](FailureOr<SmallCopy> &copy) {
      return succeeded(copy)
                 ? cast<RankedTensorType>(copy->map.lookup(c.x).getType())
                       .getNumElements()
                 : int64_t(0);
    };
    small = copyOnSmallInput(c, /*shrinkLast=*/false, noCopy);
    // Scales swizzled into 128x4 tiles (to_blocked) split the rows by 128:
    // two tiles of rows and two tiles of columns (4 blocks of 16 each),
    // which still show the tile order both ways; the check's cost is the
    // copy's element count (on torch-mlir's raw IR, minutes for 60 000
    // elements). Columns that are no whole number of tiles keep their width.
    if (failed(small) && c.swizzledScales) {
      std::string tiled;
      small = copyOnSmallInput(c, /*shrinkLast=*/true, tiled, 128, 64);
      if (failed(small))
        small = copyOnSmallInput(c, /*shrinkLast=*/false, tiled, 128);
      if (failed(small) && tiled != noCopy)
        noCopy += "; in 128-row tiles: " + tiled;
    }
    const int64_t copied = elementsOf(small);
    if (copied > kPerTensorLimit)
      noCopy = llvm::formatv("its copy still has {0} elements", copied).str();
    if (failed(small) || copied > kPerTensorLimit) {
      why = {DeclineRule::RaiseUnsupportedShape,
             llvm::formatv("the exactness check of an NVFP4 quantizer "
                           "evaluates every element (its per-tensor scale "
                           "reads them all): {0} elements exceed its limit of "
                           "{1}, and it has no copy on fewer rows: {2}",
                           rows * cols, kPerTensorLimit, noCopy)
                 .str()};
      return failure();
    }
    xv = small->map.lookup(c.x);
    dataV = small->map.lookup(c.data);
    scalesV = small->map.lookup(c.scales);
    amaxV = c.amax ? small->map.lookup(c.amax) : Value();
    xType = cast<RankedTensorType>(xv.getType());
    cols = xType.getShape().back();
    nb = (cols + B - 1) / B;
    rows = xType.getNumElements() / cols;
  }
  auto dType = cast<RankedTensorType>(dataV.getType());
  auto sType = cast<RankedTensorType>(scalesV.getType());

  // Sampled rows, and the columns compared (every column of narrow rows,
  // the first and last 1024 of wide ones; NVFP4: everything).
  SmallVector<int64_t> sampled;
  if (c.nvfp4)
    for (int64_t r = 0; r < rows; ++r)
      sampled.push_back(r);
  for (int64_t r : {int64_t(0), int64_t(1), rows / 2, rows - 1})
    if (r >= 0 && r < rows && !llvm::is_contained(sampled, r))
      sampled.push_back(r);
  // Data columns: one element each, or (packed FP4) one byte of two codes.
  const bool packed = c.packedFp4;
  const int64_t dataCols = packed ? (cols + 1) / 2 : cols;
  const int64_t perCol = packed ? 2 : 1;
  SmallVector<int64_t> compared;
  for (int64_t col = 0; col < dataCols; ++col)
    if (c.nvfp4 || cols <= 2048 || col * perCol < 1024 ||
        col * perCol >= ((cols - 1024) / 32) * 32)
      compared.push_back(col);
  DenseMap<int64_t, int64_t> slotOf;
  for (auto [i, r] : llvm::enumerate(sampled))
    slotOf[r] = i;
  int64_t srows = sampled.size();

  std::vector<uint64_t> probe;
  TensorEvaluator eval(
      [&](Value v, ArrayRef<int64_t> index, EvalScalar &out) {
        if (v != xv)
          return false;
        int64_t linear = TensorEvaluator::linearize(index, xType.getShape());
        auto it = slotOf.find(linear / cols);
        if (it == slotOf.end()) {
          out = EvalScalar{0, true}; // A row outside the sample: poison.
          return true;
        }
        out = EvalScalar{probe[it->second * cols + linear % cols], false};
        return true;
      },
      c.nvfp4 ? int64_t(1000) * rows * cols * 8 + 1000000
              : int64_t(50'000'000));
  eval.setSaturatingFloat8Casts(saturatingCasts);
  eval.setWrappingIntCasts(wrappingIntCasts);

  QuantFormat format = c.nvfp4 ? QuantFormat::nvfp4
                       : packed ? QuantFormat::mxfp4
                       : isa<Float8E5M2Type>(dType.getElementType())
                           ? QuantFormat::mxfp8_e5m2
                           : QuantFormat::mxfp8_e4m3;
  // Every MX policy the runtime has, defaults first.
  SmallVector<QuantSchemeAttr> schemes;
  // NVFP4: the torchao recipes and TransformerEngine's, each NaN policy.
  for (Nvfp4Recipe recipe : {Nvfp4Recipe::torchao, Nvfp4Recipe::torchao_block,
                             Nvfp4Recipe::te})
    for (NanPolicy nan : {NanPolicy::propagate, NanPolicy::ignore}) {
      if (!c.nvfp4)
        break;
      QuantSchemeAttr base =
          QuantSchemeAttr::get(ctx, format, QuantDirection::rowwise);
      schemes.push_back(QuantSchemeAttr::get(
          ctx, format, QuantDirection::rowwise, base.getBlockRows(),
          base.getBlockCols(), base.getRounding(), nan,
          base.getColwiseLayout(), base.getScaleLayout(),
          base.getElemRounding(), base.getTensorScaling(),
          base.getZeroScale(), base.getEpsilon(), base.getPow2Scale(),
          recipe));
    }
  for (ZeroScale zero : {ZeroScale::exact, ZeroScale::one,
                         ZeroScale::min_normal})
    for (ScaleRounding rnd : {ScaleRounding::rceil, ScaleRounding::floor,
                              ScaleRounding::ceil, ScaleRounding::even})
      for (NanPolicy nan : {NanPolicy::propagate, NanPolicy::ignore}) {
        if (c.nvfp4)
          break;
        QuantSchemeAttr base =
            QuantSchemeAttr::get(ctx, format, QuantDirection::rowwise);
        schemes.push_back(QuantSchemeAttr::get(
            ctx, format, QuantDirection::rowwise, base.getBlockRows(),
            base.getBlockCols(), rnd, nan, base.getColwiseLayout(),
            base.getScaleLayout(), base.getElemRounding(),
            base.getTensorScaling(), zero, base.getEpsilon(),
            base.getPow2Scale(), base.getRecipe()));
      }
  // Each in the scale layouts the scales' size allows.
  {
    SmallVector<QuantSchemeAttr> laid;
    for (QuantSchemeAttr s : schemes)
      for (ScaleLayout layout : {ScaleLayout::compact, ScaleLayout::swizzled})
        if (layout == ScaleLayout::compact ? c.compactScales
                                           : c.swizzledScales)
          laid.push_back(QuantSchemeAttr::get(
              ctx, s.getFormat(), s.getDirection(), s.getBlockRows(),
              s.getBlockCols(), s.getRounding(), s.getNanPolicy(),
              s.getColwiseLayout(), layout, s.getElemRounding(),
              s.getTensorScaling(), s.getZeroScale(), s.getEpsilon(),
              s.getPow2Scale(), s.getRecipe()));
    schemes = std::move(laid);
  }
  // Swizzled: the byte of (row r, block b) in the [rup(rows, 128),
  // rup(nb, 4)] tiles, and the padding, which must be 0.
  const int64_t paddedRows = fusion_rt::round_up(rows, 128);
  const int64_t paddedBlocks = fusion_rt::round_up(nb, 4);
  auto swizzled = [&](int64_t r, int64_t b) {
    return fusion_rt::swizzled_scale_offset(r, b, paddedBlocks);
  };
  SmallVector<Mismatch> mismatch(schemes.size());
  SmallVector<bool> alive(schemes.size(), true);
  // NVFP4: whether the IR's tensor amax equals the runtime's on every probe.
  SmallVector<bool> sameAmax(schemes.size(), true);

  auto dataShape = dType.getShape();
  auto scaleShape = sType.getShape();
  SmallVector<int64_t> index;
  Type xt = xType.getElementType();
  // NVFP4 adds an all-zero tensor (torchao's 0 / 0 scales).
  const unsigned probes = c.nvfp4 ? 7 : 6;
  for (unsigned kind = 0; kind < probes; ++kind) {
    std::vector<float> values =
        kind == 6 ? std::vector<float>(srows * cols, 0.0f)
                  : makeProbe(kind, srows, cols, kind + 1, finiteInputs);
    probe.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      probe[i] = floatBits(xt, values[i]);
      if (finiteInputs &&
          !llvm::APFloat(cast<FloatType>(xt).getFloatSemantics(),
                         llvm::APInt(cast<FloatType>(xt).getWidth(), probe[i]))
               .isFinite()) {
        // Past the input type's range (f16): its largest finite value.
        values[i] = std::copysign(65504.0f, values[i]);
        probe[i] = floatBits(xt, values[i]);
      }
    }
    eval.clear();
    // The IR's bytes on the sampled rows: `what` at linear index `linear`.
    auto evalAt = [&](Value what, ArrayRef<int64_t> shape, int64_t linear,
                      StringRef name, EvalScalar &out) {
      return evalElement(eval, what, shape, linear, name, index, out, why);
    };
    std::vector<EvalScalar> irData(srows * dataCols), irScales(srows * nb),
        irSwizzled(srows * nb);
    for (int64_t s = 0; s < srows; ++s) {
      for (int64_t col : compared)
        if (!evalAt(dataV, dataShape, sampled[s] * dataCols + col, "data",
                    irData[s * dataCols + col]))
          return failure();
      for (int64_t b = 0; b < nb; ++b) {
        if (c.compactScales &&
            !evalAt(scalesV, scaleShape, sampled[s] * nb + b, "scales",
                    irScales[s * nb + b]))
          return failure();
        if (c.swizzledScales &&
            !evalAt(scalesV, scaleShape, swizzled(sampled[s], b), "scales",
                    irSwizzled[s * nb + b]))
          return failure();
      }
    }
    // The padding of swizzled scales: the blocks past nb of the sampled
    // rows, and every block of the first and last padding row.
    std::string badPadding;
    if (c.swizzledScales) {
      SmallVector<std::pair<int64_t, int64_t>> pads;
      for (int64_t r : sampled)
        for (int64_t b = nb; b < paddedBlocks; ++b)
          pads.push_back({r, b});
      if (rows < paddedRows)
        for (int64_t r : {rows, paddedRows - 1})
          for (int64_t b = 0; b < paddedBlocks; ++b)
            pads.push_back({r, b});
      for (auto [r, b] : pads) {
        EvalScalar e;
        if (!evalAt(scalesV, scaleShape, swizzled(r, b), "scales", e))
          return failure();
        if (badPadding.empty() && (e.poison || (e.bits & 0xff) != 0))
          badPadding = llvm::formatv(
              "probe {0}: padding byte of row {1} block {2} of the swizzled "
              "scales is {3} in the IR, 0x00 in the runtime",
              kind, r, b,
              e.poison ? std::string("undefined (poison)")
                       : "0x" + hexByte(e.bits & 0xff));
      }
    }
    std::optional<double> irAmax;
    if (amaxV) {
      EvalScalar e;
      auto aType = cast<RankedTensorType>(amaxV.getType());
      if (!evalAt(amaxV, aType.getShape(), 0, "tensor amax", e))
        return failure();
      if (!e.poison && isa<FloatType>(aType.getElementType()))
        irAmax = floatValue(aType.getElementType(), e.bits);
    }
    for (auto [k, scheme] : llvm::enumerate(schemes)) {
      Reference ref;
      std::string error;
      if (failed(runReference(scheme, xt, probe, srows, cols, ref, error))) {
        why = {DeclineRule::NotEvaluable, error};
        return failure();
      }
      auto blockAmax = [&](int64_t s, int64_t b) {
        float m = 0;
        for (int64_t i = b * B; i < std::min(cols, b * B + B); ++i)
          m = std::fmax(m, std::fabs(values[s * cols + i]));
        return m;
      };
      // The text of a difference is built for the first one only (the
      // mismatch keeps no other; formatting every difference of a large
      // check cost more than evaluating it).
      auto note = [&](llvm::function_ref<std::string()> what) {
        alive[k] = false;
        mismatch[k].add(what, kind);
      };
      if (c.amax && !(irAmax && (*irAmax == double(ref.amax) ||
                                 (std::isnan(*irAmax) &&
                                  std::isnan(ref.amax))))) {
        sameAmax[k] = false;
        if (c.readByNonCheck)
          note([&] { return llvm::formatv("probe {0}: the tensor amax that the program "
                             "reads is {1} in the IR, {2:e} in the runtime",
                             kind,
                             irAmax ? llvm::formatv("{0:e}", *irAmax).str()
                                    : std::string("undefined (poison)"),
                             ref.amax)
                   .str(); });
      }
      const bool swz = scheme.getScaleLayout() == ScaleLayout::swizzled;
      if (swz && !badPadding.empty())
        note([&] { return badPadding; });
      for (int64_t s = 0; s < srows; ++s) {
        for (int64_t b = 0; b < nb; ++b) {
          EvalScalar e = (swz ? irSwizzled : irScales)[s * nb + b];
          uint8_t want = ref.scales[s * nb + b];
          if (e.poison || (e.bits & 0xff) != want)
            note([&] { return llvm::formatv(
                     "probe {5}, row {0} block {1} (amax {2:e}): scale byte {3} in "
                     "the IR, {4} in the runtime",
                     sampled[s], b, blockAmax(s, b),
                     e.poison ? std::string("undefined (poison)")
                              : "0x" + hexByte(e.bits & 0xff),
                     "0x" + hexByte(want), kind)
                     .str(); });
        }
        for (int64_t col : compared) {
          EvalScalar e = irData[s * dataCols + col];
          uint8_t want = ref.data[s * dataCols + col];
          if (packed) {
            if (!e.poison && (e.bits & 0xff) == want)
              continue;
            const int64_t c0 = 2 * col, c1 = std::min(cols - 1, 2 * col + 1);
            note([&] { return llvm::formatv(
                     "probe {6}, row {0} byte {1} (x = {2:e}, {3:e}, block "
                     "amax {4:e}): {5} in the IR, 0x{7} in the runtime",
                     sampled[s], col, values[s * cols + c0],
                     values[s * cols + c1], blockAmax(s, c0 / B),
                     e.poison ? std::string("undefined (poison)")
                              : "0x" + hexByte(e.bits & 0xff),
                     kind, hexByte(want))
                     .str(); });
            continue;
          }
          llvm::APFloat ir = llvm::APFloat(
              cast<FloatType>(dType.getElementType()).getFloatSemantics(),
              llvm::APInt(8, e.bits & 0xff));
          llvm::APFloat rt = llvm::APFloat(
              cast<FloatType>(dType.getElementType()).getFloatSemantics(),
              llvm::APInt(8, want));
          bool same = !e.poison && ((e.bits & 0xff) == want ||
                                    (ir.isNaN() && rt.isNaN()));
          if (same)
            continue;
          std::string diag;
          if (!e.poison && ir.isNaN() && rt.isFinite() && rt.isLargest())
            diag = "; the IR's cast does not saturate (no clamp to the "
                   "format's maximum before arith.truncf)";
          note([&] { return llvm::formatv("probe {7}, row {0} column {1}: x = {2:e} (block "
                             "amax {3:e}) gives {4} in the IR, 0x{5} in the "
                             "runtime{6}",
                             sampled[s], col, values[s * cols + col],
                             blockAmax(s, col / B),
                             e.poison ? std::string("undefined (poison)")
                                      : "0x" + hexByte(e.bits & 0xff),
                             hexByte(want), diag, kind)
                   .str(); });
        }
      }
    }
    if (llvm::none_of(alive, [](bool a) { return a; }) && kind >= 1)
      break;
  }
  FailureOr<QuantSchemeAttr> scheme = firstAlive(schemes, alive, mismatch, why);
  if (succeeded(scheme)) {
    // Values read by checks alone keep the IR's amax pass unless the two
    // amaxes agree.
    if (c.amax && !sameAmax[llvm::find(schemes, *scheme) - schemes.begin()])
      c.amax = Value();
    return scheme;
  }
  if (!saturatingCasts && StringRef(why.detail).contains("does not saturate"))
    why.detail += "; with casts that saturate (torch >= 2.12, Triton) "
                  "pass saturating-casts=true";
  return failure();
}

/// The positive float constants of `region` below 1 (in linalg bodies too),
/// as f32: the candidates for an FP8 block quantizer's amax floor
/// (`amax.clamp(min=1e-10)`).
SmallVector<float> smallConstants(const llvm::SetVector<Operation *> &region) {
  SmallVector<float> out;
  auto add = [&](Attribute a) {
    auto fa = dyn_cast_or_null<FloatAttr>(a);
    if (auto d = dyn_cast_or_null<DenseElementsAttr>(a))
      if (d.isSplat() && isa<FloatType>(d.getElementType()))
        fa = FloatAttr::get(d.getElementType(), d.getSplatValue<APFloat>());
    if (!fa)
      return;
    const float v = static_cast<float>(fa.getValueAsDouble());
    if (v > 0.0f && v < 1.0f && !llvm::is_contained(out, v))
      out.push_back(v);
  };
  // Constants defined in the region, or above it and read inside (a linalg
  // body captures torch-mlir's function-level constants); a constant that
  // an arith.truncf rounds also as rounded (torch clamps a bf16 amax at
  // 1e-10 rounded to bf16: vLLM's per-token-group reference on bf16).
  for (Operation *top : region)
    top->walk([&](Operation *op) {
      if (auto k = dyn_cast<arith::ConstantOp>(op))
        add(k.getValue());
      for (Value v : op->getOperands())
        if (auto k = v.getDefiningOp<arith::ConstantOp>())
          add(k.getValue());
      if (auto t = dyn_cast<arith::TruncFOp>(op))
        if (auto k = t.getIn().getDefiningOp<arith::ConstantOp>())
          if (auto fa = dyn_cast<FloatAttr>(k.getValue())) {
            auto ft = dyn_cast<FloatType>(t.getType());
            if (!ft)
              return;
            llvm::APFloat v = fa.getValue();
            bool lost = false;
            v.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
                      &lost);
            add(FloatAttr::get(ft, v));
          }
    });
  return out;
}

/// The float type whose values alone `x` holds: narrower than its element
/// type where an elementwise op yields an `extf` from it (a bf16 SwiGLU that
/// the normalisation fused with torch's `.float()`), else its element type.
Type valueDomain(Value x) {
  auto g = x.getDefiningOp<linalg::GenericOp>();
  if (!g || g->getNumResults() != 1)
    return elementTypeOf(x);
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  if (auto ext = yield.getOperand(0).getDefiningOp<arith::ExtFOp>())
    return ext.getIn().getType();
  return elementTypeOf(x);
}

/// What the runtime computes for an FP8 block scheme on one probe: codes
/// [rows, cols] and f32 scales [rows, nb].
LogicalResult runBlockReference(QuantSchemeAttr scheme, Type inType,
                                const std::vector<uint64_t> &in, int64_t rows,
                                int64_t cols, std::vector<uint8_t> &data,
                                std::vector<float> &scales,
                                std::string &error) {
  fusion_rt_quant_scheme s;
  fusion_rt_quant_scheme_init(&s);
  s.format = static_cast<int32_t>(scheme.getFormat());
  s.nan_policy = static_cast<int32_t>(scheme.getNanPolicy());
  s.block_rows = static_cast<int32_t>(scheme.getBlockRows());
  s.block_cols = static_cast<int32_t>(scheme.getBlockCols());
  s.nvfp4_recipe = static_cast<int32_t>(scheme.getRecipe());
  s.amax_epsilon = static_cast<float>(scheme.getEpsilon().convertToDouble());
  s.force_pow2_scale = scheme.getPow2Scale() ? 1 : 0;
  const int64_t nb = fusion_rt::ceil_div(cols, scheme.getBlockCols());
  const int64_t nbr = fusion_rt::ceil_div(rows, scheme.getBlockRows());
  ReferenceInput ri(inType, in, rows, cols);
  data.assign(rows * cols, 0);
  scales.assign(nbr * nb, 0.0f);
  fusion_rt_quant_outputs out;
  fusion_rt_quant_outputs_init(&out);
  out.rowwise_data = ri.view;
  out.rowwise_data.data = data.data();
  out.rowwise_data.dtype = scheme.getFormat() == QuantFormat::fp8_block_e5m2
                               ? FUSION_RT_F8E5M2
                               : FUSION_RT_F8E4M3;
  out.rowwise_scales = ri.view;
  out.rowwise_scales.data = scales.data();
  out.rowwise_scales.dtype = FUSION_RT_F32;
  out.rowwise_scales.sizes[0] = nbr;
  out.rowwise_scales.sizes[1] = nb;
  out.rowwise_scales.strides[0] = nb;
  return callReference(ri.view, s, out, error);
}

/// FP8 with f32 scales per group of a row or per 2D tile: the FP8 block
/// formats, checked on sampled rows (whole bands of a tile's rows; each
/// block reads its own rows only) with the probes of the MX check plus an
/// all-zero and an all-tiny input (the amax floor), for both recipes (x / s
/// and x * scale), every floor the region holds as a constant, both NaN
/// policies and power-of-two scales.
FailureOr<QuantSchemeAttr>
RaiseQuantizePass::identifyBlockFP8(Candidate &c, Decline &why) {
  MLIRContext *ctx = &getContext();
  auto xType = cast<RankedTensorType>(c.x.getType());
  auto dType = cast<RankedTensorType>(c.data.getType());
  auto sType = cast<RankedTensorType>(c.scales.getType());
  const int64_t cols = xType.getShape().back();
  const int64_t rows = xType.getNumElements() / cols, g = c.group;
  const int64_t br = c.blockRows, nb = cols / g;
  // Sampled: whole bands of `br` rows (single rows for 1xG groups), in
  // order, so that the sample is itself a matrix of whole blocks (only the
  // last band may be partial, and it comes last).
  const int64_t nbands = (rows + br - 1) / br;
  SmallVector<int64_t> bands, sampled;
  for (int64_t band : {int64_t(0), int64_t(1), nbands / 2, nbands - 1})
    if (band < nbands && !llvm::is_contained(bands, band))
      bands.push_back(band);
  for (int64_t band : bands)
    for (int64_t r = band * br; r < std::min(rows, (band + 1) * br); ++r)
      sampled.push_back(r);
  const int64_t sbands = bands.size();
  // Blocks compared: all, or the first and last 8 of wide rows.
  SmallVector<int64_t> blocks;
  for (int64_t b = 0; b < nb; ++b)
    if (nb <= 16 || b < 8 || b >= nb - 8)
      blocks.push_back(b);
  DenseMap<int64_t, int64_t> slotOf;
  for (auto [i, r] : llvm::enumerate(sampled))
    slotOf[r] = i;
  const int64_t srows = sampled.size();
  std::vector<uint64_t> probe;
  TensorEvaluator eval(
      [&](Value v, ArrayRef<int64_t> index, EvalScalar &out) {
        if (v != c.x)
          return false;
        int64_t linear = TensorEvaluator::linearize(index, xType.getShape());
        auto it = slotOf.find(linear / cols);
        out = it == slotOf.end()
                  ? EvalScalar{0, true} // a row outside the sample: poison
                  : EvalScalar{probe[it->second * cols + linear % cols], false};
        return true;
      },
      int64_t(50'000'000));
  eval.setSaturatingFloat8Casts(saturatingCasts);
  eval.setWrappingIntCasts(wrappingIntCasts);

  const QuantFormat format = isa<Float8E5M2Type>(dType.getElementType())
                                 ? QuantFormat::fp8_block_e5m2
                                 : QuantFormat::fp8_block_e4m3;
  SmallVector<float> floors = smallConstants(c.region);
  floors.insert(floors.begin(), 0.0f);
  SmallVector<QuantSchemeAttr> schemes;
  // Recipes: DeepSeek-V3's x / (amax / max) (te, the default),
  // x * (max / amax) with 1 / the multiplier written (multiply: torchao's
  // blockwise FP8 training, TE's Float8BlockScaling) and with the
  // multiplier itself written (multiplier: torchao.float8's rowwise
  // scaling, whose scale tensor is max / amax).
  for (Nvfp4Recipe recipe :
       {Nvfp4Recipe::te, Nvfp4Recipe::multiply, Nvfp4Recipe::multiplier})
    for (float eps : floors)
      for (bool pow2 : {false, true})
        for (NanPolicy nan : {NanPolicy::propagate, NanPolicy::ignore})
          schemes.push_back(QuantSchemeAttr::get(
              ctx, format, QuantDirection::rowwise, br, g, ScaleRounding::rceil,
              nan, ColwiseLayout::same, ScaleLayout::compact, ElemRounding::rne,
              TensorScaling::current, ZeroScale::exact,
              llvm::APFloat(static_cast<double>(eps)), pow2, recipe));
  SmallVector<Mismatch> mismatch(schemes.size());
  SmallVector<bool> alive(schemes.size(), true);
  SmallVector<int64_t> index;
  Type xt = xType.getElementType();
  // Probe values are values of the type x can hold (its producer's extf
  // source), fed as x's type.
  auto domain = cast<FloatType>(valueDomain(c.x));
  auto dataSem = &cast<FloatType>(dType.getElementType()).getFloatSemantics();
  // Probes: the MX check's six, an all-zero input, every block far below
  // any floor (about 1e-14), and (f32 values) block amaxes that make s one
  // ulp above a power of two, where a UE8M0 scale written as
  // exp2(ceil(log2(s))) in f32 rounds the wrong way (log2 rounds to the
  // integer) and the runtime's exact round-up does not. (For bf16 and f16
  // values, s = amax / 448 is never that close to a power of two that it
  // is not one.) Last, probe 9: block amaxes (values of x's domain) for
  // which the two recipes' scales differ, RN(1 / RN(max / amax)) !=
  // RN(amax / max): the fp8 codes of x * (max / amax) and x / (amax / max)
  // almost always agree, and a few blocks (2D tiles) might not tell the
  // recipes apart otherwise.
  const float fmax = format == QuantFormat::fp8_block_e4m3 ? 448.0f : 57344.0f;
  auto inDomain = [&](float v) {
    return static_cast<float>(floatValue(domain, floatBits(domain, v)));
  };
  SmallVector<float> tellApart;
  {
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> u(1.0f, 64.0f);
    for (int tries = 0; tries < 100000 && tellApart.size() < 64; ++tries) {
      const float top = inDomain(u(rng));
      if (1.0f / (fmax / top) != top / fmax)
        tellApart.push_back(top);
    }
  }
  for (unsigned kind = 0; kind < 10; ++kind) {
    if ((kind == 8 && !domain.isF32()) || (kind == 9 && tellApart.empty()))
      continue;
    std::vector<float> values =
        kind < 6 ? makeProbe(kind, srows, cols, kind + 1, finiteInputs)
                 : std::vector<float>(srows * cols, 0.0f);
    std::mt19937 rng(kind);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    if (kind == 7)
      for (float &v : values)
        v = std::ldexp(normal(rng), -46);
    if (kind == 8)
      for (int64_t i = 0; i < int64_t(values.size()); ++i) {
        const int64_t b = i / g, k = int64_t(b % 24) - 12;
        const float top = 448.0f * std::ldexp(1.0f + 0x1p-23f, int(k));
        values[i] = i % g == 0 ? top : top * 0.5f * std::tanh(normal(rng));
      }
    if (kind == 9)
      for (int64_t i = 0; i < int64_t(values.size()); ++i) {
        // The block of sample element i: its band of br rows, its group.
        const int64_t s = i / cols, j = i % cols;
        const int64_t b = (s / br) * nb + j / g;
        const float top = tellApart[size_t(b) % tellApart.size()];
        values[i] = s % br == 0 && j % g == 0
                        ? top
                        : top * 0.5f * std::tanh(normal(rng));
      }
    probe.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      auto held = [&] {
        return llvm::APFloat(domain.getFloatSemantics(),
                             llvm::APInt(domain.getWidth(),
                                         floatBits(domain, values[i])));
      };
      if (finiteInputs && !held().isFinite())
        values[i] = std::copysign(65504.0f, values[i]);
      values[i] = static_cast<float>(held().convertToDouble()); // as held
      probe[i] = floatBits(xt, values[i]);
    }
    eval.clear();
    auto evalAt = [&](Value what, ArrayRef<int64_t> shape, int64_t linear,
                      StringRef name, EvalScalar &out) {
      return evalElement(eval, what, shape, linear, name, index, out, why);
    };
    std::vector<EvalScalar> irData(srows * cols), irScales(sbands * nb);
    for (int64_t j = 0; j < sbands; ++j)
      for (int64_t b : blocks)
        if (!evalAt(c.scales, sType.getShape(), bands[j] * nb + b, "scales",
                    irScales[j * nb + b]))
          return failure();
    for (int64_t s = 0; s < srows; ++s)
      for (int64_t b : blocks)
        for (int64_t col = b * g; col < (b + 1) * g; ++col)
          if (!evalAt(c.data, dType.getShape(), sampled[s] * cols + col,
                      "data", irData[s * cols + col]))
            return failure();
    for (auto [k, scheme] : llvm::enumerate(schemes)) {
      std::vector<uint8_t> data;
      std::vector<float> scales;
      std::string error;
      if (failed(runBlockReference(scheme, xt, probe, srows, cols, data,
                                   scales, error))) {
        why = {DeclineRule::NotEvaluable, error};
        return failure();
      }
      // The text of a difference is built for the first one only (the
      // mismatch keeps no other; formatting every difference of a large
      // check cost more than evaluating it).
      auto note = [&](llvm::function_ref<std::string()> what) {
        alive[k] = false;
        mismatch[k].add(what, kind);
      };
      for (int64_t j = 0; j < sbands; ++j)
        for (int64_t b : blocks) {
          const EvalScalar e = irScales[j * nb + b];
          const float want = scales[j * nb + b];
          const float ir = llvm::bit_cast<float>(uint32_t(e.bits));
          if (e.poison || !(llvm::bit_cast<uint32_t>(want) == uint32_t(e.bits) ||
                            (std::isnan(ir) && std::isnan(want))))
            // (Nine significant digits: scales one ulp apart print apart.)
            note([&] {
              return llvm::formatv("probe {0}, {1} {2} block {3}: scale {4} in "
                                   "the IR, {5:e8} in the runtime",
                                   kind, br > 1 ? "band" : "row",
                                   br > 1 ? bands[j] : sampled[j], b,
                                   e.poison ? std::string("undefined (poison)")
                                            : llvm::formatv("{0:e8}", ir).str(),
                                   want)
                  .str();
            });
        }
      for (int64_t s = 0; s < srows; ++s)
        for (int64_t b : blocks) {
          for (int64_t col = b * g; col < (b + 1) * g; ++col) {
            const EvalScalar d = irData[s * cols + col];
            const uint8_t rt = data[s * cols + col];
            const bool bothNaN =
                !d.poison &&
                llvm::APFloat(*dataSem, llvm::APInt(8, d.bits & 0xff)).isNaN() &&
                llvm::APFloat(*dataSem, llvm::APInt(8, rt)).isNaN();
            if (!d.poison && ((d.bits & 0xff) == rt || bothNaN))
              continue;
            note([&] { return llvm::formatv("probe {0}, row {1} column {2}: x = {3:e} "
                               "gives {4} in the IR, 0x{5} in the runtime",
                               kind, sampled[s], col, values[s * cols + col],
                               d.poison ? std::string("undefined (poison)")
                                        : "0x" + hexByte(d.bits & 0xff),
                               hexByte(rt))
                     .str(); });
          }
        }
    }
    if (llvm::none_of(alive, [](bool a) { return a; }) && kind >= 1)
      break;
  }
  return firstAlive(schemes, alive, mismatch, why);
}

/// `v` reshaped (row-major) to the shape of `to` (at most one dynamic
/// size, which the reshape infers), or, with `sizesOf`, to the shape of that
/// value, its dynamic sizes read off it by `tensor.dim` ops (appended to
/// `dims`: the caller keeps them when it replaces `sizesOf`, and
/// resolveSizes takes them to the input's sizes).
Value reshapeTo(OpBuilder &b, Location loc, Value v, RankedTensorType to,
                Value sizesOf = {},
                SmallVectorImpl<Operation *> *dims = nullptr) {
  auto from = cast<RankedTensorType>(v.getType());
  if (from.getShape() == to.getShape())
    return v;
  if (to.getNumDynamicDims() < 2)
    sizesOf = Value();
  // Sizes read off `sizesOf` (and what they resolve to) exist where it does.
  OpBuilder::InsertionGuard guard(b);
  if (sizesOf)
    b.setInsertionPointAfterValue(sizesOf);
  if (from.getRank() > 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < from.getRank(); ++d)
      all[0].push_back(d);
    v = tensor::CollapseShapeOp::create(b, loc, v, all);
  }
  if (to.getRank() > 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < to.getRank(); ++d)
      all[0].push_back(d);
    auto type = RankedTensorType::get(to.getShape(), from.getElementType());
    if (!sizesOf)
      return tensor::ExpandShapeOp::create(b, loc, type, v, all);
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < to.getRank(); ++d) {
      if (!to.isDynamicDim(d)) {
        sizes.push_back(b.getIndexAttr(to.getDimSize(d)));
        continue;
      }
      auto dim = tensor::DimOp::create(b, loc, sizesOf, d);
      dims->push_back(dim);
      sizes.push_back(dim.getResult());
    }
    v = tensor::ExpandShapeOp::create(b, loc, type, v, all, sizes);
  }
  return v;
}

/// `v` with every element mapped by `op` (one scalar op) to the element
/// type `to`, as a linalg.generic.
Value elementwiseMap(
    OpBuilder &b, Location loc, Value v, Type to,
    llvm::function_ref<Value(OpBuilder &, Location, Value)> op) {
  auto from = cast<RankedTensorType>(v.getType());
  Value init =
      tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, v), to);
  AffineMap id = b.getMultiDimIdentityMap(from.getRank());
  SmallVector<utils::IteratorType> iters(from.getRank(),
                                         utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{v}, ValueRange{init},
      ArrayRef<AffineMap>{id, id}, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, op(nb, nloc, args[0]));
      });
  return g.getResult(0);
}

/// `v` with its elements reinterpreted as `to` (same width), as a
/// linalg.generic: the form that bufferizes (tensor.bitcast does not).
Value elementwiseBitcast(OpBuilder &b, Location loc, Value v, Type to) {
  return elementwiseMap(b, loc, v, to, [&](OpBuilder &nb, Location l, Value x) {
    return arith::BitcastOp::create(nb, l, to, x).getResult();
  });
}

/// `v` (a float tensor) converted element by element to the float type `to`.
Value elementwiseFloatCast(OpBuilder &b, Location loc, Value v, Type to) {
  bool widen = to.getIntOrFloatBitWidth() >
               getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth();
  return elementwiseMap(b, loc, v, to, [&](OpBuilder &nb, Location l, Value x) {
    return widen ? arith::ExtFOp::create(nb, l, to, x).getResult()
                 : arith::TruncFOp::create(nb, l, to, x).getResult();
  });
}

/// The raised `fusion.quantize` of the candidate's input with `scheme`,
/// right after the input (it reads nothing else), a rank-1 input as one row.
/// With `packedFp4Data` its data is typed as the IR packs it: i8, two codes
/// per byte (torch's float4_e2m1fn_x2).
QuantizeOp createRaisedQuantize(OpBuilder &b, const Candidate &c,
                                QuantSchemeAttr scheme, bool packedFp4Data) {
  if (Operation *def = c.x.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(c.x).getOwner());
  // A delayed scale defined after the input (delimitDelayed checked that it
  // is in the same block or an argument).
  if (Operation *def =
          c.scale && !c.constScale ? c.scale.getDefiningOp() : nullptr)
    if (def->getBlock() == b.getInsertionBlock() &&
        (b.getInsertionPoint() == b.getInsertionBlock()->end() ||
         !def->isBeforeInBlock(&*b.getInsertionPoint())))
      b.setInsertionPointAfter(def);
  Location loc = c.cast->getLoc();
  auto xType = cast<RankedTensorType>(c.x.getType());
  Value input = c.x;
  if (xType.getRank() == 1)
    input = reshapeTo(
        b, loc, input,
        RankedTensorType::get({1, xType.getShape()[0]}, xType.getElementType()));
  // Swizzled scales tile a matrix: a static N-d input as [rows, N].
  if (scheme.getScaleLayout() == ScaleLayout::swizzled &&
      xType.getRank() > 2 && xType.hasStaticShape())
    input = reshapeTo(b, loc, input,
                      RankedTensorType::get({xType.getNumElements() /
                                                 xType.getShape().back(),
                                             xType.getShape().back()},
                                            xType.getElementType()));
  std::string error;
  auto inType = cast<RankedTensorType>(input.getType());
  FailureOr<SmallVector<RankedTensorType, 6>> types = inferQuantResultTypes(
      b.getContext(), scheme, inType.getShape(), 1, false, error);
  assert(succeeded(types) && "identify() checked the shape");
  if (packedFp4Data) {
    SmallVector<int64_t> shape((*types)[0].getShape());
    if (!ShapedType::isDynamic(shape.back()))
      shape.back() = (shape.back() + 1) / 2;
    (*types)[0] = RankedTensorType::get(shape, b.getI8Type());
  }
  // The input's sizes, reified from its producer where it has one: a
  // tensor.dim of the input would be one more user of it (of the activation
  // a fusion takes). The results' dynamic sizes follow from them by the
  // verifier's rules (a dynamic last dimension's scales: ceil(N / block)).
  SmallVector<OpFoldResult> sizes;
  if (auto res = dyn_cast<OpResult>(input)) {
    ReifiedRankedShapedTypeDims dims;
    if (!inType.hasStaticShape() &&
        succeeded(reifyResultShapes(b, res.getOwner(), dims)))
      sizes = dims[res.getResultNumber()];
  }
  if (sizes.empty())
    sizes = tensor::getMixedSizes(b, loc, input);
  SmallVector<Type> resultTypes(types->begin(), types->end());
  SmallVector<Value> outs = createQuantDestinations(
      b, loc, scheme, sizes, /*halves=*/1, /*dbias=*/false, resultTypes);
  // The delayed scale as the op takes it: tensor<1xf32>.
  Value scale = c.scale;
  if (c.constScale) {
    auto one = RankedTensorType::get({1}, b.getF32Type());
    scale = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(one, b.getF32FloatAttr(*c.constScale)));
  } else if (scale) {
    auto one = RankedTensorType::get({1}, b.getF32Type());
    scale = cast<RankedTensorType>(scale.getType()).getRank() == 0
                ? Value(tensor::ExpandShapeOp::create(
                      b, loc, one, scale, ArrayRef<ReassociationIndices>{}))
                : reshapeTo(b, loc, scale, one);
  }
  return QuantizeOp::create(b, loc, resultTypes, input, scale, Value(), outs,
                            scheme);
}

/// Sizes the program takes from values of `region` (tensor.dim, with
/// dynamic shapes), also through ops that only reshape or compute from
/// them (added to `region`: they die with it), taken from where those got
/// them (the ops' reified shapes), so that the region's ops die when their
/// values do.
void resolveSizes(llvm::SetVector<Operation *> &region) {
  SmallVector<tensor::DimOp> work;
  SmallVector<Operation *> grow(region.begin(), region.end());
  while (!grow.empty()) {
    Operation *op = grow.pop_back_val();
    for (Value r : op->getResults())
      for (Operation *u : r.getUsers()) {
        if (auto d = dyn_cast<tensor::DimOp>(u)) {
          work.push_back(d);
        } else if (u->getParentOp() == op->getParentOp() && isRegionOp(u) &&
                   isPure(u) && region.insert(u)) {
          grow.push_back(u);
        }
      }
  }
  // Each live tensor.dim once (an erased one's address may come back).
  DenseSet<Operation *> queued;
  llvm::erase_if(work, [&](tensor::DimOp d) { return !queued.insert(d).second; });
  auto push = [&](tensor::DimOp d) {
    if (queued.insert(d).second)
      work.push_back(d);
  };
  while (!work.empty()) {
    tensor::DimOp dim = work.pop_back_val();
    std::optional<int64_t> index = dim.getConstantIndex();
    auto src = dyn_cast<OpResult>(dim.getSource());
    if (!index || !src)
      continue;
    OpBuilder b(dim);
    Value size;
    ReifiedRankedShapedTypeDims shapes;
    auto reshape = dyn_cast<tensor::ReshapeOp>(src.getOwner());
    auto elements = reshape ? reshape.getShape().getDefiningOp<tensor::FromElementsOp>()
                            : tensor::FromElementsOp();
    if (elements) {
      // torch-mlir's reshape to a shape built from sizes: that size.
      size = elements.getElements()[*index];
      if (!size.getType().isIndex())
        size = arith::IndexCastOp::create(b, dim.getLoc(), b.getIndexType(), size);
    } else if (succeeded(reifyResultShapes(b, src.getOwner(), shapes))) {
      size = getValueOrCreateConstantIndexOp(
          b, dim.getLoc(), shapes[src.getResultNumber()][*index]);
    } else {
      continue;
    }
    dim.replaceAllUsesWith(size);
    queued.erase(dim);
    dim.erase();
    // The reified size may read sizes of other values of the region
    // (a collapse's product of its source's sizes).
    SmallVector<Value> scan{size};
    for (unsigned n = 0; !scan.empty() && n < 64; ++n) {
      Operation *def = scan.pop_back_val().getDefiningOp();
      if (!def)
        continue;
      if (auto d = dyn_cast<tensor::DimOp>(def)) {
        if (Operation *s = d.getSource().getDefiningOp())
          if (region.contains(s))
            push(d);
        continue;
      }
      if (isa<IndexType>(def->getResult(0).getType()) && isPure(def))
        for (Value o : def->getOperands())
          scan.push_back(o);
    }
  }
  // Reifying a structured op's shape builds the sizes of all its operands;
  // those left unused would keep the region's values alive.
  for (Operation *op : region)
    for (Value r : op->getResults())
      for (Operation *u : llvm::make_early_inc_range(r.getUsers()))
        if (isa<tensor::DimOp>(u) && u->use_empty())
          u->erase();
}

/// Erases the ops of `region` left without users, users first.
void eraseUnused(const llvm::SetVector<Operation *> &region) {
  SmallVector<Operation *> ops(region.begin(), region.end());
  llvm::sort(ops, [](Operation *a, Operation *b) {
    return a->getBlock() == b->getBlock() ? b->isBeforeInBlock(a) : a < b;
  });
  for (Operation *op : ops)
    if (op->use_empty())
      op->erase();
}

/// The raised op's amax (`tensor<1xf32>`) in the shape and element type of
/// the IR's amax `like` (the check showed the values equal).
Value amaxAs(OpBuilder &b, Location loc, Value raised, Value like) {
  auto aType = cast<RankedTensorType>(like.getType());
  Value amax = raised;
  if (aType.getRank() == 0)
    amax = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({}, b.getF32Type()), amax,
        ArrayRef<ReassociationIndices>{});
  else
    amax = reshapeTo(b, loc, amax,
                     RankedTensorType::get(aType.getShape(), b.getF32Type()));
  if (!aType.getElementType().isF32())
    amax = elementwiseFloatCast(b, loc, amax, aType.getElementType());
  return amax;
}

/// The checks that the IR's quantizer left on its input (torch-mlir's
/// cf.assert on the amax, whose computation then reads the input once more
/// only for them): dropped where they are proven to hold.
unsigned dropInputChecks(Value x, bool finite) {
  SmallVector<Operation *> readers;
  for (Operation *u : x.getUsers())
    if (!isa<QuantizeOp>(u) && !llvm::is_contained(readers, u) &&
        feedsChecksOnly(u))
      readers.push_back(u);
  std::string why;
  return readers.empty() ? 0 : dropProvenChecks(readers, finite, why);
}

void RaiseQuantizePass::rewrite(Candidate &c, QuantSchemeAttr scheme) {
  OpBuilder b(c.data.getContext());
  Location loc = c.cast->getLoc();
  QuantizeOp q = createRaisedQuantize(b, c, scheme, c.packedFp4);
  Value data = q.getResult(0);
  auto irDataType = cast<RankedTensorType>(c.data.getType());
  if (irDataType.getElementType() != elementTypeOf(data))
    data = elementwiseBitcast(b, loc, data, irDataType.getElementType());
  // Results whose shape has several dynamic sizes (a 3-D input's scales
  // [B, T * N / 16]) take them from the IR's results (resolved below).
  SmallVector<Operation *> sizeReads;
  data = reshapeTo(b, loc, data, irDataType, c.data, &sizeReads);
  auto sType = cast<RankedTensorType>(c.scales.getType());
  Value scales = q.getResult(1);
  if (sType.getElementType() != elementTypeOf(scales))
    scales = elementwiseBitcast(b, loc, scales, sType.getElementType());
  scales = reshapeTo(b, loc, scales, sType, c.scales, &sizeReads);
  auto notSizeRead = [&](OpOperand &use) {
    return !llvm::is_contained(sizeReads, use.getOwner());
  };
  c.data.replaceUsesWithIf(data, notSizeRead);
  c.scales.replaceUsesWithIf(scales, notSizeRead);
  // NVFP4: what the program reads of the per-tensor scale is computed from
  // the raised op's amax (results: data, scales, amax); the IR's amax pass
  // goes.
  if (c.amax)
    c.amax.replaceAllUsesWith(amaxAs(b, loc, q.getResult(2), c.amax));
  resolveSizes(c.region);
  eraseUnused(c.region);
  c.droppedChecks = dropInputChecks(c.x, finiteInputs);
}

void RaiseQuantizePass::rewritePerTensor(Candidate &c, QuantSchemeAttr scheme) {
  OpBuilder b(c.data.getContext());
  Location loc = c.cast->getLoc();
  QuantizeOp q = createRaisedQuantize(b, c, scheme, false);
  // Results: data, scale_inv, amax.
  SmallVector<Operation *> sizeReads;
  Value data = reshapeTo(b, loc, q.getResult(0),
                         cast<RankedTensorType>(c.data.getType()), c.data,
                         &sizeReads);
  c.data.replaceUsesWithIf(data, [&](OpOperand &use) {
    return !llvm::is_contained(sizeReads, use.getOwner());
  });
  // (Delayed scaling: the program's separate tensor amax, where the check
  // showed it equal to the raised op's.)
  if (c.amax)
    c.amax.replaceAllUsesWith(amaxAs(b, loc, q.getResult(2), c.amax));
  // The ops computed from the amax alone stay where the program uses them.
  resolveSizes(c.region);
  eraseUnused(c.region);
  if (c.delayed) {
    resolveSizes(c.amaxRegion);
    eraseUnused(c.amaxRegion);
  }
  c.droppedChecks = dropInputChecks(c.x, finiteInputs);
}

/// Dynamic shapes. The exactness check evaluates static shapes, so a
/// quantizer whose data has dynamic dimensions is checked on a copy of its
/// function whose dynamic argument dimensions are fixed to
/// kSpecializedSize and folded into static types by canonicalization. The
/// copy's values are traced back to the function's through every
/// replacement the folding makes; a quantizer that the copy shows exact is
/// raised in the function, with its dynamic shapes. That holds for every
/// size where the quantizer's meaning does not depend on it: no size may
/// flow into a value it computes (only into shapes), and a dynamic last
/// dimension of its input must not move the block partition (a second copy
/// with another last size gives the same scheme).
constexpr int64_t kSpecializedSize = 4;
/// A dynamic last dimension is fixed to kSpecializedLast in the copy, and
/// the quantizer raised only if a second copy with kSpecializedLastWide
/// gives the same scheme: blocks of 16, 32 and 128 divide both, and a
/// per-row block (the whole dimension) differs between them.
constexpr int64_t kSpecializedLast = 256;
constexpr int64_t kSpecializedLastWide = 384;
/// Where a leading dynamic size reaches the blocks (rows quantized along
/// dim 0 through a transpose: the rows become the blocked last dimension),
/// the copy with it fixed to kSpecializedSize has no whole block; the check
/// then takes two copies with every dynamic size kSpecializedLast and
/// kSpecializedLastWide (the same scheme in both, as for a dynamic last
/// dimension), if their quantized data has at most this many elements.
constexpr int64_t kSpecializedBlocksMaxElements = int64_t(1) << 21;

/// bitcast(cast(x)) -> cast(bitcast(x)): a cast to a dynamic type before a
/// bitcast (torchao's view.dtype) would otherwise keep the copy dynamic.
struct BitcastOfCast : OpRewritePattern<tensor::BitcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::BitcastOp op,
                                PatternRewriter &rewriter) const override {
    auto cast = op.getSource().getDefiningOp<tensor::CastOp>();
    if (!cast)
      return failure();
    auto src = dyn_cast<RankedTensorType>(cast.getSource().getType());
    auto dst = dyn_cast<RankedTensorType>(op.getType());
    if (!src || !dst || !src.hasStaticShape() || dst.hasStaticShape())
      return failure();
    Value bits = tensor::BitcastOp::create(
        rewriter, op.getLoc(),
        RankedTensorType::get(src.getShape(), dst.getElementType()),
        cast.getSource());
    rewriter.replaceOpWithNewOp<tensor::CastOp>(op, dst, bits);
    return success();
  }
};

/// tensor.reshape to a constant shape with a dynamic result type (torch-mlir
/// builds the shape from tensor.dim sizes, which the copy folds).
struct StaticReshape : OpRewritePattern<tensor::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto rt = op.getResultType();
    // Static already, from a cast of a static tensor (the shape folded
    // before the source did): read the static tensor.
    if (rt.hasStaticShape()) {
      auto c = op.getSource().getDefiningOp<tensor::CastOp>();
      if (!c || !cast<ShapedType>(c.getSource().getType()).hasStaticShape())
        return failure();
      rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, rt, c.getSource(),
                                                     op.getShape());
      return success();
    }
    DenseIntElementsAttr shape;
    if (!matchPattern(op.getShape(), m_Constant(&shape)))
      return failure();
    SmallVector<int64_t> dims;
    for (const APInt &v : shape.getValues<APInt>()) {
      if (v.isNegative())
        return failure();
      dims.push_back(v.getSExtValue());
    }
    if (static_cast<int64_t>(dims.size()) != rt.getRank())
      return failure();
    Value src = op.getSource();
    if (auto c = src.getDefiningOp<tensor::CastOp>())
      if (cast<ShapedType>(c.getSource().getType()).hasStaticShape())
        src = c.getSource();
    Value r = tensor::ReshapeOp::create(
        rewriter, op.getLoc(), RankedTensorType::get(dims, rt.getElementType()),
        src, op.getShape());
    rewriter.replaceOpWithNewOp<tensor::CastOp>(op, rt, r);
    return success();
  }
};

/// Keeps `toOrig` (copy value -> function value) across rewrites: a
/// replacement value stands for what it replaces; a cast's source for its
/// result.
struct TraceListener : RewriterBase::Listener {
  explicit TraceListener(DenseMap<Value, Value> &toOrig) : toOrig(toOrig) {}
  void notifyOperationReplaced(Operation *op, ValueRange repl) override {
    for (auto [r, n] : llvm::zip(op->getResults(), repl)) {
      auto it = toOrig.find(r);
      if (it == toOrig.end() || toOrig.count(n))
        continue;
      Value orig = it->second;
      toOrig[n] = orig;
    }
  }
  void notifyOperationErased(Operation *op) override {
    if (auto c = dyn_cast<tensor::CastOp>(op)) {
      auto it = toOrig.find(c.getResult());
      if (it != toOrig.end() && !toOrig.count(c.getSource())) {
        Value orig = it->second;
        toOrig[c.getSource()] = orig;
      }
    }
    for (Value r : op->getResults())
      toOrig.erase(r);
  }
  DenseMap<Value, Value> &toOrig;
};

/// A copy of a function with its dynamic argument dimensions fixed.
struct Specialized {
  OwningOpRef<ModuleOp> module;
  DenseMap<Value, Value> toOrig;
  /// The sizes the dynamic dimensions were fixed to (where the program
  /// casts to no static size): a last one, and every other.
  int64_t lastSize = 0, leadingSize = 0;
  /// Whether a value of the copy is empty (a size of 0: a dynamic size
  /// divided into blocks it does not fill), so that a quantizer may find
  /// no whole block to check in it.
  bool degenerate = false;
  /// The function's value for `v` of the copy (through casts), or null.
  Value orig(Value v) const {
    for (unsigned depth = 0; v && depth < 8; ++depth) {
      if (Value o = toOrig.lookup(v))
        return o;
      auto c = v.getDefiningOp<tensor::CastOp>();
      v = c ? c.getSource() : Value();
    }
    return Value();
  }
  /// The copy's op that computes `origResult` (a structured op's result).
  Operation *copyOf(Value origResult) const {
    for (auto [k, v] : toOrig) {
      if (v != origResult)
        continue;
      Value c = k;
      while (auto cast = c.getDefiningOp<tensor::CastOp>())
        c = cast.getSource();
      if (isa_and_nonnull<linalg::LinalgOp>(c.getDefiningOp()))
        return c.getDefiningOp();
    }
    return nullptr;
  }
};

FailureOr<Specialized> specialize(func::FuncOp fn,
                                  int64_t lastSize = kSpecializedLast,
                                  int64_t leadingSize = kSpecializedSize) {
  MLIRContext *ctx = fn.getContext();
  Specialized sp;
  sp.lastSize = lastSize;
  sp.leadingSize = leadingSize;
  sp.module = ModuleOp::create(fn.getLoc());
  IRMapping map;
  auto copy = cast<func::FuncOp>(fn->clone(map));
  sp.module->push_back(copy);
  for (BlockArgument a : fn.getArguments())
    sp.toOrig[map.lookup(a)] = a;
  for (Operation &op : fn.getBody().front())
    for (Value r : op.getResults())
      sp.toOrig[map.lookup(r)] = r;
  OpBuilder b(ctx);
  b.setInsertionPointToStart(&copy.getBody().front());
  SmallVector<Type> argTypes;
  for (BlockArgument a : copy.getArguments()) {
    auto t = dyn_cast<RankedTensorType>(a.getType());
    if (t && !t.hasStaticShape()) {
      // A size the program casts the argument to, else `leadingSize`
      // (a last dimension: `lastSize`).
      SmallVector<int64_t> shape(t.getShape());
      for (int64_t d = 0; d < t.getRank(); ++d) {
        if (!ShapedType::isDynamic(shape[d]))
          continue;
        shape[d] = d == t.getRank() - 1 ? lastSize : leadingSize;
        for (Operation *u : a.getUsers())
          if (auto c = dyn_cast<tensor::CastOp>(u))
            if (auto ct = dyn_cast<RankedTensorType>(c.getType()))
              if (!ct.isDynamicDim(d))
                shape[d] = ct.getDimSize(d);
      }
      a.setType(RankedTensorType::get(shape, t.getElementType(),
                                      t.getEncoding()));
      auto c = tensor::CastOp::create(b, a.getLoc(), t, a);
      a.replaceAllUsesExcept(c, c);
      sp.toOrig[c] = sp.toOrig[a];
    } else if (isa<UnrankedTensorType>(a.getType())) {
      return failure();
    }
    argTypes.push_back(a.getType());
  }
  copy.setFunctionType(
      FunctionType::get(ctx, argTypes, copy.getFunctionType().getResults()));
  RewritePatternSet patterns(ctx);
  for (Dialect *d : ctx->getLoadedDialects())
    d->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
  patterns.add<BitcastOfCast, StaticReshape>(ctx);
  TraceListener listener(sp.toOrig);
  GreedyRewriteConfig config;
  config.setListener(&listener);
  (void)applyPatternsGreedily(copy, std::move(patterns), config);
  // The copy returns its static values (casts to the dynamic result types
  // would hide them from the seeds' and scales' searches).
  Operation *ret = copy.getBody().front().getTerminator();
  for (OpOperand &o : ret->getOpOperands())
    while (auto c = o.get().getDefiningOp<tensor::CastOp>()) {
      Value src = c.getSource();
      if (!cast<ShapedType>(src.getType()).hasStaticShape())
        break;
      if (!sp.toOrig.count(src))
        if (Value orig = sp.toOrig.lookup(c.getResult()))
          sp.toOrig[src] = orig;
      o.set(src);
      if (c->use_empty()) {
        sp.toOrig.erase(c.getResult());
        c->erase();
      }
    }
  copy.setFunctionType(FunctionType::get(ctx, argTypes,
                                         ret->getOperandTypes()));
  // Sizes that contradict the program (a reshape the fixed size does not
  // divide) leave no copy to check.
  if (failed(verifyQuietly(copy)))
    return failure();
  copy.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (auto rt = dyn_cast<RankedTensorType>(t))
        if (llvm::is_contained(rt.getShape(), 0))
          sp.degenerate = true;
  });
  return sp;
}

/// The function's copy with fixed sizes (its last dimensions `lastSize`),
/// taken when a seed first needs it; a rewrite drops it (`copy.reset()`).
/// A function that has no such copy keeps having none.
struct LazyCopy {
  int64_t lastSize;
  int64_t leadingSize = kSpecializedSize;
  std::optional<Specialized> copy;
  bool failed = false;
  Specialized *get(func::FuncOp fn) {
    if (!copy && !failed) {
      FailureOr<Specialized> s = specialize(fn, lastSize, leadingSize);
      if (succeeded(s))
        copy = std::move(*s);
      failed = !copy;
    }
    return copy ? &*copy : nullptr;
  }
};

/// Whether `v` of the function is `c` of the copy with some static
/// dimensions made dynamic: never the input's last (the block partition);
/// a result's (`result`) may be, where the IR flattens dynamic rows into
/// it (a 3-D input's scales [B, T * N / 16]: the rows' order is the same,
/// and the check saw it with every dynamic size fixed).
bool sameUpToLeadingSizes(Value v, Value c, bool result = false) {
  auto vt = dyn_cast<RankedTensorType>(v.getType());
  auto ct = dyn_cast<RankedTensorType>(c.getType());
  if (!vt || !ct || vt.getRank() != ct.getRank() ||
      vt.getElementType() != ct.getElementType() || !ct.hasStaticShape())
    return false;
  for (int64_t d = 0; d < vt.getRank(); ++d) {
    int64_t n = vt.getDimSize(d);
    if (ShapedType::isDynamic(n) ? d == vt.getRank() - 1 && !result
                                 : n != ct.getDimSize(d))
      return false;
  }
  return true;
}

/// Why the quantizer `region` (of the function) may compute something that
/// depends on a dynamic size, or "" when its sizes only shape tensors: no
/// body reads its position (linalg.index) or a captured integer computed
/// from a size.
std::string sizeDependence(const llvm::SetVector<Operation *> &region) {
  for (Operation *op : region) {
    auto l = dyn_cast<linalg::LinalgOp>(op);
    if (!l)
      continue;
    // The position may feed only results nothing reads (torch-mlir's
    // argmax beside an amax).
    Block *body = l.getBlock();
    SmallVector<Value> work;
    for (auto [r, y] :
         llvm::zip(l->getResults(), body->getTerminator()->getOperands()))
      if (!r.use_empty())
        work.push_back(y);
    DenseSet<Value> seen;
    while (!work.empty()) {
      Value w = work.pop_back_val();
      if (!seen.insert(w).second)
        continue;
      if (auto arg = dyn_cast<BlockArgument>(w)) {
        // An accumulator reads what its result's yield computes.
        if (arg.getOwner() == body && arg.getArgNumber() >= l.getNumDpsInputs())
          work.push_back(body->getTerminator()->getOperand(
              arg.getArgNumber() - l.getNumDpsInputs()));
        continue;
      }
      Operation *def = w.getDefiningOp();
      if (!def || !l->isProperAncestor(def))
        continue;
      if (isa<linalg::IndexOp>(def))
        return "a body of the quantizer reads its position (linalg.index)";
      for (Value o : def->getOperands())
        work.push_back(o);
    }
    for (Value v : readValues(op)) {
      if (isa<ShapedType>(v.getType()))
        continue;
      SmallVector<Value> work{v};
      DenseSet<Value> seen;
      while (!work.empty()) {
        Value w = work.pop_back_val();
        Operation *def = w.getDefiningOp();
        if (!def || !seen.insert(w).second)
          continue;
        if (isa<tensor::DimOp>(def))
          return "a value of the quantizer is computed from a dynamic size";
        for (Value o : def->getOperands())
          work.push_back(o);
      }
    }
  }
  return "";
}

std::optional<RaiseQuantizePass::Found>
RaiseQuantizePass::findRaisable(Operation *castOp, bool packedFp4, Decline &why,
                                SmallVectorImpl<Operation *> &declinedRegion) {
  SmallVector<Candidate> candidates = delimit(castOp, packedFp4, why);
  // An escaping 8-bit tensor that is not half of an amax-reduced float
  // tensor is not an FP4 quantizer (int8 data, indices, masks): no remark.
  // One whose scales were found and that was declined anyway is one:
  // its remark stands for the region (the e4m3 scale cast in it included).
  if (packedFp4 && candidates.empty()) {
    if (why.region.empty())
      why.rule = DeclineRule::None;
    declinedRegion.assign(why.region.begin(), why.region.end());
    return std::nullopt;
  }
  for (Candidate &c : candidates) {
    auto xType = cast<RankedTensorType>(c.x.getType());
    if (!xType.hasStaticShape() || xType.getShape().back() == 0 ||
        xType.getNumElements() == 0) {
      why = {DeclineRule::RaiseUnsupportedShape,
             "the exactness check needs a static, non-empty input shape"};
      continue;
    }
    FailureOr<QuantSchemeAttr> s = c.delayed     ? identifyDelayed(c, why)
                                   : c.perTensor ? identifyPerTensor(c, why)
                                                 : identify(c, why);
    if (succeeded(s))
      return Found{std::move(c), *s};
  }
  for (Candidate &c : candidates)
    if (c.nvfp4)
      declinedRegion.append(c.region.begin(), c.region.end());
  return std::nullopt;
}

std::optional<RaiseQuantizePass::Found> RaiseQuantizePass::findRaisableDynamic(
    Operation *castOp, bool packedFp4, Specialized &sp,
    llvm::function_ref<Specialized *()> wide, Decline &why,
    SmallVectorImpl<Operation *> &declinedRegion) {
  Operation *copySeed = sp.copyOf(castOp->getResult(0));
  if (!copySeed) {
    why = {DeclineRule::RaiseUnsupportedShape,
           "dynamic sizes: the copy with fixed sizes folded this cast away"};
    return std::nullopt;
  }
  // Data that the copy with fixed sizes leaves empty (a leading dynamic size
  // of an argument, fixed to 4, reaching the blocks: rows quantized along
  // dim 0 through a transpose, as [N, rows / 32, 32]): nothing to check
  // here; the caller retries on copies with every dynamic size larger.
  auto origData = cast<RankedTensorType>(castOp->getResult(0).getType());
  auto copyData = dyn_cast<RankedTensorType>(copySeed->getResult(0).getType());
  if (copyData && copyData.getRank() == origData.getRank() &&
      llvm::any_of(llvm::seq<int64_t>(0, origData.getRank()), [&](int64_t d) {
        return origData.isDynamicDim(d) && copyData.getDimSize(d) == 0;
      })) {
    why = {DeclineRule::RaiseUnsupportedShape,
           llvm::formatv("dynamic sizes: the copy with fixed sizes (each "
                         "leading dynamic size {0}) leaves the quantized "
                         "data empty: a leading dynamic size of an argument "
                         "reaches its blocks (such as rows quantized along "
                         "dim 0 through a transpose); not checked",
                         sp.leadingSize)
               .str()};
    return std::nullopt;
  }
  // The copies that size every dynamic dimension for whole blocks check
  // an input of that many rows: bounded, as the check's cost is its size.
  if (sp.leadingSize > kSpecializedSize && copyData &&
      copyData.hasStaticShape() &&
      copyData.getNumElements() > kSpecializedBlocksMaxElements) {
    why = {DeclineRule::RaiseUnsupportedShape,
           llvm::formatv("dynamic sizes: a leading dynamic size reaches the "
                         "quantizer's blocks, and its copy with each dynamic "
                         "size {0} quantizes {1} elements, more than the "
                         "check takes ({2}); not checked",
                         sp.leadingSize, copyData.getNumElements(),
                         kSpecializedBlocksMaxElements)
               .str()};
    return std::nullopt;
  }
  SmallVector<Operation *> copyDeclined;
  std::optional<Found> f =
      findRaisable(copySeed, packedFp4, why, copyDeclined);
  for (Operation *op : copyDeclined)
    for (Value r : op->getResults())
      if (Value o = sp.orig(r))
        if (Operation *def = o.getDefiningOp())
          declinedRegion.push_back(def);
  if (!f)
    return std::nullopt;
  // The candidate in the function: its values traced back, the same types
  // up to dynamic leading sizes. Declined, its region is the quantizer's.
  Candidate &cc = f->candidate;
  auto declineRegion = [&] {
    for (Operation *op : cc.region)
      for (Value r : op->getResults())
        if (Value o = sp.orig(r))
          if (Operation *def = o.getDefiningOp())
            declinedRegion.push_back(def);
    return std::optional<Found>();
  };
  Candidate c = cc;
  c.cast = castOp;
  c.region.clear();
  c.amaxRegion.clear();
  // A dynamic last dimension of the input: the blocks must not follow it.
  // The quantizer checked with it fixed to another size must be the same.
  Value origX = sp.orig(cc.x);
  auto origXType = origX ? dyn_cast<RankedTensorType>(origX.getType())
                         : RankedTensorType();
  const bool dynamicLast =
      origXType && origXType.getRank() > 0 &&
      origXType.isDynamicDim(origXType.getRank() - 1);
  if (dynamicLast) {
    Specialized *w = wide();
    Operation *wideSeed = w ? w->copyOf(castOp->getResult(0)) : nullptr;
    Decline wideWhy;
    SmallVector<Operation *> ignored;
    std::optional<Found> f2 =
        wideSeed ? findRaisable(wideSeed, packedFp4, wideWhy, ignored)
                 : std::nullopt;
    if (!f2 || f2->scheme != f->scheme) {
      why = {DeclineRule::RaiseUnsupportedShape,
             llvm::formatv(
                 "dynamic sizes: the input's last dimension is dynamic, and "
                 "the quantizer is {0} with it fixed to {1} but {2} with it "
                 "fixed to {3}",
                 schemeName(f->scheme), kSpecializedLast,
                 !wideSeed ? std::string("no copy")
                 : f2      ? schemeName(f2->scheme)
                           : "not raised (" + wideWhy.detail + ")",
                 kSpecializedLastWide)
                 .str()};
      return declineRegion();
    }
    auto lastOf = [](Value v) {
      auto t = cast<RankedTensorType>(v.getType());
      return t.getDimSize(t.getRank() - 1);
    };
    f->checkedLast[0] = lastOf(cc.x);
    f->checkedLast[1] = lastOf(f2->candidate.x);
  }
  auto back = [&](Value v, Value &out, StringRef what) {
    if (!v)
      return true;
    out = sp.orig(v);
    if (out && sameUpToLeadingSizes(out, v,
                                    /*result=*/what != "input" || dynamicLast))
      return true;
    why = {DeclineRule::RaiseUnsupportedShape,
           ("dynamic sizes: the " + what +
            " of the quantizer checked on fixed sizes has no counterpart of "
            "the same shape up to dynamic sizes (the input's last one "
            "static)" +
            (out ? llvm::formatv(" ({0} vs {1})", out.getType(), v.getType())
                       .str()
                 : std::string()))
               .str()};
    return false;
  };
  if (!back(cc.x, c.x, "input") || !back(cc.data, c.data, "data") ||
      !back(cc.scales, c.scales, "scales") || !back(cc.amax, c.amax, "amax") ||
      !back(cc.scale, c.scale, "scale"))
    return declineRegion();
  SmallVector<Value> roots{c.data};
  if (c.scales)
    roots.push_back(c.scales);
  DenseMap<Value, bool> constMemo;
  Value stray;
  // A delayed quantizer's amax is a region of its own (its amax reduction).
  auto &amaxIn = c.delayed ? c.amaxRegion : c.region;
  if (failed(backwardSlice(roots, c.x, c.region, constMemo, stray, c.scale)) ||
      (c.delayed && c.amax &&
       failed(backwardSlice({c.amax}, c.x, c.amaxRegion, constMemo, stray))) ||
      (c.amax && !amaxIn.contains(c.amax.getDefiningOp()))) {
    why = {DeclineRule::RaiseUnsupportedShape,
           "dynamic sizes: the quantizer checked on fixed sizes reads other "
           "values in the function" +
               (stray && stray.getDefiningOp()
                    ? " ('" +
                          stray.getDefiningOp()->getName().getStringRef().str() +
                          "')"
                    : std::string())};
    return declineRegion();
  }
  std::string dep = sizeDependence(c.region);
  if (dep.empty() && c.delayed)
    dep = sizeDependence(c.amaxRegion);
  if (!dep.empty()) {
    why = {DeclineRule::RaiseUnsupportedShape, "dynamic sizes: " + dep};
    return declineRegion();
  }
  if (f->scheme.getScaleLayout() == ScaleLayout::swizzled) {
    why = {DeclineRule::RaiseUnsupportedShape, "dynamic sizes: swizzled scales (their "
                                "padding depends on the sizes)"};
    return declineRegion();
  }
  f->candidate = std::move(c);
  f->checkedLeading = sp.leadingSize;
  return f;
}

void RaiseQuantizePass::runOnOperation() {
  func::FuncOp func = getOperation();
  // Seeds: structured ops that produce FP8 values, and (MXFP4 written out)
  // 8-bit integer tensors that leave the quantizer region: the packed
  // codes, which the program returns or passes on.
  SmallVector<std::pair<Operation *, bool>> casts;
  // TOSA's MX cast is a quantizer too, raised once written out.
  func.walk([&](Operation *op) {
    if (op->getName().getStringRef() == "tosa.cast_to_block_scaled")
      decline(op->getLoc(), func.getSymName(),
              {DeclineRule::UnsupportedOp,
               "tosa.cast_to_block_scaled is raised once "
               "fusion-expand-tosa-mx has written it out (both pipelines "
               "run it first); this one was not"});
  });
  func.walk([&](linalg::LinalgOp op) {
    if (!op.hasPureTensorSemantics() || op->getNumResults() != 1)
      return;
    Type et = elementTypeOf(op->getResult(0));
    // Sub-byte float elements (TOSA's f6 / f4 casts written out): a block
    // quantizer where an amax feeds them, which no runtime format stores
    // this way (MXFP4's codes are packed two a byte; there is no FP6).
    if (isa_and_nonnull<Float4E2M1FNType, Float6E2M3FNType, Float6E3M2FNType>(
            et) &&
        !llvm::all_of(
            op.getDpsInputOperands(),
            [&](OpOperand *in) { return elementTypeOf(in->get()) == et; }) &&
        findReduction(op)) {
      decline(op->getLoc(), func.getSymName(),
              {DeclineRule::UnsupportedFormat,
               llvm::formatv("a quantizer to {0} elements, one a byte: the "
                             "runtime stores {1}",
                             et,
                             isa<Float4E2M1FNType>(et)
                                 ? "MXFP4 / NVFP4 codes packed two a byte "
                                   "(and scales by RCEIL, FLOOR or CEIL, "
                                   "not TOSA's floor + 1)"
                                 : "no FP6 format")
                   .str()});
      return;
    }
    // A cast to FP8 inside a body whose result is not FP8: codes that are
    // dequantized in the same computation (a quantize-dequantize, FP8
    // simulated), which no quantized tensor leaves to be raised.
    if (!isFloat8Data(et) && isa<linalg::GenericOp>(op)) {
      Type inner;
      op->walk([&](arith::TruncFOp t) {
        if (isFloat8Data(t.getType()))
          inner = t.getType();
      });
      if (inner) {
        decline(op->getLoc(), func.getSymName(),
                {DeclineRule::NoQuantizerInput,
                 llvm::formatv("a cast to {0} inside a computation that "
                               "returns {1}: the codes are dequantized in it "
                               "(a quantize-dequantize, FP8 simulated), so no "
                               "quantized tensor leaves it to be raised",
                               inner, et)
                     .str()});
        return;
      }
    }
    if (isFloat8Data(et)) {
      // Moving FP8 codes (a transpose, a copy) casts nothing: not a seed.
      if (op.getNumDpsInputs() > 0 &&
          llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *in) {
            return elementTypeOf(in->get()) == et;
          }))
        return;
      casts.push_back({op, false});
      return;
    }
    if (!et || !et.isInteger(8))
      return;
    Value out = followReshapes(op->getResult(0));
    if (llvm::any_of(out.getUsers(), [](Operation *u) {
          return !isRegionOp(u) || isa<tensor::InsertSliceOp>(u);
        }))
      casts.push_back({op, true});
  });
  // Packed codes first: an NVFP4 quantizer's e4m3 scale cast is part of the
  // region its codes delimit (raised with it, or declined with its remark).
  std::stable_partition(casts.begin(), casts.end(),
                        [](const auto &p) { return p.second; });
  DenseSet<Operation *> erased, declinedFp4;
  LazyCopy spec{kSpecializedLast}, wideSpec{kSpecializedLastWide};
  LazyCopy blocksSpec{kSpecializedLast, kSpecializedLast},
      blocksWideSpec{kSpecializedLastWide, kSpecializedLastWide};
  for (auto [castOp, packedFp4] : casts) {
    if (erased.contains(castOp) || declinedFp4.contains(castOp))
      continue;
    Decline why;
    Location loc = castOp->getLoc();
    SmallVector<Operation *> declinedRegion;
    std::optional<Found> found;
    auto rt = cast<RankedTensorType>(castOp->getResult(0).getType());
    if (rt.hasStaticShape()) {
      found = findRaisable(castOp, packedFp4, why, declinedRegion);
    } else {
      auto wide = [&] { return wideSpec.get(func); };
      if (Specialized *sp = spec.get(func)) {
        found = findRaisableDynamic(castOp, packedFp4, *sp, wide, why,
                                    declinedRegion);
        // The copy has empty values (packed FP4 codes stay non-empty where
        // their scales have no block): the quantizer may have had nothing
        // to check in it either. The larger copies decide.
        if (!found && sp->degenerate) {
          declinedRegion.clear();
          auto blocksWide = [&] { return blocksWideSpec.get(func); };
          if (Specialized *bs = blocksSpec.get(func))
            found = findRaisableDynamic(castOp, packedFp4, *bs, blocksWide,
                                        why, declinedRegion);
          else
            why = {DeclineRule::RaiseUnsupportedShape,
                   llvm::formatv(
                       "dynamic sizes: a leading dynamic size reaches the "
                       "quantizer's blocks, and the program's reshapes "
                       "contradict every dynamic size {0}; not checked",
                       kSpecializedLast)
                       .str()};
        }
      } else
        why = {DeclineRule::RaiseUnsupportedShape,
               "dynamic sizes: no copy of the function with fixed sizes (an "
               "unranked argument, or sizes the program's reshapes "
               "contradict)"};
    }
    if (!found) {
      declinedFp4.insert(declinedRegion.begin(), declinedRegion.end());
      if (why.rule != DeclineRule::None)
        decline(loc, func.getSymName(), why);
      continue;
    }
    Candidate &taken = found->candidate;
    for (Operation *op : taken.region)
      erased.insert(op);
    // The copy maps to values the rewrite erases: a later seed takes a new
    // copy of the function as it is then.
    spec.copy.reset();
    wideSpec.copy.reset();
    blocksSpec.copy.reset();
    blocksWideSpec.copy.reset();
    if (taken.perTensor)
      rewritePerTensor(taken, found->scheme);
    else
      rewrite(taken, found->scheme);
    ++numRaised;
    std::string dynamicNote;
    if (!rt.hasStaticShape()) {
      // checkedLast is set where the input's last dimension is dynamic.
      auto [last, lastWide] = found->checkedLast;
      dynamicNote = llvm::formatv(" (dynamic sizes: checked with each "
                                  "dynamic size fixed to {0}",
                                  found->checkedLeading);
      if (found->checkedLeading != kSpecializedSize)
        dynamicNote += llvm::formatv(
            " and to {0}, where a leading dynamic size reaches the blocks",
            kSpecializedLastWide);
      else if (last != 0 && last == lastWide)
        dynamicNote += llvm::formatv(", the last one to {0} in both copies: "
                                     "the program fixes it",
                                     last);
      else if (last != 0)
        dynamicNote +=
            llvm::formatv(", the last one to {0} and to {1}", last, lastWide);
      dynamicNote += ")";
    }
    std::lock_guard<std::mutex> lock(getRemarkMutex());
    remark::passed(loc, remarkOpts(func.getSymName())) << remark::add(
        "raised to fusion.quantize {0}{6}{5}{1}{2}{3}{4}",
        schemeName(found->scheme),
        taken.scalesTransposed
            ? "; its scales returned transposed (column-major "
              "for the GEMM) by the program's transpose, kept"
            : "",
        taken.droppedChecks
            ? llvm::formatv("; {0} check(s) (cf.assert) left on its "
                            "input proven to hold for every {1} and "
                            "dropped",
                            taken.droppedChecks,
                            finiteInputs ? "finite input" : "input")
                  .str()
            : std::string(),
        finiteInputs ? " (assuming finite inputs)" : "", dynamicNote,
        taken.note,
        taken.constScale
            ? llvm::formatv(" with the program's constant scale {0:e} (a "
                            "static scale)",
                            *taken.constScale)
                  .str()
            : std::string());
  }
  // FP8 block rows that are the permuted R x C tiles of a matrix, the codes
  // permuted back (torchao's blockwise weight quantizer): one quantizer with
  // block = R x C on the matrix (FoldTilePermutation.cpp).
  SmallVector<QuantizeOp> quantizers;
  func.walk([&](QuantizeOp q) { quantizers.push_back(q); });
  for (QuantizeOp q : quantizers) {
    Location loc = q.getLoc();
    TileFoldResult t = foldTilePermutation(q);
    if (!t.candidate)
      continue;
    if (!t.folded) {
      decline(loc, func.getSymName(), {DeclineRule::TilesNotFolded, t.why});
      continue;
    }
    std::lock_guard<std::mutex> lock(getRemarkMutex());
    remark::passed(loc, remarkOpts(func.getSymName()))
        << remark::add("folded the tile permutation: the rows quantized are "
                       "the {0}x{1} tiles of the matrix, quantized in place "
                       "(block = {0}x{1}; {2} reshapes and permutations "
                       "removed)",
                       t.blockRows, t.blockCols, t.removed);
  }
}

} // namespace
