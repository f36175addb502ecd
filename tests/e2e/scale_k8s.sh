#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The kubernetes driver through lb-control, against tests/unit/k8s_api.py
# (a local server speaking the scale subresource, EndpointSlice and Pod
# paths) whose pods are the three nginx backends of the topology:
#   - the Deployment has 3 ready pods before lb-control is told about it:
#     they are adopted (origin orch, pending until the service's health
#     check passes, then active), answer through the VIP, and the replica
#     count is never patched, though the policy's minimum is 1;
#   - lb-control is killed and started again: it adopts them again, and
#     the count is still not touched;
#   - once the down window is made short, the policy lowers the count
#     through the normal path: the drained instance's pod gets the lowest
#     deletion cost, then the count goes down, one step at a time, to 1.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init scale_k8s
e2e_need_control
e2e_need_tools curl
SVC="tcp $VIP:80"

topo_up 3
for i in 1 2 3; do
	be_start "$i"
done
conf=$E2E_TMP/lb.conf
conf_ports "$conf"
echo "service add $SVC http check tcp check-interval 200ms check-rise 2" \
	>>"$conf"
dp_start_shared "$conf"
ctl_start

# The API server, in lb-control's namespace, its pods at the backends.
echo s3cret >"$E2E_TMP/token"
ip netns exec "$NS_LB" env \
	K8S_POD_ADDRS="$(be_addr 1) $(be_addr 2) $(be_addr 3)" K8S_POD_PORT=80 \
	"$PY" "$E2E_TOP/tests/unit/k8s_api.py" default web web s3cret \
	>"$E2E_TMP/api.port" 2>"$E2E_TMP/api.log" &
for ((i = 0; i < 100; i++)); do
	[ -s "$E2E_TMP/api.port" ] && break
	sleep 0.1
done
APORT=$(head -n 1 "$E2E_TMP/api.port")
[ -n "$APORT" ] || die "the API server did not start"
api() {
	ip netns exec "$NS_LB" curl -s "$@" "http://127.0.0.1:$APORT/debug"
}
# api_get EXPR: a Python expression over the server's state `d`.
api_get() {
	api >"$E2E_TMP/api.json"
	jq_get "$E2E_TMP/api.json" "$1"
}
patches() { api_get "len([r for r in d['requests'] if r.startswith('PATCH')])"; }
# patch_seq: the PATCHes, "POD" for a pod's deletion cost, "replicas=N"
# for a count.
patch_seq() {
	api_get "' '.join(r.split(' ')[1].split('/')[-1] if '/pods/' in r else 'replicas=' + r.split(' ')[-1].rstrip('}') for r in d['requests'] if r.startswith('PATCH'))"
}
api -X POST -d '{"replicas": 3}' >/dev/null

# answers: the tally of 30 requests through the VIP.
answers() {
	http_seq "http://$VIP/" 30 "$E2E_TMP/seq.out"
	http_tally "$E2E_TMP/seq.out"
}
all_answer() {
	local t
	t=$(answers)
	e2e_log "requests: $t"
	[ "$(field ok "$t")" = 30 ] && [ "$(field fail "$t")" = 0 ]
}

ctl_do scale set $SVC driver kubernetes \
	target "http://127.0.0.1:$APORT default web token=$E2E_TMP/token" \
	policy inflight rounds 1 min 1 max 5 interval 500ms \
	drain-timeout 2s
check "the 3 running pods are adopted and become active" \
	scale_wait_active 3 30
ctl scale show $SVC | sed 's/^/    /'
check "they were adopted, none started ($(scale_stat adopted) and \
$(scale_stat started))" \
	'[ "$(scale_stat adopted)" = 3 ] && [ "$(scale_stat started)" = 0 ]'
ctl_json "$E2E_TMP/be.json" backend list $SVC
check "backend list shows them as orchestrated and active" \
	'[ "$(jq_get "$E2E_TMP/be.json" "sorted((b[\"backend\"], b[\"origin\"], b[\"state\"]) for b in d[\"backends\"])")" = "[[\"$(be_addr 1):80\", \"orch\", \"active\"], [\"$(be_addr 2):80\", \"orch\", \"active\"], [\"$(be_addr 3):80\", \"orch\", \"active\"]]" ]'
check "the pods went through the health check" \
	'[ "$(grep -c "up at 10.12.0.1[123]:80, pending" "$CTL_LOG")" = 3 ]'
check "the replica count was not patched" \
	'[ "$(patches)" = 0 ] && [ "$(api_get "d[\"replicas\"]")" = 3 ]'
check "they answer through the VIP" all_answer

# ---- lb-control killed and started again ----
ctl_stop KILL || true
ctl_start
check "after a restart the 3 pods are adopted again" \
	scale_wait_active 3 30
check "... the count still not patched" \
	'[ "$(patches)" = 0 ] && [ "$(api_get "d[\"replicas\"]")" = 3 ] &&
	 [ "$(api_get "len(d[\"pods\"])")" = 3 ]'
check "... and they answer through the VIP" all_answer

# ---- a scale-down the policy decides ----
ctl_do scale set $SVC down-window 1s down-cooldown 1s
for ((i = 0; i < 600; i++)); do
	[ "$(api_get "d['replicas']")" = 1 ] && [ "$(scale_count active)" = 1 ] &&
		[ "$(scale_count stopping)" = 0 ] && break
	sleep 0.1
done
ctl scale show $SVC | sed 's/^/    /'
check "the policy brought the count down to the minimum" \
	'[ "$(api_get "d[\"replicas\"]")" = 1 ] && [ "$(scale_count active)" = 1 ]'
# Two steps; the second drain may end before the first count is set.
check "each step marked the drained pod, then lowered the count ($(patch_seq))" \
	'[[ "$(patch_seq)" =~ ^web-2\ (replicas=2\ )?web-1\ replicas=1$ ]]'
check "the pod left is the oldest" \
	'[ "$(api_get "[p[\"name\"] for p in d[\"pods\"]]")" = "[\"web-0\"]" ]'
check "it still answers" all_answer
ctl_stop TERM
dp_stop
e2e_finish
