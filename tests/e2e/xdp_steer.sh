#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# lb-dataplane on net_af_xdp ports with Sluice's XDP steering program,
# on an interface it shares with the kernel: the LB namespace's client-side
# veth also carries a kernel address (HOST_ADDR) with an HTTP service of
# the kernel's on it.
#   - started by the PMD (xdp_prog=), the program's maps are empty: all
#     traffic is the kernel's, the host service answers, the VIP does not;
#   - after lb-steer adopts both ports into pinned maps and the VIP, the
#     dataplane's addresses and the SNAT address are steered: HTTP to the
#     VIP is load-balanced while the host service keeps answering,
#     interleaved; the counters agree (xsk_vip, xsk_arp, pass);
#   - deny on the second client address drops both its VIP and host
#     traffic in the driver (drop_deny), deny-lb only its VIP traffic,
#     and removing the entry restores both;
#   - lb-dataplane exits 0 on SIGTERM and the PMD removes the program;
#     a restarted dataplane adopted into the same pins finds the rules
#     again without anyone adding them.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init xdp_steer
e2e_need_dataplane

# lb-steer of the same build as the dataplane, else $LB_STEER.
d=${LB_BUILD_DIR:-${BUILD_DIR:-$E2E_TOP/build}}
LB_STEER=${LB_STEER:-$d/bpf/lb-steer}
[ -x "$LB_STEER" ] || e2e_skip "lb-steer is not built ($LB_STEER)"
grep -qs ' /sys/fs/bpf bpf ' /proc/mounts ||
	e2e_skip "bpffs is not mounted on /sys/fs/bpf (run tools/setup)"
ldd "$LB_DATAPLANE" | grep -q librte_net_af_xdp ||
	compgen -G "/usr/lib/*/dpdk/pmds-*/librte_net_af_xdp.so*" >/dev/null ||
	e2e_skip "DPDK has no net_af_xdp PMD"
e2e_need_tools nsenter

HOST_ADDR=$CLI_NET.50 # the kernel's own address on the shared veth
HOST_PORT=8080
PIN=/sys/fs/bpf/sluice/e2e-$E2E_TAG
OBJ= # the program's object, for xdp_prog=

# Pins of runs that are gone (tag no longer alive) go too.
for p in /sys/fs/bpf/sluice/e2e-*; do
	[ -d "$p" ] || continue
	t=${p##*/e2e-}
	[ "$t" = "$E2E_TAG" ] || tag_alive "$t" || rm -rf "$p"
done
rm -rf "$PIN"

# The pins outlive the namespaces: removed on exit, whatever happened,
# before lib.sh's cleanup, which sees the test's exit status.
# shellcheck disable=SC2317 # run by the EXIT trap
xdp_on_exit() {
	local rc=$?
	trap - ERR
	set +e
	rm -rf "$PIN"
	(exit "$rc")
	e2e_cleanup
}
trap xdp_on_exit EXIT

# lb-steer in the LB namespace's network only: `ip netns exec` would also
# give it a /sys without bpffs.
steer() {
	nsenter --net="/run/netns/$NS_LB" "$LB_STEER" -d "$PIN" "$@"
}

# counter NAME: a counter of the program, packets.
counter() {
	steer stats | awk -v n="$1" '$1 == n { print $2 }'
}

# dp_start_xdp CONFIG: dp_start of lib.sh, on net_af_xdp ports that load
# the steering program.
dp_start_xdp() {
	local conf=$1 i rc
	DP_LOG=$E2E_TMP/dataplane.log
	e2e_log "config:"
	sed 's/^/    /' "$conf"
	# shellcheck disable=SC2086
	ip netns exec "$NS_LB" "$LB_DATAPLANE" \
		-l "${LB_EAL_CORES:-0-1}" --no-pci --no-huge \
		-m "${LB_EAL_MEM:-512}" --no-shconf --file-prefix "$DP_PREFIX" \
		--vdev="net_af_xdp0,iface=$IF_P0,xdp_prog=$OBJ" \
		--vdev="net_af_xdp1,iface=$IF_P1,xdp_prog=$OBJ" \
		-- --config "$conf" ${LB_DP_ARGS:-} \
		</dev/null >"$DP_LOG" 2>&1 &
	DP_PID=$!
	for ((i = 0; i < E2E_DP_START_TIMEOUT * 5; i++)); do
		if ! kill -0 "$DP_PID" 2>/dev/null; then
			rc=0
			wait "$DP_PID" || rc=$?
			DP_PID=
			die "lb-dataplane exited with status $rc while starting"
		fi
		if tel /lb/stats >/dev/null 2>&1; then
			e2e_log "lb-dataplane up on net_af_xdp (pid $DP_PID)"
			return 0
		fi
		sleep 0.2
	done
	die "lb-dataplane did not answer /lb/stats within" \
		"${E2E_DP_START_TIMEOUT}s"
}

# xdp_prog_of IF: the name of the XDP program on IF, or "-".
xdp_prog_of() {
	local name
	name=$(ip -n "$NS_LB" -d link show "$1" |
		sed -n 's/.*prog\/xdp id [0-9]* name \([^ ]*\).*/\1/p')
	echo "${name:--}"
}

# get URL [SRC]: "curl_status http_code body" of one request from the
# client namespace.
get() {
	local out rc=0
	out=$(ip netns exec "$NS_CLI" curl -sS --connect-timeout 2 \
		--max-time 4 ${2:+--interface "$2"} -w ' %{http_code}' "$1" \
		2>/dev/null) || rc=$?
	echo "$rc ${out##* } $(echo "${out% *}" | tr -d '\r\n ')"
}

# mixed N SRC: N requests to the VIP and N to the host service,
# alternating; prints "vip=OK host=OK" counts.
mixed() {
	local n=$1 src=$2 i v=0 h=0
	for ((i = 0; i < n; i++)); do
		[[ $(get "http://$VIP/" "$src") =~ ^0\ 200\ be[0-9]+$ ]] &&
			v=$((v + 1))
		[[ $(get "http://$HOST_ADDR:$HOST_PORT/" "$src") == "0 200 host" ]] &&
			h=$((h + 1))
	done
	echo "vip=$v host=$h"
}

topo_up 1 2
be_start 1
CLI1=$(cli_addr 1)
CLI2=$(cli_addr 2)

ip -n "$NS_LB" addr add "$HOST_ADDR/24" dev "$IF_P0"
ip netns exec "$NS_LB" "$PY" "$E2E_DIR/nettool.py" http-slow \
	--bind "$HOST_ADDR:$HOST_PORT" --name host >"$E2E_TMP/host.log" 2>&1 &
wait_listen "$NS_LB" tcp "$HOST_ADDR:$HOST_PORT" ||
	die "the host service did not start"

OBJ=$E2E_TMP/steer.bpf.o
"$LB_STEER" obj "$OBJ"

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add tcp $VIP:80 sched rr
backend add tcp $VIP:80 $(be_addr 1):80
EOF
dp_start_xdp "$conf"

p0=$(xdp_prog_of "$IF_P0")
p1=$(xdp_prog_of "$IF_P1")
check "the PMD attached the steering program to both ports ($p0, $p1)" \
	'[ "$p0" = lb_steer ] && [ "$p1" = lb_steer ]'

# ---- before adoption: the PMD's copy has empty maps -------------------------

r=$(mixed 3 "$CLI1")
e2e_log "before adoption, 3 + 3 requests from $CLI1: $r"
check "before adoption the host service answers (3/3)" \
	[ "$(field host "$r")" = 3 ]
check "before adoption the VIP does not (0/3)" [ "$(field vip "$r")" = 0 ]

# ---- adopted, with rules -----------------------------------------------------

steer adopt "$IF_P0"
steer adopt "$IF_P1"
steer rule add "$VIP" vip
steer rule add "$LB_ADDR_CLI" local
steer rule add "$LB_ADDR_BE" local
steer rule add "$LB_SNAT" snat
e2e_log "rules:"
steer rules | sed 's/^/    /'
p0=$(xdp_prog_of "$IF_P0")
check "after adoption a steering program is attached ($p0)" \
	[ "$p0" = lb_steer ]

# The client's kernel still remembers that the VIP did not answer ARP
# before the adoption (INCOMPLETE, then FAILED, refusing the next
# connection at once); start it afresh. One request, not counted, lets the
# dataplane resolve the client and the backend first.
ip -n "$NS_CLI" neigh flush to "$VIP"
e2e_log "warm-up request to the VIP: $(get "http://$VIP/" "$CLI1")"
r=$(mixed 20 "$CLI1")
e2e_log "20 + 20 requests from $CLI1, alternating: $r"
check "all 20 requests to the VIP answered by the backend" \
	[ "$(field vip "$r")" = 20 ]
check "all 20 requests to the host service answered by the kernel" \
	[ "$(field host "$r")" = 20 ]
e2e_log "counters:"
steer stats | sed 's/^/    /'
check "xsk_vip counted the VIP's frames ($(counter xsk_vip))" \
	'[ "$(counter xsk_vip)" -ge 40 ]'
check "xsk_snat counted the backend's replies ($(counter xsk_snat))" \
	'[ "$(counter xsk_snat)" -ge 40 ]'
check "pass counted the host's frames ($(counter pass))" \
	'[ "$(counter pass)" -ge 40 ]'
check "xsk_arp counted ARP for our addresses ($(counter xsk_arp))" \
	'[ "$(counter xsk_arp)" -ge 1 ]'

# ---- source ACL --------------------------------------------------------------

steer acl deny "$CLI2/32"
d0=$(counter drop_deny)
r=$(mixed 3 "$CLI2")
d1=$(counter drop_deny)
e2e_log "deny $CLI2: 3 + 3 requests from it: $r (drop_deny $d0 -> $d1)"
check "denied: neither the VIP nor the host answers $CLI2" \
	'[ "$(field vip "$r")" = 0 ] && [ "$(field host "$r")" = 0 ]'
check "denied: the SYNs died in the driver (drop_deny +$((d1 - d0)))" \
	'[ $((d1 - d0)) -ge 6 ]'
r=$(mixed 3 "$CLI1")
check "another client is not affected ($r)" \
	'[ "$(field vip "$r")" = 3 ] && [ "$(field host "$r")" = 3 ]'

steer acl deny-lb "$CLI2/32"
r=$(mixed 3 "$CLI2")
e2e_log "deny-lb $CLI2: 3 + 3 requests from it: $r"
check "deny-lb: the host still answers $CLI2, the VIP does not" \
	'[ "$(field vip "$r")" = 0 ] && [ "$(field host "$r")" = 3 ]'
check "deny-lb: counted ($(counter drop_deny_lb))" \
	'[ "$(counter drop_deny_lb)" -ge 3 ]'

steer acl del "$CLI2/32"
r=$(mixed 3 "$CLI2")
check "entry removed: both answer $CLI2 again ($r)" \
	'[ "$(field vip "$r")" = 3 ] && [ "$(field host "$r")" = 3 ]'

# ---- restart -----------------------------------------------------------------

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]
p0=$(xdp_prog_of "$IF_P0")
check "the PMD removed the program on close ($p0)" [ "$p0" = - ]
r=$(mixed 2 "$CLI1")
check "without the dataplane the host service answers ($r)" \
	[ "$(field host "$r")" = 2 ]

dp_start_xdp "$conf"
steer adopt "$IF_P0"
steer adopt "$IF_P1"
r=$(mixed 5 "$CLI1")
e2e_log "restarted and adopted, no rule added: $r"
check "the pinned rules steer the VIP again (5/5)" \
	[ "$(field vip "$r")" = 5 ]
check "and the host service still answers (5/5)" \
	[ "$(field host "$r")" = 5 ]

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]

e2e_finish
