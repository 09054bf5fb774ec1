// K client threads committing through one WalWriter: each appends a record and waits for it
// to be flushed, as a database session commits. Shared by `walseg write` and the bench.
#pragma once

#include <cstdint>
#include <vector>

#include "walseg/wal_writer.h"

namespace walseg::tool {

struct ClientRun {
  std::vector<double> us;  ///< one sample per commit: append + flush, microseconds
  double seconds = 0;      ///< wall time of the whole run
};

/// Runs `clients` threads until `commits` commits are done in total or, if seconds > 0,
/// until that many seconds pass. Rethrows the first error a client met (walseg::Error).
ClientRun run_clients(WalWriter& w, std::size_t payload_bytes, int clients, std::uint64_t commits,
                      double seconds);

}  // namespace walseg::tool
