"""/docs works without internet: Swagger UI comes from the pinned package under the app's own static
route, the page allows only the app's origin, and a real (headless) Chromium renders the operations
from /openapi.json."""

import re
import shutil
import subprocess

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
sqlite_only = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)  # the page reads no data


@sqlite_only
def test_docs_page_and_its_files_come_from_the_app_itself(client):
    page = client.get("/docs")
    assert page.status_code == 200
    policy = page.headers["Content-Security-Policy"]
    assert (
        "script-src 'self'" in policy
        and "default-src 'self'" in policy
        and "unsafe-inline" not in policy
    )
    html = page.get_data(as_text=True)
    assert "<script>" not in html  # no inline script: the policy would block it
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    # no CDN, no other origin
    assert assets and all(asset.startswith("/") for asset in assets), assets
    for asset in assets:
        answer = client.get(asset)
        assert answer.status_code == 200 and answer.data, asset
    assert b"SwaggerUIBundle" in client.get("/docs/static/swagger-ui-bundle.js").data


@sqlite_only
@pytest.mark.slow
@pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium here: apt-get install -y chromium (.ci/run installs it)"
)
def test_headless_chromium_renders_the_operations(live_url, client, tmp_path):
    """Swagger UI renders its tags and operations as a virtualized list (those inside the window, as
    a person scrolls): the document's first tag renders with its operations."""
    result = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=10000",
            "--dump-dom",
            f"{live_url}/docs",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    dom = result.stdout
    assert 'class="swagger-ui' in dom, result.stderr[-2000:]
    document = client.get("/openapi.json").json
    first = document["tags"][0]["name"]
    rendered = re.findall(r'class="opblock-tag" id="operations-tag-[^"]*" data-tag="([^"]*)"', dom)
    assert rendered and rendered[0] == first, rendered
    first_paths = [
        path
        for path, item in document["paths"].items()
        if any(
            first in operation.get("tags", [])
            for operation in item.values()
            if isinstance(operation, dict)
        )
    ]
    assert any(f'data-path="{path}"' in dom for path in first_paths), (
        f"no operation of {first} rendered"
    )
    assert "Could not render" not in dom
