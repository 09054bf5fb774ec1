// wal_format.h: the on-disk byte layout of walseg's write-ahead log, in one place.
//
// The layout is PostgreSQL 15's (xlog_internal.h, xlogrecord.h), byte for byte, so that
// PostgreSQL's own pg_waldump can read and verify a walseg directory: an external check that
// nobody here wrote. doc/wal_format.md walks through one segment with real numbers; a change
// here must change that page too.
//
//   segment = page 0 (long header) | page 1 (short header) | ... | page N-1
//   page    = page header | record bytes, continued from the previous page or new records | 0s
//   record  = record header (24) | data header (0, 2 or 5) | payload | 0s to an 8-byte boundary
//
// All integers are little-endian (what PostgreSQL writes on x86-64 and AArch64); the mirror
// structs below are laid out by the compiler like PostgreSQL's C structs, and static_asserts
// tie every offset constant to them. The encoders in wal_format.cpp store bytes explicitly and
// never copy the mirror structs, so host padding or endianness cannot leak into files.
//
// What walseg writes of PostgreSQL's record format: only the main-data fragment
// (XLR_BLOCK_ID_DATA_SHORT/LONG), never block references, origins or top-level xids; resource
// manager id 128 (RM_EXPERIMENTAL_ID); transaction id 0.
//
// Not for: choosing positions or splitting records over pages (wal_encoder.h), reading files
// (wal_reader.h). Thread-safety: constants and pure functions only. Lifetime: pointers passed
// to the encode/decode functions are used during the call only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "walseg/segment_name.h"

namespace walseg {

// ---- Version, alignment, limits ---------------------------------------------------------

/// XLOG_PAGE_MAGIC of PostgreSQL 15: the format version indicator, first field of every page.
/// Each PostgreSQL major version that changes WAL contents changes it (16: 0xD113), so a page
/// with any other value is not in this format.
inline constexpr std::uint16_t kWalPageMagic = 0xD110;
/// MAXIMUM_ALIGNOF: records start at multiples of 8 bytes; page headers are padded to it.
inline constexpr std::uint64_t kWalAlignBytes = 8;
/// MAXALIGN(n): n rounded up to kWalAlignBytes.
constexpr std::uint64_t wal_align(std::uint64_t n) {
  return (n + kWalAlignBytes - 1) & ~(kWalAlignBytes - 1);
}
/// Page (XLOG_BLCKSZ) sizes walseg accepts: powers of two in this range, as PostgreSQL's
/// configure allows. pg_waldump only reads its compiled-in size, 8 kB on every packaged build.
inline constexpr std::uint32_t kMinWalBlockSizeBytes = 1024;
inline constexpr std::uint32_t kMaxWalBlockSizeBytes = 65536;
inline constexpr std::uint32_t kDefaultWalBlockSizeBytes = 8192;
constexpr bool is_valid_wal_block_size(std::uint64_t bytes) {
  return bytes >= kMinWalBlockSizeBytes && bytes <= kMaxWalBlockSizeBytes &&
         (bytes & (bytes - 1)) == 0;
}
/// Largest xl_tot_len walseg writes or believes (PostgreSQL 16's XLogRecordMaxSize; 15 has
/// the same practical bound of its 1 GB allocation limit). A larger length read back is
/// garbage, not a record, and is never allocated.
inline constexpr std::uint32_t kMaxRecordTotalBytes = 1020u * 1024 * 1024;

// ---- Page header (XLogPageHeaderData, XLogLongPageHeaderData) ----------------------------
//
//   offset size field          meaning
//   0      2    xlp_magic      kWalPageMagic
//   2      2    xlp_info       flag bits below
//   4      4    xlp_tli        timeline of the page's first record
//   8      8    xlp_pageaddr   LSN of the page's first byte: who the page belongs to
//   16     4    xlp_rem_len    bytes of a record continued from the previous page, else 0
//   20     4    (padding)      zero; the struct is MAXALIGNed to 24
//   --- long header only (first page of every segment, flag kPageLongHeader) ---
//   24     8    xlp_sysid      system identifier, chosen when the WAL directory is created
//   32     4    xlp_seg_size   segment size in bytes (lets readers learn it from the file)
//   36     4    xlp_xlog_blcksz page size in bytes
//   40          end (SizeOfXLogLongPHD)

/// Mirror of XLogPageHeaderData; only for the static_asserts below.
struct PageHeaderLayout {
  std::uint16_t xlp_magic;     ///< format version (kWalPageMagic)
  std::uint16_t xlp_info;      ///< kPage* flag bits
  std::uint32_t xlp_tli;       ///< timeline id
  std::uint64_t xlp_pageaddr;  ///< LSN of this page's first byte
  std::uint32_t xlp_rem_len;   ///< continuation bytes of a record begun on an earlier page
};
/// Mirror of XLogLongPageHeaderData.
struct LongPageHeaderLayout {
  PageHeaderLayout std;            ///< the short header
  std::uint64_t xlp_sysid;         ///< system identifier
  std::uint32_t xlp_seg_size;      ///< segment size, bytes
  std::uint32_t xlp_xlog_blcksz;   ///< page size, bytes
};

inline constexpr std::size_t kPageMagicOffset = 0;
inline constexpr std::size_t kPageInfoOffset = 2;
inline constexpr std::size_t kPageTimelineOffset = 4;
inline constexpr std::size_t kPageAddrOffset = 8;
inline constexpr std::size_t kPageRemLenOffset = 16;
/// SizeOfXLogShortPHD: MAXALIGN(sizeof(XLogPageHeaderData)), 20 bytes of fields + 4 padding.
inline constexpr std::size_t kShortPageHeaderBytes = 24;
inline constexpr std::size_t kPageSysIdOffset = 24;
inline constexpr std::size_t kPageSegSizeOffset = 32;
inline constexpr std::size_t kPageBlockSizeOffset = 36;
/// SizeOfXLogLongPHD.
inline constexpr std::size_t kLongPageHeaderBytes = 40;

static_assert(offsetof(PageHeaderLayout, xlp_magic) == kPageMagicOffset);
static_assert(offsetof(PageHeaderLayout, xlp_info) == kPageInfoOffset);
static_assert(offsetof(PageHeaderLayout, xlp_tli) == kPageTimelineOffset);
static_assert(offsetof(PageHeaderLayout, xlp_pageaddr) == kPageAddrOffset);
static_assert(offsetof(PageHeaderLayout, xlp_rem_len) == kPageRemLenOffset);
static_assert(sizeof(PageHeaderLayout) == kShortPageHeaderBytes);
static_assert(wal_align(sizeof(PageHeaderLayout)) == kShortPageHeaderBytes);
static_assert(offsetof(LongPageHeaderLayout, xlp_sysid) == kPageSysIdOffset);
static_assert(offsetof(LongPageHeaderLayout, xlp_seg_size) == kPageSegSizeOffset);
static_assert(offsetof(LongPageHeaderLayout, xlp_xlog_blcksz) == kPageBlockSizeOffset);
static_assert(sizeof(LongPageHeaderLayout) == kLongPageHeaderBytes);
static_assert(kLongPageHeaderBytes % kWalAlignBytes == 0);

// xlp_info bits.
/// The page starts with the rest of a record begun on an earlier page (xlp_rem_len bytes).
inline constexpr std::uint16_t kPageFirstIsContRecord = 0x0001;
/// The header is the long form: set on, and only on, the first page of a segment.
inline constexpr std::uint16_t kPageLongHeader = 0x0002;
/// PostgreSQL: full-page images on this page may be dropped by archivers. walseg writes no
/// images and never sets it; readers accept it.
inline constexpr std::uint16_t kPageBkpRemovable = 0x0004;
/// PostgreSQL: the continuation expected here was abandoned after a crash and overwritten.
/// walseg never writes it (recovery ends WAL before the torn record); its reader stops there.
inline constexpr std::uint16_t kPageFirstIsOverwriteContRecord = 0x0008;
/// XLP_ALL_FLAGS: a page with any other bit set is not in this format.
inline constexpr std::uint16_t kPageAllFlags = 0x000F;
static_assert((kPageFirstIsContRecord | kPageLongHeader | kPageBkpRemovable |
               kPageFirstIsOverwriteContRecord) == kPageAllFlags);

// ---- Record header (XLogRecord) ----------------------------------------------------------
//
//   offset size field       meaning
//   0      4    xl_tot_len  whole record: header + data headers + payload (no alignment pad)
//   4      4    xl_xid      transaction id; walseg writes its writer's epoch, the number of
//                           the Wal::open that wrote the record (walseg.control): records
//                           of one life share it, each later life has a larger one, so a
//                           record left at the same LSN by a write a crash tore can never
//                           be read as a successor of a later life's records
//   8      8    xl_prev     LSN of the previous record's header (0 for the first record)
//   16     1    xl_info     high 4 bits: resource manager's use; low 4 (kRecordInfoMask) reserved
//   17     1    xl_rmid     resource manager id; walseg writes kWalsegRmgrId
//   18     2    (padding)   zero
//   20     4    xl_crc      CRC-32C of bytes [24, xl_tot_len), then of bytes [0, 20)
//   24          end (SizeOfXLogRecord); the data header follows unaligned

/// Mirror of XLogRecord.
struct RecordHeaderLayout {
  std::uint32_t xl_tot_len;  ///< total record length, bytes
  std::uint32_t xl_xid;      ///< transaction id
  std::uint64_t xl_prev;     ///< previous record's LSN
  std::uint8_t xl_info;      ///< flag bits
  std::uint8_t xl_rmid;      ///< resource manager id
  std::uint8_t xl_pad[2];    ///< zero
  std::uint32_t xl_crc;      ///< CRC-32C
};
inline constexpr std::size_t kRecordTotalLenOffset = 0;
inline constexpr std::size_t kRecordXidOffset = 4;
inline constexpr std::size_t kRecordPrevOffset = 8;
inline constexpr std::size_t kRecordInfoOffset = 16;
inline constexpr std::size_t kRecordRmidOffset = 17;
inline constexpr std::size_t kRecordCrcOffset = 20;
/// SizeOfXLogRecord.
inline constexpr std::size_t kRecordHeaderBytes = 24;
static_assert(offsetof(RecordHeaderLayout, xl_tot_len) == kRecordTotalLenOffset);
static_assert(offsetof(RecordHeaderLayout, xl_xid) == kRecordXidOffset);
static_assert(offsetof(RecordHeaderLayout, xl_prev) == kRecordPrevOffset);
static_assert(offsetof(RecordHeaderLayout, xl_info) == kRecordInfoOffset);
static_assert(offsetof(RecordHeaderLayout, xl_rmid) == kRecordRmidOffset);
static_assert(offsetof(RecordHeaderLayout, xl_crc) == kRecordCrcOffset);
static_assert(sizeof(RecordHeaderLayout) == kRecordHeaderBytes);

/// XLR_INFO_MASK: xl_info bits owned by PostgreSQL's xlog code (XLR_SPECIAL_REL_UPDATE,
/// XLR_CHECK_CONSISTENCY); walseg's encoder refuses info values that set them.
inline constexpr std::uint8_t kRecordInfoMask = 0x0F;
/// RM_EXPERIMENTAL_ID, the first custom resource manager id: pg_waldump 15 prints such
/// records as rmgr "custom128" with an unknown description.
inline constexpr std::uint8_t kWalsegRmgrId = 128;
/// RM_MAX_BUILTIN_ID of PostgreSQL 15 (RM_LOGICALMSG_ID) and the custom range: the ids
/// PostgreSQL's reader accepts (RmgrIdIsValid). Others are invalid record headers.
inline constexpr std::uint8_t kMaxBuiltinRmgrId = 21;
inline constexpr std::uint8_t kMinCustomRmgrId = 128;
constexpr bool is_valid_rmgr_id(std::uint8_t id) {
  return id <= kMaxBuiltinRmgrId || id >= kMinCustomRmgrId;
}

// ---- Main-data header (XLogRecordDataHeaderShort / Long) --------------------------------
//
//   short: offset 0 id = 255, offset 1 uint8 length          (payload 1..255 bytes)
//   long:  offset 0 id = 254, offset 1 uint32 length, unaligned (payload >= 256 bytes)
//   none:  an empty payload has no data header (xl_tot_len = 24), as XLogRecordAssemble does.
inline constexpr std::uint8_t kBlockIdDataShort = 255;  ///< XLR_BLOCK_ID_DATA_SHORT
inline constexpr std::uint8_t kBlockIdDataLong = 254;   ///< XLR_BLOCK_ID_DATA_LONG
inline constexpr std::size_t kDataHeaderShortBytes = 2;  ///< SizeOfXLogRecordDataHeaderShort
inline constexpr std::size_t kDataHeaderLongBytes = 5;   ///< SizeOfXLogRecordDataHeaderLong
inline constexpr std::size_t kMaxShortDataBytes = 255;
/// Largest payload that fits in kMaxRecordTotalBytes.
inline constexpr std::size_t kMaxRecordPayloadBytes =
    kMaxRecordTotalBytes - kRecordHeaderBytes - kDataHeaderLongBytes;

/// Bytes of data header for a payload of `payload_bytes`: 0, 2 or 5.
constexpr std::size_t data_header_bytes(std::size_t payload_bytes) {
  return payload_bytes == 0                    ? 0
         : payload_bytes <= kMaxShortDataBytes ? kDataHeaderShortBytes
                                               : kDataHeaderLongBytes;
}

// ---- CRC-32C ------------------------------------------------------------------------------
// Castagnoli polynomial, reflected, as PostgreSQL's pg_crc32c: state starts at kCrc32cInit,
// is updated over the bytes, and is inverted at the end ("123456789" -> 0xE3069283).
inline constexpr std::uint32_t kCrc32cInit = 0xFFFFFFFFu;
/// Continues a CRC-32C state over `bytes` (no inversion; ISA-L's crc32_iscsi convention).
std::uint32_t crc32c_update(std::uint32_t state, std::span<const std::byte> bytes);
constexpr std::uint32_t crc32c_finish(std::uint32_t state) { return state ^ 0xFFFFFFFFu; }
/// The whole CRC-32C of `bytes`.
std::uint32_t crc32c(std::span<const std::byte> bytes);

// ---- Decoded headers and their codecs -----------------------------------------------------

/// A page header as values. The last three fields are meaningful only with kPageLongHeader.
struct PageHeader {
  std::uint16_t magic = kWalPageMagic;
  std::uint16_t info = 0;
  TimeLineId timeline = 0;
  Lsn page_addr = 0;
  std::uint32_t rem_len = 0;
  std::uint64_t system_id = 0;
  std::uint32_t segment_size_bytes = 0;
  std::uint32_t block_size_bytes = 0;

  bool is_long() const { return (info & kPageLongHeader) != 0; }
  std::size_t size_bytes() const {
    return is_long() ? kLongPageHeaderBytes : kShortPageHeaderBytes;
  }
};

/// Writes h.size_bytes() bytes to out, padding included (zeros). Returns h.size_bytes().
std::size_t encode_page_header(const PageHeader& h, std::byte* out);
/// Reads the short header at `in` and, if its info has kPageLongHeader, the long fields:
/// `in` must hold kLongPageHeaderBytes bytes. Validates nothing.
PageHeader decode_page_header(const std::byte* in);

/// A record header as values.
struct RecordHeader {
  std::uint32_t total_len = 0;
  std::uint32_t xid = 0;
  Lsn prev = 0;
  std::uint8_t info = 0;
  std::uint8_t rmid = kWalsegRmgrId;
  std::uint32_t crc = 0;
};
/// Writes kRecordHeaderBytes bytes (padding zero) to out.
void encode_record_header(const RecordHeader& h, std::byte* out);
/// Reads kRecordHeaderBytes bytes from in. Validates nothing.
RecordHeader decode_record_header(const std::byte* in);
/// Writes data_header_bytes(payload_bytes) bytes to out; returns that count.
std::size_t encode_data_header(std::uint32_t payload_bytes, std::byte* out);

/// CRC of a whole record laid out contiguously in `record` (xl_tot_len bytes), computed as
/// ValidXLogRecord does: over the bytes after the header, then the header up to xl_crc.
std::uint32_t record_crc(std::span<const std::byte> record);

// ---- Ready stamp: a segment walseg made that holds no WAL yet ---------------------------
//
// Every segment the segment manager creates carries, before its fsync, this stamp at offset
// 0: a long page header whose magic is kReadySegmentMagic, then a CRC-32C of those 40
// bytes. A blank file says nothing about who made it (PostgreSQL's and other tools' future
// segments are zeros too); a stamped one names this WAL's system identifier, so walseg can
// tell, without trusting names or sizes, that a file holding no records is its own to use,
// recycle or remove (nothing walseg did not make is touched). The writer's first write into a segment
// starts at offset 0 and covers at least one 4 kB block, so the stamp is gone, in one
// block, as soon as the segment holds WAL.
//
//   offset size field          meaning
//   0      2    magic          kReadySegmentMagic ("WS"): no PostgreSQL XLOG_PAGE_MAGIC
//                              (0xD0xx-0xD1xx), so no WAL reader takes the stamp for a page
//   2      2    info           kPageLongHeader
//   4      4    tli            timeline the segment was made for
//   8      8    pageaddr       LSN of the segment's first byte
//   16     8    (zero)         rem_len and padding
//   24     8    sysid          the WAL directory's system identifier (walseg.control)
//   32     4    seg_size       segment size in bytes, where pg_waldump looks for it
//   36     4    blcksz         page size in bytes
//   40     4    crc            CRC-32C of bytes [0, 40)
//   44          end (kReadyStampBytes); zeros, or whatever the init method left, follow

inline constexpr std::uint16_t kReadySegmentMagic = 0x5357;
inline constexpr std::size_t kReadyStampCrcOffset = kLongPageHeaderBytes;
inline constexpr std::size_t kReadyStampBytes = kReadyStampCrcOffset + 4;
static_assert(kReadyStampBytes == 44 && kReadyStampBytes < 4096);

/// Writes kReadyStampBytes bytes to out for the segment whose first page would carry `h`
/// (h.is_long(); h.magic is ignored and written as kReadySegmentMagic).
void encode_ready_stamp(const PageHeader& h, std::byte* out);
/// The header a valid stamp at `in` (kReadyStampBytes bytes) carries, with magic
/// kReadySegmentMagic; nullopt unless magic, info and CRC are all right.
std::optional<PageHeader> decode_ready_stamp(const std::byte* in);

/// What a segment file's first kReadyStampBytes bytes (at `in`) say it is: a WAL page with a
/// long header (written WAL, or a recycled file's earlier life) or walseg's valid ready stamp
/// (preallocated, nothing written yet); with the system identifier and sizes they carry,
/// unchecked (the caller compares them with the WAL's, or reports them). nullopt for
/// anything else: zeros, a short header, another format. The one reading of a first page that
/// the directory scan (dir_scan.h: ours or foreign) and `walseg ls` (its labels) share.
struct FirstPage {
  bool ready_stamp = false;
  PageHeader header;
};
std::optional<FirstPage> decode_first_page(const std::byte* in);

// ---- walseg.control: the identity of a WAL directory (as PostgreSQL's pg_control) -------
//
// One small file per WAL directory says which WAL lives there and where it starts, so that
// nothing is inferred from the lowest file name or a file's first bytes. It is written when
// the directory gets its first segment manager and replaced, never edited in place, by temp
// file + fsync + rename + directory fsync (wal_control.h). include/walseg/wal_control.h reads
// and writes it; doc/wal_format.md walks through one.
//
//   offset size field          meaning
//   0      4    magic          kControlMagic ("WSCT"): this is a walseg control file
//   4      4    version        kControlVersion: the layout below
//   8      8    system_id      chosen once, as initdb does; every segment's long header and
//                              ready stamp must carry it
//   16     4    seg_size       walseg.segment_size the WAL was written with, bytes
//   20     4    blcksz         walseg.block_size, bytes
//   24     4    timeline       the timeline the writer continues on
//   28     4    flags          kControlAppendMode: segments may be shorter than seg_size
//   32     8    oldest_lsn     first byte of the oldest segment still needed: recovery reads
//                              from here; segments below it may be recycled or removed
//   40     8    durable_lsn    every record ending at or below it had been acknowledged when
//                              the file was written (0: not known)
//   48     4    epoch          the last writer's incarnation: every Wal::open takes the next
//                              one and writes it into each record's xl_xid (see below)
//   52     4    crc            CRC-32C of bytes [0, 52)
//   56          end of data; the file is kControlFileBytes long, zeros after the CRC

inline constexpr std::uint32_t kControlMagic = 0x54435357;  // "WSCT" in file order
inline constexpr std::uint32_t kControlVersion = 1;
inline constexpr std::uint32_t kControlAppendMode = 0x1;
inline constexpr std::size_t kControlSysIdOffset = 8;
inline constexpr std::size_t kControlSegSizeOffset = 16;
inline constexpr std::size_t kControlBlockSizeOffset = 20;
inline constexpr std::size_t kControlTimelineOffset = 24;
inline constexpr std::size_t kControlFlagsOffset = 28;
inline constexpr std::size_t kControlOldestLsnOffset = 32;
inline constexpr std::size_t kControlDurableLsnOffset = 40;
inline constexpr std::size_t kControlEpochOffset = 48;
inline constexpr std::size_t kControlCrcOffset = 52;
/// One sector, as pg_control's PG_CONTROL_FILE_SIZE is a page: read and written whole.
inline constexpr std::size_t kControlFileBytes = 512;
static_assert(kControlCrcOffset + 4 <= kControlFileBytes);

/// A control file as values.
struct WalControl {
  std::uint64_t system_id = 0;
  std::uint32_t segment_size_bytes = 0;
  std::uint32_t block_size_bytes = 0;
  TimeLineId timeline = 1;
  bool append_mode = false;
  Lsn oldest_lsn = 0;
  Lsn durable_lsn = 0;
  std::uint32_t epoch = 0;
  friend bool operator==(const WalControl&, const WalControl&) = default;
};

/// Writes kControlFileBytes bytes (zeros after the CRC) to out.
void encode_control(const WalControl& c, std::byte* out);
/// Decodes kControlFileBytes bytes. nullopt with *why set ("bad magic number 0x...",
/// "unsupported version N", "CRC mismatch", "unknown flags 0x...", "invalid segment size N")
/// for anything that is not a control file this version wrote.
std::optional<WalControl> decode_control(std::span<const std::byte> in, std::string* why);

/// Little-endian loads used by the reader for single fields, and the store of one field.
std::uint32_t load_le32(const std::byte* in);
std::uint64_t load_le64(const std::byte* in);
void store_le32(std::byte* out, std::uint32_t v);

}  // namespace walseg
