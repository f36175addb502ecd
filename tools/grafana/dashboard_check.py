#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Grafana dashboard asks only for what lb-control serves.

usage: dashboard_check.py DASHBOARD.json METRICS.txt

METRICS.txt is lb-control's /metrics as it served it. For every PromQL
expression of the dashboard (panel targets and template variables):
  - each metric name (lb_...) is a family of the exposition (its # TYPE
    line);
  - each label a selector puts on a metric (metric{label=...}) is on
    at least one sample of that family, and a literal value it asks for
    with = is one of that label's values there;
  - each label of a grouping (by, without, on, ignoring, group_left,
    group_right) or of a legend ({{label}}) is on a sample of one of
    the expression's metrics.
Prints what does not resolve and exits 1 if anything does not, or if the
dashboard asks for nothing.
"""
import json
import re
import sys

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
METRIC = re.compile(r"\b(lb_[a-z0-9_]+)\b")
SELECTOR = re.compile(r"\b(lb_[a-z0-9_]+)\s*\{([^}]*)\}")
MATCHER = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"')
GROUPING = re.compile(
    r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
LEGEND = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")
LABEL_VALUES = re.compile(r"label_values\(\s*(lb_[a-z0-9_]+)[^,]*,\s*(\w+)\s*\)")


def exposition(path):
    """Families, and for each the values seen of each label."""
    fams, labels = set(), {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# TYPE "):
                fams.add(line.split()[2])
                continue
            if not line or line.startswith("#"):
                continue
            m = SAMPLE.match(line)
            if not m:
                continue
            d = labels.setdefault(m.group(1), {})
            for k, v in LABEL.findall(m.group(2) or ""):
                d.setdefault(k, set()).add(v)
    return fams, labels


def exprs(dash):
    """(where, expression, legend) of every query of the dashboard."""
    out = []

    def panels(ps):
        for p in ps:
            yield p
            yield from panels(p.get("panels", []))

    for p in panels(dash.get("panels", [])):
        for t in p.get("targets", []):
            if "expr" in t:
                out.append((f"panel '{p.get('title')}'", t["expr"],
                            t.get("legendFormat", "")))
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            q = q.get("query")
        if v.get("type") == "query" and isinstance(q, str):
            out.append((f"variable '{v.get('name')}'", q, ""))
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        dash = json.load(f)
    fams, labels = exposition(sys.argv[2])
    bad, names = [], set()
    for where, expr, legend in exprs(dash):
        metrics = set(METRIC.findall(expr))
        names |= metrics
        if not metrics:
            bad.append(f"{where}: no lb_ metric in '{expr}'")
        for m in sorted(metrics - fams):
            bad.append(f"{where}: no family {m}")
        for m, body in SELECTOR.findall(expr):
            for k, op, v in MATCHER.findall(body):
                have = labels.get(m, {})
                if k not in have:
                    bad.append(f"{where}: {m} has no label {k}")
                elif op == "=" and "$" not in v and v not in have[k]:
                    bad.append(f"{where}: {m} has no {k}=\"{v}\"")
        used = set()
        for g in GROUPING.findall(expr):
            used |= {x.strip() for x in g.split(",") if x.strip()}
        used |= set(LEGEND.findall(legend))
        for m, k in LABEL_VALUES.findall(expr):
            used.add(k)
        for k in sorted(used):
            if not any(k in labels.get(m, {}) for m in metrics):
                bad.append(f"{where}: no label {k} on "
                           f"{', '.join(sorted(metrics))}")
    for b in bad:
        print("dashboard: " + b)
    if not names:
        print("dashboard: no query names a metric")
        return 1
    print(f"dashboard: {len(names)} metric families checked, "
          f"{len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
