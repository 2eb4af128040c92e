// SPDX-License-Identifier: MIT
/*
 * This file contains rpcrdma-peer, a deliberately small RPC-over-RDMA
 * version 1 responder for the VM tests: it does what the kernel nfsd never
 * does, so that backend-rdma's handling of it can be checked.
 *
 *   rpcrdma-peer ADDR PORT MODE [CREDITS]
 *
 * Every call gets an RPC reply "accepted, SUCCESS, no results" (24 bytes).
 * When a call offers write chunks, the peer RDMA Writes 100 bytes of 0xab
 * into the first segment of the first chunk and returns that length.
 *
 *   normal        as above; CREDITS granted (default 32; 0 allowed)
 *   stale-rkey    on the call after the first one with a write chunk, RDMA
 *                 Write to that (now finished) call's write segment.  Prints "stale rkey refused: ..."
 *                 and exits 0 when the device refuses, "stale rkey accepted"
 *                 and exits 1 when the write lands.
 *   stale-control as stale-rkey but exits 0 when the write lands (the
 *                 requester in persistent mode: the test has teeth)
 *   remote-inv    replies with Send With Invalidate of the call's rkey
 *   overrun       returns a write segment length of offered + 4
 *   short         a call with write chunks gets an NFSv3 READ3res whose data
 *                 is all of write chunk 0, every segment reported full, but
 *                 only its first 100 bytes written: what the gateway sends on
 *                 past them is whatever its buffers held
 *   err-chunk     answers RDMA_ERROR ERR_CHUNK
 *   err-vers      answers RDMA_ERROR ERR_VERS (1..1) to everything
 *   unknown-xid   sends a reply with a made-up XID before each real reply
 *   read-reply    answers RDMA_NOMSG with a position-zero Read list holding the
 *                 RPC reply padded to 8024 bytes (RFC 5666 long reply); exits
 *                 0 only if an RDMA_DONE came for each
 *   read-reply-msg  RDMA_MSG: the 24-byte RPC reply inline, then a 5000-byte
 *                 item by read chunk at position 24
 *   msgp          answers with RDMA_MSGP (draft-08 3.9), align 16 thresh 4096
 *   replay        sends each reply twice (same XID, the second after the first)
 *   late          answers each call PEER_LATE_MS (default 3000) ms after it came
 *   silent        never answers a call.  The first one offering a chunk is
 *                 probed PEER_PROBE_MS (default 3000) ms after it came, beyond
 *                 the requester's call timeout: an RDMA Write of 4 bytes into
 *                 its first write segment (or an RDMA Read of its first read
 *                 segment).  Prints "probe refused: ..." and exits 0 when the
 *                 device refuses, "probe accepted" and exits 1 when it works
 *                 (the call's memory still exposed)
 *
 * In every mode, a CONF_RDMA call (CCP, draft-08 6.2: program 100400) is
 * answered as PEER_CCP says, and its request printed ("peer: CONF_RDMA ..."):
 *   unset         like any call: SUCCESS with no results (garbage for CCP)
 *   SEND,ALIGN,DEPTH  SUCCESS with that config_rdma_reply
 *   unavail       PROG_UNAVAIL (what the Linux nfsd answers)
 *   silent        no answer at all
 *
 * Several connections: up to MAXCONN at once (a gateway with workers = N
 * opens one per worker), each served by a thread of its own with its own
 * QP, CQ, buffers, counters and probe, the mode applied per connection
 * ("call 1", "probed", "the first one" above: of that connection).  Every
 * line a connection prints ends in "(conn N)".  A connection ends with a
 * verdict (the stale write or the probe: the peer then disconnects it, as
 * its exit did with one connection; a failed RDMA Write: 1), or when the
 * requester leaves: 0, in read-reply modes 0 or 1 as above once it had a
 * long reply; in stale and silent modes, or read-reply ones without a long
 * reply, that end decides nothing.  The peer exits when no connection is
 * left open, with the worst status its connections decided, or 1 in the
 * stale, silent and read-reply modes when none decided (one connection
 * behaves as before).  Any error exits at once with 2.
 *
 * A test tool, not the daemon: completions waited for on a completion
 * channel, exits after its last connection ends or 60 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/eventfd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "chunking.h"

#define NRECV	64
#define BUFSZ	4096
#define MAXCONN	8		/* connections served at once */
#define UNDECIDED (-1)		/* a connection's end that decides nothing */

enum mode { M_NORMAL, M_STALE, M_STALE_CONTROL, M_REMOTE_INV, M_OVERRUN, M_ERR_CHUNK,
	    M_ERR_VERS, M_UNKNOWN_XID, M_READ_REPLY, M_READ_REPLY_MSG, M_MSGP, M_REPLAY, M_LATE,
	    M_SILENT, M_SHORT };

/* Read-only once main() has filled it: the command line and environment. */
struct peer_cfg {
	enum mode pf_mode;
	uint32_t pf_credits;
	unsigned pf_probe_ms, pf_late_ms;	/* PEER_PROBE_MS, PEER_LATE_MS */
	const char *pf_ccp;			/* PEER_CCP, or NULL */
};

/* What the connections share: how many are open and the worst verdict. */
struct peer {
	const struct peer_cfg *pp_cfg;
	pthread_mutex_t pp_lock;
	unsigned pp_open, pp_conns;	/* open now; accepted in all */
	unsigned pp_decided;		/* connections that decided a status */
	int pp_worst;			/* the worst of those, or UNDECIDED */
	int pp_wake;			/* eventfd: a connection ended */
};

/* silent: the segment of the first unanswered call offering a chunk. */
struct probe {
	bool sp_armed;
	enum ibv_wr_opcode sp_op;
	uint32_t sp_rkey, sp_len;
	uint64_t sp_addr, sp_at_ms;
};

/* One accepted connection, served by its own thread. */
struct conn {
	struct peer *pc_peer;
	const struct peer_cfg *pc_cfg;
	unsigned pc_no;				/* 1, 2, ... in accept order */
	struct rdma_event_channel *pc_ch;	/* this connection's CM events */
	struct rdma_cm_id *pc_id;
	struct ibv_comp_channel *pc_cc;
	struct ibv_pd *pc_pd;
	struct ibv_cq *pc_cq;
	struct ibv_qp *pc_qp;
	struct ibv_mr *pc_mr;
	uint8_t *pc_mem;	/* NRECV receive buffers, then send buffers, then a write source */
	struct rpcrdma_hdr pc_rh, pc_out;	/* the call; the reply being built */
	struct ibv_wc pc_stash[NRECV];	/* receive completions seen while waiting for a send */
	unsigned pc_nstash;
	unsigned pc_calls, pc_dones, pc_long_replies;
	uint32_t pc_old_rkey;		/* stale modes: the last call's write segment */
	uint64_t pc_old_addr;
	struct probe pc_probe;
};

static uint8_t *rbuf(const struct conn *pc, unsigned i) { return pc->pc_mem + (size_t)i * BUFSZ; }
static uint8_t *sbuf(const struct conn *pc) { return pc->pc_mem + (size_t)NRECV * BUFSZ; }
static uint8_t *wsrc(const struct conn *pc) { return pc->pc_mem + (size_t)(NRECV + 1) * BUFSZ; }
/* 2 buffers */
static uint8_t *lrbuf(const struct conn *pc) { return pc->pc_mem + (size_t)(NRECV + 2) * BUFSZ; }

/* An error: the peer's status is 2 whatever the other connections do. */
__attribute__((noreturn)) static void die(const char *what)
{
	perror(what);
	fflush(stdout);
	_exit(2);
}

/* One line of the connection: "peer: ... (conn N)". */
__attribute__((format(printf, 2, 3)))
static void say(const struct conn *pc, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printf("peer: %s (conn %u)\n", line, pc->pc_no);
}

static void post_recv(struct conn *pc, unsigned i)
{
	struct ibv_sge sge = { (uintptr_t)rbuf(pc, i), BUFSZ, pc->pc_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(pc->pc_qp, &wr, &bad))
		die("ibv_post_recv");
}

/* One completion from the CQ, sleeping up to ms for it (on the completion
 * channel, and on the CM channel too when watch_cm); 0 when none came. */
static int cq_wait(struct conn *pc, struct ibv_wc *wc, int ms, bool watch_cm)
{
	struct pollfd pfd[2] = { { .fd = pc->pc_cc->fd, .events = POLLIN },
				 { .fd = pc->pc_ch->fd, .events = POLLIN } };
	struct ibv_cq *ecq;
	void *ectx;
	int n = ibv_poll_cq(pc->pc_cq, 1, wc);

	if (n != 0)
		return n;
	if (ibv_req_notify_cq(pc->pc_cq, 0))
		die("ibv_req_notify_cq");
	n = ibv_poll_cq(pc->pc_cq, 1, wc);	/* one that came before the arming */
	if (n != 0)
		return n;
	if (poll(pfd, watch_cm ? 2 : 1, ms) < 0 && errno != EINTR)
		die("poll");
	while (ibv_get_cq_event(pc->pc_cc, &ecq, &ectx) == 0)	/* the fd is non-blocking */
		ibv_ack_cq_events(ecq, 1);
	return ibv_poll_cq(pc->pc_cq, 1, wc);
}

/* Wait for one send-side completion; returns its status. */
static enum ibv_wc_status wait_send(struct conn *pc)
{
	struct ibv_wc wc;
	int n;

	for (;;) {
		n = cq_wait(pc, &wc, 1000, false);
		if (n < 0)
			die("ibv_poll_cq");
		if (n == 0)
			continue;
		if (wc.wr_id >= 1000)
			return wc.status;
		if (pc->pc_nstash < NRECV)
			pc->pc_stash[pc->pc_nstash++] = wc;
	}
}

/* The next completion: a stashed one, else from the CQ within ms. */
static int next_wc(struct conn *pc, struct ibv_wc *wc, int ms)
{
	if (pc->pc_nstash > 0) {
		*wc = pc->pc_stash[0];
		memmove(pc->pc_stash, pc->pc_stash + 1, --pc->pc_nstash * sizeof(pc->pc_stash[0]));
		return 1;
	}
	return cq_wait(pc, wc, ms, true);
}

/* Count RDMA_DONE messages still queued on the CQ (drained at disconnect). */
static void count_late_dones(struct conn *pc)
{
	struct rpcrdma_hdr late;
	enum rpcrdma_hdr_err herr;
	struct ibv_wc wc;

	while (next_wc(pc, &wc, 0) > 0) {
		if (wc.wr_id >= 1000 || wc.status != IBV_WC_SUCCESS)
			continue;
		if (rpcrdma_hdr_decode(rbuf(pc, (unsigned)wc.wr_id), wc.byte_len, NULL, &late,
				       &herr) &&
		    late.rh_proc == RPCRDMA_DONE) {
			pc->pc_dones++;
			say(pc, "RDMA_DONE xid %08x (drained at disconnect)", late.rh_xid);
		}
	}
}

static void send_msg(struct conn *pc, size_t len, bool with_inv, uint32_t inv_rkey)
{
	struct ibv_sge sge = { (uintptr_t)sbuf(pc), (uint32_t)len, pc->pc_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1000, .sg_list = &sge, .num_sge = 1,
				  .opcode = with_inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	enum ibv_wc_status st;

	if (with_inv)
		wr.invalidate_rkey = inv_rkey;
	if (ibv_post_send(pc->pc_qp, &wr, &bad))
		die("ibv_post_send");
	st = wait_send(pc);
	if (st != IBV_WC_SUCCESS) {
		say(pc, "send failed: %s", ibv_wc_status_str(st));
		fflush(stdout);
		_exit(2);
	}
}

static enum ibv_wc_status rdma_op(struct conn *pc, enum ibv_wr_opcode op, uint32_t rkey,
				  uint64_t addr, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(op == IBV_WR_RDMA_READ ? lrbuf(pc) : wsrc(pc)), len,
			       pc->pc_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1001, .sg_list = &sge, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.rkey = rkey;
	wr.wr.rdma.remote_addr = addr;
	if (ibv_post_send(pc->pc_qp, &wr, &bad))
		die("ibv_post_send write");
	return wait_send(pc);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static unsigned env_ms(const char *name, unsigned dflt)
{
	const char *v = getenv(name);

	return v && *v ? (unsigned)atoi(v) : dflt;
}

static void probe_arm(struct conn *pc)
{
	const struct rpcrdma_hdr *rh = &pc->pc_rh;
	struct probe *p = &pc->pc_probe;
	const struct rpcrdma_segment *s = NULL;
	unsigned after_ms = pc->pc_cfg->pf_probe_ms;

	if (p->sp_armed)
		return;
	if (rh->rh_nwrites > 0 && rh->rh_writes[0].ck_nsegs > 0) {
		s = &rh->rh_segs[rh->rh_writes[0].ck_first];
		p->sp_op = IBV_WR_RDMA_WRITE;
	} else if (rh->rh_nreads > 0) {
		s = &rh->rh_reads[0].rd_seg;
		p->sp_op = IBV_WR_RDMA_READ;
	}
	if (!s || s->rs_length < 4)
		return;
	p->sp_armed = true;
	p->sp_rkey = s->rs_handle;
	p->sp_addr = s->rs_offset;
	p->sp_len = 4;
	p->sp_at_ms = now_ms() + after_ms;
	say(pc, "xid %08x left unanswered; its %s segment (rkey %08x) probed in %u ms", rh->rh_xid,
	    p->sp_op == IBV_WR_RDMA_WRITE ? "write" : "read", s->rs_handle, after_ms);
}

/* How long to wait for a completion: until the probe is due, at most 1 s. */
static int probe_wait_ms(const struct conn *pc)
{
	uint64_t now = now_ms();

	if (!pc->pc_probe.sp_armed)
		return 1000;
	if (pc->pc_probe.sp_at_ms <= now)
		return 0;
	return pc->pc_probe.sp_at_ms - now < 1000 ? (int)(pc->pc_probe.sp_at_ms - now) : 1000;
}

/* The probe, when due: the connection's verdict, or -1 (not yet). */
static int probe_run(struct conn *pc)
{
	const struct probe *p = &pc->pc_probe;
	const char *what;
	enum ibv_wc_status st;

	if (!p->sp_armed || now_ms() < p->sp_at_ms)
		return -1;
	what = p->sp_op == IBV_WR_RDMA_WRITE ? "RDMA Write to" : "RDMA Read of";
	st = rdma_op(pc, p->sp_op, p->sp_rkey, p->sp_addr, p->sp_len);
	if (st == IBV_WC_SUCCESS) {
		say(pc, "probe accepted: %s rkey %08x of an unanswered call worked", what,
		    p->sp_rkey);
		return 1;
	}
	say(pc, "probe refused: %s rkey %08x: %s", what, p->sp_rkey, ibv_wc_status_str(st));
	return 0;
}

/* An RPC reply header up to the accept status: xid, REPLY, MSG_ACCEPTED,
 * an AUTH_NONE verifier. */
static void put_accepted(struct xdr_enc *xe, uint32_t xid)
{
	xdr_put_u32(xe, xid);
	xdr_put_u32(xe, 1);	/* REPLY */
	xdr_put_u32(xe, 0);	/* MSG_ACCEPTED */
	xdr_put_u32(xe, 0);	/* verf AUTH_NONE */
	xdr_put_u32(xe, 0);
}

/* Transport header of the reply, then the 24-byte RPC reply. */
static size_t build_reply(struct conn *pc, uint32_t xid, uint32_t wlen, bool overrun)
{
	const struct rpcrdma_hdr *rh = &pc->pc_rh;
	struct rpcrdma_hdr *out = &pc->pc_out;
	struct xdr_enc xe;
	unsigned c, i;

	memset(out, 0, offsetof(struct rpcrdma_hdr, rh_reads));
	out->rh_xid = xid;
	out->rh_vers = 1;
	out->rh_credit = pc->pc_cfg->pf_credits;
	out->rh_proc = pc->pc_cfg->pf_mode == M_MSGP ? RPCRDMA_MSGP : RPCRDMA_MSG;
	out->rh_align = 16;
	out->rh_thresh = 4096;
	out->rh_nwrites = rh->rh_nwrites;
	out->rh_has_reply = false;
	out->rh_nsegs = 0;
	for (c = 0; c < rh->rh_nwrites; c++) {
		out->rh_writes[c] = rh->rh_writes[c];
		for (i = 0; i < rh->rh_writes[c].ck_nsegs; i++) {
			unsigned k = rh->rh_writes[c].ck_first + i;

			out->rh_segs[k] = rh->rh_segs[k];
			out->rh_segs[k].rs_length = 0;
			if (c == 0 && i == 0)
				out->rh_segs[k].rs_length =
					overrun ? rh->rh_segs[k].rs_length + 4 : wlen;
		}
	}
	out->rh_nsegs = rh->rh_nsegs;
	xdr_enc_init(&xe, sbuf(pc), BUFSZ);
	rpcrdma_hdr_encode(&xe, out);
	put_accepted(&xe, xid);
	xdr_put_u32(&xe, 0);	/* SUCCESS */
	return xe.xe_len;
}

/* M_SHORT: write chunk 0 reported full, and a READ3res (NFS3_OK, no
 * attributes, count, eof false, data length) claiming all of it (RFC 8267
 * section 6.4.1: the data item is the chunk, its length word stays inline). */
static size_t build_short_read(struct conn *pc, uint32_t xid)
{
	const struct rpcrdma_hdr *rh = &pc->pc_rh;
	const struct rpcrdma_chunk *ck = &rh->rh_writes[0];
	struct xdr_enc xe;
	uint32_t t = 0;

	build_reply(pc, xid, 0, false);	/* the transport header, in pc_out */
	for (unsigned i = 0; i < ck->ck_nsegs; i++) {
		pc->pc_out.rh_segs[ck->ck_first + i].rs_length =
			rh->rh_segs[ck->ck_first + i].rs_length;
		t += rh->rh_segs[ck->ck_first + i].rs_length;
	}
	xdr_enc_init(&xe, sbuf(pc), BUFSZ);
	rpcrdma_hdr_encode(&xe, &pc->pc_out);
	put_accepted(&xe, xid);
	xdr_put_u32(&xe, 0);	/* SUCCESS */
	xdr_put_u32(&xe, 0);	/* NFS3_OK */
	xdr_put_u32(&xe, 0);	/* post_op_attr: none */
	xdr_put_u32(&xe, t);	/* count */
	xdr_put_u32(&xe, 0);	/* eof */
	xdr_put_u32(&xe, t);	/* data: length here, bytes in the chunk */
	say(pc, "xid %08x: READ3res of %u bytes reported, 100 written", xid, t);
	return xe.xe_len;
}

/* A transport header for xid with no chunks, in pc_out. */
static void build_plain(struct conn *pc, uint32_t xid, uint32_t credit, uint32_t proc)
{
	struct rpcrdma_hdr *out = &pc->pc_out;

	memset(out, 0, offsetof(struct rpcrdma_hdr, rh_reads));
	out->rh_xid = xid;
	out->rh_vers = 1;
	out->rh_credit = credit;
	out->rh_proc = proc;
	if (proc == RPCRDMA_ERROR)
		out->rh_vers_low = out->rh_vers_high = 1;
	out->rh_nwrites = 0;
	out->rh_has_reply = false;
	out->rh_nsegs = 0;
}

/* RDMA_MSG reply to xid: accepted with stat, then the results given. */
static size_t build_rpc(struct conn *pc, uint32_t xid, uint32_t stat, const uint32_t *res,
			unsigned nres)
{
	struct xdr_enc xe;

	build_plain(pc, xid, pc->pc_cfg->pf_credits, RPCRDMA_MSG);
	xdr_enc_init(&xe, sbuf(pc), BUFSZ);
	rpcrdma_hdr_encode(&xe, &pc->pc_out);
	put_accepted(&xe, xid);
	xdr_put_u32(&xe, stat);
	for (unsigned i = 0; i < nres; i++)
		xdr_put_u32(&xe, res[i]);
	return xe.xe_len;
}

static size_t build_error(struct conn *pc, uint32_t xid, uint32_t code)
{
	struct xdr_enc xe;

	build_plain(pc, xid, 1, RPCRDMA_ERROR);
	pc->pc_out.rh_err = code;
	xdr_enc_init(&xe, sbuf(pc), BUFSZ);
	rpcrdma_hdr_encode(&xe, &pc->pc_out);
	return xe.xe_len;
}

/* A CONF_RDMA call?  Print its request; true when answered (or dropped). */
static bool ccp_call(struct conn *pc, const uint8_t *buf, uint32_t len)
{
	const struct rpcrdma_hdr *rh = &pc->pc_rh;
	const char *cfg = pc->pc_cfg->pf_ccp;
	struct rpc_call_hdr ch;
	struct ccp_req req;
	struct xdr_cur xc;
	struct iovec one;
	uint32_t res[3];

	if (rh->rh_proc != RPCRDMA_MSG || len <= rh->rh_body_off)
		return false;
	xdr_cur_init_buf(&xc, &one, buf + rh->rh_body_off, len - rh->rh_body_off);
	if (!rpc_call_decode(&xc, &ch) || ch.rc_prog != CCP_PROG || !xdr_seek(&xc, ch.rc_args_pos))
		return false;
	if (!ccp_req_decode(&xc, &req)) {
		say(pc, "CONF_RDMA with bad arguments");
		return false;
	}
	say(pc, "CONF_RDMA vers %u proc %u: maxcall_sendsize %u maxreply_sendsize %u "
	    "maxrdmaread %u", ch.rc_vers, ch.rc_proc, req.cq_maxcall_sendsize,
	    req.cq_maxreply_sendsize, req.cq_maxrdmaread);
	if (!cfg)
		return false;
	if (!strcmp(cfg, "silent"))
		return true;
	if (!strcmp(cfg, "unavail")) {
		send_msg(pc, build_rpc(pc, rh->rh_xid, 1 /* PROG_UNAVAIL */, NULL, 0), false, 0);
		return true;
	}
	if (sscanf(cfg, "%u,%u,%u", &res[0], &res[1], &res[2]) != 3)
		return false;
	send_msg(pc, build_rpc(pc, rh->rh_xid, 0, res, 3), false, 0);
	return true;
}

/* read-reply modes: the RPC reply (and filler) in lrbuf, offered by Read
 * list (NOMSG at position 0, or MSG with the reply inline and a 5000-byte
 * item at position 24); returns the length of the message in sbuf. */
static size_t build_long_reply(struct conn *pc)
{
	const struct rpcrdma_hdr *rh = &pc->pc_rh;
	struct rpcrdma_hdr *out = &pc->pc_out;
	bool nomsg = pc->pc_cfg->pf_mode == M_READ_REPLY;
	uint8_t rpc[24] = { 0 };	/* xid, REPLY, ACCEPTED, AUTH_NONE, SUCCESS */
	struct xdr_enc xe;

	memset(lrbuf(pc), 0x5c, 2 * BUFSZ);
	xdr_enc_init(&xe, sbuf(pc), BUFSZ);
	build_plain(pc, rh->rh_xid, pc->pc_cfg->pf_credits,
		    nomsg ? RPCRDMA_NOMSG : RPCRDMA_MSG);
	out->rh_nreads = 1;
	out->rh_reads[0].rd_position = nomsg ? 0 : 24;
	out->rh_reads[0].rd_seg.rs_handle = pc->pc_mr->rkey;
	out->rh_reads[0].rd_seg.rs_length = nomsg ? 8024 : 5000;
	out->rh_reads[0].rd_seg.rs_offset = (uintptr_t)lrbuf(pc);
	rpcrdma_hdr_encode(&xe, out);
	chk_put_be32(rpc, rh->rh_xid);
	chk_put_be32(rpc + 4, 1);
	if (nomsg)
		memcpy(lrbuf(pc), rpc, 24);
	else
		xdr_put_fixed(&xe, rpc, 24);
	return xe.xe_len;
}

/* stale modes: RDMA Write to the last call's write segment; the verdict. */
static int stale_write(struct conn *pc)
{
	bool control = pc->pc_cfg->pf_mode == M_STALE_CONTROL;
	enum ibv_wc_status st = rdma_op(pc, IBV_WR_RDMA_WRITE, pc->pc_old_rkey, pc->pc_old_addr, 4);

	if (st == IBV_WC_SUCCESS) {
		say(pc, "stale rkey accepted: RDMA Write to rkey %08x landed", pc->pc_old_rkey);
		return control ? 0 : 1;
	}
	say(pc, "stale rkey refused: RDMA Write to rkey %08x: %s", pc->pc_old_rkey,
	    ibv_wc_status_str(st));
	return control ? 1 : 0;
}

/* Answers the call in pc_rh as the mode says: -1, or the connection's verdict. */
static int answer(struct conn *pc)
{
	const struct peer_cfg *cf = pc->pc_cfg;
	struct rpcrdma_hdr *rh = &pc->pc_rh;
	size_t len;

	if (cf->pf_mode == M_SILENT) {
		probe_arm(pc);
		return -1;
	}
	if (cf->pf_mode == M_LATE)
		usleep(cf->pf_late_ms * 1000u);
	if ((cf->pf_mode == M_STALE || cf->pf_mode == M_STALE_CONTROL) && pc->pc_old_rkey)
		return stale_write(pc);
	if (cf->pf_mode == M_ERR_VERS || cf->pf_mode == M_ERR_CHUNK) {
		len = build_error(pc, rh->rh_xid, cf->pf_mode == M_ERR_VERS ? RPCRDMA_ERR_VERS
									     : RPCRDMA_ERR_CHUNK);
		send_msg(pc, len, false, 0);
		return -1;
	}
	if ((cf->pf_mode == M_READ_REPLY || cf->pf_mode == M_READ_REPLY_MSG) && pc->pc_calls > 1) {
		send_msg(pc, build_long_reply(pc), false, 0);
		pc->pc_long_replies++;
		return -1;
	}
	if (cf->pf_mode == M_UNKNOWN_XID) {
		/* A reply for no call first: no write list. */
		struct rpcrdma_hdr save = *rh;

		rh->rh_nwrites = 0;
		rh->rh_nsegs = 0;
		len = build_reply(pc, save.rh_xid ^ 0x5a5a5a5a, 0, false);
		*rh = save;
		send_msg(pc, len, false, 0);
	}
	if (rh->rh_nwrites > 0) {
		const struct rpcrdma_segment *s = &rh->rh_segs[rh->rh_writes[0].ck_first];
		uint32_t wl = s->rs_length < 100 ? s->rs_length : 100;
		enum ibv_wc_status st = rdma_op(pc, IBV_WR_RDMA_WRITE, s->rs_handle, s->rs_offset, wl);

		if (st != IBV_WC_SUCCESS) {
			say(pc, "RDMA Write failed: %s", ibv_wc_status_str(st));
			return 1;
		}
		pc->pc_old_rkey = s->rs_handle;
		pc->pc_old_addr = s->rs_offset;
		len = cf->pf_mode == M_SHORT ? build_short_read(pc, rh->rh_xid)
			: build_reply(pc, rh->rh_xid, wl, cf->pf_mode == M_OVERRUN);
		send_msg(pc, len, cf->pf_mode == M_REMOTE_INV, s->rs_handle);
	} else {
		len = build_reply(pc, rh->rh_xid, 0, false);
		send_msg(pc, len, false, 0);
	}
	if (cf->pf_mode == M_REPLAY) {	/* the same reply again: sbuf holds it */
		say(pc, "xid %08x replayed", rh->rh_xid);
		send_msg(pc, len, false, 0);
	}
	return -1;
}

/* One successful receive: -1 to go on, or the connection's verdict. */
static int handle_recv(struct conn *pc, const struct ibv_wc *wc)
{
	const struct rpcrdma_hdr *rh = &pc->pc_rh;
	unsigned slot = (unsigned)wc->wr_id;
	enum rpcrdma_hdr_err herr;

	if (!rpcrdma_hdr_decode(rbuf(pc, slot), wc->byte_len, NULL, &pc->pc_rh, &herr)) {
		say(pc, "undecodable call: %s", rpcrdma_hdr_err_str(herr));
		post_recv(pc, slot);
		return -1;
	}
	if (rh->rh_proc == RPCRDMA_DONE) {
		pc->pc_dones++;
		say(pc, "RDMA_DONE xid %08x", rh->rh_xid);
		post_recv(pc, slot);
		return -1;
	}
	/* CCP is not counted as a call: the modes act on the others. */
	if (ccp_call(pc, rbuf(pc, slot), wc->byte_len)) {
		post_recv(pc, slot);
		return -1;
	}
	pc->pc_calls++;
	say(pc, "call %u xid %08x proc %u credit %u reads %u writes %u reply %d", pc->pc_calls,
	    rh->rh_xid, rh->rh_proc, rh->rh_credit, rh->rh_nreads, rh->rh_nwrites,
	    rh->rh_has_reply);
	post_recv(pc, slot);
	return answer(pc);
}

/* The requester left (how: printed first): what that decides. */
static int end_status(struct conn *pc, const char *how)
{
	say(pc, "%s after %u calls, %u long replies, %u RDMA_DONE", how, pc->pc_calls,
	    pc->pc_long_replies, pc->pc_dones);
	switch (pc->pc_cfg->pf_mode) {
	case M_READ_REPLY:
	case M_READ_REPLY_MSG:
		if (pc->pc_long_replies == 0)
			return UNDECIDED;
		return pc->pc_dones == pc->pc_long_replies ? 0 : 1;
	case M_STALE:
	case M_STALE_CONTROL:
	case M_SILENT:
		return UNDECIDED;
	default:
		return 0;
	}
}

/* Serves the connection until it ends: its verdict, or UNDECIDED. */
static int conn_serve(struct conn *pc)
{
	struct rdma_cm_event *ev;
	struct ibv_wc wc;

	for (;;) {
		int n = next_wc(pc, &wc, probe_wait_ms(pc));
		int verdict = probe_run(pc);

		if (verdict >= 0)
			return verdict;
		if (n < 0)
			die("ibv_poll_cq");
		if (n == 0) {
			enum rdma_cm_event_type t;

			if (rdma_get_cm_event(pc->pc_ch, &ev))
				continue;
			t = ev->event;
			rdma_ack_cm_event(ev);
			/* The last RDMA_DONE may complete after the CQ was last
			 * polled but before this event was read. */
			if (t == RDMA_CM_EVENT_DISCONNECTED) {
				count_late_dones(pc);
				return end_status(pc, "disconnected");
			}
			if (t != RDMA_CM_EVENT_ESTABLISHED)	/* never up, or the device went */
				return end_status(pc, rdma_event_str(t));
			continue;
		}
		if (wc.wr_id >= 1000)
			continue;
		if (wc.status != IBV_WC_SUCCESS) {
			char how[128];

			snprintf(how, sizeof(how), "receive ended: %s", ibv_wc_status_str(wc.status));
			return end_status(pc, how);
		}
		verdict = handle_recv(pc, &wc);
		if (verdict >= 0)
			return verdict;
	}
}

static void set_nonblock(int fd)
{
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK))
		die("fcntl");
}

/* PD, CQ on a completion channel, QP, buffers, receives; then the accept. */
static void conn_setup(struct conn *pc)
{
	struct rdma_cm_id *id = pc->pc_id;
	struct ibv_qp_init_attr qa;
	struct rdma_conn_param cp;
	struct rpcrdma_pd ours = { .pd_remote_inv = false, .pd_send_size = BUFSZ,
				   .pd_recv_size = BUFSZ };
	uint8_t pdata[RPCRDMA_PD_LEN];

	pc->pc_pd = ibv_alloc_pd(id->verbs);
	pc->pc_cc = ibv_create_comp_channel(id->verbs);
	pc->pc_cq = pc->pc_cc ? ibv_create_cq(id->verbs, 256, NULL, pc->pc_cc, 0) : NULL;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = pc->pc_cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = NRECV;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (!pc->pc_pd || !pc->pc_cq || rdma_create_qp(id, pc->pc_pd, &qa))
		die("qp");
	pc->pc_qp = id->qp;
	pc->pc_mem = calloc(NRECV + 4, BUFSZ);
	pc->pc_mr = pc->pc_mem ? ibv_reg_mr(pc->pc_pd, pc->pc_mem, (size_t)(NRECV + 4) * BUFSZ,
					    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ)
			       : NULL;
	if (!pc->pc_mr)
		die("ibv_reg_mr");
	memset(wsrc(pc), 0xab, BUFSZ);
	for (unsigned i = 0; i < NRECV; i++)
		post_recv(pc, i);
	set_nonblock(pc->pc_cc->fd);
	set_nonblock(pc->pc_ch->fd);
	rpcrdma_pd_encode(&ours, pdata);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pdata;
	cp.private_data_len = sizeof(pdata);
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	if (rdma_accept(id, &cp))
		die("rdma_accept");
}

/* Disconnects (when the requester has not) and frees what conn_setup made. */
static void conn_teardown(struct conn *pc)
{
	struct ibv_cq *ecq;
	void *ectx;

	rdma_disconnect(pc->pc_id);	/* fails harmlessly when already down */
	rdma_destroy_qp(pc->pc_id);
	ibv_dereg_mr(pc->pc_mr);
	free(pc->pc_mem);
	while (ibv_get_cq_event(pc->pc_cc, &ecq, &ectx) == 0)
		ibv_ack_cq_events(ecq, 1);
	ibv_destroy_cq(pc->pc_cq);
	ibv_destroy_comp_channel(pc->pc_cc);
	ibv_dealloc_pd(pc->pc_pd);
	rdma_destroy_id(pc->pc_id);
	rdma_destroy_event_channel(pc->pc_ch);
}

static void *conn_thread(void *arg)
{
	struct conn *pc = arg;
	struct peer *pp = pc->pc_peer;
	uint64_t one = 1;
	int st;

	conn_setup(pc);
	st = conn_serve(pc);
	conn_teardown(pc);
	if (st == UNDECIDED)
		say(pc, "connection ended, no verdict");
	else
		say(pc, "connection ended, status %d", st);
	pthread_mutex_lock(&pp->pp_lock);
	if (st != UNDECIDED) {
		pp->pp_decided++;
		if (st > pp->pp_worst)
			pp->pp_worst = st;
	}
	pp->pp_open--;
	pthread_mutex_unlock(&pp->pp_lock);
	free(pc);
	if (write(pp->pp_wake, &one, sizeof(one)) != sizeof(one))
		die("eventfd write");
	return NULL;
}

/* A CONNECT_REQUEST's id (its event acked): its own CM channel and thread. */
static void peer_accept(struct peer *pp, struct rdma_cm_id *id)
{
	struct sockaddr_in *from = (struct sockaddr_in *)rdma_get_peer_addr(id);
	char addr[INET_ADDRSTRLEN] = "?";
	struct conn *pc;
	pthread_t th;
	unsigned no = 0;

	pthread_mutex_lock(&pp->pp_lock);
	if (pp->pp_open < MAXCONN) {
		pp->pp_open++;
		no = ++pp->pp_conns;
	}
	pthread_mutex_unlock(&pp->pp_lock);
	if (from->sin_family == AF_INET)
		inet_ntop(AF_INET, &from->sin_addr, addr, sizeof(addr));
	if (!no) {
		printf("peer: connection from %s refused: %u open\n", addr, MAXCONN);
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return;
	}
	printf("peer: connection %u from %s:%u\n", no, addr, ntohs(from->sin_port));
	pc = calloc(1, sizeof(*pc));
	if (!pc)
		die("calloc");
	pc->pc_peer = pp;
	pc->pc_cfg = pp->pp_cfg;
	pc->pc_no = no;
	pc->pc_id = id;
	pc->pc_ch = rdma_create_event_channel();
	if (!pc->pc_ch || rdma_migrate_id(id, pc->pc_ch))
		die("rdma_migrate_id");
	if (pthread_create(&th, NULL, conn_thread, pc) || pthread_detach(th))
		die("pthread_create");
}

static enum mode parse_mode(const char *m)
{
	return !strcmp(m, "stale-rkey") ? M_STALE : !strcmp(m, "stale-control") ? M_STALE_CONTROL
	     : !strcmp(m, "remote-inv") ? M_REMOTE_INV : !strcmp(m, "overrun") ? M_OVERRUN
	     : !strcmp(m, "err-chunk") ? M_ERR_CHUNK : !strcmp(m, "err-vers") ? M_ERR_VERS
	     : !strcmp(m, "unknown-xid") ? M_UNKNOWN_XID : !strcmp(m, "read-reply") ? M_READ_REPLY
	     : !strcmp(m, "read-reply-msg") ? M_READ_REPLY_MSG : !strcmp(m, "msgp") ? M_MSGP
	     : !strcmp(m, "replay") ? M_REPLAY : !strcmp(m, "late") ? M_LATE
	     : !strcmp(m, "silent") ? M_SILENT : !strcmp(m, "short") ? M_SHORT : M_NORMAL;
}

/* The peer's status once no connection is open. */
static int peer_status(const struct peer *pp)
{
	enum mode m = pp->pp_cfg->pf_mode;

	if (pp->pp_worst != UNDECIDED)
		return pp->pp_worst;
	return m == M_STALE || m == M_STALE_CONTROL || m == M_SILENT || m == M_READ_REPLY ||
	       m == M_READ_REPLY_MSG ? 1 : 0;
}

/* Accepts connections until the last one open has ended. */
static void peer_run(struct peer *pp, struct rdma_event_channel *ch)
{
	struct rdma_cm_event *ev;
	uint64_t n;

	for (;;) {
		struct pollfd pfd[2] = { { .fd = ch->fd, .events = POLLIN },
					 { .fd = pp->pp_wake, .events = POLLIN } };
		bool done;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (pfd[1].revents && read(pp->pp_wake, &n, sizeof(n)) == sizeof(n)) {
			pthread_mutex_lock(&pp->pp_lock);
			done = pp->pp_open == 0;
			pthread_mutex_unlock(&pp->pp_lock);
			if (done)
				return;
		}
		while (rdma_get_cm_event(ch, &ev) == 0) {
			struct rdma_cm_id *id = ev->id;
			bool req = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST;

			rdma_ack_cm_event(ev);
			if (req)
				peer_accept(pp, id);
		}
	}
}

int main(int argc, char **argv)
{
	struct peer_cfg cfg = { .pf_credits = 32 };
	struct peer pp = { .pp_cfg = &cfg, .pp_lock = PTHREAD_MUTEX_INITIALIZER,
			   .pp_worst = UNDECIDED };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rdma_event_channel *ch;
	struct rdma_cm_id *lid;
	int st;

	if (argc < 4) {
		fprintf(stderr, "usage: rpcrdma-peer ADDR PORT MODE [CREDITS]\n");
		return 2;
	}
	cfg.pf_mode = parse_mode(argv[3]);
	if (argc > 4)
		cfg.pf_credits = (uint32_t)atoi(argv[4]);
	cfg.pf_probe_ms = env_ms("PEER_PROBE_MS", 3000);
	cfg.pf_late_ms = env_ms("PEER_LATE_MS", 3000);
	cfg.pf_ccp = getenv("PEER_CCP");
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(60);
	inet_pton(AF_INET, argv[1], &sin.sin_addr);
	sin.sin_port = htons((uint16_t)atoi(argv[2]));
	pp.pp_wake = eventfd(0, EFD_CLOEXEC);
	ch = rdma_create_event_channel();
	if (pp.pp_wake < 0 || !ch || rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, (struct sockaddr *)&sin) || rdma_listen(lid, MAXCONN)) {
		perror("listen");
		return 2;
	}
	set_nonblock(ch->fd);
	printf("peer: listening on %s:%s, mode %s, credits %u, up to %u connections\n", argv[1],
	       argv[2], argv[3], cfg.pf_credits, MAXCONN);
	peer_run(&pp, ch);
	st = peer_status(&pp);
	printf("peer: exiting with status %d: %u connections, %u with a verdict\n", st,
	       pp.pp_conns, pp.pp_decided);
	return st;
}
