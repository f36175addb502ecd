#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""HTTP clients of the cluster tests, stdlib only.

  cluster_load.py --target A:P --srcs A,B,.. [--seconds S] [--threads K]
                  [--rate R] [--hold N] [--timeout T] [--out FILE]
  cluster_load.py --target A:P --srcs A,B,.. --tuples BASE:COUNT

Without --tuples: K threads open R new connections per second (100) for S
seconds, one GET each (Connection: close), from the source addresses in turn and ephemeral
ports, and N connections opened first are held (keep-alive) with a GET
every 0.2 s each, for /via (whose answer, the address the backend saw,
is the SNAT address of the host the connection goes through). Output (--out, else stdout), one JSON object per line:
  {"kind": "new", "t": START, "src": A, "sport": P, "ok": 0|1,
   "be": BODY, "err": WHY, "ms": MILLISECONDS}
  {"kind": "held", "src": A, "sport": P, "be": BODY, "ok": REQUESTS,
   "failed_at": TIME|null, "err": WHY}
and, as each held connection opens, {"kind": "open", "src": A, "sport": P}.
TIME and START are seconds since the epoch, so that the caller can set
them against the moment it broke something.

With --tuples: for every source address, one connection from each of the
ports BASE..BASE+COUNT-1 in turn, bound explicitly, a GET each: the
backend every client tuple reaches. One line per tuple, "held" lines
without the held fields.
"""

import argparse
import json
import socket
import sys
import threading
import time


def hostport(s):
    host, _, port = s.rpartition(":")
    return host, int(port)


def read_response(sock, keepalive):
    """The body of one HTTP response, stripped."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(4096)
        if not chunk:
            raise OSError("closed before the headers")
        buf += chunk
    head, _, body = buf.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].split()
    if len(status) < 2 or status[1] != b"200":
        raise OSError("status %s" % head.split(b"\r\n", 1)[0].decode())
    length = None
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    if length is None and keepalive:
        raise OSError("no Content-Length")
    while (length is not None and len(body) < length) or (
            length is None and not keepalive):
        chunk = sock.recv(4096)
        if not chunk:
            break
        body += chunk
    return body.decode(errors="replace").strip()


def request(sock, host, keepalive, path="/"):
    sock.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: %s\r\n\r\n" %
                  (path, host, "keep-alive" if keepalive else "close")).encode())
    return read_response(sock, keepalive)


def connect(target, src, sport, timeout):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.settimeout(timeout)
    try:
        s.bind((src, sport))
        s.connect(target)
    except OSError:
        s.close()
        raise
    return s


def one(target, src, sport, timeout):
    t = time.time()
    rec = {"kind": "new", "t": round(t, 4), "src": src, "sport": sport,
           "ok": 0, "be": "", "err": ""}
    s = None
    try:
        s = connect(target, src, sport, timeout)
        rec["sport"] = s.getsockname()[1]
        rec["be"] = request(s, target[0], False)
        rec["ok"] = 1
    except OSError as e:
        rec["err"] = type(e).__name__ + ": " + str(e)
    finally:
        if s is not None:
            s.close()
    rec["ms"] = round((time.time() - t) * 1000, 1)
    return rec


class Held(threading.Thread):
    def __init__(self, target, src, timeout, stop):
        super().__init__(daemon=True)
        self.target, self.stop, self.timeout = target, stop, timeout
        self.rec = {"kind": "held", "src": src, "sport": 0, "be": "",
                    "ok": 0, "failed_at": None, "err": ""}
        self.sock = None
        try:
            self.sock = connect(target, src, 0, timeout)
            self.rec["sport"] = self.sock.getsockname()[1]
        except OSError as e:
            self.rec["failed_at"] = round(time.time(), 4)
            self.rec["err"] = type(e).__name__ + ": " + str(e)

    def run(self):
        if self.sock is None:
            return
        try:
            while not self.stop.is_set():
                be = request(self.sock, self.target[0], True, "/via")
                if self.rec["be"] and be != self.rec["be"]:
                    raise OSError("answer from %s, was %s" %
                                  (be, self.rec["be"]))
                self.rec["be"] = be
                self.rec["ok"] += 1
                self.stop.wait(0.2)
        except OSError as e:
            self.rec["failed_at"] = round(time.time(), 4)
            self.rec["err"] = type(e).__name__ + ": " + str(e)
        finally:
            self.sock.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", type=hostport, required=True)
    ap.add_argument("--srcs", required=True)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--hold", type=int, default=0)
    ap.add_argument("--rate", type=float, default=100)
    ap.add_argument("--timeout", type=float, default=1.0)
    ap.add_argument("--tuples")
    ap.add_argument("--out")
    a = ap.parse_args()
    srcs = a.srcs.split(",")
    out = open(a.out, "w") if a.out else sys.stdout
    lock = threading.Lock()

    def emit(rec):
        with lock:
            out.write(json.dumps(rec) + "\n")
            out.flush()

    if a.tuples:
        base, _, count = a.tuples.partition(":")
        for src in srcs:
            for port in range(int(base), int(base) + int(count)):
                emit(one(a.target, src, port, a.timeout))
        return 0

    stop = threading.Event()
    held = []
    for k in range(a.hold):
        h = Held(a.target, srcs[k % len(srcs)], a.timeout, stop)
        emit({"kind": "open", "src": h.rec["src"], "sport": h.rec["sport"]})
        held.append(h)
        h.start()
    end = time.time() + a.seconds
    turn = [0]

    start = time.time()

    def worker():
        while True:
            with lock:
                k = turn[0]
                turn[0] += 1
            # Paced: connection k starts at k / rate, whichever thread
            # is free; a slow one delays only its own thread.
            t = start + k / a.rate
            if t >= end:
                return
            if t > time.time():
                time.sleep(t - time.time())
            emit(one(a.target, srcs[k % len(srcs)], 0, a.timeout))

    threads = [threading.Thread(target=worker) for _ in range(a.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    for h in held:
        h.join(a.timeout + 1)
        emit(h.rec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
