// wal_encoder.h: turns one record into the exact bytes it occupies in the WAL, page headers
// and alignment included, in PostgreSQL 15's layout (wal_format.h, doc/wal_format.md).
//
// The encoder is pure: it does no I/O and keeps no state. The caller (the WAL writer) owns the
// insert position and the previous record's LSN and hands every produced byte range to a sink
// that copies it into page buffers. Together the sink calls of one encode_record cover every
// byte from insert_pos to the returned position exactly once, in LSN order, and no single call
// crosses a page boundary.
//
// Insert positions (PostgreSQL's "end of record" pointers, XLogBytePosToEndRecPtr):
//   - always a multiple of 8;
//   - either a page boundary, meaning that page's header is not written yet (encode_record
//     writes it first: the long form at a segment boundary), or an offset inside a page at or
//     after its header;
//   - a record that ends exactly at the end of a page returns that page boundary: the next
//     page's header belongs to the next record, with xlp_rem_len 0.
// A fresh WAL starts at wal_start_lsn(): the first byte of segment 1, as initdb does (segment
// 0 is never used by PostgreSQL either). Its first record lies at wal_start_lsn() + 40, after
// the long header, and has xl_prev 0.
//
// Not for: writing files, flushing, group commit (the writer), reading back (wal_reader.h).
// Thread-safety: every function is pure and may be called from any thread; the sink is called
// on the calling thread only. Lifetime: payload and sink are used during the call only; the
// data pointer passed to the sink is valid only during that sink call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "walseg/config.h"
#include "walseg/segment_name.h"
#include "walseg/wal_format.h"

namespace walseg {

/// What every page header written by the encoder carries.
struct EncoderParams {
  std::uint64_t segment_size_bytes = 16 * kMiB;                ///< is_valid_segment_size
  std::uint32_t block_size_bytes = kDefaultWalBlockSizeBytes;  ///< is_valid_wal_block_size
  TimeLineId timeline = 1;                                      ///< != 0
  std::uint64_t system_id = 0;  ///< chosen at directory creation; any value
  std::uint32_t xid = 0;        ///< xl_xid of every record: the writer's epoch (wal_format.h)
};

/// Receives `len` bytes that belong at WAL position `lsn` (never crossing a page boundary).
using WalSink = std::function<void(Lsn lsn, const std::byte* data, std::size_t len)>;

/// Throws walseg::Error (EINVAL) naming the bad field: invalid segment size, block size that
/// is not a power of two in [1 kB, 64 kB] or larger than the segment, timeline 0.
void check_encoder_params(const EncoderParams& params);

/// The first insert position of a fresh WAL: the start of segment 1 (0/1000000 with 16 MB
/// segments, 0/100000 with 1 MB). Throws like check_encoder_params.
Lsn wal_start_lsn(const EncoderParams& params);

/// Size of the header of the page starting at page_lsn: kLongPageHeaderBytes at a segment
/// boundary, else kShortPageHeaderBytes. page_lsn must be a page boundary (not checked).
std::size_t page_header_bytes(const EncoderParams& params, Lsn page_lsn);

/// True when pos follows the insert-position convention above (never throws for any pos).
bool is_valid_insert_position(const EncoderParams& params, Lsn pos);

/// Emits the header of the page at page_lsn: long at a segment boundary; rem_len != 0 sets
/// kPageFirstIsContRecord. Returns page_lsn + its size. Throws Error (EINVAL) when page_lsn
/// is not a page boundary or params are invalid. encode_record calls it itself; it is public
/// for writers that prepare an empty page, e.g. the first page of a fresh WAL.
Lsn encode_page_header(const EncoderParams& params, Lsn page_lsn, std::uint32_t rem_len,
                       const WalSink& sink);

/// Computes where a record with a payload of payload_bytes would start and end if inserted
/// at insert_pos, without emitting anything (what a writer needs to reserve space before
/// encoding). Returns the next insert position; *record_start (if not null) gets the LSN of
/// the record header. Throws Error (EINVAL) for invalid params, an insert position that
/// breaks the convention, or payload_bytes > kMaxRecordPayloadBytes.
Lsn reserve_record(const EncoderParams& params, Lsn insert_pos, std::size_t payload_bytes,
                   Lsn* record_start);

/// Encodes one record and emits it through `sink`, in LSN order: the page header if
/// insert_pos is a page boundary, the record header, the data header (none for an empty
/// payload, short up to 255 bytes, long above), the payload with a continuation page header
/// (xlp_rem_len = record bytes still to come, kPageFirstIsContRecord) at every page boundary
/// it crosses, and zeros up to the next multiple of 8.
///   params: page header contents; insert_pos: see the convention above;
///   prev_record_lsn: xl_prev, the LSN of the previous record's header, 0 for the first record
///     (must be below the new record's LSN);
///   info: xl_info, resource-manager bits only ((info & kRecordInfoMask) == 0);
///   payload: the main data, at most kMaxRecordPayloadBytes;
///   sink: receives the bytes; record_start (may be null): receives the record header's LSN.
/// Returns the next insert position (8-aligned; a page boundary when the record fills its
/// last page exactly). Throws Error (EINVAL) for any argument outside the above, before
/// calling the sink; exceptions thrown by the sink propagate.
Lsn encode_record(const EncoderParams& params, Lsn insert_pos, Lsn prev_record_lsn,
                  std::uint8_t info, std::span<const std::byte> payload, const WalSink& sink,
                  Lsn* record_start);

/// Emits zeros from pos to the end of its page and returns that page boundary (pos itself if
/// it is one). The zeros are not WAL: the insert position stays pos, and the next record is
/// encoded at pos. For writers that write whole pages, so that the part of a page after the
/// last record never keeps bytes of a recycled file's earlier life (which the reader would
/// have to reject record by record). Throws Error (EINVAL) for invalid params or unaligned pos.
Lsn encode_page_tail(const EncoderParams& params, Lsn pos, const WalSink& sink);

}  // namespace walseg
