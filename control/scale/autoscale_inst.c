/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The autoscaler's instance repository (the SPL patent's table 6): every
 * backend of an autoscaled service with its origin and state, and the
 * counters of their lives. The scale runtime moves instances; the
 * decisions only count them.
 */
#include <stdio.h>
#include <string.h>

#include "autoscale_priv.h"
#include "spl.h"

unsigned int
lb_as_nb_inst(const struct lb_as_svc *s)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
		n += s->used[i];
	return n;
}

struct lb_as_inst *
lb_as_inst_at(struct lb_as_svc *s, unsigned int i)
{
	for (unsigned int j = 0; j < LB_AS_INST_MAX; j++)
		if (s->used[j] && i-- == 0)
			return &s->inst[j];
	return NULL;
}

struct lb_as_inst *
lb_as_inst_find(struct lb_as_svc *s, uint32_t id)
{
	for (unsigned int j = 0; j < LB_AS_INST_MAX; j++)
		if (s->used[j] && s->inst[j].id == id)
			return &s->inst[j];
	return NULL;
}

struct lb_as_inst *
lb_as_inst_by_addr(struct lb_as_svc *s, const struct lb_conf_ip *ip,
		   uint16_t port)
{
	for (unsigned int j = 0; j < LB_AS_INST_MAX; j++)
		if (s->used[j] && lb_as_inst_placed(&s->inst[j]) &&
		    lb_conf_ip_eq(&s->inst[j].ip, ip) &&
		    s->inst[j].port == port)
			return &s->inst[j];
	return NULL;
}

struct lb_as_inst *
lb_as_inst_add(struct lb_as_svc *s, enum lb_as_origin o, enum lb_as_state state,
	       uint64_t now_ns)
{
	for (unsigned int j = 0; j < LB_AS_INST_MAX; j++) {
		if (s->used[j])
			continue;
		s->used[j] = true;
		s->inst[j] = (struct lb_as_inst){
			.id = s->next_id++,
			.origin = o,
			.state = state,
			.since_ns = now_ns,
			.requested_ns = now_ns,
		};
		if (o == LB_AS_ORCH)
			s->st.started++;
		return &s->inst[j];
	}
	return NULL;
}

struct lb_as_inst *
lb_as_inst_import(struct lb_as_svc *s, uint32_t id, enum lb_as_state state,
		  uint64_t now_ns)
{
	struct lb_as_inst *i = lb_as_inst_find(s, id);
	uint32_t next = s->next_id > id ? s->next_id : id + 1;

	if (i != NULL && i->origin == LB_AS_ORCH)
		return NULL;
	/* A static backend's id is this host's own label: the cluster's
	 * instance takes it, the backend gets another. */
	if (i != NULL)
		i->id = next++;
	s->next_id = id;
	i = lb_as_inst_add(s, LB_AS_ORCH, state, now_ns);
	s->next_id = next;
	if (i == NULL)
		return NULL;
	s->st.started--; /* lb_as_inst_add() counted a start */
	return i;
}

uint32_t
lb_as_next_id(const struct lb_as_svc *s)
{
	return s->next_id;
}

void
lb_as_raise_next_id(struct lb_as_svc *s, uint32_t id)
{
	if (id > s->next_id)
		s->next_id = id;
}

struct lb_as_inst *
lb_as_inst_adopt(struct lb_as_svc *s, uint64_t now_ns)
{
	struct lb_as_inst *i =
		lb_as_inst_add(s, LB_AS_ORCH, LB_AS_STARTING, now_ns);

	if (i == NULL)
		return NULL;
	s->st.started--; /* lb_as_inst_add() counted a start */
	s->st.adopted++;
	s->adopted = true;
	snprintf(i->why, sizeof(i->why), "adopted");
	return i;
}

void
lb_as_inst_set(struct lb_as_svc *s, struct lb_as_inst *i,
	       enum lb_as_state state, uint64_t now_ns, const char *why)
{
	if (i->state == LB_AS_PENDING && state == LB_AS_ACTIVE)
		s->st.joined++;
	if (state == LB_AS_FAILED && i->state != LB_AS_FAILED)
		s->st.failed++;
	i->state = state;
	i->since_ns = now_ns;
	if (why != NULL)
		snprintf(i->why, sizeof(i->why), "%s", why);
}

void
lb_as_inst_remove(struct lb_as_svc *s, struct lb_as_inst *i)
{
	unsigned int j = (unsigned int)(i - s->inst);

	if (j >= LB_AS_INST_MAX || !s->used[j])
		return;
	if (i->origin == LB_AS_ORCH && i->state != LB_AS_FAILED)
		s->st.drained++;
	if (s->spl_member[j] && s->spl != NULL && j < LB_SPL_INST_MAX)
		lb_spl_inst_remove(s->spl, j);
	s->spl_member[j] = false;
	s->used[j] = false;
}

void
lb_as_note_driver_error(struct lb_as_svc *s)
{
	s->st.drv_errors++;
}

void
lb_as_note_drain_timeout(struct lb_as_svc *s)
{
	s->st.drain_timeouts++;
}

void
lb_as_inst_count(const struct lb_as_svc *s, uint32_t n[LB_AS_STATE_COUNT])
{
	memset(n, 0, sizeof(uint32_t) * LB_AS_STATE_COUNT);
	for (unsigned int j = 0; j < LB_AS_INST_MAX; j++)
		if (s->used[j] &&
		    (unsigned int)s->inst[j].state < LB_AS_STATE_COUNT)
			n[s->inst[j].state]++;
}

void
lb_as_inst_sync(struct lb_as_svc *s, const struct lb_conf_svc *sv, uint64_t now)
{
	int pidx = lb_as_svc_pool_index(s, sv);

	for (unsigned int j = 0; sv != NULL && j < sv->nb_be; j++) {
		const struct lb_conf_be *be = &sv->be[j];
		struct lb_conf_ip ip;
		struct lb_as_inst *i;
		enum lb_as_state st =
			be->draining ? LB_AS_DRAINING : LB_AS_ACTIVE;

		if (be->orch || be->pool != pidx)
			continue;
		ip = LB_CONF_IP_OF(be);
		i = lb_as_inst_by_addr(s, &ip, be->port);
		if (i == NULL) {
			i = lb_as_inst_add(s, LB_AS_STATIC, st, now);
			if (i == NULL)
				continue;
			i->ip = ip;
			i->port = be->port;
		}
		if (i->origin == LB_AS_STATIC && i->state != st)
			lb_as_inst_set(s, i, st, now, NULL);
	}
	for (unsigned int j = lb_as_nb_inst(s); j-- > 0;) {
		struct lb_as_inst *i = lb_as_inst_at(s, j);
		bool there = false;

		if (i->origin != LB_AS_STATIC)
			continue;
		for (unsigned int b = 0; sv != NULL && b < sv->nb_be; b++) {
			struct lb_conf_ip x = LB_CONF_IP_OF(&sv->be[b]);

			there |= lb_conf_ip_eq(&x, &i->ip) &&
				 sv->be[b].port == i->port && !sv->be[b].orch &&
				 sv->be[b].pool == pidx;
		}
		if (!there)
			lb_as_inst_remove(s, i);
	}
}
