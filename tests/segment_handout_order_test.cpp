#define BOOST_TEST_MODULE segment_handout_order
#include <boost/test/unit_test.hpp>

// Case C29 (a newly installed segment used before its name is durable), library side: on the
// io layer's mutation record of a whole Wal run (manager and writer), every write under a final
// segment name comes after a successful directory fsync that was called after the rename that
// put the file under that name. Otherwise a power cut could keep the bytes the writer
// acknowledged under the old (temporary or recycled) name, where recovery never looks. Checked
// for each way a segment reaches the writer: made ahead by the preallocator, made on demand on
// the writer's thread, and recycled from a retired one.
//
// Not covered here: the extension's side of C29 (the worker installs, recycles and removes
// nothing while PostgreSQL is in recovery). contrib/walseg/segment_create.c returns before
// choosing any job when RecoveryInProgress() and walseg_prealloc() refuses in recovery, but
// no test runs a standby yet: it needs a primary, an archive and a standby with the extension
// installed into the machine's PostgreSQL. The worker never recycles or removes segments
// (PostgreSQL does), so only installs could collide with restored files.

#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "wal_writer_fixture.h"
#include "walseg/io_record.h"
#include "walseg/segment_name.h"
#include "walseg/wal.h"

using namespace walseg;
using namespace walseg_test;
using io_record::Event;
using io_record::Op;

namespace {

struct OrderFixture : WalWriterFixture {
  ~OrderFixture() { io_record::stop(); }
};

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// What a check of the record found: the segment names written, and every write to a final
// segment name that came before its install was durable.
struct OrderReport {
  std::set<std::string> written;
  std::vector<std::string> violations;
};

// For each write to a final segment name: the rename (or link) that installed that name, and a
// successful directory fsync called after it, must both lie before the write. Names in
// `before` were installed before recording began and are not checked until installed again.
OrderReport check_writes_follow_durable_installs(const std::vector<Event>& ev,
                                                 const std::set<std::string>& before = {}) {
  OrderReport rep;
  std::map<std::string, std::size_t> installed_at;  // name -> index of its install's rename
  std::map<std::string, bool> durable;              // name -> a dir fsync covered the rename
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const Event& e = ev[i];
    if (e.result_errno != 0) continue;
    if (e.op == Op::kRename || e.op == Op::kLink) {
      const std::string n = base_name(e.path2);
      installed_at[n] = i;
      durable[n] = false;
    } else if (e.op == Op::kDirFsync) {
      for (auto& [n, at] : installed_at)
        if (at < e.covers_before) durable[n] = true;
    } else if (e.op == Op::kWrite) {
      const std::string n = base_name(e.path);
      if (!looks_like_segment_name(n) || (before.count(n) && !installed_at.count(n))) continue;
      rep.written.insert(n);
      if (!installed_at.count(n))
        rep.violations.push_back(fmt::format("event {}: write to {} that was never installed", i, n));
      else if (!durable[n])
        rep.violations.push_back(fmt::format("event {}: write of {} bytes at {} to {} before the directory "
                                             "fsync of its install (event {}) returned",
                                             i, e.length, e.offset, n, installed_at[n]));
    }
  }
  return rep;
}

void check_order(const std::vector<Event>& ev, std::size_t min_written, const std::set<std::string>& before = {}) {
  const OrderReport rep = check_writes_follow_durable_installs(ev, before);
  for (const auto& v : rep.violations) BOOST_TEST(false, v);
  BOOST_TEST(rep.violations.empty());
  BOOST_TEST(rep.written.size() >= min_written);
}

Event ev_of(Op op, std::string path, std::string path2 = "", std::uint64_t covers_before = 0) {
  Event e;
  e.op = op;
  e.path = std::move(path);
  e.path2 = std::move(path2);
  e.covers_before = covers_before;
  e.length = 8192;
  return e;
}

/// Appends 3000-byte seq_payload records (numbered from seq on) until the insert position
/// reaches `until`, then flushes them all.
void commit_until(WalWriter& w, std::uint64_t& seq, Lsn until) {
  Lsn end = 0;
  while (w.insert_lsn() < until) end = w.append(seq_payload(seq++, 3000));
  w.flush(end);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(segment_handout_order, OrderFixture)

BOOST_AUTO_TEST_CASE(C29_preallocated_segments_are_written_only_after_their_install_is_durable) {
  cfg.prealloc_segments = 2;
  io_record::start();
  {
    auto wal = Wal::open(dir.path(), cfg);
    WalWriter& w = wal->writer();
    wal->manager().wait_ready(2, std::chrono::seconds(60));
    Lsn end = 0;
    std::uint64_t seq = 0;
    while (w.insert_lsn() < 4 * kSegBytes) {
      end = w.append(seq_payload(seq++, 3000));
      if (seq % 50 == 0) w.flush(end);
    }
    w.flush(end);
    // The preallocator's path was taken: segments were made that no writer waited for (at the
    // end the pool may be empty and nothing have stalled, so ready_ahead proves nothing).
    const auto st = wal->manager().stats();
    std::uint64_t created = 0;
    for (const auto& [method, n] : st.created_by_method) created += n;
    BOOST_TEST(created > st.stalls, created << " created, " << st.stalls << " stalls");
  }
  check_order(io_record::stop(), 4);
}

BOOST_AUTO_TEST_CASE(C29_segments_made_on_demand_are_written_only_after_their_install_is_durable) {
  cfg.prealloc_segments = 0;  // every next segment is made on the writer's thread
  io_record::start();
  {
    auto wal = Wal::open(dir.path(), cfg);
    std::uint64_t seq = 0;
    commit_until(wal->writer(), seq, 4 * kSegBytes);
    BOOST_TEST(wal->manager().stats().stalls >= 3u);  // the on-demand path was taken
  }
  check_order(io_record::stop(), 4);
}

BOOST_AUTO_TEST_CASE(C29_recycled_segments_are_written_only_after_their_rename_is_durable) {
  cfg.prealloc_segments = 0;
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  std::uint64_t seq = 0;
  commit_until(w, seq, 4 * kSegBytes);
  std::set<std::string> before;
  for (const auto& n : list_names(dir.path()))
    if (looks_like_segment_name(n)) before.insert(n);
  io_record::start();
  w.truncate_before(w.flushed_lsn());  // segments 1..3 are renamed to future names
  BOOST_REQUIRE(wal->manager().stats().recycled >= 1u);
  commit_until(w, seq, 7 * kSegBytes);
  std::vector<Event> ev = io_record::stop();
  std::size_t recycled_renames = 0;
  for (const Event& e : ev)
    if (e.op == Op::kRename && looks_like_segment_name(base_name(e.path))) ++recycled_renames;
  BOOST_TEST(recycled_renames >= 1u);
  // The segment being written when recording started was installed before it.
  check_order(ev, 2, before);
}

// The check's own sensitivity: a write between the rename and the directory fsync, and a
// write to a name never installed, are both found.
BOOST_AUTO_TEST_CASE(C29_the_order_check_finds_a_write_before_the_directory_fsync) {
  const std::string seg = "/d/000000010000000000000002";
  std::vector<Event> early = {ev_of(Op::kRename, "/d/xlogtemp.1.0", seg), ev_of(Op::kWrite, seg),
                              ev_of(Op::kDirFsync, "/d", "", 2)};
  BOOST_TEST(check_writes_follow_durable_installs(early).violations.size() == 1u);
  std::vector<Event> ok = {ev_of(Op::kRename, "/d/xlogtemp.1.0", seg), ev_of(Op::kDirFsync, "/d", "", 1),
                           ev_of(Op::kWrite, seg)};
  BOOST_TEST(check_writes_follow_durable_installs(ok).violations.empty());
  // A directory fsync that began before the rename does not cover it.
  std::vector<Event> racing = {ev_of(Op::kRename, "/d/xlogtemp.1.0", seg), ev_of(Op::kDirFsync, "/d", "", 0),
                               ev_of(Op::kWrite, seg)};
  BOOST_TEST(check_writes_follow_durable_installs(racing).violations.size() == 1u);
  std::vector<Event> never = {ev_of(Op::kWrite, seg)};
  BOOST_TEST(check_writes_follow_durable_installs(never).violations.size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
