// SPDX-License-Identifier: MIT
/*
 * This file contains the backchannel of the backend (RFC 8167): CALLs received
 * from the server, handed to the pool's taker, and their inline REPLYs.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <event2/event.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "backend.h"
#include "be_internal.h"

/* ------------------------------------------------------------------------
 * Backchannel (RFC 8167): CALLs from the server, replies from us
 * ------------------------------------------------------------------------ */

static void bc_drop(struct be_conn *cn, struct be_rbuf *rb, uint32_t xid, size_t len,
		    const char *why)
{
	cn->cn_ctx->cx_stats.bs_bc_dropped++;
	LOG(WARN, cn->cn_pool, "xid %08x: backchannel CALL (%zu bytes) dropped: %s", xid, len, why);
	be_repost_rbuf(cn, rb);
}

/* A reverse-direction CALL arrived in rb: hand it to the taker, holding
 * the receive buffer until be_bc_reply(). */
void be_bc_recv(struct be_conn *cn, struct be_rbuf *rb, const struct rpcrdma_hdr *rh,
		    uint32_t byte_len, bool chunks)
{
	struct be_pool *pool = cn->cn_pool;
	const uint8_t *msg = rb->rb_buf + rh->rh_body_off;
	size_t len = byte_len - rh->rh_body_off;
	struct be_bc *bc = NULL;

	if (chunks) {
		/* RFC 8167 5.3: chunks in the reverse direction are not
		 * supported here: answer ERR_CHUNK. */
		uint8_t e[20];

		chk_put_be32(e, rh->rh_xid);
		chk_put_be32(e + 4, RPCRDMA_VERSION);
		chk_put_be32(e + 8, BE_BC_RESERVE);
		chk_put_be32(e + 12, RPCRDMA_ERROR);
		chk_put_be32(e + 16, RPCRDMA_ERR_CHUNK);
		be_send_inline(cn, e, sizeof(e), NULL, 0);
		bc_drop(cn, rb, rh->rh_xid, len, "chunks in a reverse-direction call (ERR_CHUNK sent)");
		return;
	}
	/* xid, msg_type, rpcvers, prog, vers, proc at least; same XID as the
	 * transport header (RFC 8167 5.1). */
	if (len < 24 || chk_be32(msg) != rh->rh_xid) {
		bc_drop(cn, rb, rh->rh_xid, len, "malformed RPC call header");
		return;
	}
	if (!pool->bp_bc_fn) {
		bc_drop(cn, rb, rh->rh_xid, len, "no backchannel taker");
		return;
	}
	for (unsigned i = 0; i < BE_BC_SLOTS; i++)
		if (!cn->cn_bc[i].bb_busy) {
			bc = &cn->cn_bc[i];
			break;
		}
	if (!bc) {
		bc_drop(cn, rb, rh->rh_xid, len, "more CALLs than reverse credits");
		return;
	}
	*bc = (struct be_bc){ .bb_conn = cn, .bb_rbuf = rb, .bb_xid = rh->rh_xid, .bb_busy = true };
	cn->cn_refs++;
	cn->cn_ctx->cx_stats.bs_bc_calls++;
	pool->bp_bc_fn(pool, bc, msg, len, pool->bp_bc_arg);
}

void be_pool_set_backchannel(struct be_pool *pool, be_bc_fn *fn, void *arg)
{
	pool->bp_bc_fn = fn;
	pool->bp_bc_arg = arg;
}

int be_bc_reply(struct be_bc *bc, const struct iovec *iov, unsigned niov)
{
	struct be_conn *cn = bc->bb_conn;
	uint8_t hdr[BE_BC_HDR_LEN];
	int rc = 0;

	if (!bc->bb_busy)
		return -EINVAL;
	if (niov > 0) {
		if (cn->cn_state != BC_UP) {
			rc = -ENOTCONN;
		} else {
			be_bc_marshal_hdr(hdr, bc->bb_xid, BE_BC_RESERVE);
			rc = be_send_inline(cn, hdr, sizeof(hdr), iov, niov);
			if (rc == 0)
				cn->cn_ctx->cx_stats.bs_bc_replies++;
		}
	}
	bc->bb_busy = false;
	if (cn->cn_state == BC_UP)
		be_repost_rbuf(cn, bc->bb_rbuf);
	be_conn_put(cn);
	return rc;
}
