#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# IPv6 in lb-control's configuration, against a running dataplane:
#   - a dual-stack half added with lbctl (IPv6 local and SNAT addresses,
#     an IPv6 default route, an IPv6 service with two IPv6 backends) is
#     published: the table's generation moves on, the
#     dataplane keeps running and the IPv4 service still answers;
#   - `service list`, `backend list`, `addr list`, `route list`,
#     `snat list` and /metrics write the IPv6 addresses in RFC 5952 form,
#     bracketed before a port;
#   - bad IPv6 input is refused with its one line and changes nothing;
#   - `save` and the state file hold the IPv6 lines, and a restarted
#     lb-control restores the same configuration from the state file.
# Whether the dataplane forwards IPv6 is other tests' business.
# shellcheck disable=SC2016 # check evaluates its quoted conditions
# shellcheck disable=SC2086 # $SVC ("tcp VIP:PORT") is two words on purpose
# shellcheck disable=SC2119 # ctl_start and ctl_stop take optional arguments
set -euo pipefail
. "$(dirname "$0")/lib.sh"

e2e_init control_ip6
e2e_need_control

SVC="tcp $VIP:80"
BE1=$(be_addr 1):80
SVC6="tcp [2001:db8:e6:ff::10]:443"

topo_up 1
be_start 1
conf=$E2E_TMP/lb.conf
conf_ports "$conf"
dp_start_shared "$conf"
ctl_start
ctl_do service add $SVC sched rr >/dev/null
ctl_do backend add $SVC "$BE1" >/dev/null
vip_wait 20 >/dev/null
gen0=$(tel /lb/stats -k conf_gen)

ctl_do addr add 2001:db8:e6::1/64 port 0 >/dev/null
ctl_do addr add 2001:DB8:E6:1:0::1/64 port 1 >/dev/null
ctl_do route add ::/0 via 2001:db8:e6::fe port 0 >/dev/null
ctl_do snat add 2001:db8:e6:1::10 port 1 >/dev/null
ctl_do service add $SVC6 sched maglev >/dev/null
ctl_do backend add $SVC6 "[2001:db8:e6:1::11]:8443" weight 2 >/dev/null
ctl_do backend add $SVC6 "[2001:db8:e6:1::12]:8443" >/dev/null
for _ in $(seq 100); do
	gen1=$(tel /lb/stats -k conf_gen)
	[ "$gen1" -gt "$gen0" ] && break
	sleep 0.2
done
e2e_log "table generation $gen0 -> $gen1"
check "the IPv6 half is published (table generation $gen0 -> $gen1)" \
	'[ "$gen1" -gt "$gen0" ]'
check "the dataplane runs on, the IPv4 service answers" vip_wait 20

# ---- what lbctl and /metrics show -------------------------------------------

check "service list names the IPv6 service" \
	'ctl service list | has -F "$SVC6"'
check "backend list: the IPv6 backend, bracketed" \
	'ctl backend list $SVC6 | has -F "[2001:db8:e6:1::11]:8443"'
check "backend list: both IPv6 backends of the IPv6 service" \
	'ctl backend list $SVC6 | has -F "$SVC6 [2001:db8:e6:1::12]:8443"'
check "addr list writes RFC 5952" \
	'ctl addr list | has "^2001:db8:e6:1::1/64 "'
check "route list: the IPv6 default" \
	'ctl route list | has "^::/0 *2001:db8:e6::fe "'
check "snat list: the IPv6 SNAT address" \
	'ctl snat list | has "^2001:db8:e6:1::10 "'
check "the JSON data carries the same spelling" \
	'ctl --json backend list $SVC6 | has -F "\"[2001:db8:e6:1::11]:8443\""'
if [ -n "${CTL_METRICS:-}" ]; then
	check "/metrics: the IPv6 labels, bracketed" \
		'metrics | has -F "backend=\"[2001:db8:e6:1::11]:8443\""'
	check "/metrics: the IPv4 labels as they were" \
		'metrics | has -F "service=\"$SVC\",backend=\"$BE1\""'
fi

# ---- bad IPv6 input ---------------------------------------------------------

ctl_bad "IPv6 address:port '2001:db8:e6:ff::10:443' needs brackets: [IPV6]:PORT" \
	service add tcp 2001:db8:e6:ff::10:443
ctl_bad "backend [2001:db8:e6:1::12]:80 is IPv6 but $SVC is IPv4: an IPv4 service takes IPv4 backends only" \
	backend add $SVC "[2001:db8:e6:1::12]:80"
ctl_bad "$SVC6: proxy-protocol is not available on IPv6 services (they are forwarded at layer 4 only)" \
	service set $SVC6 proxy-protocol v2
check "synproxy on an IPv6 service with IPv6 backends" \
	'ctl service set $SVC6 synproxy on && ctl service set $SVC6 synproxy off'
ctl_bad "gateway 2001:db8:e6:5::1 is not in a connected subnet of port 0" \
	route add 2001:db8:e6:100::/56 via 2001:db8:e6:5::1 port 0
ctl_bad "invalid IPv6 address '2001:db8:e6::g'" snat add 2001:db8:e6::g port 0
ctl_bad "service $SVC6 already exists" service add $SVC6

# ---- a mixed pool: an IPv4 backend of the IPv6 service (fnat64) --------------

check "an IPv6 service takes an IPv4 backend" \
	'ctl backend add $SVC6 "$BE1" weight 3'
check "backend list: the IPv4 backend of the IPv6 service, unbracketed" \
	'ctl backend list $SVC6 | has -F "$SVC6 $BE1"'
check "the JSON data: both families in one pool" \
	'ctl --json backend list $SVC6 | has -F "\"$BE1\"" &&
	 ctl --json backend list $SVC6 | has -F "\"[2001:db8:e6:1::12]:8443\""'
check "synproxy on an IPv6 service with an IPv4 backend (fnat64)" \
	'ctl service set $SVC6 synproxy on && ctl service set $SVC6 synproxy off'
check "http on an IPv6 service with an IPv4 backend (fnat64 flows are followed)" \
	'ctl service set $SVC6 http on && ctl service set $SVC6 http off'
if [ -n "${CTL_METRICS:-}" ]; then
	check "/metrics: the IPv4 backend under the IPv6 service" \
		'for i in $(seq 50); do
			metrics | has -F "service=\"$SVC6\",backend=\"$BE1\"" &&
				break
			sleep 0.2
		done
		metrics | has -F "service=\"$SVC6\",backend=\"$BE1\""'
fi

# ---- save, the state file, a restart ------------------------------------------

ctl_restart_same
check "save holds the IPv6 lines" \
	'has -F "backend add $SVC6 [2001:db8:e6:1::11]:8443 weight 2" \
		<"$E2E_TMP/save0" &&
	 has -F "addr add 2001:db8:e6:1::1/64 port 1" <"$E2E_TMP/save0" &&
	 has -F "route add ::/0 via 2001:db8:e6::fe port 0" <"$E2E_TMP/save0" &&
	 has -F "backend add $SVC6 $BE1 weight 3" <"$E2E_TMP/save0"'
check "after the restart, the IPv4 service answers" vip_wait 20
ctl_stop
check "lb-control exits 0 on SIGTERM (status $CTL_RC)" [ "$CTL_RC" = 0 ]
e2e_finish
