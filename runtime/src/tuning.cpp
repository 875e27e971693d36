//===- tuning.cpp - the process's tuning knobs ----------------------------===//
//
// The knobs of common/tuning.def: read from the environment at the first
// call of tuning() (a value a knob does not take is reported on stderr and
// its default kept), changed since by set_tuning_value (fusion_rt_set_tuning
// in api.cpp). Each change publishes a new snapshot and keeps the old ones,
// so a reference that a launcher holds never dangles while another thread
// sets a knob (changes are rare: benchmarks and tests).
//
//===----------------------------------------------------------------------===//

#include "src/tuning_store.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>

namespace fusion_rt {
namespace {

std::mutex g_mutex;
std::deque<Tuning> &snapshots() {
  static std::deque<Tuning> s;
  return s;
}

Tuning from_environment() {
  Tuning t;
  size_t n = 0;
  const TuningKnob *k = tuning_knobs(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t v = 0;
    const char *text = std::getenv(k[i].env);
    if (parse_tuning_value(k[i], text, v))
      t.*(k[i].member) = v;
    else // a value the knob does not take: said once, and the default kept
      std::fprintf(stderr,
                   "fusion_rt: %s=%s is not one of its values (%s); the "
                   "default is used\n",
                   k[i].env, text, *k[i].values ? k[i].values : "a decimal integer");
  }
  return t;
}

std::atomic<const Tuning *> g_current{nullptr};

} // namespace

const Tuning &tuning() {
  const Tuning *t = g_current.load(std::memory_order_acquire);
  if (t)
    return *t;
  std::lock_guard<std::mutex> lock(g_mutex);
  t = g_current.load(std::memory_order_relaxed);
  if (!t) {
    snapshots().push_back(from_environment());
    t = &snapshots().back();
    g_current.store(t, std::memory_order_release);
  }
  return *t;
}

void set_tuning_value(TuningField member, int64_t value) {
  tuning(); // the environment's values first
  std::lock_guard<std::mutex> lock(g_mutex);
  Tuning next = *g_current.load(std::memory_order_relaxed);
  next.*member = value;
  snapshots().push_back(next);
  g_current.store(&snapshots().back(), std::memory_order_release);
}

} // namespace fusion_rt
