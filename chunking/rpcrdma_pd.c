// SPDX-License-Identifier: MIT
/*
 * This file contains the RFC 8797 CM private data codec: the eight octets an
 * RPC-over-RDMA version 1 peer puts in the connection manager's private data
 * to advertise its inline thresholds and remote-invalidation support.
 *
 *   octet 0-3  Format Identifier 0xf6ab0e18 (network order)
 *   octet 4    Version (1)
 *   octet 5    7 reserved bits, then R (the least significant bit, "bit 15"
 *              of the second word, RFC 8797 5.1)
 *   octet 6    Send Size:    (bytes / 1024) - 1
 *   octet 7    Receive Size: (bytes / 1024) - 1
 *
 * The Linux server sends flags 0 and 4096-byte buffers as f6 ab 0e 18 01 00
 * 03 03, zero-padded to 196 bytes (the IB CM REP private data length).
 */
#include <string.h>

#include "chunking.h"

#define PD_FLAG_R		0x01	/* RFC 8797 4: R, lowest bit of octet 5 */
#define PD_SIZE_UNIT		1024u
#define PD_SIZE_MAX		(256u * PD_SIZE_UNIT)	/* encoded 255: 262144 */

/* RFC 8797 4.2: the sender divides its buffer size by 1024 and subtracts
 * one; sizes outside 1024..262144 are clamped to what the field holds. */
static uint8_t pd_size_encode(uint32_t bytes)
{
	uint32_t units = bytes / PD_SIZE_UNIT;

	if (units == 0)
		units = 1;
	if (units > 256)
		units = 256;
	return (uint8_t)(units - 1);
}

/* RFC 8797 4.2: "adds one to the encoded value and then multiplies that
 * result by 1024". */
static uint32_t pd_size_decode(uint8_t v)
{
	return ((uint32_t)v + 1) * PD_SIZE_UNIT;
}

void rpcrdma_pd_encode(const struct rpcrdma_pd *pd, uint8_t out[RPCRDMA_PD_LEN])
{
	chk_put_be32(out, RPCRDMA_PD_FORMAT_ID);
	out[4] = RPCRDMA_PD_VERSION;
	out[5] = pd->pd_remote_inv ? PD_FLAG_R : 0;	/* reserved bits zero (4) */
	out[6] = pd_size_encode(pd->pd_send_size);
	out[7] = pd_size_encode(pd->pd_recv_size);
}

/* RFC 8797 5.1: no conforming message -> R clear, both sizes encoded 0. */
static void pd_defaults(struct rpcrdma_pd *pd)
{
	pd->pd_remote_inv = false;
	pd->pd_send_size = RPCRDMA_PD_DEFAULT_SIZE;
	pd->pd_recv_size = RPCRDMA_PD_DEFAULT_SIZE;
}

/*
 * RFC 8797 5.2: the buffer "is searched for the Format Identifier word", whose
 * offset "is not restricted to any alignment"; once found, the receiver
 * "should check" the version and that the content does not overrun the
 * buffer.  A candidate that fails those checks is taken for someone else's
 * bytes and the search goes on; reserved bits are ignored (section 4).
 */
bool rpcrdma_pd_decode(const void *buf, size_t len, struct rpcrdma_pd *pd)
{
	const uint8_t *p = buf;

	pd_defaults(pd);
	if (!buf || len < RPCRDMA_PD_LEN)
		return false;
	for (size_t i = 0; i + RPCRDMA_PD_LEN <= len; i++) {
		if (chk_be32(p + i) != RPCRDMA_PD_FORMAT_ID || p[i + 4] != RPCRDMA_PD_VERSION)
			continue;
		pd->pd_remote_inv = (p[i + 5] & PD_FLAG_R) != 0;
		pd->pd_send_size = pd_size_decode(p[i + 6]);
		pd->pd_recv_size = pd_size_decode(p[i + 7]);
		return true;
	}
	return false;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* RFC 8797 4.2: each direction uses the smaller of the sender's send size
 * and the receiver's receive size. */
void rpcrdma_inline_thresholds(const struct rpcrdma_pd *ours, const struct rpcrdma_pd *peer,
			       uint32_t *send_threshold, uint32_t *recv_threshold)
{
	*send_threshold = min_u32(ours->pd_send_size, peer->pd_recv_size);
	*recv_threshold = min_u32(peer->pd_send_size, ours->pd_recv_size);
}
