//===- ptx.cuh - PTX / conversion helpers of the CUDA kernels -----*- CUDA -*-===//
//
// The instructions the quantizer kernels issue by hand: 16-byte streaming
// loads, shared-memory and global stores, L2 access policies and hinted
// loads, the fp32 -> e4m3x2 / e5m2x2 conversions, the fp32 -> bf16 / f16
// roundings (packed too) and, on Blackwell (sm_100a / sm_120a), the fp32 ->
// ue8m0 conversion, the paired projection's cluster, griddepcontrol,
// cp.async and mma instructions, and the stream kernels' packed maxima.
//
// Every hardware conversion here is used only where it is bit-identical to
// the shared numerics (runtime/common/convert.h, scale.h): that identity was
// checked on the H200 over all bf16 patterns and 400 000 random fp32 values
// (research/kernels.md §1 errata) and is re-checked by the GPU tests
// (runtime/test/gpu/), which compare every kernel with the CPU backend.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_CUDA_PTX_CUH
#define FUSION_RT_CUDA_PTX_CUH

#include "common/convert.h"
#include "common/scale.h"
#include "fusion_rt.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>

namespace fusion_rt {
namespace cuda {

/// True when this device pass has the Blackwell ue8m0 conversion.
#if defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(__CUDA_ARCH_FEAT_SM101_ALL) || \
    defined(__CUDA_ARCH_FEAT_SM103_ALL) || defined(__CUDA_ARCH_FEAT_SM120_ALL) || \
    defined(__CUDA_ARCH_FEAT_SM121_ALL)
#define FUSION_RT_HAVE_UE8M0_CVT 1
#else
#define FUSION_RT_HAVE_UE8M0_CVT 0
#endif
/// Blackwell's fp32 -> e2m1x2 conversion comes with the same architectures.
#define FUSION_RT_HAVE_E2M1_CVT FUSION_RT_HAVE_UE8M0_CVT

//===--- loads and stores ---------------------------------------------------===//

/// 16-byte read-only streaming load (no L1 allocation: each byte is read once).
__device__ __forceinline__ uint4 ldg_stream16(const void *p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
/// 8-byte read-only streaming load.
__device__ __forceinline__ uint2 ldg_stream8(const void *p) {
  uint2 v;
  asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0,%1}, [%2];"
               : "=r"(v.x), "=r"(v.y)
               : "l"(p));
  return v;
}
/// 4-byte read-only streaming load.
__device__ __forceinline__ uint32_t ldg_stream4(const void *p) {
  uint32_t v;
  asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

//===--- shared memory, stores, L2 policies (the MXFP8 kernels) ---------------===//

/// Shared-window address of a shared array (32-bit, for ld/st.shared).
__device__ __forceinline__ uint32_t smem_addr(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void sts64(uint32_t a, uint32_t x, uint32_t y) {
  asm volatile("st.shared.v2.u32 [%0], {%1, %2};" ::"r"(a), "r"(x), "r"(y) : "memory");
}
__device__ __forceinline__ void sts8(uint32_t a, uint32_t x) {
  asm volatile("st.shared.u8 [%0], %1;" ::"r"(a), "r"(x) : "memory");
}
__device__ __forceinline__ uint4 lds128(uint32_t a) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(a)
               : "memory");
  return v;
}
__device__ __forceinline__ uint32_t lds32(uint32_t a) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
  return v;
}
__device__ __forceinline__ void stg128(void *p, const uint4 &v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x),
               "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ void stg32(void *p, uint32_t v) {
  asm volatile("st.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
/// 16-byte streaming (evict-first) store.
__device__ __forceinline__ void stg128_cs(void *p, const uint4 &v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x),
               "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
/// 16-byte read-only load with the L2 access policy `pol` (evict-first).
__device__ __forceinline__ uint4 ldg_pol16(const void *p, uint64_t pol) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 "
               "{%0,%1,%2,%3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(pol));
  return v;
}
/// An L2 evict-first access policy (createpolicy), for the hinted loads.
__device__ __forceinline__ uint64_t l2_evict_first() {
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
__device__ __forceinline__ void stg64(void *p, uint32_t x, uint32_t y) {
  asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(x), "r"(y) : "memory");
}

/// 16-byte streaming load with the L2 policy `pol` and a 256-byte L2
/// prefetch of the surrounding segment.
__device__ __forceinline__ uint4 ldg_hint16(const void *p, uint64_t pol) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32 "
               "{%0,%1,%2,%3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(pol));
  return v;
}
/// Streaming (evict-first) global stores of 8 and 4 bytes.
__device__ __forceinline__ void stg_cs8(void *p, uint2 v) {
  asm volatile("st.global.cs.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(v.x), "r"(v.y)
               : "memory");
}
__device__ __forceinline__ void stg_cs4(void *p, uint32_t v) {
  asm volatile("st.global.cs.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/// Two fp32 values rounded to nearest-even and packed as bf16x2 / f16x2
/// (`hi` in the upper half): cvt.rn.{bf16x2,f16x2}.f32.
__device__ __forceinline__ uint32_t cvt_rn_bf16x2(float hi, float lo) {
  uint32_t w;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
  return w;
}
__device__ __forceinline__ uint32_t cvt_rn_f16x2(float hi, float lo) {
  uint32_t w;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
  return w;
}

//===--- element conversions --------------------------------------------------===//

/// 1.f / y correctly rounded (= rcp.rn.f32, = div.rn.f32(1, y)) for
/// 1 <= y < 2^126: the fast path of CUDA's rcp.rn (rcp.approx and one
/// Newton step, the same instructions) without its exponent test and its
/// divergent slow-path call. Equal to 1.f / y on every fp32 y of that range
/// (runtime/test/device_numerics_check.cu checks all of them on the GPU).
__device__ __forceinline__ float rcp_rn_1_2p126(float y) {
  float r;
  asm("{.reg .f32 r0, t;\n\t"
      "rcp.approx.ftz.f32 r0, %1;\n\t"
      "fma.rn.f32 t, %1, r0, 0fBF800000;\n\t"
      "neg.f32 t, t;\n\t"
      "fma.rn.f32 %0, r0, t, r0;}"
      : "=f"(r)
      : "f"(y));
  return r;
}

/// Two fp32 -> two e4m3 codes (lo in the low byte), RNE, satfinite; NaN ->
/// 0x7F whatever its sign (= common/convert.h f32_to_e4m3).
__device__ __forceinline__ uint32_t cvt_e4m3x2(float lo, float hi) {
  uint16_t r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}
/// Two fp32 -> two e5m2 codes (= common/convert.h f32_to_e5m2).
__device__ __forceinline__ uint32_t cvt_e5m2x2(float lo, float hi) {
  uint16_t r;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}

/// fp32 rounded to the intermediate type and widened back: the hardware
/// cvt.rn.bf16.f32 / cvt.rn.f16.f32 equal common/convert.h's software
/// rounding (NaN -> 0x7FFF for both), so this equals round_to_intermediate.
__device__ __forceinline__ float round_inter(float x, int32_t inter) {
  if (inter == kInterBF16)
    return __bfloat162float(__float2bfloat16_rn(x));
  if (inter == kInterF16) {
    // cvt.rn.f16.f32 gives the canonical NaN 0x7FFF, like f32_to_f16.
    return __half2float(__float2half_rn(x));
  }
  return x;
}

//===--- scales ---------------------------------------------------------------===//

/// The MX scale byte of a block from its amax bits (see mx_scale_byte in
/// common/scale.h). `amax_bits` is the largest |x| bit pattern of the block's
/// valid elements; NaN patterns (> 0x7F800000) only reach here under the
/// PROPAGATE policy, where the byte is 255. On Blackwell the RCEIL rounding
/// uses cvt.rp.satfinite.ue8m0x2.f32, identical to e8m0_roundup(v, true) on
/// its domain here (v finite >= 0 or +Inf): round up, 0 -> 0, (0, 2^-127] -> 0,
/// (2^-127, 2^-126) -> 1, > 2^127 and Inf -> 254.
__device__ __forceinline__ uint8_t block_scale_byte(uint32_t amax_bits,
                                                    int32_t format,
                                                    int32_t rounding,
                                                    bool propagate) {
  const bool has_nan = amax_bits > 0x7f800000u;
  const float amax = bits_f32(amax_bits);
#if FUSION_RT_HAVE_UE8M0_CVT
  if (rounding == FUSION_RT_SCALE_RCEIL &&
      !(propagate && amax_bits >= 0x7f800000u)) {
    uint16_t r;
    asm("cvt.rp.satfinite.ue8m0x2.f32 %0, %1, %2;"
        : "=h"(r)
        : "f"(0.0f), "f"(amax * mx_max_rcp(format)));
    return uint8_t(r & 0xffu);
  }
#endif
  return mx_scale_byte(amax, has_nan, format, rounding, propagate);
}

#if FUSION_RT_HAVE_E2M1_CVT
/// The e2m1 codes of eight values that are not NaN, element j in nibble j,
/// by Blackwell's cvt.rn.satfinite.e2m1x2.f32 (one instruction a pair; the
/// first operand goes to the upper nibble). On non-NaN inputs it equals
/// f32_to_e2m1_rne (convert.h) by the instruction's definition: round to
/// nearest even on the e2m1 grid, |x| > 6 and +-Inf saturated to +-6, the
/// sign kept (-0 and negatives that round to 0 give 0x8) — the conversion
/// TransformerEngine's NVFP4 kernels issue on sm_100, which convert.h
/// reproduces. NaN (0x7 in convert.h) is left to the callers' other path.
__device__ __forceinline__ uint32_t e2m1x8_cvt(const float (&p)[8]) {
  uint32_t r;
  asm("{\n\t.reg .b8 b0, b1, b2, b3;\n\t"
      "cvt.rn.satfinite.e2m1x2.f32 b0, %2, %1;\n\t"
      "cvt.rn.satfinite.e2m1x2.f32 b1, %4, %3;\n\t"
      "cvt.rn.satfinite.e2m1x2.f32 b2, %6, %5;\n\t"
      "cvt.rn.satfinite.e2m1x2.f32 b3, %8, %7;\n\t"
      "mov.b32 %0, {b0, b1, b2, b3};\n\t}"
      : "=r"(r)
      : "f"(p[0]), "f"(p[1]), "f"(p[2]), "f"(p[3]), "f"(p[4]), "f"(p[5]),
        "f"(p[6]), "f"(p[7]));
  return r;
}
/// f32_to_e2m1_rne(p) of one value by the same instruction (NaN: 0x7, as
/// convert.h).
__device__ __forceinline__ uint8_t e2m1_cvt(float p) {
  uint16_t r;
  asm("{\n\t.reg .b8 b0;\n\t"
      "cvt.rn.satfinite.e2m1x2.f32 b0, %1, %1;\n\t"
      "cvt.u16.u8 %0, b0;\n\t}"
      : "=h"(r)
      : "f"(p));
  return p != p ? uint8_t(0x7) : uint8_t(r & 0xfu);
}
#endif

//===--- packed 16-bit unpacking ---------------------------------------------===//

// The unpacking is `asm volatile` on purpose: the kernels read each stored
// row several times (amax, colwise codes, rowwise codes), and without the
// barrier the compiler keeps every unpacked fp32 value live between those
// passes (twice the registers, spills) instead of re-deriving it in one op.

/// The low / high element of a packed pair of bf16 as fp32 (exact).
__device__ __forceinline__ float bf16_lo(uint32_t w) {
  float f;
  asm volatile("shl.b32 %0, %1, 16;" : "=f"(f) : "r"(w));
  return f;
}
__device__ __forceinline__ float bf16_hi(uint32_t w) {
  float f;
  asm volatile("and.b32 %0, %1, 0xffff0000;" : "=f"(f) : "r"(w));
  return f;
}
/// The low / high element of a packed pair of f16 as fp32 (exact).
__device__ __forceinline__ float f16_lo(uint32_t w) {
  float f;
  asm volatile("{.reg .b16 l, h; mov.b32 {l, h}, %1; cvt.f32.f16 %0, l;}"
               : "=f"(f)
               : "r"(w));
  return f;
}
__device__ __forceinline__ float f16_hi(uint32_t w) {
  float f;
  asm volatile("{.reg .b16 l, h; mov.b32 {l, h}, %1; cvt.f32.f16 %0, h;}"
               : "=f"(f)
               : "r"(w));
  return f;
}
/// An fp32 value the compiler must re-derive at each use (see above).
__device__ __forceinline__ float reread(float x) {
  float f;
  asm volatile("mov.b32 %0, %1;" : "=f"(f) : "f"(x));
  return f;
}

//===--- packed 16-bit maxima (the stream kernels' amax) --------------------===//

/// max of two pairs of 16-bit patterns: unsigned (|x| patterns, where NaN >
/// Inf > every number), and the IEEE maxNum of bf16 and of f16.
__device__ __forceinline__ uint32_t max_u16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("max.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ uint32_t max_bf16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("max.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ uint32_t max_f16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("max.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

//===--- paired projection: clusters, PDL, cp.async, tensor cores -----------===//
// sm_90 instructions (barrier.cluster, mapa, griddepcontrol,
// cp.async.bulk.prefetch), used by the paired projection's kernels
// (paired_gemv.cu, paired_mma.cu, paired_projection.cu).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900

/// 16-byte read-only load that does not allocate in L1 (the paired
/// projection's weights: read once). Unlike ldg_stream16 not volatile: the
/// compiler schedules it as an ordinary load.
__device__ __forceinline__ uint4 ldg_nc16(const void *ptr) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(ptr));
  return v;
}
/// Stores fp32 `v` at shared address `addr` of cluster rank `rank`
/// (distributed shared memory: mapa + st.shared::cluster, never a generic
/// address).
__device__ __forceinline__ void st_dsmem(uint32_t addr, uint32_t rank, float v) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"(addr), "r"(rank));
  asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(remote), "f"(v) : "memory");
}

/// Cluster barrier halves (PTX barrier.cluster): arrive without ordering,
/// arrive with release, wait with acquire.
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
}
__device__ __forceinline__ void cluster_arrive_release() {
  asm volatile("barrier.cluster.arrive.release;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
}

/// Programmatic dependent launch (PTX griddepcontrol, sm_90+). `wait`
/// blocks until the grids this one depends on have completed and their
/// memory is visible (a no-op when launched without the PDL attribute);
/// `launch_dependents` lets the next kernel of the stream start launching.
__device__ __forceinline__ void pdl_wait() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
}
__device__ __forceinline__ void pdl_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
/// Bulk prefetch of [ptr, ptr + bytes) into L2 (bytes a multiple of 16,
/// ptr 16-byte aligned). A prefetch into L2 cannot return stale data: L2 is
/// where every write of the preceding kernels lands, so it may run before
/// pdl_wait().
__device__ __forceinline__ void prefetch_l2(const void *ptr, uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(ptr), "r"(bytes)
               : "memory");
}


/// 16-byte asynchronous global -> shared copy (cp.async, L2 only).
__device__ __forceinline__ void cp_async16(uint32_t saddr, const void *gptr) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(saddr), "l"(gptr)
               : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;" ::: "memory");
}


/// D += A * B on the tensor cores (mma.sync m16n8k16, fp32 accumulation):
/// A 16 x 16 (a0..a3: 2 elements each), B 16 x 8 (b0, b1), D 16 x 8.
template <typename T>
__device__ __forceinline__ void mma16816(float (&d)[4], uint32_t a0, uint32_t a1,
                                         uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
  if constexpr (std::is_same<T, __nv_bfloat16>::value)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

#endif // sm_90 and later

} // namespace cuda
} // namespace fusion_rt

#endif // FUSION_RT_CUDA_PTX_CUH
