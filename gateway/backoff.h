/* SPDX-License-Identifier: MIT */
/*
 * backoff.h - how often a server's rpcbind is asked (prefix gw_backoff_,
 * members bo_ and boe_): one table for the whole process, shared by every
 * worker and every route.
 *
 * Each TCP route without a port asks the server's rpcbind before each
 * connection.  Without a shared memory of failures, a server without
 * rpcbind (an NFSv4-only one) was asked by every route of every worker
 * at every reconnect_interval: 3 routes x 2 workers, six connections a
 * second to a port that refuses them, for ever.  Here a failure makes
 * every asker of that backend wait, the wait doubling from
 * reconnect_interval up to GW_BACKOFF_CAP_MS: rpcbind not answering is a
 * fact about the server (key: backend), a program not registered one
 * about the program (key: backend and program).  A success forgets both.
 *
 * Only connection attempts read or write it, never a call: a mutex is
 * enough.  Full (more backends and programs than GW_BACKOFF_SLOTS), the
 * entry whose wait ends first is reused: it is a rate, not a state.
 */
#ifndef RPCRDMA_GW_BACKOFF_H
#define RPCRDMA_GW_BACKOFF_H

#include <stddef.h>
#include <stdint.h>

#define GW_BACKOFF_CAP_MS	60000u
#define GW_BACKOFF_SLOTS	64u

struct gw_backoff;

/* NULL when out of memory. */
struct gw_backoff *gw_backoff_new(void);
void gw_backoff_free(struct gw_backoff *bo);
/* Before asking backend's rpcbind about prog at now_ms: 0, ask now (after
 * a failure the asker claims the turn: the others wait one more step);
 * else the milliseconds to wait, and msg (len bytes) gets the words of the
 * failure that set the wait.  bo NULL: always 0. */
unsigned gw_backoff_wait(struct gw_backoff *bo, const char *backend, uint32_t prog,
			 uint64_t now_ms, char *msg, size_t len);
/* What the asker got (gw_rpcbind_getport): 0 an answer, -1 prog not
 * registered, -2 rpcbind did not answer; msg its words; base_ms the first
 * wait (reconnect_interval).  The wait that follows a failure, in ms. */
unsigned gw_backoff_result(struct gw_backoff *bo, const char *backend, uint32_t prog, int rc,
			   const char *msg, uint64_t now_ms, unsigned base_ms);

#endif /* RPCRDMA_GW_BACKOFF_H */
