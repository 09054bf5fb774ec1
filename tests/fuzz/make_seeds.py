#!/usr/bin/env python3
"""Writes the seed corpora of the WAL fuzz targets (tests/fuzz/corpus/<target>/).

The seeds are committed; run this again only after an input layout changed:
    python3 tests/fuzz/make_seeds.py
Layouts: wal_model.h and wal_mutate.h (wal_reader), segment_name_fuzz.cpp, control_fuzz.cpp.
No CRC is computed here: wal_reader seeds describe WAL that the encoder writes, and the
control seeds set control_fuzz's mode bits that make their CRCs right.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# wal_mutate.cpp's kMutations, in order.
(PAGE_FIELD, RECORD_FIELD, DATA_HEADER, PAYLOAD_BYTE, ZERO_RANGE, COPY_PAGE, OVERWRITE,
 TRUNCATE, REMOVE, MOVE, SWAP, READY_STAMP, IRREGULAR, CONTROL_VALUE, CONTROL_BYTES,
 QUERY) = range(16)


def wal(block_shift, segments, records, append=False, first=0, timeline=0, epoch=0,
        durable=0, ops=b""):
    """A wal_reader_fuzz input: geometry, ids, control byte, record list, then operations.
    records: (size code, info) pairs, size code as in wal_model.h."""
    g = block_shift | ((segments - 1) << 3) | (0x20 if append else 0)
    ids = first | (timeline << 2) | (epoch << 4)
    out = bytes([g, ids, durable])
    if first == 2:
        out += struct.pack("<H", 5)
    out += bytes([len(records) - 1])
    for code, info in records:
        out += struct.pack("<HB", code, info)
    return out + ops


def tiny(n):
    return n % 256


def medium(n):
    return (1 << 14) | n


def large(n):
    return (2 << 14) | (n // 16)


def huge(n):
    return (3 << 14) | (n // 64)


def query(kind, with_control, lsn_mode, rec=0, arg=b""):
    return bytes([QUERY, kind | (with_control << 2) | (lsn_mode << 3), rec]) + arg


WAL_SEEDS = {
    "small_8k_clean": wal(3, 1, [(tiny(5), 0x10), (tiny(0), 0), (tiny(200), 0x20),
                                 (medium(300), 0), (tiny(7), 0xF0)]),
    "segments_64k_clean": wal(6, 3, [(huge(300000), 0), (large(100000), 0),
                                     (huge(500000), 0x10), (tiny(9), 0),
                                     (huge(700000), 0), (medium(5000), 0)]),
    "pages_1k_cross": wal(0, 2, [(medium(3000), 0), (tiny(8), 0), (medium(1000), 0),
                                 (tiny(250), 0), (medium(9000), 0)]),
    "prev_link_crc_fixed": wal(2, 1, [(tiny(40), 0)] * 6,
                               ops=bytes([RECORD_FIELD, 3, 2, 1, 8, 1])),
    "epoch_crc_fixed": wal(3, 1, [(tiny(40), 0)] * 5, epoch=3,
                           ops=bytes([RECORD_FIELD, 2, 1, 1, 0xFF, 1])),
    "append_truncated": wal(3, 3, [(large(200000), 0)] * 6, append=True,
                            ops=bytes([TRUNCATE, 1, 1, 4, 1]) + query(2, 1, 0, 2)),
    "removed_middle_stamped": wal(5, 3, [(huge(400000), 0)] * 6,
                                  ops=bytes([REMOVE, 1, READY_STAMP, 1, 6])),
    "top_of_lsn_space": wal(6, 2, [(huge(600000), 0), (tiny(3), 0), (huge(500000), 0)],
                            first=3, timeline=3),
    "control_oldest_moved": wal(4, 3, [(huge(400000), 0)] * 5, durable=3,
                                ops=bytes([CONTROL_VALUE, 5, 4, 5, 1]) +
                                query(1, 1, 1, 0, struct.pack("<I", 70000))),
    "find_next_queries": wal(2, 2, [(medium(2000), 0), (tiny(16), 0)] * 6, timeline=1,
                             ops=query(1, 0, 1, 0, struct.pack("<I", 12345)) +
                             query(0, 0, 2, 0, struct.pack("<H", 3)) +
                             query(2, 1, 4, 5, bytes([8]))),
    # Record 1 continues onto page 1 and ends 8 bytes before its end, so record 2's header is
    # split over pages 1 and 2; the queries start at page 1 (the continuation skipped).
    "split_header_after_continuation": wal(3, 1, [(medium(16283), 0), (tiny(10), 0),
                                                  (tiny(20), 0)],
                                           ops=query(0, 0, 2, 0, struct.pack("<H", 1)) +
                                           query(1, 1, 2, 0, struct.pack("<H", 1))),
    "page_header_damage": wal(3, 2, [(large(60000), 0)] * 8,
                              ops=bytes([PAGE_FIELD, 0, 2, 0, 3, 4, 3,
                                         ZERO_RANGE, 1, 1, 0, 0x30, 1, 0, 0, 0, 1,
                                         COPY_PAGE, 0, 1, 2, 0, 5, 0])),
}

SEGMENT_NAME_SEEDS = {
    "segment": b"000000010000000000000001",
    "segment_high": b"0000000A000000FF000000FF",
    "segment_lower_case": b"00000001000000000000000a",
    "partial": b"00000001000000000000000F.partial",
    "backup": b"000000010000000000000001.00000028.backup",
    "history": b"00000002.history",
    "temp": b"xlogtemp.1234",
    "temp_counter": b"xlogtemp.4294967295.18446744073709551615",
    "lsn": b"0/1000000",
    "lsn_padded": b"FFFFFFFF/01000000",
}


def control_seed(seg=1 << 24, blk=8192, tli=1, flags=0, oldest=1 << 24, durable=0, epoch=1):
    body = struct.pack("<IIQIIIIQQI", 0x54435357, 1, 0x0123456789ABCDEF, seg, blk, tli, flags,
                       oldest, durable, epoch)
    return body + b"\0" * (512 - len(body))


def stamp_seed():
    return struct.pack("<HHIQQQII", 0x5357, 2, 1, 1 << 20, 0, 0x0123456789ABCDEF, 1 << 20, 8192)


CONTROL_SEEDS = {
    # Mode byte first: bit 0 fixes the control CRC, bit 1 the stamp CRC, bit 2 read_control.
    "control_valid": b"\x05" + control_seed(),
    "control_append": b"\x05" + control_seed(seg=1 << 20, blk=1024, flags=1, oldest=5 << 20),
    "control_short": b"\x04" + control_seed()[:100],
    "stamp_valid": b"\x02" + stamp_seed(),
    "page_header_long": b"\x00" + struct.pack("<HHIQIIQII", 0xD110, 3, 1, 1 << 24, 77, 0,
                                               0x0123456789ABCDEF, 1 << 24, 8192),
}


def write(target, seeds):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


write("wal_reader", WAL_SEEDS)
write("segment_name", SEGMENT_NAME_SEEDS)
write("control", CONTROL_SEEDS)
