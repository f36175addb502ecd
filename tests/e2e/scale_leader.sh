#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Scaling decided once for two load balancers: two lb-dataplanes (one
# worker each, their own ports), each with its lb-control, share one
# redis-server; the service is autoscaled with `cluster on` and the exec
# driver on both:
#   - one lb-control holds the lease (leader), the other follows: each
#     instance is started once, and both hosts end up with the same
#     orchestrated backends, active;
#   - scaling down drains and stops one instance once, on both hosts the
#     backend goes;
#   - the leader's lb-control killed (SIGKILL): the other takes the lease
#     in a higher term within a few seconds, adopts the instances without
#     starting or stopping any, and scales on from there; its instances
#     answer through its VIP;
#   - the killed one started again follows; the leader stopped (SIGTERM)
#     gives the lease up and leaves its instances running: the other
#     leads them, nothing started or stopped.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lb2_lib.sh"

e2e_init scale_leader
e2e_need_control
e2e_need_tools redis-server curl
INSTANCE=${LB_INSTANCE:-$LB_BUILD_DIR/tools/instance/lb-instance}
[ -x "$INSTANCE" ] || e2e_skip "lb-instance is not built ($INSTANCE)"
# lb-control in the LB namespace's network but the test's mounts: the
# orchestrator it runs adds a namespace per instance, and one added in
# the mount namespace of `ip netns exec` is bound under /run/netns there
# only, out of reach of the `down` of another lb-control and of the
# clean-up, which would leave its lb-instance running.
E2E_KEEP_MOUNTS=1
SVC="tcp $VIP:80"
RPORT=6392 # the LB namespace's own loopback: always free
REDIS_PID=
lb2_init 10.22.0

# On exit: the second load balancer, Redis and the instances the script
# started, then the harness's own clean-up.
leader_on_exit() {
	local rc=$? ns
	set +e
	lb2_cleanup
	[ -z "$REDIS_PID" ] || kill "$REDIS_PID" 2>/dev/null
	for ns in $(ip netns list | awk '{print $1}' | grep "^sl-l[0-9]*-$E2E_TAG\$"); do
		ip netns pids "$ns" | xargs -r kill -KILL 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	(exit "$rc")
	ctl_on_exit
}
trap leader_on_exit EXIT

topo_up 0
lb2_links

ip netns exec "$NS_LB" redis-server --port "$RPORT" --bind 127.0.0.1 \
	--save '' --appendonly no --loglevel warning \
	>"$E2E_TMP/redis.log" 2>&1 &
REDIS_PID=$!

# The orchestrator both lb-controls are given; only the leader runs it.
# Each `up` makes a namespace on the backends' switch with lb-instance,
# named after the instance: asked again for one name (a new leader asks
# again for a start its predecessor did not see through) it starts
# nothing more. `started` and `stopped` list what really happened.
script=$E2E_TMP/orch.sh
cat >"$script" <<EOF
#!/bin/bash
# \$1 up|down, \$2 service, \$3 instance name (up) or id (down)
echo "\$*" >>$E2E_TMP/calls
case \$1 in
up)
	n=\${3#i}
	ns=sl-l\$n-$E2E_TAG addr=$BE_NET.\$((60 + n))
	if [ ! -e /run/netns/\$ns ]; then
		LB_INSTANCE=$INSTANCE $E2E_DIR/ns_instance.sh up \$ns \$addr \\
			$NS_SW $BR vl\$n-$E2E_TAG $E2E_TMP/inst\$n.log be\$n ||
			exit 1
		echo "\$3" >>$E2E_TMP/started
	fi
	echo "\$ns \$addr:80"
	;;
down)
	[ ! -e /run/netns/"\$3" ] || echo "\$3" >>$E2E_TMP/stopped
	$E2E_DIR/ns_instance.sh down "\$3"
	;;
esac
EOF
chmod +x "$script"
touch "$E2E_TMP/calls" "$E2E_TMP/started" "$E2E_TMP/stopped"

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
echo "service add $SVC http" >>"$conf"
dp_start_shared "$conf"
ctl_start --redis "127.0.0.1:$RPORT" --scale-id hostA

# The second load balancer: its own ports, the same service.
conf2=$E2E_TMP/lb2.conf
cat >"$conf2" <<EOF
addr add $NET2.1/24 port 0
addr add $BE_NET.5/24 port 1
snat add $BE_NET.6 port 1
service add $SVC http
EOF
# Without an exception path: the kernel of the LB namespace reaches the
# instances through the first one's (both would have the same taps).
lb2_dp_start "$conf2" --no-exception
lb2_ctl_start --redis "127.0.0.1:$RPORT" --scale-id hostB
lb2_route

# on HOST LBCTL-ARGS: lbctl on lb-control 1 (hostA) or 2 (hostB).
on() {
	local h=$1
	shift
	if [ "$h" = 1 ]; then ctl "$@"; else "$LBCTL" --socket "$CTL2_SOCK" "$@"; fi
}
# cl HOST KEY: the service's cluster state (scale show --json).
cl() {
	on "$1" --json scale show $SVC >"$E2E_TMP/cl$1.json" 2>/dev/null
	jq_get "$E2E_TMP/cl$1.json" "d['services'][0]['cluster']['$2']"
}
# orch HOST: the orchestrated backends of HOST, "ADDR:STATE" sorted.
orch() {
	on "$1" --json backend list $SVC >"$E2E_TMP/be$1.json" 2>/dev/null
	jq_get "$E2E_TMP/be$1.json" "' '.join(sorted(b['backend'] + ':' + b['state'] for b in d['backends'] if b['origin'] == 'orch' and b['state'] != 'removed'))"
}
# Instances started and stopped (not `up` and `down` calls: one may be
# asked again).
ups() { wc -l <"$E2E_TMP/started"; }
downs() { wc -l <"$E2E_TMP/stopped"; }
# until SECONDS CONDITION: polls CONDITION every 0.2 s.
until_() {
	local i
	for ((i = 0; i < $1 * 5; i++)); do
		eval "$2" && return 0
		sleep 0.2
	done
	return 1
}
same_active() {
	local a b
	a=$(orch 1)
	b=$(orch 2)
	[ "$a" = "$b" ] && [ "$(grep -o ':active' <<<"$a" | wc -l)" = "$1" ]
}
# stop_host HOST SIGNAL: that host's lb-control stopped; T0 the time.
stop_host() {
	local pid
	if [ "$1" = 1 ]; then pid=$CTL_PID CTL_PID=; else pid=$CTL2_PID CTL2_PID=; fi
	kill -"$2" "$pid"
	wait "$pid" 2>/dev/null || true
	T0=$(date +%s.%N)
}
# since: seconds since T0.
since() {
	awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'
}
scale_both() {
	local h
	for h in 1 2; do
		on "$h" scale set $SVC driver exec command "$script" \
			policy inflight exec-timeout 10s interval 500ms \
			startup-timeout 5m up-cooldown 0 down-window 0 \
			down-cooldown 0 drain-timeout 3s cluster on "$@" >/dev/null ||
			die "scale set on host $h failed"
	done
}

# ---- one leader, one follower; one instance started once ----
scale_both min 1 max 1
check "one lb-control leads, the other follows" \
	'until_ 120 "[ \"\$(cl 1 role)\$(cl 2 role)\" = leaderfollower ] || [ \"\$(cl 1 role)\$(cl 2 role)\" = followerleader ]"'
if [ "$(cl 1 role)" = leader ]; then L=1 F=2; else L=2 F=1; fi
term0=$(cl "$L" term)
lid=$(cl "$L" leader)
e2e_log "leader: host $L ($lid), term $term0"
check "the follower knows the leader and the term" \
	'[ "$(cl "$F" leader)" = "$lid" ] && [ "$(cl "$F" term)" = "$term0" ]'
check "both hosts have the one instance, active" 'until_ 120 "same_active 1"'
on "$L" scale show $SVC | sed 's/^/    leader: /'
on "$F" scale show $SVC | sed 's/^/    follower: /'
check "one instance started ($(ups))" '[ "$(ups)" = 1 ]'
check "the leader decides on both hosts' load summaries" \
	'until_ 120 "[ \"\$(cl $L hosts)\" = 2 ]"'

# ---- up to two, then down to one ----
scale_both min 2 max 2
check "both hosts have two instances, active" 'until_ 120 "same_active 2"'
check "two started in all ($(ups))" '[ "$(ups)" = 2 ]'
scale_both min 1 max 1
check "scaled down: both hosts have one instance" 'until_ 120 "same_active 1 && [ \"\$(orch 1)\" = \"\$(orch 2)\" ] && [ \$(downs) -ge 1 ]"'
sleep 2
sed 's/^/    calls: /' "$E2E_TMP/calls"
check "one stopped ($(downs)), still two started ($(ups))" \
	'[ "$(downs)" = 1 ] && [ "$(ups)" = 2 ]'
metrics >"$E2E_TMP/metrics.txt" || true
check "/metrics shows host 1's role and the lease's term" \
	'grep -Eq "^lb_scale_leader\\{service=\"tcp $VIP:80\",pool=\"default\"\\} [01]\$" "$E2E_TMP/metrics.txt" &&
	 t=$(sed -n "s/^lb_scale_term{service=\"tcp $VIP:80\",pool=\"default\"} //p" "$E2E_TMP/metrics.txt") &&
	 [ "$t" -ge "$term0" ]'

# ---- the leader dies ----
# shellcheck disable=SC2034 # read by check's condition
before=$(orch "$F")
stop_host "$L" KILL
check "the follower takes the lease in a higher term" \
	'until_ 120 "[ \"\$(cl $F role)\" = leader ]" && [ "$(cl "$F" term)" -gt "$term0" ]'
e2e_log "handover after $(since) s, term $(cl "$F" term)"
sleep 3
on "$F" scale show $SVC | sed 's/^/    new leader: /'
check "nothing started or stopped across the handover ($(ups) up, $(downs) down)" \
	'[ "$(ups)" = 2 ] && [ "$(downs)" = 1 ]'
check "the new leader kept the instance ($(orch "$F"))" \
	'[ "$(orch "$F")" = "$before" ]'
grep -q "scaling leader, term" "$([ "$F" = 1 ] && echo "$CTL_LOG" || echo "$CTL2_LOG")" ||
	die "the new leader did not log its term"

# ---- the new leader scales ----
on "$F" scale set $SVC min 2 max 2 >/dev/null
check "the new leader starts one more instance" \
	'until_ 120 "[ \$(grep -o :active <<<\"\$(orch $F)\" | wc -l) = 2 ]"'
check "three started in all ($(ups))" '[ "$(ups)" = 3 ]'
# The instance answers through the VIP of the surviving host.
# shellcheck disable=SC2034 # read by check's condition
if [ "$F" = 1 ]; then src=$(cli_addr 1); else src=$NET2.2; fi
check "the instances answer through host $F's VIP" \
	'ip netns exec "$NS_CLI" curl -sS --max-time 5 --interface "$src" -o /dev/null -w "%{http_code}" "http://$VIP/" | grep -q 200'

# ---- the first leader's host back as a follower; the leader stops ----
if [ "$L" = 1 ]; then
	ctl_start --redis "127.0.0.1:$RPORT" --scale-id hostA
else
	lb2_ctl_start --redis "127.0.0.1:$RPORT" --scale-id hostB
fi
# Its state file has the settings it had; the cluster's are min 2 now.
on "$L" scale set $SVC min 2 max 2 >/dev/null
check "the restarted lb-control follows, with the leader's two instances" \
	'until_ 120 "[ \"\$(cl $L role)\" = follower ] && same_active 2"'
# shellcheck disable=SC2034 # read by check's condition
before=$(orch "$L")
stop_host "$F" TERM
check "a stopped leader gives the lease up: host $L leads" \
	'until_ 120 "[ \"\$(cl $L role)\" = leader ]"'
e2e_log "handover after $(since) s, term $(cl "$L" term)"
check "... saying so in its log" \
	'grep -q "given up; the instances stay" "$([ "$F" = 1 ] && echo "$CTL_LOG" || echo "$CTL2_LOG")"'
sleep 3
check "nothing was stopped or started ($(ups) up, $(downs) down)" \
	'[ "$(ups)" = 3 ] && [ "$(downs)" = 1 ]'
check "host $L kept the instances ($(orch "$L"))" \
	'[ "$(orch "$L")" = "$before" ]'
# Each instance started runs in a namespace the test reaches by name,
# which `down` and the cleanup need; each stopped one is gone.
instances_ok() {
	local name n ns p
	while read -r name; do
		n=${name#i} ns=sl-l${name#i}-$E2E_TAG
		if grep -qx "$ns" "$E2E_TMP/stopped"; then
			! pgrep -f "lb-instance --listen $BE_NET.$((60 + n)):80" \
				>/dev/null || return 1
			continue
		fi
		p=$(ip netns pids "$ns" 2>/dev/null | head -n 1)
		[ -n "$p" ] && grep -q lb-instance "/proc/$p/cmdline" || return 1
	done <"$E2E_TMP/started"
}
check "the running instances are in the namespaces named for them, the stopped one gone" \
	instances_ok
on "$L" scale set $SVC cluster off min 0 max 2 >/dev/null
e2e_finish
