#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""lbctl against a scripted stand-in of lb-control.

Each case runs the lbctl binary given as the first argument against a Unix
socket served by this script, which records the request line and answers
as the case says (a response, garbage, silence, a closed connection), and
checks lbctl's exit status, stdout, stderr and the request it sent.

usage: lbctl_test.py PATH/TO/lbctl [CASE...]
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

LBCTL = None
TMP = None


class Server:
    """Serves one Unix socket; each connection gets `answer(line)`."""

    def __init__(self, path, answer):
        self.path = path
        self.answer = answer
        self.requests = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                buf = b""
                try:
                    while b"\n" not in buf:
                        k = conn.recv(65536)
                        if not k:
                            break
                        buf += k
                except OSError:
                    pass
                line = buf.split(b"\n", 1)[0]
                self.requests.append(line)
                try:
                    for chunk in self.answer(line):
                        if chunk is None:  # hold the connection open
                            time.sleep(3)
                            break
                        conn.sendall(chunk)
                except OSError:
                    pass

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()
        os.unlink(self.path)


def reply(obj):
    """An answer function sending one JSON object as one line."""
    data = (json.dumps(obj) + "\n").encode()
    return lambda line: [data]


def ok(text="", data=None):
    return reply({"v": 1, "ok": True, "text": text, "data": data})


def err(msg, code=-22):
    return reply({"v": 1, "ok": False, "code": code, "error": msg})


FAILS = 0


def check(what, cond, detail=""):
    global FAILS
    if cond:
        print("ok: " + what)
    else:
        FAILS += 1
        print("FAILED: " + what + (": " + detail if detail else ""))


def run(args, answer=None, env=None, stdin=None, timeout=20):
    """Runs lbctl ARGS against a server answering with `answer` (None: no
    server at all). Returns (status, stdout, stderr, requests, seconds)."""
    path = os.path.join(TMP, "ctl.sock")
    srv = Server(path, answer) if answer is not None else None
    e = dict(os.environ)
    e.pop("LBCTL_SOCKET", None)
    e.pop("COLUMNS", None)  # the width is each case's to give
    e["LBCTL_SOCKET"] = path
    if env:
        e.update(env)
    t0 = time.monotonic()
    try:
        p = subprocess.run([LBCTL] + args, input=stdin, capture_output=True,
                           env=e, timeout=timeout)
        secs = time.monotonic() - t0
    finally:
        if srv is not None:
            srv.close()
    reqs = srv.requests if srv is not None else []
    return p.returncode, p.stdout, p.stderr, reqs, secs


def one_line(b):
    return b.count(b"\n") == 1 and b.endswith(b"\n")


# ---- cases -------------------------------------------------------------------


def case_text():
    table = "PROTO VIP:PORT\ntcp   10.0.0.1:80\n"
    rc, out, er, reqs, _ = run(["backend", "list"], ok(table))
    check("text answer: exit 0", rc == 0, f"rc={rc} err={er!r}")
    check("text answer: stdout is the text", out.decode() == table, repr(out))
    check("text answer: nothing on stderr", er == b"", repr(er))
    req = json.loads(reqs[0]) if reqs else None
    check("request: one JSON line with v, argv and json",
          req == {"v": 1, "argv": ["backend", "list"], "json": False},
          repr(reqs))


def case_text_newline():
    rc, out, _, _, _ = run(["service", "list"], ok("no newline"))
    check("text without a newline gets one", rc == 0 and
          out == b"no newline\n", repr(out))
    rc, out, _, _, _ = run(["service", "add", "tcp", "10.0.0.1:80"], ok(""))
    check("empty text prints nothing", rc == 0 and out == b"", repr(out))
    rc, out, _, _, _ = run(
        ["save"], reply({"v": 1, "ok": True, "data": None}))
    check("answer without text prints nothing", rc == 0 and out == b"",
          repr(out))


def case_json():
    data = {"services": [{"service": "tcp 10.0.0.1:80", "backends": 2}],
            "n": 1}
    rc, out, _, reqs, _ = run(["--json", "service", "list"],
                              ok("ignored\n", data))
    check("--json: exit 0", rc == 0)
    try:
        got = json.loads(out)
    except ValueError:
        got = None
    check("--json: prints the data object", got == data, repr(out))
    check("--json: pretty-printed (indented)", b"\n  " in out, repr(out))
    check("--json: request says json true",
          reqs and json.loads(reqs[0]).get("json") is True, repr(reqs))
    rc, out, _, _, _ = run(["-j", "backend", "add", "tcp", "1.2.3.4:80",
                            "10.0.0.1:80"], ok("", None))
    check("--json without data prints {\"ok\": true}",
          rc == 0 and json.loads(out) == {"ok": True}, repr(out))


def case_error():
    rc, out, er, _, _ = run(
        ["service", "add", "tcp", "10.0.0.1:80"],
        err("service tcp 10.0.0.1:80 already exists", -17))
    check("error: exit 1", rc == 1, f"rc={rc}")
    check("error: one line 'lbctl: <error>' on stderr",
          er == b"lbctl: service tcp 10.0.0.1:80 already exists\n", repr(er))
    check("error: nothing on stdout", out == b"", repr(out))
    rc, _, er, _, _ = run(["x"], err("bad\nthing"))
    check("error with a newline is still one line",
          rc == 1 and er == b"lbctl: bad thing\n", repr(er))
    rc, _, er, _, _ = run(["x"], reply({"v": 1, "ok": False}))
    check("error without a message: exit 1, one line",
          rc == 1 and one_line(er) and er.startswith(b"lbctl: "), repr(er))
    rc, _, er, _, _ = run(["--json", "x"], err("nope"))
    check("--json error: exit 1, message on stderr",
          rc == 1 and er == b"lbctl: nope\n", repr(er))


def case_no_server():
    path = os.path.join(TMP, "absent.sock")
    rc, out, er, _, _ = run(["stats"], None, env={"LBCTL_SOCKET": path})
    check("no socket: exit 2", rc == 2, f"rc={rc}")
    check("no socket: 'cannot reach lb-control at PATH: reason'",
          er == f"lbctl: cannot reach lb-control at {path}: No such file or "
          "directory\n".encode(), repr(er))
    # A socket file nobody listens on.
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()
    rc, _, er, _, _ = run(["stats"], None, env={"LBCTL_SOCKET": path})
    os.unlink(path)
    check("dead socket: exit 2, connection refused",
          rc == 2 and b"Connection refused" in er and one_line(er), repr(er))
    rc, _, er, _, _ = run(["-s", "x" * 200, "stats"], None)
    check("socket path too long: exit 2, one line",
          rc == 2 and one_line(er) and b"socket path" in er, repr(er))


def case_socket_option():
    path = os.path.join(TMP, "ctl.sock")
    rc, _, er, reqs, _ = run(["--socket", path, "stats"], ok("s\n"),
                             env={"LBCTL_SOCKET": "/nonexistent/x.sock"})
    check("--socket overrides $LBCTL_SOCKET", rc == 0 and len(reqs) == 1,
          repr(er))
    rc, _, er, _, _ = run(["stats"], None,
                          env={"LBCTL_SOCKET": "/nonexistent/x.sock"})
    check("$LBCTL_SOCKET is used",
          rc == 2 and b"/nonexistent/x.sock" in er, repr(er))


def case_words():
    words = ["backend", "add", "a b", 'q"uote', "back\\slash", "#x", "",
             "\u00e9t\u00e9", "-1"]
    rc, _, _, reqs, _ = run(words, ok(""))
    got = json.loads(reqs[0])["argv"] if reqs else None
    check("words reach lb-control exactly (spaces, quotes, UTF-8, -1)",
          rc == 0 and got == words, repr(got))
    p = subprocess.run([LBCTL.encode(), b"service", b"\xff"],
                       capture_output=True,
                       env=dict(os.environ, LBCTL_SOCKET=os.path.join(
                           TMP, "none.sock")))
    check("invalid UTF-8 word: exit 2, one line, nothing sent",
          p.returncode == 2 and one_line(p.stderr) and
          p.stderr == b'lbctl: word 2 ("\\xff") is not valid UTF-8 text\n',
          repr(p.stderr))


def case_usage():
    rc, out, er, _, _ = run([], None)
    check("no command: usage on stderr, exit 2",
          rc == 2 and er.startswith(b"usage: lbctl") and out == b"",
          repr(er))
    rc, _, er, _, _ = run(["--frob", "stats"], None)
    check("unknown long option: exit 2, one line",
          rc == 2 and one_line(er) and b"--frob" in er, repr(er))
    rc, _, er, _, _ = run(["-x", "stats"], None)
    check("unknown short option: exit 2, one line",
          rc == 2 and one_line(er) and b"-x" in er, repr(er))
    rc, _, er, _, _ = run(["--socket"], None)
    check("option without its value: exit 2, one line",
          rc == 2 and one_line(er), repr(er))
    rc, _, er, _, _ = run(["--timeout", "soon", "stats"], None)
    check("bad --timeout: exit 2, one line",
          rc == 2 and one_line(er) and b"soon" in er, repr(er))
    rc, _, er, _, _ = run(["apply"], None)
    check("apply without FILE: exit 2, usage line",
          rc == 2 and er == b"lbctl: usage: lbctl apply FILE\n", repr(er))
    rc, _, er, _, _ = run(["apply", "a", "b"], None)
    check("apply with two files: exit 2", rc == 2, repr(er))
    rc, out, _, _, _ = run(["--help"], None)
    check("--help: usage on stdout, exit 0",
          rc == 0 and out.startswith(b"usage: lbctl"), repr(out))
    rc, out, _, _, _ = run(["--version"], None)
    check("--version: exit 0", rc == 0 and out.startswith(b"lbctl "),
          repr(out))
    rc, _, _, reqs, _ = run(["help", "--json"], ok("h\n"))
    check("options after the command belong to the command",
          rc == 0 and json.loads(reqs[0])["argv"] == ["help", "--json"],
          repr(reqs))


def write(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def case_apply():
    text = "service add tcp 10.0.0.1:80\n# comment\nbackend add tcp " \
           "10.0.0.1:80 10.1.0.1:80\n"
    path = write("conf.txt", text.encode())
    rc, out, er, reqs, _ = run(["apply", path], ok(""))
    req = json.loads(reqs[0]) if reqs else {}
    check("apply: exit 0, quiet", rc == 0 and out == b"" and er == b"",
          repr(er))
    check("apply: one request with the whole text and the file's name",
          req == {"v": 1, "apply": text, "name": path}, repr(req))
    rc, _, er, _, _ = run(["apply", path],
                          err(path + ":3: no service tcp 10.0.0.1:80", -2))
    check("apply refused: exit 1, FILE:LINE message",
          rc == 1 and er == f"lbctl: {path}:3: no service tcp "
          "10.0.0.1:80\n".encode(), repr(er))
    rc, _, _, reqs, _ = run(["apply", "-"], ok(""), stdin=text.encode())
    req = json.loads(reqs[0]) if reqs else {}
    check("apply -: standard input, named stdin",
          rc == 0 and req.get("apply") == text and
          req.get("name") == "stdin", repr(req))
    empty = write("empty.txt", b"")
    rc, _, _, reqs, _ = run(["apply", empty], ok(""))
    check("apply of an empty file sends an empty text",
          rc == 0 and json.loads(reqs[0]).get("apply") == "", repr(reqs))
    missing = os.path.join(TMP, "missing.txt")
    rc, _, er, reqs, _ = run(["apply", missing], ok(""))
    check("apply of a missing file: exit 1, 'PATH: reason', nothing sent",
          rc == 1 and er == f"lbctl: {missing}: No such file or "
          "directory\n".encode() and reqs == [], repr(er))
    rc, _, er, reqs, _ = run(["apply", TMP], ok(""))
    check("apply of a directory: exit 1, one line, nothing sent",
          rc == 1 and one_line(er) and reqs == [], repr(er))
    nul = write("nul.txt", b"service list\nsave\0x\n")
    rc, _, er, reqs, _ = run(["apply", nul], ok(""))
    check("apply with a NUL byte: exit 1, FILE:LINE, nothing sent",
          rc == 1 and er == f"lbctl: {nul}:2: NUL byte in line\n".encode()
          and reqs == [], repr(er))
    bad = write("latin1.txt", b"# ok\n# ok\n# caf\xe9\n")
    rc, _, er, reqs, _ = run(["apply", bad], ok(""))
    check("apply of non-UTF-8 text: exit 1, FILE:LINE, nothing sent",
          rc == 1 and er == f"lbctl: {bad}:3: not valid UTF-8 "
          "text\n".encode() and reqs == [], repr(er))
    big = write("big.txt", b"# " + b"x" * 1100000 + b"\n")
    rc, _, er, reqs, _ = run(["apply", big], ok(""))
    check("apply of a file over 1 MiB: exit 1, one line, nothing sent",
          rc == 1 and one_line(er) and reqs == [], repr(er))
    quotes = write("quotes.txt", b'# "quoted" \\ and\ttab\n' * 42000)
    rc, _, er, reqs, _ = run(["apply", quotes], ok(""))
    check("apply whose JSON grows over 1 MiB: exit 1, nothing sent",
          rc == 1 and one_line(er) and reqs == [], repr(er))
    deep = os.path.join(TMP, "d" * 200, "e" * 200)
    os.makedirs(deep)
    longname = os.path.join(deep, "f\u00e9" * 10 + ".conf")
    with open(longname, "w") as f:
        f.write("save\n")
    rc, _, _, reqs, _ = run(["apply", longname], ok(""))
    name = json.loads(reqs[0]).get("name", "") if reqs else ""
    check("apply of a path over 255 bytes sends its last 255 bytes or less",
          rc == 0 and 250 <= len(name.encode()) <= 255 and
          longname.endswith(name), repr(name))
    ok_big = write("okbig.txt", b"# comment line\n" * 60000)
    rc, _, er, reqs, _ = run(["apply", ok_big], ok(""))
    check("apply of 900 KB: sent whole",
          rc == 0 and len(json.loads(reqs[0])["apply"]) == 900000,
          repr(er))


def case_protocol():
    rc, _, er, _, _ = run(["stats"], lambda l: [b"this is not json\n"])
    check("garbage answer: exit 2, 'cannot reach ... malformed answer'",
          rc == 2 and one_line(er) and b"cannot reach lb-control" in er and
          b"malformed answer" in er, repr(er))
    rc, _, er, _, _ = run(["stats"], lambda l: [b"[1, 2]\n"])
    check("answer not an object: exit 2", rc == 2 and one_line(er),
          repr(er))
    rc, _, er, _, _ = run(["stats"], reply({"v": 2, "ok": True}))
    check("other protocol version: exit 2, says both versions",
          rc == 2 and b"version 2" in er and b"speaks 1" in er, repr(er))
    rc, _, er, _, _ = run(["stats"], reply({"ok": True}))
    check("answer without v: exit 2", rc == 2 and one_line(er), repr(er))
    rc, _, er, _, _ = run(["stats"], reply({"v": 1}))
    check("answer without ok: exit 2", rc == 2 and one_line(er), repr(er))
    rc, _, er, _, _ = run(["stats"], reply({"v": 1, "ok": True, "text": 3}))
    check("text not a string: exit 2", rc == 2 and one_line(er), repr(er))
    rc, _, er, _, _ = run(["stats"], lambda l: [])
    check("closed without an answer: exit 2, says so",
          rc == 2 and b"closed without an answer" in er, repr(er))
    rc, _, er, _, _ = run(["stats"], lambda l: [b'{"v": 1, "ok"'])
    check("closed in the middle of the answer: exit 2",
          rc == 2 and b"in the middle" in er, repr(er))
    rc, _, er, _, secs = run(["--timeout", "1", "stats"],
                             lambda l: [b'{"v"', None])
    check("silent lb-control: exit 2 after --timeout",
          rc == 2 and b"no answer within 1 s" in er and secs < 2.5,
          f"{er!r} after {secs:.1f}s")
    # A server that never accepts, its backlog full.
    path = os.path.join(TMP, "full.sock")
    full = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    full.bind(path)
    full.listen(0)
    waiting = []
    for _ in range(4):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.setblocking(False)
        try:
            c.connect(path)
        except BlockingIOError:
            c.close()
            break
        waiting.append(c)
    rc, _, er, _, secs = run(["--timeout", "1", "stats"], None,
                             env={"LBCTL_SOCKET": path})
    for c in waiting:
        c.close()
    full.close()
    os.unlink(path)
    check("backlog full: exit 2 after --timeout, says so",
          rc == 2 and b"not accepting connections" in er and secs < 2.5,
          f"{er!r} after {secs:.1f}s")
    line = (json.dumps({"v": 1, "ok": True, "text": "x" * 5000}) +
            "\n").encode()
    rc, out, _, _, _ = run(["stats"],
                           lambda l: [line[i:i + 7]
                                      for i in range(0, len(line), 7)])
    check("answer in 7-byte pieces", rc == 0 and out == b"x" * 5000 + b"\n",
          f"rc={rc} len={len(out)}")
    text = "".join(f"line {i}\n" for i in range(400000))
    rc, out, _, _, _ = run(["backend", "list"], ok(text))
    check("answer of 5 MB printed whole", rc == 0 and out == text.encode(),
          f"rc={rc} len={len(out)}")
    rc, out, _, _, _ = run(
        ["stats"],
        lambda l: [b'{"v": 1, "ok": true, "text": "a\\u0000b"}\n'])
    check("text holding NUL printed as is", rc == 0 and out == b"a\0b\n",
          repr(out))
    rc, _, er, _, _ = run(["stats"], lambda l: [
        b'{"v": 1, "ok": true, "ok": false}\n'])
    check("duplicate keys refused: exit 2", rc == 2, repr(er))


def reference_commands():
    """The command paths of docs/lbctl.md's table, or None without one."""
    path = os.environ.get("LBCTL_TEST_REFERENCE")
    if not path:
        return None
    cmds = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("| [`"):
                cmds.append(line[4:line.index("`", 4)])
    return cmds


def listed(out):
    """The command paths a `help` listing shows (its unindented lines)."""
    known = reference_commands()
    paths = []
    for line in out.decode().splitlines():
        if (not line or line[0] == " " or line == "Commands:" or
                line.startswith("Type 'help COMMAND'")):
            continue
        words = line.split(" ")
        # the longest leading words that name a command
        for n in range(len(words), 0, -1):
            if " ".join(words[:n]) in known:
                paths.append(" ".join(words[:n]))
                break
        else:
            paths.append(line)
    return paths


def case_help():
    cmds = reference_commands()
    if cmds is None:
        print("skip: lbctl built without lb-control's commands")
        return
    path = os.path.join(TMP, "absent.sock")
    env = {"LBCTL_SOCKET": path}
    rc, out, er, _, _ = run(["help"], None, env=env)
    got = listed(out)
    check("help without lb-control: exit 0", rc == 0, f"rc={rc} {er!r}")
    check("help without lb-control: every command of docs/lbctl.md, in "
          "its order, and nothing else", got == cmds and len(cmds) > 20,
          f"{got} != {cmds}")
    check("help without lb-control: one line on stderr saying why",
          one_line(er) and er.startswith(
              f"lbctl: cannot reach lb-control at {path}: ".encode()) and
          b"help built into lbctl" in er, repr(er))
    rc, out, er, _, _ = run(["help", "service"], None, env=env)
    want = [c for c in cmds if c.startswith("service ")]
    check("help service without lb-control: exit 0, the service commands",
          rc == 0 and listed(out) == want and len(want) >= 4,
          f"rc={rc} {listed(out)} != {want}")
    rc, out, _, _, _ = run(["help", "backend", "drain"], None, env=env)
    check("help backend drain without lb-control: its usage and help",
          rc == 0 and out.startswith(
              b"usage: backend drain PROTO VIP:PORT IP:PORT\n\n"),
          f"rc={rc} {out!r}")
    rc, out, er, _, _ = run(["help", "frob"], None, env=env)
    check("help frob without lb-control: exit 1, unknown command",
          rc == 1 and out == b"" and
          b"lbctl: unknown command 'frob'; try 'help'\n" in er, repr(er))
    rc, out, er, reqs, _ = run(["help", "service"],
                               ok("lb-control's own help\n"))
    got = json.loads(reqs[0])["argv"] if reqs else None
    check("help with lb-control: its answer wins",
          rc == 0 and out == b"lb-control's own help\n" and er == b"" and
          got == ["help", "service"], f"rc={rc} {out!r} {er!r} {got}")
    rc, out, er, _, _ = run(["help"], err("refused", -1))
    check("help refused by lb-control: exit 1, no built-in help",
          rc == 1 and out == b"" and er == b"lbctl: refused\n",
          f"rc={rc} {out!r} {er!r}")
    rc, out, er, _, _ = run(["stats"], None, env=env)
    check("other commands without lb-control: exit 2, no help",
          rc == 2 and out == b"" and b"help" not in er, repr(er))


def top_answer():
    """lb-control's three listings, the counters growing by one read's
    worth each time `service list` is asked: be1 10 new flows, be2 30."""
    reads = [0]

    def answer(line):
        argv = json.loads(line)["argv"]
        if argv == ["service", "list"]:
            reads[0] += 1
        n = reads[0]
        if argv == ["service", "list"]:
            data = {"services": [
                {"service": "tcp 10.0.0.1:80", "http": True,
                 "flows_total": 40 * n, "flows_active": 7, "errors": 0,
                 "http_5xx": 2 * n, "spl": {"total": 0.5}},
                {"service": "udp 10.0.0.1:53", "http": False,
                 "flows_total": 5 * n, "flows_active": 1, "errors": 0}]}
        elif argv == ["backend", "list"]:
            l7 = {"spl": 0.25, "window_timed": 3, "p99_ms": 12.5}
            data = {"backends": [
                {"service": "tcp 10.0.0.1:80", "backend": "10.0.1.1:80",
                 "state": "active", "health": "up", "flows_total": 10 * n,
                 "flows_active": 2, "errors": 0, "http_5xx": 2 * n,
                 "l7": l7},
                {"service": "tcp 10.0.0.1:80", "backend": "10.0.1.2:80",
                 "state": "draining", "health": "pending",
                 "flows_total": 30 * n, "flows_active": 5, "errors": 0,
                 "l7": None},
                {"service": "udp 10.0.0.1:53", "backend": "10.0.1.3:53",
                 "state": "active", "health": "none", "flows_total": 5 * n,
                 "flows_active": 1, "errors": 0}]}
        elif argv == ["governor", "show"]:
            data = {"services": [{"service": "tcp 10.0.0.1:80", "m": 1.5}]}
        elif argv == ["scale", "show"]:
            data = {"services": [{"service": "tcp 10.0.0.1:80",
                                  "paused": False,
                                  "counts": {"active": 2, "pending": 1,
                                             "failed": 0}}]}
        elif argv == ["scale", "history", "tcp", "10.0.0.1:80", "1"]:
            data = {"decisions": [{"ago_s": 3.2, "action": "up",
                                   "count": 1, "load": 0.93,
                                   "reason": "load above upper"}]}
        else:
            return [(json.dumps({"v": 1, "ok": False, "code": -2,
                                 "error": "unexpected " + " ".join(argv)})
                     + "\n").encode()]
        return [(json.dumps({"v": 1, "ok": True, "text": "",
                             "data": data}) + "\n").encode()]
    return answer


def top_many(nsv, nbe):
    """@nsv services of @nbe backends each."""
    def answer(line):
        argv = json.loads(line)["argv"]
        svcs = [f"tcp 10.0.{i // 200}.{i % 200 + 1}:80" for i in range(nsv)]
        if argv == ["service", "list"]:
            data = {"services": [{"service": s, "flows_total": 1}
                                 for s in svcs]}
        elif argv == ["backend", "list"]:
            data = {"backends": [
                {"service": s, "backend": f"10.1.{i}.{b + 1}:80",
                 "state": "active", "health": "none", "flows_total": 1}
                for i, s in enumerate(svcs) for b in range(nbe)]}
        else:
            data = {"services": []}
        return [(json.dumps({"v": 1, "ok": True, "text": "",
                             "data": data}) + "\n").encode()]
    return answer


def lines_of(out, word):
    return [ln for ln in out.decode().splitlines() if word in ln]


def case_top():
    rc, out, er, reqs, secs = run(["top", "--once"], top_answer())
    text = out.decode()
    check("top --once: exit 0", rc == 0, f"rc={rc} err={er!r}")
    check("top --once: two reads a second apart",
          [json.loads(r)["argv"] for r in reqs] ==
          [["service", "list"], ["backend", "list"], ["governor", "show"],
           ["scale", "show"], ["scale", "history", "tcp", "10.0.0.1:80",
                               "1"]] * 2 and secs >= 1.0, repr(reqs))
    sc = lines_of(out, "  scale: ")
    check("top: an autoscaled service's instances and last decision",
          len(sc) == 1 and sc[0].strip() ==
          "scale: 2 active, 1 pending; last up 1 at load 0.930, 3s ago: "
          "load above upper", text)
    check("top --once: plain lines, no escape sequences",
          "\033" not in text, repr(text))
    check("top --once: fits 80 columns",
          all(len(ln) <= 80 for ln in text.splitlines()), text)
    svc = lines_of(out, "tcp 10.0.0.1:80")
    # 40 new flows between two reads at least a second apart and at most
    # the whole run: a loaded host stretches the gap, not the count.
    check("top: the service's new flows a second, load and governor",
          len(svc) == 1 and
          40.0 / max(secs, 1.0) - 0.1 <= float(svc[0].split()[2]) <= 40.1
          and svc[0].split()[-2:] == ["0.500", "1.50"], text)
    be1 = lines_of(out, "10.0.1.1:80")
    be2 = lines_of(out, "10.0.1.2:80")
    check("top: each backend's share of new flows",
          be1 and be2 and "25.0%" in be1[0] and "75.0%" in be2[0], text)
    check("top: state, health, SPL and p99 of a backend",
          be1 and be1[0].split()[1:3] == ["active", "up"] and
          be1[0].split()[-2:] == ["0.250", "12.5"], text)
    check("top: both services by default", lines_of(out, "udp 10.0.0.1:53"),
          text)
    rc, out, _, _, _ = run(["top", "--once", "--sort", "share", "tcp"],
                           top_answer())
    text = out.decode()
    check("top SERVICE: only the services matching it",
          rc == 0 and not lines_of(out, "udp 10.0.0.1:53") and
          lines_of(out, "tcp 10.0.0.1:80"), text)
    check("top --sort share: the larger share first",
          0 < text.find("10.0.1.2:80") < text.find("10.0.1.1:80"), text)
    rc, _, er, reqs, _ = run(["top", "--sort", "bogus"], top_answer())
    check("top --sort bogus: exit 2, says why, asks nothing",
          rc == 2 and b"--sort" in er and not reqs, repr(er))
    rc, _, er, reqs, _ = run(["top"], top_answer(), stdin=b"")
    check("top without a terminal: exit 2, says --once",
          rc == 2 and b"--once" in er and not reqs, repr(er))
    rc, out, _, _, _ = run(["top", "--once"], top_many(60, 6))
    check("top --once: every service and backend, however many",
          rc == 0 and len(lines_of(out, "tcp 10.")) == 60 and
          len(lines_of(out, "  10.1.")) == 360, f"rc={rc} {len(out)}")
    rc, _, er, _, _ = run(["top", "--once"], err("no such command"))
    check("top: a refusal ends it with status 1",
          rc == 1 and b"no such command" in er, repr(er))


def case_width():
    def width_of(args, env=None):
        rc, _, _, reqs, _ = run(args, ok("x\n"), env=env)
        req = json.loads(reqs[0]) if reqs else {}
        return rc, req.get("width"), req.get("argv")

    rc, w, argv = width_of(["backend", "list"], {"COLUMNS": "80"})
    check("COLUMNS=80: the request asks for 80 columns",
          rc == 0 and w == 80 and argv == ["backend", "list"], f"{w} {argv}")
    rc, w, _ = width_of(["backend", "list"])
    check("output to a pipe, no COLUMNS: no width (every column)",
          rc == 0 and w is None, repr(w))
    rc, w, _ = width_of(["--wide", "backend", "list"], {"COLUMNS": "80"})
    check("--wide: no width", rc == 0 and w is None, repr(w))
    rc, w, _ = width_of(["-w", "backend", "list"], {"COLUMNS": "80"})
    check("-w: no width", rc == 0 and w is None, repr(w))
    rc, w, argv = width_of(["backend", "list", "--wide"], {"COLUMNS": "80"})
    check("--wide after the command: no width, and not a word sent",
          rc == 0 and w is None and argv == ["backend", "list"],
          f"{w} {argv}")
    rc, w, _ = width_of(["--json", "backend", "list"], {"COLUMNS": "80"})
    check("--json: no width", rc == 0 and w is None, repr(w))
    for bad in ("abc", "0", "-3", "99999"):
        rc, w, _ = width_of(["backend", "list"], {"COLUMNS": bad})
        check(f"COLUMNS={bad}: ignored", rc == 0 and w is None, repr(w))


CASES = [case_text, case_text_newline, case_json, case_error,
         case_no_server, case_socket_option, case_words, case_usage,
         case_apply, case_protocol, case_help, case_top, case_width]


def main():
    global LBCTL, TMP
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    LBCTL = os.path.abspath(sys.argv[1])
    names = sys.argv[2:]
    TMP = tempfile.mkdtemp(prefix="lbctl-test.")
    try:
        for c in CASES:
            if names and c.__name__[5:] not in names:
                continue
            print(f"# {c.__name__[5:]}")
            c()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print(f"lbctl: {'PASS' if FAILS == 0 else f'FAIL: {FAILS} check(s)'}")
    return 0 if FAILS == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
