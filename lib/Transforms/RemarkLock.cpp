//===- RemarkLock.cpp - serialise fusion remarks --------------------------===//
//
// The process-wide lock of RemarkLock.h.
//
//===----------------------------------------------------------------------===//
#include "fusion/Transforms/RemarkLock.h"

std::mutex &mlir::fusion::getRemarkMutex() {
  static std::mutex mutex;
  return mutex;
}
