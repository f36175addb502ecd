#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Reads lb-dataplane's /lb/stats from its DPDK telemetry socket, for the
Pktgen-DPDK benchmarks (docs/benchmarking.md). Runs on the DUT.

  lbstat.py [-p PREFIX | -s SOCKET] snapshot
      one "name value" line per counter, nested names joined with '.'
      (drop.no_flow), then each port's ethdev counters (port0.imissed)
      and its packets received per queue, that is per worker
      (port0.q1.ipackets); the Pktgen scripts run this before and after
      a measurement (SL_LBSTAT) and print the differences.

  lbstat.py [-p PREFIX | -s SOCKET] watch [-i SECONDS] [-n COUNT]
      every interval, one line of per-second rates: rx, tx, flows
      created, flows active, and every drop, malformed or NIC error
      counter that moved.

Needs only Python 3; it does not use the dpdk package's client.
"""

import argparse
import json
import os
import socket
import sys
import time

RECV_MAX = 1 << 20


def socket_path(prefix):
    base = os.environ.get("RUNTIME_DIRECTORY")
    if not base:
        base = "/var/run" if os.geteuid() == 0 else \
            os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", prefix, "dpdk_telemetry.v2")


class Telemetry:
    def __init__(self, path, timeout=5.0):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError as e:
            raise SystemExit("lbstat: cannot connect to %s: %s (is "
                             "lb-dataplane running with this --file-prefix?)"
                             % (path, e.strerror or e))
        self._recv()  # greeting

    def _recv(self):
        data = self.sock.recv(RECV_MAX)
        if not data:
            raise SystemExit("lbstat: %s closed the connection" % self.path)
        return json.loads(data.decode())

    def query(self, cmd):
        self.sock.send(cmd.encode())
        reply = self._recv()
        # The reply is keyed by the command without its parameters.
        name = cmd.split(",", 1)[0]
        value = reply.get(name) if isinstance(reply, dict) else None
        if value is None:
            raise SystemExit("lbstat: %s does not answer %s: is it "
                             "lb-dataplane?" % (self.path, cmd))
        return value


def flatten(value, prefix="", out=None):
    out = {} if out is None else out
    for k, v in value.items():
        name = prefix + str(k)
        if isinstance(v, dict):
            flatten(v, name + ".", out)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[name] = v
    return out


PORT_STATS = ("ipackets", "opackets", "imissed", "ierrors", "oerrors",
              "rx_nombuf")


def counters(tel):
    """/lb/stats, then each port's ethdev counters as port<N>.<name> and
    its received packets per queue (one queue per worker) as
    port<N>.q<Q>.ipackets: the NIC's drops and the RSS spread."""
    out = flatten(tel.query("/lb/stats"))
    workers = int(out.get("workers", 1))
    for port in tel.query("/ethdev/list"):
        st = tel.query("/ethdev/stats,%d" % port)
        for k in PORT_STATS:
            if k in st:
                out["port%d.%s" % (port, k)] = st[k]
        for q, v in enumerate(st.get("q_ipackets", [])[:workers]):
            out["port%d.q%d.ipackets" % (port, q)] = v
    return out


def snapshot(tel):
    for k, v in counters(tel).items():
        print("%s %s" % (k, v))


def watch(tel, interval, count):
    prev = counters(tel)
    t_prev = time.monotonic()
    n = 0
    while count == 0 or n < count:
        time.sleep(interval)
        cur = counters(tel)
        now = time.monotonic()
        dt = now - t_prev

        def rate(k):
            return (cur.get(k, 0) - prev.get(k, 0)) / dt

        line = "%s rx %.0f/s tx %.0f/s flows_created %.0f/s " \
            "flows_active %d" % (time.strftime("%H:%M:%S"), rate("rx"),
                                 rate("tx"), rate("flows_created"),
                                 cur.get("flows_active", 0))
        moved = ["%s %.0f/s" % (k, rate(k)) for k in sorted(cur)
                 if k.startswith(("drop.", "malformed.")) or
                 k in ("flows_refused", "rst_sent", "syn_retries",
                       "redirect_out", "arp_requests") or
                 k.endswith((".imissed", ".ierrors", ".oerrors",
                             ".rx_nombuf"))
                 if cur[k] != prev.get(k, 0)]
        if moved:
            line += "; " + ", ".join(moved)
        print(line, flush=True)
        prev, t_prev = cur, now
        n += 1


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="lb-dataplane counters for the Pktgen-DPDK benchmarks")
    ap.add_argument("-p", "--prefix", default="rte",
                    help="EAL --file-prefix of lb-dataplane (default rte)")
    ap.add_argument("-s", "--socket", help="telemetry socket path")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("snapshot", help="every counter, one per line")
    w = sub.add_parser("watch", help="per-second rates every interval")
    w.add_argument("-i", "--interval", type=float, default=1.0)
    w.add_argument("-n", "--count", type=int, default=0,
                   help="lines to print, 0 for no end")
    args = ap.parse_args(argv)
    tel = Telemetry(args.socket or socket_path(args.prefix))
    try:
        if args.cmd == "snapshot":
            snapshot(tel)
        else:
            watch(tel, args.interval, args.count)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
