# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# shellcheck disable=SC2034 # variables of lib.sh and of the scripts sourcing this
#
# Several load balancer hosts behind one ECMP router, on one machine;
# sourced after lib.sh by the cluster tests and tools/demo-cluster.
#
#  ns sl-cl-TAG        ns sl-rt-TAG                    ns sl-hI-TAG (host I)
#  clients             router: BIRD, ECMP,             lb-dataplane, lb-control,
#  10.30.1.2..         Redis on 10.31.0.1              BIRD on the tap lbx0,
#  sl-cr --------- sl-rc 10.30.1.1                     tools/cluster/lb-health
#                      bridge sl-rb 10.31.0.1/24
#                        sl-rI --------------------- sl-aI port 0 10.31.0.1I
#                                                      sl-eI port 1 10.32.0.I
#                                                        |  SNAT 10.32.0.20I
#  ns sl-sw-TAG: bridge sl-br ---- sl-wI ---------------+
#               ---- backends sl-beJ-TAG, 10.32.0.1J (nginx "beJ")
#
# The VIP 10.30.0.100 is nowhere on a link: each host's BIRD announces it
# (tools/cluster/bird-lb.conf) with its port 0 address as next hop, through
# the exception path of its dataplane (the kernel's tap lbx0 carries the
# port's address); the router's BIRD (tools/cluster/bird-router.conf)
# merges the equal routes into one multipath kernel route, hashed on
# addresses and ports (fib_multipath_hash_policy=1). Every host has the
# same services, the same backends, the same --hash-seed-file, and SNAT
# addresses of its own.

CL_TOOLS=$E2E_TOP/tools/cluster
CL_NHOSTS=${CL_NHOSTS:-2}
CL_NCLI=${CL_NCLI:-8} # client addresses
CL_CLI_NET=10.30.1
CL_VIP=10.30.0.100
CL_RT_NET=10.31.0
CL_RT_ADDR=$CL_RT_NET.1
BE_NET=10.32.0
CL_ROUTER_AS=64500
CL_LB_AS=64512
CL_RPORT=6391 # Redis, on the router's address on the hosts' link
CL_USE_BFD=${CL_USE_BFD:-1}
# Seconds to wait for BGP and the routes: BIRD connects again every 2 s,
# lb-health needs a few passes; a loaded machine is slow to start all.
CL_ROUTE_TIMEOUT=${CL_ROUTE_TIMEOUT:-60}

NS_CL=sl-cl-$E2E_TAG
NS_RT=sl-rt-$E2E_TAG
IF_CR=sl-cr-$E2E_TAG
IF_RC=sl-rc-$E2E_TAG
IF_RB=sl-rb-$E2E_TAG

# The client namespace of lib.sh's helpers (http_seq, wrk_run) is ours.
NS_CLI=$NS_CL
VIP=$CL_VIP

ns_host() { echo "sl-h$1-$E2E_TAG"; }
if_port0() { echo "sl-a$1-$E2E_TAG"; }
if_port1() { echo "sl-e$1-$E2E_TAG"; }
if_rt() { echo "sl-r$1-$E2E_TAG"; }
if_sw() { echo "sl-w$1-$E2E_TAG"; }
host_addr() { echo "$CL_RT_NET.$((10 + $1))"; } # port 0, the BGP next hop
host_be_addr() { echo "$BE_NET.$1"; }           # port 1
host_snat() { echo "$BE_NET.$((200 + $1))"; }
cl_cli_addr() { echo "$CL_CLI_NET.$((1 + $1))"; }
# DPDK file prefix of host I: "slz" is not a hex tag, so the harness's
# sweep of other runs never takes it for one of theirs; cl_cleanup and
# cl_reap remove it.
host_prefix() { echo "slz$1$E2E_TAG"; }
host_dir() { echo "$E2E_TMP/h$1"; }

# cl_need: what the cluster tests need besides lib.sh's e2e_need_control.
cl_need() {
	e2e_need_tools bird birdc redis-server
	[ -x "$CL_TOOLS/lb-health" ] || die "no $CL_TOOLS/lb-health"
}

# cl_reap: the hosts' hugepage files and DPDK runtime directories (their
# prefixes are not the harness's), for the EXIT trap and the start.
cl_reap() {
	local i m
	for ((i = 1; i <= CL_NHOSTS; i++)); do
		awk '$3 == "hugetlbfs" { print $2 }' /proc/mounts | while read -r m; do
			rm -f "$m/$(host_prefix "$i")"map_* 2>/dev/null
		done
		rm -rf "/var/run/dpdk/$(host_prefix "$i")"
	done
}

# The EXIT trap: every process of the scenario lives in one of its
# namespaces (lb-control first, so that it does not see its dataplane die),
# then the harness's own clean-up removes the namespaces and links.
cl_on_exit() {
	local rc=$? i pid
	trap - ERR INT TERM
	set +e
	if [ "$E2E_DONE" != pass ] && [ "$E2E_DONE" != skip ]; then
		cl_diagnose
	fi
	# CL_KEEP=DIR: a copy of the run's files (logs, configurations).
	[ -z "${CL_KEEP:-}" ] || cp -r "$E2E_TMP" "$CL_KEEP" 2>/dev/null
	for ((i = 1; i <= CL_NHOSTS; i++)); do
		pid=$(cat "$(host_dir "$i")/health.pid" 2>/dev/null) &&
			kill "$pid" 2>/dev/null
		pid=$(cat "$(host_dir "$i")/ctl.pid" 2>/dev/null) &&
			kill "$pid" 2>/dev/null
	done
	for ((i = 1; i <= CL_NHOSTS; i++)); do
		pid=$(cat "$(host_dir "$i")/dp.pid" 2>/dev/null) &&
			kill "$pid" 2>/dev/null
	done
	for ((i = 1; i <= CL_NHOSTS; i++)); do
		ns_destroy "$(ns_host "$i")"
	done
	ns_destroy "$NS_RT"
	cl_reap
	(exit "$rc")
	e2e_cleanup
}

cl_diagnose() {
	local i d
	[ -d "$E2E_TMP" ] || return 0
	e2e_log "router: $(birdc_rt show protocols 2>&1 | tr '\n' ';')"
	e2e_log "router's route: $(rt_route | tr '\n' ' ')"
	for ((i = 1; i <= CL_NHOSTS; i++)); do
		d=$(host_dir "$i")
		for f in dataplane.log control.log bird.log health.log; do
			[ -s "$d/$f" ] || continue
			e2e_log "host $i, last lines of $f:"
			tail -n 25 "$d/$f" | sed 's/^/    /'
		done
	done
	[ ! -s "$E2E_TMP/router/bird.log" ] || {
		e2e_log "router, last lines of bird.log:"
		tail -n 40 "$E2E_TMP/router/bird.log" | sed 's/^/    /'
	}
}

# ---- topology ----------------------------------------------------------------

# cl_topo_up NB_BACKENDS: the namespaces and links of the picture above.
cl_topo_up() {
	local nbe=$1 i
	ns_create "$NS_CL"
	ns_create "$NS_RT"
	ns_create "$NS_SW"
	ip netns exec "$NS_RT" sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv4.fib_multipath_hash_policy=1
	veth_pair "$NS_CL" "$IF_CR" "$NS_RT" "$IF_RC"
	ip -n "$NS_RT" addr add "$CL_CLI_NET.1/24" dev "$IF_RC"
	for ((i = 1; i <= CL_NCLI; i++)); do
		ip -n "$NS_CL" addr add "$(cl_cli_addr "$i")/24" dev "$IF_CR"
	done
	ip -n "$NS_CL" route add default via "$CL_CLI_NET.1"
	ip -n "$NS_RT" link add "$IF_RB" type bridge
	ip -n "$NS_RT" link set "$IF_RB" up
	ip -n "$NS_RT" addr add "$CL_RT_ADDR/24" dev "$IF_RB"
	ip -n "$NS_SW" link add "$BR" type bridge
	ip -n "$NS_SW" link set "$BR" up
	for ((i = 1; i <= CL_NHOSTS; i++)); do
		ns_create "$(ns_host "$i")"
		# The host's kernel sees the frames of the dataplane's veths
		# too (a NIC owned by DPDK would hide them): strict reverse
		# path filtering drops them there, since its routes go out
		# through the taps. Else BIRD's socket, bound to lbx0, meets
		# the router's SYN-ACK on the veth first and answers a RST.
		ip netns exec "$(ns_host "$i")" sysctl -qw \
			net.ipv4.conf.all.rp_filter=1 \
			net.ipv4.conf.default.rp_filter=1
		veth_pair "$NS_RT" "$(if_rt "$i")" "$(ns_host "$i")" "$(if_port0 "$i")"
		ip -n "$NS_RT" link set "$(if_rt "$i")" master "$IF_RB"
		veth_pair "$(ns_host "$i")" "$(if_port1 "$i")" "$NS_SW" "$(if_sw "$i")"
		ip -n "$NS_SW" link set "$(if_sw "$i")" master "$BR"
		mkdir -p "$(host_dir "$i")"
	done
	for ((i = 1; i <= nbe; i++)); do
		ns_create "$(ns_be "$i")"
		veth_pair "$(ns_be "$i")" "$(if_be "$i")" "$NS_SW" "$(if_swbe "$i")"
		ip -n "$NS_SW" link set "$(if_swbe "$i")" master "$BR"
		ip -n "$(ns_be "$i")" addr add "$(be_addr "$i")/24" dev "$(if_be "$i")"
	done
	mkdir -p "$E2E_TMP/router"
	# One seed for every host: maglev maps a flow alike everywhere.
	(umask 077 && echo 7340123457 >"$E2E_TMP/hash-seed")
	e2e_log "topology up: $CL_NCLI client addresses, router, $CL_NHOSTS" \
		"hosts, $nbe backend(s), VIP $CL_VIP, tag $E2E_TAG"
}

# ---- the router -----------------------------------------------------------------

birdc_rt() { birdc -s "$E2E_TMP/router/bird.ctl" "$@"; }
birdc_host() {
	local i=$1
	shift
	birdc -s "$(host_dir "$i")/bird.ctl" "$@"
}

# cl_router_conf: the head of the router's BIRD configuration (the site's
# values) before the shipped tools/cluster/bird-router.conf.
cl_router_conf() {
	cat >"$E2E_TMP/router/bird.conf" <<EOF
router id $CL_RT_ADDR;
define ROUTER_AS = $CL_ROUTER_AS;
define LB_AS = $CL_LB_AS;
define LB_NET = $CL_RT_NET.0/24;
define VIPS = [ 10.30.0.0/24+ ];
define USE_BFD = $CL_USE_BFD;
log "$E2E_TMP/router/bird.log" all;
debug protocols { states };
include "$CL_TOOLS/bird-router.conf";
EOF
}

cl_router_up() {
	cl_router_conf
	ip netns exec "$NS_RT" bird -f -c "$E2E_TMP/router/bird.conf" \
		-s "$E2E_TMP/router/bird.ctl" -P "$E2E_TMP/router/bird.pid" \
		</dev/null >>"$E2E_TMP/router/bird.out" 2>&1 &
	ip netns exec "$NS_RT" redis-server --port "$CL_RPORT" \
		--bind "$CL_RT_ADDR" --save '' --appendonly no \
		--protected-mode no --loglevel warning \
		>"$E2E_TMP/router/redis.log" 2>&1 &
	echo $! >"$E2E_TMP/router/redis.pid"
	wait_listen "$NS_RT" tcp "$CL_RT_ADDR:$CL_RPORT" ||
		die "redis-server did not start"
	wait_ok 20 birdc_rt show status ||
		die "the router's BIRD did not start"
}

# rt_route: the router's kernel route to the VIP.
rt_route() { ip -n "$NS_RT" route show "$CL_VIP/32"; }

# rt_nexthops: how many next hops the router's route to the VIP has.
rt_nexthops() {
	local r
	r=$(rt_route)
	if grep -q nexthop <<<"$r"; then
		grep -c nexthop <<<"$r"
	elif [ -n "$r" ]; then
		echo 1
	else
		echo 0
	fi
}

# rt_has_host I: the route to the VIP goes through host I.
rt_has_host() { rt_route | has -w "via $(host_addr "$1")"; }

# rt_established: how many BGP sessions of the router are Established.
rt_established() {
	birdc_rt show protocols 2>/dev/null | awk '$2 == "BGP" && $6 == "Established"' | wc -l
}

# cl_wait_routes N [SECS]: until the route has N next hops; prints how long
# it took.
cl_wait_routes() {
	wait_output "${2:-$CL_ROUTE_TIMEOUT}" "$1" rt_nexthops
}

# wait_ok SECONDS CMD...: until CMD succeeds (lib.sh's wait_output, every
# 0.2 s); prints nothing.
wait_ok() {
	local secs=$1
	shift
	WAIT_PERIOD=0.2 wait_output "$secs" ok cl_ok_if "$@" >/dev/null
}
cl_ok_if() { "$@" >/dev/null 2>&1 && echo ok; }

# ---- the load balancer hosts ----------------------------------------------------

# cl_host_conf I SERVICES_FILE: host I's dataplane configuration: its
# addresses, then the services every host shares.
cl_host_conf() {
	local i=$1 d
	d=$(host_dir "$i")
	{
		echo "addr add $(host_addr "$i")/24 port 0"
		echo "route add default via $CL_RT_ADDR port 0"
		echo "addr add $(host_be_addr "$i")/24 port 1"
		echo "snat add $(host_snat "$i") port 1"
		cat "$2"
	} >"$d/lb.conf"
}

# cl_dp_start I: host I's dataplane (one worker, hugepages for its
# lb-control), returns once its telemetry answers.
cl_dp_start() {
	local i=$1 d pid k
	d=$(host_dir "$i")
	# The hosts' workers on different CPUs (odd hosts on CPU 1, even
	# ones on CPU 0), so that the two hosts do not starve each other.
	ip netns exec "$(ns_host "$i")" "$LB_DATAPLANE" -l 0-1 \
		--main-lcore $((i % 2 ? 0 : 1)) --no-pci \
		--socket-limit "${LB_EAL_MEM:-256}" --file-prefix "$(host_prefix "$i")" \
		--vdev="net_af_packet0,iface=$(if_port0 "$i")" \
		--vdev="net_af_packet1,iface=$(if_port1 "$i")" \
		-- --config "$d/lb.conf" --flows "${CL_FLOWS:-65536}" \
		--hash-seed-file "$E2E_TMP/hash-seed" \
		</dev/null >>"$d/dataplane.log" 2>&1 &
	pid=$!
	echo "$pid" >"$d/dp.pid"
	for ((k = 0; k < E2E_DP_START_TIMEOUT * 5; k++)); do
		kill -0 "$pid" 2>/dev/null ||
			die "host $i: lb-dataplane exited: $(tail -n 1 "$d/dataplane.log")"
		htel "$i" /lb/stats >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	die "host $i: lb-dataplane did not answer its telemetry"
}

# cl_dp_kill I: SIGKILL, as a crash; waits until it is gone.
cl_dp_kill() {
	local i=$1 pid
	pid=$(cat "$(host_dir "$i")/dp.pid")
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -f "$(host_dir "$i")/dp.pid"
}

# htel I CMD [-k KEY...]: host I's dataplane telemetry.
htel() {
	local i=$1
	shift
	"$PY" "$E2E_DIR/lbtel.py" --prefix "$(host_prefix "$i")" "$@"
}

# hctl I LBCTL-ARGS...: lbctl on host I's lb-control.
hctl() {
	local i=$1
	shift
	"$LBCTL" --socket "$(host_dir "$i")/ctl.sock" "$@"
}

cl_ctl_start() {
	local i=$1 d pid k
	d=$(host_dir "$i")
	ip netns exec "$(ns_host "$i")" "$LB_CONTROL" --proc-type=secondary \
		--file-prefix "$(host_prefix "$i")" --no-pci -l 0 -- \
		--socket "$d/ctl.sock" --state "$d/state.conf" --metrics off \
		--redis "$CL_RT_ADDR:$CL_RPORT" \
		</dev/null >>"$d/control.log" 2>&1 &
	pid=$!
	echo "$pid" >"$d/ctl.pid"
	for ((k = 0; k < E2E_CTL_START_TIMEOUT * 5; k++)); do
		kill -0 "$pid" 2>/dev/null ||
			die "host $i: lb-control exited: $(tail -n 1 "$d/control.log")"
		hctl "$i" --timeout 2 stats >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	die "host $i: lb-control did not answer lbctl"
}

# cl_host_conf_bird I: the head of host I's BIRD configuration before the
# shipped tools/cluster/bird-lb.conf.
cl_host_bird_conf() {
	local i=$1 d
	d=$(host_dir "$i")
	cat >"$d/bird.conf" <<EOF
router id $(host_addr "$i");
define LB_ADDR = $(host_addr "$i");
define LB_AS = $CL_LB_AS;
define ROUTER_ADDR = $CL_RT_ADDR;
define ROUTER_AS = $CL_ROUTER_AS;
define USE_BFD = $CL_USE_BFD;
log "$d/bird.log" all;
debug protocols { states };
protocol static vips {
	disabled yes;
	ipv4;
	route $CL_VIP/32 blackhole;
}
include "$CL_TOOLS/bird-lb.conf";
EOF
}

cl_bird_start() {
	local i=$1 d
	d=$(host_dir "$i")
	cl_host_bird_conf "$i"
	ip netns exec "$(ns_host "$i")" bird -f -c "$d/bird.conf" \
		-s "$d/bird.ctl" -P "$d/bird.pid" </dev/null >>"$d/bird.out" 2>&1 &
	wait_ok 20 birdc_host "$i" show status ||
		die "host $i: BIRD did not start"
}

# cl_health_start I: tools/cluster/lb-health of host I, as a user runs it.
cl_health_start() {
	local i=$1 d
	d=$(host_dir "$i")
	ip netns exec "$(ns_host "$i")" "$CL_TOOLS/lb-health" \
		--lbctl "$LBCTL" --socket "$d/ctl.sock" \
		--bird-socket "$d/bird.ctl" --protocol vips --interval 0.5 --fall 3 \
		--need-backend --drain-file "$d/drain" \
		</dev/null >>"$d/health.log" 2>&1 &
	echo $! >"$d/health.pid"
}

# cl_host_up I SERVICES_FILE: dataplane, lb-control, BIRD and lb-health.
cl_host_up() {
	cl_host_conf "$1" "$2"
	cl_dp_start "$1"
	cl_ctl_start "$1"
	cl_bird_start "$1"
	cl_health_start "$1"
	e2e_log "host $1 up: port 0 $(host_addr "$1"), SNAT $(host_snat "$1")"
}

# cl_up NB_BACKENDS SERVICES_FILE: everything, returns once the router
# routes the VIP to every host.
cl_up() {
	local i w
	cl_topo_up "$1"
	# /via answers the address the connection came from: the SNAT
	# address, which tells the host it went through.
	for ((i = 1; i <= $1; i++)); do
		# shellcheck disable=SC2016 # nginx's variable
		BE_LOCATIONS='location /via { return 200 "$remote_addr\n"; }' \
			be_start "$i"
	done
	cl_router_up
	for ((i = 1; i <= CL_NHOSTS; i++)); do
		cl_host_up "$i" "$2"
	done
	w=$(cl_wait_routes "$CL_NHOSTS") ||
		die "the router has no route with $CL_NHOSTS next hops: $w"
	e2e_log "router: $(rt_established) BGP sessions established, route to" \
		"the VIP with $CL_NHOSTS next hops after ${w#* } s"
}

# ---- traffic ----------------------------------------------------------------------

# host_flows I: flows host I's dataplane created so far.
host_flows() { htel "$1" /lb/stats -k flows_created 2>/dev/null || echo -; }

# cl_load ARGS...: tests/e2e/cluster_load.py in the client namespace.
cl_load() {
	ip netns exec "$NS_CL" "$PY" -B "$E2E_DIR/cluster_load.py" "$@"
}

# cl_srcs: the client addresses, comma-separated.
cl_srcs() {
	local i s=
	for ((i = 1; i <= CL_NCLI; i++)); do
		s=$s${s:+,}$(cl_cli_addr "$i")
	done
	echo "$s"
}

# load_tally FILE: "new=N new_ok=N held=N held_ok=N" of a cluster_load.py
# output.
load_tally() {
	"$PY" -B -c '
import json, sys
n = nok = h = hok = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["kind"] == "new":
        n += 1; nok += r["ok"]
    elif r["kind"] == "held":
        h += 1; hok += r["failed_at"] is None
print("new=%d new_ok=%d held=%d held_ok=%d" % (n, nok, h, hok))
' "$1"
}

# load_errors FILE: why the connections of a cluster_load.py output failed,
# the commonest first, with the router's route and sessions at the end.
load_errors() {
	e2e_log "failed connections (count, error):"
	"$PY" -B -c '
import collections, json, sys
c = collections.Counter(r["err"] for r in map(json.loads, open(sys.argv[1]))
                        if r["kind"] == "new" and not r["ok"])
for err, n in c.most_common(5):
    print("    %d %s" % (n, err))
' "$1"
	e2e_log "router now: $(rt_established) sessions established," \
		"$(rt_nexthops) next hop(s)"
}

# rt_flaps: how many times a BGP session of the router went down so far.
rt_flaps() { grep -c ': State changed to stop' "$E2E_TMP/router/bird.log" || true; }

# spread TAG [SECONDS]: new connections from every client address (100
# per second); sets SPREAD_T (load_tally) and SPREAD_A, SPREAD_B (the
# flows hosts 1 and 2 created meanwhile).
spread() {
	local tag=$1 a0 b0 f0
	f0=$(rt_flaps)
	spread_once "$@"
	# A machine that stops everything for seconds (a starved virtual
	# machine) makes BFD take a live host for dead: a session that went
	# down while nothing touched it voids the run, which is made again.
	if [ "$(rt_flaps)" != "$f0" ] &&
		[ "$(field new_ok "$SPREAD_T")" != "$(field new "$SPREAD_T")" ]; then
		e2e_log "$tag: a BGP session went down that nothing touched" \
			"(the machine stalled); once more"
		cl_wait_routes "$CL_NHOSTS" >/dev/null || true
		spread_once "$1-again" "${2:-4}"
	fi
}

spread_once() {
	local tag=$1 a0 b0
	a0=$(host_flows 1)
	b0=$(host_flows 2)
	cl_load --target "$CL_VIP:80" --srcs "$(cl_srcs)" --seconds "${2:-4}" \
		--threads 4 --timeout 2 --out "$E2E_TMP/spread-$tag"
	SPREAD_A=$(($(host_flows 1) - a0))
	SPREAD_B=$(($(host_flows 2) - b0))
	SPREAD_T=$(load_tally "$E2E_TMP/spread-$tag")
	e2e_log "$tag: $SPREAD_T; host 1 took $SPREAD_A flows, host 2 $SPREAD_B"
	[ "$(field new_ok "$SPREAD_T")" = "$(field new "$SPREAD_T")" ] ||
		load_errors "$E2E_TMP/spread-$tag"
}

# failover TAG HOST SECONDS: HOST's dataplane killed (SIGKILL) under a
# load of SECONDS (24 held connections, 100 new ones a second). Sets
# FO_ROUTE (seconds from the kill until the router's route lost HOST, or
# "never"), FO_NEW (seconds from the kill to the first new connection
# after the last failed one; 0 when none failed) and FO_SUM:
# "new= new_failed= failed_before_kill= new_after= fo_new= held1=
# held1_failed= held2= held2_failed= other=", heldI counting the held
# connections that went through host I.
failover() {
	local tag=$1 host=$2 secs=$3 out=$E2E_TMP/fo-$1 pid t0 w i n other
	out=${out// /_}
	other=$((3 - host))
	cl_load --target "$CL_VIP:80" --srcs "$(cl_srcs)" --seconds "$secs" \
		--threads 4 --timeout 2 --hold 24 --out "$out" &
	pid=$!
	# Once every held connection is open and new ones flow.
	for ((i = 0; i < 100; i++)); do
		n=$(grep -c '"kind": "new"' "$out" 2>/dev/null) || true
		[ "${n:-0}" -ge 40 ] && break
		sleep 0.1
	done
	t0=$(date +%s.%N)
	cl_dp_kill "$host"
	w=$(cl_wait_routes 1 $((secs - 2))) || true
	FO_ROUTE=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	[ "${w%% *}" = 1 ] || FO_ROUTE=never
	wait "$pid" || true
	"$PY" -B - "$out" "$t0" "$(host_snat "$other")" "$(host_snat "$host")" \
		>"$out.sum" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
t0 = float(sys.argv[2])
new = [r for r in recs if r["kind"] == "new"]
before = [r for r in new if r["t"] + r["ms"] / 1000 < t0]
failed = [r for r in new if not r["ok"]]
last = max((r["t"] for r in failed if r["t"] >= t0), default=t0)
after = [r for r in new if r["t"] > last]
fo_new = min((r["t"] for r in after), default=last) - t0
held = [r for r in recs if r["kind"] == "held"]
# The SNAT address a held connection's backend saw: the host it was on.
h1 = [r for r in held if r["be"] == sys.argv[3]]
h2 = [r for r in held if r["be"] == sys.argv[4]]
print("new=%d new_failed=%d failed_before_kill=%d new_after=%d"
      % (len(new), len(failed), sum(1 for r in before if not r["ok"]),
         len(after)))
print("fo_new=%.2f" % (fo_new if last > t0 else 0))
print("held1=%d held1_failed=%d held2=%d held2_failed=%d other=%d"
      % (len(h1), sum(r["failed_at"] is not None for r in h1), len(h2),
         sum(r["failed_at"] is not None for r in h2),
         len(held) - len(h1) - len(h2)))
PY
	FO_SUM=$(tr '\n' ' ' <"$out.sum")
	FO_NEW=$(field fo_new "$FO_SUM")
	e2e_log "$tag: ${FO_SUM}route without host $host after $FO_ROUTE s"
}

# failover_once TAG HOST SECONDS: failover; when a session other than
# HOST's went down meanwhile (the machine stalled: see spread), HOST comes
# back and the whole run is made again.
failover_once() {
	local f0
	f0=$(rt_flaps)
	failover "$@"
	[ $(($(rt_flaps) - f0)) -gt 1 ] || return 0
	e2e_log "$1: a BGP session went down that nothing touched (the" \
		"machine stalled); host $2 back, once more"
	cl_dp_start "$2"
	cl_wait_routes "$CL_NHOSTS" >/dev/null || true
	failover "$@"
}
