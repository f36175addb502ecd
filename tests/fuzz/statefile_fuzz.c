/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lb-control's start-up path for a state file someone else may have
 * edited: the file read back whole (lb_statefile_read), then applied to an
 * empty configuration as lb-control does. Invariants: the text read is the
 * file's bytes exactly, or -EINVAL when they hold a NUL; a state file that
 * loads saves to a text that loads to the same save; that save written with
 * lb_statefile_write() reads back unchanged.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "statefile.h"
#include "scratch.h"

static char dir[64], path[96];

static void
cleanup(void)
{
	char tmp[112];

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp);
	unlink(path);
	rmdir(dir);
}

static void
init_once(void)
{
	/* tmpfs when there is one: the writes' fsync costs nothing there. */
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	if (dir[0] != '\0')
		return;
	snprintf(dir, sizeof(dir), "%s/lb-fuzz-state.XXXXXX", base);
	FUZZ_CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/state.conf", dir);
	atexit(cleanup);
}

static void
put(const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(write(fd, data, size) == (ssize_t)size);
	close(fd);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_conf s;
	char err[LB_CMD_ERR_MAX], *text = NULL, *again = NULL;
	struct lb_cmd_out out;
	size_t len = 0, len2 = 0;
	int rc;

	if (size > 65536)
		return 0;
	init_once();
	if (s.reg == NULL)
		fz_conf_open(&s);
	put(data, size);
	rc = lb_statefile_read(path, &text, &len, err, sizeof(err));
	if (memchr(data, '\0', size) != NULL) {
		FUZZ_CHECK(rc == -EINVAL && text == NULL);
		FUZZ_CHECK(strchr(err, '\n') == NULL);
		return 0;
	}
	FUZZ_CHECK(rc == 0 && len == size && !memcmp(text, data, size));
	fz_conf_reset(&s);
	lb_cmd_out_init(&out);
	if (fz_conf_apply(&s, text, len, path, &out) == 0) {
		fz_conf_check_roundtrip(&s);
		lb_cmd_out_reset(&out);
		FUZZ_CHECK(lb_conf_save(s.conf, &out) == 0);
		FUZZ_CHECK(lb_statefile_write(path, lb_cmd_out_text(&out),
					      out.len, err, sizeof(err)) == 0);
		FUZZ_CHECK(lb_statefile_read(path, &again, &len2, err,
					     sizeof(err)) == 0);
		FUZZ_CHECK(len2 == out.len &&
			   !memcmp(again, lb_cmd_out_text(&out), len2));
		free(again);
	}
	lb_cmd_out_free(&out);
	free(text);
	return 0;
}
