#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""HTTP/1.1 load of mixed priorities for the admission tests.

Groups of keep-alive connections, each group sending requests with its own
X-Priority (and X-Expect-Ms), one request at a time per connection (closed
loop). Every request has its own target, /TAG/PRIO/CONN/N, so that a
backend's access log tells which requests reached it. A refused request
(503 or 429, Connection: close) makes its connection wait --backoff-ms and
connect again. Writes one JSON document: the wall-clock start, and one
record per request [sent (s from start), prio, status (0: no answer),
latency ms, target, Retry-After or null].
"""

import argparse
import asyncio
import json
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--target", required=True, help="IP:PORT")
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--group", action="append", required=True,
                   help="PRIO:CONNS, X-Priority PRIO on CONNS connections"
                   " (PRIO '-': no X-Priority)")
    p.add_argument("--expect-ms", type=int, default=0,
                   help="X-Expect-Ms of every request (0: none)")
    p.add_argument("--backoff-ms", type=float, default=100.0)
    p.add_argument("--tag", default="g")
    p.add_argument("--out", required=True)
    return p.parse_args()


async def read_response(reader):
    """Status, headers (lower-case names) of one response; body skipped."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    hdr = {}
    for ln in lines[1:]:
        if ":" in ln:
            k, v = ln.split(":", 1)
            hdr[k.strip().lower()] = v.strip()
    n = int(hdr.get("content-length", "0"))
    if n > 0:
        await reader.readexactly(n)
    return status, hdr


async def conn_loop(a, prio, cid, t0, end, recs):
    host, port = a.target.rsplit(":", 1)
    reader = writer = None
    n = 0
    extra = "X-Priority: %s\r\n" % prio if prio != "-" else ""
    if a.expect_ms > 0:
        extra += "X-Expect-Ms: %d\r\n" % a.expect_ms
    while time.monotonic() < end:
        if writer is None:
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(host, int(port)), 2.0)
            except (OSError, asyncio.TimeoutError):
                await asyncio.sleep(0.05)
                continue
        target = "/%s/%s/%d/%d" % (a.tag, prio, cid, n)
        n += 1
        sent = time.monotonic()
        status, hdr = 0, {}
        try:
            writer.write(("GET %s HTTP/1.1\r\nHost: lb\r\n%s\r\n" %
                          (target, extra)).encode())
            await writer.drain()
            status, hdr = await asyncio.wait_for(read_response(reader), 5.0)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError,
                ValueError, IndexError):
            status = 0
        lat = (time.monotonic() - sent) * 1000.0
        recs.append([round(sent - t0, 4), prio, status, round(lat, 2),
                     target, hdr.get("retry-after")])
        if status == 0 or hdr.get("connection", "").lower() == "close":
            writer.close()
            writer = None
        if status in (0, 429, 503):
            await asyncio.sleep(a.backoff_ms / 1000.0)


async def main():
    a = parse_args()
    recs = []
    t0 = time.monotonic()
    wall0 = time.time()
    end = t0 + a.seconds
    tasks = []
    cid = 0
    for g in a.group:
        prio, conns = g.split(":")
        for _ in range(int(conns)):
            tasks.append(conn_loop(a, prio, cid, t0, end, recs))
            cid += 1
    await asyncio.gather(*tasks)
    with open(a.out, "w") as f:
        json.dump({"start": wall0, "records": recs}, f)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
