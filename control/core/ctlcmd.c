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
lb_ctlcmd_key_str(const struct lb_conf_svc_key *k, char *buf)
{
	struct lb_conf_ip vip = lb_conf_ip_of(k->af, k->vip, k->vip6);
	char a[LB_CMD_IP_ADDR_STRLEN];
	const char *p = lb_cmd_proto_name(k->proto);

	snprintf(buf, LB_CTLCMD_SVC_STRLEN, "%s %s", p != NULL ? p : "?",
		 lb_cmd_fmt_ip_port(&vip, k->port, a));
	return buf;
}

char *
lb_ctlcmd_svc_str(uint8_t proto, uint32_t vip, uint16_t port, char *buf)
{
	struct lb_conf_svc_key k = {.proto = proto, .vip = vip, .port = port};

	return lb_ctlcmd_key_str(&k, buf);
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
	if (k->af != LB_CONF_AF_INET6)
		return lb_dpconf_svc_find(c, k->proto, htonl(k->vip),
					  htons(k->port));
	return lb_ctlcmd_svc_slot_in(c, k, LB_SVC_ACTIVE);
}

int
lb_ctlcmd_svc_slot_in(const struct lb_dpconf *c,
		      const struct lb_conf_svc_key *k, uint8_t state)
{
	/* IPv6 services are not in the table's IPv4 hash: a scan of the
	 * slots, as few as there are services. */
	for (uint32_t i = 0; c != NULL && i < c->nb_svc; i++) {
		struct lb_conf_svc_key t = lb_dpconf_svc_key(&c->svc[i]);

		if (c->svc[i].state == state && lb_conf_svc_key_eq(&t, k))
			return (int)i;
	}
	return -1;
}

int
lb_ctlcmd_find_svc(const struct lb_ctl *ctl, char **argv, bool deleted,
		   const struct lb_conf_svc **sv, int *slot,
		   struct lb_cmd_out *out)
{
	char s[LB_CTLCMD_SVC_STRLEN];
	struct lb_conf_svc_key k;
	int rc;

	rc = lb_conf_parse_key(argv, &k, out);
	if (rc != 0)
		return rc;
	*sv = lb_conf_svc_find(ctl->conf, &k);
	*slot = *sv != NULL ? lb_ctlcmd_svc_slot(ctl, &k) : -1;
	if (*sv != NULL)
		return 0;
	*slot = deleted ? lb_ctlcmd_svc_slot_in(lb_view_conf(ctl->view), &k,
						LB_SVC_DELETED)
			: -1;
	if (*slot >= 0)
		return 0;
	return lb_cmd_error(out, -ENOENT, "no service %s",
			    lb_ctlcmd_key_str(&k, s));
}

