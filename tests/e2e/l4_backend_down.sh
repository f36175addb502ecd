#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A TCP service with the default (adaptive) scheduler over three nginx
# backends; between the first and the second hundred of 300 sequential
# requests, be2's nginx is stopped (its namespace stays, so its kernel
# answers SYNs with a RST):
#   - every request still succeeds: the dataplane retries the SYN on
#     another backend instead of passing the RST to the client;
#   - be2's errors counter grows, the others' stay put;
#   - be2's share of new flows in the last hundred is below half its share
#     in the first hundred (error-adaptive weights move traffic off it).
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init l4_backend_down
e2e_need_dataplane

SVC="tcp $VIP:80"
N=100 # requests per phase

topo_up 3
for i in 1 2 3; do
	be_start "$i"
done

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add tcp $VIP:80
backend add tcp $VIP:80 $(be_addr 1):80
backend add tcp $VIP:80 $(be_addr 2):80
backend add tcp $VIP:80 $(be_addr 3):80
EOF
dp_start "$conf"
tel_save /lb/backends "$E2E_TMP/b0"

# phase P: N requests, then a snapshot of /lb/backends in bP.
phase() {
	local p=$1 t
	http_seq "http://$VIP/" "$N" "$E2E_TMP/seq$p"
	tel_save /lb/backends "$E2E_TMP/b$p"
	t=$(http_tally "$E2E_TMP/seq$p")
	e2e_log "phase $p: $N requests: $t"
	[ "$(field fail "$t")" = 0 ] || http_failures "$E2E_TMP/seq$p"
	check "phase $p: $N/$N requests answered" [ "$(field ok "$t")" = "$N" ]
	eval "T$p=\$t"
}

# delta F I P: growth of backend I's field F during phase P.
delta() {
	local a b
	a=$(be_field "$E2E_TMP/b$(($3 - 1))" "$SVC" "$2" "$1")
	b=$(be_field "$E2E_TMP/b$3" "$SVC" "$2" "$1")
	if [ "$a" = - ] || [ "$b" = - ]; then
		echo -
	else
		echo $((b - a))
	fi
}

phase 1
check "phase 1: be2 is in rotation (>= 10 of $N)" \
	[ "$(field be2 "$T1")" -ge 10 ]

be_kill 2
phase 2
phase 3
check "phases 2-3: nothing answered by the stopped be2" \
	'[ "$(field be2 "$T2")" = 0 ] && [ "$(field be2 "$T3")" = 0 ]'
e2e_log "slowest request after the stop: $(http_tally "$E2E_TMP/seq2" |
	cut -d' ' -f3) (phase 2), $(http_tally "$E2E_TMP/seq3" |
	cut -d' ' -f3) (phase 3)"

for p in 1 2 3; do
	line="phase $p:"
	for i in 1 2 3; do
		line="$line be$i new flows +$(delta flows_total "$i" "$p")"
		line="$line errors +$(delta errors "$i" "$p")"
		line="$line ($(be_field "$E2E_TMP/b$p" "$SVC" "$i" state));"
	done
	e2e_log "$line"
done

e1=$(be_field "$E2E_TMP/b1" "$SVC" 2 errors)
e2=$(be_field "$E2E_TMP/b2" "$SVC" 2 errors)
e3=$(be_field "$E2E_TMP/b3" "$SVC" 2 errors)
e2e_log "be2 errors: $e1 (before the stop) -> $e2 -> $e3"
check "be2's errors grow after its stop" \
	'[ "$e1" != - ] && [ "$e2" != - ] && [ "$e3" != - ] &&
	 [ "$e2" -gt "$e1" ] && [ "$e3" -ge "$e2" ]'
for i in 1 3; do
	a=$(be_field "$E2E_TMP/b0" "$SVC" "$i" errors)
	b=$(be_field "$E2E_TMP/b3" "$SVC" "$i" errors)
	check "be$i (healthy) has no new errors ($a -> $b)" \
		'[ "$a" != - ] && [ "$a" = "$b" ]'
done

# be2's new flows in a phase: flows given to it (flows_total) or, if the
# dataplane counts a flow only on the backend that finally took it, SYNs
# sent to it that failed (errors); whichever is larger.
share() {
	local ft er
	ft=$(delta flows_total 2 "$1")
	er=$(delta errors 2 "$1")
	if [ "$ft" = - ] || [ "$er" = - ]; then
		echo -
	else
		echo $((ft > er ? ft : er))
	fi
}
s1=$(share 1)
s2=$(share 2)
s3=$(share 3)
e2e_log "be2's new flows per $N requests: $s1 (up), $s2, $s3 (after the stop)"
check "be2's share of new flows shrinks below half (phase 3 vs 1)" \
	'[ "$s1" != - ] && [ "$s3" != - ] && [ $((s3 * 2)) -lt "$s1" ]'

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]

e2e_finish
