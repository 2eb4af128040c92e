// SPDX-License-Identifier: MIT
/* Unit tests for the TCP frontend (frontend-tcp/frontend.c) in a live
 * gateway (test_gw_harness.h): reassembly fed one byte at a time, garbage
 * and oversize records close the client, timeouts, REPLY messages, byte
 * caps, real TCP listeners on loopback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_gw_harness.h"

#define NFS 100003u

/* extra may set bytes_per_client itself (a key given twice is an error). */
static void conf(char *buf, size_t cap, uint16_t port, const char *extra)
{
	snprintf(buf, cap,
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "%sreconnect_interval = 30ms\n%s\n"
		 "[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\ntransport = tcp\nport = %u\n",
		 strstr(extra, "bytes_per_client") ? "" : "bytes_per_client = 1m\n", extra, port);
}

struct fx {
	struct h_server s;
	struct h_gw h;
};

static void fx_start(struct fx *f, const char *extra)
{
	char text[1024];

	h_server_init(&f->s);
	h_server_start(&f->s);
	conf(text, sizeof(text), f->s.port, extra);
	h_gw_start(&f->h, text);
}

static void fx_stop(struct fx *f)
{
	h_pump(&f->h, 20);
	assert_int_equal(h_gw_stop(&f->h), 0);	/* every buffer back */
	h_server_stop(&f->s, true);
}

/* Expect the gateway to close fd (read returns 0) within ms. */
static void expect_closed(struct h_gw *h, int fd, int ms)
{
	uint8_t buf[64];

	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), ms), 0);
}

/* 1. A call in 5 fragments, written one byte at a time with the loop
 * running between bytes, arrives whole; reply correct. */
static void t01_byte_at_a_time(void **state)
{
	struct fx f;
	uint8_t call[128], wire[256], buf[64];
	size_t n, w = 0, off = 4;
	int fd;

	(void)state;
	fx_start(&f, "");
	fd = h_client(&f.h);
	n = h_call(call, 0xbeef, 2, NFS, 3, 0x1234);	/* 44 data bytes */
	/* Re-frame the 44 bytes as fragments of 9. */
	while (off < n) {
		size_t k = n - off < 9 ? n - off : 9;

		rm_encode_hdr(wire + w, (uint32_t)k, off + k == n);
		memcpy(wire + w + 4, call + off, k);
		w += 4 + k;
		off += k;
	}
	for (size_t i = 0; i < w; i++) {
		h_send(fd, wire + i, 1);
		event_base_loop(f.h.base, EVLOOP_NONBLOCK);
	}
	assert_int_equal(h_reply(&f.h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf), 0xbeef);
	assert_int_equal(chk_be32(buf + 24), 0x1234);
	close(fd);
	fx_stop(&f);
}

/* 2. Table of bad input: each closes that client only, with its counter. */
static void t02_garbage_closes(void **state)
{
	static const struct {
		const char *what;
		uint8_t bytes[16];
		size_t len;
		enum gw_ctr ctr;
	} t[] = {
		/* 1 */ { "not RPC", { 0x80, 0, 0, 8, 'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o' }, 12,
			  GW_CTR_CLIENT_GARBAGE },
		/* 2 */ { "msg type 7", { 0x80, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 7 }, 12, GW_CTR_CLIENT_GARBAGE },
		/* 3 */ { "empty record", { 0x80, 0, 0, 0 }, 4, GW_CTR_CLIENT_GARBAGE },
		/* 4 */ { "above max_record", { 0x80, 0x10, 0, 0 }, 4, GW_CTR_CLIENT_TOO_BIG },
		/* 5 */ { "truncated call header", { 0x80, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2 }, 16,
			  GW_CTR_CLIENT_GARBAGE },
	};
	struct fx f;
	uint8_t buf[64];
	int good;

	(void)state;
	fx_start(&f, "");
	good = h_client(&f.h);
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t before = f.h.st.gs_ctr[t[i].ctr];
		int fd = h_client(&f.h);

		h_send(fd, t[i].bytes, t[i].len);
		expect_closed(&f.h, fd, 2000);
		if (f.h.st.gs_ctr[t[i].ctr] != before + 1)
			fail_msg("case %u (%s): counter %s not bumped", i + 1, t[i].what, gw_ctr_str(t[i].ctr));
		close(fd);
	}
	/* The well-behaved client still works. */
	h_send(good, buf, h_call(buf, 5, 2, NFS, 3, 5));
	assert_int_equal(h_reply(&f.h, good, buf, sizeof(buf), 3000), 28);
	assert_int_equal(fe_nconns(f.h.fe), 1);
	close(good);
	fx_stop(&f);
}

/* 3. Record timeout: half a record, then silence -> closed. */
static void t03_record_timeout(void **state)
{
	struct fx f;
	uint8_t buf[64];
	int fd;

	(void)state;
	fx_start(&f, "record_timeout = 100ms");
	fd = h_client(&f.h);
	h_call(buf, 1, 2, NFS, 3, 1);
	h_send(fd, buf, 10);
	expect_closed(&f.h, fd, 2000);
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_CLIENT_RECORD_TIMEOUT], 1);
	close(fd);
	fx_stop(&f);
}

/* 4. Idle timeout: no call in flight for idle_timeout -> closed; a client
 * with a call in flight is not idle. */
static void t04_idle_timeout(void **state)
{
	struct fx f;
	uint8_t buf[64];
	int idle, busy;

	(void)state;
	fx_start(&f, "idle_timeout = 150ms");
	h_server_set(&f.s, true, 0);
	idle = h_client(&f.h);
	busy = h_client(&f.h);
	h_send(busy, buf, h_call(buf, 1, 2, NFS, 3, 1));
	expect_closed(&f.h, idle, 2000);
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_CLIENT_IDLE_TIMEOUT], 1);
	h_pump(&f.h, 300);
	assert_int_equal(fe_nconns(f.h.fe), 1);		/* busy one still there */
	h_server_set(&f.s, false, 0);
	assert_int_equal(h_reply(&f.h, busy, buf, sizeof(buf), 3000), 28);
	close(idle);
	close(busy);
	fx_stop(&f);
}

/* 5. A REPLY message from a client (NFSv4.1 backchannel) is dropped; the
 * connection stays. */
static void t05_reply_from_client(void **state)
{
	struct fx f;
	uint8_t buf[64];
	int fd;

	(void)state;
	fx_start(&f, "");
	fd = h_client(&f.h);
	h_call(buf, 3, 2, NFS, 3, 1);
	chk_put_be32(buf + 8, 1);	/* REPLY */
	h_send(fd, buf, 48);
	h_send(fd, buf, h_call(buf, 4, 2, NFS, 3, 4));
	assert_int_equal(h_reply(&f.h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf), 4);
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_NOT_A_CALL], 1);
	close(fd);
	fx_stop(&f);
}

/* 6. Byte cap: bytes_per_client = 64k, calls of ~20k with replies held:
 * reading stops after the cap, resumes on drain. */
static void t06_byte_cap(void **state)
{
	static uint8_t big[20 * 1024 + 64];
	struct fx f;
	uint8_t buf[64];
	int fd;

	(void)state;
	fx_start(&f, "bytes_per_client = 64k\ncalls_per_client = 100");
	h_server_set(&f.s, true, 0);
	fd = h_client(&f.h);
	for (uint32_t i = 0; i < 6; i++) {
		size_t n = 20 * 1024;

		h_call(big, 100 + i, 2, NFS, 3, 0);
		/* grow the argument: header (40) + filler + tag */
		memset(big + 44, 0, n - 44);
		chk_put_be32(big + 4 + n - 4, i);
		rm_encode_hdr(big, (uint32_t)n, true);
		h_send(fd, big, n + 4);
	}
	h_pump(&f.h, 300);
	assert_int_equal(h_server_calls(&f.s), 4);	/* 4 x 20k reach 64k */
	assert_true(f.h.st.gs_ctr[GW_CTR_CLIENT_PAUSED] >= 1);
	h_server_set(&f.s, false, 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(h_reply(&f.h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(h_server_calls(&f.s), 6);
	close(fd);
	fx_stop(&f);
}

/* 7. Real listeners on 127.0.0.1 and ::1 (port 0), a TCP client each
 * (from an ordinary port: secure_port is test_fe_admit's). */
static void t07_tcp_listeners(void **state)
{
	static const char *addrs[] = { "127.0.0.1:1", "[::1]:1" };
	struct fx f;

	(void)state;
	fx_start(&f, "secure_port = no\n");
	for (unsigned i = 0; i < 2; i++) {
		struct sockaddr_storage ss;
		socklen_t len;
		uint8_t buf[64];
		int fd;

		assert_true(cfg_parse_sockaddr(addrs[i], 0, &ss, &len));
		if (ss.ss_family == AF_INET6)
			((struct sockaddr_in6 *)&ss)->sin6_port = 0;
		else
			((struct sockaddr_in *)&ss)->sin_port = 0;
		if (fe_listen_addr(f.h.fe, (struct sockaddr *)&ss, len) < 0) {
			assert_int_equal(i, 1);		/* no IPv6 here: fine */
			continue;
		}
		if (ss.ss_family == AF_INET6)
			((struct sockaddr_in6 *)&ss)->sin6_port = htons(fe_listen_port(f.h.fe, i));
		else
			((struct sockaddr_in *)&ss)->sin_port = htons(fe_listen_port(f.h.fe, i));
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(fd, (struct sockaddr *)&ss, len);	/* EINPROGRESS */
		h_pump(&f.h, 50);
		fcntl(fd, F_SETFL, 0);
		h_send(fd, buf, h_call(buf, 0x700 + i, 2, NFS, 3, i));
		assert_int_equal(h_reply(&f.h, fd, buf, sizeof(buf), 3000), 28);
		assert_int_equal(chk_be32(buf), 0x700 + i);
		close(fd);
	}
	fx_stop(&f);
}

/* 8. A pool too small for the load: reading waits for buffers, nothing is
 * lost, every call answered. */
static void t08_pool_starved(void **state)
{
	static uint8_t big[12 * 1024 + 64];
	struct h_server s;
	struct h_gw h;
	char text[1024];
	uint8_t buf[64];
	int fd[3];

	(void)state;
	h_server_init(&s);
	h_server_start(&s);
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 8\nmax_record = 16k\nmax_calls = 64\n"
		 "bytes_per_client = 1m\n[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\ntransport = tcp\nport = %u\n", s.port);
	h_gw_start(&h, text);
	for (int c = 0; c < 3; c++)
		fd[c] = h_client(&h);
	for (uint32_t i = 0; i < 4; i++)
		for (int c = 0; c < 3; c++) {
			size_t n = 12 * 1024;

			h_call(big, (uint32_t)c << 8 | i, 2, NFS, 3, 0);
			memset(big + 44, 0, n - 44);
			chk_put_be32(big + n, i);
			rm_encode_hdr(big, (uint32_t)n, true);
			h_send(fd[c], big, n + 4);
		}
	for (int c = 0; c < 3; c++)
		for (int i = 0; i < 4; i++)
			assert_int_equal(h_reply(&h, fd[c], buf, sizeof(buf), 5000), 28);
	assert_int_equal(h_server_calls(&s), 12);
	for (int c = 0; c < 3; c++)
		close(fd[c]);
	h_pump(&h, 20);
	assert_int_equal(h_gw_stop(&h), 0);
	h_server_stop(&s, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_byte_at_a_time),
		cmocka_unit_test(t02_garbage_closes),
		cmocka_unit_test(t03_record_timeout),
		cmocka_unit_test(t04_idle_timeout),
		cmocka_unit_test(t05_reply_from_client),
		cmocka_unit_test(t06_byte_cap),
		cmocka_unit_test(t07_tcp_listeners),
		cmocka_unit_test(t08_pool_starved),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
