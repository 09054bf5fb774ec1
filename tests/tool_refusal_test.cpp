// How the `walseg` commands refuse, run as a user would run them (tool_test_util.h): a value
// out of range is a usage error before anything is allocated or made; a refused command
// leaves the directory as it found it (its leftovers, and no lock file it had not); every
// file in the way is named in one run; the message names what is wrong and what to do.
// Each case failed before its fix (break-it findings, second round).
#define BOOST_TEST_MODULE tool_refusal
#include <boost/test/unit_test.hpp>

#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tool_test_util.h"

using namespace walseg_test;

namespace {

const std::string k1MB = " -c walseg.segment_size=1MB -c walseg.min_size=2MB";

// The IN_OPEN events the inotify descriptor `in` has queued: anything that opened a watched
// name (O_PATH, which opens nothing, raises none).
int opens_seen(int in) {
  alignas(struct inotify_event) char buf[4096];
  int events = 0;
  for (ssize_t n; (n = ::read(in, buf, sizeof buf)) > 0;)
    for (char* p = buf; p < buf + n; p += sizeof(struct inotify_event) + reinterpret_cast<struct inotify_event*>(p)->len)
      if (reinterpret_cast<struct inotify_event*>(p)->mask & IN_OPEN) ++events;
  return events;
}

void put_file(const std::string& path, std::size_t size) {
  std::ofstream(path, std::ios::binary) << std::string(size, '\0');
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(tool_refusal, ToolTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(RecordSizeOutOfRangeIsAUsageErrorBeforeAnythingIsMade) {
  // 1TB was allocated per client: std::bad_alloc, exit 134, after the directory was made.
  for (const char* v : {"1TB", "1020MB", "0x10000000000", "010", "nan", "-1", "1e30", "0x"}) {
    const std::string wal = dir + "/wal";
    auto r = run("write --dir '" + wal + "' --records 1 --record-size " + std::string(v) + k1MB);
    BOOST_TEST(r.status == 2, v << ": " << r.err);
    BOOST_TEST(contains(r.err, "--record-size"), r.err);
    BOOST_TEST(!fs::exists(wal), v);
  }
  auto r = run("write --dir '" + dir + "/wal' --records 1 --record-size 512MB --clients 1024" + k1MB);
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(!fs::exists(dir + "/wal"));
}

// A record larger than walseg.wal_buffers was refused only by the writer, after the open had
// taken a writer epoch (walseg.control rewritten by every refused run) or made the directory.
BOOST_AUTO_TEST_CASE(ARecordLargerThanTheWalBuffersIsRefusedBeforeTheOpen) {
  const std::string wal = dir + "/wal";
  auto fresh = run("write --dir '" + wal + "' --records 1 --record-size 20MB" + k1MB);
  BOOST_TEST(fresh.status == 2, fresh.err);
  BOOST_TEST(contains(fresh.err, "walseg.wal_buffers"), fresh.err);
  BOOST_TEST(!fs::exists(wal));
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 3" + k1MB).status == 0);
  auto slurp = [](const std::string& p) {
    std::ostringstream o;
    o << std::ifstream(p, std::ios::binary).rdbuf();
    return o.str();
  };
  const std::string control = slurp(wal + "/walseg.control");
  auto r = run("write --dir '" + wal + "' --records 1 --record-size 20MB" + k1MB);
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(slurp(wal + "/walseg.control") == control);  // the same epoch, nothing rewritten
}

// Break-it round 6 F5: --ack-log naming walseg.control or a segment of the WAL appended the
// log to it: the control file "damaged", every acknowledged record unreadable.
BOOST_AUTO_TEST_CASE(AnAckLogUnderOneOfTheWalsOwnNamesIsRefused) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 3" + k1MB).status == 0);
  for (const std::string name : {"walseg.control", "000000010000000000000001"}) {
    const auto size = fs::file_size(wal + "/" + name);
    auto r = run("write --dir '" + wal + "' --records 3 --ack-log '" + wal + "/" + name + "'" + k1MB);
    BOOST_TEST(r.status == 2, name << ": " << r.err);
    BOOST_TEST(contains(r.err, "put the ack log elsewhere"), r.err);
    BOOST_TEST(fs::file_size(wal + "/" + name) == size, name);
  }
  BOOST_TEST(run("recover --dir '" + wal + "'").status == 0);
}

// Break-it round 13 F3: any file whose first six bytes were "start " was taken for an ack log
// and appended to (a user's notes gained a start line and an ack line per commit). One whose
// end a crash cut short still is one, and is appended to.
BOOST_AUTO_TEST_CASE(AnAckLogIsOneByItsLinesNotItsFirstSixBytes) {
  const std::string wal = dir + "/wal";
  auto slurp = [](const std::string& p) {
    std::ostringstream s;
    s << std::ifstream(p, std::ios::binary).rdbuf();
    return s.str();
  };
  const std::string notes = write("notes.txt", "start the service with systemctl\nthen check logs\n");
  const std::string lines = write("lines.txt", "start 1 2 3\nack 1 0 0 99\nmy notes\n");
  for (const std::string& f : {notes, lines}) {
    const std::string before = slurp(f);
    auto r = run("write --dir '" + wal + "' --records 3 --ack-log '" + f + "'" + k1MB);
    BOOST_TEST(r.status == 2, f << ": " << r.err);
    BOOST_TEST(contains(r.err, "is not an ack log"), r.err);
    BOOST_TEST(slurp(f) == before);
  }
  const std::string acks = dir + "/acks.log";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 3 --ack-log '" + acks + "'" + k1MB).status == 0);
  std::ofstream(acks, std::ios::app | std::ios::binary) << std::string("ack 12 0 5", 10) << std::string(3, '\0');
  BOOST_TEST(run("write --dir '" + wal + "' --records 3 --ack-log '" + acks + "'" + k1MB).status == 0);
  BOOST_TEST(run("write --dir '" + wal + "' --records 3 --ack-log '" + acks + "'" + k1MB).status == 0);
}

// New-user trial 14: `bench --dir $PGDATA/pg_wal` beside a running server made its scratch
// directory in pg_wal (a default run needs 1.4GB: a full disk makes PostgreSQL PANIC).
BOOST_AUTO_TEST_CASE(BenchRefusesPostgresqlsDataDirectoryAndPgWalAndWhatIsBelowThem) {
  const std::string pgdata = dir + "/pgdata";
  fs::create_directories(pgdata + "/pg_wal/archive_status");
  fs::create_directories(pgdata + "/global");
  fs::create_directories(pgdata + "/base/1");
  std::ofstream(pgdata + "/PG_VERSION") << "15\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {pgdata, "is what looks like PostgreSQL's data directory"},
      {pgdata + "/pg_wal", "is what looks like PostgreSQL's pg_wal"},
      {pgdata + "/pg_wal/new", "is inside what looks like PostgreSQL's pg_wal (\"" + fs::canonical(pgdata).string() +
                                   "/pg_wal\": it has an archive_status directory)"},
      {pgdata + "/base/1", "is inside what looks like PostgreSQL's data directory"}};
  for (const auto& [d, says] : cases) {
    const auto before = entries(d);
    auto r = run("bench --dir '" + d + "' --phases create --methods none --segments 1");
    BOOST_TEST(r.status == 2, d << ": " << r.err);
    BOOST_TEST(contains(r.err, says), r.err);
    BOOST_TEST(contains(r.err, "walseg_bench()"), r.err);
    BOOST_TEST((entries(d) == before), d);
  }
  BOOST_TEST(!fs::exists(pgdata + "/pg_wal/new"));
  // Beside the data directory, on the same filesystem, is where to measure it.
  BOOST_TEST(run("bench --dir '" + dir + "/beside' --phases create --methods none --segments 1").status == 0);
}

// New-user trial 14: `write --segment-size 1MB` on a 16MB WAL answered "set
// walseg.segment_size = 16MB", naming a setting the user had not used.
BOOST_AUTO_TEST_CASE(ASegmentSizeOptionAgainstTheWalNamesTheOption) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 3" + k1MB).status == 0);
  const auto before = entries(wal);
  for (const std::string cmd : {"write --records 1", "create --start 9"}) {
    auto r = run(cmd + " --dir '" + wal + "' --segment-size 16MB");
    BOOST_TEST(r.status == 2, cmd << ": " << r.err);
    BOOST_TEST(contains(r.err, "--segment-size 16MB: the WAL in \"" + wal + "\" has 1MB segments"), r.err);
    BOOST_TEST(contains(r.err, "leave --segment-size out"), r.err);
  }
  BOOST_TEST((entries(wal) == before));
}

// Break-it round 17 M2: a path through the data directory's pg_tblspc/<oid> link resolved to
// the tablespace's location, outside the data directory, and a WAL was made in the tablespace.
BOOST_AUTO_TEST_CASE(ATablespaceIsPostgresqlsToo) {
  const std::string pgdata = dir + "/pgdata", loc = dir + "/tblspc";
  fs::create_directories(pgdata + "/global");
  fs::create_directories(pgdata + "/pg_tblspc");
  fs::create_directories(loc + "/PG_15_202209061");
  std::ofstream(pgdata + "/PG_VERSION") << "15\n";
  fs::create_directory_symlink(loc, pgdata + "/pg_tblspc/16384");
  for (const std::string& d : {pgdata + "/pg_tblspc/16384/PG_15_202209061/w", loc + "/w"}) {
    auto r = run("write --dir '" + d + "' --records 1" + k1MB);
    BOOST_TEST(r.status == 2, d << ": " << r.err);
    BOOST_TEST(contains(r.err, "what looks like PostgreSQL's"), r.err);
    BOOST_TEST(!fs::exists(d));
  }
}

// Break-it round 36 HIGH: the PostgreSQL check normalized ".." as text before it resolved links,
// where the kernel goes up from a link's target: "pgwal/../x", pgwal a link to PGDATA/pg_wal,
// was checked as a sibling of the link, and a WAL (or an ack log named *.ready in
// archive_status, an instruction to the archiver) was written inside the data directory.
BOOST_AUTO_TEST_CASE(BreakIt36_H_DotDotAfterALinkIsCheckedWhereTheKernelGoes) {
  const std::string pgdata = dir + "/fk/data", home = dir + "/home";
  fs::create_directories(pgdata + "/pg_wal/archive_status/x");
  fs::create_directories(pgdata + "/global");
  fs::create_directories(home);
  std::ofstream(pgdata + "/PG_VERSION") << "15\n";
  fs::create_directory_symlink(pgdata + "/pg_wal", home + "/pgwal");
  fs::create_directory_symlink(pgdata + "/pg_wal/archive_status/x", home + "/as_x");
  const auto before = entries(pgdata), before_as = entries(pgdata + "/pg_wal/archive_status");
  for (const std::string& cmd : {"write --records 3 --dir '" + home + "/pgwal/../walseg-test'" + k1MB,
                                "create --method sparse --dir '" + home + "/pgwal/../walseg-test'" + k1MB,
                                "bench --phases create --methods none --segments 1 --dir '" + home + "/pgwal/../b'",
                                "write --records 3 --dir '" + dir + "/aw' --ack-log '" + home +
                                    "/as_x/../000000010000000000000001.ready'" + k1MB}) {
    auto r = run(cmd);
    BOOST_TEST(r.status == 2, cmd << ": " << r.err);
    BOOST_TEST(contains(r.err, "what looks like PostgreSQL's"), r.err);
  }
  BOOST_TEST((entries(pgdata) == before));
  BOOST_TEST((entries(pgdata + "/pg_wal/archive_status") == before_as));
}

// Break-it round 36 MEDIUM: `--dir E/new/..` started a WAL in E, beside a user's files: the
// new-WAL check looked at "E/new/..", which did not exist yet. It looks where the kernel goes.
// And a WAL's directory under one of walseg's file names, inside another WAL, made that WAL's
// next segment a directory (LOW).
BOOST_AUTO_TEST_CASE(BreakIt36_M_ANewWalIsCheckedInTheDirectoryItLandsIn) {
  const std::string photos = dir + "/photos";
  fs::create_directories(photos);
  std::ofstream(photos + "/a.jpg") << "precious\n";
  auto r = run("create --method sparse --count 2 --dir '" + photos + "/new/..'" + k1MB);
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(contains(r.err, "holds no walseg WAL (no walseg.control) but other files (\"a.jpg\")"), r.err);
  BOOST_TEST((entries(photos) == std::vector<std::string>{"a.jpg"}));
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 3" + k1MB).status == 0);
  for (const char* name : {"000000010000000000000004", "walseg.control.tmp", "xlogtemp.1.1"}) {
    auto w = run("write --records 1 --dir '" + wal + "/" + name + "'" + k1MB);
    BOOST_TEST(w.status == 2, name << ": " << w.err);
    BOOST_TEST(contains(w.err, std::string("has one of walseg's file names (\"") + name + "\")"), w.err);
    BOOST_TEST(!fs::exists(wal + "/" + name));
  }
}

// Break-it round 36 MEDIUM: recover and dump opened a device node under a segment's name, and a
// writer with auto one under walseg.auto, before finding them not regular files (a device's
// open runs its driver). inotify's IN_OPEN says whether anything opened them.
BOOST_AUTO_TEST_CASE(BreakIt36_M_ReadersDoNotOpenASegmentNameThatIsNoRegularFile) {
  const std::string wal = dir + "/wal", fresh = dir + "/fresh";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 3" + k1MB).status == 0);
  const std::string seg2 = wal + "/000000010000000000000002";
  fs::remove(seg2);
  BOOST_REQUIRE(::mkfifo(seg2.c_str(), 0600) == 0);
  fs::create_directories(fresh);
  BOOST_REQUIRE(::mkfifo((fresh + "/walseg.auto").c_str(), 0600) == 0);
  const int in = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  BOOST_TEST_REQUIRE(in >= 0);
  BOOST_TEST_REQUIRE(::inotify_add_watch(in, seg2.c_str(), IN_OPEN) >= 0);
  BOOST_TEST_REQUIRE(::inotify_add_watch(in, (fresh + "/walseg.auto").c_str(), IN_OPEN) >= 0);
  auto opened = [&] { return opens_seen(in); };
  run("recover --dir '" + wal + "'");
  run("dump --dir '" + wal + "'");
  BOOST_TEST(opened() == 0, "recover or dump opened the FIFO under a segment's name");
  run("write --records 1 --dir '" + fresh + "' -c walseg.init_method=auto" + k1MB);
  BOOST_TEST(opened() == 0, "write opened the FIFO under walseg.auto");
  ::close(in);
}

// Break-it round 15 L3: `--ack-log -` made a file named "-" in the working directory (bench's
// `--json -` is stdout), and the checker then read a log nobody knew was there.
BOOST_AUTO_TEST_CASE(AnAckLogOfADashIsRefusedNotMadeAsAFile) {
  BOOST_REQUIRE(!fs::exists("-"));
  auto r = run("write --dir '" + dir + "/wal' --records 3 --ack-log -" + k1MB);
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(contains(r.err, "--ack-log -: the ack log must be a file"), r.err);
  BOOST_TEST(!fs::exists("-"));
  BOOST_TEST(!fs::exists(dir + "/wal"));
  std::error_code ec;
  fs::remove("-", ec);
}

// Break-it round 7 F6 and L2: the refusal above compared the directories only when both
// existed, so an ack log in a WAL directory still to be made, or reached through a symbolic
// link, was appended to walseg.control (every record unreadable); and an ack log in a missing
// directory was found only after the open had made the WAL directory and its control file.
BOOST_AUTO_TEST_CASE(AnAckLogInTheWalDirectoryByAnyPathOrInAMissingDirectoryIsRefusedBeforeTheOpen) {
  auto slurp = [](const std::string& p) {
    std::ostringstream s;
    s << std::ifstream(p).rdbuf();
    return s.str();
  };
  const std::string fresh = dir + "/fresh";
  auto r = run("write --dir '" + fresh + "/wal' --records 3 --ack-log '" + fresh + "/wal/walseg.control'" + k1MB);
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(contains(r.err, "put the ack log elsewhere"), r.err);
  BOOST_TEST(!fs::exists(fresh + "/wal"));
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 3" + k1MB).status == 0);
  const std::string control = slurp(wal + "/walseg.control");
  BOOST_REQUIRE(::symlink((wal + "/walseg.control").c_str(), (dir + "/acks.log").c_str()) == 0);
  r = run("write --dir '" + wal + "' --records 3 --ack-log '" + dir + "/acks.log'" + k1MB);
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(slurp(wal + "/walseg.control") == control);
  r = run("write --dir '" + fresh + "/wal2' --records 3 --ack-log '" + dir + "/missing/acks'" + k1MB);
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(contains(r.err, "does not exist"), r.err);
  BOOST_TEST(!fs::exists(fresh + "/wal2"));
  BOOST_TEST(run("recover --dir '" + wal + "'").status == 0);
}

// Break-it round 8 F5: bench --json truncated whatever it named: a segment (every acknowledged
// record in it lost) or walseg.control (every record unreadable). Now a path in a WAL
// directory, under a walseg name, or an existing file that is not a JSON document is refused
// before anything runs.
BOOST_AUTO_TEST_CASE(BenchJsonOverAWalFileOrAForeignFileIsRefused) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 5" + k1MB).status == 0);
  const auto seg = fs::file_size(wal + "/000000010000000000000001");
  for (const std::string& target : {wal + "/000000010000000000000001", wal + "/notes.json", dir + "/mine.txt"}) {
    if (target == dir + "/mine.txt") std::ofstream(target) << "my notes\n";
    auto r = run("bench --dir '" + dir + "' --json '" + target + "' --phases create --segments 1 --segment-size 1MB "
                 "--methods none");
    BOOST_TEST(r.status == 2, target << ": " << r.err);
  }
  BOOST_TEST(fs::file_size(wal + "/000000010000000000000001") == seg);
  BOOST_TEST(!fs::exists(wal + "/notes.json"));
  BOOST_TEST(fs::file_size(dir + "/mine.txt") == 9u);
  BOOST_TEST(run("recover --dir '" + wal + "'").status == 0);
}

BOOST_AUTO_TEST_CASE(CreatePastTheLastSegmentNumberIsAUsageError) {
  auto r = run("create --dir '" + dir + "/wal' --method zero_write --start 0xFFFFFFFFFFFFFF --segment-size 1MB");
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(contains(r.err, "goes past the last segment"), r.err);
  BOOST_TEST(!fs::exists(dir + "/wal"));
  // A range that starts inside and runs past the last segment: refused before the first is made.
  r = run("create --dir '" + dir + "/wal' --method zero_write --start 0xFFFFFFFFFFFFFE --count 3 --segment-size 1MB");
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(contains(r.err, "goes past the last segment"), r.err);
  BOOST_TEST(!fs::exists(dir + "/wal"));
}

BOOST_AUTO_TEST_CASE(ARefusedWriteRemovesNothingAndNoLockFileItMade) {
  // Leftovers were removed first, and the lock file was left, then the foreign file refused.
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 10 --record-size 100" + k1MB).status == 0);
  fs::remove(wal + "/walseg.lock");
  put_file(wal + "/xlogtemp.123", 4096);
  put_file(wal + "/000000010000000000000005", 1024 * 1024);
  BOOST_REQUIRE(::mkfifo((wal + "/000000010000000000000006").c_str(), 0600) == 0);
  const auto before = entries(wal);
  for (const std::string& cmd : {"write --dir '" + wal + "' --records 1" + k1MB,
                                "create --dir '" + wal + "' --method zero_write --start 9" + k1MB}) {
    auto r = run(cmd);
    BOOST_TEST(r.status == 1, r.err);
    BOOST_TEST((entries(wal) == before), cmd);
    // Both files in the way, in one run.
    BOOST_TEST(contains(r.err, "2 files have names of segments"), r.err);
    BOOST_TEST(contains(r.err, wal + "/000000010000000000000005"), r.err);
    BOOST_TEST(contains(r.err, wal + "/000000010000000000000006\": it is a FIFO, not a regular file"), r.err);
  }
}

BOOST_AUTO_TEST_CASE(ARefusedCreateInANewDirectoryLeavesItEmpty) {
  const std::string wal = dir + "/wal";
  fs::create_directory(wal);
  auto r = run("create --dir '" + wal + "' --method zero_write --start 0 --segment-size 1MB");
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(contains(r.err, "use --start 1 or higher"), r.err);
  BOOST_TEST(entries(wal).empty());
}

BOOST_AUTO_TEST_CASE(CreateInANewDirectoryStartsTheWalOnItsTimeline) {
  const std::string wal = dir + "/wal";
  auto c = run("create --dir '" + wal + "' --method zero_write --start 3 --timeline 5 --segment-size 1MB");
  BOOST_TEST(c.status == 0, c.err);
  BOOST_TEST(contains(run("ls --dir '" + wal + "'" + k1MB).out, "timeline 5,"));
  BOOST_TEST(run("write --dir '" + wal + "' --records 1" + k1MB).status == 0);
}

BOOST_AUTO_TEST_CASE(AnotherSystemsControlFileIsSaidToBeThePossibleStranger) {
  const std::string a = dir + "/a", b = dir + "/b";
  BOOST_REQUIRE(run("write --dir '" + a + "' --records 10" + k1MB).status == 0);
  BOOST_REQUIRE(run("write --dir '" + b + "' --records 10" + k1MB).status == 0);
  fs::copy_file(b + "/walseg.control", a + "/walseg.control", fs::copy_options::overwrite_existing);
  auto r = run("write --dir '" + a + "' --records 1" + k1MB);
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(contains(r.err, "its walseg.control is another WAL's"), r.err);
}

BOOST_AUTO_TEST_CASE(MessagesNameWhatIsWrong) {
  auto n = run("nosuch");
  BOOST_TEST(n.status == 2);
  BOOST_TEST(contains(n.err, "unknown command nosuch; commands are: "), n.err);
  BOOST_TEST(contains(n.err, "create"), n.err);
  auto c = run("check-config -c bad");
  BOOST_TEST(c.status == 1);
  BOOST_TEST(contains(c.err, "-c bad"), c.err);
  BOOST_TEST(!contains(c.err, "needs a settings file"), c.err);

  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 10" + k1MB).status == 0);
  auto d = run("dump --dir '" + wal + "' --start 0/0");
  BOOST_TEST(d.status == 2, d.err);
  BOOST_TEST(contains(d.err, "is before the start of the WAL"), d.err);
  BOOST_TEST(!contains(d.out, "corruption"), d.out);

  BOOST_REQUIRE(::mkfifo((dir + "/fifo.conf").c_str(), 0600) == 0);
  auto f = run("recover --dir '" + wal + "' --config '" + dir + "/fifo.conf'");  // ctest's timeout catches a hang
  BOOST_TEST(f.status == 1, f.out);
  BOOST_TEST(contains(f.err, "it is a FIFO, not a regular file"), f.err);

  fs::remove(wal + "/walseg.lock");
  BOOST_REQUIRE(::mkfifo((wal + "/walseg.lock").c_str(), 0600) == 0);
  auto w = run("write --dir '" + wal + "' --records 1" + k1MB);
  BOOST_TEST(w.status == 1);
  BOOST_TEST(contains(w.err, "lock file \"" + wal + "/walseg.lock\": it is a FIFO"), w.err);
  BOOST_TEST(contains(run("ls --dir '" + wal + "'" + k1MB).out, "is a FIFO; walseg cannot use it"));
}

// Break-it round 18: walseg.lock, --json and --ack-log were opened (O_RDWR) and only then found
// not to be regular files, so a device node's driver ran its open routine (a tape rewinds, a
// watchdog starts) before the refusal. inotify's IN_OPEN says whether anything opened the name
// (O_PATH, which opens nothing, raises none).
BOOST_AUTO_TEST_CASE(ANonRegularFileUnderAnyNameWalsegWrites_IsRefusedWithoutBeingOpened) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 10" + k1MB).status == 0);
  fs::remove(wal + "/walseg.lock");
  BOOST_REQUIRE(::mkfifo((wal + "/walseg.lock").c_str(), 0600) == 0);
  BOOST_REQUIRE(::mkfifo((dir + "/out.json").c_str(), 0600) == 0);
  BOOST_REQUIRE(::mkfifo((dir + "/acks").c_str(), 0600) == 0);
  fs::create_directories(dir + "/fifo-control");
  BOOST_REQUIRE(::mkfifo((dir + "/fifo-control/walseg.control").c_str(), 0600) == 0);
  // Settings files too (break-it round 20 L2): a FIFO's writer was released by the open.
  fs::create_directories(dir + "/conf.d");
  BOOST_REQUIRE(::mkfifo((dir + "/conf.d/a.conf").c_str(), 0600) == 0);
  std::ofstream(dir + "/main.conf") << "include_dir '" << dir << "/conf.d'\n";
  const int in = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  BOOST_TEST_REQUIRE(in >= 0);
  for (const std::string& p : {wal + "/walseg.lock", dir + "/out.json", dir + "/acks", dir + "/fifo-control/walseg.control", dir + "/conf.d/a.conf"})
    BOOST_TEST_REQUIRE(::inotify_add_watch(in, p.c_str(), IN_OPEN) >= 0, p);
  auto opened = [&] { return opens_seen(in); };
  BOOST_TEST_REQUIRE(opened() == 0);
  const std::vector<std::pair<std::string, std::string>> cmds = {
      {"write --dir '" + wal + "' --records 1" + k1MB, "lock file \"" + wal + "/walseg.lock\": it is a FIFO"},
      {"dump --dir '" + wal + "'", "lock file \"" + wal + "/walseg.lock\": it is a FIFO"},
      {"recover --dir '" + wal + "'", "lock file \"" + wal + "/walseg.lock\": it is a FIFO"},
      {"check-config '" + dir + "/main.conf'", "it is a FIFO, not a regular file"},
      {"check-config '" + dir + "/conf.d/a.conf'", "it is a FIFO, not a regular file"},
      {"show all --config '" + dir + "/conf.d/a.conf'", "it is a FIFO, not a regular file"},
      {"recover --dir '" + dir + "/fifo-control'", "walseg.control\" is a FIFO, not the regular file walseg writes"},
      {"write --dir '" + dir + "/fifo-control' --records 1" + k1MB, "walseg.control\" is a FIFO, not the regular file walseg writes"},
      {"write --dir '" + dir + "/other' --records 1 --ack-log '" + dir + "/acks'" + k1MB, "is not a regular file"},
      {"bench --dir '" + dir + "' --phases create --methods none --segments 1 --segment-size 1MB --json '" + dir +
           "/out.json'",
       "is not a regular file"},
  };
  for (const auto& [cmd, says] : cmds) {
    auto r = run(cmd);
    BOOST_TEST(r.status != 0, cmd << "\n" << r.out << r.err);
    BOOST_TEST(contains(r.err, says), cmd << "\n" << r.err);
    BOOST_TEST(opened() == 0, cmd << ": the name was opened before it was refused");
  }
  ::close(in);
}

BOOST_AUTO_TEST_CASE(LsLabelsWalsegsLeftoversAndListsADamagedDirectory) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 10" + k1MB).status == 0);
  as_if_the_last_writer_crashed(wal);  // else no file there is a leftover
  fs::copy_file(wal + "/walseg.control", wal + "/walseg.control.tmp");
  put_file(wal + "/000000010000000000000009.broken", 4096);
  auto l = run("ls --dir '" + wal + "'" + k1MB);
  BOOST_TEST(contains(l.out, "walseg's leftover: a control file being replaced"), l.out);
  BOOST_TEST(contains(l.out, "a name walseg 0.1 gave a segment-named file it moved aside"), l.out);
  std::ofstream(wal + "/walseg.control", std::ios::trunc) << "damaged";
  auto d = run("ls --dir '" + wal + "'" + k1MB);
  BOOST_TEST(d.status == 1);
  BOOST_TEST(contains(d.out, "walseg.control: cannot be used"), d.out);
  BOOST_TEST(contains(d.out, "000000010000000000000001"), d.out);
}

// Issue 17 (new-user trial): `bench --dir /proc/x` said "not enough free space ... its
// filesystem has 0kB free", which sends a user looking for space on a filesystem of no files.
BOOST_AUTO_TEST_CASE(BenchOnAPseudoFilesystemSaysWhatItIs) {
  for (const char* d : {"/proc/walseg-no-such-dir", "/sys/kernel"}) {
    auto r = run(std::string("bench --dir ") + d + " --phases create --segments 1 --segment-size 1MB");
    BOOST_TEST(r.status == 1, d);
    BOOST_TEST(contains(r.err, "filesystem, which holds no files' data"), r.err);
    BOOST_TEST(!contains(r.err, "free space"), r.err);
  }
}

// The new-user trial: `walseg dump --dir pg/data/pg_wal` said only "holds segment files ... but
// no walseg.control ... If this is a walseg WAL whose walseg.control was lost, restore that file
// from a backup", sending a DBA looking for a backup of a file PostgreSQL never had.
BOOST_AUTO_TEST_CASE(PostgresqlsPgWalIsNamedAsSuch) {
  const std::string data = dir + "/data", wal = data + "/pg_wal";
  fs::create_directories(wal + "/archive_status");
  std::ofstream(data + "/PG_VERSION") << "15\n";
  put_file(wal + "/000000010000000000000001", 1 << 20);
  for (const std::string cmd : {"dump", "recover"}) {
    auto r = run(cmd + " --dir '" + wal + "'" + k1MB);
    BOOST_TEST(r.status == 1, cmd << ": " << r.err);
    BOOST_TEST(contains(r.err, "It looks like PostgreSQL's pg_wal (it has an archive_status directory)"), r.err);
    BOOST_TEST(contains(r.err, "read PostgreSQL's WAL with pg_waldump"), r.err);
    // New-user trial 6: PostgreSQL's pg_wal first, then the walseg case (it came last).
    BOOST_TEST(r.err.find("It looks like PostgreSQL's pg_wal") < r.err.find("restore that file from a backup"), r.err);
  }
  // Break-it round 16 L3, L4: writers and output files stay out of PostgreSQL's directories
  // altogether (a WAL was started in a data directory, segments made in archive_status, an ack
  // log named X.ready put there for the archiver to find).
  const auto before = entries(wal), status_before = entries(wal + "/archive_status"), data_before = entries(data);
  fs::create_directories(data + "/global");
  const std::vector<std::string> refused = {
      "write --dir '" + wal + "'" + k1MB,
      "write --dir '" + data + "'" + k1MB,
      "create --dir '" + wal + "/archive_status' --method zero_write" + k1MB,
      "write --dir '" + dir + "/w' --ack-log '" + wal + "/archive_status/000000010000000000000090.ready'" + k1MB,
      "bench --dir '" + dir + "/b' --json '" + data + "/j.json' --phases create --methods none --segments 1"};
  for (const std::string& args : refused) {
    auto r = run(args);
    BOOST_TEST(r.status == 2, args << ": " << r.err);
    BOOST_TEST(contains(r.err, "PostgreSQL's"), r.err);
  }
  BOOST_TEST((entries(wal) == before));
  BOOST_TEST((entries(wal + "/archive_status") == status_before));
  fs::remove(data + "/global");
  BOOST_TEST((entries(data) == data_before));
  BOOST_TEST(!fs::exists(dir + "/w"));
  fs::remove(wal + "/archive_status");
  auto r = run("dump --dir '" + wal + "'");
  BOOST_TEST(contains(r.err, "(it is named pg_wal, with PG_VERSION beside it)"), r.err);
}

// The new-user trial: ls --segment-size 1MB on a 16MB WAL, and dump or recover with
// -c walseg.segment_size=16MB on a 1MB WAL, ignored the size without a word, while write and
// create refuse it. Readers go on with the WAL's own size, and say so.
BOOST_AUTO_TEST_CASE(ReadersSayASegmentSizeThatIsNotTheWalsIsNotUsed) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 5" + k1MB).status == 0);
  const std::string warning = "is not this WAL's segment size: its walseg.control says 1MB segments";
  for (const std::string& args : {"ls --dir '" + wal + "' --segment-size 16MB", "dump --dir '" + wal + "' -c walseg.segment_size=16MB",
                                 "recover --dir '" + wal + "' -c walseg.segment_size=16MB"}) {
    auto r = run(args);
    BOOST_TEST(r.status == 0, args << ": " << r.err);
    BOOST_TEST(contains(r.err, warning), args << ": " << r.err);
  }
  for (const std::string& args : {"ls --dir '" + wal + "'", "recover --dir '" + wal + "'" + k1MB})
    BOOST_TEST(!contains(run(args).err, "WARNING"), args);
}

// The new-user trial: bench took --dir '' for the current directory and a WAL directory as its
// --dir (a --json file there is refused), and capped --write-bytes 32MB at a 1MB segment
// without a word.
BOOST_AUTO_TEST_CASE(BenchRefusesAnEmptyOrWalDirAndSaysWhenWriteBytesIsCapped) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 3" + k1MB).status == 0);
  auto empty = run("bench --dir '' --phases create --segments 1 --segment-size 1MB");
  BOOST_TEST(empty.status == 2, empty.err);
  BOOST_TEST(contains(empty.err, "--dir '': give a directory"), empty.err);
  auto in_wal = run("bench --dir '" + wal + "' --phases create --segments 1 --segment-size 1MB");
  BOOST_TEST(in_wal.status == 2, in_wal.err);
  BOOST_TEST(contains(in_wal.err, "is a WAL directory (it holds walseg.control)"), in_wal.err);
  for (const auto& e : fs::directory_iterator(wal)) BOOST_TEST(e.path().filename().string().rfind("walseg-bench-", 0) != 0u);
  fs::create_directories(dir + "/b");
  auto capped = run("bench --dir '" + dir + "/b' --phases write --methods sparse --segments 1 --segment-size 1MB"
                    " --write-bytes 32MB");
  BOOST_TEST(capped.status == 0, capped.err);
  BOOST_TEST(contains(capped.out, "1MB per segment (the whole segment: the 32MB of --write-bytes, given or its default, is more than one)"), capped.out);
}

// New-user trial 16 (MEDIUM): `write --dir home` on a directory of the user's files started a
// WAL there, beside them, with only a LOG line per file. As initdb, a new WAL starts only in a
// new or empty directory (an empty filesystem's lost+found aside); a WAL directory goes on.
BOOST_AUTO_TEST_CASE(ANewWalIsStartedOnlyInANewOrEmptyDirectory) {
  const std::string home = dir + "/home";
  fs::create_directories(home + "/src");
  std::ofstream(home + "/notes.txt") << "important\n";
  const auto before = entries(home);
  for (const std::string cmd : {"write --records 2", "create --method zero_write --count 1"}) {
    auto r = run(cmd + " --dir '" + home + "'" + k1MB);
    BOOST_TEST(r.status == 2, cmd << ": " << r.err);
    BOOST_TEST(contains(r.err, "holds no walseg WAL (no walseg.control) but other files ("), r.err);
    BOOST_TEST(contains(r.err, "\"notes.txt\""), r.err);
    BOOST_TEST(contains(r.err, "\"src\""), r.err);
    BOOST_TEST(contains(r.err, "give a new directory, such as \"" + home + "/wal\""), r.err);
    BOOST_TEST((entries(home) == before), cmd);
  }
  BOOST_TEST(run("write --records 2 --dir '" + home + "/wal'" + k1MB).status == 0);
  // A file named lost+found is someone's like any other (break-it round 35 LOW).
  const std::string file_lf = dir + "/file_lf";
  fs::create_directories(file_lf);
  std::ofstream(file_lf + "/lost+found") << "notes\n";
  BOOST_TEST(run("write --records 2 --dir '" + file_lf + "'" + k1MB).status == 2);
  BOOST_TEST((entries(file_lf) == std::vector<std::string>{"lost+found"}));
  // An empty filesystem's root holds lost+found; an existing WAL holds anything it likes.
  const std::string root = dir + "/root";
  fs::create_directories(root + "/lost+found");
  BOOST_TEST(run("write --records 2 --dir '" + root + "'" + k1MB).status == 0);
  std::ofstream(root + "/notes.txt") << "later\n";
  BOOST_TEST(run("write --records 2 --dir '" + root + "'" + k1MB).status == 0);
}

// Break-it round 38 M2: the new-WAL check passed over every entry under a walseg name, so a
// directory holding a user's 0644 xlogtemp.555 or a directory named walseg.auto got a new WAL
// beside them. Only a regular file made as walseg makes its files (0600, this user's) is passed
// over; walseg's own leftovers of a first opening that crashed still are.
BOOST_AUTO_TEST_CASE(BreakIt38_M2_FilesUnderWalsegNamesNotMadeAsWalsegMakesThemAreSomeonesToo) {
  const std::string shared = dir + "/shared";
  fs::create_directories(shared);
  std::ofstream(shared + "/xlogtemp.555") << "user notes\n";
  fs::permissions(shared + "/xlogtemp.555", fs::perms(0644));
  const std::string dir_named = dir + "/dir_named";
  fs::create_directories(dir_named + "/walseg.auto");
  for (const std::string& d : {shared, dir_named}) {
    const auto before = entries(d);
    auto r = run("write --records 2 --dir '" + d + "'" + k1MB);
    BOOST_TEST(r.status == 2, d << ": " << r.err);
    BOOST_TEST(contains(r.err, "holds no walseg WAL (no walseg.control) but other files ("), r.err);
    BOOST_TEST((entries(d) == before), d);
  }
  // A crash of a first opening before its control file leaves walseg.lock (0600): passed over.
  const std::string crashed = dir + "/crashed";
  fs::create_directories(crashed);
  put_as_walseg_would(crashed + "/walseg.lock", "walseg.lock\nend\n");
  auto r = run("write --records 2 --dir '" + crashed + "'" + k1MB);
  BOOST_TEST(r.status == 0, r.err);
}

// Break-it round 38 L2: an immutable walseg.lock (chattr +i) refused the opening with "run
// walseg as the user who owns this WAL directory", to its owner. The owner is told of the
// attribute instead.
BOOST_AUTO_TEST_CASE(BreakIt38_L2_AnImmutableOrAppendOnlyFileIsNamedAsSuchToItsOwner) {
  if (::geteuid() != 0) {
    BOOST_TEST_MESSAGE("skipped: chattr +i needs root");
    return;
  }
  const std::string wal = dir + "/wal";
  BOOST_TEST_REQUIRE(run("write --records 2 --dir '" + wal + "'" + k1MB).status == 0);
  if (std::system(("chattr +i '" + wal + "/walseg.lock' 2>/dev/null").c_str()) != 0) {
    BOOST_TEST_MESSAGE("skipped: this filesystem has no immutable attribute");
    return;
  }
  struct Mutable {
    std::string p;
    ~Mutable() { (void)std::system(("chattr -i '" + p + "'").c_str()); }
  } undo{wal + "/walseg.lock"};
  auto r = run("write --records 2 --dir '" + wal + "'" + k1MB);
  BOOST_TEST(r.status != 0);
  BOOST_TEST(contains(r.err, wal + "/walseg.lock"), r.err);
  BOOST_TEST(contains(r.err, "immutable or append-only"), r.err);
  BOOST_TEST(!contains(r.err, "run walseg as the user who owns"), r.err);
  // Break-it round 37 F6: the same for a segment, which said "Operation not permitted" alone.
  (void)std::system(("chattr -i '" + wal + "/walseg.lock'").c_str());
  undo.p = wal + "/000000010000000000000001";
  BOOST_TEST_REQUIRE(std::system(("chattr +a '" + undo.p + "'").c_str()) == 0);
  r = run("write --records 2 --dir '" + wal + "'" + k1MB);
  BOOST_TEST(r.status != 0);
  BOOST_TEST(contains(r.err, "000000010000000000000001"), r.err);
  BOOST_TEST(contains(r.err, "it is append-only: `lsattr` shows the a attribute"), r.err);
  // Break-it round 39 L2: an immutable walseg.control, which the writer exchanges at its
  // checkpoint, said "could not exchange files ...: Operation not permitted" alone.
  (void)std::system(("chattr -a '" + undo.p + "'").c_str());
  undo.p = wal + "/walseg.control";
  BOOST_TEST_REQUIRE(std::system(("chattr +i '" + undo.p + "'").c_str()) == 0);
  r = run("write --records 2 --dir '" + wal + "'" + k1MB);
  BOOST_TEST(r.status != 0);
  BOOST_TEST(contains(r.err, "\"" + wal + "/walseg.control\" is immutable: `lsattr` shows the i attribute"), r.err);
}

// Break-it round 39 H1: --dir was checked, made, chmod'ed and opened by its path, four times, so
// a symbolic link in it re-pointed during the run sent each step to another directory: a WAL
// was started beside a user's files, and the user's directory was given mode 0700. The path is
// now resolved once, each component through the one before it, and the new-WAL check looks at
// the directory as opened. A thread flips the link between an empty place and the user's.
BOOST_AUTO_TEST_CASE(BreakIt39_H1_ALinkInDirRePointedDuringTheRunLeadsNothingAstray) {
  const std::string a = dir + "/A", b = dir + "/B", link = dir + "/L";
  fs::create_directories(a);
  fs::create_directories(b);
  fs::create_directory_symlink(a, link);
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    for (unsigned i = 0; !stop; ++i) {
      const std::string tmp = dir + "/L.tmp";
      ::unlink(tmp.c_str());
      if (::symlink(i % 2 ? b.c_str() : a.c_str(), tmp.c_str()) == 0) ::rename(tmp.c_str(), link.c_str());
    }
  });
  int astray = 0, made = 0;
  for (int i = 0; i < 150; ++i) {
    fs::remove_all(a + "/new");
    fs::remove_all(b + "/new");
    fs::create_directory(b + "/new");
    fs::permissions(b + "/new", fs::perms(0755));
    std::ofstream(b + "/new/notes.txt") << "user data\n";
    const auto r = run("create --dir '" + link + "/new' --count 1 --segment-size 1MB");
    made += r.status == 0;
    struct stat st{};
    const bool mode_kept = ::stat((b + "/new").c_str(), &st) == 0 && (st.st_mode & 07777) == 0755;
    const bool alone = entries(b + "/new") == std::vector<std::string>{"notes.txt"};
    if (!mode_kept || !alone) {
      ++astray;
      BOOST_TEST_MESSAGE("round " << i << ": mode " << std::oct << (st.st_mode & 07777) << std::dec << ", "
                                  << entries(b + "/new").size() << " entries; " << r.err);
    }
  }
  stop = true;
  flipper.join();
  BOOST_TEST(astray == 0);
  BOOST_TEST(made > 0);  // some rounds reached the empty place and made a WAL there
}

// Break-it round 35 LOW: `write --seconds 1e-3` (the least it takes) ran 0 commits, exit 0: the
// deadline was set before the clients started. Each client commits at least once.
BOOST_AUTO_TEST_CASE(TheShortestTimedWriteCommitsOncePerClient) {
  auto r = run("write --seconds 1e-3 --clients 2 --dir '" + dir + "/wal'" + k1MB);
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(r.out.rfind("0 commits", 0) != 0, r.out);
  BOOST_TEST(r.out.rfind("1 commits", 0) != 0, r.out);
}

// Break-it round 34 L3: when the run's final checkpoint (the control file's update) failed,
// write printed the error alone, not the summary of what it had acknowledged. The last
// control-file fsync fails here: the summary comes first, then the error.
BOOST_AUTO_TEST_CASE(AFailedFinalCheckpointStillPrintsWhatWasAcknowledged) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 2" + k1MB).status == 0);
  Result last{0, "", ""};
  for (int n = 1; n <= 40; ++n) {
    ::setenv("WALSEG_FAILPOINTS", ("fsync=EIO@" + std::to_string(n)).c_str(), 1);
    auto r = run("write --records 1 -c walseg.prealloc_segments=0 --dir '" + wal + "'" + k1MB);
    ::unsetenv("WALSEG_FAILPOINTS");
    if (r.status == 0) break;
    if (contains(r.err, "walseg.control.tmp")) last = r;
  }
  BOOST_TEST_REQUIRE(last.status == 1, "no run failed at the control file's fsync");
  BOOST_TEST(contains(last.out, "1 commits of 100 bytes"), last.out << last.err);
  BOOST_TEST(contains(last.err, "walseg write: stopped by the error below after 1 acknowledged commits"), last.err);
}

// Break-it round 34 L2: on a full disk the lock file's first write failed, and the empty
// walseg.lock stayed in the directory the command had made, so neither went away.
BOOST_AUTO_TEST_CASE(AFullDiskAtTheLockFileLeavesNothingBehind) {
  for (const std::string fp : {"pwrite=ENOSPC@1", "fdatasync=ENOSPC@1"}) {
    const std::string wal = dir + "/new-" + fp.substr(0, fp.find('='));
    ::setenv("WALSEG_FAILPOINTS", fp.c_str(), 1);
    auto r = run("write --records 1 --dir '" + wal + "'" + k1MB);
    ::unsetenv("WALSEG_FAILPOINTS");
    BOOST_TEST(r.status == 1, fp << ": " << r.err);
    BOOST_TEST(contains(r.err, wal + "/walseg.lock"), r.err);
    BOOST_TEST(contains(r.err, "No space left on device"), r.err);
    BOOST_TEST(!fs::exists(wal), fp);
  }
}

BOOST_AUTO_TEST_SUITE_END()
