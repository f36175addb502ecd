# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A second load balancer beside lib.sh's, for the tests of several hosts
# sharing one Redis: its own lb-dataplane in the LB namespace (one worker,
# prefix DP2_PREFIX) on two more links, the client's (IF_C2, subnet
# NET2) and the backends' switch (IF_Q1), and its own lb-control (socket
# CTL2_SOCK). The client reaches the VIP through it from NET2.2.
#
# lb2_init NET2 (before anything starts), lb2_links, lb2_dp_start CONF
# [LB-DATAPLANE ARGS...], lb2_ctl_start [LB-CONTROL ARGS...], lb2_route;
# lb2_cleanup in the test's EXIT trap, before the harness's own.

lb2_init() {
	NET2=$1
	IF_C2=sl-c2-$E2E_TAG
	IF_Q0=sl-q0-$E2E_TAG
	IF_Q1=sl-q1-$E2E_TAG
	IF_SQ=sl-sq-$E2E_TAG
	# Not a hex tag after "sl": the harness's sweep leaves it to this run.
	DP2_PREFIX=slz$E2E_TAG
	DP2_PID=
	CTL2_PID=
	CTL2_SOCK=$E2E_TMP/ctl2.sock
	CTL2_LOG=$E2E_TMP/control2.log
}

lb2_links() {
	veth_pair "$NS_CLI" "$IF_C2" "$NS_LB" "$IF_Q0"
	veth_pair "$NS_LB" "$IF_Q1" "$NS_SW" "$IF_SQ"
	ip -n "$NS_SW" link set "$IF_SQ" master "$BR"
	ip -n "$NS_CLI" addr add "$NET2.2/24" dev "$IF_C2"
}

lb2_dp_start() {
	local conf=$1 i
	shift
	ip netns exec "$NS_LB" "$LB_DATAPLANE" -l 0-1 --no-pci \
		--socket-limit "${LB_EAL_MEM:-512}" --file-prefix "$DP2_PREFIX" \
		--vdev="net_af_packet0,iface=$IF_Q0" \
		--vdev="net_af_packet1,iface=$IF_Q1" -- --config "$conf" "$@" \
		</dev/null >"$E2E_TMP/dataplane2.log" 2>&1 &
	DP2_PID=$!
	for ((i = 0; i < 150; i++)); do
		"$PY" "$E2E_DIR/lbtel.py" --prefix "$DP2_PREFIX" /lb/stats \
			>/dev/null 2>&1 && return 0
		kill -0 "$DP2_PID" 2>/dev/null ||
			die "second lb-dataplane exited: $(tail -n 1 "$E2E_TMP/dataplane2.log")"
		sleep 0.2
	done
	die "the second lb-dataplane did not answer within 30 s"
}

lb2_ctl_start() {
	local i
	lb_ns_prefix
	"${LB_NSX[@]}" "$LB_CONTROL" --proc-type=secondary \
		--file-prefix "$DP2_PREFIX" --no-pci -l 0 -- \
		--socket "$CTL2_SOCK" --state "$E2E_TMP/state2.conf" \
		--metrics off "$@" </dev/null >>"$CTL2_LOG" 2>&1 &
	CTL2_PID=$!
	for ((i = 0; i < 150; i++)); do
		"$LBCTL" --socket "$CTL2_SOCK" --timeout 2 stats >/dev/null 2>&1 &&
			break
		kill -0 "$CTL2_PID" 2>/dev/null ||
			die "second lb-control exited: $(tail -n 1 "$CTL2_LOG")"
		sleep 0.2
	done
	e2e_log "second load balancer up (dataplane $DP2_PID, control $CTL2_PID)"
}

lb2_route() {
	ip -n "$NS_CLI" route add "$VIP/32" dev "$IF_C2" src "$NET2.2" table 100
	ip -n "$NS_CLI" rule add from "$NET2.2" table 100
}

# The second load balancer goes first (its hugepage files and runtime
# directory too); its lb-control's last lines when the test failed.
lb2_cleanup() {
	local m
	[ -z "$CTL2_PID" ] || kill "$CTL2_PID" 2>/dev/null
	[ -z "$DP2_PID" ] || kill "$DP2_PID" 2>/dev/null
	sleep 1
	[ -z "$CTL2_PID" ] || kill -KILL "$CTL2_PID" 2>/dev/null
	[ -z "$DP2_PID" ] || kill -KILL "$DP2_PID" 2>/dev/null
	awk '$3 == "hugetlbfs" { print $2 }' /proc/mounts | while read -r m; do
		rm -f "$m/$DP2_PREFIX"map_* 2>/dev/null
	done
	rm -rf "/var/run/dpdk/$DP2_PREFIX"
	if [ "$E2E_DONE" != pass ] && [ -s "$CTL2_LOG" ]; then
		e2e_log "last lines of the second lb-control's log:"
		tail -n 30 "$CTL2_LOG" | sed 's/^/    /'
	fi
}
