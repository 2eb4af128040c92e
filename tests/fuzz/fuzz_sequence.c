// SPDX-License-Identifier: MIT
/*
 * This file contains the libFuzzer target of whole sequences against one
 * worker with small tables (16 call objects, as many per connection): the input
 * is a program of operations - clients connecting from one of four
 * addresses, calls of every program (NFSv3, NFSv4.0 SETCLIENTID, NLM LOCK
 * and UNLOCK, NSM, MOUNT, RPCSEC_GSS calls whose XIDs collide, NULL),
 * garbage, clients that stop reading, half-close or close, and a server
 * (the fake transport of fuzz_gw.h) that answers each call after a delay
 * the input picks, up to FS_SERVER_DELAY turns, some with 16 KiB of data
 * (what fills the socket of a client that does not read).
 *
 * Beside them an honest client on an address of its own reads everything
 * and always has one GETATTR outstanding.  Checks:
 * - every honest call is answered within FS_HONEST_BOUND turns of being
 *   sent, or once the gateway's own timers have run (FS_HONEST_MS), however
 *   the others behave (no client may take another's share of call
 *   objects, buffers or XID protection);
 * - at the end, with every client closed and the server answering what it
 *   holds, every call ends: all call objects, transport references and
 *   pool buffers come back and no connection is left.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/socket.h>

#include "fuzz_gw.h"
#include "nfs_enc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FS_CLIENTS		8	/* slot 0: the honest client */
#define FS_SERVER_DELAY		8	/* turns a call may wait at the server */
#define FS_HONEST_BOUND		(2 * FS_SERVER_DELAY + 16)	/* turns, then... */
#define FS_HONEST_MS		500	/* ... real time for the gateway's timers */
#define FS_MAX_OPS		512

static const char fs_conf[] =
	"[gateway]\nbuffer_size = 4k\nbuffers = 128\nmax_record = 32k\nmax_calls = 16\n"
	"calls_per_client = 16\nbytes_per_client = 64k\nadmin_listen =\ncontrol_socket =\n"
	"secure_port = no\nmax_conns_per_source = 4\nv40_callbacks = relay\nevict_timeout = 20ms\n"
	"[backend srv]\naddress = 127.0.0.1\n"
	"[route nfs]\nprogram = nfs\ntransport = rdma\n"
	"[route mount]\nprogram = mount\ntransport = rdma\n"
	"[route nlm]\nprogram = nlm\ntransport = rdma\n"
	"[route nsm]\nprogram = nsm\ntransport = rdma\n"
	"[route nfs_acl]\nprogram = nfs_acl\ntransport = rdma\n";

struct fs_client {
	int fc_fd;			/* -1: slot free */
	bool fc_reading, fc_closed, fc_shut;
	size_t fc_have;
	/* the honest client's one outstanding call */
	uint32_t fc_xid;
	unsigned fc_sent_turn;
	bool fc_waiting;
	uint8_t fc_buf[64 * 1024];	/* reply bytes not yet parsed (last: not cleared) */
};

struct fs_run {
	struct fg_gw *r_h;
	unsigned r_turn;
	unsigned r_due[FG_MAX_CALLS];	/* by ca_index: turn the server answers */
	uint8_t r_kind[FG_MAX_CALLS];	/* and with what (enum fg_reply) */
	uint32_t r_xid;
	uint32_t r_rng;			/* the server's choices (xorshift32) */
	const uint8_t *r_in;
	size_t r_len, r_off;
	struct fs_client r_cl[FS_CLIENTS];	/* last: not cleared per run */
};

static uint8_t fs_byte(struct fs_run *r)
{
	return r->r_off < r->r_len ? r->r_in[r->r_off++] : 0;
}

/* The server's own choices come from a generator the input seeds, so
 * that an operation's bytes do not shift with how many calls it made. */
static uint32_t fs_rand(struct fs_run *r)
{
	r->r_rng ^= r->r_rng << 13;
	r->r_rng ^= r->r_rng >> 17;
	r->r_rng ^= r->r_rng << 5;
	return r->r_rng;
}

/* ---- clients ---- */

static void fs_connect(struct fs_run *r, unsigned slot, unsigned addr)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(700 + slot) };
	struct fs_client *c = &r->r_cl[slot];
	int sv[2];

	int buf = 4096;

	FG_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
	/* small socket buffers, as a slow reader far away: one big reply
	 * fills them, and what follows waits in the gateway */
	setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	sa.sin_addr.s_addr = htonl(0x0a000000u | addr);
	memset(c, 0, offsetof(struct fs_client, fc_buf));
	c->fc_fd = sv[0];
	c->fc_reading = true;
	fe_take(r->r_h->fg_fe, sv[1], (struct sockaddr *)&sa, sizeof(sa), 2049, 0);
}

/* Parse the reply records read so far: the honest client's is matched. */
static void fs_parse(struct fs_client *c)
{
	size_t off = 0;

	while (c->fc_have - off >= 4) {
		uint32_t mark = chk_be32(c->fc_buf + off), len = mark & RM_LEN_MASK;

		FG_CHECK(mark & RM_LAST_FRAG);
		FG_CHECK(len >= 12 && len <= sizeof(c->fc_buf) - 4);
		if (c->fc_have - off - 4 < len)
			break;
		FG_CHECK(chk_be32(c->fc_buf + off + 8) == 1);	/* REPLY */
		if (c->fc_waiting && chk_be32(c->fc_buf + off + 4) == c->fc_xid)
			c->fc_waiting = false;
		off += 4 + len;
	}
	memmove(c->fc_buf, c->fc_buf + off, c->fc_have - off);
	c->fc_have -= off;
}

static void fs_read(struct fs_client *c)
{
	while (c->fc_fd >= 0 && c->fc_reading && !c->fc_closed) {
		ssize_t n = read(c->fc_fd, c->fc_buf + c->fc_have, sizeof(c->fc_buf) - c->fc_have);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			c->fc_closed = true;
			return;
		}
		if (n < 0)
			return;
		c->fc_have += (size_t)n;
		fs_parse(c);
		if (c->fc_have == sizeof(c->fc_buf))
			c->fc_have = 0;		/* a hostile reader: forget what it got */
	}
}

static void fs_send(struct fs_client *c, const uint8_t *b, size_t n)
{
	if (c->fc_fd < 0 || c->fc_shut)
		return;
	/* A full socket (the gateway not reading) drops the rest: a client
	 * that stops writing halfway through a record, which is allowed. */
	(void)!send(c->fc_fd, b, n, MSG_NOSIGNAL);
}

/* ---- calls of every program ---- */

enum fs_kind {
	FS_GETATTR, FS_WRITE, FS_READ, FS_SETCLIENTID, FS_NLM_LOCK, FS_NLM_UNLOCK, FS_NSM,
	FS_MOUNT, FS_GSS, FS_NULL, FS__KINDS
};

/* A call of kind k under xid into b (record mark first), sel choosing
 * its variant (lengths, ids, owners); its length. */
static size_t fs_call(uint8_t *b, size_t cap, enum fs_kind k, uint32_t xid, uint8_t sel)
{
	static const uint32_t prog[FS__KINDS][3] = {
		[FS_GETATTR] = { 100003, 3, 1 }, [FS_WRITE] = { 100003, 3, 7 },
		[FS_READ] = { 100003, 3, 6 }, [FS_SETCLIENTID] = { 100003, 4, 1 },
		[FS_NLM_LOCK] = { 100021, 4, 2 }, [FS_NLM_UNLOCK] = { 100021, 4, 4 },
		[FS_NSM] = { 100024, 1, 6 }, [FS_MOUNT] = { 100005, 3, 1 },
		[FS_GSS] = { 100003, 3, 1 }, [FS_NULL] = { 100003, 3, 0 },
	};
	struct xdr_enc xe;
	bool ok;

	xdr_enc_init(&xe, b + 4, cap - 4);
	if (k == FS_GSS) {
		/* RPCSEC_GSS (RFC 2203 5): version 1, DATA, a sequence number,
		 * service none, a context handle; the verifier a checksum */
		ok = xdr_put_u32(&xe, xid) && xdr_put_u32(&xe, 0) && xdr_put_u32(&xe, 2) &&
		     nfs_enc_fmt(&xe, "www", prog[k][0], prog[k][1], prog[k][2]) &&
		     nfs_enc_fmt(&xe, "wwwwwwww", 6u, 24u, 1u, 0u, (unsigned)sel, 1u, 4u,
				 0x11223344u) &&
		     nfs_enc_fmt(&xe, "wo", 6u, 16u) && nfs_enc_fmt(&xe, "o", 32u);
	} else {
		ok = nfs_enc_call_hdr(&xe, xid, prog[k][0], prog[k][1], prog[k][2]);
		switch (k) {
		case FS_WRITE:
			ok = ok && nfs_enc_fmt(&xe, "o hww o", 32, 0ull, 512u * (sel & 15), 2u,
					       512u * (sel & 15));
			break;
		case FS_READ:
			ok = ok && nfs_enc_fmt(&xe, "o hw", 32, 0ull, 8192u);
			break;
		case FS_GETATTR:
			ok = ok && nfs_enc_fmt(&xe, "o", 32);
			break;
		case FS_SETCLIENTID:
			ok = ok && nfs_enc_compound_args(&xe, 0, 1) &&
			     nfs_enc_fmt(&xe, "w v o w", 35u, (unsigned)sel % 64 + 1, 0x40000000u) &&
			     xdr_put_opaque(&xe, "tcp", 3) &&
			     xdr_put_opaque(&xe, "10.0.0.1.8.1", 12) && nfs_enc_fmt(&xe, "w", 1);
			break;
		case FS_NLM_LOCK:
		case FS_NLM_UNLOCK:
			/* cookie, [block,] exclusive, alock: caller, fh, oh, svid, off, len */
			ok = ok && nfs_enc_fmt(&xe, "o", 4) &&
			     (k == FS_NLM_UNLOCK || nfs_enc_fmt(&xe, "ww", 0u, 1u)) &&
			     nfs_enc_fmt(&xe, "o o o w hh", 8u, 32u, 8u, (unsigned)sel << 16 | sel,
					 0ull, 1ull) &&
			     (k == FS_NLM_UNLOCK || nfs_enc_fmt(&xe, "ww", 0u, 0u));
			break;
		case FS_NSM:
			ok = ok && nfs_enc_fmt(&xe, "o w", 8u, (unsigned)sel);
			break;
		case FS_MOUNT:
			ok = ok && nfs_enc_fmt(&xe, "o", 8u);
			break;
		default:
			break;
		}
	}
	FG_CHECK(ok);
	rm_encode_hdr(b, (uint32_t)xe.xe_len, true);
	return 4 + xe.xe_len;
}

/* ---- the server ---- */

/* Answer every call whose turn has come (all of them when flush). */
static void fs_server(struct fs_run *r, bool flush)
{
	struct fg_fake *f = &r->r_h->fg_fake;

	for (unsigned i = 0; i < f->ff_ncalls;) {
		struct gw_call *c = f->ff_calls[i];

		unsigned idx = c->ca_index;

		if (flush || r->r_due[idx] <= r->r_turn) {
			fg_answer(f, i, (enum fg_reply)(r->r_kind[idx] % FG_REPLY__COUNT));
			r->r_due[idx] = 0;	/* the object is free for another call */
		} else {
			i++;
		}
	}
}

static uint32_t fs_honest_xids;

/*
 * The honest call is late in turns: what remains are the gateway's own
 * timers (a reader starved of call objects looks again after a few ms; a
 * client sitting on unread replies while call objects are short is closed
 * after evict_timeout, 20 ms here).  Time passes for real, the server
 * still answering, up to FS_HONEST_MS: the honest call must be answered.
 */
static void fs_honest_wait(struct fs_run *r)
{
	struct fs_client *hc = &r->r_cl[0];
	uint64_t end = gw_now_ms() + FS_HONEST_MS;

	while (hc->fc_waiting && gw_now_ms() < end) {
		usleep(1000);
		r->r_turn++;
		event_base_loop(r->r_h->fg_base, EVLOOP_NONBLOCK);
		fs_server(r, false);
		event_base_loop(r->r_h->fg_base, EVLOOP_NONBLOCK);
		for (unsigned i = 0; i < FS_CLIENTS; i++)
			fs_read(&r->r_cl[i]);
	}
	FG_CHECK(!hc->fc_waiting);
}

/* One turn: the loop, due answers, the clients' reads, the honest client. */
static void fs_tick(struct fs_run *r)
{
	struct fg_fake *f = &r->r_h->fg_fake;
	struct fs_client *hc = &r->r_cl[0];
	uint8_t b[256];

	r->r_turn++;
	event_base_loop(r->r_h->fg_base, EVLOOP_NONBLOCK);
	/* calls submitted since the last turn get their answer turn */
	for (unsigned i = 0; i < f->ff_ncalls; i++) {
		struct gw_call *c = f->ff_calls[i];

		if (!r->r_due[c->ca_index]) {
			r->r_due[c->ca_index] = r->r_turn + fs_rand(r) % (FS_SERVER_DELAY + 1);
			static const uint8_t kinds[8] = {
				FG_REPLY_SUCCESS, FG_REPLY_SUCCESS, FG_REPLY_SUCCESS, FG_REPLY_SUCCESS,
				FG_REPLY_BIG, FG_REPLY_BIG, FG_REPLY_PROG_UNAVAIL, FG_REPLY_DENIED,
			};

			/* a READ's reply carries its data, as a real server's */
			bool rd = c->ca_hdr.rc_prog == 100003 && c->ca_hdr.rc_proc == 6;

			r->r_kind[c->ca_index] = rd ? FG_REPLY_BIG : kinds[fs_rand(r) % 8];
		}
	}
	fs_server(r, false);
	event_base_loop(r->r_h->fg_base, EVLOOP_NONBLOCK);
	for (unsigned i = 0; i < FS_CLIENTS; i++)
		fs_read(&r->r_cl[i]);
	FG_CHECK(!hc->fc_closed);
	if (hc->fc_waiting) {
		if (r->r_turn - hc->fc_sent_turn > FS_HONEST_BOUND)
			fs_honest_wait(r);
		return;
	}
	/* new XIDs in every run: the XID map keys on the endpoint, and a
	 * client's XID seen again within the window is a retransmission */
	hc->fc_xid = 0x4f000000u + ++fs_honest_xids;
	hc->fc_sent_turn = r->r_turn;
	hc->fc_waiting = true;
	fs_send(hc, b, fs_call(b, sizeof(b), FS_GETATTR, hc->fc_xid, 0));
}

/* ---- the program ---- */

static void fs_op(struct fs_run *r)
{
	uint8_t op = fs_byte(r), slot = 1 + fs_byte(r) % (FS_CLIENTS - 1), b[12 * 1024];
	struct fs_client *c = &r->r_cl[slot];
	size_t n;

	if (c->fc_fd < 0 && op % 8 != 0)
		return;
	switch (op % 8) {
	case 0:		/* connect, from one of four addresses */
		if (c->fc_fd < 0)
			fs_connect(r, slot, 1 + fs_byte(r) % 4);
		break;
	case 1:		/* a burst of calls of one kind, XIDs near each other */
	case 2: {
		enum fs_kind k = (enum fs_kind)(fs_byte(r) % FS__KINDS);
		unsigned nb = 1 + fs_byte(r) % 8;
		uint8_t sel = fs_byte(r);
		uint32_t xid = k == FS_GSS ? 0x6000u + sel % 8 : (r->r_xid += 8);

		for (unsigned i = 0; i < nb; i++) {
			n = fs_call(b, sizeof(b), k, xid + (k == FS_GSS ? 0 : i), sel);
			fs_send(c, b, n);
		}
		break;
	}
	case 3:		/* garbage: up to 64 bytes of the input, sometimes record-marked */
		n = fs_byte(r) % 64;
		for (size_t i = 0; i < n; i++)
			b[4 + i] = fs_byte(r);
		rm_encode_hdr(b, (uint32_t)n, true);
		if (n & 1)
			fs_send(c, b, 4 + n);
		else
			fs_send(c, b + 4, n);
		break;
	case 4:		/* stop or start reading */
		c->fc_reading = !c->fc_reading;
		break;
	case 5:		/* half-close */
		if (!c->fc_shut)
			shutdown(c->fc_fd, SHUT_WR);
		c->fc_shut = true;
		break;
	case 6:		/* close */
		close(c->fc_fd);
		c->fc_fd = -1;
		break;
	default:	/* time passes */
		for (unsigned i = 0, t = 1 + fs_byte(r) % 4; i < t; i++)
			fs_tick(r);
		break;
	}
}

static struct fg_gw *fs_gateway(void)
{
	static struct fg_gw h;
	static bool started;

	if (!started) {
		fg_start(&h, fs_conf);
		started = true;
	}
	return &h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fs_run r;
	struct fg_gw *h = fs_gateway();
	uint32_t xid = r.r_xid;		/* XIDs new across runs (fs_tick) */

	memset(&r, 0, offsetof(struct fs_run, r_cl));
	r.r_xid = xid;
	r.r_h = h;
	r.r_in = data;
	r.r_len = size;
	for (int i = 0; i < 4; i++)
		r.r_rng = r.r_rng << 8 | fs_byte(&r);
	r.r_rng |= 1;			/* xorshift's state is never 0 */
	for (unsigned i = 0; i < FS_CLIENTS; i++)
		r.r_cl[i].fc_fd = -1;
	fs_connect(&r, 0, 9);		/* the honest client, an address of its own */
	for (unsigned n = 0; n < FS_MAX_OPS && r.r_off < r.r_len; n++) {
		fs_op(&r);
		fs_tick(&r);
	}
	/* The honest client's last call too is answered in its bound. */
	for (unsigned i = 0; i < FS_HONEST_BOUND + 1 && r.r_cl[0].fc_waiting; i++) {
		r.r_off = r.r_len;
		fs_tick(&r);
	}
	FG_CHECK(!r.r_cl[0].fc_waiting || r.r_turn - r.r_cl[0].fc_sent_turn <= FS_HONEST_BOUND);
	/* The end: every client gone, the server answers all it holds. */
	for (unsigned i = 0; i < FS_CLIENTS; i++)
		if (r.r_cl[i].fc_fd >= 0)
			close(r.r_cl[i].fc_fd);
	for (unsigned i = 0; i < 3000 && (fe_nconns(h->fg_fe) || h->fg_fake.ff_owned); i++) {
		event_base_loop(h->fg_base, EVLOOP_NONBLOCK);
		fs_server(&r, true);
		if (i >= 1000)
			usleep(1000);
	}
	FG_CHECK(fe_nconns(h->fg_fe) == 0);
	FG_CHECK(h->fg_fake.ff_ncalls == 0 && h->fg_fake.ff_owned == 0);
	FG_CHECK(gw_ctx_calls_avail(h->fg_gw) == FG_MAX_CALLS);
	FG_CHECK(gw_pool_avail(h->fg_pool) == gw_pool_count(h->fg_pool));
	return 0;
}
