/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The `kubernetes` orchestrator driver: a Deployment's replica count
 * through its scale subresource, the instances' addresses from the
 * EndpointSlices of its Service.
 *
 * target "URL NAMESPACE DEPLOYMENT [service=NAME] [token=FILE] [ca=FILE]
 * [kubeconfig=FILE]". URL "in-cluster" means the API server of the pod
 * lb-control runs in, with its service account's token and CA. The
 * Service defaults to the Deployment's name.
 *
 * lb-control owns the replica count: it is the number of instances the
 * autoscaler asked for and has not stopped, plus the pods it adopted.
 * On its first contact the driver reads the count, then lists the
 * endpoints: each ready one (up to the count) goes to an instance asked
 * for meanwhile, or else is reported as adopted (LB_ORCH_EV_ADOPTED), so
 * that a restarted lb-control, which knows no instance, does not lower
 * the count of a Deployment whose pods serve. Nothing is patched before
 * that listing has succeeded; a failed one is retried with backoff.
 *
 * A start raises the count and waits for a ready endpoint no instance
 * has yet; a stop first gives the instance's pod the lowest
 * pod-deletion-cost, so that the ReplicaSet removes that pod, then lowers
 * the count, and reports the stop once the pod's endpoint is gone. One
 * request is in flight at a time, through libcurl's multi interface:
 * nothing waits. Failed requests are reported and retried with backoff.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "orch.h"

#define K_LIST_EVERY_NS 1000000000ull
#define K_TIMEOUT_MS 10000L
#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

enum kstate { K_FREE = 0, K_WANT, K_UP, K_STOPPING };

struct kinst {
	enum kstate st;
	uint32_t inst; /* UINT32_MAX: adopted, no id from the runtime yet */
	bool marked;   /* pod-deletion-cost set */
	char pod[LB_ORCH_ID_LEN + 1];
};

enum kop { OP_NONE = 0, OP_GET_SCALE, OP_SET_SCALE, OP_MARK, OP_LIST };

struct kdrv {
	char url[256];
	char ns[64];
	char deploy[64];
	char service[64];
	char token_file[256];
	char ca[256];
	char token[4096]; /* from a kubeconfig */
	CURLM *multi;
	CURL *h;
	struct curl_slist *hdr;
	enum kop op;
	struct kinst *op_inst;
	char body[512];
	char *resp;
	size_t len;
	long replicas; /* -1: not read yet */
	bool adopted;  /* the first listing is done: the count may change */
	unsigned int fails;
	uint64_t next_ns; /* no request before this (backoff) */
	uint64_t list_ns; /* next EndpointSlice list */
	struct kinst k[LB_AS_INST_MAX];
};

/* ---- settings ---- */

static int
kv(const char *w, const char *key, char *dst, size_t n)
{
	size_t l = strlen(key);

	if (strncmp(w, key, l) != 0 || w[l] != '=')
		return 0;
	snprintf(dst, n, "%s", w + l + 1);
	return 1;
}

/* A kubeconfig's server, token and certificate-authority (first of each:
 * one cluster and one token user; client certificates are not read). */
static int
kubeconfig(struct kdrv *d, const char *path, char *err, size_t n)
{
	char line[4200], v[4096];
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		snprintf(err, n, "kubeconfig %s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, " server: %4095s", v) == 1 &&
		    d->url[0] == '\0')
			snprintf(d->url, sizeof(d->url), "%.255s", v);
		else if (sscanf(line, " token: %4095s", v) == 1 &&
			 d->token[0] == '\0')
			snprintf(d->token, sizeof(d->token), "%s", v);
		else if (sscanf(line, " certificate-authority: %255s", v) ==
				 1 &&
			 d->ca[0] == '\0')
			snprintf(d->ca, sizeof(d->ca), "%.255s", v);
	}
	fclose(f);
	if (d->url[0] == '\0') {
		snprintf(err, n, "kubeconfig %s: no server", path);
		return -1;
	}
	return 0;
}

static int
parse(const char *t, struct kdrv *d, char *err, size_t n)
{
	char w[8][256];
	int nw = sscanf(t, "%255s %255s %255s %255s %255s %255s %255s %255s",
			w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
	char kc[256] = "";

	if (nw < 3) {
		snprintf(err, n,
			 "invalid target '%s': expected 'URL NAMESPACE "
			 "DEPLOYMENT [service=NAME] [token=FILE] [ca=FILE] "
			 "[kubeconfig=FILE]'",
			 t);
		return -EINVAL;
	}
	memset(d, 0, sizeof(*d));
	snprintf(d->ns, sizeof(d->ns), "%.63s", w[1]);
	snprintf(d->deploy, sizeof(d->deploy), "%.63s", w[2]);
	snprintf(d->service, sizeof(d->service), "%.63s", w[2]);
	for (int i = 3; i < nw; i++)
		if (!kv(w[i], "service", d->service, sizeof(d->service)) &&
		    !kv(w[i], "token", d->token_file, sizeof(d->token_file)) &&
		    !kv(w[i], "ca", d->ca, sizeof(d->ca)) &&
		    !kv(w[i], "kubeconfig", kc, sizeof(kc))) {
			snprintf(err, n, "invalid target word '%s'", w[i]);
			return -EINVAL;
		}
	if (strcmp(w[0], "in-cluster") == 0) {
		const char *h = getenv("KUBERNETES_SERVICE_HOST");
		const char *p = getenv("KUBERNETES_SERVICE_PORT");

		snprintf(d->url, sizeof(d->url), "https://%s:%s",
			 h != NULL ? h : "kubernetes.default.svc",
			 p != NULL ? p : "443");
		if (d->token_file[0] == '\0')
			snprintf(d->token_file, sizeof(d->token_file),
				 "%s/token", SA_DIR);
		if (d->ca[0] == '\0')
			snprintf(d->ca, sizeof(d->ca), "%s/ca.crt", SA_DIR);
	} else if (strncmp(w[0], "http://", 7) == 0 ||
		   strncmp(w[0], "https://", 8) == 0) {
		snprintf(d->url, sizeof(d->url), "%s", w[0]);
	} else if (kc[0] == '\0' || strcmp(w[0], "-") != 0) {
		snprintf(err, n,
			 "invalid API server '%s': expected http(s)://..., "
			 "in-cluster, or - with kubeconfig=FILE",
			 w[0]);
		return -EINVAL;
	}
	if (kc[0] != '\0' && kubeconfig(d, kc, err, n) != 0)
		return -EINVAL;
	return 0;
}

static int
k_check(const struct lb_as_conf *c, struct lb_cmd_out *out)
{
	struct kdrv *d = malloc(sizeof(*d));
	char err[300];
	int rc;

	if (d == NULL)
		return lb_cmd_error(out, -ENOMEM, "out of memory");
	rc = parse(c->target, d, err, sizeof(err));
	free(d);
	return rc != 0 ? lb_cmd_error(out, rc, "%s", err) : 0;
}

static void *
k_create(const struct lb_as_conf *c, const char *svc, char *err, size_t n)
{
	struct kdrv *d = malloc(sizeof(*d));

	(void)svc;
	if (d == NULL) {
		snprintf(err, n, "out of memory");
		return NULL;
	}
	if (parse(c->target, d, err, n) != 0) {
		free(d);
		return NULL;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	d->multi = curl_multi_init();
	if (d->multi == NULL) {
		snprintf(err, n, "libcurl: cannot create a multi handle");
		free(d);
		return NULL;
	}
	d->replicas = -1;
	return d;
}

/* ---- requests ---- */

static size_t
on_data(char *p, size_t sz, size_t nm, void *arg)
{
	struct kdrv *d = arg;
	size_t n = sz * nm;
	char *r;

	if (d->len + n > (8u << 20))
		return 0; /* an answer this large is not one of ours */
	r = realloc(d->resp, d->len + n + 1);
	if (r == NULL)
		return 0;
	d->resp = r;
	memcpy(d->resp + d->len, p, n);
	d->len += n;
	d->resp[d->len] = '\0';
	return n;
}

/* The bearer token: the kubeconfig's, else the file's (read per request:
 * projected service-account tokens are rotated). */
static void
token(const struct kdrv *d, char *buf, size_t n)
{
	FILE *f;
	size_t l;

	snprintf(buf, n, "%s", d->token);
	if (d->token_file[0] == '\0' || (f = fopen(d->token_file, "r")) == NULL)
		return;
	l = fread(buf, 1, n - 1, f);
	fclose(f);
	while (l > 0 &&
	       (buf[l - 1] == '\n' || buf[l - 1] == '\r' || buf[l - 1] == ' '))
		l--;
	buf[l] = '\0';
}

static int
req_start(struct kdrv *d, enum kop op, const char *method, const char *path,
	  const char *body, struct kinst *ki)
{
	char url[512], tok[4200], auth[4300];

	d->h = curl_easy_init();
	if (d->h == NULL)
		return -ENOMEM;
	snprintf(url, sizeof(url), "%s%s", d->url, path);
	token(d, tok, sizeof(tok));
	d->hdr = curl_slist_append(NULL, "Accept: application/json");
	if (tok[0] != '\0') {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", tok);
		d->hdr = curl_slist_append(d->hdr, auth);
	}
	if (body != NULL) {
		d->hdr = curl_slist_append(
			d->hdr, "Content-Type: application/merge-patch+json");
		snprintf(d->body, sizeof(d->body), "%s", body);
		curl_easy_setopt(d->h, CURLOPT_POSTFIELDS, d->body);
	}
	curl_easy_setopt(d->h, CURLOPT_URL, url);
	curl_easy_setopt(d->h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(d->h, CURLOPT_HTTPHEADER, d->hdr);
	curl_easy_setopt(d->h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(d->h, CURLOPT_WRITEDATA, d);
	curl_easy_setopt(d->h, CURLOPT_TIMEOUT_MS, K_TIMEOUT_MS);
	curl_easy_setopt(d->h, CURLOPT_NOSIGNAL, 1L);
	if (d->ca[0] != '\0')
		curl_easy_setopt(d->h, CURLOPT_CAINFO, d->ca);
	d->len = 0;
	d->op = op;
	d->op_inst = ki;
	curl_multi_add_handle(d->multi, d->h);
	return 0;
}

static void
req_end(struct kdrv *d)
{
	curl_multi_remove_handle(d->multi, d->h);
	curl_easy_cleanup(d->h);
	curl_slist_free_all(d->hdr);
	d->h = NULL;
	d->hdr = NULL;
	d->op = OP_NONE;
	d->op_inst = NULL;
}

/* ---- answers ---- */

static struct kinst *
by_pod(struct kdrv *d, const char *pod)
{
	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
		if ((d->k[i].st == K_UP || d->k[i].st == K_STOPPING) &&
		    strcmp(d->k[i].pod, pod) == 0)
			return &d->k[i];
	return NULL;
}

/* A pod name as Kubernetes makes them (an RFC 1123 subdomain): it goes
 * into request paths and is shown as the instance's id, so anything else
 * from the API server is not taken. */
static bool
pod_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > LB_ORCH_ID_LEN || s[0] == '-' || s[0] == '.' ||
	    s[n - 1] == '-' || s[n - 1] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		      s[i] == '.'))
			return false;
	return true;
}

/* Instances in state @p a or @p b. */
static long
nb_in(const struct kdrv *d, enum kstate a, enum kstate b)
{
	long n = 0;

	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
		n += d->k[i].st == a || d->k[i].st == b;
	return n;
}

/* A ready pod found by the first listing that no instance waited for:
 * adopted, while the replica count has room for it. */
static unsigned int
adopt_pod(struct kdrv *d, const char *pod, const struct lb_conf_ip *ip,
	  uint16_t port, struct lb_orch_ev *ev)
{
	/* Up to the count: pods the driver holds already count. */
	if (d->adopted || nb_in(d, K_UP, K_STOPPING) >= d->replicas)
		return 0;
	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++) {
		if (d->k[i].st != K_FREE)
			continue;
		d->k[i] = (struct kinst){.st = K_UP, .inst = UINT32_MAX};
		snprintf(d->k[i].pod, sizeof(d->k[i].pod), "%s", pod);
		*ev = (struct lb_orch_ev){.kind = LB_ORCH_EV_ADOPTED,
					  .inst = UINT32_MAX,
					  .ip = *ip,
					  .port = port};
		snprintf(ev->id, sizeof(ev->id), "%s", pod);
		return 1;
	}
	return 0;
}

/* Ready endpoints: new ones go to waiting instances (or, the first time,
 * are adopted), stopping instances whose pod is gone are stopped. */
static unsigned int
on_list(struct kdrv *d, json_t *j, struct lb_orch_ev *ev, unsigned int max)
{
	bool seen[LB_AS_INST_MAX] = {false};
	json_t *items = json_object_get(j, "items"), *it, *e;
	unsigned int n = 0, n0;
	bool full = false;
	size_t a, b;

	json_array_foreach(items, a, it)
	{
		json_t *ports = json_object_get(it, "ports");
		json_int_t port = json_integer_value(
			json_object_get(json_array_get(ports, 0), "port"));

		if (port <= 0 || port > 65535)
			continue;
		json_array_foreach(json_object_get(it, "endpoints"), b, e)
		{
			const char *pod = json_string_value(json_object_get(
				json_object_get(e, "targetRef"), "name"));
			const char *addr = json_string_value(json_array_get(
				json_object_get(e, "addresses"), 0));
			json_t *ready = json_object_get(
				json_object_get(e, "conditions"), "ready");
			struct lb_conf_ip ip;
			struct kinst *ki;

			/* addressType IPv4 or IPv6 (an FQDN is no address). */
			if (pod == NULL || addr == NULL || !pod_name_ok(pod) ||
			    lb_cmd_parse_ip(addr, &ip, NULL) != 0)
				continue;
			ki = by_pod(d, pod);
			if (ki != NULL) {
				seen[ki - d->k] = true;
				continue;
			}
			/* "ready" absent means ready (EndpointConditions). */
			if (ready != NULL && !json_is_true(ready))
				continue;
			full |= n >= max;
			n0 = n;
			for (unsigned int i = 0; i < LB_AS_INST_MAX && n < max;
			     i++) {
				if (d->k[i].st != K_WANT)
					continue;
				d->k[i].st = K_UP;
				snprintf(d->k[i].pod, sizeof(d->k[i].pod), "%s",
					 pod);
				seen[i] = true;
				ev[n] = (struct lb_orch_ev){
					.kind = LB_ORCH_EV_UP,
					.inst = d->k[i].inst,
					.ip = ip,
					.port = (uint16_t)port,
				};
				snprintf(ev[n].id, sizeof(ev[n].id), "%s", pod);
				n++;
				break;
			}
			if (n == n0 && n < max)
				n += adopt_pod(d, pod, &ip, (uint16_t)port,
					       &ev[n]);
		}
	}
	/* Adopted pods the events had no room for: the next listing. */
	if (!full)
		d->adopted = true;
	for (unsigned int i = 0; i < LB_AS_INST_MAX && n < max; i++) {
		if (d->k[i].st != K_STOPPING || seen[i] || !d->k[i].marked)
			continue;
		ev[n] = (struct lb_orch_ev){.kind = LB_ORCH_EV_STOPPED,
					    .inst = d->k[i].inst};
		snprintf(ev[n].id, sizeof(ev[n].id), "%s", d->k[i].pod);
		n++;
		d->k[i].st = K_FREE;
	}
	return n;
}

/* What the autoscaler asked for and has not stopped, and the pods it
 * adopted. */
static long
wanted(const struct kdrv *d)
{
	return nb_in(d, K_WANT, K_UP);
}

static unsigned int
on_done(struct kdrv *d, CURLcode cc, uint64_t now, struct lb_orch_ev *ev,
	unsigned int max)
{
	const char *what[] = {"", "read scale", "set scale", "mark pod",
			      "list endpoints"};
	long status = 0;
	json_t *j = NULL;
	unsigned int n = 0;
	enum kop op = d->op;
	struct kinst *ki = d->op_inst;

	curl_easy_getinfo(d->h, CURLINFO_RESPONSE_CODE, &status);
	if (cc == CURLE_OK && status >= 200 && status < 300)
		j = json_loads(d->resp != NULL ? d->resp : "", 0, NULL);
	if (j == NULL) {
		uint64_t b = LB_ORCH_BACKOFF_NS;

		for (unsigned int i = 0;
		     i < d->fails && b < LB_ORCH_BACKOFF_MAX_NS; i++)
			b *= 2;
		d->fails++;
		d->next_ns = now + (b < LB_ORCH_BACKOFF_MAX_NS
					    ? b
					    : LB_ORCH_BACKOFF_MAX_NS);
		ev[0] = (struct lb_orch_ev){.kind = LB_ORCH_EV_ERROR,
					    .inst = ki != NULL ? ki->inst
							       : UINT32_MAX};
		if (cc != CURLE_OK)
			snprintf(ev[0].msg, sizeof(ev[0].msg), "%s: %s",
				 what[op], curl_easy_strerror(cc));
		else
			snprintf(ev[0].msg, sizeof(ev[0].msg), "%s: HTTP %ld",
				 what[op], status);
		return 1;
	}
	d->fails = 0;
	switch (op) {
	case OP_GET_SCALE:
		d->replicas = (long)json_integer_value(json_object_get(
			json_object_get(j, "spec"), "replicas"));
		break;
	case OP_SET_SCALE:
		d->replicas = (long)json_integer_value(json_object_get(
			json_object_get(j, "spec"), "replicas"));
		d->list_ns = now; /* look for the new pods at once */
		break;
	case OP_MARK:
		if (ki != NULL)
			ki->marked = true;
		break;
	case OP_LIST:
		n = on_list(d, j, ev, max);

		d->list_ns = now + K_LIST_EVERY_NS;
		break;
	default:
		break;
	}
	json_decref(j);
	return n;
}

static void
req_list(struct kdrv *d)
{
	char path[384];

	snprintf(path, sizeof(path),
		 "/apis/discovery.k8s.io/v1/namespaces/%s/"
		 "endpointslices?labelSelector=kubernetes.io%%2F"
		 "service-name%%3D%s",
		 d->ns, d->service);
	req_start(d, OP_LIST, "GET", path, NULL, NULL);
}

/* The next request, if one is due. */
static void
next_req(struct kdrv *d, uint64_t now)
{
	char path[384], body[256];
	bool busy = false;

	if (now < d->next_ns)
		return;
	snprintf(path, sizeof(path),
		 "/apis/apps/v1/namespaces/%s/deployments/%s/scale", d->ns,
		 d->deploy);
	if (d->replicas < 0) {
		req_start(d, OP_GET_SCALE, "GET", path, NULL, NULL);
		return;
	}
	if (!d->adopted) {
		req_list(d);
		return;
	}
	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++) {
		struct kinst *ki = &d->k[i];
		char p2[384];

		busy |= ki->st == K_WANT || ki->st == K_STOPPING;
		if (ki->st != K_STOPPING || ki->marked)
			continue;
		snprintf(p2, sizeof(p2), "/api/v1/namespaces/%s/pods/%s", d->ns,
			 ki->pod);
		req_start(d, OP_MARK, "PATCH", p2,
			  "{\"metadata\":{\"annotations\":{\"controller."
			  "kubernetes.io/pod-deletion-cost\":\"-1000000\"}}}",
			  ki);
		return;
	}
	if (wanted(d) != d->replicas) {
		snprintf(body, sizeof(body), "{\"spec\":{\"replicas\":%ld}}",
			 wanted(d));
		req_start(d, OP_SET_SCALE, "PATCH", path, body, NULL);
		return;
	}
	if (busy && now >= d->list_ns)
		req_list(d);
}

/* ---- ops ---- */

static int
k_start(void *dv, uint32_t inst, uint64_t now)
{
	struct kdrv *d = dv;

	(void)now;
	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++) {
		if (d->k[i].st != K_FREE)
			continue;
		d->k[i] = (struct kinst){.st = K_WANT, .inst = inst};
		return 0;
	}
	return -ENOSPC;
}

static int
k_stop(void *dv, uint32_t inst, const char *id, uint64_t now)
{
	struct kdrv *d = dv;

	(void)id;
	(void)now;
	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++) {
		struct kinst *ki = &d->k[i];

		/* UINT32_MAX: adopted pods no instance stands for. */
		if (ki->st == K_FREE || ki->inst != inst || inst == UINT32_MAX)
			continue;
		if (ki->st == K_WANT) {
			/* No pod of its own yet: one replica fewer. */
			ki->st = K_FREE;
			return 1;
		}
		if (ki->st == K_UP) {
			ki->st = K_STOPPING;
			ki->marked = false;
		}
		return 0;
	}
	return 1;
}

static unsigned int
k_poll(void *dv, uint64_t now, struct lb_orch_ev *ev, unsigned int max)
{
	struct kdrv *d = dv;
	unsigned int n = 0;
	int running;
	CURLMsg *msg;
	int left;

	if (d->op == OP_NONE)
		next_req(d, now);
	if (d->op == OP_NONE)
		return 0;
	curl_multi_perform(d->multi, &running);

	while ((msg = curl_multi_info_read(d->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE || msg->easy_handle != d->h)
			continue;
		n = on_done(d, msg->data.result, now, ev, max);
		req_end(d);
		break;
	}
	return n;
}

static int
k_adopt(void *dv, const char *id, uint32_t inst)
{
	struct kdrv *d = dv;

	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
		if (d->k[i].st == K_UP && d->k[i].inst == UINT32_MAX &&
		    strcmp(d->k[i].pod, id) == 0) {
			d->k[i].inst = inst;
			return 0;
		}
	return -ENOENT;
}

static bool
k_synced(void *dv)
{
	return ((struct kdrv *)dv)->adopted;
}

static unsigned int
k_busy(void *dv)
{
	struct kdrv *d = dv;
	unsigned int n = d->op != OP_NONE;

	/* An adopted pod the runtime did not take is the Deployment's: it
	 * keeps its replica, and nothing waits for it. */
	for (unsigned int i = 0; i < LB_AS_INST_MAX; i++)
		n += d->k[i].st != K_FREE && d->k[i].inst != UINT32_MAX;
	return n;
}

static void
k_destroy(void *dv, uint64_t wait_ns)
{
	struct kdrv *d = dv;

	/* The Deployment keeps its replicas: they are not lb-control's
	 * processes, and a restarted lb-control should find them. */
	(void)wait_ns;
	if (d->op != OP_NONE)
		req_end(d);
	curl_multi_cleanup(d->multi);
	free(d->resp);
	free(d);
}

static const struct lb_orch_ops k8s_ops = {
	.name = "kubernetes",
	.check = k_check,
	.create = k_create,
	.start = k_start,
	.stop = k_stop,
	.poll = k_poll,
	.adopt = k_adopt,
	.synced = k_synced,
	.busy = k_busy,
	.destroy = k_destroy,
};

LB_ORCH_REGISTER(k8s_ops);
