// Drives the two fusions through the installed C++ API (Transforms.h):
// plan, then rewrite through the caller's IRRewriter, whose listener hears
// every op the rewrite inserts and erases; a declined candidate's rule.
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Transforms/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
struct Counter : public RewriterBase::Listener {
  int inserted = 0, erased = 0;
  void notifyOperationInserted(Operation *, OpBuilder::InsertPoint) override {
    ++inserted;
  }
  void notifyOperationErased(Operation *) override { ++erased; }
};

const char *kIR = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
#x_map = affine_map<(m, n, k) -> (m, k)>
#w_map = affine_map<(m, n, k) -> (n, k)>
#o_map = affine_map<(m, n, k) -> (m, n)>
func.func @silu(%x: tensor<4x64xbf16>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) {
  %init = tensor.empty() : tensor<4x64xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x64xbf16>) outs(%init : tensor<4x64xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %f = arith.extf %in : bf16 to f32
    %n = arith.negf %f : f32
    %e = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %d = arith.addf %e, %one : f32
    %s = arith.divf %f, %d : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x64xbf16>
  %d0 = tensor.empty() : tensor<4x64xf8E4M3FN>
  %d1 = tensor.empty() : tensor<4x2xf8E8M0FNU>
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%d0, %d1)
      : (tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
        -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return %q#0, %q#1 : tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>
}
func.func @also_returned(%x: tensor<4x64xbf16>) -> (tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) {
  %init = tensor.empty() : tensor<4x64xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x64xbf16>) outs(%init : tensor<4x64xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %zero = arith.constant 0.0 : bf16
    %r = arith.maximumf %in, %zero : bf16
    linalg.yield %r : bf16
  } -> tensor<4x64xbf16>
  %d0 = tensor.empty() : tensor<4x64xf8E4M3FN>
  %d1 = tensor.empty() : tensor<4x2xf8E8M0FNU>
  %q:2 = fusion.quantize %y as quant<mxfp8_e4m3, rowwise> outs(%d0, %d1)
      : (tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
        -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return %y, %q#0, %q#1 : tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>
}
func.func @pair(%x: tensor<4x64xf32>, %w0: tensor<8x64xf32>, %w1: tensor<16x64xf32>)
    -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %a0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x16xf32>
  %a1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%a0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w1 : tensor<4x64xf32>, tensor<16x64xf32>) outs(%a1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y0, %y1 : tensor<4x8xf32>, tensor<4x16xf32>
}
func.func @different_inputs(%x: tensor<4x64xf32>, %z: tensor<4x64xf32>,
                            %w0: tensor<8x64xf32>, %w1: tensor<8x64xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %a0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y0 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%x, %w0 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%a0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.matmul indexing_maps = [#x_map, #w_map, #o_map]
      ins(%z, %w1 : tensor<4x64xf32>, tensor<8x64xf32>) outs(%a0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y0, %y1 : tensor<4x8xf32>, tensor<4x8xf32>
}
)mlir";

func::FuncOp lookup(ModuleOp m, StringRef name) {
  return m.lookupSymbol<func::FuncOp>(name);
}
} // namespace

int main() {
  DialectRegistry registry;
  registry.insert<fusion::FusionDialect, func::FuncDialect, arith::ArithDialect,
                  math::MathDialect, linalg::LinalgDialect,
                  tensor::TensorDialect>();
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kIR, &ctx);
  if (!module)
    return 1;
  DominanceInfo dom(*module);
  Counter counter;
  IRRewriter rewriter(&ctx, &counter);
  fusion::ActQuantizeOptions options;

  // act -> quantize: planned, then rewritten.
  fusion::QuantizeOp q;
  lookup(*module, "silu").walk([&](fusion::QuantizeOp op) { q = op; });
  fusion::MatchFailure why;
  FailureOr<fusion::ActQuantizePlan> plan =
      fusion::planActQuantize(q, dom, options, &why);
  if (failed(plan))
    return 2;
  llvm::outs() << "act plan: "
               << fusion::stringifyActivationKind(plan->act.kind) << " via "
               << plan->intermediate << "\n";
  FailureOr<fusion::ActQuantizeRewrite> done =
      fusion::rewriteActQuantize(rewriter, *plan, &why);
  if (failed(done))
    return 3;
  llvm::outs() << "act rewrite: " << done->fused->getName() << " inserted "
               << counter.inserted << " erased " << counter.erased << "\n";

  // A declined candidate (`planned` false): its rule's stable tag and the
  // detail.
  auto declined = [&](StringRef what, bool planned) {
    if (!planned)
      llvm::outs() << what << " declined: " << fusion::declineTag(why.rule)
                   << ": " << why.detail << "\n";
    return !planned;
  };
  q = {};
  lookup(*module, "also_returned").walk([&](fusion::QuantizeOp op) { q = op; });
  if (!declined("act",
                succeeded(fusion::planActQuantize(q, dom, options, &why))))
    return 4;
  // No op at all: a decline, not a crash.
  if (!declined("act", succeeded(fusion::planActQuantize(fusion::QuantizeOp(),
                                                         dom, options, &why))))
    return 10;

  // Paired projections.
  auto matmuls = [&](StringRef name) {
    SmallVector<linalg::LinalgOp> ops;
    lookup(*module, name).walk([&](linalg::MatmulOp op) { ops.push_back(op); });
    return ops;
  };
  SmallVector<linalg::LinalgOp> pair = matmuls("pair");
  FailureOr<fusion::PairedProjectionPlan> paired =
      fusion::planPairedProjection(pair[0], pair[1], dom, &why);
  if (failed(paired))
    return 5;
  llvm::outs() << "pair plan: " << fusion::describePairedProjection(*paired)
               << "\n";
  counter.inserted = counter.erased = 0;
  FailureOr<fusion::PairedProjectionOp> fusedPair =
      fusion::rewritePairedProjection(rewriter, *paired);
  if (failed(fusedPair))
    return 6;
  llvm::outs() << "pair rewrite: " << (*fusedPair)->getName() << " inserted "
               << counter.inserted << " erased " << counter.erased << "\n";

  SmallVector<linalg::LinalgOp> other = matmuls("different_inputs");
  linalg::LinalgOp fill;
  lookup(*module, "different_inputs").walk([&](linalg::FillOp op) {
    fill = op;
  });
  auto pairDeclined = [&](linalg::LinalgOp a, linalg::LinalgOp b) {
    return declined("pair",
                    succeeded(fusion::planPairedProjection(a, b, dom, &why)));
  };
  if (!pairDeclined(other[0], other[1]))
    return 7;
  if (!pairDeclined(other[0], fill))
    return 8;
  if (!pairDeclined(linalg::LinalgOp(), fill))
    return 11;

  if (failed(verify(*module)))
    return 9;
  module->print(llvm::outs());
  return 0;
}
