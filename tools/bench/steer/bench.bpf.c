/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Programs of lb-steer-bench: a traffic generator for live-frame
 * BPF_PROG_TEST_RUN, and the baselines the steering program is measured
 * against. Each baseline does the least its verdict needs, so that a
 * ratio to it is the price of the steering program's decisions.
 */
#include <linux/bpf.h>

#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

/* Frames base_drop dropped: the flood's delivered count. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

/* Run with BPF_F_TEST_XDP_LIVE_FRAMES on one end of a veth: XDP_TX turns
 * into a redirect out of that end, and the frame arrives on the peer,
 * where the program under test runs in the veth's NAPI poll. */
SEC("xdp")
int
gen_tx(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_TX;
}

/* No program's work at all, while keeping the veth in XDP mode. */
SEC("xdp")
int
base_nop(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

/* The cheapest drop that still counts what it dropped. */
SEC("xdp")
int
base_drop(struct xdp_md *ctx)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&drops, &k);

	(void)ctx;
	if (n != NULL)
		(*n)++;
	return XDP_DROP;
}

/* Every frame to the queue's AF_XDP socket, as a PMD's default program
 * does when it owns the whole interface. */
SEC("xdp")
int
base_xsk(struct xdp_md *ctx)
{
	return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
