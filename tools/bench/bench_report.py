#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The rows of lb-dpbench's report, read back for comparison.

usage: bench_report.py pairs RUNS_DIR PAIRS [OUT]
       bench_report.py delta PREVIOUS CURRENT

pairs: compare-rev's table, from RUNS_DIR/A.1 .. A.PAIRS and B.1 ..
B.PAIRS: each row's median of each side and the median and range of the
per-pair ratios B/A (OUT: the table also saved there).
delta: tools/bench/dataplane's change since the previous recorded run:
each row both reports hold, before, now and now/before.

A row is (test, size) -> the one figure that says what it costs:
  est, mix, new               own ns per packet
  l7 (+ns/exchange)           an exchange's extra ns over plain L4
  l7 (L7 ns/pkt)              ns per followed packet
  adm (+ns/new flow)          what admission adds to a new flow, per key
  adm (atomics/admission)     shared-memory atomics per admission
  conn (lb ns/pkt)            ns per packet of whole connections
  rdr (+ns/redirected)        what a reply handed between workers adds
  memory (bytes/flow ...)     bytes per plain flow, followed flow, key
"""
import re
import statistics
import sys

# (row name, the column that holds its figure), per table header.
L7_COLS = (("+ns/exchange", "l7 (+ns/exchange)"),
           ("L7 ns/pkt", "l7 (L7 ns/pkt)"))
ADM_COLS = (("+ns/new flow", "adm (+ns/new flow)"),
            ("shm atomics per admission", "adm (atomics/admission)"))
MEMORY = (
    (re.compile(r"^flow table: .* ([0-9.]+) bytes per flow"),
     lambda m: ("memory (bytes/flow)", "plain", float(m.group(1)))),
    (re.compile(r"^followed flow: ([0-9.]+) bytes per flow for ([0-9]+)"),
     lambda m: ("memory (bytes/followed flow)", m.group(2),
                float(m.group(1)))),
    (re.compile(r"^admission key: ([0-9.]+) bytes per key in the shared "
                r"table .*, ([0-9.]+) bytes per key in a worker's local"),
     lambda m: ("memory (bytes/admission key)", "shared + local",
                float(m.group(1)) + float(m.group(2)))),
)


def _num(cell):
    """A cell's number: 1.10M, 24,576 and 0.0007 are numbers."""
    c = cell.strip().replace(",", "")
    scale = 1.0
    if c.endswith("M"):
        c, scale = c[:-1], 1e6
    return float(c) * scale


def fmt(v):
    """A figure as the report shows it: atomics per admission are often
    far below one, ns and bytes are not."""
    return "%.4f" % v if abs(v) < 1 else "%.1f" % v


def parse(text):
    """Each row's figure, in the report's order, by (test, size)."""
    got, head = {}, None
    for line in text.splitlines():
        for rx, row in MEMORY:
            m = rx.match(line)
            if m:
                name, size, value = row(m)
                got[(name, size)] = value
        if not line.startswith("|"):
            head = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if set(cells[0]) <= set("-:") and cells[0]:
            continue
        if "checks" in cells or cells[0] in ("test", "flows per service",
                                             "admit-key", "flows",
                                             "bare conn/s"):
            head = cells
            continue
        if head is None:
            continue

        def take(col, key):
            try:
                got[key] = _num(cells[head.index(col)])
            except (ValueError, IndexError):
                pass

        if head[0] == "flows per service":
            for col, name in L7_COLS:
                take(col, (name, cells[0]))
        elif head[0] == "admit-key":
            for col, name in ADM_COLS:
                take(col, (name, cells[0].strip("`")))
        elif head[0] == "flows":
            take("+ns/redirected", ("rdr (+ns/redirected)", cells[0]))
        elif head[0] == "bare conn/s":
            take("lb ns/pkt", ("conn (lb ns/pkt)", "-"))
        elif head[0] == "test" and "own ns/pkt" in head:
            take("own ns/pkt", (cells[0], cells[1]))
    return got


def parse_file(path):
    with open(path) as f:
        return parse(f.read())


def pairs_table(a, b):
    """compare-rev's table from the A and B reports of each pair."""
    keys = [k for k in a[0] if all(k in r for r in a + b)]
    lines = ["| test | flows | A | B | B/A (median of pairs) "
             "| B/A min..max |",
             "|---|---:|---:|---:|---:|---|"]
    for k in keys:
        ra = [r[k] for r in a]
        rb = [r[k] for r in b]
        ratio = [y / x for x, y in zip(ra, rb) if x > 0]
        if ratio:
            rs = "%.2f | %.2f..%.2f" % (statistics.median(ratio),
                                         min(ratio), max(ratio))
        else:
            rs = "- | -"
        lines.append("| %s | %s | %s | %s | %s |" % (
            k[0], k[1], fmt(statistics.median(ra)),
            fmt(statistics.median(rb)), rs))
    return keys, "\n".join(lines)


def delta_table(prev, cur):
    """Each row of @cur, with @prev's figure where it has the row."""
    lines = ["| test | flows | previous | now | now/previous |",
             "|---|---:|---:|---:|---:|"]
    for k, v in cur.items():
        if k in prev:
            p = prev[k]
            ratio = "%.2f" % (v / p) if p > 0 and v >= 0 else "-"
            lines.append("| %s | %s | %s | %s | %s |" % (
                k[0], k[1], fmt(p), fmt(v), ratio))
        else:
            lines.append("| %s | %s | - | %s | new row |" % (k[0], k[1],
                                                            fmt(v)))
    gone = [k for k in prev if k not in cur]
    for k in gone:
        lines.append("| %s | %s | %s | - | not run |" % (k[0], k[1],
                                                        fmt(prev[k])))
    return "\n".join(lines)


def main(argv):
    if len(argv) >= 4 and argv[1] == "pairs":
        runs, n = argv[2], int(argv[3])
        out = argv[4] if len(argv) > 4 else ""
        a = [parse_file("%s/A.%d" % (runs, i)) for i in range(1, n + 1)]
        b = [parse_file("%s/B.%d" % (runs, i)) for i in range(1, n + 1)]
        keys, text = pairs_table(a, b)
        if not keys:
            sys.exit("compare-rev: no row both sides report "
                     "(see lb-dpbench's output)")
        print()
        print(text)
        print("\n%d pairs; A and B: medians of own ns per packet (l7, adm, "
              "conn, rdr, memory rows: of what the row names); B/A below 1 "
              "means B does less." % n)
        if out:
            with open(out, "w") as f:
                f.write(text + "\n")
        return 0
    if len(argv) == 4 and argv[1] == "delta":
        prev, cur = parse_file(argv[2]), parse_file(argv[3])
        if not cur:
            sys.exit("bench_report: no row in %s" % argv[3])
        print(delta_table(prev, cur))
        return 0
    sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
