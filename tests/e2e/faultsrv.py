#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""HTTP/1.1 backends that misbehave on purpose, for the fault tests.

    faultsrv.py rst ADDR PORT NAME     read a request, then reset (RST)
    faultsrv.py trickle ADDR PORT NAME answer 200, one byte per segment

`trickle` sends its response (body NAME) one byte at a time with
TCP_NODELAY and a pause between bytes, so each byte is its own segment;
it serves keep-alive requests until the client closes.
"""
import socket
import struct
import sys
import threading
import time


def read_head(conn, buf):
    """Returns (head, rest) once a full request head is in, else None."""
    while b"\r\n\r\n" not in buf:
        data = conn.recv(4096)
        if not data:
            return None
        buf += data
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head, rest


def serve_rst(conn, name):
    if read_head(conn, b"") is not None:
        # SO_LINGER with a zero timeout: close() sends a RST.
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack("ii", 1, 0))
    conn.close()


def serve_trickle(conn, name):
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = b""
    try:
        while True:
            got = read_head(conn, buf)
            if got is None:
                break
            head, buf = got
            close = b"connection: close" in head.lower()
            body = name.encode()
            resp = (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n" %
                    (len(body), b"Connection: close\r\n" if close else b"")
                    + body)
            for i in range(len(resp)):
                conn.sendall(resp[i:i + 1])
                time.sleep(0.002)
            if close:
                break
    except OSError:
        pass
    conn.close()


def main():
    mode, addr, port, name = sys.argv[1:5]
    fn = {"rst": serve_rst, "trickle": serve_trickle}[mode]
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, int(port)))
    ls.listen(128)
    while True:
        conn, _ = ls.accept()
        threading.Thread(target=fn, args=(conn, name), daemon=True).start()


if __name__ == "__main__":
    main()
