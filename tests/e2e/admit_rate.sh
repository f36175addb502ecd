#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Admission control on the new-flow path, two workers on AF_PACKET ports
# with one queue pair each (flows spread by the kernel's fanout hash):
#   - a service limited to R new connections/s (admit-key svc, rejected
#     SYNs answered with a RST), offered 3R/s for 10 s by a real TCP
#     client, admits R within 5% (burst included) whichever worker gets
#     the SYN; both workers admitted some; lbctl's verdicts agree with
#     what the client saw; /metrics and `stats --json` show them;
#   - per-client keys: on a second VIP with admit-key client, a noisy
#     client at 5x its limit gets its limit, while a quiet client under
#     its own limit has every connection admitted at the same time;
#   - admit-reject drop: rejected SYNs get no answer (the client times out).
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admit_lib.sh"

e2e_init admit_rate
e2e_need_control

R=${E2E_ADMIT_RATE:-200}   # service limit, new connections/s
RC=${E2E_ADMIT_CLIENT:-60} # per-client limit
SECS=10
VIP2=$CLI_NET.101

topo_up 1 2
be_start 1
conf=$E2E_TMP/lb.conf
conf_ports "$conf"
cat >>"$conf" <<EOF
service add tcp $VIP:80 admit-rate $R admit-reject rst
backend add tcp $VIP:80 $(be_addr 1):80
service add tcp $VIP2:80 admit-rate $RC admit-burst $((RC / 2)) admit-key client admit-reject rst
backend add tcp $VIP2:80 $(be_addr 1):80
EOF
LB_EAL_LCORES='0@0,1@1,2@0' LB_AFP_ARGS=',qpairs=2' dp_start_shared "$conf"
ctl_start

# ---- one limit over two workers ----
rt0=$(syn_retrans)
admit_gen "$(cli_addr 1)" "$VIP:80" $((3 * R)) "$SECS" "$E2E_TMP/g1"
rt=$(($(syn_retrans) - rt0))
e2e_log "svc key, $((3 * R))/s offered for ${SECS}s: $(cat "$E2E_TMP/g1")," \
	"$rt SYN(s) sent again"
adm=$(jf "$E2E_TMP/g1" ok)
to=$(jf "$E2E_TMP/g1" timeout)
# An attempt times out only when none of its SYNs got an answer: on a
# starved host (the backend's too), never with the client's SYNs unsent.
check "svc key: every other attempt refused with a RST ($to timed out, $rt SYN(s) sent again)" \
	'[ "$(jf "$E2E_TMP/g1" refused)" = $(($(jf "$E2E_TMP/g1" attempts) - adm - to)) ] &&
	 [ "$to" -le "$rt" ]'
ctl_json "$E2E_TMP/show1" service show tcp "$VIP:80"
pass=$(jq_get "$E2E_TMP/show1" 'd["service"]["admit"]["verdicts"]["pass"]')
rej=$(jq_get "$E2E_TMP/show1" 'sum(v for k, v in d["service"]["admit"]["verdicts"].items() if k != "pass")')
e2e_log "lbctl service show: pass $pass, rejected $rej"
# The rate is the dataplane's verdicts: a flow admitted may still fail
# to connect when a starved backend drops its SYNs.
check "svc key: $pass admitted, within 5% of $((R * SECS))" \
	within "$pass" $((R * SECS)) 5
# Each SYN that reached the dataplane got one verdict; a SYN sent again
# may have got one more, without the client seeing a second answer.
att=$(($(jf "$E2E_TMP/g1" attempts) - to))
check "lbctl: passed = admitted by the client ($pass = $adm, $rt SYN(s) sent again)" \
	'[ "$pass" -ge "$adm" ] && [ "$pass" -le $((adm + rt)) ]'
check "lbctl: a verdict for each answered attempt ($((pass + rej)) = $att, $rt SYN(s) sent again)" \
	'[ $((pass + rej)) -ge "$att" ] && [ $((pass + rej)) -le $((att + rt)) ]'
ctl_json "$E2E_TMP/stats1" stats
w0=$(jq_get "$E2E_TMP/stats1" 'd["workers"][0]["admit"]["svc_pass"]')
w1=$(jq_get "$E2E_TMP/stats1" 'd["workers"][1]["admit"]["svc_pass"]')
e2e_log "admitted per worker: $w0 $w1"
check "both workers admitted new flows from the one bucket" \
	'[ "$w0" -gt 0 ] && [ "$w1" -gt 0 ]'
# grep reads the whole page: with -q it would stop at the match and curl,
# still writing, would fail the pipeline.
check "/metrics: lb_service_admissions_total pass = $pass" \
	'metrics | grep "^lb_service_admissions_total{service=\"tcp $VIP:80\",verdict=\"pass\"} $pass\$" >/dev/null'

# ---- per-client keys: a noisy client does not starve a quiet one ----
admit_gen "$(cli_addr 1)" "$VIP2:80" $((5 * RC)) 5 "$E2E_TMP/noisy" &
noisy_pid=$!
admit_gen "$(cli_addr 2)" "$VIP2:80" $((RC / 2)) 5 "$E2E_TMP/quiet"
wait "$noisy_pid"
e2e_log "noisy client at $((5 * RC))/s: $(cat "$E2E_TMP/noisy")"
e2e_log "quiet client at $((RC / 2))/s: $(cat "$E2E_TMP/quiet")"
# Its bucket starts full: the rate for 5 s and one burst. The burst of
# half a second lets the quiet client's connections through when the
# generator, descheduled on a busy host, sends several at once.
check "client key: noisy client admitted within 5% of $((RC * 5 + RC / 2))" \
	within "$(jf "$E2E_TMP/noisy" ok)" $((RC * 5 + RC / 2)) 5
check "client key: every connection of the quiet client admitted" \
	'[ "$(jf "$E2E_TMP/quiet" ok)" = "$(jf "$E2E_TMP/quiet" attempts)" ]'

# ---- drop mode: no answer at all ----
ctl_do service set tcp "$VIP:80" admit-reject drop admit-rate 10 \
	admit-burst 1
sleep 1
admit_gen "$(cli_addr 1)" "$VIP:80" 100 2 "$E2E_TMP/g3"
e2e_log "drop mode, 10/s limit, 100/s offered for 2s: $(cat "$E2E_TMP/g3")"
check "drop mode: nothing refused, the rejected SYNs time out" \
	'[ "$(jf "$E2E_TMP/g3" refused)" = 0 ] && [ "$(jf "$E2E_TMP/g3" timeout)" -gt 100 ]'
check "drop mode: about 10/s admitted (10..40 in 2 s)" \
	'[ "$(jf "$E2E_TMP/g3" ok)" -ge 10 ] && [ "$(jf "$E2E_TMP/g3" ok)" -le 40 ]'

e2e_finish
