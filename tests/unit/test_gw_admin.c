// SPDX-License-Identifier: MIT
/*
 * test_gw_admin.c - the metrics exposition, the admin listener and the
 * control socket protocol.
 *
 *   1. the exposition parses back: every sample belongs to a family with
 *      one HELP and one TYPE line, names are rpcrdma_gw_*, counters end in
 *      _total, histogram buckets are cumulative and +Inf equals _count;
 *      counters bumped and procedures seen show up with their values;
 *   2. in-process gateway (test_gw_harness.h) with a TCP backend: after a
 *      call, GET /metrics over HTTP shows it by procedure, /healthz is
 *      200, /readyz 200 (503 before the backend is up);
 *   3. control commands (gw_ctl_exec and over the Unix socket): status,
 *      stats, backends, json, drain/undrain, errors end in "!ERR";
 *   4. every json answer is one line of valid JSON (parsed back with
 *      json-c) when a string in it holds '"', '\\' and control characters,
 *      and the string comes back unchanged;
 *   5. the admin listener's limits, on a real evhttp server on loopback: a
 *      POST of 128 MiB and a 64 MiB header line are cut off early and the
 *      process's resident memory does not follow them; a small POST is
 *      405; at GW_ADMIN_MAX_CONNS open connections the next waits until
 *      one closes; GET and HEAD still work; each refusal is counted; a
 *      non-loopback admin_listen is warned about;
 *   6. one metric per fact: calls are in calls_total only (no
 *      calls_received_total, its sum), with a gateway of two RDMA paths
 *      (a fake transport through the seam) on one server.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <json.h>

#include "backend.h"
#include "call.h"
#include "config.h"
#include "gateway.h"
#include "log.h"
#include "ops.h"
#include "transport.h"
#include "test_gw_harness.h"

/* ---- a small exposition parser ---- */

struct fam {
	char name[128];
	char type[16];
	int help, typelines, samples;
};

/* Check the format; returns the number of families. */
static int parse_exposition(const char *text)
{
	struct fam fams[128];
	int nf = 0, cur = -1;
	const char *p = text;

	while (*p) {
		const char *e = strchr(p, '\n');
		char line[512], name[128];
		size_t len;

		assert_non_null(e);	/* every line ends with \n */
		len = (size_t)(e - p);
		assert_true(len < sizeof(line));
		memcpy(line, p, len);
		line[len] = '\0';
		p = e + 1;
		if (!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7)) {
			char type[16] = "";
			int i;

			assert_int_equal(sscanf(line + 7, "%127s %15s", name, type), line[2] == 'T' ? 2 : 2);
			assert_true(!strncmp(name, "rpcrdma_gw_", 11));
			for (i = 0; i < nf && strcmp(fams[i].name, name); i++)
				;
			if (i == nf) {
				assert_true(nf < 128);
				memset(&fams[nf], 0, sizeof(fams[nf]));
				snprintf(fams[nf].name, sizeof(fams[nf].name), "%s", name);
				nf++;
			}
			assert_int_equal(fams[i].samples, 0);	/* metadata before samples */
			if (line[2] == 'H') {
				fams[i].help++;
			} else {
				fams[i].typelines++;
				snprintf(fams[i].type, sizeof(fams[i].type), "%s", type);
				assert_true(!strcmp(type, "counter") || !strcmp(type, "gauge") ||
					    !strcmp(type, "histogram"));
				if (!strcmp(type, "counter"))
					assert_non_null(strstr(name, "_total"));
			}
			cur = i;
			continue;
		}
		assert_true(line[0] != '#');
		{
			size_t nl = strcspn(line, "{ ");
			const char *val = strrchr(line, ' ');
			char *end;
			double v;

			assert_true(nl > 0 && nl < sizeof(name));
			memcpy(name, line, nl);
			name[nl] = '\0';
			assert_non_null(val);
			v = strtod(val + 1, &end);
			assert_true(*end == '\0' && v >= 0);
			assert_true(cur >= 0);
			/* the sample belongs to the family declared last */
			if (!strcmp(fams[cur].type, "histogram"))
				assert_true(!strncmp(name, fams[cur].name, strlen(fams[cur].name)));
			else
				assert_string_equal(name, fams[cur].name);
			if (line[nl] == '{')
				assert_non_null(strstr(line, "} "));
			fams[cur].samples++;
		}
	}
	for (int i = 0; i < nf; i++) {
		assert_int_equal(fams[i].help, 1);
		assert_int_equal(fams[i].typelines, 1);
	}
	return nf;
}

/* 1 */
static void test_exposition_format(void **state)
{
	struct gw_stats *st = calloc(1, sizeof(*st));
	char *t;

	(void)state;
	for (int i = 0; i < 3; i++)
		gw_stat_inc(st, GW_CTR_CLIENT_GARBAGE);
	gw_stat_add(st, GW_CTR_BYTES_READ_CHUNK, 65536);
	gw_stats_proc(st, 100003, 3, 6);
	gw_stats_proc(st, 100003, 3, 6);
	gw_stats_proc(st, 100003, 4, 1);
	gw_stats_proc(st, 123456, 1, 9);
	gw_stats_observe(st, GW_HIST_CALL, 40);		/* first bucket */
	gw_stats_observe(st, GW_HIST_CALL, 3000);	/* 0.005 */
	gw_stats_observe(st, GW_HIST_CALL, 11000000);	/* +Inf only */
	t = h_render(st, NULL);
	assert_true(parse_exposition(t) > 20);
	assert_true(h_sample(t, "rpcrdma_gw_client_errors_total{kind=\"garbage\"} ") == 3);
	assert_true(h_sample(t, "rpcrdma_gw_payload_bytes_total{path=\"read_chunk\"} ") == 65536);
	assert_non_null(strstr(t, "rpcrdma_gw_calls_total{program=\"100003\",name=\"nfs\",version=\"3\","
			       "procedure=\"6\",procname=\"read\"} 2\n"));
	assert_non_null(strstr(t, "procname=\"compound\"} 1\n"));
	assert_non_null(strstr(t, "rpcrdma_gw_calls_total{program=\"123456\",name=\"\",version=\"1\","
			       "procedure=\"9\",procname=\"\"} 1\n"));
	assert_true(h_sample(t, "rpcrdma_gw_call_duration_seconds_bucket{le=\"5e-05\"} ") == 1);
	assert_true(h_sample(t, "rpcrdma_gw_call_duration_seconds_bucket{le=\"0.005\"} ") == 2);
	assert_true(h_sample(t, "rpcrdma_gw_call_duration_seconds_bucket{le=\"10\"} ") == 2);
	assert_true(h_sample(t, "rpcrdma_gw_call_duration_seconds_bucket{le=\"+Inf\"} ") == 3);
	assert_true(h_sample(t, "rpcrdma_gw_call_duration_seconds_count ") == 3);
	assert_true(h_sample(t, "rpcrdma_gw_call_duration_seconds_sum ") > 11.0);
	assert_true(h_sample(t, "rpcrdma_gw_rdma_duration_seconds_count ") == 0);
	free(t);
	/* the per-procedure table is full: counted apart, nothing lost silently */
	for (uint32_t p = 0; p < GW_STATS_PROCS + 5; p++)
		gw_stats_proc(st, 200000, 1, p);
	assert_int_equal(st->gs_proc_overflow, 5 + 3);	/* 3 slots were taken */
	t = h_render(st, NULL);
	parse_exposition(t);
	assert_true(h_sample(t, "rpcrdma_gw_calls_uncounted_total ") == 8);
	free(t);
	free(st);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* 2 */
static void test_admin_http(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct h_server s;
	struct h_gw h;
	struct gw_admin *ad;
	uint8_t buf[256];
	char *r;
	int fd;

	(void)state;
	h_gw_up(&h, &s);
	ad = gw_admin_new(h.base, h.gw, (struct sockaddr *)&sa, sizeof(sa), NULL);
	assert_non_null(ad);
	assert_true(gw_admin_port(ad) > 0);
	r = h_http_get(&h, gw_admin_port(ad), "/healthz");
	assert_non_null(strstr(r, " 200 "));
	free(r);
	fd = h_client(&h);
	h_send(fd, buf, h_call(buf, 0x1234, 2, 100003, 3, 0xa1));	/* proc 1: getattr */
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 3000), 28);
	r = h_http_get(&h, gw_admin_port(ad), "/readyz");
	assert_non_null(strstr(r, " 200 "));
	free(r);
	r = h_http_get(&h, gw_admin_port(ad), "/metrics");
	assert_non_null(strstr(r, " 200 "));
	assert_non_null(strstr(r, "Content-Type: text/plain; version=0.0.4"));
	{
		char *body = strstr(r, "\r\n\r\n");

		assert_non_null(body);
		parse_exposition(body + 4);
		assert_non_null(strstr(body, "procedure=\"1\",procname=\"getattr\"} 1\n"));
		assert_true(h_sample(body, "rpcrdma_gw_call_duration_seconds_count ") == 1);
		assert_true(h_sample(body, "rpcrdma_gw_client_connections ") == 1);
		assert_true(h_sample(body, "rpcrdma_gw_path_up{path=\"nfs/srv\"") == 1);
		assert_true(h_sample(body, "rpcrdma_gw_admin_requests_total ") >= 3);
	}
	free(r);
	r = h_http_get(&h, gw_admin_port(ad), "/nope");
	assert_non_null(strstr(r, " 404 "));
	free(r);
	close(fd);
	/* backend gone: not ready */
	h_server_stop(&s, true);
	h_pump(&h, 300);
	r = h_http_get(&h, gw_admin_port(ad), "/readyz");
	assert_non_null(strstr(r, " 503 "));
	free(r);
	gw_admin_free(ad);
	assert_int_equal(h_gw_stop(&h), 0);
}

static int hook_level = -1;
static void hk_level(void *arg, int l) { (void)arg; hook_level = l; }
static int hk_reload(void *arg, char *msg, size_t len)
{
	(void)arg;
	snprintf(msg, len, "reloaded test");
	return 0;
}

/* 3 */
static void test_control(void **state)
{
	struct gw_ctl_hooks hk = { .ch_reload = hk_reload, .ch_log_level = hk_level };
	char path[64];
	struct h_server s;
	struct h_gw h;
	struct gw_ctl *ct;
	uint8_t buf[256];
	char *r;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_gw_admin.%d", (int)getpid());
	h_gw_up(&h, &s);
	ct = gw_ctl_new(h.base, h.gw, path, &hk);
	assert_non_null(ct);
	{
		struct stat sb;

		assert_int_equal(stat(path, &sb), 0);
		assert_int_equal(sb.st_mode & 0777, 0600);
	}
	fd = h_client(&h);
	h_send(fd, buf, h_call(buf, 0x99, 2, 100003, 3, 0xa1));
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 3000), 28);

	/* path names are route/backend: no shell metacharacter in them */
	assert_string_equal(gw_path_name(gw_ctx_path(h.gw, 0)), "nfs/srv");
	for (const char *c = gw_path_name(gw_ctx_path(h.gw, 0)); *c; c++)
		assert_true(isalnum((unsigned char)*c) || strchr("._-/", *c));
	r = h_ctl(ct, "status");
	assert_non_null(strstr(r, "ready: yes"));
	assert_non_null(strstr(r, "path nfs/srv "));
	assert_true(ends_with(r, "\n.\n"));
	free(r);
	r = h_ctl(ct, "stats");
	assert_non_null(strstr(r, "nfs v3:"));
	assert_non_null(strstr(r, "getattr"));
	assert_true(ends_with(r, ".\n"));
	free(r);
	r = h_ctl(ct, "json backends");
	assert_true(r[0] == '{');
	assert_non_null(strstr(r, "\"path\":\"nfs/srv\""));
	assert_non_null(strstr(r, "\"state\":\"up\""));
	free(r);
	r = h_ctl(ct, "json clients");
	assert_non_null(strstr(r, "\"count\":1"));
	free(r);
	r = h_ctl(ct, "drain srv");
	assert_non_null(strstr(r, "draining"));
	free(r);
	assert_true(gw_path_draining(gw_ctx_path(h.gw, 0)));
	/* a call while draining is held, and goes once undrained */
	h_send(fd, buf, h_call(buf, 0x9a, 2, 100003, 3, 0xa2));
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 300), -1);
	r = h_ctl(ct, "undrain nfs->srv");	/* the old name form is still accepted */
	assert_string_equal(r, "path nfs/srv: undrained\n.\n");
	free(r);
	assert_false(gw_path_draining(gw_ctx_path(h.gw, 0)));
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 3000), 28);
	r = h_ctl(ct, "drain nfs/srv");
	assert_string_equal(r, "path nfs/srv: draining\n.\n");
	free(r);
	assert_true(gw_path_draining(gw_ctx_path(h.gw, 0)));
	r = h_ctl(ct, "undrain nfs/srv");
	assert_string_equal(r, "path nfs/srv: undrained\n.\n");
	free(r);
	assert_false(gw_path_draining(gw_ctx_path(h.gw, 0)));
	r = h_ctl(ct, "drain nfs-");	/* half of the old form matches nothing */
	assert_true(!strncmp(r, "!ERR ", 5));
	free(r);
	r = h_ctl(ct, "drain nosuch");
	assert_true(!strncmp(r, "!ERR ", 5));
	free(r);
	r = h_ctl(ct, "frobnicate");
	assert_true(!strncmp(r, "!ERR ", 5));
	free(r);
	r = h_ctl(ct, "log-level debug");
	assert_int_equal(hook_level, CFG_LOG_DEBUG);
	free(r);
	r = h_ctl(ct, "log-level loud");
	assert_true(!strncmp(r, "!ERR ", 5));
	free(r);
	r = h_ctl(ct, "reload");
	assert_non_null(strstr(r, "reloaded test"));
	free(r);
	/* over the socket */
	r = h_ctl_socket(&h, path, "backends\n");
	assert_non_null(strstr(r, "\nnfs/srv "));
	assert_true(ends_with(r, ".\n"));
	free(r);
	r = h_ctl_socket(&h, path, "json status\n");
	assert_true(r[0] == '{' && strstr(r, "\"ready\":true"));
	free(r);
	assert_true(h.st.gs_ctr[GW_CTR_CTL_ERRORS] == 4);
	close(fd);
	gw_ctl_free(ct);
	assert_int_not_equal(access(path, F_OK), 0);	/* socket removed */
	h_server_stop(&s, true);
	assert_int_equal(h_gw_stop(&h), 0);
}

/* A configuration path with every character JSON must escape. */
static const char hostile_path[] = "/etc/a\"b\\c\x01\x1f\n\t\x7f/gw \"x\".conf";
static const char *hk_config_path(void *arg)
{
	(void)arg;
	return hostile_path;
}

/* The answer's first line parses as one JSON value, the rest is ".\n". */
static struct json_object *json_line(const char *answer)
{
	const char *nl = strchr(answer, '\n');
	struct json_tokener *tok = json_tokener_new();
	struct json_object *jo;

	assert_non_null(nl);
	assert_string_equal(nl, "\n.\n");
	jo = json_tokener_parse_ex(tok, answer, (int)(nl - answer));
	assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
	assert_int_equal(json_tokener_get_parse_end(tok), (size_t)(nl - answer));
	json_tokener_free(tok);
	assert_non_null(jo);
	return jo;
}

/* 4 */
static void test_control_json_escaped(void **state)
{
	static const char *const cmds[] = { "json status", "json stats", "json clients",
					    "json backends" };
	struct gw_ctl_hooks hk = { .ch_config_path = hk_config_path };
	char path[64];
	struct h_server s;
	struct h_gw h;
	struct gw_ctl *ct;
	uint8_t buf[256];
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_gw_admin_j.%d", (int)getpid());
	h_gw_up(&h, &s);
	ct = gw_ctl_new(h.base, h.gw, path, &hk);
	assert_non_null(ct);
	fd = h_client(&h);
	h_send(fd, buf, h_call(buf, 0x77, 2, 100003, 3, 0xa1));
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 3000), 28);
	for (unsigned i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *r = h_ctl(ct, cmds[i]);
		struct json_object *jo = json_line(r), *v;

		assert_true(json_object_is_type(jo, json_type_object));
		if (i == 0) {	/* the hostile string comes back byte for byte */
			assert_true(json_object_object_get_ex(jo, "config", &v));
			assert_string_equal(json_object_get_string(v), hostile_path);
			assert_true(json_object_object_get_ex(jo, "ready", &v));
			assert_true(json_object_get_boolean(v));
		}
		json_object_put(jo);
		free(r);
	}
	/* the same over the socket */
	{
		char *r = h_ctl_socket(&h, path, "json status\n");
		struct json_object *jo = json_line(r), *v;

		assert_true(json_object_object_get_ex(jo, "config", &v));
		assert_string_equal(json_object_get_string(v), hostile_path);
		json_object_put(jo);
		free(r);
	}
	close(fd);
	gw_ctl_free(ct);
	h_server_stop(&s, true);
	assert_int_equal(h_gw_stop(&h), 0);
}

/* ---- 5: admin listener limits ---- */

static size_t rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, res = 0;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu %lu", &size, &res), 2);
	fclose(f);
	return res * (size_t)sysconf(_SC_PAGESIZE);
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

/* Send head, then up to `flood` bytes of filler, pumping the loop, until
 * the server closes.  Returns the filler bytes sent; *peak is the highest
 * resident size seen above the start. */
static size_t flood_until_closed(struct h_gw *h, uint16_t port, const char *head, size_t flood,
				 size_t *peak)
{
	static char chunk[64 * 1024];
	int fd = tcp_to(port);
	size_t sent = 0, base = rss_bytes(), off = 0, hl = strlen(head);
	uint64_t end = gw_now_ms() + 20000;
	bool closed = false;

	memset(chunk, 'a', sizeof(chunk));
	*peak = 0;
	while (!closed && gw_now_ms() < end) {
		char rb[512];
		ssize_t w, r;
		size_t now;

		event_base_loop(h->base, EVLOOP_NONBLOCK);
		if (off < hl) {
			w = send(fd, head + off, hl - off, MSG_NOSIGNAL);
			if (w > 0)
				off += (size_t)w;
		} else if (sent < flood) {
			w = send(fd, chunk, sizeof(chunk) < flood - sent ? sizeof(chunk) : flood - sent,
				 MSG_NOSIGNAL);
			if (w > 0)
				sent += (size_t)w;
			else if (w < 0 && errno != EAGAIN)
				closed = true;		/* EPIPE, ECONNRESET */
		}
		r = recv(fd, rb, sizeof(rb), 0);
		if (r == 0 || (r < 0 && errno != EAGAIN))
			closed = true;
		now = rss_bytes();
		if (now > base && now - base > *peak)
			*peak = now - base;
		if (sent >= flood)
			usleep(200);
	}
	close(fd);
	assert_true(closed);
	return sent;
}

static char *http_req(struct h_gw *h, uint16_t port, const char *req, int ms)
{
	int fd = tcp_to(port);
	size_t cap = 1 << 16, have = 0, off = 0, len = strlen(req);
	char *buf = malloc(cap);
	uint64_t end = gw_now_ms() + (uint64_t)ms;

	while (gw_now_ms() < end) {
		ssize_t r;

		event_base_loop(h->base, EVLOOP_NONBLOCK);
		if (off < len) {
			r = send(fd, req + off, len - off, MSG_NOSIGNAL);
			if (r > 0)
				off += (size_t)r;
			continue;
		}
		r = recv(fd, buf + have, cap - 1 - have, 0);
		if (r == 0)
			break;
		if (r > 0)
			have += (size_t)r;
		else
			usleep(200);
	}
	close(fd);
	buf[have] = '\0';
	return buf;
}

static void test_admin_limits(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	const uint64_t *ctr;
	struct h_server s;
	struct h_gw h;
	struct gw_admin *ad;
	int idle[GW_ADMIN_MAX_CONNS];
	size_t sent, peak;
	uint16_t port;
	char *r;

	(void)state;
	h_gw_up(&h, &s);
	ctr = h.st.gs_ctr;
	ad = gw_admin_new(h.base, h.gw, (struct sockaddr *)&sa, sizeof(sa), NULL);
	assert_non_null(ad);
	port = gw_admin_port(ad);

	/* a large POST: refused from its Content-Length, the body is not kept */
	sent = flood_until_closed(&h, port, "POST /metrics HTTP/1.1\r\nHost: x\r\n"
				  "Content-Length: 268435456\r\n\r\n", 128u << 20, &peak);
	print_message("POST: %zu bytes sent before the close, resident +%zu KiB\n", sent, peak >> 10);
	assert_true(sent < (64u << 20));
	assert_true(peak < (16u << 20));
	/* a header line with no end */
	sent = flood_until_closed(&h, port, "GET /metrics HTTP/1.1\r\nX-Long: ", 64u << 20, &peak);
	print_message("header: %zu bytes sent before the close, resident +%zu KiB\n", sent,
		      peak >> 10);
	assert_true(sent < (32u << 20));
	assert_true(peak < (16u << 20));
	assert_true(ctr[GW_CTR_ADMIN_UNSERVED] >= 2);

	/* a POST the caps let through is answered 405, and counted */
	r = http_req(&h, port, "POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", 3000);
	assert_non_null(strstr(r, " 405 "));
	free(r);
	assert_int_equal(ctr[GW_CTR_ADMIN_BAD_METHOD], 1);
	r = http_req(&h, port, "HEAD /healthz HTTP/1.0\r\n\r\n", 3000);
	assert_non_null(strstr(r, " 200 "));
	free(r);

	/* the connection cap: the next connection waits in the backlog */
	for (unsigned i = 0; i < GW_ADMIN_MAX_CONNS; i++)
		idle[i] = tcp_to(port);
	h_pump(&h, 200);
	assert_int_equal(ctr[GW_CTR_ADMIN_CONN_LIMIT], 1);
	r = http_req(&h, port, "GET /healthz HTTP/1.0\r\n\r\n", 500);
	assert_string_equal(r, "");
	free(r);
	close(idle[0]);
	r = http_req(&h, port, "GET /healthz HTTP/1.0\r\n\r\n", 3000);
	assert_non_null(strstr(r, " 200 "));
	free(r);
	for (unsigned i = 1; i < GW_ADMIN_MAX_CONNS; i++)
		close(idle[i]);
	h_pump(&h, 200);
	r = h_http_get(&h, port, "/metrics");
	assert_non_null(strstr(r, " 200 "));
	assert_non_null(strstr(r, "\nrpcrdma_gw_admin_refused_total{reason=\"method\"} 1\n"));
	free(r);
	/* freed with connections open: they are closed, nothing leaks */
	idle[0] = tcp_to(port);
	idle[1] = tcp_to(port);
	h_pump(&h, 100);
	gw_admin_free(ad);
	h_pump(&h, 100);
	{
		char c;

		assert_int_equal(recv(idle[0], &c, 1, 0), 0);	/* closed by the gateway */
	}
	close(idle[0]);
	close(idle[1]);

	/* a wildcard address is warned about at start (stderr is the log) */
	{
		char tmpl[] = "/tmp/test_gw_admin_log.XXXXXX", text[4096] = "";
		int lfd = mkstemp(tmpl), saved = dup(2);
		ssize_t n;

		assert_true(lfd >= 0 && saved >= 0);
		h.log.gl_level = CFG_LOG_WARN;
		dup2(lfd, 2);
		sa.sin_addr.s_addr = htonl(INADDR_ANY);
		ad = gw_admin_new(h.base, h.gw, (struct sockaddr *)&sa, sizeof(sa), NULL);
		sa.sin_addr.s_addr = htonl(0x7f000002);	/* 127.0.0.2: loopback, no warning */
		gw_admin_free(ad);
		ad = gw_admin_new(h.base, h.gw, (struct sockaddr *)&sa, sizeof(sa), NULL);
		dup2(saved, 2);
		close(saved);
		h.log.gl_level = -1;
		assert_non_null(ad);
		gw_admin_free(ad);
		n = pread(lfd, text, sizeof(text) - 1, 0);
		close(lfd);
		unlink(tmpl);
		assert_true(n > 0);
		text[n] = '\0';
		assert_non_null(strstr(text, "not a loopback address"));
		assert_null(strstr(strstr(text, "not a loopback address") + 1, "not a loopback address"));
	}
	h_server_stop(&s, true);
	assert_int_equal(h_gw_stop(&h), 0);
}

/* ---- 6: an RDMA transport reached through the seam, for to_info ---- */

static int fk_server;		/* its address identifies "the server" */

static void *fk_create(struct gw_ctx *gw, struct gw_path *path)
{
	(void)gw;
	gw_path_ready(path, true);
	return path;
}

static void fk_destroy(void *tp) { (void)tp; }
static int fk_submit(void *tp, struct gw_call *c) { (void)tp; (void)c; return -EIO; }
static void fk_release(void *tp, struct gw_call *c) { (void)tp; gw_call_put(c); }
static void fk_cancel(void *tp, struct gw_call *c) { (void)tp; gw_call_put(c); }

static int fk_info(void *tp, struct gw_tp_info *ti)
{
	(void)tp;
	memset(ti, 0, sizeof(*ti));
	ti->ti_server = &fk_server;
	ti->ti_be_ctr[BE_CTR_CONNECTS] = 3;
	ti->ti_be_ctr[BE_CTR_REJECTS] = 5;
	return 0;
}

static const struct gw_transport_ops fake_ops = {
	.to_name = "rdma", .to_create = fk_create, .to_destroy = fk_destroy,
	.to_submit = fk_submit, .to_release = fk_release, .to_cancel = fk_cancel,
	.to_info = fk_info,
};

static void test_metrics_one_of_each(void **state)
{
	static const char text[] =
		"[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 16\n"
		"[backend srv]\naddress = 127.0.0.1\n"
		"[route nfs]\nprogram = nfs\ntransport = rdma\n"
		"[route mount]\nprogram = mount\ntransport = rdma\n";
	struct h_gw h;
	char *t;

	(void)state;
	h_gw_init(&h, text, &fake_ops, NULL);
	assert_int_equal(gw_ctx_start(h.gw), 0);
	assert_int_equal(gw_ctx_npaths(h.gw), 2);	/* two paths, one server */
	gw_stat_add(&h.st, GW_CTR_BACKEND_CONNECT_FAILED, 2);
	gw_stat_add(&h.st, GW_CTR_CALLS, 4);
	gw_stats_proc(&h.st, 100003, 3, 1);

	t = h_render(&h.st, h.gw);
	parse_exposition(t);
	assert_null(strstr(t, "calls_received_total"));
	assert_true(h_sample(t, "rpcrdma_gw_backend_events_total{event=\"connect_failed\"} ") == 2);
	assert_true(h_sample(t, "rpcrdma_gw_rdma_connects_total{backend=\"srv\"} ") == 3);
	assert_non_null(strstr(t, "procname=\"getattr\"} 1\n"));
	free(t);
	t = h_render(&h.st, NULL);
	assert_null(strstr(t, "calls_received_total"));
	free(t);
	assert_int_equal(h_gw_stop(&h), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exposition_format),
		cmocka_unit_test(test_admin_http),
		cmocka_unit_test(test_control),
		cmocka_unit_test(test_control_json_escaped),
		cmocka_unit_test(test_admin_limits),
		cmocka_unit_test(test_metrics_one_of_each),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
