#!/usr/bin/env python3
"""A page in headless Chromium, driven over the DevTools protocol on a pipe (no WebSocket
library needed): opens URL, waits until the JavaScript expression --until is true (polled every
0.1 s, at most --timeout seconds; an expression that throws counts as not yet true, since the
page may not have loaded), then prints the JSON value of --eval; with --screenshot, also writes the page as a PNG.

    cdp.py [--flag=FLAG ...] --until 'document.body.dataset.done' --eval 'document.title' URL

Exit 1 on a timeout (with the --eval value on stderr), 2 when Chromium fails."""
import argparse
import base64
import json
import os
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--until", required=True)
    ap.add_argument("--eval", dest="expr", required=True)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--flag", action="append", default=[])
    ap.add_argument("--screenshot", help="PNG file: the page once --until holds")
    a = ap.parse_args()
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()

    def fds():  # Chromium reads commands on fd 3 and writes answers on fd 4
        r, w = os.dup(to_chrome_r), os.dup(from_chrome_w)  # out of the way of 3 and 4 first
        os.dup2(r, 3)  # (dup2 makes them inheritable)
        os.dup2(w, 4)

    chrome = subprocess.Popen(["chromium", "--remote-debugging-pipe"] + a.flag + ["about:blank"],
                              preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=sys.stderr)
    os.close(to_chrome_r)
    os.close(from_chrome_w)
    out = os.fdopen(to_chrome_w, "wb", buffering=0)
    inp = os.fdopen(from_chrome_r, "rb", buffering=0)
    pending = b""
    next_id = [0]

    def call(method, params=None, session=None):
        next_id[0] += 1
        msg = {"id": next_id[0], "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        out.write(json.dumps(msg).encode() + b"\0")
        nonlocal pending
        while True:
            while b"\0" not in pending:
                chunk = inp.read(65536)
                if not chunk:
                    raise RuntimeError("Chromium closed its pipe")
                pending += chunk
            raw, pending = pending.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == next_id[0]:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply["result"]

    def evaluate(expr, session):
        r = call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                      "awaitPromise": True}, session)
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    try:
        target = call("Target.createTarget", {"url": a.url})["targetId"]
        session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        deadline = time.time() + a.timeout

        def until():  # an exception is "not yet": the page may not have its body so soon
            try:
                return evaluate(a.until, session)
            except RuntimeError as e:
                until.error = e
                return False
        until.error = None
        while not until():
            if time.time() > deadline:
                print("timed out waiting for %s (last error: %s); %s"
                      % (a.until, until.error, json.dumps(evaluate(a.expr, session))), file=sys.stderr)
                return 1
            time.sleep(0.1)
        print(json.dumps(evaluate(a.expr, session)))
        if a.screenshot:
            png = call("Page.captureScreenshot", {"format": "png"}, session)["data"]
            with open(a.screenshot, "wb") as f:
                f.write(base64.b64decode(png))
        return 0
    except (RuntimeError, OSError) as e:
        print("chromium: %s" % e, file=sys.stderr)
        return 2
    finally:
        try:
            call("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            chrome.wait(timeout=10)
        except subprocess.TimeoutExpired:
            chrome.kill()


if __name__ == "__main__":
    sys.exit(main())
