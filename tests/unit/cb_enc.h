/* SPDX-License-Identifier: MIT */
/*
 * cb_enc.h - XDR builders for NFSv4.1 backchannel test messages: RPC
 * calls and replies, a server's CB_COMPOUND (CB_SEQUENCE + CB_RECALL), a
 * client's CREATE_SESSION / BIND_CONN_TO_SESSION reply.  Shared by the
 * decoder tests (test_nfs_cb.c) and the relay tests (test_gw_callback.c).
 */
#ifndef RPCRDMA_GW_TEST_CB_ENC_H
#define RPCRDMA_GW_TEST_CB_ENC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define CBE_NFS		100003u
#define CBE_CB_PROG	0x40000000u

struct cbe_buf {
	uint8_t b[512];
	size_t n;
};

void cbe_32(struct cbe_buf *w, uint32_t v);
/* 16 session ID bytes seed, seed + 1, ... */
void cbe_sid(struct cbe_buf *w, uint8_t seed);
/* RPC CALL header with AUTH_NONE (starts the buffer afresh) */
void cbe_call(struct cbe_buf *w, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc);
/* Accepted, SUCCESS reply header (starts the buffer afresh) */
void cbe_reply_ok(struct cbe_buf *w, uint32_t xid);
/* CB_COMPOUND: tag "", minorversion, ident, CB_SEQUENCE(sid) + CB_RECALL */
void cbe_cb_compound(struct cbe_buf *w, uint32_t xid, uint32_t minor, uint8_t seed);
/* COMPOUND reply with one op: CREATE_SESSION (flags) or BIND_CONN (dir) */
void cbe_bind_reply(struct cbe_buf *w, uint32_t xid, uint32_t op, uint32_t opstatus, uint8_t seed,
		    uint32_t flags_or_dir);
/* COMPOUND reply SEQUENCE (session seed + 0x20) then CREATE_SESSION
 * (seed, flags): CREATE_SESSION sent inside a session (RFC 8881 18.36.3) */
void cbe_seq_cs_reply(struct cbe_buf *w, uint32_t xid, uint8_t seed, uint32_t flags);
struct iovec cbe_io(struct cbe_buf *w);

#endif
