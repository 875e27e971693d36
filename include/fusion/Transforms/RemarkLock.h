//===- RemarkLock.h - serialise fusion remarks ------------------*- C++ -*-===//
//
// MLIR 22's RemarkEngine reports without a lock: the emitting policy
// (`--remark-policy=final` keeps a DenseSet) and the YAML/bitstream streamer
// are not thread-safe, and the fusion passes run on functions in parallel.
// Every fusion remark is reported while holding this lock.
//
// The lock was once blamed for remarks that threaded runs lost under
// -verify-diagnostics; the cause was elsewhere (a context-wide diagnostic
// handler that swallowed other threads' remarks while a pass verified its
// fused op; fixed in VerifyQuietly.h). The remark tests run threaded.
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
