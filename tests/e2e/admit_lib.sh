# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Helpers of the admission tests, sourced after lib.sh.

# admit_gen SRC TARGET RATE SECONDS OUT: the connection generator
# (connrate.py) in the client namespace, its JSON result in OUT.
admit_gen() {
	ip netns exec "$NS_CLI" "$PY" -B "$E2E_DIR/connrate.py" --src "$1" \
		--target "$2" --rate "$3" --seconds "$4" >"$5"
}

# syn_retrans: SYNs the client namespace's kernel sent again (TcpExt
# TCPSynRetrans) since it was created. On a starved host a SYN's answer
# (or the RST refusing it) may come after the client's 1 s timer: the
# same connection then meets the admission control twice.
syn_retrans() {
	# shellcheck disable=SC2016 # an awk program
	ip netns exec "$NS_CLI" awk '$1 == "TcpExt:" {
		if (!h) { for (i = 2; i <= NF; i++) n[i] = $i; h = 1; next }
		for (i = 2; i <= NF; i++) if (n[i] == "TCPSynRetrans") print $i
	}' /proc/net/netstat
}

# jf FILE KEY: a field of a generator's result.
jf() { jq_get "$1" "d[\"$2\"]"; }

# within N WANT PCT: |N - WANT| <= WANT * PCT / 100
# shellcheck disable=SC2317 # called from the conditions check evaluates
within() {
	[ $((($1 - $2) * 100)) -le $(($2 * $3)) ] &&
		[ $((($2 - $1) * 100)) -le $(($2 * $3)) ]
}
