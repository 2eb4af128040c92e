// SPDX-License-Identifier: MIT
/* Unit tests of the client seam (gateway/client.h) with a fake frontend:
 * the gateway reaches a client only through its ops (deliver, update,
 * info), a reply is an output item the frontend writes from the call's
 * own memory (record mark and client XID first, the gateway XID skipped),
 * written items go back through gw_on_out_done, and closing a client
 * reclaims what is still queued.  No socket, no event loop, no transport:
 * the calls are answered locally (unrouted program). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "chunking.h"
#include "client.h"
#include "config.h"
#include "gateway.h"
#include "log.h"
#include "pool.h"

#define FK_MAX 8

struct fake_fe {
	struct gw_out *q[FK_MAX];	/* delivered, not yet written */
	unsigned nq, ndeliver, nupdate, ninfo;
	const char *name;
};

static void fk_deliver(void *arg, struct gw_out *o)
{
	struct fake_fe *f = arg;

	assert_true(f->nq < FK_MAX);
	f->q[f->nq++] = o;
	f->ndeliver++;
}

static void fk_update(void *arg)
{
	((struct fake_fe *)arg)->nupdate++;
}

static void fk_info(void *arg, struct gw_client_info *ci)
{
	struct fake_fe *f = arg;

	f->ninfo++;
	snprintf(ci->gci_name, sizeof(ci->gci_name), "%s", f->name);
	ci->gci_bytes += 1000;		/* its queued output */
}

static const struct gw_client_ops fk_ops = {
	.cop_deliver = fk_deliver, .cop_update = fk_update, .cop_info = fk_info,
};

struct env {
	struct cfg *cf;
	struct gw_log log;
	struct gw_stats st;
	struct gw_pool *pool;
	struct gw_ctx *gw;
};

static int setup(void **state)
{
	static const char text[] = "[gateway]\nbuffer_size = 4k\nbuffers = 16\nmax_record = 16k\n"
				   "max_calls = 4\n[backend srv]\naddress = 127.0.0.1\n"
				   "[route nfs]\nprogram = nfs\ntransport = tcp\n";
	struct env *e = calloc(1, sizeof(*e));
	struct gw_ctx_params gp;
	char err[256];

	assert_non_null(e);
	e->cf = cfg_parse_string(text, "client", NULL, err, sizeof(err));
	if (!e->cf)
		fprintf(stderr, "config: %s\n", err);
	assert_non_null(e->cf);
	e->log.gl_level = getenv("H_VERBOSE") ? CFG_LOG_DEBUG : -1;
	e->pool = gw_pool_new(e->cf->cf_buffer_size, e->cf->cf_buffers, false);
	assert_non_null(e->pool);
	gp = (struct gw_ctx_params){ .gp_cfg = e->cf, .gp_log = &e->log, .gp_stats = &e->st,
				     .gp_pool = e->pool, .gp_ncalls = 4 };
	e->gw = gw_ctx_new(&gp);	/* not started: no transport, no event loop */
	assert_non_null(e->gw);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	unsigned out;

	gw_ctx_free(e->gw);
	out = gw_pool_count(e->pool) - gw_pool_avail(e->pool);
	gw_pool_free(e->pool);
	cfg_free(e->cf);
	free(e);
	if (out) {
		fprintf(stderr, "teardown: %u pool buffers still out (leak)\n", out);
		return -1;
	}
	return 0;
}

/* A record in one pool buffer: an RPC CALL of prog 99 (no route: the
 * gateway answers PROG_UNAVAIL itself), or len raw bytes of garbage. */
static void record(struct env *e, struct gw_rec *r, uint32_t xid, bool garbage)
{
	static const uint32_t w[] = { 0, 0, 2, 99, 1, 0, 0, 0, 0, 0 };
	struct gw_buf *b = gw_buf_get(e->pool);
	size_t n = garbage ? 6 : sizeof(w);

	assert_non_null(b);
	for (unsigned i = 0; i < sizeof(w) / 4; i++)
		chk_put_be32(b->gb_data + 4 * i, i == 0 ? xid : i == 1 ? 0 : w[i]);
	if (garbage)
		memset(b->gb_data, 0xff, n);
	b->gb_used = (uint32_t)n;
	gw_rec_init(r);
	r->rcd_iov[0] = (struct iovec){ b->gb_data, n };
	r->rcd_buf[0] = b;
	r->rcd_niov = 1;
	r->rcd_len = n;
}

/* Bytes of an output item as the frontend writes them. */
static size_t flatten(const struct gw_out *o, uint8_t *out, size_t cap)
{
	struct iovec iov[8];
	unsigned n = gw_out_iov(o, iov, 8);
	size_t len = 0;

	for (unsigned i = 0; i < n; i++) {
		assert_true(len + iov[i].iov_len <= cap);
		memcpy(out + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	return len;
}

/* 1. A reply reaches the client only through cop_deliver, as mark + client
 * XID + the reply after its XID; it counts against the client until the
 * frontend says it was written, which ends the call and resumes reading. */
static void t01_deliver_and_done(void **state)
{
	struct env *e = *state;
	struct fake_fe f = { .name = "fake#1" };
	struct gw_client *cl = gw_client_open(e->gw, &fk_ops, &f, f.name, 7);
	struct gw_rec r;
	uint8_t b[128];
	size_t n;

	assert_non_null(cl);
	assert_string_equal(gw_client_name(cl), "fake#1");
	assert_int_equal(gw_client_key(cl), 7);
	record(e, &r, 0xabcd0001, false);
	assert_int_equal(gw_on_record(cl, &r), 0);
	assert_int_equal(r.rcd_niov, 0);			/* the gateway took the record */
	assert_int_equal(f.ndeliver, 1);
	assert_int_equal(f.q[0]->ou_kind, GW_OUT_REPLY);
	assert_int_equal(gw_client_ncalls(cl), 1);
	assert_int_equal(gw_client_bytes(cl), 40);	/* the call record */
	assert_int_equal(gw_ctx_calls_avail(e->gw), 3);
	n = flatten(f.q[0], b, sizeof(b));
	assert_int_equal(n, gw_out_bytes(f.q[0]));
	assert_int_equal(chk_be32(b), RM_LAST_FRAG | (uint32_t)(n - 4));
	assert_int_equal(chk_be32(b + 4), 0xabcd0001);	/* client XID */
	assert_int_equal(chk_be32(b + 8), 1);		/* REPLY */
	assert_int_equal(chk_be32(b + 12), 0);		/* MSG_ACCEPTED */
	assert_int_equal(chk_be32(b + 24), RPC_PROG_UNAVAIL);
	assert_int_equal(e->st.gs_ctr[GW_CTR_LOCAL_PROG_UNAVAIL], 1);
	f.nupdate = 0;
	gw_on_out_done(cl, f.q[0]);
	assert_int_equal(gw_client_ncalls(cl), 0);
	assert_int_equal(gw_client_bytes(cl), 0);
	assert_int_equal(gw_ctx_calls_avail(e->gw), 4);
	assert_int_equal(f.nupdate, 1);			/* may read again */
	gw_client_close(cl);
}

/* 2. Not an RPC message: -EPROTO, the record released, nothing delivered. */
static void t02_garbage(void **state)
{
	struct env *e = *state;
	struct fake_fe f = { .name = "fake#2" };
	struct gw_client *cl = gw_client_open(e->gw, &fk_ops, &f, f.name, 8);
	struct gw_rec r;

	record(e, &r, 0, true);
	assert_int_equal(gw_on_record(cl, &r), -EPROTO);
	assert_int_equal(f.ndeliver, 0);
	assert_int_equal(gw_client_ncalls(cl), 0);
	assert_int_equal(gw_pool_avail(e->pool), gw_pool_count(e->pool));
	gw_client_close(cl);
}

/* 3. Closing with replies delivered but not written: the gateway reclaims
 * them (calls end, buffers return) and does not call the frontend back. */
static void t03_close_reclaims(void **state)
{
	struct env *e = *state;
	struct fake_fe f = { .name = "fake#3" };
	struct gw_client *cl = gw_client_open(e->gw, &fk_ops, &f, f.name, 9);
	struct gw_rec r;

	for (uint32_t x = 1; x <= 3; x++) {
		record(e, &r, x, false);
		assert_int_equal(gw_on_record(cl, &r), 0);
	}
	assert_int_equal(f.ndeliver, 3);
	assert_int_equal(gw_ctx_calls_avail(e->gw), 1);
	assert_int_equal(gw_ctx_nclients(e->gw), 1);
	f.nupdate = 0;
	gw_client_close(cl);
	assert_int_equal(f.nupdate, 0);
	assert_int_equal(gw_ctx_nclients(e->gw), 0);
	assert_int_equal(gw_ctx_calls_avail(e->gw), 4);
	assert_int_equal(gw_pool_avail(e->pool), gw_pool_count(e->pool));
	assert_int_equal(e->st.gs_ctr[GW_CTR_CALLS_CANCELLED], 0);	/* they were answered */
}

/* 4. The client list: the gateway's counts, the frontend's own fields
 * (name, queued output) through cop_info, in open order. */
static void t04_client_list(void **state)
{
	struct env *e = *state;
	struct fake_fe f1 = { .name = "one" }, f2 = { .name = "two" };
	struct gw_client *c1 = gw_client_open(e->gw, &fk_ops, &f1, f1.name, 1);
	struct gw_client *c2 = gw_client_open(e->gw, &fk_ops, &f2, f2.name, 2);
	struct gw_client_info ci[1];
	struct gw_rec r;

	record(e, &r, 5, false);
	assert_int_equal(gw_on_record(c2, &r), 0);
	assert_int_equal(gw_ctx_client_list(e->gw, ci, 1), 2);	/* all, only 1 filled */
	assert_string_equal(ci[0].gci_name, "one");
	assert_int_equal(ci[0].gci_calls, 0);
	assert_int_equal(ci[0].gci_bytes, 1000);
	assert_int_equal(f2.ninfo, 0);
	{
		struct gw_client_info two[2];

		assert_int_equal(gw_ctx_client_list(e->gw, two, 2), 2);
		assert_string_equal(two[1].gci_name, "two");
		assert_int_equal(two[1].gci_calls, 1);
		assert_int_equal(two[1].gci_bytes, 40 + 1000);
	}
	gw_on_out_done(c2, f2.q[0]);
	gw_client_close(c1);
	gw_client_close(c2);
	assert_int_equal(gw_ctx_nclients(e->gw), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(t01_deliver_and_done, setup, teardown),
		cmocka_unit_test_setup_teardown(t02_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(t03_close_reclaims, setup, teardown),
		cmocka_unit_test_setup_teardown(t04_client_list, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
