#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# An instance in a network namespace of its own on the backends' switch,
# for the orchestrator scripts of the exec driver's tests:
#   ns_instance.sh up NS ADDR SWITCH_NS BRIDGE VETH LOG NAME
#     namespace NS, address ADDR/24 on eth0, whose peer VETH joins BRIDGE
#     in SWITCH_NS; lb-instance (LB_INSTANCE) listens on ADDR:80 as NAME,
#     its output in LOG;
#   ns_instance.sh down NS
#     its processes stopped and the namespace deleted (nothing if gone).
set -eu
case $1 in
up)
	ns=$2 addr=$3 sw=$4 br=$5 veth=$6 log=$7 name=$8
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	ip link add eth0 netns "$ns" type veth peer name "$veth" netns "$sw"
	ip netns exec "$ns" ethtool -K eth0 rx off tx off tso off gso off \
		gro off >/dev/null
	ip netns exec "$sw" ethtool -K "$veth" rx off tx off tso off gso off \
		gro off >/dev/null
	ip -n "$sw" link set "$veth" master "$br" up
	ip -n "$ns" addr add "$addr/24" dev eth0
	ip -n "$ns" link set eth0 up
	setsid ip netns exec "$ns" "$LB_INSTANCE" --listen "$addr:80" \
		--name "$name" </dev/null >>"$log" 2>&1 &
	;;
down)
	[ -e /run/netns/"$2" ] || exit 0
	pids=$(ip netns pids "$2")
	# shellcheck disable=SC2086 # one word per pid
	[ -z "$pids" ] || kill $pids
	sleep 0.2
	ip netns del "$2"
	;;
*)
	echo "usage: $0 up NS ADDR SWITCH_NS BRIDGE VETH LOG NAME | down NS" >&2
	exit 2
	;;
esac
