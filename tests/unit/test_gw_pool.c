// SPDX-License-Identifier: MIT
/* Unit tests for the owner bookkeeping of the buffer pool (gateway/pool.c,
 * gw_buf_get_for): a target a server writes for one client is zeroed
 * wherever it might hold another client's bytes, and only there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pool.h"

#define BS 4096

static bool all(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* Take the one buffer of a one-buffer pool for owner, offer bytes; fill
 * the offered bytes with v (the server's write) and give it back. */
static uint32_t use(struct gw_pool *p, uint64_t owner, uint32_t offer, uint8_t v, uint8_t **data)
{
	uint32_t cleared = 12345;
	struct gw_buf *b = gw_buf_get_for(p, owner, offer, &cleared);

	assert_non_null(b);
	*data = b->gb_data;
	memset(b->gb_data, v, offer < BS ? offer : BS);
	gw_buf_put(p, b);
	return cleared;
}

/* 1. Fresh memory is zeroes: nothing cleared.  Another client's bytes are
 * cleared over the whole offer; the same client's are not, except past
 * what it owned before. */
static void t01_owners(void **state)
{
	struct gw_pool *p = gw_pool_new(BS, 1, false);
	uint8_t *d;

	(void)state;
	assert_int_equal(use(p, 7, 1000, 0xa7, &d), 0);		/* clean */
	assert_int_equal(use(p, 7, 1000, 0xa7, &d), 0);		/* its own bytes */
	/* client 8 is offered 2000: all of it may hold 7's bytes */
	{
		uint32_t c;
		struct gw_buf *b = gw_buf_get_for(p, 8, 2000, &c);

		assert_int_equal(c, 2000);
		assert_true(all(b->gb_data, 2000, 0));
		assert_true(all(b->gb_data + 2000, BS - 2000, 0));	/* zeroes from the map */
		memset(b->gb_data, 0xb8, 500);
		gw_buf_put(p, b);
	}
	/* 8 again, offered 3000: [0, 2000) is its own, [2000, 3000) was
	 * never written since the map but counts as unknown: cleared */
	{
		uint32_t c;
		struct gw_buf *b = gw_buf_get_for(p, 8, 3000, &c);

		assert_int_equal(c, 1000);
		assert_true(all(b->gb_data, 500, 0xb8));		/* kept: 8's own */
		gw_buf_put(p, b);
	}
	/* back to 7: everything offered is cleared, 8's bytes gone */
	{
		uint32_t c;
		struct gw_buf *b = gw_buf_get_for(p, 7, BS, &c);

		assert_int_equal(c, BS);
		assert_true(all(b->gb_data, BS, 0));
		gw_buf_put(p, b);
	}
	gw_pool_free(p);
}

/* 2. A use no client owns (gw_buf_get: a receive buffer, a shared server
 * reply) makes the buffer anyone's; no owner (0) or a reserved value is
 * always cleared and owns nothing afterwards. */
static void t02_anyone(void **state)
{
	struct gw_pool *p = gw_pool_new(BS, 1, false);
	struct gw_buf *b;
	uint32_t c;
	uint8_t *d;

	(void)state;
	assert_int_equal(use(p, 7, BS, 0xa7, &d), 0);
	b = gw_buf_get(p);
	assert_int_equal(b->gb_owner, GW_BUF_ANYONE);
	memset(b->gb_data, 0x55, 100);			/* someone else's record */
	gw_buf_put(p, b);
	b = gw_buf_get_for(p, 7, 200, &c);		/* even for the last owner */
	assert_int_equal(c, 200);
	assert_true(all(b->gb_data, 200, 0));
	gw_buf_put(p, b);
	assert_int_equal(use(p, 0, 300, 1, &d), 300);
	assert_int_equal(use(p, 0, 300, 1, &d), 300);
	assert_int_equal(use(p, GW_BUF_CLEAN, 300, 1, &d), 300);
	assert_int_equal(use(p, GW_BUF_ANYONE, 300, 1, &d), 300);
	/* an offer past the buffer is cut to it */
	assert_int_equal(use(p, 9, BS * 2, 2, &d), BS);
	assert_int_equal(use(p, 9, BS * 2, 2, &d), 0);
	gw_pool_free(p);
}

/* 3. Many buffers, two clients taking turns (the LIFO free list gives
 * each mostly the other's buffers): nothing of one ever reads back in the
 * other's offered extent. */
static void t03_turns(void **state)
{
	struct gw_pool *p = gw_pool_new(BS, 8, false);
	struct gw_buf *b[8];

	(void)state;
	for (unsigned round = 0; round < 50; round++) {
		uint64_t owner = 1 + round % 2;
		unsigned n = 1 + round % 8;
		uint32_t offer = 100 + (round * 997) % (BS - 100), c;

		for (unsigned i = 0; i < n; i++) {
			b[i] = gw_buf_get_for(p, owner, offer, &c);
			assert_non_null(b[i]);
			for (uint32_t k = 0; k < offer; k++)
				assert_true(b[i]->gb_data[k] == 0 || b[i]->gb_data[k] == owner);
			memset(b[i]->gb_data, (int)owner, offer);
		}
		for (unsigned i = 0; i < n; i++)
			gw_buf_put(p, b[i]);
	}
	gw_pool_free(p);
}

/* 4. A receive buffer (gw_buf_get_own) holds only its connection's bytes:
 * that connection's next target there needs no clearing, another's does;
 * a promised one is taken from the promise. */
static void t04_receive_buffers(void **state)
{
	struct gw_pool *p = gw_pool_new(BS, 2, false);
	struct gw_buf *b, *hold = gw_buf_get(p);		/* buffer 0: one left */
	uint32_t c;
	uint8_t *d;

	(void)state;
	assert_int_equal(use(p, 5, BS, 0x55, &d), 0);		/* clean: 5's now */
	b = gw_buf_get_own(p, 5, false);			/* 5's record lands */
	assert_ptr_equal(b->gb_data, d);
	memset(b->gb_data, 0x5c, 300);
	gw_buf_put(p, b);
	assert_int_equal(use(p, 5, BS, 0x55, &d), 0);		/* still all 5's */
	b = gw_buf_get_own(p, 6, false);			/* 6's record */
	memset(b->gb_data, 0x6c, 300);
	gw_buf_put(p, b);
	b = gw_buf_get_for(p, 5, BS, &c);
	assert_int_equal(c, BS);
	assert_true(all(b->gb_data, BS, 0));
	gw_buf_put(p, b);
	gw_buf_put(p, hold);
	assert_true(gw_pool_promise(p, 1, 0));
	b = gw_buf_get_own(p, 0, true);				/* no owner: anyone's */
	assert_non_null(b);
	assert_int_equal(b->gb_index, 0);
	assert_int_equal(b->gb_owner, GW_BUF_ANYONE);
	assert_int_equal(gw_pool_unpromised(p), 1);
	gw_buf_put(p, b);
	assert_int_equal(use(p, 5, 10, 1, &d), 0);		/* its last place, its own */
	hold = gw_buf_get_for(p, 5, 10, &c);			/* that place kept */
	assert_int_equal(hold->gb_index, 1);
	assert_int_equal(use(p, 5, 10, 1, &d) + use(p, 5, 10, 1, &d), 10);	/* 0: anyone's */
	gw_buf_put(p, hold);
	gw_pool_free(p);
}

/* 5. What a connection's receiver filled ([0, used) from the start) counts
 * as that connection's: its next target there is cleared only past it. */
static void t05_received_extent(void **state)
{
	struct gw_pool *p = gw_pool_new(BS, 1, false);
	struct gw_buf *b;
	uint32_t c;

	(void)state;
	b = gw_buf_get(p);				/* anyone's */
	gw_buf_put(p, b);
	b = gw_buf_get_own(p, 4, false);
	assert_int_equal(b->gb_own_len, 0);
	gw_buf_owned(b, 4, 1000);			/* 4's receiver filled 1000 */
	gw_buf_owned(b, 5, 3000);			/* not 5's buffer: no change */
	assert_int_equal(b->gb_own_len, 1000);
	gw_buf_put(p, b);
	b = gw_buf_get_for(p, 4, 2000, &c);
	assert_int_equal(c, 1000);
	gw_buf_put(p, b);
	b = gw_buf_get_own(p, 4, false);
	gw_buf_owned(b, 4, BS * 2);			/* capped at the buffer */
	assert_int_equal(b->gb_own_len, BS);
	gw_buf_put(p, b);
	b = gw_buf_get_for(p, 5, 10, &c);		/* another connection */
	assert_int_equal(c, 10);
	gw_buf_put(p, b);
	gw_pool_free(p);
}

/* 6. The lowest free buffer first, whatever order they came back in:
 * buffers taken one after another lie side by side (one RDMA segment). */
static void t06_lowest_first(void **state)
{
	struct gw_pool *p = gw_pool_new(BS, 130, false);
	struct gw_buf *b[130];

	(void)state;
	for (unsigned i = 0; i < 130; i++) {
		b[i] = gw_buf_get(p);
		assert_non_null(b[i]);
		assert_int_equal(b[i]->gb_index, i);
		if (i > 0)
			assert_ptr_equal(b[i]->gb_data, b[i - 1]->gb_data + BS);
	}
	assert_null(gw_buf_get(p));
	gw_buf_put(p, b[5]);		/* across the map's words, */
	gw_buf_put(p, b[129]);		/* in no order */
	gw_buf_put(p, b[2]);
	gw_buf_put(p, b[70]);
	assert_ptr_equal(gw_buf_get(p), b[2]);
	assert_ptr_equal(gw_buf_get(p), b[5]);
	assert_ptr_equal(gw_buf_get(p), b[70]);
	assert_ptr_equal(gw_buf_get(p), b[129]);
	assert_null(gw_buf_get(p));
	for (unsigned i = 0; i < 130; i++)
		gw_buf_put(p, b[i]);
	assert_int_equal(gw_pool_avail(p), 130);
	/* a promised buffer is not anyone's */
	assert_true(gw_pool_promise(p, 129, 0));
	assert_non_null(b[0] = gw_buf_get(p));
	assert_null(gw_buf_get(p));
	gw_buf_put(p, b[0]);
	gw_pool_free(p);
}

/* 7. A record running on takes the buffer right after its last one when
 * that is free, across the map's words; else the lowest free; never past
 * the pool's end; a promise still holds the buffers back from others.
 * A fresh receive buffer is the lowest free one with a free neighbour,
 * and a server's target of several buffers is one run the same way. */
static void t07_next_to_prev(void **state)
{
	struct gw_pool *p = gw_pool_new(BS, 130, false);
	struct gw_buf *b[130], *x;

	(void)state;
	for (unsigned i = 0; i < 130; i++)
		b[i] = gw_buf_get(p);
	gw_buf_put(p, b[1]);
	gw_buf_put(p, b[64]);
	gw_buf_put(p, b[65]);
	x = gw_buf_get_own_after(p, 9, false, b[63]);	/* 64, not the lowest (1) */
	assert_ptr_equal(x, b[64]);
	assert_int_equal(x->gb_owner, 9);
	assert_ptr_equal(gw_buf_get_own_after(p, 9, false, x), b[65]);
	gw_buf_put(p, b[128]);
	gw_buf_put(p, b[129]);
	/* 67 is taken: the lowest free (1) */
	assert_ptr_equal(gw_buf_get_own_after(p, 9, false, b[66]), b[1]);
	/* past the last buffer: the lowest free */
	assert_ptr_equal(gw_buf_get_own_after(p, 9, false, b[129]), b[128]);
	assert_ptr_equal(gw_buf_get(p), b[129]);
	/* the one promised buffer left: only the promise takes it */
	gw_buf_put(p, b[10]);
	assert_true(gw_pool_promise(p, 1, 0));
	assert_null(gw_buf_get_own_after(p, 9, false, b[9]));
	assert_ptr_equal(gw_buf_get_own_after(p, 9, true, b[9]), b[10]);
	assert_int_equal(gw_pool_avail(p), 0);
	for (unsigned i = 0; i < 130; i++)
		gw_buf_put(p, b[i]);
	assert_int_equal(gw_pool_avail(p), 130);
	/* no prev (a fresh receive buffer): the lowest free one with a free
	 * neighbour; a pair across the map's words counts; none: the lowest */
	for (unsigned i = 0; i < 130; i++)
		b[i] = gw_buf_get(p);
	gw_buf_put(p, b[0]);
	gw_buf_put(p, b[2]);
	gw_buf_put(p, b[63]);
	gw_buf_put(p, b[64]);
	gw_buf_put(p, b[100]);
	assert_ptr_equal(gw_buf_get_own(p, 9, false), b[0]);	/* plain: the lowest, not 63 */
	assert_ptr_equal(gw_buf_get_own_after(p, 9, false, NULL), b[63]);
	assert_ptr_equal(gw_buf_get_own_after(p, 9, false, NULL), b[2]);	/* no pair left */
	for (unsigned i = 0; i < 130; i++)
		if (i != 64 && i != 100)	/* still free */
			gw_buf_put(p, b[i]);
	assert_int_equal(gw_pool_avail(p), 130);
	/* a server's target of three buffers for a client with no bytes in
	 * the pool: the highest three free, one run, zeroed for its owner
	 * like gw_buf_get_for (receive buffers take the lowest); a plain
	 * target then the highest free left */
	b[1] = gw_buf_get(p);
	memset(b[126]->gb_data, 0xab, BS);	/* stale bytes in a free buffer */
	{
		struct gw_buf *t[3];
		uint32_t c;

		for (unsigned i = 0; i < 3; i++) {
			t[i] = gw_buf_get_for_after(p, 11, BS, &c, i ? t[i - 1] : NULL, 3);
			assert_int_equal(t[i]->gb_index, 127 + i);
			assert_int_equal(t[i]->gb_owner, 11);
		}
		assert_ptr_equal(gw_buf_get_for(p, 11, BS, &c), b[126]);
		assert_int_equal(c, BS);				/* zeroed */
		assert_int_equal(b[126]->gb_data[BS - 1], 0);
		for (unsigned i = 0; i < 3; i++)
			gw_buf_put(p, t[i]);
		gw_buf_put(p, b[126]);
	}
	gw_buf_put(p, b[1]);
	assert_int_equal(gw_pool_avail(p), 130);
	gw_pool_free(p);
}

/* 8. Clients whose calls overlap in time, in a changing order (several
 * connections each reading a file): each call's record takes a receive
 * buffer, then its target; each target goes back to where the client's
 * last one started while that is free and still its own, so after the
 * first round nothing is zeroed; every offered byte is 0 or the taker's
 * own throughout.  A client whose place another took is zeroed there. */
static void t08_owner_hint(void **state)
{
	enum { OWNERS = 4, RUN = 4 };
	struct gw_pool *p = gw_pool_new(BS, 64, false);
	struct gw_buf *t[OWNERS][RUN], *rec[OWNERS];
	uint32_t later = 0, c;

	(void)state;
	for (unsigned round = 0; round < 20; round++) {
		for (unsigned k = 0; k < OWNERS; k++) {
			unsigned o = (k + round * 3) % OWNERS;	/* order changes each round */
			uint64_t owner = 10 + o;

			/* the call's record first, in a receive buffer */
			rec[o] = gw_buf_get_own_after(p, owner, false, NULL);
			assert_non_null(rec[o]);
			for (unsigned i = 0; i < RUN; i++) {
				t[o][i] = gw_buf_get_for_after(p, owner, BS, &c, i ? t[o][i - 1] : NULL,
							       RUN);
				assert_non_null(t[o][i]);
				if (round > 0)
					later += c;
				for (uint32_t b = 0; b < BS; b++)
					assert_true(t[o][i]->gb_data[b] == 0 || t[o][i]->gb_data[b] == owner);
				memset(t[o][i]->gb_data, (int)owner, BS);	/* the server's write */
			}
		}
		for (unsigned o = 0; o < OWNERS; o++) {
			gw_buf_put(p, rec[o]);
			for (unsigned i = 0; i < RUN; i++)
				gw_buf_put(p, t[o][i]);
		}
	}
	assert_int_equal(later, 0);
	/* Two targets of one client at once: the second finds the first's
	 * place busy and takes never-written buffers; the next two take one
	 * place each. */
	{
		struct gw_buf *x[RUN], *y[RUN];
		unsigned first, second;

		for (unsigned i = 0; i < RUN; i++)
			x[i] = gw_buf_get_for_after(p, 10, BS, &c, i ? x[i - 1] : NULL, RUN);
		first = x[0]->gb_index;
		for (unsigned i = 0; i < RUN; i++) {
			y[i] = gw_buf_get_for_after(p, 10, BS, &c, i ? y[i - 1] : NULL, RUN);
			assert_int_equal(c, 0);
		}
		second = y[0]->gb_index;
		assert_true(second != first);
		for (unsigned i = 0; i < RUN; i++) {
			memset(y[i]->gb_data, 10, BS);
			gw_buf_put(p, x[i]);
			gw_buf_put(p, y[i]);
		}
		/* Two again: one in each of its places, nothing zeroed. */
		for (unsigned i = 0; i < RUN; i++) {
			y[i] = gw_buf_get_for_after(p, 10, BS, &c, i ? y[i - 1] : NULL, RUN);
			assert_int_equal(c, 0);
		}
		for (unsigned i = 0; i < RUN; i++) {
			x[i] = gw_buf_get_for_after(p, 10, BS, &c, i ? x[i - 1] : NULL, RUN);
			assert_int_equal(c, 0);
		}
		assert_true(x[0]->gb_index == first || x[0]->gb_index == second);
		assert_true(y[0]->gb_index == first || y[0]->gb_index == second);
		assert_true(x[0]->gb_index != y[0]->gb_index);
		for (unsigned i = 0; i < RUN; i++) {
			gw_buf_put(p, x[i]);
			gw_buf_put(p, y[i]);
		}
	}
	/* A newcomer takes buffers never written while there are any. */
	for (unsigned i = 0; i < RUN; i++) {
		t[0][i] = gw_buf_get_for_after(p, 99, BS, &c, i ? t[0][i - 1] : NULL, RUN);
		assert_int_equal(c, 0);
	}
	for (unsigned i = 0; i < RUN; i++)
		gw_buf_put(p, t[0][i]);
	assert_int_equal(gw_pool_avail(p), 64);
	gw_pool_free(p);
}

/* 9. With no place of its own and nothing never written left, a client
 * takes another's place: zeroed for it, and the other, finding its place
 * gone, is zeroed where it lands. */
static void t09_place_taken(void **state)
{
	enum { RUN = 4 };
	struct gw_pool *p = gw_pool_new(BS, RUN, false);
	struct gw_buf *t[RUN];
	uint32_t c;

	(void)state;
	for (uint64_t owner = 10; owner <= 99; owner += 89)	/* 10, then 99 */
		for (unsigned round = 0; round < 2; round++) {
			for (unsigned i = 0; i < RUN; i++) {
				t[i] = gw_buf_get_for_after(p, owner, BS, &c, i ? t[i - 1] : NULL, RUN);
				assert_non_null(t[i]);
				/* clean, then 10's own; 99: all 10's, zeroed, then its own */
				assert_int_equal(c, owner == 99 && round == 0 ? BS : 0);
				assert_true(all(t[i]->gb_data, BS, round == 0 ? 0 : (uint8_t)owner));
				memset(t[i]->gb_data, (int)owner, BS);
			}
			for (unsigned i = 0; i < RUN; i++)
				gw_buf_put(p, t[i]);
		}
	t[0] = gw_buf_get_for(p, 10, BS, &c);
	assert_int_equal(c, BS);
	assert_true(all(t[0]->gb_data, BS, 0));
	gw_buf_put(p, t[0]);
	gw_pool_free(p);
}

/* 10. A one-buffer target (a small READ) of a client with no place of its
 * own takes a buffer never taken while there is one, not the highest free
 * buffer another client's READ filled; with none left, the highest free,
 * zeroed. */
static void t10_one_buffer_clean(void **state)
{
	struct gw_pool *p = gw_pool_new(BS, 8, false);
	struct gw_buf *t[3], *b;
	uint32_t c;

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		t[i] = gw_buf_get_for_after(p, 10, BS, &c, i ? t[i - 1] : NULL, 3);
		assert_int_equal(t[i]->gb_index, 5 + i);
		memset(t[i]->gb_data, 10, BS);
	}
	for (unsigned i = 0; i < 3; i++)
		gw_buf_put(p, t[i]);
	for (unsigned i = 0; i < 5; i++) {		/* 4, 3, 2, 1, 0: never taken */
		b = gw_buf_get_for(p, 11 + i, BS, &c);
		assert_int_equal(b->gb_index, 4 - i);
		assert_int_equal(c, 0);
	}
	b = gw_buf_get_for(p, 20, BS, &c);		/* none left: 10's, zeroed */
	assert_int_equal(b->gb_index, 7);
	assert_int_equal(c, BS);
	assert_true(all(b->gb_data, BS, 0));
	gw_pool_free(p);
}

/* 11. A client with several small READs in flight has a place for each:
 * round after round, two clients taking four one-buffer targets each, in
 * changing order, zero nothing once their places are made. */
static void t11_several_places(void **state)
{
	enum { OWNERS = 2, INFLIGHT = 4, NBUFS = 16 };
	struct gw_pool *p = gw_pool_new(BS, NBUFS, false);
	struct gw_buf *t[OWNERS][INFLIGHT];
	uint32_t later = 0, c;

	(void)state;
	for (unsigned round = 0; round < 12; round++) {
		for (unsigned k = 0; k < OWNERS * INFLIGHT; k++) {
			unsigned o = (k + round) % OWNERS, i = k / OWNERS;
			uint64_t owner = 10 + o;

			t[o][i] = gw_buf_get_for(p, owner, BS, &c);
			assert_non_null(t[o][i]);
			if (round > 0)
				later += c;
			for (uint32_t b = 0; b < BS; b++)
				assert_true(t[o][i]->gb_data[b] == 0 || t[o][i]->gb_data[b] == owner);
			memset(t[o][i]->gb_data, (int)owner, BS);
		}
		for (unsigned k = 0; k < OWNERS * INFLIGHT; k++)	/* done in another order */
			gw_buf_put(p, t[(k + 1) % OWNERS][INFLIGHT - 1 - k / OWNERS]);
	}
	assert_int_equal(later, 0);
	assert_int_equal(gw_pool_avail(p), NBUFS);
	gw_pool_free(p);
}

/* 12. What a multi-buffer target's walk costs does not grow with the pool:
 * a large pool where no run is free at the top (every other buffer busy),
 * and one where every free run is another client's: each target looks at
 * a bounded number of buffers and is still placed. */
static void t12_walk_bounded(void **state)
{
	enum { N = 1u << 16, RUN = 4, BOUND = 2048 };
	struct gw_pool *p = gw_pool_new(BS, N, false);
	struct gw_buf **b = calloc(N, sizeof(*b)), *t[RUN];
	uint64_t w0;
	uint32_t c;

	(void)state;
	assert_non_null(p);
	assert_non_null(b);
	for (unsigned i = 0; i < N; i++) {	/* every buffer another client's */
		b[i] = gw_buf_get_for_after(p, 7, BS, &c, i ? b[i - 1] : NULL, N);
		assert_non_null(b[i]);
	}
	for (unsigned i = 0; i < N; i += 2)	/* every other one free */
		gw_buf_put(p, b[i]);
	for (unsigned i = 1; i < 2 * RUN; i += 2)	/* and a run at the bottom */
		gw_buf_put(p, b[i]);
	w0 = gw_pool_walked(p);
	for (unsigned i = 0; i < RUN; i++) {
		t[i] = gw_buf_get_for_after(p, 8, BS, &c, i ? t[i - 1] : NULL, RUN);
		assert_non_null(t[i]);
	}
	assert_true(gw_pool_walked(p) - w0 <= BOUND);
	for (unsigned i = 0; i < RUN; i++)
		gw_buf_put(p, t[i]);
	for (unsigned i = 2 * RUN + 1; i < N; i += 2)	/* all free: 7's runs */
		gw_buf_put(p, b[i]);
	assert_int_equal(gw_pool_avail(p), N);
	for (unsigned k = 0; k < 4; k++) {
		w0 = gw_pool_walked(p);
		for (unsigned i = 0; i < RUN; i++) {
			t[i] = gw_buf_get_for_after(p, 100 + k, BS, &c, i ? t[i - 1] : NULL, RUN);
			assert_non_null(t[i]);
		}
		assert_true(gw_pool_walked(p) - w0 <= BOUND);
		for (unsigned i = 0; i < RUN; i++)
			gw_buf_put(p, t[i]);
	}
	free(b);
	gw_pool_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_owners),
		cmocka_unit_test(t02_anyone),
		cmocka_unit_test(t03_turns),
		cmocka_unit_test(t04_receive_buffers),
		cmocka_unit_test(t05_received_extent),
		cmocka_unit_test(t06_lowest_first),
		cmocka_unit_test(t07_next_to_prev),
		cmocka_unit_test(t08_owner_hint),
		cmocka_unit_test(t09_place_taken),
		cmocka_unit_test(t10_one_buffer_clean),
		cmocka_unit_test(t11_several_places),
		cmocka_unit_test(t12_walk_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
