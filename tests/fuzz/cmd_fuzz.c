/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A file of commands, as `lbctl apply` sends it, through the command
 * registry and the configuration commands on a scratch configuration.
 * Invariants: every line the tokenizer accepts reads back the same words
 * once each word is quoted by lb_cmd_quote(); the configuration is valid
 * after every apply, restored whole when a line fails, with a one-line
 * error naming the line; a configuration that applied saves, re-applies
 * and saves again to the same text; when its feedback header names make
 * a header database (what lb-control publishes), the database compiles,
 * serialises and loads, and every http service finds each header it named
 * under that name.
 */
#include <string.h>

#include <strings.h>

#include "fuzz.h"
#include "lb/hdr_conf.h"
#include "scratch.h"

static void
check_tokens(const char *text, size_t len)
{
	static struct lb_cmd_line a, b;
	static char line[LB_CMD_LINE_MAX * 3 + 8];
	struct lb_cmd_out out;
	const char *p = text, *end = text + len;

	lb_cmd_out_init(&out);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		size_t w = 0;
		int rc;

		if (n <= LB_CMD_LINE_MAX + 1 && memchr(p, '\0', n) == NULL) {
			memcpy(line, p, n);
			line[n] = '\0';
			lb_cmd_out_reset(&out);
			rc = lb_cmd_tokenize(line, &a, &out);
			if (rc != 0) {
				FUZZ_CHECK(rc == -EINVAL || rc == -E2BIG);
				FUZZ_CHECK(lb_cmd_out_errmsg(&out)[0] != '\0');
			}
			for (unsigned int i = 0; rc == 0 && i < a.argc; i++) {
				int q = lb_cmd_quote(a.argv[i], line + w,
						     sizeof(line) - w - 1);

				FUZZ_CHECK(q >= 0);
				w += (size_t)q;
				line[w++] = ' ';
			}
			line[w] = '\0';
			/* Quoting may lengthen the line past the limit. */
			if (rc == 0 && w <= LB_CMD_LINE_MAX) {
				lb_cmd_out_reset(&out);
				FUZZ_CHECK(lb_cmd_tokenize(line, &b, &out) == 0);
				FUZZ_CHECK(b.argc == a.argc);
				for (unsigned int i = 0; i < a.argc; i++)
					FUZZ_CHECK(!strcmp(a.argv[i],
							   b.argv[i]));
			}
		}
		p += n + 1;
	}
	lb_cmd_out_free(&out);
}

static void
check_headers(const struct lb_conf *c)
{
	static struct lb_hdr_cfg last;
	static int have_last;
	struct lb_hdr_cfg cfg;
	struct lb_hdr_db *db;
	char err[LB_CMD_ERR_MAX];
	void *blob;
	size_t len;

	memset(&cfg, 0, sizeof(cfg));
	if (lb_hdr_conf_build(c, &cfg, err, sizeof(err)) != 0) {
		FUZZ_CHECK(err[0] != '\0');
		return;
	}
	FUZZ_CHECK(cfg.nb_fields >= 1 && cfg.nb_fields <= LB_HDR_MAX_FIELDS);
	for (unsigned int i = 0; i < lb_conf_nb_svcs(c); i++) {
		const struct lb_conf_svc *sv = lb_conf_svc_at(c, i);
		struct lb_hdr_map map;

		if (!sv->opts.http)
			continue;
		lb_hdr_conf_map(&cfg, &sv->opts, &map);
		for (unsigned int h = 0; h < LB_CONF_HDR_NB; h++) {
			FUZZ_CHECK(map.f[h] >= 0 &&
				   (unsigned int)map.f[h] < cfg.nb_fields);
			FUZZ_CHECK(!strcasecmp(cfg.fields[map.f[h]].name,
					       sv->opts.hdr[h]));
		}
	}
	/* Compiling costs milliseconds: only a set of names not seen last
	 * time. */
	if (have_last && !memcmp(&last, &cfg, sizeof(cfg)))
		return;
	FUZZ_CHECK(lb_hdr_conf_blob(&cfg, &blob, &len) == 0);
	db = lb_hdr_db_deserialize(blob, len);
	FUZZ_CHECK(db != NULL);
	FUZZ_CHECK(lb_hdr_db_cfg(db)->nb_fields == cfg.nb_fields);
	lb_hdr_db_free(db);
	free(blob);
	last = cfg;
	have_last = 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_conf s;
	struct lb_cmd_out out;

	if (size > 65536)
		return 0;
	check_tokens((const char *)data, size);
	if (s.reg == NULL)
		fz_conf_open(&s);
	fz_conf_reset(&s);
	lb_cmd_out_init(&out);
	if (fz_conf_apply(&s, (const char *)data, size, "in", &out) == 0) {
		fz_conf_check_roundtrip(&s);
		check_headers(s.conf);
	}
	lb_cmd_out_free(&out);
	return 0;
}
