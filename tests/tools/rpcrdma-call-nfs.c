// SPDX-License-Identifier: MIT
/*
 * rpcrdma-call's NFSv3 side (see rpcrdma-call.c for the commands): the
 * export's root handle from MOUNT over TCP (rpcbind GETPORT, then MNT, raw
 * XDR with record marking), then LOOKUP, CREATE, WRITE, READ and READDIR
 * through the backend, with the data items moved by chunks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <openssl/evp.h>

#include "rpcrdma-call.h"

static void get_fh(struct xdr_cur *xc, uint8_t *fh, unsigned *len, const char *what);

/* ---------------------------------------------------------------------
 * NFSv3 replies (raw XDR)
 * --------------------------------------------------------------------- */

/* The reply's nfsstat3 must be NFS3_OK; else the tool fails. */
static void nfs_ok(struct xdr_cur *xc, const char *what)
{
	uint32_t st;

	if (!xdr_get_u32(xc, &st))
		die("%s: short reply", what);
	if (st != 0)
		die("%s: NFS status %u", what, st);
}

static void skip_post_op_attr(struct xdr_cur *xc)
{
	bool f;

	if (xdr_get_bool(xc, &f) && f)
		xdr_skip(xc, 84);
}

static void skip_wcc(struct xdr_cur *xc)
{
	bool f;

	if (xdr_get_bool(xc, &f) && f)
		xdr_skip(xc, 24);
	skip_post_op_attr(xc);
}

/* ---------------------------------------------------------------------
 * MOUNT over TCP (rpcbind GETPORT, then MNT), raw XDR with record marking
 * --------------------------------------------------------------------- */
static int tcp_connect(const char *host, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, host, &sin.sin_addr);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		die("connect %s:%u: %s", host, port, strerror(errno));
	return fd;
}

static bool full_io(int fd, void *buf, size_t n, bool wr)
{
	uint8_t *p = buf;

	while (n > 0) {
		ssize_t k = wr ? write(fd, p, n) : read(fd, p, n);

		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

/* One call on a TCP connection; the reply record in out, its length returned. */
static size_t tcp_rpc(int fd, const uint8_t *msg, size_t len, uint8_t *out, size_t cap)
{
	uint8_t rm[4];
	uint32_t flen;

	rm_encode_hdr(rm, (uint32_t)len, true);
	if (!full_io(fd, rm, 4, true) || !full_io(fd, (void *)msg, len, true) ||
	    !full_io(fd, rm, 4, false))
		die("TCP RPC I/O failed");
	flen = chk_be32(rm) & RM_LEN_MASK;
	if (flen > cap || !full_io(fd, out, flen, false))
		die("TCP RPC reply too long or short");
	return flen;
}

static void tcp_reply_cursor(struct xdr_cur *xc, struct iovec *one, const uint8_t *buf, size_t len,
			     const char *what)
{
	struct rpc_reply_hdr rh;

	xdr_cur_init_buf(xc, one, buf, len);
	if (!rpc_reply_decode(xc, &rh) || rh.rr_stat != RPC_MSG_ACCEPTED ||
	    rh.rr_accept_stat != RPC_SUCCESS)
		die("%s: RPC failed", what);
}

static void mount_root(struct tool *t, const char *path)
{
	uint8_t msg[512], rep[1024];
	struct xdr_enc xe;
	struct xdr_cur xc;
	struct iovec one;
	uint32_t port, st;
	size_t n;
	int fd;

	fd = tcp_connect(t->host, 111);
	xdr_enc_init(&xe, msg, sizeof(msg));
	rpc_call_hdr(&xe, 0x4d4e5431, 100000, 2, 3);	/* PMAPPROC_GETPORT */
	xdr_put_u32(&xe, MOUNT_PROG);
	xdr_put_u32(&xe, MOUNT_VERS);
	xdr_put_u32(&xe, 6);				/* IPPROTO_TCP */
	xdr_put_u32(&xe, 0);
	n = tcp_rpc(fd, msg, xe.xe_len, rep, sizeof(rep));
	close(fd);
	tcp_reply_cursor(&xc, &one, rep, n, "GETPORT");
	if (!xdr_get_u32(&xc, &port) || port == 0 || port > 65535)
		die("GETPORT mountd: no port");

	fd = tcp_connect(t->host, (uint16_t)port);
	xdr_enc_init(&xe, msg, sizeof(msg));
	rpc_call_hdr(&xe, 0x4d4e5432, MOUNT_PROG, MOUNT_VERS, 1);	/* MNT */
	xdr_put_opaque(&xe, path, (uint32_t)strlen(path));
	n = tcp_rpc(fd, msg, xe.xe_len, rep, sizeof(rep));
	close(fd);
	tcp_reply_cursor(&xc, &one, rep, n, "MNT");
	if (!xdr_get_u32(&xc, &st) || st != 0)
		die("MOUNT %s: status %u", path, st);
	get_fh(&xc, t->fh, &t->fhlen, "MNT");
	printf("mount %s (mountd tcp %u): root fh %u bytes\n", path, port, t->fhlen);
}

static void put_fh(struct xdr_enc *xe, const uint8_t *fh, unsigned len)
{
	xdr_put_opaque(xe, fh, len);
}

static void get_fh(struct xdr_cur *xc, uint8_t *fh, unsigned *len, const char *what)
{
	struct xdr_span sp;

	if (!xdr_get_opaque(xc, &sp, NFS3_FHSIZE))
		die("%s: bad fh", what);
	*len = (unsigned)xdr_span_copy(xc, &sp, fh, NFS3_FHSIZE);
}

static void nfs_lookup_or_create(struct tool *t, const char *name, bool create, uint8_t *fh,
				 unsigned *fhlen)
{
	struct sync_call sc;
	struct xdr_cur xc;
	struct xdr_enc xe;
	struct iovec iov;
	struct be_call_desc d = { .cd_xid = ++t->xid, .cd_msg = &iov, .cd_msg_niov = 1 };
	const char *what = create ? "CREATE" : "LOOKUP";
	char what_name[300];
	bool follows;

	xdr_enc_init(&xe, t->mem, 4096);
	rpc_call_hdr(&xe, d.cd_xid, NFS_PROG, NFS_VERS, create ? NFSPROC3_CREATE : NFSPROC3_LOOKUP);
	put_fh(&xe, t->fh, t->fhlen);
	xdr_put_opaque(&xe, name, (uint32_t)strlen(name));
	if (create) {
		xdr_put_u32(&xe, 0);		/* UNCHECKED */
		xdr_put_u32(&xe, 1);		/* set mode */
		xdr_put_u32(&xe, 0644);
		xdr_put_u32(&xe, 0);		/* uid */
		xdr_put_u32(&xe, 0);		/* gid */
		xdr_put_u32(&xe, 1);		/* set size 0 */
		xdr_put_u64(&xe, 0);
		xdr_put_u32(&xe, 0);		/* atime */
		xdr_put_u32(&xe, 0);		/* mtime */
	}
	iov = (struct iovec){ t->mem, xe.xe_len };
	call_sync(t, &d, &sc);
	reply_cursor(&sc.reply, &xc, what);
	snprintf(what_name, sizeof(what_name), "%s %s", what, name);
	nfs_ok(&xc, what_name);
	if (create) {
		if (!xdr_get_bool(&xc, &follows) || !follows)
			die("CREATE: no fh returned");
	}
	get_fh(&xc, fh, fhlen, what);
	be_call_release(&sc.req);
}

/* FSINFO: the server's largest READ and WRITE (nfsd: memory dependent). */
static uint32_t nfs_fsinfo_max_io(struct tool *t)
{
	struct sync_call sc;
	struct xdr_cur xc;
	struct xdr_enc xe;
	struct iovec iov;
	struct be_call_desc d = { .cd_xid = ++t->xid, .cd_msg = &iov, .cd_msg_niov = 1 };
	uint32_t rtmax, rtpref, rtmult, wtmax;

	xdr_enc_init(&xe, t->mem, 4096);
	rpc_call_hdr(&xe, d.cd_xid, NFS_PROG, NFS_VERS, 19);
	put_fh(&xe, t->fh, t->fhlen);
	iov = (struct iovec){ t->mem, xe.xe_len };
	call_sync(t, &d, &sc);
	reply_cursor(&sc.reply, &xc, "FSINFO");
	nfs_ok(&xc, "FSINFO");
	skip_post_op_attr(&xc);
	if (!xdr_get_u32(&xc, &rtmax) || !xdr_get_u32(&xc, &rtpref) || !xdr_get_u32(&xc, &rtmult) ||
	    !xdr_get_u32(&xc, &wtmax))
		die("FSINFO: short");
	be_call_release(&sc.req);
	printf("FSINFO: rtmax %u wtmax %u\n", rtmax, wtmax);
	return rtmax < wtmax ? rtmax : wtmax;
}

static void sha256(const void *p, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned len = 0, i;

	EVP_Digest(p, n, md, &len, EVP_sha256(), NULL);
	for (i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
}

void cmd_rw(struct tool *t, const char *export, const char *name, size_t size)
{
	uint8_t fh[NFS3_FHSIZE], *data, *back, *msg;
	unsigned fhlen, i;
	size_t off;
	char s1[65], s2[65];
	uint32_t cnt, hdrlen, max_io;
	static const uint8_t zero[4];
	double t0;

	if (size * 2 + 65536 > t->memlen)
		die("size too large for the buffer");
	mount_root(t, export);
	nfs_lookup_or_create(t, name, true, fh, &fhlen);
	msg = t->mem;
	data = t->mem + 65536;
	back = data + xdr_round4(size) + 4096;
	srandom((unsigned)size);
	for (off = 0; off < size; off++)
		data[off] = (uint8_t)random();
	sha256(data, size, s1);

	max_io = nfs_fsinfo_max_io(t);
	for (off = 0; off < size; off += max_io) {
		size_t piece = size - off < max_io ? size - off : max_io;
		struct sync_call sc;
		struct xdr_cur xc;
		struct xdr_enc xe;
		struct iovec iov[3];
		struct be_read_item ri;
		struct be_call_desc d = { .cd_xid = ++t->xid, .cd_msg = iov, .cd_msg_niov = 3 };

		/* WRITE: header + args inline, data as a read item (or inline). */
		xdr_enc_init(&xe, msg, 4096);
		rpc_call_hdr(&xe, d.cd_xid, NFS_PROG, NFS_VERS, NFSPROC3_WRITE);
		put_fh(&xe, fh, fhlen);
		xdr_put_u64(&xe, off);
		xdr_put_u32(&xe, (uint32_t)piece);
		xdr_put_u32(&xe, 2);			/* FILE_SYNC */
		xdr_put_u32(&xe, (uint32_t)piece);	/* opaque length word */
		hdrlen = (uint32_t)xe.xe_len;
		iov[0] = (struct iovec){ msg, hdrlen };
		iov[1] = (struct iovec){ data + off, piece };
		iov[2] = (struct iovec){ (void *)zero, xdr_pad(piece) };
		if (iov[2].iov_len == 0)
			d.cd_msg_niov = 2;
		if (piece >= t->ddp_min && !t->nomsg) {
			ri = (struct be_read_item){ hdrlen, (uint32_t)piece };
			d.cd_reads = &ri;
			d.cd_nreads = 1;
		}
		if (t->nomsg)
			d.cd_flags |= BE_CALL_FORCE_NOMSG;
		t0 = now_s();
		call_sync(t, &d, &sc);
		reply_cursor(&sc.reply, &xc, "WRITE");
		nfs_ok(&xc, "WRITE");
		skip_wcc(&xc);
		if (!xdr_get_u32(&xc, &cnt) || cnt != piece)
			die("WRITE: count %u, expected %zu", cnt, piece);
		printf("WRITE %zu bytes at %zu: %s, rdma proc %s, %.1f ms\n", piece, off,
		       d.cd_nreads ? "read chunk" : t->nomsg ? "position-zero read chunk" : "inline",
		       sc.reply.br_proc == RPCRDMA_MSG ? "MSG" : "NOMSG", (now_s() - t0) * 1e3);
		be_call_release(&sc.req);
	}

	memset(back, 0xee, xdr_round4(size) + 16);
	for (off = 0; off < size; off += max_io) {
		size_t piece = size - off < max_io ? size - off : max_io;
		struct sync_call sc;
		struct xdr_cur xc;
		struct xdr_enc xe;
		struct iovec iov, wiov = { back + off, xdr_round4(piece) };
		struct be_target wt = { &wiov, 1 };
		struct be_call_desc d = { .cd_xid = ++t->xid, .cd_msg = &iov, .cd_msg_niov = 1,
					  .cd_writes = &wt, .cd_nwrites = 1 };
		bool eof;
		uint32_t dlen;

		/* READ: data through a write chunk into `back`. */
		xdr_enc_init(&xe, msg, 4096);
		rpc_call_hdr(&xe, d.cd_xid, NFS_PROG, NFS_VERS, NFSPROC3_READ);
		put_fh(&xe, fh, fhlen);
		xdr_put_u64(&xe, off);
		xdr_put_u32(&xe, (uint32_t)piece);
		iov = (struct iovec){ msg, xe.xe_len };
		t0 = now_s();
		call_sync(t, &d, &sc);
		reply_cursor(&sc.reply, &xc, "READ");
		nfs_ok(&xc, "READ");
		skip_post_op_attr(&xc);
		if (!xdr_get_u32(&xc, &cnt) || !xdr_get_bool(&xc, &eof) || !xdr_get_u32(&xc, &dlen))
			die("READ: short reply");
		printf("READ %u bytes at %zu: eof %d, opaque length %u, write chunk returned %u "
		       "bytes, %zu inline bytes after, %.1f ms\n", cnt, off, eof, dlen,
		       sc.reply.br_write_len[0], xdr_remaining(&xc), (now_s() - t0) * 1e3);
		if (cnt != piece || dlen != piece || sc.reply.br_write_len[0] != piece)
			die("READ: lengths %u/%u/%u, expected %zu", cnt, dlen,
			    sc.reply.br_write_len[0], piece);
		be_call_release(&sc.req);
	}
	sha256(back, size, s2);
	printf("sha256 written %s\nsha256 read    %s\n", s1, s2);
	if (strcmp(s1, s2))
		die("data differs");
	for (i = 0; i < 16; i++)
		if (back[xdr_round4(size) + i] != 0xee)
			die("READ wrote past the write chunk");
	for (i = (unsigned)size; i < xdr_round4(size); i++)
		if (back[i] != 0xee)
			printf("note: server wrote XDR pad byte %u\n", i);
}

void cmd_readdir(struct tool *t, const char *export, const char *dir, unsigned expect)
{
	uint8_t fh[NFS3_FHSIZE];
	unsigned fhlen, entries = 0, dots = 0, calls = 0;
	uint64_t cookie = 0;
	uint8_t verf[8] = { 0 };
	bool eof = false;
	const uint32_t count = 65536;
	uint8_t *msg = t->mem, *rbuf = t->mem + 8192;
	double t0;

	mount_root(t, export);
	nfs_lookup_or_create(t, dir, false, fh, &fhlen);
	t0 = now_s();
	while (!eof) {
		struct sync_call sc;
		struct xdr_cur xc;
		struct xdr_enc xe;
		struct xdr_span sp;
		struct iovec iov, riov = { rbuf, count + 4096 };
		struct be_target rt = { &riov, 1 };
		struct be_call_desc d = { .cd_xid = ++t->xid, .cd_msg = &iov, .cd_msg_niov = 1,
					  .cd_reply = &rt };
		bool follows;
		char nm[256];

		xdr_enc_init(&xe, msg, 4096);
		rpc_call_hdr(&xe, d.cd_xid, NFS_PROG, NFS_VERS, NFSPROC3_READDIR);
		put_fh(&xe, fh, fhlen);
		xdr_put_u64(&xe, cookie);
		xdr_put_fixed(&xe, verf, 8);
		xdr_put_u32(&xe, count);
		iov = (struct iovec){ msg, xe.xe_len };
		call_sync(t, &d, &sc);
		calls++;
		reply_cursor(&sc.reply, &xc, "READDIR");
		if (calls == 1)
			printf("READDIR reply: rdma proc %s, body %zu bytes\n",
			       sc.reply.br_proc == RPCRDMA_NOMSG ? "NOMSG (reply chunk)" : "MSG",
			       sc.reply.br_body_len);
		nfs_ok(&xc, "READDIR");
		skip_post_op_attr(&xc);
		if (!xdr_get_fixed(&xc, &sp, 8))
			die("READDIR: short");
		xdr_span_copy(&xc, &sp, verf, 8);
		while (xdr_get_bool(&xc, &follows) && follows) {
			uint64_t fileid;

			if (!xdr_get_u64(&xc, &fileid) || !xdr_get_string(&xc, &sp, 255) ||
			    !xdr_get_u64(&xc, &cookie))
				die("READDIR: bad entry");
			memset(nm, 0, sizeof(nm));
			xdr_span_copy(&xc, &sp, nm, sizeof(nm) - 1);
			if (!strcmp(nm, ".") || !strcmp(nm, ".."))
				dots++;
			else
				entries++;
		}
		if (!xdr_ok(&xc) || !xdr_get_bool(&xc, &eof))
			die("READDIR: bad list end");
		be_call_release(&sc.req);
	}
	printf("readdir: %u entries (+%u dot entries) in %u calls, %.1f ms\n", entries, dots, calls,
	       (now_s() - t0) * 1e3);
	if (entries != expect)
		die("expected %u entries", expect);
}
