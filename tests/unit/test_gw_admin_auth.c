// SPDX-License-Identifier: MIT
/*
 * This file contains the unit tests of the admin listener's access control
 * (gateway/admin.c) and of the `insecure` alias of secure_port
 * (config/config.c):
 *
 *   1. admin_token_file set: a request without Authorization, with another
 *      scheme, a wrong token of the same length, a prefix of the token or
 *      the token plus one byte is answered 401 with WWW-Authenticate and
 *      counted in admin_refused_total{reason="unauthorized"}; the right
 *      token gets 200 on /metrics and /healthz, 405 for a POST (the method
 *      rule still holds), and no warning is logged for a wildcard address
 *      with a token, while one without a token is still warned about;
 *   2. the token file: mode 0644, 0640 or 0602, a directory, a symbolic
 *      link, an empty, short, too long or blank-holding token are refused
 *      with a reason; mode 0600 and 0400 are read, the newline dropped;
 *   3. admin_listen = unix:PATH: parsed (relative paths and bad characters
 *      refused), served on a socket of mode 0660 (a stale socket file
 *      replaced), with the token rule too; the file is gone after
 *      gw_admin_free;
 *   4. insecure = yes is secure_port = no (and no is yes), both given must
 *      agree in either order, and insecure is a [gateway] key only.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "config.h"
#include "gateway.h"
#include "log.h"
#include "ops.h"
#include "test_gw_harness.h"

#define TOKEN "s3cr3t-0123456789abcdef"

/* One request (raw, as written) to fd while pumping the loop: the answer. */
static char *http_raw(struct h_gw *h, int fd, const char *req)
{
	uint64_t end = gw_now_ms() + 3000;
	size_t off = 0, n = strlen(req);

	while (off < n && gw_now_ms() < end) {
		ssize_t w;

		event_base_loop(h->base, EVLOOP_NONBLOCK);
		w = write(fd, req + off, n - off);
		if (w > 0)
			off += (size_t)w;
	}
	return h_read_all(h, fd, 1 << 20);
}

static int tcp_to(uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	assert_true(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EINPROGRESS);
	return fd;
}

static int unix_to(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return fd;
}

/* GET path with an Authorization header (NULL: none) over a new TCP
 * connection; the answer's status code, *body set to the answer when asked. */
static int get_auth(struct h_gw *h, uint16_t port, const char *method, const char *path,
		    const char *auth, char **answer)
{
	char req[512], *r;
	int code = -1;

	snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: x\r\n%s%s%s\r\n", method, path,
		 auth ? "Authorization: " : "", auth ? auth : "", auth ? "\r\n" : "");
	r = http_raw(h, tcp_to(port), req);
	if (!strncmp(r, "HTTP/1.", 7))
		code = atoi(r + 9);
	if (answer)
		*answer = r;
	else
		free(r);
	return code;
}

static double unauthorized(const struct h_gw *h)
{
	char *t = h_render(&h->st, h->gw);
	double v = h_sample(t, "rpcrdma_gw_admin_refused_total{reason=\"unauthorized\"} ");

	free(t);
	return v;
}

/* The log lines (stderr) written while fn(arg) runs. */
static char *capture_log(struct h_gw *h, void (*fn)(struct h_gw *, void *), void *arg)
{
	char tmpl[] = "/tmp/test_gw_admin_auth.XXXXXX";
	char *text = calloc(1, 8192);
	int lfd = mkstemp(tmpl), saved = dup(2);
	ssize_t n;

	assert_true(lfd >= 0 && saved >= 0 && text);
	h->log.gl_level = CFG_LOG_WARN;
	dup2(lfd, 2);
	fn(h, arg);
	dup2(saved, 2);
	close(saved);
	h->log.gl_level = -1;
	n = pread(lfd, text, 8191, 0);
	close(lfd);
	unlink(tmpl);
	text[n > 0 ? n : 0] = '\0';
	return text;
}

static void open_close_any(struct h_gw *h, void *arg)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	struct gw_admin *ad = gw_admin_new(h->base, h->gw, (struct sockaddr *)&sa, sizeof(sa), arg);

	assert_non_null(ad);
	gw_admin_free(ad);
}

static void refused_once(struct h_gw *h, void *arg)
{
	assert_int_equal(get_auth(h, gw_admin_port(arg), "GET", "/healthz", NULL, NULL), 401);
}

/* 1 */
static void test_token(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static const char *const wrong[] = {
		"Basic " TOKEN, "Bearer s3cr3t-0123456789abcdeF", "Bearer s3cr3t-0123456789abcde",
		"Bearer " TOKEN "f", "Bearer", "Bearer ", TOKEN,
	};
	struct h_server s;
	struct h_gw h;
	struct gw_admin *ad;
	uint16_t port;
	char *r, *log;

	(void)state;
	h_gw_up(&h, &s);
	ad = gw_admin_new(h.base, h.gw, (struct sockaddr *)&sa, sizeof(sa), TOKEN);
	assert_non_null(ad);
	port = gw_admin_port(ad);
	assert_int_equal(get_auth(&h, port, "GET", "/metrics", NULL, &r), 401);
	assert_non_null(strstr(r, "WWW-Authenticate: Bearer"));
	assert_null(strstr(r, "rpcrdma_gw_"));	/* nothing of the exposition */
	free(r);
	assert_int_equal(get_auth(&h, port, "HEAD", "/healthz", NULL, NULL), 401);
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++)
		if (get_auth(&h, port, "GET", "/readyz", wrong[i], NULL) != 401)
			fail_msg("'%s' was not refused", wrong[i]);
	assert_true(unauthorized(&h) == 2 + sizeof(wrong) / sizeof(wrong[0]));
	assert_int_equal(get_auth(&h, port, "GET", "/metrics", "Bearer " TOKEN, &r), 200);
	assert_non_null(strstr(r, "rpcrdma_gw_admin_refused_total{reason=\"unauthorized\"} 9\n"));
	free(r);
	assert_int_equal(get_auth(&h, port, "GET", "/healthz", "bearer  " TOKEN, NULL), 200);
	assert_int_equal(get_auth(&h, port, "POST", "/metrics", "Bearer " TOKEN, NULL), 405);
	assert_true(unauthorized(&h) == 9);
	/* the refusal is logged, with the peer */
	log = capture_log(&h, refused_once, ad);
	assert_non_null(strstr(log, "admin 127.0.0.1: admin request refused: no bearer token"));
	free(log);
	gw_admin_free(ad);
	/* a wildcard address: warned about without a token only */
	log = capture_log(&h, open_close_any, TOKEN);
	assert_null(strstr(log, "not a loopback address"));
	free(log);
	log = capture_log(&h, open_close_any, NULL);
	assert_non_null(strstr(log, "not a loopback address"));
	free(log);
	/* a token out of bounds is refused, not silently cut */
	{
		char big[GW_ADMIN_TOKEN_MAX + 2];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		assert_null(gw_admin_new(h.base, h.gw, (struct sockaddr *)&sa, sizeof(sa), big));
		assert_null(gw_admin_new(h.base, h.gw, (struct sockaddr *)&sa, sizeof(sa), ""));
	}
	h_server_stop(&s, true);
	assert_int_equal(h_gw_stop(&h), 0);
}

/* Write text to dir/name with mode; returns the path (static). */
static const char *token_file(const char *dir, const char *name, const char *text, mode_t mode)
{
	static char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

/* 2 */
static void test_token_file(void **state)
{
	static const struct { const char *text; mode_t mode; const char *why; } bad[] = {
		{ TOKEN "\n", 0644, "mode 0644" },
		{ TOKEN "\n", 0640, "mode 0640" },
		{ TOKEN "\n", 0602, "mode 0602" },
		{ TOKEN "\n", 0620, "mode 0620" },
		{ "", 0600, "16 to" },
		{ "short\n", 0600, "16 to" },
		{ "s3cr3t 0123456789abcdef\n", 0600, "printable" },
		{ TOKEN "\nsecond line\n", 0600, "printable" },
	};
	char dir[] = "/tmp/test_gw_admin_tok.XXXXXX", tok[GW_ADMIN_TOKEN_MAX + 1], err[320];
	char link[300], big[GW_ADMIN_TOKEN_MAX + 3];
	const char *p;

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = token_file(dir, "t", bad[i].text, bad[i].mode);
		err[0] = '\0';
		if (gw_admin_token_load(p, tok, sizeof(tok), err, sizeof(err)) != -1)
			fail_msg("case %zu: accepted", i + 1);
		if (!strstr(err, bad[i].why) || !strstr(err, p))
			fail_msg("case %zu: reason '%s' lacks '%s'", i + 1, err, bad[i].why);
	}
	memset(big, 'x', sizeof(big) - 2);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';	/* 257 characters and a newline */
	p = token_file(dir, "t", big, 0600);
	assert_int_equal(gw_admin_token_load(p, tok, sizeof(tok), err, sizeof(err)), -1);
	big[sizeof(big) - 3] = '\n';	/* 256: the most */
	big[sizeof(big) - 2] = '\0';
	p = token_file(dir, "t", big, 0600);
	assert_int_equal(gw_admin_token_load(p, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_int_equal(strlen(tok), GW_ADMIN_TOKEN_MAX);
	p = token_file(dir, "t", TOKEN "\r\n", 0600);
	assert_int_equal(gw_admin_token_load(p, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, TOKEN);
	p = token_file(dir, "t", TOKEN, 0400);
	assert_int_equal(gw_admin_token_load(p, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, TOKEN);
	/* not a regular file; a link (its target could be anything) */
	assert_int_equal(gw_admin_token_load(dir, tok, sizeof(tok), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	snprintf(link, sizeof(link), "%s/l", dir);
	assert_int_equal(symlink(p, link), 0);
	assert_int_equal(gw_admin_token_load(link, tok, sizeof(tok), err, sizeof(err)), -1);
	snprintf(link + strlen(link), sizeof(link) - strlen(link), "x");
	assert_int_equal(gw_admin_token_load(link, tok, sizeof(tok), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file"));
	snprintf(link, sizeof(link), "%s/l", dir);
	unlink(link);
	unlink(p);
	rmdir(dir);
}

/* 3 */
static void test_unix_socket(void **state)
{
	char dir[] = "/tmp/test_gw_admin_unix.XXXXXX", text[512], err[256], path[96];
	struct h_server s;
	struct h_gw h;
	struct gw_admin *ad;
	struct stat st;
	struct cfg *cf;
	char *r;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/admin.sock", dir);
	/* the configuration: unix:ABSOLUTE_PATH into an AF_UNIX address */
	snprintf(text, sizeof(text), "[gateway]\nadmin_listen = unix:%s\n[backend s]\naddress = h\n",
		 path);
	cf = cfg_parse_string(text, "t", NULL, err, sizeof(err));
	assert_non_null(cf);
	assert_int_equal(cf->cf_admin_addr.ss_family, AF_UNIX);
	assert_string_equal(((struct sockaddr_un *)&cf->cf_admin_addr)->sun_path, path);
	assert_true(gw_admin_local((struct sockaddr *)&cf->cf_admin_addr));
	cfg_free(cf);
	for (int i = 0; i < 3; i++) {
		static const char *const no[] = { "unix:admin.sock", "unix:/run/a;b", "unix:" };

		snprintf(text, sizeof(text), "[gateway]\nadmin_listen = %s\n[backend s]\naddress = h\n",
			 no[i]);
		assert_null(cfg_parse_string(text, "t", NULL, err, sizeof(err)));
		assert_non_null(strstr(err, "admin_listen: invalid value"));
	}

	h_gw_up(&h, &s);
	/* a stale socket file of an earlier run is replaced */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	{
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
		assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
		close(fd);
		ad = gw_admin_new(h.base, h.gw, (struct sockaddr *)&sun, sizeof(sun), NULL);
	}
	assert_non_null(ad);
	assert_int_equal(gw_admin_port(ad), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0660);
	r = http_raw(&h, unix_to(path), "GET /healthz HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, " 200 "));
	assert_non_null(strstr(r, "\r\n\r\nok\n"));
	free(r);
	gw_admin_free(ad);
	assert_int_equal(lstat(path, &st), -1);	/* removed */

	/* with a token */
	{
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
		ad = gw_admin_new(h.base, h.gw, (struct sockaddr *)&sun, sizeof(sun), TOKEN);
	}
	assert_non_null(ad);
	r = http_raw(&h, unix_to(path), "GET /metrics HTTP/1.0\r\n\r\n");
	assert_non_null(strstr(r, " 401 "));
	free(r);
	r = http_raw(&h, unix_to(path), "GET /metrics HTTP/1.0\r\nAuthorization: Bearer " TOKEN
		     "\r\n\r\n");
	assert_non_null(strstr(r, " 200 "));
	assert_non_null(strstr(r, "rpcrdma_gw_admin_refused_total{reason=\"unauthorized\"} 1\n"));
	free(r);
	gw_admin_free(ad);
	/* a path that cannot be bound: NULL with errno, nothing left behind */
	{
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/no/such/dir", dir);
		errno = 0;
		assert_null(gw_admin_new(h.base, h.gw, (struct sockaddr *)&sun, sizeof(sun), NULL));
		assert_int_equal(errno, ENOENT);
	}
	h_server_stop(&s, true);
	assert_int_equal(h_gw_stop(&h), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* 4: the text's [gateway] lines, parsed; secure_port's value or -1 with
 * the error in err. */
static int secure_of(const char *lines, char *err, size_t len)
{
	char text[512];
	struct cfg *cf;
	int v;

	snprintf(text, sizeof(text), "[gateway]\n%s[backend s]\naddress = h\n", lines);
	cf = cfg_parse_string(text, "t", NULL, err, len);
	if (!cf)
		return -1;
	v = cf->cf_secure_port;
	cfg_free(cf);
	return v;
}

static void test_insecure_alias(void **state)
{
	static const struct { const char *lines; int secure; const char *err; } cases[] = {
		{ "", 1, NULL },
		{ "insecure = yes\n", 0, NULL },
		{ "insecure = no\n", 1, NULL },
		{ "insecure = on\nsecure_port = off\n", 0, NULL },
		{ "secure_port = no\ninsecure = yes\n", 0, NULL },
		{ "secure_port = yes\ninsecure = no\n", 1, NULL },
		{ "insecure = yes\nsecure_port = yes\n",
		  -1, "t:3: secure_port = yes contradicts insecure at line 2" },
		{ "secure_port = no\ninsecure = no\n",
		  -1, "t:3: insecure = no contradicts secure_port at line 2" },
		{ "insecure = yes\ninsecure = yes\n", -1, "insecure: duplicate key" },
		{ "insecure = maybe\n", -1, "insecure: invalid value 'maybe'" },
	};
	char err[256], text[256];
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);
	unsigned found = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int v;

		err[0] = '\0';
		v = secure_of(cases[i].lines, err, sizeof(err));
		if (v != cases[i].secure)
			fail_msg("case %zu: secure_port %d, expected %d (%s)", i + 1, v, cases[i].secure,
				 err);
		if (cases[i].err && !strstr(err, cases[i].err))
			fail_msg("case %zu: '%s' lacks '%s'", i + 1, err, cases[i].err);
	}
	/* only where secure_port is: [gateway] */
	snprintf(text, sizeof(text), "[backend s]\naddress = h\ninsecure = yes\n");
	assert_null(cfg_parse_string(text, "t", NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "unknown key 'insecure' in [backend s]"));
	snprintf(text, sizeof(text), "[backend s]\naddress = h\n[route r]\nprogram = nfs\n"
		 "insecure = yes\n");
	assert_null(cfg_parse_string(text, "t", NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "unknown key 'insecure' in [route r]"));
	/* one member, two keys: the alias is the negated one */
	for (size_t i = 0; i < n; i++)
		if (keys[i].ky_section == CFG_SEC_GATEWAY &&
		    keys[i].ky_off == offsetof(struct cfg, cf_secure_port)) {
			found++;
			assert_int_equal(!!(keys[i].ky_flags & CFG_KF_NEGATE),
					 !strcmp(keys[i].ky_name, "insecure"));
		}
	assert_int_equal(found, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token),
		cmocka_unit_test(test_token_file),
		cmocka_unit_test(test_unix_socket),
		cmocka_unit_test(test_insecure_alias),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
