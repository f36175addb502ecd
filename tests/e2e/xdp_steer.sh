#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# lb-dataplane on net_af_xdp ports that load Sluice's XDP steering program
# themselves, with lb-control keeping the program's maps, on an interface
# the dataplane shares with the kernel: the LB namespace's client-side veth
# also carries a kernel address (HOST_ADDR) with an HTTP service of the
# kernel's on port 8080, and a service of the dataplane on port 81 of the
# same address.
#   - at boot the dataplane attaches the program to both ports, pins its
#     maps in /sys/fs/bpf/sluice/FILE-PREFIX and fills the rules from its
#     configuration: whole-address rules for the VIP, its addresses and
#     its SNAT address, a port rule for the service on the shared address;
#   - HTTP to the VIP and to HOST_ADDR:81 is load-balanced while the host
#     service keeps answering, interleaved; the counters agree;
#   - lb-control opens the pinned maps: a service added gets its rule and
#     is answered, a service deleted loses it; the counters are in `lbctl
#     stats`, its --json and /metrics;
#   - `lbctl acl deny`: the source's datagrams die in the driver
#     (drop_deny rises, the dataplane's rx stays still), neither the VIP
#     nor the host answers it, another client is not affected; `allow`
#     lets them through again; `lb-only`
#     drops only its load-balanced traffic; `allow` lifts a deny of a
#     shorter prefix; `del` and expiry end a deny; bad input is refused
#     and changes nothing;
#   - automatic deny (lb-control --acl-auto): a client that the admission
#     control keeps rejecting is denied (lb-only) in the driver, listed as
#     auto, and heard again when the deny expires;
#   - IPv6 beside it: the IPv6 VIP, addresses and SNAT address get
#     whole-address rules in steer_rules6 (neighbour discovery for them
#     steered too), a service on a kernel IPv6 address of the shared
#     port a port rule; HTTP over IPv6 to both is answered; lb-control
#     adds and removes an IPv6 service's rule; `lbctl acl deny` of an
#     IPv6 /64 drops its sources' datagrams in the driver (drop_deny)
#     while another IPv6 client and IPv4 go on; bad IPv6 prefixes are
#     refused and change nothing;
#   - the ACL outlives a restart of lb-control and of the dataplane; a
#     restarted dataplane adopts the pinned maps and adds no rule twice.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xdp_lib.sh"

e2e_init xdp_steer
e2e_need_control

xdp_init
HOST_ADDR=$CLI_NET.50 # the kernel's own address on the shared veth
HOST_ADDR6=$CLI_NET6::50 # and its IPv6 one
CLI61=$(cli_addr6 1)
# The second IPv6 client's source, in a /64 of its own for `acl deny`;
# only its datagrams are sent, no answer is awaited.
DENY_NET6=2001:db8:13
CLI62=$DENY_NET6::2
HOST_PORT=8080

# dp_rx: frames the dataplane received, all workers.
dp_rx() {
	tel /lb/stats -k rx
}

# xdp_prog_of IF: the name of the XDP program on IF, or "-".
xdp_prog_of() {
	local name
	name=$(ip -n "$NS_LB" -d link show "$1" |
		sed -n 's/.*prog\/xdp id [0-9]* name \([^ ]*\).*/\1/p')
	echo "${name:--}"
}

# get URL [SRC]: "curl_status http_code body" of one request from the
# client namespace. 3.5 s lets a lost SYN be sent again twice (at 1 s and
# 3 s) on a loaded machine; a denied request costs that long.
get() {
	local out rc=0
	out=$(ip netns exec "$NS_CLI" curl -gsS --connect-timeout 3.5 \
		--max-time 8 ${2:+--interface "$2"} -w ' %{http_code}' "$1" \
		2>/dev/null) || rc=$?
	echo "$rc ${out##* } $(echo "${out% *}" | tr -d '\r\n ')"
}

# mixed N SRC: N requests to the VIP, N to the dataplane's service on the
# shared address and N to the host service, interleaved; prints
# "vip=OK shared=OK host=OK" counts.
mixed() {
	local n=$1 src=$2 i v=0 s=0 h=0
	for ((i = 0; i < n; i++)); do
		[[ $(get "http://$VIP/" "$src") =~ ^0\ 200\ be[0-9]+$ ]] &&
			v=$((v + 1))
		[[ $(get "http://$HOST_ADDR:81/" "$src") =~ ^0\ 200\ be[0-9]+$ ]] &&
			s=$((s + 1))
		[[ $(get "http://$HOST_ADDR:$HOST_PORT/" "$src") == "0 200 host" ]] &&
			h=$((h + 1))
	done
	echo "vip=$v shared=$s host=$h"
}

# flood SRC N: N UDP datagrams from SRC to the VIP (the IPv6 VIP for an
# IPv6 SRC), one per source port.
flood() {
	local t=$VIP:53
	[[ $1 == *:* ]] && t=[$VIP6]:53
	ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/nettool.py" udp-probe \
		--target "$t" --src "$1" --count "$2" --timeout 0.01 \
		>/dev/null 2>&1 || true
}

topo_up 1 2
# IPv6 on the client's link, the backend's and, for the kernel's own
# address, the shared port: before the dataplane starts, which reads the
# host's addresses once.
v6_on "$NS_CLI" "$IF_CLI" "$CLI61/64"
ip -n "$NS_CLI" addr add "$CLI62/64" dev "$IF_CLI" nodad
v6_on "$NS_LB" "$IF_P0" "$HOST_ADDR6/64"
be6_start 1
CLI1=$(cli_addr 1)
CLI2=$(cli_addr 2)

ip -n "$NS_LB" addr add "$HOST_ADDR/24" dev "$IF_P0"
ip netns exec "$NS_LB" "$PY" "$E2E_DIR/nettool.py" http-slow \
	--bind "$HOST_ADDR:$HOST_PORT" --name host >"$E2E_TMP/host.log" 2>&1 &
wait_listen "$NS_LB" tcp "$HOST_ADDR:$HOST_PORT" ||
	die "the host service did not start"

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add tcp $VIP:80 sched rr
backend add tcp $VIP:80 $(be_addr 1):80
service add tcp $HOST_ADDR:81 sched rr
backend add tcp $HOST_ADDR:81 $(be_addr 1):80
addr add $LB_ADDR6_CLI/64 port 0
addr add $LB_ADDR6_BE/64 port 1
snat add $LB_SNAT6 port 1
service add tcp [$VIP6]:80 sched rr
backend add tcp [$VIP6]:80 [$(be_addr6 1)]:80
service add tcp [$HOST_ADDR6]:81 sched rr
backend add tcp [$HOST_ADDR6]:81 [$(be_addr6 1)]:80
EOF
dp_start_shared "$conf"

# ---- boot: the dataplane's own program, pinned maps, its rules ---------------

p0=$(xdp_prog_of "$IF_P0")
p1=$(xdp_prog_of "$IF_P1")
check "the dataplane attached the steering program to both ports ($p0, $p1)" \
	'[ "$p0" = lb_steer ] && [ "$p1" = lb_steer ]'
check "its maps are pinned in $PIN" \
	'[ -e "$PIN/steer_rules" ] && [ -e "$PIN/acl_v4" ] && [ -e "$PIN/counters" ] &&
	 [ -e "$PIN/steer_rules6" ] && [ -e "$PIN/acl_v6" ]'
steer rules | sort >"$E2E_TMP/rules"
e2e_log "rules from the boot configuration:"
sed 's/^/    /' "$E2E_TMP/rules"
want_rules() {
	printf '%-15s %-7s %-11s %s\n' \
		"$VIP" all+arp "" vip \
		"$LB_ADDR_CLI" all+arp "" local \
		"$LB_ADDR_BE" all+arp "" local \
		"$LB_SNAT" all+arp "" snat \
		"$HOST_ADDR" tcp 81 vip \
		"$VIP6" all+nd "" vip \
		"$LB_ADDR6_CLI" all+nd "" local \
		"$LB_ADDR6_BE" all+nd "" local \
		"$LB_SNAT6" all+nd "" snat \
		"$HOST_ADDR6" tcp 81 vip | sort
}
check "the rules (IPv4 and IPv6) are the configuration's, the host's port 8080 not" \
	'diff <(want_rules) "$E2E_TMP/rules" >&2'
check "the dataplane says where the maps are" \
	'grep -q "steering program adopted (maps $PIN)" "$DP_LOG"'

# ---- the host keeps its address while the dataplane balances -----------------

# Requests, not counted, until one is answered: the dataplane resolves
# the client and the backend first.
for ((i = 0; i < 5; i++)); do
	r=$(get "http://$VIP/" "$CLI1")
	e2e_log "warm-up request to the VIP: $r"
	[[ $r =~ ^0\ 200 ]] && break
done
r=$(mixed 20 "$CLI1")
e2e_log "20 + 20 + 20 requests from $CLI1, interleaved: $r"
check "all 20 requests to the VIP answered by the backend" \
	[ "$(field vip "$r")" = 20 ]
check "all 20 requests to $HOST_ADDR:81 answered by the backend" \
	[ "$(field shared "$r")" = 20 ]
check "all 20 requests to $HOST_ADDR:$HOST_PORT answered by the kernel" \
	[ "$(field host "$r")" = 20 ]
e2e_log "counters:"
steer stats | sed 's/^/    /'
check "xsk_vip counted the VIPs' frames ($(counter xsk_vip))" \
	'[ "$(counter xsk_vip)" -ge 80 ]'
check "xsk_snat counted the backend's replies ($(counter xsk_snat))" \
	'[ "$(counter xsk_snat)" -ge 80 ]'
check "pass counted the host's frames ($(counter pass))" \
	'[ "$(counter pass)" -ge 40 ]'
check "xsk_arp counted ARP for our addresses ($(counter xsk_arp))" \
	'[ "$(counter xsk_arp)" -ge 1 ]'

# ---- IPv6 through the program ------------------------------------------------

# The client resolves the IPv6 VIP by neighbour discovery, steered to
# the dataplane; HOST_ADDR6 by the kernel, which has it (only port 81
# is steered).
v0=$(counter xsk_vip)
a0=$(counter xsk_arp)
for ((i = 0; i < 5; i++)); do
	r=$(get "http://[$VIP6]/" "$CLI61")
	e2e_log "warm-up request to [$VIP6]: $r"
	[[ $r =~ ^0\ 200 ]] && break
done
n=0
m=0
for ((i = 0; i < 10; i++)); do
	[[ $(get "http://[$VIP6]/" "$CLI61") =~ ^0\ 200\ be1$ ]] && n=$((n + 1))
	[[ $(get "http://[$HOST_ADDR6]:81/" "$CLI61") =~ ^0\ 200\ be1$ ]] &&
		m=$((m + 1))
done
check "10/10 requests to the IPv6 VIP answered through the program ($n)" \
	[ "$n" = 10 ]
check "10/10 requests to the kernel's IPv6 address, port 81, answered ($m)" \
	[ "$m" = 10 ]
check "xsk_vip counted them ($v0 -> $(counter xsk_vip))" \
	'[ "$(counter xsk_vip)" -ge $((v0 + 60)) ]'
check "xsk_arp counted neighbour discovery for the VIP ($a0 -> $(counter xsk_arp))" \
	'[ "$(counter xsk_arp)" -gt "$a0" ]'

# ---- lb-control keeps the maps -----------------------------------------------

ctl_start --acl-auto "3/10s,ttl=8s"
check "lb-control opened the pinned maps" \
	'grep -q "XDP steering maps in $PIN" "$CTL_LOG"'
steer rules | sort >"$E2E_TMP/rules"
check "lb-control left the rules as they were" \
	'diff <(want_rules) "$E2E_TMP/rules" >&2'

# live_service VIP HOST BACKEND SRC ALL: a service added through
# lb-control on VIP (HOST: VIP as in a URL) gets its whole-address rule
# (ALL: the rule's protocol column as a regex) and is answered from SRC;
# deleted, it loses the rule once its flows ran out.
live_service() {
	# shellcheck disable=SC2034 # all is read by check's condition
	local vip=$1 ep=$2 be=$3 src=$4 all=$5 n=0 gone=0 i
	ctl_do service add tcp "$ep:80" sched rr
	ctl_do backend add tcp "$ep:80" "$be:80"
	check "a service added on $vip gets its rule" \
		'steer rules | grep -Eq "^$vip +$all +vip"'
	for i in 1 2 3; do
		[[ $(get "http://$ep/" "$src") =~ ^0\ 200\ be[0-9]+$ ]] &&
			n=$((n + 1))
	done
	check "and is answered through the program ($n/3)" [ "$n" = 3 ]
	ctl_do service del tcp "$ep:80"
	for ((i = 0; i < 150; i++)); do
		steer rules | has "^$vip " || { gone=1; break; }
		sleep 0.2
	done
	check "a service deleted loses its rule once its flows ran out" \
		[ "$gone" = 1 ]
}

VIP2=$CLI_NET.101
ip -n "$NS_CLI" neigh replace "$VIP2" lladdr "$(if_mac "$NS_LB" "$IF_P0")" \
	dev "$IF_CLI" nud permanent
live_service "$VIP2" "$VIP2" "$(be_addr 1)" "$CLI1" 'all\+arp'
# IPv6: into steer_rules6, the VIP resolved by neighbour discovery.
VIP62=$CLI_NET6::101
live_service "$VIP62" "[$VIP62]" "[$(be_addr6 1)]" "$CLI61" 'all\+nd'
check "the other IPv6 rules stay" \
	'[ "$(steer rules | grep -c ":")" = 5 ]'

ctl stats >"$E2E_TMP/stats.txt"
check "lbctl stats shows the program's counters" \
	'grep -Eq "^xsk_vip +[1-9][0-9]* " "$E2E_TMP/stats.txt"'
ctl_json "$E2E_TMP/stats.json" stats
v=$(jq_get "$E2E_TMP/stats.json" 'd["xdp"]["counters"]["xsk_vip"]["packets"]')
check "lbctl --json stats has them ($v xsk_vip packets)" '[ "$v" -ge 80 ]'
m=$(ip netns exec "$NS_LB" curl -s "http://$CTL_METRICS/metrics" |
	grep '^lb_xdp_packets_total{verdict="xsk_vip"}' | awk '{ print $2 }')
check "/metrics has them (lb_xdp_packets_total xsk_vip $m)" \
	'[ -n "$m" ] && [ "$m" -ge 80 ]'

# ---- source ACL ----------------------------------------------------------------

# The client's kernel probes its neighbours now and then; a probe lost
# while a source was denied (its TCP getting nowhere) would leave the VIP
# unresolved for a while. What the ACL does to ARP is not tested here
# (ARP passes it), so the client knows the port's MAC for good.
mac0=$(if_mac "$NS_LB" "$IF_P0")
for a in "$VIP" "$HOST_ADDR"; do
	ip -n "$NS_CLI" neigh replace "$a" lladdr "$mac0" dev "$IF_CLI" \
		nud permanent
done

# acl_flood SRC N [COUNTER]: "rx=<dataplane rx delta> drop=<COUNTER
# delta>" of N datagrams from SRC to the VIP; COUNTER is drop_deny unless
# given. The counts are read once the N datagrams are accounted for, or
# after 10 s: a starved worker may take seconds to receive them.
acl_flood() {
	local rx0 rx1 d0 d1 c=${3:-drop_deny} t0=$SECONDS
	rx0=$(dp_rx)
	d0=$(counter "$c")
	flood "$1" "$2"
	while :; do
		rx1=$(dp_rx)
		d1=$(counter "$c")
		if [ $((rx1 - rx0 + d1 - d0)) -ge "$2" ] ||
			[ $((SECONDS - t0)) -ge 10 ]; then
			break
		fi
		sleep 0.2
	done
	echo "rx=$((rx1 - rx0)) drop=$((d1 - d0))"
}

r=$(acl_flood "$CLI2" 100)
e2e_log "no ACL entry, 100 datagrams from $CLI2: $r"
check "without an entry the datagrams reach the dataplane ($r)" \
	'[ "$(field rx "$r")" -ge 100 ] && [ "$(field drop "$r")" = 0 ]'

ctl_do acl deny "$CLI2"
r=$(acl_flood "$CLI2" 100)
e2e_log "acl deny $CLI2, 100 datagrams from it: $r"
check "denied: the datagrams die in the driver (drop_deny +$(field drop "$r"))" \
	'[ "$(field drop "$r")" -ge 100 ]'
check "denied: the dataplane's rx stays still (+$(field rx "$r"))" \
	'[ "$(field rx "$r")" -le 5 ]'
r=$(mixed 2 "$CLI2")
check "denied: neither the VIP nor the host answers $CLI2 ($r)" \
	'[ "$r" = "vip=0 shared=0 host=0" ]'
r=$(mixed 2 "$CLI1")
check "another client is not affected ($r)" \
	'[ "$r" = "vip=2 shared=2 host=2" ]'
ctl acl list >"$E2E_TMP/acl.txt"
check "acl list shows the entry" \
	'grep -Eq "^$CLI2/32 +deny +manual +never$" "$E2E_TMP/acl.txt"'
ctl_do acl allow "$CLI2"
r=$(acl_flood "$CLI2" 100)
check "acl allow: the datagrams reach the dataplane again ($r)" \
	'[ "$(field rx "$r")" -ge 100 ] && [ "$(field drop "$r")" = 0 ]'
ctl_do acl deny "$CLI2"

# refused BAD...: `acl deny BAD` is refused with a message, for each BAD
# (its words separate arguments).
refused() {
	local bad rc out
	for bad in "$@"; do
		rc=0
		# shellcheck disable=SC2086 # the words of $bad are arguments
		out=$(ctl acl deny $bad 2>&1) || rc=$?
		check "acl deny $bad is refused ($out)" \
			'[ "$rc" != 0 ] && [ -n "$out" ]'
	done
}

# Refused, and nothing changed.
refused "$CLI2/16" "10.11.0.300" "$CLI2 expires 90" "$CLI2 expires 9000h" \
	"$CLI2 forever"
rc=0
out=$(ctl acl del "$CLI_NET.77" 2>&1) || rc=$?
check "acl del of a prefix without an entry is refused ($out)" \
	'[ "$rc" != 0 ]'
check "the refused commands changed nothing" \
	'ctl acl list | diff "$E2E_TMP/acl.txt" - >&2'

ctl_do acl deny "$CLI2/32" lb-only
r=$(mixed 2 "$CLI2")
check "lb-only: the host still answers $CLI2, the dataplane does not ($r)" \
	'[ "$r" = "vip=0 shared=0 host=2" ]'

ctl_do acl deny "$CLI_NET.0/24"
ctl_do acl allow "$CLI2"
r=$(acl_flood "$CLI2" 100)
check "allow lifts the deny of the /24 for $CLI2 ($r)" \
	'[ "$(field rx "$r")" -ge 100 ] && [ "$(field drop "$r")" = 0 ]'
r=$(mixed 1 "$CLI1")
check "and the /24 still denies $CLI1 ($r)" '[ "$r" = "vip=0 shared=0 host=0" ]'
ctl_do acl del "$CLI_NET.0/24"
ctl_do acl del "$CLI2/32"
r=$(mixed 1 "$CLI1")
check "acl del: $CLI1 is answered again ($r)" '[ "$r" = "vip=1 shared=1 host=1" ]'

ctl_do acl deny "$CLI2" expires 3s
r=$(acl_flood "$CLI2" 50)
check "deny with an expiry: denied at first ($r)" \
	'[ "$(field drop "$r")" -ge 50 ] && [ "$(field rx "$r")" -le 5 ]'
sleep 3.5
r=$(acl_flood "$CLI2" 50)
e2e_log "expired, 50 datagrams from $CLI2: $r; counters now:" \
	"$(steer stats | awk '{ printf "%s=%s ", $1, $2 }')"
check "expired: the datagrams reach the dataplane again ($r)" \
	'[ "$(field rx "$r")" -ge 50 ] && [ "$(field drop "$r")" = 0 ]'
r=$(mixed 2 "$CLI2")
check "expired: both answer $CLI2 again ($r)" \
	'[ "$r" = "vip=2 shared=2 host=2" ]'
sleep 1.5
check "lb-control removed the expired entry" \
	'! ctl acl list | has "^$CLI2/"'

# ---- source ACL, IPv6 -----------------------------------------------------------

ip -n "$NS_CLI" -6 neigh replace "$VIP6" lladdr "$mac0" dev "$IF_CLI" \
	nud permanent
r=$(acl_flood "$CLI62" 100)
e2e_log "no ACL entry, 100 datagrams from $CLI62: $r"
check "without an entry the IPv6 datagrams reach the dataplane ($r)" \
	'[ "$(field rx "$r")" -ge 100 ] && [ "$(field drop "$r")" = 0 ]'
ctl_do acl deny "$DENY_NET6::/64"
r=$(acl_flood "$CLI62" 100)
e2e_log "acl deny $DENY_NET6::/64, 100 datagrams from $CLI62: $r"
check "IPv6 /64 denied: its datagrams die in the driver (drop_deny +$(field drop "$r"))" \
	'[ "$(field drop "$r")" -ge 100 ]'
check "IPv6 /64 denied: the dataplane's rx stays still (+$(field rx "$r"))" \
	'[ "$(field rx "$r")" -le 5 ]'
r=$(get "http://[$VIP6]/" "$CLI61")
check "another IPv6 client is answered ($r)" '[[ $r =~ ^0\ 200\ be1$ ]]'
r=$(mixed 1 "$CLI1")
check "IPv4 is not affected ($r)" '[ "$r" = "vip=1 shared=1 host=1" ]'
ctl acl list >"$E2E_TMP/acl6.txt"
check "acl list shows the IPv6 entry" \
	'grep -Eq "^$DENY_NET6::/64 +deny +manual +never$" "$E2E_TMP/acl6.txt"'
ctl_json "$E2E_TMP/acl6.json" acl list
v=$(jq_get "$E2E_TMP/acl6.json" '[e["prefix"] for e in d["entries"]]')
check "acl list --json has it ($v)" 'printf "%s" "$v" | has "$DENY_NET6::/64"'
refused "$CLI62/64" "$DENY_NET6::/129" "$DENY_NET6::g/64" "$DENY_NET6:::2"
rc=0
out=$(ctl acl del "$DENY_NET6::/48" 2>&1) || rc=$?
check "acl del of an IPv6 prefix without an entry is refused ($out)" \
	'[ "$rc" != 0 ]'
check "the refused commands changed nothing" \
	'ctl acl list | diff "$E2E_TMP/acl6.txt" - >&2'
ctl_do acl allow "$CLI62"
r=$(acl_flood "$CLI62" 100)
check "acl allow of the /128 lifts the /64's deny ($r)" \
	'[ "$(field rx "$r")" -ge 100 ] && [ "$(field drop "$r")" = 0 ]'
ctl_do acl del "$CLI62"
ctl_do acl del "$DENY_NET6::/64"
r=$(acl_flood "$CLI62" 100)
check "acl del: the IPv6 datagrams reach the dataplane again ($r)" \
	'[ "$(field rx "$r")" -ge 100 ] && [ "$(field drop "$r")" = 0 ]'
check "no IPv6 entry is left" '! ctl acl list | has "^$DENY_NET6:"'

# ---- automatic deny ------------------------------------------------------------

# One new connection a second per client on VIP3; more are refused with a
# RST, and each refusal that fills a worker's negative cache is a reject
# record for lb-control.
VIP3=$CLI_NET.102
ctl_do service add tcp "$VIP3:80" sched rr admit-rate 1 admit-burst 1 \
	admit-key client admit-reject rst
ctl_do backend add tcp "$VIP3:80" "$(be_addr 1):80"
ip -n "$NS_CLI" neigh replace "$VIP3" lladdr "$mac0" dev "$IF_CLI" \
	nud permanent
denied=0
for ((i = 0; i < 40 && !denied; i++)); do
	get "http://$VIP3/" "$CLI2" >/dev/null
	ctl acl list | has "^$CLI2/32 .* auto " && denied=1
done
e2e_log "after $i connections to $VIP3 from $CLI2:"
ctl acl list | sed 's/^/    /' >&2
check "a client the admission control kept rejecting is denied (auto)" \
	'ctl acl list | grep -Eq "^$CLI2/32 +deny-lb +auto +in [0-9]+s$"'
r=$(acl_flood "$CLI2" 50 drop_deny_lb)
check "auto-denied: its datagrams die in the driver ($r)" \
	'[ "$(field drop "$r")" -ge 50 ] && [ "$(field rx "$r")" -le 5 ]'
r=$(get "http://$HOST_ADDR:$HOST_PORT/" "$CLI2")
check "auto-denied (lb-only): the host still answers $CLI2 ($r)" \
	[ "$r" = "0 200 host" ]
r=$(mixed 1 "$CLI1")
check "the other client is not denied ($r)" '[ "$r" = "vip=1 shared=1 host=1" ]'
ctl_json "$E2E_TMP/acl.json" acl list
v=$(jq_get "$E2E_TMP/acl.json" 'd["auto"]["denies"]')
check "acl list --json counts the automatic deny ($v)" '[ "$v" -ge 1 ]'
gone=0
for ((i = 0; i < 100; i++)); do
	ctl acl list | has "^$CLI2/" || { gone=1; break; }
	sleep 0.2
done
check "the automatic deny expired" [ "$gone" = 1 ]
r=$(mixed 1 "$CLI2")
check "and the dataplane hears $CLI2 again ($r)" \
	'[ "$r" = "vip=1 shared=1 host=1" ]'
ctl_do service del tcp "$VIP3:80"

# ---- lb-control restart ----------------------------------------------------------

ctl_do acl deny "$CLI2"
rc=0
ctl_stop || rc=$?
check "lb-control exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]
r=$(mixed 1 "$CLI2")
check "without lb-control the deny holds ($r)" '[ "$r" = "vip=0 shared=0 host=0" ]'
ctl_start --acl-auto "3/10s,ttl=8s"
check "a restarted lb-control finds the entry in the pinned map" \
	'ctl acl list | grep -Eq "^$CLI2/32 +deny +manual +never$"'

# ---- restart -----------------------------------------------------------------

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]
p0=$(xdp_prog_of "$IF_P0")
check "the PMD removed the program on close ($p0)" [ "$p0" = - ]
r=$(mixed 2 "$CLI1")
check "without the dataplane the host service answers ($r)" \
	'[ "$r" = "vip=0 shared=0 host=2" ]'

: >"$DP_LOG"
dp_start_shared "$conf"
check "the restarted dataplane kept the pinned rules, added none" \
	'grep -q "steering rules: 0 added, 0 removed, 5 kept (IPv6: 0, 0, 5)" "$DP_LOG"'
r=$(mixed 3 "$CLI1")
e2e_log "restarted: $r"
check "the pinned rules steer again ($r)" '[ "$r" = "vip=3 shared=3 host=3" ]'
r=$(mixed 1 "$CLI2")
check "the deny entry outlived the restart ($r)" \
	'[ "$r" = "vip=0 shared=0 host=0" ]'

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]

e2e_finish
