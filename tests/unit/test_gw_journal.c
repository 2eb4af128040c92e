// SPDX-License-Identifier: MIT
/*
 * test_gw_journal.c - logging targets and the per-peer rate limit.
 *
 *   1. 25 lines from one client host (several ports) in one second: 10
 *      written, 15 counted in GW_CTR_LOG_SUPPRESSED; another peer is not
 *      limited; the next second starts with "suppressed 15 messages";
 *   2. gw_log_target_auto(): journal only when JOURNAL_STREAM names stderr.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "config.h"
#include "log.h"

static unsigned count_lines(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	unsigned n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			n++;
	fclose(f);
	return n;
}

/* 1 */
static void test_rate_limit(void **state)
{
	char path[] = "/tmp/test_gw_journal.XXXXXX";
	struct gw_stats *st = calloc(1, sizeof(*st));
	struct gw_log lg = { .gl_level = CFG_LOG_INFO, .gl_target = GW_LOG_STDERR };
	int fd = mkstemp(path), saved = dup(2);
	const struct gw_log *lp = &lg;	/* the macros test the pointer */
	char name[64];

	(void)state;
	lg.gl_rl = gw_log_rl_new(st);
	assert_non_null(lg.gl_rl);
	/* start at the beginning of a second so the 25 lines share it */
	while (gw_now_ms() % 1000 > 200)
		usleep(10000);
	fflush(stderr);
	dup2(fd, 2);
	for (int i = 0; i < 25; i++) {
		struct gw_log_ev ev = { .le_xid = (uint32_t)i, .le_has_xid = true, .le_client = name,
					.le_error = "garbage" };

		snprintf(name, sizeof(name), "10.0.0.7:%d", 700 + i % 3);
		gw_log_ev(lp, CFG_LOG_WARN, &ev, "noisy %d", i);
	}
	for (int i = 0; i < 3; i++) {
		struct gw_log_ev ev = { .le_client = "10.0.0.8:900" };

		gw_log_ev(lp, CFG_LOG_WARN, &ev, "quiet %d", i);
	}
	usleep(1100 * 1000);
	{
		struct gw_log_ev ev = { .le_client = "10.0.0.7:701" };

		gw_log_ev(lp, CFG_LOG_WARN, &ev, "again from .7");
	}
	/* below the level: neither written nor counted */
	{
		struct gw_log_ev ev = { .le_client = "10.0.0.9:1" };

		gw_log_ev(lp, CFG_LOG_DEBUG, &ev, "debug");
	}
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	assert_int_equal(count_lines(path, "noisy "), 10);
	assert_int_equal(count_lines(path, "quiet "), 3);
	assert_int_equal(count_lines(path, "peer 10.0.0.7:701: suppressed 15 messages"), 1);
	assert_int_equal(count_lines(path, "again from .7"), 1);
	assert_int_equal(count_lines(path, "debug"), 0);
	assert_int_equal(st->gs_ctr[GW_CTR_LOG_SUPPRESSED], 15);
	unlink(path);
	gw_log_rl_free(lg.gl_rl);
	free(st);
}

/* 2 */
static void test_target_auto(void **state)
{
	struct stat sb;
	char v[64];

	(void)state;
	unsetenv("JOURNAL_STREAM");
	assert_int_equal(gw_log_target_auto(), GW_LOG_STDERR);
	setenv("JOURNAL_STREAM", "1:2", 1);
	assert_int_equal(gw_log_target_auto(), GW_LOG_STDERR);
	assert_int_equal(fstat(2, &sb), 0);
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)sb.st_dev,
		 (unsigned long long)sb.st_ino);
	setenv("JOURNAL_STREAM", v, 1);
	assert_int_equal(gw_log_target_auto(), GW_LOG_JOURNAL);
	setenv("JOURNAL_STREAM", "garbage", 1);
	assert_int_equal(gw_log_target_auto(), GW_LOG_STDERR);
	unsetenv("JOURNAL_STREAM");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_limit),
		cmocka_unit_test(test_target_auto),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
