#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A round-robin TCP service over three nginx backends through lb-dataplane:
#   - 300 sequential requests to the VIP, a new connection each, all
#     answered, spread 100/100/100 (+- E2E_RR_TOL), and the backends'
#     flows_total in telemetry agreeing with what the client saw;
#   - wrk for 3 s (2 threads, 20 connections): no socket error, no non-2xx;
#   - once the clients are done, flows_active drains to 0 within
#     E2E_DRAIN_TIMEOUT seconds (the dataplane's TCP closing timeouts);
#   - the drop counters of every malformed-packet reason of the parser are
#     in /lb/stats, and malformed frames sent to the VIP raise them;
#   - the dataplane exits 0 on SIGTERM.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init l4_http
e2e_need_dataplane
e2e_need_tools wrk

TOL=${E2E_RR_TOL:-3}
DRAIN=${E2E_DRAIN_TIMEOUT:-20}
SVC="tcp $VIP:80"

topo_up 3
for i in 1 2 3; do
	be_start "$i"
done

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add tcp $VIP:80 sched rr
backend add tcp $VIP:80 $(be_addr 1):80
backend add tcp $VIP:80 $(be_addr 2):80
backend add tcp $VIP:80 $(be_addr 3):80
EOF
dp_start "$conf"
tel_save /lb/stats "$E2E_TMP/stats0"

# ---- 300 sequential connections ---------------------------------------------

http_seq "http://$VIP/" 300 "$E2E_TMP/seq"
t=$(http_tally "$E2E_TMP/seq")
e2e_log "300 sequential requests to $VIP:80: $t"
[ "$(field fail "$t")" = 0 ] || http_failures "$E2E_TMP/seq"
check "300/300 requests answered" [ "$(field ok "$t")" = 300 ]
for i in 1 2 3; do
	n=$(field "be$i" "$t")
	check "rr: be$i got 100 +- $TOL (got $n)" \
		[ $((n > 100 ? n - 100 : 100 - n)) -le "$TOL" ]
done

tel_save /lb/backends "$E2E_TMP/backends1"
tel_save /lb/stats "$E2E_TMP/stats1"
for i in 1 2 3; do
	seen=$(field "be$i" "$t")
	ft=$(be_field "$E2E_TMP/backends1" "$SVC" "$i" flows_total)
	e2e_log "be$i: telemetry flows_total=$ft errors=$(
		be_field "$E2E_TMP/backends1" "$SVC" "$i" errors)" \
		"state=$(be_field "$E2E_TMP/backends1" "$SVC" "$i" state)," \
		"client saw $seen"
	check "be$i: flows_total ($ft) matches the client's count ($seen)" \
		'[ "$ft" != - ] && [ $((ft - seen)) -le "$TOL" ] &&
		 [ $((seen - ft)) -le "$TOL" ]'
done
c0=$(jget "$E2E_TMP/stats0" /lb/stats flows_created)
c1=$(jget "$E2E_TMP/stats1" /lb/stats flows_created)
e2e_log "flows_created: $c0 -> $c1"
# A client port the kernel reuses while its previous connection is still
# in TIME_WAIT in the flow table is a new flow too (picked and counted).
check "flows_created grew by at least 300 - $TOL" \
	'[ "$c0" != - ] && [ "$c1" != - ] && [ $((c1 - c0)) -ge $((300 - TOL)) ]'

# ---- wrk --------------------------------------------------------------------

w=$(wrk_run "http://$VIP/" 3 2 20 "$E2E_TMP/wrk")
e2e_log "wrk 3 s, 2 threads, 20 connections: $w"
check "wrk: requests served" [ "$(field requests "$w")" -gt 0 ]
check "wrk: no socket error" [ "$(field socket_errors "$w")" = 0 ]
check "wrk: no non-2xx response" [ "$(field non2xx "$w")" = 0 ]
[ "$(field socket_errors "$w")" = 0 ] || sed 's/^/    /' "$E2E_TMP/wrk"

# ---- flows drain ------------------------------------------------------------

e2e_log "flows_active after the clients: $(tel /lb/stats -k flows_active)"
rc=0
d=$(wait_value "$DRAIN" /lb/stats flows_active = 0) || rc=$?
e2e_log "flows_active: ${d% *} after ${d#* } s (limit ${DRAIN} s)"
check "flows_active drains to 0 within ${DRAIN} s" [ "$rc" = 0 ]

# ---- malformed packets ------------------------------------------------------

# The parser's drop reasons, as lb_pkt_verdict_name() names them.
reasons=$(sed -n \
	's/.*\[LB_PKT_DROP_[A-Z0-9_]*\] = "\([a-z0-9_]*\)".*/\1/p' \
	"$E2E_TOP/dataplane/parse/pkt_parse.c" | tr '\n' ' ')
tel_save /lb/stats "$E2E_TMP/stats2"
absent=
for r in $reasons; do
	[ "$(drop_count "$E2E_TMP/stats2" "$r")" != - ] ||
		absent="$absent $r"
done
e2e_log "drop counters: $(jget "$E2E_TMP/stats2" /lb/stats drop)"
e2e_log "malformed counters:" \
	"$(jget "$E2E_TMP/stats2" /lb/stats malformed)"
check "/lb/stats counts every parser drop reason (${reasons% })" \
	[ -z "$absent" ]
[ -z "$absent" ] || e2e_log "missing drop reasons:$absent"

inject_malformed 5 >/dev/null
sleep 1
tel_save /lb/stats "$E2E_TMP/stats3"
for k in $MALFORMED_KINDS; do
	a=$(drop_count "$E2E_TMP/stats2" "$k")
	b=$(drop_count "$E2E_TMP/stats3" "$k")
	check "5 malformed frames of kind $k counted under $k ($a -> $b)" \
		'[ "$a" != - ] && [ "$b" != - ] && [ $((b - a)) -ge 5 ]'
done
e2e_log "rx=$(jget "$E2E_TMP/stats3" /lb/stats rx)" \
	"tx=$(jget "$E2E_TMP/stats3" /lb/stats tx)" \
	"flows_created=$(jget "$E2E_TMP/stats3" /lb/stats flows_created)" \
	"flows_refused=$(jget "$E2E_TMP/stats3" /lb/stats flows_refused)"

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]

e2e_finish
