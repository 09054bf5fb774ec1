// Structure-aware mutations of a WalModel for wal_reader_fuzz: what power loss, torn writes,
// media damage, recycled files and people leave in a WAL directory, aimed at the fields the
// reader checks rather than at random bytes.
//
// The rest of the input after WalModel::build is a list of operations, each an opcode byte
// (taken modulo the number of operations) and its arguments; at most kMaxMutations are read:
//   page field     magic, info, tli, pageaddr, rem_len, sysid, seg_size, blcksz of any page
//   record field   xl_tot_len, xl_xid, xl_prev, xl_info, xl_rmid, padding, xl_crc of any
//                  record (bytes found across page headers), optionally with the CRC fixed
//                  after, so that only the identity checks (prev-link, epoch) can catch it
//   data header    one of its bytes, optionally with the CRC fixed
//   payload byte   flipped, optionally with the CRC fixed (a valid record with new content)
//   truncate       a file at a page, record, 4 kB or arbitrary offset
//   remove, move, swap   segments (a move may go to another timeline or the LSN space's end)
//   ready stamp    over a segment's first page (this or another system), perhaps alone
//   zero range     a sector, a 4 kB block, a page or any length (a torn or lost write)
//   copy page      one page over another (a stale page from an earlier life)
//   overwrite      up to 32 bytes from the input anywhere
//   irregular      a segment name made a symlink, directory, FIFO or foreign file
//   control value  system id, sizes, timeline, flags, oldest/durable LSN or epoch, CRC valid
//   control bytes  the control file removed, resized or a byte flipped (CRC now wrong)
//   query          a seek / find_next_record / find_end_of_wal(from) to run afterwards
// Every change lowers WalModel::first_change (or sets control_changed), which the prefix
// property of wal_reader_fuzz.cpp relies on.
//
// Not for: anything but the fuzz target. Thread-safety: none.
// Build and run: tests/fuzz/run_fuzz.sh SECONDS (target wal_reader_fuzz).
#pragma once

#include "fuzz_util.h"
#include "wal_model.h"

namespace walfuzz {

inline constexpr int kMaxMutations = 24;

/// Applies the operations the rest of the input describes to m.
void apply_mutations(Cursor& c, WalModel& m);

}  // namespace walfuzz
