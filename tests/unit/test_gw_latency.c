// SPDX-License-Identifier: MIT
/*
 * test_gw_latency.c - latency where operators look: the histogram buckets,
 * the percentiles gwctl prints, the attribution of a call to an NFS
 * operation, the per-operation, per-path and per-client figures of a
 * gateway in process, the control protocol's `stats ops` and
 * `clients top=N by=KEY`, and the order of clients --top.
 *
 *   1. buckets: 5 us is in le="5e-06", 6 us in le="1e-05", 10 s in
 *      le="10", above 10 s only in +Inf (overflow); every bound, its
 *      neighbours and every power of two where the definition puts them;
 *   2. percentiles interpolated inside the bucket, +Inf gives the last
 *      finite bound, no observation gives 0;
 *   3. attribution: NFSv3 by procedure, NFSv4 COMPOUND by its main
 *      operation (SEQUENCE, PUT*FH, SAVEFH, RESTOREFH skipped; a COMPOUND
 *      made of them only counts as its first; none read: COMPOUND), with
 *      a COMPOUND walked by the real walker; other programs: none;
 *   4. a gateway in process with a TCP backend: after calls from two
 *      clients, /metrics has op_duration_seconds{op="GETATTR",vers="3"},
 *      backend_duration_seconds{path="nfs/srv"}, `stats ops` and its JSON
 *      show them, `clients top=1 by=calls` the busier client first, bad
 *      arguments end in !ERR;
 *   5. clients --top ordering by calls, bytes and mean latency, ties by id;
 *   6. the interval table (gwctl stats --ops -i) shows the difference of
 *      two answers only, and a reset counter as a whole;
 *   7. a quiet gateway: a worker with its loop on its own thread as the
 *      daemon runs it (gw_loop_run with the worker's prewait), a TCP
 *      backend that answers at once, one client sending GETATTRs 20 ms
 *      apart; the medians of op_duration_seconds and
 *      backend_duration_seconds are within 2x of the client's own round
 *      trip (they were the gap between calls: the pass clock read before
 *      the loop blocked served the call that woke it).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <event2/buffer.h>
#include <json.h>

#include "chunking.h"
#include "client.h"
#include "config.h"
#include "gateway.h"
#include "log.h"
#include "nfs_enc.h"
#include "ops.h"
#include "transport.h"
#include "worker.h"
#include "test_gw_harness.h"

/* 1 */
static void test_buckets(void **state)
{
	struct gw_stats *st = calloc(1, sizeof(*st));
	char *t;

	(void)state;
	gw_stats_observe(st, GW_HIST_CALL, 5);		/* the first bound itself */
	gw_stats_observe(st, GW_HIST_CALL, 6);
	gw_stats_observe(st, GW_HIST_CALL, 10000000);	/* 10 s: the last bound */
	gw_stats_observe(st, GW_HIST_CALL, 10000001);	/* overflow */
	t = h_render(st, NULL);
	assert_true(h_sample(t, "rpcrdma_gw_call_duration_seconds_bucket{le=\"5e-06\"} ") == 1);
	assert_true(h_sample(t, "rpcrdma_gw_call_duration_seconds_bucket{le=\"1e-05\"} ") == 2);
	assert_true(h_sample(t, "rpcrdma_gw_call_duration_seconds_bucket{le=\"2e-05\"} ") == 2);
	assert_true(h_sample(t, "rpcrdma_gw_call_duration_seconds_bucket{le=\"5\"} ") == 2);
	assert_true(h_sample(t, "rpcrdma_gw_call_duration_seconds_bucket{le=\"10\"} ") == 3);
	assert_true(h_sample(t, "rpcrdma_gw_call_duration_seconds_bucket{le=\"+Inf\"} ") == 4);
	assert_true(h_sample(t, "rpcrdma_gw_call_duration_seconds_count ") == 4);
	/* 1-2-5 steps, 20 finite bounds: none of the old 2.5 s kind */
	assert_null(strstr(t, "le=\"2.5\""));
	assert_true(h_sample(t, "rpcrdma_gw_rdma_duration_seconds_bucket{le=\"5e-06\"} ") == 0);
	free(t);
	assert_int_equal(st->gs_hist[GW_HIST_CALL].gh_bucket[0], 1);
	assert_int_equal(st->gs_hist[GW_HIST_CALL].gh_bucket[1], 1);
	assert_int_equal(st->gs_hist[GW_HIST_CALL].gh_bucket[GW_HIST_NBUCKETS - 2], 1);
	assert_int_equal(st->gs_hist[GW_HIST_CALL].gh_bucket[GW_HIST_NBUCKETS - 1], 1);
	free(st);
}

/* The bucket of v by the definition: the first bound v does not exceed. */
static unsigned bucket_of(uint64_t v)
{
	unsigned i;

	for (i = 0; i < GW_HIST_NBUCKETS - 1; i++)
		if (v <= gw_hist_bound_us[i])
			return i;
	return i;
}

static void one_in(uint64_t v)
{
	struct gw_hist h;
	unsigned i, want = bucket_of(v);

	memset(&h, 0, sizeof(h));
	gw_hist_add(&h, v);
	for (i = 0; i < GW_HIST_NBUCKETS; i++)
		if (h.gh_bucket[i] != (i == want))
			fail_msg("%llu us: bucket %u holds %llu, the value belongs in %u",
				 (unsigned long long)v, i, (unsigned long long)h.gh_bucket[i], want);
	assert_int_equal(h.gh_count, 1);
	assert_true(h.gh_sum_us == v);
}

/* 1b: gw_hist_add() starts its search from the value's bit length; every
 * bound, its neighbours and every power of two (and its neighbours) land
 * where the definition puts them. */
static void test_bucket_edges(void **state)
{
	unsigned i, k;

	(void)state;
	one_in(0);
	one_in(UINT64_MAX);
	for (i = 0; i < GW_HIST_NBUCKETS - 1; i++) {
		one_in(gw_hist_bound_us[i] - 1);
		one_in(gw_hist_bound_us[i]);
		one_in(gw_hist_bound_us[i] + 1);
	}
	for (k = 0; k < 64; k++) {
		one_in((uint64_t)1 << k);
		one_in(((uint64_t)1 << k) - 1);
		one_in(((uint64_t)1 << k) + 1);
	}
	for (k = 1; k < 100000; k += 7)		/* every step of the lower decades */
		one_in(k);
}

static bool near(double a, double b)
{
	return a - b < 1e-9 && b - a < 1e-9;
}

/* 2 */
static void test_quantile(void **state)
{
	uint64_t b[GW_HIST_NBUCKETS] = { 0 };

	(void)state;
	assert_true(gw_hist_quantile(b, 0.5) == 0);	/* nothing observed */
	b[2] = 10;				/* (10, 20] us */
	assert_true(near(gw_hist_quantile(b, 0.5), 15.0));
	assert_true(near(gw_hist_quantile(b, 0.99), 19.9));
	memset(b, 0, sizeof(b));
	b[0] = 50;				/* [0, 5] */
	b[1] = 50;				/* (5, 10] */
	assert_true(near(gw_hist_quantile(b, 0.5), 5.0));
	assert_true(near(gw_hist_quantile(b, 0.99), 9.9));
	assert_true(near(gw_hist_quantile(b, 0.0), 0.0));
	memset(b, 0, sizeof(b));
	b[GW_HIST_NBUCKETS - 1] = 3;		/* all above 10 s */
	assert_true(gw_hist_quantile(b, 0.5) == 10000000.0);
	b[0] = 97;				/* p99 falls in +Inf, p50 in the first */
	assert_true(gw_hist_quantile(b, 0.99) == 10000000.0);
	assert_true(near(gw_hist_quantile(b, 0.5), 5.0 * 50 / 97));
}

static int slot_of(uint32_t vers, uint32_t proc, const uint16_t *ops, unsigned n)
{
	struct chk_call_walk cw = { .cw_prog = CFG_PROG_NFS, .cw_vers = vers, .cw_proc = proc };

	for (unsigned i = 0; i < n; i++)
		cw.cw_op[i] = ops[i];
	cw.cw_nops = cw.cw_nops_listed = n;
	return gw_op_slot(CFG_PROG_NFS, vers, proc, &cw);
}

static void assert_slot(int slot, const char *op, const char *vers)
{
	const char *v;

	assert_true(slot >= 0 && slot < GW_OPH_SLOTS);
	assert_string_equal(gw_op_slot_name((unsigned)slot, &v), op);
	assert_string_equal(v, vers);
}

/* 3 */
static void test_attribution(void **state)
{
	static const uint16_t rd[] = { CHK_OP_SEQUENCE, CHK_OP_PUTFH, CHK_OP_READ };
	static const uint16_t mv[] = { CHK_OP_SEQUENCE, CHK_OP_PUTFH, CHK_OP_SAVEFH, CHK_OP_PUTFH,
				       CHK_OP_RENAME, CHK_OP_GETATTR };
	static const uint16_t root[] = { CHK_OP_PUTROOTFH, CHK_OP_GETFH, CHK_OP_GETATTR };
	static const uint16_t seq[] = { CHK_OP_SEQUENCE };
	static const uint16_t odd[] = { CHK_OP_PUTFH, 0xffff };
	uint8_t msg[512];
	struct xdr_enc xe;
	struct xdr_cur xc;
	struct iovec one;
	struct chk_call_walk cw;
	enum chk_walk_err err;
	size_t args;

	(void)state;
	assert_slot(slot_of(3, 6, NULL, 0), "READ", "3");
	assert_slot(slot_of(3, 0, NULL, 0), "NULL", "3");
	assert_slot(slot_of(3, 21, NULL, 0), "COMMIT", "3");
	assert_slot(slot_of(2, 17, NULL, 0), "STATFS", "2");
	assert_slot(slot_of(2, 8, NULL, 0), "WRITE", "2");
	assert_int_equal(slot_of(3, 22, NULL, 0), -1);
	assert_int_equal(slot_of(2, 18, NULL, 0), -1);
	assert_int_equal(gw_op_slot(CFG_PROG_MOUNT, 3, 1, NULL), -1);
	assert_int_equal(gw_op_slot(CFG_PROG_NFS, 4, 2, NULL), -1);
	assert_slot(gw_op_slot(CFG_PROG_NFS, 4, 0, NULL), "NULL", "4");
	assert_slot(slot_of(4, 1, rd, 3), "READ", "4");
	assert_slot(slot_of(4, 1, mv, 6), "RENAME", "4");
	assert_slot(slot_of(4, 1, root, 3), "GETFH", "4");
	assert_slot(slot_of(4, 1, seq, 1), "SEQUENCE", "4");
	assert_slot(slot_of(4, 1, odd, 2), "OTHER", "4");
	assert_slot(slot_of(4, 1, NULL, 0), "COMPOUND", "4");
	assert_slot(gw_op_slot(CFG_PROG_NFS, 4, 1, NULL), "COMPOUND", "4");
	/* v3 and v4 READ are two series */
	assert_true(slot_of(3, 6, NULL, 0) != slot_of(4, 1, rd, 3));

	/* the real walker: SEQUENCE PUTFH WRITE of NFSv4.1 counts as WRITE */
	xdr_enc_init(&xe, msg, sizeof(msg));
	nfs_enc_call_hdr(&xe, 7, CHK_PROG_NFS, 4, 1);
	args = xe.xe_len;
	nfs_enc_compound_args(&xe, 1, 3);
	nfs_enc_fmt(&xe, "w i w w w w", (unsigned)CHK_OP_SEQUENCE, 1u, 0u, 0u, 0u);
	nfs_enc_fmt(&xe, "w o", (unsigned)CHK_OP_PUTFH, 8u);
	nfs_enc_fmt(&xe, "w shw o", (unsigned)CHK_OP_WRITE, 0ull, 1u, 16u);
	assert_int_equal(xe.xe_err, XDR_OK);
	xdr_cur_init_buf(&xc, &one, msg, xe.xe_len);
	assert_true(xdr_seek(&xc, args));
	assert_true(chk_call_walk(&xc, CHK_PROG_NFS, 4, 1, 0, &cw, &err));
	assert_int_equal(cw.cw_nops_listed, 3);
	assert_slot(gw_op_slot(CFG_PROG_NFS, 4, 1, &cw), "WRITE", "4");
}

/* 4 */
static void test_gateway_figures(void **state)
{
	char path[64], *r;
	struct h_server s;
	struct h_gw h;
	struct gw_ctl *ct;
	uint8_t buf[256];
	int a, b;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_gw_latency.%d", (int)getpid());
	h_gw_up(&h, &s);
	ct = gw_ctl_new(h.base, h.gw, path, NULL);
	assert_non_null(ct);
	a = h_client(&h);
	b = h_client(&h);
	for (uint32_t x = 1; x <= 3; x++) {	/* a: 3 GETATTR (v3 procedure 1) */
		h_send(a, buf, h_call(buf, x, 2, 100003, 3, 0xa1));
		assert_int_equal(h_reply(&h, a, buf, sizeof(buf), 3000), 28);
	}
	h_send(b, buf, h_call(buf, 9, 2, 100003, 3, 0xa1));
	assert_int_equal(h_reply(&h, b, buf, sizeof(buf), 3000), 28);
	h_pump(&h, 50);

	r = h_render(&h.st, h.gw);
	assert_true(h_sample(r, "rpcrdma_gw_op_duration_seconds_count{op=\"GETATTR\",vers=\"3\"} ") == 4);
	assert_true(h_sample(r, "rpcrdma_gw_op_duration_seconds_bucket{op=\"GETATTR\",vers=\"3\","
			   "le=\"+Inf\"} ") == 4);
	assert_true(h_sample(r, "rpcrdma_gw_op_duration_seconds_sum{op=\"GETATTR\",vers=\"3\"} ") > 0);
	assert_true(h_sample(r, "rpcrdma_gw_backend_duration_seconds_count{path=\"nfs/srv\"} ") == 4);
	assert_true(h_sample(r, "rpcrdma_gw_backend_duration_seconds_bucket{path=\"nfs/srv\","
			   "le=\"10\"} ") == 4);
	assert_true(h_sample(r, "rpcrdma_gw_call_duration_seconds_count ") == 4);
	assert_null(strstr(r, "op=\"READ\""));	/* only operations seen */
	free(r);

	r = h_ctl(ct, "stats ops");
	assert_non_null(strstr(r, "interpolated"));
	assert_non_null(strstr(r, "\n3    GETATTR                             4 "));
	assert_non_null(strstr(r, "\nnfs/srv                                  4 "));
	assert_true(!strcmp(r + strlen(r) - 3, "\n.\n"));
	free(r);
	r = h_ctl(ct, "json stats ops");
	{
		char *nl = strchr(r, '\n');
		struct json_object *jo, *ops, *row, *v;

		assert_non_null(nl);
		*nl = '\0';
		jo = json_tokener_parse(r);
		assert_non_null(jo);
		assert_true(json_object_object_get_ex(jo, "ops", &ops));
		assert_int_equal(json_object_array_length(ops), 1);
		row = json_object_array_get_idx(ops, 0);
		assert_true(json_object_object_get_ex(row, "op", &v));
		assert_string_equal(json_object_get_string(v), "GETATTR");
		assert_true(json_object_object_get_ex(row, "count", &v));
		assert_int_equal(json_object_get_int64(v), 4);
		assert_true(json_object_object_get_ex(row, "buckets", &v));
		assert_int_equal(json_object_array_length(v), GW_HIST_NBUCKETS);
		assert_true(json_object_object_get_ex(jo, "bounds_us", &v));
		assert_int_equal(json_object_array_length(v), GW_HIST_NBUCKETS - 1);
		assert_int_equal(json_object_get_int64(json_object_array_get_idx(v, 0)), 5);
		json_object_put(jo);
	}
	free(r);

	r = h_ctl(ct, "clients top=1 by=calls");
	assert_non_null(strstr(r, "calls_done"));
	{
		/* header, one row (client a: 3 calls), "... 1 more", "." */
		char *row = strchr(r, '\n') + 1;
		unsigned long long id, done;
		char peer[64];

		assert_int_equal(sscanf(row, "%llu %63s %llu", &id, peer, &done), 3);
		assert_int_equal(done, 3);
		assert_non_null(strstr(row, "\n... 1 more\n.\n"));
	}
	free(r);
	r = h_ctl(ct, "json clients by=bytes top=2");
	assert_non_null(strstr(r, "\"count\":2"));
	assert_non_null(strstr(r, "\"calls_done\":3"));
	assert_true(strstr(r, "\"calls_done\":3") < strstr(r, "\"calls_done\":1"));
	free(r);
	r = h_ctl(ct, "clients top=0");
	assert_non_null(strstr(r, "!ERR clients takes top=N"));
	free(r);
	r = h_ctl(ct, "clients by=speed");
	assert_non_null(strstr(r, "!ERR "));
	free(r);
	r = h_ctl(ct, "stats nope");
	assert_non_null(strstr(r, "!ERR stats takes"));
	free(r);
	r = h_ctl(ct, "clients");		/* the plain list is unchanged */
	assert_non_null(strstr(r, "paused"));
	assert_null(strstr(r, "calls_done"));
	free(r);

	close(a);
	close(b);
	gw_ctl_free(ct);
	h_server_stop(&s, true);
	assert_int_equal(h_gw_stop(&h), 0);
}

/* 5 */
static void test_top_order(void **state)
{
	struct gw_client_info ci[4];
	static const struct { uint64_t id, done, bytes, us; } v[4] = {
		{ 1, 10, 100, 10000 },	/* mean 1000 us */
		{ 2, 30, 50, 3000 },	/* mean 100 */
		{ 3, 10, 900, 50000 },	/* mean 5000 */
		{ 4, 0, 0, 0 },		/* nothing done: mean 0 */
	};

	(void)state;
#define FILL() do { memset(ci, 0, sizeof(ci)); for (unsigned i = 0; i < 4; i++) { \
		ci[i].gci_id = v[3 - i].id; ci[i].gci_done = v[3 - i].done; \
		ci[i].gci_done_bytes = v[3 - i].bytes; ci[i].gci_done_us = v[3 - i].us; } } while (0)
	FILL();
	gw_ctl_top_sort(ci, 4, GW_TOP_CALLS);
	assert_int_equal(ci[0].gci_id, 2);
	assert_int_equal(ci[1].gci_id, 1);	/* tie 10 calls: lower id first */
	assert_int_equal(ci[2].gci_id, 3);
	assert_int_equal(ci[3].gci_id, 4);
	FILL();
	gw_ctl_top_sort(ci, 4, GW_TOP_BYTES);
	assert_int_equal(ci[0].gci_id, 3);
	assert_int_equal(ci[1].gci_id, 1);
	assert_int_equal(ci[2].gci_id, 2);
	assert_int_equal(ci[3].gci_id, 4);
	FILL();
	gw_ctl_top_sort(ci, 4, GW_TOP_LATENCY);
	assert_int_equal(ci[0].gci_id, 3);
	assert_int_equal(ci[1].gci_id, 1);
	assert_int_equal(ci[2].gci_id, 2);
	assert_int_equal(ci[3].gci_id, 4);
#undef FILL
}

static char *table(struct json_object *prev, struct json_object *cur, bool json)
{
	struct evbuffer *b = evbuffer_new();

	gw_ops_table(prev, cur, b, json);
	return h_drain(b);
}

/* 6 */
static void test_interval_table(void **state)
{
	struct gw_stats *st = calloc(1, sizeof(*st));
	struct json_object *j0, *j1, *j2;
	char *t;

	(void)state;
	for (int i = 0; i < 5; i++)
		gw_hist_add(&st->gs_op_hist[GW_OPH_NFS3 + 6], 15);	/* READ, (10, 20] */
	gw_hist_add(&st->gs_op_hist[GW_OPH_NFS3 + 1], 3);		/* GETATTR */
	j0 = gw_ops_json(st, NULL);
	for (int i = 0; i < 10; i++)
		gw_hist_add(&st->gs_op_hist[GW_OPH_NFS3 + 6], 150);	/* (100, 200] */
	j1 = gw_ops_json(st, NULL);

	t = table(NULL, j1, false);	/* cumulative: READ 15 calls */
	assert_non_null(strstr(t, "\n3    READ                               15 "));
	assert_non_null(strstr(t, "\n3    GETATTR                             1 "));
	free(t);
	t = table(j0, j1, false);	/* the interval: 10 READ at 150 us, no GETATTR */
	assert_non_null(strstr(t, "\n3    READ                               10      0.150      "
			       "0.150      0.199\n"));
	assert_null(strstr(t, "GETATTR"));
	assert_non_null(strstr(t, "backends"));
	free(t);
	t = table(j0, j1, true);
	assert_non_null(strstr(t, "\"op\":\"READ\",\"count\":10,\"mean_us\":150"));
	assert_null(strstr(t, "GETATTR"));
	free(t);
	/* a restarted gateway: counts went down, the new answer counts whole */
	memset(st, 0, sizeof(*st));
	gw_hist_add(&st->gs_op_hist[GW_OPH_NFS3 + 6], 15);
	j2 = gw_ops_json(st, NULL);
	t = table(j1, j2, false);
	assert_non_null(strstr(t, "\n3    READ                                1 "));
	free(t);
	json_object_put(j0);
	json_object_put(j1);
	json_object_put(j2);
	free(st);
}

/* 7 */
#define QUIET_CALLS	30
#define QUIET_GAP_US	20000

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One call on a blocking socket: its round trip in microseconds. */
static uint64_t quiet_call(int fd, uint32_t xid)
{
	uint8_t buf[128];
	size_t have = 0, n = h_call(buf, xid, 2, 100003, 3, xid);
	uint64_t t0 = mono_us();

	h_send(fd, buf, n);
	while (have < 4 + 28) {		/* mark + the tiny server's reply */
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t r;

		assert_true(poll(&pfd, 1, 3000) == 1);
		r = read(fd, buf + have, sizeof(buf) - have);
		assert_true(r > 0);
		have += (size_t)r;
	}
	assert_int_equal(chk_be32(buf + 4), xid);
	return mono_us() - t0;
}

static void test_quiet_gateway(void **state)
{
	struct gw_log lg = { .gl_level = getenv("H_VERBOSE") ? CFG_LOG_DEBUG : -1 };
	struct gw_worker_params wp = { .wp_index = 0, .wp_count = 1, .wp_log = &lg };
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint64_t rtt[QUIET_CALLS];
	double client_p50, op_p50, path_p50;
	const struct gw_hist *op, *path;
	struct gw_worker *w;
	struct gw_stats *st;
	struct h_server s;
	char text[1024], err[256];
	struct cfg *cf;
	int fd;

	(void)state;
	h_server_init(&s);
	h_server_start(&s);
	snprintf(text, sizeof(text),
		 "[gateway]\nsecure_port = no\nbuffer_size = 16k\n"
		 "buffers = 64\nmax_record = 64k\nmax_calls = 64\nworkers = 1\n"
		 "[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\nversions = 3-4\ntransport = tcp\nport = %u\n", s.port);
	cf = cfg_parse_string(text, "test", NULL, err, sizeof(err));
	if (!cf)
		fprintf(stderr, "config: %s\n", err);
	assert_non_null(cf);
	wp.wp_cfg = cf;
	w = gw_worker_new(&wp);		/* no base given: a loop and thread of its own */
	assert_non_null(w);
	assert_int_equal(fe_listen_addr(gw_worker_fe(w), (struct sockaddr *)&la, sizeof(la)), 0);
	la.sin_port = htons(fe_listen_port(gw_worker_fe(w), 0));
	assert_int_equal(gw_worker_start(w), 0);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&la, sizeof(la)), 0);
	quiet_call(fd, 1);		/* the backend connection is made on this one */
	st = gw_worker_stats(w);
	for (unsigned i = 0; i < QUIET_CALLS; i++) {
		usleep(QUIET_GAP_US);
		rtt[i] = quiet_call(fd, 0x100 + i);
	}
	close(fd);
	gw_worker_join(w);		/* its thread ended: its counters are read here */
	qsort(rtt, QUIET_CALLS, sizeof(rtt[0]), cmp_u64);
	client_p50 = (double)rtt[QUIET_CALLS / 2];
	op = &st->gs_op_hist[gw_op_slot(100003, 3, 1, NULL)];
	path = gw_path_hist(gw_ctx_path(gw_worker_ctx(w), 0));
	assert_int_equal(op->gh_count, QUIET_CALLS + 1);
	assert_int_equal(path->gh_count, QUIET_CALLS + 1);
	op_p50 = gw_hist_quantile(op->gh_bucket, 0.5);
	path_p50 = gw_hist_quantile(path->gh_bucket, 0.5);
	fprintf(stderr, "  p50 us: client %.0f, op_duration %.0f, backend_duration %.0f\n",
		client_p50, op_p50, path_p50);
	/* The gateway's time is part of the client's round trip; the 2x is
	 * the histogram's bucket interpolation (1-2-5 bounds). */
	assert_true(op_p50 <= 2 * client_p50);
	assert_true(path_p50 <= 2 * client_p50);
	gw_worker_free(w);
	cfg_free(cf);
	h_server_stop(&s, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_bucket_edges),
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_attribution),
		cmocka_unit_test(test_gateway_figures),
		cmocka_unit_test(test_top_order),
		cmocka_unit_test(test_interval_table),
		cmocka_unit_test(test_quiet_gateway),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
