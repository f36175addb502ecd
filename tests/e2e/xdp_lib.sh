# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# shellcheck disable=SC2034 # variables lib.sh reads
#
# Helpers of the tests on the XDP steering program, sourced after lib.sh
# and e2e_init.

# xdp_init: skips without what the program needs; the dataplane and
# lb-control on net_af_xdp, in the LB namespace's network but the host's
# mounts, so that the maps are pinned in the host's bpffs, under PIN,
# which goes on exit whatever happened (pins of runs that are gone too).
xdp_init() {
	local d=${LB_BUILD_DIR:-${BUILD_DIR:-$E2E_TOP/build}} p t
	LB_STEER=${LB_STEER:-$d/bpf/lb-steer}
	[ -x "$LB_STEER" ] || e2e_skip "lb-steer is not built ($LB_STEER)"
	grep -qs ' /sys/fs/bpf bpf ' /proc/mounts ||
		e2e_skip "bpffs is not mounted on /sys/fs/bpf (run tools/setup)"
	ldd "$LB_DATAPLANE" | has librte_net_af_xdp ||
		compgen -G "/usr/lib/*/dpdk/pmds-*/librte_net_af_xdp.so*" >/dev/null ||
		e2e_skip "DPDK has no net_af_xdp PMD"
	nm "$LB_DATAPLANE" | grep -c lb_xdp_port_started >/dev/null ||
		e2e_skip "lb-dataplane was built without bpf/ (no clang or bpftool)"
	e2e_need_tools nsenter
	E2E_PMD=net_af_xdp
	E2E_KEEP_MOUNTS=1
	PIN=/sys/fs/bpf/sluice/$DP_PREFIX
	for p in /sys/fs/bpf/sluice/sl*; do
		[ -d "$p" ] || continue
		t=${p##*/sl}
		[ "$t" = "$E2E_TAG" ] || tag_alive "$t" || rm -rf "$p"
	done
	rm -rf "$PIN"
	trap xdp_on_exit EXIT
}

# The pins outlive the namespaces: removed before lib.sh's cleanup, which
# sees the test's exit status.
# shellcheck disable=SC2317 # run by the EXIT trap
xdp_on_exit() {
	local rc=$?
	rm -rf "$PIN"
	(exit "$rc")
	ctl_on_exit
}

# steer ARGS...: lb-steer on the pinned maps.
steer() {
	lb_ns_prefix
	"${LB_NSX[@]}" "$LB_STEER" -d "$PIN" "$@"
}

# counter NAME: a counter of the program, packets.
counter() {
	steer stats | awk -v n="$1" '$1 == n { print $2 }'
}
