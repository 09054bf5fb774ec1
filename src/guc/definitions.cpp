// walseg's settings table (include/walseg/guc_definitions.h explains units, contexts and hosts).
// Defaults come from walseg::Config's member initialisers so they are written once; each entry
// names the Config member it fills, and make_config is a loop over the table.
#include "walseg/guc_definitions.h"

#include <array>
#include <climits>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

namespace walseg::guc {

namespace {

constexpr Config kDefaults{};
constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiBytes = 1024 * 1024;

const char* power_of_two(std::int64_t v) {
  return (v > 0 && (v & (v - 1)) == 0) ? nullptr : "must be a power of two";
}

// Enum option lists map each name to its enumerator explicitly; the static_asserts after the
// table check them against config.h's name tables, so reordering either side fails to compile.
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

// ---- Config members: how an entry's value reaches the snapshot ----

template <auto Member>
using MemberType = std::remove_cvref_t<decltype(std::declval<Config&>().*Member)>;

// Bytes per base unit for memory units; other units (and none) are stored as they are.
constexpr std::int64_t bytes_per(Unit u) {
  switch (u) {
    case Unit::kKilobytes: return kKiB;
    case Unit::kMegabytes: return kMiBytes;
    default: return 1;
  }
}

// The registry has range-checked every value, and the static_asserts below show each range
// fits its member, so these conversions cannot lose anything.
template <auto Member>
void store_int(const Registry& r, const SettingDef& def, Config& c) {
  c.*Member = static_cast<MemberType<Member>>(r.get_int(def.name) *
                                              bytes_per(std::get<IntSpec>(def.spec).unit));
}
template <auto Member>
void store_bool(const Registry& r, const SettingDef& def, Config& c) {
  c.*Member = r.get_bool(def.name);
}
template <auto Member>
void store_enum(const Registry& r, const SettingDef& def, Config& c) {
  c.*Member = static_cast<MemberType<Member>>(r.get_enum(def.name));
}

// The ConfigField of a Config member, chosen by the member's type.
template <auto Member>
constexpr ConfigField member() {
  using T = MemberType<Member>;
  if constexpr (std::is_same_v<T, bool>) {
    return {.kind = ConfigField::Kind::kBool, .store = &store_bool<Member>};
  } else if constexpr (std::is_enum_v<T>) {
    return {.kind = ConfigField::Kind::kEnum, .store = &store_enum<Member>,
            .enum_names = kEnumNames<T>};
  } else {
    static_assert(std::is_integral_v<T>, "a setting fills a bool, enum or integer member");
    return {.kind = ConfigField::Kind::kInteger, .store = &store_int<Member>,
            .min = static_cast<std::int64_t>(std::numeric_limits<T>::min()),
            .max = static_cast<std::uint64_t>(std::numeric_limits<T>::max())};
  }
}

// ---- the table ----

constexpr std::array<SettingDef, 15> kSettings = {{
    {.name = names::kSegmentSize, .context = Context::kPostmaster,
     .description = "Size of each WAL segment file.",
     .spec = IntSpec{.default_value = static_cast<std::int64_t>(kDefaults.segment_size_bytes) / kKiB,
                     .min = 1024, .max = 1024 * 1024, .unit = Unit::kKilobytes, .check = power_of_two},
     .field = member<&Config::segment_size_bytes>(),
     .postgres_note = "Inside PostgreSQL segments always have wal_segment_size bytes."},
    {.name = names::kInitMethod, .context = Context::kUser,
     .description = "How a new segment file is brought to its full size.",
     .spec = EnumSpec{kInitMethodOptions, static_cast<int>(kDefaults.init_method)},
     .field = member<&Config::init_method>(), .hosts = Hosts::kToolAndPostgres,
     .postgres_note = "Used by the preallocator and walseg_prealloc(). Inside PostgreSQL none and "
                      "fallocate_keep_size are refused: segments must have their full size."},
    {.name = names::kFallocateFallback, .context = Context::kUser,
     .description = "What posix_fallocate falls back to when the file system does not support it.",
     .spec = EnumSpec{kFallbackMethodOptions, static_cast<int>(kDefaults.fallocate_fallback)},
     .field = member<&Config::fallocate_fallback>(), .hosts = Hosts::kToolAndPostgres,
     .postgres_note = "Used by the preallocator and walseg_prealloc() when posix_fallocate is not "
                      "supported."},
    {.name = names::kRecycle, .context = Context::kUser,
     .description = "Recycles segment files by renaming them.",
     .spec = BoolSpec{kDefaults.recycle}, .field = member<&Config::recycle>(),
     .postgres_note = "Inside PostgreSQL wal_recycle applies."},
    {.name = names::kMinSize, .context = Context::kSighup,
     .description = "Sets the minimum size to shrink the WAL to.",
     .spec = IntSpec{.default_value = static_cast<std::int64_t>(kDefaults.min_size_bytes) / kMiBytes,
                     .min = 2, .max = INT_MAX, .unit = Unit::kMegabytes},
     .field = member<&Config::min_size_bytes>(),
     .postgres_note = "Inside PostgreSQL min_wal_size applies, also to the preallocator's horizon."},
    {.name = names::kMaxSize, .context = Context::kSighup,
     .description = "Sets the WAL size that triggers removal of old segments.",
     .spec = IntSpec{.default_value = static_cast<std::int64_t>(kDefaults.max_size_bytes) / kMiBytes,
                     .min = 2, .max = INT_MAX, .unit = Unit::kMegabytes},
     .field = member<&Config::max_size_bytes>(),
     .postgres_note = "Inside PostgreSQL max_wal_size applies and bounds how far ahead the "
                      "preallocator goes."},
    {.name = names::kPreallocSegments, .context = Context::kSighup,
     .description = "Number of segment files kept ready ahead of need.",
     .spec = IntSpec{.default_value = kDefaults.prealloc_segments, .min = 0, .max = 1024},
     .field = member<&Config::prealloc_segments>(), .hosts = Hosts::kToolAndPostgres,
     .postgres_note = "Future segments the preallocator keeps in pg_wal ahead of the insert "
                      "position, within max_wal_size."},
    {.name = names::kFillIoClass, .context = Context::kSighup,
     .description = "I/O scheduling class of background segment fills.",
     .spec = EnumSpec{kFillIoClassOptions, static_cast<int>(kDefaults.fill_io_class)},
     .field = member<&Config::fill_io_class>(), .hosts = Hosts::kToolAndPostgres,
     .postgres_note = "The preallocator applies it to its own fills; walseg_prealloc() runs in the "
                      "calling backend at that backend's class."},
    {.name = names::kSyncMethod, .context = Context::kSighup,
     .description = "Selects the method used for forcing WAL updates to disk.",
     .spec = EnumSpec{kSyncMethodOptions, static_cast<int>(kDefaults.sync_method)},
     .field = member<&Config::sync_method>(),
     .postgres_note = "Inside PostgreSQL wal_sync_method applies."},
    {.name = names::kCommitDelay, .context = Context::kUser,
     .description = "Sets the longest wait, in microseconds, of a group commit for its group to gather.",
     .spec = IntSpec{.default_value = kDefaults.commit_delay_us, .min = 0, .max = 100000},
     .field = member<&Config::commit_delay_us>(),
     .postgres_note = "Inside PostgreSQL commit_delay and commit_siblings apply."},
    {.name = names::kIoMethod, .context = Context::kPostmaster,
     .description = "Selects the method for writing WAL.",
     .spec = EnumSpec{kIoMethodOptions, static_cast<int>(kDefaults.io_method)},
     .field = member<&Config::io_method>(),
     .postgres_note = "The walseg tool's WAL writer only: PostgreSQL writes its WAL itself."},
    {.name = names::kDirectIo, .context = Context::kPostmaster,
     .description = "Writes WAL with O_DIRECT, bypassing the page cache.",
     .spec = BoolSpec{kDefaults.direct_io}, .field = member<&Config::direct_io>(),
     .postgres_note = "The walseg tool's WAL writer only: PostgreSQL writes its WAL itself."},
    {.name = names::kBlockSize, .context = Context::kPostmaster, .description = "Size of a WAL page.",
     .spec = IntSpec{.default_value = kDefaults.block_size_bytes, .min = 1024, .max = 65536,
                     .unit = Unit::kBytes, .check = power_of_two},
     .field = member<&Config::block_size_bytes>(),
     .postgres_note = "Inside PostgreSQL the WAL page size is fixed at build time."},
    {.name = names::kWalBuffers, .context = Context::kPostmaster,
     .description = "Sets the memory used for WAL records not yet written to disk.",
     .spec = IntSpec{.default_value = static_cast<std::int64_t>(kDefaults.wal_buffers_bytes) / kKiB,
                     .min = 32, .max = 2 * 1024 * 1024, .unit = Unit::kKilobytes},
     .field = member<&Config::wal_buffers_bytes>(),
     .postgres_note = "Inside PostgreSQL wal_buffers applies."},
    {.name = names::kDurableLsnInterval, .context = Context::kPostmaster,
     .description = "Sets the longest time between updates of the durable LSN in walseg.control "
                    "while WAL is written.",
     // No 0 ("off") here: a value meant as more often (100us) would round to it and turn the
     // protection off (break-it round 5 F6); out of range instead. Config's 0 is for tests.
     .spec = IntSpec{.default_value = kDefaults.durable_lsn_interval_ms, .min = 1, .max = 3600000,
                     .unit = Unit::kMilliseconds},
     .field = member<&Config::durable_lsn_interval_ms>(),
     .postgres_note = "The walseg tool's WAL writer only: inside PostgreSQL checkpoints and "
                      "pg_control apply."},
}};

// ---- compile-time checks of the table against Config ----

// The option list maps each name to the enumerator that config.h's name table gives it.
constexpr bool options_match(const EnumSpec& spec, std::span<const std::string_view> names) {
  if (names.empty() || spec.options.size() != names.size()) return false;
  for (const auto& o : spec.options)
    if (o.value < 0 || static_cast<std::size_t>(o.value) >= names.size() || names[o.value] != o.name)
      return false;
  return true;
}

// The entry's type is the member's, and its values fit: each enum option list is its
// enum's, each integer range (converted to bytes for sizes) is inside the member's type.
constexpr bool fits_member(const SettingDef& def) {
  const ConfigField& f = def.field;
  if (f.store == nullptr) return false;
  if (const auto* e = std::get_if<EnumSpec>(&def.spec))
    return f.kind == ConfigField::Kind::kEnum && options_match(*e, f.enum_names);
  if (const auto* i = std::get_if<IntSpec>(&def.spec)) {
    const __int128 factor = bytes_per(i->unit);
    return f.kind == ConfigField::Kind::kInteger && i->min * factor >= f.min &&
           i->max * factor <= static_cast<__int128>(f.max) && i->default_value >= i->min &&
           i->default_value <= i->max;
  }
  return std::holds_alternative<BoolSpec>(def.spec) && f.kind == ConfigField::Kind::kBool;
}

constexpr bool every_entry_fits_its_member() {
  for (const auto& def : kSettings)
    if (!fits_member(def)) return false;
  return true;
}
// Distinct stores are distinct members: no member is filled twice. (That every member is
// filled at all is guc_definitions_test's: C++20 cannot count a struct's members.)
constexpr bool no_member_filled_twice() {
  for (std::size_t i = 0; i < kSettings.size(); ++i)
    for (std::size_t j = i + 1; j < kSettings.size(); ++j)
      if (kSettings[i].field.store == kSettings[j].field.store) return false;
  return true;
}
static_assert(every_entry_fits_its_member(),
              "a setting's type, enum option list (against config.h's name table) or range "
              "does not fit the Config member it fills");
static_assert(no_member_filled_twice(), "two settings fill the same Config member");
// And one assertion per enum option list, naming it.
constexpr const SettingDef& entry(std::string_view name) {
  for (const auto& def : kSettings)
    if (def.name == name) return def;
  throw std::logic_error("no such setting");
}
static_assert(fits_member(entry(names::kInitMethod)),
              "walseg.init_method options differ from kInitMethodNames");
static_assert(fits_member(entry(names::kFallocateFallback)),
              "walseg.fallocate_fallback options differ from kFallbackMethodNames");
static_assert(fits_member(entry(names::kSyncMethod)),
              "walseg.sync_method options differ from kSyncMethodNames");
static_assert(fits_member(entry(names::kFillIoClass)),
              "walseg.fill_io_class options differ from kFillIoClassNames");
static_assert(fits_member(entry(names::kIoMethod)),
              "walseg.io_method options differ from kIoMethodNames");
// Defaults must be whole base units: the table stores them in the base unit.
static_assert(kDefaults.segment_size_bytes % kKiB == 0 && kDefaults.wal_buffers_bytes % kKiB == 0);
static_assert(kDefaults.min_size_bytes % kMiBytes == 0 && kDefaults.max_size_bytes % kMiBytes == 0);

// initdb's DEFAULT_MIN_WAL_SEGS and DEFAULT_MAX_WAL_SEGS.
constexpr std::int64_t kDefaultMinSegments = 5;
constexpr std::int64_t kDefaultMaxSegments = 64;
static_assert(kDefaults.min_size_bytes == kDefaultMinSegments * kDefaults.segment_size_bytes &&
              kDefaults.max_size_bytes == kDefaultMaxSegments * kDefaults.segment_size_bytes);

ConfigError cross_error(std::string_view param, std::string_view other, std::string message, std::string hint) {
  ConfigError e;
  e.kind = ErrorKind::kCrossCheck;
  e.parameter = std::string(param);
  e.reads = {std::string(param), std::string(other)};
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
        names::kMinSize, names::kSegmentSize, fmt::format("\"{}\" must be at least twice \"{}\"", names::kMinSize, names::kSegmentSize),
        at_least(names::kMinSize, 2 * c.segment_size_bytes, kMiBytes, Unit::kMegabytes)));
  if (c.max_size_bytes < c.min_size_bytes)
    errors.push_back(cross_error(
        names::kMaxSize, names::kMinSize, fmt::format("\"{}\" must be at least \"{}\"", names::kMaxSize, names::kMinSize),
        at_least(names::kMaxSize, c.min_size_bytes, kMiBytes, Unit::kMegabytes)));
  if (c.wal_buffers_bytes < 4 * std::uint64_t{c.block_size_bytes})
    errors.push_back(cross_error(
        names::kWalBuffers, names::kBlockSize,
        fmt::format("\"{}\" must be at least four times \"{}\"", names::kWalBuffers, names::kBlockSize),
        at_least(names::kWalBuffers, 4 * std::uint64_t{c.block_size_bytes}, kKiB, Unit::kKilobytes)));
  return errors;
}

void derive_walseg_defaults(Registry& r) {
  // As initdb writes min_wal_size and max_wal_size for its --wal-segsize (DEFAULT_MIN_WAL_SEGS
  // and DEFAULT_MAX_WAL_SEGS): 80MB and 1GB for 16MB segments, so that a larger segment size
  // alone is a valid configuration.
  const std::int64_t segment_mb = r.get_int(names::kSegmentSize) * kKiB / kMiBytes;
  if (segment_mb == 0) return;  // below 1MB: refused by the segment size's own range
  r.set_default(names::kMinSize, fmt::format("{}MB", kDefaultMinSegments * segment_mb));
  r.set_default(names::kMaxSize, fmt::format("{}MB", kDefaultMaxSegments * segment_mb));
}

Registry make_walseg_registry() {
  return Registry(walseg_settings(), kWalsegPrefix, check_walseg_settings, derive_walseg_defaults);
}

Config make_config(const Registry& r) {
  // Another table's entries have other stores, or none: refuse rather than return defaults.
  if (r.definitions().data() != kSettings.data())
    throw std::logic_error("make_config needs a registry over walseg_settings()");
  Config c;
  for (const SettingDef& def : kSettings) def.field.store(r, def, c);
  return c;
}

}  // namespace walseg::guc
