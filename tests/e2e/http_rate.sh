#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Requests/s token buckets on an `http` service: limited to R requests/s
# (admit-rate R, admit-burst B) and offered far more by a closed-loop
# client on keep-alive connections for 10 s, the service admits R x T + B
# requests within 5%, T the time from the client's first request to its
# last (10 s on an idle host); every other request is refused with the
# service's 429 (reject-status) and Retry-After, and never reaches the
# backend.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init http_rate
e2e_need_control
INSTANCE=${LB_INSTANCE:-$LB_BUILD_DIR/tools/instance/lb-instance}
[ -x "$INSTANCE" ] || e2e_skip "lb-instance is not built ($INSTANCE)"

R=${E2E_HTTP_RATE:-100}
B=$R # a second of the rate: this host may stall the client that long
SECS=10

topo_up 1
inst_up 1 --delay-ms 1 --access-log "$E2E_TMP/access.log"
conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF2
service add tcp $VIP:80 http admit-rate $R admit-burst $B reject-status 429 retry-after 3
backend add tcp $VIP:80 $(be_addr 1):80
EOF2
dp_start_shared "$conf"
ctl_start

# One request first: neighbours resolved both ways, so that no
# connection of the run waits for ARP; then the bucket fills up again.
ip netns exec "$NS_CLI" curl -sS -o /dev/null --max-time 5 "http://$VIP/warm" ||
	die "no answer through the VIP"
sleep 2
LOAD=$E2E_TMP/load.json
ip netns exec "$NS_CLI" "$PY" -B "$E2E_DIR/govload.py" --target "$VIP:80" \
	--seconds "$SECS" --group=-:16 --backoff-ms 10 --out "$LOAD" \
	>"$E2E_TMP/load.log" 2>&1 || die "govload.py failed: $(tail -n 3 "$E2E_TMP/load.log")"
st() { "$PY" -B "$E2E_DIR/govstat.py" count "$LOAD" "$1"; }
adm=$(st 200)
ref=$(st 429)
# The bucket starts full: B more than the rate's share of the time the
# client asked. That is the run's SECS seconds from its first request to
# its last, less what a starved host took to open the first connections
# (over a second, under a load average of 15 on 2 cores): the bucket,
# full, lost that time's tokens.
span=$("$PY" -B "$E2E_DIR/govstat.py" span "$LOAD")
want=$(awk -v r="$R" -v b="$B" -v s="$span" 'BEGIN { printf "%d", b + r * s + 0.5 }')
e2e_log "admitted $adm, refused $ref in ${span}s (want $want admitted)"
check "the client asked for most of the run (${span}s of ${SECS}s)" \
	'awk -v s="$span" -v t="$SECS" "BEGIN { exit !(s >= t * 0.7) }"'
check "offered at least 3x the limit ($((adm + ref)) requests)" \
	'[ $((adm + ref)) -ge $((3 * want)) ]'
check "admitted $adm within 5% of $want" \
	'[ $(((adm - want) * 100)) -le $((want * 5)) ] &&
	 [ $(((want - adm) * 100)) -le $((want * 5)) ]'
"$PY" -B "$E2E_DIR/govstat.py" refused "$LOAD" >"$E2E_TMP/refused.txt"
check "no refused request reached the backend" \
	'! grep -qxFf "$E2E_TMP/refused.txt" "$E2E_TMP/access.log"'
check "refusals carry Retry-After: 3" \
	'jq_get "$LOAD" "all(r[5] == \"3\" for r in d[\"records\"] if r[2] == 429)" |
	 grep -qx True'
ctl_json "$E2E_TMP/gov.json" governor show
check "lbctl counts them as refused for rate ($ref)" \
	'[ "$(jq_get "$E2E_TMP/gov.json" "d[\"refused\"][\"rate\"]")" = "$ref" ]'
e2e_finish
