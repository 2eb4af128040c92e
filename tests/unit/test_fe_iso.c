// SPDX-License-Identifier: MIT
/*
 * This file contains the isolation tests of the TCP frontend in a live
 * gateway (test_gw_harness.h): one client, however it misbehaves, cannot
 * starve the others of pool buffers or flood the log.  Each case plays
 * the attack and checks it is contained: log floods (REPLY records,
 * copies of one XID) stay within the per-peer rate limit while the
 * counters see every record; a client that never reads its replies is
 * closed after write_timeout and its buffers come back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_gw_harness.h"

#define NFS 100003u

static void conf(char *buf, size_t cap, uint16_t port, const char *extra)
{
	snprintf(buf, cap,
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "bytes_per_client = 1m\nreconnect_interval = 30ms\n%s\n"
		 "[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\ntransport = tcp\nport = %u\n", extra, port);
}

struct fx {
	struct h_server s;
	struct h_gw h;
	char logpath[64];
	int saved_err;
};

static void fx_start(struct fx *f, const char *extra)
{
	char text[1024];

	h_server_init(&f->s);
	h_server_start(&f->s);
	conf(text, sizeof(text), f->s.port, extra);
	h_gw_start(&f->h, text);
	f->saved_err = -1;
}

static void fx_stop(struct fx *f)
{
	h_pump(&f->h, 20);
	assert_int_equal(h_gw_stop(&f->h), 0);	/* every buffer back */
	h_server_stop(&f->s, true);
}

/* The gateway logs at info level to a file, with the per-peer rate limit
 * the daemon uses. */
static void log_to_file(struct fx *f)
{
	int fd;

	snprintf(f->logpath, sizeof(f->logpath), "/tmp/test_fe_iso.XXXXXX");
	fd = mkstemp(f->logpath);
	assert_true(fd >= 0);
	f->h.log.gl_level = CFG_LOG_INFO;
	f->h.log.gl_rl = gw_log_rl_new(&f->h.st);
	fflush(stderr);
	f->saved_err = dup(2);
	dup2(fd, 2);
	close(fd);
}

/* Back to stderr; returns the lines containing needle. */
static unsigned log_end(struct fx *f, const char *needle)
{
	FILE *fp;
	char line[1024];
	unsigned n = 0;

	fflush(stderr);
	dup2(f->saved_err, 2);
	close(f->saved_err);
	f->saved_err = -1;
	fp = fopen(f->logpath, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		if (strstr(line, needle))
			n++;
	fclose(fp);
	unlink(f->logpath);
	return n;
}

static void log_free(struct fx *f)
{
	gw_log_rl_free(f->h.log.gl_rl);
	f->h.log.gl_rl = NULL;
	f->h.log.gl_level = -1;
}

/* Send n copies of the record rec (len bytes) in batches, pumping the
 * loop until counter ctr has seen each batch. */
static void flood(struct fx *f, int fd, const uint8_t *rec, size_t len, unsigned n,
		  enum gw_ctr ctr, uint64_t per_rec)
{
	static uint8_t batch[256 * 64];
	uint64_t base = f->h.st.gs_ctr[ctr], want = base;
	unsigned per = (unsigned)(sizeof(batch) / len);

	assert_true(len <= 64);
	for (unsigned i = 0; i < per; i++)
		memcpy(batch + i * len, rec, len);
	for (unsigned sent = 0; sent < n;) {
		unsigned k = n - sent < per ? n - sent : per;
		uint64_t end = gw_now_ms() + 5000;

		h_send(fd, batch, k * len);
		sent += k;
		want += k * per_rec;
		while (f->h.st.gs_ctr[ctr] < want && gw_now_ms() < end)
			event_base_loop(f->h.base, EVLOOP_NONBLOCK);
		assert_true(f->h.st.gs_ctr[ctr] >= want);
	}
}

/* Lines the rate limit lets through in secs seconds: GW_LOG_RATE a second
 * plus one "suppressed" line, for each second the flood touched. */
static unsigned rl_bound(uint64_t t0_ms)
{
	uint64_t secs = (gw_now_ms() - t0_ms) / 1000 + 2;

	return (unsigned)(secs * (GW_LOG_RATE + 1));
}

/* 1. 20 000 REPLY records from one client: each is counted and dropped,
 * the log gets at most GW_LOG_RATE lines a second from that peer; the
 * connection still serves calls. */
static void t01_reply_flood_log(void **state)
{
	struct fx f;
	uint8_t rec[64], buf[64];
	uint64_t t0;
	unsigned lines;
	int fd;

	(void)state;
	fx_start(&f, "");
	fd = h_client(&f.h);
	h_call(rec, 3, 2, NFS, 3, 1);
	chk_put_be32(rec + 8, 1);	/* REPLY */
	log_to_file(&f);
	t0 = gw_now_ms();
	flood(&f, fd, rec, 48, 20000, GW_CTR_NOT_A_CALL, 1);
	lines = log_end(&f, "test#");	/* the flooding peer's lines */
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_NOT_A_CALL], 20000);
	if (lines > rl_bound(t0))
		fail_msg("%u log lines for 20000 REPLY records (bound %u)", lines, rl_bound(t0));
	assert_true(f.h.st.gs_ctr[GW_CTR_LOG_SUPPRESSED] >= 20000 - lines);
	h_send(fd, buf, h_call(buf, 4, 2, NFS, 3, 4));
	assert_int_equal(h_reply(&f.h, fd, buf, sizeof(buf), 3000), 28);
	log_free(&f);
	close(fd);
	fx_stop(&f);
}

/* 2. 5 000 copies of one XID while the first is in flight: 4 999 dropped
 * retransmissions, counted, the log bounded; the reply still comes. */
static void t02_dup_xid_flood_log(void **state)
{
	struct fx f;
	uint8_t rec[64], buf[64];
	uint64_t t0;
	unsigned lines;
	size_t n;
	int fd;

	(void)state;
	fx_start(&f, "");
	h_server_set(&f.s, true, 0);
	fd = h_client(&f.h);
	n = h_call(rec, 0x5151, 2, NFS, 3, 7);
	h_send(fd, rec, n);
	h_pump(&f.h, 50);
	log_to_file(&f);
	t0 = gw_now_ms();
	flood(&f, fd, rec, n, 4999, GW_CTR_RETRANS_INFLIGHT, 1);
	lines = log_end(&f, "test#");	/* the flooding peer's lines */
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_RETRANS_INFLIGHT], 4999);
	if (lines > rl_bound(t0))
		fail_msg("%u log lines for 4999 retransmissions (bound %u)", lines, rl_bound(t0));
	h_server_set(&f.s, false, 0);
	assert_int_equal(h_reply(&f.h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf), 0x5151);
	log_free(&f);
	close(fd);
	fx_stop(&f);
}

/* Write all n bytes to the non-blocking fd, pumping the loop while the
 * socket is full. */
static void send_pumped(struct h_gw *h, int fd, const uint8_t *p, size_t n)
{
	uint64_t end = gw_now_ms() + 5000;

	while (n && gw_now_ms() < end) {
		ssize_t w = write(fd, p, n);

		if (w > 0) {
			p += w;
			n -= (size_t)w;
		}
		event_base_loop(h->base, EVLOOP_NONBLOCK);
	}
	assert_int_equal(n, 0);
}

/* 3. A client sends 1 000 calls and never reads (the gateway's send
 * buffer is small): replies queue up, then write_timeout closes it, its
 * queued replies freed (no buffer left out at the end); another client is
 * served meanwhile. */
static void t03_write_timeout(void **state)
{
	static uint8_t calls[1000 * 48];
	struct fx f;
	uint8_t buf[64];
	int sv[2], small = 4096, good;
	unsigned base;
	uint64_t end;
	size_t n = 0;

	(void)state;
	fx_start(&f, "calls_per_client = 32\nwrite_timeout = 300ms");
	good = h_client(&f.h);
	h_send(good, buf, h_call(buf, 76, 2, NFS, 3, 76));
	assert_int_equal(h_reply(&f.h, good, buf, sizeof(buf), 3000), 28);
	h_pump(&f.h, 20);
	base = gw_pool_avail(f.h.pool);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	assert_int_equal(fe_adopt_fd(f.h.fe, sv[1], "deaf"), 0);
	for (uint32_t i = 0; i < 1000; i++)
		n += h_call(calls + n, 0x10000 + i, 2, NFS, 3, i);
	send_pumped(&f.h, sv[0], calls, n);
	h_pump(&f.h, 100);
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_CLIENT_WRITE_TIMEOUT], 0);
	assert_true(gw_pool_avail(f.h.pool) < base);	/* replies pinned */
	h_send(good, buf, h_call(buf, 77, 2, NFS, 3, 77));
	assert_int_equal(h_reply(&f.h, good, buf, sizeof(buf), 3000), 28);
	end = gw_now_ms() + 3000;
	while (f.h.st.gs_ctr[GW_CTR_CLIENT_WRITE_TIMEOUT] == 0 && gw_now_ms() < end)
		h_pump(&f.h, 10);
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_CLIENT_WRITE_TIMEOUT], 1);
	assert_int_equal(fe_nconns(f.h.fe), 1);
	assert_int_equal(gw_pool_avail(f.h.pool), base);
	h_send(good, buf, h_call(buf, 78, 2, NFS, 3, 78));
	assert_int_equal(h_reply(&f.h, good, buf, sizeof(buf), 3000), 28);
	close(sv[0]);
	close(good);
	fx_stop(&f);
}

/* 4. Idle connections hold no pool buffer: 60 clients (the pool has 64
 * buffers) each send one call, get the reply and sit idle; 60 more send 2
 * bytes of a fragment header and stop.  A new client is answered at once
 * and the pool is (nearly) all free: only the server connection's
 * receive buffer is out. */
static void t04_idle_holds_no_buffer(void **state)
{
	struct fx f;
	uint8_t buf[64];
	int idle[60], half[60], fresh;

	(void)state;
	fx_start(&f, "");
	for (int i = 0; i < 60; i++) {
		idle[i] = h_client(&f.h);
		h_send(idle[i], buf, h_call(buf, 0x100 + (uint32_t)i, 2, NFS, 3, (uint32_t)i));
		assert_int_equal(h_reply(&f.h, idle[i], buf, sizeof(buf), 3000), 28);
	}
	h_pump(&f.h, 20);
	if (gw_pool_avail(f.h.pool) + 1 < gw_pool_count(f.h.pool))
		fail_msg("60 idle clients: %u of %u buffers free", gw_pool_avail(f.h.pool),
			 gw_pool_count(f.h.pool));
	for (int i = 0; i < 60; i++) {
		half[i] = h_client(&f.h);
		h_send(half[i], "\x80\x00", 2);
	}
	h_pump(&f.h, 50);
	if (gw_pool_avail(f.h.pool) + 1 < gw_pool_count(f.h.pool))
		fail_msg("60 half headers: %u of %u buffers free", gw_pool_avail(f.h.pool),
			 gw_pool_count(f.h.pool));
	fresh = h_client(&f.h);
	h_send(fresh, buf, h_call(buf, 0xf00d, 2, NFS, 3, 9));
	assert_int_equal(h_reply(&f.h, fresh, buf, sizeof(buf), 1000), 28);
	assert_int_equal(chk_be32(buf), 0xf00d);
	/* the idle ones still work, from a fresh buffer */
	h_send(idle[0], buf, h_call(buf, 0x200, 2, NFS, 3, 1));
	assert_int_equal(h_reply(&f.h, idle[0], buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf), 0x200);
	for (int i = 0; i < 60; i++) {
		close(idle[i]);
		close(half[i]);
	}
	close(fresh);
	fx_stop(&f);
}

/* 5. Fragment headers announcing 500 kB and no data: 10 such clients lock
 * up at most receive_ahead (4) buffers each (not the 35 the whole
 * fragment may need), hold none; new clients are served, and a 60 000-byte
 * call (beyond the promise) still goes through, taking buffers as its
 * bytes arrive. */
static void t05_header_promise_bounded(void **state)
{
	static uint8_t big[60000 + 4];
	struct h_server s;
	struct h_gw h;
	char text[1024];
	uint8_t buf[64], hdr[4];
	int att[10], fresh;
	unsigned out;

	(void)state;
	h_server_init(&s);
	h_server_start(&s);
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 256\nmax_record = 512k\nmax_calls = 64\n"
		 "bytes_per_client = 1m\n[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\ntransport = tcp\nport = %u\n", s.port);
	h_gw_start(&h, text);
	rm_encode_hdr(hdr, 500000, true);
	for (int i = 0; i < 10; i++) {
		att[i] = h_client(&h);
		h_send(att[i], hdr, 4);
	}
	h_pump(&h, 100);
	out = gw_pool_count(h.pool) - gw_pool_unpromised(h.pool);	/* held or promised */
	if (out > 10 * h.cf->cf_receive_ahead + 1)
		fail_msg("10 headers of 500 kB lock up %u buffers", out);
	fresh = h_client(&h);
	h_send(fresh, buf, h_call(buf, 0xf00d, 2, NFS, 3, 9));
	assert_int_equal(h_reply(&h, fresh, buf, sizeof(buf), 1000), 28);
	h_call(big, 0xb16, 2, NFS, 3, 0);
	memset(big + 44, 0xab, sizeof(big) - 48);
	chk_put_be32(big + sizeof(big) - 4, 0x7a6);
	rm_encode_hdr(big, sizeof(big) - 4, true);
	send_pumped(&h, fresh, big, sizeof(big));
	assert_int_equal(h_reply(&h, fresh, buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf), 0xb16);
	assert_int_equal(chk_be32(buf + 24), 0x7a6);
	for (int i = 0; i < 10; i++)
		close(att[i]);
	close(fresh);
	h_pump(&h, 20);
	assert_int_equal(h_gw_stop(&h), 0);
	h_server_stop(&s, true);
}

/* A client whose gateway-side socket has a small send buffer and which
 * never reads: returns the test's end. */
static int deaf_client(struct h_gw *h, const char *name)
{
	int sv[2], small = 4096;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	assert_int_equal(fe_adopt_fd(h->fe, sv[1], name), 0);
	return sv[0];
}

/* Clients that never read, until the pool is pinned: each sends up to 40
 * calls of 12 000 bytes, one at a time, and reads nothing, until the calls
 * whose replies cannot be written hold the pool down to the servers'
 * reserve (6: one 64k record of 16k buffers); how many replies fit a
 * socket varies, so as many such clients as it takes (3 or so).  Returns
 * how many, their ends in deaf[]. */
static int pin_pool(struct h_gw *h, int deaf[6])
{
	static uint8_t call[12004];
	int ndeaf = 0;

	while (gw_pool_unpromised(h->pool) > 6 && ndeaf < 6) {
		char name[16];
		int d = ndeaf++;

		snprintf(name, sizeof(name), "deaf%d", d);
		deaf[d] = deaf_client(h, name);
		for (uint32_t i = 0; i < 40 && gw_pool_unpromised(h->pool) > 6; i++) {
			h_call(call, (uint32_t)d << 16 | i, 2, NFS, 3, 0);
			memset(call + 44, 0, sizeof(call) - 48);
			chk_put_be32(call + sizeof(call) - 4, i);
			rm_encode_hdr(call, sizeof(call) - 4, true);
			if (write(deaf[d], call, sizeof(call)) != (ssize_t)sizeof(call))
				break;	/* not read any more: its calls are at the cap */
			h_pump(h, 3);
		}
		h_pump(h, 20);
	}
	if (gw_pool_unpromised(h->pool) > 6)
		fail_msg("%d deaf clients: %u buffers still free", ndeaf, gw_pool_unpromised(h->pool));
	return ndeaf;
}

/* 6. The pool pinned by clients that never read (write_timeout off): other
 * clients' calls cannot even be received.  The client blocked longest is
 * evicted after evict_timeout (1 s), one a tick, until the pool recovers:
 * a client connected before and a new one are served, every buffer comes
 * back.  With evict_timeout = 0 the early client waits until the deaf ones
 * go away by themselves. */
static void pool_pressure(bool evict)
{
	struct h_server s;
	struct h_gw h;
	char text[1024];
	uint8_t buf[64];
	int deaf[6], ndeaf, early, fresh;

	h_server_init(&s);
	h_server_start(&s);
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 256\n"
		 "bytes_per_client = 1m\ncalls_per_client = 40\nwrite_timeout = 0\n%s"
		 "[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\ntransport = tcp\nport = %u\n",
		 evict ? "" : "evict_timeout = 0\n", s.port);
	h_gw_start(&h, text);
	early = h_client(&h);
	ndeaf = pin_pool(&h, deaf);
	h_send(early, buf, h_call(buf, 0xea, 2, NFS, 3, 1));
	if (!evict) {
		assert_int_equal(h_reply(&h, early, buf, sizeof(buf), 2000), -1);	/* starved */
		assert_int_equal(h.st.gs_ctr[GW_CTR_CLIENT_EVICTED], 0);
		for (int d = 0; d < ndeaf; d++)
			close(deaf[d]);
		ndeaf = 0;
	}
	assert_int_equal(h_reply(&h, early, buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf), 0xea);
	fresh = h_client(&h);
	h_send(fresh, buf, h_call(buf, 0xf4, 2, NFS, 3, 2));
	assert_int_equal(h_reply(&h, fresh, buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf), 0xf4);
	if (evict)
		assert_true(h.st.gs_ctr[GW_CTR_CLIENT_EVICTED] >= 1);
	assert_int_equal(h.st.gs_ctr[GW_CTR_CLIENT_WRITE_TIMEOUT], 0);
	for (int d = 0; d < ndeaf; d++)
		close(deaf[d]);
	close(early);
	close(fresh);
	h_pump(&h, 20);
	assert_int_equal(h_gw_stop(&h), 0);
	h_server_stop(&s, true);
}

static void t06_pool_pressure_evicts(void **state)
{
	(void)state;
	pool_pressure(true);
	pool_pressure(false);
}

/* 7. Small calls in flight share the receive buffer: 20 calls sent one at
 * a time while the server holds the replies take one buffer, not 20; once
 * the replies are written the connection holds none. */
static void t07_calls_in_flight_share(void **state)
{
	struct fx f;
	uint8_t buf[64];
	unsigned base;
	int fd;

	(void)state;
	fx_start(&f, "");
	fd = h_client(&f.h);
	h_send(fd, buf, h_call(buf, 1, 2, NFS, 3, 1));
	assert_int_equal(h_reply(&f.h, fd, buf, sizeof(buf), 3000), 28);
	h_pump(&f.h, 20);
	base = gw_pool_avail(f.h.pool);
	h_server_set(&f.s, true, 0);
	for (uint32_t i = 0; i < 20; i++) {
		h_send(fd, buf, h_call(buf, 0x300 + i, 2, NFS, 3, i));
		h_pump(&f.h, 3);
	}
	h_pump(&f.h, 50);
	assert_int_equal(h_server_calls(&f.s), 21);
	if (gw_pool_avail(f.h.pool) + 1 < base)
		fail_msg("20 small calls in flight hold %u buffers", base - gw_pool_avail(f.h.pool));
	h_server_set(&f.s, false, 0);
	for (int i = 0; i < 20; i++)
		assert_int_equal(h_reply(&f.h, fd, buf, sizeof(buf), 3000), 28);
	h_pump(&f.h, 20);
	assert_int_equal(gw_pool_avail(f.h.pool), base);
	close(fd);
	fx_stop(&f);
}

/* 8. No deadlock when records beyond their promise run the pool dry: two
 * clients send the first half of a 60 000-byte call each (9 buffers of 8k,
 * beyond the promise of 1 + 4), then the rest; on 24 buffers (11 kept for
 * replies) neither can finish.  The
 * record timeout, running while a record waits for buffers, ends one, and
 * the pool serves the other and a new client; each of the two is answered
 * or closed. */
static void t08_stuck_records_time_out(void **state)
{
	static uint8_t big[2][60000 + 4];
	struct h_server s;
	struct h_gw h;
	char text[1024];
	uint8_t buf[64];
	int fd[2], fresh, done = 0;

	(void)state;
	h_server_init(&s);
	h_server_start(&s);
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 8k\nbuffers = 24\nmax_record = 64k\nmax_calls = 64\n"
		 "bytes_per_client = 1m\nrecord_timeout = 300ms\n"
		 "[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\ntransport = tcp\nport = %u\n", s.port);
	h_gw_start(&h, text);
	for (int i = 0; i < 2; i++) {
		h_call(big[i], 0xb0 + (uint32_t)i, 2, NFS, 3, 0);
		memset(big[i] + 44, 0x5a, sizeof(big[i]) - 48);
		chk_put_be32(big[i] + sizeof(big[i]) - 4, (uint32_t)i);
		rm_encode_hdr(big[i], sizeof(big[i]) - 4, true);
		fd[i] = h_client(&h);
	}
	for (int i = 0; i < 2; i++) {
		h_send(fd[i], big[i], 30000);
		h_pump(&h, 30);
	}
	for (int i = 0; i < 2; i++)
		h_send(fd[i], big[i] + 30000, sizeof(big[i]) - 30000);
	fresh = h_client(&h);
	h_send(fresh, buf, h_call(buf, 0xf5, 2, NFS, 3, 5));
	assert_int_equal(h_reply(&h, fresh, buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf), 0xf5);
	for (int i = 0; i < 2; i++) {
		int r = h_reply(&h, fd[i], buf, sizeof(buf), 3000);

		assert_true(r == 28 || r == 0);		/* answered, or closed */
		if (r == 28) {
			assert_int_equal(chk_be32(buf), 0xb0 + (uint32_t)i);
			done++;
		}
	}
	assert_int_equal(done + (int)h.st.gs_ctr[GW_CTR_CLIENT_RECORD_TIMEOUT], 2);
	for (int i = 0; i < 2; i++)
		close(fd[i]);
	close(fresh);
	h_pump(&h, 20);
	assert_int_equal(h_gw_stop(&h), 0);
	h_server_stop(&s, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_reply_flood_log),
		cmocka_unit_test(t02_dup_xid_flood_log),
		cmocka_unit_test(t03_write_timeout),
		cmocka_unit_test(t04_idle_holds_no_buffer),
		cmocka_unit_test(t05_header_promise_bounded),
		cmocka_unit_test(t06_pool_pressure_evicts),
		cmocka_unit_test(t07_calls_in_flight_share),
		cmocka_unit_test(t08_stuck_records_time_out),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
