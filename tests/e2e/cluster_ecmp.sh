#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two load balancer hosts behind an ECMP router (cluster_lib.sh): each runs
# lb-dataplane, lb-control, BIRD announcing the VIP through the
# dataplane's exception path (tools/cluster/bird-lb.conf) and
# tools/cluster/lb-health; the router runs BIRD with multipath
# (tools/cluster/bird-router.conf) and BFD.
#   - lb-health --once: healthy, a probe that passes and one that fails,
#     no lb-control; bad options refused (exit 2) with a message;
#   - new connections from 8 client addresses spread over both hosts (each
#     host's flow counter takes a share) and every request succeeds;
#   - host 2's dataplane killed (SIGKILL) under load, with BFD: the
#     router's route loses host 2 well within the BGP hold time (within
#     6 s; BFD's detection time is 3 s), the held
#     connections that were on host 2 fail and only those (the SNAT
#     address their backend saw tells the host), and new connections
#     succeed again soon after; the failover time is printed;
#   - host 2's dataplane started again: lb-control re-attaches, BIRD
#     connects again, lb-health announces, and host 2 takes new flows;
#   - the same without BFD (router and hosts reconfigured live): the
#     route waits for the hold time (15 s); both times printed;
#   - host 2 cut from its backends: its health checks fail, lb-health
#     withdraws the VIP (the BGP session stays up) and every new
#     connection succeeds through host 1; the link back, host 2 announces
#     again;
#   - host 1 drained (lb-health's drain file): withdrawn, every new
#     connection through host 2; the file removed, announced again.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2034 # variables read by those conditions, or by cluster_lib.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"

e2e_init cluster_ecmp
e2e_need_control
cl_need
trap cl_on_exit EXIT

HOLD=15 # hold and keepalive times of tools/cluster/bird-*.conf
KEEPALIVE=5

svcs=$E2E_TMP/services.conf
cat >"$svcs" <<EOF
service add tcp $CL_VIP:80 sched maglev check tcp check-interval 1s check-timeout 1s check-rise 2 check-fall 3
backend add tcp $CL_VIP:80 $(be_addr 1):80
backend add tcp $CL_VIP:80 $(be_addr 2):80
backend add tcp $CL_VIP:80 $(be_addr 3):80
EOF
cl_up 3 "$svcs"
e2e_log "router's route: $(rt_route | tr -s '\n\t' '  ')"

# ---- lb-health's one-shot check and its bad input -------------------------------------

# health1 ARGS...: lb-health of host 1, once, with ARGS; prints its output
# and exit status.
health1() {
	local out rc=0
	out=$(ip netns exec "$(ns_host 1)" "$CL_TOOLS/lb-health" --lbctl "$LBCTL" \
		--socket "$(host_dir 1)/ctl.sock" --once "$@" 2>&1) || rc=$?
	echo "$rc $out"
}
r=$(health1 --need-backend)
check "lb-health --once: healthy ($r)" '[ "$r" = "0 healthy" ]'
r=$(health1 --probe "curl -sf --max-time 2 http://$(be_addr 1)/")
check "lb-health --once --probe: a probe that passes ($r)" '[ "$r" = "0 healthy" ]'
r=$(health1 --probe "curl -sf --max-time 2 http://$(be_addr 1):81/")
check "lb-health --once --probe: a probe that fails ($r)" \
	'[ "${r%% *}" = 1 ] && has "probe failed" <<<"$r"'
r=$(health1 --socket "$E2E_TMP/none.sock")
check "lb-health --once without lb-control: unhealthy ($r)" \
	'[ "${r%% *}" = 1 ] && has "lbctl stats" <<<"$r"'
r=$(health1 --fall 0)
check "lb-health --fall 0: refused ($r)" '[ "${r%% *}" = 2 ] && has "from 1" <<<"$r"'
r=$(health1 --interval)
check "lb-health --interval without a value: refused" '[ "${r%% *}" = 2 ]'
r=$(health1 --bogus)
check "lb-health --bogus: refused ($r)" '[ "${r%% *}" = 2 ] && has "unknown option --bogus" <<<"$r"'
check "none of that touched the announcement" '[ "$(rt_nexthops)" = 2 ]'

# ---- spread ---------------------------------------------------------------------

spread "first"
n=$(field new "$SPREAD_T")
check "every request succeeded ($SPREAD_T)" \
	'[ "$n" -gt 50 ] && [ "$(field new_ok "$SPREAD_T")" = "$n" ]'
check "both hosts took a share (host 1 $SPREAD_A, host 2 $SPREAD_B)" \
	'[ $((SPREAD_A * 5)) -ge "$n" ] && [ $((SPREAD_B * 5)) -ge "$n" ]'

# ---- a host's dataplane killed under load -------------------------------------------

# judge TAG: the checks of a failover.
judge() {
	local tag=$1 s=$FO_SUM
	check "$tag: no new connection failed before the kill" \
		'[ "$(field failed_before_kill "$s")" = 0 ]'
	check "$tag: the held connections on host 1 all lived on" \
		'[ "$(field held1 "$s")" -gt 0 ] && [ "$(field held1_failed "$s")" = 0 ]'
	check "$tag: the held connections on host 2 failed, all of them" \
		'[ "$(field held2 "$s")" -gt 0 ] && [ "$(field held2_failed "$s")" = "$(field held2 "$s")" ]'
	check "$tag: new connections succeed after the failover" \
		'[ "$(field new_after "$s")" -gt 20 ]'
}

# comeback TAG: host 2's dataplane started again; until the router routes
# to it again, then new connections reach it.
comeback() {
	local tag=$1 w
	cl_dp_start 2
	w=$(cl_wait_routes 2) || true
	check "$tag: host 2 back in the router's route (${w#* } s after its start)" \
		'[ "${w%% *}" = 2 ]'
	spread "$tag"
	check "$tag: every request succeeded, host 2 took new flows ($SPREAD_B)" \
		'[ "$(field new_ok "$SPREAD_T")" = "$(field new "$SPREAD_T")" ] && [ $((SPREAD_B * 5)) -ge "$(field new "$SPREAD_T")" ]'
}

failover_once "BFD" 2 $((HOLD + 12))
FO_BFD_ROUTE=$FO_ROUTE FO_BFD_NEW=$FO_NEW
judge "BFD"
# BFD declares a host dead after 10 x 300 ms; the route follows at once.
check "BFD: the route lost host 2 within 6 s, well under the hold time ($FO_ROUTE s)" \
	'[ "$FO_ROUTE" != never ] && awk -v t="$FO_ROUTE" "BEGIN { exit !(t < 6) }"'
comeback "BFD, back"

# ---- the same without BFD -------------------------------------------------------------

CL_USE_BFD=0
cl_router_conf
birdc_rt configure >/dev/null
for i in 1 2; do
	cl_host_bird_conf "$i"
	birdc_host "$i" configure >/dev/null
done
no_bfd() { ! birdc_rt show bfd sessions 2>&1 | grep -qw Up; }
check "BFD off: the router has no BFD session left" wait_ok 20 no_bfd
w=$(cl_wait_routes 2) || true
check "BFD off: both hosts in the route" '[ "${w%% *}" = 2 ]'
failover_once "no BFD" 2 $((HOLD + 12))
FO_HOLD_ROUTE=$FO_ROUTE FO_HOLD_NEW=$FO_NEW
judge "no BFD"
# The hold timer runs from the last keepalive the router received, sent
# up to a keepalive time (5 s) before the kill.
check "no BFD: the route lost host 2 at the hold time ($FO_ROUTE s, hold $HOLD s, keepalive $KEEPALIVE s)" \
	'[ "$FO_ROUTE" != never ] && awk -v t="$FO_ROUTE" -v h="$HOLD" -v k="$KEEPALIVE" "BEGIN { exit !(t > h - k - 1 && t < h + 4) }"'
comeback "no BFD, back"
e2e_log "failover: with BFD the route lost host 2 after $FO_BFD_ROUTE s," \
	"new connections all succeeded from $FO_BFD_NEW s; without BFD" \
	"after $FO_HOLD_ROUTE s and $FO_HOLD_NEW s (hold time $HOLD s)"

# ---- a host cut from its backends withdraws --------------------------------------------

ip -n "$NS_SW" link set "$(if_sw 2)" down
w=$(cl_wait_routes 1 20) || true
check "host 2 cut from its backends: lb-health withdrew the VIP (${w#* } s)" \
	'[ "${w%% *}" = 1 ] && ! rt_has_host 2'
check "host 2's BGP session stayed up" '[ "$(rt_established)" = 2 ]'
check "lb-health said why" 'has "no backend up" <"$(host_dir 2)/health.log"'
spread "cut"
check "cut: every request succeeded through host 1 ($SPREAD_T)" \
	'[ "$(field new_ok "$SPREAD_T")" = "$(field new "$SPREAD_T")" ] && [ "$SPREAD_B" = 0 ]'
ip -n "$NS_SW" link set "$(if_sw 2)" up
w=$(cl_wait_routes 2 30) || true
check "link back: host 2 announces again (${w#* } s)" '[ "${w%% *}" = 2 ]'

# ---- a drain for maintenance -----------------------------------------------------------

touch "$(host_dir 1)/drain"
w=$(cl_wait_routes 1 20) || true
check "host 1 drained (lb-health --drain-file): withdrawn (${w#* } s)" \
	'[ "${w%% *}" = 1 ] && ! rt_has_host 1'
spread "drain"
check "drain: every request succeeded through host 2 ($SPREAD_T)" \
	'[ "$(field new_ok "$SPREAD_T")" = "$(field new "$SPREAD_T")" ] && [ "$SPREAD_A" = 0 ]'
rm "$(host_dir 1)/drain"
w=$(cl_wait_routes 2 30) || true
check "drain file gone: host 1 announces again (${w#* } s)" '[ "${w%% *}" = 2 ]'

e2e_finish
