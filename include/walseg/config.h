// Config: the typed, immutable snapshot of walseg's settings that the library reads, and the
// enums behind the enum-valued settings. The settings registry (guc layer) builds a Config from
// defaults, settings files, the command line and SET; nothing below the guc layer reads settings
// any other way.
//
// Each enum has a name table (kInitMethodNames, ...) in declaration order, also reachable as
// kEnumNames<Enum>; the guc layer's definitions static_assert that every enum setting's
// option list matches the table of the enum its Config member has.
// Thread-safety: a Config is a plain value; copy it freely.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace walseg {

/// How a new segment file is brought to size (walseg.init_method).
enum class InitMethod {
  kZeroWrite,          ///< write zeros over the whole segment (PostgreSQL wal_init_zero = on)
  kPosixFallocate,     ///< fallocate(2) mode 0: blocks reserved as unwritten extents
  kGlibcEmulation,     ///< one zero byte per filesystem block, as glibc emulates posix_fallocate
  kSparse,             ///< one byte at the end (PostgreSQL wal_init_zero = off)
  kFallocateKeepSize,  ///< fallocate(FALLOC_FL_KEEP_SIZE): blocks reserved, size stays 0
  kNone,               ///< empty file that grows by appends (MariaDB's redo log since 10.8)
  kAuto,               ///< chosen by measurement per directory (segment manager)
};
inline constexpr std::array<std::string_view, 7> kInitMethodNames = {
    "zero_write", "posix_fallocate", "glibc_emulation", "sparse",
    "fallocate_keep_size", "none", "auto"};

/// Append mode: segments start empty and grow with each write (none, fallocate_keep_size), so
/// a segment shorter than walseg.segment_size is normal.
constexpr bool append_mode(InitMethod m) { return m == InitMethod::kNone || m == InitMethod::kFallocateKeepSize; }

/// The method leaves a file of the full segment size that reads as zeros until written
/// (zero_write, posix_fallocate, glibc_emulation, sparse): what PostgreSQL's pg_wal needs, and
/// what lets a writer write only its new bytes into a fresh segment. False for append mode
/// and for auto (not a method until resolved).
constexpr bool makes_full_size_segments(InitMethod m) { return m != InitMethod::kAuto && !append_mode(m); }

/// What posix_fallocate falls back to when the filesystem says "not supported"
/// (walseg.fallocate_fallback).
enum class FallbackMethod { kZeroWrite, kGlibcEmulation, kError };
inline constexpr std::array<std::string_view, 3> kFallbackMethodNames = {
    "zero_write", "glibc_emulation", "error"};

/// walseg.sync_method, as PostgreSQL's wal_sync_method.
enum class SyncMethod { kFdatasync, kFsync, kOpenDatasync, kOpenSync };
inline constexpr std::array<std::string_view, 4> kSyncMethodNames = {
    "fdatasync", "fsync", "open_datasync", "open_sync"};

/// walseg.io_method, as PostgreSQL 18's io_method.
enum class IoMethod { kPwrite, kIoUring };
inline constexpr std::array<std::string_view, 2> kIoMethodNames = {"pwrite", "io_uring"};

/// walseg.fill_io_class: the I/O scheduling class (ioprio_set(2)) of background segment fills,
/// as RocksDB's Env::LowerThreadPoolIOPriority for its background threads.
enum class FillIoClass { kBestEffort, kIdle };
inline constexpr std::array<std::string_view, 2> kFillIoClassNames = {"best_effort", "idle"};

// Each name table has one name per enumerator: the last enumerator's index is its size - 1.
static_assert(kInitMethodNames.size() == static_cast<std::size_t>(InitMethod::kAuto) + 1);
static_assert(kFallbackMethodNames.size() == static_cast<std::size_t>(FallbackMethod::kError) + 1);
static_assert(kSyncMethodNames.size() == static_cast<std::size_t>(SyncMethod::kOpenSync) + 1);
static_assert(kIoMethodNames.size() == static_cast<std::size_t>(IoMethod::kIoUring) + 1);
static_assert(kFillIoClassNames.size() == static_cast<std::size_t>(FillIoClass::kIdle) + 1);

/// The name table of enum E, for code generic over the enums (the settings table checks its
/// enum option lists against these). Empty for a type that has none.
template <typename E>
inline constexpr std::span<const std::string_view> kEnumNames = {};
template <>
inline constexpr std::span<const std::string_view> kEnumNames<InitMethod> = kInitMethodNames;
template <>
inline constexpr std::span<const std::string_view> kEnumNames<FallbackMethod> = kFallbackMethodNames;
template <>
inline constexpr std::span<const std::string_view> kEnumNames<SyncMethod> = kSyncMethodNames;
template <>
inline constexpr std::span<const std::string_view> kEnumNames<IoMethod> = kIoMethodNames;
template <>
inline constexpr std::span<const std::string_view> kEnumNames<FillIoClass> = kFillIoClassNames;

template <typename Enum, std::size_t N>
constexpr std::string_view enum_name(Enum e, const std::array<std::string_view, N>& names) {
  return names[static_cast<std::size_t>(e)];
}
/// Exact (case-sensitive) lookup of an enum by its name; nullopt if unknown.
template <typename Enum, std::size_t N>
constexpr std::optional<Enum> enum_from_name(std::string_view s,
                                             const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<Enum>(i);
  return std::nullopt;
}

inline std::string_view to_string(InitMethod m) { return enum_name(m, kInitMethodNames); }
inline std::string_view to_string(FallbackMethod m) { return enum_name(m, kFallbackMethodNames); }
inline std::string_view to_string(SyncMethod m) { return enum_name(m, kSyncMethodNames); }
inline std::string_view to_string(IoMethod m) { return enum_name(m, kIoMethodNames); }
inline std::string_view to_string(FillIoClass c) { return enum_name(c, kFillIoClassNames); }

inline constexpr std::uint64_t kMiB = 1024 * 1024;

/// The effective settings. Sizes are bytes. Defaults are PostgreSQL's where it has the setting.
struct Config {
  std::uint64_t segment_size_bytes = 16 * kMiB;        ///< walseg.segment_size
  InitMethod init_method = InitMethod::kZeroWrite;     ///< walseg.init_method
  FallbackMethod fallocate_fallback = FallbackMethod::kZeroWrite;  ///< walseg.fallocate_fallback
  bool recycle = true;                                 ///< walseg.recycle
  std::uint64_t min_size_bytes = 80 * kMiB;            ///< walseg.min_size
  std::uint64_t max_size_bytes = 1024 * kMiB;          ///< walseg.max_size
  int prealloc_segments = 2;                           ///< walseg.prealloc_segments
  FillIoClass fill_io_class = FillIoClass::kBestEffort;  ///< walseg.fill_io_class
  SyncMethod sync_method = SyncMethod::kFdatasync;     ///< walseg.sync_method
  /// walseg.commit_delay, microseconds: how long a group commit leader may wait, before it
  /// writes and syncs, for as many flush() callers as its previous sync served, and never
  /// longer than that sync took (WalWriter::flush). PostgreSQL's commit_delay is 0 by default
  /// because there it is a fixed sleep; here the wait ends as soon as the group is in, and
  /// never starts for a lone committer.
  std::uint32_t commit_delay_us = 150;
  IoMethod io_method = IoMethod::kPwrite;              ///< walseg.io_method
  /// walseg.direct_io: the WAL writer opens segments with O_DIRECT, as PostgreSQL 16's
  /// debug_io_direct = wal (and PostgreSQL 15's open_datasync at wal_level = minimal).
  bool direct_io = false;
  std::uint32_t block_size_bytes = 8192;               ///< walseg.block_size
  std::uint64_t wal_buffers_bytes = 16 * kMiB;         ///< walseg.wal_buffers
  /// walseg.durable_lsn_interval, milliseconds: while a Wal is open, the longest time between
  /// two moves of walseg.control's durable LSN up to the flushed LSN (wal.h). 0 (tests only:
  /// the setting's range starts at 1): it moves only at open, at a checkpoint or clean end, and
  /// at retire (truncate_before).
  std::uint32_t durable_lsn_interval_ms = 1000;
};

}  // namespace walseg
