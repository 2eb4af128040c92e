// SPDX-License-Identifier: MIT
/*
 * This file contains the XDR buffer, RPC call header and reply reading of
 * the test clients gw-fragclient and gw-tlsclient (see gw-xdrbuf.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <rpc/rpc.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gw-xdrbuf.h"

void xb_put_u32(struct xb_buf *b, uint32_t v)
{
	if (b->fb_len + 4 > b->fb_cap) {
		b->fb_bad = true;
		return;
	}
	v = htonl(v);
	memcpy(b->fb_p + b->fb_len, &v, 4);
	b->fb_len += 4;
}

void xb_put_u64(struct xb_buf *b, uint64_t v)
{
	xb_put_u32(b, (uint32_t)(v >> 32));
	xb_put_u32(b, (uint32_t)v);
}

void xb_put_opaque(struct xb_buf *b, const void *p, uint32_t n)
{
	uint32_t pad = (4 - (n & 3)) & 3;

	xb_put_u32(b, n);
	if (b->fb_len + n + pad > b->fb_cap) {
		b->fb_bad = true;
		return;
	}
	memcpy(b->fb_p + b->fb_len, p, n);
	memset(b->fb_p + b->fb_len + n, 0, pad);
	b->fb_len += n + pad;
}

/* An opaque[n] of fixed size: no length word. */
void xb_put_fixed(struct xb_buf *b, const void *p, uint32_t n)
{
	if (b->fb_len + n > b->fb_cap) {
		b->fb_bad = true;
		return;
	}
	memcpy(b->fb_p + b->fb_len, p, n);
	b->fb_len += n;
}

uint32_t xb_get_u32(struct xb_buf *b)
{
	uint32_t v;

	if (b->fb_off + 4 > b->fb_len) {
		b->fb_bad = true;
		return 0;
	}
	memcpy(&v, b->fb_p + b->fb_off, 4);
	b->fb_off += 4;
	return ntohl(v);
}

uint64_t xb_get_u64(struct xb_buf *b)
{
	uint64_t hi = xb_get_u32(b);

	return hi << 32 | xb_get_u32(b);
}

/* An opaque<>: its bytes stay in the buffer; returns them (NULL if short). */
const uint8_t *xb_get_opaque(struct xb_buf *b, uint32_t *n)
{
	const uint8_t *p;

	*n = xb_get_u32(b);
	if (b->fb_bad || *n > b->fb_len - b->fb_off) {
		b->fb_bad = true;
		return NULL;
	}
	p = b->fb_p + b->fb_off;
	b->fb_off += (*n + 3) & ~3u;
	if (b->fb_off > b->fb_len)
		b->fb_off = b->fb_len;
	return p;
}

void xb_skip(struct xb_buf *b, size_t n)
{
	if (b->fb_off + n > b->fb_len)
		b->fb_bad = true;
	else
		b->fb_off += n;
}

int xb_take_fh(struct xb_buf *r, struct xb_fh *fh)
{
	uint32_t n;
	const uint8_t *p = xb_get_opaque(r, &n);

	if (!p || n > XB_FH_MAX)
		return -1;
	fh->fh_len = n;
	memcpy(fh->fh_data, p, n);
	return 0;
}

void xb_call_hdr(struct xb_buf *b, uint32_t xid, const char *host, uint32_t prog,
		 uint32_t vers, uint32_t proc)
{
	uint32_t hlen = (uint32_t)strlen(host);

	b->fb_len = 0;
	xb_put_u32(b, xid);
	xb_put_u32(b, 0);		/* CALL */
	xb_put_u32(b, 2);
	xb_put_u32(b, prog);
	xb_put_u32(b, vers);
	xb_put_u32(b, proc);
	xb_put_u32(b, 1);		/* AUTH_SYS */
	xb_put_u32(b, 4 + 4 + ((hlen + 3) & ~3u) + 4 + 4 + 4);
	xb_put_u32(b, 0);		/* stamp */
	xb_put_opaque(b, host, hlen);
	xb_put_u32(b, 0);		/* uid */
	xb_put_u32(b, 0);		/* gid */
	xb_put_u32(b, 0);		/* gids */
	xb_put_u32(b, 0);		/* verifier AUTH_NONE */
	xb_put_u32(b, 0);
}

int xb_recv_reply(int (*rd)(void *arg, void *p, size_t n), void *arg, struct xb_buf *b,
		  uint32_t xid)
{
	uint32_t mark, n, len;
	bool last = false;

	b->fb_len = b->fb_off = 0;
	b->fb_bad = false;
	while (!last) {
		if (rd(arg, &mark, 4))
			return fprintf(stderr, "connection closed by the server side\n"), -1;
		mark = ntohl(mark);
		last = mark & 0x80000000u;
		n = mark & 0x7fffffffu;
		if (b->fb_len + n > b->fb_cap)
			return fprintf(stderr, "reply over %zu bytes\n", b->fb_cap), -1;
		if (rd(arg, b->fb_p + b->fb_len, n))
			return fprintf(stderr, "connection closed inside a reply\n"), -1;
		b->fb_len += n;
	}
	if (xb_get_u32(b) != xid || xb_get_u32(b) != 1 || xb_get_u32(b) != 0)
		return fprintf(stderr, "not an accepted reply to xid %#x\n", xid), -1;
	(void)xb_get_u32(b);	/* verifier flavor */
	len = xb_get_u32(b);
	xb_skip(b, (len + 3) & ~3u);
	if (xb_get_u32(b) != 0 || b->fb_bad)
		return fprintf(stderr, "xid %#x: accept_stat not SUCCESS\n", xid), -1;
	return 0;
}

int xb_connect(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	int fd = -1;

	if (getaddrinfo(host, port, &hints, &ai))
		return -1;
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	/* A reserved source port, as kernel clients use: the gateway's
	 * secure_port (and nfsd's `secure`) ask for one.  Root only. */
	if (fd >= 0 && geteuid() == 0 && bindresvport_sa(fd, NULL) < 0)
		fprintf(stderr, "bindresvport_sa: %s (going on from an ordinary port)\n", strerror(errno));
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

uint32_t xb_rand(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}
