//===- tuning_store.h - setting the process's tuning knobs --------*- C++ -*-===//
#ifndef FUSION_RT_SRC_TUNING_STORE_H
#define FUSION_RT_SRC_TUNING_STORE_H

#include "common/tuning.h"

namespace fusion_rt {

/// Publishes a snapshot of the current knobs with `member` set to `value`
/// (tuning.cpp); later calls of tuning() see it.
void set_tuning_value(TuningField member, int64_t value);

} // namespace fusion_rt

#endif // FUSION_RT_SRC_TUNING_STORE_H
