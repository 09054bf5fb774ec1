// The preallocator's fill pacing (fill_pacing.h): the rate estimate and the wait per chunk.
#include "fill_pacing.h"

#include <algorithm>
#include <cmath>

namespace walseg::bridge {

void rate_observe(WalsegRate& r, std::uint64_t insert_lsn, double now_s) noexcept {
  if (!r.primed || insert_lsn < r.last_lsn || now_s < r.last_s) {
    r = WalsegRate{};
    r.primed = true;
    r.last_lsn = insert_lsn;
    r.last_s = now_s;
    return;
  }
  double dt = now_s - r.last_s;
  if (dt < kRateSamplePeriodS) return;
  double sample = static_cast<double>(insert_lsn - r.last_lsn) / dt;
  if (r.bytes_per_s <= 0) {
    r.bytes_per_s = sample;
  } else {
    double tau = sample > r.bytes_per_s ? kRateRiseS : kRateFallS;
    r.bytes_per_s += (1.0 - std::exp(-dt / tau)) * (sample - r.bytes_per_s);
  }
  r.last_lsn = insert_lsn;
  r.last_s = now_s;
}

double fill_wait_s(double elapsed_s, std::uint64_t done, std::uint64_t total,
                   std::uint64_t insert_lsn, std::uint64_t target_lsn, double bytes_per_s) noexcept {
  // Without a consumption rate (start-up, or no WAL written yet) there is nothing to pace
  // against; a segment the position has reached is needed now.
  if (!(bytes_per_s > 0) || total == 0 || insert_lsn >= target_lsn) return 0;
  double left_s = static_cast<double>(target_lsn - insert_lsn) / bytes_per_s;
  if (left_s < kNearS) return 0;
  double deadline_s = std::min(elapsed_s + left_s, kMaxDeadlineS);
  double due_s = deadline_s * fill_due_share(done, total);
  return due_s > elapsed_s ? due_s - elapsed_s : 0;
}

}  // namespace walseg::bridge
