#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Error feedback that a client can provoke: four lb-instance backends of
# one `http` service; three of them answer 500 to every request under
# /fail (--error-path), the fourth answers it normally. An attacker keeps
# wrk hammering /fail while a legitimate client requests /, both with a
# new connection per request (so that the scheduler spreads both):
#   - guards off (max-eject 100, panic 0): the attack works, the three
#     pile up errors and lose far more than one backend's fair share of
#     the legitimate client's new connections (the control phase);
#   - max-eject 25 (one backend of four), panic off: the share taken out
#     of rotation, sum over backends of max(0, fair - share), stays within
#     one backend's fair share;
#   - the defaults (panic 50): three of four look unhealthy, so picks are
#     even again;
#   - in every phase the legitimate client sees no failure at all.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2086 # $SVC ("tcp VIP:PORT") is two words on purpose
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init l7_feedback_guard
e2e_need_control
e2e_need_tools wrk
INSTANCE=${LB_INSTANCE:-$LB_BUILD_DIR/tools/instance/lb-instance}
[ -x "$INSTANCE" ] || e2e_skip "lb-instance is not built ($INSTANCE)"

SECS=${E2E_GUARD_SECONDS:-4}
N=4
FAIR=0.25
SVC="tcp $VIP:80"

inst_opts() { echo --delay-ms 1; }

# lost FILE0 FILE1: "LOST N S1 S2 S3 S4", the share of new connections
# taken out of rotation (sum of max(0, fair - share)), how many new
# connections that is, and each share.
lost() {
	"$PY" -B -c '
import json, sys
a, b = (json.load(open(f))["backends"] for f in sys.argv[1:3])
ft = lambda l: {x["backend"]: x["flows_total"] for x in l}
fa, fb = ft(a), ft(b)
keys = sorted(fb)
d = [fb[k] - fa.get(k, 0) for k in keys]
tot = sum(d)
sh = [x / tot if tot else 0 for x in d]
fair = 1.0 / len(keys)
print("%.3f %d %s" % (sum(max(0, fair - s) for s in sh), tot,
                      " ".join("%.3f" % s for s in sh)))
' "$@"
}

# phase NAME: the attack and the legitimate client together; prints
# "LOST N S1..S4" and leaves the legitimate client's summary in NAME.sum.
phase() {
	local name=$1 apid
	ip netns exec "$NS_CLI" wrk -t 1 -c 12 -d "$((SECS + 3))s" \
		--timeout 2s -H "Connection: close" "http://$VIP/fail/x" \
		>"$E2E_TMP/$name.atk" 2>&1 &
	apid=$!
	sleep 1.5 # the attacker's connections are open and failing
	ctl_json "$E2E_TMP/$name.0" backend list
	ip netns exec "$NS_CLI" wrk -t 1 -c 4 -d "${SECS}s" --timeout 10s \
		-H "Connection: close" "http://$VIP/" >"$E2E_TMP/$name.wrk" \
		2>&1 || true
	ctl_json "$E2E_TMP/$name.1" backend list
	wait "$apid" || true
	awk '
/requests in/ { req = $1 }
/Socket errors:/ { gsub(",", ""); se = $4 + $6 + $8 + $10 }
/Non-2xx or 3xx responses:/ { non = $NF }
END { printf "requests=%d socket_errors=%d non2xx=%d\n", req, se, non }
' "$E2E_TMP/$name.wrk" >"$E2E_TMP/$name.sum"
	lost "$E2E_TMP/$name.0" "$E2E_TMP/$name.1"
}

# legit_ok NAME: the legitimate client's requests all succeeded.
legit_ok() {
	check "$1: the legitimate client saw no failure ($(cat "$E2E_TMP/$1.sum"))" \
		"grep -q 'socket_errors=0 non2xx=0' '$E2E_TMP/$1.sum' &&
		 ! grep -q 'requests=0 ' '$E2E_TMP/$1.sum'"
}

topo_up $N
for i in 1 2 3; do inst_start "$i" --error-path /fail; done
inst_start 4
conf=$E2E_TMP/lb.conf
conf_ports "$conf"
echo "service add $SVC http max-eject 100 panic 0" >>"$conf"
for i in $(seq 1 $N); do
	echo "backend add $SVC $(be_addr "$i"):80" >>"$conf"
done
dp_start_shared "$conf"
ctl_start

read -r off n_off s_off <<<"$(phase off)"
e2e_log "guards off: taken out of rotation $off (shares $s_off of $n_off)"
legit_ok off
check "guards off: the attack takes more than one backend's share ($off > $FAIR)" \
	"awk -v l='$off' -v f='$FAIR' 'BEGIN { exit !(l > f + 0.1) }'"

ctl_do service set $SVC max-eject 25
read -r cap n_cap s_cap <<<"$(phase cap)"
e2e_log "max-eject 25: taken out of rotation $cap (shares $s_cap of $n_cap)"
legit_ok cap
# One backend of four may be weighed down: at most its fair share, plus
# the sampling noise of N random picks. Even picks leave on average
# 0.69/sqrt(N) out of rotation by chance alone (half the sum of four
# folded normals of deviation sqrt(3/16/N)); 2/sqrt(N), about three
# times that, is a margin chance alone does not reach, and it stays well
# below the 0.6 or more that an attack which works takes out.
noise() { awk -v n="$1" 'BEGIN { printf "%.3f", 2 / sqrt(n > 0 ? n : 1) }'; }
check "max-eject 25: at most one backend's share out of rotation ($cap <= $FAIR + $(noise "$n_cap"))" \
	"awk -v l='$cap' -v f='$FAIR' -v e='$(noise "$n_cap")' 'BEGIN { exit !(l <= f + e) }'"

ctl_do service set $SVC max-eject 10 panic 50
read -r pan n_pan s_pan <<<"$(phase panic)"
e2e_log "defaults (panic 50): taken out of rotation $pan (shares $s_pan of $n_pan)"
legit_ok panic
# The phase starts from the weights the max-eject phase left (one backend
# held down) and the three errors' counts build up again before they
# pass the panic threshold: for that first part of the phase the picks
# still favour the healthy backend. Even after it is what is judged: a
# tenth of the picks for the transition, plus the sampling noise, far
# below the 0.4 or more that guards off take out.
PANIC_SETTLE=${E2E_PANIC_SETTLE:-0.1}
if [ "$n_pan" -ge 20 ]; then
	check "panic: three of four unhealthy spreads evenly ($pan <= $PANIC_SETTLE + $(noise "$n_pan"))" \
		"awk -v l='$pan' -v t='$PANIC_SETTLE' -v e='$(noise "$n_pan")' 'BEGIN { exit !(l <= t + e) }'"
else
	e2e_log "panic: $n_pan new flows counted, too few to judge the spread"
fi

ctl_stop
dp_stop
e2e_finish
