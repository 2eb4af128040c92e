// SPDX-License-Identifier: MIT
/*
 * This file contains the byte vectors shared by the wire-format tests and
 * fuzzers (see vectors.h).  The kernel vectors are the measured bytes listed
 * in docs/protocol.md.
 */
#include <string.h>

#include "chunking.h"
#include "vectors.h"

size_t vec_words(uint8_t *out, const uint32_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		chk_put_be32(out + 4 * i, w[i]);
	return 4 * n;
}

const uint8_t vec_kernel_null_reply[VEC_KERNEL_NULL_REPLY_LEN] = {
	/* rdma_xid, rdma_vers 1, rdma_credit 64, RDMA_MSG, no chunks */
	0x12, 0x34, 0x56, 0x78, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x40,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	/* xid, REPLY, MSG_ACCEPTED, AUTH_NONE verf (flavor 0, length 0), SUCCESS */
	0x12, 0x34, 0x56, 0x78, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

const uint8_t vec_kernel_pd[VEC_KERNEL_PD_LEN] = {
	0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03,
};

size_t vec_rpc_call_sys(uint8_t *out, size_t cap, uint32_t xid, uint32_t prog, uint32_t vers,
			uint32_t proc, const char *name, unsigned ngids, size_t args_len)
{
	struct rpc_auth_sys as = { .as_stamp = 0x5eed, .as_uid = 1000, .as_gid = 100 };
	struct xdr_enc xe;

	as.as_namelen = (uint32_t)strlen(name);
	if (as.as_namelen > RPC_AUTH_SYS_MAX_NAME || ngids > RPC_AUTH_SYS_MAX_GIDS)
		return 0;
	memcpy(as.as_machinename, name, as.as_namelen);
	as.as_ngids = ngids;
	for (unsigned i = 0; i < ngids; i++)
		as.as_gids[i] = 100 + i;
	xdr_enc_init(&xe, out, cap);
	if (!rpc_call_encode(&xe, xid, prog, vers, proc, &as) || xe.xe_cap - xe.xe_len < args_len)
		return 0;
	memset(xe.xe_buf + xe.xe_len, 0, args_len);
	return xe.xe_len + args_len;
}
