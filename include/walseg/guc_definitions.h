// walseg's settings: the table (one entry per setting, in src/guc/definitions.cpp), the rules
// across settings, and the typed Config snapshot built from a registry over that table.
//
// Base units (what a number written without a unit means), ranges, and where each applies
// (tool: only the walseg tool; both: the tool and the PostgreSQL extension, which registers
// only these with PostgreSQL):
//
//   setting                    type     base unit  range                   default     context    hosts
//   walseg.segment_size        integer  kB         1024 .. 1048576, 2^n    16MB        postmaster tool
//   walseg.init_method         enum                zero_write, ...         zero_write  user       both
//   walseg.fallocate_fallback  enum                zero_write, ...         zero_write  user       both
//   walseg.recycle             bool                                        on          user       tool
//   walseg.min_size            integer  MB         2 .. 2147483647         80MB        sighup     tool
//   walseg.max_size            integer  MB         2 .. 2147483647         1GB         sighup     tool
//   walseg.prealloc_segments   integer  (none)     0 .. 1024               2           sighup     both
//   walseg.fill_io_class       enum                best_effort, idle       best_effort sighup     both
//   walseg.sync_method         enum                fdatasync, ...          fdatasync   sighup     tool
//   walseg.commit_delay        integer  (none, us) 0 .. 100000             150         user       tool
//   walseg.io_method           enum                pwrite, io_uring        pwrite      postmaster tool
//   walseg.direct_io           bool                                        off         postmaster tool
//   walseg.block_size          integer  B          1024 .. 65536, 2^n      8kB         postmaster tool
//   walseg.wal_buffers         integer  kB         32 .. 2097152           16MB        postmaster tool
//   walseg.durable_lsn_interval integer ms         1 .. 3600000            1s          postmaster tool
//
// Why these units: min_size and max_size use MB as PostgreSQL's min_wal_size/max_wal_size do;
// block_size uses bytes because PostgreSQL shows its block sizes in bytes (8192);
// segment_size and wal_buffers use kB like most PostgreSQL memory settings. The ranges make
// the classic mistakes fail loudly instead of silently: `segment_size = 16777216` (bytes
// meant) is 16 GB in kB and out of range, `segment_size = 16` (MB meant) is 16 kB and out of
// range, `block_size = 8` (kB meant) is 8 bytes and out of range. wal_buffers deliberately
// does not count in pages as PostgreSQL's does: the page size is itself a setting here.
// commit_delay counts microseconds without a unit, as PostgreSQL's commit_delay does (its unit
// system has none below ms), with the same range.
// Contexts: segment size, block size, I/O method and buffer size shape memory and files made
// at start (postmaster); init method, fallback, recycling and commit_delay may change per
// session as PostgreSQL's wal_init_zero/wal_recycle/commit_delay (SUSET) do; the rest follow a
// reload (sighup).
// Hosts: inside PostgreSQL walseg only makes future segments, so the extension uses how a
// segment is made (init_method, fallocate_fallback), how many are kept ahead
// (prealloc_segments) and the fills' I/O class; for the rest PostgreSQL has its own settings
// (wal_segment_size, wal_recycle, min_wal_size, ...) or the setting concerns the tool's own
// writer (io_method, direct_io), so showing walseg's value there would mislead.
//
// Defaults that follow another setting (derive_walseg_defaults, as initdb writes them):
//   min_size 5 and max_size 64 segments of segment_size, unless set.
// Rules across settings, checked at start and after a reload (guc_load.h):
//   min_size >= 2 * segment_size (PostgreSQL's rule for min_wal_size), max_size >= min_size,
//   wal_buffers >= 4 * block_size (PostgreSQL's minimum of four WAL pages).
//
// Not for: the PostgreSQL extension's registration of the `both` entries (contrib/walseg,
// which reads each entry's hosts and postgres_note from this table).
// Thread-safety: the table is immutable; make_walseg_registry returns an independent value.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "walseg/config.h"
#include "walseg/guc_registry.h"

namespace walseg::guc {

inline constexpr std::string_view kWalsegPrefix = "walseg.";

/// The settings' names (with the prefix), for code that looks one up: a name, not a value.
namespace names {
inline constexpr std::string_view kSegmentSize = "walseg.segment_size";
inline constexpr std::string_view kInitMethod = "walseg.init_method";
inline constexpr std::string_view kFallocateFallback = "walseg.fallocate_fallback";
inline constexpr std::string_view kRecycle = "walseg.recycle";
inline constexpr std::string_view kMinSize = "walseg.min_size";
inline constexpr std::string_view kMaxSize = "walseg.max_size";
inline constexpr std::string_view kPreallocSegments = "walseg.prealloc_segments";
inline constexpr std::string_view kFillIoClass = "walseg.fill_io_class";
inline constexpr std::string_view kSyncMethod = "walseg.sync_method";
inline constexpr std::string_view kCommitDelay = "walseg.commit_delay";
inline constexpr std::string_view kIoMethod = "walseg.io_method";
inline constexpr std::string_view kDirectIo = "walseg.direct_io";
inline constexpr std::string_view kBlockSize = "walseg.block_size";
inline constexpr std::string_view kWalBuffers = "walseg.wal_buffers";
inline constexpr std::string_view kDurableLsnInterval = "walseg.durable_lsn_interval";
}  // namespace names

/// The table, in the order SHOW ALL lists it. Static storage. Every entry fills one Config
/// member (SettingDef::field), and every Config member is filled by one entry.
std::span<const SettingDef> walseg_settings();

/// The cross-setting rules above, one error (kCrossCheck) per broken rule.
std::vector<ConfigError> check_walseg_settings(const Registry& registry);

/// Defaults that follow walseg.segment_size, as initdb sets them for its --wal-segsize:
/// walseg.min_size 5 segments, walseg.max_size 64 segments (80MB and 1GB for 16MB), unless a
/// file, -c or SET gives them.
void derive_walseg_defaults(Registry& registry);

/// A registry over walseg_settings() with prefix "walseg.", check_walseg_settings and
/// derive_walseg_defaults.
Registry make_walseg_registry();

/// The snapshot the library reads: each entry's effective value stored into its Config member
/// (sizes converted to bytes). `registry` must be a walseg registry, one over
/// walseg_settings() (else std::logic_error).
Config make_config(const Registry& registry);

}  // namespace walseg::guc
