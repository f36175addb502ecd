#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Bad input to lb-control, through lbctl and through its socket by hand.
# Each refused command must:
#   - exit 1 with exactly one line on stderr, `lbctl: <the message>`, the
#     message being the one expected, and nothing on stdout;
#   - change nothing: `lbctl save`, the state file and the generation of
#     the dataplane's table (telemetry conf_gen) are the same after it.
# Cases: unknown command and subcommand, bad address, port out of range
# (service and backend), bad protocol, duplicate service, duplicate
# backend, missing service, missing backend (del, drain, set weight),
# weight out of range, unknown scheduler, unknown option, draining twice,
# `apply` of a file whose third line is bad (its first two are not kept
# either), `apply` of a missing file; lbctl's own usage errors (exit 2).
# On the socket: malformed JSON, another protocol version (-95), neither
# argv nor apply, a word longer than the line syntax allows, a request
# line over 1 MiB: each answered with an error, never a crash or a hang.
# A second lb-control on the same dataplane is refused. Afterwards
# lb-control is the same process, the configuration is intact and the
# service still answers.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2086 # $SVC ("tcp VIP:PORT") is two words on purpose
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init control_badinput
e2e_need_control

SVC="tcp $VIP:80"
BE1=$(be_addr 1):80
NOBE=$BE_NET.99:80

topo_up 1
be_start 1
conf=$E2E_TMP/lb.conf
conf_ports "$conf"
dp_start_shared "$conf"
ctl_start
ctl_do service add $SVC sched rr >/dev/null
ctl_do backend add $SVC "$BE1" >/dev/null
pid0=$CTL_PID

# ---- commands ---------------------------------------------------------------

ctl_bad "unknown command 'frobnicate'; try 'help'" frobnicate
ctl_bad "unknown command 'service frob'; try 'help service'" service frob
ctl_bad "incomplete command 'backend'; try 'help backend'" backend
ctl_bad "invalid address:port '10.11.0.300:80': expected a.b.c.d:PORT" \
	service add tcp 10.11.0.300:80
ctl_bad "invalid address:port '$BE_NET.12': expected a.b.c.d:PORT" \
	backend add $SVC "$BE_NET.12"
ctl_bad "port 70000 out of range 1..65535 in '$VIP:70000'" \
	service add tcp "$VIP:70000"
ctl_bad "port 0 out of range 1..65535 in '$VIP:0'" service add tcp "$VIP:0"
ctl_bad "port 99999 out of range 1..65535 in '$BE_NET.12:99999'" \
	backend add $SVC "$BE_NET.12:99999"
ctl_bad "invalid protocol 'sctp': expected tcp or udp" \
	service add sctp "$VIP:81"
ctl_bad "service $SVC already exists" service add $SVC
ctl_bad "service $SVC already exists" service add $SVC sched maglev
ctl_bad "backend $BE1 already exists in $SVC" backend add $SVC "$BE1"
ctl_bad "no service tcp $VIP:81" backend add tcp "$VIP:81" "$BE1"
ctl_bad "no service tcp $VIP:81" service del tcp "$VIP:81"
ctl_bad "no backend $NOBE in $SVC" backend del $SVC "$NOBE"
ctl_bad "no backend $NOBE in $SVC" backend drain $SVC "$NOBE"
ctl_bad "no backend $NOBE in $SVC" backend set $SVC "$NOBE" weight 2
ctl_bad "weight 0 out of range 1..65535" backend set $SVC "$BE1" weight 0
ctl_bad "weight 70000 out of range 1..65535" \
	backend add $SVC "$BE_NET.12:80" weight 70000
# The schedulers offered are those lb-control links (dataplane/sched/).
m="unknown scheduler 'fastest'; expected one of adaptive, maglev, rr, wrr"
ctl_bad "$m" service set $SVC sched fastest
ctl_bad "$m" service add tcp "$VIP:81" sched fastest
ctl_bad "http needs a tcp service" service add udp "$VIP:53" http
# The options are listed in the order `save` writes them.
m="unknown option 'bogus'; expected sched, http, retries, deferq,"
m="$m retry-gap, expiry, syn-timeout, governor, gov-ideal-rate,"
m="$m gov-interval, gov-window, gov-overload, gov-raise, gov-release,"
m="$m gov-calm, gov-min-samples, default-priority, reject-status,"
m="$m retry-after, spl-header, spl-time-header, priority-header,"
m="$m expect-header, orca-header, errors, error-exclude, default-expect,"
m="$m rebind, err-memory, min-volume, ..."
ctl_bad "$m" \
	service add tcp "$VIP:81" bogus 1
ctl_bad "missing argument; usage: backend list [PROTO VIP:PORT]" \
	backend list tcp
# Draining twice: the first changes the state, the second is refused.
ctl_do backend drain $SVC "$BE1" >/dev/null
ctl_bad "backend $BE1 of $SVC is already draining" backend drain $SVC "$BE1"
ctl_do backend undrain $SVC "$BE1" >/dev/null

# ---- apply: all lines or none -------------------------------------------

f=$E2E_TMP/bad.conf
cat >"$f" <<EOF
service add tcp $VIP:81 sched rr
backend add tcp $VIP:81 $BE1
backend add tcp $VIP:81 $BE_NET.12:0
backend add tcp $VIP:81 $BE_NET.13:80
EOF
ctl_bad "$f:3: port 0 out of range 1..65535 in '$BE_NET.12:0'" apply "$f"
ctl_bad "$E2E_TMP/missing.conf: No such file or directory" \
	apply "$E2E_TMP/missing.conf"
check "the half-applied file left no service behind" \
	'! ctl service list | has "$VIP:81"'

# ---- lbctl's own usage errors -----------------------------------------------

ctl_snapshot "$E2E_TMP/before.usage"
rc=0
ctl >/dev/null 2>"$E2E_TMP/err.usage" || rc=$?
check "lbctl without a command: exit 2, usage on stderr" \
	'[ "$rc" -eq 2 ] && grep -q "^usage: lbctl" "$E2E_TMP/err.usage"'
rc=0
err=$("$LBCTL" --socket "$CTL_SOCK" --frob stats 2>&1) || rc=$?
check "lbctl --frob: exit 2, one line ($err)" \
	'[ "$rc" -eq 2 ] && [ "$(printf "%s\n" "$err" | wc -l)" -eq 1 ]'
rc=0
err=$("$LBCTL" --socket "$E2E_TMP/nobody.sock" stats 2>&1) || rc=$?
check "lbctl on a socket nobody serves: exit 2, 'cannot reach' ($err)" \
	'[ "$rc" -eq 2 ] && [ "$err" = "lbctl: cannot reach lb-control at $E2E_TMP/nobody.sock: No such file or directory" ]'
ctl_snapshot "$E2E_TMP/after.usage"
check "lbctl's usage errors changed nothing" \
	cmp -s "$E2E_TMP/before.usage" "$E2E_TMP/after.usage"

# ---- the socket by hand -----------------------------------------------------

api() {
	"$PY" "$E2E_DIR/ctltool.py" api --socket "$CTL_SOCK" "$@" \
		>"$E2E_TMP/api.out" 2>&1 || echo "ctltool: status $?" \
		>>"$E2E_TMP/api.out"
}

# resp_check LINES CODE|- SUBSTRING OK...: the response lines (one JSON
# object each) have these "ok" values (true/false), and the first error's
# code and message are as given (- for any code).
resp_check() {
	"$PY" -c '
import json, sys
lines = sys.argv[1].splitlines()
want = [w == "true" for w in sys.argv[4:]]
rs = [json.loads(x) for x in lines]
assert [r["ok"] for r in rs] == want, rs
assert all(r["v"] == 1 for r in rs), rs
errs = [r for r in rs if not r["ok"]]
for r in errs:
    assert isinstance(r["error"], str) and "\n" not in r["error"], r
    assert isinstance(r["code"], int) and r["code"] < 0, r
if errs:
    assert sys.argv[2] == "-" or errs[0]["code"] == int(sys.argv[2]), errs
    assert sys.argv[3] in errs[0]["error"], errs
' "$@" 2>&1
}

# api_err DESCRIPTION CODE|- SUBSTRING ctltool-args...: one error
# response, with that code and a message holding SUBSTRING; no change.
api_err() {
	local what=$1 code=$2 sub=$3 r why
	shift 3
	ctl_snapshot "$E2E_TMP/before.api"
	api "$@"
	r=$(cat "$E2E_TMP/api.out")
	ctl_snapshot "$E2E_TMP/after.api"
	e2e_log "API, $what: $(printf '%.200s' "$r")"
	why=$(resp_check "$r" "$code" "$sub" false) || true
	[ -z "$why" ] || e2e_log "$why"
	check "API, $what: one error response (code $code)" [ -z "$why" ]
	check "API, $what: nothing changed" \
		cmp -s "$E2E_TMP/before.api" "$E2E_TMP/after.api"
}

api_err "malformed JSON" -22 "" --line '{"v": 1, "argv": ["stats"'
api_err "not an object" -22 "" --line '[1, 2, 3]'
api_err "protocol version 2" -95 \
	"protocol version 2 not supported (this lb-control speaks 1)" \
	--line '{"v": 2, "argv": ["stats"]}'
api_err "neither argv nor apply" -22 "" --line '{"v": 1}'
api_err "argv not a list of strings" -22 "" \
	--line '{"v": 1, "argv": ["service", 7]}'
long=$(printf 'x%.0s' $(seq 300))
api_err "a word of 300 bytes" - "" \
	--line "{\"v\": 1, \"argv\": [\"service\", \"del\", \"tcp\", \"$long\"]}"
api_err "a refused command" -17 "service $SVC already exists" \
	--line "{\"v\": 1, \"argv\": [\"service\", \"add\", \"tcp\", \"$VIP:80\"]}"

ctl_snapshot "$E2E_TMP/before.api"
api --big $(((1 << 20) + 1))
r=$(head -n 1 "$E2E_TMP/api.out")
ctl_snapshot "$E2E_TMP/after.api"
e2e_log "API, a line over 1 MiB: $(printf '%.200s' "$r")"
why=EOF
[ "$r" = EOF ] || why=$(resp_check "$r" - "" false) || true
check "API, a line over 1 MiB: refused with an error, or closed" \
	'[ "$why" = EOF ] || [ -z "$why" ]'
check "API, a line over 1 MiB: nothing changed" \
	cmp -s "$E2E_TMP/before.api" "$E2E_TMP/after.api"

# Several requests on one connection, a bad one between good ones.
api --line '{"v": 1, "argv": ["service", "list"]}' --line 'garbage' \
	--line '{"v": 1, "argv": ["backend", "list"], "json": true}'
r=$(cat "$E2E_TMP/api.out")
why=$(resp_check "$r" - "" true false true) || true
[ -z "$why" ] || e2e_log "$why"
check "API: one connection carries several requests, a bad one between" \
	[ -z "$why" ]

# ---- a second lb-control ----------------------------------------------------

ctl_snapshot "$E2E_TMP/before.ctl2"
rc=0
timeout 60 ip netns exec "$NS_LB" "$LB_CONTROL" \
	--proc-type=secondary --file-prefix "$DP_PREFIX" --no-pci -l 0 \
	-- --socket "$E2E_TMP/ctl2.sock" --state "$E2E_TMP/state2.conf" \
	--metrics off </dev/null >"$E2E_TMP/ctl2.log" 2>&1 || rc=$?
e2e_log "a second lb-control: status $rc, '$(tail -n 1 "$E2E_TMP/ctl2.log")'"
ctl_snapshot "$E2E_TMP/after.ctl2"
check "a second lb-control on the same dataplane exits 1: another is attached" \
	'[ "$rc" -eq 1 ] &&
	 grep -q "another lb-control (pid $CTL_PID) is attached" \
		"$E2E_TMP/ctl2.log"'
check "... and changes nothing" \
	cmp -s "$E2E_TMP/before.ctl2" "$E2E_TMP/after.ctl2"

# ---- still there, still serving ---------------------------------------------

check "lb-control is the same process (pid $pid0) and answers" \
	'[ "$CTL_PID" = "$pid0" ] && kill -0 "$pid0" && ctl stats >/dev/null'
ctl save >"$E2E_TMP/save.end" 2>&1 || true
check "the configuration is intact" \
	'grep -qx "service add tcp $VIP:80 sched rr" "$E2E_TMP/save.end" &&
	 grep -qx "backend add tcp $VIP:80 $BE1" "$E2E_TMP/save.end"'
http_seq "http://$VIP/" 10 "$E2E_TMP/seq"
t=$(http_tally "$E2E_TMP/seq")
e2e_log "10 requests after the bad input: $t"
check "the service still answers (10/10 from be1)" \
	[ "$(field be1 "$t")" = 10 ]
e2e_log "$CTL_BAD_N refused commands checked"

ctl_stop
check "lb-control exits 0 on SIGTERM (status $CTL_RC)" [ "$CTL_RC" = 0 ]
e2e_finish
