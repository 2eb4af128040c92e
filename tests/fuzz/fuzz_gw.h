/* SPDX-License-Identifier: MIT */
/*
 * This file contains the in-process gateway of the whole-daemon fuzz
 * targets (fuzz_gateway.c, fuzz_control.c; static functions only): the
 * real frontend, gateway and XID map on a libevent loop the target pumps,
 * with a fake transport in place of RDMA for every route.  The fake keeps
 * the calls the gateway submits and, when told, answers each with a canned
 * reply (as the unit tests' h_fake, tests/unit/test_gw_harness.h, does;
 * this one serves every route at once, counts the references it holds and
 * aborts on a release or cancel it did not expect), so no backend and no
 * RDMA device is needed.  Built once per process: libFuzzer runs millions
 * of inputs against the same gateway, as a daemon serves millions of calls.
 */
#ifndef FUZZ_GW_H
#define FUZZ_GW_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <event2/event.h>

#include "call.h"
#include "chunking.h"
#include "config.h"
#include "frontend.h"
#include "gateway.h"
#include "log.h"
#include "pool.h"
#include "transport.h"

#define FG_CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); \
				     abort(); } } while (0)

#define FG_MAX_CALLS	16
#define FG_BIG		(16 * 1024)	/* FG_REPLY_BIG's payload: a READ's data */

/* Canned replies the fake answers with (after the XID word). */
enum fg_reply {
	FG_REPLY_SUCCESS = 0,	/* accepted, SUCCESS, one result word */
	FG_REPLY_PROG_UNAVAIL,	/* accepted, PROG_UNAVAIL, no result */
	FG_REPLY_DENIED,	/* MSG_DENIED, AUTH_ERROR, AUTH_BADCRED */
	FG_REPLY_BIG,		/* accepted, SUCCESS, the client's XID, FG_BIG zero bytes */
	FG_REPLY__COUNT
};

struct fg_fake {
	struct gw_path *ff_paths[8];
	unsigned ff_npaths;
	struct gw_call *ff_calls[FG_MAX_CALLS];	/* accepted, not yet answered */
	unsigned ff_ncalls;
	unsigned ff_owned;			/* references the fake holds */
	uint8_t ff_reply[FG_MAX_CALLS][32];	/* by ca_index: valid until release */
	struct iovec ff_riov[FG_MAX_CALLS][3];
};

struct fg_gw {
	struct event_base *fg_base;
	struct cfg *fg_cf;
	struct gw_log fg_log;
	struct gw_stats fg_st;
	struct gw_pool *fg_pool;
	struct gw_ctx *fg_gw;
	struct fe_frontend *fg_fe;
	struct fg_fake fg_fake;
};

static void *fg_create(struct gw_ctx *gw, struct gw_path *path)
{
	struct fg_fake *f = gw_ctx_rdma_arg(gw);

	FG_CHECK(f->ff_npaths < 8);
	f->ff_paths[f->ff_npaths++] = path;
	gw_path_ready(path, true);
	return f;
}

static void fg_forget(struct fg_fake *f, struct gw_call *c)
{
	for (unsigned i = 0; i < f->ff_ncalls; i++)
		if (f->ff_calls[i] == c) {
			f->ff_calls[i] = f->ff_calls[--f->ff_ncalls];
			return;
		}
	FG_CHECK(!"a call the fake does not hold");
}

static void fg_destroy(void *tp)
{
	struct fg_fake *f = tp;

	while (f->ff_ncalls)	/* the seam: destroy cancels what it still owns */
		gw_call_finalize(f->ff_calls[0], GW_END_SHUTDOWN);
}

static int fg_submit(void *tp, struct gw_call *c)
{
	struct fg_fake *f = tp;
	uint8_t x[4];

	/* The seam's contract: SENT, gateway XID already in the record. */
	FG_CHECK(c->ca_state == GW_CALL_SENT);
	FG_CHECK(gw_rec_copyout(&c->ca_rec, 0, x, 4) == 4 && chk_be32(x) == c->ca_gxid);
	FG_CHECK(f->ff_ncalls < FG_MAX_CALLS && c->ca_index < FG_MAX_CALLS);
	gw_call_get(c);
	c->ca_tp_owned = true;
	f->ff_calls[f->ff_ncalls++] = c;
	f->ff_owned++;
	return 0;
}

static void fg_release(void *tp, struct gw_call *c)
{
	struct fg_fake *f = tp;

	FG_CHECK(f->ff_owned > 0);
	f->ff_owned--;
	gw_call_put(c);
}

static void fg_cancel(void *tp, struct gw_call *c)
{
	struct fg_fake *f = tp;

	fg_forget(f, c);
	FG_CHECK(f->ff_owned > 0);
	f->ff_owned--;
	gw_call_put(c);
}

static const struct gw_transport_ops fg_ops = {
	.to_name = "fake", .to_create = fg_create, .to_destroy = fg_destroy,
	.to_submit = fg_submit, .to_release = fg_release, .to_cancel = fg_cancel,
};

static const uint8_t fg_zero[FG_BIG];

/* Answer the i-th held call; the XID word in an iovec of its own (the
 * gateway must replace it with the client's). */
static __attribute__((unused)) void fg_answer(struct fg_fake *f, unsigned i, enum fg_reply kind)
{
	struct gw_call *c = f->ff_calls[i];
	uint8_t *r = f->ff_reply[c->ca_index];
	size_t n;

	chk_put_be32(r, c->ca_gxid);
	chk_put_be32(r + 4, 1);				/* REPLY */
	switch (kind) {
	case FG_REPLY_DENIED:
		chk_put_be32(r + 8, 1);			/* MSG_DENIED */
		chk_put_be32(r + 12, 1);		/* AUTH_ERROR */
		chk_put_be32(r + 16, 1);		/* AUTH_BADCRED */
		n = 20;
		break;
	case FG_REPLY_PROG_UNAVAIL:
		chk_put_be32(r + 8, 0);			/* MSG_ACCEPTED */
		chk_put_be32(r + 12, 0);		/* AUTH_NONE verifier */
		chk_put_be32(r + 16, 0);
		chk_put_be32(r + 20, 1);		/* PROG_UNAVAIL */
		n = 24;
		break;
	default:
		chk_put_be32(r + 8, 0);
		chk_put_be32(r + 12, 0);
		chk_put_be32(r + 16, 0);
		chk_put_be32(r + 20, 0);		/* SUCCESS */
		chk_put_be32(r + 24, c->ca_cxid);	/* a result: the client's XID */
		n = 28;
		break;
	}
	f->ff_riov[c->ca_index][0] = (struct iovec){ r, 4 };
	f->ff_riov[c->ca_index][1] = (struct iovec){ r + 4, n - 4 };
	f->ff_riov[c->ca_index][2] = (struct iovec){ (void *)fg_zero, FG_BIG };
	fg_forget(f, c);
	gw_call_complete(c, f->ff_riov[c->ca_index], kind == FG_REPLY_BIG ? 3 : 2);
}

/* The gateway with every route on the fake; aborts on any error. */
static void fg_start(struct fg_gw *h, const char *text)
{
	char err[256];
	struct gw_ctx_params gp;
	struct fe_params fp;

	memset(h, 0, sizeof(*h));
	signal(SIGPIPE, SIG_IGN);	/* as the daemon: a gone client is an EPIPE */
	h->fg_cf = cfg_parse_string(text, "fuzz", NULL, err, sizeof(err));
	if (!h->fg_cf) {
		fprintf(stderr, "config: %s\n", err);
		abort();
	}
	h->fg_log.gl_level = getenv("FUZZ_VERBOSE") ? CFG_LOG_DEBUG : -1;
	h->fg_base = event_base_new();
	h->fg_pool = gw_pool_new(h->fg_cf->cf_buffer_size, h->fg_cf->cf_buffers, false);
	gp = (struct gw_ctx_params){ .gp_base = h->fg_base, .gp_cfg = h->fg_cf,
				     .gp_log = &h->fg_log, .gp_stats = &h->fg_st,
				     .gp_pool = h->fg_pool, .gp_ncalls = FG_MAX_CALLS,
				     .gp_rdma_ops = &fg_ops, .gp_rdma_arg = &h->fg_fake };
	h->fg_gw = gw_ctx_new(&gp);
	fp = (struct fe_params){ .fp_base = h->fg_base, .fp_cfg = h->fg_cf, .fp_gw = h->fg_gw,
				 .fp_pool = h->fg_pool, .fp_log = &h->fg_log,
				 .fp_stats = &h->fg_st };
	h->fg_fe = fe_new(&fp);
	FG_CHECK(h->fg_base && h->fg_pool && h->fg_gw && h->fg_fe);
	FG_CHECK(gw_ctx_start(h->fg_gw) == 0);
}

#endif /* FUZZ_GW_H */
