// SPDX-License-Identifier: MIT
/*
 * bench_walk - cost of the NFS call walker (chk_call_walk) per call, and
 * of the reply walker and the decision for the calls that need them.
 *
 * Messages are built once with tests/unit/nfs_enc.c; each is walked N
 * times and the mean wall time per walk is printed as a table:
 *   NULL, v3 GETATTR, v3 READ, v3 WRITE (64 KiB payload, never touched),
 *   v4.1 GETATTR, v4.1 READ, v4.1 WRITE, and a 16-op v4.1 COMPOUND.
 * Usage: bench_walk [iterations]  (default 2,000,000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chunking.h"
#include "../unit/nfs_enc.h"	/* benches are built without -Itests/unit */

static uint8_t bufs[8][70000];

struct msg {
	const char *name;
	uint32_t vers, proc;
	size_t len, args;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void build(int i, struct msg *m)
{
	struct xdr_enc xe;
	int k;

	xdr_enc_init(&xe, bufs[i], sizeof(bufs[i]));
	nfs_enc_call_hdr(&xe, 1, CHK_PROG_NFS, m->vers, m->proc);
	m->args = xe.xe_len;
	switch (i) {
	case 0:
		break;
	case 1:
		nfs_enc_fmt(&xe, "o", 32u);
		break;
	case 2:
		nfs_enc_fmt(&xe, "o h w", 32u, 0ull, 1048576u);
		break;
	case 3:
		nfs_enc_fmt(&xe, "o h w w o", 32u, 0ull, 65536u, 2u, 65536u);
		break;
	case 4:
		nfs_enc_compound_args(&xe, 1, 3);
		nfs_enc_fmt(&xe, "w i wwww  w o  w b", 53u, 1u, 0u, 0u, 0u, 22u, 32u, 9u, 2u,
			    0x0010011au, 0x00b0a23au);
		break;
	case 5:
		nfs_enc_compound_args(&xe, 1, 3);
		nfs_enc_fmt(&xe, "w i wwww  w o  w shw", 53u, 1u, 0u, 0u, 0u, 22u, 32u, 25u, 0ull,
			    1048576u);
		break;
	case 6:
		nfs_enc_compound_args(&xe, 1, 4);
		nfs_enc_fmt(&xe, "w i wwww  w o  w shw o  w b", 53u, 1u, 0u, 0u, 0u, 22u, 32u,
			    38u, 0ull, 2u, 65536u, 9u, 2u, 0x18u, 0x300000u);
		break;
	case 7:		/* SEQUENCE PUTFH then 7 x (READ, GETATTR) then GETFH: 16 ops */
		nfs_enc_compound_args(&xe, 1, 16);
		nfs_enc_fmt(&xe, "w i wwww  w o", 53u, 1u, 0u, 0u, 0u, 22u, 32u);
		for (k = 0; k < 7; k++)
			nfs_enc_fmt(&xe, "w shw  w b", 25u, (unsigned long long)k << 16, 65536u, 9u,
				    2u, 0x18u, 0x300000u);
		nfs_enc_fmt(&xe, "w", 10u);
		break;
	}
	if (xe.xe_err != XDR_OK) {
		fprintf(stderr, "bench_walk: encoding %s failed\n", m->name);
		exit(1);
	}
	m->len = xe.xe_len;
}

int main(int argc, char **argv)
{
	struct msg msgs[8] = {
		{ "NULL (v3)", 3, 0, 0, 0 }, { "GETATTR (v3)", 3, 1, 0, 0 },
		{ "READ 1 MiB (v3)", 3, 6, 0, 0 }, { "WRITE 64 KiB (v3)", 3, 7, 0, 0 },
		{ "SEQ PUTFH GETATTR (v4.1)", 4, 1, 0, 0 }, { "SEQ PUTFH READ (v4.1)", 4, 1, 0, 0 },
		{ "SEQ PUTFH WRITE GETATTR", 4, 1, 0, 0 }, { "16-op COMPOUND (v4.1)", 4, 1, 0, 0 },
	};
	long iters = argc > 1 ? atol(argv[1]) : 2000000;
	static struct chk_call_walk cw;
	struct chk_rdma_params p;
	struct chk_decision dc;
	volatile size_t sink = 0;
	int i;
	long n;

	chk_rdma_params_default(&p);
	printf("bench_walk: %ld iterations per row\n", iters);
	printf("| %-26s | %7s | %12s | %15s | %s |\n", "call", "bytes", "walk ns/call",
	       "walk+decide ns", "decision");
	printf("|%s|%s|%s|%s|%s|\n", "----------------------------", "---------", "--------------",
	       "-----------------", "-----------------------");
	for (i = 0; i < 8; i++) {
		struct xdr_cur xc;
		struct iovec one;
		enum chk_walk_err err;
		double t0, t1, t2;

		build(i, &msgs[i]);
		t0 = now_ns();
		for (n = 0; n < iters; n++) {
			xdr_cur_init_buf(&xc, &one, bufs[i], msgs[i].len);
			xdr_seek(&xc, msgs[i].args);
			chk_call_walk(&xc, CHK_PROG_NFS, msgs[i].vers, msgs[i].proc, 0, &cw, &err);
			sink += cw.cw_res_max;
		}
		t1 = now_ns();
		for (n = 0; n < iters; n++) {
			xdr_cur_init_buf(&xc, &one, bufs[i], msgs[i].len);
			xdr_seek(&xc, msgs[i].args);
			chk_call_walk(&xc, CHK_PROG_NFS, msgs[i].vers, msgs[i].proc, 0, &cw, &err);
			chk_decide(&cw, 0, msgs[i].len, &p, &dc);
			sink += dc.dc_call_inline;
		}
		t2 = now_ns();
		printf("| %-26s | %7zu | %12.1f | %15.1f | %s%s%s |\n", msgs[i].name, msgs[i].len,
		       (t1 - t0) / (double)iters, (t2 - t1) / (double)iters,
		       dc.dc_proc == RPCRDMA_NOMSG ? "NOMSG" : dc.dc_nreads ? "MSG+read" : "MSG",
		       dc.dc_nwrites ? " +write" : "", dc.dc_reply_chunk ? " +reply" : "");
	}
	(void)sink;
	return 0;
}
