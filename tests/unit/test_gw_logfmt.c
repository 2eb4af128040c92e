// SPDX-License-Identifier: MIT
/* Unit tests of the log line on standard error (gateway/logfmt.c,
 * log_format): each format's exact shape at a fixed time, escaping, the
 * peer's fields, the worker's number; JSON lines parse; lines written by gw_logf and gw_log_ev
 * start with the time; log_format is a key of the configuration. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <regex.h>
#include <unistd.h>
#include <cmocka.h>

#include <json.h>

#include "config.h"
#include "log.h"

#define T_MS 1765155144123ull	/* 2025-12-08T00:52:24.123Z */

/* 1: the three formats, without and with a peer */
static void t01_shapes(void **state)
{
	static const struct gw_log_ev ev = { .le_client = "10.0.0.7:876", .le_xid = 0x1234,
					     .le_has_xid = true, .le_prog = 100003, .le_vers = 3,
					     .le_proc = 1, .le_error = "garbage" };
	static const struct {
		enum cfg_log_format fmt;
		const struct gw_log_ev *ev;
		const char *msg, *want;
		unsigned worker;	/* gl_worker: number + 1 */
	} cases[] = {
		/* 1 */ { CFG_LOGFMT_TEXT, NULL, "reload: applied",
			  "2025-12-08T00:52:24.123Z rpcrdma-gw[info] fn: reload: applied\n", 0 },
		/* 2 */ { CFG_LOGFMT_LOGFMT, NULL, "reload: applied",
			  "ts=2025-12-08T00:52:24.123Z level=info func=fn msg=\"reload: applied\"\n", 0 },
		/* 3 */ { CFG_LOGFMT_LOGFMT, &ev, "bad \"record\"",
			  "ts=2025-12-08T00:52:24.123Z level=info func=fn msg=\"bad \\\"record\\\"\" "
			  "client=10.0.0.7:876 xid=0x1234 prog=100003 vers=3 proc=1 error=garbage\n", 0 },
		/* 4 */ { CFG_LOGFMT_JSON, NULL, "a\tb\x01",
			  "{\"ts\":\"2025-12-08T00:52:24.123Z\",\"level\":\"info\",\"func\":\"fn\","
			  "\"msg\":\"a\\tb\\u0001\"}\n", 0 },
		/* 5 */ { CFG_LOGFMT_JSON, &ev, "x",
			  "{\"ts\":\"2025-12-08T00:52:24.123Z\",\"level\":\"info\",\"func\":\"fn\","
			  "\"msg\":\"x\",\"client\":\"10.0.0.7:876\",\"xid\":\"0x1234\",\"prog\":\"100003\","
			  "\"vers\":\"3\",\"proc\":\"1\",\"error\":\"garbage\"}\n", 0 },
		/* 6 */ { CFG_LOGFMT_TEXT, &ev, "x",
			  "2025-12-08T00:52:24.123Z rpcrdma-gw[info] fn: x\n", 0 },
		/* 7 */ { CFG_LOGFMT_TEXT, NULL, "x",
			  "2025-12-08T00:52:24.123Z rpcrdma-gw[info] (worker 1) fn: x\n", 2 },
		/* 8 */ { CFG_LOGFMT_LOGFMT, NULL, "x",
			  "ts=2025-12-08T00:52:24.123Z level=info worker=1 func=fn msg=x\n", 2 },
		/* 9 */ { CFG_LOGFMT_JSON, NULL, "x",
			  "{\"ts\":\"2025-12-08T00:52:24.123Z\",\"level\":\"info\",\"worker\":\"1\","
			  "\"func\":\"fn\",\"msg\":\"x\"}\n", 2 },
	};
	char line[2048];

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = gw_log_format(cases[i].fmt, T_MS, CFG_LOG_INFO, cases[i].worker, "fn", cases[i].ev,
					 cases[i].msg, line, sizeof(line));

		if (strcmp(line, cases[i].want))
			fail_msg("case %u:\n got  %s want %s", i + 1, line, cases[i].want);
		assert_int_equal(n, strlen(line));
	}
}

/* 2: a long message of control bytes is cut at 1024 bytes and its JSON
 * line still parses */
static void t02_json_long(void **state)
{
	char msg[3000], line[8192];
	struct json_object *jo, *m;

	(void)state;
	memset(msg, '\x01', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	gw_log_format(CFG_LOGFMT_JSON, T_MS, CFG_LOG_WARN, 0, "fn", NULL, msg, line, sizeof(line));
	assert_int_equal(line[strlen(line) - 1], '\n');
	jo = json_tokener_parse(line);
	assert_non_null(jo);
	assert_true(json_object_object_get_ex(jo, "msg", &m));
	assert_int_equal(json_object_get_string_len(m), 1024);
	json_object_put(jo);
}

/* 3: what gw_logf and gw_log_ev write: the time first, the format asked */
static void t03_written(void **state)
{
	char path[] = "/tmp/test_gw_logfmt.XXXXXX", line[1024];
	int fd = mkstemp(path), saved = dup(2);
	struct gw_log lg = { .gl_level = CFG_LOG_INFO, .gl_target = GW_LOG_STDERR,
			     .gl_format = CFG_LOGFMT_TEXT };
	const struct gw_log *lp = &lg;
	regex_t re;
	FILE *f;

	(void)state;
	assert_int_equal(regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z "
				 "rpcrdma-gw\\[warn\\] t03_written: plain 7$", REG_EXTENDED), 0);
	fflush(stderr);
	dup2(fd, 2);
	gw_warn(lp, "plain %d", 7);
	lg.gl_format = CFG_LOGFMT_LOGFMT;
	gw_log_client(lp, CFG_LOG_WARN, "10.0.0.9:1", "peer line");
	dup2(saved, 2);
	close(saved);
	close(fd);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	line[strcspn(line, "\n")] = '\0';
	if (regexec(&re, line, 0, NULL, 0))
		fail_msg("text line: '%s'", line);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_int_equal(strncmp(line, "ts=20", 5), 0);
	assert_non_null(strstr(line, " level=warn func=t03_written msg=\"peer line\" client=10.0.0.9:1\n"));
	fclose(f);
	unlink(path);
	regfree(&re);
}

/* 4: the key */
static void t04_key(void **state)
{
	char err[256];
	struct cfg *cf;

	(void)state;
	cf = cfg_parse_string("[gateway]\nlog_format = json\n[backend s]\naddress = 10.0.0.1\n", "t",
			      NULL, err, sizeof(err));
	if (!cf)
		fail_msg("%s", err);
	assert_int_equal(cf->cf_log_format, CFG_LOGFMT_JSON);
	cfg_free(cf);
	assert_null(cfg_parse_string("log_format = xml\n[backend s]\naddress = 10.0.0.1\n", "t", NULL,
				     err, sizeof(err)));
	assert_non_null(strstr(err, "t:1: log_format: invalid value 'xml' (text, logfmt or json)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_shapes),
		cmocka_unit_test(t02_json_long),
		cmocka_unit_test(t03_written),
		cmocka_unit_test(t04_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
