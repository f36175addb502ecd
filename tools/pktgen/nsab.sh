#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Paired runs of one Pktgen-DPDK script on the namespace loop of
# nsloop.sh: round after round, the script against lb-dataplane (A), then
# against a bare forwarder on the same veths (B, dpdk-testpmd in io mode:
# receive a burst, send it out of the other port, nothing else). Each side
# starts fresh for its run and is stopped after it, so that A always
# begins with an empty flow table.
#
#   PKTGEN=/path/to/pktgen tools/pktgen/nsab.sh ROUNDS SCRIPT.lua [PKTGEN ARGS...]
#
# PKTGEN ARGS go before Pktgen's own "-m" and "-f" (for example
# "-s 0:/tmp/syn.pcap" for syn_flood.lua with SL_PCAP). The SL_ settings
# of the script come from the environment; SL_DUT_MAC and, for A,
# SL_LBSTAT are set here. Logs go to NSAB_OUT (default /tmp/nsab): one
# file per run, A1.log B1.log A2.log ..., and the side's own log.
#
# CPU placement for two CPUs: the DUT's worker (lb-dataplane lcore 1) and
# the forwarder's (testpmd lcore 1) on CPU 1, their main lcores on CPU 0,
# both of Pktgen's lcores on CPU 0 (--lcores 0@0,1@0), and the once-a-
# second counter reads (lbstat.py) on CPU 0 too: CPU 1 does the work that
# is measured and nothing else of ours. NSAB_DUT_LCORES,
# NSAB_FWD_LCORES and NSAB_GEN_LCORES change it. On a host that others
# use too, CPU 1 is shared with their work all the same: alternate short
# rounds and compare the sides round by round.
#
# Settings: NSAB_DP_ARGS (lb-dataplane options after --config, default
# "--flows 1048576 --idle-us 0"), NSAB_CONF (default bench.conf beside
# this script), NSAB_MEM and NSAB_GEN_MEM (MB for the DUT or forwarder and
# for Pktgen, default 2048 and 4096: a pcap of 2 M frames takes 650 MB;
# no hugepages are used), NSAB_AFP (af_packet options of every port, default
# ",framecnt=4096"), NSAB_SIDES ("A B" by default; "A" or "B" runs one).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
GEN=${SLPG_NS_GEN:-slpg-gen}
DUT=${SLPG_NS_DUT:-slpg-dut}
OUT=${NSAB_OUT:-/tmp/nsab}
PKTGEN=${PKTGEN:-pktgen}
DATAPLANE=${NSAB_DATAPLANE:-$top/build/dataplane/lb-dataplane}
TESTPMD=${NSAB_TESTPMD:-dpdk-testpmd}
CONF=${NSAB_CONF:-$here/bench.conf}
DP_ARGS=${NSAB_DP_ARGS:---flows 1048576 --idle-us 0}
MEM=${NSAB_MEM:-2048}
GEN_MEM=${NSAB_GEN_MEM:-4096}
AFP=${NSAB_AFP:-,framecnt=4096}
DUT_LCORES=${NSAB_DUT_LCORES:-0@0,1@1}
FWD_LCORES=${NSAB_FWD_LCORES:-0@0,1@1}
GEN_LCORES=${NSAB_GEN_LCORES:-0@0,1@0}
SIDES=${NSAB_SIDES:-A B}
PREFIX=slpg-ab

say() { printf 'nsab: %s\n' "$*"; }
die() {
	say "$*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "must run as root (namespaces)"
[ $# -ge 2 ] || die "usage: $0 ROUNDS SCRIPT.lua [PKTGEN ARGS...]"
rounds=$1
script=$2
shift 2
[ -f "$script" ] || die "no script $script"
ip netns list | awk '{print $1}' | grep -qx "$DUT" ||
	die "no namespace $DUT: run tools/pktgen/nsloop.sh up first"
[ -x "$DATAPLANE" ] || die "no $DATAPLANE: build first (tools/build)"
mkdir -p "$OUT"
rm -f "$OUT"/B*.rate

side_pid=
stop_side() {
	[ -n "$side_pid" ] || return 0
	kill -TERM "$side_pid" 2>/dev/null || true
	# Ten seconds to print its statistics and exit, then no more.
	timeout 10 tail --pid="$side_pid" -f /dev/null ||
		kill -KILL "$side_pid" 2>/dev/null || true
	wait "$side_pid" 2>/dev/null || true
	side_pid=
}
trap stop_side EXIT

eal_ports() {
	printf -- '--vdev=net_af_packet0,iface=slpg-%s0%s ' "$1" "$AFP"
	printf -- '--vdev=net_af_packet1,iface=slpg-%s1%s' "$1" "$AFP"
}

# Waits for a line in a side's log: the side is up.
wait_log() {
	local log=$1 pattern=$2
	for _ in $(seq 600); do
		grep -q "$pattern" "$log" 2>/dev/null && return 0
		kill -0 "$side_pid" 2>/dev/null ||
			die "side exited while starting: $(tail -n 3 "$log")"
		sleep 0.1
	done
	die "side did not start within 60 s: $(tail -n 3 "$log")"
}

start_a() {
	local log=$OUT/dataplane$1.log
	# shellcheck disable=SC2046,SC2086
	ip netns exec "$DUT" "$DATAPLANE" --lcores "$DUT_LCORES" --no-pci \
		--no-huge -m "$MEM" --no-shconf --file-prefix "$PREFIX" \
		$(eal_ports d) -- --config "$CONF" $DP_ARGS >"$log" 2>&1 &
	side_pid=$!
	wait_log "$log" "running"
}

start_b() {
	local log=$OUT/testpmd$1.log
	# --stats-period keeps testpmd forwarding without a terminal until
	# it is stopped.
	# shellcheck disable=SC2046
	ip netns exec "$DUT" "$TESTPMD" --lcores "$FWD_LCORES" --no-pci \
		--no-huge -m "$MEM" --no-shconf --file-prefix "$PREFIX-fwd" \
		$(eal_ports d) -- --forward-mode=io --auto-start \
		--stats-period 3600 >"$log" 2>&1 &
	side_pid=$!
	wait_log "$log" "io packet forwarding"
}

# The measured seconds and the generator's rate of a run, from its log.
run_secs() {
	sed -n 's/^[a-z_0-9]*: sent [0-9]* pkts in \([0-9.]*\) s = \([0-9]*\) pps.*/\1 \2/p' \
		"$OUT/$1.log" | head -n 1
}

# B's rate: what testpmd sent out of port 1 (the forwarded SYNs), over
# the seconds the generator sent, from the statistics testpmd prints
# when it stops.
forwarded() {
	local n secs sent
	n=$(awk '/Forward statistics for port 1/ { p = 1 }
		p && /TX-packets/ { print $2; exit }' "$OUT/testpmd$1.log")
	read -r secs sent <<<"$(run_secs "B$1")"
	cpu=$(sed -n 's/.*: dut worker cpu \([0-9.]*\) s of.*/\1/p' "$OUT/B$1.log")
	[ -n "$n" ] && [ -n "$secs" ] || return 0
	awk -v n="$n" -v s="$secs" -v r="$1" -v g="$sent" -v c="${cpu:-0}" 'BEGIN {
		printf "B%s forwarder: port 1 sent %d in %.2f s = %.0f/s " \
			"(generator sent %d/s), %.0f per second of worker cpu\n",
			r, n, s, n / s, g, (c > 0 ? n / c : 0) }' |
		tee -a "$OUT/B$1.rate"
}

# Per round: A's new flows/s (the DUT's flows_created over the run), B's
# forwarded SYNs/s, both as the DUT side counted them, and their ratio.
summary() {
	local r a b ac bc
	for r in $(seq "$rounds"); do
		a=$(sed -n 's/.*: lb rx [0-9]* ([0-9]* pps) tx [0-9]* ([0-9]* pps) flows_created [0-9]* (\([0-9]*\)\/s).*/\1/p' \
			"$OUT/A$r.log" 2>/dev/null | head -n 1 || true)
		b=$(sed -n 's/.*= \([0-9]*\)\/s (generator.*/\1/p' \
			"$OUT/B$r.rate" 2>/dev/null | head -n 1 || true)
		ac=$(sed -n 's/.*: flows_created per second of worker cpu \([0-9]*\)$/\1/p' \
			"$OUT/A$r.log" 2>/dev/null | head -n 1 || true)
		bc=$(sed -n 's/.*, \([0-9]*\) per second of worker cpu$/\1/p' \
			"$OUT/B$r.rate" 2>/dev/null | head -n 1 || true)
		if [ -z "$a" ] || [ -z "$b" ] || [ "$b" -eq 0 ]; then
			continue
		fi
		awk -v r="$r" -v a="$a" -v b="$b" -v ac="${ac:-0}" \
			-v bc="${bc:-0}" 'BEGIN {
			printf "nsab: round %s: A %d new flows/s, B %d " \
				"forwarded/s, A/B %.3f; per second of worker " \
				"cpu A %d, B %d, A/B %.3f\n", r, a, b, a / b,
				ac, bc, (bc > 0 ? ac / bc : 0) }'
	done
}

# A command printing the CPU seconds (user and system) that the side's
# lcore 1, its worker, has had so far: EAL names that thread rte-worker-1.
worker_cpu_cmd() {
	local t hz
	hz=$(getconf CLK_TCK)
	for t in /proc/"$side_pid"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = rte-worker-1 ] || continue
		printf "awk '{ print (\$14 + \$15) / %s }' %s/stat" "$hz" "$t"
		return 0
	done
}

dut_mac=$(ip netns exec "$DUT" cat /sys/class/net/slpg-d0/address)
lcore0_cpu=${GEN_LCORES%%,*}
lcore0_cpu=${lcore0_cpu#*@}

for r in $(seq "$rounds"); do
	for side in $SIDES; do
		case $side in
		A)
			start_a "$r"
			lbstat="taskset -c $lcore0_cpu $here/lbstat.py -p $PREFIX snapshot"
			;;
		B)
			start_b "$r"
			lbstat=
			;;
		*) die "NSAB_SIDES: A or B, not $side" ;;
		esac
		cpu=$(worker_cpu_cmd)
		say "round $r side $side: $script"
		# Pktgen's own arguments come after its EAL ones, before -m.
		# shellcheck disable=SC2046
		true | SL_DUT_MAC=$dut_mac SL_LBSTAT=$lbstat SL_CPU=$cpu \
			ip netns exec "$GEN" "$PKTGEN" --lcores "$GEN_LCORES" \
			--no-pci --no-huge -m "$GEN_MEM" --no-shconf \
			--file-prefix "$PREFIX-gen" $(eal_ports g) -- -P "$@" \
			-m "1.[0-1]" -f "$script" >"$OUT/$side$r.log" 2>&1 ||
			say "round $r side $side: pktgen exited with status $?"
		grep -a "^[a-z_0-9]*: " "$OUT/$side$r.log" |
			grep -v "^EAL\|^USER1\|^TELEMETRY" | sed "s/^/$side$r /" || true
		stop_side
		[ "$side" = B ] && forwarded "$r"
	done
done
summary
