#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A round-robin UDP service over two backends running an echo server that
# answers "beI <datagram>": 50 datagrams, each from its own source port
# (so each is a new flow) and each sent once, all answered with their own
# payload; both backends used; flows_created grows by at least 50.
# Then 30 datagrams from new source ports to a second service whose
# backend answers nothing (timeout-udp-unreplied 1s): their flows expire
# within seconds (udp_unreplied +30, flows_active back to its level
# before them) while the 50 answered flows stay (timeout-udp 5m).
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init udp_echo
e2e_need_dataplane

PORT=9000
N=50
SILENT=$((PORT + 1)) # no server listens there
N2=30

topo_up 2
be_udp_start 1 "$PORT"
be_udp_start 2 "$PORT"

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add udp $VIP:$PORT sched rr
backend add udp $VIP:$PORT $(be_addr 1):$PORT
backend add udp $VIP:$PORT $(be_addr 2):$PORT
service add udp $VIP:$SILENT sched rr timeout-udp-unreplied 1s
backend add udp $VIP:$SILENT $(be_addr 1):$SILENT
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

# Unanswered datagrams from new source ports: each takes a flow and a
# SNAT port, but only for timeout-udp-unreplied.
r=$(udp_probe "$VIP:$SILENT" "$N2" 21000 0.05) || true
tel_save /lb/stats "$E2E_TMP/stats2"
e2e_log "$N2 unanswered datagrams from ports 21000..$((21000 + N2 - 1)): $r"
u0=$(jget "$E2E_TMP/stats1" /lb/stats udp_unreplied)
a1=$(jget "$E2E_TMP/stats1" /lb/stats flows_active)
a2=$(jget "$E2E_TMP/stats2" /lb/stats flows_active)
# Bounded poll for the expiry (1 s after the last datagram, and the
# dataplane's housekeeping), not a fixed sleep.
u=- a=- t0=$(date +%s%N) ms=0
while [ "$ms" -lt 15000 ]; do
	tel_save /lb/stats "$E2E_TMP/stats3"
	u=$(jget "$E2E_TMP/stats3" /lb/stats udp_unreplied)
	a=$(jget "$E2E_TMP/stats3" /lb/stats flows_active)
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$u" != - ] && [ "$u0" != - ] && [ $((u - u0)) -ge "$N2" ] && break
	sleep 0.2
done
e2e_log "udp_unreplied: $u0 -> $u after $ms ms;" \
	"flows_active: $a1 before, $a2 after the datagrams, $a at the end"
check "the $N2 unanswered flows expired within 15 s (udp_unreplied $u0 -> $u)" \
	'[ "$u" != - ] && [ "$u0" != - ] && [ $((u - u0)) -ge "$N2" ]'
# Some may expire while the last ones are sent: the peak is not checked
# against N2, only that they were there and are gone.
check "flows_active rose with them and fell back ($a1 -> $a2 -> $a)" \
	'[ "$a" != - ] && [ "$a1" != - ] && [ "$a2" != - ] &&
	 [ "$a2" -gt "$a1" ] && [ "$a" -le "$a1" ]'
check "the $N answered flows stay (flows_active $a)" \
	'[ "$a" != - ] && [ "$a" -ge "$N" ]'

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]

e2e_finish
