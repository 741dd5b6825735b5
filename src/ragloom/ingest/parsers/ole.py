"""The entry names of an OLE2 compound file (legacy Office, Outlook .msg), stdlib only.

Sniffing needs to tell a ``.doc`` from a ``.xls``, ``.ppt`` or ``.msg``: they
share the OLE2 container and differ by the streams inside (``WordDocument``,
``Workbook``, ``PowerPoint Document``, ``__substg1.0_*``). This reads just the
directory of the container; stream contents are left to the format libraries.
"""

from __future__ import annotations

import struct

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_END_OF_CHAIN = 0xFFFFFFFE
_MAX_SECTORS = 1 << 20  # guards against cyclic chains in damaged files


def _sector(data: bytes, size: int, index: int) -> bytes:
    start = (index + 1) * size
    return data[start:start + size]


def _fat(data: bytes, size: int) -> list[int]:
    """The file allocation table, from the header's DIFAT and any DIFAT sectors.

    Only sectors inside the file are read, each once: a chain of DIFAT sectors that loops, or a
    header claiming a million of them, costs what the file holds (the table is at most a quarter
    of the file's size), not what it claims."""
    in_file = (len(data) - size) // size  # sectors after the header
    header_difat = struct.unpack_from("<109I", data, 0x4C)
    fat_sectors = [s for s in header_difat if s < in_file]
    next_difat, count = struct.unpack_from("<II", data, 0x44)
    per_sector = size // 4 - 1
    visited: set[int] = set()
    for _ in range(min(count, in_file)):
        if next_difat >= in_file or next_difat in visited:
            break
        visited.add(next_difat)
        entries = struct.unpack(f"<{per_sector + 1}I", _sector(data, size, next_difat).ljust(size, b"\xff"))
        fat_sectors += [s for s in entries[:-1] if s < in_file]
        next_difat = entries[-1]
    fat: list[int] = []
    for s in dict.fromkeys(fat_sectors):
        fat += struct.unpack(f"<{size // 4}I", _sector(data, size, s).ljust(size, b"\xff"))
    return fat


def entry_names(data: bytes) -> set[str]:
    """Names of every storage and stream in an OLE2 file; empty when it is unreadable."""
    if not data.startswith(OLE_MAGIC) or len(data) < 512:
        return set()
    shift = struct.unpack_from("<H", data, 0x1E)[0]
    if shift not in (9, 12):
        return set()
    size = 1 << shift
    fat = _fat(data, size)
    sector = struct.unpack_from("<I", data, 0x30)[0]
    names: set[str] = set()
    seen: set[int] = set()
    while sector < _END_OF_CHAIN and sector not in seen and len(seen) < _MAX_SECTORS:
        seen.add(sector)
        chunk = _sector(data, size, sector)
        for off in range(0, len(chunk) - 127, 128):
            length = struct.unpack_from("<H", chunk, off + 0x40)[0]
            if 2 <= length <= 64 and chunk[off + 0x42] in (1, 2, 5):
                names.add(chunk[off:off + length - 2].decode("utf-16-le", errors="replace"))
        sector = fat[sector] if sector < len(fat) else _END_OF_CHAIN
    return names
