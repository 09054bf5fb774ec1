// walseg ls: every entry of a WAL directory with its size, allocated bytes and what walseg
// takes it for (segment, temp leftover, wrong size, PostgreSQL's other files, not walseg's).
#include <fcntl.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include "command.h"
#include "settings_options.h"
#include "tool_util.h"
#include "walseg/auto_method.h"
#include "walseg/dir_lock.h"
#include "walseg/directory.h"
#include "walseg/error.h"
#include "walseg/segment_name.h"

namespace walseg::tool {
namespace {

struct LsArgs {
  std::string dir;
  std::string segment_size;
  SettingsOptions settings;
};

std::string describe(const WalFileInfo& info, const struct stat& st, const Config& cfg) {
  auto size = static_cast<std::uint64_t>(st.st_size);
  if (!S_ISREG(st.st_mode)) return "not walseg's (not a regular file)";
  switch (info.kind) {
    case WalFileKind::kSegmentFile:
      if (size == cfg.segment_size_bytes) return fmt::format("segment, timeline {}", info.timeline);
      if (append_mode(cfg.init_method) && size < cfg.segment_size_bytes)
        return fmt::format("segment (append mode, {} bytes written), timeline {}", size, info.timeline);
      return fmt::format("wrong size: {} bytes, expected {} (another segment size? try --segment-size)", size,
                         cfg.segment_size_bytes);
    case WalFileKind::kTempFile: return "temp leftover (removed at start)";
    case WalFileKind::kForeign: return "not walseg's";
    default: return std::string(to_string(info.kind));
  }
}

void run_ls(const LsArgs& a) {
  Config cfg = load_config(a.settings);
  if (!a.segment_size.empty()) cfg.segment_size_bytes = parse_size_option("--segment-size", a.segment_size);
  check_segment_size(cfg.segment_size_bytes);
  Directory dir = Directory::open(a.dir);
  fmt::print("{:<42} {:>12} {:>12}  {}\n", "name", "size", "allocated", "what");
  for (const auto& e : dir.list()) {
    struct stat st{};
    if (::fstatat(dir.fd(), e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      throw file_error(errno, "stat", dir.path_of(e.name));
    WalFileInfo info = classify_wal_file_name(e.name, cfg.segment_size_bytes);
    std::string what = e.name == kLockFileName        ? "walseg's lock file"
                       : e.name == kAutoCacheFileName ? "walseg's init_method = auto decision"
                                                      : describe(info, st, cfg);
    fmt::print("{:<42} {:>12} {:>12}  {}\n", e.name, st.st_size,
               static_cast<std::uint64_t>(st.st_blocks) * 512, what);
  }
}

RegisterCommand reg("ls", [](CLI::App& app) {
  auto a = std::make_shared<LsArgs>();
  auto* cmd = app.add_subcommand("ls", "list a WAL directory and classify each file");
  cmd->add_option("--dir", a->dir, "WAL directory")->required();
  cmd->add_option("--segment-size", a->segment_size, "segment size (default: walseg.segment_size)");
  add_settings_options(*cmd, a->settings);
  cmd->callback([a] { run_ls(*a); });
});

}  // namespace
}  // namespace walseg::tool
