#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Soak: the e2e scenario for SOAK_SECONDS (600), meant for a sanitizer
# build (tools/soak builds one and runs this with it). Three lb-instance
# backends of one `http` service behind lb-dataplane on hugepages and
# lb-control; for the whole time:
#   - wrk over keep-alive connections and wrk with a new connection per
#     request;
#   - every few seconds a configuration change through lbctl (weights,
#     drain and undrain, the scheduler, http off and on, the guards);
#   - every minute lb-control restarted (SIGTERM), and be2 restarted
#     answering a share of 503s or normally again.
# At the end both daemons stop on SIGTERM with status 0, and no process
# (lb-dataplane, lb-control, lbctl, lb-instance) wrote a sanitizer report:
# no AddressSanitizer or LeakSanitizer error, no UndefinedBehaviorSanitizer
# runtime error. Reports go to $SOAK_LOG_DIR (default the run's directory,
# copied to build's meson-logs when the run fails).
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2086 # $SVC ("tcp VIP:PORT") is two words on purpose
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init soak
e2e_need_control
e2e_need_tools wrk
INSTANCE=${LB_INSTANCE:-$LB_BUILD_DIR/tools/instance/lb-instance}
[ -x "$INSTANCE" ] || e2e_skip "lb-instance is not built ($INSTANCE)"

SECS=${SOAK_SECONDS:-600}
SAN=${SOAK_LOG_DIR:-$E2E_TMP/san}
mkdir -p "$SAN"
# Every process of the run writes its reports to a file of its own;
# without a sanitizer build these variables change nothing.
export ASAN_OPTIONS="detect_leaks=1:log_path=$SAN/asan:${ASAN_OPTIONS:-}"
# DPDK's own leaks at exit are listed, and explained, in lsan.supp.
export LSAN_OPTIONS="suppressions=$E2E_DIR/lsan.supp:log_path=$SAN/lsan:${LSAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:log_path=$SAN/ubsan:${UBSAN_OPTIONS:-}"
SVC="tcp $VIP:80"

inst_opts() { echo --delay-ms 1; }

topo_up 3
for i in 1 2 3; do inst_start "$i"; done
conf=$E2E_TMP/lb.conf
conf_ports "$conf"
echo "service add $SVC http" >>"$conf"
for i in 1 2 3; do
	echo "backend add $SVC $(be_addr "$i"):80" >>"$conf"
done
dp_start_shared "$conf"
ctl_start

ip netns exec "$NS_CLI" wrk -t 1 -c 8 -d "${SECS}s" --timeout 5s \
	"http://$VIP/" >"$E2E_TMP/wrk.ka" 2>&1 &
ka_pid=$!
ip netns exec "$NS_CLI" wrk -t 1 -c 4 -d "${SECS}s" --timeout 5s \
	-H "Connection: close" "http://$VIP/" >"$E2E_TMP/wrk.close" 2>&1 &
close_pid=$!

# The changes, in turn; each leaves the service usable.
CHANGES=(
	"backend set $SVC $(be_addr 2):80 weight 3"
	"backend drain $SVC $(be_addr 3):80"
	"service set $SVC sched rr"
	"backend undrain $SVC $(be_addr 3):80"
	"service set $SVC http off"
	"service set $SVC http on sched adaptive"
	"service set $SVC err-memory 1 max-eject 50 panic 0"
	"backend set $SVC $(be_addr 2):80 weight 1"
	"service set $SVC err-memory 8 max-eject 10 panic 50"
)
t0=$SECONDS
k=0 changes=0 failed=0 restarts=0 last_restart=$SECONDS
while [ $((SECONDS - t0)) -lt $((SECS - 5)) ]; do
	sleep 3
	# shellcheck disable=SC2086 # a change is several words
	if ctl ${CHANGES[k % ${#CHANGES[@]}]} >/dev/null 2>&1; then
		changes=$((changes + 1))
	else
		failed=$((failed + 1))
	fi
	k=$((k + 1))
	if [ $((SECONDS - last_restart)) -ge 60 ]; then
		last_restart=$SECONDS
		restarts=$((restarts + 1))
		ctl_stop || true
		[ "$CTL_RC" = 0 ] || e2e_log "lb-control exited with $CTL_RC"
		ctl_start
		inst_stop 2
		if [ $((restarts % 2)) = 1 ]; then
			inst_start 2 --error-rate 0.3
		else
			inst_start 2
		fi
		e2e_log "$((SECONDS - t0)) s: $changes changes, $restarts" \
			"lb-control restarts"
	fi
done
wait "$ka_pid" "$close_pid" || true
e2e_log "wrk keep-alive: $(grep -E 'requests in|Socket errors' "$E2E_TMP/wrk.ka" |
	tr -s ' \n' ' ')"
e2e_log "wrk close: $(grep -E 'requests in|Socket errors' "$E2E_TMP/wrk.close" |
	tr -s ' \n' ' ')"
e2e_log "$changes changes applied ($failed refused), $restarts lb-control" \
	"restarts in $((SECONDS - t0)) s"

ctl_stop || true
check "lb-control exits 0 on SIGTERM (status $CTL_RC)" [ "$CTL_RC" = 0 ]
dp_stop || true
check "lb-dataplane exits 0 on SIGTERM (status $DP_RC)" [ "$DP_RC" = 0 ]
for i in 1 2 3; do inst_stop "$i"; done
check "changes were applied ($changes, none refused: $failed)" \
	'[ "$changes" -gt 0 ] && [ "$failed" = 0 ]'
check "traffic was served (keep-alive and new connections)" \
	'grep -q "requests in" "$E2E_TMP/wrk.ka" &&
	 grep -q "requests in" "$E2E_TMP/wrk.close"'
reports=$(grep -lE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" \
	"$SAN"/* 2>/dev/null || true)
for f in $reports; do
	e2e_log "sanitizer report $f:"
	head -n 40 "$f" | sed 's/^/    /'
done
check "no sanitizer report ($(echo "$reports" | grep -c . || true) files)" \
	[ -z "$reports" ]
if [ -n "$reports" ] && [ -d "$LB_BUILD_DIR/meson-logs" ]; then
	cp -r "$SAN" "$LB_BUILD_DIR/meson-logs/soak-san.$E2E_TAG"
fi
e2e_finish
