#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The automatic deny of IPv6 sources (lb-control --acl-auto) on the XDP
# steering program: an IPv6 service admits one new connection a second
# per /64 (admit-key prefix, admit-prefix6 at its default), refusing the
# others with a RST;
#   - a client that hammers it is denied as its /64 (deny-lb, listed as
#     auto, counted by `acl list --json`);
#   - its SYNs then die in the driver: counted as drop_deny_lb, none
#     answered, the dataplane receives none of its datagrams;
#   - a client in another /64 is still served, through the same program;
#   - the deny expires and the dataplane hears the /64 again.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admit_lib.sh"
. "$(dirname "$0")/xdp_lib.sh"

e2e_init xdp_autodeny6
e2e_need_control

xdp_init
EP6="[$VIP6]:80"
GOOD=$(cli_addr6 1) # 2001:db8:11::2, on the client's link
BAD_NET6=2001:db8:14 # the hammering client's /64, routed through GOOD
BAD=$BAD_NET6::2
TTL=20

# get SRC: "curl_status http_code body" of one request to the VIP.
get() {
	local out rc=0
	out=$(ip netns exec "$NS_CLI" curl -gsS --connect-timeout 3.5 \
		--max-time 8 --interface "$1" -w ' %{http_code}' \
		"http://[$VIP6]/" 2>/dev/null) || rc=$?
	echo "$rc ${out##* } $(echo "${out% *}" | tr -d '\r\n ')"
}

# served SRC N: how many of N requests from SRC, one every 1.1 s (the
# rate of its /64), the backend answered.
served() {
	local i n=0
	for ((i = 0; i < $2; i++)); do
		[[ $(get "$1") =~ ^0\ 200\ be1$ ]] && n=$((n + 1))
		sleep 1.1
	done
	echo "$n"
}

# flood SRC N: N UDP datagrams from SRC to the VIP, then "rx=R drop=D":
# frames the dataplane received and drop_deny_lb counted meanwhile.
flood() {
	local rx0 rx1 d0 d1 t0=$SECONDS
	rx0=$(tel /lb/stats -k rx)
	d0=$(counter drop_deny_lb)
	ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/nettool.py" udp-probe \
		--target "[$VIP6]:53" --src "$1" --count "$2" --timeout 0.01 \
		>/dev/null 2>&1 || true
	while :; do
		rx1=$(tel /lb/stats -k rx)
		d1=$(counter drop_deny_lb)
		[ $((rx1 - rx0 + d1 - d0)) -ge "$2" ] && break
		[ $((SECONDS - t0)) -ge 10 ] && break
		sleep 0.2
	done
	echo "rx=$((rx1 - rx0)) drop=$((d1 - d0))"
}

topo_up 1
v6_on "$NS_CLI" "$IF_CLI" "$GOOD/64"
ip -n "$NS_CLI" addr add "$BAD/64" dev "$IF_CLI" nodad
be6_start 1

conf=$E2E_TMP/lb.conf
conf_ports6 "$conf"
cat >>"$conf" <<EOF
route add $BAD_NET6::/64 via $GOOD port 0
service add tcp $EP6 sched rr admit-rate 1 admit-burst 1 admit-key prefix admit-reject rst
backend add tcp $EP6 [$(be_addr6 1)]:80
EOF
dp_start_shared "$conf"
check "the dataplane pinned its IPv6 ACL in $PIN" '[ -e "$PIN/acl_v6" ]'
ctl_start --acl-auto "3/10s,ttl=${TTL}s"

# The client resolves the VIP, the dataplane the client: a request, not
# counted, until one is answered.
for ((i = 0; i < 5; i++)); do
	r=$(get "$GOOD")
	e2e_log "warm-up request from $GOOD: $r"
	[[ $r =~ ^0\ 200 ]] && break
	sleep 1.1
done
sleep 1.1

# ---- the hammering /64 is denied in the driver ----------------------------------

admit_gen "$BAD" "$EP6" 100 2 "$E2E_TMP/hammer"
e2e_log "$BAD, 100 connections/s for 2 s: $(cat "$E2E_TMP/hammer")"
check "the admission control refused it with RSTs" \
	'[ "$(jf "$E2E_TMP/hammer" refused)" -gt 0 ]'
for ((i = 0; i < 50; i++)); do
	ctl acl list | has "^$BAD_NET6::/64 .* auto " && break
	sleep 0.2
done
ctl acl list | sed 's/^/    /' >&2
check "its /64 is denied automatically (deny-lb, auto)" \
	'ctl acl list | grep -Eq "^$BAD_NET6::/64 +deny-lb +auto +in [0-9]+s$"'
check "and only that: no IPv4 entry, no other IPv6 one" \
	'[ "$(ctl acl list | grep -c -E "^[0-9a-f.:]+/[0-9]+ ")" = 1 ]'
ctl_json "$E2E_TMP/acl.json" acl list
v=$(jq_get "$E2E_TMP/acl.json" 'd["auto"]["denies"]')
check "acl list --json counts the automatic deny ($v)" '[ "$v" = 1 ]'
v=$(jq_get "$E2E_TMP/acl.json" 'd["auto"]["active"]')
check "acl list --json: one deny in force ($v)" '[ "$v" = 1 ]'

d0=$(counter drop_deny_lb)
admit_gen "$BAD" "$EP6" 20 1 "$E2E_TMP/denied"
d1=$(counter drop_deny_lb)
e2e_log "$BAD denied, 20 connections in 1 s: $(cat "$E2E_TMP/denied")" \
	"drop_deny_lb $d0 -> $d1"
check "denied: none of its connections is answered, not even refused" \
	'[ "$(jf "$E2E_TMP/denied" ok)" = 0 ] &&
	 [ "$(jf "$E2E_TMP/denied" refused)" = 0 ]'
check "denied: its SYNs are counted as XDP drops ($((d1 - d0)) >= 20)" \
	'[ $((d1 - d0)) -ge 20 ]'
r=$(flood "$BAD" 50)
check "denied: its datagrams die in the driver ($r)" \
	'[ "$(field drop "$r")" -ge 50 ] && [ "$(field rx "$r")" -le 5 ]'

n=$(served "$GOOD" 3)
check "a client in another /64 is still served ($n/3)" [ "$n" = 3 ]

# ---- expiry ----------------------------------------------------------------------

gone=0
for ((i = 0; i < 5 * (TTL + 10); i++)); do
	ctl acl list | has "^$BAD_NET6:" || { gone=1; break; }
	sleep 0.2
done
check "the automatic deny expired" [ "$gone" = 1 ]
r=$(flood "$BAD" 50)
check "the dataplane hears $BAD again ($r)" \
	'[ "$(field rx "$r")" -ge 50 ] && [ "$(field drop "$r")" = 0 ]'
n=$(served "$BAD" 1)
check "and serves it again ($n/1)" [ "$n" = 1 ]

e2e_finish
