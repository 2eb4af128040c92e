// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for rpcrdma_hdr_decode() (chunking/rpcrdma_hdr.c).
 * Invariants, trapped on violation:
 *  - a decoded header lies inside the buffer (rh_hdr_len <= len, body too);
 *  - rpcrdma_hdr_len() equals rh_hdr_len;
 *  - re-encoding reproduces the input's header bytes exactly (XDR is
 *    canonical here: bools are 0/1, so decode -> encode -> decode is the
 *    identity);
 *  - counts stay within the runtime limits;
 *  - a tighter limit never accepts what the default limits refused.
 */
#include <stdint.h>
#include <string.h>

#include "chunking.h"

static struct rpcrdma_hdr H;
static uint8_t out[16 + 8 + RPCRDMA_MAX_READS * 24 + 4 + RPCRDMA_MAX_WCHUNKS * 8 + 8 +
		   RPCRDMA_MAX_SEGS * 16 + 64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_limits lim, tight = { 2, 2, 3 };
	enum rpcrdma_hdr_err err;
	struct xdr_enc xe;
	bool ok;

	rpcrdma_limits_default(&lim);
	ok = rpcrdma_hdr_decode(data, size, &lim, &H, &err);
	if (ok != (err == RPCRDMA_HDR_OK || err == RPCRDMA_HDR_BAD_ERRCODE))
		__builtin_trap();
	if (ok) {
		if (H.rh_hdr_len > size || H.rh_body_off > size || H.rh_body_off < H.rh_hdr_len)
			__builtin_trap();
		if (rpcrdma_hdr_len(&H) != H.rh_hdr_len)
			__builtin_trap();
		if (H.rh_nreads > lim.lim_max_reads || H.rh_nwrites > lim.lim_max_wchunks ||
		    H.rh_nsegs > RPCRDMA_MAX_SEGS)
			__builtin_trap();
		for (unsigned i = 0; i < H.rh_nreads; i++)
			if (H.rh_reads[i].rd_position & 3)
				__builtin_trap();
		xdr_enc_init(&xe, out, sizeof(out));
		if (!rpcrdma_hdr_encode(&xe, &H) || xe.xe_len != H.rh_hdr_len ||
		    memcmp(out, data, xe.xe_len) != 0)
			__builtin_trap();
	}
	if (rpcrdma_hdr_decode(data, size, &tight, &H, &err) && !ok)
		__builtin_trap();
	(void)rpcrdma_hdr_decode(data, size, NULL, &H, &err);
	(void)rpcrdma_hdr_check_reply(&H, &err);
	(void)rpcrdma_msgp_pad(&H, size, (uint32_t)size);
	return 0;
}
