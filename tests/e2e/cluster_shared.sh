#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# What two load balancer hosts behind an ECMP router (cluster_lib.sh)
# share without talking to each other, and what they share through Redis:
#   - maglev with one --hash-seed-file: the same client tuple reaches the
#     same backend through either host (the router is made to send every
#     client to host 1, then every client to host 2, for the same 160
#     tuples);
#   - one backend of four removed on both hosts (lbctl backend del): the
#     tuples that were on it move, about 1/4 of all, the others stay, and
#     both hosts still agree;
#   - adaptive, for contrast: the hosts pick on their own, and the share
#     of the tuples they agree on is printed;
#   - admit-cluster through one Redis: clients offering twice the limit,
#     spread by ECMP over both hosts, get the limit in total within 5%,
#     and both hosts admit a share.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2086 # $MSVC and $ASVC ("tcp VIP:PORT") are two words on purpose
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/admit_lib.sh"

e2e_init cluster_shared
e2e_need_control
cl_need
trap cl_on_exit EXIT

R=${E2E_ADMIT_RATE:-200}
# A second of the rate: lb-control reaches Redis through its dataplane's
# exception path and the router, on a machine shared with other work;
# its refills come late now and then, and a bucket at its cap loses them.
BURST=$R
SECS=10
NT=40 # ports per client address: 4 x 40 tuples
MSVC="tcp $CL_VIP:80"
ASVC="tcp $CL_VIP:82"
DSVC="tcp $CL_VIP:83"

svcs=$E2E_TMP/services.conf
# Short closing timeouts: a tuple can come again a second after its
# connection ended and make a new flow.
cat >"$svcs" <<EOF
service add $MSVC sched maglev timeout-closing 1s timeout-time-wait 200ms timeout-closed 200ms
backend add $MSVC $(be_addr 1):80
backend add $MSVC $(be_addr 2):80
backend add $MSVC $(be_addr 3):80
backend add $MSVC $(be_addr 4):80
service add $DSVC sched adaptive timeout-closing 1s timeout-time-wait 200ms timeout-closed 200ms
backend add $DSVC $(be_addr 1):80
backend add $DSVC $(be_addr 2):80
backend add $DSVC $(be_addr 3):80
backend add $DSVC $(be_addr 4):80
service add $ASVC admit-rate $R admit-burst $BURST admit-reject rst admit-cluster closed
backend add $ASVC $(be_addr 1):80
EOF
cl_up 4 "$svcs"

# ---- maglev: the same tuple, the same backend, whichever host ------------------------

# via_host I: the router sends every client to host I.
via_host() {
	ip -n "$NS_RT" route replace "$CL_VIP/32" via "$(host_addr "$1")" table 100
	ip -n "$NS_RT" rule del pref 100 2>/dev/null || true
	ip -n "$NS_RT" rule add pref 100 iif "$IF_RC" table 100
	ip -n "$NS_RT" route flush cache 2>/dev/null || true
}

# tuples OUT [PORT]: the backend of each tuple (4 addresses x NT ports)
# on VIP:PORT (80).
tuples() {
	cl_load --target "$CL_VIP:${2:-80}" --srcs "$(cl_srcs | cut -d, -f1-4)" \
		--tuples "41000:$NT" --timeout 2 --out "$1"
}

# compare A B: "same=N differ=N failed=N" over the tuples of two runs.
compare() {
	"$PY" -B - "$1" "$2" <<'PY'
import json, sys
def load(f):
    return {(r["src"], r["sport"]): (r["be"] if r["ok"] else None)
            for r in map(json.loads, open(f))}
a, b = load(sys.argv[1]), load(sys.argv[2])
same = sum(1 for k in a if a[k] is not None and a[k] == b.get(k))
failed = sum(1 for k in a if a[k] is None or b.get(k) is None)
print("same=%d differ=%d failed=%d" % (same, len(a) - same - failed, failed))
PY
}

# on_be FILE NAME: how many tuples of FILE reached backend NAME.
on_be() { grep -c "\"be\": \"$2\"" "$1" || true; }

via_host 1
tuples "$E2E_TMP/m1"
via_host 2
tuples "$E2E_TMP/m2"
c=$(compare "$E2E_TMP/m1" "$E2E_TMP/m2")
e2e_log "through host 1: be1 $(on_be "$E2E_TMP/m1" be1), be2 $(on_be "$E2E_TMP/m1" be2)," \
	"be3 $(on_be "$E2E_TMP/m1" be3), be4 $(on_be "$E2E_TMP/m1" be4); host 1 vs host 2: $c"
check "maglev: every tuple reached the same backend through both hosts ($c)" \
	'[ "$(field same "$c")" = $((4 * NT)) ]'
check "maglev: the tuples spread over the four backends" \
	'for b in be1 be2 be3 be4; do [ "$(on_be "$E2E_TMP/m1" $b)" -ge $((4 * NT / 10)) ] || exit 1; done'

# ---- one backend removed on both hosts -----------------------------------------------

for i in 1 2; do
	hctl "$i" backend del $MSVC "$(be_addr 4):80" >/dev/null
done
# The flows of the tuples just used end within the closing timeouts.
sleep 2
via_host 1
tuples "$E2E_TMP/n1"
via_host 2
tuples "$E2E_TMP/n2"
c=$(compare "$E2E_TMP/n1" "$E2E_TMP/n2")
check "maglev after the removal: both hosts agree ($c)" \
	'[ "$(field same "$c")" = $((4 * NT)) ]'
moved=$(compare "$E2E_TMP/m1" "$E2E_TMP/n1")
was4=$(on_be "$E2E_TMP/m1" be4)
e2e_log "removal of be4: $was4 of $((4 * NT)) tuples were on it; before vs after: $moved"
check "the tuples of be4 moved, about 1/4 of all, and few others ($moved, $was4 on be4)" \
	'[ "$(field failed "$moved")" = 0 ] && [ "$(field differ "$moved")" -ge "$was4" ] &&
	 [ "$(field differ "$moved")" -le $((was4 + 4 * NT / 20)) ] &&
	 [ $((was4 * 100)) -ge $((4 * NT * 15)) ] && [ $((was4 * 100)) -le $((4 * NT * 35)) ]'
check "no tuple reaches be4 any more" '[ "$(on_be "$E2E_TMP/n1" be4)" = 0 ]'

# ---- adaptive: each host its own picks --------------------------------------------------

# adaptive (like rr and wrr) picks from per-host state: the same tuple
# may reach another backend through the other host. Measured, and each
# connection answered.
via_host 1
tuples "$E2E_TMP/d1" 83
via_host 2
tuples "$E2E_TMP/d2" 83
c=$(compare "$E2E_TMP/d1" "$E2E_TMP/d2")
e2e_log "adaptive: host 1 vs host 2 for the same $((4 * NT)) tuples: $c" \
	"(4 backends picked independently would agree on about 1/4)"
check "adaptive: every tuple answered through both hosts ($c)" \
	'[ "$(field failed "$c")" = 0 ]'
ip -n "$NS_RT" rule del pref 100

# ---- one admission limit across the hosts ----------------------------------------------

# passed I: admissions of the limited service on host I.
passed() {
	local f=$E2E_TMP/p$1.json
	hctl "$1" --json service show $ASVC >"$f"
	jq_get "$f" 'd["service"]["admit"]["verdicts"]["pass"]'
}
gen() { admit_gen "$1" "$CL_VIP:82" "$2" "$3" "$4"; }

# Warm-up: drains the initial bursts.
gen "$(cl_cli_addr 1)" $((2 * R)) 2 "$E2E_TMP/w1" &
pa=$!
gen "$(cl_cli_addr 2)" $((2 * R)) 2 "$E2E_TMP/w2"
wait "$pa"
a0=$(passed 1)
b0=$(passed 2)
gen "$(cl_cli_addr 1)" $((2 * R)) "$SECS" "$E2E_TMP/a" &
pa=$!
gen "$(cl_cli_addr 2)" $((2 * R)) "$SECS" "$E2E_TMP/b"
wait "$pa"
a=$(($(passed 1) - a0))
b=$(($(passed 2) - b0))
n=$((a + b))
e2e_log "clients: $(cat "$E2E_TMP/a") $(cat "$E2E_TMP/b")"
e2e_log "admitted: host 1 $a, host 2 $b, together $n (limit $R/s for $SECS s)"
check "together $n admitted: the rate $((R * SECS)) and at most a burst, within 5%" \
	'[ $((n * 100)) -ge $((R * SECS * 95)) ] && [ $((n * 100)) -le $(((R * SECS + BURST) * 105)) ]'
check "both hosts admitted a share (host 1 $a, host 2 $b)" \
	'[ "$a" -gt $((R * SECS / 10)) ] && [ "$b" -gt $((R * SECS / 10)) ]'
for i in 1 2; do
	hctl "$i" --json stats >"$E2E_TMP/st$i"
done
check "both lb-controls borrowed from the one Redis" \
	'[ "$(jq_get "$E2E_TMP/st1" "d[\"control\"][\"cluster_borrows\"]")" -gt 0 ] &&
	 [ "$(jq_get "$E2E_TMP/st2" "d[\"control\"][\"cluster_borrows\"]")" -gt 0 ]'

e2e_finish
