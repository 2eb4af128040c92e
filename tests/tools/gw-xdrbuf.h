// SPDX-License-Identifier: MIT
/*
 * This file contains what the user-space test clients gw-fragclient.c and
 * gw-tlsclient.c share: the connection, an XDR buffer encoded and decoded
 * by hand (independently of the gateway's own codecs), the RPC call header
 * they send (AUTH_SYS as root) and the reading of one reply record.
 */
#ifndef GW_XDRBUF_H
#define GW_XDRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XB_FH_MAX	128

/* A message being built (fb_len) or read (fb_off, the cursor); fb_bad once
 * anything did not fit or was short. */
struct xb_buf {
	uint8_t *fb_p;
	size_t fb_len, fb_cap, fb_off;
	bool fb_bad;
};

struct xb_fh {
	uint32_t fh_len;
	uint8_t fh_data[XB_FH_MAX];
};

void xb_put_u32(struct xb_buf *b, uint32_t v);
void xb_put_u64(struct xb_buf *b, uint64_t v);
void xb_put_fixed(struct xb_buf *b, const void *p, uint32_t n);
void xb_put_opaque(struct xb_buf *b, const void *p, uint32_t n);
uint32_t xb_get_u32(struct xb_buf *b);
uint64_t xb_get_u64(struct xb_buf *b);
const uint8_t *xb_get_opaque(struct xb_buf *b, uint32_t *n);
void xb_skip(struct xb_buf *b, size_t n);
/* A file handle (nfs_fh3 / nfs_fh4: an opaque<> of at most XB_FH_MAX). */
int xb_take_fh(struct xb_buf *r, struct xb_fh *fh);

/* b := an RPC call header (RFC 5531 9): xid, CALL, prog/vers/proc, AUTH_SYS
 * as root (uid 0, gid 0, no gids; host the machine name, the exports being
 * no_root_squash), AUTH_NONE verifier. */
void xb_call_hdr(struct xb_buf *b, uint32_t xid, const char *host, uint32_t prog,
		 uint32_t vers, uint32_t proc);

/* One reply record, in any fragments, read with rd(arg, p, n) (0, or -1 when
 * the connection ended) into b; its RPC header must be xid's, MSG_ACCEPTED,
 * SUCCESS.  b's cursor is left at the results.  0, or -1 said on stderr. */
int xb_recv_reply(int (*rd)(void *arg, void *p, size_t n), void *arg, struct xb_buf *b,
		  uint32_t xid);

/* A TCP connection to host:port, from a reserved port when root (as kernel
 * clients: the gateway's secure_port asks for one); -1 on failure. */
int xb_connect(const char *host, const char *port);

/* The next of a run of pseudo-random numbers (*state the seed). */
uint32_t xb_rand(uint32_t *state);

#endif
