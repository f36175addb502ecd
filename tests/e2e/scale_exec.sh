#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The exec driver through lb-control, with a user script that fails, then
# hangs, then succeeds:
#   - `up` #1 exits 1, #2 never returns (killed at exec-timeout), #3
#     starts lb-instance in a network namespace on the backends' switch
#     and prints `ID ADDRESS:PORT`: lb-control reports both failures,
#     retries with backoff, and only the third instance line makes a
#     backend, which becomes active and answers through the VIP;
#   - a manual `scale up` goes through the same path (one more `up`);
#   - an instance whose address never answers stays pending, is failed
#     at the start-up timeout and taken down with `down`;
#   - `scale del` drains the instances and runs `down` for each, which
#     removes them; nothing is left.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init scale_exec
e2e_need_control
e2e_need_tools curl
INSTANCE=${LB_INSTANCE:-$LB_BUILD_DIR/tools/instance/lb-instance}
[ -x "$INSTANCE" ] || e2e_skip "lb-instance is not built ($INSTANCE)"
# lb-control in the LB namespace's network but the test's mounts: the
# orchestrator it runs adds a namespace per instance, and one added in
# the mount namespace of `ip netns exec` is bound under /run/netns there
# only, out of reach of the `down` of another lb-control and of the
# clean-up, which would leave its lb-instance running.
E2E_KEEP_MOUNTS=1
SVC="tcp $VIP:80"

conf=$E2E_TMP/lb.conf
topo_up 0
conf_ports "$conf"
echo "service add $SVC http" >>"$conf"
dp_start_shared "$conf"
ctl_start

script=$E2E_TMP/orch.sh
cat >"$script" <<EOF
#!/bin/bash
# \$1 up|down, \$2 service, \$3 instance name (up) or id (down)
echo "\$*" >>$E2E_TMP/calls
n=\$(grep -c '^up ' $E2E_TMP/calls)
case \$1 in
up)
	[ "\$n" = 1 ] && { echo "no capacity" >&2; exit 1; }
	[ "\$n" = 2 ] && { echo \$\$ >$E2E_TMP/hung.pid; exec sleep 60; }
	# An address nothing answers on: never healthy.
	[ "\$n" = 5 ] && { echo "never-\$n $BE_NET.99:80"; exit 0; }
	ns=sl-x\$n-$E2E_TAG addr=$BE_NET.\$((60 + n))
	LB_INSTANCE=$INSTANCE $E2E_DIR/ns_instance.sh up \$ns \$addr $NS_SW \\
		$BR vx\$n-$E2E_TAG $E2E_TMP/inst\$n.log be\$n || exit 1
	echo "# started \$3"
	echo "\$ns \$addr:80"
	;;
down)
	$E2E_DIR/ns_instance.sh down "\$3"
	;;
esac
EOF
chmod +x "$script"

# count STATE / stat NAME: from `scale show --json`.
count() { scale_count "$@"; }
stat() { scale_stat "$@"; }
wait_active() { scale_wait_active "$@"; }

ctl_do scale set $SVC driver exec command "$script" exec-timeout 2s \
	min 1 max 3 interval 500ms startup-timeout 15s up-cooldown 0 \
	down-window 0 down-cooldown 0 drain-timeout 5s
check "after a failure and a hang, the third try's instance is active" \
	wait_active 1 30
ctl scale show $SVC | sed 's/^/    /'
sed 's/^/    calls: /' "$E2E_TMP/calls"
check "the script ran up three times" \
	'[ "$(grep -c "^up tcp:$VIP:80 i0" "$E2E_TMP/calls")" = 3 ]'
check "both failures were counted as driver errors ($(stat driver_errors))" \
	'[ "$(stat driver_errors)" -ge 2 ]'
check "lb-control reported the exit status and the timeout" \
	'grep -q "up: exit status 1; retrying" "$CTL_LOG" &&
	 grep -q "up: timed out (killed); retrying" "$CTL_LOG"'
# The hung command's own process, not any "sleep 60" on the host: other
# work on the machine may run one. A zombie has an empty command line.
hung_running() {
	local p
	p=$(cat "$E2E_TMP/hung.pid" 2>/dev/null) || return 1
	tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q '^sleep 60'
}
check "the hung command ($(cat "$E2E_TMP/hung.pid" 2>/dev/null)) was killed" \
	'[ -s "$E2E_TMP/hung.pid" ] && ! hung_running'
http_seq "http://$VIP/" 5 "$E2E_TMP/seq.out"
check "the instance answers through the VIP ($(http_tally \
	"$E2E_TMP/seq.out"))" \
	'[ "$(field be3 "$(http_tally "$E2E_TMP/seq.out")")" = 5 ]'
ctl_json "$E2E_TMP/be.json" backend list $SVC
check "backend list shows it as orchestrated and active" \
	'[ "$(jq_get "$E2E_TMP/be.json" "[(b[\"origin\"], b[\"state\"]) for b in d[\"backends\"]]")" = "[[\"orch\", \"active\"]]" ]'

ctl_do scale pause $SVC
ctl_do scale up $SVC
check "a manual scale-up starts a second instance" wait_active 2 20
check "... recorded as manual in the history" \
	'ctl scale history $SVC >"$E2E_TMP/hist.txt"; grep -q "manual .* up .*manual up 1" "$E2E_TMP/hist.txt"'

ctl_do scale up $SVC
for ((i = 0; i < 300; i++)); do
	[ "$(count failed)" = 1 ] && break
	sleep 0.1
done
ctl scale show $SVC | sed 's/^/    /'
check "an instance never healthy is failed at the start-up timeout" \
	'[ "$(count failed)" = 1 ] && [ "$(count pending)" = 0 ] &&
	 grep -q "instance 2 not healthy within the start-up timeout" "$CTL_LOG"'
# `down` runs from the driver after the instance is marked failed: wait
# for it (10 s at most) rather than look at once.
for ((i = 0; i < 100; i++)); do
	grep -q "^down tcp:$VIP:80 never-5" "$E2E_TMP/calls" && break
	sleep 0.1
done
check "... and taken down" \
	'grep -q "^down tcp:$VIP:80 never-5" "$E2E_TMP/calls"'
ctl_json "$E2E_TMP/be.json" backend list $SVC
check "... and is no backend" \
	'[ "$(jq_get "$E2E_TMP/be.json" "len(d[\"backends\"])")" = 2 ]'

ctl_do scale del $SVC
# Drained (at most drain-timeout), then `down` for each.
for ((i = 0; i < 300; i++)); do
	[ "$(grep -c '^down ' "$E2E_TMP/calls")" -ge 2 ] &&
		[ -z "$(ip netns list | grep "^sl-x[0-9]*-$E2E_TAG")" ] && break
	sleep 0.1
done
check "scale show no longer lists the service" '! ctl scale show $SVC'
sed 's/^/    calls: /' "$E2E_TMP/calls"
check "scale del ran down for each instance" \
	'[ "$(grep -c "^down tcp:$VIP:80 sl-x" "$E2E_TMP/calls")" = 2 ]'
check "their namespaces are gone" \
	'[ -z "$(ip netns list | grep "^sl-x[0-9]*-$E2E_TAG")" ]'
ctl_json "$E2E_TMP/be.json" backend list $SVC
check "and so are their backends" \
	'[ "$(jq_get "$E2E_TMP/be.json" "len([b for b in d[\"backends\"] if b[\"state\"] != \"removed\"])")" = 0 ]'
ctl_stop TERM
dp_stop
e2e_finish
