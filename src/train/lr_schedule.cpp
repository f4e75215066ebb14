#include "rnnsearch/train/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace rnnsearch {

double scheduled_lr(double lr, const LrSchedule& schedule, long t, double decay_scale) {
  const double step = static_cast<double>(std::max(1L, t));
  double factor = decay_scale;
  // min(1, t / W)
  if (schedule.warmup > 0) factor *= std::min(1.0, step / static_cast<double>(schedule.warmup));
  // sqrt(D / max(t, D))
  if (schedule.inv_sqrt > 0) {
    const double d = static_cast<double>(schedule.inv_sqrt);
    factor *= std::sqrt(d / std::max(step, d));
  }
  return lr * factor;
}

bool decays_now(const LrSchedule& schedule, int stalled) {
  return schedule.decay > 0 && stalled > 0 && stalled % schedule.decay_stalled == 0;
}

}  // namespace rnnsearch
