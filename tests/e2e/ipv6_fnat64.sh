#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# fnat64 through lb-dataplane: a dual-stack client reaches an IPv6 VIP
# whose nginx backends have IPv4 addresses only (an IPv4-only pool behind
# a dual-stack front). lb-control health-checks the backends over IPv4.
#   - the backends are up by their checks, listed under the IPv6 service
#     with their IPv4 addresses;
#   - 60 sequential connections over IPv6, all answered, spread 20/20/20
#     by rr; the backends saw the IPv4 SNAT address as their peer; the
#     dataplane counted the translations both ways and lowered the
#     backends' SYN-ACK MSS;
#   - 20 UDP datagrams over IPv6, each answered by an IPv4 backend;
#   - wrk over IPv6: no error;
#   - one backend's nginx killed under load: the SYNs its kernel refuses
#     are tried again on the others, so every new connection is answered;
#     its health check takes it
#     down, and every new connection after that is answered by the
#     other two;
#   - the flows drain, the dataplane exits 0 on SIGTERM.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2086 # $SVC6 ("tcp [VIP]:PORT") is two words on purpose
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init ipv6_fnat64
e2e_need_control
e2e_need_tools wrk curl

TOL=${E2E_RR_TOL:-3}
DRAIN=${E2E_DRAIN_TIMEOUT:-20}
# Down within fall checks and an interval of phase, plus the time to
# publish; the margin is for this slow shared machine.
DOWN_LIMIT=${E2E_HEALTH_LIMIT:-8}
URL6="http://[$VIP6]/"
SVC6="tcp [$VIP6]:80"

topo_up 3
# IPv6 on the client's link only: the backends have none.
ip netns exec "$NS_CLI" sysctl -qw "net.ipv6.conf.$IF_CLI.disable_ipv6=0"
ip -n "$NS_CLI" addr add "$(cli_addr6 1)/64" dev "$IF_CLI" nodad
for i in 1 2 3; do
	be_start "$i"
done
for i in 1 2; do
	be_udp_start "$i" 5353
done

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
addr add $LB_ADDR6_CLI/64 port 0
service add $SVC6 sched rr check http check-path / check-interval 200ms check-timeout 1s check-rise 2 check-fall 2
backend add $SVC6 $(be_addr 1):80
backend add $SVC6 $(be_addr 2):80
backend add $SVC6 $(be_addr 3):80
service add udp [$VIP6]:53 sched rr timeout-udp 2s
backend add udp [$VIP6]:53 $(be_addr 1):5353
backend add udp [$VIP6]:53 $(be_addr 2):5353
EOF
dp_start_shared "$conf"
ctl_start

# health ADDR: the health lbctl shows for backend ADDR:80, "-" if none.
health() {
	ctl_json "$E2E_TMP/bl.json" backend list >/dev/null 2>&1 || true
	jq_get "$E2E_TMP/bl.json" \
		"[b['health'] for b in d['backends'] if b['backend'] == '$1:80'][0]"
}

# ---- the pool, as lbctl shows it ---------------------------------------------

for i in 1 2 3; do
	r=$(WAIT_PERIOD=0.1 wait_output 10 up health "$(be_addr "$i")") || true
	check "be$i ($(be_addr "$i"), IPv4) is up by its checks ($r)" \
		'[ "$(health "$(be_addr "$i")")" = up ]'
done
ctl backend list >"$E2E_TMP/bl.txt"
sed 's/^/    /' "$E2E_TMP/bl.txt"
check "backend list: the IPv4 backends under the IPv6 service" \
	'grep -qF "$SVC6 $(be_addr 1):80" "$E2E_TMP/bl.txt" &&
	 grep -qF "$SVC6 $(be_addr 3):80" "$E2E_TMP/bl.txt"'
ctl save >"$E2E_TMP/save"
check "save writes the IPv4 backends of the IPv6 service" \
	'grep -qxF "backend add $SVC6 $(be_addr 2):80" "$E2E_TMP/save"'
tel_save /lb/stats "$E2E_TMP/stats0"

# ---- 60 sequential connections over IPv6 ---------------------------------------

http_seq "$URL6" 60 "$E2E_TMP/seq"
t=$(http_tally "$E2E_TMP/seq")
e2e_log "60 sequential requests to [$VIP6]:80: $t"
[ "$(field fail "$t")" = 0 ] || http_failures "$E2E_TMP/seq"
check "60/60 requests to the IPv6 VIP answered by IPv4 backends" \
	[ "$(field ok "$t")" = 60 ]
for i in 1 2 3; do
	n=$(field "be$i" "$t")
	check "rr: be$i got 20 +- $TOL (got $n)" \
		[ $((n > 20 ? n - 20 : 20 - n)) -le "$TOL" ]
done
for i in 1 2 3; do
	ip netns exec "$(ns_be "$i")" ss -Htn state time-wait \
		"( sport = :80 )" >"$E2E_TMP/tw$i" 2>/dev/null || true
done
# The health checks come from the kernel's address on port 1.
peers=$(awk '{ print $NF }' "$E2E_TMP"/tw[123] | sed -E 's/:[0-9]+$//' |
	grep -vxF "$LB_ADDR_BE" | sort -u | tr '\n' ' ')
e2e_log "peers the backends saw (health checks apart): ${peers:-none}"
check "the backends saw only the IPv4 SNAT address ($LB_SNAT)" \
	'[ "$(printf "%s" "$peers" | tr -d " ")" = "$LB_SNAT" ]'
tel_save /lb/stats "$E2E_TMP/stats1"
for k in nat64_out nat64_in nat64_mss_adjusted; do
	a=$(jget "$E2E_TMP/stats0" /lb/stats "$k")
	b=$(jget "$E2E_TMP/stats1" /lb/stats "$k")
	e2e_log "$k: $a -> $b"
	eval "d_$k=\$((b - a))"
done
check "translated both ways (to IPv4 $d_nat64_out, to IPv6 $d_nat64_in)" \
	'[ "$d_nat64_out" -ge 240 ] && [ "$d_nat64_in" -ge 180 ]'
check "every backend SYN-ACK's MSS lowered ($d_nat64_mss_adjusted)" \
	'[ "$d_nat64_mss_adjusted" -ge 60 ]'
# lb-control reads the same counters from the workers: /metrics and
# lbctl stats carry them, at least as far as the dataplane's were.
mo=$(metrics | awk '$1 ~ /^lb_nat64_out_total/ { s += $2 } END { print s + 0 }')
so=$(ctl stats | awk '$1 == "nat64_out" { print $2 }')
check "/metrics and lbctl stats count the translations (lb_nat64_out_total $mo, nat64_out $so)" \
	'[ "$mo" -ge "$d_nat64_out" ] && [ "${so:-0}" -ge "$d_nat64_out" ] &&
	 metrics | has "^lb_malformed_ipv6_packets_total{"'

# ---- UDP over IPv6 to IPv4 backends ------------------------------------------

# Each datagram from its own source port: a flow each, spread by rr.
r=$(ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/nettool.py" udp-probe \
	--target "[$VIP6]:53" --src "$(cli_addr6 1)" --count 20 \
	--base-port 20000 --timeout 2) || true
e2e_log "20 datagrams to [$VIP6]:53: $r"
answered=$(jget /dev/stdin answered <<<"$r")
n1=$(jget /dev/stdin by be1 <<<"$r")
n2=$(jget /dev/stdin by be2 <<<"$r")
check "20/20 datagrams answered with their own payload ($answered)" \
	[ "$answered" = 20 ]
check "both IPv4 UDP backends answered (be1 $n1, be2 $n2)" \
	'[ "$n1" = 10 ] && [ "$n2" = 10 ]'

# ---- wrk over IPv6 ------------------------------------------------------------

w=$(wrk_run "$URL6" 5 1 10 "$E2E_TMP/wrk")
e2e_log "wrk IPv6 -> IPv4 pool: $w"
check "wrk over IPv6: requests served without error" \
	'[ "$(field requests "$w")" -gt 0 ] &&
	 [ "$(field socket_errors "$w")" = 0 ] && [ "$(field non2xx "$w")" = 0 ]'

# ---- a backend failing under load --------------------------------------------

wrk_run "$URL6" 8 1 6 "$E2E_TMP/wrkf" >"$E2E_TMP/wrkf.sum" &
wf=$!
sleep 2
tel_save /lb/stats "$E2E_TMP/statsk0"
be_kill 3
# Before its checks take be3 down, its kernel refuses the SYNs it gets:
# each is tried again on another backend (fnat64 trials).
http_seq "$URL6" 20 "$E2E_TMP/seqk"
t=$(http_tally "$E2E_TMP/seqk")
tel_save /lb/stats "$E2E_TMP/statsk1"
rt=$(($(jget "$E2E_TMP/statsk1" /lb/stats syn_retries) -
	$(jget "$E2E_TMP/statsk0" /lb/stats syn_retries)))
e2e_log "20 sequential requests just after be3 was killed: $t;" \
	"$rt SYN(s) tried again"
[ "$(field fail "$t")" = 0 ] || http_failures "$E2E_TMP/seqk"
check "be3 killed: 20/20 new connections answered, refusals tried again ($rt)" \
	'[ "$(field ok "$t")" = 20 ] && [ "$(field be3 "$t")" = 0 ]'
r=$(WAIT_PERIOD=0.1 wait_output "$DOWN_LIMIT" down health "$(be_addr 3)") ||
	true
check "be3 killed: down by its checks within ${DOWN_LIMIT}s ($r)" \
	'[ "$(health "$(be_addr 3)")" = down ]'
wait "$wf" || true
wf=$(cat "$E2E_TMP/wrkf.sum")
e2e_log "wrk keep-alive while be3 was killed: $wf"
check "wrk went on while be3 died ($(field requests "$wf") requests)" \
	'[ "$(field requests "$wf")" -gt 0 ]'
http_seq "$URL6" 40 "$E2E_TMP/seq2"
t=$(http_tally "$E2E_TMP/seq2")
e2e_log "40 sequential requests with be3 down: $t"
[ "$(field fail "$t")" = 0 ] || http_failures "$E2E_TMP/seq2"
check "with be3 down, 40/40 new connections answered by be1 and be2" \
	'[ "$(field ok "$t")" = 40 ] && [ "$(field be3 "$t")" = 0 ] &&
	 [ "$(field be1 "$t")" -gt 0 ] && [ "$(field be2 "$t")" -gt 0 ]'

# ---- the end -------------------------------------------------------------------

v=$(wait_value "$DRAIN" /lb/stats flows_active = 0) || true
e2e_log "flows_active ${v:-?} s"
check "every flow drained (flows_active 0 within ${DRAIN}s)" \
	'[ "${v%% *}" = 0 ]'
ctl_stop
dp_stop
check "lb-dataplane exits 0 on SIGTERM (status $DP_RC)" [ "$DP_RC" = 0 ]
e2e_finish
