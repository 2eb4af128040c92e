// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for rpcrdma_pd_decode() (chunking/rpcrdma_pd.c).
 * Invariants: sizes are 1 KiB multiples in 1024..262144 (RFC 8797 4.2);
 * a failed decode leaves the 5.1 defaults; a successful one re-encodes to
 * eight bytes found in the input (modulo reserved bits) that decode to the
 * same values; thresholds never exceed either side's size.
 */
#include <stdint.h>
#include <string.h>

#include "chunking.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool size_ok(uint32_t s)
{
	return s >= 1024 && s <= 262144 && s % 1024 == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_pd pd, again, ours = { true, 8192, 16384 };
	uint8_t enc[RPCRDMA_PD_LEN];
	uint32_t snd, rcv;

	if (rpcrdma_pd_decode(data, size, &pd)) {
		if (!size_ok(pd.pd_send_size) || !size_ok(pd.pd_recv_size))
			__builtin_trap();
		rpcrdma_pd_encode(&pd, enc);
		if (!rpcrdma_pd_decode(enc, sizeof(enc), &again) ||
		    again.pd_remote_inv != pd.pd_remote_inv ||
		    again.pd_send_size != pd.pd_send_size || again.pd_recv_size != pd.pd_recv_size)
			__builtin_trap();
		if (!memmem(data, size, enc, 5))	/* identifier + version present */
			__builtin_trap();
	} else if (pd.pd_remote_inv || pd.pd_send_size != 1024 || pd.pd_recv_size != 1024) {
		__builtin_trap();
	}
	rpcrdma_inline_thresholds(&ours, &pd, &snd, &rcv);
	if (snd > ours.pd_send_size || snd > pd.pd_recv_size || rcv > ours.pd_recv_size ||
	    rcv > pd.pd_send_size)
		__builtin_trap();
	return 0;
}
