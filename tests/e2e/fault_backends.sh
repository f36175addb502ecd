#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Backends that misbehave, behind one `http` service (rr), while four
# clients open new connections for E2E_FAULT_SECONDS (20) seconds:
#   be1  nginx, healthy;
#   be2  lb-instance that flaps: up one second, down the next (its
#        kernel then refuses the SYN with a RST);
#   be3  lb-instance --stall: accepts and reads, never answers;
#   be4  reads the request, then resets the connection (RST);
#   be5  answers 200 one byte per TCP segment.
# Then:
#   - memory stays bounded: flows, HTTP follower entries, kept SYN copies
#     and per-backend requests in flight all return to 0, and the packet
#     buffers in use to their idle value, once the connections are gone
#     (within the DPVS close timeouts);
#   - the counters are honest: each backend's http_responses equals the
#     answers the clients got from it (be1, be5 every one of them, framed
#     across 1-byte segments), be3 and be4 count none, and no request
#     answered by another backend was attributed to them.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init fault_backends
e2e_need_dataplane
e2e_need_tools curl
INSTANCE=${LB_INSTANCE:-$LB_BUILD_DIR/tools/instance/lb-instance}
[ -x "$INSTANCE" ] || e2e_skip "lb-instance is not built ($INSTANCE)"

SECS=${E2E_FAULT_SECONDS:-20}
DRAIN=${E2E_FAULT_DRAIN_TIMEOUT:-40}
SVC=$VIP:80

topo_up 5
be_start 1
inst() {
	local i=$1
	shift
	ip netns exec "$(ns_be "$i")" "$INSTANCE" --listen "$(be_addr "$i"):80" \
		--name "be$i" --drain-ms 0 "$@" >>"$E2E_TMP/inst$i.log" 2>&1 &
	echo $!
}
# be2 flaps until the flag file goes.
touch "$E2E_TMP/flap"
(
	while [ -e "$E2E_TMP/flap" ]; do
		p=$(inst 2)
		sleep 1
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
		sleep 1
	done
) &
flap_pid=$!
inst 3 --stall >/dev/null
wait_listen "$(ns_be 3)" tcp "$(be_addr 3):80" || die "be3 did not start"
for m in 4:rst 5:trickle; do
	i=${m%%:*}
	ip netns exec "$(ns_be "$i")" "$PY" "$E2E_DIR/faultsrv.py" "${m#*:}" \
		"$(be_addr "$i")" 80 "be$i" >"$E2E_TMP/srv$i.log" 2>&1 &
	wait_listen "$(ns_be "$i")" tcp "$(be_addr "$i"):80" ||
		die "be$i did not start"
done

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
echo "service add tcp $SVC sched rr http" >>"$conf"
for i in 1 2 3 4 5; do
	echo "backend add tcp $SVC $(be_addr "$i"):80" >>"$conf"
done
dp_start "$conf"
sleep 1
tel_save /lb/stats "$E2E_TMP/stats0"
mb0=$(jget "$E2E_TMP/stats0" /lb/stats mbufs_in_use)

# Four clients, a new connection per request, 6 s at most each (be3 holds
# them that long; the rest answer within a second on a busy host).
cpids=()
for c in 1 2 3 4; do
	ip netns exec "$NS_CLI" bash -c '
end=$((SECONDS + $1))
while [ $SECONDS -lt "$end" ]; do
	curl -sS -o "$2.body" --max-time 6 -H "Connection: close" \
		-w "%{http_code}\n" "http://$3/" >"$2.code" 2>/dev/null || true
	echo "$(cat "$2.code") $(tr -d "\r\n " 2>/dev/null <"$2.body")" >>"$2"
	rm -f "$2.body"
done' client "$SECS" "$E2E_TMP/cli$c" "$SVC" &
	cpids+=($!)
done
# Peaks while it runs, so that the zeros afterwards mean something.
peak=0 l7peak=0 stallpeak=0
for ((k = 0; k < SECS; k++)); do
	sleep 1
	tel_save /lb/stats "$E2E_TMP/mid"
	tel_save /lb/backends "$E2E_TMP/midb"
	f=$(jget "$E2E_TMP/mid" /lb/stats flows_active)
	l=$(jget "$E2E_TMP/mid" /lb/stats l7_active)
	q=$(be_field "$E2E_TMP/midb" "tcp $SVC" 3 inflight)
	[ "$f" = - ] || [ "$f" -le "$peak" ] || peak=$f
	[ "$l" = - ] || [ "$l" -le "$l7peak" ] || l7peak=$l
	[ "$q" = - ] || [ "$q" -le "$stallpeak" ] || stallpeak=$q
done
wait "${cpids[@]}" || true
rm -f "$E2E_TMP/flap"
wait "$flap_pid" || true
cat "$E2E_TMP"/cli[1-4] >"$E2E_TMP/cli"
got() { awk -v b="be$1" '$1 == 200 && $2 == b { n++ } END { print n + 0 }' \
	"$E2E_TMP/cli"; }
e2e_log "requests: $(wc -l <"$E2E_TMP/cli"); answered 200 by be1 $(got 1)," \
	"be2 $(got 2), be5 $(got 5); other outcomes:" \
	"$(awk '$1 != 200 { n[$1]++ } END { for (k in n) printf "%s=%d ", k, n[k] }' \
		"$E2E_TMP/cli")"
e2e_log "peaks during the run: flows_active $peak, l7_active $l7peak," \
	"be3 (stalled) requests in flight $stallpeak"
check "while it ran, HTTP flows were followed and be3 held requests" \
	'[ "$l7peak" -gt 0 ] && [ "$stallpeak" -gt 0 ]'

# Everything the faults held must be let go.
t0=$SECONDS
while [ $((SECONDS - t0)) -lt "$DRAIN" ]; do
	tel_save /lb/stats "$E2E_TMP/stats1"
	[ "$(jget "$E2E_TMP/stats1" /lb/stats flows_active)" = 0 ] &&
		[ "$(jget "$E2E_TMP/stats1" /lb/stats l7_active)" = 0 ] && break
	sleep 1
done
tel_save /lb/stats "$E2E_TMP/stats1"
tel_save /lb/backends "$E2E_TMP/b1"
s() { jget "$E2E_TMP/stats1" /lb/stats "$1"; }
e2e_log "after $((SECONDS - t0)) s: flows_active $(s flows_active)," \
	"l7_active $(s l7_active), syn_holds $(s syn_holds), mbufs_in_use" \
	"$mb0 -> $(s mbufs_in_use), l7_flows $(s l7_flows)," \
	"l7_stopped $(s l7_stopped), l7_pool_full $(s l7_pool_full)," \
	"syn_retries $(s syn_retries), rst_sent $(s rst_sent)"
check "flows return to 0" [ "$(s flows_active)" = 0 ]
check "HTTP follower entries return to 0" [ "$(s l7_active)" = 0 ]
check "kept SYN copies return to 0" [ "$(s syn_holds)" = 0 ]
check "packet buffers in use return to their idle value ($mb0 -> $(s mbufs_in_use))" \
	'[ "$(s mbufs_in_use)" -le $((mb0 + 64)) ]'
check "the HTTP flows were followed (l7_flows > 0, none refused)" \
	'[ "$(s l7_flows)" -gt 0 ] && [ "$(s l7_pool_full)" = 0 ]'
for i in 1 2 3 4 5; do
	r=$(be_field "$E2E_TMP/b1" "tcp $SVC" "$i" http_responses)
	fl=$(be_field "$E2E_TMP/b1" "tcp $SVC" "$i" inflight)
	e2e_log "be$i: http_responses $r, inflight $fl," \
		"flows_total $(be_field "$E2E_TMP/b1" "tcp $SVC" "$i" flows_total)"
	check "be$i: no request left in flight ($fl)" [ "$fl" = 0 ]
	case $i in
	1 | 5)
		check "be$i: http_responses ($r) == answers clients got from it ($(got "$i")) > 0" \
			'[ "$r" = "$(got $i)" ] && [ "$r" -gt 0 ]'
		;;
	2)
		# A flap can cut an answer the dataplane saw on its way.
		check "be2: http_responses ($r) >= answers clients got from it ($(got 2))" \
			'[ "$r" -ge "$(got 2)" ]'
		;;
	*)
		check "be$i: answers nothing and counts no response ($r)" \
			'[ "$r" = 0 ] && [ "$(got $i)" = 0 ]'
		;;
	esac
done

dp_stop
check "lb-dataplane exits 0 on SIGTERM (status $DP_RC)" [ "$DP_RC" = 0 ]
e2e_finish
