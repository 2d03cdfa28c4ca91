"""A small Chrome DevTools Protocol client over ``--remote-debugging-pipe``.

Drives Debian's headless Chromium with no driver and no extra package: commands go to
the browser on its fd 3 and answers come back on its fd 4, as NUL-terminated JSON.
Enough for the HTML view's browser tests: navigate, evaluate, click, type, press keys,
emulate a phone, switch JavaScript off and take screenshots.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--font-render-hinting=none",
)
#: Chromium's switch for the XSLT processor: the HTML view must work without it.
NO_XSLT = "--disable-features=XSLT"
#: Recorded before any page script runs: CSP violations and script errors of the page.
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__violations.push(e.violatedDirective + " " + e.blockedURI);
});
"""


class CDPError(RuntimeError):
    """The browser answered a command with an error, or did not answer in time."""


class Browser:
    """One headless Chromium process and its pipe."""

    def __init__(self, profile: Path, *flags: str, log: Path | None = None) -> None:
        if CHROMIUM is None:
            raise CDPError("chromium is not installed")
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # The browser expects the pipe on fds 3 and 4: bash puts them there (dash cannot
        # redirect fds above 9).
        r, w = to_browser_r, from_browser_w
        script = f'exec "$0" "$@" 3<&{r} 4>&{w} {r}<&- {w}>&-'
        command = ["bash", "-c", script, CHROMIUM, *FLAGS, *flags]
        command += ["--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"]
        with (log or Path(os.devnull)).open("ab") as output:
            self.process = subprocess.Popen(
                command,
                pass_fds=(to_browser_r, from_browser_w),
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
            )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._write = os.fdopen(to_browser_w, "wb")
        self._read = from_browser_r
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        self._write.write(json.dumps(message).encode() + b"\0")
        self._write.flush()
        while True:
            answer = self._receive()
            if answer.get("id") == message["id"]:
                if "error" in answer:
                    raise CDPError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer["result"]
                return result
            self.events.append(answer)

    def wait_for(self, method: str, session: str, timeout: float = 60) -> dict[str, Any]:
        """The first pending event ``method`` of ``session`` (waiting for it if need be)."""
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event.get("method") == method and event.get("sessionId") == session:
                    self.events.remove(event)
                    return event
            self.events.append(self._receive(deadline - time.monotonic()))

    def _receive(self, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                raise CDPError("no answer from the browser in time")
            data = os.read(self._read, 1 << 20)
            if not data:
                raise CDPError(f"the browser exited ({self.process.poll()})")
            self._buffer += data
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def close(self) -> None:
        with suppress(CDPError, OSError):
            self.send("Browser.close")
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(20)
        with suppress(OSError):  # the browser is gone: nothing left to flush
            self._write.close()
        os.close(self._read)


class Tab:
    """One page (a target) of the browser, with helpers for the tests."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.target: str = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session: str = browser.send(
            "Target.attachToTarget", {"targetId": self.target, "flatten": True}
        )["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, self.session)

    def goto(self, url: str) -> None:
        """Load ``url`` afresh (a URL with a #fragment too, which alone would not reload)."""
        if "#" in url:
            self.goto("about:blank")
        self.browser.events.clear()
        answer = self.send("Page.navigate", {"url": url})
        if answer.get("errorText"):
            raise CDPError(f"{url}: {answer['errorText']}")
        self.browser.wait_for("Page.loadEventFired", self.session)

    def follow(self, expression: str) -> None:
        """Evaluate ``expression`` (a click on a link) and wait for the next page's load."""
        self.browser.events.clear()
        self.eval(expression)
        self.browser.wait_for("Page.loadEventFired", self.session)

    def eval(self, expression: str) -> Any:
        answer = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in answer:
            raise CDPError(f"{expression!r}: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def press(self, key: str) -> None:
        """A real key press (keyDown + keyUp) on the focused element: Enter, Tab or Space."""
        codes = {"Enter": 13, "Tab": 9, " ": 32}
        base = {"key": key, "code": "Space" if key == " " else key}
        base["windowsVirtualKeyCode"] = codes[key]  # type: ignore[assignment]
        if key == "Enter":
            base["text"] = "\r"
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", **base})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", **base})

    def type(self, text: str) -> None:
        self.send("Input.insertText", {"text": text})

    def emulate(self, width: int, height: int, *, mobile: bool, scale: float = 1) -> None:
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": mobile},
        )

    def scripts(self, enabled: bool) -> None:
        self.send("Emulation.setScriptExecutionDisabled", {"value": not enabled})

    def screenshot(self, path: Path, *, full_page: bool = False) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            height = min(int(size["height"]), 6000)
            width = int(self.eval("window.innerWidth"))
            params["clip"] = {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", params)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.target})


@contextmanager
def browser(profile: Path, *flags: str, log: Path | None = None) -> Iterator[Browser]:
    instance = Browser(profile, *flags, log=log)
    try:
        yield instance
    finally:
        instance.close()
