#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dashboard_check.py on made-up expositions, and the dashboard's shape.

usage: dashboard_check_test.py dashboard_check.py sluice.json
"""
import json
import os
import subprocess
import sys
import tempfile

EXPO = """# HELP lb_backend_flows_total Flows.
# TYPE lb_backend_flows_total counter
lb_backend_flows_total{service="tcp 10.0.0.1:80",backend="10.0.1.1:80"} 5
# HELP lb_backend_http_latency_seconds Latency.
# TYPE lb_backend_http_latency_seconds gauge
lb_backend_http_latency_seconds{service="tcp 10.0.0.1:80",backend="10.0.1.1:80",quantile="0.99"} 0.002
# HELP lb_dataplane_attached Attached.
# TYPE lb_dataplane_attached gauge
lb_dataplane_attached 1
"""

FAILS = 0


def check(what, cond, detail=""):
    global FAILS
    print(("ok: " if cond else "FAILED: ") + what +
          ("" if cond else ": " + detail))
    FAILS += 0 if cond else 1


def dash(*exprs):
    return {"panels": [{"title": "p", "targets": [
        {"expr": e, "legendFormat": lf, "refId": "A"} for e, lf in exprs]}]}


def run(tool, tmp, d):
    path = os.path.join(tmp, "d.json")
    with open(path, "w") as f:
        json.dump(d, f)
    p = subprocess.run([sys.executable, "-B", tool, path,
                        os.path.join(tmp, "m.txt")],
                       capture_output=True, text=True)
    return p.returncode, p.stdout


def main():
    tool, sluice = sys.argv[1], sys.argv[2]
    S = 'service=~"$service"'
    cases = [
        ("a served family and its labels pass", 0, "0 problem(s)",
         dash((f'sum by (backend) (rate(lb_backend_flows_total{{{S}}}[1m]))',
               "{{backend}}"), ("lb_dataplane_attached", "")),
         "label_values(lb_backend_flows_total, service)"),
        ("a family not served fails", 1, "no family lb_backend_flow_total",
         dash(("rate(lb_backend_flow_total[1m])", "")), None),
        ("a label the family lacks fails", 1, "has no label worker",
         dash(('lb_backend_flows_total{worker="0"}', "")), None),
        ("a label value never served fails", 1, 'no quantile="0.999"',
         dash(('lb_backend_http_latency_seconds{quantile="0.999"}', "")),
         None),
        ("a grouping label on none of the metrics fails", 1,
         "no label reason",
         dash(("sum by (reason) (lb_backend_flows_total)", "")), None),
        ("a legend label on none of the metrics fails", 1,
         "no label worker", dash(("lb_dataplane_attached", "{{worker}}")),
         None),
        ("a variable over a missing label fails", 1, "no label vip",
         dash(("lb_dataplane_attached", "")),
         "label_values(lb_backend_flows_total, vip)"),
        ("a dashboard naming no metric fails", 1, "no lb_ metric",
         dash(("up", "")), None),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "m.txt"), "w") as f:
            f.write(EXPO)
        for what, want, says, d, var in cases:
            if var:
                d["templating"] = {"list": [{"name": "v", "type": "query",
                                             "query": {"query": var}}]}
            rc, out = run(tool, tmp, d)
            check(what, rc == want and says in out, f"rc={rc} {out!r}")

    with open(sluice, encoding="utf-8") as f:
        d = json.load(f)
    panels = [p for p in d["panels"] if p.get("type") != "row"]
    ids = [p["id"] for p in d["panels"]]
    check("the dashboard has panels with unique ids",
          len(panels) >= 20 and len(ids) == len(set(ids)), repr(ids))
    check("every panel has queries, each with its refId",
          all(p.get("targets") and
              all(t.get("expr") and t.get("refId") for t in p["targets"])
              for p in panels))
    check("every query goes through the datasource variable",
          all(p["datasource"]["uid"] == "${datasource}" for p in panels))
    check("the service variable lists lb-control's services",
          any(v["name"] == "service" and "lb_service_flows_total" in
              json.dumps(v) for v in d["templating"]["list"]))
    print("grafana_check: " + ("PASS" if FAILS == 0 else f"FAIL: {FAILS}"))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
