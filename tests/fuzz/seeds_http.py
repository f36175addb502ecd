#!/usr/bin/python3
# Writes the http target's seeds into corpus/http/: real exchanges in the
# target's record format (a settings byte, then per segment a byte
# "(length - 1) << 1 | direction" and the bytes), cut in a few ways.
import os

D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "http")

REQ = b"GET /a HTTP/1.1\r\nHost: x\r\nX-Priority: 2\r\nX-Expect-Ms: 50\r\n\r\n"
RESP = (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-SPL: 0.8\r\n"
        b"X-SPL-Time: 1700000000123\r\n\r\nhello")
exchanges = {
    "get_spl": [(0, REQ), (1, RESP)],
    "pipelined": [(0, REQ + b"GET /b HTTP/1.1\r\nHost: x\r\n\r\n"),
                  (1, RESP + b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n"
                   b"X-SPL: 1.5\r\n\r\n")],
    "chunked": [(0, b"POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
                 b"chunked\r\n\r\n4\r\nabcd\r\n0\r\nX-T: 1\r\n\r\n"),
                (1, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                 b"endpoint-load-metrics: TEXT cpu_utilization=0.3, "
                 b"mem_utilization=0.5, rps_fractional=10\r\n\r\n"
                 b"a;x=y\r\n0123456789\r\n0\r\n\r\n")],
    "head": [(0, b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"),
             (1, b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")],
    "continue": [(0, b"PUT /f HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                  b"Content-Length: 3\r\n\r\n"),
                 (1, b"HTTP/1.1 100 Continue\r\n\r\n"), (0, b"abc"),
                 (1, b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")],
    "upgrade": [(0, b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                 b"Connection: Upgrade\r\n\r\n"),
                (1, b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: "
                 b"websocket\r\n\r\n\x81\x01a")],
    "connect": [(0, b"CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n"),
                (1, b"HTTP/1.1 200 Connection established\r\n\r\n")],
    "http10_close": [(0, b"GET / HTTP/1.0\r\n\r\n"),
                     (1, b"HTTP/1.0 200 OK\r\nX-SPL: 12.5\r\n\r\nbody")],
    "bare_lf": [(0, b"GET / HTTP/1.1\nHost: x\n\n"),
                (1, b"HTTP/1.1 404 Not Found\nContent-Length: 0\n"
                 b"x-spl :  3\n\n")],
    "te_cl": [(0, b"POST / HTTP/1.1\r\nContent-Length: 4\r\nTransfer-"
               b"Encoding: chunked\r\n\r\n0\r\n\r\n"),
              (1, b"HTTP/1.1 400 Bad\r\nContent-Length: 0\r\n\r\n")],
    "dup_fold": [(0, REQ), (1, b"HTTP/1.1 200 OK\r\nX-SPL: 1\r\nX-SPL: 2"
                            b"\r\nX-Load: 0.5\r\n x\r\nX-Count: 7\r\n"
                            b"Content-Length: 0\r\n\r\n")],
}


def records(parts, cut):
    out = bytearray()
    for d, data in parts:
        for i in range(0, len(data), cut):
            seg = data[i:i + cut]
            out.append((len(seg) - 1) << 1 | d)
            out += seg
    return bytes(out)


os.makedirs(D, exist_ok=True)
for name, parts in exchanges.items():
    for settings, cut in ((0x00, 128), (0x81, 7), (0x1a, 1)):
        with open(os.path.join(D, "%s_%d" % (name, cut)), "wb") as f:
            f.write(bytes([settings]) + records(parts, cut))
