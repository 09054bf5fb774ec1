// The I/O scheduling class of the calling thread (ioprio_set(2)), for background segment fills
// (walseg.fill_io_class). With the idle class, the block layer's schedulers that honour I/O
// priorities (mq-deadline, bfq) dispatch a fill's writes after the commits' own, so the fill
// costs the commits' median less; schedulers that do not (none, kyber) ignore it. Writes the
// kernel's flusher threads issue for the page cache keep the flusher's class: only what the
// thread submits itself (O_DIRECT, sync_file_range, fsync) is affected. As RocksDB's
// Env::LowerThreadPoolIOPriority for its background threads.
//
// Thread-safety: affects only the calling thread.
#pragma once

#include "walseg/config.h"

namespace walseg {

/// Puts the calling thread's I/O in class `c` (best_effort: the default class at its default
/// level; idle). Throws walseg::Error("ioprio_set") with errno's text on failure.
void set_thread_io_class(FillIoClass c);

/// The calling thread's class as ioprio_get(2) reports it (a thread never set reports the
/// default, best_effort). Throws walseg::Error("ioprio_get").
FillIoClass thread_io_class();

}  // namespace walseg
