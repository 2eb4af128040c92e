// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the record-marking decoder (chunking/recmark.c).
 * The first two input bytes choose the maximum record size (0..65535) and
 * a feeding step; the rest is the TCP byte stream.  Invariants:
 *  - each call consumes > 0 and <= n bytes, data_len is 0 or all of them;
 *  - no record exceeds the maximum;
 *  - feeding the stream one byte at a time and in steps gives the same
 *    record data, the same record boundaries and the same error point.
 */
#include <stdint.h>
#include <string.h>

#include "chunking.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct run {
	uint64_t hash;		/* of data bytes and record boundaries */
	size_t data_total;
	unsigned records;
	enum rm_status st;
	size_t stopped_at;	/* stream offset where an error stopped us */
};

static void mix(uint64_t *h, uint64_t v)
{
	*h = (*h ^ v) * 0x100000001b3ull;
}

static void run_feed(const uint8_t *s, size_t n, size_t step, uint32_t max, struct run *r)
{
	struct rm_dec d;
	size_t off = 0, rec = 0;

	memset(r, 0, sizeof(*r));
	r->hash = 0xcbf29ce484222325ull;
	rm_dec_init(&d, max);
	while (off < n) {
		size_t piece = n - off < step ? n - off : step;
		size_t consumed, data_len;
		bool done;

		r->st = rm_dec_feed(&d, s + off, piece, &consumed, &data_len, &done);
		if (r->st != RM_OK) {
			r->stopped_at = off;
			return;
		}
		if (consumed == 0 || consumed > piece || (data_len && data_len != consumed))
			__builtin_trap();
		for (size_t i = 0; i < data_len; i++)
			mix(&r->hash, s[off + i]);
		r->data_total += data_len;
		rec += data_len;
		if (rec > max)
			__builtin_trap();
		if (done) {
			mix(&r->hash, 0x1000 + rec);
			r->records++;
			rec = 0;
		}
		off += consumed;
	}
	r->stopped_at = n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run a, b;
	uint32_t max;
	size_t step;

	if (size < 2)
		return 0;
	max = (uint32_t)data[0] << 8 | data[1];
	step = (data[1] & 0x1f) + 2;
	run_feed(data + 2, size - 2, 1, max, &a);
	run_feed(data + 2, size - 2, step, max, &b);
	if (a.hash != b.hash || a.records != b.records || a.st != b.st ||
	    a.data_total != b.data_total)
		__builtin_trap();
	/* With steps the error is reported at the start of the piece that held
	 * the completing header byte: never later than byte-at-a-time. */
	if (b.st != RM_OK && b.stopped_at > a.stopped_at)
		__builtin_trap();
	return 0;
}
