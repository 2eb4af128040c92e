// SPDX-License-Identifier: MIT
/*
 * This file contains rpcrdma-call, a test tool that drives backend-rdma
 * against a real RPC-over-RDMA server (the kernel nfsd in the VM bed):
 *
 *   rpcrdma-call [options] ADDR PORT COMMAND [ARGS]
 *
 *   null [N]                 N NULL calls (default 1), one after the other
 *   concurrent N             N NULL calls submitted at once; checks that the
 *                            calls sent against the grant never exceed it
 *   rw EXPORT NAME SIZE      MOUNT EXPORT over TCP (libtirpc), CREATE NAME,
 *                            WRITE SIZE random bytes (read chunk when over
 *                            --ddp-min, inline otherwise), READ them back
 *                            through a write chunk, compare SHA-256
 *   readdir EXPORT DIR N     LOOKUP DIR, READDIR it through a reply chunk
 *                            until eof; expects N entries besides . and ..
 *   soak SECONDS             NULL calls, 8 at a time, for SECONDS; every call
 *                            must succeed, across reconnects
 *   chunky N                 N NULL calls one after the other, each offering
 *                            a 4 KiB write chunk (for tests/peer/rpcrdma-peer,
 *                            which writes 100 bytes of 0xab into it);
 *                            --expect-error NAME: each call must fail so
 *   idle SECONDS             stay connected and idle (keepalive), then NULL
 *
 * Options: --expect-credits N, --expect-pd HEX (first 8 bytes of the
 * server's private data), --mode mw|mr|persistent, --credits N,
 * --ddp-min BYTES, --nomsg (long calls as position-zero read chunks),
 * --max-seg BYTES, --expect-reconnect, --retry-max MS, --timeout SECONDS,
 * --keepalive MS, --no-remote-inv (clear the RFC 8797 R flag), --conns N,
 * --ccp (CONF_RDMA first, draft-08 6), --send-batch N (signal every Nth
 * call Send; 1: every Send).  Prints one line per fact
 * measured; exit 0 = all passed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <event2/event.h>
#include <openssl/evp.h>
#include <sys/socket.h>

#include "backend.h"
#include "chunking.h"

#define NFS_PROG	100003
#define NFS_VERS	3
#define MOUNT_PROG	100005
#define MOUNT_VERS	3
#define NFS3_FHSIZE	64

enum { NFSPROC3_NULL = 0, NFSPROC3_GETATTR = 1, NFSPROC3_LOOKUP = 3, NFSPROC3_READ = 6,
       NFSPROC3_WRITE = 7, NFSPROC3_CREATE = 8, NFSPROC3_READDIR = 16 };

struct tool {
	struct event_base *base;
	struct be_ctx *ctx;
	struct be_pool *pool;
	struct be_region *region;
	uint8_t *mem;			/* registered: messages, data, replies */
	size_t memlen;
	uint32_t xid;
	unsigned downs, ups;
	int timeout_s;
	unsigned ddp_min;
	bool nomsg;
	uint8_t fh[NFS3_FHSIZE];
	unsigned fhlen;
	const char *host;
};

struct sync_call {
	bool done;
	struct be_reply reply;		/* copied: the structure is the callback's */
	struct be_req req;		/* the call, released by the command */
	struct tool *t;
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void get_fh(struct xdr_cur *xc, uint8_t *fh, unsigned *len, const char *what);
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stdout, "FAIL: ");
	vfprintf(stdout, fmt, ap);
	fprintf(stdout, "\n");
	va_end(ap);
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pool_event(struct be_pool *pool, enum be_pool_event ev, void *arg)
{
	struct tool *t = arg;

	(void)pool;
	if (ev == BE_POOL_UP)
		t->ups++;
	else if (ev == BE_POOL_DOWN)
		t->downs++;
	printf("pool event: %s\n", ev == BE_POOL_UP ? "up" : ev == BE_POOL_DOWN ? "down" : "fatal");
	fflush(stdout);
}

/* Run the loop until *flag or the deadline. */
static bool loop_until(struct tool *t, const bool *flag, double secs)
{
	double end = now_s() + secs;

	while (!*flag && now_s() < end)
		event_base_loop(t->base, EVLOOP_ONCE);
	return *flag;
}

static void sync_cb(struct be_req *req, const struct be_reply *r, void *arg)
{
	struct sync_call *sc = arg;

	(void)req;
	sc->reply = *r;
	sc->done = true;
}

/* Submit and wait (the descriptor's arrays, on the caller's stack, outlive
 * the call); the caller releases &sc->req. */
static void call_sync(struct tool *t, const struct be_call_desc *d, struct sync_call *sc)
{
	int rc;

	memset(sc, 0, sizeof(*sc));
	sc->t = t;
	rc = be_call_submit(t->pool, &sc->req, d, sync_cb, sc);
	if (rc < 0)
		die("be_call_submit xid %08x: %s", d->cd_xid, strerror(-rc));
	if (!loop_until(t, &sc->done, t->timeout_s))
		die("xid %08x: no reply within %d s", d->cd_xid, t->timeout_s);
}

/* ---------------------------------------------------------------------
 * RPC and NFSv3 encoding (raw XDR)
 * --------------------------------------------------------------------- */
/* AUTH_NONE to rpcbind, AUTH_SYS root (machine "rpcrdma-call", no gids)
 * to MOUNT and NFS. */
static void rpc_call_hdr(struct xdr_enc *xe, uint32_t xid, uint32_t prog, uint32_t vers,
			 uint32_t proc)
{
	static const struct rpc_auth_sys root = { .as_namelen = 12,
						  .as_machinename = "rpcrdma-call" };

	rpc_call_encode(xe, xid, prog, vers, proc, prog == 100000 ? NULL : &root);
}

/* Decode the RPC reply in the body; the cursor is left at the results. */
static void reply_cursor(const struct be_reply *r, struct xdr_cur *xc, const char *what)
{
	struct rpc_reply_hdr rh;

	if (r->br_err != BE_OK)
		die("%s: backend error: %s", what, be_err_str(r->br_err));
	xdr_cur_init(xc, r->br_body, r->br_nbody);
	if (!rpc_reply_decode(xc, &rh))
		die("%s: RPC reply undecodable", what);
	if (rh.rr_stat != RPC_MSG_ACCEPTED || rh.rr_accept_stat != RPC_SUCCESS)
		die("%s: RPC reply stat %u accept %u", what, rh.rr_stat, rh.rr_accept_stat);
	if (rh.rr_xid != r->br_xid)
		die("%s: RPC xid %08x in rdma xid %08x", what, rh.rr_xid, r->br_xid);
}

static uint32_t nfs_status(struct xdr_cur *xc, const char *what)
{
	uint32_t st;

	if (!xdr_get_u32(xc, &st))
		die("%s: short reply", what);
	return st;
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

/* ---------------------------------------------------------------------
 * Commands
 * --------------------------------------------------------------------- */
static void print_info(struct tool *t)
{
	struct be_conn_info ci;
	unsigned i;

	if (be_pool_conn_info(t->pool, 0, &ci) < 0)
		die("connection 0 not up");
	printf("credits granted: %u\n", ci.ci_credits);
	printf("server private data: %u bytes:", ci.ci_peer_raw_len);
	for (i = 0; i < 8 && i < ci.ci_peer_raw_len; i++)
		printf(" %02x", ci.ci_peer_raw[i]);
	printf(" (RFC 8797 %s, send %u recv %u R %d)\n", ci.ci_peer_pd ? "yes" : "no",
	       ci.ci_peer.pd_send_size, ci.ci_peer.pd_recv_size, ci.ci_peer.pd_remote_inv);
	printf("inline thresholds: send %u recv %u\n", ci.ci_send_threshold, ci.ci_recv_threshold);
	{
		uint32_t ps, pr;

		be_pool_inline_thresholds(t->pool, &ps, &pr);
		printf("pool inline thresholds: send %u recv %u\n", ps, pr);
	}
	printf("receives posted: %u; responder_resources %u initiator_depth %u\n",
	       ci.ci_recvs_posted, ci.ci_responder_resources, ci.ci_initiator_depth);
	printf("ccp: %s, read depth %u\n", be_ccp_state_str(ci.ci_ccp), ci.ci_read_depth);
}

/* A NULL call message at m; returns its length. */
static size_t null_msg(struct tool *t, uint8_t *m, uint32_t xid)
{
	struct xdr_enc xe;

	(void)t;
	xdr_enc_init(&xe, m, 512);
	rpc_call_hdr(&xe, xid, NFS_PROG, NFS_VERS, NFSPROC3_NULL);
	return xe.xe_len;
}

static void cmd_null(struct tool *t, unsigned n)
{
	unsigned i;
	double t0 = now_s();

	for (i = 0; i < n; i++) {
		struct sync_call sc;
		struct xdr_cur xc;
		struct iovec iov = { t->mem, 0 };
		struct be_call_desc d = { .cd_xid = ++t->xid, .cd_msg = &iov, .cd_msg_niov = 1 };

		iov.iov_len = null_msg(t, t->mem, d.cd_xid);
		call_sync(t, &d, &sc);
		reply_cursor(&sc.reply, &xc, "NULL");
		if (i == 0)
			printf("NULL reply: rdma proc %u, credits %u, %zu bytes\n", sc.reply.br_proc,
			       sc.reply.br_credits, sc.reply.br_body_len);
		be_call_release(&sc.req);
	}
	printf("null: %u calls ok, %.1f us each\n", n, (now_s() - t0) * 1e6 / n);
}

/* Two peaks: max_inflight is be_pool_inflight(), calls not yet finished (a
 * call leaves it once its reply and invalidations are in; its Send need not
 * be known complete); max_sent is the credit accounting's count, calls sent
 * whose reply has not come, which is what the grant bounds (RFC 8166
 * 3.3.1). */
struct conc {
	unsigned done, failed, max_inflight, max_sent, grant;
	struct tool *t;
};

/* Calls sent against the grant, summed over the pool's connections up. */
static unsigned pool_sent(const struct tool *t)
{
	unsigned k, sum = 0, n = be_ctx_config(t->ctx)->bc_conns;
	struct be_conn_info ci;

	for (k = 0; k < n; k++)
		if (be_pool_conn_info(t->pool, k, &ci) == 0)
			sum += ci.ci_inflight;
	return sum;
}

static void conc_sample(struct conc *c)
{
	unsigned inflight = be_pool_inflight(c->t->pool), sent = pool_sent(c->t);

	if (inflight > c->max_inflight)
		c->max_inflight = inflight;
	if (sent > c->max_sent)
		c->max_sent = sent;
}

/* A call in flight with others: its request and message iovec live until
 * the callback, so each has its own. */
struct call_slot {
	struct be_req cs_req;
	struct iovec cs_iov;
};

static void conc_cb(struct be_req *call, const struct be_reply *r, void *arg)
{
	struct conc *c = arg;
	struct xdr_cur xc;

	conc_sample(c);
	if (r->br_err == BE_OK) {
		reply_cursor(r, &xc, "concurrent NULL");
		if (r->br_credits > c->grant)
			c->grant = r->br_credits;
	} else {
		c->failed++;
	}
	c->done++;
	be_call_release(call);
}

static void cmd_concurrent(struct tool *t, unsigned n)
{
	struct conc c = { .t = t };
	unsigned i, max_queued = 0;
	bool all = false;
	double t0 = now_s();
	struct call_slot *cs;

	if ((size_t)n * 128 > t->memlen)
		die("too many calls for the buffer");
	cs = calloc(n, sizeof(*cs));
	if (!cs)
		die("out of memory");
	for (i = 0; i < n; i++) {
		uint8_t *m = t->mem + (size_t)i * 128;
		struct be_call_desc d = { .cd_xid = ++t->xid, .cd_msg = &cs[i].cs_iov,
					  .cd_msg_niov = 1 };
		int rc;

		cs[i].cs_iov = (struct iovec){ m, null_msg(t, m, d.cd_xid) };
		rc = be_call_submit(t->pool, &cs[i].cs_req, &d, conc_cb, &c);
		if (rc < 0)
			die("submit %u: %s", i, strerror(-rc));
		conc_sample(&c);
		if (be_pool_queued(t->pool) > max_queued)
			max_queued = be_pool_queued(t->pool);
	}
	while (!all && now_s() < t0 + t->timeout_s) {
		event_base_loop(t->base, EVLOOP_ONCE);
		conc_sample(&c);
		all = c.done == n;
	}
	if (all)
		free(cs);	/* else calls may still use it: the tool exits */
	printf("concurrent: %u calls, %u done, %u failed, max in flight %u, max sent %u, "
	       "max queued %u, grant %u, %.0f calls/s\n", n, c.done, c.failed, c.max_inflight,
	       c.max_sent, max_queued, c.grant, c.done / (now_s() - t0));
	if (!all || c.failed)
		die("concurrent calls did not all succeed");
	/* a grant of 0 counts as 1; the pool has bc_conns connections */
	if (c.max_sent > (c.grant ? c.grant : 1) * be_ctx_config(t->ctx)->bc_conns)
		die("more calls sent (%u) than granted (%u x %u connections)", c.max_sent,
		    c.grant, be_ctx_config(t->ctx)->bc_conns);
}

/* diropargs3 after the header: dir fh + name. */
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
	bool follows;
	uint32_t st;

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
	st = nfs_status(&xc, what);
	if (st != 0)
		die("%s %s: NFS status %u", what, name, st);
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
	uint32_t st, rtmax, rtpref, rtmult, wtmax;

	xdr_enc_init(&xe, t->mem, 4096);
	rpc_call_hdr(&xe, d.cd_xid, NFS_PROG, NFS_VERS, 19);
	put_fh(&xe, t->fh, t->fhlen);
	iov = (struct iovec){ t->mem, xe.xe_len };
	call_sync(t, &d, &sc);
	reply_cursor(&sc.reply, &xc, "FSINFO");
	st = nfs_status(&xc, "FSINFO");
	if (st != 0)
		die("FSINFO: NFS status %u", st);
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

static void cmd_rw(struct tool *t, const char *export, const char *name, size_t size)
{
	uint8_t fh[NFS3_FHSIZE], *data, *back, *msg;
	unsigned fhlen, i;
	size_t off;
	char s1[65], s2[65];
	uint32_t st, cnt, hdrlen, max_io;
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
		st = nfs_status(&xc, "WRITE");
		if (st != 0)
			die("WRITE: NFS status %u", st);
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
		st = nfs_status(&xc, "READ");
		if (st != 0)
			die("READ: NFS status %u", st);
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

static void cmd_readdir(struct tool *t, const char *export, const char *dir, unsigned expect)
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
		uint32_t st;
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
		st = nfs_status(&xc, "READDIR");
		if (st != 0)
			die("READDIR: NFS status %u", st);
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

struct soak {
	unsigned done, failed, inflight;
	struct tool *t;
};

static void soak_cb(struct be_req *call, const struct be_reply *r, void *arg)
{
	struct soak *s = arg;

	if (r->br_err != BE_OK) {
		s->failed++;
		printf("soak: xid %08x failed: %s\n", r->br_xid, be_err_str(r->br_err));
	}
	s->done++;
	s->inflight--;
	be_call_release(call);
}

static void cmd_soak(struct tool *t, unsigned secs, bool expect_reconnect)
{
	struct soak s = { .t = t };
	double end = now_s() + secs;
	unsigned slot = 0, submitted = 0;
	struct call_slot cs[64];

	memset(cs, 0, sizeof(cs));
	while (now_s() < end || s.inflight > 0) {
		while (now_s() < end && s.inflight < 8) {
			struct call_slot *c;
			uint8_t *m;
			struct be_call_desc d = { .cd_xid = ++t->xid, .cd_msg_niov = 1 };
			int rc;

			/* at most 8 of the 64 are busy: a released one comes soon */
			while (cs[slot % 64].cs_req.bq_state != BE_REQ_IDLE)
				slot++;
			c = &cs[slot % 64];
			m = t->mem + (size_t)(slot++ % 64) * 128;
			c->cs_iov = (struct iovec){ m, null_msg(t, m, d.cd_xid) };
			d.cd_msg = &c->cs_iov;
			rc = be_call_submit(t->pool, &c->cs_req, &d, soak_cb, &s);
			if (rc < 0)
				die("soak submit: %s", strerror(-rc));
			s.inflight++;
			submitted++;
		}
		event_base_loop(t->base, EVLOOP_ONCE);
		if (now_s() > end + t->timeout_s)
			die("soak: %u calls still pending %d s after the end", s.inflight, t->timeout_s);
	}
	printf("soak: %u calls, %u done, %u failed, %u down events, %u up events, %" PRIu64
	       " re-sent\n", submitted, s.done, s.failed, t->downs, t->ups,
	       be_ctx_stats(t->ctx)->bs_resent);
	if (s.failed)
		die("calls failed");
	if (expect_reconnect && (t->downs == 0 || t->ups < 2))
		die("expected a reconnect");
}

static void cmd_chunky(struct tool *t, unsigned n, const char *expect_err)
{
	unsigned i, k;

	for (i = 0; i < n; i++) {
		uint8_t *m = t->mem, *wb = t->mem + 65536;
		struct iovec iov = { m, 0 }, wiov = { wb, 4096 };
		struct be_target wt = { &wiov, 1 };
		struct be_call_desc d = { .cd_xid = ++t->xid, .cd_msg = &iov, .cd_msg_niov = 1,
					  .cd_writes = &wt, .cd_nwrites = 1 };
		struct sync_call sc;
		struct xdr_cur xc;

		memset(wb, 0, 4096);
		iov.iov_len = null_msg(t, m, d.cd_xid);
		call_sync(t, &d, &sc);
		if (expect_err) {
			if (strcmp(be_err_str(sc.reply.br_err), expect_err))
				die("call %u: got '%s', expected '%s'", i, be_err_str(sc.reply.br_err),
				    expect_err);
			printf("chunky call %u: failed as expected: %s\n", i, expect_err);
			be_call_release(&sc.req);
			continue;
		}
		reply_cursor(&sc.reply, &xc, "chunky NULL");
		if (sc.reply.br_write_len[0] != 100)
			die("write chunk returned %u bytes, expected 100", sc.reply.br_write_len[0]);
		for (k = 0; k < 100; k++)
			if (wb[k] != 0xab)
				die("byte %u of the write chunk is %#x", k, wb[k]);
		printf("chunky call %u: ok, 100 bytes landed, remote invalidation %d\n", i,
		       sc.reply.br_remote_inv);
		be_call_release(&sc.req);
	}
}

static void cmd_idle(struct tool *t, unsigned secs)
{
	double end = now_s() + secs;

	while (now_s() < end)
		event_base_loop(t->base, EVLOOP_ONCE);
	printf("idle %u s: %" PRIu64 " keepalives\n", secs, be_ctx_stats(t->ctx)->bs_keepalives);
	cmd_null(t, 1);
}

static void print_stats(struct tool *t)
{
	const struct be_stats *s = be_ctx_stats(t->ctx);

	printf("stats: calls %" PRIu64 " replies %" PRIu64 " unknown_xid %" PRIu64
	       " bad_reply %" PRIu64 " overrun %" PRIu64 " mw_binds %" PRIu64 " local_inv %" PRIu64
	       " remote_inv %" PRIu64 " mr_regs %" PRIu64 " nomsg %" PRIu64 " queued %" PRIu64
	       " connects %" PRIu64 " disconnects %" PRIu64 " resent %" PRIu64 " flushed %" PRIu64
	       " keepalives %" PRIu64 " long_replies %" PRIu64 " rdma_done %" PRIu64
	       " ccp_ok %" PRIu64 " ccp_fallback %" PRIu64 " drain_timeouts %" PRIu64
	       " read_depth_refused %" PRIu64 " sends_signaled %" PRIu64 " sends_unsignaled %" PRIu64
	       " sq_completions %" PRIu64 " rq_completions %" PRIu64 " cq_wakeups %" PRIu64 "\n",
	       s->bs_calls, s->bs_replies, s->bs_unknown_xid, s->bs_bad_reply, s->bs_write_overrun,
	       s->bs_mw_binds, s->bs_local_inv, s->bs_remote_inv, s->bs_mr_regs, s->bs_nomsg_calls,
	       s->bs_queued, s->bs_connects, s->bs_disconnects, s->bs_resent, s->bs_flushed,
	       s->bs_keepalives, s->bs_long_replies, s->bs_rdma_done, s->bs_ccp_ok,
	       s->bs_ccp_fallback, s->bs_drain_timeouts, s->bs_read_depth_refused,
	       s->bs_sends_signaled, s->bs_sends_unsignaled, s->bs_sq_completions,
	       s->bs_rq_completions, s->bs_cq_wakeups);
}

static void usage(void)
{
	fprintf(stderr, "usage: rpcrdma-call [options] ADDR PORT null [N] | concurrent N | "
			"rw EXPORT NAME SIZE | readdir EXPORT DIR N | soak SECONDS\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "expect-credits", required_argument, NULL, 'c' },
		{ "expect-pd", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "credits", required_argument, NULL, 'C' },
		{ "ddp-min", required_argument, NULL, 'd' },
		{ "nomsg", no_argument, NULL, 'n' },
		{ "max-seg", required_argument, NULL, 's' },
		{ "expect-reconnect", no_argument, NULL, 'r' },
		{ "retry-max", required_argument, NULL, 'R' },
		{ "timeout", required_argument, NULL, 't' },
		{ "keepalive", required_argument, NULL, 'k' },
		{ "no-remote-inv", no_argument, NULL, 'I' },
		{ "expect-error", required_argument, NULL, 'E' },
		{ "conns", required_argument, NULL, 'N' },
		{ "ccp", no_argument, NULL, 'P' },
		{ "send-batch", required_argument, NULL, 'B' },
		{ NULL, 0, NULL, 0 }
	};
	struct tool t = { .timeout_s = 20, .ddp_min = 1024 };
	struct be_config cfg;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int expect_credits = -1, o;
	const char *expect_pd = NULL, *cmd, *expect_err = NULL;
	bool expect_reconnect = false, up = false;
	double t0;

	be_config_default(&cfg);
	cfg.bc_keepalive_ms = 0;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'c': expect_credits = atoi(optarg); break;
		case 'p': expect_pd = optarg; break;
		case 'm':
			cfg.bc_reg_mode = !strcmp(optarg, "mr") ? BE_REG_MR
					: !strcmp(optarg, "persistent") ? BE_REG_PERSISTENT : BE_REG_MW;
			break;
		case 'C': cfg.bc_credits = (unsigned)atoi(optarg); break;
		case 'd': t.ddp_min = (unsigned)atoi(optarg); break;
		case 'n': t.nomsg = true; break;
		case 's': cfg.bc_max_seg_len = (uint32_t)atoi(optarg); break;
		case 'r': expect_reconnect = true; break;
		case 'R': cfg.bc_retry_max_ms = (unsigned)atoi(optarg); break;
		case 't': t.timeout_s = atoi(optarg); break;
		case 'k': cfg.bc_keepalive_ms = (unsigned)atoi(optarg); break;
		case 'I': cfg.bc_remote_inv = false; break;
		case 'E': expect_err = optarg; break;
		case 'N': cfg.bc_conns = (unsigned)atoi(optarg); break;
		case 'P': cfg.bc_ccp = true; break;
		case 'B': cfg.bc_send_batch = (unsigned)atoi(optarg); break;
		default: usage();
		}
	}
	if (argc - optind < 3)
		usage();
	t.host = argv[optind];
	if (inet_pton(AF_INET, argv[optind], &sin.sin_addr) != 1)
		die("bad address %s", argv[optind]);
	sin.sin_port = htons((uint16_t)atoi(argv[optind + 1]));
	cmd = argv[optind + 2];
	setvbuf(stdout, NULL, _IOLBF, 0);

	t.base = event_base_new();
	t.ctx = be_ctx_new(t.base, &cfg);
	t.memlen = 8u << 20;
	if (posix_memalign((void **)&t.mem, 4096, t.memlen))
		die("out of memory");
	memset(t.mem, 0, t.memlen);
	t.region = be_region_register(t.ctx, t.mem, t.memlen);
	if (!t.region)
		die("be_region_register: %s", strerror(errno));
	t.pool = be_pool_new(t.ctx, (struct sockaddr *)&sin, sizeof(sin), pool_event, &t);
	if (!t.pool)
		die("be_pool_new: %s", strerror(errno));
	t0 = now_s();
	while (!(up = be_pool_up(t.pool) && t.ups >= cfg.bc_conns) && now_s() < t0 + t.timeout_s)
		event_base_loop(t.base, EVLOOP_ONCE);
	if (!up)
		die("not connected to %s:%s within %d s", argv[optind], argv[optind + 1], t.timeout_s);
	printf("connected in %.1f ms, registration mode %s\n", (now_s() - t0) * 1e3,
	       be_reg_mode_str(cfg.bc_reg_mode));
	t.xid = (uint32_t)random() & 0x7fff0000u;

	/* One NULL first: the grant arrives with the first reply. */
	if (!expect_err) {
		cmd_null(&t, 1);
		print_info(&t);
	}
	if (expect_credits >= 0) {
		struct be_conn_info ci;

		be_pool_conn_info(t.pool, 0, &ci);
		if ((int)ci.ci_credits != expect_credits)
			die("credits %u, expected %d", ci.ci_credits, expect_credits);
		printf("ok: credits %u\n", ci.ci_credits);
	}
	if (expect_pd) {
		struct be_conn_info ci;
		char hex[17] = "";
		unsigned i;

		be_pool_conn_info(t.pool, 0, &ci);
		for (i = 0; i < 8 && i < ci.ci_peer_raw_len; i++)
			sprintf(hex + 2 * i, "%02x", ci.ci_peer_raw[i]);
		if (strcasecmp(hex, expect_pd))
			die("private data %s, expected %s", hex, expect_pd);
		printf("ok: private data %s (%u bytes)\n", hex, ci.ci_peer_raw_len);
	}

	if (!strcmp(cmd, "null")) {
		cmd_null(&t, argc - optind > 3 ? (unsigned)atoi(argv[optind + 3]) : 1);
	} else if (!strcmp(cmd, "concurrent") && argc - optind > 3) {
		cmd_concurrent(&t, (unsigned)atoi(argv[optind + 3]));
	} else if (!strcmp(cmd, "rw") && argc - optind > 5) {
		cmd_rw(&t, argv[optind + 3], argv[optind + 4], strtoul(argv[optind + 5], NULL, 0));
	} else if (!strcmp(cmd, "readdir") && argc - optind > 5) {
		cmd_readdir(&t, argv[optind + 3], argv[optind + 4],
			    (unsigned)atoi(argv[optind + 5]));
	} else if (!strcmp(cmd, "chunky") && argc - optind > 3) {
		cmd_chunky(&t, (unsigned)atoi(argv[optind + 3]), expect_err);
	} else if (!strcmp(cmd, "idle") && argc - optind > 3) {
		cmd_idle(&t, (unsigned)atoi(argv[optind + 3]));
	} else if (!strcmp(cmd, "soak") && argc - optind > 3) {
		cmd_soak(&t, (unsigned)atoi(argv[optind + 3]), expect_reconnect);
	} else {
		usage();
	}
	print_stats(&t);
	if (strcmp(cmd, "soak") && !expect_err && (be_ctx_stats(t.ctx)->bs_disconnects ||
				    be_ctx_stats(t.ctx)->bs_wc_errors))
		die("the connection broke during the test");
	/* No settling time: be_pool_free() lets the Sends already posted (an
	 * RDMA_DONE of the last loop turn) complete before the QP goes. */
	be_pool_free(t.pool);
	be_region_unregister(t.region);
	be_ctx_free(t.ctx);
	event_base_free(t.base);
	free(t.mem);
	printf("PASS\n");
	return 0;
}
