#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Per-service flow timeouts and the RSTs of forgotten connections, with
# the kernels' own TCP stacks at both ends (a client socket, nginx):
#   - two services on one nginx, `timeout-established 2s` and the default
#     (15 min); one idle keep-alive connection to each;
#   - the 2 s one is reset at the client without the client sending a
#     byte, 2 s or more after its last packet, well within E2E_IDLE_WAIT;
#   - nginx's end of it is reset too (no connection from the SNAT address
#     to nginx is left but the other service's);
#   - the default one, idle as long, still answers a request;
#   - a stray ACK to the VIP gets a RST (the client's connect() to a
#     closed flow is refused at once, not after its retransmissions);
#   - idle_probes and rst_no_flow count them.
# Short timeouts stand for long ones: nothing here waits for the old 90 s.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init idle_timeout
e2e_need_dataplane

WAIT=${E2E_IDLE_WAIT:-15}

topo_up 1
be_start 1

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add tcp $VIP:80 sched rr timeout-established 2s
backend add tcp $VIP:80 $(be_addr 1):80
service add tcp $VIP:8080 sched rr
backend add tcp $VIP:8080 $(be_addr 1):80
EOF
dp_start "$conf"
tel_save /lb/stats "$E2E_TMP/stats0"

# The client: one keep-alive request on each service, then it waits for
# the first connection without sending; then, after a pause in which the
# test looks at nginx's sockets, it uses the second one.
ip netns exec "$NS_CLI" "$PY" -u -c '
import socket, sys, time

vip, wait = sys.argv[1], float(sys.argv[2])
req = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"

def get(s):
    s.sendall(req)
    d = b""
    while not d.endswith(b"be1\n"):
        c = s.recv(4096)
        if not c:
            return "eof"
        d += c
    return "ok"

a = socket.create_connection((vip, 80), timeout=5)
b = socket.create_connection((vip, 8080), timeout=5)
print("a_first", get(a), "b_first", get(b))
t0 = time.monotonic()
a.settimeout(wait)
try:
    r = a.recv(1)
    print("a", "eof" if r == b"" else "data", "%.1f" % (time.monotonic() - t0))
except ConnectionResetError:
    print("a reset %.1f" % (time.monotonic() - t0))
except socket.timeout:
    print("a silent %.1f" % (time.monotonic() - t0))
print("b_idle %.1f" % (time.monotonic() - t0))
time.sleep(2)
b.settimeout(5)
try:
    print("b_again", get(b))
except OSError as e:
    print("b_again", type(e).__name__)
' "$VIP" "$WAIT" >"$E2E_TMP/client.out" 2>&1 &
cpid=$!
# nginx's end, while the client still holds the second connection: only
# that one is left.
wait_output "$((WAIT + 5))" 1 grep -c "^b_idle" "$E2E_TMP/client.out" \
	>/dev/null || true
n=$(wait_output 3 1 bash -c "ip netns exec $(ns_be 1) ss -Htn \
	state established '( sport = :80 )' | wc -l") || true
e2e_log "nginx's established connections: ${n% *}"
check "nginx's end of the expired connection was reset, the other's kept" \
	'[ "${n% *}" = 1 ]'
wait "$cpid" || true
out=$(cat "$E2E_TMP/client.out")
e2e_log "client: $(tr '\n' ';' <<<"$out")"
check "both services answered the first request" \
	has -x "a_first ok b_first ok" <<<"$out"
a=$(sed -n 's/^a \(.*\)/\1/p' <<<"$out")
check "the 2 s service's idle connection is reset at the client ($a)" \
	'[ "${a% *}" = reset ]'
check "not before its 2 s timeout, well within ${WAIT} s (${a#* } s)" \
	'awk -v t="${a#* }" "BEGIN { exit !(t >= 1.9 && t < $WAIT) }"'
check "the default service's connection, idle as long, still answers" \
	has -x "b_again ok" <<<"$out"

# A stray ACK to the VIP, from a port with no flow: RST at once.
r=$(ip netns exec "$NS_CLI" "$PY" -c '
import socket, struct, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
s.settimeout(3)
cli, vip = sys.argv[1], sys.argv[2]
def csum(b):
    if len(b) % 2: b += b"\0"
    n = sum(int.from_bytes(b[i:i + 2], "big") for i in range(0, len(b), 2))
    while n >> 16: n = (n & 0xffff) + (n >> 16)
    return ~n & 0xffff
sport, seq, ack = 47123, 1000, 0x12345678
th = struct.pack("!HHIIBBHHH", sport, 8080, seq, ack, 5 << 4, 0x10, 1000, 0, 0)
ph = socket.inet_aton(cli) + socket.inet_aton(vip) + struct.pack("!BBH", 0, 6, 20)
th = th[:16] + struct.pack("!H", csum(ph + th)) + th[18:]
s.sendto(th, (vip, 0))
t0 = time.monotonic()
while time.monotonic() - t0 < 3:
    try:
        d = s.recv(2048)
    except socket.timeout:
        break
    ihl = (d[0] & 15) * 4
    sp, dp, sq, ak, off, fl = struct.unpack("!HHIIBB", d[ihl:ihl + 14])
    if sp == 8080 and dp == sport:
        print("flags %02x seq %x" % (fl, sq))
        break
else:
    print("none")
' "$(cli_addr 1)" "$VIP" 2>&1) || true
e2e_log "stray ACK at 0x12345678 answered with: $r"
check "a stray ACK gets a RST at its acknowledgment number" \
	'[ "$r" = "flags 04 seq 12345678" ]'

tel_save /lb/stats "$E2E_TMP/stats1"
for k in idle_probes rst_no_flow; do
	v=$(jget "$E2E_TMP/stats1" /lb/stats "$k")
	e2e_log "$k: $v"
	check "$k counted" '[ "$v" != - ] && [ "$v" -ge 1 ]'
done
v=$(jget "$E2E_TMP/stats1" /lb/stats idle_probes)
check "two probes per expired connection ($v)" '[ "$v" = 2 ]'

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]

e2e_finish
