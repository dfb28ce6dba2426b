"""What type resume bytes are, read from their content (never their name), and a file name fit to
send back."""

from __future__ import annotations

import os
import re
import unicodedata
from urllib.parse import quote

from app.files.office_files import (
    CFB_SIGNATURE,
    ZIP_SIGNATURE,
    is_word_compound_file,
    is_word_package,
)

PDF = "application/pdf"
DOC = "application/msword"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
RTF = "application/rtf"
TEXT = "text/plain"
EXTENSIONS = {PDF: ".pdf", DOC: ".doc", DOCX: ".docx", RTF: ".rtf", TEXT: ".txt"}
ACCEPTED = "PDF, DOC, DOCX, RTF or plain text"
WHAT_EACH_TYPE_IS = (
    "PDF: the %PDF-1.x or %PDF-2.x header at the first byte; DOC: a compound file whose root holds "
    "a WordDocument "
    "stream; DOCX: a zip listing word/document.xml and [Content_Types].xml; RTF: {\\rtf at the "
    "first byte and no NUL "
    "byte; plain text: the whole file is UTF-8 (or UTF-16 with its byte order mark) with no NUL "
    "and at most 1 control "
    "character in 100, not starting as a web page or XML does"
)

# ISO 32000: the header is the file's first line, nothing before it
PDF_HEADER = re.compile(rb"%PDF-[12]\.\d")
RTF_HEADER = b"{\\rtf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# C0 controls but tab, line feed, vertical tab, form feed and carriage return, and DEL: single bytes
# in UTF-8
CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F])
MAX_CONTROL_SHARE = 100  # plain text holds at most one control character per this many bytes
# what a browser takes for a web page or XML, whatever the type it is sent with (WHATWG MIME
# Sniffing 7.1): not a plain-text resume, so refused rather than stored as text
MARKUP_START = re.compile(
    rb"(?:\xef\xbb\xbf)?[\t\n\x0c\r ]*(?:<(?:!DOCTYPE "
    rb"HTML|HTML|HEAD|SCRIPT|IFRAME|H1|DIV|FONT|TABLE|A|"
    rb"STYLE|TITLE|B|BODY|BR|P|!--)[ >]|<\?xml)",
    re.IGNORECASE,
)

MAX_NAME_LENGTH = 200  # characters of a stored file name, its extension included
# path parts, quotes, control characters, ;, %, ...
UNSAFE_NAME_CHARACTERS = re.compile(r"[^\w.() -]+")
EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")


def sniff_content_type(data: bytes) -> str | None:
    """The resume type the bytes are (PDF, DOC, DOCX, RTF, plain text), or None; the file name plays
    no part.

    Each type is read from where its format puts its signature, the first byte (WHAT_EACH_TYPE_IS):
    a file that only holds a signature somewhere inside (an xls, a web page, an executable with
    %PDF- in it) is none of them. A compound file is a DOC only with the WordDocument stream, a zip
    a DOCX only with the Word parts (app.files.office_files)."""
    if PDF_HEADER.match(data):
        return PDF
    if data.startswith(CFB_SIGNATURE):
        return DOC if is_word_compound_file(data) else None
    if data.startswith(ZIP_SIGNATURE):
        return DOCX if is_word_package(data) else None
    if data.startswith(RTF_HEADER):
        return RTF if b"\x00" not in data else None
    return TEXT if is_plain_text(data) else None


def is_plain_text(data: bytes) -> bool:
    """The whole file is UTF-8 (or BOM-marked UTF-16) text: no NUL, at most one control character in
    MAX_CONTROL_SHARE, not blank, not starting as a web page or XML (MARKUP_START). Every byte is
    read, so text first and binary after it is not text."""
    if data.startswith(UTF16_BOMS):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            return False
        utf8 = text.encode("utf-8")
    else:
        utf8 = data
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return False
    if "\x00" in text or not text.strip().lstrip("\ufeff") or MARKUP_START.match(utf8):
        return False
    controls = len(utf8) - len(utf8.translate(None, CONTROL_BYTES))
    return controls <= len(text) // MAX_CONTROL_SHARE


def safe_file_name(name: str | None, content_type: str) -> str:
    """A file name fit for a Content-Disposition header, ending in the extension of the type the
    bytes are.

    Only the last path part is kept; quotes, control and other characters unsafe in a header or a
    file system become `_`. An extension the type does not have is replaced (resume.pdf holding a
    DOCX is resume.docx); none is added."""
    extension = EXTENSIONS[content_type]
    base = os.path.basename((name or "").replace("\\", "/"))
    base = UNSAFE_NAME_CHARACTERS.sub("_", unicodedata.normalize("NFC", base)).strip()
    stem = base[: -len(extension)] if base.lower().endswith(extension) else EXTENSION.sub("", base)
    stem = stem.strip(" ._")[: MAX_NAME_LENGTH - len(extension)].rstrip(" ._")
    return (stem or "resume") + extension


def attachment_disposition(name: str | None, content_type: str) -> str:
    """Content-Disposition for a download (RFC 6266): attachment, with the safe name as an ASCII
    `filename` (accents dropped, for old clients) and in full as the UTF-8 `filename*`."""
    name = safe_file_name(name, content_type)
    fallback = safe_file_name(
        unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode(), content_type
    )
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"
