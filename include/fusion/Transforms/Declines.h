//===- Declines.h - the admission rules of the fusion passes ---*- C++ -*-===//
//
// `DeclineRule`: one enumerator per row of Declines.def (plus `None`), and
// its stable tag, the `Reason` of the missed remark.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_TRANSFORMS_DECLINES_H
#define FUSION_TRANSFORMS_DECLINES_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::fusion {

enum class DeclineRule : uint8_t {
  None, ///< not declined
#define FUSION_DECLINE(Enum, pass, tag) Enum,
#include "fusion/Transforms/Declines.def"
};

/// A rule's pass and tag (one row of Declines.def).
struct DeclineInfo {
  const char *pass, *tag;
};

inline const DeclineInfo &declineInfo(DeclineRule r) {
  static const DeclineInfo table[] = {
      {"", ""}, // None
#define FUSION_DECLINE(Enum, pass, tag) {pass, tag},
#include "fusion/Transforms/Declines.def"
  };
  return table[static_cast<unsigned>(r)];
}

/// The rule's tag ("unsupported epilogue"); "" for None.
inline llvm::StringRef declineTag(DeclineRule r) { return declineInfo(r).tag; }

/// The pass whose rule it is ("fusion-fuse-paired-projections").
inline llvm::StringRef declinePass(DeclineRule r) { return declineInfo(r).pass; }

} // namespace mlir::fusion

#endif // FUSION_TRANSFORMS_DECLINES_H
