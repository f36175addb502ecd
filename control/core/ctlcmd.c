/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What lb-control's commands over the running dataplane share: the
 * service label, handing a command's data to the API, and finding the
 * service a command names in the configuration or in the table. The
 * commands are files of their own: ctlcmd_svc.c (service list, show),
 * ctlcmd_be.c (backend list), ctlcmd_stats.c (stats), ctlcmd_data.c
 * (the data of the conf module's lists). Each gives text for people and
 * a JSON object for programs, built from the same rows.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "ctlcmd_priv.h"

char *
lb_ctlcmd_svc_str(uint8_t proto, uint32_t vip, uint16_t port, char *buf)
{
	char a[LB_CMD_ADDR_STRLEN];
	const char *p = lb_cmd_proto_name(proto);

	snprintf(buf, LB_CTLCMD_SVC_STRLEN, "%s %s", p != NULL ? p : "?",
		 lb_cmd_fmt_ipv4_port(vip, port, a));
	return buf;
}

int
lb_ctlcmd_give_data(struct lb_ctl *ctl, json_t *d, int bad,
		    struct lb_cmd_out *out)
{
	if (d == NULL || bad) {
		json_decref(d);
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	}
	json_decref(ctl->data);
	ctl->data = d;
	return 0;
}

int
lb_ctlcmd_svc_slot(const struct lb_ctl *ctl, const struct lb_conf_svc_key *k)
{
	const struct lb_dpconf *c = lb_view_conf(ctl->view);

	if (c == NULL)
		return -1;
	return lb_dpconf_svc_find(c, k->proto, htonl(k->vip), htons(k->port));
}

int
lb_ctlcmd_find_svc(const struct lb_ctl *ctl, char **argv, bool deleted,
		   const struct lb_conf_svc **sv, int *slot,
		   struct lb_cmd_out *out)
{
	char s[LB_CTLCMD_SVC_STRLEN];
	struct lb_conf_svc_key k;
	const struct lb_dpconf *c;
	int rc;

	memset(&k, 0, sizeof(k));
	rc = lb_cmd_parse_proto(argv[0], &k.proto, out);
	if (rc == 0)
		rc = lb_cmd_parse_ipv4_port(argv[1], &k.vip, &k.port, out);
	if (rc != 0)
		return rc;
	*sv = lb_conf_svc_find(ctl->conf, &k);
	*slot = *sv != NULL ? lb_ctlcmd_svc_slot(ctl, &k) : -1;
	if (*sv != NULL)
		return 0;
	c = lb_view_conf(ctl->view);
	for (uint32_t i = 0; deleted && c != NULL && i < c->nb_svc; i++) {
		const struct lb_dpconf_svc *t = &c->svc[i];

		if (t->state == LB_SVC_DELETED && t->proto == k.proto &&
		    t->vip == htonl(k.vip) && t->vport == htons(k.port)) {
			*slot = (int)i;
			return 0;
		}
	}
	return lb_cmd_error(out, -ENOENT, "no service %s",
			    lb_ctlcmd_svc_str(k.proto, k.vip, k.port, s));
}

