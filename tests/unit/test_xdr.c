// SPDX-License-Identifier: MIT
/* Unit tests for the XDR cursor (chunking/xdr.c), RFC 4506 vectors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "chunking.h"

/* 1. RFC 4506 4.1/4.5: integers are big-endian 4-byte words; hyper is 8. */
static void t01_ints(void **state)
{
	static const uint8_t b[] = { 0x00, 0x00, 0x00, 0x2a, 0xff, 0xff, 0xff, 0xfe,
				     0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 };
	struct iovec one;
	struct xdr_cur xc;
	uint32_t u;
	int32_t i;
	uint64_t h;

	(void)state;
	xdr_cur_init_buf(&xc, &one, b, sizeof(b));
	assert_true(xdr_get_u32(&xc, &u));
	assert_int_equal(u, 42);
	assert_true(xdr_get_i32(&xc, &i));
	assert_int_equal(i, -2);
	assert_true(xdr_get_u64(&xc, &h));
	assert_true(h == 0x0102030405060708ull);
	assert_int_equal(xdr_pos(&xc), 16);
	assert_false(xdr_get_u32(&xc, &u));
	assert_int_equal(xc.xc_err, XDR_ERR_SHORT);
}

/* 2. RFC 4506 4.10: opaque<> is length + data + zero pad to 4; the span
 * refers to the data in place, across segment boundaries. */
static void t02_opaque_segmented(void **state)
{
	uint8_t a[] = { 0, 0, 0, 5, 'h', 'e' };
	uint8_t b[] = { 'l', 'l', 'o', 0, 0, 0 };
	uint8_t c[] = { 0, 0, 0, 7 };
	struct iovec iov[3] = { { a, sizeof(a) }, { b, sizeof(b) }, { c, sizeof(c) } };
	struct xdr_cur xc;
	struct xdr_span sp;
	char out[8] = { 0 };
	uint32_t u;

	(void)state;
	xdr_cur_init(&xc, iov, 3);
	assert_int_equal(xc.xc_len, 16);
	assert_true(xdr_get_opaque(&xc, &sp, 16));
	assert_int_equal(sp.xs_pos, 4);
	assert_int_equal(sp.xs_len, 5);
	assert_null(xdr_span_ptr(&xc, &sp));	/* straddles a and b */
	assert_int_equal(xdr_span_copy(&xc, &sp, out, sizeof(out)), 5);
	assert_string_equal(out, "hello");
	assert_int_equal(xdr_pos(&xc), 12);
	assert_true(xdr_get_u32(&xc, &u));
	assert_int_equal(u, 7);
	assert_int_equal(xdr_remaining(&xc), 0);
}

/* 3. Length above the caller's maximum is an explicit error, sticky. */
static void t03_too_long_sticky(void **state)
{
	static const uint8_t b[] = { 0, 0, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0 };
	struct iovec one;
	struct xdr_cur xc;
	struct xdr_span sp;
	uint32_t u;

	(void)state;
	xdr_cur_init_buf(&xc, &one, b, sizeof(b));
	assert_false(xdr_get_opaque(&xc, &sp, 8));
	assert_int_equal(xc.xc_err, XDR_ERR_TOO_LONG);
	assert_false(xdr_get_u32(&xc, &u));	/* sticky */
	assert_int_equal(xc.xc_err, XDR_ERR_TOO_LONG);
	assert_string_equal(xdr_err_str(XDR_ERR_TOO_LONG), "XDR length above maximum");
}

/* 4. An opaque whose pad runs past the end is truncated, at every length. */
static void t04_truncated_every_offset(void **state)
{
	static const uint8_t b[] = { 0, 0, 0, 3, 'a', 'b', 'c', 0 };
	struct iovec one;
	struct xdr_cur xc;
	struct xdr_span sp;

	(void)state;
	for (size_t n = 0; n < sizeof(b); n++) {
		xdr_cur_init_buf(&xc, &one, b, n);
		assert_false(xdr_get_opaque(&xc, &sp, 100));
		assert_int_equal(xc.xc_err, XDR_ERR_SHORT);
	}
	xdr_cur_init_buf(&xc, &one, b, sizeof(b));
	assert_true(xdr_get_opaque(&xc, &sp, 100));
}

/* 5. RFC 4506 4.4: bool is 0 or 1; enum range check. */
static void t05_bool_enum(void **state)
{
	static const uint8_t b[] = { 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 5 };
	struct iovec one;
	struct xdr_cur xc;
	bool v;
	uint32_t e;

	(void)state;
	xdr_cur_init_buf(&xc, &one, b, sizeof(b));
	assert_true(xdr_get_bool(&xc, &v));
	assert_true(v);
	assert_false(xdr_get_bool(&xc, &v));
	assert_int_equal(xc.xc_err, XDR_ERR_BAD_BOOL);
	xdr_cur_init_buf(&xc, &one, b + 8, 4);
	assert_false(xdr_get_enum(&xc, &e, 5));
	assert_int_equal(xc.xc_err, XDR_ERR_BAD_ENUM);
	xdr_cur_init_buf(&xc, &one, b + 8, 4);
	assert_true(xdr_get_enum(&xc, &e, 6));
	assert_int_equal(e, 5);
}

/* 6. Encoder: round trip, zero pad, overflow is sticky, holes patch. */
static void t06_encode(void **state)
{
	uint8_t buf[24];
	struct xdr_enc xe;
	struct iovec one;
	struct xdr_cur xc;
	struct xdr_span sp;
	uint64_t h;
	size_t hole;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	xdr_enc_init(&xe, buf, sizeof(buf));
	hole = xdr_put_hole(&xe);
	assert_true(xdr_put_opaque(&xe, "abcde", 5));
	assert_true(xdr_put_u64(&xe, 0x1122334455667788ull));
	xdr_patch_u32(&xe, hole, 0xdeadbeef);
	assert_int_equal(xe.xe_len, 4 + 4 + 8 + 8);
	assert_int_equal(buf[13], 0);	/* pad bytes are zero */
	assert_int_equal(buf[15], 0);
	assert_false(xdr_put_u32(&xe, 1));
	assert_int_equal(xe.xe_err, XDR_ERR_NO_SPACE);
	xdr_cur_init_buf(&xc, &one, buf, xe.xe_len);
	assert_true(xdr_skip(&xc, 4));
	assert_true(xdr_get_opaque(&xc, &sp, 5));
	assert_memory_equal(xdr_span_ptr(&xc, &sp), "abcde", 5);
	assert_true(xdr_get_u64(&xc, &h));
	assert_true(h == 0x1122334455667788ull);
	assert_int_equal(chk_be32(buf), 0xdeadbeef);
}

/* 7. seek and skip respect the stream bounds. */
static void t07_seek_skip(void **state)
{
	uint8_t a[4] = { 0, 0, 0, 1 }, b[4] = { 0, 0, 0, 2 };
	struct iovec iov[3] = { { a, 4 }, { NULL, 0 }, { b, 4 } };
	struct xdr_cur xc;
	uint32_t u;

	(void)state;
	xdr_cur_init(&xc, iov, 3);
	assert_true(xdr_seek(&xc, 4));
	assert_true(xdr_get_u32(&xc, &u));
	assert_int_equal(u, 2);
	assert_true(xdr_seek(&xc, 0));
	assert_true(xdr_get_u32(&xc, &u));
	assert_int_equal(u, 1);
	assert_false(xdr_skip(&xc, 5));
	assert_int_equal(xc.xc_err, XDR_ERR_SHORT);
	xdr_cur_init(&xc, iov, 3);
	assert_false(xdr_seek(&xc, 9));
	assert_int_equal(xc.xc_err, XDR_ERR_BAD_ARG);
}

/* 8. An opaque, a skip and a word read over two segments split at every
 * offset, and in a cursor whose stream ends inside its segment (a body's
 * sub-cursor): the same positions, spans and errors wherever the split
 * or the end falls (items ending at a segment's end, or past the stream's). */
static void t08_split_and_confined(void **state)
{
	static const uint8_t b[] = { 0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0, 0, 0,
				     0xaa, 0xbb, 0xcc, 0, 0, 0, 0, 9 };
	struct xdr_cur xc;
	struct xdr_span sp;
	struct iovec v[2];
	uint32_t u;

	(void)state;
	for (size_t k = 0; k <= sizeof(b); k++) {
		v[0] = (struct iovec){ (void *)b, k };
		v[1] = (struct iovec){ (void *)(b + k), sizeof(b) - k };
		xdr_cur_init(&xc, v, 2);
		assert_true(xdr_get_opaque(&xc, &sp, 5));
		assert_int_equal(sp.xs_pos, 4);
		assert_int_equal(sp.xs_len, 5);
		assert_int_equal(xdr_pos(&xc), 12);
		assert_true(xdr_skip(&xc, 3));
		assert_int_equal(xdr_pos(&xc), 16);
		assert_true(xdr_get_u32(&xc, &u));
		assert_int_equal(u, 9);
		assert_int_equal(xdr_remaining(&xc), 0);
		assert_false(xdr_skip(&xc, 1));
		assert_int_equal(xc.xc_err, XDR_ERR_SHORT);
	}
	/* The stream ends before the segment does, at every length. */
	for (size_t len = 0; len < sizeof(b); len++) {
		v[0] = (struct iovec){ (void *)b, sizeof(b) };
		xdr_cur_init(&xc, v, 1);
		xc.xc_len = len;
		assert_int_equal(xdr_get_opaque(&xc, &sp, 5), len >= 12);
		if (len < 12) {
			assert_int_equal(xc.xc_err, XDR_ERR_SHORT);
			continue;
		}
		assert_int_equal(xdr_skip(&xc, 3), len >= 16);
		assert_int_equal(xc.xc_err, len >= 16 ? XDR_OK : XDR_ERR_SHORT);
	}
	/* Above the maximum: refused by the fast path as by the slow one. */
	v[0] = (struct iovec){ (void *)b, sizeof(b) };
	xdr_cur_init(&xc, v, 1);
	assert_false(xdr_get_opaque(&xc, &sp, 4));
	assert_int_equal(xc.xc_err, XDR_ERR_TOO_LONG);
	assert_int_equal(xdr_pos(&xc), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_ints),
		cmocka_unit_test(t02_opaque_segmented),
		cmocka_unit_test(t03_too_long_sticky),
		cmocka_unit_test(t04_truncated_every_offset),
		cmocka_unit_test(t05_bool_enum),
		cmocka_unit_test(t06_encode),
		cmocka_unit_test(t07_seek_skip),
		cmocka_unit_test(t08_split_and_confined),
	};
	return cmocka_run_group_tests_name("xdr", tests, NULL, NULL);
}
