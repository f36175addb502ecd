#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Keep-alive on routed connections, through lb-dataplane: nginx be1 in a
# service's own pool, be2 in its pool `api` (Host api.example.com), on
# two services of one VIP, both `http`:
#   - port 80, `rebind off`: one curl connection asks for
#     api.example.com, then www.example.com: both answered by be2, and
#     rebind_kept counts the second;
#   - port 81, `rebind close`: the same two requests: the first answered
#     by be2, the second by the worker, a 421 with Connection: close;
#     curl, told to reconnect, gets be1 for www.example.com on a new
#     connection; rebind_closed counts one.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init content_rebind
e2e_need_dataplane
e2e_need_tools nginx curl

topo_up 2
be_start 1
be_start 2

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
for port in 80 81; do
	cat >>"$conf" <<EOF
service add tcp $VIP:$port sched rr synproxy on http
backend add tcp $VIP:$port $(be_addr 1):80
pool add tcp $VIP:$port api
backend add tcp $VIP:$port $(be_addr 2):80 pool api
rule add tcp $VIP:$port host api.example.com pool api
EOF
done
echo "service set tcp $VIP:81 rebind close" >>"$conf"
dp_start "$conf"
tel_save /lb/stats "$E2E_TMP/stats0"

# two PORT: api.example.com then www.example.com on one connection
# (curl --next keeps it); each answer's status, body and the
# connections curl opened, one line each.
two() {
	ip netns exec "$NS_CLI" curl -s --connect-timeout 2 --max-time 5 \
		-w ' %{http_code} %{num_connects}\n' \
		-H "Host: api.example.com" "http://$VIP:$1/v1/x" --next \
		-s --connect-timeout 2 --max-time 5 \
		-w ' %{http_code} %{num_connects}\n' \
		-H "Host: www.example.com" "http://$VIP:$1/" | tr -s '\n ' '  ' ||
		echo fail
}

off=$(two 80)
e2e_log "rebind off: $off"
tel_save /lb/stats "$E2E_TMP/stats1"
d() { echo $(($(jget "$E2E_TMP/$2" /lb/stats "$1") - $(jget \
	"$E2E_TMP/$3" /lb/stats "$1"))); }
check "rebind off: both requests answered by be2 on one connection ($off)" \
	'[ "$off" = "be2 200 1 be2 200 0 " ]'
check "rebind off: the second counted kept ($(d rebind_kept stats1 stats0))" \
	'[ "$(d rebind_kept stats1 stats0)" = 1 ]'

close=$(two 81)
e2e_log "rebind close: $close"
tel_save /lb/stats "$E2E_TMP/stats2"
check "rebind close: be2, then a 421 ($close)" \
	'[[ "$close" == "be2 200 1 Misdirected Request 421 0 " ]]'
check "rebind close: counted closed ($(d rebind_closed stats2 stats1))" \
	'[ "$(d rebind_closed stats2 stats1)" = 1 ] &&
	 [ "$(d rebind_kept stats2 stats1)" = 0 ]'
again=$(ip netns exec "$NS_CLI" curl -s --connect-timeout 2 --max-time 5 \
	-H "Host: www.example.com" "http://$VIP:81/" || echo fail)
check "rebind close: connecting again, www.example.com reaches be1 ($again)" \
	'[ "$again" = be1 ]'

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]

e2e_finish
