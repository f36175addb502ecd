#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# One client sending UDP datagrams from new source ports as fast as it
# gets answers (each a new flow, no handshake needed) against a dataplane
# whose budget of new flows per source is 2/s with a burst of 20
# (--src-budget 2/20): it gets its burst and the rate, no more; every
# other datagram is dropped before it takes a flow (flows_created and
# src_budget_dropped add up to what it sent), and another client address
# still gets every one of its datagrams answered.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init src_budget
e2e_need_dataplane

PORT=9000
RATE=2
BURST=20
N=100

topo_up 1 2
be_udp_start 1 "$PORT"

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add udp $VIP:$PORT sched rr
backend add udp $VIP:$PORT $(be_addr 1):$PORT
EOF
dp_start "$conf" --src-budget "$RATE/$BURST"

# probe SRC COUNT BASE-PORT TIMEOUT: udp_probe from client address SRC.
probe() {
	ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/nettool.py" udp-probe \
		--target "$VIP:$PORT" --src "$(cli_addr "$1")" --count "$2" \
		--base-port "$3" --timeout "$4"
}

# Two datagrams from the second address first, so that the dataplane has
# resolved the backend; not from the first, whose budget is measured.
w=$(probe 2 2 19000 3) || true
e2e_log "warm-up from $(cli_addr 2): $w"

tel_save /lb/stats "$E2E_TMP/stats0"
t0=$(date +%s%N)
r=$(probe 1 "$N" 20000 0.02) || true
t1=$(date +%s%N)
tel_save /lb/stats "$E2E_TMP/stats1"
ms=$(((t1 - t0) / 1000000))
e2e_log "$N datagrams from $(cli_addr 1), new ports, in $ms ms: $r"
answered=$(jget /dev/stdin answered <<<"$r")
c0=$(jget "$E2E_TMP/stats0" /lb/stats flows_created)
c1=$(jget "$E2E_TMP/stats1" /lb/stats flows_created)
d0=$(jget "$E2E_TMP/stats0" /lb/stats src_budget_dropped)
d1=$(jget "$E2E_TMP/stats1" /lb/stats src_budget_dropped)
e2e_log "flows_created $c0 -> $c1, src_budget_dropped $d0 -> $d1"
# The burst, the rate over the run, and one token that may have been
# on its way. Flows, not answers: an answer later than the probe's
# 20 ms on a busy host is lost to the probe, not to the budget.
max=$((BURST + RATE * (ms + 999) / 1000 + 1))
check "the flooding address got its budget of flows, no more (+$((c1 - c0)) flows, $answered answered, at most $max)" \
	'[ "$c1" != - ] && [ $((c1 - c0)) -ge "$BURST" ] &&
	 [ $((c1 - c0)) -le "$max" ] && [ "$answered" -le "$max" ]'
check "every datagram made a flow or was dropped over budget (+$((c1 - c0)) flows, +$((d1 - d0)) dropped)" \
	'[ "$c1" != - ] && [ "$d1" != - ] &&
	 [ $((c1 - c0 + d1 - d0)) -eq "$N" ] && [ $((d1 - d0)) -gt 0 ]'

# Another address meanwhile is untouched.
r=$(probe 2 10 21000 2) || true
e2e_log "10 datagrams from $(cli_addr 2), new ports: $r"
check "another address got all its datagrams answered" \
	'[ "$(jget /dev/stdin answered <<<"$r")" = 10 ]'

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]

e2e_finish
