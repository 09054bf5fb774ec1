// K client threads committing through one WalWriter: each appends a record and waits for it
// to be flushed, as a database session commits. Shared by `walseg write` and the bench.
//
// Every payload says who wrote it, so that a check after a crash can tell a record of this
// run from a stale one (bench/powercut.sh): its first kPayloadTagBytes bytes are the run id
// (8 bytes, random per run_clients call), the client number (4) and the client's sequence
// number (8, from 0), little-endian; the rest is 0x5a as before. A payload shorter than
// that carries the tag's first bytes only. Sizes and counts are unchanged.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "output_file.h"
#include "walseg/wal_writer.h"

namespace walseg::tool {

inline constexpr std::size_t kPayloadTagBytes = 20;
inline constexpr std::byte kPayloadFill{0x5a};

/// `walseg write --ack-log FILE`: what the clients were told is durable, one line per event,
/// each written by a single write(2) to an O_APPEND descriptor, so a kill cannot tear or
/// interleave lines. The file is outside the WAL's filesystem; a kill loses nothing the
/// kernel accepted, so it is not synced (a power cut of the checker's own disk is not the
/// point). Lines, numbers in decimal:
///   start RUN RESUME_LSN CLIENTS     when the clients start (RESUME_LSN: the writer's insert_lsn)
///   ack RUN CLIENT SEQ END_LSN       after flush(END_LSN) returned for that client's record SEQ
/// Thread-safety: ack() may be called from any thread.
class AckLog {
 public:
  /// Appends to `file`, opened with O_APPEND (OutputFile::open, which refuses a file of a WAL).
  explicit AckLog(OutputFile file) : file_(std::move(file)) {}
  void start(std::uint64_t run, Lsn resume_lsn, int clients);
  void ack(std::uint64_t run, int client, std::uint64_t seq, Lsn end_lsn);

 private:
  void line(const std::string& text);  // throws walseg::Error
  OutputFile file_;
  // One line at a time: a line cut short by a full disk is cut off again before anyone else
  // appends (break-it round 38 L1: other clients' lines followed a torn one), and after a
  // failure nothing more is written.
  std::mutex mu_;
  bool failed_ = false;
};

struct ClientRun {
  std::vector<double> us;  ///< one sample per commit: append + flush, microseconds
  double seconds = 0;      ///< wall time of the whole run
  std::uint64_t run_id = 0;  ///< in every payload's tag (see above)
  std::exception_ptr failure;  ///< with rethrow = false: the error that ended the run, if any
};

/// Runs `clients` threads until `commits` commits are done in total or, if seconds > 0,
/// until that many seconds pass. Rethrows the first error a client met (walseg::Error), else
/// the checkpointer's.
/// checkpoint_segment_bytes > 0 (the WAL's segment size): a Checkpointer (checkpointer.h)
/// retires every segment before the one being written once the writer is a quarter into it,
/// as PostgreSQL's checkpoints do, so that with walseg.recycle = on the steady state runs on
/// recycled segments instead of on a fill as fast as the WAL.
/// ack_log, if given, records the start and every acknowledgement (AckLog); it must outlive
/// the call. stop (if set) is asked before each commit; once it returns true every client
/// stops after its commit in progress and the run returns what was measured (bench's stop
/// signals). rethrow = false: an error is returned in `failure` with what was measured up to
/// it (every sample is an acknowledged commit), for a summary of what was acknowledged.
ClientRun run_clients(WalWriter& w, std::size_t payload_bytes, int clients, std::uint64_t commits,
                      double seconds, std::uint64_t checkpoint_segment_bytes = 0, AckLog* ack_log = nullptr,
                      const std::function<bool()>& stop = {}, bool rethrow = true);

}  // namespace walseg::tool
