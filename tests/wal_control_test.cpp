#define BOOST_TEST_MODULE wal_control
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/wal_control.h and the control file and ready stamp layouts of
// wal_format.h: bytes at their documented offsets, every kind of damage refused with its
// reason, the durable replace (temp + fsync + rename + directory fsync, in that order), and
// what the segment manager and Wal::open do with it: create it first, refuse settings it
// contradicts, move oldest_lsn before retiring, never start a writer below it.

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <fstream>
#include <cstring>
#include <vector>

#include "fs_test_util.h"
#include "wal_files_test_util.h"
#include "walseg/failpoint.h"
#include "walseg/io_trace.h"
#include "walseg/segment_manager.h"
#include "walseg/wal.h"

using namespace walseg;
using walseg_test::error_is;
using walseg_test::path_exists;

namespace {

constexpr std::uint64_t kSeg = std::uint64_t{1} << 20;

std::array<std::byte, kControlFileBytes> encoded(const WalControl& c) {
  std::array<std::byte, kControlFileBytes> b{};
  encode_control(c, b.data());
  return b;
}

std::string why_not(std::array<std::byte, kControlFileBytes> b) {
  std::string why;
  BOOST_TEST(!decode_control(b, &why).has_value());
  return why;
}

Config small_config() { return walseg_test::small_wal_config(kSeg, 2); }

SegmentManager::Options manager_options(const Config& c) {
  SegmentManager::Options o;
  o.config = c;
  o.background = false;
  return o;
}

struct ControlFixture : walseg_test::FreshDirFixture {
  walseg_test::TempDir dir;
  walseg_test::LogCapture logs;
};

}  // namespace

namespace {
// A failpoint call that writes `text` to a file outside the WAL directory and moves it onto
// `target`, as a user's mv would, at whatever step the failpoint marks.
failpoint::Spec move_onto(const std::string& outside, const std::string& target, const std::string& text) {
  failpoint::Spec move;
  move.kind = failpoint::Kind::kCall;
  move.call = [=] {
    std::ofstream(outside) << text;
    BOOST_REQUIRE(::rename(outside.c_str(), target.c_str()) == 0);
  };
  return move;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(format)

BOOST_AUTO_TEST_CASE(control_fields_sit_at_their_documented_offsets_little_endian) {
  WalControl c = walseg_test::test_control(16 * kSeg);
  c.timeline = 0x0A;
  c.append_mode = true;
  c.oldest_lsn = 0x0000000312000000;
  c.durable_lsn = 0x0000000312345678;
  c.epoch = 0x01020304;
  const auto b = encoded(c);
  const unsigned char* u = reinterpret_cast<const unsigned char*>(b.data());
  BOOST_TEST(std::memcmp(u, "WSCT", 4) == 0);
  BOOST_TEST(load_le32(b.data() + 4) == kControlVersion);
  BOOST_TEST(load_le64(b.data() + 8) == walseg_test::kTestSystemId);
  BOOST_TEST(load_le32(b.data() + 16) == 16 * kSeg);
  BOOST_TEST(load_le32(b.data() + 20) == 8192u);
  BOOST_TEST(load_le32(b.data() + 24) == 10u);
  BOOST_TEST(load_le32(b.data() + 28) == kControlAppendMode);
  BOOST_TEST(load_le64(b.data() + 32) == 0x0000000312000000u);
  BOOST_TEST(load_le64(b.data() + 40) == 0x0000000312345678u);
  BOOST_TEST(load_le32(b.data() + 48) == 0x01020304u);
  BOOST_TEST(load_le32(b.data() + 52) == crc32c(std::span(b.data(), 52)));
  for (std::size_t i = 56; i < kControlFileBytes; ++i) BOOST_TEST(u[i] == 0u);
  std::string why;
  auto back = decode_control(b, &why);
  BOOST_REQUIRE_MESSAGE(back.has_value(), why);
  BOOST_TEST((*back == c));
}

BOOST_AUTO_TEST_CASE(every_kind_of_damage_is_refused_with_its_reason) {
  const WalControl c = walseg_test::test_control(kSeg);
  auto b = encoded(c);
  b[0] = std::byte{'X'};
  BOOST_TEST(why_not(b).find("bad magic number") != std::string::npos);
  b = encoded(c);
  b[9] ^= std::byte{1};  // a bit of the system identifier
  BOOST_TEST(why_not(b) == "incorrect checksum (CRC-32C mismatch)");
  auto with = [&](std::size_t off, std::uint32_t v) {
    auto x = encoded(c);
    store_le32(x.data() + off, v);
    store_le32(x.data() + kControlCrcOffset, crc32c(std::span(x.data(), kControlCrcOffset)));
    return x;
  };
  BOOST_TEST(why_not(with(4, 2)).find("unsupported version 2") != std::string::npos);
  BOOST_TEST(why_not(with(kControlFlagsOffset, 0x10)).find("unknown flags 0x10") != std::string::npos);
  BOOST_TEST(why_not(with(kControlSegSizeOffset, 3 * kSeg)).find("invalid segment size") != std::string::npos);
  BOOST_TEST(why_not(with(kControlBlockSizeOffset, 1000)).find("invalid block size") != std::string::npos);
  BOOST_TEST(why_not(with(kControlTimelineOffset, 0)).find("invalid timeline 0") != std::string::npos);
  BOOST_TEST(why_not(with(kControlOldestLsnOffset, 12345)).find("not the start of a segment") != std::string::npos);
  // The padding after the CRC is zeros, and damage there is refused too.
  auto padded = encoded(c);
  padded[300] = std::byte{1};
  BOOST_TEST(why_not(padded).find("byte 300 after the checksum is not zero") != std::string::npos);
  std::string why;
  BOOST_TEST(!decode_control(std::span(b.data(), 40), &why).has_value());
  BOOST_TEST(why.find("40 bytes") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(ready_stamp_is_a_long_header_with_its_own_magic_and_a_crc) {
  PageHeader h = walseg_test::first_page_of(walseg_test::test_control(kSeg), 3, 7);
  std::array<std::byte, kReadyStampBytes> b{};
  encode_ready_stamp(h, b.data());
  BOOST_TEST(load_le32(b.data()) % 65536 == kReadySegmentMagic);
  const PageHeader pg = decode_page_header(b.data());
  BOOST_TEST(pg.magic != kWalPageMagic);  // no WAL reader takes it for a page
  BOOST_TEST(pg.is_long());
  BOOST_TEST(pg.timeline == 3u);
  BOOST_TEST(pg.page_addr == 7 * kSeg);
  BOOST_TEST(pg.system_id == walseg_test::kTestSystemId);
  BOOST_TEST(pg.segment_size_bytes == kSeg);  // where pg_waldump looks for it
  BOOST_TEST(decode_ready_stamp(b.data()).has_value());
  b[30] ^= std::byte{4};
  BOOST_TEST(!decode_ready_stamp(b.data()).has_value());
  std::array<std::byte, kReadyStampBytes> page{};
  encode_page_header(h, page.data());  // a real page header is not a stamp
  BOOST_TEST(!decode_ready_stamp(page.data()).has_value());
}

BOOST_AUTO_TEST_CASE(the_worked_examples_of_doc_wal_format_md_are_what_encode_writes) {
  PageHeader h;
  h.info = kPageLongHeader;
  h.timeline = 1;
  h.page_addr = 0x3000000;
  h.system_id = 7301234567890123456ull;
  h.segment_size_bytes = 16777216;
  h.block_size_bytes = 8192;
  std::array<std::byte, kReadyStampBytes> stamp{};
  encode_ready_stamp(h, stamp.data());
  BOOST_TEST(load_le32(stamp.data() + 40) == 0x99665D33u);  // "33 5D 66 99"
  WalControl c;
  c.system_id = 7301234567890123456ull;
  c.segment_size_bytes = 16777216;
  c.block_size_bytes = 8192;
  c.oldest_lsn = 0x3000000;
  c.durable_lsn = 0x3004EB8;
  c.epoch = 3;
  const auto b = encoded(c);
  BOOST_TEST(load_le32(b.data() + 52) == 0x336640DDu);  // "DD 40 66 33"
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(file, ControlFixture)

BOOST_AUTO_TEST_CASE(write_then_read_round_trips_and_a_missing_file_is_nullopt) {
  Directory d = Directory::open(dir.path());
  BOOST_TEST(!read_control(d).has_value());
  WalControl c = walseg_test::test_control(kSeg);
  write_control(d, c);
  BOOST_TEST((read_control(d).value() == c));
  c.oldest_lsn = 9 * kSeg;
  write_control(d, c);
  BOOST_TEST((read_control(dir.path()).value() == c));
  BOOST_TEST(!path_exists(dir / kControlTempFileName));
}

BOOST_AUTO_TEST_CASE(C13_replacement_fsyncs_the_temp_file_before_the_rename_and_the_directory_after) {
  Directory d = Directory::open(dir.path());
  io_trace::start();
  write_control(d, walseg_test::test_control(kSeg));
  auto ev = io_trace::stop();
  int fsync_at = -1, rename_at = -1, dir_fsync_at = -1;
  for (int i = 0; i < static_cast<int>(ev.size()); ++i) {
    if (ev[i].op == "fsync" && ev[i].path == dir / kControlTempFileName) fsync_at = i;
    if (ev[i].op == "rename" && ev[i].path == dir / kControlFileName) rename_at = i;
    if (ev[i].op == "dir_fsync" && ev[i].path == dir.path()) dir_fsync_at = i;
  }
  BOOST_TEST(fsync_at >= 0);
  BOOST_TEST(rename_at > fsync_at);
  BOOST_TEST(dir_fsync_at > rename_at);
}

BOOST_AUTO_TEST_CASE(a_failed_replacement_keeps_the_old_file_and_leaves_no_temp) {
  Directory d = Directory::open(dir.path());
  const WalControl old = walseg_test::test_control(kSeg);
  write_control(d, old);
  WalControl next = old;
  next.oldest_lsn = 5 * kSeg;
  for (const char* fp : {"pwrite", "fsync", "rename"}) {
    BOOST_TEST_CONTEXT(fp) {
      failpoint::arm(fp, {failpoint::Kind::kErrno, EIO, 0, 1, 1});
      BOOST_CHECK_EXCEPTION(write_control(d, next), Error, error_is(EIO, {"Input/output error"}));
      failpoint::disarm_all();
      BOOST_TEST((read_control(d).value() == old));
      BOOST_TEST(!path_exists(dir / kControlTempFileName));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_damaged_file_is_an_error_naming_the_path_and_what_to_do) {
  const WalControl c = walseg_test::test_control(kSeg);
  walseg_test::put_control(dir.path(), c);
  walseg_test::write_bytes(dir / kControlFileName, 20, 1, '\x7F');
  BOOST_CHECK_EXCEPTION(read_control(dir.path()), Error,
                        error_is(EINVAL, {"control file \"" + (dir / kControlFileName) + "\" is damaged",
                                          "incorrect checksum", "restore it from a backup"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(manager, ControlFixture)

BOOST_AUTO_TEST_CASE(a_new_directory_gets_its_control_file_before_any_segment) {
  io_trace::start();
  {
    SegmentManager::Options o = manager_options(small_config());
    o.background = true;
    SegmentManager m(dir.path(), o);
    BOOST_TEST(m.wait_ready(2, std::chrono::seconds(60)) == 2u);
  }
  auto ev = io_trace::stop();
  int control_at = -1, first_segment_at = -1;
  for (int i = 0; i < static_cast<int>(ev.size()); ++i) {
    if (ev[i].op == "rename" && ev[i].path == dir / kControlFileName && control_at < 0) control_at = i;
    if (ev[i].op == "rename" && ev[i].path.find("00000001000000000000000") != std::string::npos &&
        first_segment_at < 0)
      first_segment_at = i;
  }
  BOOST_TEST(control_at >= 0);
  BOOST_TEST(first_segment_at > control_at);
  const WalControl c = read_control(dir.path()).value();
  BOOST_TEST(c.segment_size_bytes == kSeg);
  BOOST_TEST(c.block_size_bytes == 8192u);
  BOOST_TEST(c.timeline == 1u);
  BOOST_TEST(c.oldest_lsn == kSeg);  // segment 1, as initdb
  BOOST_TEST(!c.append_mode);
  // Every segment it made carries the directory's system identifier in a ready stamp.
  for (const char* n : {"000000010000000000000001", "000000010000000000000002"}) {
    std::vector<char> b = walseg_test::read_all(dir / n);
    auto stamp = decode_ready_stamp(reinterpret_cast<const std::byte*>(b.data()));
    BOOST_REQUIRE(stamp.has_value());
    BOOST_TEST(stamp->system_id == c.system_id);
  }
}

BOOST_AUTO_TEST_CASE(settings_the_wal_contradicts_are_refused_naming_the_setting) {
  { SegmentManager m(dir.path(), manager_options(small_config())); }
  Config other = small_config();
  other.segment_size_bytes = 16 * kSeg;
  other.min_size_bytes = 80 * kSeg;
  other.max_size_bytes = 1024 * kSeg;
  BOOST_CHECK_EXCEPTION(SegmentManager(dir.path(), manager_options(other)), Error,
                        error_is(EINVAL, {"its WAL has 1MB segments", "set walseg.segment_size = 1MB"}));
  other = small_config();
  other.block_size_bytes = 4096;
  BOOST_CHECK_EXCEPTION(SegmentManager(dir.path(), manager_options(other)), Error,
                        error_is(EINVAL, {"its WAL has 8kB pages", "set walseg.block_size = 8kB"}));
  SegmentManager::Options tl = manager_options(small_config());
  tl.timeline = 2;
  BOOST_CHECK_EXCEPTION(SegmentManager(dir.path(), tl), Error,
                        error_is(EINVAL, {"continues on timeline 1", "not 2"}));
}

BOOST_AUTO_TEST_CASE(retire_moves_oldest_lsn_durably_before_any_segment_is_touched) {
  SegmentManager m(dir.path(), manager_options(small_config()));
  for (SegNo k = 1; k <= 5; ++k) m.next_segment(k);
  io_trace::start();
  m.retire(4, 4 * kSeg + 100);
  auto ev = io_trace::stop();
  int control_dir_fsync = -1, first_segment_change = -1;
  for (int i = 0; i < static_cast<int>(ev.size()); ++i) {
    if (ev[i].op == "rename" && ev[i].path == dir / kControlFileName) control_dir_fsync = -2;
    if (ev[i].op == "dir_fsync" && control_dir_fsync == -2) control_dir_fsync = i;
    const bool segment = ev[i].path.find("0000000100000000000000") != std::string::npos;
    if ((ev[i].op == "rename" || ev[i].op == "unlink") && segment && first_segment_change < 0)
      first_segment_change = i;
  }
  BOOST_TEST(control_dir_fsync >= 0);
  BOOST_TEST(first_segment_change > control_dir_fsync);
  const WalControl c = read_control(dir.path()).value();
  BOOST_TEST(c.oldest_lsn == 4 * kSeg);
  BOOST_TEST(c.durable_lsn == 4 * kSeg + 100);
  m.retire(2);  // never backwards
  BOOST_TEST(read_control(dir.path()).value().oldest_lsn == 4 * kSeg);
}

BOOST_AUTO_TEST_CASE(a_failed_control_replacement_retires_nothing) {
  SegmentManager m(dir.path(), manager_options(small_config()));
  for (SegNo k = 1; k <= 5; ++k) m.next_segment(k);
  failpoint::arm("fsync", {failpoint::Kind::kErrno, EIO, 0, 1, 1});
  BOOST_CHECK_EXCEPTION(m.retire(4), Error, error_is(EIO, {"walseg.control.tmp", "Input/output error"}));
  for (SegNo k = 1; k <= 5; ++k) BOOST_TEST(path_exists(dir / segment_file_name(1, k, kSeg)));
  BOOST_TEST(read_control(dir.path()).value().oldest_lsn == kSeg);
}

BOOST_AUTO_TEST_CASE(wal_resumes_at_oldest_lsn_when_every_record_start_was_retired) {
  Config cfg = small_config();
  Lsn end = 0;
  {
    auto wal = Wal::open(dir.path(), cfg);
    std::vector<std::byte> rec(3000, std::byte{1});
    for (int i = 0; i < 400; ++i) end = wal->writer().append(rec);
    wal->writer().flush(end);
    // Retire everything below the segment after the end: no record start is left.
    const Lsn next_segment = (end / kSeg + 1) * kSeg;
    wal->manager().retire(next_segment / kSeg, end);
  }
  auto wal = Wal::open(dir.path(), cfg);
  BOOST_TEST(wal->writer().insert_lsn() >= end);  // LSNs handed out are never handed out again
  BOOST_TEST(wal->recovery().records == 0u);
  const Lsn lsn = wal->writer().append(std::vector<std::byte>(10, std::byte{2}));
  wal->writer().flush(lsn);
  BOOST_TEST(lsn > end);
}

BOOST_AUTO_TEST_CASE(a_directory_renamed_while_writing_keeps_its_wal_and_the_new_one_at_its_name_is_untouched) {
  // Break-it finding: segments, temp files and the resume read were opened by path, so a
  // `mv A A.old; mv B A` (or a re-pointed symlink) during a run made the writer go on in B,
  // overwriting B's WAL, while A's acknowledged records went missing.
  Config cfg = small_config();
  cfg.prealloc_segments = 0;  // every segment made when the writer reaches it, after the rename
  const std::string a = dir / "A", moved = dir / "A.old", b = dir / "B";
  { auto other = Wal::open(b, cfg); }
  const auto b_control = read_control(b).value();
  auto wal = Wal::open(a, cfg);
  std::vector<std::byte> rec(5000, std::byte{3});
  Lsn end = 0;
  for (int i = 0; i < 50; ++i) end = wal->writer().append(rec);
  wal->writer().flush(end);
  BOOST_REQUIRE(::rename(a.c_str(), moved.c_str()) == 0);
  BOOST_REQUIRE(::rename(b.c_str(), a.c_str()) == 0);
  for (int i = 0; i < 600; ++i) wal->writer().flush(wal->writer().append(rec));
  end = wal->writer().flushed_lsn();
  BOOST_TEST(end > 3 * kSeg);  // crossed segments after the rename
  wal.reset();
  // Everything acknowledged is in the directory the writer opened, now called A.old ...
  const RecoveryResult r = find_end_of_wal(moved, reader_options_for(read_control(moved).value()));
  BOOST_TEST(r.records == 650u);
  BOOST_TEST(r.end_lsn == end);
  // ... and the WAL that took the name A got nothing.
  BOOST_TEST((read_control(a).value() == b_control));
  for (const auto& n : walseg_test::list_names(a)) BOOST_TEST(n.find("0000000100000000000000") == std::string::npos, n);
}

// Break-it round 4: a user's file moved onto walseg.control while a writer ran was replaced by
// the next control update (at the latest the one at the writer's clean end).
BOOST_AUTO_TEST_CASE(a_file_moved_onto_the_control_file_during_a_run_is_never_replaced) {
  const std::string d = dir / "wal";
  auto wal = Wal::open(d, small_config());
  wal->writer().flush(wal->writer().append(std::vector<std::byte>(100, std::byte{1})));
  for (const char* text : {"my precious notes\n", ""}) {
    const std::string content = text;
    std::vector<std::byte> theirs(content.size());
    std::memcpy(theirs.data(), content.data(), content.size());
    if (content.empty()) {  // another WAL's control file, intact
      WalControl other = wal->manager().control();
      other.system_id += 1;
      const auto b = encoded(other);
      theirs.assign(b.begin(), b.end());
    }
    const std::string mine = dir / "mine";
    walseg_test::put_file(mine, theirs.data(), theirs.size(), theirs.size());
    BOOST_REQUIRE(::rename(mine.c_str(), (d + "/" + kControlFileName).c_str()) == 0);
    BOOST_CHECK_THROW(wal->manager().mark_durable(wal->writer().flushed_lsn() + 1), Error);
    const std::vector<char> now = walseg_test::read_all(d + "/" + kControlFileName);
    BOOST_TEST((std::vector<std::byte>(reinterpret_cast<const std::byte*>(now.data()),
                                       reinterpret_cast<const std::byte*>(now.data()) + now.size()) == theirs));
  }
}

// Break-it round 5 F1 and F2: the names were checked before the control file's write and
// fsync, so a file moved onto walseg.control.tmp during them was renamed onto walseg.control,
// and one moved onto walseg.control was replaced. Here the move happens at that fsync.
BOOST_AUTO_TEST_CASE(a_file_moved_onto_either_name_while_the_control_file_is_written_is_left_as_it_is) {
  for (const std::string& target : {std::string(kControlTempFileName), std::string(kControlFileName)}) {
    BOOST_TEST_CONTEXT(target) {
      walseg_test::TempDir t;
      const std::string d = t / "wal";
      auto wal = Wal::open(d, small_config());
      wal->writer().flush(wal->writer().append(std::vector<std::byte>(100, std::byte{1})));
      const std::string notes = "my precious notes\n";
      const std::vector<char> control_before = walseg_test::read_all(d + "/" + kControlFileName);
      failpoint::arm("fsync", move_onto(t / "mine", d + "/" + target, notes));
      BOOST_CHECK_THROW(wal->manager().mark_durable(wal->writer().flushed_lsn() + 1), Error);
      failpoint::disarm_all();
      const std::vector<char> now = walseg_test::read_all(d + "/" + target);
      BOOST_TEST(std::string(now.begin(), now.end()) == notes);
      if (target == kControlTempFileName) {  // the control file is the one walseg wrote before
        const std::vector<char> control = walseg_test::read_all(d + "/" + kControlFileName);
        BOOST_TEST((control == control_before));
      }
    }
  }
}

// The whole-diff review of this session: another WAL's control file that came out of the
// exchange is left under walseg.control.tmp with a WARNING, but the next update took any file
// beginning with the control magic there for its own leftover and removed it.
BOOST_AUTO_TEST_CASE(another_wals_control_file_under_the_temporary_name_is_refused_not_removed) {
  walseg_test::TempDir t;
  const std::string d = t / "wal", other = t / "other";
  auto wal = Wal::open(d, small_config());
  { auto o = Wal::open(other, small_config()); }
  const std::vector<char> theirs = walseg_test::read_all(other + "/" + kControlFileName);
  BOOST_REQUIRE(::rename((other + "/" + kControlFileName).c_str(), (d + "/" + kControlTempFileName).c_str()) == 0);
  wal->writer().flush(wal->writer().append(std::vector<std::byte>(100, std::byte{1})));
  BOOST_CHECK_EXCEPTION(wal->manager().mark_durable(wal->writer().flushed_lsn() + 1), Error,
                        [](const Error& e) {
                          return e.errnum() == EEXIST &&
                                 std::string(e.what()).find("put there while walseg had the directory open") !=
                                     std::string::npos;
                        });
  BOOST_TEST((walseg_test::read_all(d + "/" + kControlTempFileName) == theirs));
}

// Break-it round 32: any 0600 file of walseg's user beginning with the control magic was a
// leftover, so a user's edited copy of walseg.control (a whole one that does not decode) or a
// text file beginning "WSCT" was removed at the next opening. A crash leaves walseg's write
// whole or a first part of it: only those are leftovers.
BOOST_AUTO_TEST_CASE(only_a_whole_control_file_or_a_first_part_of_one_is_a_leftover) {
  walseg_test::TempDir t;
  const std::string d = t / "wal";
  { auto wal = Wal::open(d, small_config()); }
  walseg_test::as_if_the_last_writer_crashed(d);  // else no file there is a leftover
  const std::vector<char> control = walseg_test::read_all(d + "/" + kControlFileName);
  std::string edited(control.begin(), control.end());
  edited[100] = '\x07';
  const std::string temp = d + "/" + kControlTempFileName;
  for (const std::string& theirs : {edited, std::string("WSCT my notes\n")}) {
    BOOST_TEST_CONTEXT(theirs.size() << " bytes") {
      walseg_test::put_as_walseg_makes_it(temp, theirs);
      BOOST_CHECK_THROW(Wal::open(d, small_config()), Error);
      const std::vector<char> now = walseg_test::read_all(temp);
      BOOST_TEST(std::string(now.begin(), now.end()) == theirs);
      ::unlink(temp.c_str());
    }
  }
  // A first part of this WAL's control file is what a torn write leaves: removed.
  walseg_test::put_as_walseg_makes_it(temp, std::string(control.begin(), control.begin() + 30));
  BOOST_CHECK_NO_THROW(Wal::open(d, small_config()));
  BOOST_TEST(!walseg_test::path_exists(temp));
}

// Break-it round 31 H1: a running writer's next update (every walseg.durable_lsn_interval)
// removed a file put under walseg.control.tmp during the run when it looked like a leftover
// (empty, zeros, a plain copy of walseg.control). The opening removed any crash's leftover
// there; a file there later is someone's: the update is refused and the file stays.
BOOST_AUTO_TEST_CASE(a_file_put_under_the_temporary_name_during_a_run_is_refused_not_removed) {
  for (const std::string kind : {"empty", "zeros", "copy"}) {
    BOOST_TEST_CONTEXT(kind) {
      walseg_test::TempDir t;
      const std::string d = t / "wal";
      auto wal = Wal::open(d, walseg_test::small_wal_config(kSeg, 0));
      wal->writer().flush(wal->writer().append(std::vector<std::byte>(100, std::byte{1})));
      const std::vector<char> control = walseg_test::read_all(d + "/" + kControlFileName);
      const std::string content = kind == "empty"   ? std::string()
                                  : kind == "zeros" ? std::string(512, '\0')
                                                    : std::string(control.begin(), control.end());
      walseg_test::put_as_walseg_makes_it(d + "/" + kControlTempFileName, content);
      BOOST_CHECK_EXCEPTION(wal->manager().mark_durable(wal->writer().flushed_lsn() + 1), Error, [&](const Error& e) {
        return e.errnum() == EEXIST &&
               std::string(e.what()).find("put there while walseg had the directory open") != std::string::npos;
      });
      const std::vector<char> now = walseg_test::read_all(d + "/" + kControlTempFileName);
      BOOST_TEST(std::string(now.begin(), now.end()) == content);
      BOOST_TEST((walseg_test::read_all(d + "/" + kControlFileName) == control));
    }
  }
}

// Break-it round 33 (HIGH): a file put under walseg.control.tmp during a run was refused by
// that writer, but once it had ended the next opening took the file for its crash's leftover
// and removed it (a plain copy of walseg.control, empty, zeros). A writer that closes cleanly
// takes its PID out of walseg.lock, so no later opening takes a file there for a leftover.
BOOST_AUTO_TEST_CASE(a_file_put_under_the_temporary_name_during_a_run_is_not_removed_by_the_next_writer) {
  for (const std::string kind : {"empty", "zeros", "copy"}) {
    BOOST_TEST_CONTEXT(kind) {
      walseg_test::TempDir t;
      const std::string d = t / "wal";
      const std::string temp = d + "/" + kControlTempFileName;
      std::string content;
      {
        auto wal = Wal::open(d, walseg_test::small_wal_config(kSeg, 0));
        wal->writer().flush(wal->writer().append(std::vector<std::byte>(100, std::byte{1})));
        const std::vector<char> control = walseg_test::read_all(d + "/" + kControlFileName);
        content = kind == "empty" ? std::string() : kind == "zeros" ? std::string(512, '\0')
                                                                    : std::string(control.begin(), control.end());
        walseg_test::put_as_walseg_makes_it(temp, content);
        BOOST_CHECK_THROW(wal->manager().mark_durable(wal->writer().flushed_lsn() + 1), Error);
      }
      BOOST_CHECK_EXCEPTION(Wal::open(d, walseg_test::small_wal_config(kSeg, 0)), Error, [&](const Error& e) {
        return e.errnum() == EEXIST && std::string(e.what()).find(temp) != std::string::npos &&
               std::string(e.what()).find("names no writer whose crash may have left it") != std::string::npos;
      });
      BOOST_TEST_REQUIRE(walseg_test::path_exists(temp));
      const std::vector<char> now = walseg_test::read_all(temp);
      BOOST_TEST(std::string(now.begin(), now.end()) == content);
      // Moved out, the WAL opens with its record.
      BOOST_REQUIRE(::rename(temp.c_str(), (t / "kept").c_str()) == 0);
      auto wal = Wal::open(d, walseg_test::small_wal_config(kSeg, 0));
      BOOST_TEST(wal->recovery().records == 1u);
    }
  }
}

// bench/crash_states.sh (seed 1796158616): a power cut inside the control file's write left
// walseg.control.tmp 1 byte long, the first byte of the magic number, and every later open was
// refused ("does not begin like a control file"). A prefix of a control file is walseg's.
BOOST_AUTO_TEST_CASE(a_control_file_torn_shorter_than_its_magic_is_a_leftover) {
  walseg_test::TempDir t;
  const std::string d = t / "wal";
  { auto wal = Wal::open(d, small_config()); }
  for (const std::string prefix : {"W", "WS", "WSC"}) {
    BOOST_TEST_CONTEXT(prefix) {
      walseg_test::as_if_the_last_writer_crashed(d);  // else no file there is a leftover
      walseg_test::put_as_walseg_makes_it(d + "/" + kControlTempFileName, prefix);
      BOOST_CHECK_NO_THROW(Wal::open(d, small_config()));
      BOOST_TEST(!walseg_test::path_exists(d + "/" + kControlTempFileName));
    }
  }
  // Anything else that short is still someone's.
  walseg_test::as_if_the_last_writer_crashed(d);
  walseg_test::put_as_walseg_makes_it(d + "/" + kControlTempFileName, "x");
  BOOST_CHECK_THROW(Wal::open(d, small_config()), Error);
}

// The microsecond window that remained after the fix above: a file moved onto either name
// after the last check, right before the rename (the "rename" failpoint runs there), was
// renamed into place or replaced. Now one moved onto the temporary name is refused (the
// exchange undone), and one moved onto walseg.control comes out under the temporary name and
// stays there, while the WAL keeps its new control file. Break-it round 7 F2: a file moved
// onto the temporary name right after the exchange, over the old control file, was put under
// walseg.control by the undo, and walseg removed its own new control file: every record
// unreadable. It too stays under the temporary name now.
BOOST_AUTO_TEST_CASE(a_file_moved_onto_either_name_around_the_exchange_is_left_and_the_wal_keeps_its_control_file) {
  struct Case {
    const char* at;      // failpoint where the file is moved in
    std::string target;  // the name it is moved onto
    bool refused;        // the update is refused (else made, the file left under the temp name)
  };
  for (const Case& c : {Case{"rename", kControlTempFileName, true}, Case{"rename", kControlFileName, false},
                        Case{"replace.after_exchange", kControlTempFileName, false}}) {
    BOOST_TEST_CONTEXT(c.at << " onto " << c.target) {
      walseg_test::TempDir t;
      const std::string d = t / "wal";
      // No preallocator: its installs' renames would hit the "rename" failpoint first (a flaky
      // failure: the file moved onto walseg.control before the update under test).
      auto wal = Wal::open(d, walseg_test::small_wal_config(kSeg, 0));
      wal->writer().flush(wal->writer().append(std::vector<std::byte>(100, std::byte{1})));
      const std::uint64_t system_id = read_control(d)->system_id;
      const std::string notes = "my precious notes\n";
      const std::vector<char> control_before = walseg_test::read_all(d + "/" + kControlFileName);
      failpoint::arm(c.at, move_onto(t / "mine", d + "/" + c.target, notes));
      const Lsn target = wal->writer().flushed_lsn() + 1;
      if (c.refused)
        BOOST_CHECK_EXCEPTION(wal->manager().mark_durable(target), Error,
                              [](const Error& e) { return e.errnum() == EEXIST; });
      else
        BOOST_CHECK_NO_THROW(wal->manager().mark_durable(target));
      failpoint::disarm_all();
      const std::vector<char> now = walseg_test::read_all(d + "/" + kControlTempFileName);
      BOOST_TEST(std::string(now.begin(), now.end()) == notes);
      std::optional<WalControl> control;
      BOOST_REQUIRE_NO_THROW(control = read_control(d));
      BOOST_REQUIRE(control.has_value());
      BOOST_TEST(control->system_id == system_id);
      if (c.refused) BOOST_TEST((walseg_test::read_all(d + "/" + kControlFileName) == control_before));
      else BOOST_TEST(control->durable_lsn >= target);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
