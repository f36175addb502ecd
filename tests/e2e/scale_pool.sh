#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A scaling policy per backend pool, end to end: one HTTP VIP with
# `synproxy on`, nginx be1 in the service's own pool, a rule sending
# Host api.example.com to the pool `api` and img.example.com to `img`;
# `api` and `img` each autoscaled by the `process` driver with lb-instance
# backends in network namespaces of their own, each pool from its own
# address range (their instance ids are alike: 0, 1...):
#   - both pools come to their minimum, in their pool (`backend list`,
#     `pool list`), and the default pool keeps its one backend; the
#     state file keeps both policies across a restart of lb-control;
#   - with SCALE_POLICY=inflight (scale_pool_inflight) both pools use
#     the requests-in-flight policy instead: the api pool's requests in
#     flight scale it, and never the img pool, whose input is its own
#     backends' requests alone;
#   - requests for api.example.com (curl --resolve) reach the api
#     instances, whose SPL is above the upper threshold: the api pool
#     scales up, its new instances join the pool `api` and answer
#     api.example.com; the img pool (low SPL) and the default pool do not
#     change; www.example.com still reaches be1;
#   - /metrics and `save` name each pool; `scale del ... pool api` drains
#     and stops the api instances and removes their namespaces, the img
#     pool scales on; lb-control stopped, nothing is left behind.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

POLICY=${SCALE_POLICY:-spl}
if [ "$POLICY" = spl ]; then
	e2e_init scale_pool
else
	e2e_init "scale_pool_$POLICY"
fi
e2e_need_control
e2e_need_tools curl nginx
inst_need

# The api pool must grow this soon after the load begins: the evaluation
# period (0.5 s), an up-cooldown of 2 s per step, the instances' start,
# with a wide margin for a busy 2-CPU machine.
REACT_S=${E2E_SCALE_REACT_SECONDS:-60}
SVC="tcp $VIP:80"

conf=$E2E_TMP/lb.conf
topo_up 1
be_start 1
conf_ports "$conf"
cat >>"$conf" <<EOF
service add $SVC http synproxy on
backend add $SVC $(be_addr 1):80
pool add $SVC api check http check-path / check-interval 500ms
pool add $SVC img
rule add $SVC host api.example.com pool api
rule add $SVC host img.example.com pool img
EOF
dp_start_shared "$conf"
ctl_start

# An api instance answers after 30 ms for a benchmark of 10 ms: an SPL
# of about 3, above the upper threshold whatever the load; an img
# instance's is about 0.1, below the lower one.
api_cmd="exec $INSTANCE --listen \$LB_INST_ADDR:\$LB_INST_PORT"
api_cmd="$api_cmd --name api\$LB_INST_ID --bench-ms 10 --delay-ms 30"
img_cmd="exec $INSTANCE --listen \$LB_INST_ADDR:\$LB_INST_PORT"
img_cmd="$img_cmd --name img\$LB_INST_ID --bench-ms 20 --delay-ms 1"
# spl: the instances' SPL decides (api's high, img's low). inflight: the
# requests in flight of each pool, against one per instance: the api
# pool's clients keep three or four in flight, the img pool's none.
policy_opts=(policy spl lower 0.2 upper 0.8)
[ "$POLICY" = spl ] || policy_opts=(policy inflight queue-length 1 rounds 2)
clients=2
[ "$POLICY" = spl ] || clients=4
guard=(interval 500ms up-cooldown 2s down-cooldown 2s down-window 5m
	startup-timeout 30s drain-timeout 10s)
ctl_do scale set $SVC pool api "${policy_opts[@]}" \
	driver process command "$api_cmd" \
	target "netns $BE_NET.50-53/24 $NS_SW $BR sl-a{id}-$E2E_TAG" \
	min 1 max 3 "${guard[@]}"
ctl_do scale set $SVC pool img "${policy_opts[@]}" \
	driver process command "$img_cmd" \
	target "netns $BE_NET.60-61/24 $NS_SW $BR sl-g{id}-$E2E_TAG" \
	min 1 max 2 "${guard[@]}"

# pcount POOL STATE: the pool's instances in STATE; pstat POOL NAME: its
# counter NAME (scale show --json).
pcount() {
	ctl_json "$E2E_TMP/show.json" scale show $SVC pool "$1"
	jq_get "$E2E_TMP/show.json" "d['services'][0]['counts']['$2']"
}
pstat() {
	ctl_json "$E2E_TMP/show.json" scale show $SVC pool "$1"
	jq_get "$E2E_TMP/show.json" "d['services'][0]['stats']['$2']"
}
# wait_for SECONDS CONDITION...: until CONDITION holds.
wait_for() {
	local s=$1 i
	shift
	for ((i = 0; i < s * 4; i++)); do
		"$@" && return 0
		sleep 0.25
	done
	return 1
}
active_is() { [ "$(pcount "$1" active)" = "$2" ]; }
active_ge() { [ "$(pcount "$1" active)" -ge "$2" ] 2>/dev/null; }
# in_pool POOL [ORIGIN]: backends of the service in POOL (of ORIGIN).
in_pool() {
	ctl_json "$E2E_TMP/be.json" backend list $SVC
	jq_get "$E2E_TMP/be.json" "len([b for b in d['backends'] \
		if b['pool'] == '$1' and ('${2:-}' == '' or \
		b.get('origin') == '${2:-}')])"
}
# asks N NAME: N requests for http://NAME/ (NAME resolved to the VIP),
# who answered each, one a line ("fail" when none did).
asks() {
	local i
	for ((i = 0; i < $1; i++)); do
		ip netns exec "$NS_CLI" curl -s --connect-timeout 5 \
			--max-time 10 --resolve "$2:80:$VIP" "http://$2/" ||
			echo fail
	done
}

wait_for 60 active_is api 1 || true
wait_for 60 active_is img 1 || true
ctl scale show | sed 's/^/    /'
check "each pool comes to its minimum: one active instance each" \
	'active_is api 1 && active_is img 1'
check "the api instance is a backend of the pool api, the img one of img" \
	'[ "$(in_pool api orch)" = 1 ] && [ "$(in_pool img orch)" = 1 ]'
check "the service's own pool has its one static backend, no instance" \
	'[ "$(in_pool default)" = 1 ] && [ "$(in_pool default orch)" = 0 ]'
ctl pool list $SVC >"$E2E_TMP/pools.txt"
sed 's/^/    /' "$E2E_TMP/pools.txt"
check "pool list counts one backend in each pool" \
	'[ "$(awk "\$1 == \"api\" {print \$3}" "$E2E_TMP/pools.txt")" = 1 ] &&
	 [ "$(awk "\$1 == \"img\" {print \$3}" "$E2E_TMP/pools.txt")" = 1 ] &&
	 [ "$(awk "\$1 == \"default\" {print \$3}" "$E2E_TMP/pools.txt")" = 1 ]'
# The state file keeps both pools' policies: lb-control stopped (its
# instances with it) and started again brings each pool back to its
# minimum.
ctl_restart_same
wait_for 60 active_is api 1 || true
wait_for 60 active_is img 1 || true
check "restarted, each pool runs its minimum again, in its pool" \
	'active_is api 1 && active_is img 1 &&
	 [ "$(in_pool api orch)" = 1 ] && [ "$(in_pool img orch)" = 1 ]'
asks 4 www.example.com >"$E2E_TMP/www0"
check "www.example.com reaches be1 ($(sort "$E2E_TMP/www0" | uniq -c |
	tr '\n' ' '))" '[ "$(grep -c "^be1$" "$E2E_TMP/www0")" = 4 ]'
asks 4 img.example.com >"$E2E_TMP/img0"
check "img.example.com reaches the img instance ($(sort "$E2E_TMP/img0" |
	uniq -c | tr '\n' ' '))" '[ "$(grep -c "^img0$" "$E2E_TMP/img0")" = 4 ]'

# ---- load on api.example.com: the api pool scales up ----
e2e_log "load: api.example.com, $clients clients, until the api pool grows"
rm -f "$E2E_TMP/stop"
load_pids=()
for ((c = 1; c <= clients; c++)); do
	ip netns exec "$NS_CLI" bash -c '
	out=$1 stop=$2 vip=$3
	while [ ! -f "$stop" ]; do
		curl -s --connect-timeout 5 --max-time 10 \
			--resolve "api.example.com:80:$vip" \
			http://api.example.com/ >>"$out" 2>/dev/null ||
			echo fail >>"$out"
		echo >>"$out"
	done' load "$E2E_TMP/load$c" "$E2E_TMP/stop" "$VIP" &
	load_pids+=($!)
done
t0=$(date +%s)
wait_for "$REACT_S" active_ge api 3 || true
t_up=$(($(date +%s) - t0))
# The instances that joined last answer too: a few more seconds of load.
sleep 3
touch "$E2E_TMP/stop"
wait "${load_pids[@]}" || true
ctl scale history $SVC pool api 20 | sed 's/^/    /'
ctl scale show $SVC pool api | sed 's/^/    /'
ctl backend list $SVC | sed 's/^/    /'
check "the api pool scaled up to its maximum, 3 active (in ${t_up}s)" \
	'active_is api 3 && [ "$(pstat api ups)" -ge 1 ]'
check "its instances are backends of the pool api" \
	'[ "$(in_pool api orch)" = 3 ]'
cat "$E2E_TMP"/load[0-9]* | grep -v '^$' >"$E2E_TMP/load"
e2e_log "answers under load: $(sort "$E2E_TMP/load" | uniq -c |
	tr '\n' ' ')"
check "api.example.com was answered by api instances only" \
	'[ -s "$E2E_TMP/load" ] && ! grep -qv "^api[0-9]*$" "$E2E_TMP/load"'
asks 12 api.example.com >"$E2E_TMP/api1"
n_api=$(grep -E '^api[0-9]+$' "$E2E_TMP/api1" | sort -u | wc -l)
check "api.example.com now reaches several api instances ($(sort \
	"$E2E_TMP/api1" | uniq -c | tr '\n' ' '))" \
	'[ "$n_api" -ge 2 ] && ! grep -qv "^api[0-9]*$" "$E2E_TMP/api1"'
ctl_json "$E2E_TMP/be.json" backend list $SVC
served=$(jq_get "$E2E_TMP/be.json" "len([b for b in d['backends'] \
	if b['pool'] == 'api' and b['flows_total'] > 0])")
check "the api pool's backends took flows ($served of them)" \
	'[ "$served" -ge 2 ]'
# The api pool has an http check of its own, the service none: its
# instances went active by that check, the img one by a TCP connection.
checked=$(jq_get "$E2E_TMP/be.json" "len([b for b in d['backends'] \
	if b['pool'] == 'api' and b['health'] == 'up'])")
unchecked=$(jq_get "$E2E_TMP/be.json" "len([b for b in d['backends'] \
	if b['pool'] != 'api' and b['health'] == 'none'])")
check "api's instances are up by its own check, the others unchecked" \
	'[ "$checked" = 3 ] && [ "$unchecked" = 2 ]'
check "the default pool kept its one backend, the img pool its one" \
	'[ "$(in_pool default)" = 1 ] && [ "$(in_pool img)" = 1 ] &&
	 [ "$(pstat img started)" = 1 ] && active_is img 1'
asks 4 www.example.com >"$E2E_TMP/www1"
check "www.example.com still reaches be1 only" \
	'[ "$(grep -c "^be1$" "$E2E_TMP/www1")" = 4 ]'
metrics >"$E2E_TMP/metrics.txt"
check "/metrics counts the scaling per pool" \
	'grep -q "^lb_scale_ups_total{service=\"$SVC\",pool=\"api\"} [1-9]" \
	 "$E2E_TMP/metrics.txt" &&
	 grep -q "^lb_scale_instances_started_total{service=\"$SVC\",pool=\"img\"} 1$" \
	 "$E2E_TMP/metrics.txt" &&
	 grep -q "^lb_scale_instances{service=\"$SVC\",pool=\"api\",state=\"active\"} 3" \
	 "$E2E_TMP/metrics.txt"'
# The status page's view: each pool's policy with its own history.
ip netns exec "$NS_LB" curl -sS --max-time 5 \
	"http://$CTL_METRICS/api/v1/scale" >"$E2E_TMP/scale.json" || true
api_active=$(jq_get "$E2E_TMP/scale.json" "[s for s in d['services'] \
	if s['pool'] == 'api'][0]['counts']['active']")
api_ups=$(jq_get "$E2E_TMP/scale.json" "len([x for s in d['services'] \
	if s['pool'] == 'api' for x in s['history']['decisions'] \
	if x['action'] == 'up'])")
check "/api/v1/scale: the api pool's policy, its history's ups ($api_ups)" \
	'[ "$api_active" = 3 ] && [ "$api_ups" -ge 2 ] 2>/dev/null'
check "lbctl top shows the service with a line for each pool's policy" \
	'ctl top --once >"$E2E_TMP/top.txt" &&
	 grep -q "^$SVC " "$E2E_TMP/top.txt" &&
	 grep -q "^  scale pool api: 3 active; last " "$E2E_TMP/top.txt" &&
	 grep -q "^  scale pool img: 1 active" "$E2E_TMP/top.txt"'
sed 's/^/    /' "$E2E_TMP/top.txt"
ctl save >"$E2E_TMP/save.txt"
check "save has each pool's policy" \
	'grep -q "^scale set $SVC pool api .*command" "$E2E_TMP/save.txt" &&
	 grep -q "^scale set $SVC pool img .*command" "$E2E_TMP/save.txt" &&
	 ! grep -q "^scale set $SVC policy\|^scale set $SVC min" \
	 "$E2E_TMP/save.txt"'

# ---- scale del ... pool api: its instances go, img stays ----
nss() {
	ip netns list | awk '{print $1}' | grep -c "^sl-$1[0-9]*-$E2E_TAG\$" ||
		true
}
api_gone() { [ "$(in_pool api)" = 0 ] && [ "$(nss a)" = 0 ]; }
ctl_do scale del $SVC pool api
wait_for 60 api_gone || true
check "scale del ... pool api: no api backend or namespace left" api_gone
check "and the pool api has no policy any more" \
	'! ctl scale show $SVC pool api >/dev/null 2>&1'
check "the img pool still runs its instance" \
	'active_is img 1 && [ "$(nss g)" = 1 ]'
asks 4 img.example.com >"$E2E_TMP/img1"
check "img.example.com still reaches it" \
	'[ "$(grep -c "^img0$" "$E2E_TMP/img1")" = 4 ]'

# ---- the pool img emptied and deleted: its policy goes with it ----
ctl_do scale set $SVC pool img min 0
ctl_do scale pause $SVC pool img
ctl_do scale down $SVC pool img 1
img_empty() { [ "$(in_pool img)" = 0 ] && [ "$(nss g)" = 0 ]; }
wait_for 60 img_empty || true
check "scale down to 0: the img pool has no backend or namespace left" \
	img_empty
ctl_do rule del $SVC 2
ctl_do pool del $SVC img
img_policy_gone() {
	ctl_json "$E2E_TMP/show.json" scale show
	[ "$(jq_get "$E2E_TMP/show.json" "len([s for s in d['services'] \
		if s['pool'] == 'img'])")" = 0 ]
}
wait_for 20 img_policy_gone || true
check "pool del: the pool's policy is removed at the next tick" \
	img_policy_gone
ctl save >"$E2E_TMP/save2.txt"
check "and save no longer has it" \
	'! grep -q "^scale set $SVC pool img" "$E2E_TMP/save2.txt"'

# ---- stop: nothing left behind ----
ctl_stop TERM
check "lb-control stopped the img instance and removed its namespace" \
	'[ "$(nss g)" = 0 ] && [ "$(nss a)" = 0 ]'
left=$(pgrep -f -- "$INSTANCE .*--name (api|img)[0-9]+ " | wc -l || true)
check "no instance process is left" '[ "$left" = 0 ]'
dp_stop
e2e_finish
