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
 * A test tool, not the daemon: one connection, completions busy-polled,
 * exits after the connection ends or 60 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "chunking.h"

#define NRECV	64
#define BUFSZ	4096

enum mode { M_NORMAL, M_STALE, M_STALE_CONTROL, M_REMOTE_INV, M_OVERRUN, M_ERR_CHUNK,
	    M_ERR_VERS, M_UNKNOWN_XID, M_READ_REPLY, M_READ_REPLY_MSG, M_MSGP, M_REPLAY, M_LATE,
	    M_SILENT, M_SHORT };

static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t *mem;		/* NRECV receive buffers, then send buffers, then a write source */
static struct rpcrdma_hdr rh, out;

static uint8_t *rbuf(unsigned i) { return mem + (size_t)i * BUFSZ; }
static uint8_t *sbuf(void) { return mem + (size_t)NRECV * BUFSZ; }
static uint8_t *wsrc(void) { return mem + (size_t)(NRECV + 1) * BUFSZ; }
static uint8_t *lrbuf(void) { return mem + (size_t)(NRECV + 2) * BUFSZ; }	/* 2 buffers */

static void post_recv(unsigned i)
{
	struct ibv_sge sge = { (uintptr_t)rbuf(i), BUFSZ, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad)) {
		perror("ibv_post_recv");
		exit(2);
	}
}

/* Receive completions seen while waiting for a send: handled next. */
static struct ibv_wc stash[NRECV];
static unsigned nstash;

/* Wait for one send-side completion; returns its status. */
static enum ibv_wc_status wait_send(void)
{
	struct ibv_wc wc;
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			exit(2);
		if (n == 0)
			continue;
		if (wc.wr_id >= 1000)
			return wc.status;
		if (nstash < NRECV)
			stash[nstash++] = wc;
	}
}

static int next_wc(struct ibv_wc *wc)
{
	if (nstash > 0) {
		*wc = stash[0];
		memmove(stash, stash + 1, --nstash * sizeof(stash[0]));
		return 1;
	}
	return ibv_poll_cq(cq, 1, wc);
}

/* Count RDMA_DONE messages still queued on the CQ (drained at disconnect). */
static void count_late_dones(unsigned *dones)
{
	struct rpcrdma_hdr late;
	enum rpcrdma_hdr_err herr;
	struct ibv_wc wc;

	while (next_wc(&wc) > 0) {
		if (wc.wr_id >= 1000 || wc.status != IBV_WC_SUCCESS)
			continue;
		if (rpcrdma_hdr_decode(rbuf((unsigned)wc.wr_id), wc.byte_len, NULL, &late, &herr) &&
		    late.rh_proc == RPCRDMA_DONE) {
			(*dones)++;
			printf("peer: RDMA_DONE xid %08x (drained at disconnect)\n", late.rh_xid);
		}
	}
}

static void send_msg(size_t len, bool with_inv, uint32_t inv_rkey)
{
	struct ibv_sge sge = { (uintptr_t)sbuf(), (uint32_t)len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1000, .sg_list = &sge, .num_sge = 1,
				  .opcode = with_inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	enum ibv_wc_status st;

	if (with_inv)
		wr.invalidate_rkey = inv_rkey;
	if (ibv_post_send(qp, &wr, &bad)) {
		perror("ibv_post_send");
		exit(2);
	}
	st = wait_send();
	if (st != IBV_WC_SUCCESS) {
		printf("peer: send failed: %s\n", ibv_wc_status_str(st));
		exit(2);
	}
}

static enum ibv_wc_status rdma_op(enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
				  uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(op == IBV_WR_RDMA_READ ? lrbuf() : wsrc()), len,
			       mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1001, .sg_list = &sge, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.rkey = rkey;
	wr.wr.rdma.remote_addr = addr;
	if (ibv_post_send(qp, &wr, &bad)) {
		perror("ibv_post_send write");
		exit(2);
	}
	return wait_send();
}

static enum ibv_wc_status rdma_write(uint32_t rkey, uint64_t addr, uint32_t len)
{
	return rdma_op(IBV_WR_RDMA_WRITE, rkey, addr, len);
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

/* silent: the segment of the first unanswered call offering a chunk. */
static struct {
	bool sp_armed;
	enum ibv_wr_opcode sp_op;
	uint32_t sp_rkey, sp_len;
	uint64_t sp_addr, sp_at_ms;
} probe;

static void probe_arm(unsigned after_ms)
{
	const struct rpcrdma_segment *s = NULL;

	if (probe.sp_armed)
		return;
	if (rh.rh_nwrites > 0 && rh.rh_writes[0].ck_nsegs > 0) {
		s = &rh.rh_segs[rh.rh_writes[0].ck_first];
		probe.sp_op = IBV_WR_RDMA_WRITE;
	} else if (rh.rh_nreads > 0) {
		s = &rh.rh_reads[0].rd_seg;
		probe.sp_op = IBV_WR_RDMA_READ;
	}
	if (!s || s->rs_length < 4)
		return;
	probe.sp_armed = true;
	probe.sp_rkey = s->rs_handle;
	probe.sp_addr = s->rs_offset;
	probe.sp_len = 4;
	probe.sp_at_ms = now_ms() + after_ms;
	printf("peer: xid %08x left unanswered; its %s segment (rkey %08x) probed in %u ms\n",
	       rh.rh_xid, probe.sp_op == IBV_WR_RDMA_WRITE ? "write" : "read", s->rs_handle,
	       after_ms);
}

/* The probe, when due: the exit status of the peer, or -1 (not yet). */
static int probe_run(void)
{
	const char *what;
	enum ibv_wc_status st;

	if (!probe.sp_armed || now_ms() < probe.sp_at_ms)
		return -1;
	what = probe.sp_op == IBV_WR_RDMA_WRITE ? "RDMA Write to" : "RDMA Read of";
	st = rdma_op(probe.sp_op, probe.sp_rkey, probe.sp_addr, probe.sp_len);
	if (st == IBV_WC_SUCCESS) {
		printf("peer: probe accepted: %s rkey %08x of an unanswered call worked\n", what,
		       probe.sp_rkey);
		return 1;
	}
	printf("peer: probe refused: %s rkey %08x: %s\n", what, probe.sp_rkey,
	       ibv_wc_status_str(st));
	return 0;
}

/* Transport header of the reply, then the 24-byte RPC reply. */
static bool use_msgp;

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

static size_t build_reply(uint32_t xid, uint32_t credits, uint32_t wlen, bool overrun)
{
	struct xdr_enc xe;
	unsigned c, i;

	memset(&out, 0, offsetof(struct rpcrdma_hdr, rh_reads));
	out.rh_xid = xid;
	out.rh_vers = 1;
	out.rh_credit = credits;
	out.rh_proc = use_msgp ? RPCRDMA_MSGP : RPCRDMA_MSG;
	out.rh_align = 16;
	out.rh_thresh = 4096;
	out.rh_nwrites = rh.rh_nwrites;
	out.rh_has_reply = false;
	out.rh_nsegs = 0;
	for (c = 0; c < rh.rh_nwrites; c++) {
		out.rh_writes[c] = rh.rh_writes[c];
		for (i = 0; i < rh.rh_writes[c].ck_nsegs; i++) {
			unsigned k = rh.rh_writes[c].ck_first + i;

			out.rh_segs[k] = rh.rh_segs[k];
			out.rh_segs[k].rs_length = 0;
			if (c == 0 && i == 0)
				out.rh_segs[k].rs_length = overrun ? rh.rh_segs[k].rs_length + 4 : wlen;
		}
	}
	out.rh_nsegs = rh.rh_nsegs;
	xdr_enc_init(&xe, sbuf(), BUFSZ);
	rpcrdma_hdr_encode(&xe, &out);
	put_accepted(&xe, xid);
	xdr_put_u32(&xe, 0);	/* SUCCESS */
	return xe.xe_len;
}

/* M_SHORT: write chunk 0 reported full, and a READ3res (NFS3_OK, no
 * attributes, count, eof false, data length) claiming all of it (RFC 8267
 * section 6.4.1: the data item is the chunk, its length word stays inline). */
static size_t build_short_read(uint32_t xid, uint32_t credits)
{
	struct xdr_enc xe;
	uint32_t t = 0;
	const struct rpcrdma_chunk *ck = &rh.rh_writes[0];

	build_reply(xid, credits, 0, false);	/* the transport header, in out */
	for (unsigned i = 0; i < ck->ck_nsegs; i++) {
		out.rh_segs[ck->ck_first + i].rs_length = rh.rh_segs[ck->ck_first + i].rs_length;
		t += rh.rh_segs[ck->ck_first + i].rs_length;
	}
	xdr_enc_init(&xe, sbuf(), BUFSZ);
	rpcrdma_hdr_encode(&xe, &out);
	put_accepted(&xe, xid);
	xdr_put_u32(&xe, 0);	/* SUCCESS */
	xdr_put_u32(&xe, 0);	/* NFS3_OK */
	xdr_put_u32(&xe, 0);	/* post_op_attr: none */
	xdr_put_u32(&xe, t);	/* count */
	xdr_put_u32(&xe, 0);	/* eof */
	xdr_put_u32(&xe, t);	/* data: length here, bytes in the chunk */
	printf("peer: xid %08x: READ3res of %u bytes reported, 100 written\n", xid, t);
	return xe.xe_len;
}

/* RDMA_MSG reply to xid: accepted with stat, then the results given. */
static size_t build_rpc(uint32_t xid, uint32_t credits, uint32_t stat, const uint32_t *res,
			unsigned nres)
{
	struct xdr_enc xe;

	memset(&out, 0, offsetof(struct rpcrdma_hdr, rh_reads));
	out.rh_xid = xid;
	out.rh_vers = 1;
	out.rh_credit = credits;
	out.rh_proc = RPCRDMA_MSG;
	out.rh_nwrites = 0;
	out.rh_has_reply = false;
	out.rh_nsegs = 0;
	xdr_enc_init(&xe, sbuf(), BUFSZ);
	rpcrdma_hdr_encode(&xe, &out);
	put_accepted(&xe, xid);
	xdr_put_u32(&xe, stat);
	for (unsigned i = 0; i < nres; i++)
		xdr_put_u32(&xe, res[i]);
	return xe.xe_len;
}

/* A CONF_RDMA call?  Print its request; true when answered (or dropped). */
static bool ccp_call(uint32_t credits, const uint8_t *buf, uint32_t len)
{
	const char *cfg = getenv("PEER_CCP");
	struct rpc_call_hdr ch;
	struct ccp_req req;
	struct xdr_cur xc;
	struct iovec one;
	uint32_t res[3];

	if (rh.rh_proc != RPCRDMA_MSG || len <= rh.rh_body_off)
		return false;
	xdr_cur_init_buf(&xc, &one, buf + rh.rh_body_off, len - rh.rh_body_off);
	if (!rpc_call_decode(&xc, &ch) || ch.rc_prog != CCP_PROG || !xdr_seek(&xc, ch.rc_args_pos))
		return false;
	if (!ccp_req_decode(&xc, &req)) {
		printf("peer: CONF_RDMA with bad arguments\n");
		return false;
	}
	printf("peer: CONF_RDMA vers %u proc %u: maxcall_sendsize %u maxreply_sendsize %u "
	       "maxrdmaread %u\n", ch.rc_vers, ch.rc_proc, req.cq_maxcall_sendsize,
	       req.cq_maxreply_sendsize, req.cq_maxrdmaread);
	if (!cfg)
		return false;
	if (!strcmp(cfg, "silent"))
		return true;
	if (!strcmp(cfg, "unavail")) {
		send_msg(build_rpc(rh.rh_xid, credits, 1 /* PROG_UNAVAIL */, NULL, 0), false, 0);
		return true;
	}
	if (sscanf(cfg, "%u,%u,%u", &res[0], &res[1], &res[2]) != 3)
		return false;
	send_msg(build_rpc(rh.rh_xid, credits, 0, res, 3), false, 0);
	return true;
}

static size_t build_error(uint32_t xid, uint32_t code)
{
	struct xdr_enc xe;

	memset(&out, 0, offsetof(struct rpcrdma_hdr, rh_reads));
	out.rh_xid = xid;
	out.rh_vers = 1;
	out.rh_credit = 1;
	out.rh_proc = RPCRDMA_ERROR;
	out.rh_err = code;
	out.rh_vers_low = out.rh_vers_high = 1;
	out.rh_nwrites = 0;
	out.rh_has_reply = false;
	out.rh_nsegs = 0;
	xdr_enc_init(&xe, sbuf(), BUFSZ);
	rpcrdma_hdr_encode(&xe, &out);
	return xe.xe_len;
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *lid, *id = NULL;
	struct rdma_cm_event *ev;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rdma_conn_param cp;
	struct ibv_qp_init_attr qa;
	struct rpcrdma_pd ours = { .pd_remote_inv = false, .pd_send_size = BUFSZ,
				   .pd_recv_size = BUFSZ };
	uint8_t pdata[RPCRDMA_PD_LEN];
	enum mode mode = M_NORMAL;
	uint32_t credits = 32, old_rkey = 0;
	uint64_t old_addr = 0;
	unsigned calls = 0, i, dones = 0, long_replies = 0;
	const char *m;

	if (argc < 4) {
		fprintf(stderr, "usage: rpcrdma-peer ADDR PORT MODE [CREDITS]\n");
		return 2;
	}
	m = argv[3];
	mode = !strcmp(m, "stale-rkey") ? M_STALE : !strcmp(m, "stale-control") ? M_STALE_CONTROL
	     : !strcmp(m, "remote-inv") ? M_REMOTE_INV : !strcmp(m, "overrun") ? M_OVERRUN
	     : !strcmp(m, "err-chunk") ? M_ERR_CHUNK : !strcmp(m, "err-vers") ? M_ERR_VERS
	     : !strcmp(m, "unknown-xid") ? M_UNKNOWN_XID : !strcmp(m, "read-reply") ? M_READ_REPLY
	     : !strcmp(m, "read-reply-msg") ? M_READ_REPLY_MSG : !strcmp(m, "msgp") ? M_MSGP
	     : !strcmp(m, "replay") ? M_REPLAY : !strcmp(m, "late") ? M_LATE
	     : !strcmp(m, "silent") ? M_SILENT : !strcmp(m, "short") ? M_SHORT : M_NORMAL;
	if (argc > 4)
		credits = (uint32_t)atoi(argv[4]);
	use_msgp = mode == M_MSGP;
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(60);
	inet_pton(AF_INET, argv[1], &sin.sin_addr);
	sin.sin_port = htons((uint16_t)atoi(argv[2]));
	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, (struct sockaddr *)&sin) || rdma_listen(lid, 1)) {
		perror("listen");
		return 2;
	}
	printf("peer: listening on %s:%s, mode %s, credits %u\n", argv[1], argv[2], m, credits);
	for (;;) {
		if (rdma_get_cm_event(ch, &ev))
			return 2;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			id = ev->id;
			rdma_ack_cm_event(ev);
			break;
		}
		rdma_ack_cm_event(ev);
	}
	pd = ibv_alloc_pd(id->verbs);
	cq = ibv_create_cq(id->verbs, 256, NULL, NULL, 0);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = NRECV;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (!pd || !cq || rdma_create_qp(id, pd, &qa)) {
		perror("qp");
		return 2;
	}
	qp = id->qp;
	mem = calloc(NRECV + 4, BUFSZ);
	mr = ibv_reg_mr(pd, mem, (size_t)(NRECV + 4) * BUFSZ,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	memset(wsrc(), 0xab, BUFSZ);
	for (i = 0; i < NRECV; i++)
		post_recv(i);
	rpcrdma_pd_encode(&ours, pdata);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pdata;
	cp.private_data_len = sizeof(pdata);
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	if (rdma_accept(id, &cp)) {
		perror("rdma_accept");
		return 2;
	}

	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	for (;;) {
		struct ibv_wc wc;
		int n = next_wc(&wc);
		size_t len;
		enum rpcrdma_hdr_err herr;
		int verdict = probe_run();

		if (verdict >= 0)
			return verdict;
		if (n <= 0) {
			if (n < 0)
				return 2;
			if (rdma_get_cm_event(ch, &ev) == 0) {
				enum rdma_cm_event_type t = ev->event;

				rdma_ack_cm_event(ev);
				if (t == RDMA_CM_EVENT_DISCONNECTED) {
					/* The last RDMA_DONE may complete after the CQ was
					 * last polled but before this event was read. */
					count_late_dones(&dones);
					printf("peer: disconnected after %u calls, %u long replies, "
					       "%u RDMA_DONE\n", calls, long_replies, dones);
					if (mode == M_READ_REPLY || mode == M_READ_REPLY_MSG)
						return long_replies > 0 && dones == long_replies ? 0 : 1;
					return mode == M_STALE || mode == M_STALE_CONTROL ||
					       mode == M_SILENT ? 1 : 0;
				}
			}
			continue;
		}
		if (wc.wr_id >= 1000)
			continue;
		if (wc.status != IBV_WC_SUCCESS) {
			printf("peer: receive ended: %s after %u calls, %u long replies, %u RDMA_DONE\n",
			       ibv_wc_status_str(wc.status), calls, long_replies, dones);
			if (mode == M_READ_REPLY || mode == M_READ_REPLY_MSG)
				return long_replies > 0 && dones == long_replies ? 0 : 1;
			return mode == M_STALE || mode == M_STALE_CONTROL || mode == M_SILENT ? 1 : 0;
		}
		if (!rpcrdma_hdr_decode(rbuf((unsigned)wc.wr_id), wc.byte_len, NULL, &rh, &herr)) {
			printf("peer: undecodable call: %s\n", rpcrdma_hdr_err_str(herr));
			post_recv((unsigned)wc.wr_id);
			continue;
		}
		if (rh.rh_proc == RPCRDMA_DONE) {
			dones++;
			printf("peer: RDMA_DONE xid %08x\n", rh.rh_xid);
			post_recv((unsigned)wc.wr_id);
			continue;
		}
		/* CCP is not counted as a call: the modes act on the others. */
		if (ccp_call(credits, rbuf((unsigned)wc.wr_id), wc.byte_len)) {
			post_recv((unsigned)wc.wr_id);
			continue;
		}
		calls++;
		printf("peer: call %u xid %08x proc %u credit %u reads %u writes %u reply %d\n", calls,
		       rh.rh_xid, rh.rh_proc, rh.rh_credit, rh.rh_nreads, rh.rh_nwrites,
		       rh.rh_has_reply);
		post_recv((unsigned)wc.wr_id);

		if (mode == M_SILENT) {
			probe_arm(env_ms("PEER_PROBE_MS", 3000));
			continue;
		}
		if (mode == M_LATE)
			usleep(env_ms("PEER_LATE_MS", 3000) * 1000u);
		if ((mode == M_STALE || mode == M_STALE_CONTROL) && old_rkey) {
			enum ibv_wc_status st = rdma_write(old_rkey, old_addr, 4);

			if (st == IBV_WC_SUCCESS) {
				printf("peer: stale rkey accepted: RDMA Write to rkey %08x landed\n",
				       old_rkey);
				return mode == M_STALE_CONTROL ? 0 : 1;
			}
			printf("peer: stale rkey refused: RDMA Write to rkey %08x: %s\n", old_rkey,
			       ibv_wc_status_str(st));
			return mode == M_STALE ? 0 : 1;
		}
		if (mode == M_ERR_VERS || mode == M_ERR_CHUNK) {
			len = build_error(rh.rh_xid, mode == M_ERR_VERS ? RPCRDMA_ERR_VERS
									: RPCRDMA_ERR_CHUNK);
			send_msg(len, false, 0);
			continue;
		}
		if ((mode == M_READ_REPLY || mode == M_READ_REPLY_MSG) && calls > 1) {
			/* the RPC reply (and filler) in lrbuf, offered by Read list */
			struct xdr_enc xe;
			uint32_t item = mode == M_READ_REPLY ? 8024 : 5000;

			memset(lrbuf(), 0x5c, 2 * BUFSZ);
			len = build_reply(rh.rh_xid, credits, 0, false);
			xdr_enc_init(&xe, sbuf(), BUFSZ);
			memset(&out, 0, offsetof(struct rpcrdma_hdr, rh_reads));
			out.rh_xid = rh.rh_xid;
			out.rh_vers = 1;
			out.rh_credit = credits;
			out.rh_proc = mode == M_READ_REPLY ? RPCRDMA_NOMSG : RPCRDMA_MSG;
			out.rh_nreads = 1;
			out.rh_reads[0].rd_position = mode == M_READ_REPLY ? 0 : 24;
			out.rh_reads[0].rd_seg.rs_handle = mr->rkey;
			out.rh_reads[0].rd_seg.rs_length = item;
			out.rh_reads[0].rd_seg.rs_offset = (uintptr_t)lrbuf();
			out.rh_nwrites = 0;
			out.rh_has_reply = false;
			out.rh_nsegs = 0;
			rpcrdma_hdr_encode(&xe, &out);
			{
				/* RPC reply: xid, REPLY, ACCEPTED, AUTH_NONE, SUCCESS */
				uint8_t rpc[24] = { 0 };

				chk_put_be32(rpc, rh.rh_xid);
				chk_put_be32(rpc + 4, 1);
				if (mode == M_READ_REPLY)
					memcpy(lrbuf(), rpc, 24);
				else
					xdr_put_fixed(&xe, rpc, 24);
			}
			send_msg(xe.xe_len, false, 0);
			long_replies++;
			continue;
		}
		if (mode == M_UNKNOWN_XID) {
			/* A reply for no call first: no write list. */
			struct rpcrdma_hdr save = rh;

			rh.rh_nwrites = 0;
			rh.rh_nsegs = 0;
			len = build_reply(save.rh_xid ^ 0x5a5a5a5a, credits, 0, false);
			rh = save;
			send_msg(len, false, 0);
		}
		if (rh.rh_nwrites > 0) {
			const struct rpcrdma_segment *s = &rh.rh_segs[rh.rh_writes[0].ck_first];
			uint32_t wl = s->rs_length < 100 ? s->rs_length : 100;
			enum ibv_wc_status st = rdma_write(s->rs_handle, s->rs_offset, wl);

			if (st != IBV_WC_SUCCESS) {
				printf("peer: RDMA Write failed: %s\n", ibv_wc_status_str(st));
				return 1;
			}
			old_rkey = s->rs_handle;
			old_addr = s->rs_offset;
			len = mode == M_SHORT ? build_short_read(rh.rh_xid, credits)
					      : build_reply(rh.rh_xid, credits, wl, mode == M_OVERRUN);
			send_msg(len, mode == M_REMOTE_INV, s->rs_handle);
		} else {
			len = build_reply(rh.rh_xid, credits, 0, false);
			send_msg(len, false, 0);
		}
		if (mode == M_REPLAY) {		/* the same reply again: sbuf holds it */
			printf("peer: xid %08x replayed\n", rh.rh_xid);
			send_msg(len, false, 0);
		}
	}
}
