#!/usr/bin/env bash
# lb-steer's commands for both address families: rules and ACL entries
# added, listed, refused and removed on pins of the test's own, with the
# program attached to the loopback of a private network namespace.
# Needs root and bpffs on /sys/fs/bpf; reports a skip (77) otherwise.
# usage: lb_steer_cli.sh PATH_TO_LB_STEER
set -u
steer=$1
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
[ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" = bpf_fs ] ||
	{ echo "SKIP: no bpffs on /sys/fs/bpf"; exit 77; }
# A namespace of our own: attaching touches only its loopback.
if [ -z "${LB_STEER_CLI_NETNS:-}" ]; then
	LB_STEER_CLI_NETNS=1 exec unshare -n "$0" "$@"
fi

dir=/sys/fs/bpf/sluice/steer-cli-$$
cleanup() {
	"$steer" -d "$dir" detach lo >/dev/null 2>&1
	"$steer" -d "$dir" unpin >/dev/null 2>&1
}
trap cleanup EXIT
ip link set lo up || exit 1

bad=0
# expect RC WHAT COMMAND...: runs lb-steer -d DIR COMMAND, wants exit RC
expect() {
	local want=$1 what=$2 rc
	shift 2
	"$steer" -d "$dir" "$@" >/dev/null 2>&1
	rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL: $what: exit $rc, expected $want"
		bad=1
	fi
}
# listed WHAT REGEX COMMAND...: the command's output has a line matching
listed() {
	local what=$1 re=$2
	shift 2
	if ! "$steer" -d "$dir" "$@" | grep -Eq -- "$re"; then
		echo "FAIL: $what: no line like '$re' in:"
		"$steer" -d "$dir" "$@"
		bad=1
	fi
}
count() {
	"$steer" -d "$dir" "$@" | wc -l
}

expect 0 "attach" attach lo skb
expect 0 "v6 whole address" rule add 2001:db8:1::101
expect 0 "v6 port rule" rule add 2001:db8:1::100 tcp 80
expect 0 "v6 range" rule add 2001:db8:1::5 udp 40000-40999 snat
expect 0 "v6 icmp6 rule" rule add 2001:db8:1::6 icmp6 local
expect 0 "v4 whole address" rule add 10.0.0.101
expect 1 "v6 duplicate" rule add 2001:db8:1::101 snat
expect 1 "v6 multicast" rule add ff02::1
expect 1 "v6 IPv4-mapped" rule add ::ffff:10.0.0.1
expect 2 "v6 bad literal" rule add 2001:db8::zz
expect 2 "v6 bad port" rule add 2001:db8:1::100 tcp 70000
listed "v6 whole address" '^2001:db8:1::101 +all\+nd +vip' rules
listed "v6 port rule" '^2001:db8:1::100 +tcp +80 +vip' rules
listed "v6 range" '^2001:db8:1::5 +udp +40000-40999 +snat' rules
listed "v6 icmp6 rule" '^2001:db8:1::6 +icmp6 +local' rules
listed "v4 beside v6" '^10\.0\.0\.101 +all\+arp +vip' rules
[ "$(count rules)" = 5 ] || { echo "FAIL: 5 rules expected"; bad=1; }

expect 0 "v6 deny /48" acl deny 2001:db8:dead::/48
expect 0 "v6 allow /64 with ttl" acl allow 2001:db8:dead:1::/64 ttl 60
expect 0 "v6 deny-lb, no length: /128" acl deny-lb 2001:db8::7
expect 0 "v6 /0" acl deny-lb ::/0
expect 0 "v4 beside v6" acl deny 192.0.2.0/24
expect 1 "v6 host bits set" acl deny 2001:db8::1/64
expect 2 "v6 length 129" acl deny 2001:db8::/129
expect 2 "v6 bad prefix" acl deny 2001:db8:::/48
listed "v6 /48" '^2001:db8:dead::/48 deny forever$' acl list
listed "v6 /64 ttl" '^2001:db8:dead:1::/64 allow ttl ' acl list
listed "v6 /128" '^2001:db8::7/128 deny-lb forever$' acl list
listed "v6 /0" '^::/0 deny-lb forever$' acl list
listed "v4" '^192\.0\.2\.0/24 deny forever$' acl list
[ "$(count acl list)" = 5 ] || { echo "FAIL: 5 ACL entries expected"; bad=1; }

expect 0 "v6 acl del" acl del 2001:db8:dead::/48
expect 1 "v6 acl del again" acl del 2001:db8:dead::/48
expect 0 "v6 acl del /128" acl del 2001:db8::7
expect 0 "v6 rule del" rule del 2001:db8:1::100 tcp 80
expect 1 "v6 rule del again" rule del 2001:db8:1::100 tcp 80
[ "$(count acl list)" = 3 ] || { echo "FAIL: 3 ACL entries expected"; bad=1; }
[ "$(count rules)" = 4 ] || { echo "FAIL: 4 rules expected"; bad=1; }
listed "stats" '^pass_ipv6 +[0-9]+ packets' stats
expect 0 "detach" detach lo
exit $bad
