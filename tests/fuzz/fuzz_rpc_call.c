// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for rpc_call_decode() and rpc_auth_sys_decode()
 * (chunking/rpc.c).  The input is decoded contiguous and split in two
 * iovecs at a point taken from its own length.  Invariants:
 *  - both decodes agree (result, error, every field);
 *  - positions lie inside the stream, auth bodies are <= 400 bytes;
 *  - an RPCSEC_GSS service is 1..3, and only for RPCSEC_GSS;
 *  - a decoded AUTH_SYS body re-encodes to exactly its bytes.
 */
#include <stdint.h>
#include <string.h>

#include "chunking.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(const struct rpc_call_hdr *a, const struct rpc_call_hdr *b)
{
	return a->rc_xid == b->rc_xid && a->rc_rpcvers == b->rc_rpcvers &&
	       a->rc_prog == b->rc_prog && a->rc_vers == b->rc_vers && a->rc_proc == b->rc_proc &&
	       a->rc_cred.oa_flavor == b->rc_cred.oa_flavor &&
	       a->rc_cred.oa_body.xs_pos == b->rc_cred.oa_body.xs_pos &&
	       a->rc_cred.oa_body.xs_len == b->rc_cred.oa_body.xs_len &&
	       a->rc_verf.oa_flavor == b->rc_verf.oa_flavor &&
	       a->rc_verf.oa_body.xs_len == b->rc_verf.oa_body.xs_len &&
	       a->rc_gss_service == b->rc_gss_service && a->rc_gss_proc == b->rc_gss_proc &&
	       a->rc_gss_seq == b->rc_gss_seq && a->rc_args_pos == b->rc_args_pos &&
	       a->rc_auth_stat == b->rc_auth_stat && a->rc_tls_probe == b->rc_tls_probe;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpc_call_hdr c1, c2;
	struct rpc_auth_sys as1, as2;
	struct iovec one, two[2];
	struct xdr_cur x1, x2;
	uint8_t body[RPC_AUTH_MAX_BODY], enc[RPC_AUTH_MAX_BODY];
	struct xdr_enc xe;
	size_t cut = size ? (size * 7 + 3) % (size + 1) : 0;
	bool ok1, ok2;

	xdr_cur_init_buf(&x1, &one, data, size);
	ok1 = rpc_call_decode(&x1, &c1);
	two[0] = (struct iovec){ (void *)data, cut };
	two[1] = (struct iovec){ (void *)(data + cut), size - cut };
	xdr_cur_init(&x2, two, 2);
	ok2 = rpc_call_decode(&x2, &c2);
	if (ok1 != ok2 || x1.xc_err != x2.xc_err || !same(&c1, &c2))
		__builtin_trap();
	if (!ok1)
		return 0;
	if (c1.rc_args_pos > size || c1.rc_cred.oa_body.xs_len > RPC_AUTH_MAX_BODY ||
	    c1.rc_verf.oa_body.xs_len > RPC_AUTH_MAX_BODY ||
	    c1.rc_cred.oa_body.xs_pos + c1.rc_cred.oa_body.xs_len > size)
		__builtin_trap();
	/* The service of a decoded GSS credential is as sent (the server
	 * answers one it does not know); its gss_proc is one of the four. */
	if (c1.rc_cred.oa_flavor != RPC_RPCSEC_GSS && (c1.rc_gss_service || c1.rc_gss_proc))
		__builtin_trap();
	if (c1.rc_cred.oa_flavor == RPC_RPCSEC_GSS && c1.rc_gss_proc > 3)
		__builtin_trap();

	ok1 = rpc_auth_sys_decode(&x1, &c1.rc_cred.oa_body, &as1);
	ok2 = rpc_auth_sys_decode(&x2, &c2.rc_cred.oa_body, &as2);
	if (ok1 != ok2 || !xdr_ok(&x1) || !xdr_ok(&x2))
		__builtin_trap();
	if (ok1) {
		if (as1.as_namelen > RPC_AUTH_SYS_MAX_NAME || as1.as_ngids > RPC_AUTH_SYS_MAX_GIDS ||
		    memcmp(&as1.as_gids, &as2.as_gids, sizeof(as1.as_gids)) != 0 ||
		    strcmp(as1.as_machinename, as2.as_machinename) != 0)
			__builtin_trap();
		xdr_enc_init(&xe, enc, sizeof(enc));
		if (!rpc_auth_sys_encode(&xe, &as1) || xe.xe_len != c1.rc_cred.oa_body.xs_len ||
		    xdr_span_copy(&x1, &c1.rc_cred.oa_body, body, sizeof(body)) != xe.xe_len ||
		    memcmp(body, enc, xe.xe_len) != 0) {
			/* Pad bytes are not checked on decode (RFC 4506 3 says
			 * they are zero; we are lenient): compare past them
			 * only when the name's pad is zero in the input. */
			size_t np = 8 + xdr_round4(as1.as_namelen);

			if (xe.xe_len != c1.rc_cred.oa_body.xs_len ||
			    memcmp(body + np, enc + np, xe.xe_len - np) != 0 ||
			    memcmp(body, enc, 8 + as1.as_namelen) != 0)
				__builtin_trap();
		}
	}
	return 0;
}
