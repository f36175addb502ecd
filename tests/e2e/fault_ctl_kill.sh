#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# lb-control killed (SIGKILL) at random points while configuration changes
# are applied in a loop, E2E_FAULT_ROUNDS times (12):
#   - a loop sets be2's weight to 2, 3, 4, ... through lbctl, one command
#     at a time, until lb-control dies under it, SIGKILLed 0-0.6 s after
#     the loop started;
#   - the state file is then exactly the configuration of the last
#     acknowledged change or of the one in flight when the kill came
#     (`lbctl save` text with that weight): never torn, never anything
#     else;
#   - lb-control started again shows exactly that configuration
#     (`lbctl save` equals the state file);
#   - new connections and keep-alive requests through the VIP run during
#     the whole test and none fails: forwarding never stopped;
#   - lbctl's flows_total of each backend after the restarts is the
#     dataplane's own count: those counters outlive lb-control.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2086 # $SVC ("tcp VIP:PORT") is two words on purpose
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init fault_ctl_kill
e2e_need_control
e2e_need_tools wrk

SVC="tcp $VIP:80"
BE2=$(be_addr 2):80
ROUNDS=${E2E_FAULT_ROUNDS:-12}

ctl_wrr_up

# expect W: the saved configuration with be2 at weight W (W >= 2).
ctl_do save | grep -v '^#' >"$E2E_TMP/save.tpl"
grep -q "^backend add $SVC $BE2 weight 2\$" "$E2E_TMP/save.tpl" ||
	die "unexpected save text: $(cat "$E2E_TMP/save.tpl")"
expect() {
	sed "s|^backend add $SVC $BE2 weight 2\$|backend add $SVC $BE2 weight $1|" \
		"$E2E_TMP/save.tpl"
}

# Traffic for the whole test: keep-alive wrk and new connections. The
# timeouts (10 s to connect, 15 s in all) leave room for this host's CPUs
# being taken away; a stop of forwarding across a restart lasts longer.
export E2E_SEQ_CONNECT_TIMEOUT=10 E2E_SEQ_MAX_TIME=15
touch "$E2E_TMP/seq.go"
(
	k=0
	while [ -e "$E2E_TMP/seq.go" ]; do
		k=$((k + 1))
		http_seq "http://$VIP/" 5 "$E2E_TMP/seq.$k"
	done
) &
seq_pid=$!
ip netns exec "$NS_CLI" wrk -t 1 -c 4 -d 600s --timeout 10s \
	"http://$VIP/" >"$E2E_TMP/wrk" 2>&1 &
wrk_pid=$!

acked=2 # weight of the last change lbctl saw succeed
w=2
torn=0
shown_bad=0
for ((r = 1; r <= ROUNDS; r++)); do
	log=$E2E_TMP/apply.$r
	: >"$log"
	(
		x=$w
		while :; do
			x=$((x + 1))
			if ctl --timeout 2 backend set $SVC "$BE2" weight "$x" \
				>/dev/null 2>&1; then
				echo "ok $x" >>"$log"
			else
				echo "fail $x" >>"$log"
				break
			fi
		done
	) &
	apply_pid=$!
	sleep "0.$((RANDOM % 6))$((RANDOM % 10))"
	ctl_stop KILL || true
	wait "$apply_pid" || true
	last=$(awk '$1 == "ok" { w = $2 } END { print w }' "$log")
	[ -z "$last" ] || acked=$last
	inflight=$(awk '$1 == "fail" { print $2 }' "$log")
	grep -v '^#' "$CTL_STATE" >"$E2E_TMP/state.$r" || true
	got=none
	if diff -q "$E2E_TMP/state.$r" <(expect "$acked") >/dev/null; then
		got=$acked
	elif [ -n "$inflight" ] &&
		diff -q "$E2E_TMP/state.$r" <(expect "$inflight") >/dev/null; then
		got=$inflight
	fi
	e2e_log "round $r: $(grep -c '^ok' "$log") changes acknowledged," \
		"last $acked, in flight ${inflight:-none}; state file has $got"
	if [ "$got" = none ]; then
		torn=$((torn + 1))
		sed 's/^/    state: /' "$E2E_TMP/state.$r"
	fi
	ctl_start
	ctl save | grep -v '^#' >"$E2E_TMP/shown.$r" || true
	if ! diff -q "$E2E_TMP/shown.$r" "$E2E_TMP/state.$r" >/dev/null; then
		shown_bad=$((shown_bad + 1))
		diff -u "$E2E_TMP/state.$r" "$E2E_TMP/shown.$r" | sed 's/^/    /'
	fi
	[ "$got" = none ] || acked=$got
	w=$acked
done

rm -f "$E2E_TMP/seq.go"
wait "$seq_pid" || true
kill -INT "$wrk_pid" 2>/dev/null || true
wait "$wrk_pid" || true
cat "$E2E_TMP"/seq.[0-9]* >"$E2E_TMP/seq"
t=$(http_tally "$E2E_TMP/seq")
e2e_log "new connections during the test: $t"
[ "$(field fail "$t")" = 0 ] || http_failures "$E2E_TMP/seq"
e2e_log "wrk: $(grep -E 'requests in|Socket errors|Non-2xx' "$E2E_TMP/wrk" |
	tr -s ' \n' ' ')"

check "state file after each of $ROUNDS kills: old or new configuration ($torn other)" \
	[ "$torn" = 0 ]
check "restarted lb-control shows exactly the state file ($shown_bad differ)" \
	[ "$shown_bad" = 0 ]
n=$(wc -l <"$E2E_TMP/seq")
check "every new connection answered during the kills ($(field ok "$t")/$n)" \
	'[ "$n" -gt 0 ] && [ "$(field ok "$t")" = "$n" ]'
check "keep-alive requests answered, no socket error, no non-2xx" \
	'grep -q "requests in" "$E2E_TMP/wrk" &&
	 ! grep -q "Socket errors" "$E2E_TMP/wrk" &&
	 ! grep -q "Non-2xx" "$E2E_TMP/wrk"'

# lb-control reads the flow counts of backends in the dataplane's shared
# memory, where they outlive lb-control: after every restart it shows
# all the flows since the backend was added, as the dataplane does.
ctl_json "$E2E_TMP/list.json" backend list
tel_save /lb/backends "$E2E_TMP/tel.json"
for i in 1 2; do
	lc=$(jq_get "$E2E_TMP/list.json" "sum(x['flows_total'] for x in
		d['backends'] if x['backend'] == '$(be_addr "$i"):80')")
	dp=$(be_field "$E2E_TMP/tel.json" "$SVC" "$i" flows_total)
	# be1 keeps weight 1 while be2's climbs into the hundreds, so it may
	# get no new flow at all: only be2's count must be above 0.
	check "be$i: flows_total after $ROUNDS restarts of lb-control is the dataplane's ($lc = $dp)" \
		'[ "$lc" = "$dp" ] && { [ "$i" = 1 ] || [ "$lc" -gt 0 ]; }'
done

ctl_stop
dp_stop
e2e_finish
