#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Health checks through the exception path. The dataplane owns both veths
# (AF_PACKET); lb-control checks the backends of an http service with
# GET /health every 200 ms (rise 2, fall 2), from the kernel of the LB
# namespace, which reaches the backends through the dataplane's tap:
#   - the backends' access logs show the checks, from the local address
#     of port 1 (so through the exception path);
#   - the backends of the boot configuration are up at once; after a
#     restart of lb-control too, before any check;
#   - a backend whose health URL starts failing goes down within the
#     configured time and gets no new connection, while connections it
#     already had keep being answered by it; it comes back after rise;
#   - a backend added live is pending (no traffic) until its checks pass;
#   - the VIP answers every request meanwhile;
#   - lbctl backend list (text and --json) and /metrics show the health
#     with the last check's outcome and latency.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2086 # $SVC ("tcp VIP:PORT") is two words on purpose
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init health_check
e2e_need_control

SVC="tcp $VIP:80"
INTERVAL_MS=200
FALL=2
RISE=2
# Down within fall checks and one interval of phase, plus the time to
# publish; the margin is for this slow shared machine, not the design.
DOWN_LIMIT=${E2E_HEALTH_LIMIT:-6}

topo_up 3

# /health answers 200, or 503 while the backend's file down exists, and is
# logged (combined format: client address, request, status, User-Agent).
BE_LOCATIONS='location = /health {
			access_log @DIR@/health.log combined;
			if (-f @DIR@/down) {
				return 503 "down\n";
			}
			return 200 "ok\n";
		}'

for i in 1 2 3; do
	be_start "$i"
done
conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add $SVC sched rr check http check-path /health check-interval ${INTERVAL_MS}ms check-timeout 1s check-rise $RISE check-fall $FALL
backend add $SVC $(be_addr 1):80
backend add $SVC $(be_addr 2):80
EOF
dp_start_shared "$conf"
ctl_start

# health ADDR: the health lbctl shows for backend ADDR:80, "-" if none.
health() {
	ctl_json "$E2E_TMP/bl.json" backend list >/dev/null 2>&1 || true
	jq_get "$E2E_TMP/bl.json" \
		"[b['health'] for b in d['backends'] if b['backend'] == '$1:80'][0]"
}

# wait_health SECONDS ADDR STATE: until backend ADDR's health is STATE;
# prints the seconds it took, or "HEALTH SECONDS" when they ran out.
wait_health() {
	local r
	r=$(WAIT_PERIOD=0.1 wait_output "$1" "$3" health "$2") && {
		echo "${r##* }"
		return 0
	}
	echo "$r"
	return 1
}

# hc_log_count I STATUS: checks from the kernel's address on port 1 in
# backend I's log that got STATUS.
hc_log_count() {
	grep -c "^$LB_ADDR_BE - .* \"GET /health HTTP/1.1\" $2 .*\"sluice-health-check\"\$" \
		"$E2E_TMP/be$1/health.log" 2>/dev/null || echo 0
}

# ---- boot backends are up; the checks go through the exception path ------

B1=$(be_addr 1)
B2=$(be_addr 2)
B3=$(be_addr 3)
check "the boot configuration's backends start up" \
	'[ "$(health "$B1")" = up ] && [ "$(health "$B2")" = up ]'
sleep 2
n1=$(hc_log_count 1 200)
n2=$(hc_log_count 2 200)
e2e_log "checks seen by be1: $n1, be2: $n2 (from $LB_ADDR_BE, in 2 s at" \
	"${INTERVAL_MS} ms)"
check "the backends' logs show the checks, from the kernel's address on port 1" \
	'[ "$n1" -ge 4 ] && [ "$n2" -ge 4 ]'
tel_save /lb/exception "$E2E_TMP/exc0"
check "the checks went through the exception path (tap of port 1 busy)" \
	'[ "$(jget "$E2E_TMP/exc0" /lb/exception port1 from_kernel)" -ge 8 ]'
ctl_do backend list >"$E2E_TMP/bl.txt"
sed 's/^/    /' "$E2E_TMP/bl.txt"
check "lbctl backend list shows HEALTH and the last check" \
	'head -n 1 "$E2E_TMP/bl.txt" | grep -Eq "HEALTH +LAST-CHECK" &&
	 grep "$B1:80" "$E2E_TMP/bl.txt" | grep -Eq " up +200 [0-9.]+ms "'
ctl_json "$E2E_TMP/bl.json" backend list
check "--json shows the last check's result and latency" \
	'[ "$(jq_get "$E2E_TMP/bl.json" "[b for b in d[\"backends\"] if b[\"backend\"] == \"$B1:80\"][0][\"check\"][\"last_result\"]")" = ok ] &&
	 [ "$(jq_get "$E2E_TMP/bl.json" "[b for b in d[\"backends\"] if b[\"backend\"] == \"$B1:80\"][0][\"check\"][\"last_latency_ms\"] > 0")" = True ]'
metrics >"$E2E_TMP/m0"
check "/metrics: lb_backend_health up for be1, checks counted" \
	'grep -q "^lb_backend_health{service=\"$SVC\",backend=\"$B1:80\",health=\"up\"} 1" "$E2E_TMP/m0" &&
	 grep -q "^lb_backend_checks_total{service=\"$SVC\",backend=\"$B1:80\"} [1-9]" "$E2E_TMP/m0" &&
	 grep -q "^lb_backend_check_latency_seconds{service=\"$SVC\",backend=\"$B1:80\"} " "$E2E_TMP/m0"'

# ---- held connections, then be1's health fails --------------------------------

cat >"$E2E_TMP/hold.py" <<'EOF'
import os, socket, sys, time
vip, n, out, go = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
req = b"GET / HTTP/1.1\r\nHost: vip\r\n\r\n"
def ask(s):
    s.sendall(req)
    data = b""
    while b"\r\n\r\n" not in data:
        c = s.recv(4096)
        if not c:
            return "closed"
        data += c
    head, body = data.split(b"\r\n\r\n", 1)
    n = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v)
    while len(body) < n:
        c = s.recv(4096)
        if not c:
            return "closed"
        body += c
    return body.decode().strip()
conns = []
for i in range(n):
    s = socket.create_connection((vip, 80), timeout=10)
    conns.append((s, ask(s)))
with open(out, "w") as f:
    f.write(" ".join(b for _, b in conns) + "\n")
while not os.path.exists(go):
    time.sleep(0.1)
later = []
for s, _ in conns:
    try:
        later.append(ask(s))
    except OSError as e:
        later.append("error")
with open(out, "a") as f:
    f.write(" ".join(later) + "\n")
EOF
ip netns exec "$NS_CLI" "$PY" "$E2E_TMP/hold.py" "$VIP" 4 \
	"$E2E_TMP/held" "$E2E_TMP/go" >"$E2E_TMP/hold.log" 2>&1 &
HOLD=$!
for ((i = 0; i < 50; i++)); do
	[ -s "$E2E_TMP/held" ] && break
	sleep 0.1
done
first=$(head -n 1 "$E2E_TMP/held" 2>/dev/null || echo)
e2e_log "held connections answered by: $first"
check "held connections reach both backends" \
	'[[ " $first " == *" be1 "* ]] && [[ " $first " == *" be2 "* ]]'

touch "$E2E_TMP/be1/down"
t=$(wait_health "$DOWN_LIMIT" "$B1" down) || true
e2e_log "be1 down after ${t}s (fall $FALL x ${INTERVAL_MS} ms)"
check "be1 goes down within ${DOWN_LIMIT}s of its health URL failing ($t)" \
	'[[ "$t" =~ ^[0-9]+\.[0-9]$ ]]'
check "be1's last check says 503" \
	'grep "$B1:80" <(ctl backend list) | has " down  *503 "'
tel_save /lb/backends "$E2E_TMP/tb1"
check "the dataplane's table marks be1 down, be2 up" \
	'[ "$(be_field "$E2E_TMP/tb1" "$SVC" 1 health)" = down ] &&
	 [ "$(be_field "$E2E_TMP/tb1" "$SVC" 2 health)" = up ]'
http_seq "http://$VIP/" 20 "$E2E_TMP/seq1"
t=$(http_tally "$E2E_TMP/seq1")
check "new connections avoid be1 and all succeed ($t)" \
	'[ "$(field ok "$t")" = 20 ] && [ "$(field be1 "$t")" = 0 ] &&
	 [ "$(field be2 "$t")" = 20 ]'
touch "$E2E_TMP/go"
wait "$HOLD" || true
later=$(sed -n 2p "$E2E_TMP/held")
e2e_log "the held connections answer again by: $later"
check "connections held across be1's failure are answered by the same backends" \
	'[ -n "$later" ] && [ "$first" = "$later" ]'

rm -f "$E2E_TMP/be1/down"
t=$(wait_health "$DOWN_LIMIT" "$B1" up) || true
e2e_log "be1 up again after ${t}s (rise $RISE)"
check "be1 comes back after rise passes ($t)" '[[ "$t" =~ ^[0-9]+\.[0-9]$ ]]'
http_seq "http://$VIP/" 20 "$E2E_TMP/seq2"
t=$(http_tally "$E2E_TMP/seq2")
check "be1 takes new connections again ($t)" \
	'[ "$(field ok "$t")" = 20 ] && [ "$(field be1 "$t")" -gt 0 ]'

# ---- a backend added live is pending until its checks pass -------------------

touch "$E2E_TMP/be3/down"
ctl_do backend add $SVC "$B3:80" >/dev/null
h=$(health "$B3")
check "a backend added live starts pending ($h)" '[ "$h" = pending ]'
sleep 1
http_seq "http://$VIP/" 20 "$E2E_TMP/seq3"
t=$(http_tally "$E2E_TMP/seq3")
check "it gets no traffic while its checks fail ($(health "$B3"), $t)" \
	'[ "$(field ok "$t")" = 20 ] && [ "$(field be3 "$t")" = 0 ] &&
	 [ "$(health "$B3")" = pending ]'
rm -f "$E2E_TMP/be3/down"
t=$(wait_health "$DOWN_LIMIT" "$B3" up) || true
check "it goes up after rise passing checks ($t)" '[[ "$t" =~ ^[0-9]+\.[0-9]$ ]]'
http_seq "http://$VIP/" 30 "$E2E_TMP/seq4"
t=$(http_tally "$E2E_TMP/seq4")
check "then takes its share ($t)" \
	'[ "$(field ok "$t")" = 30 ] && [ "$(field be3 "$t")" -gt 0 ]'

# ---- lb-control restarts: its backends are up at once -------------------------

touch "$E2E_TMP/be2/down"
ctl_stop
ctl_start
h1=$(health "$B1")
h2=$(health "$B2")
h3=$(health "$B3")
check "after a restart every backend of the state file starts up ($h1 $h2 $h3)" \
	'[ "$h1" = up ] && [ "$h3" = up ] && { [ "$h2" = up ] || [ "$(jq_get "$E2E_TMP/bl.json" "[b for b in d[\"backends\"] if b[\"backend\"] == \"$B2:80\"][0][\"check\"][\"probes\"]")" -ge 1 ]; }'
t=$(wait_health "$DOWN_LIMIT" "$B2" down) || true
check "and goes down only after fall failures ($t)" '[[ "$t" =~ ^[0-9]+\.[0-9]$ ]]'
rm -f "$E2E_TMP/be2/down"

check "lb-control stops cleanly" ctl_stop
check "lb-dataplane exits 0" dp_stop
e2e_finish
