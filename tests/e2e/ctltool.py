#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Peers of the lb-control end-to-end tests, stdlib only:

  hold  --target A:P --src A --count N --dir D [--timeout S]
        opens N HTTP/1.1 keep-alive connections from A to A:P, one request
        on each, and writes the answering backends to D/first.json; then
        waits for the file D/go, sends a second request on every
        connection, writes D/second.json (backend, or "error: why") and
        closes them. The flows stay open in between, so a test can change
        the configuration under them.
  api   --socket PATH [--line TEXT]... [--big N] [--raw TEXT]
        speaks lb-control's API by hand: sends each --line (a newline is
        added), or one line of N bytes (--big), or TEXT as is (--raw), on
        one connection and prints every response line received (at most
        one per line sent) as it came; "EOF" when the connection closed
        first.
"""

import argparse
import json
import os
import socket
import sys
import time


def hostport(s):
    host, _, port = s.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError("expected ADDR:PORT, got %r" % s)
    return host, int(port)


# ---- hold --------------------------------------------------------------------

def http_exchange(sock, host):
    """One GET on an open connection; returns the body (stripped)."""
    sock.sendall(("GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % host).encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        k = sock.recv(4096)
        if not k:
            raise OSError("closed before the headers")
        buf += k
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines[0].startswith("HTTP/1.1 200"):
        raise OSError("status %r" % lines[0])
    length = None
    for h in lines[1:]:
        name, _, value = h.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None:
        raise OSError("no Content-Length")
    while len(body) < length:
        k = sock.recv(4096)
        if not k:
            raise OSError("closed in the body")
        body += k
    return body[:length].decode("latin-1").strip()


def hold(args):
    conns = []
    first = []
    for _ in range(args.count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.bind((args.src, 0))
            s.connect(args.target)
            first.append(http_exchange(s, args.target[0]))
            conns.append(s)
        except OSError as e:
            first.append("error: %s" % e)
            conns.append(None)
            s.close()
    with open(os.path.join(args.dir, "first.json.tmp"), "w") as f:
        json.dump(first, f)
    os.rename(os.path.join(args.dir, "first.json.tmp"),
              os.path.join(args.dir, "first.json"))
    deadline = time.monotonic() + args.timeout
    go = os.path.join(args.dir, "go")
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.05)
    second = []
    for s in conns:
        if s is None:
            second.append("error: not connected")
            continue
        try:
            second.append(http_exchange(s, args.target[0]))
        except OSError as e:
            second.append("error: %s" % e)
        s.close()
    with open(os.path.join(args.dir, "second.json.tmp"), "w") as f:
        json.dump(second, f)
    os.rename(os.path.join(args.dir, "second.json.tmp"),
              os.path.join(args.dir, "second.json"))
    return 0


# ---- api ---------------------------------------------------------------------

def api(args):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(args.timeout)
    s.connect(args.socket)
    out = []
    if args.raw is not None:
        out.append(args.raw.encode())
    for line in args.line or []:
        out.append(line.encode() + b"\n")
    if args.big:
        out.append(b"x" * args.big + b"\n")
    buf = b""
    expected = sum(x.count(b"\n") for x in out) or 1
    got = 0
    try:
        for chunk in out:
            s.sendall(chunk)
    except OSError:
        pass  # the server may close on a line too long; read what it said
    try:
        while got < expected:
            k = s.recv(65536)
            if not k:
                print("EOF")
                break
            buf += k
            while b"\n" in buf:
                line, _, buf = buf.partition(b"\n")
                print(line.decode("utf-8", "replace"))
                got += 1
    except socket.timeout:
        print("TIMEOUT")
    except OSError as e:
        print("ERROR %s" % e)
    s.close()
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("hold")
    h.add_argument("--target", type=hostport, required=True)
    h.add_argument("--src", required=True)
    h.add_argument("--count", type=int, default=6)
    h.add_argument("--dir", required=True)
    h.add_argument("--timeout", type=float, default=120)
    a = sub.add_parser("api")
    a.add_argument("--socket", required=True)
    a.add_argument("--line", action="append")
    a.add_argument("--big", type=int, default=0)
    a.add_argument("--raw")
    a.add_argument("--timeout", type=float, default=10)
    args = p.parse_args(argv)
    return hold(args) if args.cmd == "hold" else api(args)


if __name__ == "__main__":
    sys.exit(main())
