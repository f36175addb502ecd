#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A round-robin UDP service over two backends running an echo server that
# answers "beI <datagram>": 50 datagrams, each from its own source port
# (so each is a new flow) and each sent once, all answered with their own
# payload; both backends used; flows_created grows by at least 50.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init udp_echo
e2e_need_dataplane

PORT=9000
N=50

topo_up 2
be_udp_start 1 "$PORT"
be_udp_start 2 "$PORT"

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add udp $VIP:$PORT sched rr
backend add udp $VIP:$PORT $(be_addr 1):$PORT
backend add udp $VIP:$PORT $(be_addr 2):$PORT
EOF
dp_start "$conf"

# Two datagrams first, not counted, so that the dataplane has resolved
# both backends (it may drop what waits for ARP).
w=$(udp_probe "$VIP:$PORT" 2 19000 3) || true
e2e_log "warm-up: $w"

tel_save /lb/stats "$E2E_TMP/stats0"
rc=0
r=$(udp_probe "$VIP:$PORT" "$N" 20000) || rc=$?
tel_save /lb/stats "$E2E_TMP/stats1"
tel_save /lb/backends "$E2E_TMP/backends"
e2e_log "$N datagrams from ports 20000..$((20000 + N - 1)): $r"

answered=$(jget /dev/stdin answered <<<"$r")
n1=$(jget /dev/stdin by be1 <<<"$r")
n2=$(jget /dev/stdin by be2 <<<"$r")
check "$N/$N datagrams answered with their own payload ($answered)" \
	[ "$answered" = "$N" ]
check "both backends answered (be1 $n1, be2 $n2)" \
	'[ "$n1" != - ] && [ "$n2" != - ] && [ "$n1" -gt 0 ] && [ "$n2" -gt 0 ]'

c0=$(jget "$E2E_TMP/stats0" /lb/stats flows_created)
c1=$(jget "$E2E_TMP/stats1" /lb/stats flows_created)
e2e_log "flows_created: $c0 -> $c1, flows_active:" \
	"$(jget "$E2E_TMP/stats1" /lb/stats flows_active)"
check "each source port made a new flow (flows_created +$N or more)" \
	'[ "$c0" != - ] && [ "$c1" != - ] && [ $((c1 - c0)) -ge "$N" ]'
for i in 1 2; do
	e2e_log "be$i: flows_total=$(be_field "$E2E_TMP/backends" \
		"udp $VIP:$PORT" "$i" flows_total)" \
		"errors=$(be_field "$E2E_TMP/backends" "udp $VIP:$PORT" "$i" errors)"
done

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]

e2e_finish
