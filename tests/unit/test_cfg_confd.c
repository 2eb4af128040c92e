// SPDX-License-Identifier: MIT
/* Unit tests of the conf.d/ directory (config/config.c, config_src.c): the
 * *.conf files beside the main file's conf.d/ are read after it in name
 * order, each starting in [gateway]; other names are ignored; an error in
 * one names that file and its line; a key set twice across files names
 * both places; cfg_key_where() says which file set a key; a second load
 * (a reload) reads the directory again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "config.h"

static char g_dir[64];

static void put(const char *name, const char *text)
{
	char p[160];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", g_dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void drop(const char *name)
{
	char p[160];

	snprintf(p, sizeof(p), "%s/%s", g_dir, name);
	unlink(p);
}

static struct cfg *load(char *err, size_t len)
{
	char p[160];

	snprintf(p, sizeof(p), "%s/gw.conf", g_dir);
	return cfg_load(p, NULL, err, len);
}

static int setup(void **state)
{
	char p[128];

	(void)state;
	snprintf(g_dir, sizeof(g_dir), "/tmp/test_cfg_confd.XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	snprintf(p, sizeof(p), "%s/conf.d", g_dir);
	return mkdir(p, 0755);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* 1: read in name order after the main file, each from [gateway]. */
static void t01_order(void **state)
{
	char err[512], where[256], want[256];
	struct cfg *cf;

	(void)state;
	put("gw.conf", "[gateway]\nidle_timeout = 10\n[backend s]\naddress = 10.0.0.1\n");
	put("conf.d/20-late.conf", "[route nfs]\nprogram = nfs\ntransport = tcp\n");
	put("conf.d/10-early.conf", "log_level = debug\n");
	put("conf.d/notes.txt", "this is no configuration = at all\n");
	cf = load(err, sizeof(err));
	if (!cf)
		fail_msg("%s", err);
	assert_int_equal(cf->cf_nfiles, 3);
	assert_non_null(strstr(cf->cf_files[1], "/conf.d/10-early.conf"));
	assert_non_null(strstr(cf->cf_files[2], "/conf.d/20-late.conf"));
	assert_int_equal(cf->cf_log_level, CFG_LOG_DEBUG);	/* no header: [gateway] */
	assert_int_equal(cf->cf_idle_timeout_ms, 10000);
	assert_int_equal(cf->cf_nroutes, 1);
	assert_int_equal(cf->cf_routes[0].cr_transport, CFG_TRANSPORT_TCP);
	assert_true(cfg_key_where(cf, 0, "log_level", where, sizeof(where)));
	snprintf(want, sizeof(want), "%s/conf.d/10-early.conf:1", g_dir);
	assert_string_equal(where, want);
	assert_true(cfg_key_where(cf, 0, "idle_timeout", where, sizeof(where)));
	snprintf(want, sizeof(want), "%s/gw.conf:2", g_dir);
	assert_string_equal(where, want);
	assert_false(cfg_key_where(cf, 0, "max_clients", where, sizeof(where)));
	cfg_free(cf);
	drop("conf.d/20-late.conf");
	drop("conf.d/10-early.conf");
	drop("conf.d/notes.txt");
}

/* 2: errors name the file of conf.d and its line. */
static void t02_errors(void **state)
{
	static const struct { const char *text; const char *err; } cases[] = {
		/* 1 */ { "\n[gateway]\nbogus = 1\n", "conf.d/50-x.conf:3: unknown key 'bogus' in [gateway]" },
		/* 2 */ { "# comment\nthis is not ini\n", "conf.d/50-x.conf:2: syntax error" },
		/* 3 */ { "idle_timeout = 5\n", "conf.d/50-x.conf:1: idle_timeout: duplicate key in "
			  "[gateway] (first at " },
		/* 4 */ { "[backend s]\naddress = 10.0.0.2\n", "conf.d/50-x.conf:1: backend 's' defined "
			  "twice (first at " },
	};
	char err[512];

	(void)state;
	put("gw.conf", "[gateway]\nidle_timeout = 10\n[backend s]\naddress = 10.0.0.1\n");
	put("conf.d/10-ok.conf", "log_level = warn\n");
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		put("conf.d/50-x.conf", cases[i].text);
		if (load(err, sizeof(err)))
			fail_msg("case %u: parsed, want '%s'", i + 1, cases[i].err);
		if (!strstr(err, cases[i].err))
			fail_msg("case %u: got '%s', want '%s'", i + 1, err, cases[i].err);
		if (i >= 2 && !strstr(err, "/gw.conf:"))
			fail_msg("case %u: '%s' does not name the main file's line", i + 1, err);
	}
	drop("conf.d/50-x.conf");
	drop("conf.d/10-ok.conf");
}

/* 3: a second load reads the directory again (what a reload does). */
static void t03_reload(void **state)
{
	char err[512];
	struct cfg *a, *b;
	struct cfg_diff d;

	(void)state;
	put("gw.conf", "[backend s]\naddress = 10.0.0.1\n");
	put("conf.d/10-limits.conf", "calls_per_client = 16\n");
	a = load(err, sizeof(err));
	if (!a)
		fail_msg("%s", err);
	put("conf.d/10-limits.conf", "calls_per_client = 32\n");
	b = load(err, sizeof(err));
	if (!b)
		fail_msg("%s", err);
	assert_int_equal(a->cf_calls_per_client, 16);
	assert_int_equal(b->cf_calls_per_client, 32);
	cfg_diff(a, b, &d);
	assert_true(d.cdf_values);
	assert_int_equal(d.cdf_nrestart, 0);
	cfg_free(a);
	cfg_free(b);
	drop("conf.d/10-limits.conf");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_order),
		cmocka_unit_test(t02_errors),
		cmocka_unit_test(t03_reload),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
