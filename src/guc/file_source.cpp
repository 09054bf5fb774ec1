// Where settings files come from: the disk or memory (include/walseg/guc_file.h).
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>

#include <fmt/format.h>

#include "walseg/directory.h"
#include "walseg/error.h"
#include "walseg/file.h"
#include "walseg/guc_file.h"

namespace walseg::guc {

namespace {

// Far above any real settings file; it only has to stop `include '/dev/zero'`.
constexpr std::uint64_t kMaxFileBytes = 64 * 1024 * 1024;

std::string file_identity(const struct stat& st) {
  return fmt::format("{}:{}", st.st_dev, st.st_ino);
}

std::string normalise(const std::string& path) {
  std::string p = std::filesystem::path(path).lexically_normal().generic_string();
  while (p.size() > 1 && p.ends_with('/')) p.pop_back();
  return p;
}

}  // namespace

ConfigSource::Text DiskSource::read(const std::string& path) {
  Text out;
  try {
    // Opened only once known to be a regular file: a FIFO's writer was released and a device's
    // open ran before the refusal (break-it round 20 L2; an include of a FIFO once hung).
    struct stat st{};
    File f = File::open_if_regular(path, O_RDONLY, st);
    if (S_ISDIR(st.st_mode)) {
      out.err = EISDIR;
      return out;
    }
    if (!S_ISREG(st.st_mode)) {  // a FIFO, socket or device is not a configuration file
      out.err = EINVAL;
      out.why = fmt::format("it is {}, not a regular file", S_ISFIFO(st.st_mode)    ? "a FIFO"
                                                           : S_ISSOCK(st.st_mode) ? "a socket"
                                                                                  : "a device");
      return out;
    }
    out.identity = file_identity(st);
    char buf[16384];
    for (std::uint64_t offset = 0;;) {
      std::size_t n = f.pread(buf, sizeof buf, offset);
      if (n == 0) break;
      out.contents.append(buf, n);
      offset += n;
      if (offset > kMaxFileBytes) {
        out.err = EFBIG;
        return out;
      }
    }
  } catch (const Error& e) {
    out.err = e.errnum() != 0 ? e.errnum() : EIO;
  }
  return out;
}

ConfigSource::Listing DiskSource::list(const std::string& dir) {
  Listing out;
  try {
    Directory d = Directory::open(dir);
    for (auto& e : d.list()) {
      // Follow symlinks: configuration management often links files into conf.d.
      std::error_code ec;
      bool is_dir = std::filesystem::is_directory(d.path_of(e.name), ec);
      out.entries.push_back(Entry{std::move(e.name), is_dir});
    }
  } catch (const Error& e) {
    out.err = e.errnum() != 0 ? e.errnum() : EIO;
  }
  return out;
}

std::string DiskSource::identity(const std::string& path) {
  try {
    // stat, not open: nothing but a regular file is ever opened (read above).
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0) return file_identity(st);
    return "path:" + path;
  } catch (const Error&) {
    return "path:" + path;  // text that is not (yet) a file can only be reached by its name
  }
}

void MemorySource::add_file(const std::string& path, std::string contents) {
  files_[normalise(path)] = std::move(contents);
}

ConfigSource::Text MemorySource::read(const std::string& path) {
  Text out;
  std::string key = normalise(path);
  auto it = files_.find(key);
  if (it != files_.end()) {
    out.identity = key;
    out.contents = it->second;
    return out;
  }
  auto sub = files_.lower_bound(key + "/");
  out.err = (sub != files_.end() && sub->first.starts_with(key + "/")) ? EISDIR : ENOENT;
  return out;
}

ConfigSource::Listing MemorySource::list(const std::string& dir) {
  Listing out;
  std::string key = normalise(dir);
  if (files_.count(key) != 0) {
    out.err = ENOTDIR;
    return out;
  }
  std::string prefix = key == "." ? "" : (key == "/" ? key : key + "/");
  for (auto it = files_.lower_bound(prefix); it != files_.end() && it->first.starts_with(prefix);
       ++it) {
    std::string rest = it->first.substr(prefix.size());
    std::size_t slash = rest.find('/');
    std::string name = rest.substr(0, slash);
    if (out.entries.empty() || out.entries.back().name != name)
      out.entries.push_back(Entry{name, slash != std::string::npos});
  }
  if (out.entries.empty()) out.err = ENOENT;
  return out;
}

std::string MemorySource::identity(const std::string& path) { return normalise(path); }

}  // namespace walseg::guc
