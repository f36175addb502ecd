#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Client of the DPDK telemetry socket (protocol v2) of lb-dataplane.

    lbtel.py [--prefix P] CMD...            print each command's JSON reply
    lbtel.py [--prefix P] CMD -k KEY...     print one value of the reply

The socket is a SOCK_SEQPACKET unix socket at
<runtime dir>/dpdk/<file-prefix>/dpdk_telemetry.v2, where the runtime
directory is chosen as DPDK's EAL chooses it: $RUNTIME_DIRECTORY, else
/var/run for root, else $XDG_RUNTIME_DIR or /tmp. On connect the process
sends a greeting ({"version": ..., "pid": ..., "max_output_len": ...});
each command string sent ("/lb/stats", "/ethdev/stats,0") gets one JSON
reply {"<command>": value}, where value is null for an unknown command.

-k walks into the command's value: a key of an object, an index of a
list, or NAME=VALUE to pick the first object of a list whose NAME field
equals VALUE, e.g.

    lbtel.py /ethdev/stats,0 -k ipackets
    lbtel.py /lb/stats -k drop -k ip_csum

-b SERVICE ADDR picks one backend out of /lb/backends first (see
find_backend), e.g. lbtel.py /lb/backends -b 'tcp 10.11.0.100:80'
10.12.0.11:80 -k errors.

As a module: query(cmd, prefix=...) returns the value, pick(value, keys)
walks it, find_backend() finds a backend, and Client keeps one connection
for several commands.
"""

import argparse
import json
import os
import socket
import sys

SOCKET_NAME = "dpdk_telemetry.v2"
DEFAULT_PREFIX = "rte"
# DPDK's replies are at most max_output_len bytes (16 KiB in 22.11); a
# larger buffer costs nothing and survives a process that raised it.
RECV_MAX = 1 << 20


class TelemetryError(Exception):
    """The socket is missing, refused us, or answered something unusable."""


class UnknownCommand(TelemetryError):
    """The process answered null: it registered no such command."""


def runtime_dir(prefix=DEFAULT_PREFIX):
    """The EAL runtime directory of a DPDK process with this file prefix."""
    base = os.environ.get("RUNTIME_DIRECTORY")
    if not base:
        if os.geteuid() == 0:
            base = "/var/run"
        else:
            base = os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", prefix)


def socket_path(prefix=DEFAULT_PREFIX):
    return os.path.join(runtime_dir(prefix), SOCKET_NAME)


def _command_name(cmd):
    # Parameters follow the first comma: "/ethdev/stats,0".
    return cmd.split(",", 1)[0]


class Client:
    """One connection to a telemetry socket; usable as a context manager."""

    def __init__(self, prefix=DEFAULT_PREFIX, path=None, timeout=5.0):
        self.path = path or socket_path(prefix)
        self.prefix = prefix
        self.sock = None
        self.greeting = None
        self._connect(timeout)

    def _connect(self, timeout):
        if not os.path.exists(self.path):
            raise TelemetryError(
                "no telemetry socket at %s: is a DPDK process running with "
                "--file-prefix %s (and telemetry enabled), as this user?"
                % (self.path, self.prefix))
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sock.settimeout(timeout)
        try:
            sock.connect(self.path)
        except OSError as e:
            sock.close()
            raise TelemetryError(
                "cannot connect to %s: %s (a socket left by a process "
                "that is gone?)" % (self.path, e.strerror or e)) from e
        self.sock = sock
        self.greeting = self._recv("greeting")

    def _recv(self, what):
        try:
            data = self.sock.recv(RECV_MAX)
        except socket.timeout as e:
            raise TelemetryError("no %s from %s within %.1f s"
                                 % (what, self.path,
                                    self.sock.gettimeout())) from e
        except OSError as e:
            raise TelemetryError("reading the %s from %s: %s"
                                 % (what, self.path, e)) from e
        if not data:
            # The process closes new connections beyond its client limit.
            raise TelemetryError("%s closed the connection before the %s "
                                 "(too many telemetry clients?)"
                                 % (self.path, what))
        try:
            return json.loads(data.decode())
        except ValueError as e:
            raise TelemetryError("the %s from %s is not JSON: %r"
                                 % (what, self.path, data[:200])) from e

    def raw(self, cmd):
        """Sends one command, returns the whole reply object."""
        try:
            self.sock.send(cmd.encode())
        except OSError as e:
            raise TelemetryError("sending %r to %s: %s"
                                 % (cmd, self.path, e)) from e
        return self._recv("reply to %r" % cmd)

    def query(self, cmd):
        """Sends one command, returns its value; unknown commands raise."""
        reply = self.raw(cmd)
        name = _command_name(cmd)
        if not isinstance(reply, dict) or name not in reply:
            raise TelemetryError("unexpected reply to %r: %s"
                                 % (cmd, json.dumps(reply)[:200]))
        if reply[name] is None:
            raise UnknownCommand("%s does not know the command %r "
                                 "(send '/' for the list)" % (self.path, cmd))
        return reply[name]

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def query(cmd, prefix=DEFAULT_PREFIX, path=None, timeout=5.0):
    """Value of one command's reply (one connection per call)."""
    with Client(prefix=prefix, path=path, timeout=timeout) as c:
        return c.query(cmd)


def pick(value, keys):
    """Walks value by keys: object key, list index or NAME=VALUE."""
    for k in keys:
        if isinstance(value, dict):
            if k not in value:
                raise KeyError("no key %r among %s" % (k, sorted(value)))
            value = value[k]
        elif isinstance(value, list):
            if "=" in k:
                name, want = k.split("=", 1)
                hits = [e for e in value
                        if isinstance(e, dict) and str(e.get(name)) == want]
                if not hits:
                    raise KeyError("no element with %s=%s" % (name, want))
                value = hits[0]
            else:
                try:
                    value = value[int(k)]
                except (ValueError, IndexError):
                    raise KeyError("no index %r in a list of %d"
                                   % (k, len(value))) from None
        else:
            raise KeyError("cannot look up %r in %r" % (k, value))
    return value


def find_backend(backends, service, addr):
    """The entry of backend addr ("10.12.0.11:80") of service ("tcp
    10.11.0.100:80") in a /lb/backends value, in either shape:

      {"<service>": [{"addr": ..., ...}, ...]}
      {"<any name>": {"service": ..., "addr": ..., ...}, ...}

    The second exists because DPDK telemetry (22.11) accepts only letters,
    digits, '_' and '/' in names and no objects inside lists."""
    if isinstance(backends, dict):
        group = backends.get(service)
        if isinstance(group, list):
            for e in group:
                if isinstance(e, dict) and e.get("addr") == addr:
                    return e
        for e in backends.values():
            if isinstance(e, dict) and e.get("service") == service and \
                    e.get("addr") == addr:
                return e
    raise KeyError("no backend %s in service %r" % (addr, service))


def _text(value):
    if isinstance(value, str):
        return value
    return json.dumps(value)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Query the DPDK telemetry socket of lb-dataplane.")
    ap.add_argument("cmd", nargs="+", help="command, e.g. /lb/stats")
    ap.add_argument("-p", "--prefix", default=DEFAULT_PREFIX,
                    help="EAL --file-prefix of the process (default rte)")
    ap.add_argument("-s", "--socket", help="socket path (overrides prefix)")
    ap.add_argument("-k", "--key", action="append", default=[],
                    help="print only this part of the (single) command's "
                    "value; repeat to go deeper")
    ap.add_argument("-b", "--backend", nargs=2, metavar=("SERVICE", "ADDR"),
                    help="with /lb/backends: only this backend's entry")
    ap.add_argument("-t", "--timeout", type=float, default=5.0,
                    help="seconds to wait for each reply (default 5)")
    ap.add_argument("--pretty", action="store_true", help="indent JSON")
    args = ap.parse_args(argv)
    if (args.key or args.backend) and len(args.cmd) != 1:
        ap.error("--key and --backend take exactly one command")
    rc = 0
    try:
        with Client(args.prefix, args.socket, args.timeout) as c:
            for cmd in args.cmd:
                if args.key or args.backend:
                    value = c.query(cmd)
                    if args.backend:
                        value = find_backend(value, *args.backend)
                    print(_text(pick(value, args.key)))
                    continue
                reply = c.raw(cmd)
                print(json.dumps(reply, indent=2 if args.pretty else None))
                if isinstance(reply, dict) and \
                        reply.get(_command_name(cmd)) is None:
                    print("lbtel: unknown command %r (send '/' for the "
                          "list)" % cmd, file=sys.stderr)
                    rc = 1
    except UnknownCommand as e:
        print("lbtel: %s" % e, file=sys.stderr)
        return 1
    except TelemetryError as e:
        print("lbtel: %s" % e, file=sys.stderr)
        return 2
    except KeyError as e:
        print("lbtel: %s" % e.args[0], file=sys.stderr)
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
