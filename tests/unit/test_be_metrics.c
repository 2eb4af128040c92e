// SPDX-License-Identifier: MIT
/*
 * This file contains the unit test of how the RDMA backend's counters
 * reach /metrics: a fake "rdma" transport whose to_info reports distinct
 * values for every backend counter, two paths sharing one server context
 * (counted once) and a second backend; the rendered backend families must
 * be exactly the names, labels, help texts, order and values the VM tier
 * and operators grep for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <event2/buffer.h>

#include "backend.h"
#include "ops.h"
#include "test_gw_harness.h"
#include "transport.h"

struct fake {
	unsigned ncreate;
	int server[2];			/* identities of the two server contexts */
};

static void *fk_create(struct gw_ctx *gw, struct gw_path *path)
{
	struct fake *f = gw_ctx_rdma_arg(gw);

	f->ncreate++;
	gw_path_ready(path, true);
	return path;
}

static void fk_destroy(void *tp) { (void)tp; }
static int fk_submit(void *tp, struct gw_call *c) { (void)tp; (void)c; return -EIO; }
static void fk_release(void *tp, struct gw_call *c) { (void)tp; (void)c; }
static void fk_cancel(void *tp, struct gw_call *c) { (void)tp; (void)c; }

#define FILL_COUNTERS(ti, base) do { \
	(ti)->ti_be_ctr[BE_CTR_CONNECTS] = (base) + 1; \
	(ti)->ti_be_ctr[BE_CTR_DISCONNECTS] = (base) + 2; \
	(ti)->ti_be_ctr[BE_CTR_REJECTS] = (base) + 3; \
	(ti)->ti_be_ctr[BE_CTR_RESENT] = (base) + 4; \
	(ti)->ti_be_ctr[BE_CTR_ERR_VERS] = (base) + 5; \
	(ti)->ti_be_ctr[BE_CTR_ERR_CHUNK] = (base) + 6; \
	(ti)->ti_be_ctr[BE_CTR_UNKNOWN_XID] = (base) + 7; \
	(ti)->ti_be_ctr[BE_CTR_BAD_REPLY] = (base) + 8; \
	(ti)->ti_be_ctr[BE_CTR_WRITE_OVERRUN] = (base) + 9; \
	(ti)->ti_be_ctr[BE_CTR_WC_ERRORS] = (base) + 10; \
	(ti)->ti_be_ctr[BE_CTR_FLUSHED] = (base) + 11; \
	(ti)->ti_be_ctr[BE_CTR_MW_BINDS] = (base) + 12; \
	(ti)->ti_be_ctr[BE_CTR_LOCAL_INV] = (base) + 13; \
	(ti)->ti_be_ctr[BE_CTR_REMOTE_INV] = (base) + 14; \
	(ti)->ti_be_ctr[BE_CTR_MR_REGS] = (base) + 15; \
	(ti)->ti_be_ctr[BE_CTR_CCP_OK] = (base) + 16; \
	(ti)->ti_be_ctr[BE_CTR_CCP_FALLBACK] = (base) + 17; \
	(ti)->ti_be_ctr[BE_CTR_LONG_REPLIES] = (base) + 18; \
	(ti)->ti_be_ctr[BE_CTR_RDMA_DONE] = (base) + 19; \
	(ti)->ti_be_ctr[BE_CTR_READ_DEPTH_REFUSED] = (base) + 20; \
	(ti)->ti_be_ctr[BE_CTR_DRAIN_TIMEOUTS] = (base) + 21; \
	(ti)->ti_be_ctr[BE_CTR_BC_CALLS] = (base) + 22; \
	(ti)->ti_be_ctr[BE_CTR_BC_REPLIES] = (base) + 23; \
	(ti)->ti_be_ctr[BE_CTR_BC_DROPPED] = (base) + 24; \
	(ti)->ti_be_ctr[BE_CTR_SENDS_SIGNALED] = (base) + 25; \
	(ti)->ti_be_ctr[BE_CTR_SENDS_UNSIGNALED] = (base) + 26; \
	(ti)->ti_be_ctr[BE_CTR_SQ_COMPLETIONS] = (base) + 27; \
	(ti)->ti_be_ctr[BE_CTR_RQ_COMPLETIONS] = (base) + 28; \
	(ti)->ti_be_ctr[BE_CTR_CQ_WAKEUPS] = (base) + 29; \
} while (0)

/* What /metrics showed before the counters were described once (the
 * values are FILL_COUNTERS', 1000 per backend + the counter's rank). */
static const char EXPECTED[] =
	"# HELP rpcrdma_gw_rdma_connects_total RDMA connections established (reconnects included).\n"
	"# TYPE rpcrdma_gw_rdma_connects_total counter\n"
	"rpcrdma_gw_rdma_connects_total{backend=\"srv\"} 1001\n"
	"rpcrdma_gw_rdma_connects_total{backend=\"two\"} 2001\n"
	"# HELP rpcrdma_gw_rdma_disconnects_total RDMA connections lost or closed.\n"
	"# TYPE rpcrdma_gw_rdma_disconnects_total counter\n"
	"rpcrdma_gw_rdma_disconnects_total{backend=\"srv\"} 1002\n"
	"rpcrdma_gw_rdma_disconnects_total{backend=\"two\"} 2002\n"
	"# HELP rpcrdma_gw_rdma_connect_errors_total Rejected or failed RDMA connection attempts.\n"
	"# TYPE rpcrdma_gw_rdma_connect_errors_total counter\n"
	"rpcrdma_gw_rdma_connect_errors_total{backend=\"srv\"} 1003\n"
	"rpcrdma_gw_rdma_connect_errors_total{backend=\"two\"} 2003\n"
	"# HELP rpcrdma_gw_rdma_resent_total Calls re-sent after a reconnect (same XID).\n"
	"# TYPE rpcrdma_gw_rdma_resent_total counter\n"
	"rpcrdma_gw_rdma_resent_total{backend=\"srv\"} 1004\n"
	"rpcrdma_gw_rdma_resent_total{backend=\"two\"} 2004\n"
	"# HELP rpcrdma_gw_rdma_errors_total RDMA_ERROR replies received, by kind.\n"
	"# TYPE rpcrdma_gw_rdma_errors_total counter\n"
	"rpcrdma_gw_rdma_errors_total{backend=\"srv\",kind=\"err_vers\"} 1005\n"
	"rpcrdma_gw_rdma_errors_total{backend=\"srv\",kind=\"err_chunk\"} 1006\n"
	"rpcrdma_gw_rdma_errors_total{backend=\"two\",kind=\"err_vers\"} 2005\n"
	"rpcrdma_gw_rdma_errors_total{backend=\"two\",kind=\"err_chunk\"} 2006\n"
	"# HELP rpcrdma_gw_rdma_dropped_replies_total Replies from the server dropped by the RDMA backend, by reason.\n"
	"# TYPE rpcrdma_gw_rdma_dropped_replies_total counter\n"
	"rpcrdma_gw_rdma_dropped_replies_total{backend=\"srv\",reason=\"unknown_xid\"} 1007\n"
	"rpcrdma_gw_rdma_dropped_replies_total{backend=\"srv\",reason=\"bad_reply\"} 1008\n"
	"rpcrdma_gw_rdma_dropped_replies_total{backend=\"srv\",reason=\"write_overrun\"} 1009\n"
	"rpcrdma_gw_rdma_dropped_replies_total{backend=\"two\",reason=\"unknown_xid\"} 2007\n"
	"rpcrdma_gw_rdma_dropped_replies_total{backend=\"two\",reason=\"bad_reply\"} 2008\n"
	"rpcrdma_gw_rdma_dropped_replies_total{backend=\"two\",reason=\"write_overrun\"} 2009\n"
	"# HELP rpcrdma_gw_rdma_completion_errors_total Work completions in error, by kind.\n"
	"# TYPE rpcrdma_gw_rdma_completion_errors_total counter\n"
	"rpcrdma_gw_rdma_completion_errors_total{backend=\"srv\",kind=\"flushed\"} 1011\n"
	"rpcrdma_gw_rdma_completion_errors_total{backend=\"srv\",kind=\"error\"} 1010\n"
	"rpcrdma_gw_rdma_completion_errors_total{backend=\"two\",kind=\"flushed\"} 2011\n"
	"rpcrdma_gw_rdma_completion_errors_total{backend=\"two\",kind=\"error\"} 2010\n"
	"# HELP rpcrdma_gw_rdma_registrations_total Per-call registration work: window binds, LOCAL_INV posted, windows the server invalidated (Send With Invalidate), per-call MRs.\n"
	"# TYPE rpcrdma_gw_rdma_registrations_total counter\n"
	"rpcrdma_gw_rdma_registrations_total{backend=\"srv\",kind=\"mw_bind\"} 1012\n"
	"rpcrdma_gw_rdma_registrations_total{backend=\"srv\",kind=\"local_inv\"} 1013\n"
	"rpcrdma_gw_rdma_registrations_total{backend=\"srv\",kind=\"remote_inv\"} 1014\n"
	"rpcrdma_gw_rdma_registrations_total{backend=\"srv\",kind=\"mr_reg\"} 1015\n"
	"rpcrdma_gw_rdma_registrations_total{backend=\"two\",kind=\"mw_bind\"} 2012\n"
	"rpcrdma_gw_rdma_registrations_total{backend=\"two\",kind=\"local_inv\"} 2013\n"
	"rpcrdma_gw_rdma_registrations_total{backend=\"two\",kind=\"remote_inv\"} 2014\n"
	"rpcrdma_gw_rdma_registrations_total{backend=\"two\",kind=\"mr_reg\"} 2015\n"
	"# HELP rpcrdma_gw_rdma_ccp_total Connection Configuration Protocol (draft-ietf-nfsv4-rpcrdma-08 section 6) at connect: answer applied, or fallback to the RFC 8797 values.\n"
	"# TYPE rpcrdma_gw_rdma_ccp_total counter\n"
	"rpcrdma_gw_rdma_ccp_total{backend=\"srv\",result=\"applied\"} 1016\n"
	"rpcrdma_gw_rdma_ccp_total{backend=\"srv\",result=\"fallback\"} 1017\n"
	"rpcrdma_gw_rdma_ccp_total{backend=\"two\",result=\"applied\"} 2016\n"
	"rpcrdma_gw_rdma_ccp_total{backend=\"two\",result=\"fallback\"} 2017\n"
	"# HELP rpcrdma_gw_rdma_long_replies_total Long replies pulled by RDMA Read (RFC 5666 Read list), RDMA_DONE sent after them, and ones refused (server's Read depth 0).\n"
	"# TYPE rpcrdma_gw_rdma_long_replies_total counter\n"
	"rpcrdma_gw_rdma_long_replies_total{backend=\"srv\",event=\"pulled\"} 1018\n"
	"rpcrdma_gw_rdma_long_replies_total{backend=\"srv\",event=\"rdma_done\"} 1019\n"
	"rpcrdma_gw_rdma_long_replies_total{backend=\"srv\",event=\"refused\"} 1020\n"
	"rpcrdma_gw_rdma_long_replies_total{backend=\"two\",event=\"pulled\"} 2018\n"
	"rpcrdma_gw_rdma_long_replies_total{backend=\"two\",event=\"rdma_done\"} 2019\n"
	"rpcrdma_gw_rdma_long_replies_total{backend=\"two\",event=\"refused\"} 2020\n"
	"# HELP rpcrdma_gw_rdma_backchannel_total Backchannel CALLs from the server (RFC 8167): delivered to the relay, replies sent, dropped (malformed, no room, no taker).\n"
	"# TYPE rpcrdma_gw_rdma_backchannel_total counter\n"
	"rpcrdma_gw_rdma_backchannel_total{backend=\"srv\",event=\"calls\"} 1022\n"
	"rpcrdma_gw_rdma_backchannel_total{backend=\"srv\",event=\"replies\"} 1023\n"
	"rpcrdma_gw_rdma_backchannel_total{backend=\"srv\",event=\"dropped\"} 1024\n"
	"rpcrdma_gw_rdma_backchannel_total{backend=\"two\",event=\"calls\"} 2022\n"
	"rpcrdma_gw_rdma_backchannel_total{backend=\"two\",event=\"replies\"} 2023\n"
	"rpcrdma_gw_rdma_backchannel_total{backend=\"two\",event=\"dropped\"} 2024\n"
	"# HELP rpcrdma_gw_rdma_drain_timeouts_total Connection teardowns that stopped waiting for posted work after the drain bound.\n"
	"# TYPE rpcrdma_gw_rdma_drain_timeouts_total counter\n"
	"rpcrdma_gw_rdma_drain_timeouts_total{backend=\"srv\",kind=\"drain\"} 1021\n"
	"rpcrdma_gw_rdma_drain_timeouts_total{backend=\"two\",kind=\"drain\"} 2021\n"
	"# HELP rpcrdma_gw_rdma_sends_total Sends posted (calls, RDMA_DONE, backchannel replies), signaled or not (an unsignaled Send is known complete when a later work request of its send queue completes).\n"
	"# TYPE rpcrdma_gw_rdma_sends_total counter\n"
	"rpcrdma_gw_rdma_sends_total{backend=\"srv\",completion=\"signaled\"} 1025\n"
	"rpcrdma_gw_rdma_sends_total{backend=\"srv\",completion=\"unsignaled\"} 1026\n"
	"rpcrdma_gw_rdma_sends_total{backend=\"two\",completion=\"signaled\"} 2025\n"
	"rpcrdma_gw_rdma_sends_total{backend=\"two\",completion=\"unsignaled\"} 2026\n"
	"# HELP rpcrdma_gw_rdma_work_completions_total Work completions polled, by queue (send: Sends, LOCAL_INV, RDMA Reads, flushes).\n"
	"# TYPE rpcrdma_gw_rdma_work_completions_total counter\n"
	"rpcrdma_gw_rdma_work_completions_total{backend=\"srv\",queue=\"send\"} 1027\n"
	"rpcrdma_gw_rdma_work_completions_total{backend=\"srv\",queue=\"recv\"} 1028\n"
	"rpcrdma_gw_rdma_work_completions_total{backend=\"two\",queue=\"send\"} 2027\n"
	"rpcrdma_gw_rdma_work_completions_total{backend=\"two\",queue=\"recv\"} 2028\n"
	"# HELP rpcrdma_gw_rdma_cq_wakeups_total Completion channel events handled (a read and a re-arm each).\n"
	"# TYPE rpcrdma_gw_rdma_cq_wakeups_total counter\n"
	"rpcrdma_gw_rdma_cq_wakeups_total{backend=\"srv\"} 1029\n"
	"rpcrdma_gw_rdma_cq_wakeups_total{backend=\"two\"} 2029\n";

static struct fake *the_fake;

/* Backend b's counter k is 1000 * (b + 1) + k + 1. */
static int fk_info(void *tp, struct gw_tp_info *ti)
{
	const struct gw_path_info *pi = gw_path_info(tp);
	unsigned b = strcmp(pi->pi_backend->cb_name, "srv") == 0 ? 0 : 1;

	memset(ti, 0, sizeof(*ti));
	ti->ti_server = &the_fake->server[b];
	FILL_COUNTERS(ti, 1000 * (b + 1));
	return 0;
}

static const struct gw_transport_ops fake_ops = {
	.to_name = "fake", .to_create = fk_create, .to_destroy = fk_destroy,
	.to_submit = fk_submit, .to_release = fk_release, .to_cancel = fk_cancel,
	.to_info = fk_info,
};

/* The backend families of a /metrics page, in order (other lines dropped). */
static char *backend_lines(struct evbuffer *o)
{
	static const char *const fams[] = {
		"rdma_connects_total", "rdma_disconnects_total", "rdma_connect_errors_total",
		"rdma_resent_total", "rdma_errors_total", "rdma_dropped_replies_total",
		"rdma_completion_errors_total", "rdma_registrations_total", "rdma_ccp_total",
		"rdma_long_replies_total", "rdma_backchannel_total", "rdma_drain_timeouts_total",
		"rdma_sends_total", "rdma_work_completions_total", "rdma_cq_wakeups_total",
	};
	size_t n = evbuffer_get_length(o);
	char *all = calloc(1, n + 1), *out = calloc(1, n + 1), *line, *save = NULL;

	assert_int_equal(evbuffer_remove(o, all, n), (int)n);
	for (line = strtok_r(all, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
			char a[96], b[96];

			snprintf(a, sizeof(a), "rpcrdma_gw_%s{", fams[f]);
			snprintf(b, sizeof(b), "rpcrdma_gw_%s ", fams[f]);
			if (strstr(line, a) == line || strstr(line, b) ||
			    (line[0] == '#' && strstr(line, b))) {
				strcat(out, line);
				strcat(out, "\n");
				break;
			}
		}
	free(all);
	return out;
}

static void t01_backend_counters(void **state)
{
	static const char text[] =
		"[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 16\n"
		"[backend srv]\naddress = 127.0.0.1\n[backend two]\naddress = 127.0.0.2\n"
		"[route nfs]\nprogram = nfs\nbackend = srv\ntransport = rdma\n"
		"[route mnt]\nprogram = mount\nbackend = srv\ntransport = rdma\n"
		"[route nlm]\nprogram = nlm\nbackend = two\ntransport = rdma\n";
	struct evbuffer *o;
	struct fake f;
	struct h_gw h;
	char *got;

	(void)state;
	memset(&f, 0, sizeof(f));
	the_fake = &f;
	h_gw_init(&h, text, &fake_ops, &f);
	assert_int_equal(gw_ctx_start(h.gw), 0);
	assert_int_equal(f.ncreate, 3);
	o = evbuffer_new();
	gw_metrics_render(o, &h.st, h.gw);
	got = backend_lines(o);
	if (strcmp(got, EXPECTED) != 0) {
		fprintf(stderr, "got:\n%s", got);
		fail_msg("backend counters on /metrics differ");
	}
	free(got);
	evbuffer_free(o);
	assert_int_equal(h_gw_stop(&h), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_backend_counters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
