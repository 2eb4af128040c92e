// SPDX-License-Identifier: MIT
/* Unit tests for reload with routes and backends and for the NFSv4
 * per-operation counters:
 *   - cfg_diff(): a numbered table of old/new files and the exact actions,
 *   - gw_ctx_reload() in process (test_gw_harness.h): a route moved to a new
 *     backend while a call is in flight on the old one, held calls moving to
 *     the new path, a removed backend freed once drained, all-or-nothing
 *     refusals,
 *   - a COMPOUND through the TCP transport counted per operation, in
 *     /metrics and in `rpcrdma-gwctl stats`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <event2/buffer.h>

#include "chunking.h"
#include "config.h"
#include "gateway.h"
#include "log.h"
#include "nfs_enc.h"
#include "ops.h"
#include "test_gw_harness.h"
#include "transport.h"

#define NFS 100003u
#define BA "[backend a]\naddress = 10.0.0.1\n"
#define BB "[backend b]\naddress = 10.0.0.2\n"
#define RN(be) "[route nfs]\nprogram = nfs\nbackend = " be "\n"
#define RM(be) "[route mount]\nprogram = mount\ntransport = tcp\nbackend = " be "\n"

/* 1. The diff as a compact string: one letter group per action, in order:
 * "bk" keep, "b+" add, "b-" remove (with why), "rk", "r+", "r-", "!key". */
static void diff_str(const struct cfg *a, const struct cfg *b, char *out, size_t len)
{
	struct cfg_diff d;
	size_t o = 0;

	cfg_diff(a, b, &d);
	out[0] = '\0';
	for (unsigned k = 0; k < d.cdf_n && o < len; k++) {
		const struct cfg_action *x = &d.cdf_act[k];
		const char *name = "";

		switch (x->ac_kind) {
		case CFG_ACT_BACKEND_KEEP: case CFG_ACT_BACKEND_ADD:
			name = b->cf_backends[x->ac_new].cb_name; break;
		case CFG_ACT_BACKEND_REMOVE:
			name = a->cf_backends[x->ac_old].cb_name; break;
		case CFG_ACT_ROUTE_KEEP: case CFG_ACT_ROUTE_ADD:
			name = b->cf_routes[x->ac_new].cr_name; break;
		case CFG_ACT_ROUTE_REMOVE:
			name = a->cf_routes[x->ac_old].cr_name; break;
		case CFG_ACT_RESTART:
			name = x->ac_what; break;
		}
		o += (size_t)snprintf(out + o, len - o, "%s%s%s%s%s%s", o ? " " : "",
				      x->ac_kind == CFG_ACT_BACKEND_KEEP ? "bk:" :
				      x->ac_kind == CFG_ACT_BACKEND_ADD ? "b+:" :
				      x->ac_kind == CFG_ACT_BACKEND_REMOVE ? "b-:" :
				      x->ac_kind == CFG_ACT_ROUTE_KEEP ? "rk:" :
				      x->ac_kind == CFG_ACT_ROUTE_ADD ? "r+:" :
				      x->ac_kind == CFG_ACT_ROUTE_REMOVE ? "r-:" : "!",
				      name, x->ac_kind == CFG_ACT_BACKEND_REMOVE ||
				      x->ac_kind == CFG_ACT_ROUTE_REMOVE ? "(" : "",
				      x->ac_kind == CFG_ACT_BACKEND_REMOVE ||
				      x->ac_kind == CFG_ACT_ROUTE_REMOVE ? x->ac_what : "",
				      x->ac_kind == CFG_ACT_BACKEND_REMOVE ||
				      x->ac_kind == CFG_ACT_ROUTE_REMOVE ? ")" : "");
	}
}

static void t01_diff_table(void **state)
{
	static const struct {
		const char *a, *b, *want;
		bool values;
	} t[] = {
		/* 1 same file, sections moved */
		{ BA RN("a"), "\n" BA "\n" RN("a"), "bk:a rk:nfs", false },
		/* 2 a limit and the log level: values only */
		{ BA RN("a"), "[gateway]\ncalls_per_client = 7\nlog_level = debug\n" BA RN("a"),
		  "bk:a rk:nfs", true },
		/* 3 a second backend added, nothing routed to it */
		{ BA RN("a"), BA BB RN("a"), "bk:a b+:b rk:nfs", false },
		/* 4 route moved to the new backend */
		{ BA RN("a"), BA BB RN("b"), "bk:a b+:b r-:nfs(backend) r+:nfs", false },
		/* 5 backend removed with its route moved away */
		{ BA BB RN("a") RM("b"), BB RN("b") RM("b"), "b-:a(removed) bk:b r-:nfs(backend) r+:nfs rk:mount", false },
		/* 6 connection parameter changed: remove + add, and its routes too */
		{ BA RN("a"), "[backend a]\naddress = 10.0.0.9\n" RN("a"),
		  "b-:a(address) b+:a r-:nfs(backend changed) r+:nfs", false },
		/* 7 credits changed */
		{ BA RN("a"), BA "credits = 32\n" RN("a"), "b-:a(credits) b+:a r-:nfs(backend changed) r+:nfs",
		  false },
		/* 8 versions changed: kept in place */
		{ BA RN("a"), BA RN("a") "versions = 4\n", "bk:a rk:nfs", false },
		/* 9 transport changed */
		{ BA RN("a"), BA RN("a") "transport = tcp\n", "bk:a r-:nfs(transport) r+:nfs", false },
		/* 10 route removed, another added */
		{ BA RN("a"), BA RM("a"), "bk:a r-:nfs(removed) r+:mount", false },
		/* 11 restart-only keys, listed */
		{ BA RN("a"), "[gateway]\nlisten = 127.0.0.1:2050\nmax_calls = 100\n" BA RN("a"),
		  "bk:a rk:nfs !listen !max_calls", false },
		/* 12 pool and admin listener */
		{ BA RN("a"), "[gateway]\nbuffers = 2048\nadmin_listen = \n" BA RN("a"),
		  "bk:a rk:nfs !buffer pool !admin_listen", false },
		/* 13 a backend renamed: remove + add */
		{ BA RN("a"), "[backend c]\naddress = 10.0.0.1\n" RN("c"),
		  "b-:a(removed) b+:c r-:nfs(backend) r+:nfs", false },
		/* 14 CCP turned on: new connections (CONF_RDMA is their first call) */
		{ BA RN("a"), BA "ccp = on\n" RN("a"), "b-:a(ccp) b+:a r-:nfs(backend changed) r+:nfs",
		  false },
		/* 15 rpcbind registration: made once at start */
		{ BA RN("a"), "[gateway]\nrpcbind_register = on\n" BA RN("a"), "bk:a rk:nfs !rpcbind_register",
		  false },
	};
	char err[256], got[512];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct cfg *a = cfg_parse_string(t[i].a, "a", NULL, err, sizeof(err));
		struct cfg *b;
		struct cfg_diff d;

		if (!a)
			fail_msg("case %zu old: %s", i + 1, err);
		b = cfg_parse_string(t[i].b, "b", NULL, err, sizeof(err));
		if (!b)
			fail_msg("case %zu new: %s", i + 1, err);
		diff_str(a, b, got, sizeof(got));
		if (strcmp(got, t[i].want))
			fail_msg("case %zu: got '%s', want '%s'", i + 1, got, t[i].want);
		cfg_diff(a, b, &d);
		if (d.cdf_values != t[i].values)
			fail_msg("case %zu: values %d, want %d", i + 1, d.cdf_values, t[i].values);
		cfg_free(a);
		cfg_free(b);
	}
}

/* The reload's log line names the values that changed (cdf_values_what),
 * in table order, listeners' and routes' with their name. */
static void t01b_values_named(void **state)
{
	static const struct { const char *a, *b, *want; } t[] = {
		/* 1 */ { BA RN("a"), "[gateway]\ncalls_per_client = 7\nlog_level = debug\n" BA RN("a"),
			  "log_level, calls_per_client" },
		/* 2 */ { BA RN("a"), BA RN("a"), "" },
		/* 3 */ { BA RN("a"), BA RN("a") "versions = 4\n", "route nfs versions" },
		/* 4 */ { "[gateway]\nlisten = 127.0.0.1\n[listener e]\nlisten = 127.0.0.2\n" BA RN("a"),
			  "[gateway]\nlisten = 127.0.0.1\nidle_timeout = 9\n[listener e]\nlisten = 127.0.0.2\n"
			  "squash = root\n" BA RN("a"), "idle_timeout, [listener e] squash" },
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct cfg *a = cfg_parse_string(t[i].a, "a", NULL, err, sizeof(err));
		struct cfg *b = cfg_parse_string(t[i].b, "b", NULL, err, sizeof(err));
		struct cfg_diff d;

		if (!a || !b)
			fail_msg("case %zu: %s", i + 1, err);
		cfg_diff(a, b, &d);
		if (strcmp(d.cdf_values_what, t[i].want))
			fail_msg("case %zu: got '%s', want '%s'", i + 1, d.cdf_values_what, t[i].want);
		cfg_free(a);
		cfg_free(b);
	}
}

/* ---- in process ---- */

static void conf(char *buf, size_t cap, const char *backends, const char *routes)
{
	snprintf(buf, cap,
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "bytes_per_client = 1m\nreconnect_interval = 30ms\n%s%s", backends, routes);
}

static uint32_t reply_tag(const uint8_t *r) { return chk_be32(r + 24); }

/* 2. The route moves to a new backend while a call is in flight on the old
 * one: the new call goes to the new backend, the old one completes on its
 * retired path, which is then freed; removing the idle backend frees it. */
static void t02_route_moves(void **state)
{
	struct h_server s1, s2;
	struct h_gw h;
	char text[1024], rt[256];
	uint8_t buf[256];
	int fd;

	(void)state;
	h_server_init(&s1);
	h_server_init(&s2);
	h_server_start(&s1);
	h_server_start(&s2);
	h_server_set(&s1, true, 0);		/* s1 keeps its replies back */
	snprintf(rt, sizeof(rt), "[route nfs]\nprogram = nfs\ntransport = tcp\nbackend = a\nport = %u\n",
		 s1.port);
	conf(text, sizeof(text), "[backend a]\naddress = 127.0.0.1\n", rt);
	h_gw_start(&h, text);
	fd = h_client(&h);
	h_send(fd, buf, h_call(buf, 0x101, 2, NFS, 3, 0xa1));
	for (int i = 0; i < 300 && h_server_calls(&s1) < 1; i++)
		h_pump(&h, 10);
	assert_int_equal(h_server_calls(&s1), 1);

	snprintf(rt, sizeof(rt), "[route nfs]\nprogram = nfs\ntransport = tcp\nbackend = b\nport = %u\n",
		 s2.port);
	conf(text, sizeof(text), "[backend a]\naddress = 127.0.0.1\n[backend b]\naddress = 127.0.0.1\n", rt);
	assert_int_equal(h_gw_reload(&h, text), 0);
	assert_int_equal(gw_ctx_npaths(h.gw), 1);
	assert_string_equal(gw_path_name(gw_ctx_path(h.gw, 0)), "nfs/b");
	assert_int_equal(gw_ctx_nretiring(h.gw), 1);
	assert_string_equal(gw_path_name(gw_ctx_retiring(h.gw, 0)), "nfs/a");
	assert_int_equal(gw_path_ncalls(gw_ctx_retiring(h.gw, 0)), 1);

	/* A new call: to b, answered while a's call still waits. */
	h_send(fd, buf, h_call(buf, 0x102, 2, NFS, 3, 0xb2));
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf), 0x102);
	assert_int_equal(reply_tag(buf), 0xb2);
	assert_int_equal(h_server_calls(&s2), 1);
	assert_int_equal(h_server_calls(&s1), 1);
	h_pump(&h, 50);
	assert_int_equal(gw_ctx_nretiring(h.gw), 1);	/* still finishing */

	/* a answers: the call completes on the retired path, then it goes. */
	h_server_set(&s1, false, 0);
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf), 0x101);
	assert_int_equal(reply_tag(buf), 0xa1);
	h_pump(&h, 20);
	assert_int_equal(gw_ctx_nretiring(h.gw), 0);

	/* Backend a removed: nothing used it any more. */
	conf(text, sizeof(text), "[backend b]\naddress = 127.0.0.1\n", rt);
	assert_int_equal(h_gw_reload(&h, text), 0);
	h_pump(&h, 20);
	assert_int_equal(gw_ctx_npaths(h.gw), 1);
	h_send(fd, buf, h_call(buf, 0x103, 2, NFS, 3, 0xb3));
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(reply_tag(buf), 0xb3);
	assert_int_equal(h.st.gs_ctr[GW_CTR_CLIENTS_CLOSED], 0);	/* the client stayed */
	assert_int_equal(h_gw_end(&h, fd), 0);
	h_server_stop(&s1, true);
	h_server_stop(&s2, true);
}

/* 3. Calls held for a backend that is down move to the route's new path
 * and are answered there; a program whose route is gone gets PROG_UNAVAIL. */
static void t03_held_move(void **state)
{
	struct h_server s1, s2;
	struct h_gw h;
	char text[1024], rt[256];
	uint8_t buf[256];
	int fd;

	(void)state;
	h_server_init(&s1);		/* never listens */
	h_server_init(&s2);
	h_server_start(&s2);
	snprintf(rt, sizeof(rt), "[route nfs]\nprogram = nfs\ntransport = tcp\nbackend = a\nport = %u\n",
		 s1.port);
	conf(text, sizeof(text), "[backend a]\naddress = 127.0.0.1\n", rt);
	h_gw_start(&h, text);
	fd = h_client(&h);
	h_send(fd, buf, h_call(buf, 0x201, 2, NFS, 3, 0xc1));
	h_send(fd, buf, h_call(buf, 0x202, 2, NFS, 3, 0xc2));
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 200), -1);
	assert_int_equal(gw_path_nheld(gw_ctx_path(h.gw, 0)), 2);

	snprintf(rt, sizeof(rt), "[route nfs]\nprogram = nfs\ntransport = tcp\nbackend = b\nport = %u\n",
		 s2.port);
	conf(text, sizeof(text), "[backend b]\naddress = 127.0.0.1\n", rt);
	assert_int_equal(h_gw_reload(&h, text), 0);
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf), 0x201);
	assert_int_equal(reply_tag(buf), 0xc1);
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf), 0x202);
	assert_int_equal(h_server_calls(&s2), 2);
	h_pump(&h, 20);
	assert_int_equal(gw_ctx_nretiring(h.gw), 0);	/* nothing was in flight on a */

	/* The route removed: PROG_UNAVAIL from the gateway itself. */
	snprintf(rt, sizeof(rt), "[route mount]\nprogram = mount\ntransport = tcp\nport = %u\n", s2.port);
	conf(text, sizeof(text), "[backend b]\naddress = 127.0.0.1\n", rt);
	assert_int_equal(h_gw_reload(&h, text), 0);
	h_send(fd, buf, h_call(buf, 0x203, 2, NFS, 3, 0xc3));
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 3000), 24);
	assert_int_equal(chk_be32(buf + 20), 1);	/* PROG_UNAVAIL */
	assert_int_equal(h.st.gs_ctr[GW_CTR_LOCAL_PROG_UNAVAIL], 1);
	assert_int_equal(h_gw_end(&h, fd), 0);
	h_server_stop(&s1, false);
	h_server_stop(&s2, true);
}

/* 4. All or nothing: a restart-only change is refused by gw_ctx_reload;
 * more new backends than free slots (others still retiring) is refused
 * with nothing changed. */
static void t04_refused(void **state)
{
	struct h_server s1;
	struct h_gw h;
	char text[2048], rt[256], bk[1024];
	uint8_t buf[256];
	int fd;

	(void)state;
	h_server_init(&s1);
	h_server_start(&s1);
	h_server_set(&s1, true, 0);
	snprintf(rt, sizeof(rt), "[route nfs]\nprogram = nfs\ntransport = tcp\nbackend = a\nport = %u\n",
		 s1.port);
	conf(text, sizeof(text), "[backend a]\naddress = 127.0.0.1\n", rt);
	h_gw_start(&h, text);

	snprintf(text, sizeof(text), "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\n"
		 "max_calls = 65\nbytes_per_client = 1m\n[backend a]\naddress = 127.0.0.1\n%s", rt);
	assert_int_equal(h_gw_reload(&h, text), -EINVAL);
	assert_int_equal(gw_ctx_npaths(h.gw), 1);

	/* Generation 0 replaces a with 8 backends and keeps a call in flight
	 * on g0_0; generation 1 replaces those 8 (g0_0 stays busy, retiring);
	 * generation 2 asks for 8 more slots while 8 are active and g0_0 still
	 * holds one: 7 free, refused, nothing changed. */
	fd = h_client(&h);
	for (int gen = 0; gen < 3; gen++) {
		size_t o = 0;

		for (int i = 0; i < CFG_MAX_BACKENDS; i++)
			o += (size_t)snprintf(bk + o, sizeof(bk) - o,
					      "[backend g%d_%d]\naddress = 127.0.0.%d\n", gen, i, i + 1);
		snprintf(rt, sizeof(rt), "[route nfs]\nprogram = nfs\ntransport = tcp\nbackend = g%d_0\n"
			 "port = %u\n", gen, s1.port);
		conf(text, sizeof(text), bk, rt);
		if (gen < 2) {
			assert_int_equal(h_gw_reload(&h, text), 0);
			h_pump(&h, 20);
		} else {
			assert_int_equal(h_gw_reload(&h, text), -ENOSPC);
			assert_string_equal(gw_path_name(gw_ctx_path(h.gw, 0)), "nfs/g1_0");
			assert_int_equal(gw_ctx_nretiring(h.gw), 1);
		}
		if (gen == 0) {
			h_send(fd, buf, h_call(buf, 0x301, 2, NFS, 3, 1));
			for (int i = 0; i < 300 && h_server_calls(&s1) < 1; i++)
				h_pump(&h, 10);
			assert_int_equal(h_server_calls(&s1), 1);
		}
	}
	h_server_set(&s1, false, 0);
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(h_gw_end(&h, fd), 0);
	h_server_stop(&s1, true);
}

/* 5. NFSv4.1 COMPOUND { SEQUENCE, PUTFH, READ } over the TCP transport:
 * one count per operation, in /metrics and in `stats`. */
static void t05_nfs4_ops(void **state)
{
	static uint8_t msg[1024];
	struct h_server s1;
	struct h_gw h;
	struct xdr_enc xe;
	struct evbuffer *eb;
	char text[1024], rt[256], *txt;
	uint8_t buf[256];
	size_t n;
	int fd;

	(void)state;
	h_server_init(&s1);
	h_server_start(&s1);
	snprintf(rt, sizeof(rt), "[route nfs]\nprogram = nfs\ntransport = tcp\nport = %u\n", s1.port);
	conf(text, sizeof(text), "[backend a]\naddress = 127.0.0.1\n", rt);
	h_gw_start(&h, text);
	fd = h_client(&h);
	for (int k = 0; k < 2; k++) {
		xdr_enc_init(&xe, msg + 4, sizeof(msg) - 4);
		assert_true(nfs_enc_call_hdr(&xe, 0x401 + k, NFS, 4, 1));
		assert_true(nfs_enc_compound_args(&xe, 1, 3));
		/* SEQUENCE: sessionid, seqid, slotid, highest slotid, cachethis */
		assert_true(nfs_enc_fmt(&xe, "w i w w w w", 53u, 1u, 0u, 0u, 0u));
		assert_true(nfs_enc_fmt(&xe, "w o", 22u, 16u));			/* PUTFH fh */
		assert_true(nfs_enc_fmt(&xe, "w s h w", 25u, 0ull, 4096u));	/* READ */
		/* the tiny server echoes the last word as the tag */
		rm_encode_hdr(msg, (uint32_t)xe.xe_len, true);
		h_send(fd, msg, xe.xe_len + 4);
		assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 3000), 28);
	}
	assert_int_equal(h.st.gs_nfs4_op[53], 2);
	assert_int_equal(h.st.gs_nfs4_op[22], 2);
	assert_int_equal(h.st.gs_nfs4_op[25], 2);
	assert_int_equal(h.st.gs_nfs4_op[38], 0);
	assert_int_equal(h.st.gs_ctr[GW_CTR_NFS4_OPS_UNCOUNTED], 0);

	eb = evbuffer_new();
	gw_metrics_render(eb, &h.st, h.gw);
	n = evbuffer_get_length(eb);
	txt = calloc(1, n + 1);
	evbuffer_remove(eb, txt, n);
	assert_non_null(strstr(txt, "rpcrdma_gw_nfs4_ops_total{op=\"SEQUENCE\"} 2\n"));
	assert_non_null(strstr(txt, "rpcrdma_gw_nfs4_ops_total{op=\"PUTFH\"} 2\n"));
	assert_non_null(strstr(txt, "rpcrdma_gw_nfs4_ops_total{op=\"READ\"} 2\n"));
	assert_null(strstr(txt, "op=\"WRITE\""));
	free(txt);
	evbuffer_free(eb);

	{
		struct gw_ctl *ct = gw_ctl_new(h.base, h.gw, "/tmp/test_gw_reload.ctl", NULL);

		assert_non_null(ct);
		eb = evbuffer_new();
		gw_ctl_exec(ct, "stats", eb);
		n = evbuffer_get_length(eb);
		txt = calloc(1, n + 1);
		evbuffer_remove(eb, txt, n);
		assert_non_null(strstr(txt, "nfs v4 operations"));
		assert_non_null(strstr(txt, "SEQUENCE "));
		free(txt);
		gw_ctl_exec(ct, "json stats", eb);
		n = evbuffer_get_length(eb);
		txt = calloc(1, n + 1);
		evbuffer_remove(eb, txt, n);
		assert_non_null(strstr(txt, "\"nfs4_ops\":{\"PUTFH\":2,\"READ\":2,\"SEQUENCE\":2}"));
		free(txt);
		evbuffer_free(eb);
		gw_ctl_free(ct);
	}
	assert_int_equal(h_gw_end(&h, fd), 0);
	h_server_stop(&s1, true);
}

/* 6. The walker lists the op numbers, an unknown one last, and stops. */
static void t06_walker_ops(void **state)
{
	static uint8_t msg[512];
	struct chk_call_walk cw;
	struct rpc_call_hdr hdr;
	enum chk_walk_err err;
	struct xdr_enc xe;
	struct xdr_cur xc;
	struct iovec one;
	struct gw_stats st;

	(void)state;
	memset(&st, 0, sizeof(st));
	xdr_enc_init(&xe, msg, sizeof(msg));
	assert_true(nfs_enc_call_hdr(&xe, 1, NFS, 4, 1));
	assert_true(nfs_enc_compound_args(&xe, 0, 3));
	assert_true(nfs_enc_fmt(&xe, "w", 24u));		/* PUTROOTFH */
	assert_true(nfs_enc_fmt(&xe, "w", 9999u));		/* unknown: walk ends */
	assert_true(nfs_enc_fmt(&xe, "w", 10u));		/* GETFH, not read */
	xdr_cur_init_buf(&xc, &one, msg, xe.xe_len);
	assert_true(rpc_call_decode(&xc, &hdr));
	chk_call_walk(&xc, hdr.rc_prog, hdr.rc_vers, hdr.rc_proc, 0, &cw, &err);
	assert_int_equal(cw.cw_nops, 3);
	assert_int_equal(cw.cw_nops_listed, 2);
	assert_int_equal(cw.cw_op[0], 24);
	assert_int_equal(cw.cw_op[1], 9999);
	gw_stats_nfs4_ops(&st, &cw);
	assert_int_equal(st.gs_nfs4_op[24], 1);
	assert_int_equal(st.gs_nfs4_op[0], 1);		/* "other" */
	assert_int_equal(st.gs_ctr[GW_CTR_NFS4_OPS_UNCOUNTED], 1);
	cw.cw_vers = 3;					/* not v4: nothing */
	gw_stats_nfs4_ops(&st, &cw);
	assert_int_equal(st.gs_nfs4_op[24], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_diff_table),
		cmocka_unit_test(t01b_values_named),
		cmocka_unit_test(t02_route_moves),
		cmocka_unit_test(t03_held_move),
		cmocka_unit_test(t04_refused),
		cmocka_unit_test(t05_nfs4_ops),
		cmocka_unit_test(t06_walker_ops),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
