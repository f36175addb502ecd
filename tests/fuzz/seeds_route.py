#!/usr/bin/python3
# Writes the route target's seeds into corpus/route/ from the real
# ClientHellos of tests/unit/dataplane/route/hellos/ (capture_hellos.py):
# each as a stream (part 0, cut short too) and as a handshake message to
# be re-recorded (part 1, records of 7 and 64 bytes); and request heads
# (part 2) under a bound of 8192 bytes; and lists of route rules (part 3).
import os

TOP = os.path.dirname(os.path.abspath(__file__))
HELLOS = os.path.join(TOP, "..", "unit", "dataplane", "route", "hellos")
D = os.path.join(TOP, "corpus", "route")


HEADS = {
    "curl": b"GET /v1/users?id=3 HTTP/1.1\r\nHost: API.example.com\r\n"
            b"User-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n",
    "absolute": b"GET http://e.example:81/p?q HTTP/1.1\r\nHost: e\r\n\r\n",
    "connect": b"CONNECT db.example:5432 HTTP/1.1\r\nHost: db\r\n\r\n",
    "options": b"OPTIONS * HTTP/1.1\r\nHost: [2001:db8::1]:80\r\n\r\n",
    "http10_lf": b"\r\nGET /old HTTP/1.0\nX: y\n\n",
    "dup_host": b"GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n",
    "post_body": b"POST /up HTTP/1.1\r\nHost: u\r\nContent-Length: 4\r\n"
                 b"\r\nabcd",
}

RULES = {
    "example": [
        "sni api.example.com pool api", "sni *.example.com pool web",
        "host api.example.com path-prefix /v1/ pool api",
        "host *.Example.com path /health method GET pool web",
        "path-prefix /static/ pool static", "method PURGE pool web",
        "default refuse 421"],
    "bad": ["sni a.example host b pool web", "host a..b pool web",
            "path x pool web", "default pool nosuch", "pool web"],
}


def write(name, data):
    with open(os.path.join(D, name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(D, exist_ok=True)
    for f in sorted(os.listdir(HELLOS)):
        name = f[:-len(".bin")]
        with open(os.path.join(HELLOS, f), "rb") as h:
            data = h.read()
        write("tls_" + name, b"\x00" + data)
        write("tls_" + name + "_cut", b"\x00" + data[:len(data) // 2])
        for k in (7, 64):
            write("tlsmsg_%s_%d" % (name, k), bytes([1, k - 1]) + data[5:])
    for name, head in HEADS.items():
        write("http_" + name, b"\x02\x20\x00" + head)
    for name, lines in RULES.items():
        write("rules_" + name, b"\x03" + "\n".join(lines).encode())


if __name__ == "__main__":
    main()
