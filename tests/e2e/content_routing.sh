#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Content routing by delayed binding, on one host, through lb-dataplane
# started with its rules in its configuration:
#   - an HTTP VIP with nginx be1 in the service's own pool and be2 in the
#     pool `api`: curl with --resolve and Host api.example.com reaches
#     be2 for every request, www.example.com be1; a request head cut in
#     five segments or more is routed by its Host all the same;
#   - a TLS VIP with nginx be3 (pool tls-api) and be4 (pool tls-www),
#     each serving a self-signed certificate: curl https with the names
#     api.example.com and www.example.com (their SNI) reaches be3 and be4,
#     and openssl s_client -servername api.example.com completes its
#     handshake with be3; a name no rule knows gets a RST (the default
#     refuses);
#   - wrk with keep-alive on each HTTP pool: every request answered, by
#     the pool's backend;
#   - be2 stopped: requests for api.example.com are refused, those for
#     www.example.com still answered by be1;
#   - the counters: connections routed, refusals, nothing given up; the
#     dataplane exits 0 on SIGTERM.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init content_routing
e2e_need_dataplane
e2e_need_tools nginx curl openssl wrk

topo_up 4
be_start 1
be_start 2
BE_TLS=1 be_start 3
BE_TLS=1 be_start 4

conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add tcp $VIP:80 sched rr synproxy on
backend add tcp $VIP:80 $(be_addr 1):80
pool add tcp $VIP:80 api
backend add tcp $VIP:80 $(be_addr 2):80 pool api
rule add tcp $VIP:80 host api.example.com pool api
service add tcp $VIP:443 sched rr synproxy on
pool add tcp $VIP:443 tls-api
pool add tcp $VIP:443 tls-www
backend add tcp $VIP:443 $(be_addr 3):443 pool tls-api
backend add tcp $VIP:443 $(be_addr 4):443 pool tls-www
rule add tcp $VIP:443 sni api.example.com pool tls-api
rule add tcp $VIP:443 sni *.example.com pool tls-www
rule default tcp $VIP:443 refuse rst
EOF
dp_start "$conf"
tel_save /lb/stats "$E2E_TMP/stats0"

# asks N URL NAME [CURL OPTION...]: N requests for URL, NAME resolved to
# the VIP; who answered each, one line each ("fail" when refused).
asks() {
	local n=$1 url=$2 name=$3 i
	shift 3
	for ((i = 0; i < n; i++)); do
		ip netns exec "$NS_CLI" curl -s --connect-timeout 2 \
			--max-time 4 --resolve "$name:80:$VIP" \
			--resolve "$name:443:$VIP" "$@" "$url" || echo fail
	done
}
# routed N URL NAME WHO [CURL OPTION...]: all N answered by WHO.
routed() {
	local n=$1 url=$2 name=$3 who=$4 got
	shift 4
	asks "$n" "$url" "$name" "$@" >"$E2E_TMP/answers"
	got=$(grep -c "^$who$" "$E2E_TMP/answers" || true)
	check "$n requests for $url: all by $who ($(sort "$E2E_TMP/answers" |
		uniq -c | tr '\n' ' '))" [ "$got" -eq "$n" ]
}

routed 20 http://api.example.com/v1/x api.example.com be2
routed 20 http://www.example.com/ www.example.com be1
routed 10 https://api.example.com/ api.example.com be3 -k
routed 10 https://www.example.com/ www.example.com be4 -k
routed 3 https://other.test/ other.test fail -k

# A request head of five segments or more, the Host in the last: the
# client's MSS of 88 bytes cuts it, sent in one flight; the worker waits
# for its end.
tel_save /lb/stats "$E2E_TMP/split0"
# shellcheck disable=SC2016 # python source
split=$(ip netns exec "$NS_CLI" "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 88)
s.settimeout(5)
s.connect((sys.argv[1], 80))
s.sendall(b"GET /v1/split HTTP/1.1\r\nAccept: */*\r\n" +
          b"X-Pad: " + b"p" * 300 + b"\r\n" +
          b"Host: api.example.com\r\nConnection: close\r\n\r\n")
data = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    data += d
print(data.split(b"\r\n\r\n", 1)[-1].decode().strip())
' "$VIP" 2>&1) || true
tel_save /lb/stats "$E2E_TMP/split1"
e2e_log "split head: segments kept" \
	"$(($(jget "$E2E_TMP/split1" /lb/stats synp_held) -
	    $(jget "$E2E_TMP/split0" /lb/stats synp_held)))," \
	"time-outs $(jget "$E2E_TMP/split1" /lb/stats bind_gaveup_timeout)"
check "a head in five segments or more is routed by its Host (got '$split')" \
	[ "$split" = be2 ]

out=$(echo | ip netns exec "$NS_CLI" timeout 10 openssl s_client \
	-connect "$VIP:443" -servername api.example.com 2>&1) || true
subject=$(grep -m1 "CN *= *be" <<<"$out" || true)
check "openssl s_client -servername api.example.com reaches be3 ($subject)" \
	has "CN *= *be3" <<<"$out"

for p in api www; do
	t=$(wrk_run "http://$VIP/" 3 1 8 "$E2E_TMP/wrk-$p" \
		-H "Host: $p.example.com")
	e2e_log "wrk, Host $p.example.com, keep-alive: $t"
	check "wrk on pool $p: answered, no error ($t)" \
		'[ "$(field requests "$t")" -gt 0 ] &&
		 [ "$(field socket_errors "$t")" = 0 ] &&
		 [ "$(field non2xx "$t")" = 0 ]'
done

# A pool's backend fails: its pool has no other, its requests are
# refused; the other pool goes on.
ip netns exec "$(ns_be 2)" nginx -p "$E2E_TMP/be2" \
	-c "$E2E_TMP/be2/nginx.conf" -s stop || true
sleep 0.5
routed 3 http://api.example.com/ api.example.com fail
routed 5 http://www.example.com/ www.example.com be1

tel_save /lb/stats "$E2E_TMP/stats1"
d() { echo $(($(jget "$E2E_TMP/stats1" /lb/stats "$1") - $(jget \
	"$E2E_TMP/stats0" /lb/stats "$1"))); }
e2e_log "bind: waits $(d bind_waits), routed $(d bind_routed)," \
	"refused $(d bind_refused), dup $(d bind_dup); gave up: timeout" \
	"$(d bind_gaveup_timeout), limit $(d bind_gaveup_limit), unknown" \
	"$(d bind_gaveup_unknown), malformed $(d bind_gaveup_malformed)," \
	"closed $(d bind_gaveup_closed), full $(d bind_gaveup_full)," \
	"no backend $(d bind_gaveup_no_backend)"
check "connections routed by their first bytes ($(d bind_routed))" \
	'[ "$(d bind_routed)" -ge 70 ]'
check "the unknown names refused ($(d bind_refused))" \
	'[ "$(d bind_refused)" = 3 ]'
# Time-outs are not checked: wrk opens a connection more than -c says
# and sends nothing on it, which the default pool gets after the wait.
check "nothing over the bound, malformed or without room" \
	'[ "$(d bind_gaveup_limit)" = 0 ] && [ "$(d bind_gaveup_malformed)" = 0 ] &&
	 [ "$(d bind_gaveup_full)" = 0 ]'

rc=0
dp_stop || rc=$?
check "lb-dataplane exits 0 on SIGTERM (status $rc)" [ "$rc" = 0 ]

e2e_finish
