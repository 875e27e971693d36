//===- VerifyQuietly.h - verify an op without reporting ---------*- C++ -*-===//
//
// The fusion passes verify the op they build before committing to a rewrite
// and treat a failure as a decline. That verification must not print, and it
// must not swallow anything else either: diagnostic handlers belong to the
// MLIRContext, not to a thread, and the pass manager runs function passes on
// several threads at once. A plain ScopedDiagnosticHandler that returns
// success() therefore also ate the remarks other threads reported while it
// was registered (docs/passes.md, "Remarks and threads").
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_TRANSFORMS_VERIFYQUIETLY_H
#define FUSION_TRANSFORMS_VERIFYQUIETLY_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace mlir::fusion {

/// Runs the verifier on `op`. Diagnostics it emits on the calling thread are
/// dropped; diagnostics of other threads pass through to the handlers
/// registered before.
LogicalResult verifyQuietly(Operation *op);

} // namespace mlir::fusion

#endif // FUSION_TRANSFORMS_VERIFYQUIETLY_H
