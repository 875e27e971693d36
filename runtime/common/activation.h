//===- activation.h - activation math shared by CPU and CUDA ------*- C++ -*-===//
//
// Activations in fp32 with the expression shapes of TransformerEngine's
// util/math.h and gated_mxfp8.cuh (research/kernels.md §1.5, §2.2), plus the
// exact-erf GELU that TE does not offer. Two deliberate departures from TE,
// so that the fused op equals the unfused graph a compiler sees
// (arith.maximumf, torch.relu): relu, srelu and the clamped-SwiGLU clamps
// propagate a NaN input instead of turning it into a number.
//
// The CPU backend builds with -ffp-contract=off; nvcc contracts a*b+c into
// FMAs, so transcendental results may differ by one ulp of the intermediate
// type between CPU and GPU (the contract allows that, and it is measured).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_ACTIVATION_H
#define FUSION_RT_COMMON_ACTIVATION_H

#include "common/hd.h"
#include "fusion_rt.h"
#include <math.h>

namespace fusion_rt {

/// Activation kinds: fusion_rt_act_kind of fusion_rt.h.
enum ActKind : int32_t {
  kActIdentity = FUSION_RT_ACT_IDENTITY,
  kActRelu = FUSION_RT_ACT_RELU,
  kActGelu = FUSION_RT_ACT_GELU,
  kActGeluTanh = FUSION_RT_ACT_GELU_TANH,
  kActSilu = FUSION_RT_ACT_SILU,
  kActQGelu = FUSION_RT_ACT_QGELU,
  kActSRelu = FUSION_RT_ACT_SRELU,
  kActSwiGLU = FUSION_RT_ACT_SWIGLU,
  kActGeGLU = FUSION_RT_ACT_GEGLU,
  kActReGLU = FUSION_RT_ACT_REGLU,
  kActQGeGLU = FUSION_RT_ACT_QGEGLU,
  kActSReGLU = FUSION_RT_ACT_SREGLU,
  kActClampedSwiGLU = FUSION_RT_ACT_CLAMPED_SWIGLU,
  kActGeGLUErf = FUSION_RT_ACT_GEGLU_ERF
};

FUSION_RT_HDI bool act_is_gated(int32_t kind) {
  return kind >= kActSwiGLU && kind <= kActGeGLUErf;
}

// The registry (fusion_rt_kinds.def) against fusion_rt.h and the gated
// range above; the dialect's copy is checked in LowerToRuntime.cpp.
#define FUSION_RT_ACTIVATION(U, name, value, gated, mask)                      \
  static_assert(FUSION_RT_ACT_##U == (value) &&                               \
                    ((value) >= kActSwiGLU && (value) <= kActGeGLUErf) ==      \
                        bool(gated),                                           \
                "fusion_rt_kinds.def: activation " #name);
#include "fusion_rt_kinds.def"

/// True for the kinds whose backward derivative has a mask (the registry's
/// mask column): the ones act_backward and gated_backward select as +0
/// under ActParams::mask_select.
constexpr bool act_has_mask(int32_t kind) {
  switch (kind) {
#define FUSION_RT_ACTIVATION(U, name, value, gated, mask)                      \
  case value:                                                                  \
    return mask;
#include "fusion_rt_kinds.def"
  }
  return false;
}
// The kinds act_backward and gated_backward below mask (their branches
// name them) are the registry's.
static_assert(act_has_mask(kActRelu) && act_has_mask(kActSRelu) &&
                  act_has_mask(kActReGLU) && act_has_mask(kActSReGLU) &&
                  act_has_mask(kActClampedSwiGLU),
              "fusion_rt_kinds.def: a masked kind of activation.h");
#define FUSION_RT_ACTIVATION(U, name, value, gated, mask)                      \
  static_assert(!(mask) || (value) == kActRelu || (value) == kActSRelu ||     \
                    (value) == kActReGLU || (value) == kActSReGLU ||           \
                    (value) == kActClampedSwiGLU,                              \
                "fusion_rt_kinds.def: activation " #name                       \
                " has a mask that act_backward / gated_backward do not apply");
#include "fusion_rt_kinds.def"
static_assert(int32_t(kActGeGLUErf) == int32_t(FUSION_RT_ACT_LAST),
              "a new activation: extend the gated range");

/// Parameters of the parametrised activations.
struct ActParams {
  float limit = 7.0f;   ///< clamped SwiGLU clamp
  float offset = 1.0f;  ///< clamped SwiGLU linear offset on the up half
  float alpha = 1.702f; ///< qgelu / clamped SwiGLU sigmoid slope
  /// Backward (FUSION_RT_BACKWARD_MASK_SELECT): where a derivative is zero by
  /// a mask (relu, srelu, reglu, sreglu: x <= 0; clamped SwiGLU: the gate
  /// above the limit or NaN), the result is +0, as autograd's
  /// threshold_backward and clamp backward select it, instead of TE's
  /// grad * 0 (-0 for a negative grad, NaN for an infinite one); a NaN
  /// relu-family input is not masked (relu(NaN) is NaN).
  bool mask_select = false;
};

//===--- scalar building blocks (TE util/math.h) ---------------------------===//

FUSION_RT_HDI float act_sigmoid(float c) { return 1.f / (1.f + expf(-c)); }
FUSION_RT_HDI float act_dsigmoid(float c) {
  float s = act_sigmoid(c);
  return s * (1.f - s);
}

FUSION_RT_HDI float act_relu(float c) { return c > 0.f ? c : (c != c ? c : 0.f); }
FUSION_RT_HDI float act_drelu(float c) { return c > 0.f ? 1.f : 0.f; }

FUSION_RT_HDI float act_srelu(float c) {
  return c > 0.f ? c * c : (c != c ? c : 0.f);
}
FUSION_RT_HDI float act_dsrelu(float c) { return fmaxf(2.f * c, 0.f); }

/// erf rounded once to fp32: evaluated in double, where the CPU's and the
/// GPU's erf agree to well below an fp32 ulp, so both sides get the same
/// fp32 value. (With erff itself, libm and CUDA differ by an ulp near -1, and
/// 1 + erf cancels that into up to 128 bf16 ulps of GELU for x < -4.5.)
FUSION_RT_HDI float act_erf(float z) { return float(erf(double(z))); }

/// Exact GELU: x*0.5*(1+erf(x/sqrt(2))).
FUSION_RT_HDI float act_gelu_erf(float x) {
  return x * 0.5f * (1.f + act_erf(x * 0.70710678f));
}
/// d/dx of the exact GELU: Phi(x) + x*phi(x).
FUSION_RT_HDI float act_dgelu_erf(float x) {
  return 0.5f * (1.f + act_erf(x * 0.70710678f)) +
         x * 0.3989422804f * expf(-0.5f * x * x);
}

/// TE's tanh-approximate GELU.
FUSION_RT_HDI float act_gelu_tanh(float c) {
  return c * (0.5F + 0.5F * tanhf(c * (0.79788456F + 0.03567741F * c * c)));
}
/// TE's derivative of the tanh GELU (its own constant grouping).
FUSION_RT_HDI float act_dgelu_tanh(float c) {
  const float t = tanhf(0.79788456f * c * (1.f + 0.044715f * c * c));
  return 0.5f * c * ((1.f - t * t) * (0.79788456f + 0.1070322243f * c * c)) +
         0.5f * (1.f + t);
}

FUSION_RT_HDI float act_silu(float c) { return c * act_sigmoid(c); }
FUSION_RT_HDI float act_dsilu(float c) {
  return c * act_dsigmoid(c) + act_sigmoid(c);
}

/// Quick GELU x*sigmoid(alpha*x).
FUSION_RT_HDI float act_qgelu(float c, float alpha) {
  return c * act_sigmoid(alpha * c);
}
FUSION_RT_HDI float act_dqgelu(float c, float alpha) {
  return alpha * c * act_dsigmoid(alpha * c) + act_sigmoid(alpha * c);
}

/// min(x, limit), NaN propagating.
FUSION_RT_HDI float act_clamp_hi(float x, float limit) {
  return x > limit ? limit : x;
}

//===--- non-gated --------------------------------------------------------===//

/// Forward value of a non-gated kind.
FUSION_RT_HDI float act_forward(int32_t kind, float x, const ActParams &p) {
  switch (kind) {
  case kActRelu:
    return act_relu(x);
  case kActGelu:
    return act_gelu_erf(x);
  case kActGeluTanh:
    return act_gelu_tanh(x);
  case kActSilu:
    return act_silu(x);
  case kActQGelu:
    return act_qgelu(x, p.alpha);
  case kActSRelu:
    return act_srelu(x);
  default:
    return x;
  }
}

/// Derivative of a non-gated kind.
FUSION_RT_HDI float act_derivative(int32_t kind, float x, const ActParams &p) {
  switch (kind) {
  case kActRelu:
    return act_drelu(x);
  case kActGelu:
    return act_dgelu_erf(x);
  case kActGeluTanh:
    return act_dgelu_tanh(x);
  case kActSilu:
    return act_dsilu(x);
  case kActQGelu:
    return act_dqgelu(x, p.alpha);
  case kActSRelu:
    return act_dsrelu(x);
  default:
    return 1.f;
  }
}

/// Backward value grad * act'(x) (TE: elt = grad * dOP(x)).
FUSION_RT_HDI float act_backward(int32_t kind, float x, float grad,
                                 const ActParams &p) {
  if (p.mask_select && (kind == kActRelu || kind == kActSRelu)) {
    // threshold_backward(grad * d, relu(x), 0): d = 1 or 2x where relu(x)
    // is not <= 0 (x > 0 or NaN), a selected +0 elsewhere.
    if (x <= 0.f)
      return 0.f;
    return kind == kActRelu ? grad : grad * (2.f * x);
  }
  return grad * act_derivative(kind, x, p);
}

//===--- gated ------------------------------------------------------------===//

/// The non-gated kind that activates the gate half of a gated kind.
FUSION_RT_HDI int32_t gated_base_kind(int32_t kind) {
  switch (kind) {
  case kActSwiGLU:
    return kActSilu;
  case kActGeGLU:
    return kActGeluTanh;
  case kActGeGLUErf:
    return kActGelu;
  case kActReGLU:
    return kActRelu;
  case kActQGeGLU:
    return kActQGelu;
  case kActSReGLU:
    return kActSRelu;
  default:
    return kActIdentity;
  }
}

/// Gated forward: act(a) * g' (g' = clamp(g,-limit,limit)+offset for the
/// clamped SwiGLU, g otherwise). `a` is the gate (activated) half.
FUSION_RT_HDI float gated_forward(int32_t kind, float a, float g,
                                  const ActParams &p) {
  if (kind == kActClampedSwiGLU) {
    float gc = g < -p.limit ? -p.limit : act_clamp_hi(g, p.limit);
    return act_qgelu(act_clamp_hi(a, p.limit), p.alpha) * (gc + p.offset);
  }
  return act_forward(gated_base_kind(kind), a, p) * g;
}

/// Gated backward as TE's gated_mxfp8.cuh: dA = dact(a) * grad * g',
/// dG = dgate ? act(a) * grad : 0 (with p.mask_select, dA is a selected +0
/// where the gate's derivative is masked: ActParams). SwiGLU and the clamped
/// SwiGLU take the shared-sigmoid form s = sigmoid(x), act = x*s,
/// dact = x*s*(1-s) + s.
FUSION_RT_HDI void gated_backward(int32_t kind, float a, float g, float grad,
                                  const ActParams &p, float &d_act,
                                  float &d_gate) {
  bool dgate = true;
  if (kind == kActClampedSwiGLU) {
    dgate = g <= p.limit && g >= -p.limit;
    g = (g < -p.limit ? -p.limit : act_clamp_hi(g, p.limit)) + p.offset;
  }
  float act_x, dact_x;
  if (kind == kActClampedSwiGLU) {
    const float x = act_clamp_hi(a, p.limit);
    const float s = act_sigmoid(p.alpha * x);
    act_x = x * s;
    dact_x = a <= p.limit ? s + s * (1.f - s) * p.alpha * x : 0.f;
  } else if (kind == kActSwiGLU) {
    const float s = act_sigmoid(a);
    act_x = a * s;
    dact_x = a * s * (1.f - s) + s;
  } else {
    const int32_t base = gated_base_kind(kind);
    act_x = act_forward(base, a, p);
    dact_x = act_derivative(base, a, p);
  }
  d_act = dact_x * grad * g;
  d_gate = dgate ? act_x * grad : 0.f;
  if (p.mask_select) {
    if (kind == kActReGLU || kind == kActSReGLU)
      d_act = a <= 0.f ? 0.f : (kind == kActReGLU ? 1.f : 2.f * a) * grad * g;
    else if (kind == kActClampedSwiGLU && !(a <= p.limit))
      d_act = 0.f;
  }
}

} // namespace fusion_rt

#endif // FUSION_RT_COMMON_ACTIVATION_H
