/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a client writes to lb-control's API socket: bytes cut into reads as
 * the input says, assembled into lines (lb_api_rbuf), each decoded and run
 * (lb_api_handle) against the command registry on a scratch configuration,
 * as lb-control's event loop does.
 *
 * Input: one byte giving the read size (1..256), then the bytes.
 * Invariants: the lines handed out are exactly the input's lines (a CR
 * before the LF dropped); a decoded request respects the command-line
 * limits; every response is one line of JSON, an object with "v": 1 and
 * "ok" matching the code returned, whose text and error hold no control
 * character a terminal would act on; the configuration is valid after
 * every request.
 */
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "api.h"
#include "scratch.h"

static struct fz_conf s;

static int
exec(void *ctx, int argc, char **argv, struct lb_cmd_out *out, json_t **data)
{
	struct fz_conf *c = ctx;
	struct lb_cmd_out v;
	int rc;

	FUZZ_CHECK(argv[argc] == NULL);
	*data = NULL;
	FUZZ_CHECK(lb_conf_copy(c->backup, c->conf) == 0);
	rc = lb_cmd_exec(c->reg, argc, argv, out);
	if (rc != 0)
		FUZZ_CHECK(lb_conf_copy(c->conf, c->backup) == 0);
	lb_cmd_out_init(&v);
	FUZZ_CHECK(lb_conf_validate(c->conf, &v) == 0);
	lb_cmd_out_free(&v);
	return rc;
}

static int
apply(void *ctx, const char *text, size_t len, const char *name,
      struct lb_cmd_out *out)
{
	FUZZ_CHECK(strlen(text) == len);
	return fz_conf_apply(ctx, text, len, name, out);
}

static const struct lb_api_ops ops = {.exec = exec, .apply = apply};

static void
check_request(const char *line, size_t len)
{
	struct lb_api_req req;
	char err[LB_CMD_ERR_MAX];
	int rc;

	err[0] = '\0';
	rc = lb_api_parse(line, len, &req, err, sizeof(err));
	if (rc != 0) {
		FUZZ_CHECK(rc == -EINVAL || rc == -E2BIG ||
			   rc == -EOPNOTSUPP || rc == -ENOMEM);
		FUZZ_CHECK(err[0] != '\0' && strchr(err, '\n') == NULL);
		FUZZ_CHECK(req.argv == NULL && req.apply == NULL);
		return;
	}
	if (req.kind == LB_API_ARGV) {
		FUZZ_CHECK(req.argc <= LB_CMD_ARGC_MAX);
		FUZZ_CHECK(req.argv[req.argc] == NULL);
		for (unsigned int i = 0; i < req.argc; i++) {
			size_t n = strlen(req.argv[i]);

			FUZZ_CHECK(n <= LB_CMD_ARG_MAX);
			for (size_t j = 0; j < n; j++) {
				unsigned char c = (unsigned char)req.argv[i][j];

				FUZZ_CHECK((c >= 0x20 || c == '\t') &&
					   c != 0x7f);
			}
		}
	} else {
		FUZZ_CHECK(req.kind == LB_API_APPLY);
		FUZZ_CHECK(req.apply != NULL && req.name != NULL);
		FUZZ_CHECK(strlen(req.name) >= 1 &&
			   strlen(req.name) <= LB_API_NAME_MAX);
	}
	lb_api_req_free(&req);
}

static void
check_response(const char *r, size_t n, int code)
{
	json_error_t je;
	json_t *o, *ok, *v;

	FUZZ_CHECK(r != NULL && n > 0 && r[n - 1] == '\n');
	FUZZ_CHECK(memchr(r, '\n', n - 1) == NULL);
	FUZZ_CHECK(strlen(r) == n);
	o = json_loadb(r, n, 0, &je);
	FUZZ_CHECK(o != NULL && json_is_object(o));
	v = json_object_get(o, "v");
	ok = json_object_get(o, "ok");
	FUZZ_CHECK(json_is_integer(v) && json_integer_value(v) == 1);
	FUZZ_CHECK(json_is_boolean(ok));
	FUZZ_CHECK(json_is_true(ok) == (code == 0));
	if (code != 0) {
		json_t *c = json_object_get(o, "code");

		FUZZ_CHECK(json_is_integer(c) && json_integer_value(c) == code);
		FUZZ_CHECK(json_is_string(json_object_get(o, "error")));
	} else {
		FUZZ_CHECK(json_is_string(json_object_get(o, "text")));
	}
	/* Nothing for a terminal to act on in what lbctl prints. */
	for (const char *k = "text"; k != NULL;
	     k = strcmp(k, "text") == 0 ? "error" : NULL) {
		const char *t = json_string_value(json_object_get(o, k));

		for (; t != NULL && *t != '\0'; t++) {
			unsigned char c = (unsigned char)*t;

			FUZZ_CHECK(c >= 0x20 || c == '\n' || c == '\t');
			FUZZ_CHECK(c != 0x7f);
			FUZZ_CHECK(!(c == 0xc2 && (unsigned char)t[1] >= 0x80 &&
				     (unsigned char)t[1] <= 0x9f));
		}
	}
	json_decref(o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lb_api_rbuf rb;
	const uint8_t *p, *end, *exp;
	size_t piece;
	char *line;
	size_t len;
	int rc;

	if (size < 1 || size > 65536)
		return 0;
	if (s.reg == NULL)
		fz_conf_open(&s);
	fz_conf_reset(&s);
	piece = (size_t)data[0] + 1;
	p = exp = data + 1;
	end = data + size;
	lb_api_rbuf_init(&rb);
	while (p < end) {
		size_t k = (size_t)(end - p) < piece ? (size_t)(end - p) : piece;

		FUZZ_CHECK(lb_api_rbuf_feed(&rb, p, k) == 0);
		p += k;
		while ((rc = lb_api_rbuf_next(&rb, &line, &len)) == 1) {
			const uint8_t *nl = memchr(exp, '\n',
						   (size_t)(end - exp));
			size_t want;
			char *resp;
			size_t rlen;
			int code;

			FUZZ_CHECK(nl != NULL);
			want = (size_t)(nl - exp);
			if (want > 0 && exp[want - 1] == '\r')
				want--;
			FUZZ_CHECK(len == want && !memcmp(line, exp, len));
			FUZZ_CHECK(line[len] == '\0');
			exp = nl + 1;
			check_request(line, len);
			resp = lb_api_handle(&ops, &s, line, len, &rlen, &code);
			check_response(resp, rlen, code);
			free(resp);
		}
		FUZZ_CHECK(rc == 0);
	}
	FUZZ_CHECK(lb_api_rbuf_partial(&rb) == (exp < end));
	lb_api_rbuf_free(&rb);
	return 0;
}
