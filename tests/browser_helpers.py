"""A page opened in headless Chromium at a phone's width, measured as the browser lays it out.

`--window-size` cannot go below 500 px in headless Chromium, so the width is set through the
DevTools protocol (`Emulation.setDeviceMetricsOverride`), spoken over `--remote-debugging-pipe`:
JSON messages ended by a NUL byte on file descriptors 3 (to the browser) and 4 (from it). Nothing
but the standard library, and nothing leaves the machine (the page is a local file).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WIDEST = """(() => {
  const view = document.documentElement.clientWidth;
  const out = [];
  for (const element of document.querySelectorAll("body *")) {
    const box = element.getBoundingClientRect();
    const parent = element.parentElement ? element.parentElement.getBoundingClientRect() : null;
    let scrolled = false;  // inside a box that scrolls on its own, content may be wider than the screen
    for (let up = element.parentElement; up && up !== document.body; up = up.parentElement) {
      if (["auto", "scroll", "hidden"].includes(getComputedStyle(up).overflowX)) { scrolled = true; break; }
    }
    if (!scrolled && box.right > view + 1 && (!parent || parent.right <= view + 1) && out.length < 20) {
      out.push(element.tagName.toLowerCase() + "." + (element.getAttribute("class") || "") + " right " + Math.round(box.right));
    }
  }
  const broken = [...document.querySelectorAll("table.rules code")].filter(e => e.getClientRects().length > 1).map(e => e.textContent);
  return {scrollWidth: document.documentElement.scrollWidth, clientWidth: view, overflowing: out, brokenRules: broken};
})()"""


@dataclass
class Layout:
    scroll_width: int
    client_width: int
    overflowing: list[str]
    """The outermost elements whose right edge is past the screen's (their parent's is not), outside any box that scrolls on its own."""
    broken_rules: list[str]
    """Gate rules (`table.rules code`) laid out on more than one line: a rule broken inside its number."""


class _Pipe:
    def __init__(self, process: subprocess.Popen[bytes], to_browser: int, from_browser: int):
        self.process, self.to_browser, self.from_browser = process, to_browser, from_browser
        self.buffer = b""
        self.next_id = 0

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError(f"Chromium ended (status {self.process.poll()})")
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method: str, session: str | None = None, timeout: float = 60, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        request = {"id": self.next_id, "method": method, "params": params, **({"sessionId": session} if session else {})}
        os.write(self.to_browser, json.dumps(request).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            message = self._message(deadline)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def wait_for(self, event: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while self._message(deadline).get("method") != event:
            pass


def layout_at(page: Path, width: int, screenshot: Path | None = None) -> Layout:
    """The page's layout in a `width` px wide viewport (and its screenshot, full height, when asked)."""
    assert CHROMIUM is not None
    to_read, to_browser = os.pipe()
    from_browser, to_write = os.pipe()

    def descriptors() -> None:  # in the child: the protocol's fixed descriptors (copied first: a pipe may already be 3 or 4)
        reading, writing = os.dup(to_read), os.dup(to_write)
        os.dup2(reading, 3)  # dup2 makes them inheritable, as exec needs
        os.dup2(writing, 4)

    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:  # Chromium's helpers may still write to it after the kill
        process = subprocess.Popen([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--remote-debugging-pipe",
                                    f"--user-data-dir={profile}", "about:blank"],
                                   preexec_fn=descriptors, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=False)
        os.close(to_read)
        os.close(to_write)
        pipe = _Pipe(process, to_browser, from_browser)
        try:
            target = pipe.call("Target.createTarget", url="about:blank")["targetId"]
            session = pipe.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            pipe.call("Emulation.setDeviceMetricsOverride", session, width=width, height=900, deviceScaleFactor=1, mobile=True)
            pipe.call("Page.enable", session)
            pipe.call("Page.navigate", session, url=page.resolve().as_uri())
            pipe.wait_for("Page.loadEventFired")
            found = pipe.call("Runtime.evaluate", session, expression=WIDEST, returnByValue=True)["result"]["value"]
            if screenshot is not None:
                shot = pipe.call("Page.captureScreenshot", session, format="png", captureBeyondViewport=True)
                screenshot.write_bytes(base64.b64decode(shot["data"]))
            return Layout(found["scrollWidth"], found["clientWidth"], found["overflowing"], found["brokenRules"])
        finally:
            os.close(to_browser)
            os.close(from_browser)
            process.kill()
            process.wait(timeout=30)
