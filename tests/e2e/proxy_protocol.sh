#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The PROXY protocol of a service (proxy-protocol v1|v2): the backends
# learn the client's address through full-NAT.
#   - nginx behind a v1 service and nginx behind a v2 service, both with
#     `listen ... proxy_protocol`, log the client namespace's address as
#     $proxy_protocol_addr (and the SNAT address as $remote_addr) for
#     every request of 20 sequential connections, each answered;
#   - a 1 MiB request through the v2 service is answered (every segment
#     translated both ways);
#   - HAProxy behind a v2 service with `accept-proxy` answers a curl
#     request with the client's address as its source;
#   - nginx behind a v2 service with `synproxy on` logs the client's
#     address for N connections and answers a 1 MiB request: the header
#     goes to the backend after the handshake the worker made in the
#     client's name, in its sequence numbers, timestamps and window
#     scale (synp_handshakes counts one per connection);
#   - a UDP service with v2: a server that reads the header from each
#     datagram answers 5 datagrams with the client's address and port
#     and the payload after the header;
#   - the dataplane counts one header per connection and per datagram
#     (pp_sent) and exits 0 on SIGTERM.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init proxy_protocol
e2e_need_dataplane
e2e_need_tools nginx haproxy curl

N=20
CLI=$(cli_addr 1)

topo_up 5

# pp_nginx I: nginx on backend I's address, port 80, requiring the PROXY
# header, logging "$proxy_protocol_addr $remote_addr" per request.
pp_nginx() {
	local i=$1 ns dir addr
	ns=$(ns_be "$i")
	addr=$(be_addr "$i")
	dir=$E2E_TMP/be$i
	mkdir -p "$dir"
	cat >"$dir/nginx.conf" <<EOF
user nobody nogroup;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events {
	worker_connections 1024;
}
http {
	log_format pp '\$proxy_protocol_addr \$proxy_protocol_port \$remote_addr';
	access_log $dir/access.log pp;
	default_type text/plain;
	client_body_temp_path $dir/body;
	proxy_temp_path $dir/proxy;
	fastcgi_temp_path $dir/fastcgi;
	uwsgi_temp_path $dir/uwsgi;
	scgi_temp_path $dir/scgi;
	server {
		listen $addr:80 proxy_protocol;
		location / {
			return 200 "be$i\\n";
		}
	}
}
EOF
	ip netns exec "$ns" nginx -p "$dir" -e "$dir/error.log" \
		-c "$dir/nginx.conf" ||
		die "be$i: nginx did not start: $(tail -n 5 "$dir/error.log")"
	wait_listen "$ns" tcp "$addr:80" ||
		die "be$i: nginx is not listening on $addr:80"
}

# pp_haproxy I: HAProxy on backend I's address, port 80, accepting only
# connections that start with a PROXY header; it answers with the source
# address it took from the header.
pp_haproxy() {
	local i=$1 ns dir addr
	ns=$(ns_be "$i")
	addr=$(be_addr "$i")
	dir=$E2E_TMP/be$i
	mkdir -p "$dir"
	cat >"$dir/haproxy.cfg" <<EOF
global
	pidfile $dir/haproxy.pid
defaults
	mode http
	timeout client 5s
	timeout connect 5s
	timeout server 5s
frontend fe
	bind $addr:80 accept-proxy
	http-request return status 200 content-type text/plain lf-string "src=%[src]\n"
EOF
	ip netns exec "$ns" haproxy -D -f "$dir/haproxy.cfg" \
		>"$dir/haproxy.log" 2>&1 ||
		die "be$i: haproxy did not start: $(tail -n 5 "$dir/haproxy.log")"
	wait_listen "$ns" tcp "$addr:80" ||
		die "be$i: haproxy is not listening on $addr:80"
}

# pp_udp I PORT: a UDP server on backend I that takes the version 2
# header off each datagram and answers "src=ADDR:PORT data=PAYLOAD", or
# "bad" when the datagram does not start with a valid one.
pp_udp() {
	local i=$1 port=$2 ns
	ns=$(ns_be "$i")
	# shellcheck disable=SC2016 # python source
	ip netns exec "$ns" "$PY" -c '
import socket, struct, sys
SIG = b"\r\n\r\n\x00\r\nQUIT\n"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
while True:
    d, peer = s.recvfrom(65535)
    ans = b"bad"
    if len(d) >= 28 and d[:12] == SIG and d[12] == 0x21 and d[13] == 0x12:
        n = struct.unpack("!H", d[14:16])[0]
        src = socket.inet_ntoa(d[16:20])
        sport = struct.unpack("!H", d[24:26])[0]
        ans = ("src=%s:%d data=" % (src, sport)).encode() + d[16 + n:]
    s.sendto(ans, peer)
' "$(be_addr "$i")" "$port" >"$E2E_TMP/udp-be$i.log" 2>&1 &
	wait_listen "$ns" udp "$(be_addr "$i"):$port" ||
		die "be$i: the UDP server did not start"
}

pp_nginx 1
pp_nginx 2
pp_haproxy 3
pp_udp 4 5353
pp_nginx 5

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add tcp $VIP:80 sched rr proxy-protocol v1
backend add tcp $VIP:80 $(be_addr 1):80
service add tcp $VIP:81 sched rr proxy-protocol v2
backend add tcp $VIP:81 $(be_addr 2):80
service add tcp $VIP:82 sched rr proxy-protocol v2
backend add tcp $VIP:82 $(be_addr 3):80
service add udp $VIP:53 sched rr proxy-protocol v2
backend add udp $VIP:53 $(be_addr 4):5353
service add tcp $VIP:83 sched rr proxy-protocol v2 synproxy on
backend add tcp $VIP:83 $(be_addr 5):80
EOF
dp_start "$conf"
tel_save /lb/stats "$E2E_TMP/stats0"

# pp_logged I: the access log of backend I after N requests, each line
# checked against the client's address and the SNAT address.
pp_logged() {
	local i=$1 log lines good
	log=$E2E_TMP/be$i/access.log
	lines=$(wc -l <"$log" 2>/dev/null || echo 0)
	good=$(awk -v c="$CLI" -v s="$LB_SNAT" \
		'$1 == c && $2 > 0 && $3 == s' "$log" 2>/dev/null | wc -l)
	e2e_log "be$i access log: $lines lines, $good with $CLI via $LB_SNAT;" \
		"first: $(head -n 1 "$log" 2>/dev/null)"
	check "be$i logged $N requests from $CLI (got $good of $lines)" \
		'[ "$good" = "$N" ] && [ "$lines" = "$N" ]'
}

for v in 1 2; do
	http_seq "http://$VIP:8$((v - 1))/" "$N" "$E2E_TMP/seq$v"
	t=$(http_tally "$E2E_TMP/seq$v")
	e2e_log "proxy-protocol v$v: $N sequential requests: $t"
	[ "$(field fail "$t")" = 0 ] || http_failures "$E2E_TMP/seq$v"
	check "v$v: $N/$N requests answered" [ "$(field ok "$t")" = "$N" ]
	pp_logged "$v"
done

# A request of 1 MiB: hundreds of segments each way whose numbers are
# translated, acknowledged as the backend reads them.
head -c 1048576 /dev/urandom >"$E2E_TMP/upload"
code=$(ip netns exec "$NS_CLI" curl -sS -o /dev/null --max-time 10 \
	-w '%{http_code} %{size_upload}' --data-binary "@$E2E_TMP/upload" \
	"http://$VIP:81/" 2>"$E2E_TMP/upload.err") || true
e2e_log "1 MiB upload through v2: '$code' $(cat "$E2E_TMP/upload.err")"
check "1 MiB request through v2 answered (got '$code')" \
	[ "$code" = "200 1048576" ]

body=$(ip netns exec "$NS_CLI" curl -sS --max-time 5 "http://$VIP:82/" \
	2>"$E2E_TMP/haproxy.err") || true
e2e_log "haproxy answered: '${body}' $(cat "$E2E_TMP/haproxy.err")"
check "haproxy with accept-proxy sees the client $CLI" \
	[ "$body" = "src=$CLI" ]

# Through the SYN proxy: the worker answers each handshake, opens the
# backend's itself, then the header and every segment go in the
# backend's numbers.
tel_save /lb/stats "$E2E_TMP/synp0"
http_seq "http://$VIP:83/" "$N" "$E2E_TMP/seq5"
tel_save /lb/stats "$E2E_TMP/synp1"
t=$(http_tally "$E2E_TMP/seq5")
e2e_log "proxy-protocol v2 with synproxy on: $N sequential requests: $t"
[ "$(field fail "$t")" = 0 ] || http_failures "$E2E_TMP/seq5"
check "synproxy: $N/$N requests answered" [ "$(field ok "$t")" = "$N" ]
# A backend's SYN-ACK let through to the client, or a segment the worker
# took for one without a flow, shows here: the client is answered with a
# RST, or stalls until it sends again.
r0=$(jget "$E2E_TMP/synp0" /lb/stats rst_no_flow)
r1=$(jget "$E2E_TMP/synp1" /lb/stats rst_no_flow)
check "synproxy: no segment found its flow missing (rst_no_flow $r0 -> $r1)" \
	'[ "$r0" != - ] && [ "$r0" = "$r1" ]'

pp_logged 5
code=$(ip netns exec "$NS_CLI" curl -sS -o /dev/null --max-time 10 \
	-w '%{http_code} %{size_upload}' --data-binary "@$E2E_TMP/upload" \
	"http://$VIP:83/" 2>"$E2E_TMP/upload5.err") || true
e2e_log "1 MiB upload through synproxy and v2: '$code'" \
	"$(cat "$E2E_TMP/upload5.err")"
check "1 MiB request through synproxy and v2 answered (got '$code')" \
	[ "$code" = "200 1048576" ]

# shellcheck disable=SC2016 # python source
udp=$(ip netns exec "$NS_CLI" "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[2], 5300))
s.settimeout(2)
ok = 0
for i in range(5):
    s.sendto(b"q%d" % i, (sys.argv[1], 53))
    try:
        a = s.recv(2048).decode()
    except socket.timeout:
        a = "timeout"
    want = "src=%s:5300 data=q%d" % (sys.argv[2], i)
    ok += a == want
    print(a if a != want else "", end="")
print(" ok=%d" % ok)
' "$VIP" "$CLI" 2>&1) || true
e2e_log "UDP through v2: $udp"
check "5 datagrams answered with the client $CLI:5300 and their payload" \
	[ "${udp##* }" = ok=5 ]

tel_save /lb/stats "$E2E_TMP/stats1"
s0=$(jget "$E2E_TMP/stats0" /lb/stats pp_sent)
s1=$(jget "$E2E_TMP/stats1" /lb/stats pp_sent)
r1=$(jget "$E2E_TMP/stats1" /lb/stats pp_resent)
e2e_log "pp_sent: $s0 -> $s1, pp_resent: $r1"
check "one header per connection and datagram ($((3 * N + 8)), got $s0 -> $s1)" \
	'[ "$s0" != - ] && [ "$s1" != - ] && [ $((s1 - s0)) = $((3 * N + 8)) ]'
h0=$(jget "$E2E_TMP/stats0" /lb/stats synp_handshakes)
h1=$(jget "$E2E_TMP/stats1" /lb/stats synp_handshakes)
e2e_log "synp_handshakes: $h0 -> $h1, synp_cookies:" \
	"$(jget "$E2E_TMP/stats1" /lb/stats synp_cookies)"
check "one backend handshake of the proxy per connection ($((N + 1)), got $h0 -> $h1)" \
	'[ "$h0" != - ] && [ "$h1" != - ] && [ $((h1 - h0)) = $((N + 1)) ]'

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]

e2e_finish
