// How every integer and every seconds option of the walseg tool reads its value: one rule for
// all subcommands, applied as a CLI11 transform before CLI11 converts the text.
//
// Integers are decimal ("10") or hexadecimal with 0x/0X ("0xA"). A leading zero ("010") is
// refused, with what to write instead: CLI11, like C's strtol(…, 0), reads it as octal (8), and
// a DBA who copies "00000010" out of a segment file name means hexadecimal 16; neither is
// guessed. Seconds are plain decimal reals ("3", "0.5", "2e1"); nan, inf, hexadecimal floats and
// values that overflow are refused. Every refusal names the option and the valid range.
//
// Not for: sizes ("16MB": parse_size_option in tool_util.h), LSNs, settings (-c, guc).
// Thread-safety: the validators are values; call them from main's thread (CLI11 parses there).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace walseg::tool {

/// Transform for an integer option in [min, max]: accepts decimal or 0x hex, rewrites the
/// value to plain decimal (so that CLI11's own base-0 conversion sees no prefix and no leading
/// zero), and otherwise returns CLI11 the reason. Also checks each item of a delimited list.
CLI::Validator integer_in(std::uint64_t min, std::uint64_t max);

/// Transform for a seconds option: a finite decimal real, greater than `min` (or equal to it
/// when min_inclusive), at most `max`.
CLI::Validator seconds_in(double min, bool min_inclusive, double max);

/// Check for an option that names a file (--ack-log, --json, --config): an empty value is
/// refused, since it read as "not given" and the run went on without the file, in silence
/// (break-it round 22: `write --ack-log ""` wrote no ack log and said nothing).
CLI::Validator file_named();

/// Check for every other option that takes text (a size, a method, a directory, an LSN, an
/// item of a comma list): an empty value is refused as a usage error, since it read as "not
/// given" and the run went on with the default (break-it round 23 M4: `--segment-size ''`,
/// `create --method ''`, `dump --start ''`; L1: `--methods sparse,,none`).
/// For --dir: an empty name is a usage error (exit 2), as bench's is, not a failed open.
CLI::Validator dir_given();
CLI::Validator value_given();

/// Check for a comma-separated list option (`--methods a,b`), given without CLI11's delimiter
/// (which drops empty items): refuses an empty value and an empty item ("a,,b", "a,") as
/// value_given does. Split the values with split_list.
CLI::Validator list_items_given();

/// Every item of every value of a list option checked by list_items_given, in order.
std::vector<std::string> split_list(const std::vector<std::string>& values);

/// Parses `text` as integer_in does. Returns "" and sets *value, or returns the reason.
std::string parse_integer(const std::string& text, std::uint64_t min, std::uint64_t max,
                          std::uint64_t* value);

}  // namespace walseg::tool
