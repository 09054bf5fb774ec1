// walseg create: install N segments by one init method, printing what each creation cost.
#include <optional>

#include <fmt/format.h>

#include "command.h"
#include "number_options.h"
#include "settings_options.h"
#include "tool_util.h"
#include "walseg/dir_lock.h"
#include "walseg/dir_scan.h"
#include "walseg/directory.h"
#include "walseg/error.h"
#include "walseg/segment_install.h"
#include "walseg/segment_name.h"

namespace walseg::tool {
namespace {

struct CreateArgs {
  std::string dir;
  std::string method;
  std::string segment_size;
  int count = 1;
  TimeLineId timeline = 1;
  SegNo start = 1;
  SettingsOptions settings;
};

// Before anything is made: if a segment this run would create is already there, say so and
// where the free numbers start, instead of creating the ones before it and stopping half-way.
void refuse_taken_numbers(const CreateArgs& a, const ScanReport& scan, std::uint64_t segment_size) {
  const SegNo first = a.start, last = a.start + static_cast<SegNo>(a.count) - 1;
  std::optional<SegNo> taken, highest;
  for (const SegmentName& s : scan.segments) {
    if (s.timeline != a.timeline) continue;
    if (!highest || s.segno > *highest) highest = s.segno;
    if (s.segno >= first && s.segno <= last && !taken) taken = s.segno;
  }
  if (!taken) return;
  throw make_error(EEXIST, "create", a.dir,
                   fmt::format("segment \"{}\" already exists in \"{}\"; nothing was created or replaced. "
                               "Segments of timeline {} go up to {}: use --start {} for new ones after them",
                               segment_file_name(a.timeline, *taken, segment_size), a.dir, a.timeline,
                               *highest, *highest + 1));
}

void run_create(const CreateArgs& a) {
  Config cfg = load_config(a.settings);
  if (!a.segment_size.empty()) cfg.segment_size_bytes = parse_size_option("--segment-size", a.segment_size);
  if (!a.method.empty()) cfg.init_method = parse_method_option(a.method);
  check_segment_size(cfg.segment_size_bytes);
  if (cfg.init_method == InitMethod::kAuto)
    throw std::invalid_argument("walseg create needs an explicit --method (auto is chosen by the segment manager)");
  Directory dir = Directory::open(a.dir, true);
  // Like every writer of a WAL directory: one process at a time, and leftovers of a crash
  // (temp files, wrong-size segments) dealt with before anything new is made.
  DirLock lock = DirLock::acquire(dir);
  ScanReport scan = scan_wal_directory(dir, cfg.segment_size_bytes, append_mode(cfg.init_method));
  refuse_taken_numbers(a, scan, cfg.segment_size_bytes);
  AllocOptions opts{.method = cfg.init_method, .fallback = cfg.fallocate_fallback};
  for (int i = 0; i < a.count; ++i) {
    std::string name = segment_file_name(a.timeline, a.start + static_cast<SegNo>(i), cfg.segment_size_bytes);
    CreateReport r = create_segment(dir, name, cfg.segment_size_bytes, opts);
    if (i == 0) fmt::print("{:<26} {:<16} {:>12} {:>14} {:>10}\n", "segment", "method used", "size", "allocated", "total us");
    fmt::print("{:<26} {:<16} {:>12} {:>14} {:>10}\n", name, to_string(r.alloc.used),
               r.alloc.size_bytes, r.alloc.allocated_bytes, r.times.total_us);
  }
}

RegisterCommand reg("create", [](CLI::App& app) {
  auto args = std::make_shared<CreateArgs>();
  auto* cmd = app.add_subcommand("create", "create segments durably by one init method");
  cmd->add_option("--dir", args->dir, "WAL directory (created if missing)")->required();
  cmd->add_option("--method", args->method, "init method (default: walseg.init_method)");
  cmd->add_option("--count", args->count, "number of segments")->transform(integer_in(1, 1000000));
  cmd->add_option("--segment-size", args->segment_size, "segment size, e.g. 16MB (default: walseg.segment_size)");
  cmd->add_option("--timeline", args->timeline, "timeline id")->transform(integer_in(1, 0xFFFFFFFF));
  cmd->add_option("--start", args->start, "first segment number")->transform(integer_in(0, 0xFFFFFFFFFFFFFF));
  add_settings_options(*cmd, args->settings);
  cmd->callback([args] { run_create(*args); });
});

}  // namespace
}  // namespace walseg::tool
