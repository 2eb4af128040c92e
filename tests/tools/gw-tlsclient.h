// SPDX-License-Identifier: MIT
/*
 * This file contains what gw-tlsclient.c (connection, TLS, record marking,
 * RPC header, NFSv3, the throughput mode) and gw-tlsclient-v41.c (the
 * NFSv4.1 compounds) share: the connection, one RPC call (the XDR buffer is
 * gw-xdrbuf.h's).
 */
#ifndef GW_TLSCLIENT_H
#define GW_TLSCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "gw-xdrbuf.h"

#define TC_PROG_NFS	100003

/* The connection: plaintext until the probe is answered, then TLS. */
struct tc_io {
	int io_fd;
	SSL *io_ssl;
};

/* One NFSv4.1 client: its client ID, session (one slot) and open file. */
struct tc_v41 {
	uint64_t v4_clientid;
	uint32_t v4_csseq;		/* EXCHANGE_ID's sequenceid, for CREATE_SESSION */
	uint32_t v4_slotseq;		/* slot 0's next sequenceid */
	uint8_t v4_session[16];
	uint8_t v4_stateid[16];		/* the OPEN's */
	struct xb_fh v4_fh;		/* the opened file */
	uint32_t v4_seed;
};

void tc_call_hdr(struct xb_buf *b, uint32_t prog, uint32_t vers, uint32_t proc);
int tc_rpc(struct tc_io *io, struct xb_buf *call, struct xb_buf *reply);

/* NFSv4.1 (gw-tlsclient-v41.c); each returns 0 or -1 (said on stderr). */
int tc_v41_start(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, struct tc_v41 *v, uint32_t maxio);
int tc_v41_open(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, struct tc_v41 *v, const char *dir,
		const char *name);
int tc_v41_write(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, struct tc_v41 *v, uint64_t off,
		 const uint8_t *data, uint32_t len);
int tc_v41_read(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, struct tc_v41 *v, uint64_t off,
		uint8_t *back, uint32_t len);
int tc_v41_finish(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, struct tc_v41 *v);

#endif
