// libFuzzer target for the WAL reader and recovery (wal_reader.h): WalReader over a directory
// (opened from walseg.control's options and from plain options that learn the sizes from the
// lowest segment), find_end_of_wal, seek and find_next_record, on WAL that walseg's own
// encoder wrote and structure-aware mutations then damaged (wal_model.h, wal_mutate.h).
//
// Besides crashes, hangs (libFuzzer's -timeout) and sanitizer reports, the target aborts when
//  * a returned record fails its identity, content or chain properties (wal_check.h);
//  * a record no mutation touched is not returned, in order, from the start of the WAL (the
//    prefix property: records ending at or below WalModel::first_change), or, for a seek to
//    such a record's LSN or a find_next_record before it, not found there;
//  * an unmutated WAL does not read back whole: every record, end_lsn at its end, and no
//    corruption unless the control file's durable LSN lies past the end;
//  * find_end_of_wal disagrees with reading the same reader's records one by one;
//  * next() or find_next_record throws at all, or open, seek, find_end_of_wal or read_control
//    throws anything but walseg::Error with EINVAL (there are no I/O errors on the scratch
//    directory, and damaged data is a stop, not an exception);
//  * read_control disagrees with decode_control over the same bytes.
// Build and run: tests/fuzz/run_fuzz.sh SECONDS; one input: build-fuzz/bin/wal_reader_fuzz FILE
#include <cerrno>
#include <cstdint>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "wal_check.h"
#include "wal_model.h"
#include "wal_mutate.h"
#include "walseg/error.h"
#include "walseg/wal_control.h"
#include "walseg/wal_reader.h"

using namespace walfuzz;

namespace {

// WALSEG_FUZZ_VERBOSE=1 prints what each run built and read, for triage of one input.
const bool kVerbose = std::getenv("WALSEG_FUZZ_VERBOSE") != nullptr;

constexpr std::size_t kQueryRecords = 4;

// Every reader reports here. WalReporter's contract: called at most once per stop, and only
// when the stop is corruption; settle() checks the calls since the last positioning against
// the stop that was then read.
class CountingReporter : public walseg::WalReporter {
 public:
  void corruption(const walseg::WalStop& stop) override {
    check(stop.corruption, "the reporter was told of a stop that is not corruption");
    ++calls_;
  }
  void reset() { calls_ = 0; }
  void settle(bool corruption) {
    check(calls_ == (corruption ? 1 : 0), "the reporter was not told exactly once of corruption");
    calls_ = 0;
  }

 private:
  int calls_ = 0;
};
CountingReporter g_reporter;

struct ReadAll {
  std::vector<Lsn> lsns;
  Lsn last_lsn = 0;
  std::uint32_t last_xid = 0;
  walseg::WalStop stop;
};

// A call that may only fail as walseg::Error with EINVAL (a size, position or control file
// that is not valid); the caller learns whether it failed.
template <class F>
bool einval_only(F&& f) {
  try {
    f();
    return true;
  } catch (const walseg::Error& e) {
    if (e.errnum() != EINVAL) std::fprintf(stderr, "unexpected error: %s\n", e.what());
    check(e.errnum() == EINVAL, "a call failed with an error other than EINVAL");
    return false;
  }
}

// Reads the records from where the reader stands, checking each one: all of them, or at most
// `limit` (a query's reads stop early, so that eight queries cost little more than one).
ReadAll read_all(const WalModel& m, walseg::WalReader& reader, ChainCheck& chain,
                 std::size_t limit = SIZE_MAX) {
  ReadAll r;
  walseg::WalRecord rec;
  while (r.lsns.size() < limit && reader.next(&rec)) {
    const ReaderGeometry g = geometry_of(reader);
    check_record(m, g, rec);
    chain.add(g, rec);
    r.lsns.push_back(rec.lsn);
    r.last_lsn = rec.lsn;
    r.last_xid = rec.xid;
  }
  if (r.lsns.size() == limit) return r;
  r.stop = reader.stop();
  if (chain.last_end()) check(r.stop.end_lsn == *chain.last_end(), "stop's end_lsn is not the last record's end");
  check(!reader.next(&rec), "next() returned a record after it had stopped");
  g_reporter.settle(r.stop.corruption);
  return r;
}

// Number of original records that end at or below the first change: the reader must return
// all of them.
std::size_t intact_records(const WalModel& m) {
  std::size_t n = 0;
  while (n < m.records.size() && m.records[n].end <= m.first_change) ++n;
  return n;
}

void check_whole_read(const WalModel& m, const ReadAll& r, bool trusted, bool durable_past_end) {
  if (!trusted) return;
  const std::size_t intact = intact_records(m);
  check(r.lsns.size() >= intact, "a record no mutation touched was not returned");
  for (std::size_t i = 0; i < intact; ++i)
    check(r.lsns[i] == m.records[i].lsn, "an untouched record was returned at another LSN");
  if (m.mutated) return;
  check(r.lsns.size() == m.records.size(), "an unmutated WAL returned other records");
  check(r.stop.end_lsn == m.end, "an unmutated WAL ended elsewhere");
  check(r.stop.corruption == durable_past_end, "an unmutated WAL was classified wrongly");
}

// find_end_of_wal must be the same reading as the record loop.
void check_recovery(const std::string& dir, const walseg::WalReaderOptions& o, const ReadAll& r,
                    std::optional<Lsn> from) {
  walseg::RecoveryResult res;
  g_reporter.reset();
  if (!einval_only([&] { res = walseg::find_end_of_wal(dir, o, from); })) return;
  g_reporter.settle(res.corruption);
  check(res.records == r.lsns.size() && res.end_lsn == r.stop.end_lsn &&
            res.corruption == r.stop.corruption && res.last_record_lsn == r.last_lsn &&
            res.last_xid == r.last_xid,
        "find_end_of_wal disagrees with reading the records");
}

// The first original record that starts at or after lsn.
const OriginalRecord* first_at_or_after(const WalModel& m, Lsn lsn) {
  for (const OriginalRecord& r : m.records)
    if (r.lsn >= lsn) return &r;
  return nullptr;
}

// A seek on the reader that has read the WAL already (a seek after a stop, and with the
// system identifier it has learnt), or, for kEndFrom, on a fresh one, whose reading
// find_end_of_wal(from) must repeat.
void seek_query(const WalModel& m, walseg::WalReader& reused, const Query& q,
                const walseg::WalReaderOptions& o, const std::string& dir, bool trusted) {
  const bool whole = q.kind == Query::Kind::kEndFrom;
  std::optional<walseg::WalReader> fresh;
  if (whole && !einval_only([&] { fresh.emplace(walseg::WalReader::open(dir, o)); })) return;
  walseg::WalReader& reader = whole ? *fresh : reused;
  ChainCheck chain;
  g_reporter.reset();
  if (!einval_only([&] { reader.seek(q.lsn); })) return;
  const ReadAll r = read_all(m, reader, chain, whole ? SIZE_MAX : kQueryRecords);
  if (whole) check_recovery(dir, o, r, q.lsn);
  if (!trusted) return;
  // A seek to a record's LSN reads that record; one to a page boundary of the WAL, the first
  // record that starts on or after it (the continuation skipped): if no mutation touched it.
  const OriginalRecord* want = first_at_or_after(m, q.lsn);
  const bool page = q.lsn % m.params.block_size_bytes == 0 && q.lsn >= m.start;
  if (want != nullptr && want->end <= m.first_change && (want->lsn == q.lsn || page))
    check(!r.lsns.empty() && r.lsns.front() == want->lsn, "a seek to an untouched record missed it");
}

void find_query(const WalModel& m, walseg::WalReader& reader, const Query& q, bool trusted) {
  g_reporter.reset();
  const std::optional<Lsn> found = reader.find_next_record(q.lsn);
  ChainCheck chain;
  walseg::WalRecord rec;
  if (!found) {
    check(!reader.next(&rec), "next() returned a record after find_next_record found none");
    g_reporter.settle(reader.stop().corruption);
  } else {
    check(*found >= q.lsn, "find_next_record found a record before the LSN asked for");
    check(reader.next(&rec) && rec.lsn == *found, "next() did not return the record found");
    const ReaderGeometry g = geometry_of(reader);
    check_record(m, g, rec);
    chain.add(g, rec);
    read_all(m, reader, chain, kQueryRecords);
  }
  if (!trusted) return;
  const std::uint64_t blk = m.params.block_size_bytes;
  const OriginalRecord* want = first_at_or_after(m, q.lsn);
  if (want == nullptr) {
    if (!m.mutated) check(!found, "find_next_record found a record past the end of WAL");
  } else if (q.lsn - q.lsn % blk >= m.start && want->end <= m.first_change) {
    check(found == want->lsn, "find_next_record missed an untouched record");
  }
}

struct Mode {
  walseg::WalReaderOptions options;
  bool trusted = false;  // the options say what the WAL was written with
  std::optional<walseg::WalReader> reader;
};

void read_mode(const WalModel& m, const std::string& dir, Mode& mode, bool durable_past_end) {
  mode.options.reporter = &g_reporter;
  g_reporter.reset();
  if (!einval_only([&] { mode.reader.emplace(walseg::WalReader::open(dir, mode.options)); })) {
    check(!mode.trusted || intact_records(m) == 0, "a WAL with untouched records did not open");
    return;
  }
  ChainCheck chain;
  const ReadAll r = read_all(m, *mode.reader, chain);
  if (kVerbose)
    std::fprintf(stderr, "%s reader: %zu records, stop: %s\n", mode.trusted ? "trusted" : "untrusted",
                 r.lsns.size(), walseg::describe(r.stop).c_str());
  check_whole_read(m, r, mode.trusted, durable_past_end);
  check_recovery(dir, mode.options, r, std::nullopt);
}

// The control file as read_control sees it, checked against decode_control of its bytes.
std::optional<walseg::WalControl> control_of(const WalModel& m, const std::string& dir) {
  std::optional<walseg::WalControl> read;
  const bool ok = einval_only([&] { read = walseg::read_control(dir); });
  std::optional<walseg::WalControl> decoded;
  if (m.control && m.control->size() == walseg::kControlFileBytes)
    decoded = walseg::decode_control(*m.control, nullptr);
  check(ok == (!m.control || decoded.has_value()), "read_control and decode_control disagree");
  check(read == decoded, "read_control returned other values than decode_control");
  return read;
}

void run(const WalModel& m, const std::string& dir) {
  if (kVerbose)
    std::fprintf(stderr, "WAL: %u-byte pages, %zu entries, %zu records %s..%s, first change %s%s%s, %zu queries\n",
                 m.params.block_size_bytes, m.files.size(), m.records.size(), walseg::format_lsn(m.start).c_str(),
                 walseg::format_lsn(m.end).c_str(), walseg::format_lsn(m.first_change).c_str(),
                 m.mutated ? ", mutated" : "", m.control_changed ? ", control changed" : "", m.queries.size());
  Mode plain, ctl;
  plain.options.timeline = m.params.timeline;
  plain.trusted = true;
  read_mode(m, dir, plain, false);
  if (const auto c = control_of(m, dir)) {
    ctl.options = walseg::reader_options_for(*c);
    ctl.trusted = !m.control_changed;
    read_mode(m, dir, ctl, c->durable_lsn > m.end);
  }
  for (const Query& q : m.queries) {
    Mode& mode = q.with_control ? ctl : plain;
    if (!mode.reader) continue;
    if (q.kind == Query::Kind::kFindNext)
      find_query(m, *mode.reader, q, mode.trusted);
    else
      seek_query(m, *mode.reader, q, mode.options, dir, mode.trusted);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Cursor c(data, size);
  WalModel m = WalModel::build(c);
  apply_mutations(c, m);
  const ScratchDir& dir = ScratchDir::get();
  dir.clear();
  m.write_to(dir.path());
  try {
    run(m, dir.path());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exception escaped: %s\n", e.what());
    check(false, "an exception escaped from a reader call that may not throw it");
  }
  return 0;
}
