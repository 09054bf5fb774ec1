// Test fixture shared by wal_encoder_test and wal_reader_test: a temporary WAL directory whose
// segment files are real, zero-filled files of the segment size, written through the encoder's
// sink, plus helpers that read and edit bytes at an LSN (LevelDB log_test's way of breaking
// things on purpose).
//
// Not a unit of its own (no _test.cpp): included by the two test files only.
// Thread-safety: none. Lifetime: the directory is removed when the fixture is destroyed.
#pragma once

#include <fcntl.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "walseg/file.h"
#include "walseg/segment_name.h"
#include "walseg/wal_encoder.h"

namespace walseg::test {

constexpr std::uint64_t kOneMiB = std::uint64_t{1} << 20;

/// Deterministic payload bytes: record `seed`'s bytes differ from every other record's.
inline std::vector<std::byte> payload_of(std::size_t size, std::uint64_t seed) {
  std::vector<std::byte> p(size);
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& b : p) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<std::byte>(x & 0xFF);
  }
  return p;
}

class WalDir {
 public:
  explicit WalDir(EncoderParams params) : params_(params) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "walseg-wal-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
    insert_ = wal_start_lsn(params_);
  }
  ~WalDir() {
    files_.clear();
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  WalDir(const WalDir&) = delete;
  WalDir& operator=(const WalDir&) = delete;

  const std::string& path() const { return path_; }
  const EncoderParams& params() const { return params_; }
  Lsn insert_pos() const { return insert_; }
  Lsn last_record() const { return prev_; }
  const std::vector<Lsn>& record_lsns() const { return lsns_; }

  std::string segment_path(SegNo segno) const {
    return path_ + "/" +
           segment_file_name(params_.timeline, segno, params_.segment_size_bytes);
  }
  /// The segment's file, created zero-filled at the segment size on first use.
  File& segment(SegNo segno) {
    auto it = files_.find(segno);
    if (it != files_.end()) return it->second;
    File f = File::open(segment_path(segno), O_RDWR | O_CREAT);
    if (f.stat().st_size == 0) f.ftruncate(params_.segment_size_bytes);
    return files_.emplace(segno, std::move(f)).first->second;
  }
  /// A sink that writes encoded bytes into the segment files.
  WalSink sink() {
    return [this](Lsn lsn, const std::byte* data, std::size_t len) { write(lsn, data, len); };
  }
  void write(Lsn lsn, const std::byte* data, std::size_t len) {
    const std::uint64_t seg = params_.segment_size_bytes;
    segment(lsn / seg).pwrite_all(data, len, lsn % seg);
  }
  std::vector<std::byte> read(Lsn lsn, std::size_t len) {
    const std::uint64_t seg = params_.segment_size_bytes;
    std::vector<std::byte> out(len);
    segment(lsn / seg).pread(out.data(), len, lsn % seg);
    return out;
  }
  void poke(Lsn lsn, std::byte value) { write(lsn, &value, 1); }
  /// Inverts the bits of the byte at lsn.
  void flip(Lsn lsn) { poke(lsn, ~read(lsn, 1)[0]); }
  void zero(Lsn lsn, std::size_t len) {
    const std::vector<std::byte> zeros(len);
    write(lsn, zeros.data(), len);
  }

  /// Encodes one record at the insert position (chained to the previous one) and writes it.
  Lsn append(std::span<const std::byte> payload, std::uint8_t info = 0) {
    Lsn start = 0;
    insert_ = encode_record(params_, insert_, prev_, info, payload, sink(), &start);
    prev_ = start;
    lsns_.push_back(start);
    return start;
  }
  Lsn append_size(std::size_t size) { return append(payload_of(size, lsns_.size())); }

  /// Appends one record that ends exactly `gap` bytes (a multiple of 8) before the end of a
  /// page, first appending empty records while the current page has too little room.
  Lsn append_to_page_end(std::size_t gap = 0) {
    const std::uint64_t blk = params_.block_size_bytes;
    for (;;) {
      Lsn pos = insert_;
      if (pos % blk == 0) pos += page_header_bytes(params_, pos);
      const std::uint64_t room = blk - pos % blk - gap;
      if (pos % blk + gap < blk && room >= kRecordHeaderBytes) {
        const std::size_t n = room >= kRecordHeaderBytes + kDataHeaderLongBytes + 256
                                  ? room - kRecordHeaderBytes - kDataHeaderLongBytes
                              : room >= kRecordHeaderBytes + kDataHeaderShortBytes
                                  ? room - kRecordHeaderBytes - kDataHeaderShortBytes
                                  : 0;
        return append_size(n);
      }
      append_size(0);
    }
  }

  /// Renames segment `from` to `to`, as the segment manager recycles an old segment: the file
  /// keeps its earlier life's pages.
  void recycle(SegNo from, SegNo to) {
    files_.erase(from);
    std::filesystem::rename(segment_path(from), segment_path(to));
  }
  void remove(SegNo segno) {
    files_.erase(segno);
    std::filesystem::remove(segment_path(segno));
  }

 private:
  EncoderParams params_;
  std::string path_;
  std::map<SegNo, File> files_;
  Lsn insert_ = 0;
  Lsn prev_ = 0;
  std::vector<Lsn> lsns_;
};

}  // namespace walseg::test
