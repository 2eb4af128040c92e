// SPDX-License-Identifier: MIT
/*
 * gw-fragclient: a user-space NFS client that sends every RPC record in
 * many small fragments, as several user-space RPC libraries do (RFC 5531
 * section 11 allows any number of fragments per record).
 *
 *   gw-fragclient [-f FRAG] [-s SEED] [-n BYTES] -v 3|4.0 HOST PORT EXPORT NAME COPY
 *
 * Over one TCP connection (MOUNT and NFS on the same port, as the gateway
 * serves them) it finds the existing file EXPORT/NAME (v3: MOUNT MNT +
 * LOOKUP; v4.0: PUTROOTFH + LOOKUP, the export being the pseudo-root), WRITEs
 * BYTES (default 1 MiB; at most the server's maximum I/O size) of a pattern made from SEED at offset 0 with
 * FILE_SYNC (v4.0: the anonymous stateid, RFC 7530 9.1.4.3), READs them back
 * and compares.  COPY receives the pattern, for the caller's checksum of the
 * file on the server.  FRAG is the fragment size in bytes (default 2048) or
 * "mixed": sizes drawn from SEED between 1 and 4096.  Replies are read with
 * any fragmentation.  It encodes XDR by hand, independently of the
 * gateway's own codecs.  Exit status 0 only if every call succeeded and the
 * data read back is the data written.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "gw-xdrbuf.h"

#define PROG_NFS	100003
#define PROG_MOUNT	100005
#define NFS4ERR_GRACE	10013
#define NFS4ERR_DELAY	10008
#define REC_MAX		(4u << 20)

static int fc_frag = 2048;	/* 0: mixed */
static uint32_t fc_rand = 1;
static uint32_t fc_xid;

/* RPC call header, AUTH_SYS as root (the export is no_root_squash). */
static void call_hdr(struct xb_buf *b, uint32_t prog, uint32_t vers, uint32_t proc)
{
	xb_call_hdr(b, ++fc_xid, "fragclient", prog, vers, proc);
}

static int write_all(int fd, const struct iovec *iov, int n)
{
	struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n };
	size_t want = 0;

	for (int i = 0; i < n; i++)
		want += iov[i].iov_len;
	while (want > 0) {
		ssize_t k = sendmsg(fd, &mh, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		want -= (size_t)k;
		while (k > 0 && mh.msg_iovlen > 0) {
			size_t l = mh.msg_iov->iov_len < (size_t)k ? mh.msg_iov->iov_len : (size_t)k;

			mh.msg_iov->iov_base = (uint8_t *)mh.msg_iov->iov_base + l;
			mh.msg_iov->iov_len -= l;
			k -= (ssize_t)l;
			if (mh.msg_iov->iov_len == 0) {
				mh.msg_iov++;
				mh.msg_iovlen--;
			}
		}
	}
	return 0;
}

/* One record as fragments of fc_frag bytes (or mixed sizes), each its own
 * send: the gateway sees every fragment header. */
static int send_record(int fd, const struct xb_buf *b)
{
	size_t off = 0;

	while (off < b->fb_len) {
		size_t n = fc_frag ? (size_t)fc_frag : 1 + xb_rand(&fc_rand) % 4096;
		uint32_t mark;
		struct iovec iov[2];

		if (n > b->fb_len - off)
			n = b->fb_len - off;
		mark = htonl((uint32_t)n | (off + n == b->fb_len ? 0x80000000u : 0));
		iov[0] = (struct iovec){ &mark, 4 };
		iov[1] = (struct iovec){ b->fb_p + off, n };
		if (write_all(fd, iov, 2))
			return -1;
		off += n;
	}
	return 0;
}

/* xb_recv_reply's reader: arg is the socket. */
static int read_full(void *arg, void *p, size_t n)
{
	int fd = *(int *)arg;

	while (n > 0) {
		ssize_t k = read(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p = (uint8_t *)p + k;
		n -= (size_t)k;
	}
	return 0;
}

static int rpc(int fd, struct xb_buf *call, struct xb_buf *reply)
{
	if (call->fb_bad)
		return fprintf(stderr, "call does not fit its buffer\n"), -1;
	if (send_record(fd, call))
		return fprintf(stderr, "send: %s\n", strerror(errno)), -1;
	return xb_recv_reply(read_full, &fd, reply, fc_xid);
}

/* ---- NFSv3 (RFC 1813) ---- */

static int v3_run(int fd, struct xb_buf *c, struct xb_buf *r, const char *export, const char *name,
		  const uint8_t *data, uint32_t len, uint8_t *back)
{
	struct xb_fh root, fh;
	uint32_t n;
	const uint8_t *p;

	call_hdr(c, PROG_MOUNT, 3, 1);	/* MNT */
	xb_put_opaque(c, export, (uint32_t)strlen(export));
	if (rpc(fd, c, r) || xb_get_u32(r) != 0 || xb_take_fh(r, &root))
		return fprintf(stderr, "MOUNT MNT %s failed\n", export), -1;
	printf("MOUNTv3 MNT: ok, %u-byte handle\n", root.fh_len);
	call_hdr(c, PROG_NFS, 3, 3);	/* LOOKUP */
	xb_put_opaque(c, root.fh_data, root.fh_len);
	xb_put_opaque(c, name, (uint32_t)strlen(name));
	if (rpc(fd, c, r) || xb_get_u32(r) != 0 || xb_take_fh(r, &fh))
		return fprintf(stderr, "NFSv3 LOOKUP %s failed\n", name), -1;
	call_hdr(c, PROG_NFS, 3, 7);	/* WRITE */
	xb_put_opaque(c, fh.fh_data, fh.fh_len);
	xb_put_u64(c, 0);
	xb_put_u32(c, len);
	xb_put_u32(c, 2);			/* FILE_SYNC */
	xb_put_opaque(c, data, len);
	if (rpc(fd, c, r) || xb_get_u32(r) != 0)
		return fprintf(stderr, "NFSv3 WRITE of %u bytes failed\n", len), -1;
	if (xb_get_u32(r))			/* wcc_data: pre_op_attr */
		xb_skip(r, 24);
	if (xb_get_u32(r))			/* post_op_attr */
		xb_skip(r, 84);
	n = xb_get_u32(r);
	if (r->fb_bad || n != len)
		return fprintf(stderr, "NFSv3 WRITE wrote %u of %u bytes\n", n, len), -1;
	printf("NFSv3 WRITE: ok, %u bytes\n", n);
	call_hdr(c, PROG_NFS, 3, 6);	/* READ */
	xb_put_opaque(c, fh.fh_data, fh.fh_len);
	xb_put_u64(c, 0);
	xb_put_u32(c, len);
	if (rpc(fd, c, r) || xb_get_u32(r) != 0)
		return fprintf(stderr, "NFSv3 READ failed\n"), -1;
	if (xb_get_u32(r))
		xb_skip(r, 84);
	n = xb_get_u32(r);
	xb_get_u32(r);			/* eof */
	p = xb_get_opaque(r, &n);
	if (!p || n != len)
		return fprintf(stderr, "NFSv3 READ returned %u of %u bytes\n", p ? n : 0, len), -1;
	memcpy(back, p, n);
	printf("NFSv3 READ: ok, %u bytes\n", n);
	return 0;
}

/* ---- NFSv4.0 (RFC 7530) ---- */

/* COMPOUND { PUTROOTFH, LOOKUP each component of name }, then the caller's op. */
static void v4_head(struct xb_buf *c, const char *name, uint32_t nops_extra)
{
	char path[256], *save = NULL, *comp;
	uint32_t ncomp = 0;

	snprintf(path, sizeof(path), "%s", name);
	for (const char *s = name; *s; s++)
		ncomp += (*s != '/' && (s == name || s[-1] == '/'));
	call_hdr(c, PROG_NFS, 4, 1);
	xb_put_opaque(c, "", 0);		/* tag */
	xb_put_u32(c, 0);			/* minorversion */
	xb_put_u32(c, 1 + ncomp + nops_extra);
	xb_put_u32(c, 24);			/* PUTROOTFH */
	for (comp = strtok_r(path, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		xb_put_u32(c, 15);		/* LOOKUP */
		xb_put_opaque(c, comp, (uint32_t)strlen(comp));
	}
}

/* The anonymous stateid: seqid 0 and 12 zero bytes (RFC 7530 9.1.4.3). */
static void v4_anon_stateid(struct xb_buf *c)
{
	for (int i = 0; i < 4; i++)
		xb_put_u32(c, 0);
}

/* Status of a COMPOUND reply; r's cursor at the last op's results when 0. */
static uint32_t v4_status(struct xb_buf *r, const char *name)
{
	uint32_t st = xb_get_u32(r), n, nres;

	if (st != 0 || r->fb_bad)
		return r->fb_bad ? 1 : st;
	xb_get_opaque(r, &n);		/* tag */
	nres = xb_get_u32(r);
	for (uint32_t i = 0; i + 1 < nres; i++) {	/* PUTROOTFH, LOOKUPs: status only */
		xb_get_u32(r);
		if (xb_get_u32(r) != 0)
			return fprintf(stderr, "op %u of the lookup of %s failed\n", i, name), 1;
	}
	xb_get_u32(r);			/* the last op's number and status */
	return xb_get_u32(r);
}

/* Runs the COMPOUND in c, retrying while the server is in its grace period. */
static int v4_call(int fd, struct xb_buf *c, struct xb_buf *r, const char *what, const char *name)
{
	for (int tries = 0; tries < 120; tries++) {
		uint32_t st, xid;

		if (rpc(fd, c, r))
			return -1;
		st = v4_status(r, name);
		if (st == 0)
			return 0;
		if (st != NFS4ERR_GRACE && st != NFS4ERR_DELAY)
			return fprintf(stderr, "NFSv4.0 %s: status %u\n", what, st), -1;
		sleep(1);
		xid = htonl(++fc_xid);		/* a new call, not a retransmission */
		memcpy(c->fb_p, &xid, 4);
	}
	return fprintf(stderr, "NFSv4.0 %s: still in grace after 120 s\n", what), -1;
}

static int v4_run(int fd, struct xb_buf *c, struct xb_buf *r, const char *name, const uint8_t *data,
		  uint32_t len, uint8_t *back)
{
	uint32_t n;
	const uint8_t *p;

	v4_head(c, name, 1);
	xb_put_u32(c, 38);			/* WRITE */
	v4_anon_stateid(c);
	xb_put_u64(c, 0);
	xb_put_u32(c, 2);			/* FILE_SYNC4 */
	xb_put_opaque(c, data, len);
	if (v4_call(fd, c, r, "WRITE", name))
		return -1;
	n = xb_get_u32(r);
	if (r->fb_bad || n != len)
		return fprintf(stderr, "NFSv4.0 WRITE wrote %u of %u bytes\n", n, len), -1;
	printf("NFSv4.0 WRITE: ok, %u bytes\n", n);
	v4_head(c, name, 1);
	xb_put_u32(c, 25);			/* READ */
	v4_anon_stateid(c);
	xb_put_u64(c, 0);
	xb_put_u32(c, len);
	if (v4_call(fd, c, r, "READ", name))
		return -1;
	xb_get_u32(r);			/* eof */
	p = xb_get_opaque(r, &n);
	if (!p || n != len)
		return fprintf(stderr, "NFSv4.0 READ returned %u of %u bytes\n", p ? n : 0, len), -1;
	memcpy(back, p, n);
	printf("NFSv4.0 READ: ok, %u bytes\n", n);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: gw-fragclient [-f FRAG|mixed] [-s SEED] [-n BYTES] -v 3|4.0 "
			"HOST PORT EXPORT NAME COPY\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct xb_buf c = { .fb_cap = REC_MAX }, r = { .fb_cap = REC_MAX };
	uint32_t len = 1u << 20, seed = 1;
	const char *vers = NULL;
	uint8_t *data, *back;
	FILE *copy;
	int opt, fd, rc;

	while ((opt = getopt(argc, argv, "f:s:n:v:")) != -1) {
		switch (opt) {
		case 'f': fc_frag = strcmp(optarg, "mixed") ? atoi(optarg) : 0; break;
		case 's': seed = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'n': len = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'v': vers = optarg; break;
		default: return usage();
		}
	}
	if (argc - optind != 5 || !vers || (strcmp(vers, "3") && strcmp(vers, "4.0")) ||
	    fc_frag < 0 || len == 0 || len > REC_MAX - 4096)
		return usage();
	fc_rand = seed;
	fc_xid = seed << 16;
	c.fb_p = malloc(REC_MAX);
	r.fb_p = malloc(REC_MAX);
	data = malloc(len);
	back = calloc(1, len);
	if (!c.fb_p || !r.fb_p || !data || !back)
		return 1;
	for (uint32_t i = 0; i < len; i++)
		data[i] = (uint8_t)(xb_rand(&fc_rand) >> 3);
	copy = fopen(argv[optind + 4], "w");
	if (!copy || fwrite(data, 1, len, copy) != len || fclose(copy))
		return fprintf(stderr, "%s: cannot write\n", argv[optind + 4]), 1;
	fd = xb_connect(argv[optind], argv[optind + 1]);
	if (fd < 0)
		return fprintf(stderr, "connect %s:%s failed\n", argv[optind], argv[optind + 1]), 1;
	if (fc_frag)
		printf("fragments of %d bytes\n", fc_frag);
	else
		printf("fragments of 1..4096 bytes (seed %u)\n", seed);
	if (!strcmp(vers, "3"))
		rc = v3_run(fd, &c, &r, argv[optind + 2], argv[optind + 3], data, len, back);
	else
		rc = v4_run(fd, &c, &r, argv[optind + 3], data, len, back);
	close(fd);
	if (rc == 0 && memcmp(data, back, len)) {
		fprintf(stderr, "data read back differs from the data written\n");
		rc = -1;
	}
	if (rc == 0)
		printf("%s: %u bytes written and read back equal\n", vers, len);
	free(c.fb_p);
	free(r.fb_p);
	free(data);
	free(back);
	return rc ? 1 : 0;
}
