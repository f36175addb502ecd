#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Each pool of a service checked by its own health check, end to end: one
# VIP routing by Host (delayed binding) to two pools of nginx backends,
# checked by lb-control through the dataplane's exception path:
#   - the service's own pool (be1, be2) follows the service's tcp check;
#     both answer /healthz with 404, which a connect does not see: they
#     stay up, are never asked for /healthz, and share www.example.com;
#   - the pool `api` (be3, be4) has `check http check-path /healthz`:
#     be3 serves it, be4 answers it with 404 and goes down (`backend
#     list`, /metrics), and every request for api.example.com reaches be3;
#   - `pool set ... check-path /` (which be4 serves): be4 comes back up
#     and takes its share of api.example.com; the own pool's backends
#     are not touched by the change of api's check.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2086 # $SVC ("tcp VIP:PORT") is two words on purpose
# shellcheck disable=SC2119 # ctl_stop takes an optional argument
# shellcheck disable=SC2317 # functions called through check and wait_output
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init pool_health
e2e_need_control
e2e_need_tools nginx curl

SVC="tcp $VIP:80"
# Down within fall checks and one interval of phase, plus the time to
# publish; the margin is for a slow shared machine, not the design.
LIMIT=${E2E_HEALTH_LIMIT:-20}

topo_up 4
# /healthz: 404, logged; every other path answers "beI" (be_start).
NO_HEALTHZ='location = /healthz {
			access_log @DIR@/healthz.log combined;
			return 404 "no\n";
		}'
BE_LOCATIONS=$NO_HEALTHZ be_start 1
BE_LOCATIONS=$NO_HEALTHZ be_start 2
BE_LOCATIONS='location = /healthz {
			access_log @DIR@/healthz.log combined;
			return 200 "ok\n";
		}' be_start 3
BE_LOCATIONS=$NO_HEALTHZ be_start 4
B1=$(be_addr 1):80
B2=$(be_addr 2):80
B3=$(be_addr 3):80
B4=$(be_addr 4):80

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add $SVC sched rr synproxy on check tcp check-interval 200ms check-timeout 1s check-rise 2 check-fall 2
pool add $SVC api sched rr check http check-path /healthz
backend add $SVC $B1
backend add $SVC $B2
backend add $SVC $B3 pool api
backend add $SVC $B4 pool api
rule add $SVC host api.example.com pool api
EOF
dp_start_shared "$conf"
ctl_start

# health ADDR: the health `backend list` shows for backend ADDR.
health() {
	ctl_json "$E2E_TMP/bl.json" backend list $SVC >/dev/null 2>&1 || true
	jq_get "$E2E_TMP/bl.json" \
		"[b['health'] for b in d['backends'] if b['backend'] == '$1'][0]"
}
# checks ADDR: the checks of backend ADDR finished so far.
checks() {
	ctl_json "$E2E_TMP/bc.json" backend list $SVC >/dev/null 2>&1 || true
	jq_get "$E2E_TMP/bc.json" \
		"[b['check']['probes'] for b in d['backends'] if b['backend'] == '$1'][0]"
}
# tally N HOST: N requests for HOST, resolved to the VIP; how many each
# backend answered, as "be1=N be3=N fail=N" (sorted).
tally() {
	local i
	for ((i = 0; i < $1; i++)); do
		ip netns exec "$NS_CLI" curl -s --connect-timeout 2 \
			--max-time 4 --resolve "$2:80:$VIP" "http://$2/" ||
			echo fail
	done | sort | uniq -c | awk '{ printf "%s%s=%s", s, $2, $1; s = " " }'
}
# count TALLY WHO: WHO's count in TALLY, 0 without one.
count() {
	local n
	n=$(tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p")
	echo "${n:-0}"
}

# ---- be4 fails api's check; the own pool's backends pass theirs -----------

t=$(WAIT_PERIOD=0.2 wait_output "$LIMIT" down health "$B4") || true
check "be4, answering /healthz with 404, goes down ($t)" \
	'[ "${t%% *}" = down ]'
ctl_do backend list $SVC >"$E2E_TMP/bl.txt"
sed 's/^/    /' "$E2E_TMP/bl.txt"
check "backend list: be4 down on a 404" \
	'grep -F "$B4" "$E2E_TMP/bl.txt" | has " down  *404 "'
check "be3 (api, serving /healthz) is up" '[ "$(health "$B3")" = up ]'
# at_least ADDR N: 1 once backend ADDR's checks number N or more.
at_least() {
	local n
	n=$(checks "$1")
	[ "$n" -ge "$2" ] 2>/dev/null && echo 1
}
# A few more rounds of checks: the tcp ones still pass.
n1=$(checks "$B1")
t=$(WAIT_PERIOD=0.2 wait_output "$LIMIT" 1 at_least "$B1" $((n1 + 4))) ||
	true
check "be1's checks go on ($t)" '[ "${t%% *}" = 1 ]'
for b in "$B1" "$B2"; do
	check "$b (the own pool, tcp check) stays up, whatever /healthz says" \
		'[ "$(health "$b")" = up ]'
done
c1=$(grep -c "sluice-health-check" "$E2E_TMP/be1/healthz.log" 2>/dev/null || true)
c3=$(grep -c "\"GET /healthz HTTP/1.1\" 200 .*\"sluice-health-check\"" \
	"$E2E_TMP/be3/healthz.log" 2>/dev/null || true)
e2e_log "checks of /healthz seen by be1: ${c1:-0}, by be3: ${c3:-0}"
check "api's backends get GET /healthz; the own pool's none (tcp)" \
	'[ "${c3:-0}" -ge 2 ] && [ "${c1:-0}" = 0 ]'
if [ -n "${CTL_METRICS:-}" ]; then
	metrics >"$E2E_TMP/m0"
	check "/metrics: be4 down, be3 up" \
		'grep -qF "lb_backend_health{service=\"$SVC\",backend=\"$B4\",health=\"down\"} 1" "$E2E_TMP/m0" &&
		 grep -qF "lb_backend_health{service=\"$SVC\",backend=\"$B3\",health=\"up\"} 1" "$E2E_TMP/m0"'
fi

# ---- what the dataplane does with it --------------------------------------

# The table that marks be4 down reaches the workers within a moment.
t=$(wait_output "$LIMIT" be3=6 tally 6 api.example.com) || true
e2e_log "api.example.com answered by be3 only: $t"
t=$(tally 20 api.example.com)
check "20 requests for api.example.com: all by be3 ($t)" '[ "$t" = "be3=20" ]'
t=$(tally 20 www.example.com)
check "20 requests for www.example.com: be1 and be2 share them ($t)" \
	'[ "$(count "$t" be1)" -gt 0 ] && [ "$(count "$t" be2)" -gt 0 ] &&
	 [ $(($(count "$t" be1) + $(count "$t" be2))) = 20 ]'

# ---- api's check changed: its backends only start again -------------------

ctl_do pool set $SVC api check-path / >/dev/null
ctl_do pool list $SVC >"$E2E_TMP/pools"
sed 's/^/    /' "$E2E_TMP/pools"
check "pool list: api checked by http on /, the own pool by tcp" \
	'has "^api  *rr  *2  *2  *http /$" <"$E2E_TMP/pools" &&
	 has "^default  *rr  *2  *2  *tcp$" <"$E2E_TMP/pools"'
t=$(WAIT_PERIOD=0.2 wait_output "$LIMIT" up health "$B4") || true
check "be4, serving /, comes back up ($t)" '[ "${t%% *}" = up ]'
for b in "$B1" "$B2" "$B3"; do
	check "$b stays up" '[ "$(health "$b")" = up ]'
done
# be4_serves: 1 once a request for api.example.com reached be4.
be4_serves() {
	[ "$(count "$(tally 4 api.example.com)" be4)" -gt 0 ] && echo 1
}
t=$(wait_output "$LIMIT" 1 be4_serves) || true
e2e_log "be4 takes api.example.com requests again: $t"
t=$(tally 20 api.example.com)
check "20 requests for api.example.com: be3 and be4 share them ($t)" \
	'[ "$(count "$t" be3)" -gt 0 ] && [ "$(count "$t" be4)" -gt 0 ] &&
	 [ $(($(count "$t" be3) + $(count "$t" be4))) = 20 ]'

check "lb-control stops cleanly" ctl_stop
check "lb-dataplane exits 0" dp_stop
e2e_finish
