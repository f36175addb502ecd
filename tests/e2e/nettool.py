#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Small peers of the end-to-end tests, stdlib only. Each runs inside a
test namespace (ip netns exec):

  udp-echo   --bind A:P --name N [--only P]
                                     answers every datagram with "N <data>"
                                     (with --only, those that start with P)
  http-slow  --bind A:P --name N [--delay-ms D] [--status S]
                                     HTTP server that sleeps D ms and answers
                                     status S with body "N\\n" (nginx proxies
                                     to it when a backend needs a delay)
  udp-probe  --target A:P --src A --count N --base-port P
                                     one datagram from each of N distinct
                                     source ports, prints who answered
  inject     --iface I --dst-mac M --src A --dst A:P --kind K --count N
                                     writes malformed Ethernet frames of kind
                                     K (see KINDS) on I through AF_PACKET
  synflood   --iface I --dst-mac M --dst A:P [--seconds S] [--pps R]
             [--count N]             SYNs from spoofed sources of the client's
                                     /24, each frame a new 4-tuple (of
                                     --tuples), for S s or N frames, at R
                                     frames/s; to an IPv6 [A]:P, from
                                     sources of --net, an IPv6 prefix
  udpflood   --iface I --dst-mac M --src A --dst A:P --ports LO-HI
             [--count N] [--seconds S] [--pps R]
                                     UDP datagrams from A, each from the next
                                     source port of LO-HI (round and round),
                                     for S s or N datagrams, at R frames/s
  httpconn   --target A:P --src A [--seconds S] [--timeout T]
                                     GET / on a new connection, one after the
                                     other, for S s; prints how each ended
                                     and the latency percentiles
  ping       --target A [--count N] [--timeout T]   (IPv4 or IPv6)
                                     ICMP echo requests (the namespaces have
                                     no ping program); exit 0 when each got
                                     its reply
"""

import argparse
import http.server
import json
import socket
import socketserver
import struct
import sys
import time


def hostport(s):
    """ADDR:PORT, an IPv6 address in brackets: [ADDR]:PORT."""
    host, _, port = s.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError("expected ADDR:PORT, got %r" % s)
    return host, int(port)


# ---- servers ---------------------------------------------------------------

def udp_echo(args):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(args.bind)
    # Room for bursts of datagrams this server leaves unanswered, so that
    # the ones it answers are not lost behind them.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    prefix = args.name.encode() + b" "
    only = args.only.encode() if args.only else b""
    while True:
        data, peer = sock.recvfrom(65535)
        if data.startswith(only):
            sock.sendto(prefix + data, peer)


def http_slow(args):
    body = (args.name + "\n").encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            time.sleep(args.delay_ms / 1000.0)
            self.send_response(args.status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_HEAD = do_GET

        def log_message(self, *a):
            pass

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True
        request_queue_size = 1024

    Server(args.bind, Handler).serve_forever()


# ---- clients ---------------------------------------------------------------

def udp_probe(args):
    """Every datagram gets its own source port and is sent once; it counts
    as answered only if its own payload comes back within the timeout."""
    answered, lost, by = 0, [], {}
    lat = []
    for i in range(args.count):
        port = args.base_port + i
        payload = b"probe-%d-%d" % (port, i)
        fam = socket.AF_INET6 if ":" in args.target[0] else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_DGRAM)
        try:
            s.bind((args.src if fam == socket.AF_INET or args.src != "0.0.0.0"
                    else "::", port))
            s.connect(args.target)
            s.settimeout(args.timeout)
            t0 = time.monotonic()
            s.send(payload)
            name = None
            deadline = t0 + args.timeout
            while name is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                s.settimeout(left)
                try:
                    data = s.recv(65535)
                except socket.timeout:
                    break
                except ConnectionRefusedError:
                    break  # ICMP port unreachable came back
                who, _, echo = data.partition(b" ")
                if echo == payload:
                    name = who.decode(errors="replace")
            if name is None:
                lost.append(port)
            else:
                answered += 1
                by[name] = by.get(name, 0) + 1
                lat.append(time.monotonic() - t0)
        finally:
            s.close()
    out = {"sent": args.count, "answered": answered, "lost_ports": lost,
           "by": by,
           "max_ms": round(max(lat) * 1000, 1) if lat else None}
    print(json.dumps(out, sort_keys=True))
    return 0 if answered == args.count else 1


def httpconn(args):
    """Each request on its own connection, so that every one needs a new
    handshake: "ok" is a 200 answer, "refused" a RST or an ICMP error
    (connection refused or reset, at any step), "timeout" no answer
    within --timeout; latencies (connect to last byte) of the ok ones."""
    res = {"attempts": 0, "ok": 0, "refused": 0, "timeout": 0, "other": 0}
    lat = []
    req = ("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" %
           args.target[0]).encode()
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        res["attempts"] += 1
        t0 = time.monotonic()
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.settimeout(args.timeout)
            s.bind((args.src, 0))
            s.connect(args.target)
            s.sendall(req)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            if data.startswith(b"HTTP/1.1 200"):
                res["ok"] += 1
                lat.append(time.monotonic() - t0)
            else:
                res["other"] += 1
        except (ConnectionRefusedError, ConnectionResetError):
            res["refused"] += 1
        except socket.timeout:
            res["timeout"] += 1
        except OSError:
            res["other"] += 1
        finally:
            s.close()
    lat.sort()

    def pct(p):
        if not lat:
            return None
        return round(lat[min(len(lat) - 1, int(len(lat) * p))] * 1000, 1)
    res.update(p50_ms=pct(0.50), p99_ms=pct(0.99),
               max_ms=round(lat[-1] * 1000, 1) if lat else None)
    print(json.dumps(res, sort_keys=True))
    return 0


# ---- malformed frames ------------------------------------------------------

def idle_reset(args):
    """One keep-alive request, then silence until the connection is
    reset, closed or --wait seconds pass: prints "first ok" (or "eof")
    and "reset|eof|data|silent SECONDS", the time from the answer."""
    s = socket.create_connection(args.target, timeout=5)
    s.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
    data = b""
    while not data.endswith(args.suffix.encode()):
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    print("first", "ok" if data.endswith(args.suffix.encode()) else "eof")
    t0 = time.monotonic()
    s.settimeout(args.wait)
    try:
        what = "eof" if s.recv(1) == b"" else "data"
    except ConnectionResetError:
        what = "reset"
    except socket.timeout:
        what = "silent"
    print(what, "%.1f" % (time.monotonic() - t0))
    return 0


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ipv4(src, dst, proto, payload, tot=None, ver_ihl=0x45, bad_csum=False):
    tot = 20 + len(payload) if tot is None else tot
    hdr = struct.pack("!BBHHHBBH4s4s", ver_ihl, 0, tot, 0x1234, 0x4000, 64,
                      proto, 0, socket.inet_aton(src), socket.inet_aton(dst))
    c = csum(hdr)
    if bad_csum:
        c ^= 0x5a5a
    return hdr[:10] + struct.pack("!H", c) + hdr[12:] + payload


def tcp(sport, dport, flags, doff=5):
    return struct.pack("!HHIIBBHHH", sport, dport, 1, 0, doff << 4, flags,
                       65535, 0, 0)


# Each kind is built to hit exactly one drop reason of the parser
# (dataplane/parse/pkt_parse.c), named as lb_pkt_verdict_name() names it.
def frame_ip_csum(src, dst, dport, sport):
    return ipv4(src, dst, 6, tcp(sport, dport, 0x02), bad_csum=True)


def frame_ip_version(src, dst, dport, sport):
    return ipv4(src, dst, 6, tcp(sport, dport, 0x02), ver_ihl=0x65)


def frame_tcp_trunc(src, dst, dport, sport):
    return ipv4(src, dst, 6, tcp(sport, dport, 0x02)[:12])


def frame_tcp_flags(src, dst, dport, sport):
    return ipv4(src, dst, 6, tcp(sport, dport, 0x03))  # SYN+FIN


def frame_udp_len(src, dst, dport, sport):
    udp = struct.pack("!HHHH", sport, dport, 40, 0) + b"abcd"
    return ipv4(src, dst, 17, udp)


def frame_trunc_l3(src, dst, dport, sport):
    return ipv4(src, dst, 6, tcp(sport, dport, 0x02))[:12]


KINDS = {
    "ip_csum": frame_ip_csum,
    "ip_version": frame_ip_version,
    "tcp_trunc": frame_tcp_trunc,
    "tcp_flags": frame_tcp_flags,
    "udp_len": frame_udp_len,
    "trunc_l3": frame_trunc_l3,
}


def inject(args):
    mac = bytes.fromhex(args.dst_mac.replace(":", ""))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((args.iface, 0))
    src_mac = s.getsockname()[4][:6]
    dst, dport = args.dst
    sent = {}
    for kind in args.kind:
        build = KINDS[kind]
        for i in range(args.count):
            l3 = build(args.src, dst, dport, 40000 + i)
            s.send(mac + src_mac + b"\x08\x00" + l3)
            sent[kind] = sent.get(kind, 0) + 1
    s.close()
    print(json.dumps(sent, sort_keys=True))
    return 0


def tcp_syn(src, dst, sport, dport, seq):
    """A SYN with a valid TCP checksum, over IPv4 or (addresses with a
    ':') IPv6."""
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, 0x02,
                      65535, 0, 0)
    if ":" in dst:
        pseudo = (socket.inet_pton(socket.AF_INET6, src) +
                  socket.inet_pton(socket.AF_INET6, dst) +
                  struct.pack("!IxxxB", len(hdr), 6))
    else:
        pseudo = struct.pack("!4s4sBBH", socket.inet_aton(src),
                             socket.inet_aton(dst), 0, 6, len(hdr))
    c = csum(pseudo + hdr)
    return hdr[:16] + struct.pack("!H", c) + hdr[18:]


def ipv6(src, dst, nh, payload):
    """An IPv6 header (hop limit 64) and its payload."""
    return (struct.pack("!IHBB", 6 << 28, len(payload), nh, 64) +
            socket.inet_pton(socket.AF_INET6, src) +
            socket.inet_pton(socket.AF_INET6, dst) + payload)


def synflood(args):
    """SYNs from many spoofed sources of the client's /24 (IPv6: of the
    --net prefix, the last 16 bits), as fast as one core sends them, for
    --seconds or --count frames; each frame another 4-tuple."""
    mac = bytes.fromhex(args.dst_mac.replace(":", ""))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((args.iface, 0))
    src_mac = s.getsockname()[4][:6]
    dst, dport = args.dst
    v6 = ":" in dst
    net = args.net.rstrip(":") if v6 else args.net.rsplit(".", 1)[0]
    frames = []
    for i in range(args.tuples):
        host = args.first + i % args.sources
        sport = 1024 + (i // args.sources) % 64000
        if v6:
            src = "%s::%x" % (net, host)
            l3 = ipv6(src, dst, 6, tcp_syn(src, dst, sport, dport, i * 7919))
            frames.append(mac + src_mac + b"\x86\xdd" + l3)
        else:
            src = "%s.%d" % (net, host)
            l3 = ipv4(src, dst, 6, tcp_syn(src, dst, sport, dport, i * 7919))
            frames.append(mac + src_mac + b"\x08\x00" + l3)
    sent, dt = send_frames(s, frames, args)
    s.close()
    print(json.dumps({"sent": sent, "pps": int(sent / dt),
                      "tuples": len(frames)}))
    return 0


def send_frames(s, frames, args):
    """Sends frames round and round for --seconds or until --count went
    out, paced to --pps when given; returns (frames sent, seconds)."""
    sent = 0
    n = len(frames)
    cap = args.count if args.count > 0 else float("inf")
    t0 = time.monotonic()
    end = t0 + args.seconds
    while time.monotonic() < end and sent < cap:
        for _ in range(int(min(1000, cap - sent))):
            try:
                s.send(frames[sent % n])
            except OSError:
                continue
            sent += 1
        # --pps: wait for the schedule of the frames sent so far.
        ahead = sent / args.pps - (time.monotonic() - t0) if args.pps else 0
        if ahead > 0:
            time.sleep(ahead)
    return sent, max(time.monotonic() - t0, 1e-6)


def udp_dgram(src, dst, sport, dport, payload):
    """A UDP header and payload with a valid checksum."""
    ln = 8 + len(payload)
    pseudo = struct.pack("!4s4sBBH", socket.inet_aton(src),
                         socket.inet_aton(dst), 0, 17, ln)
    hdr = struct.pack("!HHHH", sport, dport, ln, 0)
    c = csum(pseudo + hdr + payload) or 0xffff
    return struct.pack("!HHHH", sport, dport, ln, c) + payload


def udpflood(args):
    """Datagrams of one client from many source ports: each frame the next
    port of --ports, so that every one is a new flow until the range comes
    round again. Sent through AF_PACKET, so that no socket per port is
    needed; the kernel of the namespace knows nothing of them, and
    answers, if any came, would find no socket."""
    mac = bytes.fromhex(args.dst_mac.replace(":", ""))
    lo, _, hi = args.ports.partition("-")
    lo, hi = int(lo), int(hi or lo)
    if not 0 < lo <= hi <= 65535:
        raise SystemExit("udpflood: bad --ports %r" % args.ports)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((args.iface, 0))
    src_mac = s.getsockname()[4][:6]
    dst, dport = args.dst
    frames = []
    for sport in range(lo, hi + 1):
        l3 = ipv4(args.src, dst, 17,
                  udp_dgram(args.src, dst, sport, dport, b"flood"))
        frames.append(mac + src_mac + b"\x08\x00" + l3)
    sent, dt = send_frames(s, frames, args)
    s.close()
    print(json.dumps({"sent": sent, "pps": int(sent / dt),
                      "ports": len(frames)}))
    return 0


def ping(args):
    v6 = ":" in args.target
    if v6:
        # The kernel fills in an ICMPv6 checksum (it covers the pseudo
        # header) and hands replies over without the IPv6 header.
        s = socket.socket(socket.AF_INET6, socket.SOCK_RAW,
                          socket.IPPROTO_ICMPV6)
        req, rep = 128, 129
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        req, rep = 8, 0
    s.settimeout(args.timeout)
    ident = (id(s) ^ int(time.time())) & 0xffff
    want = socket.inet_pton(socket.AF_INET6 if v6 else socket.AF_INET,
                            args.target)
    answered = 0
    for seq in range(1, args.count + 1):
        body = struct.pack("!BBHHH", req, 0, 0, ident, seq) + b"sluice-ping"
        if not v6:
            body = body[:2] + struct.pack("!H", csum(body)) + body[4:]
        s.sendto(body, (args.target, 0))
        deadline = time.time() + args.timeout
        while time.time() < deadline:
            try:
                data, peer = s.recvfrom(2048)
            except socket.timeout:
                break
            icmp = data if v6 else data[(data[0] & 0x0f) * 4:]
            fam = socket.AF_INET6 if v6 else socket.AF_INET
            if (socket.inet_pton(fam, peer[0].split("%")[0]) == want and
                    icmp[0] == rep and
                    struct.unpack("!HH", icmp[4:8]) == (ident, seq)):
                answered += 1
                break
    print(json.dumps({"sent": args.count, "answered": answered}))
    return 0 if answered == args.count else 1


def flood_args(p):
    """The bounds and the pace of a flood (send_frames)."""
    p.add_argument("--iface", required=True)
    p.add_argument("--dst-mac", required=True)
    p.add_argument("--dst", type=hostport, required=True)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--pps", type=float, default=0,
                   help="frames per second; 0: as fast as possible")
    p.add_argument("--count", type=int, default=0,
                   help="frames at most; 0: as many as --seconds allow")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)

    p = sub.add_parser("udp-echo")
    p.add_argument("--bind", type=hostport, required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--only", default="",
                   help="answer only the datagrams that start with this")
    p.set_defaults(fn=udp_echo)

    p = sub.add_parser("http-slow")
    p.add_argument("--bind", type=hostport, required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--delay-ms", type=int, default=0)
    p.add_argument("--status", type=int, default=200)
    p.set_defaults(fn=http_slow)

    p = sub.add_parser("udp-probe")
    p.add_argument("--target", type=hostport, required=True)
    p.add_argument("--src", default="0.0.0.0")
    p.add_argument("--count", type=int, default=50)
    p.add_argument("--base-port", type=int, default=20000)
    p.add_argument("--timeout", type=float, default=2.0)
    p.set_defaults(fn=udp_probe)

    p = sub.add_parser("httpconn")
    p.add_argument("--target", type=hostport, required=True)
    p.add_argument("--src", default="0.0.0.0")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--timeout", type=float, default=5.0)
    p.set_defaults(fn=httpconn)

    p = sub.add_parser("idle-reset")
    p.add_argument("--target", type=hostport, required=True)
    p.add_argument("--suffix", default="\n",
                   help="the answer's body ends with this")
    p.add_argument("--wait", type=float, default=15.0)
    p.set_defaults(fn=idle_reset)

    p = sub.add_parser("inject")
    p.add_argument("--iface", required=True)
    p.add_argument("--dst-mac", required=True)
    p.add_argument("--src", required=True)
    p.add_argument("--dst", type=hostport, required=True)
    p.add_argument("--kind", action="append", choices=sorted(KINDS),
                   required=True)
    p.add_argument("--count", type=int, default=5)
    p.set_defaults(fn=inject)

    p = sub.add_parser("synflood")
    p.add_argument("--net", default="10.11.0.0")
    p.add_argument("--first", type=int, default=10)
    p.add_argument("--sources", type=int, default=240)
    p.add_argument("--tuples", type=int, default=65536)
    flood_args(p)
    p.set_defaults(fn=synflood)

    p = sub.add_parser("udpflood")
    p.add_argument("--src", required=True)
    p.add_argument("--ports", default="1024-65535")
    flood_args(p)
    p.set_defaults(fn=udpflood)

    p = sub.add_parser("ping")
    p.add_argument("--target", required=True)
    p.add_argument("--count", type=int, default=2)
    p.add_argument("--timeout", type=float, default=2.0)
    p.set_defaults(fn=ping)

    args = ap.parse_args(argv)
    try:
        return args.fn(args) or 0
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
