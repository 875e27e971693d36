//===- rng.h - counter-based random bits for stochastic rounding --*- C++ -*-===//
//
// Philox4x32-10 (Salmon et al., SC'11), the generator curand and TE use. The
// random bits of element i of a stochastically rounded copy are word (i % 4)
// of philox(key = seed, counter = {i/4 lo, i/4 hi, offset lo, offset hi ^
// stream}); `stream` separates the rowwise copy (0) from the colwise copy (1).
// CPU and CUDA therefore draw the same bits for the same element.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_RNG_H
#define FUSION_RT_COMMON_RNG_H

#include "common/hd.h"

namespace fusion_rt {

struct Philox4 {
  uint32_t v[4];
};

FUSION_RT_HDI void philox_mulhilo(uint32_t a, uint32_t b, uint32_t &hi,
                                  uint32_t &lo) {
  uint64_t p = uint64_t(a) * uint64_t(b);
  hi = uint32_t(p >> 32);
  lo = uint32_t(p);
}

/// Philox4x32 with 10 rounds.
FUSION_RT_HDI Philox4 philox4x32_10(Philox4 ctr, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    philox_mulhilo(0xD2511F53u, ctr.v[0], hi0, lo0);
    philox_mulhilo(0xCD9E8D57u, ctr.v[2], hi1, lo1);
    Philox4 next;
    next.v[0] = hi1 ^ ctr.v[1] ^ k0;
    next.v[1] = lo1;
    next.v[2] = hi0 ^ ctr.v[3] ^ k1;
    next.v[3] = lo0;
    ctr = next;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return ctr;
}

/// The 32 random bits of element `index` of copy `stream` (0 rowwise,
/// 1 colwise).
FUSION_RT_HDI uint32_t stochastic_bits(uint64_t seed, uint64_t offset,
                                       uint32_t stream, uint64_t index) {
  Philox4 c;
  uint64_t group = index >> 2;
  c.v[0] = uint32_t(group);
  c.v[1] = uint32_t(group >> 32);
  c.v[2] = uint32_t(offset);
  c.v[3] = uint32_t(offset >> 32) ^ (stream << 31);
  Philox4 r = philox4x32_10(c, uint32_t(seed), uint32_t(seed >> 32));
  // Selects, not r.v[index & 3]: a run-time array index puts the array in
  // local memory on the GPU (check_ptx.sh forbids a stack frame).
  const uint32_t k = uint32_t(index & 3);
  return k == 0 ? r.v[0] : k == 1 ? r.v[1] : k == 2 ? r.v[2] : r.v[3];
}

} // namespace fusion_rt

#endif // FUSION_RT_COMMON_RNG_H
