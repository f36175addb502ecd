#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# One client sends UDP datagrams from every source port it has
# (1024-65535, round and round) to a backend that never answers them,
# far faster than a port would free at timeout-udp's 5 minutes, while a
# second client address keeps asking the same backend (same address and
# port, so the same SNAT ports) for answers, each datagram from a new
# source port:
#   - with timeout-udp-unreplied 1s the flood makes more flows than the
#     backend has SNAT ports (64,512), none is refused (no
#     snat_ports_full, no flows_refused), the flows never reach that
#     many at once, and udp_unreplied counts every flood flow once it
#     expired;
#   - the other client is answered throughout;
#   - the same flood at a service whose unanswered flows live 5 minutes
#     (timeout-udp-unreplied 5m) does use up that backend's ports
#     (snat_ports_full grows): the first part is the timeout's doing.
# The flood's pace is bounded (E2E_UDPF_PPS, 15,000/s, for at most
# E2E_UDPF_SECONDS, 10 s; the second one until the ports ran out, 30 s
# at most); the dataplane's source budget (10,000 new flows/s and
# 20,000 at once, the default) bounds the flows it makes.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init udp_port_flood
e2e_need_dataplane

PORT=9000  # timeout-udp-unreplied 1s
LONG=9001  # timeout-udp-unreplied 5m
PPS=${E2E_UDPF_PPS:-15000}
SECS=${E2E_UDPF_SECONDS:-10}
SNAT_PORTS=64512 # 1024-65535 of the one SNAT address, per backend
FLOODER=$(cli_addr 1)
CLIENT=$(cli_addr 2)

topo_up 1 2
# The backend answers only the client's datagrams ("probe-..."), never
# the flood's ("flood").
be_udp_start 1 "$PORT" probe-
be_udp_start 1 "$LONG" probe-

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add udp $VIP:$PORT sched rr timeout-udp-unreplied 1s
backend add udp $VIP:$PORT $(be_addr 1):$PORT
service add udp $VIP:$LONG sched rr timeout-udp-unreplied 5m
backend add udp $VIP:$LONG $(be_addr 1):$LONG
EOF
dp_start "$conf"

# probe VPORT N BASE TIMEOUT: udp_probe from the second client address.
probe() {
	ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/nettool.py" udp-probe \
		--target "$VIP:$1" --src "$CLIENT" --count "$2" \
		--base-port "$3" --timeout "$4"
}

# Warm-up, not counted: the dataplane resolves the backend.
for p in "$PORT" "$LONG"; do
	w=$(probe "$p" 2 19000 3) || true
	e2e_log "warm-up to $VIP:$p: $w"
done

s() { jget "$E2E_TMP/$1" /lb/stats "${@:2}"; }
d() { echo $(($(s "$2" "${@:3}") - $(s "$1" "${@:3}"))); }
# pd TAG KEY: growth of port 0's KEY over TAG's phase.
pd() {
	echo $(($(jget "$E2E_TMP/$1.p1" /ethdev/stats "$2") -
		$(jget "$E2E_TMP/$1.p0" /ethdev/stats "$2")))
}

# flood_phase VPORT TAG BASE PORTS SECONDS [until-full]: the flood from
# source ports PORTS to VIP:VPORT for SECONDS and, until it ends, rounds
# of 10 datagrams of the client, each from a new port from BASE on;
# with until-full, the flood stops after the round that saw the first
# snat_ports_full, and the client waits 0.3 s for an answer instead of
# 1 s (a round whose datagrams are refused lasts 10 timeouts). Stats in TAG.0 (before) and TAG.1 (after), the peak
# of flows_active in PEAK, the client's tally in SENT and ANSWERED.
flood_phase() {
	local vport=$1 tag=$2 base=$3 fpid f r full full0 stopped='' rc=0 wait=1
	[ "${6:-}" != until-full ] || wait=0.3
	tel_save /lb/stats "$E2E_TMP/$tag.0"
	tel_save /ethdev/stats,0 "$E2E_TMP/$tag.p0"
	full0=$(s "$tag.0" drop snat_ports_full)
	ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/nettool.py" udpflood \
		--iface "$IF_CLI" --dst-mac "$(if_mac "$NS_LB" "$IF_P0")" \
		--src "$FLOODER" --dst "$VIP:$vport" --ports "$4" \
		--count $((PPS * $5)) --seconds "$5" --pps "$PPS" \
		>"$E2E_TMP/$tag.flood" 2>&1 &
	fpid=$!
	: >"$E2E_TMP/$tag.client"
	PEAK=0
	while kill -0 "$fpid" 2>/dev/null; do
		r=$(probe "$vport" 10 "$base" "$wait") || true
		echo "$r" >>"$E2E_TMP/$tag.client"
		base=$((base + 10))
		# flows_active and snat_ports_full after each round, for the
		# log when ports were refused.
		tel_save /lb/stats "$E2E_TMP/$tag.now"
		f=$(s "$tag.now" flows_active)
		full=$(s "$tag.now" drop snat_ports_full)
		echo "$(date +%T.%N | cut -c1-12) flows_active $f" \
			"snat_ports_full $full" >>"$E2E_TMP/$tag.samples"
		[ "$f" = - ] || [ "$f" -le "$PEAK" ] || PEAK=$f
		[ "${6:-}" = until-full ] || continue
		if [ -z "$stopped" ] && [ "$full" != - ] &&
			[ "$full" -gt "$full0" ]; then
			stopped=1
			kill -TERM "$fpid" 2>/dev/null || true
		fi
	done
	wait "$fpid" || rc=$?
	[ "$rc" = 0 ] || { [ "$rc" = 143 ] && [ -n "$stopped" ]; } ||
		die "the flood to $VIP:$vport failed: $(cat "$E2E_TMP/$tag.flood")"
	[ -s "$E2E_TMP/$tag.flood" ] ||
		echo "stopped once the ports ran out" >"$E2E_TMP/$tag.flood"
	tel_save /lb/stats "$E2E_TMP/$tag.1"
	tel_save /ethdev/stats,0 "$E2E_TMP/$tag.p1"
	read -r SENT ANSWERED <<<"$("$PY" -c '
import json, sys
s = a = 0
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    s += r["sent"]
    a += r["answered"]
print(s, a)' "$E2E_TMP/$tag.client")"
	e2e_log "flood to $VIP:$vport: $(cat "$E2E_TMP/$tag.flood");" \
		"port 0 ipackets +$(pd "$tag" ipackets), imissed" \
		"+$(pd "$tag" imissed)"
	e2e_log "  flows_created +$(d "$tag.0" "$tag.1" flows_created)," \
		"flows_refused +$(d "$tag.0" "$tag.1" flows_refused)," \
		"snat_ports_full +$(d "$tag.0" "$tag.1" drop snat_ports_full)," \
		"src_budget_dropped +$(d "$tag.0" "$tag.1" src_budget_dropped)," \
		"udp_unreplied +$(d "$tag.0" "$tag.1" udp_unreplied)," \
		"peak flows_active $PEAK"
	e2e_log "  client $CLIENT meanwhile: $ANSWERED of $SENT datagrams" \
		"answered, each from a new port"
}

# ---- timeout-udp-unreplied 1s -----------------------------------------------

flood_phase "$PORT" short 20000 1024-65535 "$SECS"
created=$(d short.0 short.1 flows_created)
flood_flows=$((created - SENT))
check "the flood made more flows than the backend has SNAT ports ($flood_flows > $SNAT_PORTS)" \
	[ "$flood_flows" -gt "$SNAT_PORTS" ]
check "no new flow refused (snat_ports_full +$(d short.0 short.1 drop snat_ports_full), flows_refused +$(d short.0 short.1 flows_refused))" \
	'[ "$(d short.0 short.1 drop snat_ports_full)" = 0 ] &&
	 [ "$(d short.0 short.1 flows_refused)" = 0 ]'
[ "$(d short.0 short.1 drop snat_ports_full)" = 0 ] || {
	e2e_log "flows_active and snat_ports_full after each round:"
	sed 's/^/    /' "$E2E_TMP/short.samples"
}
check "the flows never held every port at once (peak flows_active $PEAK < $SNAT_PORTS)" \
	[ "$PEAK" -lt "$SNAT_PORTS" ]
# 90%: a datagram may be lost to a full receive ring of a busy host; a
# backend without SNAT ports would answer none.
check "the other client was answered throughout ($ANSWERED of $SENT)" \
	'[ "$SENT" -ge 10 ] && [ $((ANSWERED * 10)) -ge $((SENT * 9)) ]'

# Every flood flow expires unanswered: a bounded poll, not a sleep.
u0=$(s short.0 udp_unreplied)
r=$(wait_output 30 yes bash -c '
u=$("$0" "$1/lbtel.py" --prefix "$2" /lb/stats -k udp_unreplied)
[ $((u - $3)) -ge "$4" ] && echo yes || echo "no $u"' \
	"$PY" "$E2E_DIR" "$DP_PREFIX" "$u0" "$flood_flows") || true
tel_save /lb/stats "$E2E_TMP/short.2"
e2e_log "udp_unreplied +$(d short.0 short.2 udp_unreplied) after the flood" \
	"($r s), flows_active $(s short.2 flows_active)"
check "timeout-udp-unreplied reclaimed every flood flow (udp_unreplied +$(d short.0 short.2 udp_unreplied) >= $flood_flows)" \
	[ "$(d short.0 short.2 udp_unreplied)" -ge "$flood_flows" ]

# ---- timeout-udp-unreplied 5m: the same flood uses the ports up -------------

# From all 65,535 source ports, more than the backend's 64,512 SNAT
# ports, for as long as it takes them to run out (30 s at most).
flood_phase "$LONG" long 40000 1-65535 30 until-full
check "with unanswered flows kept 5 minutes the flood uses up the backend's ports (snat_ports_full +$(d long.0 long.1 drop snat_ports_full))" \
	[ "$(d long.0 long.1 drop snat_ports_full)" -gt 0 ]

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]

e2e_finish
