#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# `lbctl top` in a terminal: tmux runs it in an 80x24 window against a
# wrr service of two nginx backends under wrk; the screen must show the
# service and both backends with their shares of new flows (weights 1
# and 2), fit 80 columns, change its order on `s`, wait out a restart
# of lb-control, and quit on `q`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init lbctl_top
e2e_need_control
command -v tmux >/dev/null || e2e_skip "tmux is not installed"
command -v wrk >/dev/null || e2e_skip "wrk is not installed"
TM=(tmux -L "sl-top-$E2E_TAG" -f /dev/null)
SESSION=top
WRK_PID=
trap 'rc=$?; "${TM[@]}" kill-server 2>/dev/null; (exit $rc); ctl_on_exit' EXIT

screen() { "${TM[@]}" capture-pane -p -J -t "$SESSION" 2>/dev/null; }

# screen_wait PATTERN SECONDS: until the screen shows PATTERN (an ERE).
screen_wait() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		screen | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	return 1
}

ctl_wrr_up
SVC="tcp $VIP:80"
ip netns exec "$NS_CLI" wrk -t1 -c4 -d60s -H "Connection: close" \
	"http://$VIP/" >"$E2E_TMP/wrk.log" 2>&1 &
WRK_PID=$!

"${TM[@]}" new-session -d -s "$SESSION" -x 80 -y 24 \
	"$LBCTL --socket $CTL_SOCK top; echo lbctl-exit=\$?; sleep 30"
# Rates need two reads; shares need new flows between them.
share='[0-9]+\.[0-9]%'
check "the screen shows the service" screen_wait "^$SVC " 10
check "the screen shows be1 with a share" \
	screen_wait "^  $(be_addr 1):80 +active +none +$share" 15
check "the screen shows be2 with a share" \
	screen_wait "^  $(be_addr 2):80 +active +none +$share" 5
screen >"$E2E_TMP/screen1.txt"
sed 's/^/    /' "$E2E_TMP/screen1.txt"
long=$(awk 'length > 80' "$E2E_TMP/screen1.txt" | wc -l)
check "every line fits 80 columns ($long longer)" [ "$long" = 0 ]
# wrr with weights 1 and 2: be2 gets about two thirds of the new flows.
s2=$(awk -v b="$(be_addr 2):80" '$1 == b { sub("%", "", $4); print $4 }' \
	"$E2E_TMP/screen1.txt")
e2e_log "be2's share on screen: $s2%"
check "be2's share is about two thirds ($s2%)" \
	awk -v s="$s2" 'BEGIN { exit !(s > 55 && s < 78) }'

"${TM[@]}" send-keys -t "$SESSION" s
check "s orders by new flows" screen_wait "sort flows" 5
"${TM[@]}" send-keys -t "$SESSION" f
check "f shows one service" screen_wait "^service: $SVC" 5
# lb-control restarts: top says so, and comes back with it.
ctl_stop TERM
check "while lb-control is away, the screen says so" \
	screen_wait "does not answer at $CTL_SOCK" 10
ctl_start
check "with lb-control back, the service again" \
	screen_wait "^  $(be_addr 2):80 +active +none +$share" 15
"${TM[@]}" send-keys -t "$SESSION" q
check "q quits with status 0" screen_wait "^lbctl-exit=0" 5

kill "$WRK_PID" 2>/dev/null || true
wait "$WRK_PID" 2>/dev/null || true
ctl_stop TERM
dp_stop
e2e_finish
