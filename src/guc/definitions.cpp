// walseg's settings table (include/walseg/guc_definitions.h explains units and contexts).
// Defaults come from walseg::Config's member initialisers so they are written once.
#include "walseg/guc_definitions.h"

#include <array>
#include <climits>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

namespace walseg::guc {

namespace {

constexpr Config kDefaults{};
constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiBytes = 1024 * 1024;

const char* power_of_two(std::int64_t v) {
  return (v > 0 && (v & (v - 1)) == 0) ? nullptr : "must be a power of two";
}

// Enum option lists map each name to its enumerator explicitly; the static_asserts below
// check them against config.h's name tables, so reordering either side fails to compile.
constexpr EnumOption kInitMethodOptions[] = {
    {"zero_write", static_cast<int>(InitMethod::kZeroWrite)},
    {"posix_fallocate", static_cast<int>(InitMethod::kPosixFallocate)},
    {"glibc_emulation", static_cast<int>(InitMethod::kGlibcEmulation)},
    {"sparse", static_cast<int>(InitMethod::kSparse)},
    {"fallocate_keep_size", static_cast<int>(InitMethod::kFallocateKeepSize)},
    {"none", static_cast<int>(InitMethod::kNone)},
    {"auto", static_cast<int>(InitMethod::kAuto)},
};
constexpr EnumOption kFallbackMethodOptions[] = {
    {"zero_write", static_cast<int>(FallbackMethod::kZeroWrite)},
    {"glibc_emulation", static_cast<int>(FallbackMethod::kGlibcEmulation)},
    {"error", static_cast<int>(FallbackMethod::kError)},
};
constexpr EnumOption kSyncMethodOptions[] = {
    {"fdatasync", static_cast<int>(SyncMethod::kFdatasync)},
    {"fsync", static_cast<int>(SyncMethod::kFsync)},
    {"open_datasync", static_cast<int>(SyncMethod::kOpenDatasync)},
    {"open_sync", static_cast<int>(SyncMethod::kOpenSync)},
};
constexpr EnumOption kFillIoClassOptions[] = {
    {"best_effort", static_cast<int>(FillIoClass::kBestEffort)},
    {"idle", static_cast<int>(FillIoClass::kIdle)},
};
constexpr EnumOption kIoMethodOptions[] = {
    {"pwrite", static_cast<int>(IoMethod::kPwrite)},
    {"io_uring", static_cast<int>(IoMethod::kIoUring)},
};

template <std::size_t N, std::size_t M>
constexpr bool options_match(const EnumOption (&options)[N],
                             const std::array<std::string_view, M>& names, int last_enumerator) {
  if (N != M || static_cast<std::size_t>(last_enumerator) + 1 != M) return false;
  for (const auto& o : options)
    if (o.value < 0 || static_cast<std::size_t>(o.value) >= M || names[o.value] != o.name)
      return false;
  return true;
}
static_assert(options_match(kInitMethodOptions, kInitMethodNames, static_cast<int>(InitMethod::kAuto)),
              "walseg.init_method options differ from kInitMethodNames");
static_assert(options_match(kFallbackMethodOptions, kFallbackMethodNames,
                            static_cast<int>(FallbackMethod::kError)),
              "walseg.fallocate_fallback options differ from kFallbackMethodNames");
static_assert(options_match(kSyncMethodOptions, kSyncMethodNames, static_cast<int>(SyncMethod::kOpenSync)),
              "walseg.sync_method options differ from kSyncMethodNames");
static_assert(options_match(kFillIoClassOptions, kFillIoClassNames, static_cast<int>(FillIoClass::kIdle)),
              "walseg.fill_io_class options differ from kFillIoClassNames");
static_assert(options_match(kIoMethodOptions, kIoMethodNames, static_cast<int>(IoMethod::kIoUring)),
              "walseg.io_method options differ from kIoMethodNames");

constexpr std::array<SettingDef, 14> kSettings = {{
    {kSegmentSize, Context::kPostmaster, "Size of each WAL segment file.",
     IntSpec{.default_value = static_cast<std::int64_t>(kDefaults.segment_size_bytes) / kKiB,
             .min = 1024, .max = 1024 * 1024, .unit = Unit::kKilobytes, .check = power_of_two}},
    {kInitMethod, Context::kUser, "How a new segment file is brought to its full size.",
     EnumSpec{kInitMethodOptions, static_cast<int>(kDefaults.init_method)}},
    {kFallocateFallback, Context::kUser,
     "What posix_fallocate falls back to when the file system does not support it.",
     EnumSpec{kFallbackMethodOptions, static_cast<int>(kDefaults.fallocate_fallback)}},
    {kRecycle, Context::kUser, "Recycles segment files by renaming them.",
     BoolSpec{kDefaults.recycle}},
    {kMinSize, Context::kSighup, "Sets the minimum size to shrink the WAL to.",
     IntSpec{.default_value = static_cast<std::int64_t>(kDefaults.min_size_bytes) / kMiBytes,
             .min = 2, .max = INT_MAX, .unit = Unit::kMegabytes}},
    {kMaxSize, Context::kSighup, "Sets the WAL size that triggers removal of old segments.",
     IntSpec{.default_value = static_cast<std::int64_t>(kDefaults.max_size_bytes) / kMiBytes,
             .min = 2, .max = INT_MAX, .unit = Unit::kMegabytes}},
    {kPreallocSegments, Context::kSighup, "Number of segment files kept ready ahead of need.",
     IntSpec{.default_value = kDefaults.prealloc_segments, .min = 0, .max = 1024}},
    {kFillIoClass, Context::kSighup, "I/O scheduling class of background segment fills.",
     EnumSpec{kFillIoClassOptions, static_cast<int>(kDefaults.fill_io_class)}},
    {kSyncMethod, Context::kSighup, "Selects the method used for forcing WAL updates to disk.",
     EnumSpec{kSyncMethodOptions, static_cast<int>(kDefaults.sync_method)}},
    {kCommitDelay, Context::kUser,
     "Sets the longest wait, in microseconds, of a group commit for its group to gather.",
     IntSpec{.default_value = kDefaults.commit_delay_us, .min = 0, .max = 100000}},
    {kIoMethod, Context::kPostmaster, "Selects the method for writing WAL.",
     EnumSpec{kIoMethodOptions, static_cast<int>(kDefaults.io_method)}},
    {kDirectIo, Context::kPostmaster, "Writes WAL with O_DIRECT, bypassing the page cache.",
     BoolSpec{kDefaults.direct_io}},
    {kBlockSize, Context::kPostmaster, "Size of a WAL page.",
     IntSpec{.default_value = kDefaults.block_size_bytes, .min = 1024, .max = 65536,
             .unit = Unit::kBytes, .check = power_of_two}},
    {kWalBuffers, Context::kPostmaster,
     "Sets the memory used for WAL records not yet written to disk.",
     IntSpec{.default_value = static_cast<std::int64_t>(kDefaults.wal_buffers_bytes) / kKiB,
             .min = 32, .max = 2 * 1024 * 1024, .unit = Unit::kKilobytes}},
}};

constexpr const IntSpec& int_spec(std::string_view name) {
  for (const auto& def : kSettings)
    if (def.name == name) return std::get<IntSpec>(def.spec);
  throw std::logic_error("no such setting");
}
// Defaults must be whole base units, and every range must fit the Config field it fills.
static_assert(kDefaults.segment_size_bytes % kKiB == 0 && kDefaults.wal_buffers_bytes % kKiB == 0);
static_assert(kDefaults.min_size_bytes % kMiBytes == 0 && kDefaults.max_size_bytes % kMiBytes == 0);
static_assert(int_spec(kPreallocSegments).max <= std::numeric_limits<int>::max());
static_assert(int_spec(kBlockSize).max <= std::numeric_limits<std::uint32_t>::max());
static_assert(int_spec(kCommitDelay).max <= std::numeric_limits<std::uint32_t>::max());
static_assert(int_spec(kMaxSize).max <= std::numeric_limits<std::int64_t>::max() / kMiBytes);

ConfigError cross_error(std::string_view param, std::string message, std::string hint) {
  ConfigError e;
  e.kind = ErrorKind::kCrossCheck;
  e.parameter = std::string(param);
  e.message = std::move(message);
  e.hint = std::move(hint);
  return e;
}

}  // namespace

std::span<const SettingDef> walseg_settings() { return kSettings; }

std::vector<ConfigError> check_walseg_settings(const Registry& r) {
  std::vector<ConfigError> errors;
  Config c = make_config(r);
  auto at_least = [](std::string_view param, std::uint64_t bytes, std::int64_t unit, Unit u) {
    // Rounded up to the parameter's unit so that following the hint always works.
    auto v = static_cast<std::int64_t>((bytes + static_cast<std::uint64_t>(unit) - 1) /
                                       static_cast<std::uint64_t>(unit));
    return fmt::format("Set \"{}\" to at least {}.", param, format_int(v, u));
  };
  if (c.min_size_bytes < 2 * c.segment_size_bytes)
    errors.push_back(cross_error(
        kMinSize, fmt::format("\"{}\" must be at least twice \"{}\"", kMinSize, kSegmentSize),
        at_least(kMinSize, 2 * c.segment_size_bytes, kMiBytes, Unit::kMegabytes)));
  if (c.max_size_bytes < c.min_size_bytes)
    errors.push_back(cross_error(
        kMaxSize, fmt::format("\"{}\" must be at least \"{}\"", kMaxSize, kMinSize),
        at_least(kMaxSize, c.min_size_bytes, kMiBytes, Unit::kMegabytes)));
  if (c.wal_buffers_bytes < 4 * std::uint64_t{c.block_size_bytes})
    errors.push_back(cross_error(
        kWalBuffers,
        fmt::format("\"{}\" must be at least four times \"{}\"", kWalBuffers, kBlockSize),
        at_least(kWalBuffers, 4 * std::uint64_t{c.block_size_bytes}, kKiB, Unit::kKilobytes)));
  return errors;
}

Registry make_walseg_registry() {
  return Registry(walseg_settings(), kWalsegPrefix, check_walseg_settings);
}

Config make_config(const Registry& r) {
  // The registry has range-checked every value, and the static_asserts above show each range
  // fits its field, so these conversions cannot lose anything.
  Config c;
  c.segment_size_bytes = static_cast<std::uint64_t>(r.get_int(kSegmentSize)) * kKiB;
  c.init_method = static_cast<InitMethod>(r.get_enum(kInitMethod));
  c.fallocate_fallback = static_cast<FallbackMethod>(r.get_enum(kFallocateFallback));
  c.recycle = r.get_bool(kRecycle);
  c.min_size_bytes = static_cast<std::uint64_t>(r.get_int(kMinSize)) * kMiBytes;
  c.max_size_bytes = static_cast<std::uint64_t>(r.get_int(kMaxSize)) * kMiBytes;
  c.prealloc_segments = static_cast<int>(r.get_int(kPreallocSegments));
  c.fill_io_class = static_cast<FillIoClass>(r.get_enum(kFillIoClass));
  c.sync_method = static_cast<SyncMethod>(r.get_enum(kSyncMethod));
  c.commit_delay_us = static_cast<std::uint32_t>(r.get_int(kCommitDelay));
  c.io_method = static_cast<IoMethod>(r.get_enum(kIoMethod));
  c.direct_io = r.get_bool(kDirectIo);
  c.block_size_bytes = static_cast<std::uint32_t>(r.get_int(kBlockSize));
  c.wal_buffers_bytes = static_cast<std::uint64_t>(r.get_int(kWalBuffers)) * kKiB;
  return c;
}

}  // namespace walseg::guc
