#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# HTTP feedback of an IPv6 service (fnat66) as lb-control shows it,
# against the real processes: three lb-instance backends on IPv6
# addresses behind an IPv6 VIP, each with its own delay and benchmark
# time, hence its own self-perceived load (X-SPL).
#   - wrk with keep-alive through the VIP: every response carried X-SPL,
#     so the SPL records lb-control counted for a backend equal its HTTP
#     responses, none lost to a full ring (fb_dropped 0);
#   - then single requests: the SPL `lbctl backend list` shows for each
#     backend is the X-SPL of the last response it sent;
#   - one instance restarted answering every request 503: lbctl counts
#     its responses as 5xx.
# With L7_FEEDBACK_BE=4 (l7_feedback64.sh) the same against IPv4
# backends of the IPv6 VIP (fnat64), from the IPv4 SNAT address.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"

BE_FAM=${L7_FEEDBACK_BE:-6}
if [ "$BE_FAM" = 4 ]; then
	e2e_init l7_feedback64
else
	e2e_init l7_feedback6
fi
e2e_need_control
e2e_need_tools wrk curl
inst_need

SECS=${E2E_L7_SECONDS:-3}
EP6="[$VIP6]:80"
URL="http://[$VIP6]/"
# Per backend: delay and benchmark time (ms).
DELAY=(0 2 6 12)
BENCH=(0 10 10 8)

# be6 I: backend I as lbctl names it (IPv4 with BE_FAM 4).
be6() {
	if [ "$BE_FAM" = 4 ]; then
		echo "$(be_addr "$1"):80"
	else
		echo "[$(be_addr6 "$1")]:80"
	fi
}

# inst6_start I [OPTIONS...]: lb-instance as backend I on its address
# of family BE_FAM, port 80, named beI; its pid in INST_PIDI (inst_stop
# stops it).
inst6_start() {
	local i=$1
	shift
	ip netns exec "$(ns_be "$i")" "$INSTANCE" \
		--listen "$(be6 "$i")" --name "be$i" \
		--delay-ms "${DELAY[$i]}" --bench-ms "${BENCH[$i]}" "$@" \
		>>"$E2E_TMP/inst$i.log" 2>&1 &
	eval "INST_PID$i=$!"
	wait_listen "$(ns_be "$i")" tcp "$(be6 "$i")" ||
		die "be$i: lb-instance did not start on $(be6 "$i")"
}

# be_get FILE I KEY: backend I's KEY (a path into its record) in a saved
# `lbctl --json backend list`.
be_get() {
	jq_get "$1" "[x$3 for x in d['backends'] if x['backend'] == '$(be6 "$2")'][0]"
}

topo_up 3
v6_on "$NS_CLI" "$IF_CLI" "$(cli_addr6 1)/64"
for i in 1 2 3; do
	[ "$BE_FAM" = 4 ] ||
		v6_on "$(ns_be "$i")" "$(if_be "$i")" "$(be_addr6 "$i")/64"
	inst6_start "$i"
done
conf=$E2E_TMP/lb.conf
conf_ports6 "$conf"
cat >>"$conf" <<EOF
service add tcp $EP6 sched rr http
backend add tcp $EP6 $(be6 1)
backend add tcp $EP6 $(be6 2)
backend add tcp $EP6 $(be6 3)
EOF
dp_start_shared "$conf"
ctl_start

# ---- keep-alive: one SPL record per response ----
inst_keepalive "$URL" "$SECS"
f=$E2E_TMP/ka.json
for i in 1 2 3; do
	resp=$(be_get "$f" "$i" "['http_responses']")
	recs=$(be_get "$f" "$i" "['l7']['spl_records']")
	e2e_log "be$i $(be6 "$i"): responses $resp, spl records $recs"
	check "be$i: SPL records ($recs) == HTTP responses ($resp) > 0" \
		"[ '$resp' != '-' ] && [ '$resp' -gt 0 ] && [ '$recs' = '$resp' ]"
done
ctl_json "$E2E_TMP/stats.json" stats
check "no feedback record lost to a full ring (fb_dropped 0)" \
	'[ "$(jq_get "$E2E_TMP/stats.json" "d[\"total\"][\"fb_dropped\"]")" = 0 ]'

# ---- the last X-SPL each backend sent ----
for r in 1 2; do
	inst_spl_round "$r" "$URL" be6
done

# ---- 5xx counted ----
ctl_json "$E2E_TMP/e0.json" backend list
inst_stop 2
inst6_start 2 --error-rate 1
for _ in $(seq 1 9); do
	ip netns exec "$NS_CLI" curl -s -o /dev/null --max-time 5 \
		-H "Connection: close" "$URL" || true
done
sleep 0.5
ctl_json "$E2E_TMP/e1.json" backend list
d5=$(($(be_get "$E2E_TMP/e1.json" 2 "['http_5xx']") -
	$(be_get "$E2E_TMP/e0.json" 2 "['http_5xx']")))
d1=$(($(be_get "$E2E_TMP/e1.json" 1 "['http_5xx']") -
	$(be_get "$E2E_TMP/e0.json" 1 "['http_5xx']")))
e2e_log "5xx counted: be2 +$d5, be1 +$d1"
check "be2 answering 503: its 5xx counted (+$d5), be1's not (+$d1)" \
	'[ "$d5" -ge 2 ] && [ "$d1" = 0 ]'

ctl_stop
dp_stop
for i in 1 2 3; do inst_stop "$i"; done
e2e_finish
