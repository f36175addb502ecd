#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# lb-dataplane restarted at once, or soon, after it died, while lb-control
# re-attaches or is busy:
#   - a service configured through lbctl carries wrk keep-alive load when
#     the dataplane is killed (SIGKILL) and started again 0, 0.2, 0.5 and
#     1 s later; stopped (SIGTERM) and started again as soon as it is
#     gone; and killed and started again while lb-control is frozen
#     (SIGSTOP, then SIGCONT once the new dataplane runs), still attached
#     to the dead runtime (E2E_DP_RESTART_ROUNDS: "kill:DELAY",
#     "term:DELAY" or "stop:DELAY" words);
#   - every new dataplane starts (its EAL is not refused its memory by the
#     runtime lb-control held), lb-control never dies (same pid), and it
#     re-publishes: the service answers again within
#     E2E_CTL_REATTACH_TIMEOUT seconds and `lbctl save` is what it was.
# The dataplane's --config has no SNAT address: before the restarts,
# `lbctl snat add` on the running dataplane makes the service answer, and
# replacing that address by another (add, then del) moves new
# connections to the new one, with no restart; every restarted dataplane
# then gets its SNAT address from lb-control like the rest.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
# shellcheck disable=SC2086 # $SVC ("tcp VIP:PORT") is two words on purpose
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init fault_dp_restart
e2e_need_control
e2e_need_tools wrk

ROUNDS=${E2E_DP_RESTART_ROUNDS:-kill:0 kill:0.2 kill:0.5 kill:1 term:0 stop:0 stop:1}
REATTACH=${E2E_CTL_REATTACH_TIMEOUT:-30}

SVC="tcp $VIP:80"
SNAT2=$BE_NET.3
topo_up 2
be_start 1
be_start 2
conf=$E2E_TMP/lb.conf
conf_ports "$conf"
sed -i '/^snat /d' "$conf"
dp_start_shared "$conf"
ctl_start
ctl_do service add $SVC sched wrr >/dev/null
ctl_do backend add $SVC "$(be_addr 1):80" >/dev/null
ctl_do backend add $SVC "$(be_addr 2):80" weight 2 >/dev/null
pid=$CTL_PID

# tw_from I ADDR: backend I's connections in TIME_WAIT that came from ADDR
# (nginx closes first, so each answered connection leaves one, for 60 s).
tw_from() {
	ip netns exec "$(ns_be "$1")" ss -Htan state time-wait |
		awk -v a="$2" '{ sub(/:[0-9]+$/, "", $4) } $4 == a { n++ }
			END { print n + 0 }'
}

http_seq "http://$VIP/" 3 "$E2E_TMP/seq.nosnat"
t=$(http_tally "$E2E_TMP/seq.nosnat")
e2e_log "no SNAT address: 3 new connections: $t"
check "with no SNAT address, no connection is answered" \
	'[ "$(field ok "$t")" = 0 ]'
ctl_do snat add "$LB_SNAT" port 1 >/dev/null
read -r up secs <<<"$(vip_wait 10)" || true
e2e_log "snat add $LB_SNAT on the running dataplane: answers after" \
	"$secs s: $up"
http_seq "http://$VIP/" 10 "$E2E_TMP/seq.snat1"
t=$(http_tally "$E2E_TMP/seq.snat1")
e2e_log "after snat add: 10 new connections: $t"
check "lbctl snat add on a running dataplane: 10/10 answered" \
	'[ "$up" = yes ] && [ "$(field ok "$t")" = 10 ]'
n1=$(($(tw_from 1 "$LB_SNAT") + $(tw_from 2 "$LB_SNAT")))
check "... from $LB_SNAT ($n1 closed at the backends)" '[ "$n1" -gt 0 ]'
ctl_do snat add "$SNAT2" port 1 >/dev/null
ctl_do snat del "$LB_SNAT" >/dev/null
http_seq "http://$VIP/" 10 "$E2E_TMP/seq.snat2"
t=$(http_tally "$E2E_TMP/seq.snat2")
n2=$(($(tw_from 1 "$LB_SNAT") + $(tw_from 2 "$LB_SNAT")))
m2=$(($(tw_from 1 "$SNAT2") + $(tw_from 2 "$SNAT2")))
e2e_log "SNAT address moved to $SNAT2: 10 new connections: $t; closed" \
	"at the backends from $LB_SNAT: $n1 -> $n2, from $SNAT2: $m2"
check "snat add $SNAT2, snat del $LB_SNAT: 10/10 answered" \
	'[ "$(field ok "$t")" = 10 ]'
check "... from $SNAT2, none more from $LB_SNAT" \
	'[ "$m2" -gt 0 ] && [ "$n2" -le "$n1" ]'
ctl_do save >"$E2E_TMP/save0"

r=0
for round in $ROUNDS; do
	r=$((r + 1))
	how=${round%%:*}
	delay=${round#*:}
	wrk_run "http://$VIP/" 3 1 8 "$E2E_TMP/wrk.$r" >"$E2E_TMP/wrk.$r.sum" &
	wrk_pid=$!
	sleep 1
	case $how in
	term) kill -TERM "$DP_PID" ;;
	stop)
		kill -STOP "$pid"
		kill -KILL "$DP_PID"
		;;
	*) kill -KILL "$DP_PID" ;;
	esac
	wait "$DP_PID" 2>/dev/null || true
	DP_PID=
	sleep "$delay"
	e2e_log "round $r: lb-dataplane stopped ($how) under wrk load;" \
		"starting it again $delay s after it went"
	dp_start_shared "$conf"
	[ "$how" != stop ] || kill -CONT "$pid"
	wait "$wrk_pid" || true
	read -r ok secs <<<"$(vip_wait "$REATTACH")" || true
	e2e_log "round $r: the service answers through the new dataplane" \
		"after $secs s: $ok"
	check "round $r ($round): lb-control is still running (pid $pid)" \
		kill -0 "$pid"
	check "round $r ($round): the new dataplane runs" kill -0 "$DP_PID"
	check "round $r ($round): everything republished within $REATTACH s" \
		[ "$ok" = yes ]
	ctl save >"$E2E_TMP/save.$r" 2>&1 || true
	check "round $r ($round): lbctl save is what it was" \
		diff -u "$E2E_TMP/save0" "$E2E_TMP/save.$r"
	http_seq "http://$VIP/" 10 "$E2E_TMP/seq.$r"
	t=$(http_tally "$E2E_TMP/seq.$r")
	e2e_log "round $r: 10 new connections: $t"
	check "round $r ($round): 10/10 new connections answered" \
		'[ "$(field ok "$t")" = 10 ]'
done

ctl_stop
check "lb-control exits 0 on SIGTERM (status $CTL_RC)" [ "$CTL_RC" = 0 ]
dp_stop
e2e_finish
