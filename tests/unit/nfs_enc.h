/* SPDX-License-Identifier: MIT */
/*
 * nfs_enc.h - XDR test encoder for NFS calls and replies (tests only).
 *
 * Builds whole RPC messages with the chunking module's xdr_enc, so test
 * vectors come from code, never from hand-typed bytes.  Linked into every
 * unit test, bench and fuzz binary: no cmocka, no main, only chunking.h.
 */
#ifndef RPCRDMA_GW_NFS_ENC_H
#define RPCRDMA_GW_NFS_ENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chunking.h"

/* RPC call header: xid, CALL, rpcvers 2, prog, vers, proc, AUTH_SYS
 * credential (machine "gw", uid 0, gid 0, one gid), AUTH_NONE verifier. */
bool nfs_enc_call_hdr(struct xdr_enc *xe, uint32_t xid, uint32_t prog, uint32_t vers,
		      uint32_t proc);
/* RPC reply header: xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS. */
bool nfs_enc_reply_hdr(struct xdr_enc *xe, uint32_t xid);

/* Deterministic payload bytes: byte i of a run seeded by seed. */
uint8_t nfs_enc_byte(uint32_t seed, size_t i);

/*
 * Encode by format, one character per item (spaces ignored):
 *   w  uint32 (unsigned)         h  uint64 (unsigned long long)
 *   s  stateid4 (16 bytes)       v  verifier4 (8 bytes)
 *   i  16-byte id (sessionid4, deviceid4)
 *   t  nfstime4 (12 bytes)       z  n zero bytes (unsigned n, multiple of 4)
 *   o  opaque<>: unsigned length, content nfs_enc_byte(length, i)
 *   b  bitmap4: unsigned n, then n unsigned words
 *   a  fattr4: two bitmap words (unsigned), attrlist length (unsigned)
 */
bool nfs_enc_fmt(struct xdr_enc *xe, const char *fmt, ...);

/* NFSv4 COMPOUND call/reply heads: tag "t", minorversion, op count. */
bool nfs_enc_compound_args(struct xdr_enc *xe, uint32_t minor, uint32_t nops);
bool nfs_enc_compound_res(struct xdr_enc *xe, uint32_t status, uint32_t nops);

/* Cut spans out of a message: copy msg[0..len) to out leaving out every
 * [pos, pos + round4(dlen)) of cuts (sorted), i.e. what the server sends
 * inline when those data items travel in write chunks.  Returns out's
 * length. */
size_t nfs_enc_cut(const uint8_t *msg, size_t len, const struct xdr_span *cuts, unsigned ncuts,
		   uint8_t *out);

/* Assemble reply pieces into out (cap bytes): inline spans from the
 * inline stream `inl`, chunk data from chunks[i], pad from chk_zero_pad.
 * Returns the length, or (size_t)-1 on overflow. */
size_t nfs_enc_assemble(const struct chk_reply_walk *rw, const uint8_t *inl,
			const uint8_t *const *chunks, uint8_t *out, size_t cap);

#endif
