/* SPDX-License-Identifier: MIT */
/*
 * be_verbs.h - the verbs seam of backend-rdma: every rdma_cm and verbs call
 * be_rdma.c makes goes through this table, so that host unit tests
 * (tests/unit/test_be_seam.c) can plug in a fake device and drive
 * connections, completions and flushes without RDMA.  The daemon never
 * changes it.  Same signatures as librdmacm / libibverbs.
 */
#ifndef RPCRDMA_GW_BE_VERBS_H
#define RPCRDMA_GW_BE_VERBS_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

struct be_verbs {
	struct rdma_event_channel *(*create_event_channel)(void);
	void (*destroy_event_channel)(struct rdma_event_channel *ch);
	int (*create_id)(struct rdma_event_channel *ch, struct rdma_cm_id **id, void *ctx,
			 enum rdma_port_space ps);
	int (*destroy_id)(struct rdma_cm_id *id);
	int (*resolve_addr)(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst,
			    int timeout_ms);
	int (*resolve_route)(struct rdma_cm_id *id, int timeout_ms);
	int (*connect)(struct rdma_cm_id *id, struct rdma_conn_param *param);
	int (*disconnect)(struct rdma_cm_id *id);
	int (*get_cm_event)(struct rdma_event_channel *ch, struct rdma_cm_event **ev);
	int (*ack_cm_event)(struct rdma_cm_event *ev);
	int (*create_qp)(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	void (*destroy_qp)(struct rdma_cm_id *id);
	int (*query_device)(struct ibv_context *verbs, struct ibv_device_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *verbs);
	int (*dealloc_pd)(struct ibv_pd *pd);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access);
	int (*dereg_mr)(struct ibv_mr *mr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	int (*dealloc_mw)(struct ibv_mw *mw);
	struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *verbs);
	int (*destroy_comp_channel)(struct ibv_comp_channel *cc);
	struct ibv_cq *(*create_cq)(struct ibv_context *verbs, int cqe, void *ctx,
				    struct ibv_comp_channel *cc, int vector);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*get_cq_event)(struct ibv_comp_channel *cc, struct ibv_cq **cq, void **ctx);
	void (*ack_cq_events)(struct ibv_cq *cq, unsigned n);
	int (*poll_cq)(struct ibv_cq *cq, int n, struct ibv_wc *wc);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
};

/* Tests only: use v from now on (NULL: the real librdmacm/libibverbs). */
void be_verbs_set(const struct be_verbs *v);

#endif /* RPCRDMA_GW_BE_VERBS_H */
