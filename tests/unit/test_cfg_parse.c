// SPDX-License-Identifier: MIT
/* Unit tests for the configuration parser (config/config.c): a numbered
 * table of files and the exact `file:line: reason` each must produce. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "config.h"

#define B "[backend s]\naddress = 10.99.0.1\n"
#define A21 "aaaaaaaaaaaaaaaaaaaaa"
/* 189 characters: "address=" + A189 fits a line, "address = " + A189 (the dump) not */
#define A189 A21 A21 A21 A21 A21 A21 A21 A21 A21

/* Case table: text, expected error ("" = must parse). Substring match. */
static const struct {
	const char *text;
	const char *err;
} cases[] = {
	/*  1 */ { B, "" },
	/*  2 */ { "", "t.conf: no [backend NAME] section" },
	/*  3 */ { "[backend s]\nport = 2049\n", "t.conf:1: backend 's' has no address" },
	/*  4 */ { B "bogus = 1\n", "t.conf:3: unknown key 'bogus' in [backend s]" },
	/*  5 */ { B "[frob]\nx = 1\n", "t.conf:3: unknown section [frob]" },
	/*  6 */ { "[gateway]\nlisten = 1.2.3.4:99999\n" B, "t.conf:2: listen: '1.2.3.4:99999' is not" },
	/*  7 */ { "[gateway]\nlog_level = loud\n" B, "t.conf:2: log_level: invalid value 'loud'" },
	/*  8 */ { B "registration = fmr\n", "t.conf:3: registration: invalid value 'fmr'" },
	/*  9 */ { B "inline_send = 1500\n", "t.conf:3: inline_send: invalid value '1500'" },
	/* 10 */ { B "[route r]\nprogram = nfs\nbackend = nope\n", "t.conf:5: route 'r': no backend named 'nope'" },
	/* 11 */ { B "[route r]\nbackend = s\n", "t.conf:3: route 'r' has no program" },
	/* 12 */ { B "[route a]\nprogram = 100003\n[route b]\nprogram = nfs\n",
		   "t.conf:5: route 'b': program 100003 already routed by 'a'" },
	/* 13 */ { B "[backend s]\naddress = x\n", "t.conf:3: backend 's' defined twice (first at line 1)" },
	/* 14 */ { "[gateway]\nmax_record = 64m\n" B, "spans more than" },
	/* 15 */ { "[gateway]\nbytes_per_client = 4k\n" B, "bytes_per_client 4096 is below max_record" },
	/* 16 */ { "this is not ini\n", "t.conf:1: syntax error" },
	/* 17 */ { "[gateway]\nidle_timeout = soon\n" B, "t.conf:2: idle_timeout: invalid value 'soon'" },
	/* 18 */ { B "[route r]\nprogram = mount\ntransport = udp\n", "t.conf:5: transport: invalid value 'udp'" },
	/* 19 */ { B "[route r]\nprogram = -5\n", "t.conf:4: program: invalid value '-5'" },
	/* 20 */ { "[backend b1]\naddress = a\n[backend b2]\naddress = b\n[route r]\nprogram = nfs\n",
		   "t.conf:5: route 'r' has no backend (needed with several backends)" },
	/* 21 */ { "[gateway]\nlisten = [::1]:2050\nlisten = 127.0.0.1\n"
		   "max_record = 256k\nidle_timeout = 500ms\n" B
		   "[route n]\nprogram = nfs\nversions = 3-4\ntransport = tcp\nport = 2049\n", "" },
	/* 22 */ { "[gateway]\nbuffer_size = 5000\n" B, "t.conf:2: buffer_size: invalid value '5000'" },
	/* 23 */ { "[gateway]\n; comment\n# comment\n\ncalls_per_client = 0\n" B,
		   "t.conf:5: calls_per_client: invalid value '0'" },
	/* 24 */ { "[backend bad name]\naddress = x\n", "t.conf:1: backend name 'bad name' must be" },
	/* 25 */ { B "ccp = maybe\n", "t.conf:3: ccp: invalid value 'maybe'" },
	/* 26 */ { B "ccp = on\n", "" },
	/* 27 */ { B "port = 2049\nport = 2050\n", "t.conf:4: port: duplicate key in [backend s] (first at line 3)" },
	/* 28 */ { "[gateway]\nlog_level = info\n" B "[gateway]\nlog_level = debug\n",
		   "t.conf:6: log_level: duplicate key in [gateway] (first at line 2)" },
	/* 29 */ { B "[route r]\nprogram = nfs\nprogram = mount\n",
		   "t.conf:5: program: duplicate key in [route r] (first at line 4)" },
	/* 30 */ { "log_level = warn\n[gateway]\nlog_level = warn\n" B,
		   "t.conf:3: log_level: duplicate key in [gateway] (first at line 1)" },
	/* 31 */ { B "address = 10.99.0.2\n", "t.conf:3: address: duplicate key in [backend s] (first at line 2)" },
	/* 32 */ { B "registration = persistent\n",
		   "t.conf:1: backend 's': registration = persistent exposes the whole buffer pool" },
	/* 33 */ { B "registration = persistent\nunsafe_persistent = yes\n", "" },
	/* 34 */ { B "registration = mw\nunsafe_persistent = yes\n", "" },
	/* 35 */ { B "[route r]\nprogram = nfs\n[route r]\nprogram = mount\n", "t.conf:5: route 'r' defined twice (first at line 3)" },
	/* 36 */ { B "[route r/1]\nprogram = nfs\n", "t.conf:3: route name 'r/1' must be 1-31 of [A-Za-z0-9._-]" },
	/* 37 */ { "[backend a]\nport=1\n[backend b]\nport=1\n[backend c]\nport=1\n[backend d]\nport=1\n"
		   "[backend e]\nport=1\n[backend f]\nport=1\n[backend g]\nport=1\n[backend h]\nport=1\n"
		   "[backend i]\nport=1\n", "t.conf:17: too many backends (max 8)" },
	/* 38: found by fuzz_config: accepted, but its dump did not parse back */
	/* 38 */ { "[backend b]\naddress =;x\n", "t.conf:2: address: invalid value ';x'" },
	/* 39 */ { "[backend b]\naddress=" A189 "\n", "t.conf:2: address: invalid value" },
	/* [listener NAME] */
	/* 40 */ { "[gateway]\nlisten = 127.0.0.1:2049\n" B
		   "[listener edge]\nlisten = 127.0.0.2:2049\nlisten = [::1]\nallow = 10.0.0.0/8\nsquash = root\n", "" },
	/* 41 */ { B "[listener e]\nlisten = 127.0.0.2\nlog_level = debug\n",
		   "t.conf:5: unknown key 'log_level' in [listener e]" },
	/* 42 */ { "[gateway]\nlisten = 127.0.0.1:2049\n" B "[listener e]\nlisten = 127.0.0.1\n",
		   "t.conf:6: listen: 127.0.0.1 is listed already (line 2, [gateway])" },
	/* 43 */ { B "[listener a]\nlisten = 10.0.0.1\n[listener b]\nlisten = 10.0.0.1:2049\n",
		   "t.conf:6: listen: 10.0.0.1:2049 is listed already (line 4, [listener a])" },
	/* 44 */ { B "[listener e]\nsquash = all\n", "t.conf:3: listener 'e' has no listen address" },
	/* 45 */ { B "[listener gateway]\nlisten = 10.0.0.1\n", "t.conf:3: listener name 'gateway' is reserved" },
	/* 46 */ { B "[listener e]\nlisten = 10.0.0.1\n[listener e]\nlisten = 10.0.0.2\n",
		   "t.conf:5: listener 'e' defined twice (first at line 3)" },
	/* 47 */ { B "[listener e]\nlisten = 10.0.0.1\ntls = required\n",
		   "t.conf:3: listener 'e': tls = required needs tls_cert and tls_key" },
	/* 48 */ { "[gateway]\ntls_cert = /c.pem\ntls_key = /k.pem\n" B
		   "[listener e]\nlisten = 10.0.0.1\ntls = allowed\n", "" },
	/* 49 */ { B "[listener e]\nlisten = 10.0.0.1\ntls = allowed\ntls_cert = /c\ntls_key = /k\n"
		   "tls_client_cert = require\n", "t.conf:3: listener 'e': tls_client_cert = require needs tls_ca" },
	/* 50 */ { "[gateway]\ntls_identity_squash = a.test:some\n" B,
		   "t.conf:2: tls_identity_squash: invalid value 'a.test:some'" },
	/* 51 */ { "[gateway]\ntls_identity_squash = a.test:root b.test\n" B,
		   "t.conf:2: tls_identity_squash: invalid value 'a.test:root b.test'" },
	/* 52 */ { "[gateway]\ntls_identity_squash = a.test:none, b:c.test:ALL\n" B, "" },
	/* 53 */ { "[gateway]\nlisten = 127.0.0.1\nlisten = 127.0.0.1:2049\n" B,
		   "t.conf:3: listen: 127.0.0.1:2049 is listed already (line 2, [gateway])" },
	/* 54 */ { B "[listener e]\nlisten = 10.0.0.1\nsquash = all\nsquash = root\n",
		   "t.conf:6: squash: duplicate key in [listener e] (first at line 5)" },
	/* 55 */ { B "[listener e]\nlisten = 10.0.0.1\nsecure_port = no\ninsecure = no\n",
		   "t.conf:6: insecure = no contradicts secure_port at line 5" },
	/* 56 */ { B "[listener a]\nlisten = 10.0.0.1\n[listener b]\nlisten = 10.0.0.2\n[listener c]\nlisten = 10.0.0.3\n[listener d]\nlisten = 10.0.0.4\n[listener e]\nlisten = 10.0.0.5\n[listener f]\nlisten = 10.0.0.6\n[listener g]\nlisten = 10.0.0.7\n[listener h]\nlisten = 10.0.0.8\n[listener i]\nlisten = 10.0.0.9\n", "t.conf:19: too many listeners (max 8)" },
	/* 57 */ { B "[listener e]\nlisten = 10.0.0.1\ntls_identity_squash = :all\n",
		   "t.conf:5: tls_identity_squash: invalid value ':all'" },
};

static void t01_table(void **state)
{
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cfg *cf = cfg_parse_string(cases[i].text, "t.conf", NULL, err, sizeof(err));

		if (cases[i].err[0] == '\0') {
			if (!cf)
				fail_msg("case %zu: unexpected error: %s", i + 1, err);
			cfg_free(cf);
		} else {
			if (cf)
				fail_msg("case %zu: parsed, expected '%s'", i + 1, cases[i].err);
			if (!strstr(err, cases[i].err))
				fail_msg("case %zu: got '%s', expected '%s'", i + 1, err, cases[i].err);
		}
	}
}

/* 2. Defaults: one listen on 0.0.0.0:2049, five default routes (NFS over
 * RDMA, MOUNT/NLM/NSM over TCP via rpcbind, NFS_ACL over TCP), workers 0
 * (one per CPU of the RDMA device's NUMA node, resolved at start). */
static void t02_defaults(void **state)
{
	char err[256];
	struct cfg *cf = cfg_parse_string(B, "t.conf", NULL, err, sizeof(err));
	const struct cfg_route *r;

	(void)state;
	assert_non_null(cf);
	assert_int_equal(cf->cf_nlisten, 1);
	assert_string_equal(cf->cf_listen[0].cl_text, "0.0.0.0:2049");
	assert_int_equal(cf->cf_nroutes, 5);
	assert_non_null(cfg_route_find(cf, CFG_PROG_NFS_ACL));
	r = cfg_route_find(cf, CFG_PROG_NFS);
	assert_non_null(r);
	assert_int_equal(r->cr_transport, CFG_TRANSPORT_RDMA);
	r = cfg_route_find(cf, CFG_PROG_MOUNT);
	assert_non_null(r);
	assert_int_equal(r->cr_transport, CFG_TRANSPORT_TCP);
	assert_int_equal(r->cr_port, 0);
	assert_null(cfg_route_find(cf, 100099));
	assert_int_equal(cf->cf_backends[0].cb_port, 2049);
	assert_int_equal(cf->cf_backends[0].cb_rdma_port, 20049);
	assert_int_equal(cf->cf_log_level, CFG_LOG_INFO);
	assert_int_equal(cf->cf_workers, 0);
	/* connections: two for one worker, one each for several; a value set
	 * is each worker's whatever their number */
	assert_int_equal(cf->cf_backends[0].cb_connections, 0);
	assert_int_equal(cfg_backend_conns(&cf->cf_backends[0], 0), 2);
	assert_int_equal(cfg_backend_conns(&cf->cf_backends[0], 1), 2);
	assert_int_equal(cfg_backend_conns(&cf->cf_backends[0], 2), 1);
	assert_int_equal(cfg_backend_conns(&cf->cf_backends[0], 16), 1);
	cf->cf_backends[0].cb_connections = 3;
	assert_int_equal(cfg_backend_conns(&cf->cf_backends[0], 1), 3);
	assert_int_equal(cfg_backend_conns(&cf->cf_backends[0], 2), 3);
	cfg_free(cf);
}

/* 3. Values of case 21 land where they should. */
static void t03_values(void **state)
{
	char err[256];
	struct cfg *cf = cfg_parse_string(cases[20].text, "t.conf", NULL, err, sizeof(err));
	const struct sockaddr_in6 *s6;
	const struct cfg_route *r;

	(void)state;
	assert_non_null(cf);
	assert_int_equal(cf->cf_nlisten, 2);
	s6 = (const struct sockaddr_in6 *)&cf->cf_listen[0].cl_addr;
	assert_int_equal(s6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(s6->sin6_port), 2050);
	assert_int_equal(ntohs(((const struct sockaddr_in *)&cf->cf_listen[1].cl_addr)->sin_port), 2049);
	assert_int_equal(cf->cf_max_record, 256 * 1024);
	assert_int_equal(cf->cf_idle_timeout_ms, 500);
	assert_int_equal(cf->cf_nroutes, 1);
	r = cfg_route_find(cf, CFG_PROG_NFS);
	assert_non_null(r);
	assert_int_equal(r->cr_vers_low, 3);
	assert_int_equal(r->cr_vers_high, 4);
	assert_int_equal(r->cr_transport, CFG_TRANSPORT_TCP);
	assert_int_equal(r->cr_port, 2049);
	cfg_free(cf);
}

/* 4. Command-line overrides: --listen replaces, --backend creates a default
 * backend, -v -v raises the log level to debug. */
static void t04_overrides(void **state)
{
	char err[256];
	struct cfg_overrides ov = { .co_listen = { "[::]:3049" }, .co_nlisten = 1,
				    .co_backend = "192.0.2.7:2050", .co_verbose = 2 };
	struct cfg *cf = cfg_load(NULL, &ov, err, sizeof(err));

	(void)state;
	assert_non_null(cf);
	assert_int_equal(cf->cf_nlisten, 1);
	assert_string_equal(cf->cf_backends[0].cb_name, "default");
	assert_string_equal(cf->cf_backends[0].cb_host, "192.0.2.7");
	assert_int_equal(cf->cf_backends[0].cb_port, 2050);
	assert_int_equal(cf->cf_log_level, CFG_LOG_DEBUG);
	cfg_free(cf);
	ov.co_backend = "[::1";
	assert_null(cfg_load(NULL, &ov, err, sizeof(err)));
	assert_non_null(strstr(err, "--backend: '[::1' is not HOST[:PORT]"));
}

/* 5. A real file, and a missing one; a line too long for inih. */
static void t05_file(void **state)
{
	char path[] = "/tmp/test_cfg_XXXXXX";
	char err[512], longline[400];
	int fd = mkstemp(path);
	FILE *f;
	struct cfg *cf;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("[backend s]\naddress = h\n", f);
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	fprintf(f, "# %s\n", longline);
	fclose(f);
	cf = cfg_load(path, NULL, err, sizeof(err));
	assert_null(cf);
	assert_non_null(strstr(err, ":3: line too long"));
	unlink(path);
	assert_null(cfg_load(path, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot open"));
}

/* 6. The shipped sample parses. */
static void t06_sample(void **state)
{
	char err[256];
	struct cfg *cf = cfg_load("config/rpcrdma-gw.conf", NULL, err, sizeof(err));

	(void)state;
	if (!cf)
		fail_msg("sample: %s", err);
	cfg_free(cf);
}

/* cfg_load(path) in a child, so that a load that never returns fails the
 * test instead of hanging it: true and the error in err if it was refused
 * within 5 s. */
static bool load_refused(const char *path, char *err, size_t errlen)
{
	int fds[2], status;
	struct pollfd pfd;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char e[256] = "";
		struct cfg *cf = cfg_load(path, NULL, e, sizeof(e));

		if (write(fds[1], e, strlen(e) + 1) < 0)
			_exit(3);
		_exit(cf ? 1 : 0);
	}
	close(fds[1]);
	pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	if (poll(&pfd, 1, 5000) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		close(fds[0]);
		snprintf(err, errlen, "cfg_load(%s) did not return within 5 s", path);
		return false;
	}
	n = read(fds[0], err, errlen - 1);
	err[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* 9. The path must be a regular file: a device that never ends, a directory
 * and a FIFO without a writer are refused at once. */
static void t09_not_regular(void **state)
{
	char fifo[] = "/tmp/test_cfg_fifo_XXXXXX";
	const char *paths[] = { "/dev/zero", "/tmp", fifo };
	char err[512];

	(void)state;
	assert_non_null(mkdtemp(fifo));
	assert_int_equal(rmdir(fifo), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char want[300];

		snprintf(want, sizeof(want), "%s: not a regular file", paths[i]);
		if (!load_refused(paths[i], err, sizeof(err)) || !strstr(err, want)) {
			unlink(fifo);
			fail_msg("%s: got '%s', want '%s'", paths[i], err, want);
		}
	}
	unlink(fifo);
}

/* 10. Size cap: a valid file of exactly CFG_FILE_MAX bytes parses, one byte
 * more is refused. */
static void t10_too_large(void **state)
{
	char path[] = "/tmp/test_cfg_XXXXXX";
	static const char head[] = B;
	char err[512], line[80];
	size_t left;
	struct cfg *cf;
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(head, f);
	memset(line, '#', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\n';
	for (left = CFG_FILE_MAX - (sizeof(head) - 1); left >= sizeof(line); left -= sizeof(line))
		fwrite(line, 1, sizeof(line), f);
	if (left) {	/* the rest: one shorter comment line */
		memset(line, ';', left);
		line[left - 1] = '\n';
		fwrite(line, 1, left, f);
	}
	fclose(f);
	cf = cfg_load(path, NULL, err, sizeof(err));
	if (!cf) {
		unlink(path);
		fail_msg("file of CFG_FILE_MAX bytes: %s", err);
	}
	cfg_free(cf);
	f = fopen(path, "a");
	fputs("\n", f);
	fclose(f);
	cf = cfg_load(path, NULL, err, sizeof(err));
	unlink(path);
	if (cf)
		fail_msg("file of CFG_FILE_MAX + 1 bytes parsed");
	assert_non_null(strstr(err, "too large"));
}

/* 8. ccp (draft-08 6): off unless asked, per backend. */
static void t08_ccp(void **state)
{
	char err[256];
	struct cfg *cf = cfg_parse_string(B "ccp = on\n[backend t]\naddress = x\n", "t.conf", NULL,
					  err, sizeof(err));

	(void)state;
	if (!cf)
		fail_msg("%s", err);
	assert_int_equal(cf->cf_nbackends, 2);
	assert_true(cf->cf_backends[0].cb_ccp);
	assert_false(cf->cf_backends[1].cb_ccp);
	cfg_free(cf);
	cf = cfg_parse_string(B "ccp = off\n", "t.conf", NULL, err, sizeof(err));
	assert_non_null(cf);
	assert_false(cf->cf_backends[0].cb_ccp);
	cfg_free(cf);
}

/* 7. Reload (cfg_diff): what a running daemon takes in place, what changes
 * backends or routes, and what needs a restart (the key named). */
static void t07_reload_diff(void **state)
{
	static const struct {
		const char *b;
		bool same;
		const char *what;
	} t[] = {
		/* 1 */ { "[gateway]\nlog_level = debug\ncalls_per_client = 3\nidle_timeout = 5\n" B, true, "" },
		/* 2 */ { "\n\n" B, true, "" },		/* sections moved: no change */
		/* 3 */ { "[gateway]\nlisten = 127.0.0.1:1\n" B, false, "listen" },
		/* 4 */ { B "port = 2050\n", false, "" },	/* backend replaced */
		/* 5 */ { B "[route n]\nprogram = nfs\n", false, "" },	/* route added */
		/* 6 */ { "[gateway]\nbuffers = 2000\n" B, false, "buffer pool" },
		/* 7 */ { "[gateway]\nmax_calls = 10\n" B, false, "max_calls" },
	};
	char err[256];
	const char *what;
	struct cfg_diff d;
	bool same;
	struct cfg *a = cfg_parse_string(B, "a", NULL, err, sizeof(err));

	(void)state;
	assert_non_null(a);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct cfg *b = cfg_parse_string(t[i].b, "b", NULL, err, sizeof(err));

		if (!b)
			fail_msg("case %zu: %s", i + 1, err);
		cfg_diff(a, b, &d);
		what = "";
		same = d.cdf_nchanges == 0 && d.cdf_nrestart == 0;
		for (unsigned k = 0; k < d.cdf_n; k++)
			if (d.cdf_act[k].ac_kind == CFG_ACT_RESTART)
				what = d.cdf_act[k].ac_what;
		if (same != t[i].same)
			fail_msg("case %zu: expected %s", i + 1, t[i].same ? "same" : "different");
		assert_string_equal(what, t[i].what);
		cfg_free(b);
	}
	cfg_free(a);
}

/* 11. A listener's policy: what it sets, the rest from [gateway] (their
 * defaults too); [gateway]'s own listener has [gateway]'s values; the
 * addresses know their listener; no default listen once a listener has
 * addresses.  Without listener sections, as before: one listener. */
static void t11_listener_inherit(void **state)
{
	char err[256];
	struct cfg *cf = cfg_parse_string("[gateway]\nallow = 10.0.0.0/8\nsquash = root\nanonuid = 5\n"
					  "secure_port = no\ntls_allow_identity = x.test\n"
					  "tls_identity_squash = x.test:none\n" B
					  "[listener e]\nlisten = 10.0.0.1\nsquash = all\ninsecure = no\n"
					  "deny = 10.9.0.0/16\n", "t.conf", NULL, err, sizeof(err));
	const struct cfg_policy *g, *e;

	(void)state;
	if (!cf)
		fail_msg("%s", err);
	assert_int_equal(cf->cf_nlisteners, 2);
	assert_string_equal(cf->cf_listeners[0].li_name, "gateway");
	assert_string_equal(cf->cf_listeners[1].li_name, "e");
	g = &cf->cf_listeners[0].li_pol;
	e = &cf->cf_listeners[1].li_pol;
	assert_string_equal(g->pol_allow.ns_text, "10.0.0.0/8");
	assert_int_equal(g->pol_squash, CFG_SQUASH_ROOT);
	assert_false(g->pol_secure_port);
	assert_int_equal(g->pol_deny.ns_n, 0);
	/* set in the section */
	assert_int_equal(e->pol_squash, CFG_SQUASH_ALL);
	assert_true(e->pol_secure_port);		/* insecure = no */
	assert_string_equal(e->pol_deny.ns_text, "10.9.0.0/16");
	assert_int_equal(e->pol_deny.ns_n, 1);
	/* inherited: set in [gateway], or its default */
	assert_string_equal(e->pol_allow.ns_text, "10.0.0.0/8");
	assert_int_equal(e->pol_allow.ns_n, 1);
	assert_int_equal(e->pol_anonuid, 5);
	assert_int_equal(e->pol_anongid, CFG_ANON_ID);
	assert_int_equal(e->pol_max_conns_per_source, 64);
	assert_string_equal(e->pol_tls_allow_identity, "x.test");
	assert_string_equal(e->pol_tls_identity_squash, "x.test:none");
	assert_int_equal(e->pol_tls, CFG_TLS_OFF);
	/* one address, the listener's; no default 0.0.0.0:2049 */
	assert_int_equal(cf->cf_nlisten, 1);
	assert_int_equal(cf->cf_listen[0].cl_listener, 1);
	assert_string_equal(cf->cf_listen[0].cl_text, "10.0.0.1");
	cfg_free(cf);

	cf = cfg_parse_string("[gateway]\nsquash = all\n" B, "t.conf", NULL, err, sizeof(err));
	assert_non_null(cf);
	assert_int_equal(cf->cf_nlisteners, 1);
	assert_int_equal(cf->cf_nlisten, 1);
	assert_int_equal(cf->cf_listen[0].cl_listener, 0);
	assert_int_equal(cf->cf_listeners[0].li_pol.pol_squash, CFG_SQUASH_ALL);
	assert_true(cf->cf_listeners[0].li_pol.pol_secure_port);
	cfg_free(cf);
}

/* 12. Reload of listeners: policy values apply (cdf_values), whether set
 * in the section or inherited; a listener added, removed, renamed, moved
 * to other addresses, or its tls turned on needs a restart. */
static void t12_listener_reload(void **state)
{
#define LA "[gateway]\nallow = 10.0.0.0/8\n" B "[listener e]\nlisten = 10.0.0.1\n"
	static const struct {
		const char *b;
		bool values;
		const char *what;	/* restart: the key; "" none */
	} t[] = {
		/* 1 */ { LA, false, "" },
		/* 2 */ { LA "allow = 10.1.0.0/16\n", true, "" },
		/* 3 */ { "[gateway]\nallow = 10.2.0.0/16\n" B "[listener e]\nlisten = 10.0.0.1\n", true, "" },
		/* 4 */ { LA "squash = root\nanonuid = 3\n", true, "" },
		/* 5 */ { LA "tls_identity_squash = a.test:all\n", true, "" },
		/* 6 */ { LA "tls = allowed\ntls_cert = /c\ntls_key = /k\n", false, "tls" },
		/* 7 */ { "[gateway]\nallow = 10.0.0.0/8\n" B "[listener f]\nlisten = 10.0.0.1\n", false, "listen" },
		/* 8 */ { LA "[listener g]\nlisten = 10.0.0.2\n", false, "listen" },
		/* 9 */ { "[gateway]\nallow = 10.0.0.0/8\n" B "[listener e]\nlisten = 10.0.0.3\n", false, "listen" },
		/* 10 */ { "[gateway]\nallow = 10.0.0.0/8\nlisten = 10.0.0.1\n" B, false, "listen" },
	};
#undef LA
	char err[256];
	struct cfg_diff d;
	struct cfg *a = cfg_parse_string("[gateway]\nallow = 10.0.0.0/8\n" B "[listener e]\nlisten = 10.0.0.1\n",
					 "a", NULL, err, sizeof(err));

	(void)state;
	if (!a)
		fail_msg("%s", err);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct cfg *b = cfg_parse_string(t[i].b, "b", NULL, err, sizeof(err));
		const char *what = "";

		if (!b)
			fail_msg("case %zu: %s", i + 1, err);
		cfg_diff(a, b, &d);
		for (unsigned k = 0; k < d.cdf_n; k++)
			if (d.cdf_act[k].ac_kind == CFG_ACT_RESTART)
				what = d.cdf_act[k].ac_what;
		if (strcmp(what, t[i].what) || (!*what && d.cdf_values != t[i].values))
			fail_msg("case %zu: restart '%s' values %d, want '%s' %d", i + 1, what,
				 d.cdf_values, t[i].what, t[i].values);
		assert_int_equal(d.cdf_nchanges, 0);
		cfg_free(b);
	}
	cfg_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_table),
		cmocka_unit_test(t02_defaults),
		cmocka_unit_test(t03_values),
		cmocka_unit_test(t04_overrides),
		cmocka_unit_test(t05_file),
		cmocka_unit_test(t06_sample),
		cmocka_unit_test(t07_reload_diff),
		cmocka_unit_test(t08_ccp),
		cmocka_unit_test(t09_not_regular),
		cmocka_unit_test(t10_too_large),
		cmocka_unit_test(t11_listener_inherit),
		cmocka_unit_test(t12_listener_reload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
