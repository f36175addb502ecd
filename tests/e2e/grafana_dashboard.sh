#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tools/grafana/sluice.json asks only for what lb-control serves: an
# autoscaled HTTP service (lb-instance backends started by the process
# driver, reporting X-SPL) with a health check and the governor, under
# wrk, so that every family the dashboard draws has samples; then
# dashboard_check.py holds every metric, label and label value of the
# dashboard's queries against lb-control's /metrics. The same check of
# a dashboard with one metric name wrong must fail. The exposition is
# kept under the build directory (grafana_metrics.txt). On the way, the
# status page's /api/v1/scale and lbctl top show the autoscaler's
# decisions.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

INSTANCE=${LB_INSTANCE:-$LB_BUILD_DIR/tools/instance/lb-instance}
DASH=$E2E_TOP/tools/grafana/sluice.json
CHECK=$E2E_TOP/tools/grafana/dashboard_check.py
ART=$LB_BUILD_DIR/e2e-artifacts
SVC="tcp $VIP:80"

e2e_init grafana_dashboard
e2e_need_control
[ -x "$INSTANCE" ] || e2e_skip "lb-instance is not built ($INSTANCE)"
command -v wrk >/dev/null || e2e_skip "wrk is not installed"

conf=$E2E_TMP/lb.conf
topo_up 0
conf_ports "$conf"
echo "service add $SVC http governor on check tcp check-interval 200ms" \
	>>"$conf"
dp_start_shared "$conf"
ctl_start
cmd="exec $INSTANCE --listen \$LB_INST_ADDR:\$LB_INST_PORT"
cmd="$cmd --name be\$LB_INST_ID --bench-ms 10 --delay-ms 2"
ctl_do scale set $SVC policy spl lower 0.2 upper 0.8 driver process \
	command "$cmd" target "netns $BE_NET.50-57/24 $NS_SW $BR sl-i{id}-$E2E_TAG" \
	min 2 max 3 interval 500ms startup-timeout 20s drain-timeout 5s
check "two instances become active" scale_wait_active 2 30

ip netns exec "$NS_CLI" wrk -t1 -c4 -d4s -H "Connection: close" \
	"http://$VIP/" >"$E2E_TMP/wrk.log" 2>&1 || true
# The status page's view of the autoscaler: its decisions with their
# inputs, as `scale history` gives them.
ip netns exec "$NS_LB" curl -sS --max-time 5 \
	"http://$CTL_METRICS/api/v1/scale" >"$E2E_TMP/scale.json" || true
check "/api/v1/scale: the service's decisions, with load and reason" \
	[ "$(jq_get "$E2E_TMP/scale.json" "all('load' in x and x['reason'] for x in d['services'][0]['history']['decisions']) and len(d['services'][0]['history']['decisions']) > 0")" = True ]
# lbctl top shows it too: the instances and the last decision.
ctl top --once >"$E2E_TMP/top.txt" || true
sed 's/^/    /' "$E2E_TMP/top.txt"
check "lbctl top: the autoscaler's instances and last decision" \
	grep -Eq '^  scale: 2 active.*; last .* at load [0-9.]+, [0-9]+s ago: ' \
	"$E2E_TMP/top.txt"
mkdir -p "$ART"
metrics >"$ART/grafana_metrics.txt"
e2e_log "$(grep -c '^# TYPE' "$ART/grafana_metrics.txt") families," \
	"$(grep -vc '^#' "$ART/grafana_metrics.txt") samples served"

out=$("$PY" -B "$CHECK" "$DASH" "$ART/grafana_metrics.txt" 2>&1) || true
printf '%s\n' "$out" | sed 's/^/    /'
check "every metric, label and value of the dashboard is served" \
	grep -q '^dashboard: .* 0 problem(s)$' <<<"$out"

# One name wrong: the check must say so.
sed 's/lb_backend_flows_total/lb_backend_flow_total/g' "$DASH" \
	>"$E2E_TMP/wrong.json"
rc=0
out=$("$PY" -B "$CHECK" "$E2E_TMP/wrong.json" "$ART/grafana_metrics.txt" \
	2>&1) || rc=$?
check "a wrong metric name fails the check" \
	'[ "$rc" = 1 ] && grep -q "no family lb_backend_flow_total" <<<"$out"'
sed 's/quantile=\\"0.99\\"/quantile=\\"0.999\\"/' "$DASH" >"$E2E_TMP/wrong.json"
rc=0
out=$("$PY" -B "$CHECK" "$E2E_TMP/wrong.json" "$ART/grafana_metrics.txt" \
	2>&1) || rc=$?
check "a label value never served fails the check" \
	'[ "$rc" = 1 ] && grep -q "quantile=\"0.999\"" <<<"$out"'

ctl_do scale del $SVC >/dev/null || true
ctl_stop TERM
dp_stop
e2e_finish
