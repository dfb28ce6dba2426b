"""A resume is stored only when its bytes are one of the accepted types from their first byte on (a
file that merely holds %PDF- somewhere is not a PDF), and it goes back out as a download no browser
renders, sniffs or caches."""

from __future__ import annotations

import base64
import re
import unicodedata
from urllib.parse import unquote

import pytest

from app.files.sniffing import DOC, DOCX, PDF, RTF, TEXT, sniff_content_type
from tests.factories import (
    application_body,
    candidate_body,
    create_candidate,
    create_job,
    docx_bytes,
    pdf_bytes,
)
from tests.office_files import doc_bytes, xls_bytes

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

PDF_MARK = b"%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\n%%EOF\n"
EXECUTABLE = (
    b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00"
    + b"\x00" * 44
    + PDF_MARK
    + bytes(range(256)) * 4
)
ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 56 + PDF_MARK + b"\x00" * 64
WEB_PAGE = (
    b"<html><body><script>fetch('/steal?c=' + document.cookie)</script>\n"
    + PDF_MARK
    + b"</body></html>\n"
)
SVG = b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>\n'
TEXT_LINE = "Jane Doe — Registered Nurse, ICU, São Paulo\n".encode()
# a PDF as writers make them: the header, then a comment of bytes above 127 so tools treat the file
# as binary
BINARY_PDF = (
    b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
    + pdf_bytes()[len(b"%PDF-1.4\n") :]
    + b"stream\n\x89\xfe\x01\x9c\nendstream\n%%EOF\n"
)


def xls_with_pdf_mark() -> bytes:
    """A valid Excel 97 container whose header (the CLSID field, which readers ignore) holds
    %PDF-1.4."""
    data = xls_bytes()
    return data[:8] + b"%PDF-1.4".ljust(16, b"\0") + data[24:]


REFUSED = {
    "xls with %PDF- in its first 1,024 bytes": xls_with_pdf_mark,
    "web page with a script and %PDF- in it": lambda: WEB_PAGE,
    "Windows executable with %PDF- in it": lambda: EXECUTABLE,
    "ELF binary with %PDF- in it": lambda: ELF,
    "bytes before the PDF header": lambda: b"From: jane@example.com\r\n\r\n" + BINARY_PDF,
    "UTF-8 byte order mark before the PDF header": lambda: b"\xef\xbb\xbf" + BINARY_PDF,
    "%PDF- without a version": lambda: b"%PDF-\n" + bytes(range(256)),
    "64 KiB of text, then a binary": lambda: TEXT_LINE * 2000 + ELF,
    "text, then bytes that are not UTF-8 and no NUL": lambda: (
        TEXT_LINE * 2000 + bytes(range(1, 256)) * 4
    ),
    "RTF header, then a binary": lambda: b"{\\rtf1\\ansi Jane Doe}" + ELF,
    "SVG (XML)": lambda: SVG,
    "web page after a byte order mark and blank lines": lambda: (
        b"\xef\xbb\xbf\r\n  <!DOCTYPE html><p>Jane</p>"
    ),
    "UTF-16 with an unpaired surrogate": lambda: (
        b"\xff\xfe" + "Jane".encode("utf-16-le") + b"\x00\xd8A\x00"
    ),
}

ACCEPTED = {
    "PDF 1.7 with binary content": (BINARY_PDF, PDF),
    "PDF 2.0": (b"%PDF-2.0\n" + pdf_bytes()[9:], PDF),
    "DOC": (doc_bytes(), DOC),
    "DOCX": (docx_bytes(), DOCX),
    "RTF": (b"{\\rtf1\\ansi\\deff0 {\\fonttbl {\\f0 Times;}}\\f0 Jane Doe\\par}", RTF),
    "UTF-8 text with a byte order mark": (b"\xef\xbb\xbf" + TEXT_LINE * 3, TEXT),
    "UTF-16 text (Notepad's Unicode)": (
        b"\xff\xfe" + (TEXT_LINE.decode() * 3).encode("utf-16-le"),
        TEXT,
    ),
    "text longer than 64 KiB": (TEXT_LINE * 5000, TEXT),
    "text mentioning <html> further in": ("Skills: Python, <html> and CSS\n".encode() * 3, TEXT),
}


@pytest.mark.parametrize("make", REFUSED.values(), ids=REFUSED.keys())
def test_bytes_that_only_contain_a_signature_are_no_resume_type(make):
    assert sniff_content_type(make()) is None


@pytest.mark.parametrize("data, content_type", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_real_resume_files_keep_their_type(data, content_type):
    assert sniff_content_type(data) == content_type


@pytest.mark.parametrize("make", REFUSED.values(), ids=REFUSED.keys())
def test_an_upload_that_is_no_resume_type_is_415_naming_the_accepted_types(client, tenant_a, make):
    body = candidate_body(base64file=base64.b64encode(make()).decode(), file_name="cv.pdf")
    response = client.post("/v1/candidates", json=body, headers=tenant_a.headers)
    assert response.status_code == 415, response.json
    error = response.json["error"]
    assert error["type"] == "unsupported_media_type"
    assert "PDF, DOC, DOCX, RTF or plain text" in error["message"] and "%PDF-" in error["message"]
    assert client.get("/v1/candidates?page=1&size=10", headers=tenant_a.headers).json["total"] == 0


def parse_disposition(header: str) -> tuple[str, str, str]:
    """(disposition type, ASCII filename, decoded filename*) of a Content-Disposition header."""
    match = re.fullmatch(
        r"(\w+); filename=\"([^\"]*)\"; filename\*=UTF-8''([A-Za-z0-9%._~!$&'()*+,;=:@-]+)", header
    )
    assert match, header
    return match.group(1), match.group(2), unquote(match.group(3), errors="strict")


def is_safe_name(name: str) -> bool:
    return not any(ch in name for ch in '/\\"%;') and not any(
        unicodedata.category(ch)[0] == "C" for ch in name
    )


def create_with_resume(client, tenant, family: str, data: bytes, file_name: str) -> dict:
    extra = {"base64file": base64.b64encode(data).decode(), "file_name": file_name}
    if family == "candidates":
        return create_candidate(client, tenant, **extra)
    body = application_body(create_candidate(client, tenant), create_job(client, tenant), **extra)
    response = client.post("/v1/applications", json=body, headers=tenant.headers)
    assert response.status_code == 201, response.json
    return response.json


@pytest.mark.parametrize("family", ["candidates", "applications"])
@pytest.mark.parametrize(
    "data, content_type, file_name, expected_name, expected_ascii",
    [
        pytest.param(
            docx_bytes(),
            DOCX,
            "resume.pdf",
            "resume.docx",
            "resume.docx",
            id="docx sent as resume.pdf",
        ),
        pytest.param(
            pdf_bytes(),
            PDF,
            '..\\..\\etc/"Lebenslauf" Jörg\r\nX-Evil: 1.html',
            "Lebenslauf_ Jörg_X-Evil_ 1.pdf",
            "Lebenslauf_ Jorg_X-Evil_ 1.pdf",
            id="path, quotes, CR LF, accent and a wrong extension",
        ),
        pytest.param(
            b"Jane Doe\nNurse\n",
            TEXT,
            "履歴書",
            "履歴書.txt",
            "resume.txt",
            id="no ASCII and no extension",
        ),
        pytest.param(
            b"{\\rtf1 Jane}", RTF, "cv.RTF", "cv.rtf", "cv.rtf", id="extension in capitals"
        ),
    ],
)
def test_a_download_is_an_attachment_named_for_its_sniffed_type_never_sniffed_nor_cached(
    client, tenant_a, family, data, content_type, file_name, expected_name, expected_ascii
):
    record = create_with_resume(client, tenant_a, family, data, file_name)
    assert record["resume"]["file_name"] == expected_name
    response = client.get(f"/v1/{family}/{record['id']}/resume", headers=tenant_a.headers)
    assert (
        response.status_code == 200 and response.data == data and response.mimetype == content_type
    )
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Cache-Control"] == "no-store"
    disposition, ascii_name, full_name = parse_disposition(response.headers["Content-Disposition"])
    assert (disposition, ascii_name, full_name) == ("attachment", expected_ascii, expected_name)
    assert is_safe_name(full_name) and is_safe_name(ascii_name) and ascii_name.isascii()


def test_the_download_route_documents_its_headers(client):
    spec = client.get("/openapi.json").json
    for path in (
        "/v1/candidates/{candidate_id}/resume",
        "/v1/applications/{application_id}/resume",
    ):
        description = spec["paths"][path]["get"]["responses"]["200"]["description"]
        for promise in ("attachment", "nosniff", "no-store", "filename*"):
            assert promise in description, (path, promise)
