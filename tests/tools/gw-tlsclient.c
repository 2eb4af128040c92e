// SPDX-License-Identifier: MIT
/*
 * gw-tlsclient: a user-space RPC-with-TLS client (RFC 9289) for the
 * gateway's TLS front end: OpenSSL and record marking by hand.
 *
 *   gw-tlsclient [options] HOST PORT [EXPORT NAME [COPY]]
 *
 * It connects (from a reserved port when root), sends the AUTH_TLS probe
 * (a NULL call of program NFS with an empty AUTH_TLS credential, RFC 9289
 * 4.1) in plaintext, expects the STARTTLS reply, then runs a TLS 1.3
 * handshake with ALPN "sunrpc" on the same connection, checks the server's
 * certificate against --ca, and sends an NFSv3 NULL call inside TLS.  With
 * EXPORT NAME it then does MOUNT MNT EXPORT, LOOKUP NAME (an existing
 * file), WRITE of -n BYTES (default 1 MiB) with FILE_SYNC, READ of them and
 * compares; COPY receives the data, for the caller's checksum of the file
 * on the server.  With --v41 it speaks NFSv4.1 instead (gw-tlsclient-v41.c):
 * EXCHANGE_ID, CREATE_SESSION, RECLAIM_COMPLETE, GETATTR of the pseudo root,
 * LOOKUP of EXPORT's components from the root and OPEN (create) of NAME,
 * WRITE (FILE_SYNC4), READ, CLOSE, DESTROY_SESSION, DESTROY_CLIENTID.
 *
 * Options: --ca FILE (required unless --plain), --cert FILE --key FILE
 * (client certificate), --tls12 (offer TLS 1.2 at most), --no-alpn,
 * --plain (no probe, no TLS: every call in plaintext), --expect-refused
 * (exit 0 only if the gateway refuses: no STARTTLS, a failed handshake, an
 * AUTH_ERROR or a closed connection before the NULL call's reply),
 * -n BYTES, -s SEED, --v41, --bench SECS (after the checks, WRITE + READ
 * of 4 KiB, then of -n BYTES, each for SECS seconds: one "BENCH" line per
 * size with calls/s, MiB/s and CPU per call, the gateway's too with
 * --gw-pid PID) and --label WORD (the BENCH lines' first field).  Exit
 * status 0 when every step succeeded (or, with --expect-refused, when the
 * gateway refused).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "gw-tlsclient.h"

#define PROG_NFS	TC_PROG_NFS
#define PROG_MOUNT	100005
#define AUTH_TLS	7
#define REC_MAX		(4u << 20)


static uint32_t fc_rand = 1;
static uint32_t fc_xid;

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

/* Also xb_recv_reply's reader: arg is the connection. */
static int read_full(void *arg, void *p, size_t n)
{
	struct tc_io *io = arg;

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
static int send_record(struct tc_io *io, struct xb_buf *b)
{
	uint32_t mark = htonl((uint32_t)b->fb_len | 0x80000000u);

	memmove(b->fb_p + 4, b->fb_p, b->fb_len);
	memcpy(b->fb_p, &mark, 4);
	return write_all(io, b->fb_p, b->fb_len + 4);
}

/* RPC call header, AUTH_SYS as root (the export is no_root_squash). */
void tc_call_hdr(struct xb_buf *b, uint32_t prog, uint32_t vers, uint32_t proc)
{
	xb_call_hdr(b, ++fc_xid, "tlsclient!", prog, vers, proc);
}

int tc_rpc(struct tc_io *io, struct xb_buf *call, struct xb_buf *reply)
{
	if (call->fb_bad || call->fb_len + 4 > call->fb_cap)
		return fprintf(stderr, "call does not fit its buffer\n"), -1;
	if (send_record(io, call))
		return fprintf(stderr, "send failed\n"), -1;
	return xb_recv_reply(read_full, io, reply, fc_xid);
}

/* ---- NFSv3 (RFC 1813) ---- */

static int v3_open(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, const char *export, const char *name,
		   struct xb_fh *fh)
{
	struct xb_fh root;

	tc_call_hdr(c, PROG_MOUNT, 3, 1);	/* MNT */
	xb_put_opaque(c, export, (uint32_t)strlen(export));
	if (tc_rpc(io, c, r) || xb_get_u32(r) != 0 || xb_take_fh(r, &root))
		return fprintf(stderr, "MOUNT MNT %s failed\n", export), -1;
	printf("MOUNTv3 MNT: ok, %u-byte handle\n", root.fh_len);
	tc_call_hdr(c, PROG_NFS, 3, 3);	/* LOOKUP */
	xb_put_opaque(c, root.fh_data, root.fh_len);
	xb_put_opaque(c, name, (uint32_t)strlen(name));
	if (tc_rpc(io, c, r) || xb_get_u32(r) != 0 || xb_take_fh(r, fh))
		return fprintf(stderr, "NFSv3 LOOKUP %s failed\n", name), -1;
	return 0;
}

static int v3_write(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, const struct xb_fh *fh, uint64_t off,
		    const uint8_t *data, uint32_t len)
{
	uint32_t n;

	tc_call_hdr(c, PROG_NFS, 3, 7);	/* WRITE */
	xb_put_opaque(c, fh->fh_data, fh->fh_len);
	xb_put_u64(c, off);
	xb_put_u32(c, len);
	xb_put_u32(c, 2);			/* FILE_SYNC */
	xb_put_opaque(c, data, len);
	if (tc_rpc(io, c, r) || xb_get_u32(r) != 0)
		return fprintf(stderr, "NFSv3 WRITE of %u bytes failed\n", len), -1;
	if (xb_get_u32(r))			/* wcc_data: pre_op_attr */
		xb_skip(r, 24);
	if (xb_get_u32(r))			/* post_op_attr */
		xb_skip(r, 84);
	n = xb_get_u32(r);
	if (r->fb_bad || n != len)
		return fprintf(stderr, "NFSv3 WRITE wrote %u of %u bytes\n", n, len), -1;
	return 0;
}

static int v3_read(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, const struct xb_fh *fh, uint64_t off,
		   uint8_t *back, uint32_t len)
{
	uint32_t n;
	const uint8_t *p;

	tc_call_hdr(c, PROG_NFS, 3, 6);	/* READ */
	xb_put_opaque(c, fh->fh_data, fh->fh_len);
	xb_put_u64(c, off);
	xb_put_u32(c, len);
	if (tc_rpc(io, c, r) || xb_get_u32(r) != 0)
		return fprintf(stderr, "NFSv3 READ failed\n"), -1;
	if (xb_get_u32(r))
		xb_skip(r, 84);
	n = xb_get_u32(r);
	xb_get_u32(r);			/* eof */
	p = xb_get_opaque(r, &n);
	if (!p || n != len)
		return fprintf(stderr, "NFSv3 READ returned %u of %u bytes\n", p ? n : 0, len), -1;
	memcpy(back, p, n);
	return 0;
}

/* The file under test, by NFSv3 handle or NFSv4.1 open state. */
struct tc_file {
	struct tc_io *tf_io;
	struct xb_buf *tf_c, *tf_r;
	bool tf_v41;
	struct xb_fh tf_fh;
	struct tc_v41 tf_v4;
};

static int file_write(struct tc_file *f, uint64_t off, const uint8_t *data, uint32_t len)
{
	if (f->tf_v41)
		return tc_v41_write(f->tf_io, f->tf_c, f->tf_r, &f->tf_v4, off, data, len);
	return v3_write(f->tf_io, f->tf_c, f->tf_r, &f->tf_fh, off, data, len);
}

static int file_read(struct tc_file *f, uint64_t off, uint8_t *back, uint32_t len)
{
	if (f->tf_v41)
		return tc_v41_read(f->tf_io, f->tf_c, f->tf_r, &f->tf_v4, off, back, len);
	return v3_read(f->tf_io, f->tf_c, f->tf_r, &f->tf_fh, off, back, len);
}

/* ---- throughput (--bench) ---- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double self_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* utime + stime of PID (fields 14 and 15 of /proc/PID/stat), -1 if none. */
static double proc_cpu_s(long pid)
{
	char path[64], line[1024], *p;
	unsigned long long ut, st;
	FILE *f;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* WRITE + READ of LEN bytes at offset 0 for SECS seconds; one line:
 * "BENCH label size calls secs calls_s mib_s client_us_call gw_us_call gw_us_mib". */
static int bench_one(struct tc_file *f, const char *label, uint32_t len, double secs, long gw_pid, uint8_t *data,
		     uint8_t *back)
{
	double t0 = now_s(), c0 = self_cpu_s(), g0 = proc_cpu_s(gw_pid), t, mib, gw;
	unsigned long calls = 0;

	do {
		if (file_write(f, 0, data, len) || file_read(f, 0, back, len))
			return -1;
		calls += 2;
		t = now_s() - t0;
	} while (t < secs);
	if (memcmp(data, back, len))
		return fprintf(stderr, "bench: data read back differs\n"), -1;
	mib = (double)calls * len / 1048576.0;
	gw = g0 < 0 ? -1 : proc_cpu_s(gw_pid) - g0;
	printf("BENCH %s %u %lu %.2f %.1f %.2f %.1f %.1f %.1f\n", label, len, calls, t, calls / t, mib / t,
	       (self_cpu_s() - c0) * 1e6 / calls, gw < 0 ? -1 : gw * 1e6 / calls, gw < 0 ? -1 : gw * 1e6 / mib);
	return 0;
}

static int bench(struct tc_file *f, const char *label, double secs, long gw_pid, uint8_t *data, uint8_t *back,
		 uint32_t len)
{
	printf("# BENCH label size calls secs calls/s MiB/s client-CPU-us/call gateway-CPU-us/call "
	       "gateway-CPU-us/MiB (WRITE and READ each count as a call)\n");
	if (bench_one(f, label, 4096, secs, gw_pid, data, back))
		return -1;
	return bench_one(f, label, len, secs, gw_pid, data, back);
}

/* RFC 9289 4.1: the probe, and its reply: MSG_ACCEPTED with an AUTH_NONE
 * verifier holding "STARTTLS".  0 when so. */
static int probe(struct tc_io *io, struct xb_buf *c, struct xb_buf *r)
{
	uint32_t mark, n;

	c->fb_len = 0;
	xb_put_u32(c, ++fc_xid);
	xb_put_u32(c, 0);		/* CALL */
	xb_put_u32(c, 2);
	xb_put_u32(c, PROG_NFS);
	xb_put_u32(c, 3);
	xb_put_u32(c, 0);		/* NULL */
	xb_put_u32(c, AUTH_TLS);
	xb_put_u32(c, 0);
	xb_put_u32(c, 0);		/* verifier AUTH_NONE */
	xb_put_u32(c, 0);
	if (send_record(io, c) || read_full(io, &mark, 4))
		return fprintf(stderr, "probe: connection closed\n"), -1;
	n = ntohl(mark) & 0x7fffffffu;
	r->fb_len = r->fb_off = 0;
	r->fb_bad = false;
	if (n > 256 || read_full(io, r->fb_p, n))
		return fprintf(stderr, "probe: no reply\n"), -1;
	r->fb_len = n;
	if (xb_get_u32(r) != fc_xid || xb_get_u32(r) != 1 || xb_get_u32(r) != 0 || xb_get_u32(r) != 0 ||
	    xb_get_u32(r) != 8 || r->fb_off + 8 > r->fb_len || memcmp(r->fb_p + r->fb_off, "STARTTLS", 8))
		return fprintf(stderr, "probe: the reply is not STARTTLS (RFC 9289 4.1)\n"), -1;
	printf("AUTH_TLS probe: STARTTLS\n");
	return 0;
}

struct tc_opts {
	const char *to_ca, *to_cert, *to_key;
	bool to_tls12, to_no_alpn;
};

struct tc_bench {
	double tb_secs;		/* 0: no throughput mode */
	long tb_gw_pid;
	const char *tb_label;
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
			"[--plain] [--expect-refused] [-n BYTES] [-s SEED] [--v41] [--bench SECS [--gw-pid PID] "
			"[--label WORD]] HOST PORT [EXPORT NAME [COPY]]\n");
	return 2;
}

/* Probe, handshake, NULL: 0 done, -1 refused or failed (said on stderr). */
static int tls_start(struct tc_io *io, SSL_CTX *ctx, struct xb_buf *c, struct xb_buf *r, bool plain)
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
	tc_call_hdr(c, PROG_NFS, 3, 0);	/* NULL */
	if (tc_rpc(io, c, r))
		return fprintf(stderr, "NFSv3 NULL failed\n"), -1;
	printf("NFSv3 NULL: ok%s\n", plain ? " (plaintext)" : " (inside TLS)");
	return 0;
}

/* The file's checks: WRITE, READ back, compare (and the NFSv4.1 session
 * around them); then the throughput mode if asked.  COPY gets the data. */
static int run_file(struct tc_file *f, const char *export, const char *name, const char *copy, uint8_t *data,
		    uint8_t *back, uint32_t len, const struct tc_bench *b)
{
	const char *v = f->tf_v41 ? "NFSv4.1" : "NFSv3";
	FILE *out;

	if (copy) {
		out = fopen(copy, "w");
		if (!out || fwrite(data, 1, len, out) != len || fclose(out))
			return fprintf(stderr, "%s: cannot write\n", copy), -1;
	}
	if (f->tf_v41 ? tc_v41_start(f->tf_io, f->tf_c, f->tf_r, &f->tf_v4, len) ||
			tc_v41_open(f->tf_io, f->tf_c, f->tf_r, &f->tf_v4, export, name)
		      : v3_open(f->tf_io, f->tf_c, f->tf_r, export, name, &f->tf_fh))
		return -1;
	if (file_write(f, 0, data, len))
		return -1;
	printf("%s WRITE: ok, %u bytes (%s)\n", v, len, f->tf_v41 ? "FILE_SYNC4" : "FILE_SYNC");
	if (file_read(f, 0, back, len))
		return -1;
	printf("%s READ: ok, %u bytes\n", v, len);
	if (memcmp(data, back, len))
		return fprintf(stderr, "data read back differs from the data written\n"), -1;
	printf("%u bytes written and read back equal, %s\n", len, f->tf_io->io_ssl ? "inside TLS" : "in plaintext");
	if (b->tb_secs > 0 && bench(f, b->tb_label, b->tb_secs, b->tb_gw_pid, data, back, len))
		return -1;
	return f->tf_v41 ? tc_v41_finish(f->tf_io, f->tf_c, f->tf_r, &f->tf_v4) : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ca", required_argument, NULL, 'C' }, { "cert", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' }, { "tls12", no_argument, NULL, '2' },
		{ "no-alpn", no_argument, NULL, 'A' }, { "plain", no_argument, NULL, 'P' },
		{ "expect-refused", no_argument, NULL, 'R' }, { "v41", no_argument, NULL, '4' },
		{ "bench", required_argument, NULL, 'B' }, { "gw-pid", required_argument, NULL, 'G' },
		{ "label", required_argument, NULL, 'L' }, { NULL, 0, NULL, 0 },
	};
	struct xb_buf c = { .fb_cap = REC_MAX }, r = { .fb_cap = REC_MAX };
	struct tc_opts o = { 0 };
	struct tc_bench b = { .tb_label = "run" };
	struct tc_io io = { -1, NULL };
	struct tc_file f = { .tf_io = &io, .tf_c = &c, .tf_r = &r };
	uint32_t len = 1u << 20, seed = 1;
	bool plain = false, refused = false;
	SSL_CTX *ctx = NULL;
	uint8_t *data = NULL, *back = NULL;
	int opt, rc, npos;

	while ((opt = getopt_long(argc, argv, "n:s:", lo, NULL)) != -1) {
		switch (opt) {
		case 'C': o.to_ca = optarg; break;
		case 'c': o.to_cert = optarg; break;
		case 'k': o.to_key = optarg; break;
		case '2': o.to_tls12 = true; break;
		case 'A': o.to_no_alpn = true; break;
		case 'P': plain = true; break;
		case 'R': refused = true; break;
		case '4': f.tf_v41 = true; break;
		case 'B': b.tb_secs = strtod(optarg, NULL); break;
		case 'G': b.tb_gw_pid = strtol(optarg, NULL, 10); break;
		case 'L': b.tb_label = optarg; break;
		case 'n': len = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 's': seed = (uint32_t)strtoul(optarg, NULL, 0); break;
		default: return usage();
		}
	}
	npos = argc - optind;
	if (npos < 2 || npos == 3 || npos > 5 || (!plain && !o.to_ca) || (!o.to_cert != !o.to_key) ||
	    len < 4096 || len > REC_MAX - 4096 || (b.tb_secs > 0 && npos < 4))
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);	/* its steps in order with stderr, even if killed */
	signal(SIGPIPE, SIG_IGN);	/* OpenSSL writes with send(): a refusal is EPIPE */
	fc_rand = seed;
	fc_xid = seed << 16;
	f.tf_v4.v4_seed = seed;
	c.fb_p = malloc(REC_MAX);
	r.fb_p = malloc(REC_MAX);
	if (!c.fb_p || !r.fb_p || (!plain && !(ctx = tls_ctx(&o))))
		return 1;
	io.io_fd = xb_connect(argv[optind], argv[optind + 1]);
	if (io.io_fd < 0)
		return fprintf(stderr, "connect %s:%s failed\n", argv[optind], argv[optind + 1]), 1;
	rc = tls_start(&io, ctx, &c, &r, plain);
	if (refused) {
		printf(rc ? "refused, as expected\n" : "NOT refused\n");
		rc = rc ? 0 : -1;
	} else if (rc == 0 && npos >= 4) {
		data = malloc(len);
		back = calloc(1, len);
		if (!data || !back)
			return 1;
		for (uint32_t i = 0; i < len; i++)
			data[i] = (uint8_t)(xb_rand(&fc_rand) >> 3);
		rc = run_file(&f, argv[optind + 2], argv[optind + 3], npos == 5 ? argv[optind + 4] : NULL, data, back,
			      len, &b);
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
