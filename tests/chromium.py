"""Headless Chromium (Debian's package) driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: JSON messages ending in NUL on file descriptors 3 and 4), for tests where
a real browser uses the server's pages. Input goes through the keyboard as a person's would: typed
text, Tab, Enter.

What a person using the keyboard alone, or seeing less well, meets on a page (keys pressed, the
focused element, the contrast of the page's text) is shared with the other driver,
tests/headless_chromium.py, through `Accessible`."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import time

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
KEYS = {"Tab": 9, "Enter": 13, "Space": 32, "ArrowDown": 40, "ArrowUp": 38}
WCAG_AA_TEXT = 4.5  # the least contrast WCAG 2's level AA allows for text of ordinary size

# Each element with text of its own that shows: its text, its computed colour, and the colour
# behind it (the first ancestor's, itself first, with a background colour that is not see-through;
# the canvas's white when none has one); colours as [r, g, b, alpha] from the computed styles
TEXT_COLOURS = """(() => {
  const rgba = (value) => { const parts = value.match(/[\\d.]+/g).map(Number);
    return parts.length === 3 ? [...parts, 1] : parts; };
  const behind = (element) => {
    for (let e = element; e; e = e.parentElement) {
      const colour = rgba(getComputedStyle(e).backgroundColor);
      if (colour[3] > 0) return colour;
    }
    return [255, 255, 255, 1];
  };
  return [...document.querySelectorAll("body *")].filter((e) =>
    [...e.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim())
    && e.getClientRects().length && getComputedStyle(e).visibility === "visible"
  ).map((e) => ({text: e.innerText.trim().slice(0, 40), colour: rgba(getComputedStyle(e).color),
                 background: behind(e)}));
})()"""


def luminance(colour) -> float:
    """WCAG 2's relative luminance of an sRGB colour [r, g, b, ...] (0-255)."""
    channels = [value / 255 for value in colour[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(colour, background) -> float:
    """WCAG 2's contrast ratio of text in `colour` (its alpha blended over `background`)."""
    alpha = colour[3] if len(colour) > 3 else 1
    shown = [alpha * c + (1 - alpha) * b for c, b in zip(colour[:3], background[:3])]
    lighter, darker = sorted((luminance(shown), luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


class Accessible:
    """Keys pressed and what they reach, and the contrast of the text on the page, for a driver
    whose `page_command(method, **params)` reaches the page and `evaluate(expression)` reads it."""

    def page_command(self, method: str, **params) -> dict:
        raise NotImplementedError

    def evaluate(self, expression: str):
        raise NotImplementedError

    def press(self, key: str) -> None:
        code = KEYS[key]
        extra = {"text": "\r"} if key == "Enter" else {}
        for kind in ("keyDown", "keyUp"):
            self.page_command(
                "Input.dispatchKeyEvent",
                type=kind,
                key=key,
                code=key,
                windowsVirtualKeyCode=code,
                nativeVirtualKeyCode=code,
                **(extra if kind == "keyDown" else {}),
            )

    def focused(self) -> str:
        """The focused element, as `tag#id` or `tag:text` (what a screen reader would land on)."""
        return self.evaluate(
            "(() => { const e = document.activeElement; "
            "return e.id ? `${e.tagName.toLowerCase()}#${e.id}` : "
            "`${e.tagName.toLowerCase()}:${(e.textContent || e.value || '').trim()}`; })()"
        )

    def low_contrast_text(self, minimum: float = WCAG_AA_TEXT) -> list[tuple[str, float]]:
        """(text, contrast ratio) of each piece of the page's text below `minimum` against what is
        behind it, as the browser computed their colours."""
        found = [
            (item["text"], contrast_ratio(item["colour"], item["background"]))
            for item in self.evaluate(TEXT_COLOURS)
        ]
        assert found, "no text on the page"
        return [(text, round(ratio, 2)) for text, ratio in found if ratio < minimum]


class Browser(Accessible):
    """One headless Chromium with one page."""

    def __init__(self, profile_dir: str):
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()

        def descriptors():  # the pipe ends at 3 (commands in) and 4 (answers out) in the browser
            commands, answers = (
                fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser_read, from_browser_write)
            )
            os.dup2(commands, 3)
            os.dup2(answers, 4)

        self.process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile_dir}",
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=descriptors,  # kept open in the browser: the numbers dup2 gave them
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        targets = self.send("Target.getTargets")["targetInfos"]
        page = next(target for target in targets if target["type"] == "page")
        self.session = self.send("Target.attachToTarget", targetId=page["targetId"], flatten=True)[
            "sessionId"
        ]
        self.send("Page.enable", session=True)

    def send(self, method: str, *, session: bool = False, timeout: float = 60, **params) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)
        raise TimeoutError(method)

    def _read(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_browser, 65536)
            if not chunk:
                raise RuntimeError("Chromium closed its pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_for_load(self, timeout: float = 60) -> None:
        """Until the page's next load event (a navigation, a form's answer)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen = [event for event in self.events if event.get("method") == "Page.loadEventFired"]
            if seen:
                self.events = [
                    event for event in self.events if event.get("method") != "Page.loadEventFired"
                ]
                return
            self.events.append(self._read())
        raise TimeoutError("page load")

    def open(self, url: str) -> None:
        self.events.clear()
        self.send("Page.navigate", session=True, url=url)
        self.wait_for_load()

    def evaluate(self, expression: str):
        return self.send(
            "Runtime.evaluate", session=True, expression=expression, returnByValue=True
        )["result"].get("value")

    def page_command(self, method: str, **params) -> dict:
        return self.send(method, session=True, **params)

    def type(self, text: str) -> None:
        self.send("Input.insertText", session=True, text=text)

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        os.close(self._to_browser)
        os.close(self._from_browser)
