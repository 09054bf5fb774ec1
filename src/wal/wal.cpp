// Wal::open (include/walseg/wal.h).
#include "walseg/wal.h"

#include <sys/time.h>
#include <unistd.h>

#include <fmt/format.h>

#include "existing_wal.h"
#include "walseg/log.h"

namespace walseg {
namespace {

// As initdb's BootStrapXLOG: unique enough across clusters, never reused by one machine.
std::uint64_t new_system_id() {
  struct timeval tv{};
  gettimeofday(&tv, nullptr);
  return (static_cast<std::uint64_t>(tv.tv_sec) << 32) |
         (static_cast<std::uint64_t>(tv.tv_usec) << 12) |
         (static_cast<std::uint64_t>(::getpid()) & 0xFFF);
}

}  // namespace

std::unique_ptr<Wal> Wal::open(const std::string& dir, const Config& config, TimeLineId timeline) {
  check_existing_wal(dir, config);
  std::unique_ptr<Wal> w(new Wal());
  SegmentManager::Options mo;
  mo.config = config;
  mo.timeline = timeline;
  w->manager_ = std::make_unique<SegmentManager>(dir, mo);
  WalReaderOptions ro;
  ro.timeline = timeline;
  ro.segment_size_bytes = config.segment_size_bytes;
  ro.block_size_bytes = config.block_size_bytes;
  w->recovery_ = find_end_of_wal(dir, ro);
  WalWriterOptions wo;
  // A WAL exists when recovery found where it ends, even with no record start left in it:
  // truncate_before() at the end of the WAL retires every segment holding one, leaving a
  // segment with only a continuation, or a zero-filled one. Restarting from wal_start_lsn()
  // there would hand out acknowledged LSNs again, so the writer continues at the end found.
  if (w->recovery_.end_lsn != 0) {
    WalReader r = WalReader::open(dir, ro);
    WalRecord rec;
    r.next(&rec);  // the system identifier is learnt from the first long header, if any
    w->system_id_ = r.system_id().value_or(new_system_id());
    wo.resume_lsn = w->recovery_.end_lsn;
    wo.prev_record_lsn = w->recovery_.last_record_lsn;
    log(LogLevel::kLog, fmt::format("WAL in \"{}\": {} records, resuming at {}{}", dir, w->recovery_.records,
                                    format_lsn(w->recovery_.end_lsn),
                                    w->recovery_.corruption ? "; corruption found: " + w->recovery_.stop_reason : ""));
    // A torn tail's earlier pages (never flushed) must not outlive the resume. With corruption
    // the pages after the stop are left as they are, for whoever investigates.
    if (!w->recovery_.corruption) {
      std::uint64_t n = clear_unfinished_record(dir, config, timeline, w->recovery_.end_lsn, w->recovery_.stop_page);
      if (n > 0)
        log(LogLevel::kLog, fmt::format("WAL in \"{}\": zeroed {} pages of an unfinished record after {} "
                                        "(written before a crash, never flushed)",
                                        dir, n, format_lsn(w->recovery_.end_lsn)));
    }
  } else {
    w->system_id_ = new_system_id();
  }
  wo.system_id = w->system_id_;
  w->writer_ = std::make_unique<WalWriter>(*w->manager_, wo);
  return w;
}

}  // namespace walseg
