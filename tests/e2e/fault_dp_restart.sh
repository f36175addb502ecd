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
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init fault_dp_restart
e2e_need_control
e2e_need_tools wrk

ROUNDS=${E2E_DP_RESTART_ROUNDS:-kill:0 kill:0.2 kill:0.5 kill:1 term:0 stop:0 stop:1}
REATTACH=${E2E_CTL_REATTACH_TIMEOUT:-30}

ctl_wrr_up
ctl_do save >"$E2E_TMP/save0"
pid=$CTL_PID

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
