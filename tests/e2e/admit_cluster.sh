#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The cluster tier of admission control: two load balancers (two
# lb-dataplane processes on their own ports, each with its lb-control)
# serve the same service limit through one local redis-server:
#   - a client offering twice the limit to each of them for 10 s gets the
#     limit in total, within 5%, and both admit a share;
#   - Redis stopped mid-run: `admit-cluster closed` admits no more than
#     the tokens the hosts held (rejections counted as cluster-down,
#     lb-control says the tier is down);
#   - switched to `admit-cluster open`, one host alone admits the rate
#     from its local refill.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admit_lib.sh"
. "$(dirname "$0")/lb2_lib.sh"

e2e_init admit_cluster
e2e_need_control
e2e_need_tools redis-server

R=${E2E_ADMIT_RATE:-200}
# Half a second of the rate: room for lb-control's ticks to come late on
# a loaded host without losing tokens at the caps. The first seconds of
# load drain the initial bursts before anything is measured.
BURST=$((R / 2))
SECS=10
RPORT=6391 # the LB namespace's own loopback: always free
lb2_init 10.21.0

# On exit, the second load balancer goes first, then the harness's own
# clean-up.
cluster_on_exit() {
	local rc=$?
	set +e
	lb2_cleanup
	(exit "$rc")
	ctl_on_exit
}
trap cluster_on_exit EXIT

topo_up 1
be_start 1
# The second load balancer's links: client side and backend side.
lb2_links

ip netns exec "$NS_LB" redis-server --port "$RPORT" --bind 127.0.0.1 \
	--save '' --appendonly no --loglevel warning \
	>"$E2E_TMP/redis.log" 2>&1 &
REDIS_PID=$!

svc_opts="admit-rate $R admit-burst $BURST admit-reject rst admit-cluster closed"
conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add tcp $VIP:80 $svc_opts
backend add tcp $VIP:80 $(be_addr 1):80
EOF
dp_start_shared "$conf"
ctl_start --redis "127.0.0.1:$RPORT"

# The same service (same VIP and limit: the same Redis bucket) on the
# second load balancer, reached by the client through its own link.
conf2=$E2E_TMP/lb2.conf
cat >"$conf2" <<EOF
addr add $NET2.1/24 port 0
addr add $BE_NET.5/24 port 1
snat add $BE_NET.6 port 1
service add tcp $VIP:80 $svc_opts
backend add tcp $VIP:80 $(be_addr 1):80
EOF
lb2_dp_start "$conf2"
lb2_ctl_start --redis "127.0.0.1:$RPORT"
# The client reaches the VIP through the second one on its own link.
lb2_route

# gen SRC RATE SECONDS OUT: connections to the VIP.
gen() { admit_gen "$1" "$VIP:80" "$2" "$3" "$4"; }

# ---- one limit over two load balancers ----
gen "$(cli_addr 1)" $((2 * R)) 2 "$E2E_TMP/w1" &
pa=$!
gen "$NET2.2" $((2 * R)) 2 "$E2E_TMP/w2"
wait "$pa"
# passed: admissions of the service on both load balancers (their
# lb-control's verdict counters, which a client that gave up on a late
# SYN-ACK would not see).
passed() {
	local f=$E2E_TMP/p.json n1 n2
	ctl --json service show tcp "$VIP:80" >"$f"
	n1=$(jq_get "$f" 'd["service"]["admit"]["verdicts"]["pass"]')
	"$LBCTL" --socket "$CTL2_SOCK" --json service show \
		tcp "$VIP:80" >"$f"
	n2=$(jq_get "$f" 'd["service"]["admit"]["verdicts"]["pass"]')
	echo $((n1 + n2))
}
p0=$(passed)
gen "$(cli_addr 1)" $((2 * R)) "$SECS" "$E2E_TMP/a" &
pa=$!
gen "$NET2.2" $((2 * R)) "$SECS" "$E2E_TMP/b"
wait "$pa"
p1=$(passed)
a=$(jf "$E2E_TMP/a" ok)
b=$(jf "$E2E_TMP/b" ok)
e2e_log "host 1: $(cat "$E2E_TMP/a")"
e2e_log "host 2: $(cat "$E2E_TMP/b")"
e2e_log "admitted by the load balancers: $((p1 - p0))"
# The rate over the window, and up to one burst that Redis's bucket saved
# while the warm-up ended and the counters were read.
n=$((p1 - p0))
check "together $n admitted: the rate $((R * SECS)) and at most a burst, within 5%" \
	'[ $((n * 100)) -ge $((R * SECS * 95)) ] && [ $((n * 100)) -le $(((R * SECS + BURST) * 105)) ]'
check "both hosts admitted a share ($a, $b)" \
	'[ "$a" -gt $((R * SECS / 10)) ] && [ "$b" -gt $((R * SECS / 10)) ]'
ctl_json "$E2E_TMP/st1" stats
check "lb-control borrowed from Redis" \
	'[ "$(jq_get "$E2E_TMP/st1" "d[\"control\"][\"cluster_borrows\"]")" -gt 0 ]'

# ---- Redis stopped: closed ----
kill "$REDIS_PID"
wait "$REDIS_PID" 2>/dev/null || true
gen "$(cli_addr 1)" $((2 * R)) 3 "$E2E_TMP/c" &
pa=$!
gen "$NET2.2" $((2 * R)) 3 "$E2E_TMP/d"
wait "$pa"
c=$(jf "$E2E_TMP/c" ok)
d=$(jf "$E2E_TMP/d" ok)
e2e_log "Redis down, closed: host 1 $c, host 2 $d admitted"
check "closed: no more than the tokens held ($((c + d)) <= $((2 * BURST)))" \
	[ $((c + d)) -le $((2 * BURST)) ]
ctl_json "$E2E_TMP/st2" stats
check "lb-control: cluster tier down, errors counted" \
	'[ "$(jq_get "$E2E_TMP/st2" "d[\"control\"][\"cluster_down\"]")" = 1 ] && [ "$(jq_get "$E2E_TMP/st2" "d[\"control\"][\"cluster_errors\"]")" -gt 0 ]'
ctl_json "$E2E_TMP/sh2" service show tcp "$VIP:80"
check "rejections counted as cluster-down" \
	'[ "$(jq_get "$E2E_TMP/sh2" "d[\"service\"][\"admit\"][\"verdicts\"][\"cluster_down\"]")" -gt 0 ]'

# ---- open: the host refills locally at the rate ----
ctl_do service set tcp "$VIP:80" admit-cluster open
sleep 0.5
gen "$(cli_addr 1)" $((2 * R)) 5 "$E2E_TMP/e"
e=$(jf "$E2E_TMP/e" ok)
e2e_log "Redis down, open: host 1: $(cat "$E2E_TMP/e")"
# The rate, and up to one burst refilled locally during the pause after
# the switch.
check "open: $e admitted: the rate $((R * 5)) and at most a burst, within 5%" \
	'[ $((e * 100)) -ge $((R * 5 * 95)) ] && [ $((e * 100)) -le $(((R * 5 + BURST) * 105)) ]'

e2e_finish
