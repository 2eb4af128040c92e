// SPDX-License-Identifier: MIT
/*
 * The parts of rpcrdma-call (rpcrdma-call.c: the tool, its backend and its
 * NULL commands; rpcrdma-call-nfs.c: MOUNT over TCP and the NFSv3 commands
 * rw and readdir) and what they share.
 */
#ifndef RPCRDMA_CALL_H
#define RPCRDMA_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
double now_s(void);
/* Submit the call of d and run the loop until its reply is in sc. */
void call_sync(struct tool *t, const struct be_call_desc *d, struct sync_call *sc);
void rpc_call_hdr(struct xdr_enc *xe, uint32_t xid, uint32_t prog, uint32_t vers,
		  uint32_t proc);
void reply_cursor(const struct be_reply *r, struct xdr_cur *xc, const char *what);

/* rpcrdma-call-nfs.c */
void cmd_rw(struct tool *t, const char *export, const char *name, size_t size);
void cmd_readdir(struct tool *t, const char *export, const char *dir, unsigned expect);

#endif
