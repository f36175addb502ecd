#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# lb-dataplane killed (SIGKILL) under load, E2E_FAULT_DP_ROUNDS times (2):
#   - a service configured through lbctl (not in the dataplane's boot
#     configuration) carries wrk keep-alive load when the dataplane dies;
#   - lb-control notices and reports it (its log says the dataplane went
#     away) within a few seconds, and keeps running (same pid);
#   - a new dataplane started with only its boot configuration gets
#     everything republished without any command: the service answers
#     again, `lbctl save` is what it was, lbctl answers, and
#     lb_control_attaches_total counts the new attach.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init fault_dp_kill
e2e_need_control
e2e_need_tools wrk

ROUNDS=${E2E_FAULT_DP_ROUNDS:-2}
NOTICE=${E2E_FAULT_NOTICE_TIMEOUT:-10}
REATTACH=${E2E_CTL_REATTACH_TIMEOUT:-60}

ctl_wrr_up
ctl_do save >"$E2E_TMP/save0"
pid=$CTL_PID

# attaches: lb_control_attaches_total from /metrics ("-" if absent).
attaches() {
	metrics 2>/dev/null |
		awk '$1 == "lb_control_attaches_total" { v = $2 }
		     END { print (v == "" ? "-" : v) }'
}
a0=$(attaches)

for ((r = 1; r <= ROUNDS; r++)); do
	wrk_run "http://$VIP/" 3 1 8 "$E2E_TMP/wrk.$r" >"$E2E_TMP/wrk.$r.sum" &
	wrk_pid=$!
	sleep 1.5
	gone0=$(grep -c "went away" "$CTL_LOG" || true)
	kill -KILL "$DP_PID"
	wait "$DP_PID" 2>/dev/null || true
	DP_PID=
	e2e_log "round $r: lb-dataplane SIGKILLed under wrk load"
	t0=$SECONDS
	noticed=no
	while [ $((SECONDS - t0)) -lt "$NOTICE" ]; do
		if [ "$(grep -c "went away" "$CTL_LOG" || true)" -gt "$gone0" ]; then
			noticed=yes
			break
		fi
		sleep 0.2
	done
	wait "$wrk_pid" || true
	e2e_log "round $r: lb-control noticed: $noticed after" \
		"$((SECONDS - t0)) s: $(grep "went away" "$CTL_LOG" | tail -n 1)"
	check "round $r: lb-control reports that the dataplane went away" \
		[ "$noticed" = yes ]
	check "round $r: lb-control is still running (pid $pid)" kill -0 "$pid"

	dp_start_shared "$conf"
	read -r ok secs <<<"$(vip_wait "$REATTACH")" || true
	e2e_log "round $r: the service answers through the new dataplane" \
		"after $secs s: $ok"
	check "round $r: everything republished to the new dataplane" \
		[ "$ok" = yes ]
	ctl save >"$E2E_TMP/save.$r" 2>&1 || true
	check "round $r: lbctl save is what it was" \
		diff -u "$E2E_TMP/save0" "$E2E_TMP/save.$r"
	http_seq "http://$VIP/" 20 "$E2E_TMP/seq.$r"
	t=$(http_tally "$E2E_TMP/seq.$r")
	e2e_log "round $r: 20 new connections: $t"
	check "round $r: 20/20 answered, weights kept (be2 ~2x be1)" \
		'[ "$(field ok "$t")" = 20 ] && [ "$(field be2 "$t")" -ge 11 ]'
done
a1=$(attaches)
e2e_log "lb_control_attaches_total: $a0 -> $a1"
check "lb_control_attaches_total counts the $ROUNDS new attaches ($a0 -> $a1)" \
	'[ "$a0" != - ] && [ "$a1" = $((a0 + ROUNDS)) ]'

ctl_stop
check "lb-control exits 0 on SIGTERM (status $CTL_RC)" [ "$CTL_RC" = 0 ]
dp_stop
e2e_finish
