//===- VerifyQuietly.cpp - verify an op without reporting -----------------===//
//
// See fusion/Transforms/VerifyQuietly.h.
//
//===----------------------------------------------------------------------===//
#include "fusion/Transforms/VerifyQuietly.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/Threading.h"

using namespace mlir;

LogicalResult mlir::fusion::verifyQuietly(Operation *op) {
  // The handler is consulted first (the engine walks handlers newest first)
  // for every diagnostic of every thread while it is registered; it claims
  // only those of this thread. A diagnostic of another thread falls through
  // to the pass manager's ParallelDiagnosticHandler, which orders it.
  uint64_t self = llvm::get_threadid();
  ScopedDiagnosticHandler quiet(op->getContext(), [self](Diagnostic &) {
    return success(llvm::get_threadid() == self);
  });
  return mlir::verify(op);
}
