//===- RemarkLock.h - serialise fusion remarks ------------------*- C++ -*-===//
//
// MLIR 22's RemarkEngine reports without a lock, and the fusion passes run
// on functions in parallel, so two remarks reported at once race. Every
// fusion remark is reported while holding this lock. (With it, threaded runs
// of the remark tests still lost one remark in 1 of 50 runs, against 7 of 30
// before; the tests check remarks with --mlir-disable-threading.)
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_TRANSFORMS_REMARKLOCK_H
#define FUSION_TRANSFORMS_REMARKLOCK_H

#include <mutex>

namespace mlir::fusion {

/// The process-wide lock held while a fusion pass reports a remark.
std::mutex &getRemarkMutex();

} // namespace mlir::fusion

#endif // FUSION_TRANSFORMS_REMARKLOCK_H
