"""A minimal headless-Chromium driver (DevTools protocol over a stdlib websocket).

Used by the browser test of the HTML report and by scripts/screenshot_report.py; not by any command.
Chromium is started with --remote-debugging-port=0 and writes the port it picked to
<user-data-dir>/DevToolsActivePort; we connect to the browser endpoint, open pages as flattened
target sessions and collect, per page, console errors, uncaught exceptions, JavaScript dialogs and
every network request.
"""

from __future__ import annotations

import base64
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")
# The flags the report test is specified with, plus quieting of background services.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-default-apps", "--disable-extensions", "--mute-audio",
                  "--hide-scrollbars", "--no-default-browser-check")
LAUNCH_TIMEOUT_S = 30.0
CALL_TIMEOUT_S = 30.0


class BrowserError(RuntimeError):
    pass


def find_chromium() -> str | None:
    """$HOTSPOT_CHROMIUM, else the first Chromium/Chrome on PATH."""
    env = os.environ.get("HOTSPOT_CHROMIUM")
    if env:
        return env if Path(env).is_file() else None
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


class _WebSocket:
    """Client side of RFC 6455, text frames only (enough for the DevTools protocol)."""

    def __init__(self, host: str, port: int, path: str, timeout: float) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise BrowserError("DevTools closed the connection during the websocket handshake")
            head += chunk
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status + b" ":
            raise BrowserError(f"DevTools websocket handshake failed: {status.decode(errors='replace')}")
        self.buf = head.split(b"\r\n\r\n", 1)[1]

    def _read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buf)))
            if not chunk:
                raise BrowserError("DevTools connection closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, text: bytes, opcode: int = 0x1) -> None:
        n = len(text)
        if n < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 1 << 16:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        mask = os.urandom(4)
        # XOR with the repeating mask via big-int arithmetic (fast without numpy).
        reps = (mask * (n // 4 + 1))[:n]
        masked = (int.from_bytes(text, "big") ^ int.from_bytes(reps, "big")).to_bytes(n, "big") if n else b""
        self.sock.sendall(head + mask + masked)

    def recv(self) -> bytes:
        parts: list[bytes] = []
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                reps = (mask * (n // 4 + 1))[:n]
                payload = (int.from_bytes(payload, "big") ^ int.from_bytes(reps, "big")).to_bytes(n, "big")
            if opcode == 0x9:  # ping
                self.send(payload, 0xA)
                continue
            if opcode == 0x8:
                raise BrowserError("DevTools closed the websocket")
            if opcode in (0x1, 0x2, 0x0):
                parts.append(payload)
                if b0 & 0x80:
                    return b"".join(parts)

    def settimeout(self, seconds: float) -> None:
        self.sock.settimeout(seconds)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


@dataclass
class PageLog:
    errors: list[str] = field(default_factory=list)     # console errors, exceptions, log errors
    requests: list[str] = field(default_factory=list)   # every URL the page requested
    dialogs: list[str] = field(default_factory=list)    # alert/confirm/prompt messages
    loaded: bool = False


class Browser:
    def __init__(self, binary: str | None = None, window: tuple[int, int] = (1400, 1000)) -> None:
        self.binary = binary or find_chromium()
        if not self.binary:
            raise BrowserError("Chromium not found (install the Debian 'chromium' package or set "
                               "HOTSPOT_CHROMIUM)")
        self.tmp = tempfile.TemporaryDirectory(prefix="hotspot-chromium-")
        profile = Path(self.tmp.name) / "profile"
        self.stderr = open(Path(self.tmp.name) / "stderr.log", "wb")
        args = [self.binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                "--remote-debugging-port=0", f"--window-size={window[0]},{window[1]}", "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.stderr, start_new_session=True)
        self.ws: _WebSocket | None = None
        self.next_id = 0
        self.logs: dict[str, PageLog] = {}
        self.pending: list[dict[str, Any]] = []
        try:
            port, path = self._wait_port(profile / "DevToolsActivePort")
            self.ws = _WebSocket("127.0.0.1", port, path, LAUNCH_TIMEOUT_S)
        except BaseException:
            self.close()
            raise

    def _wait_port(self, port_file: Path) -> tuple[int, str]:
        deadline = time.monotonic() + LAUNCH_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BrowserError(f"Chromium exited with code {self.proc.returncode} at start: "
                                   + self._stderr_tail())
            try:
                lines = port_file.read_text().split("\n")
                if len(lines) >= 2 and lines[0].strip().isdigit() and lines[1].strip():
                    return int(lines[0]), lines[1].strip()
            except OSError:
                pass
            time.sleep(0.05)
        raise BrowserError(f"Chromium did not open its DevTools port within {LAUNCH_TIMEOUT_S:.0f} s")

    def _stderr_tail(self) -> str:
        try:
            return (Path(self.tmp.name) / "stderr.log").read_text(errors="replace")[-800:]
        except OSError:
            return ""

    # --------------------------------------------------------------------------- protocol
    def send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        assert self.ws is not None
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.ws.send(orjson.dumps(msg))
        return self.next_id

    def call(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = CALL_TIMEOUT_S) -> dict[str, Any]:
        mid = self.send(method, params, session)
        msg = self._pump(lambda m: m.get("id") == mid, timeout, f"{method} reply")
        if "error" in msg:
            raise BrowserError(f"{method}: {msg['error'].get('message')}")
        return msg.get("result", {})

    def wait_event(self, method: str, session: str | None, timeout: float) -> dict[str, Any]:
        for i, m in enumerate(self.pending):
            if m.get("method") == method and m.get("sessionId") == session:
                return self.pending.pop(i)
        return self._pump(lambda m: m.get("method") == method and m.get("sessionId") == session,
                          timeout, method)

    def _pump(self, want, timeout: float, what: str) -> dict[str, Any]:
        assert self.ws is not None
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"timed out after {timeout:.0f} s waiting for {what}")
            self.ws.settimeout(left)
            try:
                msg = orjson.loads(self.ws.recv())
            except socket.timeout:
                raise BrowserError(f"timed out after {timeout:.0f} s waiting for {what}") from None
            if "method" in msg:
                self._record(msg)
            if want(msg):
                return msg
            if "method" in msg:
                self.pending.append(msg)
                del self.pending[:-200]  # only recent events matter for wait_event

    def _record(self, msg: dict[str, Any]) -> None:
        log = self.logs.get(msg.get("sessionId", ""))
        if log is None:
            return
        method, p = msg["method"], msg.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            text = (d.get("exception") or {}).get("description") or d.get("text", "exception")
            log.errors.append(f"uncaught: {text}")
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            log.errors.append(f"console.{p.get('type')}: {args}")
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            log.errors.append(f"log {e.get('source')}: {e.get('text')} {e.get('url', '')}".strip())
        elif method == "Network.requestWillBeSent":
            log.requests.append(p.get("request", {}).get("url", ""))
        elif method == "Page.javascriptDialogOpening":
            log.dialogs.append(p.get("message", ""))
            self.send("Page.handleJavaScriptDialog", {"accept": False}, msg.get("sessionId"))
        elif method == "Page.loadEventFired":
            log.loaded = True

    # --------------------------------------------------------------------------- pages
    def open(self, url: str, timeout: float = CALL_TIMEOUT_S) -> "Page":
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.logs[session] = PageLog()
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=session)
        page = Page(self, target, session)
        page.navigate(url, timeout)
        return page

    def close(self) -> None:
        if self.ws is not None:
            try:
                self.send("Browser.close")
            except OSError:
                pass
            self.ws.close()
            self.ws = None
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.stderr.close()
        self.tmp.cleanup()

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    def __init__(self, browser: Browser, target: str, session: str) -> None:
        self.browser, self.target, self.session = browser, target, session

    @property
    def log(self) -> PageLog:
        return self.browser.logs[self.session]

    def navigate(self, url: str, timeout: float = CALL_TIMEOUT_S) -> None:
        self.log.loaded = False
        res = self.browser.call("Page.navigate", {"url": url}, self.session)
        if res.get("errorText"):
            raise BrowserError(f"navigation to {url} failed: {res['errorText']}")
        if not self.log.loaded:
            self.browser.wait_event("Page.loadEventFired", self.session, timeout)

    def evaluate(self, expression: str, timeout: float = CALL_TIMEOUT_S) -> Any:
        res = self.browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                     "awaitPromise": True}, self.session, timeout)
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            raise BrowserError(f"evaluate failed: {(d.get('exception') or {}).get('description') or d.get('text')}")
        return res.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = CALL_TIMEOUT_S) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out after {timeout:.0f} s waiting for {expression}")
            time.sleep(0.05)

    def click(self, selector: str) -> bool:
        """A real mouse click (press + release) at the centre of the first element matching
        `selector`, scrolled into view first; False when nothing matches."""
        rect = self.evaluate(
            "(function(){var e=document.querySelector(" + orjson.dumps(selector).decode() + ");"
            "if(!e) return null; e.scrollIntoView({block:'center'}); var r=e.getBoundingClientRect();"
            "return [r.left + r.width / 2, r.top + r.height / 2];})()")
        if not rect:
            return False
        for kind in ("mousePressed", "mouseReleased"):
            self.browser.call("Input.dispatchMouseEvent", {"type": kind, "x": rect[0], "y": rect[1],
                                                           "button": "left", "clickCount": 1},
                              self.session)
        return True

    def screenshot(self, path: Path, width: int = 1400, max_height: int | None = None) -> int:
        """PNG of the page from the top (the whole page, or its first `max_height` pixels);
        returns its size in bytes."""
        height = int(self.evaluate("Math.ceil(document.documentElement.scrollHeight)") or 1000)
        if max_height:
            height = min(height, max_height)
        self.browser.call("Emulation.setDeviceMetricsOverride",
                          {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                          self.session)
        shot = self.browser.call("Page.captureScreenshot",
                                 {"format": "png", "clip": {"x": 0, "y": 0, "width": width,
                                                            "height": height, "scale": 1}},
                                 self.session, timeout=60)
        data = base64.b64decode(shot["data"])
        Path(path).write_bytes(data)
        return len(data)

    def close(self) -> None:
        try:
            self.browser.call("Target.closeTarget", {"targetId": self.target})
        except BrowserError:
            pass
        self.browser.logs.pop(self.session, None)
