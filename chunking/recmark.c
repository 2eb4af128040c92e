// SPDX-License-Identifier: MIT
/*
 * This file contains ONC RPC record marking (RFC 5531 section 11), the
 * framing of RPC messages on a TCP byte stream.
 *
 * A record is one or more fragments; each fragment is a 4-byte header (the
 * top bit marks the last fragment, the other 31 bits give the data length)
 * followed by that many data bytes.
 *
 * The decoder is a three-state machine driven by whatever bytes the socket
 * produced, in any split down to one byte per call:
 *
 *   HEADER   rm_in_frag = false: collecting rm_hdr[0..3] (rm_hdr_have).
 *            When the 4th byte arrives the length is checked against the
 *            record maximum (the whole record, not the fragment, so a
 *            peer cannot grow a record past the limit with many small
 *            fragments) and the decoder moves to DATA, or, for an empty
 *            fragment, stays in HEADER (and completes the record if it was
 *            the last one: zero-length fragments are legal).
 *   DATA     rm_in_frag = true: hands back the run of data bytes available
 *            in this call, up to rm_frag_left; the caller appends them to
 *            its record in place.  When rm_frag_left reaches zero in the
 *            last fragment, the record is done.
 *   ERROR    RM_ERR_TOO_BIG: sticky; the connection is beyond repair (the
 *            decoder would have to skip up to 2 GiB blindly), the caller
 *            closes it.  A record is never truncated.
 *
 * Each call consumes either header bytes (data_len = 0) or data bytes
 * (data_len = consumed), never both, so the caller's bookkeeping is one
 * branch.
 */
#include <string.h>

#include "chunking.h"

void rm_dec_init(struct rm_dec *d, uint32_t max_record)
{
	memset(d, 0, sizeof(*d));
	d->rm_max_record = max_record;
}

enum rm_status rm_dec_feed(struct rm_dec *d, const uint8_t *p, size_t n,
			   size_t *consumed, size_t *data_len, bool *record_done)
{
	*consumed = 0;
	*data_len = 0;
	*record_done = false;
	/* Sticky error: the record would overflow; nothing more is parsed. */
	if ((uint64_t)d->rm_record_len + d->rm_frag_left > d->rm_max_record)
		return RM_ERR_TOO_BIG;
	if (n == 0)
		return RM_OK;

	if (d->rm_in_frag) {
		size_t run = n < d->rm_frag_left ? n : d->rm_frag_left;

		d->rm_frag_left -= (uint32_t)run;
		d->rm_record_len += (uint32_t)run;
		*consumed = run;
		*data_len = run;
		if (d->rm_frag_left == 0) {
			d->rm_in_frag = false;
			*record_done = d->rm_last;
		}
		return RM_OK;
	}

	/* A new header after a completed record starts a new record. */
	if (d->rm_hdr_have == 0 && d->rm_last) {
		d->rm_last = false;
		d->rm_record_len = 0;
	}
	while (d->rm_hdr_have < 4 && *consumed < n)
		d->rm_hdr[d->rm_hdr_have++] = p[(*consumed)++];
	if (d->rm_hdr_have < 4)
		return RM_OK;

	uint32_t word = chk_be32(d->rm_hdr);
	uint32_t len = word & RM_LEN_MASK;

	d->rm_hdr_have = 0;
	d->rm_last = (word & RM_LAST_FRAG) != 0;
	if ((uint64_t)d->rm_record_len + len > d->rm_max_record) {
		/* Keep the offending length so the error stays sticky. */
		d->rm_frag_left = len;
		return RM_ERR_TOO_BIG;
	}
	d->rm_frag_left = len;
	if (len > 0)
		d->rm_in_frag = true;
	else
		*record_done = d->rm_last;
	return RM_OK;
}

void rm_encode_hdr(uint8_t out[4], uint32_t len, bool last)
{
	chk_put_be32(out, (len & RM_LEN_MASK) | (last ? RM_LAST_FRAG : 0));
}
