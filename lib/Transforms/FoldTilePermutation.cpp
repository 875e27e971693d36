//===- FoldTilePermutation.cpp - 2D FP8 tiles through their permutation -===//
//
// torchao's blockwise FP8 weight quantizer (and DeepSeek-V3-style reference
// code) writes the 128x128 tile quantizer as a permutation: the matrix
// [M, N] is reshaped to [M/R, R, N/C, C], permuted to [M/R, N/C, R, C],
// collapsed to [T, R*C] rows (one tile a row), quantized with one f32 scale
// a row, and the codes permuted back to [M, N]. fusion-raise-quantize
// raises the row quantizer (FP8 block 1 x R*C); this fold then sees that its
// rows are the R x C tiles of the matrix and that the codes return to the
// matrix's own layout, and replaces the whole chain by one quantizer with
// block = R x C on the matrix: no transposed copy in and none out.
//
// Exactness: the block amax is a max (independent of the order of the
// block's elements) and each code depends only on its element and its
// block's scale, so quantizing the tiles in place gives every code and
// scale the permuted program gives. What must be proven is only the data
// movement: each reshape and permutation of the chain is tracked exactly as
// a mixed-radix factorization of the matrix's two dimensions into "atoms"
// (an expand splits a dimension's atoms, splitting an atom where needed; a
// collapse concatenates; a permutation reorders), so the fold applies only
// where the quantizer's rows are exactly the tiles (its columns the lowest
// atoms of both dimensions), the codes end in the matrix's atoms in the
// matrix's order, and the scales end in the tiles' row-major order.
//
//===----------------------------------------------------------------------===//

#include "fusion/Transforms/FoldTilePermutation.h"

#include "fusion/Analysis/Permutation.h"

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// A tensor's dimensions as lists of atoms (outer to inner); atoms are the
/// factors of the matrix's dimensions.
using Dim = SmallVector<unsigned, 4>;
using View = SmallVector<Dim, 4>;

class Atoms {
public:
  unsigned add(int64_t size) {
    sizes.push_back(size);
    return sizes.size() - 1;
  }
  int64_t size(unsigned a) const { return sizes[a]; }
  int64_t product(const Dim &d) const {
    int64_t p = 1;
    for (unsigned a : d)
      p *= sizes[a];
    return p;
  }
  /// Splits atom `a` into (outer, inner) of sizes (f, size / f) in every
  /// tracked view.
  void split(unsigned a, int64_t f, SmallVectorImpl<View *> &views) {
    const unsigned lo = add(sizes[a] / f);
    sizes[a] = f; // `a` becomes the outer part
    for (View *v : views)
      for (Dim &d : *v)
        for (size_t i = 0; i < d.size(); ++i)
          if (d[i] == a) {
            d.insert(d.begin() + i + 1, lo);
            ++i;
          }
  }

private:
  SmallVector<int64_t> sizes;
};

/// The view after `op` (a reshape or a pure permutation of `in`), or
/// failure. `views` are refined in place where an atom is split.
FailureOr<View> apply(Operation *op, const View &inView, Atoms &atoms,
                      SmallVectorImpl<View *> &views) {
  View in = inView;
  views.push_back(&in);
  auto done = [&](FailureOr<View> r) {
    views.pop_back();
    return r;
  };
  if (auto c = dyn_cast<tensor::CollapseShapeOp>(op)) {
    View out;
    for (const ReassociationIndices &g : c.getReassociationIndices()) {
      Dim d;
      for (int64_t i : g)
        d.append(in[i].begin(), in[i].end());
      out.push_back(d);
    }
    return done(out);
  }
  if (auto e = dyn_cast<tensor::ExpandShapeOp>(op)) {
    ArrayRef<int64_t> shape = e.getResultType().getShape();
    View out(shape.size());
    auto groups = e.getReassociationIndices();
    for (auto [src, g] : llvm::enumerate(groups)) {
      // Atoms of in[src], consumed outer to inner into the group's sizes.
      size_t k = 0;
      for (int64_t i : g) {
        int64_t want = shape[i], have = 1;
        while (have < want) {
          if (k >= in[src].size())
            return done(failure());
          unsigned a = in[src][k];
          const int64_t s = atoms.size(a);
          if (have * s > want) { // split the atom: the outer part closes `i`
            if (want % have != 0 || s % (want / have) != 0)
              return done(failure());
            atoms.split(a, want / have, views);
            // `in` was refined too: in[src][k] is now the outer part.
            a = in[src][k];
          }
          out[i].push_back(a);
          have *= atoms.size(a);
          ++k;
        }
        if (have != want)
          return done(failure());
      }
      if (k != in[src].size())
        return done(failure());
    }
    // (A split only touches an atom not yet placed in `out`.)
    return done(out);
  }
  if (auto perm = permutationOf(op)) {
    View out;
    for (int64_t k : *perm)
      out.push_back(in[k]);
    return done(out);
  }
  return done(failure());
}

bool isPermutation(Operation *op) { return permutationOf(op).has_value(); }

bool isChainOp(Operation *op) {
  return op && op->getNumResults() == 1 &&
         (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op) ||
          isPermutation(op));
}

Value chainInput(Operation *op) { return op->getOperand(0); }

/// The ops after `v` while each value has one user that is a chain op: the
/// value they end at is returned in `end`.
SmallVector<Operation *> forwardChain(Value v, Value &end) {
  SmallVector<Operation *> chain;
  while (v.hasOneUse() && isChainOp(*v.getUsers().begin()) &&
         chainInput(*v.getUsers().begin()) == v) {
    Operation *u = *v.getUsers().begin();
    chain.push_back(u);
    v = u->getResult(0);
  }
  end = v;
  return chain;
}

} // namespace

namespace mlir::fusion {

TileFoldResult foldTilePermutation(QuantizeOp q) {
  TileFoldResult r;
  QuantSchemeAttr s = q.getScheme();
  if (!s.isBlockFP8() || s.getBlockRows() != 1 || s.hasColwise() ||
      !isa<RankedTensorType>(q.getInput().getType()) || q.getNumResults() != 2)
    return r;
  // The input chain, back to the matrix.
  SmallVector<Operation *> inChain;
  Value v = q.getInput();
  while (Operation *d = v.getDefiningOp()) {
    if (!isChainOp(d) || !v.hasOneUse())
      break;
    inChain.push_back(d);
    v = chainInput(d);
  }
  if (llvm::none_of(inChain, isPermutation))
    return r; // rows of the matrix as it is: nothing to fold
  r.candidate = true;
  auto fail = [&](std::string why) {
    r.why = std::move(why);
    return r;
  };
  std::reverse(inChain.begin(), inChain.end());
  Value x = v;
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  auto qt = cast<RankedTensorType>(q.getInput().getType());
  if (!xt || xt.getRank() != 2 || !xt.hasStaticShape() || !qt.hasStaticShape() ||
      qt.getRank() != 2)
    return fail("the permuted rows come from a tensor that is not a static "
                "2-D matrix");
  if (s.getBlockCols() != qt.getDimSize(1))
    return fail("more than one block a permuted row");
  // Every view is refined in place when an atom is split, so all
  // comparisons below are between views of the same atoms.
  Atoms atoms;
  View xView = {Dim{atoms.add(xt.getDimSize(0))}, Dim{atoms.add(xt.getDimSize(1))}};
  SmallVector<View *> views = {&xView};
  auto follow = [&](ArrayRef<Operation *> chain, View &view) {
    views.push_back(&view);
    for (Operation *op : chain) {
      FailureOr<View> next = apply(op, view, atoms, views);
      if (failed(next))
        return false;
      view = *next;
    }
    return true;
  };
  View qIn = xView;
  if (!follow(inChain, qIn))
    return fail("a reshape of the permuted rows splits the matrix's "
                "dimensions in a way that is not tracked");
  // The codes must come back to the matrix's own layout.
  Value data = q.getResult(0), dataEnd;
  SmallVector<Operation *> dataChain = forwardChain(data, dataEnd);
  View d = qIn;
  if (!follow(dataChain, d))
    return fail("a reshape of the codes is not tracked");
  // The scales ([T, 1] or [T], one a row) end in the tiles' row-major
  // order, as [T, 1], [T] or the 2-D tile grid [M/R, N/C].
  Value scales = q.getResult(1), scalesEnd;
  SmallVector<Operation *> scaleChain = forwardChain(scales, scalesEnd);
  View sv;
  for (int64_t i = 0, e = cast<RankedTensorType>(scales.getType()).getRank(); i < e;
       ++i)
    sv.push_back(i == 0 ? qIn[0] : Dim{});
  if (!follow(scaleChain, sv))
    return fail("a reshape of the scales is not tracked");

  // The rows' columns: the lowest atoms of both matrix dimensions.
  auto lowFrom = [&](const Dim &dim) {
    size_t from = dim.size();
    while (from > 0 && llvm::is_contained(qIn[1], dim[from - 1]))
      --from;
    return from;
  };
  const size_t mFrom = lowFrom(xView[0]), nFrom = lowFrom(xView[1]);
  Dim mLow(xView[0].begin() + mFrom, xView[0].end());
  Dim nLow(xView[1].begin() + nFrom, xView[1].end());
  if (mLow.size() + nLow.size() != qIn[1].size())
    return fail("the permuted rows are not tiles of the matrix (a row holds "
                "elements that are not the lowest factors of its dimensions)");
  const int64_t R = atoms.product(mLow), C = atoms.product(nLow);
  if (C < 32)
    return fail(llvm::formatv("the tiles are {0}x{1}: narrower than 32 "
                              "columns, which the tile kernels read a column "
                              "at a time; the permuted rows are kept",
                              R, C)
                    .str());
  if (d != xView ||
      cast<RankedTensorType>(dataEnd.getType()).getShape() != xt.getShape())
    return fail("the codes are not returned to the matrix's layout (they "
                "stay in the tiles' order)");
  Dim rowMajor(xView[0].begin(), xView[0].begin() + mFrom);
  rowMajor.append(xView[1].begin(), xView[1].begin() + nFrom);
  Dim flat;
  for (const Dim &dim : sv)
    flat.append(dim.begin(), dim.end());
  if (flat != rowMajor)
    return fail("the scales are not in the tiles' row-major order");

  // Rewrite: one quantizer with block = R x C on the matrix.
  OpBuilder b(q);
  Location loc = q.getLoc();
  MLIRContext *ctx = q.getContext();
  const int64_t M = xt.getDimSize(0), N = xt.getDimSize(1);
  auto dataType = RankedTensorType::get({M, N}, getElementTypeOrSelf(data.getType()));
  auto gridType = RankedTensorType::get({M / R, N / C}, Float32Type::get(ctx));
  QuantSchemeAttr tiled = QuantSchemeAttr::get(
      ctx, s.getFormat(), s.getDirection(), R, C, s.getRounding(), s.getNanPolicy(),
      s.getColwiseLayout(), s.getScaleLayout(), s.getElemRounding(),
      s.getTensorScaling(), s.getZeroScale(), s.getEpsilon(), s.getPow2Scale(),
      s.getRecipe());
  Value e0 = tensor::EmptyOp::create(b, loc, dataType.getShape(), dataType.getElementType());
  Value e1 = tensor::EmptyOp::create(b, loc, gridType.getShape(), gridType.getElementType());
  auto nq = QuantizeOp::create(b, loc, TypeRange{dataType, gridType}, x, Value(),
                               Value(), ValueRange{e0, e1}, tiled);
  Value newScales = nq.getResult(1);
  auto endType = cast<RankedTensorType>(scalesEnd.getType());
  if (endType != gridType) {
    // Back to the shape the program reads: flatten, then expand.
    b.setInsertionPointAfter(nq);
    Value flatScales = tensor::CollapseShapeOp::create(
        b, loc, newScales, SmallVector<ReassociationIndices>{{0, 1}});
    if (endType.getRank() == 1) {
      newScales = flatScales;
    } else {
      ReassociationIndices all;
      for (int64_t i = 0; i < endType.getRank(); ++i)
        all.push_back(i);
      newScales = tensor::ExpandShapeOp::create(b, loc, endType, flatScales,
                                                SmallVector<ReassociationIndices>{all});
    }
  }
  dataEnd.replaceAllUsesWith(nq.getResult(0));
  scalesEnd.replaceAllUsesWith(newScales);
  // The chains and the old quantizer are dead now: erase them, users first.
  for (Operation *op : llvm::reverse(dataChain))
    op->erase();
  for (Operation *op : llvm::reverse(scaleChain))
    op->erase();
  q->erase();
  for (Operation *op : llvm::reverse(inChain))
    if (op->use_empty())
      op->erase();
  r.folded = true;
  r.blockRows = R;
  r.blockCols = C;
  r.removed = inChain.size() + dataChain.size();
  return r;
}

} // namespace mlir::fusion
