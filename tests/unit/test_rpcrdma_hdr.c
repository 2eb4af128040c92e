// SPDX-License-Identifier: MIT
/*
 * Unit tests for the RPC-over-RDMA version 1 transport header codec
 * (chunking/rpcrdma_hdr.c).  Vectors are written by hand from RFC 8166
 * 4.1.2/4.7 and draft-ietf-nfsv4-rpcrdma-08 4.3, plus the bytes the Linux
 * nfsd sent (docs/protocol.md).  Each table row cites its section.
 *
 * Also holds the no-allocation proof (case 14): decoding a 1 KiB RPC call
 * and its transport header with malloc/calloc/realloc counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <stdlib.h>

#include "chunking.h"
#include "vectors.h"

/* ---- allocation counter (see docs/protocol.md, "No allocation") ----
 *
 * Without ASan: this executable defines malloc/calloc/realloc, which take
 * precedence over libc's for every caller in the process (ELF symbol
 * interposition: the executable is first in the lookup scope), counts them
 * while armed and forwards to the next definition found by
 * dlsym(RTLD_NEXT).  With ASan (make SANITIZE=1) the sanitizer owns malloc;
 * we use its documented hook instead, which sees every allocation made
 * through it.  Case 14 first proves the counter sees a real malloc, so a
 * count of zero means something.
 */
static volatile int alloc_armed;
static volatile unsigned long alloc_count;

#if defined(__SANITIZE_ADDRESS__)
int __sanitizer_install_malloc_and_free_hooks(void (*m)(const volatile void *, size_t),
					      void (*f)(const volatile void *));
static void count_hook(const volatile void *p, size_t n)
{
	(void)p;
	(void)n;
	if (alloc_armed)
		alloc_count++;
}
static void free_hook(const volatile void *p)
{
	(void)p;
}
static void alloc_counter_setup(void)
{
	static int done;

	if (!done)
		__sanitizer_install_malloc_and_free_hooks(count_hook, free_hook);
	done = 1;
}
#else
static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
/* dlsym may itself calloc before next_calloc is known: serve that from here. */
static char boot_buf[4096] __attribute__((aligned(16)));
static size_t boot_used;
static int resolving;

static void resolve(void)
{
	if (next_malloc || resolving)
		return;
	resolving = 1;
	next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	resolving = 0;
}

void *malloc(size_t n)
{
	resolve();
	if (alloc_armed)
		alloc_count++;
	return next_malloc(n);
}

void *calloc(size_t n, size_t sz)
{
	if (!next_calloc) {
		size_t want = (n * sz + 15) & ~(size_t)15;

		if (resolving && boot_used + want <= sizeof(boot_buf)) {
			void *p = boot_buf + boot_used;

			boot_used += want;
			return p;	/* static, zeroed; never freed by dlsym */
		}
		resolve();
	}
	if (alloc_armed)
		alloc_count++;
	return next_calloc(n, sz);
}

void *realloc(void *p, size_t n)
{
	resolve();
	if (alloc_armed)
		alloc_count++;
	return next_realloc(p, n);
}

static void alloc_counter_setup(void)
{
	resolve();
}
#endif

/* ---- table of decode vectors ---- */

#define W(...) ((const uint32_t[]){ __VA_ARGS__ }), sizeof((const uint32_t[]){ __VA_ARGS__ }) / 4
#define X 0x11223344u		/* an XID */
#define HLOO(h, l) (h), (l), 0, 0x1000	/* a plain segment */

struct hdr_case {
	const char *what;
	const uint32_t *w;
	size_t nw;
	bool ok;
	enum rpcrdma_hdr_err err;
	uint32_t proc;
	size_t hdr_len;		/* expected rh_hdr_len when ok */
	unsigned nreads, nwrites, nsegs;
	bool has_reply;
};

/* Rows give only the fields their outcome needs; the rest are zero. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct hdr_case cases[] = {
	/* 0 */ { "RFC 8166 4.7: no chunks: three zero words; RPC message follows",
		W(X, 1, 32, RPCRDMA_MSG, 0, 0, 0, X, 0), true, RPCRDMA_HDR_OK, RPCRDMA_MSG, 28,
		0, 0, 0, false },
	/* 1 */ { "RFC 8166 4.7/3.4.5: one Read chunk of 3 segments, same P: 1 PHLOO 1 PHLOO 1 PHLOO 0",
		W(X, 1, 32, RPCRDMA_MSG, 1, 8, HLOO(1, 100), 1, 8, HLOO(2, 100), 1, 8, HLOO(3, 2),
		  0, 0, 0, X), true, RPCRDMA_HDR_OK, RPCRDMA_MSG, 28 + 3 * 24, 3, 0, 0, false },
	/* 2 */ { "RFC 8166 4.7: Write list 1 3 HLOO HLOO HLOO 1 2 HLOO HLOO 0",
		W(X, 1, 32, RPCRDMA_MSG, 0, 1, 3, HLOO(1, 4096), HLOO(2, 4096), HLOO(3, 4096),
		  1, 2, HLOO(4, 8), HLOO(5, 8), 0, 0, X), true, RPCRDMA_HDR_OK, RPCRDMA_MSG,
		16 + 4 + (4 + 4 + 48) + (4 + 4 + 32) + 4 + 4, 0, 2, 5, false },
	/* 3 */ { "RFC 8166 4.7: Reply chunk with two segments: 1 2 HLOO HLOO",
		W(X, 1, 32, RPCRDMA_MSG, 0, 0, 1, 2, HLOO(7, 4096), HLOO(8, 4096), X), true,
		RPCRDMA_HDR_OK, RPCRDMA_MSG, 16 + 4 + 4 + 4 + 4 + 32, 0, 0, 2, true },
	/* 4 */ { "RFC 8166 3.5.3: Long Call: RDMA_NOMSG with a Position Zero Read chunk",
		W(X, 1, 32, RPCRDMA_NOMSG, 1, 0, HLOO(1, 2000), 1, 0, HLOO(2, 100), 0, 0, 0),
		true, RPCRDMA_HDR_OK, RPCRDMA_NOMSG, 28 + 48, 2, 0, 0, false },
	/* 5 */ { "RFC 8166 3.5.3: Long Reply: RDMA_NOMSG whose Reply chunk holds the payload",
		W(X, 1, 64, RPCRDMA_NOMSG, 0, 0, 1, 1, HLOO(9, 812)), true, RPCRDMA_HDR_OK,
		RPCRDMA_NOMSG, 16 + 4 + 4 + 4 + 4 + 16, 0, 0, 1, true },
	/* 6 */ { "RFC 8166 4.5.2: RDMA_NOMSG with all three lists absent is an XDR error",
		W(X, 1, 32, RPCRDMA_NOMSG, 0, 0, 0), false, RPCRDMA_HDR_BAD_CHUNKS },
	/* 7 */ { "RFC 8166 4.2.4/3.5.3: RDMA_NOMSG call with reads but no position-zero chunk",
		W(X, 1, 32, RPCRDMA_NOMSG, 1, 8, HLOO(1, 16), 0, 0, 0), false,
		RPCRDMA_HDR_BAD_CHUNKS },
	/* 8 */ { "RFC 8166 4.2.4: RDMA_NOMSG with only a Write list holds no Payload stream",
		W(X, 1, 32, RPCRDMA_NOMSG, 0, 1, 1, HLOO(1, 16), 0, 0), false,
		RPCRDMA_HDR_BAD_CHUNKS },
	/* 9 */ { "RFC 8166 4.2.4: RDMA_MSG payload begins with the XID: no position-zero chunk",
		W(X, 1, 32, RPCRDMA_MSG, 1, 0, HLOO(1, 16), 0, 0, 0, X), false,
		RPCRDMA_HDR_BAD_CHUNKS },
	/* 10 */ { "RFC 8166 3.4.5: Position MUST be a multiple of four",
		W(X, 1, 32, RPCRDMA_MSG, 1, 6, HLOO(1, 16), 0, 0, 0, X), false,
		RPCRDMA_HDR_BAD_POSITION },
	/* 11 */ { "RFC 8166 3.4.5: positions out of payload order (decreasing)",
		W(X, 1, 32, RPCRDMA_MSG, 1, 16, HLOO(1, 16), 1, 8, HLOO(2, 16), 0, 0, 0, X),
		false, RPCRDMA_HDR_BAD_POSITION },
	/* 12 */ { "RFC 8166 3.4.5: two Read chunks at increasing positions are fine",
		W(X, 1, 32, RPCRDMA_MSG, 1, 8, HLOO(1, 16), 1, 8, HLOO(2, 16), 1, 100,
		  HLOO(3, 4), 0, 0, 0, X), true, RPCRDMA_HDR_OK, RPCRDMA_MSG, 28 + 72, 3, 0, 0,
		false },
	/* 13 */ { "RFC 8166 4.2.2/4.5.1: rdma_vers 2 -> BAD_VERS (answer ERR_VERS)",
		W(X, 2, 32, RPCRDMA_MSG, 0, 0, 0, X), false, RPCRDMA_HDR_BAD_VERS },
	/* 14 */ { "RFC 8166 4.5.2: invalid rdma_proc",
		W(X, 1, 32, 5, 0, 0, 0), false, RPCRDMA_HDR_BAD_PROC },
	/* 15 */ { "RFC 8166 4.6.2: RDMA_DONE is void (16 bytes)",
		W(X, 1, 0, RPCRDMA_DONE), true, RPCRDMA_HDR_OK, RPCRDMA_DONE, 16 },
	/* 16 */ { "RFC 8166 4.1.2: RDMA_ERROR ERR_VERS low=1 high=1",
		W(X, 1, 0, RPCRDMA_ERROR, RPCRDMA_ERR_VERS, 1, 1), true, RPCRDMA_HDR_OK,
		RPCRDMA_ERROR, 28 },
	/* 17 */ { "RFC 8166 4.1.2: RDMA_ERROR ERR_CHUNK is void",
		W(X, 1, 0, RPCRDMA_ERROR, RPCRDMA_ERR_CHUNK), true, RPCRDMA_HDR_OK, RPCRDMA_ERROR,
		20 },
	/* 18 */ { "RFC 8166 4.1.2 (no default arm) vs draft-08 4.3 (rdma_extra[8]): unknown code flagged",
		W(X, 1, 0, RPCRDMA_ERROR, 3, 0, 0, 0, 0, 0, 0, 0, 0), true,
		RPCRDMA_HDR_BAD_ERRCODE, RPCRDMA_ERROR, 20 },
	/* 19 */ { "draft-08 4.3: RDMA_MSGP align 1024 thresh 512, no chunks",
		W(X, 1, 32, RPCRDMA_MSGP, 1024, 512, 0, 0, 0, X), true, RPCRDMA_HDR_OK,
		RPCRDMA_MSGP, 36 },
	/* 20 */ { "draft-08 3.9 + RFC 4506 3: rdma_align not a multiple of 4",
		W(X, 1, 32, RPCRDMA_MSGP, 6, 512, 0, 0, 0, X), false, RPCRDMA_HDR_BAD_MSGP },
	/* 21 */ { "RFC 8166 4.2.1/4.5.2: rdma_xid differs from the RPC XID",
		W(X, 1, 32, RPCRDMA_MSG, 0, 0, 0, X + 1), false, RPCRDMA_HDR_BAD_XID },
	/* 22 */ { "RFC 4506 4.19: optional-data discriminator 2 is not a bool",
		W(X, 1, 32, RPCRDMA_MSG, 2, 0, 0, X), false, RPCRDMA_HDR_BAD_CHUNKS },
	/* 23 */ { "RFC 8166 4.2.4: RDMA_MSG without its Payload stream",
		W(X, 1, 32, RPCRDMA_MSG, 0, 0, 0), false, RPCRDMA_HDR_SHORT },
	/* 24 */ { "RFC 8166 4.5: shorter than the four fixed fields",
		W(X, 1, 32), false, RPCRDMA_HDR_SHORT },
	/* 25 */ { "RFC 8166 3.4.6: write chunk count 0xffffffff",
		W(X, 1, 32, RPCRDMA_MSG, 0, 1, 0xffffffff, 0, 0, X), false, RPCRDMA_HDR_TOO_MANY },
	/* 26 */ { "RFC 8166 4.3.2.3: empty Write chunk (count 0) is legal",
		W(X, 1, 32, RPCRDMA_MSG, 0, 1, 0, 0, 0, X), true, RPCRDMA_HDR_OK, RPCRDMA_MSG, 36,
		0, 1, 0, false },
	/* 27 */ { "KERNEL-PEER: NFSv4 reply, RDMA_NOMSG with the Reply chunk echoed back",
		W(X, 1, 64, RPCRDMA_NOMSG, 0, 0, 1, 2, HLOO(9, 4096), HLOO(10, 300)), true,
		RPCRDMA_HDR_OK, RPCRDMA_NOMSG, 16 + 4 + 4 + 4 + 4 + 32, 0, 0, 2, true },
	/* 28 */ { "RFC 8166 4.5.2: reply-chunk discriminator 7",
		W(X, 1, 32, RPCRDMA_MSG, 0, 0, 7, X), false, RPCRDMA_HDR_BAD_CHUNKS },
	/* 29 */ { "draft-08 3.9: RDMA_MSGP with a position-zero read chunk",
		W(X, 1, 32, RPCRDMA_MSGP, 0, 0, 1, 0, HLOO(1, 8), 0, 0, 0, X), false,
		RPCRDMA_HDR_BAD_CHUNKS },
};
#pragma GCC diagnostic pop
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* Length of the part that must be present for success: the header, plus the
 * RPC XID for procedures with an inline message. */
static size_t needed_len(const struct hdr_case *c)
{
	if (c->proc == RPCRDMA_MSG || c->proc == RPCRDMA_MSGP)
		return c->hdr_len + 4;
	return c->hdr_len;
}

static struct rpcrdma_hdr H, H2;	/* ~10 KiB each: kept off the stack */

/* 1. Every table row decodes as its spec section says. */
static void t01_table(void **state)
{
	uint8_t buf[1024];
	enum rpcrdma_hdr_err err;

	(void)state;
	for (size_t i = 0; i < NCASES; i++) {
		const struct hdr_case *c = &cases[i];
		size_t len = vec_words(buf, c->w, c->nw);
		bool ok = rpcrdma_hdr_decode(buf, len, NULL, &H, &err);

		print_message("case %zu: %s\n", i, c->what);
		assert_int_equal(ok, c->ok);
		assert_int_equal(err, c->err);
		assert_int_equal(H.rh_xid, X);
		if (!ok)
			continue;
		assert_int_equal(H.rh_proc, c->proc);
		assert_int_equal(H.rh_hdr_len, c->hdr_len);
		assert_int_equal(H.rh_body_off, c->hdr_len);
		assert_true(H.rh_hdr_len <= len);
		assert_int_equal(H.rh_nreads, c->nreads);
		assert_int_equal(H.rh_nwrites, c->nwrites);
		assert_int_equal(H.rh_nsegs, c->nsegs);
		assert_int_equal(H.rh_has_reply, c->has_reply);
	}
}

/* 2. Truncating any valid vector at any byte offset fails with SHORT. */
static void t02_truncate_every_offset(void **state)
{
	uint8_t buf[1024];
	enum rpcrdma_hdr_err err;

	(void)state;
	for (size_t i = 0; i < NCASES; i++) {
		const struct hdr_case *c = &cases[i];

		if (!c->ok)
			continue;
		vec_words(buf, c->w, c->nw);
		for (size_t cut = 0; cut < needed_len(c); cut++) {
			assert_false(rpcrdma_hdr_decode(buf, cut, NULL, &H, &err));
			assert_int_equal(err, RPCRDMA_HDR_SHORT);
		}
		assert_true(rpcrdma_hdr_decode(buf, needed_len(c), NULL, &H, &err));
	}
}

/* 3. Round trip: decode -> encode reproduces the header bytes exactly, and
 * rpcrdma_hdr_len() equals both rh_hdr_len and the encoded size. */
static void t03_round_trip(void **state)
{
	uint8_t buf[1024], out[1024];
	enum rpcrdma_hdr_err err;
	struct xdr_enc xe;

	(void)state;
	for (size_t i = 0; i < NCASES; i++) {
		const struct hdr_case *c = &cases[i];
		size_t len;

		if (!c->ok)
			continue;
		len = vec_words(buf, c->w, c->nw);
		assert_true(rpcrdma_hdr_decode(buf, len, NULL, &H, &err));
		xdr_enc_init(&xe, out, sizeof(out));
		assert_true(rpcrdma_hdr_encode(&xe, &H));
		assert_int_equal(xe.xe_len, H.rh_hdr_len);
		assert_int_equal(rpcrdma_hdr_len(&H), H.rh_hdr_len);
		assert_memory_equal(out, buf, H.rh_hdr_len);
	}
}

/* 4. the measured reply of Linux nfsd to a NULL call.
 * Transport header (RFC 8166 4.2: credit 0x40 = 64 granted), then the RPC
 * reply (RFC 5531 9: accepted, AUTH_NONE verifier, SUCCESS). */
static void t04_kernel_null_reply(void **state)
{
	enum rpcrdma_hdr_err err;
	struct rpc_reply_hdr r;
	struct iovec one;
	struct xdr_cur xc;

	(void)state;
	assert_true(rpcrdma_hdr_decode(vec_kernel_null_reply, sizeof(vec_kernel_null_reply), NULL,
				       &H, &err));
	assert_int_equal(err, RPCRDMA_HDR_OK);
	assert_int_equal(H.rh_xid, 0x12345678);
	assert_int_equal(H.rh_vers, 1);
	assert_int_equal(H.rh_credit, 64);
	assert_int_equal(H.rh_proc, RPCRDMA_MSG);
	assert_int_equal(H.rh_nreads + H.rh_nwrites + H.rh_has_reply, 0);
	assert_int_equal(H.rh_hdr_len, VEC_KERNEL_NULL_REPLY_HDR_LEN);
	assert_int_equal(H.rh_body_off, VEC_KERNEL_NULL_REPLY_HDR_LEN);
	assert_int_equal(rpcrdma_hdr_len(&H), VEC_KERNEL_NULL_REPLY_HDR_LEN);
	assert_true(rpcrdma_hdr_check_reply(&H, &err));

	xdr_cur_init_buf(&xc, &one, vec_kernel_null_reply + H.rh_body_off,
			 sizeof(vec_kernel_null_reply) - H.rh_body_off);
	assert_true(rpc_reply_decode(&xc, &r));
	assert_int_equal(r.rr_xid, H.rh_xid);
	assert_int_equal(r.rr_stat, RPC_MSG_ACCEPTED);
	assert_int_equal(r.rr_verf.oa_flavor, RPC_AUTH_NONE);
	assert_int_equal(r.rr_verf.oa_body.xs_len, 0);
	assert_int_equal(r.rr_accept_stat, RPC_SUCCESS);
	assert_int_equal(r.rr_results_pos, 24);
	assert_int_equal(xdr_remaining(&xc), 0);
}

/* 5. Encoding the same reply from a struct gives the kernel's bytes. */
static void t05_encode_kernel_bytes(void **state)
{
	uint8_t out[64];
	struct xdr_enc xe;
	struct rpc_reply_hdr r = { .rr_stat = RPC_MSG_ACCEPTED, .rr_accept_stat = RPC_SUCCESS };

	(void)state;
	memset(&H, 0, sizeof(H));
	H.rh_xid = 0x12345678;
	H.rh_vers = RPCRDMA_VERSION;
	H.rh_credit = 64;
	H.rh_proc = RPCRDMA_MSG;
	xdr_enc_init(&xe, out, sizeof(out));
	assert_true(rpcrdma_hdr_encode(&xe, &H));
	assert_true(rpc_local_reply(&xe, 0x12345678, &r));
	assert_int_equal(xe.xe_len, sizeof(vec_kernel_null_reply));
	assert_memory_equal(out, vec_kernel_null_reply, sizeof(vec_kernel_null_reply));
}

/* 6. KERNEL-PEER bug list: header length miscounted when the optional Reply
 * chunk is present.  rpcrdma_hdr_len() counts the discriminator, the count
 * and 16 bytes per segment, for every segment count, and agrees with the
 * encoder; a reply with one write chunk of n segments is 36 + 16n. */
static void t06_len_with_reply_chunk(void **state)
{
	uint8_t out[8192];
	struct xdr_enc xe;

	(void)state;
	for (unsigned n = 0; n <= 64; n++) {
		memset(&H, 0, sizeof(H));
		H.rh_vers = 1;
		H.rh_proc = RPCRDMA_MSG;
		H.rh_has_reply = true;
		H.rh_reply = (struct rpcrdma_chunk){ 0, (uint16_t)n };
		H.rh_nsegs = n;
		assert_int_equal(rpcrdma_hdr_len(&H), 32 + 16 * n);
		xdr_enc_init(&xe, out, sizeof(out));
		assert_true(rpcrdma_hdr_encode(&xe, &H));
		assert_int_equal(xe.xe_len, rpcrdma_hdr_len(&H));

		H.rh_has_reply = false;
		H.rh_nwrites = 1;
		H.rh_writes[0] = (struct rpcrdma_chunk){ 0, (uint16_t)n };
		assert_int_equal(rpcrdma_hdr_len(&H), 36 + 16 * n);
		H.rh_has_reply = true;	/* write chunk and reply chunk share segs */
		assert_int_equal(rpcrdma_hdr_len(&H), 36 + 16 * n + 4 + 16 * n);
		xdr_enc_init(&xe, out, sizeof(out));
		assert_true(rpcrdma_hdr_encode(&xe, &H));
		assert_int_equal(xe.xe_len, rpcrdma_hdr_len(&H));
	}
}

/* 7. Runtime limits (struct rpcrdma_limits) bound every list. */
static void t07_limits(void **state)
{
	struct rpcrdma_limits lim;
	enum rpcrdma_hdr_err err;
	uint8_t buf[256];
	size_t len;

	(void)state;
	rpcrdma_limits_default(&lim);
	assert_int_equal(lim.lim_max_reads, RPCRDMA_MAX_READS);
	assert_int_equal(lim.lim_max_wchunks, RPCRDMA_MAX_WCHUNKS);
	assert_int_equal(lim.lim_max_segs_per_chunk, 259);

	/* 3 read segments against a limit of 2 */
	lim.lim_max_reads = 2;
	len = vec_words(buf, cases[1].w, cases[1].nw);
	assert_false(rpcrdma_hdr_decode(buf, len, &lim, &H, &err));
	assert_int_equal(err, RPCRDMA_HDR_TOO_MANY);
	lim.lim_max_reads = 3;
	assert_true(rpcrdma_hdr_decode(buf, len, &lim, &H, &err));

	/* write chunk of 3 segments against 2 per chunk */
	rpcrdma_limits_default(&lim);
	lim.lim_max_segs_per_chunk = 2;
	len = vec_words(buf, cases[2].w, cases[2].nw);
	assert_false(rpcrdma_hdr_decode(buf, len, &lim, &H, &err));
	assert_int_equal(err, RPCRDMA_HDR_TOO_MANY);

	/* two write chunks against a limit of 1 */
	rpcrdma_limits_default(&lim);
	lim.lim_max_wchunks = 1;
	assert_false(rpcrdma_hdr_decode(buf, len, &lim, &H, &err));
	assert_int_equal(err, RPCRDMA_HDR_TOO_MANY);

	/* limits above the compile-time capacity are clamped to it */
	lim.lim_max_reads = 100000;
	lim.lim_max_wchunks = 100000;
	lim.lim_max_segs_per_chunk = 100000;
	assert_true(rpcrdma_hdr_decode(buf, len, &lim, &H, &err));
}

/* 8. Capacity: 65 read segments overflow RPCRDMA_MAX_READS; a reply chunk of
 * 601 segments overflows RPCRDMA_MAX_SEGS, checked before reading them. */
static void t08_capacity(void **state)
{
	static uint32_t w[8 + 6 * 70];
	static uint8_t buf[sizeof(w)];
	struct rpcrdma_limits lim = { 1000, 1000, 1000 };
	enum rpcrdma_hdr_err err;
	size_t n = 0;

	(void)state;
	w[n++] = X; w[n++] = 1; w[n++] = 1; w[n++] = RPCRDMA_MSG;
	for (int i = 0; i < RPCRDMA_MAX_READS + 1; i++) {
		w[n++] = 1; w[n++] = 4; w[n++] = 1; w[n++] = 4; w[n++] = 0; w[n++] = 0;
	}
	w[n++] = 0; w[n++] = 0; w[n++] = 0; w[n++] = X;
	assert_false(rpcrdma_hdr_decode(buf, vec_words(buf, w, n), &lim, &H, &err));
	assert_int_equal(err, RPCRDMA_HDR_TOO_MANY);

	n = 0;
	w[n++] = X; w[n++] = 1; w[n++] = 1; w[n++] = RPCRDMA_NOMSG;
	w[n++] = 0; w[n++] = 0; w[n++] = 1; w[n++] = RPCRDMA_MAX_SEGS + 1;
	assert_false(rpcrdma_hdr_decode(buf, vec_words(buf, w, n), &lim, &H, &err));
	assert_int_equal(err, RPCRDMA_HDR_TOO_MANY);
	/* a count the buffer cannot hold is SHORT, found before the segments */
	w[7] = 100;
	assert_false(rpcrdma_hdr_decode(buf, vec_words(buf, w, n), &lim, &H, &err));
	assert_int_equal(err, RPCRDMA_HDR_SHORT);
}

/* 9. RFC 8166 4.5: fixed fields are reported even when the rest fails, so a
 * responder can form RDMA_ERROR with the same XID and version; ERR_VERS
 * answer round trip (KERNEL-PEER: low = high = 1). */
static void t09_error_reply_fields(void **state)
{
	uint8_t buf[64], out[64];
	enum rpcrdma_hdr_err err;
	struct xdr_enc xe;
	struct rpcrdma_hdr *e = &H2;
	size_t len;

	(void)state;
	len = vec_words(buf, cases[13].w, cases[13].nw);
	assert_false(rpcrdma_hdr_decode(buf, len, NULL, &H, &err));
	assert_int_equal(err, RPCRDMA_HDR_BAD_VERS);
	assert_int_equal(H.rh_xid, X);
	assert_int_equal(H.rh_vers, 2);
	assert_int_equal(H.rh_credit, 32);

	memset(e, 0, sizeof(*e));
	e->rh_xid = H.rh_xid;
	e->rh_vers = H.rh_vers;		/* RFC 8166 4.5: same version */
	e->rh_proc = RPCRDMA_ERROR;
	e->rh_err = RPCRDMA_ERR_VERS;
	e->rh_vers_low = e->rh_vers_high = 1;
	xdr_enc_init(&xe, out, sizeof(out));
	assert_true(rpcrdma_hdr_encode(&xe, e));
	assert_int_equal(xe.xe_len, 28);
	assert_int_equal(rpcrdma_hdr_len(e), 28);
	assert_int_equal(chk_be32(out + 16), RPCRDMA_ERR_VERS);
	assert_int_equal(chk_be32(out + 20), 1);
	assert_int_equal(chk_be32(out + 24), 1);
}

/* 10. rpcrdma_hdr_check_reply: RFC 8166 4.3.1 "Responders MUST leave the Read
 * list empty in all replies"; unknown RDMA_ERROR codes are not accepted. */
static void t10_check_reply(void **state)
{
	uint8_t buf[256];
	enum rpcrdma_hdr_err err;
	size_t len;

	(void)state;
	len = vec_words(buf, cases[1].w, cases[1].nw);
	assert_true(rpcrdma_hdr_decode(buf, len, NULL, &H, &err));
	assert_false(rpcrdma_hdr_check_reply(&H, &err));
	assert_int_equal(err, RPCRDMA_HDR_BAD_CHUNKS);
	len = vec_words(buf, cases[27].w, cases[27].nw);
	assert_true(rpcrdma_hdr_decode(buf, len, NULL, &H, &err));
	assert_true(rpcrdma_hdr_check_reply(&H, &err));
	len = vec_words(buf, cases[18].w, cases[18].nw);
	assert_true(rpcrdma_hdr_decode(buf, len, NULL, &H, &err));
	assert_int_equal(err, RPCRDMA_HDR_BAD_ERRCODE);
	assert_false(rpcrdma_hdr_check_reply(&H, &err));
	assert_int_equal(err, RPCRDMA_HDR_BAD_ERRCODE);
}

/* 11. draft-08 3.9: RDMA_MSGP padding.  With a 36-byte header, align 1024,
 * thresh 512: an opaque of >= 512 bytes whose data would start at RPC
 * position 100 (receive-buffer offset 136) gets 1024 - 136 = 888 pad bytes;
 * below the threshold, none; other procedures, none. */
static void t11_msgp_pad(void **state)
{
	uint8_t buf[64];
	enum rpcrdma_hdr_err err;
	size_t len;

	(void)state;
	len = vec_words(buf, cases[19].w, cases[19].nw);
	assert_true(rpcrdma_hdr_decode(buf, len, NULL, &H, &err));
	assert_int_equal(H.rh_align, 1024);
	assert_int_equal(H.rh_thresh, 512);
	assert_int_equal(H.rh_body_off, 36);
	assert_int_equal(rpcrdma_msgp_pad(&H, 100, 512), 888);
	assert_int_equal(rpcrdma_msgp_pad(&H, 100, 4096), 888);
	assert_int_equal(rpcrdma_msgp_pad(&H, 988, 4096), 0);	/* already aligned */
	assert_int_equal(rpcrdma_msgp_pad(&H, 100, 511), 0);
	H.rh_align = 0;
	assert_int_equal(rpcrdma_msgp_pad(&H, 100, 4096), 0);
	len = vec_words(buf, cases[0].w, cases[0].nw);
	assert_true(rpcrdma_hdr_decode(buf, len, NULL, &H, &err));
	assert_int_equal(rpcrdma_msgp_pad(&H, 100, 4096), 0);
}

/* 12. Encoder refuses a struct whose chunks name segments it does not have,
 * and stops cleanly at every too-small output size. */
static void t12_encode_errors(void **state)
{
	uint8_t buf[1024], out[1024];
	enum rpcrdma_hdr_err err;
	struct xdr_enc xe;
	size_t len;

	(void)state;
	len = vec_words(buf, cases[2].w, cases[2].nw);
	assert_true(rpcrdma_hdr_decode(buf, len, NULL, &H, &err));
	for (size_t cap = 0; cap < H.rh_hdr_len; cap++) {
		xdr_enc_init(&xe, out, cap);
		assert_false(rpcrdma_hdr_encode(&xe, &H));
		assert_int_equal(xe.xe_err, XDR_ERR_NO_SPACE);
	}
	H.rh_writes[1].ck_nsegs = 10;
	xdr_enc_init(&xe, out, sizeof(out));
	assert_false(rpcrdma_hdr_encode(&xe, &H));
	assert_int_equal(xe.xe_err, XDR_ERR_BAD_ARG);
}

/* 13. Error strings exist for every code (append-only table). */
static void t13_err_str(void **state)
{
	(void)state;
	for (int e = 0; e < RPCRDMA_HDR_ERR__COUNT; e++)
		assert_non_null(rpcrdma_hdr_err_str(e));
	assert_string_equal(rpcrdma_hdr_err_str(RPCRDMA_HDR_ERR__COUNT),
			    "unknown transport header error");
}

/* 14. No allocation: decoding the RDMA header and a 1 KiB RPC call (RDMA_MSG
 * with a Write chunk and a Reply chunk, AUTH_SYS with 16 gids) performs no
 * malloc, calloc or realloc.  First shows the counter counts. */
static void t14_no_allocation(void **state)
{
	static uint8_t msg[1024];
	void *(*volatile do_malloc)(size_t) = malloc;
	uint32_t w[] = { 0xabcd0001, 1, 32, RPCRDMA_MSG, 0, 1, 1, HLOO(5, 8192), 0,
			 1, 1, HLOO(6, 4096) };
	enum rpcrdma_hdr_err err;
	struct rpc_call_hdr call;
	struct rpc_auth_sys as;
	struct iovec one;
	struct xdr_cur xc;
	size_t hl, rl;
	void *p;

	(void)state;
	alloc_counter_setup();
	hl = vec_words(msg, w, sizeof(w) / 4);
	rl = vec_rpc_call_sys(msg + hl, sizeof(msg) - hl, 0xabcd0001, 100003, 3, 6,
			      "client.example.org", 16, 0);
	assert_true(rl > 0);
	rl = sizeof(msg) - hl - rl;		/* argument bytes to reach 1 KiB */
	rl = vec_rpc_call_sys(msg + hl, sizeof(msg) - hl, 0xabcd0001, 100003, 3, 6,
			      "client.example.org", 16, rl);
	assert_int_equal(hl + rl, 1024);

	alloc_count = 0;
	alloc_armed = 1;
	p = do_malloc(32);
	alloc_armed = 0;
	free(p);
	assert_int_equal(alloc_count, 1);	/* the counter is live */

	alloc_count = 0;
	alloc_armed = 1;
	bool ok = rpcrdma_hdr_decode(msg, sizeof(msg), NULL, &H, &err);
	xdr_cur_init_buf(&xc, &one, msg + H.rh_body_off, sizeof(msg) - H.rh_body_off);
	ok = ok && rpc_call_decode(&xc, &call);
	ok = ok && rpc_auth_sys_decode(&xc, &call.rc_cred.oa_body, &as);
	alloc_armed = 0;
	assert_true(ok);
	assert_int_equal(alloc_count, 0);
	assert_int_equal(H.rh_nwrites, 1);
	assert_true(H.rh_has_reply);
	assert_int_equal(call.rc_prog, 100003);
	assert_int_equal(as.as_ngids, 16);
	assert_string_equal(as.as_machinename, "client.example.org");
}

/* 15. RFC 8166 4.1.2: segment fields land where the XDR puts them:
 * handle, length, 64-bit offset; chunks index rh_segs in list order. */
static void t15_segment_fields(void **state)
{
	static const uint32_t w[] = { X, 1, 32, RPCRDMA_MSG,
		1, 8, 0xa1, 100, 0x00000001, 0x00002000,	/* read seg */
		0,
		1, 2, 0xb1, 4096, 0xffffffff, 0xfffff000, 0xb2, 12, 0, 4,	/* write chunk */
		0,
		1, 1, 0xc1, 8192, 0x7, 0x0,			/* reply chunk */
		X };
	uint8_t buf[sizeof(w)];
	enum rpcrdma_hdr_err err;

	(void)state;
	assert_true(rpcrdma_hdr_decode(buf, vec_words(buf, w, sizeof(w) / 4), NULL, &H, &err));
	assert_int_equal(H.rh_reads[0].rd_position, 8);
	assert_int_equal(H.rh_reads[0].rd_seg.rs_handle, 0xa1);
	assert_int_equal(H.rh_reads[0].rd_seg.rs_length, 100);
	assert_true(H.rh_reads[0].rd_seg.rs_offset == 0x100002000ull);
	assert_int_equal(H.rh_writes[0].ck_first, 0);
	assert_int_equal(H.rh_writes[0].ck_nsegs, 2);
	assert_true(H.rh_segs[0].rs_offset == 0xfffffffffffff000ull);
	assert_int_equal(H.rh_segs[1].rs_handle, 0xb2);
	assert_int_equal(H.rh_segs[1].rs_length, 12);
	assert_true(H.rh_segs[1].rs_offset == 4);
	assert_int_equal(H.rh_reply.ck_first, 2);
	assert_int_equal(H.rh_reply.ck_nsegs, 1);
	assert_int_equal(H.rh_segs[2].rs_handle, 0xc1);
	assert_true(H.rh_segs[2].rs_offset == 0x700000000ull);
	assert_int_equal(H.rh_hdr_len, sizeof(w) - 4);
	assert_int_equal(rpcrdma_hdr_len(&H), sizeof(w) - 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_table),
		cmocka_unit_test(t02_truncate_every_offset),
		cmocka_unit_test(t03_round_trip),
		cmocka_unit_test(t04_kernel_null_reply),
		cmocka_unit_test(t05_encode_kernel_bytes),
		cmocka_unit_test(t06_len_with_reply_chunk),
		cmocka_unit_test(t07_limits),
		cmocka_unit_test(t08_capacity),
		cmocka_unit_test(t09_error_reply_fields),
		cmocka_unit_test(t10_check_reply),
		cmocka_unit_test(t11_msgp_pad),
		cmocka_unit_test(t12_encode_errors),
		cmocka_unit_test(t13_err_str),
		cmocka_unit_test(t14_no_allocation),
		cmocka_unit_test(t15_segment_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
