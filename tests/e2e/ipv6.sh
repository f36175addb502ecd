#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Dual stack through lb-dataplane: a client with an IPv4 and an IPv6
# address, an IPv6 VIP served by nginx backends over IPv6 (fnat66) and an
# IPv4 VIP over IPv4, on the same ports at the same time.
#   - the client resolves the IPv6 VIP and the dataplane's address by
#     neighbour discovery (the kernel's own solicitations) and pings both;
#   - 100 sequential connections to the IPv6 VIP, all answered, spread
#     50/50 by rr, and the backends saw the IPv6 SNAT address, not the
#     client;
#   - wrk on the IPv6 VIP and on the IPv4 VIP together: no error;
#   - lbctl lists the IPv6 service and backends, and refuses what an IPv6
#     service does not have (proxy-protocol) with no change;
#   - lbctl neigh shows the IPv6 backends reachable on port 1 beside the
#     IPv4 ones;
#   - the IPv6 SNAT address moved under keep-alive load (snat add, snat
#     del): the connections on the old one go on without an error, new
#     ones come from the new one;
#   - one backend's nginx stopped under load: before it is drained, the
#     SYNs its kernel refuses are tried again on the other backend, so
#     every new connection is answered (syn_retries counts them); once
#     drained, every new connection is answered by the other;
#   - the flows drain, the dataplane exits 0 on SIGTERM.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2086 # $bad is a command line, split on purpose
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init ipv6
e2e_need_control
e2e_need_tools wrk curl

TOL=${E2E_RR_TOL:-3}
DRAIN=${E2E_DRAIN_TIMEOUT:-20}
URL6="http://[$VIP6]/"

topo_up 2
v6_on "$NS_CLI" "$IF_CLI" "$(cli_addr6 1)/64"
be6_start 1 2

conf=$E2E_TMP/lb.conf
conf_ports6 "$conf"
cat >>"$conf" <<EOF
service add tcp [$VIP6]:80 sched rr
backend add tcp [$VIP6]:80 [$(be_addr6 1)]:80
backend add tcp [$VIP6]:80 [$(be_addr6 2)]:80
service add tcp $VIP:80 sched rr
backend add tcp $VIP:80 $(be_addr 1):80
backend add tcp $VIP:80 $(be_addr 2):80
EOF
dp_start_shared "$conf"
ctl_start
tel_save /lb/stats "$E2E_TMP/stats0"

# ---- neighbour discovery and echo ------------------------------------------

for a in "$VIP6" "$LB_ADDR6_CLI"; do
	rc=0
	r=$(ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/nettool.py" ping \
		--target "$a" --count 3) || rc=$?
	e2e_log "echo to $a: $r"
	check "echo request to $a answered" [ "$rc" = 0 ]
done
nb=$(ip -n "$NS_CLI" -6 neigh show "$VIP6" dev "$IF_CLI" | head -n 1)
e2e_log "client's neighbour entry of the VIP: ${nb:-none}"
mac0=$(if_mac "$NS_LB" "$IF_P0")
check "the VIP resolved to port 0's MAC ($mac0)" \
	'printf "%s\n" "$nb" | grep -qi "lladdr $mac0"'

# ---- 100 sequential connections to the IPv6 VIP ------------------------------

http_seq "$URL6" 100 "$E2E_TMP/seq"
t=$(http_tally "$E2E_TMP/seq")
e2e_log "100 sequential requests to [$VIP6]:80: $t"
[ "$(field fail "$t")" = 0 ] || http_failures "$E2E_TMP/seq"
check "100/100 requests to the IPv6 VIP answered" [ "$(field ok "$t")" = 100 ]
for i in 1 2; do
	n=$(field "be$i" "$t")
	check "rr: be$i got 50 +- $TOL (got $n)" \
		[ $((n > 50 ? n - 50 : 50 - n)) -le "$TOL" ]
done
# The backends see the SNAT address as the peer (full NAT).
for i in 1 2; do
	ip netns exec "$(ns_be "$i")" ss -Htn state time-wait \
		"( sport = :80 )" >"$E2E_TMP/tw$i" 2>/dev/null || true
done
peers=$(awk '{ print $NF }' "$E2E_TMP/tw1" "$E2E_TMP/tw2" |
	sed -E 's/^\[(.*)\]:[0-9]+$/\1/' | sort -u | tr '\n' ' ')
e2e_log "peers the backends saw: ${peers:-none}"
check "the backends saw only the IPv6 SNAT address ($LB_SNAT6)" \
	'[ "$(printf "%s" "$peers" | tr -d " ")" = "$LB_SNAT6" ]'

# ---- wrk on both families at once -----------------------------------------

wrk_run "$URL6" 4 1 10 "$E2E_TMP/wrk6" >"$E2E_TMP/wrk6.sum" &
w6=$!
w4=$(wrk_run "http://$VIP/" 4 1 10 "$E2E_TMP/wrk4")
wait "$w6" || true
w6=$(cat "$E2E_TMP/wrk6.sum")
e2e_log "wrk IPv6: $w6"
e2e_log "wrk IPv4: $w4"
check "wrk over IPv6: requests served without error" \
	'[ "$(field requests "$w6")" -gt 0 ] &&
	 [ "$(field socket_errors "$w6")" = 0 ] && [ "$(field non2xx "$w6")" = 0 ]'
check "wrk over IPv4 at the same time: requests served without error" \
	'[ "$(field requests "$w4")" -gt 0 ] &&
	 [ "$(field socket_errors "$w4")" = 0 ] && [ "$(field non2xx "$w4")" = 0 ]'

# ---- lbctl -------------------------------------------------------------------

ctl backend list >"$E2E_TMP/bl.txt"
check "lbctl backend list shows the IPv6 backends" \
	'grep -q "tcp \[$VIP6\]:80 \[$(be_addr6 1)\]:80 " "$E2E_TMP/bl.txt" &&
	 grep -q "tcp \[$VIP6\]:80 \[$(be_addr6 2)\]:80 " "$E2E_TMP/bl.txt"'
ctl neigh >"$E2E_TMP/neigh.txt"
e2e_log "lbctl neigh:"$'\n'"$(cat "$E2E_TMP/neigh.txt")"
for i in 1 2; do
	check "lbctl neigh lists IPv6 backend $i ($(be_addr6 "$i")) reachable on port 1" \
		'grep -Eq "^$(be_addr6 "$i") +([0-9a-f]{2}:){5}[0-9a-f]{2} +(reachable|stale) +1 " \
			"$E2E_TMP/neigh.txt"'
	check "lbctl neigh lists IPv4 backend $i ($(be_addr "$i")) beside them" \
		'grep -Eq "^$(be_addr "$i") +([0-9a-f]{2}:){5}[0-9a-f]{2} +(reachable|stale) +1 " \
			"$E2E_TMP/neigh.txt"'
done
tel_save /lb/neigh "$E2E_TMP/neigh.json"
check "/lb/neigh (telemetry) lists IPv6 backend 1 reachable on port 1" \
	'jget "$E2E_TMP/neigh.json" /lb/neigh w0 nd entries |
	 grep -Eq "$(be_addr6 1) ([0-9a-f]{2}:){5}[0-9a-f]{2} (reachable|stale) 1 "'
check "lbctl neigh counts the IPv6 neighbours learnt" \
	'grep -Eq "^neighbour discovery \(IPv6\): [0-9]+ address\(es\), .* learned [1-9]" \
		"$E2E_TMP/neigh.txt"'
ctl save >"$E2E_TMP/save0"
for bad in "service set tcp [$VIP6]:80 proxy-protocol v2"; do
	out=$(ctl $bad 2>&1) && rc=0 || rc=$?
	e2e_log "lbctl $bad: status $rc: $out"
	check "refused: $bad" \
		'[ "$rc" != 0 ] && printf "%s" "$out" | grep -q "IPv6"'
done
ctl save >"$E2E_TMP/save1"
check "nothing changed by the refused commands" \
	cmp -s "$E2E_TMP/save0" "$E2E_TMP/save1"

# ---- the IPv6 SNAT address moved under load ------------------------------------

SNAT6B=$BE_NET6::3
wrk_run "$URL6" 5 1 8 "$E2E_TMP/wrks" >"$E2E_TMP/wrks.sum" &
ws=$!
sleep 1.5
ctl_do snat add "$SNAT6B" port 1 >/dev/null
ctl_do snat del "$LB_SNAT6" >/dev/null
wait "$ws" || true
ws=$(cat "$E2E_TMP/wrks.sum")
e2e_log "wrk keep-alive while the SNAT address moved: $ws"
check "keep-alive connections from the old SNAT address went on (no error)" \
	'[ "$(field requests "$ws")" -gt 0 ] &&
	 [ "$(field socket_errors "$ws")" = 0 ] && [ "$(field non2xx "$ws")" = 0 ]'
http_seq "$URL6" 10 "$E2E_TMP/seq3"
t=$(http_tally "$E2E_TMP/seq3")
e2e_log "10 new connections after the move: $t"
check "10/10 new connections answered after the move" \
	[ "$(field ok "$t")" = 10 ]
n=0
for i in 1 2; do
	c=$(ip netns exec "$(ns_be "$i")" ss -Htn state time-wait \
		"( sport = :80 )" 2>/dev/null | grep -c "\[$SNAT6B\]:" || true)
	n=$((n + c))
done
check "the backends saw the new SNAT address ($SNAT6B, $n closed)" \
	'[ "$n" -gt 0 ]'

# ---- a backend failing under load ---------------------------------------------

# Keep-alive: a flood of short connections would also bring SNAT ports
# round onto tuples the backends still hold in TIME_WAIT.
wrk_run "$URL6" 6 1 10 "$E2E_TMP/wrkf" >"$E2E_TMP/wrkf.sum" &
wf=$!
sleep 2
tel_save /lb/stats "$E2E_TMP/statsk0"
be_kill 2
http_seq "$URL6" 20 "$E2E_TMP/seqk"
t=$(http_tally "$E2E_TMP/seqk")
tel_save /lb/stats "$E2E_TMP/statsk1"
r=$(($(jget "$E2E_TMP/statsk1" /lb/stats syn_retries) -
	$(jget "$E2E_TMP/statsk0" /lb/stats syn_retries)))
e2e_log "20 sequential requests with be2 stopped, not drained: $t;" \
	"$r SYN(s) tried again"
[ "$(field fail "$t")" = 0 ] || http_failures "$E2E_TMP/seqk"
check "be2 stopped: 20/20 new connections answered, its refusals tried again on be1 ($r)" \
	'[ "$(field ok "$t")" = 20 ] && [ "$(field be1 "$t")" = 20 ] && [ "$r" -gt 0 ]'
ctl_do backend drain tcp "[$VIP6]:80" "[$(be_addr6 2)]:80" >/dev/null
wait "$wf" || true
e2e_log "wrk keep-alive while be2 stopped, then drained:" \
	"$(cat "$E2E_TMP/wrkf.sum")"
http_seq "$URL6" 40 "$E2E_TMP/seq2"
t=$(http_tally "$E2E_TMP/seq2")
e2e_log "40 sequential requests with be2 drained: $t"
[ "$(field fail "$t")" = 0 ] || http_failures "$E2E_TMP/seq2"
check "with be2 drained, 40/40 new connections answered by be1" \
	'[ "$(field ok "$t")" = 40 ] && [ "$(field be1 "$t")" = 40 ]'

# ---- the end ------------------------------------------------------------------

tel_save /lb/stats "$E2E_TMP/stats1"
v=$(wait_value "$DRAIN" /lb/stats flows_active = 0) || true
e2e_log "flows_active ${v:-?} s"
check "every flow drained (flows_active 0 within ${DRAIN}s)" \
	'[ "${v%% *}" = 0 ]'
ctl_stop
dp_stop
check "lb-dataplane exits 0 on SIGTERM (status $DP_RC)" [ "$DP_RC" = 0 ]
e2e_finish
