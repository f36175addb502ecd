#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Admission control of new flows on an IPv6 service (fnat66), keyed by
# the client's /64 (admit-key prefix, admit-prefix6 at its default):
#   - two addresses of one /64, a noisy one at 5x the limit and a quiet
#     one, share one bucket: together they get no more than the limit
#     (the rate while SYNs come, and the burst), the quiet one is
#     throttled too, and the refused SYNs are dropped (the attempts time
#     out, none is answered with a RST);
#   - at the same time a client in another /64 (routed through the
#     client host), under the limit, has every connection admitted;
#   - lbctl's verdicts of the service agree with what the clients saw;
#   - with admit-reject rst the refused SYNs are answered with a RST
#     (the client's attempts are refused, none times out).
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admit_lib.sh"

e2e_init admit6
e2e_need_control

RC=${E2E_ADMIT_CLIENT:-40} # per-/64 limit, new connections/s
SECS=5
EP6="[$VIP6]:80"
OTHER_NET6=2001:db8:13 # a client /64 behind the client host
A1=$(cli_addr6 1)      # ::2
A2=$(cli_addr6 2)      # ::3, the same /64
B1=$OTHER_NET6::2

topo_up 1
v6_on "$NS_CLI" "$IF_CLI" "$A1/64"
for a in "$A2/64" "$B1/64"; do
	ip -n "$NS_CLI" addr add "$a" dev "$IF_CLI" nodad
done
be6_start 1

conf=$E2E_TMP/lb.conf
conf_ports6 "$conf"
cat >>"$conf" <<EOF
route add $OTHER_NET6::/64 via $A1 port 0
service add tcp $EP6 admit-rate $RC admit-burst $((RC / 2)) admit-key prefix
backend add tcp $EP6 [$(be_addr6 1)]:80
EOF
dp_start_shared "$conf"
ctl_start
# ---- one /64, one bucket; another /64, its own ----
admit_gen "$A1" "$EP6" $((5 * RC)) "$SECS" "$E2E_TMP/noisy" &
noisy_pid=$!
admit_gen "$A2" "$EP6" $((RC / 2)) "$SECS" "$E2E_TMP/same64" &
same_pid=$!
admit_gen "$B1" "$EP6" $((RC / 2)) "$SECS" "$E2E_TMP/other64"
wait "$noisy_pid" "$same_pid"
for g in noisy same64 other64; do
	e2e_log "$g: $(cat "$E2E_TMP/$g")"
done
ok1=$(($(jf "$E2E_TMP/noisy" ok) + $(jf "$E2E_TMP/same64" ok)))
# A dropped SYN is sent again once, a second later, and may be admitted
# then: the bucket's refill runs as long as SYNs come, which the
# generator's run time (its last timeout included) bounds.
most=$(awk -v r="$RC" -v s="$(jf "$E2E_TMP/noisy" seconds)" \
	'BEGIN { printf "%d", r * s + r / 2 }')
least=$((RC * SECS * 9 / 10))
check "one /64: $ok1 admitted to its two addresses, $least..$most (one bucket)" \
	'[ "$ok1" -ge "$least" ] && [ "$ok1" -le "$most" ]'
check "one /64: the quiet address is throttled with the noisy one" \
	'[ "$(jf "$E2E_TMP/same64" ok)" -lt "$(jf "$E2E_TMP/same64" attempts)" ]'
check "refused SYNs are dropped: no RST, the attempts time out" \
	'[ "$(jf "$E2E_TMP/noisy" refused)" = 0 ] &&
	 [ "$(jf "$E2E_TMP/noisy" timeout)" -gt 0 ]'
check "another /64: every connection admitted" \
	'[ "$(jf "$E2E_TMP/other64" ok)" = "$(jf "$E2E_TMP/other64" attempts)" ] &&
	 [ "$(jf "$E2E_TMP/other64" ok)" -gt 0 ]'

# ---- lbctl ----
ctl_json "$E2E_TMP/show" service show tcp "$EP6"
pass=$(jq_get "$E2E_TMP/show" 'd["service"]["admit"]["verdicts"]["pass"]')
rej=$(jq_get "$E2E_TMP/show" 'sum(v for k, v in d["service"]["admit"]["verdicts"].items() if k != "pass")')
adm=$((ok1 + $(jf "$E2E_TMP/other64" ok)))
e2e_log "lbctl service show: pass $pass, rejected $rej; clients: $adm admitted"
check "lbctl: passed >= admitted by the clients ($pass >= $adm)" \
	'[ "$pass" -ge "$adm" ]'
check "lbctl: refusals counted ($rej)" '[ "$rej" -gt 0 ]'
check "lbctl service show: key prefix, admit-prefix6 64" \
	'[ "$(jq_get "$E2E_TMP/show" "d[\"service\"][\"admit\"][\"key\"]")" = prefix ] &&
	 [ "$(jq_get "$E2E_TMP/show" "d[\"service\"][\"admit\"][\"prefix6\"]")" = 64 ]'

ctl_do service show tcp "$EP6" >"$E2E_TMP/show.txt"
check "lbctl service show: the key is the /64" \
	'grep -q "key prefix/64," "$E2E_TMP/show.txt"'

# ---- admit-reject rst ----
ctl_do service set tcp "$EP6" admit-reject rst admit-rate 10 admit-burst 1
sleep 1
admit_gen "$A1" "$EP6" 100 2 "$E2E_TMP/rst"
e2e_log "rst mode, 10/s, 100/s offered for 2 s: $(cat "$E2E_TMP/rst")"
check "rst mode: refused attempts get a RST, none times out" \
	'[ "$(jf "$E2E_TMP/rst" refused)" -gt 100 ] &&
	 [ "$(jf "$E2E_TMP/rst" timeout)" = 0 ]'
check "rst mode: about 10/s admitted (10..40 in 2 s)" \
	'[ "$(jf "$E2E_TMP/rst" ok)" -ge 10 ] && [ "$(jf "$E2E_TMP/rst" ok)" -le 40 ]'

e2e_finish
