// SPDX-License-Identifier: MIT
/*
 * This file contains host tests of the RDMA transport resolving the
 * server's name again on reconnect: the real transport and backend run on
 * a libevent loop, with a fake resolver (gw_rdma_set_resolver) and a fake
 * verbs table whose rdma_resolve_addr records where each connection
 * attempt goes and fails it, as an unreachable server would.
 *
 *   1. the name resolves to A: attempts go to A; it now resolves to B: the
 *      attempts after the next failure go to B, counted once.
 *   2. the name stops resolving: the last address is kept, nothing is
 *      counted, the path is down for its connection, not for DNS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "be_internal.h"
#include "gateway.h"
#include "log.h"
#include "test_gw_harness.h"
#include "transport.h"

#define MAX_ATTEMPTS 4096

/* The fake resolver's answer (read on the resolver thread) and the
 * attempts the fake verbs saw (written on the loop's thread). */
static struct {
	pthread_mutex_t lock;
	uint32_t ip;			/* host order; 0: EAI_NONAME */
	unsigned nresolves;
	uint32_t dst[MAX_ATTEMPTS];	/* destination of each rdma_resolve_addr */
	unsigned ndst;
} R = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int r_resolve(void *arg, const char *host, const char *port, struct sockaddr_storage *addr,
		     socklen_t *addrlen)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)addr;
	uint32_t ip;

	(void)arg;
	assert_string_equal(host, "nfs.example");
	pthread_mutex_lock(&R.lock);
	ip = R.ip;
	R.nresolves++;
	pthread_mutex_unlock(&R.lock);
	if (!ip)
		return EAI_NONAME;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)atoi(port));
	sin->sin_addr.s_addr = htonl(ip);
	*addrlen = sizeof(*sin);
	return 0;
}

static unsigned resolves(void)
{
	unsigned n;

	pthread_mutex_lock(&R.lock);
	n = R.nresolves;
	pthread_mutex_unlock(&R.lock);
	return n;
}

static void r_set_ip(uint32_t ip)
{
	pthread_mutex_lock(&R.lock);
	R.ip = ip;
	pthread_mutex_unlock(&R.lock);
}

/* ---- the fake verbs: a CM channel and id, nothing more is reached ---- */

struct fcm {
	struct rdma_event_channel fc_ch;
	struct rdma_cm_id fc_id;
};

static struct rdma_event_channel *f_create_event_channel(void)
{
	struct fcm *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->fc_ch.fd = eventfd(0, EFD_NONBLOCK);
	return &f->fc_ch;
}

static void f_destroy_event_channel(struct rdma_event_channel *ch)
{
	close(ch->fd);
	free(ch);	/* fc_ch is the first member */
}

static int f_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id, void *ctx,
		       enum rdma_port_space ps)
{
	struct fcm *f = (struct fcm *)ch;

	(void)ps;
	f->fc_id.context = ctx;
	f->fc_id.channel = ch;
	*id = &f->fc_id;
	return 0;
}

static int f_destroy_id(struct rdma_cm_id *id)
{
	(void)id;
	return 0;
}

/* The server is unreachable: each attempt fails here, recorded. */
static int f_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst, int t)
{
	(void)id;
	(void)src;
	(void)t;
	assert_int_equal(dst->sa_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)dst)->sin_port), 20049);
	if (R.ndst < MAX_ATTEMPTS)
		R.dst[R.ndst++] = ntohl(((struct sockaddr_in *)dst)->sin_addr.s_addr);
	errno = EHOSTUNREACH;
	return -1;
}

static const struct be_verbs fake_verbs = {
	.create_event_channel = f_create_event_channel,
	.destroy_event_channel = f_destroy_event_channel,
	.create_id = f_create_id,
	.destroy_id = f_destroy_id,
	.resolve_addr = f_resolve_addr,
};

/* ---- the gateway ---- */

struct r_gw {
	struct h_gw rg_h;
	struct gw_rdma *rg_rdma;
};

static uint16_t free_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	close(fd);
	return ntohs(sin.sin_port);
}

static void r_start(struct r_gw *g)
{
	struct h_gw *h = &g->rg_h;
	char text[512], err[256];
	struct gw_ctx_params gp;
	struct fe_params fp;

	memset(g, 0, sizeof(*g));
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "reconnect_interval = 20ms\n"
		 "[backend srv]\naddress = nfs.example\nrdma_port = 20049\nconnections = 1\n"
		 "[route nfs]\nprogram = nfs\nversions = 3\ntransport = rdma\nport = %u\n"
		 "fallback = none\n", (unsigned)free_port());
	h->cf = cfg_parse_string(text, "reresolve", NULL, err, sizeof(err));
	if (!h->cf)
		fail_msg("config: %s", err);
	h->log.gl_level = getenv("H_VERBOSE") ? CFG_LOG_DEBUG : -1;
	h->base = event_base_new();
	h->pool = gw_pool_new(h->cf->cf_buffer_size, h->cf->cf_buffers, false);
	g->rg_rdma = gw_rdma_new(h->base, h->pool, &h->log, &h->st);
	assert_non_null(g->rg_rdma);
	gw_rdma_set_resolver(g->rg_rdma, r_resolve, NULL);
	gp = (struct gw_ctx_params){ .gp_base = h->base, .gp_cfg = h->cf, .gp_log = &h->log,
				     .gp_stats = &h->st, .gp_pool = h->pool,
				     .gp_ncalls = h->cf->cf_max_calls,
				     .gp_rdma_ops = &gw_transport_rdma, .gp_rdma_arg = g->rg_rdma };
	h->gw = gw_ctx_new(&gp);
	assert_non_null(h->gw);
	fp = (struct fe_params){ .fp_base = h->base, .fp_cfg = h->cf, .fp_gw = h->gw,
				 .fp_pool = h->pool, .fp_log = &h->log, .fp_stats = &h->st };
	h->fe = fe_new(&fp);
	assert_non_null(h->fe);
	assert_int_equal(gw_ctx_start(h->gw), 0);
}

static void r_stop(struct r_gw *g)
{
	struct h_gw *h = &g->rg_h;

	fe_free(h->fe);
	gw_ctx_free(h->gw);
	gw_rdma_free(g->rg_rdma);
	assert_int_equal(gw_pool_count(h->pool) - gw_pool_avail(h->pool), 0);
	gw_pool_free(h->pool);
	event_base_free(h->base);
	cfg_free(h->cf);
}

/* Pump until n attempts were seen past from (or 5 s); true if they were. */
static bool wait_attempts(struct r_gw *g, unsigned from, unsigned n)
{
	uint64_t end = gw_now_ms() + 5000;

	while (R.ndst < from + n && gw_now_ms() < end)
		h_pump(&g->rg_h, 5);
	return R.ndst >= from + n;
}

#define IP_A 0x0a000001u	/* 10.0.0.1 */
#define IP_B 0x0a000002u	/* 10.0.0.2 */

static void r_reset(uint32_t ip)
{
	pthread_mutex_lock(&R.lock);
	R.ip = ip;
	R.nresolves = 0;
	R.ndst = 0;
	pthread_mutex_unlock(&R.lock);
	be_verbs_set(&fake_verbs);
}

/* 1. A, then B after the next failed attempt; the pool stays. */
static void t01_new_address_next_attempt(void **state)
{
	struct r_gw g;
	unsigned mark, first_b = 0;

	(void)state;
	r_reset(IP_A);
	r_start(&g);
	assert_true(wait_attempts(&g, 0, 3));
	for (unsigned i = 0; i < R.ndst; i++)
		assert_int_equal(R.dst[i], IP_A);
	assert_int_equal(g.rg_h.st.gs_ctr[GW_CTR_BACKEND_READDRESSED], 0);

	r_set_ip(IP_B);
	mark = R.ndst;
	/* Resolution is asynchronous: an attempt or two may still go to A,
	 * then every later one goes to B. */
	assert_true(wait_attempts(&g, mark, 4));
	for (unsigned i = mark; i < R.ndst && !first_b; i++)
		if (R.dst[i] == IP_B)
			first_b = i;
	assert_true(first_b > 0);
	assert_true(first_b - mark <= 2);
	for (unsigned i = first_b; i < R.ndst; i++)
		assert_int_equal(R.dst[i], IP_B);
	assert_int_equal(g.rg_h.st.gs_ctr[GW_CTR_BACKEND_READDRESSED], 1);
	assert_true(resolves() >= 2);
	assert_int_equal(gw_path_why(gw_ctx_path(g.rg_h.gw, 0), NULL, NULL), GW_WHY_CONNECT);
	r_stop(&g);
	be_verbs_set(NULL);
}

/* 2. The name stops resolving: the attempts keep the last address. */
static void t02_lookup_failure_keeps_address(void **state)
{
	struct r_gw g;
	unsigned mark;

	(void)state;
	r_reset(IP_B);
	r_start(&g);
	assert_true(wait_attempts(&g, 0, 2));
	r_set_ip(0);
	mark = R.ndst;
	assert_true(wait_attempts(&g, mark, 3));
	for (unsigned i = 0; i < R.ndst; i++)
		assert_int_equal(R.dst[i], IP_B);
	assert_true(resolves() >= 3);	/* asked again, in vain */
	assert_int_equal(g.rg_h.st.gs_ctr[GW_CTR_BACKEND_READDRESSED], 0);
	assert_int_equal(gw_path_why(gw_ctx_path(g.rg_h.gw, 0), NULL, NULL), GW_WHY_CONNECT);
	r_stop(&g);
	be_verbs_set(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_new_address_next_attempt),
		cmocka_unit_test(t02_lookup_failure_keeps_address),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
