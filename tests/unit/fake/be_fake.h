// SPDX-License-Identifier: MIT
/*
 * The fake RDMA device and the test bench of the backend's seam tests
 * (test_be_seam.c, test_be_send.c).  The device stands behind the verbs
 * seam of be_internal.h: rdma_cm events and CQ completions are queued by
 * the test, posted WRs are recorded.  The bench runs one be_pool on a
 * libevent loop over it and records every call's callback.
 */
#ifndef BE_FAKE_H
#define BE_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <event2/event.h>

#include "backend.h"
#include "be_internal.h"

#define MAXQ 1024
#define MAXCALLS 16

struct fsend {
	uint64_t wr_id;
	enum ibv_wr_opcode op;
	unsigned flags;
	uint8_t *addr;
	uint32_t len;
	uint32_t xid;			/* its first word when posted (buffers are reused) */
	bool answered;			/* answer_all() gave it a reply */
};

/* One connection of the device: what the backend made and posted on it. */
struct fconn {
	struct rdma_event_channel ch;
	struct rdma_cm_id id;
	struct ibv_comp_channel cc;
	struct ibv_cq cq;
	struct ibv_qp qp;
	struct rdma_cm_event ev[8];
	unsigned nev;
	struct ibv_wc wc[MAXQ];
	unsigned nwc, npolled;
	bool armed;
	unsigned narms;			/* ibv_req_notify_cq() calls */
	struct fsend sends[MAXQ];
	unsigned nsends;
	unsigned nposts;		/* ibv_post_send() calls, post_wrs[] WRs each */
	unsigned post_wrs[MAXQ];
	unsigned post_fail_wr;		/* refuse the next post's WR of this number (1...) */
	bool answer_on_post;		/* each Send answered inside its post (Soft-RoCE's
					 * loopback can reply within the doorbell) */
	struct { uint64_t wr_id; uint8_t *addr; uint32_t len; } recvs[MAXQ];
	unsigned nrecvs, recv_head;
	int qp_state;
	int polled_at_err;		/* completions polled when the QP went to ERR */
	bool qp_destroyed;
	struct timespec t_err, t_destroyed;
	struct sockaddr_in dst;		/* where rdma_resolve_addr was sent */
};

/* The device: one per test binary, reset by bench_up(). */
struct fake_dev {
	struct ibv_context ctx;
	struct ibv_pd pd;
	struct fconn *conns[16];
	unsigned nconns;
	bool no_establish;		/* connect() does not answer */
	struct fconn *ev_fc;		/* whose CM event is being handled */
	uint8_t peer_pd[RPCRDMA_PD_LEN];
	int nmr;
	uint32_t next_key;
	/* reg_mr of this many bytes (SIZE_MAX: of any) fails as past
	 * RLIMIT_MEMLOCK; 0: none (survives bench_up). */
	size_t reg_enomem;
};
extern struct fake_dev fdev;
extern const struct be_verbs fake_verbs;

struct bench {
	struct event_base *base;
	struct be_ctx *ctx;
	struct be_pool *pool;
	unsigned ev[4];				/* pool events by type */
	unsigned ncb;
	uint32_t cb_xid[64];
	enum be_err cb_err[64];
	int cb_qp_state[64];			/* the QP's state at each callback */
	uint8_t msg[MAXCALLS][40];
	struct iovec iov[MAXCALLS];
	struct be_req req[MAXCALLS];		/* the calls, embedded as a caller does */
};

/* The device's side. */
struct fconn *cur(void);		/* the newest connection, or NULL */
void kick(int fd);			/* make an eventfd readable */
void queue_cm(struct fconn *fc, enum rdma_cm_event_type t);
void queue_wc(struct fconn *fc, uint64_t wr_id, enum ibv_wc_status st,
	      enum ibv_wc_opcode op, uint32_t len);

/* The bench: a pool on the device, calls b->req[i], callbacks recorded. */
void bench_up(struct bench *b, struct be_config *cfg);
/* The same, but the device leaves connect() unanswered: queue_cm() it. */
void bench_up_unanswered(struct bench *b, struct be_config *cfg);
void bench_down(struct bench *b);
void spin(struct bench *b, unsigned ms);	/* run the loop for ms */
void wait_conns(struct bench *b, unsigned n);
void on_event(struct be_pool *pool, enum be_pool_event ev, void *arg);
void on_reply(struct be_req *call, const struct be_reply *r, void *arg);
unsigned cb_count(const struct bench *b, uint32_t xid);
struct be_req *submit(struct bench *b, unsigned i, uint32_t xid);

/* The server's side: what was posted, and answers to it. */
int send_of(struct fconn *fc, uint32_t xid);	/* latest Send of xid, or -1 */
unsigned nsends_op(struct fconn *fc, enum ibv_wr_opcode op);
void complete_send(struct fconn *fc, uint32_t xid, enum ibv_wc_status st);
void deliver_reply(struct fconn *fc, uint32_t xid, uint32_t credits, uint32_t stat,
		   const uint32_t *res, unsigned nres);
void answer_all(struct bench *b, struct fconn *fc, const uint32_t *xids, unsigned n);
void deliver_long_reply(struct fconn *fc, uint32_t xid, unsigned nseg);

#endif
