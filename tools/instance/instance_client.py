#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Raw-socket checks of lb-instance, one per subcommand.

    instance_client.py CHECK PORT [ARGS...]

Each check talks HTTP/1.1 to 127.0.0.1:PORT over plain sockets, so that
it controls exactly which bytes go out in which write. It exits 0 when
the instance behaved, or prints what was wrong and exits 1.
"""

import os
import signal
import socket
import sys
import time

HOST = "127.0.0.1"


class Fail(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Fail(what)


class Resp:
    def __init__(self, status, headers, body, raw_head):
        self.status = status
        self.headers = headers
        self.body = body
        self.raw_head = raw_head

    def h(self, name):
        v = self.headers.get(name.lower())
        return v[0] if v else None

    def spl(self):
        v = self.h("x-spl")
        expect(v is not None, "no X-SPL in %r" % self.raw_head)
        return float(v)

    def __repr__(self):
        return "<%d %r %r>" % (self.status, self.headers, self.body)


class Conn:
    def __init__(self, port, timeout=5.0):
        self.s = socket.create_connection((HOST, port), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def send(self, data):
        self.s.sendall(data)

    def fill(self):
        d = self.s.recv(65536)
        if not d:
            raise EOFError("connection closed by the instance")
        self.buf += d

    def response(self, head=False):
        """Reads one response; content by Content-Length (none for HEAD)."""
        while b"\r\n\r\n" not in self.buf:
            self.fill()
        raw, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = raw.decode("latin-1").split("\r\n")
        ver, code = lines[0].split(" ", 2)[:2]
        expect(ver == "HTTP/1.1", "status line %r" % lines[0])
        headers = {}
        for line in lines[1:]:
            k, v = line.split(":", 1)
            headers.setdefault(k.strip().lower(), []).append(v.strip())
        status = int(code)
        n = 0
        if status >= 200 and not head:
            n = int(headers.get("content-length", ["0"])[0])
        while len(self.buf) < n:
            self.fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return Resp(status, headers, body, raw)

    def closed(self, wait=2.0):
        """True when the instance closes the connection within wait s."""
        self.s.settimeout(wait)
        try:
            while True:
                d = self.s.recv(65536)
                if not d:
                    return True
                self.buf += d
        except (socket.timeout, TimeoutError):
            return False
        except ConnectionResetError:
            return True

    def close(self):
        self.s.close()


def get(path="/", extra="", method="GET", version="1.1", body=b""):
    head = "%s %s HTTP/%s\r\nHost: t\r\n%s\r\n" % (method, path, version,
                                                   extra)
    return head.encode() + body


# ---- checks ----

def check_basic(port, name):
    c = Conn(port)
    c.send(get())
    r = c.response()
    expect(r.status == 200, "status %r" % r)
    expect(r.body == (name + "\n").encode(), "body %r" % r.body)
    expect(r.h("x-instance") == name, "X-Instance %r" % r.h("x-instance"))
    expect(r.h("content-length") == str(len(name) + 1), "Content-Length")
    expect(r.h("date") is not None and r.h("date").endswith(" GMT"),
           "Date %r" % r.h("date"))
    expect(r.h("connection") is None, "Connection on a kept-alive answer")
    r.spl()
    expect(r.h("x-spl-time").isdigit(), "X-SPL-Time %r" % r.h("x-spl-time"))
    # Kept alive: a second request on the same connection.
    c.send(get("/again"))
    expect(c.response().status == 200, "second request")
    c.close()


def check_pipeline(port, delay_ms, bench_ms):
    """3 requests in one write, 3 responses in order, queueing in the SPL."""
    delay, bench = float(delay_ms), float(bench_ms)
    c = Conn(port)
    c.send(get("/1") +
           get("/2", method="HEAD") +
           get("/3", extra="Content-Length: 4\r\nConnection: close\r\n",
               method="POST", body=b"abcd"))
    r1 = c.response()
    r2 = c.response(head=True)
    r3 = c.response()
    # Order: only the first has content, the HEAD answer none (or r3's
    # status line would not parse), the third closes.
    expect(len(r1.body) > 0 and r1.h("connection") is None, "r1 %r" % r1)
    expect(r2.body == b"" and r2.h("content-length") == r1.h(
        "content-length"), "r2 %r" % r2)
    expect(r3.h("connection") == "close" and r3.body == r1.body,
           "r3 %r" % r3)
    expect(c.buf == b"" and c.closed(), "closed after Connection: close")
    # Each waited for the ones before it: SPL ~ k * delay / bench.
    spls = [r1.spl(), r2.spl(), r3.spl()]
    for k, s in enumerate(spls, 1):
        lo = k * delay / bench
        expect(lo <= s <= lo + 20.0 / bench + 0.1 * lo,
               "SPL of request %d: %.4f, want ~%.4f (all: %r)"
               % (k, s, lo, spls))
    print("pipelined SPLs %s" % " ".join("%.3f" % s for s in spls))


def check_spl(port, delay_ms, bench_ms):
    """X-SPL ~ delay / bench, X-SPL-Time close to now."""
    want = float(delay_ms) / float(bench_ms)
    c = Conn(port)
    got = []
    for _ in range(5):
        c.send(get())
        r = c.response()
        now_ms = time.time() * 1000.0
        s = r.spl()
        t = int(r.h("x-spl-time"))
        expect(want <= s <= want * 1.1 + 20.0 / float(bench_ms),
               "X-SPL %.4f, want ~%.4f" % (s, want))
        expect(abs(t - now_ms) < 3000, "X-SPL-Time %d, now %d" % (t, now_ms))
        got.append(s)
    print("X-SPL %s for delay %s ms / bench %s ms"
          % (" ".join("%.3f" % s for s in got), delay_ms, bench_ms))


def check_no_spl(port):
    c = Conn(port)
    c.send(get())
    r = c.response()
    expect(r.status == 200 and r.h("x-spl") is None and
           r.h("x-spl-time") is None, "SPL headers with --spl off: %r" % r)


def check_orca(port, cpu_us):
    """Busy for 1.5 s: CPU use ~ rate x --cpu-us, rate ~ what was sent."""
    c = Conn(port)
    t_end = time.monotonic() + 1.5
    n = 0
    while time.monotonic() < t_end:
        c.send(get())
        r = c.response()
        n += 1
    v = r.h("endpoint-load-metrics")
    expect(v is not None and v.startswith("TEXT "), "ORCA header %r" % v)
    pairs = dict(p.strip().split("=") for p in v[5:].split(","))
    expect(set(pairs) == {"cpu_utilization", "rps_fractional"},
           "ORCA keys %r" % pairs)
    cpu, rps = float(pairs["cpu_utilization"]), float(pairs["rps_fractional"])
    busy = rps * float(cpu_us) / 1e6
    expect(0.5 * busy <= cpu <= 2.0 * busy + 0.1 and cpu <= 1.5,
           "cpu_utilization %r, want ~%.3f" % (cpu, busy))
    expect(0.5 * n / 1.5 <= rps <= 2.0 * n / 1.5,
           "rps_fractional %r, sent %.1f/s" % (rps, n / 1.5))
    print("ORCA %s (sent %.1f requests/s)" % (v, n / 1.5))


def statuses(port, n, batch=25):
    """Statuses of n requests on one kept-alive connection, in order."""
    c = Conn(port)
    out = []
    while len(out) < n:
        k = min(batch, n - len(out))
        c.send(get() * k)
        for _ in range(k):
            out.append(c.response().status)
    c.close()
    return out


def check_error_rate(port, rate, n):
    rate, n = float(rate), int(n)
    st = statuses(port, n)
    bad = [s for s in st if s not in (200, 503)]
    expect(not bad, "statuses other than 200/503: %r" % bad[:5])
    share = st.count(503) / float(n)
    expect(abs(share - rate) <= 0.05, "503 share %.3f, want %.3f" %
           (share, rate))
    print("503 share %.3f over %d requests (want %.3f)" % (share, n, rate))


def check_sequence(port, n, path):
    """Writes the 200/503 sequence to path, or compares with it."""
    seq = "".join("x" if s == 503 else "." for s in statuses(port, int(n)))
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(seq)
        return
    with open(path) as f:
        old = f.read()
    expect(seq == old, "sequence differs from the first run")


def check_sequence_differs(port, n, path):
    seq = "".join("x" if s == 503 else "." for s in statuses(port, int(n)))
    with open(path) as f:
        expect(seq != f.read(), "another seed gave the same sequence")


def check_stall(port, pid):
    """No answer while stalled; SIGUSR1 releases it; again stalls."""
    pid = int(pid)
    c = Conn(port)
    c.send(get())
    c.s.settimeout(1.0)
    try:
        c.fill()
        raise Fail("answered while stalled: %r" % c.buf)
    except (socket.timeout, TimeoutError):
        pass
    t0 = time.monotonic()
    os.kill(pid, signal.SIGUSR1)
    c.s.settimeout(3.0)
    r = c.response()
    expect(r.status == 200, "after SIGUSR1: %r" % r)
    # It waited at least the second above: SPL >= 1 s / bench (10 ms).
    expect(r.spl() >= 90.0, "SPL %.3f does not count the stall" % r.spl())
    expect(time.monotonic() - t0 < 2.0, "slow release")
    os.kill(pid, signal.SIGUSR1)
    time.sleep(0.2)
    c.send(get())
    c.s.settimeout(1.0)
    try:
        c.fill()
        raise Fail("answered after the second SIGUSR1: %r" % c.buf)
    except (socket.timeout, TimeoutError):
        pass
    print("stalled, released (SPL %.1f), stalled again" % r.spl())


def check_max_inflight(port, n, limit):
    """n requests at once against --max-inflight limit: limit get 200."""
    n, limit = int(n), int(limit)
    conns = [Conn(port) for _ in range(n)]
    for c in conns:
        c.send(get())
    got = sorted(c.response().status for c in conns)
    expect(got == [200] * limit + [503] * (n - limit),
           "statuses %r" % got)


def check_http(port):
    """Protocol corners, each on a fresh connection."""
    # Connection: close is honoured.
    c = Conn(port)
    c.send(get(extra="Connection: close\r\n"))
    r = c.response()
    expect(r.h("connection") == "close" and c.closed(), "Connection: close")
    # HTTP/1.0 closes by default, keeps alive when asked.
    c = Conn(port)
    c.send(b"GET / HTTP/1.0\r\n\r\n")
    r = c.response()
    expect(r.status == 200 and r.h("connection") == "close" and c.closed(),
           "HTTP/1.0 default close: %r" % r)
    c = Conn(port)
    c.send(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    r = c.response()
    expect(r.h("connection") == "keep-alive" and not c.closed(0.3),
           "HTTP/1.0 keep-alive: %r" % r)
    c.send(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    expect(c.response().status == 200, "second HTTP/1.0 request")
    # Content-Length content is read and dropped.
    c = Conn(port)
    c.send(get(method="POST", extra="Content-Length: 100000\r\n",
               body=b"G" * 100000) + get())
    expect(c.response().status == 200 and c.response().status == 200,
           "POST with content then GET")
    # Chunked content is read and dropped, extensions and trailers too.
    c = Conn(port)
    c.send(get(method="POST", extra="Transfer-Encoding: chunked\r\n",
               body=b"5;x=y\r\nhello\r\n3\r\nGET\r\n0\r\nT: v\r\n\r\n") +
           get())
    expect(c.response().status == 200 and c.response().status == 200,
           "chunked POST then GET")
    # Expect: 100-continue gets its interim answer before the content.
    c = Conn(port)
    c.send(get(method="PUT", extra="Content-Length: 3\r\n"
               "Expect: 100-continue\r\n"))
    r = c.response()
    expect(r.status == 100, "interim answer %r" % r)
    c.send(b"abc")
    expect(c.response().status == 200, "final answer after 100")
    # Errors: answered in order, then the connection is closed.
    cases = [
        (b"hello\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\n\r\n", 400),  # no Host
        (b"GET / HTTP/1.1\r\nHost: a\r\nBad Field: x\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a\r\nX: " + b"v" * 9000 + b"\r\n\r\n",
         431),
        (b"GET /" + b"p" * 9000 + b" HTTP/1.1\r\n", 414),
        (b"GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        (b"POST / HTTP/1.1\r\nHost: a\r\n"
         b"Transfer-Encoding: gzip, chunked\r\n\r\n", 501),
        (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n"
         b"Transfer-Encoding: chunked\r\n\r\n", 400),
    ]
    for data, want in cases:
        c = Conn(port)
        c.send(get() + data + get())
        r = c.response()
        expect(r.status == 200, "request before %r: %r" % (data[:30], r))
        r = c.response()
        expect(r.status == want and r.h("connection") == "close",
               "%r: %r, want %d" % (data[:30], r, want))
        expect(c.buf == b"" and c.closed(), "%r: not closed" % data[:30])
    # A client that half-closes still gets its answers.
    c = Conn(port)
    c.send(get() + get())
    c.s.shutdown(socket.SHUT_WR)
    expect(c.response().status == 200 and c.response().status == 200 and
           c.closed(), "answers after the client's FIN")


def check_sigterm(port, pid, delay_ms):
    """A request in flight at SIGTERM is answered; new ones are refused."""
    pid = int(pid)
    c = Conn(port)
    idle = Conn(port)
    c.send(get())
    time.sleep(float(delay_ms) / 4000.0)
    os.kill(pid, signal.SIGTERM)
    time.sleep(0.1)
    try:
        Conn(port, timeout=1.0)
        raise Fail("a connection was accepted while draining")
    except ConnectionRefusedError:
        pass
    r = c.response()
    expect(r.status == 200 and r.h("connection") == "close",
           "in-flight answer %r" % r)
    expect(c.closed(), "closed after the last answer")
    expect(idle.closed(), "idle connection not closed")


def main():
    checks = {
        "basic": check_basic,
        "pipeline": check_pipeline,
        "spl": check_spl,
        "no-spl": check_no_spl,
        "orca": check_orca,
        "error-rate": check_error_rate,
        "sequence": check_sequence,
        "sequence-differs": check_sequence_differs,
        "stall": check_stall,
        "max-inflight": check_max_inflight,
        "http": check_http,
        "sigterm": check_sigterm,
    }
    if len(sys.argv) < 3 or sys.argv[1] not in checks:
        print("usage: %s {%s} PORT [ARGS...]" %
              (sys.argv[0], ",".join(checks)), file=sys.stderr)
        return 2
    try:
        checks[sys.argv[1]](int(sys.argv[2]), *sys.argv[3:])
    except (Fail, OSError, EOFError, ValueError) as e:
        print("FAIL %s: %s: %s" % (sys.argv[1], type(e).__name__, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
