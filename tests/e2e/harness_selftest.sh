#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The end-to-end harness checked without lb-dataplane, so that a failing
# dataplane test is never the harness's fault: the same topology, backends
# and clients as the dataplane tests, with the LB namespace forwarding
#   1. through the kernel (addresses on its veths, ip_forward, routes), and
#   2. when dpdk-testpmd is installed, through testpmd forwarding between
#      two AF_PACKET ports on the same veths (io mode, no kernel address),
#      which exercises what the dataplane's ports see;
# plus the telemetry client's error path and the removal of the leftovers
# of a run killed with SIGKILL.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init harness_selftest
e2e_need_tools wrk

topo_up 3 2
BE1=$(be_addr 1)
BE2=$(be_addr 2)
BE3=$(be_addr 3)

be_start 1
be_start 2
be_start 3 503 300
be_udp_start 1 9000

# client_checks LABEL: the clients of the dataplane tests, pointed
# straight at backend addresses.
client_checks() {
	local label=$1 t
	http_seq "http://$BE1/" 50 "$E2E_TMP/seq1"
	t=$(http_tally "$E2E_TMP/seq1")
	e2e_log "$label: 50 requests to be1: $t"
	check "$label: 50/50 answered by be1" \
		'[ "$(field ok "$t")" = 50 ] && [ "$(field be1 "$t")" = 50 ]'
	[ "$(field ok "$t")" = 50 ] || http_failures "$E2E_TMP/seq1"

	http_seq "http://$BE2/" 20 "$E2E_TMP/seq2" "$(cli_addr 2)"
	t=$(http_tally "$E2E_TMP/seq2")
	e2e_log "$label: 20 requests to be2 from $(cli_addr 2): $t"
	check "$label: the second client address reaches be2" \
		[ "$(field be2 "$t")" = 20 ]

	http_seq "http://$BE3/" 3 "$E2E_TMP/seq3"
	e2e_log "$label: be3 (status 503, delay 300 ms):" \
		"$(tr '\n' ';' <"$E2E_TMP/seq3")"
	check "$label: be3 answers 503 'be3' after >= 0.3 s" \
		awk '$2 != 0 || $3 != 503 || $5 != "be3" || $4 < 0.3 {bad = 1}
			END {exit bad + (NR != 3)}' "$E2E_TMP/seq3"

	t=$(wrk_run "http://$BE1/" 3 2 20 "$E2E_TMP/wrk")
	e2e_log "$label: wrk 3 s, 2 threads, 20 connections: $t"
	check "$label: wrk had no socket error and no non-2xx" \
		'[ "$(field socket_errors "$t")" = 0 ] &&
		 [ "$(field non2xx "$t")" = 0 ] &&
		 [ "$(field requests "$t")" -gt 0 ]'

	t=$(udp_probe "$BE1:9000" 50 20000) || true
	e2e_log "$label: 50 datagrams to be1:9000: $t"
	check "$label: 50/50 datagrams echoed by be1" \
		grep -q '"answered": 50, "by": {"be1": 50}' <<<"$t"
}

# ---- 1. the kernel forwards ------------------------------------------------

ip -n "$NS_LB" addr add "$LB_ADDR_CLI/24" dev "$IF_P0"
ip -n "$NS_LB" addr add "$LB_ADDR_BE/24" dev "$IF_P1"
ip netns exec "$NS_LB" sysctl -qw net.ipv4.ip_forward=1
ip -n "$NS_CLI" route add "$BE_NET.0/24" via "$LB_ADDR_CLI"
for i in 1 2 3; do
	ip -n "$(ns_be "$i")" route add "$CLI_NET.0/24" via "$LB_ADDR_BE"
done
client_checks kernel

# Malformed frames leave the client's veth whole and reach port 0.
rx0=$(ip netns exec "$NS_LB" cat "/sys/class/net/$IF_P0/statistics/rx_packets")
t=$(inject_malformed 5)
rx1=$(ip netns exec "$NS_LB" cat "/sys/class/net/$IF_P0/statistics/rx_packets")
e2e_log "injected $t; port 0 veth received $((rx1 - rx0)) frames"
check "30 malformed frames arrive on the LB's port 0 veth" \
	[ $((rx1 - rx0)) -ge 30 ]

# A stopped nginx leaves the kernel answering RST at once.
be_kill 2
http_seq "http://$BE2/" 1 "$E2E_TMP/refused"
e2e_log "request to the stopped be2: $(cat "$E2E_TMP/refused")"
check "a stopped backend refuses at once (curl 7, < 1 s)" \
	awk '$2 != 7 || $4 >= 1 {exit 1}' "$E2E_TMP/refused"
be_start 2

# ---- 2. DPDK forwards between two AF_PACKET ports --------------------------

if command -v dpdk-testpmd >/dev/null 2>&1; then
	ip netns exec "$NS_LB" sysctl -qw net.ipv4.ip_forward=0
	ip -n "$NS_LB" addr flush dev "$IF_P0"
	ip -n "$NS_LB" addr flush dev "$IF_P1"
	# Same subnet on both sides of an L2 forwarder: on-link routes.
	ip -n "$NS_CLI" route replace "$BE_NET.0/24" dev "$IF_CLI"
	for i in 1 2 3; do
		ip -n "$(ns_be "$i")" route replace "$CLI_NET.0/24" \
			dev "$(if_be "$i")"
	done
	DP_LOG=$E2E_TMP/testpmd.log
	LB_DATAPLANE=$(command -v dpdk-testpmd)
	ip netns exec "$NS_LB" "$LB_DATAPLANE" -l 0-1 --no-pci --no-huge \
		-m 256 --no-shconf --file-prefix "$DP_PREFIX" \
		--vdev="net_af_packet0,iface=$IF_P0" \
		--vdev="net_af_packet1,iface=$IF_P1" -- \
		--forward-mode=io --auto-start --total-num-mbufs 8192 \
		--stats-period 3600 </dev/null >"$DP_LOG" 2>&1 &
	DP_PID=$!
	for ((i = 0; i < 100; i++)); do
		kill -0 "$DP_PID" 2>/dev/null || die "testpmd exited"
		tel /ethdev/list >/dev/null 2>&1 && break
		sleep 0.2
	done
	t=$(tel /ethdev/list -k 1 2>&1) || true
	check "telemetry of testpmd lists its two ports" [ "$t" = 1 ]
	check "telemetry: port 0 is net_af_packet0" \
		[ "$(tel /ethdev/info,0 -k name 2>&1)" = net_af_packet0 ]
	client_checks testpmd
	a=$(tel /ethdev/stats,0 -k ipackets)
	inject_malformed 5 >/dev/null
	sleep 0.5
	b=$(tel /ethdev/stats,0 -k ipackets)
	e2e_log "testpmd port 0 received $((b - a)) frames for 30 malformed"
	check "an AF_PACKET port receives the malformed frames, runts too" \
		[ $((b - a)) -ge 30 ]
	ipk0=$(tel /ethdev/stats,0 -k ipackets)
	opk1=$(tel /ethdev/stats,1 -k opackets)
	e2e_log "testpmd port 0 received $ipk0 packets, port 1 sent $opk1"
	check "the traffic went through testpmd's ports" \
		'[ "$ipk0" -gt 1000 ] && [ "$opk1" -gt 1000 ]'
	dp_stop || true
	check "testpmd exited on SIGTERM (status $DP_RC)" [ "$DP_RC" = 0 ]
	check "its runtime directory is gone" [ ! -e "/var/run/dpdk/$DP_PREFIX" ]
else
	e2e_log "dpdk-testpmd not installed (package dpdk-dev):" \
		"AF_PACKET forwarding not checked"
fi

# ---- telemetry client without a process ------------------------------------

rc=0
msg=$(tel /lb/stats 2>&1) || rc=$?
e2e_log "lbtel with no process: status $rc: $msg"
check "lbtel says there is no socket, status 2" \
	'[ "$rc" = 2 ] && grep -q "no telemetry socket" <<<"$msg"'

# ---- leftovers of a run killed with SIGKILL --------------------------------

cat >"$E2E_TMP/crash.sh" <<EOF
set -euo pipefail
. "$E2E_DIR/lib.sh"
e2e_init crash
topo_up 1
be_start 1
mkdir -p "/var/run/dpdk/\$DP_PREFIX"
echo "\$E2E_TAG" >"$E2E_TMP/crash.tag"
kill -KILL \$\$
EOF
bash "$E2E_TMP/crash.sh" >"$E2E_TMP/crash.log" 2>&1 || true
ctag=$(cat "$E2E_TMP/crash.tag" 2>/dev/null) ||
	die "the crashing run did not start: $(cat "$E2E_TMP/crash.log")"
left() {
	{
		ip netns list | grep -c -- "-$ctag\$" || true
		find /var/run/dpdk "${TMPDIR:-/tmp}" -maxdepth 1 \
			\( -name "sl$ctag" -o -name "sl-e2e-$ctag.*" \) | wc -l
		{ pgrep -f "nginx.*/sl-e2e-$ctag\." || true; } | wc -l
	} | paste -sd' '
}
before=$(left)
e2e_sweep
after=$(left)
e2e_log "leftovers of a killed run (namespaces, dirs, nginx):" \
	"before sweep $before, after $after"
check "a killed run left namespaces, dirs and nginx behind" \
	'[ "$(echo "$before" | cut -d" " -f1)" = 4 ] &&
	 [ "$(echo "$before" | cut -d" " -f2)" = 2 ] &&
	 [ "$(echo "$before" | cut -d" " -f3)" -ge 1 ]'
check "the next run's sweep removed them all" [ "$after" = "0 0 0" ]

e2e_finish
