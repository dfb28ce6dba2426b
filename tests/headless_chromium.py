"""A real browser for tests: Debian's headless Chromium driven over the DevTools protocol (a
WebSocket), with clicks as mouse events at an element's place on the page, and keys and the text's
contrast as tests/chromium.py's driver has them. Skips the test where Chromium is not installed."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.chromium import Accessible

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PATIENCE = (
    60.0  # seconds to wait for a page on a loaded machine; a working page takes well under one
)


class Chromium(Accessible):
    def __init__(self, *, javascript: bool = False):
        if CHROMIUM is None:
            pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium)")
        import websocket

        self.profile = tempfile.mkdtemp(prefix="hirekit-chromium-")
        self.process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                "--remote-debugging-port=0",
                "--remote-allow-origins=*",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port = self._devtools_port()
        page = self._wait(
            lambda: next(
                (target for target in self._targets(port) if target["type"] == "page"), None
            )
        )
        self.socket = websocket.create_connection(
            page["webSocketDebuggerUrl"], timeout=PATIENCE, suppress_origin=True
        )
        self.ids = itertools.count(1)
        self.send("Page.enable")
        self.send("Network.enable")
        if not javascript:  # the page must work without it; DevTools' own evaluations still run
            self.send("Emulation.setScriptExecutionDisabled", value=True)

    def _devtools_port(self) -> int:
        marker = Path(self.profile) / "DevToolsActivePort"
        return int(
            self._wait(lambda: marker.exists() and marker.read_text().split("\n")[0] or None)
        )

    @staticmethod
    def _targets(port: int) -> list[dict]:
        import urllib.request

        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as answer:
                return json.load(answer)
        except OSError:
            return []

    @staticmethod
    def _wait(probe):
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            found = probe()
            if found:
                return found
            time.sleep(0.05)
        raise AssertionError("Chromium did not get there in time")

    def send(self, method: str, **params) -> dict:
        ident = next(self.ids)
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def url(self) -> str:
        return self.evaluate("location.href")

    def goto(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        self._wait(lambda: self.evaluate("document.readyState") == "complete" and self.url() == url)

    def text(self, selector: str) -> str | None:
        return self.evaluate(
            f"(e => e && e.innerText)(document.querySelector({json.dumps(selector)}))"
        )

    def click(self, selector: str) -> None:
        """A left click at the middle of the element, as a person's mouse would."""
        box = self.evaluate(f"""(e => {{ if (!e) return null; e.scrollIntoView({{block: "center"}});
            const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})
            (document.querySelector({json.dumps(selector)}))""")
        assert box, f"no {selector} on {self.url()}"
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                type=kind,
                x=box[0],
                y=box[1],
                button="left",
                clickCount=1,
            )

    def click_and_wait(self, selector: str, ready) -> None:
        """Click (a submit button) and wait for the next page to show what `ready(browser)` looks
        for (something the page clicked on does not have)."""
        self.click(selector)
        self.wait_for_page(ready)

    def press_and_wait(self, key: str, ready) -> None:
        """Press a key (Enter on a submit button) and wait for the next page, as click_and_wait
        does."""
        self.press(key)
        self.wait_for_page(ready)

    def wait_for_page(self, ready) -> None:
        self._wait(lambda: self.evaluate("document.readyState") == "complete" and ready(self))

    def page_command(self, method: str, **params) -> dict:
        return self.send(method, **params)

    def cookies(self) -> list[dict]:
        return self.send("Network.getAllCookies")["cookies"]

    def close(self) -> None:
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
            shutil.rmtree(self.profile, ignore_errors=True)
