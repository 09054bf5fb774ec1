#define BOOST_TEST_MODULE crash_model
#include <boost/test/unit_test.hpp>

// The power-loss model itself (tests/crash/crash_model.h), on hand-made event lists: what each
// rule keeps and loses at the two extremes, and what seeded random states may show. The
// recorder that produces real event lists is tested in io_record_test.cpp.

#include <fcntl.h>

#include <cerrno>
#include <fstream>
#include <optional>
#include <sstream>

#include "crash/crash_model.h"
#include "fs_test_util.h"

using namespace walseg_crash;

namespace {

/// Builds an event list as the recorder would, for files under the root "/r".
struct Script {
  std::vector<Event> ev;

  Event& add(Op op, const std::string& name, std::uint64_t ino) {
    Event e;
    e.op = op;
    e.path = "/r/" + name;
    e.dev = 1;
    e.ino = ino;
    ev.push_back(std::move(e));
    return ev.back();
  }
  void create(const std::string& name, std::uint64_t ino, int flags = O_RDWR | O_CREAT | O_EXCL) {
    add(Op::kOpen, name, ino).flags = flags;
  }
  void write(std::uint64_t ino, std::uint64_t off, std::uint64_t len, char fill, int flags = O_RDWR) {
    Event& e = add(Op::kWrite, "f", ino);
    e.offset = off;
    e.length = len;
    e.flags = flags;
    e.data.assign(len, static_cast<std::byte>(fill));
  }
  void sync(std::uint64_t ino, int err = 0, Op op = Op::kFdatasync) {
    std::uint64_t before = ev.size();
    Event& e = add(op, "f", ino);
    e.result_errno = err;
    e.covers_before = before;
  }
  void rename(const std::string& from, const std::string& to, std::uint64_t ino, Op op = Op::kRename) {
    add(op, from, ino).path2 = "/r/" + to;
  }
  void unlink(const std::string& name, std::uint64_t ino) { add(Op::kUnlink, name, ino); }
  void dir_fsync() {
    std::uint64_t before = ev.size();
    Event e;
    e.op = Op::kDirFsync;
    e.path = "/r";
    e.covers_before = before;
    ev.push_back(e);
  }
};

/// The state after every event of s, in `mode` (seeded for kRandom).
CrashState state_of(const Script& s, Mode mode, std::uint64_t seed = 1, std::size_t cut = ~std::size_t{0}) {
  CrashModel m(s.ev, "/r");
  m.advance(std::min(cut, s.ev.size()));
  BOOST_REQUIRE_MESSAGE(m.inconsistencies().empty(), m.inconsistencies().front());
  std::mt19937_64 rng(seed);
  return m.build(m.choose(mode, rng));
}

/// The content of `name` in the state, or nullopt if the name is absent.
std::optional<std::string> content(const CrashState& s, const std::string& name) {
  for (const StateFile& f : s.files)
    if (f.path == name) {
      const auto& b = s.images.at(f.inode).bytes;
      return std::string(reinterpret_cast<const char*>(b.data()), b.size());
    }
  return std::nullopt;
}

/// A durable file "f" (inode 7) of 8 kB of 'a', named durably.
Script durable_file() {
  Script s;
  s.create("f", 7);
  s.write(7, 0, 8192, 'a');
  s.sync(7);
  s.dir_fsync();
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(crash_model)

BOOST_AUTO_TEST_CASE(UnsyncedWrite_IsLostInAllLost_KeptInAllKept) {
  Script s = durable_file();
  s.write(7, 8192, 4096, 'b');
  BOOST_TEST(*content(state_of(s, Mode::kAllLost), "f") == std::string(8192, 'a'));
  BOOST_TEST(*content(state_of(s, Mode::kAllKept), "f") == std::string(8192, 'a') + std::string(4096, 'b'));
}

BOOST_AUTO_TEST_CASE(FsyncedFile_IsNotLinkedDurably_UntilItsDirectoryIsFsynced) {
  Script s;
  s.create("f", 7);
  s.write(7, 0, 100, 'a');
  s.sync(7, 0, Op::kFsync);
  BOOST_TEST(!content(state_of(s, Mode::kAllLost), "f"));
  BOOST_TEST(*content(state_of(s, Mode::kAllKept), "f") == std::string(100, 'a'));
  s.dir_fsync();
  BOOST_TEST(*content(state_of(s, Mode::kAllLost), "f") == std::string(100, 'a'));
}

BOOST_AUTO_TEST_CASE(Rename_IsAtomic_OldNameOrNewNeverBothNorNeither) {
  Script s = durable_file();
  s.rename("f", "g", 7);
  BOOST_TEST(content(state_of(s, Mode::kAllLost), "f").has_value());
  BOOST_TEST(!content(state_of(s, Mode::kAllLost), "g"));
  BOOST_TEST(content(state_of(s, Mode::kAllKept), "g").has_value());
  int old_name = 0, new_name = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    CrashState st = state_of(s, Mode::kRandom, seed);
    bool f = content(st, "f").has_value(), g = content(st, "g").has_value();
    BOOST_TEST_REQUIRE(f != g, "seed " << seed);
    old_name += f;
    new_name += g;
  }
  BOOST_TEST(old_name > 0);
  BOOST_TEST(new_name > 0);
}

// walseg.control is replaced by exchanging it with its temporary file: after a crash each
// name holds its old file or both hold the other's, never one file under both names.
BOOST_AUTO_TEST_CASE(Exchange_IsAtomic_BothNamesSwappedOrNeither) {
  Script s = durable_file();
  s.create("g", 8);
  s.write(8, 0, 100, 'b');
  s.sync(8);
  s.dir_fsync();
  s.rename("g", "f", 8, Op::kExchange);
  BOOST_TEST(*content(state_of(s, Mode::kAllLost), "f") == std::string(8192, 'a'));
  BOOST_TEST(*content(state_of(s, Mode::kAllKept), "f") == std::string(100, 'b'));
  BOOST_TEST(*content(state_of(s, Mode::kAllKept), "g") == std::string(8192, 'a'));
  int swapped = 0, kept = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    CrashState st = state_of(s, Mode::kRandom, seed);
    const std::string f = content(st, "f").value_or("none"), g = content(st, "g").value_or("none");
    BOOST_TEST_REQUIRE(f != g, "seed " << seed);
    BOOST_TEST_REQUIRE((f == std::string(100, 'b')) == (g == std::string(8192, 'a')), "seed " << seed);
    swapped += f == std::string(100, 'b');
    kept += f == std::string(8192, 'a');
  }
  BOOST_TEST(swapped > 0);
  BOOST_TEST(kept > 0);
  s.dir_fsync();
  BOOST_TEST(*content(state_of(s, Mode::kAllLost), "f") == std::string(100, 'b'));
}

BOOST_AUTO_TEST_CASE(LinkThenUnlinkFallback_CanLeaveBothNames) {
  Script s = durable_file();
  s.rename("f", "g", 7, Op::kLink);
  s.unlink("f", 7);
  bool both = false;
  for (std::uint64_t seed = 0; seed < 200 && !both; ++seed) {
    CrashState st = state_of(s, Mode::kRandom, seed);
    both = content(st, "f") && content(st, "g");
  }
  BOOST_TEST(both);
}

BOOST_AUTO_TEST_CASE(UnlinkWithoutDirectoryFsync_CanBeUndone) {
  Script s = durable_file();
  s.unlink("f", 7);
  BOOST_TEST(content(state_of(s, Mode::kAllLost), "f").has_value());
  BOOST_TEST(!content(state_of(s, Mode::kAllKept), "f"));
}

BOOST_AUTO_TEST_CASE(ODsyncWrite_IsDurableOnReturn_SizeIncluded) {
  Script s = durable_file();
  s.write(7, 8192, 4096, 'd', O_RDWR | O_DSYNC);
  BOOST_TEST(*content(state_of(s, Mode::kAllLost), "f") == std::string(8192, 'a') + std::string(4096, 'd'));
}

BOOST_AUTO_TEST_CASE(ODirectWrite_IsNotDurableBeforeTheNextFlush) {
  Script s = durable_file();
  s.write(7, 0, 4096, 'x', O_RDWR | O_DIRECT);
  BOOST_TEST(*content(state_of(s, Mode::kAllLost), "f") == std::string(8192, 'a'));
  s.sync(7);
  BOOST_TEST(*content(state_of(s, Mode::kAllLost), "f") == std::string(4096, 'x') + std::string(4096, 'a'));
}

BOOST_AUTO_TEST_CASE(FdatasyncAfterAnEioFailure_DoesNotMakeEarlierDataDurable) {
  Script s = durable_file();
  s.write(7, 8192, 4096, 'b');
  s.sync(7, EIO);
  s.sync(7);  // succeeds, but the kernel dropped the pages the failed one reported
  BOOST_TEST(*content(state_of(s, Mode::kAllLost), "f") == std::string(8192, 'a'));
  s.write(7, 16384, 4096, 'c');  // written after the failure: a later sync covers it
  s.sync(7);
  std::string lost = *content(state_of(s, Mode::kAllLost), "f");
  BOOST_TEST(lost.size() == 20480u);
  BOOST_TEST(lost.substr(8192, 4096) == std::string(4096, '\0'));
  BOOST_TEST(lost.substr(16384) == std::string(4096, 'c'));
}

BOOST_AUTO_TEST_CASE(SyncCalledBeforeAWriteCompleted_DoesNotCoverIt) {
  Script s = durable_file();
  std::uint64_t before = s.ev.size();  // another thread's fdatasync starts here
  s.write(7, 0, 4096, 'r');
  Event& sync = s.add(Op::kFdatasync, "f", 7);
  sync.covers_before = before;
  BOOST_TEST(*content(state_of(s, Mode::kAllLost), "f") == std::string(8192, 'a'));
}

BOOST_AUTO_TEST_CASE(RandomStates_TearPerBlock_AndSizeStaysBetweenSyncedAndCurrent) {
  Script s = durable_file();
  s.write(7, 0, 4 * 4096, 'n');  // two old blocks rewritten, two appended
  bool torn = false;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    std::string f = *content(state_of(s, Mode::kRandom, seed), "f");
    BOOST_TEST_REQUIRE(f.size() >= 8192u);
    BOOST_TEST_REQUIRE(f.size() <= 16384u);
    for (std::size_t b = 0; b * 4096 < f.size(); ++b) {
      std::string blk = f.substr(b * 4096, 4096);
      char old = b < 2 ? 'a' : '\0';
      std::size_t n = std::count(blk.begin(), blk.end(), 'n');
      BOOST_TEST_REQUIRE((n == blk.size() || std::count(blk.begin(), blk.end(), old) == static_cast<long>(blk.size())),
                         "seed " << seed << " block " << b << " is neither old nor new");
    }
    torn = torn || (f[0] == 'a' && f[4096] == 'n');
  }
  BOOST_TEST(torn);  // the later block kept while the earlier one was lost
}

BOOST_AUTO_TEST_CASE(TornFlag_MarksExactlyTheStatesInOrderWritebackCouldNotLeave) {
  Script s = durable_file();
  s.write(7, 8192, 8192, 'n');  // one unsynced write of two blocks
  CrashModel m(s.ev, "/r");
  m.advance(s.ev.size());
  int torn = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    std::mt19937_64 rng(seed);
    Choice c = m.choose(Mode::kRandom, rng);
    BOOST_REQUIRE_EQUAL(c.inodes.size(), 1u);
    // In order, the write reached the disk whole or not at all; torn, one block of two.
    BOOST_TEST(c.inodes[0].torn == (c.inodes[0].blocks.size() == 1), "seed " << seed);
    torn += c.inodes[0].torn;
  }
  BOOST_TEST(torn > 0);
}

BOOST_AUTO_TEST_CASE(NamesReorderedFlag_MarksALaterOperationKeptWithoutAnEarlierOne) {
  Script s;
  s.create("a", 1);
  s.create("b", 2);
  bool seen = false;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    CrashState st = state_of(s, Mode::kRandom, seed);
    const bool reordered = content(st, "b") && !content(st, "a");
    BOOST_TEST(st.names_reordered == reordered, "seed " << seed);
    seen = seen || reordered;
  }
  BOOST_TEST(seen);
}

BOOST_AUTO_TEST_CASE(CutBeforeACreate_LeavesNoFile_AndAdvanceIsIncremental) {
  Script s = durable_file();
  BOOST_TEST(state_of(s, Mode::kAllKept, 1, 0).files.empty());
  CrashModel m(s.ev, "/r");
  std::mt19937_64 rng(1);
  m.advance(2);
  BOOST_TEST(m.build(m.choose(Mode::kAllLost, rng)).files.empty());  // written, never named
  m.advance(s.ev.size());
  BOOST_TEST(m.build(m.choose(Mode::kAllLost, rng)).files.size() == 1u);
}

BOOST_AUTO_TEST_CASE(Signature_IsEqualForEqualChoices_AndDiffersWhenContentDiffers) {
  Script s = durable_file();
  s.write(7, 8192, 4096, 'b');
  CrashModel m(s.ev, "/r");
  m.advance(s.ev.size());
  std::mt19937_64 rng(1);
  BOOST_TEST(m.choose(Mode::kAllLost, rng).signature == m.choose(Mode::kAllLost, rng).signature);
  BOOST_TEST(m.choose(Mode::kAllLost, rng).signature != m.choose(Mode::kAllKept, rng).signature);
}

BOOST_AUTO_TEST_CASE(RenamedWhenDurable_TellsAFilledAndSyncedInstallFromAHastyOne) {
  Script s;
  s.create("tmp", 7);
  s.write(7, 0, 4096, '\0');
  s.sync(7, 0, Op::kFsync);
  s.rename("tmp", "seg", 7);
  s.create("tmp2", 8);
  s.write(8, 0, 4096, '\0');
  s.rename("tmp2", "seg2", 8);  // no fsync before the rename
  CrashState st = state_of(s, Mode::kAllKept);
  for (const StateFile& f : st.files) BOOST_TEST(f.renamed_when_durable == (f.path == "seg"), f.path);
}

BOOST_AUTO_TEST_CASE(LoadExisting_TakesTheTreeOnDiskAsDurable) {
  walseg_test::TempDir dir;
  std::filesystem::create_directories(dir / "sub");
  std::ofstream(dir / "sub/old", std::ios::binary) << "before";
  const std::vector<Event> none;
  CrashModel m(none, dir.path());
  m.load_existing();
  std::mt19937_64 rng(1);
  CrashState st = m.build(m.choose(Mode::kAllLost, rng));
  BOOST_TEST(st.dirs == std::vector<std::string>{"sub"});
  BOOST_TEST(*content(st, "sub/old") == "before");
}

BOOST_AUTO_TEST_CASE(Materialise_WritesFilesHolesAndHardLinks) {
  Script s;
  s.create("f", 7);
  s.write(7, 8192, 10, 'z');
  s.rename("f", "g", 7, Op::kLink);
  walseg_test::TempDir dir;
  materialise(state_of(s, Mode::kAllKept), dir / "state");
  auto st_f = walseg_test::stat_path(dir / "state/f");
  auto st_g = walseg_test::stat_path(dir / "state/g");
  BOOST_TEST(st_f.st_ino == st_g.st_ino);
  BOOST_TEST(st_f.st_size == 8202);
  std::ifstream in(dir / "state/f", std::ios::binary);
  std::stringstream got;
  got << in.rdbuf();
  BOOST_TEST(got.str() == std::string(8192, '\0') + std::string(10, 'z'));
}

BOOST_AUTO_TEST_SUITE_END()
