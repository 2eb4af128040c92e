// SPDX-License-Identifier: MIT
/* Unit tests of client admission (frontend-tcp/fe_admit.c, fe_proxy.c) and
 * the credential policy (gateway/authpol.c), in a live gateway
 * (test_gw_harness.h) reached through real TCP listeners on loopback:
 * allow/deny (IPv4, IPv6, IPv4-mapped), secure_port, max_conns_per_source,
 * PROXY protocol v2 (valid IPv4/IPv6, TLVs, LOCAL, truncated, garbage,
 * unsupported family), squash on the bytes the server receives,
 * reject_auth_none answered with AUTH_TOOWEAK, RPCSEC_GSS left alone;
 * listener sections, each address with its own policy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <event2/buffer.h>

#include "client.h"
#include "fe_admit.h"
#include "ops.h"
#include "test_gw_harness.h"

#define NFS 100003u

struct fx {
	struct h_server s;
	struct h_gw h;
	struct sockaddr_storage ls;	/* the listener's address */
	socklen_t llen;
};

/* A gateway with extra [gateway] lines, listening on addr ("127.0.0.1" or
 * "[::1]", port chosen by the kernel).  false: no such address here. */
static bool fx_start(struct fx *f, const char *addr, const char *extra)
{
	char text[1024], a[64];

	h_server_init(&f->s);
	h_server_start(&f->s);
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "bytes_per_client = 1m\nreconnect_interval = 30ms\nrecord_timeout = 300ms\n%s\n"
		 "[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\ntransport = tcp\nport = %u\n", extra, f->s.port);
	h_gw_start(&f->h, text);
	snprintf(a, sizeof(a), "%s:1", addr);
	assert_true(cfg_parse_sockaddr(a, 0, &f->ls, &f->llen));
	if (f->ls.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&f->ls)->sin6_port = 0;
	else
		((struct sockaddr_in *)&f->ls)->sin_port = 0;
	if (fe_listen_addr(f->h.fe, (struct sockaddr *)&f->ls, f->llen) < 0)
		return false;
	if (f->ls.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&f->ls)->sin6_port = htons(fe_listen_port(f->h.fe, 0));
	else
		((struct sockaddr_in *)&f->ls)->sin_port = htons(fe_listen_port(f->h.fe, 0));
	return true;
}

static void fx_stop(struct fx *f)
{
	h_pump(&f->h, 20);
	assert_int_equal(h_gw_stop(&f->h), 0);
	h_server_stop(&f->s, true);
}

static uint64_t ctr(struct fx *f, enum gw_ctr c) { return f->h.st.gs_ctr[c]; }

/* Does /metrics hold this line? */
static bool metrics_has(struct fx *f, const char *line)
{
	struct evbuffer *b = evbuffer_new();
	bool found;

	assert_non_null(b);
	gw_metrics_render(b, &f->h.st, f->h.gw);
	evbuffer_add(b, "", 1);
	found = strstr((const char *)evbuffer_pullup(b, -1), line) != NULL;
	evbuffer_free(b);
	return found;
}

/* Connect to the listener; from a reserved port (below 1024) if resv.
 * -1 when no reserved port can be bound (not root). */
static int fx_connect(struct fx *f, bool resv)
{
	int fd = socket(f->ls.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	for (unsigned p = 1023; resv; p--) {
		struct sockaddr_storage b;

		if (p < 600) {
			close(fd);
			return -1;
		}
		memset(&b, 0, sizeof(b));
		b.ss_family = f->ls.ss_family;
		if (b.ss_family == AF_INET6) {
			((struct sockaddr_in6 *)&b)->sin6_addr = in6addr_loopback;
			((struct sockaddr_in6 *)&b)->sin6_port = htons(p);
		} else {
			((struct sockaddr_in *)&b)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			((struct sockaddr_in *)&b)->sin_port = htons(p);
		}
		if (bind(fd, (struct sockaddr *)&b, f->llen) == 0)
			break;
	}
	connect(fd, (struct sockaddr *)&f->ls, f->llen);	/* EINPROGRESS */
	h_pump(&f->h, 30);
	fcntl(fd, F_SETFL, 0);
	return fd;
}

/* Send a NULL-style call (AUTH_NONE) and expect its reply, or expect the
 * connection closed. */
static void expect_served(struct fx *f, int fd, uint32_t xid)
{
	uint8_t buf[64];

	h_send(fd, buf, h_call(buf, xid, 2, NFS, 3, xid));
	assert_int_equal(h_reply(&f->h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf), xid);
}

static void expect_closed(struct fx *f, int fd)
{
	uint8_t buf[64];

	assert_int_equal(h_reply(&f->h, fd, buf, sizeof(buf), 2000), 0);
}

/* 1. The rules by themselves, table-driven: deny wins, empty allow admits
 * all, IPv4 networks match IPv4-mapped IPv6 peers, prefixes cut mid-byte,
 * secure_port, the cap. */
static void t01_rules(void **state)
{
	static const struct {
		const char *conf, *peer;
		unsigned nsame;
		enum fe_adm_verdict want;
	} t[] = {
		/* 1 */ { "", "10.1.2.3:700", 0, FE_ADM_OK },
		/* 2 */ { "", "10.1.2.3:1024", 0, FE_ADM_INSECURE_PORT },
		/* 3 */ { "secure_port = no\n", "10.1.2.3:40000", 0, FE_ADM_OK },
		/* 4 */ { "allow = 10.0.0.0/8\n", "10.1.2.3:700", 0, FE_ADM_OK },
		/* 5 */ { "allow = 10.0.0.0/8\n", "11.1.2.3:700", 0, FE_ADM_NOT_ALLOWED },
		/* 6 */ { "allow = 10.0.0.0/8\ndeny = 10.1.0.0/16\n", "10.1.2.3:700", 0, FE_ADM_DENY },
		/* 7 */ { "allow = 10.0.0.0/8\ndeny = 10.1.0.0/16\n", "10.2.2.3:700", 0, FE_ADM_OK },
		/* 8 */ { "allow = 10.0.0.0/8\n", "[::ffff:10.9.9.9]:700", 0, FE_ADM_OK },
		/* 9 */ { "deny = 10.0.0.0/8\n", "[::ffff:10.9.9.9]:700", 0, FE_ADM_DENY },
		/* 10 */ { "allow = 2001:db8::/32\n", "[2001:db8:1::5]:700", 0, FE_ADM_OK },
		/* 11 */ { "allow = 2001:db8::/32\n", "[2001:db9::5]:700", 0, FE_ADM_NOT_ALLOWED },
		/* 12 */ { "allow = 2001:db8::/32\n", "10.1.2.3:700", 0, FE_ADM_NOT_ALLOWED },
		/* 13 */ { "deny = 192.168.1.128/25\n", "192.168.1.127:700", 0, FE_ADM_OK },
		/* 14 */ { "deny = 192.168.1.128/25\n", "192.168.1.128:700", 0, FE_ADM_DENY },
		/* 15 */ { "allow = 10.0.0.1, ::1\n", "[::1]:700", 0, FE_ADM_OK },
		/* 16 */ { "allow = 10.0.0.1 ::1\n", "10.0.0.2:700", 0, FE_ADM_NOT_ALLOWED },
		/* 17 */ { "max_conns_per_source = 2\n", "10.1.2.3:700", 1, FE_ADM_OK },
		/* 18 */ { "max_conns_per_source = 2\n", "10.1.2.3:700", 2, FE_ADM_PER_SOURCE_CAP },
		/* 19 */ { "deny = 0.0.0.0/0\n", "1.2.3.4:700", 0, FE_ADM_DENY },
		/* 20 */ { "deny = ::/0\n", "1.2.3.4:700", 0, FE_ADM_DENY },
	};
	static const char *const bad[] = {
		"allow = 10.1.2.3/8\n", "allow = 10.0.0.0/33\n", "deny = ::1/129\n",
		"allow = 10.0.0.0/x\n", "deny = host.example\n", "allow = /8\n",
		"squash = some\n", "secure_port = maybe\n", "max_conns_per_source = 0\n",
	};
	char text[512], err[256];

	(void)state;
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct sockaddr_storage ss;
		socklen_t len;
		struct cfg *cf;

		snprintf(text, sizeof(text), "[gateway]\n%s[backend b]\naddress = 10.0.0.1\n", t[i].conf);
		cf = cfg_parse_string(text, "t", NULL, err, sizeof(err));
		if (!cf)
			fail_msg("case %u: %s", i + 1, err);
		assert_true(cfg_parse_sockaddr(t[i].peer, 0, &ss, &len));
		if (fe_adm_check(&cf->cf_listeners[0].li_pol, (struct sockaddr *)&ss, t[i].nsame) != t[i].want)
			fail_msg("case %u: %s from %s: %s, want %s", i + 1, t[i].conf, t[i].peer,
				 fe_adm_verdict_str(fe_adm_check(&cf->cf_listeners[0].li_pol, (struct sockaddr *)&ss, t[i].nsame)),
				 fe_adm_verdict_str(t[i].want));
		cfg_free(cf);
	}
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cfg *cf;

		snprintf(text, sizeof(text), "[gateway]\n%s[backend b]\naddress = 10.0.0.1\n", bad[i]);
		cf = cfg_parse_string(text, "t", NULL, err, sizeof(err));
		if (cf)
			fail_msg("bad case %u (%s) parsed", i + 1, bad[i]);
	}
}

/* 2. secure_port (default on): an ordinary source port is closed at accept
 * and counted; a reserved one is served. */
static void t02_secure_port(void **state)
{
	struct fx f;
	int fd;

	(void)state;
	assert_true(fx_start(&f, "127.0.0.1", ""));
	fd = fx_connect(&f, false);
	expect_closed(&f, fd);
	close(fd);
	assert_int_equal(ctr(&f, GW_CTR_ADM_INSECURE_PORT), 1);
	assert_int_equal(ctr(&f, GW_CTR_CLIENTS_ACCEPTED), 0);
	assert_true(metrics_has(&f, "rpcrdma_gw_admission_refused_total{reason=\"insecure_port\"} 1\n"));
	assert_true(metrics_has(&f, "rpcrdma_gw_admission_refused_total{reason=\"deny\"} 0\n"));
	fd = fx_connect(&f, true);
	if (fd < 0) {
		fx_stop(&f);
		skip();
	}
	expect_served(&f, fd, 0x201);
	close(fd);
	assert_int_equal(ctr(&f, GW_CTR_ADM_INSECURE_PORT), 1);
	fx_stop(&f);
}

/* 3. allow/deny on a real listener, IPv4 then IPv6. */
static void t03_allow_deny(void **state)
{
	static const struct {
		const char *addr, *conf;
		enum gw_ctr refused;	/* GW_CTR__COUNT: served */
	} t[] = {
		{ "127.0.0.1", "secure_port = no\nallow = 127.0.0.0/8\n", GW_CTR__COUNT },
		{ "127.0.0.1", "secure_port = no\nallow = 10.0.0.0/8\n", GW_CTR_ADM_NOT_ALLOWED },
		{ "127.0.0.1", "secure_port = no\nallow = 127.0.0.0/8\ndeny = 127.0.0.1\n", GW_CTR_ADM_DENY },
		{ "[::1]", "secure_port = no\nallow = ::1/128\n", GW_CTR__COUNT },
		{ "[::1]", "secure_port = no\nallow = 127.0.0.0/8\n", GW_CTR_ADM_NOT_ALLOWED },
		{ "[::1]", "secure_port = no\ndeny = ::/1\n", GW_CTR_ADM_DENY },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct fx f;
		int fd;

		if (!fx_start(&f, t[i].addr, t[i].conf)) {	/* no IPv6 here */
			fx_stop(&f);
			continue;
		}
		fd = fx_connect(&f, false);
		if (t[i].refused == GW_CTR__COUNT) {
			expect_served(&f, fd, 0x300 + i);
		} else {
			expect_closed(&f, fd);
			assert_int_equal(ctr(&f, t[i].refused), 1);
		}
		close(fd);
		fx_stop(&f);
	}
}

/* 4. max_conns_per_source: the third connection from 127.0.0.1 is refused,
 * counted; after one closes, a new one is served. */
static void t04_per_source_cap(void **state)
{
	struct fx f;
	int fd[4];

	(void)state;
	assert_true(fx_start(&f, "127.0.0.1", "secure_port = no\nmax_conns_per_source = 2\n"));
	for (int i = 0; i < 3; i++)
		fd[i] = fx_connect(&f, false);
	expect_served(&f, fd[0], 0x400);
	expect_served(&f, fd[1], 0x401);
	expect_closed(&f, fd[2]);
	assert_int_equal(ctr(&f, GW_CTR_ADM_PER_SOURCE_CAP), 1);
	close(fd[0]);
	close(fd[2]);
	h_pump(&f.h, 50);
	fd[3] = fx_connect(&f, false);
	expect_served(&f, fd[3], 0x403);
	assert_int_equal(ctr(&f, GW_CTR_ADM_PER_SOURCE_CAP), 1);
	close(fd[1]);
	close(fd[3]);
	fx_stop(&f);
}

/* A PROXY v2 header: cmd 0 LOCAL / 1 PROXY, fam byte, address block a
 * (alen bytes), then tlv bytes of TLV filler. */
static size_t pp_hdr(uint8_t *out, unsigned cmd, uint8_t fam, const uint8_t *a, size_t alen,
		     size_t tlv)
{
	static const uint8_t sig[12] = { 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49,
					 0x54, 0x0a };
	size_t len = alen + tlv;

	memcpy(out, sig, 12);
	out[12] = (uint8_t)(0x20 | cmd);
	out[13] = fam;
	out[14] = (uint8_t)(len >> 8);
	out[15] = (uint8_t)len;
	memcpy(out + 16, a, alen);
	memset(out + 16 + alen, 0xee, tlv);
	return 16 + len;
}

static size_t pp_v4(uint8_t *out, const char *src, uint16_t sport, size_t tlv)
{
	uint8_t a[12] = { 0 };

	inet_pton(AF_INET, src, a);
	inet_pton(AF_INET, "127.0.0.1", a + 4);
	a[8] = (uint8_t)(sport >> 8);
	a[9] = (uint8_t)sport;
	a[10] = 0x08;
	a[11] = 0x01;
	return pp_hdr(out, 1, 0x11, a, sizeof(a), tlv);
}

/* 5. PROXY v2, valid: the header's address and port are judged (the
 * socket's port is ordinary, so secure_port passes only on the header's);
 * the call sent in the same write right after the header is served;
 * TLVs past the addresses are skipped; IPv6; LOCAL uses the socket. */
static void t05_proxy_valid(void **state)
{
	static const struct {
		const char *conf;
		int kind;		/* 0 IPv4, 1 IPv4 + 600 bytes of TLVs, 2 IPv6, 3 LOCAL */
		uint16_t sport;
		enum gw_ctr refused;
	} t[] = {
		/* 1 */ { "allow = 10.0.0.0/8\n", 0, 700, GW_CTR__COUNT },
		/* 2 */ { "allow = 10.0.0.0/8\n", 1, 700, GW_CTR__COUNT },
		/* 3 */ { "allow = 10.0.0.0/8\n", 0, 40000, GW_CTR_ADM_INSECURE_PORT },
		/* 4 */ { "deny = 10.0.0.5\n", 0, 700, GW_CTR_ADM_DENY },
		/* 5 */ { "allow = 2001:db8::/32\n", 2, 800, GW_CTR__COUNT },
		/* 6 */ { "allow = 10.0.0.0/8\n", 2, 800, GW_CTR_ADM_NOT_ALLOWED },
		/* 7 */ { "secure_port = no\n", 3, 0, GW_CTR__COUNT },
		/* 8 */ { "secure_port = no\ndeny = 127.0.0.1\n", 3, 0, GW_CTR_ADM_DENY },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t buf[1024], a6[36] = { 0 };
		char conf[256];
		size_t n = 0;
		struct fx f;
		int fd;

		snprintf(conf, sizeof(conf), "proxy_protocol = yes\n%s", t[i].conf);
		assert_true(fx_start(&f, "127.0.0.1", conf));
		fd = fx_connect(&f, false);
		switch (t[i].kind) {
		case 0: n = pp_v4(buf, "10.0.0.5", t[i].sport, 0); break;
		case 1: n = pp_v4(buf, "10.0.0.5", t[i].sport, 600); break;
		case 2:
			inet_pton(AF_INET6, "2001:db8::7", a6);
			a6[32] = (uint8_t)(t[i].sport >> 8);
			a6[33] = (uint8_t)t[i].sport;
			n = pp_hdr(buf, 1, 0x21, a6, sizeof(a6), 0);
			break;
		case 3: n = pp_hdr(buf, 0, 0x00, a6, 0, 0); break;
		}
		n += h_call(buf + n, 0x500 + i, 2, NFS, 3, i);
		h_send(fd, buf, n);
		if (t[i].refused == GW_CTR__COUNT) {
			assert_int_equal(h_reply(&f.h, fd, buf, sizeof(buf), 3000), 28);
			assert_int_equal(chk_be32(buf), 0x500 + i);
			assert_int_equal(ctr(&f, GW_CTR_ADM_PROXY), 0);
		} else {
			expect_closed(&f, fd);
			if (ctr(&f, t[i].refused) != 1)
				fail_msg("case %u: not refused as expected", i + 1);
		}
		close(fd);
		fx_stop(&f);
	}
}

/* 6. PROXY v2, bad: garbage, a truncated header (closed at the deadline,
 * record_timeout 300 ms), a v1 text header, a UDP source, a length too
 * short for its addresses, an unknown command.  Each closed, counted. */
static void t06_proxy_bad(void **state)
{
	uint8_t hdr[64], a[12] = { 10, 0, 0, 5, 127, 0, 0, 1, 2, 188, 8, 1 };
	struct {
		uint8_t b[64];
		size_t n;
	} t[7];
	unsigned nt = 0;

	(void)state;
	memcpy(t[nt].b, "GET / HTTP/1.0\r\n\r\n", 18);
	t[nt].n = 18;
	nt++;
	t[nt].n = pp_hdr(t[nt].b, 1, 0x11, a, sizeof(a), 0) - 6;	/* truncated */
	nt++;
	memcpy(t[nt].b, "PROXY TCP4 10.0.0.5 127.0.0.1 700 2049\r\n", 40);
	t[nt].n = 40;
	nt++;
	t[nt].n = pp_hdr(t[nt].b, 1, 0x12, a, sizeof(a), 0);		/* UDP */
	nt++;
	t[nt].n = pp_hdr(t[nt].b, 1, 0x11, a, 8, 0);			/* len 8 < 12 */
	nt++;
	t[nt].n = pp_hdr(t[nt].b, 2, 0x11, a, sizeof(a), 0);		/* command 2 */
	nt++;
	t[nt].n = pp_hdr(t[nt].b, 1, 0x31, a, sizeof(a), 0);		/* Unix socket */
	nt++;
	for (unsigned i = 0; i < nt; i++) {
		struct fx f;
		int fd;

		assert_true(fx_start(&f, "127.0.0.1", "proxy_protocol = yes\nsecure_port = no\n"));
		fd = fx_connect(&f, false);
		memcpy(hdr, t[i].b, t[i].n);
		h_send(fd, hdr, t[i].n);
		expect_closed(&f, fd);
		if (ctr(&f, GW_CTR_ADM_PROXY) != 1)
			fail_msg("case %u: proxy refusals %llu", i + 1,
				 (unsigned long long)ctr(&f, GW_CTR_ADM_PROXY));
		assert_int_equal(ctr(&f, GW_CTR_CLIENTS_ACCEPTED), 0);
		close(fd);
		fx_stop(&f);
	}
}

/* A call with credential flavor fl, body cred (clen bytes), verifier
 * AUTH_NONE, procedure proc, one argument word. */
static size_t call_cred(uint8_t *out, uint32_t xid, uint32_t proc, uint32_t fl, const uint8_t *cred,
			size_t clen)
{
	uint32_t w[] = { xid, 0, 2, NFS, 3, proc, fl, (uint32_t)clen };
	size_t o = 4;

	for (unsigned i = 0; i < 8; i++, o += 4)
		chk_put_be32(out + o, w[i]);
	memcpy(out + o, cred, clen);
	o += clen;
	chk_put_be32(out + o, 0);	/* verifier AUTH_NONE, empty */
	chk_put_be32(out + o + 4, 0);
	chk_put_be32(out + o + 8, 0x7a7a7a7a);
	o += 12;
	rm_encode_hdr(out, (uint32_t)(o - 4), true);
	return o;
}

/* authsys_parms: stamp, machinename "box", uid, gid, gids. */
static size_t authsys(uint8_t *b, uint32_t uid, uint32_t gid, const uint32_t *gids, unsigned n)
{
	size_t o = 0;

	chk_put_be32(b, 0x1234);
	chk_put_be32(b + 4, 3);
	memcpy(b + 8, "box\0", 4);
	o = 12;
	chk_put_be32(b + o, uid);
	chk_put_be32(b + o + 4, gid);
	chk_put_be32(b + o + 8, n);
	o += 12;
	for (unsigned i = 0; i < n; i++, o += 4)
		chk_put_be32(b + o, gids[i]);
	return o;
}

/* 7. squash on the bytes the server receives: root (only 0 ids change),
 * all (every id), none; the call's length is unchanged; a malformed
 * AUTH_SYS body under squash gets AUTH_BADCRED; RPCSEC_GSS untouched. */
static void t07_squash(void **state)
{
	static const uint32_t gids[] = { 0, 5, 0 };
	static const struct {
		const char *conf;
		uint32_t uid, gid;
		uint32_t want_uid, want_gid, want_g[3];
		uint64_t squashed;
	} t[] = {
		{ "squash = root\n", 0, 0, 65534, 65534, { 65534, 5, 65534 }, 1 },
		{ "squash = root\nanonuid = 7\nanongid = 8\n", 1000, 0, 1000, 8, { 8, 5, 8 }, 1 },
		{ "squash = root\n", 1000, 100, 1000, 100, { 65534, 5, 65534 }, 1 },
		{ "squash = all\nanonuid = 7\nanongid = 8\n", 1000, 100, 7, 8, { 8, 8, 8 }, 1 },
		{ "squash = none\n", 0, 0, 0, 0, { 0, 5, 0 }, 0 },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t cred[64], buf[256], seen[256];
		char conf[256];
		size_t clen = authsys(cred, t[i].uid, t[i].gid, gids, 3), n, o = 4 + 32 + 12;
		struct fx f;
		int fd;

		snprintf(conf, sizeof(conf), "secure_port = no\n%s", t[i].conf);
		assert_true(fx_start(&f, "127.0.0.1", conf));
		fd = fx_connect(&f, false);
		n = call_cred(buf, 0x700 + i, 1, RPC_AUTH_SYS, cred, clen);
		h_send(fd, buf, n);
		assert_int_equal(h_reply(&f.h, fd, buf, sizeof(buf), 3000), 28);
		assert_int_equal(h_server_last(&f.s, seen, sizeof(seen)), n - 4);
		/* the record without its mark: uid at 4 words of header + cred len
		 * + stamp + name (3 words) */
		assert_int_equal(chk_be32(seen + o - 4), t[i].want_uid);
		assert_int_equal(chk_be32(seen + o), t[i].want_gid);
		assert_int_equal(chk_be32(seen + o + 4), 3);
		for (unsigned g = 0; g < 3; g++)
			assert_int_equal(chk_be32(seen + o + 8 + 4 * g), t[i].want_g[g]);
		assert_int_equal(chk_be32(seen + n - 8), 0x7a7a7a7a);
		assert_int_equal(ctr(&f, GW_CTR_AUTHPOL_SQUASHED), t[i].squashed);
		close(fd);
		fx_stop(&f);
	}
}

/* Expect a MSG_DENIED AUTH_ERROR reply with auth_stat st for xid. */
static void expect_auth_error(struct fx *f, int fd, uint32_t xid, uint32_t st)
{
	uint8_t buf[64];

	assert_int_equal(h_reply(&f->h, fd, buf, sizeof(buf), 3000), 20);
	assert_int_equal(chk_be32(buf), xid);
	assert_int_equal(chk_be32(buf + 4), RPC_REPLY);
	assert_int_equal(chk_be32(buf + 8), RPC_MSG_DENIED);
	assert_int_equal(chk_be32(buf + 12), RPC_AUTH_ERROR);
	assert_int_equal(chk_be32(buf + 16), st);
}

/* 8. reject_auth_none: AUTH_NONE outside NULL gets AUTH_TOOWEAK (decoded),
 * the server never sees it; NULL passes; AUTH_SYS passes.  Without the key
 * AUTH_NONE passes.  squash with a malformed AUTH_SYS body: AUTH_BADCRED.
 * RPCSEC_GSS under squash = all reaches the server byte for byte. */
static void t08_auth_none_badcred_gss(void **state)
{
	uint8_t buf[256], cred[64], seen[256];
	size_t clen, n;
	struct fx f;
	int fd;

	(void)state;
	assert_true(fx_start(&f, "127.0.0.1", "secure_port = no\nreject_auth_none = yes\n"));
	fd = fx_connect(&f, false);
	h_send(fd, buf, call_cred(buf, 0x801, 1, RPC_AUTH_NONE, cred, 0));
	expect_auth_error(&f, fd, 0x801, RPC_AUTH_TOOWEAK);
	assert_int_equal(h_server_calls(&f.s), 0);
	assert_int_equal(ctr(&f, GW_CTR_AUTHPOL_AUTH_NONE), 1);
	assert_true(metrics_has(&f, "rpcrdma_gw_auth_policy_total{action=\"auth_none\"} 1\n"));
	h_send(fd, buf, call_cred(buf, 0x802, 0, RPC_AUTH_NONE, cred, 0));
	assert_int_equal(h_reply(&f.h, fd, buf, sizeof(buf), 3000), 28);
	clen = authsys(cred, 1000, 100, NULL, 0);
	h_send(fd, buf, call_cred(buf, 0x803, 1, RPC_AUTH_SYS, cred, clen));
	assert_int_equal(h_reply(&f.h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(h_server_calls(&f.s), 2);
	close(fd);
	fx_stop(&f);

	assert_true(fx_start(&f, "127.0.0.1", "secure_port = no\n"));
	fd = fx_connect(&f, false);
	h_send(fd, buf, call_cred(buf, 0x811, 1, RPC_AUTH_NONE, cred, 0));
	assert_int_equal(h_reply(&f.h, fd, buf, sizeof(buf), 3000), 28);
	close(fd);
	fx_stop(&f);

	assert_true(fx_start(&f, "127.0.0.1", "secure_port = no\nsquash = all\n"));
	fd = fx_connect(&f, false);
	clen = authsys(cred, 0, 0, NULL, 0);
	chk_put_be32(cred + 20, 9);	/* 9 gids announced, none there */
	h_send(fd, buf, call_cred(buf, 0x821, 1, RPC_AUTH_SYS, cred, clen));
	expect_auth_error(&f, fd, 0x821, RPC_AUTH_BADCRED);
	assert_int_equal(ctr(&f, GW_CTR_AUTHPOL_BADCRED), 1);
	/* RPCSEC_GSS DATA, service none, handle "hndl"; verifier is checked
	 * by the server, so any bytes do here. */
	{
		static const uint8_t gss[] = { 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1,
					       0, 0, 0, 4, 'h', 'n', 'd', 'l' };

		n = call_cred(buf, 0x822, 1, RPC_RPCSEC_GSS, gss, sizeof(gss));
		h_send(fd, buf, n);
		assert_int_equal(h_reply(&f.h, fd, seen, sizeof(seen), 3000), 28);
		h_server_last(&f.s, seen, sizeof(seen));
		assert_memory_equal(seen + 4, buf + 8, n - 8);	/* all but the XID */
		assert_int_equal(ctr(&f, GW_CTR_AUTHPOL_SQUASHED), 0);
	}
	close(fd);
	fx_stop(&f);
}

/* A free port on 127.0.0.1 (bound once by the kernel's choice, released). */
static uint16_t free_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	close(fd);
	return ntohs(sin.sin_port);
}

/* Point f's client side at 127.0.0.1:port. */
static void fx_target(struct fx *f, uint16_t port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&f->ls;

	memset(&f->ls, 0, sizeof(f->ls));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin->sin_port = htons(port);
	f->llen = sizeof(*sin);
}

/* An AUTH_SYS call of uid 0, gid 0 (groups 0, 5, 0) on fd: the uid and
 * gid the server received. */
static void squash_seen(struct fx *f, int fd, uint32_t xid, uint32_t *uid, uint32_t *gid)
{
	static const uint32_t gids[] = { 0, 5, 0 };
	uint8_t cred[64], buf[256], seen[256];
	size_t clen = authsys(cred, 0, 0, gids, 3), n, o = 4 + 32 + 12;

	n = call_cred(buf, xid, 1, RPC_AUTH_SYS, cred, clen);
	h_send(fd, buf, n);
	assert_int_equal(h_reply(&f->h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(h_server_last(&f->s, seen, sizeof(seen)), n - 4);
	*uid = chk_be32(seen + o - 4);
	*gid = chk_be32(seen + o);
}

/* 9. Listeners: four addresses of one gateway, each with its own policy
 * through real sockets opened from the configuration (fe_listen_cfg).
 * [gateway]'s own listener (secure_port = no, no squash) serves uid 0 as
 * sent; "edge" inherits secure_port = no and squashes every id to 7/8;
 * "closed" admits 10.0.0.0/8 only; "strict" wants a reserved port.  The
 * gateway's client list names each connection's listener. */
static void t09_listeners(void **state)
{
	uint16_t p[4] = { free_port(), free_port(), free_port(), free_port() };
	struct gw_client_info ci[4];
	char extra[768];
	uint32_t uid, gid;
	struct fx f;
	int fd, fd2;

	(void)state;
	snprintf(extra, sizeof(extra),
		 "secure_port = no\nlisten = 127.0.0.1:%u\n"
		 "[listener edge]\nlisten = 127.0.0.1:%u\nsquash = all\nanonuid = 7\nanongid = 8\n"
		 "[listener closed]\nlisten = 127.0.0.1:%u\nallow = 10.0.0.0/8\n"
		 "[listener strict]\nlisten = 127.0.0.1:%u\nsecure_port = yes\n", p[0], p[1], p[2], p[3]);
	h_server_init(&f.s);
	h_server_start(&f.s);
	{
		char text[1536];

		snprintf(text, sizeof(text),
			 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
			 "bytes_per_client = 1m\nreconnect_interval = 30ms\nrecord_timeout = 300ms\n%s\n"
			 "[backend srv]\naddress = 127.0.0.1\n"
			 "[route nfs]\nprogram = nfs\ntransport = tcp\nport = %u\n", extra, f.s.port);
		h_gw_start(&f.h, text);
	}
	assert_int_equal(fe_listen_cfg(f.h.fe), 0);

	fx_target(&f, p[0]);			/* [gateway]: as sent */
	fd = fx_connect(&f, false);
	squash_seen(&f, fd, 0x901, &uid, &gid);
	assert_int_equal(uid, 0);
	assert_int_equal(gid, 0);
	fx_target(&f, p[1]);			/* edge: all squashed */
	fd2 = fx_connect(&f, false);
	squash_seen(&f, fd2, 0x902, &uid, &gid);
	assert_int_equal(uid, 7);
	assert_int_equal(gid, 8);
	assert_int_equal(ctr(&f, GW_CTR_AUTHPOL_SQUASHED), 1);
	assert_int_equal(gw_ctx_client_list(f.h.gw, ci, 4), 2);
	assert_string_equal(ci[0].gci_listener, "gateway");
	assert_string_equal(ci[1].gci_listener, "edge");
	close(fd);
	close(fd2);

	fx_target(&f, p[2]);			/* closed: not in allow */
	fd = fx_connect(&f, false);
	expect_closed(&f, fd);
	close(fd);
	assert_int_equal(ctr(&f, GW_CTR_ADM_NOT_ALLOWED), 1);
	fx_target(&f, p[3]);			/* strict: port 1024 and up refused */
	fd = fx_connect(&f, false);
	expect_closed(&f, fd);
	close(fd);
	assert_int_equal(ctr(&f, GW_CTR_ADM_INSECURE_PORT), 1);
	fd = fx_connect(&f, true);		/* ... a reserved one served */
	if (fd >= 0) {
		expect_served(&f, fd, 0x903);
		close(fd);
	}
	assert_int_equal(ctr(&f, GW_CTR_ADM_NOT_ALLOWED), 1);
	assert_int_equal(ctr(&f, GW_CTR_ADM_INSECURE_PORT), 1);
	fx_stop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_rules),
		cmocka_unit_test(t02_secure_port),
		cmocka_unit_test(t03_allow_deny),
		cmocka_unit_test(t04_per_source_cap),
		cmocka_unit_test(t05_proxy_valid),
		cmocka_unit_test(t06_proxy_bad),
		cmocka_unit_test(t07_squash),
		cmocka_unit_test(t08_auth_none_badcred_gss),
		cmocka_unit_test(t09_listeners),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
