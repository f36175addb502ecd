#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The status page under load: the demo's topology (three lb-instance
# backends reporting X-SPL behind an adaptive HTTP service), wrk through
# the VIP, and one backend that starts answering 503. lb-control's
# metrics listener serves the page and its JSON; headless Chromium loads
# the page, and the rendered DOM must show the failing backend's share
# of new flows fallen and plots with points. A screenshot is kept under
# the build directory (status_page.png).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

INSTANCE=$LB_BUILD_DIR/tools/instance/lb-instance
SVC="tcp $VIP:80"
ART=$LB_BUILD_DIR/e2e-artifacts
WRK_PID=

e2e_init status_page
e2e_need_control
[ -x "$INSTANCE" ] || e2e_skip "lb-instance is not built ($INSTANCE)"
command -v curl >/dev/null || e2e_skip "curl is not installed"
command -v wrk >/dev/null || e2e_skip "wrk is not installed"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || e2e_skip "chromium is not installed (tools/setup)"

# lt X Y, gt X Y: numeric comparisons; "-" (no value) is neither.
lt() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(x != "-" && x + 0 < y + 0) }'; }
gt() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(x != "-" && x + 0 > y + 0) }'; }

page() {
	ip netns exec "$NS_LB" curl -sS --max-time 5 "$@"
}

# share_of BACKEND: the latest share of new flows of BACKEND in the
# series ("-" while there is none).
share_of() {
	page "http://$CTL_METRICS/api/v1/series" >"$E2E_TMP/series.json" ||
		true
	jq_get "$E2E_TMP/series.json" "[v for v in [b for s in d['services'] for b in s['backends'] if b['backend'] == '$1'][0]['share'] if v is not None][-1]"
}

# share_wait lt|gt LIMIT SECONDS: be2's latest share once it compares so
# with LIMIT, or the last one read when SECONDS passed.
share_wait() {
	local v=- i
	for ((i = 0; i < $3 * 10; i++)); do
		v=$(share_of "$(be_addr 2):80")
		"$1" "$v" "$2" && break
		sleep 0.1
	done
	echo "$v"
}

# The browser renders the page in the LB namespace, where the listener is.
browse() {
	ip netns exec "$NS_LB" timeout 90 "$CHROMIUM" --headless --no-sandbox \
		--disable-gpu --disable-dev-shm-usage --no-first-run \
		--user-data-dir="$E2E_TMP/chromium" --window-size=1280,2400 \
		--virtual-time-budget=5000 "$@" "http://$CTL_METRICS/" \
		2>>"$E2E_TMP/chromium.log"
}

topo_up 3
inst_start 1 --bench-ms 10 --delay-ms 2
inst_start 2 --bench-ms 10 --delay-ms 4
inst_start 3 --bench-ms 10 --delay-ms 6
conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<CONF
service add $SVC sched adaptive http
backend add $SVC $(be_addr 1):80
backend add $SVC $(be_addr 2):80
backend add $SVC $(be_addr 3):80
CONF
dp_start_shared "$conf"
ctl_start

# ---- the page, its files and its JSON, read-only -------------------------
head=$(page -D - -o "$E2E_TMP/index.html" "http://$CTL_METRICS/")
check "GET / is the page" grep -q '<title>Sluice status' "$E2E_TMP/index.html"
check "the page keeps to its own server" \
	grep -qi "^Content-Security-Policy: default-src 'self'" <<<"$head"
check "the page's script is served" \
	bash -c "ip netns exec '$NS_LB' curl -sSf 'http://$CTL_METRICS/status.js' | grep -q /api/v1/"
page "http://$CTL_METRICS/api/v1/status" >"$E2E_TMP/status.json"
check "/api/v1/status lists the service" \
	[ "$(jq_get "$E2E_TMP/status.json" "d['services']['services'][0]['service']")" = "$SVC" ]
check "/api/v1/status lists the 3 backends" \
	[ "$(jq_get "$E2E_TMP/status.json" "len(d['backends']['backends'])")" = 3 ]
check "/api/v1/status has the dataplane's counters" \
	[ "$(jq_get "$E2E_TMP/status.json" "'dataplane' in d['stats']")" = True ]
code=$(page -o /dev/null -w '%{http_code}' -X POST \
	"http://$CTL_METRICS/api/v1/status" || true)
check "POST is refused (405, got $code)" [ "$code" = 405 ]
code=$(page -o /dev/null -w '%{http_code}' \
	"http://$CTL_METRICS/api/v1/nothing" || true)
check "an unknown view is 404 (got $code)" [ "$code" = 404 ]
code=$(page -o /dev/null -w '%{http_code}' \
	"http://$CTL_METRICS/api/v1/series?since=soon" || true)
check "a since that is not a number is 400 (got $code)" [ "$code" = 400 ]
metrics >"$E2E_TMP/metrics.txt"
check "the refusals are counted in /metrics" \
	'grep -q "^lb_control_http_bad_method_total 1$" "$E2E_TMP/metrics.txt" &&
	 grep -q "^lb_control_http_not_found_total 1$" "$E2E_TMP/metrics.txt" &&
	 grep -q "^lb_control_http_bad_request_total 1$" "$E2E_TMP/metrics.txt"'

# ---- load, then be2 fails -------------------------------------------------
ip netns exec "$NS_CLI" wrk -t2 -c16 -d60s -H "Connection: close" \
	"http://$VIP/" >"$E2E_TMP/wrk.log" 2>&1 &
WRK_PID=$!
before=$(share_wait gt 0.15 15)
e2e_log "be2's share of new flows under load: $before"
check "be2 takes its share while healthy ($before)" gt "$before" 0.15

inst_stop 2
inst_start 2 --bench-ms 10 --delay-ms 4 --error-rate 1
after=$(share_wait lt 0.08 30)
e2e_log "be2's share of new flows once failing: $after"
check "be2's share falls once it fails ($after)" lt "$after" 0.08

# The page asks for the new samples only: after the newest it holds,
# one or two, every service and backend still listed.
page "http://$CTL_METRICS/api/v1/series" >"$E2E_TMP/all.json"
na=$(jq_get "$E2E_TMP/all.json" "len(d['t_ms'])")
t=$(jq_get "$E2E_TMP/all.json" "d['t_ms'][-1]")
page "http://$CTL_METRICS/api/v1/series?since=$t" >"$E2E_TMP/new.json"
n=$(jq_get "$E2E_TMP/new.json" "len(d['t_ms'])")
nb=$(jq_get "$E2E_TMP/new.json" "len(d['services'][0]['backends'][1]['share'])")
check "?since=T: of $na samples, those after T only ($n), each series as long ($nb)" \
	'[ "$na" -ge 3 ] && [ "$n" -le 2 ] && [ "$n" = "$nb" ]'
check "?since=0: the whole history" \
	[ "$(page "http://$CTL_METRICS/api/v1/series?since=0" |
		"$PY" -c 'import json, sys; print(len(json.load(sys.stdin)["t_ms"]))')" -ge "$na" ]

# ---- what a browser shows -------------------------------------------------
# dom_verdict: the page as chromium renders it now, judged into dom.txt.
dom_verdict() {
	browse --dump-dom >"$E2E_TMP/dom.html" || true
	"$PY" - "$E2E_TMP/dom.html" "$(be_addr 2):80" "$SVC" >"$E2E_TMP/dom.txt" \
		2>&1 <<-'PYEOF' || true
	import html.parser, sys
	
	path, failing, svc = sys.argv[1], sys.argv[2], sys.argv[3]
	rows, plots, services = {}, {}, []
	
	class P(html.parser.HTMLParser):
	    def handle_starttag(self, tag, attrs):
	        a = dict(attrs)
	        if tag == "tr" and "be" in a.get("class", "").split():
	            rows[a["data-backend"]] = a
	        if tag == "svg" and "plot" in a.get("class", "").split():
	            plots.setdefault(a["data-metric"], []).append(
	                int(a.get("data-points", "0")))
	        if tag == "div" and "data-service" in a:
	            services.append(a["data-service"])
	
	P().feed(open(path).read())
	print("services", services)
	print("rows", {k: (v.get("data-state"), v.get("data-health"),
	                   v.get("data-share"), v.get("class")) for k, v in rows.items()})
	print("plots", plots)
	ok = svc in services and len(rows) == 3 and failing in rows
	r = rows.get(failing, {})
	share = float(r.get("data-share") or 1)
	ok = ok and (r.get("data-health") == "down" or share < 0.08)
	# It is marked as failing, and the others are not.
	ok = ok and all(("failing" in v.get("class", "").split()) == (k == failing)
	                for k, v in rows.items())
	ok = ok and all(max(plots.get(m, [0])) > 0
	                for m in ("share", "errors_per_s", "flows_per_s", "spl"))
	print("verdict", "ok" if ok else "bad")
PYEOF
}
# The page shows the latest sample, and a failing backend's share moves
# as the scheduler probes it: a few loads, a second apart, until one
# shows the state, rather than one snapshot.
for try in 1 2 3 4 5; do
	dom_verdict
	! grep -q '^verdict ok' "$E2E_TMP/dom.txt" || break
	sleep 1
done
e2e_log "the page judged on load $try"
mkdir -p "$ART"
browse --screenshot="$ART/status_page.png" >/dev/null || true
kill "$WRK_PID" 2>/dev/null || true
wait "$WRK_PID" 2>/dev/null || true
WRK_PID=
e2e_log "screenshot: $ART/status_page.png"
check "chromium saved a screenshot" [ -s "$ART/status_page.png" ]
sed 's/^/    /' "$E2E_TMP/dom.txt"
check "the rendered page shows be2 failing, and plots with points" \
	grep -q '^verdict ok' "$E2E_TMP/dom.txt"

ctl_stop TERM
dp_stop
e2e_finish
