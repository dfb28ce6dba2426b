"""What type resume bytes are, read from their content (never their name), and a file name fit to send back."""

from __future__ import annotations

import os
import re

from app.office_files import CFB_SIGNATURE, ZIP_SIGNATURE, is_word_compound_file, is_word_package

PDF = "application/pdf"
DOC = "application/msword"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
RTF = "application/rtf"
TEXT = "text/plain"
EXTENSIONS = {PDF: ".pdf", DOC: ".doc", DOCX: ".docx", RTF: ".rtf", TEXT: ".txt"}
ACCEPTED = "PDF, DOC, DOCX, RTF or plain text"

TEXT_SNIFF_BYTES = 64 * 1024
UNSAFE_NAME_CHARACTERS = re.compile(r"[^\w.() -]+")


def sniff_content_type(data: bytes) -> str | None:
    """The resume type the bytes are (PDF, DOC, DOCX, RTF, plain text), or None; the file name plays no part.

    A compound file is a DOC only with the WordDocument stream, a zip a DOCX only with the Word parts (app.office_files)."""
    if b"%PDF-" in data[:1024]:
        return PDF
    if data.startswith(CFB_SIGNATURE):
        return DOC if is_word_compound_file(data) else None
    if data.startswith(ZIP_SIGNATURE):
        return DOCX if is_word_package(data) else None
    if data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{\\rtf"):
        return RTF
    return TEXT if _is_plain_text(data) else None


def _is_plain_text(data: bytes) -> bool:
    """UTF-8 (or BOM-marked UTF-16) text of printable characters: no NULs, almost no control codes."""
    sample = data[:TEXT_SNIFF_BYTES]
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding, sample = "utf-16", sample
    else:
        encoding = "utf-8"
        if b"\x00" in sample:
            return False
    try:
        text = sample.decode(encoding)
    except UnicodeDecodeError as error:
        # a multi-byte character cut at the sample's end is still text
        if len(data) <= TEXT_SNIFF_BYTES or error.start < len(sample) - 4:
            return False
        text = sample[:error.start].decode(encoding)
    control = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\f\v")
    return bool(text.strip()) and control <= len(text) // 100


def safe_file_name(name: str | None, content_type: str) -> str:
    """A file name fit for a Content-Disposition header; the type's extension when none was given."""
    base = os.path.basename((name or "").replace("\\", "/")).strip()
    base = UNSAFE_NAME_CHARACTERS.sub("_", base)[:200].strip(" .")
    return base or f"resume{EXTENSIONS[content_type]}"
