// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for rpc_reply_decode() / rpc_reply_encode()
 * (chunking/rpc.c).  Invariants: a decoded reply header re-encodes to the
 * bytes it was decoded from (up to the verifier pad, which the decoder does
 * not police), and decoding the encoding gives the same fields.
 */
#include <stdint.h>
#include <string.h>

#include "chunking.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpc_reply_hdr r, r2;
	uint8_t out[64 + RPC_AUTH_MAX_BODY];
	struct iovec one, one2;
	struct xdr_cur xc, xc2;
	struct xdr_enc xe;
	size_t used;
	const void *verf;

	xdr_cur_init_buf(&xc, &one, data, size);
	if (!rpc_reply_decode(&xc, &r))
		return 0;
	used = xdr_pos(&xc);
	if (used > size || r.rr_verf.oa_body.xs_len > RPC_AUTH_MAX_BODY ||
	    (r.rr_stat == RPC_MSG_ACCEPTED && r.rr_accept_stat == RPC_SUCCESS &&
	     r.rr_results_pos != used))
		__builtin_trap();
	verf = r.rr_verf.oa_body.xs_len ? data + r.rr_verf.oa_body.xs_pos : NULL;
	xdr_enc_init(&xe, out, sizeof(out));
	if (!rpc_reply_encode(&xe, &r, verf) || xe.xe_len != used)
		__builtin_trap();
	xdr_cur_init_buf(&xc2, &one2, out, xe.xe_len);
	if (!rpc_reply_decode(&xc2, &r2))
		__builtin_trap();
	if (r2.rr_xid != r.rr_xid || r2.rr_stat != r.rr_stat ||
	    r2.rr_accept_stat != r.rr_accept_stat || r2.rr_reject_stat != r.rr_reject_stat ||
	    r2.rr_auth_stat != r.rr_auth_stat || r2.rr_low != r.rr_low || r2.rr_high != r.rr_high ||
	    r2.rr_verf.oa_flavor != r.rr_verf.oa_flavor ||
	    r2.rr_verf.oa_body.xs_len != r.rr_verf.oa_body.xs_len ||
	    r2.rr_results_pos != r.rr_results_pos)
		__builtin_trap();
	/* Bytes equal except the verifier's pad. */
	size_t pad_at = r.rr_verf.oa_body.xs_pos + r.rr_verf.oa_body.xs_len;
	size_t pad = xdr_pad(r.rr_verf.oa_body.xs_len);

	if (r.rr_stat != RPC_MSG_ACCEPTED)
		pad = 0;
	if (memcmp(out, data, pad ? pad_at : used) != 0 ||
	    (pad && memcmp(out + pad_at + pad, data + pad_at + pad, used - pad_at - pad) != 0))
		__builtin_trap();
	/* Local replies are well formed for every status decoded. */
	xdr_enc_init(&xe, out, sizeof(out));
	if (!rpc_local_reply(&xe, r.rr_xid, &r))
		__builtin_trap();
	return 0;
}
