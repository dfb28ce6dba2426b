"""Resumes: multipart and base64 uploads round-trip byte for byte; type is read from content; size,
base64 and tenant rules."""

import base64
import hashlib
import io

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
from tests.office_files import (
    crowded_zip,
    doc_bytes,
    msg_bytes,
    ppt_bytes,
    xls_bytes,
    xlsx_bytes,
    zip_bytes,
)

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

TEN_MIB = 10 * 1024 * 1024
EXECUTABLE = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00" + bytes(range(256)) * 4
ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 64


def multipart(fields: dict, data: bytes, name: str) -> dict:
    return {**{k: str(v) for k, v in fields.items()}, "file": (io.BytesIO(data), name)}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    "data, expected",
    [
        (pdf_bytes(), PDF),
        (doc_bytes(), DOC),
        (docx_bytes(), DOCX),
        (b"{\\rtf1\\ansi Jane Doe}", RTF),
        ("Jane Doe\nRegistered Nurse, 5 years ICU — São Paulo\n".encode(), TEXT),
        (EXECUTABLE, None),
        (ELF, None),
        (b"PK\x03\x04 not really a zip", None),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 32, None),
    ],
)
def test_type_is_read_from_the_bytes(data, expected):
    assert sniff_content_type(data) == expected


OTHER_OFFICE_FILES = {
    "xls (Workbook stream)": xls_bytes,
    "ppt (PowerPoint Document stream)": ppt_bytes,
    "msg (WordDocument only inside an attachment)": msg_bytes,
    "bare compound file header": lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 512,
    "truncated doc": lambda: doc_bytes()[:1536],
    "xlsx": xlsx_bytes,
    "zip without [Content_Types].xml": lambda: zip_bytes({"word/document.xml": b"<w:document/>"}),
    "zip without word/document.xml": lambda: zip_bytes(
        {"[Content_Types].xml": b"<Types/>", "notes.txt": b"hi"}
    ),
    "central directory of 20,002 entries": lambda: crowded_zip(20_000),
    "20,002 entries, end record claiming 2": lambda: crowded_zip(20_000, claimed_entries=2),
    "end record claiming 65,535 entries": lambda: crowded_zip(0, claimed_entries=65_535),
}


@pytest.mark.parametrize("make", OTHER_OFFICE_FILES.values(), ids=OTHER_OFFICE_FILES.keys())
def test_other_office_containers_are_not_word_resumes(make):
    assert sniff_content_type(make()) is None


@pytest.mark.parametrize("make", OTHER_OFFICE_FILES.values(), ids=OTHER_OFFICE_FILES.keys())
def test_other_office_containers_are_refused_with_415_and_nothing_is_stored(client, tenant_a, make):
    data = make()
    response = client.post(
        "/v1/candidates",
        data=multipart(candidate_body(), data, "resume.doc"),
        headers=tenant_a.headers,
    )
    assert response.status_code == 415, response.json
    assert (
        response.json["error"]["type"] == "unsupported_media_type"
        and "DOCX" in response.json["error"]["message"]
    )
    response = client.post(
        "/v1/candidates",
        json=candidate_body(base64file=b64(data), file_name="cv.docx"),
        headers=tenant_a.headers,
    )
    assert response.status_code == 415
    assert client.get("/v1/candidates?page=1&size=10", headers=tenant_a.headers).json["total"] == 0


@pytest.mark.parametrize(
    "make, content_type",
    [(doc_bytes, DOC), (docx_bytes, DOCX), (lambda: crowded_zip(50), DOCX)],
    ids=["doc", "docx", "docx of 52 parts"],
)
def test_word_documents_are_accepted(client, tenant_a, make, content_type):
    data = make()
    response = client.post(
        "/v1/candidates", data=multipart(candidate_body(), data, "cv"), headers=tenant_a.headers
    )
    assert response.status_code == 201, response.json
    assert response.json["resume"]["content_type"] == content_type
    assert (
        client.get(f"/v1/candidates/{response.json['id']}/resume", headers=tenant_a.headers).data
        == data
    )


def test_multipart_resume_round_trips_byte_for_byte(client, tenant_a):
    data = pdf_bytes("multipart")
    response = client.post(
        "/v1/candidates",
        data=multipart(candidate_body(), data, "jane-doe.pdf"),
        headers=tenant_a.headers,
    )
    assert response.status_code == 201, response.json
    resume = response.json["resume"]
    assert resume == {
        "file_name": "jane-doe.pdf",
        "content_type": PDF,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "reference": None,
    }
    download = client.get(f"/v1/candidates/{response.json['id']}/resume", headers=tenant_a.headers)
    assert download.status_code == 200 and download.data == data
    assert download.mimetype == PDF and "jane-doe.pdf" in download.headers["Content-Disposition"]


def test_base64_resume_round_trips_byte_for_byte(client, tenant_a):
    data = docx_bytes("base64 resume")
    candidate, job = create_candidate(client, tenant_a), create_job(client, tenant_a)
    body = application_body(candidate, job, base64file=b64(data), file_name="cv.docx")
    response = client.post("/v1/applications", json=body, headers=tenant_a.headers)
    assert response.status_code == 201, response.json
    assert response.json["resume"]["content_type"] == DOCX and response.json["resume"][
        "size"
    ] == len(data)
    download = client.get(
        f"/v1/applications/{response.json['id']}/resume", headers=tenant_a.headers
    )
    assert download.status_code == 200 and download.data == data and download.mimetype == DOCX


def test_multipart_application_and_resume_replaced_by_patch(client, tenant_a):
    candidate, job = create_candidate(client, tenant_a), create_job(client, tenant_a)
    first = b"Jane Doe\nPlain text resume\n"
    response = client.post(
        "/v1/applications",
        data=multipart(application_body(candidate, job), first, "cv.txt"),
        headers=tenant_a.headers,
    )
    assert response.status_code == 201, response.json
    application = response.json
    assert application["resume"]["content_type"] == TEXT
    second = b"{\\rtf1 Jane Doe, updated}"
    patched = client.patch(
        f"/v1/applications/{application['id']}",
        headers=tenant_a.headers,
        json={
            "source_application_status": "screening",
            "application_stage": "active",
            "base64file": b64(second),
        },
    )
    assert patched.status_code == 200, patched.json
    assert patched.json["resume"]["file_name"] == "resume.rtf"
    assert (
        client.get(f"/v1/applications/{application['id']}/resume", headers=tenant_a.headers).data
        == second
    )


def test_a_file_string_is_kept_as_a_reference_and_never_fetched(client, tenant_a):
    candidate = create_candidate(client, tenant_a, file="http://127.0.0.1:9/never-fetched.pdf")
    assert candidate["resume"]["reference"] == "http://127.0.0.1:9/never-fetched.pdf"
    assert candidate["resume"]["sha256"] is None
    assert (
        client.get(f"/v1/candidates/{candidate['id']}/resume", headers=tenant_a.headers).status_code
        == 404
    )


def test_resume_over_ten_mib_is_413(client, tenant_a):
    too_big = b"a" * (TEN_MIB + 1)
    response = client.post(
        "/v1/candidates",
        data=multipart(candidate_body(), too_big, "huge.txt"),
        headers=tenant_a.headers,
    )
    assert response.status_code == 413 and response.json["error"]["type"] == "payload_too_large"
    response = client.post(
        "/v1/candidates", json=candidate_body(base64file=b64(too_big)), headers=tenant_a.headers
    )
    assert response.status_code == 413
    assert client.get("/v1/candidates?page=1&size=10", headers=tenant_a.headers).json["total"] == 0


def test_resume_of_exactly_the_limit_is_accepted(make_app, make_tenant):
    app = make_app(MAX_RESUME_BYTES=1000)
    client, tenant = app.test_client(), make_tenant("limits")
    exact = client.post(
        "/v1/candidates", json=candidate_body(base64file=b64(b"x" * 1000)), headers=tenant.headers
    )
    assert exact.status_code == 201 and exact.json["resume"]["size"] == 1000
    over = client.post(
        "/v1/candidates",
        data=multipart(candidate_body(), b"x" * 1001, "a.txt"),
        headers=tenant.headers,
    )
    assert over.status_code == 413


@pytest.mark.parametrize("payload", [EXECUTABLE, ELF])
def test_executable_renamed_pdf_is_415_and_nothing_is_stored(client, tenant_a, payload):
    response = client.post(
        "/v1/candidates",
        data=multipart(candidate_body(), payload, "resume.pdf"),
        headers=tenant_a.headers,
    )
    assert (
        response.status_code == 415 and response.json["error"]["type"] == "unsupported_media_type"
    )
    response = client.post(
        "/v1/candidates",
        json=candidate_body(base64file=b64(payload), file_name="cv.pdf"),
        headers=tenant_a.headers,
    )
    assert response.status_code == 415
    assert client.get("/v1/candidates?page=1&size=10", headers=tenant_a.headers).json["total"] == 0


@pytest.mark.parametrize("text", ["not base64!!", "QUJD=", "%%%%"])
def test_invalid_base64_is_422_naming_base64file(client, tenant_a, text):
    response = client.post(
        "/v1/candidates", json=candidate_body(base64file=text), headers=tenant_a.headers
    )
    assert response.status_code == 422 and "base64file" in response.json["error"]["fields"]


def test_base64_may_come_as_a_data_url_with_line_breaks(client, tenant_a):
    data = pdf_bytes("data url")
    encoded = base64.encodebytes(data).decode()
    candidate = create_candidate(
        client, tenant_a, base64file=f"data:application/pdf;base64,{encoded}"
    )
    assert (
        client.get(f"/v1/candidates/{candidate['id']}/resume", headers=tenant_a.headers).data
        == data
    )


def test_empty_resume_is_422(client, tenant_a):
    response = client.post(
        "/v1/candidates",
        data=multipart(candidate_body(), b"", "empty.pdf"),
        headers=tenant_a.headers,
    )
    assert response.status_code == 422


def test_other_tenant_cannot_read_the_resume(client, tenant_a, tenant_b):
    data = pdf_bytes("private")
    candidate = create_candidate(client, tenant_a, base64file=b64(data))
    job = create_job(client, tenant_a)
    application = client.post(
        "/v1/applications",
        json=application_body(candidate, job, base64file=b64(data)),
        headers=tenant_a.headers,
    ).json
    assert (
        client.get(f"/v1/candidates/{candidate['id']}/resume", headers=tenant_b.headers).status_code
        == 404
    )
    assert (
        client.get(
            f"/v1/applications/{application['id']}/resume", headers=tenant_b.headers
        ).status_code
        == 404
    )
    assert client.get(f"/v1/applications/{application['id']}/resume").status_code == 401


def test_a_body_that_is_neither_json_nor_multipart_is_415(client, tenant_a):
    response = client.post(
        "/v1/applications",
        data="<xml/>",
        headers={**tenant_a.headers, "Content-Type": "application/xml"},
    )
    assert response.status_code == 415


@pytest.mark.parametrize(
    "method, path",
    [
        ("post", "/v1/candidates"),
        ("post", "/v1/applications"),
        ("patch", "/v1/applications/{application_id}"),
        ("post", "/v1/applications/with-questions"),
    ],
)
def test_openapi_documents_json_and_multipart_bodies(client, method, path):
    operation = client.get("/openapi.json").json["paths"][path][method]
    content = operation["requestBody"]["content"]
    assert set(content) == {"application/json", "multipart/form-data"}
    for status in ("413", "415", "422"):
        assert status in operation["responses"]
