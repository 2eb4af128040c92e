// SPDX-License-Identifier: MIT
/* Unit tests of RPC-with-TLS on the front end (frontend-tcp/fe_tls.c,
 * fe_tls_pre.c), in a live gateway (test_gw_harness.h) reached through a
 * TCP listener on loopback by an OpenSSL client in a thread of its own:
 * the AUTH_TLS probe and its STARTTLS reply (RFC 9289 4.1), the TLS 1.3
 * handshake with ALPN "sunrpc" and a client certificate, calls inside TLS
 * answered through a TCP route; and each refusal, counted: a call in
 * plaintext on tls = required (AUTH_TOOWEAK), TLS 1.2 only, no ALPN, a
 * client certificate of another CA, an expired one, none at all, bytes
 * after the probe, plaintext instead of a ClientHello.  Certificates are
 * made at test time with the OpenSSL API in a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fe_tls.h"
#include "test_gw_harness.h"

#define NFS 100003u

/* ---- certificates ---- */

static char g_dir[64];

static void path_of(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", g_dir, name);
}

/* A P-256 key and a certificate for cn, signed by (ica, ikey) or by itself,
 * valid from now + from_s to now + to_s; written as NAME.crt and NAME.key. */
static void mkcert(const char *name, const char *cn, X509 *ica, EVP_PKEY *ikey, long from_s,
		   long to_s, bool ca, X509 **xout, EVP_PKEY **kout)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	X509_NAME *n;
	X509V3_CTX v3;
	X509_EXTENSION *ext;
	char p[128], san[96];
	FILE *f;
	static long serial = 1;

	assert_non_null(k);
	assert_non_null(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
	X509_gmtime_adj(X509_getm_notBefore(x), from_s);
	X509_gmtime_adj(X509_getm_notAfter(x), to_s);
	X509_set_pubkey(x, k);
	n = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, ica ? X509_get_subject_name(ica) : n);
	X509V3_set_ctx(&v3, ica ? ica : x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	if (!ca) {
		snprintf(san, sizeof(san), "DNS:%s", cn);
		ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, san);
		X509_add_ext(x, ext, -1);
		X509_EXTENSION_free(ext);
	}
	assert_true(X509_sign(x, ikey ? ikey : k, EVP_sha256()) > 0);
	path_of(p, sizeof(p), name);
	strcat(p, ".crt");
	f = fopen(p, "w");
	assert_non_null(f);
	PEM_write_X509(f, x);
	fclose(f);
	path_of(p, sizeof(p), name);
	strcat(p, ".key");
	f = fopen(p, "w");
	assert_non_null(f);
	PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL);
	fclose(f);
	if (xout) {
		*xout = x;
		*kout = k;
	} else {
		X509_free(x);
		EVP_PKEY_free(k);
	}
}

/* ca (the gateway's tls_ca, issuer of server and good), other (a CA the
 * gateway does not know, issuer of stranger), expired (by ca, ended an
 * hour ago). */
static int certs_setup(void **state)
{
	X509 *ca, *other;
	EVP_PKEY *cak, *otherk;

	(void)state;
	snprintf(g_dir, sizeof(g_dir), "/tmp/test_fe_tls.XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	mkcert("ca", "test CA", NULL, NULL, -60, 86400, true, &ca, &cak);
	mkcert("other", "other CA", NULL, NULL, -60, 86400, true, &other, &otherk);
	mkcert("server", "gateway.test", ca, cak, -60, 86400, false, NULL, NULL);
	mkcert("good", "client1.test", ca, cak, -60, 86400, false, NULL, NULL);
	mkcert("stranger", "client2.test", other, otherk, -60, 86400, false, NULL, NULL);
	mkcert("expired", "client3.test", ca, cak, -7200, -3600, false, NULL, NULL);
	mkcert("other_id", "client4.test", ca, cak, -60, 86400, false, NULL, NULL);
	mkcert("server2", "gateway2.test", ca, cak, -60, 2 * 86400, false, NULL, NULL);
	X509_free(ca);
	X509_free(other);
	EVP_PKEY_free(cak);
	EVP_PKEY_free(otherk);
	return 0;
}

static int certs_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", g_dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- the gateway ---- */

struct fx {
	struct h_server s;
	struct h_gw h;
	struct sockaddr_storage ls;	/* the listener's address (IPv4) */
};

/* A gateway with TLS lines (tls = MODE, the certificates of g_dir) plus
 * extra, listening on 127.0.0.1. */
static void fx_start(struct fx *f, const char *mode, const char *extra)
{
	char text[2048];
	struct sockaddr_in *sin = (struct sockaddr_in *)&f->ls;

	h_server_init(&f->s);
	h_server_start(&f->s);
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "bytes_per_client = 1m\nsecure_port = no\n"
		 "tls = %s\ntls_cert = %s/server.crt\ntls_key = %s/server.key\ntls_ca = %s/ca.crt\n%s\n"
		 "[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\ntransport = tcp\nport = %u\n",
		 mode, g_dir, g_dir, g_dir, extra, f->s.port);
	h_gw_start(&f->h, text);
	memset(&f->ls, 0, sizeof(f->ls));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(fe_listen_addr(f->h.fe, (struct sockaddr *)sin, sizeof(*sin)), 0);
	assert_int_equal(fe_listen_sockaddr(f->h.fe, 0, &f->ls), 0);
}

static void fx_stop(struct fx *f)
{
	h_pump(&f->h, 20);
	assert_int_equal(h_gw_stop(&f->h), 0);
	h_server_stop(&f->s, true);
}

static uint64_t ctr(struct fx *f, enum gw_ctr c) { return f->h.st.gs_ctr[c]; }

/* ---- the client, in its own thread (blocking I/O) ---- */

enum cl_mode {
	CL_TLS = 0,		/* probe, handshake, calls inside TLS */
	CL_PLAIN,		/* one call in plaintext */
	CL_PROBE_PLUS,		/* probe and more bytes in one write */
	CL_PROBE_THEN_RAW,	/* probe, its reply, then raw bytes instead of a ClientHello */
	CL_PROBE_IDLE,		/* probe, its reply, then nothing */
};

struct cl {
	/* in */
	const struct sockaddr_storage *cl_addr;
	enum cl_mode cl_mode;
	const char *cl_cert;		/* base name in g_dir, or NULL */
	bool cl_no_alpn;
	bool cl_tls12;			/* TLS 1.2 at most */
	size_t cl_big;			/* also a call of this many bytes */
	bool cl_hold;			/* after the first reply: wait for cl_release, call again */
	bool cl_root;			/* the small call's credential: AUTH_SYS uid 0, gid 0 */
	volatile bool cl_release;
	/* out */
	bool cl_starttls;		/* the probe's reply was the STARTTLS one */
	bool cl_handshake;		/* the handshake succeeded */
	uint8_t cl_reply[64];		/* the last reply record (no mark) */
	int cl_reply_len;		/* its length; 0: the connection ended; -1 none */
	volatile unsigned cl_replies;	/* replies to calls inside TLS, tags right */
	volatile bool cl_held;		/* waiting for cl_release */
	char cl_server_cn[64];		/* the gateway's certificate's CN */
	bool cl_eof;			/* the gateway closed the connection */
	volatile bool cl_done;
};

static bool cl_read_full(int fd, SSL *ssl, void *buf, size_t n)
{
	uint8_t *p = buf;

	while (n) {
		int r = ssl ? SSL_read(ssl, p, (int)n) : (int)read(fd, p, n);

		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
	}
	return true;
}

static bool cl_write(int fd, SSL *ssl, const void *buf, size_t n)
{
	return ssl ? SSL_write(ssl, buf, (int)n) == (int)n : write(fd, buf, n) == (ssize_t)n;
}

/* One reply record into c->cl_reply (its first 64 bytes); its length, 0 at
 * the end. */
static int cl_reply(struct cl *c, int fd, SSL *ssl)
{
	uint8_t mark[4], skip[256];
	uint32_t len, have = 0;

	if (!cl_read_full(fd, ssl, mark, 4))
		return 0;
	len = chk_be32(mark) & RM_LEN_MASK;
	while (have < len) {
		uint32_t k = len - have < sizeof(skip) ? len - have : sizeof(skip);

		if (!cl_read_full(fd, ssl, skip, k))
			return 0;
		if (have < sizeof(c->cl_reply))
			memcpy(c->cl_reply + have, skip,
			       k < sizeof(c->cl_reply) - have ? k : sizeof(c->cl_reply) - have);
		have += k;
	}
	return (int)len;
}

/* The AUTH_TLS probe (RFC 9289 4.1): NULL procedure, AUTH_TLS credential
 * of length 0, AUTH_NONE verifier. */
static size_t probe(uint8_t *out, uint32_t xid)
{
	size_t n = h_call(out, xid, 2, NFS, 3, 0);

	chk_put_be32(out + 4 + 20, 0);		/* NULL */
	chk_put_be32(out + 4 + 24, RPC_AUTH_TLS);
	rm_encode_hdr(out, (uint32_t)(n - 8), true);	/* without the tag */
	return n - 4;
}

static bool cl_is_starttls(const struct cl *c, uint32_t xid)
{
	static const uint8_t want[] = { 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8,
					'S', 'T', 'A', 'R', 'T', 'T', 'L', 'S', 0, 0, 0, 0 };

	return c->cl_reply_len == 32 && chk_be32(c->cl_reply) == xid &&
	       !memcmp(c->cl_reply + 4, want, sizeof(want));
}

static SSL_CTX *cl_ctx(const struct cl *c)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	char p[128], k[128];

	assert_non_null(ctx);
	if (c->cl_tls12)
		SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
	if (!c->cl_no_alpn)
		SSL_CTX_set_alpn_protos(ctx, (const unsigned char *)"\x06sunrpc", 7);
	path_of(p, sizeof(p), "ca.crt");
	SSL_CTX_load_verify_locations(ctx, p, NULL);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if (c->cl_cert) {
		snprintf(p, sizeof(p), "%s/%s.crt", g_dir, c->cl_cert);
		snprintf(k, sizeof(k), "%s/%s.key", g_dir, c->cl_cert);
		SSL_CTX_use_certificate_file(ctx, p, SSL_FILETYPE_PEM);
		SSL_CTX_use_PrivateKey_file(ctx, k, SSL_FILETYPE_PEM);
	}
	return ctx;
}

/* Calls inside TLS: a small one, then one of cl_big bytes, each answered
 * with its tag by the tiny server behind the gateway. */
/* A call like h_call's with an AUTH_SYS credential of uid 0, gid 0 (groups
 * 0, 5; machine name "box"), tag last. */
static size_t call_root(uint8_t *out, uint32_t xid, uint32_t tag)
{
	static const uint32_t w[] = { 0, 2, NFS, 3, 1, RPC_AUTH_SYS, 32, 0x1234, 3, 0x626f7800,
				      0, 0, 2, 0, 5, 0, 0 };
	size_t o = 8;

	chk_put_be32(out + 4, xid);
	for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++, o += 4)
		chk_put_be32(out + o, w[i]);
	chk_put_be32(out + o, tag);
	o += 4;
	rm_encode_hdr(out, (uint32_t)(o - 4), true);
	return o;
}

static void cl_calls(struct cl *c, int fd, SSL *ssl)
{
	uint8_t small[96];
	size_t n = c->cl_root ? call_root(small, 0x100, 0x5151) : h_call(small, 0x100, 2, NFS, 3, 0x5151);

	if (!cl_write(fd, ssl, small, n))
		return;
	c->cl_reply_len = cl_reply(c, fd, ssl);
	if (c->cl_reply_len == 28 && chk_be32(c->cl_reply + 24) == 0x5151)
		c->cl_replies++;
	if (c->cl_hold) {
		c->cl_held = true;
		while (!c->cl_release)
			usleep(1000);
		n = h_call(small, 0x102, 2, NFS, 3, 0x5252);
		if (cl_write(fd, ssl, small, n) && cl_reply(c, fd, ssl) == 28 &&
		    chk_be32(c->cl_reply + 24) == 0x5252)
			c->cl_replies++;
	}
	if (c->cl_big) {
		uint8_t *big = calloc(1, c->cl_big + 4);

		assert_non_null(big);
		h_call(big, 0x101, 2, NFS, 3, 0);
		chk_put_be32(big + c->cl_big, 0xb16b16);	/* the tag, last word */
		rm_encode_hdr(big, (uint32_t)c->cl_big, true);
		if (cl_write(fd, ssl, big, c->cl_big + 4)) {
			c->cl_reply_len = cl_reply(c, fd, ssl);
			if (c->cl_reply_len == 28 && chk_be32(c->cl_reply + 24) == 0xb16b16)
				c->cl_replies++;
		}
		free(big);
	}
}

static void *cl_main(void *arg)
{
	struct cl *c = arg;
	struct timeval tv = { 5, 0 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	uint8_t buf[128];
	size_t n;

	c->cl_reply_len = -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (const struct sockaddr *)c->cl_addr, sizeof(struct sockaddr_in)) < 0)
		goto out;
	if (c->cl_mode == CL_PLAIN) {
		n = h_call(buf, 0x77, 2, NFS, 3, 0x77);
		if (cl_write(fd, NULL, buf, n))
			c->cl_reply_len = cl_reply(c, fd, NULL);
		if (c->cl_reply_len == 28 && chk_be32(c->cl_reply + 24) == 0x77)
			shutdown(fd, SHUT_WR);	/* answered: hang up, no wait for the 5 s timeout */
		c->cl_eof = cl_reply(c, fd, NULL) == 0;
		goto out;
	}
	n = probe(buf, 0x55);
	if (c->cl_mode == CL_PROBE_PLUS) {
		memcpy(buf + n, "\x16\x03\x01\x00", 4);	/* a ClientHello's start, too early */
		n += 4;
	}
	if (!cl_write(fd, NULL, buf, n))
		goto out;
	c->cl_reply_len = cl_reply(c, fd, NULL);
	c->cl_starttls = cl_is_starttls(c, 0x55);
	if (!c->cl_starttls)
		goto end;
	if (c->cl_mode == CL_PROBE_IDLE)
		goto end;
	if (c->cl_mode == CL_PROBE_THEN_RAW) {
		n = h_call(buf, 0x78, 2, NFS, 3, 0x78);	/* plaintext instead of TLS */
		if (cl_write(fd, NULL, buf, n))
			c->cl_reply_len = cl_reply(c, fd, NULL);
		goto end;
	}
	{
		SSL_CTX *ctx = cl_ctx(c);
		SSL *ssl = SSL_new(ctx);

		SSL_set_fd(ssl, fd);
		SSL_set_tlsext_host_name(ssl, "gateway.test");
		if (SSL_connect(ssl) == 1) {
			c->cl_handshake = true;
			X509_NAME_get_text_by_NID(X509_get_subject_name(SSL_get0_peer_certificate(ssl)),
						  NID_commonName, c->cl_server_cn, sizeof(c->cl_server_cn));
			cl_calls(c, fd, ssl);
			if (c->cl_replies > 0)	/* served: hang up rather than wait 5 s */
				shutdown(fd, SHUT_WR);
		} else {
			ERR_clear_error();
		}
		/* TLS 1.3: a refused client certificate shows on the first read. */
		SSL_free(ssl);
		SSL_CTX_free(ctx);
	}
end:
	{
		ssize_t r;

		while ((r = read(fd, buf, sizeof(buf))) > 0)
			;	/* a TLS alert may come first */
		/* closed, or reset: it had unread bytes of ours */
		c->cl_eof = r == 0 || errno == ECONNRESET;
	}
out:
	close(fd);
	c->cl_done = true;
	return NULL;
}

/* Start client c against f's gateway; pump until it holds (cl_hold) or
 * is done. */
static void start(struct fx *f, struct cl *c, pthread_t *thr)
{
	uint64_t end = gw_now_ms() + 15000;

	c->cl_addr = &f->ls;
	assert_int_equal(pthread_create(thr, NULL, cl_main, c), 0);
	while (!c->cl_done && !c->cl_held && gw_now_ms() < end)
		h_pump(&f->h, 2);
	assert_true(c->cl_done || c->cl_held);
}

/* Release a held client, pump until it is done. */
static void finish(struct fx *f, struct cl *c, pthread_t thr)
{
	uint64_t end = gw_now_ms() + 15000;

	c->cl_release = true;
	while (!c->cl_done && gw_now_ms() < end)
		h_pump(&f->h, 2);
	assert_true(c->cl_done);
	pthread_join(thr, NULL);
	h_pump(&f->h, 20);
}

/* Run client c against f's gateway while pumping its loop. */
static void run(struct fx *f, struct cl *c)
{
	pthread_t thr;

	start(f, c, &thr);
	finish(f, c, thr);
}

/* ---- tests ---- */

/* Probe -> STARTTLS -> TLS 1.3 with ALPN and a client certificate -> a
 * small call and a 40 KiB one (several TLS records each way) answered
 * through the TCP route. */
static void t01_tls_required_mutual(void **state)
{
	struct fx f;
	struct cl c = { .cl_mode = CL_TLS, .cl_cert = "good", .cl_big = 40000 };

	(void)state;
	fx_start(&f, "required", "tls_client_cert = require");
	run(&f, &c);
	assert_true(c.cl_starttls);
	assert_true(c.cl_handshake);
	assert_int_equal(c.cl_replies, 2);
	assert_int_equal(h_server_calls(&f.s), 2);
	assert_int_equal(ctr(&f, GW_CTR_TLS_PROBES), 1);
	assert_int_equal(ctr(&f, GW_CTR_TLS_HANDSHAKES), 1);
	for (unsigned r = GW_CTR_TLS_REFUSED_PLAINTEXT; r <= GW_CTR_TLS_REFUSED_HANDSHAKE; r++)
		assert_int_equal(ctr(&f, r), 0);
	{
		char *m = h_render(&f.h.st, f.h.gw);

		assert_true(h_sample(m, "rpcrdma_gw_tls_total{event=\"handshake\"}") == 1);
		assert_true(h_sample(m, "rpcrdma_gw_tls_refused_total{reason=\"plaintext\"}") == 0);
		free(m);
	}
	fx_stop(&f);
}

/* tls = required: a plaintext call gets AUTH_TOOWEAK and the connection
 * closes; the server sees nothing. */
static void t02_plaintext_on_required(void **state)
{
	struct fx f;
	struct cl c = { .cl_mode = CL_PLAIN };

	(void)state;
	fx_start(&f, "required", "");
	run(&f, &c);
	assert_int_equal(c.cl_reply_len, 20);
	assert_int_equal(chk_be32(c.cl_reply), 0x77);
	assert_int_equal(chk_be32(c.cl_reply + 8), RPC_MSG_DENIED);
	assert_int_equal(chk_be32(c.cl_reply + 12), RPC_AUTH_ERROR);
	assert_int_equal(chk_be32(c.cl_reply + 16), RPC_AUTH_TOOWEAK);
	assert_true(c.cl_eof);
	assert_int_equal(h_server_calls(&f.s), 0);
	assert_int_equal(ctr(&f, GW_CTR_TLS_REFUSED_PLAINTEXT), 1);
	fx_stop(&f);
}

/* tls = allowed: plaintext goes on as before, and TLS without a client
 * certificate works (tls_client_cert = none). */
static void t03_allowed(void **state)
{
	struct fx f;
	struct cl p = { .cl_mode = CL_PLAIN }, c = { .cl_mode = CL_TLS };

	(void)state;
	fx_start(&f, "allowed", "");
	run(&f, &p);
	assert_int_equal(p.cl_reply_len, 28);
	assert_int_equal(chk_be32(p.cl_reply + 24), 0x77);
	run(&f, &c);
	assert_true(c.cl_handshake);
	assert_int_equal(c.cl_replies, 1);
	assert_int_equal(ctr(&f, GW_CTR_TLS_HANDSHAKES), 1);
	assert_int_equal(ctr(&f, GW_CTR_TLS_REFUSED_PLAINTEXT), 0);
	fx_stop(&f);
}

/* Handshakes the RFC or the policy refuses, each counted by its reason. */
static void t04_handshake_refused(void **state)
{
	static const struct {
		struct cl c;
		enum gw_ctr why;
	} cases[] = {
		{ { .cl_mode = CL_TLS, .cl_cert = "good", .cl_tls12 = true }, GW_CTR_TLS_REFUSED_VERSION },
		{ { .cl_mode = CL_TLS, .cl_cert = "good", .cl_no_alpn = true }, GW_CTR_TLS_REFUSED_ALPN },
		{ { .cl_mode = CL_TLS, .cl_cert = "stranger" }, GW_CTR_TLS_REFUSED_CLIENT_CERT },
		{ { .cl_mode = CL_TLS, .cl_cert = "expired" }, GW_CTR_TLS_REFUSED_CLIENT_CERT },
		{ { .cl_mode = CL_TLS }, GW_CTR_TLS_REFUSED_CLIENT_CERT },
	};
	struct fx f;

	(void)state;
	fx_start(&f, "required", "tls_client_cert = require");
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cl c = cases[i].c;
		uint64_t before = ctr(&f, cases[i].why);

		run(&f, &c);
		assert_true(c.cl_starttls);
		assert_int_equal(c.cl_replies, 0);
		assert_true(c.cl_eof);
		assert_int_equal(ctr(&f, cases[i].why), before + 1);
	}
	assert_int_equal(ctr(&f, GW_CTR_TLS_HANDSHAKES), 0);
	assert_int_equal(h_server_calls(&f.s), 0);
	fx_stop(&f);
}

/* The pre-TLS state machine on the wire: bytes right behind the probe
 * (no reply then), plaintext where the ClientHello belongs. */
static void t05_pre_tls(void **state)
{
	struct fx f;
	struct cl early = { .cl_mode = CL_PROBE_PLUS }, raw = { .cl_mode = CL_PROBE_THEN_RAW };

	(void)state;
	fx_start(&f, "allowed", "");
	run(&f, &early);
	assert_false(early.cl_starttls);
	assert_int_equal(early.cl_reply_len, 0);
	assert_int_equal(ctr(&f, GW_CTR_TLS_REFUSED_EARLY_DATA), 1);
	run(&f, &raw);
	assert_true(raw.cl_starttls);
	assert_int_equal(raw.cl_reply_len, 0);
	assert_int_equal(ctr(&f, GW_CTR_TLS_REFUSED_NOT_TLS), 1);
	assert_int_equal(ctr(&f, GW_CTR_TLS_PROBES), 1);
	assert_int_equal(h_server_calls(&f.s), 0);
	fx_stop(&f);
}

/* A probe and then silence: the handshake has record_timeout, then the
 * connection closes (counted as a failed handshake). */
static void t10_handshake_timeout(void **state)
{
	struct fx f;
	struct cl idle = { .cl_mode = CL_PROBE_IDLE };
	uint64_t t0;

	(void)state;
	fx_start(&f, "required", "record_timeout = 300ms");
	t0 = gw_now_ms();
	run(&f, &idle);
	assert_true(idle.cl_starttls);
	assert_true(idle.cl_eof);
	assert_true(gw_now_ms() - t0 < 4000);	/* not the client's 5 s read timeout */
	assert_int_equal(ctr(&f, GW_CTR_TLS_REFUSED_HANDSHAKE), 1);
	assert_int_equal(fe_nconns(f.h.fe), 0);
	fx_stop(&f);
}

/* fe_tls_pre_record() alone: the probe only with AUTH_TLS, NULL, empty
 * credential and AUTH_NONE verifier; refusals on required; off passes. */
static void t06_pre_record(void **state)
{
	uint8_t rec[64], reply[FE_TLS_REPLY_MAX];
	struct iovec iov;
	enum fe_tls_reason why = FE_TLS_R__COUNT;
	size_t n, rl;

	(void)state;
	n = probe(rec, 9);
	iov = (struct iovec){ rec + 4, n - 4 };
	assert_int_equal(fe_tls_pre_record(CFG_TLS_OFF, &iov, 1, true, false, reply, &rl, &why),
			 FE_TLS_PASS);
	assert_int_equal(fe_tls_pre_record(CFG_TLS_ALLOWED, &iov, 1, true, false, reply, &rl, &why),
			 FE_TLS_STARTTLS);
	assert_int_equal(rl, 36);
	assert_memory_equal(reply + 24, "STARTTLS", 8);
	assert_int_equal(fe_tls_pre_record(CFG_TLS_ALLOWED, &iov, 1, false, false, reply, &rl, &why),
			 FE_TLS_CLOSE);
	assert_int_equal(why, FE_TLS_R_PROBE_BUSY);
	assert_int_equal(fe_tls_pre_record(CFG_TLS_REQUIRED, &iov, 1, true, true, reply, &rl, &why),
			 FE_TLS_CLOSE);
	assert_int_equal(why, FE_TLS_R_EARLY_DATA);
	/* AUTH_TLS on procedure 1: no probe; BADCRED on required (RFC 9289 4.1). */
	chk_put_be32(rec + 4 + 20, 1);
	assert_int_equal(fe_tls_pre_record(CFG_TLS_ALLOWED, &iov, 1, true, false, reply, &rl, &why),
			 FE_TLS_PASS);
	assert_int_equal(fe_tls_pre_record(CFG_TLS_REQUIRED, &iov, 1, true, false, reply, &rl, &why),
			 FE_TLS_REFUSE);
	assert_int_equal(chk_be32(reply + 4 + 16), RPC_AUTH_BADCRED);
	/* A credential body: no probe either. */
	chk_put_be32(rec + 4 + 20, 0);
	chk_put_be32(rec + 4 + 28, 4);
	assert_int_equal(fe_tls_pre_record(CFG_TLS_ALLOWED, &iov, 1, true, false, reply, &rl, &why),
			 FE_TLS_PASS);
	/* Garbage on required: no XID of a call, closed without a reply. */
	memset(rec, 0xff, sizeof(rec));
	iov.iov_len = 6;
	assert_int_equal(fe_tls_pre_record(CFG_TLS_REQUIRED, &iov, 1, true, false, reply, &rl, &why),
			 FE_TLS_CLOSE);
	assert_int_equal(why, FE_TLS_R_PLAINTEXT);
}

/* Configuration: tls without certificate, client certificates without CA,
 * missing or mismatched files: clear errors. */
static void t07_config_errors(void **state)
{
	static const char base[] = "[backend s]\naddress = 127.0.0.1\n";
	char text[1024], err[512];
	struct cfg *cf;

	(void)state;
	snprintf(text, sizeof(text), "[gateway]\ntls = required\n%s", base);
	assert_null(cfg_parse_string(text, "t", NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "needs tls_cert and tls_key"));
	snprintf(text, sizeof(text), "[gateway]\ntls = allowed\ntls_cert = %s/server.crt\n"
		 "tls_key = %s/server.key\ntls_client_cert = require\n%s", g_dir, g_dir, base);
	assert_null(cfg_parse_string(text, "t", NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "needs tls_ca"));
	snprintf(text, sizeof(text), "[gateway]\ntls = allowed\ntls_cert = %s/nothere.crt\n"
		 "tls_key = %s/server.key\n%s", g_dir, g_dir, base);
	cf = cfg_parse_string(text, "t", NULL, err, sizeof(err));
	if (!cf)
		fail_msg("%s", err);
	assert_int_equal(fe_tls_check_cfg(cf, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "tls_cert"));
	cfg_free(cf);
	snprintf(text, sizeof(text), "[gateway]\ntls = allowed\ntls_cert = %s/server.crt\n"
		 "tls_key = %s/good.key\n%s", g_dir, g_dir, base);
	cf = cfg_parse_string(text, "t", NULL, err, sizeof(err));
	if (!cf)
		fail_msg("%s", err);
	assert_int_equal(fe_tls_check_cfg(cf, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "tls_key"));
	assert_non_null(strstr(err, "mismatch"));
	cfg_free(cf);
	snprintf(text, sizeof(text), "[gateway]\ntls = allowed\ntls_cert = %s/server.crt\n"
		 "tls_key = %s/server.key\ntls_ca = %s/ca.crt\ntls_client_cert = request\n%s", g_dir,
		 g_dir, g_dir, base);
	cf = cfg_parse_string(text, "t", NULL, err, sizeof(err));
	if (!cf)
		fail_msg("%s", err);
	assert_int_equal(fe_tls_check_cfg(cf, err, sizeof(err)), 0);
	cfg_free(cf);
}

/* fe_tls_check_cfg(text) in a child running as nobody (uid and gid 65534):
 * its message, through a pipe. */
static void check_as_nobody(const char *text, char *msg, size_t len)
{
	int p[2];
	pid_t pid;
	ssize_t n;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char err[512] = "";
		struct cfg *cf = cfg_parse_string(text, "gw.conf", NULL, err, sizeof(err));

		if (setgid(65534) < 0 || setuid(65534) < 0)
			snprintf(err, sizeof(err), "setuid: %s", strerror(errno));
		else if (cf)
			fe_tls_check_cfg(cf, err, sizeof(err));
		n = write(p[1], err, strlen(err));
		_exit(n < 0);
	}
	close(p[1]);
	n = read(p[0], msg, len - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(p[0]);
	waitpid(pid, NULL, 0);
}

/* A key or certificate that cannot be read: the message names where the
 * configuration sets it (file:line), the path and strerror, never only
 * OpenSSL's "system lib"; a key readable by root only, checked as another
 * user, says "Permission denied" and points to LoadCredential=.  Paths in
 * $CREDENTIALS_DIRECTORY are read from there; without the variable,
 * --check-config's check passes with a warning and a start fails saying so. */
static void t14_file_errors(void **state)
{
	static const char base[] = "[backend s]\naddress = 127.0.0.1\n";
	char text[1024], err[512], want[256];
	struct cfg *cf;

	(void)state;
	/* 1: missing key, line 4 */
	snprintf(text, sizeof(text), "[gateway]\ntls = allowed\ntls_cert = %s/server.crt\n"
		 "tls_key = %s/gone.key\n%s", g_dir, g_dir, base);
	cf = cfg_parse_string(text, "gw.conf", NULL, err, sizeof(err));
	if (!cf)
		fail_msg("%s", err);
	assert_int_equal(fe_tls_check_cfg(cf, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "gw.conf:4: tls_key %s/gone.key: cannot read: No such file or "
		 "directory", g_dir);
	if (strncmp(err, want, strlen(want)))
		fail_msg("got '%s', want '%s...'", err, want);
	cfg_free(cf);
	/* 2: a [listener]'s own key, line 7 */
	snprintf(text, sizeof(text), "[gateway]\nlisten = 127.0.0.1:1\n[listener e]\nlisten = 127.0.0.1:2\n"
		 "tls = allowed\ntls_cert = %s/server.crt\ntls_key = %s/gone.key\n%s", g_dir, g_dir, base);
	cf = cfg_parse_string(text, "gw.conf", NULL, err, sizeof(err));
	if (!cf)
		fail_msg("%s", err);
	assert_int_equal(fe_tls_check_cfg(cf, err, sizeof(err)), -1);
	if (!strstr(err, "[listener e] gw.conf:7: tls_key "))
		fail_msg("got '%s'", err);
	cfg_free(cf);
	/* 3: in the credentials directory */
	snprintf(text, sizeof(text), "[gateway]\ntls = allowed\ntls_cert = $CREDENTIALS_DIRECTORY/server.crt\n"
		 "tls_key = $CREDENTIALS_DIRECTORY/server.key\n%s", base);
	cf = cfg_parse_string(text, "gw.conf", NULL, err, sizeof(err));
	if (!cf)
		fail_msg("%s", err);
	setenv("CREDENTIALS_DIRECTORY", g_dir, 1);
	if (fe_tls_check_cfg(cf, err, sizeof(err)) != 0)
		fail_msg("with CREDENTIALS_DIRECTORY: %s", err);
	unsetenv("CREDENTIALS_DIRECTORY");
	assert_int_equal(fe_tls_check_cfg(cf, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "not checked"));
	cfg_free(cf);
	/* 4: root's 0600 key, read as nobody */
	if (geteuid() != 0)
		return;
	snprintf(text, sizeof(text), "%s/server.key", g_dir);
	assert_int_equal(chmod(text, 0600), 0);
	assert_int_equal(chmod(g_dir, 0755), 0);
	snprintf(text, sizeof(text), "[gateway]\ntls = allowed\ntls_cert = %s/server.crt\n"
		 "tls_key = %s/server.key\n%s", g_dir, g_dir, base);
	check_as_nobody(text, err, sizeof(err));
	snprintf(want, sizeof(want), "gw.conf:4: tls_key %s/server.key: cannot read: Permission denied "
		 "(running as uid 65534, gid 65534); the packaged unit runs as a dynamic user: give it "
		 "the file with LoadCredential=", g_dir);
	if (strncmp(err, want, strlen(want)))
		fail_msg("got '%s', want '%s...'", err, want);
}

/* The control socket's answer to line (malloc'd). */
static char *ctl(struct fx *f, const char *line)
{
	char path[64];
	struct gw_ctl *ct;
	char *r;

	snprintf(path, sizeof(path), "/tmp/test_fe_tls.%d", (int)getpid());
	ct = gw_ctl_new(f->h.base, f->h.gw, path, NULL);
	assert_non_null(ct);
	r = h_ctl(ct, line);
	gw_ctl_free(ct);
	return r;
}

/* Mutual TLS identity: tls_allow_identity admits client1.test (its DNS
 * name), refuses client3's certificate of the same CA; gwctl clients shows
 * the TLS state and the identity, status the mode and the certificate's
 * end. */
static void t08_identity(void **state)
{
	struct fx f;
	struct cl ok = { .cl_mode = CL_TLS, .cl_cert = "good", .cl_hold = true };
	struct cl other = { .cl_mode = CL_TLS, .cl_cert = "other_id" };
	pthread_t thr;
	char *r;

	(void)state;
	fx_start(&f, "required", "tls_client_cert = require\ntls_allow_identity = x.test, client1.test");
	start(&f, &ok, &thr);
	assert_true(ok.cl_held);
	r = ctl(&f, "clients");
	assert_non_null(strstr(r, " no     gateway      tls client1.test\n"));
	free(r);
	r = ctl(&f, "json clients");
	assert_non_null(strstr(r, "\"tls\":\"tls\""));
	assert_non_null(strstr(r, "\"tls_identity\":\"client1.test\""));
	free(r);
	r = ctl(&f, "status");
	assert_non_null(strstr(r, "tls: required, client certificates required; certificate expires "));
	free(r);
	finish(&f, &ok, thr);
	assert_int_equal(ok.cl_replies, 2);
	run(&f, &other);
	assert_int_equal(other.cl_replies, 0);
	assert_int_equal(ctr(&f, GW_CTR_TLS_REFUSED_IDENTITY), 1);
	assert_int_equal(ctr(&f, GW_CTR_TLS_HANDSHAKES), 1);
	fx_stop(&f);
}

/* The uid and gid of the AUTH_SYS call (call_root) the server received
 * last: after 6 header words, flavor, length, stamp, name length, name. */
static void root_seen(struct fx *f, uint32_t *uid, uint32_t *gid)
{
	uint8_t seen[128];

	assert_int_equal(h_server_last(&f->s, seen, sizeof(seen)), 4 * 19);
	*uid = chk_be32(seen + 44);
	*gid = chk_be32(seen + 48);
}

/* tls_identity_squash: the first entry naming a name of the verified
 * certificate (its DNS name or CN) sets the squash of the connection's
 * calls, over squash = all; a certificate no entry names gets squash; an
 * earlier entry wins over a later one naming the same certificate. */
static void t11_identity_squash(void **state)
{
	static const struct {
		const char *cert, *entries;
		uint32_t uid, gid;
		uint64_t squashed;
	} t[] = {
		{ "good", "x.test:all client1.test:none", 0, 0, 0 },		/* DNS name, none */
		{ "other_id", "x.test:all client1.test:none", 65534, 65534, 1 },	/* squash = all */
		{ "other_id", "client4.test:root, CLIENT4.test:none", 65534, 65534, 1 },	/* first wins */
		{ "other_id", "client4.test:none,client4.test:root", 0, 0, 0 },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct cl c = { .cl_mode = CL_TLS, .cl_cert = t[i].cert, .cl_root = true };
		char extra[256];
		uint32_t uid, gid;
		struct fx f;

		snprintf(extra, sizeof(extra), "tls_client_cert = require\nsquash = all\n"
			 "tls_identity_squash = %s", t[i].entries);
		fx_start(&f, "required", extra);
		run(&f, &c);
		assert_int_equal(c.cl_replies, 1);
		root_seen(&f, &uid, &gid);
		if (uid != t[i].uid || gid != t[i].gid)
			fail_msg("case %u: uid %u gid %u, want %u %u", i + 1, uid, gid, t[i].uid, t[i].gid);
		assert_int_equal(ctr(&f, GW_CTR_AUTHPOL_SQUASHED), t[i].squashed);
		fx_stop(&f);
	}
}

/* A [listener] with a TLS policy of its own: [gateway] requires TLS and
 * squashes nothing; listener "lan" has tls = off and squash = root.  A
 * plaintext call to [gateway]'s address is refused (AUTH_TOOWEAK), the
 * same to lan's is served, squashed; TLS on lan is refused (the probe
 * gets AUTH_BADCRED: no STARTTLS); TLS on [gateway]'s works, unsquashed;
 * gwctl status lists the listener. */
static void t12_listener_tls(void **state)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct cl plain_gw = { .cl_mode = CL_PLAIN }, plain_lan = { .cl_mode = CL_PLAIN };
	struct cl tls_lan = { .cl_mode = CL_TLS }, tls_gw = { .cl_mode = CL_TLS, .cl_root = true };
	struct sockaddr_storage lan;
	uint32_t uid, gid;
	struct fx f;

	(void)state;
	fx_start(&f, "required", "[listener lan]\nlisten = 127.0.0.1:1\ntls = off\nsquash = root");
	assert_int_equal(fe_listen_addr_li(f.h.fe, (struct sockaddr *)&sin, sizeof(sin), 1), 0);
	assert_int_equal(fe_listen_sockaddr(f.h.fe, 1, &lan), 0);
	run(&f, &plain_gw);
	assert_int_equal(plain_gw.cl_reply_len, 20);
	assert_int_equal(chk_be32(plain_gw.cl_reply + 16), RPC_AUTH_TOOWEAK);
	assert_int_equal(ctr(&f, GW_CTR_TLS_REFUSED_PLAINTEXT), 1);
	plain_lan.cl_addr = &lan;
	{
		pthread_t thr;

		assert_int_equal(pthread_create(&thr, NULL, cl_main, &plain_lan), 0);
		while (!plain_lan.cl_done)
			h_pump(&f.h, 2);
		pthread_join(thr, NULL);
		tls_lan.cl_addr = &lan;
		assert_int_equal(pthread_create(&thr, NULL, cl_main, &tls_lan), 0);
		while (!tls_lan.cl_done)
			h_pump(&f.h, 2);
		pthread_join(thr, NULL);
	}
	assert_int_equal(plain_lan.cl_reply_len, 28);		/* served */
	assert_int_equal(chk_be32(plain_lan.cl_reply + 24), 0x77);
	assert_false(tls_lan.cl_starttls);
	assert_false(tls_lan.cl_handshake);
	assert_int_equal(ctr(&f, GW_CTR_TLS_REFUSED_PLAINTEXT), 1);
	run(&f, &tls_gw);
	assert_true(tls_gw.cl_handshake);
	assert_int_equal(tls_gw.cl_replies, 1);
	root_seen(&f, &uid, &gid);
	assert_int_equal(uid, 0);
	assert_int_equal(gid, 0);
	assert_int_equal(ctr(&f, GW_CTR_AUTHPOL_SQUASHED), 0);
	{
		char *r = ctl(&f, "status");

		assert_non_null(strstr(r, "\nlistener lan: tls off, squash root, allow any\n"));
		free(r);
		r = ctl(&f, "json status");
		assert_non_null(strstr(r, "\"listeners\":[{\"name\":\"lan\",\"tls\":\"off\",\"squash\":\"root\"}]"));
		free(r);
	}
	fx_stop(&f);
}

/* Days until tls_cert_expiry_seconds, rounded. */
static int expiry_days(struct fx *f)
{
	char *m = h_render(&f->h.st, f->h.gw);
	double e = h_sample(m, "rpcrdma_gw_tls_cert_expiry_seconds");

	free(m);
	return (int)((e - (double)time(NULL)) / 86400.0 + 0.5);
}

/* Reload f's gateway with [gateway]'s certificate gw and listener b's lc
 * (NULL: inherited). */
static void reload_certs(struct fx *f, const char *gw, const char *lc, struct cfg **cf)
{
	char text[2048], lb[256] = "", err[256];

	if (lc)
		snprintf(lb, sizeof(lb), "tls_cert = %s/%s.crt\ntls_key = %s/%s.key\n", g_dir, lc, g_dir, lc);
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "bytes_per_client = 1m\nsecure_port = no\ntls = allowed\ntls_cert = %s/%s.crt\n"
		 "tls_key = %s/%s.key\n[listener b]\nlisten = 127.0.0.1:1\n%s[backend srv]\n"
		 "address = 127.0.0.1\n[route nfs]\nprogram = nfs\ntransport = tcp\nport = %u\n",
		 g_dir, gw, g_dir, gw, lb, f->s.port);
	*cf = cfg_parse_string(text, "t", NULL, err, sizeof(err));
	if (!*cf)
		fail_msg("%s", err);
	fe_set_cfg(f->h.fe, *cf);
}

/* Listeners with certificates of their own: tls_cert_expiry_seconds is
 * the earliest end (server.crt: 1 day, server2.crt: 2 days), whichever
 * listener serves it, at start and after reloads (up again once the short
 * one is gone). */
static void t13_expiry_min(void **state)
{
	char extra[512];
	struct cfg *c1, *c2;
	struct fx f;

	(void)state;
	snprintf(extra, sizeof(extra), "[listener b]\nlisten = 127.0.0.1:1\ntls_cert = %s/server2.crt\n"
		 "tls_key = %s/server2.key", g_dir, g_dir);
	fx_start(&f, "allowed", extra);		/* [gateway] server, b server2 */
	assert_int_equal(expiry_days(&f), 1);
	reload_certs(&f, "server2", "server", &c1);
	assert_int_equal(expiry_days(&f), 1);
	reload_certs(&f, "server2", NULL, &c2);	/* b inherits server2 */
	assert_int_equal(expiry_days(&f), 2);
	fe_set_cfg(f.h.fe, f.h.cf);
	assert_int_equal(expiry_days(&f), 1);
	cfg_free(c1);
	cfg_free(c2);
	fx_stop(&f);
}

/* Reload: a new certificate for new handshakes, the session established
 * before it goes on; the expiry gauge follows; a reload whose files do not
 * load keeps the certificate in use. */
static void t09_reload(void **state)
{
	struct fx f;
	struct cl held = { .cl_mode = CL_TLS, .cl_hold = true }, after = { .cl_mode = CL_TLS };
	struct cl again = { .cl_mode = CL_TLS };
	pthread_t thr;
	char text[2048], err[256], *m;
	struct cfg *cf2, *cf3;
	double e1, e2;

	(void)state;
	fx_start(&f, "allowed", "");
	m = h_render(&f.h.st, f.h.gw);
	e1 = h_sample(m, "rpcrdma_gw_tls_cert_expiry_seconds");
	free(m);
	assert_true(e1 > (double)time(NULL) + 86000 && e1 < (double)time(NULL) + 86500);
	start(&f, &held, &thr);
	assert_string_equal(held.cl_server_cn, "gateway.test");
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "bytes_per_client = 1m\nsecure_port = no\ntls = allowed\ntls_cert = %s/server2.crt\n"
		 "tls_key = %s/server2.key\n[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\ntransport = tcp\nport = %u\n", g_dir, g_dir, f.s.port);
	cf2 = cfg_parse_string(text, "t", NULL, err, sizeof(err));
	assert_non_null(cf2);
	fe_set_cfg(f.h.fe, cf2);
	m = h_render(&f.h.st, f.h.gw);
	e2 = h_sample(m, "rpcrdma_gw_tls_cert_expiry_seconds");
	free(m);
	assert_true(e2 > e1 + 86000);
	finish(&f, &held, thr);
	assert_int_equal(held.cl_replies, 2);	/* the old session went on */
	run(&f, &after);
	assert_string_equal(after.cl_server_cn, "gateway2.test");
	/* Files that do not load: the certificate in use stays. */
	*strstr(text, "server2.key") = 'X';
	cf3 = cfg_parse_string(text, "t", NULL, err, sizeof(err));
	assert_non_null(cf3);
	fe_set_cfg(f.h.fe, cf3);
	run(&f, &again);
	assert_string_equal(again.cl_server_cn, "gateway2.test");
	assert_int_equal(again.cl_replies, 1);
	fe_set_cfg(f.h.fe, f.h.cf);
	cfg_free(cf2);
	cfg_free(cf3);
	fx_stop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_tls_required_mutual),
		cmocka_unit_test(t02_plaintext_on_required),
		cmocka_unit_test(t03_allowed),
		cmocka_unit_test(t04_handshake_refused),
		cmocka_unit_test(t05_pre_tls),
		cmocka_unit_test(t06_pre_record),
		cmocka_unit_test(t07_config_errors),
		cmocka_unit_test(t08_identity),
		cmocka_unit_test(t11_identity_squash),
		cmocka_unit_test(t12_listener_tls),
		cmocka_unit_test(t13_expiry_min),
		cmocka_unit_test(t14_file_errors),
		cmocka_unit_test(t09_reload),
		cmocka_unit_test(t10_handshake_timeout),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, certs_setup, certs_teardown);
}
