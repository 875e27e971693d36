//===- layout.h - block counts and the GEMM scale swizzle ---------*- C++ -*-===//
//
// Also: the row offset of a row-grouped view (the [G, w, K] weight views of
// a paired projection).
//
// The 128x4 scale layout that block-scaled GEMMs read (cuBLAS / TE swizzle,
// research/kernels.md §1.9): the logical scale matrix S[r][c] (r = non-K
// index, c = K-block index) is padded with zeros to [rup(R,128), rup(C,4)]
// and stored as 512-byte tiles.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_LAYOUT_H
#define FUSION_RT_COMMON_LAYOUT_H

#include "common/hd.h"

namespace fusion_rt {

FUSION_RT_HDI int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
FUSION_RT_HDI int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

/// Byte offset of S[r][c] in the swizzled buffer; `padded_cols` = rup(C, 4).
FUSION_RT_HDI int64_t swizzled_scale_offset(int64_t r, int64_t c,
                                            int64_t padded_cols) {
  return ((r / 128) * (padded_cols / 4) + c / 4) * 512 + (r % 32) * 16 +
         ((r % 128) / 32) * 4 + (c % 4);
}

/// Element offset of row i of a view whose rows lie `rs` apart, or, with
/// grp > 0, in groups of grp rows `gs` apart (row g * grp + r at
/// g * gs + r * rs): the host's Mat::row_at and the paired kernels'
/// w_row_ptr.
FUSION_RT_HDI int64_t grouped_row_offset(int64_t i, int64_t rs, int64_t grp,
                                         int64_t gs) {
  return grp > 0 ? (i / grp) * gs + (i % grp) * rs : i * rs;
}

} // namespace fusion_rt

#endif // FUSION_RT_COMMON_LAYOUT_H
