"""Webhook secrets: any 16-255 character string; whsec_ keeps its Standard Webhooks meaning, any
other string signs with its UTF-8 bytes, and the docs' checks for each kind (docs/integrating.md)
verify real deliveries."""

import re
from pathlib import Path

import pytest
from standardwebhooks import Webhook

from tests.webhook_helpers import create_webhook, emit, verified_payload, webhook_body

from tests.conftest import RECRUITMENT

pytestmark = RECRUITMENT

INTEGRATING = Path(__file__).resolve().parents[1] / "docs" / "integrating.md"
PLAIN_SECRETS = [
    "s" * 16,
    "correct horse battery staple",
    "é" * 255,
    "whsec-looking but not the form",
]


@pytest.fixture
def receiver(httpserver):
    httpserver.expect_request("/hook").respond_with_data("ok")
    return httpserver


def readme_plain_secret_check(secret: str, request, body: bytes | None = None) -> bool:
    """The docs' hand-written check for a plain secret, run as a receiver would copy it, on what the
    receiver got."""
    block = next(
        code
        for code in re.findall(r"```python[^\n]*\n(.*?)```", INTEGRATING.read_text(), re.S)
        if "def verify_plain_secret" in code
    )
    namespace: dict = {}
    exec(block, namespace)  # noqa: S102 - the docs' own sample
    headers = {name.lower(): value for name, value in request.headers.items()}
    return namespace["verify_plain_secret"](
        secret, headers, request.get_data() if body is None else body
    )


@pytest.mark.parametrize("secret", PLAIN_SECRETS)
def test_a_plain_secret_signs_with_its_utf8_bytes(app, client, tenant_a, receiver, secret):
    webhook = create_webhook(client, tenant_a, receiver.url_for("/hook"), secret=secret)
    assert webhook["secret"] == secret and webhook["has_secret"] is True
    emit(app, tenant_a)
    ((request, _),) = receiver.log
    assert readme_plain_secret_check(secret, request)
    Webhook(secret.encode("utf-8")).verify(request.get_data(), dict(request.headers))
    assert not readme_plain_secret_check(secret, request, body=request.get_data() + b" ")


def test_a_whsec_secret_keeps_its_standard_webhooks_meaning(app, client, tenant_a, receiver):
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    create_webhook(client, tenant_a, receiver.url_for("/hook"), secret=secret)
    emit(app, tenant_a)
    ((request, _),) = receiver.log
    verified_payload(request, secret)  # the standardwebhooks package, as README's receiver uses it
    # its key is the decoded base64, not the text
    assert not readme_plain_secret_check(secret, request)


@pytest.mark.parametrize("secret", ["s" * 15, "s" * 256, "whsec_not base64!", "whsec_" + "QUJD"])
def test_other_secrets_are_422_naming_secret(client, tenant_a, receiver, secret):
    response = client.post(
        "/v1/tenant-webhook",
        json=webhook_body(tenant_a, receiver.url_for("/hook"), secret=secret),
        headers=tenant_a.headers,
    )
    assert response.status_code == 422 and list(response.json["error"]["fields"]) == ["secret"]


def test_a_generated_secret_is_not_kept_in_the_idempotent_answer(
    app, client, tenant_a, receiver, db_url
):
    from tests.privacy_factories import rows_holding

    headers = {**tenant_a.headers, "Idempotency-Key": "webhook-with-generated-secret"}
    body = webhook_body(tenant_a, receiver.url_for("/hook"))
    created = client.post("/v1/tenant-webhook", json=body, headers=headers)
    assert created.status_code == 201 and created.json["secret"]
    stored = [
        row
        for row in rows_holding(db_url, {"secret": created.json["secret"].encode()})
        if not row.startswith("tenant_webhooks.")
    ]  # where it belongs
    assert stored == []
    replay = client.post("/v1/tenant-webhook", json=body, headers=headers)
    assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
    assert "secret" not in replay.json and replay.json["id"] == created.json["id"]
