/* SPDX-License-Identifier: MIT */
/*
 * This file contains the incremental record receiver (record.c, prefix gw_rx_):
 * it reads a socket into pool buffers with record marking and no copy.
 */
#ifndef RPCRDMA_GW_RECORD_H
#define RPCRDMA_GW_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "chunking.h"
#include "pool.h"


/* Append-only: do not reorder (gw_rx_status_str()). */
enum gw_rx_status {
	GW_RX_RECORD = 0,	/* a record is complete in *out */
	GW_RX_AGAIN,		/* socket drained (EAGAIN): wait for readability */
	GW_RX_EOF,		/* peer closed */
	GW_RX_IO_ERROR,		/* recv failed: errno in rx_errno */
	GW_RX_TOO_BIG,		/* record above max_record */
	GW_RX_TOO_FRAGMENTED,	/* record spans more than GW_REC_MAX_IOV buffers */
	GW_RX_NO_BUFFER,	/* pool empty: retry later */
	GW_RX__COUNT
};
const char *gw_rx_status_str(enum gw_rx_status s);

#define GW_RX_BATCH	8	/* buffers one readv() may fill inside a fragment */

struct gw_rx {
	struct gw_pool *rx_pool;
	struct gw_buf *rx_buf;		/* receive buffer, one reference */
	uint32_t rx_parsed;		/* bytes of rx_buf given to the decoder */
	/* filled by the last readv() after rx_buf, in order, one reference each */
	struct gw_buf *rx_fill[GW_RX_BATCH - 1];
	unsigned rx_nfill;
	uint32_t rx_lowat;		/* switch buffers below this much room */
	struct rm_dec rx_dec;
	struct gw_rec rx_rec;		/* record being assembled */
	bool rx_in_record;		/* some bytes of a record seen */
	bool rx_promise;		/* client side: promise buffers per fragment */
	unsigned rx_reserve;		/* client side: leave this many unpromised buffers */
	unsigned rx_ahead;		/* client side: promise at most this many per fragment */
	unsigned rx_promised;		/* buffers promised to this receiver */
	unsigned rx_need;		/* promise asked for and not yet granted */
	uint64_t rx_owner;		/* client side: the connection's generation (pool owner), or 0 */
	uint64_t rx_bytes;		/* bytes received, total */
	uint64_t rx_copied;		/* bytes moved to close fragment gaps; the owner counts and clears */
	uint64_t rx_recvs;		/* recv()/readv() calls made; the owner counts and clears */
	int rx_errno;
	bool rx_drained;		/* last recv() was short: socket empty then */
	/* Byte source in place of recv(fd) (RPC-with-TLS, frontend-tcp/fe_tls.h),
	 * same semantics; a short count must mean drained.  NULL: recv(). */
	ssize_t (*rx_src)(void *arg, void *buf, size_t len);
	void *rx_src_arg;
};
/* Server side (transports): no promise, may use the reserve. */
void gw_rx_init(struct gw_rx *rx, struct gw_pool *p, uint32_t max_record);
/* Client side: promises per fragment, at most `ahead` buffers ahead of the
 * data (the rest is taken as bytes arrive), never touches the last
 * `reserve` unpromised buffers (they carry replies). */
void gw_rx_init_client(struct gw_rx *rx, struct gw_pool *p, uint32_t max_record, unsigned reserve,
		       unsigned ahead);
/* Buffers one record of max_record bytes may need, worst case. */
unsigned gw_rx_record_buffers(uint32_t buf_size, uint32_t max_record);
void gw_rx_reset(struct gw_rx *rx);	/* drop partial state (reconnect) */
void gw_rx_destroy(struct gw_rx *rx);
/* Read fd (non-blocking) until a record completes or the socket drains;
 * bytes already received but not yet parsed are used first.  On
 * GW_RX_RECORD, *out (empty on entry) owns the record. */
enum gw_rx_status gw_rx_read(struct gw_rx *rx, int fd, struct gw_rec *out);
/* Client side: give the receive buffer back when nothing needs it (all
 * parsed, no byte of the current record in it, no record still using it);
 * gw_rx_read() does it before it waits, the owner after records it took
 * were released.  Idle connections hold no buffer. */
void gw_rx_park(struct gw_rx *rx);
static inline bool gw_rx_partial(const struct gw_rx *rx) { return rx->rx_in_record; }

#endif /* RPCRDMA_GW_RECORD_H */
