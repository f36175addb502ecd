/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-dpbench's frame templates and checksum checks: set up once per run
 * or run on one output in CHECK_EVERY, apart from the inline writers in
 * dp_bench_frame.h that the timed path uses.
 */
#include <string.h>

#include "csum.h"
#include "dp_bench_frame.h"

void
dpb_tmpl_init(struct tmpl *t, const uint8_t *dmac, const uint8_t *smac,
	  uint8_t flags)
{
	uint8_t *f = t->f, ph[12 + 20];

	memset(t, 0, sizeof(*t));
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08; /* IPv4 */
	f[OFF_IP] = 0x45;
	f[OFF_IP + 3] = 40;   /* total length: headers only */
	f[OFF_IP + 6] = 0x40; /* DF */
	f[OFF_IP + 8] = 64;
	f[OFF_IP + 9] = LB_IPPROTO_TCP;
	if (flags & LB_TCP_ACK)
		f[OFF_TCP + 11] = 1; /* acknowledgement number */
	f[OFF_TCP + 12] = 5 << 4;
	f[OFF_TCP + 13] = flags;
	f[OFF_TCP + 14] = 0xff; /* window */
	f[OFF_TCP + 15] = 0xff;
	t->ip_sum = lb_csum_partial(f + OFF_IP, 20, 0);
	memset(ph, 0, sizeof(ph));
	ph[9] = LB_IPPROTO_TCP;
	ph[11] = 20;
	memcpy(ph + 12, f + OFF_TCP, 20);
	t->tcp_sum = lb_csum_partial(ph, sizeof(ph), 0);
}

/*
 * frame_write() with an acknowledgement number, for the handshake: the
 * worker moves a flow on only when the SYN-ACK acknowledges the SYN and
 * the ACK the SYN-ACK. Not on the timed path: the checksum is summed
 * afresh.
 */
void
dpb_frame_write_ack(uint8_t *f, const struct tmpl *t, uint32_t src, uint32_t dst,
		uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack)
{
	uint8_t ph[12] = {0};
	uint16_t c = 0;

	frame_write(f, t, src, dst, sport, dport, seq);
	memcpy(f + OFF_SEQ + 4, &ack, 4);
	memcpy(f + OFF_TCP_CSUM, &c, 2);
	memcpy(ph, f + OFF_SRC, 8);
	ph[9] = LB_IPPROTO_TCP;
	ph[11] = 20;
	c = (uint16_t)~lb_csum_fold(lb_csum_partial(
		f + OFF_TCP, 20, lb_csum_partial(ph, sizeof(ph), 0)));
	memcpy(f + OFF_TCP_CSUM, &c, 2);
}

int
dpb_frame_csums_ok(const uint8_t *f)
{
	/* The segment as long as the IP header says: the SYN proxy's carry
	 * options. */
	uint32_t tl = (uint32_t)(f[OFF_IP + 2] << 8 | f[OFF_IP + 3]) - 20u;
	uint8_t ph[12];
	uint32_t s;

	if (lb_csum_fold(lb_csum_partial(f + OFF_IP, 20, 0)) != 0xffff ||
	    tl < 20 || tl > 60)
		return 0;
	memcpy(ph, f + OFF_SRC, 8);
	ph[8] = 0;
	ph[9] = LB_IPPROTO_TCP;
	ph[10] = 0;
	ph[11] = (uint8_t)tl;
	s = lb_csum_partial(ph, sizeof(ph), 0);
	s = lb_csum_partial(f + OFF_TCP, tl, s);
	return lb_csum_fold(s) == 0xffff;
}

void
dpb_l7_tmpl_init(struct l7_tmpl *t, const uint8_t *dmac, const uint8_t *smac,
	     uint8_t flags, const char *payload, uint16_t plen)
{
	uint8_t *f = t->f, ph[12 + 20];
	uint16_t tl = (uint16_t)(20 + plen);

	memset(t, 0, sizeof(*t));
	t->len = (uint16_t)(OFF_TCP + tl);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08;
	f[OFF_IP] = 0x45;
	f[OFF_IP + 2] = (uint8_t)((20 + tl) >> 8);
	f[OFF_IP + 3] = (uint8_t)(20 + tl);
	f[OFF_IP + 6] = 0x40;
	f[OFF_IP + 8] = 64;
	f[OFF_IP + 9] = LB_IPPROTO_TCP;
	f[OFF_TCP + 12] = 5 << 4;
	f[OFF_TCP + 13] = flags;
	f[OFF_TCP + 14] = 0xff;
	f[OFF_TCP + 15] = 0xff;
	memcpy(f + OFF_TCP + 20, payload, plen);
	t->ip_sum = lb_csum_partial(f + OFF_IP, 20, 0);
	memset(ph, 0, sizeof(ph));
	ph[9] = LB_IPPROTO_TCP;
	ph[10] = (uint8_t)(tl >> 8);
	ph[11] = (uint8_t)tl;
	memcpy(ph + 12, f + OFF_TCP, 20);
	/* The payload follows 32 bytes of pseudo-header and header: an even
	 * offset, so its words line up in one running sum. */
	t->tcp_sum = lb_csum_partial(f + OFF_TCP + 20, plen,
				     lb_csum_partial(ph, sizeof(ph), 0));
}

int
dpb_l7_csums_ok(const uint8_t *f, uint32_t len)
{
	uint32_t tl = len - OFF_TCP, s;
	uint8_t ph[12];

	if (len < OFF_TCP + 20 ||
	    lb_csum_fold(lb_csum_partial(f + OFF_IP, 20, 0)) != 0xffff)
		return 0;
	memcpy(ph, f + OFF_SRC, 8);
	ph[8] = 0;
	ph[9] = LB_IPPROTO_TCP;
	ph[10] = (uint8_t)(tl >> 8);
	ph[11] = (uint8_t)tl;
	s = lb_csum_partial(ph, sizeof(ph), 0);
	s = lb_csum_partial(f + OFF_TCP, tl, s);
	return lb_csum_fold(s) == 0xffff;
}
