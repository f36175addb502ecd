#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# idle_timeout.sh's probes on an IPv6 VIP (fnat66), with the kernels'
# own TCP stacks at both ends (a client socket, nginx over IPv6):
#   - `timeout-established 2s` on an IPv6 service; one idle keep-alive
#     connection through it;
#   - it is reset at the client without the client sending a byte, 2 s
#     or more after its last packet, well within E2E_IDLE_WAIT: the
#     client's answer to its probe has no flow and gets the RST;
#   - nginx's end of it is reset too (no established connection left);
#   - idle_probes counts two, rst_no_flow at least one.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init idle_timeout6
e2e_need_dataplane

WAIT=${E2E_IDLE_WAIT:-15}

topo_up 1
v6_on "$NS_CLI" "$IF_CLI" "$(cli_addr6 1)/64"
be6_start 1

conf=$E2E_TMP/lb.conf
conf_ports6 "$conf"
cat >>"$conf" <<EOF2
service add tcp [$VIP6]:80 sched rr timeout-established 2s
backend add tcp [$VIP6]:80 [$(be_addr6 1)]:80
EOF2
dp_start "$conf"

# The client: one keep-alive request, then it waits without sending.
ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/nettool.py" idle-reset \
	--target "[$VIP6]:80" --suffix "be1
" --wait "$WAIT" >"$E2E_TMP/client.out" 2>&1 || true
out=$(cat "$E2E_TMP/client.out")
e2e_log "client: $(tr '\n' ';' <<<"$out")"
check "the IPv6 VIP answered the first request" has -x "first ok" <<<"$out"
a=$(grep -E '^(reset|eof|data|silent) ' <<<"$out" || true)
check "the idle IPv6 connection is reset at the client ($a)" \
	'[ "${a% *}" = reset ]'
check "not before its 2 s timeout, well within ${WAIT} s (${a#* } s)" \
	'awk -v t="${a#* }" "BEGIN { exit !(t >= 1.9 && t < $WAIT) }"'
n=$(wait_output 5 0 bash -c "ip netns exec $(ns_be 1) ss -Htn \
	state established '( sport = :80 )' | wc -l") || true
e2e_log "nginx's established connections: ${n% *}"
check "nginx's end of the expired connection was reset" '[ "${n% *}" = 0 ]'

tel_save /lb/stats "$E2E_TMP/stats1"
v=$(jget "$E2E_TMP/stats1" /lb/stats idle_probes)
check "two probes for the expired connection ($v)" '[ "$v" = 2 ]'
v=$(jget "$E2E_TMP/stats1" /lb/stats rst_no_flow)
check "its answers got their RSTs ($v)" '[ "$v" != - ] && [ "$v" -ge 1 ]'

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]

e2e_finish
