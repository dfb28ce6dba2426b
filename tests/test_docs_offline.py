"""/docs works without internet: Swagger UI comes from the pinned package under the app's own static route, the page
allows only the app's origin, and a real (headless) Chromium renders the operations from /openapi.json."""

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
    assert "script-src 'self'" in policy and "default-src 'self'" in policy and "unsafe-inline" not in policy
    html = page.get_data(as_text=True)
    assert "<script>" not in html  # no inline script: the policy would block it
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets and all(asset.startswith("/") for asset in assets), assets  # no CDN, no other origin
    for asset in assets:
        answer = client.get(asset)
        assert answer.status_code == 200 and answer.data, asset
    assert b"SwaggerUIBundle" in client.get("/docs/static/swagger-ui-bundle.js").data


@sqlite_only
@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium here: apt-get install -y chromium (.ci/run installs it)")
def test_headless_chromium_renders_the_operations(live_url, client, tmp_path):
    """Swagger UI renders only the tags and operations inside the window (a virtualized list, as a person scrolls):
    a window as tall as the whole list shows every tag of the document and its operations."""
    result = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,60000", "--virtual-time-budget=20000",
         "--dump-dom", f"{live_url}/docs"],
        capture_output=True, text=True, timeout=180)
    dom = result.stdout
    assert 'class="swagger-ui' in dom, result.stderr[-2000:]
    tags = [tag["name"] for tag in client.get("/openapi.json").json["tags"]]
    assert re.findall(r'class="opblock-tag" id="operations-tag-[^"]*" data-tag="([^"]*)"', dom) == tags
    post_jobs = re.search(r'opblock-summary-method">POST</span>.{0,400}?data-path="/v1/jobs"', dom, re.S)
    assert post_jobs, "POST /v1/jobs is not among the rendered operations"
    assert 'data-path="/v1/candidates/{candidate_id}"' in dom
