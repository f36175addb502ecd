#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A generator and a DUT on one host, for trying the Pktgen-DPDK scripts
# without hardware: two network namespaces joined by two veth pairs.
#
#   ns slpg-gen                          ns slpg-dut
#   Pktgen-DPDK                          lb-dataplane
#   port 0  slpg-g0  <---- veth ---->  slpg-d0  port 0 (client side)
#   port 1  slpg-g1  <---- veth ---->  slpg-d1  port 1 (backend side)
#
# Both programs open their veths with net_af_packet; no veth carries a
# kernel address, offloads are off (so frames carry complete checksums)
# and IPv6 is off (no stray router solicitations in the counts).
#
#   tools/pktgen/nsloop.sh up       create (fails if they exist)
#   tools/pktgen/nsloop.sh down     remove (what exists of it)
#   tools/pktgen/nsloop.sh status   show the links and their MACs
#
# Rates through veths measure the kernel's veth and AF_PACKET paths as
# much as the load balancer: use this loop to check scripts, not to
# quote numbers (docs/benchmarking.md).
set -euo pipefail

GEN=${SLPG_NS_GEN:-slpg-gen}
DUT=${SLPG_NS_DUT:-slpg-dut}

say() { printf 'nsloop: %s\n' "$*"; }

ns_new() {
	ip netns add "$1"
	ip -n "$1" link set lo up
	ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
}

link_up() {
	ip netns exec "$1" ethtool -K "$2" rx off tx off tso off gso off \
		gro off >/dev/null
	ip -n "$1" link set "$2" up
}

up() {
	ns_new "$GEN"
	ns_new "$DUT"
	for i in 0 1; do
		ip link add "slpg-g$i" netns "$GEN" type veth \
			peer name "slpg-d$i" netns "$DUT"
		link_up "$GEN" "slpg-g$i"
		link_up "$DUT" "slpg-d$i"
	done
	status
}

down() {
	local ns pids
	for ns in "$GEN" "$DUT"; do
		ip netns list | awk '{print $1}' | grep -qx "$ns" || continue
		pids=$(ip netns pids "$ns" | tr '\n' ' ')
		if [ -n "${pids// /}" ]; then
			say "$ns still runs pids $pids; stop them first"
			return 1
		fi
		ip netns del "$ns"
		say "removed $ns"
	done
}

status() {
	local ns i
	for ns in "$GEN" "$DUT"; do
		for i in 0 1; do
			local ifn=slpg-g$i
			[ "$ns" = "$GEN" ] || ifn=slpg-d$i
			printf '%-9s %-8s port %s  mac %s\n' "$ns" "$ifn" "$i" \
				"$(ip netns exec "$ns" cat \
					"/sys/class/net/$ifn/address")"
		done
	done
}

if [ "$(id -u)" -ne 0 ]; then
	echo "nsloop: must run as root (namespaces, veths)" >&2
	exit 1
fi
case ${1:-} in
up) up ;;
down) down ;;
status) status ;;
*)
	echo "usage: $0 up|down|status" >&2
	exit 2
	;;
esac
