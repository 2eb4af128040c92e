// SPDX-License-Identifier: MIT
/*
 * Unit tests for record marking (chunking/recmark.c), RFC 5531 section 11.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "chunking.h"

/* Feeds `in` to d in pieces of at most `step` bytes; gathers record data into
 * rec (records separated by counting), returns the number of records done. */
struct sink {
	uint8_t data[4096];
	size_t len;
	unsigned records;
	size_t rec_len[8];
	enum rm_status st;
};

static void feed(struct rm_dec *d, const uint8_t *in, size_t n, size_t step, struct sink *s)
{
	size_t off = 0, rec_start = 0;

	memset(s, 0, sizeof(*s));
	while (off < n) {
		size_t piece = n - off < step ? n - off : step;
		size_t used = 0;

		while (used < piece) {
			size_t consumed, data_len;
			bool done;

			s->st = rm_dec_feed(d, in + off + used, piece - used, &consumed, &data_len,
					    &done);
			if (s->st != RM_OK)
				return;
			assert_true(consumed > 0);
			assert_true(data_len == 0 || data_len == consumed);
			memcpy(s->data + s->len, in + off + used, data_len);
			s->len += data_len;
			used += consumed;
			if (done) {
				if (s->records < 8)
					s->rec_len[s->records] = s->len - rec_start;
				s->records++;
				rec_start = s->len;
			}
		}
		off += piece;
	}
}

/* Two records: "hello" in one fragment; "abc" + "" + "defg" in three
 * fragments, the empty one in the middle (RFC 5531 11: a fragment header
 * is a 31-bit length and a last-fragment bit; nothing forbids length 0). */
static const uint8_t two_records[] = {
	0x80, 0, 0, 5, 'h', 'e', 'l', 'l', 'o',
	0x00, 0, 0, 3, 'a', 'b', 'c',
	0x00, 0, 0, 0,
	0x80, 0, 0, 4, 'd', 'e', 'f', 'g',
};

/* 1. Every split of the stream, from one byte per call to all at once,
 * yields the same records. */
static void t01_every_step(void **state)
{
	struct rm_dec d;
	struct sink s;

	(void)state;
	for (size_t step = 1; step <= sizeof(two_records); step++) {
		rm_dec_init(&d, 1024);
		feed(&d, two_records, sizeof(two_records), step, &s);
		assert_int_equal(s.st, RM_OK);
		assert_int_equal(s.records, 2);
		assert_int_equal(s.rec_len[0], 5);
		assert_int_equal(s.rec_len[1], 7);
		assert_memory_equal(s.data, "helloabcdefg", 12);
		assert_int_equal(d.rm_hdr_have, 0);
		assert_false(d.rm_in_frag);
	}
}

/* 2. RFC 5531 11: a record of one empty last fragment is an empty record. */
static void t02_empty_record(void **state)
{
	static const uint8_t b[] = { 0x80, 0, 0, 0, 0x80, 0, 0, 1, 'x' };
	struct rm_dec d;
	struct sink s;

	(void)state;
	rm_dec_init(&d, 16);
	feed(&d, b, sizeof(b), 1, &s);
	assert_int_equal(s.records, 2);
	assert_int_equal(s.rec_len[0], 0);
	assert_int_equal(s.rec_len[1], 1);
}

/* 3. A record above the maximum is RM_ERR_TOO_BIG at the fragment header
 * that crosses it - never truncated - and the error is sticky.  Exactly the
 * maximum is accepted; several fragments count together. */
static void t03_too_big(void **state)
{
	static const uint8_t exact[] = { 0x00, 0, 0, 2, 'a', 'b', 0x80, 0, 0, 2, 'c', 'd' };
	static const uint8_t over[] = { 0x00, 0, 0, 2, 'a', 'b', 0x80, 0, 0, 3, 'c', 'd', 'e' };
	static const uint8_t huge[] = { 0xff, 0xff, 0xff, 0xff };
	size_t consumed, data_len;
	struct rm_dec d;
	struct sink s;
	bool done;

	(void)state;
	rm_dec_init(&d, 4);
	feed(&d, exact, sizeof(exact), 1, &s);
	assert_int_equal(s.st, RM_OK);
	assert_int_equal(s.records, 1);

	rm_dec_init(&d, 4);
	feed(&d, over, sizeof(over), 1, &s);
	assert_int_equal(s.st, RM_ERR_TOO_BIG);
	assert_int_equal(s.len, 2);		/* only the first fragment passed */
	assert_int_equal(s.records, 0);
	assert_int_equal(rm_dec_feed(&d, (const uint8_t *)"x", 1, &consumed, &data_len, &done),
			 RM_ERR_TOO_BIG);
	assert_int_equal(consumed, 0);

	rm_dec_init(&d, 1u << 20);
	feed(&d, huge, sizeof(huge), 4, &s);
	assert_int_equal(s.st, RM_ERR_TOO_BIG);
	/* the largest representable record is accepted when configured */
	rm_dec_init(&d, RM_LEN_MASK);
	feed(&d, huge, sizeof(huge), 4, &s);
	assert_int_equal(s.st, RM_OK);
	assert_true(d.rm_in_frag);
	assert_int_equal(d.rm_frag_left, RM_LEN_MASK);
}

/* 4. Zero bytes in: nothing consumed, no state change. */
static void t04_zero_input(void **state)
{
	size_t consumed = 9, data_len = 9;
	struct rm_dec d;
	bool done = true;

	(void)state;
	rm_dec_init(&d, 16);
	assert_int_equal(rm_dec_feed(&d, NULL, 0, &consumed, &data_len, &done), RM_OK);
	assert_int_equal(consumed, 0);
	assert_int_equal(data_len, 0);
	assert_false(done);
}

/* 5. A call consumes header bytes or data bytes, never both: a buffer with a
 * header and data takes two calls. */
static void t05_header_then_data(void **state)
{
	static const uint8_t b[] = { 0x80, 0, 0, 3, 'a', 'b', 'c' };
	size_t consumed, data_len;
	struct rm_dec d;
	bool done;

	(void)state;
	rm_dec_init(&d, 16);
	assert_int_equal(rm_dec_feed(&d, b, sizeof(b), &consumed, &data_len, &done), RM_OK);
	assert_int_equal(consumed, 4);
	assert_int_equal(data_len, 0);
	assert_false(done);
	assert_int_equal(rm_dec_feed(&d, b + 4, 3, &consumed, &data_len, &done), RM_OK);
	assert_int_equal(consumed, 3);
	assert_int_equal(data_len, 3);
	assert_true(done);
	assert_int_equal(d.rm_record_len, 3);
}

/* 6. Encoder: RFC 5531 11 header = last bit | 31-bit length; decodes back. */
static void t06_encode(void **state)
{
	uint8_t h[4];

	(void)state;
	rm_encode_hdr(h, 0x1c, true);
	assert_memory_equal(h, "\x80\x00\x00\x1c", 4);
	rm_encode_hdr(h, 0x12345678, false);
	assert_memory_equal(h, "\x12\x34\x56\x78", 4);
	rm_encode_hdr(h, RM_LEN_MASK, true);
	assert_memory_equal(h, "\xff\xff\xff\xff", 4);
	rm_encode_hdr(h, 0, true);
	assert_memory_equal(h, "\x80\x00\x00\x00", 4);
}

/* 7. Encoder -> decoder round trip, many fragments of varying size. */
static void t07_round_trip(void **state)
{
	static uint8_t stream[2048], payload[1024];
	struct rm_dec d;
	struct sink s;
	size_t n = 0, p = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7);
	for (uint32_t frag = 1; p < sizeof(payload); frag++) {
		uint32_t len = frag * 13 % 97;

		if (len > sizeof(payload) - p)
			len = (uint32_t)(sizeof(payload) - p);
		rm_encode_hdr(stream + n, len, p + len == sizeof(payload));
		memcpy(stream + n + 4, payload + p, len);
		n += 4 + len;
		p += len;
	}
	for (size_t step = 1; step < 40; step += 3) {
		rm_dec_init(&d, sizeof(payload));
		feed(&d, stream, n, step, &s);
		assert_int_equal(s.st, RM_OK);
		assert_int_equal(s.records, 1);
		assert_int_equal(s.len, sizeof(payload));
		assert_memory_equal(s.data, payload, sizeof(payload));
	}
}

/* 8. A partial header split across calls is kept in rm_hdr. */
static void t08_partial_header(void **state)
{
	size_t consumed, data_len;
	struct rm_dec d;
	bool done;

	(void)state;
	rm_dec_init(&d, 16);
	assert_int_equal(rm_dec_feed(&d, (const uint8_t *)"\x80\x00", 2, &consumed, &data_len, &done),
			 RM_OK);
	assert_int_equal(consumed, 2);
	assert_int_equal(d.rm_hdr_have, 2);
	assert_false(d.rm_in_frag);
	assert_int_equal(rm_dec_feed(&d, (const uint8_t *)"\x00\x02xy", 4, &consumed, &data_len, &done),
			 RM_OK);
	assert_int_equal(consumed, 2);
	assert_true(d.rm_in_frag);
	assert_true(d.rm_last);
	assert_int_equal(d.rm_frag_left, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_every_step),
		cmocka_unit_test(t02_empty_record),
		cmocka_unit_test(t03_too_big),
		cmocka_unit_test(t04_zero_input),
		cmocka_unit_test(t05_header_then_data),
		cmocka_unit_test(t06_encode),
		cmocka_unit_test(t07_round_trip),
		cmocka_unit_test(t08_partial_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
