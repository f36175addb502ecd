#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The exception path: the dataplane owns both veths (AF_PACKET) and gives
# the kernel of its namespace a tap per port (lbx0, lbx1) with the port's
# MAC address and local addresses:
#   - the taps exist with the ports' MACs and the configured addresses;
#   - the kernel reaches a backend through port 1 (curl and ping from the
#     LB namespace), resolving it with ARP through the dataplane;
#   - a client reaches a server of the LB namespace's kernel on the local
#     address of port 0, while the VIP keeps being load-balanced and ping
#     of the local address is still answered by the dataplane itself;
#   - an address added and removed live (lbctl, through lb-control, a
#     secondary process that attaches with the taps present) appears on
#     and leaves the tap;
#   - IPv6 likewise: the taps get the ports' IPv6 addresses, the kernel
#     reaches a backend over IPv6 (resolving it by neighbour discovery
#     through the dataplane), and a client's TCP connection to the
#     kernel's server on the IPv6 local address of port 0 goes through
#     the exception path while the dataplane still answers its echo; an
#     IPv6 route is mirrored, an IPv6 address added live comes and goes;
#   - the frames are counted; the taps go when the dataplane stops;
#   - with --no-exception there are no taps and the kernel cannot reach
#     the backends.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init exception_path
e2e_need_control

SVC="tcp $VIP:80"
TAP0=lbx0
TAP1=lbx1
EXTRA=$BE_NET.3
EXTRA6=$BE_NET6::3
NET6_FAR=2001:db8:99

topo_up 2
v6_on "$NS_CLI" "$IF_CLI" "$(cli_addr6 1)/64"
be6_start 1 2
conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
addr add $LB_ADDR6_CLI/64 port 0
addr add $LB_ADDR6_BE/64 port 1
route add $NET6_FAR::/48 via $(be_addr6 2) port 1
service add $SVC sched rr
backend add $SVC $(be_addr 1):80
backend add $SVC $(be_addr 2):80
EOF
dp_start_shared "$conf"

lbns() {
	ip netns exec "$NS_LB" "$@"
}

# tap_has IF ADDR/LEN: the kernel has that address on IF.
tap_has() {
	lbns ip -o -4 addr show dev "$1" 2>/dev/null | has -w "inet $2"
}

# tap_has6 IF ADDR/LEN: the kernel has that IPv6 address on IF.
tap_has6() {
	lbns ip -o -6 addr show dev "$1" 2>/dev/null | has -w "inet6 $2"
}

# wait_for SECONDS CMD...: until CMD succeeds, polling every 0.2 s.
wait_for() {
	local secs=$1 i
	shift
	for ((i = 0; i < secs * 5; i++)); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}

# ---- the taps ----------------------------------------------------------------

check "the dataplane made a tap per port ($TAP0, $TAP1)" \
	'lbns ip link show "$TAP0" >/dev/null && lbns ip link show "$TAP1" >/dev/null'
check "$TAP0 carries port 0's MAC" \
	'[ "$(if_mac "$NS_LB" "$TAP0")" = "$(if_mac "$NS_LB" "$IF_P0")" ]'
check "$TAP1 carries port 1's MAC" \
	'[ "$(if_mac "$NS_LB" "$TAP1")" = "$(if_mac "$NS_LB" "$IF_P1")" ]'
check "$TAP0 has the local address of port 0" \
	wait_for 5 tap_has "$TAP0" "$LB_ADDR_CLI/24"
check "$TAP1 has the local address of port 1" \
	wait_for 5 tap_has "$TAP1" "$LB_ADDR_BE/24"
check "the SNAT address and the VIP are not the kernel's" \
	'! tap_has "$TAP1" "$LB_SNAT/32" && ! lbns ip -o -4 addr | has -w "$VIP"'
check "$TAP0 has the IPv6 local address of port 0" \
	wait_for 5 tap_has6 "$TAP0" "$LB_ADDR6_CLI/64"
check "$TAP1 has the IPv6 local address of port 1" \
	wait_for 5 tap_has6 "$TAP1" "$LB_ADDR6_BE/64"
r6=$(lbns ip -6 route show "$NET6_FAR::/48" 2>/dev/null)
check "$TAP1 has the IPv6 route of port 1 ($r6)" \
	'printf "%s" "$r6" | grep -q "via $(be_addr6 2) dev $TAP1"'
e2e_log "kernel addresses: $(lbns ip -o addr show | awk '{print $2, $4}' | tr '\n' ' ')"

# ---- the kernel talks on the backends' network --------------------------------

body=$(lbns curl -sS --max-time 5 "http://$(be_addr 1)/" 2>&1) || true
check "the kernel of the LB namespace reaches backend 1 through port 1 ($body)" \
	'[ "$body" = be1 ]'
body=$(lbns curl -sS --max-time 5 "http://$(be_addr 2)/" 2>&1) || true
check "and backend 2 ($body)" '[ "$body" = be2 ]'
check "the kernel resolved backend 1 with ARP through the dataplane" \
	'lbns ip neigh show dev "$TAP1" | grep -w "$(be_addr 1)" | has lladdr'
check "ping from the kernel to backend 2 is answered" \
	lbns "$PY" "$E2E_DIR/nettool.py" ping --target "$(be_addr 2)"

body=$(lbns curl -sS -g --max-time 5 "http://[$(be_addr6 1)]/" 2>&1) || true
check "the kernel reaches backend 1 over IPv6 through port 1 ($body)" \
	'[ "$body" = be1 ]'
check "the kernel resolved backend 1 by neighbour discovery through the dataplane" \
	'lbns ip -6 neigh show dev "$TAP1" | grep -w "$(be_addr6 1)" | has lladdr'

# ---- a client talks to the kernel on the local address ------------------------

lbns "$PY" "$E2E_DIR/nettool.py" http-slow --bind "$LB_ADDR_CLI:8000" \
	--name lbhost >"$E2E_TMP/lbhost.log" 2>&1 &
wait_listen "$NS_LB" tcp "$LB_ADDR_CLI:8000" ||
	die "the LB namespace's server did not start"
body=$(ip netns exec "$NS_CLI" curl -sS --max-time 5 \
	"http://$LB_ADDR_CLI:8000/" 2>&1) || true
check "a client reaches the kernel's server on $LB_ADDR_CLI:8000 ($body)" \
	'[ "$body" = lbhost ]'
http_seq "http://$VIP/" 20 "$E2E_TMP/vip"
t=$(http_tally "$E2E_TMP/vip")
check "the VIP is load-balanced meanwhile ($t)" \
	'[ "$(field ok "$t")" = 20 ] && [ "$(field be1 "$t")" -gt 0 ] &&
	 [ "$(field be2 "$t")" -gt 0 ]'

# echo_by_dp ADDR COUNTER WHAT: the client pings ADDR, and the dataplane's
# COUNTER (echo_replies, echo6_replies) counts the replies; the counters
# after it in st1.
echo_by_dp() {
	local e0 e1
	tel_save /lb/stats "$E2E_TMP/st_echo"
	e0=$(jget "$E2E_TMP/st_echo" /lb/stats "$2")
	ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/nettool.py" ping \
		--target "$1" >/dev/null || true
	tel_save /lb/stats "$E2E_TMP/st1"
	e1=$(jget "$E2E_TMP/st1" /lb/stats "$2")
	check "ping of the $3 is answered by the dataplane ($e0 -> $e1)" \
		'[ "$e1" -ge $((e0 + 2)) ]'
}
echo_by_dp "$LB_ADDR_CLI" echo_replies "local address"

# The same over IPv6: a TCP connection to the kernel's server on the
# IPv6 local address, while the dataplane answers its echo itself.
mkdir -p "$E2E_TMP/www6"
echo lbhost6 >"$E2E_TMP/www6/index.html"
lbns "$PY" -m http.server 8006 --bind "$LB_ADDR6_CLI" \
	--directory "$E2E_TMP/www6" >"$E2E_TMP/lbhost6.log" 2>&1 &
wait_listen "$NS_LB" tcp "[$LB_ADDR6_CLI]:8006" ||
	die "the LB namespace's IPv6 server did not start"
body=$(ip netns exec "$NS_CLI" curl -sS -g --max-time 5 \
	"http://[$LB_ADDR6_CLI]:8006/" 2>&1) || true
check "a client reaches the kernel's server on [$LB_ADDR6_CLI]:8006 ($body)" \
	'[ "$body" = lbhost6 ]'
echo_by_dp "$LB_ADDR6_CLI" echo6_replies "IPv6 local address"

to=$(jget "$E2E_TMP/st1" /lb/stats exc_to_kernel)
from=$(jget "$E2E_TMP/st1" /lb/stats exc_from_kernel)
tel_save /lb/exception "$E2E_TMP/exc"
t1=$(jget "$E2E_TMP/exc" /lb/exception port1 to_kernel)
f1=$(jget "$E2E_TMP/exc" /lb/exception port1 from_kernel)
e2e_log "exception path: workers gave $to frames to the kernel and sent" \
	"$from of its; port 1's tap: to_kernel=$t1 from_kernel=$f1"
check "the workers counted frames both ways" \
	'[ "$to" -gt 10 ] && [ "$from" -gt 10 ]'
check "port 1's tap counted frames both ways" \
	'[ "$t1" -gt 5 ] && [ "$f1" -gt 5 ]'
check "nothing was lost on the exception path" \
	'[ "$(jget "$E2E_TMP/st1" /lb/stats drop exception_full)" = 0 ] &&
	 [ "$(jget "$E2E_TMP/exc" /lb/exception port1 to_kernel_failed)" = 0 ] &&
	 [ "$(jget "$E2E_TMP/exc" /lb/exception port1 ring_full)" = 0 ]'

# ---- addresses follow the published table -------------------------------------

ctl_start
ctl_do addr add "$EXTRA/24" port 1 >/dev/null
check "an address added live appears on $TAP1" \
	wait_for 5 tap_has "$TAP1" "$EXTRA/24"
body=$(lbns curl -sS --max-time 5 --interface "$EXTRA" \
	"http://$(be_addr 1)/" 2>&1) || true
check "the kernel talks from the new address too ($body)" '[ "$body" = be1 ]'
ctl_do addr del "$EXTRA/24" port 1 >/dev/null 2>&1 ||
	ctl_do addr del "$EXTRA" port 1 >/dev/null
check "and leaves it when removed" \
	'wait_for 5 bash -c "! ip netns exec $NS_LB ip -o -4 addr show dev $TAP1 | has -w \"inet $EXTRA/24\""'
ctl_do addr add "$EXTRA6/64" port 1 >/dev/null
check "an IPv6 address added live appears on $TAP1" \
	wait_for 5 tap_has6 "$TAP1" "$EXTRA6/64"
ctl_do addr del "$EXTRA6" port 1 >/dev/null
check "and leaves it when removed" \
	'wait_for 5 bash -c "! ip netns exec $NS_LB ip -o -6 addr show dev $TAP1 | grep -qw \"inet6 $EXTRA6/64\""'
ctl_stop

# ---- what the exception path costs (measured, not asserted) -------------------

# median_ms FILE: the median of http_seq's seconds column, in ms.
median_ms() {
	awk '$2 == 0 { print $4 * 1000 }' "$1" | sort -n |
		awk '{ v[NR] = $1 } END { printf "%.2f", NR ? v[int((NR + 1) / 2)] : -1 }'
}

# Rounds of 20 connections each way, alternated: from the LB namespace's
# kernel to backend 1 through the tap, and from the client through the
# VIP (forwarded by the workers only).
for r in 1 2 3; do
	# shellcheck disable=SC2016 # expanded by the LB namespace's shell
	lbns bash -c '
for ((i = 1; i <= 20; i++)); do
	w=$(curl -s -o /dev/null -H "Connection: close" --max-time 5 \
		-w "%{time_total}" "$1") && echo "$i 0 200 $w"
done' kernel "http://$(be_addr 1)/" >"$E2E_TMP/lat-tap$r"
	http_seq "http://$VIP/" 20 "$E2E_TMP/lat-vip$r"
	e2e_log "round $r: median connection (connect, GET, close) from the" \
		"kernel through the tap $(median_ms "$E2E_TMP/lat-tap$r") ms," \
		"from the client through the VIP" \
		"$(median_ms "$E2E_TMP/lat-vip$r") ms"
done

# ---- clean-up and the option to turn it off -----------------------------------

check "lb-dataplane exits 0" dp_stop
check "the taps went with the dataplane" \
	'! lbns ip link show "$TAP0" >/dev/null 2>&1 &&
	 ! lbns ip link show "$TAP1" >/dev/null 2>&1'

dp_start_shared "$conf" --no-exception
check "--no-exception: no taps" \
	'! lbns ip link show "$TAP0" >/dev/null 2>&1 &&
	 ! lbns ip link show "$TAP1" >/dev/null 2>&1'
check "--no-exception: the kernel cannot reach the backends" \
	'! lbns curl -sS --max-time 2 "http://$(be_addr 1)/" >/dev/null 2>&1'
http_seq "http://$VIP/" 5 "$E2E_TMP/vip2"
t=$(http_tally "$E2E_TMP/vip2")
check "--no-exception: the VIP answers ($t)" '[ "$(field ok "$t")" = 5 ]'
check "lb-dataplane exits 0" dp_stop

e2e_finish
