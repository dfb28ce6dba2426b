"""Word files told from other Office containers by their structure alone: a DOC's compound file
(CFB) directory and a DOCX's zip central directory, each read with bounds and never extracted.

An xls, ppt or Outlook msg is a compound file too, and an xlsx or pptx is a zip too; only the
directory says which."""

from __future__ import annotations

import struct

CFB_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP_SIGNATURE = b"PK\x03\x04"

# ---- compound files ([MS-CFB]) ----------------------------------------------

CFB_HEADER_SIZE = 512
HEADER_DIFAT_ENTRIES = 109
MAX_REGULAR_SECTOR = 0xFFFFFFFA
END_OF_CHAIN = 0xFFFFFFFE
NO_STREAM = 0xFFFFFFFF
DIRECTORY_ENTRY_SIZE = 128
STORAGE, STREAM, ROOT_STORAGE = 1, 2, 5
MAX_DIRECTORY_ENTRIES = 4096
WORD_STREAM = "WORDDOCUMENT"  # CFB compares names case-insensitively; Word writes "WordDocument"

# ---- zip packages (APPNOTE.TXT) ----------------------------------------------

END_OF_CENTRAL_DIRECTORY = b"PK\x05\x06"
END_OF_CENTRAL_DIRECTORY_SIZE = 22
ZIP64_LOCATOR = b"PK\x06\x07"
ZIP64_LOCATOR_SIZE = 20
ZIP64_END_OF_CENTRAL_DIRECTORY = b"PK\x06\x06"
CENTRAL_HEADER = b"PK\x01\x02"
CENTRAL_HEADER_SIZE = 46
UTF8_NAME_FLAG = 0x800
MAX_ZIP_ENTRIES = 1000
WORD_PACKAGE_PARTS = frozenset({"word/document.xml", "[Content_Types].xml"})


class Malformed(ValueError):
    """The bytes are not a well-formed container of the kind their signature claims (or exceed a
    bound)."""


def is_word_compound_file(data: bytes) -> bool:
    """A DOC: a compound file whose root storage holds the `WordDocument` stream (xls, ppt and msg
    do not)."""
    try:
        return any(
            entry_type == STREAM and name.upper() == WORD_STREAM
            for name, entry_type in CompoundFileDirectory(data).root_children()
        )
    except Malformed:
        return False


def is_word_package(data: bytes) -> bool:
    """A DOCX: a zip whose central directory (at most MAX_ZIP_ENTRIES entries) lists
    word/document.xml and [Content_Types].xml, each pointing at a local file header."""
    try:
        members = zip_central_directory(data, MAX_ZIP_ENTRIES)
    except Malformed:
        return False
    return all(
        data[members[part] : members[part] + 4] == ZIP_SIGNATURE if part in members else False
        for part in WORD_PACKAGE_PARTS
    )


class CompoundFileDirectory:
    """The directory of a compound file, read through the FAT: header, DIFAT, FAT entries and
    directory sectors only.

    Every chain is bounded by the file's sector count and checked for loops, the directory by
    MAX_DIRECTORY_ENTRIES."""

    def __init__(self, data: bytes):
        if len(data) < CFB_HEADER_SIZE or not data.startswith(CFB_SIGNATURE):
            raise Malformed("not a compound file")
        major, byte_order, sector_shift = struct.unpack_from("<3H", data, 0x1A)
        if byte_order != 0xFFFE or (major, sector_shift) not in ((3, 9), (4, 12)):
            raise Malformed("unknown compound file version")
        self.data = data
        self.sector_size = 1 << sector_shift
        self.sector_count = max(0, -(-(len(data) - self.sector_size) // self.sector_size))
        fat_sector_count, self.first_directory_sector = struct.unpack_from("<2L", data, 0x2C)
        first_difat_sector, difat_sector_count = struct.unpack_from("<2L", data, 0x44)
        if fat_sector_count > self.sector_count or difat_sector_count > self.sector_count:
            raise Malformed("more FAT sectors than the file holds")
        self.fat_sectors = self._fat_sector_locations(fat_sector_count, first_difat_sector)

    def _sector(self, number: int) -> bytes:
        if number >= self.sector_count:
            raise Malformed("sector beyond the end of the file")
        start = (number + 1) * self.sector_size
        return self.data[start : start + self.sector_size]

    def _fat_sector_locations(self, count: int, first_difat_sector: int) -> list[int]:
        locations = list(struct.unpack_from(f"<{HEADER_DIFAT_ENTRIES}L", self.data, 0x4C))[:count]
        per_difat_sector = self.sector_size // 4 - 1
        seen: set[int] = set()
        sector = first_difat_sector
        while len(locations) < count:
            if sector > MAX_REGULAR_SECTOR or sector in seen:
                raise Malformed("DIFAT chain ends early or loops")
            seen.add(sector)
            entries = struct.unpack_from(
                f"<{per_difat_sector + 1}L", self._sector(sector).ljust(self.sector_size, b"\0")
            )
            locations.extend(entries[: min(per_difat_sector, count - len(locations))])
            sector = entries[-1]
        if any(location > MAX_REGULAR_SECTOR for location in locations):
            raise Malformed("a FAT sector location is not a sector")
        return locations

    def _next_sector(self, sector: int) -> int:
        per_fat_sector = self.sector_size // 4
        index, slot = divmod(sector, per_fat_sector)
        if index >= len(self.fat_sectors):
            raise Malformed("sector outside the FAT")
        fat_sector = self._sector(self.fat_sectors[index])
        if len(fat_sector) < (slot + 1) * 4:
            raise Malformed("truncated FAT sector")
        return struct.unpack_from("<L", fat_sector, slot * 4)[0]

    def _chain(self, start: int, max_sectors: int):
        seen: set[int] = set()
        sector = start
        while sector != END_OF_CHAIN:
            if sector > MAX_REGULAR_SECTOR or sector in seen or len(seen) >= max_sectors:
                raise Malformed("sector chain is broken, loops or is too long")
            seen.add(sector)
            yield sector
            sector = self._next_sector(sector)

    def entries(self) -> list[tuple[str, int, int, int, int]]:
        """Directory entries in order: (name, type, left sibling, right sibling, child)."""
        per_sector = self.sector_size // DIRECTORY_ENTRY_SIZE
        entries = []
        for sector in self._chain(
            self.first_directory_sector, -(-MAX_DIRECTORY_ENTRIES // per_sector)
        ):
            raw = self._sector(sector)
            for offset in range(0, len(raw) - DIRECTORY_ENTRY_SIZE + 1, DIRECTORY_ENTRY_SIZE):
                name_length, entry_type = struct.unpack_from("<HB", raw, offset + 0x40)
                left, right, child = struct.unpack_from("<3L", raw, offset + 0x44)
                if name_length > 64 or name_length % 2:
                    raise Malformed("bad directory entry name")
                name = (
                    raw[offset : offset + name_length].decode("utf-16-le", "replace").rstrip("\0")
                )
                entries.append((name, entry_type, left, right, child))
        return entries

    def root_children(self):
        """(name, type) of each entry directly in the root storage: the root's child and its
        siblings' tree."""
        entries = self.entries()
        if not entries or entries[0][1] != ROOT_STORAGE:
            raise Malformed("no root storage")
        seen: set[int] = set()
        pending = [entries[0][4]]
        while pending:
            number = pending.pop()
            if number == NO_STREAM:
                continue
            if number >= len(entries) or number in seen:
                raise Malformed("directory tree points outside itself or loops")
            seen.add(number)
            name, entry_type, left, right, _child = entries[number]
            yield name, entry_type
            pending.extend((left, right))


def zip_central_directory(data: bytes, max_entries: int) -> dict[str, int]:
    """Member name -> local header offset, read from the central directory alone; more than
    max_entries is Malformed (whatever the end record claims, the directory is walked no further
    than that)."""
    search_from = max(0, len(data) - END_OF_CENTRAL_DIRECTORY_SIZE - 0xFFFF)
    end = data.rfind(END_OF_CENTRAL_DIRECTORY, search_from)
    if end < 0 or end + END_OF_CENTRAL_DIRECTORY_SIZE > len(data):
        raise Malformed("no end of central directory record")
    disk, directory_disk, _on_disk, total, size, offset, _comment = struct.unpack_from(
        "<4H2LH", data, end + 4
    )
    directory_end_limit = end
    if total == 0xFFFF or size == 0xFFFFFFFF or offset == 0xFFFFFFFF:
        total, size, offset, directory_end_limit = _zip64_directory(data, end)
    elif disk or directory_disk:
        raise Malformed("multi-disk archive")
    if total > max_entries:
        raise Malformed(f"more than {max_entries} entries")
    if offset + size > directory_end_limit:
        raise Malformed("central directory outside the file")
    members: dict[str, int] = {}
    position, directory_end = offset, offset + size
    count = 0
    while position < directory_end:
        if count >= max_entries:
            raise Malformed(f"more than {max_entries} entries")
        if (
            position + CENTRAL_HEADER_SIZE > directory_end
            or data[position : position + 4] != CENTRAL_HEADER
        ):
            raise Malformed("bad central directory header")
        flags = struct.unpack_from("<H", data, position + 8)[0]
        name_length, extra_length, comment_length = struct.unpack_from("<3H", data, position + 28)
        local_header = struct.unpack_from("<L", data, position + 42)[0]
        raw_name = data[
            position + CENTRAL_HEADER_SIZE : position + CENTRAL_HEADER_SIZE + name_length
        ]
        name = raw_name.decode("utf-8" if flags & UTF8_NAME_FLAG else "cp437", "replace")
        members.setdefault(name, local_header)
        position += CENTRAL_HEADER_SIZE + name_length + extra_length + comment_length
        count += 1
    if position != directory_end or count != total:
        raise Malformed("central directory does not match its end record")
    return members


def _zip64_directory(data: bytes, end: int) -> tuple[int, int, int, int]:
    """(entries, size, offset, where the directory must end by) from the zip64 end record the
    locator points to."""
    locator = end - ZIP64_LOCATOR_SIZE
    if locator < 0 or data[locator : locator + 4] != ZIP64_LOCATOR:
        raise Malformed("zip64 fields without a zip64 locator")
    record = struct.unpack_from("<Q", data, locator + 8)[0]
    if record + 56 > locator or data[record : record + 4] != ZIP64_END_OF_CENTRAL_DIRECTORY:
        raise Malformed("zip64 locator points nowhere")
    disk, directory_disk, _on_disk, total, size, offset = struct.unpack_from(
        "<2L4Q", data, record + 16
    )
    if disk or directory_disk:
        raise Malformed("multi-disk archive")
    return total, size, offset, record
