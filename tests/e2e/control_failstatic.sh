#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Fail static: lb-control may die or restart without disturbing traffic,
# and comes back with the configuration it had.
#   - A service configured through lbctl (not the boot configuration)
#     carries wrk (keep-alive connections) and a stream of new
#     connections; lb-control is SIGKILLed in the middle, stays down for
#     a while, and is started again: no request fails, the dataplane
#     keeps forwarding while lb-control is down (telemetry rx grows), and
#     lbctl says it cannot reach lb-control (exit 2) meanwhile.
#   - After the restart lb-control restores its state from the state
#     file: `lbctl save` and `lbctl backend list` (state, weight) are
#     what they were before the kill; the same after a SIGTERM restart.
#   - The dataplane restarted under a running lb-control (with only its
#     boot configuration): lb-control notices, attaches to the new one
#     and publishes its configuration again, so the service answers
#     without anyone typing a command.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2086 # $SVC ("tcp VIP:PORT") is two words on purpose
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init control_failstatic
e2e_need_control
e2e_need_tools wrk

SVC="tcp $VIP:80"
BE1=$(be_addr 1):80
# shellcheck disable=SC2034 # used in check's quoted conditions
BE2=$(be_addr 2):80
DOWN=${E2E_CTL_DOWN:-3} # seconds lb-control stays dead
REATTACH=${E2E_CTL_REATTACH_TIMEOUT:-60}

ctl_wrr_up
ctl_do save >"$E2E_TMP/save0"
sed 's/^/    /' "$E2E_TMP/save0"

# view FILE: what `backend list` says of each backend: address, state,
# weight (the columns that are configuration, not counters).
view() {
	ctl --json backend list >"$1.json"
	"$PY" -B -c '
import json, sys
out = []
def walk(v):
    if isinstance(v, dict):
        a = v.get("backend", v.get("addr"))
        if isinstance(a, str) and "state" in v and "weight" in v:
            out.append("%s %s %s" % (a, v["state"], v["weight"]))
        for x in v.values():
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
walk(json.load(open(sys.argv[1])))
print("\n".join(sorted(out)))
' "$1.json" >"$1"
}
view "$E2E_TMP/view0"
e2e_log "backend list before: $(tr '\n' ';' <"$E2E_TMP/view0")"
check "backend list shows both backends with their weights" \
	'grep -qx "$BE1 active 1" "$E2E_TMP/view0" &&
	 grep -qx "$BE2 active 2" "$E2E_TMP/view0"'

# ---- SIGKILL under traffic --------------------------------------------------

secs=$((DOWN + 8))
wrk_run "http://$VIP/" "$secs" 2 10 "$E2E_TMP/wrk" >"$E2E_TMP/wrk.sum" &
wrk_pid=$!
# New connections, ten at a time, until wrk is done.
(
	k=0
	while [ ! -e "$E2E_TMP/seq.stop" ]; do
		k=$((k + 1))
		http_seq "http://$VIP/" 10 "$E2E_TMP/seq.$k"
	done
	cat "$E2E_TMP"/seq.[0-9]* >"$E2E_TMP/seq"
) &
seq_pid=$!
sleep 2
rx0=$(tel /lb/stats -k rx)
ctl_stop KILL || true
e2e_log "lb-control SIGKILLed (status $CTL_RC) under traffic; down for" \
	"${DOWN}s"
rc=0
err=$(ctl stats 2>&1) || rc=$?
check "while lb-control is down, lbctl exits 2: $err" \
	'[ "$rc" -eq 2 ] && [[ $err == "lbctl: cannot reach lb-control at "* ]]'
sleep "$DOWN"
rx1=$(tel /lb/stats -k rx)
e2e_log "dataplane rx while lb-control was down: $rx0 -> $rx1"
check "the dataplane kept forwarding while lb-control was down" \
	'[ "$rx1" -gt "$rx0" ]'
ctl_start
wait "$wrk_pid" || true
touch "$E2E_TMP/seq.stop"
wait "$seq_pid" || true
w=$(cat "$E2E_TMP/wrk.sum")
t=$(http_tally "$E2E_TMP/seq")
e2e_log "wrk ${secs}s across the kill and restart: $w"
e2e_log "new connections across the kill and restart: $t"
[ "$(field fail "$t")" = 0 ] || http_failures "$E2E_TMP/seq"
check "wrk: requests served, no socket error, no non-2xx" \
	'[ "$(field requests "$w")" -gt 0 ] &&
	 [ "$(field socket_errors "$w")" = 0 ] && [ "$(field non2xx "$w")" = 0 ]'
n=$(wc -l <"$E2E_TMP/seq")
check "every new connection answered ($(field ok "$t")/$n)" \
	'[ "$n" -gt 0 ] && [ "$(field ok "$t")" = "$n" ]'

ctl_do save >"$E2E_TMP/save1"
check "after the restart, lbctl save is what it was" \
	diff -u "$E2E_TMP/save0" "$E2E_TMP/save1"
view "$E2E_TMP/view1"
check "after the restart, backend list (state, weight) is what it was" \
	diff -u "$E2E_TMP/view0" "$E2E_TMP/view1"
check "the state file holds that configuration" \
	diff -u <(grep -v '^#' "$CTL_STATE") <(grep -v '^#' "$E2E_TMP/save0")

# ---- SIGTERM and a change in between ----------------------------------------

ctl_do backend drain $SVC "$BE1" >/dev/null
ctl_do save >"$E2E_TMP/save2"
view "$E2E_TMP/view2"
ctl_stop
check "lb-control exits 0 on SIGTERM (status $CTL_RC)" [ "$CTL_RC" = 0 ]
ctl_start
ctl_do save >"$E2E_TMP/save3"
view "$E2E_TMP/view3"
check "a change made before a SIGTERM restart is kept (save)" \
	diff -u "$E2E_TMP/save2" "$E2E_TMP/save3"
check "... and backend list shows be1 draining" \
	'diff -u "$E2E_TMP/view2" "$E2E_TMP/view3" &&
	 grep -qx "$BE1 draining 1" "$E2E_TMP/view3"'
ctl_do backend undrain $SVC "$BE1" >/dev/null
ctl_do save >"$E2E_TMP/save4"

# ---- the dataplane restarts under lb-control --------------------------------

pid=$CTL_PID
dp_stop || true
sleep 1
e2e_log "lb-dataplane stopped (status $DP_RC); starting it again with" \
	"its boot configuration only"
dp_start_shared "$conf"
read -r ok secs <<<"$(vip_wait "$REATTACH")" || true
e2e_log "service answering again after $secs s: $ok"
check "lb-control republished its configuration to the new dataplane" \
	[ "$ok" = yes ]
check "lb-control is still running (pid $pid)" kill -0 "$pid"
# Started again by itself, it holds no more than it keeps after start-up
# (docs/security.md): the default set (of what the test holds itself),
# no_new_privs, and a bounding set its commands cannot exceed.
caps=$(grep -E '^(CapEff|CapBnd|NoNewPrivs):' "/proc/$pid/status" |
	awk '{printf "%s%s", sep, $2; sep=" "}')
e2e_log "lb-control after executing itself again: CapEff CapBnd NNP = $caps"
bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
kept=$(printf '%016x' $((0x00000000012054e0 & 0x$bnd)))
check "lb-control runs with the capabilities it keeps only" \
	[ "$caps" = "$kept $kept 1" ]
ctl save >"$E2E_TMP/save5" 2>&1 || true
check "lbctl save after the dataplane's restart is what it was" \
	diff -u "$E2E_TMP/save4" "$E2E_TMP/save5"
http_seq "http://$VIP/" 30 "$E2E_TMP/seq2"
t=$(http_tally "$E2E_TMP/seq2")
e2e_log "30 requests through the new dataplane: $t"
check "30/30 answered, wrr 1:2 (be1 10, be2 20, +- ${E2E_RR_TOL:-3})" \
	'[ "$(field ok "$t")" = 30 ] &&
	 [ "$(field be1 "$t")" -ge $((10 - ${E2E_RR_TOL:-3})) ] &&
	 [ "$(field be1 "$t")" -le $((10 + ${E2E_RR_TOL:-3})) ]'

ctl_stop
check "lb-control exits 0 on SIGTERM (status $CTL_RC)" [ "$CTL_RC" = 0 ]
e2e_finish
