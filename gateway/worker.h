/* SPDX-License-Identifier: MIT */
/*
 * worker.h - the workers of rpcrdma-gw (prefix gw_worker_, members gwk_):
 * `workers = N` event loops, shared nothing on the call path.  Each has
 * its own event base, buffer pool, RDMA context, gateway context (calls,
 * XID maps, paths and their connections to every server) and frontend
 * (its client connections).  Worker 0 runs on the main thread, which also
 * owns the listeners, signals and the operations interfaces; the others
 * run a thread each.
 *
 * Across workers there are only these:
 *  - a mailbox per worker (a pipe of fixed-size messages): accepted
 *    sockets handed off by worker 0's listeners, "stop" for the
 *    operations interfaces, "exit", a client host's reboot notification
 *    that came over UDP (nsm_udp.h) for the worker its address picks;
 *  - the stop: the operations interfaces (metrics, control socket,
 *    readiness, reload) stop every other worker at a turn of its loop,
 *    read or change its state from the main thread, then let it go on;
 *  - slices of the numbers a server sees from one gateway address: each
 *    worker's gateway XIDs and NLM lock owner slots (gateway.c, nlm_map.c).
 * A client connection goes to the worker its source address hashes to
 * (gw_worker_pick), so one client host's connections, NFSv4.1 sessions
 * and backchannel, NLM locks and per-source cap stay on one worker.
 */
#ifndef RPCRDMA_GW_WORKER_H
#define RPCRDMA_GW_WORKER_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "config.h"
#include "log.h"

struct event_base;
struct fe_frontend;
struct gw_ctx;
struct gw_pool;
struct gw_worker;

struct gw_worker_params {
	unsigned wp_index, wp_count;
	const struct cfg *wp_cfg;
	/* Worker 0: the main thread's log and counters.  The others: NULL
	 * stats, and a copy of the log (level, target) with a rate limit and
	 * counters of their own. */
	struct gw_log *wp_log;
	struct gw_stats *wp_stats;
	/* Worker 0: the main thread's loop (signals, operations).  NULL for
	 * the others: a loop and a thread of their own. */
	struct event_base *wp_base;
	/* Paths went up or down (gateway.h gp_paths_changed): called on the
	 * main thread, whichever worker's path it was. */
	void (*wp_paths_changed)(void *arg);
	void *wp_paths_changed_arg;
	struct gw_worker *wp_main;	/* worker 0 (NULL for worker 0 itself) */
	struct gw_nlm_names *wp_nlm_names;	/* shared by all workers (nlm_map.h), or NULL */
	struct gw_backoff *wp_backoff;	/* rpcbind backoff shared by all workers (backoff.h), or NULL */
	/* Worker 0's frontend hands every accepted socket to this hook
	 * (frontend.h fp_handoff), or keeps them all when NULL. */
	bool (*wp_handoff)(void *arg, int fd, const struct sockaddr *sa, socklen_t salen,
			   uint16_t lport, unsigned li);
	void *wp_handoff_arg;
};

/* Pool, RDMA context (when a route asks for rdma), gateway and frontend,
 * not started; NULL (reason logged) when any of them cannot be made. */
struct gw_worker *gw_worker_new(const struct gw_worker_params *p);
/* Starts the gateway's transports and, for a worker of its own, its
 * thread.  0 or a negative errno. */
int gw_worker_start(struct gw_worker *w);
/* Ends the thread of a worker of its own (its loop stops at its next turn,
 * then this returns); nothing for worker 0. */
void gw_worker_join(struct gw_worker *w);
/* Clients closed, transports, pool and loop freed (after gw_worker_join). */
void gw_worker_free(struct gw_worker *w);

struct gw_ctx *gw_worker_ctx(struct gw_worker *w);
struct fe_frontend *gw_worker_fe(struct gw_worker *w);
struct gw_stats *gw_worker_stats(struct gw_worker *w);
struct gw_log *gw_worker_log(struct gw_worker *w);
struct gw_pool *gw_worker_pool(struct gw_worker *w);
/* The RDMA context, created on the first rdma route (start or reload). */
int gw_worker_need_rdma(struct gw_worker *w);
/* Runs the event loop until it is broken or has no events, counting each
 * pass in GW_CTR_SYS_LOOP_WAIT (one epoll_wait at least); each pass is one
 * of the pass clock (gw_pass_us).  prewait (may be NULL) runs at the start
 * of each pass; when it returns true the pass does not block. */
typedef bool gw_loop_prewait_fn(void *arg);
int gw_loop_run(struct event_base *base, struct gw_stats *st, gw_loop_prewait_fn *prewait,
		void *arg);
/* The worker's loop's prewait (gw_loop_run; arg: the worker): the pass's
 * replies written to its clients (fe_flush), then its RDMA context's calls
 * posted and completion queues polled, re-armed once found empty, and the
 * replies those polls found written too. */
bool gw_worker_prewait(void *w);

/* `workers = 0`: one per core the daemon may run on (its affinity; a
 * core's hardware threads count once) in the NUMA node of the first RDMA
 * device that names one, else per core it may run on; 1 to
 * CFG_MAX_WORKERS.  sysfs is its root ("/sys"); node (may be NULL) gets
 * that node's CPUs the daemon may run on, empty without one; why (may be
 * NULL) says which. */
unsigned gw_worker_auto(const char *sysfs, cpu_set_t *node, char *why, size_t len);
/* CPUs of a sysfs cpulist ("0-3,8,10-11"), those in *allowed only; out
 * (may be NULL) gets them. */
unsigned gw_worker_cpulist(const char *list, const cpu_set_t *allowed, cpu_set_t *out);

/* What buffers, max_calls and max_clients (each per worker) come to over
 * n workers, in words for the start's log line and `status`: the
 * gateway-wide caps and pinned memory, and what one client host gets. */
void gw_worker_capacity(const struct cfg *cf, unsigned n, char *buf, size_t len);

/* The worker (0..n-1) of a client at sa: a hash of its address, not its
 * port, so that all of one host's connections meet on one worker. */
unsigned gw_worker_pick(const struct sockaddr *sa, unsigned n);
/* From the main thread: an accepted socket for w's frontend (admission
 * runs there).  Takes fd; false when w's mailbox is full (fd closed). */
bool gw_worker_take(struct gw_worker *w, int fd, const struct sockaddr *sa, socklen_t salen,
		    uint16_t lport, unsigned li);

/* From the main thread: a client host's SM_NOTIFY that came over UDP
 * (nsm_udp.h), for the one of the n workers w that tracks that host's
 * locks, to release them.  0: worker 0's own (release here); 1: handed to
 * its worker; -EAGAIN: that worker's mailbox is full. */
int gw_worker_nsm(struct gw_worker *const *w, unsigned n, const struct sockaddr *sa,
		  socklen_t salen);

/* From the main thread: w stops at a turn of its loop and waits, its
 * thread's CPU time sampled into its stats (gs_cpu_*), until
 * gw_worker_go.  For worker 0 (the caller's own loop) only the sample. */
void gw_worker_stop(struct gw_worker *w);
void gw_worker_go(struct gw_worker *w);

#endif /* RPCRDMA_GW_WORKER_H */
