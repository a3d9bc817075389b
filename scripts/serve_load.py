#!/usr/bin/env python3
"""Load on `heed serve` from N concurrent clients (threads, keep-alive connections), each
sending POST /translate with one sentence of a file, in turn, until the run's requests are done.
Prints one JSON line: clients, requests, errors, sentences/s, latency p50/p90/p99 (ms) and, with
--pid, the server's resident memory (VmRSS) before and after.

    python3 scripts/serve_load.py --port 8080 --model en-de --src test.en --clients 64 \\
        --requests 2000 [--beam 1] [--pid SERVER_PID]
"""
import argparse
import http.client
import json
import threading
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--src", required=True, help="sentences, one per line")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=1000, help="in all, over the clients")
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--pid", type=int, default=0, help="the server's, for its memory")
    a = ap.parse_args()
    if a.clients < 1 or a.requests < 1:
        ap.error("--clients and --requests must be >= 1")
    sentences = [s for s in open(a.src, encoding="utf-8").read().splitlines() if s.strip()]
    if not sentences:
        ap.error(f"{a.src}: no sentences")
    lock = threading.Lock()
    next_request = [0]
    latencies, errors = [], []

    def client():
        conn = http.client.HTTPConnection(a.host, a.port, timeout=120)
        while True:
            with lock:
                i = next_request[0]
                if i >= a.requests:
                    break
                next_request[0] += 1
            body = json.dumps({"src": [sentences[i % len(sentences)]], "model": a.model,
                               "beam": a.beam})
            t0 = time.perf_counter()
            try:
                conn.request("POST", "/translate", body, {"Content-Type": "application/json"})
                r = conn.getresponse()
                data = r.read()
                ok = r.status == 200 and len(json.loads(data)["translations"]) == 1
                status = r.status
            except Exception as e:  # noqa: BLE001 - counted as an error, connection renewed
                ok, status = False, repr(e)
                conn.close()
                conn = http.client.HTTPConnection(a.host, a.port, timeout=120)
            dt = time.perf_counter() - t0
            with lock:
                (latencies if ok else errors).append(dt if ok else status)
        conn.close()

    rss0 = rss_kib(a.pid) if a.pid else 0
    threads = [threading.Thread(target=client) for _ in range(a.clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    latencies.sort()

    def pct(p):
        return round(1e3 * latencies[min(len(latencies) - 1, int(p * len(latencies)))], 2) \
            if latencies else None

    out = {"clients": a.clients, "requests": a.requests, "ok": len(latencies),
           "errors": len(errors), "first_errors": [str(e) for e in errors[:3]],
           "seconds": round(wall, 3), "sentences_per_s": round(len(latencies) / wall, 2),
           "p50_ms": pct(0.50), "p90_ms": pct(0.90), "p99_ms": pct(0.99), "beam": a.beam}
    if a.pid:
        out["rss_mib_before"] = round(rss0 / 1024, 1)
        out["rss_mib_after"] = round(rss_kib(a.pid) / 1024, 1)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
