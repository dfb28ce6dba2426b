"""Each tenant's resume files are kept apart: an upload never finds (and so never skips writing
because of) another tenant's copy of the same bytes, so its time tells nothing about other tenants;
files stored before stay readable."""

from __future__ import annotations

import base64
import hashlib
import shutil
from pathlib import Path

from tests.factories import create_candidate, pdf_bytes


def stored_files(app) -> set[Path]:
    root = Path(app.config["RESUME_DIR"])
    return {path for path in root.rglob("*") if path.is_file()}


def upload(client, tenant, data: bytes) -> dict:
    return create_candidate(
        client, tenant, base64file=base64.b64encode(data).decode(), file_name="cv.pdf"
    )


def download(client, tenant, candidate: dict) -> bytes:
    response = client.get(f"/v1/candidates/{candidate['id']}/resume", headers=tenant.headers)
    assert response.status_code == 200, response.json
    return response.data


def test_the_same_bytes_from_another_tenant_are_written_to_its_own_files(
    app, client, tenant_a, tenant_b
):
    data = pdf_bytes("the same resume sent to two agencies")
    first = upload(client, tenant_a, data)
    after_a = stored_files(app)
    again = upload(client, tenant_a, data)  # the same tenant's same bytes are stored once
    assert stored_files(app) == after_a
    # another tenant's: written again, as if no one had them
    second = upload(client, tenant_b, data)
    new = stored_files(app) - after_a
    assert len(new) == 1 and new.pop().read_bytes() == data
    assert (
        first["resume"]["sha256"] == second["resume"]["sha256"] == hashlib.sha256(data).hexdigest()
    )
    assert (
        download(client, tenant_a, first)
        == download(client, tenant_a, again)
        == download(client, tenant_b, second)
    )


def test_a_resume_stored_when_files_were_shared_is_still_served(app, client, tenant_a, tenant_b):
    """Files of the shared layout (<RESUME_DIR>/<2 hex>/<sha256>) are read where they are, for the
    records naming them."""
    data = pdf_bytes("stored before tenants were kept apart")
    digest = hashlib.sha256(data).hexdigest()
    candidate = upload(client, tenant_a, data)
    (own_copy,) = stored_files(app)
    shared = Path(app.config["RESUME_DIR"]) / digest[:2] / digest
    shared.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(own_copy, shared)  # where the previous release kept it
    assert download(client, tenant_a, candidate) == data
    other = upload(client, tenant_b, data)  # the shared file is no one's to skip a write for
    assert len(stored_files(app)) == 2
    assert download(client, tenant_b, other) == data and shared.read_bytes() == data
