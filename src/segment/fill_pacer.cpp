// FillPacer: the rate estimate and the wait before each chunk (include/walseg/fill_pacer.h).
#include "walseg/fill_pacer.h"

#include <algorithm>
#include <cmath>

namespace walseg {

void FillPacer::observe(Lsn position, double now_s) noexcept {
  if (!primed_ || position < last_ || now_s < last_s_) {
    *this = FillPacer{};
    primed_ = true;
    last_ = position;
    last_s_ = now_s;
    return;
  }
  const double dt = now_s - last_s_;
  if (dt < kSamplePeriodS) return;
  const double sample = static_cast<double>(position - last_) / dt;
  if (bytes_per_s_ <= 0) {
    bytes_per_s_ = sample;
  } else {
    const double tau = sample > bytes_per_s_ ? kRiseS : kFallS;
    bytes_per_s_ += (1.0 - std::exp(-dt / tau)) * (sample - bytes_per_s_);
  }
  last_ = position;
  last_s_ = now_s;
}

double FillPacer::wait_s(double elapsed_s, std::uint64_t done, std::uint64_t total, Lsn position,
                         Lsn target) const noexcept {
  // Without a rate (start-up, or no WAL written yet) there is nothing to pace against; a
  // segment the position has reached is needed now.
  if (!(bytes_per_s_ > 0) || total == 0 || position >= target) return 0;
  const double left_s = static_cast<double>(target - position) / bytes_per_s_;
  if (left_s < kNearS) return 0;
  const double deadline_s = std::min(elapsed_s + left_s, kMaxDeadlineS);
  const double due_s = deadline_s * fill_due_share(done, total);
  return due_s > elapsed_s ? due_s - elapsed_s : 0;
}

}  // namespace walseg
