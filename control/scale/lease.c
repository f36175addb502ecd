/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lease.h"

void
lb_lease_params_default(struct lb_lease_params *p)
{
	p->ttl_ns = LB_LEASE_TTL_DEFAULT_NS;
	p->renew_ns = LB_LEASE_RENEW_DEFAULT_NS;
	p->margin_ns = LB_LEASE_MARGIN_DEFAULT_NS;
}

int
lb_lease_params_check(const struct lb_lease_params *p)
{
	if (p == NULL || p->ttl_ns < 100000000ull || p->renew_ns == 0 ||
	    p->margin_ns == 0 || p->renew_ns >= p->ttl_ns ||
	    p->margin_ns >= p->ttl_ns - p->renew_ns)
		return -EINVAL;
	return 0;
}

void
lb_lease_init(struct lb_lease *l, const struct lb_lease_params *p)
{
	memset(l, 0, sizeof(*l));
	l->p = *p;
	l->role = LB_LEASE_FOLLOWER;
}

static void
set_leader(struct lb_lease *l, const char *holder)
{
	snprintf(l->leader, sizeof(l->leader), "%s",
		 holder != NULL ? holder : "");
}

bool
lb_lease_leading(struct lb_lease *l, uint64_t now_ns)
{
	if (l->role != LB_LEASE_LEADER)
		return false;
	if (now_ns < l->valid_until_ns)
		return true;
	/* Unrenewed for a TTL less the margin: another may take it now. */
	l->role = LB_LEASE_FOLLOWER;
	l->st.expired++;
	l->leader[0] = '\0';
	l->next_ns = now_ns;
	return false;
}

enum lb_lease_op
lb_lease_due(struct lb_lease *l, uint64_t now_ns)
{
	bool leading = lb_lease_leading(l, now_ns);

	if (now_ns < l->next_ns)
		return LB_LEASE_OP_NONE;
	return leading ? LB_LEASE_OP_RENEW : LB_LEASE_OP_ACQUIRE;
}

void
lb_lease_answer(struct lb_lease *l, enum lb_lease_op op, uint64_t sent_ns,
		uint64_t now_ns, enum lb_lease_outcome out, uint64_t term,
		const char *holder)
{
	bool was = lb_lease_leading(l, now_ns);

	l->next_ns = now_ns + l->p.renew_ns;
	if ((out == LB_LEASE_HELD || out == LB_LEASE_TAKEN) && term < l->term) {
		l->st.stale++;
		out = LB_LEASE_ERROR;
	}
	switch (out) {
	case LB_LEASE_HELD:
		/* A renewal can only hold the term we hold: anything else
		 * is not ours to act on. */
		if (op == LB_LEASE_OP_RENEW && (!was || term != l->term)) {
			l->st.errors++;
			return;
		}
		if (!was || term != l->term)
			l->st.acquired++;
		else
			l->st.renewed++;
		l->role = LB_LEASE_LEADER;
		l->term = term;
		l->valid_until_ns = sent_ns + l->p.ttl_ns - l->p.margin_ns;
		set_leader(l, holder);
		if (!lb_lease_leading(l, now_ns))
			l->next_ns = now_ns; /* the answer came too late */
		return;
	case LB_LEASE_TAKEN:
	case LB_LEASE_FREE:
		if (was)
			l->st.lost++;
		l->role = LB_LEASE_FOLLOWER;
		l->valid_until_ns = 0;
		if (out == LB_LEASE_TAKEN) {
			l->term = term;
			set_leader(l, holder);
		} else {
			l->leader[0] = '\0';
			l->next_ns = now_ns; /* free: try at once */
		}
		return;
	case LB_LEASE_ERROR:
		/* A leader goes on until valid_until, retrying; the
		 * deadline does not move. */
		l->st.errors++;
		return;
	}
}

void
lb_lease_step_down(struct lb_lease *l)
{
	l->role = LB_LEASE_FOLLOWER;
	l->valid_until_ns = 0;
	l->leader[0] = '\0';
}

const char *
lb_lease_role_name(enum lb_lease_role r)
{
	return r == LB_LEASE_LEADER ? "leader" : "follower";
}
