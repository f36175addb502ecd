#!/usr/bin/env bash
# Sluice side by side with the load balancers a user would otherwise pick,
# on the end-to-end tests' network-namespace topology and backends.
#
#   tools/compare/compare.sh [--rounds N] [--seconds S] [--threads T]
#                            [--conns C] [--csv FILE] [--keep DIR]
#                            [--only LIST]
#
# Root required. Client namespace, LB namespace, switch, three nginx
# backends (tests/e2e/lib.sh). Seven contenders take the LB namespace one
# at a time, each behind its own VIP port:
#
#   sluice-l4      lb-dataplane on the harness's AF_PACKET ports, rr, :80
#   sluice-http    the same process, a second service in http mode, :8080
#   sluice-route   the same process, a third service, synproxy on, content
#                  routing: Host api.example.com to pool api (backend 2),
#                  any other to the service's own pool (backend 1), :8082
#   haproxy-tcp    HAProxy, mode tcp, roundrobin, :81
#   haproxy-http   HAProxy, mode http, roundrobin, :8081
#   haproxy-route  HAProxy, mode http, the same routing by hdr(host), :8083
#   nginx-stream   nginx's stream proxy, round robin, :82
#
# The two routing contenders get requests with a Host header: wrk's first
# thread sends api.example.com, the others www.example.com, so each
# connection keeps one name (Sluice routes a connection by its first
# request, HAProxy every request: with one name per connection both send
# the same requests to the same backend). --only LIST (comma-separated)
# runs those contenders alone, sluice-l4 always with them.
#
# The dataplane needs veths without kernel addresses; the proxies need the
# VIP and a backend-side address on them. So the run alternates two
# phases: D (lb-dataplane up, no kernel address) and K (dataplane down,
# kernel addresses on, HAProxy and nginx serving), as D K D K ... D, every
# K between two D's. HAProxy and nginx run throughout (bound with
# ip_nonlocal_bind; idle, they wait in epoll); the dataplane is started
# for each D phase. In each phase every contender of the phase gets one
# wrk run with keep-alive and one with "Connection: close", the order
# reversed every other phase.
#
# This host's vCPUs move every 10-30 s and absolute rates with them, so
# only ratios taken close together are compared: sluice-http against
# sluice-l4 of the same D phase, a K contender against the geometric mean
# of sluice-l4 in the D phases either side of it. The table gives medians
# over the phases and the median of those per-phase ratios.
#
# CPU: utime+stime of the contender's processes (all threads) from
# /proc/PID/stat over each run, and the whole host's busy time from
# /proc/stat (which includes wrk, the backends and the kernel's softirq
# work, wherever it was charged). Knobs of the harness apply: LB_EAL_CORES
# (0-1: main lcore 0, one worker on lcore 1), LB_DP_ARGS (e.g. --idle-us 0),
# LB_BUILD_DIR / LB_DATAPLANE.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
export LB_BUILD_DIR=${LB_BUILD_DIR:-${BUILD_DIR:-$top/build}}
# shellcheck disable=SC2034 # read by lib.sh
E2E_NAME=compare
# shellcheck source=../../tests/e2e/lib.sh
. "$top/tests/e2e/lib.sh"

ROUNDS=5
SECS=3
THREADS=2
CONNS=32
CSV_OUT=
KEEP_DIR=
ONLY=

usage() {
	sed -n '4,5p' "$0" | sed 's/^# *//'
	exit "${1:-0}"
}

while [ $# -gt 0 ]; do
	case $1 in
	-n | --rounds) ROUNDS=$2; shift 2 ;;
	-d | --seconds) SECS=$2; shift 2 ;;
	-t | --threads) THREADS=$2; shift 2 ;;
	-c | --conns) CONNS=$2; shift 2 ;;
	--csv) CSV_OUT=$2; shift 2 ;;
	--keep) KEEP_DIR=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	-h | --help) usage 0 ;;
	*) usage 2 >&2 ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || usage 2 >&2

PORT_sluice_l4=80
PORT_sluice_http=8080
PORT_haproxy_tcp=81
PORT_haproxy_http=8081
PORT_nginx_stream=82
PORT_sluice_route=8082
PORT_haproxy_route=8083
D_CONTENDERS=(sluice-l4 sluice-http sluice-route)
K_CONTENDERS=(haproxy-tcp haproxy-http haproxy-route nginx-stream)
# The routing contenders' hosts; backend 2 serves the first, backend 1
# the other.
ROUTE_HOSTS=(api.example.com www.example.com)

# only_keep NAME...: those of the names --only lists (all without it).
only_keep() {
	local who
	for who in "$@"; do
		if [ -z "$ONLY" ] || [ "$who" = sluice-l4 ] ||
			[[ ",$ONLY," == *",$who,"* ]]; then
			echo "$who"
		fi
	done
}
NGINX_STREAM_MOD=/usr/lib/nginx/modules/ngx_stream_module.so

HAPROXY_PID=
NGINX_PID=
CSV=
HZ=$(getconf CLK_TCK)

port_of() {
	local v=PORT_${1//-/_}
	echo "${!v}"
}

# The proxies are ours to stop: by their PIDs, before the harness removes
# the namespaces (which would end them too).
proxies_stop() {
	local p
	for p in $HAPROXY_PID $NGINX_PID; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in $HAPROXY_PID $NGINX_PID; do
		for _ in $(seq 30); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	HAPROXY_PID=
	NGINX_PID=
}

cmp_on_exit() {
	local rc=$?
	trap - ERR INT TERM
	set +e
	# Report on the script's own outputs, whatever redirection it died in.
	exec 1>&3 2>&4
	proxies_stop
	if [ -n "$CSV_OUT" ] && [ -n "$CSV" ] && [ -s "$CSV" ]; then
		cp "$CSV" "$CSV_OUT"
	fi
	if [ -n "$KEEP_DIR" ] && [ -n "$E2E_TMP" ]; then
		mkdir -p "$KEEP_DIR"
		cp "$E2E_TMP"/*.txt "$E2E_TMP"/*.log "$E2E_TMP"/*.csv "$E2E_TMP"/*.json \
			"$E2E_TMP"/*.cfg "$E2E_TMP"/lb.conf "$KEEP_DIR"/ 2>/dev/null
		cp "$E2E_TMP"/lbnginx/nginx.conf "$KEEP_DIR"/nginx-stream.conf \
			2>/dev/null
	fi
	(exit "$rc")
	e2e_cleanup
}

# ---- CPU --------------------------------------------------------------------

# proc_ticks PID...: utime+stime of the processes (their threads included),
# in clock ticks.
proc_ticks() {
	local p s t=0 f
	for p in "$@"; do
		s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		s=${s##*) }
		read -r -a f <<<"$s"
		# Fields 14 and 15 of stat, 12 and 13 after the name.
		t=$((t + f[11] + f[12]))
	done
	echo "$t"
}

# Busy ticks of the whole host: user nice system irq softirq (guest time
# is inside user; idle, iowait and steal are not busy).
host_ticks() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat
}

now_ns() { date +%s%N; }

# The PIDs of a contender's processes.
pids_of() {
	case $1 in
	sluice-*) echo "$DP_PID" ;;
	haproxy-*) echo "$HAPROXY_PID" ;;
	nginx-*) echo "$NGINX_PID $(pgrep -P "$NGINX_PID" | tr '\n' ' ')" ;;
	esac
}

idle_sleeps() {
	tel /lb/stats -k idle_sleeps 2>/dev/null || echo 0
}

# ---- contenders -------------------------------------------------------------

# dp_conf FILE INDEX: both services; the SNAT address is new in every D
# phase. A restarted dataplane hands out its SNAT ports from the first one
# again, and the backends still hold TIME_WAIT for those 4-tuples from the
# previous phase (60 s): a SYN that lands on one is answered with the old
# connection's ACK, the client resets and retries 1 s later. A fresh
# address keeps that restart artefact out of the rounds.
dp_conf() {
	local conf=$1 i
	{
		echo "addr add $LB_ADDR_CLI/24 port 0"
		echo "addr add $LB_ADDR_BE/24 port 1"
		echo "snat add $BE_NET.$((20 + $2)) port 1"
		echo "service add tcp $VIP:$PORT_sluice_l4 sched rr"
		echo "service add tcp $VIP:$PORT_sluice_http sched rr http"
		for i in 1 2 3; do
			echo "backend add tcp $VIP:$PORT_sluice_l4 $(be_addr "$i"):80"
			echo "backend add tcp $VIP:$PORT_sluice_http $(be_addr "$i"):80"
		done
		echo "service add tcp $VIP:$PORT_sluice_route sched rr synproxy on"
		echo "backend add tcp $VIP:$PORT_sluice_route $(be_addr 1):80"
		echo "pool add tcp $VIP:$PORT_sluice_route api"
		echo "backend add tcp $VIP:$PORT_sluice_route $(be_addr 2):80 pool api"
		echo "rule add tcp $VIP:$PORT_sluice_route host ${ROUTE_HOSTS[0]} pool api"
	} >"$conf"
}

haproxy_start() {
	local cfg=$E2E_TMP/haproxy.cfg i
	{
		cat <<EOF
global
	nbthread 1
	maxconn 8000
	pidfile $E2E_TMP/haproxy.pid

defaults
	timeout connect 2s
	timeout client 30s
	timeout server 30s
	maxconn 8000

frontend tcp_in
	mode tcp
	bind $VIP:$PORT_haproxy_tcp
	default_backend be_tcp

frontend http_in
	mode http
	bind $VIP:$PORT_haproxy_http
	default_backend be_http

frontend route_in
	mode http
	bind $VIP:$PORT_haproxy_route
	use_backend be_api if { hdr(host) -i ${ROUTE_HOSTS[0]} }
	default_backend be_www

backend be_api
	mode http
	server be2 $(be_addr 2):80

backend be_www
	mode http
	server be1 $(be_addr 1):80

backend be_tcp
	mode tcp
	balance roundrobin
EOF
		for i in 1 2 3; do
			printf '\tserver be%d %s:80\n' "$i" "$(be_addr "$i")"
		done
		printf '\nbackend be_http\n\tmode http\n\tbalance roundrobin\n'
		for i in 1 2 3; do
			printf '\tserver be%d %s:80\n' "$i" "$(be_addr "$i")"
		done
	} >"$cfg"
	haproxy -c -q -f "$cfg" || die "haproxy rejects $cfg"
	ip netns exec "$NS_LB" haproxy -db -f "$cfg" \
		</dev/null >"$E2E_TMP/haproxy.log" 2>&1 &
	HAPROXY_PID=$!
	wait_listen "$NS_LB" tcp "$VIP:$PORT_haproxy_http" ||
		die "haproxy did not start: $(tail -n 3 "$E2E_TMP/haproxy.log")"
}

nginx_stream_start() {
	local dir=$E2E_TMP/lbnginx i
	mkdir -p "$dir"
	[ -f "$NGINX_STREAM_MOD" ] ||
		e2e_skip "nginx's stream module is missing" \
			"($NGINX_STREAM_MOD: libnginx-mod-stream, run tools/setup)"
	{
		cat <<EOF
load_module $NGINX_STREAM_MOD;
user nobody nogroup;
worker_processes 1;
worker_rlimit_nofile 16384;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events {
	worker_connections 8000;
}
stream {
	upstream be {
EOF
		for i in 1 2 3; do
			printf '\t\tserver %s:80;\n' "$(be_addr "$i")"
		done
		cat <<EOF
	}
	server {
		listen $VIP:$PORT_nginx_stream backlog=4096;
		proxy_connect_timeout 2s;
		proxy_pass be;
	}
}
EOF
	} >"$dir/nginx.conf"
	ip netns exec "$NS_LB" nginx -p "$dir" -e "$dir/error.log" \
		-c "$dir/nginx.conf" </dev/null >"$dir/stdout.log" 2>&1 &
	NGINX_PID=$!
	wait_listen "$NS_LB" tcp "$VIP:$PORT_nginx_stream" ||
		die "nginx (stream) did not start: $(tail -n 3 "$dir/error.log")"
}

kernel_addrs() {
	if [ "$1" = on ]; then
		ip -n "$NS_LB" addr add "$VIP/24" dev "$IF_P0"
		ip -n "$NS_LB" addr add "$LB_ADDR_BE/24" dev "$IF_P1"
	else
		ip -n "$NS_LB" addr flush dev "$IF_P0"
		ip -n "$NS_LB" addr flush dev "$IF_P1"
	fi
}

# ---- one run ----------------------------------------------------------------

# to_ms VALUE-WITH-UNIT (wrk's 812.00us, 1.20ms, 2.01s).
to_ms() {
	awk -v v="$1" 'BEGIN {
	n = v + 0
	if (v ~ /us$/) n /= 1000
	else if (v ~ /ms$/) n = n
	else if (v ~ /m$/) n *= 60000
	else if (v ~ /s$/) n *= 1000
	printf "%.3f", n
}'
}

# run_one PHASE CONTENDER MODE: one wrk run, one CSV line.
run_one() {
	local phase=$1 who=$2 mode=$3 out url pids c0 c1 h0 h1 t0 t1 s0=0 s1=0
	local hdr=() rc=0 rps req err non p50 p99
	out=$E2E_TMP/wrk-$phase-$who-$mode.txt
	url="http://$VIP:$(port_of "$who")/"
	[ "$mode" = ka ] || hdr=(-H "Connection: close")
	[ "${who#*-}" != route ] || hdr+=(-s "$E2E_TMP/hosts.lua")
	read -r -a pids <<<"$(pids_of "$who")"
	[ "${who%%-*}" != sluice ] || s0=$(idle_sleeps)
	c0=$(proc_ticks "${pids[@]}")
	h0=$(host_ticks)
	t0=$(now_ns)
	timeout $((SECS + 30)) ip netns exec "$NS_CLI" wrk -t "$THREADS" \
		-c "$CONNS" -d "${SECS}s" --timeout 2s --latency "${hdr[@]}" \
		"$url" >"$out" 2>&1 || rc=$?
	t1=$(now_ns)
	h1=$(host_ticks)
	c1=$(proc_ticks "${pids[@]}")
	if [ "${who%%-*}" = sluice ]; then
		s1=$(idle_sleeps)
		tel /lb/stats >"$E2E_TMP/stats-$phase-$who-$mode.json" 2>&1 || true
	fi
	rps=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
	req=$(awk '/requests in/ { print $1 }' "$out")
	err=$(awk '/Socket errors:/ { gsub(",", ""); print $4 + $6 + $8 + $10 }' "$out")
	non=$(awk '/Non-2xx or 3xx/ { print $NF }' "$out")
	p50=$(awk '$1 == "50%" { print $2 }' "$out")
	p99=$(awk '$1 == "99%" { print $2 }' "$out")
	if [ "$rc" -ne 0 ] || [ -z "$rps" ]; then
		e2e_log "wrk failed on $who ($mode), status $rc:"
		sed 's/^/    /' "$out" | tail -n 5
		rps=0 req=0 err=1
	fi
	echo "$phase,$who,$mode,$rps,${req:-0},$((${err:-0} + ${non:-0}))," \
		"$(to_ms "${p50:-0us}"),$(to_ms "${p99:-0us}")," \
		"$(((c1 - c0) * 1000 / HZ)),$(((h1 - h0) * 1000 / HZ))," \
		"$(((t1 - t0) / 1000000)),$((s1 - s0))" | tr -d ' ' >>"$CSV"
	printf '  %-3s %-12s %-5s %9s req/s  p50 %7s  p99 %7s  errors %s\n' \
		"$phase" "$who" "$mode" "$rps" "${p50:--}" "${p99:--}" \
		"$((${err:-0} + ${non:-0}))"
}

# idle_cpu PHASE CONTENDER...: the contenders' CPU with no traffic, over
# 2 seconds, as a CSV line of mode "idle".
idle_cpu() {
	local phase=$1 who=$2 pids c0 c1 t0 t1
	read -r -a pids <<<"$(pids_of "$who")"
	c0=$(proc_ticks "${pids[@]}")
	t0=$(now_ns)
	sleep 2
	c1=$(proc_ticks "${pids[@]}")
	t1=$(now_ns)
	echo "$phase,$who,idle,0,0,0,0,0,$(((c1 - c0) * 1000 / HZ)),0,$(((t1 - t0) / 1000000)),0" >>"$CSV"
}

# hosts_lua FILE: wrk's script of the routing contenders, one Host per
# thread (its connections keep it), the first thread's the routed one.
hosts_lua() {
	cat >"$1" <<EOF
local hosts = { "${ROUTE_HOSTS[0]}", "${ROUTE_HOSTS[1]}" }
local n = 0
function setup(thread)
	n = n + 1
	thread:set("host", hosts[n == 1 and 1 or 2])
end
function init(args)
	wrk.headers["Host"] = host
	req = wrk.format()
end
function request()
	return req
end
EOF
}

# dp_warm: a request of each name through the routed service before the
# runs. A fresh dataplane has not resolved the backends yet, and a routed
# connection whose SYN to its backend is lost meanwhile waits for the
# SYN's retry (its client's retransmissions are taken as duplicates): in
# whichever run came first, a few connections of wrk's would time out.
dp_warm() {
	local h
	for h in "${ROUTE_HOSTS[@]}"; do
		ip netns exec "$NS_CLI" curl -s -m 5 -o /dev/null -H "Host: $h" \
			"http://$VIP:$PORT_sluice_route/" || true
	done
}

# run_phase INDEX KIND: every contender of the phase, keep-alive runs
# then close runs, the order reversed on odd phases.
run_phase() {
	local idx=$1 kind=$2 list=() rev=() who mode i
	if [ "$kind" = D ]; then
		mapfile -t list < <(only_keep "${D_CONTENDERS[@]}")
		kernel_addrs off
		dp_conf "$E2E_TMP/lb.conf" "$idx"
		dp_start "$E2E_TMP/lb.conf" >>"$E2E_TMP/dp_start.log"
		idle_cpu "D$idx" sluice-l4
		dp_warm
	else
		mapfile -t list < <(only_keep "${K_CONTENDERS[@]}")
		kernel_addrs on
		idle_cpu "K$idx" haproxy-tcp
		idle_cpu "K$idx" nginx-stream
	fi
	if [ $((idx % 2)) -eq 1 ]; then
		for ((i = ${#list[@]} - 1; i >= 0; i--)); do
			rev+=("${list[i]}")
		done
		list=("${rev[@]}")
	fi
	for mode in ka close; do
		for who in "${list[@]}"; do
			run_one "$kind$idx" "$who" "$mode"
		done
	done
	if [ "$kind" = D ]; then
		dp_stop || die "lb-dataplane exited with status $DP_RC"
	else
		kernel_addrs off
	fi
}

# ---- summary ----------------------------------------------------------------

summarize() {
	"$PY" -B - "$1" <<'EOF'
import csv, math, statistics, sys

rows = []
for r in csv.reader(open(sys.argv[1])):
    rows.append(dict(phase=r[0], who=r[1], mode=r[2], rps=float(r[3]),
                     req=int(r[4]), err=int(r[5]), p50=float(r[6]),
                     p99=float(r[7]), cpu_ms=int(r[8]), host_ms=int(r[9]),
                     wall_ms=int(r[10]), sleeps=int(r[11])))

def med(xs):
    return statistics.median(xs) if xs else float("nan")

l4 = {(r["phase"], r["mode"]): r["rps"] for r in rows
      if r["who"] == "sluice-l4" and r["mode"] != "idle"}
order = ["sluice-l4", "sluice-http", "sluice-route", "haproxy-tcp",
         "haproxy-http", "haproxy-route", "nginx-stream"]

def ratio(r):
    if r["who"] == "sluice-l4":
        return 1.0
    p = r["phase"]
    if p[0] == "D":
        base = l4.get((p, r["mode"]))
        return r["rps"] / base if base else None
    k = int(p[1:])
    a, b = l4.get(("D%d" % k, r["mode"])), l4.get(("D%d" % (k + 1), r["mode"]))
    if not a or not b:
        return None
    return r["rps"] / math.sqrt(a * b)

print("| contender | mode | req/s | ratio to sluice-l4 | p50 ms | p99 ms "
      "| LB cores busy | LB CPU s / 100k req | host CPU s / 100k req "
      "| errors | runs |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for mode, label in (("ka", "keep-alive"), ("close", "Connection: close")):
    for who in order:
        rs = [r for r in rows if r["who"] == who and r["mode"] == mode]
        if not rs:
            continue
        ratios = [x for x in map(ratio, rs) if x is not None]
        ok = [r for r in rs if r["req"] > 0]
        print("| %s | %s | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f "
              "| %d | %d |" % (
                  who, label, med([r["rps"] for r in rs]), med(ratios),
                  med([r["p50"] for r in rs]), med([r["p99"] for r in rs]),
                  med([r["cpu_ms"] / r["wall_ms"] for r in rs]),
                  med([r["cpu_ms"] / 1000 / r["req"] * 1e5 for r in ok]),
                  med([r["host_ms"] / 1000 / r["req"] * 1e5 for r in ok]),
                  sum(r["err"] for r in rs), len(rs)))

# Routed by Sluice against routed by HAProxy, as the K contenders against
# sluice-l4: each K phase's run against the geometric mean of the D
# phases either side of it.
route = {(r["phase"], r["mode"]): r["rps"] for r in rows
         if r["who"] == "sluice-route"}
for mode, label in (("ka", "keep-alive"), ("close", "Connection: close")):
    rr = []
    for r in rows:
        if r["who"] != "haproxy-route" or r["mode"] != mode or not r["rps"]:
            continue
        k = int(r["phase"][1:])
        a, b = route.get(("D%d" % k, mode)), route.get(("D%d" % (k + 1), mode))
        if a and b:
            rr.append(math.sqrt(a * b) / r["rps"])
    if rr:
        print()
        print("sluice-route / haproxy-route, %s: median %.2f over %d "
              "phases (%s)" % (label, med(rr), len(rr),
                               " ".join("%.2f" % x for x in rr)))

idle = {}
for r in rows:
    if r["mode"] == "idle":
        idle.setdefault(r["who"], []).append(r["cpu_ms"] / r["wall_ms"])
print()
print("Idle (no traffic, 2 s per phase), cores busy, median: " + ", ".join(
    "%s %.3f" % ({"haproxy-tcp": "haproxy"}.get(w, w), med(v))
    for w, v in idle.items()).replace("sluice-l4", "lb-dataplane")
    .replace("nginx-stream", "nginx"))
sl = [r["sleeps"] / (r["wall_ms"] / 1000) for r in rows
      if r["who"].startswith("sluice") and r["mode"] != "idle"]
if sl:
    print("lb-dataplane idle_sleeps per second under load, median: %.0f"
          % med(sl))
EOF
}

# ---- main -------------------------------------------------------------------

e2e_init compare
e2e_need_dataplane
e2e_need_tools wrk haproxy
exec 3>&1 4>&2
trap cmp_on_exit EXIT
CSV=$E2E_TMP/runs.csv
: >"$CSV"

topo_up 3
for i in 1 2 3; do
	be_start "$i"
done
# Many short connections per run: a wide port range and TIME_WAIT reuse
# on the connecting sides. The proxies bind the VIP while it is off the
# veths (during the dataplane's phases).
ip netns exec "$NS_CLI" sysctl -qw net.ipv4.ip_local_port_range="1024 65000" \
	net.ipv4.tcp_tw_reuse=1
ip netns exec "$NS_LB" sysctl -qw net.ipv4.ip_local_port_range="1024 65000" \
	net.ipv4.tcp_tw_reuse=1 net.ipv4.ip_nonlocal_bind=1
hosts_lua "$E2E_TMP/hosts.lua"
haproxy_start
nginx_stream_start

e2e_log "$(date -u '+%F %T') UTC; $(nproc) CPUs, $(awk -F': ' \
	'/^model name/ { print $2; exit }' /proc/cpuinfo); kernel $(uname -r)"
e2e_log "lb-dataplane $LB_DATAPLANE (EAL -l ${LB_EAL_CORES:-0-1}," \
	"args: ${LB_DP_ARGS:-none}); $(haproxy -v | head -n 1 |
		awk '{print $1, $2, $3}'); $(nginx -v 2>&1 | sed 's/.*: //')"
e2e_log "wrk -t$THREADS -c$CONNS -d${SECS}s --latency, phases D K D ..." \
	"($ROUNDS K phases)"

for ((r = 0; r < ROUNDS; r++)); do
	run_phase "$r" D
	run_phase "$r" K
done
run_phase "$ROUNDS" D

echo
summarize "$CSV"
proxies_stop
e2e_finish
