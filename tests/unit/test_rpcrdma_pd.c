// SPDX-License-Identifier: MIT
/*
 * Unit tests for the RFC 8797 CM private data codec (chunking/rpcrdma_pd.c).
 * Vectors from RFC 8797 section 4 and the bytes the Linux nfsd sent
 * (docs/protocol.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "chunking.h"
#include "vectors.h"

/* 1. Measured: f6 ab 0e 18 01 00 03 03 + 188 zeros.  RFC 8797 4.2:
 * (3 + 1) * 1024 = 4096 both ways; flags 0 -> no remote invalidation. */
static void t01_kernel_vector(void **state)
{
	struct rpcrdma_pd pd;

	(void)state;
	assert_true(rpcrdma_pd_decode(vec_kernel_pd, sizeof(vec_kernel_pd), &pd));
	assert_false(pd.pd_remote_inv);
	assert_int_equal(pd.pd_send_size, 4096);
	assert_int_equal(pd.pd_recv_size, 4096);
}

/* 2. RFC 8797 4/4.1/4.2: encoding.  Sizes become (bytes / 1024) - 1, R is
 * the low bit of octet 5, reserved bits zero. */
static void t02_encode(void **state)
{
	static const struct {
		struct rpcrdma_pd pd;
		uint8_t out[8];
	} v[] = {
		/* 0: the kernel's own message */
		{ { false, 4096, 4096 }, { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x03 } },
		/* 1: RFC 8797 4.2: minimum 1024 encodes as 0; R set */
		{ { true, 1024, 1024 }, { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x00, 0x00 } },
		/* 2: maximum 262144 encodes as 255 */
		{ { true, 262144, 8192 }, { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0xff, 0x07 } },
		/* 3: rounded down to 1 KiB units: 5000 -> 4096 -> 3 */
		{ { false, 5000, 2047 }, { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x03, 0x00 } },
		/* 4: clamped: 0 -> 1024, 1 MiB -> 262144 */
		{ { false, 0, 1u << 20 }, { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x00, 0xff } },
	};
	uint8_t out[RPCRDMA_PD_LEN];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		print_message("encode %zu\n", i);
		rpcrdma_pd_encode(&v[i].pd, out);
		assert_memory_equal(out, v[i].out, 8);
	}
}

/* 3. Round trip for every encodable size and both R values. */
static void t03_round_trip(void **state)
{
	struct rpcrdma_pd in, out;
	uint8_t buf[RPCRDMA_PD_LEN];

	(void)state;
	for (uint32_t k = 1; k <= 256; k++) {
		in = (struct rpcrdma_pd){ (k & 1) != 0, k * 1024, (257 - k) * 1024 };
		rpcrdma_pd_encode(&in, buf);
		assert_true(rpcrdma_pd_decode(buf, sizeof(buf), &out));
		assert_int_equal(out.pd_remote_inv, in.pd_remote_inv);
		assert_int_equal(out.pd_send_size, in.pd_send_size);
		assert_int_equal(out.pd_recv_size, in.pd_recv_size);
	}
}

/* 4. RFC 8797 5.2: the identifier is searched for in the whole buffer, at any
 * offset ("not restricted to any alignment"): every offset 0..188 works. */
static void t04_search_any_offset(void **state)
{
	uint8_t buf[196];
	struct rpcrdma_pd pd, want = { true, 8192, 32768 };

	(void)state;
	for (size_t off = 0; off + RPCRDMA_PD_LEN <= sizeof(buf); off++) {
		memset(buf, 0xee, sizeof(buf));
		rpcrdma_pd_encode(&want, buf + off);
		assert_true(rpcrdma_pd_decode(buf, sizeof(buf), &pd));
		assert_true(pd.pd_remote_inv);
		assert_int_equal(pd.pd_send_size, 8192);
		assert_int_equal(pd.pd_recv_size, 32768);
	}
}

/* 5. RFC 8797 5.1/5.2: absent identifier, wrong version, or a message that
 * would overrun the buffer -> false and the defaults (1024 both ways, R 0). */
static void t05_defaults(void **state)
{
	uint8_t buf[196];
	struct rpcrdma_pd pd;

	(void)state;
	memset(buf, 0, sizeof(buf));
	pd = (struct rpcrdma_pd){ true, 1, 1 };
	assert_false(rpcrdma_pd_decode(buf, sizeof(buf), &pd));	/* absent */
	assert_false(pd.pd_remote_inv);
	assert_int_equal(pd.pd_send_size, RPCRDMA_PD_DEFAULT_SIZE);
	assert_int_equal(pd.pd_recv_size, RPCRDMA_PD_DEFAULT_SIZE);

	memcpy(buf, vec_kernel_pd, 8);
	buf[4] = 2;						/* version 2 */
	assert_false(rpcrdma_pd_decode(buf, sizeof(buf), &pd));
	assert_int_equal(pd.pd_send_size, 1024);

	/* overrun: identifier in the last 4..7 bytes */
	for (size_t cut = 4; cut < 8; cut++) {
		memset(buf, 0, sizeof(buf));
		memcpy(buf + sizeof(buf) - cut, vec_kernel_pd, cut);
		assert_false(rpcrdma_pd_decode(buf, sizeof(buf), &pd));
		assert_int_equal(pd.pd_recv_size, 1024);
	}
	/* truncated kernel vector at every length below 8 */
	for (size_t len = 0; len < RPCRDMA_PD_LEN; len++)
		assert_false(rpcrdma_pd_decode(vec_kernel_pd, len, &pd));
	assert_false(rpcrdma_pd_decode(NULL, 0, &pd));
	assert_true(rpcrdma_pd_decode(vec_kernel_pd, RPCRDMA_PD_LEN, &pd));
}

/* 6. RFC 8797 5.2: a false match (identifier with a bad version, e.g. other
 * private data) does not stop the search for the real one further on. */
static void t06_skip_false_match(void **state)
{
	uint8_t buf[40] = { 0 };
	struct rpcrdma_pd pd;

	(void)state;
	memcpy(buf + 2, vec_kernel_pd, 8);
	buf[6] = 9;				/* version 9: not ours */
	memcpy(buf + 21, vec_kernel_pd, 8);
	assert_true(rpcrdma_pd_decode(buf, sizeof(buf), &pd));
	assert_int_equal(pd.pd_send_size, 4096);
}

/* 7. RFC 8797 4: receivers MUST ignore the reserved bits. */
static void t07_reserved_ignored(void **state)
{
	uint8_t buf[8];
	struct rpcrdma_pd pd;

	(void)state;
	memcpy(buf, vec_kernel_pd, 8);
	buf[5] = 0xfe;				/* all reserved bits, R clear */
	assert_true(rpcrdma_pd_decode(buf, 8, &pd));
	assert_false(pd.pd_remote_inv);
	buf[5] = 0xff;
	assert_true(rpcrdma_pd_decode(buf, 8, &pd));
	assert_true(pd.pd_remote_inv);
}

/* 8. RFC 8797 4.2: thresholds are the smaller of the sender's send size and
 * the receiver's receive size, per direction.  Against the kernel (4096/4096)
 * with ours 16384 send / 8192 recv: send 4096, recv 4096; against a peer
 * without private data: 1024 both ways (5.1). */
static void t08_thresholds(void **state)
{
	struct rpcrdma_pd ours = { true, 16384, 8192 }, peer;
	uint32_t snd, rcv;

	(void)state;
	assert_true(rpcrdma_pd_decode(vec_kernel_pd, sizeof(vec_kernel_pd), &peer));
	rpcrdma_inline_thresholds(&ours, &peer, &snd, &rcv);
	assert_int_equal(snd, 4096);
	assert_int_equal(rcv, 4096);

	peer = (struct rpcrdma_pd){ false, 65536, 2048 };
	rpcrdma_inline_thresholds(&ours, &peer, &snd, &rcv);
	assert_int_equal(snd, 2048);
	assert_int_equal(rcv, 8192);

	assert_false(rpcrdma_pd_decode("", 0, &peer));
	rpcrdma_inline_thresholds(&ours, &peer, &snd, &rcv);
	assert_int_equal(snd, 1024);
	assert_int_equal(rcv, 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_kernel_vector),
		cmocka_unit_test(t02_encode),
		cmocka_unit_test(t03_round_trip),
		cmocka_unit_test(t04_search_any_offset),
		cmocka_unit_test(t05_defaults),
		cmocka_unit_test(t06_skip_false_match),
		cmocka_unit_test(t07_reserved_ignored),
		cmocka_unit_test(t08_thresholds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
