#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A service's named pools and content routing rules through lbctl,
# against a running dataplane:
#   - `pool add`, `backend add ... pool`, `rule add|default` are
#     published (the table's generation moves on) and shown by `pool
#     list`, `rule list`, the JSON of `service show` and /metrics;
#   - the worker binds each connection after its request head: Host
#     api.example.com reaches be2 in pool `api`, other hosts get the
#     refusing default (a 404 answer), or be1 with a default to the own
#     pool;
#     /static/ goes first to the pool `static`, refused while it is
#     empty, answered by be1 once be1 is moved there;
#   - `pool set` gives a pool a health check of its own (api: tcp,
#     static: http on /healthz) and `check service` gives the service's
#     back: `pool list` (CHECK), the JSON and `backend list` show it;
#   - bad input (unknown pool, pool in use, too many rules, rules on a
#     UDP service or without `synproxy on`, `synproxy off` under rules,
#     a pool's bad check option or the service's own pool under `pool
#     set`) is refused with its one line and changes nothing;
#   - `save`, the state file and a restarted lb-control keep the pools,
#     their checks and the rules.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2086 # $SVC ("tcp VIP:PORT") is two words on purpose
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init control_pools
e2e_need_control

SVC="tcp $VIP:80"
USVC="udp $VIP:53"
BE1=$(be_addr 1):80
BE2=$(be_addr 2):80

ctl_two_up
ctl_do service add $SVC sched rr synproxy on >/dev/null
ctl_do backend add $SVC "$BE1" >/dev/null
check "the service answers" vip_wait 20
gen0=$(tel /lb/stats -k conf_gen)

ctl_do pool add $SVC api sched rr >/dev/null
ctl_do pool add $SVC static >/dev/null
ctl_do backend add $SVC "$BE2" pool api weight 3 >/dev/null
ctl_do rule add $SVC host api.example.com pool api >/dev/null
ctl_do rule add $SVC at 1 path-prefix /static/ pool static >/dev/null
ctl_do rule add $SVC sni api.example.com pool api >/dev/null
ctl_do rule default $SVC refuse 404 >/dev/null
ctl_do service add $USVC >/dev/null
for _ in $(seq 100); do
	gen1=$(tel /lb/stats -k conf_gen)
	[ "$gen1" -gt "$gen0" ] && break
	sleep 0.2
done
check "pools and rules are published (table generation $gen0 -> $gen1)" \
	'[ "$gen1" -gt "$gen0" ]'

# ---- what the dataplane does with them ----------------------------------------

# answers N HOST PATH: who answered N requests for HOST and PATH, one
# line each ("fail" for a request refused or unanswered).
answers() {
	local i
	for ((i = 0; i < $1; i++)); do
		ip netns exec "$NS_CLI" curl -s --connect-timeout 2 \
			--max-time 4 -H "Host: $2" "http://$VIP$3" || echo "fail"
	done
}
# routed N HOST PATH WHO: N requests all answered by WHO.
routed() {
	local got
	answers "$1" "$2" "$3" >"$E2E_TMP/answers"
	got=$(grep -c "^$4$" "$E2E_TMP/answers" || true)
	check "$1 requests for $2$3: all by $4 ($(sort "$E2E_TMP/answers" |
		uniq -c | tr '\n' ' '))" [ "$got" -eq "$1" ]
}
# settle HOST PATH WHO: true once a request for HOST and PATH is
# answered by WHO (a table change reached the worker), within 10 s.
# shellcheck disable=SC2317 # called through check
settle() {
	local i
	for ((i = 0; i < 50; i++)); do
		[ "$(answers 1 "$1" "$2")" = "$3" ] && return 0
		sleep 0.2
	done
	return 1
}

routed 10 api.example.com /x be2
routed 3 www.example.com / "Not Found"
# The first rule wins: /static/ of api.example.com goes to the empty
# pool static, and is refused.
routed 3 api.example.com /static/x fail
ctl_do rule default $SVC pool default >/dev/null
check "a default to the own pool is taken up" settle www.example.com / be1
routed 10 www.example.com / be1
ctl_do rule default $SVC refuse 404 >/dev/null
check "the refusing default is taken up" \
	settle www.example.com / "Not Found"

# be1 moved to the pool static: /static/ reaches it, the own pool is
# empty.
ctl_do backend del $SVC "$BE1" >/dev/null
ctl_do backend add $SVC "$BE1" pool static >/dev/null
check "be1 in pool static" settle api.example.com /static/x be1
routed 5 api.example.com /static/x be1
routed 5 api.example.com /x be2
ctl_do backend del $SVC "$BE1" >/dev/null
ctl_do backend add $SVC "$BE1" >/dev/null
check "be1 back in the own pool: /static/ refused again" \
	settle api.example.com /static/x fail
tel_save /lb/stats "$E2E_TMP/bind"
e2e_log "delayed binding: waits $(jget "$E2E_TMP/bind" /lb/stats bind_waits)," \
	"routed $(jget "$E2E_TMP/bind" /lb/stats bind_routed)," \
	"refused $(jget "$E2E_TMP/bind" /lb/stats bind_refused)," \
	"no backend $(jget "$E2E_TMP/bind" /lb/stats bind_gaveup_no_backend)"
check "refusals counted" \
	'[ "$(jget "$E2E_TMP/bind" /lb/stats bind_refused)" -ge 3 ]'

# ---- what lbctl, the API and /metrics show ------------------------------------

ctl_do pool list $SVC >"$E2E_TMP/pools"
sed 's/^/    /' "$E2E_TMP/pools"
check "pool list: the own pool, rr, be1, unchecked" \
	'has "^default  *rr  *1  *1  *none$" <"$E2E_TMP/pools"'
check "pool list: api, rr, be2 at weight 3, the service's check" \
	'has "^api  *rr  *1  *3  *service$" <"$E2E_TMP/pools"'
check "pool list: static, adaptive, empty, the service's check" \
	'has "^static  *adaptive  *0  *0  *service$" <"$E2E_TMP/pools"'
ctl_do rule list $SVC >"$E2E_TMP/rules"
sed 's/^/    /' "$E2E_TMP/rules"
check "rule list: the rules in order, then the default" \
	'awk "{ \$2 = \"\"; print }" "$E2E_TMP/rules" | diff -u - <(cat <<EOF
N  RULE
1  path-prefix /static/ pool static
2  host api.example.com pool api
3  sni api.example.com pool api
-  default refuse 404
EOF
)'
check "rule list: the hits of each rule and of the default" \
	'[ "$(awk "NR > 1 && \$2 ~ /^[0-9]+\$/" "$E2E_TMP/rules" | wc -l)" = 4 ]'
ctl_json "$E2E_TMP/show.json" service show $SVC
pj=$(jq_get "$E2E_TMP/show.json" \
	'[[p["name"], p["sched"], p["backends"], p["weight_sum"]]
	  for p in d["service"]["pools"]]')
check "JSON: the pools, their scheduler, members and weights ($pj)" \
	'[ "$pj" = "[[\"default\", \"rr\", 1, 1], [\"api\", \"rr\", 1, 3], [\"static\", \"adaptive\", 0, 0]]" ]'
rj=$(jq_get "$E2E_TMP/show.json" \
	'd["service"]["rules"] + [d["service"]["rule_default"]]')
check "JSON: the rules and the default ($rj)" \
	'[ "$rj" = "[\"path-prefix /static/ pool static\", \"host api.example.com pool api\", \"sni api.example.com pool api\", \"refuse 404\"]" ]'
hj=$(jq_get "$E2E_TMP/show.json" \
	'[len(d["service"]["rule_hits"]), d["service"]["rule_default_hits"] >= 0]')
check "JSON: a hit count for each rule and the default ($hj)" \
	'[ "$hj" = "[3, true]" ]'
ctl_json "$E2E_TMP/be.json" backend list $SVC
bj=$(jq_get "$E2E_TMP/be.json" \
	'sorted([b["backend"], b["pool"]] for b in d["backends"])')
check "JSON: each backend's pool ($bj)" \
	'[ "$bj" = "[[\"$BE1\", \"default\"], [\"$BE2\", \"api\"]]" ]'
if [ -n "${CTL_METRICS:-}" ]; then
	check "/metrics: the api pool's backends" \
		'metrics | has -F "lb_pool_backends{service=\"$SVC\",pool=\"api\"} 1"'
	check "/metrics: the api pool's weights" \
		'metrics | has -F "lb_pool_weight_sum{service=\"$SVC\",pool=\"api\"} 3"'
	check "/metrics: the own pool" \
		'metrics | has -F "lb_pool_backends{service=\"$SVC\",pool=\"default\"} 1"'
	check "/metrics: the hits of rule 3 and of the default" \
		'metrics | has -F "lb_rule_hits_total{service=\"$SVC\",rule=\"3\"}" &&
		 metrics | has -F "lb_rule_hits_total{service=\"$SVC\",rule=\"default\"}"'
fi

# ---- a pool's own health check -------------------------------------------

# be_health ADDR: the health `backend list` shows for backend ADDR.
# shellcheck disable=SC2317 # called through check and wait_output
be_health() {
	ctl_json "$E2E_TMP/bh.json" backend list $SVC >/dev/null 2>&1 || true
	jq_get "$E2E_TMP/bh.json" \
		"[b['health'] for b in d['backends'] if b['backend'] == '$1'][0]"
}

ctl_do pool set $SVC api check tcp check-interval 300ms >/dev/null
ctl_do pool set $SVC static check http check-path /healthz >/dev/null
ctl_do pool list $SVC >"$E2E_TMP/pools2"
sed 's/^/    /' "$E2E_TMP/pools2"
check "pool list: api checked by tcp, static by http on /healthz, the own pool not" \
	'has "^api  *rr  *1  *3  *tcp$" <"$E2E_TMP/pools2" &&
	 has "^static  *adaptive  *0  *0  *http /healthz$" <"$E2E_TMP/pools2" &&
	 has "^default  *rr  *1  *1  *none$" <"$E2E_TMP/pools2"'
t=$(WAIT_PERIOD=0.2 wait_output 20 up be_health "$BE2") || true
check "be2, in api, is checked and up ($t)" '[ "${t%% *}" = up ]'
# be_probes ADDR: 1 once backend ADDR's check has passed twice or more.
# shellcheck disable=SC2317 # called through wait_output
be_probes() {
	ctl_json "$E2E_TMP/bp.json" backend list $SVC >/dev/null 2>&1 || true
	jq_get "$E2E_TMP/bp.json" \
		"int([b['check']['probes'] - b['check']['failures'] for b in d['backends'] if b['backend'] == '$1'][0] >= 2)"
}
t=$(WAIT_PERIOD=0.2 wait_output 20 1 be_probes "$BE2") || true
check "be2's tcp checks pass ($t)" '[ "${t%% *}" = 1 ]'
check "be1, in the own pool, is not checked" '[ "$(be_health "$BE1")" = none ]'
ctl_json "$E2E_TMP/show2.json" service show $SVC
cj=$(jq_get "$E2E_TMP/show2.json" \
	'[[p["name"], (p["check"] or {}).get("type"), p["check_own"]]
	  for p in d["service"]["pools"]]')
check "JSON: each pool's check and whether it is its own ($cj)" \
	'[ "$cj" = "[[\"default\", null, false], [\"api\", \"tcp\", true], [\"static\", \"http\", true]]" ]'
routed 5 api.example.com /x be2
# Back to the service's check (none): be2 unchecked again.
ctl_do pool set $SVC api check service >/dev/null
t=$(WAIT_PERIOD=0.2 wait_output 20 none be_health "$BE2") || true
check "api follows the service's check again: be2 unchecked ($t)" \
	'[ "${t%% *}" = none ]'
ctl_do pool set $SVC api check tcp check-interval 300ms >/dev/null

# ---- bad input ------------------------------------------------------------

ctl_bad "no pool nope in $SVC (pool add first)" \
	backend add $SVC "$(be_addr 3):80" pool nope
ctl_bad "pool api already exists in $SVC" pool add $SVC api
ctl_bad "invalid pool name '9x': a letter, then letters, digits, '-', '_' or '.', at most 31 bytes" \
	pool add $SVC 9x
ctl_bad "unknown scheduler 'fastest'; expected one of adaptive, maglev, rr, wrr" \
	pool add $SVC x sched fastest
ctl_bad "pool api of $SVC is used by rule 2: delete that rule first" \
	pool del $SVC api
ctl_bad "pool default of $SVC is the service's own pool: it cannot be deleted" \
	pool del $SVC default
ctl_bad "no pool nope in $SVC" pool del $SVC nope
ctl_bad "rule 'sni a.example pool nope': no pool nope" \
	rule add $SVC sni a.example pool nope
ctl_bad "rule 'sni a.example path /x pool api': sni cannot go with host, path, path-prefix or method" \
	rule add $SVC sni a.example path /x pool api
ctl_bad "at 9 out of range 1..4" rule add $SVC at 9 sni b.example pool api
ctl_bad "no rule 7 in $SVC (3 rules)" rule del $SVC 7
ctl_bad "rule default: default takes pool POOL or refuse rst|404|421" \
	rule default $SVC refuse 500
ctl_bad "$USVC: rules route tcp services only" \
	rule add $USVC sni a.example pool default
ctl_bad "$SVC: rules need \`synproxy on\` (the pool is chosen from the first data, after the worker's own handshake)" \
	service set $SVC synproxy off
ctl_bad "unknown check 'ping': expected none, tcp or http" \
	pool add $SVC x check ping
ctl_bad "check-path must start with '/'" \
	pool set $SVC static check-path healthz
ctl_bad "invalid check-status '700': expected LO or LO-HI in 100..599" \
	pool set $SVC static check-status 700
ctl_bad "check-interval 1us out of range 100ms..1h" \
	pool set $SVC api check-interval 1us
ctl_bad "check-fall 0 out of range 1..100" pool add $SVC x check-fall 0
ctl_bad "unknown pool option 'retries': expected sched, check, check-path, check-status, check-port, check-interval, check-timeout, check-rise, check-fall" \
	pool set $SVC api retries 2
ctl_bad "check service takes no other check option: the pool follows the service's check as it is" \
	pool set $SVC api check service check-path /x
ctl_bad "check tcp needs a tcp service" pool add $USVC x check tcp
ctl_bad "pool default of $SVC is the service's own pool: its scheduler and check are the service's (\`service set\`)" \
	pool set $SVC default check tcp
ctl_bad "no pool nope in $SVC" pool set $SVC nope check tcp
ctl_bad "pool static, which has a check of its own: proxy-protocol v2 cannot be combined with check http (its requests carry no header); use check tcp" \
	service set $SVC proxy-protocol v2
for i in $(seq 4 32); do
	ctl_do rule add $SVC sni "h$i.example" pool api >/dev/null
done
ctl_bad "too many rules (limit 32)" rule add $SVC sni h33.example pool api
for i in $(seq 4 32); do
	ctl_do rule del $SVC 4 >/dev/null
done

# ---- save, the state file, a restart --------------------------------------

ctl_restart_same
check "save holds the pools and their checks, the pool of each backend and the rules" \
	'has -Fx "pool add $SVC api sched rr check tcp check-interval 300ms" \
		<"$E2E_TMP/save0" &&
	 has -Fx "pool add $SVC static check http check-path /healthz" \
		<"$E2E_TMP/save0" &&
	 has -Fx "backend add $SVC $BE2 weight 3 pool api" <"$E2E_TMP/save0" &&
	 has -Fx "rule add $SVC path-prefix /static/ pool static" \
		<"$E2E_TMP/save0" &&
	 has -Fx "rule default $SVC refuse 404" <"$E2E_TMP/save0"'
routed 6 api.example.com /x be2
ctl_do pool list $SVC >"$E2E_TMP/pools3"
check "restarted: pool list shows the same pools and checks" \
	diff -u "$E2E_TMP/pools2" "$E2E_TMP/pools3"
t=$(WAIT_PERIOD=0.2 wait_output 20 up be_health "$BE2") || true
check "restarted: be2 checked by its pool's check and up ($t)" \
	'[ "${t%% *}" = up ]'
ctl_stop
check "lb-control exits 0 on SIGTERM (status $CTL_RC)" [ "$CTL_RC" = 0 ]
e2e_finish
