# SPDX-License-Identifier: GPL-3.0-or-later
"""A minimal Chrome DevTools Protocol client over --remote-debugging-pipe (Python stdlib only).

Chromium reads NUL-terminated JSON commands on fd 3 and writes responses and events on fd 4,
so no websocket and no port are needed.
"""
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--mute-audio", "--remote-debugging-pipe"]


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, binary=None, timeout=30):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="fg-chromium-")
        cmd_r, self.cmd_w = os.pipe()
        self.res_r, res_w = os.pipe()

        def child_fds():
            # move both ends out of the way first, then onto 3 and 4
            a = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(res_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [binary or find_chromium()] + CHROMIUM_FLAGS + [f"--user-data-dir={self.profile}",
                                                            "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=child_fds)
        os.close(cmd_r)
        os.close(res_w)
        self.next_id = 0
        self.buf = b""
        self.pending = []   # messages read but not yet consumed
        self.session = None

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close", session=False)
                    self.proc.wait(timeout=5)
                except Exception:
                    pass
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        finally:
            for fd in (self.cmd_w, self.res_r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- transport --------------------------------------------------------------------
    def post(self, method, params=None, session=True):
        """Send a command; returns its id without waiting."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            r, _, _ = select.select([self.res_r], [], [], left)
            if r:
                chunk = os.read(self.res_r, 1 << 16)
                if not chunk:
                    raise EOFError("chromium closed the pipe")
                self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def wait_for(self, pred, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        for i, m in enumerate(self.pending):
            if pred(m):
                return self.pending.pop(i)
        while True:
            m = self._read(deadline)
            if pred(m):
                return m
            self.pending.append(m)

    def result(self, cmd_id, timeout=None):
        m = self.wait_for(lambda m: m.get("id") == cmd_id, timeout)
        if "error" in m:
            raise RuntimeError(f"CDP error: {m['error']}")
        return m.get("result", {})

    def send(self, method, params=None, session=True, timeout=None):
        return self.result(self.post(method, params, session), timeout)

    def event(self, method, timeout=None):
        return self.wait_for(lambda m: m.get("method") == method, timeout)

    # --- page helpers -----------------------------------------------------------------
    def open(self, url, width=1300, height=900):
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        att = self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True},
                        session=False)
        self.session = att["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.pending.clear()
        self.send("Page.navigate", {"url": url})
        self.event("Page.loadEventFired")

    def eval(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"JS exception in {expr!r}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def click(self, x, y, wait=True):
        ids = [self.post("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y}),
               self.post("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x, "y": y,
                                                       "button": "left", "clickCount": 1}),
               self.post("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x, "y": y,
                                                       "button": "left", "clickCount": 1})]
        if wait:
            for i in ids:
                self.result(i)
        return ids

    def hover(self, x, y):
        self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})

    def key(self, key, code, keycode, modifiers=0, wait=True):
        ids = [self.post("Input.dispatchKeyEvent", {"type": "rawKeyDown", "key": key, "code": code,
                                                     "windowsVirtualKeyCode": keycode,
                                                     "modifiers": modifiers}),
               self.post("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": code,
                                                     "windowsVirtualKeyCode": keycode,
                                                     "modifiers": modifiers})]
        if wait:
            for i in ids:
                self.result(i)
        return ids

    def answer_prompt(self, text, ids):
        """Wait for the prompt a click or key press (command IDS) opened, answer TEXT."""
        self.event("Page.javascriptDialogOpening")
        self.send("Page.handleJavaScriptDialog", {"accept": True, "promptText": text})
        for i in ids:
            self.result(i)
