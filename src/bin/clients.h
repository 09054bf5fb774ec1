// K client threads committing through one WalWriter: each appends a record and waits for it
// to be flushed, as a database session commits. Shared by `walseg write` and the bench.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "walseg/wal_writer.h"

namespace walseg::tool {

struct ClientRun {
  std::vector<double> us;  ///< one sample per commit: append + flush, microseconds
  double seconds = 0;      ///< wall time of the whole run
};

/// Runs `clients` threads until `commits` commits are done in total or, if seconds > 0,
/// until that many seconds pass. Rethrows the first error a client met (walseg::Error).
/// checkpoint_segment_bytes > 0 (the WAL's segment size): a checkpointer thread also calls
/// truncate_before for every segment before the one being written once the writer is a
/// quarter into it, as PostgreSQL's checkpoints do, so that with walseg.recycle = on the
/// steady state runs on recycled segments instead of on a fill as fast as the WAL.
/// stop (if set) is asked before each commit; once it returns true every client stops after
/// its commit in progress and the run returns what was measured (bench's stop signals).
ClientRun run_clients(WalWriter& w, std::size_t payload_bytes, int clients, std::uint64_t commits,
                      double seconds, std::uint64_t checkpoint_segment_bytes = 0,
                      const std::function<bool()>& stop = {});

}  // namespace walseg::tool
