#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# lbctl round trips against the real lb-dataplane and lb-control, changing
# a live load balancer that starts with addresses only:
#   - lb-control adopts the dataplane's boot configuration (`lbctl save`
#     prints it back); `lbctl help` is the registry's;
#   - a service and two backends added live: new connections spread over
#     both (rr), and `lbctl backend list` counts what the client saw;
#   - a third backend added live takes its share;
#   - wrr and `backend set ... weight 3` shift the spread 3:1:1;
#   - drain: connections held open across the drain keep their backend
#     and are answered on it; no new connection reaches the drained
#     backend; its active flows drop to 0 once the held ones close; then
#     `backend del` removes it;
#   - `lbctl apply` of a second service publishes exactly one new table
#     (the dataplane's conf_gen grows by one) and the service answers;
#   - `lbctl save` and the state file agree;
#   - `service del`: the VIP stops answering, the other service goes on;
#   - --json output of stats and lists, Prometheus /metrics, and the
#     dataplane's telemetry (/lb/stats) agreeing with lbctl stats.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2086 # $SVC ("tcp VIP:PORT") is two words on purpose
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init control_live
e2e_need_control

TOL=${E2E_RR_TOL:-3}
DRAIN=${E2E_DRAIN_TIMEOUT:-20}
SVC="tcp $VIP:80"
SVC2="tcp $VIP:8080"
BE1=$(be_addr 1):80
BE2=$(be_addr 2):80
BE3=$(be_addr 3):80

topo_up 3
for i in 1 2 3; do
	be_start "$i"
done
conf=$E2E_TMP/lb.conf
conf_ports "$conf"
dp_start_shared "$conf"
ctl_start

# near N WANT: |N - WANT| <= TOL
# shellcheck disable=SC2317 # called from the conditions check evaluates
near() {
	[ "$1" -ge $(($2 - TOL)) ] && [ "$1" -le $(($2 + TOL)) ]
}

# be_json FILE ADDR KEY: KEY of backend ADDR ("a.b.c.d:port") of any
# service in a saved `lbctl --json backend list`, "-" if absent. Accepts a
# list of backends or of services holding their backends.
be_json() {
	"$PY" -B -c '
import json, sys
def walk(v):
    if isinstance(v, dict):
        a = v.get("backend", v.get("addr"))
        if a == sys.argv[2] and sys.argv[3] in v:
            yield v[sys.argv[3]]
        for x in v.values():
            yield from walk(x)
    elif isinstance(v, list):
        for x in v:
            yield from walk(x)
try:
    r = list(walk(json.load(open(sys.argv[1]))))
    print(r[0] if r else "-")
except (ValueError, OSError):
    print("-")
' "$@"
}

gen() {
	tel /lb/stats -k conf_gen
}

# gen_settled: the table generation once it stayed the same for a second
# (lb-control may republish on its own when a removed backend's slot
# becomes free).
gen_settled() {
	local a b i
	a=$(gen)
	for ((i = 0; i < 10; i++)); do
		sleep 1
		b=$(gen)
		[ "$a" != "$b" ] || break
		a=$b
	done
	echo "$a"
}

# ---- boot configuration and help --------------------------------------------

ctl_do save >"$E2E_TMP/save0"
check "lb-control adopted the dataplane's boot configuration" \
	diff -u <(grep -v '^#' "$conf") <(grep -v '^#' "$E2E_TMP/save0")
ctl_do help >"$E2E_TMP/help"
check "lbctl help lists the registry's commands (conf's and lb-control's)" \
	'grep -q "^backend drain " "$E2E_TMP/help" &&
	 grep -q "^service add " "$E2E_TMP/help" &&
	 grep -q "^stats" "$E2E_TMP/help" && grep -q "^save" "$E2E_TMP/help"'
check "lbctl help backend add shows its usage" \
	'ctl help backend add | has "backend add PROTO VIP:PORT IP:PORT"'

# ---- a service and two backends, live ---------------------------------------

g0=$(gen_settled)
ctl_do service add $SVC sched rr >/dev/null
ctl_do backend add $SVC "$BE1" >/dev/null
ctl_do backend add $SVC "$BE2" >/dev/null
g1=$(gen)
e2e_log "table generation: $g0 -> $g1 after 3 commands"
check "each command published one table ($g0 -> $g1)" \
	'[ "$g1" = $((g0 + 3)) ]'
ctl_do service list >"$E2E_TMP/svc1"
sed 's/^/    /' "$E2E_TMP/svc1"
check "service list shows the new service with sched rr" \
	'grep -qE "^tcp +$VIP:80 +rr " "$E2E_TMP/svc1"'

http_seq "http://$VIP/" 40 "$E2E_TMP/seq1"
t=$(http_tally "$E2E_TMP/seq1")
e2e_log "40 requests: $t"
[ "$(field fail "$t")" = 0 ] || http_failures "$E2E_TMP/seq1"
check "40/40 answered" [ "$(field ok "$t")" = 40 ]
check "rr: be1 and be2 20 +- $TOL each" \
	'near "$(field be1 "$t")" 20 && near "$(field be2 "$t")" 20'

ctl_do backend list >"$E2E_TMP/list1"
sed 's/^/    /' "$E2E_TMP/list1"
check "backend list (table) shows both backends active" \
	'grep -qE "$BE1 .*active" "$E2E_TMP/list1" &&
	 grep -qE "$BE2 .*active" "$E2E_TMP/list1"'
ctl_json "$E2E_TMP/list1.json" backend list
for i in 1 2; do
	a=$(be_addr "$i"):80
	ft=$(be_json "$E2E_TMP/list1.json" "$a" flows_total)
	st=$(be_json "$E2E_TMP/list1.json" "$a" state)
	w=$(be_json "$E2E_TMP/list1.json" "$a" weight)
	seen=$(field "be$i" "$t")
	e2e_log "be$i (--json): state=$st weight=$w flows_total=$ft," \
		"client saw $seen"
	check "be$i: --json state active, weight 1, flows_total $ft ~ $seen" \
		'[ "$st" = active ] && [ "$w" = 1 ] && [ "$ft" != - ] &&
		 near "$ft" "$seen"'
done

# ---- a third backend, live --------------------------------------------------

ctl_do backend add $SVC "$BE3" >/dev/null
http_seq "http://$VIP/" 30 "$E2E_TMP/seq2"
t=$(http_tally "$E2E_TMP/seq2")
e2e_log "30 requests after adding be3: $t"
check "30/30 answered, be3 took its third (10 +- $TOL)" \
	'[ "$(field ok "$t")" = 30 ] && near "$(field be3 "$t")" 10'

# ---- scheduler and weight ---------------------------------------------------

ctl_do service set $SVC sched wrr >/dev/null
ctl_do backend set $SVC "$BE1" weight 3 >/dev/null
ctl_json "$E2E_TMP/list2.json" backend list
check "backend list --json: be1 weight 3" \
	'[ "$(be_json "$E2E_TMP/list2.json" "$BE1" weight)" = 3 ]'
http_seq "http://$VIP/" 50 "$E2E_TMP/seq3"
t=$(http_tally "$E2E_TMP/seq3")
e2e_log "50 requests, wrr 3:1:1: $t"
check "wrr 3:1:1: be1 30, be2 10, be3 10 (+- $TOL)" \
	'[ "$(field ok "$t")" = 50 ] && near "$(field be1 "$t")" 30 &&
	 near "$(field be2 "$t")" 10 && near "$(field be3 "$t")" 10'
ctl_do backend set $SVC "$BE1" weight 1 >/dev/null
ctl_do service set $SVC sched rr >/dev/null

# ---- drain ------------------------------------------------------------------

hold=$E2E_TMP/hold
mkdir -p "$hold"
ip netns exec "$NS_CLI" "$PY" "$E2E_DIR/ctltool.py" hold \
	--target "$VIP:80" --src "$(cli_addr 1)" --count 6 --dir "$hold" \
	>"$hold/log" 2>&1 &
hold_pid=$!
for ((i = 0; i < 100; i++)); do
	[ -f "$hold/first.json" ] && break
	sleep 0.1
done
first=$(cat "$hold/first.json" 2>/dev/null || echo '[]')
e2e_log "6 connections held open, answered by: $first"
on2=$(jq_get "$hold/first.json" 'sum(1 for x in d if x == "be2")')
check "the held connections are spread, be2 has some ($on2)" \
	'[ "$on2" != - ] && [ "$on2" -ge 1 ]'

ctl_do backend drain $SVC "$BE2" >/dev/null
ctl_json "$E2E_TMP/list3.json" backend list
st=$(be_json "$E2E_TMP/list3.json" "$BE2" state)
act=$(be_json "$E2E_TMP/list3.json" "$BE2" flows_active)
e2e_log "be2 after drain: state=$st flows_active=$act"
check "be2 is draining with its held flows active ($act >= $on2)" \
	'[ "$st" = draining ] && [ "$act" != - ] && [ "$act" -ge "$on2" ]'
check "backend list (table) says draining" \
	'ctl backend list | has -E "$BE2 .*draining"'

http_seq "http://$VIP/" 30 "$E2E_TMP/seq4"
t=$(http_tally "$E2E_TMP/seq4")
e2e_log "30 new connections while be2 drains: $t"
check "30/30 answered, none by be2, be1 and be3 15 +- $TOL" \
	'[ "$(field ok "$t")" = 30 ] && [ "$(field be2 "$t")" = 0 ] &&
	 near "$(field be1 "$t")" 15 && near "$(field be3 "$t")" 15'

touch "$hold/go"
wait "$hold_pid" || true
second=$(cat "$hold/second.json" 2>/dev/null || echo '[]')
e2e_log "second request on each held connection answered by: $second"
check "held connections finish on their own backend, be2's included" \
	'[ "$first" = "$second" ] && [ "$(jq_get "$hold/second.json" "len(d)")" = 6 ]'

t0=$SECONDS
while :; do
	ctl_json "$E2E_TMP/list4.json" backend list
	act=$(be_json "$E2E_TMP/list4.json" "$BE2" flows_active)
	[ "$act" = 0 ] && break
	[ $((SECONDS - t0)) -lt "$DRAIN" ] || break
	sleep 0.5
done
e2e_log "be2 flows_active after the held connections closed: $act" \
	"($((SECONDS - t0)) s)"
check "be2's flows finished (flows_active 0 within ${DRAIN}s)" \
	[ "$act" = 0 ]

ctl_do backend del $SVC "$BE2" >/dev/null
check "backend del: be2 is gone from backend list" \
	'! ctl backend list | has "$BE2"'
http_seq "http://$VIP/" 20 "$E2E_TMP/seq5"
t=$(http_tally "$E2E_TMP/seq5")
e2e_log "20 requests after deleting be2: $t"
check "20/20 answered by be1 and be3 only" \
	'[ "$(field ok "$t")" = 20 ] && [ "$(field be2 "$t")" = 0 ]'

# ---- apply: one table -------------------------------------------------------

f=$E2E_TMP/svc2.conf
cat >"$f" <<EOF
# a second service, applied as one change
service add $SVC2 sched rr
backend add $SVC2 $BE1
backend add $SVC2 $BE3
EOF
g0=$(gen_settled)
ctl_do apply "$f"
g1=$(gen)
e2e_log "apply of 3 commands: table generation $g0 -> $g1"
check "apply published exactly one table" '[ "$g1" = $((g0 + 1)) ]'
http_seq "http://$VIP:8080/" 10 "$E2E_TMP/seq6"
t=$(http_tally "$E2E_TMP/seq6")
e2e_log "10 requests to the applied service: $t"
check "the applied service answers (10/10, be1 and be3 5 each)" \
	'[ "$(field ok "$t")" = 10 ] && near "$(field be1 "$t")" 5 &&
	 near "$(field be3 "$t")" 5'

# ---- save and the state file ------------------------------------------------

ctl_do save >"$E2E_TMP/save1"
sed 's/^/    /' "$E2E_TMP/save1"
check "save holds both services and their backends" \
	'grep -qx "service add $SVC sched rr" "$E2E_TMP/save1" &&
	 grep -qx "backend add $SVC $BE1" "$E2E_TMP/save1" &&
	 grep -qx "backend add $SVC2 $BE3" "$E2E_TMP/save1" &&
	 ! grep -q "$BE2" "$E2E_TMP/save1"'
check "the state file holds what save prints" \
	diff -u <(grep -v '^#' "$CTL_STATE") <(grep -v '^#' "$E2E_TMP/save1")

# ---- stats, telemetry, metrics ----------------------------------------------

ctl_do stats >"$E2E_TMP/stats.txt"
check "lbctl stats prints its table, a column per worker" \
	'grep -q "^COUNTER .* TOTAL .* W0" "$E2E_TMP/stats.txt"'
ctl_json "$E2E_TMP/stats.json" stats
tel_save /lb/stats "$E2E_TMP/tel.json"
tel_save / "$E2E_TMP/tel_cmds.json"
tw=$(jget "$E2E_TMP/tel.json" /lb/stats workers)
tg=$(jget "$E2E_TMP/tel.json" /lb/stats conf_gen)
trx=$(jget "$E2E_TMP/tel.json" /lb/stats rx)
cw=$(jq_get "$E2E_TMP/stats.json" 'd["dataplane"]["workers"]')
cg=$(jq_get "$E2E_TMP/stats.json" 'd["dataplane"]["conf_gen"]')
crx=$(jq_get "$E2E_TMP/stats.json" 'd["total"]["rx"]')
cwrx=$(jq_get "$E2E_TMP/stats.json" 'sum(w["rx"] for w in d["workers"])')
e2e_log "telemetry /lb/stats: workers=$tw conf_gen=$tg rx=$trx;" \
	"lbctl --json stats: workers=$cw conf_gen=$cg rx=$crx" \
	"(per worker, summed: $cwrx)"
check "lbctl stats and telemetry agree on workers and table generation" \
	'[ "$tw" != - ] && [ "$tw" = "$cw" ] &&
	 [ "$tg" != - ] && [ "$tg" = "$cg" ]'
check "lbctl stats: per-worker rx add up to the total; telemetry has it" \
	'[ "$crx" != - ] && [ "$crx" = "$cwrx" ] &&
	 [ "$trx" != - ] && [ "$crx" -gt 0 ] && [ "$trx" -ge "$crx" ]'
# Per-worker counters straight from the dataplane's telemetry, when it has
# a command for them (/lb/workers).
if grep -q '"/lb/workers"' "$E2E_TMP/tel_cmds.json"; then
	ctl_json "$E2E_TMP/stats2.json" stats
	tel_save /lb/workers "$E2E_TMP/telw.json"
	why=$("$PY" -B -c '
import json, sys
c = json.load(open(sys.argv[1]))["workers"]
t = json.load(open(sys.argv[2]))["/lb/workers"]
t = list(t.values()) if isinstance(t, dict) else t
assert len(t) == len(c), (len(t), len(c))
for cw, tw in zip(c, t):
    assert tw["rx"] >= cw["rx"] and tw["tx"] >= cw["tx"], (cw, tw)
' "$E2E_TMP/stats2.json" "$E2E_TMP/telw.json" 2>&1 | tail -n 1) || true
	check "telemetry /lb/workers: each worker at or past lbctl's ${why}" \
		[ -z "$why" ]
else
	e2e_log "the dataplane's telemetry has no /lb/workers command;" \
		"per-worker counters checked through lbctl stats only"
fi

metrics >"$E2E_TMP/metrics" 2>&1 || true
e2e_log "metrics: $(grep -c '^lb_' "$E2E_TMP/metrics" || true) samples"
check "/metrics: Prometheus text with HELP and TYPE, names lb_*" \
	'grep -q "^# HELP lb_" "$E2E_TMP/metrics" &&
	 grep -q "^# TYPE lb_" "$E2E_TMP/metrics" &&
	 ! grep -v "^#" "$E2E_TMP/metrics" | grep -v "^lb_" | has .'
check "/metrics: a sample labelled with be1 of $SVC" \
	'grep "^lb_" "$E2E_TMP/metrics" |
	 grep "service=\"$SVC\"" | has "backend=\"$BE1\""'
check "/metrics: anything else is 404" \
	'[ "$(ip netns exec "$NS_LB" curl -s -o /dev/null -w "%{http_code}" \
		"http://$CTL_METRICS/other")" = 404 ]'

# ---- delete a service -------------------------------------------------------

ctl_do service del $SVC >/dev/null
ctl_json "$E2E_TMP/svc3.json" service list
st=$(jq_get "$E2E_TMP/svc3.json" \
	'[s["state"] for s in d["services"] if s["service"] == "'"$SVC"'"]')
e2e_log "service list after service del: $SVC is $st"
check "service del: gone from the configuration (save)" \
	'! ctl save | has "^service add $SVC "'
check "service del: gone from service list, or deleted while flows end" \
	'[ "$st" = "[]" ] || [ "$st" = "[\"deleted\"]" ]'
ip netns exec "$NS_CLI" curl -sS -o /dev/null --connect-timeout 2 \
	--max-time 3 "http://$VIP/" 2>/dev/null && gone=no || gone=yes
check "the deleted service no longer answers" [ "$gone" = yes ]
http_seq "http://$VIP:8080/" 6 "$E2E_TMP/seq7"
t=$(http_tally "$E2E_TMP/seq7")
check "the other service still answers (6/6: $t)" \
	[ "$(field ok "$t")" = 6 ]

ctl_stop
check "lb-control exits 0 on SIGTERM (status $CTL_RC)" [ "$CTL_RC" = 0 ]
http_seq "http://$VIP:8080/" 6 "$E2E_TMP/seq8"
t=$(http_tally "$E2E_TMP/seq8")
check "forwarding goes on without lb-control (6/6: $t)" \
	[ "$(field ok "$t")" = 6 ]
e2e_finish
