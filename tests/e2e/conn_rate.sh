#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Connection rate through one SNAT address whose ports wrap many times:
# lb-dataplane with --snat-ports limited to E2E_CONNRATE_PORTS ports (one
# worker, so all of them its own) and a service whose closed connections
# time out after 50 ms; wrk with "Connection: close" (a new connection
# per request) for E2E_CONNRATE_SECS seconds:
#   - no socket error at all (no connection refused, reset or timed out),
#     no non-2xx response;
#   - the connections made wrapped the SNAT ports at least
#     E2E_CONNRATE_WRAPS times, each a flow created;
#   - no new flow was refused (drop.snat_ports_full, flow_table_full);
#   - the expiry counters are in /lb/stats, no poll expired more than its
#     budget, and once the clients are done every flow expires.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init conn_rate
e2e_need_dataplane
e2e_need_tools wrk

# Enough that the connections closed in the last 50 ms never hold them
# all (wrk opens them in bursts of well over 10,000/s here).
PORTS=${E2E_CONNRATE_PORTS:-4096}
SECS=${E2E_CONNRATE_SECS:-30}
WRAPS=${E2E_CONNRATE_WRAPS:-4}
FIRST=20000

topo_up 1
be_start 1

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add tcp $VIP:80 sched rr timeout-closing 50ms timeout-time-wait 50ms timeout-closed 50ms
backend add tcp $VIP:80 $(be_addr 1):80
EOF
# One client address makes every connection: the budget per source
# would drop its SYNs well below the rate this test is after.
dp_start "$conf" --snat-ports "$FIRST-$((FIRST + PORTS - 1))" \
	--src-budget off
# nginx closes first and keeps each connection in TIME_WAIT for 60 s, so
# a SNAT port comes back to it while it still remembers the last
# connection on it. Linux takes the new SYN when its timestamp is newer
# (RFC 6191); with per-connection random timestamp offsets (the default,
# tcp_timestamps 1) it is older half of the time and nginx's kernel
# answers with the old connection's ACK instead. Clients' timestamps
# without random offsets (2) are what makes port reuse work with Linux
# backends; a real deployment has many more ports per backend and wraps
# them far more slowly.
ip netns exec "$NS_CLI" sysctl -qw net.ipv4.tcp_timestamps=2
tel_save /lb/stats "$E2E_TMP/stats0"

w=$(wrk_run "http://$VIP/" "$SECS" 2 16 "$E2E_TMP/wrk" \
	-H "Connection: close")
e2e_log "wrk ${SECS} s, 2 threads, 16 connections, Connection: close: $w"
sed 's/^/    /' "$E2E_TMP/wrk"
tel_save /lb/stats "$E2E_TMP/stats1"

req=$(field requests "$w")
c0=$(jget "$E2E_TMP/stats0" /lb/stats flows_created)
c1=$(jget "$E2E_TMP/stats1" /lb/stats flows_created)
e2e_log "flows_created: $c0 -> $c1; SNAT ports $FIRST-$((FIRST + PORTS - 1))"
check "wrk: no socket error (connect, read, write, timeout)" \
	[ "$(field socket_errors "$w")" = 0 ]
check "wrk: no non-2xx response" [ "$(field non2xx "$w")" = 0 ]
check "the connections wrapped the $PORTS SNAT ports at least $WRAPS times ($req requests)" \
	[ "$req" -ge $((WRAPS * PORTS)) ]
check "a flow for every connection ($((c1 - c0)) flows, $req requests)" \
	'[ "$c0" != - ] && [ "$c1" != - ] && [ $((c1 - c0)) -ge "$req" ]'
for r in snat_ports_full flow_table_full; do
	n=$(drop_count "$E2E_TMP/stats1" "$r")
	check "no new flow refused as $r ($n)" [ "$n" = 0 ]
done
for k in flows_overdue snat_ports_overdue flows_expired flows_reclaimed \
	expire_polls expire_max expire_max_ns; do
	v=$(jget "$E2E_TMP/stats1" /lb/stats "$k")
	e2e_log "$k: $v"
	check "/lb/stats has $k" [ "$v" != - ]
done
m=$(jget "$E2E_TMP/stats1" /lb/stats expire_max)
check "expire_max ($m) is within the budget of a poll (128)" \
	'[ "$m" != - ] && [ "$m" -le 128 ]'

# Every flow lives its connection and 50 ms more, then expires (or, when
# the client reuses its tuple at once, is replaced): once the clients
# are done the table empties, and the ports could wrap only because the
# flows holding them expired.
rc=0
d=$(wait_value 10 /lb/stats flows_active = 0) || rc=$?
e2e_log "flows_active: ${d% *} after ${d#* } s"
check "every flow expires once the clients are done" [ "$rc" = 0 ]
x=$(tel /lb/stats -k flows_expired)
e2e_log "flows_expired: $x of $(tel /lb/stats -k flows_created) created"
check "flows_expired ($x) covers the wraps ($((WRAPS * PORTS)))" \
	[ "$x" -ge $((WRAPS * PORTS)) ]

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]

e2e_finish
