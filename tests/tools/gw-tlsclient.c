// SPDX-License-Identifier: MIT
/*
 * gw-tlsclient: a user-space RPC-with-TLS client (RFC 9289) for the
 * gateway's TLS front end: OpenSSL and record marking by hand.
 *
 *   gw-tlsclient [options] HOST PORT [EXPORT NAME COPY]
 *
 * It connects (from a reserved port when root), sends the AUTH_TLS probe
 * (a NULL call of program NFS with an empty AUTH_TLS credential, RFC 9289
 * 4.1) in plaintext, expects the STARTTLS reply, then runs a TLS 1.3
 * handshake with ALPN "sunrpc" on the same connection, checks the server's
 * certificate against --ca, and sends an NFSv3 NULL call inside TLS.  With
 * EXPORT NAME COPY it then does MOUNT MNT EXPORT, LOOKUP NAME (an existing
 * file), WRITE of -n BYTES (default 1 MiB) with FILE_SYNC, READ of them and
 * compares; COPY receives the data, for the caller's checksum of the file
 * on the server.  NFSv3 rather than NFSv4.1: the data path through the
 * gateway is the same, and v4.1 session setup is not what is tested here.
 *
 * Options: --ca FILE (required unless --plain), --cert FILE --key FILE
 * (client certificate), --tls12 (offer TLS 1.2 at most), --no-alpn,
 * --plain (no probe, no TLS: the NULL call in plaintext), --expect-refused
 * (exit 0 only if the gateway refuses: no STARTTLS, a failed handshake, an
 * AUTH_ERROR or a closed connection before the NULL call's reply),
 * -n BYTES, -s SEED.  Exit status 0 when every step succeeded (or, with
 * --expect-refused, when the gateway refused).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <rpc/rpc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define PROG_NFS	100003
#define PROG_MOUNT	100005
#define AUTH_TLS	7
#define FH_MAX		128
#define REC_MAX		(4u << 20)

struct fc_buf {
	uint8_t *fb_p;
	size_t fb_len, fb_cap, fb_off;	/* fb_off: read cursor */
	bool fb_bad;
};


static uint32_t fc_rand = 1;
static uint32_t fc_xid;

static uint32_t fc_next_rand(void)
{
	fc_rand = fc_rand * 1103515245u + 12345u;
	return fc_rand >> 8;
}

/* The connection: plaintext until the probe is answered, then TLS. */
struct tc_io {
	int io_fd;
	SSL *io_ssl;
};

static int write_all(struct tc_io *io, const void *p, size_t n)
{
	while (n > 0) {
		ssize_t k;

		if (io->io_ssl) {
			size_t w = 0;

			if (SSL_write_ex(io->io_ssl, p, n, &w) != 1)
				return -1;
			k = (ssize_t)w;
		} else {
			k = send(io->io_fd, p, n, MSG_NOSIGNAL);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return -1;
		}
		p = (const uint8_t *)p + k;
		n -= (size_t)k;
	}
	return 0;
}

static int read_full(struct tc_io *io, void *p, size_t n)
{
	while (n > 0) {
		ssize_t k;

		if (io->io_ssl) {
			size_t got = 0;

			if (SSL_read_ex(io->io_ssl, p, n, &got) != 1)
				return -1;
			k = (ssize_t)got;
		} else {
			k = read(io->io_fd, p, n);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return -1;
		}
		p = (uint8_t *)p + k;
		n -= (size_t)k;
	}
	return 0;
}

/* One record, one fragment: the mark and the message in one write. */
static int send_record(struct tc_io *io, struct fc_buf *b)
{
	uint32_t mark = htonl((uint32_t)b->fb_len | 0x80000000u);

	memmove(b->fb_p + 4, b->fb_p, b->fb_len);
	memcpy(b->fb_p, &mark, 4);
	return write_all(io, b->fb_p, b->fb_len + 4);
}

static void put_u32(struct fc_buf *b, uint32_t v)
{
	if (b->fb_len + 4 > b->fb_cap) {
		b->fb_bad = true;
		return;
	}
	v = htonl(v);
	memcpy(b->fb_p + b->fb_len, &v, 4);
	b->fb_len += 4;
}

static void put_u64(struct fc_buf *b, uint64_t v)
{
	put_u32(b, (uint32_t)(v >> 32));
	put_u32(b, (uint32_t)v);
}

static void put_opaque(struct fc_buf *b, const void *p, uint32_t n)
{
	uint32_t pad = (4 - (n & 3)) & 3;

	put_u32(b, n);
	if (b->fb_len + n + pad > b->fb_cap) {
		b->fb_bad = true;
		return;
	}
	memcpy(b->fb_p + b->fb_len, p, n);
	memset(b->fb_p + b->fb_len + n, 0, pad);
	b->fb_len += n + pad;
}

static uint32_t get_u32(struct fc_buf *b)
{
	uint32_t v;

	if (b->fb_off + 4 > b->fb_len) {
		b->fb_bad = true;
		return 0;
	}
	memcpy(&v, b->fb_p + b->fb_off, 4);
	b->fb_off += 4;
	return ntohl(v);
}

/* An opaque<>: its bytes stay in the buffer; returns them (NULL if short). */
static const uint8_t *get_opaque(struct fc_buf *b, uint32_t *n)
{
	const uint8_t *p;

	*n = get_u32(b);
	if (b->fb_bad || *n > b->fb_len - b->fb_off) {
		b->fb_bad = true;
		return NULL;
	}
	p = b->fb_p + b->fb_off;
	b->fb_off += (*n + 3) & ~3u;
	if (b->fb_off > b->fb_len)
		b->fb_off = b->fb_len;
	return p;
}

static void skip(struct fc_buf *b, size_t n)
{
	if (b->fb_off + n > b->fb_len)
		b->fb_bad = true;
	else
		b->fb_off += n;
}

/* RPC call header, AUTH_SYS as root (the export is no_root_squash). */
static void call_hdr(struct fc_buf *b, uint32_t prog, uint32_t vers, uint32_t proc)
{
	static const char host[] = "tlsclient!";

	b->fb_len = 0;
	put_u32(b, ++fc_xid);
	put_u32(b, 0);		/* CALL */
	put_u32(b, 2);
	put_u32(b, prog);
	put_u32(b, vers);
	put_u32(b, proc);
	put_u32(b, 1);		/* AUTH_SYS */
	put_u32(b, 4 + 4 + 12 + 4 + 4 + 4);
	put_u32(b, 0);		/* stamp */
	put_opaque(b, host, sizeof(host) - 1);
	put_u32(b, 0);		/* uid */
	put_u32(b, 0);		/* gid */
	put_u32(b, 0);		/* gids */
	put_u32(b, 0);		/* verifier AUTH_NONE */
	put_u32(b, 0);
}

/* Reads one reply record and checks the RPC header: xid, MSG_ACCEPTED,
 * SUCCESS.  b's cursor is left at the results. */
static int recv_reply(struct tc_io *io, struct fc_buf *b)
{
	uint32_t mark, n, flavor, len;
	bool last = false;

	b->fb_len = b->fb_off = 0;
	b->fb_bad = false;
	while (!last) {
		if (read_full(io, &mark, 4))
			return fprintf(stderr, "connection closed by the server side\n"), -1;
		mark = ntohl(mark);
		last = mark & 0x80000000u;
		n = mark & 0x7fffffffu;
		if (b->fb_len + n > b->fb_cap)
			return fprintf(stderr, "reply over %zu bytes\n", b->fb_cap), -1;
		if (read_full(io, b->fb_p + b->fb_len, n))
			return fprintf(stderr, "connection closed inside a reply\n"), -1;
		b->fb_len += n;
	}
	if (get_u32(b) != fc_xid || get_u32(b) != 1 || get_u32(b) != 0)
		return fprintf(stderr, "not an accepted reply to xid %#x\n", fc_xid), -1;
	flavor = get_u32(b);
	len = get_u32(b);
	(void)flavor;
	skip(b, (len + 3) & ~3u);
	if (get_u32(b) != 0 || b->fb_bad)
		return fprintf(stderr, "xid %#x: accept_stat not SUCCESS\n", fc_xid), -1;
	return 0;
}

static int rpc(struct tc_io *io, struct fc_buf *call, struct fc_buf *reply)
{
	if (call->fb_bad || call->fb_len + 4 > call->fb_cap)
		return fprintf(stderr, "call does not fit its buffer\n"), -1;
	if (send_record(io, call))
		return fprintf(stderr, "send failed\n"), -1;
	return recv_reply(io, reply);
}

struct fc_fh {
	uint32_t fh_len;
	uint8_t fh_data[FH_MAX];
};

static int take_fh(struct fc_buf *r, struct fc_fh *fh)
{
	uint32_t n;
	const uint8_t *p = get_opaque(r, &n);

	if (!p || n > FH_MAX)
		return -1;
	fh->fh_len = n;
	memcpy(fh->fh_data, p, n);
	return 0;
}

/* ---- NFSv3 (RFC 1813) ---- */

static int v3_run(struct tc_io *io, struct fc_buf *c, struct fc_buf *r, const char *export, const char *name,
		  const uint8_t *data, uint32_t len, uint8_t *back)
{
	struct fc_fh root, fh;
	uint32_t n;
	const uint8_t *p;

	call_hdr(c, PROG_MOUNT, 3, 1);	/* MNT */
	put_opaque(c, export, (uint32_t)strlen(export));
	if (rpc(io, c, r) || get_u32(r) != 0 || take_fh(r, &root))
		return fprintf(stderr, "MOUNT MNT %s failed\n", export), -1;
	printf("MOUNTv3 MNT: ok, %u-byte handle\n", root.fh_len);
	call_hdr(c, PROG_NFS, 3, 3);	/* LOOKUP */
	put_opaque(c, root.fh_data, root.fh_len);
	put_opaque(c, name, (uint32_t)strlen(name));
	if (rpc(io, c, r) || get_u32(r) != 0 || take_fh(r, &fh))
		return fprintf(stderr, "NFSv3 LOOKUP %s failed\n", name), -1;
	call_hdr(c, PROG_NFS, 3, 7);	/* WRITE */
	put_opaque(c, fh.fh_data, fh.fh_len);
	put_u64(c, 0);
	put_u32(c, len);
	put_u32(c, 2);			/* FILE_SYNC */
	put_opaque(c, data, len);
	if (rpc(io, c, r) || get_u32(r) != 0)
		return fprintf(stderr, "NFSv3 WRITE of %u bytes failed\n", len), -1;
	if (get_u32(r))			/* wcc_data: pre_op_attr */
		skip(r, 24);
	if (get_u32(r))			/* post_op_attr */
		skip(r, 84);
	n = get_u32(r);
	if (r->fb_bad || n != len)
		return fprintf(stderr, "NFSv3 WRITE wrote %u of %u bytes\n", n, len), -1;
	printf("NFSv3 WRITE: ok, %u bytes\n", n);
	call_hdr(c, PROG_NFS, 3, 6);	/* READ */
	put_opaque(c, fh.fh_data, fh.fh_len);
	put_u64(c, 0);
	put_u32(c, len);
	if (rpc(io, c, r) || get_u32(r) != 0)
		return fprintf(stderr, "NFSv3 READ failed\n"), -1;
	if (get_u32(r))
		skip(r, 84);
	n = get_u32(r);
	get_u32(r);			/* eof */
	p = get_opaque(r, &n);
	if (!p || n != len)
		return fprintf(stderr, "NFSv3 READ returned %u of %u bytes\n", p ? n : 0, len), -1;
	memcpy(back, p, n);
	printf("NFSv3 READ: ok, %u bytes\n", n);
	return 0;
}

static int connect_to(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	int fd = -1;

	if (getaddrinfo(host, port, &hints, &ai))
		return -1;
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	/* A reserved source port, as kernel clients use: the gateway's
	 * secure_port (and nfsd's `secure`) ask for one.  Root only. */
	if (fd >= 0 && geteuid() == 0 && bindresvport_sa(fd, NULL) < 0)
		fprintf(stderr, "bindresvport_sa: %s (going on from an ordinary port)\n", strerror(errno));
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}


/* RFC 9289 4.1: the probe, and its reply: MSG_ACCEPTED with an AUTH_NONE
 * verifier holding "STARTTLS".  0 when so. */
static int probe(struct tc_io *io, struct fc_buf *c, struct fc_buf *r)
{
	uint32_t mark, n;

	c->fb_len = 0;
	put_u32(c, ++fc_xid);
	put_u32(c, 0);		/* CALL */
	put_u32(c, 2);
	put_u32(c, PROG_NFS);
	put_u32(c, 3);
	put_u32(c, 0);		/* NULL */
	put_u32(c, AUTH_TLS);
	put_u32(c, 0);
	put_u32(c, 0);		/* verifier AUTH_NONE */
	put_u32(c, 0);
	if (send_record(io, c) || read_full(io, &mark, 4))
		return fprintf(stderr, "probe: connection closed\n"), -1;
	n = ntohl(mark) & 0x7fffffffu;
	r->fb_len = r->fb_off = 0;
	r->fb_bad = false;
	if (n > 256 || read_full(io, r->fb_p, n))
		return fprintf(stderr, "probe: no reply\n"), -1;
	r->fb_len = n;
	if (get_u32(r) != fc_xid || get_u32(r) != 1 || get_u32(r) != 0 || get_u32(r) != 0 ||
	    get_u32(r) != 8 || r->fb_off + 8 > r->fb_len || memcmp(r->fb_p + r->fb_off, "STARTTLS", 8))
		return fprintf(stderr, "probe: the reply is not STARTTLS (RFC 9289 4.1)\n"), -1;
	printf("AUTH_TLS probe: STARTTLS\n");
	return 0;
}

struct tc_opts {
	const char *to_ca, *to_cert, *to_key;
	bool to_tls12, to_no_alpn;
};

static SSL_CTX *tls_ctx(const struct tc_opts *o)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	if (!ctx)
		return NULL;
	if (o->to_tls12)
		SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
	else
		SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	if (!o->to_no_alpn)
		SSL_CTX_set_alpn_protos(ctx, (const unsigned char *)"\x06sunrpc", 7);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if (SSL_CTX_load_verify_locations(ctx, o->to_ca, NULL) != 1 ||
	    (o->to_cert && (SSL_CTX_use_certificate_chain_file(ctx, o->to_cert) != 1 ||
			    SSL_CTX_use_PrivateKey_file(ctx, o->to_key, SSL_FILETYPE_PEM) != 1))) {
		ERR_print_errors_fp(stderr);
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

static int usage(void)
{
	fprintf(stderr, "usage: gw-tlsclient [--ca FILE] [--cert FILE --key FILE] [--tls12] [--no-alpn] "
			"[--plain] [--expect-refused] [-n BYTES] [-s SEED] HOST PORT [EXPORT NAME COPY]\n");
	return 2;
}

/* Probe, handshake, NULL: 0 done, -1 refused or failed (said on stderr). */
static int tls_start(struct tc_io *io, SSL_CTX *ctx, struct fc_buf *c, struct fc_buf *r, bool plain)
{
	if (!plain) {
		if (probe(io, c, r))
			return -1;
		io->io_ssl = SSL_new(ctx);
		if (!io->io_ssl || SSL_set_fd(io->io_ssl, io->io_fd) != 1 || SSL_connect(io->io_ssl) != 1) {
			fprintf(stderr, "TLS handshake failed\n");
			ERR_print_errors_fp(stderr);
			return -1;
		}
		printf("TLS: %s %s\n", SSL_get_version(io->io_ssl), SSL_get_cipher_name(io->io_ssl));
	}
	call_hdr(c, PROG_NFS, 3, 0);	/* NULL */
	if (rpc(io, c, r))
		return fprintf(stderr, "NFSv3 NULL failed\n"), -1;
	printf("NFSv3 NULL: ok%s\n", plain ? " (plaintext)" : " (inside TLS)");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ca", required_argument, NULL, 'C' }, { "cert", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' }, { "tls12", no_argument, NULL, '2' },
		{ "no-alpn", no_argument, NULL, 'A' }, { "plain", no_argument, NULL, 'P' },
		{ "expect-refused", no_argument, NULL, 'R' }, { NULL, 0, NULL, 0 },
	};
	struct fc_buf c = { .fb_cap = REC_MAX }, r = { .fb_cap = REC_MAX };
	struct tc_opts o = { 0 };
	struct tc_io io = { -1, NULL };
	uint32_t len = 1u << 20, seed = 1;
	bool plain = false, refused = false;
	SSL_CTX *ctx = NULL;
	uint8_t *data = NULL, *back = NULL;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "n:s:", lo, NULL)) != -1) {
		switch (opt) {
		case 'C': o.to_ca = optarg; break;
		case 'c': o.to_cert = optarg; break;
		case 'k': o.to_key = optarg; break;
		case '2': o.to_tls12 = true; break;
		case 'A': o.to_no_alpn = true; break;
		case 'P': plain = true; break;
		case 'R': refused = true; break;
		case 'n': len = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 's': seed = (uint32_t)strtoul(optarg, NULL, 0); break;
		default: return usage();
		}
	}
	if ((argc - optind != 2 && argc - optind != 5) || (!plain && !o.to_ca) ||
	    (!o.to_cert != !o.to_key) || len == 0 || len > REC_MAX - 4096)
		return usage();
	signal(SIGPIPE, SIG_IGN);	/* OpenSSL writes with send(): a refusal is EPIPE */
	fc_rand = seed;
	fc_xid = seed << 16;
	c.fb_p = malloc(REC_MAX);
	r.fb_p = malloc(REC_MAX);
	if (!c.fb_p || !r.fb_p || (!plain && !(ctx = tls_ctx(&o))))
		return 1;
	io.io_fd = connect_to(argv[optind], argv[optind + 1]);
	if (io.io_fd < 0)
		return fprintf(stderr, "connect %s:%s failed\n", argv[optind], argv[optind + 1]), 1;
	rc = tls_start(&io, ctx, &c, &r, plain);
	if (refused) {
		printf(rc ? "refused, as expected\n" : "NOT refused\n");
		rc = rc ? 0 : -1;
	} else if (rc == 0 && argc - optind == 5) {
		FILE *copy;

		data = malloc(len);
		back = calloc(1, len);
		if (!data || !back)
			return 1;
		for (uint32_t i = 0; i < len; i++)
			data[i] = (uint8_t)(fc_next_rand() >> 3);
		copy = fopen(argv[optind + 4], "w");
		if (!copy || fwrite(data, 1, len, copy) != len || fclose(copy))
			return fprintf(stderr, "%s: cannot write\n", argv[optind + 4]), 1;
		rc = v3_run(&io, &c, &r, argv[optind + 2], argv[optind + 3], data, len, back);
		if (rc == 0 && memcmp(data, back, len)) {
			fprintf(stderr, "data read back differs from the data written\n");
			rc = -1;
		}
		if (rc == 0)
			printf("%u bytes written and read back equal, inside TLS\n", len);
	}
	if (io.io_ssl) {
		SSL_shutdown(io.io_ssl);
		SSL_free(io.io_ssl);
	}
	close(io.io_fd);
	SSL_CTX_free(ctx);
	free(c.fb_p);
	free(r.fb_p);
	free(data);
	free(back);
	return rc ? 1 : 0;
}
