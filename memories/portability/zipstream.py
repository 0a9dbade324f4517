"""A zip written as a stream, in bounded memory, the same bytes for the same entries.

It writes exactly what Python's `zipfile` writes to a stream it cannot seek (every entry
deflated, its sizes and CRC in a data descriptor after the data, zip64 end records past 65,535
entries or 2 GiB), with one fixed date and mode for every entry. `zipfile` keeps an object per
entry until it writes the central directory at the end (about 600 bytes each with the export's
bookkeeping, 60 MB at 100,000 memories); here each entry's central-directory record is packed
as it is written into a spooled temporary file, in memory up to `SPOOL_BYTES` and on disk past
it, so the writer's memory does not grow with the archive.
"""

from __future__ import annotations

import struct
import tempfile
import zlib
from collections.abc import Iterator

LEVEL = 6
SPOOL_BYTES = 4 << 20
CHUNK = 1 << 20
# 1980-01-01 00:00, the earliest time a zip entry can carry, in MS-DOS form.
DOS_DATE, DOS_TIME = (0 << 9) | (1 << 5) | 1, 0
MODE = 0o100644 << 16  # a regular file, rw-r--r--
UNIX = 3
VERSION, ZIP64_VERSION = 20, 45
DEFLATED = 8
DESCRIPTOR_FLAG, UTF8_FLAG = 0x08, 0x800
# zipfile's thresholds: past these it writes zip64 records.
ZIP64_LIMIT = (1 << 31) - 1
COUNT_LIMIT = 0xFFFF

_LOCAL = struct.Struct("<4s2B4HL2L2H")
_DESCRIPTOR = struct.Struct("<LLLL")
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")
_END = struct.Struct("<4s4H2LH")
_END64 = struct.Struct("<4sQ2H2L4Q")
_LOCATOR64 = struct.Struct("<4sLQL")


class ZipStream:
    """Entries in, bytes out: `begin`, `feed` and `end` an entry (or `entry` for one in
    hand), then `finish`. Each call answers the bytes to send on."""

    def __init__(self, *, level: int = LEVEL) -> None:
        self._level = level
        self._offset = 0
        self._count = 0
        self._directory = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115
        self._open: tuple[bytes, int, int] | None = None
        self._compressor = None
        self._crc = self._size = self._compressed = 0

    def _send(self, data: bytes) -> bytes:
        self._offset += len(data)
        return data

    def begin(self, path: str) -> bytes:
        try:
            name, flags = path.encode("ascii"), DESCRIPTOR_FLAG
        except UnicodeEncodeError:
            name, flags = path.encode("utf-8"), DESCRIPTOR_FLAG | UTF8_FLAG
        self._open = (name, flags, self._offset)
        self._compressor = zlib.compressobj(self._level, zlib.DEFLATED, -15)
        self._crc = self._size = self._compressed = 0
        header = _LOCAL.pack(
            b"PK\003\004", VERSION, 0, flags, DEFLATED, DOS_TIME, DOS_DATE, 0, 0, 0, len(name), 0
        )
        return self._send(header + name)

    def feed(self, data: bytes) -> bytes:
        self._crc = zlib.crc32(data, self._crc)
        self._size += len(data)
        out = self._compressor.compress(data)
        self._compressed += len(out)
        return self._send(out)

    def end(self) -> bytes:
        assert self._open is not None, "end() without begin()"
        name, flags, header_offset = self._open
        tail = self._compressor.flush()
        self._compressed += len(tail)
        if self._size > ZIP64_LIMIT or self._compressed > ZIP64_LIMIT:
            raise ValueError("an entry of 2 GiB or more")  # zipfile refuses it without zip64
        tail += _DESCRIPTOR.pack(0x08074B50, self._crc, self._compressed, self._size)
        version, extra = VERSION, b""
        if header_offset > ZIP64_LIMIT:
            version, extra = ZIP64_VERSION, struct.pack("<HHQ", 1, 8, header_offset)
            header_offset = 0xFFFFFFFF
        record = _CENTRAL.pack(
            b"PK\001\002",
            version,
            UNIX,
            version,
            0,
            flags,
            DEFLATED,
            DOS_TIME,
            DOS_DATE,
            self._crc,
            self._compressed,
            self._size,
            len(name),
            len(extra),
            0,
            0,
            0,
            MODE,
            header_offset,
        )
        self._directory.write(record + name + extra)
        self._count += 1
        self._open, self._compressor = None, None
        return self._send(tail)

    def entry(self, path: str, data: bytes) -> bytes:
        return self.begin(path) + self.feed(data) + self.end()

    def finish(self) -> Iterator[bytes]:
        """The central directory and the end records, in chunks; the writer is spent."""
        start = self._offset
        directory = self._directory
        directory.seek(0)
        while chunk := directory.read(CHUNK):
            yield self._send(chunk)
        directory.close()
        size, count, end = self._offset - start, self._count, self._offset
        records = b""
        if count > COUNT_LIMIT or start > ZIP64_LIMIT or size > ZIP64_LIMIT:
            records = _END64.pack(b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, size, start)
            records += _LOCATOR64.pack(b"PK\x06\x07", 0, end, 1)
            count, size, start = min(count, 0xFFFF), min(size, 0xFFFFFFFF), min(start, 0xFFFFFFFF)
        yield self._send(records + _END.pack(b"PK\005\006", 0, 0, count, count, size, start, 0))
