// Helpers shared by the WAL writer tests (wal_writer_test, wal_writer_uring_test, _retire_test,
// wal_writer_failure_test, wal_crash_test): a small-segment Config, payloads that carry their
// own sequence number and can be checked for damage without remembering them, and a read-back
// of a WAL directory through WalReader (the independent check of what the writer wrote).
//
// Not for: production code. Header-only so that each <unit>_test.cpp stays one executable.
// Thread-safety: the functions are pure or per-call; fixtures are per test.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fs_test_util.h"
#include "walseg/config.h"
#include "walseg/error.h"
#include "walseg/wal.h"
#include "walseg/wal_encoder.h"
#include "walseg/wal_reader.h"

namespace walseg_test {

constexpr std::uint64_t kSegBytes = std::uint64_t{1} << 20;
constexpr std::uint32_t kBlockBytes = 8192;

/// 1 MB segments, zero-filled, a 256 kB ring (so it wraps), one segment prepared ahead.
inline walseg::Config writer_config(walseg::IoMethod io = walseg::IoMethod::kPwrite) {
  walseg::Config c;
  c.segment_size_bytes = kSegBytes;
  c.block_size_bytes = kBlockBytes;
  c.init_method = walseg::InitMethod::kZeroWrite;
  c.recycle = true;
  c.min_size_bytes = 2 * kSegBytes;
  c.max_size_bytes = 16 * kSegBytes;
  c.prealloc_segments = 1;
  c.sync_method = walseg::SyncMethod::kFdatasync;
  c.io_method = io;
  c.wal_buffers_bytes = 256 * 1024;
  // No durable-LSN thread: its control file writes would take armed failpoints and show in
  // recorded traces at times of the scheduler's choosing (wal_durable_mark_test turns it on).
  c.durable_lsn_interval_ms = 0;
  return c;
}

/// Payload of record `seq`: its first 8 bytes are seq (little-endian, cut short for payloads
/// under 8 bytes), the rest a xorshift stream seeded by seq and size, so any damaged, moved or
/// stale byte shows.
inline std::vector<std::byte> seq_payload(std::uint64_t seq, std::size_t size) {
  std::vector<std::byte> p(size);
  std::uint64_t x = (seq + 1) * 0x9E3779B97F4A7C15ull ^ size;
  for (std::size_t i = 0; i < size; ++i) {
    if (i < 8) {
      p[i] = static_cast<std::byte>((seq >> (8 * i)) & 0xFF);
      continue;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    p[i] = static_cast<std::byte>(x & 0xFF);
  }
  return p;
}

/// The sequence number of an intact seq_payload of at least 8 bytes, else nullopt.
inline std::optional<std::uint64_t> seq_of(std::span<const std::byte> payload) {
  if (payload.size() < 8) return std::nullopt;
  std::uint64_t seq = 0;
  for (int i = 7; i >= 0; --i) seq = (seq << 8) | static_cast<std::uint64_t>(payload[i]);
  auto want = seq_payload(seq, payload.size());
  if (std::memcmp(want.data(), payload.data(), payload.size()) != 0) return std::nullopt;
  return seq;
}

struct ReadRecord {
  walseg::Lsn lsn = 0;
  walseg::Lsn end_lsn = 0;
  std::vector<std::byte> payload;
};

struct WalContents {
  std::vector<ReadRecord> records;
  walseg::WalStop stop;
};

/// Every record of the WAL in dir as WalReader returns them: from walseg.control's oldest LSN
/// with its sizes and durable point when the directory has one, else from the first page of
/// its lowest segment (sizes given, so an empty directory reads as no records).
inline WalContents read_wal(const std::string& dir, const walseg::Config& cfg) {
  walseg::WalReaderOptions o;
  o.segment_size_bytes = cfg.segment_size_bytes;
  o.block_size_bytes = cfg.block_size_bytes;
  // As a user reads it: from where walseg.control says the WAL starts, when there is one.
  if (auto c = walseg::read_control(dir)) o = walseg::reader_options_for(*c);
  WalContents out;
  walseg::WalReader r = walseg::WalReader::open(dir, o);
  walseg::WalRecord rec;
  while (r.next(&rec))
    out.records.push_back(ReadRecord{rec.lsn, rec.end_lsn, {rec.payload.begin(), rec.payload.end()}});
  out.stop = r.stop();
  return out;
}

inline bool same_bytes(const std::vector<std::byte>& a, const std::vector<std::byte>& b) { return a == b; }

/// Concurrent-writer tests number thread t's i-th record thread_seq(t, i) (i below the stride).
inline constexpr std::uint64_t kThreadSeqStride = 1000000;
inline std::uint64_t thread_seq(std::uint64_t t, std::uint64_t i) { return t * kThreadSeqStride + i; }

/// got holds exactly threads x per_thread intact records numbered by thread_seq, each thread's
/// in the order it appended them (the order of appends across threads is free).
inline void check_each_thread_in_order(const WalContents& got, std::size_t threads, std::uint64_t per_thread) {
  BOOST_TEST(!got.stop.corruption);
  BOOST_REQUIRE_EQUAL(got.records.size(), threads * per_thread);
  std::vector<std::uint64_t> next(threads, 0);
  for (const ReadRecord& r : got.records) {
    auto seq = seq_of(r.payload);
    BOOST_REQUIRE_MESSAGE(seq, "damaged record at " << walseg::format_lsn(r.lsn));
    std::size_t t = static_cast<std::size_t>(*seq / kThreadSeqStride);
    BOOST_REQUIRE(t < threads);
    BOOST_TEST(*seq % kThreadSeqStride == next[t]);
    ++next[t];
  }
}

/// Appends records (remembering payload and returned end LSN) and checks them against a read-back.
struct Appended {
  std::vector<std::vector<std::byte>> payloads;
  std::vector<walseg::Lsn> ends;
  std::uint64_t next_seq = 0;

  walseg::Lsn add(walseg::WalWriter& w, std::size_t size) {
    payloads.push_back(seq_payload(next_seq++, size));
    ends.push_back(w.append(payloads.back()));
    return ends.back();
  }
  /// The WAL in dir holds exactly these records, in order, and ends cleanly after the last.
  void check_read_back(const std::string& dir, const walseg::Config& cfg) const {
    WalContents got = read_wal(dir, cfg);
    BOOST_TEST_MESSAGE("reader stopped: " << walseg::describe(got.stop));
    BOOST_REQUIRE_EQUAL(got.records.size(), payloads.size());
    for (std::size_t i = 0; i < payloads.size(); ++i) {
      BOOST_TEST_CONTEXT("record " << i << " of " << payloads[i].size() << " bytes") {
        BOOST_TEST(same_bytes(got.records[i].payload, payloads[i]));
        BOOST_TEST(got.records[i].end_lsn == ends[i]);
      }
    }
    BOOST_TEST(!got.stop.corruption);
    if (!ends.empty()) BOOST_TEST(got.stop.end_lsn == ends.back());
  }
};

/// Appends records until one ends exactly at `boundary` (found with reserve_record, the
/// encoder's own arithmetic); returns false if that cannot be reached from here.
inline bool fill_to(walseg::WalWriter& w, Appended& a, walseg::Lsn boundary) {
  walseg::EncoderParams p{kSegBytes, kBlockBytes, 1, 0};
  while (w.insert_lsn() + 3 * kBlockBytes < boundary) a.add(w, 2000);
  for (int tries = 0; tries < 20 && w.insert_lsn() < boundary; ++tries) {
    for (std::size_t size = 0; size < 4 * kBlockBytes; ++size)
      if (walseg::reserve_record(p, w.insert_lsn(), size, nullptr) == boundary) {
        a.add(w, size);
        return true;
      }
    a.add(w, 8);
  }
  return false;
}

/// Fixture: disarmed failpoints, a fresh directory under /var/tmp, log lines captured.
struct WalWriterFixture : FreshDirFixture {
  LogCapture logs;
  walseg::Config cfg = writer_config();
};

}  // namespace walseg_test
