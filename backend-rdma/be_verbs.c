// SPDX-License-Identifier: MIT
/*
 * This file contains the verbs seam of backend-rdma: the real librdmacm/libibverbs
 * functions behind the table every other backend file calls through
 * (be_internal.h), replaceable by host unit tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <event2/event.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "backend.h"
#include "be_internal.h"

/* ------------------------------------------------------------------------
 * The verbs seam (be_internal.h): inline and macro verbs wrapped as functions.
 * ------------------------------------------------------------------------ */
static struct ibv_mr *real_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	return ibv_reg_mr(pd, addr, len, access);
}
static int real_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return ibv_req_notify_cq(cq, solicited_only);
}
static int real_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	return ibv_poll_cq(cq, n, wc);
}
static int real_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	return ibv_post_send(qp, wr, bad);
}
static int real_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return ibv_post_recv(qp, wr, bad);
}
static struct ibv_mw *real_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	return ibv_alloc_mw(pd, type);
}
static int real_dealloc_mw(struct ibv_mw *mw)
{
	return ibv_dealloc_mw(mw);
}

static const struct be_verbs real_verbs = {
	.create_event_channel = rdma_create_event_channel,
	.destroy_event_channel = rdma_destroy_event_channel,
	.create_id = rdma_create_id,
	.destroy_id = rdma_destroy_id,
	.resolve_addr = rdma_resolve_addr,
	.resolve_route = rdma_resolve_route,
	.connect = rdma_connect,
	.disconnect = rdma_disconnect,
	.get_cm_event = rdma_get_cm_event,
	.ack_cm_event = rdma_ack_cm_event,
	.create_qp = rdma_create_qp,
	.destroy_qp = rdma_destroy_qp,
	.query_device = ibv_query_device,
	.alloc_pd = ibv_alloc_pd,
	.dealloc_pd = ibv_dealloc_pd,
	.reg_mr = real_reg_mr,
	.dereg_mr = ibv_dereg_mr,
	.alloc_mw = real_alloc_mw,
	.dealloc_mw = real_dealloc_mw,
	.create_comp_channel = ibv_create_comp_channel,
	.destroy_comp_channel = ibv_destroy_comp_channel,
	.create_cq = ibv_create_cq,
	.destroy_cq = ibv_destroy_cq,
	.req_notify_cq = real_req_notify_cq,
	.get_cq_event = ibv_get_cq_event,
	.ack_cq_events = ibv_ack_cq_events,
	.poll_cq = real_poll_cq,
	.post_send = real_post_send,
	.post_recv = real_post_recv,
	.modify_qp = ibv_modify_qp,
};
/* Process-wide and constant in the daemon; tests swap it between cases. */
static const struct be_verbs *vx = &real_verbs;

const struct be_verbs *be_vx(void)
{
	return vx;
}

void be_verbs_set(const struct be_verbs *v)
{
	vx = v ? v : &real_verbs;
}
