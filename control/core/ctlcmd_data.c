/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The API data of the conf module's lists: `addr list`, `route list` and
 * `snat list` keep their text where they are defined (control/conf/), and
 * extend here (lb_cmd_extend()) with a JSON object for ctl->data, which
 * needs jansson and struct lb_ctl that the conf room does not have.
 */
#include <stdio.h>

#include "ctlcmd_priv.h"

static int
data_addr_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_ctl *ctl = ctx;
	char a[LB_CMD_IP_STRLEN], p[LB_CMD_IP_ADDR_STRLEN];
	json_t *d, *arr;
	int bad;

	(void)argc;
	(void)argv;
	arr = json_array();
	d = json_object();
	bad = arr == NULL || d == NULL;
	for (unsigned int i = 0; i < lb_conf_nb_addrs(ctl->conf) && !bad; i++) {
		const struct lb_conf_addr *x = lb_conf_addr_at(ctl->conf, i);
		struct lb_conf_ip ip = LB_CONF_IP_OF(x);
		json_t *e = json_object();

		snprintf(p, sizeof(p), "%s/%u", lb_cmd_fmt_ip(&ip, a), x->len);
		bad |= e == NULL || jset_str(e, "addr", p) ||
		       jset_u64(e, "port", x->port) ||
		       (x->vlan != 0 && jset_u64(e, "vlan", x->vlan)) ||
		       json_array_append_new(arr, e);
	}
	if (!bad) {
		bad |= jset(d, "addrs", arr);
		arr = NULL;
	}
	json_decref(arr);
	return lb_ctlcmd_give_data(ctl, d, bad, out);
}

static int
data_route_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_ctl *ctl = ctx;
	char a[LB_CMD_IP_STRLEN], p[LB_CMD_IP_ADDR_STRLEN];
	json_t *d, *arr;
	int bad;

	(void)argc;
	(void)argv;
	arr = json_array();
	d = json_object();
	bad = arr == NULL || d == NULL;
	for (unsigned int i = 0; i < lb_conf_nb_routes(ctl->conf) && !bad;
	     i++) {
		const struct lb_conf_route *x = lb_conf_route_at(ctl->conf, i);
		struct lb_conf_ip n = lb_conf_ip_of(x->af, x->net, x->net6);
		struct lb_conf_ip g = lb_conf_ip_of(x->af, x->gw, x->gw6);
		json_t *e = json_object();

		bad |= e == NULL ||
		       jset_str(e, "prefix",
				lb_cmd_fmt_ip_prefix(&n, x->len, p)) ||
		       jset_str(e, "via", lb_cmd_fmt_ip(&g, a)) ||
		       jset_u64(e, "port", x->port) ||
		       json_array_append_new(arr, e);
	}
	if (!bad) {
		bad |= jset(d, "routes", arr);
		arr = NULL;
	}
	json_decref(arr);
	return lb_ctlcmd_give_data(ctl, d, bad, out);
}

static int
data_snat_list(void *ctx, int argc, char **argv, struct lb_cmd_out *out)
{
	struct lb_ctl *ctl = ctx;
	char a[LB_CMD_IP_STRLEN];
	json_t *d, *arr;
	int bad;

	(void)argc;
	(void)argv;
	arr = json_array();
	d = json_object();
	bad = arr == NULL || d == NULL;
	for (unsigned int i = 0; i < lb_conf_nb_snats(ctl->conf) && !bad; i++) {
		const struct lb_conf_snat *x = lb_conf_snat_at(ctl->conf, i);
		struct lb_conf_ip ip = LB_CONF_IP_OF(x);
		json_t *e = json_object();

		bad |= e == NULL ||
		       jset_str(e, "addr", lb_cmd_fmt_ip(&ip, a)) ||
		       jset_u64(e, "port", x->port) ||
		       json_array_append_new(arr, e);
	}
	if (!bad) {
		bad |= jset(d, "snats", arr);
		arr = NULL;
	}
	json_decref(arr);
	return lb_ctlcmd_give_data(ctl, d, bad, out);
}

/* The conf module's lists keep their text; the API gets their data. */
static const struct lb_cmd_ext data_ext[] = {
	{"addr list", NULL, data_addr_list},
	{"route list", NULL, data_route_list},
	{"snat list", NULL, data_snat_list},
};

static const struct lb_cmd_table data_table = {
	.name = "ctl-lists",
	.ctx = "ctl",
	.ext = data_ext,
	.n_ext = sizeof(data_ext) / sizeof(data_ext[0]),
};
LB_CMD_REGISTER(data_table);
