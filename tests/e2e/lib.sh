# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# Shared part of the end-to-end tests, sourced by each test script.
#
# Topology built by topo_up (TAG = the test shell's PID in hex, so that
# parallel runs never collide and a crashed run's leftovers can be told
# from a live run's):
#
#   ns sl-cli-TAG         ns sl-lb-TAG              ns sl-sw-TAG
#   +-------------+       +------------------+      +-----------------+
#   | sl-c-TAG    |-------| sl-p0-TAG port 0 |      | bridge sl-br-TAG|
#   | 10.11.0.2.. |       |   lb-dataplane   |      |                 |
#   +-------------+       | sl-p1-TAG port 1 |------| sl-sp-TAG       |
#                         +------------------+      | sl-s1-TAG ..    |
#                                                   +--|--------------+
#                ns sl-be1-TAG ..                      |
#                +--------------------------------+    |
#                | sl-b1-TAG 10.12.0.11, nginx:80 |----+
#                +--------------------------------+
#
# The veths of the LB namespace carry no kernel address: the dataplane
# answers ARP for the VIP, its addresses and its SNAT address (10.12.0.2),
# and resolves its next hops itself. Every veth has its offloads off, so that frames seen
# through AF_PACKET carry complete checksums. IPv6 is off everywhere.
#
# A test script:
#
#   set -euo pipefail
#   . "$(dirname "$0")/lib.sh"
#   e2e_init l4_http          # root or skip, trap, leftovers of crashed runs
#   e2e_need_dataplane        # $LB_DATAPLANE or the build's, else skip
#   topo_up 3                 # client, LB, switch and 3 backend namespaces
#   be_start 1; ...           # nginx answering "be1"
#   dp_start "$E2E_TMP/lb.conf"
#   check "what" [ ... ]      # records a failure, goes on
#   e2e_finish                # PASS/FAIL line, exit status
#
# Everything a test creates is removed on exit, pass or fail; leftovers of
# a run killed without a chance to clean up are removed by the next run.

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_TOP=$(cd "$E2E_DIR/../.." && pwd)
PY=/usr/bin/python3

# The namespaces are private to a run, so every run uses the same plan.
CLI_NET=10.11.0
BE_NET=10.12.0
LB_ADDR_CLI=$CLI_NET.1 # the dataplane's address on port 0
LB_ADDR_BE=$BE_NET.1   # its address on port 1
LB_SNAT=$BE_NET.2      # its SNAT source towards the backends
VIP=$CLI_NET.100
# IPv6 beside them, for the dual-stack tests: the same roles, /64s.
CLI_NET6=2001:db8:11
BE_NET6=2001:db8:12
LB_ADDR6_CLI=$CLI_NET6::1
LB_ADDR6_BE=$BE_NET6::1
LB_SNAT6=$BE_NET6::2
VIP6=$CLI_NET6::100

# Bounds (seconds) of the waits; each can be raised from the environment.
E2E_DP_START_TIMEOUT=${E2E_DP_START_TIMEOUT:-30}
E2E_DP_STOP_TIMEOUT=${E2E_DP_STOP_TIMEOUT:-10}
E2E_LISTEN_TIMEOUT=${E2E_LISTEN_TIMEOUT:-10}

E2E_TAG=$(printf '%x' "$$")
E2E_NAME=${E2E_NAME:-$(basename "$0" .sh)}
E2E_TMP=
E2E_FAILS=0
E2E_DONE=
E2E_ERR=
DP_PID=
DP_LOG=
DP_RC=

NS_CLI=sl-cli-$E2E_TAG
NS_LB=sl-lb-$E2E_TAG
NS_SW=sl-sw-$E2E_TAG
IF_CLI=sl-c-$E2E_TAG   # client's veth
IF_P0=sl-p0-$E2E_TAG   # LB, client side: dataplane port 0
IF_P1=sl-p1-$E2E_TAG   # LB, backend side: dataplane port 1
IF_SWLB=sl-sp-$E2E_TAG # switch's end of the port 1 veth
BR=sl-br-$E2E_TAG
DP_PREFIX=sl$E2E_TAG   # EAL --file-prefix

ns_be() { echo "sl-be$1-$E2E_TAG"; }
if_be() { echo "sl-b$1-$E2E_TAG"; }
if_swbe() { echo "sl-s$1-$E2E_TAG"; }
cli_addr() { echo "$CLI_NET.$((1 + $1))"; } # client address 1 is .2
be_addr() { echo "$BE_NET.$((10 + $1))"; }  # backend 1 is .11
cli_addr6() { echo "$CLI_NET6::$((1 + $1))"; } # client 1 is ::2
be_addr6() { echo "$BE_NET6::$((10 + $1))"; }  # backend 1 is ::11

# ---- reporting --------------------------------------------------------------

e2e_log() { printf '%s: %s\n' "$E2E_NAME" "$*"; }

e2e_skip() {
	E2E_DONE=skip
	e2e_log "SKIP: $*"
	exit 77
}

# Fatal: prints why, then the EXIT trap cleans up and prints FAIL.
die() {
	E2E_ERR=$*
	exit 1
}

# has GREP-OPTIONS... PATTERN: whether its standard input has a matching
# line, for the end of a pipeline. It reads all of its input before it
# looks: `producer | grep -q` would stop at the first match, and a
# producer still writing then dies of SIGPIPE, which pipefail reports
# as the pipeline failing although the line was there.
has() {
	local t
	t=$(cat)
	grep -q "$@" <<<"$t"
}
export -f has

# check DESCRIPTION COMMAND...: runs the command (usually [ ... ]) and
# records a failure when it fails; the test goes on. A single string is
# evaluated, for compound conditions: check "x" '[ "$a" = 1 ] && [ ... ]'.
check() {
	local what=$1 ok=0
	shift
	if [ $# -eq 1 ]; then
		eval "$1" || ok=$?
	else
		"$@" || ok=$?
	fi
	if [ "$ok" -eq 0 ]; then
		e2e_log "ok: $what"
	else
		e2e_log "FAILED: $what"
		E2E_FAILS=$((E2E_FAILS + 1))
	fi
}

e2e_finish() {
	if [ "$E2E_FAILS" -eq 0 ]; then
		E2E_DONE=pass
		exit 0
	fi
	E2E_ERR="$E2E_FAILS check(s) failed"
	exit 1
}

# The ERR trap: remembers the first failed command and where it was
# (function frames, then the script's line).
e2e_on_err() {
	local where="${BASH_SOURCE[1]##*/}:$2" i
	for ((i = 1; i < ${#FUNCNAME[@]} - 1; i++)); do
		where="$where < ${BASH_SOURCE[i + 1]##*/}:${BASH_LINENO[i]}"
	done
	[ -n "$E2E_ERR" ] || E2E_ERR="'$3' failed with status $1 at $where"
}

# ---- life cycle -------------------------------------------------------------

# e2e_init NAME: the first call of every test.
e2e_init() {
	E2E_NAME=${1:-$E2E_NAME}
	if [ "$(id -u)" -ne 0 ]; then
		e2e_skip "needs root (network namespaces, veths, nginx on :80)"
	fi
	local t missing=()
	for t in ip ethtool nginx curl ss "$PY"; do
		command -v "$t" >/dev/null 2>&1 || missing+=("$t")
	done
	[ ${#missing[@]} -eq 0 ] ||
		e2e_skip "missing ${missing[*]} (run tools/setup)"
	set -E
	trap 'e2e_on_err $? $LINENO "$BASH_COMMAND"' ERR
	trap e2e_cleanup EXIT
	trap 'e2e_on_signal interrupted 130' INT
	trap 'e2e_on_signal terminated 143' TERM
	e2e_sweep --own
	E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sl-e2e-$E2E_TAG.XXXXXX")
	chmod 755 "$E2E_TMP"
	echo "$$ $(proc_start "$$")" >"$E2E_TMP/owner"
}

# e2e_need_tools TOOL...: skip when a peer program is missing.
e2e_need_tools() {
	local t missing=()
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || missing+=("$t")
	done
	[ ${#missing[@]} -eq 0 ] ||
		e2e_skip "missing ${missing[*]} (run tools/setup)"
}

# Sets LB_DATAPLANE: the environment's, else the build directory's
# (LB_BUILD_DIR, set by meson, else BUILD_DIR, else build/). Skips when the
# dataplane is not built; fails when LB_DATAPLANE names nothing runnable.
e2e_need_dataplane() {
	local d
	if [ -n "${LB_DATAPLANE:-}" ]; then
		[ -x "$LB_DATAPLANE" ] ||
			die "LB_DATAPLANE=$LB_DATAPLANE is not an executable"
		return 0
	fi
	d=${LB_BUILD_DIR:-${BUILD_DIR:-$E2E_TOP/build}}
	if [ -x "$d/dataplane/lb-dataplane" ]; then
		LB_DATAPLANE=$d/dataplane/lb-dataplane
		return 0
	fi
	e2e_skip "lb-dataplane is not built (no $d/dataplane/lb-dataplane;" \
		"set LB_DATAPLANE to run another)"
}

# Start time of a process in clock ticks since boot (field 22 of stat;
# the command name before it may hold spaces, so cut after its ')').
proc_start() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	# shellcheck disable=SC2086
	set -- $s
	echo "${20}"
}

# Is the run that owns TAG still alive? Its temp dir records its PID and
# start time, which tells a reused PID apart.
tag_alive() {
	local tag=$1 pid f rec
	pid=$((16#$tag))
	[ -d "/proc/$pid" ] || return 1
	for f in "${TMPDIR:-/tmp}"/sl-e2e-"$tag".*/owner; do
		[ -f "$f" ] || continue
		read -r _ rec <"$f" || continue
		[ "$rec" = "$(proc_start "$pid")" ] && return 0
		return 1
	done
	return 0 # no record yet: the run may be starting, leave it be
}

# Ends every process whose network namespace is NS (only processes this
# harness started live there), then deletes NS.
ns_destroy() {
	local ns=$1 pids i
	pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
	if [ -n "${pids// /}" ]; then
		# shellcheck disable=SC2086
		kill -TERM $pids 2>/dev/null || true
		for ((i = 0; i < 30; i++)); do
			pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
			[ -n "${pids// /}" ] || break
			sleep 0.1
		done
		# shellcheck disable=SC2086
		[ -z "${pids// /}" ] || kill -KILL $pids 2>/dev/null || true
	fi
	ip netns del "$ns" 2>/dev/null || true
}

# stale TAG: does TAG belong to a run that is gone? With E2E_SWEEP_OWN
# set (at init), this run's own tag counts too: what carries it then is
# from a dead run whose PID this one got.
stale() {
	{ [ -n "${E2E_SWEEP_OWN:-}" ] && [ "$1" = "$E2E_TAG" ]; } ||
		! tag_alive "$1"
}

# Every tag that something on this host carries: namespaces and links
# named sl-ROLE-TAG, DPDK runtime dirs slTAG, temp dirs sl-e2e-TAG.*.
e2e_tags() {
	local d
	{
		ip netns list 2>/dev/null | awk '{print $1}'
		ip -o link show 2>/dev/null | awk '{sub(/[@:].*/, "", $2); print $2}'
	} | sed -n 's/^sl-[a-z0-9]*-\([0-9a-f]\{1,8\}\)$/\1/p'
	for d in /var/run/dpdk/sl*; do
		[ -d "$d" ] || continue
		d=${d##*/sl}
		# A live DPDK process whose prefix merely looks like ours
		# answers on its socket: not ours to judge.
		[[ $d =~ ^[0-9a-f]{1,8}$ ]] || continue
		[ ! -S "/var/run/dpdk/sl$d/dpdk_telemetry.v2" ] ||
			! "$PY" "$E2E_DIR/lbtel.py" -t 1 \
				-s "/var/run/dpdk/sl$d/dpdk_telemetry.v2" /info \
				>/dev/null 2>&1 || continue
		echo "$d"
	done
	for d in "${TMPDIR:-/tmp}"/sl-e2e-*.*; do
		[ -d "$d" ] || continue
		d=${d##*/sl-e2e-}
		d=${d%%.*}
		[[ $d =~ ^[0-9a-f]{1,8}$ ]] && echo "$d"
	done
}

# e2e_reap TAG: removes everything that carries TAG: its namespaces with
# the processes in them, links, DPDK runtime dir and temp dir.
e2e_reap() {
	local tag=$1 ns l
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' |
		grep -E "^sl-[a-z0-9]+-$tag\$"); do
		ns_destroy "$ns"
	done
	for l in $(ip -o link show 2>/dev/null |
		awk '{sub(/[@:].*/, "", $2); print $2}' |
		grep -E "^sl-[a-z0-9]+-$tag\$"); do
		ip link del "$l" 2>/dev/null || true
	done
	rm -rf "/var/run/dpdk/sl$tag" "${TMPDIR:-/tmp}/sl-e2e-$tag".*
	e2e_reap_huge "$tag"
}

# e2e_sweep [--own]: removes what runs that are gone left behind.
e2e_sweep() {
	local tag n=0 E2E_SWEEP_OWN=
	[ "${1:-}" != --own ] || E2E_SWEEP_OWN=1
	for tag in $(e2e_tags | sort -u); do
		if stale "$tag"; then
			e2e_reap "$tag"
			n=$((n + 1))
		fi
	done
	[ "$n" -eq 0 ] || e2e_log "removed the leftovers of $n earlier run(s)"
}

# On SIGTERM (meson's timeout) or SIGINT: a reaper in its own session
# removes this run's things once this shell is gone, since whoever sent
# the signal may SIGKILL the whole process group before the EXIT trap is
# through (meson does after half a second).
e2e_on_signal() {
	E2E_ERR=${E2E_ERR:-$1}
	# shellcheck disable=SC2016 # expanded by the reaper's shell
	setsid -f bash -c '
for ((i = 0; i < 300; i++)); do
	[ -d "/proc/$1" ] || break
	sleep 0.1
done
. "$2"
e2e_reap "$3"' e2e-reaper "$$" "$E2E_DIR/lib.sh" "$E2E_TAG" \
		</dev/null >/dev/null 2>&1 || true
	exit "$2"
}

# The EXIT trap: diagnostics on failure, then remove everything.
e2e_cleanup() {
	local rc=$?
	trap - ERR INT TERM
	set +e
	if [ "$E2E_DONE" != pass ] && [ "$E2E_DONE" != skip ]; then
		[ -n "$E2E_ERR" ] || E2E_ERR="exited with status $rc"
		e2e_diagnose
	fi
	if [ -n "$DP_PID" ]; then
		dp_stop >/dev/null 2>&1
	fi
	e2e_reap "$E2E_TAG"
	case $E2E_DONE in
	pass) e2e_log "PASS" ;;
	skip) ;;
	*)
		e2e_log "FAIL: $E2E_ERR"
		[ "$rc" -ne 0 ] || rc=1
		;;
	esac
	exit "$rc"
}

e2e_diagnose() {
	if [ -n "$DP_PID" ] && kill -0 "$DP_PID" 2>/dev/null; then
		e2e_log "/lb/stats at failure: $(tel /lb/stats 2>&1)"
		e2e_log "/lb/backends at failure: $(tel /lb/backends 2>&1)"
	fi
	if [ -n "$DP_LOG" ] && [ -s "$DP_LOG" ]; then
		e2e_log "last lines of the dataplane's log ($LB_DATAPLANE):"
		tail -n 40 "$DP_LOG" | sed 's/^/    /'
	elif [ -n "$DP_LOG" ]; then
		e2e_log "the dataplane ($LB_DATAPLANE) wrote nothing"
	fi
}

# ---- topology ---------------------------------------------------------------

ns_create() {
	ip netns add "$1"
	ip -n "$1" link set lo up
	# Before any link arrives, so that no link ever gets IPv6.
	ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 2>/dev/null || true
}

# v6_on NS IF ADDR/LEN: IPv6 on one link of a namespace (ns_create keeps
# it off everywhere else), the address usable at once.
v6_on() {
	ip netns exec "$1" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=0"
	ip -n "$1" addr add "$3" dev "$2" nodad
}

# veth_pair NS_A IF_A NS_B IF_B: created inside the namespaces directly,
# offloads off on both ends, both up.
veth_pair() {
	ip link add "$2" netns "$1" type veth peer name "$4" netns "$3"
	veth_setup "$1" "$2"
	veth_setup "$3" "$4"
}

veth_setup() {
	ip netns exec "$1" ethtool -K "$2" rx off tx off tso off gso off \
		gro off >/dev/null
	ip -n "$1" link set "$2" up
}

# topo_up NB_BACKENDS [NB_CLIENT_ADDRS]: the namespaces, links and
# addresses of the picture at the top. No route anywhere: the VIP and the
# dataplane's addresses are on the client's link, the SNAT address on the
# backends' link.
topo_up() {
	local nbe=${1:-3} ncli=${2:-1} i
	ns_create "$NS_CLI"
	ns_create "$NS_LB"
	ns_create "$NS_SW"
	for ((i = 1; i <= nbe; i++)); do
		ns_create "$(ns_be "$i")"
	done

	veth_pair "$NS_CLI" "$IF_CLI" "$NS_LB" "$IF_P0"
	veth_pair "$NS_LB" "$IF_P1" "$NS_SW" "$IF_SWLB"
	ip -n "$NS_SW" link add "$BR" type bridge
	ip -n "$NS_SW" link set "$BR" up
	ip -n "$NS_SW" link set "$IF_SWLB" master "$BR"
	for ((i = 1; i <= nbe; i++)); do
		veth_pair "$(ns_be "$i")" "$(if_be "$i")" "$NS_SW" \
			"$(if_swbe "$i")"
		ip -n "$NS_SW" link set "$(if_swbe "$i")" master "$BR"
		ip -n "$(ns_be "$i")" addr add "$(be_addr "$i")/24" \
			dev "$(if_be "$i")"
	done
	for ((i = 1; i <= ncli; i++)); do
		ip -n "$NS_CLI" addr add "$(cli_addr "$i")/24" dev "$IF_CLI"
	done
	e2e_log "topology up: client $(cli_addr 1)$([ "$ncli" -eq 1 ] ||
		echo "..$(cli_addr "$ncli")"), $nbe backend(s)" \
		"$(be_addr 1)..$(be_addr "$nbe"), tag $E2E_TAG"
}

# MAC address of IF in NS.
if_mac() {
	ip netns exec "$1" cat "/sys/class/net/$2/address"
}

# wait_listen NS PROTO ADDR:PORT [gone]: until a socket listens there (or
# until none does), within E2E_LISTEN_TIMEOUT.
wait_listen() {
	local ns=$1 proto=$2 ep=$3 gone=${4:-} flag=-Hltn i found
	[ "$proto" = udp ] && flag=-Hlun
	for ((i = 0; i < E2E_LISTEN_TIMEOUT * 10; i++)); do
		found=$(ip netns exec "$ns" ss $flag "src $ep" 2>/dev/null)
		if [ -n "$gone" ]; then [ -z "$found" ] && return 0
		else [ -n "$found" ] && return 0; fi
		sleep 0.1
	done
	return 1
}

# ---- backends ---------------------------------------------------------------

# be_start I [STATUS [DELAY_MS]]: nginx on backend I's address, port 80,
# answering every request with STATUS (200) and the body "beI"; with
# BE_LISTEN6 set, on its IPv6 address (be_addr6) too. With a
# delay, nginx proxies to a local server that sleeps first. BE_LOCATIONS,
# when set, goes into the server block as it is (@DIR@ stands for the
# backend's directory), for tests that need more locations. With
# BE_TLS set, it listens on port 443 with TLS too, with a self-signed
# certificate whose subject is CN=beI.
be_start() {
	local i=$1 status=${2:-200} delay=${3:-0} ns dir addr loc
	ns=$(ns_be "$i")
	addr=$(be_addr "$i")
	dir=$E2E_TMP/be$i
	mkdir -p "$dir"
	if [ "$delay" -gt 0 ]; then
		ip netns exec "$ns" "$PY" "$E2E_DIR/nettool.py" http-slow \
			--bind 127.0.0.1:8080 --name "be$i" --status "$status" \
			--delay-ms "$delay" >"$dir/slow.log" 2>&1 &
		wait_listen "$ns" tcp 127.0.0.1:8080 ||
			die "be$i: the delaying server did not start"
		loc="proxy_pass http://127.0.0.1:8080;"
	else
		loc="return $status \"be$i\\n\";"
	fi
	if [ -n "${BE_TLS:-}" ]; then
		openssl req -x509 -newkey rsa:2048 -nodes -days 1 \
			-subj "/CN=be$i" -keyout "$dir/key.pem" \
			-out "$dir/cert.pem" >"$dir/openssl.log" 2>&1 ||
			die "be$i: no certificate: $(tail -n 2 "$dir/openssl.log")"
	fi
	cat >"$dir/nginx.conf" <<EOF
user nobody nogroup;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events {
	worker_connections 4096;
}
http {
	access_log off;
	default_type text/plain;
	keepalive_requests 1000000;
	client_body_temp_path $dir/body;
	proxy_temp_path $dir/proxy;
	fastcgi_temp_path $dir/fastcgi;
	uwsgi_temp_path $dir/uwsgi;
	scgi_temp_path $dir/scgi;
	server {
		listen $addr:80 backlog=4096;
		${BE_LISTEN6:+listen [$(be_addr6 "$i")]:80 backlog=4096;}
		${BE_TLS:+listen $addr:443 ssl; ssl_certificate $dir/cert.pem;}
		${BE_TLS:+ssl_certificate_key $dir/key.pem;}
		location / {
			$loc
		}
		${BE_LOCATIONS:+${BE_LOCATIONS//@DIR@/$dir}}
	}
}
EOF
	ip netns exec "$ns" nginx -p "$dir" -e "$dir/error.log" \
		-c "$dir/nginx.conf" ||
		die "be$i: nginx did not start: $(tail -n 5 "$dir/error.log")"
	wait_listen "$ns" tcp "$addr:80" ||
		die "be$i: nginx is not listening on $addr:80"
	[ -z "${BE_TLS:-}" ] || wait_listen "$ns" tcp "$addr:443" ||
		die "be$i: nginx is not listening on $addr:443"
}

# be_kill I: stops backend I's nginx; its namespace and address stay, so
# the kernel there answers a SYN to port 80 with a RST.
be_kill() {
	local i=$1 ns pid addr
	ns=$(ns_be "$i")
	addr=$(be_addr "$i")
	pid=$(cat "$E2E_TMP/be$i/nginx.pid" 2>/dev/null) ||
		die "be$i: no nginx pid file"
	kill -TERM "$pid" 2>/dev/null || true
	wait_listen "$ns" tcp "$addr:80" gone ||
		die "be$i: nginx still listens on $addr:80"
	e2e_log "be$i: nginx stopped ($addr:80 closed)"
}

# be_udp_start I PORT [ONLY]: a UDP echo server on backend I's address
# answering "beI <datagram>"; with ONLY, only the datagrams that start
# with ONLY (udp_probe's start with "probe-"), the others never.
be_udp_start() {
	local i=$1 port=$2 only=${3:-} ns
	ns=$(ns_be "$i")
	ip netns exec "$ns" "$PY" "$E2E_DIR/nettool.py" udp-echo \
		--bind "$(be_addr "$i"):$port" --name "be$i" \
		${only:+--only "$only"} >"$E2E_TMP/udp-be$i-$port.log" 2>&1 &
	wait_listen "$ns" udp "$(be_addr "$i"):$port" ||
		die "be$i: the UDP echo server did not start"
}

# ---- dataplane --------------------------------------------------------------

# dp_start CONFIG [DATAPLANE ARGS...]: runs lb-dataplane in the LB
# namespace on AF_PACKET ports over the two veths and returns once its
# telemetry answers /lb/stats. EAL cores, memory and extra dataplane
# arguments come from LB_EAL_CORES (0-1), LB_EAL_MEM (512) and LB_DP_ARGS.
dp_start() {
	local conf=$1 i rc
	shift
	[ -f "$conf" ] || die "dp_start: no config file $conf"
	DP_LOG=$E2E_TMP/dataplane.log
	e2e_log "config:"
	sed 's/^/    /' "$conf"
	# shellcheck disable=SC2086
	ip netns exec "$NS_LB" "$LB_DATAPLANE" \
		-l "${LB_EAL_CORES:-0-1}" --no-pci --no-huge \
		-m "${LB_EAL_MEM:-512}" --no-shconf --file-prefix "$DP_PREFIX" \
		--vdev="net_af_packet0,iface=$IF_P0" \
		--vdev="net_af_packet1,iface=$IF_P1" \
		-- --config "$conf" ${LB_DP_ARGS:-} "$@" \
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
			e2e_log "lb-dataplane up (pid $DP_PID, prefix $DP_PREFIX)"
			return 0
		fi
		sleep 0.2
	done
	die "lb-dataplane did not answer /lb/stats on its telemetry socket" \
		"within ${E2E_DP_START_TIMEOUT}s ($(tel /lb/stats 2>&1 | tail -n 1))"
}

# dp_stop: SIGTERM, then SIGKILL after E2E_DP_STOP_TIMEOUT; sets DP_RC to
# the exit status and returns it.
dp_stop() {
	local i
	DP_RC=
	[ -n "$DP_PID" ] || return 0
	kill -TERM "$DP_PID" 2>/dev/null || true
	for ((i = 0; i < E2E_DP_STOP_TIMEOUT * 10; i++)); do
		kill -0 "$DP_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$DP_PID" 2>/dev/null; then
		e2e_log "lb-dataplane ignored SIGTERM for" \
			"${E2E_DP_STOP_TIMEOUT}s; killing it"
		kill -KILL "$DP_PID" 2>/dev/null || true
	fi
	DP_RC=0
	wait "$DP_PID" 2>/dev/null || DP_RC=$?
	DP_PID=
	rm -rf "/var/run/dpdk/$DP_PREFIX"
	return "$DP_RC"
}

# be6_start I...: backends I with IPv6 on their link (be_addr6), their
# nginx listening on it too (BE_LISTEN6, then set for every later
# be_start).
be6_start() {
	local i
	export BE_LISTEN6=1
	for i in "$@"; do
		v6_on "$(ns_be "$i")" "$(if_be "$i")" "$(be_addr6 "$i")/64"
		be_start "$i"
	done
}

# conf_ports FILE: the start of every dataplane config: the dataplane's
# address on each port and its SNAT address on the backend side, an
# address of its own so that ARP for a SNAT-only address is exercised
# (the port's address would do too).
conf_ports() {
	cat >"$1" <<EOF
addr add $LB_ADDR_CLI/24 port 0
addr add $LB_ADDR_BE/24 port 1
snat add $LB_SNAT port 1
EOF
}

# conf_ports6 FILE: conf_ports with the IPv6 address of each port and an
# IPv6 SNAT address on the backend side.
conf_ports6() {
	conf_ports "$1"
	cat >>"$1" <<EOF
addr add $LB_ADDR6_CLI/64 port 0
addr add $LB_ADDR6_BE/64 port 1
snat add $LB_SNAT6 port 1
EOF
}

# tel CMD [-k KEY...]: the dataplane's telemetry (see lbtel.py).
tel() {
	"$PY" "$E2E_DIR/lbtel.py" --prefix "$DP_PREFIX" "$@"
}

# tel_save CMD FILE: the whole reply, for jget.
tel_save() {
	tel "$1" >"$2"
}

# jget FILE KEY...: a value out of a saved reply (keys as in lbtel.py -k,
# starting with the command), or "-" when it is not there.
jget() {
	"$PY" -B -c '
import json, sys
sys.path.insert(0, sys.argv[1])
from lbtel import pick, _text
try:
    print(_text(pick(json.load(open(sys.argv[2])), sys.argv[3:])))
except (KeyError, ValueError, OSError):
    print("-")
' "$E2E_DIR" "$@"
}

# be_field FILE SVC I FIELD: FIELD of backend I (on SVC's port) of the
# service SVC ("tcp 10.11.0.100:80") in a saved /lb/backends reply, or
# "-" when it is not there.
be_field() {
	"$PY" -B -c '
import json, sys
sys.path.insert(0, sys.argv[1])
from lbtel import find_backend, _text
try:
    v = json.load(open(sys.argv[2]))["/lb/backends"]
    print(_text(find_backend(v, sys.argv[3], sys.argv[4])[sys.argv[5]]))
except (KeyError, ValueError, OSError, TypeError):
    print("-")
' "$E2E_DIR" "$1" "$2" "$(be_addr "$3"):${2##*:}" "$4"
}

# drop_count FILE REASON: the counter of a parser drop reason in a saved
# /lb/stats reply: under "malformed" when the dataplane keeps the parser's
# reasons apart from its own drops, else under "drop"; "-" when absent.
drop_count() {
	local v
	v=$(jget "$1" /lb/stats malformed "$2")
	[ "$v" != - ] || v=$(jget "$1" /lb/stats drop "$2")
	echo "$v"
}

# wait_value SECONDS CMD KEY... = VALUE: polls telemetry every half
# second until the value equals VALUE; prints the last value read and the
# seconds it took, and fails when SECONDS pass first.
wait_value() {
	local secs=$1 cmd=$2 want
	shift 2
	local keys=()
	while [ $# -gt 0 ] && [ "$1" != "=" ]; do
		keys+=(-k "$1")
		shift
	done
	want=${2:?wait_value: KEY... = VALUE}
	wait_output "$secs" "$want" tel "$cmd" "${keys[@]}"
}

# wait_output SECONDS WANT CMD...: runs CMD every WAIT_PERIOD seconds
# (0.5 unless set) until it prints WANT; prints the last output and the
# seconds it took, and fails when SECONDS pass first.
wait_output() {
	local secs=$1 want=$2 v t0 ms
	shift 2
	t0=$(date +%s%N)
	while :; do
		v=$("$@" 2>/dev/null) || v='?'
		ms=$((($(date +%s%N) - t0) / 1000000))
		if [ "$v" = "$want" ]; then
			echo "$v $((ms / 1000)).$((ms % 1000 / 100))"
			return 0
		fi
		if [ "$ms" -ge $((secs * 1000)) ]; then
			echo "$v $secs"
			return 1
		fi
		sleep "${WAIT_PERIOD:-0.5}"
	done
}

# ---- clients ----------------------------------------------------------------

# http_seq URL N OUT [SRC_ADDR]: N sequential requests from the client
# namespace, a new connection each; one line per request in OUT:
# "index curl_status http_code seconds body" (body "-" when empty).
# Timeouts: E2E_SEQ_CONNECT_TIMEOUT (3 s), E2E_SEQ_MAX_TIME (5 s).
http_seq() {
	# shellcheck disable=SC2016 # expanded by the client's shell
	ip netns exec "$NS_CLI" bash -c '
url=$1 n=$2 out=$3 src=$4 ct=$5 mt=$6 tmp=$3.body
: >"$out"
for ((i = 1; i <= n; i++)); do
	rc=0
	w=$(curl -sS -o "$tmp" --connect-timeout "$ct" --max-time "$mt" \
		-H "Connection: close" ${src:+--interface "$src"} \
		-w "%{http_code} %{time_total}" "$url" 2>>"$out.err") || rc=$?
	body=
	[ ! -f "$tmp" ] || body=$(tr -d "\r\n " <"$tmp")
	echo "$i $rc ${w:-000 0} ${body:--}" >>"$out"
	rm -f "$tmp"
done
' http_seq "$1" "$2" "$3" "${4:-}" "${E2E_SEQ_CONNECT_TIMEOUT:-3}" \
		"${E2E_SEQ_MAX_TIME:-5}"
}

# http_tally OUT: "ok=N fail=M max_s=T beI=N..." of an http_seq output
# (ok: HTTP 200 with a backend's name as the body).
http_tally() {
	awk '
{
	if ($2 == 0 && $3 == 200 && $5 ~ /^be[0-9]+$/) {
		ok++
		by[$5]++
	} else
		fail++
	if ($4 > max)
		max = $4
}
END {
	printf "ok=%d fail=%d max_s=%.3f", ok, fail, max
	for (i = 1; i <= 99; i++)
		if (("be" i) in by)
			printf " be%d=%d", i, by["be" i]
	printf "\n"
}' "$1"
}

# field KEY "k=v k=v...": the value of KEY (0 when absent).
field() {
	local kv
	for kv in $2; do
		[ "${kv%%=*}" = "$1" ] && { echo "${kv#*=}"; return 0; }
	done
	echo 0
}

# http_failures OUT: the lines of failed requests, with curl's errors.
http_failures() {
	e2e_log "failed requests (index, curl status, HTTP code, seconds," \
		"body), first 10:"
	awk '!($2 == 0 && $3 == 200 && $5 ~ /^be[0-9]+$/)' "$1" |
		head -n 10 | sed 's/^/    /'
	[ ! -s "$1.err" ] || {
		e2e_log "curl's errors:"
		sort "$1.err" | uniq -c | sort -rn | head -n 5 | sed 's/^/  /'
	}
}

# wrk_run URL SECONDS THREADS CONNS OUT [WRK OPTION...]: wrk from the client
# namespace, with the extra options given (e.g. -H "Connection: close");
# prints "requests=N socket_errors=N non2xx=N rps=R".
wrk_run() {
	local url=$1 secs=$2 thr=$3 conns=$4 out=$5 rc=0
	shift 5
	timeout $((secs + 30)) ip netns exec "$NS_CLI" wrk -t "$thr" \
		-c "$conns" -d "${secs}s" --timeout 2s "$@" "$url" >"$out" 2>&1 ||
		rc=$?
	awk -v rc="$rc" '
/requests in/ { req = $1 }
/Socket errors:/ {
	gsub(",", "")
	se = $4 + $6 + $8 + $10
}
/Non-2xx or 3xx responses:/ { non = $NF }
/Requests\/sec:/ { rps = $2 }
END {
	if (rc != 0) se = se + 1000000
	printf "requests=%d socket_errors=%d non2xx=%d rps=%s wrk_status=%d\n",
		req, se, non, rps == "" ? 0 : rps, rc
}' "$out"
}

# Malformed frames nettool.py builds, each hitting one parser drop reason.
MALFORMED_KINDS="ip_csum ip_version tcp_trunc tcp_flags udp_len trunc_l3"

# inject_malformed COUNT: COUNT frames of each kind, from the client's
# veth to the MAC of port 0, addressed to VIP:80.
inject_malformed() {
	local k args=()
	for k in $MALFORMED_KINDS; do
		args+=(--kind "$k")
	done
	ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/nettool.py" inject \
		--iface "$IF_CLI" --dst-mac "$(if_mac "$NS_LB" "$IF_P0")" \
		--src "$(cli_addr 1)" --dst "$VIP:80" --count "$1" "${args[@]}"
}

# udp_probe ADDR:PORT N BASE_PORT: N datagrams, one per source port
# BASE_PORT.., each sent once; prints the JSON summary of nettool.py.
udp_probe() {
	ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/nettool.py" udp-probe \
		--target "$1" --src "$(cli_addr 1)" --count "$2" \
		--base-port "$3" --timeout "${4:-2}"
}

# ---- lb-control and lbctl ---------------------------------------------------
#
# lb-control attaches to the dataplane as a DPDK secondary process, which a
# dataplane on --no-huge memory or with --no-shconf cannot have: the tests
# that drive lb-control start the dataplane on hugepages with
# dp_start_shared, and lb-control in the LB namespace (so that its metrics
# port, 127.0.0.1:9470, is private to the run) with ctl_start:
#
#   e2e_init control_live
#   e2e_need_control              # dataplane, lb-control, lbctl, hugepages
#   topo_up 2; be_start 1; ...
#   conf_ports "$E2E_TMP/lb.conf"
#   dp_start_shared "$E2E_TMP/lb.conf"
#   ctl_start                     # returns once lbctl gets an answer
#   ctl_do service add tcp "$VIP:80" sched rr   # dies when refused
#   ctl backend list              # lbctl on this run's socket
#
# lb-control's socket, state file and log are in $E2E_TMP. On exit, pass or
# fail, lb-control is stopped before the dataplane, its log is shown on
# failure, and the dataplane's hugepage files go with the rest of the run.

E2E_CTL_START_TIMEOUT=${E2E_CTL_START_TIMEOUT:-30}
E2E_CTL_STOP_TIMEOUT=${E2E_CTL_STOP_TIMEOUT:-10}
# Free hugepage memory (MiB) a run needs: the dataplane's pools and flow
# tables and lb-control's tables take about 70 MiB with the defaults.
E2E_HUGE_MB=${E2E_HUGE_MB:-256}
CTL_PID=
CTL_LOG=
CTL_RC=
CTL_SOCK=
CTL_STATE=
CTL_METRICS=127.0.0.1:9470

# e2e_reap_huge TAG: the dataplane's hugepage files (DPDK leaves them
# behind, even on a clean exit), in every hugetlbfs mount.
e2e_reap_huge() {
	local m
	awk '$3 == "hugetlbfs" { print $2 }' /proc/mounts | while read -r m; do
		rm -f "$m/sl$1"map_* 2>/dev/null || true
	done
}

# Sets LB_CONTROL and LBCTL (the environment's, else the build
# directory's, as for the dataplane) and checks for free hugepages; skips
# when something is missing. Installs the EXIT trap that stops lb-control.
e2e_need_control() {
	local d f free
	e2e_need_dataplane
	d=${LB_BUILD_DIR:-${BUILD_DIR:-$E2E_TOP/build}}
	if [ -n "${LB_CONTROL:-}" ]; then
		[ -x "$LB_CONTROL" ] ||
			die "LB_CONTROL=$LB_CONTROL is not an executable"
	else
		for f in "$d/control/lb-control" "$d/dataplane/lb-control"; do
			[ -x "$f" ] && { LB_CONTROL=$f; break; }
		done
		[ -n "${LB_CONTROL:-}" ] ||
			e2e_skip "lb-control is not built (no $d/control/lb-control;" \
				"set LB_CONTROL to run another)"
	fi
	if [ -n "${LBCTL:-}" ]; then
		[ -x "$LBCTL" ] || die "LBCTL=$LBCTL is not an executable"
	else
		LBCTL=$d/tools/lbctl/lbctl
		[ -x "$LBCTL" ] ||
			e2e_skip "lbctl is not built (no $LBCTL; set LBCTL)"
	fi
	grep -qs ' hugetlbfs ' /proc/mounts ||
		e2e_skip "no hugetlbfs mounted: lb-control is a DPDK secondary" \
			"process, which a --no-huge dataplane cannot have" \
			"(run tools/setup)"
	free=$(awk '/^HugePages_Free:/ { f = $2 }
		/^Hugepagesize:/ { s = $2 }
		END { print int(f * s / 1024) }' /proc/meminfo)
	[ "$free" -ge "$E2E_HUGE_MB" ] ||
		e2e_skip "needs $E2E_HUGE_MB MiB of free hugepages, has $free" \
			"(lb-control is a DPDK secondary process, which a" \
			"--no-huge dataplane cannot have; run tools/setup)"
	trap ctl_on_exit EXIT
}

# The EXIT trap of lb-control tests: its diagnostics on failure, stop it,
# then the harness's own cleanup with the exit status it would have seen.
ctl_on_exit() {
	local rc=$?
	trap - ERR INT TERM
	set +e
	if [ "$E2E_DONE" != pass ] && [ "$E2E_DONE" != skip ]; then
		ctl_diagnose
	fi
	if [ -n "$CTL_PID" ]; then
		ctl_stop >/dev/null 2>&1
	fi
	(exit "$rc")
	e2e_cleanup
}

ctl_diagnose() {
	if [ -n "$CTL_PID" ] && kill -0 "$CTL_PID" 2>/dev/null; then
		e2e_log "lbctl stats at failure:"
		ctl stats 2>&1 | head -n 40 | sed 's/^/    /'
		e2e_log "lbctl backend list at failure:"
		ctl backend list 2>&1 | head -n 40 | sed 's/^/    /'
	fi
	if [ -n "$CTL_LOG" ] && [ -s "$CTL_LOG" ]; then
		e2e_log "last lines of lb-control's log ($LB_CONTROL):"
		tail -n 40 "$CTL_LOG" | sed 's/^/    /'
	fi
}

# dp_start_shared CONFIG [DATAPLANE ARGS...]: dp_start's dataplane on
# hugepages (at most LB_EAL_MEM MiB, 512 unless set) with the shared
# configuration a secondary process needs, on E2E_PMD ports
# (net_af_packet unless set).
dp_start_shared() {
	local conf=$1 i rc
	shift
	[ -f "$conf" ] || die "dp_start_shared: no config file $conf"
	DP_LOG=$E2E_TMP/dataplane.log
	e2e_log "config:"
	sed 's/^/    /' "$conf"
	# LB_EAL_LCORES (an --lcores map) runs more workers than CPUs;
	# LB_AFP_ARGS gives the ports one queue pair per worker.
	local cores="-l ${LB_EAL_CORES:-0-1}"
	[ -z "${LB_EAL_LCORES:-}" ] || cores="--lcores=$LB_EAL_LCORES"
	# shellcheck disable=SC2086
	lb_ns_prefix
	"${LB_NSX[@]}" "$LB_DATAPLANE" $cores --no-pci \
		--socket-limit "${LB_EAL_MEM:-512}" --file-prefix "$DP_PREFIX" \
		--vdev="${E2E_PMD:-net_af_packet}0,iface=$IF_P0${LB_AFP_ARGS:-}" \
		--vdev="${E2E_PMD:-net_af_packet}1,iface=$IF_P1${LB_AFP_ARGS:-}" \
		-- --config "$conf" ${LB_DP_ARGS:-} "$@" \
		</dev/null >>"$DP_LOG" 2>&1 &
	DP_PID=$!
	for ((i = 0; i < E2E_DP_START_TIMEOUT * 5; i++)); do
		if ! kill -0 "$DP_PID" 2>/dev/null; then
			rc=0
			wait "$DP_PID" || rc=$?
			DP_PID=
			die "lb-dataplane exited with status $rc while starting" \
				"($(tail -n 1 "$DP_LOG"))"
		fi
		if tel /lb/stats >/dev/null 2>&1; then
			e2e_log "lb-dataplane up on hugepages (pid $DP_PID," \
				"prefix $DP_PREFIX)"
			return 0
		fi
		sleep 0.2
	done
	die "lb-dataplane did not answer /lb/stats on its telemetry socket" \
		"within ${E2E_DP_START_TIMEOUT}s"
}

# lb_ns_prefix: LB_NSX, the command prefix that runs a program in the LB
# namespace (it execs the program: the pid of a background job is the
# program's). With E2E_KEEP_MOUNTS=1 only the network namespace changes
# (nsenter): `ip netns exec` mounts a /sys of its own, which hides the
# host's bpffs from the XDP steering maps.
lb_ns_prefix() {
	if [ "${E2E_KEEP_MOUNTS:-0}" = 1 ]; then
		LB_NSX=(nsenter --net="/run/netns/$NS_LB")
	else
		LB_NSX=(ip netns exec "$NS_LB")
	fi
}

# ctl LBCTL-ARGS...: lbctl on this run's lb-control.
ctl() {
	"$LBCTL" --socket "$CTL_SOCK" "$@"
}

# ctl_do LBCTL-ARGS...: lbctl that must succeed; its output on stdout.
ctl_do() {
	local out rc=0
	out=$(ctl "$@" 2>&1) || rc=$?
	[ "$rc" -eq 0 ] || die "lbctl $* exited with status $rc: $out"
	[ -z "$out" ] || printf '%s\n' "$out"
}

# ctl_start [LB-CONTROL ARGS...]: lb-control as a secondary process of
# this run's dataplane, in the LB namespace; returns once `lbctl stats`
# answers. Its state file and socket stay across restarts of one run.
# shellcheck disable=SC2120 # the arguments are optional
ctl_start() {
	local i rc
	CTL_SOCK=$E2E_TMP/ctl.sock
	CTL_STATE=${CTL_STATE:-$E2E_TMP/state.conf}
	CTL_LOG=$E2E_TMP/control.log
	echo "---- ctl_start $(date +%T.%N)" >>"$CTL_LOG"
	lb_ns_prefix
	"${LB_NSX[@]}" "$LB_CONTROL" \
		--proc-type=secondary --file-prefix "$DP_PREFIX" --no-pci \
		-l "${LB_CTL_CORES:-0}" \
		-- --socket "$CTL_SOCK" --state "$CTL_STATE" \
		--metrics "$CTL_METRICS" "$@" \
		</dev/null >>"$CTL_LOG" 2>&1 &
	CTL_PID=$!
	for ((i = 0; i < E2E_CTL_START_TIMEOUT * 5; i++)); do
		if ! kill -0 "$CTL_PID" 2>/dev/null; then
			rc=0
			wait "$CTL_PID" || rc=$?
			CTL_PID=
			die "lb-control exited with status $rc while starting" \
				"($(tail -n 1 "$CTL_LOG"))"
		fi
		if ctl --timeout 2 stats >/dev/null 2>&1; then
			e2e_log "lb-control up (pid $CTL_PID)"
			return 0
		fi
		sleep 0.2
	done
	die "lb-control did not answer 'lbctl stats' within" \
		"${E2E_CTL_START_TIMEOUT}s ($(tail -n 1 "$CTL_LOG"))"
}

# ctl_stop [SIGNAL]: SIGTERM (or SIGNAL), SIGKILL after
# E2E_CTL_STOP_TIMEOUT; sets CTL_RC to the exit status and returns it.
# shellcheck disable=SC2120 # the signal is optional
ctl_stop() {
	local sig=${1:-TERM} i
	CTL_RC=
	[ -n "$CTL_PID" ] || return 0
	kill -"$sig" "$CTL_PID" 2>/dev/null || true
	for ((i = 0; i < E2E_CTL_STOP_TIMEOUT * 10; i++)); do
		kill -0 "$CTL_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$CTL_PID" 2>/dev/null; then
		e2e_log "lb-control ignored SIG$sig for" \
			"${E2E_CTL_STOP_TIMEOUT}s; killing it"
		kill -KILL "$CTL_PID" 2>/dev/null || true
	fi
	CTL_RC=0
	wait "$CTL_PID" 2>/dev/null || CTL_RC=$?
	CTL_PID=
	return "$CTL_RC"
}

# ctl_json FILE LBCTL-ARGS...: the data of a command, for jq_get.
ctl_json() {
	local f=$1
	shift
	ctl --json "$@" >"$f"
}

# jq_get FILE EXPR: a Python expression over the JSON document `d` in
# FILE, printed ("-" when it raises), e.g.
#   jq_get "$f" 'd["backends"][0]["state"]'
jq_get() {
	"$PY" -B -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    v = eval(sys.argv[2], {"d": d, "len": len, "sum": sum, "any": any,
                           "all": all, "str": str, "int": int})
    print(json.dumps(v) if isinstance(v, (dict, list)) else v)
except Exception:
    print("-")
' "$1" "$2"
}

# scale_count STATE / scale_stat NAME: the autoscaled service $SVC's
# instances in STATE, its counter NAME (scale show --json).
scale_count() {
	ctl_json "$E2E_TMP/show.json" scale show $SVC
	jq_get "$E2E_TMP/show.json" "d['services'][0]['counts']['$1']"
}
scale_stat() {
	ctl_json "$E2E_TMP/show.json" scale show $SVC
	jq_get "$E2E_TMP/show.json" "d['services'][0]['stats']['$1']"
}
# scale_wait_active N SECONDS: until $SVC has N active instances.
scale_wait_active() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(scale_count active)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# ctl_restart_same: the state file holds what `lbctl save` says, and
# lb-control stopped (exit 0) and started again restores it ($E2E_TMP/
# save0 and save1, what was saved before and after).
ctl_restart_same() {
	ctl_do save >"$E2E_TMP/save0"
	sed 's/^/    /' "$E2E_TMP/save0"
	check "the state file holds that configuration" \
		diff -u <(grep -v '^#' "$CTL_STATE") \
		<(grep -v '^#' "$E2E_TMP/save0")
	ctl_stop
	check "lb-control exits 0 on SIGTERM (status $CTL_RC)" \
		[ "$CTL_RC" = 0 ]
	ctl_start
	ctl_do save >"$E2E_TMP/save1"
	check "restarted from the state file, save is what it was" \
		diff -u "$E2E_TMP/save0" "$E2E_TMP/save1"
}

# ctl_snapshot FILE: lbctl save, the state file and the dataplane's table
# generation, which a refused command must leave as they were.
ctl_snapshot() {
	{
		echo "== save"
		ctl save
		echo "== state file"
		cat "$CTL_STATE" 2>/dev/null || echo "(none)"
		echo "== dataplane table generation"
		tel /lb/stats -k conf_gen
	} >"$1" 2>&1
}

CTL_BAD_N=0
# ctl_bad EXPECTED_MESSAGE LBCTL-ARGS...: refused with that one line on
# stderr, nothing on stdout, no change (ctl_snapshot).
ctl_bad() {
	local want=$1 rc=0 out err
	shift
	CTL_BAD_N=$((CTL_BAD_N + 1))
	local n=$CTL_BAD_N
	ctl_snapshot "$E2E_TMP/before.$n"
	ctl "$@" >"$E2E_TMP/out.$n" 2>"$E2E_TMP/err.$n" || rc=$?
	ctl_snapshot "$E2E_TMP/after.$n"
	out=$(cat "$E2E_TMP/out.$n")
	err=$(cat "$E2E_TMP/err.$n")
	e2e_log "lbctl $*: status $rc, '$err'"
	check "lbctl $*: exit 1" [ "$rc" -eq 1 ]
	check "lbctl $*: one line on stderr, 'lbctl: $want'" \
		'[ "$(wc -l <"$E2E_TMP/err.$n")" -eq 1 ] &&
		 [ "$err" = "lbctl: $want" ]'
	check "lbctl $*: nothing on stdout" [ -z "$out" ]
	if ! cmp -s "$E2E_TMP/before.$n" "$E2E_TMP/after.$n"; then
		diff -u "$E2E_TMP/before.$n" "$E2E_TMP/after.$n" |
			sed 's/^/    /' || true
	fi
	check "lbctl $*: configuration, state file and table unchanged" \
		cmp -s "$E2E_TMP/before.$n" "$E2E_TMP/after.$n"
}

# metrics: lb-control's /metrics (from inside the LB namespace).
metrics() {
	ip netns exec "$NS_LB" curl -sS --max-time 5 \
		"http://$CTL_METRICS/metrics"
}

# ctl_two_up: two nginx backends, a dataplane on hugepages with only its
# ports in its boot configuration ($conf), and lb-control.
ctl_two_up() {
	topo_up 2
	be_start 1
	be_start 2
	conf=$E2E_TMP/lb.conf
	conf_ports "$conf"
	dp_start_shared "$conf"
	ctl_start
}

# ctl_wrr_up: ctl_two_up, and through lbctl a wrr service "tcp VIP:80"
# with be1 at weight 1 and be2 at weight 2.
ctl_wrr_up() {
	local svc="tcp $VIP:80"
	ctl_two_up
	ctl_do service add $svc sched wrr >/dev/null
	ctl_do backend add $svc "$(be_addr 1):80" >/dev/null
	ctl_do backend add $svc "$(be_addr 2):80" weight 2 >/dev/null
}

# vip_wait SECS: until http://VIP/ answers, SECS at most; prints
# "yes|no SECONDS" and fails on no.
vip_wait() {
	local t0=$SECONDS
	while [ $((SECONDS - t0)) -lt "$1" ]; do
		if ip netns exec "$NS_CLI" curl -s -o /dev/null \
			--connect-timeout 1 --max-time 2 "http://$VIP/" \
			2>/dev/null; then
			echo "yes $((SECONDS - t0))"
			return 0
		fi
		sleep 0.5
	done
	echo "no $1"
	return 1
}

# inst_up I [LB-INSTANCE OPTIONS...]: lb-instance (INSTANCE, else this
# build's) as backend I on port 80, named beI, its output in instI.log;
# returns once it listens.
inst_up() {
	local i=$1
	shift
	ip netns exec "$(ns_be "$i")" \
		"${INSTANCE:-$LB_BUILD_DIR/tools/instance/lb-instance}" \
		--listen "$(be_addr "$i"):80" --name "be$i" "$@" \
		>>"$E2E_TMP/inst$i.log" 2>&1 &
	eval "INST_PID$i=$!"
	wait_listen "$(ns_be "$i")" tcp "$(be_addr "$i"):80" ||
		die "be$i: lb-instance did not start"
}

# inst_down I: backend I's lb-instance stopped (SIGTERM: it drains).
inst_down() {
	local v="INST_PID$1"
	[ -n "${!v:-}" ] || return 0
	kill -TERM "${!v}" 2>/dev/null || true
	wait "${!v}" 2>/dev/null || true
	eval "INST_PID$1="
}

# inst_start I [OPTIONS...]: lb-instance ($INSTANCE) as backend I, on
# port 80 of its namespace, named beI, with the options a test's
# inst_opts I prints (when it defines one) and then OPTIONS; its pid in
# INST_PIDI. The EXIT trap removes the namespaces with whatever runs there.
inst_start() {
	local i=$1 opts=()
	shift
	if declare -F inst_opts >/dev/null; then
		read -r -a opts <<<"$(inst_opts "$i")"
	fi
	ip netns exec "$(ns_be "$i")" "$INSTANCE" --listen "$(be_addr "$i"):80" \
		--name "be$i" "${opts[@]}" "$@" >>"$E2E_TMP/inst$i.log" 2>&1 &
	eval "INST_PID$i=$!"
	wait_listen "$(ns_be "$i")" tcp "$(be_addr "$i"):80" ||
		die "be$i: lb-instance did not start"
}

# inst_need: INSTANCE is lb-instance ($LB_INSTANCE, else this build's);
# the test is skipped when it is not built.
inst_need() {
	INSTANCE=${LB_INSTANCE:-$LB_BUILD_DIR/tools/instance/lb-instance}
	[ -x "$INSTANCE" ] || e2e_skip "lb-instance is not built ($INSTANCE)"
}

# inst_probe_round R URL: three requests to URL from the client on new
# connections, one per backend of an rr service of three lb-instances;
# saves each answer's X-SPL as $E2E_TMP/probe.R.NAME, NAME being the
# instance's name, which is the body of its answer.
inst_probe_round() {
	local r=$1 url=$2 out name spl
	for _ in 1 2 3; do
		out=$(ip netns exec "$NS_CLI" curl -sS -D - --max-time 5 \
			-H "Connection: close" "$url" | tr -d '\r')
		name=$(printf '%s\n' "$out" | tail -n 1)
		spl=$(printf '%s\n' "$out" |
			awk -F': *' 'tolower($1) == "x-spl" { print $2 }')
		[ -n "$name" ] && [ -n "$spl" ] &&
			printf '%s\n' "$spl" >"$E2E_TMP/probe.$r.$name"
	done
}

# inst_keepalive URL SECS: wrk with keep-alive (one thread, six
# connections) to URL for SECS seconds, checked to end without errors;
# after a few ticks of lb-control (every ring drained) the backend list
# is saved as $E2E_TMP/ka.json and logged.
inst_keepalive() {
	e2e_log "wrk keep-alive for ${2}s through $1"
	wrk_run "$1" "$2" 1 6 "$E2E_TMP/ka.wrk" >"$E2E_TMP/ka.sum"
	e2e_log "wrk: $(cat "$E2E_TMP/ka.sum")"
	check "keep-alive wrk completed requests without errors" \
		'grep -q "socket_errors=0 non2xx=0" "$E2E_TMP/ka.sum" &&
		 ! grep -q "requests=0 " "$E2E_TMP/ka.sum"'
	sleep 0.5
	ctl_json "$E2E_TMP/ka.json" backend list
	ctl backend list >"$E2E_TMP/ka.txt"
	e2e_log "$(cat "$E2E_TMP/ka.txt")"
}

# inst_spl_of FILE BE: the latest SPL of backend BE in a saved `lbctl
# --json backend list`.
inst_spl_of() {
	jq_get "$1" "[x['l7']['spl'] for x in d['backends'] if x['backend'] == '$2'][0]"
}

# spl_same GOT WANT: whether lbctl's SPL is the X-SPL sent (to the
# precision lbctl prints).
spl_same() {
	awk -v g="$1" -v w="$2" 'BEGIN {
		d = g - w; if (d < 0) d = -d
		exit !(w != "-" && w != "" && g != "-" && d <= 0.00006) }'
}

# inst_spl_caught_up R BE_FN: whether lbctl shows, for every backend,
# the X-SPL of its answer in probe round R (the feedback ring is merged
# on lb-control's next tick); BE_FN I names backend I as lbctl does.
# Saves the list it read as $E2E_TMP/probe.R.json.
inst_spl_caught_up() {
	local r=$1 fn=$2 i
	ctl_json "$E2E_TMP/probe.$r.json" backend list
	for i in 1 2 3; do
		spl_same "$(inst_spl_of "$E2E_TMP/probe.$r.json" "$("$fn" "$i")")" \
			"$(cat "$E2E_TMP/probe.$r.be$i" 2>/dev/null)" || return 1
	done
}

# inst_spl_round R URL BE_FN: probe round R (inst_probe_round), waited
# for, then checked: the SPL lbctl shows for each backend is the X-SPL
# of the answer it gave in the round.
inst_spl_round() {
	local r=$1 url=$2 fn=$3 i want got
	inst_probe_round "$r" "$url"
	for _ in $(seq 1 40); do
		inst_spl_caught_up "$r" "$fn" && break
		sleep 0.25
	done
	for i in 1 2 3; do
		want=$(cat "$E2E_TMP/probe.$r.be$i" 2>/dev/null || echo -)
		got=$(inst_spl_of "$E2E_TMP/probe.$r.json" "$("$fn" "$i")")
		e2e_log "round $r, be$i: X-SPL $want, lbctl $got"
		check "round $r, be$i: lbctl's SPL ($got) is the one it sent last ($want)" \
			"spl_same '$got' '$want'"
	done
}

# inst_stop I: stops backend I's lb-instance (SIGTERM) and reaps it.
inst_stop() {
	local v="INST_PID$1"
	[ -n "${!v:-}" ] || return 0
	kill -TERM "${!v}" 2>/dev/null || true
	wait "${!v}" 2>/dev/null || true
	eval "INST_PID$1="
}
