// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the CCP codecs (chunking/ccp.c).  Invariants: decode
 * succeeds exactly when 12 bytes are present, and encode reproduces them.
 */
#include <stdint.h>
#include <string.h>

#include "chunking.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ccp_req q;
	struct ccp_reply p;
	uint8_t out[CCP_ARGS_LEN];
	struct xdr_enc xe;
	struct iovec one;
	struct xdr_cur xc;

	xdr_cur_init_buf(&xc, &one, data, size);
	if (ccp_req_decode(&xc, &q) != (size >= CCP_ARGS_LEN))
		__builtin_trap();
	if (size >= CCP_ARGS_LEN) {
		xdr_enc_init(&xe, out, sizeof(out));
		if (!ccp_req_encode(&xe, &q) || memcmp(out, data, CCP_ARGS_LEN) != 0)
			__builtin_trap();
	}
	xdr_cur_init_buf(&xc, &one, data, size);
	if (ccp_reply_decode(&xc, &p) != (size >= CCP_ARGS_LEN))
		__builtin_trap();
	if (size >= CCP_ARGS_LEN) {
		xdr_enc_init(&xe, out, sizeof(out));
		if (!ccp_reply_encode(&xe, &p) || memcmp(out, data, CCP_ARGS_LEN) != 0)
			__builtin_trap();
	}
	return 0;
}
