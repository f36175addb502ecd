#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The SYN proxy under a SYN flood. Spoofed SYNs from 240 sources of the
# client's /24 (addresses nobody holds), 262,144 4-tuples in turn, as
# fast as this host sends them (nettool.py synflood, at most
# E2E_SYNP_FLOOD_COUNT frames in E2E_SYNP_FLOOD_SECONDS, 4,000,000 and
# 8 s), while wrk keeps 8 keep-alive connections busy
# and a client opens a new connection for every request. The same run
# twice on one service over two nginx backends, set through lbctl:
#   - `synproxy off`: the flood takes a flow entry and a SNAT port per
#     SYN (flows_created grows far beyond the clients' connections);
#   - `synproxy on`: it takes none (flows_created grows by the clients'
#     connections at most, no snat_ports_full, no flows_refused), every
#     SYN is answered with a cookie (synp_cookies), no client
#     connection is refused or reset, and each answered new connection
#     went through a backend handshake of the proxy (synp_handshakes).
#     Handshakes tried again on the other backend (syn_retries) are
#     logged, not judged: on a host this loaded a backend's SYN-ACK can
#     come later than the SYN timeout. The packet test test_synproxy and
#     e2e proxy_protocol hold the proxy to taking every SYN-ACK.
# The success rate and the p99 latency of both runs are logged side by
# side; neither is judged (timing belongs to benchmarks).
# Then `synproxy auto` with a low SYN rate threshold and a calm of 2 s:
# the flood turns it on as soon as a second's SYNs reach the rate, before it
# takes the SNAT ports (synp_auto_on, "synproxy on" in the dataplane's
# log) and, once it is over, it turns off again (synp_auto_off,
# "synproxy off"), after which new connections are answered.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init synproxy_flood
e2e_need_control
e2e_need_tools wrk

FLOOD=${E2E_SYNP_FLOOD_SECONDS:-8}
FCOUNT=${E2E_SYNP_FLOOD_COUNT:-4000000}
# As many 4-tuples as a worker's flow table holds by default: without
# the proxy the flood uses up the SNAT ports towards both backends
# (2 x 64,512), and new flows are refused (snat_ports_full) until some
# of its half-open flows expire.
TUPLES=${E2E_SYNP_FLOOD_TUPLES:-262144}
CONNS=8
# The flood's half-open flows of the `off` run last timeout-syn-recv
# (30 s) after the backend's last SYN-ACK retransmission.
DRAIN=${E2E_SYNP_DRAIN_TIMEOUT:-150}
AUTO=${E2E_SYNP_AUTO_TIMEOUT:-60}
SVC=(tcp "$VIP:80")
CLI=$(cli_addr 1)

# A wrr service over two nginx backends (weights 1 and 2), through
# lbctl; its SYN proxy is off until the runs below set it.
ctl_wrr_up
read -r _ secs <<<"$(vip_wait 30)" || die "the service does not answer"
e2e_log "the service answers (after $secs s)"

s() { jget "$E2E_TMP/$1" /lb/stats "${@:2}"; }
# d TAG KEY...: growth of /lb/stats KEY over TAG's run (TAG.0 to TAG.2).
d() {
	local a b
	a=$(s "$1.0" "${@:2}")
	b=$(s "$1.2" "${@:2}")
	if [ "$a" = - ] || [ "$b" = - ]; then echo -; else echo $((b - a)); fi
}
# pd TAG KEY: growth of port 0's KEY over TAG's flood (TAG.p0 to TAG.p1).
pd() {
	echo $(($(jget "$E2E_TMP/$1.p1" /ethdev/stats "$2") -
		$(jget "$E2E_TMP/$1.p0" /ethdev/stats "$2")))
}
# bd TAG I KEY: growth of backend I's KEY over TAG's run.
bd() {
	echo $(($(be_field "$E2E_TMP/$1.be1" "${SVC[*]}" "$2" "$3") -
		$(be_field "$E2E_TMP/$1.be0" "${SVC[*]}" "$2" "$3")))
}
# ip_out: IP packets the client namespace's own stack sent, which the
# flood's frames (written below IP) are not.
ip_out() {
	ip netns exec "$NS_CLI" awk '/^Ip:/ {
		if (!c) {
			for (i = 2; i <= NF; i++)
				if ($i == "OutRequests")
					c = i
		} else
			print $c
	}' /proc/net/snmp
}
# num V: V, or -1 when the counter was missing, so that a check reads it.
num() { if [ "$1" = - ]; then echo -1; else echo "$1"; fi; }

# until_stat SECS KEY... OP N: polls /lb/stats every half second until
# KEY (-k path) compares with N by OP (-ge, -le); prints the last value
# and the seconds it took, fails when SECS pass first.
until_stat() {
	local secs=$1 keys=() v t0=$SECONDS
	shift
	while [ $# -gt 2 ]; do
		keys+=(-k "$1")
		shift
	done
	while :; do
		v=$(tel /lb/stats "${keys[@]}" 2>/dev/null) || v=-
		if [ "$v" != - ] && { { [ "$1" = -ge ] && [ "$v" -ge "$2" ]; } ||
			{ [ "$1" = -le ] && [ "$v" -le "$2" ]; }; }; then
			echo "$v $((SECONDS - t0))"
			return 0
		fi
		if [ $((SECONDS - t0)) -ge "$secs" ]; then
			echo "$v $secs"
			return 1
		fi
		sleep 0.5
	done
}

# table_set OPTIONS...: `service set` on the service, then waits until
# every worker runs the table lb-control published by the time it
# answered (none when nothing changed).
table_set() {
	local r
	ctl_do service set "${SVC[@]}" "$@" >/dev/null
	r=$(wait_output 30 yes "$PY" -B -c '
import sys
sys.path.insert(0, sys.argv[1])
from lbtel import query
g = query("/lb/stats", prefix=sys.argv[2])["conf_gen"]
w = query("/lb/workers", prefix=sys.argv[2])
ws = [v["conf_gen"] for v in w.values()] if isinstance(w, dict) else []
print("yes" if ws and min(ws) >= g else "no")
' "$E2E_DIR" "$DP_PREFIX") ||
		die "the workers did not take up the table of 'service set" \
			"${SVC[*]} $*' within 30 s ($r)"
}

# wrk_sum FILE: "requests=N connect=N read=N write=N timeout=N non2xx=N
# p99_ms=X" of a wrk --latency output.
wrk_sum() {
	awk '
function ms(v) {
	if (v ~ /us$/) return v / 1000
	if (v ~ /ms$/) return v + 0
	if (v ~ /s$/) return v * 1000
	return v + 0
}
/requests in/ { req = $1 }
/Socket errors:/ {
	gsub(",", "")
	c = $4; r = $6; w = $8; t = $10
}
/Non-2xx or 3xx responses:/ { non = $NF }
$1 == "99%" { p99 = ms($2) }
END {
	printf "requests=%d connect=%d read=%d write=%d timeout=%d non2xx=%d p99_ms=%s\n",
		req, c, r, w, t, non, p99 == "" ? "-" : sprintf("%.1f", p99)
}' "$1"
}

# flood TAG: the bounded flood from the client's veth to the VIP, in the
# background; its pid in FLOOD_PID, its summary in TAG.flood.
flood() {
	ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/nettool.py" synflood \
		--iface "$IF_CLI" --dst-mac "$(if_mac "$NS_LB" "$IF_P0")" \
		--dst "$VIP:80" --net "$CLI_NET.0" --tuples "$TUPLES" \
		--seconds "$FLOOD" --count "$FCOUNT" >"$E2E_TMP/$1.flood" 2>&1 &
	FLOOD_PID=$!
}

# run MODE: the flood under `synproxy MODE` while wrk and the new
# connections run; stats before (MODE.0), after the flood (MODE.1), after
# the clients (MODE.2); port 0 over the flood (MODE.p0, MODE.p1).
run() {
	local m=$1 wpid hpid f
	table_set synproxy "$m"
	tel_save /lb/stats "$E2E_TMP/$m.0"
	tel_save /lb/backends "$E2E_TMP/$m.be0"
	ip netns exec "$NS_CLI" wrk -t 1 -c "$CONNS" -d "$((FLOOD + 4))s" \
		--latency --timeout 5s "http://$VIP/" >"$E2E_TMP/$m.wrk" 2>&1 &
	wpid=$!
	ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/nettool.py" httpconn \
		--target "$VIP:80" --src "$CLI" --seconds "$((FLOOD + 3))" \
		--timeout 10 >"$E2E_TMP/$m.conns" 2>&1 &
	hpid=$!
	# wrk's connections are up before the flood: they are the flows
	# the table holds for the clients.
	until_stat 10 flows_active -ge "$CONNS" >/dev/null || true
	tel_save /ethdev/stats,0 "$E2E_TMP/$m.p0"
	ip_out >"$E2E_TMP/$m.ip0"
	flood "$m"
	PEAK=0
	while kill -0 "$FLOOD_PID" 2>/dev/null; do
		f=$(tel /lb/stats -k flows_active 2>/dev/null || echo 0)
		[ "$f" -le "$PEAK" ] || PEAK=$f
		sleep 0.5
	done
	wait "$FLOOD_PID" || die "the flood failed: $(cat "$E2E_TMP/$m.flood")"
	tel_save /lb/stats "$E2E_TMP/$m.1"
	tel_save /ethdev/stats,0 "$E2E_TMP/$m.p1"
	ip_out >"$E2E_TMP/$m.ip1"
	wait "$wpid" || true
	wait "$hpid" || true
	tel_save /lb/stats "$E2E_TMP/$m.2"

	SENT=$(jget "$E2E_TMP/$m.flood" sent)
	WRK=$(wrk_sum "$E2E_TMP/$m.wrk")
	CONNS_R=$(cat "$E2E_TMP/$m.conns")
	e2e_log "synproxy $m: flood $(cat "$E2E_TMP/$m.flood"); port 0" \
		"ipackets +$(pd "$m" ipackets), imissed +$(pd "$m" imissed)"
	e2e_log "  flows_created +$(d "$m" flows_created), peak flows_active" \
		"$PEAK, flows_refused +$(d "$m" flows_refused), snat_ports_full" \
		"+$(d "$m" drop snat_ports_full), flow_table_full" \
		"+$(d "$m" drop flow_table_full), neigh_unresolved" \
		"+$(d "$m" drop neigh_unresolved)"
	e2e_log "  synp_cookies +$(d "$m" synp_cookies), synp_acks" \
		"+$(d "$m" synp_acks), synp_acks_bad +$(d "$m" synp_acks_bad)," \
		"synp_acks_expired +$(d "$m" synp_acks_expired)," \
		"synp_handshakes +$(d "$m" synp_handshakes), synp_held" \
		"+$(d "$m" synp_held), synp_held_dropped" \
		"+$(d "$m" synp_held_dropped)"
	tel_save /lb/backends "$E2E_TMP/$m.be1"
	e2e_log "  syn_retries +$(d "$m" syn_retries), rst_no_flow" \
		"+$(d "$m" rst_no_flow), no_flow +$(d "$m" drop no_flow)," \
		"backend errors: be1 +$(bd "$m" 1 errors), be2 +$(bd "$m" 2 errors)"
	e2e_log "  wrk ($CONNS keep-alive connections): $WRK"
	e2e_log "  new connections: $CONNS_R"
}

# summary TAG: the success rate and the p99 latency of the new
# connections and of wrk's requests, one line of the table below.
summary() {
	local w c
	w=$(wrk_sum "$E2E_TMP/$1.wrk")
	c=$(cat "$E2E_TMP/$1.conns")
	"$PY" -c '
import json, sys
c = json.loads(sys.argv[1])
w = dict(kv.split("=") for kv in sys.argv[2].split())
req = int(w["requests"])
err = sum(int(w[k]) for k in ("connect", "read", "write", "timeout"))
ok = req - int(w["non2xx"])
print("%-5s new connections %5d/%-5d %6.2f%% p99 %8s ms | "
      "wrk requests %7d/%-7d %6.2f%% p99 %8s ms" % (
          sys.argv[3], c["ok"], c["attempts"],
          100.0 * c["ok"] / max(c["attempts"], 1), c["p99_ms"],
          ok, req + err, 100.0 * ok / max(req + err, 1), w["p99_ms"]))
' "$c" "$w" "$1"
}

# ---- synproxy off, then on --------------------------------------------------

run off
off_flood=$(($(num "$(d off flows_created)") - CONNS -
	$(jget "$E2E_TMP/off.conns" attempts)))
check "without the proxy the flood took flow entries ($off_flood more than the clients' connections)" \
	[ "$off_flood" -gt 1000 ]

# The flood's flows of this run hold SNAT ports until they expire.
r=$(until_stat "$DRAIN" flows_active -le "$CONNS") ||
	die "the flows of the first flood did not expire within $DRAIN s" \
		"(flows_active $r)"
e2e_log "the first flood's flows expired (flows_active $r s)"

run on
on_att=$(jget "$E2E_TMP/on.conns" attempts)
on_ok=$(jget "$E2E_TMP/on.conns" ok)
on_ref=$(jget "$E2E_TMP/on.conns" refused)
werr=$(wrk_sum "$E2E_TMP/on.wrk")
# wrk first opens and closes one connection to check the address; a
# connection of wrk that ended in an error is opened again: one flow
# more each.
wrk_conns=$((CONNS + 1 + $(field connect "$werr") + $(field read "$werr") +
	$(field write "$werr") + $(field timeout "$werr")))
legit=$((wrk_conns + on_att))
check "with the proxy the flood took no flow entry (flows_created +$(d on flows_created) <= $legit client connections)" \
	'[ "$(d on flows_created)" != - ] &&
	 [ "$(d on flows_created)" -le "$legit" ]'
check "and no SNAT port (snat_ports_full +$(d on drop snat_ports_full), flows_refused +$(d on flows_refused))" \
	'[ "$(d on drop snat_ports_full)" = 0 ] && [ "$(d on flows_refused)" = 0 ]'
# The flood's SYNs that reached the port: its frames less the clients'
# (the IP packets of the client's stack over the same time); every one
# gets a cookie (a tenth of slack for the ARP frames and the sources
# that are our own addresses), and no more cookies go out than SYNs
# came in.
flood_rx=$(($(pd on ipackets) - $(cat "$E2E_TMP/on.ip1") +
	$(cat "$E2E_TMP/on.ip0")))
check "the flood's SYNs were answered with cookies (synp_cookies +$(d on synp_cookies); $SENT sent, at least $flood_rx reached port 0)" \
	'[ "$flood_rx" -gt 100000 ] &&
	 [ "$(num "$(d on synp_cookies)")" -ge $((flood_rx * 9 / 10)) ] &&
	 [ "$(num "$(d on synp_cookies)")" -le $((SENT + legit * 4)) ]'
check "no client connection was refused or reset (new connections: $on_ref refused; wrk: $werr)" \
	'[ "$on_ref" = 0 ] && [ "$(field connect "$werr")" = 0 ] &&
	 [ "$(field read "$werr")" = 0 ] && [ "$(field write "$werr")" = 0 ]'
check "the new connections were answered through the proxy's backend handshakes ($on_ok answered, synp_handshakes +$(d on synp_handshakes))" \
	'[ "$on_ok" -gt 0 ] &&
	 [ "$(num "$(d on synp_handshakes)")" -ge "$on_ok" ]'
e2e_log "backend handshakes of the proxy tried again on the other backend:" \
	"syn_retries +$(d on syn_retries)"

e2e_log "success rate and p99 latency under the flood, off and on:"
summary off | sed 's/^/    /'
summary on | sed 's/^/    /'

ctl_do save >"$E2E_TMP/saved"
check "the state keeps the option (save: synproxy on)" \
	'grep -q "synproxy on" "$E2E_TMP/saved"'
check "lbctl stats shows the proxy's counters" \
	'ctl stats | has -w synp_cookies'
check "/metrics has the proxy's counters" 'metrics | has lb_synproxy_cookies'

# ---- synproxy auto ----------------------------------------------------------

table_set synproxy auto synproxy-syn-rate 2000 synproxy-half-open 500 \
	synproxy-calm 2s
tel_save /lb/stats "$E2E_TMP/auto.0"
on0=$(num "$(s auto.0 synp_auto_on)")
off0=$(num "$(s auto.0 synp_auto_off)")
flood auto
r_on=$(until_stat $((FLOOD + AUTO)) synp_auto_on -ge $((on0 + 1))) || true
wait "$FLOOD_PID" || die "the flood failed: $(cat "$E2E_TMP/auto.flood")"
tel_save /lb/stats "$E2E_TMP/auto.1"
e2e_log "synproxy auto: flood $(cat "$E2E_TMP/auto.flood");" \
	"synp_auto_on $on0 -> $r_on s"
on1=$(num "$(s auto.1 synp_auto_on)")
check "auto turned the proxy on under the flood (synp_auto_on $on0 -> $on1)" \
	[ "$on1" -gt "$on0" ]
# Each worker that turned it on turns it off, once calm.
r_off=$(until_stat "$AUTO" synp_auto_off -ge $((off0 + on1 - on0))) || true
tel_save /lb/stats "$E2E_TMP/auto.2"
e2e_log "after the flood: synp_auto_off $off0 -> $r_off s;" \
	"synp_cookies +$(d auto synp_cookies), flows_created" \
	"+$(d auto flows_created)"
check "auto turned it off after the flood (synp_auto_off $off0 -> $(s auto.2 synp_auto_off), on $on1)" \
	'[ "$(num "$(s auto.2 synp_auto_off)")" -ge $((off0 + on1 - on0)) ] &&
	 [ "$on1" -gt "$on0" ]'
check "while on, it answered the flood with cookies (synp_cookies +$(d auto synp_cookies))" \
	[ "$(num "$(d auto synp_cookies)")" -gt 0 ]
# It turns on the moment a second's SYNs reach the rate (2,000), not at
# the end of that second: the flood gets a few thousand flows, not the
# SNAT ports of both backends, and the next check's connection finds a
# port.
check "auto turned on before the flood took the SNAT ports (flows_created +$(d auto flows_created), snat_ports_full +$(d auto drop snat_ports_full))" \
	'[ "$(num "$(d auto flows_created)")" -le 10000 ] &&
	 [ "$(d auto drop snat_ports_full)" = 0 ]'
e2e_log "the dataplane's log on the switches:"
grep -E "synproxy (on|off)" "$DP_LOG" | tail -n 6 | sed 's/^/    /' || true
check "the dataplane logged the switch on" \
	'grep -q "synproxy on" "$DP_LOG"'
check "and the switch off" 'grep -q "synproxy off" "$DP_LOG"'

r=$(ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/nettool.py" httpconn \
	--target "$VIP:80" --src "$CLI" --seconds 2 --timeout 10)
e2e_log "new connections after the flood: $r"
check "new connections are answered after it ($r)" \
	'[ "$(jget /dev/stdin ok <<<"$r")" -gt 0 ] &&
	 [ "$(jget /dev/stdin refused <<<"$r")" = 0 ] &&
	 [ "$(jget /dev/stdin timeout <<<"$r")" = 0 ]'

ctl_stop || true
rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]
e2e_finish
