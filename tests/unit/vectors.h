/* SPDX-License-Identifier: MIT */
/*
 * vectors.h - byte vectors and small encoders shared by the wire-format unit
 * tests and fuzzers.  Linked into every unit test, bench and fuzz binary:
 * no cmocka, no main, no allocation.
 */
#ifndef RPCRDMA_GW_TESTS_VECTORS_H
#define RPCRDMA_GW_TESTS_VECTORS_H

#include <stddef.h>
#include <stdint.h>

/* Writes n 32-bit words big-endian into out; returns 4 * n. */
size_t vec_words(uint8_t *out, const uint32_t *w, size_t n);

/* Measured from Linux nfsd 6.1 (docs/protocol.md): its reply to a user-space
 * NULL call, transport header (28 bytes) then RPC reply (24 bytes). */
#define VEC_KERNEL_NULL_REPLY_LEN	52
#define VEC_KERNEL_NULL_REPLY_HDR_LEN	28
extern const uint8_t vec_kernel_null_reply[VEC_KERNEL_NULL_REPLY_LEN];

/* The kernel's RFC 8797 private data: f6 ab 0e 18 01 00 03 03 + 188 zeros. */
#define VEC_KERNEL_PD_LEN		196
extern const uint8_t vec_kernel_pd[VEC_KERNEL_PD_LEN];

/*
 * Builds an RPC call header (RFC 5531 9) with an AUTH_SYS credential
 * (machine name `name`, ngids gids), AUTH_NONE verifier and `args_len`
 * zero bytes of arguments into out; returns the length, 0 if cap is short.
 */
size_t vec_rpc_call_sys(uint8_t *out, size_t cap, uint32_t xid, uint32_t prog, uint32_t vers,
			uint32_t proc, const char *name, unsigned ngids, size_t args_len);

#endif
