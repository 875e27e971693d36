//===- tuning.h - the runtime's tuning knobs as one typed struct -*- C++ -*-===//
//
// `Tuning` holds every knob of tuning.def (one int64_t field each, at its
// default when default-constructed) and `tuning_knobs()` describes them
// (name, environment variable, values, doc) for the parser and the docs.
// Plain C++: the CUDA launchers read the process's values through
// `tuning()` (runtime/src/tuning.cpp: the environment, read once, then
// fusion_rt_set_tuning), and the kernel report plans with the defaults.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_RT_COMMON_TUNING_H
#define FUSION_RT_COMMON_TUNING_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace fusion_rt {

struct Tuning {
#define FUSION_RT_TUNING(field, env, dflt, values, doc) int64_t field = dflt;
#include "common/tuning.def"
};

/// A knob's field in Tuning.
using TuningField = int64_t Tuning::*;

struct TuningKnob {
  const char *field;
  const char *env;
  int64_t dflt;
  const char *values; ///< "a|b|c" (the values 0, 1, 2, ...) or "" (integer)
  const char *doc;
  TuningField member;
};

/// The knobs of tuning.def, in its order.
inline const TuningKnob *tuning_knobs(size_t &count) {
  static const TuningKnob knobs[] = {
#define FUSION_RT_TUNING(field, env, dflt, values, doc)                        \
  {#field, env, dflt, values, doc, &Tuning::field},
#include "common/tuning.def"
  };
  count = sizeof knobs / sizeof knobs[0];
  return knobs;
}

/// The knob whose environment variable or field name is `name`; nullptr if
/// none.
inline const TuningKnob *find_tuning_knob(const char *name) {
  size_t n = 0;
  const TuningKnob *k = tuning_knobs(n);
  for (size_t i = 0; name && i < n; ++i)
    if (!std::strcmp(name, k[i].env) || !std::strcmp(name, k[i].field))
      return &k[i];
  return nullptr;
}

/// Parses `text` as a value of `knob`: a name of its value list gives that
/// name's position, an integer knob takes a decimal integer, and "" or
/// "default" the default. False (out untouched) for anything else.
inline bool parse_tuning_value(const TuningKnob &knob, const char *text,
                               int64_t &out) {
  if (!text || !*text || !std::strcmp(text, "default")) {
    out = knob.dflt;
    return true;
  }
  if (!*knob.values) {
    char *end = nullptr;
    const long long v = std::strtoll(text, &end, 10);
    if (!end || *end != '\0')
      return false;
    out = int64_t(v);
    return true;
  }
  const size_t len = std::strlen(text);
  int64_t index = 0;
  for (const char *s = knob.values;; ++index) {
    const char *bar = std::strchr(s, '|');
    const size_t n = bar ? size_t(bar - s) : std::strlen(s);
    if (n == len && !std::strncmp(s, text, n)) {
      out = index;
      return true;
    }
    if (!bar)
      return false;
    s = bar + 1;
  }
}

/// The process's knobs (runtime/src/tuning.cpp): the environment's values,
/// read at the first call, changed since by fusion_rt_set_tuning. The
/// reference stays valid; a later set publishes a new snapshot.
const Tuning &tuning();

} // namespace fusion_rt

#endif // FUSION_RT_COMMON_TUNING_H
