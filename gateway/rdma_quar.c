// SPDX-License-Identifier: MIT
/*
 * This file contains the quarantine of the RDMA transport
 * (transport_rdma.h): the RPCSEC_GSS calls of a client host whose call made
 * the server close a connection (nfsd does when it drops a call whose
 * sequence number is outside its window or seen before, RFC 2203 5.3.3.1)
 * go on a connection of their own for GW_QUAR_MS, so that the host's next
 * such call closes its own connection and no other client's.  The gateway
 * cannot tell such a call beforehand (it has no key to check the
 * verifier's MIC, and the window is the server's); after the first close
 * it knows the host.
 *
 * Bounds: GW_QUAR_SOURCES hosts per path and worker, each with one
 * connection (a few hundred KiB of receive buffers); a host whose
 * quarantine ended leaves its slot to the next host once its connection
 * has no call left.  A host beyond the bound stays on the shared
 * connections (counted by the caller).  Nothing here runs for a call that
 * is not RPCSEC_GSS, nor for one while no host is quarantined.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "backend.h"
#include "call.h"
#include "client.h"
#include "config.h"
#include "gateway.h"
#include "log.h"
#include "transport.h"
#include "transport_rdma.h"

static struct gw_quar_slot *quar_find(struct gw_quar *qt, const uint8_t src[16])
{
	for (unsigned i = 0; i < GW_QUAR_SOURCES; i++)
		if (qt->qt_slot[i].qs_until_ms && !memcmp(qt->qt_slot[i].qs_src, src, 16))
			return &qt->qt_slot[i];
	return NULL;
}

/* The connection cl's GSS calls go on now, or NULL: the shared ones. */
static struct be_pool *quar_pool(struct gw_quar *qt, const struct gw_client *cl, uint64_t now_ms)
{
	struct gw_quar_slot *qs;
	uint8_t src[16];

	if (!cl || !gw_client_src(cl, src) || !(qs = quar_find(qt, src)) ||
	    now_ms >= qs->qs_until_ms)
		return NULL;
	return qs->qs_pool;
}

/* The pool c goes on.  An RPCSEC_GSS call is never re-sent as it is after
 * the server closed its connection (BE_CALL_NO_RESEND: its client sends it
 * anew) and goes on its host's own connection while the host is
 * quarantined; any other call: the shared pool, and no more work. */
struct be_pool *gw_quar_pick(struct gw_quar *qt, const struct gw_call *c, unsigned *flags,
			     struct gw_stats *st)
{
	struct be_pool *qp;

	if (!c->ca_gss)
		return qt->qt_shared;
	*flags |= BE_CALL_NO_RESEND;
	if (!qt->qt_live || !(qp = quar_pool(qt, c->ca_cl, gw_pass_ms(st))))
		return qt->qt_shared;
	gw_stat_inc(st, GW_CTR_GSS_QUAR_CALLS);
	return qp;
}

/* A slot for a new host: a free one, else one whose quarantine ended and
 * whose connection carries nothing (freed here); NULL when none. */
static struct gw_quar_slot *quar_take(struct gw_quar *qt, uint64_t now_ms)
{
	for (unsigned i = 0; i < GW_QUAR_SOURCES; i++) {
		struct gw_quar_slot *qs = &qt->qt_slot[i];

		if (!qs->qs_until_ms)
			return qs;
		if (now_ms >= qs->qs_until_ms && be_pool_inflight(qs->qs_pool) == 0 &&
		    be_pool_queued(qs->qs_pool) == 0) {
			be_pool_free(qs->qs_pool);
			memset(qs, 0, sizeof(*qs));
			qt->qt_live--;
			return qs;
		}
	}
	return NULL;
}

/* "path/isolated:ADDRESS": the name the host's connection logs under. */
static void quar_name(const struct gw_quar *qt, const uint8_t src[16], char *out, size_t len)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	char a[INET6_ADDRSTRLEN] = "?";

	if (!memcmp(src, v4mapped, 12))
		inet_ntop(AF_INET, src + 12, a, sizeof(a));
	else
		inet_ntop(AF_INET6, src, a, sizeof(a));
	snprintf(out, len, "%s/isolated:%s", gw_path_name(qt->qt_path), a);
}

/* A quarantine connection's events: room again retries the path's held
 * calls; its losses and returns change nothing of the path's readiness
 * (be_pool_free() sends no event: none after gw_quar_free()). */
static void quar_event(struct be_pool *pool, enum be_pool_event ev, void *arg)
{
	struct gw_quar *qt = arg;

	(void)pool;
	if (ev == BE_POOL_ROOM)
		gw_path_ready(qt->qt_path, be_pool_up(qt->qt_shared));
}

/* 1: new, 0: renewed, -ENOSPC: no slot, -EINVAL: no address, -ENOMEM. */
static int quar_add(struct gw_quar *qt, const struct gw_client *cl, uint64_t now_ms)
{
	struct gw_quar_slot *qs;
	uint8_t src[16];
	char name[96];

	if (!cl || !gw_client_src(cl, src) || !qt->qt_shared)
		return -EINVAL;
	qs = quar_find(qt, src);
	if (qs) {
		qs->qs_until_ms = now_ms + GW_QUAR_MS;
		return 0;
	}
	qs = quar_take(qt, now_ms);
	if (!qs)
		return -ENOSPC;
	quar_name(qt, src, name, sizeof(name));
	qs->qs_pool = be_pool_new_isolated(qt->qt_ctx, (struct sockaddr *)&qt->qt_addr,
					   qt->qt_addrlen, quar_event, qt, name);
	if (!qs->qs_pool)
		return -ENOMEM;
	memcpy(qs->qs_src, src, 16);
	qs->qs_until_ms = now_ms + GW_QUAR_MS;
	qt->qt_live++;
	return 1;
}

void gw_quar_enter(struct gw_quar *qt, const struct gw_client *cl, uint64_t now_ms)
{
	const struct gw_path_info *pi = gw_path_info(qt->qt_path);
	const char *name = cl ? gw_client_name(cl) : "-";
	int rc = quar_add(qt, cl, now_ms);

	if (rc == 1) {
		gw_stat_inc(pi->pi_stats, GW_CTR_GSS_QUAR_ENTERED);
		gw_log_client(pi->pi_log, CFG_LOG_WARN, name, "path %s: RPCSEC_GSS calls of %s's "
			      "host go on an RDMA connection of their own for %u s",
			      gw_path_name(qt->qt_path), name, GW_QUAR_MS / 1000);
	} else if (rc == -ENOSPC || rc == -ENOMEM) {
		gw_stat_inc(pi->pi_stats, GW_CTR_GSS_QUAR_FULL);
		gw_log_client(pi->pi_log, CFG_LOG_WARN, name, "path %s: no RDMA connection of its "
			      "own for %s's host (%u hosts kept apart): it stays on the shared ones",
			      gw_path_name(qt->qt_path), name, GW_QUAR_SOURCES);
	}
}

void gw_quar_free(struct gw_quar *qt)
{
	for (unsigned i = 0; i < GW_QUAR_SOURCES; i++)
		if (qt->qt_slot[i].qs_pool)
			be_pool_free(qt->qt_slot[i].qs_pool);
	memset(qt->qt_slot, 0, sizeof(qt->qt_slot));
	qt->qt_live = 0;
}
