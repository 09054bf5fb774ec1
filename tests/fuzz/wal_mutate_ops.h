// The operations of wal_mutate.h and the choosers they share (private to wal_reader_fuzz):
// byte-level ones are in wal_mutate.cpp, file-level, control and query ones in
// wal_mutate_files.cpp. Each reads its arguments from the cursor and changes the model.
// Build and run: tests/fuzz/run_fuzz.sh SECONDS (target wal_reader_fuzz).
#pragma once

#include <string>

#include "fuzz_util.h"
#include "wal_model.h"

namespace walfuzz {

/// Any entry of the model (nullptr when there is none).
const std::string* pick_entry(Cursor& c, WalModel& m);
/// Any original record (nullptr when there is none).
const OriginalRecord* pick_record(Cursor& c, const WalModel& m);
/// The offset of a page of entry `name` within its bytes, or just past them.
std::uint64_t pick_page(Cursor& c, const WalModel& m, const std::string& name);
/// The LSN of (name, off) when name is a segment name, else off: the "here" of mutate_value.
Lsn lsn_of_entry(const std::string& name, std::uint64_t off);
/// A new value for a field that holds `old` at WAL position `here`: random, a small step, one
/// bit flipped, an original record's LSN or end, or a value at a check's boundary.
std::uint64_t mutate_value(Cursor& c, const WalModel& m, std::uint64_t old, Lsn here);

void truncate_entry(Cursor& c, WalModel& m);
void remove_entry(Cursor& c, WalModel& m);
void move_entry(Cursor& c, WalModel& m);
void swap_entries(Cursor& c, WalModel& m);
void ready_stamp(Cursor& c, WalModel& m);
void irregular(Cursor& c, WalModel& m);
void control_value(Cursor& c, WalModel& m);
void control_bytes(Cursor& c, WalModel& m);
void add_query(Cursor& c, WalModel& m);

}  // namespace walfuzz
