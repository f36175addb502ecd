#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# lb-instance end to end on 127.0.0.1, without root: instances on
# ephemeral ports, checked with curl, a python3 client that writes raw
# bytes (instance_client.py) and wrk. Prints TAP.
#
#   instance_test.sh LB_INSTANCE INSTANCE_CLIENT_PY
set -u

bin=${1:?lb-instance binary}
client=${2:?instance_client.py}
py=/usr/bin/python3
tmp=$(mktemp -d)
declare -A pid port
n=0
failed=0

cleanup() {
	for p in "${pid[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}

not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $*"
}

diag() {
	sed 's/^/# /'
}

# check DESCRIPTION COMMAND...: ok when the command succeeds. It runs in
# this shell (not a subshell), so that it can wait for the instances.
check() {
	local desc=$1 rc=0
	shift
	"$@" >"$tmp/out" 2>&1 || rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "$desc"
	else
		not_ok "$desc"
	fi
	diag <"$tmp/out"
	return 0
}

# start NAME ARGS...: runs an instance on an ephemeral port and waits for
# its startup line.
start() {
	local name=$1 line=
	shift
	"$bin" --listen 127.0.0.1:0 --name "$name" "$@" \
		2>"$tmp/$name.err" &
	pid[$name]=$!
	for _ in $(seq 100); do
		line=$(grep -m1 ' listening on ' "$tmp/$name.err" 2>/dev/null)
		[ -n "$line" ] && break
		sleep 0.05
	done
	port[$name]=$(printf '%s\n' "$line" |
		sed -n 's/.* listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p')
	if [ -z "${port[$name]}" ]; then
		not_ok "start $name"
		diag <"$tmp/$name.err"
		return 1
	fi
	return 0
}

# stop NAME: SIGTERM, then the exit status must be 0.
stop() {
	local name=$1 rc
	kill -TERM "${pid[$name]}" 2>/dev/null
	wait "${pid[$name]}"
	rc=$?
	unset "pid[$name]"
	[ "$rc" -eq 0 ] || {
		echo "exit status $rc"
		cat "$tmp/$name.err"
	}
	[ "$rc" -eq 0 ]
}

url() {
	echo "http://127.0.0.1:${port[$1]}${2:-/}"
}

pycheck() {
	"$py" "$client" "$@"
}

# ---- a plain instance ----
start plain --threads 2 || exit 1
check "startup line names the instance and its address" \
	grep -q '^lb-instance: plain listening on 127\.0\.0\.1:[0-9]* (threads 2' \
	"$tmp/plain.err"
check "GET: body, X-Instance, X-SPL, Date, kept alive" \
	pycheck basic "${port[plain]}" plain

curl_get() {
	local out
	out=$(curl -sS -D - "$(url plain)") || return 1
	printf '%s\n' "$out" | grep -qi '^x-spl: [0-9]*\.[0-9]*' &&
		printf '%s\n' "$out" | grep -qi '^x-spl-time: [0-9]*' &&
		printf '%s\n' "$out" | grep -qi '^x-instance: plain' &&
		printf '%s\n' "$out" | tail -n1 | grep -qx plain
}
check "curl GET" curl_get

curl_keepalive() {
	local err
	err=$(curl -sS -v -o /dev/null -o /dev/null "$(url plain /a)" \
		"$(url plain /b)" 2>&1) || return 1
	printf '%s\n' "$err" | grep -q 'Re-using existing connection'
}
check "curl keeps the connection alive across two requests" curl_keepalive

curl_head() {
	local out
	out=$(curl -sS -I --max-time 3 "$(url plain)") || return 1
	printf '%s\n' "$out" | grep -qi '^content-length: 6' &&
		[ "$(curl -sS --head --max-time 3 -o /dev/null -w '%{size_download}' \
			"$(url plain)")" = 0 ]
}
check "curl HEAD: Content-Length, no content" curl_head

curl_close() {
	curl -sS -v -o /dev/null -H 'Connection: close' "$(url plain)" \
		2>&1 | grep -qi '^< connection: close'
}
check "curl Connection: close is answered with close" curl_close
check "HTTP corners: close, 1.0, bodies, chunked, 100-continue, errors" \
	pycheck http "${port[plain]}"

wrk_run() {
	local out rps
	out=$(wrk -t2 -c32 -d2s "$(url plain)" 2>&1) || {
		echo "$out"
		return 1
	}
	echo "$out"
	rps=$(printf '%s\n' "$out" | sed -n 's/^Requests\/sec: *//p')
	echo "wrk: $rps requests/s"
	! printf '%s\n' "$out" | grep -q -e 'Socket errors' -e 'Non-2xx' &&
		[ -n "$rps" ]
}
if command -v wrk >/dev/null; then
	check "wrk 2 s, 32 connections: no errors" wrk_run
else
	echo "ok $((n += 1)) - wrk # SKIP wrk not installed"
fi
check "plain exits 0 on SIGTERM" stop plain

# ---- SPL against delay and benchmark ----
start slow --delay-ms 50 --bench-ms 10 || exit 1
check "X-SPL ~ delay/bench, X-SPL-Time ~ now" \
	pycheck spl "${port[slow]}" 50 10
check "3 pipelined requests in one write: in order, SPL counts queueing" \
	pycheck pipeline "${port[slow]}" 50 10
check "slow exits 0 on SIGTERM" stop slow

start nospl --spl off || exit 1
check "--spl off: no X-SPL" pycheck no-spl "${port[nospl]}"
check "nospl exits 0" stop nospl

start orca --orca --cpu-us 2000 || exit 1
check "--orca: endpoint-load-metrics TEXT with its CPU use and rate" \
	pycheck orca "${port[orca]}" 2000
check "orca exits 0" stop orca

# ---- errors, shedding, stall ----
start err --error-rate 0.2 --seed 7 || exit 1
check "--error-rate 0.2: 503 share over 1000 requests" \
	pycheck error-rate "${port[err]}" 0.2 1000
check "record the 503 sequence of seed 7" \
	pycheck sequence "${port[err]}" 200 "$tmp/seq7"
stop err
start err2 --error-rate 0.2 --seed 7 || exit 1
# The first 1000 draws went to the share check above: skip them again.
pycheck error-rate "${port[err2]}" 0.2 1000 >/dev/null
check "same seed, same 503 sequence" \
	pycheck sequence "${port[err2]}" 200 "$tmp/seq7"
stop err2
start err3 --error-rate 0.2 --seed 8 || exit 1
pycheck error-rate "${port[err3]}" 0.2 1000 >/dev/null
check "another seed, another sequence" \
	pycheck sequence-differs "${port[err3]}" 200 "$tmp/seq7"
stop err3

start shed --delay-ms 300 --max-inflight 2 || exit 1
check "--max-inflight 2: 4 at once give 2 x 200 and 2 x 503" \
	pycheck max-inflight "${port[shed]}" 4 2
check "shed exits 0" stop shed

start stall --stall --drain-ms 500 || exit 1
curl_stall() {
	local rc=0
	curl -sS -o /dev/null --max-time 1 "$(url stall)" 2>/dev/null || rc=$?
	[ "$rc" -eq 28 ] || echo "curl exit $rc, want 28 (timeout)"
	[ "$rc" -eq 28 ]
}
check "--stall: curl times out" curl_stall
check "SIGUSR1 releases the stall and sets it again" \
	pycheck stall "${port[stall]}" "${pid[stall]}"
check "stalled instance exits 0 on SIGTERM after --drain-ms" stop stall

# ---- graceful stop ----
start term --delay-ms 400 || exit 1
check "SIGTERM: request in flight answered, new connections refused" \
	pycheck sigterm "${port[term]}" "${pid[term]}" 400
term_exit() {
	local rc
	wait "${pid[term]}"
	rc=$?
	unset "pid[term]"
	[ "$rc" -eq 0 ] || echo "exit status $rc"
	grep -q 'term stopped after' "$tmp/term.err" && [ "$rc" -eq 0 ]
}
check "term exits 0 after answering" term_exit

bad_args() {
	local rc=0
	"$bin" --listen 127.0.0.1:0 --error-rate 2 2>/dev/null || rc=$?
	[ "$rc" -eq 2 ] || return 1
	rc=0
	"$bin" 2>/dev/null || rc=$?
	[ "$rc" -eq 2 ] || return 1
	rc=0
	"$bin" --listen 256.0.0.1:80 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ]
}
check "bad options exit 2, a bad address 1" bad_args

echo "1..$n"
[ "$failed" -eq 0 ]
