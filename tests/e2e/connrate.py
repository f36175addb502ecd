#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""TCP connection generator for the admission tests, stdlib only.

  connrate.py --target A:P --src A --rate R --seconds S [--timeout T]

(IPv6: --target [A]:P and an IPv6 --src.)

Opens R new connections per second (evenly paced, non-blocking) from
address A to the target for S seconds; each connection that completes is
closed at once. Prints one JSON line: attempts, ok (handshake completed),
refused (RST), timeout (no answer within T seconds, default 2; the SYN was
dropped), other errors, and the seconds the run took.
"""

import argparse
import errno
import json
import selectors
import socket
import time


def hostport(s):
    host, _, port = s.rpartition(":")
    return host.strip("[]"), int(port)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", type=hostport, required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--rate", type=float, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--timeout", type=float, default=2.0)
    a = ap.parse_args()
    fam = socket.AF_INET6 if ":" in a.src else socket.AF_INET

    sel = selectors.DefaultSelector()
    res = {"attempts": 0, "ok": 0, "refused": 0, "timeout": 0, "other": 0}
    pending = {}  # socket -> deadline
    start = time.monotonic()
    end = start + a.seconds
    gap = 1.0 / a.rate
    nxt = start
    while True:
        now = time.monotonic()
        while nxt <= now and nxt < end:
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.setblocking(False)
            # No SYN retransmission may turn a dropped SYN into a late
            # success: the deadline below decides.
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_SYNCNT, 1)
            s.bind((a.src, 0))
            rc = s.connect_ex(a.target)
            res["attempts"] += 1
            if rc not in (0, errno.EINPROGRESS):
                res["other"] += 1
                s.close()
            else:
                pending[s] = now + a.timeout
                sel.register(s, selectors.EVENT_WRITE)
            nxt += gap
        if nxt >= end and not pending:
            break
        wait = min(nxt - now if nxt < end else 0.05, 0.05)
        for key, _ in sel.select(timeout=max(wait, 0)):
            s = key.fileobj
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err == 0:
                res["ok"] += 1
            elif err == errno.ECONNREFUSED:
                res["refused"] += 1
            elif err == errno.ETIMEDOUT:
                res["timeout"] += 1
            else:
                res["other"] += 1
            sel.unregister(s)
            del pending[s]
            s.close()
        now = time.monotonic()
        for s in [s for s, d in pending.items() if d <= now]:
            res["timeout"] += 1
            sel.unregister(s)
            del pending[s]
            s.close()
    res["seconds"] = round(time.monotonic() - start, 3)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
