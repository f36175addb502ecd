#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench_report.py on reports in lb-dpbench's format: every kind of row
read back, the change between two reports, compare-rev's pairs.

usage: bench_report_test.py bench_report.py
"""
import os
import subprocess
import sys
import tempfile

REPORT = """host: 2 CPU(s), Made-up CPU; 6.1.0
opened 1000 flows through the worker (SYN, SYN-ACK, ACK) in 0.10 s

flow table: 100665536 bytes for 1048576 flows, 96.0 bytes per flow
admission key: 128.1 bytes per key in the shared table (65536 slots), \
272.0 bytes per key in a worker's local table (131072 keys, heap measured)

Summary (2026-11-26; medians over 7 rounds of 0.50 s)

| test | flows | bare Mpps | lb Mpps | lb/bare | bare ns/pkt | lb ns/pkt \
| own ns/pkt | lb busy | new flows/s | checks |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|
| est | 1000 | 28.24 | 2.41 | 0.09 | 11.1 | 123.5 | {est} | 90% | - | ok |
| est | 1000000 | 3.95 | 1.44 | 0.05 | 11.5 | 300.3 | 287.5 | 90% | - | ok |
| new | - | 11.18 | 1.10 | 0.09 | 18.4 | 874.2 | 851.5 | 90% | 1.10M | ok |

conn: whole connections (7 segments each) at steady state

| bare conn/s | lb conn/s per worker | lb/bare | bare ns/pkt | lb ns/pkt \
| lb busy | table at the end | table at most | most expired in a poll \
| checks |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|
| 0.40M | 0.07M | 0.09 | 20.0 | 449.1 | 39% | 24576 | 44032 | 12 | ok |

adm: new flows with admission control off and on

| admit-key | off flows/s | on flows/s | on/off | off ns/pkt | on ns/pkt \
| +ns/new flow | shm atomics per admission | checks |
|---|---:|---:|---:|---:|---:|---:|---:|---|
| svc | 1.09M | 0.82M | 0.75 | 600.0 | 825.5 | 225.5 | 0.0007 | ok |
| client | 0.65M | 0.73M | 1.12 | 600.0 | 1166.9 | {adm} | 2.0300 | ok |

rdr: replies of flows that worker 1 owns

| flows | own queue Mpps | redirected Mpps | redirected/own | own queue \
ns/pkt | redirected ns/pkt | +ns/redirected | receiver ns/pkt | checks |
|---:|---:|---:|---:|---:|---:|---:|---:|---|
| 1000 | 4.27 | 3.53 | 0.74 | 122.1 | 200.7 | 66.7 | - | ok |

l7: the same worker and exchanges, service `http` vs plain L4

| flows per service | L4 Mpps | L4 Mreq/s | L7 Mpps | L7 Mreq/s | L7/L4 \
| L4 ns/pkt | L7 ns/pkt | +ns/exchange | L4 busy | L7 busy | checks |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|
| 1000 | 0.84 | 0.42 | 0.54 | 0.27 | 0.64 | 90.0 | 450.0 | 2097 | 99% | 99% \
| ok |

followed flow: 1020.5 bytes per flow for 1000 (L7 pool 900.5: entries and \
64 shared header streams; admission state 120)

load average at the end: 6.73
"""

FAILS = 0


def check(what, cond, detail=""):
    global FAILS
    print(("ok: " if cond else "FAILED: ") + what +
          ("" if cond else ": " + str(detail)))
    if not cond:
        FAILS += 1


def report(est=111.9, adm=566.9):
    return REPORT.format(est=est, adm=adm)


def main():
    tool = sys.argv[1]
    sys.path.insert(0, os.path.dirname(os.path.abspath(tool)))
    import bench_report as br

    got = br.parse(report())
    want = {
        ("est", "1000"): 111.9,
        ("est", "1000000"): 287.5,
        ("new", "-"): 851.5,
        ("conn (lb ns/pkt)", "-"): 449.1,
        ("adm (+ns/new flow)", "svc"): 225.5,
        ("adm (+ns/new flow)", "client"): 566.9,
        ("adm (atomics/admission)", "svc"): 0.0007,
        ("adm (atomics/admission)", "client"): 2.03,
        ("rdr (+ns/redirected)", "1000"): 66.7,
        ("l7 (+ns/exchange)", "1000"): 2097.0,
        ("l7 (L7 ns/pkt)", "1000"): 450.0,
        ("memory (bytes/flow)", "plain"): 96.0,
        ("memory (bytes/followed flow)", "1000"): 1020.5,
        ("memory (bytes/admission key)", "shared + local"): 400.1,
    }
    for k, v in want.items():
        check("row %s %s read back" % k, k in got and abs(got[k] - v) < 1e-6,
              got.get(k))
    check("no other row", set(got) == set(want), set(got) - set(want))
    check("nothing from prose", br.parse("opened 5 flows\n| x | y |\n") == {})

    with tempfile.TemporaryDirectory() as d:
        prev, cur = os.path.join(d, "prev"), os.path.join(d, "cur")
        with open(prev, "w") as f:
            f.write(report())
        # The current run: est 1k half as costly, adm twice, no rdr.
        text = report(est=55.95, adm=1133.8)
        text = text[:text.index("rdr:")] + text[text.index("l7:"):]
        with open(cur, "w") as f:
            f.write(text)
        out = subprocess.run([sys.executable, tool, "delta", prev, cur],
                             capture_output=True, text=True)
        check("delta exits 0", out.returncode == 0, out.stderr)
        lines = out.stdout.splitlines()
        check("delta: est 1000 halved",
              "| est | 1000 | 111.9 | 56.0 | 0.50 |" in lines, out.stdout)
        check("delta: adm client doubled",
              "| adm (+ns/new flow) | client | 566.9 | 1133.8 | 2.00 |"
              in lines, out.stdout)
        check("delta: unchanged row at 1.00",
              "| memory (bytes/flow) | plain | 96.0 | 96.0 | 1.00 |" in lines)
        check("delta: a row not run this time is said so",
              "| rdr (+ns/redirected) | 1000 | 66.7 | - | not run |" in lines,
              out.stdout)
        empty = os.path.join(d, "empty")
        with open(empty, "w") as f:
            f.write("lb-dpbench: EAL initialisation failed\n")
        out = subprocess.run([sys.executable, tool, "delta", prev, empty],
                             capture_output=True, text=True)
        check("delta of a report without rows fails",
              out.returncode != 0 and "no row" in out.stderr, out)

        # compare-rev: two pairs, B a quarter cheaper on adm client.
        for i in (1, 2):
            with open(os.path.join(d, "A.%d" % i), "w") as f:
                f.write(report(adm=400.0 + i))
            with open(os.path.join(d, "B.%d" % i), "w") as f:
                f.write(report(adm=0.75 * (400.0 + i)))
        saved = os.path.join(d, "table")
        out = subprocess.run([sys.executable, tool, "pairs", d, "2", saved],
                             capture_output=True, text=True)
        check("pairs exits 0", out.returncode == 0, out.stderr)
        check("pairs: adm rows compared",
              "| adm (+ns/new flow) | client | 401.5 | 301.1 | 0.75 | "
              "0.75..0.75 |" in out.stdout, out.stdout)
        check("pairs: est rows compared",
              "| est | 1000 | 111.9 | 111.9 | 1.00 | 1.00..1.00 |"
              in out.stdout, out.stdout)
        check("pairs: table saved", os.path.exists(saved) and
              "adm (atomics/admission)" in open(saved).read())
        check("pairs: atomics shown below one",
              "| adm (atomics/admission) | svc | 0.0007 | 0.0007 | 1.00 |"
              in out.stdout, out.stdout)
        out = subprocess.run([sys.executable, tool, "frob"],
                             capture_output=True, text=True)
        check("unknown command: usage, status 2", out.returncode == 2 and
              "usage" in out.stderr, out)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
