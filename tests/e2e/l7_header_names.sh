#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Feedback header names configured on a live service: an lb-instance
# backend sends its self-perceived load in `X-Load` instead of X-SPL.
#   - with the default names, lb-control gets HTTP records but no SPL;
#   - `lbctl service set ... spl-header X-Load` publishes a table whose
#     header database lb-control compiled with the new name; from then on
#     every response's SPL arrives, and matches what the instance says;
#   - the name is in `lbctl save` and in `service show`;
#   - a name that two services would read as different kinds of value is
#     refused, and the running configuration stays as it was.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init l7_header_names
e2e_need_control
e2e_need_tools curl
INSTANCE=${LB_INSTANCE:-$LB_BUILD_DIR/tools/instance/lb-instance}
[ -x "$INSTANCE" ] || e2e_skip "lb-instance is not built ($INSTANCE)"

B1=$(be_addr 1):80
# backend B1's counters in a saved `lbctl --json backend list`
be_val() {
	jq_get "$1" "[x$2 for x in d['backends'] if x['backend'] == '$B1'][0]"
}

# requests N: N requests through the VIP on one keep-alive connection.
requests() {
	local n=$1 urls=() k
	for ((k = 0; k < n; k++)); do urls+=("http://$VIP/"); done
	ip netns exec "$NS_CLI" curl -sS --max-time 20 "${urls[@]}" >/dev/null
	sleep 0.5 # a few ticks: the rings drained
}

topo_up 1
# SPL = delay / benchmark time, about 0.5
ip netns exec "$(ns_be 1)" "$INSTANCE" --listen "$B1" --name be1 \
	--delay-ms 5 --bench-ms 10 --spl-header X-Load \
	>>"$E2E_TMP/inst1.log" 2>&1 &
wait_listen "$(ns_be 1)" tcp "$B1" || die "be1: lb-instance did not start"
# direct_load: the X-Load the instance answers a request sent to it
# directly, the median of five.
direct_load() {
	local k
	for k in 1 2 3 4 5; do
		ip netns exec "$(ns_be 1)" curl -sS -o /dev/null -D - \
			--max-time 5 "http://$B1/" | tr -d '\r' |
			awk -F': *' 'tolower($1) == "x-load" { print $2 }'
	done | sort -g | sed -n 3p
}
direct=$(direct_load)
check "the instance sends X-Load ($direct)" '[ -n "$direct" ]'

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOC
service add tcp $VIP:80 sched rr http
backend add tcp $VIP:80 $B1
EOC
dp_start_shared "$conf"
ctl_start

requests 20
ctl_json "$E2E_TMP/a.json" backend list
resp_a=$(be_val "$E2E_TMP/a.json" "['http_responses']")
recs_a=$(be_val "$E2E_TMP/a.json" "['l7']['spl_records']")
e2e_log "default names: $resp_a responses, $recs_a SPL records"
check "default names: responses followed ($resp_a), no SPL read ($recs_a)" \
	'[ "$resp_a" -ge 20 ] && [ "$recs_a" = 0 ]'

ctl_do service set tcp "$VIP:80" spl-header X-Load
requests 30
ctl_json "$E2E_TMP/b.json" backend list
resp_b=$(be_val "$E2E_TMP/b.json" "['http_responses']")
recs_b=$(be_val "$E2E_TMP/b.json" "['l7']['spl_records']")
spl=$(be_val "$E2E_TMP/b.json" "['l7']['spl']")
direct=$(direct_load)
e2e_log "spl-header X-Load: $resp_b responses, $recs_b SPL records, SPL $spl (instance $direct)"
check "after the switch every response's SPL arrived ($recs_b of $((resp_b - resp_a)))" \
	'[ "$recs_b" -eq $((resp_b - resp_a)) ] && [ "$recs_b" -ge 30 ]'
# the instance's timer slack under this host's load: see l7_feedback.sh
check "the SPL lbctl shows ($spl) matches the instance's ($direct)" \
	"awk -v g='$spl' -v w='$direct' 'BEGIN {
		d = g - w; if (d < 0) d = -d
		exit !(w > 0 && d <= 0.25 * w + 0.15) }'"
check "lbctl save keeps the name" \
	'ctl save | has "^service add tcp $VIP:80 .*spl-header X-Load"'
check "service show names the header" \
	'ctl service show tcp "$VIP:80" | has "spl-header X-Load"'

# X-Load as another service's priority header: refused, nothing changes
ctl_do service add tcp "$VIP:81" http
if ctl service set tcp "$VIP:81" priority-header x-load \
	>"$E2E_TMP/refused.txt" 2>&1; then
	check "a name read as two kinds of value is refused" false
else
	check "a name read as two kinds of value is refused" \
		'grep -qi "x-load" "$E2E_TMP/refused.txt"'
fi
e2e_log "refused: $(cat "$E2E_TMP/refused.txt")"
check "the refused change left the configuration as it was" \
	'! ctl save | has "priority-header"'
requests 10
ctl_json "$E2E_TMP/c.json" backend list
recs_c=$(be_val "$E2E_TMP/c.json" "['l7']['spl_records']")
check "SPL still read after the refusal ($recs_c > $recs_b)" \
	'[ "$recs_c" -gt "$recs_b" ]'
e2e_finish
