"""Small real Office containers made in the test: compound files (DOC, xls, ppt, msg-like) and zips
(DOCX, xlsx-like, central directories with too many entries), so type checks are tried on structure
and not on magic bytes alone."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

SECTOR = 512
END_OF_CHAIN, FREE, FAT_SECTOR, NO_STREAM = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD, 0xFFFFFFFF
# streams this long or longer live in regular sectors, so no mini stream is needed
STREAM_MINIMUM = 4096
STORAGE, STREAM, ROOT = 1, 2, 5


def compound_file(tree: dict) -> bytes:
    """A version 3 compound file (512-byte sectors): `tree` maps names to bytes (a stream) or a dict
    (a storage).

    Streams are padded to 4096 bytes; siblings are kept in CFB order as a right-leaning tree."""
    entries: list[dict] = [
        {
            "name": "Root Entry",
            "type": ROOT,
            "left": NO_STREAM,
            "right": NO_STREAM,
            "child": NO_STREAM,
        }
    ]
    streams: list[tuple[int, bytes]] = []

    def add_children(parent: int, children: dict) -> None:
        numbers = []
        for name, value in sorted(
            children.items(), key=lambda item: (len(item[0]), item[0].upper())
        ):
            number = len(entries)
            numbers.append(number)
            entries.append(
                {
                    "name": name,
                    "type": STREAM if isinstance(value, bytes) else STORAGE,
                    "left": NO_STREAM,
                    "right": NO_STREAM,
                    "child": NO_STREAM,
                }
            )
            if isinstance(value, bytes):
                streams.append((number, value.ljust(STREAM_MINIMUM, b"\0")))
            else:
                add_children(number, value)
        for number, following in zip(numbers, numbers[1:]):
            entries[number]["right"] = following
        entries[parent]["child"] = numbers[0] if numbers else NO_STREAM

    add_children(0, tree)
    directory_sectors = -(-len(entries) // 4)
    data_sectors = sum(-(-len(data) // SECTOR) for _, data in streams)
    fat_sectors = 1
    while fat_sectors * 128 < fat_sectors + directory_sectors + data_sectors:
        fat_sectors += 1
    assert fat_sectors <= 109, "keep test files under the header's DIFAT"
    total = fat_sectors + directory_sectors + data_sectors
    fat = [FREE] * (fat_sectors * 128)
    for number in range(fat_sectors):
        fat[number] = FAT_SECTOR

    def chain(start: int, length: int) -> None:
        for number in range(start, start + length - 1):
            fat[number] = number + 1
        fat[start + length - 1] = END_OF_CHAIN

    first_directory = fat_sectors
    chain(first_directory, directory_sectors)
    body = bytearray()
    next_sector = fat_sectors + directory_sectors
    for number, data in streams:
        length = -(-len(data) // SECTOR)
        chain(next_sector, length)
        entries[number]["start"], entries[number]["size"] = next_sector, len(data)
        body += data.ljust(length * SECTOR, b"\0")
        next_sector += length
    assert next_sector == total

    header = struct.pack(
        "<8s16s5H6s9L",
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
        b"\0" * 16,
        0x3E,
        3,
        0xFFFE,
        9,
        6,
        b"\0" * 6,
        0,
        fat_sectors,
        first_directory,
        0,
        4096,
        END_OF_CHAIN,
        0,
        END_OF_CHAIN,
        0,
    )
    header += struct.pack("<109L", *(list(range(fat_sectors)) + [FREE] * (109 - fat_sectors)))
    unused = {"name": "", "type": 0, "left": NO_STREAM, "right": NO_STREAM, "child": NO_STREAM}
    directory = b"".join(
        _directory_entry(entry)
        for entry in entries + [unused] * (directory_sectors * 4 - len(entries))
    )
    return bytes(header + struct.pack(f"<{len(fat)}L", *fat) + directory + body)


def _directory_entry(entry: dict) -> bytes:
    name = (entry["name"] + "\0").encode("utf-16-le") if entry["name"] else b""
    start = entry.get("start", END_OF_CHAIN if entry["type"] == ROOT else 0)
    return struct.pack(
        "<64sHBB3L16sL8s8sLQ",
        name,
        len(name),
        entry["type"],
        1,
        entry["left"],
        entry["right"],
        entry["child"],
        b"\0" * 16,
        0,
        b"\0" * 8,
        b"\0" * 8,
        start,
        entry.get("size", 0),
    )


# ---- compound files of each kind -------------------------------------------

# a Word 97+ File Information Block starts with wIdent and nFib
FIB = struct.pack("<HH", 0xA5EC, 0x00C1)
SUMMARY = {"\x05SummaryInformation": b"\xfe\xff", "\x05DocumentSummaryInformation": b"\xfe\xff"}


def doc_bytes() -> bytes:
    """A minimal Word 97 document: WordDocument and 1Table at the root, as Word writes them."""
    return compound_file(
        {
            "WordDocument": FIB,
            "1Table": b"\0" * 16,
            "\x01CompObj": b"\x01\xfe",
            "Data": b"",
            **SUMMARY,
        }
    )


def xls_bytes() -> bytes:
    """An Excel 97 workbook's container: a Workbook stream (BIFF8 BOF record)."""
    return compound_file({"Workbook": struct.pack("<HHHH", 0x0809, 16, 0x0600, 0x0005), **SUMMARY})


def ppt_bytes() -> bytes:
    """A PowerPoint 97 container: PowerPoint Document and Current User streams."""
    return compound_file(
        {"PowerPoint Document": b"\0" * 8, "Current User": b"\0" * 8, "Pictures": b"", **SUMMARY}
    )


def msg_bytes() -> bytes:
    """An Outlook message with a Word document attached as an embedded object: the WordDocument
    stream is there, but inside an attachment's storage, not at the root."""
    embedded_word = {"WordDocument": FIB, "1Table": b"\0" * 16}
    return compound_file(
        {
            "__properties_version1.0": b"\0" * 32,
            "__substg1.0_0037001F": "Resume".encode("utf-16-le"),
            "__nameid_version1.0": {"__substg1.0_00020102": b"", "__substg1.0_00030102": b""},
            "__recip_version1.0_#00000000": {"__properties_version1.0": b"\0" * 8},
            "__attach_version1.0_#00000000": {
                "__properties_version1.0": b"\0" * 8,
                "__substg1.0_3701000D": embedded_word,
            },
        }
    )


# ---- zips ------------------------------------------------------------------


def zip_bytes(parts: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in parts.items():
            package.writestr(name, data)
    return buffer.getvalue()


def xlsx_bytes() -> bytes:
    return zip_bytes(
        {
            "[Content_Types].xml": b"<Types/>",
            "_rels/.rels": b"<Relationships/>",
            "xl/workbook.xml": b"<workbook/>",
            "xl/worksheets/sheet1.xml": b"<worksheet/>",
        }
    )


def crowded_zip(extra_entries: int, *, claimed_entries: int | None = None) -> bytes:
    """A zip holding the two Word parts, whose central directory lists `extra_entries` more names
    (all pointing at the first local header); the end record claims `claimed_entries` (the true
    count by default)."""
    parts = {"[Content_Types].xml": b"<Types/>", "word/document.xml": b"<w:document/>"}
    local, central = bytearray(), bytearray()
    for name, data in parts.items():
        offset, raw, crc = len(local), name.encode(), zlib.crc32(data)
        local += struct.pack(
            "<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0x21, crc, len(data), len(data), len(raw), 0
        )
        local += raw + data
        central += _central_header(raw, crc, len(data), offset)
    first_crc = zlib.crc32(parts["[Content_Types].xml"])
    for number in range(extra_entries):
        central += _central_header(
            f"x/{number}".encode(), first_crc, len(parts["[Content_Types].xml"]), 0
        )
    total = len(parts) + extra_entries if claimed_entries is None else claimed_entries
    end = struct.pack(
        "<4s4H2LH",
        b"PK\x05\x06",
        0,
        0,
        min(total, 0xFFFF),
        min(total, 0xFFFF),
        len(central),
        len(local),
        0,
    )
    return bytes(local + central + end)


def _central_header(raw_name: bytes, crc: int, size: int, offset: int) -> bytes:
    return (
        struct.pack(
            "<4s6H3L5H2L",
            b"PK\x01\x02",
            20,
            20,
            0,
            0,
            0,
            0x21,
            crc,
            size,
            size,
            len(raw_name),
            0,
            0,
            0,
            0,
            0,
            offset,
        )
        + raw_name
    )
