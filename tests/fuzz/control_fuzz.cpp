// libFuzzer target for the small codecs of wal_format.h: walseg.control (decode_control, and
// read_control over the same bytes as a file), the ready stamp, and the page and record
// header codecs the reader decodes every page and record with.
//
// The first input byte chooses what else is tried: bit 0 also checks the rest with its
// control CRC made right, bit 1 with its ready stamp CRC made right (so the checks after the
// CRC are reached, which random bytes almost never do), bit 2 also writes the bytes as
// walseg.control and reads them back through read_control. The rest of the input is the
// bytes. Besides crashes and sanitizer reports, the target aborts when a property fails:
//  * decode_control accepts exactly what the layout allows (magic, CRC, zero padding,
//    version 1, flags 0 or kControlAppendMode, valid segment and block sizes, block <=
//    segment, timeline != 0, oldest LSN at a segment start) and explains every refusal; a decoded control
//    re-encodes to the same 56 bytes, and any one bit flipped in them is refused;
//  * read_control refuses a file of any other size than kControlFileBytes, and otherwise
//    returns what decode_control returns (or refuses exactly when it refuses), with EINVAL;
//  * decode_ready_stamp accepts exactly a stamp magic, the long-header info and a right CRC,
//    and the stamp it decodes re-encodes to the same magic, info, identity and CRC bytes;
//  * a page or record header decodes and re-encodes to its own bytes (padding aside).
// Build and run: tests/fuzz/run_fuzz.sh SECONDS; one input: build-fuzz/bin/control_fuzz FILE
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "walseg/error.h"
#include "walseg/wal_control.h"
#include "walseg/wal_format.h"

using namespace walseg;
using walfuzz::check;

namespace {

using Bytes = std::vector<std::byte>;
constexpr std::size_t kControlDataBytes = kControlCrcOffset + 4;

bool spec_control(const Bytes& b) {
  if (b.size() < kControlDataBytes) return false;
  const std::byte* p = b.data();
  if (load_le32(p) != kControlMagic || load_le32(p + kControlCrcOffset) != crc32c(std::span(p, kControlCrcOffset)))
    return false;
  // The padding after the CRC is zeros as written; anything else there is damage.
  for (std::size_t i = kControlDataBytes; i < b.size(); ++i)
    if (b[i] != std::byte{0}) return false;
  const std::uint32_t seg = load_le32(p + kControlSegSizeOffset), blk = load_le32(p + kControlBlockSizeOffset);
  return load_le32(p + 4) == kControlVersion && (load_le32(p + kControlFlagsOffset) & ~kControlAppendMode) == 0 &&
         is_valid_segment_size(seg) && is_valid_wal_block_size(blk) && blk <= seg &&
         load_le32(p + kControlTimelineOffset) != 0 && load_le64(p + kControlOldestLsnOffset) % seg == 0;
}

void check_control(const Bytes& b, unsigned flip) {
  std::string why;
  const auto c = decode_control(b, &why);
  check(c.has_value() == spec_control(b), "decode_control disagrees with the control layout");
  if (!c) {
    check(!why.empty(), "decode_control refused without a reason");
    return;
  }
  Bytes again(kControlFileBytes);
  encode_control(*c, again.data());
  check(std::memcmp(again.data(), b.data(), kControlDataBytes) == 0, "a decoded control re-encodes otherwise");
  again[flip % kControlDataBytes] ^= static_cast<std::byte>(1u << (flip / kControlDataBytes % 8));
  check(!decode_control(again, nullptr), "a control with one bit flipped was accepted");
}

void check_read_control(const Bytes& b) {
  const walfuzz::ScratchDir& dir = walfuzz::ScratchDir::get();
  dir.clear();
  const std::string path = dir.path() + "/" + kControlFileName;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  check(fd >= 0 && (b.empty() || ::write(fd, b.data(), b.size()) == static_cast<ssize_t>(b.size())),
        "cannot write the scratch control file");
  ::close(fd);
  const auto decoded = b.size() == kControlFileBytes ? decode_control(b, nullptr) : std::nullopt;
  try {
    check(read_control(dir.path()) == decoded && decoded.has_value(), "read_control accepted what it may not");
  } catch (const Error& e) {
    check(e.errnum() == EINVAL && !decoded, "read_control refused a valid control file");
  }
}

void check_stamp(const Bytes& b) {
  if (b.size() < kReadyStampBytes) return;
  const auto h = decode_ready_stamp(b.data());
  const PageHeader raw = decode_page_header(b.data());
  const bool spec = raw.magic == kReadySegmentMagic && raw.info == kPageLongHeader &&
                    load_le32(b.data() + kReadyStampCrcOffset) == crc32c(std::span(b.data(), kLongPageHeaderBytes));
  check(h.has_value() == spec, "decode_ready_stamp disagrees with the stamp layout");
  if (!h) return;
  Bytes again(kReadyStampBytes);
  encode_ready_stamp(*h, again.data());
  // Bytes 16-23 (rem_len and padding) are zero in the layout but not checked on decode.
  check(std::memcmp(again.data(), b.data(), 16) == 0 &&
            std::memcmp(again.data() + 24, b.data() + 24, kLongPageHeaderBytes - 24) == 0,
        "a decoded ready stamp re-encodes otherwise");
}

void check_headers(const Bytes& b) {
  if (b.size() >= kLongPageHeaderBytes) {
    const PageHeader h = decode_page_header(b.data());
    std::byte out[kLongPageHeaderBytes] = {};
    check(encode_page_header(h, out) == h.size_bytes(), "encode_page_header size");
    check(std::memcmp(out, b.data(), kPageRemLenOffset + 4) == 0, "a page header re-encodes otherwise");
    if (h.is_long())
      check(std::memcmp(out + kPageSysIdOffset, b.data() + kPageSysIdOffset, 16) == 0, "long header round trip");
  }
  if (b.size() >= kRecordHeaderBytes) {
    const RecordHeader h = decode_record_header(b.data());
    std::byte out[kRecordHeaderBytes];
    encode_record_header(h, out);
    check(std::memcmp(out, b.data(), 18) == 0 && std::memcmp(out + 20, b.data() + 20, 4) == 0,
          "a record header re-encodes otherwise");
  }
}

void check_all(const Bytes& b, unsigned flip, bool as_file) {
  check_control(b, flip);
  check_stamp(b);
  check_headers(b);
  if (as_file) check_read_control(b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t mode = data[0];
  Bytes b(size - 1);
  if (size > 1) std::memcpy(b.data(), data + 1, size - 1);
  const unsigned flip = static_cast<unsigned>(size * 131 + mode);
  try {
    check_all(b, flip, mode & 4);
    if ((mode & 1) && b.size() >= kControlDataBytes) {
      Bytes fixed = b;
      store_le32(fixed.data() + kControlCrcOffset, crc32c(std::span(fixed.data(), kControlCrcOffset)));
      check_all(fixed, flip, mode & 4);
    }
    if ((mode & 2) && b.size() >= kReadyStampBytes) {
      Bytes fixed = b;
      store_le32(fixed.data() + kReadyStampCrcOffset, crc32c(std::span(fixed.data(), kLongPageHeaderBytes)));
      check_stamp(fixed);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exception escaped: %s\n", e.what());
    check(false, "an exception other than read_control's EINVAL escaped");
  }
  return 0;
}
