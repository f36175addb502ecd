/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Options of handshake segments: see dataplane/splice/tcp_opts.h.
 */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "tcp_opts.h"

#define OPT_EOL 0
#define OPT_NOP 1
#define OPT_MSS 2
#define OPT_WS 3
#define OPT_SACK_OK 4
#define OPT_TS 8
#define LEN_MSS 4
#define LEN_WS 3
#define LEN_SACK_OK 2
#define LEN_TS 10
#define WSCALE_MAX 14

int
lb_tcp_opts_read(const uint8_t *opt, uint32_t len, struct lb_tcp_opts *o)
{
	uint32_t i = 0;

	memset(o, 0, sizeof(*o));
	o->wscale = -1;
	while (i < len) {
		uint8_t kind = opt[i], l;

		if (kind == OPT_EOL)
			return 0;
		if (kind == OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= len || (l = opt[i + 1]) < 2 || l > len - i)
			return -EINVAL;
		switch (kind) {
		case OPT_MSS:
			if (l == LEN_MSS)
				o->mss = rd16(opt + i + 2);
			break;
		case OPT_WS:
			/* RFC 7323 2.3: a larger shift is read as 14. */
			if (l == LEN_WS)
				o->wscale = (int8_t)(opt[i + 2] > WSCALE_MAX ?
							     WSCALE_MAX :
							     opt[i + 2]);
			break;
		case OPT_SACK_OK:
			if (l == LEN_SACK_OK)
				o->sack_ok = true;
			break;
		case OPT_TS:
			if (l == LEN_TS) {
				o->ts = true;
				o->tsval = rd32(opt + i + 2);
				o->tsecr = rd32(opt + i + 6);
			}
			break;
		default:
			break;
		}
		i += l;
	}
	return 0;
}

uint32_t
lb_tcp_opts_put(uint8_t buf[LB_TCP_OPTS_SYN_MAX], const struct lb_tcp_opts *o)
{
	uint8_t *p = buf;

	if (o->mss != 0) {
		p[0] = OPT_MSS;
		p[1] = LEN_MSS;
		wr16(p + 2, o->mss);
		p += 4;
	}
	if (o->ts) {
		if (o->sack_ok) {
			p[0] = OPT_SACK_OK;
			p[1] = LEN_SACK_OK;
		} else {
			p[0] = OPT_NOP;
			p[1] = OPT_NOP;
		}
		p[2] = OPT_TS;
		p[3] = LEN_TS;
		wr32(p + 4, o->tsval);
		wr32(p + 8, o->tsecr);
		p += 12;
	} else if (o->sack_ok) {
		p[0] = OPT_NOP;
		p[1] = OPT_NOP;
		p[2] = OPT_SACK_OK;
		p[3] = LEN_SACK_OK;
		p += 4;
	}
	if (o->wscale >= 0) {
		p[0] = OPT_NOP;
		p[1] = OPT_WS;
		p[2] = LEN_WS;
		p[3] = (uint8_t)(o->wscale > WSCALE_MAX ? WSCALE_MAX :
							  o->wscale);
		p += 4;
	}
	return (uint32_t)(p - buf);
}
