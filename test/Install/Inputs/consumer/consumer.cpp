// Parses and verifies a fusion op with the installed dialect library.
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

int main() {
  mlir::MLIRContext ctx;
  ctx.loadDialect<mlir::fusion::FusionDialect, mlir::func::FuncDialect>();
  const char *ir = R"mlir(
    func.func @f(%x: tensor<4x64xbf16>, %e0: tensor<4x64xf8E4M3FN>,
                 %e1: tensor<4x2xf8E8M0FNU>)
        -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) {
      %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise> outs(%e0, %e1)
          : (tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
            -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
      return %d, %s : tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>
    })mlir";
  auto module = mlir::parseSourceString<mlir::ModuleOp>(ir, &ctx);
  if (!module)
    return 1;
  int count = 0;
  module->walk([&](mlir::fusion::QuantizeOp op) {
    ++count;
    llvm::outs() << "quantize results: " << op->getNumResults()
                 << " scale type: " << op->getResult(1).getType() << "\n";
  });
  return count == 1 ? 0 : 1;
}
